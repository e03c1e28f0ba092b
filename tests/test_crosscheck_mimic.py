"""The crosscheck's Pinocchio reference with mimic joints (issue 32): ``PinocchioReference``,
built from a titopfmu System, makes a JointMimic's follower Pinocchio's mimic joint of its
leader; its accelerations are compared here with Pinocchio's own mimic model built directly
from the URDF (``buildModelFromXML(..., mimic=True)``, its a = M^-1 (tau - nle) written again
here, a fresh Data per call), on panda.urdf's gripper and on a 3-link arm (multiplier -1.7,
offset 0.3; and a prismatic pair). The crosscheck of that arm passes, its FMU leg (block-per-FMU
co-simulation refuses mimic joints) run as one model FMU. The panda's crosscheck
itself: tests/test_urdf.py, ``test_crosscheck_of_the_panda_with_its_mimic_passes``."""

from __future__ import annotations

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

from test_mimic import G, erd, import_quiet, three_links  # noqa: E402

from titopfmu import Engine  # noqa: E402
from titopfmu.crosscheck import crosscheck, engine_accelerations  # noqa: E402
from titopfmu.reference.pinocchio_model import PinocchioReference  # noqa: E402

PRISMATIC = three_links(mimic='<mimic joint="j1" multiplier="0.6" offset="-0.05"/>',
                        kinds=("prismatic", "prismatic", "revolute"))  # fmt: skip


def direct(model, q, v, tau):
    """Pinocchio's mimic model of the file: M a = tau - nle (its damping aside: the efforts are
    given), a new Data per call (a reused one gives a wrong crba on mimic models)."""
    data = model.createData()
    M = pin.crba(model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    return np.linalg.solve(M, tau - pin.nonLinearEffects(model, model.createData(), q, v))


def gap_to_the_file(text_or_path: str, model, n: int = 12, seed: int = 1) -> float:
    """Worst relative gap between the reference's accelerations (every joint of the system,
    followers included) and those of Pinocchio's mimic model of the file, at random reduced
    states and random efforts on the joints with a coordinate of their own."""
    system = import_quiet(text_or_path)
    ref = PinocchioReference(system)
    engine = Engine(system)
    rng = np.random.default_rng(seed)
    slices = engine.plan.state_slices
    own = {u: b for u, b in system.urdf_joints.items() if b not in ref.followers}
    assert len(own) == model.nv and ref.nv == model.nv
    worst = 0.0
    for _ in range(n):
        q = pin.randomConfiguration(model)
        v = rng.uniform(-2.0, 2.0, model.nv)
        tau = rng.uniform(-5.0, 5.0, model.nv)
        x = engine.initial_state()
        efforts = {}
        for u, b in own.items():
            jm = model.joints[model.getJointId(u)]
            x[slices[b]] = [q[jm.idx_q], v[jm.idx_v]]
            efforts[b] = tau[jm.idx_v]
        x = engine.consistent(x)
        a = direct(model, q, v, tau)
        expected = []
        for b in ref.joints:  # titopfmu order; a follower: scaling x its leader's
            jm = model.joints[model.getJointId(next(u for u, n in system.urdf_joints.items()
                                                    if n == b))]  # fmt: skip
            mimic = jm.shortname() == "JointModelMimic"
            expected.append(a[jm.idx_v] * (jm.extract().scaling if mimic else 1.0))
        expected = np.array(expected)
        got = ref.accelerations(x, efforts=efforts)
        worst = max(worst, np.max(np.abs(got - expected)) / max(1.0, np.max(np.abs(expected))))
        # the reduced state maps back onto the full one (the followers by the core's projection)
        qr, vr = ref.q_v(x)
        assert np.array_equal(ref.state(qr, vr, x), x)
    return worst


def test_the_reference_of_the_panda_matches_pinocchios_mimic_model_of_the_file():
    path = erd("panda.urdf")
    model = pin.buildModelFromUrdf(path, mimic=True)
    model.gravity = pin.Motion(np.array(G), np.zeros(3))
    assert (model.nq, model.nv) == (8, 8)
    worst = gap_to_the_file(path, model)
    print(f"panda: reference vs Pinocchio's mimic model of the file: {worst:.3g}")
    assert worst < 1e-10


@pytest.mark.parametrize("text", [three_links(), PRISMATIC], ids=["revolute", "prismatic"])
def test_the_reference_of_a_three_link_arm_matches_pinocchios_mimic_model(text):
    model = pin.buildModelFromXML(text, mimic=True)
    model.gravity = pin.Motion(np.array(G), np.zeros(3))
    assert model.nv == 2
    ref = PinocchioReference(import_quiet(text))
    ((follower, mm),) = ref.followers.items()
    assert ref.bodies[follower].multiplier == mm.multiplier != 1.0 and mm.offset != 0.0
    worst = gap_to_the_file(text, model, seed=4)
    print(f"3-link arm: reference vs Pinocchio's mimic model of the file: {worst:.3g}")
    assert worst < 1e-10


def test_the_engine_matches_the_reference_at_consistent_random_states():
    system = import_quiet(three_links())
    ref, engine = PinocchioReference(system), Engine(system)
    rng = np.random.default_rng(7)
    for _ in range(10):
        x = ref.state(rng.uniform(-3, 3, ref.nq), rng.uniform(-2, 2, ref.nv),
                      engine.initial_state())  # fmt: skip
        a = ref.accelerations(x)
        got = engine_accelerations(engine, ref, engine.derivative(0.0, x))
        assert np.allclose(got, a, rtol=0, atol=1e-12 * max(1.0, np.max(np.abs(a))))


def test_a_followers_effort_is_not_an_input_of_the_reference():
    system = import_quiet(three_links())
    ref = PinocchioReference(system)
    (follower,) = ref.followers
    x = Engine(system).initial_state()
    with pytest.raises(KeyError, match="follow a mimic joint"):
        ref.accelerations(x, efforts={follower: 1.0})
    vals = np.zeros(len(ref.joints))
    a0 = ref.accelerations(x, efforts=vals)
    vals[ref.joints.index(follower)] = 1.0
    with pytest.raises(ValueError, match="follows a mimic joint"):
        ref.accelerations(x, efforts=vals)
    assert np.isfinite(a0).all()


def test_the_crosscheck_of_a_mimic_arm_runs_its_fmu_leg_as_one_model_fmu(tmp_path):
    """With cosim=True: one FMU per block cannot co-simulate mimic joints (from_system refuses
    them), so the FMU leg runs the whole-model FMU (fmpy: its model-exchange derivative at the
    initial state, its co-simulation trajectory) and the report says why, in one line."""
    pytest.importorskip("fmpy")
    system = import_quiet(three_links())
    system.blocks[system.urdf_joints["j1"]].theta0 = 0.4
    r = crosscheck(system, tmp_path / "cc", cosim=True, t_final=1.0)
    assert r.passed and r.verdict == "PASS", r.summary()
    assert r.acc_error < 1e-12 and r.traj_error < 1e-6
    assert r.cosim_label == "model FMU"
    assert r.cosim_acc_error is not None and r.cosim_acc_error < 1e-12
    assert r.cosim_traj_error is not None and r.cosim_traj_error < 1e-6
    assert r.cosim.startswith("run as one model FMU (block '") and "mimic joint" in r.cosim
    assert "\n" not in r.cosim
    assert "model FMU: state derivative" in r.summary()
    assert (tmp_path / "cc" / f"{system.name}.fmu").is_file()
    report = (tmp_path / "cc" / "report.md").read_text()
    rows = [line for line in report.splitlines() if line.startswith("| model FMU vs in process")]
    assert len(rows) == 2, report
    print(r.summary())


def test_an_external_wrench_on_a_follower_and_a_body_beyond_it():
    """From blocks: a follower (multiplier 2, offset -0.1) carrying an inertial-frame wrench at
    a point and a body of its own; the reference (fext on the mimic joint, rnea) against the
    engine at consistent random states."""
    from titopfmu import Constant, Ground, JointMimic, PrismaticBody, RevoluteBody, System

    s = System("pair")
    s.add(Ground("g", children={"a": (0, 0, 0)}))
    s.add(
        RevoluteBody(
            "l",
            mass=1.0,
            inertia=np.diag([0.1, 0.12, 0.1]),
            com=(0.3, 0, 0.02),
            axis=(0, 0.6, 0.8),
            children={"f": (0.5, 0, 0)},
            gravity=G,
        )
    )
    s.add(
        RevoluteBody(
            "f",
            mass=0.5,
            inertia=np.diag([0.05, 0.04, 0.05]),
            com=(0.2, 0.01, 0),
            axis=(0, 0, 1),
            children={"t": (0.4, 0, 0)},
            gravity=G,
            external={"w": {"point": (0.1, 0.05, 0.0), "frame": "inertial"}},
        )
    )
    s.add(
        PrismaticBody(
            "t",
            mass=0.3,
            inertia=np.diag([0.01, 0.02, 0.02]),
            com=(0.05, 0, 0),
            axis=(1, 0, 0),
            gravity=G,
        )
    )
    s.add(Constant("tl", [1.5]))
    s.add(Constant("tt", [-0.4]))
    s.add(Constant("wf", [0.3, -1.0, 2.0, 0.1, 0.2, -0.3]))
    s.add(JointMimic("fm", multiplier=2.0, offset=-0.1))
    for a, b in (
        ("g.a", "l.P"),
        ("l.f", "f.P"),
        ("f.t", "t.P"),
        ("tl.y", "l.joint.tau"),
        ("tt.y", "t.joint.tau"),
        ("wf.y", "f.w"),
        ("l.joint.m", "fm.m"),
        ("fm.tau", "f.joint.tau"),
    ):
        s.connect(a, b)  # fmt: skip
    ref, engine = PinocchioReference(s), Engine(s)
    assert list(ref.followers) == ["f"] and ref.nv == 2
    rng = np.random.default_rng(11)
    for _ in range(10):
        x = ref.state(rng.uniform(-3, 3, 2), rng.uniform(-2, 2, 2), engine.initial_state())
        sl = engine.plan.state_slices
        assert x[sl["f"]][0] == 2.0 * x[sl["l"]][0] - 0.1 and x[sl["f"]][1] == 2 * x[sl["l"]][1]
        a = ref.accelerations(x)
        got = engine_accelerations(engine, ref, engine.derivative(0.0, x))
        assert np.allclose(got, a, rtol=0, atol=1e-12 * max(1.0, np.max(np.abs(a))))
    # the wrench matters
    a0 = ref.accelerations(x, wrenches={"f.w": np.zeros(6)})
    assert np.max(np.abs(a0 - a)) > 1e-3


def test_a_leader_after_its_follower_in_the_tree_is_refused_in_one_line():
    """Pinocchio's transformJointIntoMimic needs the leader's joint before the follower's: a
    follower hung first from the ground is refused, naming both (not yet reordered)."""
    from titopfmu import Constant, Ground, JointMimic, RevoluteBody, System
    from titopfmu.reference.pinocchio_model import UnsupportedBlockError

    s = System("pair")
    s.add(Ground("g", children={"a": (0, 0, 0), "b": (0.5, 0, 0)}))
    for name, m in (("f", 0.5), ("l", 1.0)):
        s.add(RevoluteBody(name, mass=m, inertia=np.diag([0.1, 0.1, 0.1]), com=(0.3, 0, 0),
                           axis=(0, 0, 1), gravity=G))  # fmt: skip
    s.add(Constant("tl", [1.0]))
    s.add(JointMimic("fm", multiplier=2.0, offset=-0.1))
    for a, b in (
        ("g.a", "f.P"),
        ("g.b", "l.P"),
        ("tl.y", "l.joint.tau"),
        ("l.joint.m", "fm.m"),
        ("fm.tau", "f.joint.tau"),
    ):
        s.connect(a, b)  # fmt: skip
    assert Engine(s).plan.tree == ["g", "f", "l"]
    with pytest.raises(UnsupportedBlockError) as e:
        PinocchioReference(s)
    assert "needs the leader 'l' before its follower 'f'" in str(e.value)
    assert "\n" not in str(e.value)
