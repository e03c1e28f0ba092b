"""Runs: fixed communication steps, error-controlled steps, or model exchange.

:meth:`Stepping.simulate` checks the run's settings, then steps the co-simulation from point to
point: with a fixed step (:meth:`Stepping._advance_fixed`, in the compiled step of
:mod:`.fastpath` when it applies), with error-controlled steps (step doubling, rollback through
the FMUs' get/set state: :meth:`Stepping._advance_variable`), or through the FMUs'
model-exchange interfaces (``mode="me"``, :class:`~.model_exchange.ModelExchange`). Around a
run: the timeout, Ctrl-C, the progress bar, and the FMUs freed at the end
(:meth:`Stepping._running`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from contextlib import contextmanager

import numpy as np

from ..assembly.engine import interrupted, timeout_message, wall_limit
from .components import CosimError, RealChannel
from .coupling import Coupling
from .fastpath import CompiledStep, applies
from .plan import PRE
from .results import CosimResult, Recording


class Stepping(Coupling, Recording):
    """A run from the start time to the stop time (:meth:`simulate`)."""

    def simulate(
        self,
        stop_time: float,
        step: float = 1e-3,
        *,
        start_time: float = 0.0,
        record: Sequence[str] | Mapping[str, str] = (),
        output_interval: float | None = None,
        tolerance: float = 1e-8,
        step_tolerance: float | None = None,
        max_step: float | None = None,
        progress: bool = False,
        mode: str = "cs",
        rtol: float = 1e-8,
        atol: float = 1e-10,
        method: str = "DOP853",
        timeout: float | None = None,
    ) -> CosimResult:
        """Co-simulate from ``start_time`` to ``stop_time`` (s).

        Fixed communication step ``step`` by default. With ``step_tolerance`` the step is
        error-controlled (``step`` is then the first step): each step is done once with h and
        again as two steps of h/2 from the same saved FMU states; their difference estimates the
        error of the states (relative and absolute ``step_tolerance``) and sets the next step.
        ``tolerance`` is the relative residual to which the algebraic loop is solved.

        Samples are taken at ``start_time + k * output_interval`` (s) and at ``stop_time``
        (every communication point when None with a fixed step, a hundredth of the run with a
        variable one). A fixed step must divide ``output_interval`` and the run (relative
        1e-9), else a CosimError is raised before any FMU is instantiated; variable steps are
        shortened to land on every output time.

        ``mode="me"`` runs the FMUs' model-exchange interfaces instead: one error-controlled
        scipy integrator (``method``, ``rtol``, ``atol``; ``max_step`` bounds its step) over
        every unit's continuous states, the algebraic loop solved at every derivative
        evaluation (:class:`~titopfmu.master.model_exchange.ModelExchange`); ``step`` and
        ``step_tolerance`` are then not used.

        ``timeout`` (s of wall-clock time, None: none) stops the run with a CosimError carrying
        the samples so far, checked at least every 256 communication steps (every integrator
        step in model exchange). A Ctrl-C raises a
        :class:`~titopfmu.assembly.engine.RunInterrupted` (a KeyboardInterrupt) carrying them too.
        """
        if not (math.isfinite(step) and step > 0):
            raise CosimError(f"the communication step must be positive, got {step}")
        if not (math.isfinite(stop_time) and math.isfinite(start_time) and stop_time > start_time):
            raise CosimError(f"stop time {stop_time} must be after the start time {start_time}")
        span = stop_time - start_time
        if output_interval is not None and not (
            math.isfinite(output_interval) and output_interval > 0
        ):
            raise CosimError(f"the output interval must be positive, got {output_interval}")
        if self.coupling not in ("polynomial", "extrapolated", "hold"):
            raise CosimError(f"unknown coupling {self.coupling!r}: 'polynomial' (default), "
                             "'extrapolated' or 'hold'")  # fmt: skip
        if self.extrapolation_degree is not None and self.extrapolation_degree not in (0, 1, 2, 3):
            raise CosimError("extrapolation_degree must be 0, 1, 2 or 3 (or None), got "
                             f"{self.extrapolation_degree!r}")  # fmt: skip
        if mode not in ("cs", "me"):
            raise CosimError(
                f"unknown mode {mode!r}: 'cs' (co-simulation) or 'me' (model exchange)"
            )
        self._deadline = wall_limit(timeout, CosimError)
        self._timeout = timeout
        if mode == "me":
            from .model_exchange import ModelExchange

            return ModelExchange(self, rtol=rtol, atol=atol, method=method).simulate(
                stop_time, start_time=start_time, record=record, output_interval=output_interval,
                tolerance=tolerance, max_step=max_step, progress=progress, timeout=timeout,
            )  # fmt: skip
        if step_tolerance is not None:
            return self._simulate_variable(
                stop_time, step, start_time, record, output_interval, tolerance, step_tolerance,
                max_step, progress,
            )  # fmt: skip
        n_steps = int(round(span / step))
        if n_steps < 1 or abs(n_steps * step - span) > 1e-9 * span:
            raise CosimError(
                f"the communication step {step:g} s must divide the interval {span:g} s "
                f"({span / step:.6g} steps)"
            )
        # the output grid: every `every` steps, exactly at start + k * output_interval
        every = 1
        if output_interval is not None:
            every = int(round(output_interval / step))
            if every < 1 or abs(every * step - output_interval) > 1e-9 * output_interval:
                raise CosimError(
                    f"the communication step {step:g} s does not divide the output interval "
                    f"{output_interval:g} s ({output_interval / step:.6g} steps): choose a "
                    f"step of {output_interval:g} s / n, e.g. "
                    f"{output_interval / max(1, math.ceil(output_interval / step)):.6g} s, or "
                    "an output interval that is a multiple of the step"
                )
        oi = step * every if output_interval is None else output_interval
        if not self._ready:
            self._plan()
        cols = self._record_columns(record)
        result = CosimResult([c for c, _, _ in cols])
        self.initialize(start_time)
        sample = self._sampler(cols, result)
        with self._running(result, progress, n_steps, "step") as bar:
            self.solve_loop(tolerance)
            result.iterations.append(self.last_iterations)
            k = 0
            while True:
                if k == n_steps:
                    sample(stop_time)
                    break
                if k % every == 0:
                    sample(start_time + (k // every) * oi)
                m = min(every - k % every, n_steps - k)  # steps to the next output point
                if self._deadline is not None:
                    m = min(m, 256)  # the timeout checked at least every 256 steps
                self._advance_fixed(m, step, tolerance, result.iterations, start_time, k)
                k += m
                if bar is not None:
                    bar.update(m)
                self._check_deadline()
        return result

    def _advance_fixed(self, n: int, h: float, tolerance: float, iterations: list[int],
                       t0: float, k0: int) -> None:  # fmt: skip
        """``n`` communication steps of ``h`` (s) from step ``k0`` of a run from ``t0``, each
        followed by the loop's solution; the time after step k is exactly ``t0 + k h`` (no drift
        of a sum of steps). The loop iterations of each are appended to ``iterations`` (also
        those done before an error). The compiled step (:mod:`.fastpath`) does them when it
        applies and :attr:`compiled` is true, else :meth:`do_step` and :meth:`solve_loop`."""
        if self.compiled and applies(self) is None:
            if self._compiled is None:
                self._compiled = CompiledStep(self)
            try:
                iterations += self._compiled.run(n, h, tolerance, 5, t0, k0)
            except CosimError:
                iterations += self._compiled.done
                raise
            return
        for j in range(n):
            self.do_step(h)
            self.t = t0 + (k0 + j + 1) * h
            self.solve_loop(tolerance)
            iterations.append(self.last_iterations)

    # -- variable step ----------------------------------------------------------------------------

    def _simulate_variable(
        self, stop_time, step, start_time, record, output_interval, tolerance, step_tolerance,
        max_step, progress,
    ) -> CosimResult:  # fmt: skip
        if not step_tolerance > 0:
            raise CosimError(f"the step tolerance must be positive, got {step_tolerance}")
        span = stop_time - start_time
        if output_interval is None:
            output_interval = span / 100.0
        if not self._ready:
            self._plan()
        cols = self._record_columns(record)
        result = CosimResult([c for c, _, _ in cols])
        self.initialize(start_time)
        self._err_plan = self._error_plan()
        sample = self._sampler(cols, result)
        self._h = step
        self._h_max = max_step if max_step is not None else output_interval
        p = self._step_order()
        self._doubling, self._exponent = 2.0**p - 1.0, -1.0 / (p + 1.0)
        self.accepted = self.rejected = 0
        n_out = int(math.floor(span / output_interval + 1e-9))
        grid = [start_time + k * output_interval for k in range(n_out + 1)]
        if grid[-1] < stop_time - 1e-12 * max(1.0, stop_time):
            grid.append(stop_time)
        with self._running(result, progress, len(grid) - 1, "output") as bar:
            self.solve_loop(tolerance)
            for k, t_out in enumerate(grid):
                self._check_deadline()
                if k:
                    self._advance_variable(t_out, step_tolerance, tolerance, 1e-9 * span)
                    self.t = t_out  # landed on it (to rounding): no drift of a sum of steps
                    if bar is not None:
                        bar.update()
                sample(t_out)
                result.iterations.append(self.last_iterations)
        return result

    def _save(self):
        states = {n: c.slave.getFMUstate() for n, c in self.components.items()}
        master = (self.t, self._V.copy(), self._P.copy(), self._H.copy(), self._have_prev,
                  list(self._hist), self._h_prev, self._Y.copy(), self._E.copy(),
                  self._Vh.copy(), self._Th.copy(), self._Nh)  # fmt: skip
        return states, master

    def _restore(self, saved) -> None:
        """Back to a saved point: FMU states (inputs included) and the master's copies, in
        place (channels and views refer to them)."""
        states, master = saved
        for n, c in self.components.items():
            c.slave.setFMUstate(states[n])
        self.t, V, P, H, self._have_prev, hist, self._h_prev, Y, E, Vh, Th, self._Nh = master
        self._V[:], self._P[:], self._H[:], self._Y[:], self._E[:] = V, P, H, Y, E
        self._Vh[:], self._Th[:] = Vh, Th
        self._hist = list(hist)

    def _free_saved(self, saved) -> None:
        for n, c in self.components.items():
            c.slave.freeFMUstate(saved[0][n])

    def _error_plan(self) -> list[tuple[RealChannel, np.ndarray]]:
        """Outputs compared by the step-doubling error estimate: every body's twist, position
        and attitude (``body.m[7..18]``) and joint rates and coordinates."""
        plan = []
        for n in self.order:
            c = self.components[n]
            names = [f"body.m[{i}]" for i in PRE if f"body.m[{i}]" in c.vr]
            k = sum(1 for v in c.vr if v.startswith("joint.m[")) // 3
            if k and c.variables["joint.m[1]"].causality == "output":
                names += [f"joint.m[{i}]" for i in range(k + 1, 3 * k + 1)]
            angle = np.array([nm in ("body.m[16]", "body.m[17]", "body.m[18]") for nm in names])
            if names:
                plan.append((self._channel(n, names, "its states' outputs"), angle))
        return plan

    def _error_outputs(self) -> list[np.ndarray]:
        return [ch.get().copy() for ch, _ in self._err_plan]

    def _error_norm(self, a: list[np.ndarray], b: list[np.ndarray], tol: float) -> float:
        worst = 0.0
        for (_, angle), x, y in zip(self._err_plan, a, b, strict=True):
            d = y - x
            d[angle] = (d[angle] + np.pi) % (2.0 * np.pi) - np.pi
            # step doubling: the two half steps are more accurate by 2^p - 1 (p: _step_order)
            e = np.abs(d) / self._doubling / (tol + tol * np.maximum(np.abs(x), np.abs(y)))
            worst = max(worst, float(np.max(e)) if len(e) else 0.0)
        return worst

    def _step_order(self) -> int:
        """The order p in the step of the co-simulation's error (local error h^(p+1)): the
        coupling's (hold 1, extrapolated 2, polynomial its degree + 1), at most the internal
        order of every FMU that has a ``solver.method`` (titopfmu's: 1, 2 or 4; its value
        as set, else its start value)."""
        p = {"hold": 1, "extrapolated": 2}.get(self._coupling, self._degree + 1)
        for c in self.components.values():
            v = c.variables.get("solver.method")
            if v is not None:
                m = c.parameters.get("solver.method", v.start)
                try:
                    p = min(p, int(float(m)))
                except (TypeError, ValueError):
                    pass
        return max(p, 1)

    def _advance_variable(self, t_end: float, tol: float, loop_tol: float, h_min: float) -> None:
        """Advance to ``t_end`` with error-controlled steps (step doubling, rollback through the
        FMUs' get/set state); ``self._h`` carries the step size from call to call."""
        while self.t < t_end - 1e-12 * max(1.0, abs(t_end)):
            h = min(self._h, t_end - self.t)
            saved = self._save()
            self.do_step(h)
            self.solve_loop(loop_tol)
            y1 = self._error_outputs()
            self._restore(saved)
            self.do_step(0.5 * h)
            self.solve_loop(loop_tol)
            self.do_step(0.5 * h)
            self.solve_loop(loop_tol)
            y2 = self._error_outputs()
            err = self._error_norm(y1, y2, tol)
            factor = 0.9 * (err if err > 0 else 1e-12) ** self._exponent
            self._check_deadline()
            if err <= 1.0:
                self._free_saved(saved)
                self.accepted += 1
                if h >= self._h * (1 - 1e-12):  # not shortened to hit t_end
                    self._h = min(self._h_max, h * min(2.0, factor))
            else:
                self._restore(saved)
                self._free_saved(saved)
                self.rejected += 1
                self._h = h * max(0.2, factor)
                if self._h < h_min:
                    raise CosimError(
                        f"step size {self._h:.3g} s below the minimum {h_min:.3g} s for the "
                        f"tolerance {tol:g} (error estimate {err:.3g})", self.t,
                    )  # fmt: skip
                self.solve_loop(loop_tol)  # the restored point's loop inputs

    # -- around a run -----------------------------------------------------------------------------

    def _check_deadline(self) -> None:
        """Raise the CosimError of a run past its ``timeout`` (see :meth:`simulate`)."""
        if self._deadline is not None and time.perf_counter() > self._deadline:
            raise CosimError(timeout_message(self._timeout), self.t)

    @contextmanager
    def _running(self, result: CosimResult, progress: bool, total: int, unit: str):
        """Around a run: a tqdm bar of ``total`` ``unit`` (None without ``progress``), the
        results so far attached to a CosimError, the bar closed and the FMUs freed at the end."""
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=total, unit=unit, desc="cosim")
        try:
            yield bar
        except CosimError as exc:
            exc.result = result
            raise
        except KeyboardInterrupt as exc:  # Ctrl-C: the samples so far go with it
            raise interrupted(exc, result, self.t) from None
        finally:
            if bar is not None:
                bar.close()
            self.free()
