"""The compiled communication step of the co-simulation master (``titopfmu.master._step``).

:class:`CompiledStep` packs what :class:`~titopfmu.master.cosim.CoSimulation` planned and bound
(its program of FMU calls, the channels' value references and buffers, the bodies' layout, the
loop's residual pairs) into the plan that ``_step.c`` executes: fixed communication steps, each
the inputs' extrapolation, every ``fmi2DoStep``, the pre-loop values, Newton's iterations on the
interface Jacobians (measured with ``fmi2GetDirectionalDerivative``), the post-loop values. The
C routine works in the master's own arrays (``_V``, ``_Y``, the Jacobians ``_MX``, ...), so the
Python path can take over at any communication point; it returns an error code that this module
turns into the same :class:`~.components.CosimError` as the Python path raises.
"""

from __future__ import annotations

from ctypes import Structure, addressof, c_double, c_int64, c_void_p, sizeof
from importlib import import_module
from typing import TYPE_CHECKING

import numpy as np

from ..blocks.loop_map import LoopMap
from .components import _STATUS, CosimError, RealChannel

if TYPE_CHECKING:  # pragma: no cover
    from .coupling import Coupling as CoSimulation  # the master's layers the step runs

try:  # by name: grimp sees no extension module, and reads `from . import _step` as an import of
    # the package titopfmu.master (its __init__, which imports the master: a cycle that is not one)
    _step = import_module(f"{__package__}._step")
except ImportError:  # pragma: no cover - the extension is built by pip install / setup.py
    _step = None

NB = 16  # fields of a body, NO of a program step: as in _step.c
NO = 7
E_SET, E_GET, E_STEP, E_DD, E_CONVERGE, E_SINGULAR, E_SETDER = 1, 2, 3, 4, 5, 6, 7
#: CoSimulation.coupling -> plan_t.extrapolate
COUPLING_CODES = {"hold": 0, "extrapolated": 1, "polynomial": 2}

_I = c_int64
_P = c_void_p
_F = c_double


class _Plan(Structure):
    """Mirror of ``plan_t`` in ``_step.c`` (same order; every field 8 bytes)."""

    _fields_ = [(n, _I) for n in ("ncomp", "nch", "nbody", "nops", "npre", "nhold", "nres",
                                  "ng", "nang", "order")] + [
        (n, _P) for n in ("inst", "fget", "fset", "fstep", "fdd", "ch", "vr", "chbuf", "body",
                          "lists", "ops", "idx", "dest", "hold", "res_uv", "res_y", "rb", "rr",
                          "cb", "cc", "g", "ang", "V", "P", "H", "D", "Y", "E", "XR", "MX",
                          "work", "piv", "stale", "ht", "hv")] + [
        ("nh", _I), ("nY", _I), ("nV", _I), ("t", _F), ("h_prev", _F), ("have_prev", _I),
        ("dirty", _I), ("extrapolate", _I), ("forced", _I), ("calls", _I), ("updates", _I),
        ("iters", _P), ("err_code", _I), ("err_index", _I), ("err_status", _I), ("err_aux", _I),
        ("err_where", _I), ("done", _I), ("err_res", _F), ("err_t", _F),
        ("degree", _I), ("nhist", _I), ("ndch", _I), ("nmean", _I),
        ("fsetder", _P), ("dch", _P), ("dchbuf", _P), ("orders", _P), ("mean", _P),
        ("B", _P), ("Vh", _P), ("Th", _P), ("sY", _P), ("sV", _P), ("unit", _P),
    ]  # fmt: skip


if _step is not None and _step.plan_size() != sizeof(_Plan):  # pragma: no cover
    raise ImportError(
        f"titopfmu.master._step was built for a plan of {_step.plan_size()} bytes, "
        f"fastpath.py has {sizeof(_Plan)}: rebuild it (pip install -e . or python setup.py "
        "build_ext --inplace)"
    )


def available() -> bool:
    """The extension is built (``pip install`` / ``python setup.py build_ext --inplace``)."""
    return _step is not None


def applies(cs: CoSimulation) -> str | None:
    """Why the compiled step does not apply to ``cs`` (None when it does)."""
    if _step is None:
        return "the extension titopfmu.master._step is not built"
    if cs.loop == "gauss-seidel":
        return "Gauss-Seidel iterations"
    from .coupling import OWN_STEP

    # a subclass (or a test) that replaces the step or the loop's solution gets them called
    if (type(cs).do_step, type(cs).solve_loop) != OWN_STEP:
        return "do_step or solve_loop is overridden"
    for b, name in zip(cs._bodies, cs.order, strict=True):
        if b.dd is None and len(b.cols):
            return f"component '{name}' provides no directional derivatives"
    return None


def _i64(values) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(values, dtype=np.int64).reshape(-1))


def _addr(a: np.ndarray) -> int:
    return a.ctypes.data


class CompiledStep:
    """The plan of one bound :class:`CoSimulation` (rebuilt at each ``initialize``)."""

    def __init__(self, cs: CoSimulation) -> None:
        self.cs = cs
        comps = list(cs.components.values())
        cindex = {c.name: k for k, c in enumerate(comps)}
        channels: list[RealChannel] = []
        chid: dict[int, int] = {}

        def cid(ch: RealChannel) -> int:
            if id(ch) not in chid:
                chid[id(ch)] = len(channels)
                channels.append(ch)
            return chid[id(ch)]

        idx: list[int] = []
        dest: list[int] = []
        ops: list[list[int]] = []

        def add_op(fch, fidx, rch, dests, body, yoff) -> None:
            f = cid(fch) if fch is not None else -1
            fo = len(idx)
            if fch is not None:
                idx.extend(int(v) for v in fidx)
            r = cid(rch) if isinstance(rch, RealChannel) else (-2 if rch == "none" else -1)
            do = len(dest) // 2
            nd = 0
            for src, dst in dests:
                for s_, d_ in zip(src, dst, strict=True):
                    dest.extend((int(s_), int(d_)))
                    nd += 1
            ops.append([f, fo, r, do, nd, body, yoff])

        for op in cs._ops_rt:
            add_op(*op)
        npre = len(ops)
        for op in cs._post_rt:
            add_op(*op)
        for ch, fidx in cs._flush_rt:
            add_op(ch, fidx, "none", [], -1, 0)
        lists: list[int] = []
        body = []
        mx_base = cs._MX.ctypes.data
        for b, name in zip(cs._bodies, cs.order, strict=True):
            x0 = b.xs.start
            cols_off = len(lists)
            lists.extend(int(k) for k in b.cols)
            feed_off = len(lists)
            lists.extend(int(k) for k in b.feed)
            mx = (b.Mx.ctypes.data - mx_base) // 8 if b.Mx.size else 0
            body.append([b.sy.start, b.ny, b.se.start, b.se.stop - b.se.start, x0, len(b.xv),
                         b.nu, mx, x0, cid(b.xch), cid(b.ych), cols_off, len(b.cols), feed_off,
                         len(b.feed), cindex[name]])  # fmt: skip
        hold = [cid(ch) for ch in cs._hold_channels]
        # the loop unknowns: V[res_uv[j]] = Y[res_y[j]]; body and row of each output, body and
        # column in x of each input (Binding._bind_scales)
        rb, rr, cb, cc = cs._rb, cs._rr, cs._cb, cs._cc
        vr: list[int] = []
        ch_rows = []
        for ch in channels:
            ch_rows.append([cindex[ch.component.name], len(vr), len(ch.names)])
            vr.extend(ch.component.vr[n] for n in ch.names)
        self.channels = channels
        nres = len(cs._res_u)
        nY = len(cs._Y)
        ng = len(cs._g)
        maxny = max([b.ny for b in cs._bodies], default=0)
        order = cs.guess_order
        # arrays kept alive with the plan
        k = self._keep = {
            "inst": np.array([c.instance_address for c in comps], dtype=np.uint64),
            "fget": np.array([c.function_address("fmi2GetReal") for c in comps], np.uint64),
            "fset": np.array([c.function_address("fmi2SetReal") for c in comps], np.uint64),
            "fstep": np.array([c.function_address("fmi2DoStep") for c in comps], np.uint64),
            "fdd": np.array([c.function_address("fmi2GetDirectionalDerivative")
                             if c.provides_directional_derivative else 0 for c in comps],
                            np.uint64),  # fmt: skip
            "ch": _i64(ch_rows), "vr": np.array(vr, dtype=np.uint32),
            "chbuf": np.array([ch.values.ctypes.data for ch in channels], dtype=np.uint64),
            "body": _i64(body), "lists": _i64(lists), "ops": _i64(ops), "idx": _i64(idx),
            "dest": _i64(dest), "hold": _i64(hold), "res_uv": _i64(cs._res_uv),
            "res_y": _i64(cs._res_y), "rb": _i64(rb), "rr": _i64(rr), "cb": _i64(cb),
            "cc": _i64(cc), "g": _i64(cs._g),
            "ang": _i64(cs._angles if cs._angles is not None else []),
            "work": np.zeros(nres * nres + 5 * nres + 2 * nY + max(ng, maxny) + 1),
            "piv": np.zeros(max(nres, 1), dtype=np.int64),
            "stale": np.zeros(max(len(cs._bodies), 1), dtype=np.int64),
            "ht": np.zeros(order + 1), "hv": np.zeros((order + 1) * max(ng, 1)),
            "fsetder": np.array([c.function_address("fmi2SetRealInputDerivatives")
                                 if c.can_interpolate_inputs else 0 for c in comps],
                                np.uint64),  # fmt: skip
            "dch": _i64([cid(cs._hold_channels[j]) for j in cs._deriv_hold]),
            "dchbuf": np.array([d.values.ctypes.data for d in cs._deriv_channels],
                               dtype=np.uint64),  # fmt: skip
            "orders": np.ones(max([len(ch.names) for ch in channels], default=1),
                              dtype=np.intc),  # fmt: skip
            "mean": _i64(cs._mean), "unit": _i64(cs._res_unit),
        }  # fmt: skip
        p = self.plan = _Plan()
        p.ncomp, p.nch, p.nbody = len(comps), len(channels), len(cs._bodies)
        p.nops, p.npre, p.nhold, p.nres = len(ops), npre, len(hold), nres
        p.ng, p.nang, p.order = ng, len(k["ang"]), order
        for name, a in k.items():
            setattr(p, name, _addr(a) if a.size else None)
        p.ndch, p.nmean = len(k["dch"]), len(k["mean"])
        for name in ("V", "P", "H", "D", "Y", "E", "XR", "MX", "B", "Vh", "Th", "sY", "sV"):
            a = getattr(cs, "_" + name)
            setattr(p, name, _addr(a) if a.size else None)
        p.nY, p.nV = nY, len(cs._V)
        p.forced = int(cs._forced)
        self._iters = np.zeros(0, dtype=np.int64)
        self._address = addressof(p)

    def run(self, n: int, h: float, tolerance: float, max_iterations: int, t0: float,
            k0: int) -> list[int]:  # fmt: skip
        """``n`` communication steps of ``h`` (s) from the master's current point, step ``k0``
        of a run from ``t0`` (the time after step k is ``t0 + k h``); the loop iterations of
        each. Raises the Python path's CosimError (``done`` steps made)."""
        cs, p, k = self.cs, self.plan, self._keep
        if len(self._iters) < n:
            self._iters = np.zeros(n, dtype=np.int64)
        p.iters = _addr(self._iters)
        # the master's state in
        p.t, p.h_prev, p.have_prev = cs.t, cs._h_prev, int(cs._have_prev)
        p.extrapolate = COUPLING_CODES[cs._coupling]
        p.degree, p.nhist = cs._degree, cs._Nh
        stale = k["stale"]
        for i, b in enumerate(cs._bodies):
            stale[i] = b.map is None
        p.dirty = int(cs._mx_dirty or bool(stale.any()))
        hist = cs._hist[-(cs.guess_order + 1) :]
        p.nh = len(hist)
        ng = len(cs._g)
        for j, (tj, uj) in enumerate(hist):
            k["ht"][j] = tj
            k["hv"][j * ng : (j + 1) * ng] = uj
        p.calls = p.updates = 0
        code = _step.run(self._address, n, h, tolerance, max_iterations, t0, k0)
        # ... and out
        cs.t, cs._h_prev, cs._have_prev = p.t, p.h_prev, bool(p.have_prev)
        cs._Nh = p.nhist
        cs._mx_dirty = bool(p.dirty)
        cs._hist = [(float(k["ht"][j]), k["hv"][j * ng : (j + 1) * ng].copy())
                    for j in range(p.nh)]  # fmt: skip
        cs.stats.fmu_calls += p.calls
        cs.stats.jacobian_updates += p.updates
        for i, b in enumerate(cs._bodies):
            if stale[i]:
                b.map = None
            elif b.map is None:
                b.map = LoopMap.from_dense(b.M, b.c, b.has_parent, b.n_children)
                cs._maps = None
        its = self._iters[: p.done].tolist()
        cs.stats.iterations += sum(its)
        cs.stats.compiled_steps += len(its)
        if its:
            cs.last_iterations = its[-1]
        self.done = its
        if code:
            self._raise(code)
        return its

    def _raise(self, code: int) -> None:
        cs, p = self.cs, self.plan
        if code in (E_SET, E_GET):
            self.channels[p.err_index]._fail(
                "fmi2SetReal" if code == E_SET else "fmi2GetReal", int(p.err_status)
            )
        if code == E_STEP:
            cs._steppers[p.err_index].fail(cs.t, int(p.err_status))
        if code == E_SETDER:
            cs._deriv_channels[p.err_index].fail(int(p.err_status))
        if code == E_DD:
            b = cs._bodies[p.err_index]
            b.dd.fail(b.xnames[p.err_aux], int(p.err_status))
        if code == E_CONVERGE:
            where = cs._res_names[p.err_where] if p.err_where >= 0 else ""
            raise CosimError(
                f"the algebraic loop did not converge: residual {p.err_res:.3g} at '{where}' "
                f"after {p.err_aux} iterations", cs.t,
            )  # fmt: skip
        if code == E_SINGULAR:
            raise CosimError(f"singular loop equations at component '{cs.order[p.err_index]}'",
                             cs.t)  # fmt: skip
        raise CosimError(f"the compiled step failed (code {code}, status "
                         f"{_STATUS.get(p.err_status, p.err_status)})", cs.t)  # fmt: skip


__all__ = ["CompiledStep", "applies", "available"]
