"""Throughput of campaigns: runs per second serially, on 1 and 2 Dask workers, for short
(balloon 1 s) and longer (balloon 20 s) runs, against a bare loop, measured side by side.

    python scripts/bench_campaign.py [--runs 64] [--long-runs 32]

The bare loop is what one would write by hand: for each sample, the system with its parameters
(:class:`titopfmu.parameters.ParameterSetter`), ``Engine.simulate`` with the model's outputs and
the final values. A campaign does the same plus the reductions, the run log, the Dask round trips
and the consolidation into Parquet. Besides runs per second (wall clock), the CPU time of every
process involved (this one, which holds the client and the scheduler, and the workers; psutil)
gives the overhead on a shared machine, where wall-clock figures vary with the others' load.
The LocalClusters are started and warmed (titopfmu imported in each worker) before timing; their
start-up is printed apart. Each mode runs campaigns of n and 2n runs: the difference gives the
marginal CPU cost of a run (what the overhead target is about), the rest is the fixed cost of a
campaign (directory, client, Parquet, summary). Targets: overhead per run at most 10 % for the
20 s runs, near-linear speed-up on 2 cores (wall clock: only as good as the 2 cores are idle).
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import psutil
from distributed import Client, LocalCluster

import titopfmu
from titopfmu import Engine
from titopfmu.blocks.base import InertiaWarning
from titopfmu.campaign import Campaign
from titopfmu.modelfile import example_path
from titopfmu.parameters import ParameterSetter

VARY = {"pend1.mass": "normal(2, 0.1)", "slider_law.k": "uniform(15, 25)"}


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time so far of the processes ``pids`` (s)."""
    total = 0.0
    for pid in pids:
        t = psutil.Process(pid).cpu_times()
        total += t.user + t.system
    return total


def bare_loop(system, campaign: Campaign) -> None:
    """The hand-written loop over the campaign's samples."""
    setter = ParameterSetter(system, list(VARY))
    spec = campaign.spec
    for i in range(campaign.n):
        r = Engine(setter.apply(campaign.sample(i))).simulate(
            spec.t_final, output_interval=spec.output_interval, record=spec.record
        )
        _ = r.values[-1]


def measure(system, campaign: Campaign, run: dict | None, pids: list[int]) -> tuple[float, float]:
    """(wall s, CPU s of this process and the workers) of the bare loop (``run`` None) or of the
    whole campaign (directory, runs, log, Parquet, summary)."""
    c0, t0 = cpu_seconds(pids), time.perf_counter()
    if run is None:
        bare_loop(system, campaign)
    else:
        res = campaign.run(progress=False, **run)
        assert res.executed == campaign.n and (res.table["status"] == "ok").all()
    return time.perf_counter() - t0, cpu_seconds(pids) - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=64, help="runs of the short campaigns (64)")
    ap.add_argument("--long-runs", type=int, default=32, help="runs of the long campaigns (32)")
    ap.add_argument("--repeat", type=int, default=2, help="best of this many rounds (2)")
    args = ap.parse_args()
    warnings.simplefilter("ignore", InertiaWarning)
    system = titopfmu.load(example_path("balloon"))
    tmp = Path(tempfile.mkdtemp(prefix="bench_campaign_"))
    clusters, pids = {}, {None: [os.getpid()]}
    for n in (1, 2):
        t0 = time.perf_counter()
        clusters[n] = LocalCluster(
            n_workers=n, threads_per_worker=1, dashboard_address=":0", silence_logs=logging.ERROR
        )
        Campaign(system, VARY, 2 * n, tmp / f"warm{n}", t_final=0.1, seed=0).run(
            scheduler=clusters[n].scheduler_address, batch_size=1, progress=False
        )
        with Client(clusters[n]) as client:
            pids[n] = [os.getpid(), *client.run(os.getpid).values()]
        dt = time.perf_counter() - t0
        print(f"LocalCluster of {n} worker(s): started and warmed in {dt:.1f} s")
    modes = {
        "bare loop": (None, pids[None]),
        "serial": ({"workers": 0}, pids[None]),
        "1 worker": ({"scheduler": clusters[1].scheduler_address}, pids[1]),
        "2 workers": ({"scheduler": clusters[2].scheduler_address}, pids[2]),
    }
    counter = iter(range(10**6))
    try:
        for label, t_final, n in (
            ("short (1 s)", 1.0, args.runs),
            ("long (20 s)", 20.0, args.long_runs),
        ):
            # each mode on n and 2n runs, rounds interleaved; the CPU time of 2n runs less that
            # of n is the marginal CPU cost of n runs, free of a campaign's fixed cost
            wall: dict[tuple[str, int], float] = {}
            cpu: dict[tuple[str, int], float] = {}
            for _ in range(args.repeat):
                for m, (run, procs) in modes.items():
                    for k in (n, 2 * n):
                        c = Campaign(  # the same seed: the n runs are the 2n's first ones
                            system, VARY, k, tmp / f"c{next(counter)}", t_final=t_final, seed=1
                        )
                        w, u = measure(system, c, run, procs)
                        wall[m, k] = min(wall.get((m, k), np.inf), w)
                        cpu[m, k] = min(cpu.get((m, k), np.inf), u)
            bare = (cpu["bare loop", 2 * n] - cpu["bare loop", n]) / n
            bare_wall = (wall["bare loop", 2 * n] - wall["bare loop", n]) / n
            print(
                f"\n{label} balloon runs: campaigns of {n} and {2 * n} runs, best of {args.repeat}"
            )
            print(
                f"  {'':10s} {'runs/s':>7s} {'wall ms/run':>11s} {'overhead':>9s} "
                f"{'CPU ms/run':>10s} {'overhead':>9s} {'fixed CPU s':>11s}"
            )
            for m in modes:
                per = (cpu[m, 2 * n] - cpu[m, n]) / n
                per_wall = (wall[m, 2 * n] - wall[m, n]) / n
                fixed = cpu[m, 2 * n] - 2 * n * per
                workers = 2 if m == "2 workers" else 1  # wall: against the bare loop per core
                over = "" if m == "bare loop" else f"{100 * (per - bare) / bare:+8.1f}%"
                over_wall = (
                    "" if m == "bare loop"
                    else f"{100 * (workers * per_wall - bare_wall) / bare_wall:+8.1f}%"
                )  # fmt: skip
                print(
                    f"  {m:10s} {2 * n / wall[m, 2 * n]:7.2f} {1e3 * per_wall:11.2f} "
                    f"{over_wall:>9s} {1e3 * per:10.2f} {over:>9s} {fixed:11.2f}"
                )
            print(
                f"  (runs/s: wall clock, {2 * n} runs; ms/run: marginal cost of a run, campaigns "
                f"of {2 * n} less {n} runs, wall clock per worker and CPU time of all processes; "
                "overhead: against the bare loop)"
            )
            print(
                f"  load average (1 min) after: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
            )
            print(
                "  speed-up on 2 cores (wall): 1 worker / 2 workers "
                f"{wall['1 worker', 2 * n] / wall['2 workers', 2 * n]:.2f}, bare loop / 2 workers "
                f"{wall['bare loop', 2 * n] / wall['2 workers', 2 * n]:.2f}"
            )
    finally:
        for c in clusters.values():
            c.close()


if __name__ == "__main__":
    main()
