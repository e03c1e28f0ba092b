"""Co-simulation master: TITOP FMUs loaded with fmpy, their algebraic loop solved exactly.

:class:`~titopfmu.master.cosim.CoSimulation` holds the components, connections and the run, its
methods in one module per part: :mod:`.wiring` (components, connections), :mod:`.plan` (tree,
loop, order of the FMU calls), :mod:`.binding` (FMUs instantiated, channels and arrays),
:mod:`.loop` (the loop's solution at a point), :mod:`.coupling` (inputs over a step),
:mod:`.results` and :mod:`.stepping` (runs); the compiled step is :mod:`.fastpath`;
:mod:`titopfmu.master.components` loads FMUs and recognises their TITOP ports;
:class:`~titopfmu.master.model_exchange.ModelExchange` runs the same system through the FMUs'
model-exchange interfaces, one integrator for all; :mod:`titopfmu.master.ssp` reads and writes
SSP 1.0 system files (and writes SSP 2.0 files of FMI 3.0 FMUs). Needs the ``fmi`` extra
(fmpy).
"""

from .components import CosimError
from .cosim import CosimResult, CoSimulation
from .model_exchange import ModelExchange
from .ssp import DefaultExperiment, read_ssp, write_ssp

__all__ = [
    "CoSimulation", "CosimError", "CosimResult", "DefaultExperiment", "ModelExchange", "read_ssp",
    "write_ssp",
]  # fmt: skip
