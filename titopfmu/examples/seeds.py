"""The seeds' example systems, and random systems of each reference solver's scope, built three
ways from the same parameters: with the seed's own method, with TITOP blocks and with Pinocchio.

Used by ``scripts/crosscheck.py`` and the tests. Only *parameters* and *coordinates* are
translated here; every acceleration comes from the solvers themselves (the reference solvers of
:mod:`titopfmu.reference`, the TITOP engine, ``pinocchio.aba``). The one piece of mechanics
written here is :func:`spring_wrench`, Kane's :class:`~titopfmu.reference.kane.JointSpringDamper6`
load law re-expressed in joint coordinates so that the TITOP and Pinocchio models of the seed-003
example feel the same springs.

Neutral description
-------------------
A reference model is translated into a tuple of :class:`JointSpec`: one rigid body and the joint
by which it hangs from its parent body or from the ground (a fixed base). Bodies keep the order
of the reference model (Kane: K = 1..N; DeNOC: base to tip; Riccati: the order the bodies were
given). From the specs:

* :class:`TitopTwin` builds a :class:`~titopfmu.assembly.system.System` of a
  :class:`~titopfmu.blocks.Ground` (one child port per root joint) and one
  :class:`~titopfmu.blocks.RevoluteBody`, :class:`~titopfmu.blocks.SphericalBody` or
  :class:`~titopfmu.blocks.FreeBody` per spec (block name = body name), each fed its joint effort
  by a :class:`~titopfmu.blocks.Constant` or a :class:`~titopfmu.blocks.Function` block;
* :class:`PinocchioTwin` builds a Pinocchio model with ``JointModelR{X,Y,Z}`` /
  ``JointModelRevoluteUnaligned``, ``JointModelSpherical`` and ``JointModelFreeFlyer`` joints
  placed at ``SE3(rotation, point)`` (Pinocchio is imported on use).

Joint coordinates (shared by the TITOP states and the Pinocchio twin)
----------------------------------------------------------------------
Per joint, configuration ``q_j`` and generalized speeds ``v_j`` (all SI):

* revolute: ``q_j = [θ]`` (rad), ``v_j = [θ̇]`` (rad/s), about ``axis`` (body frame);
* spherical: ``q_j`` = unit quaternion ``[w, x, y, z]`` of the body frame relative to its frame
  at zero rotation (``P_{a/a0}``), ``v_j = ω_r``, the angular velocity relative to the parent, in
  the body frame (rad/s);
* free: ``q_j = [r (3), quaternion (4)]`` with ``r`` the position of the body's reference point
  relative to the joint point, in the *parent's* frame (m; seed 003's ``s_K``), and
  ``v_j = [v_r, ω_r]``, the velocity of the reference point relative to the parent and the
  relative angular velocity, both in the body frame (m/s, rad/s).

The flat vectors ``q``, ``v`` concatenate these in spec order; their accelerations ``v̇`` are the
TITOP blocks' ``u̇`` and Pinocchio's ``aba`` output. For DeNOC and Riccati they *are* the seed's
own state (``q``, ``u`` of :class:`~titopfmu.reference.denoc.DenocModel`; ``y = [q, v]`` of
:class:`~titopfmu.reference.riccati.RiccatiModel`); Kane's absolute coordinates are converted by
:meth:`KaneSystem.to_kane` / :meth:`KaneSystem.from_kane`.

Poses (for trajectory comparisons) are, per body, the inertial position of its reference point
(the joint point: DeNOC's O_i, Riccati's hinge O, Kane's O_K; m) and its DCM body -> inertial.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.spatial.transform import Rotation

from ..assembly.engine import Engine
from ..assembly.system import System
from ..blocks import Constant, FreeBody, Function, Ground, RevoluteBody, SphericalBody
from ..reference import denoc, kane, riccati
from ..spatial.algebra import FloatArray
from ..spatial.rotations import dcm_from_quaternion, quaternion_rate

#: Joint kinds of :class:`JointSpec`, with their numbers of coordinates and speeds.
JOINT_SIZES: dict[str, tuple[int, int]] = {"revolute": (1, 1), "spherical": (4, 3), "free": (7, 6)}

#: An effort law of one joint: ``(q_j, v_j) -> τ_j`` in joint coordinates (see the module
#: docstring); τ_j is the joint effort of the TITOP block's ``joint.tau`` (revolute: torque about
#: the axis, N m; spherical: torque of the parent on the body, body frame, N m; free: wrench
#: [F (N), T (N m) about the reference point] of the parent on the body, body frame).
EffortLaw = Callable[[FloatArray, FloatArray], ArrayLike]

#: Name of the fixed base of the TITOP twins.
GROUND = "ground"


# ----------------------------------------------------------------------------------------------
# the neutral description
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class JointSpec:
    """One body and the joint by which it hangs from ``parent`` (a body name; ``None``: the
    ground).

    ``kind``: ``"revolute"``, ``"spherical"`` or ``"free"``; ``mass`` (kg); ``inertia`` at the
    mass centre, body frame (kg m²); ``com``: reference point -> mass centre, body frame (m);
    ``point``: the joint point on the parent, from the parent's reference point, parent frame
    (for a root: from the inertial origin, inertial frame) (m); ``rotation``: DCM of the body frame
    at zero joint coordinate in the parent frame (``[v]_parent = rotation [v]_body``; TITOP's
    ``P_a0b``, Pinocchio's placement rotation); ``axis``: revolute axis, body frame (unit).
    """

    name: str
    parent: str | None
    kind: str
    mass: float
    inertia: FloatArray
    com: FloatArray
    point: FloatArray
    rotation: FloatArray
    axis: FloatArray | None = None

    @property
    def nq(self) -> int:
        """Number of configuration coordinates of the joint."""
        return JOINT_SIZES[self.kind][0]

    @property
    def nv(self) -> int:
        """Number of generalized speeds of the joint."""
        return JOINT_SIZES[self.kind][1]


def _spec(
    name: str,
    parent: str | None,
    kind: str,
    mass: float,
    inertia: ArrayLike,
    com: ArrayLike,
    point: ArrayLike,
    rotation: ArrayLike | None = None,
    axis: ArrayLike | None = None,
) -> JointSpec:
    if kind not in JOINT_SIZES:
        raise ValueError(f"joint '{name}': unknown kind {kind!r}; kinds: {sorted(JOINT_SIZES)}")
    return JointSpec(
        name,
        parent,
        kind,
        float(mass),
        np.array(inertia, dtype=float).reshape(3, 3),
        np.array(com, dtype=float).reshape(3),
        np.array(point, dtype=float).reshape(3),
        np.eye(3) if rotation is None else np.array(rotation, dtype=float).reshape(3, 3),
        None if axis is None else np.array(axis, dtype=float).reshape(3),
    )


def _offsets(sizes: Sequence[int]) -> list[slice]:
    edges = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    return [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]


def _children(specs: Sequence[JointSpec]) -> dict[str | None, list[JointSpec]]:
    out: dict[str | None, list[JointSpec]] = {None: []}
    for s in specs:
        out.setdefault(s.name, [])
    for s in specs:
        if s.parent not in out:
            raise ValueError(f"joint '{s.name}': no body named {s.parent!r}")
        out[s.parent].append(s)
    return out


def _preorder(specs: Sequence[JointSpec]) -> list[JointSpec]:
    """Depth-first preorder from the ground (parents first, subtrees contiguous)."""
    kids = _children(specs)
    order: list[JointSpec] = []
    stack = list(reversed(kids[None]))
    while stack:
        s = stack.pop()
        order.append(s)
        stack.extend(reversed(kids[s.name]))
    if len(order) != len(specs):
        raise ValueError("the joint specs do not form a tree hanging from the ground")
    return order


def _efforts_per_joint(
    specs: Sequence[JointSpec], efforts: Mapping[str, ArrayLike | EffortLaw] | None
) -> dict[str, FloatArray | EffortLaw]:
    """Joint name -> a constant effort (nv) or a law; zero where nothing is given."""
    efforts = dict(efforts or {})
    unknown = set(efforts) - {s.name for s in specs}
    if unknown:
        raise ValueError(f"efforts for unknown joints {sorted(unknown)}")
    out: dict[str, FloatArray | EffortLaw] = {}
    for s in specs:
        e = efforts.get(s.name)
        if e is None:
            out[s.name] = np.zeros(s.nv)
        elif callable(e):
            out[s.name] = e
        else:
            out[s.name] = np.array(e, dtype=float).reshape(s.nv)
    return out


def _unit_quaternion(q: FloatArray) -> FloatArray:
    return q / np.linalg.norm(q)


def random_joint_state(
    specs: Sequence[JointSpec],
    rng: np.random.Generator,
    speed: float = 1.0,
    translation: float = 0.3,
    max_angle: float | None = None,
) -> tuple[FloatArray, FloatArray]:
    """A random state ``(q, v)`` in joint coordinates: angles uniform in [-π, π], unit
    quaternions of uniformly random rotations, free-joint translations uniform in
    ±``translation`` (m), speeds normal with standard deviation ``speed`` (rad/s, m/s).

    ``max_angle`` (rad) limits every joint rotation to that angle (revolute: uniform in
    ±max_angle; spherical and free: a random axis and an angle uniform in [0, max_angle]), e.g.
    to start spring-held bodies away from the rotation-vector discontinuity at π."""
    q, v = [], []
    for s in specs:
        limit = math.pi if max_angle is None else max_angle
        if s.kind == "revolute":
            q.append([rng.uniform(-limit, limit)])
        else:
            if max_angle is None:
                rot = Rotation.random(random_state=rng)
            else:
                axis = rng.normal(size=3)
                rot = Rotation.from_rotvec(axis / np.linalg.norm(axis) * rng.uniform(0, limit))
            x, y, z, w = rot.as_quat()
            quat = [w, x, y, z]
            q.append(
                quat if s.kind == "spherical" else [*rng.uniform(-1, 1, 3) * translation, *quat]
            )
        v.append(rng.normal(scale=speed, size=s.nv))
    return np.concatenate(q), np.concatenate(v)


# ----------------------------------------------------------------------------------------------
# TITOP twin
# ----------------------------------------------------------------------------------------------


class TitopTwin:
    """The TITOP block system of a list of :class:`JointSpec` (see the module docstring).

    ``gravity``: inertial frame (m/s²); ``efforts``: joint name -> constant effort (nv values) or
    :data:`EffortLaw` (a :class:`~titopfmu.blocks.Function` block fed by the joint's ``joint.m``;
    its coordinates are rebuilt from the position output with the joint model's
    ``coordinates_from_position``). Attributes: ``system``, ``engine``, ``specs``.
    """

    def __init__(
        self,
        specs: Sequence[JointSpec],
        gravity: ArrayLike,
        efforts: Mapping[str, ArrayLike | EffortLaw] | None = None,
        name: str = "seed",
    ) -> None:
        self.specs = tuple(specs)
        g = np.array(gravity, dtype=float).reshape(3)
        kids = _children(self.specs)
        if any(s.name == GROUND or s.name.startswith("tau_") for s in self.specs):
            raise ValueError(f"body names '{GROUND}' and 'tau_*' are reserved for the twin")
        s = System(name)
        s.add(Ground(GROUND, children={f"to_{c.name}": c.point for c in kids[None]} or None))
        per_joint = _efforts_per_joint(self.specs, efforts)
        for sp in _preorder(self.specs):  # parents first
            common = dict(
                com=sp.com,
                children={f"to_{c.name}": c.point for c in kids[sp.name]} or None,
                gravity=g,
            )
            if sp.kind == "revolute":
                block = RevoluteBody(
                    sp.name, sp.mass, sp.inertia, axis=sp.axis, P_a0b=sp.rotation, **common
                )
            elif sp.kind == "spherical":
                block = SphericalBody(sp.name, sp.mass, sp.inertia, P_a0b=sp.rotation, **common)
            else:
                block = FreeBody(sp.name, sp.mass, sp.inertia, P_a0b=sp.rotation, **common)
            s.add(block)
            s.connect(f"{sp.parent or GROUND}.to_{sp.name}", f"{sp.name}.P")
            e = per_joint[sp.name]
            if callable(e):
                s.add(
                    Function(
                        f"tau_{sp.name}",
                        self._law(block, e),
                        inputs={"m": 3 * sp.nv},
                        outputs={"tau": sp.nv},
                    )
                )
                s.connect(f"{sp.name}.joint.m", f"tau_{sp.name}.m")
                s.connect(f"tau_{sp.name}.tau", f"{sp.name}.joint.tau")
            else:
                s.add(Constant(f"tau_{sp.name}", e))
                s.connect(f"tau_{sp.name}.y", f"{sp.name}.joint.tau")
        self.system = s
        self.engine = Engine(s)
        slices = self.engine.plan.state_slices
        self._slices = [slices[sp.name] for sp in self.specs]
        self._q = _offsets([sp.nq for sp in self.specs])
        self._v = _offsets([sp.nv for sp in self.specs])

    @staticmethod
    def _law(block: Any, law: EffortLaw) -> Callable[[float, dict[str, FloatArray]], dict]:
        k = block.joint.dof
        to_q = block.joint.coordinates_from_position

        def f(t: float, inputs: dict[str, FloatArray]) -> dict[str, FloatArray]:
            m = inputs["m"]  # [u̇ (NaN before the loop), u, position output]
            return {"tau": np.asarray(law(to_q(m[2 * k : 3 * k]), m[k : 2 * k]), dtype=float)}

        return f

    def state(self, q: ArrayLike, v: ArrayLike) -> FloatArray:
        """Engine state of the joint coordinates ``(q, v)``."""
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        x = self.engine.initial_state()
        for sl, sq, sv in zip(self._slices, self._q, self._v, strict=True):
            x[sl] = np.concatenate([q[sq], v[sv]])
        return x

    def joint_state(self, x: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Joint coordinates ``(q, v)`` of an engine state (quaternions as integrated)."""
        x = np.asarray(x, dtype=float)
        q = np.concatenate(
            [x[sl][: sp.nq] for sl, sp in zip(self._slices, self.specs, strict=True)]
        )
        v = np.concatenate(
            [x[sl][sp.nq :] for sl, sp in zip(self._slices, self.specs, strict=True)]
        )
        return q, v

    def accelerations(self, q: ArrayLike, v: ArrayLike, t: float = 0.0) -> FloatArray:
        """``v̇`` (joint coordinates) from the engine's state derivative at ``(t, q, v)``."""
        dx = self.engine.derivative(t, self.state(q, v))
        return np.concatenate(
            [dx[sl][sp.nq :] for sl, sp in zip(self._slices, self.specs, strict=True)]
        )

    def poses(self, x: ArrayLike, t: float = 0.0) -> tuple[FloatArray, FloatArray]:
        """Inertial positions of the bodies' reference points (n, 3; m) and their DCMs body ->
        inertial (n, 3, 3), from the engine's kinematics at the engine state ``x``."""
        ev = self.engine.evaluate(t, np.asarray(x, dtype=float))
        kin = [ev.kin[sp.name] for sp in self.specs]
        return np.array([k.R @ k.ip for k in kin]), np.array([k.R for k in kin])


# ----------------------------------------------------------------------------------------------
# Pinocchio twin
# ----------------------------------------------------------------------------------------------


class PinocchioTwin:
    """The Pinocchio model of a list of :class:`JointSpec` (Pinocchio imported here).

    Joints are added in depth-first preorder; ``aba`` with the effort vector assembled from
    ``efforts`` (as in :class:`TitopTwin`). Attributes: ``model``, ``data``, ``specs``.
    """

    def __init__(
        self,
        specs: Sequence[JointSpec],
        gravity: ArrayLike,
        efforts: Mapping[str, ArrayLike | EffortLaw] | None = None,
    ) -> None:
        import pinocchio as pin

        self.pin = pin
        self.specs = tuple(specs)
        model = pin.Model()
        model.gravity = pin.Motion(np.array(gravity, dtype=float).reshape(3), np.zeros(3))
        jid: dict[str, int] = {}
        for sp in _preorder(self.specs):
            if sp.kind == "revolute":
                a = sp.axis / np.linalg.norm(sp.axis)
                unit = [k for k in range(3) if abs(a[k] - 1.0) < 1e-15]
                jm = (
                    (pin.JointModelRX, pin.JointModelRY, pin.JointModelRZ)[unit[0]]()
                    if unit
                    else pin.JointModelRevoluteUnaligned(a)
                )
            elif sp.kind == "spherical":
                jm = pin.JointModelSpherical()
            else:
                jm = pin.JointModelFreeFlyer()
            parent = 0 if sp.parent is None else jid[sp.parent]
            j = model.addJoint(parent, jm, pin.SE3(sp.rotation, sp.point), sp.name)
            model.appendBodyToJoint(j, pin.Inertia(sp.mass, sp.com, sp.inertia), pin.SE3.Identity())
            jid[sp.name] = j
        self.model = model
        self.data = model.createData()
        self._jid = [jid[sp.name] for sp in self.specs]
        self._iq = [int(model.idx_qs[j]) for j in self._jid]
        self._iv = [int(model.idx_vs[j]) for j in self._jid]
        self._q = _offsets([sp.nq for sp in self.specs])
        self._v = _offsets([sp.nv for sp in self.specs])
        self._efforts = _efforts_per_joint(self.specs, efforts)

    def pin_qv(self, q: ArrayLike, v: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Pinocchio ``(q, v)`` of joint coordinates (quaternions normalised, ``[x, y, z, w]``;
        free-joint translations in the placement frame, ``rotation^T r``)."""
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        pq = np.empty(self.model.nq)
        pv = np.empty(self.model.nv)
        for sp, sq, sv, iq, iv in zip(
            self.specs, self._q, self._v, self._iq, self._iv, strict=True
        ):
            qj = q[sq]
            if sp.kind == "revolute":
                pq[iq] = qj[0]
            elif sp.kind == "spherical":
                pq[iq : iq + 4] = _unit_quaternion(qj)[[1, 2, 3, 0]]
            else:
                pq[iq : iq + 3] = sp.rotation.T @ qj[0:3]
                pq[iq + 3 : iq + 7] = _unit_quaternion(qj[3:7])[[1, 2, 3, 0]]
            pv[iv : iv + sp.nv] = v[sv]
        return pq, pv

    def efforts(self, q: FloatArray, v: FloatArray) -> FloatArray:
        """Pinocchio's effort vector ``τ`` (nv) at the joint coordinates ``(q, v)``."""
        tau = np.empty(self.model.nv)
        for sp, sq, sv, iv in zip(self.specs, self._q, self._v, self._iv, strict=True):
            e = self._efforts[sp.name]
            tau[iv : iv + sp.nv] = e(q[sq], v[sv]) if callable(e) else e
        return tau

    def accelerations(self, q: ArrayLike, v: ArrayLike, t: float = 0.0) -> FloatArray:
        """``v̇`` (joint coordinates) from ``pinocchio.aba`` at ``(q, v)`` (``t`` unused)."""
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        pq, pv = self.pin_qv(q, v)
        a = self.pin.aba(self.model, self.data, pq, pv, self.efforts(q, v))
        return np.concatenate(
            [a[iv : iv + sp.nv] for sp, iv in zip(self.specs, self._iv, strict=True)]
        )

    def rhs(self, t: float, y: FloatArray) -> FloatArray:
        """``dy/dt`` for ``y = [q, v]`` in joint coordinates: ``θ̇ = v``; quaternions
        ``q̇ = ½ q ⊗ [0, ω_r]`` plus a norm-restoring term; free joints ``ṙ = P_{a/b} v_r``."""
        nq = self._q[-1].stop
        q, v = y[:nq], y[nq:]
        dq = np.empty(nq)
        for sp, sq, sv in zip(self.specs, self._q, self._v, strict=True):
            qj, vj = q[sq], v[sv]
            if sp.kind == "revolute":
                dq[sq] = vj
            elif sp.kind == "spherical":
                dq[sq] = quaternion_rate(qj, vj)
            else:
                R_ab = sp.rotation @ dcm_from_quaternion(qj[3:7])
                dq[sq] = np.concatenate([R_ab @ vj[0:3], quaternion_rate(qj[3:7], vj[3:6])])
        return np.concatenate([dq, self.accelerations(q, v, t)])

    def poses(self, q: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Inertial positions of the joint frames' origins (n, 3; m) and their DCMs (n, 3, 3),
        from Pinocchio's forward kinematics."""
        nv = self._v[-1].stop
        pq, _ = self.pin_qv(q, np.zeros(nv))
        self.pin.forwardKinematics(self.model, self.data, pq)
        oM = [self.data.oMi[j] for j in self._jid]
        return np.array([m.translation for m in oM]), np.array([m.rotation for m in oM])


# ----------------------------------------------------------------------------------------------
# reference-solver systems
# ----------------------------------------------------------------------------------------------


class SeedSystem:
    """A reference-solver model with its TITOP and Pinocchio twins, all in joint coordinates.

    Subclasses set ``seed`` ("001"...), ``method``, ``specs``, ``gravity`` (m/s², inertial) and
    ``efforts``, and implement :meth:`seed_accelerations`, :meth:`seed_trajectory` and
    :meth:`seed_poses` with the reference solver.
    """

    seed: str = ""
    method: str = ""
    specs: tuple[JointSpec, ...] = ()
    gravity: FloatArray = np.zeros(3)
    efforts: Mapping[str, ArrayLike | EffortLaw] | None = None
    name: str = "seed"

    @property
    def nq(self) -> int:
        """Size of q (joint coordinates)."""
        return sum(s.nq for s in self.specs)

    @property
    def nv(self) -> int:
        """Size of v (generalized speeds, degrees of freedom)."""
        return sum(s.nv for s in self.specs)

    @cached_property
    def titop(self) -> TitopTwin:
        """The TITOP block system (built on first use)."""
        return TitopTwin(self.specs, self.gravity, self.efforts, self.name)

    @cached_property
    def pinocchio(self) -> PinocchioTwin:
        """The Pinocchio model (built on first use; needs Pinocchio)."""
        return PinocchioTwin(self.specs, self.gravity, self.efforts)

    def random_state(
        self, rng: np.random.Generator, speed: float = 1.0, max_angle: float | None = None
    ) -> tuple[FloatArray, FloatArray]:
        """See :func:`random_joint_state`."""
        return random_joint_state(self.specs, rng, speed, max_angle=max_angle)

    def seed_accelerations(self, q: FloatArray, v: FloatArray, t: float = 0.0) -> FloatArray:
        """The reference solver's accelerations, as ``v̇`` in joint coordinates."""
        raise NotImplementedError

    def seed_trajectory(
        self, q0: FloatArray, v0: FloatArray, t_eval: FloatArray, rtol: float, atol: float
    ) -> tuple[FloatArray, FloatArray]:
        """The reference solver's own integration from ``(q0, v0)`` at t = 0 to ``t_eval[-1]``
        (s): joint coordinates ``Q`` (T, nq) and ``V`` (T, nv) at ``t_eval``."""
        raise NotImplementedError

    def seed_poses(self, q: FloatArray, v: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Positions (n, 3; m) and DCMs (n, 3, 3) of the bodies from the reference solver's
        kinematics."""
        raise NotImplementedError


class DenocSystem(SeedSystem):
    """A seed-001 DeNOC chain (:class:`~titopfmu.reference.denoc.DenocModel`); ``efforts``:
    constant joint efforts in the model's ``u`` layout (N m), default zero."""

    seed = "001"
    method = "DeNOC"

    def __init__(self, model: denoc.DenocModel, efforts: ArrayLike | None = None) -> None:
        self.model = model
        self.name = "denoc"
        self.gravity = np.array(model.gravity, dtype=float)
        self.specs = tuple(
            _spec(
                b.name,
                b.parent,
                b.joint,
                b.mass,
                b.inertia,
                b.com,
                b.joint_position,
                b.joint_rotation,
                b.axis,
            )
            for b in model.bodies
        )
        self.tau = np.zeros(model.nv) if efforts is None else np.array(efforts, dtype=float)
        vs = _offsets([s.nv for s in self.specs])
        self.efforts = {s.name: self.tau[sl] for s, sl in zip(self.specs, vs, strict=True)}

    def seed_accelerations(self, q, v, t=0.0):  # noqa: D102
        return self.model.accelerations(q, v, t, efforts=self.tau)

    def seed_trajectory(self, q0, v0, t_eval, rtol, atol):  # noqa: D102
        tr = self.model.simulate(
            float(t_eval[-1]), q0, v0, t_eval=t_eval, efforts=self.tau, rtol=rtol, atol=atol
        )
        return tr.q, tr.u

    def seed_poses(self, q, v):  # noqa: D102
        Q, O = self.model.body_poses(q)
        return O, Q


class RiccatiSystem(SeedSystem):
    """A seed-002 Riccati model (:class:`~titopfmu.reference.riccati.RiccatiModel`), planar
    (revolute hinges about z; the body's scalar J_zz becomes the inertia ``J_zz·1``, of which only
    the zz entry acts) or spatial (ball hinges). Gravity only, no joint efforts."""

    seed = "002"
    method = "Riccati"

    def __init__(self, model: riccati.RiccatiModel) -> None:
        self.model = model
        self.name = "riccati"
        self.gravity = np.array(model.gravity, dtype=float)
        specs = []
        for b in model.bodies:
            jp = np.zeros(3)
            com = np.zeros(3)
            jp[: np.size(b.joint_point)] = np.ravel(b.joint_point)
            com[: np.size(b.com)] = np.ravel(b.com)
            if model.planar:
                phi = 0.0 if b.joint_rotation is None else float(b.joint_rotation)
                rot = Rotation.from_euler("z", phi).as_matrix()
                specs.append(
                    _spec(
                        b.name,
                        b.parent,
                        "revolute",
                        b.mass,
                        float(b.inertia) * np.eye(3),
                        com,
                        jp,
                        rot,
                        (0.0, 0.0, 1.0),
                    )
                )
            else:
                specs.append(
                    _spec(
                        b.name, b.parent, "spherical", b.mass, b.inertia, com, jp, b.joint_rotation
                    )
                )
        self.specs = tuple(specs)

    def y(self, q: FloatArray, v: FloatArray) -> FloatArray:
        """The Riccati state of joint coordinates (the same numbers: ``y = [q, v]``)."""
        return self.model.state(q, v)

    def seed_accelerations(self, q, v, t=0.0):  # noqa: D102
        return self.model.accelerations(self.y(q, v))

    def seed_trajectory(self, q0, v0, t_eval, rtol, atol):  # noqa: D102
        sol = self.model.simulate(self.y(q0, v0), float(t_eval[-1]), t_eval, rtol=rtol, atol=atol)
        if not sol.success:
            raise riccati.RiccatiError(f"integration failed: {sol.message}")
        return sol.y[: self.nq].T, sol.y[self.nq :].T

    def seed_rk4(
        self, q0: FloatArray, v0: FloatArray, t_final: float, dt: float = 1e-3, every: int = 1
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """The seed's integrator (classical RK4, step ``dt`` s): ``(t, Q, V)``."""
        t, Y = self.model.rk4(self.y(q0, v0), t_final, dt, every=every)
        return t, Y[:, : self.nq], Y[:, self.nq :]

    def seed_poses(self, q, v):  # noqa: D102
        return self.model.poses(self.y(q, v))


def spring_wrench(springs: kane.JointSpringDamper6, q: FloatArray, v: FloatArray) -> FloatArray:
    """Kane's 6-dof spring-damper (:class:`~titopfmu.reference.kane.JointSpringDamper6`) as the
    effort of a free joint with ``rotation = 1`` (``P_{a0/b} = 1``), in joint coordinates.

    With ``r = s_K`` (parent frame J, m), ``C = P_{K/J}`` from the quaternion, ``v_r``, ``ω_r``
    (body frame K): the seed's force ``[R_J]^T (-k s_K - c ṡ_K)`` with ``ṡ_K = C v_r`` is, in K
    components, ``F = C^T(-k r) - c v_r`` (N), and its torque ``T = -k_rot φ - c_rot ω_r``
    (N m, φ the rotation vector of C, rad), both applied by J on K at O_K: the free joint's
    ``joint.tau``.
    """
    C = dcm_from_quaternion(q[3:7])
    phi = Rotation.from_matrix(C).as_rotvec()
    F = C.T @ (-springs.stiffness * q[0:3]) - springs.damping * v[0:3]
    T = -springs.rot_stiffness * phi - springs.rot_damping * v[3:6]
    return np.concatenate([F, T])


class KaneSystem(SeedSystem):
    """A seed-003 Kane model (:class:`~titopfmu.reference.kane.KaneModel`): every body a free
    joint (``rotation = 1``) at q_K on its lower body (or on the ground, L(K) = 0).

    Loads: none, or a :class:`~titopfmu.reference.kane.JointSpringDamper6`, which becomes the
    joint effort :func:`spring_wrench` of every tied body; other load callables are rejected.
    """

    seed = "003"
    method = "Kane"

    def __init__(self, model: kane.KaneModel) -> None:
        self.model = model
        self.name = "kane"
        self.gravity = np.array(model.gravity, dtype=float)
        names = [b.name for b in model.bodies]
        self.specs = tuple(
            _spec(
                b.name,
                None if b.parent == 0 else names[b.parent - 1],
                "free",
                b.mass,
                b.inertia,
                b.com,
                b.joint_point,
            )
            for b in model.bodies
        )
        loads = model.loads
        if loads is None:
            self.efforts = None
        elif isinstance(loads, kane.JointSpringDamper6):
            law: EffortLaw = partial(spring_wrench, loads)
            self.efforts = {b.name: law for b in model.bodies if b.parent > 0 or loads.ground}
        else:
            raise ValueError(
                f"{model.name}: only JointSpringDamper6 loads can be rebuilt as joint efforts, "
                f"got {type(loads).__name__}"
            )
        self._parent = [b.parent - 1 for b in model.bodies]  # -1: the inertial frame

    # -- coordinates: Kane's absolute (eq. 1) <-> joint coordinates ---------------------------

    def to_kane(self, q: ArrayLike, v: ArrayLike) -> FloatArray:
        """Kane state ``z`` (13N) of joint coordinates: ``P_{K/R} = P_{J/R} C``,
        ``ω_K = ω_r + C^T ω_J``, ``s_K = r``, ``ṡ_K = C v_r``, ``C = P_{K/J}``."""
        n = self.model.n
        q = np.asarray(q, dtype=float).reshape(n, 7)
        v = np.asarray(v, dtype=float).reshape(n, 6)
        C_abs = np.empty((n, 3, 3))
        omega = np.empty((n, 3))
        sdot = np.empty((n, 3))
        for k, j in enumerate(self._parent):  # lower bodies first: L(K) < K
            C = dcm_from_quaternion(_unit_quaternion(q[k, 3:7]))
            C_abs[k] = C if j < 0 else C_abs[j] @ C
            omega[k] = v[k, 3:6] + (0.0 if j < 0 else C.T @ omega[j])
            sdot[k] = C @ v[k, 0:3]
        quat = Rotation.from_matrix(C_abs).as_quat()[:, [3, 0, 1, 2]]
        return kane.pack_state(self.model, quat, q[:, 0:3], omega, sdot)

    def from_kane(self, z: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Joint coordinates ``(q, v)`` of a Kane state (inverse of :meth:`to_kane`)."""
        st = kane.unpack_state(self.model, z)
        n = self.model.n
        C_abs = np.array([dcm_from_quaternion(_unit_quaternion(w)) for w in st.quaternion])
        q = np.empty((n, 7))
        v = np.empty((n, 6))
        for k, j in enumerate(self._parent):
            C = C_abs[k] if j < 0 else C_abs[j].T @ C_abs[k]
            x, y, zq, w = Rotation.from_matrix(C).as_quat()
            q[k] = [*st.s[k], w, x, y, zq]
            v[k, 0:3] = C.T @ st.sdot[k]
            v[k, 3:6] = st.omega[k] - (0.0 if j < 0 else C.T @ st.omega[j])
        return q.reshape(-1), v.reshape(-1)

    def joint_accelerations(self, q: ArrayLike, v: ArrayLike, ydot: ArrayLike) -> FloatArray:
        """Joint accelerations ``[v̇_r, ω̇_r]`` of Kane's ``ẏ = [ω̇_K (K), s̈_K (J)]`` at the
        state ``(q, v)``: ``ω̇_r = ω̇_K - C^T ω̇_J + ω_r × (C^T ω_J)``,
        ``v̇_r = C^T s̈_K - ω_r × v_r``."""
        n = self.model.n
        q = np.asarray(q, dtype=float).reshape(n, 7)
        v = np.asarray(v, dtype=float).reshape(n, 6)
        ydot = np.asarray(ydot, dtype=float)
        wdot = ydot[: 3 * n].reshape(n, 3)
        sdd = ydot[3 * n :].reshape(n, 3)
        z = self.to_kane(q, v)
        omega = kane.unpack_state(self.model, z).omega
        a = np.empty((n, 6))
        for k, j in enumerate(self._parent):
            C = dcm_from_quaternion(_unit_quaternion(q[k, 3:7]))
            w_r, v_r = v[k, 3:6], v[k, 0:3]
            wJ = np.zeros(3) if j < 0 else C.T @ omega[j]
            wdJ = np.zeros(3) if j < 0 else C.T @ wdot[j]
            a[k, 3:6] = wdot[k] - wdJ + np.cross(w_r, wJ)
            a[k, 0:3] = C.T @ sdd[k] - np.cross(w_r, v_r)
        return a.reshape(-1)

    def seed_accelerations(self, q, v, t=0.0):  # noqa: D102
        z = self.to_kane(q, v)
        n7 = 7 * self.model.n
        ydot = kane.generalized_accelerations(self.model, z[:n7], z[n7:], t)
        return self.joint_accelerations(q, v, ydot)

    def seed_trajectory(self, q0, v0, t_eval, rtol, atol):  # noqa: D102
        sol = kane.simulate(
            self.model, self.to_kane(q0, v0), float(t_eval[-1]), t_eval, rtol=rtol, atol=atol
        )
        qv = [self.from_kane(z) for z in sol.y.T]
        return np.array([a for a, _ in qv]), np.array([b for _, b in qv])

    def seed_poses(self, q, v):  # noqa: D102
        z = self.to_kane(q, v)
        n7 = 7 * self.model.n
        kin = kane.kinematics(self.model, z[:n7], z[n7:])
        return kin.p_O, kin.dcm


# ----------------------------------------------------------------------------------------------
# the seeds' examples
# ----------------------------------------------------------------------------------------------


def seed001_pendulum(
    case: str = "planar", zyz_rates: ArrayLike | None = None
) -> tuple[DenocSystem, FloatArray, FloatArray]:
    """Seed 001, sec. V: the spatial solid pendulum on a spherical joint
    (:func:`~titopfmu.reference.denoc.spherical_pendulum`) and its initial state ``(q0, u0)``
    for ``case`` ``"planar"`` (ZYZ 90/90/90 deg) or ``"spatial"`` (90/45/45 deg), at rest unless
    ``zyz_rates`` (rad/s) are given."""
    q0, u0 = denoc.pendulum_initial_state(case, zyz_rates)
    return DenocSystem(denoc.spherical_pendulum()), q0, u0


def seed002_branch_pendulum() -> tuple[RiccatiSystem, FloatArray, FloatArray]:
    """Seed 002, Fig. 2: the planar branch pendulum
    (:func:`~titopfmu.reference.riccati.branch_pendulum`: rods m = 1 kg, 2a = 1 m,
    θ1 = θ3 = θ5 = π/2, θ7 = 0, at rest) and its initial state ``(q0, v0)``."""
    ex = riccati.branch_pendulum()
    sysm = RiccatiSystem(ex.model)
    q, v = ex.model.split(ex.y0)
    return sysm, np.ravel(q), np.ravel(v)


def seed002_branch_system(
    N: int = 13, planar: bool = False
) -> tuple[RiccatiSystem, FloatArray, FloatArray]:
    """Seed 002, Fig. 1: the branch system with (N + 1)/2 bodies
    (:func:`~titopfmu.reference.riccati.branch_system`; ball hinges unless ``planar``) and the
    seed's initial state ``(q0, v0)``."""
    ex = riccati.branch_system(N, planar=planar)
    q, v = ex.model.split(ex.y0)
    return RiccatiSystem(ex.model), np.ravel(q), np.ravel(v)


def seed003_eight_body(
    gravity: ArrayLike = (0.0, 0.0, 0.0),
    springs: kane.JointSpringDamper6 | None = kane.EIGHT_BODY_SPRINGS,
) -> tuple[KaneSystem, FloatArray, FloatArray]:
    """Seed 003: the eight-body system L = (0, 1, 2, 1, 2, 1, 1, 7)
    (:func:`~titopfmu.reference.kane.eight_body_example`, by default free flight held together by
    undamped 6-dof springs) and its documented initial state
    (:func:`~titopfmu.reference.kane.eight_body_initial_state`) as joint coordinates."""
    model = kane.eight_body_example(gravity, springs)
    sysm = KaneSystem(model)
    q0, v0 = sysm.from_kane(kane.eight_body_initial_state(model))
    return sysm, q0, v0


# ----------------------------------------------------------------------------------------------
# random systems within each method's scope
# ----------------------------------------------------------------------------------------------


def random_inertia(rng: np.random.Generator, scale: float = 1.0) -> FloatArray:
    """A physical central inertia (kg m²): ``tr(S) 1 - S`` for random principal second moments
    S in [0.02, 0.5]·``scale`` (triangle inequality holds), random principal axes."""
    s = rng.uniform(0.02, 0.5, 3) * scale
    R = Rotation.random(random_state=rng).as_matrix()
    i = R @ np.diag([s[1] + s[2], s[0] + s[2], s[0] + s[1]]) @ R.T
    return 0.5 * (i + i.T)


def random_kane_model(
    seed: int,
    n: int | None = None,
    gravity: ArrayLike | None = None,
    loads: kane.JointSpringDamper6 | None = None,
) -> kane.KaneModel:
    """A random seed-003 tree of 2-10 free bodies: L(K) uniform in 1..K-1 (now and then 0, a
    second body free in R), masses 0.5-5 kg, random inertias, joint points within ±0.5 m, mass
    centres within ±0.3 m, gravity 9.81 m/s² in a random direction unless given; ``loads``
    (default none) as in :class:`~titopfmu.reference.kane.KaneModel`."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 11)) if n is None else n
    conn = [0] + [0 if rng.random() < 0.1 else int(rng.integers(1, K)) for K in range(2, n + 1)]
    g = 9.81 * Rotation.random(random_state=rng).apply([0.0, 0.0, -1.0])
    return kane.kane_model(
        conn,
        rng.uniform(0.5, 5.0, n).tolist(),
        [random_inertia(rng) for _ in range(n)],
        rng.uniform(-0.5, 0.5, (n, 3)),
        rng.uniform(-0.3, 0.3, (n, 3)),
        g if gravity is None else gravity,
        loads=loads,
        name=f"kane_random_{seed}",
    )


def random_denoc_chain(seed: int, n: int | None = None) -> denoc.DenocModel:
    """A random seed-001 serial chain of 1-6 bodies, revolute (coordinate or oblique axis) or
    spherical joints (40 %), random joint frames and offsets (±0.5 m), mass centres (±0.4 m),
    inertias, masses 0.3-3 kg, some point masses on revolute joints, gravity 4 m/s²·N(0, 1)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 7)) if n is None else n
    bodies = []
    for i in range(n):
        mass = float(rng.uniform(0.3, 3.0))
        joint = "spherical" if rng.random() < 0.4 else "revolute"
        point = joint == "revolute" and rng.random() < 0.25
        axis = None
        if joint == "revolute":
            axis = np.eye(3)[rng.integers(3)] if rng.random() < 0.5 else rng.normal(size=3)
        bodies.append(
            denoc.DenocBody(
                name=f"b{i}",
                mass=mass,
                inertia=np.zeros((3, 3)) if point else random_inertia(rng, 0.1 * mass),
                com=rng.uniform(-0.4, 0.4, 3),
                joint=joint,
                axis=axis,
                parent=None if i == 0 else f"b{i - 1}",
                joint_position=rng.uniform(-0.5, 0.5, 3),
                joint_rotation=(
                    Rotation.random(random_state=rng).as_matrix() if rng.random() < 0.7 else None
                ),
            )
        )
    return denoc.DenocModel(bodies, gravity=rng.normal(size=3) * 4.0)


def random_riccati_model(seed: int, planar: bool, n: int | None = None) -> riccati.RiccatiModel:
    """A random seed-002 tree of 2-9 bodies hanging from the ground (now and then a second
    root), listed in shuffled order: masses 0.2-3 kg, random inertias (planar: J_zz, sometimes 0),
    mass centres and hinge points (about ±0.5 m), hinge reference rotations; gravity -9.81 y
    (planar) or 5 m/s²·N(0, 1) (spatial)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 10)) if n is None else n
    names = [f"b{k}" for k in range(n)]
    bodies = []
    for k in range(n):
        parent = None
        if k and not (k >= 3 and rng.random() < 0.12):
            parent = names[int(rng.integers(0, k))]
        mass = float(rng.uniform(0.2, 3.0))
        com = rng.normal(scale=0.5, size=3)
        jp = rng.normal(scale=0.6, size=3)
        if planar:
            J = 0.0 if rng.random() < 0.2 else float(rng.uniform(0.01, 0.5))
            rot = float(rng.uniform(-np.pi, np.pi)) if rng.random() < 0.7 else None
            bodies.append(riccati.Body(names[k], mass, J, com[:2], parent, jp[:2], rot))
        else:
            rot = Rotation.random(random_state=rng).as_matrix() if k % 3 else None
            bodies.append(
                riccati.Body(names[k], mass, random_inertia(rng, 0.3), com, parent, jp, rot)
            )
    perm = rng.permutation(n)
    g = (0.0, -9.81, 0.0) if planar else tuple(rng.normal(scale=5.0, size=3))
    return riccati.RiccatiModel(tuple(bodies[k] for k in perm), planar=planar, gravity=g)


__all__ = [
    "GROUND",
    "JOINT_SIZES",
    "DenocSystem",
    "EffortLaw",
    "JointSpec",
    "KaneSystem",
    "PinocchioTwin",
    "RiccatiSystem",
    "SeedSystem",
    "TitopTwin",
    "random_denoc_chain",
    "random_inertia",
    "random_joint_state",
    "random_kane_model",
    "random_riccati_model",
    "seed001_pendulum",
    "seed002_branch_pendulum",
    "seed002_branch_system",
    "seed003_eight_body",
    "spring_wrench",
]
