"""Benchmark: the balloon's model FMU in the C host, in fmpy, and the in-process engine, side by
side in one run (shared, noisy machines: compare the ratios of one run, not times across runs).

    python scripts/bench_model_fmu.py [--t-final 20] [--step 0.01] [--repeat 3]

Prints, for each, the wall-clock time of a 20 s simulation (best of --repeat), its real-time
factor, and its largest difference from the engine's outputs at the communication points (the
same tolerances: rtol 1e-8, atol 1e-10). Target of the model FMU (issue "whole-model FMUs"): the
C host at least 5 times faster than the engine, real-time factor above 1000.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np

from titopfmu import Engine, InertiaWarning, export_fmu
from titopfmu.fmi.native.build import FMI_HEADERS, compiler
from titopfmu.sources import load_model

HOST = Path(__file__).resolve().parent.parent / "tests" / "core" / "model_host.c"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-final", type=float, default=20.0)
    ap.add_argument("--step", type=float, default=0.01, help="communication step (s)")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    from fmpy import read_model_description, simulate_fmu

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        system = load_model("balloon")
    outs = dict(system.model_info.outputs)
    cols = list(outs)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        fmu = export_fmu(system, tmp / "balloon.fmu", win64=False)
        md = read_model_description(str(fmu))
        vr = {v.name: v.valueReference for v in md.modelVariables}
        with zipfile.ZipFile(fmu) as z:
            z.extractall(tmp / "x")
        so = next((tmp / "x" / "binaries" / "linux64").glob("*.so"))
        exe = tmp / "host"
        subprocess.run([compiler(), "-std=c99", "-O2", "-I", str(FMI_HEADERS), str(HOST), "-o",
                        str(exe), "-ldl", "-lm"], check=True)  # fmt: skip
        every = max(1, round(0.1 / a.step))

        def engine():
            t = time.perf_counter()
            r = Engine(system).simulate(a.t_final, output_interval=a.step * every, record=outs,
                                        rtol=1e-8, atol=1e-10)  # fmt: skip
            return time.perf_counter() - t, r.time, np.column_stack([r[c] for c in cols])

        def host():
            p = subprocess.run([str(exe), str(so), md.guid, repr(a.t_final), repr(a.step),
                                str(every), *(str(vr[c]) for c in cols)], capture_output=True,
                               text=True, check=True)  # fmt: skip
            rows = np.array([[float(x) for x in ln.split()] for ln in p.stdout.splitlines()])
            elapsed = float(p.stderr.split("elapsed")[-1])
            return elapsed, rows[:, 0], rows[:, 1:]

        def fmpy_cs():
            t = time.perf_counter()
            r = simulate_fmu(str(fmu), fmi_type="CoSimulation", stop_time=a.t_final,
                             output_interval=a.step, output=cols)  # fmt: skip
            return time.perf_counter() - t, r["time"], np.column_stack([r[c] for c in cols])

        runs = {"in-process engine": engine, "model FMU, C host": host, "model FMU, fmpy": fmpy_cs}
        best = {}
        for _ in range(a.repeat):  # interleaved: each repeat runs all three
            for name, f in runs.items():
                dt, t, y = f()
                if name not in best or dt < best[name][0]:
                    best[name] = (dt, t, y)
        _, te, ye = best["in-process engine"]
        print(f"balloon, {a.t_final:g} s, communication step {a.step:g} s, best of {a.repeat}")
        print(f"{'':22s} {'time (s)':>10s} {'real-time factor':>17s} {'vs engine':>10s} "
              f"{'max |diff|':>11s}")  # fmt: skip
        for name, (dt, t, y) in best.items():
            got = np.column_stack([np.interp(te, t, y[:, k]) for k in range(y.shape[1])])
            err = float(np.abs(got - ye).max())
            ratio = best["in-process engine"][0] / dt
            print(f"{name:22s} {dt:10.4f} {a.t_final / dt:17.0f} {ratio:9.1f}x {err:11.2e}")


if __name__ == "__main__":
    main()
