"""The co-simulation master on real FMUs, against the in-process engine.

The balloon of seed 004 is co-simulated with the FMUs of ``titopfmu build`` and compared with the
engine at tight tolerances: the loop solution at a communication point is exact, the default
coupling error is fourth order in the step (second with the mid-step extrapolation), within
1e-4 over 20 s at the default settings, the variable step follows its tolerance; the interface
Jacobians are measured at the start and reused. A root carrying a child 1000 times heavier or
lighter is solved in at most two iterations per step by the default (Newton) loop solver, where
plain Gauss-Seidel fails. A four-bar closed by a loop-closure FMU matches the engine. A failing
FMU call is reported with the component, the variables and the FMU's own message.
"""

from __future__ import annotations

import csv
import warnings

import numpy as np
import pytest

from titopfmu import Engine, InertiaWarning
from titopfmu.examples.balloon import (
    COLUMNS,
    COSIM_RECORD,
    balloon_columns_from_cosim,
    build_balloon,
    build_balloon_cosim,
    run_balloon,
)
from titopfmu.fmi.build import build_fmus
from titopfmu.master import CosimError, CoSimulation

pytestmark = pytest.mark.filterwarnings("ignore:.*triangle inequality")

TYPES = ["rigid_body", "prismatic_body", "revolute_body", "joint_spring_damper"]


@pytest.fixture(scope="module")
def fmu_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("fmus_master")
    build_fmus(out, types=TYPES, max_children=1)
    return out


@pytest.fixture(scope="module")
def reference():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        return run_balloon(0.3, 0.01, rtol=1e-12, atol=1e-13)


def max_error(result, ref, t_end):
    cols = balloon_columns_from_cosim(result)
    n = len(ref["time"])
    assert np.allclose(cols["time"][:n], ref["time"][:n])
    return max(float(np.max(np.abs(cols[k][:n] - ref[k][:n]))) for k in COLUMNS)


def test_the_loop_solution_at_a_point_is_the_engines(fmu_dir):
    """At t = 0 the FMUs' accelerations after the loop solve equal the engine's to 1e-10."""
    cs = build_balloon_cosim(fmu_dir)
    cs._plan()
    cs.initialize(0.0)
    try:
        cs.solve_loop()
        assert cs.last_iterations == 1  # fresh interface Jacobians: one Newton iteration
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InertiaWarning)
            engine = Engine(build_balloon())
        ev = engine.evaluate(0.0, engine.initial_state())
        for name in ("balloon", "slider", "pend1", "pend2"):
            c = cs.components[name]
            got = np.array(c.slave.getReal([c.vr[f"body.m[{i}]"] for i in range(1, 19)]))
            np.testing.assert_allclose(got, engine.signal(ev, f"{name}.m"), rtol=1e-10,
                                       atol=1e-10, err_msg=name)  # fmt: skip
        q1 = cs.components["pend1"]
        np.testing.assert_allclose(
            q1.slave.getReal([q1.vr["joint.m[1]"]]),
            engine.signal(ev, "pend1.joint.m")[0:1],
            rtol=1e-10,
        )
    finally:
        cs.free()


def test_mid_step_extrapolation_is_second_order_in_the_step(fmu_dir, reference):
    errors = {}
    for h in (2e-3, 1e-3, 5e-4):
        cs = build_balloon_cosim(fmu_dir)
        cs.coupling = "extrapolated"
        res = cs.simulate(0.3, h, record=COSIM_RECORD, output_interval=0.01)
        errors[h] = max_error(res, reference, 0.3)
        # the interface Jacobians (one per body) are measured at the start and then reused:
        # exact Jacobians and the first guess keep it at about one iteration per step. Each loop
        # equation is judged relative to the largest of its unit in the model (all the torques,
        # all the forces, ...: titopfmu/master/loop.py scales): at 2 ms the first guess of the
        # torques is about the tolerance off, and one step in four takes a second iteration
        steps = len(res.iterations) - 1
        # (measured: 19, 8 and 8 Jacobians for the 4 bodies at 2, 1 and 0.5 ms, 1.24, 1.007 and
        # 1.003 iterations per step; 32, 13 and 12, 1.56, 1.023 and 1.012 with each group judged
        # by its own port's size; 7, 8 and 8, 1.007, 1.007 and 1.003 with one absolute scale)
        n_jac = 2 * len(cs.order) + (steps // 12 if h > 1e-3 else 0)
        assert cs.stats.jacobian_updates <= n_jac, (h, cs.stats.jacobian_updates)
        assert max(res.iterations[1:]) <= 2, h
        assert np.mean(res.iterations[1:]) <= (1.3 if h > 1e-3 else 1.02), h
        if h == 1e-3:  # 7 FMUs: 14 calls to step them, one read (and write) of each per point
            assert cs.stats.fmu_calls / steps <= 48, cs.stats.fmu_calls / steps
    assert errors[5e-4] < 2e-5, errors
    order = np.log2(errors[2e-3] / errors[5e-4]) / 2.0
    assert order > 1.7, errors  # held inputs alone would give 1


def test_line_weights_give_the_least_squares_line_of_the_interpolating_polynomial():
    """The line a + b s of _line_weights against numpy: the cubic through four values,
    sampled densely over the step, fitted by least squares."""
    from titopfmu.master.cosim import _line_weights

    rng = np.random.default_rng(3)
    h = 1.3e-3
    s = np.array([-3.1e-3, -2.2e-3, -0.9e-3, 0.0])  # unequal past steps
    v = rng.normal(size=4)
    alpha, beta = _line_weights(s, h)
    x = (np.arange(20000) + 0.5) / 20000  # midpoints, in units of h (a well-conditioned fit)
    b_ref, a_ref = np.polyfit(x, np.polyval(np.polyfit(s / h, v, 3), x), 1)
    assert abs(alpha @ v - a_ref) < 1e-7 and abs(h * (beta @ v) - b_ref) < 1e-7
    # weights sum to one (a constant stays itself, with no slope)
    assert abs(alpha.sum() - 1.0) < 1e-12 and abs(beta.sum()) < 1e-9 / h


@pytest.fixture(scope="module")
def reference_5s():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        return run_balloon(5.0, 0.02, rtol=1e-12, atol=1e-13)


def test_polynomial_coupling_is_fourth_order_with_rk4_inside(fmu_dir, reference_5s):
    """The default coupling (lines over the step from the cubic through the last four values,
    sent with fmi2SetRealInputDerivatives) with the FMUs' RK4 (from_system's default): the error
    falls 16-fold when the step halves (8: third order, 4: second). With the FMUs' own default,
    Heun's method, the same step is far less accurate: the internal method then dominates."""
    errors = {}
    for h in (4e-3, 2e-3):
        cs = build_balloon_cosim(fmu_dir)
        assert cs.coupling == "polynomial"
        res = cs.simulate(5.0, h, record=COSIM_RECORD, output_interval=0.02)
        errors[h] = max_error(res, reference_5s, 5.0)
    assert errors[4e-3] / errors[2e-3] > 10.0, errors
    heun = build_balloon_cosim(fmu_dir, solver_method=2)
    res = heun.simulate(5.0, 2e-3, record=COSIM_RECORD, output_interval=0.02)
    assert max_error(res, reference_5s, 5.0) > 5.0 * errors[2e-3], errors


def test_balloon_at_default_settings_is_within_1e_4_of_the_engine_over_20_s(fmu_dir):
    """Issue 21: ``CoSimulation.from_system(system).simulate(20.0)`` with every setting at its
    default (step 1 ms, polynomial coupling, RK4 in the FMUs) against the engine at tight
    tolerances, at equal times."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        ref = run_balloon(20.0, 0.02, rtol=1e-12, atol=1e-13)
        cs = CoSimulation.from_system(build_balloon(), fmu_dir)
    res = cs.simulate(20.0, record=COSIM_RECORD, output_interval=0.02)
    err = max_error(res, ref, 20.0)
    assert err < 1e-4, err


def test_held_inputs_are_first_order(fmu_dir, reference):
    errors = {}
    for h in (2e-3, 1e-3):
        cs = build_balloon_cosim(fmu_dir)
        cs.coupling = "hold"
        res = cs.simulate(0.3, h, record=COSIM_RECORD, output_interval=0.01)
        errors[h] = max_error(res, reference, 0.3)
    assert 1.5 < errors[2e-3] / errors[1e-3] < 2.6, errors


def test_variable_step_follows_its_tolerance(fmu_dir, reference):
    errors, steps = {}, {}
    for tol in (1e-5, 1e-7):
        cs = build_balloon_cosim(fmu_dir)
        res = cs.simulate(0.3, 1e-3, record=COSIM_RECORD, output_interval=0.01,
                          step_tolerance=tol)  # fmt: skip
        errors[tol] = max_error(res, reference, 0.3)
        steps[tol] = cs.accepted
    assert errors[1e-7] < errors[1e-5] and errors[1e-7] < 1e-5, errors
    assert steps[1e-7] > steps[1e-5], steps


@pytest.mark.parametrize(
    "method, coupling, degree, order",
    [(4, "polynomial", None, 4), (2, "polynomial", None, 2), (4, "polynomial", 1, 2),
     (4, "extrapolated", None, 2), (4, "hold", None, 1)],
)  # fmt: skip
def test_variable_steps_assume_the_order_of_the_coupling_and_the_fmus(
    fmu_dir, method, coupling, degree, order
):
    """Step doubling divides by 2^p - 1 with p the run's order: the coupling's, at most the
    FMUs' internal one (their solver.method)."""
    cs = build_balloon_cosim(fmu_dir, solver_method=method)
    cs.coupling, cs.extrapolation_degree = coupling, degree
    cs.initialize(0.0)
    try:
        assert cs._step_order() == order
    finally:
        cs.free()


def test_csv_is_in_the_cross_check_format(fmu_dir, tmp_path):
    cs = build_balloon_cosim(fmu_dir)
    res = cs.simulate(0.01, 1e-3, record={"theta1": "pend1.joint.m[3]", "q": "slider.joint.m"})
    res.to_csv(tmp_path / "r.csv")
    text = (tmp_path / "r.csv").read_text().splitlines()
    assert text[0] == '"time","theta1","q[1]","q[2]","q[3]"'
    rows = list(csv.reader(text[1:]))
    assert len(rows) == 11 and float(rows[-1][0]) == pytest.approx(0.01)


# -- mass ratios ------------------------------------------------------------------------------


def two_bodies(fmu_dir, child_mass: float) -> CoSimulation:
    cs = CoSimulation()
    cs.add("root", fmu_dir / "TitopRigidBodyC1.fmu", {
        "mass": 1.0, "inertia": np.diag([0.1, 0.2, 0.3]), "C1.point": [0.3, 0.0, 0.0],
        "gravity": [0.0, 0.0, 0.0], "twist": [0.1, 0.0, 0.0, 0.0, 0.2, 0.5],
    })  # fmt: skip
    cs.add("child", fmu_dir / "TitopRevoluteBodyC0.fmu", {
        "mass": child_mass, "inertia": np.diag([1.0, 2.0, 1.5]) * child_mass / 10.0,
        "com": [0.5, 0.1, 0.0], "axis": [0.0, 0.0, 1.0], "theta_dot0": 1.0,
        "gravity": [0.0, 0.0, 0.0],
    })  # fmt: skip
    cs.connect("root.C1", "child.P")
    cs.set_input("child.joint.tau", 0.0)
    return cs


@pytest.mark.parametrize("ratio", [1e4, 1000.0, 1e-3, 1e-4])
def test_newton_converges_in_two_iterations_whatever_the_mass_ratio(fmu_dir, ratio):
    cs = two_bodies(fmu_dir, ratio)
    res = cs.simulate(0.05, 1e-3, record=["child.joint.m[3]"])
    its = res.iterations
    assert its[0] == 1
    assert max(its[1:]) <= 2, its


def test_gauss_seidel_fails_on_a_heavy_child_and_keeps_the_results(fmu_dir):
    cs = two_bodies(fmu_dir, 1000.0)
    cs.loop = "gauss-seidel"
    with pytest.raises(CosimError, match="Gauss-Seidel (did not converge|diverged)") as info:
        cs.simulate(0.05, 1e-3, record=["child.joint.m[3]"])
    assert info.value.time == 0.0
    assert info.value.result is not None


def test_gauss_seidel_crawls_on_a_light_child_and_newton_does_not(fmu_dir):
    light = two_bodies(fmu_dir, 0.1)  # a tenth of the root's mass: slow contraction
    light.loop = "gauss-seidel"
    r_gs = light.simulate(0.01, 1e-3, record=["child.joint.m[3]"])
    newton = two_bodies(fmu_dir, 0.1)
    r_n = newton.simulate(0.01, 1e-3, record=["child.joint.m[3]"])
    assert min(r_gs.iterations) > 5 * max(r_n.iterations)
    np.testing.assert_allclose(r_gs["child.joint.m[3]"], r_n["child.joint.m[3]"], atol=1e-9)


# -- a closed chain -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def closure_fmu_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("fmus_closure")
    build_fmus(out, types=["ground", "revolute_body", "loop_closure"], max_children=2)
    return out


G_FOUR_BAR = [0.0, -9.81, 0.0]
THETA = np.deg2rad(60.0)
K_PIN = np.diag([1e3, 1e3, 1e3, 1e3, 1e3, 0.0])  # a revolute pin: the rotation about z is free
D_PIN = np.diag([1.0, 1.0, 1.0, 1.0, 1.0, 0.0]) * 2.0 * np.sqrt(1e3)
#: bar -> (length, joint angle at rest, parent port)
BARS = {"crank": (1.0, THETA, "A"), "coupler": (2.0, -THETA, "B"), "rocker": (1.0, THETA, "D")}


def rod(length: float) -> dict:
    """A thin rod of 1 kg along x from its joint."""
    j = length**2 / 12.0
    return {"mass": 1.0, "inertia": np.diag([1e-4, j, j]), "com": [length / 2, 0.0, 0.0]}


def four_bar_engine(t_end: float):
    from titopfmu import Constant, Ground, LoopClosure, RevoluteBody, System

    s = System()
    s.add(Ground("ground", children={"A": [0, 0, 0], "D": [2.0, 0, 0]}), Constant("free", 0.0),
          LoopClosure("pin", K=K_PIN, D=D_PIN))  # fmt: skip
    for name, (length, q0, _) in BARS.items():
        tip = "B" if name == "crank" else "C"
        s.add(RevoluteBody(name, **rod(length), theta0=q0, children={tip: [length, 0, 0]},
                           gravity=G_FOUR_BAR))  # fmt: skip
        s.connect("free.y", f"{name}.joint.tau")
    s.connect("ground.A", "crank.P")
    s.connect("crank.B", "coupler.P")
    s.connect("ground.D", "rocker.P")
    s.connect("coupler.C", "pin.left")
    s.connect("rocker.C", "pin.right")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        return Engine(s).simulate(t_end, output_interval=0.01, rtol=1e-12, atol=1e-13,
                                  record={n: f"{n}.joint.m[3]" for n in BARS})  # fmt: skip


def four_bar_cosim(d) -> CoSimulation:
    cs = CoSimulation()
    cs.add("ground", d / "TitopGroundC2.fmu", {"C2.point": [2.0, 0.0, 0.0]})
    for name, (length, q0, _) in BARS.items():
        cs.add(name, d / "TitopRevoluteBodyC1.fmu", {
            **rod(length), "C1.point": [length, 0.0, 0.0], "axis": [0.0, 0.0, 1.0],
            "theta0": q0, "gravity": G_FOUR_BAR})  # fmt: skip
        cs.set_input(f"{name}.joint.tau", 0.0)
    cs.add("pin", d / "TitopLoopClosure.fmu", {"K": K_PIN, "D": D_PIN})
    cs.connect("ground.C1", "crank.P")
    cs.connect("crank.C1", "coupler.P")
    cs.connect("ground.C2", "rocker.P")
    cs.connect("coupler.C1", "pin.left")  # the closure's wrenches reach the bodies before the
    cs.connect("rocker.C1", "pin.right")  # loop, after the bodies' poses reached the closure
    return cs


def test_a_four_bar_closed_by_a_loop_closure_fmu_matches_the_engine(closure_fmu_dir):
    t_end = 0.3
    ref = four_bar_engine(t_end)
    errors = {}
    for h in (2e-3, 1e-3):
        cs = four_bar_cosim(closure_fmu_dir)
        res = cs.simulate(t_end, h, record=[f"{n}.joint.m[3]" for n in BARS],
                          output_interval=0.01)  # fmt: skip
        assert res.iterations[0] == 1 and max(res.iterations[1:]) <= 2, res.iterations
        errors[h] = max(float(np.max(np.abs(res[f"{n}.joint.m[3]"] - ref[n]))) for n in BARS)
    assert np.ptp(ref["crank"]) > 0.2  # the mechanism falls under gravity
    assert errors[1e-3] < 5e-6, errors
    assert errors[2e-3] / errors[1e-3] > 3.0, errors  # second order


# -- failures ---------------------------------------------------------------------------------


def root_and_arm(fmu_dir) -> CoSimulation:
    cs = CoSimulation()
    cs.add("root", fmu_dir / "TitopRigidBodyC1.fmu")
    cs.add("arm", fmu_dir / "TitopRevoluteBodyC0.fmu", {"mass": 1.0, "com": [0.3, 0.0, 0.0]})
    cs.connect("root.C1", "arm.P")
    cs.set_input("arm.joint.tau", 0.0)
    return cs


def test_a_failing_read_names_the_component_the_variables_and_the_fmus_message(fmu_dir):
    cs = root_and_arm(fmu_dir)
    cs.set_input("arm.joint.tau", 1e308)  # finite, but the joint acceleration overflows
    with pytest.raises(CosimError) as info:
        cs.simulate(0.01, 1e-3, record=["arm.joint.m[3]"])
    msg = str(info.value)
    assert "component 'arm': fmi2GetReal of P.W[1..6]" in msg, msg
    assert "is not finite" in msg, msg  # what the FMU logged
    assert info.value.time == 0.0 and info.value.result is not None


def test_a_failing_step_names_the_fmus_message_whichever_instance_logs_last(fmu_dir):
    """fmpy routes every instance's log through one process-wide proxy: the message of 'root'
    (instantiated first) must still reach 'root', not the last instance."""
    cs = root_and_arm(fmu_dir)
    cs.initialize(0.0)
    try:
        cs.solve_loop()
        with pytest.raises(CosimError, match=r"fmi2DoStep of component 'root' failed .*step "
                                             r"size -0.001 must be > 0") as info:  # fmt: skip
            cs.do_step(-1e-3)
        assert info.value.time == 0.0
        assert not cs.components["arm"].messages
    finally:
        cs.free()


# -- bad input --------------------------------------------------------------------------------


def test_bad_setups_are_refused_before_stepping(fmu_dir):
    cs = CoSimulation()
    with pytest.raises(CosimError, match="not found"):
        cs.add("x", fmu_dir / "NoSuch.fmu")
    cs.add("root", fmu_dir / "TitopRigidBodyC1.fmu")
    cs.add("arm", fmu_dir / "TitopRevoluteBodyC0.fmu")
    with pytest.raises(CosimError, match="already exists"):
        cs.add("arm", fmu_dir / "TitopRevoluteBodyC0.fmu")
    with pytest.raises(CosimError, match="no component 'nope'"):
        cs.connect("nope.C1", "arm.P")
    with pytest.raises(CosimError, match="child port"):
        cs.connect("arm.P", "root.C1")
    with pytest.raises(CosimError, match="no variable 'joint.bogus'"):
        cs.connect("arm.joint.bogus", "root.ext.W")
    with pytest.raises(CosimError, match="differ in size"):
        cs.connect("arm.joint.m", "root.ext.W")
    with pytest.raises(CosimError, match="'P' is not connected|parent port 'arm.P'"):
        cs.simulate(0.01, 1e-3)
    cs.connect("root.C1", "arm.P")
    for kwargs, match in (({"step": 0.0}, "positive"), ({"step": -1e-3}, "positive"),
                          ({"step": 3e-3}, "divide")):  # fmt: skip
        with pytest.raises(CosimError, match=match):
            cs.simulate(0.01, **kwargs)
    with pytest.raises(CosimError, match="after the start time"):
        cs.simulate(0.0, 1e-3, start_time=1.0)
    with pytest.raises(CosimError, match="no variable 'massive'"):
        CoSimulation().add("c", fmu_dir / "TitopRigidBodyC0.fmu", {"massive": 1.0})
    cs2 = CoSimulation()
    cs2.add("c", fmu_dir / "TitopRigidBodyC0.fmu", {"mass": -1.0})
    with pytest.raises(CosimError, match="mass"):
        cs2.simulate(0.01, 1e-3)


def test_a_signal_that_depends_on_an_acceleration_is_refused(fmu_dir):
    cs = CoSimulation()
    cs.add("root", fmu_dir / "TitopRigidBodyC1.fmu")
    cs.add("arm", fmu_dir / "TitopRevoluteBodyC0.fmu")
    cs.add("law", fmu_dir / "TitopJointSpringDamper.fmu", {"k": 1.0})
    cs.connect("root.C1", "arm.P")
    cs.connect("arm.joint.m", "law.joint.m")  # q̈ goes to an input the law does not use: fine
    cs.connect("law.joint.tau", "arm.joint.tau")
    res = cs.simulate(0.002, 1e-3, record=["law.joint.m[1]", "arm.joint.m[1]"])
    assert res["law.joint.m[1]"][-1] == res["arm.joint.m[1]"][-1]  # q̈ carried after the loop
    bad = CoSimulation()
    bad.add("root", fmu_dir / "TitopRigidBodyC1.fmu")
    bad.add("arm", fmu_dir / "TitopRevoluteBodyC0.fmu")
    bad.connect("root.C1", "arm.P")
    bad.connect("root.body.m[1]", "arm.joint.tau")  # an acceleration driving a joint effort
    with pytest.raises(CosimError, match="loop variable"):
        bad.simulate(0.002, 1e-3)


def test_inputs_are_either_held_or_connected_and_can_be_recorded(fmu_dir):
    cs = CoSimulation()
    cs.add("root", fmu_dir / "TitopRigidBodyC1.fmu")
    cs.add("arm", fmu_dir / "TitopRevoluteBodyC0.fmu", {"theta0": 0.2})
    cs.add("law", fmu_dir / "TitopJointSpringDamper.fmu", {"k": 2.0})
    cs.connect("root.C1", "arm.P")
    cs.connect("arm.joint.m", "law.joint.m")
    cs.set_input("arm.joint.tau", 0.5)
    with pytest.raises(CosimError, match="held by set_input"):
        cs.connect("law.joint.tau", "arm.joint.tau")
    with pytest.raises(CosimError, match="connected; it cannot also be held"):
        cs.set_input("law.joint.m", [0.0, 0.0, 0.0])
    with pytest.raises(CosimError, match="connected; it cannot also be held"):
        cs.set_input("arm.P.m", np.zeros(18))
    with pytest.raises(CosimError, match="causality 'parameter', not 'input'"):
        cs.set_input("arm.solver.method", 2)
    res = cs.simulate(0.002, 1e-3, record=["root.ext.W", "arm.joint.tau", "law.joint.tau"])
    assert res["arm.joint.tau"][-1] == 0.5 and res["root.ext.W[1]"][-1] == 0.0
    assert res["law.joint.tau"][0] == pytest.approx(-2.0 * 0.2)


def test_port_names_resolve_and_wrong_names_list_the_valid_ones(fmu_dir):
    cs = CoSimulation()
    cs.add("base", fmu_dir / "TitopRigidBodyC1.fmu", {"gravity": [0, 0, 0]})
    cs.add("arm", fmu_dir / "TitopRevoluteBodyC0.fmu", {"com": [0, -0.5, 0], "gravity": [0, 0, 0]})
    cs.add("motor", fmu_dir / "TitopJointSpringDamper.fmu", {"k": 5.0, "d": 0.5})
    # a port joined to a signal: the port is recognised, the free parent ports are listed
    with pytest.raises(CosimError) as info:
        cs.connect("base.C1", "motor.joint.m")
    msg = str(info.value)
    assert "'base.C1' is a child port (motion vector out, wrench in)" in msg
    assert "'motor.joint.m' is not a port" in msg and msg.endswith("parent ports: arm.P")
    assert "has no variable" not in msg
    with pytest.raises(
        CosimError,
        match=r"'arm.P' is a parent port .* fed by a child port, and "
        r"'motor.joint.tau' is not a port\. Unconnected child ports: base.C1",
    ):
        cs.connect("motor.joint.tau", "arm.P")  # fmt: skip
    with pytest.raises(CosimError, match=r"connect\('base.C1', 'arm.P'\)"):
        cs.connect("arm.P", "base.C1")
    # unknown names: a close match and every valid name of the right causality
    with pytest.raises(CosimError) as info:
        cs.connect("arm.joint.mm", "motor.joint.m")
    msg = str(info.value)
    assert msg.startswith("'arm.joint.mm': component 'arm' has no variable 'joint.mm' "
                          "(did you mean 'joint.m'?); valid output names: ")  # fmt: skip
    outputs = msg.split("valid output names: ")[1].split(", ")
    assert "joint.m" in outputs and "body.m" in outputs and "P" in outputs
    assert "joint.tau" not in outputs and "mass" not in outputs  # an input, a parameter
    with pytest.raises(CosimError, match=r"'C1' is a TITOP port: name its variables 'C1.m', "):
        cs.set_input("base.C1", np.zeros(24))
    with pytest.raises(CosimError, match=r"no component 'bse'; components: base, arm, motor"):
        cs.connect("bse.C1", "arm.P")
    # the right names connect; a record names its reference once, without doubled quotes
    cs.connect("base.C1", "arm.P")
    cs.connect("arm.joint.m", "motor.joint.m")
    cs.connect("motor.joint.tau", "arm.joint.tau")
    cs.set_input("base.ext.W", np.zeros(6))
    with pytest.raises(CosimError) as info:
        cs.simulate(0.002, 1e-3, record=["arm.nothing"])
    assert str(info.value).startswith(
        "record 'arm.nothing': component 'arm' has no variable 'nothing'; valid names: "
    )
    assert "''" not in str(info.value)
    # a whole port is recorded as its motion vector and its wrench
    res = cs.simulate(0.002, 1e-3, record=["base.C1", "arm.joint.m[3]"])
    assert res.columns[:2] == ["base.C1.m[1]", "base.C1.m[2]"]
    assert res.columns[17:19] == ["base.C1.m[18]", "base.C1.W[1]"]
    assert res.columns[23:] == ["base.C1.W[6]", "arm.joint.m[3]"]
    assert res["arm.joint.m[3]"][0] == 0.0


def test_warnings_of_an_fmu_name_the_component_not_a_temporary_file(fmu_dir, tmp_path):
    """The balloon FMU warns about the paper's inertia when it checks its parameters: the
    warning names the component and the FMU file, comes with titopfmu's InertiaWarning class and
    points at the caller's line, not at the FMU's temporary extraction. (A co-simulation read
    from an SSP file: one built from a System leaves that remark to the System's block,
    tests/test_from_system.py.)"""
    from titopfmu.master import read_ssp, write_ssp

    cs, _ = read_ssp(write_ssp(build_balloon_cosim(fmu_dir), tmp_path / "b.ssp", step=1e-3))
    with pytest.warns(InertiaWarning) as record:
        cs.simulate(0.001, 1e-3, record=["pend1.joint.m[3]"])
    (w,) = [w for w in record if issubclass(w.category, InertiaWarning)]
    assert str(w.message).startswith(
        "component 'balloon' (TitopRigidBodyC1.fmu): block 'balloon', parameter 'inertia': "
        "principal moments [3.0, 5.0, 17.0] violate the triangle inequality"
    )
    assert w.filename == __file__


class SlowClock:
    """``time`` for the runs' timeouts: a wall clock that advances 10 ms at every reading, so
    that a run's timeout falls after the same readings (the same steps) whatever else runs on
    the machine (with the real clock a loaded machine could reach a 0.3 s timeout before the
    first output point)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.readings = 0

    def perf_counter(self) -> float:
        self.readings += 1
        self.now += 0.01
        return self.now


def slow_clock(monkeypatch) -> SlowClock:
    """The modules that read the wall clock for a timeout read a :class:`SlowClock`."""
    from titopfmu.assembly import engine
    from titopfmu.master import model_exchange, stepping

    clock = SlowClock()
    for module in (engine, stepping, model_exchange):
        monkeypatch.setattr(module, "time", clock)
    return clock


@pytest.mark.parametrize("mode, options", [("cs", {}), ("cs", {"step_tolerance": 1e-6}),
                                           ("me", {})])  # fmt: skip
def test_a_run_past_its_timeout_stops_with_the_results_so_far(fmu_dir, mode, options,
                                                              monkeypatch):  # fmt: skip
    """``timeout`` (wall clock) stops a 1000 s balloon run with a CosimError that carries the
    samples taken before it, in every mode; the engine does the same. The clock advances 10 ms
    at each reading (:class:`SlowClock`): the 0.3 s timeout falls at the 30th check after the
    reading that gives the deadline, whatever the machine's load."""
    clock = slow_clock(monkeypatch)
    cs = build_balloon_cosim(fmu_dir)
    with pytest.raises(CosimError, match=r"timeout of 0.3 s") as info:
        cs.simulate(1000.0, 1e-3, record=COSIM_RECORD, output_interval=0.01, mode=mode,
                    timeout=0.3, **options)  # fmt: skip
    # the run stopped at the first check past its deadline (model exchange reads the clock
    # once more: its own deadline, after CoSimulation.simulate's)
    assert clock.readings == (32 if mode == "me" else 31)
    res = info.value.result
    assert len(res.time) >= 2 and res.time[-1] < 1000.0
    assert len(res.rows) == len(res.time) and np.all(np.diff(res.time) > 0.0)
    assert res.time[-1] <= info.value.time  # the samples up to where it stopped
    with pytest.raises(CosimError, match="timeout"):
        cs.simulate(1.0, 1e-3, timeout=0.0)


def test_the_engine_stops_at_its_timeout_with_the_results_so_far(monkeypatch):
    from titopfmu import SimulationError

    clock = slow_clock(monkeypatch)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        system = build_balloon()
    with pytest.raises(SimulationError, match=r"timeout of 0.3 s") as info:
        Engine(system).simulate(1e5, output_interval=0.01, record=["balloon.m[13]"],
                                rtol=1e-12, timeout=0.3)  # fmt: skip
    assert clock.readings == 31 and len(info.value.result.time_list) >= 2
