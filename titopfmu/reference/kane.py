"""Kane's method for unconstrained multibody systems (seed 003, Kamman's notes), a reference solver.

Written from seed 003 only; it shares no dynamics code with the TITOP blocks (it uses the
``skew`` helper of :mod:`titopfmu.spatial.algebra` and the parameter-error types of
:mod:`titopfmu.blocks.base`). Equation numbers ``(n)`` below are the seed's.

System and numbering
--------------------
N rigid bodies numbered 1..N outward from the reference body 1. The *body-connection array*
``L(K)`` gives, for each body K, its adjoining lower-numbered body J = L(K) (0 = the inertial
frame R). It must satisfy ``0 <= L(K) < K``, which makes the system a tree rooted at R (body 1
always has L(1) = 0; further bodies with L(K) = 0 are allowed and are also free in R). ``u_K``
(:attr:`KaneModel.depth`) is the number of bodies below K, ``L^{u_K}(K) = 1`` for the seed's
single-root trees. Every body is free (6 dof) relative to its lower body: no joint constraints.
In the API bodies are indexed 0..N-1 (``k = K - 1``); the connection array keeps the seed's
1-based values.

Frames and points (all SI: m, kg, s, rad, N, N m)
-------------------------------------------------
* R: inertial frame, unit vectors N1, N2, N3. Gravity ``g`` in R components (m/s²).
* Body K: frame e1, e2, e3 fixed in K, origin O_K; mass centre G_K fixed in K.
* ``q_K`` (:attr:`KaneBody.joint_point`): position of the reference point Q_K, fixed in body J,
  relative to O_J, in J components (m). For a body with L(K) = 0 it is a point fixed in R,
  relative to the inertial origin, in R components (the seed takes q_1 = 0).
* ``r_K`` (:attr:`KaneBody.com`): position of G_K relative to O_K, in K components (m).
* ``I_GK`` (:attr:`KaneBody.inertia`): central inertia tensor of K, K components (kg m²).

Coordinates, speeds and state (eq. 1)
-------------------------------------
* ``x = [ε (4N), s (3N)]`` (7N generalised coordinates):
  - ``ε_K = [ε_K1, ε_K2, ε_K3, ε_K4]``: Euler parameters of body K relative to R, **in the
    seed's order: vector part first, scalar ε_K4 last**. The project elsewhere uses scalar-first
    quaternions ``[w, x, y, z]``; ``ε_K = [x, y, z, w]`` of the quaternion of the DCM
    ``P_{K/R}`` (body -> inertial, ``[v]_R = P_{K/R} [v]_K``). Convert with
    :func:`euler_parameters_from_quaternion` / :func:`quaternion_from_euler_parameters`;
    3-2-1 Euler angles with :func:`titopfmu.spatial.rotations.quaternion_from_euler`.
  - ``s_K``: translation of O_K relative to Q_K, in J components (m) (R components if L(K) = 0).
* ``y = [ω (3N), ṡ (3N)]`` (6N generalised speeds): ``ω_K`` the angular velocity of K in R, K
  components (rad/s); ``ṡ_K`` the time derivative of the J components of s_K (m/s).
* ODE state ``z = [x, y]`` (13N); see :func:`pack_state` / :func:`unpack_state`.

The seed's transformation matrix ``R_K`` (eq. 3) maps R components to K components,
``{e}_K = [R_K]{N}``, so ``[R_K]^T = P_{K/R}``. ε is normalised before use (eq. 3 is a rotation
only for unit ε); :func:`kinematic_rates` can add a norm-restoring term.

Loads
-----
Each body carries its weight ``m_K g`` and, optionally, loads from a callable ``loads(t, kin)``
(:class:`KaneKinematics` ``kin``) that returns ``(F, M)``: ``F`` (N, 3) forces at G_K in R
components (N), ``M`` (N, 3) moments in K components (N m), the equivalent force system of
eq. (29). :class:`JointSpringDamper6` is such a callable (a 6-dof spring-damper between each body
and its lower body).

Equations
---------
:func:`kinematics` builds positions (11-13), velocities (14-17), the partial angular velocity
matrices (8), the partial velocity matrices of the origins and mass centres (18-21) and their time
derivatives (26-28); :func:`mass_matrix_and_forcing` the generalised mass matrix and forcing
(34-36) with the generalised active forces (29); :func:`generalized_accelerations` solves
``[A]{ẏ} = {f}`` (34); :func:`kinematic_rates` gives ``ẋ`` (37-39). :func:`rhs` and
:func:`simulate` integrate the 13N first-order equations with ``scipy.integrate.solve_ivp``.
:func:`eight_body_example` is the seed's eight-body system, L = (0, 1, 2, 1, 2, 1, 1, 7).

The partial velocity matrices are kept dense (3 × 6N per body), exactly as in the seed: the cost
is O(N²) per evaluation, fine for a reference solver on tens of bodies.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike
from scipy.integrate import solve_ivp
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from ..blocks.base import InertiaWarning, ParameterError, TitopError
from ..spatial.algebra import FloatArray, skew

__all__ = [
    "EIGHT_BODY_CONNECTION",
    "EIGHT_BODY_SPRINGS",
    "EIGHT_BODY_TABLE",
    "JointSpringDamper6",
    "KaneBody",
    "KaneKinematics",
    "KaneModel",
    "KaneState",
    "KaneStateError",
    "Loads",
    "angular_momentum",
    "applied_loads",
    "dcm_from_euler_parameters",
    "eight_body_example",
    "eight_body_initial_state",
    "euler_parameters_from_quaternion",
    "generalized_accelerations",
    "generalized_forces",
    "gravity_potential_energy",
    "kane_model",
    "kinematic_rates",
    "kinematics",
    "kinetic_energy",
    "linear_momentum",
    "mass_matrix_and_forcing",
    "pack_state",
    "quaternion_from_euler_parameters",
    "rhs",
    "simulate",
    "transformation_matrices",
    "transformation_matrix",
    "unpack_state",
]

#: Relative tolerance on the symmetry of an inertia tensor.
SYMMETRY_RTOL = 1e-9


class KaneStateError(TitopError):
    """A state given to the Kane solver is malformed (wrong size, non-finite, zero ε)."""


class Loads(Protocol):
    """``loads(t, kin) -> (F, M)``: forces at the mass centres (N, 3), R components (N), and
    moments (N, 3), body components (N m); see the module docstring."""

    def __call__(self, t: float, kin: KaneKinematics) -> tuple[ArrayLike, ArrayLike]: ...


# ----------------------------------------------------------------------------------------------
# model
# ----------------------------------------------------------------------------------------------


def _vector(owner: str, parameter: str, value: ArrayLike, size: int) -> FloatArray:
    try:
        v = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise ParameterError(owner, parameter, f"not a numeric vector ({exc})") from None
    if v.size != size:
        raise ParameterError(owner, parameter, f"expected {size} components, got {v.size}")
    if not np.all(np.isfinite(v)):
        raise ParameterError(owner, parameter, f"non-finite value {v.tolist()}")
    v.setflags(write=False)
    return v


def _inertia(owner: str, value: ArrayLike) -> FloatArray:
    """A central inertia tensor (kg m²): 3×3, finite, symmetric and positive definite (a free
    body with a singular inertia has a singular mass matrix). Principal moments violating the
    triangle inequality give an :class:`InertiaWarning` only."""
    try:
        i = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ParameterError(owner, "inertia", f"not a numeric matrix ({exc})") from None
    if i.shape != (3, 3):
        raise ParameterError(owner, "inertia", f"expected shape (3, 3), got {i.shape}")
    if not np.all(np.isfinite(i)):
        raise ParameterError(owner, "inertia", "non-finite entries")
    scale = max(float(np.max(np.abs(i))), np.finfo(float).tiny)
    if np.max(np.abs(i - i.T)) > SYMMETRY_RTOL * scale:
        raise ParameterError(owner, "inertia", f"not symmetric: {i.tolist()}")
    i = 0.5 * (i + i.T)
    lam = np.linalg.eigvalsh(i)
    if lam[0] <= 1e-12 * max(lam[2], 0.0) or lam[0] <= 0.0:
        raise ParameterError(
            owner,
            "inertia",
            f"must be positive definite (kg m², at the mass centre); principal moments "
            f"{lam.tolist()}. Each body of the Kane reference is free in 3 rotations, so a "
            "singular inertia makes the generalised mass matrix singular",
        )
    if lam[0] + lam[1] < lam[2] * (1.0 - 1e-9):
        warnings.warn(
            f"{owner}: principal moments {lam.tolist()} violate the triangle inequality",
            InertiaWarning,
            stacklevel=4,
        )
    i.setflags(write=False)
    return i


@dataclass(frozen=True, eq=False)
class KaneBody:
    """One body of a seed-003 system (frames and units: module docstring).

    ``parent``: L(K), 0 for the inertial frame or the 1-based number of the lower body;
    ``mass`` (kg); ``inertia``: I_GK, central, K components (kg m²); ``joint_point``: q_K, Q_K
    relative to O_J in J components (m); ``com``: r_K, G_K relative to O_K in K components (m);
    ``name``: used in error messages (default ``"body<K>"``).
    """

    parent: int
    mass: float
    inertia: FloatArray
    joint_point: FloatArray = field(default_factory=lambda: np.zeros(3))
    com: FloatArray = field(default_factory=lambda: np.zeros(3))
    name: str = ""


@dataclass(frozen=True, eq=False)
class KaneModel:
    """A seed-003 multibody system: bodies in the seed's numbering, gravity, optional loads.

    ``bodies[k]`` is body K = k + 1. ``gravity``: g in R components (m/s²). ``loads``: optional
    :class:`Loads` callable. Construction checks everything and raises a
    :class:`~titopfmu.blocks.base.ParameterError` naming the body and the parameter; the stored
    bodies are normalised copies (float arrays, default names filled in).
    """

    bodies: tuple[KaneBody, ...]
    gravity: FloatArray = field(default_factory=lambda: np.array([0.0, 0.0, -9.81]))
    loads: Loads | None = None
    name: str = "kane"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ParameterError(str(self.name), "name", "must be a non-empty string")
        try:
            bodies = tuple(self.bodies)
        except TypeError:
            raise ParameterError(self.name, "bodies", "must be a sequence of KaneBody") from None
        if not bodies:
            raise ParameterError(self.name, "bodies", "at least one body is needed")
        n = len(bodies)
        checked: list[KaneBody] = []
        for k, b in enumerate(bodies):
            K = k + 1
            if not isinstance(b, KaneBody):
                raise ParameterError(
                    f"body{K}", "body", f"expected a KaneBody, got {type(b).__name__}"
                )
            owner = b.name or f"body{K}"
            if not isinstance(owner, str):
                raise ParameterError(f"body{K}", "name", f"must be a string, got {owner!r}")
            L = b.parent
            if isinstance(L, (bool, np.bool_)) or not isinstance(L, (int, np.integer)):
                raise ParameterError(
                    owner, "parent", f"L({K}) must be an integer (0 = inertial frame), got {L!r}"
                )
            L = int(L)
            if not 0 <= L < K:
                why = (
                    "a body cannot be its own lower body"
                    if L == K
                    else "higher-numbered lower body: not the seed's outward numbering of a tree"
                    if K < L <= n
                    else "no such body"
                )
                raise ParameterError(
                    owner,
                    "parent",
                    f"body-connection array entry L({K}) = {L} must satisfy 0 <= L(K) < K "
                    f"({why}); bodies are numbered 1..{n} outward from the reference body 1, "
                    "0 is the inertial frame",
                )
            try:
                m = float(b.mass)
            except (TypeError, ValueError):
                raise ParameterError(owner, "mass", f"not a number: {b.mass!r}") from None
            if not math.isfinite(m) or m <= 0.0:
                raise ParameterError(owner, "mass", f"must be positive and finite (kg), got {m}")
            checked.append(
                KaneBody(
                    parent=L,
                    mass=m,
                    inertia=_inertia(owner, b.inertia),
                    joint_point=_vector(owner, "joint_point", b.joint_point, 3),
                    com=_vector(owner, "com", b.com, 3),
                    name=owner,
                )
            )
        names = [b.name for b in checked]
        dup = sorted({x for x in names if names.count(x) > 1})
        if dup:
            raise ParameterError(self.name, "bodies", f"duplicate body names {dup}")
        object.__setattr__(self, "bodies", tuple(checked))
        object.__setattr__(self, "gravity", _vector(self.name, "gravity", self.gravity, 3))
        if self.loads is not None and not callable(self.loads):
            raise ParameterError(
                self.name, "loads", f"must be callable loads(t, kin) -> (F, M), got {self.loads!r}"
            )

    # -- topology -------------------------------------------------------------------------------

    @property
    def n(self) -> int:
        """Number of bodies N."""
        return len(self.bodies)

    @cached_property
    def connection(self) -> tuple[int, ...]:
        """The body-connection array (L(1), ..., L(N)), 1-based, 0 = inertial frame."""
        return tuple(b.parent for b in self.bodies)

    @cached_property
    def depth(self) -> tuple[int, ...]:
        """``u_K``: the number of bodies below K (``L^{u_K}(K)`` is a body with L = 0; for the
        seed's single-root systems that body is body 1)."""
        u: list[int] = []
        for L in self.connection:
            u.append(0 if L == 0 else u[L - 1] + 1)
        return tuple(u)

    @cached_property
    def masses(self) -> FloatArray:
        """Masses m_K (kg), shape (N,)."""
        return np.array([b.mass for b in self.bodies])

    @cached_property
    def joint_points(self) -> FloatArray:
        """q_K (N, 3), J components (m)."""
        return np.array([b.joint_point for b in self.bodies])

    @cached_property
    def coms(self) -> FloatArray:
        """r_K (N, 3), K components (m)."""
        return np.array([b.com for b in self.bodies])

    @cached_property
    def inertias(self) -> FloatArray:
        """I_GK (N, 3, 3), K components (kg m²)."""
        return np.array([b.inertia for b in self.bodies])

    @cached_property
    def partial_angular_velocities(self) -> FloatArray:
        """``[ω_K,y]`` (eq. 8), shape (N, 3, 6N): the identity in the ω_K columns, constant."""
        n = self.n
        W = np.zeros((n, 3, 6 * n))
        for k in range(n):
            W[k, :, 3 * k : 3 * k + 3] = np.eye(3)
        W.setflags(write=False)
        return W

    @cached_property
    def relative_partial_velocities(self) -> FloatArray:
        """``[^J v_OK,y]`` (eqs. 19-20), shape (N, 3, 6N): the identity in the ṡ_K columns."""
        n = self.n
        V = np.zeros((n, 3, 6 * n))
        for k in range(n):
            V[k, :, 3 * n + 3 * k : 3 * n + 3 * k + 3] = np.eye(3)
        V.setflags(write=False)
        return V

    @property
    def n_coordinates(self) -> int:
        """7N: size of x."""
        return 7 * self.n

    @property
    def n_speeds(self) -> int:
        """6N: size of y."""
        return 6 * self.n


def kane_model(
    connection: Sequence[int],
    mass: Sequence[float],
    inertia: Sequence[ArrayLike],
    joint_points: Sequence[ArrayLike] | None = None,
    coms: Sequence[ArrayLike] | None = None,
    gravity: ArrayLike = (0.0, 0.0, -9.81),
    *,
    names: Sequence[str] | None = None,
    loads: Loads | None = None,
    name: str = "kane",
) -> KaneModel:
    """Build a :class:`KaneModel` from per-body arrays in the seed's numbering.

    ``connection``: L(K), K = 1..N; ``mass`` (kg); ``inertia``: I_GK (3×3, K components, kg m²);
    ``joint_points``: q_K (J components, m, default 0); ``coms``: r_K (K components, m, default
    0); ``gravity`` (R components, m/s²).
    """
    try:
        L = list(connection)
    except TypeError:
        raise ParameterError(name, "connection", f"not a sequence: {connection!r}") from None
    n = len(L)
    arrays = {"mass": mass, "inertia": inertia, "joint_points": joint_points, "coms": coms}
    arrays["names"] = names
    for pname, arr in arrays.items():
        if arr is None:
            continue
        try:
            size = len(arr)  # type: ignore[arg-type]
        except TypeError:
            raise ParameterError(name, pname, "must be a sequence, one entry per body") from None
        if size != n:
            raise ParameterError(
                name, pname, f"{size} entries for {n} bodies (connection array {L})"
            )
    bodies = tuple(
        KaneBody(
            parent=L[k],
            mass=mass[k],
            inertia=inertia[k],
            joint_point=np.zeros(3) if joint_points is None else joint_points[k],
            com=np.zeros(3) if coms is None else coms[k],
            name="" if names is None else names[k],
        )
        for k in range(n)
    )
    return KaneModel(bodies, gravity, loads, name)  # type: ignore[arg-type]  # checked there


# ----------------------------------------------------------------------------------------------
# Euler parameters (eqs. 3, 5, 39)
# ----------------------------------------------------------------------------------------------


def euler_parameters_from_quaternion(q_wxyz: ArrayLike) -> FloatArray:
    """Seed Euler parameters ``[ε1, ε2, ε3, ε4]`` (scalar last) of project quaternions
    ``[w, x, y, z]`` (scalar first), same attitude; works on (..., 4) arrays."""
    q = np.asarray(q_wxyz, dtype=float)
    return q[..., [1, 2, 3, 0]]


def quaternion_from_euler_parameters(eps: ArrayLike) -> FloatArray:
    """Project quaternions ``[w, x, y, z]`` of seed Euler parameters ``[ε1, ε2, ε3, ε4]``."""
    e = np.asarray(eps, dtype=float)
    return e[..., [3, 0, 1, 2]]


def transformation_matrix(eps: ArrayLike) -> FloatArray:
    """``[R_K]`` of eq. (3), ``{e}_K = [R_K]{N}``: R components -> K components (ε normalised)."""
    e1, e2, e3, e4 = np.asarray(eps, dtype=float) / np.linalg.norm(eps)
    a, b, c, d = e1 * e1, e2 * e2, e3 * e3, e4 * e4
    return np.array(
        [
            [a - b - c + d, 2.0 * (e1 * e2 + e3 * e4), 2.0 * (e1 * e3 - e2 * e4)],
            [2.0 * (e1 * e2 - e3 * e4), -a + b - c + d, 2.0 * (e2 * e3 + e1 * e4)],
            [2.0 * (e1 * e3 + e2 * e4), 2.0 * (e2 * e3 - e1 * e4), -a - b + c + d],
        ]
    )


def transformation_matrices(eps: ArrayLike) -> FloatArray:
    """Eq. (3) for many bodies at once: ``eps`` (N, 4) -> ``[R_K]`` (N, 3, 3) (ε normalised)."""
    e = np.asarray(eps, dtype=float)
    e = e / np.linalg.norm(e, axis=1)[:, None]
    e1, e2, e3, e4 = e[:, 0], e[:, 1], e[:, 2], e[:, 3]
    a, b, c, d = e1 * e1, e2 * e2, e3 * e3, e4 * e4
    R = np.empty((e.shape[0], 3, 3))
    R[:, 0, 0] = a - b - c + d
    R[:, 0, 1] = 2.0 * (e1 * e2 + e3 * e4)
    R[:, 0, 2] = 2.0 * (e1 * e3 - e2 * e4)
    R[:, 1, 0] = 2.0 * (e1 * e2 - e3 * e4)
    R[:, 1, 1] = -a + b - c + d
    R[:, 1, 2] = 2.0 * (e2 * e3 + e1 * e4)
    R[:, 2, 0] = 2.0 * (e1 * e3 + e2 * e4)
    R[:, 2, 1] = 2.0 * (e2 * e3 - e1 * e4)
    R[:, 2, 2] = -a - b + c + d
    return R


def _skews(v: FloatArray) -> FloatArray:
    """``skew`` of each row of v (N, 3) -> (N, 3, 3), ``ṽ w = v × w``."""
    out = np.zeros((v.shape[0], 3, 3))
    out[:, 0, 1], out[:, 0, 2] = -v[:, 2], v[:, 1]
    out[:, 1, 0], out[:, 1, 2] = v[:, 2], -v[:, 0]
    out[:, 2, 0], out[:, 2, 1] = -v[:, 1], v[:, 0]
    return out


def dcm_from_euler_parameters(eps: ArrayLike) -> FloatArray:
    """``P_{K/R} = [R_K]^T``: K components -> R components (the project's DCM convention)."""
    return transformation_matrix(eps).T


def _E_transpose(eps: FloatArray) -> FloatArray:
    """``[E_K]^T`` with its fourth column removed, eq. (39) (4×3)."""
    e1, e2, e3, e4 = eps
    return np.array([[e4, -e3, e2], [e3, e4, -e1], [-e2, e1, e4], [-e1, -e2, -e3]])


# ----------------------------------------------------------------------------------------------
# state vectors (eq. 1)
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class KaneState:
    """A state split per body: ``quaternion`` (N, 4) ``[w, x, y, z]`` of P_{K/R}; ``s`` (N, 3)
    J components (m); ``omega`` (N, 3) K components (rad/s); ``sdot`` (N, 3) J components (m/s)."""

    quaternion: FloatArray
    s: FloatArray
    omega: FloatArray
    sdot: FloatArray


def pack_state(
    model: KaneModel,
    quaternion: ArrayLike | None = None,
    s: ArrayLike | None = None,
    omega: ArrayLike | None = None,
    sdot: ArrayLike | None = None,
) -> FloatArray:
    """ODE state ``z = [ε (4N), s (3N), ω (3N), ṡ (3N)]`` (eq. 1) from per-body arrays.

    ``quaternion`` (N, 4): scalar-first ``[w, x, y, z]`` of P_{K/R} (default identity), stored
    normalised in the seed's order ε = [x, y, z, w]; ``s``, ``omega``, ``sdot`` (N, 3) as in
    :class:`KaneState` (default zero).
    """
    n = model.n

    def arr(v: ArrayLike | None, width: int, what: str, default: FloatArray) -> FloatArray:
        if v is None:
            return default
        a = np.array(v, dtype=float)
        if a.size != n * width:
            raise KaneStateError(f"{what}: expected {n}×{width} values, got shape {a.shape}")
        a = a.reshape(n, width)
        if not np.all(np.isfinite(a)):
            raise KaneStateError(f"{what}: non-finite values")
        return a

    ident = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))
    quat = arr(quaternion, 4, "quaternion", ident)
    norms = np.linalg.norm(quat, axis=1)
    if np.any(norms < 1e-12):
        k = int(np.argmin(norms))
        raise KaneStateError(f"quaternion of {model.bodies[k].name} has zero norm")
    eps = euler_parameters_from_quaternion(quat / norms[:, None])
    zeros = np.zeros((n, 3))
    return np.concatenate(
        [
            eps.reshape(-1),
            arr(s, 3, "s", zeros).reshape(-1),
            arr(omega, 3, "omega", zeros).reshape(-1),
            arr(sdot, 3, "sdot", zeros).reshape(-1),
        ]
    )


def unpack_state(model: KaneModel, z: ArrayLike) -> KaneState:
    """Split ``z`` (13N) into a :class:`KaneState` (quaternions back in ``[w, x, y, z]``)."""
    x, y = _split(model, z)
    n = model.n
    return KaneState(
        quaternion_from_euler_parameters(x[: 4 * n].reshape(n, 4)),
        x[4 * n :].reshape(n, 3).copy(),
        y[: 3 * n].reshape(n, 3).copy(),
        y[3 * n :].reshape(n, 3).copy(),
    )


def _split(model: KaneModel, z: ArrayLike) -> tuple[FloatArray, FloatArray]:
    z = np.asarray(z, dtype=float).reshape(-1)
    if z.size != 13 * model.n:
        raise KaneStateError(
            f"state z = [x, y] of {model.n} bodies has {13 * model.n} entries (7N + 6N), "
            f"got {z.size}"
        )
    return z[: 7 * model.n], z[7 * model.n :]


def _check_xy(model: KaneModel, x: ArrayLike, y: ArrayLike) -> tuple[FloatArray, FloatArray]:
    n = model.n
    x = np.asarray(x, dtype=float).reshape(-1)
    y = np.asarray(y, dtype=float).reshape(-1)
    if x.size != 7 * n:
        raise KaneStateError(f"x = [ε, s] of {n} bodies has {7 * n} entries, got {x.size}")
    if y.size != 6 * n:
        raise KaneStateError(f"y = [ω, ṡ] of {n} bodies has {6 * n} entries, got {y.size}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise KaneStateError("non-finite entries in the state")
    return x, y


# ----------------------------------------------------------------------------------------------
# kinematics (eqs. 3, 8, 11-21, 26-28)
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class KaneKinematics:
    """Kinematic quantities of all bodies at one state (index k = K - 1).

    ``x``, ``y``: the state; ``R`` (N, 3, 3): [R_K] of eq. (3) (R -> K components);
    ``omega`` (N, 3): ω_K, K components (rad/s); ``p_O``, ``p_G`` (N, 3): positions of O_K and
    G_K, R components (m) (eqs. 12-13); ``v_O``, ``v_G`` (N, 3): their velocities in R, R
    components (m/s) (eqs. 15, 17); ``W`` (N, 3, 6N): [ω_K,y] (eq. 8); ``VO``, ``VG``
    (N, 3, 6N): [v_OK,y], [v_GK,y] (eqs. 18, 21); ``VOdot``, ``VGdot``: their time derivatives
    (eqs. 28, 27).
    """

    x: FloatArray
    y: FloatArray
    R: FloatArray
    omega: FloatArray
    p_O: FloatArray
    p_G: FloatArray
    v_O: FloatArray
    v_G: FloatArray
    W: FloatArray
    VO: FloatArray
    VG: FloatArray
    VOdot: FloatArray
    VGdot: FloatArray
    connection: tuple[int, ...]

    @property
    def dcm(self) -> FloatArray:
        """P_{K/R} = [R_K]^T (N, 3, 3): K components -> R components."""
        return np.transpose(self.R, (0, 2, 1))


def kinematics(model: KaneModel, x: ArrayLike, y: ArrayLike) -> KaneKinematics:
    """Positions, velocities, partial velocities and their derivatives at ``(x, y)``.

    Recursion over K = 1..N (lower bodies first, guaranteed by L(K) < K), J = L(K); for J = 0
    the inertial frame has [R_0] = 1 and zero position, velocity and partial velocities.
    """
    x, y = _check_xy(model, x, y)
    n = model.n
    eps = x[: 4 * n].reshape(n, 4)
    norms = np.linalg.norm(eps, axis=1)
    if np.any(norms < 1e-12):
        k = int(np.argmin(norms))
        raise KaneStateError(f"Euler parameters of {model.bodies[k].name} have zero norm")
    s = x[4 * n :].reshape(n, 3)
    omega = y[: 3 * n].reshape(n, 3)
    sdot = y[3 * n :].reshape(n, 3)
    W = model.partial_angular_velocities  # eq. (8); constant, so its derivative is 0 (26)
    Vrel = model.relative_partial_velocities  # eqs. (19)-(20)

    R = transformation_matrices(eps)  # eq. (3), all bodies
    RT = np.transpose(R, (0, 2, 1))
    com = model.coms
    qs_all = model.joint_points + s  # {q_K + s_K}, J components
    qs_t_all = _skews(qs_all)
    w_t_all = _skews(omega)
    sd_t_all = _skews(sdot)
    r_t_all = _skews(com)
    p_O = np.empty((n, 3))
    v_O = np.empty((n, 3))
    VO = np.empty((n, 3, 6 * n))
    VOd = np.empty((n, 3, 6 * n))
    eye3 = np.eye(3)
    zero3 = np.zeros(3)
    zero33 = np.zeros((3, 3))
    zeroV = np.zeros((3, 6 * n))
    for k, body in enumerate(model.bodies):
        j = body.parent - 1
        if j < 0:  # J = 0: the inertial frame
            RJt, pOJ, vOJ, wJ_t = eye3, zero3, zero3, zero33
            VOJ, VOdJ, WJ = zeroV, zeroV, zeroV
        else:
            RJt, pOJ, vOJ, wJ_t = RT[j], p_O[j], v_O[j], w_t_all[j]
            VOJ, VOdJ, WJ = VO[j], VOd[j], W[j]
        qs, qs_t = qs_all[k], qs_t_all[k]
        # position and velocity of O_K, eqs. (12) and (15)
        p_O[k] = pOJ + RJt @ qs
        v_O[k] = vOJ + RJt @ (sdot[k] + wJ_t @ qs)
        # partial velocity matrix of O_K, eq. (18), and its time derivative, eq. (28)
        VO[k] = VOJ - RJt @ qs_t @ WJ + RJt @ Vrel[k]
        VOd[k] = VOdJ - RJt @ (wJ_t @ qs_t + sd_t_all[k]) @ WJ + RJt @ wJ_t @ Vrel[k]
    # mass centres: position (13), velocity (17), partial velocities (21) and derivative (27)
    p_G = p_O + np.einsum("kij,kj->ki", RT, com)
    v_G = v_O + np.einsum("kij,kj->ki", RT, np.cross(omega, com))
    VG = VO - np.einsum("kij,kjl,kln->kin", RT, r_t_all, W)
    VGd = VOd - np.einsum("kij,kjl,kln->kin", RT, w_t_all @ r_t_all, W)
    return KaneKinematics(
        x, y, R, omega.copy(), p_O, p_G, v_O, v_G, W, VO, VG, VOd, VGd, model.connection
    )


# ----------------------------------------------------------------------------------------------
# dynamics (eqs. 29-36)
# ----------------------------------------------------------------------------------------------


def applied_loads(model: KaneModel, t: float, kin: KaneKinematics) -> tuple[FloatArray, FloatArray]:
    """Equivalent force system of each body: ``F`` (N, 3) at G_K, R components (N), weight
    ``m_K g`` plus the model's loads; ``M`` (N, 3), K components (N m)."""
    n = model.n
    F = model.masses[:, None] * model.gravity[None, :]
    M = np.zeros((n, 3))
    if model.loads is not None:
        out = model.loads(t, kin)
        try:
            Fx, Mx = out
            Fx = np.asarray(Fx, dtype=float)
            Mx = np.asarray(Mx, dtype=float)
        except (TypeError, ValueError):
            raise TitopError(
                f"{model.name}: loads(t, kin) must return (F, M), arrays of shape ({n}, 3); "
                f"got {out!r}"
            ) from None
        if Fx.shape != (n, 3) or Mx.shape != (n, 3):
            raise TitopError(
                f"{model.name}: loads(t, kin) must return F and M of shape ({n}, 3); got "
                f"{Fx.shape} and {Mx.shape}"
            )
        if not (np.all(np.isfinite(Fx)) and np.all(np.isfinite(Mx))):
            raise TitopError(f"{model.name}: loads(t, kin) returned non-finite values at t={t}")
        F = F + Fx
        M = M + Mx
    return F, M


def generalized_forces(kin: KaneKinematics, F: ArrayLike, M: ArrayLike) -> FloatArray:
    """Generalised active forces, eq. (29): ``Σ_K [v_GK,y]^T {F_K} + [ω_K,y]^T {M'_K}`` (6N).

    ``F`` (N, 3): forces at the mass centres, R components (N); ``M`` (N, 3): moments, body
    components (N m).
    """
    F = np.asarray(F, dtype=float)
    M = np.asarray(M, dtype=float)
    n3 = kin.VG.shape[0] * 3
    return kin.VG.reshape(n3, -1).T @ F.reshape(n3) + kin.W.reshape(n3, -1).T @ M.reshape(n3)


def mass_matrix_and_forcing(
    model: KaneModel, x: ArrayLike, y: ArrayLike, t: float = 0.0
) -> tuple[FloatArray, FloatArray, KaneKinematics]:
    """Generalised mass matrix ``[A]`` (6N×6N, eq. 35) and forcing ``{f}`` (6N, eq. 36) at
    ``(t, x, y)``, plus the :class:`KaneKinematics` they were built from.

    ``[A] = Σ m_K [v_GK,y]^T [v_GK,y] + [ω_K,y]^T [I_GK] [ω_K,y]``;
    ``{f} = Σ [v_GK,y]^T ({F_K} - m_K [v̇_GK,y]{y}) + [ω_K,y]^T ({M'_K} - [ω̃_K][I_GK]{ω_K})``
    (the [ω̇_K,y]{y} term vanishes by eq. 26).
    """
    kin = kinematics(model, x, y)
    m = model.masses
    inertia = model.inertias
    # eq. (35)
    A = np.tensordot(m[:, None, None] * kin.VG, kin.VG, axes=([0, 1], [0, 1]))
    A += np.tensordot(kin.W, inertia @ kin.W, axes=([0, 1], [0, 1]))
    A = 0.5 * (A + A.T)
    # eq. (36), with the applied loads of eq. (29)
    F, M = applied_loads(model, t, kin)
    aG_vel = kin.VGdot @ kin.y  # [v̇_GK,y]{y}: velocity part of a_GK
    h = np.einsum("kij,kj->ki", inertia, kin.omega)  # I_GK ω_K
    gyro = np.cross(kin.omega, h)  # [ω̃_K][I_GK]{ω_K}
    f = generalized_forces(kin, F - m[:, None] * aG_vel, M - gyro)
    return A, f, kin


def generalized_accelerations(
    model: KaneModel, x: ArrayLike, y: ArrayLike, t: float = 0.0
) -> FloatArray:
    """``{ẏ} = [ω̇ (3N, K components, rad/s²), s̈ (3N, J components, m/s²)]`` from eq. (34),
    ``[A]{ẏ} = {f}``, solved by Cholesky ([A] is symmetric positive definite)."""
    A, f, _ = mass_matrix_and_forcing(model, x, y, t)
    try:
        return cho_solve(cho_factor(A), f)
    except LinAlgError:  # pragma: no cover - excluded by the model checks
        raise TitopError(
            f"{model.name}: generalised mass matrix is not positive definite"
        ) from None


def kinematic_rates(model: KaneModel, x: ArrayLike, y: ArrayLike, gain: float = 0.0) -> FloatArray:
    """``{ẋ} = [ε̇ (4N), ṡ (3N)]``: eq. (37) ``ε̇_K = ½ [E_K]^T ω_K`` with [E_K]^T of eq. (39),
    and eq. (38) ``ṡ = y_2``.

    ``gain`` (1/s, default 0 = the seed's equations): adds ``gain (1 - |ε_K|²) ε_K``, which drives
    |ε_K| back to 1 without changing the attitude ε_K encodes.
    """
    x, y = _check_xy(model, x, y)
    n = model.n
    eps = x[: 4 * n].reshape(n, 4)
    omega = y[: 3 * n].reshape(n, 3)
    eps_dot = np.empty((n, 4))
    for k in range(n):
        eps_dot[k] = 0.5 * _E_transpose(eps[k]) @ omega[k]
    if gain:
        eps_dot += gain * (1.0 - np.sum(eps * eps, axis=1))[:, None] * eps
    return np.concatenate([eps_dot.reshape(-1), y[3 * n :]])


def rhs(model: KaneModel, gain: float = 1.0) -> Callable[[float, FloatArray], FloatArray]:
    """``ż = f(t, z)`` for ``z = [x, y]`` (13N): eqs. (37)-(38) then (34).

    ``gain``: Euler-parameter norm-restoring gain of :func:`kinematic_rates` (1/s).
    """

    def f(t: float, z: FloatArray) -> FloatArray:
        x, y = _split(model, z)
        return np.concatenate(
            [kinematic_rates(model, x, y, gain), generalized_accelerations(model, x, y, t)]
        )

    return f


def simulate(
    model: KaneModel,
    z0: ArrayLike,
    t_final: float,
    t_eval: ArrayLike | None = None,
    *,
    t0: float = 0.0,
    method: str = "DOP853",
    rtol: float = 1e-10,
    atol: float = 1e-12,
    gain: float = 1.0,
    **kwargs: Any,
) -> Any:
    """Integrate the 13N equations from ``z0`` (see :func:`pack_state`) over ``[t0, t_final]`` (s)
    with ``scipy.integrate.solve_ivp``; returns its result (``sol.y`` has one column per time).

    Raises :class:`KaneStateError` on a malformed ``z0`` and :class:`TitopError` if the
    integration fails.
    """
    z0 = np.asarray(z0, dtype=float).reshape(-1)
    x0, y0 = _split(model, z0)
    _check_xy(model, x0, y0)
    if not (math.isfinite(t_final) and t_final > t0):
        raise ParameterError(
            model.name, "t_final", f"must be finite and > t0 = {t0}, got {t_final}"
        )
    sol = solve_ivp(
        rhs(model, gain),
        (t0, t_final),
        z0,
        method=method,
        rtol=rtol,
        atol=atol,
        t_eval=t_eval,
        **kwargs,
    )
    if not sol.success:
        raise TitopError(f"{model.name}: integration failed: {sol.message}")
    return sol


# ----------------------------------------------------------------------------------------------
# invariants
# ----------------------------------------------------------------------------------------------


def kinetic_energy(model: KaneModel, z: ArrayLike) -> float:
    """``Σ ½ m_K |v_GK|² + ½ ω_K·I_GK ω_K`` (J) at the state z."""
    kin = kinematics(model, *_split(model, z))
    t = 0.5 * float(model.masses @ np.sum(kin.v_G * kin.v_G, axis=1))
    for k, b in enumerate(model.bodies):
        t += 0.5 * float(kin.omega[k] @ b.inertia @ kin.omega[k])
    return t


def gravity_potential_energy(model: KaneModel, z: ArrayLike) -> float:
    """``-Σ m_K g·p_GK`` (J), zero at the inertial origin."""
    kin = kinematics(model, *_split(model, z))
    return -float(model.masses @ (kin.p_G @ model.gravity))


def linear_momentum(model: KaneModel, z: ArrayLike) -> FloatArray:
    """``Σ m_K v_GK`` (kg m/s), R components."""
    kin = kinematics(model, *_split(model, z))
    return model.masses @ kin.v_G


def angular_momentum(model: KaneModel, z: ArrayLike) -> FloatArray:
    """Angular momentum about the inertial origin (kg m²/s), R components:
    ``Σ p_GK × m_K v_GK + [R_K]^T I_GK ω_K``."""
    kin = kinematics(model, *_split(model, z))
    h = np.zeros(3)
    for k, b in enumerate(model.bodies):
        h += skew(kin.p_G[k]) @ (b.mass * kin.v_G[k]) + kin.R[k].T @ (b.inertia @ kin.omega[k])
    return h


# ----------------------------------------------------------------------------------------------
# a 6-dof spring-damper between each body and its lower body
# ----------------------------------------------------------------------------------------------


def _rotation_vector(C: FloatArray) -> FloatArray:
    """Rotation vector φ (rad, |φ| <= π) of a rotation matrix C = exp(φ̃)."""
    w = 0.5 * np.array([C[2, 1] - C[1, 2], C[0, 2] - C[2, 0], C[1, 0] - C[0, 1]])
    sn = float(np.linalg.norm(w))
    cs = 0.5 * (float(np.trace(C)) - 1.0)
    angle = math.atan2(sn, cs)
    if sn < 1e-8:
        if cs > 0.0:  # small angle: sin(a)/a ≈ 1 - a²/6
            return w * (1.0 + angle * angle / 6.0)
        # angle ≈ π: axis from the symmetric part
        B = 0.5 * (C + C.T) - cs * np.eye(3)
        i = int(np.argmax(np.diag(B)))
        axis = B[:, i] / math.sqrt(max(B[i, i], 1e-300))
        return angle * axis
    return w * (angle / sn)


@dataclass(frozen=True)
class JointSpringDamper6:
    """A 6-dof spring-damper between every body K and its lower body J = L(K), usable as
    :attr:`KaneModel.loads`. Bodies with L(K) = 0 are tied to the inertial frame only when
    ``ground`` is true (then s_K is measured from the fixed point Q_K and φ_K is the attitude).

    It is a pair of opposite wrenches at O_K (on K, and on the point of J that coincides with
    O_K): force ``f = [R_J]^T(-k s_K - c ṡ_K)`` (R components, N) and torque
    ``τ = -k_rot φ_K - c_rot (ω_K - [R_K][R_J]^T ω_J)`` (K components, N m), φ_K the rotation
    vector of K relative to J (rad). Its power is ``-dV/dt - c|ṡ|² - c_rot|ω_rel|²`` with
    ``V = Σ ½ k |s_K|² + ½ k_rot |φ_K|²`` (:meth:`energy`), so undamped it conserves
    ``T + V + V_gravity``. ``stiffness`` (N/m), ``damping`` (N s/m), ``rot_stiffness``
    (N m/rad), ``rot_damping`` (N m s/rad): scalars shared by all bodies.
    """

    stiffness: float = 0.0
    damping: float = 0.0
    rot_stiffness: float = 0.0
    rot_damping: float = 0.0
    ground: bool = False

    def _relative(self, kin: KaneKinematics) -> tuple[FloatArray, FloatArray, FloatArray]:
        """(indices k of the tied bodies, their lower indices j (-1: inertial frame), [R_J])."""
        conn = np.asarray(kin.connection, dtype=int)
        k = np.arange(conn.size) if self.ground else np.flatnonzero(conn > 0)
        j = conn[k] - 1
        RJ = np.where((j >= 0)[:, None, None], kin.R[np.maximum(j, 0)], np.eye(3))
        return k, j, RJ

    def joint_wrenches(self, kin: KaneKinematics) -> tuple[FloatArray, FloatArray, FloatArray]:
        """(tied body indices k, f_J (J components, N), τ_K (K components, N m)), one row per
        tied body."""
        n = kin.R.shape[0]
        k, j, RJ = self._relative(kin)
        s = kin.x[4 * n :].reshape(n, 3)[k]
        sd = kin.y[3 * n :].reshape(n, 3)[k]
        wJ = np.where((j >= 0)[:, None], kin.omega[np.maximum(j, 0)], 0.0)
        C_rel = RJ @ np.transpose(kin.R[k], (0, 2, 1))  # K components -> J components
        phi = np.array([_rotation_vector(c) for c in C_rel]).reshape(-1, 3)
        w_rel = kin.omega[k] - np.einsum("kji,kj->ki", C_rel, wJ)
        f_J = -self.stiffness * s - self.damping * sd
        tau_K = -self.rot_stiffness * phi - self.rot_damping * w_rel
        return k, f_J, tau_K

    def __call__(self, t: float, kin: KaneKinematics) -> tuple[FloatArray, FloatArray]:
        n = kin.R.shape[0]
        F = np.zeros((n, 3))
        M = np.zeros((n, 3))
        k, f_J, tau_K = self.joint_wrenches(kin)
        if k.size == 0:
            return F, M
        _, j, RJ = self._relative(kin)
        f = np.einsum("kji,kj->ki", RJ, f_J)  # R components
        RK = kin.R[k]
        # on K at O_K: force f at G_K plus the moment (O_K - G_K) × f, K components
        F[k] += f
        M[k] += np.einsum("kij,kj->ki", RK, np.cross(kin.p_O[k] - kin.p_G[k], f)) + tau_K
        # reaction on J at the point coinciding with O_K (not for the inertial frame)
        has = j >= 0
        if np.any(has):
            kk, jj, ff, RJr = k[has], j[has], f[has], RJ[has]
            tau_R = np.einsum("kji,kj->ki", kin.R[kk], tau_K[has])  # R components
            mJ = np.cross(kin.p_O[kk] - kin.p_G[jj], -ff) - tau_R
            np.add.at(F, jj, -ff)
            np.add.at(M, jj, np.einsum("kij,kj->ki", RJr, mJ))
        return F, M

    def energy(self, model: KaneModel, z: ArrayLike) -> float:
        """``V = Σ ½ k |s_K|² + ½ k_rot |φ_K|²`` (J) over the tied bodies, at the state z."""
        kin = kinematics(model, *_split(model, z))
        k, _, RJ = self._relative(kin)
        s = kin.x[4 * model.n :].reshape(model.n, 3)[k]
        C_rel = RJ @ np.transpose(kin.R[k], (0, 2, 1))
        phi = np.array([_rotation_vector(c) for c in C_rel]).reshape(-1, 3)
        return 0.5 * self.stiffness * float(np.sum(s * s)) + 0.5 * self.rot_stiffness * float(
            np.sum(phi * phi)
        )


# ----------------------------------------------------------------------------------------------
# the eight-body example of seed 003
# ----------------------------------------------------------------------------------------------

#: Body-connection array of the seed's eight-body system.
EIGHT_BODY_CONNECTION: tuple[int, ...] = (0, 1, 2, 1, 2, 1, 1, 7)


def _box_inertia(m: float, a: float, b: float, c: float) -> FloatArray:
    """Central inertia (kg m²) of a homogeneous box of mass m (kg) and edges a, b, c (m) along
    the body axes e1, e2, e3."""
    return m / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


def _rot_z(angle: float) -> FloatArray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


#: Parameters of :func:`eight_body_example`, one row per body K = 1..8:
#: (name, L(K), mass (kg), box edges along e1, e2, e3 (m), q_K (m, J components), r_K (m, K
#: components)). Bodies are homogeneous boxes; body 5's box is turned 30° about e3.
EIGHT_BODY_TABLE: tuple[tuple[str, int, float, tuple, tuple, tuple], ...] = (
    ("hub", 0, 40.0, (1.0, 0.8, 0.6), (0.0, 0.0, 0.0), (0.02, -0.01, -0.03)),
    ("boom", 1, 4.0, (1.2, 0.2, 0.2), (0.5, 0.0, 0.0), (0.6, 0.0, 0.0)),
    ("outer_boom", 2, 2.0, (0.8, 0.15, 0.15), (1.2, 0.0, 0.0), (0.4, 0.0, 0.0)),
    ("panel", 1, 6.0, (1.6, 0.05, 0.8), (-0.5, 0.0, 0.0), (-0.8, 0.0, 0.0)),
    ("instrument", 2, 3.0, (0.3, 0.2, 0.2), (0.6, 0.0, 0.1), (0.0, 0.0, 0.1)),
    ("mast", 1, 1.5, (0.15, 1.0, 0.15), (0.0, 0.4, 0.0), (0.0, 0.5, 0.0)),
    ("arm", 1, 2.0, (0.2, 0.8, 0.2), (0.0, -0.4, 0.0), (0.0, -0.4, 0.0)),
    ("hand", 7, 1.2, (0.2, 0.6, 0.2), (0.0, -0.8, 0.0), (0.0, -0.3, 0.0)),
)

#: Default 6-dof spring-dampers of :func:`eight_body_example` (undamped: energy is conserved).
EIGHT_BODY_SPRINGS = JointSpringDamper6(stiffness=200.0, rot_stiffness=2.0)


def eight_body_example(
    gravity: ArrayLike = (0.0, 0.0, 0.0),
    springs: JointSpringDamper6 | None = EIGHT_BODY_SPRINGS,
) -> KaneModel:
    """The eight-body system of seed 003, L = (0, 1, 2, 1, 2, 1, 1, 7), with parameters chosen
    here (the seed gives none): a spacecraft-like hub (body 1) carrying a two-segment boom (2, 3)
    with an instrument (5) on its first segment, a panel (4), a mast (6) and a two-segment arm
    (7, 8); see :data:`EIGHT_BODY_TABLE` (masses 1.2-40 kg, homogeneous boxes, SI units).

    Every body is free (6 dof) relative to its lower body, as in the seed. ``springs``: the
    :class:`JointSpringDamper6` holding each body near its joint point (default
    :data:`EIGHT_BODY_SPRINGS`, 200 N/m and 2 N m/rad between bodies, none to the inertial frame,
    undamped; ``None`` for free bodies);
    ``gravity`` (R components, m/s², default zero: free flight).
    """
    inertias = []
    for name, _, m, (a, b, c), _, _ in EIGHT_BODY_TABLE:
        i = _box_inertia(m, a, b, c)
        if name == "instrument":
            Rz = _rot_z(math.radians(30.0))
            i = Rz @ i @ Rz.T
        inertias.append(i)
    return kane_model(
        [row[1] for row in EIGHT_BODY_TABLE],
        [row[2] for row in EIGHT_BODY_TABLE],
        inertias,
        [row[4] for row in EIGHT_BODY_TABLE],
        [row[5] for row in EIGHT_BODY_TABLE],
        gravity,
        names=[row[0] for row in EIGHT_BODY_TABLE],
        loads=springs,
        name="eight_body",
    )


def eight_body_initial_state(model: KaneModel | None = None) -> FloatArray:
    """A documented initial state z0 (13N) for :func:`eight_body_example`.

    Hub: 3-2-1 Euler angles [φ, θ, ψ] = [0.1, -0.2, 0.3] rad, s_1 = 0, ω_1 = [0.1, 0.2, 0.5]
    rad/s, ṡ_1 = [0.3, 0, 0.1] m/s. Body K > 1: attitude of its lower body turned by the
    rotation vector 0.05·[sin K, cos K, sin 2K] rad (in the lower body), s_K = 0.01·[cos K,
    sin K, cos 2K] m, ω_K = [R_K][R_J]^T ω_J + 0.2·[cos K, -sin K, 0.5] rad/s, ṡ_K =
    0.05·[sin 3K, cos 3K, 1] m/s.
    """
    from scipy.spatial.transform import Rotation

    model = eight_body_example() if model is None else model
    if model.connection != EIGHT_BODY_CONNECTION:
        raise ParameterError(
            model.name, "connection", f"expected {EIGHT_BODY_CONNECTION}, got {model.connection}"
        )
    n = model.n
    C = np.empty((n, 3, 3))  # P_{K/R}
    omega = np.empty((n, 3))
    s = np.zeros((n, 3))
    sdot = np.empty((n, 3))
    C[0] = Rotation.from_euler("ZYX", [0.3, -0.2, 0.1]).as_matrix()
    omega[0] = [0.1, 0.2, 0.5]
    sdot[0] = [0.3, 0.0, 0.1]
    for k in range(1, n):
        K = k + 1
        j = model.connection[k] - 1
        rel = Rotation.from_rotvec(0.05 * np.array([math.sin(K), math.cos(K), math.sin(2 * K)]))
        C[k] = C[j] @ rel.as_matrix()
        s[k] = 0.01 * np.array([math.cos(K), math.sin(K), math.cos(2 * K)])
        omega[k] = C[k].T @ C[j] @ omega[j] + 0.2 * np.array([math.cos(K), -math.sin(K), 0.5])
        sdot[k] = 0.05 * np.array([math.sin(3 * K), math.cos(3 * K), 1.0])
    quat = Rotation.from_matrix(C).as_quat()[:, [3, 0, 1, 2]]  # [w, x, y, z]
    return pack_state(model, quat, s, omega, sdot)
