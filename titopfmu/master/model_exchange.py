"""Model exchange: the FMUs' continuous states integrated by one solver, the loop solved exactly.

:class:`ModelExchange` runs the components and connections of a
:class:`~titopfmu.master.cosim.CoSimulation` through the FMUs' model-exchange interfaces (FMI 2.0,
fmpy's ``FMU2Model``). One error-controlled scipy integrator (DOP853 by default, ``rtol`` and
``atol``) advances the continuous states of every unit together, so that the only error left is
the integrator's: no communication step, no coupling error. At every derivative evaluation
(time ``t``, states ``x``) the master

1. sets the time and every unit's states (``fmi2SetTime``, ``fmi2SetContinuousStates``);
2. passes the values that do not depend on the loop, in the order the FMUs' ``ModelStructure``
   gives (twists and poses down the tree, loop closures, joint laws), as the co-simulation
   master does (:meth:`CoSimulation._pre_loop_schedule`);
3. solves the algebraic loop of the tree — accelerations down, wrenches up. At fixed states every
   body unit is affine in its loop inputs, ``y = M u + c``: ``M`` comes from the FMU's exact
   directional derivatives (``fmi2GetDirectionalDerivative``, one call per loop input fed by
   another unit; unit perturbations through set/get for an FMU that offers none). The loop is
   then the interface system: one equation per loop input fed by another unit, ``z = Y(z)``,
   whose matrix ``I - A`` holds the units' blocks of ``M``; from the outputs read at the current
   inputs, ``(I - A) dz = Y - z`` is solved directly (LU with partial pivoting: a unit known only
   by its dense input-output map gives no joint-space form for the engine's articulated-inertia
   sweep, and the hybrid tree form loses accuracy with the mass ratio). The solution is sent,
   the outputs are read again and the loop residual checked on them (relative, ``tolerance``);
   a residual above it gets another Newton step from the new outputs. As in the co-simulation
   master (:meth:`~titopfmu.master.loop.LoopSolution._residual`), each mismatch is relative to
   the scale of its loop equation (a group of three of one unit at one port: the largest output
   of that unit in the model, the terms the Jacobians make it of, what it feeds), and the LU
   works on the unknowns divided by those scales (powers of two): no absolute threshold, the
   same decisions on a system scaled in mass and length;
4. passes the values that depend on the loop (a joint acceleration to a joint law) and reads
   the state derivatives (``fmi2GetDerivatives``).

Events follow the FMI 2.0 model-exchange calling sequence: after initialisation and whenever a
unit asks for it (``fmi2CompletedIntegratorStep`` after every accepted step, a time event from
``fmi2NewDiscreteStates``) every unit enters event mode, discrete states are iterated until none
asks for more, and integration restarts from the states they report. State events (event
indicators) are not supported: such a unit is refused when the run starts. titopfmu's block FMUs
have no events of either kind.

Outputs are sampled exactly at ``start + k * output_interval`` (and the stop time): the states
there come from the integrator's dense output, and every unit is evaluated there.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from ctypes import POINTER, byref, c_double, c_uint
from dataclasses import dataclass

import numpy as np
from fmpy.fmi2 import FMU2Model, fmi2Boolean, fmi2CallbackFunctions
from fmpy.logging import addLoggerProxy

from . import components as _components
from .components import _STATUS, Component, CosimError, RealChannel
from .loop import scales
from .plan import unit_groups

#: the scipy integrators that can be chosen (``scipy.integrate``'s OdeSolver classes)
METHODS = ("DOP853", "RK45", "RK23", "Radau", "BDF", "LSODA")


@dataclass
class MEStats:
    """Counters of a model-exchange run."""

    #: derivative evaluations (each one solves the loop), output samples included
    evaluations: int = 0
    #: loop solutions (every evaluation, and every round of an event iteration)
    solves: int = 0
    #: loop sweeps over all solutions (one each unless a residual needed another)
    iterations: int = 0
    #: interface-Jacobian columns from directional derivatives (or unit perturbations)
    jacobian_columns: int = 0
    #: FMI calls of every kind
    fmu_calls: int = 0
    #: accepted integrator steps
    steps: int = 0
    #: event iterations (initialisation included)
    events: int = 0
    #: largest relative loop residual seen after a solve
    max_residual: float = 0.0


def _instantiate_me(c: Component) -> None:
    """Instantiate component ``c`` as a model-exchange unit, with the logger of
    :meth:`Component.instantiate` (the FMU's messages kept in ``c.messages``)."""
    f = c.file
    c.messages = []
    c._env = next(_components._ENV)
    _components._SINKS[c._env] = c.messages
    cb = fmi2CallbackFunctions()
    cb.logger = _components._LOGGER
    cb.allocateMemory = _components._ALLOCATE
    cb.freeMemory = _components._FREE
    cb.componentEnvironment = c._env
    addLoggerProxy(byref(cb))
    c._callbacks = cb  # the FMU keeps pointers into it
    c.slave = FMU2Model(
        guid=f.md.guid,
        unzipDirectory=f.directory,
        modelIdentifier=f.md.modelExchange.modelIdentifier,
        instanceName=c.name,
    )
    try:
        c.slave.instantiate(loggingOn=True, callbacks=cb)
    except Exception as exc:
        raise CosimError(f"component '{c.name}': {exc}{c.last_error()}") from None


class _Unit:
    """Run-time data of one component: its continuous states (a slice of the master's state
    vector) and direct handles on the FMI functions called at every evaluation."""

    def __init__(self, c: Component, sx: slice, X: np.ndarray, DX: np.ndarray) -> None:
        self.c = c
        self.nx = sx.stop - sx.start
        self.sx = sx
        dll = c.slave.dll
        self.inst = c.slave.component
        self.set_time = dll.fmi2SetTime
        self.set_states = dll.fmi2SetContinuousStates
        self.get_derivatives = dll.fmi2GetDerivatives
        self.completed = dll.fmi2CompletedIntegratorStep
        self.x_ptr = X[sx].ctypes.data_as(POINTER(c_double))
        self.dx_ptr = DX[sx].ctypes.data_as(POINTER(c_double))


class _LoopBody:
    """One body of the loop: channels of its loop inputs ``u`` (a view of the master's ``U``)
    and outputs ``y`` (a view of ``Y``), the positions ``lc`` of the inputs another body feeds
    and the directional-derivative calls that give the columns ``M[:, lc]``."""

    def __init__(self, me: ModelExchange, i: int) -> None:
        cs = me.cs
        name = cs.order[i]
        c = cs.components[name]
        self.name = name
        u_names, y_names = cs._u_names[i], cs._y_names[i]
        self.u = me.U[cs._su[i]]
        self.y = me.Y[cs._sy[i]]
        self.nu, self.ny = len(u_names), len(y_names)
        self.uch = RealChannel(c, u_names, me.stats, me, "its loop inputs", self.u)
        self.ych = RealChannel(c, y_names, me.stats, me, "its loop outputs", self.y)
        self.lc = np.array(cs._lc[i], dtype=int)
        self.MT = np.zeros((len(self.lc), self.ny))  # row k: the column M[:, lc[k]]
        self.groups = unit_groups(u_names)  # the unit group of each loop input
        self.src = np.zeros(len(self.lc), dtype=int)  # the output in Y feeding u[lc[k]]
        self.exact = bool(c.file.md.modelExchange.providesDirectionalDerivative)
        if self.exact:
            dll = c.slave.dll
            self._dd = dll.fmi2GetDirectionalDerivative
            self._inst = c.slave.component
            self._unknown = (c_uint * self.ny)(*[c.vr[n] for n in y_names])
            self._known = [(c_uint * 1)(c.vr[u_names[k]]) for k in self.lc]
            self._seed = (c_double * 1)(1.0)
            self._rows = [self.MT[k].ctypes.data_as(POINTER(c_double))
                          for k in range(len(self.lc))]  # fmt: skip
        self.component = c

    def jacobian(self, me: ModelExchange) -> None:
        """``M[:, lc]`` at the current states and inputs: exact directional derivatives, or
        perturbations through set/get (exact up to rounding: the map is affine), each of the
        size of its unit group (the inputs' values, the outputs feeding them; 1 in the input's
        own unit only when these are all zero)."""
        if self.exact:
            for known, row in zip(self._known, self._rows, strict=True):
                me.stats.fmu_calls += 1
                st = self._dd(self._inst, self._unknown, self.ny, known, 1, self._seed, row)
                if st > 1:
                    me._fail(self.component, "fmi2GetDirectionalDerivative", st)
        else:
            y0 = self.y.copy()
            size = np.abs(self.u)
            size[self.lc] = np.maximum(size[self.lc], np.abs(me.Y[self.src]))
            top = np.zeros(int(self.groups.max(initial=-1)) + 1)
            np.maximum.at(top, self.groups, size)
            size = top[self.groups]
            size[~((size > 0.0) & np.isfinite(size))] = 1.0
            for k, j in enumerate(self.lc):
                keep = self.u[j]
                self.u[j] = keep + size[j]
                step = self.u[j] - keep  # the step made, rounded
                self.uch.send()
                self.MT[k] = (self.ych.get() - y0) / step
                self.u[j] = keep
            self.uch.send()
            self.y[:] = y0
        me.stats.jacobian_columns += len(self.lc)


class ModelExchange:
    """The components and connections of a :class:`~titopfmu.master.cosim.CoSimulation`, run
    through the FMUs' model-exchange interfaces (module docstring).

    ``method`` is a scipy integrator (:data:`METHODS`), ``rtol`` and ``atol`` its relative and
    absolute tolerances on the units' continuous states (SI units of each state).
    ``CoSimulation.simulate(..., mode="me")`` builds one and runs it; build one directly to
    read its counters (:attr:`stats`) afterwards.

    >>> cs = build_balloon_cosim("fmus")
    >>> me = ModelExchange(cs, rtol=1e-10, atol=1e-12)
    >>> result = me.simulate(20.0, output_interval=0.01, record=COSIM_RECORD)
    >>> me.stats.evaluations
    """

    def __init__(self, cs, *, rtol: float = 1e-8, atol: float = 1e-10,
                 method: str = "DOP853") -> None:  # fmt: skip
        if method not in METHODS:
            raise CosimError(f"unknown integration method {method!r}; choose from {METHODS}")
        if not (rtol > 0 and atol > 0 and math.isfinite(rtol) and math.isfinite(atol)):
            raise CosimError(f"tolerances must be positive (rtol={rtol}, atol={atol})")
        self.cs = cs
        self.rtol, self.atol, self.method = rtol, atol, method
        self.t = 0.0
        self.stats = MEStats()
        self.last_iterations = 0

    # -- checks and set-up ------------------------------------------------------------------

    def check(self) -> None:
        """Everything refused before any FMU is instantiated: the co-simulation's own checks
        (wiring, unconnected inputs), then a unit without a model-exchange interface or with
        event indicators, named with its FMU file."""
        cs = self.cs
        if not cs._ready:
            cs._plan()
        cs.check_inputs()
        for name, c in cs.components.items():
            md = c.file.md
            if md.modelExchange is None:
                raise CosimError(
                    f"component '{name}': the FMU '{c.file.path.name}' has no model-exchange "
                    "interface; run it in co-simulation (mode='cs') or rebuild it with one"
                )
            if md.numberOfEventIndicators:
                raise CosimError(
                    f"component '{name}': the FMU '{c.file.path.name}' has "
                    f"{md.numberOfEventIndicators} event indicators; the model-exchange master "
                    "handles step and time events only (state events are not located)"
                )

    def _fail(self, c: Component, function: str, status: int) -> None:
        raise CosimError(
            f"component '{c.name}': {function} failed (status {_STATUS.get(status, status)})"
            f"{c.last_error()}",
            self.t,
        )

    def _program(self, steps) -> list:
        """Bound reads and writes of ``steps`` (component, outputs, destinations of each
        output), each read preceded by the writes to that component since its last read; the
        writes still pending at the end are sent last."""
        cs = self.cs
        ops = []
        for cname, outs, dests in steps:
            flush = self._pending.pop(cname, [])
            fch = RealChannel(cs.components[cname], flush, self.stats, self) if flush else None
            fidx = np.array([self._vpos[(cname, n)] for n in flush], dtype=int)
            rch = RealChannel(cs.components[cname], outs, self.stats, self)
            moves = []
            for k, ds in enumerate(dests):
                for dc, dn in ds:
                    moves.append((k, self._vpos[(dc, dn)]))
                    if dn not in self._pending.setdefault(dc, []):
                        self._pending[dc].append(dn)
            src = np.array([m[0] for m in moves], dtype=int)
            dst = np.array([m[1] for m in moves], dtype=int)
            ops.append((fch, fidx, rch, src, dst))
        for cname, flush in self._pending.items():
            if flush:
                fch = RealChannel(cs.components[cname], flush, self.stats, self)
                fidx = np.array([self._vpos[(cname, n)] for n in flush], dtype=int)
                ops.append((fch, fidx, None, None, None))
        self._pending = {}
        return ops

    def _run(self, ops) -> None:
        V = self._V
        for fch, fidx, rch, src, dst in ops:
            if fch is not None:
                fch.set_from(V, fidx)
            if rch is not None:
                V[dst] = rch.get()[src]

    def _bind(self) -> None:
        """Units, the state vector, the programs before and after the loop, the loop bodies."""
        cs = self.cs
        comps = cs.components
        units, n = [], 0
        for c in comps.values():
            nx = int(c.file.md.numberOfContinuousStates or 0)
            units.append((c, slice(n, n + nx)))
            n += nx
        self.nx = n
        self.X = np.zeros(n)
        self.DX = np.zeros(n)
        self._units = [_Unit(c, sx, self.X, self.DX) for c, sx in units]
        self._stateful = [u for u in self._units if u.nx]
        #: the units that want fmi2CompletedIntegratorStep (all but those declaring it not needed)
        self._step_units = [u for u in self._units
                            if u.c.file.md.modelExchange.needsCompletedIntegratorStep]
        # every input a link writes has a place in V
        pre = [lk for lk in cs._pre_loop_links() if lk not in cs._post_links]
        self._vpos: dict[tuple[str, str], int] = {}
        for _, _, cb, i in pre + list(cs._post_links):
            self._vpos.setdefault((cb, i), len(self._vpos))
        self._V = np.zeros(len(self._vpos))
        self._pending: dict[str, list[str]] = {}
        self._pre_ops = self._program(cs._schedule)
        post_steps: list = []
        for ca, o, cb, i in cs._post_links:  # dependency order; one read per run of a source
            if not post_steps or post_steps[-1][0] != ca or o in post_steps[-1][1]:
                post_steps.append((ca, [], []))
            post_steps[-1][1].append(o)
            post_steps[-1][2].append([(cb, i)])
        self._post_ops = self._program(post_steps)
        self.U = np.zeros(cs._su[-1].stop if cs._su else 0)
        self.Y = np.zeros(cs._sy[-1].stop if cs._sy else 0)
        self._bodies = [_LoopBody(self, i) for i in range(len(cs.order))]
        for b in self._bodies:  # the loop inputs' values as the FMUs start
            b.uch.get()
        # loop inputs a link writes before the loop (a loop closure's wrench on a free child
        # port): the solver takes them as known, from their value passed on
        upos, vpos = [], []
        for i, n in enumerate(cs.order):
            for k, x in enumerate(cs._u_names[i]):
                if (n, x) in self._vpos:
                    upos.append(cs._su[i].start + k)
                    vpos.append(self._vpos[(n, x)])
        self._u_linked = (np.array(upos, dtype=int), np.array(vpos, dtype=int))
        self._res_u = np.asarray(cs._res_u, dtype=int)
        self._res_y = np.asarray(cs._res_y, dtype=int)
        # the interface system (I - A) dz = r over z = U[res_u]: equation e says that the loop
        # input U[res_u[e]] equals the output Y[res_y[e]] feeding it; A[e, f] = dY[res_y[e]] /
        # dU[res_u[f]], non-zero only where both belong to the same body
        nz = len(self._res_u)
        z_of_u = {int(g): f for f, g in enumerate(self._res_u)}
        e_of_y = {int(g): e for e, g in enumerate(self._res_y)}
        for i, b in enumerate(self._bodies):
            y0, u0 = cs._sy[i].start, cs._su[i].start
            b.feed = np.array([r for r in range(b.ny) if y0 + r in e_of_y], dtype=int)
            rows = np.array([e_of_y[y0 + r] for r in b.feed], dtype=int)
            cols = np.array([z_of_u[u0 + int(k)] for k in b.lc], dtype=int)
            b.a_idx = (rows[:, None] * nz + cols[None, :]).ravel()
            b.src = np.array([self._res_y[z_of_u[u0 + int(k)]] for k in b.lc], dtype=int)
        self._A = np.eye(nz)
        #: every body's Jacobian is measured at the point before the loop's first residual
        #: (solve_loop): a group whose input feeds no output is not judged (loop._fed)
        self._measured = np.ones(nz, dtype=bool)
        assert nz % 3 == 0  # loop equations by groups of three of one unit (loop._residual)

    # -- one evaluation ---------------------------------------------------------------------

    def _set_point(self, t: float, x: np.ndarray) -> None:
        self.t = t
        self.X[:] = x
        for u in self._units:
            self.stats.fmu_calls += 1
            st = u.set_time(u.inst, t)
            if st > 1:
                self._fail(u.c, "fmi2SetTime", st)
        for u in self._stateful:
            self.stats.fmu_calls += 1
            st = u.set_states(u.inst, u.x_ptr, u.nx)
            if st > 1:
                self._fail(u.c, "fmi2SetContinuousStates", st)

    def _scales(self, tolerance: float) -> np.ndarray:
        """The scale of every loop equation at the current outputs, as the co-simulation master
        takes it (:func:`titopfmu.master.loop.scales`: groups of three of one unit judged
        against the largest of that unit in the model, the size of their terms, what they
        feed, no absolute floor)."""
        a = np.abs(self._A)
        np.fill_diagonal(a, 0.0)  # I - A: the identity, then the bodies' blocks off it
        return scales(np.abs(self.Y[self._res_y]), a, tolerance, self._measured,
                      self.cs._res_unit)  # fmt: skip

    def _residual(self, tolerance: float) -> tuple[float, str]:
        """The largest mismatch between a loop input and the output feeding it, relative to the
        scale of its loop equation (:meth:`_scales`), and where."""
        if not len(self._res_u):
            return 0.0, ""
        r = np.abs(self.U[self._res_u] - self.Y[self._res_y]) / self._scales(tolerance)
        k = int(r.argmax())
        return float(r[k]), self.cs._res_names[k]

    def solve_loop(self, tolerance: float, max_iterations: int = 4) -> int:
        """Steps 2-4 of the module docstring at the point set last; returns the number of loop
        solutions (Newton steps: 1 unless the residual after one exceeded ``tolerance``)."""
        self._run(self._pre_ops)
        ul, vl = self._u_linked
        if len(ul):
            self.U[ul] = self._V[vl]
        bodies = self._bodies
        it = 0
        if bodies:
            for b in bodies:
                b.ych.get()
                b.jacobian(self)
            A = self._A  # I - A: the identity, then the bodies' blocks (never on the diagonal)
            for b in bodies:  # z_e depends on the inputs of the body whose output feeds it
                A.flat[b.a_idx] = -b.MT[:, b.feed].T.ravel()
            U, Y, ru, ry = self.U, self.Y, self._res_u, self._res_y
            while True:
                # Newton on z = U[ru], the loop inputs fed by another body: Y[ry] = z, with
                # Y = Y_read + M (U - U_read), exact (affine): (I - A) dz = Y_read[ry] - z,
                # solved for dz / D, D the equations' scales rounded up to powers of two (an
                # exact scaling: partial pivoting between entries without unit)
                D = np.ldexp(1.0, np.frexp(self._scales(tolerance))[1])
                try:
                    dz = D * np.linalg.solve(A * (D[None, :] / D[:, None]), (Y[ry] - U[ru]) / D)
                except np.linalg.LinAlgError:
                    raise CosimError(
                        "singular loop equations (the interface system of "
                        f"{', '.join(self.cs.order)})", self.t,
                    ) from None  # fmt: skip
                U[ru] += dz
                for b in bodies:
                    b.uch.send()
                for b in bodies:
                    b.ych.get()
                it += 1
                res, where = self._residual(tolerance)
                self.stats.max_residual = max(self.stats.max_residual, res)
                if res <= tolerance:
                    break
                if it >= max_iterations or not math.isfinite(res):
                    raise CosimError(
                        f"the algebraic loop did not converge: residual {res:.3g} at '{where}' "
                        f"after {it} sweeps", self.t,
                    )  # fmt: skip
        self._run(self._post_ops)
        self.stats.solves += 1
        self.stats.iterations += it
        self.last_iterations = it
        return it

    def derivatives(self, t: float, x: np.ndarray) -> np.ndarray:
        """The state derivative of every unit at ``(t, x)``, the loop solved (a copy)."""
        self._set_point(t, x)
        self.solve_loop(self._tolerance)
        self.stats.evaluations += 1
        for u in self._stateful:
            self.stats.fmu_calls += 1
            st = u.get_derivatives(u.inst, u.dx_ptr, u.nx)
            if st > 1:
                self._fail(u.c, "fmi2GetDerivatives", st)
        dx = self.DX.copy()
        if not np.all(np.isfinite(dx)):
            k = int(np.flatnonzero(~np.isfinite(dx))[0])
            unit = next(u for u in self._stateful if u.sx.start <= k < u.sx.stop)
            raise CosimError(
                f"component '{unit.c.name}': state derivative {k - unit.sx.start} is not finite",
                t,
            )
        return dx

    # -- events -----------------------------------------------------------------------------

    def _event_iteration(self) -> tuple[bool, float | None]:
        """Event mode of every unit (FMI 2.0 ME): the loop solved, discrete states updated
        until no unit asks for more, continuous-time mode entered again. Returns (terminate
        requested, next time event or None); :attr:`X` holds the states after the event."""
        self.stats.events += 1
        terminate, next_time = False, None
        for _ in range(100):
            self.solve_loop(self._tolerance)
            again = False
            for u in self._units:
                self.stats.fmu_calls += 1
                try:
                    needed, term, _, _, timed, t_next = u.c.slave.newDiscreteStates()
                except Exception as exc:  # fmpy raises on a failing status
                    raise CosimError(
                        f"component '{u.c.name}': fmi2NewDiscreteStates failed ({exc})"
                        f"{u.c.last_error()}", self.t,
                    ) from None  # fmt: skip
                again |= needed
                terminate |= term
                if timed:
                    next_time = t_next if next_time is None else min(next_time, t_next)
            if not again or terminate:
                break
        else:
            raise CosimError("the event iteration did not settle in 100 rounds", self.t)
        for u in self._units:
            self.stats.fmu_calls += 1
            u.c.slave.enterContinuousTimeMode()
            if u.nx:
                u.c.slave.getContinuousStates(u.x_ptr, u.nx)
        return terminate, next_time

    def _enter_events(self) -> None:
        for u in self._units:
            self.stats.fmu_calls += 1
            u.c.slave.enterEventMode()

    def _completed_step(self, t: float, x: np.ndarray) -> bool:
        """``fmi2CompletedIntegratorStep`` of every unit at the step's end; True when one
        asks for event mode (or to terminate, then after the event iteration)."""
        self._set_point(t, x)
        enter, term = fmi2Boolean(0), fmi2Boolean(0)
        event = False
        for u in self._step_units:
            self.stats.fmu_calls += 1
            st = u.completed(u.inst, 1, byref(enter), byref(term))
            if st > 1:
                self._fail(u.c, "fmi2CompletedIntegratorStep", st)
            event |= bool(enter.value) or bool(term.value)
        return event

    # -- the run ----------------------------------------------------------------------------

    def initialize(self, start_time: float = 0.0, tolerance: float = 1e-8) -> None:
        """Instantiate every unit as model exchange, set parameters and held inputs, leave
        initialisation through the first event iteration (:attr:`X`: the initial states)."""
        self.check()
        cs = self.cs
        self.t = float(start_time)
        self._tolerance = tolerance
        self.stats = MEStats()
        from .binding import start_components

        start_components(cs, self.t, instantiate=_instantiate_me, tolerance=self.rtol,
                         what="model-exchange initialization", then=self._bind)  # fmt: skip
        try:
            terminate, self._next_event = self._event_iteration()  # units start in event mode
        except CosimError:
            self.free()
            raise
        self._terminated = terminate

    def free(self) -> None:
        """Terminate and free every unit."""
        self.cs.free()

    def _sampler(self, cols: list[tuple[str, str, str]], result):
        """A function appending the recorded values at the point evaluated last to
        ``result``, labelled with the output time: one ``fmi2GetReal`` per component."""
        by: dict[str, list[str]] = {}
        for _, cn, n in cols:
            if n not in by.setdefault(cn, []):
                by[cn].append(n)
        comps = self.cs.components
        chans = {cn: RealChannel(comps[cn], names, self.stats, self, "recorded variables")
                 for cn, names in by.items()}  # fmt: skip
        where = [(cn, by[cn].index(n)) for _, cn, n in cols]

        def sample(t: float) -> None:
            vals = {cn: ch.get() for cn, ch in chans.items()}
            result.append(t, [float(vals[cn][k]) for cn, k in where])

        return sample

    def simulate(
        self,
        stop_time: float,
        *,
        start_time: float = 0.0,
        record: Sequence[str] | Mapping[str, str] = (),
        output_interval: float | None = None,
        tolerance: float = 1e-8,
        max_step: float | None = None,
        progress: bool = False,
        timeout: float | None = None,
    ):
        """Integrate from ``start_time`` to ``stop_time`` (s); samples at ``start_time + k *
        output_interval`` (a hundredth of the run when None) and at ``stop_time``.
        ``tolerance``: the relative loop residual accepted after a solve; ``max_step`` (s)
        bounds the integrator's step. A failure raises a CosimError carrying the samples taken
        before it (``result``); ``timeout`` (s of wall-clock time, checked after every
        integrator step) is such a failure."""
        from scipy import integrate

        from .results import CosimResult

        if not (math.isfinite(stop_time) and math.isfinite(start_time) and stop_time > start_time):
            raise CosimError(f"stop time {stop_time} must be after the start time {start_time}")
        span = stop_time - start_time
        if output_interval is None:
            output_interval = span / 100.0
        if not (math.isfinite(output_interval) and output_interval > 0):
            raise CosimError(f"the output interval must be positive, got {output_interval}")
        if max_step is not None and not max_step > 0:
            raise CosimError(f"max_step must be positive, got {max_step}")
        from ..assembly.engine import interrupted, timeout_message, wall_limit

        limit = wall_limit(timeout, CosimError)
        cs = self.cs
        self.check()
        cols = cs._record_columns(record)
        result = CosimResult([c for c, _, _ in cols])
        n_out = int(math.floor(span / output_interval + 1e-9)) + 1
        grid = [min(start_time + k * output_interval, stop_time) for k in range(n_out)]
        if grid[-1] < stop_time - 1e-12 * max(1.0, abs(stop_time)):
            grid.append(stop_time)
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=len(grid) - 1, unit="output", desc="model exchange")
        try:
            self.initialize(start_time, tolerance)
            sample = self._sampler(cols, result)
            solver_class = getattr(integrate, self.method)
            opts = {"rtol": self.rtol, "atol": self.atol}
            if max_step is not None:
                opts["max_step"] = max_step
            x = self.X.copy()
            t = self.t
            k = 0  # next output
            while k < len(grid):
                # a segment: from t to the next time event (or the end), one integrator
                t_end = stop_time
                if self._next_event is not None and t < self._next_event < stop_time:
                    t_end = self._next_event
                while k < len(grid) and grid[k] <= t:  # output times at the segment's start
                    self.derivatives(grid[k], x)
                    sample(grid[k])
                    result.iterations.append(self.last_iterations)
                    k += 1
                    if bar is not None and k > 1:
                        bar.update()
                if self._terminated or t >= stop_time:
                    break
                solver = solver_class(self.derivatives, t, x, t_end, **opts)
                event = False
                while solver.status == "running" and not event:
                    msg = solver.step()
                    if solver.status == "failed":
                        raise CosimError(f"the integrator ({self.method}) failed: {msg}",
                                         solver.t)  # fmt: skip
                    self.stats.steps += 1
                    t_new = solver.t
                    if k < len(grid) and grid[k] <= t_new:
                        dense = solver.dense_output()
                        while k < len(grid) and grid[k] <= t_new:
                            self.derivatives(grid[k], dense(grid[k]))
                            sample(grid[k])
                            result.iterations.append(self.last_iterations)
                            k += 1
                            if bar is not None:
                                bar.update()
                    x = np.array(solver.y, dtype=float)
                    t = t_new
                    event = self._completed_step(t, x)
                    if limit is not None and time.perf_counter() > limit:
                        raise CosimError(timeout_message(timeout), t)
                if event or (self._next_event is not None and t >= self._next_event):
                    self._enter_events()
                    self._terminated, self._next_event = self._event_iteration()
                    x = self.X.copy()
        except CosimError as exc:
            exc.result = result
            raise
        except KeyboardInterrupt as exc:  # Ctrl-C: the samples so far go with it
            raise interrupted(exc, result, start_time) from None
        finally:
            if bar is not None:
                bar.close()
            cs.stats = self.stats
            self.free()
        return result
