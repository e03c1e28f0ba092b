"""A campaign's results: the consolidated table (Parquet), summary statistics and plots.

The table has one row per run, in run order: ``run``, the parameters (by name, SI units), the
outcomes (``column.reduction`` and the custom ones), then ``status`` (``ok``, ``failed``, or
``lost`` when Dask gave up on the run's workers), ``error`` (the exception's type and message),
``t_end`` (the last time the run reached, s), ``wall`` (its duration, s) and ``worker``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import store
from .runs import META

RESULTS = "results.parquet"
SUMMARY = "summary.csv"


def consolidate(directory: Path, parameters: list[str]):
    """Write ``results.parquet`` and ``summary.csv`` from the run log; the table (pandas)."""
    import pandas as pd

    done = store.read_log(directory)
    records = [done[i] for i in sorted(done)]
    table = pd.DataFrame.from_records(records)
    if table.empty:
        table = pd.DataFrame(columns=["run", *parameters, *META[1:]])
    outcomes = [c for c in table.columns if c not in META and c not in parameters]
    table = table[["run", *parameters, *outcomes, *META[1:]]]
    for c in outcomes:
        table[c] = table[c].astype(float)
    _replace(directory / RESULTS, lambda p: table.to_parquet(p, index=False))
    _replace(directory / SUMMARY, summary(table, parameters).to_csv)
    return table


def _replace(path: Path, write) -> None:
    """``write(temporary)``, then the temporary renamed ``path``: a file whole or not at all
    (an interrupted write leaves the previous one)."""
    import os

    tmp = path.with_name(path.name + ".tmp")
    write(tmp)
    os.replace(tmp, path)


#: Quantiles of :func:`summary` (as fractions).
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def summary(table, parameters: list[str]):
    """Statistics of every parameter and outcome over the successful runs: count, mean, std
    (sample, ddof 1), min, the 5/25/50/75/95 % quantiles (linear interpolation), max, and the
    number of runs that did not succeed (``failed``). One row per column (pandas)."""
    import pandas as pd

    ok = table[table["status"] == "ok"] if "status" in table else table
    cols = [c for c in table.columns if c not in META]
    n_bad = int((table["status"] != "ok").sum()) if "status" in table else 0
    names = ["count", "mean", "std", "min", *(f"{100 * q:g}%" for q in QUANTILES), "max"]
    rows = []
    for c in cols:
        v = ok[c].to_numpy(dtype=float)
        v = v[np.isfinite(v)]
        if v.size == 0:
            rows.append([0.0] + [np.nan] * (len(names) - 1))
            continue
        q = np.quantile(v, QUANTILES)
        std = float(np.std(v, ddof=1)) if v.size > 1 else np.nan
        rows.append([float(v.size), float(np.mean(v)), std, float(v.min()), *q, float(v.max())])
    out = pd.DataFrame(rows, index=cols, columns=names)
    out["failed"] = n_bad
    return out


class CampaignResult:
    """The results in a campaign directory: ``table`` (pandas), ``parameters`` and ``outcomes``
    (column names), ``failed`` (the rows of failed runs); ``resumed`` runs were found finished in
    the directory and ``executed`` were run by the call that returned this."""

    def __init__(self, directory, resumed: int = 0, executed: int = 0) -> None:
        import pandas as pd

        self.directory = Path(directory)
        manifest = store.read_manifest(self.directory)
        if manifest is None:
            raise store.CampaignError(f"'{directory}' holds no campaign")
        self.spec = manifest["spec"]
        self.parameters: list[str] = list(self.spec["vary"])
        self.table = pd.read_parquet(self.directory / RESULTS)
        self.outcomes: list[str] = [
            c for c in self.table.columns if c not in META and c not in self.parameters
        ]
        self.resumed, self.executed = resumed, executed

    @property
    def failed(self):
        return self.table[self.table["status"] != "ok"]

    def summary(self):
        """Summary statistics (see :func:`summary`)."""
        return summary(self.table, self.parameters)

    def trajectory(self, run: int):
        """The trajectory of run ``run`` (pandas: ``time`` in s, then the recorded columns), when
        the campaign kept trajectories."""
        import pandas as pd

        p = store.trajectory_path(self.directory, run)
        if not p.exists():
            raise store.CampaignError(
                f"no trajectory of run {run} in '{self.directory}' (trajectories are kept when "
                "the campaign is run with trajectories=True / --trajectories)"
            )
        return pd.read_parquet(p)

    def plot(self, folder=None, outcomes=None, max_outcomes: int = 9) -> list[Path]:
        """Two PNG files in ``folder`` (default ``DIR/plots``), over the successful runs:
        ``histograms.png``, one histogram per outcome, and ``scatter.png``, each outcome (a row)
        against each parameter (a column). ``outcomes``: which (default: the first
        ``max_outcomes``, final values first)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        folder = Path(folder) if folder is not None else self.directory / "plots"
        folder.mkdir(parents=True, exist_ok=True)
        ok = self.table[self.table["status"] == "ok"]
        if outcomes is None:
            outcomes = sorted(self.outcomes, key=lambda o: not o.endswith(".final"))
            outcomes = outcomes[:max_outcomes]
        outcomes = list(outcomes)
        unknown = [o for o in outcomes if o not in self.table.columns]
        if unknown:
            raise store.CampaignError(f"no outcome(s) {unknown}; outcomes: {self.outcomes}")
        if not outcomes:
            return []
        n = len(outcomes)
        ncol = min(4, n)
        nrow = -(-n // ncol)
        fig, axes = plt.subplots(nrow, ncol, figsize=(3.2 * ncol, 2.6 * nrow), squeeze=False)
        for ax, o in zip(axes.flat, outcomes, strict=False):
            v = ok[o].to_numpy(dtype=float)
            v = v[np.isfinite(v)]
            ax.hist(v, bins=max(5, min(50, int(np.sqrt(max(1, v.size))) + 1)))
            ax.set_title(o, fontsize=9)
        for ax in list(axes.flat)[n:]:
            ax.set_visible(False)
        fig.suptitle(f"{len(ok)} successful runs of {len(self.table)}")
        fig.tight_layout()
        written = [folder / "histograms.png"]
        fig.savefig(written[0], dpi=80)
        plt.close(fig)
        m = len(self.parameters)
        fig, axes = plt.subplots(n, m, figsize=(2.8 * m + 0.6, 2.3 * n), squeeze=False)
        for r, o in enumerate(outcomes):
            y = ok[o].to_numpy(float)
            for c, p in enumerate(self.parameters):
                ax = axes[r][c]
                ax.plot(ok[p].to_numpy(float), y, ".", ms=3)
                if r == n - 1:
                    ax.set_xlabel(p, fontsize=9)
                if c == 0:
                    ax.set_ylabel(o, fontsize=9)
        fig.tight_layout()
        written.append(folder / "scatter.png")
        fig.savefig(written[1], dpi=80)
        plt.close(fig)
        return written


__all__ = ["RESULTS", "SUMMARY", "CampaignResult", "consolidate", "summary"]
