"""Spatial algebra and attitude conventions of seed 004 (pure numpy)."""

from .algebra import (
    coriolis_operator,
    dual_dcm,
    dynamic_model,
    kinematic_model,
    motion_dcm,
    newton_euler_residual,
    skew,
    transport_motion,
)
from .rotations import (
    axis_rotation,
    dcm_from_euler,
    dcm_from_quaternion,
    euler_from_dcm,
    euler_of,
    quaternion_from_euler,
    quaternion_rate,
)

__all__ = [
    "axis_rotation", "coriolis_operator",
    "dcm_from_euler", "dcm_from_quaternion", "dual_dcm",
    "dynamic_model", "euler_from_dcm", "euler_of", "kinematic_model", "motion_dcm",
    "newton_euler_residual", "quaternion_from_euler", "quaternion_rate", "skew", "transport_motion",
]  # fmt: skip
