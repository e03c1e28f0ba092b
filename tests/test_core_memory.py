"""The C core under AddressSanitizer + UndefinedBehaviorSanitizer and under valgrind.

The extension is rebuilt from ``titopfmu/core/csrc`` with ``-fsanitize=address,undefined
-fno-sanitize-recover=all`` and loaded in a subprocess that runs ``tests/core/exercise.py``
(every block kind, closures, laws, full evaluations, complex-step Jacobians, refusals); any
out-of-bounds access or undefined behaviour aborts it. Its work buffers start as NaN, so a value
read before it is written shows as a NaN result (the sanitizers do not see uninitialised reads;
valgrind does). The same script runs on the installed build under valgrind's memcheck, and no
error may involve the core. Both runs must print the numbers of a plain run (the sanitized one
bit for bit).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CSRC = ROOT / "titopfmu" / "core" / "csrc"
EXERCISE = Path(__file__).parent / "core" / "exercise.py"


def run_exercise(*extra, env=None, prefix=(), timeout=900) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*prefix, sys.executable, str(EXERCISE), *extra],
        capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT,
    )  # fmt: skip


@pytest.fixture(scope="module")
def plain_output() -> str:
    p = run_exercise("--quick")
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_core_under_address_and_undefined_behaviour_sanitizers(tmp_path, plain_output):
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    so = tmp_path / ("_titop" + sysconfig.get_config_var("EXT_SUFFIX"))
    flags = ["-std=c99", "-g", "-O1", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror",
             "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
             "-fno-omit-frame-pointer"]  # fmt: skip
    sources = [str(CSRC / f) for f in ("_titop.c", "titop_double.c", "titop_complex.c")]
    inc = ["-I", str(CSRC), "-I", sysconfig.get_paths()["include"]]
    subprocess.run([cc, *flags, *inc, *sources, "-lm", "-o", str(so)], check=True)
    libasan = subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True,
                             text=True).stdout.strip()  # fmt: skip
    if not os.path.isabs(libasan):
        pytest.skip("libasan not found")
    env = dict(os.environ, LD_PRELOAD=libasan, ASAN_OPTIONS="detect_leaks=0:abort_on_error=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")  # fmt: skip
    p = run_exercise("--quick", "--extension", str(so), env=env)
    assert p.returncode == 0, p.stderr[-4000:]
    assert "ERROR: AddressSanitizer" not in p.stderr and "runtime error" not in p.stderr
    assert p.stdout == plain_output


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_core_under_valgrind(tmp_path, plain_output):
    log = tmp_path / "vg.log"
    env = dict(os.environ, PYTHONMALLOC="malloc")
    p = run_exercise(
        "--quick",
        env=env,
        prefix=(
            "valgrind",
            "--tool=memcheck",
            "--leak-check=full",
            "--show-leak-kinds=definite",
            "--track-origins=no",
            f"--log-file={log}",
        ),  # fmt: skip
        timeout=1800,
    )
    assert p.returncode == 0, p.stderr[-4000:]
    # valgrind runs other SIMD paths of numpy (its CPU model has no AVX-512): the checksums,
    # sums of numpy arrays, agree to rounding rather than bit for bit
    assert same_numbers(p.stdout, plain_output, 1e-12)
    # error records (blank-line separated) that involve the core or its extension
    ours = [r for r in log.read_text().split("\n\n") if "titop" in r and ("Invalid" in r or
            "uninitialised" in r or "definitely lost" in r)]  # fmt: skip
    assert not ours, "\n\n".join(ours)[:4000]
    assert "ERROR SUMMARY" in log.read_text()  # valgrind did run


def same_numbers(a: str, b: str, rtol: float) -> bool:
    """Whether two outputs of the exercise have the same names and numbers to ``rtol``."""
    la, lb = a.split(), b.split()
    if len(la) != len(lb):
        return False
    for u, v in zip(la, lb, strict=True):
        if u != v:
            try:
                fu, fv = float(u), float(v)
            except ValueError:
                return False
            if abs(fu - fv) > rtol * max(1.0, abs(fv)):
                return False
    return True
