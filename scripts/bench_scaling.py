#!/usr/bin/env python
"""Scaling of one acceleration solve with the number of bodies, on the branch system of seed 002.

The system is the one of the seed's Fig. 1 (:func:`titopfmu.reference.riccati.branch_system`):
two short subchains (bodies 1-3 and 5-9) hanging from the multi-input body 11, itself hanging
from a long chain 13..N up to the ceiling; N = 2 n - 1 for n bodies. For each engine and each
number of bodies n the script times one evaluation of the accelerations at the seed's initial
state, best of several repeats, both as process CPU time (used for the fit: it does not count the
time the process waits while other jobs use the CPU) and as wall-clock time; it prints the time per
solve and per body, and fits the exponent p of ``time ∝ n^p`` by least squares on
log-log axes -- over all sizes and over the sizes >= 1000 (the small sizes are dominated by the
fixed per-call overhead). The target of issue 5 is p <= 1.1 up to at least 10,000 bodies. The
largest spatial run is then compared with the seed's "more than 100,000 degrees of freedom".

Engines (columns; add one by adding an entry to ``ENGINES``):

* ``riccati-3d``: the Riccati transfer-matrix solver, spatial, ball hinges (3 dof per body);
* ``riccati-2d``: the same, planar reduction (35), revolute hinges (1 dof per body);
* ``titop-2d``: the TITOP in-process engine (``titopfmu.Engine(system).derivative``) on the
  planar branch system built from a ``Ground`` and ``RevoluteBody`` blocks (spherical TITOP
  joints are not used here). Before timing, its joint accelerations are checked against
  ``riccati-2d`` at a random state.

Usage: python scripts/bench_scaling.py [--quick] [--sizes 10 100 300 1000 3000 10000]
       [--engines riccati-3d riccati-2d titop-2d] [--max-dof 100000] [--budget 2.0]
"""

from __future__ import annotations

import argparse
import gc
import math
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from titopfmu import Constant, Engine, Ground, RevoluteBody, System
from titopfmu.reference.riccati import RiccatiModel, branch_system, chain_bodies

SEED_DOF = 100_000  # "a spatial branch system with more than 100000 degrees of freedom"
TARGET_EXPONENT = 1.1


@dataclass
class Case:
    """A built system: ``solve()`` evaluates the accelerations once; ``dof`` its size."""

    solve: Callable[[], object]
    dof: int
    build_s: float


# ----------------------------------------------------------------------------------------------
# engines
# ----------------------------------------------------------------------------------------------


def riccati_case(n_bodies: int, planar: bool) -> Case:
    t0 = time.perf_counter()
    ex = branch_system(chain_bodies(n_bodies), planar=planar)
    build = time.perf_counter() - t0
    model, y0 = ex.model, ex.y0
    return Case(lambda: model.accelerations(y0), model.dof, build)


def titop_branch_system(model: RiccatiModel, y: np.ndarray) -> tuple[Engine, np.ndarray]:
    """A TITOP version of a planar Riccati model (revolute hinges about z, one Ground root), and
    the TITOP state equal to the Riccati state ``y``.

    Each body becomes a ``RevoluteBody`` (axis z, reference point P = the hinge point O, same
    centre of mass and child points, the 3-D rod inertia with J_zz as in the Riccati model) fed a
    zero joint torque; the ceiling is a ``Ground`` with one child port per root.
    """
    if not model.planar:
        raise ValueError("titop_branch_system: planar models only (revolute hinges)")
    g = np.asarray(model.gravity, dtype=float)
    children: dict[str, list] = {b.name: [] for b in model.bodies}
    roots = []
    for b in model.bodies:
        (roots if b.parent is None else children[b.parent]).append(b)
    s = System("branch")
    s.add(Ground("ceiling", children={f"h_{b.name}": _xyz(b.joint_point) for b in roots}))
    s.add(Constant("zero", 0.0))
    q, v = model.split(y)
    index = {b.name: k for k, b in enumerate(model.bodies)}
    for b in model.bodies:
        Jz = float(b.inertia)
        phi0 = 0.0 if b.joint_rotation is None else float(b.joint_rotation)
        c, s0 = math.cos(phi0), math.sin(phi0)
        s.add(
            RevoluteBody(
                b.name, b.mass, np.diag([Jz, Jz, Jz]), axis=(0, 0, 1),
                P_a0b=[[c, -s0, 0.0], [s0, c, 0.0], [0.0, 0.0, 1.0]],
                theta0=float(q[index[b.name]]), theta_dot0=float(v[index[b.name]]),
                com=_xyz(b.com), children={f"h_{k.name}": _xyz(k.joint_point) for k in
                                           children[b.name]} or None,
                gravity=g,
            )
        )  # fmt: skip
        s.connect("zero.y", f"{b.name}.joint.tau")
    for b in roots:
        s.connect(f"ceiling.h_{b.name}", f"{b.name}.P")
    for b in model.bodies:
        for k in children[b.name]:
            s.connect(f"{b.name}.h_{k.name}", f"{k.name}.P")
    engine = Engine(s)
    return engine, engine.initial_state()


def _xyz(p) -> list[float]:
    p = [float(c) for c in np.asarray(p, dtype=float).ravel()]
    return p + [0.0] * (3 - len(p))


def titop_accelerations(engine: Engine, model: RiccatiModel, x: np.ndarray) -> np.ndarray:
    """θ̈ of every hinge (Riccati model order) from the TITOP engine's state derivative."""
    dx = engine.derivative(0.0, x)
    slices = engine.plan.state_slices
    return np.array([dx[slices[b.name]][1] for b in model.bodies])


def titop_case(n_bodies: int) -> Case:
    t0 = time.perf_counter()
    ex = branch_system(chain_bodies(n_bodies), planar=True)
    engine, x0 = titop_branch_system(ex.model, ex.y0)
    build = time.perf_counter() - t0
    return Case(lambda: engine.derivative(0.0, x0), ex.model.dof, build)


def check_titop_against_riccati(n_bodies: int = 12, seed: int = 0) -> float:
    """Max |θ̈_TITOP - θ̈_Riccati| / max(1, |θ̈|) at a random planar state."""
    rng = np.random.default_rng(seed)
    ex = branch_system(chain_bodies(n_bodies), planar=True)
    m = ex.model
    y = m.state(rng.uniform(-np.pi, np.pi, m.n_bodies), rng.normal(size=m.n_bodies))
    engine, x = titop_branch_system(m, y)
    a_t = titop_accelerations(engine, m, x)
    a_r = m.accelerations(y)
    return float(np.max(np.abs(a_t - a_r)) / max(1.0, float(np.max(np.abs(a_r)))))


ENGINES: dict[str, Callable[[int], Case]] = {
    "riccati-3d": lambda n: riccati_case(n, planar=False),
    "riccati-2d": lambda n: riccati_case(n, planar=True),
    "titop-2d": titop_case,
}


# ----------------------------------------------------------------------------------------------
# timing and fit
# ----------------------------------------------------------------------------------------------


def time_solve(case: Case, budget: float, max_repeats: int = 50) -> tuple[float, float]:
    """Best process CPU time and best wall time (s) of repeated solves within about ``budget``
    seconds (at least 3 repeats)."""
    case.solve()  # warm-up
    best_cpu = best_wall = math.inf
    spent = 0.0
    k = 0
    gc.collect()
    while k < 3 or (spent < budget and k < max_repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        case.solve()
        c1, t1 = time.process_time(), time.perf_counter()
        best_cpu = min(best_cpu, c1 - c0)
        best_wall = min(best_wall, t1 - t0)
        spent += t1 - t0
        k += 1
    return best_cpu, best_wall


def fit_exponent(ns: list[int], ts: list[float]) -> float:
    """Least-squares slope of log t against log n."""
    if len(ns) < 2:
        return float("nan")
    return float(np.polyfit(np.log(ns), np.log(ts), 1)[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 300, 1000, 3000, 10000])
    ap.add_argument("--engines", nargs="+", default=list(ENGINES), choices=list(ENGINES))
    ap.add_argument("--max-dof", type=int, default=SEED_DOF + 2, help="largest spatial run (dof)")
    ap.add_argument("--budget", type=float, default=2.0, help="seconds of repeats per point")
    ap.add_argument("--titop-max", type=int, default=10000, help="largest TITOP size (bodies)")
    ap.add_argument("--quick", action="store_true", help="sizes 10..1000, small budget")
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes = [s for s in args.sizes if s <= 1000] or [10, 100, 1000]
        args.budget = min(args.budget, 0.3)
        args.max_dof = min(args.max_dof, 3000)
    sizes = sorted(set(max(7, s) for s in args.sizes))

    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}")
    print("system: branch system of seed 002, Fig. 1 (N = 2 n - 1), initial state of the seed")
    if "titop-2d" in args.engines:
        err = check_titop_against_riccati()
        print(f"check: TITOP vs Riccati planar joint accelerations, 12 bodies: {err:.2e} (rel.)")
    print()

    results: dict[str, dict[int, tuple[float, float]]] = {e: {} for e in args.engines}
    for n in sizes:
        for e in args.engines:
            if e.startswith("titop") and n > args.titop_max:
                continue
            case = ENGINES[e](n)
            results[e][n] = time_solve(case, args.budget)
            del case
            gc.collect()

    header = f"{'bodies':>8}" + "".join(f" | {e:>33}" for e in args.engines)
    print("time per acceleration solve: CPU ms, CPU µs per body, (wall ms):")
    print(header)
    print("-" * len(header))
    for n in sizes:
        row = f"{n:>8}"
        for e in args.engines:
            if n in results[e]:
                t, w = results[e][n]
                row += f" | {t * 1e3:>9.2f} ms {t / n * 1e6:>6.2f} µs/b ({w * 1e3:>7.1f})"
            else:
                row += f" | {'-':>33}"
        print(row)
    print()
    print("fitted exponent p of CPU time ∝ bodies^p (target <= 1.1):")
    for e in args.engines:
        ns = sorted(results[e])
        ts = [results[e][n][0] for n in ns]
        big = [n for n in ns if n >= 1000]
        p_all = fit_exponent(ns, ts)
        p_big = fit_exponent(big, [results[e][n][0] for n in big])
        worst = p_all if math.isnan(p_big) else max(p_all, p_big)
        ok = "ok" if worst <= TARGET_EXPONENT else "above target"
        print(
            f"  {e:>10}: all sizes {p_all:5.3f}, sizes >= 1000 {p_big:5.3f}   "
            f"[{ns[0]}..{ns[-1]} bodies] {ok}"
        )

    if "riccati-3d" in args.engines and args.max_dof > 0:
        n_big = max(7, -(-args.max_dof // 3))
        case = riccati_case(n_big, planar=False)
        t, w = time_solve(case, 0.0, max_repeats=3)
        print()
        print(
            f"largest run: riccati-3d, {n_big} bodies = {case.dof} dof (ball hinges), one solve "
            f"{t:.3f} s CPU ({t / n_big * 1e6:.2f} µs/body; wall {w:.3f} s), model build "
            f"{case.build_s:.2f} s"
        )
        print(
            f"seed 002: > {SEED_DOF} dof; this run reaches {case.dof / SEED_DOF:.0%} of it"
            + (" (beyond it)" if case.dof > SEED_DOF else "")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
