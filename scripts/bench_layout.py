#!/usr/bin/env python
"""Why the object engine's cost per body grew from 10 to 1000 bodies: one sweep, several layouts.

Issue 2 asks for a chain cost per body flat within 20 % from 10 to 1000 bodies; the object
engine (now ``Engine.object_derivative``) gave about 1.2 to 1.3 (``scripts/bench_engine.py``)
although its work per body was the same at every size (valgrind's cachegrind, with the since
retired ``scripts/bench_cache.py``: 305k against 308k instructions per body at 1000 and 10
bodies); what grew was the memory traffic. These measurements led to the compiled engine
(``titopfmu/assembly/compiled.py``), which ``Engine.derivative`` now runs: the ``engine`` column
below is that engine. This script runs one stand-in sweep with the object engine's per-body
numpy work on a serial chain of 1-dof joint bodies (joint kinematics, the bias terms on floats,
the joint equation, the loop map, the rank-1 backward condensation, the forward recovery and the
state derivative; random constants, no physics) in three data layouts:

``objects``  the engine's kind of layout, with fewer objects per body than the engine: each
             body's constants are attributes of its own Python object, each evaluation
             allocates every body's run-time arrays afresh and keeps them to the end.
``tuples``   the constants of all bodies copied into contiguous per-quantity stacks, each body
             holding a tuple of views into them (built once); run-time arrays as ``objects``.
``stacks``   a Model/Data layout (cf. Pinocchio): constants and run-time values in per-quantity
             stacks of shape (bodies, ...), reached by index, run-time values written in place.

and, when numba is installed (a dependency of titopfmu),

``compiled``  the ``stacks`` sweep as one numba-compiled loop (the same arithmetic, small numpy
              operations inside nopython code), to size the compiled option of the issue;

and prints, measured side by side with the engine itself (``Engine.derivative`` on the chains of
``bench_engine.py``; round-robin batches, garbage collector off), the cost per body of each at
each size and its ratio to the smallest size. The layouts differ only in where the numbers live;
they run the same numpy calls on the same values. The machine's state moves these ratios (its
last-level cache is shared with other tenants): compare rows of one run, not runs.

Usage: python scripts/bench_layout.py [--sizes N ...] [--repeats N] [--seconds S]
"""

from __future__ import annotations

import argparse
import math
import statistics

import numpy as np
from bench_engine import _batch, serial_chain  # this script's folder is on sys.path when run

from titopfmu import Engine

# constants of one body: name -> shape (the stand-in for a revolute body's model quantities)
CONSTANTS = {
    "Gc": (45, 3), "D": (6, 6), "mDPi": (6, 6), "PiTT": (6, 6), "tauPi": (6, 6), "tau": (6, 6),
    "U": (6,), "V": (6,), "aP": (6,), "s": (6,), "DS": (6,), "pc": (3,), "r": (3,), "scal": (5,),
}  # fmt: skip
# run-time values of one body, written by the sweep: name -> shape
DATA = {
    "g": (45,), "tw": (6,), "e": (6,), "R": (3, 3), "ip": (3,), "twc": (6,), "ipc": (3,),
    "PP": (6, 6), "PC": (6, 6), "CP": (6, 6), "cP": (6,), "cC": (6,), "XP": (6,), "xc": (),
    "K": (6, 6), "k": (6,), "A": (6, 6), "a": (6,), "acc": (6,), "wc": (6,), "ud": (),
}  # fmt: skip
GRAVITY = np.array((0.0, -9.81, 0.0))


class Body:
    """``objects`` layout: a body's constants as attributes of its own object."""


def model(n: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Constants of n bodies as stacks (scaled so that the sweep stays finite)."""
    rng = np.random.default_rng(seed)
    return {k: 0.05 * rng.random((n, *shape)) for k, shape in CONSTANTS.items()}


def state(n: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, 2 * n)


# ----------------------------------------------------------------------------------------------
# objects and tuples: run-time values freshly allocated per evaluation (as the engine)
# ----------------------------------------------------------------------------------------------


def sweep_fresh(bodies: list, x: np.ndarray, efforts: list[np.ndarray], attrs: bool) -> np.ndarray:
    """One evaluation; ``bodies[i]`` is a Body (``attrs``) or a tuple of constants."""
    n = len(bodies)
    fwd: list = [None] * n
    tw_p, R_p, ip_p = np.ones(6), np.eye(3), np.zeros(3)
    for i in range(n):
        b = bodies[i]
        if attrs:
            Gc, D, mDPi, PiTT, tauPi, tau = b.Gc, b.D, b.mDPi, b.PiTT, b.tauPi, b.tau
            aP, s_, DS, pc, r_, scal = b.aP, b.s, b.DS, b.pc, b.r, b.scal
        else:
            Gc, D, mDPi, PiTT, tauPi, tau, _, _, aP, s_, DS, pc, r_, scal = b
        th, thd = float(x[2 * i]), float(x[2 * i + 1])
        g = Gc.dot(np.array((1.0, math.sin(th), 1.0 - math.cos(th))))
        G, Rab = g[0:36].reshape(6, 6), g[36:45].reshape(3, 3)
        vx, vy, vz, wx, wy, wz = G.dot(tw_p).tolist()
        rx, ry, rz = r_.tolist()
        e = np.array((
            thd * (rz * vy - ry * vz), thd * (rx * vz - rz * vx), thd * (ry * vx - rx * vy),
            thd * (rz * wy - ry * wz), thd * (rx * wz - rz * wx), thd * (ry * wx - rx * wy),
        ))  # fmt: skip
        tw = np.array((vx, vy, vz, wx + thd * rx, wy + thd * ry, wz + thd * rz))
        ip = ip_p.dot(Rab)
        R = R_p.dot(Rab)
        twc = tau.dot(tw)
        ipc = ip + pc
        h = _bias(tw, D, R, scal)
        r = D.dot(e)
        r += h
        al = scal[4] * (float(efforts[i][0]) - float(s_.dot(r)))
        a0 = s_ * al
        a0 += e
        w0 = DS * -al
        w0 -= r
        Gt = G.T
        fwd[i] = (
            G, e, tw, ip, R, twc, ipc, Gt.dot(mDPi.dot(G)), Gt.dot(PiTT), tauPi.dot(G),
            Gt.dot(w0), tau.dot(a0), aP.dot(G), al,
        )  # fmt: skip
        tw_p, R_p, ip_p = twc, R, ipc
    back: list = [None] * n
    Kc = kc = None
    for i in range(n - 1, -1, -1):
        _, _, _, _, _, _, _, PP, PC, CP, cP, cC, _, _ = fwd[i]
        if Kc is None:
            K, k, A, a = PP, cP, None, None
        else:
            b = bodies[i]
            U, V = (b.U, b.V) if attrs else (b[6], b[7])
            w = V.dot(Kc)
            sden = 1.0 - float(w.dot(U))
            a = U * (float(w.dot(cC)) / sden)
            a += cC
            A = np.multiply.outer(U, w.dot(CP))
            A += CP
            K = PC.dot(Kc.dot(A))
            K += PP
            t = Kc.dot(a)
            t += kc
            k = PC.dot(t)
            k += cP
        back[i] = (K, k, A, a)
        Kc, kc = K, k
    ud = np.zeros(n)
    ap = np.zeros(6)
    for i in range(n - 1):
        _, _, A, a = back[i]
        K1, k1 = back[i + 1][0:2]
        acc = A.dot(ap)
        acc += a
        wc = K1.dot(acc)
        wc += k1
        b = bodies[i]
        V = b.V if attrs else b[7]
        fw = fwd[i]
        ud[i] = float(fw[12].dot(ap)) + fw[13] + float(V.dot(wc))
        back[i] = (K1, k1, acc, wc)
        ap = acc
    dx = np.empty(2 * n)
    dx[0::2] = x[1::2]
    dx[1::2] = ud
    return dx


def _bias(tw: np.ndarray, D: np.ndarray, R: np.ndarray, scal: np.ndarray) -> np.ndarray:
    """Stand-in for BodyBlock.bias: the same float arithmetic."""
    vx, vy, vz, wx, wy, wz = tw.tolist()
    a, b, c, d, e, f = D.dot(tw).tolist()
    gx, gy, gz = GRAVITY.dot(R).tolist()
    m, bx, by, bz, _ = scal.tolist()
    return np.array((
        wy * c - wz * b - m * gx, wz * a - wx * c - m * gy, wx * b - wy * a - m * gz,
        vy * c - vz * b + wy * f - wz * e - m * (by * gz - bz * gy),
        vz * a - vx * c + wz * d - wx * f - m * (bz * gx - bx * gz),
        vx * b - vy * a + wx * e - wy * d - m * (bx * gy - by * gx),
    ))  # fmt: skip


# ----------------------------------------------------------------------------------------------
# stacks: Model/Data
# ----------------------------------------------------------------------------------------------


def sweep_stacks(M: dict, W: dict, x: np.ndarray, efforts: list[np.ndarray]) -> np.ndarray:
    """One evaluation on per-quantity stacks; ``W`` (the Data) is overwritten."""
    Gc_, D_, mDPi_, PiTT_, tauPi_, tau_, U_, V_, aP_, s_, DS_, pc_, r_, scal_ = M.values()
    Wg, Wtw, We, WR, Wip, Wtwc, Wipc, WPP, WPC, WCP, WcP, WcC, WXP, Wxc = list(W.values())[:14]
    WK, Wk, WA, Wa, Wacc, Wwc, Wud = list(W.values())[14:]
    n = len(x) // 2
    t66, t6 = np.empty((6, 6)), np.empty(6)
    tw_p, R_p, ip_p = np.ones(6), np.eye(3), np.zeros(3)
    for i in range(n):
        th, thd = float(x[2 * i]), float(x[2 * i + 1])
        g, tw, R, e = Wg[i], Wtw[i], WR[i], We[i]
        np.dot(Gc_[i], np.array((1.0, math.sin(th), 1.0 - math.cos(th))), out=g)
        G, Rab = g[0:36].reshape(6, 6), g[36:45].reshape(3, 3)
        vx, vy, vz, wx, wy, wz = G.dot(tw_p).tolist()
        rx, ry, rz = r_[i].tolist()
        e[:] = (
            thd * (rz * vy - ry * vz), thd * (rx * vz - rz * vx), thd * (ry * vx - rx * vy),
            thd * (rz * wy - ry * wz), thd * (rx * wz - rz * wx), thd * (ry * wx - rx * wy),
        )  # fmt: skip
        tw[:] = (vx, vy, vz, wx + thd * rx, wy + thd * ry, wz + thd * rz)
        ip, twc, ipc = Wip[i], Wtwc[i], Wipc[i]
        np.dot(ip_p, Rab, out=ip)
        np.dot(R_p, Rab, out=R)
        np.dot(tau_[i], tw, out=twc)
        np.add(ip, pc_[i], out=ipc)
        D = D_[i]
        scal = scal_[i]
        h = _bias(tw, D, R, scal)
        r = D.dot(e)
        r += h
        s = s_[i]
        al = float(scal[4]) * (float(efforts[i][0]) - float(s.dot(r)))
        Wxc[i] = al
        a0 = s * al
        a0 += e
        w0 = DS_[i] * -al
        w0 -= r
        Gt = G.T
        np.dot(mDPi_[i], G, out=t66)
        np.dot(Gt, t66, out=WPP[i])
        np.dot(Gt, PiTT_[i], out=WPC[i])
        np.dot(tauPi_[i], G, out=WCP[i])
        np.dot(Gt, w0, out=WcP[i])
        np.dot(tau_[i], a0, out=WcC[i])
        np.dot(aP_[i], G, out=WXP[i])
        tw_p, R_p, ip_p = twc, R, ipc
    Kc = kc = None
    for i in range(n - 1, -1, -1):
        K, k = WK[i], Wk[i]
        if Kc is None:
            K[...] = WPP[i]
            k[...] = WcP[i]
        else:
            U, A, a, cC, CP = U_[i], WA[i], Wa[i], WcC[i], WCP[i]
            np.dot(V_[i], Kc, out=t6)
            sden = 1.0 - float(t6.dot(U))
            np.multiply(U, float(t6.dot(cC)) / sden, out=a)
            a += cC
            np.multiply.outer(U, t6.dot(CP), out=A)
            A += CP
            np.dot(Kc, A, out=t66)
            np.dot(WPC[i], t66, out=K)
            K += WPP[i]
            np.dot(Kc, a, out=t6)
            t6 += kc
            np.dot(WPC[i], t6, out=k)
            k += WcP[i]
        Kc, kc = K, k
    ap = np.zeros(6)
    for i in range(n - 1):
        acc, wc = Wacc[i], Wwc[i]
        np.dot(WA[i], ap, out=acc)
        acc += Wa[i]
        np.dot(WK[i + 1], acc, out=wc)
        wc += Wk[i + 1]
        Wud[i] = float(WXP[i].dot(ap)) + float(Wxc[i]) + float(V_[i].dot(wc))
        ap = acc
    Wud[n - 1] = 0.0
    dx = np.empty(2 * n)
    dx[0::2] = x[1::2]
    dx[1::2] = Wud
    return dx


# ----------------------------------------------------------------------------------------------
# compiled: the stacks sweep as one loop for numba (optional)
# ----------------------------------------------------------------------------------------------


def sweep_loop(Gc, D_, mDPi, PiTT, tauPi, tau, U_, V_, aP, s_, DS_, pc, r_, scal, efforts, x,
               Wtw, We, WR, Wip, WPP, WPC, WCP, WcP, WcC, WXP, Wxc, WK, Wk, WA, Wa, Wud, g):  # fmt: skip  # noqa: E501
    """``sweep_stacks`` written for numba's nopython mode (efforts as one vector)."""
    n = x.shape[0] // 2
    tw_p, R_p, ip_p = np.ones(6), np.eye(3), np.zeros(3)
    G, Rab, h = np.empty((6, 6)), np.empty((3, 3)), np.empty(6)
    grav = np.array((0.0, -9.81, 0.0))
    for i in range(n):
        th, thd = x[2 * i], x[2 * i + 1]
        c1, c2 = math.sin(th), 1.0 - math.cos(th)
        for k in range(45):
            g[k] = Gc[i, k, 0] + Gc[i, k, 1] * c1 + Gc[i, k, 2] * c2
        for a in range(6):
            for b in range(6):
                G[a, b] = g[6 * a + b]
        for a in range(3):
            for b in range(3):
                Rab[a, b] = g[36 + 3 * a + b]
        t0 = G @ tw_p
        vx, vy, vz, wx, wy, wz = t0[0], t0[1], t0[2], t0[3], t0[4], t0[5]
        rx, ry, rz = r_[i, 0], r_[i, 1], r_[i, 2]
        e, tw = We[i], Wtw[i]
        e[0], e[1], e[2] = (
            thd * (rz * vy - ry * vz),
            thd * (rx * vz - rz * vx),
            thd * (ry * vx - rx * vy),
        )
        e[3], e[4], e[5] = (
            thd * (rz * wy - ry * wz),
            thd * (rx * wz - rz * wx),
            thd * (ry * wx - rx * wy),
        )
        tw[0], tw[1], tw[2] = vx, vy, vz
        tw[3], tw[4], tw[5] = wx + thd * rx, wy + thd * ry, wz + thd * rz
        Wip[i] = ip_p @ Rab
        WR[i] = R_p @ Rab
        twc = tau[i] @ tw
        ipc = Wip[i] + pc[i]
        D = D_[i]
        p = D @ tw  # bias, as _bias
        gv = grav @ WR[i]
        m, bx, by, bz = scal[i, 0], scal[i, 1], scal[i, 2], scal[i, 3]
        vx, vy, vz, wx, wy, wz = tw[0], tw[1], tw[2], tw[3], tw[4], tw[5]
        a_, b_, c_, d_, e_, f_ = p[0], p[1], p[2], p[3], p[4], p[5]
        gx, gy, gz = gv[0], gv[1], gv[2]
        h[0] = wy * c_ - wz * b_ - m * gx
        h[1] = wz * a_ - wx * c_ - m * gy
        h[2] = wx * b_ - wy * a_ - m * gz
        h[3] = vy * c_ - vz * b_ + wy * f_ - wz * e_ - m * (by * gz - bz * gy)
        h[4] = vz * a_ - vx * c_ + wz * d_ - wx * f_ - m * (bz * gx - bx * gz)
        h[5] = vx * b_ - vy * a_ + wx * e_ - wy * d_ - m * (bx * gy - by * gx)
        r = D @ e + h
        s = s_[i]
        al = scal[i, 4] * (efforts[i] - s @ r)
        Wxc[i] = al
        a0 = s * al + e
        w0 = DS_[i] * -al - r
        Gt = G.T.copy()
        WPP[i] = Gt @ (mDPi[i] @ G)
        WPC[i] = Gt @ PiTT[i]
        WCP[i] = tauPi[i] @ G
        WcP[i] = Gt @ w0
        WcC[i] = tau[i] @ a0
        WXP[i] = aP[i] @ G
        tw_p, R_p, ip_p = twc, WR[i], ipc
    for i in range(n - 1, -1, -1):
        if i == n - 1:
            WK[i] = WPP[i]
            Wk[i] = WcP[i]
        else:
            U = U_[i]
            t6 = V_[i] @ WK[i + 1]
            sden = 1.0 - t6 @ U
            Wa[i] = U * ((t6 @ WcC[i]) / sden) + WcC[i]
            z = t6 @ WCP[i]
            for a in range(6):
                for b in range(6):
                    WA[i, a, b] = WCP[i, a, b] + U[a] * z[b]
            WK[i] = WPC[i] @ (WK[i + 1] @ WA[i]) + WPP[i]
            Wk[i] = WPC[i] @ (WK[i + 1] @ Wa[i] + Wk[i + 1]) + WcP[i]
    ap = np.zeros(6)
    for i in range(n - 1):
        acc = WA[i] @ ap + Wa[i]
        wc = WK[i + 1] @ acc + Wk[i + 1]
        Wud[i] = WXP[i] @ ap + Wxc[i] + V_[i] @ wc
        ap = acc
    Wud[n - 1] = 0.0
    dx = np.empty(2 * n)
    for i in range(n):
        dx[2 * i] = x[2 * i + 1]
        dx[2 * i + 1] = Wud[i]
    return dx


_DATA_ARGS = ("tw", "e", "R", "ip", "PP", "PC", "CP", "cP", "cC", "XP", "xc", "K", "k", "A", "a",
              "ud")  # fmt: skip


def compiled_sweep():
    """``sweep_loop`` compiled by numba, or None when numba is not installed."""
    try:
        import numba
    except ImportError:
        return None
    return numba.njit(sweep_loop)


# ----------------------------------------------------------------------------------------------
# the benchmark
# ----------------------------------------------------------------------------------------------


def cases(n: int, compiled=None) -> dict[str, object]:
    """The engine and the layouts on n-body chains, as zero-argument callables (``compiled``:
    the result of :func:`compiled_sweep`, adds that layout)."""
    M = model(n)
    x = state(n)
    efforts = [np.array([v]) for v in np.random.default_rng(2).normal(0.0, 0.5, n)]
    objects = []
    for i in range(n):
        b = Body()
        for name in CONSTANTS:
            setattr(b, name, M[name][i].copy())  # allocated body by body, as blocks are
        objects.append(b)
    tuples = [tuple(M[name][i] for name in CONSTANTS) for i in range(n)]
    W = {name: np.zeros((n, *shape)) for name, shape in DATA.items()}
    engine = Engine(serial_chain(n))
    x0 = engine.initial_state()
    out = {
        "engine": lambda: engine.derivative(0.0, x0),
        "objects": lambda: sweep_fresh(objects, x, efforts, True),
        "tuples": lambda: sweep_fresh(tuples, x, efforts, False),
        "stacks": lambda: sweep_stacks(M, W, x, efforts),
    }
    if compiled is not None:
        Wc = {name: np.zeros((n, *shape)) for name, shape in DATA.items()}
        args = ([M[k] for k in CONSTANTS] + [np.array([float(v[0]) for v in efforts]), x]
                + [Wc[k] for k in _DATA_ARGS] + [np.empty(45)])  # fmt: skip
        out["compiled"] = lambda: compiled(*args)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000], metavar="N")
    ap.add_argument("--repeats", type=int, default=7, help="interleaved batches per case")
    ap.add_argument("--seconds", type=float, default=0.3, help="length of one batch (s)")
    args = ap.parse_args(argv)
    if min(args.sizes) < 2:
        ap.error("--sizes: every chain needs at least 2 bodies")
    sizes = sorted(set(args.sizes))
    compiled = compiled_sweep()
    if compiled is None:
        print("numba is not installed: no 'compiled' row (pip install numba to add it)")
    runs = {}
    for n in sizes:
        cs = cases(n, compiled)
        ref = cs["objects"]()
        for layout, fn in cs.items():
            dx = fn()
            if layout != "engine" and not np.allclose(dx, ref, rtol=1e-12, atol=1e-12):
                raise SystemExit(f"layout {layout} disagrees with objects at {n} bodies")
            calls = max(3, int(args.seconds / max(_batch(fn, 3), 1e-9)))
            runs[(layout, n)] = (fn, calls)
    times: dict = {k: [] for k in runs}
    keys = list(runs)
    for r in range(args.repeats):
        for k in keys[r % len(keys) :] + keys[: r % len(keys)]:
            fn, calls = runs[k]
            times[k].append(_batch(fn, calls) / k[1])
    print(f"cost of one evaluation per body (us), median of {args.repeats} interleaved batches")
    print(f"    {'layout':<10}" + "".join(f"{n:>10}" for n in sizes) + f"{'ratio':>10}")
    for layout in ("engine", "objects", "tuples", "stacks", "compiled"):
        if (layout, sizes[0]) not in times:
            continue
        per = [statistics.median(times[(layout, n)]) * 1e6 for n in sizes]
        cells = "".join(f"{p:10.2f}" for p in per)
        print(f"    {layout:<10}{cells}{per[-1] / per[0]:10.3f}")
    print(f"    ratio = per-body cost at {sizes[-1]} / at {sizes[0]} bodies")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
