"""A hard bound on a run's time: with a run timeout, each run of a campaign executes in a helper
process, which is ended when the run is late, whatever the run is doing.

The engine and the master check the clock between steps and stop a run past its timeout with
its results so far (a cooperative stop). A run stuck inside one evaluation (an expression or a
user's function that never returns, a C call that loops) never reaches such a check: only
ending its process stops it. So, when a campaign has a run timeout, :func:`run_batch` (what the
serial loop calls and what a Dask task runs) sends each run to a helper process of the calling
thread: a ``python`` started once, which loads the model and the settings once and then runs
one sample per request. A run is given its timeout plus a grace (:func:`hard_deadline`) to
answer; past that its process is killed, the run recorded as failed ("the run exceeded its
timeout of S s ... its process was ended"), with its parameters, and the next run starts a new
helper process. A helper process that dies during a run (a crash in an FMU) is recorded the same
way; the campaign goes on either way, and the other runs are computed as in process (bit for
bit: the same code on the same machine). A helper process's temporary files (``TMPDIR``: an
FMU a run unpacks...) are in a folder of its own, removed when it ends.

Cost: starting a helper process (importing titopfmu, about 1-2 s) once per worker thread, and
again after each ended run; each run then adds the pickling of its sample and record and a
round trip through a pipe (about 2 ms). Without a run timeout nothing changes: runs execute in
the calling process.

A helper process ignores SIGINT and sits in a session of its own (a Ctrl-C at the terminal is
for the campaign's process to handle: it ends the helper process and stops the campaign as
before); it exits when its parent closes the pipe (the campaign finished, or the process stayed
unused :data:`IDLE` s) or is gone (checked every second), and, on POSIX, ends itself (SIGALRM)
should it still be running :data:`ORPHAN_MARGIN` s after the hard deadline of its run (its
parent killed first while the run holds the GIL).
"""

from __future__ import annotations

import atexit
import math
import os
import pickle
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping

from . import runs
from .store import CampaignError

#: s a run past its timeout is given to stop by itself (keeping its results so far) before its
#: process is ended: the larger of this and a tenth of the timeout (:func:`hard_deadline`).
GRACE = 1.0
#: s a helper process may take to start (importing titopfmu) or to load a campaign's model.
START_TIMEOUT = 120.0
#: s a helper process is kept unused before it is closed.
IDLE = 30.0
#: s after the hard deadline of its run at which a helper process still running ends itself
#: (SIGALRM, POSIX; its parent would have ended it unless the parent is gone).
ORPHAN_MARGIN = 10.0

#: What the helper process runs: SIGINT ignored first (before titopfmu is imported).
_CHILD = (
    "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "from titopfmu.campaign.isolation import _serve; _serve()"
)
_LATE = object()  # no reply within the time allowed
_HEADER = 8


def hard_deadline(timeout: float) -> float:
    """s after which a run with a timeout of ``timeout`` s has its process ended."""
    return timeout + max(GRACE, 0.1 * timeout)


class Stuck(Exception):
    """A call in the helper process did not return within its hard deadline: the process was
    ended."""


class CallFailed(Exception):
    """A call in the helper process raised: ``Type: message`` of its exception."""


def dumps(obj) -> bytes:
    """``obj`` pickled, by cloudpickle when it is installed (it carries functions defined in a
    script or inside another function)."""
    try:
        import cloudpickle
    except ImportError:  # pragma: no cover - a dependency of distributed
        return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return cloudpickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


# -- the helper process --------------------------------------------------------------------------


def _write(stream, obj) -> None:
    data = obj if isinstance(obj, bytes) else pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
    stream.write(len(data).to_bytes(_HEADER, "little") + data)
    stream.flush()


def _read(stream) -> bytes | None:
    head = stream.read(_HEADER)
    if len(head) < _HEADER:
        return None
    n = int.from_bytes(head, "little")
    data = stream.read(n)
    return data if len(data) == n else None


def _alarm(seconds: float) -> None:
    """The process ends itself (SIGALRM's default action) in ``seconds`` (0: not)."""
    if hasattr(signal, "alarm"):
        signal.alarm(0 if seconds <= 0 else math.ceil(seconds))


def _serve() -> None:
    """The helper process: requests on stdin, replies on (the original) stdout, until stdin
    closes. What the runs print goes to stderr."""
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
    inp = sys.stdin.buffer
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    threading.Thread(target=_watch, args=(os.getppid(),), name="parent", daemon=True).start()
    _write(out, ("ready", os.getpid()))
    loaded = None
    while True:
        data = _read(inp)
        if data is None:
            return
        msg = pickle.loads(data)
        kind = msg[0]
        if kind == "load":
            try:
                loaded = pickle.loads(msg[1])
                reply = ("loaded", None)
            except Exception as exc:
                loaded = None
                reply = ("loaded", f"{type(exc).__name__}: {exc}")
        elif kind == "run":
            _, run, sample = msg
            model, spec = loaded
            _alarm(hard_deadline(spec.timeout) + ORPHAN_MARGIN)
            reply = ("record", runs.run_one(model, spec, run, sample))
            _alarm(0)
        else:  # "call"
            _alarm(hard_deadline(msg[2]) + ORPHAN_MARGIN)
            try:
                fn, args = pickle.loads(msg[1])
                reply = ("result", fn(*args))
            except Exception as exc:
                reply = ("raised", f"{type(exc).__name__}: {exc}")
            _alarm(0)
        try:  # a call's value (a System...) may hold functions: cloudpickle
            _write(out, dumps(reply) if reply[0] == "result" else reply)
        except Exception as exc:  # not picklable
            _write(out, ("raised", f"the reply could not be sent: {type(exc).__name__}: {exc}"))


def _watch(parent: int) -> None:
    """In the helper process: exit as soon as the parent is gone (checked every second; a run
    that holds the GIL in C delays this until it lets go, or until its SIGALRM)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(3)


def _pump(stream, replies: queue.SimpleQueue) -> None:
    """The helper process's replies (bytes) put on ``replies``; None once it is gone (then the
    stream is closed here: closing it from another thread could wait on this read)."""
    try:
        while (data := _read(stream)) is not None:
            replies.put(data)
    except (OSError, ValueError):
        pass
    finally:
        replies.put(None)
        try:
            stream.close()
        except OSError:
            pass


class _Helper:
    """This thread's helper process (started when needed, replaced when ended)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._replies: queue.SimpleQueue | None = None
        self._loaded: tuple | None = None  # the (model, spec) the process holds
        self._payload: tuple | None = None  # (model, spec, their pickle)
        self._timer: threading.Timer | None = None
        self._tmp: str | None = None  # the process's temporary folder (TMPDIR)

    # process -------------------------------------------------------------------------------

    def _start(self) -> None:
        env = dict(os.environ)  # the modules this process imports, the user's included
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if isinstance(p, str) and p)
        # its temporary files (an FMU unpacked by a run...) in a folder removed with it: an
        # ended run leaves nothing behind
        self._tmp = tempfile.mkdtemp(prefix="titopfmu_run_")
        env["TMPDIR"] = env["TEMP"] = env["TMP"] = self._tmp
        options = {"start_new_session": True} if os.name == "posix" else {}
        try:
            proc = subprocess.Popen(
                [sys.executable, "-c", _CHILD],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
                **options,
            )
        except BaseException:
            self._remove_tmp()
            raise
        replies: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(
            target=_pump, args=(proc.stdout, replies), name="titopfmu run helper", daemon=True
        ).start()
        self._proc, self._replies, self._loaded = proc, replies, None
        reply = self._reply(START_TIMEOUT)
        if not (isinstance(reply, tuple) and reply[0] == "ready"):
            code = self._end()
            why = (
                f"it did not start within {START_TIMEOUT:g} s"
                if reply is _LATE
                else f"it exited ({_status(code)})"
            )
            raise CampaignError(
                f"cannot start a process for the runs (a run timeout runs each run in a process "
                f"of its own): {sys.executable} -c ...: {why}"
            )

    def _end(self) -> int | None:
        """Kill the process (if any); its exit status."""
        proc, self._proc, self._loaded = self._proc, None, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.kill()
        code = proc.wait()
        try:
            proc.stdin.close()
        except OSError:
            pass
        self._remove_tmp()
        return code

    def _remove_tmp(self) -> None:
        tmp, self._tmp = self._tmp, None
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)

    def close(self) -> None:
        """End the process gracefully (its stdin closed: it exits), killed after 2 s."""
        proc, self._proc, self._loaded = self._proc, None, None
        if proc is None:
            return
        try:
            proc.stdin.close()
            proc.wait(2.0)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        self._remove_tmp()

    def _send(self, obj) -> bool:
        try:
            _write(self._proc.stdin, obj)
            return True
        except (OSError, ValueError):  # the process is gone
            return False

    def _reply(self, timeout: float):
        """The next reply (unpickled), None if the process is gone, _LATE after ``timeout``."""
        try:
            data = self._replies.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return _LATE
        return None if data is None else pickle.loads(data)

    def _ready(self) -> None:
        if self._proc is None or self._proc.poll() is not None:
            self._end()
            self._start()

    # requests ------------------------------------------------------------------------------

    def _load(self, model, spec) -> str | None:
        """The process holds (model, spec); else why not."""
        if self._loaded is not None and self._loaded[0] is model and self._loaded[1] is spec:
            return None
        if self._payload is None or self._payload[0] is not model or self._payload[1] is not spec:
            self._payload = (model, spec, dumps((model, spec)))
        if not self._send(("load", self._payload[2])):
            return "the process ended"
        reply = self._reply(START_TIMEOUT)
        if not (isinstance(reply, tuple) and reply[0] == "loaded"):
            self._end()
            return "the process ended" if reply is None else "it did not answer"
        if reply[1] is not None:
            return reply[1]
        self._loaded = (model, spec)
        return None

    def run(self, model, spec: runs.RunSpec, run: int, sample: Mapping[str, float]) -> dict:
        """The record of one run, done in the process, which is ended if the run is late."""
        with self._lock:
            self._cancel_timer()
            try:
                return self._run(model, spec, run, sample)
            except BaseException:  # an interruption: the process's state is unknown
                self._end()
                raise

    def _run(self, model, spec, run, sample) -> dict:
        for attempt in (0, 1):  # once more if the process was found gone before the run
            self._ready()
            problem = self._load(model, spec)
            if problem is not None:
                if attempt == 0 and self._proc is None:
                    continue
                return _record(run, sample, 0.0, self._pid(),
                               f"CampaignError: the run's process cannot load the model and "
                               f"settings: {problem}")  # fmt: skip
            t0 = time.perf_counter()
            if not self._send(("run", run, sample)):
                self._end()
                continue
            reply = self._reply(hard_deadline(spec.timeout))
            wall = time.perf_counter() - t0
            if isinstance(reply, tuple) and reply[0] == "record":
                return reply[1]
            pid = self._pid()
            code = self._end()
            if reply is _LATE:
                return _record(run, sample, wall, pid,
                               f"TimeoutError: the run exceeded its timeout of {spec.timeout:g} s "
                               f"(wall clock) and did not stop by itself: its process was ended "
                               f"after {wall:.3g} s; no results kept")  # fmt: skip
            return _record(run, sample, wall, pid,
                           f"RuntimeError: the run's process ended during the run "
                           f"({_status(code)}); no results kept")  # fmt: skip
        return _record(run, sample, 0.0, self._pid(),
                       "RuntimeError: the run's process ended before the run")  # fmt: skip

    def call(self, fn: Callable, args: tuple, timeout: float):
        with self._lock:
            self._cancel_timer()
            try:
                self._ready()
                if not self._send(("call", dumps((fn, args)), timeout)):
                    self._end()
                    raise CallFailed("RuntimeError: the process ended")
                reply = self._reply(hard_deadline(timeout))
                if reply is _LATE:
                    self._end()
                    raise Stuck(f"no answer within {hard_deadline(timeout):g} s")
                if reply is None:
                    raise CallFailed(f"RuntimeError: the process ended ({_status(self._end())})")
                if reply[0] == "raised":
                    raise CallFailed(reply[1])
                return reply[1]
            except (Stuck, CallFailed):
                raise
            except BaseException:
                self._end()
                raise
            finally:
                self._retire_after(IDLE)

    def _pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    # idle ----------------------------------------------------------------------------------

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _retire_after(self, seconds: float) -> None:
        self._cancel_timer()
        if self._proc is not None:
            self._timer = threading.Timer(seconds, self._retire)
            self._timer.daemon = True
            self._timer.start()

    def _retire(self) -> None:
        if self._lock.acquire(blocking=False):  # busy: in use again
            try:
                self.close()
            finally:
                self._lock.release()

    def retire_after(self, seconds: float) -> None:
        with self._lock:
            self._retire_after(seconds)

    def shut(self) -> None:
        with self._lock:
            self._cancel_timer()
            self.close()


def _status(code: int | None) -> str:
    if code is None:
        return "exit status unknown"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def _record(run: int, sample: Mapping[str, float], wall: float, pid, error: str) -> dict:
    """A failed run's record, as :func:`~titopfmu.campaign.runs.run_one` writes it."""
    rec: dict = {"run": int(run), "status": "failed", "error": error, "t_end": math.nan}
    rec.update({k: float(v) for k, v in sample.items()})
    rec["wall"] = float(wall)
    rec["worker"] = f"{socket.gethostname()}:{pid if pid is not None else os.getpid()}"
    return rec


_HELPERS: dict[int, _Helper] = {}
_HELPERS_LOCK = threading.Lock()


def _helper() -> _Helper:
    with _HELPERS_LOCK:
        return _HELPERS.setdefault(threading.get_ident(), _Helper())


@atexit.register
def _close_all() -> None:
    with _HELPERS_LOCK:
        helpers = list(_HELPERS.values())
        _HELPERS.clear()
    for h in helpers:
        h.close()


# -- what the campaign calls ---------------------------------------------------------------------


def run_batch(model, spec: runs.RunSpec, batch: list[tuple[int, dict]]) -> list[dict]:
    """The records of several runs: in this process without a run timeout
    (:func:`~titopfmu.campaign.runs.run_batch`), else each in this thread's helper process,
    ended at the run's :func:`hard_deadline`."""
    if spec.timeout is None:
        return runs.run_batch(model, spec, batch)
    helper = _helper()
    try:
        return [helper.run(model, spec, i, s) for i, s in batch]
    finally:
        helper.retire_after(IDLE)


def call(fn: Callable, *args, timeout: float):
    """``fn(*args)`` in this thread's helper process, ended at :func:`hard_deadline`
    (``timeout``): its value (pickled back); :class:`CallFailed` (``Type: message``) if it
    raised, :class:`Stuck` if it was ended."""
    return _helper().call(fn, args, timeout)


def close() -> None:
    """End this thread's helper process (if any)."""
    with _HELPERS_LOCK:
        helper = _HELPERS.pop(threading.get_ident(), None)
    if helper is not None:
        helper.shut()


__all__ = ["CallFailed", "GRACE", "IDLE", "Stuck", "call", "close", "dumps", "hard_deadline",
           "run_batch"]  # fmt: skip
