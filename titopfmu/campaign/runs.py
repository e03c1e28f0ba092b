"""One run of a campaign, as a worker executes it: a system with the sample's parameters, one
simulation, its scalar outcomes (reductions of the recorded columns) and, on request, its
trajectory. Everything here is picklable and free of Dask, so the same function runs serially
in process and on any Dask worker (which is what makes the two bit for bit equal).
"""

from __future__ import annotations

import math
import os
import socket
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..assembly.engine import Engine
from ..assembly.system import System
from ..blocks.base import InertiaWarning, TitopError

#: Built-in reductions of a recorded column (its samples on the output grid, SI units):
#: ``final`` the value at the final time, ``min``/``max`` the extremes, ``absmax`` the largest
#: magnitude, ``mean`` the mean of the samples (a time average on the uniform output grid),
#: ``rms`` the root mean square of the samples.
REDUCTIONS: dict[str, Callable[[np.ndarray], float]] = {
    "final": lambda v: v[-1],
    "min": np.min,
    "max": np.max,
    "absmax": lambda v: np.max(np.abs(v)),
    "mean": np.mean,
    "rms": lambda v: math.sqrt(float(np.mean(v * v))),
}

#: Columns every run record has besides its parameters and outcomes.
META = ("run", "status", "error", "t_end", "wall", "worker")


@dataclass(frozen=True)
class RunSpec:
    """How every run of a campaign simulates and reduces (picklable, shipped once per worker).

    ``record``: column -> signal (``block.signal[i]``, 1-based), what each run samples every
    ``output_interval`` s up to ``t_final`` s; ``reductions``: names of :data:`REDUCTIONS`
    applied to every column (outcome ``column.reduction``); ``custom``: name -> function of the
    :class:`~titopfmu.SimulationResult` returning a float or a mapping name -> float (outcome
    ``name`` or ``name.key``). ``integrator``, ``rtol``, ``atol``: the engine's (backend
    ``inprocess``); ``step`` (s) and ``fmus`` (a folder of FMUs, None: the per-user cache): the
    co-simulation's (backend ``cosim``). ``timeout``: s of wall-clock time a run may take (None:
    no limit); a run past it stops and is recorded as failed, with the results so far (a run
    that does not stop has its process ended: :mod:`titopfmu.campaign.isolation`)."""

    t_final: float
    output_interval: float
    record: dict[str, str]
    reductions: tuple[str, ...] = ("final", "min", "max")
    custom: dict[str, Callable] = field(default_factory=dict)
    integrator: str = "DOP853"
    rtol: float = 1e-8
    atol: float = 1e-10
    trajectories: bool = False
    backend: str = "inprocess"
    step: float = 1e-3
    fmus: str | None = None
    timeout: float | None = None


class ModelSource:
    """Where each run's system comes from: a base :class:`System` whose named parameters are set
    (a :class:`~titopfmu.parameters.ParameterSetter`), or a function ``build(sample)`` of the
    sample (name -> value) returning a System."""

    def __init__(self, system: System | None = None, names=(), build: Callable | None = None):
        self.build = build
        self.setter = None
        if build is None:
            from ..parameters import ParameterSetter

            self.setter = ParameterSetter(system, names)

    def system(self, sample: Mapping[str, float]) -> System:
        if self.build is not None:
            s = self.build(dict(sample))
            if not isinstance(s, System):
                raise TitopError(f"the model function returned {type(s).__name__}, not a System")
            return s
        return self.setter.apply(sample)


def simulate_inprocess(system: System, spec: RunSpec):
    """The run's :class:`~titopfmu.SimulationResult` from the in-process engine."""
    return Engine(system).simulate(
        spec.t_final,
        output_interval=spec.output_interval,
        record=spec.record,
        method=spec.integrator,
        rtol=spec.rtol,
        atol=spec.atol,
        timeout=spec.timeout,
    )


def simulate_cosim(system: System, spec: RunSpec):
    """The run's :class:`~titopfmu.SimulationResult` from the system's FMUs co-simulated by the
    master (:meth:`CoSimulation.from_system <titopfmu.master.CoSimulation.from_system>`, fixed
    communication step ``spec.step``), with the columns the engine gives for the same record."""
    from ..master import CoSimulation
    from ..master.from_system import simulate_system

    cs = CoSimulation.from_system(system, spec.fmus)
    return simulate_system(cs, spec.t_final, spec.step, record=spec.record,
                           output_interval=spec.output_interval,
                           timeout=spec.timeout)  # fmt: skip


#: Backend name -> function (system, spec) -> SimulationResult.
BACKENDS: dict[str, Callable] = {"inprocess": simulate_inprocess, "cosim": simulate_cosim}


def outcomes(result, spec: RunSpec) -> dict[str, float]:
    """The scalar outcomes of one (complete) result."""
    out: dict[str, float] = {}
    values = result.values
    for j, col in enumerate(result.columns):
        v = values[:, j]
        for r in spec.reductions:
            out[f"{col}.{r}"] = float(REDUCTIONS[r](v))
    for name, f in spec.custom.items():
        try:
            got = f(result)
        except Exception as exc:  # the user's function: its error is the run's
            raise TitopError(f"reduction {name!r} failed: {type(exc).__name__}: {exc}") from exc
        if isinstance(got, Mapping):
            for k, v in got.items():
                out[f"{name}.{k}"] = float(v)
        else:
            out[name] = float(got)
    return out


def run_one(model: ModelSource, spec: RunSpec, run: int, sample: Mapping[str, float]) -> dict:
    """One run: its record (``run``, ``status`` ok/failed, ``error``, ``t_end`` the last time
    reached in s, ``wall`` s, ``worker`` host:pid, the parameters, the outcomes) and, with
    ``spec.trajectories``, ``"_trajectory"``: (columns, times, rows) up to ``t_end``."""
    t0 = time.perf_counter()
    rec: dict = {"run": int(run), "status": "ok", "error": None, "t_end": math.nan}
    rec.update({k: float(v) for k, v in sample.items()})
    result = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InertiaWarning)  # checked once on the base model
            system = model.system(sample)
            try:
                result = BACKENDS[spec.backend](system, spec)
            except TitopError as exc:  # a SimulationError or CosimError keeps its result
                result = getattr(exc, "result", None)
                raise
            rec.update(outcomes(result, spec))
    except Exception as exc:  # a failed run is recorded, the campaign goes on
        rec["status"] = "failed"
        rec["error"] = f"{type(exc).__name__}: {exc}"
    if result is not None and result.time_list:
        rec["t_end"] = float(result.time_list[-1])
        if spec.trajectories:
            rec["_trajectory"] = (list(result.columns), list(result.time_list), result.rows)
    rec["wall"] = time.perf_counter() - t0
    rec["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    return rec


def run_batch(model: ModelSource, spec: RunSpec, batch: list[tuple[int, dict]]) -> list[dict]:
    """The records of several runs (the unit of work sent to a Dask worker)."""
    return [run_one(model, spec, i, s) for i, s in batch]


__all__ = [
    "BACKENDS",
    "META",
    "REDUCTIONS",
    "ModelSource",
    "RunSpec",
    "outcomes",
    "run_batch",
    "run_one",
    "simulate_cosim",
    "simulate_inprocess",
]
