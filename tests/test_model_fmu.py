"""Whole-model FMUs (:mod:`titopfmu.fmi.model`): a model as one native FMU, its algebraic loop
solved inside, run by hosts that do not iterate loops.

The references are the in-process engine's runs of the same System (the engine integrates with
scipy's DOP853; the FMU's co-simulation integrates with its own DOP853, ``ode.c``), compared at
the communication points of the host:

* the balloon of seed 004 (free-floating root, prismatic and revolute joints, joint
  spring-dampers, an external wrench fed by a Constant) in fmpy (co-simulation at 1 ms, 10 ms
  and 0.1 s, model exchange with CVODE), in the project's C host (``tests/core/model_host.c``, no
  Python in its process), and in libcosim;
* a chain closed by a loop closure with spring-damper laws, and the UR5 of example-robot-data;
* a model cut at a TITOP port into two FMUs, joined by titopfmu's master;
* parameters by name, refusals naming the parameter, FMU states, and the exports refused.
"""

from __future__ import annotations

import subprocess
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

fmpy = pytest.importorskip("fmpy")
from fmpy import read_model_description, simulate_fmu  # noqa: E402
from fmpy.validation import validate_fmu  # noqa: E402
from fmu_helpers import callbacks_with  # noqa: E402

from titopfmu import (  # noqa: E402
    Constant,
    Engine,
    Ground,
    InertiaWarning,
    JointSpringDamper,
    LoopClosure,
    RevoluteBody,
    RigidBody,
    System,
    TimeFunction,
    export_fmu,
)
from titopfmu.fmi.model import ModelFmuError  # noqa: E402
from titopfmu.fmi.native.build import FMI_HEADERS, compiler  # noqa: E402
from titopfmu.parameters import with_parameters  # noqa: E402
from titopfmu.sources import load_model  # noqa: E402

HOST = Path(__file__).parent / "core" / "model_host.c"
T_FINAL = 20.0


def balloon() -> System:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        return load_model("balloon")


def engine_run(system: System, t_final: float, interval: float, columns: dict) -> np.ndarray:
    res = Engine(system).simulate(t_final, output_interval=interval, record=columns, rtol=1e-8,
                                  atol=1e-10)  # fmt: skip
    return np.column_stack([res.time] + [res[c] for c in columns])


@pytest.fixture(scope="module")
def balloon_fmu(tmp_path_factory):
    out = tmp_path_factory.mktemp("model_fmu")
    return export_fmu(balloon(), out / "balloon.fmu", win64=False)


@pytest.fixture(scope="module")
def balloon_reference():
    s = balloon()
    return engine_run(s, T_FINAL, 0.1, dict(s.model_info.outputs))


def _compare(ref: np.ndarray, t, columns: list[np.ndarray]) -> float:
    """Largest difference at the reference's sample times (which are communication points)."""
    got = np.column_stack([np.interp(ref[:, 0], t, c) for c in columns])
    idx = [int(np.argmin(np.abs(np.asarray(t) - tr))) for tr in ref[:, 0]]
    assert np.allclose(np.asarray(t)[idx], ref[:, 0], atol=1e-9)  # samples, not interpolations
    return float(np.abs(got - ref[:, 1:]).max())


@pytest.mark.parametrize("step", [1e-3, 1e-2, 1e-1])
def test_fmpy_co_simulation_matches_the_engine_at_any_step(balloon_fmu, balloon_reference, step):
    cols = list(balloon().model_info.outputs)
    r = simulate_fmu(str(balloon_fmu), fmi_type="CoSimulation", stop_time=T_FINAL,
                     output_interval=step, output=cols)  # fmt: skip
    err = _compare(balloon_reference, r["time"], [r[c] for c in cols])
    assert err < 1e-6, err
    # and the balloon did move: the comparison is not of constants
    assert np.ptp(balloon_reference[:, 1 + cols.index("theta1")]) > 1.0


def test_fmpy_model_exchange_matches_the_engine(balloon_fmu, balloon_reference):
    cols = list(balloon().model_info.outputs)
    r = simulate_fmu(str(balloon_fmu), fmi_type="ModelExchange", stop_time=T_FINAL,
                     output_interval=0.1, output=cols, solver="CVode",
                     relative_tolerance=1e-10)  # fmt: skip
    assert _compare(balloon_reference, r["time"], [r[c] for c in cols]) < 1e-6


def test_the_fmu_validates_and_declares_what_it_computes(balloon_fmu):
    assert validate_fmu(str(balloon_fmu)) == []
    md = read_model_description(str(balloon_fmu))
    v = {x.name: x for x in md.modelVariables}
    # parameters by their model-file names, with units; the initial conditions too
    assert v["balloon.mass"].causality == "parameter" and v["balloon.mass"].unit == "kg"
    assert float(v["pend1.theta0"].start) == pytest.approx(2.9670597283903604)
    assert v["balloon.inertia[2,3]"].start == "-7.0"
    assert v["slider_law.k"].start == "20.0"
    # the input fed by a Constant in the model, at its value; the outputs by column name
    assert v["balloon.buoyancy[2]"].causality == "input"
    assert float(v["balloon.buoyancy[2]"].start) == pytest.approx(156.96)
    assert v["theta1"].causality == "output" and v["theta1"].unit == "rad"
    # states with units (model exchange) and the default experiment of the model file
    assert v["pend1.state.q"].unit == "rad"
    assert md.defaultExperiment.stopTime == "20.0"
    assert {"sources/fmu_model.c", "sources/ode.c", "sources/titop_core.c"} <= set(
        zipfile.ZipFile(balloon_fmu).namelist()
    )


def _host(tmp_path: Path, fmu: Path, step: float, names: list[str], t_final: float = T_FINAL):
    md = read_model_description(str(fmu))
    vr = {x.name: x.valueReference for x in md.modelVariables}
    d = tmp_path / fmu.stem
    with zipfile.ZipFile(fmu) as z:
        z.extractall(d)
    exe = tmp_path / "model_host"
    if not exe.exists():
        subprocess.run([compiler(), "-std=c99", "-O2", "-Wall", "-Werror", "-I", str(FMI_HEADERS),
                        str(HOST), "-o", str(exe), "-ldl", "-lm"], check=True)  # fmt: skip
    so = d / "binaries" / "linux64" / f"{md.coSimulation.modelIdentifier}.so"
    every = max(1, round(0.1 / step))
    p = subprocess.run([str(exe), str(so), md.guid, repr(t_final), repr(step), str(every),
                        *(str(vr[n]) for n in names)], capture_output=True, text=True)  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    return np.array([[float(x) for x in line.split()] for line in p.stdout.splitlines()]), p


@pytest.mark.parametrize("step", [1e-3, 1e-2, 1e-1])
def test_a_c_host_runs_the_model_fmu_like_the_engine(tmp_path, balloon_fmu, balloon_reference,
                                                     step):  # fmt: skip
    cols = list(balloon().model_info.outputs)
    rows, _ = _host(tmp_path, balloon_fmu, step, cols)
    assert _compare(balloon_reference, rows[:, 0], list(rows[:, 1:].T)) < 1e-6


@pytest.mark.parametrize("step_ns", [1_000_000, 10_000_000, 100_000_000])
def test_libcosim_runs_the_model_fmu_like_the_engine(balloon_fmu, balloon_reference, step_ns):
    pytest.importorskip("libcosimpy.CosimExecution", reason="libcosimpy is not installed")
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimObserver import CosimObserver
    from libcosimpy.CosimSlave import CosimLocalSlave

    cols = list(balloon().model_info.outputs)
    md = read_model_description(str(balloon_fmu))
    vr = {x.name: x.valueReference for x in md.modelVariables}
    ex = CosimExecution.from_step_size(step_size=step_ns)  # 1 ms, 10 ms, 0.1 s
    idx = ex.add_local_slave(CosimLocalSlave(fmu_path=str(balloon_fmu), instance_name="balloon"))
    obs = CosimObserver.create_last_value()
    ex.add_observer(obs)
    rows = []
    for k in range(int(round(T_FINAL / 0.1))):
        ex.simulate_until(target_time=int(round((k + 1) * 0.1 * 1e9)))
        vals = obs.last_real_values(slave_index=idx, variable_references=[vr[c] for c in cols])
        rows.append([(k + 1) * 0.1, *vals])
    rows = np.array(rows)
    ref = balloon_reference[1:]
    assert np.allclose(rows[:, 0], ref[:, 0])
    assert np.abs(rows[:, 1:] - ref[:, 1:]).max() < 1e-6


def test_parameters_by_name_change_the_model_like_the_engine(tmp_path, balloon_fmu):
    """pend1.theta0 and slider_law.k set in the FMU give the engine's run of the same change."""
    changed = {"pend1.theta0": 2.5, "slider_law.k": 35.0, "balloon.mass": 12.0}
    s = with_parameters(balloon(), changed)
    cols = dict(s.model_info.outputs)
    ref = engine_run(s, 5.0, 0.1, cols)
    r = simulate_fmu(str(balloon_fmu), fmi_type="CoSimulation", stop_time=5.0,
                     output_interval=0.01, output=list(cols), start_values=changed)  # fmt: skip
    assert _compare(ref, r["time"], [r[c] for c in cols]) < 1e-6


def _instance(fmu: Path, kind: str = "CoSimulation"):
    from fmpy import extract
    from fmpy.fmi2 import FMU2Model, FMU2Slave

    md = read_model_description(str(fmu))
    d = extract(str(fmu))
    cls = FMU2Slave if kind == "CoSimulation" else FMU2Model
    ident = (md.coSimulation if kind == "CoSimulation" else md.modelExchange).modelIdentifier
    inst = cls(guid=md.guid, unzipDirectory=d, modelIdentifier=ident, instanceName="t")
    messages: list[str] = []

    def log(_env, _inst, _status, _category, message) -> None:
        messages.append(message.decode() if isinstance(message, bytes) else str(message))

    inst._keep_callbacks = cb = callbacks_with(log)
    inst.instantiate(callbacks=cb)
    return inst, {x.name: x.valueReference for x in md.modelVariables}, messages


def test_a_refused_parameter_is_named_and_the_instance_stays_usable(balloon_fmu):
    from fmpy.fmi1 import FMICallException

    inst, vr, messages = _instance(balloon_fmu)
    try:
        inst.setReal([vr["pend2.mass"]], [-3.0])
        inst.setupExperiment(startTime=0.0)
        with pytest.raises(FMICallException):
            inst.enterInitializationMode()
        assert any("pend2.mass" in m for m in messages), messages
        inst.setReal([vr["pend2.mass"]], [3.0])
        inst.enterInitializationMode()
        inst.exitInitializationMode()
        inst.doStep(0.0, 0.1)
        assert np.isfinite(inst.getReal([vr["theta2"]])[0])
    finally:
        inst.terminate()
        inst.freeInstance()


def test_an_fmu_state_restores_the_integrator_bit_for_bit(balloon_fmu):
    inst, vr, _ = _instance(balloon_fmu)
    out = [vr["theta1"], vr["x"]]
    try:
        inst.setupExperiment(startTime=0.0)
        inst.enterInitializationMode()
        inst.exitInitializationMode()
        t = 0.0
        for _ in range(50):
            inst.doStep(t, 0.02)
            t += 0.02
        state = inst.getFMUstate()
        blob = inst.serializeFMUstate(state)
        t_state = t
        for _ in range(50):
            inst.doStep(t, 0.02)
            t += 0.02
        first = inst.getReal(out)
        inst.setFMUstate(inst.deSerializeFMUstate(blob))
        t = t_state
        for _ in range(50):
            inst.doStep(t, 0.02)
            t += 0.02
        assert inst.getReal(out) == first
        inst.freeFMUstate(state)
    finally:
        inst.terminate()
        inst.freeInstance()


def test_model_exchange_directional_derivatives_are_the_engines_jacobian(balloon_fmu):
    s = balloon()
    eng = Engine(s)
    x0 = eng.initial_state()
    J = eng.jacobian(0.0, x0)
    inst, vr, _ = _instance(balloon_fmu, "ModelExchange")
    try:
        inst.setupExperiment(startTime=0.0)
        inst.enterInitializationMode()
        inst.exitInitializationMode()
        inst.enterContinuousTimeMode()
        md = read_model_description(str(balloon_fmu))
        states = [d.variable.valueReference for d in md.derivatives]
        xs = [v.valueReference for v in md.modelVariables if ".state." in v.name
              and not v.name.startswith("der(")]  # fmt: skip
        assert len(xs) == len(x0)
        Jf = np.array([inst.getDirectionalDerivative(states, [xs[k]], [1.0])
                       for k in range(len(xs))]).T  # fmt: skip
        assert np.allclose(Jf, J, rtol=1e-12, atol=1e-12 * np.abs(J).max())
    finally:
        inst.terminate()
        inst.freeInstance()


def test_fmi3_model_fmu_validates_and_runs_like_fmi2(tmp_path, balloon_reference):
    fmu = export_fmu(balloon(), tmp_path / "balloon3.fmu", fmi_version=3, win64=False)
    assert validate_fmu(str(fmu)) == []
    cols = list(balloon().model_info.outputs)
    r = simulate_fmu(str(fmu), fmi_type="CoSimulation", stop_time=T_FINAL, output_interval=0.05,
                     output=cols)  # fmt: skip
    assert _compare(balloon_reference, r["time"], [r[c] for c in cols]) < 1e-6


# -- other models -----------------------------------------------------------------------------


def closed_chain() -> System:
    """A four-bar-like chain: Ground, three revolute links, the last one's tip tied back to the
    ground by a stiff loop closure; joint spring-dampers on two joints."""
    s = System("fourbar")
    I = np.diag([0.02, 0.01, 0.02])  # noqa: E741
    s.add(Ground("g", children={"A": (0, 0, 0), "D": (1.0, 0, 0)}))
    s.add(RevoluteBody("l1", 1.0, I, axis=(0, 0, 1), com=(0.25, 0, 0), theta0=1.2,
                       children={"B": (0.5, 0, 0)}, gravity=(0, -9.81, 0)))  # fmt: skip
    s.add(RevoluteBody("l2", 1.5, I, axis=(0, 0, 1), com=(0.5, 0, 0), theta0=-1.2,
                       children={"C": (1.0, 0, 0)}, gravity=(0, -9.81, 0)))  # fmt: skip
    s.add(RevoluteBody("l3", 1.0, I, axis=(0, 0, 1), com=(0.25, 0, 0), theta0=-1.5,
                       children={"E": (0.5, 0, 0)}, gravity=(0, -9.81, 0)))  # fmt: skip
    k, d = 2e4, 50.0
    s.add(LoopClosure("lc", np.diag([k, k, k, 0, 0, 0]), np.diag([d, d, d, 0, 0, 0])))
    s.add(JointSpringDamper("j1", k=5.0, d=0.5), JointSpringDamper("j2", d=0.3))
    s.add(Constant("t3", 0.4))
    s.connect("g.A", "l1.P")
    s.connect("l1.B", "l2.P")
    s.connect("l2.C", "l3.P")
    s.connect("l3.E", "lc.left")
    s.connect("g.D", "lc.right")
    s.connect("l1.joint.m", "j1.m")
    s.connect("j1.tau", "l1.joint.tau")
    s.connect("l2.joint.m", "j2.m")
    s.connect("j2.tau", "l2.joint.tau")
    s.connect("t3.y", "l3.joint.tau")
    return s


def test_a_closed_chain_with_laws_matches_the_engine(tmp_path):
    s = closed_chain()
    sig = ["l1.joint.m", "l3.position", "g.W"]
    fmu = export_fmu(s, tmp_path / "fourbar.fmu", signals=sig, win64=False)
    cols = {f"{b}[{k}]": f"{b}[{k}]" for b, w in (("l1.joint.m", 3), ("l3.position", 3),
                                                  ("g.W", 6)) for k in range(1, w + 1)}  # fmt: skip
    ref = engine_run(s, 3.0, 0.05, cols)
    for step in (1e-3, 5e-2):
        r = simulate_fmu(str(fmu), fmi_type="CoSimulation", stop_time=3.0, output_interval=step,
                         output=list(cols))  # fmt: skip
        scale = np.maximum(1.0, np.abs(ref[:, 1:]).max(axis=0))
        got = np.column_stack([np.interp(ref[:, 0], r["time"], r[c]) for c in cols])
        assert (np.abs(got - ref[:, 1:]) / scale).max() < 1e-6
    assert np.ptp(ref[:, 3]) > 0.1  # l1 moved


def test_the_ur5_from_urdf_matches_the_engine(tmp_path):
    pytest.importorskip("pinocchio")
    from test_urdf import erd

    from titopfmu import import_urdf

    s = import_urdf(erd("ur5_robot.urdf"))
    eng = Engine(s)
    joints = [b.name for b in s.blocks.values() if hasattr(b, "joint") and b.joint.dof == 1]
    cols = {f"{j}.joint.m[3]": f"{j}.joint.m[3]" for j in joints}
    fmu = export_fmu(s, tmp_path / "ur5.fmu", signals=list(cols), win64=False)
    ref = engine_run(s, 2.0, 0.05, cols)
    r = simulate_fmu(str(fmu), fmi_type="CoSimulation", stop_time=2.0, output_interval=0.01,
                     output=list(cols))  # fmt: skip
    got = np.column_stack([np.interp(ref[:, 0], r["time"], r[c]) for c in cols])
    assert np.abs(got - ref[:, 1:]).max() < 1e-6
    assert np.ptp(ref[:, 1:]) > 0.1
    del eng


# -- a model cut at a TITOP port ----------------------------------------------------------------


def base_and_arm() -> System:
    s = System("base_arm")
    s.add(RigidBody("base", 20.0, np.diag([2.0, 3.0, 2.5]), children={"C": (0.3, 0.2, 0.0)},
                    twist=(0.1, 0.0, 0.0, 0.05, -0.2, 0.3), gravity=(0, 0, 0)))  # fmt: skip
    s.add(RevoluteBody("arm", 2.0, np.diag([0.05, 0.01, 0.05]), axis=(0, 0, 1),
                       com=(0.0, 0.4, 0.0), theta0=0.3, theta_dot0=1.0,
                       children={"T": (0.0, 0.8, 0.0)}, gravity=(0, 0, 0)))  # fmt: skip
    s.add(RevoluteBody("fore", 1.0, np.diag([0.02, 0.005, 0.02]), axis=(1, 0, 0),
                       com=(0.0, 0.3, 0.0), theta0=-0.4, gravity=(0, 0, 0)))  # fmt: skip
    s.add(Constant("tau1", 0.5), Constant("tau2", -0.2))
    s.connect("base.C", "arm.P")
    s.connect("arm.T", "fore.P")
    s.connect("tau1.y", "arm.joint.tau")
    s.connect("tau2.y", "fore.joint.tau")
    return s


def test_two_subsystem_fmus_joined_by_the_master_match_the_whole_model(tmp_path):
    from titopfmu.master import CoSimulation

    s = base_and_arm()
    a = export_fmu(s, tmp_path / "base.fmu", blocks=["base"], signals=["bx=base.position[1]"],
                   name="base_part", win64=False)  # fmt: skip
    b = export_fmu(s, tmp_path / "arm.fmu", blocks=["arm", "fore", "tau1", "tau2"],
                   signals=["fore.joint.m[3]", "arm.joint.m[3]"], name="arm_part",
                   win64=False)  # fmt: skip
    vb = {x.name for x in read_model_description(str(b)).modelVariables}
    assert {"P.m[18]", "P.W[6]"} <= vb  # the TITOP parent port at the cut
    va = {x.name for x in read_model_description(str(a)).modelVariables}
    assert {"base.C.m[18]", "base.C.W[6]"} <= va  # and the child port on the other side
    cs = CoSimulation()
    cs.add("A", a)
    cs.add("B", b)
    cs.connect("A.base.C", "B.P")
    cs.set_input("B.arm.joint.tau", 0.5)  # the Constants' values (the FMU's start values)
    cs.set_input("B.fore.joint.tau", -0.2)
    rec = ["B.fore.joint.m[3]", "B.arm.joint.m[3]", "A.bx"]
    r = cs.simulate(2.0, step=1e-3, record=rec, output_interval=0.05)
    cols = {"q2": "fore.joint.m[3]", "q1": "arm.joint.m[3]", "x": "base.position[1]"}
    ref = engine_run(s, 2.0, 0.05, cols)
    got = np.column_stack([np.interp(ref[:, 0], r.time, r[c]) for c in rec])
    assert np.abs(got - ref[:, 1:]).max() < 1e-6
    assert np.ptp(ref[:, 1]) > 0.1


# -- refusals at export -------------------------------------------------------------------------


def test_blocks_a_model_fmu_cannot_compute_are_refused_by_name(tmp_path):
    s = base_and_arm()
    s2 = System("f")
    for b in s.blocks.values():
        if b.name != "tau1":
            s2.add(b)
    s2.add(TimeFunction("tau1", lambda t: np.array([np.sin(t)]), 1))
    for src, dst in (("base.C", "arm.P"), ("arm.T", "fore.P"), ("tau1.y", "arm.joint.tau"),
                     ("tau2.y", "fore.joint.tau")):  # fmt: skip
        s2.connect(src, dst)
    with pytest.raises(ModelFmuError, match="'tau1'.*'arm.joint.tau'"):
        export_fmu(s2, tmp_path / "x.fmu", win64=False)

    class MyArm(RevoluteBody):
        pass

    s3 = base_and_arm()
    s3.blocks["arm"].__class__ = MyArm
    with pytest.raises(ModelFmuError, match="'arm' \\(MyArm\\)"):
        export_fmu(s3, tmp_path / "y.fmu", win64=False)
    with pytest.raises(ModelFmuError, match="fore.*joint.tau"):
        export_fmu(base_and_arm(), tmp_path / "z.fmu", signals=["fore.joint.tau"], win64=False)
    assert not list(tmp_path.glob("*.fmu*"))  # nothing half-written


def _flexible_pendulum_fmu(tmp_path: Path) -> tuple[Path, list[str]]:
    """The model FMU of the flexible pendulum of tests/test_flex_model_fmu.py (a flexible strip
    on a revolute joint, 6 modes, deflected and vibrating) and its state names."""
    from test_flex_model_fmu import Q0, QD0, pendulum, state_names, strip

    from titopfmu.flex import cantilever_modes

    fe = strip().fe_model()
    s = pendulum(cantilever_modes(fe, 6, [fe.n_nodes - 1], damping=0.01), Q0, QD0)
    return export_fmu(s, tmp_path / "flexible_pendulum.fmu", win64=False), state_names(s)


@pytest.mark.parametrize("which", ["balloon", "flexible_pendulum"])
def test_the_model_fmus_sources_run_clean_under_sanitizers_and_valgrind(tmp_path, request, which):
    """``sources/`` compiles the model FMU on its own (one command, docs/fmus.md), here under
    AddressSanitizer and UBSan; the C host's run then reports no error and the plain binary's
    numbers; valgrind finds no error and no leak in the plain binary. The balloon, and a
    flexible body (its reduced model in the FMU's constant tables, its elastic states)."""
    import shutil

    if which == "balloon":
        fmu = request.getfixturevalue("balloon_fmu")
        cols, t_final = list(balloon().model_info.outputs), 2.0
    else:
        fmu, cols = _flexible_pendulum_fmu(tmp_path)
        t_final = 0.2
    plain, _ = _host(tmp_path, fmu, 1e-2, cols, t_final=t_final)
    src = tmp_path / fmu.stem / "sources"
    md = read_model_description(str(fmu))
    flags = ["-g", "-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
             "-fno-omit-frame-pointer"]  # fmt: skip
    lib = tmp_path / "san.so"
    subprocess.run([compiler(), "-std=c99", "-shared", "-fPIC", *flags, "-I", str(src),
                    *(str(src / f) for f in ("fmi2_block.c", "fmu_model.c", "ode.c",
                                              "titop_double.c", "titop_complex.c")),
                    "-o", str(lib), "-lm"], check=True)  # fmt: skip
    exe = tmp_path / "host_san"
    subprocess.run([compiler(), "-std=c99", *flags, "-I", str(FMI_HEADERS), str(HOST), "-o",
                    str(exe), "-ldl", "-lm"], check=True)  # fmt: skip
    vr = {x.name: x.valueReference for x in md.modelVariables}
    args = [md.guid, repr(t_final), "0.01", "10", *(str(vr[c]) for c in cols)]
    p = subprocess.run([str(exe), str(lib), *args], capture_output=True, text=True,
                       env={"ASAN_OPTIONS": "detect_leaks=1"})  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    assert "runtime error" not in p.stderr and "AddressSanitizer" not in p.stderr
    san = np.array([[float(x) for x in line.split()] for line in p.stdout.splitlines()])
    assert san.shape == plain.shape and np.ptp(plain[:, 1:], axis=0).max() > 0
    assert np.allclose(san, plain, rtol=1e-12, atol=1e-13)
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    so = next((tmp_path / fmu.stem / "binaries" / "linux64").glob("*.so"))
    p = subprocess.run(["valgrind", "--error-exitcode=7", "--leak-check=full",
                        "--errors-for-leak-kinds=definite,indirect", str(tmp_path / "model_host"),
                        str(so), md.guid, "0.3" if which == "balloon" else "0.05", "0.01", "10",
                        *(str(vr[c]) for c in cols)],
                       capture_output=True, text=True)  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]


def test_the_ports_at_a_cut_are_declared_for_other_tools(tmp_path):
    """FMI 3.0: terminalsAndIcons.xml has the parent port P and the child port base... as TITOP
    terminals, valid against the FMI 3.0 schema; FMI 2.0: the OSP-IS model description beside
    the FMU is valid against the OSP-IS schema and groups the port's force and velocity."""
    xmlschema = pytest.importorskip("xmlschema")
    from test_terminals_osp import FMI3_XSD, OSP_XSD

    s = base_and_arm()
    f3 = export_fmu(s, tmp_path / "arm3.fmu", fmi_version=3, blocks=["arm", "fore", "tau1", "tau2"],
                    name="arm_part", win64=False)  # fmt: skip
    with zipfile.ZipFile(f3) as z:
        terminals = z.read("terminalsAndIcons/terminalsAndIcons.xml")
    xmlschema.XMLSchema(str(FMI3_XSD)).validate(terminals.decode())
    assert b'name="P"' in terminals and b"P.m" in terminals and b"P.W" in terminals
    f2 = export_fmu(s, tmp_path / "base.fmu", blocks=["base"], win64=False)
    osp = tmp_path / "base_OspModelDescription.xml"
    xmlschema.XMLSchema(str(OSP_XSD)).validate(osp.read_text())
    text = osp.read_text()
    assert "base.C.W[1]" in text and "LinearMechanicalPort" in text
    assert f2.exists()


@pytest.mark.parametrize("big", [1e200, 1e305])
def test_a_step_past_a_non_finite_state_is_refused_naming_state_and_time(balloon_fmu, big):
    from fmpy.fmi1 import FMICallException

    inst, vr, messages = _instance(balloon_fmu)
    try:
        inst.setupExperiment(startTime=0.0)
        inst.enterInitializationMode()
        inst.exitInitializationMode()
        inst.doStep(0.0, 0.1)
        before = inst.getReal([vr["x"], vr["theta1"]])
        inst.setReal([vr["balloon.buoyancy[2]"]], [big])
        with pytest.raises(FMICallException):
            inst.doStep(0.1, 1.0)
        msg = messages[-1]
        assert "balloon.state." in msg and "t = " in msg and "kept" in msg, msg
        assert inst.getReal([vr["x"], vr["theta1"]]) == before  # the state before the step
        inst.setReal([vr["balloon.buoyancy[2]"]], [156.96])
        inst.doStep(0.1, 0.1)  # and the instance goes on
    finally:
        inst.terminate()
        inst.freeInstance()


def test_an_inverse_dynamics_model_has_no_state_and_its_efforts_are_the_engines(tmp_path):
    """Ground, two inverse revolute joints whose motions [q̈, q̇, q] are inputs (fed by Constants
    in the System): no state; the joint efforts and the ground's reaction as outputs, equal to
    the engine's at any input values set by the host."""
    from titopfmu import RevoluteBodyInverse

    s = System("inverse")
    I = np.diag([0.02, 0.01, 0.03])  # noqa: E741
    s.add(Ground("g", children={"A": (0.0, 0.0, 0.0)}))
    s.add(RevoluteBodyInverse("a1", 1.2, I, axis=(0, 0, 1), com=(0.3, 0, 0),
                              children={"B": (0.6, 0, 0)}, gravity=(0, -9.81, 0)))  # fmt: skip
    s.add(RevoluteBodyInverse("a2", 0.8, I, axis=(0, 1, 0), com=(0.2, 0.1, 0),
                              gravity=(0, -9.81, 0)))  # fmt: skip
    s.add(Constant("m1", [0.5, -0.3, 0.4]), Constant("m2", [-1.0, 0.7, -0.2]))
    s.connect("g.A", "a1.P")
    s.connect("a1.B", "a2.P")
    s.connect("m1.y", "a1.joint.m")
    s.connect("m2.y", "a2.joint.m")
    fmu = export_fmu(s, tmp_path / "inv.fmu", signals=["a1.joint.tau", "a2.joint.tau", "g.W"],
                     win64=False)  # fmt: skip
    md = read_model_description(str(fmu))
    assert md.modelExchange is not None and not md.derivatives
    inst, vr, _ = _instance(fmu)
    try:
        inst.setupExperiment(startTime=0.0)
        inst.enterInitializationMode()
        inst.exitInitializationMode()
        rng = np.random.default_rng(7)
        for _ in range(3):
            m1, m2 = rng.normal(size=3), rng.normal(size=3)
            inst.setReal([vr[f"a1.joint.m[{k}]"] for k in (1, 2, 3)], list(m1))
            inst.setReal([vr[f"a2.joint.m[{k}]"] for k in (1, 2, 3)], list(m2))
            got = inst.getReal([vr["a1.joint.tau"], vr["a2.joint.tau"]] +
                               [vr[f"g.W[{k}]"] for k in range(1, 7)])  # fmt: skip
            s2 = with_parameters(s, {f"m1.value[{k + 1}]": m1[k] for k in range(3)}
                                 | {f"m2.value[{k + 1}]": m2[k] for k in range(3)})  # fmt: skip
            eng = Engine(s2)
            ev = eng.evaluate(0.0, eng.initial_state())
            ref = np.concatenate([eng.signal(ev, "a1.joint.tau"), eng.signal(ev, "a2.joint.tau"),
                                  eng.signal(ev, "g.W")])  # fmt: skip
            assert np.allclose(got, ref, rtol=1e-12, atol=1e-12)
            inst.doStep(0.0, 0.1)
    finally:
        inst.terminate()
        inst.freeInstance()


def test_the_command_line_writes_a_model_fmu_or_refuses_in_one_line(tmp_path, capsys):
    from titopfmu.cli import main

    out = tmp_path / "b3.fmu"
    assert main(["export", "balloon", "--fmu", str(out), "--fmi-version", "3",
                 "--signal", "pend1.joint.m", "--t-final", "5", "--quiet"]) == 0  # fmt: skip
    md = read_model_description(str(out))
    assert md.fmiVersion == "3.0" and float(md.defaultExperiment.stopTime) == 5.0
    assert {"pend1.joint.m", "theta1", "pend1.theta0"} <= {v.name for v in md.modelVariables}
    assert main(["export", "balloon", "--fmu", str(tmp_path / "x.fmu"), "--signal",
                 "buoyancy.y", "--quiet"]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "buoyancy.y" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.fmu").exists()


def test_a_single_pendulum_model_fmu_builds_and_declares_units(tmp_path):
    """The smallest model (one revolute body, two states) compiles (a regression: an inlined
    bound the compiler once doubted), and the twist of a free root carries its units."""
    s = System("pendulum")
    s.add(Ground("g", children={"A": (0.0, 0.0, 0.0)}))
    s.add(RevoluteBody("arm", 1.0, np.diag([0.01, 0.01, 0.01]), axis=(0, 0, 1),
                       com=(0.0, -0.5, 0.0), theta0=0.4, gravity=(0, -9.81, 0)))  # fmt: skip
    s.add(Constant("tau", 0.0))
    s.connect("g.A", "arm.P")
    s.connect("tau.y", "arm.joint.tau")
    fmu = export_fmu(s, tmp_path / "pendulum.fmu", signals=["arm.joint.m[3]"], win64=False)
    r = simulate_fmu(str(fmu), fmi_type="CoSimulation", stop_time=1.0, output_interval=0.01,
                     output=["arm.joint.m[3]"])  # fmt: skip
    ref = engine_run(s, 1.0, 0.1, {"q": "arm.joint.m[3]"})
    assert _compare(ref, r["time"], [r["arm.joint.m[3]"]]) < 1e-6
    v = {x.name: x for x in read_model_description(str(fmu)).modelVariables}
    assert v["arm.state.q"].unit == "rad" and v["der(arm.state.qd)"].unit == "rad/s2"
    b = {x.name: x for x in read_model_description(str(export_fmu(
        base_and_arm(), tmp_path / "ba.fmu", win64=False))).modelVariables}  # fmt: skip
    assert b["base.twist[1]"].unit == "m/s" and b["base.twist[6]"].unit == "rad/s"
