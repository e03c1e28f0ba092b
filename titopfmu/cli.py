"""Command line: ``titopfmu example balloon ...``, ``titopfmu build ...``,
``titopfmu cosim SYSTEM.ssp ...``."""

from __future__ import annotations

import argparse
import sys
import time
import warnings

from . import progress
from ._version import __version__
from .assembly.engine import METHODS, RunInterrupted, SimulationError
from .blocks.base import InertiaWarning, TitopError
from .cliutil import (
    COSIM_STEP,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    _write,
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
from .outputs import OutputError

EXAMPLES = ("balloon",)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="titopfmu",
        description="Non-linear TITOP multibody blocks (Alazard, Sanfedino, Kassarian): "
        "in-process simulation and FMI co-simulation units.",
    )
    parser.add_argument("--version", action="version", version=f"titopfmu {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    ex = sub.add_parser(
        "example",
        help="run one of the paper's examples",
        description="Run one of the paper's examples with the in-process engine and write its "
        "outputs as CSV (SI units, radians) and, optionally, a plot.",
    )
    ex.add_argument(
        "name",
        choices=EXAMPLES,
        help="balloon: the 9-dof balloon, slider and double pendulum of Alazard et al. "
        "(section 4, Fig. 16)",
    )
    ex.add_argument(
        "--t-final", type=positive, default=20.0, help="simulated time span in s (default 20)"
    )
    ex.add_argument(
        "--output-interval",
        type=positive,
        default=0.01,
        help="sampling interval of the outputs in s (default 0.01)",
    )
    ex.add_argument(
        "--out",
        default="results/balloon.csv",
        help="CSV file to write: header time,x,y,z,phi,theta,psi,p,theta1,theta2 "
        "(default results/balloon.csv; an existing file is overwritten)",
    )
    ex.add_argument(
        "--plot",
        default=None,
        help="image file for the plot of the 9 responses, format by extension (.png, .pdf, "
        ".svg, ...; an existing file is overwritten)",
    )
    ex.add_argument(
        "--method",
        choices=sorted(METHODS),
        default="DOP853",
        help="integration method of scipy.integrate (default DOP853)",
    )
    ex.add_argument(
        "--rtol", type=positive, default=1e-8, help="relative tolerance (default 1e-8)"
    )
    ex.add_argument(
        "--atol", type=positive, default=1e-10, help="absolute tolerance (default 1e-10)"
    )
    progress_option(ex)
    ex.add_argument("--quiet", action="store_true", help="do not print the summary or notices")
    ex.add_argument(
        "--engine",
        choices=("inprocess", "cosim"),
        default="inprocess",
        help="inprocess: the block library's engine (default); cosim: the FMUs of every block "
        "co-simulated by the master (needs the 'fmi' extra)",
    )
    ex.add_argument(
        "--step",
        type=positive,
        default=COSIM_STEP,
        help=f"cosim: communication step in s (default {COSIM_STEP:g})",
    )
    ex.add_argument(
        "--step-tolerance",
        type=positive,
        default=None,
        help="cosim: error-controlled variable step with this tolerance (--step is then the "
        "first step)",
    )
    ex.add_argument(
        "--fmus",
        default=None,
        help="cosim: folder of FMUs built by 'titopfmu build' (default: built once into the "
        "per-user cache, $XDG_CACHE_HOME/titopfmu or ~/.cache/titopfmu, and reused)",
    )
    b = sub.add_parser(
        "build",
        help="build the native FMI 2.0 (or 3.0) FMUs (co-simulation and model exchange) of every "
        "block type",
        description="Build one native FMI 2.0 (or 3.0) FMU (co-simulation and model exchange, "
        "compiled from the C core; it needs a C compiler) per block type and child-port variant, "
        "each validated with fmpy's validator when fmpy is installed (the 'fmi' extra). The FMUs "
        "carry Linux binaries, and Windows ones when the MinGW-w64 cross compiler "
        "(x86_64-w64-mingw32-gcc) is on the PATH; without it the build says that no Windows "
        "binaries are included.",
    )
    b.add_argument("--out", default="fmus", help="output folder (default fmus/)")
    b.add_argument(
        "--type",
        action="append",
        dest="types",
        metavar="TYPE",
        help="only this FMU type (repeatable): " + ", ".join(_fmu_type_keys()),
    )
    b.add_argument(
        "--max-children",
        type=int,
        default=None,
        help="skip body variants with more child ports than this",
    )
    b.add_argument(
        "--fmi-version",
        type=int,
        choices=(2, 3),
        default=2,
        help="FMI version of the FMUs: 2 (default) or 3 (FMI 3.0: ports as array variables)",
    )
    b.add_argument(
        "--jobs",
        "-j",
        type=_jobs,
        default=None,
        metavar="N",
        help="compile N FMUs at once (default: one per core this process may use)",
    )
    b.add_argument("--no-validate", action="store_true", help="skip fmpy's validator")
    progress_option(b)
    c = sub.add_parser(
        "cosim",
        help="co-simulate an SSP system of FMUs",
        description="Co-simulate the system of an SSP file (.ssp archive, a folder with "
        "SystemStructure.ssd, or an .ssd) with titopfmu's master (needs the 'fmi' extra) and "
        "write the recorded variables as CSV in the FMI cross-check format (quoted header, "
        "time first, SI units). Start time, stop time and step default to the SSD's "
        "DefaultExperiment. Exit status 1 on a co-simulation error, with the results so far "
        "written.",
    )
    c.add_argument("system", metavar="SYSTEM.ssp", help="the SSP file")
    c.add_argument(
        "--stop-time",
        type=float,
        default=None,
        help="stop time in s (default: the DefaultExperiment's stopTime)",
    )
    c.add_argument(
        "--step",
        type=positive,
        default=None,
        help="communication step in s (default: the DefaultExperiment's step, else 1e-3)",
    )
    c.add_argument(
        "--output-interval",
        type=positive,
        default=None,
        help="sampling interval of the results in s (default: every step)",
    )
    c.add_argument(
        "--out",
        default=None,
        help="CSV file to write (default results/<SYSTEM>.csv); an existing file is not "
        "overwritten unless --force is given",
    )
    c.add_argument("--force", action="store_true", help="overwrite the CSV file if it exists")
    c.add_argument(
        "--record",
        nargs="+",
        action="extend",
        metavar="COMP.VAR",
        help="variables to record: component.variable, an array by its base name "
        "(e.g. pend1.joint.m) (default: every output of every component)",
    )
    c.add_argument(
        "--mode",
        choices=("cs", "me"),
        default=None,
        help="cs: co-simulation at the communication step; me: the FMUs' model-exchange "
        "interfaces integrated together (DOP853, --rtol, --atol); default: the interface the "
        "file was written for (write_ssp's interface=), else cs",
    )
    c.add_argument("--rtol", type=positive, default=None,
                   help="me: relative tolerance (default: the file's, else 1e-8)")  # fmt: skip
    c.add_argument("--atol", type=positive, default=1e-10, help="me: absolute tolerance")
    progress_option(c)
    c.add_argument("--quiet", action="store_true", help="do not print the summary")
    from .campaign.cli import add_campaign_parser
    from .linear.cli import add_linearize_parser
    from .model_cli import add_parsers as add_model_parsers

    add_linearize_parser(sub)
    add_model_parsers(sub)
    add_campaign_parser(sub)
    return parser


def _jobs(value: str) -> int:
    """argparse type of ``--jobs``: a positive integer."""
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return n


def _fmu_type_keys() -> list[str]:
    from .fmi.catalog import FMU_TYPES

    return sorted(FMU_TYPES)


def main(argv: list[str] | None = None) -> int:
    """The ``titopfmu`` command: the exit code of the command run (see
    :data:`titopfmu.cliutil.EXIT_CODES`; argparse itself exits with 2 on a bad command line)."""
    args = build_parser().parse_args(argv)
    return run_guarded(lambda: _dispatch(args))


def _dispatch(args) -> int:
    if args.command == "example":
        return _example(args)
    if args.command == "build":
        return _build(args)
    if args.command == "cosim":
        return _cosim(args)
    for attr in ("handler", "func"):  # commands defined in their own modules
        if getattr(args, attr, None) is not None:
            return getattr(args, attr)(args)
    return EXIT_USAGE  # pragma: no cover - argparse requires a command


#: FMU types the co-simulated balloon uses (bodies with at most one child port).
BALLOON_FMU_TYPES = ["rigid_body", "prismatic_body", "revolute_body", "joint_spring_damper"]


def _cosim_balloon(args, show_progress: bool):
    """The balloon co-simulated with its FMUs; a SimulationResult with the same columns."""
    from .assembly.engine import SimulationResult
    from .examples import balloon
    from .master import CosimError

    fmu_dir, temporary = args.fmus, None
    if fmu_dir is None:
        from .fmi.cache import cached_fmus

        tell = (lambda _message: None) if args.quiet else notice
        try:
            fmu_dir = cached_fmus(
                BALLOON_FMU_TYPES, max_children=1, progress=show_progress, notice=tell
            )
        except OSError as exc:  # no usable cache folder: build for this run only
            import tempfile

            from .fmi.build import build_fmus

            fmu_dir = tempfile.mkdtemp(prefix="titopfmu_fmus_")
            notice(f"cannot use the FMU cache ({exc}); building the FMUs into {fmu_dir}")
            build_fmus(fmu_dir, types=BALLOON_FMU_TYPES, max_children=1, progress=show_progress)
            temporary = fmu_dir
    cs = balloon.build_balloon_cosim(fmu_dir)
    if temporary is not None:  # removed with the co-simulation
        import shutil
        import weakref

        weakref.finalize(cs, shutil.rmtree, temporary, True)

    def convert(res):
        out = SimulationResult(list(balloon.COLUMNS))
        cols = balloon.balloon_columns_from_cosim(res)
        for k, t in enumerate(cols["time"]):
            out.append(float(t), [float(cols[c][k]) for c in balloon.COLUMNS])
        out.n_evaluations = cs.stats.fmu_calls
        return out

    try:
        with balloon.paper_inertia_accepted():  # a known property of the paper's data
            res = cs.simulate(
                args.t_final,
                args.step,
                record=balloon.COSIM_RECORD,
                output_interval=args.output_interval,
                step_tolerance=args.step_tolerance,
                progress=show_progress,
            )
    except CosimError as exc:
        partial = convert(exc.result) if exc.result is not None and exc.result.rows else None
        raise SimulationError(str(exc), exc.time or 0.0, result=partial) from None
    except RunInterrupted as exc:
        exc.result = convert(exc.result) if exc.result is not None else None
        raise
    return convert(res)


def _example(args) -> int:
    from .examples import balloon

    bad = check_outputs(args.out, args.plot)
    if bad is not None:
        return bad
    if args.engine == "cosim":
        missing = missing_extra("co-simulation", ("fmpy",))
        if missing:
            return error(missing, EXIT_USAGE)
    show_progress = progress.wanted(args.progress)

    def draw(path, result):
        from .plotting import plot_result

        plot_result(
            result,
            path,
            units=balloon.UNITS,
            title="Balloon, slider and double pendulum (Alazard et al., Fig. 17)",
        )

    with warnings.catch_warnings():
        if args.quiet:
            warnings.simplefilter("ignore", InertiaWarning)
            warnings.filterwarnings("ignore", message=".*triangle inequality")
        t0 = time.perf_counter()
        try:
            if args.engine == "cosim":
                result = _cosim_balloon(args, show_progress)
            else:
                result = balloon.run_balloon(
                    args.t_final,
                    args.output_interval,
                    method=args.method,
                    rtol=args.rtol,
                    atol=args.atol,
                    progress=show_progress,
                )
        except (SimulationError, RunInterrupted) as exc:
            return _stopped(exc, args.out, args.plot, draw)
        except (TitopError, ValueError) as exc:
            return error(str(exc), EXIT_USAGE)
    wall = time.perf_counter() - t0

    code, out, plot = write_results(result, args.out, args.plot, lambda p: draw(p, result))
    if code == 2:
        return EXIT_FAILED
    failed = code == 1
    if not args.quiet:
        what = "FMU calls" if args.engine == "cosim" else "right-hand-side evaluations"
        print(
            f"{args.name} ({args.engine}): {args.t_final:g} s simulated in {wall:.2f} s wall "
            f"({result.n_evaluations} {what}); wrote {out}" + (f" and {plot}" if plot else "")
        )
    return EXIT_FAILED if failed else EXIT_OK


def _stopped(exc, out: str, plot: str | None, draw) -> int:
    """A run that failed or was interrupted: the results so far (CSV, and the plot when one was
    asked) written; exit code 1 or 130. ``draw(path, result)`` draws a result."""
    partial = getattr(exc, "result", None)
    drawing = None if partial is None else (lambda path: draw(path, partial))
    if isinstance(exc, KeyboardInterrupt):
        return interrupted_run(exc, out, plot, drawing)
    return failed_run(exc, out, plot, drawing)


def _build(args) -> int:
    missing = None if args.no_validate else missing_extra("validating the FMUs", ("fmpy",))
    if missing:
        return error(missing + " (or --no-validate)", EXIT_USAGE)
    from .fmi.build import (
        build_fmus,
        build_notice,
        fmu_platforms,
        selected_variants,
        win64_default,
        win64_notice,
    )
    from .fmi.catalog import FMU_TYPES
    from .fmi.native.build import PLATFORMS, BuildError

    if args.types is not None:
        unknown = sorted(set(args.types) - set(FMU_TYPES))
        if unknown:
            return error(
                f"unknown FMU type(s) {unknown}; choose from {sorted(FMU_TYPES)}", EXIT_USAGE
            )
    n = len(selected_variants(args.types, args.max_children))
    win64 = win64_default()  # looked for once: the notices and the build agree
    notice(build_notice(n, args.out, args.jobs, win64, args.fmi_version))
    without = None if win64 else win64_notice(None, args.fmi_version)
    if without is not None:  # no MinGW-w64: say that the FMUs run on Linux only
        notice(without)
    try:
        paths = build_fmus(
            args.out,
            types=args.types,
            max_children=args.max_children,
            progress=progress.wanted(args.progress),
            fmi_version=args.fmi_version,
            win64=win64,
            jobs=args.jobs,
        )
    except ValueError as exc:
        return error(str(exc), EXIT_USAGE)
    except BuildError as exc:
        return error(str(exc), EXIT_FAILED)
    except OSError as exc:
        return error(f"cannot write FMUs into '{args.out}': {exc}", EXIT_USAGE)
    problems = 0
    if not args.no_validate:
        from fmpy.validation import validate_fmu

        for p in paths:
            found = validate_fmu(str(p))
            problems += len(found)
            for text in found:
                print(f"{p.name}: {text}", file=sys.stderr)
    carried = sorted({plat for path in paths for plat in fmu_platforms(path)})
    windows = PLATFORMS[args.fmi_version][1]
    binaries = ""
    if carried:  # what the FMUs written carry, read back from them
        only = "" if windows in carried else f" only, no {windows}"
        binaries = f" (binaries: {' + '.join(carried)}{only})"
    print(
        f"built {len(paths)} FMU{'' if len(paths) == 1 else 's'} in {args.out}{binaries}"
        + ("" if args.no_validate else f"; fmpy validator: {problems} problems")
    )
    return EXIT_FAILED if problems else EXIT_OK


def _cosim(args) -> int:
    from pathlib import Path

    missing = missing_extra("co-simulation", ("fmpy",))
    if missing:
        return error(missing, EXIT_USAGE)
    from .master import CosimError
    from .master.ssp import read_ssp

    out = args.out or str(Path("results") / f"{Path(args.system).stem}.csv")
    if Path(out).is_file() and not args.force:
        return error(
            f"'{out}' exists; pass --force to overwrite it, or --out to write elsewhere", EXIT_USAGE
        )
    bad = check_outputs(out, None)
    if bad is not None:
        return bad
    try:
        cs, exp = read_ssp(args.system)
        mode = args.mode or ("me" if exp.interface == "ModelExchange" else "cs")
        rtol = args.rtol or (exp.tolerance if exp.interface == "ModelExchange" else None) or 1e-8
        stop = args.stop_time if args.stop_time is not None else exp.stop_time
        if stop is None:
            raise CosimError(
                f"'{args.system}' gives no stop time (DefaultExperiment stopTime): pass --stop-time"
            )
        step = args.step or exp.step or COSIM_STEP
        record = args.record or [
            f"{name}.{var}" for name, c in cs.components.items() for var in c.outputs
        ]
        t0 = time.perf_counter()
        result = cs.simulate(
            stop,
            step,
            start_time=exp.start_time,
            record=record,
            # model exchange has no step: it samples at the step the run would have taken
            output_interval=args.output_interval or (step if mode == "me" else None),
            progress=progress.wanted(args.progress),
            mode=mode,
            rtol=rtol,
            atol=args.atol,
        )
    except CosimError as exc:
        if exc.time is None and not getattr(exc, "result", None):
            return error(str(exc), EXIT_USAGE)  # refused before anything ran
        return failed_run(exc, out)
    except RunInterrupted as exc:
        return interrupted_run(exc, out)
    wall = time.perf_counter() - t0
    try:
        written = _write(result.to_csv, out, "--out")
    except OutputError as exc:
        return error(str(exc), EXIT_FAILED)
    if not args.quiet:
        span = stop - exp.start_time
        how = f"step {step:g} s" if mode == "cs" else f"model exchange, rtol {rtol:g}"
        print(
            f"{args.system}: {span:g} s simulated in {wall:.2f} s wall ({how}, "
            f"{len(result.columns)} columns); wrote {written}"
        )
    return EXIT_FAILED if written != out else EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
