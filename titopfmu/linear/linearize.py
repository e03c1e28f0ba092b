"""Linearisation of a system at an operating point: ``linearize(system, t, x, u, inputs, outputs)``.

The state-space model

    δẋ = A δx + B δu,    δy = C δx + D δu

holds about the operating point (t, x0, u0) in the minimal coordinates of
:mod:`titopfmu.linear.coordinates` (every quaternion through a local rotation vector δθ,
q = q0 ⊗ exp(δθ/2); every other state as it is). Away from an equilibrium the reduced state
derivative at x0, ``LinearModel.xdot0`` (the drift), is not zero: the model is then the
first-order Taylor expansion ``δẋ = xdot0 + A δx + B δu`` in the chart fixed at x0.

Where each matrix comes from:

* **A, B** — exact: the C core's Jacobians ∂ẋ/∂x, ∂ẋ/∂inputs (complex step, the block equations
  compiled on complex numbers) mapped through the chart, ``A = T_out (∂ẋ/∂x T_in + ∂ẋ/∂w
  ∂w/∂δx)``, ``B = T_out ∂ẋ/∂w`` (w the core's input vector). The term ∂w/∂δx is the dependence of
  the core's inputs on the state through signal blocks the core does not run (feedback laws in
  Python blocks, e.g. a ``Function`` of a joint motion): central differences of the signal pass
  (exact for affine blocks up to rounding); it is zero when every input comes from a constant
  signal block.
* **C, D** — exact (complex step through ``NativeTree.zevaluate``, one full evaluation per
  reduced state and input) for the signals the core computes: ``block.state.*``, a body's
  ``position``, ``euler``, ``twist``, ``acc``, a forward joint's ``joint.m``, an inverse joint's
  ``joint.tau`` and the wrench ``W`` of a ground or imposed-motion body, read from the complex
  evaluation by the mapping the engine samples them with (``NativeTree.reader``). Every other
  recordable signal (energies, momenta, port motion vectors and wrenches, signal-block outputs):
  central differences of the engine's object path (step 1e-6 relative; error ~1e-9 relative).
  ``LinearModel.output_methods`` says which.

Inputs are additive perturbations of core inputs (an "input perturbation" analysis point): a
forward joint's effort ``block.joint.tau`` (unless a ``JointSpringDamper`` law drives it inside
the core), an inverse joint's motion ``block.joint.m``, an imposed-motion body's ``block.m``, an
external wrench ``block.name`` (6 components, or ``block.name[i]`` for component i, 1-based).
``u`` (a mapping name -> value, or values in the order of the inputs) replaces the values of
those inputs at the operating point; they are then held (their sources cut) in A too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..assembly.engine import Engine
from ..assembly.system import System, split_port
from ..blocks.base import TitopError
from ..blocks.bodies import BodyBlock, Ground
from .coordinates import Chart
from .model import LinearModel
from .units import split_index, units_of

#: relative step of the central differences (feedback through signal blocks, fallback outputs)
CENTRAL_STEP = 1e-6


class LinearizationError(TitopError):
    """A linearisation request that cannot be met (unknown name, wrong size, no core)."""


def as_engine(system_or_engine) -> Engine:
    """An :class:`Engine` whose system the core runs (exact derivatives need it)."""
    if isinstance(system_or_engine, Engine):
        engine = system_or_engine
    elif isinstance(system_or_engine, System):
        engine = Engine(system_or_engine)
    else:
        raise LinearizationError(
            f"expected a System or an Engine, got {type(system_or_engine).__name__}"
        )
    if engine.native is None:
        raise LinearizationError(
            f"no exact derivatives for this system: {engine.native_reason or 'no body'}"
        )
    return engine


def core_inputs(engine: Engine) -> dict[str, tuple[int, int]]:
    """Name -> (offset in the core's input vector, width) of every core input."""
    nt = engine.native
    names = [b.name for b in engine.tree_blocks]
    table = {f"{names[i]}.{port}": (off, w) for i, port, w, off in nt.inputs}
    table.update({f"{names[i]}.{e}": (off, 6) for i, e, off in nt.externals})
    return table


def resolve_inputs(engine: Engine, names: Sequence[str]) -> list[tuple[str, int]]:
    """(column name, offset in the core's input vector) for each component of ``names``."""
    table = core_inputs(engine)
    cols: list[tuple[str, int]] = []
    for name in names:
        base, idx = split_index(name)
        if base not in table:
            raise LinearizationError(
                f"unknown input {name!r}: the inputs of this system are {sorted(table)} "
                "(a joint effort driven by a JointSpringDamper law inside the core is not one)"
            )
        off, w = table[base]
        if idx is not None:
            if not 0 <= idx < w:
                raise LinearizationError(f"input {name!r}: index out of 1..{w}")
            cols.append((name, off + idx))
        else:
            cols += [(base if w == 1 else f"{base}[{k + 1}]", off + k) for k in range(w)]
    return cols


def check_state(engine: Engine, x) -> np.ndarray:
    x = np.array(engine.initial_state() if x is None else x, dtype=float)
    if x.shape != (engine.n_states,):
        raise LinearizationError(
            f"the state must have {engine.n_states} components, got shape {x.shape}"
        )
    if not np.all(np.isfinite(x)):
        raise LinearizationError("the state is not finite")
    return x


def operating_inputs(engine: Engine, t: float, x: np.ndarray, overrides: Mapping) -> np.ndarray:
    """The core's input vector at (t, x) with ``overrides`` (offset -> value) applied."""
    w = np.array(engine._native_inputs(t, x), dtype=float)
    for off, v in overrides.items():
        w[off] = v
    return w


def input_overrides(engine: Engine, cols, u) -> dict[int, float]:
    """``u`` (None, a mapping name -> value, or values in column order) as offset -> value."""
    if u is None:
        return {}
    if isinstance(u, Mapping):
        out: dict[int, float] = {}
        for name, v in u.items():
            sub = resolve_inputs(engine, [name])
            v = np.atleast_1d(np.asarray(v, dtype=float))
            if v.size != len(sub):
                raise LinearizationError(f"u[{name!r}] must have {len(sub)} components")
            out.update({off: float(val) for (_, off), val in zip(sub, v, strict=True)})
        return out
    v = np.atleast_1d(np.asarray(u, dtype=float))
    if v.size != len(cols):
        raise LinearizationError(f"u must have {len(cols)} components (one per input column)")
    return {off: float(val) for (_, off), val in zip(cols, v, strict=True)}


def input_feedback(engine: Engine, chart: Chart, t: float, x0: np.ndarray, held) -> np.ndarray:
    """∂w/∂δx (nin × nr): the core inputs' dependence on the state through signal blocks the
    core does not run, by central differences; rows of held inputs are zero."""
    nin = engine.native.nin
    dW = np.zeros((nin, chart.nr))
    if engine._fixed_inputs is not None:
        return dW
    x0f = chart.retract(x0, np.zeros(chart.nr))
    full_of = dict(chart_full_index(chart))
    for k in range(chart.nr):
        i = full_of[k]
        h = CENTRAL_STEP * (1.0 if i is None else max(1.0, abs(x0[i])))
        e = np.zeros(chart.nr)
        e[k] = h
        wp = engine._native_inputs(t, chart.retract(x0f, e)).copy()
        wm = engine._native_inputs(t, chart.retract(x0f, -e)).copy()
        dW[:, k] = (wp - wm) / (2 * h)
    for off in held:
        dW[off] = 0.0
    return dW


def chart_full_index(chart: Chart):
    """(reduced index, full index or None for a rotation-vector component)."""
    for i, r, q in chart._pairs():
        if q:
            for j in range(3):
                yield r + j, None
        else:
            yield r, i


# -- outputs ----------------------------------------------------------------------------------


def exact_output(engine: Engine, base: str):
    """For a signal the core computes (:meth:`~titopfmu.core.model.NativeTree.reader`, the
    mapping the engine's output sampling uses too): ``(value(data, x), derivative(zdata, zx))``
    with data a full evaluation's buffer and (zdata, zx) a complex-step one
    (``NativeTree.zevaluate``); else None."""
    from ..core.model import COMPLEX_STEP

    nt = engine.native
    bname, rest = split_port(base)
    b = engine.system.blocks.get(bname)
    if b is None:
        return None
    state = None
    if rest.startswith("state.") and rest[6:] in b.state_names:
        state = engine.plan.state_slices[bname].start + b.state_names.index(rest[6:])
    i = engine.tree_index.get(bname)
    if state is None and (i is None or not isinstance(b, (BodyBlock, Ground))):
        return None
    r = nt.reader(-1 if i is None else i, rest, state)
    if r is None:
        return None
    if rest != "euler":
        return r, (lambda zd, zx: np.imag(r(zd, zx)) / COMPLEX_STEP)

    def euler_derivative(zd, zx):
        z = r(zd, zx)  # [φ, θ, ψ]: not differentiable where cos θ = 0 (φ, ψ undefined there)
        if abs(np.cos(z[1].real)) < 1e-9:
            raise LinearizationError(
                f"output {base!r}: Euler angles at gimbal lock (cos θ = 0) are not "
                "differentiable; use the position or twist outputs, or another operating point"
            )
        return np.imag(z) / COMPLEX_STEP

    return r, euler_derivative


def object_signal(engine: Engine, t: float, x: np.ndarray, overrides: Mapping, name: str):
    """Signal ``name`` at (t, x) by the object path, with the signal sources in ``overrides``
    ((block, port) -> value) held at the given values."""
    saved_const, saved_maps = engine._constant_signals, engine._map_steps
    run = engine._run_signal_block

    def patched(b, t_, sig):
        run(b, t_, sig)
        for key, v in overrides.items():
            if key[0] == b.name:
                sig[key] = v

    try:
        engine._constant_signals = {**saved_const, **overrides}
        engine._map_steps = [(b, n, engine.inputs[n]) for b, n, _ in saved_maps]
        engine._run_signal_block = patched
        ev = engine.evaluate(t, x)
        return np.atleast_1d(np.array(engine.signal(ev, name), dtype=float))
    finally:
        engine._constant_signals, engine._map_steps = saved_const, saved_maps
        del engine._run_signal_block


def resolve_outputs(engine: Engine, names: Sequence[str]):
    """[(base signal, component indices or None)] with a clear error for an unknown name."""
    known = set(engine.signal_names())
    out = []
    for name in names:
        base, idx = split_index(name)
        if base not in known:
            raise LinearizationError(
                f"unknown output {name!r}: see Engine.signal_names() for the recordable signals"
            )
        out.append((name, base, idx))
    return out


def linearize(
    system_or_engine,
    t: float = 0.0,
    x=None,
    u=None,
    inputs: Sequence[str] = (),
    outputs: Sequence[str] = (),
) -> LinearModel:
    """The linear model (A, B, C, D) of a system at (t, x, u); see the module docstring.

    ``x`` the full state (default: the initial state; quaternions are normalised), ``inputs``
    names of core inputs, ``outputs`` names of recordable signals (``block.signal`` or
    ``block.signal[i]``, 1-based, as in ``Engine.simulate``'s ``record``).
    """
    engine = as_engine(system_or_engine)
    t = float(t)
    chart = Chart.of(engine)
    x0 = chart.normalise(check_state(engine, x))
    cols = resolve_inputs(engine, list(inputs))
    overrides = input_overrides(engine, cols, u)
    w0 = operating_inputs(engine, t, x0, overrides)
    nt = engine.native
    Tin, Tout = chart.t_in(x0), chart.t_out(x0)
    dW = input_feedback(engine, chart, t, x0, overrides)
    jx, jin = nt.jacobian(t, x0, w0)
    offs = [off for _, off in cols]
    A = Tout @ (jx @ Tin + jin @ dW)
    B = Tout @ jin[:, offs]
    data = nt.new_data()
    f0 = np.empty(engine.n_states)
    r = nt.derivative(t, x0, w0, f0, data, full=True)
    if r:
        raise LinearizationError(f"the core failed at the operating point (status {r})")
    xdot0 = Tout @ f0

    outs = resolve_outputs(engine, list(outputs))
    rows_C, rows_D, y0, onames, methods = [], [], [], [], []
    directions = None
    src_of = {o: (s, o, w) for s, o, w in engine._input_src}
    held_src = _held_sources(engine, overrides, w0, src_of)
    for name, base, idx in outs:
        ex = exact_output(engine, base)
        if ex is not None:
            if directions is None:
                directions = []
                for k in range(chart.nr):
                    directions.append((Tin[:, k], dW[:, k]))
                for off in offs:
                    e = np.zeros(nt.nin)
                    e[off] = 1.0
                    directions.append((np.zeros(engine.n_states), e))
                derivs = [nt.zevaluate(t, x0, w0, vx, vin) for vx, vin in directions]
            value, deriv = ex
            y = np.atleast_1d(value(data, x0))
            cols_all = np.column_stack([np.atleast_1d(deriv(zd, zx)) for zd, zx in derivs])
            method = "exact"
        else:
            y, cols_all = _central_output(engine, chart, t, x0, base, held_src, offs, src_of, w0)
            method = "central"
        sel = range(y.size) if idx is None else [idx]
        if idx is not None and not 0 <= idx < y.size:
            raise LinearizationError(f"output {name!r}: index out of 1..{y.size}")
        for j in sel:
            onames.append(name if idx is not None or y.size == 1 else f"{base}[{j + 1}]")
            y0.append(y[j])
            rows_C.append(cols_all[j, : chart.nr])
            rows_D.append(cols_all[j, chart.nr :])
            methods.append(method)
    ny = len(onames)

    units = {n: units_of(engine.system, n, 1)[0]
             for n in [*chart.reduced_names, *(c for c, _ in cols), *onames]}  # fmt: skip
    return LinearModel(
        A=A,
        B=B,
        C=np.array(rows_C).reshape(ny, chart.nr),
        D=np.array(rows_D).reshape(ny, len(cols)),
        state_names=list(chart.reduced_names),
        input_names=[c for c, _ in cols],
        output_names=onames,
        t=t,
        x0=x0,
        u0=np.array([w0[off] for off in offs]),
        y0=np.array(y0),
        xdot0=xdot0,
        output_methods=methods,
        position_level=list(chart.position_level),
        units={n: u for n, u in units.items() if u},
    )


def _held_sources(engine: Engine, overrides, w0, src_of) -> dict:
    """Signal sources held at the operating point's overridden values: (block, port) -> value."""
    held: dict = {}
    for off in overrides:
        start = max(s for s in src_of if s <= off)
        src, _, w = src_of[start]
        held[src] = w0[start : start + w].copy()
    return held


def _central_output(engine, chart, t, x0, base, held, offs, src_of, w0):
    """Value and [∂y/∂δx, ∂y/∂u] of a signal by central differences of the object path."""
    y0 = object_signal(engine, t, x0, held, base)
    cols = []
    full_of = dict(chart_full_index(chart))
    for k in range(chart.nr):
        i = full_of[k]
        h = CENTRAL_STEP * (1.0 if i is None else max(1.0, abs(x0[i])))
        e = np.zeros(chart.nr)
        e[k] = h
        yp = object_signal(engine, t, chart.retract(x0, e), held, base)
        ym = object_signal(engine, t, chart.retract(x0, -e), held, base)
        cols.append((yp - ym) / (2 * h))
    starts = sorted(src_of)
    for off in offs:
        start = max(s for s in starts if s <= off)
        src, _, w = src_of[start]
        h = CENTRAL_STEP * max(1.0, abs(w0[off]))
        vals = []
        for sgn in (1.0, -1.0):
            v = w0[start : start + w].copy()
            v[off - start] += sgn * h
            vals.append(object_signal(engine, t, x0, {**held, src: v}, base))
        cols.append((vals[0] - vals[1]) / (2 * h))
    return y0, np.column_stack(cols) if cols else np.zeros((y0.size, 0))
