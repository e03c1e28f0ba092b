"""Assembly of systems: wiring errors, loop closures, recording and CSV output."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from random_trees import random_state, random_tree

from titopfmu import (
    AssemblyError,
    Constant,
    Engine,
    Function,
    Ground,
    ImposedMotionBody,
    JointSpringDamper,
    LoopClosure,
    PrismaticBodyInverse,
    RevoluteBody,
    RevoluteBodyInverse,
    RigidBody,
    SimulationError,
    System,
    TimeFunction,
    TitopError,
    WeldedBody,
)

I3 = np.eye(3)
G = [0.0, -9.81, 0.0]


def pendulum_parts():
    return (
        Ground("g", children={"C": [0.0, 0.0, 0.0], "D": [1.0, 0.0, 0.0]}),
        RevoluteBody("arm", 1.0, 0.1 * I3, com=[1.0, 0.0, 0.0], children={"tip": [2.0, 0.0, 0.0]},
                     gravity=G),
        WeldedBody("w", 0.5, 0.05 * I3, com=[0.0, 0.1, 0.0], gravity=G),
        WeldedBody("w2", 0.5, 0.05 * I3, gravity=G),
        Constant("zero", [0.0]),
        Constant("two", [0.0, 0.0]),
    )  # fmt: skip


def pendulum():
    s = System("pendulum")
    s.add(*pendulum_parts())
    s.connect("g.C", "arm.P")
    s.connect("arm.tip", "w.P")
    s.connect("w2.P", "g.D")  # order of the two ends is free
    s.connect("zero.y", "arm.joint.tau")
    return s


def test_valid_system_is_accepted():
    s = pendulum()
    assert s.source("arm.joint.tau") == "zero.y"
    assert s.source("w2.P") == "g.D" and s.source("g.D") == "w2.P"
    eng = Engine(s)
    ev = eng.evaluate(0.0, eng.initial_state())
    assert eng.signal(ev, "arm.joint.m")[0] < 0.0  # a horizontal pendulum starts to fall


# ----------------------------------------------------------------------------------------------
# wiring errors
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "skip, port",
    [
        ("zero.y", "arm.joint.tau"),  # signal input
        ("g.C", "arm.P"),  # parent port (and the ground's child port)
        ("arm.tip", "w.P"),
    ],
)
def test_unconnected_port_is_named(skip, port):
    s = System()
    s.add(*pendulum_parts())
    for a, b in (
        ("g.C", "arm.P"),
        ("arm.tip", "w.P"),
        ("g.D", "w2.P"),
        ("zero.y", "arm.joint.tau"),
    ):
        if (a, b) != (skip, port):
            s.connect(a, b)
    with pytest.raises(AssemblyError, match="unconnected") as info:
        Engine(s)
    assert port in str(info.value)
    with pytest.raises(AssemblyError):
        s.check()


def test_unconnected_child_port_is_named():
    s = System()
    s.add(Ground("g", children={"C": [0, 0, 0], "spare": [1, 0, 0]}), WeldedBody("w", 1.0, I3))
    s.connect("g.C", "w.P")
    with pytest.raises(AssemblyError, match=r"g\.spare"):
        Engine(s)


def test_unconnected_signal_output_is_fine():
    s = pendulum()
    s.add(Ground("g2", children={"C": [0, 0, 0]}), RevoluteBody("free", 1.0, I3, com=[0, -1, 0]))
    s.connect("g2.C", "free.P")
    s.connect("zero.y", "free.joint.tau")  # one output may feed several inputs
    Engine(s)  # "two.y" and the joints' "joint.m" outputs stay unconnected


@pytest.mark.parametrize(
    "first, second, named",
    [
        (("g.C", "arm.P"), ("g.C", "w.P"), "g.C"),  # a child port to two parents
        (("g.C", "w.P"), ("g.D", "w.P"), "w.P"),  # a parent port to two children
        (("g.C", "w.P"), ("w.P", "g.D"), "w.P"),  # same, written the other way round
        (("zero.y", "arm.joint.tau"), ("two.y", "arm.joint.tau"), "arm.joint.tau"),
    ],
)
def test_port_connected_twice(first, second, named):
    s = System()
    s.add(*pendulum_parts())
    s.blocks["two"] = Constant("two", [1.0])  # right size, so only the double connection is wrong
    s.connect(*first)
    with pytest.raises(AssemblyError, match="already connected") as info:
        s.connect(*second)
    assert named in str(info.value)


@pytest.mark.parametrize(
    "a, b, match",
    [
        ("g.C", "arm.tip", "mismatched port kinds"),  # child - child
        ("arm.P", "w.P", "mismatched port kinds"),  # parent - parent
        ("arm.P", "zero.y", "mismatched port kinds"),  # parent - signal
        ("g.C", "arm.joint.tau", "mismatched port kinds"),  # child - signal input
        ("arm.joint.m", "zero.y", "mismatched port kinds"),  # two signal outputs
        ("two.y", "arm.joint.tau", "size mismatch"),  # 2 components into 1
    ],
)
def test_mismatched_ports(a, b, match):
    s = System()
    s.add(*pendulum_parts())
    with pytest.raises(AssemblyError, match=match) as info:
        s.connect(a, b)
    assert a in str(info.value) and b in str(info.value)
    assert s.connections == []


def test_kinematic_cycle_without_loop_closure():
    s = System()
    s.add(
        Ground("g", children={"C": [0, 0, 0]}),
        WeldedBody("ok", 1.0, I3),
        WeldedBody("a", 1.0, I3, children={"C": [1, 0, 0]}),
        RevoluteBody("b", 1.0, I3, children={"C": [1, 0, 0]}),
        Constant("tau", [0.0]),
    )
    s.connect("g.C", "ok.P")
    s.connect("a.C", "b.P")
    s.connect("b.C", "a.P")
    s.connect("tau.y", "b.joint.tau")
    with pytest.raises(AssemblyError, match="cycle") as info:
        Engine(s)
    msg = str(info.value)
    assert "a -> b -> a" in msg or "b -> a -> b" in msg
    assert "'ok'" not in msg and "LoopClosure" in msg


def test_body_hanging_from_itself_is_a_cycle():
    s = System()
    s.add(WeldedBody("a", 1.0, I3, children={"C": [1, 0, 0]}))
    s.connect("a.C", "a.P")
    with pytest.raises(AssemblyError, match="cycle"):
        s.check()


@pytest.mark.parametrize(
    "a, b, named",
    [
        ("nope.C", "arm.P", "nope"),
        ("g.nope", "arm.P", "nope"),
        ("g.C", "arm.Q", "Q"),
        ("gC", "arm.P", "gC"),
    ],
)
def test_unknown_block_or_port(a, b, named):
    s = System()
    s.add(*pendulum_parts())
    with pytest.raises(AssemblyError) as info:
        s.connect(a, b)
    assert named in str(info.value)


def test_duplicate_block_name_and_non_block():
    s = System()
    s.add(Constant("c", [1.0]))
    with pytest.raises(AssemblyError, match="already"):
        s.add(Constant("c", [2.0]))
    with pytest.raises(AssemblyError):
        s.add("not a block")


def test_signal_known_only_after_the_loop_cannot_feed_a_block():
    """An inverse block's effort is a loop output: it cannot drive another joint's effort."""
    s = System()
    s.add(
        Ground("g", children={"C": [0, 0, 0], "D": [1, 0, 0]}),
        RevoluteBodyInverse("inv", 1.0, I3, com=[1, 0, 0]),
        RevoluteBody("fwd", 1.0, I3, com=[1, 0, 0]),
        TimeFunction("traj", lambda t: [0.0, 0.0, t], 3),
    )
    s.connect("g.C", "inv.P")
    s.connect("g.D", "fwd.P")
    s.connect("traj.y", "inv.joint.m")
    s.connect("inv.joint.tau", "fwd.joint.tau")
    with pytest.raises(AssemblyError, match="algebraic loop is solved"):
        Engine(s)


def test_forward_joint_motion_driving_an_inverse_joint():
    """Two identical pendulums; the second copies the first's motion through an inverse joint.
    The torque needed is zero (the first one swings freely). Either the wiring is refused or the
    torque is right; a silent NaN is neither."""
    s = System()
    s.add(
        Ground("g", children={"C": [0, 0, 0], "D": [1, 0, 0]}),
        RevoluteBody("fwd", 1.0, 0.1 * I3, com=[1, 0, 0], gravity=G),
        RevoluteBodyInverse("inv", 1.0, 0.1 * I3, com=[1, 0, 0], gravity=G),
        Constant("zero", [0.0]),
    )
    s.connect("g.C", "fwd.P")
    s.connect("g.D", "inv.P")
    s.connect("zero.y", "fwd.joint.tau")
    s.connect("fwd.joint.m", "inv.joint.m")
    try:
        res = Engine(s).simulate(0.2, output_interval=0.1, record=["inv.joint.tau"])
    except (AssemblyError, SimulationError):
        return
    np.testing.assert_allclose(res["inv.joint.tau"], 0.0, atol=1e-9)


def test_algebraic_loop_through_signal_blocks():
    s = pendulum()
    s.add(
        Function("f1", lambda t, u: {"y": u["u"]}, {"u": 1}, {"y": 1}),
        Function("f2", lambda t, u: {"y": u["u"]}, {"u": 1}, {"y": 1}),
    )
    s.connect("f1.y", "f2.u")
    s.connect("f2.y", "f1.u")
    with pytest.raises(AssemblyError, match="algebraic loop through signal"):
        Engine(s)


# ----------------------------------------------------------------------------------------------
# loop closure
# ----------------------------------------------------------------------------------------------


def closed_bar(k=1.0e4, d=50.0):
    """A bar pinned at O, its tip held at R by a loop-closure spring: a closed chain."""
    s = System("closed")
    s.add(
        Ground("g", children={"O": [0.0, 0.0, 0.0], "R": [2.0, 0.0, 0.0]}),
        RevoluteBody("bar", 1.0, np.diag([0.01, 0.3, 0.3]), com=[1.0, 0.0, 0.0],
                     children={"tip": [2.0, 0.0, 0.0]}, gravity=G),
        LoopClosure("lc", np.diag([k, k, k, 0.0, 0.0, 0.0]), np.diag([d, d, d, 0.0, 0.0, 0.0])),
        Constant("free", [0.0]),
    )  # fmt: skip
    s.connect("g.O", "bar.P")
    s.connect("bar.tip", "lc.left")
    s.connect("lc.right", "g.R")
    s.connect("free.y", "bar.joint.tau")
    return s


def test_loop_closure_system_is_accepted_and_holds_the_bar():
    """Static equilibrium of the closed chain: the spring carries half the bar's weight (moments
    about the pivot) and the ground carries the whole weight and its moment."""
    eng = Engine(closed_bar())
    res = eng.simulate(
        0.4, output_interval=0.2, record=["bar.joint.m[3]", "lc.left.W", "g.W", "lc.right.W"]
    )
    m_g = 9.81
    theta = res["bar.joint.m[3]"][-1]
    assert abs(theta) < 1e-3  # barely moves: deflection m g / (2 k) / 2
    f_left = np.array([res[f"lc.left.W[{i}]"][-1] for i in (1, 2, 3)])
    np.testing.assert_allclose(f_left, [0.0, m_g / 2, 0.0], atol=1e-3)
    f_right = np.array([res[f"lc.right.W[{i}]"][-1] for i in (1, 2, 3)])  # ground frame
    c, s_ = np.cos(theta), np.sin(theta)
    bar_to_ground = np.array([[c, -s_, 0.0], [s_, c, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(f_right, -bar_to_ground @ f_left, atol=1e-9)
    w_g = np.array([res[f"g.W[{i}]"][-1] for i in range(1, 7)])
    np.testing.assert_allclose(w_g, [0.0, m_g, 0.0, 0.0, 0.0, m_g * 1.0], atol=1e-3)


def _derivative_from_a_full_evaluation(eng: Engine, t: float, x: np.ndarray) -> np.ndarray:
    """Every stateful block's derivative from one full evaluation (all kinematics kept)."""
    ev = eng.evaluate(t, x)
    dx = np.empty(eng.n_states)
    for i, b, sl in eng.stateful:
        dx[sl] = b.derivative(x[sl], ev.kin[b.name], ev.sol.extra[i])
    return dx


@pytest.mark.parametrize("case", ["closed_bar", *(f"tree{seed}" for seed in range(6))])
def test_derivative_releasing_data_early_equals_a_full_evaluation(case):
    """Engine.object_derivative (the object path of Engine.derivative; the compiled one is
    held to it in test_native.py) drops each body's kinematics after their last reader and
    solves the loop for the extra outputs only; the state derivative is the one of a full
    evaluation: random trees with revolute, prismatic,
    welded, spherical and free joints (the last two read their kinematics in the derivative),
    and a closed chain (loop-closure steps read the kinematics of both sides)."""
    if case == "closed_bar":
        eng = Engine(closed_bar())
        xs = [eng.initial_state(), eng.initial_state() + 0.3]
    else:
        seed = int(case[4:])
        eng = Engine(random_tree(seed, 12, multi_dof=True)[0])
        rng = np.random.default_rng(seed)
        xs = [random_state(eng, rng) for _ in range(3)]
    assert any(kind == "drop" for kind, _ in eng._derivative_steps)
    for x in xs:
        ref = _derivative_from_a_full_evaluation(eng, 0.25, x)
        np.testing.assert_allclose(
            eng.object_derivative(0.25, x), ref, rtol=1e-12, atol=1e-13 * np.max(np.abs(ref))
        )


class CountingConstant(Constant):
    """A Constant that counts its evaluations."""

    def __init__(self, name, value):
        super().__init__(name, value)
        self.calls = 0

    def evaluate(self, t, inputs):
        self.calls += 1
        return super().evaluate(t, inputs)


def test_constant_signal_blocks_are_evaluated_once_per_engine():
    """The engine evaluates a Constant when it is built, not at every right-hand side; the
    trajectory is the one the same effort gives through a Function evaluated every time."""
    results = []
    sources = (CountingConstant("c", [0.7]), Function("c", lambda t, u: {"y": [0.7]}, {}, {"y": 1}))
    for source in sources:
        s = System("pendulum")
        s.add(*(b for b in pendulum_parts() if b.name != "zero"), source)
        s.connect("g.C", "arm.P")
        s.connect("arm.tip", "w.P")
        s.connect("w2.P", "g.D")
        s.connect("c.y", "arm.joint.tau")
        eng = Engine(s)
        res = eng.simulate(1.0, output_interval=0.1, record=["arm.state.q", "c.y"], rtol=1e-10)
        results.append(res.values)
        if isinstance(source, CountingConstant):
            assert source.calls == 1 and eng.n_evaluations > 20
    np.testing.assert_array_equal(results[0], results[1])
    assert results[0][-1, 1] == 0.7


def test_every_listed_signal_can_be_read():
    """signal_names() of a system using every block kind all resolve to finite values."""
    s = closed_bar()
    s.add(
        ImposedMotionBody("imp", 1.0, I3, children={"C": [0, 1, 0]}, gravity=G),
        PrismaticBodyInverse("pi", 1.0, I3, axis=[1, 0, 0]),
        TimeFunction("mot", lambda t: np.r_[np.zeros(6), [t, 0, 0, 0, 0, 0], np.zeros(6)], 18),
        TimeFunction("xm", lambda t: [0.0, 0.1, 0.1 * t], 3),
        RigidBody("sat", 2.0, I3, children={"C": [1, 0, 0]}, gravity=G, twist=[0, 0, 0, 0, 0, 1]),
        RevoluteBody("boom", 1.0, I3, com=[1, 0, 0], theta0=0.2),
        JointSpringDamper("law", k=1.0, d=0.1),
    )
    s.connect("mot.y", "imp.m")
    s.connect("imp.C", "pi.P")
    s.connect("xm.y", "pi.joint.m")
    s.connect("sat.C", "boom.P")
    s.connect("boom.joint.m", "law.m")
    s.connect("law.tau", "boom.joint.tau")
    eng = Engine(s)
    ev = eng.evaluate(0.3, eng.initial_state())
    names = eng.signal_names()
    assert "lc.left.W" in names and "imp.W" in names and "pi.joint.tau" in names
    for name in names:
        v = np.asarray(eng.signal(ev, name), dtype=float)
        assert v.ndim == 1 and v.size >= 1, name
        assert np.all(np.isfinite(v)), name
    # the law reads the joint motion and its torque reaches the joint
    assert eng.signal(ev, "boom.joint.tau")[0] == pytest.approx(-1.0 * 0.2)
    # signals classified pre-loop read the same without the loop solution (sampling shortcut)
    pre = eng.evaluate(0.3, eng.initial_state(), solve=False)
    assert pre.sol is None
    n_pre = 0
    for name in names:
        full = np.asarray(eng.signal(ev, name), dtype=float)
        for i in range(full.size):
            if eng.is_pre_loop(name, i):
                n_pre += 1
                assert float(eng.signal(pre, name)[i]) == full[i], (name, i)
                # and with only the pre-loop steps this signal needs
                steps = eng.pre_loop_steps([name])
                part = eng.evaluate(0.3, eng.initial_state(), solve=False, steps=steps)
                assert float(eng.signal(part, name)[i]) == full[i], (name, i)
    assert n_pre > 40
    for name, i in [("boom.joint.m", 0), ("sat.acc", 0), ("law.m", 0), ("imp.W", 0),
                    ("boom.P.m", 8), ("lc.left.W", None)]:  # fmt: skip
        assert eng.is_pre_loop(name, i) == (name == "lc.left.W"), name
    assert eng.is_pre_loop("boom.joint.m", 2) and eng.is_pre_loop("law.tau", 0)
    assert eng.pre_loop_steps(["boom.joint.m"]) == []
    assert [(k, b.name) for k, b in eng.pre_loop_steps(["boom.position"])] == [
        ("kin", "sat"),
        ("kin", "boom"),
    ]


# ----------------------------------------------------------------------------------------------
# recording and CSV
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["arm.nope", "nope.position", "arm.twist[7]", "arm.twist[0]"])
def test_recording_unknown_signal_is_a_clear_error(name):
    eng = Engine(pendulum())
    with pytest.raises(TitopError) as info:
        eng.simulate(0.1, record=[name])
    assert name in str(info.value)


def test_reading_unknown_signal_is_a_key_error():
    eng = Engine(pendulum())
    ev = eng.evaluate(0.0, eng.initial_state())
    with pytest.raises(KeyError, match="nope"):
        eng.signal(ev, "arm.nope")
    with pytest.raises(KeyError, match="ghost"):
        eng.signal(ev, "ghost.position")


def test_nothing_to_record_is_an_error():
    with pytest.raises(TitopError, match="record"):
        Engine(pendulum()).simulate(0.1, record=[])


def test_to_csv_writes_header_and_rows(tmp_path):
    eng = Engine(pendulum())
    res = eng.simulate(
        0.3, output_interval=0.1, record={"theta": "arm.joint.m[3]", "tip": "w.position"}
    )
    assert res.columns == ["theta", "tip[1]", "tip[2]", "tip[3]"]
    path = tmp_path / "out" / "run.csv"
    res.to_csv(path)
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["time", "theta", "tip[1]", "tip[2]", "tip[3]"]
    assert len(rows) == 1 + 4  # t = 0, 0.1, 0.2, 0.3
    data = np.array(rows[1:], dtype=float)
    np.testing.assert_allclose(data[:, 0], [0.0, 0.1, 0.2, 0.3], atol=1e-12)
    np.testing.assert_array_equal(data[:, 1], res["theta"])
    np.testing.assert_array_equal(data[:, 2:], res.values[:, 1:])
    # the tip of the pendulum stays 2 m from the pivot, and it starts at rest, horizontal
    np.testing.assert_allclose(np.linalg.norm(data[:, 2:4], axis=1), 2.0, atol=1e-7)
    assert data[0, 1] == 0.0 and data[-1, 1] < 0.0
