"""The geometric stiffness of node loads in the flexible body (issue 34: "geometric stiffening
... from the finite-element model's geometric stiffness"; docs/flexible.md §6, "Load values of
(G2)"): the load value of a case ``node<j>.<component>`` is the component of the wrench applied
on the body at node j (R_a), known before the sweep for an external wrench at the node or a
known port wrench, and a tree child's wrench at the node found by the core's fixed-point passes
(as are v̇ and alpha of the cases ax..alz).

References: (1) the characteristic equation of the axially loaded Euler-Bernoulli cantilever
(a dead axial force N at the free end; Bokaian, "Natural frequencies of beams under
compressive axial loads", J. Sound Vib. 126 (1988) 49-65, and "... under tensile axial loads",
J. Sound Vib. 142 (1990) 481-498), solved with scipy.optimize.brentq: the lowest bending
frequency rises with tension and falls to zero at Euler's load P_cr = pi^2 E I / (4 L^2);
(2) the same load carried by a massless rigid child at the node, or given as the node port's
known wrench; (3) a rigid tip mass on a spinning hub: the flapwise frequencies of the reduced
model with the mass lumped and its centrifugal pull m Omega^2 x_tip as the node's load value
(an eigen-analysis in numpy, independent of the core). Each check also runs the model built
without the node cases' KG (the previous behaviour): it fails by far, so the checks cannot pass
vacuously.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl
from flex_systems import check_jacobian
from scipy.optimize import brentq

import titopfmu as t
from titopfmu.core.model import UNSETTLED, NativeTree
from titopfmu.flex import BODY_LOAD_CASES, Beam, Section, craig_bampton

Z3 = np.zeros((3, 3))
NO_G = (0.0, 0.0, 0.0)
L_BEAM = 1.0


def beam() -> Beam:
    """A 1 m aluminium strip along x_a, 30 x 8 mm (its weak bending plane: z_a, E I_y), 40
    elements."""
    return Beam("strip", L_BEAM, 70e9, 2700.0, Section.rectangle(0.03, 0.008), nu=0.3,
                n_elements=40)  # fmt: skip


@pytest.fixture(scope="module")
def reds():
    """Craig-Bampton keeping the tip node (node 1 of the reduced model) and 8 fixed-interface
    modes: with the default load cases (the node cases ``node40.*`` included), and without the
    node cases (their KG absent: the core's previous, zero, node load values)."""
    fe = beam().fe_model()
    tip = [fe.n_nodes - 1]
    return craig_bampton(fe, 8, tip), craig_bampton(fe, 8, tip, load_cases=list(BODY_LOAD_CASES))


def tip(red) -> tuple[float, ...]:
    return tuple(float(v) for v in red.node_positions[1])


def p_cr() -> float:
    """Euler's buckling load of the cantilever in its weak plane, pi^2 E I_y / (4 L^2) (N)."""
    b = beam()
    return np.pi**2 * b.E * b.section.Iy / (4.0 * L_BEAM**2)


def axially_loaded_cantilever(N: float) -> float:
    """The lowest bending frequency (rad/s) of the Euler-Bernoulli cantilever of beam() in its
    weak plane with a dead axial force N (N, tension > 0) at its free end: E I w'''' - N w'' +
    rho A w_tt = 0, w = w' = 0 at x = 0, E I w'' = 0 and E I w''' - N w' = 0 at x = L (Bokaian
    1988, 1990). W = A1 cosh(a x) + A2 sinh(a x) + A3 cos(b x) + A4 sin(b x), a^2, -b^2 the
    roots of E I s^2 - N s - rho A w^2 = 0; the lowest root of the 4 x 4 determinant."""
    b = beam()
    EI, rhoA, L = b.E * b.section.Iy, b.rho * b.section.A, L_BEAM

    def det(w: float) -> float:
        D = np.sqrt(N * N + 4.0 * EI * rhoA * w * w)
        a, c = np.sqrt((N + D) / (2.0 * EI)), np.sqrt((D - N) / (2.0 * EI))
        ch, sh, cs, sn = np.cosh(a * L), np.sinh(a * L), np.cos(c * L), np.sin(c * L)
        M = np.array([
            [1.0, 0.0, 1.0, 0.0],
            [0.0, a, 0.0, c],
            [a * a * ch, a * a * sh, -c * c * cs, -c * c * sn],
            [(EI * a**3 - N * a) * sh, (EI * a**3 - N * a) * ch, (EI * c**3 + N * c) * sn,
             -(EI * c**3 + N * c) * cs],
        ])  # fmt: skip
        M /= np.abs(M).max(axis=1, keepdims=True)
        return float(np.linalg.det(M))

    w0 = 1.8751041**2 * np.sqrt(EI / (rhoA * L**4))
    grid = np.linspace(0.01 * w0, 3.0 * w0, 3000)
    vals = [det(w) for w in grid]
    for k in range(grid.size - 1):
        if np.sign(vals[k]) != np.sign(vals[k + 1]):
            return brentq(det, grid[k], grid[k + 1], xtol=1e-13 * w0)
    raise AssertionError("no root")


def cantilever(red, N: float, *, via_child: bool = False) -> t.System:
    """The strip welded on Ground with a dead axial force N (N, along x_a = x_i) at its tip
    node: an external wrench of the beam (frame inertial), or (``via_child``) of a massless
    rigid body welded at the tip node; no gravity."""
    s = t.System("axial")
    s.add(t.Ground("ground", children={"P": (0.0, 0.0, 0.0)}))
    ext = {"w": {"point": tip(red) if not via_child else (0.0, 0.0, 0.0), "frame": "inertial"}}
    if via_child:
        s.add(t.WeldedBody("beam", 0.0, Z3, flexible=red, gravity=NO_G,
                           children={"tip": tip(red)}))  # fmt: skip
        s.add(t.WeldedBody("tipb", 0.0, Z3, gravity=NO_G, external=ext))
        s.connect("beam.tip", "tipb.P")
        target = "tipb.w"
    else:
        s.add(t.WeldedBody("beam", 0.0, Z3, flexible=red, gravity=NO_G, external=ext))
        target = "beam.w"
    s.connect("ground.P", "beam.P")
    s.add(t.Constant("force", [N, 0.0, 0.0, 0.0, 0.0, 0.0]))
    s.connect("force.y", target)
    return s


def frequencies(system: t.System) -> np.ndarray:
    """The natural frequencies (rad/s, ascending) of ``system`` trimmed (the axial stretch)
    and linearised."""
    lm = t.linearize(system, x=t.trim(system).x)
    return np.sort([m.omega_n for m in lm.modes() if not m.rigid])


#: load N / P_cr and the bound on the relative error of the lowest frequency: the mesh and
#: mode error (measured 2.3e-6 unloaded, 5e-6 at N = 2 P_cr), larger at 0.99 P_cr (6e-5: the
#: model's buckling load a little above Euler's, the frequency ~ sqrt(P_cr - P))
LOADS = [(-0.99, 2e-4), (-0.9, 2e-5), (-0.5, 2e-5), (0.0, 2e-5), (0.5, 2e-5), (2.0, 2e-5)]


@pytest.mark.parametrize(("ratio", "tol"), LOADS)
def test_axially_loaded_cantilever(reds, ratio: float, tol: float) -> None:
    """(1) The lowest bending frequency of the clamped strip under a dead tip force N = ratio
    P_cr (external wrench at the tip node) against the characteristic equation: tension raises
    it (x 1.63 at 2 P_cr), compression lowers it to 0.104 of the unloaded one at 0.99 P_cr. The
    model without the node cases' KG keeps the unloaded frequency: off by more than 15 %."""
    red, red_nokg = reds
    N = ratio * p_cr()
    exact = axially_loaded_cantilever(N)
    w = frequencies(cantilever(red, N))[0]
    assert w == pytest.approx(exact, rel=tol)
    if ratio != 0.0:
        w_old = frequencies(cantilever(red_nokg, N))[0]
        assert abs(w_old / exact - 1.0) > 0.15
    if ratio == -0.99:  # Euler's load: the frequency goes to zero
        assert w < 0.11 * axially_loaded_cantilever(0.0)


def test_massless_child_carries_the_same_load(reds) -> None:
    """(2) The dead tip force N = -0.9 P_cr carried by a massless rigid body welded at the tip
    node (a tree child: its wrench's load value found by the core's passes) gives the external
    wrench's frequencies (1e-9) and state derivative at deflected, vibrating states (1e-10);
    the core's complex-step Jacobian of the child's system agrees with central differences
    there (the passes differentiate)."""
    red, _ = reds
    N = -0.9 * p_cr()
    w_node = frequencies(cantilever(red, N))[:6]
    w_child = frequencies(cantilever(red, N, via_child=True))[:6]
    np.testing.assert_allclose(w_child, w_node, rtol=1e-9)
    e_node, e_child = t.Engine(cantilever(red, N)), t.Engine(cantilever(red, N, via_child=True))
    rng = np.random.default_rng(7)
    n = red.n_modes
    amp = 2e-3 / np.sqrt(np.diag(red.Mee))
    for _ in range(3):
        x = np.concatenate([amp * rng.normal(size=n), 30.0 * amp * rng.normal(size=n)])
        want = e_node.derivative(0.0, x)
        np.testing.assert_allclose(e_child.derivative(0.0, x), want, rtol=0,
                                   atol=1e-10 * np.abs(want).max())  # fmt: skip
    check_jacobian(e_child.native, x, e_child._native_inputs(0.0, x), x_floor=1e-4)


def test_known_port_wrench(reds) -> None:
    """(2') The same force as the known wrench of the tip node's port (a subsystem's boundary
    port: its wrench an input, in the node frame N_1's components) gives the external wrench's
    state derivative (frame 'body': N_1's components too) at deflected states, and differs
    from the model without the node cases' KG."""
    red, red_nokg = reds
    N = -0.9 * p_cr()
    rng = np.random.default_rng(8)
    n = red.n_modes
    amp = 2e-3 / np.sqrt(np.diag(red.Mee))

    def port_tree(r):
        body = t.WeldedBody("beam", 0.0, Z3, flexible=r, gravity=NO_G, children={"tip": tip(r)})
        ground = t.Ground("ground", children={"P": (0.0, 0.0, 0.0)})
        return NativeTree([ground, body], [None, (0, 0)], [0, 0], boundary_ports=[(1, 0)])

    def ext_engine(r):
        s = t.System("axial_body")
        s.add(t.Ground("ground", children={"P": (0.0, 0.0, 0.0)}))
        s.add(t.WeldedBody("beam", 0.0, Z3, flexible=r, gravity=NO_G,
                           external={"w": {"point": tip(r), "frame": "body"}}))  # fmt: skip
        s.connect("ground.P", "beam.P")
        s.add(t.Constant("force", [N, 0.0, 0.0, 0.0, 0.0, 0.0]))
        s.connect("force.y", "beam.w")
        return t.Engine(s)

    tree, tree_old, e_ext = port_tree(red), port_tree(red_nokg), ext_engine(red)
    assert tree.nin == 6 and tree.port_inputs == [0]
    inputs = np.array([N, 0.0, 0.0, 0.0, 0.0, 0.0])
    for _ in range(3):
        x = np.concatenate([amp * rng.normal(size=n), 30.0 * amp * rng.normal(size=n)])
        want = e_ext.derivative(0.0, x)
        dx, dx_old = np.zeros(2 * n), np.zeros(2 * n)
        assert tree.derivative(0.0, x, inputs, dx, tree.new_data()) == 0
        assert tree_old.derivative(0.0, x, inputs, dx_old, tree_old.new_data()) == 0
        np.testing.assert_allclose(dx, want, rtol=0, atol=1e-10 * np.abs(want).max())
        assert np.abs(dx_old - want).max() > 1e-5 * np.abs(want).max()  # 4e-4 measured


def spinning_with_tip_mass(red, spin: float, hub: float, m_tip: float) -> t.System:
    """A hub spinning at the constant rate ``spin`` (rad/s) about z (an imposed-motion root)
    carrying the strip welded at (``hub``, 0, 0) (m) along x, a point mass ``m_tip`` (kg, a
    rigid body without rotary inertia) welded at its tip node; no gravity."""
    s = t.System("spinning_tip_mass")
    motion = [0.0] * 11 + [spin] + [0.0] * 5
    s.add(t.TimeFunction("spin", lambda tt: motion + [spin * tt], 18))  # psi = Omega t
    s.add(t.ImposedMotionBody("hub", 1.0, 0.1 * np.eye(3), children={"C": (hub, 0.0, 0.0)},
                              gravity=NO_G))  # fmt: skip
    s.add(t.WeldedBody("beam", 0.0, Z3, flexible=red, gravity=NO_G, children={"tip": tip(red)}))
    s.add(t.WeldedBody("mass", m_tip, Z3, gravity=NO_G))
    s.connect("spin.y", "hub.m")
    s.connect("hub.C", "beam.P")
    s.connect("beam.tip", "mass.P")
    return s


def test_spinning_tip_mass_flapwise_frequencies(reds) -> None:
    """(3) A point mass (0.5 kg) at the tip of the strip on a hub of radius 0.5 m spinning at
    40 rad/s: its centrifugal pull (1200 N, 5.4 P_cr) stiffens the flapwise (z_a) bending. The
    trimmed, linearised system's flapwise frequencies equal those of the reduced model with the
    mass lumped, M = Mee + m Phi_t^T Phi_t, K = Kee + Omega^2 KG_wzz - Omega^2 R KG_ax + m Omega^2
    x_tip KG_node.fx (numpy, x_tip the trimmed tip's radius), within 1e-9 (measured 5e-13). The
    model without the node cases' KG is 20 % off."""
    red, red_nokg = reds
    spin, hub, m_tip = 40.0, 0.5, 0.5
    n = red.n_modes
    cases = list(red.load_cases)
    shape = red.node_shapes[1]
    for r, must_match in ((red, True), (red_nokg, False)):
        system = spinning_with_tip_mass(r, spin, hub, m_tip)
        x = t.trim(system).x
        lm = t.linearize(system, x=x)
        w = np.sort([m.omega_n for m in lm.modes() if not m.rigid])
        q = x[-2 * n : -n]
        x_tip = hub + red.node_positions[1, 0] + shape[0] @ q
        kg_tip = red.KG[cases.index(f"node{red.node_ids[1]}.fx")]
        K = (
            red.Kee
            + spin**2 * red.KG[cases.index("wzz")]
            - spin**2 * hub * red.KG[cases.index("ax")]
            + m_tip * spin**2 * x_tip * kg_tip
        )
        M = red.Mee + m_tip * shape[:3].T @ shape[:3]
        vals, vecs = sl.eigh(K, M)
        flap = [np.sqrt(v) for v, e in zip(vals, vecs.T, strict=True)
                if abs(shape[2] @ e) > 10.0 * abs(shape[1] @ e)][:2]  # fmt: skip
        assert len(flap) == 2
        for f in flap:
            got = w[np.argmin(np.abs(w - f))]
            if must_match:
                assert got == pytest.approx(f, rel=1e-9)
            else:
                assert abs(got / f - 1.0) > 0.1


def test_passes_that_do_not_settle_are_refused(reds) -> None:
    """(4) A made-up reduced model whose load case ``ay`` stiffens by Kee per m/s^2 (a
    coupling no structure has: v̇ moves the elastic forces more than they move v̇), on a
    free-floating root: the passes on the load values diverge; the core stops (at 40 passes,
    or at the first non-finite value) with UNSETTLED naming the body, and the engine says so.
    The strip's own KG settles (status 0)."""
    import dataclasses

    red, _ = reds
    n = red.n_modes
    q = 1e-3 / np.sqrt(np.diag(red.Mee)) * np.random.default_rng(3).normal(size=n)
    x = np.concatenate([[0.0] * 3, [1.0, 0.0, 0.0, 0.0], [0.0] * 6, q, np.zeros(n)])
    for factor, settles in ((None, True), (1.0, False), (1e6, False)):
        r = red
        if factor is not None:
            KG = red.KG.copy()
            KG[list(red.load_cases).index("ay")] = factor * red.Kee
            r = dataclasses.replace(red, KG=KG)
        root = t.RigidBody("beam", 0.1, 1e-4 * np.eye(3), gravity=NO_G, flexible=r)
        tree = NativeTree([root], [None], [0])
        dx = np.zeros(x.size)
        status = tree.derivative(0.0, x, np.zeros(0), dx, tree.new_data())
        if settles:
            assert status == 0 and np.all(np.isfinite(dx))
        else:
            assert status == (UNSETTLED, 0)
    s = t.System("diverging")
    s.add(t.RigidBody("beam", 0.1, 1e-4 * np.eye(3), gravity=NO_G, flexible=r, elastic_q0=q))
    with pytest.raises(t.SimulationError, match="did not settle"):
        t.Engine(s).derivative(0.0, x)


def test_flexible_body_at_a_flexible_node_differentiates(reds) -> None:
    """(5) A second strip on a revolute joint at the first one's tip node, under gravity and
    spinning (its wrench on the first, a node load found by the passes; the first body's
    condensation redone in each pass, another flexible part hanging below it): the core's
    complex-step Jacobian against central differences at a deflected, vibrating state, and
    the state derivative differs from the model without the node cases' KG."""
    red, red_nokg = reds
    n = red.n_modes
    rng = np.random.default_rng(5)
    amp = 2e-3 / np.sqrt(np.diag(red.Mee))
    x = np.concatenate([amp * rng.normal(size=n), 30.0 * amp * rng.normal(size=n), [0.3, 20.0],
                        amp * rng.normal(size=n), 30.0 * amp * rng.normal(size=n)])  # fmt: skip
    dxs = []
    for r in (red, red_nokg):
        s = t.System("two_strips")
        s.add(t.Ground("ground", children={"P": (0.0, 0.0, 0.0)}))
        s.add(t.WeldedBody("beam", 0.0, Z3, flexible=r, children={"tip": tip(r)}))
        down = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])  # turned
        s.add(t.RevoluteBody("beam2", 0.0, Z3, axis=(1.0, 0.0, 0.0), flexible=r, P_a0b=down))
        s.add(t.Constant("tau", 0.0))
        s.connect("ground.P", "beam.P")
        s.connect("beam.tip", "beam2.P")
        s.connect("tau.y", "beam2.joint.tau")
        e = t.Engine(s)
        assert e.n_states == x.size
        dxs.append(e.derivative(0.0, x))
        if r is red:
            check_jacobian(e.native, x, e._native_inputs(0.0, x), x_floor=1e-4)
    assert np.abs(dxs[0] - dxs[1]).max() > 1e-3 * np.abs(dxs[0]).max()  # 6e-3 measured
