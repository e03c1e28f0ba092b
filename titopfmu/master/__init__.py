"""Co-simulation master: TITOP FMUs loaded with fmpy, their algebraic loop solved exactly.

:class:`~titopfmu.master.cosim.CoSimulation` holds the components, connections and the run;
:mod:`titopfmu.master.components` loads FMUs and recognises their TITOP ports;
:class:`~titopfmu.master.model_exchange.ModelExchange` runs the same system through the FMUs'
model-exchange interfaces, one integrator for all; :mod:`titopfmu.master.ssp` reads and writes
SSP 1.0 system files. Needs the ``fmi``
extra (fmpy).
"""

from .components import CosimError
from .cosim import CosimResult, CoSimulation
from .model_exchange import ModelExchange
from .ssp import DefaultExperiment, read_ssp, write_ssp

__all__ = [
    "CoSimulation", "CosimError", "CosimResult", "DefaultExperiment", "ModelExchange", "read_ssp",
    "write_ssp",
]  # fmt: skip
