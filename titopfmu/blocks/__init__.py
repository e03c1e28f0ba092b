"""The TITOP block library (seed 004): body, joint, loop-closure and signal blocks."""

from .base import Block, InertiaWarning, ParameterError, Port, TitopError
from .bodies import (
    BodyBlock,
    ExternalWrench,
    FlexibleBody,
    FreeBody,
    FreeBodyInverse,
    Ground,
    ImposedMotionBody,
    JointBody,
    PrismaticBody,
    PrismaticBodyInverse,
    RevoluteBody,
    RevoluteBodyInverse,
    RigidBody,
    SphericalBody,
    SphericalBodyInverse,
    WeldedBody,
)
from .closure import LoopClosure
from .signals import (
    Constant,
    Function,
    JointMimic,
    JointSpringDamper,
    SignalBlock,
    TimeFunction,
)

__all__ = [
    "Block", "BodyBlock", "Constant", "ExternalWrench", "FlexibleBody", "FreeBody",
    "FreeBodyInverse", "Function",
    "Ground", "ImposedMotionBody", "InertiaWarning", "JointBody", "JointMimic", "JointSpringDamper",
    "LoopClosure", "ParameterError", "Port", "PrismaticBody", "PrismaticBodyInverse",
    "RevoluteBody", "RevoluteBodyInverse", "RigidBody", "SignalBlock", "SphericalBody",
    "SphericalBodyInverse", "TimeFunction", "TitopError", "WeldedBody",
]  # fmt: skip

from . import declarations as _declarations  # noqa: E402

#: The block class of each declared type with a model-file form, by its name (the model file's
#: ``type``), in the declarations' order.
BLOCK_CLASSES: dict[str, type[Block]] = {
    name: globals()[name] for name in _declarations.BLOCK_TYPES
}
__all__.append("BLOCK_CLASSES")
