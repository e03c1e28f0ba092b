"""The C core's flexible part (titop_flex, docs/flexible.md §3-§7, issue 34) against the numpy
reference of the block's equations (titopfmu.reference.flexible): elastic accelerations (T2)
and the wrench at P at random states, on a flexible body carried by an imposed-motion root
(welded child), on a revolute joint and as a free-floating root; the cantilever's frequencies
from the core's exact Jacobian; complex-step derivatives against central differences; bad
reduced models refused by name.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from flex_systems import check_jacobian

from titopfmu.blocks import ImposedMotionBody, RevoluteBody, RigidBody, WeldedBody
from titopfmu.core.model import NativeTree
from titopfmu.flex import Beam, Section, cantilever_modes
from titopfmu.reference import flexible as ref

G = np.array([0.3, -1.1, -9.81])


def strip(n_elements: int = 12) -> Beam:
    """A 1 m aluminium strip, 30 x 8 mm, along x_a."""
    return Beam("strip", 1.0, 70e9, 2700.0, Section.rectangle(0.03, 0.008), nu=0.3,
                n_elements=n_elements)  # fmt: skip


@pytest.fixture(scope="module")
def red():
    fe = strip().fe_model()
    return cantilever_modes(fe, 6, damping=0.01)


def rot(rng) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q @ np.diag(np.sign(np.diag(r)))
    return q if np.linalg.det(q) > 0 else -q


def loads(red, twist, ga, acc) -> dict[str, float]:
    """The core's load values (titop_flex, docs §6): centrifugal exact, ax..az of a_P - g with
    a_P = v̇ + omega x v and alpha from the body's acceleration ``acc`` = [v̇, ω̇] (R_a; the
    core's converged solution: the reference then checks that it is the fixed point)."""
    v, w = np.asarray(twist[:3]), np.asarray(twist[3:])
    acc = np.asarray(acc)
    return ref.load_values(red, w, a_P=acc[:3] + np.cross(w, v), alpha=acc[3:], gravity=ga)


def random_q(red, rng, scale=1e-3):
    n = red.n_modes
    amp = scale / np.sqrt(np.diag(red.Mee))  # a few mm of tip deflection
    return amp * rng.normal(size=n), 20.0 * amp * rng.normal(size=n)


def carrier_welded(red, rng):
    """An imposed-motion root (rigid, mass 2) with a flexible body welded at a child port."""
    R_ab = rot(rng)
    root = ImposedMotionBody("root", 2.0, np.diag([0.1, 0.2, 0.3]), gravity=G,
                             children={"C": (0.2, -0.1, 0.3)})  # fmt: skip
    body = WeldedBody("beam", 0.0, np.zeros((3, 3)), P_ab=R_ab, gravity=G)
    x0 = 0
    tree = NativeTree([root, body], [None, (0, 0)], [0, 0], flex=[(1, red, x0)])
    return tree


def test_welded_on_imposed_root_matches_reference(red) -> None:
    """(1) a beam welded to a moving base: q̈ and the wrench on the parent vs the reference."""
    rng = np.random.default_rng(1)
    tree = carrier_welded(red, rng)
    L = tree.layout
    n = red.n_modes
    for _ in range(5):
        q, qd = random_q(red, rng)
        x = np.concatenate([q, qd])
        mv = np.concatenate([rng.normal(size=12), rng.normal(size=3), rng.normal(size=3)])
        data, dx = tree.new_data(), np.zeros(tree.n_states)
        assert tree.derivative(0.0, x, mv, dx, data, full=True) == 0
        b = L["body_stride"]
        tw = data[b + L["tw"] : b + L["tw"] + 6]
        acc = data[b + L["acc"] : b + L["acc"] + 6]
        R = data[b + L["R"] : b + L["R"] + 9].reshape(3, 3)
        E = data[b + L["E"] : b + L["E"] + 9].reshape(3, 3)
        p = data[b + L["p"] : b + L["p"] + 3]
        ga = R.T @ G
        u = np.concatenate([tw, qd])
        a_P = acc[:3] + np.cross(tw[3:], tw[:3])
        f = ref.gravity_forces(red, q, ga)
        qdd, W = ref.titop_direct(red, q, u, a_P, acc[3:], f, loads(red, tw, ga, acc))
        assert dx[n:] == pytest.approx(qdd, rel=1e-10, abs=1e-10 * np.abs(qdd).max())
        # the wrench on the parent in R_b, at the parent's port (p: P's offset in R_a)
        wP = data[b + L["wrench_parent"] : b + L["wrench_parent"] + 6]
        F, T = E @ W[:3], E @ (W[3:] - np.cross(p, W[:3]) * 0.0)
        scale = np.abs(W).max()
        assert np.allclose(wP[:3], F, rtol=0, atol=1e-10 * scale)
        assert np.allclose(wP[3:], T, rtol=0, atol=1e-10 * scale)
        assert dx[:n] == pytest.approx(qd, rel=1e-15)


def test_revolute_matches_reference(red) -> None:
    """(1) a beam on a revolute joint of a moving base: q̈, the joint's acceleration (its
    torque equation S^T W = tau) and the wrench on the parent vs the reference."""
    rng = np.random.default_rng(2)
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    root = ImposedMotionBody("root", 2.0, np.diag([0.1, 0.2, 0.3]), gravity=G,
                             children={"C": (0.2, -0.1, 0.3)})  # fmt: skip
    body = RevoluteBody("beam", 0.0, np.zeros((3, 3)), axis=axis, P_a0b=rot(rng), gravity=G,
                        armature=1e-3)  # fmt: skip
    tree = NativeTree([root, body], [None, (0, 0)], [0, 0], flex=[(1, red, 2)])
    L, n, b = tree.layout, red.n_modes, tree.layout["body_stride"]
    for _ in range(5):
        q, qd = random_q(red, rng)
        x = np.concatenate([rng.normal(size=2), q, qd])
        mv = np.concatenate([rng.normal(size=12), rng.normal(size=3), rng.normal(size=3)])
        tau = rng.normal()
        inputs = np.concatenate([mv, [tau]])
        data, dx = tree.new_data(), np.zeros(tree.n_states)
        assert tree.derivative(0.0, x, inputs, dx, data, full=True) == 0
        tw = data[b + L["tw"] : b + L["tw"] + 6]
        acc = data[b + L["acc"] : b + L["acc"] + 6]
        R = data[b + L["R"] : b + L["R"] + 9].reshape(3, 3)
        E = data[b + L["E"] : b + L["E"] + 9].reshape(3, 3)
        ga = R.T @ G
        u = np.concatenate([tw, qd])
        a_P = acc[:3] + np.cross(tw[3:], tw[:3])
        f = ref.gravity_forces(red, q, ga)
        qdd, W = ref.titop_direct(red, q, u, a_P, acc[3:], f, loads(red, tw, ga, acc))
        assert dx[2 + n :] == pytest.approx(qdd, rel=1e-10, abs=1e-10 * np.abs(qdd).max())
        # the joint's equation (eq. 20 with the rotor): tau = r . (-W)_moment + armature θ̈
        assert -W[3:] @ axis + 1e-3 * dx[1] == pytest.approx(tau, rel=1e-10,
                                                            abs=1e-10 * np.abs(W).max())
        wP = data[b + L["wrench_parent"] : b + L["wrench_parent"] + 6]
        scale = np.abs(W).max()
        assert np.allclose(wP, np.concatenate([E @ W[:3], E @ W[3:]]), rtol=0, atol=1e-10 * scale)


def test_free_floating_root_matches_reference(red) -> None:
    """(1) a free-floating flexible root (with a small rigid part at P): (v̇, ω̇, q̈) from the
    reference's free-body equations (E1) with the rigid part's inertia and bias added."""
    rng = np.random.default_rng(3)
    mr, Ir = 0.5, np.diag([0.01, 0.02, 0.03])
    root = RigidBody("beam", mr, Ir, gravity=G)
    tree = NativeTree([root], [None], [0], flex=[(0, red, 13)])
    n = red.n_modes
    for _ in range(5):
        q, qd = random_q(red, rng)
        quat = rng.normal(size=4)
        quat /= np.linalg.norm(quat)
        tw = rng.normal(size=6)
        x = np.concatenate([rng.normal(size=3), quat, tw, q, qd])
        data, dx = tree.new_data(), np.zeros(tree.n_states)
        assert tree.derivative(0.0, x, np.zeros(0), dx, data) == 0
        R = tree.layout["R"]
        Rm = data[R : R + 9].reshape(3, 3)
        ga = Rm.T @ G
        u = np.concatenate([tw, qd])
        M = red.mass_matrix(q).copy()
        M[:3, :3] += mr * np.eye(3)
        M[3:6, 3:6] += Ir
        v, w = tw[:3], tw[3:]
        h = ref.quadratic_forces(red, q, u)
        h[:3] += np.cross(w, mr * v) - mr * ga
        h[3:6] += np.cross(w, Ir @ w)
        h[6:] += ref.elastic_forces(red, q, qd, loads(red, tw, ga, dx[7:13]))
        udot = np.linalg.solve(M, ref.gravity_forces(red, q, ga) - h)
        got = np.concatenate([dx[7:13], dx[13 + n :]])
        assert got == pytest.approx(udot, rel=1e-10, abs=1e-10 * np.abs(udot).max())


def test_cantilever_frequencies(red) -> None:
    """(2) a beam welded to a fixed base (imposed-motion root at rest, no gravity): the
    eigenvalues of the core's exact Jacobian are the reduced model's frequencies (1e-8), and
    the first bending ones the Euler-Bernoulli closed form (1e-3 with 24 elements)."""
    fe = strip(24).fe_model()
    red0 = cantilever_modes(fe, 8)
    root = ImposedMotionBody("root", 1.0, np.eye(3), gravity=(0.0, 0.0, 0.0),
                             children={"C": (0.0, 0.0, 0.0)})  # fmt: skip
    body = WeldedBody("beam", 0.0, np.zeros((3, 3)), P_ab=np.eye(3), gravity=(0.0, 0.0, 0.0))
    tree = NativeTree([root, body], [None, (0, 0)], [0, 0], flex=[(1, red0, 0)])
    mv = np.zeros(18)
    jx, _ = tree.jacobian(0.0, np.zeros(tree.n_states), mv)
    lam = np.linalg.eigvals(jx)
    got = np.sort(np.abs(lam.imag[lam.imag > 0]))
    want = np.sort(np.sqrt(scipy.linalg.eigvalsh(red0.Kee, red0.Mee)))
    assert got == pytest.approx(want, rel=1e-8)
    beam = strip(24)
    sec = beam.section
    EI = 70e9 * np.array([sec.Iz, sec.Iy])  # the two bending planes
    rhoA = 2700.0 * sec.A
    bl = 1.87510406871196
    closed = np.sort(bl**2 * np.sqrt(EI / rhoA))  # L = 1
    assert got[:2] == pytest.approx(closed, rel=1e-3)
    # torsion and axial: the first of each, (pi / 2L) sqrt(GJ / (rho Ip)) and sqrt(E / rho),
    # among the 40 lowest modes' frequencies
    red40 = cantilever_modes(fe, 40)
    tree = NativeTree([root, body], [None, (0, 0)], [0, 0], flex=[(1, red40, 0)])
    jx, _ = tree.jacobian(0.0, np.zeros(tree.n_states), mv)
    lam = np.linalg.eigvals(jx)
    got = np.abs(lam.imag[lam.imag > 0])
    G = 70e9 / (2.0 * 1.3)
    torsion = np.pi / 2 * np.sqrt(G * sec.J / (2700.0 * sec.Ip))
    for w in (torsion, np.pi / 2 * np.sqrt(70e9 / 2700.0)):
        assert np.min(np.abs(got / w - 1.0)) < 1e-3


def test_complex_step_jacobian(red) -> None:
    """(5) Engine-level exact derivatives (complex step) against central differences."""
    rng = np.random.default_rng(5)
    axis = np.array([0.0, 0.3, 1.0]) / np.hypot(0.3, 1.0)
    root = ImposedMotionBody("root", 2.0, np.diag([0.1, 0.2, 0.3]), gravity=G,
                             children={"C": (0.2, -0.1, 0.3)})  # fmt: skip
    body = RevoluteBody("beam", 0.0, np.zeros((3, 3)), axis=axis, P_a0b=rot(rng), gravity=G,
                        armature=1e-3)  # fmt: skip
    tree = NativeTree([root, body], [None, (0, 0)], [0, 0], flex=[(1, red, 2)])
    q, qd = random_q(red, rng)
    x = np.concatenate([rng.normal(size=2), q, qd])
    inputs = np.concatenate([rng.normal(size=18), [0.3]])
    check_jacobian(tree, x, inputs)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda r: {"Mee": -r.Mee}, "matrix 'Mee': not positive definite"),
        (lambda r: {"Mee": r.Mee + np.triu(np.ones_like(r.Mee), 1)}, "matrix 'Mee': not symmetric"),
        (lambda r: {"Kee": -r.Kee}, "matrix 'Kee': not positive semi-definite"),
        (lambda r: {"Kee": r.Kee + np.triu(np.ones_like(r.Kee), 1) * 1e3},
         "matrix 'Kee': not symmetric"),
        (lambda r: {"mass": -1.0}, "'mass': must be finite and > 0"),
        (lambda r: {"Ct": np.full_like(r.Ct, np.nan)}, "'invariants': has non-finite entries"),
    ],
)
def test_bad_reduced_model_refused(red, change, message) -> None:
    """(6) the core refuses a bad reduced model naming the block and the matrix."""
    bad = _replace(red, change(red))
    root = ImposedMotionBody("root", 2.0, np.eye(3), children={"C": (0.0, 0.0, 0.0)})
    body = WeldedBody("beam", 0.0, np.zeros((3, 3)), P_ab=np.eye(3))
    with pytest.raises(ValueError, match=f"body 'beam', {message}"):
        NativeTree([root, body], [None, (0, 0)], [0, 0], flex=[(1, bad, 0)])


def _replace(red, fields):
    """A copy of the reduced model with arrays replaced, bypassing its own checks (the core's
    are under test)."""

    class Bad:
        def __getattr__(self, name):
            return fields[name] if name in fields else getattr(red, name)

    return Bad()


def test_flexible_body_ports_off_nodes_refused(red) -> None:
    """(6) a flexible body's child port k sits at node k + 1 of its reduced model: a port
    without a node, or off its node, is refused naming the block, the port and the node."""
    root = ImposedMotionBody("root", 2.0, np.eye(3), children={"C": (0.0, 0.0, 0.0)})
    body = WeldedBody("beam", 0.0, np.zeros((3, 3)), P_ab=np.eye(3),
                      children={"tip": (1.0, 0.0, 0.0)})  # fmt: skip
    with pytest.raises(ValueError, match="block 'beam', child port 'tip': child port 1 of a "
                       "flexible body needs node 1 of its reduced model .* 0 node"):
        NativeTree([root, body], [None, (0, 0)], [0, 0], flex=[(1, red, 0)])
    fe = strip().fe_model()
    red_tip = cantilever_modes(fe, 4, [fe.n_nodes - 1])
    off = WeldedBody("beam", 0.0, np.zeros((3, 3)), P_ab=np.eye(3),
                     children={"tip": (0.999, 0.0, 0.0)})  # fmt: skip
    with pytest.raises(ValueError, match=r"block 'beam', child port 'tip': .* not at node 1"):
        NativeTree([root, off], [None, (0, 0)], [0, 0], flex=[(1, red_tip, 0)])


#: Wright et al. 1982 (Table 1): the rotating uniform cantilever's first two flapwise
#: frequencies (omega / sqrt(EI / (rho A L^4))) at spin rates 0..12 (same unit), no hub radius
FLAP_1 = [3.5160, 3.6816, 4.1373, 4.7973, 5.5850, 6.4495, 7.3604, 8.2996, 9.2568, 10.2257,
          11.2023, 12.1843, 13.1702]  # fmt: skip
FLAP_2 = [22.0345, 22.1810, 22.6149, 23.3203, 24.2734, 25.4461, 26.8091, 28.3341, 29.9954,
          31.7705, 33.6404, 35.5890, 37.6031]  # fmt: skip


def test_spinning_beam_flapwise_frequencies() -> None:
    """(3) a beam carried by a hub spinning at a constant rate Omega about z (an imposed-motion
    root): the eigenvalues of the core's exact Jacobian (complex step) of the full non-linear
    model at q = 0 (Coriolis, centrifugal stiffening KG_wzz and softening included) give the
    flapwise frequencies of Wright et al. 1982 within 0.1 % at Omega = 0..12 (dimensionless),
    and those of the reduced model's eigenproblem (docs eq. G3) to 1e-8 (flap decouples from
    the Coriolis terms for a spin about z)."""
    beam = Beam("rotor", 1.0, 70e9, 2700.0, Section.rectangle(0.02, 0.01), nu=0.3)
    s = beam.section
    unit = float(np.sqrt(beam.E / (beam.rho * s.A * beam.length**4) * s.Iy))
    fe = beam.fe_model()
    red0 = cantilever_modes(fe, 24, [fe.n_nodes - 1])
    hub = ImposedMotionBody("hub", 1.0, np.eye(3), gravity=(0.0, 0.0, 0.0))
    tree = NativeTree([hub], [None], [0], flex=[(0, red0, 0)])
    n = red0.n_modes
    tip = red0.node_shapes[-1][:3]
    for spin, (f1, f2) in enumerate(zip(FLAP_1, FLAP_2, strict=True)):
        mv = np.zeros(18)
        mv[11] = spin * unit  # ω_z
        jx, _ = tree.jacobian(0.0, np.zeros(2 * n), mv)
        lam, V = np.linalg.eig(jx)
        flap = []
        for k in np.flatnonzero(lam.imag > 0):
            t = np.abs(tip @ V[:n, k])
            if t[2] > 10 * max(t[0], t[1]):
                flap.append(lam[k].imag)
        flap = np.sort(flap)
        assert flap[:2] / unit == pytest.approx([f1, f2], rel=1e-3), spin
        K = red0.stiffness({"wzz": (spin * unit) ** 2})
        w2, W = scipy.linalg.eigh(K, red0.Mee)
        ref_flap = np.sort([np.sqrt(w2[k]) for k in range(n)
                            if abs(tip[2] @ W[:, k]) > 10 * np.abs(tip[:2] @ W[:, k]).max()]
                           )  # fmt: skip
        assert flap[:2] == pytest.approx(ref_flap[:2], rel=1e-8), spin


def test_free_floating_flexible_body_conserves_energy_and_momentum() -> None:
    """(4) a free-floating flexible body (a beam with a small rigid hub at P), no gravity, no
    damping, vibrating and tumbling: over 3 s (DOP853, rtol 1e-11) the inertial linear and
    angular momenta are conserved (the geometric stiffness acts on the elastic rows only), and
    without the geometric-stiffness load cases (not derived from a potential) the energy
    T + 1/2 q^T Kee q too."""
    from scipy.integrate import solve_ivp

    beam = strip(8)
    red0 = cantilever_modes(beam.fe_model(), 4)
    n = red0.n_modes
    mr, Ir = 0.3, np.diag([0.02, 0.01, 0.015])
    nokg = _replace(red0, {"load_cases": (), "KG": np.zeros((0, n, n))})
    for model, check_energy in ((red0, False), (nokg, True)):
        root = RigidBody("sc", mr, Ir, gravity=(0.0, 0.0, 0.0),
                         twist=(0.1, -0.05, 0.02, 0.3, 0.8, -0.5))  # fmt: skip
        tree = NativeTree([root], [None], [0], flex=[(0, model, 13)])
        q0, qd0 = random_q(red0, np.random.default_rng(4), 3e-3)
        x0 = np.concatenate([root.initial_state(), q0, qd0])
        data = tree.new_data()

        def rhs(t, x, tree=tree, data=data):
            dx = np.zeros_like(x)
            assert tree.derivative(t, x, np.zeros(0), dx, data) == 0
            return dx

        def invariants(x, tree=tree, data=data):
            assert tree.derivative(0.0, x, np.zeros(0), None, data) == 0
            R = data[tree.layout["R"] : tree.layout["R"] + 9].reshape(3, 3)
            q, qd, tw = x[13 : 13 + n], x[13 + n :], x[7:13]
            M = red0.mass_matrix(q).copy()
            M[:3, :3] += mr * np.eye(3)
            M[3:6, 3:6] += Ir
            u = np.concatenate([tw, qd])
            p = M @ u
            P = R @ p[:3]
            H = R @ p[3:6] + np.cross(x[:3], P)
            E = 0.5 * u @ p + 0.5 * q @ red0.Kee @ q
            return P, H, E

        sol = solve_ivp(rhs, (0.0, 3.0), x0, method="DOP853", rtol=1e-11, atol=1e-13,
                        dense_output=False, t_eval=np.linspace(0.0, 3.0, 7))  # fmt: skip
        assert sol.success
        P0, H0, E0 = invariants(x0)
        for x in sol.y.T[1:]:
            x = x.copy()
            x[3:7] /= np.linalg.norm(x[3:7])
            P, H, E = invariants(x)
            assert P == pytest.approx(P0, rel=1e-8, abs=1e-8 * np.abs(P0).max())
            assert H == pytest.approx(H0, rel=1e-8, abs=1e-8 * np.abs(H0).max())
            if check_energy:
                assert E == pytest.approx(E0, rel=1e-8)


@pytest.mark.parametrize("kind", ["prismatic", "spherical", "free"])
def test_other_joints_match_reference(red, kind) -> None:
    """(1) the same flexible part on a prismatic, spherical or free joint of a moving base (the
    joint x body combination designed once): q̈ and the joint's equation S^T (-W) +
    armature u̇ = tau against the reference."""
    from titopfmu.blocks import FreeBody, PrismaticBody, SphericalBody

    rng = np.random.default_rng({"prismatic": 6, "spherical": 7, "free": 8}[kind])
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    root = ImposedMotionBody("root", 2.0, np.diag([0.1, 0.2, 0.3]), gravity=G,
                             children={"C": (0.2, -0.1, 0.3)})  # fmt: skip
    zero = np.zeros((3, 3))
    if kind == "prismatic":
        body, nq, nv = PrismaticBody("beam", 0.0, zero, axis=axis, P_ab=rot(rng), gravity=G,
                                     armature=1e-3), 1, 1  # fmt: skip
    elif kind == "spherical":
        body, nq, nv = SphericalBody("beam", 0.0, zero, P_a0b=rot(rng), gravity=G,
                                     armature=[1e-3] * 3), 4, 3  # fmt: skip
    else:
        body, nq, nv = FreeBody("beam", 0.0, zero, P_a0b=rot(rng), gravity=G,
                                armature=[1e-3] * 6), 7, 6  # fmt: skip
    tree = NativeTree([root, body], [None, (0, 0)], [0, 0], flex=[(1, red, nq + nv)])
    L, n, b = tree.layout, red.n_modes, tree.layout["body_stride"]
    for _ in range(4):
        q, qd = random_q(red, rng)
        joint = rng.normal(size=nq + nv)
        if kind in ("spherical", "free"):
            k = 0 if kind == "spherical" else 3
            joint[k : k + 4] /= np.linalg.norm(joint[k : k + 4])
        x = np.concatenate([joint, q, qd])
        tau = rng.normal(size=nv)
        inputs = np.concatenate([rng.normal(size=18), tau])
        data, dx = tree.new_data(), np.zeros(tree.n_states)
        assert tree.derivative(0.0, x, inputs, dx, data, full=True) == 0
        tw = data[b + L["tw"] : b + L["tw"] + 6]
        acc = data[b + L["acc"] : b + L["acc"] + 6]
        R = data[b + L["R"] : b + L["R"] + 9].reshape(3, 3)
        alpha = data[b + L["alpha"] : b + L["alpha"] + nv]
        ga = R.T @ G
        u = np.concatenate([tw, qd])
        a_P = acc[:3] + np.cross(tw[3:], tw[:3])
        f = ref.gravity_forces(red, q, ga)
        qdd, W = ref.titop_direct(red, q, u, a_P, acc[3:], f, loads(red, tw, ga, acc))
        assert dx[nq + nv + n :] == pytest.approx(qdd, rel=1e-10, abs=1e-10 * np.abs(qdd).max())
        St_W = {"prismatic": lambda w: [axis @ w[:3]], "spherical": lambda w: w[3:],
                "free": lambda w: w}[kind](-W)  # fmt: skip
        scale = np.abs(W).max()
        assert np.asarray(St_W) + 1e-3 * alpha == pytest.approx(tau, rel=1e-9, abs=1e-9 * scale)


def test_lone_block_with_flexible_part_refused(red) -> None:
    """(6) the object path (one block on its own, titop_block_*) has no flexible part."""
    body = WeldedBody("beam", 0.0, np.zeros((3, 3)), P_ab=np.eye(3))
    with pytest.raises(ValueError, match="no flexible part"):
        NativeTree([body], [None], [0], lone=True, flex=[(0, red, 0)])


def test_non_finite_elastic_state_names_its_body(red) -> None:
    """A non-finite elastic state: TITOP_NONFINITE (2) naming the flexible body."""
    root = ImposedMotionBody("root", 2.0, np.eye(3), children={"C": (0.0, 0.0, 0.0)})
    body = WeldedBody("beam", 0.0, np.zeros((3, 3)), P_ab=np.eye(3))
    tree = NativeTree([root, body], [None, (0, 0)], [0, 0], flex=[(1, red, 0)])
    x = np.zeros(tree.n_states)
    x[-1] = np.nan
    assert tree.derivative(0.0, x, np.zeros(18), np.zeros(x.size), tree.new_data()) == (2, 1)
