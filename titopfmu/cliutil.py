"""What every command of the command line shares: exit codes, one-line messages, output files
written before a run is lost, and signals.

The commands (:mod:`titopfmu.cli`, :mod:`titopfmu.model_cli`, :mod:`titopfmu.linear.cli`,
:mod:`titopfmu.campaign.cli`) import from here; nothing here imports them (no cycle).

Exit codes (the table of ``docs/cli.md``; ``tests/test_cli_contract.py`` holds both to it):

======  ==========================================================================================
code    meaning
======  ==========================================================================================
0       success
1       a run failed (the results so far are written), a check failed (crosscheck, validator), or
        an output had to go to a fallback file
2       a bad command line or input, refused before anything ran
130     interrupted by Ctrl-C (SIGINT) or SIGTERM; the results so far are written
141     the output was closed early by its reader (``... | head``)
======  ==========================================================================================
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import warnings
from collections.abc import Callable, Iterator

from .interrupts import held, main_thread, raise_on_sigterm, signal_name
from .outputs import OutputError, check_output, write_output

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_PIPE = 141

#: Every exit code a command may return, with what it means (docs/cli.md's table).
EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_FAILED: "a run failed (results so far written), a check failed, or an output went to a "
    "fallback file",
    EXIT_USAGE: "a bad command line or input, refused before anything ran",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C or SIGTERM); results so far written",
    EXIT_PIPE: "the output was closed by its reader (| head)",
}

#: Default communication step of the commands that co-simulate (``example --engine cosim``,
#: ``run --engine cosim``, ``export --ssp``'s default experiment, ``cosim`` when the SSD gives
#: none), in s: the master's own default. With its default coupling (fourth order, RK4 inside
#: the FMUs) the 20 s balloon is within 1e-5 of the engine (docs/cosim_convergence.md).
COSIM_STEP = 1e-3


def positive(value: str) -> float:
    """argparse type: a positive finite float."""
    try:
        v = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not (v > 0 and v < float("inf")):
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return v


def progress_option(p: argparse.ArgumentParser) -> None:
    """``--progress`` / ``--no-progress`` (default: bars when stderr is a terminal)."""
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bars on stderr for steps longer than about a second (default: on when "
        "stderr is a terminal); --no-progress turns them off",
    )


def error(message: str, code: int = EXIT_USAGE) -> int:
    """Print ``titopfmu: error: message`` on stderr and return ``code``."""
    print(f"titopfmu: error: {message}", file=sys.stderr, flush=True)
    return code


def notice(message: str) -> None:
    """A one-line notice on stderr (``titopfmu: message``)."""
    prefix = "" if message.startswith("titopfmu:") else "titopfmu: "
    print(prefix + message, file=sys.stderr, flush=True)


def missing_extra(purpose: str, modules: tuple[str, ...], extra: str = "fmi") -> str | None:
    """The one-line message when a module of an optional extra cannot be imported, else None."""
    import importlib

    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            return (
                f"{purpose} needs {module} ({exc}); install the extra: pip install -e '.[{extra}]'"
            )
    return None


def check_outputs(out: str, plot: str | None) -> int | None:
    """Before a run (a path that cannot be written would cost the results): None if ``out``
    and ``plot`` can be written, else the exit code after a one-line message."""
    try:
        check_output(out, "--out")
        if plot:
            check_output(plot, "--plot", plot=True)
    except OutputError as exc:
        return error(str(exc), EXIT_USAGE)
    return None


def _write(write, path: str, option: str, suffix: str = ".csv") -> str:
    """Write an output with :func:`~titopfmu.outputs.write_output`; tell about a fallback."""
    written, trouble = write_output(write, path, option, suffix)
    if trouble:
        print(f"titopfmu: error: {trouble}", file=sys.stderr)
    return written


def write_results(result, out: str, plot: str | None, draw) -> tuple[int, str, str | None]:
    """Write the CSV and, with ``plot``, the figure (``draw(path)``), each to its path or a named
    fallback: ``(code, csv written, plot written)``, code 0 (as asked), 1 (a fallback was used)
    or 2 (nothing could be written: message given)."""
    try:
        written = _write(result.to_csv, out, "--out")
        drawn = _write(draw, plot, "--plot", ".png") if plot else None
    except OutputError as exc:
        error(str(exc), EXIT_FAILED)
        return 2, out, None
    return (0 if written == out and drawn == plot else 1), written, drawn


def failed_run(exc, out: str, plot: str | None = None, draw=None) -> int:
    """A run that failed (a SimulationError or CosimError): its results so far written to
    ``out`` (and ``plot``) or a named fallback, the error in one message; exit code 1."""
    partial = getattr(exc, "result", None)
    if partial is None or not partial.rows:
        return error(str(exc), EXIT_FAILED)
    written = _partial(partial, out, plot, draw)
    print(f"titopfmu: error: {exc}\nresults up to t = {_last_time(partial):.6g} s {written}",
          file=sys.stderr)  # fmt: skip
    return EXIT_FAILED


def interrupted_run(exc: KeyboardInterrupt, out: str | None = None, plot: str | None = None,
                    draw=None) -> int:  # fmt: skip
    """A run stopped by Ctrl-C or SIGTERM: the samples it carries (a
    :class:`~titopfmu.assembly.engine.RunInterrupted`'s ``result``) written to ``out`` (and
    ``plot``), one line on stderr; exit code 130. Further signals are ignored while writing."""
    name = signal_name(exc)
    partial = getattr(exc, "result", None)
    with held():
        if out is not None and partial is not None and partial.rows:
            written = _partial(partial, out, plot, draw)
            what = f"results up to t = {_last_time(partial):.6g} s {written}"
        else:
            what = "no results to write"
        print(f"titopfmu: interrupted ({name}); {what}", file=sys.stderr, flush=True)
    return EXIT_INTERRUPTED


def _partial(result, out: str, plot: str | None, draw) -> str:
    """Write partial results; ``'written to X[ and Y]'`` or why not (one clause)."""
    try:
        written = _write(result.to_csv, out, "--out")
        drawn = _write(draw, plot, "--plot", ".png") if plot and draw is not None else None
    except OutputError as exc:
        return f"not written: {exc}"
    return f"written to {written}" + (f" and {drawn}" if drawn else "")


def _last_time(result) -> float:
    t = result.time
    return float(t[-1])


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """``warnings.showwarning`` of the command line: ``titopfmu: warning: ...`` on one line (no
    source path; the category's name unless it is a plain UserWarning)."""
    text = " ".join(str(message).split())
    kind = "" if category in (UserWarning, Warning) else f" ({category.__name__})"
    print(f"titopfmu: warning: {text}{kind}", file=file or sys.stderr, flush=True)


@contextlib.contextmanager
def session() -> Iterator[None]:
    """Around one command: SIGTERM raises KeyboardInterrupt("SIGTERM") (so it stops a run as
    Ctrl-C does) and warnings print on one line; both restored afterwards."""
    old_term = signal.signal(signal.SIGTERM, raise_on_sigterm) if main_thread() else None
    old_show = warnings.showwarning
    warnings.showwarning = show_warning
    try:
        yield
    finally:
        warnings.showwarning = old_show
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)


def run_guarded(handler: Callable[[], int]) -> int:
    """Run one command's handler in a :func:`session`: a Ctrl-C or SIGTERM that the handler did
    not turn into written results gives one line and 130, a closed output pipe 141 (silently,
    like a program killed by SIGPIPE)."""
    with session():
        try:
            return handler()
        except KeyboardInterrupt as exc:
            return interrupted_run(exc)
        except BrokenPipeError:
            _silence_stdout()
            return EXIT_PIPE


def _silence_stdout() -> None:
    """After the reader of stdout went away: point stdout at /dev/null so that the interpreter's
    final flush does not report the broken pipe again."""
    try:
        fd = sys.stdout.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation: a captured stdout
        pass


__all__ = [
    "COSIM_STEP", "EXIT_CODES", "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_PIPE",
    "EXIT_USAGE", "check_outputs", "error", "failed_run", "interrupted_run", "missing_extra",
    "notice", "positive", "progress_option", "run_guarded", "session", "show_warning",
    "write_results",
]  # fmt: skip
