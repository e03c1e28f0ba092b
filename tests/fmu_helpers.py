"""Helpers of the FMU tests: build once, load with fmpy, set parameters by FMI name."""

from __future__ import annotations

import shutil
from ctypes import c_double
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Model, FMU2Slave, fmi2CallbackFunctions

from titopfmu.fmi.catalog import FMU_TYPES, Param
from titopfmu.master.components import fmi2_callbacks


@dataclass
class LoadedFmu:
    """An extracted FMU (model description + unzip directory), ready to instantiate."""

    path: Path
    md: object
    directory: str

    @property
    def vr(self) -> dict[str, int]:
        return {v.name: v.valueReference for v in self.md.modelVariables}

    def variables(self, causality: str) -> list:
        return [v for v in self.md.modelVariables if v.causality == causality]

    def instantiate(self, name: str = "inst", logger=None) -> FMU2Slave:
        fmu = FMU2Slave(
            guid=self.md.guid,
            unzipDirectory=self.directory,
            modelIdentifier=self.md.coSimulation.modelIdentifier,
            instanceName=name,
        )
        if logger is None:
            fmu.instantiate(loggingOn=False)
        else:
            fmu.instantiate(loggingOn=True, callbacks=callbacks_with(logger))
            fmu._titop_keep = fmu.callbacks  # the C side holds pointers into it
        return fmu


def callbacks_with(logger) -> fmi2CallbackFunctions:
    """FMI callbacks whose logger calls ``logger(env, instance, status, category, message)``
    with the message already formatted (fmpy's variadic proxy).

    Through titopfmu's module-lifetime logger (:func:`titopfmu.master.components.fmi2_callbacks`),
    never a logger of the test's own: fmpy's proxy keeps the last registered logger for the whole
    process, and one that died with its test crashed a later FMU's first message."""
    return fmi2_callbacks(logger)


def load(path: Path) -> LoadedFmu:
    return LoadedFmu(Path(path), read_model_description(str(path)), extract(str(path)))


def fmi_scalars(values: dict) -> dict[str, float]:
    """Block parameters by base name (numbers, vectors, matrices) as FMI 2.0 scalar variables:
    ``mass``, ``com[k]``, ``inertia[i,j]`` (1-based)."""
    out = {}
    for key, v in values.items():
        a = np.asarray(v, dtype=float)
        if a.ndim == 0:
            out[key] = float(a)
        elif a.ndim == 1:
            out.update({f"{key}[{k + 1}]": float(x) for k, x in enumerate(a)})
        else:
            out.update({f"{key}[{i + 1},{j + 1}]": float(a[i, j]) for i in range(a.shape[0])
                        for j in range(a.shape[1])})  # fmt: skip
    return out


def set_parameters(fmu: FMU2Slave, loaded: LoadedFmu, params: list[Param], values: dict) -> None:
    """Set every parameter of ``values`` (arrays or bools, by base name) through FMI calls."""
    vr = loaded.vr
    reals_vr, reals = [], []
    for p in params:
        if p.name not in values:
            continue
        if p.boolean:
            fmu.setBoolean([vr[p.name]], [bool(values[p.name])])
            continue
        if p.integer:
            fmu.setInteger([vr[p.name]], [int(values[p.name])])
            continue
        a = np.asarray(values[p.name], dtype=float)
        for fname, idx in p.names():
            reals_vr.append(vr[fname])
            reals.append(float(a[idx]))
    if reals_vr:
        fmu.setReal(reals_vr, reals)


def start(fmu: FMU2Slave, loaded: LoadedFmu, params: list[Param], values: dict, t0=0.0) -> None:
    """setupExperiment, parameters, initialization."""
    fmu.setupExperiment(startTime=t0)
    fmu.enterInitializationMode()
    set_parameters(fmu, loaded, params, values)
    fmu.exitInitializationMode()


def fmu_type_of(loaded: LoadedFmu):
    """(FmuType, number of child ports) of a built FMU, from its model identifier."""
    model = loaded.md.coSimulation.modelIdentifier
    for t in FMU_TYPES.values():
        for n in t.variants:
            if t.model_name(n) == model:
                return t, n
    raise KeyError(model)


class MeInstance:
    """An fmpy FMI 2.0 model-exchange instance of a model FMU, initialised with its start
    values (``start``: more, by name)."""

    def __init__(self, path, start=None) -> None:
        md = read_model_description(str(path))
        self.vr = {v.name: v.valueReference for v in md.modelVariables}
        self.names = [v.name for v in md.modelVariables]
        self.nx = md.numberOfContinuousStates
        self.unzipped = extract(str(path))
        self.fmu = FMU2Model(guid=md.guid, unzipDirectory=self.unzipped,
                             modelIdentifier=md.modelExchange.modelIdentifier,
                             instanceName="me")  # fmt: skip
        self.fmu.instantiate()
        self.fmu.setupExperiment(startTime=0.0)
        self.fmu.enterInitializationMode()
        for name, v in (start or {}).items():
            self.fmu.setReal([self.vr[name]], [v])
        self.fmu.exitInitializationMode()
        self.fmu.enterContinuousTimeMode()

    def state(self) -> np.ndarray:
        x = (c_double * self.nx)()
        self.fmu.getContinuousStates(x, self.nx)
        return np.array(x)

    def derivative(self, x=None) -> np.ndarray:
        if x is not None:
            self.fmu.setContinuousStates((c_double * self.nx)(*x), self.nx)
        dx = (c_double * self.nx)()
        self.fmu.getDerivatives(dx, self.nx)
        return np.array(dx)

    def close(self) -> None:
        self.fmu.terminate()
        self.fmu.freeInstance()
        shutil.rmtree(self.unzipped, ignore_errors=True)


def me_derivative_error(path, engine, states, start=None) -> float:
    """The largest ``|dx_FMU - dx_engine| / max(1, |dx_engine|)`` of a model FMU's
    model-exchange derivative against ``engine.derivative`` at ``states`` (t = 0), the FMU
    initialised with ``start`` (parameters by name)."""
    me = MeInstance(path, start)
    try:
        worst = 0.0
        for x in states:
            theirs = engine.derivative(0.0, np.asarray(x, dtype=float))
            dx = me.derivative(np.asarray(x, dtype=float))
            err = np.max(np.abs(dx - theirs)) / max(1.0, np.max(np.abs(theirs)))
            worst = max(worst, float(err))
        return worst
    finally:
        me.close()
