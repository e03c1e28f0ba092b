#!/usr/bin/env python
"""Benchmark of the titopfmu in-process engine against Pinocchio (PyPI ``pin``).

(a) The balloon of seed 004 (20 s, DOP853, rtol 1e-8, atol 1e-10, the 9 CSV columns every
    0.01 s), run with titopfmu and with Pinocchio + ``scipy.integrate.solve_ivp`` at the same
    method, tolerances and output grid; wall times and the titopfmu / Pinocchio ratio. Two
    Pinocchio versions: the generic reference of :mod:`titopfmu.reference.pinocchio_model`
    (signal blocks interpreted at run time) and a right-hand side written for the balloon.
(b) Cost of one right-hand-side evaluation (``Engine.derivative``) per body, for serial chains
    of 10, 100 and 1000 revolute bodies under a RigidBody root (median of several repeats), and
    the per-body cost ratio 1000 vs 10. Pinocchio's ``aba`` on the same chains is shown for scale.

(d) Cost of one evaluation of a 10-mode flexible body beside a rigid body's and Exudyn's
    ObjectFFRFreducedOrder for the same beam and modes (scripts/bench_flex.py).

Measurements of the different cases are interleaved (round-robin, rotating order) so that a slow
period of the machine hits them all alike. ``--quick`` shortens everything.

Usage: python scripts/bench_engine.py [--quick] [--repeats N] [--sizes N ...] [--chains-only]

``--sizes 10 100 300 1000 3000 --chains-only`` scans where the per-body cost changes (the target
is judged on 1000 vs 10 bodies, when both are among the sizes).
"""

from __future__ import annotations

import argparse
import gc
import math
import platform
import statistics
import sys
import time
import warnings

import numpy as np
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

try:
    import pinocchio as pin
except ImportError:  # pragma: no cover
    sys.exit("this benchmark needs Pinocchio: pip install pin")

from titopfmu import Constant, Engine, InertiaWarning, RevoluteBody, RigidBody, System
from titopfmu.examples.balloon import COLUMNS, BalloonParameters, build_balloon
from titopfmu.reference import to_pinocchio
from titopfmu.reference.pinocchio_model import euler_321, rotation_from_quaternion_xyzw

TARGET_RATIO = 1.0  # titopfmu / Pinocchio + scipy wall time on the balloon
TARGET_FLATNESS = 0.20  # per-body cost at 1000 bodies within 20 % of that at 10
TARGET_PER_BODY = 1.5  # titopfmu / pin.aba cost per body on the chains
TARGET_COLD = 3.0  # s, fresh process with empty caches to the balloon CSV (no plot)

# pinocchio's createData() memory grows as nv^3 (90 MB at 100 joints, 4.3 GB at 400): no
# Pinocchio beyond this size.
PIN_MAX_BODIES = 100


# ----------------------------------------------------------------------------------------------
# (a) balloon
# ----------------------------------------------------------------------------------------------


def run_titopfmu(t_final: float, dt: float, rtol: float, atol: float) -> np.ndarray:
    engine = Engine(build_balloon())
    res = engine.simulate(
        t_final, output_interval=dt, record=COLUMNS, method="DOP853", rtol=rtol, atol=atol
    )
    return res.values


def _grid(t_final: float, dt: float) -> np.ndarray:
    n = int(math.floor(t_final / dt + 1e-9)) + 1
    return dt * np.arange(n)


def _outputs(ref, y: np.ndarray) -> np.ndarray:
    """The 9 columns of COLUMNS from solve_ivp's y (rows q then v)."""
    q = y[: ref.nq].T
    euler = np.array([euler_321(rotation_from_quaternion_xyzw(qi[3:7])) for qi in q])
    return np.column_stack([q[:, 0:3], euler, q[:, 7:10]])


def run_pinocchio_generic(t_final: float, dt: float, rtol: float, atol: float) -> np.ndarray:
    ref = to_pinocchio(build_balloon())
    sol = ref.simulate(t_final, _grid(t_final, dt), method="DOP853", rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(sol.message)
    return _outputs(ref, sol.y)


def run_pinocchio_dedicated(t_final: float, dt: float, rtol: float, atol: float) -> np.ndarray:
    """The balloon written directly against Pinocchio: y = [q (10), v (9)]."""
    p = BalloonParameters()
    ref = to_pinocchio(build_balloon(p))  # the model only (laws hard-coded below)
    model, data = ref.model, ref.data
    buoy = -p.total_mass * np.array(p.gravity)  # inertial frame, at the balloon's origin B
    k, ds, d1, d2 = p.k, p.d_s, p.d_p1, p.d_p2
    fext = [pin.Force.Zero() for _ in range(model.njoints)]
    tau = np.zeros(model.nv)
    zero3 = np.zeros(3)

    def rhs(t, y):
        q = y[0:10].copy()
        v = y[10:19]
        quat = y[3:7]
        n2 = float(quat @ quat)
        q[3:7] = quat / math.sqrt(n2)
        R = rotation_from_quaternion_xyzw(q[3:7])
        fext[1] = pin.Force(R.T @ buoy, zero3)
        tau[6] = -k * q[7] - ds * v[6]
        tau[7] = -d1 * v[7]
        tau[8] = -d2 * v[8]
        a = pin.aba(model, data, q, v, tau, fext)
        x, yq, z, w = quat
        wx, wy, wz = v[3:6]
        lam = 1.0 - n2
        dy = np.empty(19)
        dy[0:3] = R @ v[0:3]
        dy[3] = 0.5 * (w * wx + yq * wz - z * wy) + lam * x
        dy[4] = 0.5 * (w * wy + z * wx - x * wz) + lam * yq
        dy[5] = 0.5 * (w * wz + x * wy - yq * wx) + lam * z
        dy[6] = -0.5 * (x * wx + yq * wy + z * wz) + lam * w
        dy[7:10] = v[6:9]
        dy[10:19] = a
        return dy

    q0, v0 = ref.initial_configuration()
    sol = solve_ivp(
        rhs,
        (0.0, t_final),
        np.concatenate([q0, v0]),
        method="DOP853",
        rtol=rtol,
        atol=atol,
        t_eval=_grid(t_final, dt),
    )
    if not sol.success:
        raise RuntimeError(sol.message)
    return _outputs(ref, sol.y)


def _timed(fn, *args):
    gc.collect()
    t0 = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t0, out


def bench_balloon(t_final: float, repeats: int) -> None:
    dt, rtol, atol = 0.01, 1e-8, 1e-10
    cases = {
        "titopfmu Engine.simulate": run_titopfmu,
        "pinocchio, generic reference": run_pinocchio_generic,
        "pinocchio, dedicated rhs": run_pinocchio_dedicated,
    }
    times: dict[str, list[float]] = {c: [] for c in cases}
    outputs = {}
    names = list(cases)
    for c in names:  # warm-up, not timed (imports, first allocations)
        cases[c](0.05, dt, rtol, atol)
    for r in range(repeats):
        order = names[r % len(names) :] + names[: r % len(names)]  # rotate who goes first
        for c in order:
            t, out = _timed(cases[c], t_final, dt, rtol, atol)
            times[c].append(t)
            outputs[c] = out
    print(
        f"\n(a) balloon: {t_final:g} s, DOP853, rtol={rtol:g}, atol={atol:g}, outputs every "
        f"{dt:g} s ({outputs[names[0]].shape[0]} rows x {outputs[names[0]].shape[1]} columns), "
        f"{repeats} interleaved repeat(s)"
    )
    ref_out = outputs[names[0]]
    t_titop = statistics.median(times[names[0]])
    print(
        f"    {'implementation':<32}{'median (s)':>12}{'min (s)':>10}{'ratio':>8}{'max |dy|':>11}"
    )
    for c in names:
        med = statistics.median(times[c])
        d = ref_out - outputs[c]
        d[:, 3:6] = (d[:, 3:6] + np.pi) % (2 * np.pi) - np.pi
        ratio = "" if c == names[0] else f"{t_titop / med:8.2f}"
        dev = "" if c == names[0] else f"{np.max(np.abs(d)):11.2e}"
        print(f"    {c:<32}{med:12.3f}{min(times[c]):10.3f}{ratio:>8}{dev}")
    for c in names[1:]:
        ratio = t_titop / statistics.median(times[c])
        ok = "met" if ratio <= TARGET_RATIO else "NOT met"
        print(f"    ratio titopfmu / {c}: {ratio:.2f}   (target <= {TARGET_RATIO:g}: {ok})")
    print(
        "    ratio = titopfmu time / Pinocchio time; max |dy| = largest difference of the 9 "
        "outputs (m, rad) from the titopfmu run"
    )


# ----------------------------------------------------------------------------------------------
# (b) serial chains
# ----------------------------------------------------------------------------------------------


def _random_inertia(rng, scale):
    m = np.sort(rng.uniform(0.5, 1.0, 3)) * scale
    R = Rotation.random(random_state=rng).as_matrix()
    return R @ np.diag(m) @ R.T


def _unit(rng):
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def serial_chain(n: int, seed: int = 0) -> System:
    """A RigidBody root carrying n revolute bodies in series (random parameters, constant
    efforts)."""
    rng = np.random.default_rng(seed)
    s = System(f"chain_{n}")
    s.add(RigidBody("root", 5.0, _random_inertia(rng, 1.0),
                    children={"c": [0.0, 0.0, -0.5]} if n else None))  # fmt: skip
    parent = "root.c"
    for i in range(n):
        name = f"j{i}"
        s.add(
            RevoluteBody(
                name,
                float(rng.uniform(0.5, 2.0)),
                _random_inertia(rng, 0.1),
                axis=_unit(rng),
                P_a0b=Rotation.random(random_state=rng).as_matrix(),
                com=_unit(rng) * rng.uniform(0.05, 0.3),
                children={"c": _unit(rng) * rng.uniform(0.2, 0.5)} if i < n - 1 else None,
                theta0=float(rng.uniform(-1.0, 1.0)),
                theta_dot0=float(rng.uniform(-1.0, 1.0)),
            ),
            Constant(f"tau_{name}", float(rng.normal(0.0, 0.5))),
        )
        s.connect(parent, f"{name}.P")
        s.connect(f"tau_{name}.y", f"{name}.joint.tau")
        parent = f"{name}.c"
    return s


def _batch(fn, calls: int) -> float:
    """Seconds per call of fn() over a batch (garbage collector off)."""
    gc.collect()
    gc.disable()
    try:
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - t0) / calls
    finally:
        gc.enable()


def _calls_per_batch(fn, batch_seconds: float) -> int:
    """Calls of fn() that take about batch_seconds, measured after a warm-up call."""
    fn()
    calls = 1
    while True:
        t = _batch(fn, calls) * calls
        if t >= 0.02 or calls >= 1 << 20:
            return max(3, int(batch_seconds * calls / max(t, 1e-9)))
        calls *= 4


def bench_chains(sizes: list[int], repeats: int, batch_seconds: float) -> None:
    cases = {}
    root_only = Engine(serial_chain(0))
    x0 = root_only.initial_state()
    fn0 = lambda e=root_only, x=x0: e.derivative(0.0, x)  # noqa: E731
    cases[(0, "titopfmu")] = (fn0, _calls_per_batch(fn0, batch_seconds))
    for n in sizes:
        s = serial_chain(n)
        engine = Engine(s)
        x = engine.initial_state()
        fns = {"titopfmu": lambda e=engine, x=x: e.derivative(0.0, x)}
        cases[(n, "dev")] = math.nan
        if n <= PIN_MAX_BODIES:
            ref = to_pinocchio(s)
            q, v = ref.q_v(x)
            tau = ref.efforts(0.0, q, v)
            # sanity: both sides compute the same dynamics
            ev = engine.evaluate(0.0, x)
            acc = np.concatenate(
                [engine.signal(ev, "root.acc")]
                + [engine.signal(ev, f"{j}.joint.m")[0:1] for j in ref.joints]
            )
            cases[(n, "dev")] = float(np.max(np.abs(acc - ref.accelerations(x))))
            fns["pinocchio"] = lambda m=ref.model, d=ref.data, q=q, v=v, t=tau: pin.aba(
                m, d, q, v, t
            )
        for kind, fn in fns.items():
            cases[(n, kind)] = (fn, _calls_per_batch(fn, batch_seconds))
    times: dict[tuple[int, str], list[float]] = {
        k: [] for k in cases if k[1] in ("titopfmu", "pinocchio")
    }
    keys = list(times)
    for r in range(repeats):
        order = keys[r % len(keys) :] + keys[: r % len(keys)]
        for k in order:
            fn, calls = cases[k]
            times[k].append(_batch(fn, calls))
    print(
        f"\n(b) one right-hand-side evaluation on serial chains of revolute bodies under a "
        f"RigidBody root (median of {repeats} interleaved batches)"
    )
    print(
        f"    {'bodies':>7}{'titopfmu (ms)':>15}{'per body (us)':>15}{f'/ {sizes[0]}':>8}"
        f"{'pin.aba (us)':>14}{'per body (us)':>15}{'|acc diff|':>12}"
    )
    per_body = {}
    fixed = statistics.median(times[(0, "titopfmu")])
    for n in sizes:
        tt = statistics.median(times[(n, "titopfmu")])
        per_body[n] = tt / n
        if (n, "pinocchio") in times:
            tp = statistics.median(times[(n, "pinocchio")])
            pin_cols = f"{tp * 1e6:14.2f}{tp / n * 1e6:15.3f}{cases[(n, 'dev')]:12.1e}"
        else:
            pin_cols = f"{'-':>14}{'-':>15}{'-':>12}"
        rel = per_body[n] / per_body[sizes[0]]
        print(f"    {n:>7}{tt * 1e3:15.3f}{tt / n * 1e6:15.2f}{rel:8.3f}{pin_cols}")
    for n in sizes:
        if (n, "pinocchio") in times:
            r = statistics.median(times[(n, "titopfmu")]) / statistics.median(
                times[(n, "pinocchio")]
            )
            rounds = [a / b for a, b in zip(times[(n, "titopfmu")], times[(n, "pinocchio")],
                                            strict=True)]  # fmt: skip
            ok = "met" if r <= TARGET_PER_BODY else "NOT met"
            print(
                f"    cost per body titopfmu / pin.aba at {n} bodies: {r:.2f} (single rounds "
                f"{min(rounds):.2f} to {max(rounds):.2f}; target <= {TARGET_PER_BODY:g}: {ok})"
            )
    # the target compares 1000 with 10 bodies; without both, no verdict
    if {10, 1000} <= set(sizes):
        ratio = per_body[1000] / per_body[10]
        # marginal cost per body: the cost of the root alone (one call of the engine with no
        # joint body: Python call, inputs, the root's 6x6 solve) is paid once per evaluation
        marg = {n: (statistics.median(times[(n, "titopfmu")]) - fixed) / n for n in (10, 1000)}
        mratio = marg[1000] / marg[10]
        ok = "met" if abs(mratio - 1.0) <= TARGET_FLATNESS else "NOT met"
        print(
            f"    fixed cost per evaluation (the root alone): {fixed * 1e6:.2f} us; marginal cost "
            f"per body (minus that): {marg[10] * 1e6:.3f} us at 10, {marg[1000] * 1e6:.3f} us at "
            f"1000 bodies, ratio {mratio:.3f} (target: flat within {TARGET_FLATNESS:.0%}: {ok})"
        )
        # the same ratio within each round (its 10- and 1000-body batches run close in time):
        # its spread shows how much the machine's state moves the verdict
        rounds = [
            (t1000 / 1000) / (t10 / 10)
            for t10, t1000 in zip(times[(10, "titopfmu")], times[(1000, "titopfmu")], strict=True)
        ]
        print(
            f"    per-body cost ratio titopfmu 1000 / 10 bodies, fixed cost included: {ratio:.3f}"
            f" (within single rounds: {min(rounds):.3f} to {max(rounds):.3f}; below 1: the "
            "fixed cost weighs more on 10 bodies)"
        )
    print(
        "    per body = cost of one evaluation / number of revolute bodies (the root not "
        f"counted); / {sizes[0]} = per-body cost relative to {sizes[0]} bodies"
    )
    print(
        f"    pin.aba is not run above {PIN_MAX_BODIES} bodies: pinocchio's createData() memory "
        "grows as nv^3 (about 90 MB at 100 joints, 4.3 GB at 400, MemoryError at 1000)"
    )


COLD = """
import time, sys
t0 = time.perf_counter()
from titopfmu.cli import main
code = main(["example", "balloon", "--t-final", "20", "--output-interval", "0.01", "--out",
             sys.argv[1], "--quiet"])
print(time.perf_counter() - t0)
sys.exit(code)
"""


def bench_cold_start(repeats: int) -> None:
    """A fresh interpreter with empty caches (no bytecode cache: PYTHONPYCACHEPREFIX in an empty
    folder) to the balloon's CSV, the README's demo without its plot; wall time of the whole
    process and, inside it, from the first import to the CSV."""
    import os
    import subprocess
    import tempfile

    walls, insides = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, PYTHONPYCACHEPREFIX=os.path.join(d, "pycache"))
            t0 = time.perf_counter()
            p = subprocess.run([sys.executable, "-c", COLD, os.path.join(d, "b.csv")], env=env,
                               capture_output=True, text=True, check=True)  # fmt: skip
            walls.append(time.perf_counter() - t0)
            insides.append(float(p.stdout.split()[-1]))
    wall = statistics.median(walls)
    ok = "met" if wall <= TARGET_COLD else "NOT met"
    print(
        f"\n(c) cold start, fresh process with empty caches to results CSV of the 20 s balloon "
        f"(no plot), median of {repeats}: {wall:.2f} s wall, {statistics.median(insides):.2f} s "
        f"from the first import (target < {TARGET_COLD:g} s: {ok})"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short run (5 s balloon, fewer repeats)")
    ap.add_argument("--repeats", type=int, default=None, help="interleaved repeats per case")
    ap.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[10, 100, 1000],
        metavar="N",
        help="chain sizes of part (b) (default: 10 100 1000, the issue's)",
    )
    ap.add_argument("--chains-only", action="store_true", help="skip part (a), the balloon")
    args = ap.parse_args(argv)
    if min(args.sizes) < 1:
        ap.error(f"--sizes: every chain needs at least 1 body, got {min(args.sizes)}")
    warnings.simplefilter("ignore", InertiaWarning)  # the balloon's Table 1 inertia
    if args.quick:
        t_final, rep_a, rep_b, batch = 5.0, 1, 3, 0.05
    else:
        t_final, rep_a, rep_b, batch = 20.0, 3, 7, 0.3
    if args.repeats:
        rep_a = rep_b = args.repeats
    print(
        f"titopfmu engine benchmark{' (--quick)' if args.quick else ''}: Python "
        f"{platform.python_version()}, numpy {np.__version__}, pinocchio {pin.__version__}, "
        f"{platform.machine()}"
    )
    if not args.chains_only:
        bench_balloon(t_final, rep_a)
    bench_chains(sorted(set(args.sizes)), rep_b, batch)
    if not args.chains_only:
        bench_cold_start(1 if args.quick else 3)
        bench_flexible(3 if args.quick else 7, 2000 if args.quick else 20000)
    return 0


def bench_flexible(repeats: int, calls: int) -> None:
    """(d) One evaluation of a 10-mode flexible body beside a rigid body's and Exudyn's for the
    same model (scripts/bench_flex.py, the same beam and modes as tests/test_flex_exudyn.py)."""
    print("\n(d) flexible body: cost of one evaluation, 10 modes, vs rigid and Exudyn")
    try:
        import bench_flex  # scripts/ (this script's folder) is on sys.path
    except SystemExit as exc:  # Exudyn missing: bench_flex says so
        print(f"    skipped: {exc}")
        return
    bench_flex.bench(repeats, calls)


if __name__ == "__main__":
    raise SystemExit(main())
