"""The Windows binaries, cross-compiled with MinGW-w64 (CI installs ``gcc-mingw-w64-x86-64``).

* Each DLL (FMI 2.0 ``binaries/win64``, FMI 3.0 ``binaries/x86_64-windows``) exports every
  function its FMI header declares, and nothing else; it imports system DLLs only (no Python,
  no MinGW runtime DLL to ship): read with MinGW's ``objdump -p``.
* Under wine (when installed): the C host of ``test_fmu_host.py``, cross-compiled with MinGW,
  loads the FMI 2.0 DLL with LoadLibrary and runs the pendulum as CS and as ME; it agrees with
  the in-process engine as the Linux binary does.

Skipped, visibly, without MinGW-w64 (or without wine for the last test).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from fmpy import read_model_description
from test_fmu_host import HOST, Q0, engine_pendulum

from titopfmu.fmi.catalog import FMU_TYPES
from titopfmu.fmi.native.build import FMI_HEADERS, MINGW, build_native

OBJDUMP = "x86_64-w64-mingw32-objdump"
SYSTEM_DLLS = {"kernel32.dll", "msvcrt.dll", "ucrtbase.dll"}

pytestmark = pytest.mark.skipif(
    shutil.which(MINGW) is None or shutil.which(OBJDUMP) is None,
    reason="no MinGW-w64 cross compiler (apt-get install gcc-mingw-w64-x86-64)",
)


def wine() -> str | None:
    """wine's 64-bit loader: ``wine64``/``wine`` on the PATH, or Debian's wine64 package's."""
    for name in ("wine64", "wine"):
        if shutil.which(name):
            return shutil.which(name)
    return "/usr/lib/wine/wine64" if os.access("/usr/lib/wine/wine64", os.X_OK) else None


@pytest.fixture(scope="module")
def dlls(tmp_path_factory):
    """{(fmi version, model): (fmu path, extracted DLL)} for two block types."""
    out = tmp_path_factory.mktemp("win64")
    result = {}
    for version, folder in ((2, "win64"), (3, "x86_64-windows")):
        for key, n in (("revolute_body", 0), ("loop_closure", 0)):
            fmu = build_native(FMU_TYPES[key], n, out / f"v{version}", win64=True,
                               fmi_version=version)  # fmt: skip
            x = out / f"v{version}" / fmu.stem
            with zipfile.ZipFile(fmu) as z:
                z.extractall(x)
            dll = x / "binaries" / folder / f"{fmu.stem}.dll"
            assert dll.exists(), f"{fmu.name} has no binaries/{folder}"
            result[(version, fmu.stem)] = (fmu, dll)
    return result


def declared(version: int) -> set[str]:
    text = (FMI_HEADERS / f"fmi{version}Functions.h").read_text()
    return set(re.findall(rf"^\s*FMI{version}_Export\s+fmi{version}\w+TYPE\s+(fmi{version}\w+);",
                          text, flags=re.M))  # fmt: skip


def exports_and_imports(dll: Path) -> tuple[set[str], set[str]]:
    p = subprocess.run([OBJDUMP, "-p", str(dll)], capture_output=True, text=True, check=True)
    table = p.stdout.split("[Ordinal/Name Pointer] Table", 1)[1].split("\n\n", 1)[0]
    exports = set(re.findall(r"\]\s+(\w+)\s*$", table, flags=re.M))
    imports = {m.lower() for m in re.findall(r"DLL Name: (\S+)", p.stdout)}
    return exports, imports


def test_the_dlls_export_every_fmi_function_and_import_system_dlls_only(dlls):
    for (version, name), (_, dll) in dlls.items():
        exports, imports = exports_and_imports(dll)
        want = declared(version)
        assert len(want) > 40
        assert exports == want, (name, sorted(want - exports), sorted(exports - want))
        assert imports <= SYSTEM_DLLS, (name, imports)


@pytest.mark.skipif(wine() is None, reason="no wine (apt-get install wine64)")
def test_the_win64_dll_runs_under_wine_like_the_engine(tmp_path, dlls):
    fmu, dll = dlls[(2, "TitopRevoluteBodyC0")]
    exe = tmp_path / "host.exe"
    subprocess.run([MINGW, "-std=gnu99", "-O2", "-Wall", "-Wextra", "-Werror", "-I",
                    str(FMI_HEADERS), str(HOST), "-o", str(exe)], check=True)  # fmt: skip
    md = read_model_description(str(fmu))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    names = ["mass", "com[2]", "inertia[1,1]", "inertia[2,2]", "inertia[3,3]", "theta0",
             "gravity[2]", "gravity[3]", "solver.method", "solver.max_step", "joint.m[3]",
             "joint.m[2]"]  # fmt: skip
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "WINEPREFIX": str(tmp_path / "wineprefix"), "WINEDEBUG": "-all"}  # fmt: skip
    windows_path = "Z:" + str(dll).replace("/", "\\")
    p = subprocess.run([wine(), str(exe), windows_path, md.guid, *(str(vr[n]) for n in names)],
                       capture_output=True, text=True, env=env, timeout=300)  # fmt: skip
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr[-2000:])
    cs_q, cs_qd, me_q, me_qd = (float(v) for v in p.stdout.split())
    ref = engine_pendulum(1.0)
    assert abs(cs_q - ref[0]) < 1e-9 and abs(cs_qd - ref[1]) < 1e-9, (cs_q, cs_qd, ref)
    assert abs(me_q - ref[0]) < 1e-9 and abs(me_qd - ref[1]) < 1e-9, (me_q, me_qd, ref)
    assert abs(ref[0] - Q0) > 0.1


def test_a_model_fmus_dll_runs_under_wine_like_the_linux_binary(tmp_path):
    """The whole-model FMU's win64 DLL (fmu_model.c and ode.c cross-compiled), run by the model
    host cross-compiled with MinGW under wine, gives the Linux binary's numbers."""
    w = wine()
    if w is None:
        pytest.skip("wine is not installed (apt-get install wine64)")
    from test_model_fmu import HOST as MODEL_HOST
    from test_model_fmu import _host, balloon

    from titopfmu import export_fmu

    fmu = export_fmu(balloon(), tmp_path / "balloon.fmu", win64=True)
    cols = list(balloon().model_info.outputs)
    linux, _ = _host(tmp_path, fmu, 0.01, cols, t_final=1.0)
    md = read_model_description(str(fmu))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    dll = tmp_path / fmu.stem / "binaries" / "win64" / f"{fmu.stem}.dll"
    exe = tmp_path / "model_host.exe"
    subprocess.run([MINGW, "-std=c99", "-O2", "-I", str(FMI_HEADERS), str(MODEL_HOST), "-o",
                    str(exe), "-static-libgcc"], check=True)  # fmt: skip
    p = subprocess.run([w, str(exe), str(dll), md.guid, "1.0", "0.01", "10",
                        *(str(vr[c]) for c in cols)], capture_output=True, text=True,
                       env={**os.environ, "WINEDEBUG": "-all"}, timeout=300)  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    rows = [[float(x) for x in line.split()] for line in p.stdout.splitlines() if line.strip()]
    assert len(rows) == len(linux)
    for a, b in zip(rows, linux, strict=True):
        assert max(abs(x - y) for x, y in zip(a, b, strict=True)) < 1e-12
