"""Attitude parameterisations: Euler angles (3-2-1), DCMs and unit quaternions.

Euler angles Θ = [φ, θ, ψ] (rad) follow DEVELOPERS.md: ``P_{b/i} = R_z(ψ) R_y(θ) R_x(φ)``, i.e.
scipy ``Rotation.from_euler("ZYX", [ψ, θ, φ])``. Attitudes are *integrated* as unit quaternions
``q = [w, x, y, z]`` (scalar first) so no Euler singularity is ever met; Θ is only computed for
the ports and for output.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..core import _titop
from .algebra import FloatArray


def _f64(v: ArrayLike) -> FloatArray:
    return np.ascontiguousarray(v, dtype=float)


#: Tolerance on ``P^T P = 1`` and ``det P = 1`` for a matrix to be accepted as a DCM.
DCM_TOLERANCE = 1e-9


def dcm_from_euler(theta: ArrayLike) -> FloatArray:
    """``P_{./i}(Θ)``: DCM P_{b/i} = R_z(ψ) R_y(θ) R_x(φ) of the 3-2-1 Euler angles Θ = [φ, θ, ψ]
    (rad); the same matrix as scipy's ``Rotation.from_euler("ZYX", [ψ, θ, φ])``, in closed form
    (the core's ``titop_euler_dcm``; scipy costs ~17 µs a call)."""
    out = np.empty((3, 3))
    _titop.euler_dcm(_f64(theta), out)
    return out




def euler_from_dcm(p_bi: ArrayLike) -> FloatArray:
    """``Θ(P_{b/i})``: 3-2-1 Euler angles [φ, θ, ψ] (rad) of the DCM P_{b/i}, θ in [-π/2, π/2].

    Closed form (atan2 throughout, accurate near θ = ±π/2; the core's ``titop_dcm_euler``); at
    gimbal lock (cos θ below 1e-9) φ and ψ are not separable and scipy's ``as_euler("ZYX")``
    convention is followed: φ = 0 and ψ carries the whole rotation about the vertical.
    """
    out = np.empty(3)
    _titop.dcm_euler(_f64(p_bi).reshape(9), out)
    return out


def euler_of(p_bi: ArrayLike, p_ab: ArrayLike) -> FloatArray:
    """Euler angles of a body A attached to B: ``Θ^A = Θ(P_{./i}(Θ^B) P_{a/b})`` (sec. 3.1)."""
    return euler_from_dcm(np.asarray(p_bi) @ np.asarray(p_ab))


def quaternion_from_euler(theta: ArrayLike) -> FloatArray:
    """Unit quaternion [w, x, y, z] of the Euler angles Θ = [φ, θ, ψ] (rad)
    (the core's ``titop_euler_quaternion``)."""
    out = np.empty(4)
    _titop.euler_quaternion(_f64(theta), out)
    return out


def dcm_from_quaternion(q: ArrayLike) -> FloatArray:
    """DCM P_{b/i} of a (not necessarily normalised) quaternion [w, x, y, z]."""
    out = np.empty((3, 3))
    _titop.quaternion_dcm(_f64(q), out)
    return out


def quaternion_rate(q: ArrayLike, omega_b: ArrayLike) -> FloatArray:
    """``q̇ = ½ q ⊗ [0, ω]`` for the body-frame angular rate ω (rad/s), q = [w, x, y, z].

    A term ``λ (1 - |q|²) q`` keeps the norm at one without affecting the attitude it encodes.
    """
    out = np.empty(4)
    _titop.quaternion_rate(_f64(q), _f64(omega_b), out)
    return out


def rotation_vector(p: ArrayLike) -> FloatArray:
    """The rotation vector θ n (rad) of the DCM ``p`` (rotation by θ ∈ [0, π) about n), accurate
    for small rotations (the loop closure's δθ; the core's ``titop_rotation_vector``)."""
    out = np.empty(3)
    _titop.rotation_vector(_f64(p).reshape(9), out)
    return out


def axis_rotation(unit_axis: ArrayLike, angle: float) -> FloatArray:
    """``e^{θ (*r̃)}``: rotation by ``angle`` (rad) about the unit vector ``unit_axis`` (eq. 16)."""
    r = np.asarray(unit_axis, dtype=float)
    k = np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])
    return np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * (k @ k)


def rotation_error(p: ArrayLike) -> float:
    """How far a 3×3 matrix is from a rotation: ``max(|P^T P - 1|, |det P - 1|)``."""
    p = np.asarray(p, dtype=float)
    if p.shape != (3, 3) or not np.all(np.isfinite(p)):
        return math.inf
    return _titop.rotation_error(_f64(p).reshape(9))  # the core's check, as the FMUs
