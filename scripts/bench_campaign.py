"""Throughput of campaigns: runs per second serially, on 1 and 2 Dask workers, for short
(balloon 1 s) and longer (balloon 20 s) runs, against a bare loop, measured side by side.

    python scripts/bench_campaign.py [--runs 24] [--long-runs 8]

The bare loop is what one would write by hand: for each sample, the system with its parameters
(:class:`titopfmu.parameters.ParameterSetter`), ``Engine.simulate`` with the model's outputs and
the final values. A campaign does the same plus the reductions, the run log, the Dask round trips
and the consolidation into Parquet. The LocalClusters are started and warmed (titopfmu imported
in each worker) before timing; their start-up is printed apart. Each mode runs campaigns of n and
2n runs: the difference gives the marginal cost of a run (what the overhead target is about),
the rest is the fixed cost of a campaign (directory, client, Parquet, summary). Targets (issue
23): overhead per run at most 10 % for the 20 s runs, near-linear speed-up on 2 cores (on a
machine with 2 idle cores: the figures are only as good as the machine is quiet).
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from distributed import LocalCluster

import titopfmu
from titopfmu import Engine
from titopfmu.blocks.base import InertiaWarning
from titopfmu.campaign import Campaign
from titopfmu.modelfile import example_path
from titopfmu.parameters import ParameterSetter

VARY = {"pend1.mass": "normal(2, 0.1)", "slider_law.k": "uniform(15, 25)"}


def bare_loop(system, campaign: Campaign) -> float:
    """Wall time of the hand-written loop over the campaign's samples (s)."""
    setter = ParameterSetter(system, list(VARY))
    spec = campaign.spec
    t0 = time.perf_counter()
    for i in range(campaign.n):
        r = Engine(setter.apply(campaign.sample(i))).simulate(
            spec.t_final, output_interval=spec.output_interval, record=spec.record
        )
        _ = r.values[-1]
    return time.perf_counter() - t0


def timed(campaign: Campaign, **run) -> float:
    """Wall time of a whole campaign (directory, runs, log, Parquet, summary) in s."""
    t0 = time.perf_counter()
    res = campaign.run(progress=False, **run)
    wall = time.perf_counter() - t0
    assert res.executed == campaign.n and (res.table["status"] == "ok").all()
    return wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=24, help="runs of the short campaigns (24)")
    ap.add_argument("--long-runs", type=int, default=8, help="runs of the long campaigns (8)")
    ap.add_argument("--repeat", type=int, default=2, help="best of this many rounds (2)")
    args = ap.parse_args()
    warnings.simplefilter("ignore", InertiaWarning)
    system = titopfmu.load(example_path("balloon"))
    tmp = Path(tempfile.mkdtemp(prefix="bench_campaign_"))
    clusters = {}
    for n in (1, 2):
        t0 = time.perf_counter()
        clusters[n] = LocalCluster(
            n_workers=n, threads_per_worker=1, dashboard_address=":0", silence_logs=logging.ERROR
        )
        Campaign(system, VARY, 2 * n, tmp / f"warm{n}", t_final=0.1, seed=0).run(
            scheduler=clusters[n].scheduler_address, batch_size=1, progress=False
        )
        dt = time.perf_counter() - t0
        print(f"LocalCluster of {n} worker(s): started and warmed in {dt:.1f} s")
    modes = {
        "bare loop": None,
        "serial": {"workers": 0},
        "1 worker": {"scheduler": clusters[1].scheduler_address},
        "2 workers": {"scheduler": clusters[2].scheduler_address},
    }
    counter = iter(range(10**6))
    try:
        for label, t_final, n in (
            ("short (1 s)", 1.0, args.runs),
            ("long (20 s)", 20.0, args.long_runs),
        ):
            # each mode timed on n and 2n runs, rounds interleaved: the difference is the
            # marginal cost of n runs, free of the fixed cost of a campaign
            best: dict[tuple[str, int], float] = {}
            for _ in range(args.repeat):
                for m, run in modes.items():
                    for k in (n, 2 * n):
                        c = Campaign(system, VARY, k, tmp / f"c{next(counter)}", t_final=t_final)
                        t = bare_loop(system, c) if run is None else timed(c, **run)
                        best[m, k] = min(best.get((m, k), np.inf), t)
            per_bare = (best["bare loop", 2 * n] - best["bare loop", n]) / n
            print(
                f"\n{label} balloon runs: campaigns of {n} and {2 * n} runs, best of {args.repeat}"
            )
            print(
                f"  {'':10s} {'runs/s':>8s} {'ms/run':>8s} {'fixed s':>8s} "
                f"{'overhead/run':>12s}   ({2 * n} runs, marginal cost per run, fixed cost)"
            )
            for m in modes:
                total = best[m, 2 * n]
                per = (best[m, 2 * n] - best[m, n]) / n
                fixed = total - 2 * n * per
                over = "" if m == "bare loop" else f"{100 * (per - per_bare) / per_bare:+11.1f}%"
                print(f"  {m:10s} {2 * n / total:8.2f} {1e3 * per:8.2f} {fixed:8.2f} {over:>12s}")
            one = best["1 worker", 2 * n] - best["1 worker", n]
            two = best["2 workers", 2 * n] - best["2 workers", n]
            print(f"  speed-up on 2 cores (marginal cost, 1 worker / 2 workers): {one / two:.2f}")
    finally:
        for c in clusters.values():
            c.close()


if __name__ == "__main__":
    main()
