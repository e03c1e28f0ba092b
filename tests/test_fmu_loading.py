"""FMU binaries loaded in the test process.

fmpy's logger proxy keeps ONE Python logger for the whole process (a C global of
fmpy/logging/linux64/logging.so, overwritten by every ``addLoggerProxy`` call) and every FMI 2.0
instance's messages go to it, those of instances with fmpy's default callbacks
(``simulate_fmu``) included. Test helpers that registered a logger of their own per instance
left that global pointing at a logger freed with its test: the next FMU message of a later
test then jumped into freed code (the segfault of ``pytest tests/test_fmu.py
tests/test_model_fmu.py``, in the balloon FMU's enterInitializationMode warning).

Callbacks made by :func:`titopfmu.master.components.fmi2_callbacks` (the master's and the test
helpers') all register one module-lifetime logger that routes by componentEnvironment. Checked
in a child process (a dangling logger kills the process): a message reaches its own
instance's sink, never another instance's, and a message after a sink is gone is dropped.

The native build loads each binary it builds to measure its dependencies: it must unload it
before its temporary folder is removed (it stayed mapped, its deleted file held on disk, for the
rest of the process).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from titopfmu.fmi.catalog import FMU_TYPES
from titopfmu.fmi.native.build import build_native

CHILD = r"""
import gc, sys
sys.path.insert(0, sys.argv[2])
from fmpy.fmi2 import FMU2Slave
from fmu_helpers import load

lf = load(sys.argv[1])
ident = lf.md.coSimulation.modelIdentifier

def wrong_guid(name, callbacks=None):
    # fmi2Instantiate refuses a wrong GUID and logs why, through the callbacks' logger
    f = FMU2Slave(guid="not-this-fmu", unzipDirectory=lf.directory, modelIdentifier=ident,
                  instanceName=name)
    try:
        f.instantiate(callbacks=callbacks)
    except Exception:
        pass
    return f

got_a = []
a = lf.instantiate("a", logger=lambda env, inst, st, cat, msg: got_a.append(msg))
own = []
from fmu_helpers import callbacks_with
cb = callbacks_with(lambda env, inst, st, cat, msg: own.append(msg))
wrong_guid("own", cb)
print("own:", len(own), any(b"not-this-fmu" in m for m in own))
wrong_guid("default")  # fmpy's default callbacks: must reach neither a's nor own's logger
print("others got:", len(got_a), len(own))
a.terminate()
a.freeInstance()
del a, cb
gc.collect()
wrong_guid("after")  # the proxy's logger must still be alive
print("survived")
"""


@pytest.fixture(scope="module")
def block_fmu(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("proxy")
    return build_native(FMU_TYPES["revolute_body"], 1, out, win64=False)


def test_messages_reach_their_own_logger_and_no_freed_one(block_fmu):
    tests_dir = str(Path(__file__).resolve().parent)
    r = subprocess.run([sys.executable, "-c", CHILD, str(block_fmu), tests_dir],
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    lines = r.stdout.splitlines()
    assert "own: 1 True" in lines, r.stdout
    assert "others got: 0 1" in lines, r.stdout
    assert lines[-1] == "survived", r.stdout


def _deleted_build_mappings() -> set[str]:
    with open("/proc/self/maps") as f:
        return {line.split(None, 5)[-1].strip() for line in f
                if "titopfmu-native-" in line and line.rstrip().endswith("(deleted)")}  # fmt: skip


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc/self/maps")
def test_the_build_unloads_the_binaries_it_measured(tmp_path):
    before = _deleted_build_mappings()
    build_native(FMU_TYPES["revolute_body"], 0, tmp_path, win64=False)
    assert (tmp_path / "TitopRevoluteBodyC0.fmu").is_file()
    assert _deleted_build_mappings() - before == set()
