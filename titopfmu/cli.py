"""Command line: ``titopfmu example balloon ...``, ``titopfmu build ...``,
``titopfmu cosim SYSTEM.ssp ...``."""

from __future__ import annotations

import argparse
import sys
import time
import warnings

from . import __version__
from .assembly.engine import METHODS, SimulationError
from .blocks.base import InertiaWarning, TitopError

EXAMPLES = ("balloon",)


def _positive(value: str) -> float:
    v = float(value)
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return v


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
        help="balloon: the 9-dof balloon / slider / double pendulum of seed 004, section 4",
    )
    ex.add_argument(
        "--t-final", type=_positive, default=20.0, help="simulated time span in s (default 20)"
    )
    ex.add_argument(
        "--output-interval",
        type=_positive,
        default=0.01,
        help="sampling interval of the outputs in s (default 0.01)",
    )
    ex.add_argument(
        "--out",
        default="results/balloon.csv",
        help="CSV file to write: header time,x,y,z,phi,theta,psi,p,theta1,theta2 "
        "(default results/balloon.csv)",
    )
    ex.add_argument("--plot", default=None, help="image file for the plot of the 9 responses")
    ex.add_argument(
        "--method",
        choices=sorted(METHODS),
        default="DOP853",
        help="integration method of scipy.integrate (default DOP853)",
    )
    ex.add_argument(
        "--rtol", type=_positive, default=1e-8, help="relative tolerance (default 1e-8)"
    )
    ex.add_argument(
        "--atol", type=_positive, default=1e-10, help="absolute tolerance (default 1e-10)"
    )
    ex.add_argument("--progress", action="store_true", help="show a progress bar")
    ex.add_argument(
        "--quiet", action="store_true", help="do not print the summary or the inertia warning"
    )
    ex.add_argument(
        "--engine",
        choices=("inprocess", "cosim"),
        default="inprocess",
        help="inprocess: the block library's engine (default); cosim: the FMUs of every block "
        "co-simulated by the master (needs the 'fmi' extra)",
    )
    ex.add_argument(
        "--step",
        type=_positive,
        default=COSIM_STEP,
        help=f"cosim: communication step in s (default {COSIM_STEP:g})",
    )
    ex.add_argument(
        "--step-tolerance",
        type=_positive,
        default=None,
        help="cosim: error-controlled variable step with this tolerance (--step is then the "
        "first step)",
    )
    ex.add_argument(
        "--fmus",
        default=None,
        help="cosim: folder of FMUs built by 'titopfmu build' (default: built into a temporary "
        "folder)",
    )
    b = sub.add_parser(
        "build",
        help="build the FMI 2.0 co-simulation FMUs of every block type",
        description="Build one FMI 2.0 co-simulation FMU per block type and child-port variant "
        "with pythonfmu (needs the 'fmi' extra: pip install -e '.[fmi]'), each validated with "
        "fmpy's validator.",
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
    b.add_argument("--no-validate", action="store_true", help="skip fmpy's validator")
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
        type=_positive,
        default=None,
        help="communication step in s (default: the DefaultExperiment's step, else 1e-3)",
    )
    c.add_argument(
        "--output-interval",
        type=_positive,
        default=None,
        help="sampling interval of the results in s (default: every step)",
    )
    c.add_argument(
        "--out",
        default=None,
        help="CSV file to write (default results/<SYSTEM>.csv)",
    )
    c.add_argument(
        "--record",
        nargs="+",
        action="extend",
        metavar="COMP.VAR",
        help="variables to record: component.variable, an array by its base name "
        "(e.g. pend1.joint.m) (default: every output of every component)",
    )
    c.add_argument("--progress", action="store_true", help="show a progress bar")
    c.add_argument("--quiet", action="store_true", help="do not print the summary")
    return parser


def _fmu_type_keys() -> list[str]:
    from .fmi.catalog import FMU_TYPES

    return sorted(FMU_TYPES)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "example":
        return _example(args)
    if args.command == "build":
        return _build(args)
    if args.command == "cosim":
        return _cosim(args)
    return 2  # pragma: no cover - argparse requires a command


#: Default communication step of ``titopfmu example balloon --engine cosim`` (s).
COSIM_STEP = 2.5e-4


def _cosim_balloon(args):
    """The balloon co-simulated with its FMUs; a SimulationResult with the same columns."""
    import tempfile

    from .assembly.engine import SimulationResult
    from .examples import balloon
    from .master import CosimError

    with tempfile.TemporaryDirectory(prefix="titopfmu_fmus_") as tmp:
        fmu_dir = args.fmus
        if fmu_dir is None:
            from .fmi.build import build_fmus

            build_fmus(tmp, types=["rigid_body", "prismatic_body", "revolute_body",
                                   "joint_spring_damper"], max_children=1)  # fmt: skip
            fmu_dir = tmp
        cs = balloon.build_balloon_cosim(fmu_dir)

        def convert(res):
            out = SimulationResult(list(balloon.COLUMNS))
            cols = balloon.balloon_columns_from_cosim(res)
            for k, t in enumerate(cols["time"]):
                out.append(float(t), [float(cols[c][k]) for c in balloon.COLUMNS])
            out.n_evaluations = cs.stats.fmu_calls
            return out

        try:
            res = cs.simulate(
                args.t_final,
                args.step,
                record=balloon.COSIM_RECORD,
                output_interval=args.output_interval,
                step_tolerance=args.step_tolerance,
                progress=args.progress,
            )
        except CosimError as exc:
            partial = convert(exc.result) if exc.result is not None and exc.result.rows else None
            raise SimulationError(str(exc), exc.time or 0.0, result=partial) from None
        return convert(res)


def _example(args) -> int:
    from .examples import balloon

    with warnings.catch_warnings():
        if args.quiet:
            warnings.simplefilter("ignore", InertiaWarning)
            warnings.filterwarnings("ignore", message=".*triangle inequality")
        t0 = time.perf_counter()
        try:
            if args.engine == "cosim":
                result = _cosim_balloon(args)
            else:
                result = balloon.run_balloon(
                    args.t_final,
                    args.output_interval,
                    method=args.method,
                    rtol=args.rtol,
                    atol=args.atol,
                    progress=args.progress,
                )
        except SimulationError as exc:
            if exc.result is not None and exc.result.rows:
                exc.result.to_csv(args.out)
                print(
                    f"titopfmu: error: {exc}\nresults up to t = {exc.result.time[-1]:.6g} s "
                    f"written to {args.out}",
                    file=sys.stderr,
                )
            else:
                print(f"titopfmu: error: {exc}", file=sys.stderr)
            return 1
        except TitopError as exc:
            print(f"titopfmu: error: {exc}", file=sys.stderr)
            return 2
    wall = time.perf_counter() - t0
    result.to_csv(args.out)
    if args.plot:
        from .plotting import plot_result

        plot_result(
            result,
            args.plot,
            units=balloon.UNITS,
            title="Balloon, slider and double pendulum (seed 004, Fig. 17)",
        )
    if not args.quiet:
        what = "FMU calls" if args.engine == "cosim" else "right-hand-side evaluations"
        print(
            f"{args.name} ({args.engine}): {args.t_final:g} s simulated in {wall:.2f} s wall "
            f"({result.n_evaluations} {what}); wrote {args.out}"
            + (f" and {args.plot}" if args.plot else "")
        )
    return 0


def _build(args) -> int:
    try:
        from .fmi.build import build_fmus
    except ImportError as exc:
        print(
            f"titopfmu: error: building FMUs needs pythonfmu ({exc}); "
            "install the extra: pip install -e '.[fmi]'",
            file=sys.stderr,
        )
        return 2
    try:
        paths = build_fmus(args.out, types=args.types, max_children=args.max_children)
    except ValueError as exc:
        print(f"titopfmu: error: {exc}", file=sys.stderr)
        return 2
    problems = 0
    if not args.no_validate:
        from fmpy.validation import validate_fmu

        for p in paths:
            found = validate_fmu(str(p))
            problems += len(found)
            for text in found:
                print(f"{p.name}: {text}", file=sys.stderr)
    print(
        f"built {len(paths)} FMUs in {args.out}"
        + ("" if args.no_validate else f"; fmpy validator: {problems} problems")
    )
    return 1 if problems else 0


DEFAULT_STEP = 1e-3  # s, when neither --step nor the SSD gives one


def _cosim(args) -> int:
    from pathlib import Path

    try:
        from .master import CosimError
        from .master.ssp import read_ssp
    except ImportError as exc:
        print(
            f"titopfmu: error: co-simulation needs fmpy ({exc}); "
            "install the extra: pip install -e '.[fmi]'",
            file=sys.stderr,
        )
        return 2
    out = args.out or str(Path("results") / f"{Path(args.system).stem}.csv")
    try:
        cs, exp = read_ssp(args.system)
        stop = args.stop_time if args.stop_time is not None else exp.stop_time
        if stop is None:
            raise CosimError(
                f"'{args.system}' gives no stop time (DefaultExperiment stopTime): pass --stop-time"
            )
        step = args.step or exp.step or DEFAULT_STEP
        record = args.record or [
            f"{name}.{var}" for name, c in cs.components.items() for var in c.outputs
        ]
        t0 = time.perf_counter()
        result = cs.simulate(
            stop,
            step,
            start_time=exp.start_time,
            record=record,
            output_interval=args.output_interval,
            progress=args.progress,
        )
    except CosimError as exc:
        partial = getattr(exc, "result", None)
        if partial is not None and partial.rows:
            partial.to_csv(out)
            print(
                f"titopfmu: error: {exc}\nresults up to t = {partial.time[-1]:.6g} s "
                f"written to {out}",
                file=sys.stderr,
            )
        else:
            print(f"titopfmu: error: {exc}", file=sys.stderr)
        return 1
    wall = time.perf_counter() - t0
    result.to_csv(out)
    if not args.quiet:
        span = stop - exp.start_time
        print(
            f"{args.system}: {span:g} s simulated in {wall:.2f} s wall (step {step:g} s, "
            f"{len(result.columns)} columns); wrote {out}"
        )
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
