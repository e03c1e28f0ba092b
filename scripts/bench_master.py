"""Speed of the co-simulation master on the paper's balloon.

Prints, for the balloon co-simulated with its FMUs (20 s, communication step 1 ms by default):
wall time, real-time factor, FMU calls per step, loop iterations per step, interface-Jacobian
measurements, and the ratio of its wall time to the in-process engine's, measured in the same
run (the machines are shared and noisy). Target: real-time factor >= 1 on 2 cores (the master
issue raises it to 50 with native FMUs).

With ``--split``, a second run of the co-simulation times every FMU call (``fmi2GetReal``,
``fmi2SetReal``, ``fmi2DoStep``: the native FMUs' own work) and reports, per
step, the time inside them and the master's own Python time (the rest of the wall time).

Then the same balloon in model-exchange mode (``--me-rtol``, 1e-8 by default, the engine's
tolerance): wall time, real-time factor, evaluations, and the ratio to the engine.

    python scripts/bench_master.py [--t-final 20] [--step 1e-3] [--split] [--me-rtol 1e-8]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from time import perf_counter

import numpy as np

from titopfmu.examples.balloon import COSIM_RECORD, build_balloon_cosim, run_balloon
from titopfmu.fmi.build import build_fmus
from titopfmu.master import components


def timed_run(fmu_dir, T: float, h: float, solver_method: int) -> dict[str, float]:
    """Run the co-simulation with every FMU call timed: seconds per kind, and the wall time."""
    spent = {"fmi2GetReal": 0.0, "fmi2SetReal": 0.0, "fmi2DoStep": 0.0}
    calls = {k: 0 for k in spent}
    originals = (components.RealChannel.get, components.RealChannel.send,
                 components.Stepper.__call__)  # fmt: skip

    def timing(kind, fn):
        def wrapper(*args):
            t0 = perf_counter()
            try:
                return fn(*args)
            finally:
                spent[kind] += perf_counter() - t0
                calls[kind] += 1

        return wrapper

    components.RealChannel.get = timing("fmi2GetReal", originals[0])
    components.RealChannel.send = timing("fmi2SetReal", originals[1])
    components.Stepper.__call__ = timing("fmi2DoStep", originals[2])
    try:
        cs = build_balloon_cosim(fmu_dir, solver_method=solver_method)
        t0 = perf_counter()
        res = cs.simulate(T, h, record=COSIM_RECORD, output_interval=0.01)
        wall = perf_counter() - t0
    finally:
        (components.RealChannel.get, components.RealChannel.send,
         components.Stepper.__call__) = originals  # fmt: skip
    steps = len(res.iterations) - 1
    return {"wall": wall, "steps": steps, "spent": spent, "calls": calls}


def model_exchange_run(fmu_dir, T: float, rtol: float, engine_wall: float) -> list[str]:
    """The report of the balloon in model-exchange mode (one DOP853 over every FMU's states,
    the loop solved at every evaluation): wall time, real-time factor, counters, ratio to the
    engine's wall time measured in the same run."""
    from titopfmu.master import ModelExchange

    me = ModelExchange(build_balloon_cosim(fmu_dir), rtol=rtol, atol=0.1 * rtol)
    t0 = time.perf_counter()
    me.simulate(T, record=COSIM_RECORD, output_interval=0.01)
    wall = time.perf_counter() - t0
    st = me.stats
    return [
        f"model exchange, DOP853 rtol {rtol:g} atol {0.1 * rtol:g}",
        f"  wall time                   {wall:8.2f} s",
        f"  real-time factor            {T / wall:8.2f}",
        f"  integrator steps            {st.steps:8d}   ({st.evaluations} evaluations, "
        f"{st.fmu_calls / st.evaluations:.1f} FMU calls and "
        f"{st.jacobian_columns / st.evaluations:.0f} directional derivatives each)",
        f"  loop solutions per point    {st.iterations / st.solves:8.2f}   "
        f"(largest residual {st.max_residual:.1e})",
        f"  ratio model exchange/engine {wall / engine_wall:8.1f}",
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--t-final", type=float, default=20.0)
    ap.add_argument("--step", type=float, default=1e-3)
    ap.add_argument("--solver-method", type=int, default=2, choices=(1, 2, 4),
                    help="the FMUs' internal Runge-Kutta order (default 2)")  # fmt: skip
    ap.add_argument("--split", action="store_true",
                    help="a second, timed run: time in FMU calls vs the master's")  # fmt: skip
    ap.add_argument("--me-rtol", type=float, default=1e-8,
                    help="model-exchange run: DOP853's relative tolerance (0: no run)")  # fmt: skip
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    T, h = args.t_final, args.step
    with tempfile.TemporaryDirectory() as tmp:
        build_fmus(tmp, types=["rigid_body", "prismatic_body", "revolute_body",
                               "joint_spring_damper"], max_children=1)  # fmt: skip
        t0 = time.perf_counter()
        run_balloon(T, 0.01)
        engine_wall = time.perf_counter() - t0
        cs = build_balloon_cosim(tmp, solver_method=args.solver_method)
        t0 = time.perf_counter()
        res = cs.simulate(T, h, record=COSIM_RECORD, output_interval=0.01)
        wall = time.perf_counter() - t0
        split = timed_run(tmp, T, h, args.solver_method) if args.split else None
        me_lines = model_exchange_run(tmp, T, args.me_rtol, engine_wall) if args.me_rtol else []
    steps = len(res.iterations) - 1
    print(f"balloon, {T:g} s, communication step {h * 1e3:g} ms, FMU solver.method "
          f"{args.solver_method}, {len(cs.components)} FMUs")  # fmt: skip
    print(f"  co-simulation wall time     {wall:8.2f} s")
    print(f"  real-time factor            {T / wall:8.2f}   (target >= 1)")
    print(f"  FMU calls per step          {cs.stats.fmu_calls / steps:8.1f}")
    print(f"  loop iterations per step    {np.mean(res.iterations[1:]):8.2f}   "
          f"(max {max(res.iterations[1:])})")  # fmt: skip
    print(f"  Jacobian measurements       {cs.stats.jacobian_updates:8d}   "
          f"({cs.stats.jacobian_updates / steps:.2f} per step, one per FMU each)")  # fmt: skip
    print(f"  in-process engine           {engine_wall:8.2f} s   (DOP853, rtol 1e-8)")
    print(f"  ratio co-simulation/engine  {wall / engine_wall:8.1f}")
    if split is not None:
        n = split["steps"]
        inside = sum(split["spent"].values())
        print(f"  timed run: {split['wall'] / n * 1e6:.0f} us per step, of which")
        for kind, sec in split["spent"].items():
            print(f"    {kind:12s} {sec / n * 1e6:7.0f} us  ({split['calls'][kind] / n:.1f} calls)")
        print(f"    master       {(split['wall'] - inside) / n * 1e6:7.0f} us  (its own Python "
              "and numpy, the timing included)")  # fmt: skip
    for line in me_lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
