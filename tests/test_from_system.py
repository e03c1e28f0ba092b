"""One model, every backend: ``CoSimulation.from_system``, ``titopfmu export --ssp``, ``titopfmu
run --engine cosim`` and bodies with more child ports than ``titopfmu build`` writes.

Every FMU is built for real (into a per-module cache folder) and run by the master; the
references are the in-process engine on the same System (its loop solution at a communication
point exactly, its trajectories to the master's coupling error, second order in the step).
"""

from __future__ import annotations

import csv
import warnings

import numpy as np
import pytest

from titopfmu import (
    Constant,
    Engine,
    JointSpringDamper,
    RevoluteBody,
    RigidBody,
    System,
    TimeFunction,
)
from titopfmu.examples.balloon import (
    COLUMNS,
    COSIM_RECORD,
    balloon_columns_from_cosim,
    build_balloon,
    paper_inertia_accepted,
    run_balloon,
)
from titopfmu.master import CosimError, CoSimulation, read_ssp, write_ssp
from titopfmu.master.from_system import FromSystemError, simulate_system

pytestmark = pytest.mark.filterwarnings("ignore:.*triangle inequality")


@pytest.fixture(scope="module", autouse=True)
def fmu_cache(tmp_path_factory):
    """A fresh per-user FMU cache for this module (FMUs built once, reused by every test)."""
    mp = pytest.MonkeyPatch()
    folder = tmp_path_factory.mktemp("fmu_cache")
    mp.setenv("TITOPFMU_CACHE_DIR", str(folder))
    yield folder
    mp.undo()


@pytest.fixture(scope="module")
def balloon_ref():
    with paper_inertia_accepted():
        return run_balloon(0.3, 0.01, rtol=1e-12, atol=1e-13)


def loop_solution_gap(cs: CoSimulation, system: System) -> float:
    """Largest gap between every body's motion vector (FMU ``body.m``) after the master's loop
    solve at t = 0 and the engine's ``block.m``, relative to the largest value."""
    engine = Engine(system)
    ev = engine.evaluate(0.0, engine.initial_state())
    cs._plan()
    cs.initialize(0.0)
    try:
        cs.solve_loop()
        gaps, scale = [], 1.0
        for name, c in cs.components.items():
            if "body.m[1]" not in c.vr or name not in system.blocks:
                continue  # (a component carrying a further external wrench: not a block)
            got = np.array(c.slave.getReal([c.vr[f"body.m[{i}]"] for i in range(1, 19)]))
            want = engine.signal(ev, f"{name}.m")
            gaps.append(float(np.max(np.abs(got - want))))
            scale = max(scale, float(np.max(np.abs(want))))
        return max(gaps) / scale
    finally:
        cs.free()


# -- the balloon: System -> co-simulation, System -> SSP -> master ---------------------------------


def test_balloon_from_system_loop_solution_is_the_engines():
    with paper_inertia_accepted():
        s = build_balloon()
        cs = CoSimulation.from_system(s)
        assert cs.system_mapping.model_names() == {
            "balloon": "TitopRigidBodyC1", "slider": "TitopPrismaticBodyC1",
            "pend1": "TitopRevoluteBodyC1", "pend2": "TitopRevoluteBodyC0",
        }  # fmt: skip
        # each joint's own law is computed inside its joint's FMU (law.* parameters)
        assert cs.system_mapping.folded == {"slider_law": "slider", "pend1_law": "pend1",
                                            "pend2_law": "pend2"}  # fmt: skip
        assert loop_solution_gap(cs, s) < 1e-10


def test_balloon_system_to_ssp_to_master_agrees_with_the_engine(tmp_path, balloon_ref):
    """As tests/test_master.py requires of the hand-wired balloon: 2e-5 at h = 5e-4 over 0.3 s,
    second order in the step."""
    with paper_inertia_accepted():
        cs = CoSimulation.from_system(build_balloon())
        path = write_ssp(cs, tmp_path / "balloon.ssp", stop_time=0.3, step=5e-4, name="balloon")
        errors = {}
        for h in (2e-3, 5e-4):
            cs2, exp = read_ssp(path)
            assert (exp.stop_time, exp.step) == (0.3, 5e-4)
            res = cs2.simulate(0.3, h, record=COSIM_RECORD, output_interval=0.01)
            cols = balloon_columns_from_cosim(res)
            n = len(balloon_ref["time"])
            errors[h] = max(float(np.max(np.abs(cols[k][:n] - balloon_ref[k][:n])))
                            for k in COLUMNS)  # fmt: skip
    assert errors[5e-4] < 2e-5, errors
    assert np.log2(errors[2e-3] / errors[5e-4]) / 2.0 > 1.7, errors


def test_simulate_system_records_the_engines_columns(balloon_ref):
    """Engine-style signals (inertial position, Euler angles, joint coordinates) from the FMUs,
    same column names as Engine.simulate."""
    with paper_inertia_accepted():
        cs = CoSimulation.from_system(build_balloon())
        res = simulate_system(cs, 0.3, 5e-4, record=COLUMNS, output_interval=0.01)
    assert res.columns == list(COLUMNS)
    gap = max(float(np.max(np.abs(res[k] - balloon_ref[k]))) for k in COLUMNS)
    assert gap < 2e-5, gap
    assert np.ptp(res["theta1"]) > 1e-3  # it moves


def _read(path):
    rows = list(csv.reader(open(path)))
    return rows[0], np.array(rows[1:], dtype=float)


def test_balloon_model_file_run_via_cosim_agrees_with_the_engine(tmp_path):
    from titopfmu.model_cli import main

    a, b = tmp_path / "in.csv", tmp_path / "co.csv"
    common = ["run", "balloon", "--t-final", "0.3", "--output-interval", "0.01", "--quiet"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main([*common, "--out", str(a)]) == 0
        assert main([*common, "--engine", "cosim", "--step", "5e-4", "--out", str(b)]) == 0
    ha, va = _read(a)
    hb, vb = _read(b)
    assert ha == hb == ["time", *COLUMNS] and va.shape == vb.shape == (31, 10)
    assert np.max(np.abs(va - vb)) < 2e-5


def test_export_ssp_cli_writes_fmus_parameters_and_experiment(tmp_path, capsys):
    from titopfmu.model_cli import main

    out = tmp_path / "b.ssp"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["export", "balloon", "--ssp", str(out), "--t-final", "3",
                     "--step", "1e-3"]) == 0  # fmt: skip
    assert "4 components, 4 FMUs" in capsys.readouterr().out
    cs, exp = read_ssp(out)
    assert (exp.start_time, exp.stop_time, exp.step) == (0.0, 3.0, 1e-3)
    # the joints' own laws inside their FMUs
    assert set(cs.components) == {"balloon", "slider", "pend1", "pend2"}
    assert cs.components["pend1"].parameters["law.enabled"] is True
    assert cs.components["pend1"].parameters["theta0"] == pytest.approx(np.deg2rad(170.0))
    assert ("pend1", "C1", "pend2", "P") in cs.port_links
    assert ("balloon", "ext.W[2]") in cs.inputs  # the buoyancy, held


# -- bodies with many child ports ------------------------------------------------------------------


def star(n_children: int = 5) -> System:
    """A free root with ``n_children`` arms, the middle arm itself carrying ``n_children`` tips:
    root (RigidBodyC5), arm2 (RevoluteBodyC5), laws, constant efforts and one external wrench."""
    g = [0.0, -9.81, 0.0]
    s = System("star")
    ang = np.linspace(0.0, 2 * np.pi, n_children, endpoint=False)
    pts = {f"c{k}": [0.5 * np.cos(a), 0.5 * np.sin(a), 0.1 * k] for k, a in enumerate(ang)}
    s.add(RigidBody("root", 5.0, np.diag([1.0, 1.2, 1.5]), children=pts, gravity=g,
                    external={"push": {"point": [0.1, 0.0, 0.0], "frame": "body"}}),
          Constant("push", [1.0, 0.0, 0.5, 0.0, 0.2, 0.0]), Constant("zero", 0.0))  # fmt: skip
    for k, c in enumerate(pts):
        kids = {}
        if k == 2:
            kids = {f"t{j}": [0.3, 0.05 * j, 0.0] for j in range(n_children)}
        s.add(RevoluteBody(f"arm{k}", 0.5 + 0.1 * k, np.diag([0.01, 0.02, 0.02]),
                           com=[0.2, 0.0, 0.0], axis=[0.0, 0.3 * k, 1.0], theta0=0.2 * k,
                           children=kids, gravity=g))  # fmt: skip
        s.connect(f"root.{c}", f"arm{k}.P")
        if k % 2:
            s.add(JointSpringDamper(f"law{k}", k=3.0, d=0.1))
            s.connect(f"arm{k}.joint.m", f"law{k}.m")
            s.connect(f"law{k}.tau", f"arm{k}.joint.tau")
        else:
            s.connect("zero.y", f"arm{k}.joint.tau")
    for j in range(n_children):
        s.add(RevoluteBody(f"tip{j}", 0.2, np.diag([0.001, 0.002, 0.002]), com=[0.1, 0, 0],
                           axis=[0, 0, 1], theta0=-0.3 * j, gravity=g))  # fmt: skip
        s.connect(f"arm2.t{j}", f"tip{j}.P")
        s.connect("zero.y", f"tip{j}.joint.tau")
    s.connect("push.y", "root.push")
    return s


def test_a_body_with_five_children_runs_in_process_and_as_fmus():
    s = star(5)
    cs = CoSimulation.from_system(s)
    names = cs.system_mapping.model_names()
    assert names["root"] == "TitopRigidBodyC5" and names["arm2"] == "TitopRevoluteBodyC5"
    assert loop_solution_gap(cs, s) < 1e-10
    record = {"x": "root.position[1]", "q2": "arm2.joint.m[3]", "q1": "arm1.joint.m[3]",
              "qt4": "tip4.joint.m[3]", "wz": "root.twist[6]"}  # fmt: skip
    ref = Engine(s).simulate(0.2, output_interval=0.01, record=record, rtol=1e-12, atol=1e-13)
    errors = {}
    for h in (1e-3, 5e-4):
        res = simulate_system(CoSimulation.from_system(s), 0.2, h, record=record,
                              output_interval=0.01)  # fmt: skip
        errors[h] = max(float(np.max(np.abs(res[k] - ref[k]))) for k in record)
    assert np.ptp(ref["qt4"]) > 1e-2
    assert errors[5e-4] < 1e-5, errors
    assert errors[1e-3] / errors[5e-4] > 3.0, errors  # second order in the step


# -- names -------------------------------------------------------------------------------------


def arm_system(arm_cls=RevoluteBody, drive: bool = False) -> System:
    """The README's example: a base, a hinged arm, a spring-damper motor (or a time function
    driving the joint when ``drive``)."""
    s = System("arm")
    s.add(
        RigidBody("base", mass=10.0, inertia=np.diag([1.0, 2.0, 2.5]),
                  children={"hinge": [0.0, -0.5, 0.0]}, gravity=[0, 0, 0]),
        arm_cls("arm", mass=2.0, inertia=np.diag([0.1, 0.01, 0.1]), com=[0.0, -0.6, 0.0],
                axis=[0, 0, 1], theta0=0.3, gravity=[0, 0, 0]),
    )  # fmt: skip
    s.connect("base.hinge", "arm.P")
    if drive:
        s.add(TimeFunction("drive", lambda t: np.array([np.sin(t)]), 1))
        s.connect("drive.y", "arm.joint.tau")
    else:
        s.add(JointSpringDamper("motor", k=5.0, d=0.5))
        s.connect("arm.joint.m", "motor.m")
        s.connect("motor.tau", "arm.joint.tau")
    return s


def test_system_names_are_accepted_by_the_co_simulation():
    cs = CoSimulation.from_system(arm_system(), fold_laws=False)  # the law as its own FMU
    res = cs.simulate(0.05, 1e-3, record=["base.hinge.m[8]", "base.C1.m[8]", "motor.tau",
                                          "motor.joint.tau", "motor.m[3]"])  # fmt: skip
    np.testing.assert_array_equal(res["base.hinge.m[8]"], res["base.C1.m[8]"])
    np.testing.assert_array_equal(res["motor.tau"], res["motor.joint.tau"])
    assert np.ptp(res["motor.m[3]"]) > 0  # the joint coordinate, through the law's alias
    # an input already wired, named either way
    with pytest.raises(CosimError, match="already connected|connected"):
        cs.set_input("motor.m", [0.0, 0.0, 0.0])


def test_the_from_system_example_of_the_cosim_page_runs(tmp_path, monkeypatch):
    """docs/cosim.md, "From a System" (its ``py`` block), on the README's arm, shortened."""
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parent.parent / "docs" / "cosim.md"
    (code,) = re.findall(r"```py\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    monkeypatch.chdir(tmp_path)
    scope = {"system": arm_system()}
    exec(code.replace("5.0", "0.2"), scope)
    ref = Engine(scope["system"]).simulate(0.2, output_interval=1e-3, rtol=1e-12, atol=1e-13,
                                           record={"theta": "arm.joint.m[3]"})  # fmt: skip
    assert scope["result"].columns == ["theta", "wz"]
    assert np.max(np.abs(scope["result"]["theta"] - ref["theta"])) < 1e-6
    cs, exp = read_ssp(tmp_path / "arm.ssp")
    # the motor law acts on the arm's own joint: computed inside the arm's FMU
    assert exp.stop_time == 0.2 and set(cs.components) == {"base", "arm"}


# -- refusals ----------------------------------------------------------------------------------


def test_blocks_without_an_fmu_are_refused_naming_the_block(tmp_path):
    class MyArm(RevoluteBody):
        """A user's block type (its equations could be anything)."""

    with pytest.raises(FromSystemError, match="block 'arm'.*subclass of RevoluteBody"):
        CoSimulation.from_system(arm_system(MyArm))
    with pytest.raises(FromSystemError, match="block 'drive'.*TimeFunction has no FMU"):
        CoSimulation.from_system(arm_system(drive=True))


def test_missing_fmus_are_a_clear_error(tmp_path):
    with pytest.raises(FromSystemError, match="lacks TitopJointSpringDamper.fmu, "
                       "TitopRevoluteBodyC0.fmu, TitopRigidBodyC1.fmu"):  # fmt: skip
        CoSimulation.from_system(arm_system(), tmp_path, fold_laws=False)
    with pytest.raises(FromSystemError, match="lacks TitopRevoluteBodyC0.fmu, "
                       "TitopRigidBodyC1.fmu"):  # fmt: skip
        CoSimulation.from_system(arm_system(), tmp_path)  # the law inside the arm's FMU


def test_an_inertia_remark_is_given_once_per_body(tmp_path):
    """The balloon's inertia violates the triangle inequality: building the System warns once
    (the block); its co-simulation from the System does not warn again (the FMU logs the same
    remark); a co-simulation read from an SSP, with no System, warns once (the FMU)."""
    from titopfmu import InertiaWarning

    def inertia_warnings(run) -> list[str]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run()
        return [str(w.message) for w in caught if issubclass(w.category, InertiaWarning)]

    import titopfmu
    from titopfmu.modelfile import example_path

    systems = []
    path = example_path("balloon")
    assert len(inertia_warnings(lambda: systems.append(titopfmu.load(path)))) == 1
    cs = CoSimulation.from_system(systems[0])
    assert inertia_warnings(lambda: cs.simulate(0.01, 1e-3)) == []
    ssp = write_ssp(cs, tmp_path / "b.ssp", stop_time=0.01, step=1e-3)
    read, _ = read_ssp(ssp)
    got = inertia_warnings(lambda: read.simulate(0.01, 1e-3))
    assert len(got) == 1 and "component 'balloon'" in got[0], got


# -- several external wrenches on one body -----------------------------------------------------


def pushed_arm(second: bool = True) -> System:
    """A free root and a hinged arm, each with two external wrenches at two points, one in the
    body frame, one in the inertial frame, from the start in a turned attitude (the frames
    differ); no gravity, so the wrenches alone move it. ``second``: False leaves the inertial
    ones out."""
    g = [0.0, 0.0, 0.0]
    root_ext = {"thrust": {"point": [-0.3, 0.1, 0.0], "frame": "body"},
                "wind": {"point": [0.1, -0.2, 0.15], "frame": "inertial"}}  # fmt: skip
    arm_ext = {"tip": {"point": [0.5, 0.02, 0.0], "frame": "body"},
               "drag": {"point": [0.2, 0.0, -0.05], "frame": "inertial"}}  # fmt: skip
    if not second:
        root_ext.pop("wind"), arm_ext.pop("drag")
    s = System("pushed")
    s.add(
        RigidBody("root", 4.0, np.diag([0.3, 0.4, 0.5]), com=[0.05, 0.0, 0.0],
                  children={"hinge": [0.4, 0.0, 0.0]}, gravity=g, euler=[0.3, -0.2, 0.5],
                  twist=[0.1, 0.0, 0.2, 0.3, -0.1, 0.2], external=root_ext),
        RevoluteBody("arm", 1.0, np.diag([0.01, 0.03, 0.03]), com=[0.25, 0.0, 0.0],
                     axis=[0.0, 0.2, 1.0], theta0=0.4, theta_dot0=0.5, gravity=g,
                     external=arm_ext),
        Constant("thrust", [1.0, 0.5, -0.3, 0.2, 0.1, -0.4]),
        Constant("wind", [-0.4, 0.8, 0.3, 0.05, -0.1, 0.2]),
        Constant("tip", [0.2, -0.6, 0.9, 0.1, 0.0, 0.3]),
        Constant("drag", [0.7, 0.2, -0.5, -0.2, 0.15, 0.0]),
        Constant("free", 0.0),
    )  # fmt: skip
    s.connect("root.hinge", "arm.P")
    s.connect("free.y", "arm.joint.tau")
    for body, ext in (("root", root_ext), ("arm", arm_ext)):
        for wrench in ext:
            s.connect(f"{wrench}.y", f"{body}.{wrench}")
    return s


def test_two_external_wrenches_on_a_body_co_simulate_as_in_process():
    """Each body FMU has one ext.W: a body's second wrench is carried by a massless welded
    component on an extra child port at its point (its FMU passes it on). The master's loop
    solution at t = 0 (every body's motion vector, accelerations included) equals the engine's
    to 1e-9 relative, where leaving the second wrenches out changes the engine's accelerations
    by order 1; the System's names of the second wrenches are the co-simulation's; 0.1 s
    trajectories agree to the master's coupling error."""
    s = pushed_arm()
    cs = CoSimulation.from_system(s)
    m = cs.system_mapping
    assert m.model_names() == {"root": "TitopRigidBodyC2", "root__wind": "TitopWeldedBodyC0",
                               "arm": "TitopRevoluteBodyC1", "arm__drag": "TitopWeldedBodyC0"}
    assert m.fmu_ref("arm.drag") == "arm__drag.ext.W" and m.fmu_ref("arm.tip") == "arm.ext.W"
    assert ("arm", "C1", "arm__drag", "P") in cs.port_links
    assert ("arm__drag", "ext.W[1]") in cs.inputs  # the System's constant, held
    assert cs.components["arm__drag"].parameters["ext.inertial"] is True
    gap = loop_solution_gap(cs, s)
    print(f"two external wrenches per body: loop solution gap {gap:.2g}")
    assert gap < 1e-9, gap

    def accelerations(system):
        engine = Engine(system)
        ev = engine.evaluate(0.0, engine.initial_state())
        return np.concatenate([engine.signal(ev, f"{b}.m")[:6] for b in ("root", "arm")])

    assert np.max(np.abs(accelerations(s) - accelerations(pushed_arm(second=False)))) > 0.1
    record = {"q": "arm.joint.m[3]", "x": "root.position[1]", "wz": "root.twist[6]",
              "drag": "arm.drag[2]"}  # fmt: skip
    ref = Engine(s).simulate(0.1, output_interval=0.01, record=record, rtol=1e-12, atol=1e-13)
    res = simulate_system(CoSimulation.from_system(s), 0.1, 5e-4, record=record,
                          output_interval=0.01)  # fmt: skip
    np.testing.assert_array_equal(res["drag"], 0.2)
    err = max(float(np.max(np.abs(res[k] - ref[k]))) for k in record)
    print(f"0.1 s trajectories: {err:.2g}")
    assert err < 1e-7, err  # 2e-8: the coupling error of the 5e-4 s step
