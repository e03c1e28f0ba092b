"""Re-installing while a run goes on: ``pip install -e .`` copies the compiled extensions into the
source tree, and must replace them by renaming a complete file over the old one (setup.py's
BuildCore.copy_file), never by writing into the file a running program has mapped."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("gcc") is None and shutil.which("cc") is None,
                    reason="no C compiler")  # fmt: skip
def test_an_inplace_rebuild_replaces_the_extension_under_a_running_program(tmp_path):
    # a scratch copy of what setup.py builds (the package's own tree is left alone)
    work = tmp_path / "src"
    (work / "titopfmu" / "core").mkdir(parents=True)
    (work / "titopfmu" / "master").mkdir(parents=True)
    shutil.copy(ROOT / "setup.py", work)
    shutil.copytree(ROOT / "titopfmu" / "core" / "csrc", work / "titopfmu" / "core" / "csrc")
    shutil.copy(ROOT / "titopfmu" / "master" / "_step.c", work / "titopfmu" / "master")
    for pkg in ("titopfmu", "titopfmu/core", "titopfmu/master"):
        (work / pkg / "__init__.py").write_text("")

    def build() -> None:
        p = subprocess.run(
            [sys.executable, "setup.py", "-q", "build_ext", "--inplace",
             "--build-temp", str(tmp_path / "t"), "--build-lib", str(tmp_path / "l")],
            cwd=work, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert p.returncode == 0, p.stderr[-3000:]

    build()
    ext = next((work / "titopfmu" / "core").glob("_titop*.so"), None) or next(
        (work / "titopfmu" / "core").glob("_titop*.pyd")
    )
    # a program that has the extension loaded, and calls into it after the rebuild
    runner = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, importlib.util\n"
         f"spec = importlib.util.spec_from_file_location('titopfmu.core._titop', {str(ext)!r})\n"
         "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
         "print('loaded', flush=True)\n"
         "sys.stdin.readline()\n"
         "print(sorted(n for n in dir(m) if not n.startswith('_'))[:3], flush=True)\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert runner.stdout.readline().strip() == "loaded"
        inode = ext.stat().st_ino
        build()  # up to date: nothing compiles, the extension is copied into the tree again
        assert ext.stat().st_ino != inode, "the extension was written over in place"
        assert not list(ext.parent.glob("*.tmp")), "a temporary copy was left behind"
        out, err = runner.communicate("\n", timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 0, err
    assert out.strip().startswith("[")
