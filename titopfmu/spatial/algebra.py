"""Spatial algebra of seed 004 (Alazard, Sanfedino, Kassarian), section 2 and nomenclature.

Conventions (DEVELOPERS.md):

* a *dual vector* (twist, spatial acceleration) is ``[linear(3), angular(3)]``;
* a *wrench* is ``[F(3), T(3)]`` (N, N m), the torque taken at the port point;
* a *motion vector* ``m_P`` (18) is ``[v̇_P, ω̇, v_P, ω, IP, Θ]``: spatial acceleration w.r.t. the
  body frame (m/s², rad/s²), twist (m/s, rad/s) and position (m), all projected in the body frame,
  and the Euler angles Θ = [φ, θ, ψ] (rad, 3-2-1 sequence), which do not depend on a projection;
* ``P_{a/b}`` is the DCM whose columns are x_a, y_a, z_a expressed in R_b:
  ``[v]_b = P_{a/b} [v]_a``.

Everything here is pure numpy on small arrays, no I/O. The functions called at every evaluation
use ``ndarray.dot`` rather than ``@``: on 6×6 operands numpy's ``matmul`` ufunc costs about three
times as much per call (numpy 2.x), and these arrays are far too small for the product itself to
matter.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]

#: Index slices of the motion vector (18).
ACC = slice(0, 6)
TWIST = slice(6, 12)
POS = slice(12, 15)
EULER = slice(15, 18)


def skew(v: ArrayLike) -> FloatArray:
    """Skew-symmetric matrix ``(*v)`` such that ``(*v) w = v × w`` (nomenclature of seed 004)."""
    x, y, z = np.asarray(v, dtype=float)
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def kinematic_model(pb: ArrayLike) -> FloatArray:
    """Kinematic model ``τ_PB = [[1, (*PB)], [0, 1]]`` (6×6) for the vector PB (m).

    ``τ_CP x'_P`` is the twist at C from the twist at P, and ``τ_CP^T W_C`` transports a wrench
    from C to P (eq. 13).
    """
    tau = np.eye(6)
    tau[0:3, 3:6] = skew(pb)
    return tau


def dynamic_model(mass: float, inertia_b: ArrayLike, bp: ArrayLike) -> FloatArray:
    """6×6 dynamic model ``D_P = τ_BP^T diag(m 1_3, I_B) τ_BP`` at point P (eq. 4).

    ``inertia_b`` is the inertia tensor at the centre of mass B (kg m²) and ``bp`` the vector from B
    to P (m), both in the body frame.
    """
    d_b = np.zeros((6, 6))
    d_b[0:3, 0:3] = mass * np.eye(3)
    d_b[3:6, 3:6] = np.asarray(inertia_b, dtype=float)
    tau = kinematic_model(bp)
    return tau.T @ d_b @ tau


def coriolis_operator(twist: ArrayLike) -> FloatArray:
    """Operator ``C(x') = [[(*ω), 0], [(*v), (*ω)]]`` of eq. (7), for the twist ``x' = [v, ω]``."""
    vx, vy, vz, wx, wy, wz = np.asarray(twist, dtype=float).tolist()
    return np.array(
        [
            [0.0, -wz, wy, 0.0, 0.0, 0.0],
            [wz, 0.0, -wx, 0.0, 0.0, 0.0],
            [-wy, wx, 0.0, 0.0, 0.0, 0.0],
            [0.0, -vz, vy, 0.0, -wz, wy],
            [vz, 0.0, -vx, wz, 0.0, -wx],
            [-vy, vx, 0.0, -wy, wx, 0.0],
        ]
    )


def newton_euler_residual(
    d_p: FloatArray, twist: ArrayLike, acc: ArrayLike, gravity: ArrayLike, wrench_ext: ArrayLike
) -> FloatArray:
    """Residual of the modified Newton-Euler equation (11), in the body frame.

    ``D_P (ẋ'_P - [g; 0]) + C(x'_P) D_P x'_P - W_ext,P``; zero for a motion consistent with the
    external wrench. ``gravity`` is g projected in the body frame (m/s²).
    """
    twist = np.asarray(twist, dtype=float)
    acc = np.asarray(acc, dtype=float)
    g6 = np.concatenate([np.asarray(gravity, dtype=float), np.zeros(3)])
    return d_p @ (acc - g6) + coriolis_operator(twist) @ d_p @ twist - np.asarray(wrench_ext)


def dual_dcm(p_ab: ArrayLike) -> FloatArray:
    """Augmented DCM for dual vectors and wrenches ``P^{×2}_{a/b} = diag(P_{a/b}, P_{a/b})``."""
    p = np.asarray(p_ab, dtype=float)
    out = np.zeros((6, 6))
    out[0:3, 0:3] = p
    out[3:6, 3:6] = p
    return out


def motion_dcm(p_ab: ArrayLike) -> FloatArray:
    """Augmented DCM for motion vectors ``P^{18}_{a/b} = diag(P^{×2}, P^{×2}, P, 1_3)``.

    It changes the projection frame of the first 15 components; the Euler angles are left as
    they are (they describe the attitude of the body, not a projection): a motion vector handed
    to another body also needs its Θ replaced, see :func:`titopfmu.spatial.rotations.euler_of`.
    """
    p = np.asarray(p_ab, dtype=float)
    out = np.eye(18)
    for k in range(5):
        out[3 * k : 3 * k + 3, 3 * k : 3 * k + 3] = p
    return out


def transport_motion(m_p: ArrayLike, cp: ArrayLike) -> FloatArray:
    """Motion-vector transport ``m_C = v_CP(m_P)`` (Definition 1, eq. 14) on a rigid body.

    ``cp`` is the vector from C to P in the body frame (m). Spatial acceleration and twist are
    transported by ``τ_CP`` (CP is constant in the body frame), the position by IC = IP + PC,
    the Euler angles are unchanged.
    """
    m_p = np.asarray(m_p, dtype=float)
    cp = np.asarray(cp, dtype=float)
    tau = kinematic_model(cp)
    m_c = m_p.copy()
    m_c[ACC] = tau @ m_p[ACC]
    m_c[TWIST] = tau @ m_p[TWIST]
    m_c[POS] = m_p[POS] - cp
    return m_c
