"""titopfmu against Pinocchio, an independent rigid-body-dynamics library.

The reference model (:mod:`titopfmu.reference.pinocchio_model`) is built from the block
parameters only; these tests compare accelerations (``pin.aba``), kinematics and whole
trajectories on the balloon of seed 004 and on seeded random trees.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

from random_trees import random_state, random_tree  # noqa: E402
from scipy.spatial.transform import Rotation  # noqa: E402

from titopfmu import (  # noqa: E402
    Constant,
    Engine,
    Ground,
    InertiaWarning,
    RevoluteBody,
    RevoluteBodyInverse,
    RigidBody,
    System,
)
from titopfmu.examples.balloon import COLUMNS, BalloonParameters, build_balloon  # noqa: E402
from titopfmu.reference import UnsupportedBlockError, to_pinocchio  # noqa: E402
from titopfmu.reference.pinocchio_model import (  # noqa: E402
    euler_321,
    rotation_from_quaternion_xyzw,
)

ACC_RTOL = 1e-9
TRAJ_TOL = 1e-6
TREE_SEEDS = list(range(24))
TRAJECTORY_SEEDS = [3, 7]  # 10 and 12 bodies, every joint kind


@pytest.fixture(autouse=True)
def _quiet_inertia_warning():
    # the balloon's inertia of Table 1 violates the triangle inequality (a warning by design)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        yield


def titop_accelerations(engine: Engine, root: str, joints: list[str], x, t: float = 0.0):
    """[root acc (6), q̈ of each joint] from the titopfmu engine."""
    ev = engine.evaluate(t, x)
    parts = [engine.signal(ev, f"{root}.acc")]
    parts += [engine.signal(ev, f"{j}.joint.m")[0:1] for j in joints]
    return np.concatenate(parts)


def assert_acc_close(a_titop, a_pin, what: str) -> None:
    scale = max(1.0, float(np.linalg.norm(a_pin)))
    err = float(np.max(np.abs(a_titop - a_pin)))
    assert err <= ACC_RTOL * scale, (
        f"{what}: |titopfmu - pinocchio| = {err:.3g} > {ACC_RTOL:g} * {scale:.3g}\n"
        f"titopfmu  {np.array2string(a_titop, precision=12)}\n"
        f"pinocchio {np.array2string(a_pin, precision=12)}"
    )


def wrap(a):
    return (np.asarray(a) + np.pi) % (2.0 * np.pi) - np.pi


# ----------------------------------------------------------------------------------------------
# model construction and conversions
# ----------------------------------------------------------------------------------------------


def test_balloon_model_structure():
    ref = to_pinocchio(build_balloon())
    assert ref.root == "balloon"
    assert ref.joints == ["slider", "pend1", "pend2"]
    assert (ref.nq, ref.nv, ref.n_acc) == (10, 9, 9)
    assert np.allclose(ref.model.gravity.linear, [0.0, -9.81, 0.0])
    total = sum(ref.model.inertias[j].mass for j in range(1, ref.model.njoints))
    assert total == pytest.approx(BalloonParameters().total_mass)


def test_state_conversion_round_trip():
    s, _ = random_tree(5)
    engine = Engine(s)
    ref = to_pinocchio(s)
    x = random_state(engine, np.random.default_rng(0))
    q, v = ref.q_v(x)
    assert np.linalg.norm(q[3:7]) == pytest.approx(1.0)
    x2 = ref.state(q, v, x)
    assert np.allclose(x2, x, rtol=0, atol=1e-14)
    q0, v0 = ref.initial_configuration()
    q1, v1 = ref.q_v(engine.initial_state())
    assert np.allclose(q0, q1, atol=1e-14) and np.allclose(v0, v1, atol=1e-14)


def test_unsupported_blocks_are_rejected():
    s = System()
    s.add(Ground("g", children={"c": [0, 0, 0]}), RevoluteBody("a", 1.0, np.eye(3), com=[1, 0, 0]))
    s.add(Constant("tau", 0.0))
    s.connect("g.c", "a.P")
    s.connect("tau.y", "a.joint.tau")
    assert not to_pinocchio(s).floating  # a Ground root is a fixed base (test_model_cli.py)
    s.add(RigidBody("r2", 1.0, np.eye(3)))  # ... but one root only
    with pytest.raises(UnsupportedBlockError, match=r"exactly one root.*\['g', 'r2'\]"):
        to_pinocchio(s)
    s = System()
    s.add(RigidBody("r", 1.0, np.eye(3), children={"c": [0, 0, 0]}))
    s.add(RevoluteBodyInverse("a", 1.0, np.eye(3), com=[1, 0, 0]), Constant("m", np.zeros(3)))
    s.connect("r.c", "a.P")
    s.connect("m.y", "a.joint.m")
    with pytest.raises(UnsupportedBlockError, match="RevoluteBodyInverse"):
        to_pinocchio(s)


def test_random_trees_cover_every_case():
    kinds, frames, points, laws = set(), set(), set(), 0
    for seed in TREE_SEEDS:
        s, spec = random_tree(seed)
        assert 2 <= spec.n_bodies <= 12
        kinds |= set(spec.kinds.values())
        for name, b in s.blocks.items():
            if name in spec.kinds:
                frames |= {(name == "root", e.frame) for e in b.external.values()}
                if not np.any(b.inertia):
                    points.add(spec.kinds[name])
            laws += name.startswith("law_")
    assert kinds == {"root", "revolute", "prismatic", "welded"}
    assert frames == {(r, f) for r in (True, False) for f in ("body", "inertial")}
    assert points == {"revolute", "prismatic", "welded"}
    assert laws > 0


# ----------------------------------------------------------------------------------------------
# accelerations
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("conservative", [False, True])
def test_balloon_accelerations(conservative):
    p = BalloonParameters()
    s = build_balloon(p.conservative() if conservative else p)
    engine = Engine(s)
    ref = to_pinocchio(s)
    rng = np.random.default_rng(42)
    states = [engine.initial_state()] + [random_state(engine, rng) for _ in range(6)]
    for i, x in enumerate(states):
        t = float(rng.uniform(0, 10))
        assert_acc_close(
            titop_accelerations(engine, ref.root, ref.joints, x, t),
            ref.accelerations(x, t),
            f"balloon (conservative={conservative}) state {i}",
        )


def test_balloon_explicit_inputs():
    """Efforts and wrenches given explicitly (instead of read from the signal blocks)."""
    p = BalloonParameters()
    s = build_balloon(p)
    engine = Engine(s)
    ref = to_pinocchio(s)
    x = random_state(engine, np.random.default_rng(1))
    q, v = ref.q_v(x)
    tau = [-p.k * q[7] - p.d_s * v[6], -p.d_p1 * v[7], -p.d_p2 * v[8]]
    buoy = {"balloon.buoyancy": np.concatenate([-p.total_mass * np.array(p.gravity), np.zeros(3)])}
    a = ref.accelerations(x, efforts=tau, wrenches=buoy)
    assert_acc_close(a, ref.accelerations(x), "explicit inputs")
    assert_acc_close(titop_accelerations(engine, "balloon", ref.joints, x), a, "explicit inputs")
    a0 = ref.accelerations(x, efforts={"slider": 0.0}, wrenches={"balloon.buoyancy": np.zeros(6)})
    assert not np.allclose(a0, a)


@pytest.mark.parametrize("seed", TREE_SEEDS)
def test_random_tree_accelerations_and_poses(seed):
    s, spec = random_tree(seed)
    engine = Engine(s)
    ref = to_pinocchio(s)
    rng = np.random.default_rng(1000 + seed)
    for i in range(4):
        x = random_state(engine, rng)
        t = float(rng.uniform(0, 5))
        a_t = titop_accelerations(engine, "root", ref.joints, x, t)
        assert_acc_close(a_t, ref.accelerations(x, t), f"tree {spec.describe()} state {i}")
        # kinematics of every block: position of P and attitude
        ev = engine.evaluate(t, x)
        q, _ = ref.q_v(x)
        for name in spec.kinds:
            pos, R = ref.block_pose(q, name)
            assert np.allclose(engine.signal(ev, f"{name}.position"), pos, rtol=0, atol=1e-11)
            phi, th, psi = engine.signal(ev, f"{name}.euler")
            R_t = Rotation.from_euler("ZYX", [psi, th, phi]).as_matrix()
            assert np.allclose(R_t, R, rtol=0, atol=1e-12), f"attitude of {name}"


# ----------------------------------------------------------------------------------------------
# trajectories
# ----------------------------------------------------------------------------------------------


def pinocchio_outputs(ref, sol) -> np.ndarray:
    """[root position (3), root Euler angles (3), joint coordinates] on the solve_ivp grid."""
    q = sol.y[: ref.nq].T
    euler = np.array([euler_321(rotation_from_quaternion_xyzw(qi[3:7])) for qi in q])
    return np.column_stack([q[:, 0:3], euler, ref.joint_coordinates(q.T).T])


def assert_trajectories_close(values, expected, columns, what: str) -> None:
    diff = values - expected
    diff[:, 3:6] = wrap(diff[:, 3:6])  # Euler angles: compare modulo 2π
    scale = np.maximum(1.0, np.abs(expected))
    err = np.abs(diff) / scale
    j = int(np.argmax(np.max(err, axis=0)))
    assert float(np.max(err)) <= TRAJ_TOL, (
        f"{what}: column {columns[j]!r} differs by {np.max(err[:, j]):.3g} "
        "(relative to max(1, |x|))"
    )
    # away from the gimbal lock the Euler angles are well conditioned; check it was the case
    assert np.all(np.abs(expected[:, 4]) < 1.5)


def test_balloon_trajectory():
    s = build_balloon()
    engine = Engine(s)
    ref = to_pinocchio(s)
    res = engine.simulate(
        4.0, output_interval=0.05, record=COLUMNS, method="DOP853", rtol=1e-11, atol=1e-12
    )
    sol = ref.simulate(4.0, res.time, method="DOP853", rtol=1e-11, atol=1e-12)
    assert sol.success, sol.message
    expected = pinocchio_outputs(ref, sol)
    assert_trajectories_close(res.values, expected, list(COLUMNS), "balloon")
    # something happened: the pendulum swung, the slider moved
    assert np.ptp(expected[:, 6]) > 1e-2 and np.ptp(expected[:, 7]) > 0.5


@pytest.mark.parametrize("seed", TRAJECTORY_SEEDS)
def test_random_tree_trajectory(seed):
    s, spec = random_tree(seed)
    engine = Engine(s)
    ref = to_pinocchio(s)
    x0 = random_state(engine, np.random.default_rng(seed), speed=0.5, angle=1.0, stroke=0.2)
    columns = {
        "x": "root.position[1]",
        "y": "root.position[2]",
        "z": "root.position[3]",
        "phi": "root.euler[1]",
        "theta": "root.euler[2]",
        "psi": "root.euler[3]",
    }
    columns.update({j: f"{j}.joint.m[3]" for j in ref.joints})
    res = engine.simulate(
        2.0, output_interval=0.05, record=columns, x0=x0, method="DOP853", rtol=1e-11, atol=1e-12
    )
    q0, v0 = ref.q_v(x0)
    sol = ref.simulate(2.0, res.time, q0=q0, v0=v0, method="DOP853", rtol=1e-11, atol=1e-12)
    assert sol.success, sol.message
    assert_trajectories_close(
        res.values, pinocchio_outputs(ref, sol), list(columns), f"tree {spec.describe()}"
    )
