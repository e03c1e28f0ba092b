"""Trim: an equilibrium or a steady motion, solved for the free states and inputs.

Unknowns: the reduced states (:mod:`titopfmu.linear.coordinates`) not in ``fixed_states`` (a
quaternion through its rotation vector from x0, x = x0 ⊕ δ) and the ``free_inputs``. Equations:
the reduced state derivatives (``T_out(x) ẋ``; a quaternion's row is the body-frame angular
velocity ω) of the states the target selects:

* ``"equilibrium"``: every state derivative is zero;
* ``"steady"``: the derivatives of the rates only (twists, joint rates): the configuration
  (positions, joint angles, attitudes) may move at constant rates, e.g. a constant spin;
* a list of reduced state names: those derivatives.

Solved by ``scipy.optimize.least_squares`` (trust region) with the exact Jacobian of the core
(complex step), mapped through the chart (∂(x0 ⊕ δ)/∂δ = Q(q) J_r(δθ) on an attitude); the
derivative of the row map T_out(x) itself is left out: it multiplies ẋ, so it vanishes at a
solution of the attitude rows and is zero on the other rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import least_squares

from ..blocks.base import TitopError
from .coordinates import QUATERNION, ROTATION, Chart
from .linearize import (
    as_engine,
    check_state,
    input_feedback,
    input_overrides,
    operating_inputs,
    resolve_inputs,
)


class TrimError(TitopError):
    """No trim point: ``residual`` = {equation name: value} of the equations not met."""

    def __init__(self, message: str, residual: Mapping | None = None) -> None:
        self.residual = dict(residual or {})
        super().__init__(message)


@dataclass
class TrimResult:
    """A trim point: full state ``x``, values of the free and fixed inputs ``u`` (name ->
    value, usable as ``linearize(..., u=result.u)``), the largest equation residual, the
    residual of every equation by name, and the number of evaluations."""

    x: np.ndarray
    u: dict
    residual: float
    residuals: dict = field(default_factory=dict)
    nfev: int = 0
    t: float = 0.0


def _reduced_indices(chart: Chart, names: Sequence[str], what: str) -> list[int]:
    """Reduced indices of state names: ``block.state.s`` (a quaternion component selects its 3
    rotation components), a reduced ``block.state.rx``, or a block name (all its states)."""
    out: list[int] = []
    for name in names:
        if name in chart.reduced_names:
            out.append(chart.reduced_names.index(name))
            continue
        b, _, s = name.partition(".state.")
        if s in QUATERNION and f"{b}.state.{ROTATION[0]}" in chart.reduced_names:
            k = chart.reduced_names.index(f"{b}.state.{ROTATION[0]}")
            out += [k, k + 1, k + 2]
            continue
        ks = [k for k, blk in enumerate(chart.reduced_blocks) if blk == name]
        if not ks:
            raise TrimError(
                f"unknown {what} {name!r}: states are {chart.reduced_names} (or a block name)"
            )
        out += ks
    return sorted(set(out))


def trim(
    system,
    x0=None,
    *,
    t: float = 0.0,
    fixed_states: Sequence[str] = (),
    fixed_inputs: Mapping | Sequence[str] = (),
    free_inputs: Sequence[str] = (),
    target: str | Sequence[str] = "equilibrium",
    tol: float = 1e-8,
    max_nfev: int = 200,
) -> TrimResult:
    """Solve for the states not in ``fixed_states`` and the ``free_inputs`` (their values in x0
    and at the operating point are the first guess) making the ``target`` state derivatives
    zero; ``fixed_inputs`` (names held at their operating values, or name -> value) are held.
    Raises :class:`TrimError` when the problem has more unknowns than equations, or when the
    solution leaves an equation above ``tol`` (its name and residual in the message)."""
    engine = as_engine(system)
    t = float(t)
    chart = Chart.of(engine)
    x0 = chart.normalise(check_state(engine, x0))
    fixed = _reduced_indices(chart, list(fixed_states), "fixed state")
    free_x = [k for k in range(chart.nr) if k not in fixed]
    if isinstance(target, str):
        if target == "equilibrium":
            rows = list(range(chart.nr))
        elif target == "steady":
            rows = [k for k in range(chart.nr) if not chart.position_level[k]]
        else:
            raise TrimError(f"unknown target {target!r}: 'equilibrium', 'steady' or state names")
    else:
        rows = _reduced_indices(chart, list(target), "target state")
    fixed_map = (
        dict(fixed_inputs) if isinstance(fixed_inputs, Mapping) else {n: None for n in fixed_inputs}
    )
    try:
        ucols = resolve_inputs(engine, list(free_inputs))
        fixed_cols = resolve_inputs(engine, list(fixed_map))
    except TitopError as exc:
        raise TrimError(str(exc)) from None
    held = {}
    w_start = np.array(engine._native_inputs(t, x0), dtype=float)
    for name, v in fixed_map.items():
        sub = resolve_inputs(engine, [name])
        vals = [w_start[off] for _, off in sub] if v is None else np.atleast_1d(v)
        held.update(input_overrides(engine, sub, vals))
    uoffs = [off for _, off in ucols]
    if set(uoffs) & set(held):
        raise TrimError("an input is both fixed and free")
    n_unknown = len(free_x) + len(uoffs)
    names_rows = [chart.reduced_names[k] + " rate" for k in rows]
    if n_unknown > len(rows):
        raise TrimError(
            f"more unknowns ({n_unknown}: {len(free_x)} states, {len(uoffs)} inputs) than "
            f"equations ({len(rows)}): fix more states or inputs, or add target states"
        )
    if n_unknown == 0:
        raise TrimError("nothing to solve for: every state and input is fixed")
    nt = engine.native
    u_start = np.array([w_start[off] for off in uoffs])

    def unpack(z):
        d = np.zeros(chart.nr)
        d[free_x] = z[: len(free_x)]
        x = chart.retract(x0, d)
        ov = dict(held)
        ov.update(zip(uoffs, z[len(free_x) :], strict=True))
        return d, x, ov

    def residual(z):
        _, x, ov = unpack(z)
        w = operating_inputs(engine, t, x, ov)
        dx = np.empty(engine.n_states)
        r = nt.derivative(t, x, w, dx, nt.new_data())
        if r:
            return np.full(len(rows), 1e10)
        return (chart.t_out(x) @ dx)[rows]

    def jacobian(z):
        d, x, ov = unpack(z)
        w = operating_inputs(engine, t, x, ov)
        jx, jin = nt.jacobian(t, x, w)
        dW = input_feedback(engine, chart, t, x, set(ov))
        # ∂x/∂δ at δ: Q(q) J_r(δθ) = ∂x/∂δ_local(x) J_r; the feedback term is in local coords
        Jr = chart.t_in(x)
        Rj = chart.retract_jacobian(x0, d)
        local_of_delta = np.linalg.lstsq(Jr, Rj, rcond=None)[0]
        J = chart.t_out(x) @ (jx @ Rj + jin @ dW @ local_of_delta)
        cols = [J[np.ix_(rows, free_x)], (chart.t_out(x) @ jin[:, uoffs])[rows]]
        return np.hstack(cols)

    z0 = np.concatenate([np.zeros(len(free_x)), u_start])
    sol = least_squares(residual, z0, jac=jacobian, method="trf", xtol=1e-15, ftol=1e-15,
                        gtol=1e-15, max_nfev=max_nfev)  # fmt: skip
    r = residual(sol.x)
    res = dict(zip(names_rows, r.tolist(), strict=True))
    worst = float(np.max(np.abs(r))) if r.size else 0.0
    _, x, ov = unpack(sol.x)
    if not worst <= tol:
        bad = sorted(res.items(), key=lambda kv: -abs(kv[1]))[:4]
        raise TrimError(
            f"no trim point found: residual {worst:.3g} > tol {tol:.3g} after {sol.nfev} "
            "evaluations; equations not met: "
            + ", ".join(f"{n} = {v:.3g}" for n, v in bad if abs(v) > tol)
            + f" (unknowns: {[chart.reduced_names[k] for k in free_x] + [c for c, _ in ucols]})",
            res,
        )
    w = operating_inputs(engine, t, x, ov)
    u = {c: float(w[off]) for c, off in ucols + fixed_cols}
    return TrimResult(x=x, u=u, residual=worst, residuals=res, nfev=sol.nfev, t=t)
