"""The plan bound to instantiated FMUs: channels, the master's arrays, the bodies' run-time data.

:meth:`Binding.initialize` instantiates every FMU (parameters, held inputs; the warnings a native
FMU logged are issued again as Python warnings) and :meth:`Binding._bind` binds the program of
:mod:`.plan` to :class:`~.components.RealChannel` objects that work in place in flat arrays:
``_V`` (every input the master writes, at the current point), ``_Y`` (the bodies' loop outputs),
``_E`` (outputs read with them), ``_MX`` (every body's interface Jacobian), and the coupling's
history (``_P``, ``_H``, ``_B``, ``_Vh``, ``_Th``). It also settles the coupling in effect
(:meth:`Binding._effective_degree`). The loop (:mod:`.loop`), the coupling (:mod:`.coupling`)
and the compiled step (:mod:`.fastpath`) all work on these arrays, so that either path can take
over at any communication point.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..blocks.loop_map import LoopMap
from .components import (
    Component,
    CosimError,
    Derivatives,
    InputDerivativeChannel,
    RealChannel,
    Stepper,
)
from .plan import Plan, _Op, unit_groups


@dataclass
class StepStats:
    """Per-step counters of the loop solution."""

    iterations: int = 0
    jacobian_updates: int = 0
    fmu_calls: int = 0
    compiled_steps: int = 0  # communication steps made by the compiled step (fastpath.py)


@dataclass(eq=False)
class _Body:
    """Run-time data of one body of the loop: its inputs ``x = [u ; late inputs]`` (``xv``, a
    slice of the master's copy of the written inputs, which its channel sends in place) and the
    value of ``x`` at which its loop outputs (``Yv``, a slice of ``Y``) were read; its interface
    Jacobian ``Mx = [M | N] = d y / d x`` and loop map ``y = M u + c``."""

    sy: slice
    se: slice
    ny: int
    nu: int
    xv: np.ndarray
    xch: RealChannel
    ych: RealChannel
    lc: np.ndarray  # positions in u of the loop inputs fed by another body
    cols: np.ndarray  # positions in x of the inputs that move during a solve (measured)
    feed: np.ndarray  # positions in y of the loop outputs that feed one
    c: np.ndarray  # the map's constant term (updated in place)
    tmp: np.ndarray
    x_read: np.ndarray
    has_parent: bool
    n_children: int
    Yv: np.ndarray | None = None
    xu: np.ndarray | None = None  # views of xv: u ...
    xl: np.ndarray | None = None  # ... and the late inputs
    nl: int = 0
    ne: int = 0  # extra outputs read with the loop outputs
    xs: slice | None = None  # of xv in V
    g: np.ndarray | None = None  # positions in V of x[cols]
    lcv: np.ndarray | None = None  # positions in V of u[lc]
    Mx: np.ndarray | None = None
    M: np.ndarray | None = None
    N: np.ndarray | None = None
    map: LoopMap | None = None
    xnames: list[str] | None = None  # input names of x
    xgroups: np.ndarray | None = None  # unit group of each input of x (plan.unit_groups)
    dd: Derivatives | None = None  # the FMU's directional derivatives of y (None: none)


def _user_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside titopfmu, for a warning issued by the
    caller of this function."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def _reissue_logged(component: Component, messages: list[tuple[int, str]],
                    inertia: bool = True) -> None:  # fmt: skip
    """Issue the warnings a native FMU logged (fmi2Warning) as Python warnings naming the
    component and the FMU file; a remark on an inertia as titopfmu's InertiaWarning (skipped
    when not ``inertia``: the System's block gave it already)."""
    from ..blocks.base import InertiaWarning

    for status, text in messages:
        if status == 1:
            cat = InertiaWarning if "parameter 'inertia'" in text else UserWarning
            if cat is InertiaWarning and not inertia:
                continue
            warnings.warn(f"component '{component.name}' ({component.file.path.name}): {text}",
                          cat, stacklevel=_user_stacklevel())  # fmt: skip


def start_components(cs, start_time: float, *, instantiate=None, tolerance: float | None = None,
                     what: str = "initialization", then=None) -> None:
    """Instantiate every component of the co-simulation ``cs`` (``instantiate(c)``, default
    ``c.instantiate()``), set up the experiment, its parameters and held inputs, and leave
    initialization mode (where an FMU checks its parameters; what it logged is reissued); then
    ``then()``. On any failure every unit is freed and a CosimError names the component
    (``what`` says which initialization: co-simulation or model exchange)."""
    comps = cs.components
    setup = {} if tolerance is None else {"tolerance": tolerance}
    current = None
    try:
        for c in comps.values():
            current = c
            c.instantiate() if instantiate is None else instantiate(c)
            c.slave.setupExperiment(startTime=start_time, **setup)
            c.slave.enterInitializationMode()
            c.apply_parameters()
        for (cn, n), v in cs.inputs.items():
            current = comps[cn]
            comps[cn].slave.setReal([comps[cn].vr[n]], [v])
        for c in comps.values():
            current = c
            seen = len(c.messages)
            c.slave.exitInitializationMode()  # the FMU checks its parameters here
            _reissue_logged(c, c.messages[seen:], cs.system_mapping is None)
        current = None
        if then is not None:
            then()
    except CosimError:
        cs.free()
        raise
    except Exception as exc:
        detail = current.last_error() if current is not None else ""
        name = current.name if current is not None else "?"
        cs.free()
        raise CosimError(f"{what} of component '{name}' failed: {exc}{detail}") from None


class Binding(Plan):
    """FMU instances, channels and arrays for the plan (:meth:`initialize`, :meth:`_bind`)."""

    def initialize(self, start_time: float = 0.0) -> None:
        """Instantiate every FMU, set parameters and held inputs, solve the first point."""
        if not self._ready:
            self._plan()
        self.check_inputs()
        self.t = float(start_time)
        start_components(self, self.t)
        self.stats = StepStats()
        self._bind()
        self.stats.fmu_calls = 0

    def _channel(self, cname: str, names: Sequence[str], what: str = "",
                 buffer: np.ndarray | None = None) -> RealChannel:  # fmt: skip
        return RealChannel(self.components[cname], names, self.stats, self, what, buffer)

    def _bind(self) -> None:
        """Channels for the program of :meth:`_build_program` and the master's copy of the
        inputs it writes, read once from the FMUs.

        Every written input has a place in the flat array ``_V`` (its value at the current
        point; ``_P`` at the previous point, ``_H`` the value held over the step), a body's
        ``x = [u ; late inputs]`` first: its channel sends that slice of ``_V`` in place."""
        comps = self.components
        base: dict[str, int] = {}
        n = 0
        for cname, names in self._written.items():
            base[cname] = n
            n += len(names)
        V = self._V = np.zeros(n)
        H = self._H = np.zeros(n)
        self._P = np.zeros(n)
        self._D = np.zeros(n)
        ang = []
        self._hold_channels = []
        # polynomial coupling: first derivatives over the step (B), the last values (Vh at
        # times Th, oldest first, Nh of them), the inputs of FMUs that hold the line's mean
        self._B = np.zeros(n)
        self._Vh = np.zeros((4, n))
        self._Th = np.zeros(4)
        self._Nh = 0
        self._deriv_channels: list[InputDerivativeChannel] = []
        self._deriv_hold: list[int] = []  # the hold channel of each derivative channel
        mean = []
        for cname, names in self._written.items():
            sl = slice(base[cname], base[cname] + len(names))
            if not names:
                continue
            ch = self._channel(cname, names, "its connected inputs", H[sl])
            V[sl] = ch.get()
            self._hold_channels.append(ch)
            if comps[cname].can_interpolate_inputs:
                self._deriv_hold.append(len(self._hold_channels) - 1)
                self._deriv_channels.append(
                    InputDerivativeChannel(comps[cname], names, self.stats, self, self._B[sl])
                )
            else:
                mean += range(sl.start, sl.stop)
            ang += [base[cname] + k for k, x in enumerate(names)
                    if x.endswith((".m[16]", ".m[17]", ".m[18]"))]  # fmt: skip
        self._mean = np.array(mean, dtype=int)
        self._degree = self._effective_degree()
        #: the coupling in effect: :attr:`coupling`, but "extrapolated" for "polynomial" with
        #: the automatic degree when a loop closure is present (:meth:`_effective_degree`)
        self._coupling = self.coupling
        if self.coupling == "polynomial" and self._degree is None:
            self._coupling, self._degree = "extrapolated", 1
        self._angles = np.array(ang, dtype=int) if ang else None
        self._P[:] = V
        H[:] = V
        pos = {c: {x: base[c] + k for k, x in enumerate(ns)} for c, ns in self._written.items()}

        def idx(cname: str, names: Sequence[str]) -> np.ndarray:
            return np.array([pos[cname][x] for x in names], dtype=int)

        def bind_op(op: _Op, source=None):
            fch = self._channel(op.comp, op.flush) if op.flush else None
            rch = source if source is not None else self._channel(op.comp, op.reads)
            dests = [(np.array(src, dtype=int), idx(dc, names))
                     for dc, (src, names) in op.dests.items()]  # fmt: skip
            fidx = idx(op.comp, op.flush) if fch is not None else None
            return fch, fidx, rch, dests, op.body, op.yoff

        self._Y = np.zeros(self._sy[-1].stop if self._sy else 0)
        self._dY = np.zeros_like(self._Y)
        self._Yp = np.zeros_like(self._Y)
        self._Vg = np.zeros_like(V)
        self._XR = np.zeros_like(V)  # bodies' x_read, at their x's positions in V
        self._maps: list | None = None
        se, e = [], 0
        for x in self._extras:
            se.append(slice(e, e + len(x)))
            e += len(x)
        self._E = np.zeros(e)
        self._bodies: list[_Body] = []
        # every body's Jacobian Mx (ny x nx, row-major) in one flat array: the compiled step
        # (fastpath.py) reads and writes them in place
        sizes = []
        for i in range(len(self.order)):
            u = self._u_names[i]
            sizes.append(len(self._y_names[i]) * len(u + [x for x in self._late[i] if x not in u]))
        self._MX = np.zeros(sum(sizes))
        mx0 = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        for i, name in enumerate(self.order):
            node = self.nodes[i]
            ny = len(self._y_names[i])
            u = self._u_names[i]
            late = self._late[i]
            xn = u + [x for x in late if x not in u]
            x0 = base[name]
            assert self._written[name][: len(xn)] == xn  # x leads the body's written inputs
            xv = V[x0 : x0 + len(xn)]
            cols = sorted(set(self._lc[i]) | {xn.index(x) for x in late})
            what = "its loop inputs" + (" and late inputs" if late else "")
            self._XR[x0 : x0 + len(xn)] = xv
            b = _Body(
                sy=self._sy[i], se=se[i], ny=ny, nu=len(u), xv=xv,
                xch=self._channel(name, xn, what, xv),
                ych=self._channel(name, self._y_names[i] + self._extras[i], "its loop outputs"),
                lc=np.array(self._lc[i], dtype=int), cols=np.array(cols, dtype=int),
                feed=np.array(self._feed[i], dtype=int), c=np.zeros(ny), tmp=np.zeros(ny),
                x_read=self._XR[x0 : x0 + len(xn)], has_parent=node.has_parent,
                n_children=len(node.children),
            )  # fmt: skip
            b.Yv = self._Y[b.sy]
            b.Mx = self._MX[mx0[i] : mx0[i + 1]].reshape(ny, len(xn))
            b.M, b.N = b.Mx[:, : b.nu], b.Mx[:, b.nu :]
            b.xnames = xn
            b.xgroups = unit_groups(xn)
            comp = comps[name]
            b.dd = (Derivatives(comp, self._y_names[i], self.stats, self, "its loop outputs")
                    if comp.provides_directional_derivative else None)  # fmt: skip
            b.xu, b.xl = xv[: b.nu], xv[b.nu :]
            b.nl, b.ne = len(b.xl), se[i].stop - se[i].start
            b.xs = slice(x0, x0 + len(xn))
            b.g = x0 + b.cols
            b.lcv = x0 + b.lc
            self._bodies.append(b)
        # the residual compares V at the loop inputs with Y at the outputs feeding them
        u_abs = np.concatenate(
            [base[n] + np.arange(len(u)) for n, u in zip(self.order, self._u_names, strict=True)]
        )
        self._res_uv = u_abs[self._res_u] if len(self._res_u) else self._res_u
        self._bind_scales(mx0)
        self._g = np.concatenate([b.g for b in self._bodies]) if self._bodies else np.zeros(0, int)
        self._lcv = (np.concatenate([b.lcv for b in self._bodies]) if self._bodies
                     else np.zeros(0, int))  # fmt: skip
        self._known = [
            b.xv[6 if nd.has_parent else 0 : b.nu] if any(ch < 0 for ch in nd.children)
            else None for b, nd in zip(self._bodies, self.nodes, strict=True)
        ]  # fmt: skip
        #: some body reads its loop outputs before its late inputs are sent: the residual at the
        #: first guess is then not known, one iteration at least
        self._forced = any(len(x) for x in self._late)
        self._ops_rt = [bind_op(op) for op in self._ops]
        self._post_rt = []
        for op in self._post_ops:
            if op.body >= 0:  # values from the extra outputs read with the loop outputs
                b = self._bodies[op.body]
                offs = np.array([b.se.start + self._extras[op.body].index(r) for r in op.reads])
                rt = bind_op(op, source=self._E)
                self._post_rt.append((None, None, None, [(offs[s], d) for s, d in rt[3]], -1, 0))
            else:
                self._post_rt.append(bind_op(op))
        self._flush_rt = [(self._channel(cname, names), idx(cname, names))
                          for cname, names in self._final_flush]  # fmt: skip
        self._steppers = [Stepper(c, self.stats) for c in comps.values()]
        self._mx_dirty = True  # a Jacobian changed since the compiled step factored them
        self._compiled = None  # the compiled step (fastpath.CompiledStep), built at its first use
        self._hist: list[tuple[float, np.ndarray]] = []
        self._have_prev = False
        self._h_prev = 0.0

    def _bind_scales(self, mx0: np.ndarray) -> None:
        """Where each loop equation's variables live, for the residual's scales (:mod:`.loop`,
        ``LoopSolution._residual``) and the compiled step's LU: equation j says that the input
        ``V[res_uv[j]]`` (column ``cc[j]`` of body ``cb[j]``'s x) equals the output
        ``Y[res_y[j]]`` (row ``rr[j]`` of body ``rb[j]``'s y). The equations come in groups of
        three of one unit (:func:`.plan.unit_groups`: a linear acceleration, an angular
        acceleration, a force, a torque at a port). ``_a_idx`` gathers from ``_MX`` the
        interface matrix ``A[j, i] = d Y[res_y[j]] / d V[res_uv[i]]`` (where ``_a_on``: the
        input and the output belong to the same body, else zero)."""
        nres = len(self._res_u)
        ybody = np.full(len(self._Y), -1)
        yrow = np.zeros(len(self._Y), dtype=int)
        xbody = np.full(len(self._V), -1)
        xcol = np.zeros(len(self._V), dtype=int)
        for k, b in enumerate(self._bodies):
            ybody[b.sy] = k
            yrow[b.sy] = np.arange(b.ny)
            xbody[b.xs] = k
            xcol[b.xs] = np.arange(len(b.xv))
        ry, ru = np.asarray(self._res_y, dtype=int), np.asarray(self._res_uv, dtype=int)
        self._rb, self._rr = ybody[ry], yrow[ry]
        self._cb, self._cc = xbody[ru], xcol[ru]
        nx = np.array([len(b.xv) for b in self._bodies] or [0], dtype=int)
        self._a_on = self._rb[:, None] == self._cb[None, :]
        self._a_idx = np.where(self._a_on, (mx0[self._rb] + self._rr * nx[self._rb])[:, None]
                               + self._cc[None, :], 0)  # fmt: skip
        assert nres % 3 == 0  # in runs of 6: P.m[1..6] to Cj.m[1..6], then Cj.W[1..6] to P.W
        #: the scale of every loop equation at the last residual (:meth:`_residual`), at its
        #: output's place in Y (``_sY``) and its input's in V (``_sV``, zero elsewhere)
        self._sY = np.zeros(len(self._Y))
        self._sV = np.zeros(len(self._V))
        self._tol = 1e-8  # the tolerance of the loop's solve in progress (solve_loop)

    def free(self) -> None:
        self._compiled = None  # it refers to the instances
        for c in self.components.values():
            c.free()

    def _effective_degree(self) -> int | None:
        """The degree of :meth:`_polynomial_inputs`: :attr:`extrapolation_degree`, or when it
        is None 3, but None (the "extrapolated" coupling instead) if a component is a loop
        closure. A closure is a penalty spring and damper, stiff by design; an explicit
        coupling extrapolated with degree k is stable for a shrinking range of h times the
        stiffness as k grows (as the Adams-Bashforth methods: about 1 for degree 1, 0.3 for
        degree 3): the four-bar of tests/test_master.py, stable at h = 2 ms with the mid-step
        hold of the linear extrapolation, is not with degree 3, and a line through the last
        two points (degree 1) is less accurate there than that hold."""
        d = self.extrapolation_degree
        if d is None:
            return None if any(c.is_closure for c in self.components.values()) else 3
        if d not in (0, 1, 2, 3):
            raise CosimError(f"extrapolation_degree must be 0, 1, 2 or 3 (or None), got {d!r}")
        return int(d)

    def _run(self, ops) -> None:
        """Execute bound program steps: send the pending writes to a component, read it, pass
        the values on, keep a body's loop outputs and the inputs they were read at."""
        V, Y, E = self._V, self._Y, self._E
        for fch, fidx, rch, dests, body, yoff in ops:
            if fch is not None:
                fch.set_from(V, fidx)
            out = rch.get() if rch is not None else E
            for src, dst in dests:
                V[dst] = out[src]
            if body >= 0:
                b = self._bodies[body]
                Y[b.sy] = out[yoff : yoff + b.ny]
                E[b.se] = out[yoff + b.ny : yoff + b.ny + (b.se.stop - b.se.start)]
                b.x_read[:] = b.xv  # every input in x has just been sent
