"""Kane's method of seed 003 (:mod:`titopfmu.reference.kane`) against Pinocchio, the TITOP
FreeBody blocks, and physics.

The Pinocchio model is built here from the Kane model's parameters: body K is a
``JointModelFreeFlyer`` whose parent is the joint of L(K) (0 = universe), placed at
``SE3(1, q_K)`` and carrying ``Inertia(m_K, r_K, I_GK)``. Its configuration is the pose of K
relative to J (translation s_K in J, quaternion of P_{K/J}) and its velocity the relative twist in
K; the conversions use scipy rotations, not the solver's. Kane's generalised accelerations
[ω̇_K (K), s̈_K (J)] are compared with Pinocchio's converted to the same speeds.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

import titopfmu
from titopfmu.blocks.base import InertiaWarning, ParameterError, TitopError
from titopfmu.reference.kane import (
    EIGHT_BODY_CONNECTION,
    JointSpringDamper6,
    KaneBody,
    KaneModel,
    KaneStateError,
    angular_momentum,
    dcm_from_euler_parameters,
    eight_body_example,
    eight_body_initial_state,
    generalized_accelerations,
    gravity_potential_energy,
    kane_model,
    kinematic_rates,
    kinematics,
    kinetic_energy,
    linear_momentum,
    mass_matrix_and_forcing,
    pack_state,
    rhs,
    simulate,
    unpack_state,
)
from titopfmu.spatial.rotations import dcm_from_euler, quaternion_rate

pin = pytest.importorskip("pinocchio")

ACC_RTOL = 1e-9
TRAJ_TOL = 1e-6
G = np.array([0.0, 0.0, -9.81])


# ----------------------------------------------------------------------------------------------
# random models and states
# ----------------------------------------------------------------------------------------------


def random_inertia(rng: np.random.Generator) -> np.ndarray:
    while True:
        d = rng.uniform(0.05, 1.0, 3)
        s = np.sort(d)
        if s[0] + s[1] > 1.02 * s[2]:
            break
    R = Rotation.random(random_state=rng).as_matrix()
    i = R @ np.diag(d) @ R.T
    return 0.5 * (i + i.T)


def random_model(seed: int, n: int | None = None, loads=None, gravity=G) -> KaneModel:
    """A random tree: L(K) uniform in 1..K-1 (sometimes 0: another body free in R)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 11)) if n is None else n
    conn = [0] + [0 if rng.random() < 0.1 else int(rng.integers(1, K)) for K in range(2, n + 1)]
    return kane_model(
        conn,
        rng.uniform(0.5, 5.0, n).tolist(),
        [random_inertia(rng) for _ in range(n)],
        rng.uniform(-0.5, 0.5, (n, 3)),
        rng.uniform(-0.3, 0.3, (n, 3)),
        gravity,
        loads=loads,
    )


def random_state(model: KaneModel, rng: np.random.Generator, speed: float = 1.0) -> np.ndarray:
    n = model.n
    return pack_state(
        model,
        Rotation.random(n, random_state=rng).as_quat()[:, [3, 0, 1, 2]],
        rng.uniform(-0.3, 0.3, (n, 3)),
        speed * rng.uniform(-1.0, 1.0, (n, 3)),
        speed * rng.uniform(-0.5, 0.5, (n, 3)),
    )


# ----------------------------------------------------------------------------------------------
# the Pinocchio reference (free-flyer joints in the same tree)
# ----------------------------------------------------------------------------------------------


class PinTree:
    """Pinocchio model of a Kane model, plus state/acceleration conversions and an ODE.

    Pinocchio wants its joints in depth-first order (``crba`` relies on contiguous subtrees;
    the seed's numbering, e.g. L = (0, 1, 2, 1, 2, ...), is not depth-first), so body k is joint
    ``jid[k]`` of a depth-first preorder, its configuration at ``iq[k]`` (7: translation s_K,
    quaternion [x, y, z, w] of K relative to J) and its velocity at ``iv[k]`` (6: relative
    linear velocity and angular velocity, K components).
    """

    def __init__(self, model: KaneModel) -> None:
        self.kane = model
        self.n = n = model.n
        children: dict[int, list[int]] = {K: [] for K in range(n + 1)}
        for k, b in enumerate(model.bodies):
            children[b.parent].append(k + 1)
        order: list[int] = []

        def visit(K: int) -> None:
            for c in children[K]:
                order.append(c - 1)
                visit(c)

        visit(0)
        self.jid = np.empty(n, dtype=int)
        pm = pin.Model()
        pm.gravity = pin.Motion(np.array(model.gravity), np.zeros(3))
        for k in order:
            b = model.bodies[k]
            parent_jid = 0 if b.parent == 0 else int(self.jid[b.parent - 1])
            placement = pin.SE3(np.eye(3), np.array(b.joint_point))
            self.jid[k] = pm.addJoint(parent_jid, pin.JointModelFreeFlyer(), placement, b.name)
            pm.appendBodyToJoint(
                int(self.jid[k]),
                pin.Inertia(b.mass, np.array(b.com), b.inertia),
                pin.SE3.Identity(),
            )
        self.iq = [int(pm.idx_qs[int(j)]) for j in self.jid]
        self.iv = [int(pm.idx_vs[int(j)]) for j in self.jid]
        self.model = pm
        self.data = pm.createData()

    def _crel(self, q: np.ndarray, k: int) -> np.ndarray:
        return Rotation.from_quat(q[self.iq[k] + 3 : self.iq[k] + 7]).as_matrix()

    # Kane state -> (q, v)
    def q_v(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        st = unpack_state(self.kane, z)
        C = Rotation.from_quat(st.quaternion[:, [1, 2, 3, 0]]).as_matrix()  # P_{K/R}
        q = np.empty(7 * self.n)
        v = np.empty(6 * self.n)
        for k, b in enumerate(self.kane.bodies):
            j = b.parent - 1
            CJ = np.eye(3) if j < 0 else C[j]
            wJ = np.zeros(3) if j < 0 else st.omega[j]
            Crel = CJ.T @ C[k]
            iq, iv = self.iq[k], self.iv[k]
            q[iq : iq + 3] = st.s[k]
            q[iq + 3 : iq + 7] = Rotation.from_matrix(Crel).as_quat()  # [x, y, z, w]
            v[iv : iv + 3] = Crel.T @ st.sdot[k]
            v[iv + 3 : iv + 6] = st.omega[k] - Crel.T @ wJ
        return q, v

    # Pinocchio accelerations -> Kane's ẏ = [ω̇ (K comps), s̈ (J comps)]
    def ydot(self, z: np.ndarray, a: np.ndarray) -> np.ndarray:
        st = unpack_state(self.kane, z)
        q, v = self.q_v(z)
        wdot = np.empty((self.n, 3))
        sdd = np.empty((self.n, 3))
        for k, b in enumerate(self.kane.bodies):  # lower bodies first (L(K) < K)
            j = b.parent - 1
            iv = self.iv[k]
            Crel = self._crel(q, k)
            v_lin, w_rel = v[iv : iv + 3], v[iv + 3 : iv + 6]
            a_lin, a_ang = a[iv : iv + 3], a[iv + 3 : iv + 6]
            wJ = np.zeros(3) if j < 0 else st.omega[j]
            wdJ = np.zeros(3) if j < 0 else wdot[j]
            wdot[k] = Crel.T @ wdJ - np.cross(w_rel, Crel.T @ wJ) + a_ang
            sdd[k] = Crel @ (a_lin + np.cross(w_rel, v_lin))
        return np.concatenate([wdot.reshape(-1), sdd.reshape(-1)])

    def speed_map(self, z: np.ndarray) -> np.ndarray:
        """T(x) with v = T y (v is linear in y at fixed x)."""
        n = self.n
        T = np.empty((6 * n, 6 * n))
        for i in range(6 * n):
            zi = z.copy()
            zi[7 * n :] = 0.0
            zi[7 * n + i] = 1.0
            T[:, i] = self.q_v(zi)[1]
        return T

    def joint_torques(self, q: np.ndarray, v: np.ndarray, springs: JointSpringDamper6 | None):
        """The 6-dof spring-dampers as free-flyer joint torques [force, torque] (joint frame)."""
        tau = np.zeros(6 * self.n)
        if springs is None:
            return tau
        for k, b in enumerate(self.kane.bodies):
            if b.parent == 0 and not springs.ground:
                continue
            iq, iv = self.iq[k], self.iv[k]
            Crel = self._crel(q, k)
            s = q[iq : iq + 3]
            tau[iv : iv + 3] = Crel.T @ (-springs.stiffness * s) - springs.damping * v[iv : iv + 3]
            phi = pin.log3(Crel)
            tau[iv + 3 : iv + 6] = (
                -springs.rot_stiffness * phi - springs.rot_damping * v[iv + 3 : iv + 6]
            )
        return tau

    def fext(self, q: np.ndarray, F: np.ndarray, M: np.ndarray) -> list:
        """Forces at G_K (R components) and moments (body) -> pin forces at O_K, joint frame."""
        pin.forwardKinematics(self.model, self.data, q)
        out = [pin.Force.Zero() for _ in range(self.model.njoints)]
        for k, b in enumerate(self.kane.bodies):
            C = self.data.oMi[int(self.jid[k])].rotation
            f = C.T @ F[k]
            out[int(self.jid[k])] = pin.Force(f, M[k] + np.cross(b.com, f))
        return out

    def aba(self, q, v, tau, fext=None) -> np.ndarray:
        if fext is None:
            return pin.aba(self.model, self.data, q, v, tau)
        return pin.aba(self.model, self.data, q, v, tau, fext)

    def ode(self, springs: JointSpringDamper6 | None):
        n = self.n

        def f(t, w):
            q = w[: 7 * n].copy()
            v = w[7 * n :]
            dq = np.empty(7 * n)
            for k in range(n):
                iq, iv = self.iq[k], self.iv[k]
                quat = w[iq + 3 : iq + 7]
                q[iq + 3 : iq + 7] = quat / math.sqrt(float(quat @ quat))
                dq[iq : iq + 3] = self._crel(q, k) @ v[iv : iv + 3]
                x, y, zq, ww = quat
                qd = quaternion_rate([ww, x, y, zq], v[iv + 3 : iv + 6])
                dq[iq + 3 : iq + 7] = qd[[1, 2, 3, 0]]
            a = self.aba(q, v, self.joint_torques(q, v, springs))
            return np.concatenate([dq, a])

        return f

    def poses(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mass-centre positions (N, 3) and DCMs P_{K/R} (N, 3, 3) from Pinocchio's kinematics."""
        q = q.copy()
        for k in range(self.n):
            iq = self.iq[k]
            q[iq + 3 : iq + 7] /= np.linalg.norm(q[iq + 3 : iq + 7])
        pin.forwardKinematics(self.model, self.data, q)
        oM = [self.data.oMi[int(j)] for j in self.jid]
        pG = np.array([oM[k].act(np.array(b.com)) for k, b in enumerate(self.kane.bodies)])
        C = np.array([oM[k].rotation for k in range(self.n)])
        return pG, C


def rel_err(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def kane_vs_pin_acc(model: KaneModel, z: np.ndarray, springs=None, loads_FM=None) -> float:
    ref = PinTree(model)
    q, v = ref.q_v(z)
    tau = ref.joint_torques(q, v, springs)
    fext = None if loads_FM is None else ref.fext(q, *loads_FM)
    y_pin = ref.ydot(z, ref.aba(q, v, tau, fext))
    n = model.n
    y_kane = generalized_accelerations(model, z[: 7 * n], z[7 * n :])
    return rel_err(y_kane, y_pin)


# ----------------------------------------------------------------------------------------------
# model, numbering and conventions
# ----------------------------------------------------------------------------------------------


def test_eight_body_connection_and_depth():
    model = eight_body_example()
    assert model.connection == EIGHT_BODY_CONNECTION == (0, 1, 2, 1, 2, 1, 1, 7)
    assert model.depth == (0, 1, 2, 1, 2, 1, 1, 2)  # the seed's u_K
    assert model.n_coordinates == 56 and model.n_speeds == 48


def test_euler_parameter_conventions():
    """ε = [x, y, z, w] of the project's quaternion; [R_K]^T = P_{K/R}; eq. (5)/(39) rates."""
    rng = np.random.default_rng(1)
    model = kane_model([0], [1.0], [np.eye(3)])
    quat = Rotation.random(random_state=rng).as_quat()[[3, 0, 1, 2]]  # [w, x, y, z]
    z = pack_state(model, [quat])
    np.testing.assert_allclose(z[:4], quat[[1, 2, 3, 0]])
    C = Rotation.from_quat(quat[[1, 2, 3, 0]]).as_matrix()
    np.testing.assert_allclose(dcm_from_euler_parameters(z[:4]), C, atol=1e-15)
    w = rng.normal(size=3)
    eps_dot = kinematic_rates(model, z[:7], np.concatenate([w, np.zeros(3)]))[:4]
    np.testing.assert_allclose(eps_dot, quaternion_rate(quat, w)[[1, 2, 3, 0]], atol=1e-15)
    st = unpack_state(model, z)
    np.testing.assert_allclose(st.quaternion[0], quat)


def test_partial_velocities_recursion_is_consistent():
    """[v_GK,y]{y} = v_GK (eqs. 17, 21); [v̇_GK,y] and [v̇_OK,y] (eqs. 27-28) are the time
    derivatives of eqs. (21) and (18) along the motion (central differences)."""
    model = random_model(5, n=7, gravity=np.zeros(3))
    rng = np.random.default_rng(5)
    z = random_state(model, rng)
    n = model.n
    x, y = z[: 7 * n], z[7 * n :]
    kin = kinematics(model, x, y)
    np.testing.assert_allclose(np.einsum("kin,n->ki", kin.VG, y), kin.v_G, atol=1e-13)
    np.testing.assert_allclose(np.einsum("kin,n->ki", kin.VO, y), kin.v_O, atol=1e-13)
    xd = kinematic_rates(model, x, y)
    h = 1e-6
    kp = kinematics(model, x + h * xd, y)
    km = kinematics(model, x - h * xd, y)
    np.testing.assert_allclose((kp.VG - km.VG) / (2 * h), kin.VGdot, atol=1e-8)
    np.testing.assert_allclose((kp.VO - km.VO) / (2 * h), kin.VOdot, atol=1e-8)
    np.testing.assert_allclose((kp.p_G - km.p_G) / (2 * h), kin.v_G, atol=1e-8)


# ----------------------------------------------------------------------------------------------
# accelerations against Pinocchio
# ----------------------------------------------------------------------------------------------


def test_eight_body_accelerations_match_pinocchio():
    springs = JointSpringDamper6(200.0, 3.0, 2.0, 0.1)
    model = eight_body_example(G, springs)
    rng = np.random.default_rng(8)
    states = [eight_body_initial_state(model)] + [random_state(model, rng) for _ in range(6)]
    worst = max(kane_vs_pin_acc(model, z, springs) for z in states)
    assert worst < ACC_RTOL, worst


def test_eight_body_mass_matrix_is_pinocchio_crba():
    """[A] (eq. 35) = T^T M T with v_pin = T y (Kane's speeds mapped to the joint velocities)."""
    model = eight_body_example(G, None)
    ref = PinTree(model)
    z = random_state(model, np.random.default_rng(9))
    q, _ = ref.q_v(z)
    M = pin.crba(ref.model, ref.data, q)
    M = np.triu(M) + np.triu(M, 1).T
    T = ref.speed_map(z)
    A, _, _ = mass_matrix_and_forcing(model, z[:56], z[56:])
    assert rel_err(A, T.T @ M @ T) < 1e-12


@pytest.mark.parametrize("seed", range(12))
def test_random_tree_accelerations_match_pinocchio(seed):
    model = random_model(100 + seed)
    rng = np.random.default_rng(seed)
    worst = max(kane_vs_pin_acc(model, random_state(model, rng, 2.0)) for _ in range(3))
    assert worst < ACC_RTOL, f"seed {seed}, L = {model.connection}: {worst:.3g}"


def test_random_tree_with_loads_matches_pinocchio():
    """Generalised active forces (eq. 29): arbitrary forces at G_K and body moments, plus
    damped 6-dof springs tied to the ground, against Pinocchio's fext and joint torques."""
    rng = np.random.default_rng(77)
    n = 9
    F = rng.normal(size=(n, 3)) * 5.0
    M = rng.normal(size=(n, 3))
    springs = JointSpringDamper6(50.0, 2.0, 4.0, 0.3, ground=True)

    def loads(t, kin):
        Fs, Ms = springs(t, kin)
        return F + Fs, M + Ms

    model = random_model(31, n=n, loads=loads)
    for _ in range(3):
        z = random_state(model, rng)
        assert kane_vs_pin_acc(model, z, springs, (F, M)) < ACC_RTOL


# ----------------------------------------------------------------------------------------------
# trajectories against Pinocchio
# ----------------------------------------------------------------------------------------------


def compare_trajectories(model: KaneModel, z0: np.ndarray, springs, t_final: float) -> float:
    t_eval = np.linspace(0.0, t_final, 11)
    sol_k = simulate(model, z0, t_final, t_eval, rtol=1e-10, atol=1e-12)
    ref = PinTree(model)
    q0, v0 = ref.q_v(z0)
    sol_p = solve_ivp(
        ref.ode(springs),
        (0.0, t_final),
        np.concatenate([q0, v0]),
        method="DOP853",
        t_eval=t_eval,
        rtol=1e-10,
        atol=1e-12,
    )
    assert sol_p.success
    n = model.n
    worst = 0.0
    for i in range(t_eval.size):
        kin = kinematics(model, sol_k.y[: 7 * n, i], sol_k.y[7 * n :, i])
        pG, C = ref.poses(sol_p.y[: 7 * n, i])
        worst = max(worst, float(np.max(np.abs(kin.p_G - pG))), float(np.max(np.abs(kin.dcm - C))))
    return worst


def test_eight_body_trajectory_matches_pinocchio():
    springs = JointSpringDamper6(200.0, 1.0, 2.0, 0.05)
    model = eight_body_example(G, springs)
    err = compare_trajectories(model, eight_body_initial_state(model), springs, 2.0)
    assert err < TRAJ_TOL, err


def test_random_tree_trajectory_matches_pinocchio():
    springs = JointSpringDamper6(30.0, 0.5, 3.0, 0.1, ground=True)
    model = random_model(2024, n=6, loads=springs)  # L = (0, 1, 1, 1, 1, 0)
    z0 = random_state(model, np.random.default_rng(4), 0.5)
    err = compare_trajectories(model, z0, springs, 2.0)
    assert err < TRAJ_TOL, err


# ----------------------------------------------------------------------------------------------
# TITOP FreeBody blocks (each body free relative to its lower body) against Kane
# ----------------------------------------------------------------------------------------------

FreeBody = getattr(titopfmu, "FreeBody", None)
needs_free_body = pytest.mark.skipif(FreeBody is None, reason="titopfmu.FreeBody not available")


class TitopTree:
    """The same tree as TITOP blocks: a Ground with one port per body with L(K) = 0 (at q_K),
    every body a FreeBody (P = O_K, children at q of its upper bodies, P_a0b = 1). A FreeBody's
    state [OP (R_b), quaternion [w, x, y, z] of P_{a/b}, v_r, ω_r (R_a)] is the free-flyer
    configuration and velocity of :class:`PinTree`, so the conversions are shared."""

    def __init__(self, model: KaneModel, springs: JointSpringDamper6 | None = None) -> None:
        self.kane = model
        self.pin = PinTree(model)
        names = [b.name for b in model.bodies]
        ports: dict[int, dict[str, np.ndarray]] = {K: {} for K in range(model.n + 1)}
        for k, b in enumerate(model.bodies):
            ports[b.parent][f"c{k + 1}"] = np.array(b.joint_point)
        s = titopfmu.System()
        s.add(titopfmu.Ground("ground", children=ports[0]))
        for k, b in enumerate(model.bodies):
            s.add(
                FreeBody(
                    b.name,
                    b.mass,
                    np.array(b.inertia),
                    com=np.array(b.com),
                    children=ports[k + 1] or None,
                    gravity=np.array(model.gravity),
                )
            )
            parent = "ground" if b.parent == 0 else names[b.parent - 1]
            s.connect(f"{parent}.c{k + 1}", f"{b.name}.P")
            tied = springs is not None and (b.parent > 0 or springs.ground)
            if tied:
                s.add(
                    titopfmu.Function(
                        f"spring{k + 1}",
                        self._spring(springs),
                        inputs={"m": 18},
                        outputs={"tau": 6},
                    )
                )
                s.connect(f"{b.name}.joint.m", f"spring{k + 1}.m")
                s.connect(f"spring{k + 1}.tau", f"{b.name}.joint.tau")
            else:
                s.add(titopfmu.Constant(f"zero{k + 1}", np.zeros(6)))
                s.connect(f"zero{k + 1}.y", f"{b.name}.joint.tau")
        self.engine = titopfmu.Engine(s)
        self.slices = [self.engine.plan.state_slices[n] for n in names]
        self.names = names

    @staticmethod
    def _spring(sp: JointSpringDamper6):
        def law(t, inputs):
            m = inputs["m"]  # [v̇_r, ω̇_r, v_r, ω_r (R_a), OP (R_b), Euler angles of P_{a/b}]
            C = dcm_from_euler(m[15:18])
            phi = Rotation.from_matrix(C).as_rotvec()
            f = C.T @ (-sp.stiffness * m[12:15]) - sp.damping * m[6:9]
            return {"tau": np.concatenate([f, -sp.rot_stiffness * phi - sp.rot_damping * m[9:12]])}

        return law

    def state(self, z: np.ndarray) -> np.ndarray:
        q, v = self.pin.q_v(z)
        x = np.zeros(self.engine.n_states)
        for k, sl in enumerate(self.slices):
            iq, iv = self.pin.iq[k], self.pin.iv[k]
            quat = q[iq + 3 : iq + 7]
            x[sl] = np.concatenate([q[iq : iq + 3], quat[[3, 0, 1, 2]], v[iv : iv + 6]])
        return x

    def pin_q(self, x: np.ndarray) -> np.ndarray:
        q = np.empty(7 * self.kane.n)
        for k, sl in enumerate(self.slices):
            iq, xs = self.pin.iq[k], x[sl]
            q[iq : iq + 3] = xs[0:3]
            q[iq + 3 : iq + 7] = xs[[4, 5, 6, 3]]
        return q

    def ydot(self, z: np.ndarray, t: float = 0.0) -> np.ndarray:
        ev = self.engine.evaluate(t, self.state(z))
        a = np.empty(6 * self.kane.n)
        for k, name in enumerate(self.names):
            iv = self.pin.iv[k]
            a[iv : iv + 6] = self.engine.signal(ev, f"{name}.joint.m")[0:6]
        return self.pin.ydot(z, a)


@needs_free_body
def test_titop_free_bodies_match_kane_accelerations():
    springs = JointSpringDamper6(200.0, 3.0, 2.0, 0.1)
    model = eight_body_example(G, springs)
    tt = TitopTree(model, springs)
    rng = np.random.default_rng(21)
    n = model.n
    states = [eight_body_initial_state(model)] + [random_state(model, rng) for _ in range(4)]
    worst = 0.0
    for z in states:
        y_kane = generalized_accelerations(model, z[: 7 * n], z[7 * n :])
        worst = max(worst, rel_err(tt.ydot(z), y_kane))
    for seed in range(4):
        m = random_model(300 + seed)
        tr = TitopTree(m)
        z = random_state(m, rng)
        y_kane = generalized_accelerations(m, z[: 7 * m.n], z[7 * m.n :])
        worst = max(worst, rel_err(tr.ydot(z), y_kane))
    assert worst < ACC_RTOL, worst


@needs_free_body
def test_titop_free_bodies_match_kane_trajectory():
    """The eight-body example with its 6-dof springs (joint.tau from joint.m) and gravity."""
    springs = JointSpringDamper6(200.0, 1.0, 2.0, 0.05)
    model = eight_body_example(G, springs)
    tt = TitopTree(model, springs)
    z0 = eight_body_initial_state(model)
    t_final = 1.0
    t_eval = np.linspace(0.0, t_final, 6)
    sol_k = simulate(model, z0, t_final, t_eval)
    sol_t = solve_ivp(
        tt.engine.derivative,
        (0.0, t_final),
        tt.state(z0),
        method="DOP853",
        t_eval=t_eval,
        rtol=1e-9,
        atol=1e-11,
    )
    assert sol_t.success
    n = model.n
    worst = 0.0
    for i in range(t_eval.size):
        kin = kinematics(model, sol_k.y[: 7 * n, i], sol_k.y[7 * n :, i])
        pG, C = tt.pin.poses(tt.pin_q(sol_t.y[:, i]))
        worst = max(worst, float(np.max(np.abs(kin.p_G - pG))), float(np.max(np.abs(kin.dcm - C))))
    assert worst < TRAJ_TOL, worst


# ----------------------------------------------------------------------------------------------
# invariants
# ----------------------------------------------------------------------------------------------


def test_eight_body_conserves_energy_and_momenta_in_free_flight():
    """No gravity, undamped springs between bodies only: T + V, p and H_O are constant."""
    model = eight_body_example((0.0, 0.0, 0.0))
    springs = model.loads
    z0 = eight_body_initial_state(model)
    sol = simulate(model, z0, 2.0, [0.0, 1.0, 2.0], rtol=1e-9, atol=1e-11)
    e = [kinetic_energy(model, z) + springs.energy(model, z) for z in sol.y.T]
    p = [linear_momentum(model, z) for z in sol.y.T]
    h = [angular_momentum(model, z) for z in sol.y.T]
    assert abs(e[-1] - e[0]) < 1e-8 * abs(e[0])
    assert np.max(np.abs(np.array(p) - p[0])) < 1e-9 * max(1.0, np.linalg.norm(p[0]))
    assert np.max(np.abs(np.array(h) - h[0])) < 1e-9 * max(1.0, np.linalg.norm(h[0]))
    assert springs.energy(model, z0) > 0.0 and kinetic_energy(model, z0) > 0.0


def test_total_energy_with_gravity_and_dissipation():
    """With gravity T + V_spring + V_gravity is constant; with damping it only decreases."""
    rng = np.random.default_rng(12)
    springs = JointSpringDamper6(30.0, 0.0, 3.0, 0.0, ground=True)
    model = random_model(12, n=5, loads=springs)
    z0 = random_state(model, rng, 0.5)

    def total(m, sp, z):
        return kinetic_energy(m, z) + sp.energy(m, z) + gravity_potential_energy(m, z)

    sol = simulate(model, z0, 2.0, [0.0, 2.0])
    e0, e1 = (total(model, springs, z) for z in sol.y.T)
    assert abs(e1 - e0) < 1e-8 * max(1.0, abs(e0))

    damped = JointSpringDamper6(30.0, 2.0, 3.0, 0.2, ground=True)
    model_d = KaneModel(model.bodies, model.gravity, damped)
    sol = simulate(model_d, z0, 1.0, np.linspace(0.0, 1.0, 6), rtol=1e-9, atol=1e-11)
    e = np.array([total(model_d, damped, z) for z in sol.y.T])
    assert np.all(np.diff(e) < 0.0)


# ----------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------


def _inertias(n):
    return [np.eye(3)] * n


@pytest.mark.parametrize(
    ("connection", "body", "fragment"),
    [
        ([0, 2, 1], "body2", "L(2) = 2"),  # own index
        ([0, 1, 3], "body3", "L(3) = 3"),
        ([0, 3, 1], "body2", "L(2) = 3"),  # higher-numbered lower body
        ([1, 0], "body1", "L(1) = 1"),  # body 1 must hang from the inertial frame
        ([0, -1], "body2", "L(2) = -1"),
        ([0, 7], "body2", "no such body"),
    ],
)
def test_connection_array_must_be_a_tree(connection, body, fragment):
    with pytest.raises(ParameterError, match=re.escape(fragment)) as info:
        kane_model(connection, [1.0] * len(connection), _inertias(len(connection)))
    assert info.value.block == body and info.value.parameter == "parent"


def test_bad_parameters_name_body_and_parameter():
    cases = [
        (dict(mass=[1.0, -2.0]), "body2", "mass"),
        (dict(mass=[1.0, float("nan")]), "body2", "mass"),
        (dict(inertia=[np.eye(3), np.diag([1.0, 1.0, 0.0])]), "body2", "inertia"),  # singular
        (dict(inertia=[np.diag([1.0, -1.0, 1.0]), np.eye(3)]), "body1", "inertia"),  # indefinite
        (dict(inertia=[np.eye(3), [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]]), "body2", "inertia"),
        (dict(inertia=[np.eye(3), np.eye(2)]), "body2", "inertia"),
        (dict(joint_points=[[0, 0, 0], [1, 2]]), "body2", "joint_point"),
        (dict(coms=[[0, 0, 0], [1, 2, np.inf]]), "body2", "com"),
        (dict(mass=[1.0]), "kane", "mass"),  # wrong count
        (dict(gravity=[0, 0]), "kane", "gravity"),
    ]
    for overrides, body, parameter in cases:
        kw = dict(connection=[0, 1], mass=[1.0, 2.0], inertia=_inertias(2))
        kw.update(overrides)
        with pytest.raises(ParameterError) as info:
            kane_model(**kw)
        assert (info.value.block, info.value.parameter) == (body, parameter), overrides
    with pytest.raises(ParameterError, match="parent"):
        KaneModel((KaneBody(parent=0.5, mass=1.0, inertia=np.eye(3)),))
    with pytest.raises(ParameterError, match="loads"):
        kane_model([0], [1.0], _inertias(1), loads=3.0)
    with pytest.raises(ParameterError, match="'arm'"):
        kane_model([0, 1], [1.0, 0.0], _inertias(2), names=["base", "arm"])


def test_triangle_inequality_is_only_a_warning():
    with pytest.warns(InertiaWarning):
        kane_model([0], [1.0], [np.diag([1.0, 1.0, 3.0])])


def test_bad_states_and_loads_are_rejected():
    model = kane_model([0, 1], [1.0, 2.0], _inertias(2))
    z = pack_state(model)
    with pytest.raises(KaneStateError, match="26"):
        rhs(model)(0.0, z[:-1])
    bad = z.copy()
    bad[0:4] = 0.0
    with pytest.raises(KaneStateError, match="body1"):
        generalized_accelerations(model, bad[:14], bad[14:])
    bad = z.copy()
    bad[20] = np.nan
    with pytest.raises(KaneStateError, match="non-finite"):
        simulate(model, bad, 1.0)
    with pytest.raises(KaneStateError, match="quaternion"):
        pack_state(model, np.zeros((2, 4)))
    wrong = KaneModel(model.bodies, model.gravity, lambda t, kin: (np.zeros((1, 3)), np.zeros(3)))
    with pytest.raises(TitopError, match="shape"):
        generalized_accelerations(wrong, z[:14], z[14:])


def test_no_inertia_warning_in_examples():
    with warnings.catch_warnings():
        warnings.simplefilter("error", InertiaWarning)
        eight_body_example()
