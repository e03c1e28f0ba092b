"""The flexible-tree reference (titopfmu/reference/flexible_tree.py: the projection (TMT) method
over joint and elastic coordinates, docs/crosscheck.md) against the engine's articulated-body
recursion at random states, its own energy conservation, its refusals, and ``titopfmu
crosscheck`` of a flexible model (passing, and failing against a different model)."""

from __future__ import annotations

import numpy as np
import pytest
from flex_systems import hub_with_arrays, pendulum, strip
from scipy.integrate import solve_ivp

import titopfmu as t
from titopfmu.crosscheck import crosscheck, random_state
from titopfmu.flex import Beam, Section, cantilever_modes
from titopfmu.reference.flexible_tree import (
    FlexTreeError,
    FlexTreeReference,
    left_jacobian,
    rotation,
    skew,
)

ZERO = (0.0, 0.0, 0.0)


def reduced(n_modes: int = 6, damping: float = 0.01, load_cases=None):
    fe = strip().fe_model()
    return cantilever_modes(fe, n_modes, [fe.n_nodes - 1], damping=damping, load_cases=load_cases)


def link_with_tip_link(red, gravity=(0.0, 0.0, -9.81), m2: float = 0.4, l2: float = 0.5,
                       theta0: float = 0.4, q0=None, qd0=None) -> t.System:  # fmt: skip
    """A flexible link on a revolute joint (axis y) on Ground carrying a rigid link (m2, l2,
    centre of mass at l2 / 2) on a revolute joint (axis y) at its tip node."""
    s = t.System("flexible_double_link")
    s.add(t.Ground("ground", children={"P": ZERO}))
    s.add(t.RevoluteBody("link1", 0.1, np.diag([1e-4, 1e-4, 1e-4]), axis=(0.0, 1.0, 0.0),
                         flexible=red, theta0=theta0, elastic_q0=q0, elastic_qdot0=qd0,
                         gravity=gravity, children={"tip": tuple(red.node_positions[1])}))
    I2 = m2 * l2**2 / 12.0 * np.diag([0.01, 1.0, 1.0])
    s.add(t.RevoluteBody("link2", m2, I2, com=(l2 / 2, 0.0, 0.0), axis=(0.0, 1.0, 0.0),
                         theta0=-0.7, theta_dot0=1.5, gravity=gravity))  # fmt: skip
    s.connect("ground.P", "link1.P")
    s.connect("link1.tip", "link2.P")
    for k in (1, 2):
        s.add(t.Constant(f"tau{k}", 0.0))
        s.connect(f"tau{k}.y", f"link{k}.joint.tau")
    return s


def mixed_tree(red) -> t.System:
    """A free-floating flexible root (a hub beside the strip) carrying, at its tip node, a
    flexible body on a prismatic joint that carries a rigid body welded at its own tip node,
    with gravity, a time-varying driving force and an armature (every joint kind the
    reference models)."""
    s = t.System("mixed_tree")
    tip = tuple(red.node_positions[1])
    s.add(t.RigidBody("base", 2.0, np.diag([0.1, 0.2, 0.3]), com=(0.05, 0.0, 0.01), flexible=red,
                      children={"tip": tip}, twist=(0.1, -0.2, 0.3, 0.4, -0.5, 0.6)))
    s.add(t.PrismaticBody("slider", 0.3, np.diag([1e-3, 2e-3, 3e-3]), axis=(0.6, 0.8, 0.0),
                          P_ab=rotation(np.array([0.3, -0.2, 0.5])), flexible=red,
                          children={"tip": tip}, x0=0.1, x_dot0=-0.2, armature=0.05))  # fmt: skip
    s.add(t.WeldedBody("mass", 0.5, np.diag([1e-3, 1e-3, 2e-3]), com=(0.1, 0.02, 0.0),
                       P_ab=rotation(np.array([0.0, 0.4, 0.1]))))  # fmt: skip
    s.add(t.TimeFunction("force", lambda time: [0.7 + 0.5 * np.sin(3.0 * time)], 1))
    s.connect("base.tip", "slider.P")
    s.connect("slider.tip", "mass.P")
    s.connect("force.y", "slider.joint.tau")
    return s


def tilted_cantilever(red) -> t.System:
    """A flexible body welded (P_ab turned) at an offset port of a Ground placed and turned in
    R_i, carrying at its tip node a rigid flap on a revolute joint (turned P_a0b) driven by a
    constant torque, with gravity."""
    s = t.System("tilted_cantilever")
    s.add(t.Ground("ground", position=(0.1, 0.2, 0.3), euler=(0.3, -0.5, 0.8),
                   children={"P": (0.0, 0.1, 0.0)}))  # fmt: skip
    s.add(t.WeldedBody("beam", 0.3, np.diag([1e-3, 2e-3, 3e-3]), com=(0.02, 0.0, 0.0),
                       P_ab=rotation(np.array([0.1, 0.2, -0.3])), flexible=red,
                       children={"tip": tuple(red.node_positions[1])}))  # fmt: skip
    s.add(t.RevoluteBody("flap", 0.5, np.diag([1e-3, 4e-3, 4e-3]), com=(0.1, 0.0, 0.0),
                         axis=(0.0, 0.0, 1.0), P_a0b=rotation(np.array([0.0, 0.5, 0.0])),
                         theta0=0.2))  # fmt: skip
    s.add(t.Constant("tau", 0.1))
    s.connect("ground.P", "beam.P")
    s.connect("beam.tip", "flap.P")
    s.connect("tau.y", "flap.joint.tau")
    return s


def worst_gap(system: t.System, n_states: int = 6, seed: int = 1) -> float:
    """The largest relative gap between the engine's dx/dt and the reference's at random states
    (relative to the largest entry of the engine's)."""
    engine, ref = t.Engine(system), FlexTreeReference(system)
    rng = np.random.default_rng(seed)
    worst = 0.0
    for k in range(n_states):
        x = random_state(engine, rng)
        ours, theirs = engine.derivative(0.1 * k, x), ref.derivative(0.1 * k, x)
        worst = max(worst, float(np.max(np.abs(ours - theirs)) / np.max(np.abs(ours))))
    return worst


def test_rotation_helpers_against_definitions() -> None:
    """exp(theta~) is orthonormal with the axis fixed; J_l(theta) theta_dot is the angular
    velocity vee(Rdot R^T) (central differences), small and large angles, series and closed
    form."""
    rng = np.random.default_rng(0)
    for scale in (1e-3, 0.05, 0.5, 2.0):
        th, thd = scale * rng.normal(size=3), rng.normal(size=3)
        R = rotation(th)
        assert R @ R.T == pytest.approx(np.eye(3), abs=1e-14)
        assert R @ th == pytest.approx(th, abs=1e-14)
        e = 1e-6
        Rd = (rotation(th + e * thd) - rotation(th - e * thd)) / (2 * e)
        W = Rd @ R.T
        assert W == pytest.approx(-W.T, abs=1e-9)
        w = np.array([W[2, 1], W[0, 2], W[1, 0]])
        assert left_jacobian(th) @ thd == pytest.approx(w, rel=1e-8, abs=1e-9)
        assert skew(th) @ thd == pytest.approx(np.cross(th, thd))


@pytest.mark.parametrize("builder", ["pendulum", "tip_link", "hub", "mixed", "cantilever"])
def test_engine_matches_reference(builder: str) -> None:
    """Engine(system).derivative vs the TMT reference at random states (joint angles over the
    circle, rates +-1, elastic coordinates moving the nodes by up to 1 % of the body):
    agreement to 1e-10 relative (measured 1e-13 to 1.1e-12, tip_link the largest); with the core's
    former load values the reference differs by 5e-4 (hub) to 0.1 (tip_link), the pendulum
    excepted (its alpha cases' KG vanish: 1e-13 either way)."""
    red = reduced()
    system = {"pendulum": lambda: pendulum(red, theta0=0.3),
              "tip_link": lambda: link_with_tip_link(red),
              "hub": lambda: hub_with_arrays(red, moving=True),
              "mixed": lambda: mixed_tree(red),
              "cantilever": lambda: tilted_cantilever(red)}[builder]()  # fmt: skip
    assert worst_gap(system) < 1e-10


def test_exact_load_values_matter() -> None:
    """A heavy tip link (5 kg, 0.5 m) spinning at 20 rad/s on the tip node of a flexible link
    bent by 5 cm at its tip (its centrifugal pull, about 500 N, is the node case's load value;
    the link's angular and linear accelerations the ax..alz cases'): the engine (its passes to
    the fixed point) and the reference (the affine dependence on nudot solved at once) agree to
    1e-10 (measured 4e-13), while the reference with the core's former values (omega x v - g,
    alpha and the node wrenches zero) differs from the engine by over 1e-2 (measured 0.25),
    and the acceleration dependence G is not symmetric (|G - G^T| 3.6 % of |M|, max norms)."""
    red = reduced()
    system = link_with_tip_link(red, m2=5.0)
    engine = t.Engine(system)
    x = engine.initial_state()
    slices, n = system.check().state_slices, red.n_modes
    s1, s2 = slices["link1"].start, slices["link2"].start
    rng = np.random.default_rng(5)
    q = rng.uniform(-1.0, 1.0, n)
    q *= 0.05 / np.linalg.norm(red.node_shapes[1][:3] @ q)
    x[s1 : s1 + 2] = [0.3, 2.0]
    x[s1 + 2 : s1 + 2 + n] = q
    x[s1 + 2 + n : s1 + 2 + 2 * n] = 0.1 * rng.uniform(-1.0, 1.0, n)
    x[s2 : s2 + 2] = [-0.7, 20.0]
    ours = engine.derivative(0.0, x)
    scale = np.max(np.abs(ours))
    exact = FlexTreeReference(system).derivative(0.0, x)
    former = FlexTreeReference(system, exact_loads=False).derivative(0.0, x)
    assert np.max(np.abs(ours - exact)) / scale < 1e-10
    assert np.max(np.abs(ours - former)) / scale > 1e-2
    M, G, _ = FlexTreeReference(system).linear_system(0.0, x)
    assert np.max(np.abs(G - G.T)) > 1e-3 * np.max(np.abs(M))


def test_reference_sees_a_different_model() -> None:
    """The comparison is not vacuous: a 1 % stiffer beam in the reference's system differs
    from the engine's well above the tolerance."""
    red = reduced()
    fe = Beam("strip", 1.0, 70.7e9, 2700.0, Section.rectangle(0.03, 0.008), nu=0.3,
              n_elements=12).fe_model()  # fmt: skip
    stiff = cantilever_modes(fe, 6, [fe.n_nodes - 1], damping=0.01)
    engine, ref = t.Engine(link_with_tip_link(red)), FlexTreeReference(link_with_tip_link(stiff))
    x = random_state(engine, np.random.default_rng(3))
    ours, theirs = engine.derivative(0.0, x), ref.derivative(0.0, x)
    assert np.max(np.abs(ours - theirs)) / np.max(np.abs(ours)) > 1e-4


def test_reference_conserves_energy() -> None:
    """The reference on its own: a soft flexible link (1.5 m, 30 x 4 mm, 2 modes: 9 and 58
    rad/s) with its tip link, no gravity, no damping, no geometric stiffness, integrated by
    DOP853 (rtol 1e-10) over 1 s with the tip link spinning and the beam vibrating: kinetic
    plus elastic energy conserved to 1e-9 relative (measured 1.3e-11), while the elastic energy
    varies by over 5 % of the total (8.6 %)."""
    fe = Beam("soft", 1.5, 70e9, 2700.0, Section.rectangle(0.03, 0.004), nu=0.3,
              n_elements=8).fe_model()  # fmt: skip
    red = cantilever_modes(fe, 2, [fe.n_nodes - 1], load_cases=())
    n = red.n_modes
    system = link_with_tip_link(red, gravity=ZERO, q0=3e-3 * np.cos(np.arange(n)),
                                qd0=3e-2 * np.sin(np.arange(n) + 1.0))  # fmt: skip
    ref = FlexTreeReference(system)
    x0 = t.Engine(system).initial_state()
    sol = solve_ivp(ref.derivative, (0.0, 1.0), x0, method="DOP853", rtol=1e-10, atol=1e-12,
                    t_eval=np.linspace(0.0, 1.0, 11))  # fmt: skip
    assert sol.success
    e = np.array([ref.energy(sol.y[:, k]) for k in range(sol.y.shape[1])])
    elastic = np.array([0.5 * q @ red.Kee @ q for q in ref.elastic_coordinates(sol.y).T])
    assert np.max(elastic) - np.min(elastic) > 0.05 * e[0]  # the beam exchanges energy
    assert np.max(np.abs(e - e[0])) / e[0] < 1e-9


def test_refuses_what_it_does_not_model() -> None:
    """Spherical joints and external wrenches are refused, naming the block."""
    red = reduced()
    s = t.System("ball")
    s.add(t.Ground("ground", children={"P": ZERO}))
    s.add(t.SphericalBody("ball", 1.0, np.eye(3) * 0.1))
    s.connect("ground.P", "ball.P")
    s.add(t.Constant("tau", (0.0, 0.0, 0.0)))
    s.connect("tau.y", "ball.joint.tau")
    with pytest.raises(FlexTreeError, match="'ball'"):
        FlexTreeReference(s)
    s = pendulum(red)
    s.blocks["arm"].external = {"w": object()}
    with pytest.raises(FlexTreeError, match="'arm'.*external"):
        FlexTreeReference(s)


def small_pendulum(E: float = 70e9) -> t.System:
    """The flexible pendulum with a 2-mode strip (8 elements): a short crosscheck."""
    fe = Beam("strip", 1.0, E, 2700.0, Section.rectangle(0.03, 0.008), nu=0.3,
              n_elements=8).fe_model()  # fmt: skip
    return pendulum(cantilever_modes(fe, 2, [fe.n_nodes - 1], damping=0.01), theta0=0.3)


def test_crosscheck_of_a_flexible_model(tmp_path) -> None:
    """``crosscheck`` of a flexible model runs the TMT reference in place of Pinocchio (the
    report says so) and one FMU per block in the master's model-exchange mode as the FMU leg,
    and passes; the elastic coordinates are among the compared columns."""
    r = crosscheck(small_pendulum(), tmp_path, t_final=0.2, n_states=4, n_samples=21)
    assert r.reference == "TMT reference", r.summary()
    assert r.passed, r.summary()
    assert r.acc_error < 1e-10
    assert r.cosim_label == "FMUs + master" and "model-exchange" in r.cosim, r.summary()
    assert r.cosim_acc_error is not None and r.cosim_acc_error < 1e-12, r.summary()
    assert "arm.state.q.mode1" in r.columns
    assert "in process vs TMT reference" in (tmp_path / "report.md").read_text(encoding="utf-8")


def test_crosscheck_fails_against_a_different_model(tmp_path) -> None:
    """The same check with the reference of a 2 % stiffer beam fails on the accelerations
    (the comparison is not vacuous)."""
    other = FlexTreeReference(small_pendulum(E=71.4e9))
    r = crosscheck(small_pendulum(), tmp_path, t_final=0.2, n_states=4, n_samples=21,
                   cosim=False, reference=other)  # fmt: skip
    assert not r.passed
    assert r.acc_error > 1e-4
    assert r.verdict == "FAIL"
