"""Campaigns (issue 23): on a LocalCluster of two worker processes, the results equal the same
samples run serially bit for bit; a failing sample is recorded; a campaign killed halfway
(SIGKILL) resumes without redoing a finished run; a worker killed during a run loses no sample;
bad input is refused before any run. Runs are the balloon over 0.2 s (a few ms each)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

import titopfmu  # noqa: E402
from titopfmu import Engine  # noqa: E402
from titopfmu.blocks.base import InertiaWarning, ParameterError  # noqa: E402
from titopfmu.campaign import (  # noqa: E402
    Campaign,
    CampaignError,
    DistributionError,
    parse_distribution,
)
from titopfmu.campaign.distributions import TruncNormal, draw, unit_points  # noqa: E402
from titopfmu.modelfile import example_path, from_dict, to_dict  # noqa: E402
from titopfmu.parameters import (  # noqa: E402
    ParameterNameError,
    get_parameter,
    parameter_names,
    with_parameters,
)

ROOT = Path(__file__).resolve().parents[1]
T_FINAL = 0.2


@pytest.fixture(scope="module")
def cluster():
    """A LocalCluster of 2 single-threaded worker processes, shared by the tests."""
    from distributed import LocalCluster

    c = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
        silence_logs=50,
    )  # fmt: skip
    yield c
    c.close()


@pytest.fixture(scope="module")
def balloon():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        return titopfmu.load(example_path("balloon"))


def _reference(system, sample, record):
    """One run done by hand: the system with the sample's parameters, the engine, numpy's
    final value and extremes of every column (None when the run fails)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        try:
            s = with_parameters(system, sample)
        except ParameterError:
            return None
        r = Engine(s).simulate(T_FINAL, output_interval=0.01, record=record)
    out = {}
    for j, c in enumerate(r.columns):
        v = r.values[:, j]
        out[f"{c}.final"], out[f"{c}.min"], out[f"{c}.max"] = v[-1], v.min(), v.max()
    return out


def test_parameters_by_name(balloon):
    """Named parameters: the derived system equals the model file edited by hand, the original
    is untouched, a product of inertia is set symmetrically, bad names are refused."""
    names = parameter_names(balloon)
    assert "pend1.mass" in names and "balloon.inertia[2,3]" in names
    assert "slider.children.S[1]" in names and "pend1.theta_dot0" in names  # a default
    values = {"pend1.mass": 2.5, "balloon.inertia[2,3]": -6.0, "pend1.theta_dot0": 0.3}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        s = with_parameters(balloon, values)
    doc = to_dict(balloon)
    blocks = {b["name"]: b for b in doc["blocks"]}
    blocks["pend1"]["mass"] = 2.5
    blocks["pend1"]["theta_dot0"] = 0.3
    blocks["balloon"]["inertia"][1][2] = blocks["balloon"]["inertia"][2][1] = -6.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        ref = from_dict(doc)
    rec = balloon.model_info.outputs
    a = Engine(s).simulate(0.1, output_interval=0.05, record=rec).values
    b = Engine(ref).simulate(0.1, output_interval=0.05, record=rec).values
    assert np.array_equal(a, b)
    assert get_parameter(s, "balloon.inertia[3,2]") == -6.0
    assert get_parameter(balloon, "pend1.mass") == 2.0  # unchanged
    for bad in ("pend9.mass", "pend1.masss", "pend1.mass[1]", "balloon.inertia", "x"):
        with pytest.raises(ParameterNameError, match="parameter"):
            with_parameters(balloon, {bad: 1.0})


def test_sampling_plans():
    """Reproducible from the seed; Latin hypercube strata each hit once; Sobol' balanced for a
    power of 2; a truncated normal stays in its bounds."""
    a, b = (
        draw({"p": TruncNormal(0, 1, -0.5, 2)}, 64, "lhs", 7),
        draw({"p": TruncNormal(0, 1, -0.5, 2)}, 64, "lhs", 7),
    )
    assert np.array_equal(a["p"], b["p"])
    assert a["p"].min() >= -0.5 and a["p"].max() <= 2
    u = unit_points(50, 3, "lhs", 1)
    for k in range(3):
        assert sorted(np.floor(u[:, k] * 50).astype(int)) == list(range(50))
    s = unit_points(64, 2, "sobol", 1)
    for k in range(2):
        assert np.bincount(np.floor(s[:, k] * 8).astype(int), minlength=8).tolist() == [8] * 8
    assert not np.array_equal(unit_points(8, 1, "random", 1), unit_points(8, 1, "random", 2))
    # a sweep: every combination, the first parameter slowest; values(...) under random draws
    vary = {"a": parse_distribution("values(1, 2, 4)"), "b": parse_distribution("linspace(0,1,3)")}
    g = draw(vary, 9, "grid", 0)
    assert g["a"].tolist() == [1, 1, 1, 2, 2, 2, 4, 4, 4] and g["b"].tolist() == [0, 0.5, 1] * 3
    assert set(draw(vary, 40, "random", 3)["a"]) == {1.0, 2.0, 4.0}
    with pytest.raises(DistributionError, match="grid has 9 points"):
        draw(vary, 8, "grid", 0)
    with pytest.raises(DistributionError, match="linspace"):
        parse_distribution("linspace(0, 1, 1)")


def test_cluster_equals_serial_and_records_failure(cluster, balloon, tmp_path):
    """Bit for bit equal to a hand-written serial loop and to the serial campaign; the samples
    with a negative mass fail with the block's message and the campaign goes on."""
    vary = {"pend1.mass": "uniform(-1, 3)", "slider_law.k": "normal(20, 2)"}
    kw = dict(t_final=T_FINAL, output_interval=0.01, seed=11, method="lhs")
    c = Campaign(balloon, vary, 12, tmp_path / "dask", **kw)
    negative = c.values["pend1.mass"] < 0
    assert 0 < negative.sum() < 12  # the seed gives both kinds
    res = c.run(scheduler=cluster.scheduler_address, batch_size=2)
    serial = Campaign(balloon, vary, 12, tmp_path / "serial", **kw).run(workers=0)
    t = res.table
    assert list(t["run"]) == list(range(12))
    cols = [k for k in t.columns if k not in ("wall", "worker")]
    pd.testing.assert_frame_equal(t[cols], serial.table[cols], check_exact=True)
    record = balloon.model_info.outputs
    for i in range(12):
        row = t.iloc[i]
        assert row["pend1.mass"] == c.values["pend1.mass"][i]
        ref = _reference(balloon, c.sample(i), record)
        if negative[i]:
            assert ref is None and row["status"] == "failed"
            assert "pend1" in row["error"] and "mass" in row["error"]
            assert np.isnan(row["theta1.final"])
        else:
            assert row["status"] == "ok" and pd.isna(row["error"])
            got = np.array([row[k] for k in ref])
            assert np.array_equal(got, np.array(list(ref.values())))  # bit for bit
    assert len(res.failed) == negative.sum()
    assert (tmp_path / "dask" / "results.parquet").exists()
    assert (tmp_path / "dask" / "summary.csv").exists()
    plots = res.plot(outcomes=["theta1.final"])
    assert [p.name for p in plots] == ["histograms.png", "scatter.png"]


@pytest.mark.parametrize("where", ["serial", "cluster"])
def test_a_run_past_its_timeout_is_stopped_and_recorded(cluster, balloon, tmp_path, where):
    """A stiff sample (a pendulum spring of 1e10 N m/rad: the explicit integrator crawls, about
    10 s for the run) stops at the run timeout and is recorded as failed with its parameters and
    the time it reached; the other samples complete as without a timeout."""
    vary = {"pend1_law.k": "values(20, 1e10, 25)"}
    kw = dict(t_final=T_FINAL, output_interval=0.01, method="grid")
    c = Campaign(balloon, vary, None, tmp_path / "t", timeout=1.5, **kw)
    run = {"workers": 0} if where == "serial" else {"scheduler": cluster.scheduler_address}
    t = c.run(batch_size=1, **run).table
    assert list(t["status"]) == ["ok", "failed", "ok"], t[["status", "error"]]
    slow = t.iloc[1]
    assert slow["pend1_law.k"] == 1e10 and "timeout of 1.5 s" in slow["error"], slow["error"]
    assert 0.0 <= slow["t_end"] < T_FINAL and slow["wall"] < 60.0  # stopped, not finished
    free = Campaign(balloon, {"pend1_law.k": "values(20, 25)"}, None, tmp_path / "f", **kw)
    ref = free.run(workers=0).table
    for a, b in ((0, 0), (2, 1)):
        assert t.iloc[a]["theta1.final"] == ref.iloc[b]["theta1.final"]


def test_a_bad_run_timeout_is_refused(balloon, tmp_path):
    for bad in (0, -1.0, "5", True):
        with pytest.raises(CampaignError, match="run timeout"):
            Campaign(balloon, {"pend1.mass": "normal(2, 0.1)"}, 2, tmp_path / "x", timeout=bad)


KILLED_SCRIPT = """
import os, sys, time
from distributed import LocalCluster
from titopfmu.campaign import Campaign

counter = sys.argv[2]

def count(result):
    with open(counter, "a") as f:
        f.write(f"{os.getpid()}\\n")
    time.sleep(0.1)
    return 0.0

if __name__ == "__main__":
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0",
                      silence_logs=50) as cl:
        Campaign("balloon", {"pend1.mass": "uniform(1.5, 2.5)"}, 20, sys.argv[1],
                 t_final=0.2, seed=5, custom={"count": count}).run(
                     scheduler=cl.scheduler_address, batch_size=1)
"""


def _counter(path):
    def count(result):
        with open(path, "a") as f:
            f.write(f"{os.getpid()}\n")
        return 0.0

    return count


def test_resume_after_sigkill_redoes_no_finished_run(cluster, tmp_path):
    """A campaign process killed with SIGKILL after some runs finished: the resumed campaign
    runs exactly the others, each run is recorded once, the earlier records are untouched."""
    out, counter = tmp_path / "camp", tmp_path / "executions.txt"
    script = tmp_path / "killed.py"
    script.write_text(textwrap.dedent(KILLED_SCRIPT))
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    err = open(tmp_path / "stderr.txt", "w")  # noqa: SIM115 - closed once the process is gone
    proc = subprocess.Popen(
        [sys.executable, str(script), str(out), str(counter)],
        env=env,
        start_new_session=True,  # its cluster's processes too: the whole group is killed
        stdout=subprocess.DEVNULL,
        stderr=err,
    )
    log = out / "runs.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if log.exists() and log.read_bytes().count(b"\n") >= 6:
            break
        time.sleep(0.05)
    assert proc.poll() is None, (tmp_path / "stderr.txt").read_text()[-2000:]
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    err.close()
    time.sleep(0.5)
    before = log.read_bytes()
    finished = {json.loads(x)["run"] for x in before.decode().splitlines() if x.endswith("}")}
    k = len(finished)
    assert 6 <= k < 20
    n_exec_before = counter.read_text().count("\n")

    res = Campaign(
        "balloon", {"pend1.mass": "uniform(1.5, 2.5)"}, 20, out, t_final=0.2, seed=5,
        custom={"count": _counter(counter)},
    ).run(scheduler=cluster.scheduler_address)  # fmt: skip
    assert (res.resumed, res.executed) == (k, 20 - k)
    assert counter.read_text().count("\n") - n_exec_before == 20 - k  # no finished run redone
    lines = log.read_text().splitlines()
    runs = [json.loads(x)["run"] for x in lines]
    assert sorted(runs) == list(range(20))  # each run recorded exactly once
    kept = before[: before.rfind(b"\n") + 1]
    assert log.read_bytes().startswith(kept)  # the earlier records are untouched
    assert list(res.table["run"]) == list(range(20))
    assert (res.table["status"] == "ok").all()


def _kill_first_worker(marker):
    def reduction(result):
        from distributed import get_worker

        try:
            get_worker()
        except ValueError:
            return 0.0  # not on a worker
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return 1.0
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        os.kill(os.getpid(), signal.SIGKILL)  # the worker process dies during this run
        return 2.0  # pragma: no cover

    return reduction


def test_worker_killed_during_a_run_loses_no_sample(cluster, tmp_path):
    marker = tmp_path / "killed_pid"
    res = Campaign(
        "balloon", {"slider_law.k": "uniform(15, 25)"}, 6, tmp_path / "camp", t_final=T_FINAL,
        seed=2, custom={"survived": _kill_first_worker(str(marker))},
    ).run(scheduler=cluster.scheduler_address, batch_size=1)  # fmt: skip
    killed = int(marker.read_text())
    t = res.table
    assert list(t["run"]) == list(range(6)) and (t["status"] == "ok").all()
    assert (t["survived"] == 1.0).all()  # every run completed on a live worker
    assert not t["worker"].str.endswith(f":{killed}").any()


def test_bad_input_refused_before_any_run(balloon, tmp_path):
    out = tmp_path / "c"
    kw = dict(t_final=T_FINAL, seed=1)
    with pytest.raises(ParameterNameError, match="no parameter 'mas'"):
        Campaign(balloon, {"pend1.mas": "normal(2, 0.1)"}, 4, out, **kw)
    for dist, msg in (
        ("normal(2, -0.1)", "std must be positive"),
        ("uniform(3, 1)", "low"),
        ("truncnormal(2, 0.1, 5, 6)", "no probability"),
        ("poisson(3)", "unknown distribution"),
        ("normal(2)", "takes 2 numbers"),
    ):
        with pytest.raises(DistributionError, match=msg):
            Campaign(balloon, {"pend1.mass": dist}, 4, out, **kw)
    with pytest.raises(CampaignError, match="unknown backend 'fmu'"):
        Campaign(balloon, {"pend1.mass": "normal(2, 0.1)"}, 4, out, backend="fmu", **kw)
    with pytest.raises(CampaignError, match="step 0.003 s does not divide the output interval"):
        Campaign(balloon, {"pend1.mass": "normal(2, 0.1)"}, 4, out, backend="cosim",
                 step=0.003, **kw)  # fmt: skip
    with pytest.raises(CampaignError, match="outcome 'nope'"):
        Campaign(balloon, {"pend1.mass": "normal(2, 0.1)"}, 4, out, outcomes=["nope"], **kw)
    assert not out.exists()
    # an unreachable scheduler: refused within the timeout, nothing written
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = Campaign(balloon, {"pend1.mass": "normal(2, 0.1)"}, 4, out, **kw)
    with pytest.raises(CampaignError, match="cannot reach the Dask scheduler .* within 1 s"):
        c.run(scheduler=f"tcp://127.0.0.1:{port}", connect_timeout=1.0)
    assert not out.exists()
    # a scheduler without workers
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, dashboard_address=":0", silence_logs=50) as bare:
        with pytest.raises(CampaignError, match="has no worker"):
            c.run(scheduler=bare.scheduler_address, connect_timeout=1.0)
    assert not out.exists()
    # a directory with another campaign, or with other files
    Campaign(balloon, {"pend1.mass": "normal(2, 0.1)"}, 2, out, **kw).run(workers=0)
    with pytest.raises(CampaignError, match="different campaign .*samples: 2 there, 4 now"):
        c.run(workers=0)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(CampaignError, match="not empty"):
        Campaign(balloon, {"pend1.mass": "normal(2, 0.1)"}, 4, other, **kw).run(workers=0)
    assert sorted(p.name for p in other.iterdir()) == ["notes.txt"]


def test_cli(cluster, tmp_path, capsys):
    from titopfmu.cli import main

    assert main(["campaign", "balloon", "--list-parameters"]) == 0
    assert "balloon.inertia[2,3]" in capsys.readouterr().out.split()
    out = tmp_path / "c"
    args = [
        "campaign", "balloon", "--samples", "6", "--vary", "pend1.mass=normal(2,0.1)",
        "--vary", "pend1.theta0=uniform(2.8,3.1)", "--out", str(out), "--t-final", "0.2",
        "--seed", "4", "--method", "sobol", "--outcome", "theta1", "--reduce", "final,absmax",
        "--trajectories", "--scheduler", cluster.scheduler_address, "--no-plots",
    ]  # fmt: skip
    assert main(args) == 0
    printed = capsys.readouterr()
    assert "6 runs" in printed.out and "not a power of 2" in printed.err
    t = pd.read_parquet(out / "results.parquet")
    assert list(t.columns[:5]) == ["run", "pend1.mass", "pend1.theta0", "theta1.final",
                                   "theta1.absmax"]  # fmt: skip
    traj = pd.read_parquet(out / "trajectories" / "run_000003.parquet")
    assert traj["time"].iloc[-1] == 0.2 and traj["theta1"].iloc[-1] == t["theta1.final"][3]
    assert traj["theta1"].iloc[0] == t["pend1.theta0"][3]  # the sampled initial angle
    assert main(args) == 0  # the same command again: everything already done
    assert "0 run in" in capsys.readouterr().out
    args[args.index("6")] = "7"
    assert main(args) == 2
    assert "different campaign" in capsys.readouterr().err


def _pendulum(sample):
    """A point-mass pendulum of length ``sample["length"]`` (m): not a block parameter (it moves
    the centre of mass), so the model is a function of the sample."""
    from titopfmu import Constant, Ground, RevoluteBody, System

    s = System("pendulum")
    s.add(
        Ground("g", children={"C": [0.0, 0.0, 0.0]}),
        RevoluteBody("arm", 1.0, np.zeros((3, 3)), com=[0.0, -sample["length"], 0.0],
                     theta0=0.3, gravity=[0.0, -9.81, 0.0]),
        Constant("free", 0.0),
    )  # fmt: skip
    s.connect("g.C", "arm.P")
    s.connect("free.y", "arm.joint.tau")
    return s


def test_model_as_a_function_of_the_sample(tmp_path):
    record = {"theta": "arm.joint.m[3]"}
    c = Campaign(_pendulum, {"length": "uniform(0.5, 2)"}, 4, tmp_path / "c", t_final=0.5,
                 seed=1, record=record)  # fmt: skip
    t = c.run(workers=0).table
    for i in range(4):
        ref = Engine(_pendulum(c.sample(i))).simulate(0.5, output_interval=0.005, record=record)
        assert t["theta.final"][i] == ref["theta"][-1]
    # a longer pendulum swings slower: from 0.3 rad it has moved less after 0.5 s
    order = np.argsort(t["length"].to_numpy())
    assert np.all(np.diff(t["theta.final"].to_numpy()[order]) > 0)

    def broken(sample):
        raise KeyError("mass")

    with pytest.raises(CampaignError, match="failed on the first sample"):
        Campaign(broken, {"length": "uniform(0.5, 2)"}, 4, tmp_path / "d", record=record)


def test_cosim_backend_on_the_cluster_agrees_with_the_engine(balloon, tmp_path, cluster):
    """Each run through the balloon's FMUs (CoSimulation.from_system, h = 1 ms) on the
    LocalCluster: every sample ok, the outcomes within the co-simulation's accuracy (1e-4,
    second order in h) of the same samples run in process."""
    from titopfmu.fmi.build import build_fmus

    fmus = tmp_path / "fmus"
    build_fmus(fmus, types=["rigid_body", "prismatic_body", "revolute_body",
                            "joint_spring_damper"], max_children=1)  # fmt: skip
    vary = {"pend1.mass": "uniform(1.5, 2.5)", "slider.mass": "uniform(3, 5)"}
    kw = dict(t_final=T_FINAL, seed=3, output_interval=0.01)
    engine = Campaign(balloon, vary, 3, tmp_path / "e", **kw).run(workers=0).table
    cosim = Campaign(balloon, vary, 3, tmp_path / "c", backend="cosim", fmus=fmus, **kw).run(
        scheduler=cluster.scheduler_address
    ).table
    assert (cosim["status"] == "ok").all(), list(cosim["error"])
    assert list(cosim["pend1.mass"]) == list(engine["pend1.mass"])
    cols = [c for c in engine.columns if c.endswith((".final", ".min", ".max"))]
    assert len(cols) == 27
    gap = np.max(np.abs(cosim[cols].to_numpy() - engine[cols].to_numpy()))
    assert 0 < gap < 1e-4, gap
