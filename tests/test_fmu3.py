"""The FMI 3.0 units (``titopfmu build --fmi-version 3``): built for real, loaded with fmpy.

* Every FMI 3.0 FMU passes fmpy's validator with 0 problems and carries the FMI 3.0 layout
  (``binaries/x86_64-linux``, the FMI 3.0 functions and headers in ``sources/``).
* Each array variable is the FMI 2.0 unit's scalars, in order, with the same start values, and
  its ModelStructure dependencies are the FMI 2.0 ones gathered per variable.
* At random parameters, inputs and states, the outputs, state derivatives, one communication
  step and the exact directional derivatives equal the FMI 2.0 unit's (built from the same
  sources, itself checked against the core and the engine in ``test_fmu.py``); the adjoint
  derivative is the transpose of the directional one.
* fmpy simulates the pendulum as CS and as ME and agrees with the in-process engine.
* Refusals hold as in FMI 2: non-finite inputs and parameters, calls out of sequence, a wrong
  number of values, corrupt FMU states, oversized steps; the instance goes on.
"""

from __future__ import annotations

import zipfile

import numpy as np
import pytest
from fmpy import extract, read_model_description, simulate_fmu
from fmpy.fmi1 import FMICallException
from fmpy.fmi3 import FMU3Model, FMU3Slave
from fmpy.validation import validate_fmu
from fmu_helpers import load, set_parameters
from test_fmu_host import COM_Y, INERTIA, MASS, Q0, engine_pendulum

from titopfmu.fmi.build import build_fmus
from titopfmu.fmi.catalog import all_variants, random_values

VARIANTS = [ftype.model_name(n) for ftype, n in all_variants()]
#: the types compared with their FMI 2.0 unit (the balloon's bodies and laws, and the rest)
COMPARED = ["rigid_body", "revolute_body", "prismatic_body", "joint_spring_damper", "free_body",
            "spherical_body_inverse", "welded_body", "imposed_motion_body", "ground",
            "loop_closure"]  # fmt: skip


@pytest.fixture(scope="module")
def built3(tmp_path_factory):
    out = tmp_path_factory.mktemp("fmus3")
    return {p.stem: p for p in build_fmus(out, fmi_version=3, win64=False)}


@pytest.fixture(scope="module")
def built2(tmp_path_factory):
    out = tmp_path_factory.mktemp("fmus2")
    return {p.stem: p for p in build_fmus(out, types=COMPARED, max_children=1, win64=False)}


class Unit3:
    """An extracted FMI 3.0 FMU: its variables by name and its instances."""

    def __init__(self, path):
        self.md = read_model_description(str(path))
        self.dir = extract(str(path))
        self.var = {v.name: v for v in self.md.modelVariables}
        self.messages: list[str] = []

    def vr(self, name: str) -> int:
        return self.var[name].valueReference

    def size(self, name: str) -> int:
        return int(np.prod([int(d.start) for d in self.var[name].dimensions])) or 1

    def instance(self, cs: bool = True):
        cls = FMU3Slave if cs else FMU3Model
        fmu = cls(guid=self.md.guid, unzipDirectory=self.dir,
                  modelIdentifier=self.md.modelName, instanceName="t3")  # fmt: skip

        def log(env, status, category, message):
            self.messages.append(message.decode())

        fmu.instantiate(loggingOn=True, logMessage=log)
        return fmu

    def set_parameters(self, fmu, params, values) -> None:
        for p in params:
            if p.name not in values:
                continue
            vr = [self.vr(p.name)]
            if p.boolean:
                fmu.setBoolean(vr, [bool(values[p.name])])
            elif p.integer:
                fmu.setInt32(vr, [int(values[p.name])])
            else:
                fmu.setFloat64(vr, list(np.asarray(values[p.name], float).reshape(-1)))


def num(x) -> float:
    """A start value as a number (booleans as 0/1)."""
    return float({"true": 1, "false": 0}.get(str(x).lower(), x))


def type_of(name: str):
    for t, n in all_variants():
        if t.model_name(n) == name:
            return t, n
    raise KeyError(name)


# -- build and model description -------------------------------------------------------------


@pytest.mark.parametrize("name", VARIANTS)
def test_every_fmi3_fmu_validates_and_is_self_contained(built3, name):
    path = built3[name]
    assert validate_fmu(str(path)) == []
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        xml = z.read("modelDescription.xml").decode()
    assert f"binaries/x86_64-linux/{name}.so" in names
    for src in ("fmi3_block.c", "fmu_block.c", "fmu_block.h", "fmu_config.h", "fmi3Functions.h",
                "titop_double.c", "titop_complex.c"):  # fmt: skip
        assert f"sources/{src}" in names, src
    assert not any(n.startswith("sources/fmi2") for n in names)
    md = read_model_description(str(path))
    assert md.fmiVersion == "3.0" and md.modelExchange and md.coSimulation
    assert xml.count('providesDirectionalDerivatives="true"') == 2
    assert xml.count('providesAdjointDerivatives="true"') == 2
    assert md.modelVariables[0].name == "time" and md.modelVariables[0].causality == "independent"


@pytest.mark.parametrize("name", [m for m in VARIANTS if type_of(m)[0].key in COMPARED
                                  and type_of(m)[1] <= 1])  # fmt: skip
def test_array_variables_are_the_fmi2_scalars_and_dependencies(built2, built3, name):
    md2 = read_model_description(str(built2[name]))
    md3 = read_model_description(str(built3[name]))
    scalars = list(md2.modelVariables)
    flat = []  # FMI 3 variables expanded to FMI 2 names, row-major
    for v in md3.modelVariables[1:]:
        dims = [int(d.start) for d in v.dimensions]
        if not dims:
            flat.append((v.name, v))
        else:
            for idx in np.ndindex(*dims):
                flat.append((f"{v.name}[{','.join(str(i + 1) for i in idx)}]", v))
    assert [n for n, _ in flat] == [v.name for v in scalars]
    of3 = {}
    for (_, v3), v2 in zip(flat, scalars, strict=True):
        assert v3.causality == v2.causality and v3.variability == v2.variability
        of3[v2.valueReference] = v3.valueReference
        if v2.start is not None:
            k = [n for n, w in flat if w is v3].index(v2.name)
            assert num(str(v3.start).split()[k]) == num(v2.start), v2.name
    # outputs: the FMI 2 dependencies of every element, gathered per FMI 3 variable
    deps2: dict[int, set[int]] = {}
    for u in md2.outputs + md2.derivatives:
        deps2.setdefault(of3[u.variable.valueReference], set()).update(
            of3[d.valueReference] for d in u.dependencies
        )
    deps3 = {u.variable.valueReference: {d.valueReference for d in u.dependencies}
             for u in md3.outputs + md3.derivatives}  # fmt: skip
    assert deps3 == deps2


# -- the same numbers as the FMI 2.0 unit ----------------------------------------------------


@pytest.mark.parametrize("name", [m for m in VARIANTS if type_of(m)[0].key in COMPARED
                                  and type_of(m)[1] <= 1])  # fmt: skip
def test_fmi3_equals_the_fmi2_unit(built2, built3, name):
    ftype, n = type_of(name)
    params = ftype.params(n)
    u2, u3 = load(built2[name]), Unit3(built3[name])
    rng = np.random.default_rng(7 + n)
    values = random_values(params, rng)
    ins3 = [v for v in u3.md.modelVariables if v.causality == "input"]
    outs3 = [v for v in u3.md.modelVariables if v.causality == "output"]
    states3 = [v for v in u3.md.modelVariables if v.name.startswith("state.")]
    ders3 = [v for v in u3.md.modelVariables if v.name.startswith("der(state.")]
    n_in = sum(u3.size(v.name) for v in ins3)
    n_out = sum(u3.size(v.name) for v in outs3)
    u = rng.uniform(-0.8, 0.8, n_in)
    in2 = [u2.vr[x.name] for x in u2.md.modelVariables if x.causality == "input"]
    out2 = [u2.vr[x.name] for x in u2.md.modelVariables if x.causality == "output"]
    f2 = u2.instantiate("t2")
    f3 = u3.instance(cs=True)
    try:
        f2.setupExperiment(startTime=0.5)
        f2.enterInitializationMode()
        set_parameters(f2, u2, params, values)
        f2.exitInitializationMode()
        f3.enterInitializationMode(startTime=0.5)
        u3.set_parameters(f3, params, values)
        f3.exitInitializationMode()
        if n_in:
            f2.setReal(in2, list(u))
            f3.setFloat64([v.valueReference for v in ins3], list(u))
        o2 = np.array(f2.getReal(out2))
        o3 = np.array(f3.getFloat64([v.valueReference for v in outs3], n_out))
        np.testing.assert_array_equal(o3, o2)
        # exact directional derivatives: the whole Jacobian of the outputs, and its adjoint
        if n_in:
            J2 = np.array([f2.getDirectionalDerivative(out2, [k], [1.0]) for k in in2]).T
            seed = rng.normal(size=n_in)
            d3 = f3.getDirectionalDerivative([v.valueReference for v in outs3],
                                             [v.valueReference for v in ins3], list(seed), n_out)
            np.testing.assert_allclose(d3, J2 @ seed, rtol=1e-13, atol=1e-13)
            w = rng.normal(size=n_out)
            a3 = f3.getAdjointDerivative([v.valueReference for v in outs3],
                                         [v.valueReference for v in ins3], list(w), n_in)
            np.testing.assert_allclose(a3, J2.T @ w, rtol=1e-13, atol=1e-13)
        # one communication step (Heun sub-steps), then the outputs again
        f2.doStep(0.5, 0.01)
        f3.doStep(0.5, 0.01)
        np.testing.assert_array_equal(
            np.array(f3.getFloat64([v.valueReference for v in outs3], n_out)),
            np.array(f2.getReal(out2)))  # fmt: skip
        assert f3.getFloat64([0]) == [pytest.approx(0.51, abs=1e-15)]  # time
    finally:
        f2.terminate()
        f2.freeInstance()
        f3.terminate()
        f3.freeInstance()
    if not states3:
        return
    # model exchange: the state derivatives at a random state equal the FMI 2 unit's
    from fmpy.fmi2 import FMU2Model

    me_id = u2.md.modelExchange.modelIdentifier
    m2 = FMU2Model(guid=u2.md.guid, unzipDirectory=u2.directory, modelIdentifier=me_id,
                   instanceName="m2")  # fmt: skip
    m2.instantiate(loggingOn=False)
    m3 = u3.instance(cs=False)
    try:
        m2.setupExperiment(startTime=0.0)
        m2.enterInitializationMode()
        set_parameters(m2, u2, params, values)
        m2.exitInitializationMode()
        m2.newDiscreteStates()
        m2.enterContinuousTimeMode()
        m3.enterInitializationMode(startTime=0.0)
        u3.set_parameters(m3, params, values)
        m3.exitInitializationMode()
        m3.updateDiscreteStates()
        m3.enterContinuousTimeMode()
        nx = len(states3)
        assert m3.getNumberOfContinuousStates() == nx
        x = np.array(rng.normal(0.0, 0.5, nx))
        from ctypes import c_double

        m2.setContinuousStates((c_double * nx)(*x), nx)
        m3.setContinuousStates((c_double * nx)(*x), nx)
        if n_in:
            m2.setReal(in2, list(u))
            m3.setFloat64([v.valueReference for v in ins3], list(u))
        d2, d3 = (c_double * nx)(), (c_double * nx)()
        m2.getDerivatives(d2, nx)
        m3.getContinuousStateDerivatives(d3, nx)
        np.testing.assert_array_equal(np.array(d3), np.array(d2))
        # d(der)/d(state) through the FMI 3 directional derivative, against FMI 2
        xs2 = [u2.vr[v.name] for v in states3]
        dx2 = [u2.vr[v.name] for v in ders3]
        J2 = np.array([m2.getDirectionalDerivative(dx2, [k], [1.0]) for k in xs2]).T
        seed = rng.normal(size=nx)
        d = m3.getDirectionalDerivative([v.valueReference for v in ders3],
                                        [v.valueReference for v in states3], list(seed), nx)
        np.testing.assert_allclose(d, J2 @ seed, rtol=1e-13, atol=1e-13)
    finally:
        m2.terminate()
        m2.freeInstance()
        m3.terminate()
        m3.freeInstance()


# -- fmpy simulates the pendulum as CS and as ME ----------------------------------------------


@pytest.mark.parametrize("kind", ["CoSimulation", "ModelExchange"])
def test_fmpy_simulates_the_fmi3_pendulum_like_the_engine(built3, kind):
    start = {"mass": MASS, "com": [0.0, COM_Y, 0.0], "inertia": list(np.diag(INERTIA).ravel()),
             "theta0": Q0, "gravity": [0.0, -9.81, 0.0], "solver.method": 4,
             "solver.max_step": 1e-4}  # fmt: skip
    res = simulate_fmu(str(built3["TitopRevoluteBodyC0"]), fmi_type=kind, start_values=start,
                       stop_time=1.0, output_interval=0.01, step_size=1e-3 if kind ==
                       "CoSimulation" else None, relative_tolerance=1e-10,
                       output=["joint.m"])  # fmt: skip
    q, qd = res["joint.m"][-1, 2], res["joint.m"][-1, 1]
    ref = engine_pendulum(1.0)
    tol = 1e-9 if kind == "CoSimulation" else 1e-6  # RK4 sub-steps; fmpy's CVode at rtol 1e-10
    assert abs(q - ref[0]) < tol and abs(qd - ref[1]) < tol, (q, qd, ref)
    assert abs(ref[0] - Q0) > 0.1


# -- refusals ----------------------------------------------------------------------------------


@pytest.fixture
def revolute3(built3):
    unit = Unit3(built3["TitopRevoluteBodyC1"])
    fmu = unit.instance(cs=True)
    yield unit, fmu
    fmu.freeInstance()


def refused(unit, call, *words):
    unit.messages.clear()
    with pytest.raises(FMICallException) as e:
        call()
    assert "status 3 (error)" in str(e.value)  # fmi3Error, never fmi3Fatal
    text = " ".join(unit.messages)
    for w in words:
        assert w in text, (w, text)


def test_refusals_name_the_variable_and_the_instance_goes_on(revolute3):
    unit, fmu = revolute3
    pm, mass = unit.vr("P.m"), unit.vr("mass")
    refused(unit, lambda: fmu.doStep(0.0, 1e-3), "fmi3DoStep called in instantiated")
    refused(unit, lambda: fmu.setFloat64([pm], [0.0] * 17), "17 values passed", "18")
    refused(unit, lambda: fmu.setFloat64([999], [0.0]), "no variable with value reference 999")
    refused(unit, lambda: fmu.setFloat64([0], [1.0]), "'time'")
    fmu.enterInitializationMode()
    fmu.setFloat64([mass], [-2.0])
    refused(unit, fmu.exitInitializationMode, "parameter 'mass' = -2.0 must be >= 0")
    fmu.setFloat64([mass], [2.0])
    fmu.exitInitializationMode()
    bad = [0.0] * 18
    bad[2] = float("nan")
    refused(unit, lambda: fmu.setFloat64([pm], bad), "input 'P.m[3]' = nan is not finite")
    refused(unit, lambda: fmu.setFloat64([mass], [3.0]), "parameter 'mass'", "fixed")
    refused(unit, lambda: fmu.doStep(0.0, 0.0), "communication step size 0.0 must be > 0")
    refused(unit, lambda: fmu.doStep(0.0, 1e6), "fmi3DoStep over", "solver.max_substeps")
    # nothing changed: a step goes on from the same state (at rest, driven by a torque)
    assert fmu.getFloat64([unit.vr("joint.m")], 3) == [0.0, 0.0, 0.0]
    fmu.setFloat64([unit.vr("joint.tau")], [1.0])
    fmu.doStep(0.0, 1e-3)
    assert fmu.getFloat64([0]) == [pytest.approx(1e-3, abs=1e-15)]
    assert fmu.getFloat64([unit.vr("joint.m")], 3)[1] > 0.0
    fmu.reset()
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    fmu.doStep(0.0, 1e-3)


def _checksummed(data: bytearray) -> bytes:
    """``data`` with its checksum (the first 8 bytes: FNV-1a 64 of the state with them zero, as
    fmu.c computes it) made right again."""
    data = bytearray(data)
    data[:8] = bytes(8)
    h = 14695981039346656037
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    data[:8] = h.to_bytes(8, "little")
    return bytes(data)


def test_corrupt_states_are_refused_and_a_good_one_replays(revolute3):
    unit, fmu = revolute3
    fmu.enterInitializationMode()
    fmu.setFloat64([unit.vr("theta0")], [0.4])
    fmu.exitInitializationMode()
    state = fmu.getFMUState()
    blob = fmu.serializeFMUState(state)
    fmu.doStep(0.0, 0.01)
    after = fmu.getFloat64([unit.vr("C1.m")], 18)
    refused(unit, lambda: fmu.deserializeFMUState(blob[:-8]), "corrupt FMU state", "bytes")
    flipped = bytearray(blob)
    flipped[100] ^= 4
    refused(unit, lambda: fmu.deserializeFMUState(bytes(flipped)), "corrupt FMU state",
            "checksum")  # fmt: skip
    # states well formed (their checksum right) but wrong: each refused by what is wrong
    other = bytearray(blob)
    other[24:48] = b"TitopRigidBodyC1".ljust(24, b"\0")
    refused(unit, lambda: fmu.deserializeFMUState(_checksummed(other)), "not an FMU state of this")
    nan = bytearray(blob)
    # a NaN in the first variable slot (P.m[1]) after the checksum, the header and the time
    off = 8 + 16 + 64 + 8
    nan[off : off + 8] = np.array([np.nan]).tobytes()
    s = fmu.deserializeFMUState(_checksummed(nan))
    refused(unit, lambda: fmu.setFMUState(s), "corrupt FMU state", "P.m[1]")
    fmu.freeFMUState(s)
    s = fmu.deserializeFMUState(blob)
    fmu.setFMUState(s)
    fmu.doStep(0.0, 0.01)
    assert fmu.getFloat64([unit.vr("C1.m")], 18) == after  # bit-identical replay
    fmu.freeFMUState(s)
    fmu.freeFMUState(state)


def test_the_command_line_builds_fmi3_units(tmp_path, capsys):
    from titopfmu.cli import main

    assert main(["build", "--out", str(tmp_path), "--type", "joint_spring_damper",
                 "--fmi-version", "3", "--no-progress"]) == 0  # fmt: skip
    assert "fmpy validator: 0 problems" in capsys.readouterr().out
    md = read_model_description(str(tmp_path / "TitopJointSpringDamper.fmu"))
    assert md.fmiVersion == "3.0"
    assert [v.name for v in md.modelVariables][:3] == ["time", "joint.m", "joint.tau"]
