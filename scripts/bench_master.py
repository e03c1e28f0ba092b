"""Speed of the co-simulation master on the paper's balloon.

Prints, for the balloon co-simulated with its FMUs (20 s, communication step 1 ms, the master's
default coupling and RK4 in the FMUs by default): its error against the engine at tight
tolerances (not timed), wall time, real-time factor (target: at least 50 on the project's 2-core
machine), FMU calls per step, loop iterations per step, interface-Jacobian measurements (exact,
from the FMUs' directional derivatives), and the ratio of its wall time to the in-process
engine's, measured in the same run (the machines are shared and noisy). The master runs its
compiled communication step (``titopfmu.master._step``) by default.

With ``--split``, two more runs of the same co-simulation: one with the compiled step timed
(time inside the compiled step, which includes the FMUs' own work, against the master's Python
around it: recording at output points, the call), one on the master's Python path with every
FMU call timed (``fmi2GetReal``, ``fmi2SetReal``, ``fmi2DoStep``, ``fmi2GetDirectionalDerivative``:
the native FMUs' own work and the ctypes calls) against its own Python and numpy time.

Then the same balloon in model-exchange mode (``--me-rtol``, 1e-8 by default, the engine's
tolerance): wall time, real-time factor, evaluations, and the ratio to the engine.

    python scripts/bench_master.py [--t-final 20] [--step 1e-3] [--repeat 3] [--split]
        [--me-rtol 1e-8]
        [--coupling polynomial|extrapolated|hold] [--solver-method 4]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from time import perf_counter

import numpy as np

from titopfmu.examples.balloon import (
    COLUMNS,
    COSIM_RECORD,
    balloon_columns_from_cosim,
    build_balloon_cosim,
    run_balloon,
)
from titopfmu.fmi.build import build_fmus
from titopfmu.master import components, fastpath


def timed_run(fmu_dir, T: float, h: float, solver_method: int) -> dict[str, float]:
    """The Python path with every FMU call timed: seconds per kind, and the wall time."""
    spent = {"fmi2GetReal": 0.0, "fmi2SetReal": 0.0, "fmi2DoStep": 0.0, "fmi2GetDirDer": 0.0}
    calls = {k: 0 for k in spent}
    originals = (components.RealChannel.get, components.RealChannel.send,
                 components.Stepper.__call__, components.Derivatives.column)  # fmt: skip

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
    components.Derivatives.column = timing("fmi2GetDirDer", originals[3])
    try:
        cs = build_balloon_cosim(fmu_dir, solver_method=solver_method)
        cs.compiled = False
        t0 = perf_counter()
        res = cs.simulate(T, h, record=COSIM_RECORD, output_interval=0.01)
        wall = perf_counter() - t0
    finally:
        (components.RealChannel.get, components.RealChannel.send,
         components.Stepper.__call__, components.Derivatives.column) = originals  # fmt: skip
    steps = len(res.iterations) - 1
    return {"wall": wall, "steps": steps, "spent": spent, "calls": calls}


def timed_compiled_run(fmu_dir, T: float, h: float, solver_method: int) -> dict[str, float]:
    """The compiled path with the compiled step timed: its seconds, and the wall time."""
    spent = [0.0]
    original = fastpath.CompiledStep.run

    def run(self, *args):
        t0 = perf_counter()
        try:
            return original(self, *args)
        finally:
            spent[0] += perf_counter() - t0

    fastpath.CompiledStep.run = run
    try:
        cs = build_balloon_cosim(fmu_dir, solver_method=solver_method)
        t0 = perf_counter()
        res = cs.simulate(T, h, record=COSIM_RECORD, output_interval=0.01)
        wall = perf_counter() - t0
    finally:
        fastpath.CompiledStep.run = original
    return {"wall": wall, "steps": len(res.iterations) - 1, "inside": spent[0]}


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
    ap.add_argument("--solver-method", type=int, default=4, choices=(1, 2, 4),
                    help="the FMUs' internal Runge-Kutta order (default 4, from_system's)")
    ap.add_argument("--coupling", default="polynomial",
                    choices=("polynomial", "extrapolated", "hold"),
                    help="the master's coupling (default polynomial, the master's)")  # fmt: skip
    ap.add_argument("--repeat", type=int, default=3,
                    help="co-simulation runs timed, the best kept (default 3)")  # fmt: skip
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
        wall = cpu = float("inf")
        for _ in range(args.repeat):  # the best of a few runs (a shared, noisy machine)
            cs = build_balloon_cosim(tmp, solver_method=args.solver_method)
            cs.coupling = args.coupling
            t0, c0 = time.perf_counter(), time.process_time()
            res = cs.simulate(T, h, record=COSIM_RECORD, output_interval=0.01)
            w, c = time.perf_counter() - t0, time.process_time() - c0
            wall, cpu = min(wall, w), min(cpu, c)
        ref = run_balloon(T, 0.01, rtol=1e-12, atol=1e-13)  # not timed: the error's reference
        cols = balloon_columns_from_cosim(res)
        error = max(float(np.max(np.abs(cols[k] - ref[k]))) for k in COLUMNS)
        split = None
        if args.split:
            split = timed_run(tmp, T, h, args.solver_method)
            csplit = timed_compiled_run(tmp, T, h, args.solver_method)
        me_lines = model_exchange_run(tmp, T, args.me_rtol, engine_wall) if args.me_rtol else []
    steps = len(res.iterations) - 1
    how = "compiled step" if cs.stats.compiled_steps == steps else "Python path"
    print(f"balloon, {T:g} s, communication step {h * 1e3:g} ms, FMU solver.method "
          f"{args.solver_method}, coupling {args.coupling}, {len(cs.components)} FMUs, {how}")
    print(f"  max error of the 9 dof      {error:8.1e}   (m, rad; against the engine at rtol "
          "1e-12, every 10 ms)")  # fmt: skip
    print(f"  co-simulation wall time     {wall:8.2f} s   ({wall / steps * 1e6:.1f} us per step; "
          f"best of {args.repeat})")  # fmt: skip
    print(f"  real-time factor            {T / wall:8.2f}   (target >= 50)")
    print(f"  CPU time of the process     {cpu:8.2f} s   (real-time factor {T / cpu:.2f} on CPU "
          "time: less sensitive to other jobs on the machine)")  # fmt: skip
    print(f"  FMU calls per step          {cs.stats.fmu_calls / steps:8.1f}")
    print(f"  loop iterations per step    {np.mean(res.iterations[1:]):8.2f}   "
          f"(max {max(res.iterations[1:])})")  # fmt: skip
    print(f"  Jacobian measurements       {cs.stats.jacobian_updates:8d}   "
          f"({cs.stats.jacobian_updates / steps:.3f} per step, one per FMU each, from "
          "directional derivatives)")  # fmt: skip
    print(f"  in-process engine           {engine_wall:8.2f} s   (DOP853, rtol 1e-8)")
    print(f"  ratio co-simulation/engine  {wall / engine_wall:8.1f}")
    if split is not None:
        n = csplit["steps"]
        print(f"  timed run, compiled step: {csplit['wall'] / n * 1e6:.1f} us per step, of which")
        print(f"    compiled step {csplit['inside'] / n * 1e6:6.1f} us  (FMU calls included)")
        print(f"    master        {(csplit['wall'] - csplit['inside']) / n * 1e6:6.1f} us  "
              "(Python: recording at output points, the calls, the timing)")  # fmt: skip
        n = split["steps"]
        inside = sum(split["spent"].values())
        print(f"  timed run, Python path: {split['wall'] / n * 1e6:.0f} us per step "
              f"({split['wall'] / csplit['wall']:.1f} times the compiled step's), of which")
        for kind, sec in split["spent"].items():
            print(f"    {kind:13s} {sec / n * 1e6:6.1f} us  ({split['calls'][kind] / n:.2f} calls)")
        print(f"    master        {(split['wall'] - inside) / n * 1e6:6.1f} us  (its own Python "
              "and numpy, the timing included)")  # fmt: skip
    for line in me_lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
