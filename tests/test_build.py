"""The C core's build: a compiler that fails stops the build with its message and what to
install (setup.py's BuildCore), and the sources compile with -Wall -Wextra -Werror -pedantic as
C99 on their own (no Python headers: the core needs libm only)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CSRC = ROOT / "titopfmu" / "core" / "csrc"


def test_a_failing_compiler_stops_the_build_and_says_what_to_install(tmp_path):
    env = dict(os.environ, CC="/bin/false")
    p = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--build-temp", str(tmp_path / "t"),
         "--build-lib", str(tmp_path / "l")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert p.returncode != 0
    assert "could not compile its C core" in p.stderr
    assert "apt-get install gcc python3-dev" in p.stderr
    assert "The compiler said: command '/bin/false' failed" in p.stderr


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
@pytest.mark.parametrize("unit", ["titop_double.c", "titop_complex.c"])
def test_core_compiles_strict_c99_without_python(tmp_path, unit):
    p = subprocess.run(
        ["gcc", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-Wshadow",
         "-Wstrict-prototypes", "-O2", "-c", str(CSRC / unit), "-o", str(tmp_path / "u.o")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    nm = subprocess.run(["nm", "-u", str(tmp_path / "u.o")], capture_output=True, text=True)
    undefined = {line.split()[-1] for line in nm.stdout.splitlines() if line.strip()}
    # libm (gcc may merge sin and cos into sincos; frexp/ldexp scale the checks' matrices by a
    # power of two) and libc's memcpy/memset/snprintf only
    allowed = {"sin", "cos", "sincos", "sqrt", "atan2", "acos", "fabs", "fmax", "frexp", "ldexp",
               "tanh", "memcpy", "memset", "snprintf", "__stack_chk_fail"}  # fmt: skip
    if unit == "titop_complex.c":  # libgcc's complex products, and the double unit's sizes
        allowed |= {"__muldc3", "__divdc3", "titop_data_size", "titop_map_size"}
    assert undefined <= allowed, undefined - allowed
