"""The engine's derivative in the C core (titopfmu.core) against its object path.

The core solves the loop in the articulated-inertia form in C; the object path evaluates the
Python blocks (titopfmu.blocks.kernels) and solves the loop on their LoopMap objects with
TreeLoopSolver. They must agree to rounding on every system the core accepts; systems it does
not accept must say why and run the object path. The references of the physics itself are
elsewhere (test_pinocchio.py and test_stability.py run the engine, hence the core, against
Pinocchio's ABA).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from random_trees import random_tree
from scipy.spatial.transform import Rotation
from test_blocks import chain_system
from test_loop_closure import four_bar

from titopfmu import (
    Constant,
    Engine,
    FreeBodyInverse,
    Ground,
    ImposedMotionBody,
    InertiaWarning,
    LoopClosure,
    PrismaticBody,
    PrismaticBodyInverse,
    RevoluteBody,
    RevoluteBodyInverse,
    RigidBody,
    SimulationError,
    SphericalBodyInverse,
    System,
    TimeFunction,
    WeldedBody,
)
from titopfmu.core.model import NativeTree
from titopfmu.examples.balloon import build_balloon


@pytest.fixture(autouse=True)
def _quiet_inertia_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        yield


def random_state(engine: Engine, rng: np.random.Generator) -> np.ndarray:
    """Initial state plus noise: joint coordinates and rates, root pose and twist."""
    x = engine.initial_state() + rng.normal(scale=0.7, size=engine.n_states)
    for b in engine.tree_blocks:
        if b.kind == "rigid_body":
            sl = engine.plan.state_slices[b.name]
            q = x[sl][3:7]
            x[sl.start + 3 : sl.start + 7] = q / np.linalg.norm(q) * rng.uniform(0.9, 1.1)
    return x


def assert_same(engine: Engine, t: float, x: np.ndarray, what: str) -> None:
    """The core's derivative (called directly: Engine.derivative would fall back to the object
    path on a failure) equals Engine.derivative and the object path."""
    nt: NativeTree = engine.native
    fast = np.empty(engine.n_states)
    r = nt.derivative(t, x, engine._native_inputs(t, x), fast, engine._native_data)
    assert r == 0, (what, r)
    np.testing.assert_array_equal(engine.derivative(t, x), fast)
    ref = engine.object_derivative(t, x)
    err = np.max(np.abs(fast - ref)) / max(1.0, np.max(np.abs(ref)))
    assert err < 1e-12, f"{what}: core and object derivatives differ by {err:.3g}"


@pytest.mark.parametrize(
    ("seed", "multi_dof"), [(s, False) for s in range(12)] + [(s, True) for s in range(8)]
)
def test_random_trees_match_object_path(seed, multi_dof):
    """Random trees of revolute, prismatic and welded bodies, and (``multi_dof``) with spherical
    and free joints too (quaternion coordinates, k = 3 and 6)."""
    system, spec = random_tree(seed, multi_dof=multi_dof)
    engine = Engine(system)
    assert engine.native is not None, engine.native_reason
    rng = np.random.default_rng((200 if multi_dof else 100) + seed)
    for k in range(3):
        assert_same(engine, 0.1 * k, random_state(engine, rng), spec.describe())


def test_balloon_matches_object_path():
    engine = Engine(build_balloon())
    assert engine.native is not None
    rng = np.random.default_rng(7)
    for k in range(5):
        assert_same(engine, 0.3 * k, random_state(engine, rng), "balloon")


def ground_tree() -> System:
    """A fixed base with two children, a welded body with two child ports (one a revolute, one
    a prismatic), time-varying efforts and an external wrench in the inertial frame."""
    rng = np.random.default_rng(3)
    s = System("ground_tree")
    inertia = np.diag([0.2, 0.3, 0.4])
    s.add(
        Ground("base", children={"A": (0.1, 0.0, 0.0), "B": (0.0, 0.2, 0.0)},
               euler=(0.1, 0.2, 0.3)),
        WeldedBody("w", 2.0, inertia, com=(0.1, 0.0, 0.3), P_ab=np.eye(3),
                   children={"C1": (0.3, 0.1, 0.0), "C2": (0.0, -0.4, 0.1)},
                   external={"push": {"point": (0.0, 0.1, 0.0), "frame": "inertial"}}),
        RevoluteBody("r1", 1.0, inertia, com=(0.0, -0.3, 0.0), axis=rng.normal(size=3), theta0=0.3),
        PrismaticBody("p1", 1.5, inertia, com=(0.2, 0.0, 0.0), axis=rng.normal(size=3), x0=0.1,
                      children={"E": (0.0, 0.0, 0.2)}),
        RevoluteBody("r2", 0.7, inertia, com=(0.0, 0.0, -0.2), axis=(1.0, 0.0, 0.0)),
        RevoluteBody("r3", 0.9, inertia, com=(0.1, 0.1, 0.0), axis=(0.0, 1.0, 0.0)),
        TimeFunction("tau_r1", lambda t: [np.sin(t)], 1),
        Constant("tau_p1", 0.4),
        Constant("tau_r2", -0.2),
        TimeFunction("tau_r3", lambda t: [0.3 * t], 1),
        TimeFunction("push", lambda t: [1.0, 2.0 * t, 0.0, 0.0, 0.1, 0.0], 6),
    )  # fmt: skip
    s.connect("base.A", "w.P")
    s.connect("base.B", "r3.P")
    s.connect("w.C1", "r1.P")
    s.connect("w.C2", "p1.P")
    s.connect("p1.E", "r2.P")
    for b in ("r1", "p1", "r2", "r3"):
        s.connect(f"tau_{b}.y", f"{b}.joint.tau")
    s.connect("push.y", "w.push")
    return s


def tethered_pendulum(closure: type[LoopClosure] = LoopClosure) -> System:
    """A pendulum whose tip is tied to a ground port by a loop-closure spring-damper (one side
    of the cut on the Ground block), with a full K and D."""
    rng = np.random.default_rng(8)
    a = rng.normal(size=(6, 6))
    k = a @ a.T + 6.0 * np.eye(6)
    s = System("tether")
    s.add(
        Ground("g", children={"A": (0.0, 0.0, 0.0), "E": (0.4, -0.9, 0.1)}, euler=(0.0, 0.1, 0.2)),
        RevoluteBody("arm", 1.2, np.diag([0.1, 0.02, 0.1]), com=(0.0, -0.5, 0.0),
                     axis=(0.1, 0.2, 1.0), theta0=0.4, children={"T": (0.0, -1.0, 0.0)},
                     gravity=(0.0, -9.81, 0.0)),
        closure("tether", k, 0.05 * k),
        Constant("tau", 0.1),
    )  # fmt: skip
    s.connect("g.A", "arm.P")
    s.connect("arm.T", "tether.left")
    s.connect("tether.right", "g.E")
    s.connect("tau.y", "arm.joint.tau")
    return s


def test_multi_dof_trees_include_spherical_and_free_joints():
    kinds = set()
    for seed in range(8):
        kinds |= {b.kind for b in Engine(random_tree(seed, multi_dof=True)[0]).tree_blocks}
    assert {"spherical_body", "free_body"} <= kinds, kinds


def imposed_motion_system() -> System:
    """Inverse-dynamics blocks among forward ones: a floating base carrying an arm whose
    revolute joint follows a prescribed motion and a spherical and a free body with prescribed
    relative motions (each with a forward body below it), next to a base with a prescribed
    motion (ImposedMotionBody) carrying a forward pendulum with a prescribed slider at its end,
    and a childless ImposedMotionBody. Time-varying motions."""
    rng = np.random.default_rng(12)

    def inertia():
        a = rng.normal(size=(3, 3))
        return a @ a.T * 0.05 + 0.05 * np.eye(3)

    g = (0.0, -9.81, 0.0)
    s = System("imposed")
    s.add(
        RigidBody("base", 5.0, np.diag([1.0, 2.0, 2.5]), gravity=g, twist=rng.normal(size=6),
                  children={"A": (0.0, -0.5, 0.0), "B": (0.3, 0.0, 0.1), "C": (0.0, 0.2, 0.4)}),
        RevoluteBodyInverse("arm", 1.0, inertia(), com=(0.0, -0.4, 0.0), axis=(0.2, 0.1, 1.0),
                            gravity=g, children={"T": (0.1, -0.8, 0.0)}),
        RevoluteBody("hand", 0.4, inertia(), com=(0.0, -0.2, 0.1), theta0=0.3, gravity=g),
        SphericalBodyInverse("ball", 0.8, inertia(), com=(0.1, 0.0, -0.2), gravity=g,
                             P_a0b=Rotation.random(random_state=3).as_matrix(),
                             children={"T": (0.0, 0.0, -0.5)}),
        RevoluteBody("b2", 0.3, inertia(), com=(0.0, -0.3, 0.0), axis=(1.0, 0.0, 0.0),
                     gravity=g),
        FreeBodyInverse("drone", 0.6, inertia(), com=(0.05, 0.0, 0.0), gravity=g,
                        children={"T": (0.2, 0.0, 0.0)}),
        PrismaticBody("slide", 0.2, inertia(), axis=(0.0, 1.0, 1.0), x0=0.1, gravity=g),
        ImposedMotionBody("cart", 3.0, inertia(), gravity=g, children={"H": (0.0, -0.3, 0.0)}),
        RevoluteBody("pend", 0.5, inertia(), com=(0.0, -0.6, 0.0), theta0=1.0, gravity=g,
                     children={"S": (0.0, -0.7, 0.0)}),
        PrismaticBodyInverse("rail", 0.3, inertia(), axis=(1.0, 0.0, 0.2), gravity=g),
        ImposedMotionBody("probe", 0.7, inertia(), com=(0.1, 0.0, 0.0), gravity=g),
        TimeFunction("arm_m", lambda t: [-np.sin(t), np.cos(t), np.sin(t)], 3),
        TimeFunction("ball_m", lambda t: [0.1, -0.2 * t, 0.3, 0.1 * t, 0.2, -0.1 * t,
                                          0.3 * t, -0.2, 0.1 + t], 9),  # fmt: skip
        TimeFunction("drone_m", lambda t: np.concatenate([
            0.1 * np.cos(t + np.arange(6)), 0.2 * np.sin(t + np.arange(6)),
            [0.5 * t, 0.1, -0.2], [0.2, -0.1 * t, 0.3]]), 18),  # fmt: skip
        TimeFunction("cart_m", lambda t: np.concatenate([
            [np.cos(t), 0.0, 0.2, 0.0, 0.1, -0.3 * t], [np.sin(t), 0.1, 0.0, 0.2, 0.0, 0.1],
            [t, 0.0, 0.5], [0.1, 0.2 * t, -0.3]]), 18),  # fmt: skip
        TimeFunction("rail_m", lambda t: [0.3 * np.cos(t), 0.3 * np.sin(t), 0.1 - 0.3 * np.cos(t)],
                     3),
        Constant("probe_m", np.concatenate([0.1 * np.arange(6), 0.2 * np.ones(6),
                                            [1.0, 2.0, 0.5], [0.3, -0.2, 0.1]])),
        Constant("zero", 0.0),
    )  # fmt: skip
    for parent, child in (("base.A", "arm"), ("arm.T", "hand"), ("base.B", "ball"),
                          ("ball.T", "b2"), ("base.C", "drone"), ("drone.T", "slide"),
                          ("cart.H", "pend"), ("pend.S", "rail")):  # fmt: skip
        s.connect(parent, f"{child}.P")
    for b in ("arm", "ball", "drone", "rail"):
        s.connect(f"{b}_m.y", f"{b}.joint.m")
    s.connect("probe_m.y", "probe.m")
    for b in ("hand", "b2", "slide", "pend"):
        s.connect("zero.y", f"{b}.joint.tau")
    s.connect("cart_m.y", "cart.m")
    return s


#: name -> (builder, number of loop closures)
SYSTEMS = {
    "ground_tree": (ground_tree, 0),
    "four_bar": (lambda: four_bar(1e5), 1),
    "floating_chain_closure": (lambda: chain_system(closure=True), 1),
    "tether_to_ground": (tethered_pendulum, 1),
    "imposed_motions": (imposed_motion_system, 0),
}


@pytest.mark.parametrize("name", SYSTEMS)
def test_systems_match_object_path(name):
    """Core against object path on a Ground-rooted tree, on loop closures (their wrenches
    enter the sweep as known wrenches at two ports: a ground-rooted four-bar, a floating base
    with a closure back to it, a tether to the ground) and on inverse-dynamics blocks."""
    build, closures = SYSTEMS[name]
    engine = Engine(build())
    assert engine.native is not None, engine.native_reason
    assert engine.native.model_closures == closures
    rng = np.random.default_rng(21)
    for k in range(4):
        assert_same(engine, 0.3 * k, random_state(engine, rng), name)


class DampedRevolute(RevoluteBody):
    """A user's block type: a revolute body with its own (here unchanged) equations."""


def test_unsupported_systems_say_why_and_run_the_object_path():
    """Block types the core does not know (a user's subclass may change any
    equation) run the object path."""
    system, _ = random_tree(3)
    system.add(DampedRevolute("extra", 1.0, np.diag([0.1, 0.2, 0.3]), com=(0.0, -0.3, 0.0)),
               Constant("extra_tau", 0.2))  # fmt: skip
    ground = Ground("g", children={"A": (0.0, 0.0, 0.0)})
    system.add(ground)
    system.connect("g.A", "extra.P")
    system.connect("extra_tau.y", "extra.joint.tau")
    engine = Engine(system)
    assert engine.native is None
    assert "DampedRevolute" in engine.native_reason, engine.native_reason
    x = random_state(engine, np.random.default_rng(0))
    assert np.array_equal(engine.derivative(0.3, x), engine.object_derivative(0.3, x))


class StifferClosure(LoopClosure):
    """A user's closure law: three times the spring-damper wrench."""

    def wrenches(self, left, right):
        w_l, w_r = super().wrenches(left, right)
        return 3.0 * w_l, 3.0 * w_r


def test_a_users_loop_closure_runs_the_object_path():
    engine = Engine(tethered_pendulum(StifferClosure))
    assert engine.native is None
    assert "StifferClosure" in engine.native_reason, engine.native_reason
    plain = Engine(tethered_pendulum())
    x = random_state(engine, np.random.default_rng(1))
    assert not np.allclose(engine.derivative(0.0, x), plain.derivative(0.0, x))


def test_non_finite_state_names_a_block():
    engine = Engine(ground_tree())
    x = engine.initial_state()
    x[engine.plan.state_slices["p1"].start] = np.nan
    with pytest.raises(SimulationError, match="in block"):
        engine.derivative(0.0, x)


@pytest.mark.parametrize(
    "build",
    [lambda: random_tree(4)[0], lambda: random_tree(3, multi_dof=True)[0], tethered_pendulum,
     lambda: four_bar(1e4), imposed_motion_system],
    ids=["tree", "multi_dof_tree", "tether", "four_bar", "imposed"],
)  # fmt: skip
def test_work_buffer_is_rewritten_each_evaluation(build):
    """No value of one evaluation leaks into the next: a buffer filled with NaN (or huge
    values) gives the same derivative as a fresh one."""
    engine = Engine(build())
    nt: NativeTree = engine.native
    x = random_state(engine, np.random.default_rng(2))
    inputs = engine._native_inputs(0.2, x)
    out = []
    for fill in (0.0, np.nan, 1e300):
        data = np.full(nt.data_size, fill)
        dx = np.empty(engine.n_states)
        assert nt.derivative(0.2, x, inputs, dx, data) == 0
        out.append(dx)
    np.testing.assert_array_equal(out[0], out[1])
    np.testing.assert_array_equal(out[0], out[2])


# -- a lone block: what an FMU computes -----------------------------------------------------------


def lone_blocks():
    """One block of every built-in kind, with child ports and external wrenches."""
    from titopfmu import FreeBody, SphericalBody, SphericalBodyInverse  # noqa: F401

    rng = np.random.default_rng(11)
    inertia = np.diag([0.2, 0.3, 0.4])
    kids = {"c1": (0.1, -0.2, 0.3), "c2": (-0.3, 0.1, 0.0)}
    ext = {"w": {"point": (0.0, 0.1, 0.2), "frame": "inertial"}}
    axis = rng.normal(size=3)
    P = Rotation.random(random_state=rng).as_matrix()
    common = dict(com=(0.1, -0.2, 0.05), children=kids, external=ext)
    return [
        RigidBody("rigid", 2.0, inertia, **common, gravity=(0.1, -9.8, 0.3)),
        RevoluteBody("rev", 1.5, inertia, axis=axis, P_a0b=P, **common),
        PrismaticBody("pri", 1.2, inertia, axis=axis, P_ab=P, **common),
        WeldedBody("weld", 0.8, inertia, P_ab=P, **common),
        FreeBody("free", 1.1, inertia, P_a0b=P, **common),
        SphericalBody("sph", 0.9, inertia, P_a0b=P, **common),
        RevoluteBodyInverse("rev_inv", 1.5, inertia, axis=axis, P_a0b=P, **common),
        PrismaticBodyInverse("pri_inv", 1.2, inertia, axis=axis, P_ab=P, **common),
        SphericalBodyInverse("sph_inv", 0.9, inertia, P_a0b=P, **common),
        FreeBodyInverse("free_inv", 1.1, inertia, P_a0b=P, **common),
        ImposedMotionBody("imposed", 1.3, inertia, **common),
        Ground("ground", children=kids, position=(0.1, 0.2, 0.3), euler=(0.3, -0.2, 0.1)),
    ]


def lone_case(block, rng):
    """The lone model, a state, an input vector and the Python block's own evaluation of it."""
    from titopfmu.blocks.standalone import port_kinematics

    nt = NativeTree.lone_block(block)
    x = block.initial_state() + 0.3 * rng.normal(size=block.n_states)
    inputs = rng.normal(size=nt.nin)
    sig = {}
    for _, port, w, off in nt.inputs:
        sig[port] = inputs[off : off + w]
    for _, e, off in nt.externals:
        sig[e] = inputs[off : off + 6]
    acc_p = parent = None
    if nt.parent_input is not None:
        m = inputs[nt.parent_input : nt.parent_input + 18]
        acc_p, parent = m[0:6], port_kinematics(m)
    w_c = np.concatenate([inputs[o : o + 6] for o in nt.port_inputs]) if nt.port_inputs else None
    kin = block.kinematics(x, parent, sig)
    ref = block.respond(kin, sig, acc_p, w_c)
    return nt, x, inputs, ref


@pytest.mark.parametrize("block", lone_blocks(), ids=lambda b: b.name)
def test_lone_block_outputs_match_the_python_block(block):
    """The core evaluating one block from its port values (parent motion, child wrenches,
    signals: what an FMU does) equals the Python block's ``respond`` (its acceleration, the
    wrench on its parent, its joint acceleration, effort or external wrench)."""
    nt, x, inputs, ref = lone_case(block, np.random.default_rng(3))
    data = nt.new_data()
    dx = np.empty(nt.n_states)
    assert nt.derivative(0.2, x, inputs, dx, data, full=True) == 0
    got = {"acc": nt.body_values(data, "acc", 6)[0]}
    want = {"acc": ref.acc}
    if ref.w_p is not None:
        got["W_P"], want["W_P"] = nt.body_values(data, "wrench_parent", 6)[0], ref.w_p
    if ref.extra is not None:
        k = ref.extra.size
        field = ("out" if isinstance(block, (ImposedMotionBody, Ground))
                 else "effort" if getattr(block, "inverse", False) else "alpha")  # fmt: skip
        got["extra"], want["extra"] = nt.body_values(data, field, k)[0], ref.extra
    for key, value in want.items():
        err = np.max(np.abs(got[key] - value)) / max(1.0, np.max(np.abs(value)))
        assert err < 1e-12, f"{block.name} {key}: core {got[key]} python {value}"


@pytest.mark.parametrize("block", lone_blocks(), ids=lambda b: b.name)
def test_lone_block_output_derivatives_are_exact(block):
    """Directional derivatives of every output and state rate of a block along random input
    and state directions (complex step) agree with central differences."""
    rng = np.random.default_rng(4)
    nt, x, inputs, _ = lone_case(block, rng)
    vx, vin = rng.normal(size=x.size), rng.normal(size=inputs.size)
    d_data, d_dx = nt.directional(0.2, x, inputs, vx, vin)
    h = 1e-6
    outs = []
    for s in (1.0, -1.0):
        data = nt.new_data()
        dx = np.empty(nt.n_states)
        assert nt.derivative(0.2, x + s * h * vx, inputs + s * h * vin, dx, data, True) == 0
        outs.append((data, dx))
    fields = [("acc", 6), ("wrench_parent", 6), ("alpha", 6), ("effort", 6), ("out", 6)]
    for f, w in fields:
        exact = nt.body_values(d_data, f, w)[0]
        central = (nt.body_values(outs[0][0], f, w)[0] - nt.body_values(outs[1][0], f, w)[0]) / (
            2 * h
        )
        used = {"acc": True, "wrench_parent": block.has_parent,
                "alpha": isinstance(block, RigidBody) or (getattr(block, "joint", None) is not None
                                                           and not block.inverse),
                "effort": getattr(block, "inverse", False),
                "out": isinstance(block, (ImposedMotionBody, Ground))}[f]  # fmt: skip
        if not used:
            continue
        k = block.joint.dof if f in ("alpha", "effort") and hasattr(block, "joint") else 6
        if k == 0:  # a weld has no joint acceleration
            continue
        scale = max(1.0, np.max(np.abs(exact[:k])))
        assert np.max(np.abs(exact[:k] - central[:k])) < 1e-6 * scale, (block.name, f)
    if x.size:
        central = (outs[0][1] - outs[1][1]) / (2 * h)
        assert np.max(np.abs(d_dx - central)) < 1e-6 * max(1.0, np.max(np.abs(d_dx)))


@pytest.mark.parametrize(
    "build", [build_balloon, ground_tree, imposed_motion_system, lambda: random_tree(5)[0]],
    ids=["balloon", "ground_tree", "imposed", "tree"],
)  # fmt: skip
def test_sampled_outputs_from_the_core_equal_the_object_path(build):
    """Engine.simulate samples poses, twists, accelerations, joint motions and efforts and the
    wrenches of fixed and imposed-motion bodies from one full evaluation in the core; the same
    signals evaluated by the object blocks at the recorded states agree to rounding."""
    engine = Engine(build())
    names = []
    for b in engine.tree_blocks:
        names += [f"{b.name}.{s}" for s in ("position", "euler", "twist", "acc")]
        if getattr(b, "joint", None) is not None and b.joint.dof:
            names.append(f"{b.name}.joint.tau" if b.inverse else f"{b.name}.joint.m")
        if isinstance(b, (Ground, ImposedMotionBody)):
            names.append(f"{b.name}.W")
    states = [f"{b.name}.state.{s}" for b in engine.tree_blocks for s in b.state_names]
    assert engine._native_readers(names) is not None
    res = engine.simulate(0.2, output_interval=0.05, record=names + states)
    for row in range(len(res.time)):
        t = res.time[row]
        x = np.empty(engine.n_states)
        for b in engine.tree_blocks:
            sl = engine.plan.state_slices[b.name]
            x[sl] = [res[f"{b.name}.state.{n}"][row] for n in b.state_names]
        ev = engine.evaluate(t, x)
        for name in names:
            ref = engine.signal(ev, name)
            cols = [name] if ref.size == 1 else [f"{name}[{k + 1}]" for k in range(ref.size)]
            got = np.array([res[c][row] for c in cols])
            if name.endswith("euler"):
                got, ref = np.unwrap([got, ref], axis=0)
            err = np.max(np.abs(got - ref)) / max(1.0, np.max(np.abs(ref)))
            assert err < 1e-11, f"{name} at t = {t}: core {got}, object path {ref}"


class PushedRevolute(RevoluteBody):
    """A user's block type that overrides only ``bias``: a constant torque of 0.7 N m about
    body-frame z at P, added to the inherited (core) bias."""

    def bias(self, twist, R, signals):
        return super().bias(twist, R, signals) - np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.7])


def test_a_users_bias_override_enters_the_inherited_equations():
    """The subclass (object path) equals the built-in block with the same torque as an external
    wrench input (core path): the overridden bias enters loop_map and respond."""

    def build(cls, external):
        s = System("pushed")
        s.add(
            RigidBody("base", 4.0, np.diag([1.0, 2.0, 2.5]), children={"A": (0.0, -0.5, 0.0)},
                      twist=(0.1, 0.0, 0.2, 0.3, -0.1, 0.2)),
            cls("arm", 1.0, np.diag([0.1, 0.02, 0.1]), com=(0.0, -0.4, 0.0), axis=(0.2, 0.1, 1.0),
                theta0=0.4, external={"push": {"point": (0.0, 0.0, 0.0)}} if external else None),
            Constant("tau", 0.1),
        )  # fmt: skip
        s.connect("base.A", "arm.P")
        s.connect("tau.y", "arm.joint.tau")
        if external:
            s.add(Constant("push", [0.0, 0.0, 0.0, 0.0, 0.0, 0.7]))
            s.connect("push.y", "arm.push")
        return Engine(s)

    user, ref = build(PushedRevolute, False), build(RevoluteBody, True)
    assert user.native is None and ref.native is not None
    x = random_state(ref, np.random.default_rng(5))
    got, want = user.derivative(0.2, x), ref.derivative(0.2, x)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert not np.allclose(got, build(RevoluteBody, False).derivative(0.2, x))
    ev = user.evaluate(0.2, x)
    np.testing.assert_allclose(user.signal(ev, "arm.acc"),
                               ref.signal(ref.evaluate(0.2, x), "arm.acc"), rtol=1e-12, atol=1e-12)


def test_a_system_whose_blocks_used_the_core_pickles_and_copies():
    """Blocks keep their one-body core model (the object path's) as a cache: a system that used
    it still pickles (Dask ships systems to workers) and deep-copies, and the copies give the
    same object-path derivative bit for bit."""
    import copy
    import pickle

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = build_balloon()
    x = Engine(s).initial_state()
    ref = Engine(s).object_derivative(0.1, x)  # builds every block's core model
    assert all("_core" in b.__dict__ for b in s.blocks.values() if hasattr(b, "core"))
    for other in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s)):
        assert np.array_equal(Engine(other).object_derivative(0.1, x), ref)
