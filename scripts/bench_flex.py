#!/usr/bin/env python
"""Cost of one right-hand-side evaluation of a flexible body (issue 34), side by side in one run:

* titopfmu: ``NativeTree.derivative`` of a free-floating root carrying a 10-mode flexible beam
  (titop_flex: M(q) with the second-order invariants, the geometric stiffness of the default
  load cases, the 16 x 16 solve) and of the same root as a rigid body (no flexible part); each
  call goes through the Python binding (its overhead included). The default load cases' v̇ and
  alpha take passes of the sweep (docs/flexible.md §6, "The passes": 8 at this tumbling,
  strongly deflected state, q = 0.05 per mode); beside it the same body with the centrifugal
  cases only (one pass), and with a point mass (a rigid child, 0.2 kg) at its tip node (its
  wrench's node load value by the passes, the child condensed into the elastic coordinates);
* Exudyn (the same beam and modes as tests/test_flex_exudyn.py: ObjectFFRFreducedOrder with a
  rotation-vector node; no geometric stiffness): (a) the cost per stage of its own fixed-step
  RK4 loop (C++ only: mass matrix, right-hand side, solve and the Lie-group update per stage),
  (b) ``ComputeMassMatrix`` + ``ComputeODE2RHS`` called from Python (no solve), the nearest to
  our call.

Measurements are interleaved (round-robin) so that a slow period of the shared machine hits all
alike; medians of ``--repeats`` rounds, in microseconds per evaluation, and the ratios to the
rigid body's.

Usage: python scripts/bench_flex.py [--repeats N] [--calls N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

try:
    import exudyn as exu
except ImportError:  # pragma: no cover
    sys.exit("this benchmark needs Exudyn: pip install exudyn")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import exudyn_reference  # noqa: E402

from titopfmu.blocks import RigidBody, WeldedBody  # noqa: E402
from titopfmu.core.model import NativeTree  # noqa: E402
from titopfmu.flex import Beam, Section, cantilever_modes  # noqa: E402

N_MODES = 10


def models():
    """The beam (1 m, order-one properties, torsion stiff so that the 10 lowest cantilever
    modes carry none), our trees (flexible, rigid) and their states, Exudyn's system."""
    beam = Beam("unit", 1.0, 100.0, 1.0, Section(1.0, 0.05, 0.08, 1000.0), G=50.0, n_elements=10)
    fe = beam.fe_model()
    red = cantilever_modes(fe, N_MODES, list(range(1, fe.n_nodes)))
    red_nokg = cantilever_modes(fe, N_MODES, list(range(1, fe.n_nodes)), load_cases=[])
    red_w = cantilever_modes(fe, N_MODES, list(range(1, fe.n_nodes)),
                             load_cases=["wxx", "wyy", "wzz", "wxy", "wyz", "wxz"])  # fmt: skip
    red_tip = cantilever_modes(fe, N_MODES, [fe.n_nodes - 1])
    mr, Ir = 0.3, np.diag([0.02, 0.01, 0.015])
    tw0 = np.array([0.1, -0.05, 0.02, 1.0, 2.5, -1.5])
    rng = np.random.default_rng(4)
    q0, qd0 = 0.05 * rng.standard_normal(N_MODES), 0.3 * rng.standard_normal(N_MODES)
    root = RigidBody("hub", mr, Ir, gravity=(0.0, 0.0, 0.0), twist=tuple(tw0))
    flex = NativeTree([root], [None], [0], flex=[(0, red, 13)])
    rigid = NativeTree([root], [None], [0])
    centrifugal = NativeTree([root], [None], [0], flex=[(0, red_w, 13)])
    hub = RigidBody("hub", mr, Ir, gravity=(0.0, 0.0, 0.0), twist=tuple(tw0),
                    children={"tip": tuple(red_tip.node_positions[1])})  # fmt: skip
    mass = WeldedBody("mass", 0.2, np.zeros((3, 3)), gravity=(0.0, 0.0, 0.0))
    tip = NativeTree([hub, mass], [None, (0, 0)], [0, 0], flex=[(0, red_tip, 13)])
    x_flex = np.concatenate([root.initial_state(), q0, qd0])
    x_rigid = root.initial_state()
    ex = exudyn_reference.ffrf_model(beam, red_nokg, mr, Ir, tw0, q0, qd0)
    return (flex, x_flex), (rigid, x_rigid), ex, centrifugal, tip


def time_tree(tree: NativeTree, x: np.ndarray, calls: int) -> float:
    """Seconds per ``derivative`` call."""
    data, dx, u = tree.new_data(), np.zeros_like(x), np.zeros(0)
    t0 = time.perf_counter()
    for _ in range(calls):
        tree.derivative(0.0, x, u, dx, data)
    return (time.perf_counter() - t0) / calls


def time_exudyn_loop(ex, steps: int) -> float:
    """Seconds per stage of Exudyn's own fixed-step RK4 loop (4 stages per step)."""
    s = exu.SimulationSettings()
    ti = s.timeIntegration
    ti.endTime, ti.numberOfSteps, ti.automaticStepSize = 1e-4 * steps, steps, False
    ti.explicit.useLieGroupIntegration = True
    ti.verboseMode = 0
    s.solution.file.write = False
    s.solution.sensors.active = False
    s.show.statistics = False
    t0 = time.perf_counter()
    ex.mbs.SolveDynamic(s, solverType=exu.DynamicSolverType.RK44)
    return (time.perf_counter() - t0) / (4 * steps)


def exudyn_python_solver(ex):
    """Exudyn's explicit solver, initialised, for Python-level evaluations."""
    s = exu.SimulationSettings()
    s.solution.file.write = False
    s.timeIntegration.explicit.useLieGroupIntegration = True
    s.timeIntegration.solverType = exu.DynamicSolverType.RK44
    solver = exu.MainSolverExplicit()
    solver.InitializeSolver(ex.mbs, s)
    return solver


def time_exudyn_python(ex, solver, calls: int) -> float:
    """Seconds per ComputeMassMatrix + ComputeODE2RHS called from Python."""
    t0 = time.perf_counter()
    for _ in range(calls):
        solver.ComputeMassMatrix(ex.mbs)
        solver.ComputeODE2RHS(ex.mbs)
    return (time.perf_counter() - t0) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    bench(args.repeats, args.calls)


def bench(repeats: int, calls: int) -> None:
    """Print the table (also part (d) of scripts/bench_engine.py)."""
    args = argparse.Namespace(repeats=repeats, calls=calls)
    (flex, xf), (rigid, xr), ex, centrifugal, tip = models()
    solver = exudyn_python_solver(ex)
    cases = {
        "titopfmu rigid body (derivative)": lambda: time_tree(rigid, xr, args.calls),
        f"titopfmu {N_MODES}-mode flexible body (derivative)": lambda: time_tree(
            flex, xf, args.calls),  # fmt: skip
        f"titopfmu {N_MODES}-mode, centrifugal cases only (1 pass)": lambda: time_tree(
            centrifugal, xf, args.calls),  # fmt: skip
        f"titopfmu {N_MODES}-mode, a point mass at its tip (child)": lambda: time_tree(
            tip, xf, args.calls),  # fmt: skip
        f"Exudyn {N_MODES}-mode FFRF, own RK4 loop (per stage)": lambda: time_exudyn_loop(
            ex, args.calls // 4),  # fmt: skip
        f"Exudyn {N_MODES}-mode FFRF, mass matrix + RHS from Python": lambda: time_exudyn_python(
            ex, solver, args.calls),  # fmt: skip
    }
    times: dict[str, list[float]] = {k: [] for k in cases}
    names = list(cases)
    for r in range(args.repeats):
        for k in names[r % len(names) :] + names[: r % len(names)]:
            times[k].append(cases[k]())
    base = statistics.median(times[names[0]])
    print(f"{'case':<60} {'us/eval':>9} {'x rigid':>8}")
    for k in names:
        m = statistics.median(times[k])
        print(f"{k:<60} {1e6 * m:9.2f} {m / base:8.1f}")
    flex_t = statistics.median(times[names[1]])
    for k in names[4:]:
        print(f"ratio Exudyn / titopfmu flexible, {k.split(', ')[1]}: "
              f"{statistics.median(times[k]) / flex_t:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
