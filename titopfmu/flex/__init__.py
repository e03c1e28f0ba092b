"""Flexible bodies' finite-element and model-reduction layer (issue 34, pre-processing).

A uniform 3-D beam (:class:`Beam`, :class:`Section`), a rectangular plate (:class:`Plate`,
meshed with scikit-fem) or a user's finite-element model (:class:`FEModel`,
:func:`read_fe_model`; an ANSYS MAPDL ``.full`` file, :func:`read_ansys`) reduced by
Craig-Bampton or cantilever modal truncation (:func:`craig_bampton`,
:func:`cantilever_modes`) to a :class:`ReducedModel`: the floating-frame invariants, mode
shapes at the ports and modal geometric stiffness a ``FlexibleBody`` block evaluates.
Formulation and the block's specification: docs/flexible.md.
"""

from .ansys import read_ansys
from .beam import Beam, Section
from .checks import FlexModelError
from .fe import BODY_LOAD_CASES, NODE_LOAD_COMPONENTS, FEModel
from .io import read_fe_model, read_reduced_model, write_fe_model, write_reduced_model
from .plate import Plate
from .reduce import ReducedModel, cantilever_modes, craig_bampton
from .spec import reduced_from_spec

__all__ = [
    "BODY_LOAD_CASES",
    "NODE_LOAD_COMPONENTS",
    "Beam",
    "FEModel",
    "FlexModelError",
    "Plate",
    "ReducedModel",
    "Section",
    "cantilever_modes",
    "craig_bampton",
    "read_ansys",
    "read_fe_model",
    "read_reduced_model",
    "reduced_from_spec",
    "write_fe_model",
    "write_reduced_model",
]
