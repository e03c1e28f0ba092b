"""``titopfmu linearize MODEL ...``: the linear model of a system written to .npz/.mat.

To wire it into the main parser (``titopfmu/cli.py``)::

    from .linear.cli import add_linearize_parser
    add_linearize_parser(sub)          # sets args.handler
    ...
    if args.command == "linearize":
        return args.handler(args)

MODEL is anything the other commands take (:func:`titopfmu.sources.load_model`): a model file,
a URDF or MJCF file, a shipped model (``balloon``, also ``example:balloon``), or
``package.module:function`` / ``file.py:function`` (a function with no argument returning a
System; a local module needs no PYTHONPATH). ``--trim`` trims first (an equilibrium with the root's
position held, or ``--trim steady``), then linearises at the trim point.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from ..blocks.base import InertiaWarning, TitopError
from ..cliutil import EXIT_FAILED, EXIT_OK, EXIT_USAGE, error
from ..sources import MODEL_HELP, load_model


def _names(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def add_linearize_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``linearize`` command to an argparse subparsers object; its handler is
    ``args.handler`` (:func:`linearize_command`)."""
    p = subparsers.add_parser(
        "linearize",
        help="linear state-space model (A, B, C, D) of a system at an operating point",
        description="Linearise a system at its initial state (or at a trim point) with the "
        "core's exact derivatives; attitudes enter through a 3-component rotation vector. "
        "Writes A, B, C, D, the names and the operating point to .npz or .mat, "
        "and/or a native FMU (--fmu).",
    )
    p.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    p.add_argument(
        "--floating-base",
        action="store_true",
        help="URDF models: a free-flying root instead of a fixed base",
    )
    p.add_argument("--t", type=float, default=0.0, help="time of the operating point (s)")
    p.add_argument(
        "--inputs",
        type=_names,
        default=[],
        help="comma-separated core inputs, e.g. pend.joint.tau,balloon.buoyancy[2]",
    )
    p.add_argument(
        "--outputs",
        type=_names,
        default=[],
        help="comma-separated signals, e.g. balloon.position,pend1.joint.m[3]",
    )
    p.add_argument(
        "--trim",
        choices=("none", "equilibrium", "steady"),
        default="none",
        help="trim before linearising (the root's position held; default none)",
    )
    p.add_argument(
        "--out", default=None, help="output file, .npz or .mat (default model.npz without --fmu)"
    )
    p.add_argument(
        "--fmu",
        default=None,
        help="also (or only, without --out) write the model as a native FMU "
        "(co-simulation and model exchange; inputs and outputs absolute, states the deviation "
        "from the operating point)",
    )
    p.add_argument(
        "--fmi-version", type=int, choices=(2, 3), default=2,
        help="FMI version of the --fmu file: 2 (FMI 2.0, default) or 3 (FMI 3.0)",
    )  # fmt: skip
    p.add_argument("--modes", action="store_true", help="print the modes")
    p.set_defaults(handler=linearize_command)
    return p


def linearize_command(args) -> int:
    from .linearize import as_engine, linearize
    from .modes import modes_table
    from .trim import TrimError, trim

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InertiaWarning)
            engine = as_engine(load_model(args.model, args.floating_base))
            x, u = engine.initial_state(), None
            if args.trim != "none":
                roots = [n for n in engine.system.blocks if n in engine.tree_index]
                fixed = [
                    f"{n}.state.{s}"
                    for n in roots
                    for s in ("x", "y", "z")
                    if s in engine.system.blocks[n].state_names
                ]
                try:
                    tr = trim(engine, x, t=args.t, fixed_states=fixed, target=args.trim)
                except TrimError as exc:
                    if not exc.residual:  # a bad request, refused before the search
                        raise
                    return error(str(exc), EXIT_FAILED)  # the search ran and found none
                x, u = tr.x, tr.u
                print(f"trim: residual {tr.residual:.3g} after {tr.nfev} evaluations")
            model = linearize(engine, args.t, x, u, inputs=args.inputs, outputs=args.outputs)
            paths = []
            if args.out is not None or args.fmu is None:
                paths.append(model.save(args.out or "model.npz"))
            if args.fmu is not None:
                paths.append(model.to_fmu(args.fmu, fmi_version=args.fmi_version))
    except (TitopError, ValueError, FileNotFoundError, ImportError) as exc:
        return error(str(exc), EXIT_USAGE)
    except OSError as exc:
        return error(f"cannot write the model: {exc}", EXIT_FAILED)
    n, m, p = model.n_states, len(model.input_names), len(model.output_names)
    print(f"wrote {' and '.join(map(str, paths))}: {n} states, {m} inputs, {p} outputs")
    if args.modes:
        print(modes_table(model.modes()))
    if not np.allclose(model.xdot0, 0.0, atol=1e-9):
        print("note: the operating point is not an equilibrium (see xdot0 in the file)")
    return EXIT_OK
