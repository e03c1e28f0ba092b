"""Coupling error of the co-simulated balloon against the in-process engine.

Builds the FMUs, runs the paper's balloon with the in-process engine at tight tolerances
(reference), then with the co-simulation master at fixed communication steps, in the
error-controlled variable-step mode and in model-exchange mode (one integrator for every FMU's
states), and writes a markdown table and a plot: max error of the 9 dof at the same output
times as the reference, observed order between successive steps, wall time, real-time factor,
loop iterations and FMU calls per step.

    python scripts/cosim_convergence.py [--t-final 20] [--out docs/cosim_convergence.md]
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import sys
import tempfile
import time
import warnings

import numpy as np

from titopfmu.examples.balloon import (
    COLUMNS,
    COSIM_RECORD,
    balloon_columns_from_cosim,
    build_balloon_cosim,
    run_balloon,
)
from titopfmu.fmi.build import build_fmus
from titopfmu.master import ModelExchange


def max_error(res, ref) -> float:
    """Largest difference of the 9 dof at equal times (the grids must be the same)."""
    cols = balloon_columns_from_cosim(res)
    if not np.array_equal(cols["time"], ref["time"]):
        raise SystemExit("the run and the reference were sampled at different times")
    return max(float(np.max(np.abs(cols[k] - ref[k]))) for k in COLUMNS)


def plot(rows: list[tuple], path: str) -> None:
    """Error against the step (fixed steps, with the slope of order 2) and against the wall
    time (every run)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for kind, slope, style in (("polynomial", 4, "o-"), ("extrapolated", 2, "s-")):
        fixed = [r for r in rows if r[8] == "fixed" and r[10] == kind]
        if not fixed:
            continue
        h = np.array([r[9] for r in fixed])
        e = np.array([r[1] for r in fixed])
        a.loglog(h * 1e3, e, style, label=f"fixed step, coupling {kind}")
        a.loglog(h * 1e3, e[0] * (h / h[0]) ** slope, "k--", lw=0.8, label=f"slope {slope}")
        a.set_xticks(h * 1e3, [f"{v:g}" for v in h * 1e3])
    a.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    a.set_xlabel("communication step (ms)")
    a.set_ylabel("max error of the 9 dof (m, rad)")
    a.grid(True, which="both", lw=0.3)
    a.legend()
    for kind, marker in (("fixed", "o"), ("variable", "s"), ("me", "^")):
        sel = [r for r in rows if r[8] == kind]
        label = {"fixed": "co-simulation, fixed step", "variable": "co-simulation, variable step",
                 "me": "model exchange"}[kind]  # fmt: skip
        b.loglog([r[3] for r in sel], [max(r[1], 1e-16) for r in sel], marker, label=label)
    b.set_xlabel("wall time (s)")
    b.set_ylabel("max error of the 9 dof (m, rad)")
    b.grid(True, which="both", lw=0.3)
    b.legend()
    fig.suptitle("balloon of seed 004 against the in-process engine")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


#: Everything after this line of the output document is kept when it is regenerated.
NOTES_MARKER = "<!-- notes below this line are kept when the script regenerates the table -->"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--t-final", type=float, default=20.0)
    ap.add_argument("--output-interval", type=float, default=0.02,
                    help="sampling interval (s), a multiple of every step")  # fmt: skip
    ap.add_argument("--steps", type=float, nargs="*", default=[4e-3, 2e-3, 1e-3, 5e-4],
                    help="fixed steps of the default coupling (polynomial, RK4 in the FMUs)")
    ap.add_argument("--extrapolated-steps", type=float, nargs="*",
                    default=[4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4],
                    help="fixed steps of the mid-step extrapolation (Heun in the FMUs)")
    ap.add_argument("--tolerances", type=float, nargs="*", default=[1e-6, 1e-7])
    ap.add_argument("--me-rtols", type=float, nargs="*", default=[1e-8, 1e-12],
                    help="model-exchange runs: relative tolerances (atol a tenth)")  # fmt: skip
    ap.add_argument("--out", default="docs/cosim_convergence.md")
    ap.add_argument("--plot", default="docs/cosim_convergence.png")
    command = " ".join(["python scripts/cosim_convergence.py",
                        *(sys.argv[1:] if argv is None else argv)])  # fmt: skip
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    T, oi = args.t_final, args.output_interval
    ref = run_balloon(T, oi, rtol=1e-12, atol=1e-13)
    # (run, error, order, wall, real-time factor, iterations, calls per step, Jacobians, kind, h)
    rows: list[tuple] = []
    with tempfile.TemporaryDirectory() as tmp:
        build_fmus(tmp, types=["rigid_body", "prismatic_body", "revolute_body",
                               "joint_spring_damper"], max_children=1)  # fmt: skip
        for coupling, method, steps in (("polynomial", 4, args.steps),
                                        ("extrapolated", 2, args.extrapolated_steps)):
            prev = None
            for h in steps:
                cs = build_balloon_cosim(tmp, solver_method=method)
                cs.coupling = coupling
                t0 = time.perf_counter()
                res = cs.simulate(T, h, record=COSIM_RECORD, output_interval=oi)
                wall = time.perf_counter() - t0
                err = max_error(res, ref)
                order = ("" if prev is None else
                         f"{math.log(prev[1] / err) / math.log(prev[0] / h):.2f}")
                prev = (h, err)
                n = round(T / h)
                label = f"fixed h = {h * 1e3:g} ms, {coupling}, solver.method {method}"
                rows.append((label, err, order, wall, T / wall,
                             cs.stats.iterations / (n + 1), cs.stats.fmu_calls / n,
                             f"{cs.stats.jacobian_updates}", "fixed", h, coupling))
                print(rows[-1][:8], flush=True)
        for tol in args.tolerances:
            cs = build_balloon_cosim(tmp)
            t0 = time.perf_counter()
            res = cs.simulate(T, 1e-3, record=COSIM_RECORD, output_interval=oi,
                              step_tolerance=tol)  # fmt: skip
            wall = time.perf_counter() - t0
            err = max_error(res, ref)
            rows.append((f"variable, tolerance {tol:g} ({cs.accepted} steps, {cs.rejected} "
                         "rejected)", err, "", wall, T / wall, float("nan"),
                         cs.stats.fmu_calls / max(cs.accepted, 1),
                         f"{cs.stats.jacobian_updates}", "variable", None, ""))  # fmt: skip
            print(rows[-1][:8], flush=True)
        for rtol in args.me_rtols:
            me = ModelExchange(build_balloon_cosim(tmp), rtol=rtol, atol=0.1 * rtol)
            t0 = time.perf_counter()
            res = me.simulate(T, record=COSIM_RECORD, output_interval=oi)
            wall = time.perf_counter() - t0
            err = max_error(res, ref)
            st = me.stats
            rows.append((f"model exchange, DOP853 rtol {rtol:g} ({st.steps} steps, "
                         f"{st.evaluations} evaluations)", err, "", wall, T / wall,
                         st.iterations / st.solves, st.fmu_calls / st.steps,
                         f"{st.jacobian_columns} columns", "me", None, ""))  # fmt: skip
            print(rows[-1][:8], flush=True)
    lines = [
        "# Co-simulation of the balloon: coupling error",
        "",
        f"Generated by `{command}` on "
        f"{datetime.date.today()} ({platform.machine()}, {platform.python_version()}).",
        "",
        "The balloon of Alazard, Sanfedino and Kassarian (arXiv 2505.03248, sec. 4) run with the "
        "FMUs of `titopfmu build` by `titopfmu.master`, against the in-process engine (DOP853, "
        "rtol 1e-12, atol 1e-13). Co-simulation (`CoSimulation.simulate`): interface-Jacobian "
        "loop solution; coupling `polynomial` (the default): each input a line over the step "
        "(value and derivative), the least-squares fit of the cubic through its last four "
        "values, the FMUs integrating with RK4 (`solver.method` 4, `from_system`'s default); "
        "coupling `extrapolated`: inputs held at their mid-step linear extrapolation, the FMUs "
        "with their own default, Heun's method (`solver.method` 2). Model exchange "
        "(`mode=\"me\"`, `ModelExchange`): one DOP853 integrator over every FMU's states, the "
        "loop solved at every evaluation from the FMUs' directional derivatives. Error: largest "
        f"absolute difference of the 9 dof (m, rad) over {T:g} s, at the same output times as "
        f"the reference, every {oi * 1e3:g} ms.",
        "",
        "| run | max error | observed order | wall (s) | real-time factor | loop iterations "
        "per step | FMU calls per step | Jacobian measurements |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        its = "" if math.isnan(r[5]) else f"{r[5]:.2f}"
        lines.append(f"| {r[0]} | {r[1]:.2e} | {r[2]} | {r[3]:.2f} | {r[4]:.2f} | {its} | "
                     f"{r[6]:.1f} | {r[7]} |")  # fmt: skip
    rel = os.path.relpath(args.plot, os.path.dirname(os.path.abspath(args.out)) or ".")
    lines += [
        "",
        f"![Error against the step and against the wall time]({rel})",
        "",
        "Observed order: log of the error ratio over log of the step ratio, between a row and "
        'the one above (same coupling). The held-input variant (`coupling = "hold"`) is first '
        "order (tests/test_master.py). Loop tolerance (relative residual): 1e-8, the default. "
        "Jacobian measurements: one per FMU measured (its interface Jacobian, from its directional "
        "derivatives), over "
        "the whole run; for model exchange, the directional-derivative columns (one call each, "
        "all of them at every evaluation). Loop iterations per step: per communication point, "
        "or per loop solution in model exchange. FMU calls per step of the variable-step rows "
        "count every call per accepted step (the doubled steps and rejections included), of "
        "the model-exchange rows every call per accepted integrator step (its evaluations "
        "included). Wall times depend on the load of the machine (shared cores). The "
        "variable-step rows use the default coupling.",
    ]
    plot(rows, args.plot)
    kept = ""  # hand-written notes below the marker survive a regeneration
    if os.path.exists(args.out):
        with open(args.out) as f:
            old = f.read()
        if NOTES_MARKER in old:
            kept = old.split(NOTES_MARKER, 1)[1]
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n\n" + NOTES_MARKER + kept)
    print(f"wrote {args.out} and {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
