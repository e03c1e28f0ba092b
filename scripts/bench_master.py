"""Speed of the co-simulation master on the paper's balloon (issue 4).

Prints, for the balloon co-simulated with its FMUs (20 s, communication step 1 ms by default):
wall time, real-time factor, FMU calls per step, loop iterations per step, interface-Jacobian
measurements, and the ratio of its wall time to the in-process engine's, measured in the same
run (the machines are shared and noisy). Target (issue 4): real-time factor >= 1 on 2 cores.

    python scripts/bench_master.py [--t-final 20] [--step 1e-3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings

import numpy as np

from titopfmu.examples.balloon import COSIM_RECORD, build_balloon_cosim, run_balloon
from titopfmu.fmi.build import build_fmus


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--t-final", type=float, default=20.0)
    ap.add_argument("--step", type=float, default=1e-3)
    ap.add_argument("--solver-method", type=int, default=4, choices=(1, 2, 4),
                    help="the FMUs' internal Runge-Kutta order (default 4)")  # fmt: skip
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
