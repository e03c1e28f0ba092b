"""Plots of simulation results (matplotlib, no screen needed)."""

from __future__ import annotations

import os

from .assembly.engine import SimulationResult


def plot_result(
    result: SimulationResult,
    path: str | os.PathLike,
    columns: list[str] | None = None,
    units: dict[str, str] | None = None,
    title: str = "",
    ncols: int = 3,
) -> None:
    """One subplot per column against time, written to ``path`` (PNG, PDF, SVG...)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = columns or result.columns
    units = units or {}
    nrows = -(-len(columns) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 2.6 * nrows), sharex=True)
    axes = list(axes.flat) if hasattr(axes, "flat") else [axes]
    t = result.time
    for ax, col in zip(axes, columns, strict=False):
        ax.plot(t, result[col], "k-", lw=1.0)
        ax.set_ylabel(f"{col} ({units[col]})" if col in units else col)
        ax.grid(True, lw=0.3)
    for ax in axes[len(columns) :]:
        ax.set_visible(False)
    for ax in axes[-ncols:]:
        ax.set_xlabel("time (s)")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    d = os.path.dirname(os.fspath(path))
    if d:
        os.makedirs(d, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
