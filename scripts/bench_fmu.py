#!/usr/bin/env python
"""Cost of a native FMU's calls from a C host, side by side with the core called directly.

Builds ``TitopRevoluteBodyC1`` and a small C host (no Python in the timed process: it loads the
FMU's binary with ``dlopen`` and calls the FMI functions, and links the C core itself for the
reference). In one run, median of ``--rounds`` rounds of timed batches:

* ``fmi2DoStep`` of 1 ms (Heun, inputs held; target at most 2 µs);
* one ``fmi2GetReal`` of a single output, outputs up to date (target at most 0.1 µs);
* one evaluation: ``fmi2SetReal`` of one changed input, then ``fmi2GetReal`` of one output;
* one model-exchange evaluation: ``fmi2SetReal`` of one changed input, then
  ``fmi2GetDerivatives`` (the state derivative alone);
* one ``fmi2GetDirectionalDerivative`` (one output, one input): the same seed again (the FMU
  keeps its last complex-step evaluation), a new seed at every call (alternately ``joint.tau``
  and ``P.m[1]``), and a new seed for all 18 values of the port motion ``C1.m``;
* the core directly: ``titop_eval`` of the same lone block (full evaluation) on doubles, and the
  complex-step evaluation.

    python scripts/bench_fmu.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from titopfmu.fmi.catalog import FMU_TYPES
from titopfmu.fmi.native.build import CORE, FMI_HEADERS, build_native, compiler

HOST = r"""
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fmi2Functions.h"
#include "titop.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}
#define F(name) name##TYPE *name = (name##TYPE *)dlsym(lib, #name)

int main(int argc, char **argv)
{
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    F(fmi2Instantiate); F(fmi2SetupExperiment); F(fmi2EnterInitializationMode);
    F(fmi2ExitInitializationMode); F(fmi2DoStep); F(fmi2GetReal); F(fmi2SetReal);
    F(fmi2GetDirectionalDerivative); F(fmi2FreeInstance);
    fmi2CallbackFunctions cb = {NULL, calloc, free, NULL, NULL};
    fmi2Component c = fmi2Instantiate("bench", fmi2CoSimulation, argv[2], "", &cb, 0, 0);
    if (!c) return 2;
    unsigned tau = (unsigned)atoi(argv[3]), out = (unsigned)atoi(argv[4]);
    long n = atol(argv[5]);
    unsigned pm1 = (unsigned)atoi(argv[6]), cm1 = (unsigned)atoi(argv[7]);
    fmi2SetupExperiment(c, 0, 0, 0.0, 0, 0);
    fmi2EnterInitializationMode(c);
    fmi2ExitInitializationMode(c);
    double v = 0.3, y, t0, dd, one = 1.0;
    fmi2SetReal(c, &tau, 1, &v);
    double t = 0.0;
    t0 = now();
    for (long i = 0; i < n; i++, t += 1e-3) fmi2DoStep(c, t, 1e-3, 1);
    double step = (now() - t0) / n;
    fmi2GetReal(c, &out, 1, &y);
    t0 = now();
    for (long i = 0; i < n; i++) fmi2GetReal(c, &out, 1, &y);
    double get = (now() - t0) / n;
    t0 = now();
    for (long i = 0; i < n; i++) {
        v = 0.3 + 1e-9 * (i & 1);
        fmi2SetReal(c, &tau, 1, &v);
        fmi2GetReal(c, &out, 1, &y);
    }
    double eval = (now() - t0) / n;
    t0 = now();
    for (long i = 0; i < n; i++) fmi2GetDirectionalDerivative(c, &out, 1, &tau, 1, &one, &dd);
    double dir = (now() - t0) / n;
    /* a new seed at every call (alternately joint.tau and P.m[1]): one complex-step evaluation
       each, for one output, then for the 18 values of the port motion C1.m */
    unsigned knowns[2] = {tau, pm1}, cm[18];
    double d18[18];
    for (int k = 0; k < 18; k++) cm[k] = cm1 + (unsigned)k;
    t0 = now();
    for (long i = 0; i < n; i++)
        fmi2GetDirectionalDerivative(c, &out, 1, &knowns[i & 1], 1, &one, &dd);
    double dir_new = (now() - t0) / n;
    t0 = now();
    for (long i = 0; i < n; i++)
        fmi2GetDirectionalDerivative(c, cm, 18, &knowns[i & 1], 1, &one, d18);
    double dir18 = (now() - t0) / n;
    fmi2FreeInstance(c);

    /* model exchange: fmi2SetReal of one changed input, then fmi2GetDerivatives */
    F(fmi2EnterContinuousTimeMode); F(fmi2GetDerivatives);
    c = fmi2Instantiate("bench", fmi2ModelExchange, argv[2], "", &cb, 0, 0);
    if (!c) return 2;
    fmi2SetupExperiment(c, 0, 0, 0.0, 0, 0);
    fmi2EnterInitializationMode(c);
    fmi2ExitInitializationMode(c);
    fmi2EnterContinuousTimeMode(c);
    double der[2];
    t0 = now();
    for (long i = 0; i < n; i++) {
        v = 0.3 + 1e-9 * (i & 1);
        fmi2SetReal(c, &tau, 1, &v);
        fmi2GetDerivatives(c, der, 2);
    }
    double getder = (now() - t0) / n;
    fmi2FreeInstance(c);

    /* the core directly: the same lone revolute body with one child port */
    titop_body B; titop_port P; titop_ext X; titop_model m;
    memset(&B, 0, sizeof B); memset(&P, 0, sizeof P); memset(&X, 0, sizeof X);
    memset(&m, 0, sizeof m);
    B.kind = TITOP_REVOLUTE; B.parent = TITOP_PARENT_INPUT; B.nports = 1; B.next = 1;
    B.x0 = 0; B.in0 = 0; B.pm0 = 7; B.mass = 1.0; B.inertia[0] = B.inertia[4] = B.inertia[8] = 0.1;
    B.gravity[2] = -9.81; B.axis[2] = 1.0; B.R0[0] = B.R0[4] = B.R0[8] = 1.0;
    X.w0 = 1; P.child = -1; P.w0 = 25; P.pc[0] = 0.5;
    m.nbodies = 1; m.bodies = &B; m.nports = 1; m.ports = &P; m.nexts = 1; m.exts = &X;
    m.nx = 2; m.nin = 31;
    int bad; char msg[100];
    if (titop_model_init(&m, &bad, msg, sizeof msg)) { fprintf(stderr, "%s\n", msg); return 3; }
    size_t nd = titop_data_size(&m);
    double *data = calloc(nd, sizeof(double)), *zw = calloc(2 * (nd + 4 + 31) + 2, sizeof(double));
    double x[2] = {0.1, 0.2}, in[31] = {0}, dx[2], vx[2] = {1, 0}, jdx[2];
    in[0] = 0.3;
    t0 = now();
    for (long i = 0; i < n; i++) {
        in[0] = 0.3 + 1e-9 * (i & 1);
        titop_eval(&m, data, 0.0, x, in, 1, dx, &bad);
    }
    double core = (now() - t0) / n;
    t0 = now();
    for (long i = 0; i < n; i++) titop_derivative_jvp(&m, zw, 0.0, x, in, vx, NULL, jdx, &bad);
    double zcore = (now() - t0) / n;
    printf("%.6e %.6e %.6e %.6e %.6e %.6e %.6e %.6e %.6e\n", step, get, eval, getder, dir,
           dir_new, dir18, core, zcore);
    free(data); free(zw);
    return 0;
}
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=200_000, help="calls per timed batch")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        fmu = build_native(FMU_TYPES["revolute_body"], 1, tmp, win64=False)
        with zipfile.ZipFile(fmu) as z:
            z.extractall(tmp / "x")
            md = z.read("modelDescription.xml").decode()
        from fmpy import read_model_description

        d = read_model_description(str(fmu))
        vr = {v.name: v.valueReference for v in d.modelVariables}
        host = tmp / "host"
        (tmp / "host.c").write_text(HOST)
        cmd = [compiler(), "-std=gnu99", "-O2", "-I", str(CORE), "-I", str(FMI_HEADERS),
               str(tmp / "host.c"), str(CORE / "titop_double.c"), str(CORE / "titop_complex.c"),
               "-o", str(host), "-ldl", "-lm"]  # fmt: skip
        subprocess.run(cmd, check=True)
        so = tmp / "x" / "binaries" / "linux64" / f"{fmu.stem}.so"
        rows = []
        for _ in range(args.rounds):
            p = subprocess.run([str(host), str(so), d.guid, str(vr["joint.tau"]),
                                str(vr["joint.m[1]"]), str(args.calls), str(vr["P.m[1]"]),
                                str(vr["C1.m[1]"])],
                               capture_output=True, text=True, check=True)  # fmt: skip
            rows.append([float(v) for v in p.stdout.split()])
    del md
    names = [
        ("fmi2DoStep 1 ms (Heun, inputs held)", 2e-6),
        ("fmi2GetReal, one variable", 1e-7),
        ("evaluation: fmi2SetReal + fmi2GetReal", None),
        ("ME: fmi2SetReal + fmi2GetDerivatives", None),
        ("fmi2GetDirectionalDerivative 1 x 1, same seed", None),
        ("fmi2GetDirectionalDerivative 1 x 1, new seed", None),
        ("fmi2GetDirectionalDerivative C1.m (18) x 1, new", None),
        ("core: titop_eval of the lone block", None),
        ("core: complex-step derivative (one direction)", None),
    ]
    med = [statistics.median(r[k] for r in rows) for k in range(len(names))]
    lo = [min(r[k] for r in rows) for k in range(len(names))]
    hi = [max(r[k] for r in rows) for k in range(len(names))]
    print(f"TitopRevoluteBodyC1 from a C host, median of {args.rounds} rounds of "
          f"{args.calls} calls (min .. max)")  # fmt: skip
    for (label, target), m, a, b in zip(names, med, lo, hi, strict=True):
        verdict = (
            ""
            if target is None
            else (f"   target <= {target * 1e6:g} us: {'met' if m <= target else 'NOT met'}")
        )
        print(f"  {label:<48}{m * 1e6:9.3f} us  ({a * 1e6:.3f} .. {b * 1e6:.3f}){verdict}")
    print(f"  ratio evaluation through the FMU / core: {med[2] / med[7]:.2f}")
    print(f"  ratio directional derivative (18 x 1, new seed) / core complex step: "
          f"{med[6] / med[8]:.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
