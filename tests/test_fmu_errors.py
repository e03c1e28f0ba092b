"""Refused FMI calls return fmi2Error, not fmi2Fatal, and name the variable ("Bad input").

The native FMUs (the C core and the FMI wrapper of ``titopfmu/fmi/native``) are built for real
into a temporary folder, loaded with fmpy, and every kind of refusal is checked for its status
(fmpy raises FMICallException carrying it) and its log message; corrupt FMU states are refused
before anything changes; the instance can be reset, rolled back or freed after an error, also
many times over.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import zipfile

import pytest
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import FMU2Slave
from fmpy.validation import validate_fmu
from fmu_helpers import callbacks_with, load

from titopfmu.fmi.build import build_fmus
from titopfmu.fmi.native.build import BuildError

OK, ERROR, FATAL = 0, 3, 4


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("fmus_errors")
    paths = build_fmus(out, types=["revolute_body", "rigid_body"], max_children=1)
    return {p.stem: p for p in paths}


@pytest.fixture(scope="module")
def revolute(built):
    return load(built["TitopRevoluteBodyC1"])


class Log:
    """The host's logger: (status, category, message) of every message."""

    def __init__(self):
        self.messages: list[tuple[int, str | None, str]] = []

    def __call__(self, env, instance, status, category, message):
        cat = category.decode() if category else None
        self.messages.append((int(status), cat, message.decode()))

    def statuses(self) -> set[int]:
        return {s for s, _, _ in self.messages}

    def text(self, status: int) -> str:
        return "\n".join(m for s, _, m in self.messages if s == status)


def status_of(call, *args) -> int:
    try:
        call(*args)
    except FMICallException as exc:
        return exc.status
    return OK


def initialized(fmu, vr=None):
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()


def running(fmu, vr=None):
    initialized(fmu)
    fmu.exitInitializationMode()


# -- the FMUs ---------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("nm") is None, reason="no nm")
def test_binaries_need_no_python_and_export_the_fmi_functions(built):
    """No Python symbol in any binary (``nm -D``): the FMUs run where no Python exists; the
    dynamic symbols they define are the FMI functions only."""
    for name, path in built.items():
        with zipfile.ZipFile(path) as z:
            lib = z.read(f"binaries/linux64/{name}.so")
        so = path.parent / f"{name}.nm.so"
        so.write_bytes(lib)
        out = subprocess.run(["nm", "-D", str(so)], capture_output=True, text=True, check=True)
        undefined = [ln.split()[-1] for ln in out.stdout.splitlines() if " U " in ln]
        defined = [ln.split()[-1] for ln in out.stdout.splitlines() if " T " in ln]
        assert not [u for u in undefined if u.startswith(("Py", "_Py"))], undefined
        assert defined and all(d.startswith("fmi2") for d in defined), defined
        assert "fmi2GetDirectionalDerivative" in defined and "fmi2GetDerivatives" in defined
        assert validate_fmu(str(path)) == []


def test_calls_that_succeed_are_unchanged(revolute):
    vr = revolute.vr
    log = Log()
    fmu = revolute.instantiate("ok", logger=log)
    try:
        running(fmu)
        fmu.setReal([vr["P.m[1]"], vr["joint.tau"]], [0.5, 0.2])
        state = fmu.getFMUstate()
        fmu.doStep(0.0, 1e-3)
        y = fmu.getReal([vr["joint.m[1]"], vr["joint.m[3]"], vr["body.m[1]"]])
        assert all(math.isfinite(v) for v in y) and y[0] != 0.0
        fmu.setFMUstate(state)
        fmu.doStep(0.0, 1e-3)
        assert fmu.getReal([vr["joint.m[1]"], vr["joint.m[3]"], vr["body.m[1]"]]) == y
        assert fmu.getInteger([vr["solver.method"]]) == [2]
        fmu.freeFMUstate(state)
        fmu.terminate()
    finally:
        fmu.freeInstance()
    assert log.messages == []


# -- every kind of refusal: fmi2Error and a message naming the variable ----------------------


def _bad_mass(f, vr):
    initialized(f)
    f.setReal([vr["mass"]], [-1.0])


def _bad_mass_early(f, vr):
    f.setupExperiment(startTime=0.0)
    f.setReal([vr["mass"]], [-1.0])


def _bad_method(f, vr):
    initialized(f)
    f.setInteger([vr["solver.method"]], [3])


def _bad_axis(f, vr):
    initialized(f)
    f.setReal([vr["axis[1]"], vr["axis[2]"], vr["axis[3]"]], [0.0, 0.0, 0.0])


def _terminated(f, vr):
    running(f)
    f.terminate()


REFUSALS = {
    # bad parameter values, checked when the block is built
    "parameter mass < 0": (_bad_mass, lambda f, vr: f.exitInitializationMode(), ["'mass'"]),
    "parameter mass < 0, set before initialization": (
        _bad_mass_early, lambda f, vr: f.enterInitializationMode(), ["'mass'"]),
    "parameter solver.method": (
        _bad_method, lambda f, vr: f.exitInitializationMode(), ["'solver.method'"]),
    "parameter axis zero": (
        _bad_axis, lambda f, vr: f.exitInitializationMode(), ["axis"]),
    "parameter not finite": (
        initialized, lambda f, vr: f.setReal([vr["inertia[2,2]"]], [math.inf]),
        ["'inertia[2,2]'"]),
    # non-finite inputs
    "input NaN": (running, lambda f, vr: f.setReal([vr["P.m[3]"]], [math.nan]), ["'P.m[3]'"]),
    "input -inf": (
        running, lambda f, vr: f.setReal([vr["joint.tau"]], [-math.inf]), ["'joint.tau'"]),
    # non-positive (or non-finite) communication steps
    "step zero": (running, lambda f, vr: f.doStep(0.0, 0.0), ["step size 0.0"]),
    "step negative": (running, lambda f, vr: f.doStep(0.0, -1e-3), ["step size -0.001"]),
    "step NaN": (running, lambda f, vr: f.doStep(0.0, math.nan), ["step size nan"]),
    # calls out of the FMI calling sequence
    "doStep before initialization": (
        lambda f, vr: f.setupExperiment(startTime=0.0), lambda f, vr: f.doStep(0.0, 1e-3),
        ["fmi2DoStep called in instantiated"]),
    "enterInitializationMode twice": (
        initialized, lambda f, vr: f.enterInitializationMode(),
        ["fmi2EnterInitializationMode called in initialization mode"]),
    "exitInitializationMode before enter": (
        lambda f, vr: f.setupExperiment(startTime=0.0), lambda f, vr: f.exitInitializationMode(),
        ["fmi2ExitInitializationMode called in instantiated"]),
    "fixed parameter set after initialization": (
        running, lambda f, vr: f.setReal([vr["mass"]], [2.0]), ["'mass'", "fixed"]),
    "parameter set after terminate": (
        _terminated, lambda f, vr: f.setReal([vr["mass"]], [2.0]), ["'mass'", "fmi2Terminate"]),
    "input set after terminate": (
        _terminated, lambda f, vr: f.setReal([vr["joint.tau"]], [1.0]),
        ["'joint.tau'", "fmi2Terminate"]),
    "output set": (
        initialized, lambda f, vr: f.setReal([vr["body.m[1]"]], [1.0]), ["'body.m[1]'", "output"]),
    "output read before initialization": (
        lambda f, vr: None, lambda f, vr: f.getReal([vr["C1.m[2]"]]),
        ["outputs are available from fmi2EnterInitializationMode"]),
    "unknown value reference": (running, lambda f, vr: f.getReal([99999]), ["99999"]),
    "Real read as Integer": (
        running, lambda f, vr: f.getInteger([vr["mass"]]), ["'mass'", "Integer"]),
}  # fmt: skip


@pytest.mark.parametrize("kind", list(REFUSALS))
def test_refused_call_returns_error_and_names_the_variable(revolute, kind):
    setup, call, words = REFUSALS[kind]
    vr = revolute.vr
    log = Log()
    fmu = revolute.instantiate("refusal", logger=log)
    try:
        setup(fmu, vr)
        assert log.messages == []
        assert status_of(call, fmu, vr) == ERROR
        assert log.statuses() == {ERROR}, log.messages
        text = log.text(ERROR)
        assert "FMU instance 'refusal'" in text
        for w in words:
            assert w in text, text
    finally:
        fmu.freeInstance()


def _state_bytes(fmu):
    state = fmu.getFMUstate()
    data = bytes(fmu.serializeFMUstate(state))
    fmu.freeFMUstate(state)
    return data


@pytest.mark.parametrize("corruption", ["truncated", "longer", "bad mode", "NaN value",
                                        "another FMU's state"])  # fmt: skip
def test_corrupt_states_are_refused_and_the_instance_goes_on(built, revolute, corruption):
    """A restored state is validated completely (format, length, mode, every value) before
    anything changes: refused with fmi2Error and a message; the instance then steps as before."""
    vr = revolute.vr
    log = Log()
    # fmpy's logger proxy keeps the last logger registered: instantiate the one we read last
    other = load(built["TitopRigidBodyC1"]).instantiate("other", logger=Log())
    fmu = revolute.instantiate("corrupt", logger=log)
    try:
        running(fmu)
        fmu.setReal([vr["joint.tau"]], [0.3])
        data = bytearray(_state_bytes(fmu))
        if corruption == "truncated":
            data = data[:-9]
        elif corruption == "longer":
            data = data + b"\0" * 8
        elif corruption == "bad mode":
            data[12:16] = (99).to_bytes(4, "little")
        elif corruption == "NaN value":
            data[-8:] = b"\xff" * 8
        else:
            running(other)
            data = bytearray(_state_bytes(other))
        fmu.doStep(0.0, 1e-3)
        before = fmu.getReal([vr["joint.m[3]"], vr["joint.m[2]"]])
        try:
            state = fmu.deSerializeFMUstate(bytes(data))
        except FMICallException as exc:
            assert exc.status == ERROR
        else:
            assert status_of(fmu.setFMUstate, state) == ERROR
            fmu.freeFMUstate(state)
        assert log.statuses() == {ERROR} and "FMU state" in log.text(ERROR), log.messages
        assert fmu.getReal([vr["joint.m[3]"], vr["joint.m[2]"]]) == before  # nothing changed
        fmu.doStep(1e-3, 1e-3)
        assert all(math.isfinite(v) for v in fmu.getReal([vr["joint.m[3]"]]))
    finally:
        fmu.freeInstance()
        other.freeInstance()


def test_an_oversized_step_is_refused_at_once(revolute):
    """doStep is bounded: 1e6 s at solver.max_step = 1 ms would take 1e9 internal steps; more
    than solver.max_substeps (1e5) is refused with fmi2Error naming both, and the instance goes
    on with steps of ordinary size."""
    vr = revolute.vr
    log = Log()
    fmu = revolute.instantiate("huge", logger=log)
    try:
        running(fmu)
        assert status_of(fmu.doStep, 0.0, 1e6) == ERROR
        assert "solver.max_substeps" in log.text(ERROR) and "solver.max_step" in log.text(ERROR)
        fmu.doStep(0.0, 1e-3)
        assert math.isfinite(fmu.getReal([vr["joint.m[3]"]])[0])
    finally:
        fmu.freeInstance()


# -- after an error ---------------------------------------------------------------------------


def test_instance_recovers_by_rollback_and_by_reset(revolute):
    vr = revolute.vr
    outs = [vr["joint.m[3]"], vr["body.m[4]"]]
    fmu = revolute.instantiate("recover", logger=Log())
    try:
        running(fmu)
        fmu.setReal([vr["joint.tau"]], [0.4])
        saved = fmu.getFMUstate()
        fmu.doStep(0.0, 1e-3)
        y = fmu.getReal(outs)
        assert status_of(fmu.doStep, 1e-3, -1e-3) == ERROR
        assert status_of(fmu.setFMUstate, saved) == OK  # roll back after fmi2Error
        fmu.doStep(0.0, 1e-3)
        assert fmu.getReal(outs) == y
        fmu.freeFMUstate(saved)
        assert status_of(fmu.setReal, [vr["joint.tau"]], [math.nan]) == ERROR
        assert status_of(fmu.reset) == OK  # or reset after fmi2Error
        running(fmu)
        fmu.setReal([vr["joint.tau"]], [0.4])
        fmu.doStep(0.0, 1e-3)
        assert fmu.getReal(outs) == y
        fmu.terminate()
    finally:
        fmu.freeInstance()


def test_two_hundred_refusals_with_free_or_reset_in_one_process(built):
    """200 bad-parameter instantiate/free cycles, then 200 error/reset cycles of one instance:
    fmi2Error every time, and the process and new instances go on normally."""
    lf = load(built["TitopRigidBodyC1"])
    vr = lf.vr
    statuses = []
    for i in range(200):
        fmu = lf.instantiate(f"cycle{i}", logger=Log())
        initialized(fmu)
        fmu.setReal([vr["mass"]], [-1.0])
        statuses.append(status_of(fmu.exitInitializationMode))
        fmu.freeInstance()
    assert set(statuses) == {ERROR}
    fmu = lf.instantiate("resets", logger=Log())
    statuses, values = [], set()
    try:
        for _ in range(200):
            initialized(fmu)
            fmu.setReal([vr["mass"]], [0.0])
            statuses.append(status_of(fmu.exitInitializationMode))
            statuses.append(status_of(fmu.reset) + 10)
            running(fmu)
            fmu.setReal([vr["ext.W[1]"]], [1.0])
            fmu.doStep(0.0, 1e-3)
            values.add(fmu.getReal([vr["body.m[1]"]])[0])
            fmu.reset()
    finally:
        fmu.freeInstance()
    assert set(statuses) == {ERROR, OK + 10}
    assert len(values) == 1 and math.isfinite(values.pop())


# -- logging ------------------------------------------------------------------------------------


def _instantiate(lf, name, log, logging_on):
    model = lf.md.coSimulation.modelIdentifier
    fmu = FMU2Slave(
        guid=lf.md.guid, unzipDirectory=lf.directory, modelIdentifier=model, instanceName=name
    )
    fmu.instantiate(loggingOn=logging_on, callbacks=callbacks_with(log))
    fmu._titop_keep = fmu.callbacks
    return fmu


@pytest.mark.parametrize("logging_on", [False, True])
def test_refusal_message_reaches_the_host_unless_logging_is_switched_off(revolute, logging_on):
    """With loggingOn = fmi2False at instantiation the error message is still logged (the FMI
    Reference FMUs do the same); fmi2SetDebugLogging(fmi2False) silences it."""
    log = Log()
    fmu = _instantiate(revolute, "logging", log, logging_on)
    try:
        running(fmu)
        assert status_of(fmu.doStep, 0.0, -1.0) == ERROR
        assert len(log.messages) == 1 and "step size -1.0" in log.text(ERROR)
        fmu.setDebugLogging(False, [])
        assert status_of(fmu.doStep, 0.0, -2.0) == ERROR
        assert len(log.messages) == 1
        fmu.setDebugLogging(True, ["some category"])
        assert status_of(fmu.doStep, 0.0, -3.0) == ERROR
        assert len(log.messages) == 2 and "step size -3.0" in log.text(ERROR)
    finally:
        fmu.freeInstance()


def test_percent_signs_in_messages_reach_the_host_unchanged(revolute):
    """A '%' in a message (here from the instance name) reaches the host unchanged: the FMU
    passes its text as the argument of a "%s" format, never as the format itself. (Conversions
    that read integers only: a message used as the format would print garbage.)"""
    log = Log()
    fmu = revolute.instantiate("50%d %x %%", logger=log)
    try:
        running(fmu)
        assert status_of(fmu.doStep, 0.0, 0.0) == ERROR
        assert "FMU instance '50%d %x %%'" in log.text(ERROR), log.messages
    finally:
        fmu.freeInstance()


# -- without a C compiler ---------------------------------------------------------------------


def test_without_compiler_the_build_says_which_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    with pytest.raises(BuildError, match="needs a C compiler.*install gcc"):
        build_fmus(tmp_path / "fmus", types=["rigid_body"], max_children=0)
