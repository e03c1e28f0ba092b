"""The seed-001 DeNOC / seven-point-mass reference (titopfmu.reference.denoc).

Checks: the paper's point masses; exact reproduction of mass, first and second moments; the terms
of eq. (35) and the generalized accelerations against Pinocchio (model built here from the DeNOC
parameters: JointModelSpherical / JointModelR{X,Y,Z} / JointModelRevoluteUnaligned in a chain);
trajectories against Pinocchio; conservation of energy and of the vertical angular momentum of the
pendulum; the ZYZ helpers (eqs. 36, 38); bad input.
"""

from __future__ import annotations

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

from scipy.spatial.transform import Rotation  # noqa: E402

from titopfmu.reference.denoc import (  # noqa: E402
    EQUIMOMENTAL_MATRIX,
    PENDULUM_CASES,
    DenocBody,
    DenocError,
    DenocModel,
    PendulumParameters,
    pendulum_initial_state,
    second_moment,
    seven_point_masses,
    spherical_pendulum,
    state_from_zyz,
    zyz_matrix,
    zyz_rate_matrix,
)

ACC_RTOL = 1e-9
TRAJ_TOL = 1e-6
MOMENT_TOL = 1e-12
PAPER_MASSES = [0.628, -0.543, 1.171, 0.0, 1.171, -0.543, 0.628]  # kg, seed 001 sec. V
CHAIN_SEEDS = list(range(12))


# ----------------------------------------------------------------------------------------------
# helpers: random chains, the Pinocchio twin, states
# ----------------------------------------------------------------------------------------------


def random_inertia(rng: np.random.Generator, mass: float) -> np.ndarray:
    """A physical inertia about the COM: I = tr(S) 1 - S for random principal second moments S."""
    s = rng.uniform(0.002, 0.05, 3) * mass
    R = Rotation.random(random_state=rng).as_matrix()
    return R @ np.diag([s[1] + s[2], s[0] + s[2], s[0] + s[1]]) @ R.T


def random_chain(seed: int) -> DenocModel:
    """1-6 bodies, random revolute (coordinate or oblique axis) / spherical joints, joint frames,
    offsets, COMs and inertias; some (revolute) bodies are point masses, some have an explicit
    link vector (point-mass centre)."""
    rng = np.random.default_rng(seed)
    n = 1 + seed % 6
    bodies = []
    for i in range(n):
        mass = float(rng.uniform(0.3, 3.0))
        joint = "spherical" if rng.random() < 0.4 else "revolute"
        # point masses only on revolute joints (on a ball joint the GIM would be singular)
        point = joint == "revolute" and rng.random() < 0.25
        inertia = np.zeros((3, 3)) if point else random_inertia(rng, mass)
        axis = None
        if joint == "revolute":
            axis = np.eye(3)[rng.integers(3)] if rng.random() < 0.5 else rng.normal(size=3)
        bodies.append(
            DenocBody(
                name=f"b{i}",
                mass=mass,
                inertia=inertia,
                com=rng.uniform(-0.4, 0.4, 3),
                joint=joint,
                axis=axis,
                parent=None if i == 0 else f"b{i - 1}",
                joint_position=rng.uniform(-0.5, 0.5, 3),
                joint_rotation=(
                    Rotation.random(random_state=rng).as_matrix() if rng.random() < 0.7 else None
                ),
                link=rng.uniform(-0.5, 0.5, 3) if rng.random() < 0.3 else None,
            )
        )
    rng.shuffle(bodies)  # the model orders the chain itself
    return DenocModel(bodies, gravity=rng.normal(size=3) * 4.0)


def pinocchio_twin(model: DenocModel):
    """The same chain as a Pinocchio model (joint frame = B_i, inertia at the COM in B_i)."""
    pm = pin.Model()
    pm.gravity = pin.Motion(np.array(model.gravity), np.zeros(3))
    parent = 0
    for b in model.bodies:
        if b.joint == "spherical":
            jm = pin.JointModelSpherical()
        elif np.count_nonzero(b.axis) == 1 and b.axis.max() == 1.0:
            jm = (pin.JointModelRX, pin.JointModelRY, pin.JointModelRZ)[int(np.argmax(b.axis))]()
        else:
            jm = pin.JointModelRevoluteUnaligned(np.array(b.axis))
        placement = pin.SE3(np.array(b.joint_rotation), np.array(b.joint_position))
        parent = pm.addJoint(parent, jm, placement, b.name)
        pm.appendBodyToJoint(
            parent, pin.Inertia(b.mass, np.array(b.com), np.array(b.inertia)), pin.SE3.Identity()
        )
    assert pm.nq == model.nq and pm.nv == model.nv
    return pm, pm.createData()


def to_pin_q(model: DenocModel, q: np.ndarray) -> np.ndarray:
    """DeNOC q (quaternions [w, x, y, z]) -> Pinocchio q (quaternions [x, y, z, w])."""
    out = np.array(q, dtype=float)
    for b in model.bodies:
        if b.joint == "spherical":
            sl = model.q_slice(b.name)
            quat = q[sl] / np.linalg.norm(q[sl])
            out[sl] = quat[[1, 2, 3, 0]]
    return out


def from_pin_q(model: DenocModel, q: np.ndarray) -> np.ndarray:
    out = np.array(q, dtype=float)
    for b in model.bodies:
        if b.joint == "spherical":
            sl = model.q_slice(b.name)
            quat = q[sl] / np.linalg.norm(q[sl])
            out[sl] = quat[[3, 0, 1, 2]]
    return out


def random_state(model: DenocModel, rng: np.random.Generator, speed: float = 1.5):
    q = np.empty(model.nq)
    for b in model.bodies:
        sl = model.q_slice(b.name)
        if b.joint == "spherical":
            x, y, z, w = Rotation.random(random_state=rng).as_quat()
            q[sl] = [w, x, y, z]
        else:
            q[sl] = rng.uniform(-np.pi, np.pi)
    return q, rng.normal(size=model.nv) * speed


def pinocchio_rhs(model: DenocModel, pm, data, efforts: np.ndarray | None = None):
    """ODE rhs on y = [q_pin, v]: Pinocchio's ABA, quaternions [x, y, z, w] integrated with
    q̇ = ½ q ⊗ [ω, 0] plus the same norm-restoring term as the DeNOC solver."""
    tau = np.zeros(model.nv) if efforts is None else efforts
    sph = [(model.q_slice(b.name), model.v_slice(b.name)) for b in model.bodies]
    kinds = [b.joint for b in model.bodies]

    def rhs(t, y):
        q = y[: model.nq].copy()
        v = y[model.nq :]
        qd = np.empty(model.nq)
        for (sq, sv), kind in zip(sph, kinds, strict=True):
            if kind == "spherical":
                raw = y[sq]
                n2 = float(raw @ raw)
                x, yq, z, w = raw / np.sqrt(n2)
                q[sq] = [x, yq, z, w]
                p, r, s = v[sv]
                qd[sq] = 0.5 * np.array(
                    [w * p + yq * s - z * r, w * r + z * p - x * s, w * s + x * r - yq * p,
                     -x * p - yq * r - z * s]
                ) + (1.0 - n2) * raw  # fmt: skip
            else:
                qd[sq] = v[sv]
        return np.concatenate([qd, pin.aba(pm, data, q, v, tau)])

    return rhs


def assert_rel_close(actual, expected, rtol: float, what: str) -> None:
    scale = max(1.0, float(np.linalg.norm(expected)))
    err = float(np.max(np.abs(np.asarray(actual) - np.asarray(expected))))
    assert err <= rtol * scale, (
        f"{what}: max |denoc - pinocchio| = {err:.3g} > {rtol:g} * {scale:.3g}\n"
        f"denoc     {np.array2string(np.asarray(actual), precision=12)}\n"
        f"pinocchio {np.array2string(np.asarray(expected), precision=12)}"
    )


# ----------------------------------------------------------------------------------------------
# seven point masses (sec. II, eqs. 1-13; sec. V)
# ----------------------------------------------------------------------------------------------


def test_paper_point_masses():
    p = PendulumParameters()
    pm = p.point_masses()
    # the paper prints three decimals (truncated: -0.54386 -> -0.543, 1.17186 -> 1.171)
    assert np.all(np.abs(pm.masses - PAPER_MASSES) < 1e-3), pm.masses
    assert np.array_equal(np.trunc(np.round(pm.masses, 9) * 1000.0) / 1000.0, PAPER_MASSES)
    # closed form: h_x = a/√3, h_y = h_z = d/4, masses m [1/4, -√3/8, 1/4 + √3/8, 0, ...]
    r = np.sqrt(3.0) / 8.0
    exact = p.m * np.array([0.25, -r, 0.25 + r, 0.0, 0.25 + r, -r, 0.25])
    assert np.allclose(pm.masses, exact, rtol=0, atol=1e-12)
    assert np.allclose(pm.half_sides, [p.a / np.sqrt(3.0), p.d / 4, p.d / 4], rtol=0, atol=1e-14)
    # the model's body carries the same masses (centre O_2 = a_1 = [a, 0, 0] in B_1)
    model = spherical_pendulum()
    assert np.allclose(model.point_masses[0].masses, pm.masses, rtol=0, atol=1e-14)
    assert np.allclose(model.point_masses[0].centre, [p.a, 0, 0])


def check_moments(mass, com, inertia, centre, what: str) -> None:
    pm = seven_point_masses(mass, com, inertia, centre, body=what)
    m, first, second = pm.moments()
    target = second_moment(mass, com, inertia)
    scale = mass * max(1.0, float(np.max(np.abs(target))) / mass)
    assert abs(m - mass) <= MOMENT_TOL * mass, what
    assert np.max(np.abs(first - mass * np.asarray(com))) <= MOMENT_TOL * scale, what
    assert np.max(np.abs(second - target)) <= MOMENT_TOL * scale, what
    # and therefore the inertia about the mass centre
    p = pm.positions - np.asarray(com)
    inertia_pts = sum(
        mj * (float(r @ r) * np.eye(3) - np.outer(r, r)) for mj, r in zip(pm.masses, p, strict=True)
    )
    assert np.max(np.abs(inertia_pts - inertia)) <= MOMENT_TOL * scale, what


def test_point_masses_reproduce_moments():
    p = PendulumParameters()
    check_moments(p.m, p.com_from_o2, p.inertia_com, np.zeros(3), "paper pendulum")
    rng = np.random.default_rng(7)
    for k in range(50):
        mass = float(rng.uniform(0.1, 10.0))
        check_moments(
            mass,
            rng.uniform(-1, 1, 3),
            random_inertia(rng, mass),
            rng.uniform(-1, 1, 3),
            f"random body {k}",
        )
    # degenerate but representable: a point mass (points on a line) and a flat plate (h_z = 0)
    check_moments(2.0, [0.5, 0.0, 0.0], np.zeros((3, 3)), np.zeros(3), "point mass")
    check_moments(2.0, [0.0, 0.0, 0.0], np.zeros((3, 3)), np.zeros(3), "point mass at centre")
    plate = np.diag([0.1, 0.3, 0.4])  # I_zz = I_xx + I_yy: a flat body in z = 0
    check_moments(1.5, [0.2, -0.1, 0.0], plate, [0.0, 0.0, 0.0], "plate")
    pm = seven_point_masses(1.5, [0.2, -0.1, 0.0], plate)
    assert pm.half_sides[2] == 0.0


def test_equimomental_matrix_is_invertible():
    # eqs. (1)-(7) have a unique solution whenever h > 0: the 7x7 sign matrix is regular
    assert abs(np.linalg.det(EQUIMOMENTAL_MATRIX)) > 1.0
    assert np.linalg.cond(EQUIMOMENTAL_MATRIX) < 3.0


# ----------------------------------------------------------------------------------------------
# ZYZ helpers (eqs. 36, 38)
# ----------------------------------------------------------------------------------------------


def test_zyz_helpers():
    rng = np.random.default_rng(3)
    for _ in range(5):
        phi, th, psi = rng.uniform(-3, 3, 3)
        Q = zyz_matrix(phi, th, psi)
        assert np.allclose(Q, Rotation.from_euler("ZYZ", [phi, th, psi]).as_matrix(), atol=1e-14)
        rates = rng.normal(size=3)
        eps = 1e-6
        Qd = (
            zyz_matrix(*(np.array([phi, th, psi]) + eps * rates))
            - zyz_matrix(*(np.array([phi, th, psi]) - eps * rates))
        ) / (2 * eps)
        W = Qd @ Q.T
        omega = np.array([W[2, 1], W[0, 2], W[1, 0]])
        assert np.allclose(zyz_rate_matrix(phi, th) @ rates, omega, atol=1e-8)
        quat, u = state_from_zyz([phi, th, psi], rates)
        model = spherical_pendulum()
        Qm, _ = model.body_poses(quat)
        assert np.allclose(Qm[0], Q, atol=1e-14)
        assert np.allclose(Q @ u, omega, atol=1e-8)


def test_pendulum_initial_states():
    model = spherical_pendulum()
    q, u = pendulum_initial_state("planar")
    Q, _ = model.body_poses(q)
    assert np.allclose(Q[0] @ [1, 0, 0], [-1, 0, 0], atol=1e-15)  # rod horizontal along -X_0
    assert np.all(u == 0.0)
    q, u = pendulum_initial_state("spatial", zyz_rates=[1, 1, 1])
    assert np.linalg.norm(u) > 1.0
    assert set(PENDULUM_CASES) == {"planar", "spatial"}


# ----------------------------------------------------------------------------------------------
# eq. (35) and accelerations vs Pinocchio
# ----------------------------------------------------------------------------------------------


def check_against_pinocchio(model: DenocModel, q, u, tau, what: str) -> None:
    pm, data = pinocchio_twin(model)
    qp = to_pin_q(model, q)
    T = model.terms(q, u)
    M = pin.crba(pm, data, qp)
    M = np.triu(M) + np.triu(M, 1).T
    assert_rel_close(T.gim, M, ACC_RTOL, f"{what}: generalized inertia matrix")
    g = pin.computeGeneralizedGravity(pm, data, qp)
    assert_rel_close(T.gravity, -g, ACC_RTOL, f"{what}: gravity forces")
    cu = pin.rnea(pm, data, qp, u, np.zeros(model.nv)) - g
    assert_rel_close(T.convective, cu, ACC_RTOL, f"{what}: convective terms C u")
    assert_rel_close(
        model.accelerations(q, u, efforts=tau),
        pin.aba(pm, data, qp, u, tau),
        ACC_RTOL,
        f"{what}: accelerations",
    )


@pytest.mark.parametrize("case", sorted(PENDULUM_CASES))
def test_pendulum_against_pinocchio(case):
    model = spherical_pendulum()
    rng = np.random.default_rng(11)
    q0, u0 = pendulum_initial_state(case)
    check_against_pinocchio(model, q0, u0, np.zeros(3), f"pendulum {case} at rest")
    q0, u0 = pendulum_initial_state(case, zyz_rates=[1.0, 1.0, 1.0])
    check_against_pinocchio(model, q0, u0, np.zeros(3), f"pendulum {case} spinning")
    for i in range(5):
        q, u = random_state(model, rng, speed=3.0)
        check_against_pinocchio(model, q, u, rng.normal(size=3), f"pendulum random state {i}")


@pytest.mark.parametrize("seed", CHAIN_SEEDS)
def test_random_chain_against_pinocchio(seed):
    model = random_chain(seed)
    rng = np.random.default_rng(100 + seed)
    for i in range(3):
        q, u = random_state(model, rng)
        tau = rng.normal(size=model.nv)
        check_against_pinocchio(model, q, u, tau, f"chain seed {seed} state {i}")
    # a callable effort law gives the same as its value
    q, u = random_state(model, rng)
    law = lambda t, qq, uu: -0.3 * uu + np.sin(t)  # noqa: E731
    assert np.allclose(
        model.accelerations(q, u, 0.7, law), model.accelerations(q, u, 0.7, law(0.7, q, u))
    )


def test_random_chains_cover_every_case():
    kinds, pin_joints, point_bodies, links = set(), set(), 0, 0
    for seed in CHAIN_SEEDS:
        model = random_chain(seed)
        pm, _ = pinocchio_twin(model)
        kinds |= {b.joint for b in model.bodies}
        pin_joints |= {pm.joints[j].shortname() for j in range(1, pm.njoints)}
        point_bodies += sum(not np.any(b.inertia) for b in model.bodies)
        links += sum(b.link is not None for b in model.bodies)
    assert kinds == {"revolute", "spherical"}
    assert {"JointModelSpherical", "JointModelRevoluteUnaligned"} <= pin_joints
    assert pin_joints & {"JointModelRX", "JointModelRY", "JointModelRZ"}
    assert point_bodies > 0 and links > 0
    assert max(random_chain(s).n_bodies for s in CHAIN_SEEDS) == 6


def test_gim_derivative_matches_convective_matrix():
    """dI/dt = C + C^T along the motion (C = Ñ^T M̃ dÑ/dt), by central differences."""
    model = random_chain(5)
    rng = np.random.default_rng(0)
    q, u = random_state(model, rng)
    C = model.terms(q, u).convective_matrix
    qd = model.coordinate_rates(q, u)
    eps = 1e-6
    dI = (model.gim(q + eps * qd) - model.gim(q - eps * qd)) / (2 * eps)
    assert np.max(np.abs(dI - (C + C.T))) < 1e-7 * max(1.0, np.max(np.abs(dI)))


def test_point_velocities_are_consistent():
    """ṽ = Ñ u (eq. 27) equals the time derivative of the point positions."""
    model = random_chain(4)
    q, u = random_state(model, np.random.default_rng(2))
    v = (model.terms(q, u).N_tilde @ u).reshape(-1, 3)
    qd = model.coordinate_rates(q, u)
    eps = 1e-6
    fd = (model.point_positions(q + eps * qd) - model.point_positions(q - eps * qd)) / (2 * eps)
    assert np.allclose(v, fd, rtol=0, atol=1e-8)
    T = model.terms(q, u)
    assert T.D.shape == (21 * model.n_bodies, 6 * model.n_bodies)
    assert T.N_l.shape == (6 * model.n_bodies, 6 * model.n_bodies)
    assert T.N_d.shape == (6 * model.n_bodies, model.nv)


# ----------------------------------------------------------------------------------------------
# trajectories and invariants
# ----------------------------------------------------------------------------------------------


def compare_trajectory(
    model: DenocModel, q0, u0, t_final: float, what: str, rtol: float = 1e-11
) -> None:
    from scipy.integrate import solve_ivp

    t_eval = np.linspace(0.0, t_final, 31)
    traj = model.simulate(t_final, q0, u0, t_eval=t_eval, rtol=rtol, atol=0.1 * rtol)
    pm, data = pinocchio_twin(model)
    sol = solve_ivp(
        pinocchio_rhs(model, pm, data),
        (0.0, t_final),
        np.concatenate([to_pin_q(model, q0), u0]),
        method="DOP853",
        rtol=rtol,
        atol=0.1 * rtol,
        t_eval=t_eval,
    )
    assert sol.success, sol.message
    q_pin = np.array([from_pin_q(model, qi) for qi in sol.y[: model.nq].T])
    u_pin = sol.y[model.nq :].T
    err_q = np.abs(traj.q - q_pin) / np.maximum(1.0, np.abs(q_pin))
    err_u = np.abs(traj.u - u_pin) / np.maximum(1.0, np.abs(u_pin))
    assert err_q.max() <= TRAJ_TOL, f"{what}: joint coordinates differ by {err_q.max():.3g}"
    assert err_u.max() <= TRAJ_TOL, f"{what}: speeds differ by {err_u.max():.3g}"
    assert np.ptp(traj.q, axis=0).max() > 0.1, f"{what}: nothing moved"


@pytest.mark.parametrize(
    "case, rates", [("planar", None), ("spatial", None), ("spatial", [1.0, 1.0, 1.0])]
)
def test_pendulum_trajectory_against_pinocchio(case, rates):
    model = spherical_pendulum()
    q0, u0 = pendulum_initial_state(case, rates)
    compare_trajectory(model, q0, u0, 3.0, f"pendulum {case} rates={rates}")


@pytest.mark.parametrize("seed", [3, 10])
def test_random_chain_trajectory_against_pinocchio(seed):
    model = random_chain(seed)
    q0, u0 = random_state(model, np.random.default_rng(seed), speed=0.5)
    compare_trajectory(model, q0, u0, 2.0, f"chain seed {seed}", rtol=1e-10)


def test_pendulum_planar_case_stays_planar():
    """90/90/90 deg at rest: the rod swings in the X_0 Z_0 plane (sec. V.D, Fig. 4)."""
    model = spherical_pendulum()
    q0, u0 = pendulum_initial_state("planar")
    traj = model.simulate(2.0, q0, u0, t_eval=np.linspace(0, 2, 21))
    for q, u in zip(traj.q, traj.u, strict=True):
        Q, _ = model.body_poses(q)
        assert abs((Q[0] @ [1.0, 0.0, 0.0])[1]) < 1e-9  # rod direction in the X_0 Z_0 plane
        omega = Q[0] @ u
        assert abs(omega[0]) < 1e-9 and abs(omega[2]) < 1e-9  # rotation about Y_0 only
    assert np.ptp(traj.u) > 1.0


def test_energy_and_angular_momentum_conserved():
    model = spherical_pendulum()
    q0, u0 = pendulum_initial_state("spatial", zyz_rates=[1.0, 1.0, 1.0])
    t_eval = np.linspace(0.0, 10.0, 41)
    traj = model.simulate(10.0, q0, u0, t_eval=t_eval, rtol=1e-12, atol=1e-13)
    p = PendulumParameters()
    scale = p.m * p.g * p.a  # J
    e = np.array([sum(model.energy(q, u)) for q, u in zip(traj.q, traj.u, strict=True)])
    assert np.max(np.abs(e - e[0])) / scale < 1e-9, np.max(np.abs(e - e[0])) / scale
    lz = np.array([model.angular_momentum(q, u)[2] for q, u in zip(traj.q, traj.u, strict=True)])
    assert abs(lz[0]) > 0.1  # a genuinely spatial motion
    assert np.max(np.abs(lz - lz[0])) < 1e-9 * max(1.0, abs(lz[0]))
    # V = -m g·r_G = m g z_G, from the point masses
    Q, _ = model.body_poses(q0)
    z_g = (Q[0] @ [p.a / 2.0, 0.0, 0.0])[2]
    assert model.energy(q0, u0)[1] == pytest.approx(p.m * p.g * z_g, rel=1e-12, abs=1e-12)


def test_random_chain_energy_conserved():
    model = random_chain(9)  # 4 bodies, 10 dof
    q0, u0 = random_state(model, np.random.default_rng(9), speed=1.0)
    traj = model.simulate(2.0, q0, u0, t_eval=np.linspace(0, 2, 9), rtol=1e-10, atol=1e-11)
    e = np.array([sum(model.energy(q, u)) for q, u in zip(traj.q, traj.u, strict=True)])
    scale = max(1.0, max(abs(x) for x in model.energy(q0, u0)))
    assert np.max(np.abs(e - e[0])) / scale < 1e-9


def test_singular_euler_configuration():
    """θ = 0 (ZYZ singular: L of eq. 38b is rank 2) is an ordinary state for the quaternion."""
    model = spherical_pendulum()
    q, _ = state_from_zyz([0.3, 0.0, 0.2])
    assert np.linalg.matrix_rank(zyz_rate_matrix(0.3, 0.0)) == 2
    u = np.array([0.4, -1.2, 2.0])
    check_against_pinocchio(model, q, u, np.zeros(3), "pendulum at θ = 0")


# ----------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------

I3 = np.eye(3) * 0.1


def body(name="a", **kw):
    return DenocBody(name=name, mass=kw.pop("mass", 1.0), inertia=kw.pop("inertia", I3), **kw)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: body(joint="prismatic"), r"body 'a', parameter 'joint': 'prismatic'"),
        (lambda: body(joint="free"), "revolute, spherical"),
        (lambda: body(mass=0.0), r"body 'a', parameter 'mass'"),
        (lambda: body(mass=-1.0), "must be finite and > 0"),
        (lambda: body(mass=float("nan")), "parameter 'mass'"),
        (lambda: body(inertia=[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]), "not symmetric"),
        (lambda: body(inertia=np.eye(2)), "parameter 'inertia'"),
        (lambda: body(com=[0, 0]), "parameter 'com'"),
        (lambda: body(axis=[0, 0, 0]), "parameter 'axis': zero"),
        (lambda: body(joint="spherical", axis=[0, 0, 1]), "spherical joint has no axis"),
        (lambda: body(joint_rotation=2 * np.eye(3)), "not a proper rotation"),
        (lambda: body(joint_rotation=-np.eye(3)), "not a proper rotation"),
        (lambda: body(name=""), "non-empty"),
        (lambda: body(parent="a"), "its own parent"),
        (lambda: body(joint_position=[np.inf, 0, 0]), "not finite"),
    ],
)
def test_bad_body_parameters(make, match):
    with pytest.raises(DenocError, match=match):
        make()


def test_bad_structures():
    with pytest.raises(DenocError, match="at least one body"):
        DenocModel([])
    with pytest.raises(DenocError, match=r"branched tree.*serial chains"):
        DenocModel([body("a"), body("b", parent="a"), body("c", parent="a")])
    with pytest.raises(DenocError, match="fixed base: a branched tree"):
        DenocModel([body("a"), body("b")])
    with pytest.raises(DenocError, match="duplicate body name 'a'"):
        DenocModel([body("a"), body("a")])
    with pytest.raises(DenocError, match=r"body 'b', parameter 'parent': no body named 'x'"):
        DenocModel([body("a"), body("b", parent="x")])
    with pytest.raises(DenocError, match="cycle"):
        DenocModel([body("a", parent="b"), body("b", parent="a")])
    with pytest.raises(DenocError, match="cycle"):
        DenocModel([body("r"), body("a", parent="b"), body("b", parent="a")])
    with pytest.raises(DenocError, match="gravity"):
        DenocModel([body("a")], gravity=[0, 0])


def test_unrepresentable_inertias():
    # triangle inequality violated about the point-mass centre (condition after eq. 13)
    with pytest.raises(DenocError, match=r"body 'bad'.*triangle inequality.*h_z \(eq. 13\)"):
        DenocModel([body("bad", inertia=np.diag([0.1, 0.1, 0.5]))])
    # h_z = 0 at the centre while the mass centre is offset along z: eqs. (2)-(7) cannot hold
    with pytest.raises(DenocError, match=r"body 'flat'.*zero half side.*\['z'\]"):
        seven_point_masses(1.0, [0, 0, 0.5], np.diag([0.1, 0.1, 0.7]), body="flat")
    # the same inertia with the centre at the mass centre violates the triangle inequality
    with pytest.raises(DenocError, match="triangle inequality"):
        seven_point_masses(1.0, [0, 0, 0.5], np.diag([0.1, 0.1, 0.7]), [0, 0, 0.5])
    # negative point masses are legal (the paper's own pendulum has two)
    assert np.min(PendulumParameters().point_masses().masses) < 0


def test_bad_states_and_efforts():
    model = DenocModel([body("a", joint="spherical"), body("b", parent="a", com=[1, 0, 0])])
    assert (model.nq, model.nv) == (5, 4)
    q = model.neutral_configuration()
    u = np.zeros(4)
    with pytest.raises(DenocError, match="expected 5 joint coordinates"):
        model.accelerations(q[:4], u)
    with pytest.raises(DenocError, match="expected 4 generalized speeds"):
        model.accelerations(q, u[:3])
    q_bad = q.copy()
    q_bad[0:4] = 0.0
    with pytest.raises(DenocError, match=r"body 'a': zero quaternion"):
        model.accelerations(q_bad, u)
    with pytest.raises(DenocError, match="joint efforts: expected 4"):
        model.accelerations(q, u, efforts=[1.0, 2.0])
    with pytest.raises(DenocError, match="q: not finite"):
        model.accelerations(np.full(5, np.nan), u)
    with pytest.raises(DenocError, match="unknown pendulum case"):
        pendulum_initial_state("upside-down")
    # a point mass on a ball joint: no inertia about the line joint-mass, the GIM is singular
    point = DenocModel([body("p", joint="spherical", inertia=np.zeros((3, 3)), com=[0, 0, -1])])
    with pytest.raises(DenocError, match=r"singular.*body 'p'"):
        point.accelerations(point.neutral_configuration(), np.zeros(3))
    q, u = random_state(point, np.random.default_rng(0))
    with pytest.raises(DenocError, match=r"singular.*body 'p'"):  # round-off pivot, not exact 0
        point.accelerations(q, u)
    with pytest.raises(AttributeError, match="immutable"):
        model.foo = 1
    with pytest.raises(ValueError):
        model.bodies[0].com[0] = 3.0  # read-only parameters


# ----------------------------------------------------------------------------------------------
# TITOP spherical-joint block vs DeNOC on the seed-001 pendulum
# ----------------------------------------------------------------------------------------------


def titop_pendulum(q0, u0):
    """The seed-001 pendulum with the TITOP blocks: Ground + SphericalBody (skips if absent)."""
    import titopfmu

    if not hasattr(titopfmu, "SphericalBody"):
        pytest.skip("titopfmu.SphericalBody is not available")
    p = PendulumParameters()
    s = titopfmu.System()
    s.add(
        titopfmu.Ground("base", children={"O": [0.0, 0.0, 0.0]}),
        titopfmu.SphericalBody(
            "pendulum",
            p.m,
            p.inertia_com,
            com=[p.a / 2.0, 0.0, 0.0],
            quaternion0=q0,
            omega0=u0,
            gravity=[0.0, 0.0, -p.g],
        ),
        titopfmu.Constant("zero", np.zeros(3)),
    )
    s.connect("base.O", "pendulum.P")
    s.connect("zero.y", "pendulum.joint.tau")
    engine = titopfmu.Engine(s)
    return engine, s.check().state_slices["pendulum"]


@pytest.mark.parametrize(
    "case, rates", [("planar", None), ("spatial", None), ("spatial", [1.0, 1.0, 1.0])]
)
def test_titop_spherical_body_against_denoc(case, rates):
    from titopfmu.spatial.rotations import dcm_from_euler

    model = spherical_pendulum()
    q0, u0 = pendulum_initial_state(case, rates)
    engine, sl = titop_pendulum(q0, u0)
    # accelerations at the initial state and at random states
    rng = np.random.default_rng(5)
    states = [(q0, u0)] + [random_state(model, rng, speed=3.0) for _ in range(4)]
    for i, (q, u) in enumerate(states):
        x = np.array(engine.initial_state())
        x[sl] = np.concatenate([q, u])
        ev = engine.evaluate(0.0, x)
        a_titop = engine.signal(ev, "pendulum.joint.m")[0:3]
        assert_rel_close(a_titop, model.accelerations(q, u), ACC_RTOL, f"TITOP state {i}")
    # trajectories over 3 s
    res = engine.simulate(
        3.0, output_interval=0.1, record=["pendulum.joint.m"], method="DOP853",
        rtol=1e-11, atol=1e-12,
    )  # fmt: skip
    traj = model.simulate(3.0, q0, u0, t_eval=res.time, rtol=1e-11, atol=1e-12)
    omega = np.column_stack([res[f"pendulum.joint.m[{k}]"] for k in (4, 5, 6)])
    euler = np.column_stack([res[f"pendulum.joint.m[{k}]"] for k in (7, 8, 9)])
    assert np.max(np.abs(omega - traj.u)) <= TRAJ_TOL * max(1.0, np.abs(traj.u).max())
    for k, (th, q) in enumerate(zip(euler, traj.q, strict=True)):
        Q, _ = model.body_poses(q)
        err = np.max(np.abs(dcm_from_euler(th) - Q[0]))
        assert err <= TRAJ_TOL, f"attitude at t = {res.time[k]:.2f} s differs by {err:.3g}"
