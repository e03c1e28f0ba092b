"""Helpers of the FMU tests: build once, load with fmpy, set parameters by FMI name."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave, fmi2CallbackFunctions

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
