"""Riccati transfer-matrix method, new version (seed 002), as an independent O(n) reference solver.

Rui, Bestle, Wang et al., *A new version of the Riccati transfer matrix method for multibody
systems consisting of chain and branch bodies*, Multibody Syst. Dyn. 49, 337-354 (2020) ("seed 002"
below). Equation numbers below are the paper's. Nothing here uses the TITOP
blocks, the engine or their dynamics; only :func:`titopfmu.spatial.algebra.skew` and the project's
error base class are shared.

What is modelled
----------------
A tree of rigid bodies hanging from the ground (one or more roots), each body joined to its parent
(or to a fixed point of the ground) by one smooth hinge: a ball-and-socket hinge (3 dof) in the
*spatial* model, a revolute hinge about z (1 dof) in the *planar* model, which is the seed's
reduction of the spatial method to the state (35). Gravity is the only applied force
(``f_C = m g``, ``m_C = 0`` in eq. 5).

Conventions (SI units)
----------------------
* Each body has a frame with origin at its hinge point O (the point where it hangs from its
  parent) -- in the seed's transfer direction (tips to root) O is the body's *output* end. Body
  parameters are in that frame: ``com`` = vector O -> C, ``inertia`` at C.
* ``joint_point``: where the hinge sits on the parent, vector from the parent's O, parent frame
  (for a root: the fixed point, inertial frame). ``joint_rotation``: the body frame relative to
  the parent frame (inertial for a root) at zero hinge coordinate (DCM; planar: an angle, rad).
* Hinge coordinates (the ODE state), one hinge per body, in the order the bodies were given:
  spatial ``y = [quaternions (n, 4) [w, x, y, z], ω (n, 3)]`` where the quaternion gives the body
  frame relative to its hinge reference (``R_parent->body = joint_rotation @ R(quat)``, vectors of
  the body frame mapped into the parent frame) and ω is the angular velocity of the body relative
  to its parent in the body frame (rad/s). Planar ``y = [θ (n), θ̇ (n)]``: relative angles (rad)
  about z. These are Pinocchio's ``JointModelSpherical`` / ``JointModelRZ`` coordinates.
* The state vector of a connection point (eq. 1), all in the inertial frame:
  ``z = [r̈ (3), Ω̇ (3), m (3), q (3), 1]``: acceleration of the point (m/s²), angular acceleration
  of the element on the input side (rad/s²), internal moment (N m) and force (N). With the seed's
  sign convention, q at a connection is the force the tip-side element exerts on the root-side one.

The method (how the seed's steps are used)
------------------------------------------
* Body transfer matrix from its input end I (= the attachment point of its first child, or O for
  a tip body) to its output end O: eqs. (3)-(5); multi-input bodies: eqs. (6)-(9), inputs
  I_2..I_L at ``r_{I1 Ik}``.
* Riccati partition (20): known-at-the-tip ``z_a = [m; q]``, unknown ``z_b = [r̈; Ω̇]``; free tips
  give ``S_1 = 0, e_1 = 0`` (eq. 34); each body advances ``S_i, e_i`` with eqs. (24), (29), (30)
  (for a body ``T_21 = 0``, so ``P_i = T_22^{-1}``).
* Smooth hinge: accelerations and forces pass, the moment vanishes (Sect. 2.2(3)). The hinge step
  imposes ``m = 0`` on the Riccati relation (31) at the hinge input,
  ``m = S_mr r̈ + S_mΩ Ω̇ + e_m = 0``, which yields the tip-side body's angular acceleration
  ``Ω̇ = -S_mΩ^{-1}(S_mr r̈ + e_m)`` (kept for the backward sweep) and the hinge-output relation
  ``q = Ŝ r̈ + ê`` with ``Ŝ = S_qr - S_qΩ S_mΩ^{-1} S_mr``. This is where this implementation
  departs from the printed eq. (10): there the hinge's Ω̇ row comes from the *outboard* body's
  moment row, which enforces zero moment at that body's output instead of at the hinge. Composed
  over a chain this leaves the first hinge of every subchain unconstrained; the m rows of S vanish
  after a hinge and a body, so in 3-D the matrix T21 S + T22 of eq. (24) at the next hinge is
  singular (rank 5; checked numerically), and the multi-hinge equation (59) of Fig. 2 is singular
  too (the m_O row of ``U_7 Û_8`` vanishes identically). Eqs. (8), (12), (13), (16) are images
  missing from the seed's text, so the multi-hinge is rebuilt here from eqs. (7), (11), (14),
  (15).
* Multi-input bodies (Algorithm B): the Riccati relation of every input subchain (eq. 31 at its
  terminal end) is combined with the extended body matrix (8) and the geometric equations
  (14)-(15) (``r̈_Ik`` from ``r̈_I1``, ``Ω̇`` and ``Ω``; ``m_Ik = 0``) *locally*, giving a Riccati
  relation at the multi-input body's output; the sweep then continues down the output chain. For
  a single branch point this is block elimination of the overall transfer equation (56)-(59); for
  nested branches it keeps the whole solve O(n).
* Root (A4): at the fixed hinge ``r̈ = 0`` and ``m = 0`` give the root's Ω̇ and the reaction q.
  Backward sweep (A5/B4): eq. (33) (``r̈_I = r̈_O - E_1 Ω̇ - E_2``) and eq. (14) for the other
  inputs give every hinge acceleration, and the stored hinge relations every Ω̇.

One solve is two sequential sweeps over the bodies (one small LAPACK solve and a few 6×7 products
per body forward, one 4×4 product per body backward) plus vectorised numpy work (transfer
coefficients, path sums of the kinematics), so its cost is linear in the number of bodies: about
10 µs per body spatial and 8.5 µs planar on the seed's Fig. 1 system (fitted exponent 0.98 from
1,000 to 10,000 bodies; 100,002 dof in 0.35 s), plus ~0.25 ms per call; see
``scripts/bench_scaling.py``.

Limitations (rejected with :class:`RiccatiParameterError` / :class:`RiccatiError`): no floating
root, no loops, no applied forces other than gravity, only ball (spatial) and revolute (planar)
hinges; a body whose inertia about its hinge point is singular (a slender rod or a point mass on a
ball hinge: its spin is undetermined) is refused.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.integrate import solve_ivp
from scipy.linalg.lapack import dgesv

from ..blocks.base import TitopError
from ..spatial.algebra import skew

FloatArray = NDArray[np.float64]

#: Rows/columns of the spatial state (1) kept by the planar reduction (35):
#: ``[ẍ, ÿ, Ω̇_z, m_z, q_x, q_y, 1]`` (the seed's 1, 2, 6, 9, 10, 11, 13, zero-based).
PLANAR_REDUCTION = (0, 1, 5, 8, 9, 10, 12)

#: Default gravity (m/s², inertial frame): y is up, as in the seed's Fig. 2.
DEFAULT_GRAVITY = (0.0, -9.81, 0.0)

_I3 = np.eye(3)
_ORTHO_TOL = 1e-9


# ------------------------------------------------------------------------------------------------
# errors
# ------------------------------------------------------------------------------------------------


class RiccatiError(TitopError):
    """The Riccati reference solver cannot handle this model or state."""


class RiccatiParameterError(RiccatiError):
    """A body parameter the solver cannot handle. Names the body and the parameter."""

    def __init__(self, body: str, parameter: str, message: str) -> None:
        self.body = body
        self.parameter = parameter
        super().__init__(f"body '{body}', parameter '{parameter}': {message}")


# ------------------------------------------------------------------------------------------------
# the seed's transfer matrices, literally (eqs. 4-9, 20-30); used for checks and documentation
# ------------------------------------------------------------------------------------------------


def _skew_batch(v: FloatArray) -> FloatArray:
    """Skew matrices of a stack of 3-vectors: ``(..., 3) -> (..., 3, 3)``, ``skew(v) w = v × w``."""
    out = np.zeros(v.shape[:-1] + (3, 3))
    out[..., 0, 1] = -v[..., 2]
    out[..., 0, 2] = v[..., 1]
    out[..., 1, 0] = v[..., 2]
    out[..., 1, 2] = -v[..., 0]
    out[..., 2, 0] = -v[..., 1]
    out[..., 2, 1] = v[..., 0]
    return out


def _cross(a: FloatArray, b: FloatArray) -> FloatArray:
    """``a × b`` for stacks of 3-vectors (broadcast), cheaper than ``np.cross`` on small stacks."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def _ww(omega: FloatArray, r: FloatArray) -> FloatArray:
    """``Ω̃ Ω̃ r = Ω × (Ω × r)`` for stacks of vectors ``(..., 3)``."""
    wr = (omega * r).sum(axis=-1)[..., None]
    ww = (omega * omega).sum(axis=-1)[..., None]
    return omega * wr - r * ww


def transfer_coefficients(
    mass: ArrayLike,
    inertia_I: ArrayLike,
    r_IO: ArrayLike,
    r_IC: ArrayLike,
    omega: ArrayLike,
    f_C: ArrayLike,
    m_C: ArrayLike | None = None,
) -> dict[str, FloatArray]:
    """The abbreviations E_1..E_9 of eq. (5) for one body or a stack of bodies.

    ``mass`` (kg), ``inertia_I`` = ``A_I J'_I A_I^T`` the inertia about the input end I in the
    inertial frame (kg m²), ``r_IO``, ``r_IC`` (m), ``omega`` = Ω_I (rad/s), external force ``f_C``
    (N) at C and moment ``m_C`` (N m), all in the inertial frame. Leading stack dimensions are
    broadcast. Returns ``{"E1": ..., ..., "E9": ...}`` (3×3 matrices or 3-vectors).
    """
    m = np.asarray(mass, dtype=float)[..., None, None]
    J = np.asarray(inertia_I, dtype=float)
    rIO = np.asarray(r_IO, dtype=float)
    rIC = np.asarray(r_IC, dtype=float)
    w = np.asarray(omega, dtype=float)
    f = np.asarray(f_C, dtype=float)
    mc = np.zeros_like(f) if m_C is None else np.asarray(m_C, dtype=float)
    sk_IO = _skew_batch(rIO)
    sk_IC = _skew_batch(rIC)
    eye = np.broadcast_to(_I3, sk_IO.shape)
    Jw = np.einsum("...ij,...j->...i", J, w)
    return {
        "E1": -sk_IO,
        "E2": _ww(w, rIO),
        "E3": -m * eye,
        "E4": m * sk_IC,
        "E5": f - m[..., 0] * _ww(w, rIC),
        "E6": sk_IO,
        "E7": m * sk_IC,
        "E8": J,
        # A_I ω̃_I J'_I ω_I = Ω̃ (A J' A^T) Ω
        "E9": -mc - _cross(rIC, f) + _cross(w, Jw),
    }


def transfer_matrix(
    mass: float,
    inertia_I: ArrayLike,
    r_IO: ArrayLike,
    r_IC: ArrayLike,
    omega: ArrayLike,
    f_C: ArrayLike,
    m_C: ArrayLike | None = None,
    r_I1Ik: Sequence[ArrayLike] = (),
) -> FloatArray:
    """Body transfer matrix U_i of eq. (4), or the extended U_{i,I1-IL} of eq. (8) when the
    vectors ``r_I1Ik`` (m, inertial) to the further inputs I_2..I_L are given.

    Maps the input state (1) -- extended as in eq. (6) by ``[m_Ik, q_Ik]`` for k = 2..L, placed
    before the final 1 -- to the output state (1): 13 rows, ``13 + 6 (L - 1)`` columns. Arguments as
    in :func:`transfer_coefficients`. For the planar case keep rows and columns
    :data:`PLANAR_REDUCTION` (eq. 35).
    """
    E = transfer_coefficients(mass, inertia_I, r_IO, r_IC, omega, f_C, m_C)
    extra = [np.asarray(r, dtype=float).reshape(3) for r in r_I1Ik]
    U = np.zeros((13, 13 + 6 * len(extra)))
    U[0:3, 0:3] = _I3
    U[0:3, 3:6] = E["E1"]
    U[3:6, 3:6] = _I3
    U[6:9, 0:3] = E["E6"] @ E["E3"] + E["E7"]
    U[6:9, 3:6] = E["E6"] @ E["E4"] + E["E8"]
    U[6:9, 6:9] = _I3
    U[6:9, 9:12] = E["E6"]
    U[9:12, 0:3] = E["E3"]
    U[9:12, 3:6] = E["E4"]
    U[9:12, 9:12] = _I3
    for k, r in enumerate(extra):  # eq. (8)-(9): moments pass, forces act at I_k (E_Ik = -r̃)
        c = 12 + 6 * k
        U[6:9, c : c + 3] = _I3
        U[6:9, c + 3 : c + 6] = E["E6"] - skew(r)
        U[9:12, c + 3 : c + 6] = _I3
    U[0:3, -1] = E["E2"]
    U[6:9, -1] = E["E6"] @ E["E5"] + E["E9"]
    U[9:12, -1] = E["E5"]
    U[12, -1] = 1.0
    return U


def riccati_step(
    S: ArrayLike,
    e: ArrayLike,
    U: ArrayLike,
    a: Sequence[int],
    b: Sequence[int],
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """One Riccati step through an element with transfer matrix ``U`` (last column: the 1).

    ``a``/``b``: indices of the known/unknown state variables in U's rows and columns. Splits U as
    in eq. (20), then ``P = (T21 S + T22)^{-1}``, ``q = -(T21 e + f_b)`` (eq. 24),
    ``S' = (T11 S + T12) P`` (29), ``e' = T11 e + f_a + S' q`` (30). Returns ``(S', e', P, q)``.
    """
    U = np.asarray(U, dtype=float)
    S = np.asarray(S, dtype=float)
    e = np.asarray(e, dtype=float)
    a, b = list(a), list(b)
    T11, T12 = U[np.ix_(a, a)], U[np.ix_(a, b)]
    T21, T22 = U[np.ix_(b, a)], U[np.ix_(b, b)]
    fa, fb = U[a, -1], U[b, -1]
    P = np.linalg.inv(T21 @ S + T22)
    q = -(T21 @ e + fb)
    S1 = (T11 @ S + T12) @ P
    return S1, T11 @ e + fa + S1 @ q, P, q


# ------------------------------------------------------------------------------------------------
# model
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Body:
    """A rigid body and the hinge by which it hangs from its parent (or from the ground).

    ``mass`` (kg); ``inertia`` at the centre of mass in the body frame (kg m²): a 3×3 symmetric
    positive semi-definite matrix (spatial) or the scalar J_zz (planar); ``com``: vector from the
    hinge point O to the centre of mass (m, body frame); ``parent``: name of the parent body, or
    ``None`` for a body hinged to the ground; ``joint_point``: the hinge on the parent, vector from
    the parent's O (m, parent frame) -- for a root, the fixed point (m, inertial frame);
    ``joint_rotation``: body frame w.r.t. the parent (or inertial) frame at zero hinge coordinate,
    a DCM (spatial; ``[v]_parent = R [v]_body``) or an angle about z (rad, planar); ``None`` is
    the identity. Planar vectors may have 2 components (or 3 with z = 0).
    """

    name: str
    mass: float
    inertia: Any
    com: Any
    parent: str | None = None
    joint_point: Any = (0.0, 0.0, 0.0)
    joint_rotation: Any = None


#: Alias for exports next to other reference solvers' body types.
RiccatiBody = Body


class RiccatiSolution(NamedTuple):
    """Everything one solve produces, bodies in the model's order, inertial frame unless noted.

    ``hinge_acc``: the hinge-coordinate accelerations (spatial ``(n, 3)``: ω̇ of the body relative
    to its parent, body frame, rad/s²; planar ``(n,)``: θ̈, rad/s²). ``omega_dot`` ``(n, 3)``:
    absolute angular accelerations Ω̇ (rad/s²). ``acc_hinge`` ``(n, 3)``: acceleration r̈ of each
    body's hinge point O (m/s²). ``force`` ``(n, 3)``: the internal force q at each hinge (N),
    i.e. the force the body (with its subtree) exerts on its parent or on the ground.
    ``rotation`` ``(n, 3, 3)``: body-to-inertial DCMs; ``omega`` ``(n, 3)``: Ω (rad/s).
    """

    hinge_acc: FloatArray
    omega_dot: FloatArray
    acc_hinge: FloatArray
    force: FloatArray
    rotation: FloatArray
    omega: FloatArray


class RiccatiExample(NamedTuple):
    """A model of one of the seed's examples and its initial state ``y0`` (see the builders)."""

    model: RiccatiModel
    y0: FloatArray


def _finite(body: str, parameter: str, value: Any, shape: tuple[int, ...]) -> FloatArray:
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise RiccatiParameterError(body, parameter, f"not numeric ({value!r})") from exc
    if arr.shape != shape:
        raise RiccatiParameterError(body, parameter, f"expected shape {shape}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise RiccatiParameterError(body, parameter, f"must be finite, got {arr.tolist()}")
    return arr


def _planar_vector(body: str, parameter: str, value: Any) -> FloatArray:
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise RiccatiParameterError(body, parameter, f"not numeric ({value!r})") from exc
    if arr.shape == (2,):
        arr = np.append(arr, 0.0)
    if arr.shape != (3,):
        raise RiccatiParameterError(
            body, parameter, f"expected 2 (or 3) components, got {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise RiccatiParameterError(body, parameter, f"must be finite, got {arr.tolist()}")
    if arr[2] != 0.0:
        raise RiccatiParameterError(
            body, parameter, f"the planar model lives in the xy plane; z = {arr[2]:g} must be 0"
        )
    return arr


def _rz(angle: FloatArray) -> FloatArray:
    c, s = np.cos(angle), np.sin(angle)
    out = np.zeros(np.shape(angle) + (3, 3))
    out[..., 0, 0] = c
    out[..., 0, 1] = -s
    out[..., 1, 0] = s
    out[..., 1, 1] = c
    out[..., 2, 2] = 1.0
    return out


def quaternion_to_dcm(quat: ArrayLike) -> FloatArray:
    """DCMs of (stacks of) quaternions ``[w, x, y, z]`` (normalised here): ``(..., 4) -> (..., 3,
    3)``, mapping body-frame components to the reference frame."""
    q = np.asarray(quat, dtype=float)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    out = np.empty(q.shape[:-1] + (3, 3))
    out[..., 0, 0] = 1.0 - 2.0 * (y * y + z * z)
    out[..., 0, 1] = 2.0 * (x * y - w * z)
    out[..., 0, 2] = 2.0 * (x * z + w * y)
    out[..., 1, 0] = 2.0 * (x * y + w * z)
    out[..., 1, 1] = 1.0 - 2.0 * (x * x + z * z)
    out[..., 1, 2] = 2.0 * (y * z - w * x)
    out[..., 2, 0] = 2.0 * (x * z - w * y)
    out[..., 2, 1] = 2.0 * (y * z + w * x)
    out[..., 2, 2] = 1.0 - 2.0 * (x * x + y * y)
    return out


def quaternion_about(axis: ArrayLike, angle: float) -> FloatArray:
    """Quaternion ``[w, x, y, z]`` of a rotation by ``angle`` (rad) about ``axis`` (normalised)."""
    u = np.asarray(axis, dtype=float)
    u = u / np.linalg.norm(u)
    return np.concatenate([[math.cos(angle / 2.0)], math.sin(angle / 2.0) * u])


@dataclass(frozen=True, eq=False)
class RiccatiModel:
    """Immutable parameters of a tree of bodies with ball (spatial) or revolute (planar) hinges.

    Build it with ``RiccatiModel(bodies, planar=False, gravity=(0, -9.81, 0))``; bodies may be
    listed in any order (they are sorted parents-first internally; the state and every output use
    the given order). ``gravity``: m/s², inertial frame. The state is described in the module
    docstring; :meth:`solve` and :meth:`accelerations` are the seed's Algorithms A/B.
    """

    bodies: tuple[Body, ...]
    planar: bool = False
    gravity: Any = DEFAULT_GRAVITY
    _data: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        bodies = tuple(self.bodies)
        object.__setattr__(self, "bodies", bodies)
        if not bodies:
            raise RiccatiError("a Riccati model needs at least one body")
        for b in bodies:
            if not isinstance(b, Body):
                raise RiccatiError(f"bodies must be riccati.Body instances, got {type(b).__name__}")
        planar = bool(self.planar)
        object.__setattr__(self, "planar", planar)
        if planar:
            g = _planar_vector("<model>", "gravity", self.gravity)
        else:
            g = _finite("<model>", "gravity", self.gravity, (3,))
        g.setflags(write=False)
        object.__setattr__(self, "gravity", g)
        object.__setattr__(self, "_data", self._build(bodies, planar, g))

    # -- construction ---------------------------------------------------------------------------

    @staticmethod
    def _build(bodies: tuple[Body, ...], planar: bool, g: FloatArray) -> dict[str, Any]:
        names = [b.name for b in bodies]
        index: dict[str, int] = {}
        for k, b in enumerate(bodies):
            if not isinstance(b.name, str) or not b.name:
                raise RiccatiParameterError(str(b.name), "name", "must be a non-empty string")
            if b.name in index:
                raise RiccatiParameterError(b.name, "name", "two bodies have this name")
            index[b.name] = k
        parent_user = []
        for b in bodies:
            if b.parent is None:
                parent_user.append(-1)
            elif b.parent not in index:
                raise RiccatiParameterError(
                    b.name, "parent", f"no body named '{b.parent}' (bodies: {names[:8]}...)"
                )
            elif b.parent == b.name:
                raise RiccatiParameterError(b.name, "parent", "a body cannot be its own parent")
            else:
                parent_user.append(index[b.parent])
        children_user: list[list[int]] = [[] for _ in bodies]
        for k, p in enumerate(parent_user):
            if p >= 0:
                children_user[p].append(k)
        roots = [k for k, p in enumerate(parent_user) if p < 0]
        if not roots:
            raise RiccatiError(
                "no body is hinged to the ground (parent=None): the parent links form a loop, "
                "which is not a tree"
            )
        # parents-first order (depth-first preorder, children in the given order: the first child
        # of a body is its input I_1 in eqs. 6-9)
        order: list[int] = []
        stack = list(reversed(roots))
        while stack:
            k = stack.pop()
            order.append(k)
            stack.extend(reversed(children_user[k]))
        if len(order) != len(bodies):
            lost = sorted(set(range(len(bodies))) - set(order))
            raise RiccatiParameterError(
                names[lost[0]], "parent",
                f"bodies {[names[k] for k in lost[:6]]} form a loop of parent links, not a tree",
            )  # fmt: skip
        n = len(bodies)
        inv = np.empty(n, dtype=int)
        inv[np.array(order)] = np.arange(n)
        parent = np.array([inv[parent_user[k]] if parent_user[k] >= 0 else -1 for k in order])
        children = [[int(inv[c]) for c in children_user[k]] for k in order]

        mass = np.empty(n)
        inertia = np.empty((n, 3, 3))
        com = np.empty((n, 3))
        jp = np.empty((n, 3))
        R0 = np.empty((n, 3, 3))
        phi0 = np.zeros(n)
        for i, k in enumerate(order):
            b = bodies[k]
            try:
                m = float(b.mass)
            except (TypeError, ValueError) as exc:
                raise RiccatiParameterError(b.name, "mass", f"not a number ({b.mass!r})") from exc
            if not math.isfinite(m) or m <= 0.0:
                raise RiccatiParameterError(b.name, "mass", f"must be finite and > 0, got {m}")
            mass[i] = m
            if planar:
                com[i] = _planar_vector(b.name, "com", b.com)
                jp[i] = _planar_vector(b.name, "joint_point", b.joint_point)
                try:
                    Jz = float(b.inertia) if np.ndim(b.inertia) == 0 else None
                except (TypeError, ValueError):
                    Jz = None
                if Jz is None or not math.isfinite(Jz) or Jz < 0.0:
                    raise RiccatiParameterError(
                        b.name, "inertia",
                        f"planar: the scalar J_zz at the centre of mass, finite and >= 0 "
                        f"(kg m²), got {b.inertia!r}",
                    )  # fmt: skip
                # only J_zz acts in the plane; an isotropic tensor keeps eq. (5)'s E_9 planar
                inertia[i] = Jz * _I3
                if Jz + m * float(com[i] @ com[i]) <= 0.0:
                    raise RiccatiParameterError(
                        b.name, "inertia",
                        "zero moment of inertia about the hinge (a point mass on its own hinge "
                        "point): the hinge rotation is undetermined",
                    )  # fmt: skip
                rot = 0.0 if b.joint_rotation is None else b.joint_rotation
                if np.ndim(rot) != 0 or not np.isfinite(float(rot)):
                    raise RiccatiParameterError(
                        b.name, "joint_rotation", f"planar: an angle in rad, got {rot!r}"
                    )
                phi0[i] = float(rot)
                R0[i] = _rz(np.array(phi0[i]))
            else:
                com[i] = _finite(b.name, "com", b.com, (3,))
                jp[i] = _finite(b.name, "joint_point", b.joint_point, (3,))
                J = _finite(b.name, "inertia", b.inertia, (3, 3))
                if np.max(np.abs(J - J.T)) > 1e-12 * max(1.0, np.max(np.abs(J))):
                    raise RiccatiParameterError(b.name, "inertia", "must be symmetric")
                J = 0.5 * (J + J.T)
                ev = np.linalg.eigvalsh(J)
                if ev[0] < -1e-12 * max(1.0, ev[-1]):
                    raise RiccatiParameterError(
                        b.name, "inertia", f"must be positive semi-definite, eigenvalues {ev}"
                    )
                inertia[i] = J
                c = com[i]
                J_O = J + m * (float(c @ c) * _I3 - np.outer(c, c))
                ev_O = np.linalg.eigvalsh(J_O)
                if ev_O[0] <= 1e-12 * max(ev_O[-1], 1e-300):
                    raise RiccatiParameterError(
                        b.name, "inertia",
                        f"the inertia about the ball hinge is singular (eigenvalues {ev_O}): a "
                        "slender rod or a point mass on a ball hinge has an undetermined spin; "
                        "give it a finite axial inertia",
                    )  # fmt: skip
                if b.joint_rotation is None:
                    R0[i] = _I3
                else:
                    R = _finite(b.name, "joint_rotation", b.joint_rotation, (3, 3))
                    if np.max(np.abs(R.T @ R - _I3)) > _ORTHO_TOL or np.linalg.det(R) < 0.0:
                        raise RiccatiParameterError(
                            b.name, "joint_rotation", "must be a rotation matrix (R^T R = 1, det 1)"
                        )
                    R0[i] = R

        # input end I_1 of each body: the attachment of its first child (eqs. 4-9), O for a tip
        p_I1 = np.zeros((n, 3))
        for i in range(n):
            if children[i]:
                p_I1[i] = jp[children[i][0]]
        d = com - p_I1
        J_I = inertia + mass[:, None, None] * (
            np.einsum("ni,ni->n", d, d)[:, None, None] * _I3 - np.einsum("ni,nj->nij", d, d)
        )
        # each non-root body: its hinge relative to its parent's I_1 (parent frame): r_{I1 Ik}
        s_in = np.zeros((n, 3))
        nr = parent >= 0
        s_in[nr] = jp[nr] - p_I1[parent[nr]]
        roots_int = np.flatnonzero(~nr)

        if planar:
            dr, dw = 2, 1
            r_idx = np.array([0, 1])
            w_idx = np.array([2])
            # z_a = [m_z, q_x, q_y] out of [m (3), q (3)]; columns [ẍ, ÿ, 1, Ω̇_z] out of
            # [r̈ (3), 1, Ω̇ (3)] (eq. 35)
            rows_a = np.array([2, 3, 4])
            cols_b = np.array([0, 1, 3, 6])
        else:
            dr, dw = 3, 3
            r_idx = np.arange(3)
            w_idx = np.arange(3)
            rows_a = np.arange(6)
            cols_b = np.arange(7)
        for arr in (mass, inertia, com, jp, R0, phi0, p_I1, J_I, s_in, parent):
            arr.setflags(write=False)
        identity = bool(np.array_equal(np.array(order), np.arange(n)))
        # internal order is a depth-first preorder: the subtree of i is i .. end[i] - 1
        end = np.arange(1, n + 1)
        for i in range(n - 1, -1, -1):
            p = int(parent[i])
            if p >= 0 and end[i] > end[p]:
                end[p] = end[i]
        end.setflags(write=False)
        return {
            "n": n,
            "names": tuple(names),
            "order": np.array(order),
            "inv": inv,
            "identity": identity,
            "parent": parent,
            "children": children,
            "roots": roots_int,
            "nonroot": np.flatnonzero(nr),
            "mass": mass,
            "inertia": inertia,
            "com": com,
            "joint_point": jp,
            "R0": R0,
            "phi0": phi0,
            "p_I1": p_I1,
            "J_I": J_I,
            "s_in": s_in,
            "g": g,
            "dr": dr,
            "dw": dw,
            "r_idx": r_idx,
            "w_idx": w_idx,
            "rows_a": rows_a,
            "cols_b": cols_b,
            "parent_list": parent.tolist(),
            "end": end,
        }

    # -- basic properties -----------------------------------------------------------------------

    @property
    def n_bodies(self) -> int:
        """Number of bodies (= hinges)."""
        return self._data["n"]

    @property
    def names(self) -> tuple[str, ...]:
        """Body names in the model's (state) order."""
        return self._data["names"]

    @property
    def dof(self) -> int:
        """Degrees of freedom: 3 per ball hinge (spatial), 1 per revolute hinge (planar)."""
        return self.n_bodies * (1 if self.planar else 3)

    @property
    def nq(self) -> int:
        """Size of the configuration part of the state (4 per quaternion, or 1 per angle)."""
        return self.n_bodies * (1 if self.planar else 4)

    @property
    def nv(self) -> int:
        """Size of the rate part of the state (= :attr:`dof`)."""
        return self.dof

    @property
    def n_states(self) -> int:
        """Size of the ODE state ``y = [q, v]``."""
        return self.nq + self.nv

    def parent_of(self, name: str) -> str | None:
        """Name of the parent of a body (``None`` for a root)."""
        for b in self.bodies:
            if b.name == name:
                return b.parent
        raise KeyError(f"no body '{name}'")

    def topology(self) -> dict[str, list]:
        """Algorithm B's step (B1): the division of the tree into subchains and multi-input bodies.

        Returns ``{"chains": [[names from tip (or a multi-input body's output) down to the chain's
        end], ...], "multi_input": [names of bodies with >= 2 inputs], "roots": [...]}``. A chain
        ends where it enters a multi-input body or the ground.
        """
        d = self._data
        names = [d["names"][k] for k in d["order"]]
        children, parent = d["children"], d["parent"]
        multi = [i for i in range(d["n"]) if len(children[i]) >= 2]
        starts = [i for i in range(d["n"]) if len(children[i]) != 1]
        chains = []
        for s in starts:
            chain = [s]
            k = int(parent[s])
            while k >= 0 and len(children[k]) == 1:
                chain.append(k)
                k = int(parent[k])
            chains.append([names[i] for i in chain])
        return {
            "chains": chains,
            "multi_input": [names[i] for i in multi],
            "roots": [names[i] for i in d["roots"]],
        }

    # -- state helpers --------------------------------------------------------------------------

    def split(self, y: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """``y -> (q, v)``: spatial ``(n, 4)`` quaternions and ``(n, 3)`` rates; planar ``(n,)``
        angles and ``(n,)`` rates (rad, rad/s)."""
        y = np.asarray(y, dtype=float)
        if y.shape != (self.n_states,):
            raise RiccatiError(
                f"state has shape {y.shape}; this model needs ({self.n_states},) "
                f"= [q ({self.nq}), v ({self.nv})]"
            )
        n = self.n_bodies
        if self.planar:
            return y[:n], y[n:]
        return y[: 4 * n].reshape(n, 4), y[4 * n :].reshape(n, 3)

    def state(self, q: ArrayLike, v: ArrayLike | None = None) -> FloatArray:
        """Pack hinge coordinates and rates into ``y`` (rates default to zero).

        Spatial: ``q`` (n, 4) quaternions [w, x, y, z], ``v`` (n, 3) rad/s (body frame);
        planar: ``q`` (n,) angles (rad), ``v`` (n,) rad/s.
        """
        n = self.n_bodies
        if self.planar:
            q = np.asarray(q, dtype=float).reshape(n)
            v = np.zeros(n) if v is None else np.asarray(v, dtype=float).reshape(n)
        else:
            q = np.asarray(q, dtype=float).reshape(n, 4)
            v = np.zeros((n, 3)) if v is None else np.asarray(v, dtype=float).reshape(n, 3)
        return np.concatenate([q.ravel(), v.ravel()])

    def rest_state(self) -> FloatArray:
        """All hinge coordinates zero (identity quaternions), at rest."""
        n = self.n_bodies
        if self.planar:
            return np.zeros(2 * n)
        q = np.zeros((n, 4))
        q[:, 0] = 1.0
        return self.state(q)

    def _check_state(self, q: FloatArray, v: FloatArray) -> None:
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            bad = np.flatnonzero(
                ~np.isfinite(q).reshape(self.n_bodies, -1).all(axis=1)
                | ~np.isfinite(v).reshape(self.n_bodies, -1).all(axis=1)
            )
            raise RiccatiError(
                f"non-finite hinge coordinates or rates for bodies "
                f"{[self.names[k] for k in bad[:6]]}"
            )
        if not self.planar:
            norms = np.linalg.norm(q, axis=1)
            if np.any(norms < 1e-12):
                k = int(np.argmin(norms))
                raise RiccatiError(
                    f"body '{self.names[k]}': the hinge quaternion is zero (not a rotation)"
                )

    # -- kinematics -----------------------------------------------------------------------------

    def _internal(self, a: FloatArray) -> FloatArray:
        d = self._data
        return a if d["identity"] else a[d["order"]]

    def _external(self, a: FloatArray) -> FloatArray:
        d = self._data
        return a if d["identity"] else a[d["inv"]]

    def _path_sum(self, w: FloatArray) -> FloatArray:
        """Sum of ``w`` (internal order, leading axis) over each body and its ancestors, vectorised:
        on the depth-first preorder every subtree is a contiguous range ``i .. end[i] - 1``, so
        adding w_i at i and removing it at end[i] makes a cumulative sum give the path sums."""
        d = self._data
        delta = np.zeros((w.shape[0] + 1,) + w.shape[1:])
        delta[:-1] = w
        np.subtract.at(delta, d["end"], w)
        return np.cumsum(delta[:-1], axis=0)

    def _kinematics(self, q: FloatArray, v: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Body-to-inertial DCMs A (n, 3, 3) and angular velocities Ω (n, 3, inertial), internal
        order, from the hinge coordinates (root to tips)."""
        d = self._data
        n = d["n"]
        parent = d["parent_list"]
        q, v = self._internal(q), self._internal(v)
        if self.planar:
            A = _rz(self._path_sum(d["phi0"] + q))
            omega = np.zeros((n, 3))
            omega[:, 2] = self._path_sum(v)
            return A, omega
        Rrel = np.matmul(d["R0"], quaternion_to_dcm(q))
        A = np.empty((n, 3, 3))
        dot = np.dot
        for i in range(n):
            p = parent[i]
            A[i] = Rrel[i] if p < 0 else dot(A[p], Rrel[i])
        return A, self._path_sum(np.einsum("nij,nj->ni", A, v))

    # -- the Riccati solve (Algorithms A and B) -------------------------------------------------

    def _sweeps(self, A: FloatArray, omega: FloatArray) -> tuple[FloatArray, FloatArray, list]:
        """Forward Riccati sweep (tips to roots) and backward sweep (roots to tips).

        Returns, in internal order, Ω̇ (n, 3), r̈ of each hinge point O (n, 3) and the hinge
        relations ``Q_i`` with ``q_i = Q_i [r̈_O; 1]`` (list of (dq, dr+1) arrays).
        """
        d = self._data
        n, dr, dw = d["n"], d["dr"], d["dw"]
        parent = d["parent_list"]
        mass = d["mass"]
        m3 = mass[:, None, None]

        # (A1) transfer-matrix coefficients of every body, vectorised (eq. 5 with I = I_1)
        rIO = -np.einsum("nij,nj->ni", A, d["p_I1"])
        rIC = np.einsum("nij,nj->ni", A, d["com"] - d["p_I1"])
        J_I = np.matmul(np.matmul(A, d["J_I"]), np.transpose(A, (0, 2, 1)))
        f_C = mass[:, None] * d["g"]
        E = transfer_coefficients(mass, J_I, rIO, rIC, omega, f_C)
        sk_IO = E["E6"]
        sk_IC = E["E4"] / m3
        # T_12 = [[E6 E3 + E7, E6 E4 + E8], [E3, E4]], f_a = [E6 E5 + E9; E5], f_b = [E2; 0]
        # (eq. 20 for the body of eq. 4: T_11 = [[1, E6], [0, 1]], T_21 = 0, T_22 = [[1, E1],
        # [0, 1]]). With the input Riccati relation z_a = S z_b + e and the output unknowns
        # ordered [r̈ (3), 1, Ω̇ (3)] (the 1 carries e), eqs. (24), (29), (30) read
        #   [S | e]_O = (T11 [S | e]_I + [T12 | f_a]) Paug,  Paug = [[1, -E2, r̃_IO], [0, 1, 0],
        #   [0, 0, 1]] (P = T22^{-1}, q = -f_b).
        T12r = np.empty((n, 6, 3))
        T12r[:, 0:3] = m3 * (sk_IC - sk_IO)
        T12r[:, 3:6] = E["E3"]
        T12w = np.empty((n, 6, 3))
        T12w[:, 0:3] = np.matmul(sk_IO, E["E4"]) + J_I
        T12w[:, 3:6] = E["E4"]
        fa = np.empty((n, 6))
        fa[:, 0:3] = np.einsum("nij,nj->ni", sk_IO, E["E5"]) + E["E9"]
        fa[:, 3:6] = E["E5"]
        # the tip's own part: S_1 = 0, e_1 = 0 (eq. 34) pushed through the body
        D0 = np.empty((n, 6, 7))
        D0[:, :, 0:3] = T12r
        D0[:, :, 3] = fa - np.einsum("nij,nj->ni", T12r, E["E2"])
        D0[:, :, 4:7] = np.matmul(T12r, sk_IO) + T12w

        # every input k of a body (the first one included, with r_{I1 I1} = 0): geometric
        # equation (14) r̈_Ik = r̈_I1 - r̃_{I1Ik} Ω̇ + Ω̃Ω̃ r_{I1Ik} composed with Paug gives
        # r̈_Ik = r̈_O + B_k Ω̇ + b_k, and its force enters the moment and force rows of the
        # extended matrix (8) through W_k = [E6 + E_Ik; 1] (E_Ik = -r̃_{I1Ik}, eq. 9).
        nonroot = d["nonroot"]
        par = d["parent"][nonroot]
        r_k = np.einsum("nij,nj->ni", A[par], d["s_in"][nonroot])
        Bk = sk_IO[par] - _skew_batch(r_k)
        bk = _ww(omega[par], r_k) - E["E2"][par]
        Wc = np.zeros((n, 6, 3))
        Wc[nonroot, 0:3] = Bk
        Wc[nonroot, 3:6] = _I3
        LP = np.zeros((n, 4, 7))
        LP[nonroot, 0:3, 0:3] = _I3
        LP[nonroot, 0:3, 3] = bk
        LP[nonroot, 0:3, 4:7] = Bk
        LP[:, 3, 3] = 1.0

        rows_a, cols_b = d["rows_a"], d["cols_b"]
        if self.planar:  # eq. (35): keep [m_z, q_x, q_y] x [ẍ, ÿ, 1, Ω̇_z]
            acc = D0[:, rows_a][:, :, cols_b].copy()
            Wc = Wc[:, rows_a][:, :, [0, 1]].copy()
            LP = LP[:, [0, 1, 3]][:, :, cols_b].copy()
        else:
            acc = D0
        # acc[i] accumulates [S | e] at the output O of body i (eq. 31): its own part plus one
        # term W_k Q_k LP_k per input k

        # (A2)-(A3), (B2)-(B3): forward sweep, children before parents
        dot = np.dot
        Q: list = [None] * n
        X: list = [None] * n
        h = dr + 1  # columns [r̈, 1]
        for i in range(n - 1, -1, -1):
            S = acc[i]
            G = S[:dw, h:]
            H = S[:dw, :h]
            if dw == 1:
                g0 = G[0, 0]
                if not (abs(g0) > 1e-300) or not math.isfinite(g0):
                    self._singular(i, g0)
                Xi = H / g0
            else:
                _, _, Xi, info = dgesv(G, H)
                if info != 0:
                    self._singular(i, G)
            # smooth hinge at O: m_O = 0 gives Ω̇ = -X [r̈_O; 1] and q_O = Q [r̈_O; 1]
            X[i] = Xi
            Qi = S[dw:, :h] - dot(S[dw:, h:], Xi)
            Q[i] = Qi
            p = parent[i]
            if p >= 0:
                acc[p] += dot(dot(Wc[i], Qi), LP[i])
        Xa = np.array(X)

        # (A4) roots: r̈_O = 0 at the fixed hinge. (A5)/(B4) backward sweep: eq. (33)
        # r̈_I1 = r̈_O - E1 Ω̇ - E2 and eq. (14) give r̈ at a child's hinge from its parent's
        # [r̈_O, 1, Ω̇] (rows LP[:dr]); with the parent's hinge relation Ω̇ = -X [r̈_O; 1] this is
        # one affine map [r̈; 1]_child = M_child [r̈; 1]_parent, built here for all bodies at once.
        M = np.zeros((n, h, h))
        M[:, dr, dr] = 1.0
        nr = d["nonroot"]
        par = d["parent"][nr]
        M[nr, :dr] = LP[nr, :dr, :h] - np.matmul(LP[nr, :dr, h:], Xa[par])
        za = np.zeros((n, h))  # [r̈_O, 1] of every body
        za[:, dr] = 1.0
        for i in range(n):
            p = parent[i]
            if p >= 0:
                za[i] = dot(M[i], za[p])
        if not np.all(np.isfinite(za)):  # pragma: no cover - guarded by the checks above
            raise RiccatiError("the backward Riccati sweep produced non-finite accelerations")
        omega_dot = np.zeros((n, 3))
        acc_O = np.zeros((n, 3))
        omega_dot[:, d["w_idx"]] = -np.einsum("nij,nj->ni", Xa, za)
        acc_O[:, d["r_idx"]] = za[:, :dr]
        return omega_dot, acc_O, Q

    def _singular(self, i: int, G: Any) -> None:
        name = self._data["names"][self._data["order"][i]]
        raise RiccatiError(
            f"body '{name}': the rotational Riccati block S_mΩ at its hinge is singular "
            f"({np.array2string(np.asarray(G), precision=3)}); its angular acceleration is "
            "undetermined (zero inertia about the hinge?)"
        )

    def solve(self, y: ArrayLike) -> RiccatiSolution:
        """Accelerations and hinge forces at the state ``y`` (see :class:`RiccatiSolution`)."""
        q, v = self.split(y)
        self._check_state(q, v)
        A, omega = self._kinematics(q, v)
        omega_dot, acc_O, Q = self._sweeps(A, omega)
        d = self._data
        h = d["dr"] + 1
        za = np.ones((d["n"], h))
        za[:, : d["dr"]] = acc_O[:, d["r_idx"]]
        force = np.zeros((d["n"], 3))
        force[:, d["r_idx"]] = np.einsum("nij,nj->ni", np.array(Q), za)
        rel = self._relative(A, omega, omega_dot)
        ext = self._external
        return RiccatiSolution(ext(rel), ext(omega_dot), ext(acc_O), ext(force), ext(A), ext(omega))

    def _relative(self, A: FloatArray, omega: FloatArray, omega_dot: FloatArray) -> FloatArray:
        """Hinge accelerations from absolute ones (internal order): planar θ̈ = Ω̇_z - Ω̇_z,parent;
        spatial ω̇ = A^T (Ω̇ - Ω̇_p + Ω × Ω_p) (body frame)."""
        d = self._data
        nr, par = d["nonroot"], d["parent"][d["nonroot"]]
        if self.planar:
            rel = omega_dot[:, 2].copy()
            rel[nr] -= omega_dot[par, 2]
            return rel
        diff = omega_dot.copy()
        diff[nr] += _cross(omega[nr], omega[par]) - omega_dot[par]
        return np.einsum("nji,nj->ni", A, diff)

    def accelerations(self, y: ArrayLike) -> FloatArray:
        """Hinge-coordinate accelerations ``v̇`` at the state ``y`` (flat, like ``v``): spatial ω̇
        (rad/s², body frame, relative to the parent), planar θ̈ (rad/s²)."""
        q, v = self.split(y)
        self._check_state(q, v)
        A, omega = self._kinematics(q, v)
        omega_dot, _, _ = self._sweeps(A, omega)
        return self._external(self._relative(A, omega, omega_dot)).ravel()

    def rhs(self, t: float, y: ArrayLike) -> FloatArray:
        """ODE right-hand side ``dy/dt`` (``t`` in s is unused: the model is autonomous).

        Spatial: ``q̇ = ½ q ⊗ [0, ω] + λ (1 - |q|²) q`` (the last term only restores the norm,
        λ = 1/s); planar: ``θ̇``.
        """
        y = np.asarray(y, dtype=float)
        q, v = self.split(y)
        a = self.accelerations(y)
        if self.planar:
            return np.concatenate([v, a])
        return np.concatenate([quaternion_rate(q, v).ravel(), a])

    # -- integration ----------------------------------------------------------------------------

    def rk4(
        self,
        y0: ArrayLike,
        t_final: float,
        dt: float = 1e-3,
        *,
        t0: float = 0.0,
        every: int = 1,
    ) -> tuple[FloatArray, FloatArray]:
        """Classical fourth-order Runge-Kutta with constant step ``dt`` (s), as in the seed
        (Δt = 1 ms). Quaternions are renormalised after each step. Returns ``(t, Y)`` with one row
        of ``Y`` per kept step (every ``every`` steps, plus the first and the last)."""
        if not (dt > 0.0 and math.isfinite(dt)):
            raise RiccatiError(f"rk4: dt must be finite and > 0, got {dt}")
        steps = int(round((t_final - t0) / dt))
        if steps < 0 or abs(t0 + steps * dt - t_final) > 1e-9 * max(1.0, abs(t_final)):
            raise RiccatiError(
                f"rk4: t_final - t0 = {t_final - t0:g} s is not a whole number of steps dt = {dt:g}"
            )
        if every < 1:
            raise RiccatiError(f"rk4: every must be >= 1, got {every}")
        y = np.array(y0, dtype=float)
        self.split(y)
        n = self.n_bodies
        ts = [t0]
        ys = [y.copy()]
        f = self.rhs
        for k in range(1, steps + 1):
            t = t0 + (k - 1) * dt
            k1 = f(t, y)
            k2 = f(t + 0.5 * dt, y + 0.5 * dt * k1)
            k3 = f(t + 0.5 * dt, y + 0.5 * dt * k2)
            k4 = f(t + dt, y + dt * k3)
            y = y + (dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
            if not self.planar:
                qv = y[: 4 * n].reshape(n, 4)
                qv /= np.linalg.norm(qv, axis=1, keepdims=True)
            if k % every == 0 or k == steps:
                ts.append(t0 + k * dt)
                ys.append(y.copy())
        return np.array(ts), np.array(ys)

    def simulate(
        self,
        y0: ArrayLike,
        t_final: float,
        t_eval: ArrayLike | None = None,
        *,
        t0: float = 0.0,
        method: str = "DOP853",
        rtol: float = 1e-9,
        atol: float = 1e-11,
        **kwargs: Any,
    ):
        """``scipy.integrate.solve_ivp`` of :meth:`rhs` from ``y0`` over ``[t0, t_final]`` (s).
        Returns the solve_ivp result (``sol.t``, ``sol.y`` with one column per time)."""
        y0 = np.asarray(y0, dtype=float)
        self.split(y0)
        return solve_ivp(
            self.rhs, (t0, t_final), y0, method=method, rtol=rtol, atol=atol, t_eval=t_eval,
            **kwargs,
        )  # fmt: skip

    # -- outputs --------------------------------------------------------------------------------

    def poses(self, y: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Inertial positions of the hinge points O (n, 3; m) and body DCMs (n, 3, 3)."""
        q, v = self.split(y)
        self._check_state(q, v)
        A, _ = self._kinematics(q, v)
        pos, _ = self._hinge_motion(A, np.zeros_like(A[:, 0]))
        return self._external(pos), self._external(A)

    def absolute_angles(self, y: ArrayLike) -> FloatArray:
        """Planar only: absolute angles of the bodies (rad), the seed's θ_i of Fig. 2."""
        if not self.planar:
            raise RiccatiError("absolute_angles: only for planar models")
        q, _ = self.split(y)
        return self._external(self._path_sum(self._data["phi0"] + self._internal(q)))

    def state_from_absolute(self, theta: ArrayLike, theta_dot: ArrayLike | None = None):
        """Planar only: the state ``y`` whose bodies have absolute angles ``theta`` (rad) and
        rates ``theta_dot`` (rad/s) -- the seed's θ_i, θ̇_i."""
        if not self.planar:
            raise RiccatiError("state_from_absolute: only for planar models")
        n = self.n_bodies
        th = np.asarray(theta, dtype=float).reshape(n)
        thd = np.zeros(n) if theta_dot is None else np.asarray(theta_dot, dtype=float).reshape(n)
        d = self._data
        par_user = np.array(
            [d["order"][p] if p >= 0 else -1 for p in d["parent"][d["inv"]]], dtype=int
        )
        phi0 = self._external(np.asarray(d["phi0"]))
        has = par_user >= 0
        q = th - phi0
        q[has] -= th[par_user[has]]
        qd = thd.copy()
        qd[has] -= thd[par_user[has]]
        return self.state(q, qd)

    def _hinge_motion(self, A: FloatArray, omega: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Inertial positions (m) and velocities (m/s) of the hinge points O, internal order."""
        d = self._data
        nr, par = d["nonroot"], d["parent"][d["nonroot"]]
        u = d["joint_point"].copy()
        u[nr] = np.einsum("nij,nj->ni", A[par], u[nr])
        vel_u = np.zeros_like(u)
        vel_u[nr] = _cross(omega[par], u[nr])
        return self._path_sum(u), self._path_sum(vel_u)

    def energy(self, y: ArrayLike) -> tuple[float, float]:
        """Kinetic and potential energy (J) at the state ``y`` (potential zero at the origin)."""
        q, v = self.split(y)
        self._check_state(q, v)
        A, omega = self._kinematics(q, v)
        d = self._data
        pos, vel = self._hinge_motion(A, omega)
        c = np.einsum("nij,nj->ni", A, d["com"])
        r_C = pos + c
        v_C = vel + _cross(omega, c)
        J = np.matmul(np.matmul(A, d["inertia"]), np.transpose(A, (0, 2, 1)))
        m = d["mass"]
        if self.planar:  # only J_zz acts in the plane
            rot = 0.5 * J[:, 2, 2] * omega[:, 2] ** 2
        else:
            rot = 0.5 * np.einsum("ni,nij,nj->n", omega, J, omega)
        kin = float(np.sum(0.5 * m * np.einsum("ni,ni->n", v_C, v_C) + rot))
        pot = float(-np.sum(m * (r_C @ d["g"])))
        return kin, pot

    def power_residual(self, y: ArrayLike) -> tuple[float, float]:
        """``dE/dt`` at ``y`` from the solved accelerations (W), and the scale it is small against
        (the sum of the magnitudes of its terms, W). Zero for smooth hinges and gravity only, so
        it checks the accelerations without any other solver."""
        q, v = self.split(y)
        self._check_state(q, v)
        A, omega = self._kinematics(q, v)
        omega_dot, acc_O, _ = self._sweeps(A, omega)
        d = self._data
        _, vel = self._hinge_motion(A, omega)
        c = np.einsum("nij,nj->ni", A, d["com"])
        v_C = vel + _cross(omega, c)
        a_C = acc_O + _cross(omega_dot, c) + _cross(omega, _cross(omega, c))
        J = np.matmul(np.matmul(A, d["inertia"]), np.transpose(A, (0, 2, 1)))
        m = d["mass"]
        if self.planar:
            rot = J[:, 2, 2] * omega[:, 2] * omega_dot[:, 2]
        else:
            rot = np.einsum("ni,nij,nj->n", omega, J, omega_dot)
        trans = m * np.einsum("ni,ni->n", v_C, a_C)
        grav = m * (v_C @ d["g"])
        terms = np.concatenate([trans, rot, grav])
        return float(np.sum(trans) + np.sum(rot) - np.sum(grav)), float(np.sum(np.abs(terms)))


def quaternion_rate(q: FloatArray, omega: FloatArray, gain: float = 1.0) -> FloatArray:
    """``q̇ = ½ q ⊗ [0, ω] + gain (1 - |q|²) q`` for stacks of quaternions ``[w, x, y, z]`` (n, 4)
    and body-frame angular velocities ω (n, 3; rad/s)."""
    w = q[:, 0:1]
    vec = q[:, 1:4]
    out = np.empty_like(q)
    out[:, 0] = -0.5 * np.sum(vec * omega, axis=1)
    out[:, 1:4] = 0.5 * (w * omega + _cross(vec, omega))
    out += gain * (1.0 - np.sum(q * q, axis=1, keepdims=True)) * q
    return out


# ------------------------------------------------------------------------------------------------
# the seed's examples
# ------------------------------------------------------------------------------------------------


def _rod(
    name: str,
    parent: str | None,
    joint_point: Sequence[float],
    m: float,
    a: float,
    planar: bool,
    radius: float,
    rotation: Any = None,
    centred: bool = False,
) -> Body:
    """A uniform rod of mass m (kg) and length 2a (m) along the body x-axis. The hinge O is at its
    upper end (the rod extends along -x: the seed's r_IO = 2 r_IC = 2a [c, s] from the free end I)
    or at its middle if ``centred`` (the multi-input bodies 7 and 11). Transverse inertia at C:
    m a²/3 (= J_z - m a² with J_z = 4 m a²/3 about the end, Sect. 5.1); axial m ρ²/2 (spatial)."""
    com = (0.0, 0.0, 0.0) if centred else (-a, 0.0, 0.0)
    Jt = m * a * a / 3.0
    if planar:
        return Body(name, m, Jt, com[:2], parent, tuple(joint_point)[:2], rotation)
    inertia = np.diag([0.5 * m * radius * radius, Jt, Jt])
    return Body(name, m, inertia, com, parent, tuple(joint_point), rotation)


def branch_pendulum(m: float = 1.0, a: float = 0.5, g: float = 9.81) -> RiccatiExample:
    """The planar branch pendulum of the seed's Fig. 2 (Sect. 5.1), at its initial state.

    Rods of mass ``m`` (kg) and length 2a (m). Body 7 hangs from the ceiling (the origin) by its
    middle; body 1 hangs from its end I_1 (x = -a along body 7), body 5 from its end I_2 and body 3
    from the lower end of body 5. Gravity ``-g`` along y (m/s²). Initial state
    θ1 = θ3 = θ5 = π/2, θ7 = 0, at rest (θ_i: absolute angle of the direction from the free end
    to the hinge; the body x-axis points that way). Hinge order: bodies 1, 3, 5, 7.
    """
    bodies = [
        _rod("body7", None, (0.0, 0.0, 0.0), m, a, True, 0.0, centred=True),
        _rod("body1", "body7", (-a, 0.0, 0.0), m, a, True, 0.0),
        _rod("body5", "body7", (a, 0.0, 0.0), m, a, True, 0.0),
        _rod("body3", "body5", (-2.0 * a, 0.0, 0.0), m, a, True, 0.0),
    ]
    # list the hinges in the seed's numbering; body 7's first input I_1 is body 1
    order = ["body1", "body3", "body5", "body7"]
    by = {b.name: b for b in bodies}
    model = RiccatiModel(tuple(by[k] for k in order), planar=True, gravity=(0.0, -g, 0.0))
    half = 0.5 * math.pi
    y0 = model.state_from_absolute([half, half, half, 0.0])
    return RiccatiExample(model, y0)


def branch_system(
    N: int = 999,
    *,
    planar: bool = False,
    m: float = 1.0,
    a: float = 0.5,
    g: float = 9.81,
    radius: float = 0.01,
) -> RiccatiExample:
    """The branch system of the seed's Fig. 1 with ``(N + 1) / 2`` bodies (N odd >= 13).

    Elements are numbered as in Fig. 1(b): bodies are the odd numbers 1..N, hinges the even ones.
    Subchain 1-2-3 enters the multi-input body 11 at its input I_1 (hinge 4), subchain
    5-6-7-8-9 at I_2 (hinge 10); body 11's output O (its middle) hangs from the chain
    13, 15, ..., N, whose body N hangs from the ceiling (the origin). All bodies are the rods of
    the demonstration example (mass ``m`` kg, length 2a m; spatial: axial inertia of a solid rod of
    radius ``radius`` m, which ball hinges need). Initial state as in the seed: at rest, body 11
    horizontal (along x), all others vertical (hanging along -y), gravity ``-g`` along y.
    Spatial: ball hinges, 3 dof per body (N = 999: 500 bodies, 1500 dof); planar: revolute hinges
    about z. Hinge order: bodies 1, 3, ..., N.
    """
    if not isinstance(N, (int, np.integer)) or N < 13 or N % 2 == 0:
        raise RiccatiError(f"branch_system: N must be an odd integer >= 13, got {N!r}")
    if not planar and not (radius > 0.0):
        raise RiccatiError(
            f"branch_system: radius must be > 0 for ball hinges (rod spin), got {radius!r}"
        )
    N = int(N)
    tip = (-2.0 * a, 0.0, 0.0)
    spec: dict[int, tuple[str | None, tuple[float, float, float], bool]] = {
        1: ("body3", tip, False),
        3: ("body11", (-a, 0.0, 0.0), False),
        5: ("body7", tip, False),
        7: ("body9", tip, False),
        9: ("body11", (a, 0.0, 0.0), False),
        11: ("body13", tip, True),
    }
    for k in range(13, N + 1, 2):
        spec[k] = (None, (0.0, 0.0, 0.0), False) if k == N else (f"body{k + 2}", tip, False)
    bodies = []
    for k in range(1, N + 1, 2):
        parent, jp, centred = spec[k]
        bodies.append(_rod(f"body{k}", parent, jp, m, a, planar, radius, centred=centred))
    model = RiccatiModel(tuple(bodies), planar=planar, gravity=(0.0, -g, 0.0))
    half = 0.5 * math.pi
    names = model.names
    if planar:
        theta = np.full(model.n_bodies, half)
        theta[names.index("body11")] = 0.0
        return RiccatiExample(model, model.state_from_absolute(theta))
    # relative rotations: root N turns x to +y; body 11 turns back by -π/2; the chains hanging
    # from body 11 (bodies 3 and 9) by +π/2; all others identity
    quat = np.zeros((model.n_bodies, 4))
    quat[:, 0] = 1.0
    quat[names.index(f"body{N}")] = quaternion_about((0, 0, 1), half)
    quat[names.index("body11")] = quaternion_about((0, 0, 1), -half)
    quat[names.index("body3")] = quaternion_about((0, 0, 1), half)
    quat[names.index("body9")] = quaternion_about((0, 0, 1), half)
    return RiccatiExample(model, model.state(quat))


def chain_bodies(n_bodies: int) -> int:
    """The N of :func:`branch_system` for a given number of bodies (>= 7): ``2 n - 1``."""
    if n_bodies < 7:
        raise RiccatiError(f"the branch system of Fig. 1 has at least 7 bodies, got {n_bodies}")
    return 2 * int(n_bodies) - 1


__all__ = [
    "Body",
    "DEFAULT_GRAVITY",
    "PLANAR_REDUCTION",
    "RiccatiBody",
    "RiccatiError",
    "RiccatiExample",
    "RiccatiModel",
    "RiccatiParameterError",
    "RiccatiSolution",
    "branch_pendulum",
    "branch_system",
    "chain_bodies",
    "quaternion_about",
    "quaternion_rate",
    "quaternion_to_dcm",
    "riccati_step",
    "transfer_coefficients",
    "transfer_matrix",
]
