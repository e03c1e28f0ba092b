"""titopfmu: non-linear TITOP multibody blocks (Alazard, Sanfedino, Kassarian), an in-process
engine, and FMI co-simulation units.

Layers (each imports only from those below it; ``[tool.importlinter]`` in pyproject.toml):
:mod:`titopfmu.core` (the C core, every block equation) -> :mod:`titopfmu.spatial` (spatial
algebra) -> :mod:`titopfmu.blocks` (block types, declared once in
:mod:`titopfmu.blocks.declarations`) -> :mod:`titopfmu.assembly` (systems, loop solver, engine)
-> model files and robot descriptions -> :mod:`titopfmu.fmi`, :mod:`titopfmu.master`,
:mod:`titopfmu.linear`, campaigns -> the command line. This module, the public API, is the top.
"""

from ._version import __version__ as __version__  # a module importing nothing (no cycle)
from .assembly import (
    AssemblyError,
    Engine,
    RunInterrupted,
    SimulationError,
    SimulationResult,
    System,
    simulate,
)  # fmt: skip
from .blocks import (
    Constant,
    ExternalWrench,
    FlexibleBody,
    FreeBody,
    FreeBodyInverse,
    Function,
    Ground,
    ImposedMotionBody,
    InertiaWarning,
    JointMimic,
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


def load(path, check: bool = True) -> System:
    """The :class:`System` of a model file (YAML or JSON; see :mod:`titopfmu.modelfile`)."""
    from .modelfile import load as _load

    return _load(path, check)


def loads(text: str, check: bool = True) -> System:
    """The :class:`System` of a model-file text (see :mod:`titopfmu.modelfile`)."""
    from .modelfile import loads as _loads

    return _loads(text, check=check)


def import_urdf(source, floating_base: bool = False, gravity=(0.0, 0.0, -9.81), **kwargs) -> System:
    """A :class:`System` from a URDF file or string (see :func:`titopfmu.urdf.import_urdf`;
    needs Pinocchio, PyPI ``pin``)."""
    from .urdf import import_urdf as _import

    return _import(source, floating_base=floating_base, gravity=gravity, **kwargs)


def import_mjcf(source, gravity=None, **kwargs) -> System:
    """A :class:`System` from an MJCF (MuJoCo XML) file (see :func:`titopfmu.mjcf.import_mjcf`;
    needs Pinocchio, PyPI ``pin``)."""
    from .mjcf import import_mjcf as _import

    return _import(source, gravity=gravity, **kwargs)


def export_fmu(system: System, path, fmi_version: int = 2, **kwargs):
    """Write ``system`` as one native FMU, its algebraic loop solved inside (co-simulation and
    model exchange; see :func:`titopfmu.fmi.model.build_model_fmu`, which takes ``blocks``,
    ``outputs``, ``signals``, ``name`` and ``win64``); returns the path written."""
    from .fmi.model import build_model_fmu

    return build_model_fmu(system, path, fmi_version=fmi_version, **kwargs)


__all__ = [
    "AssemblyError", "Constant", "Engine", "ExternalWrench", "FlexibleBody", "FreeBody",
    "FreeBodyInverse",
    "Function", "Ground", "ImposedMotionBody", "InertiaWarning", "JointMimic", "JointSpringDamper",
    "LinearModel", "LinearizationError", "LoopClosure", "ParameterError", "PrismaticBody",
    "PrismaticBodyInverse", "RevoluteBody", "RevoluteBodyInverse", "RigidBody", "RunInterrupted",
    "SimulationError", "SimulationResult", "SphericalBody", "SphericalBodyInverse", "System",
    "TimeFunction", "TitopError", "TrimError", "WeldedBody", "export_fmu", "import_mjcf",
    "import_urdf", "linearize", "linearize_family", "load", "loads", "simulate", "trim",
]  # fmt: skip
