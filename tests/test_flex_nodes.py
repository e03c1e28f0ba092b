"""Child ports at a flexible body's finite-element nodes (titop_flex, docs/flexible.md §6, issue
34 point 1): the core's flexible articulated-body step (a child subtree's articulated inertia
and bias condensed into the elastic coordinates) against an independent reference, the tip
body lumped into the beam's finite-element mass matrix before the reduction with the same basis;
energy of a flexible link carrying a rigid link on a revolute joint; complex-step derivatives
against central differences.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from flex_systems import check_jacobian
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

from titopfmu.blocks import ImposedMotionBody, RevoluteBody, WeldedBody
from titopfmu.core.model import NativeTree
from titopfmu.flex import Beam, Section
from titopfmu.flex.fe import FEModel
from titopfmu.flex.reduce import ReducedModel, _assemble
from titopfmu.reference import flexible as ref
from titopfmu.spatial.rotations import dcm_from_euler

G = np.array([0.3, -1.1, -9.81])


def strip(n_elements: int = 12) -> Beam:
    """A 1 m aluminium strip, 30 x 8 mm (0.648 kg), along x_a."""
    return Beam("strip", 1.0, 70e9, 2700.0, Section.rectangle(0.03, 0.008), nu=0.3,
                n_elements=n_elements)  # fmt: skip


def rot(rng) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q @ np.diag(np.sign(np.diag(r)))
    return q if np.linalg.det(q) > 0 else -q


def basis(fe: FEModel, kind: str, n: int = 6) -> np.ndarray:
    """A reduction basis (6N, .) of the beam clamped at its root: its n lowest cantilever modes,
    or Craig-Bampton's (the tip node's 6 static constraint modes and n fixed-interface modes)."""
    free = fe.free_dofs()
    tip = fe.node_dofs(fe.n_nodes - 1)
    K, M = fe.K, fe.M
    Phi = np.zeros((fe.n_dofs, 0))
    inner = free if kind == "modes" else np.setdiff1d(free, tip)
    if kind == "craig-bampton":
        Psi = np.zeros((fe.n_dofs, 6))
        Psi[tip] = np.eye(6)
        Psi[inner] = -np.linalg.solve(K[np.ix_(inner, inner)], K[np.ix_(inner, tip)])
        Phi = Psi
    _, V = scipy.linalg.eigh(K[np.ix_(inner, inner)], M[np.ix_(inner, inner)])
    modes = np.zeros((fe.n_dofs, n))
    modes[inner] = V[:, :n]
    return np.hstack([Phi, modes])


def reduced(fe: FEModel, Phi: np.ndarray) -> ReducedModel:
    """The invariants of fe on the basis Phi, the tip node as the node of interest."""
    names = [f"q{k}" for k in range(Phi.shape[1])]
    return _assemble(fe, Phi, names, [fe.root, fe.n_nodes - 1], 0.0, (), np.zeros(0))


def with_tip_body(fe: FEModel, m: float, inertia: np.ndarray) -> FEModel:
    """fe with a rigid body (mass m at the tip node, inertia (R_a) about it) lumped into its mass
    matrix (and the component mass operator: a point mass at the node)."""
    M = fe.M.copy()
    d = fe.node_dofs(fe.n_nodes - 1)
    M[np.ix_(d[:3], d[:3])] += m * np.eye(3)
    M[np.ix_(d[3:], d[3:])] += inertia
    S = fe.component_mass().copy()
    for a in range(3):  # Sbar[a, b] = int rho N_a^T N_b: m e_{d_a} e_{d_b}^T of the point mass
        for c in range(3):
            S[a, c][d[a], d[c]] += m
    return FEModel(fe.name, fe.node_positions, M, fe.K, fe.root, S)


@pytest.mark.parametrize("kind", ["modes", "craig-bampton"])
@pytest.mark.parametrize("rotary", [False, True])
def test_welded_tip_body_matches_lumped_mass(kind: str, rotary: bool) -> None:
    """(1) a rigid body (0.3 kg, centre of mass at the node) welded at the tip node of a beam
    welded to an imposed-motion root: q̈ and the beam's wrench on the root equal the reference's
    (docs eqs. T1-T2) for the beam with the tip body lumped into its finite-element mass matrix,
    reduced with the same basis (1e-10). A point mass at any state (a point's motion does not
    depend on the node frame's rotation); with a spherical rotary inertia I at the undeformed
    state q = q̇ = 0 only: the linear invariants keep a rotary inertia's kinetic energy
    1/2 Ω^T I Ω with Ω = ω + Φr q̇ and I fixed in R_a, while the core's node frame turns by
    exp(Φr q) at ω + J_l(Φr q) Φr q̇ (exact rigid kinematics: the gyroscopic coupling
    I (ω x Φr q̇) and, for a non-spherical I, the moment ω x I ω reach the elastic coordinates;
    docs §6). The tip body's motion vector: at the deformed node, turned by exp(Φr q)."""
    rng = np.random.default_rng(8 if rotary else 7)
    fe = strip().fe_model()
    Phi = basis(fe, kind)
    red = reduced(fe, Phi)
    n = red.n_modes
    m_t = 0.3
    E0 = rot(rng)  # P_{a/b} of the tip body: [v]_beam = E0 [v]_tip
    I_c = 2e-4 * np.eye(3) if rotary else np.zeros((3, 3))
    red_ref = reduced(with_tip_body(fe, m_t, E0 @ I_c @ E0.T), Phi)
    R_ab = rot(rng)
    root = ImposedMotionBody("root", 2.0, np.diag([0.1, 0.2, 0.3]), gravity=G,
                             children={"C": (0.2, -0.1, 0.3)})  # fmt: skip
    beam = WeldedBody("beam", 0.0, np.zeros((3, 3)), P_ab=R_ab, gravity=G,
                      children={"tip": tuple(red.node_positions[1])})  # fmt: skip
    tipb = WeldedBody("tip", m_t, I_c, P_ab=E0, gravity=G)
    tree = NativeTree([root, beam, tipb], [None, (0, 0), (1, 0)], [0, 0, 0],
                      flex=[(1, red, 0)])  # fmt: skip
    L, b = tree.layout, tree.layout["body_stride"]
    amp = 2e-3 / np.sqrt(np.diag(red.Mee))
    for _ in range(4):
        q = np.zeros(n) if rotary else amp * rng.normal(size=n)
        qd = np.zeros(n) if rotary else 30.0 * amp * rng.normal(size=n)
        x = np.concatenate([q, qd])
        mv = np.concatenate([rng.normal(size=12), rng.normal(size=3), rng.normal(size=3)])
        data, dx = tree.new_data(), np.zeros(tree.n_states)
        assert tree.derivative(0.0, x, mv, dx, data, full=True) == 0
        tw = data[b + L["tw"] : b + L["tw"] + 6]
        acc = data[b + L["acc"] : b + L["acc"] + 6]
        R = data[b + L["R"] : b + L["R"] + 9].reshape(3, 3)
        E = data[b + L["E"] : b + L["E"] + 9].reshape(3, 3)
        ga = R.T @ G
        a_P = acc[:3] + np.cross(tw[3:], tw[:3])
        u = np.concatenate([tw, qd])
        f = ref.gravity_forces(red_ref, q, ga)
        qdd, W = ref.titop_direct(red_ref, q, u, a_P, acc[3:], f, {})
        assert dx[n:] == pytest.approx(qdd, rel=1e-10, abs=1e-10 * np.abs(qdd).max())
        wP = data[b + L["wrench_parent"] : b + L["wrench_parent"] + 6]
        want = np.concatenate([E @ W[:3], E @ W[3:]])
        assert np.allclose(wP, want, rtol=0, atol=1e-10 * np.abs(W).max())
        # the tip body's motion vector: its position and velocity at the deformed node
        out = np.zeros(tree.nin)
        tree.model.body_motion(data, 2, out)
        tip = red.node_shapes[1]
        x_j = red.node_positions[1] + tip[:3] @ q
        th, thd = tip[3:] @ q, tip[3:] @ qd
        Rt = Rotation.from_rotvec(th).as_matrix()
        ip_beam = data[b + L["ip"] : b + L["ip"] + 3]
        assert np.allclose(Rt @ E0 @ out[12:15], ip_beam + x_j, rtol=0, atol=1e-12)
        v_node = tw[:3] + np.cross(tw[3:], x_j) + tip[:3] @ qd
        assert np.allclose(Rt @ E0 @ out[6:9], v_node, rtol=0, atol=1e-12)
        assert np.allclose(Rt @ E0 @ out[9:12], tw[3:] + left_jacobian(th) @ thd, rtol=0,
                           atol=1e-12)  # fmt: skip
        Rtip = dcm_from_euler(out[15:18])
        Rbeam = data[b + L["R"] : b + L["R"] + 9].reshape(3, 3)
        assert np.allclose(Rtip, Rbeam @ Rt @ E0, rtol=0, atol=1e-12)


def left_jacobian(th: np.ndarray) -> np.ndarray:
    """J_l(θ) = 1 + (1 - cos t) / t^2 θ~ + (t - sin t) / t^3 θ~^2, t = |θ| (the angular
    velocity of exp(θ~) is J_l θ̇)."""
    t = np.linalg.norm(th)
    K = np.array([[0.0, -th[2], th[1]], [th[2], 0.0, -th[0]], [-th[1], th[0], 0.0]])
    if t < 1e-4:
        return np.eye(3) + K / 2 + K @ K / 6
    return np.eye(3) + (1 - np.cos(t)) / t**2 * K + (t - np.sin(t)) / t**3 * K @ K


def link_system(red: ReducedModel, m2: float, l2: float) -> NativeTree:
    """A flexible link (the beam, on a revolute joint about z of a fixed imposed-motion root)
    carrying a rigid link (mass m2, length l2, centre of mass at l2 / 2) on a revolute joint
    about z at its tip node: no gravity, no damping."""
    zero = (0.0, 0.0, 0.0)
    root = ImposedMotionBody("root", 1.0, np.eye(3), gravity=zero, children={"C": zero})
    link1 = RevoluteBody("link1", 0.0, np.zeros((3, 3)), axis=(0.0, 0.0, 1.0), gravity=zero,
                         children={"tip": tuple(red.node_positions[1])})  # fmt: skip
    I2 = m2 * l2**2 / 12.0 * np.diag([0.01, 1.0, 1.0])
    link2 = RevoluteBody("link2", m2, I2, com=(l2 / 2, 0.0, 0.0), axis=(0.0, 0.0, 1.0),
                         gravity=zero)  # fmt: skip
    return NativeTree([root, link1, link2], [None, (0, 0), (1, 0)], [0, 0, 2 + 2 * red.n_modes],
                      flex=[(1, red, 2)])  # fmt: skip


def energy(tree: NativeTree, red: ReducedModel, x: np.ndarray, m2: float, I2c: np.ndarray,
           c2: np.ndarray) -> float:
    """Kinetic + elastic energy (J) from the core's twists (independent of its dynamics):
    the flexible link's 1/2 u^T M(q) u + 1/2 q^T Kee q, the rigid link's from its twist."""
    n = red.n_modes
    data = tree.new_data()
    assert tree.derivative(0.0, x, np.zeros(tree.nin), None, data) == 0
    L, b = tree.layout, tree.layout["body_stride"]
    q, qd = x[2 : 2 + n], x[2 + n : 2 + 2 * n]
    tw1 = data[b + L["tw"] : b + L["tw"] + 6]
    u = np.concatenate([tw1, qd])
    e = 0.5 * u @ red.mass_matrix(q) @ u + 0.5 * q @ red.Kee @ q
    tw2 = data[2 * b + L["tw"] : 2 * b + L["tw"] + 6]
    vc = tw2[:3] + np.cross(tw2[3:], c2)
    return float(e + 0.5 * m2 * vc @ vc + 0.5 * tw2[3:] @ I2c @ tw2[3:])


def test_flexible_and_rigid_links_conserve_energy() -> None:
    """(2) a flexible link and a rigid link on revolute joints (a planar double pendulum without
    gravity, the rigid link at the flexible one's tip node), no damping, no geometric stiffness
    (no load cases: the centrifugal stiffening's load values are not derived from a potential):
    kinetic plus elastic energy conserved over 2 s (DOP853, rtol 1e-10) to 1e-8 relative, at
    tip rotations of a few 1e-2 rad (the node frame's kinematics exact, docs §6)."""
    fe = strip().fe_model()
    red = reduced(fe, basis(fe, "modes", 4))
    n = red.n_modes
    m2, l2 = 0.2, 0.5
    tree = link_system(red, m2, l2)
    I2c = m2 * l2**2 / 12.0 * np.diag([0.01, 1.0, 1.0])
    c2 = np.array([l2 / 2, 0.0, 0.0])
    x0 = np.zeros(tree.n_states)
    x0[1] = 2.0  # link 1's rate (rad/s)
    x0[2 : 2 + n] = 2e-3 / np.sqrt(np.diag(red.Mee)) * np.array([1, -1, 1, -1])
    x0[2 + 2 * n] = 0.7  # link 2's angle (rad) and rate
    x0[3 + 2 * n] = -3.0
    data = tree.new_data()

    def rhs(t, x):
        dx = np.zeros(tree.n_states)
        assert tree.derivative(t, x, np.zeros(tree.nin), dx, data) == 0
        return dx

    sol = solve_ivp(rhs, (0.0, 2.0), x0, method="DOP853", rtol=1e-10, atol=1e-12,
                    t_eval=np.linspace(0.0, 2.0, 41))  # fmt: skip
    assert sol.success
    e = np.array([energy(tree, red, np.ascontiguousarray(y), m2, I2c, c2) for y in sol.y.T])
    tip_rotation = np.abs(red.node_shapes[1][3:] @ sol.y[2 : 2 + n]).max()
    assert tip_rotation > 1e-2  # the node turns: the test sees its rotation's kinematics
    assert np.abs(e - e[0]).max() < 1e-8 * e[0]
    # the energy flows between the links and the beam's elastic energy
    qs = sol.y[2 : 2 + n]
    elastic = 0.5 * np.einsum("it,ij,jt->t", qs, red.Kee, qs)
    assert elastic.max() > 1e-3 * e[0]


@pytest.mark.parametrize("scale", [1e-3, 5e-2])
def test_complex_step_jacobian_with_node_child(scale: float) -> None:
    """(3) exact derivatives (complex step) of the flexible link with a rigid link at its tip
    node against central differences, at small and at large tip rotations (the series and the
    closed forms of exp(θ~) and J_l(θ))."""
    rng = np.random.default_rng(9)
    fe = strip().fe_model()
    red = reduced(fe, basis(fe, "modes", 4))
    n = red.n_modes
    tree = link_system(red, 0.2, 0.5)
    x = np.concatenate([rng.normal(size=2), scale * rng.normal(size=n),
                        1e-2 * rng.normal(size=n), rng.normal(size=2)])  # fmt: skip
    inputs = np.concatenate([rng.normal(size=12), [0.0] * 6, rng.normal(size=tree.nin - 18)])
    theta = np.linalg.norm(red.node_shapes[1][3:] @ x[2 : 2 + n])
    assert (theta < 0.1) == (scale < 1e-2)  # t = 0.1: the series' bound
    check_jacobian(tree, x, inputs, x_floor=1e-3,
                   input_columns=[*range(12), *range(18, tree.nin)])


def test_wrench_input_at_node_matches_reference() -> None:
    """A wrench input at a flexible body's node port (a boundary port: the wrench on the body,
    node-frame components) enters by docs eq. (E4): q̈ and the wrench on the parent equal the
    reference's with the node's generalised forces, at the undeformed state (there N_j's axes
    are R_a's and J_l = 1) and any twist and q̇."""
    rng = np.random.default_rng(10)
    fe = strip().fe_model()
    red = reduced(fe, basis(fe, "modes"))
    n = red.n_modes
    root = ImposedMotionBody("root", 2.0, np.diag([0.1, 0.2, 0.3]), gravity=G,
                             children={"C": (0.2, -0.1, 0.3)})  # fmt: skip
    beam = WeldedBody("beam", 0.0, np.zeros((3, 3)), P_ab=rot(rng), gravity=G,
                      children={"tip": tuple(red.node_positions[1])})  # fmt: skip
    tree = NativeTree([root, beam], [None, (0, 0)], [0, 0], flex=[(1, red, 0)],
                      boundary_ports=[(1, 0)])  # fmt: skip
    L, b = tree.layout, tree.layout["body_stride"]
    for _ in range(3):
        qd = 0.05 * rng.normal(size=n)
        x = np.concatenate([np.zeros(n), qd])
        wrench = rng.normal(size=6)
        inputs = np.concatenate([rng.normal(size=12), rng.normal(size=3), rng.normal(size=3),
                                 wrench])  # fmt: skip
        data, dx = tree.new_data(), np.zeros(tree.n_states)
        assert tree.derivative(0.0, x, inputs, dx, data, full=True) == 0
        tw = data[b + L["tw"] : b + L["tw"] + 6]
        acc = data[b + L["acc"] : b + L["acc"] + 6]
        R = data[b + L["R"] : b + L["R"] + 9].reshape(3, 3)
        E = data[b + L["E"] : b + L["E"] + 9].reshape(3, 3)
        ga = R.T @ G
        q = np.zeros(n)
        f = ref.gravity_forces(red, q, ga) + ref.node_forces(
            red, q, red.node_ids[1], wrench[:3], wrench[3:])
        a_P = acc[:3] + np.cross(tw[3:], tw[:3])
        qdd, W = ref.titop_direct(red, q, np.concatenate([tw, qd]), a_P, acc[3:], f, {})
        assert dx[n:] == pytest.approx(qdd, rel=1e-10, abs=1e-10 * np.abs(qdd).max())
        wP = data[b + L["wrench_parent"] : b + L["wrench_parent"] + 6]
        want = np.concatenate([E @ W[:3], E @ W[3:]])
        assert np.allclose(wP, want, rtol=0, atol=1e-10 * np.abs(W).max())
