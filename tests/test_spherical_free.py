"""Spherical (3-dof) and free (6-dof) joint bodies: against Pinocchio, energy, Euler singularity,
inverse dynamics and bad input.

Pinocchio (:mod:`titopfmu.reference.pinocchio_model`, built from the block parameters only) is the
independent reference for accelerations and trajectories; the energy and centre-of-mass checks
come from physics.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from random_trees import random_state, random_tree
from scipy.spatial.transform import Rotation

from titopfmu import (
    AssemblyError,
    Constant,
    Engine,
    FreeBody,
    FreeBodyInverse,
    Function,
    Ground,
    InertiaWarning,
    JointSpringDamper,
    ParameterError,
    RevoluteBody,
    RigidBody,
    SphericalBody,
    SphericalBodyInverse,
    System,
    TitopError,
)
from titopfmu.spatial.rotations import dcm_from_euler, dcm_from_quaternion

ACC_RTOL = 1e-9
TRAJ_TOL = 1e-6
ENERGY_TOL = 1e-8
TREE_SEEDS = list(range(16))
TRAJECTORY_SEEDS = [2, 11]


@pytest.fixture(autouse=True)
def _quiet_inertia_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        yield


def spd(rng: np.random.Generator, scale: float = 1.0) -> np.ndarray:
    """A physical inertia tensor: a random cloud of unit point masses about its centroid."""
    r = rng.normal(size=(8, 3))
    r -= r.mean(axis=0)
    return scale * sum(np.dot(p, p) * np.eye(3) - np.outer(p, p) for p in r)


def titop_accelerations(engine: Engine, ref, x, t: float = 0.0) -> np.ndarray:
    """[root acc (6), u̇ of each joint (nv each)] from the titopfmu engine."""
    ev = engine.evaluate(t, x)
    parts = [engine.signal(ev, f"{ref.root}.acc")]
    parts += [engine.signal(ev, f"{j}.joint.m")[0 : ref.bodies[j].nv] for j in ref.joints]
    return np.concatenate(parts)


def relative_error(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - b))) / max(1.0, float(np.linalg.norm(b)))


def cos_pitch(R: np.ndarray) -> float:
    """cos θ of the 3-2-1 angles of R (zero at the Euler singularity θ = ±90°)."""
    return float(np.hypot(R[0, 0], R[1, 0]))


# ----------------------------------------------------------------------------------------------
# against Pinocchio
# ----------------------------------------------------------------------------------------------


def test_random_multi_dof_trees_cover_both_joints():
    kinds = set()
    for seed in TREE_SEEDS:
        kinds |= set(random_tree(seed, multi_dof=True)[1].kinds.values())
    assert kinds == {"root", "revolute", "prismatic", "welded", "spherical", "free"}


@pytest.mark.parametrize("seed", TREE_SEEDS)
def test_random_tree_accelerations_and_poses(seed):
    pin = pytest.importorskip("pinocchio")  # noqa: F841
    from titopfmu.reference import to_pinocchio

    s, spec = random_tree(seed, multi_dof=True)
    engine = Engine(s)
    ref = to_pinocchio(s)
    rng = np.random.default_rng(2000 + seed)
    for i in range(4):
        x = random_state(engine, rng, speed=2.0)
        t = float(rng.uniform(0, 5))
        a_t = titop_accelerations(engine, ref, x, t)
        a_p = ref.accelerations(x, t)
        err = relative_error(a_t, a_p)
        assert err <= ACC_RTOL, f"tree {spec.describe()} state {i}: relative error {err:.3g}"
        ev = engine.evaluate(t, x)
        q, _ = ref.q_v(x)
        for name in spec.kinds:
            pos, R = ref.block_pose(q, name)
            assert np.allclose(engine.signal(ev, f"{name}.position"), pos, rtol=0, atol=1e-11)
            R_t = dcm_from_euler(engine.signal(ev, f"{name}.euler"))
            assert np.allclose(R_t, R, rtol=0, atol=1e-11), f"attitude of {name}"
        # joint position outputs: q, relative Euler angles, [OP]_{R_b}
        p_t = np.concatenate(
            [engine.signal(ev, f"{j}.joint.m")[2 * ref.bodies[j].nv :] for j in ref.joints]
        )
        assert np.allclose(p_t, ref.joint_coordinates(q), rtol=0, atol=1e-10)


def test_state_conversion_round_trip():
    pytest.importorskip("pinocchio")
    from titopfmu.reference import to_pinocchio

    s, spec = random_tree(4, multi_dof=True)
    assert {"spherical", "free"} <= set(spec.kinds.values())
    engine = Engine(s)
    ref = to_pinocchio(s)
    x = random_state(engine, np.random.default_rng(0))
    q, v = ref.q_v(x)
    assert np.allclose(ref.state(q, v, x), x, rtol=0, atol=1e-14)
    q0, v0 = ref.initial_configuration()
    q1, v1 = ref.q_v(engine.initial_state())
    assert np.allclose(q0, q1, atol=1e-14) and np.allclose(v0, v1, atol=1e-14)


def _pose_columns(engine: Engine, names) -> dict[str, str]:
    cols = {}
    for n in names:
        cols.update({f"{n}.p{i}": f"{n}.position[{i}]" for i in (1, 2, 3)})
        b = engine.system.blocks[n]
        if isinstance(b, (RigidBody, SphericalBody, FreeBody)):
            j = b.state_names.index("qw")
            cols.update({f"{n}.{sn}": f"{n}.state.{sn}" for sn in b.state_names[j : j + 4]})
    return cols


def _compare_trajectories(engine: Engine, ref, res, sol, names, what: str) -> float:
    """Max difference of body positions and relative/root attitudes (as DCMs) along the run."""
    values = res.values
    col = {c: j for j, c in enumerate(res.columns)}
    worst = 0.0
    for k in range(len(res.time)):
        q = sol.y[: ref.nq, k]
        row = values[k]
        for n in names:
            pos, _ = ref.block_pose(q, n)
            p_t = row[[col[f"{n}.p{i}"] for i in (1, 2, 3)]]
            worst = max(worst, float(np.max(np.abs(p_t - pos))) / max(1.0, np.linalg.norm(pos)))
            if isinstance(engine.system.blocks[n], (RigidBody, SphericalBody, FreeBody)):
                quat = row[[col[f"{n}.q{c}"] for c in "wxyz"]]
                info = ref.bodies[n]
                j = info.idx_q + (3 if info.kind in ("root", "free") else 0)
                x, y, z, w = q[j : j + 4]
                R_p = dcm_from_quaternion([w, x, y, z])
                worst = max(worst, float(np.max(np.abs(dcm_from_quaternion(quat) - R_p))))
    assert worst <= TRAJ_TOL, f"{what}: trajectories differ by {worst:.3g}"
    return worst


@pytest.mark.parametrize("seed", TRAJECTORY_SEEDS)
def test_random_tree_trajectory(seed):
    pytest.importorskip("pinocchio")
    from titopfmu.reference import to_pinocchio

    s, spec = random_tree(seed, multi_dof=True)
    assert {"spherical", "free"} & set(spec.kinds.values())
    engine = Engine(s)
    ref = to_pinocchio(s)
    x0 = random_state(engine, np.random.default_rng(seed), speed=1.0, stroke=0.2)
    names = list(spec.kinds)
    res = engine.simulate(
        2.0, output_interval=0.1, record=_pose_columns(engine, names), x0=x0, rtol=1e-11,
        atol=1e-12,
    )  # fmt: skip
    q0, v0 = ref.q_v(x0)
    sol = ref.simulate(2.0, res.time, q0=q0, v0=v0, rtol=1e-11, atol=1e-12)
    assert sol.success, sol.message
    _compare_trajectories(engine, ref, res, sol, names, f"tree {spec.describe()}")


# ----------------------------------------------------------------------------------------------
# energy and the Euler singularity
# ----------------------------------------------------------------------------------------------

G = (0.0, 0.0, -9.81)


def _energy(result, bodies, extra=0.0):
    ke = sum(result[f"{b}.kinetic_energy"] for b in bodies)
    return ke, ke + sum(result[f"{b}.potential_energy"] for b in bodies) + extra


def test_spherical_pendulum_energy_through_euler_singularity():
    """A spherical pendulum on a fixed base looping about (nearly) its y axis: its relative
    3-2-1 pitch passes within a fraction of a degree of ±90° again and again (the quaternion
    state does not mind) and its energy stays constant."""
    s = System()
    s.add(
        Ground("base", children={"O": [0.0, 0.0, 0.0]}),
        SphericalBody("pend", 2.0, np.diag([0.05, 0.06, 0.02]), com=[0.0, 0.0, -0.8],
                      omega0=[0.05, 9.0, 0.03], gravity=G),
        Constant("zero", np.zeros(3)),
    )  # fmt: skip
    s.connect("base.O", "pend.P")
    s.connect("zero.y", "pend.joint.tau")
    engine = Engine(s)
    rec = ["pend.kinetic_energy", "pend.potential_energy", "pend.joint.m"]
    r = engine.simulate(10.0, output_interval=0.005, record=rec, rtol=1e-12, atol=1e-12)
    ke, e = _energy(r, ["pend"])
    drift = float(np.abs(e - e[0]).max() / ke.max())
    assert drift < ENERGY_TOL, drift
    euler = np.stack([r[f"pend.joint.m[{i}]"] for i in (7, 8, 9)], axis=1)
    cos_theta = np.array([cos_pitch(dcm_from_euler(th)) for th in euler])
    # count the separate passes within ~1° of the singularity (cos θ < 2e-2)
    near = np.flatnonzero(cos_theta < 2e-2)
    passes = 1 + np.count_nonzero(np.diff(near) > 1) if near.size else 0
    assert passes >= 10 and cos_theta.min() < 5e-3, (passes, cos_theta.min())
    assert np.ptp(np.unwrap(euler[:, 2])) > 3.0  # φ and ψ flip by π at each pass


def _spring(k: float):
    """Central spring ``F = -k OP`` on a free joint (potential ½ k |OP|², P_a0b = 1)."""

    def law(t, inputs):
        m = inputs["m"]
        R_ab = dcm_from_euler(m[15:18])  # P_{a/b} = P_{a/a0}
        return {"tau": np.concatenate([-k * (R_ab.T @ m[12:15]), np.zeros(3)])}

    return law


def _chain_with_free_joint(k: float = 10.0) -> System:
    """Fixed base -> swinging spherical link -> free 'drone' tethered to the link's tip by a
    central spring and tumbling about its y axis (relative pitch 1.2 rad at t = 0) -> flap."""
    rng = np.random.default_rng(11)
    s = System()
    s.add(
        Ground("base", children={"O": [0.0, 0.0, 0.0]}),
        SphericalBody("link", 1.5, spd(rng, 0.03), com=[0.1, -0.05, -0.5],
                      children={"tip": [0.0, 0.1, -1.0]}, euler0=[0.4, -0.3, 0.2],
                      omega0=[0.1, -0.05, 0.2], gravity=G),
        FreeBody("drone", 1.0, np.diag([0.1, 0.12, 0.08]), com=[0.05, 0.02, -0.03],
                 children={"hinge": [0.2, 0.0, -0.1]}, position0=[0.1, -0.2, 0.05],
                 euler0=[0.0, 1.2, 0.3], velocity0=[0.5, 0.3, -0.4], omega0=[0.02, 6.0, 0.02],
                 gravity=G),
        RevoluteBody("flap", 0.5, spd(rng, 0.01), com=[0.2, 0.0, -0.05], axis=[0.2, 1.0, 0.1],
                     theta0=0.3, theta_dot0=-1.0, gravity=G),
        Constant("zero3", np.zeros(3)),
        Constant("zero1", 0.0),
        Function("spring", _spring(k), inputs={"m": 18}, outputs={"tau": 6}),
    )  # fmt: skip
    s.connect("base.O", "link.P")
    s.connect("link.tip", "drone.P")
    s.connect("drone.hinge", "flap.P")
    s.connect("zero3.y", "link.joint.tau")
    s.connect("zero1.y", "flap.joint.tau")
    s.connect("drone.joint.m", "spring.m")
    s.connect("spring.tau", "drone.joint.tau")
    return s


def _drone_cos_pitch(result) -> np.ndarray:
    euler = np.stack([result[f"drone.joint.m[{i}]"] for i in (16, 17, 18)], axis=1)
    return np.array([cos_pitch(dcm_from_euler(th)) for th in euler])


def test_chain_with_free_joint_energy():
    """Spherical link, free joint with a spring, revolute flap: kinetic + gravity + spring energy
    is constant over 10 s while the drone tumbles past the singular pitch of its free joint."""
    k = 10.0
    engine = Engine(_chain_with_free_joint(k))
    bodies = ["link", "drone", "flap"]
    rec = [f"{b}.{e}" for b in bodies for e in ("kinetic_energy", "potential_energy")]
    rec += ["drone.joint.m"]
    r = engine.simulate(10.0, output_interval=0.02, record=rec, rtol=1e-12, atol=1e-12)
    op = np.stack([r[f"drone.joint.m[{i}]"] for i in (13, 14, 15)], axis=1)
    spring = 0.5 * k * np.sum(op * op, axis=1)
    ke, e = _energy(r, bodies, spring)
    assert spring.max() > 0.5 * ke.max()  # the spring does take part
    drift = float(np.abs(e - e[0]).max() / ke.max())
    assert drift < ENERGY_TOL, drift
    near = np.flatnonzero(_drone_cos_pitch(r) < 0.1)
    assert near.size and 1 + np.count_nonzero(np.diff(near) > 1) >= 3  # repeated passes
    # the first pass, finely sampled (generic 3-D motion passes near, not exactly through)
    r = Engine(_chain_with_free_joint(k)).simulate(
        0.15, output_interval=5e-4, record=["drone.joint.m"], rtol=1e-12, atol=1e-12
    )
    assert _drone_cos_pitch(r).min() < 1e-2


def test_floating_spherical_pendulum_through_singularity_matches_pinocchio():
    """A floating base with a spherical pendulum looping about its y axis, past relative pitch
    ±90°: titopfmu and Pinocchio (its own quaternion joint) agree, the energy is conserved."""
    pytest.importorskip("pinocchio")
    from titopfmu.reference import to_pinocchio

    rng = np.random.default_rng(8)
    s = System()
    s.add(
        RigidBody("root", 20.0, spd(rng, 0.4), com=[0.1, 0.0, 0.05], children={"O": [0, 0, -0.3]},
                  euler=[0.2, 0.1, -0.4], twist=[0.1, 0.0, 0.2, 0.1, -0.1, 0.05], gravity=G),
        SphericalBody("pend", 1.0, np.diag([0.05, 0.06, 0.02]), com=[0.0, 0.0, -0.7],
                      omega0=[0.05, 8.0, 0.05], P_a0b=Rotation.from_euler("z", 0.3).as_matrix(),
                      gravity=G),
        Constant("zero", np.zeros(3)),
    )  # fmt: skip
    s.connect("root.O", "pend.P")
    s.connect("zero.y", "pend.joint.tau")
    engine = Engine(s)
    ref = to_pinocchio(s)
    names = ["root", "pend"]
    rec = _pose_columns(engine, names)
    rec.update({f"{b}.{e}": f"{b}.{e}" for b in names for e in ("kinetic_energy",)})
    rec.update({f"{b}.{e}": f"{b}.{e}" for b in names for e in ("potential_energy",)})
    res = engine.simulate(3.0, output_interval=0.0025, record=rec, rtol=1e-11, atol=1e-12)
    sol = ref.simulate(3.0, res.time, rtol=1e-11, atol=1e-12)
    assert sol.success, sol.message
    _compare_trajectories(engine, ref, res, sol, names, "floating spherical pendulum")
    quats = np.stack([res[f"pend.q{c}"] for c in "wxyz"], axis=1)
    cos_theta = np.array([cos_pitch(dcm_from_quaternion(q)) for q in quats])
    near = np.flatnonzero(cos_theta < 0.25)
    assert cos_theta.min() < 2e-2 and 1 + np.count_nonzero(np.diff(near) > 1) >= 4
    ke, e = _energy(res, names)
    assert float(np.abs(e - e[0]).max() / ke.max()) < 1e-8


# ----------------------------------------------------------------------------------------------
# physics of the new joints
# ----------------------------------------------------------------------------------------------


def test_free_joint_transmits_only_its_effort():
    """W_{A/B} = -G^T τ: with zero effort the parent feels nothing of the free body."""
    engine = Engine(_chain_with_free_joint(k=0.0))
    x = random_state(engine, np.random.default_rng(3), speed=2.0)
    ev = engine.evaluate(0.0, x)
    assert np.allclose(engine.signal(ev, "drone.P.W"), 0.0, atol=1e-12)
    assert np.allclose(engine.signal(ev, "link.tip.W"), 0.0, atol=1e-12)


def test_spherical_joint_torque_free_about_the_joint():
    """No driving torque: the wrench on the parent has no torque about the joint point, and
    the angular momentum of a pendulum about its fixed pivot is ruled by gravity alone."""
    rng = np.random.default_rng(9)
    s = System()
    s.add(
        Ground("base", children={"O": [0.0, 0.0, 0.0]}),
        SphericalBody("pend", 2.0, spd(rng, 0.02), com=[0.05, 0.03, -0.8],
                      omega0=[0.4, 3.0, -0.3], euler0=[0.3, 0.2, 0.1], gravity=G),
        Constant("zero", np.zeros(3)),
    )  # fmt: skip
    s.connect("base.O", "pend.P")
    s.connect("zero.y", "pend.joint.tau")
    engine = Engine(s)
    ev = engine.evaluate(0.0, engine.initial_state())
    w = engine.signal(ev, "pend.P.W")
    assert np.allclose(w[3:6], 0.0, atol=1e-12)
    assert np.linalg.norm(w[0:3]) > 1.0
    # torque-free joint: dH_O/dt = OB x m g (vertical component of H_O conserved)
    r = engine.simulate(2.0, output_interval=0.1, record=["pend.momentum"], rtol=1e-12, atol=1e-12)
    hz = r["pend.momentum[6]"]
    assert np.ptp(hz) < 1e-9 * max(1.0, np.abs(hz).max())


def _inverse_round_trip(fwd_cls, inv_cls, k: int, kwargs_fwd: dict) -> None:
    rng = np.random.default_rng(k)
    I0, I1, I2 = spd(rng), spd(rng, 0.3), spd(rng, 0.2)
    tau = rng.normal(size=k)
    common = dict(com=[0.1, -0.4, 0.2], children={"T": [0.1, -0.9, 0.0]}, gravity=G)
    p_a0b = Rotation.random(random_state=3).as_matrix()

    def build(joint_block, inverse: bool) -> System:
        s = System()
        s.add(
            RigidBody("root", 4.0, I0, com=[0.1, 0.2, -0.1], children={"C": [0.3, -0.5, 0.2]},
                      gravity=G, twist=rng.normal(size=6), euler=[0.3, -0.4, 1.2]),
            joint_block,
            RevoluteBody("tip", 1.5, I2, com=[0.2, 0.0, 0.0], axis=[1, 0.3, 0], theta0=0.2,
                         theta_dot0=0.7, gravity=G),
            Constant("tip_tau", 0.3),
        )  # fmt: skip
        s.connect("root.C", "mid.P")
        s.connect("mid.T", "tip.P")
        s.connect("tip_tau.y", "tip.joint.tau")
        return s

    fwd = build(fwd_cls("mid", 2.0, I1, P_a0b=p_a0b, **kwargs_fwd, **common), False)
    fwd.add(Constant("tau", tau))
    fwd.connect("tau.y", "mid.joint.tau")
    ef = Engine(fwd)
    x = ef.initial_state()
    evf = ef.evaluate(0.0, x)
    m_mid = ef.signal(evf, "mid.joint.m")
    assert m_mid.shape == (3 * k,)
    inv = build(inv_cls("mid", 2.0, I1, P_a0b=p_a0b, **common), True)
    inv.add(Constant("m_mid", m_mid))
    inv.connect("m_mid.y", "mid.joint.m")
    ei = Engine(inv)
    xi = np.concatenate([x[ef.plan.state_slices["root"]], x[ef.plan.state_slices["tip"]]])
    evi = ei.evaluate(0.0, xi)
    np.testing.assert_allclose(ei.signal(evi, "mid.joint.tau"), tau, atol=1e-9)
    for sig in ("root.acc", "tip.joint.m", "mid.T.m", "mid.P.W"):
        np.testing.assert_allclose(ei.signal(evi, sig), ef.signal(evf, sig), atol=1e-9)


def test_spherical_inverse_recovers_forward_torque():
    _inverse_round_trip(
        SphericalBody, SphericalBodyInverse, 3, dict(euler0=[0.3, -1.1, 2.0], omega0=[1, -2, 0.5])
    )


def test_free_inverse_recovers_forward_wrench():
    _inverse_round_trip(
        FreeBody,
        FreeBodyInverse,
        6,
        dict(position0=[0.2, -0.1, 0.3], quaternion0=[0.5, 0.5, -0.5, 0.5],
             velocity0=[0.3, 0.1, -0.2], omega0=[1, -2, 0.5]),
    )  # fmt: skip


def test_ports_states_and_signals():
    sph = SphericalBody("s", 1.0, np.eye(3), children={"c": [0, 0, 1]})
    free = FreeBody("f", 1.0, np.eye(3))
    assert sph.state_names == ("qw", "qx", "qy", "qz", "wx", "wy", "wz")
    assert free.n_states == 13 and free.state_names[0:3] == ("x", "y", "z")
    assert (sph.ports["joint.tau"].size, sph.ports["joint.m"].size) == (3, 9)
    assert (free.ports["joint.tau"].size, free.ports["joint.m"].size) == (6, 18)
    assert "N m" in sph.ports["joint.tau"].description
    inv = SphericalBodyInverse("si", 1.0, np.eye(3))
    assert inv.n_states == 0 and inv.ports["joint.m"].kind == "signal_in"
    q = np.array([1.0, 2.0, -0.5, 0.3])
    free = FreeBody("f", 1.0, np.eye(3), quaternion0=q / np.linalg.norm(q), position0=[1, 2, 3])
    x0 = free.initial_state()
    assert np.allclose(x0[0:7], np.concatenate([[1, 2, 3], q / np.linalg.norm(q)]))
    sph = SphericalBody("s", 1.0, np.eye(3), euler0=[0.1, 0.2, 0.3])
    R = dcm_from_quaternion(sph.initial_state()[0:4])
    assert np.allclose(R, dcm_from_euler([0.1, 0.2, 0.3]))


# ----------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------


def expect_parameter_error(make, block: str, parameter: str) -> None:
    with pytest.raises(ParameterError) as info:
        make()
    assert info.value.block == block and info.value.parameter == parameter, str(info.value)


@pytest.mark.parametrize("cls", [SphericalBody, FreeBody])
@pytest.mark.parametrize(
    "kwargs, parameter",
    [
        (dict(quaternion0=[0.0, 0.0, 0.0, 0.0]), "quaternion0"),
        (dict(quaternion0=[1.0, 0.1, 0.0, 0.0]), "quaternion0"),  # not unit
        (dict(quaternion0=[1.0, 0.0, 0.0]), "quaternion0"),
        (dict(quaternion0=[np.nan, 0.0, 0.0, 1.0]), "quaternion0"),
        (dict(euler0=[0.1, 0.2, 0.3], quaternion0=[1.0, 0.0, 0.0, 0.0]), "quaternion0"),
        (dict(euler0=[0.1, np.inf, 0.3]), "euler0"),
        (dict(euler0=[0.1, 0.2]), "euler0"),
        (dict(omega0=[0.0, 1.0]), "omega0"),
        (dict(omega0=[0.0, "fast", 1.0]), "omega0"),
        (dict(P_a0b=np.diag([1.0, 1.0, -1.0])), "P_a0b"),
        (dict(P_a0b=np.eye(2)), "P_a0b"),
    ],
)
def test_bad_initial_state_and_parameters(cls, kwargs, parameter):
    expect_parameter_error(lambda: cls("j", 1.0, np.eye(3), **kwargs), "j", parameter)


@pytest.mark.parametrize(
    "kwargs, parameter",
    [
        (dict(position0=[0.0, np.nan, 0.0]), "position0"),
        (dict(position0=[0.0, 1.0]), "position0"),
        (dict(velocity0=[0.0, 0.0, 0.0, 0.0]), "velocity0"),
    ],
)
def test_bad_free_joint_initial_state(kwargs, parameter):
    expect_parameter_error(lambda: FreeBody("f", 1.0, np.eye(3), **kwargs), "f", parameter)


def test_singular_apparent_inertia():
    # a point mass on a ball joint cannot be spun about the line from the pivot
    expect_parameter_error(
        lambda: SphericalBody("s", 1.0, np.zeros((3, 3)), com=[0.0, 0.0, -1.0]), "s", "inertia"
    )
    expect_parameter_error(lambda: FreeBody("f", 1.0, np.zeros((3, 3))), "f", "inertia")
    # a slender rod is fine as long as the inertia about P is invertible
    SphericalBody("ok", 1.0, np.diag([1e-3, 1e-3, 1e-6]), com=[0.0, 0.0, -1.0])
    FreeBody("ok", 1e-3, 1e-9 * np.eye(3))  # small but well-conditioned


def test_wrong_effort_and_law_sizes_are_assembly_errors():
    s = System()
    s.add(Ground("g", children={"O": [0, 0, 0]}), SphericalBody("s", 1.0, np.eye(3)))
    s.add(Constant("tau", 0.0))
    s.connect("g.O", "s.P")
    with pytest.raises(AssemblyError, match="size mismatch"):
        s.connect("tau.y", "s.joint.tau")
    s.add(JointSpringDamper("law"))
    with pytest.raises(AssemblyError, match="size mismatch"):
        s.connect("s.joint.m", "law.m")  # a 1-dof law on a 3-dof joint


def test_pinocchio_rejects_inverse_variants():
    pytest.importorskip("pinocchio")
    from titopfmu.reference import UnsupportedBlockError, to_pinocchio

    s = System()
    s.add(RigidBody("r", 1.0, np.eye(3), children={"c": [0, 0, 0]}))
    s.add(SphericalBodyInverse("a", 1.0, np.eye(3), com=[1, 0, 0]), Constant("m", np.zeros(9)))
    s.connect("r.c", "a.P")
    s.connect("m.y", "a.joint.m")
    with pytest.raises(UnsupportedBlockError, match="SphericalBodyInverse"):
        to_pinocchio(s)
    assert isinstance(UnsupportedBlockError("x"), TitopError)
