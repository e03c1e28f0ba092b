"""The TITOP block library (seed 004): body, joint, loop-closure and signal blocks."""

from .base import Block, InertiaWarning, ParameterError, Port, TitopError
from .bodies import (
    BodyBlock,
    ExternalWrench,
    Ground,
    ImposedMotionBody,
    JointBody,
    PrismaticBody,
    PrismaticBodyInverse,
    RevoluteBody,
    RevoluteBodyInverse,
    RigidBody,
    WeldedBody,
)
from .closure import LoopClosure
from .signals import Constant, Function, JointSpringDamper, SignalBlock, TimeFunction

__all__ = [
    "Block", "BodyBlock", "Constant", "ExternalWrench", "Function", "Ground", "ImposedMotionBody",
    "InertiaWarning", "JointBody", "JointSpringDamper", "LoopClosure", "ParameterError", "Port",
    "PrismaticBody", "PrismaticBodyInverse", "RevoluteBody", "RevoluteBodyInverse", "RigidBody",
    "SignalBlock", "TimeFunction", "TitopError", "WeldedBody",
]  # fmt: skip
