"""Joint kinematics between a parent body B and a child body A (seed 004, sec. 3).

A joint model turns the motion vector of the parent at the joint point (projected in R_b) and the
joint coordinates into the motion of A at its reference point P (projected in R_a). Every joint
of seed 004 has the same affine structure, used by :class:`~titopfmu.blocks.bodies.JointBody`:

    ẋ'_A = G ẋ'_B + e + S q̈          (spatial acceleration of A at P, in R_a)
    x'_A = G x'_B + S q̇              (twist)
    W_{A/B} = G^T W_A                 (wrench back to the parent, in R_b)

with ``G`` the 6×6 map from the parent port to P in R_a, ``e`` the velocity-product terms and
``S`` (6×k) the joint's motion subspace in R_a. ``G^T`` on wrenches is the power-dual of ``G`` on
twists, which gives eqs. (18) and (29).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..spatial.algebra import FloatArray, dual_dcm, kinematic_model
from .base import ParameterError, check_axis, check_dcm


class JointKinematics:
    """Run-time kinematic quantities of a joint body at one instant (all in R_a unless said)."""

    __slots__ = ("G", "e", "twist", "ip", "R", "R_ab")

    def __init__(
        self,
        G: FloatArray,
        e: FloatArray,
        twist: FloatArray,
        ip: FloatArray,
        R: FloatArray,
        R_ab: FloatArray,
    ) -> None:
        self.G = G  # 6×6, parent-port dual vectors (R_b) -> dual vectors at P (R_a)
        self.e = e  # 6, velocity-product part of the spatial acceleration at P
        self.twist = twist  # 6, twist of A at P
        self.ip = ip  # 3, [IP]_{R_a} (m)
        self.R = R  # 3×3, P_{a/i}
        self.R_ab = R_ab  # 3×3, P_{a/b}


class JointModel:
    """Base of the joint models. ``dof`` coordinates q, with ``S`` constant in R_a."""

    dof: int = 0
    S: FloatArray = np.zeros((6, 0))
    coordinate_unit = ""

    def kinematics(
        self, q: FloatArray, qd: FloatArray, twist_b: FloatArray, ip_b: FloatArray, R_bi: FloatArray
    ) -> JointKinematics:
        raise NotImplementedError


class WeldJoint(JointModel):
    """Welding joint (sec. 3.1, Figs. 4-6): A is clamped to B, ``P_{a/b}`` constant."""

    def __init__(self, block: str, p_ab: ArrayLike) -> None:
        self.R_ab = check_dcm(block, "P_ab", p_ab)
        self.Gc = dual_dcm(self.R_ab.T)

    def kinematics(self, q, qd, twist_b, ip_b, R_bi):  # noqa: D102
        G = self.Gc
        return JointKinematics(
            G, np.zeros(6), G @ twist_b, self.R_ab.T @ ip_b, R_bi @ self.R_ab, self.R_ab
        )


class RevoluteJoint(JointModel):
    """Revolute joint (sec. 3.2, eqs. 16-17): rotation θ about the axis r of R_a at P.

    ``P_{aθ/b} = P_{a0/b} e^{θ (*r̃)}`` (eq. 16); the joint point P is the reference point of A.
    """

    dof = 1
    coordinate_unit = "rad"

    def __init__(self, block: str, axis: ArrayLike, p_a0b: ArrayLike) -> None:
        self.axis = check_axis(block, "axis", axis)
        self.R_a0b = check_dcm(block, "P_a0b", p_a0b)
        self.S = np.concatenate([np.zeros(3), self.axis]).reshape(6, 1)
        r = self.axis
        K = np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])
        self.K = K
        # P_{aθ/b} = P_{a0/b} (1 + sin θ K + (1 - cos θ) K²) (Rodrigues form of eq. 16)
        self._R0K = self.R_a0b @ K
        self._R0K2 = self.R_a0b @ K @ K
        self._K6 = np.zeros((6, 6))
        self._K6[0:3, 0:3] = K
        self._K6[3:6, 3:6] = K
        self._s = self.S[:, 0].copy()

    def kinematics(self, q, qd, twist_b, ip_b, R_bi):  # noqa: D102
        th = float(q[0])
        R_ab = self.R_a0b + math.sin(th) * self._R0K + (1.0 - math.cos(th)) * self._R0K2
        Rt = R_ab.T
        G = np.zeros((6, 6))
        G[0:3, 0:3] = Rt
        G[3:6, 3:6] = Rt
        tw0 = G @ twist_b  # parent twist at P, projected in R_a (v_P^B, ω^B)
        thd = float(qd[0])
        # eq. (17): ẋ'_A = ẋ'_B - θ̇ [(*r̃) v_P^B ; (*r̃) ω^B] + θ̈ [0 ; r̃]
        e = (-thd) * (self._K6 @ tw0)
        twist = tw0 + thd * self._s
        return JointKinematics(G, e, twist, Rt @ ip_b, R_bi @ R_ab, R_ab)


class PrismaticJoint(JointModel):
    """Prismatic joint (sec. 3.3, eq. 24): translation x along the axis t of R_a.

    The joint point P0 is fixed in B, P (the reference point of A) in A, P ≡ P0 at x = 0 and
    ``IP = IP0 + x t̃``. Seed 004 projects both ports in R_a; here, as for the other joints, the
    parent port is projected in R_b through the constant ``P_{a/b}`` (Fig. 6).
    """

    dof = 1
    coordinate_unit = "m"

    def __init__(self, block: str, axis: ArrayLike, p_ab: ArrayLike) -> None:
        self.axis = check_axis(block, "axis", axis)
        self.R_ab = check_dcm(block, "P_ab", p_ab)
        self.Gr = dual_dcm(self.R_ab.T)
        self.S = np.concatenate([self.axis, np.zeros(3)]).reshape(6, 1)
        t = self.axis
        self.K = np.array([[0.0, -t[2], t[1]], [t[2], 0.0, -t[0]], [-t[1], t[0], 0.0]])

    def kinematics(self, q, qd, twist_b, ip_b, R_bi):  # noqa: D102
        x = float(q[0])
        xd = float(qd[0])
        G = kinematic_model(-x * self.axis) @ self.Gr  # τ_{-x t̃} P^{×2}_{b/a}, eq. (24)
        twist = G @ twist_b
        omega = twist[3:6]
        twist[0:3] += xd * self.axis
        e = np.zeros(6)
        e[0:3] = -xd * (self.K @ omega)  # -ẋ (*t̃) ω^A
        ip = self.R_ab.T @ ip_b + x * self.axis
        return JointKinematics(G, e, twist, ip, R_bi @ self.R_ab, self.R_ab)


def _finite_scalar(block: str, parameter: str, value: float) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(block, parameter, f"not a number: {value!r}") from None
    if not math.isfinite(v):
        raise ParameterError(block, parameter, f"non-finite value {value}")
    return v
