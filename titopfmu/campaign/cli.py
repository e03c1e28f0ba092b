"""``titopfmu campaign MODEL --samples N --vary PARAM=DIST ... --out DIR``.

Wired into :mod:`titopfmu.cli` by :func:`add_campaign_parser` (its sub-parser sets ``func``).
Exit status: 0 when every sample has a record (failed runs included: they are in the table with
their errors), 1 when every run failed or Dask lost some runs, 2 on bad input (before any run),
130 when interrupted (the finished runs are kept: the same command resumes).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

from ..blocks.base import InertiaWarning, TitopError
from . import _signals
from .results import RESULTS


def _positive(value: str) -> float:
    v = float(value)
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return v


def _vary(text: str) -> tuple[str, str]:
    name, sep, dist = text.partition("=")
    if not sep or not name.strip() or not dist.strip():
        raise argparse.ArgumentTypeError(
            f"{text!r} must read PARAM=DISTRIBUTION, e.g. pend1.mass=normal(2,0.1)"
        )
    return name.strip(), dist.strip()


def add_campaign_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``campaign`` command to an argparse sub-parsers object."""
    p = subparsers.add_parser(
        "campaign",
        help="Monte-Carlo runs or a parameter sweep of a model, on Dask",
        description="Run a model many times with parameters drawn from distributions, on a "
        "Dask LocalCluster (one worker process per core) or any Dask scheduler, and write a "
        "Parquet table of the parameters and scalar outcomes (final values and extremes of the "
        "recorded columns), summary statistics and plots to the output directory. An "
        "interrupted campaign resumes with the same command; a failed run is recorded with its "
        "error. Needs the 'campaign' extra (dask[distributed], pyarrow, pandas).",
    )
    p.add_argument("model", metavar="MODEL", help="model file (.yaml/.json), .urdf or 'balloon'")
    p.add_argument(
        "--samples", type=int, default=None, help="number of runs (a grid: its size by default)"
    )
    p.add_argument(
        "--vary",
        action="append",
        type=_vary,
        default=[],
        metavar="PARAM=DIST",
        help="a parameter and its distribution, repeatable: normal(mean,std), "
        "uniform(low,high), truncnormal(mean,std,low,high), lognormal(mu,sigma), values(a,b,...)"
        ", linspace(low,high,n); PARAM is "
        "block.key, block.key[i], block.key[i,j] or block.children.PORT[i] (1-based; see "
        "--list-parameters), e.g. pend1.mass=normal(2,0.1)",
    )
    p.add_argument("--out", default=None, help="output directory (new, empty, or this campaign's)")
    p.add_argument(
        "--method",
        choices=("random", "lhs", "sobol", "grid"),
        default="random",
        help="sampling: independent random draws (default), Latin hypercube, a scrambled "
        "Sobol' sequence (balanced for a power of 2 samples), or grid: every combination of "
        "the values(...)/linspace(...) of the parameters (a sweep)",
    )
    p.add_argument(
        "--seed", type=int, default=None, help="seed of the samples (default: drawn, then kept)"
    )
    p.add_argument(
        "--scheduler", default=None, help="address of a running Dask scheduler (tcp://host:8786)"
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes of the LocalCluster (default one per core; 0: serially in "
        "this process, without Dask)",
    )
    p.add_argument("--t-final", type=_positive, default=None, help="simulated span of a run (s)")
    p.add_argument("--output-interval", type=_positive, default=None, help="sampling step (s)")
    p.add_argument(
        "--outcome",
        action="append",
        default=None,
        metavar="NAME",
        help="a recorded column of the model's outputs, or a signal block.signal[i], to reduce "
        "(repeatable; default every output of the model)",
    )
    p.add_argument(
        "--reduce",
        default="final,min,max",
        help="reductions of each outcome, comma-separated among final, min, max, absmax, mean, "
        "rms (default final,min,max)",
    )
    p.add_argument(
        "--trajectories", action="store_true", help="keep every run's trajectory (Parquet)"
    )
    p.add_argument(
        "--engine",
        choices=("inprocess", "cosim"),
        default="inprocess",
        help="inprocess: the engine (default); cosim: the system's FMUs co-simulated",
    )
    p.add_argument(
        "--step",
        type=_positive,
        default=1e-3,
        help="communication step of --engine cosim (s, dividing the output interval; "
        "default 1e-3)",
    )
    p.add_argument(
        "--fmus",
        default=None,
        metavar="DIR",
        help="FMUs of --engine cosim (default: built once into the per-user cache)",
    )
    p.add_argument(
        "--timeout",
        type=_positive,
        default=None,
        help="seconds to wait for --scheduler (default 5)",
    )
    p.add_argument(
        "--run-timeout",
        type=_positive,
        default=None,
        metavar="S",
        help="wall-clock seconds each run may take: a run past it is stopped and recorded as "
        "failed, the campaign goes on; each run then goes to a helper process, ended if the run "
        "is still going max(1, S/10) s later (default: no limit)",
    )
    p.add_argument("--no-plots", action="store_true", help="do not write the plots")
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar on stderr (default: on when stderr is a terminal)",
    )
    p.add_argument(
        "--list-parameters",
        action="store_true",
        help="print the names of the model's parameters and exit",
    )
    p.add_argument("--floating-base", action="store_true", help="URDF models: a free root")
    p.add_argument("--quiet", action="store_true", help="do not print the summary")
    p.set_defaults(func=campaign_command)
    return p


def _err(message: str, code: int = 2) -> int:
    print(f"titopfmu: error: {message}", file=sys.stderr)
    return code


def campaign_command(args) -> int:
    """``titopfmu campaign``: check everything, run, write the results. Ctrl-C (SIGINT) or
    SIGTERM: the cluster closed, the runs finished so far written (table, summary, plots), one
    line on stderr, exit status 130."""
    with _signals.interrupts():
        try:
            return _campaign(args)
        except KeyboardInterrupt as exc:
            return _interrupted(exc, args)


def _interrupted(exc: KeyboardInterrupt, args) -> int:
    """After a Ctrl-C or SIGTERM: the plots of the runs finished so far (the table and the
    summary are written by the campaign), one line on stderr, 130. Further signals ignored."""
    from .campaign import CampaignInterrupted

    with _signals.held():
        ours = isinstance(exc, CampaignInterrupted)  # else: before the campaign's runs
        result = exc.result if ours else None
        what = "before any run"
        if result is not None:
            if not args.no_plots:
                try:
                    result.plot()
                except Exception:  # plots are a bonus here: the table is what resumes
                    pass
            what = (
                f"after {exc.done} of {exc.total} runs; results so far in "
                f"{Path(args.out) / RESULTS}; run the same command to resume"
            )
        elif ours and exc.error:
            what = (
                f"after some runs; their table could not be written ({exc.error}); run the same "
                "command to resume"
            )
        print(f"titopfmu: interrupted ({_signals.name(exc)}) {what}", file=sys.stderr, flush=True)
    return 130


def _campaign(args) -> int:
    from ..sources import load_model
    from . import CONNECT_TIMEOUT, Campaign

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InertiaWarning)
            system = load_model(args.model, args.floating_base)
    except (TitopError, FileNotFoundError, ImportError, OSError) as exc:
        return _err(str(exc))
    if args.list_parameters:
        from ..parameters import parameter_names

        print("\n".join(parameter_names(system)))
        return 0
    needed = [("--out", args.out)] + (
        [] if args.method == "grid" else [("--samples", args.samples)]
    )
    missing = [o for o, v in needed if v is None]
    if not args.vary:
        missing.append("--vary")
    if missing:
        return _err(f"campaign needs {', '.join(missing)}")
    names = [n for n, _ in args.vary]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        return _err(f"parameter(s) varied twice: {dup}")
    if args.scheduler is not None and args.workers is not None:
        return _err("give either --scheduler or --workers")
    try:
        campaign = Campaign(
            system,
            dict(args.vary),
            args.samples,
            args.out,
            method=args.method,
            seed=args.seed,
            t_final=args.t_final,
            output_interval=args.output_interval,
            outcomes=args.outcome,
            reductions=[r.strip() for r in args.reduce.split(",") if r.strip()],
            trajectories=args.trajectories,
            backend=args.engine,
            step=args.step,
            fmus=args.fmus,
            timeout=args.run_timeout,
        )
        if args.method == "sobol" and campaign.n & (campaign.n - 1):
            print(
                f"titopfmu: note: {campaign.n} is not a power of 2: the Sobol' points lose "
                "their balance properties",
                file=sys.stderr,
            )
        t0 = time.perf_counter()
        result = campaign.run(
            args.scheduler,
            args.workers,
            progress=args.progress,
            connect_timeout=args.timeout or CONNECT_TIMEOUT,
        )
    except TitopError as exc:  # CampaignError, ParameterNameError, DistributionError...
        return _err(str(exc))
    wall = time.perf_counter() - t0
    with _signals.held():  # every run is recorded and the table written: finish the report
        return _report(args, campaign, result, wall)


def _report(args, campaign, result, wall: float) -> int:
    plots = [] if args.no_plots else result.plot()
    table = result.table
    n_ok = int((table["status"] == "ok").sum())
    n_failed = int((table["status"] == "failed").sum())
    n_lost = int((table["status"] == "lost").sum())
    if not args.quiet:
        import pandas as pd

        where = args.scheduler or (
            "serial" if args.workers == 0 else f"LocalCluster, {args.workers or 'one per core'}"
        )
        print(
            f"{campaign.n} runs ({where}): {result.executed} run in {wall:.1f} s, "
            f"{result.resumed} already done; {n_ok} ok, {n_failed} failed"
            + (f", {n_lost} lost with their workers" if n_lost else "")
            + f"; seed {campaign.seed}"
        )
        with pd.option_context("display.width", 120, "display.max_columns", 12):
            s = result.summary()
            if not s.empty:
                print(s[["mean", "std", "min", "5%", "50%", "95%", "max"]].to_string())
        for _, row in result.failed.head(5).iterrows():
            print(f"run {row['run']} {row['status']}: {row['error']}", file=sys.stderr)
        print(
            f"wrote {args.out}/results.parquet, summary.csv"
            + (f" and {len(plots)} plots in {args.out}/plots" if plots else "")
        )
    return 1 if (n_ok == 0 or n_lost) else 0


__all__ = ["add_campaign_parser", "campaign_command"]
