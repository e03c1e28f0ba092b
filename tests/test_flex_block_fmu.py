"""One FMU per flexible block (issue 34; docs/fmus.md "One FMU per flexible block", docs/cosim.md):
a flexible block's FMU is its block FMU with the reduced model baked in as constant tables (the
model FMU's, titopfmu.fmi.native.generate.flex_tables), its elastic coordinates and rates
continuous states after the block's own, their initial values the parameters ``elastic_q0`` and
``elastic_qdot0``; ``CoSimulation.from_system`` builds it (its model identifier carries a hash
of the reduced model) and the master co-simulates it with the other blocks' FMUs.

The references are independent of the FMU: the in-process engine on the same System (the core's
whole-model evaluation: its state derivative, its DOP853 trajectory at rtol 1e-11), central
differences of the FMU's own values for its directional derivatives, and the co-simulation read
back from the SSP it was written to. Two systems (tests/flex_systems.py): a flexible strip on a
revolute joint swinging under gravity, and that strip carrying a rigid link on a revolute joint
at its tip node (child port 1 at node 1: the FMU's C1.W input a known wrench at the node, its
C1.m output the node's motion).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import warnings
import zipfile
from ctypes import c_double
from pathlib import Path

import numpy as np
import pytest

import titopfmu as t
from titopfmu.flex import cantilever_modes

fmpy = pytest.importorskip("fmpy")
from flex_systems import linked, pendulum, strip  # noqa: E402
from fmpy import extract, read_model_description  # noqa: E402
from fmpy.fmi2 import FMU2Model  # noqa: E402
from fmpy.fmi3 import FMU3Model  # noqa: E402
from fmpy.validation import validate_fmu  # noqa: E402
from fmu_helpers import MeInstance, fmi_scalars  # noqa: E402

from titopfmu.fmi.build import build_variants  # noqa: E402
from titopfmu.fmi.catalog import FMU_TYPES, flex_fmu_type  # noqa: E402
from titopfmu.fmi.native.build import build_native  # noqa: E402
from titopfmu.master import CoSimulation, read_ssp, write_ssp  # noqa: E402
from titopfmu.master.from_system import (  # noqa: E402
    StiffCouplingWarning,
    block_parameters,
    simulate_system,
    system_mapping,
)

#: the pendulum strip's initial elastic state (mass-normalised coordinates, sqrt(kg) m; per s)
Q0 = np.linspace(1e-4, 6e-4, 6)
QD0 = np.linspace(-2e-3, 3e-3, 6)


@pytest.fixture(scope="module")
def red():
    fe = strip().fe_model()
    return cantilever_modes(fe, 6, [fe.n_nodes - 1], damping=0.01)


@pytest.fixture(scope="module")
def systems(red):
    return {"pendulum": pendulum(red, Q0, QD0), "linked": linked(red)}


@pytest.fixture(scope="module")
def fmus(systems, tmp_path_factory):
    """Every FMU the two systems need (FMI 2.0, Linux), built once into one folder: the
    flexible arm's without and with a child port, the ground's, the rigid link's."""
    folder = tmp_path_factory.mktemp("flex_block_fmus")
    wanted = {}
    for s in systems.values():
        m = system_mapping(s)
        for key, n in m.variants.values():
            wanted[(key, n)] = m.fmu_type(key)
    build_variants(folder, [(ft, n) for (_, n), ft in sorted(wanted.items(), key=lambda kv:
                                                                kv[0])], jobs=2, win64=False)
    return folder


def arm_start(block) -> dict[str, float]:
    """The FMI 2.0 start values of a block FMU's parameters (scalar names) from the block."""
    return fmi_scalars(block_parameters(block))


def random_states(engine, rng, k: int) -> list[np.ndarray]:
    """The initial state and k random ones about it (the joint's angle and rate by ~0.5, the
    elastic coordinates by ~1e-3 and their rates by ~1e-2)."""
    x0 = engine.initial_state()
    n = len(x0)
    scale = np.full(n, 0.5)
    scale[2:8], scale[8:14] = 1e-3, 1e-2
    return [x0] + [x0 + scale * rng.standard_normal(n) for _ in range(k)]


# -- (a) model exchange: the engine's state derivative -------------------------------------------


def test_model_exchange_derivatives_fmi2_and_fmi3(systems, fmus, tmp_path):
    s = systems["pendulum"]
    engine = t.Engine(s)
    arm = s.blocks["arm"]
    path = fmus / f"{system_mapping(s).model_names()['arm']}.fmu"
    me = MeInstance(path, arm_start(arm))  # its parent's motion P.m = 0: the ground at rest
    try:
        names = [n for n in me.names if n.startswith("state.")]
        assert names == [f"state.{n}" for n in arm.state_names]
        assert names[2:4] == ["state.q.mode1", "state.q.mode2"]  # the model FMU's names
        np.testing.assert_array_equal(me.state(), engine.initial_state())
        states = random_states(engine, np.random.default_rng(5), 4)
        worst2 = 0.0
        for x in states:
            ref = engine.derivative(0.0, x)
            err = np.max(np.abs(me.derivative(x) - ref)) / np.max(np.abs(ref))
            worst2 = max(worst2, float(err))
    finally:
        me.close()
    assert worst2 < 1e-12
    assert validate_fmu(str(path)) == []
    # FMI 3.0: the same block's FMU, array parameters
    ftype = system_mapping(s).fmu_type(system_mapping(s).variants["arm"][0])
    p3 = build_native(ftype, 0, tmp_path, win64=False, fmi_version=3)
    md = read_model_description(str(p3))
    assert md.modelExchange.modelIdentifier == path.stem
    var = {v.name: v for v in md.modelVariables}
    unzipped = extract(str(p3))
    m3 = FMU3Model(guid=md.guid, unzipDirectory=unzipped, modelIdentifier=path.stem,
                   instanceName="me3")  # fmt: skip
    m3.instantiate()
    try:
        m3.enterInitializationMode(startTime=0.0)
        for k, v in block_parameters(arm).items():
            m3.setFloat64([var[k].valueReference], list(np.asarray(v, float).reshape(-1)))
        m3.exitInitializationMode()
        m3.updateDiscreteStates()
        m3.enterContinuousTimeMode()
        nx = m3.getNumberOfContinuousStates()
        assert nx == len(arm.state_names)
        x = (c_double * nx)()
        m3.getContinuousStates(x, nx)
        np.testing.assert_array_equal(np.array(x), engine.initial_state())
        worst3 = 0.0
        for xs in states:
            m3.setContinuousStates((c_double * nx)(*xs), nx)
            d = (c_double * nx)()
            m3.getContinuousStateDerivatives(d, nx)
            ref = engine.derivative(0.0, xs)
            worst3 = max(worst3, float(np.max(np.abs(np.array(d) - ref)) / np.max(np.abs(ref))))
    finally:
        m3.terminate()
        m3.freeInstance()
        shutil.rmtree(unzipped, ignore_errors=True)
    assert worst3 < 1e-12
    assert validate_fmu(str(p3)) == []


# -- (d) directional derivatives: central differences ---------------------------------------------


def test_directional_derivatives_match_central_differences(systems, fmus):
    """The arm's FMU with its child port (linked system): d(outputs, derivatives) along a state
    and along each input port (the parent's motion, the tip's wrench, the joint torque), exact
    (complex step), against central differences of the FMU's own values."""
    s = systems["linked"]
    path = fmus / f"{system_mapping(s).model_names()['arm']}.fmu"
    md = read_model_description(str(path))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    unzipped = extract(str(path))
    fmu = FMU2Model(guid=md.guid, unzipDirectory=unzipped,
                    modelIdentifier=md.modelExchange.modelIdentifier, instanceName="dd")
    fmu.instantiate()
    rng = np.random.default_rng(11)
    try:
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        for k, v in arm_start(s.blocks["arm"]).items():
            fmu.setReal([vr[k]], [v])
        fmu.exitInitializationMode()
        fmu.enterContinuousTimeMode()
        nx = md.numberOfContinuousStates
        x = np.array([0.3, 0.4, *(1e-3 * rng.standard_normal(6)), *(1e-2 * rng.standard_normal(6))])
        inputs = [v.name for v in md.modelVariables if v.causality == "input"]
        u = {n: 0.0 for n in inputs}
        u.update({f"P.m[{i}]": float(rng.normal(0.0, 0.5)) for i in range(1, 19)})
        u.update({f"C1.W[{i}]": float(rng.normal(0.0, 5.0)) for i in range(1, 7)})
        u["joint.tau[1]" if "joint.tau[1]" in vr else "joint.tau"] = 0.7
        outs = [v.name for v in md.modelVariables if v.causality == "output"]
        outs = [n for n in outs if n.startswith(("P.W", "C1.m"))]
        unknown = [vr[n] for n in outs] + [vr[f"der(state.{n})"] for n in
                                           s.blocks["arm"].state_names]  # fmt: skip

        def values(xv, uv) -> np.ndarray:
            fmu.setContinuousStates((c_double * nx)(*xv), nx)
            fmu.setReal([vr[n] for n in uv], list(uv.values()))
            dx = (c_double * nx)()
            fmu.getDerivatives(dx, nx)
            return np.concatenate([fmu.getReal([vr[n] for n in outs]), np.array(dx)])

        directions = [("state.q", None), ("state.q.mode3", None), ("state.qd.mode2", None),
                      ("P.m[2]", 1.0), ("P.m[8]", 1.0), ("P.m[17]", 1.0), ("C1.W[1]", 1.0),
                      ("C1.W[5]", 1.0)]  # fmt: skip
        v0 = values(x, u)
        for name, _ in directions:
            if name.startswith("state."):
                k = ["state." + n for n in s.blocks["arm"].state_names].index(name)
                step = 1e-6 * max(1.0, abs(x[k]))
                xp, xm = x.copy(), x.copy()
                xp[k] += step
                xm[k] -= step
                fd = (values(xp, u) - values(xm, u)) / (2 * step)
                values(x, u)
            else:
                step = 1e-6 * max(1.0, abs(u[name]))
                fd = (values(x, {**u, name: u[name] + step})
                      - values(x, {**u, name: u[name] - step})) / (2 * step)  # fmt: skip
                values(x, u)
            exact = np.array(fmu.getDirectionalDerivative(unknown, [vr[name]], [1.0]))
            # differences' error: truncation ~ step^2, rounding ~ eps |values| / step
            tol = 1e-5 * max(1.0, float(np.max(np.abs(exact)))) + 1e-8 * np.max(np.abs(v0))
            assert np.max(np.abs(exact - fd)) < tol, name
            assert np.max(np.abs(exact)) > 0.0, name  # (a direction that moves something)
    finally:
        fmu.terminate()
        fmu.freeInstance()
        shutil.rmtree(unzipped, ignore_errors=True)


# -- (b) co-simulation against the engine's trajectory --------------------------------------------


def _cosim_errors(system, fmus, stop: float, steps, record, stiff=None
                  ) -> list[dict[str, float]]:  # fmt: skip
    """The largest gap of each recorded signal between the co-simulation at each step and the
    engine; ``stiff`` (a dict) gets, per step, the StiffCouplingWarning messages."""
    stiff = {} if stiff is None else stiff
    ref = t.Engine(system).simulate(stop, output_interval=0.01, record=record, rtol=1e-11,
                                    atol=1e-13)  # fmt: skip
    out = []
    for h in steps:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = simulate_system(CoSimulation.from_system(system, fmus), stop, h,
                                  record=record, output_interval=0.01)  # fmt: skip
        stiff[h] = [str(w.message) for w in caught
                    if issubclass(w.category, StiffCouplingWarning)]  # fmt: skip
        assert len(res["time"]) == len(ref["time"])
        out.append({c: float(np.max(np.abs(np.asarray(res[c]) - np.asarray(ref[c]))))
                    for c in record})  # fmt: skip
    return out


def test_cosim_of_the_flexible_pendulum(systems, fmus):
    """Ground + flexible arm: no coupling error (the parent at rest), only the FMU's internal
    RK4 at its default step (from_system: h ω_max <= 0.1)."""
    rec = ["arm.joint.m[3]", "arm.state.q.mode1", "arm.state.q.mode6"]
    stiff: dict = {}
    (err,) = _cosim_errors(systems["pendulum"], fmus, 0.3, [1e-3], rec, stiff)
    assert stiff[1e-3] == []  # no coupling to warn of: the parent is a Ground
    assert err["arm.joint.m[3]"] < 1e-7  # rad (measured 4.8e-8)
    assert err["arm.state.q.mode1"] < 1e-7  # of q up to 4e-3 (measured 2.2e-8)


def test_cosim_of_a_flexible_link_carrying_a_rigid_link(systems, fmus):
    """The flexible arm's C1.m (its tip node's motion) drives the rigid link's P.m, the link's
    P.W is the arm's C1.W (a known wrench at the node): the master's coupling error against
    the engine, at two communication steps."""
    rec = ["arm.joint.m[3]", "link.joint.m[3]", "arm.state.q.mode1"]
    stiff: dict = {}
    coarse, fine = _cosim_errors(systems["linked"], fmus, 0.3, [5e-4, 2.5e-4], rec, stiff)
    # h ω_max = 0.71 at 5e-4 s (the strip's highest mode 1420 rad/s, coupled to the link):
    # warned, naming the block and a step that resolves it; 0.36 at 2.5e-4 s: not warned
    assert len(stiff[5e-4]) == 1 and "block 'arm'" in stiff[5e-4][0], stiff
    assert "step of at most 0.00035 s" in stiff[5e-4][0] and stiff[2.5e-4] == [], stiff
    assert fine["link.joint.m[3]"] < 3e-5  # rad (measured 9.3e-6)
    assert fine["arm.joint.m[3]"] < 1e-5  # rad (measured 1.0e-6)
    assert fine["arm.state.q.mode1"] < 1e-7  # of q up to 9e-4 (measured 2.5e-8)
    for c in rec:  # it converges (measured: 31 to 55 times smaller at half the step)
        assert coarse[c] > 4.0 * fine[c], c


def test_model_exchange_mode_has_no_coupling_error(systems, fmus):
    """The same FMUs integrated together by the master's model-exchange mode (one integrator,
    the loop solved at every evaluation): the engine's trajectory to the tolerances, so that the
    co-simulation's errors above are the explicit coupling's, not the FMUs'."""
    s = systems["linked"]
    rec = ["arm.joint.m[3]", "link.joint.m[3]", "arm.state.q.mode1"]
    ref = t.Engine(s).simulate(0.05, output_interval=0.01, record=rec, rtol=1e-11, atol=1e-13)
    res = simulate_system(CoSimulation.from_system(s, fmus), 0.05, 1e-3, record=rec,
                          output_interval=0.01, mode="me", rtol=1e-9, atol=1e-11)  # fmt: skip
    for c in rec:  # (measured 7e-13 rad, 2.4e-13 for q over 0.1 s)
        assert np.max(np.abs(np.asarray(res[c]) - np.asarray(ref[c]))) < 1e-9, c
    assert np.ptp(ref["arm.state.q.mode1"]) > 1e-5  # the strip deflects


# -- (c) SSP: written, read back, the same run ----------------------------------------------------


def test_ssp_round_trip(systems, fmus, tmp_path):
    s = systems["linked"]
    cs = CoSimulation.from_system(s, fmus)
    path = write_ssp(cs, tmp_path / "linked.ssp", stop_time=0.02, step=5e-4)
    names = zipfile.ZipFile(path).namelist()
    arm_fmu = f"resources/{cs.system_mapping.model_names()['arm']}.fmu"
    assert arm_fmu in names and re.fullmatch(r"resources/TitopRevoluteBodyFlex[0-9a-f]{12}C1\.fmu",
                                             arm_fmu)  # fmt: skip
    back, exp = read_ssp(path)
    rec = ["arm.joint.m[3]", "arm.state.q.mode1", "link.joint.m[3]"]
    r0 = cs.simulate(0.02, 5e-4, record=rec)
    r1 = back.simulate(exp.stop_time, exp.step, start_time=exp.start_time, record=rec)
    np.testing.assert_array_equal(np.array(r1.rows), np.array(r0.rows))
    assert np.ptp(r0["arm.state.q.mode1"]) > 1e-6  # the comparison is not of constants


# -- the FMU types: one per reduced model, from the cache ----------------------------------------


def test_one_fmu_per_reduced_model_from_the_cache(systems, fmus, red, tmp_path, monkeypatch):
    base = FMU_TYPES["revolute_body"]
    a, b = flex_fmu_type(base, red), flex_fmu_type(base, red)
    assert a.key == b.key and a.model_name(1) == b.model_name(1)
    fe = strip().fe_model()
    other = cantilever_modes(fe, 4, [fe.n_nodes - 1], damping=0.01)
    assert flex_fmu_type(base, other).key != a.key  # another reduced model: another FMU
    assert flex_fmu_type(FMU_TYPES["prismatic_body"], red).key != a.key
    # fmus=None: the FMUs from the per-user cache (here filled beforehand: no build)
    from titopfmu.fmi.cache import cache_key

    monkeypatch.setenv("TITOPFMU_CACHE_DIR", str(tmp_path))
    folder = tmp_path / "fmus" / cache_key(None, 2)
    shutil.copytree(fmus, folder)
    cs = CoSimulation.from_system(systems["pendulum"], notice=lambda message: None)
    assert str(cs.components["arm"].file.path).startswith(str(folder))
    res = simulate_system(cs, 0.01, 1e-3, record=["arm.state.q.mode1"])
    assert abs(res["arm.state.q.mode1"][0] - Q0[0]) < 1e-15  # elastic_q0 bound


def test_a_port_off_its_node_is_refused_by_name(systems, fmus):
    """The FMU's child-port point is a parameter: off the reduced model's node 1 the core
    refuses the block (titop_check_flex's rule), the FMU's message saying so."""
    from fmpy.fmi1 import FMICallException
    from fmu_helpers import callbacks_with

    s = systems["linked"]
    path = fmus / f"{system_mapping(s).model_names()['arm']}.fmu"
    md = read_model_description(str(path))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    unzipped = extract(str(path))
    messages: list[str] = []
    fmu = FMU2Model(guid=md.guid, unzipDirectory=unzipped,
                    modelIdentifier=md.modelExchange.modelIdentifier, instanceName="off")
    fmu.instantiate(loggingOn=True, callbacks=callbacks_with(
        lambda env, inst, status, cat, msg: messages.append(msg.decode())))  # fmt: skip
    fmu._titop_keep = fmu.callbacks  # the C side holds pointers into it
    try:
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        start = arm_start(s.blocks["arm"])
        start["C1.point[1]"] += 0.01
        for k, v in start.items():
            fmu.setReal([vr[k]], [v])
        with pytest.raises(FMICallException):
            fmu.exitInitializationMode()
    finally:
        fmu.freeInstance()
        shutil.rmtree(unzipped, ignore_errors=True)
    assert any("child port" in m and "node 1" in m for m in messages), messages


# -- memory: the flexible block FMU's sources under AddressSanitizer/UBSan and valgrind -----------


def test_the_flexible_block_fmus_sources_run_clean_under_sanitizers_and_valgrind(systems, fmus,
                                                                                 tmp_path):
    """``sources/`` of the flexible arm's FMU with a child port at its tip node (its reduced
    model in the constant tables, fmu_flex.c) compiled under AddressSanitizer and UBSan: the
    generic C host (tests/core/fmu_host_any.c, no Python in its process) runs it as a
    co-simulation and as a model-exchange unit (a held wrench at the node, the strip deflected
    and vibrating; steps of 0.1 ms, the modes resolved) with no error, and the numbers of the
    plain binary; valgrind finds no error and no leak in the plain binary."""
    from titopfmu.fmi.native.build import FMI_HEADERS, compiler

    host_src = Path(__file__).parent / "core" / "fmu_host_any.c"
    s = systems["linked"]
    path = fmus / f"{system_mapping(s).model_names()['arm']}.fmu"
    md = read_model_description(str(path))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    unzipped = tmp_path / "x"
    with zipfile.ZipFile(path) as z:
        z.extractall(unzipped)
    src = unzipped / "sources"
    flags = ["-g", "-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
             "-fno-omit-frame-pointer"]  # fmt: skip
    san = tmp_path / "san.so"
    subprocess.run([compiler(), "-std=c99", "-shared", "-fPIC", *flags, "-I", str(src),
                    *(str(src / f) for f in ("fmi2_block.c", "fmu_block.c", "titop_double.c",
                                              "titop_complex.c")),
                    "-o", str(san), "-lm"], check=True)  # fmt: skip
    hosts = {}
    for kind, extra in (("san", flags), ("plain", ["-O2"])):
        hosts[kind] = tmp_path / f"host_{kind}"
        subprocess.run([compiler(), "-std=c99", "-D_POSIX_C_SOURCE=200809L", *extra, "-I",
                        str(FMI_HEADERS), str(host_src), "-o", str(hosts[kind]), "-ldl",
                        "-lm"], check=True)  # fmt: skip
    plain = unzipped / "binaries" / "linux64" / f"{path.stem}.so"
    start = arm_start(s.blocks["arm"])
    start.update({f"elastic_q0[{k + 1}]": float(q) for k, q in enumerate(Q0)})
    start.update({"C1.W[3]": -2.0, "C1.W[5]": 0.1})  # a held wrench at the tip node
    outs = [*(f"P.W[{i}]" for i in range(1, 7)), *(f"C1.m[{i}]" for i in (13, 14, 15)),
            *(f"joint.m[{i}]" for i in (1, 2, 3))]
    lines = [*(f"f64 {vr[k]} 1 {x!r}" for k, x in start.items() if k in vr),
             f"int {vr['solver.method']} 4", f"f64 {vr['solver.max_step']} 1 1e-4",
             *(f"out {vr[k]} 1" for k in outs)]  # fmt: skip
    nx = len(md.derivatives)
    runs = {}
    for mode in ("cs", "me"):
        plan = tmp_path / f"{mode}.plan"
        plan.write_text("\n".join([f"mode {mode}", f"states {nx}", "steps 0.0001 200", *lines])
                        + "\n")  # fmt: skip
        for kind, binary, host in (("san", san, hosts["san"]), ("plain", plain, hosts["plain"])):
            p = subprocess.run([str(host), str(binary), md.guid,
                                (unzipped / "resources").as_uri(), str(plan)],
                               capture_output=True, text=True,
                               env={"ASAN_OPTIONS": "detect_leaks=1"})  # fmt: skip
            assert p.returncode == 0, (mode, kind, p.stderr[-3000:])
            assert "runtime error" not in p.stderr and "AddressSanitizer" not in p.stderr
            runs[mode, kind] = np.array([float(v) for v in p.stdout.split()])
        np.testing.assert_allclose(runs[mode, "san"], runs[mode, "plain"], rtol=1e-12,
                                   atol=1e-13)  # fmt: skip
        assert runs[mode, "plain"].size == len(outs) and abs(runs[mode, "plain"][-1] - 0.3) > 1e-4
    np.testing.assert_allclose(runs["cs", "plain"], runs["me", "plain"], rtol=1e-5, atol=1e-7)
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    p = subprocess.run(["valgrind", "--error-exitcode=7", "--leak-check=full",
                        "--errors-for-leak-kinds=definite,indirect", str(hosts["plain"]),
                        str(plain), md.guid, (unzipped / "resources").as_uri(),
                        str(tmp_path / "cs.plan")], capture_output=True, text=True)  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
