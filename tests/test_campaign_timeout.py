"""A run timeout is a hard bound (issue 33, row 3; "What to build" 3): a run stuck inside one
evaluation (a user's function that sleeps, or loops in C holding the GIL, never reaching the
engine's clock checks) is ended with its helper process at the run timeout plus a grace, recorded
as failed with its parameters, and the campaign goes on; the other runs are bit for bit those of
a campaign without a timeout; serially and on a LocalCluster; from the command line, also when
the model is stuck in the checks before the runs; a Ctrl-C during a stuck run stops the campaign
as before (130, one line) and leaves no helper process.

Before: the serial campaign waited for the stuck evaluation to return (here it returns after
STUCK s, once, so that the tests end even then), a Dask run likewise, and the command line sat
in the checks before the runs with 0 runs logged."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")
psutil = pytest.importorskip("psutil")

import titopfmu  # noqa: E402
from titopfmu.campaign import Campaign, CampaignError  # noqa: E402
from titopfmu.campaign.isolation import hard_deadline  # noqa: E402

TIMEOUT = 2.0
STUCK = 30.0  # s a stuck evaluation takes (before the change: what each stuck run took)
RECORD = {"theta": "arm.joint.m[3]"}
KW = dict(t_final=0.2, record=RECORD, method="grid", timeout=TIMEOUT)


def _pendulum_stuck_over(limit: float, how: str):
    """A function of the sample: a pendulum of length ``sample["length"]`` whose (zero) joint
    torque comes from a function of time that gets stuck after t = 0.05 s when the length
    exceeds ``limit``: sleeping (``how="sleep"``) or summing in C with the GIL held
    (``"busy"``), STUCK s either way, once per system."""

    def build(sample):
        import time as _time

        from titopfmu import Ground, RevoluteBody, System, TimeFunction

        stuck = [sample["length"] > limit]

        def torque(t):
            if stuck[0] and t > 0.05:
                stuck[0] = False
                if how == "sleep":
                    _time.sleep(STUCK)
                else:
                    t0 = _time.perf_counter()
                    while _time.perf_counter() - t0 < STUCK:
                        sum(range(10**8))  # about a second in C, no signal handled
            return [0.0]

        s = System("pendulum")
        s.add(
            Ground("g", children={"C": [0.0, 0.0, 0.0]}),
            RevoluteBody("arm", 1.0, np.zeros((3, 3)), com=[0.0, -sample["length"], 0.0],
                         theta0=0.3, gravity=[0.0, -9.81, 0.0]),
            TimeFunction("free", torque, 1),
        )  # fmt: skip
        s.connect("g.C", "arm.P")
        s.connect("free.y", "arm.joint.tau")
        return s

    return build


def _helpers(mark: str) -> list[int]:
    """Live helper processes (titopfmu.campaign.isolation) started under this test (its
    environment variable TITOPFMU_TEST_MARK is ``mark``), wherever they are in the process
    tree (a Dask worker's helper is not a child of this process)."""
    found = []
    for p in psutil.process_iter():
        try:
            if ("titopfmu.campaign.isolation" in " ".join(p.cmdline())
                    and p.environ().get("TITOPFMU_TEST_MARK") == mark
                    and p.status() != psutil.STATUS_ZOMBIE):  # fmt: skip
                found.append(p.pid)
        except psutil.Error:
            pass
    return found


def _no_helper_left(mark: str, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while _helpers(mark):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The lengths that do not get stuck, run without a timeout."""
    out = tmp_path_factory.mktemp("ref") / "c"
    c = Campaign(_pendulum_stuck_over(10.0, "sleep"), {"length": "values(1.0, 1.2)"}, None, out,
                 **{**KW, "timeout": None})  # fmt: skip
    return c.run(workers=0).table


@pytest.mark.parametrize("where,how", [("serial", "busy"), ("cluster", "sleep")])
def test_a_stuck_run_is_ended_and_recorded(tmp_path, reference, where, how, monkeypatch):
    monkeypatch.setenv("TITOPFMU_TEST_MARK", str(tmp_path))
    scratch = tmp_path / "tmp"  # the temporary folders of this process and the cluster's
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    vary = {"length": "values(1.0, 2.0, 1.2)"}
    c = Campaign(_pendulum_stuck_over(1.5, how), vary, None, tmp_path / "c", **KW)
    t0 = time.monotonic()
    if where == "serial":
        table = c.run(workers=0).table
    else:
        from distributed import LocalCluster

        with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                          dashboard_address=":0", silence_logs=50) as cluster:  # fmt: skip
            table = c.run(scheduler=cluster.scheduler_address, batch_size=1).table
    wall = time.monotonic() - t0
    assert list(table["status"]) == ["ok", "failed", "ok"], table[["status", "error"]]
    stuck = table.iloc[1]
    assert stuck["length"] == 2.0  # its parameters are in the table
    assert "the run exceeded its timeout of 2 s" in stuck["error"], stuck["error"]
    assert "its process was ended" in stuck["error"], stuck["error"]
    assert np.isnan(stuck["t_end"]) and np.isnan(stuck["theta.final"])
    assert hard_deadline(TIMEOUT) - 0.5 < stuck["wall"] < hard_deadline(TIMEOUT) + 5.0
    assert wall < STUCK, wall  # the stuck run did not hold the campaign
    for col in ("theta.final", "theta.min", "theta.max", "t_end"):  # the others: bit for bit
        assert list(table[col].iloc[[0, 2]]) == list(reference[col]), col
    ended = int(stuck["worker"].rpartition(":")[2])  # the helper process that ran it: ended
    assert not psutil.pid_exists(ended) or psutil.Process(ended).status() == psutil.STATUS_ZOMBIE
    assert _no_helper_left(str(tmp_path))  # closed with the campaign (or its cluster)
    assert not list(scratch.glob("titopfmu_run_*"))  # their temporary folders removed


def test_a_model_function_stuck_on_the_first_sample_is_refused(tmp_path):
    """The checks before the runs call the model function on the first sample: stuck, it is
    ended at the run timeout and the campaign refused (before: it waited STUCK s)."""

    def build(sample):
        import time as _time

        _time.sleep(STUCK)
        return _pendulum_stuck_over(10.0, "sleep")(sample)

    t0 = time.monotonic()
    with pytest.raises(CampaignError, match="did not return within the run timeout of 1 s"):
        Campaign(build, {"length": "values(1.0, 1.2)"}, None, tmp_path / "c",
                 **{**KW, "timeout": 1.0})  # fmt: skip
    assert time.monotonic() - t0 < STUCK
    assert not (tmp_path / "c").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_run_whose_process_dies_is_recorded_and_the_campaign_goes_on(tmp_path):
    """A run that kills its own process (as a crash in an FMU would): recorded as failed with
    its parameters, the next run in a new helper process. (The crash happens only outside this
    process: before the change, the run was done here and succeeded.)"""
    here = os.getpid()
    pendulum = _pendulum_stuck_over(10.0, "sleep")

    def build(sample):
        if sample["length"] == 1.2 and os.getpid() != here:
            os.kill(os.getpid(), signal.SIGKILL)
        return pendulum(sample)

    c = Campaign(build, {"length": "values(1.0, 1.2, 1.0)"}, None, tmp_path / "c", **KW)
    table = c.run(workers=0).table
    assert list(table["status"]) == ["ok", "failed", "ok"], table[["status", "error"]]
    assert "the run's process ended during the run (killed by SIGKILL)" in table["error"][1]
    assert table["length"][1] == 1.2 and table["worker"][0] != table["worker"][2]


STUCK_MODEL = """
import os, time
from titopfmu import Ground, RevoluteBody, System, TimeFunction

def make():
    marker, after = os.environ["STUCK_MARKER"], float(os.environ["STUCK_AFTER"])

    stuck = [True]

    def torque(t):
        if stuck[0] and t >= after:
            stuck[0] = False
            with open(marker, "a") as f:
                f.write(f"{os.getpid()}\\n")
            time.sleep(float(os.environ["STUCK_FOR"]))
        return [0.0]

    s = System("pendulum")
    s.add(Ground("g", children={"C": [0.0, 0.0, 0.0]}),
          RevoluteBody("arm", 1.0, [[0.0] * 3] * 3, com=[0.0, -1.0, 0.0], theta0=0.3,
                       gravity=[0.0, -9.81, 0.0]),
          TimeFunction("free", torque, 1))
    s.connect("g.C", "arm.P")
    s.connect("free.y", "arm.joint.tau")
    return s
"""


def _command(tmp_path: Path, after: float, timeout: float) -> tuple[list[str], dict]:
    model = tmp_path / "stuck_model.py"
    model.write_text(textwrap.dedent(STUCK_MODEL))
    here = str(Path(titopfmu.__file__).resolve().parents[1])
    path = os.environ.get("PYTHONPATH")
    env = dict(
        os.environ,
        STUCK_MARKER=str(tmp_path / "stuck.txt"),
        STUCK_AFTER=str(after),
        STUCK_FOR=str(STUCK),
        TITOPFMU_TEST_MARK=str(tmp_path),
        PYTHONPATH=here + (os.pathsep + path if path else ""),
    )
    cmd = [
        sys.executable, "-c", "import sys; from titopfmu.cli import main; sys.exit(main())",
        "campaign", f"{model}:make", "--samples", "2", "--vary", "arm.mass=uniform(1, 2)",
        "--t-final", "0.2", "--seed", "1", "--workers", "0", "--run-timeout", str(timeout),
        "--out", str(tmp_path / "c"), "--no-plots", "--no-progress",
    ]  # fmt: skip
    return cmd, env


def test_cli_run_timeout_ends_a_model_stuck_from_the_start(tmp_path):
    """Stuck from t = 0: the check before the runs is ended at the run timeout too, and every
    run is recorded as ended (exit status 1: no run succeeded). Before: the command sat in the
    checks (0 runs logged) until the evaluation returned."""
    cmd, env = _command(tmp_path, after=0.0, timeout=1.0)
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=4 * STUCK)
    wall = time.monotonic() - t0
    assert proc.returncode == 1, proc.stderr
    assert wall < STUCK, (wall, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = (tmp_path / "c" / "runs.jsonl").read_text().splitlines()
    records = [json.loads(x) for x in lines]
    assert sorted(r["run"] for r in records) == [0, 1]
    for r in records:
        assert r["status"] == "failed" and "timeout of 1 s" in r["error"], r
        assert 1.0 <= r["arm.mass"] <= 2.0
    table = pd.read_parquet(tmp_path / "c" / "results.parquet")
    assert list(table["status"]) == ["failed", "failed"]
    pids = [int(x) for x in (tmp_path / "stuck.txt").read_text().split()]
    assert len(set(pids)) == 3  # the check and two runs, each in a process ended in turn
    assert _no_helper_left(str(tmp_path))


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_during_a_stuck_run(tmp_path):
    """SIGINT to the process group (a Ctrl-C at the terminal) while a run is stuck: exit status
    130, one line on stderr, the helper process ended."""
    cmd, env = _command(tmp_path, after=0.05, timeout=60.0)
    marker = tmp_path / "stuck.txt"
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert marker.exists(), proc.communicate()[1]
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == [
        "titopfmu: interrupted (SIGINT) after 0 of 2 runs; results so far in "
        f"{tmp_path / 'c' / 'results.parquet'}; run the same command to resume"
    ], err
    assert len(marker.read_text().split()) == 1
    assert _no_helper_left(str(tmp_path))
