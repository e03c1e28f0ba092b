"""The command line: the README's demo command, on a short horizon."""

import csv
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from titopfmu import __version__
from titopfmu.cli import build_parser, main
from titopfmu.outputs import plot_formats, write_output


def test_example_balloon_writes_csv_and_plot(tmp_path):
    out, png = tmp_path / "b.csv", tmp_path / "b.png"
    code = main(
        ["example", "balloon", "--t-final", "0.5", "--output-interval", "0.1",
         "--out", str(out), "--plot", str(png), "--quiet"]
    )  # fmt: skip
    assert code == 0
    rows = list(csv.reader(open(out)))
    assert rows[0] == ["time", "x", "y", "z", "phi", "theta", "psi", "p", "theta1", "theta2"]
    assert len(rows) == 7
    assert abs(float(rows[1][8]) - 170 * 3.141592653589793 / 180) < 1e-12  # theta1(0)
    assert png.stat().st_size > 10_000


def test_help_explains_every_option():
    helptext = build_parser()._subparsers._group_actions[0].choices["example"].format_help()
    for opt in (
        "--t-final",
        "--output-interval",
        "--out",
        "--plot",
        "--rtol",
        "--atol",
        "--method",
    ):
        assert opt in helptext


def test_bad_option_value_is_refused(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "titopfmu.cli", "example", "balloon", "--rtol", "-1"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert p.returncode == 2 and "must be positive" in p.stderr


def test_build_command_writes_validated_fmus(tmp_path, capsys):
    code = main(["build", "--out", str(tmp_path), "--type", "revolute_body", "--max-children", "1"])
    assert code == 0
    assert sorted(p.name for p in tmp_path.glob("*.fmu")) == [
        "TitopRevoluteBodyC0.fmu",
        "TitopRevoluteBodyC1.fmu",
    ]
    assert "0 problems" in capsys.readouterr().out


def test_build_command_rejects_unknown_type(tmp_path, capsys):
    assert main(["build", "--out", str(tmp_path), "--type", "no_such_block"]) == 2
    assert "no_such_block" in capsys.readouterr().err


def test_example_balloon_cosim_has_the_same_columns_and_agrees(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TITOPFMU_CACHE_DIR", raising=False)
    inproc, cosim = tmp_path / "a.csv", tmp_path / "b.csv"
    common = ["example", "balloon", "--t-final", "0.02", "--output-interval", "0.01", "--quiet"]
    assert main([*common, "--out", str(inproc)]) == 0
    assert main([*common, "--engine", "cosim", "--out", str(cosim)]) == 0
    a = list(csv.reader(open(inproc)))
    b = list(csv.reader(open(cosim)))
    assert a[0] == b[0] and len(a) == len(b) == 4
    for ra, rb in zip(a[1:], b[1:], strict=True):
        assert max(abs(float(x) - float(y)) for x, y in zip(ra, rb, strict=True)) < 1e-6


# -- output paths that cannot be written ----------------------------------------------------------

SHORT = ["example", "balloon", "--t-final", "0.05", "--output-interval", "0.01", "--quiet"]


def _unwritable_folder(tmp_path: Path) -> Path:
    """A folder in which files cannot be created: a read-only one, or (as root, who may write
    anywhere on a normal file system) /sys; skips when neither refuses."""
    d = tmp_path / "readonly"
    d.mkdir()
    d.chmod(0o500)
    for folder in (d, Path("/sys")):
        try:
            with tempfile.TemporaryFile(dir=folder):
                pass
        except OSError:
            return folder
    pytest.skip("no folder refuses writing here (root on a writable /sys)")


def _bad_outputs(tmp_path: Path) -> list[tuple[list[str], str]]:
    """(options, text the message must contain) of every bad output of `example`."""
    a_dir = tmp_path / "a_dir"
    a_dir.mkdir()
    png_dir = tmp_path / "figures.png"
    png_dir.mkdir()
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    no_write = _unwritable_folder(tmp_path)
    ok = str(tmp_path / "ok.csv")
    return [
        (["--out", str(a_dir)], f"--out '{a_dir}' is a directory"),
        (["--out", str(a_file / "b.csv")], f"'{a_file}' is a file, not a folder"),
        (["--out", str(no_write / "b.csv")], f"cannot create files in '{no_write}'"),
        (["--out", ok, "--plot", str(png_dir)], f"--plot '{png_dir}' is a directory"),
        (["--out", ok, "--plot", str(tmp_path / "p.xyz")], "unknown image extension '.xyz'"),
        (["--out", ok, "--plot", str(tmp_path / "plot")], "no file extension"),
        (["--out", ok, "--plot", str(no_write / "p.png")], f"cannot create files in '{no_write}'"),
    ]  # fmt: skip


def test_example_refuses_bad_outputs_before_the_run(tmp_path, capsys):
    for options, text in _bad_outputs(tmp_path):
        assert main([*SHORT, *options]) == 2, options
        err = capsys.readouterr().err
        assert err.startswith("titopfmu: error: ") and text in err, (options, err)
        assert len(err.strip().splitlines()) == 1, err
        assert not (tmp_path / "ok.csv").exists()  # refused before the run: nothing written
    # the plot's format list is matplotlib's own
    assert "png" in plot_formats() and "xyz" not in plot_formats()


def test_bad_output_from_the_shell_gives_no_traceback(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "titopfmu.cli", *SHORT, "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert p.returncode == 2
    assert p.stderr == f"titopfmu: error: --out '{tmp_path}' is a directory; give a file name\n"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (disk-full device)")
def test_a_write_that_fails_after_the_run_keeps_the_results(tmp_path, monkeypatch, capsys):
    """/dev/full passes every check (it exists and opens) but refuses data, like a full disk:
    the CSV and the plot go to fallback files in the current directory, which the message
    names, and the exit status is 1."""
    monkeypatch.chdir(tmp_path)
    full_png = tmp_path / "full.png"
    full_png.symlink_to("/dev/full")
    assert main([*SHORT, "--out", "/dev/full", "--plot", str(full_png)]) == 1
    err = capsys.readouterr().err
    assert "--out '/dev/full' could not be written (No space left on device)" in err
    assert f"--plot '{full_png}' could not be written (No space left on device)" in err
    assert "Traceback" not in err
    (csv_copy,) = tmp_path.glob("full-*.csv")
    (png_copy,) = tmp_path.glob("full-*.png")
    assert f"wrote {csv_copy} instead" in err and f"wrote {png_copy} instead" in err
    rows = list(csv.reader(open(csv_copy)))
    assert rows[0][:2] == ["time", "x"] and len(rows) == 7
    assert abs(float(rows[1][8]) - 170 * 3.141592653589793 / 180) < 1e-12
    assert png_copy.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_write_output_falls_back_to_the_temporary_folder(tmp_path, monkeypatch):
    """When the current directory cannot take the copy either, it goes to the temporary one."""
    no_write = _unwritable_folder(tmp_path)
    monkeypatch.chdir(no_write)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def write(path):
        with open(path, "w") as f:
            f.write("data\n")

    written, message = write_output(write, no_write / "r.csv", "--out")
    assert Path(written).parent == tmp_path and Path(written).read_text() == "data\n"
    assert message.startswith(f"--out '{no_write / 'r.csv'}' could not be written (")
    assert message.endswith(f"); wrote {written} instead")


# -- without the 'fmi' extra --------------------------------------------------------------------

#: Runs the CLI with fmpy unimportable (as without the extra): ``None`` in ``sys.modules``
#: makes ``import`` fail with ImportError.
NO_FMI = (
    "import sys\n"
    "for m in ('fmpy',):\n"
    "    sys.modules[m] = None\n"
    "from titopfmu.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


@pytest.mark.parametrize(
    "command, purpose, module",
    [
        (["build", "--out", "{tmp}/fmus"], "validating the FMUs", "fmpy"),
        (["example", "balloon", "--engine", "cosim", "--out", "{tmp}/b.csv"], "co-simulation",
         "fmpy"),
        (["example", "balloon", "--engine", "cosim", "--fmus", "{tmp}", "--out", "{tmp}/b.csv"],
         "co-simulation", "fmpy"),
        (["cosim", "{tmp}/system.ssp", "--out", "{tmp}/b.csv"], "co-simulation", "fmpy"),
    ],
)  # fmt: skip
def test_without_the_fmi_extra_every_command_says_so_in_one_line(tmp_path, command, purpose,
                                                                 module):  # fmt: skip
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    p = subprocess.run([sys.executable, "-c", NO_FMI, *args], capture_output=True, text=True,
                       timeout=300)  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith(f"titopfmu: error: {purpose} needs {module} (")
    assert "); install the extra: pip install -e '.[fmi]'" in p.stderr
    assert len(p.stderr.splitlines()) == 1, p.stderr
    assert list(tmp_path.iterdir()) == []  # nothing built or written


def test_build_without_fmpy_and_without_validation_needs_only_a_compiler(tmp_path):
    """Native FMUs: --no-validate builds without the 'fmi' extra (fmpy unimportable)."""
    args = ["build", "--out", str(tmp_path / "fmus"), "--type", "joint_spring_damper",
            "--no-validate"]  # fmt: skip
    p = subprocess.run([sys.executable, "-c", NO_FMI, *args], capture_output=True, text=True,
                       timeout=300)  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "fmus" / "TitopJointSpringDamper.fmu").is_file()


# -- co-simulation of an SSP from the command line ------------------------------------------------


@pytest.fixture(scope="module")
def arm_ssp(tmp_path_factory):
    """The README's co-simulation example (base, arm, motor) as an SSP with its stop time."""
    from titopfmu.fmi.build import build_fmus
    from titopfmu.master import CoSimulation, write_ssp

    fmus = tmp_path_factory.mktemp("fmus_cli")
    build_fmus(fmus, types=["rigid_body", "revolute_body", "joint_spring_damper"], max_children=1)
    cs = CoSimulation()
    cs.add(
        "base",
        fmus / "TitopRigidBodyC1.fmu",
        {
            "mass": 10.0,
            "inertia": [[1, 0, 0], [0, 2, 0], [0, 0, 2.5]],
            "C1.point": [0.0, -0.5, 0.0],
            "gravity": [0, 0, 0],
        },
    )
    cs.add(
        "arm",
        fmus / "TitopRevoluteBodyC0.fmu",
        {
            "mass": 2.0,
            "inertia": [[0.1, 0, 0], [0, 0.01, 0], [0, 0, 0.1]],
            "com": [0.0, -0.6, 0.0],
            "theta0": 0.3,
            "gravity": [0, 0, 0],
        },
    )
    cs.add("motor", fmus / "TitopJointSpringDamper.fmu", {"k": 5.0, "d": 0.5})
    cs.connect("base.C1", "arm.P")
    cs.connect("arm.joint.m", "motor.joint.m")
    cs.connect("motor.joint.tau", "arm.joint.tau")
    cs.set_input("base.ext.W", [0, 0, 0, 0, 0, 0])
    path = tmp_path_factory.mktemp("ssp") / "arm.ssp"
    return write_ssp(cs, path, stop_time=0.01, step=1e-3)


def test_cosim_does_not_overwrite_without_force(arm_ssp, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    default = tmp_path / "results" / "arm.csv"
    assert main(["cosim", str(arm_ssp), "--quiet"]) == 0
    first = default.read_text()
    assert first.startswith('"time",') and len(first.splitlines()) == 12
    default.write_text("kept\n")
    assert main(["cosim", str(arm_ssp), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"titopfmu: error: '{Path('results') / 'arm.csv'}' exists; pass --force to overwrite "
        "it, or --out to write elsewhere\n"
    )
    assert default.read_text() == "kept\n"
    assert main(["cosim", str(arm_ssp), "--quiet", "--force"]) == 0
    assert default.read_text() == first
    helptext = build_parser()._subparsers._group_actions[0].choices["cosim"].format_help()
    assert "--force" in helptext and "not overwritten" in " ".join(helptext.split())


def test_cosim_refuses_bad_outputs_and_keeps_results(arm_ssp, tmp_path, monkeypatch, capsys):
    a_dir = tmp_path / "a_dir"
    a_dir.mkdir()
    no_write = _unwritable_folder(tmp_path)
    for out, text in ((a_dir, "is a directory"), (no_write / "r.csv", "cannot create files")):
        assert main(["cosim", str(arm_ssp), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"titopfmu: error: --out '{out}'") and text in err
        assert len(err.splitlines()) == 1
    if Path("/dev/full").exists():
        monkeypatch.chdir(tmp_path)
        assert main(["cosim", str(arm_ssp), "--out", "/dev/full", "--force"]) == 1
        err = capsys.readouterr().err
        (copy,) = tmp_path.glob("full-*.csv")
        assert (
            f"--out '/dev/full' could not be written (No space left on device); wrote {copy}" in err
        )
        assert len(copy.read_text().splitlines()) == 12


def test_example_cosim_builds_its_fmus_once_into_the_user_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TITOPFMU_CACHE_DIR", raising=False)
    run = ["example", "balloon", "--engine", "cosim", "--t-final", "0.01", "--output-interval",
           "0.01", "--no-progress"]  # fmt: skip
    assert main([*run, "--out", str(tmp_path / "1.csv")]) == 0
    err = capsys.readouterr().err
    (folder,) = (tmp_path / "cache" / "titopfmu" / "fmus").iterdir()
    assert folder.name.startswith(f"{__version__}-")
    from titopfmu.fmi.build import build_notice

    assert err == f"titopfmu: {build_notice(7, folder, cached=True)}\n"
    fmus = sorted(folder.glob("*.fmu"))
    assert len(fmus) == 7
    stamps = [f.stat().st_mtime_ns for f in fmus]
    assert main([*run, "--out", str(tmp_path / "2.csv")]) == 0
    assert capsys.readouterr().err == ""  # no build, no notice, no warning
    assert [f.stat().st_mtime_ns for f in sorted(folder.glob("*.fmu"))] == stamps
    assert (tmp_path / "1.csv").read_text() == (tmp_path / "2.csv").read_text()


def test_progress_bars_are_on_by_default_only_on_a_terminal():
    import os
    import pty

    code = (
        "from titopfmu import progress\n"
        "print(progress.wanted(None), progress.wanted(False), progress.wanted(True))\n"
    )
    piped = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert piped.stdout.split() == ["False", "False", "True"]
    leader, follower = pty.openpty()
    try:
        tty = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                             stderr=follower, text=True, timeout=60)  # fmt: skip
    finally:
        os.close(follower)
        os.close(leader)
    assert tty.stdout.split() == ["True", "False", "True"]
    for command in ("example", "build", "cosim"):
        helptext = build_parser()._subparsers._group_actions[0].choices[command].format_help()
        assert "--no-progress" in helptext, command


def test_build_says_what_it_builds_and_where(tmp_path, capsys):
    assert main(["build", "--out", str(tmp_path), "--type", "joint_spring_damper"]) == 0
    captured = capsys.readouterr()
    from titopfmu.fmi.build import build_notice, win64_notice

    said = [build_notice(1, tmp_path), win64_notice()]  # the second: None with MinGW-w64
    assert captured.err == "".join(f"titopfmu: {line}\n" for line in said if line)
    assert "about" in captured.err and "core" in captured.err  # an estimate, on how many cores
    assert [p.name for p in tmp_path.glob("*.fmu")] == ["TitopJointSpringDamper.fmu"]


def test_example_cosim_without_a_usable_cache_builds_for_the_run(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("TITOPFMU_CACHE_DIR", str(blocker / "cache"))
    out = tmp_path / "r.csv"
    run = ["example", "balloon", "--engine", "cosim", "--t-final", "0.01", "--output-interval",
           "0.01", "--no-progress", "--out", str(out)]  # fmt: skip
    assert main(run) == 0
    err = capsys.readouterr().err
    assert err.startswith("titopfmu: cannot use the FMU cache (")
    assert "building the FMUs into " in err
    assert len(err.splitlines()) == 1 and len(out.read_text().splitlines()) == 3
