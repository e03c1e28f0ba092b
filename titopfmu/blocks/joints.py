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

The generalized speeds ``u = q̇`` (k) of the 1-dof joints are the derivatives of their coordinates.
The spherical and free joints (derived below in the style of sec. 3.2, see
:class:`SphericalJoint` and :class:`FreeJoint`) carry their relative attitude as a unit
quaternion, so their configuration ``q`` has ``nq > k`` components and its rate is a function
``q̇ = f(q, u)`` of the generalized speeds (:meth:`JointModel.coordinate_rate`); ``q̈`` above then
reads ``u̇``. For every joint, the joint motion signal is ``joint.m = [u̇ (k), u (k), p (k)]`` with
``p`` the joint's position output (:meth:`JointModel.position_output`: the coordinate of a 1-dof
joint, Euler angles of the relative attitude for the others).

The classes below hold a joint's parameters, checked, and document its equations; the equations
themselves run in the C core (``joint_transform`` and ``body_kinematics`` of
``titopfmu/core/csrc/titop_core.c``), which the body blocks call
(:class:`~titopfmu.blocks.bodies.JointBody`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..core import _titop
from ..spatial.algebra import FloatArray
from ..spatial.rotations import quaternion_from_euler
from .base import ParameterError, as_vector, check_axis, check_dcm


class JointModel:
    """Base of the joint models: ``dof`` = k generalized speeds u, ``S`` (6×k) constant in R_a.

    ``nq`` is the number of configuration coordinates q (the joint's position states); for the
    1-dof joints ``nq = k`` and ``q̇ = u``. ``motion_doc`` / ``effort_doc`` describe the
    ``joint.m`` / ``joint.tau`` signals (empty: the 1-dof descriptions of :class:`JointBody`).
    """

    dof: int = 0
    nq: int = 0
    S: FloatArray = np.zeros((6, 0))
    coordinate_unit = ""
    identity_rate = True  # q̇ = u (nq = k)
    motion_doc = ""
    effort_doc = ""
    core_kind = 3  # the core's body kind (titop.h, enum titop_kind)

    def position_output(self, q: FloatArray) -> FloatArray:
        """The position part ``p`` (k) of ``joint.m = [u̇, u, p]`` (``titop_joint_position``)."""
        p = np.empty(self.dof)
        if self.dof:
            _titop.joint_position(self.core_kind, np.ascontiguousarray(q, dtype=float), p)
        return p

    def coordinates_from_position(self, p: FloatArray) -> FloatArray:
        """Inverse of :meth:`position_output` (for the inverse-dynamics blocks)."""
        q = np.empty(self.nq)
        if self.nq:
            _titop.joint_coordinates(self.core_kind, np.ascontiguousarray(p, dtype=float), q)
        return q


class WeldJoint(JointModel):
    """Welding joint (sec. 3.1, Figs. 4-6): A is clamped to B, ``P_{a/b}`` constant."""

    def __init__(self, block: str, p_ab: ArrayLike) -> None:
        self.R_ab = check_dcm(block, "P_ab", p_ab)


class _AxisJoint(JointModel):
    """A 1-dof joint along or about an axis of R_a: its axis (normalised; zero is an error) and
    the DCM of R_a in the parent's frame (at zero coordinate), checked."""

    dof = 1
    nq = 1
    _dcm = ("", "")  # (parameter name, attribute)
    _rows = slice(0, 0)  # the rows of S that hold the axis

    def __init__(self, block: str, axis: ArrayLike, dcm: ArrayLike) -> None:
        self.axis = check_axis(block, "axis", axis)
        setattr(self, self._dcm[1], check_dcm(block, self._dcm[0], dcm))
        self.S = np.zeros((6, 1))
        self.S[self._rows, 0] = self.axis


class RevoluteJoint(_AxisJoint):
    """Revolute joint (sec. 3.2, eqs. 16-17): rotation θ about the axis r of R_a at P.

    ``P_{aθ/b} = P_{a0/b} e^{θ (*r̃)}`` (eq. 16); the joint point P is the reference point of A.
    """

    coordinate_unit = "rad"
    core_kind = 4
    _dcm = ("P_a0b", "R_a0b")
    _rows = slice(3, 6)  # S = [0; r]


class PrismaticJoint(_AxisJoint):
    """Prismatic joint (sec. 3.3, eq. 24): translation x along the axis t of R_a.

    The joint point P0 is fixed in B, P (the reference point of A) in A, P ≡ P0 at x = 0 and
    ``IP = IP0 + x t̃``. Seed 004 projects both ports in R_a; here, as for the other joints, the
    parent port is projected in R_b through the constant ``P_{a/b}`` (Fig. 6).
    """

    coordinate_unit = "m"
    core_kind = 5
    _dcm = ("P_ab", "R_ab")
    _rows = slice(0, 3)  # S = [t; 0]


def unit_quaternion(block: str, name: str, value: ArrayLike | None) -> FloatArray:
    """A unit quaternion [w, x, y, z] parameter (unit to 1e-6, normalised here); the identity
    for None."""
    if value is None:
        return np.array([1.0, 0.0, 0.0, 0.0])
    q = as_vector(block, name, value, 4)
    n = float(np.linalg.norm(q))
    if not abs(n - 1.0) <= 1e-6:
        raise ParameterError(block, name, f"not a unit quaternion [w, x, y, z] (norm {n:.9g}); "
                             "scalar first")  # fmt: skip
    return q / n


def initial_quaternion(
    block: str, euler0: ArrayLike | None, quaternion0: ArrayLike | None
) -> FloatArray:
    """Initial relative attitude as a unit quaternion [w, x, y, z], from ``euler0`` (3-2-1 Euler
    angles [φ, θ, ψ], rad) or ``quaternion0`` (unit to 1e-6, normalised here); identity if
    neither is given, an error if both are."""
    if euler0 is not None and quaternion0 is not None:
        raise ParameterError(block, "quaternion0", "give euler0 or quaternion0, not both")
    if quaternion0 is not None:
        return unit_quaternion(block, "quaternion0", quaternion0)
    if euler0 is not None:
        return quaternion_from_euler(as_vector(block, "euler0", euler0, 3))
    return np.array([1.0, 0.0, 0.0, 0.0])


class SphericalJoint(JointModel):
    """Spherical (ball-and-socket) joint: free relative rotation of A about the joint point P.

    Derived as the revolute joint of sec. 3.2 with the rotation about r̃ replaced by any rotation.
    P is the reference point of A and the child-port point of B (fixed in both). R_a0 is the
    frame of A at zero rotation, fixed in B; ``P_a0b`` = P_{a0/b}. Configuration: the unit
    quaternion q = [w, x, y, z] of P_{a/a0} (integrated, so no Euler singularity), and

        P_{a/b} = P_{a0/b} P_{a/a0}(q)                               (cf. eq. 16)

    Generalized speeds u = ω_r = [ω^{A/B}]_{R_a} (rad/s), the angular velocity of A relative to B
    in R_a, so ``q̇ = ½ q ⊗ [0; ω_r]`` and ``S = [0_3; 1_3]`` is constant in R_a. With
    ``x'_0 = [v_0; ω_0] = P^{×2}_{b/a} x'^B_P`` (the parent twist at P in R_a), as eq. (17):

        v^A_P = v^B_P,   ω^A = ω^B + ω_r
        v̇^A_P = v̇^B_P - (*ω_r) v^B_P,   ω̇^A = ω̇^B - (*ω_r) ω^B + ω̇_r

    i.e. ``ẋ'_A = G ẋ'_B + e + S ω̇_r``, ``G = P^{×2}_{b/a}``,
    ``e = [-(*ω_r) v_0; -(*ω_r) ω_0]`` (``body_kinematics`` in the core). With eqs. (18)-(22),
    the driving effort is the torque ``τ = S^T W_{B/A,P} = T_{B/A,P}`` (N m, R_a, eq. 19) and
    the apparent inertia ``J = S^T D_P S = I_P`` (the 3×3 inertia of A about P, eq. 20).
    Position output p: the 3-2-1 Euler angles [φ, θ, ψ] of P_{a/a0} (rad; an output only).
    """

    identity_rate = False
    dof = 3
    nq = 4
    core_kind = 6
    coordinate_unit = "rad"
    motion_doc = (
        "relative motion [ω̇_r (rad/s², R_a), ω_r (rad/s, R_a), Euler angles of P_{a/a0} (rad, "
        "3-2-1)]"
    )
    effort_doc = "driving torque T_{B/A,P} applied by the parent on the body (N m, R_a)"

    def __init__(self, block: str, p_a0b: ArrayLike) -> None:
        self.R_a0b = check_dcm(block, "P_a0b", p_a0b)
        self.S = np.zeros((6, 3))
        self.S[3:6, 0:3] = np.eye(3)


class FreeJoint(JointModel):
    """Free (6-dof) joint: relative translation and rotation of A w.r.t. its parent B.

    O is the child-port point of B (fixed in B), P the reference point of A, r = OP; P ≡ O and
    R_a ≡ R_a0 (``P_a0b`` = P_{a0/b}, fixed in B) at zero configuration. Configuration (nq = 7):
    ``r = [OP]_{R_b}`` (m; as seed 003, translations measured in the frame of the lower body) and
    the unit quaternion q = [w, x, y, z] of P_{a/a0}, with ``P_{a/b} = P_{a0/b} P_{a/a0}(q)``.
    Generalized speeds (k = 6): ``u = [v_r; ω_r]`` in R_a, with ``v_r = [dOP/dt|_{R_b}]_{R_a}``
    (m/s, the velocity of P relative to B) and ω_r = ω^{A/B} (rad/s); so ``S = 1_6`` is constant
    in R_a, ``ṙ = P_{a/b} v_r`` and ``q̇ = ½ q ⊗ [0; ω_r]``. As eqs. (17) and (24), with
    ``x'_0 = [v_0; ω_0] = G x'^B_O``, ``G = P^{×2}_{b/a} τ_{PO}`` (``τ_{PO}`` = ``τ_{-r}``, the
    transport of eq. 24 from O to P):

        IP = IO + r,   v^A_P = v_0 + v_r,   ω^A = ω_0 + ω_r
        v̇^A_P = v̇_0 + (*ω_0) v_r - (*ω_r) v_0 + v̇_r,   ω̇^A = ω̇_0 - (*ω_r) ω_0 + ω̇_r

    i.e. ``ẋ'_A = G ẋ'_B + e + u̇`` with ``e = x'_0 ×ₘ u`` (``body_kinematics`` in the core). The
    driving effort is the wrench ``τ = W_{B/A,P} = [F; T]`` (N, N m about P, R_a, eqs. 19/26),
    the apparent inertia ``J = D_P`` (eq. 4); eq. (22) then gives ``u̇ = D_P^-1 (τ - h + Σ τ_CP^T
    W_C) - G ẋ'_B - e`` and the wrench on the parent is ``W_{A/B,O} = -G^T τ``.
    Position output p = [r (m, R_b), 3-2-1 Euler angles of P_{a/a0} (rad)].
    """

    identity_rate = False
    dof = 6
    nq = 7
    core_kind = 7
    coordinate_unit = "m, rad"
    motion_doc = (
        "relative motion [v̇_r, ω̇_r (m/s², rad/s², R_a), v_r, ω_r (m/s, rad/s, R_a), "
        "OP (m, R_parent), Euler angles of P_{a/a0} (rad, 3-2-1)]"
    )
    effort_doc = (
        "driving wrench W_{B/A,P} = [F (N), T (N m) about P] applied by the parent on the body, "
        "in R_a"
    )

    def __init__(self, block: str, p_a0b: ArrayLike) -> None:
        self.R_a0b = check_dcm(block, "P_a0b", p_a0b)
        self.S = np.eye(6)
