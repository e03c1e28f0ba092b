"""Issue 29: ``titopfmu campaign`` stopped by Ctrl-C (SIGINT to the whole process group, as a
terminal sends it: Dask's worker processes get it too) or by SIGTERM (to the campaign's process
alone, as a process manager sends it), on a LocalCluster of two workers or serially: exit
status 130, one line on stderr and nothing else (no traceback from any process), the table, the
summary (and the plots) of the runs finished so far on disk; the same command then resumes
without redoing a finished run. The runs are the balloon over 10 s (a fraction of a second
each); the tests send the signal once the first run is recorded."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

if sys.platform == "win32":  # pragma: no cover
    pytest.skip("POSIX signals and process groups", allow_module_level=True)

import titopfmu  # noqa: E402

SAMPLES = 16
MAIN = "import sys; from titopfmu.cli import main; sys.exit(main())"


def _command(out: Path, workers: int, plots: bool) -> list[str]:
    return [
        sys.executable, "-c", MAIN, "campaign", "balloon", "--samples", str(SAMPLES),
        "--vary", "pend1.mass=uniform(1.5, 2.5)", "--t-final", "10", "--seed", "3",
        "--out", str(out), "--workers", str(workers), "--no-progress",
    ] + ([] if plots else ["--no-plots"])  # fmt: skip


def _env() -> dict:
    """This titopfmu importable in the subprocess, wherever it is (installed or not)."""
    here = str(Path(titopfmu.__file__).resolve().parents[1])
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=here + (os.pathsep + path if path else ""))


def _records(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [json.loads(x) for x in log.read_text().splitlines() if x.endswith("}")]


def _group_gone(pgid: int, timeout: float = 30.0) -> bool:
    """No live process (zombies aside) left in the process group ``pgid``."""
    psutil = pytest.importorskip("psutil")
    deadline = time.monotonic() + timeout
    while True:
        alive = []
        for p in psutil.process_iter():
            try:
                if os.getpgid(p.pid) == pgid and p.status() != psutil.STATUS_ZOMBIE:
                    alive.append(p.pid)
            except (OSError, psutil.Error):
                pass
        if not alive or time.monotonic() > deadline:
            return not alive
        time.sleep(0.2)


def _interrupt(tmp_path: Path, workers: int, sig: signal.Signals, group: bool, plots: bool,
               again: bool = False):  # fmt: skip
    """Start the campaign, send ``sig`` (to the group, or to the campaign's process) once a run
    is recorded (``again``: a second time, while the campaign shuts down); its (returncode,
    stdout, stderr) and the runs recorded then."""
    out = tmp_path / "camp"
    proc = subprocess.Popen(
        _command(out, workers, plots),
        cwd=tmp_path,
        env=_env(),
        start_new_session=True,  # its own process group, as a terminal's foreground job
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 240
        while proc.poll() is None and time.monotonic() < deadline:
            if _records(out / "runs.jsonl"):
                break
            time.sleep(0.02)
        assert proc.poll() is None, "the campaign ended before the signal: " + proc.stderr.read()
        send = (lambda s: os.killpg(proc.pid, s)) if group else (lambda s: proc.send_signal(s))
        send(sig)
        if again:
            time.sleep(0.3)
            if proc.poll() is None:
                send(sig)
        stdout, stderr = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:  # pragma: no cover - a hung campaign: do not leave it behind
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert _group_gone(proc.pid), "worker processes left running"
    return proc.returncode, stdout, stderr, out


def _check_partial(code, stdout, stderr, out: Path, sig: str, plots: bool) -> int:
    """Exit 130, one line on stderr naming the signal and the partial table, that table (and
    the summary, the plots) on disk; the number of runs it holds."""
    assert code == 130, stderr
    assert "Traceback" not in stderr, stderr
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert len(lines) == 1, stderr
    m = re.fullmatch(
        rf"titopfmu: interrupted \({sig}\) after (\d+) of {SAMPLES} runs; results so far in "
        r"(.+); run the same command to resume",
        lines[0],
    )
    assert m, lines[0]
    k = int(m.group(1))
    assert 1 <= k < SAMPLES
    assert Path(m.group(2)) == out / "results.parquet"
    assert stdout == ""
    table = pd.read_parquet(out / "results.parquet")
    recorded = _records(out / "runs.jsonl")
    assert len(table) == len(recorded) == k
    assert sorted(table["run"]) == sorted(r["run"] for r in recorded)
    assert (table["status"] == "ok").all()
    assert {"pend1.mass", "run", "status"} <= set(table.columns)
    summary = pd.read_csv(out / "summary.csv", index_col=0)
    assert summary.loc["pend1.mass", "count"] == k
    assert (out / "plots" / "histograms.png").exists() == plots
    return k


def _check_resume(tmp_path: Path, out: Path, workers: int, k: int) -> None:
    """The same command again: the other runs only, each run recorded once, the first records
    untouched, the whole table written."""
    log = out / "runs.jsonl"
    before = log.read_bytes()
    done = subprocess.run(
        _command(out, workers, False), cwd=tmp_path, env=_env(), capture_output=True,
        text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert f": {SAMPLES - k} run in " in done.stdout and f", {k} already done;" in done.stdout
    after = log.read_bytes()
    assert after.startswith(before)  # the records of the finished runs untouched
    runs = [r["run"] for r in _records(log)]
    assert sorted(runs) == list(range(SAMPLES))  # each run recorded once: none redone
    table = pd.read_parquet(out / "results.parquet")
    assert list(table["run"]) == list(range(SAMPLES))
    assert (table["status"] == "ok").all()


@pytest.mark.parametrize(
    "workers, plots, again",
    [(2, True, True), (0, False, False)],
    ids=["cluster", "serial"],
)
def test_ctrl_c_keeps_the_finished_runs_and_resumes(tmp_path, workers, plots, again):
    """Ctrl-C at the terminal: SIGINT to every process of the group (on the cluster, a second
    one while the campaign shuts down: ignored)."""
    code, stdout, stderr, out = _interrupt(tmp_path, workers, signal.SIGINT, True, plots, again)
    k = _check_partial(code, stdout, stderr, out, "SIGINT", plots)
    _check_resume(tmp_path, out, workers, k)


@pytest.mark.parametrize("workers", [2, 0], ids=["cluster", "serial"])
def test_sigterm_to_the_campaign_process(tmp_path, workers):
    """SIGTERM to the campaign's process only (the workers do not get it: the campaign closes
    them)."""
    code, stdout, stderr, out = _interrupt(tmp_path, workers, signal.SIGTERM, False, False)
    _check_partial(code, stdout, stderr, out, "SIGTERM", False)
