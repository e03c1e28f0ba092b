"""Parallel FMU builds and their notices (issue 29, point 5).

``build_fmus(jobs=N)`` compiles on N threads driving the compilers: the FMUs are the serial
build's, byte for byte; a failure raises the first error naming its FMU and leaves no FMU of its
own in the output folder (nor its staging folder); a KeyboardInterrupt kills the running
compiles and ends the build at once; ``CoSimulation.from_system`` says once, on stderr, that it
builds FMUs and about how long it takes.

Every build is real. The tests of failures and notices compile with a wrapper of gcc (``$CC``,
see :func:`wrapper_cc`) that turns ``-O3`` into ``-O0`` so that the C core compiles in a second,
and fails or hangs on the FMU it is told to: what they test is the build's handling, not the
optimizer. The serial-parallel comparison uses the real compiler and flags.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from titopfmu import JointSpringDamper, RevoluteBody, RigidBody, System
from titopfmu.fmi.build import build_fmus, build_notice, default_jobs, estimate_seconds
from titopfmu.fmi.native.build import BuildError

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")

#: 4 small FMUs at max_children=1: TitopRevoluteBodyC0, C1, TitopLoopClosure,
#: TitopJointSpringDamper
TYPES = ["revolute_body", "joint_spring_damper", "loop_closure"]
NAMES = ["TitopRevoluteBodyC0", "TitopRevoluteBodyC1", "TitopLoopClosure",
         "TitopJointSpringDamper"]  # fmt: skip


def members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


@pytest.fixture(scope="module")
def serial_and_parallel(tmp_path_factory):
    """The same FMUs built serially and on 2 threads (with the progress bar, captured)."""
    serial = build_fmus(tmp_path_factory.mktemp("serial"), types=TYPES, max_children=1, jobs=1,
                        win64=False)  # fmt: skip
    bar = io.StringIO()
    with contextlib.redirect_stderr(bar):
        parallel = build_fmus(tmp_path_factory.mktemp("parallel"), types=TYPES, max_children=1,
                              jobs=2, win64=False, progress=True)  # fmt: skip
    return serial, parallel, bar.getvalue()


def test_parallel_build_returns_the_fmus_in_the_catalogs_order(serial_and_parallel):
    serial, parallel, _ = serial_and_parallel
    assert [p.stem for p in serial] == NAMES
    assert [p.stem for p in parallel] == NAMES
    assert all(p.is_file() for p in parallel)
    # nothing else in the folder but each FMU's OSP-IS description: no .part file, no staging
    # folder
    assert sorted(os.listdir(parallel[0].parent)) == sorted(
        [f"{n}.fmu" for n in NAMES] + [f"{n}_OspModelDescription.xml" for n in NAMES]
    )


def test_parallel_build_gives_the_serial_builds_fmus_byte_for_byte(serial_and_parallel):
    """Same members, same modelDescription.xml, same sources and documentation, and the same
    binaries (gcc is deterministic here, and nothing depends on the temporary folders)."""
    serial, parallel, _ = serial_and_parallel
    for s, p in zip(serial, parallel, strict=True):
        ms, mp = members(s), members(p)
        assert sorted(ms) == sorted(mp), s.name
        assert ms["modelDescription.xml"] == mp["modelDescription.xml"], s.name
        differ = [n for n in ms if ms[n] != mp[n]]
        assert differ == [], (s.name, differ)


def test_parallel_fmus_load_and_run_in_fmpy_like_the_serial_ones(serial_and_parallel):
    from fmpy import simulate_fmu

    serial, parallel, _ = serial_and_parallel
    for s, p in zip(serial, parallel, strict=True):
        moving = {"theta_dot0": 1.0} if "Revolute" in s.name else {}  # else all at rest
        rs = simulate_fmu(str(s), stop_time=0.05, output_interval=1e-3, start_values=moving)
        rp = simulate_fmu(str(p), stop_time=0.05, output_interval=1e-3, start_values=moving)
        assert rs.dtype.names == rp.dtype.names
        for name in rs.dtype.names:
            np.testing.assert_array_equal(rs[name], rp[name], err_msg=f"{s.name}: {name}")
        if moving:
            assert np.ptp(rp["joint.m[3]"]) > 0.0  # it runs


def test_the_progress_bar_counts_the_fmus(serial_and_parallel):
    text = serial_and_parallel[2]
    assert "building FMUs" in text
    assert f"{len(NAMES)}/{len(NAMES)}" in text


# -- failures ----------------------------------------------------------------------------------


WRAPPER = """#!{python}
# {real} at -O0, failing on the output named by $TITOP_TEST_FAIL, hanging on $TITOP_TEST_HANG
import os, sys, time
args = ["-O0" if a == "-O3" else a for a in sys.argv[1:]]
out = args[args.index("-o") + 1] if "-o" in args else ""
fail, hang = os.environ.get("TITOP_TEST_FAIL"), os.environ.get("TITOP_TEST_HANG")
if fail and fail in out:
    sys.stderr.write("wrapper: refusing to build " + out + "\\n")
    sys.exit(1)
if hang and hang in out:
    with open(os.environ["TITOP_TEST_MARK"], "w") as f:
        f.write(str(os.getpid()))
    time.sleep(600)
os.execv({real!r}, [{real!r}, *args])
"""


@pytest.fixture
def wrapper_cc(tmp_path, monkeypatch) -> Path:
    """``$CC``: gcc at -O0, failing or hanging on request (TITOP_TEST_FAIL / TITOP_TEST_HANG);
    MinGW-w64's gcc at -O0 too, first on the PATH, when it is installed."""
    from titopfmu.fmi.native.build import MINGW

    bin_ = tmp_path / "bin"
    bin_.mkdir()
    cc = bin_ / "wrapper-cc"
    cc.write_text(WRAPPER.format(python=sys.executable, real=shutil.which("gcc")))
    cc.chmod(0o755)
    monkeypatch.setenv("CC", str(cc))
    mingw = shutil.which(MINGW)
    if mingw is not None:
        (bin_ / MINGW).write_text(WRAPPER.format(python=sys.executable, real=mingw))
        (bin_ / MINGW).chmod(0o755)
        monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")
    return cc


def test_a_failing_compile_raises_naming_the_fmu_and_leaves_no_fmu(tmp_path, wrapper_cc,
                                                                   monkeypatch):  # fmt: skip
    out = tmp_path / "fmus"
    out.mkdir()
    (out / "TitopJointSpringDamper.fmu").write_bytes(b"an earlier build")
    monkeypatch.setenv("TITOP_TEST_FAIL", "TitopRevoluteBodyC1.so")
    with pytest.raises(BuildError, match="TitopRevoluteBodyC1") as info:
        build_fmus(out, types=TYPES, max_children=1, jobs=2, win64=False)
    assert "wrapper: refusing to build" in str(info.value)
    # none of this build's FMUs (the others may have been built), no .part, no staging folder;
    # the earlier build's file untouched
    assert os.listdir(out) == ["TitopJointSpringDamper.fmu"]
    assert (out / "TitopJointSpringDamper.fmu").read_bytes() == b"an earlier build"


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_compiler_that_fails_stops_the_build_at_the_core(tmp_path, monkeypatch, jobs):
    monkeypatch.setenv("CC", "/bin/false")
    out = tmp_path / "fmus"
    with pytest.raises(BuildError, match="C core"):
        build_fmus(out, types=TYPES, max_children=1, jobs=jobs, win64=False)
    assert os.listdir(out) == []


def test_jobs_must_be_a_positive_integer(tmp_path):
    for jobs in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="jobs"):
            build_fmus(tmp_path, types=["loop_closure"], jobs=jobs, win64=False)


def test_keyboard_interrupt_kills_the_running_compiles_and_ends_the_build(tmp_path, wrapper_cc):
    """SIGINT to the Python process only (not to its compilers, as a terminal's Ctrl-C would):
    the build kills the hung compile itself, ends with KeyboardInterrupt and leaves nothing."""
    out, mark = tmp_path / "fmus", tmp_path / "hung"
    env = dict(os.environ, TITOP_TEST_HANG="TitopRevoluteBodyC0.so", TITOP_TEST_MARK=str(mark))
    code = ("from titopfmu.fmi.build import build_fmus\n"
            f"build_fmus({str(out)!r}, types={TYPES!r}, max_children=1, jobs=2, "
            "win64=False)")  # fmt: skip
    # SIGINT at its default in the child: a test run started in the background (CI, nohup)
    # has it ignored, and a child inherits that
    p = subprocess.Popen(
        [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        for _ in range(1200):  # until the compile hangs (or the build ended: a failure below)
            if mark.is_file() and mark.read_text() or p.poll() is not None:
                break
            time.sleep(0.1)
        assert p.poll() is None, p.communicate()
        hung = int(mark.read_text())
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)  # the hung compile sleeps 600 s: no hang here
    finally:
        if p.poll() is None:  # pragma: no cover - a hang: do not leave it behind
            p.kill()
            p.communicate()
    assert p.returncode != 0
    assert "KeyboardInterrupt" in err
    assert not Path(f"/proc/{hung}").exists() or "(Z)" in Path(f"/proc/{hung}/stat").read_text()
    assert os.listdir(out) == []


def arm_system() -> System:
    """The README's arm: a base, a hinged arm and a spring-damper motor (2 FMUs: the motor's law
    is computed inside the arm's FMU)."""
    s = System("arm")
    s.add(
        RigidBody("base", mass=10.0, inertia=np.diag([1.0, 2.0, 2.5]),
                  children={"hinge": [0.0, -0.5, 0.0]}, gravity=[0, 0, 0]),
        RevoluteBody("arm", mass=2.0, inertia=np.diag([0.1, 0.01, 0.1]), com=[0.0, -0.6, 0.0],
                     axis=[0, 0, 1], theta0=0.3, gravity=[0, 0, 0]),
        JointSpringDamper("motor", k=5.0, d=0.5),
    )  # fmt: skip
    s.connect("base.hinge", "arm.P")
    s.connect("arm.joint.m", "motor.m")
    s.connect("motor.tau", "arm.joint.tau")
    return s


# -- the notice --------------------------------------------------------------------------------


def test_build_notice_says_what_where_on_how_many_cores_and_about_how_long():
    text = build_notice(4, "/x/fmus", jobs=2, win64=False)
    assert text.startswith("building 4 FMUs (FMI 2.0, linux64) into /x/fmus on 2 cores, about ")
    assert text.endswith((" s", " min"))
    assert "(FMI 2.0, linux64 + win64)" in build_notice(4, "d", jobs=1, win64=True)
    assert "(FMI 3.0, x86_64-linux + x86_64-windows)" in build_notice(4, "d", 1, True, 3)
    assert build_notice(1, "d", 1, False, cached=True).startswith("building 1 FMU (")
    assert build_notice(1, "d", 1, False, cached=True).endswith("(once; later runs reuse them)")
    assert f"on {default_jobs()} core" in build_notice(4, "d", win64=False)


def test_the_estimate_scales_with_the_fmus_the_cores_and_windows():
    one = estimate_seconds(49, jobs=1, win64=False)
    assert estimate_seconds(49, jobs=2, win64=False) < one
    assert estimate_seconds(49, jobs=1, win64=True) > one
    assert estimate_seconds(49, jobs=1, win64=False, fmi_version=3) > one
    assert estimate_seconds(4, jobs=1, win64=False) < one
    assert estimate_seconds(0) == 0.0


def test_from_system_says_once_on_stderr_that_it_builds_fmus(tmp_path, monkeypatch, capsys,
                                                             wrapper_cc):  # fmt: skip
    """A Python user calling from_system with no FMUs cached is told once (not 20-50 s of
    silence); the next call, with every FMU cached, says nothing."""
    from titopfmu.master import CoSimulation

    monkeypatch.setenv("TITOPFMU_CACHE_DIR", str(tmp_path / "cache"))
    CoSimulation.from_system(arm_system()).free()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("titopfmu: building 2 FMUs (FMI 2.0, ")  # its law is folded
    assert str(tmp_path / "cache") in lines[0]
    assert " cores, about " in lines[0] or " core, about " in lines[0]
    assert lines[0].endswith("(once; later runs reuse them)")
    CoSimulation.from_system(arm_system()).free()
    assert capsys.readouterr().err == ""


def test_from_system_notice_goes_to_the_callers_function(tmp_path, monkeypatch, capsys):
    """``notice=`` replaces the stderr line (``lambda message: None`` silences it); it is told
    before the build starts, so even a build that fails at once was announced."""
    from titopfmu.master import CoSimulation

    monkeypatch.setenv("TITOPFMU_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CC", "/bin/false")
    told: list[str] = []
    with pytest.raises(BuildError):
        CoSimulation.from_system(arm_system(), notice=told.append)
    assert len(told) == 1 and told[0].startswith("building 2 FMUs (FMI 2.0, ")
    with pytest.raises(BuildError):
        CoSimulation.from_system(arm_system(), notice=lambda message: None)
    assert capsys.readouterr().err == ""
