"""The flexible part as a block parameter (issue 34, point 1; docs/flexible.md §6): any forward
body type takes ``flexible=`` (a reduced model or its file), the engine runs it in the core, and
the linear tools see its elastic coordinates. Checked against independent references:

* the numpy reference of the block's equations (titopfmu.reference.flexible) for the engine's
  state derivative;
* the cantilever's closed-form frequencies, from the engine's linearisation on Ground;
* the rotating-cantilever tables (Wright et al. 1982), from a trimmed spinning hub's modes;
* a direct finite-element eigen analysis of a free-floating hub carrying two arrays on revolute
  joints (the full finite-element matrices, assembled with the joints as constraints), from the
  linearised free-free model with every mode of the arrays kept.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from flex_systems import Z3, hub_with_arrays, pendulum, rot_z, strip

import titopfmu as t
from titopfmu.flex import Beam, Section, cantilever_modes, write_reduced_model
from titopfmu.reference import flexible as ref


@pytest.fixture(scope="module")
def red():
    fe = strip().fe_model()
    return cantilever_modes(fe, 6, [fe.n_nodes - 1], damping=0.01)


def test_states_and_initial_conditions(red) -> None:
    """The block's states: its joint's, then q and q̇ named by the reduced model's coordinates."""
    q0 = np.linspace(1e-4, 6e-4, 6)
    s = pendulum(red, q0)
    arm = s.blocks["arm"]
    assert arm.state_names == ("q", "qd") + tuple(f"q.mode{k}" for k in range(1, 7)) + tuple(
        f"qd.mode{k}" for k in range(1, 7))
    e = t.Engine(s)
    x0 = e.initial_state()
    assert x0[0] == 0.3 and np.array_equal(x0[2:8], q0) and not np.any(x0[8:])


def test_engine_derivative_matches_the_reference(red) -> None:
    """The engine's dx/dt against the numpy reference of (T1)-(T2) on the joint's equation: the
    joint acceleration from the whole body's M(q) (rigid part + flexible part) and the elastic
    accelerations; random states, gravity, damping, with the reference's load values."""
    rng = np.random.default_rng(7)
    s = pendulum(red)
    e = t.Engine(s)
    arm = s.blocks["arm"]
    n = red.n_modes
    axis = np.array([0.0, 1.0, 0.0])
    g = np.array([0.0, 0.0, -9.81])
    for _ in range(4):
        x = e.initial_state()
        x[0], x[1] = rng.uniform(-1, 1), rng.uniform(-2, 2)
        x[2 : 2 + n] = 1e-3 * rng.standard_normal(n) / np.sqrt(np.diag(red.Mee))
        x[2 + n :] = 2e-2 * rng.standard_normal(n) / np.sqrt(np.diag(red.Mee))
        dx = e.derivative(0.0, x)
        # reference: the body frame rotates by theta about y from Ground; P fixed
        th, thd = x[0], x[1]
        q, qd = x[2 : 2 + n], x[2 + n :]
        c, si = np.cos(th), np.sin(th)
        R = np.array([[c, 0, si], [0, 1, 0], [-si, 0, c]])  # body -> inertial
        g_a = R.T @ g
        omega = thd * axis
        # the body's mass matrix in [v_P, omega, q̇]: the flexible part's M(q) plus the rigid
        # part's D_P; its quadratic velocity forces h of (E2) likewise (p = D_P u, no Mdot)
        M = red.mass_matrix(q).copy()
        M[:6, :6] += arm.D
        u = np.concatenate([np.zeros(3), omega, qd])
        loads = ref.load_values(red, omega, a_P=(0.0, 0.0, 0.0), gravity=g_a)
        f = ref.gravity_forces(red, q, g_a)
        f[:6] += np.concatenate([arm.mass * g_a, np.cross(arm.mass * arm.com, g_a)])
        h = ref.quadratic_forces(red, q, u)
        p = arm.D @ u[:6]
        h[:3] += np.cross(omega, p[:3])
        h[3:6] += np.cross(omega, p[3:6])
        rhs = f - h
        rhs[6:] -= red.stiffness(loads) @ q + red.damping() @ qd
        S = np.zeros((6 + n, 1 + n))
        S[3:6, 0] = axis
        S[6:, 1:] = np.eye(n)
        acc = np.linalg.solve(S.T @ M @ S, S.T @ rhs)
        assert dx[1] == pytest.approx(acc[0], rel=1e-9, abs=1e-9 * np.abs(acc).max())
        np.testing.assert_allclose(dx[2 + n :], acc[1:], rtol=1e-9, atol=1e-9 * np.abs(acc).max())
        np.testing.assert_array_equal(dx[2 : 2 + n], qd)


def closed_form_cantilever(beam: Beam, count: int) -> np.ndarray:
    """The lowest ``count`` frequencies (rad/s) of a uniform cantilever: bending in both planes
    (beta_n L = 1.8751, 4.6941, 7.8548, ..., 17.2788), torsion and axial ((2 n - 1) pi / 2 L)."""
    sec, L, E, rho = beam.section, beam.length, beam.E, beam.rho
    G = E / (2 * (1 + beam.nu))
    bl = np.array([1.875104068711961, 4.694091132974175, 7.854757438237613, 10.99554073487547,
                   14.13716839104647, 17.27875953208824])
    out = []
    for Ib in (sec.Iy, sec.Iz):
        out += list(bl**2 * np.sqrt(E * Ib / (rho * sec.A * L**4)))
    k = (2 * np.arange(1, 4) - 1) * np.pi / (2 * L)
    out += list(k * np.sqrt(G * sec.J / (rho * sec.Ip)))
    out += list(k * np.sqrt(E / rho))
    return np.sort(out)[:count]


def test_cantilever_on_ground_linearised_frequencies() -> None:
    """A flexible welded body on Ground (rigid part zero), linearised by the engine: its
    frequencies are the cantilever's closed forms within 1e-3 (bending both planes, torsion,
    axial) at the default mesh of 40 elements, and converge with the mesh."""
    beam = strip(n_elements=40)
    fe = beam.fe_model()
    exact = closed_form_cantilever(beam, 8)
    errors = []
    for n_el in (10, 40):
        b = strip(n_elements=n_el)
        f = b.fe_model()
        red = cantilever_modes(f, 12)
        s = t.System("cantilever")
        s.add(t.Ground("ground", children={"P": (0.0, 0.0, 0.0)}))
        s.add(t.WeldedBody("beam", 0.0, Z3, flexible=red))
        s.connect("ground.P", "beam.P")
        lm = t.linearize(s)
        w = np.sort([m.omega_n for m in lm.modes() if not m.rigid])[:8]
        errors.append(np.abs(w / exact - 1))
    assert fe.n_nodes == 41
    assert errors[1].max() < 1e-3, errors[1]
    assert np.all(errors[1][:4] <= errors[0][:4])  # bending: converging with the mesh


WRIGHT_FLAP_1 = [3.5160, 3.6816, 4.1373, 4.7973, 5.5850, 6.4495, 7.3604, 8.2996, 9.2568, 10.2257,
                 11.2023, 12.1843, 13.1702]  # fmt: skip
WRIGHT_FLAP_2 = [22.0345, 22.1810, 22.6149, 23.3203, 24.2734, 25.4461, 26.8091, 28.3341, 29.9954,
                 31.7705, 33.6404, 35.5890, 37.6031]  # fmt: skip


def spinning(red, spin: float, hub: float) -> t.System:
    """A hub spinning at the constant rate ``spin`` (rad/s) about z (an imposed-motion root)
    carrying the flexible beam welded at (``hub``, 0, 0) (m), along x; no gravity."""
    s = t.System("spinning")
    motion = [0.0] * 11 + [spin] + [0.0] * 5
    s.add(t.TimeFunction("spin", lambda tt: motion + [spin * tt], 18))  # ψ = Ω t
    s.add(t.ImposedMotionBody("hub", 1.0, 0.1 * np.eye(3), children={"C": (hub, 0.0, 0.0)},
                              gravity=(0.0, 0.0, 0.0)))  # fmt: skip
    s.add(t.WeldedBody("beam", 0.0, Z3, flexible=red, gravity=(0.0, 0.0, 0.0)))
    s.connect("spin.y", "hub.m")
    s.connect("hub.C", "beam.P")
    return s


@pytest.mark.parametrize("hub", [0.0, 1.0])
def test_spinning_cantilever_family_against_the_tables(hub: float) -> None:
    """The frequencies of a beam on a hub spinning at a constant rate, as a family of linear
    models over the spin rate (``linearize_family``, each model trimmed first: the centrifugal
    stretch): flapwise frequencies (out of the rotation plane) against Wright et al. (1982)
    without hub radius and against a Rayleigh-Ritz solution of the rotating beam's equation with
    a hub radius R = L; lagwise ones against omega_lag^2 = omega_flap^2 - Omega^2; within 1e-3,
    dimensionless spin rates 0 to 12. A square section: both planes share
    omega_0 = sqrt(E I / (rho A L^4))."""
    from test_flex_beam import ritz_flap

    beam = strip(n_elements=40, length=2.0, section=Section.rectangle(0.01, 0.01))
    red = cantilever_modes(beam.fe_model(), 20)  # 10 modes: the first lag mode 2.4e-3 high at 12
    sec = beam.section
    w0 = np.sqrt(beam.E * sec.Iy / (beam.rho * sec.A * beam.length**4))
    spins = [0, 4, 8, 12]
    models = t.linearize_family(lambda v: spinning(red, v * w0, hub * beam.length), spins,
                                x=lambda engine, v: t.trim(engine).x)  # fmt: skip
    for spin, lm in zip(spins, models, strict=True):
        w = np.sort([m.omega_n for m in lm.modes() if not m.rigid]) / w0
        flap = (np.array([WRIGHT_FLAP_1[spin], WRIGHT_FLAP_2[spin]]) if hub == 0.0
                else ritz_flap(spin, hub)[:2])  # fmt: skip
        lag = np.sqrt(flap**2 - spin**2)
        for expected in np.concatenate([flap, lag]):
            k = np.argmin(np.abs(w - expected))
            assert w[k] == pytest.approx(expected, rel=1e-3), (spin, expected, w[:6])


def direct_fe_frequencies(fe, hub_mass, hub_inertia, arm) -> np.ndarray:
    """The free-free frequencies of hub + two arrays by a direct finite-element eigen analysis:
    the arrays' full finite-element matrices in nodal dofs, their root nodes tied to the hub's
    rigid motion plus the joint's rotation about z (constraint elimination), the hub a rigid
    6-dof mass. Small motions about the undeformed configuration; no rotation."""
    N = fe.n_nodes
    nd = 6 * N
    n = 6 + 2 * (1 + nd - 6)  # hub; per array: joint angle + the non-root nodes' dofs
    M = np.zeros((n, n))
    K = np.zeros((n, n))
    M[:3, :3] = hub_mass * np.eye(3)
    M[3:6, 3:6] = np.diag(hub_inertia)
    col = 6
    for sign in (1.0, -1.0):
        R = rot_z(0.0 if sign > 0 else np.pi)  # array frame -> hub frame
        r = np.array([sign * arm, 0.0, 0.0])
        T = np.zeros((nd, n))
        # root node (node 0): hub translation + hub rotation x r, hub rotation + joint rotation
        T[0:3, 0:3] = R.T
        T[0:3, 3:6] = -R.T @ np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])
        T[3:6, 3:6] = R.T
        T[5, col] = 1.0  # the joint's rotation about z_a
        T[6:, col + 1 : col + 1 + nd - 6] = np.eye(nd - 6)
        col += 1 + nd - 6
        M += T.T @ fe.M @ T
        K += T.T @ fe.K @ T
    lam = scipy.linalg.eigh(K, M, eigvals_only=True)
    return np.sqrt(np.clip(np.sort(lam), 0.0, None))


def test_free_floating_hub_with_two_arrays_against_direct_fe() -> None:
    """The linearised free-free model (every mode of each array kept: the reduction is then
    exact) against the direct finite-element eigen analysis of the same mesh: every non-zero
    frequency within 1e-6 relative; the zero modes (6 of the hub, 2 of the joints) rigid."""
    beam = Beam("array", 1.5, 70e9, 2700.0, Section.rectangle(0.3, 0.01), nu=0.3, n_elements=4)
    fe = beam.fe_model()
    red = cantilever_modes(fe, 6 * (fe.n_nodes - 1))
    s = hub_with_arrays(red)
    lm = t.linearize(s)
    modes = lm.modes()  # (its rigid tolerance on the balanced A: |A| itself is 5.5e11 here)
    w = np.sort([m.omega_n for m in modes if not m.rigid])
    w_fe = direct_fe_frequencies(fe, 40.0, (4.0, 5.0, 6.0), 0.5)
    rigid_fe = w_fe < 1e-6 * w_fe.max()
    assert rigid_fe.sum() == 8
    assert sum(m.rigid for m in modes) == 12 + 2 * 2  # the hub's 12 and the joints' states
    np.testing.assert_allclose(w, w_fe[~rigid_fe], rtol=1e-6)  # measured: 4e-11


def test_model_file_round_trip(red, tmp_path) -> None:
    """A model file names the reduced-model file (relative to itself); written and read back,
    the system gives the same derivative."""
    write_reduced_model(tmp_path / "arm.npz", red)
    text = """
format: titopfmu-model
version: 1
name: flexible_pendulum
blocks:
  - {name: ground, type: Ground, children: {P: [0, 0, 0]}}
  - name: arm
    type: RevoluteBody
    mass: 0.2
    inertia: [[1e-4, 0, 0], [0, 1e-4, 0], [0, 0, 1e-4]]
    com: [0.01, 0, 0.02]
    axis: [0, 1, 0]
    theta0: 0.3
    flexible: arm.npz
    elastic_q0: [1e-4, 0, 0, 0, 0, 2e-4]
  - {name: tau, type: Constant, value: 0.0}
connections:
  - [ground.P, arm.P]
  - [tau.y, arm.joint.tau]
"""
    path = tmp_path / "model.yaml"
    path.write_text(text)
    s = t.load(path)
    assert s.blocks["arm"].flexible_source == str(tmp_path / "arm.npz")
    q0 = np.array([1e-4, 0, 0, 0, 0, 2e-4])
    s_py = pendulum(red, q0)
    e1, e2 = t.Engine(s), t.Engine(s_py)
    np.testing.assert_array_equal(e1.initial_state(), e2.initial_state())
    np.testing.assert_allclose(e1.derivative(0.0, e1.initial_state()),
                               e2.derivative(0.0, e2.initial_state()), rtol=1e-12)
    out = tmp_path / "written.yaml"
    s.save(out)
    s2 = t.load(out)
    e3 = t.Engine(s2)
    np.testing.assert_array_equal(e3.initial_state(), e1.initial_state())


def test_simulate_records_what_the_core_computes(red) -> None:
    """A run records states, poses and joint motions of a flexible body; a signal only the
    object path computes is refused by name."""
    s = pendulum(red, np.full(6, 1e-4))
    e = t.Engine(s)
    r = e.simulate(0.05, record=["arm.state.q", "arm.state.q.mode1", "arm.joint.m",
                                 "arm.position"], output_interval=0.01)  # fmt: skip
    assert r.values.shape == (6, 1 + 1 + 3 + 3)
    with pytest.raises(t.TitopError, match=r"kinetic_energy': with a flexible body \('arm'\)"):
        e.simulate(0.05, record=["arm.kinetic_energy"])


def test_bad_input_names_the_block_and_parameter(red, tmp_path) -> None:
    with pytest.raises(t.TitopError, match=r"block 'arm', parameter 'elastic_q0': 3 values"):
        pendulum(red, np.zeros(3))
    with pytest.raises(t.TitopError,
                       match=r"block 'b', parameter 'flexible': '.*missing.npz'.*cannot be read"):
        t.WeldedBody("b", 0.0, Z3, flexible=tmp_path / "missing.npz")
    with pytest.raises(t.TitopError, match=r"block 'b', parameter 'elastic_q0': given without"):
        t.WeldedBody("b", 1.0, np.eye(3), elastic_q0=[0.1])
    with pytest.raises(t.TitopError, match=r"block 'b', parameter 'flexible': a titopfmu"):
        t.WeldedBody("b", 0.0, Z3, flexible=42)
    with pytest.raises(t.TitopError, match=r"parameter 'children\[tip\]': at \[0.5"):
        t.WeldedBody("b", 0.0, Z3, flexible=red, children={"tip": (0.5, 0.0, 0.0)})
    from titopfmu.master import CoSimulation

    s = pendulum(red)
    with pytest.raises(t.TitopError, match="lacks the FMU of flexible block 'arm', "
                       "TitopRevoluteBodyFlex[0-9a-f]{12}C0.fmu .* built on demand"):
        CoSimulation.from_system(s, tmp_path / "fmus")  # (the cache builds it: fmus=None)
    with pytest.raises(t.TitopError, match="block 'arm': a flexible body is evaluated with the "
                       "whole model"):  # fmt: skip
        s.blocks["arm"].kinematics(np.zeros(14), None, {})


SPEC = {"beam": {"length": 1.0, "E": 70e9, "rho": 2700.0, "nu": 0.3,
                 "section": {"rectangle": [0.03, 0.008]}, "n_elements": 12},
        "modes": 4, "damping": 0.01, "nodes": ["tip"]}  # fmt: skip


def test_a_spec_builds_the_reduced_model_and_round_trips(tmp_path) -> None:
    """``flexible`` as a mapping (a beam and its reduction): the same reduced model as built
    by hand; the model file holds the mapping and reads back to the same system."""
    b = t.WeldedBody("arm", 0.0, Z3, flexible=SPEC)
    fe = strip().fe_model()
    by_hand = cantilever_modes(fe, 4, [fe.n_nodes - 1], damping=0.01)
    np.testing.assert_array_equal(b.flexible.Mee, by_hand.Mee)
    np.testing.assert_array_equal(b.flexible.damping(), by_hand.damping())
    s = t.System("s")
    s.add(t.Ground("g", children={"P": (0.0, 0.0, 0.0)}))
    s.add(b)
    s.connect("g.P", "arm.P")
    s.save(tmp_path / "m.yaml")
    again = t.load(tmp_path / "m.yaml")
    assert again.blocks["arm"].flexible_source == SPEC
    np.testing.assert_array_equal(again.blocks["arm"].flexible.Kee, by_hand.Kee)


def test_a_campaign_varies_the_flexible_part_by_name(tmp_path) -> None:
    """``arm.flexible.E``, ``.modes``, ``.damping`` are parameters: a grid campaign over E
    runs each value, and each run's outcome is that of the system built with that E."""
    from titopfmu.campaign import Campaign
    from titopfmu.parameters import parameter_names, with_parameters

    s = pendulum(SPEC, theta0=0.5)
    names = parameter_names(s, ["arm"])
    assert {"arm.flexible.E", "arm.flexible.modes", "arm.flexible.damping"} <= set(names)
    six = with_parameters(s, {"arm.flexible.modes": 6, "arm.flexible.E": 35e9})
    assert six.blocks["arm"].flexible.n_modes == 6
    w = six.blocks["arm"].flexible.frequencies()[0]
    assert w == pytest.approx(s.blocks["arm"].flexible.frequencies()[0] / np.sqrt(2), rel=1e-12)
    record = {"tip": "arm.state.q.mode1"}
    res = Campaign(s, {"arm.flexible.E": "values(35e9, 70e9)"}, None, tmp_path / "c",
                   method="grid", t_final=0.02, output_interval=0.01, record=record,
                   reductions=("final",)).run(workers=0)  # fmt: skip
    assert (res.table["status"] == "ok").all()
    for E, final in zip(res.table["arm.flexible.E"], res.table["tip.final"], strict=True):
        direct = t.Engine(with_parameters(s, {"arm.flexible.E": E})).simulate(
            0.02, record=record, output_interval=0.01)
        assert final == pytest.approx(direct["tip"][-1], rel=1e-9)
    finals = list(res.table["tip.final"])
    assert finals[0] != pytest.approx(finals[1], rel=1e-3)  # E changes the motion


def test_a_bad_spec_names_the_block_and_key() -> None:
    bad = [({"beam": {**SPEC["beam"], "E": -1.0}}, r"'E': must be"),
           ({"beam": SPEC["beam"], "modes": 0}, r"'modes': a number of modes >= 1"),
           ({"beam": SPEC["beam"], "modes": 400}, r"'n_modes'"),
           ({"beam": SPEC["beam"], "reduced": "x.npz"}, r"exactly one of beam, plate, fe, reduced"),
           ({"beam": {**SPEC["beam"], "section": {"square": 1}}}, r"'beam.section'"),
           ({"beam": SPEC["beam"], "colour": 1}, r"'colour': unknown key")]  # fmt: skip
    for spec, match in bad:
        with pytest.raises(t.TitopError, match=r"block 'arm', parameter 'flexible': .*" + match):
            t.WeldedBody("arm", 0.0, Z3, flexible=spec)


def test_flexible_body_goes_wherever_a_rigid_body_goes(red) -> None:
    """FlexibleBody(name, model, joint): the body type of the joint with the flexible part; each
    joint (a free-floating root, welded on Ground, revolute, prismatic, spherical, free) runs,
    and a leaf whose rigid part is zero is accepted (the flexible part has the inertia)."""
    g = (0.0, 0.0, -9.81)
    for joint, kw in (("welded", {}), ("revolute", {"axis": (0, 1, 0)}),
                      ("prismatic", {"axis": (0, 0, 1)}), ("spherical", {}), ("free", {}),
                      ("free-floating", {})):  # fmt: skip
        b = t.FlexibleBody("arm", red, joint, gravity=g, **kw)
        assert b.flexible is red
        s = t.System(joint)
        if joint != "free-floating":
            s.add(t.Ground("ground", children={"P": (0.0, 0.0, 0.0)}))
        s.add(b)
        if joint != "free-floating":
            s.connect("ground.P", "arm.P")
        for port in b.ports.values():
            if port.kind == "signal_in":
                s.add(t.Constant(f"c_{port.name.replace('.', '_')}", np.zeros(port.size)))
                s.connect(f"c_{port.name.replace('.', '_')}.y", f"arm.{port.name}")
        e = t.Engine(s)
        dx = e.derivative(0.0, e.initial_state())
        assert np.all(np.isfinite(dx)), joint
        n = red.n_modes
        # at rest, undeformed: the elastic accelerations are those of gravity alone, and a
        # free-floating body falls freely (no elastic response)
        if joint == "free-floating":
            np.testing.assert_allclose(dx[-n:], 0.0, atol=1e-9)
    with pytest.raises(t.TitopError, match=r"block 'arm', parameter 'joint': 'hinge'"):
        t.FlexibleBody("arm", red, "hinge")


def momentum_drift(s: t.System, t_final: float) -> float:
    """max |h(t_final) - h(0)| / max |h(0)| of the total [linear; angular about the inertial
    origin] momentum, from the recorded poses, twists and elastic states: each body's
    p = D_P u (rigid part) + the first 6 rows of M(q) [u; q̇] (flexible part, eq. (5))."""
    from scipy.spatial.transform import Rotation

    bodies = [b for b in s.blocks.values() if isinstance(b, t.RigidBody | t.RevoluteBody)]
    rec = {}
    for b in bodies:
        for sig in ("twist", "position", "euler"):
            rec[f"{b.name}.{sig}"] = f"{b.name}.{sig}"
        if b.flexible is not None:
            for c in b.flexible.coordinates:
                rec[f"{b.name}.q.{c}"] = f"{b.name}.state.q.{c}"
                rec[f"{b.name}.qd.{c}"] = f"{b.name}.state.qd.{c}"
    r = t.Engine(s).simulate(t_final, record=rec, output_interval=t_final / 5, rtol=1e-10,
                             atol=1e-12)  # fmt: skip

    def col(name: str, k: int) -> np.ndarray:
        return np.array([v[k] for c, v in zip(r.columns, r.values.T, strict=True)
                         if c == name or c.startswith(name + "[")])  # fmt: skip

    def total(k: int) -> np.ndarray:
        h = np.zeros(6)
        for b in bodies:
            tw, pos, eul = col(f"{b.name}.twist", k), col(f"{b.name}.position", k), col(
                f"{b.name}.euler", k)
            R = Rotation.from_euler("ZYX", eul[::-1]).as_matrix()
            p = b.D @ tw
            if b.flexible is not None:
                cs = b.flexible.coordinates
                q = np.array([col(f"{b.name}.q.{c}", k)[0] for c in cs])
                qd = np.array([col(f"{b.name}.qd.{c}", k)[0] for c in cs])
                p = p + (b.flexible.mass_matrix(q) @ np.concatenate([tw, qd]))[:6]
            lin = R @ p[:3]
            h += np.concatenate([lin, R @ p[3:] + np.cross(pos, lin)])
        return h

    h0, h1 = total(0), total(-1)
    return float(np.abs(h1 - h0).max() / np.abs(h0).max())


def test_free_floating_momentum_drift_is_that_of_a_rigid_system() -> None:
    """No gravity, no damping, the geometric stiffness in: the total linear and angular momentum
    of the tumbling hub with two vibrating arrays drifts no more than that of the same system
    with rigid arrays, same integrator (DOP853, rtol 1e-10), over 0.5 s: measured 9e-16 and
    2.7e-13 relative."""
    beam = Beam("array", 1.5, 70e9, 2700.0, Section.rectangle(0.3, 0.01), nu=0.3, n_elements=6)
    red = cantilever_modes(beam.fe_model(), 3)
    flexible = momentum_drift(hub_with_arrays(red, moving=True), 0.5)
    rigid = momentum_drift(hub_with_arrays(red, moving=True, rigid=True), 0.5)
    assert flexible <= max(rigid, 1e-13), (flexible, rigid)


def test_pinocchio_reference_refuses_a_flexible_body_by_name(red) -> None:
    """Pinocchio has rigid bodies only (crosscheck runs a flexible model against the TMT
    reference instead: tests/test_flex_tree_reference.py)."""
    pytest.importorskip("pinocchio")
    from titopfmu.reference.pinocchio_model import to_pinocchio

    with pytest.raises(t.TitopError, match="block 'arm' is a flexible body: Pinocchio"):
        to_pinocchio(pendulum(red))


def test_a_plate_spec_and_its_campaign_names() -> None:
    """``flexible: {plate: ...}``: the scikit-fem panel (titopfmu.flex.plate) reduced as given,
    its corner node kept as a child port; ``arm.flexible.thickness`` is a parameter (the
    bending frequencies scale with it)."""
    pytest.importorskip("skfem")
    from titopfmu.flex.plate import Plate
    from titopfmu.parameters import parameter_names, with_parameters

    plate = {"a": 1.0, "b": 0.5, "thickness": 0.005, "E": 70e9, "rho": 2700.0, "nu": 0.3,
             "nx": 4, "ny": 2}  # fmt: skip
    spec = {"plate": plate, "modes": 4, "nodes": [[1.0, 0.25]]}
    b = t.FlexibleBody("panel", spec, "welded", children={"corner": (1.0, 0.25, 0.0)})
    p = Plate("panel", **plate)
    fe = p.fe_model()
    by_hand = cantilever_modes(fe, 4, [p.node_at(1.0, 0.25)])
    np.testing.assert_allclose(b.flexible.frequencies(), by_hand.frequencies(), rtol=1e-12)
    s = t.System("s")
    s.add(t.Ground("g", children={"P": (0.0, 0.0, 0.0)}), b)
    s.connect("g.P", "panel.P")
    assert "panel.flexible.thickness" in parameter_names(s)
    thin = with_parameters(s, {"panel.flexible.thickness": 0.0025}).blocks["panel"].flexible
    assert thin.frequencies()[0] == pytest.approx(b.flexible.frequencies()[0] / 2, rel=2e-2)
