"""titopfmu: non-linear TITOP multibody blocks (Alazard, Sanfedino, Kassarian), an in-process
engine, and FMI co-simulation units.

Layers: :mod:`titopfmu.spatial` (spatial algebra) -> :mod:`titopfmu.blocks` (the block equations)
-> :mod:`titopfmu.assembly` (systems, loop solver, engine).
"""

from .assembly import AssemblyError, Engine, SimulationError, SimulationResult, System, simulate
from .blocks import (
    Constant,
    ExternalWrench,
    FreeBody,
    FreeBodyInverse,
    Function,
    Ground,
    ImposedMotionBody,
    InertiaWarning,
    JointSpringDamper,
    LoopClosure,
    ParameterError,
    PrismaticBody,
    PrismaticBodyInverse,
    RevoluteBody,
    RevoluteBodyInverse,
    RigidBody,
    SphericalBody,
    SphericalBodyInverse,
    TimeFunction,
    TitopError,
    WeldedBody,
)
from .linear import (
    LinearizationError,
    LinearModel,
    TrimError,
    linearize,
    linearize_family,
    trim,
)

__version__ = "0.1.0"

__all__ = [
    "AssemblyError", "Constant", "Engine", "ExternalWrench", "FreeBody", "FreeBodyInverse",
    "Function", "Ground", "ImposedMotionBody", "InertiaWarning", "JointSpringDamper",
    "LinearModel", "LinearizationError", "LoopClosure", "ParameterError", "PrismaticBody",
    "PrismaticBodyInverse", "RevoluteBody", "RevoluteBodyInverse", "RigidBody", "SimulationError",
    "SimulationResult", "SphericalBody", "SphericalBodyInverse", "System", "TimeFunction",
    "TitopError", "TrimError", "WeldedBody", "linearize", "linearize_family", "simulate", "trim",
]  # fmt: skip
