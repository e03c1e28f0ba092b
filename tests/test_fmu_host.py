"""Native FMUs from a C host, over many cycles and in two threads.

* A host written in C (``tests/core/fmu_host.c``, no Python in its process) loads the binary of
  ``TitopRevoluteBodyC0`` with ``dlopen``, holds its parent port still (a pendulum hanging from a
  fixed point) and runs it as a co-simulation unit (RK4 sub-steps) and as a model-exchange unit
  (the host's own RK4 on ``fmi2GetDerivatives``); both agree with the in-process engine's
  Ground + RevoluteBody.
* 10,000 instantiate / step / free cycles, half of them with a refused call: resident memory
  stays flat within 1 MB.
* Two instances with different parameters step in two threads at once (ctypes releases the GIL
  during the calls) and give exactly the numbers of the same runs one after the other.
"""

from __future__ import annotations

import ctypes
import math
import subprocess
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest
from fmpy import read_model_description

from titopfmu import Engine, Ground, RevoluteBody, System
from titopfmu.fmi.catalog import FMU_TYPES
from titopfmu.fmi.native.build import FMI_HEADERS, build_native, compiler

HOST = Path(__file__).parent / "core" / "fmu_host.c"
MASS, COM_Y, INERTIA, Q0 = 1.3, -0.7, (0.05, 0.02, 0.04), 0.6


@pytest.fixture(scope="module")
def revolute(tmp_path_factory):
    out = tmp_path_factory.mktemp("host")
    fmu = build_native(FMU_TYPES["revolute_body"], 0, out, win64=False)
    with zipfile.ZipFile(fmu) as z:
        z.extractall(out / "x")
    md = read_model_description(str(fmu))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    return out / "x" / "binaries" / "linux64" / f"{fmu.stem}.so", md, vr


def engine_pendulum(t_final: float) -> np.ndarray:
    s = System()
    s.add(
        Ground("g", children={"A": (0.0, 0.0, 0.0)}),
        RevoluteBody("arm", MASS, np.diag(INERTIA), axis=(0, 0, 1), com=(0.0, COM_Y, 0.0),
                     theta0=Q0, gravity=(0.0, -9.81, 0.0)),
    )  # fmt: skip
    s.connect("g.A", "arm.P")
    from titopfmu import Constant

    s.add(Constant("tau", 0.0))
    s.connect("tau.y", "arm.joint.tau")
    res = Engine(s).simulate(t_final, output_interval=t_final, record=["arm.state.q",
                             "arm.state.qd"], rtol=1e-12, atol=1e-12)  # fmt: skip
    return np.array([res["arm.state.q"][-1], res["arm.state.qd"][-1]])


def test_a_c_host_runs_the_fmu_as_cs_and_as_me_like_the_engine(tmp_path, revolute):
    so, md, vr = revolute
    exe = tmp_path / "host"
    subprocess.run([compiler(), "-std=gnu99", "-O2", "-Wall", "-Werror", "-I", str(FMI_HEADERS),
                    str(HOST), "-o", str(exe), "-ldl", "-lm"], check=True)  # fmt: skip
    args = [str(exe), str(so), md.guid, str(vr["mass"]), str(vr["com[2]"]),
            str(vr["inertia[1,1]"]), str(vr["inertia[2,2]"]), str(vr["inertia[3,3]"]),
            str(vr["theta0"]), str(vr["gravity[2]"]), str(vr["gravity[3]"]),
            str(vr["solver.method"]), str(vr["solver.max_step"]), str(vr["joint.m[3]"]),
            str(vr["joint.m[2]"])]  # fmt: skip
    p = subprocess.run(args, capture_output=True, text=True, check=True)
    cs_q, cs_qd, me_q, me_qd = (float(v) for v in p.stdout.split())
    ref = engine_pendulum(1.0)
    assert abs(cs_q - ref[0]) < 1e-9 and abs(cs_qd - ref[1]) < 1e-9, (cs_q, cs_qd, ref)
    assert abs(me_q - ref[0]) < 1e-9 and abs(me_qd - ref[1]) < 1e-9, (me_q, me_qd, ref)
    # and the pendulum did swing: not a trivially constant state
    assert abs(ref[0] - Q0) > 0.1


def test_the_fmus_sources_build_it_under_sanitizers_and_the_host_runs_clean(tmp_path, revolute):
    """``sources/`` compiles the FMU on its own (as an importer on another platform would), here
    with AddressSanitizer and UBSan; the C host's CS and ME runs then report no error and the
    numbers of the plain binary."""
    so, md, vr = revolute
    src = so.parent.parent.parent / "sources"
    flags = ["-g", "-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
             "-fno-omit-frame-pointer"]  # fmt: skip
    lib = tmp_path / "san.so"
    subprocess.run([compiler(), "-std=c99", "-shared", "-fPIC", *flags, "-I", str(src),
                    str(src / "fmi2_block.c"), str(src / "fmu_block.c"),
                    str(src / "titop_double.c"), str(src / "titop_complex.c"), "-o", str(lib),
                    "-lm"], check=True)  # fmt: skip
    exe = tmp_path / "host"
    subprocess.run([compiler(), "-std=gnu99", *flags, "-I", str(FMI_HEADERS), str(HOST), "-o",
                    str(exe), "-ldl", "-lm"], check=True)  # fmt: skip
    names = ["mass", "com[2]", "inertia[1,1]", "inertia[2,2]", "inertia[3,3]", "theta0",
             "gravity[2]", "gravity[3]", "solver.method", "solver.max_step", "joint.m[3]",
             "joint.m[2]"]  # fmt: skip
    runs = []
    for binary in (lib, so):
        p = subprocess.run(
            [str(exe), str(binary), md.guid, *(str(vr[n]) for n in names)],
            capture_output=True,
            text=True,
            env={"ASAN_OPTIONS": "detect_leaks=1"},
        )
        assert p.returncode == 0, p.stderr[-3000:]
        assert "runtime error" not in p.stderr and "AddressSanitizer" not in p.stderr
        runs.append([float(v) for v in p.stdout.split()])
    assert np.allclose(runs[0], runs[1], rtol=1e-12, atol=1e-14)


class _Callbacks(ctypes.Structure):
    _fields_ = [("logger", ctypes.c_void_p), ("allocateMemory", ctypes.c_void_p),
                ("freeMemory", ctypes.c_void_p), ("stepFinished", ctypes.c_void_p),
                ("env", ctypes.c_void_p)]  # fmt: skip


def _fmu_api(so: Path):
    dll = ctypes.CDLL(str(so))
    libc = ctypes.CDLL(None)
    cb = _Callbacks(None, ctypes.cast(libc.calloc, ctypes.c_void_p).value,
                    ctypes.cast(libc.free, ctypes.c_void_p).value, None, None)  # fmt: skip
    dll.fmi2Instantiate.restype = ctypes.c_void_p
    dll.fmi2Instantiate.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                                    ctypes.c_char_p, ctypes.POINTER(_Callbacks), ctypes.c_int,
                                    ctypes.c_int]  # fmt: skip
    for f in ("fmi2FreeInstance", "fmi2SetupExperiment", "fmi2EnterInitializationMode",
              "fmi2ExitInitializationMode", "fmi2SetReal", "fmi2GetReal"):  # fmt: skip
        getattr(dll, f).argtypes = [ctypes.c_void_p] + ([] if f in (
            "fmi2FreeInstance", "fmi2EnterInitializationMode", "fmi2ExitInitializationMode")
            else [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p])  # fmt: skip
    dll.fmi2SetupExperiment.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_double,
                                        ctypes.c_double, ctypes.c_int, ctypes.c_double]  # fmt: skip
    dll.fmi2DoStep.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_double, ctypes.c_int]
    return dll, cb


def _run(dll, cb, guid: bytes, vr: dict, j_axis: float, steps: int, refuse: bool = False):
    """One instantiate / step / free cycle; ``j_axis``: the inertia about the joint axis."""
    c = dll.fmi2Instantiate(b"inst", 1, guid, b"", ctypes.byref(cb), 0, 0)
    assert c
    one = ctypes.c_uint * 1
    val = ctypes.c_double * 1
    dll.fmi2SetReal(c, one(vr["inertia[3,3]"]), 1, val(j_axis))
    dll.fmi2SetupExperiment(c, 0, 0.0, 0.0, 0, 0.0)
    assert dll.fmi2EnterInitializationMode(c) == 0 and dll.fmi2ExitInitializationMode(c) == 0
    dll.fmi2SetReal(c, one(vr["joint.tau"]), 1, val(0.2))
    if refuse:
        assert dll.fmi2SetReal(c, one(vr["joint.tau"]), 1, val(math.nan)) == 3  # fmi2Error
    t = 0.0
    for _ in range(steps):
        assert dll.fmi2DoStep(c, t, 1e-3, 1) == 0
        t += 1e-3
    out = val()
    dll.fmi2GetReal(c, one(vr["joint.m[3]"]), 1, out)
    dll.fmi2FreeInstance(c)
    return out[0]


def _rss_kb() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * (4096 // 1024)


def test_ten_thousand_cycles_keep_memory_flat(revolute):
    so, md, vr = revolute
    dll, cb = _fmu_api(so)
    guid = md.guid.encode()
    for i in range(1000):  # warm-up: allocator pools reach their steady size
        _run(dll, cb, guid, vr, 1.0, 2, refuse=bool(i % 2))
    before = _rss_kb()
    for i in range(10_000):
        _run(dll, cb, guid, vr, 1.0, 2, refuse=bool(i % 2))
    grown = _rss_kb() - before
    assert grown < 1024, f"resident memory grew by {grown} kB over 10,000 cycles"


def test_two_instances_in_two_threads_stay_independent(revolute):
    so, md, vr = revolute
    dll, cb = _fmu_api(so)
    guid = md.guid.encode()
    alone = [_run(dll, cb, guid, vr, j, 3000) for j in (0.7, 2.5)]
    assert alone[0] != alone[1]
    got = [None, None]

    def work(k: int, j: float) -> None:
        got[k] = _run(dll, cb, guid, vr, j, 3000)

    threads = [threading.Thread(target=work, args=(k, j)) for k, j in enumerate((0.7, 2.5))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert got == alone
