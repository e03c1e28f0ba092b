"""What every command of the command line promises (docs/cli.md): one exit-code table, bad input
refused with 2 and one line, a Ctrl-C or SIGTERM that stops a run with one line, exit 130 and the
results so far on disk, warnings on one line, no traceback when the reader of the output goes
away or an optional extra is missing."""

from __future__ import annotations

import csv
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from titopfmu.cli import main
from titopfmu.cliutil import EXIT_CODES

DOCS = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def titopfmu(*args: str, cwd: Path) -> subprocess.Popen:
    """``titopfmu ARGS`` in a subprocess (binary pipes), SIGINT at its default (a test runner
    started in the background may have it ignored, and a child would inherit that)."""
    return subprocess.Popen(
        [sys.executable, "-m", "titopfmu", *args], cwd=cwd,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip


def test_the_documented_exit_codes_are_the_ones_the_commands_use():
    text = DOCS.read_text()
    table = re.search(r"\| exit status \| meaning \|\n\|[-| ]+\|\n((?:\|.*\|\n)+)", text)
    assert table, "docs/cli.md has no exit-status table"
    documented = {int(row.split("|")[1].strip().strip("`")) for row in table.group(1).splitlines()}
    assert documented == set(EXIT_CODES)


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "no_such_model.yaml"],
        ["run", "no_such_module:make"],
        ["linearize", "no_such_model.yaml"],
        ["linearize", "balloon", "--inputs", "nope.tau"],
        ["export", "no_such_model.yaml", "--ssp", "x.ssp"],
        ["crosscheck", "no_such_model.yaml", "--no-cosim"],
        ["cosim", "no_such_system.ssp"],
        ["campaign", "balloon", "--samples", "2", "--vary", "nope.mass=normal(1,0.1)",
         "--out", "camp", "--workers", "0"],
        ["build", "--type", "no_such_type", "--no-validate"],
        ["example", "balloon", "--out", "."],
    ],
    ids=lambda a: "-".join(a[:2]),
)
def test_bad_input_is_refused_with_2_and_one_line(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if not ln.startswith("titopfmu: warning:")]
    assert len(lines) == 1 and lines[0].startswith("titopfmu: error: "), err
    assert not (tmp_path / "camp").exists() and not (tmp_path / "x.ssp").exists()


def test_linearize_takes_every_model_source(tmp_path, monkeypatch, capsys):
    """A model file, a shipped name, and a function in a local module (no PYTHONPATH)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_models.py").write_text(
        "from titopfmu import load\n"
        "from titopfmu.modelfile import example_path\n"
        "def balloon():\n"
        "    return load(example_path('balloon'))\n"
    )
    import numpy as np

    from titopfmu.modelfile import example_path

    path_before = list(sys.path)
    results = []
    for source in (str(example_path("balloon")), "balloon", "my_models:balloon",
                   "my_models.py:balloon", "example:balloon"):  # fmt: skip
        out = tmp_path / f"m{len(results)}.npz"
        argv = ["linearize", source, "--inputs", "balloon.buoyancy[3]", "--outputs",
                "pend1.joint.m[3]", "--out", str(out)]  # fmt: skip
        assert main(argv) == 0, capsys.readouterr().err
        with np.load(out) as f:
            results.append((f["A"].copy(), f["B"].copy()))
    for a, b in results[1:]:
        assert np.array_equal(a, results[0][0]) and np.array_equal(b, results[0][1])
    assert sys.path == path_before  # the current directory was looked in, then let go


def test_warnings_print_on_one_line_without_source_paths(tmp_path):
    # the paper's balloon has principal moments that violate the triangle inequality
    p = subprocess.run(
        [sys.executable, "-m", "titopfmu", "run", "balloon", "--t-final", "0.01",
         "--out", "b.csv"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    warning = [ln for ln in p.stderr.splitlines() if "triangle inequality" in ln]
    assert len(warning) == 1 and warning[0].startswith("titopfmu: warning: block 'balloon'")
    assert ".py:" not in p.stderr and "warnings.warn" not in p.stderr


def test_no_traceback_when_the_reader_of_the_output_goes_away(tmp_path):
    """``titopfmu campaign balloon --list-parameters | head -1``: the reader closes its end."""
    p = subprocess.Popen(
        [sys.executable, "-m", "titopfmu", "campaign", "balloon", "--list-parameters"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    p.stdout.close()  # before anything is written: every write meets a closed pipe
    err = p.stderr.read().decode()
    p.wait(timeout=300)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert p.returncode == 141


def test_a_missing_extra_is_one_line_not_a_traceback(tmp_path):
    """``export`` on a base install (no fmpy): fmpy made unimportable in the subprocess."""
    p = subprocess.run(
        [sys.executable, "-c",
         "import sys; sys.modules['fmpy'] = None\n"
         "from titopfmu.cli import main\n"
         "sys.exit(main(['export', 'balloon', '--ssp', 'b.ssp']))"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip().splitlines() == [
        "titopfmu: error: export needs fmpy (import of fmpy halted; None in sys.modules); "
        "install the extra: pip install -e '.[fmi]'"
    ]


# --- signals ------------------------------------------------------------------------------------


def _interrupt(proc: subprocess.Popen, sig: int, started: bytes) -> str:
    """Send ``sig`` once the run is under way (``started`` seen on stderr: a progress bar);
    everything the process wrote on stderr."""
    fd = proc.stderr.fileno()
    err = b""
    deadline = time.monotonic() + 600
    while started not in err:
        chunk = os.read(fd, 4096)
        if not chunk:
            proc.wait(timeout=60)
            pytest.fail(f"the run ended before it was interrupted: {err.decode()}")
        err += chunk
        assert time.monotonic() < deadline, err.decode()
    time.sleep(0.5)  # a few samples more
    proc.send_signal(sig)
    while chunk := os.read(fd, 4096):
        err += chunk
    proc.wait(timeout=120)
    return err.decode()


def _one_line(err: str) -> str:
    """The messages on stderr, progress bars (carriage-return redraws) left out."""
    lines = [ln.strip() for ln in re.split(r"[\r\n]", err)]
    lines = [ln for ln in lines if ln and not re.search(r"\d+%\||\|\s*\d", ln)]
    assert "Traceback" not in err, err
    assert len(lines) == 1, lines
    return lines[0]


def _stopped_by(sig: int, argv: list[str], cwd: Path, started: bytes, written: str) -> float:
    """Run ``titopfmu ARGV``, send ``sig`` once ``started`` shows, check exit 130 and the one
    line naming the signal and the files ``written`` (a regex); the time it names (s)."""
    proc = titopfmu(*argv, cwd=cwd)
    err = _interrupt(proc, sig, started)
    assert proc.returncode == 130, err
    line = _one_line(err)
    name = signal.Signals(sig).name
    assert re.fullmatch(rf"titopfmu: interrupted \({name}\); results up to t = [\d.e+]+ s "
                        rf"written to {written}", line), line  # fmt: skip
    return float(re.search(r"t = ([\d.e+]+) s", line).group(1))


def _rows(path: Path) -> list[list[str]]:
    with open(path, newline="") as f:
        return list(csv.reader(f))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("command", ["run", "example"])
def test_a_signal_stops_a_run_with_one_line_130_and_the_results_so_far(command, sig, tmp_path):
    argv = ([command, "balloon", "--t-final", "100000", "--output-interval", "0.5", "--quiet",
             "--progress", "--out", "r/b.csv", "--plot", "r/b.png"])  # fmt: skip
    t_last = _stopped_by(sig, argv, tmp_path, b"%|", r"r/b\.csv and r/b\.png")
    rows = _rows(tmp_path / "r" / "b.csv")
    assert rows[0][0] == "time" and 2 <= len(rows) - 1 < 200001
    assert float(rows[-1][0]) == pytest.approx(t_last, rel=1e-6)
    assert [float(r[0]) for r in rows[1:4]] == [0.0, 0.5, 1.0]
    assert (tmp_path / "r" / "b.png").stat().st_size > 10_000


@pytest.fixture(scope="module")
def long_ssp(tmp_path_factory):
    """The README's arm (base, arm, motor) as an SSP running 10^4 s at 1 ms (its FMUs from the
    cache folder the other modules' FMU legs share in this session)."""
    from titopfmu.fmi.cache import cached_fmus
    from titopfmu.master import CoSimulation, write_ssp

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TITOPFMU_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "fmu_cache"))
        fmus = cached_fmus(["rigid_body", "revolute_body", "joint_spring_damper"], 1,
                           notice=lambda _message: None)  # fmt: skip
    cs = CoSimulation()
    cs.add("base", fmus / "TitopRigidBodyC1.fmu",
           {"mass": 10.0, "inertia": [[1, 0, 0], [0, 2, 0], [0, 0, 2.5]],
            "C1.point": [0.0, -0.5, 0.0], "gravity": [0, 0, 0]})  # fmt: skip
    cs.add("arm", fmus / "TitopRevoluteBodyC0.fmu",
           {"mass": 2.0, "inertia": [[0.1, 0, 0], [0, 0.01, 0], [0, 0, 0.1]],
            "com": [0.0, -0.6, 0.0], "theta0": 0.3, "gravity": [0, 0, 0]})  # fmt: skip
    cs.add("motor", fmus / "TitopJointSpringDamper.fmu", {"k": 5.0, "d": 0.5})
    cs.connect("base.C1", "arm.P")
    cs.connect("arm.joint.m", "motor.joint.m")
    cs.connect("motor.joint.tau", "arm.joint.tau")
    cs.set_input("base.ext.W", [0, 0, 0, 0, 0, 0])
    return write_ssp(cs, tmp_path_factory.mktemp("ssp") / "arm.ssp", stop_time=1e4, step=1e-3)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_a_cosimulation_with_the_results_so_far(long_ssp, sig, tmp_path):
    argv = ["cosim", str(long_ssp), "--output-interval", "0.01", "--record", "arm.joint.m",
            "--progress", "--out", "arm.csv"]  # fmt: skip
    _stopped_by(sig, argv, tmp_path, b"cosim:", r"arm\.csv")
    rows = _rows(tmp_path / "arm.csv")
    assert rows[0][0] == "time" and 2 <= len(rows) - 1 < 10**6
    assert float(rows[2][0]) == pytest.approx(0.01)


# --- the same in Python: a Ctrl-C keeps the samples so far ---------------------------------------


def test_an_interrupted_engine_run_raises_run_interrupted_with_the_samples_so_far():
    """A Ctrl-C lands at t = 0.5 s (here raised by a control law, as the signal handler would
    raise it between two bytecodes): a KeyboardInterrupt that carries complete rows."""
    import numpy as np

    from titopfmu import Engine, Function, RevoluteBody, RunInterrupted, System
    from titopfmu.blocks import Ground

    def law(t, inputs):
        if t > 0.5:
            raise KeyboardInterrupt
        return {"tau": -2.0 * inputs["m"][2:3]}

    s = System()
    s.add(Ground("g", children={"h": [0.0, 0.0, 0.0]}),
          RevoluteBody("arm", mass=1.0, inertia=np.diag([0.1, 0.01, 0.1]), com=[0, -0.5, 0],
                       axis=[0, 0, 1], theta0=0.3),
          Function("law", law, inputs={"m": 3}, outputs={"tau": 1}))  # fmt: skip
    s.connect("g.h", "arm.P")
    s.connect("arm.joint.m", "law.m")
    s.connect("law.tau", "arm.joint.tau")
    with pytest.raises(KeyboardInterrupt) as caught:
        Engine(s).simulate(2.0, output_interval=0.01, record={"q": "arm.joint.m[3]"})
    exc = caught.value
    assert isinstance(exc, RunInterrupted) and exc.signal == "SIGINT"
    res = exc.result
    assert len(res.time_list) == len(res.rows) and 2 <= len(res.rows) <= 51
    np.testing.assert_allclose(res.time, 0.01 * np.arange(len(res.rows)), atol=1e-12)
    assert res.time[-1] == pytest.approx(exc.time) and exc.time <= 0.5
    assert res.values[0, 0] == pytest.approx(0.3)


def test_an_error_in_a_users_model_function_is_one_line_naming_its_file_and_line(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.py").write_text("def arm():\n    return 1 / 0\n")
    for source in ("broken:arm", "broken.py:arm"):
        assert main(["run", source]) == 2
        err = capsys.readouterr().err
        assert err.splitlines() == [
            f"titopfmu: error: model '{source}': arm() failed: "
            f"{tmp_path / 'broken.py'}:2: ZeroDivisionError: division by zero"
        ]
