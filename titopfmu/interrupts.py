"""Ctrl-C (SIGINT) and SIGTERM, shared by the engine, the master, campaigns and the command line.

The command line turns SIGTERM into ``KeyboardInterrupt("SIGTERM")`` (:func:`raise_on_sigterm`)
so that both signals stop a run the same way; :func:`signal_name` tells them apart afterwards.
Signal handlers can only be set in the main thread: elsewhere :func:`held` does nothing.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


def main_thread() -> bool:
    """Whether this is the main thread (the only one where signal handlers can be set)."""
    return threading.current_thread() is threading.main_thread()


def signal_name(exc: BaseException) -> str:
    """The signal that raised the KeyboardInterrupt ``exc``: its ``signal`` attribute, else
    ``SIGTERM`` for ``KeyboardInterrupt("SIGTERM")``, else ``SIGINT``."""
    got = getattr(exc, "signal", None)
    if got:
        return str(got)
    if exc.args and str(exc.args[0]).startswith("SIG"):
        return str(exc.args[0])
    return "SIGINT"


def raise_on_sigterm(signum, frame) -> None:
    """A SIGTERM handler: stop as Ctrl-C does, with a KeyboardInterrupt named after it."""
    raise KeyboardInterrupt("SIGTERM")


@contextlib.contextmanager
def held() -> Iterator[None]:
    """SIGINT and SIGTERM ignored inside (main thread only): a second Ctrl-C while results are
    written or a cluster shuts down does not cut that short, nor print a traceback."""
    if not main_thread():
        yield
        return
    old = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


__all__ = ["held", "main_thread", "raise_on_sigterm", "signal_name"]
