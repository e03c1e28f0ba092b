"""Command-line verbs on model files: ``titopfmu run MODEL ...``, ``titopfmu crosscheck MODEL``
and ``titopfmu export MODEL --ssp out.ssp``.

Wiring into :mod:`titopfmu.cli`: call :func:`add_parsers` with the sub-parsers object; each
sub-parser it adds sets ``func`` (``args.func(args)`` returns the exit code), so ``main`` can
dispatch with ``if hasattr(args, "func"): return args.func(args)``. The handlers are
:func:`run_command`, :func:`crosscheck_command` and :func:`export_command`.

MODEL is anything :func:`titopfmu.sources.load_model` takes: a model file
(``docs/model-files.md``), a URDF or MJCF file, the name of a shipped model (``balloon``), or
``module:function`` returning a System.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

from . import progress
from .assembly.engine import METHODS, RunInterrupted, SimulationError
from .blocks.base import InertiaWarning, TitopError
from .cliutil import (
    COSIM_STEP,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    check_outputs,
    error,
    failed_run,
    interrupted_run,
    missing_extra,
    notice,
    positive,
    progress_option,
    run_guarded,
    write_results,
)
from .sources import MODEL_HELP, default_record, load_model

#: Defaults when neither the command line nor the model's ``experiment`` section gives a value
#: (those of ``titopfmu example``).
DEFAULTS = {
    "t_final": 20.0,
    "output_interval": 0.01,
    "method": "DOP853",
    "rtol": 1e-8,
    "atol": 1e-10,
}


#: ``export --implementation`` -> the SSD components' ``implementation``
IMPLEMENTATIONS = {"cosimulation": "CoSimulation", "modelexchange": "ModelExchange"}


def add_parsers(subparsers) -> None:
    """Add the ``run`` and ``crosscheck`` sub-commands to an argparse sub-parsers object."""
    r = subparsers.add_parser(
        "run",
        help="simulate a model file",
        description="Simulate a model file (or a URDF or MJCF file, or a shipped model name such "
        "as 'balloon') with the in-process engine and write its outputs as CSV and, optionally, "
        "a plot. "
        "Defaults come from the model's 'experiment' section, then from 'titopfmu example'.",
    )
    r.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    r.add_argument("--t-final", type=positive, default=None, help="simulated time span in s")
    r.add_argument(
        "--output-interval",
        type=positive,
        default=None,
        help="sampling interval of the outputs in s",
    )
    r.add_argument("--out", default=None, help="CSV file to write (default results/MODEL.csv)")
    r.add_argument("--plot", default=None, help="image file for the plot of the outputs")
    r.add_argument(
        "--method",
        choices=sorted(METHODS),
        default=None,
        help="integration method of scipy.integrate (default DOP853)",
    )
    r.add_argument("--rtol", type=positive, default=None, help="relative tolerance (1e-8)")
    r.add_argument("--atol", type=positive, default=None, help="absolute tolerance (1e-10)")
    progress_option(r)
    r.add_argument(
        "--quiet", action="store_true", help="do not print the summary or the inertia warnings"
    )
    r.add_argument(
        "--engine",
        choices=("inprocess", "cosim"),
        default="inprocess",
        help="inprocess (default), or cosim: the model's FMUs co-simulated by titopfmu's "
        "master (CoSimulation.from_system; FMUs built once into the per-user cache)",
    )
    r.add_argument(
        "--step",
        type=positive,
        default=COSIM_STEP,
        help=f"cosim: communication step in s (default {COSIM_STEP:g})",
    )
    r.add_argument(
        "--step-tolerance",
        type=positive,
        default=None,
        help="cosim: error-controlled variable step with this tolerance",
    )
    r.add_argument(
        "--fmus",
        default=None,
        help="cosim: folder of FMUs built by 'titopfmu build' (default: the per-user cache)",
    )
    r.add_argument(
        "--floating-base",
        action="store_true",
        help="URDF models: a free-flying root instead of a fixed base",
    )
    r.set_defaults(func=run_command)

    c = subparsers.add_parser(
        "crosscheck",
        help="compare a model in process, as FMUs with the master, and in Pinocchio",
        description="Run a model in process, through its FMUs with titopfmu's co-simulation "
        "master (CoSimulation.from_system; a model that one FMU per block cannot run, one with "
        "mimic joints, as its whole-model FMU) and in Pinocchio (built from the same model by "
        "titopfmu.reference.to_pinocchio): accelerations at random states and a trajectory; "
        "writes report.md, trajectory.png and the numbers as JSON to the output folder.",
    )
    c.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    c.add_argument("--out", default=None, help="output folder (default crosscheck_MODEL/)")
    c.add_argument("--t-final", type=positive, default=2.0, help="trajectory span in s (2)")
    c.add_argument("--states", type=int, default=20, help="number of random states (20)")
    c.add_argument("--seed", type=int, default=0, help="seed of the random states (0)")
    c.add_argument("--rtol", type=positive, default=1e-10, help="integration rtol (1e-10)")
    c.add_argument("--atol", type=positive, default=1e-12, help="integration atol (1e-12)")
    c.add_argument(
        "--floating-base",
        action="store_true",
        help="URDF models: a free-flying root instead of a fixed base",
    )
    c.add_argument(
        "--no-cosim", action="store_true", help="skip the FMU + master leg (no C compiler)"
    )
    c.add_argument(
        "--step",
        type=positive,
        default=COSIM_STEP,
        help=f"FMU leg: communication step in s (default {COSIM_STEP:g})",
    )
    c.add_argument("--fmus", default=None, help="FMU leg: folder of FMUs (default: the cache)")
    c.add_argument("--quiet", action="store_true", help="do not print the summary")
    c.set_defaults(func=crosscheck_command)

    e = subparsers.add_parser(
        "export",
        help="write a model as one FMU (--fmu) or as an SSP file of block FMUs (--ssp)",
        description="Write a model (model file, URDF, MJCF or shipped name) for other tools. "
        "--fmu: one native FMU of the whole model (co-simulation and model exchange), its "
        "algebraic loop solved inside, so that any FMI host runs it exactly (docs/fmus.md, "
        "'Model FMUs'). --ssp: an SSP 1.0 archive of one native FMU per block, parameters bound, "
        "connections and a default experiment, for hosts that iterate algebraic loops "
        "(titopfmu cosim FILE.ssp); --implementation modelexchange writes it for one "
        "integrator over the FMUs' model-exchange interfaces, --fmi-version 3 with FMI 3.0 "
        "FMUs (an SSP 2.0 file).",
    )
    e.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    dest = e.add_mutually_exclusive_group(required=True)
    dest.add_argument("--fmu", help="FMU file to write: the whole model as one FMU")
    dest.add_argument("--ssp", help="SSP file to write (e.g. model.ssp): one FMU per block")
    e.add_argument(
        "--fmi-version",
        type=int,
        choices=(2, 3),
        default=2,
        help="FMI version of the FMU (--fmu) or of the block FMUs (--ssp; 3: an SSP 2.0 file, "
        "which titopfmu's master does not run) (default 2)",
    )
    e.add_argument(
        "--implementation",
        choices=tuple(IMPLEMENTATIONS),
        default=None,
        help="--ssp: the FMU interface the file says to use: cosimulation (default) or "
        "modelexchange (one integrator for the whole system)",
    )
    e.add_argument(
        "--rtol",
        type=positive,
        default=None,
        help="--ssp --implementation modelexchange: relative tolerance of the default "
        "experiment (default: the model's experiment, else 1e-8)",
    )
    e.add_argument(
        "--signal",
        action="append",
        default=[],
        metavar="SIGNAL",
        help="--fmu: also export this signal as outputs (e.g. pend1.joint.m, or NAME=SIGNAL to "
        "name them; repeatable); the model file's outputs are always exported",
    )
    e.add_argument(
        "--blocks",
        default=None,
        metavar="A,B,...",
        help="--fmu: export only these blocks (a subsystem); the TITOP ports at the cut become "
        "the FMU's ports (parent motion in / wrench out, child motion out / wrench in)",
    )
    e.add_argument(
        "--fmus",
        default=None,
        help="--ssp: folder of the block FMUs to include, of the --fmi-version (default: built "
        "once into the per-user cache)",
    )
    e.add_argument(
        "--t-final", type=positive, default=None, help="stop time of the default experiment (s)"
    )
    e.add_argument(
        "--step",
        type=positive,
        default=COSIM_STEP,
        help=f"communication step of the default experiment (s, default {COSIM_STEP:g})",
    )
    e.add_argument(
        "--floating-base",
        action="store_true",
        help="URDF models: a free-flying root instead of a fixed base",
    )
    e.add_argument("--quiet", action="store_true", help="do not print the summary")
    e.set_defaults(func=export_command)


def build_parser() -> argparse.ArgumentParser:
    """A stand-alone parser with the three verbs (``python -m titopfmu.model_cli``)."""
    p = argparse.ArgumentParser(prog="titopfmu")
    add_parsers(p.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_guarded(lambda: args.func(args))


def _settings(args, system) -> dict:
    info = getattr(system, "model_info", None)
    exp = dict(info.experiment) if info is not None else {}
    out = {}
    for key, default in DEFAULTS.items():
        given = getattr(args, key, None)
        out[key] = given if given is not None else exp.get(key, default)
    return out


def run_command(args) -> int:
    """``titopfmu run MODEL``: simulate and write the CSV (and plot)."""
    info = system = None

    def draw(path, result):
        from .plotting import plot_result

        plot_result(
            result,
            path,
            units=info.units if info is not None else None,
            title=(info.description if info is not None else None) or system.name,
        )

    with warnings.catch_warnings():
        if args.quiet:
            warnings.simplefilter("ignore", InertiaWarning)
        t0 = time.perf_counter()
        try:
            system = load_model(args.model, args.floating_base)
            from .assembly.engine import Engine

            info = getattr(system, "model_info", None)
            record = (info.outputs if info is not None and info.outputs else None) or (
                default_record(system)
            )
            s = _settings(args, system)
            out = args.out or f"results/{system.name}.csv"
            bad = check_outputs(out, args.plot)
            if bad is not None:
                return bad
            if args.engine == "cosim":
                missing = missing_extra("--engine cosim", ("fmpy",))
                if missing:
                    return error(missing, EXIT_USAGE)
                result = _run_cosim(args, system, record, s)
            else:
                result = Engine(system).simulate(
                    float(s["t_final"]),
                    output_interval=float(s["output_interval"]),
                    record=record,
                    method=s["method"],
                    rtol=float(s["rtol"]),
                    atol=float(s["atol"]),
                    progress=progress.wanted(args.progress),
                )
        except (SimulationError, RunInterrupted) as exc:
            return _stopped(exc, out, args.plot, draw)
        except TitopError as exc:
            if getattr(exc, "result", None) is not None and exc.result.rows:
                return _stopped(exc, out, args.plot, draw)  # a co-simulation that failed
            return error(str(exc), EXIT_USAGE)
        except (FileNotFoundError, ImportError) as exc:
            return error(str(exc), EXIT_USAGE)
    wall = time.perf_counter() - t0
    code, out, plot = write_results(result, out, args.plot, lambda p: draw(p, result))
    if code == 2:
        return EXIT_FAILED
    if not args.quiet:
        calls = "FMU calls" if args.engine == "cosim" else "right-hand-side evaluations"
        print(
            f"{system.name} ({args.engine}): {float(s['t_final']):g} s simulated in {wall:.2f} s "
            f"wall ({result.n_evaluations} {calls}); wrote {out}" + (f" and {plot}" if plot else "")
        )
    return code


def _stopped(exc, out: str, plot: str | None, draw) -> int:
    """A run that failed or was interrupted: the results so far (CSV, and the plot when one was
    asked) written; exit code 1 or 130. ``draw(path, result)`` draws a result."""
    partial = getattr(exc, "result", None)
    drawing = None if partial is None else (lambda path: draw(path, partial))
    if isinstance(exc, KeyboardInterrupt):
        return interrupted_run(exc, out, plot, drawing)
    return failed_run(exc, out, plot, drawing)


def _cosim_of(system, fmus, quiet: bool):
    """``CoSimulation.from_system`` with the FMU builds announced on stderr."""
    from .master import CoSimulation

    return CoSimulation.from_system(
        system, fmus, notice=(lambda _message: None) if quiet else notice
    )


def _run_cosim(args, system, record, s):
    """``run --engine cosim``: the model's FMUs with the master; the engine's columns."""
    from .master.from_system import simulate_system

    cs = _cosim_of(system, args.fmus, args.quiet)
    step = float(args.step)
    interval = float(s["output_interval"])
    if args.step_tolerance is None and abs(interval / step - round(interval / step)) > 1e-9:
        raise TitopError(
            f"--output-interval {interval:g} must be a multiple of the communication step "
            f"--step {step:g}"
        )
    return simulate_system(
        cs,
        float(s["t_final"]),
        step,
        record=record,
        output_interval=interval,
        step_tolerance=args.step_tolerance,
        progress=progress.wanted(args.progress),
    )


def export_command(args) -> int:
    """``titopfmu export MODEL --ssp out.ssp``: the model's FMUs, parameters, connections and
    default experiment as an SSP archive (``--implementation``, ``--fmi-version``: which FMUs and
    interface); ``--fmu out.fmu``: the whole model as one FMU."""
    if args.fmu:
        for option, given in (("--implementation", args.implementation),
                              ("--rtol", args.rtol)):  # fmt: skip
            if given is not None:
                return error(f"{option} applies to --ssp (a model FMU offers co-simulation and "
                             "model exchange)", EXIT_USAGE)  # fmt: skip
        return _export_fmu(args)
    interface = IMPLEMENTATIONS[args.implementation or "cosimulation"]
    if args.rtol is not None and interface != "ModelExchange":
        return error("--rtol applies to --implementation modelexchange", EXIT_USAGE)
    missing = missing_extra("export", ("fmpy",))
    if missing:
        return error(missing, EXIT_USAGE)
    from .master import write_ssp

    def say(message: str) -> None:
        if not args.quiet:
            notice(message)

    fmi3 = args.fmi_version == 3
    try:
        with warnings.catch_warnings():
            if args.quiet:
                warnings.simplefilter("ignore", InertiaWarning)
            system = load_model(args.model, args.floating_base)
            # the co-simulation is made of FMI 2.0 FMUs (the master's); FMI 3.0 ones replace
            # them in the file (write_ssp's fmi_version=3), from --fmus or the cache
            cs = _cosim_of(system, None if fmi3 else args.fmus, args.quiet)
            s = _settings(args, system)
            tolerance = float(s["rtol"]) if interface == "ModelExchange" else None
            path = write_ssp(
                cs, args.ssp, stop_time=float(s["t_final"]), step=float(args.step),
                name=system.name, interface=interface, tolerance=tolerance,
                fmi_version=args.fmi_version, fmus=args.fmus if fmi3 else None, notice=say,
            )  # fmt: skip
    except (TitopError, FileNotFoundError, ImportError, OSError) as exc:
        return error(str(exc), EXIT_USAGE)
    if not args.quiet:
        how = (f"model exchange, rtol {tolerance:g}" if tolerance is not None
               else f"step {float(args.step):g} s")  # fmt: skip
        kind = "SSP 2.0, FMI 3.0 FMUs" if fmi3 else "SSP 1.0, FMI 2.0 FMUs"
        print(
            f"{system.name}: wrote {path} ({kind}; {len(cs.components)} components, "
            f"{len({c.file.path for c in cs.components.values()})} FMUs; default experiment "
            f"0-{float(s['t_final']):g} s, {how})"
        )
    return EXIT_OK


def _export_fmu(args) -> int:
    """``titopfmu export MODEL --fmu out.fmu``: the model FMU (titopfmu.fmi.model)."""
    from .fmi.model import build_model_fmu

    try:
        with warnings.catch_warnings():
            if args.quiet:
                warnings.simplefilter("ignore", InertiaWarning)
            system = load_model(args.model, args.floating_base)
            blocks = None
            if args.blocks is not None:
                blocks = [b.strip() for b in args.blocks.split(",") if b.strip()]
            if not args.quiet:
                notice(f"building the model FMU of '{system.name}' (FMI {args.fmi_version}.0), "
                       "about 40 s")  # fmt: skip
            path = build_model_fmu(system, args.fmu, fmi_version=args.fmi_version, blocks=blocks,
                                   signals=args.signal, t_final=args.t_final)  # fmt: skip
    except (TitopError, FileNotFoundError, OSError) as exc:
        return error(str(exc), EXIT_USAGE)
    if not args.quiet:
        print(f"{system.name}: wrote {path} (FMI {args.fmi_version}.0, co-simulation and model "
              "exchange)")  # fmt: skip
    return EXIT_OK


def crosscheck_command(args) -> int:
    """``titopfmu crosscheck MODEL``: in process vs FMUs + master vs Pinocchio (a flexible
    model: vs titopfmu's TMT reference); writes a Markdown report."""
    missing = None if args.no_cosim else missing_extra("crosscheck's FMU leg (or --no-cosim)",
                                                       ("fmpy",))  # fmt: skip
    if missing:
        return error(missing, EXIT_USAGE)
    from .crosscheck import crosscheck

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InertiaWarning)
            system = load_model(args.model, args.floating_base)
            # Pinocchio is the reference of rigid models; a flexible one's is titopfmu's own
            # (titopfmu.reference.flexible_tree)
            if not any(getattr(b, "flexible", None) is not None for b in system.blocks.values()):
                missing = missing_extra("crosscheck", ("pinocchio",), extra="urdf")
                if missing:
                    return error(missing, EXIT_USAGE)
            out = Path(args.out or f"crosscheck_{system.name}")
            report = crosscheck(
                system,
                out,
                t_final=args.t_final,
                n_states=args.states,
                seed=args.seed,
                rtol=args.rtol,
                atol=args.atol,
                cosim=not args.no_cosim,
                cosim_step=args.step,
                fmus=args.fmus,
                notice=(lambda _message: None) if args.quiet else notice,
            )
    except (TitopError, FileNotFoundError, ImportError) as exc:
        return error(str(exc), EXIT_USAGE)
    if not args.quiet:
        print(report.summary())
    return EXIT_OK if report.passed else EXIT_FAILED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
