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

from .algebra import FloatArray
from .kernels import euler_dcm, euler_quaternion, quaternion_dcm, quaternion_rate_into

#: Tolerance on ``P^T P = 1`` and ``det P = 1`` for a matrix to be accepted as a DCM.
DCM_TOLERANCE = 1e-9


def dcm_from_euler(theta: ArrayLike) -> FloatArray:
    """``P_{./i}(Θ)``: DCM P_{b/i} = R_z(ψ) R_y(θ) R_x(φ) of the 3-2-1 Euler angles Θ = [φ, θ, ψ]
    (rad); the same matrix as scipy's ``Rotation.from_euler("ZYX", [ψ, θ, φ])``, in closed form
    (:func:`~titopfmu.spatial.kernels.euler_dcm`; scipy costs ~17 µs a call)."""
    out = np.empty((3, 3))
    euler_dcm(np.asarray(theta, dtype=float), out)
    return out


#: Below this cos θ the 3-2-1 angles are at gimbal lock and scipy's convention (φ = 0) is used.
_GIMBAL_LOCK = 1e-9


def euler_from_dcm(p_bi: ArrayLike) -> FloatArray:
    """``Θ(P_{b/i})``: 3-2-1 Euler angles [φ, θ, ψ] (rad) of the DCM P_{b/i}, θ in [-π/2, π/2].

    Closed form (atan2 throughout, accurate near θ = ±π/2); at gimbal lock (cos θ below
    1e-9) φ and ψ are not separable and scipy's ``as_euler("ZYX")`` convention is followed:
    φ = 0 and ψ carries the whole rotation about the vertical.
    """
    (r00, r01, _), (r10, r11, _), (r20, r21, r22) = (
        p_bi.tolist() if isinstance(p_bi, np.ndarray) else p_bi
    )
    c = math.hypot(r00, r10)
    if c < _GIMBAL_LOCK:
        return np.array([0.0, math.atan2(-r20, c), math.atan2(-r01, r11)])
    return np.array([math.atan2(r21, r22), math.atan2(-r20, c), math.atan2(r10, r00)])


def euler_of(p_bi: ArrayLike, p_ab: ArrayLike) -> FloatArray:
    """Euler angles of a body A attached to B: ``Θ^A = Θ(P_{./i}(Θ^B) P_{a/b})`` (sec. 3.1)."""
    return euler_from_dcm(np.asarray(p_bi) @ np.asarray(p_ab))


def quaternion_from_euler(theta: ArrayLike) -> FloatArray:
    """Unit quaternion [w, x, y, z] of the Euler angles Θ = [φ, θ, ψ] (rad)
    (:func:`~titopfmu.spatial.kernels.euler_quaternion`)."""
    out = np.empty(4)
    euler_quaternion(np.asarray(theta, dtype=float), out)
    return out


def dcm_from_quaternion(q: ArrayLike) -> FloatArray:
    """DCM P_{b/i} of a (not necessarily normalised) quaternion [w, x, y, z]."""
    out = np.empty((3, 3))
    quaternion_dcm(np.asarray(q, dtype=float), out)
    return out


def quaternion_rate(q: ArrayLike, omega_b: ArrayLike) -> FloatArray:
    """``q̇ = ½ q ⊗ [0, ω]`` for the body-frame angular rate ω (rad/s), q = [w, x, y, z].

    A term ``λ (1 - |q|²) q`` keeps the norm at one without affecting the attitude it encodes.
    """
    out = np.empty(4)
    quaternion_rate_into(np.asarray(q, dtype=float), np.asarray(omega_b, dtype=float), out)
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
    return float(max(np.max(np.abs(p.T @ p - np.eye(3))), abs(np.linalg.det(p) - 1.0)))
