"""Campaigns: one model run many times with sampled parameters, serially or on Dask.

>>> c = Campaign("balloon.yaml", {"pend1.mass": "normal(2, 0.1)", "slider_law.k":
...              "uniform(15, 25)"}, samples=200, out="runs/balloon", method="lhs", seed=1,
...              t_final=5.0)
>>> result = c.run()                       # a LocalCluster, one worker process per core
>>> result = c.run(scheduler="tcp://host:8786")   # any running Dask scheduler
>>> result.table                           # pandas: run, parameters, outcomes, status, error

Every check (model, parameter names, distributions, outcomes, backend, output directory,
scheduler) happens before the first run. Each finished run is appended to the directory's log
at once, so an interrupted campaign resumes where it stopped (``run()`` again, or the same
command) without redoing a finished run; a run that fails is recorded with its error and the
campaign goes on; a task whose worker dies is re-run by Dask on another worker.
"""

from __future__ import annotations

import logging
import math
import os
import secrets
import signal
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from .. import progress as _progress
from ..assembly.engine import METHODS as INTEGRATORS
from ..assembly.system import System
from ..blocks.base import InertiaWarning, TitopError
from . import _signals, isolation, store
from .distributions import METHODS, check_distribution, draw, grid_size, spec_of
from .results import CampaignResult, consolidate
from .runs import BACKENDS, META, REDUCTIONS, ModelSource, RunSpec
from .store import CampaignError

#: Seconds to wait for a Dask scheduler given by address before giving up.
CONNECT_TIMEOUT = 5.0


class CampaignInterrupted(KeyboardInterrupt):
    """:meth:`Campaign.run` stopped by Ctrl-C (or by SIGTERM where the command line turns it
    into a KeyboardInterrupt): still a KeyboardInterrupt (code that catches one still does),
    raised once the cluster is closed and the table of the runs finished so far is written.
    ``signal``: the signal's name; ``total``: the campaign's runs; ``done``: the runs with a
    record (ok or failed; the same ``run()`` or command resumes with the others); ``result``:
    the :class:`~titopfmu.campaign.CampaignResult` of those (None when the output directory
    was not written yet, or its table could not be: ``error`` says why)."""

    def __init__(self, signal: str, total: int, result=None, out=None, error=None) -> None:
        self.signal = signal
        self.total = total
        self.result = result
        self.out = out
        self.error = error
        self.done = (
            0 if result is None else int(result.table["status"].isin(("ok", "failed")).sum())
        )
        super().__init__(f"campaign interrupted ({signal}) after {self.done} of {total} runs")


def _load_model(model) -> tuple[System | None, Callable | None]:
    if isinstance(model, System):
        return model, None
    if isinstance(model, (str, os.PathLike)):
        from ..sources import load_model

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", InertiaWarning)
                return load_model(os.fspath(model)), None
        except (FileNotFoundError, OSError) as exc:
            raise CampaignError(f"model {os.fspath(model)!r}: {exc}") from None
    if callable(model):
        return None, model
    raise CampaignError(
        f"model must be a model file, a System or a function of the sample returning a System, "
        f"got {type(model).__name__}"
    )


def _fingerprint(system: System | None, build: Callable | None) -> str:
    """What identifies the model in the manifest: the SHA-256 of its model file (JSON), else
    (Python-only blocks) its blocks and connections, else the builder's qualified name."""
    import hashlib

    if build is not None:
        return f"function {getattr(build, '__module__', '?')}.{getattr(build, '__qualname__', '?')}"
    from ..modelfile import dumps

    try:
        text = dumps(system, "json")
    except TitopError:
        text = repr(
            [(n, type(b).__name__) for n, b in system.blocks.items()] + list(system.connections)
        )
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _first_step(system: System, h: float, record: Mapping[str, str]) -> str | None:
    """A run of ``system`` over ``h`` s recording ``record``: None, or why the record is wrong
    (a model that fails at once passes: each run will record it)."""
    from ..assembly.engine import Engine, SimulationError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InertiaWarning)
            Engine(system).simulate(h, output_interval=h, record=record)
    except SimulationError:
        return None
    except TitopError as exc:
        return str(exc)
    return None


class Campaign:
    """A campaign: ``model`` run ``samples`` times with the parameters of ``vary`` drawn from
    their distributions.

    ``model``: a model file (or a shipped name such as ``"balloon"``, or a URDF), a
    :class:`~titopfmu.System`, or a function ``build(sample) -> System`` of the sample (name ->
    value; the names are then free and not checked against a system). ``vary``: parameter name
    (``block.key``, ``block.key[i]``, ``block.key[i,j]``, ``block.children.PORT[i]``: see
    :mod:`titopfmu.parameters`) -> distribution (a text such as ``"normal(2, 0.1)"``, a
    :mod:`titopfmu.campaign` distribution or a frozen ``scipy.stats`` one). ``method``:
    ``random``, ``lhs``, ``sobol``, or ``grid`` (a sweep over every combination of the
    ``values(...)``/``linspace(...)`` of each parameter; ``samples`` None or the grid's size);
    ``seed``: None draws one (kept in the manifest, and reused
    when resuming the same directory).

    Each run simulates ``t_final`` s (default: the model's ``experiment``, else 20 s), sampling
    ``record`` (column -> signal; default the model's ``outputs``, else the root's pose and the
    joints' positions) every ``output_interval`` s. ``outcomes``: the columns (or signals) to
    reduce (default all recorded ones); ``reductions``: names among
    :data:`~titopfmu.campaign.runs.REDUCTIONS` applied to each; ``custom``: name -> function
    of the :class:`~titopfmu.SimulationResult` returning a float or a mapping of floats
    (picklable: a module-level function, or any function when cloudpickle can carry it).
    ``trajectories``: also keep every run's recorded columns (``DIR/trajectories``).
    ``backend``: ``inprocess`` (the engine) or ``cosim`` (the system's FMUs co-simulated by
    the master, :meth:`CoSimulation.from_system <titopfmu.master.CoSimulation.from_system>`;
    needs fmpy). ``integrator``, ``rtol``, ``atol``: the engine's; ``step`` (s, dividing the
    output interval) and ``fmus`` (a folder of FMUs; default the per-user cache, filled once
    before the runs): the co-simulation's. ``timeout``: s of wall-clock time each run may take
    (None: no limit); a run past it is stopped and recorded as failed (its error says so, its
    outcomes are left empty) and the campaign goes on. With a timeout, each run (and the checks
    of the model before the runs) executes in a helper process that is ended if the run is
    still going :func:`~titopfmu.campaign.isolation.hard_deadline` s after it started (stuck in
    one evaluation: :mod:`titopfmu.campaign.isolation`). It is not part of what identifies the
    campaign: a resumed campaign may change it (finished runs, failed ones included, are kept).
    """

    def __init__(
        self,
        model: str | os.PathLike | System | Callable,
        vary: Mapping[str, object],
        samples: int | None,
        out: str | os.PathLike,
        *,
        method: str = "random",
        seed: int | None = None,
        t_final: float | None = None,
        output_interval: float | None = None,
        record: Mapping[str, str] | None = None,
        outcomes: Sequence[str] | None = None,
        reductions: Sequence[str] = ("final", "min", "max"),
        custom: Mapping[str, Callable] | None = None,
        trajectories: bool = False,
        backend: str = "inprocess",
        integrator: str | None = None,
        rtol: float | None = None,
        atol: float | None = None,
        step: float = 1e-3,
        timeout: float | None = None,
        fmus: str | os.PathLike | None = None,
    ) -> None:
        if method not in METHODS:
            raise CampaignError(f"unknown sampling method {method!r}; choose from {METHODS}")
        if backend not in BACKENDS:
            raise CampaignError(f"unknown backend {backend!r}; choose from {sorted(BACKENDS)}")
        if backend == "cosim" and not (math.isfinite(step) and step > 0):
            raise CampaignError(f"the communication step must be positive, got {step}")
        if timeout is not None and not (
            isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0
        ):
            raise CampaignError(f"the run timeout must be a positive number of seconds, got "
                                f"{timeout!r}")  # fmt: skip
        if not vary:
            raise CampaignError("nothing to vary: give at least one PARAM=DISTRIBUTION")
        self.system, self.build = _load_model(model)
        self.vary = {str(k): check_distribution(d, str(k)) for k, d in vary.items()}
        if samples is None and method == "grid":
            samples = grid_size(self.vary)
        if not isinstance(samples, (int, np.integer)) or isinstance(samples, bool) or samples < 1:
            raise CampaignError(f"samples must be a positive integer, got {samples!r}")
        self.n = int(samples)
        self.method = method
        self.out = Path(out)
        custom = dict(custom or {})
        for name, f in custom.items():
            if not callable(f):
                raise CampaignError(f"custom reduction {name!r} is not callable")
        bad = [r for r in reductions if r not in REDUCTIONS]
        if bad:
            raise CampaignError(f"unknown reduction(s) {bad}; choose from {sorted(REDUCTIONS)}")

        probe = self.system
        if self.build is None:
            from ..parameters import check_parameter_names

            check_parameter_names(self.system, self.vary)
        if seed is None and method == "grid":
            seed = 0  # a grid draws nothing
        if seed is None:
            seed = self._seed_of_directory()
        if seed is None:
            seed = secrets.randbits(63)
        if not isinstance(seed, (int, np.integer)) or seed < 0:
            raise CampaignError(f"seed must be a non-negative integer, got {seed!r}")
        self.seed = int(seed)
        self.values = draw(self.vary, self.n, method, self.seed)
        self._timeout = None if timeout is None else float(timeout)
        if self.build is not None:  # the builder's first system: checks it before any run
            try:
                probe = self._bounded(self.build, self.sample(0))
            except isolation.Stuck:
                raise CampaignError(
                    f"the model function did not return within the run timeout of {timeout:g} s "
                    f"on the first sample {self.sample(0)} (its process was ended)"
                ) from None
            except isolation.CallFailed as exc:
                raise CampaignError(
                    f"the model function failed on the first sample {self.sample(0)}: {exc}"
                ) from None
            except Exception as exc:
                raise CampaignError(
                    f"the model function failed on the first sample {self.sample(0)}: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            if not isinstance(probe, System):
                raise CampaignError(
                    f"the model function returned {type(probe).__name__}, not a System"
                )

        info = getattr(probe, "model_info", None)
        exp = dict(info.experiment) if info is not None else {}
        t_final = float(t_final if t_final is not None else exp.get("t_final", 20.0))
        if not (math.isfinite(t_final) and t_final > 0):
            raise CampaignError(f"t_final must be positive and finite, got {t_final}")
        if output_interval is None:
            output_interval = exp.get("output_interval", min(0.01, t_final / 100.0))
        output_interval = float(min(output_interval, t_final))
        if not output_interval > 0:
            raise CampaignError(f"output_interval must be positive, got {output_interval}")
        integrator = integrator or exp.get("method", "DOP853")
        if integrator not in INTEGRATORS:
            raise CampaignError(
                f"unknown integration method {integrator!r}; choose from {sorted(INTEGRATORS)}"
            )
        rtol = float(rtol if rtol is not None else exp.get("rtol", 1e-8))
        atol = float(atol if atol is not None else exp.get("atol", 1e-10))
        if record is None:
            if info is not None and info.outputs:
                record = dict(info.outputs)
            else:
                from ..sources import default_record

                record = default_record(probe)
        record = dict(record)
        if outcomes is not None:
            chosen = {}
            for o in outcomes:
                if o in record:
                    chosen[o] = record[o]
                elif "." in o:
                    chosen[o] = o  # a signal by name
                else:
                    raise CampaignError(
                        f"outcome {o!r} is neither a recorded column ({', '.join(record)}) nor a "
                        "signal 'block.signal[i]'"
                    )
            record = chosen
        if not record and not custom:
            raise CampaignError("no outcome: the model records nothing and no reduction is given")
        self.spec = RunSpec(
            t_final=t_final,
            output_interval=output_interval,
            record=record,
            reductions=tuple(reductions),
            custom=custom,
            integrator=integrator,
            rtol=rtol,
            atol=atol,
            trajectories=bool(trajectories),
            backend=backend,
            step=float(step),
            fmus=None if fmus is None else str(Path(fmus).resolve()),
            timeout=None if timeout is None else float(timeout),
        )
        self._check_record(probe)
        if backend == "cosim":
            self._check_cosim(probe)
        self.model = (
            ModelSource(self.system, list(self.vary), None)
            if self.build is None
            else (ModelSource(build=self.build))
        )
        self._fingerprint = _fingerprint(self.system, self.build)

    # -- specification -------------------------------------------------------------------------

    def _bounded(self, fn: Callable, *args):
        """``fn(*args)``: here without a run timeout; with one, in a helper process ended past
        it (:func:`~titopfmu.campaign.isolation.call`: a stuck model cannot hold the checks
        before the runs), the model and ``fn`` picklable."""
        if self._timeout is None:
            return fn(*args)
        try:
            isolation.dumps((fn, args))
        except Exception as exc:
            raise CampaignError(
                "with a run timeout each run goes to a process of its own: the model (and the "
                f"custom reductions) must be picklable: {type(exc).__name__}: {exc}"
            ) from None
        return isolation.call(fn, *args, timeout=self._timeout)

    def _check_record(self, system: System) -> None:
        """The recorded signals exist: a run of the base model over its first output step. A
        model stuck in it (past the run timeout) is let through: each run records its own."""
        h = min(self.spec.output_interval, self.spec.t_final)
        try:
            problem = self._bounded(_first_step, system, h, self.spec.record)
        except isolation.Stuck:
            return
        except isolation.CallFailed as exc:
            problem = str(exc)
        if problem is not None:
            raise CampaignError(f"recorded outputs: {problem}")

    def _check_cosim(self, system: System) -> None:
        """Before any run, for backend ``cosim``: the step divides the output interval and the
        run, the system has FMUs (its blocks' types), and they are built, once, here (the
        workers then find them in the per-user cache instead of building them together)."""
        s = self.spec
        for what, span in (("output interval", s.output_interval), ("run", s.t_final)):
            k = span / s.step
            if abs(k - round(k)) > 1e-9 * max(1.0, k):
                raise CampaignError(
                    f"the communication step {s.step} s does not divide the {what} {span} s "
                    f"({k:.6g} steps)"
                )
        try:
            from ..master import CoSimulation

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", InertiaWarning)
                CoSimulation.from_system(system, s.fmus).free()
        except ImportError as exc:
            raise CampaignError(
                f"backend 'cosim' needs fmpy (pip install 'titopfmu[fmi]'): {exc}"
            ) from None
        except TitopError as exc:
            raise CampaignError(f"backend 'cosim': {exc}") from None

    def manifest_spec(self) -> dict:
        """What identifies this campaign (hashed into the directory's manifest)."""
        s = self.spec
        return {
            "model": self._fingerprint,
            "vary": {k: spec_of(d) for k, d in self.vary.items()},
            "samples": self.n,
            "method": self.method,
            "seed": self.seed,
            "t_final": s.t_final,
            "output_interval": s.output_interval,
            "record": s.record,
            "reductions": list(s.reductions),
            "custom": sorted(s.custom),
            "trajectories": s.trajectories,
            "backend": s.backend,
            **({"step": s.step, "fmus": s.fmus} if s.backend == "cosim" else {}),
            "integrator": s.integrator,
            "rtol": s.rtol,
            "atol": s.atol,
        }

    def _seed_of_directory(self) -> int | None:
        """The seed of the campaign already in the output directory (to resume it)."""
        try:
            m = store.read_manifest(self.out) if self.out.is_dir() else None
        except CampaignError:
            return None
        return None if m is None else m["spec"].get("seed")

    def sample(self, run: int) -> dict[str, float]:
        """The parameters of run ``run`` (0-based): name -> value."""
        return {k: float(v[run]) for k, v in self.values.items()}

    def samples(self):
        """The samples as a pandas DataFrame: ``run`` and one column per parameter."""
        import pandas as pd

        return pd.DataFrame({"run": np.arange(self.n), **self.values})

    # -- running -------------------------------------------------------------------------------

    def run(
        self,
        scheduler: str | None = None,
        workers: int | None = None,
        *,
        progress: bool | None = None,
        batch_size: int | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
    ):
        """Run every sample not yet finished in the output directory; the
        :class:`~titopfmu.campaign.CampaignResult`.

        ``scheduler``: the address of a running Dask scheduler (``tcp://host:8786``); else a
        ``LocalCluster`` of ``workers`` processes (default one per core), or, with
        ``workers=0``, serially in this process. ``batch_size``: runs per Dask task (default:
        about eight tasks per worker, at most 64 runs each). ``progress``: a bar on stderr
        (default: when stderr is a terminal).

        A Ctrl-C (a KeyboardInterrupt) stops it cleanly: the LocalCluster's workers ignore
        SIGINT, the client and cluster are closed quietly, the table and summary of the runs
        finished so far are written, and :class:`CampaignInterrupted` (a KeyboardInterrupt
        carrying them) is raised; ``run()`` again resumes."""
        if workers is not None and (not isinstance(workers, int) or workers < 0):
            raise CampaignError(f"workers must be a non-negative integer, got {workers!r}")
        if scheduler is not None and workers is not None:
            raise CampaignError("give either a scheduler address or a number of workers")
        if batch_size is not None and batch_size < 1:
            raise CampaignError(f"batch_size must be at least 1, got {batch_size}")
        _require("pandas", "pyarrow")
        spec = self.manifest_spec()
        resumed = store.check(self.out, spec)
        done = store.read_log(self.out) if resumed else {}
        done = {i: r for i, r in done.items() if r.get("status") != "lost" and i < self.n}
        pending = [i for i in range(self.n) if i not in done]
        client = cluster = None
        try:
            if pending and (scheduler is not None or workers != 0):
                client, cluster = _connect(scheduler, workers, connect_timeout)
            store.prepare(self.out, spec)
            if not (self.out / "samples.parquet").exists():
                _write_parquet(self.samples(), self.out / "samples.parquet")
            executed = self._execute(pending, client, progress, batch_size)
            _close(client, cluster)
            client = cluster = None
            consolidate(self.out, list(self.vary))
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM made one: keep what finished
            with _signals.held():  # a second Ctrl-C does not cut the shutdown short
                _close(client, cluster, quiet=True)
                raise self._interrupted(exc, len(done)) from None
        except BaseException:
            _close(client, cluster)
            raise
        finally:
            isolation.close()  # the helper process of the checks before the runs, if any
        return CampaignResult(self.out, resumed=len(done), executed=executed)

    def _interrupted(self, exc: KeyboardInterrupt, resumed: int) -> CampaignInterrupted:
        """The :class:`CampaignInterrupted` of a run stopped by ``exc``, the table of the runs
        finished so far written (when the directory holds the campaign)."""
        result, error = None, None
        if (self.out / store.MANIFEST).exists():
            try:
                table = consolidate(self.out, list(self.vary))
                result = CampaignResult(
                    self.out, resumed=resumed, executed=max(0, len(table) - resumed)
                )
            except Exception as e:  # a full disk...: the log keeps the runs, the resume redoes
                error = f"{type(e).__name__}: {e}"  # the table
        return CampaignInterrupted(_signals.name(exc), self.n, result, self.out, error)

    def _execute(self, pending: list[int], client, progress, batch_size) -> int:
        """Run ``pending`` (serially without a client); each record logged as it arrives."""
        if not pending:
            return 0
        bar = _progress.bar(len(pending), "campaign", "run", _progress.wanted(progress))
        log = store.RunLog(self.out)
        counts = {"done": 0, "failed": 0}

        def record(records: list[dict]) -> None:
            for rec in records:
                log.write(rec)
                counts["done"] += 1
                counts["failed"] += rec["status"] != "ok"
            if bar is not None:
                if counts["failed"]:
                    bar.set_postfix(failed=counts["failed"], refresh=False)
                bar.update(len(records))

        try:
            if client is None:
                for i in pending:
                    record(isolation.run_batch(self.model, self.spec, [(i, self.sample(i))]))
            else:
                self._dask(pending, client, record, batch_size)
        finally:
            isolation.close()  # this thread's helper process (a run timeout's), if any
            log.close()
            if bar is not None:
                bar.close()
        return counts["done"]

    def _dask(self, pending, client, record, batch_size) -> None:
        from distributed import as_completed

        n_workers = max(1, len(client.scheduler_info().get("workers", {})))
        if batch_size is None:
            batch_size = max(1, min(64, len(pending) // (8 * n_workers)))
        batches = [pending[k : k + batch_size] for k in range(0, len(pending), batch_size)]
        # the model and settings as the result of a task, not scattered data: a task's result
        # lost with its worker is computed again, so losing every worker that held them loses
        # nothing (workers fetch them once from each other)
        model = client.submit(_value, self.model, pure=False)
        spec = client.submit(_value, self.spec, pure=False)
        futures = {}
        for b in batches:
            f = client.submit(isolation.run_batch, model, spec, [(i, self.sample(i)) for i in b],
                              pure=False)  # fmt: skip
            futures[f] = b
        try:
            for f in as_completed(list(futures)):
                try:
                    records = f.result()
                except Exception as exc:  # workers lost too often (KilledWorker), or Dask's own
                    records = [
                        {
                            "run": i,
                            "status": "lost",
                            "error": f"{type(exc).__name__}: {exc}",
                            **self.sample(i),
                        }
                        for i in futures[f]
                    ]
                record(records)
                f.release()
        finally:
            with _signals.held():  # a second Ctrl-C does not cut the cancellation short
                client.cancel(list(futures))


def _titopfmu_version() -> str:
    """The titopfmu version a worker imports (run on each worker before the campaign)."""
    from .._version import __version__

    return __version__


def _check_workers(client, scheduler: str, timeout: float) -> None:
    """The scheduler has workers (waited for up to ``timeout`` s) and each imports this version
    of titopfmu; else :class:`CampaignError`."""
    from .._version import __version__

    try:
        client.wait_for_workers(1, timeout=timeout)
    except Exception:  # TimeoutError
        raise CampaignError(
            f"the Dask scheduler at {scheduler!r} has no worker (waited {timeout:g} s); start "
            f"some with: dask worker {scheduler}"
        ) from None
    try:
        versions = client.run(_titopfmu_version)
    except Exception as exc:
        raise CampaignError(
            f"the workers of {scheduler!r} cannot import titopfmu ({type(exc).__name__}: {exc}); "
            "install it where the workers run"
        ) from None
    other = {w: v for w, v in versions.items() if v != __version__}
    if other:
        raise CampaignError(
            f"workers of {scheduler!r} run another titopfmu than this one ({__version__}): "
            + ", ".join(f"{w}: {v}" for w, v in sorted(other.items()))
        )


def _value(x):
    """``x`` itself (a task whose result is ``x``)."""
    return x


def _require(*modules: str) -> None:
    """Raise a CampaignError naming the 'campaign' extra unless ``modules`` import."""
    import importlib

    for m in modules:
        try:
            importlib.import_module(m)
        except ImportError as exc:
            raise CampaignError(
                f"campaign results need {m} ({exc}); install the extra: "
                "pip install 'titopfmu[campaign]'"
            ) from None


def _connect(scheduler: str | None, workers: int | None, timeout: float):
    """A Dask client on the scheduler at ``scheduler``, else on a new LocalCluster."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise CampaignError(
            f"running on Dask needs dask.distributed ({exc}); install the extra: "
            "pip install 'titopfmu[campaign]', or run serially with workers=0 (--workers 0)"
        ) from None
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=f"{timeout}s")
        except Exception as exc:  # OSError, TimeoutError, ValueError for a bad address
            raise CampaignError(
                f"cannot reach the Dask scheduler at {scheduler!r} within {timeout:g} s: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        try:
            _check_workers(client, scheduler, timeout)
        except BaseException:
            client.close()
            raise
        return client, None
    cluster = _local_cluster(
        LocalCluster,
        n_workers=workers or os.cpu_count() or 1,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",  # a free port for its HTTP routes: several clusters may run
        silence_logs=logging.ERROR,
        **_preloads(),
    )
    try:
        return Client(cluster), cluster
    except BaseException:
        _close(None, cluster, quiet=True)
        raise


def _local_cluster(LocalCluster, **kwargs):
    """``LocalCluster(**kwargs)``, its worker processes ignoring SIGINT: a Ctrl-C at the
    terminal (sent to every process of the group) is for this process to handle (close the
    cluster, keep the finished runs), not for each worker to die of with a traceback.

    The workers are started while this process ignores SIGINT (a process inherits an ignored
    signal), the cluster being built in a helper thread: this (main) thread takes Ctrl-C again
    as soon as the workers' processes exist, without waiting for them to be ready (seconds).
    A Ctrl-C or SIGTERM then: the cluster is closed once built, and the KeyboardInterrupt
    raised. Off the main thread, the workers ignore SIGINT from their preload on."""
    if not _signals.main_thread():
        return LocalCluster(**kwargs)
    box: dict = {}

    def build() -> None:
        try:
            box["cluster"] = LocalCluster(**kwargs)
        except BaseException as exc:  # re-raised in the main thread
            box["error"] = exc

    thread = threading.Thread(target=build, name="titopfmu LocalCluster", daemon=True)
    try:
        with _signals.spawning():
            before = _worker_processes()
            thread.start()
            while thread.is_alive() and len(_worker_processes() - before) < kwargs["n_workers"]:
                thread.join(0.02)
        while thread.is_alive():
            thread.join(0.1)
    except KeyboardInterrupt:
        with _signals.held():
            thread.join()
            _close(None, box.get("cluster"), quiet=True)
        raise
    if "error" in box:
        raise box["error"]
    return box["cluster"]


def _worker_processes() -> set[int]:
    """The process ids of this process's children started by multiprocessing's ``spawn``
    (Dask's worker processes; empty when that cannot be known)."""
    try:
        import psutil

        children = psutil.Process().children()
    except Exception:  # no psutil (a dependency of distributed), no permission
        return set()
    found = set()
    for child in children:
        try:
            if "--multiprocessing-fork" in child.cmdline():
                found.add(child.pid)
        except Exception:  # gone, a zombie
            pass
    return found


def _preloads() -> dict:
    """The LocalCluster's worker preloads: the configured ones (``distributed.worker.preload``)
    and :data:`~titopfmu.campaign._signals.WORKER_PRELOAD` (a worker that replaces a dead one
    ignores SIGINT too)."""
    import dask

    preload = dask.config.get("distributed.worker.preload", default=None) or []
    preload = [preload] if isinstance(preload, str) else list(preload)
    argv = dask.config.get("distributed.worker.preload-argv", default=None) or []
    if argv and isinstance(argv[0], str):
        argv = [list(argv)] * len(preload)
    elif not argv:
        argv = [[] for _ in preload]
    return {"preload": [*preload, _signals.WORKER_PRELOAD], "preload_argv": [*argv, []]}


#: Seconds the client and the cluster get to close after an interruption (a LocalCluster takes
#: a few: Dask gives a worker busy with a run 4 s to stop before it kills it).
CLOSE_TIMEOUT = 30.0


def _close(client, cluster, quiet: bool = False) -> None:
    """Close ``client`` and ``cluster`` (either may be None). ``quiet`` (after an interruption):
    within :data:`CLOSE_TIMEOUT` s each, Dask's logging off (here, and in the LocalCluster's
    workers: SIGINT, see :data:`~titopfmu.campaign._signals.WORKER_PRELOAD`), errors
    ignored."""
    if not quiet:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
        return
    with _signals.quiet_logs():
        for worker in getattr(cluster, "workers", {}).values():  # a SIGTERM to this process
            pid = getattr(worker, "pid", None)  # alone: the workers' logging off as on Ctrl-C
            if pid:
                try:
                    os.kill(pid, signal.SIGINT)
                except OSError:
                    pass
        for closing in (client, cluster):
            if closing is not None:
                try:
                    closing.close(timeout=CLOSE_TIMEOUT)
                except Exception:  # a timeout, a scheduler already gone: we are leaving
                    pass


def _write_parquet(table, path: Path) -> None:
    """``table`` (pandas) as Parquet at ``path``, whole or not at all (a temporary, renamed)."""
    tmp = path.with_name(path.name + ".tmp")
    table.to_parquet(tmp, index=False)
    os.replace(tmp, path)


def run_campaign(model, vary, samples, out, *, scheduler=None, workers=None, progress=None, **kw):
    """``Campaign(model, vary, samples, out, **kw).run(scheduler, workers, progress=progress)``."""
    return Campaign(model, vary, samples, out, **kw).run(scheduler, workers, progress=progress)


__all__ = [
    "CONNECT_TIMEOUT", "Campaign", "CampaignError", "CampaignInterrupted", "META", "run_campaign",
]  # fmt: skip
