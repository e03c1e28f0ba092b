"""Families of linear models along a scheduling parameter (an LPV grid), and their plots.

``linearize_family(build, values, ...)`` linearises once per value of the parameter, where the
parameter enters either through the system (``build(value)`` returns the System or Engine: a
mass, a length, any block parameter) or through the operating point (``state="pend.state.q"``
sets that state component to the value: a joint angle, a spin rate), or both (``x`` a function of
(engine, value) giving the operating state, e.g. a trim). Plots write PNG files (matplotlib, Agg).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..assembly.engine import Engine
from ..assembly.system import System
from .linearize import LinearizationError, as_engine, check_state, linearize
from .model import LinearModel


def linearize_family(
    build: Callable | System | Engine,
    values: Sequence[float],
    *,
    state: str | None = None,
    t: float = 0.0,
    x=None,
    u=None,
    inputs: Sequence[str] = (),
    outputs: Sequence[str] = (),
) -> list[LinearModel]:
    """One :class:`LinearModel` per value of the scheduling parameter (in ``values`` order).

    ``build``: a function value -> System/Engine, or one System/Engine (the parameter then is the
    operating point, ``state`` or ``x``). ``state``: a full state name ``block.state.s`` set to
    each value. ``x``: the operating state (None: the initial state) or a function (engine,
    value) -> state. Each model gets ``parameter`` = its value (an attribute).
    """
    if not callable(build) and not isinstance(build, (System, Engine)):
        raise LinearizationError(
            f"build must be a function of the parameter or a System, got {type(build).__name__}"
        )
    fixed = None if callable(build) and not isinstance(build, (System, Engine)) else build
    if fixed is not None and state is None and not callable(x):
        raise LinearizationError(
            "a single system needs a scheduling parameter: state='block.state.s' or x=f(engine, v)"
        )
    shared = as_engine(fixed) if fixed is not None else None
    out = []
    for v in values:
        engine = shared if shared is not None else as_engine(build(v))
        x_op = x(engine, v) if callable(x) else x
        x_op = check_state(engine, x_op)
        if state is not None:
            b, _, s = state.partition(".state.")
            blk = engine.system.blocks.get(b)
            if blk is None or s not in blk.state_names:
                raise LinearizationError(
                    f"scheduling parameter {state!r} is not a state of the system "
                    "(use block.state.name; a block parameter goes through build(value))"
                )
            x_op[engine.plan.state_slices[b].start + blk.state_names.index(s)] = v
        m = linearize(engine, t, x_op, u, inputs=inputs, outputs=outputs)
        m.parameter = float(v)
        out.append(m)
    return out


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_poles(models: Sequence[LinearModel], path, title: str = "poles") -> Path:
    """Pole map (eigenvalues of A) of each model, coloured along the family; a PNG file."""
    plt = _figure()
    fig, ax = plt.subplots(figsize=(6, 5))
    cmap = plt.get_cmap("viridis")
    n = len(models)
    for k, m in enumerate(models):
        lam = np.linalg.eigvals(m.A)
        label = f"{getattr(m, 'parameter', k):.4g}" if n <= 8 else None
        ax.plot(lam.real, lam.imag, "x", color=cmap(k / max(1, n - 1)), label=label)
    ax.axvline(0.0, color="k", lw=0.5)
    ax.set_xlabel("Re λ (1/s)")
    ax.set_ylabel("Im λ (rad/s)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if n <= 8:
        ax.legend(title="parameter", fontsize=8)
    path = Path(path)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_frequency_response(
    models: Sequence[LinearModel],
    path,
    input: str | int = 0,
    output: str | int = 0,
    omega: np.ndarray | None = None,
) -> Path:
    """Magnitude |H(jω)| (dB) from one input to one output of each model; a PNG file."""
    plt = _figure()
    if omega is None:
        omega = np.logspace(-2, 3, 400)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    cmap = plt.get_cmap("viridis")
    n = len(models)
    for k, m in enumerate(models):
        i = m.input_names.index(input) if isinstance(input, str) else input
        o = m.output_names.index(output) if isinstance(output, str) else output
        H = m.frequency_response(omega)[:, o, i]
        label = f"{getattr(m, 'parameter', k):.4g}" if n <= 8 else None
        mag = 20 * np.log10(np.maximum(np.abs(H), 1e-300))
        ax.semilogx(omega, mag, color=cmap(k / max(1, n - 1)), label=label)
    m0 = models[0]
    iname = m0.input_names[input] if isinstance(input, int) else input
    oname = m0.output_names[output] if isinstance(output, int) else output
    ax.set_xlabel("ω (rad/s)")
    ax.set_ylabel("|H| (dB)")
    ax.set_title(f"{iname} → {oname}")
    ax.grid(True, which="both", alpha=0.3)
    if n <= 8:
        ax.legend(title="parameter", fontsize=8)
    path = Path(path)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
