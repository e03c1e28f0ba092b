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

import titopfmu as t
from titopfmu.flex import Beam, Section, cantilever_modes, write_reduced_model
from titopfmu.reference import flexible as ref

Z3 = np.zeros((3, 3))


def strip(n_elements: int = 12, length: float = 1.0, section=None) -> Beam:
    """An aluminium strip along x_a (30 x 8 mm by default)."""
    return Beam("strip", length, 70e9, 2700.0, section or Section.rectangle(0.03, 0.008), nu=0.3,
                n_elements=n_elements)  # fmt: skip


def pendulum(red, q0=None, gravity=(0.0, 0.0, -9.81), theta0=0.3) -> t.System:
    """A flexible strip on a revolute joint (axis y_a: it swings in the x-z plane) on Ground."""
    s = t.System("flexible_pendulum")
    s.add(t.Ground("ground", children={"P": (0.0, 0.0, 0.0)}))
    s.add(t.RevoluteBody("arm", 0.2, np.diag([1e-4, 1e-4, 1e-4]), com=(0.01, 0.0, 0.02),
                         axis=(0.0, 1.0, 0.0),
                         flexible=red, theta0=theta0, elastic_q0=q0, gravity=gravity))
    s.add(t.Constant("tau", 0.0))
    s.connect("ground.P", "arm.P")
    s.connect("tau.y", "arm.joint.tau")
    return s


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


@pytest.mark.parametrize("spin", [0, 4, 8, 12])
def test_spinning_cantilever_modes_against_wright(spin: int) -> None:
    """A flexible body spinning at a constant rate about z (an imposed-motion root carrying the
    beam, hub radius zero), trimmed (the centrifugal stretch), then linearised: its flapwise
    frequencies (out of the rotation plane) against Wright et al. (1982) and its lagwise ones
    against omega_lag^2 = omega_flap^2 - Omega^2, within 1e-3, for dimensionless spin rates
    0 to 12. A square section: both planes share omega_0 = sqrt(E I / (rho A L^4))."""
    beam = strip(n_elements=40, length=2.0, section=Section.rectangle(0.01, 0.01))
    fe = beam.fe_model()
    red = cantilever_modes(fe, 20)  # 10 modes leave the first lag mode 2.4e-3 high at 12
    sec = beam.section
    w0 = np.sqrt(beam.E * sec.Iy / (beam.rho * sec.A * beam.length**4))
    Omega = spin * w0
    s = t.System("spinning")
    motion = [0.0] * 11 + [Omega, 0.0, 0.0, 0.0, 0.0, 0.0]
    s.add(t.TimeFunction("spin", lambda tt: motion[:17] + [Omega * tt], 18))  # ψ = Ω t
    s.add(t.ImposedMotionBody("beam", 0.0, Z3, flexible=red, gravity=(0.0, 0.0, 0.0)))
    s.connect("spin.y", "beam.m")
    tr = t.trim(s)
    lm = t.linearize(s, x=tr.x)
    w = np.sort([m.omega_n for m in lm.modes() if not m.rigid]) / w0
    flap = np.array([WRIGHT_FLAP_1[spin], WRIGHT_FLAP_2[spin]])
    lag = np.sqrt(flap**2 - spin**2)
    for expected in np.concatenate([flap, lag]):
        k = np.argmin(np.abs(w - expected))
        assert w[k] == pytest.approx(expected, rel=1e-3), (spin, expected, w[:6])


def rot_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def hub_with_arrays(red, hub_mass=40.0, hub_inertia=(4.0, 5.0, 6.0), arm=0.5) -> t.System:
    """A free-floating rigid hub carrying two flexible arrays on revolute joints (axis z),
    one along +x at (arm, 0, 0), the other along -x at (-arm, 0, 0); no gravity."""
    s = t.System("hub_and_arrays")
    s.add(t.RigidBody("hub", hub_mass, np.diag(hub_inertia), gravity=(0.0, 0.0, 0.0),
                      children={"left": (arm, 0.0, 0.0), "right": (-arm, 0.0, 0.0)}))
    for side, angle in (("left", 0.0), ("right", np.pi)):
        s.add(t.RevoluteBody(f"array_{side}", 0.0, Z3, axis=(0.0, 0.0, 1.0), P_a0b=rot_z(angle),
                             flexible=red, gravity=(0.0, 0.0, 0.0)))  # fmt: skip
        s.add(t.Constant(f"tau_{side}", 0.0))
        s.connect(f"hub.{side}", f"array_{side}.P")
        s.connect(f"tau_{side}.y", f"array_{side}.joint.tau")
    return s


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
    lam = np.linalg.eigvals(lm.A)  # (modes()'s rigid tolerance scales with |A|: omega_max^2)
    w = np.sort(lam.imag[lam.imag > 1e-3])
    w_fe = direct_fe_frequencies(fe, 40.0, (4.0, 5.0, 6.0), 0.5)
    rigid_fe = w_fe < 1e-6 * w_fe.max()
    assert rigid_fe.sum() == 8
    assert np.sum(np.abs(lam) < 1e-3) == 12 + 2 * 2  # the hub's 12 and the joints' states
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
    with pytest.raises(t.TitopError, match=r"block 'b', parameter 'flexible': a titopfmu"):
        t.WeldedBody("b", 0.0, Z3, flexible=42)
    with pytest.raises(t.TitopError, match=r"parameter 'children\[tip\]': at \[0.5"):
        t.WeldedBody("b", 0.0, Z3, flexible=red, children={"tip": (0.5, 0.0, 0.0)})
    from titopfmu.master import CoSimulation

    s = pendulum(red)
    with pytest.raises(t.TitopError, match="block 'arm': a flexible body .* no FMU per block"):
        CoSimulation.from_system(s, tmp_path / "fmus")
    with pytest.raises(t.TitopError, match="block 'arm': a flexible body is evaluated with the "
                       "whole model"):  # fmt: skip
        s.blocks["arm"].kinematics(np.zeros(14), None, {})
