"""Signals around a campaign: Ctrl-C (SIGINT) and SIGTERM stop it cleanly.

A Ctrl-C at a terminal goes to the whole process group: the campaign's process and the worker
processes of its Dask LocalCluster. The workers do not die of SIGINT (it is the campaign's
process that stops the campaign, closes the cluster and writes the runs finished so far): they
are started while this process ignores it (a process inherits an ignored signal), and
:data:`WORKER_PRELOAD` then makes it turn their logging off (also in a worker started later,
one that replaces a dead worker). SIGTERM, sent to
the campaign's process alone by a process manager, is turned into
``KeyboardInterrupt("SIGTERM")`` for the duration of the command (the convention of
:mod:`titopfmu.cliutil`), and either signal turns logging off before it stops the command.

Signal handlers can only be set in the main thread: elsewhere these helpers do nothing.
"""

from __future__ import annotations

import contextlib
import logging
import signal
from collections.abc import Iterator

from ..interrupts import held, main_thread
from ..interrupts import signal_name as name

#: A Dask worker preload (the text of a module, imported by each worker process as it starts):
#: SIGINT does not stop the worker, it turns its logging off (the campaign's process, which
#: gets the same Ctrl-C, closes the cluster: what a worker would log about that is noise).
#: Text, not a module of titopfmu: importing titopfmu would slow the worker's start by seconds.
WORKER_PRELOAD = """\
# titopfmu campaign: a Ctrl-C at the terminal is for the campaign's process to handle
import logging
import signal
import threading


def _quiet(signum, frame):
    logging.disable(logging.CRITICAL)


def _take_sigint():
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _quiet)


_take_sigint()


def dask_setup(worker):
    _take_sigint()
"""


def _interrupt(signum, frame) -> None:
    # logging off first: Dask's threads log errors while its client is cut short (a callback
    # that finds its future missing...), before the main thread gets to close it quietly
    logging.disable(logging.CRITICAL)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise KeyboardInterrupt(signal.Signals(signum).name)


@contextlib.contextmanager
def interrupts() -> Iterator[None]:
    """Inside: SIGINT raises ``KeyboardInterrupt()`` and SIGTERM ``KeyboardInterrupt("SIGTERM")``,
    each after turning logging off (what Dask says while it is torn down is noise to one who
    stopped it); the handlers and logging restored afterwards. For a command: its process ends
    soon after an interruption."""
    if not main_thread():
        yield
        return
    disabled = logging.root.manager.disable
    old = {s: signal.signal(s, _interrupt) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        logging.disable(disabled)


@contextlib.contextmanager
def spawning() -> Iterator[None]:
    """While worker processes are spawned: SIGINT ignored (the processes started inherit that;
    a Ctrl-C in that fraction of a second is lost), SIGTERM deferred to the end of the block
    (its handler runs then, not in the middle of a process's start)."""
    if not main_thread():
        yield
        return
    got: list[int] = []
    old_int = signal.signal(signal.SIGINT, signal.SIG_IGN)
    old_term = signal.signal(signal.SIGTERM, lambda signum, frame: got.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)
        if got:
            signal.raise_signal(signal.SIGTERM)


@contextlib.contextmanager
def quiet_logs() -> Iterator[None]:
    """Logging off inside: what Dask says while a cluster is torn down early is noise."""
    before = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(before)


__all__ = ["WORKER_PRELOAD", "held", "interrupts", "main_thread", "name", "quiet_logs",
           "spawning"]  # fmt: skip
