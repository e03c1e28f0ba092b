"""Cost of the FMUs through fmpy, side by side with the core block they wrap (issue 3).

For each FMU type (one child port where the type has ports) this prints the median cost of

* one evaluation: ``fmi2SetReal`` of every input (changed values) and ``fmi2GetReal`` of every
  output, i.e. what a co-simulation master pays per probe, measured two ways: through fmpy's
  convenience methods ``setReal``/``getReal`` (which build ctypes arrays on every call) and with
  the value-reference and value arrays built once, as a master in C or this project's master
  calls the FMU ("raw"; the status is still checked by fmpy);
* one ``fmi2DoStep`` of 1 ms (explicit Runge-Kutta of order ``--method`` with the inputs held),
  two ways: "held", the inputs unchanged since the previous step (the FMU reuses its prepared
  inputs; the derivative at the step start is computed, as the state changed), and "new", after
  ``fmi2SetReal`` of changed values for every input (the FMU prepares them again; the cost of that
  ``fmi2SetReal`` alone, measured in the same run, is subtracted). In a co-simulation a master
  reads the outputs between the two calls, which prepares the inputs and computes the derivative
  at the step start: the doStep that follows costs less than either column;
* the same work on the core block directly (``StandaloneBlock.evaluate``; for the step, the
  inputs prepared once and ``StandaloneBlock.state_derivative`` at every stage, as the FMU does),

and the ratios FMU / core, measured in the same run (the machines are shared and noisy).
Targets (issue 3): a revolute-joint evaluation <= 60 µs and a doStep <= 40 µs.

    python scripts/bench_fmu.py [--repeat 2000] [--types revolute_body rigid_body ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from fmpy.fmi2 import fmi2Real, fmi2ValueReference

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fmu_helpers import fmu_type_of, load, start  # noqa: E402

from titopfmu.blocks.standalone import StandaloneBlock  # noqa: E402
from titopfmu.fmi.build import build_fmus  # noqa: E402
from titopfmu.fmi.catalog import FMU_TYPES, random_values  # noqa: E402
from titopfmu.fmi.slave import _SOLVER_PARAMS  # noqa: E402

DEFAULT_TYPES = [
    "rigid_body", "revolute_body", "prismatic_body", "spherical_body", "welded_body",
    "revolute_body_inverse", "loop_closure",
]  # fmt: skip


def median_us(f, repeat: int, batches: int = 7) -> float:
    per = max(1, repeat // batches)
    times = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(per):
            f()
        times.append((time.perf_counter() - t0) / per * 1e6)
    return statistics.median(times)


def core_step(sa: StandaloneBlock, x, u, h, method: int):
    """The same step on the core block: inputs prepared once, the derivative at the step start
    (new inputs: nothing cached), then the Runge-Kutta stages."""
    pr = sa.prepare(u)

    def f(t, x):
        return sa.state_derivative(t, x, pr)

    k1 = f(0.0, x)
    if method == 1:
        return x + h * k1
    if method == 2:
        return x + 0.5 * h * (k1 + f(0.0, x + h * k1))
    k2 = f(0.0, x + 0.5 * h * k1)
    k3 = f(0.0, x + 0.5 * h * k2)
    k4 = f(0.0, x + h * k3)
    return x + (h / 6.0) * (k1 + 2.0 * (k2 + k3) + k4)


def bench(path: Path, repeat: int, method: int) -> dict:
    lf = load(path)
    ftype, n = fmu_type_of(lf)
    rng = np.random.default_rng(0)
    values = random_values(ftype.params(n), rng)
    sa = StandaloneBlock(ftype.make("bench", values, n))
    fmu = lf.instantiate("bench")
    start(fmu, lf, ftype.params(n) + list(_SOLVER_PARAMS), {**values, "solver.method": method})
    ins = [v.valueReference for v in lf.variables("input")]
    outs = [v.valueReference for v in lf.variables("output")]
    u_list = list(rng.normal(0.0, 0.5, len(ins)))
    counter = [0]

    def fmu_eval():
        counter[0] += 1
        u_list[0] = 1e-6 * counter[0]  # a changed input: no cache hit
        fmu.setReal(ins, u_list)
        fmu.getReal(outs)

    vr_in = (fmi2ValueReference * len(ins))(*ins)
    u_arr = (fmi2Real * len(ins))(*u_list)
    vr_out = (fmi2ValueReference * len(outs))(*outs)
    y_arr = (fmi2Real * len(outs))()

    def fmu_eval_raw():
        counter[0] += 1
        u_arr[0] = 1e-6 * counter[0]
        fmu.fmi2SetReal(fmu.component, vr_in, len(ins), u_arr)
        fmu.fmi2GetReal(fmu.component, vr_out, len(outs), y_arr)

    x = sa.initial_state()
    u = {ch.name: rng.normal(0.0, 0.5, ch.size) for ch in sa.inputs}

    def core_eval():
        sa.evaluate(0.0, x, u)

    t = [0.0]

    def fmu_step():  # inputs held since the previous step
        fmu.doStep(t[0], 1e-3)
        t[0] += 1e-3

    def fmu_set_raw():
        counter[0] += 1
        u_arr[0] = 1e-6 * counter[0]
        fmu.fmi2SetReal(fmu.component, vr_in, len(ins), u_arr)

    def fmu_set_step():  # new inputs, then the step
        fmu_set_raw()
        fmu.doStep(t[0], 1e-3)
        t[0] += 1e-3

    fmu_eval()
    res = {
        "fmu": path.stem,
        "n_in": len(ins),
        "n_out": len(outs),
        "fmu_eval": median_us(fmu_eval, repeat),
        "fmu_raw": median_us(fmu_eval_raw, repeat),
        "core_eval": median_us(core_eval, repeat),
    }
    if sa.n_states:
        res["fmu_step"] = median_us(fmu_step, repeat)
        res["fmu_step_new"] = median_us(fmu_set_step, repeat) - median_us(fmu_set_raw, repeat)
        res["core_step"] = median_us(lambda: core_step(sa, x, u, 1e-3, method), repeat)
    fmu.terminate()
    fmu.freeInstance()
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=2000)
    ap.add_argument("--types", nargs="*", default=DEFAULT_TYPES, choices=sorted(FMU_TYPES))
    ap.add_argument(
        "--method", type=int, default=2, choices=(1, 2, 4),
        help="the FMUs' solver.method (internal Runge-Kutta order; default 2, as the FMUs)",
    )  # fmt: skip
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        paths = build_fmus(tmp, types=args.types)
        chosen = [p for p in paths if p.stem.endswith("C1") or not p.stem[-1].isdigit()]
        print(f"{'':42s} {'evaluation (µs)':^35s} {'doStep (µs)':^35s}")
        cols = ("fmpy", "raw", "core", "raw/core", "held", "new", "core", "new/core")
        print(f"{'FMU':32s} {'in':>4s} {'out':>4s} " + " ".join(f"{c:>8s}" for c in cols))
        for p in chosen:
            r = bench(p, args.repeat, args.method)
            line = (
                f"{r['fmu']:32s} {r['n_in']:4d} {r['n_out']:4d} {r['fmu_eval']:8.1f} "
                f"{r['fmu_raw']:8.1f} {r['core_eval']:8.1f} {r['fmu_raw'] / r['core_eval']:8.2f}"
            )
            if "fmu_step" in r:
                line += (
                    f" {r['fmu_step']:8.1f} {r['fmu_step_new']:8.1f} {r['core_step']:8.1f} "
                    f"{r['fmu_step_new'] / r['core_step']:8.2f}"
                )
            print(line, flush=True)
    print(f"FMU solver.method {args.method}; targets: TitopRevoluteBodyC1 evaluation <= 60 µs, "
          "doStep <= 40 µs")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
