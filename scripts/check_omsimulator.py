"""The balloon's .ssp, written by ``write_ssp``, run unedited in OMSimulator and compared with
the in-process engine.

Builds the FMUs, writes the paper's balloon (seed 004) as an SSP with ``write_ssp`` (no edit
afterwards), loads it with OMSimulator's Python API (OMSimulator 3: ``SSP(path)``; 2: the
binding of its C API, ``OMSimulator().importFile``), runs it and compares the 9 dof on a 10 ms
grid with the engine at tight tolerances and with titopfmu's own master at the same step, at its
default coupling (inputs extrapolated to the middle of the step, second order) and with held
inputs (first order), which is what OMSimulator's master does. Co-simulation (OMSimulator's
fixed-step master ``oms_ma``, the FMUs' co-simulation interface) by default; ``--interface
ModelExchange`` writes the model-exchange form (OMSimulator integrates the FMUs' model-exchange
interface with CVODE).

OMSimulator is not on PyPI as a wheel: its ``omsimulator`` package downloads the native library
from OpenModelica's servers when it is installed. Point ``--omsimulator`` at the folder holding
the ``OMSimulator`` Python package of an installation (``<prefix>/lib/x86_64-linux-gnu`` of a
build from source), or install it so that ``import OMSimulator`` works.

    python scripts/check_omsimulator.py [--t-final 2] [--step 1e-3] [--omsimulator DIR]
        [--interface ModelExchange] [--option=--inputExtrapolation=true]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np
from lxml import etree

from titopfmu.examples.balloon import (
    COLUMNS,
    COSIM_RECORD,
    balloon_columns_from_cosim,
    build_balloon_cosim,
    run_balloon,
)
from titopfmu.fmi.build import build_fmus
from titopfmu.master.ssp import write_ssp

SAMPLE = 0.01  # s between compared samples

#: the scalar variables read from OMSimulator: the recorded name -> (component, variable)
VARIABLES = {
    **{f"balloon_m[{i}]": ("balloon", f"body.m[{i}]") for i in range(1, 19)},
    **{k: tuple(v.split(".", 1)) for k, v in COSIM_RECORD.items() if k != "balloon_m"},
}


class Samples(dict):
    """Recorded columns by name, as :func:`balloon_columns_from_cosim` reads them."""


def run_omsimulator(ssp: Path, t_final: float, workdir: Path) -> tuple[Samples, float, str]:
    """Load ``ssp`` in OMSimulator unedited, run it to ``t_final`` and sample the balloon every
    SAMPLE s. Returns the samples, the wall time (s) of initialisation and stepping, and what
    OMSimulator made of the file (system type, solver, step)."""
    import OMSimulator

    system = etree.fromstring(zipfile.ZipFile(ssp).read("SystemStructure.ssd")).find(
        "{*}System").get("name")  # fmt: skip
    n = int(round(t_final / SAMPLE))
    rows, times = [], []
    if hasattr(OMSimulator, "SSP"):  # OMSimulator 3
        from OMSimulator import SSP, CRef

        im = SSP(str(ssp)).instantiate()
        setup = "; ".join(c for c in im.apiCall if c.startswith(
            ("oms_addSystem", "oms_setSolver", "oms_setFixedStepSize", "oms_setTolerance",
             "oms_setVariableStepSize")))  # fmt: skip
        im.setResultFile(str(workdir / "omsimulator_res.mat"))
        t0 = time.perf_counter()
        im.initialize()
        for k in range(n + 1):
            if k:
                im.stepUntil(k * SAMPLE)
            times.append(im.getTime() if k else 0.0)
            rows.append([im.getValue(CRef(system, c, v)) for c, v in VARIABLES.values()])
        wall = time.perf_counter() - t0
        im.terminate()
        im.delete()
    else:  # OMSimulator 2: its C API through its Python binding
        oms = OMSimulator.OMSimulator()
        model, status = oms.importFile(str(ssp))
        if status != 0:
            raise RuntimeError(f"OMSimulator could not import {ssp} (status {status})")
        root = f"{model}.{system}"
        kind = {2: "weakly coupled", 3: "strongly coupled"}.get(oms.getSystemType(root)[0], "?")
        setup = f"{kind} system, solver {oms.getSolver(root)[0]}"
        if kind == "weakly coupled":
            setup += f", fixed step {oms.getFixedStepSize(root)[0]:g} s"
        oms.setResultFile(model, str(workdir / "omsimulator_res.mat"))
        t0 = time.perf_counter()
        for call in (oms.instantiate, oms.initialize):
            if call(model) != 0:
                raise RuntimeError(f"OMSimulator: {call.__name__} failed")
        for k in range(n + 1):
            if k:
                oms.stepUntil(model, k * SAMPLE)
            times.append(oms.getTime(model)[0])
            rows.append([oms.getReal(f"{root}.{c}.{v}")[0] for c, v in VARIABLES.values()])
        wall = time.perf_counter() - t0
        oms.terminate(model)
        oms.delete(model)
    data = np.array(rows, dtype=float)
    out = Samples(time=np.array(times))  # where OMSimulator stopped (see main)
    out.update({name: data[:, j] for j, name in enumerate(VARIABLES)})
    return out, wall, setup


def max_errors(cols: dict, ref: dict) -> dict[str, float]:
    """Max error of each dof of ``cols`` against ``ref``, sample by sample at the same times."""
    index = {round(t, 9): k for k, t in enumerate(ref["time"])}
    ks = [index[round(t, 9)] for t in cols["time"]]
    return {k: float(np.max(np.abs(np.asarray(cols[k]) - ref[k][ks]))) for k in COLUMNS}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--t-final", type=float, default=2.0, help="simulated time (s)")
    ap.add_argument("--step", type=float, default=1e-3, help="communication step (s)")
    ap.add_argument("--interface", choices=("CoSimulation", "ModelExchange"),
                    default="CoSimulation")  # fmt: skip
    ap.add_argument("--tolerance", type=float, default=None,
                    help="relative tolerance written for OMSimulator (CVODE in model exchange)")
    ap.add_argument("--omsimulator", default=None,
                    help="folder holding the OMSimulator Python package")
    ap.add_argument("--keep", default=None, help="also write the .ssp to this path")
    ap.add_argument("--option", action="append", default=[],
                    help="an OMSimulator command-line option, e.g. --inputExtrapolation=true")
    args = ap.parse_args(argv)
    if args.omsimulator:
        sys.path.insert(0, os.path.abspath(args.omsimulator))
    try:
        import OMSimulator
    except ImportError as exc:
        print(f"OMSimulator's Python package cannot be imported ({exc}); see --help",
              file=sys.stderr)  # fmt: skip
        return 2
    for option in args.option:
        if hasattr(OMSimulator, "SSP"):  # OMSimulator 3
            from OMSimulator import capi

            capi.capi().setCommandLineOption(option)
        else:
            OMSimulator.OMSimulator().setCommandLineOption(option)
    warnings.simplefilter("ignore")
    T, h = args.t_final, args.step
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        build_fmus(tmp / "fmus", types=["rigid_body", "prismatic_body", "revolute_body",
                                        "joint_spring_damper"], max_children=1)  # fmt: skip
        cs = build_balloon_cosim(tmp / "fmus")
        ssp = write_ssp(cs, tmp / "balloon.ssp", stop_time=T, step=h,
                        interface=args.interface, tolerance=args.tolerance)  # fmt: skip
        if args.keep:
            Path(args.keep).write_bytes(ssp.read_bytes())
        oms, oms_wall, setup = run_omsimulator(ssp, T + h, tmp)
        # OMSimulator adds up its steps: where the sum falls short of a requested time by
        # rounding, it stops one step later (and says so); compare at the times it reports,
        # on the step's grid
        late = np.abs(oms["time"] - np.arange(len(oms["time"])) * SAMPLE) > 1e-9
        t0 = time.perf_counter()
        master = cs.simulate(T, h, output_interval=SAMPLE, record=COSIM_RECORD)
        master_wall = time.perf_counter() - t0
        held = build_balloon_cosim(tmp / "fmus")
        held.coupling = "hold"  # OMSimulator's scheme: inputs held over a communication step
        hold = held.simulate(T + 2 * h, h, output_interval=h, record=COSIM_RECORD)
    ref = run_balloon(T + 2 * h, h, rtol=1e-12, atol=1e-13)
    oms_cols = balloon_columns_from_cosim(oms)
    hold_cols = balloon_columns_from_cosim(hold)
    table = {
        "OMSimulator": max_errors(oms_cols, ref),
        "titopfmu": max_errors(balloon_columns_from_cosim(master), ref),
        "titopfmu-hold": max_errors(hold_cols, ref),
        "OMS-vs-hold": max_errors(oms_cols, hold_cols),
    }
    options = f", OMSimulator options {' '.join(args.option)}" if args.option else ""
    print(f"balloon, {T:g} s, {args.interface}, step {h:g} s{options}: max error of each dof "
          "(m, rad) against the in-process engine (DOP853, rtol 1e-12) on a 10 ms grid; "
          "titopfmu: its master at its default coupling (extrapolated inputs), titopfmu-hold: "
          "with inputs held; OMS-vs-hold: OMSimulator against titopfmu-hold")  # fmt: skip
    print(f"OMSimulator read: {setup}")
    if late.any():
        print(f"OMSimulator stopped one step past the requested time at {int(late.sum())} of "
              f"{len(late)} samples (from t = {oms['time'][np.argmax(late)]:.6g} s): compared "
              "there")  # fmt: skip
    print(f"{'dof':>8}" + "".join(f"{name:>15}" for name in table))
    for k in [*COLUMNS, "max"]:
        row = [max(e.values()) if k == "max" else e[k] for e in table.values()]
        print(f"{k:>8}" + "".join(f"{v:15.3g}" for v in row))
    print(f"wall time: OMSimulator {oms_wall:.2f} s (real-time factor {T / oms_wall:.2f}), "
          f"titopfmu's master {master_wall:.2f} s (real-time factor {T / master_wall:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
