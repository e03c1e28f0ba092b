"""Linear models (issue 22): linearize, trim, modes, families.

References independent of the code under test: Pinocchio's analytical ABA derivatives (A, B),
closed forms (pendulum, double pendulum, gyrostat nutation, the attitude rows), central
differences of the engine's object path with scipy's rotations (C, D, the attitude chart), and
non-linear simulations (second-order agreement of a step response).
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pytest
from random_trees import random_state, random_tree
from scipy.linalg import eigh, expm
from scipy.spatial.transform import Rotation

from titopfmu import (
    Constant,
    Engine,
    Ground,
    InertiaWarning,
    LinearizationError,
    RevoluteBody,
    RigidBody,
    System,
    TrimError,
    linearize,
    linearize_family,
    trim,
)
from titopfmu.examples.balloon import build_balloon
from titopfmu.linear import plot_frequency_response, plot_poles

G = 9.81


@pytest.fixture(autouse=True)
def _quiet_inertia_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        yield


def idx(model, name):
    return model.state_names.index(name)


def skew(v):
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


# -- systems -----------------------------------------------------------------------------------


def pendulum(l=0.8, m=1.3, q0=0.0, tau=0.0) -> System:
    """Point mass m at distance l below the pivot (hanging at q = 0), gravity -y."""
    s = System("pendulum")
    s.add(
        Ground("ground", children={"O": (0.0, 0.0, 0.0)}),
        RevoluteBody("pend", m, np.zeros((3, 3)), com=(0.0, -l, 0.0), axis=(0, 0, 1),
                     theta0=q0, gravity=(0.0, -G, 0.0)),
        Constant("tau", tau),
    )  # fmt: skip
    s.connect("ground.O", "pend.P")
    s.connect("tau.y", "pend.joint.tau")
    return s


def double_pendulum(m1=1.0, m2=0.6, l1=0.9, l2=0.5, tau1=0.0) -> System:
    s = System("double_pendulum")
    zero = np.zeros((3, 3))
    s.add(
        Ground("ground", children={"O": (0.0, 0.0, 0.0)}),
        RevoluteBody("p1", m1, zero, com=(0.0, -l1, 0.0), children={"E": (0.0, -l1, 0.0)},
                     gravity=(0.0, -G, 0.0)),
        RevoluteBody("p2", m2, zero, com=(0.0, -l2, 0.0), gravity=(0.0, -G, 0.0)),
        Constant("tau1", tau1),
        Constant("tau2", 0.0),
    )  # fmt: skip
    s.connect("ground.O", "p1.P")
    s.connect("p1.E", "p2.P")
    s.connect("tau1.y", "p1.joint.tau")
    s.connect("tau2.y", "p2.joint.tau")
    return s


GYRO = dict(I=(2.0, 3.0, 4.0), Jt=0.05, Ja=0.08, m_rotor=1.5, spin=120.0)


def gyrostat(spin=GYRO["spin"]) -> System:
    """A free-floating body (no gravity) carrying a symmetric rotor about z at its centre of
    mass, spinning at ``spin`` rad/s relative to the body."""
    s = System("gyrostat")
    s.add(
        RigidBody("body", 10.0, np.diag(GYRO["I"]), children={"R": (0.0, 0.0, 0.0)},
                  gravity=(0.0, 0.0, 0.0)),
        RevoluteBody("rotor", GYRO["m_rotor"], np.diag([GYRO["Jt"], GYRO["Jt"], GYRO["Ja"]]),
                     axis=(0, 0, 1), theta_dot0=spin, gravity=(0.0, 0.0, 0.0)),
        Constant("motor", 0.0),
    )  # fmt: skip
    s.connect("body.R", "rotor.P")
    s.connect("motor.y", "rotor.joint.tau")
    return s


# -- A, B against Pinocchio's analytical derivatives ---------------------------------------------

PIN_SYSTEMS = {f"tree{s}": (lambda s=s: random_tree(s)[0]) for s in range(5)}
PIN_SYSTEMS["balloon"] = build_balloon


@pytest.mark.parametrize("name", PIN_SYSTEMS)
def test_a_b_match_pinocchio_aba_derivatives(name):
    pytest.importorskip("pinocchio")
    from test_derivatives import pinocchio_derivatives, zero_inertial_wrenches

    from titopfmu.reference import to_pinocchio

    s = PIN_SYSTEMS[name]()
    engine = Engine(s)
    ref = to_pinocchio(s)
    _, overrides = zero_inertial_wrenches(engine, s)
    taus = [f"{engine.tree_blocks[i].name}.joint.tau" for i, p, _, _ in engine.native.inputs
            if p == "joint.tau"]  # fmt: skip
    rng = np.random.default_rng(11)
    worst = 0.0
    for _ in range(2):
        x = random_state(engine, rng)
        t = float(rng.uniform(0, 3))
        m = linearize(engine, t, x, u=overrides, inputs=taus)
        dq_p, dv_p, Minv = pinocchio_derivatives(ref, t, x, overrides)
        root = ref.root
        vel = [idx(m, f"{root}.state.{c}") for c in ("vx", "vy", "vz", "wx", "wy", "wz")]
        vel += [idx(m, f"{j}.state.qd") for j in ref.joints]
        pos = [idx(m, f"{root}.state.{c}") for c in ("x", "y", "z")]
        rot = [idx(m, f"{root}.state.{c}") for c in ("rx", "ry", "rz")]
        qs = [idx(m, f"{j}.state.q") for j in ref.joints]
        sl = engine.plan.state_slices[root]
        R = Rotation.from_quat(np.roll(m.x0[sl.start + 3 : sl.start + 7], -1)).as_matrix()
        got = np.hstack([m.A[np.ix_(vel, pos)], m.A[np.ix_(vel, rot)], m.A[np.ix_(vel, qs)],
                         m.A[np.ix_(vel, vel)]])  # fmt: skip
        # Pinocchio's position tangent is local: δp_local = R^T δp_inertial
        want = np.hstack([dq_p[:, 0:3] @ R.T, dq_p[:, 3:], dv_p])
        scale = max(1.0, float(np.max(np.abs(want))))
        err = float(np.max(np.abs(got - want)))
        assert err <= 1e-8 * scale, f"{name}: A |titopfmu - pinocchio| = {err:.3g}"
        worst = max(worst, err / scale)
        for k, tau in enumerate(m.input_names):
            j = ref.joints.index(tau.split(".")[0])
            e = float(np.max(np.abs(m.B[vel, k] - Minv[:, 6 + j])))
            assert e <= 1e-8 * max(1.0, float(np.max(np.abs(Minv)))), f"{name} B {tau}: {e:.3g}"
        # kinematic rows: closed forms (ṗ = R v; δθ̇ = ω - ½ ω × δθ; q̇ = qd)
        v, w = m.x0[sl.start + 7 : sl.start + 10], m.x0[sl.start + 10 : sl.start + 13]
        np.testing.assert_allclose(m.A[np.ix_(pos, rot)], -R @ skew(v), atol=1e-12)
        np.testing.assert_allclose(m.A[np.ix_(pos, vel[:3])], R, atol=1e-12)
        np.testing.assert_allclose(m.A[np.ix_(rot, rot)], -0.5 * skew(w), atol=1e-12)
        np.testing.assert_allclose(m.A[np.ix_(rot, vel[3:6])], np.eye(3), atol=1e-12)
        for j in ref.joints:
            row = np.zeros(m.n_states)
            row[idx(m, f"{j}.state.qd")] = 1.0
            np.testing.assert_allclose(m.A[idx(m, f"{j}.state.q")], row, atol=1e-12)
    print(f"{name}: max relative |A - pinocchio| = {worst:.2e}")


def test_attitude_chart_against_finite_differences_of_the_nonlinear_chart():
    """A on a tree with spherical and free joints (three quaternions) equals central
    differences of δθ̇ = d/dt log(q0* ⊗ q) along the flow, in the chart q = q0 ⊗ exp(δθ/2)
    written here with scipy's rotations."""
    s = random_tree(3, multi_dof=True)[0]
    engine = Engine(s)
    x0 = random_state(engine, np.random.default_rng(4))
    m = linearize(engine, 0.3, x0)
    quats = [k for k, n in enumerate(m.state_names) if n.endswith(".rx")]
    assert len(quats) >= 2 and m.n_states == engine.n_states - len(quats)
    qfull = [engine.plan.state_slices[m.state_names[k].split(".")[0]].start
             + list(engine.system.blocks[m.state_names[k].split(".")[0]].state_names).index("qw")
             for k in quats]  # fmt: skip
    qmap = dict(zip(quats, qfull, strict=True))
    others = {}
    r = 0
    full = 0
    while full < engine.n_states:
        if full in qfull:
            full, r = full + 4, r + 3
        else:
            others[r] = full
            full, r = full + 1, r + 1

    def rot(q):  # [w, x, y, z] -> Rotation
        return Rotation.from_quat(np.roll(q, -1))

    def retract(d):
        x = x0.copy()
        for k, i in qmap.items():
            q = (rot(x0[i : i + 4]) * Rotation.from_rotvec(d[k : k + 3])).as_quat()
            x[i : i + 4] = np.roll(q, 1)
        for k, i in others.items():
            x[i] = x0[i] + d[k]
        return x

    def local(x):
        d = np.empty(m.n_states)
        for k, i in qmap.items():
            d[k : k + 3] = (rot(x0[i : i + 4]).inv() * rot(x[i : i + 4])).as_rotvec()
        for k, i in others.items():
            d[k] = x[i] - x0[i]
        return d

    def chart_rate(d, eps=1e-6):
        x = retract(d)
        f = engine.derivative(0.3, x)
        return (local(x + eps * f) - local(x - eps * f)) / (2 * eps)

    h = 1e-5
    Afd = np.column_stack(
        [(chart_rate(h * e) - chart_rate(-h * e)) / (2 * h) for e in np.eye(m.n_states)]
    )
    scale = max(1.0, float(np.max(np.abs(m.A))))
    assert float(np.max(np.abs(m.A - Afd))) < 2e-5 * scale
    np.testing.assert_allclose(m.xdot0, chart_rate(np.zeros(m.n_states)), atol=1e-7 * scale)


# -- C, D against central differences --------------------------------------------------------


def balloon_with_push(push) -> System:
    """The balloon with a body-frame push wrench from a Constant (for D)."""
    from titopfmu.examples.balloon import BalloonParameters

    s = build_balloon(BalloonParameters())
    b = s.blocks["balloon"]
    s2 = System("balloon_push")
    blocks = dict(s.blocks)
    blocks["balloon"] = RigidBody(
        "balloon", b.mass, b.inertia, children={"C": b.child_points[0]},
        external={"buoyancy": {"point": (0, 0, 0), "frame": "inertial"},
                  "push": {"point": (0.3, -0.2, 0.1), "frame": "body"}}, gravity=b.gravity,
    )  # fmt: skip
    s2.add(*blocks.values(), Constant("push", push))
    for (blk, port), (sb, sp) in s._source.items():
        if blk in s.blocks and port in {p.name for p in s.blocks[blk].ports.values()
                                        if p.kind in ("signal_in", "parent")}:  # fmt: skip
            s2.connect(f"{sb}.{sp}", f"{blk}.{port}")
    s2.connect("push.y", "balloon.push")
    return s2


def test_c_d_match_central_differences():
    x_rng = np.random.default_rng(8)
    push0 = np.array([0.4, -0.3, 0.2, 0.1, -0.05, 0.02])
    engine = Engine(balloon_with_push(push0))
    x0 = random_state(engine, x_rng, angle=1.0)
    outputs = ["balloon.position", "balloon.euler", "pend2.twist", "pend1.acc",
               "pend2.joint.m", "slider.joint.m[1]", "balloon.kinetic_energy",
               "pend2.momentum", "pend1.P.W"]  # fmt: skip
    m = linearize(engine, 0.2, x0, inputs=["balloon.push"], outputs=outputs)
    assert "exact" in m.output_methods and "central" in m.output_methods
    sl = engine.plan.state_slices["balloon"]

    def y(eng, x):
        ev = eng.evaluate(0.2, x)
        return np.concatenate([
            np.atleast_1d(eng.signal(ev, o.split("[")[0]))[[0]] if "[" in o
            else np.atleast_1d(eng.signal(ev, o)) for o in outputs
        ])  # fmt: skip

    h = 1e-6
    C = np.empty_like(m.C)
    for k, name in enumerate(m.state_names):
        cols = []
        for sgn in (1, -1):
            x = x0.copy()
            if name.startswith("balloon.state.r"):
                q0 = Rotation.from_quat(np.roll(x0[sl.start + 3 : sl.start + 7], -1))
                dv = np.zeros(3)
                dv["xyz".index(name[-1])] = sgn * h
                x[sl.start + 3 : sl.start + 7] = np.roll(
                    (q0 * Rotation.from_rotvec(dv)).as_quat(), 1
                )
            else:
                b, _, sn = name.partition(".state.")
                i = engine.plan.state_slices[b].start + engine.system.blocks[b].state_names.index(
                    sn
                )
                x[i] += sgn * h
            cols.append(y(engine, x))
        C[:, k] = (cols[0] - cols[1]) / (2 * h)
    D = np.empty_like(m.D)
    for k in range(6):
        e = np.zeros(6)
        e[k] = h
        D[:, k] = (y(Engine(balloon_with_push(push0 + e)), x0)
                   - y(Engine(balloon_with_push(push0 - e)), x0)) / (2 * h)  # fmt: skip
    np.testing.assert_allclose(m.y0, y(engine, x0), rtol=1e-12, atol=1e-12)
    scale = max(1.0, float(np.max(np.abs(m.C))))
    assert float(np.max(np.abs(m.C - C))) < 1e-6 * scale
    assert float(np.max(np.abs(m.D - D))) < 1e-6 * max(1.0, float(np.max(np.abs(m.D))))


# -- textbook cases ----------------------------------------------------------------------------


def nonrigid(model):
    return [md for md in model.modes() if not md.rigid]


def test_simple_pendulum_frequency():
    for l in (0.3, 0.8, 2.0):
        m = linearize(pendulum(l), 0.0, inputs=["pend.joint.tau"], outputs=["pend.joint.m[3]"])
        (md,) = nonrigid(m)
        assert abs(md.omega_n - np.sqrt(G / l)) < 1e-10 * np.sqrt(G / l)
        assert abs(md.damping) < 1e-12 and abs(md.freq_hz - np.sqrt(G / l) / 2 / np.pi) < 1e-10
        np.testing.assert_allclose(m.xdot0, 0.0, atol=1e-12)


def test_double_pendulum_modes_against_the_generalised_eigenproblem():
    m1, m2, l1, l2 = 1.0, 0.6, 0.9, 0.5
    model = linearize(double_pendulum(m1, m2, l1, l2), 0.0)
    # absolute angles φ1, φ2 of the two point masses: M φ̈ + K φ = 0
    M = np.array([[(m1 + m2) * l1**2, m2 * l1 * l2], [m2 * l1 * l2, m2 * l2**2]])
    K = np.diag([(m1 + m2) * G * l1, m2 * G * l2])
    w_ref = np.sqrt(eigh(K, M, eigvals_only=True))
    w = sorted(md.omega_n for md in nonrigid(model))
    np.testing.assert_allclose(w, w_ref, rtol=1e-10)


def test_gyrostat_nutation_frequency():
    I1, I2, _ = GYRO["I"]
    Jt, Ja, spin = GYRO["Jt"], GYRO["Ja"], GYRO["spin"]
    model = linearize(gyrostat(), 0.0, inputs=["rotor.joint.tau"])
    w_nut = Ja * spin / np.sqrt((I1 + Jt) * (I2 + Jt))
    modes = model.modes()
    (md,) = [m for m in modes if not m.rigid]
    assert abs(md.omega_n - w_nut) < 1e-9 * w_nut
    assert abs(md.damping) < 1e-9
    assert {"body.state.wx", "body.state.wy"} <= set(md.label.split(", "))
    # 14 states: 2 nutation, 12 rigid (position, velocity, attitude, axial rate, rotor q, q̇)
    assert sum(m.rigid for m in modes) == 12 and len(modes) == 13  # the pair counted once
    assert np.count_nonzero(np.abs(np.linalg.eigvals(model.A)) < 1e-6) == 12
    # without spin there is no gyroscopic coupling: every mode is rigid
    assert all(m.rigid for m in linearize(gyrostat(0.0), 0.0).modes())


# -- the linear response is the non-linear one to second order -------------------------------


def test_step_response_second_order():
    """Double pendulum hanging, step of the shoulder torque: |y_nonlinear - y_linear| falls as
    the square of the step (ratios ~4 when halving it)."""
    T, n = 1.5, 31
    times = np.linspace(0, T, n)
    base = linearize(double_pendulum(), 0.0, inputs=["p1.joint.tau"],
                     outputs=["p1.joint.m[3]", "p2.joint.m[3]", "p2.position"])  # fmt: skip
    A, B, C = base.A, base.B, base.C
    nx = A.shape[0]
    aug = np.zeros((nx + 1, nx + 1))
    aug[:nx, :nx], aug[:nx, nx] = A, B[:, 0]
    errors = []
    for a in (1e-2, 5e-3, 2.5e-3):
        ylin = np.array([C @ expm(aug * t)[:nx, nx] * a for t in times])
        res = Engine(double_pendulum(tau1=a)).simulate(
            T, output_interval=T / (n - 1), rtol=1e-12, atol=1e-14,
            record=["p1.joint.m[3]", "p2.joint.m[3]", "p2.position"],
        )  # fmt: skip
        ynl = res.values - base.y0
        errors.append(float(np.max(np.abs(ynl - ylin))))
        assert float(np.max(np.abs(ynl))) > 10 * errors[-1]
    ratios = [errors[0] / errors[1], errors[1] / errors[2]]
    print(f"step errors {errors}, ratios {ratios}")
    for r in ratios:
        assert 3.6 < r < 4.4, f"errors {errors}: ratio {r:.3f} (expected ~4: second order)"


# -- trim ---------------------------------------------------------------------------------------


def test_trim_finds_the_hanging_pendulum():
    r = trim(pendulum(q0=0.5), fixed_inputs={"pend.joint.tau": 0.0})
    sl = slice(0, 2)
    q, qd = r.x[sl]
    assert abs(np.sin(q)) < 1e-9 and np.cos(q) > 0 and abs(qd) < 1e-9
    assert r.residual < 1e-8 and r.u == {"pend.joint.tau": 0.0}
    # the torque holding the pendulum at a fixed angle: m g l sin q
    r = trim(pendulum(l=0.8, m=1.3, q0=0.5), fixed_states=["pend.state.q"],
             free_inputs=["pend.joint.tau"])  # fmt: skip
    assert abs(r.u["pend.joint.tau"] - 1.3 * G * 0.8 * np.sin(0.5)) < 1e-9


def test_trim_reports_impossible_requests():
    with pytest.raises(TrimError, match=r"pend.state.qd rate") as exc:
        trim(pendulum(q0=0.5), fixed_states=["pend.state.q"], fixed_inputs=["pend.joint.tau"])
    assert abs(exc.value.residual["pend.state.qd rate"]) > 1.0
    with pytest.raises(TrimError, match="more unknowns"):
        trim(pendulum(q0=0.5), target=["pend.state.qd"], free_inputs=["pend.joint.tau"])
    with pytest.raises(TrimError, match="unknown fixed state 'pend.state.nope'"):
        trim(pendulum(), fixed_states=["pend.state.nope"])


def test_trim_steady_spin_about_a_principal_axis():
    """A free body with a full inertia, ω_z held: the steady spins are along principal axes."""
    rng = np.random.default_rng(2)
    Rq = Rotation.random(random_state=rng).as_matrix()
    J = Rq @ np.diag([2.0, 3.0, 4.5]) @ Rq.T
    s = System("spinner")
    s.add(RigidBody("body", 5.0, J, gravity=(0, 0, 0), twist=(0, 0, 0, 0.1, -0.2, 2.0)))
    fixed = [f"body.state.{c}" for c in ("x", "y", "z", "rx", "ry", "rz", "vx", "vy", "vz",
                                         "wz")]  # fmt: skip
    with pytest.raises(TrimError):  # an equilibrium would need the attitude to stand still
        trim(s, fixed_states=fixed, target="equilibrium")
    r = trim(s, fixed_states=fixed, target="steady")
    w = r.x[10:13]
    assert abs(w[2] - 2.0) < 1e-12
    axes = np.linalg.eigh(J)[1]
    assert min(abs(abs(w @ axes[:, k]) / np.linalg.norm(w) - 1) for k in range(3)) < 1e-12
    # the attitude moves at the spin rate: xdot0 of the model at the trim point
    m = linearize(s, 0.0, r.x)
    np.testing.assert_allclose(m.xdot0[3:6], w, atol=1e-12)
    np.testing.assert_allclose(m.xdot0[6:], 0.0, atol=1e-9)


def test_balloon_trim_hanging_and_modes():
    s = build_balloon()
    engine = Engine(s)
    x = engine.initial_state()
    for j in ("pend1", "pend2"):
        x[engine.plan.state_slices[j].start] = 0.2
    r = trim(engine, x, fixed_states=["balloon.state.x", "balloon.state.y", "balloon.state.z"])
    for j in ("pend1", "pend2", "slider"):
        sl = engine.plan.state_slices[j]
        assert abs(r.x[sl.start + 1]) < 1e-9
    m = linearize(engine, 0.0, r.x, r.u)
    modes = m.modes()
    flexible = [md for md in modes if not md.rigid]
    assert all(md.damping > 0 for md in flexible), [str(md) for md in modes]
    assert sum(md.rigid for md in modes) >= 4


# -- files, control, families, CLI, bad input -------------------------------------------------


def test_save_load_and_control(tmp_path):
    m = linearize(pendulum(), 0.0, inputs=["pend.joint.tau"], outputs=["pend.position"])
    from titopfmu.linear import LinearModel

    back = LinearModel.load(m.save(tmp_path / "m.npz"))
    np.testing.assert_array_equal(back.A, m.A)
    assert back.state_names == m.state_names and back.output_names == m.output_names
    from scipy.io import loadmat

    mat = loadmat(m.save(tmp_path / "m.mat"))
    np.testing.assert_array_equal(mat["B"], m.B)
    with pytest.raises(ValueError, match="npz or .mat"):
        m.save(tmp_path / "m.txt")
    control = pytest.importorskip("control")
    sys_ = m.to_control()
    np.testing.assert_allclose(sorted(np.abs(control.poles(sys_))), [np.sqrt(G / 0.8)] * 2)


def test_family_along_a_length_and_a_joint_angle(tmp_path):
    lengths = [0.5, 1.0, 2.0]
    fam = linearize_family(lambda l: pendulum(l), lengths, inputs=["pend.joint.tau"],
                           outputs=["pend.joint.m[3]"])  # fmt: skip
    for l, m in zip(lengths, fam, strict=True):
        assert m.parameter == l
        assert abs(nonrigid(m)[0].omega_n - np.sqrt(G / l)) < 1e-9
    # along the joint angle: A[qd, q] = -(g/l) cos q
    angles = [0.0, 0.4, 1.0]
    fam2 = linearize_family(pendulum(1.0), angles, state="pend.state.q")
    for q, m in zip(angles, fam2, strict=True):
        assert abs(m.A[1, 0] + G * np.cos(q)) < 1e-10
    for f in (plot_poles(fam, tmp_path / "poles.png"),
              plot_frequency_response(fam, tmp_path / "bode.png")):  # fmt: skip
        assert f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(LinearizationError, match="'pend.mass' is not a state"):
        linearize_family(pendulum(), [1.0], state="pend.mass")


def test_cli_linearize_writes_a_model(tmp_path, capsys):
    from titopfmu.linear import LinearModel
    from titopfmu.linear.cli import add_linearize_parser

    parser = argparse.ArgumentParser(prog="titopfmu")
    add_linearize_parser(parser.add_subparsers(dest="command"))
    out = tmp_path / "model.npz"
    args = parser.parse_args(["linearize", "example:balloon", "--t", "0", "--inputs",
                              "balloon.buoyancy[1]", "--outputs", "pend1.joint.m[3]",
                              "--out", str(out), "--modes"])  # fmt: skip
    assert args.handler(args) == 0
    m = LinearModel.load(out)
    assert m.A.shape == (18, 18) and m.input_names == ["balloon.buoyancy[1]"]
    assert "rad/s" in capsys.readouterr().out
    args = parser.parse_args(["linearize", "example:balloon", "--inputs", "nope.tau",
                              "--out", str(out)])  # fmt: skip
    assert args.handler(args) == 2
    assert "unknown input 'nope.tau'" in capsys.readouterr().err


def test_bad_input_is_named():
    s = pendulum()
    with pytest.raises(LinearizationError, match="must have 2 components"):
        linearize(s, 0.0, np.zeros(3))
    with pytest.raises(LinearizationError, match="unknown input 'pend.joint.m'"):
        linearize(s, 0.0, inputs=["pend.joint.m"])
    with pytest.raises(LinearizationError, match="unknown output 'pend.nothing'"):
        linearize(s, 0.0, outputs=["pend.nothing"])
    with pytest.raises(LinearizationError, match="index out of 1..1"):
        linearize(s, 0.0, inputs=["pend.joint.tau[2]"])


def test_euler_output_at_gimbal_lock_is_refused():
    """A pendulum about y at q = π/2 has pitch θ = π/2: φ and ψ are undefined there, the
    Euler-angle output has no derivative (refused, named); away from it, it is linearised."""
    s = System("pitched")
    s.add(
        Ground("ground", children={"O": (0.0, 0.0, 0.0)}),
        RevoluteBody("pend", 1.0, np.eye(3), com=(0.5, 0.0, 0.0), axis=(0, 1, 0),
                     theta0=np.pi / 2, gravity=(0.0, 0.0, -G)),
        Constant("tau", 0.0),
    )  # fmt: skip
    s.connect("ground.O", "pend.P")
    s.connect("tau.y", "pend.joint.tau")
    with pytest.raises(LinearizationError, match="'pend.euler'.*gimbal lock"):
        linearize(s, 0.0, outputs=["pend.euler"])
    m = linearize(pendulum(q0=0.3), 0.0, outputs=["pend.euler[3]"])
    assert m.C[0] == pytest.approx([1.0, 0.0], abs=1e-12)  # ψ = q about z


def test_feedback_through_a_python_signal_block_enters_a():
    """A PD law in a Function block (outside the core) feeding the joint effort: A includes
    it (closed loop ω² = g/l + k/(m l²), damping from d), and holding the effort (u given)
    opens the loop."""
    from titopfmu import Function

    l, mass, k, d = 0.8, 1.3, 4.0, 0.3
    s = pendulum(l, mass)
    del s.blocks["tau"]
    s2 = System("pd")
    s2.add(
        *s.blocks.values(),
        Function(
            "pd", lambda t, i: {"tau": [-k * i["m"][2] - d * i["m"][1]]}, {"m": 3}, {"tau": 1}
        ),
    )
    s2.connect("ground.O", "pend.P")
    s2.connect("pend.joint.m", "pd.m")
    s2.connect("pd.tau", "pend.joint.tau")
    m = linearize(s2, 0.0, inputs=["pend.joint.tau"])
    J = mass * l**2
    np.testing.assert_allclose(m.A, [[0, 1], [-(G / l + k / J), -d / J]], atol=1e-8)
    np.testing.assert_allclose(m.B[:, 0], [0, 1 / J], rtol=1e-12)
    m_open = linearize(s2, 0.0, u={"pend.joint.tau": 0.0}, inputs=["pend.joint.tau"])
    np.testing.assert_allclose(m_open.A, [[0, 1], [-G / l, 0]], atol=1e-8)
