"""DeNOC dynamics with an equimomental system of seven point masses (seed 001).

Independent reference solver written from Gupta, Chaudhary and Saha, *Dynamics of a Spatial
Multibody System using Equimomental System of Point-masses* (seed 001). It shares no dynamics code
with the TITOP blocks: only :func:`titopfmu.spatial.algebra.skew`, scipy and numpy are used.

Scope: **serial chains** of rigid bodies on a fixed base, each body hinged to its predecessor by a
**revolute** (1 dof) or **spherical** (3 dof) joint. Branches, prismatic or free joints are rejected
(:class:`DenocError`).

Method (equation numbers of seed 001):

* each body i is replaced by seven rigidly connected point masses ``m_ij`` at seven vertices of a
  parallelepiped of half sides ``h_x, h_y, h_z`` centred at ``O_{i+1}`` with edges along the body
  axes (Table I); ``h`` from the diagonal inertia (eqs. 11-13) and the masses from the linear
  equations of mass, mass centre and products of inertia (eqs. 1-7); negative point masses are
  legal (the paper's own pendulum has two);
* point-mass velocities ``ṽ_i = D_i t_i`` with the 21x6 point-mass matrix ``D_i`` (eq. 22) and the
  twist ``t_i = [ω_i, v_i]`` of the origin ``O_i`` (eq. 23); ``ṽ = D t`` (eqs. 25-26);
* ``t = N_l N_d u`` (eqs. 24, 27-29): ``N_l`` block lower triangular of twist-propagation matrices
  ``A_ij`` and ``N_d`` block diagonal of joint-motion propagation vectors ``p_i = [e_i; 0]``
  (revolute) or matrices ``[L_i; O]`` (spherical, eq. 37);
* Newton's equations of the point masses ``M̃ v̇̃ = f̃`` (eqs. 30-32) premultiplied by ``Ñ^T``
  (eq. 33) give ``I u̇ + C u = τ`` (eq. 34) with ``I = Ñ^T M̃ Ñ``, ``C = Ñ^T M̃ dÑ/dt`` and
  ``τ = Ñ^T f̃`` (eq. 35), ``dÑ/dt = Ḋ N_l N_d + D Ṅ_l N_d + D N_l Ṅ_d`` (sec. V.B, eq. 39).

Conventions (SI units throughout):

* the inertial frame ``F_0`` has its origin at the base point, gravity ``g`` in ``F_0`` (default
  ``[0, 0, -9.81]`` m/s², as eq. 40);
* body i carries the frame ``B_i``: origin ``O_i`` = the centre of its joint (on the revolute axis,
  or the ball centre), axes fixed in body i. ``Q_i`` is the DCM ``B_i -> F_0``
  (``[x]_0 = Q_i [x]_i``, as the paper's ``Q`` of eq. 36);
* all DeNOC matrices (D, N_l, N_d, twists) are expressed in ``F_0`` (the paper's ``[d_1j]_1``);
* generalized coordinates ``q`` (chain order, base to tip): a revolute joint contributes its angle
  (rad); a spherical joint a unit quaternion ``[w, x, y, z]`` (scalar first) of the rotation of
  ``B_i`` relative to its joint frame (no singularity, unlike the paper's ZYZ angles, which are only
  used here to *set* initial conditions, :func:`zyz_matrix`, :func:`zyz_rate_matrix`);
* generalized speeds ``u``: a revolute joint its angle rate (rad/s); a spherical joint the angular
  velocity of body i relative to its parent, in ``B_i`` (rad/s), so that
  ``q̇_quat = ½ q ⊗ [0, u]``. ``u`` is not ``q̇``: the equations of motion are written for ``u``
  (``Ñ`` maps ``u`` to the point velocities, as in eq. 27 with ``L_i = Q_i``);
* joint efforts (generalized forces of the joints): a revolute joint the torque about its axis
  (N m); a spherical joint the torque exerted by the parent on body i, in ``B_i`` (N m).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NoReturn

import numpy as np
from numpy.typing import ArrayLike
from scipy.integrate import solve_ivp
from scipy.linalg import cho_factor, cho_solve
from scipy.spatial.transform import Rotation

from ..blocks.base import TitopError
from ..spatial.algebra import skew

FloatArray = np.ndarray

#: Joint types handled by this reference (seed 001: revolute, sec. III; spherical, sec. V).
JOINT_TYPES = ("revolute", "spherical")

#: Table I: signs of the components of r_ij (x, y, z in the body axes) for j = 1..7.
VERTEX_SIGNS = np.array(
    [
        [1.0, 1.0, 1.0],
        [1.0, 1.0, -1.0],
        [-1.0, 1.0, -1.0],
        [-1.0, 1.0, 1.0],
        [-1.0, -1.0, 1.0],
        [1.0, -1.0, 1.0],
        [1.0, -1.0, -1.0],
    ]
)
VERTEX_SIGNS.setflags(write=False)

#: Coefficient matrix of eqs. (1)-(7) once each equation is divided by its power of h:
#: rows = mass, x, y, z, xy, yz, zx; columns = m_i1..m_i7. Always invertible (7x7 minor of the
#: 8x8 Hadamard matrix of the parallelepiped's vertices), so the masses always exist when h > 0.
_S = VERTEX_SIGNS
EQUIMOMENTAL_MATRIX = np.vstack(
    [
        np.ones(7),
        _S[:, 0],
        _S[:, 1],
        _S[:, 2],
        _S[:, 0] * _S[:, 1],
        _S[:, 1] * _S[:, 2],
        _S[:, 2] * _S[:, 0],
    ]
)
EQUIMOMENTAL_MATRIX.setflags(write=False)

#: Relative tolerance of the representability checks (moments reproduced, h² >= 0).
REPRESENTATION_RTOL = 1e-9
#: A Cholesky pivot of the GIM below this times its largest diagonal entry means singular.
GIM_PIVOT_RTOL = 1e-12
#: Tolerance on R^T R = 1 and det R = 1 for a joint rotation.
ROTATION_TOLERANCE = 1e-9


class DenocError(TitopError):
    """Bad input for the DeNOC reference, or something it cannot model. Names the body/parameter."""


# ------------------------------------------------------------------------------------------------
# small kinematic helpers (independent of the TITOP blocks)
# ------------------------------------------------------------------------------------------------


def _vec3(value: ArrayLike, what: str) -> FloatArray:
    try:
        v = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DenocError(f"{what}: expected 3 numbers, got {value!r}") from exc
    if v.shape != (3,):
        raise DenocError(f"{what}: expected a 3-vector, got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise DenocError(f"{what}: not finite: {v.tolist()}")
    return v


def _mat3(value: ArrayLike, what: str) -> FloatArray:
    try:
        a = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DenocError(f"{what}: expected a 3x3 matrix, got {value!r}") from exc
    if a.shape != (3, 3):
        raise DenocError(f"{what}: expected a 3x3 matrix, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise DenocError(f"{what}: not finite")
    return a


def _readonly(a: FloatArray) -> FloatArray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


def _skew_stack(d: FloatArray) -> FloatArray:
    """The cross-product matrices ``d_j x 1`` of the rows of ``d`` (k x 3), stacked (3k x 3)."""
    k = d.shape[0]
    out = np.zeros((k, 3, 3))
    out[:, 0, 1], out[:, 0, 2] = -d[:, 2], d[:, 1]
    out[:, 1, 0], out[:, 1, 2] = d[:, 2], -d[:, 0]
    out[:, 2, 0], out[:, 2, 1] = -d[:, 1], d[:, 0]
    return out.reshape(3 * k, 3)


def quaternion_matrix(quat: ArrayLike) -> FloatArray:
    """DCM of a unit quaternion ``[w, x, y, z]`` (scalar first): ``[v]_outer = R [v]_inner``.

    The quaternion must already be normalised.
    """
    w, x, y, z = quat
    return np.array(
        [
            [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y)],
            [2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x)],
            [2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)],
        ]
    )


def quaternion_from_matrix(R: ArrayLike) -> FloatArray:
    """Unit quaternion ``[w, x, y, z]`` (scalar first, ``w >= 0``) of a DCM."""
    x, y, z, w = Rotation.from_matrix(np.asarray(R, dtype=float)).as_quat()
    q = np.array([w, x, y, z])
    return -q if w < 0.0 else q


def quaternion_rate(quat: ArrayLike, omega_body: ArrayLike) -> FloatArray:
    """``q̇ = ½ q ⊗ [0, ω]`` for ``q = [w, x, y, z]`` and ω in the rotated (inner) frame (rad/s)."""
    w, x, y, z = quat
    p, r, s = omega_body
    return 0.5 * np.array(
        [
            -x * p - y * r - z * s,
            w * p + y * s - z * r,
            w * r + z * p - x * s,
            w * s + x * r - y * p,
        ]
    )


def axis_angle_matrix(axis: FloatArray, angle: float) -> FloatArray:
    """Rodrigues' DCM of a rotation by ``angle`` (rad) about the unit vector ``axis``."""
    K = skew(axis)
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * (K @ K)


def zyz_matrix(phi: float, theta: float, psi: float) -> FloatArray:
    """Rotation matrix Q of the ZYZ Euler angles φ, θ, ψ (rad), eq. (36): ``Rz(φ) Ry(θ) Rz(ψ)``."""
    cf, sf = math.cos(phi), math.sin(phi)
    ct, st = math.cos(theta), math.sin(theta)
    cp, sp = math.cos(psi), math.sin(psi)
    return np.array(
        [
            [cf * ct * cp - sf * sp, -cf * ct * sp - sf * cp, cf * st],
            [sf * ct * cp + cf * sp, -sf * ct * sp + cf * cp, sf * st],
            [-st * cp, st * sp, ct],
        ]
    )


def zyz_rate_matrix(phi: float, theta: float) -> FloatArray:
    """Matrix L of eq. (38b): angular velocity (in the outer frame) ``ω = L [φ̇, θ̇, ψ̇]``.

    Singular for ``sin θ = 0`` (the reason the solver integrates quaternions instead).
    """
    cf, sf = math.cos(phi), math.sin(phi)
    ct, st = math.cos(theta), math.sin(theta)
    return np.array([[0.0, -sf, st * cf], [0.0, cf, st * sf], [1.0, 0.0, ct]])


# ------------------------------------------------------------------------------------------------
# equimomental system of seven point masses (sec. II, eqs. 1-13)
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class SevenPointMasses:
    """The equimomental seven point masses of one body (sec. II).

    ``masses``: ``m_i1..m_i7`` (kg, some may be negative); ``half_sides``: ``[h_x, h_y, h_z]`` (m,
    eqs. 11-13); ``centre``: centre of the parallelepiped (``O_{i+1}``), m, in the frame in which
    the body data were given; ``offsets``: ``r_ij`` from the centre (m, 7x3, Table I, body axes).
    """

    masses: FloatArray
    half_sides: FloatArray
    centre: FloatArray
    offsets: FloatArray

    @property
    def positions(self) -> FloatArray:
        """Positions of the seven point masses (7x3, m), same frame and origin as ``centre``."""
        return self.centre + self.offsets

    def moments(self) -> tuple[float, FloatArray, FloatArray]:
        """Mass (kg), first moment ``Σ m_j p_j`` (kg m) and second moment ``Σ m_j p_j p_j^T``
        (kg m², about the frame origin) of the point masses (p_j = :attr:`positions`)."""
        p = self.positions
        return (
            float(np.sum(self.masses)),
            self.masses @ p,
            (p * self.masses[:, None]).T @ p,
        )


def second_moment(mass: float, com: ArrayLike, inertia_com: ArrayLike) -> FloatArray:
    """Second moment ``∫ p p^T dm`` (kg m²) about the frame origin of a rigid body of ``mass`` (kg),
    mass centre ``com`` (m) and inertia tensor ``inertia_com`` about the mass centre (kg m²)."""
    c = np.asarray(com, dtype=float)
    J = np.asarray(inertia_com, dtype=float)
    return 0.5 * np.trace(J) * np.eye(3) - J + mass * np.outer(c, c)


def seven_point_masses(
    mass: float,
    com: ArrayLike,
    inertia_com: ArrayLike,
    centre: ArrayLike = (0.0, 0.0, 0.0),
    *,
    body: str = "body",
) -> SevenPointMasses:
    """Seven point masses equimomental to a rigid body (sec. II, eqs. 1-13).

    ``mass`` (kg); ``com`` mass centre (m); ``inertia_com`` inertia tensor about the mass centre
    (kg m², body axes); ``centre`` centre ``O_{i+1}`` of the parallelepiped (m). ``com`` and
    ``centre`` are in the same body frame (any common origin); the parallelepiped's edges are
    along its axes. The inertia about the centre gives ``h`` (eqs. 11-13) and the masses solve
    eqs. (1)-(7) (products of inertia ``I_xy = Σ m x y``, i.e. minus the tensor's off-diagonal
    terms).

    What can be represented: negative point masses are legal. Not representable (raises
    :class:`DenocError` naming ``body``): ``mass <= 0`` (eqs. 11-13 divide by it), an inertia about
    the centre violating the triangle inequality of its diagonal (``h² < 0``: imaginary half side,
    the condition stated after eq. 13), or a zero half side (``h_k = 0``, a flat or linear body)
    while the mass centre or a product of inertia has a component along that axis (eqs. 2-7 cannot
    hold). For a physical mass distribution neither can happen.
    """
    try:
        mass = float(mass)
    except (TypeError, ValueError) as exc:
        raise DenocError(f"body '{body}', parameter 'mass': not a number: {mass!r}") from exc
    if not math.isfinite(mass) or mass <= 0.0:
        raise DenocError(
            f"body '{body}', parameter 'mass': {mass!r} kg; the seven point masses need mass > 0 "
            "(eqs. 11-13 divide by it)"
        )
    c0 = _vec3(com, f"body '{body}', parameter 'com'")
    o = _vec3(centre, f"body '{body}', point-mass centre")
    J0 = _mat3(inertia_com, f"body '{body}', parameter 'inertia'")
    c = c0 - o  # mass centre from O_{i+1}: (x̄, ȳ, z̄) of eqs. (2)-(4)
    # inertia tensor about O_{i+1} (parallel axes); eqs. (5)-(10) refer to it
    J = J0 + mass * (float(c @ c) * np.eye(3) - np.outer(c, c))
    Ixx, Iyy, Izz = J[0, 0], J[1, 1], J[2, 2]
    Ixy, Iyz, Izx = -J[0, 1], -J[1, 2], -J[2, 0]  # products of inertia as in eqs. (5)-(7)
    # eqs. (11)-(13)
    h2 = np.array([-Ixx + Iyy + Izz, Ixx - Iyy + Izz, Ixx + Iyy - Izz]) / (2.0 * mass)
    scale2 = max(float(np.sum(np.abs(h2))), float(c @ c), np.finfo(float).tiny)
    names = ("h_x (eq. 11)", "h_y (eq. 12)", "h_z (eq. 13)")
    for k in range(3):
        if h2[k] < -REPRESENTATION_RTOL * scale2:
            raise DenocError(
                f"body '{body}': its inertia about the point-mass centre {o.tolist()} has diagonal "
                f"[{Ixx:.6g}, {Iyy:.6g}, {Izz:.6g}] kg m², which violates the triangle inequality "
                f"required after eq. (13): {names[k]} would be imaginary (h² = {h2[k]:.6g} m²); "
                "no equimomental seven-point system exists"
            )
    # a half side below round-off is zero (flat or linear body: its points in a plane or a line)
    h = np.sqrt(np.where(h2 > 1e-14 * scale2, h2, 0.0))
    hx, hy, hz = h

    def ratio(num: float, den: float) -> float:
        return 0.0 if den == 0.0 else num / den

    # eqs. (1)-(7) divided by their powers of h (the rows of EQUIMOMENTAL_MATRIX)
    rhs = np.array(
        [
            mass,
            ratio(mass * c[0], hx),
            ratio(mass * c[1], hy),
            ratio(mass * c[2], hz),
            ratio(Ixy, hx * hy),
            ratio(Iyz, hy * hz),
            ratio(Izx, hz * hx),
        ]
    )
    m = np.linalg.solve(EQUIMOMENTAL_MATRIX, rhs)
    pm = SevenPointMasses(
        masses=_readonly(m),
        half_sides=_readonly(h),
        centre=_readonly(o),
        offsets=_readonly(VERTEX_SIGNS * h),
    )
    # check that mass, mass centre and inertia are reproduced (catches a zero half side while the
    # body has a first moment or product of inertia along that axis)
    m_tot, first, second = pm.moments()
    target_second = second_moment(mass, c0, J0)
    err_first = float(np.max(np.abs(first - mass * c0)))
    err_second = float(np.max(np.abs(second - target_second)))
    if (
        abs(m_tot - mass) > REPRESENTATION_RTOL * mass
        or err_first > REPRESENTATION_RTOL * mass * math.sqrt(scale2 + float(o @ o))
        or err_second > REPRESENTATION_RTOL * mass * (scale2 + float(o @ o))
    ):
        flat = [ax for ax, hk in zip("xyz", h, strict=True) if hk == 0.0]
        raise DenocError(
            f"body '{body}': no equimomental seven-point system centred at {o.tolist()}: the "
            f"inertia about it gives zero half side(s) along {flat} (eqs. 11-13) while the mass "
            f"centre offset {c.tolist()} m or a product of inertia has a component along that "
            f"axis (eqs. 2-7 cannot hold); first-moment error {err_first:.3g} kg m, "
            f"second-moment error {err_second:.3g} kg m²"
        )
    return pm


# ------------------------------------------------------------------------------------------------
# model
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class DenocBody:
    """Immutable parameters of one body of a serial chain and of its joint to the parent.

    * ``name``: unique name;
    * ``mass`` (kg), ``inertia``: tensor about the mass centre, ``B_i`` axes (kg m²);
    * ``com``: mass centre, vector ``O_i -> G_i`` in ``B_i`` (m);
    * ``joint``: ``"revolute"`` or ``"spherical"``;
    * ``axis``: revolute axis, in ``B_i`` (equal to its components in the joint frame; normalised
      here; default ``[0, 0, 1]``); must be left ``None`` for a spherical joint;
    * ``parent``: name of the preceding body, ``None`` for the body hinged to the fixed base;
    * ``joint_position``: vector from the parent's origin ``O_{i-1}`` to ``O_i``, in the parent's
      frame ``B_{i-1}`` (``F_0`` for the first body) (m);
    * ``joint_rotation``: DCM of the joint frame in the parent's frame (``[x]_{i-1} = R [x]_joint``;
      Pinocchio's joint placement rotation); at zero joint coordinate (angle 0, quaternion
      ``[1, 0, 0, 0]``) ``B_i`` coincides with the joint frame (default identity);
    * ``link``: the paper's link vector ``a_i = O_i -> O_{i+1}`` in ``B_i`` (m): the centre of
      the seven point masses (Fig. 1). Default: the child's ``joint_position`` if the body has a
      child (as in the paper), its mass centre if it is the last body.
    """

    name: str
    mass: float
    inertia: ArrayLike
    com: ArrayLike = (0.0, 0.0, 0.0)
    joint: str = "revolute"
    axis: ArrayLike | None = None
    parent: str | None = None
    joint_position: ArrayLike = (0.0, 0.0, 0.0)
    joint_rotation: ArrayLike | None = None
    link: ArrayLike | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise DenocError(f"body name must be a non-empty string, got {self.name!r}")
        who = f"body '{self.name}'"
        try:
            mass = float(self.mass)
        except (TypeError, ValueError) as exc:
            raise DenocError(f"{who}, parameter 'mass': not a number: {self.mass!r}") from exc
        if not math.isfinite(mass) or mass <= 0.0:
            raise DenocError(
                f"{who}, parameter 'mass': {self.mass!r} kg; must be finite and > 0 "
                "(the seven point masses divide by it, eqs. 11-13)"
            )
        J = _mat3(self.inertia, f"{who}, parameter 'inertia'")
        if not np.allclose(J, J.T, rtol=0.0, atol=1e-12 * max(1.0, float(np.max(np.abs(J))))):
            raise DenocError(f"{who}, parameter 'inertia': not symmetric: {J.tolist()}")
        J = 0.5 * (J + J.T)
        if self.joint not in JOINT_TYPES:
            raise DenocError(
                f"{who}, parameter 'joint': {self.joint!r} is not supported by the DeNOC "
                f"reference (Gupta, Chaudhary and Saha; joint types: {', '.join(JOINT_TYPES)}; "
                "no prismatic, free or other joints)"
            )
        if self.joint == "revolute":
            a = _vec3((0.0, 0.0, 1.0) if self.axis is None else self.axis, f"{who}, 'axis'")
            n = float(np.linalg.norm(a))
            if n < 1e-12:
                raise DenocError(f"{who}, parameter 'axis': zero vector")
            axis = _readonly(a / n)
        else:
            if self.axis is not None:
                raise DenocError(
                    f"{who}, parameter 'axis': a spherical joint has no axis (got {self.axis!r}); "
                    "orient its joint frame with 'joint_rotation'"
                )
            axis = None
        if self.parent is not None and not isinstance(self.parent, str):
            raise DenocError(f"{who}, parameter 'parent': expected a body name or None")
        if self.parent == self.name:
            raise DenocError(f"{who}, parameter 'parent': a body cannot be its own parent")
        R = np.eye(3) if self.joint_rotation is None else self.joint_rotation
        R = _mat3(R, f"{who}, parameter 'joint_rotation'")
        if (
            np.max(np.abs(R.T @ R - np.eye(3))) > ROTATION_TOLERANCE
            or abs(np.linalg.det(R) - 1.0) > ROTATION_TOLERANCE
        ):
            raise DenocError(
                f"{who}, parameter 'joint_rotation': not a proper rotation matrix "
                f"(R^T R = 1 and det R = +1 within {ROTATION_TOLERANCE:g})"
            )
        object.__setattr__(self, "mass", mass)
        object.__setattr__(self, "inertia", _readonly(J))
        object.__setattr__(self, "com", _readonly(_vec3(self.com, f"{who}, parameter 'com'")))
        object.__setattr__(self, "axis", axis)
        object.__setattr__(
            self,
            "joint_position",
            _readonly(_vec3(self.joint_position, f"{who}, parameter 'joint_position'")),
        )
        object.__setattr__(self, "joint_rotation", _readonly(R))
        if self.link is not None:
            object.__setattr__(
                self, "link", _readonly(_vec3(self.link, f"{who}, parameter 'link'"))
            )

    @property
    def n_q(self) -> int:
        """Number of joint coordinates (1 revolute, 4 spherical quaternion)."""
        return 1 if self.joint == "revolute" else 4

    @property
    def n_v(self) -> int:
        """Number of generalized speeds (degrees of freedom): 1 revolute, 3 spherical."""
        return 1 if self.joint == "revolute" else 3


def _order_chain(bodies: Sequence[DenocBody]) -> list[DenocBody]:
    """The bodies ordered base -> tip; rejects anything that is not one serial chain."""
    if len(bodies) == 0:
        raise DenocError("a DeNOC model needs at least one body")
    by_name: dict[str, DenocBody] = {}
    for b in bodies:
        if not isinstance(b, DenocBody):
            raise DenocError(f"expected DenocBody instances, got {type(b).__name__}")
        if b.name in by_name:
            raise DenocError(f"duplicate body name '{b.name}'")
        by_name[b.name] = b
    children: dict[str | None, list[str]] = {}
    for b in bodies:
        if b.parent is not None and b.parent not in by_name:
            raise DenocError(
                f"body '{b.name}', parameter 'parent': no body named '{b.parent}' "
                f"(bodies: {sorted(by_name)})"
            )
        children.setdefault(b.parent, []).append(b.name)
    for parent, kids in children.items():
        if len(kids) > 1:
            where = "the fixed base" if parent is None else f"body '{parent}'"
            raise DenocError(
                f"bodies {kids} all hang from {where}: a branched tree; the DeNOC reference "
                "handles serial chains only (one body per parent)"
            )
    if None not in children:
        raise DenocError(
            "no body is hinged to the fixed base (parent=None): the parent links form a cycle"
        )
    chain = [by_name[children[None][0]]]
    while chain[-1].name in children:
        chain.append(by_name[children[chain[-1].name][0]])
    if len(chain) != len(bodies):
        left = sorted(set(by_name) - {b.name for b in chain})
        raise DenocError(f"bodies {left} are not connected to the base: their parents form a cycle")
    return chain


@dataclass(frozen=True, eq=False)
class DenocTerms:
    """Everything eq. (35) needs at one state, in ``F_0``.

    ``N_l`` (6n x 6n), ``N_d`` (6n x nv), ``D`` (21n x 6n), ``N_tilde = D N_l N_d`` (21n x nv)
    and its time derivative ``N_tilde_dot``; ``point_masses`` the diagonal of ``M̃`` (21n, kg);
    ``gim`` ``I`` (nv x nv, eq. 35); ``convective_matrix`` ``C`` (nv x nv) and
    ``convective = C u``; ``gravity`` ``τ^G = Ñ^T f^G`` (eq. 40); ``twists`` ``t = [ω_i, v_i]``
    (6n, rad/s and m/s of ``O_i``); ``rotations`` ``Q_i`` (n x 3 x 3) and ``origins`` ``O_i``
    (n x 3, m); ``points`` positions of the point masses (7n x 3, m).
    """

    N_l: FloatArray
    N_d: FloatArray
    D: FloatArray
    N_tilde: FloatArray
    N_tilde_dot: FloatArray
    point_masses: FloatArray
    gim: FloatArray
    convective_matrix: FloatArray
    convective: FloatArray
    gravity: FloatArray
    twists: FloatArray
    rotations: FloatArray
    origins: FloatArray
    points: FloatArray


@dataclass(frozen=True, eq=False)
class DenocTrajectory:
    """Result of :meth:`DenocModel.simulate`: times ``t`` (s), joint coordinates ``q`` (nt x nq,
    quaternions normalised) and speeds ``u`` (nt x nv); ``sol`` the scipy ``solve_ivp`` result."""

    t: FloatArray
    q: FloatArray
    u: FloatArray
    sol: object = field(repr=False)


Efforts = ArrayLike | Callable[[float, FloatArray, FloatArray], ArrayLike] | None


class DenocModel:
    """A serial chain of revolute/spherical bodies for the seed-001 DeNOC point-mass solver.

    Immutable: the parameters are fixed at construction (bodies are frozen, arrays read-only).
    ``bodies`` are ordered base -> tip (the order of ``q`` and ``u``); ``gravity`` in ``F_0``
    (m/s²). ``point_masses[i]`` holds body i's seven point masses with ``centre`` = its link vector
    ``a_i`` and positions in ``B_i`` (from ``O_i``).
    """

    __slots__ = (
        "_bodies",
        "_gravity",
        "_point_masses",
        "_q_slices",
        "_v_slices",
        "_nq",
        "_nv",
        "_m_tilde",
        "_points_body",
        "_spherical",
        "_f_gravity",
        "_N_l_identity",
    )

    def __init__(self, bodies: Sequence[DenocBody], gravity: ArrayLike = (0.0, 0.0, -9.81)) -> None:
        chain = _order_chain(list(bodies))
        g = _readonly(_vec3(gravity, "model parameter 'gravity'"))
        point_masses = []
        for k, b in enumerate(chain):
            if b.link is not None:
                centre = b.link
            elif k + 1 < len(chain):
                centre = chain[k + 1].joint_position  # O_{i+1}, as in the paper
            else:
                centre = b.com
            point_masses.append(seven_point_masses(b.mass, b.com, b.inertia, centre, body=b.name))
        q_slices, v_slices = [], []
        iq = iv = 0
        for b in chain:
            q_slices.append(slice(iq, iq + b.n_q))
            v_slices.append(slice(iv, iv + b.n_v))
            iq += b.n_q
            iv += b.n_v
        object.__setattr__(self, "_bodies", tuple(chain))
        object.__setattr__(self, "_gravity", g)
        object.__setattr__(self, "_point_masses", tuple(point_masses))
        object.__setattr__(self, "_q_slices", tuple(q_slices))
        object.__setattr__(self, "_v_slices", tuple(v_slices))
        object.__setattr__(self, "_nq", iq)
        object.__setattr__(self, "_nv", iv)
        # diagonal of M̃ (eq. 32a): each m_ij repeated for its three velocity components
        m_tilde = np.repeat(np.concatenate([pm.masses for pm in point_masses]), 3)
        object.__setattr__(self, "_m_tilde", _readonly(m_tilde))
        # d_ij = a_i + r_ij in B_i (sec. III): point-mass positions from O_i
        object.__setattr__(
            self, "_points_body", tuple(_readonly(pm.positions) for pm in point_masses)
        )
        object.__setattr__(self, "_spherical", tuple(b.joint == "spherical" for b in chain))
        object.__setattr__(self, "_f_gravity", _readonly(m_tilde * np.tile(g, 7 * len(chain))))
        n = len(chain)
        N_l_identity = np.zeros((6 * n, 6 * n))
        for i in range(n):
            for j in range(i + 1):
                N_l_identity[6 * i : 6 * i + 3, 6 * j : 6 * j + 3] = np.eye(3)
                N_l_identity[6 * i + 3 : 6 * i + 6, 6 * j + 3 : 6 * j + 6] = np.eye(3)
        object.__setattr__(self, "_N_l_identity", _readonly(N_l_identity))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("DenocModel is immutable")

    # -- structure ----------------------------------------------------------------------------

    @property
    def bodies(self) -> tuple[DenocBody, ...]:
        """The bodies, base -> tip."""
        return self._bodies

    @property
    def names(self) -> list[str]:
        """Body names, base -> tip."""
        return [b.name for b in self._bodies]

    @property
    def gravity(self) -> FloatArray:
        """Gravity in ``F_0`` (m/s²)."""
        return self._gravity

    @property
    def point_masses(self) -> tuple[SevenPointMasses, ...]:
        """Seven point masses per body, positions in ``B_i`` from ``O_i`` (m)."""
        return self._point_masses

    @property
    def nq(self) -> int:
        """Size of ``q``."""
        return self._nq

    @property
    def nv(self) -> int:
        """Size of ``u`` (degrees of freedom)."""
        return self._nv

    @property
    def n_bodies(self) -> int:
        """Number of bodies n."""
        return len(self._bodies)

    @property
    def total_mass(self) -> float:
        """Σ m_i (kg)."""
        return float(sum(b.mass for b in self._bodies))

    def q_slice(self, name: str) -> slice:
        """Slice of body ``name``'s joint coordinates in ``q``."""
        return self._q_slices[self._index(name)]

    def v_slice(self, name: str) -> slice:
        """Slice of body ``name``'s generalized speeds in ``u``."""
        return self._v_slices[self._index(name)]

    def _index(self, name: str) -> int:
        for i, b in enumerate(self._bodies):
            if b.name == name:
                return i
        raise KeyError(f"no body '{name}' (bodies: {self.names})")

    def neutral_configuration(self) -> FloatArray:
        """``q`` with every angle 0 and every quaternion ``[1, 0, 0, 0]``."""
        q = np.zeros(self._nq)
        for sl, sph in zip(self._q_slices, self._spherical, strict=True):
            if sph:
                q[sl.start] = 1.0
        return q

    # -- state checks -------------------------------------------------------------------------

    def _check_q(self, q: ArrayLike) -> FloatArray:
        """``q`` as floats with every quaternion normalised; rejects a wrong size or zero norm."""
        q = np.array(q, dtype=float).reshape(-1)
        if q.size != self._nq:
            raise DenocError(f"q: expected {self._nq} joint coordinates, got {q.size}")
        if not np.all(np.isfinite(q)):
            raise DenocError("q: not finite")
        for b, sl, sph in zip(self._bodies, self._q_slices, self._spherical, strict=True):
            if sph:
                n = float(np.linalg.norm(q[sl]))
                if n < 1e-12:
                    raise DenocError(f"body '{b.name}': zero quaternion in q[{sl.start}:{sl.stop}]")
                q[sl] /= n
        return q

    def _check_u(self, u: ArrayLike) -> FloatArray:
        u = np.array(u, dtype=float).reshape(-1)
        if u.size != self._nv:
            raise DenocError(f"u: expected {self._nv} generalized speeds, got {u.size}")
        if not np.all(np.isfinite(u)):
            raise DenocError("u: not finite")
        return u

    # -- kinematics ---------------------------------------------------------------------------

    def _poses(self, q: FloatArray) -> tuple[FloatArray, FloatArray, list[FloatArray]]:
        """``Q_i`` (n x 3 x 3), ``O_i`` (n x 3, in F_0) and the joint direction matrices ``E_i``
        (3 x nv_i in F_0: ``e_i`` for a revolute joint, ``L_i = Q_i`` for a spherical one)."""
        n = self.n_bodies
        Qs = np.empty((n, 3, 3))
        Os = np.empty((n, 3))
        Es: list[FloatArray] = []
        Qp, rp = np.eye(3), np.zeros(3)
        for i, (b, sl) in enumerate(zip(self._bodies, self._q_slices, strict=True)):
            r = rp + Qp @ b.joint_position
            if b.joint == "revolute":
                Q = Qp @ b.joint_rotation @ axis_angle_matrix(b.axis, float(q[sl.start]))
                E = (Q @ b.axis).reshape(3, 1)  # e_i of p_i (eq. 29)
            else:
                Q = Qp @ b.joint_rotation @ quaternion_matrix(q[sl])
                E = Q  # L_i of eq. (37) for angular-velocity speeds: ω_i = ω_{i-1} + Q_i u_i
            Qs[i], Os[i] = Q, r
            Es.append(E)
            Qp, rp = Q, r
        return Qs, Os, Es

    def body_poses(self, q: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """``(Q, O)``: DCMs ``B_i -> F_0`` (n x 3 x 3) and joint origins ``O_i`` (n x 3, m)."""
        Qs, Os, _ = self._poses(self._check_q(q))
        return Qs, Os

    def point_positions(self, q: ArrayLike) -> FloatArray:
        """Positions of the 7n point masses in ``F_0`` (7n x 3, m), body by body."""
        Qs, Os, _ = self._poses(self._check_q(q))
        return np.vstack(
            [O + pts @ Q.T for Q, O, pts in zip(Qs, Os, self._points_body, strict=True)]
        )

    # -- DeNOC matrices and eq. (35) ----------------------------------------------------------

    def terms(self, q: ArrayLike, u: ArrayLike) -> DenocTerms:
        """All the matrices of eqs. (22)-(39) and the terms of eq. (35) at ``(q, u)``."""
        q = self._check_q(q)
        u = self._check_u(u)
        n, nv = self.n_bodies, self._nv
        Qs, Os, Es = self._poses(q)
        # N_d (eq. 28): block diagonal of p_i = [e_i; 0] (eq. 29) / [L_i; O] (eq. 37)
        N_d = np.zeros((6 * n, nv))
        for i, (E, sl) in enumerate(zip(Es, self._v_slices, strict=True)):
            N_d[6 * i : 6 * i + 3, sl] = E
        # N_l (eq. 28): A_ij = [[1, O], [a_ij x 1, 1]] with a_ij = O_j - O_i (the product of the
        # A_{k,k-1} of eq. 29, a_{k,k-1} = -a_{k-1})
        N_l = self._N_l_identity.copy()  # the 1 blocks of every A_ij, j <= i
        for i in range(n):
            for j in range(i):
                N_l[6 * i + 3 : 6 * i + 6, 6 * j : 6 * j + 3] = skew(Os[j] - Os[i])
        # generalized twist t = N_l N_d u (eqs. 24, 27)
        t = N_l @ (N_d @ u)
        omegas = t.reshape(n, 6)[:, 0:3]
        vels = t.reshape(n, 6)[:, 3:6]
        # D (eqs. 22, 26): rows [-d_ij x 1, 1], d_ij in F_0 = Q_i [d_ij]_i; and its derivative,
        # d(d_ij)/dt = ω_i x d_ij (sec. V.B)
        D = np.zeros((21 * n, 6 * n))
        D_dot = np.zeros((21 * n, 6 * n))
        points = np.empty((7 * n, 3))
        eye7 = np.tile(np.eye(3), (7, 1))  # the 1 column of D_i
        for i in range(n):
            d = self._points_body[i] @ Qs[i].T  # d_ij in F_0, 7 x 3
            points[7 * i : 7 * i + 7] = Os[i] + d
            d_dot = d @ skew(omegas[i]).T  # rows ω_i x d_ij
            rows = slice(21 * i, 21 * i + 21)
            D[rows, 6 * i : 6 * i + 3] = -_skew_stack(d)
            D[rows, 6 * i + 3 : 6 * i + 6] = eye7
            D_dot[rows, 6 * i : 6 * i + 3] = -_skew_stack(d_dot)
        # Ṅ_l: dA_ij/dt = [[O, O], [(v_j - v_i) x 1, O]]
        N_l_dot = np.zeros((6 * n, 6 * n))
        for i in range(n):
            for j in range(i):
                N_l_dot[6 * i + 3 : 6 * i + 6, 6 * j : 6 * j + 3] = skew(vels[j] - vels[i])
        # Ṅ_d (eq. 39): ė_i = ω_i x e_i, L̇_i = (ω_i x 1) L_i
        N_d_dot = np.zeros((6 * n, nv))
        for i, (E, sl) in enumerate(zip(Es, self._v_slices, strict=True)):
            N_d_dot[6 * i : 6 * i + 3, sl] = skew(omegas[i]) @ E
        # Ñ = D N_l N_d (eq. 27) and dÑ/dt (sec. V.B)
        N = N_l @ N_d
        N_tilde = D @ N
        N_tilde_dot = D_dot @ N + D @ (N_l_dot @ N_d) + D @ (N_l @ N_d_dot)
        # eq. (35)
        MN = self._m_tilde[:, None] * N_tilde
        gim = N_tilde.T @ MN
        gim = 0.5 * (gim + gim.T)
        C = N_tilde.T @ (self._m_tilde[:, None] * N_tilde_dot)
        # gravity (eq. 40): f^G = [m_ij g], constant in F_0
        f_g = self._f_gravity
        return DenocTerms(
            N_l=N_l,
            N_d=N_d,
            D=D,
            N_tilde=N_tilde,
            N_tilde_dot=N_tilde_dot,
            point_masses=self._m_tilde,
            gim=gim,
            convective_matrix=C,
            convective=C @ u,
            gravity=N_tilde.T @ f_g,
            twists=t,
            rotations=Qs,
            origins=Os,
            points=points,
        )

    def gim(self, q: ArrayLike) -> FloatArray:
        """Generalized inertia matrix ``I = Ñ^T M̃ Ñ`` (eq. 35), nv x nv (kg m² / kg m / kg)."""
        return self.terms(q, np.zeros(self._nv)).gim

    def convective_terms(self, q: ArrayLike, u: ArrayLike) -> FloatArray:
        """Convective inertia terms ``C u`` with ``C = Ñ^T M̃ dÑ/dt`` (eq. 35), nv (N m or N)."""
        return self.terms(q, u).convective

    def _efforts(self, efforts: Efforts, t: float, q: FloatArray, u: FloatArray) -> FloatArray:
        if efforts is None:
            return np.zeros(self._nv)
        val = efforts(t, q, u) if callable(efforts) else efforts
        tau = np.array(val, dtype=float).reshape(-1)
        if tau.size != self._nv:
            raise DenocError(
                f"joint efforts: expected {self._nv} values (one per generalized speed, "
                f"bodies {self.names}), got {tau.size}"
            )
        if not np.all(np.isfinite(tau)):
            raise DenocError("joint efforts: not finite")
        return tau

    def generalized_forces(
        self, q: ArrayLike, u: ArrayLike, t: float = 0.0, efforts: Efforts = None
    ) -> FloatArray:
        """``τ = Ñ^T f̃`` (eq. 35): gravity on the point masses (eq. 40) plus the joint efforts.

        ``efforts``: ``None``, an array (nv) or ``efforts(t, q, u) -> array``; a revolute joint's
        torque about its axis, a spherical joint's torque (parent on child) in ``B_i`` (N m). A
        joint torque pair is the generalized force of its own speed, so it adds directly.
        """
        q = self._check_q(q)
        u = self._check_u(u)
        return self.terms(q, u).gravity + self._efforts(efforts, t, q, u)

    def accelerations(
        self, q: ArrayLike, u: ArrayLike, t: float = 0.0, efforts: Efforts = None
    ) -> FloatArray:
        """Generalized accelerations ``u̇ = I^{-1} (τ - C u)`` (eq. 34): angle accelerations of the
        revolute joints (rad/s²) and ``d/dt`` of the spherical joints' relative angular velocity
        components in ``B_i`` (rad/s²)."""
        q = self._check_q(q)
        u = self._check_u(u)
        T = self.terms(q, u)
        tau = T.gravity + self._efforts(efforts, t, q, u)
        try:
            factor = cho_factor(T.gim, lower=True)
        except np.linalg.LinAlgError:
            self._singular_gim(T.gim)
        # a (numerically) singular GIM may pass Cholesky with a round-off pivot: refuse it rather
        # than return accelerations of the order of 1/eps
        if np.min(np.diag(factor[0]) ** 2) <= GIM_PIVOT_RTOL * float(np.max(np.diag(T.gim))):
            self._singular_gim(T.gim)
        return cho_solve(factor, tau - T.convective)

    def _singular_gim(self, gim: FloatArray) -> NoReturn:
        """Raise a :class:`DenocError` naming the body whose speed spans the GIM's null space."""
        w, V = np.linalg.eigh(gim)
        k = int(np.argmax(np.abs(V[:, 0])))
        body = next(
            b.name for b, sl in zip(self._bodies, self._v_slices, strict=True) if sl.stop > k
        )
        raise DenocError(
            f"the generalized inertia matrix (eq. 35) is singular or not positive definite at "
            f"this configuration: smallest eigenvalue {w[0]:.3g} (largest {w[-1]:.3g}), mostly "
            f"along generalized speed {k} (body '{body}'); a direction of motion carries no (or "
            "negative) inertia, e.g. a point mass on a spherical joint"
        )

    def coordinate_rates(self, q: ArrayLike, u: ArrayLike) -> FloatArray:
        """``q̇`` from ``(q, u)``: ``θ̇ = u`` (revolute), ``½ q ⊗ [0, u]`` (spherical)."""
        q = self._check_q(q)
        u = self._check_u(u)
        return self._qdot(q, q, u)

    def _qdot(self, q_raw: FloatArray, q: FloatArray, u: FloatArray) -> FloatArray:
        qd = np.empty(self._nq)
        for sl_q, sl_v, sph in zip(self._q_slices, self._v_slices, self._spherical, strict=True):
            if sph:
                raw = q_raw[sl_q]
                # plus λ (1 - |q|²) q with λ = 1/s: pulls the integrated quaternion back to the
                # unit sphere, without changing the attitude it encodes
                qd[sl_q] = quaternion_rate(q[sl_q], u[sl_v]) + (1.0 - float(raw @ raw)) * raw
            else:
                qd[sl_q] = u[sl_v]
        return qd

    # -- integration --------------------------------------------------------------------------

    def rhs(self, t: float, y: ArrayLike, efforts: Efforts = None) -> FloatArray:
        """ODE right-hand side for ``y = [q (nq), u (nv)]``: ``[q̇, u̇]``."""
        y = np.asarray(y, dtype=float)
        q_raw = y[: self._nq]
        q = self._check_q(q_raw)
        u = y[self._nq :]
        return np.concatenate([self._qdot(q_raw, q, u), self.accelerations(q, u, t, efforts)])

    def simulate(
        self,
        t_final: float,
        q0: ArrayLike,
        u0: ArrayLike,
        *,
        t_eval: ArrayLike | None = None,
        t0: float = 0.0,
        efforts: Efforts = None,
        method: str = "DOP853",
        rtol: float = 1e-10,
        atol: float = 1e-12,
        **kwargs: object,
    ) -> DenocTrajectory:
        """Integrate :meth:`rhs` with ``scipy.integrate.solve_ivp`` from ``(q0, u0)`` at ``t0`` to
        ``t_final`` (s). Raises :class:`DenocError` if the integrator fails."""
        q0 = self._check_q(q0)
        u0 = self._check_u(u0)
        sol = solve_ivp(
            lambda t, y: self.rhs(t, y, efforts),
            (t0, t_final),
            np.concatenate([q0, u0]),
            method=method,
            rtol=rtol,
            atol=atol,
            t_eval=t_eval,
            **kwargs,
        )
        if not sol.success:
            raise DenocError(f"integration failed: {sol.message}")
        q = sol.y[: self._nq].T.copy()
        for sl, sph in zip(self._q_slices, self._spherical, strict=True):
            if sph:
                q[:, sl] /= np.linalg.norm(q[:, sl], axis=1, keepdims=True)
        return DenocTrajectory(t=sol.t, q=q, u=sol.y[self._nq :].T.copy(), sol=sol)

    # -- invariants ---------------------------------------------------------------------------

    def energy(self, q: ArrayLike, u: ArrayLike) -> tuple[float, float]:
        """Kinetic ``½ u^T I u`` and potential ``-Σ m_ij g·p_ij`` energy (J, potential zero at the
        origin of ``F_0``), both from the point masses."""
        u = self._check_u(u)
        T = self.terms(q, u)
        kinetic = 0.5 * float(u @ T.gim @ u)
        potential = -float(T.point_masses.reshape(-1, 3)[:, 0] @ (T.points @ self._gravity))
        return kinetic, potential

    def angular_momentum(
        self, q: ArrayLike, u: ArrayLike, point: ArrayLike = (0.0, 0.0, 0.0)
    ) -> FloatArray:
        """Angular momentum ``Σ m_ij (p_ij - point) x v_ij`` about ``point`` (in ``F_0``), kg m²/s,
        from the point masses and their velocities ``ṽ = Ñ u`` (eq. 27)."""
        u = self._check_u(u)
        T = self.terms(q, u)
        v = (T.N_tilde @ u).reshape(-1, 3)
        m = T.point_masses.reshape(-1, 3)[:, 0]
        r = T.points - _vec3(point, "point")
        return (m[:, None] * np.cross(r, v)).sum(axis=0)


# ------------------------------------------------------------------------------------------------
# seed 001, section V: the spatial solid pendulum
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PendulumParameters:
    """The solid pendulum of seed 001 sec. V: a rod of mass ``m`` (kg), length ``a`` (m) and
    diameter ``d`` (m) on a spherical joint at ``O_1`` (origin of ``F_0``), gravity ``g`` (m/s²)
    along ``-Z_0``. Body frame ``B_1`` at ``O_1``, ``X`` along the rod, so that at zero ZYZ angles
    the rod lies along ``X_0`` (Fig. 3); ``O_2`` (the free end, centre of the point masses) is
    at ``a_1 = [a, 0, 0]`` in ``B_1``."""

    m: float = 2.512
    a: float = 1.0
    d: float = 0.02
    g: float = 9.81

    @property
    def com_from_o2(self) -> FloatArray:
        """Mass centre from ``O_2`` in ``B_1`` axes: ``(x̄, ȳ, z̄) = (-a/2, 0, 0)`` (m)."""
        return np.array([-self.a / 2.0, 0.0, 0.0])

    @property
    def inertia_o2(self) -> FloatArray:
        """The paper's inertia about ``O_2``: ``I_xx = m d²/8``, ``I_yy = I_zz = m d²/16 +
        m a²/3``, no products (kg m²)."""
        m, a, d = self.m, self.a, self.d
        iyy = m * d**2 / 16.0 + m * a**2 / 3.0
        return np.diag([m * d**2 / 8.0, iyy, iyy])

    @property
    def inertia_com(self) -> FloatArray:
        """Inertia about the mass centre (parallel axes from :attr:`inertia_o2`), kg m²."""
        c = self.com_from_o2
        return self.inertia_o2 - self.m * (float(c @ c) * np.eye(3) - np.outer(c, c))

    def point_masses(self) -> SevenPointMasses:
        """The seven point masses of sec. V (centre ``O_2``, frame ``O_2 X_2 Y_2 Z_2``); the paper
        prints 0.628, -0.543, 1.171, 0, 1.171, -0.543, 0.628 kg."""
        return seven_point_masses(self.m, self.com_from_o2, self.inertia_com, body="pendulum")


#: Initial ZYZ angles (deg) and rates of sec. V.D. The paper says the rates of the second case
#: were "taken as zeros, i.e., θ̇_1(0) = 1 m/s", which is self-contradictory; zero is used here
#: and :func:`pendulum_initial_state` takes explicit rates (rad/s) for a spinning start.
PENDULUM_CASES: dict[str, tuple[tuple[float, float, float], tuple[float, float, float]]] = {
    "planar": ((90.0, 90.0, 90.0), (0.0, 0.0, 0.0)),
    "spatial": ((90.0, 45.0, 45.0), (0.0, 0.0, 0.0)),
}


def spherical_pendulum(params: PendulumParameters | None = None) -> DenocModel:
    """The DeNOC model of the seed-001 spatial solid pendulum (one spherical joint)."""
    p = PendulumParameters() if params is None else params
    body = DenocBody(
        name="pendulum",
        mass=p.m,
        inertia=p.inertia_com,
        com=(p.a / 2.0, 0.0, 0.0),
        joint="spherical",
        link=(p.a, 0.0, 0.0),
    )
    return DenocModel([body], gravity=(0.0, 0.0, -p.g))


def state_from_zyz(
    angles: ArrayLike, rates: ArrayLike = (0.0, 0.0, 0.0)
) -> tuple[FloatArray, FloatArray]:
    """Quaternion ``[w, x, y, z]`` and body-frame angular velocity (rad/s) of a spherical joint
    from ZYZ angles ``[φ, θ, ψ]`` (rad, eq. 36) and their rates (rad/s): ``ω = L θ̇`` in the outer
    frame (eq. 38), ``u = Q^T ω``."""
    phi, theta, psi = _vec3(angles, "ZYZ angles")
    Q = zyz_matrix(phi, theta, psi)
    omega = zyz_rate_matrix(phi, theta) @ _vec3(rates, "ZYZ rates")
    return quaternion_from_matrix(Q), Q.T @ omega


def pendulum_initial_state(
    case: str = "planar", zyz_rates: ArrayLike | None = None
) -> tuple[FloatArray, FloatArray]:
    """``(q0, u0)`` of the pendulum for a case of :data:`PENDULUM_CASES` (ZYZ angles in deg);
    ``zyz_rates`` (rad/s) overrides the case's ZYZ angle rates."""
    if case not in PENDULUM_CASES:
        raise DenocError(f"unknown pendulum case {case!r}; cases: {sorted(PENDULUM_CASES)}")
    angles, rates = PENDULUM_CASES[case]
    return state_from_zyz(np.radians(angles), rates if zyz_rates is None else zyz_rates)


__all__ = [
    "DenocBody",
    "DenocError",
    "DenocModel",
    "DenocTerms",
    "DenocTrajectory",
    "EQUIMOMENTAL_MATRIX",
    "JOINT_TYPES",
    "PENDULUM_CASES",
    "PendulumParameters",
    "SevenPointMasses",
    "VERTEX_SIGNS",
    "axis_angle_matrix",
    "pendulum_initial_state",
    "quaternion_from_matrix",
    "quaternion_matrix",
    "quaternion_rate",
    "second_moment",
    "seven_point_masses",
    "spherical_pendulum",
    "state_from_zyz",
    "zyz_matrix",
    "zyz_rate_matrix",
]
