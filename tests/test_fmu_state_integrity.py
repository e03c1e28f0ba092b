"""FMU states that cannot be corrupted silently, and the time that cannot overflow.

* The bit-flip test: every single-bit flip of a serialized state, for each FMU type with states
  (and for a whole-model FMU), is refused with fmi2Error naming a corrupt state, or restores a
  state that serializes to the same bytes; the instance then goes on stepping.
* A state taken right after instantiation restores later (the FMI 2.0 calling sequence allows
  fmi2GetFMUstate there), in co-simulation and in model exchange.
* A step whose end time overflows is refused by every type, stateless ones included.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("fmpy")
from fmpy.fmi1 import FMICallException  # noqa: E402
from fmu_helpers import load  # noqa: E402

from titopfmu.fmi.build import build_fmus  # noqa: E402

OK, ERROR = 0, 3
STATEFUL = ["rigid_body", "revolute_body", "prismatic_body", "spherical_body", "free_body"]


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    out = tmp_path_factory.mktemp("fmus_state")
    paths = build_fmus(out, types=STATEFUL + ["ground", "welded_body", "loop_closure"],
                       max_children=1, win64=False)  # fmt: skip
    return {p.stem: p for p in paths}


class Log:
    def __init__(self):
        self.messages: list[tuple[int, str]] = []

    def __call__(self, _env, _inst, status, _category, message):
        self.messages.append((status, message.decode() if isinstance(message, bytes) else message))


def _running(fmu) -> None:
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()


def _flips(fmu, data: bytes, log: Log) -> tuple[int, int]:
    """(refused, accepted) single-bit flips of ``data``; an accepted one must serialize back to
    the same bytes."""
    refused = accepted = 0
    buf = bytearray(data)
    for i in range(len(buf)):
        for bit in range(8):
            buf[i] ^= 1 << bit
            try:
                state = fmu.deSerializeFMUstate(bytes(buf))
            except FMICallException as exc:
                assert exc.status == ERROR
                refused += 1
            else:
                try:
                    fmu.setFMUstate(state)
                except FMICallException:
                    refused += 1
                else:
                    again = fmu.getFMUstate()
                    assert bytes(fmu.serializeFMUstate(again)) == bytes(data)
                    fmu.freeFMUstate(again)
                    accepted += 1
                fmu.freeFMUstate(state)
            buf[i] ^= 1 << bit
    assert all("corrupt FMU state" in m or "not an FMU state" in m
               for s, m in log.messages if s == ERROR)  # fmt: skip
    return refused, accepted


@pytest.mark.parametrize("key", STATEFUL)
def test_every_single_bit_flip_is_refused(fmus, key):
    stem = next(s for s in fmus if s.startswith("Titop" + "".join(w.title() for w in
                                                                    key.split("_"))))  # fmt: skip
    loaded = load(fmus[stem])
    log = Log()
    fmu = loaded.instantiate("flip", logger=log)
    try:
        _running(fmu)
        fmu.doStep(0.0, 1e-3)
        state = fmu.getFMUstate()
        data = bytes(fmu.serializeFMUstate(state))
        fmu.freeFMUstate(state)
        refused, accepted = _flips(fmu, data, log)
        assert refused == 8 * len(data) and accepted == 0
        fmu.doStep(1e-3, 1e-3)  # and it goes on
        outs = [v.valueReference for v in loaded.variables("output")]
        assert all(math.isfinite(v) for v in fmu.getReal(outs))
    finally:
        fmu.freeInstance()


def test_every_single_bit_flip_of_a_model_fmus_state_is_refused(tmp_path):
    from test_model_fmu import balloon

    from titopfmu import export_fmu

    path = export_fmu(balloon(), tmp_path / "balloon.fmu", win64=False)
    loaded = load(path)
    log = Log()
    fmu = loaded.instantiate("flip", logger=log)
    try:
        _running(fmu)
        fmu.doStep(0.0, 0.1)
        state = fmu.getFMUstate()
        data = bytes(fmu.serializeFMUstate(state))
        fmu.freeFMUstate(state)
        refused, accepted = _flips(fmu, data, log)
        assert refused == 8 * len(data) and accepted == 0
    finally:
        fmu.freeInstance()


@pytest.mark.parametrize("kind", ["cs", "me"])
def test_a_state_taken_right_after_instantiation_restores(fmus, kind):
    from fmpy.fmi2 import FMU2Model

    loaded = load(fmus["TitopRevoluteBodyC0"])
    vr = loaded.vr
    if kind == "cs":
        fmu = loaded.instantiate("early", logger=Log())
    else:
        from fmu_helpers import callbacks_with

        fmu = FMU2Model(guid=loaded.md.guid, unzipDirectory=loaded.directory,
                        modelIdentifier=loaded.md.modelExchange.modelIdentifier,
                        instanceName="early")  # fmt: skip
        fmu._cb = cb = callbacks_with(Log())
        fmu.instantiate(callbacks=cb)
    try:
        early = fmu.getFMUstate()
        fmu.setReal([vr["theta0"]], [0.7])
        _running(fmu)
        if kind == "cs":
            fmu.doStep(0.0, 0.01)
        else:
            fmu.enterContinuousTimeMode()
        fmu.setFMUstate(early)  # back to instantiated, with the start values
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
        start = next(v.start for v in loaded.md.modelVariables if v.name == "theta0")
        assert fmu.getReal([vr["theta0"]]) == [float(start)]
        if kind == "cs":
            fmu.doStep(0.0, 0.01)
        fmu.freeFMUstate(early)
    finally:
        fmu.freeInstance()


@pytest.mark.parametrize("stem", ["TitopGroundC1", "TitopWeldedBodyC0", "TitopLoopClosure",
                                  "TitopRevoluteBodyC0"])  # fmt: skip
def test_a_step_whose_time_overflows_is_refused(fmus, stem):
    loaded = load(fmus[stem])
    log = Log()
    fmu = loaded.instantiate("huge", logger=log)
    try:
        fmu.setupExperiment(startTime=1e308)
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
        with pytest.raises(FMICallException) as exc:
            fmu.doStep(1e308, 1e308)
        assert exc.value.status == ERROR
        assert any("overflows" in m for s, m in log.messages if s == ERROR), log.messages
        fmu.doStep(1e308, 1.0)  # the instance goes on
    finally:
        fmu.freeInstance()


def test_the_checksum_is_not_the_only_check(fmus):
    """A state of the right checksum but of another FMU type is still refused by type."""
    a = load(fmus["TitopRevoluteBodyC0"]).instantiate("a", logger=Log())
    log = Log()
    b = load(fmus["TitopPrismaticBodyC0"]).instantiate("b", logger=log)
    try:
        _running(a)
        _running(b)
        s = a.getFMUstate()
        data = bytes(a.serializeFMUstate(s))
        a.freeFMUstate(s)
        with pytest.raises(FMICallException):
            b.deSerializeFMUstate(data)
        assert any("not an FMU state of this FMU type" in m or "corrupt" in m
                   for _, m in log.messages)  # fmt: skip
        assert np.isfinite(b.getReal([0])[0])
    finally:
        a.freeInstance()
        b.freeInstance()


FAILING_HOST = r"""
#include <stdio.h>
#include <stdlib.h>
#include <dlfcn.h>
#include "fmi2Functions.h"
#define F(n) n##TYPE *n = (n##TYPE *)dlsym(lib, #n)
static void logger(fmi2ComponentEnvironment e, fmi2String i, fmi2Status s, fmi2String c,
                   fmi2String m, ...) { (void)e; (void)i; (void)s; (void)c; (void)m; }
int main(int argc, char **argv)
{
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (!lib || argc != 4) return 1;
    F(fmi2Instantiate); F(fmi2SetupExperiment); F(fmi2EnterInitializationMode);
    F(fmi2ExitInitializationMode); F(fmi2DoStep); F(fmi2SetReal); F(fmi2GetReal);
    F(fmi2FreeInstance);
    fmi2CallbackFunctions cb = {logger, calloc, free, NULL, NULL};
    fmi2Component c = fmi2Instantiate("v", fmi2CoSimulation, argv[2], "", &cb, 0, 1);
    fmi2ValueReference tau = (fmi2ValueReference)atoi(argv[3]);
    if (!c || fmi2SetupExperiment(c, 0, 0.0, 0.0, 0, 0.0) || fmi2EnterInitializationMode(c) ||
        fmi2ExitInitializationMode(c)) return 2;
    double huge = 1e308, ok = 0.0, q = 0.0;
    fmi2SetReal(c, &tau, 1, &huge);
    int refused = fmi2DoStep(c, 0.0, 0.1, 1) != fmi2OK;    /* a failed evaluation */
    refused += fmi2DoStep(c, 0.0, 0.1, 1) != fmi2OK;       /* and the step after it */
    fmi2SetReal(c, &tau, 1, &ok);
    int good = fmi2DoStep(c, 0.0, 0.01, 1) == fmi2OK && fmi2GetReal(c, &tau, 1, &q) == fmi2OK;
    fmi2FreeInstance(c);
    dlclose(lib);
    printf("%d %d\n", refused, good);
    return 0;
}
"""


def test_a_step_after_a_failed_evaluation_reads_nothing_undefined(fmus, tmp_path):
    """Issue row: doStep after a failed evaluation, under valgrind. The steps are refused, the
    next good one runs, and valgrind reports no read of an uninitialised value."""
    import shutil
    import subprocess
    import zipfile

    from fmpy import read_model_description

    from titopfmu.fmi.native.build import FMI_HEADERS, compiler

    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed")
    fmu = fmus["TitopRevoluteBodyC0"]
    md = read_model_description(str(fmu))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    with zipfile.ZipFile(fmu) as z:
        z.extractall(tmp_path / "x")
    so = next((tmp_path / "x" / "binaries" / "linux64").glob("*.so"))
    src = tmp_path / "host.c"
    src.write_text(FAILING_HOST)
    exe = tmp_path / "host"
    subprocess.run([compiler(), "-std=gnu99", "-g", "-I", str(FMI_HEADERS), str(src), "-o",
                    str(exe), "-ldl"], check=True)  # fmt: skip
    p = subprocess.run(["valgrind", "--error-exitcode=7", "--track-origins=yes", str(exe),
                        str(so), md.guid, str(vr["joint.tau"])], capture_output=True,
                       text=True)  # fmt: skip
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.split() == ["2", "1"], p.stdout
