"""The Riccati transfer-matrix reference solver (seed 002) against the seed and against Pinocchio.

Pinocchio models are built here from the Riccati model's parameters (revolute ``RZ`` joints for
the planar case, spherical joints for the spatial case, same tree, same joint placements), so the
comparison shares nothing but the parameters.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

from titopfmu.reference.riccati import (
    PLANAR_REDUCTION,
    Body,
    RiccatiError,
    RiccatiModel,
    RiccatiParameterError,
    branch_pendulum,
    branch_system,
    chain_bodies,
    quaternion_about,
    riccati_step,
    transfer_matrix,
)

pin = pytest.importorskip("pinocchio")

ACC_RTOL = 1e-9
TRAJ_TOL = 1e-6


# ----------------------------------------------------------------------------------------------
# an independent Pinocchio model of a Riccati model
# ----------------------------------------------------------------------------------------------


class PinModel:
    """Pinocchio model with the same tree; converts the Riccati state (bodies in model order)."""

    def __init__(self, model: RiccatiModel) -> None:
        self.model = model
        pm = pin.Model()
        pm.gravity = pin.Motion(np.array(model.gravity, dtype=float), np.zeros(3))
        jid: dict[str, int] = {}
        pending = list(model.bodies)
        while pending:  # parents first
            rest = []
            for b in pending:
                if b.parent is not None and b.parent not in jid:
                    rest.append(b)
                    continue
                parent = 0 if b.parent is None else jid[b.parent]
                if model.planar:
                    phi = 0.0 if b.joint_rotation is None else float(b.joint_rotation)
                    R = Rotation.from_euler("z", phi).as_matrix()
                    p = np.append(np.asarray(b.joint_point, dtype=float)[:2], 0.0)
                    joint = pin.JointModelRZ()
                    com = np.append(np.asarray(b.com, dtype=float)[:2], 0.0)
                    inertia = float(b.inertia) * np.eye(3)
                else:
                    R = np.eye(3) if b.joint_rotation is None else np.asarray(b.joint_rotation)
                    p = np.asarray(b.joint_point, dtype=float)
                    joint = pin.JointModelSpherical()
                    com = np.asarray(b.com, dtype=float)
                    inertia = np.asarray(b.inertia, dtype=float)
                j = pm.addJoint(parent, joint, pin.SE3(R, p), b.name)
                pm.appendBodyToJoint(
                    j, pin.Inertia(float(b.mass), com, inertia), pin.SE3.Identity()
                )
                jid[b.name] = j
            assert len(rest) < len(pending)
            pending = rest
        self.pm = pm
        self.data = pm.createData()
        joints = [pm.joints[jid[b.name]] for b in model.bodies]
        k = 1 if model.planar else 3
        self.iq = np.concatenate(
            [np.arange(j.idx_q, j.idx_q + (1 if model.planar else 4)) for j in joints]
        )
        self.iv = np.concatenate([np.arange(j.idx_v, j.idx_v + k) for j in joints])
        self.jid = jid

    def qv(self, y):
        """Riccati state -> Pinocchio (q, v); quaternions [w, x, y, z] -> [x, y, z, w]."""
        m = self.model
        q, v = m.split(y)
        Q = np.zeros(self.pm.nq)
        V = np.zeros(self.pm.nv)
        if m.planar:
            Q[self.iq] = q
        else:
            qn = q / np.linalg.norm(q, axis=1, keepdims=True)
            Q[self.iq] = qn[:, [1, 2, 3, 0]].ravel()
        V[self.iv] = np.ravel(v)
        return Q, V

    def acc(self, y):
        Q, V = self.qv(y)
        a = pin.aba(self.pm, self.data, Q, V, np.zeros(self.pm.nv))
        return a[self.iv]

    def rhs(self, t, x):
        """[q, v] with Pinocchio's quaternion [x, y, z, w]; q̇ = ½ q ⊗ (ω, 0)."""
        nq = self.pm.nq
        Q, V = x[:nq], x[nq:]
        if not self.model.planar:
            Q = Q.copy()
            for j in range(0, nq, 4):
                Q[j : j + 4] /= np.linalg.norm(Q[j : j + 4])
        a = pin.aba(self.pm, self.data, Q, V, np.zeros(self.pm.nv))
        if self.model.planar:
            return np.concatenate([V, a])
        dq = np.empty(nq)
        for j in range(0, nq, 4):
            x_, y_, z_, w_ = Q[j : j + 4]
            p, q_, r = V[3 * (j // 4) : 3 * (j // 4) + 3]
            dq[j] = 0.5 * (w_ * p + y_ * r - z_ * q_)
            dq[j + 1] = 0.5 * (w_ * q_ + z_ * p - x_ * r)
            dq[j + 2] = 0.5 * (w_ * r + x_ * q_ - y_ * p)
            dq[j + 3] = -0.5 * (x_ * p + y_ * q_ + z_ * r)
        return np.concatenate([dq, a])

    def y_to_x(self, y):
        return np.concatenate(self.qv(y))

    def x_to_y(self, x):
        """Pinocchio [q, v] -> Riccati y (model order)."""
        m = self.model
        nq = self.pm.nq
        Q, V = x[:nq], x[nq:]
        if m.planar:
            return m.state(Q[self.iq], V[self.iv])
        quat = Q[self.iq].reshape(-1, 4)[:, [3, 0, 1, 2]]
        return m.state(quat, V[self.iv])


def assert_acc_close(a, b, what):
    scale = max(1.0, float(np.max(np.abs(b))))
    err = float(np.max(np.abs(a - b)))
    assert err <= ACC_RTOL * scale, f"{what}: |riccati - pinocchio| = {err:.3g} (scale {scale:.3g})"
    return err / scale


# ----------------------------------------------------------------------------------------------
# random trees and states
# ----------------------------------------------------------------------------------------------


def random_model(seed: int, planar: bool, n: int | None = None) -> RiccatiModel:
    """2-9 bodies, random parents (sometimes a second root), masses, inertias satisfying the
    triangle inequality, centres of mass, hinge points and hinge reference rotations; listed in a
    shuffled order."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 10)) if n is None else n
    names = [f"b{k}" for k in range(n)]
    bodies = []
    for k in range(n):
        if k == 0 or (k >= 3 and rng.random() < 0.12):
            parent = None
        else:
            parent = names[int(rng.integers(0, k))]
        mass = float(rng.uniform(0.2, 3.0))
        com = rng.normal(scale=0.5, size=3)
        jp = rng.normal(scale=0.6, size=3)
        if planar:
            J = 0.0 if rng.random() < 0.2 else float(rng.uniform(0.01, 0.5))
            rot = float(rng.uniform(-np.pi, np.pi)) if rng.random() < 0.7 else None
            bodies.append(Body(names[k], mass, J, com[:2], parent, jp[:2], rot))
        else:
            x, y, z = rng.uniform(0.01, 0.4, size=3)
            P = Rotation.random(random_state=rng.integers(1 << 31)).as_matrix()
            J = P @ np.diag([x + y, y + z, x + z]) @ P.T
            rot = Rotation.random(random_state=rng.integers(1 << 31)).as_matrix()
            bodies.append(Body(names[k], mass, J, com, parent, jp, rot if k % 3 else None))
    perm = rng.permutation(n)
    g = (0.0, -9.81, 0.0) if planar else tuple(rng.normal(scale=5.0, size=3))
    return RiccatiModel(tuple(bodies[k] for k in perm), planar=planar, gravity=g)


def random_state(model: RiccatiModel, rng, rate: float = 2.0):
    n = model.n_bodies
    if model.planar:
        return model.state(rng.uniform(-np.pi, np.pi, n), rng.normal(scale=rate, size=n))
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return model.state(q, rng.normal(scale=rate, size=(n, 3)))


# ----------------------------------------------------------------------------------------------
# the seed's equations
# ----------------------------------------------------------------------------------------------


def _rz(t):
    return Rotation.from_euler("z", t).as_matrix()


def test_body_transfer_matrix_and_riccati_step_reproduce_eqs_38_to_40():
    m, a, g = 1.0, 0.5, 9.81
    th, thd = 1.1, 0.7
    c, s = math.cos(th), math.sin(th)
    Jz = 4.0 * m * a * a / 3.0
    r_IC = np.array([a * c, a * s, 0.0])
    U = transfer_matrix(
        m, _rz(th) @ np.diag([0.0, Jz, Jz]) @ _rz(th).T, 2 * r_IC, r_IC, [0, 0, thd], [0, -m * g, 0]
    )
    R = U[np.ix_(PLANAR_REDUCTION, PLANAR_REDUCTION)]  # eq. (36)
    za, zb = [3, 4, 5], [0, 1, 2]  # [m_z, q_x, q_y], [ẍ, ÿ, Ω̇_z] (eq. 37)
    T11 = [[1, -2 * a * s, 2 * a * c], [0, 1, 0], [0, 0, 1]]
    T12 = [[m * a * s, -m * a * c, -2 * m * a * a / 3], [-m, 0, m * a * s], [0, -m, -m * a * c]]
    T22 = [[1, 0, -2 * a * s], [0, 1, 2 * a * c], [0, 0, 1]]
    fa = [-m * a * g * c, m * a * c * thd**2, m * a * s * thd**2 - m * g]
    fb = [-2 * a * c * thd**2, -2 * a * s * thd**2, 0.0]
    np.testing.assert_allclose(R[np.ix_(za, za)], T11, atol=1e-14)  # eq. (38)
    np.testing.assert_allclose(R[np.ix_(za, zb)], T12, atol=1e-14)
    np.testing.assert_allclose(R[np.ix_(zb, za)], np.zeros((3, 3)), atol=1e-14)
    np.testing.assert_allclose(R[np.ix_(zb, zb)], T22, atol=1e-14)
    np.testing.assert_allclose(R[za, 6], fa, atol=1e-14)
    np.testing.assert_allclose(R[zb, 6], fb, atol=1e-14)
    S2, e2, _, _ = riccati_step(np.zeros((3, 3)), np.zeros(3), R, za, zb)  # S_1 = 0, e_1 = 0
    S2_paper = [[m * a * s, -m * a * c, 4 * m * a * a / 3], [-m, 0, -m * a * s], [0, -m, m * a * c]]
    e2_paper = [-m * a * g * c, -m * a * c * thd**2, -m * a * s * thd**2 - m * g]
    np.testing.assert_allclose(S2, S2_paper, atol=1e-14)  # eq. (39)
    np.testing.assert_allclose(e2, e2_paper, atol=1e-14)  # eq. (40)


def test_multi_input_transfer_matrix_row_of_eq_49():
    """Row m_z of body 7's reduced extended matrix (49): the u_{3,k} quoted after eq. (51)."""
    m, a = 1.0, 0.5
    th7 = 0.3
    c, s = math.cos(th7), math.sin(th7)
    Jz = 4.0 * m * a * a / 3.0
    r = np.array([a * c, a * s, 0.0])
    U = transfer_matrix(
        m, _rz(th7) @ np.diag([0, Jz, Jz]) @ _rz(th7).T, r, r, [0, 0, 0.4], [0, -9.81, 0],
        r_I1Ik=[2 * r],
    )  # fmt: skip
    cols = [0, 1, 5, 8, 9, 10, 14, 15, 16, 18]  # reduced extended state (6)
    row = U[np.ix_(PLANAR_REDUCTION, cols)][3]
    expected = [0, 0, m * a * a / 3, 1, -a * s, a * c, 1, a * s, -a * c, 0]
    np.testing.assert_allclose(row, expected, atol=1e-14)


# ----------------------------------------------------------------------------------------------
# accelerations against Pinocchio
# ----------------------------------------------------------------------------------------------


def test_branch_pendulum_accelerations():
    ex = branch_pendulum()
    ref = PinModel(ex.model)
    rng = np.random.default_rng(2)
    states = [ex.y0] + [random_state(ex.model, rng, rate=3.0) for _ in range(10)]
    for k, y in enumerate(states):
        assert_acc_close(ex.model.accelerations(y), ref.acc(y), f"Fig. 2 state {k}")


@pytest.mark.parametrize("planar", [True, False], ids=["planar", "spatial"])
def test_random_trees_accelerations(planar):
    worst = 0.0
    for seed in range(12):
        model = random_model(seed, planar)
        ref = PinModel(model)
        rng = np.random.default_rng(100 + seed)
        for k in range(4):
            y = random_state(model, rng)
            worst = max(worst, assert_acc_close(model.accelerations(y), ref.acc(y), f"{seed}/{k}"))
    assert worst < ACC_RTOL


def test_branch_system_small_spatial_accelerations():
    ex = branch_system(13)  # Fig. 1 with 7 bodies, 21 dof
    ref = PinModel(ex.model)
    rng = np.random.default_rng(7)
    for k, y in enumerate([ex.y0] + [random_state(ex.model, rng) for _ in range(3)]):
        assert_acc_close(ex.model.accelerations(y), ref.acc(y), f"Fig. 1 N=13 state {k}")


def test_ill_conditioned_fig1_satisfies_inverse_dynamics():
    """Fig. 1 with 31 slender rods: cond(M) reaches ~1e10 at random states, so no two double-
    precision solvers agree to 1e-9 there; the Riccati accelerations must instead satisfy
    Pinocchio's inverse dynamics (RNEA, a well-conditioned forward evaluation): residual torques
    <= 1e-9 of the gravity torques, and no worse than those of Pinocchio's own ABA."""
    ex = branch_system(61)
    ref = PinModel(ex.model)
    rng = np.random.default_rng(1)
    for y in [ex.y0] + [random_state(ex.model, rng) for _ in range(3)]:
        Q, V = ref.qv(y)
        zero = np.zeros(ref.pm.nv)
        scale = float(np.max(np.abs(pin.rnea(ref.pm, ref.data, Q, zero, zero))))
        a = np.zeros(ref.pm.nv)
        a[ref.iv] = ex.model.accelerations(y)
        mine = float(np.max(np.abs(pin.rnea(ref.pm, ref.data, Q, V, a))))
        theirs = pin.aba(ref.pm, ref.data, Q, V, zero)
        theirs = float(np.max(np.abs(pin.rnea(ref.pm, ref.data, Q, V, theirs))))
        assert mine <= 1e-9 * scale, (mine, scale)
        assert mine <= max(theirs, 1e-12 * scale), (mine, theirs)


def test_hinge_forces_and_poses():
    """Hinge positions and DCMs against Pinocchio's forward kinematics, and every hinge force
    against Newton's law for the subtree it carries: q = Σ m (g - a_C) (the force the subtree
    exerts on its parent or on the ground)."""
    model = random_model(5, planar=False, n=6)
    ref = PinModel(model)
    y = random_state(model, np.random.default_rng(3))
    sol = model.solve(y)
    Q, _ = ref.qv(y)
    pin.forwardKinematics(ref.pm, ref.data, Q)
    pos, A = model.poses(y)
    for k, b in enumerate(model.bodies):
        M = ref.data.oMi[ref.jid[b.name]]
        np.testing.assert_allclose(pos[k], M.translation, atol=1e-12)
        np.testing.assert_allclose(A[k], M.rotation, atol=1e-12)
    g = np.asarray(model.gravity)
    own = {}
    for k, b in enumerate(model.bodies):
        c = A[k] @ np.asarray(b.com)
        a_C = sol.acc_hinge[k] + np.cross(sol.omega_dot[k], c)
        a_C = a_C + np.cross(sol.omega[k], np.cross(sol.omega[k], c))
        own[b.name] = b.mass * (g - a_C)
    parent = {b.name: b.parent for b in model.bodies}

    def below(name):
        return [n for n in parent if n == name or below_of(n, name)]

    def below_of(n, name):
        while parent[n] is not None:
            n = parent[n]
            if n == name:
                return True
        return False

    for k, b in enumerate(model.bodies):
        total = sum(own[n] for n in below(b.name))
        np.testing.assert_allclose(sol.force[k], total, atol=1e-9 * (1 + np.abs(total).max()))


def test_body_order_does_not_matter():
    m1 = random_model(11, planar=False, n=7)
    rng = np.random.default_rng(0)
    perm = rng.permutation(7)
    m2 = RiccatiModel(tuple(m1.bodies[k] for k in perm), planar=False, gravity=m1.gravity)
    y1 = random_state(m1, rng)
    q, v = m1.split(y1)
    y2 = m2.state(q[perm], v[perm])
    a1 = m1.accelerations(y1).reshape(7, 3)
    a2 = m2.accelerations(y2).reshape(7, 3)
    np.testing.assert_allclose(a2, a1[perm], rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------------------------
# trajectories and energy
# ----------------------------------------------------------------------------------------------


def test_branch_pendulum_rk4_trajectory_matches_pinocchio_and_conserves_energy():
    """The seed's run (RK4, Δt = 1 ms) over 2 s against Pinocchio + DOP853 at tight tolerance;
    the same with the solve_ivp driver; energy conserved along the RK4 run."""
    ex = branch_pendulum()
    model = ex.model
    t, Y = model.rk4(ex.y0, 2.0, 1e-3, every=100)
    ref = PinModel(model)
    sol = solve_ivp(
        ref.rhs, (0.0, 2.0), ref.y_to_x(ex.y0), method="DOP853", rtol=1e-12, atol=1e-12, t_eval=t
    )
    assert sol.success
    Yp = np.array([ref.x_to_y(x) for x in sol.y.T])
    err = float(np.max(np.abs(Y - Yp)))
    assert err < TRAJ_TOL, f"Fig. 2 RK4 vs Pinocchio: {err:.3g}"
    s2 = model.simulate(ex.y0, 2.0, t, rtol=1e-10, atol=1e-10)
    assert s2.success
    assert float(np.max(np.abs(s2.y.T - Yp))) < TRAJ_TOL
    # the system moves: body 1 (1 kg) and bodies 3 + 5 (2 kg) hang from the ends of body 7
    theta = np.array([model.absolute_angles(y) for y in Y])
    assert np.ptp(theta[:, 3]) > 0.1
    np.testing.assert_allclose(model.absolute_angles(ex.y0), [np.pi / 2] * 3 + [0.0], atol=1e-15)
    E = np.array([sum(model.energy(y)) for y in Y])
    kin = max(model.energy(y)[0] for y in Y)
    assert kin > 1.0
    assert np.max(np.abs(E - E[0])) < 1e-9 * kin


def test_spatial_tree_trajectory_matches_pinocchio_and_conserves_energy():
    model = random_model(4, planar=False, n=5)
    ref = PinModel(model)
    y0 = random_state(model, np.random.default_rng(9), rate=1.5)
    t = np.linspace(0.0, 2.0, 11)
    mine = model.simulate(y0, 2.0, t, rtol=1e-12, atol=1e-12)
    theirs = solve_ivp(
        ref.rhs, (0.0, 2.0), ref.y_to_x(y0), method="DOP853", rtol=1e-12, atol=1e-12, t_eval=t
    )
    assert mine.success and theirs.success
    for k in range(len(t)):
        ym = mine.y[:, k]
        yp = ref.x_to_y(theirs.y[:, k])
        qm, vm = model.split(ym)
        qp, vp = model.split(yp)
        qm = qm / np.linalg.norm(qm, axis=1, keepdims=True)
        qp = qp / np.linalg.norm(qp, axis=1, keepdims=True)
        sign = np.sign(np.sum(qm * qp, axis=1, keepdims=True))
        assert np.max(np.abs(qm - sign * qp)) < TRAJ_TOL
        assert np.max(np.abs(vm - vp)) < TRAJ_TOL
    E = np.array([sum(model.energy(mine.y[:, k])) for k in range(len(t))])
    T0 = model.energy(y0)[0]
    assert np.max(np.abs(E - E[0])) < 1e-8 * max(T0, np.max(np.abs(E)))


# ----------------------------------------------------------------------------------------------
# the Fig. 1 branch system with long chains
# ----------------------------------------------------------------------------------------------


def test_branch_system_topology_fig1():
    model = branch_system(31).model
    topo = model.topology()
    assert topo["multi_input"] == ["body11"]
    assert topo["roots"] == ["body31"]
    chains = sorted(topo["chains"], key=len)
    assert chains[0] == ["body1", "body3"]
    assert chains[1] == ["body5", "body7", "body9"]
    assert chains[2] == [f"body{k}" for k in range(11, 32, 2)]
    assert model.n_bodies == 16 and model.dof == 48
    assert chain_bodies(500) == 999


@pytest.mark.parametrize("planar", [False, True], ids=["spatial", "planar"])
def test_long_chain_n999_single_solve(planar):
    """500 bodies (1500 dof spatial): finite accelerations, power balance dE/dt = 0 from the
    solved accelerations, at rest and at a random state; the solve is fast."""
    ex = branch_system(999, planar=planar)
    model = ex.model
    assert model.n_bodies == 500
    t0 = time.perf_counter()
    a = model.accelerations(ex.y0)
    elapsed = time.perf_counter() - t0
    assert np.all(np.isfinite(a)) and np.max(np.abs(a)) > 0.1
    assert elapsed < 2.0, f"one solve of 500 bodies took {elapsed:.2f} s"
    rng = np.random.default_rng(1)
    for y in (ex.y0, random_state(model, rng, rate=0.5)):
        res, scale = model.power_residual(y)
        assert abs(res) <= 1e-9 * max(scale, 1.0), (res, scale)
    # at rest only body 11 and the chains around it are out of equilibrium: the top of the long
    # chain starts with a much smaller angular acceleration than body 11
    sol = model.solve(ex.y0)
    w = np.linalg.norm(sol.omega_dot, axis=1)
    assert w[model.names.index("body11")] > 1e3 * w[model.names.index("body999")]


# ----------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------


def _rod(name, parent=None, **kw):
    args = dict(mass=1.0, inertia=np.diag([0.01, 0.1, 0.1]), com=(-0.5, 0, 0), parent=parent)
    args.update(kw)
    return Body(name, **args)


@pytest.mark.parametrize(
    ("bodies", "planar", "match"),
    [
        ([_rod("a", mass=-1.0)], False, r"body 'a', parameter 'mass'"),
        ([_rod("a", mass=float("nan"))], False, r"'a'.*'mass'"),
        ([_rod("a", inertia=[[1, 2, 0], [0, 1, 0], [0, 0, 1]])], False, r"'a'.*symmetric"),
        ([_rod("a", inertia=np.diag([1.0, -1.0, 1.0]))], False, r"'a'.*semi-definite"),
        ([_rod("a", inertia=np.eye(2))], False, r"'a'.*'inertia'.*shape"),
        ([_rod("rod", inertia=np.diag([0.0, 0.1, 0.1]))], False, r"'rod'.*singular.*spin"),
        ([_rod("p", inertia=np.zeros((3, 3)))], False, r"'p'.*singular"),
        ([_rod("a"), _rod("b", parent="zz")], False, r"'b'.*'parent'.*'zz'"),
        ([_rod("a"), _rod("a", parent="a")], False, r"'a'.*two bodies"),
        ([_rod("a", parent="b"), _rod("b", parent="a")], False, r"loop"),
        (
            [_rod("r"), _rod("a", parent="b"), _rod("b", parent="a")],
            False,
            r"'a'.*loop.*not a tree",
        ),
        ([_rod("a", joint_rotation=2 * np.eye(3))], False, r"'a'.*'joint_rotation'.*rotation"),
        ([_rod("a", joint_rotation=np.diag([1, 1, -1.0]))], False, r"'a'.*rotation"),
        ([_rod("a", com=(1, 2))], False, r"'a'.*'com'"),
        ([Body("a", 1.0, 0.1, (0.0, 0.0, 0.3))], True, r"'a'.*'com'.*z = 0.3"),
        ([Body("a", 1.0, np.eye(3), (0.5, 0.0))], True, r"'a'.*'inertia'.*scalar"),
        ([Body("a", 1.0, "big", (0.5, 0.0))], True, r"'a'.*'inertia'"),
        ([Body("a", 1.0, 0.0, (0.0, 0.0))], True, r"'a'.*undetermined"),
        ([Body("a", 1.0, 0.1, (0.5, 0.0), joint_rotation=np.eye(3))], True, r"'joint_rotation'"),
        ([], False, r"at least one body"),
    ],
)
def test_bad_parameters(bodies, planar, match):
    with pytest.raises(RiccatiError, match=match):
        RiccatiModel(tuple(bodies), planar=planar)


def test_parameter_error_names_body_and_parameter():
    with pytest.raises(RiccatiParameterError) as info:
        RiccatiModel((_rod("r"), _rod("arm", parent="r", mass=0.0)))
    assert info.value.body == "arm" and info.value.parameter == "mass"


def test_bad_gravity_and_examples():
    with pytest.raises(RiccatiError, match="gravity"):
        RiccatiModel((_rod("a"),), gravity=(0, 1))
    with pytest.raises(RiccatiError, match="gravity"):
        RiccatiModel((Body("a", 1.0, 0.1, (0.5, 0.0)),), planar=True, gravity=(0, -9.81, 1.0))
    with pytest.raises(RiccatiError, match="odd integer >= 13"):
        branch_system(100)
    with pytest.raises(RiccatiError, match="odd integer >= 13"):
        branch_system(11)
    with pytest.raises(RiccatiError, match="radius"):
        branch_system(13, radius=0.0)
    with pytest.raises(RiccatiError, match="at least 7 bodies"):
        chain_bodies(3)


def test_bad_states():
    ex = branch_system(13)
    model = ex.model
    with pytest.raises(RiccatiError, match=r"shape \(5,\).*\(49,\)"):
        model.accelerations(np.zeros(5))
    y = ex.y0.copy()
    y[4 * 3 : 4 * 3 + 4] = 0.0  # body7's quaternion
    with pytest.raises(RiccatiError, match="body 'body7'.*quaternion is zero"):
        model.accelerations(y)
    y = ex.y0.copy()
    y[-1] = np.nan
    with pytest.raises(RiccatiError, match="non-finite.*body13"):
        model.rhs(0.0, y)
    with pytest.raises(RiccatiError, match="whole number of steps"):
        model.rk4(ex.y0, 0.0105, 1e-3)
    with pytest.raises(RiccatiError, match="dt must be"):
        model.rk4(ex.y0, 1.0, 0.0)
    with pytest.raises(RiccatiError, match="only for planar"):
        model.absolute_angles(ex.y0)


def test_quaternion_about_and_rest_state():
    q = quaternion_about((0, 0, 2), np.pi / 2)
    np.testing.assert_allclose(q, [np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)])
    model = random_model(1, planar=False, n=3)
    y = model.rest_state()
    assert y.shape == (model.n_states,) and model.n_states == 21
