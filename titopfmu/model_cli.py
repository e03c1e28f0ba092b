"""Command-line verbs on model files: ``titopfmu run MODEL ...``, ``titopfmu crosscheck MODEL``
and ``titopfmu export MODEL --ssp out.ssp``.

Wiring into :mod:`titopfmu.cli`: call :func:`add_parsers` with the sub-parsers object; each
sub-parser it adds sets ``func`` (``args.func(args)`` returns the exit code), so ``main`` can
dispatch with ``if hasattr(args, "func"): return args.func(args)``. The handlers are
:func:`run_command`, :func:`crosscheck_command` and :func:`export_command`.

MODEL is a model file (``docs/model-files.md``), a URDF file (``*.urdf``, imported with
:func:`titopfmu.import_urdf`), an MJCF file (``*.mjcf``, or ``*.xml`` with a ``<mujoco>`` root:
:func:`titopfmu.import_mjcf`) or the name of a shipped model (``balloon``).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import warnings
from pathlib import Path

from .assembly.engine import METHODS, SimulationError
from .blocks.base import InertiaWarning, TitopError
from .cli import COSIM_STEP, check_outputs, failed_run, write_results

MODEL_HELP = "model file (.yaml/.json), .urdf, MJCF (.xml, .mjcf) or 'balloon'"

#: Defaults when neither the command line nor the model's ``experiment`` section gives a value
#: (those of ``titopfmu example``).
DEFAULTS = {
    "t_final": 20.0,
    "output_interval": 0.01,
    "method": "DOP853",
    "rtol": 1e-8,
    "atol": 1e-10,
}


def _positive(value: str) -> float:
    v = float(value)
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return v


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
    r.add_argument("--t-final", type=_positive, default=None, help="simulated time span in s")
    r.add_argument(
        "--output-interval",
        type=_positive,
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
    r.add_argument("--rtol", type=_positive, default=None, help="relative tolerance (1e-8)")
    r.add_argument("--atol", type=_positive, default=None, help="absolute tolerance (1e-10)")
    r.add_argument("--progress", action="store_true", help="show a progress bar")
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
        type=_positive,
        default=COSIM_STEP,
        help=f"cosim: communication step in s (default {COSIM_STEP:g})",
    )
    r.add_argument(
        "--step-tolerance",
        type=_positive,
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
        "master (CoSimulation.from_system) and in Pinocchio (built from the same model by "
        "titopfmu.reference.to_pinocchio): accelerations at random states and a trajectory; "
        "writes report.md, trajectory.png and the numbers as JSON to the output folder.",
    )
    c.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    c.add_argument("--out", default=None, help="output folder (default crosscheck_MODEL/)")
    c.add_argument("--t-final", type=_positive, default=2.0, help="trajectory span in s (2)")
    c.add_argument("--states", type=int, default=20, help="number of random states (20)")
    c.add_argument("--seed", type=int, default=0, help="seed of the random states (0)")
    c.add_argument("--rtol", type=_positive, default=1e-10, help="integration rtol (1e-10)")
    c.add_argument("--atol", type=_positive, default=1e-12, help="integration atol (1e-12)")
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
        type=_positive,
        default=COSIM_STEP,
        help=f"FMU leg: communication step in s (default {COSIM_STEP:g})",
    )
    c.add_argument("--fmus", default=None, help="FMU leg: folder of FMUs (default: the cache)")
    c.add_argument("--quiet", action="store_true", help="do not print the summary")
    c.set_defaults(func=crosscheck_command)

    e = subparsers.add_parser(
        "export",
        help="write a model as an SSP file of FMUs (for other tools)",
        description="Write a model (model file, URDF, MJCF or shipped name) as an SSP 1.0 archive: "
        "one native FMU per block (included), parameters bound, connections, and a default "
        "experiment. It runs in titopfmu's master (titopfmu cosim FILE.ssp), OMSimulator, "
        "libcosim and other SSP tools.",
    )
    e.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    e.add_argument("--ssp", required=True, help="SSP file to write (e.g. model.ssp)")
    e.add_argument("--fmus", default=None, help="folder of FMUs (default: the per-user cache)")
    e.add_argument(
        "--t-final", type=_positive, default=None, help="stop time of the default experiment (s)"
    )
    e.add_argument(
        "--step",
        type=_positive,
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
    return args.func(args)


def is_mjcf(path: Path) -> bool:
    """An MJCF file: ``.mjcf``, or ``.xml`` whose root element is ``<mujoco>``."""
    if path.suffix.lower() == ".mjcf":
        return True
    if path.suffix.lower() != ".xml" or not path.is_file():
        return False
    with open(path, encoding="utf-8", errors="replace") as f:
        head = f.read(4096)
    return re.search(r"<mujoco\b", re.sub(r"<!--.*?-->", "", head, flags=re.S)) is not None


def load_model(ref: str, floating_base: bool = False):
    """A System from a model file, a URDF or MJCF file or the name of a shipped model
    (``floating_base``: URDF only; an MJCF model says it with a free joint)."""
    from . import modelfile

    p = Path(ref)
    if not p.exists() and "/" not in ref and "." not in ref:
        p = modelfile.example_path(ref)
    if p.suffix.lower() == ".urdf":
        from .urdf import import_urdf

        return import_urdf(str(p), floating_base=floating_base)
    if is_mjcf(p):
        from .mjcf import import_mjcf

        return import_mjcf(str(p))
    return modelfile.load(p)


def default_record(system) -> dict[str, str]:
    """Columns when the model has no ``outputs``: the root's position and Euler angles and the
    position part of every forward joint's motion."""
    from .blocks.bodies import JointBody, RigidBody

    rec: dict[str, str] = {}
    for b in system.blocks.values():
        if isinstance(b, RigidBody):
            for i, ax in enumerate("xyz"):
                rec[f"{b.name}.{ax}"] = f"{b.name}.position[{i + 1}]"
            for i, ax in enumerate(("phi", "theta", "psi")):
                rec[f"{b.name}.{ax}"] = f"{b.name}.euler[{i + 1}]"
        elif isinstance(b, JointBody) and not b.inverse and b.joint.dof:
            n = b.ports["joint.m"].size
            for i in range(2 * n // 3, n):
                rec[f"{b.name}.q{i - 2 * n // 3 + 1}" if n > 3 else f"{b.name}.q"] = (
                    f"{b.name}.joint.m[{i + 1}]"
                )
    return rec


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
                result = _run_cosim(args, system, record, s)
            else:
                result = Engine(system).simulate(
                    float(s["t_final"]),
                    output_interval=float(s["output_interval"]),
                    record=record,
                    method=s["method"],
                    rtol=float(s["rtol"]),
                    atol=float(s["atol"]),
                    progress=args.progress,
                )
        except SimulationError as exc:
            return failed_run(exc, out)
        except TitopError as exc:
            if getattr(exc, "result", None) is not None and exc.result.rows:
                return failed_run(exc, out)  # a co-simulation that failed: results so far
            print(f"titopfmu: error: {exc}", file=sys.stderr)
            return 2
        except (FileNotFoundError, ImportError) as exc:
            print(f"titopfmu: error: {exc}", file=sys.stderr)
            return 2
    wall = time.perf_counter() - t0
    from .plotting import plot_result

    def draw(path):
        plot_result(
            result,
            path,
            units=info.units if info is not None else None,
            title=(info.description if info is not None else None) or system.name,
        )

    code, out, plot = write_results(result, out, args.plot, draw)
    if code == 2:
        return 1
    if not args.quiet:
        calls = "FMU calls" if args.engine == "cosim" else "right-hand-side evaluations"
        print(
            f"{system.name} ({args.engine}): {float(s['t_final']):g} s simulated in {wall:.2f} s "
            f"wall ({result.n_evaluations} {calls}); wrote {out}" + (f" and {plot}" if plot else "")
        )
    return code


def _cosim_of(system, fmus, quiet: bool):
    """``CoSimulation.from_system`` with the FMU builds announced on stderr."""
    from .master import CoSimulation

    def notice(message: str) -> None:
        if not quiet:
            print(f"titopfmu: {message}", file=sys.stderr, flush=True)

    return CoSimulation.from_system(system, fmus, notice=notice)


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
        progress=args.progress,
    )


def export_command(args) -> int:
    """``titopfmu export MODEL --ssp out.ssp``: the model's FMUs, parameters, connections and
    default experiment as an SSP archive."""
    from .master import write_ssp

    try:
        with warnings.catch_warnings():
            if args.quiet:
                warnings.simplefilter("ignore", InertiaWarning)
            system = load_model(args.model, args.floating_base)
            cs = _cosim_of(system, args.fmus, args.quiet)
            s = _settings(args, system)
            path = write_ssp(
                cs, args.ssp, stop_time=float(s["t_final"]), step=float(args.step),
                name=system.name,
            )  # fmt: skip
    except (TitopError, FileNotFoundError, ImportError, OSError) as exc:
        print(f"titopfmu: error: {exc}", file=sys.stderr)
        return 2
    if not args.quiet:
        print(
            f"{system.name}: wrote {path} ({len(cs.components)} components, "
            f"{len({c.file.path for c in cs.components.values()})} FMUs; default experiment "
            f"0-{float(s['t_final']):g} s, step {float(args.step):g} s)"
        )
    return 0


def crosscheck_command(args) -> int:
    """``titopfmu crosscheck MODEL``: in process vs FMUs + master vs Pinocchio; writes a
    Markdown report."""
    from .crosscheck import crosscheck

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InertiaWarning)
            system = load_model(args.model, args.floating_base)
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
            )
    except (TitopError, FileNotFoundError, ImportError) as exc:
        print(f"titopfmu: error: {exc}", file=sys.stderr)
        return 2
    if not args.quiet:
        print(report.summary())
    return 0 if report.passed else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
