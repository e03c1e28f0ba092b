"""Compile native FMUs: the C core, the FMI wrapper and the generated configuration of each type.

``build_native(ftype, n, out_dir)`` writes ``<modelIdentifier>.fmu`` (FMI 2.0, or FMI 3.0 with
``fmi_version=3``) with ``modelDescription.xml``, ``binaries/linux64/<id>.so`` (and
``binaries/win64/<id>.dll`` when a MinGW-w64 cross compiler is on the PATH) and ``sources/``
(every C file and header needed to compile it on another platform: the FMI functions
``fmi2_block.c`` or ``fmi3_block.c``, ``fmu_block.c`` and the core's ``titop_double.c`` and
``titop_complex.c``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import zipfile
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import TypeVar

from ...blocks.base import TitopError
from ..catalog import FmuType
from .documentation import documentation_html
from .generate import BUILD_DESCRIPTION, describe

HERE = Path(__file__).resolve().parent
CORE = HERE.parent.parent / "core" / "csrc"
FMI_HEADERS = HERE.parent / "headers"
CORE_FILES = ("titop.h", "titop_scalar.h", "titop_spatial.h", "titop_core.c", "titop_double.c",
              "titop_complex.c")  # fmt: skip
#: the core's compile units (titop_core.c is included by both, once per scalar type): linked
#: as objects compiled once per build (:class:`CoreObjects`), listed with every FMU's own units
#: as the sources' compile units
CORE_UNITS = ("titop_double.c", "titop_complex.c")
HEADERS = ("fmi2Functions.h", "fmi2FunctionTypes.h", "fmi2TypesPlatform.h")
HEADERS3 = ("fmi3Functions.h", "fmi3FunctionTypes.h", "fmi3PlatformTypes.h")
#: the FMI-version-independent layer (fmu.c: instance, stepping, state, derivatives) and the
#: block model on it (fmu_block.c, which includes fmu.c: the compile lists stay as they are)
MODEL_FILES = ("fmu.h", "fmu.c", "fmu_checks.c", "fmu_flex.c", "fmu_block.h", "fmu_block.c")
#: the whole-model FMU (titopfmu.fmi.model): fmu_model.c on the same layer, with the internal
#: integrator of co-simulation (ode.c)
MODEL_FILES_WHOLE = ("fmu.h", "fmu.c", "fmu_checks.c", "fmu_flex.c", "fmu_model.h", "fmu_model.c",
                     "ode.h", "ode.c")
FLAGS = ["-std=c99", "-O3", "-Wall", "-Wextra", "-Werror", "-fvisibility=hidden", "-shared"]
MINGW = "x86_64-w64-mingw32-gcc"
#: the binaries' folders (Linux, Windows) by FMI version: FMI 3.0 names them by platform tuple
PLATFORMS = {2: ("linux64", "win64"), 3: ("x86_64-linux", "x86_64-windows")}


class BuildError(TitopError):
    """A native FMU could not be built (no C compiler, or it failed)."""


class BuildStopped(BuildError):
    """A compile refused or killed because its build was stopped (:meth:`Compiles.stop`)."""


class Compiles:
    """The compiler processes of one build, which may run in several threads at once:
    :meth:`stop` kills the running ones and makes any later one fail at once (raising
    :class:`BuildStopped`), so that a failed or interrupted parallel build ends promptly."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen] = set()
        self.stopped = False

    def run(self, cmd: list[str], name: str, cwd: str | Path | None = None) -> None:
        """Run the compiler command ``cmd`` (in ``cwd``); a failure raises a
        :class:`BuildError` with the compiler's messages, naming ``name``."""
        with self._lock:
            if self.stopped:
                raise BuildStopped(f"{name}: build stopped")
            try:  # its own process group: stop() kills the driver with its cc1, as and ld
                p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, cwd=cwd, start_new_session=_POSIX)  # fmt: skip
            except OSError as exc:
                raise BuildError(f"{_what(name)} failed: cannot run {cmd[0]}: {exc}") from None
            self._running.add(p)
        try:
            _, err = p.communicate()
        except BaseException:  # KeyboardInterrupt in the thread waiting for it: no orphan
            _kill(p)
            p.wait()
            raise
        finally:
            with self._lock:
                self._running.discard(p)
        if p.returncode != 0:
            if self.stopped:
                raise BuildStopped(f"{name}: build stopped")
            raise BuildError(f"{_what(name)} failed:\n{err.strip()}")

    def stop(self) -> None:
        """Kill the running compiles and refuse new ones."""
        with self._lock:
            self.stopped = True
            running = list(self._running)
        for p in running:
            _kill(p)


_POSIX = hasattr(os, "killpg")


def _kill(p: subprocess.Popen) -> None:
    """Kill a compiler and the programs it runs (its process group, on POSIX)."""
    try:
        if _POSIX:
            os.killpg(p.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows
            p.kill()
    except OSError:  # already gone
        pass


def _compile(cmd: list[str], name: str, cwd: str | Path | None = None) -> None:
    """One compile outside any build (:class:`Compiles`): a failure raises a
    :class:`BuildError` naming ``name`` (used by :mod:`titopfmu.linear.fmu`)."""
    Compiles().run(cmd, name, cwd)


def _what(name: str) -> str:
    return (f"compiling the FMUs' C core ({name[5:]})" if name.startswith("core:")
            else f"compiling the native FMU {name}")  # fmt: skip


_T = TypeVar("_T")


def run_tasks(tasks: Sequence[Callable[[], _T]], jobs: int, compiles: Compiles,
              done: Callable[[int, _T], None] | None = None) -> list[_T]:  # fmt: skip
    """Run ``tasks`` (functions of no argument that compile through ``compiles``) on ``jobs``
    threads, the calling thread waiting (``jobs`` 1: one after the other in the calling thread);
    ``done(i, result)`` is called in the calling thread as each task ends. Returns the results
    in the order of ``tasks``. The first failure stops ``compiles`` (killing the running
    compiles), cancels the tasks not started, waits for the running ones to end and is raised;
    so is a KeyboardInterrupt, after the same clean-up."""
    results: list = [None] * len(tasks)
    if jobs <= 1 or len(tasks) <= 1:
        try:
            for i, task in enumerate(tasks):
                results[i] = task()
                if done is not None:
                    done(i, results[i])
        except BaseException:
            compiles.stop()
            raise
        return results
    pool = ThreadPoolExecutor(min(jobs, len(tasks)), thread_name_prefix="titopfmu-build")
    index: dict[Future, int] = {}
    try:
        for i, task in enumerate(tasks):
            index[pool.submit(task)] = i
        pending = set(index)
        while pending:
            finished, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for f in sorted(finished, key=index.__getitem__):
                results[index[f]] = f.result()  # raises the task's error
                if done is not None:
                    done(index[f], results[index[f]])
    except BaseException:
        compiles.stop()
        for f in index:
            f.cancel()
        raise
    finally:
        # the running tasks end promptly once their compiles are killed
        pool.shutdown(wait=True, cancel_futures=True)
    return results


def default_jobs() -> int:
    """The number of parallel compiles by default: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def compiler() -> str:
    """The C compiler: ``$CC`` if set, else ``cc`` or ``gcc`` on the PATH."""
    wanted = os.environ.get("CC")
    cc = shutil.which(wanted) if wanted else shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise BuildError(
            "titopfmu build needs a C compiler to make native FMUs"
            + (f" (CC={wanted} is not found)" if wanted else "")
            + ": install gcc (Debian/Ubuntu: apt-get install gcc; Fedora: dnf install gcc; "
            "macOS: xcode-select --install)"
        )
    return cc


class CoreObjects:
    """The C core compiled once (position-independent objects) for the FMUs of one build.

    ``jobs`` compiles run at once (the objects are independent); ``compiles`` is the build's
    :class:`Compiles` (a fresh one when None). The objects are only read afterwards: the FMUs of
    one build may link them from several threads.

    With ``cache`` (the default), the objects are kept in the per-user cache
    (``<user cache>/core/<key>``, :func:`user_cache_dir`), the key a hash of the
    core's sources, the flags and the compilers' versions: a later build with the same core and
    compilers links them instead of compiling the core again (most of a model FMU's build
    time)."""

    def __init__(self, cc: str, win64: bool, *, jobs: int = 1,
                 compiles: Compiles | None = None, cache: bool = True) -> None:  # fmt: skip
        self._tmp = tempfile.TemporaryDirectory(prefix="titopfmu-core-")
        d = Path(self._tmp.name)
        compiles = Compiles() if compiles is None else compiles
        kept = _core_cache(cc, win64) if cache else None
        if kept is not None and all((kept / n).is_file() for n in _CORE_OBJECTS[: 4 if win64
                                                                              else 2]):  # fmt: skip
            self.linux = [kept / n for n in _CORE_OBJECTS[:2]]
            self.win64 = [kept / n for n in _CORE_OBJECTS[2:4]] if win64 else []
            return
        self.linux = [d / "titop_double.o", d / "titop_complex.o"]
        cmds = [([cc, *FLAGS[:-1], "-fPIC", "-c", "-I", str(CORE), str(CORE / f"{o.stem}.c"),
                  "-o", str(o)], f"core:{o.stem}.c") for o in self.linux]  # fmt: skip
        self.win64 = []
        if win64:
            self.win64 = [d / "titop_double.w64.o", d / "titop_complex.w64.o"]
            for o in self.win64:
                src = CORE / (o.name.split(".")[0] + ".c")
                cmds.append(([MINGW, *FLAGS[:-1], "-c", "-I", str(CORE), str(src), "-o", str(o)],
                             f"core:{src.name}, win64"))  # fmt: skip
        # the longest first (titop_complex.c takes four times titop_double.c)
        cmds.sort(key=lambda c: "complex" not in c[1])
        try:
            run_tasks([lambda c=c: compiles.run(*c) for c in cmds], jobs, compiles)
        except BaseException:
            self.close()
            raise
        if kept is not None:  # into the cache under a temporary name, then renamed: whole or none
            try:
                kept.parent.mkdir(parents=True, exist_ok=True)
                part = Path(tempfile.mkdtemp(prefix=kept.name + ".", dir=kept.parent))
                for o in self.linux + self.win64:
                    shutil.copy(o, part / o.name)
                try:
                    part.replace(kept)
                except OSError:  # another build put it there first (or a partial one is there)
                    shutil.rmtree(part, ignore_errors=True)
            except OSError:
                pass  # no cache: the objects of this build still serve it

    def close(self) -> None:
        self._tmp.cleanup()


_CORE_OBJECTS = ("titop_double.o", "titop_complex.o", "titop_double.w64.o", "titop_complex.w64.o")


def _core_cache(cc: str, win64: bool) -> Path | None:
    """The cache folder of the core's objects for these sources, flags and compilers, or None
    when a compiler's version cannot be read."""
    import hashlib

    h = hashlib.sha256()
    for f in CORE_FILES:
        h.update(f.encode() + b"\0" + (CORE / f).read_bytes())
    h.update(" ".join(FLAGS).encode())
    for c in [cc] + ([MINGW] if win64 else []):
        try:
            v = subprocess.run([c, "--version"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        h.update(c.encode() + v.stdout.encode())
    return user_cache_dir() / "core" / (h.hexdigest()[:24] + ("-w64" if win64 else ""))


def user_cache_dir() -> Path:
    """titopfmu's per-user cache folder: ``$TITOPFMU_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/titopfmu`` (``~/.cache/titopfmu``). The FMU sets are in its ``fmus/``
    (:mod:`titopfmu.fmi.cache`), the core's compiled objects in its ``core/``."""
    explicit = os.environ.get("TITOPFMU_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "titopfmu"


def build_native(ftype: FmuType, n: int, out_dir: str | Path, win64: bool | None = None,
                 core: CoreObjects | None = None, fmi_version: int = 2, *,
                 compiles: Compiles | None = None) -> Path:  # fmt: skip
    """Build the native FMU of ``ftype`` with ``n`` child ports into ``out_dir``; returns its
    path. ``win64``: also cross-compile for Windows (default: when MinGW-w64 is installed);
    ``core``: the core already compiled (several FMUs in a row); ``fmi_version``: 2 (FMI 2.0)
    or 3 (FMI 3.0, array variables for the ports); ``compiles``: the build's compiler processes
    (:class:`Compiles`, to stop them from another thread).

    Everything is made in a private temporary folder and the FMU is written under a temporary
    name then renamed (:func:`zip_fmu`): several FMUs may be built at once from threads. The
    compilers run in that folder on relative paths, so that the binaries do not depend on where
    it is (MinGW's linker derives a DLL's image base from its output path, and stamps no time
    with ``--no-insert-timestamp``): the same sources give the same bytes."""
    if fmi_version not in (2, 3):
        raise ValueError(f"fmi_version must be 2 or 3, not {fmi_version!r}")
    fmu = describe(ftype, n, fmi_version=fmi_version)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="titopfmu-native-") as tmp:
        plib = _compile_sources(fmu, "fmu_block.c", MODEL_FILES, tmp, win64, core, compiles)
        fmu.deps = measure_dependencies(fmu, plib)
        return _finish(fmu, tmp, plib, out_dir, documentation_html(ftype, n, fmi_version))


def build_model_native(fmu, plan, out_dir: str | Path, win64: bool | None = None,
                       core: CoreObjects | None = None, *,
                       compiles: Compiles | None = None) -> Path:  # fmt: skip
    """Build the whole-model FMU described by ``fmu`` (:func:`titopfmu.fmi.model.describe_model`
    of the plan ``plan``) into ``out_dir``; returns its path. As :func:`build_native`: private
    temporary folder, relative paths, written under a temporary name then renamed."""
    from .documentation import model_documentation_html

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="titopfmu-native-") as tmp:
        plib = _compile_sources(fmu, "fmu_model.c", MODEL_FILES_WHOLE, tmp, win64, core, compiles,
                        extra_units=("ode.c",), jobs=default_jobs())  # fmt: skip
        fmu.deps = measure_dependencies(fmu, plib, random_parameters=False)
        return _finish(fmu, tmp, plib, out_dir, model_documentation_html(fmu, plan))


def _compile_sources(fmu, model_c: str, model_files: Sequence[str], tmp: str, win64: bool | None,
             core: CoreObjects | None, compiles: Compiles | None,
             extra_units: Sequence[str] = (), jobs: int = 1) -> Path:  # fmt: skip
    """Lay out ``sources/`` in ``tmp`` (the core, the FMI headers and functions, the model
    files, the generated fmu_config.h) and compile the binaries (Linux; Windows with ``win64``,
    default: when MinGW-w64 is installed). Returns the library on which to measure the
    dependencies: the Linux one (FMI 2.0), or an FMI 2.0 build of the same sources (FMI 3.0;
    removed by :func:`_finish`). Sets ``fmu.sources``, the compile units of ``sources/``: the FMI
    functions, ``model_c``, ``extra_units`` and the core's (:data:`CORE_UNITS`), which the
    model description lists for tools that rebuild the FMU."""
    fmi_version = fmu.fmi_version
    wrapper = f"fmi{fmi_version}_block.c"
    name = fmu.model_name
    cc = compiler()
    compiles = Compiles() if compiles is None else compiles
    src = Path(tmp) / "sources"
    src.mkdir()
    for f in CORE_FILES:
        shutil.copy(CORE / f, src / f)
    for f in HEADERS if fmi_version == 2 else HEADERS3:
        shutil.copy(FMI_HEADERS / f, src / f)
    for f in (wrapper, *model_files):
        shutil.copy(HERE / f, src / f)
    own = [wrapper, model_c, *extra_units]  # compiled here; the core's linked as objects
    fmu.sources = [*own, *CORE_UNITS]
    units = [f"sources/{u}" for u in own]
    (src / "fmu_config.h").write_text(fmu.config_header())
    if win64 is None:
        win64 = shutil.which(MINGW) is not None
    own = core is None
    if own:
        core = CoreObjects(cc, win64, compiles=compiles, jobs=jobs)
    try:
        linux, windows = PLATFORMS[fmi_version]
        lib = f"binaries/{linux}/{name}.so"
        (Path(tmp) / lib).parent.mkdir(parents=True)
        compiles.run([cc, *FLAGS, "-fPIC", "-I", "sources", *units, *map(str, core.linux),
                      "-o", lib, "-lm"], name, cwd=tmp)  # fmt: skip
        if win64 and core.win64:
            dll = f"binaries/{windows}/{name}.dll"
            (Path(tmp) / dll).parent.mkdir(parents=True)
            cmd = [MINGW, *FLAGS, "-I", "sources", *units, *map(str, core.win64)]
            compiles.run([*cmd, "-o", dll, "-static-libgcc", "-Wl,--no-insert-timestamp"],
                         name, cwd=tmp)  # fmt: skip
        plib = Path(tmp) / lib
        if fmi_version == 3:  # dependencies measured on the same sources behind the FMI 2
            probe = Path(tmp) / "probe"  # functions (not shipped)
            probe.mkdir()
            for f in HEADERS:
                shutil.copy(FMI_HEADERS / f, probe / f)
            shutil.copy(HERE / "fmi2_block.c", probe / "fmi2_block.c")
            plib = probe / f"{name}.so"
            compiles.run([cc, *FLAGS, "-fPIC", "-I", "probe", "-I", "sources",
                          "probe/fmi2_block.c", *units[1:], *map(str, core.linux),
                          "-o", f"probe/{name}.so", "-lm"], name, cwd=tmp)  # fmt: skip
    finally:
        if own:
            core.close()
    return plib


def _finish(fmu, tmp: str, plib: Path, out_dir: Path, documentation: str) -> Path:
    """modelDescription.xml (with the dependencies measured and, FMI 2.0, the compile units
    ``fmu.sources``), for FMI 3.0 the terminals of the TITOP ports and
    ``sources/buildDescription.xml`` (the compile units), and documentation into ``tmp``, the
    probe library removed, the FMU zipped into ``out_dir``; for FMI 2.0, the OSP-IS model
    description beside it
    (``<id>_OspModelDescription.xml``, :mod:`titopfmu.fmi.terminals`)."""
    from ..terminals import (
        TERMINALS_PATH,
        osp_file_name,
        osp_model_description_xml,
        terminals_and_icons_xml,
        titop_ports,
    )

    if plib.parent.name == "probe":
        shutil.rmtree(plib.parent)
    ports = titop_ports(fmu.variables)
    if fmu.fmi_version == 3 and ports:
        t = Path(tmp) / TERMINALS_PATH
        t.parent.mkdir(parents=True, exist_ok=True)
        t.write_bytes(terminals_and_icons_xml(ports, [a.name for a in fmu.arrays]))
    if fmu.fmi_version == 2:
        (out_dir / osp_file_name(fmu.model_name)).write_bytes(
            osp_model_description_xml(fmu.model_name, fmu.variables, ports)
        )
    if fmu.fmi_version == 3:
        (Path(tmp) / BUILD_DESCRIPTION).write_bytes(fmu.build_description())
    (Path(tmp) / "modelDescription.xml").write_bytes(fmu.model_description())
    doc = Path(tmp) / "documentation" / "index.html"
    doc.parent.mkdir()
    doc.write_text(documentation, encoding="utf-8")
    return zip_fmu(tmp, out_dir / f"{fmu.model_name}.fmu")


def measure_dependencies(fmu, lib: Path, random_parameters: bool = True
                         ) -> dict[int, list[int]]:  # fmt: skip
    """Which inputs and states each output and state derivative depends on, from the built
    binary's exact directional derivatives at three random points (random parameters, or the
    FMU's own with ``random_parameters=False``; random states and inputs):
    ``{unknown vr: [input and state vrs]}``. The binary is unloaded before returning: it lives
    in the build's temporary folder, and a library left loaded would stay mapped (its deleted
    file held on disk) for the rest of the process."""
    import ctypes

    dll = ctypes.CDLL(str(lib))
    try:
        return _measure_dependencies(fmu, dll, random_parameters)
    finally:
        dlclose = ctypes.CDLL(None).dlclose
        dlclose.argtypes = [ctypes.c_void_p]
        dlclose(dll._handle)


def _measure_dependencies(fmu, dll, random_parameters: bool) -> dict[int, list[int]]:
    """:func:`measure_dependencies` on the loaded binary ``dll`` (a :class:`ctypes.CDLL`)."""
    import ctypes

    import numpy as np

    from ..catalog import random_values
    from .generate import C_INPUT, C_OUTPUT, T_BOOL, T_INT

    libc = ctypes.CDLL(None)

    class Callbacks(ctypes.Structure):
        _fields_ = [("logger", ctypes.c_void_p), ("allocateMemory", ctypes.c_void_p),
                    ("freeMemory", ctypes.c_void_p), ("stepFinished", ctypes.c_void_p),
                    ("env", ctypes.c_void_p)]  # fmt: skip

    cb = Callbacks(None, ctypes.cast(libc.calloc, ctypes.c_void_p).value,
                   ctypes.cast(libc.free, ctypes.c_void_p).value, None, None)  # fmt: skip
    dll.fmi2Instantiate.restype = ctypes.c_void_p
    dll.fmi2Instantiate.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                                    ctypes.c_char_p, ctypes.POINTER(Callbacks), ctypes.c_int,
                                    ctypes.c_int]  # fmt: skip
    for f in ("fmi2SetReal", "fmi2SetInteger", "fmi2SetBoolean", "fmi2EnterInitializationMode",
              "fmi2ExitInitializationMode", "fmi2SetContinuousStates",
              "fmi2GetDirectionalDerivative", "fmi2FreeInstance", "fmi2SetupExperiment",
              "fmi2EnterContinuousTimeMode", "fmi2NewDiscreteStates"):  # fmt: skip
        getattr(dll, f).argtypes = None
    V = fmu.variables
    nx = int(fmu.defines["FMU_NX"])
    x0, dx0 = int(fmu.defines["FMU_X_VR0"]), int(fmu.defines["FMU_DX_VR0"])
    inputs = [vr for vr, v in enumerate(V) if v.causality == C_INPUT]
    knowns = inputs + list(range(x0, x0 + nx))
    unknowns = [vr for vr, v in enumerate(V) if v.causality == C_OUTPUT]
    unknowns += list(range(dx0, dx0 + nx))
    deps: dict[int, set[int]] = {u: set() for u in unknowns}
    rng = np.random.default_rng(20261123)
    params = fmu.ftype.params(fmu.n_children) if random_parameters else []
    names = {v.name: vr for vr, v in enumerate(V)}
    Vr = ctypes.c_uint * 1

    def arr(values, ctype):
        return (ctype * len(values))(*values)

    for sample in range(3):
        c = dll.fmi2Instantiate(b"deps", 0, ("{" + fmu.guid + "}").encode(), b"", ctypes.byref(cb),
                                0, 0)  # fmt: skip
        if not c:
            raise BuildError(f"{fmu.model_name}: the built binary does not instantiate")
        c = ctypes.c_void_p(c)
        try:
            values = random_values(params, rng)
            if getattr(fmu.ftype, "flexible", None) is not None:  # child port k at node k
                for p in params:  # (titop_check_flex: the core's rule, not a free choice)
                    if p.role == "PAR_POINT":
                        values[p.name] = np.asarray(p.default, dtype=float)
            for p in params:
                if p.boolean:
                    values[p.name] = sample > 0
            for p in params:
                val = np.atleast_1d(np.asarray(values[p.name], dtype=float)).reshape(-1)
                vrs = [names[n] for n, _ in p.names()]
                if V[vrs[0]].type == T_BOOL:
                    dll.fmi2SetBoolean(c, arr(vrs, ctypes.c_uint), len(vrs),
                                       arr([int(v) for v in val], ctypes.c_int))  # fmt: skip
                elif V[vrs[0]].type == T_INT:
                    dll.fmi2SetInteger(c, arr(vrs, ctypes.c_uint), len(vrs),
                                       arr([int(v) for v in val], ctypes.c_int))  # fmt: skip
                else:
                    dll.fmi2SetReal(c, arr(vrs, ctypes.c_uint), len(vrs),
                                    arr(list(val), ctypes.c_double))  # fmt: skip
            dll.fmi2SetupExperiment(c, 0, ctypes.c_double(0.0), ctypes.c_double(0.0), 0,
                                    ctypes.c_double(0.0))  # fmt: skip
            if dll.fmi2EnterInitializationMode(c) or dll.fmi2ExitInitializationMode(c):
                raise BuildError(f"{fmu.model_name}: random parameters refused while measuring")
            if nx:
                x = rng.normal(0.0, 0.5, nx)
                dll.fmi2SetContinuousStates(c, arr(list(x), ctypes.c_double), nx)
            u = rng.uniform(-1.0, 1.0, len(inputs))
            dll.fmi2SetReal(c, arr(inputs, ctypes.c_uint), len(inputs),
                            arr(list(u), ctypes.c_double))  # fmt: skip
            out = (ctypes.c_double * len(unknowns))()
            for k in knowns:
                st = dll.fmi2GetDirectionalDerivative(
                    c,
                    arr(unknowns, ctypes.c_uint),
                    len(unknowns),
                    Vr(k),
                    1,
                    arr([1.0], ctypes.c_double),
                    out,
                )
                if st:
                    raise BuildError(f"{fmu.model_name}: directional derivative refused")
                for j, u_vr in enumerate(unknowns):
                    if out[j] != 0.0:  # exact zeros where there is no dependence
                        deps[u_vr].add(k)
        finally:
            dll.fmi2FreeInstance(c)
    return {u: sorted(d) for u, d in deps.items()}


def zip_fmu(tree: str | Path, target: str | Path) -> Path:
    """Zip the FMU laid out in the directory ``tree`` (modelDescription.xml, binaries/,
    sources/, ...) into ``target``, written to ``<target>.part`` first and renamed: a failed
    build never leaves a half-written FMU under the final name."""
    tree, target = Path(tree), Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(tree.rglob("*")):
            if p.is_file():
                z.write(p, p.relative_to(tree).as_posix())
    part.replace(target)
    return target
