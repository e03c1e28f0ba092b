"""The FMUs of ``titopfmu build``: built for real, loaded with fmpy, compared with the core blocks.

Every FMU type and variant is built once into a temporary folder (session fixture), validated
with fmpy's validator, and evaluated through FMI calls at random parameters, states and inputs;
its outputs must equal the core block's (:class:`titopfmu.blocks.standalone.StandaloneBlock`,
itself checked against the in-process engine in ``test_standalone.py``) to 1e-12.
"""

from __future__ import annotations

import gc
import math
import zipfile

import numpy as np
import pytest
from fmpy.fmi1 import FMICallException
from fmpy.validation import validate_fmu
from fmu_helpers import fmu_type_of, load, set_parameters, start
from scipy.integrate import solve_ivp

from titopfmu.blocks.standalone import StandaloneBlock
from titopfmu.fmi.build import build_fmus
from titopfmu.fmi.catalog import all_variants, random_values
from titopfmu.fmi.ports import port_variables

VARIANTS = [ftype.model_name(n) for ftype, n in all_variants()]


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("fmus")
    paths = build_fmus(out)
    return {p.stem: p for p in paths}


@pytest.fixture(scope="session")
def loaded(built):
    return {name: load(path) for name, path in built.items()}


def random_inputs(sa: StandaloneBlock, rng: np.random.Generator) -> dict[str, np.ndarray]:
    u = {}
    for ch in sa.inputs:
        v = rng.normal(0.0, 0.8, ch.size)
        if ch.size == 18:  # motion vector: keep the pitch away from gimbal lock
            v[15:18] = rng.uniform(-1.2, 1.2, 3)
        u[ch.name] = v
    return u


def fmi_values(loaded_fmu, ports, values_by_core):
    """Flatten channel values into (vrs, values) in FMI names."""
    vr = loaded_fmu.vr
    vrs, vals = [], []
    for pv in ports:
        if pv.core in values_by_core:
            for comp, value in zip(pv.components, values_by_core[pv.core], strict=True):
                vrs.append(vr[comp.name])
                vals.append(float(value))
    return vrs, vals


def output_vrs(loaded_fmu, ports):
    vr = loaded_fmu.vr
    return {pv.core: [vr[c.name] for c in pv.components] for pv in ports if pv.direction == "out"}


# -- build ------------------------------------------------------------------------------------


def test_build_writes_every_variant_self_contained(built):
    """A native FMU: its binary, the sources to compile it elsewhere (the C core, the FMI
    wrapper, its configuration, the FMI headers), documentation; no Python anywhere."""
    assert sorted(built) == sorted(VARIANTS)
    for name, path in built.items():
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            page = z.read("documentation/index.html").decode()
        assert "modelDescription.xml" in names
        assert "documentation/index.html" in names
        assert f"binaries/linux64/{name}.so" in names
        for src in ("fmi2_block.c", "fmu_config.h", "titop_core.c", "titop_double.c",
                    "titop_complex.c", "titop.h", "fmi2Functions.h"):  # fmt: skip
            assert f"sources/{src}" in names, (name, src)
        assert not any(n.endswith(".py") or n.startswith("resources/") for n in names)
        assert name in page and "Motion vector" in page


@pytest.mark.parametrize("name", VARIANTS)
def test_fmpy_validator_finds_no_problem(built, name):
    assert validate_fmu(str(built[name])) == []


def test_model_structure_twist_and_pose_do_not_depend_on_wrenches(loaded):
    lf = loaded["TitopRevoluteBodyC2"]
    md = lf.md
    # dependencies on inputs (outputs also depend on the model-exchange states)
    deps = {
        u.variable.name: {d.name for d in u.dependencies if d.causality == "input"}
        for u in md.outputs
    }
    assert {u.variable for u in md.outputs} <= {u.variable for u in md.initialUnknowns}
    for c in ("C1", "C2", "body"):
        for i in range(7, 19):  # twist, position, Euler angles
            assert not any(".W[" in d or d == "joint.tau" for d in deps[f"{c}.m[{i}]"])
        # accelerations depend on the child wrenches (the TITOP loop), except the linear one at
        # the joint point P itself: a revolute joint's q̈ does not move P
        for i in range(4 if c == "body" else 1, 7):
            assert "C1.W[1]" in deps[f"{c}.m[{i}]"] and "joint.tau" in deps[f"{c}.m[{i}]"]
    assert not any(".W[" in d for d in deps["body.m[1]"])
    assert deps["joint.m[2]"] == set() and deps["joint.m[3]"] == set()
    assert deps["C1.m[13]"] == {"P.m[13]", "P.m[14]", "P.m[15]"}


@pytest.mark.parametrize("name", VARIANTS)
def test_declared_dependencies_are_complete(loaded, name):
    """Perturbing an input that an output does not declare must not move that output beyond
    rounding (1e-10; a real dependency moves it by ~1e-2 here)."""
    lf = loaded[name]
    ftype, n = fmu_type_of(lf)
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    params = ftype.params(n)
    values = random_values(params, rng)
    fmu = lf.instantiate("deps")
    try:
        start(fmu, lf, params, values)
        ins = [v.valueReference for v in lf.variables("input")]
        if not ins:
            return
        u = list(rng.normal(0.0, 0.5, len(ins)))
        fmu.setReal(ins, u)
        outs = {u_.variable.valueReference: u_ for u_ in lf.md.outputs}
        y0 = fmu.getReal(list(outs))
        for k, vr in enumerate(ins):
            u2 = list(u)
            u2[k] += 0.01
            fmu.setReal(ins, u2)
            y = fmu.getReal(list(outs))
            for (_, unknown), a, b in zip(outs.items(), y0, y, strict=True):
                if abs(a - b) > 1e-10 * (1.0 + abs(a)):
                    declared = {d.valueReference for d in unknown.dependencies}
                    assert vr in declared, (unknown.variable.name, lf.md.modelVariables[vr].name)
    finally:
        fmu.terminate()
        fmu.freeInstance()


# -- outputs against the core ---------------------------------------------------------------


@pytest.mark.parametrize("name", VARIANTS)
def test_outputs_equal_the_core_block(loaded, name):
    lf = loaded[name]
    ftype, n = fmu_type_of(lf)
    params = ftype.params(n)
    fmu = lf.instantiate("cmp")
    try:
        for seed in range(3):
            rng = np.random.default_rng(1000 * seed + n)
            values = random_values(params, rng)
            sa = StandaloneBlock(ftype.make("ref", values, n))
            ports = port_variables(sa, ftype)
            u = random_inputs(sa, rng)
            expected, _ = sa.evaluate(0.25, sa.initial_state(), u)
            if seed:
                fmu.reset()
            start(fmu, lf, params, values, t0=0.25)
            vrs, vals = fmi_values(lf, ports, u)
            if vrs:
                fmu.setReal(vrs, vals)
            for core, ovrs in output_vrs(lf, ports).items():
                got = np.array(fmu.getReal(ovrs))
                np.testing.assert_allclose(got, expected[core], rtol=1e-12, atol=1e-12,
                                           err_msg=f"{name} {core}")  # fmt: skip
    finally:
        fmu.terminate()
        fmu.freeInstance()


@pytest.mark.parametrize(
    "name", ["TitopRigidBodyC1", "TitopRevoluteBodyC1", "TitopPrismaticBodyC0"]
)
def test_do_step_integrates_with_inputs_held(loaded, name):
    """One communication step against scipy's DOP853 on the core block's dx/dt (inputs held)."""
    lf = loaded[name]
    ftype, n = fmu_type_of(lf)
    params = ftype.params(n)
    rng = np.random.default_rng(5)
    values = random_values(params, rng)
    sa = StandaloneBlock(ftype.make("ref", values, n))
    ports = port_variables(sa, ftype)
    u = random_inputs(sa, rng)
    h = 2.5e-3  # three RK4 sub-steps of at most solver.max_step = 1e-3
    sol = solve_ivp(lambda t, x: sa.derivative(t, x, u), (0.0, h), sa.initial_state(),
                    method="DOP853", rtol=1e-13, atol=1e-13)  # fmt: skip
    expected, _ = sa.evaluate(h, sol.y[:, -1], u)
    fmu = lf.instantiate("step")
    try:  # RK4 (the default, Heun, is checked for its order below)
        method = [p for p in _solver_params() if p.name == "solver.method"]
        start(fmu, lf, params + method, {**values, "solver.method": 4})
        vrs, vals = fmi_values(lf, ports, u)
        fmu.setReal(vrs, vals)
        fmu.doStep(0.0, h)
        for core, ovrs in output_vrs(lf, ports).items():
            np.testing.assert_allclose(fmu.getReal(ovrs), expected[core], rtol=1e-9, atol=1e-10,
                                       err_msg=core)  # fmt: skip
    finally:
        fmu.terminate()
        fmu.freeInstance()


def test_do_step_sees_an_input_change_and_the_inputs_of_a_restored_state(loaded):
    """The FMU prepares its inputs once per change: a step after one changed input, and a step
    right after fmi2SetFMUstate (whose inputs are those saved), must use the current inputs."""
    lf = loaded["TitopRevoluteBodyC1"]
    ftype, n = fmu_type_of(lf)
    params = ftype.params(n)
    rng = np.random.default_rng(8)
    values = random_values(params, rng)
    sa = StandaloneBlock(ftype.make("ref", values, n))
    ports = port_variables(sa, ftype)
    u1 = random_inputs(sa, rng)
    u2 = {**u1, "joint.tau": u1["joint.tau"] + 1.0}
    h = 2.5e-3

    def reference(x, u, t0):
        sol = solve_ivp(lambda t, x: sa.derivative(t, x, u), (t0, t0 + h), x, method="DOP853",
                        rtol=1e-13, atol=1e-13)  # fmt: skip
        return sol.y[:, -1]

    x1 = reference(sa.initial_state(), u1, 0.0)
    fmu = lf.instantiate("held")
    try:
        method = [p for p in _solver_params() if p.name == "solver.method"]
        start(fmu, lf, params + method, {**values, "solver.method": 4})
        fmu.setReal(*fmi_values(lf, ports, u1))
        fmu.doStep(0.0, h)
        state = fmu.getFMUstate()  # inputs u1
        for u, restore in ((u2, False), (u1, True)):
            if restore:
                fmu.setReal(*fmi_values(lf, ports, u2))
                fmu.getReal([lf.vr["P.W[1]"]])  # outputs at u2: the inputs are prepared
                fmu.setFMUstate(state)
            else:
                fmu.setReal(*fmi_values(lf, ports, {"joint.tau": u2["joint.tau"]}))
            fmu.doStep(h, h)
            expected, _ = sa.evaluate(2 * h, reference(x1, u, h), u)
            for core, ovrs in output_vrs(lf, ports).items():
                np.testing.assert_allclose(
                    fmu.getReal(ovrs), expected[core], rtol=1e-9, atol=1e-10,
                    err_msg=f"{core}, restored {restore}",
                )  # fmt: skip
            fmu.setFMUstate(state)
        fmu.freeFMUstate(state)
    finally:
        fmu.terminate()
        fmu.freeInstance()


def test_several_instances_of_several_types_interleaved(loaded):
    names = ["TitopRigidBodyC2", "TitopRevoluteBodyC1", "TitopPrismaticBodyC1",
             "TitopLoopClosure", "TitopRevoluteBodyC1", "TitopRigidBodyC2"]  # fmt: skip
    rng = np.random.default_rng(11)
    cases = []
    for i, name in enumerate(names):
        lf = loaded[name]
        ftype, n = fmu_type_of(lf)
        params = ftype.params(n)
        values = random_values(params, rng)
        sa = StandaloneBlock(ftype.make("ref", values, n))
        fmu = lf.instantiate(f"{name}_{i}")
        start(fmu, lf, params, values)
        cases.append((lf, ftype, sa, fmu))
    try:
        for _round in range(3):
            pending = []
            for lf, ftype, sa, fmu in cases:  # set all inputs first, then read all outputs
                ports = port_variables(sa, ftype)
                u = random_inputs(sa, rng)
                vrs, vals = fmi_values(lf, ports, u)
                fmu.setReal(vrs, vals)
                pending.append((lf, sa, fmu, ports, u))
            for lf, sa, fmu, ports, u in pending:
                expected, _ = sa.evaluate(0.0, sa.initial_state(), u)
                for core, ovrs in output_vrs(lf, ports).items():
                    np.testing.assert_allclose(fmu.getReal(ovrs), expected[core], rtol=1e-12,
                                               atol=1e-12)  # fmt: skip
    finally:
        for _, _, _, fmu in cases:
            fmu.terminate()
            fmu.freeInstance()


# -- state ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["TitopRigidBodyC1", "TitopRevoluteBodyC2"])
def test_rollback_replays_bit_identically(loaded, name):
    lf = loaded[name]
    ftype, n = fmu_type_of(lf)
    params = ftype.params(n)
    rng = np.random.default_rng(3)
    values = random_values(params, rng)
    fmu = lf.instantiate("rollback")
    ins = [v.valueReference for v in lf.variables("input")]
    outs = [v.valueReference for v in lf.variables("output")]
    try:
        start(fmu, lf, params, values)
        t = 0.0
        for _ in range(5):
            fmu.setReal(ins, list(rng.normal(0.0, 0.5, len(ins))))
            fmu.doStep(t, 1e-3)
            t += 1e-3
        u_saved = fmu.getReal(ins)
        state = fmu.getFMUstate()
        runs = []
        for _ in range(2):
            fmu.setFMUstate(state)
            assert fmu.getReal(ins) == u_saved  # inputs are part of the state
            ys = []
            tt = t
            for k in range(4):
                fmu.setReal(ins, [0.1 * k + 0.01 * j for j in range(len(ins))])
                fmu.doStep(tt, 1e-3)
                tt += 1e-3
                ys.append(fmu.getReal(outs))
            runs.append(ys)
        assert runs[0] == runs[1]  # bit-identical
        blob = fmu.serializeFMUstate(state)
        fmu.freeFMUstate(state)
        restored = fmu.deSerializeFMUstate(blob)
        fmu.setFMUstate(restored)
        fmu.freeFMUstate(restored)
        ys = []
        tt = t
        for k in range(4):
            fmu.setReal(ins, [0.1 * k + 0.01 * j for j in range(len(ins))])
            fmu.doStep(tt, 1e-3)
            tt += 1e-3
            ys.append(fmu.getReal(outs))
        assert ys == runs[0]
    finally:
        fmu.terminate()
        fmu.freeInstance()


# -- bad input ------------------------------------------------------------------------------


class Log:
    def __init__(self):
        self.messages = []

    def __call__(self, env, instance, status, category, message):
        self.messages.append(message.decode() if isinstance(message, bytes) else str(message))

    def text(self):
        return "\n".join(self.messages)


def _fresh(lf, log, name="bad"):
    fmu = lf.instantiate(name, logger=log)
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    return fmu


@pytest.mark.parametrize(
    "variable, value, words",
    [
        ("mass", -1.0, ["mass", ">= 0"]),  # a joint body may be massless, not negative
        ("inertia[1,2]", 0.05, ["inertia", "symmetric"]),
        ("axis[1]", 0.0, ["axis", "zero"]),
        ("P_a0b[1,1]", 2.0, ["P_a0b", "rotation"]),
        ("solver.max_step", 0.0, ["solver.max_step", "positive"]),
    ],
)
def test_bad_parameter_is_refused_with_its_name(loaded, variable, value, words):
    lf = loaded["TitopRevoluteBodyC1"]
    log = Log()
    fmu = _fresh(lf, log)
    try:
        if variable == "axis[1]":
            fmu.setReal([lf.vr["axis[2]"], lf.vr["axis[3]"]], [0.0, 0.0])
        fmu.setReal([lf.vr[variable]], [value])
        with pytest.raises(FMICallException):
            fmu.exitInitializationMode()
        for w in words:
            assert w in log.text(), log.text()
    finally:
        fmu.freeInstance()


def test_bad_solver_method_is_refused_with_its_name(loaded):
    lf = loaded["TitopRevoluteBodyC1"]
    log = Log()
    fmu = _fresh(lf, log)
    try:
        fmu.setInteger([lf.vr["solver.method"]], [3])
        with pytest.raises(FMICallException):
            fmu.exitInitializationMode()
        assert "solver.method" in log.text()
    finally:
        fmu.freeInstance()


@pytest.mark.parametrize("method, tol", [(1, 2e-2), (2, 2e-4), (4, 1e-9)])
def test_solver_methods_converge_with_their_order(loaded, method, tol):
    """Euler, Heun and RK4 over one 2.5 ms step (inputs held) against DOP853."""
    lf = loaded["TitopRevoluteBodyC0"]
    ftype, n = fmu_type_of(lf)
    params = ftype.params(n)
    rng = np.random.default_rng(8)
    values = random_values(params, rng)
    values["solver.method"] = method
    values["theta_dot0"] = 3.0
    sa = StandaloneBlock(ftype.make("ref", values, n))
    ports = port_variables(sa, ftype)
    u = random_inputs(sa, rng)
    h = 2.5e-3
    sol = solve_ivp(lambda t, x: sa.derivative(t, x, u), (0.0, h), sa.initial_state(),
                    method="DOP853", rtol=1e-13, atol=1e-13)  # fmt: skip
    fmu = lf.instantiate("methods")
    try:
        start(fmu, lf, params + [p for p in _solver_params() if p.name == "solver.method"],
              values)  # fmt: skip
        vrs, vals = fmi_values(lf, ports, u)
        fmu.setReal(vrs, vals)
        fmu.doStep(0.0, h)
        q, qd = fmu.getReal([lf.vr["joint.m[3]"], lf.vr["joint.m[2]"]])
        err = max(abs(q - sol.y[0, -1]), abs(qd - sol.y[1, -1]))
        assert err < tol * h * 3.0
        if method < 4:  # really a lower-order method: not as accurate as RK4
            assert err > 1e-9 * h
    finally:
        fmu.terminate()
        fmu.freeInstance()


def _solver_params():
    from titopfmu.fmi.native.generate import SOLVER_PARAMS

    return SOLVER_PARAMS


def test_non_finite_input_is_refused_with_its_name(loaded):
    lf = loaded["TitopRevoluteBodyC1"]
    log = Log()
    fmu = _fresh(lf, log)
    fmu.exitInitializationMode()
    try:
        with pytest.raises(FMICallException):
            fmu.setReal([lf.vr["P.m[3]"]], [math.nan])
        assert "P.m[3]" in log.text() and "not finite" in log.text()
    finally:
        fmu.freeInstance()


@pytest.mark.parametrize("step", [0.0, -1e-3, math.inf])
def test_non_positive_step_is_refused(loaded, step):
    lf = loaded["TitopRigidBodyC0"]
    log = Log()
    fmu = _fresh(lf, log)
    fmu.exitInitializationMode()
    try:
        with pytest.raises(FMICallException):
            fmu.doStep(0.0, step)
        assert "step size" in log.text()
    finally:
        fmu.freeInstance()


def test_calls_out_of_sequence_are_refused(loaded):
    lf = loaded["TitopRigidBodyC0"]
    log = Log()
    fmu = lf.instantiate("seq", logger=log)
    try:
        fmu.setupExperiment(startTime=0.0)
        with pytest.raises(FMICallException):
            fmu.doStep(0.0, 1e-3)  # before initialization
        assert "fmi2DoStep called in instantiated" in log.text()
    finally:
        fmu.freeInstance()
    log = Log()
    fmu = _fresh(lf, log, "seq2")
    fmu.exitInitializationMode()
    try:
        with pytest.raises(FMICallException):
            fmu.setReal([lf.vr["mass"]], [2.0])  # fixed parameter after initialization
        assert "'mass'" in log.text() and "fixed" in log.text()
    finally:
        fmu.freeInstance()
    log = Log()
    fmu = _fresh(lf, log, "seq3")
    try:
        with pytest.raises(FMICallException):
            fmu.setReal([lf.vr["body.m[1]"]], [1.0])  # an output
        assert "output" in log.text()
    finally:
        fmu.freeInstance()


def test_the_host_survives_errors(loaded):
    """After refused calls the process goes on: new instances work normally."""
    lf = loaded["TitopRigidBodyC0"]
    for i in range(3):
        fmu = _fresh(lf, Log(), f"e{i}")
        fmu.exitInitializationMode()
        with pytest.raises(FMICallException):
            fmu.doStep(0.0, -1.0)
        fmu.freeInstance()
    fmu = lf.instantiate("ok")
    start(fmu, lf, [], {})
    fmu.doStep(0.0, 1e-3)
    assert math.isfinite(fmu.getReal([lf.vr["body.m[3]"]])[0])
    fmu.terminate()
    fmu.freeInstance()


# -- robustness -----------------------------------------------------------------------------


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def test_thousand_instantiate_free_cycles_and_reloads(loaded, built):
    lf = loaded["TitopRevoluteBodyC1"]
    out = lf.vr["joint.m[3]"]

    def cycle(i):
        fmu = lf.instantiate(f"c{i}")
        start(fmu, lf, [], {})
        fmu.doStep(0.0, 1e-3)
        value = fmu.getReal([out])[0]
        fmu.terminate()
        fmu.freeInstance()
        return value

    for i in range(200):
        cycle(i)
    gc.collect()
    rss_200 = _rss_mb()
    values = {cycle(i) for i in range(200, 1000)}
    gc.collect()
    rss_1000 = _rss_mb()
    assert len(values) == 1  # every instance starts from the same state
    assert rss_1000 - rss_200 < 40.0, (rss_200, rss_1000)
    # load and unload the shared library repeatedly (a fresh extraction each time)
    for k in range(5):
        fresh = load(built["TitopRevoluteBodyC1"])
        fmu = fresh.instantiate(f"reload{k}")
        start(fmu, fresh, [], {})
        fmu.doStep(0.0, 1e-3)
        assert fmu.getReal([out])[0] in values
        fmu.terminate()
        fmu.freeInstance()  # fmpy's freeInstance also dlcloses the library: no freeLibrary,
        # a second dlclose would hand ld.so the freed link map of this extraction


def test_parameters_of_one_instance_do_not_leak_into_another(loaded):
    lf = loaded["TitopRevoluteBodyC0"]
    a, b = lf.instantiate("a"), lf.instantiate("b")
    try:
        ftype, n = fmu_type_of(lf)
        start(a, lf, ftype.params(n), {"theta0": 0.7})
        start(b, lf, ftype.params(n), {"theta0": -0.2})
        vr = lf.vr["joint.m[3]"]
        assert a.getReal([vr]) == [0.7] and b.getReal([vr]) == [-0.2]
    finally:
        for f in (a, b):
            f.terminate()
            f.freeInstance()


def test_set_parameters_helper_roundtrip(loaded):
    """Parameter values read back through fmi2GetReal are the ones set (layout sanity)."""
    lf = loaded["TitopRigidBodyC1"]
    ftype, n = fmu_type_of(lf)
    params = ftype.params(n)
    values = random_values(params, np.random.default_rng(2))
    fmu = lf.instantiate("p")
    try:
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        set_parameters(fmu, lf, params, values)
        got = fmu.getReal([lf.vr["inertia[2,3]"], lf.vr["C1.point[3]"]])
        assert got == [values["inertia"][1, 2], values["C1.point"][2]]
    finally:
        fmu.freeInstance()
