"""A Pinocchio model of a titopfmu tree, built from the block parameters only.

This is the *independent* reference of the tests and benchmarks: it reads the parameters of the
blocks (mass, inertia, centre of mass, child points, joint axes and DCMs, gravity, external-wrench
specifications) and the wiring of the system, and never calls the titopfmu dynamics (no
``kinematics``, ``loop_map``, ``derivative`` nor engine evaluation). Forward dynamics is then
Pinocchio's articulated-body algorithm (``pin.aba``).

Mapping of the conventions (seed 004 / titopfmu -> Pinocchio):

* a :class:`~titopfmu.blocks.Ground` root (fixed base) is the universe: it adds no joint, and its
  child ports are placed at ``SE3(P_{b/i}(euler), position) * SE3(I, C)`` in the universe frame;
  the model's gravity is then its bodies' (they must share one);
* a :class:`~titopfmu.blocks.RigidBody` root is a free-flyer joint placed at the inertial origin;
  its joint frame is the body frame, origin the reference point P. titopfmu state
  ``[IP (R_i), quaternion [w, x, y, z] (P_{b/i}), v_P, ω (R_b)]`` <-> Pinocchio
  ``q = [IP, qx, qy, qz, qw]``, ``v = [v_P, ω]`` (local frame). Pinocchio's free-flyer
  acceleration is the derivative of the body-frame twist components, i.e. titopfmu's ``acc``;
* a block's ``com`` and ``inertia`` (at the COM, body frame) give ``pin.Inertia(m, com, I)``;
* a :class:`~titopfmu.blocks.RevoluteBody` hanging at the child point C of its parent (body frame
  of the parent) is a ``JointModelRevoluteUnaligned(r)`` placed at ``SE3(P_a0b, C)``;
* a :class:`~titopfmu.blocks.PrismaticBody` is a ``JointModelPrismaticUnaligned(t)`` placed at
  ``SE3(P_ab, C)`` (the origin moves by ``x t`` along the axis expressed in the child frame);
* a :class:`~titopfmu.blocks.SphericalBody` is a ``JointModelSpherical`` placed at
  ``SE3(P_a0b, C)``: its quaternion is the titopfmu relative quaternion of P_{a/a0} (reordered to
  ``[x, y, z, w]``), its velocity the relative angular velocity ω_r in the child frame R_a, its
  acceleration ω̇_r (the derivative of those components), as in titopfmu;
* a :class:`~titopfmu.blocks.FreeBody` is a ``JointModelFreeFlyer`` placed at ``SE3(P_a0b, C)``:
  Pinocchio's translation is expressed in the placement frame R_a0, titopfmu's r = [OP]_{R_b},
  so ``t = P_a0b^T r``; its velocity ``[R^T ṫ, ω_r]`` (local frame) is titopfmu's
  ``[v_r, ω_r]`` in R_a, its acceleration their derivative;
* a :class:`~titopfmu.blocks.WeldedBody` adds no joint: its inertia is appended to the joint of
  its parent at the placement ``X_parent * SE3(P_ab, C)``, and its own children hang from there;
* every block becomes an operational frame named after the block (``model.getFrameId(name)``);
* a :class:`~titopfmu.blocks.JointMimic` (``q_f = r q_l + offset``: its ``m`` from the leader's
  ``joint.m``, its ``tau`` to the follower's ``joint.tau``) makes the follower Pinocchio's mimic
  joint (``pin.transformJointIntoMimic(model, leader, follower, r, offset)``: the follower keeps
  its own axis and placement, its coordinate and velocity are the leader's scaled, and it has
  none in Pinocchio's reduced ``q, v``); the follower's ``joint.tau`` there is the constraint
  effort, which the mimic joint itself provides: no applied effort on the follower;
* a ball or free joint body's and a floating root's ``damping`` d and ``stiffness`` k (MuJoCo's
  ball and free joint laws) add to the joint's generalised force, in Pinocchio's terms:
  ``-d v - k [t_R; θ]``, θ the rotation vector of ``spring_ref^-1 q`` and, free joint and
  root, ``t_R = R^T (p - spring_position)`` with p the position in the parent's frame (free
  joint: ``P_a0b t``; root: the inertial position) and R the body's attitude in that frame;
* gravity: ``model.gravity = Motion(g, 0)`` (all blocks must share the same g);
* an external wrench ``[F, T]`` about the point p (vector from P, body frame), given in the body
  or the inertial frame, becomes a force about the joint-frame origin, in the joint frame, added
  to the ``fext`` argument of ``pin.aba``.

With mimic joints, Pinocchio 4.1's ``aba`` (and ``computeMinverse``) refuse the model: the
accelerations are then ``a = M^-1 (tau - b)`` with ``M = crba`` (its upper triangle: symmetric),
``b = rnea(q, v, 0, fext)`` (gravity, Coriolis and the external forces) and a Cholesky solve;
see :meth:`PinocchioReference.forward_dynamics`. The follower's state in titopfmu's full state is
set from its leader's by the core's own projection (``titop_mimic_project``, through
``Engine.consistent``), the one place the relation is written.

Joint efforts and external wrenches are read, by default, from the signal blocks wired to the
``joint.tau`` and external-wrench inputs: :class:`~titopfmu.blocks.Constant`,
:class:`~titopfmu.blocks.TimeFunction` and :class:`~titopfmu.blocks.JointSpringDamper` (fed by a
joint motion of the model) are interpreted here from their parameters; any other source must be
given explicitly (``efforts=`` / ``wrenches=``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike
from scipy.integrate import solve_ivp
from scipy.linalg import cho_factor, cho_solve
from scipy.spatial.transform import Rotation

try:
    import pinocchio as pin
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "titopfmu.reference.pinocchio_model needs Pinocchio, an optional dependency: install it "
        "with `pip install pin` (PyPI name 'pin', imported as 'pinocchio') or "
        "`pip install titopfmu[test]`"
    ) from exc

from ..assembly.system import System, split_port
from ..blocks.base import TitopError
from ..blocks.bodies import (
    BodyBlock,
    FreeBody,
    Ground,
    PrismaticBody,
    RevoluteBody,
    RigidBody,
    SphericalBody,
    WeldedBody,
)
from ..blocks.signals import Constant, JointMimic, JointSpringDamper, SignalBlock, TimeFunction

FloatArray = np.ndarray

#: Block types the reference maps (exact types: the inverse-dynamics subclasses are excluded).
SUPPORTED_BODIES = (
    Ground, RigidBody, RevoluteBody, PrismaticBody, SphericalBody, FreeBody, WeldedBody
)  # fmt: skip


def joint_law_effort(law: JointSpringDamper, q: float, qd: float) -> float:
    """The effort of a :class:`~titopfmu.blocks.JointSpringDamper` at the joint coordinate
    ``q`` and rate ``qd``, written here from its documented formula (not the core's code):
    spring-damper, regularised Coulomb friction and, when limited, the one-sided stops: a spring
    on the penetration plus damping on the speed into the stop, bounded by the spring's effort
    (the stop's effort between 0 and twice the spring's)."""
    tau = -law.k * (q - law.q_ref) - law.d * qd
    tau -= law.friction * math.tanh(qd / law.friction_velocity)
    if law.limited:
        for p, v, sign in ((law.lower - q, -qd, 1.0), (q - law.upper, qd, -1.0)):
            if p > 0.0:
                spring = law.k_stop * p
                tau += sign * (spring + min(max(law.d_stop * v, -spring), spring))
    return tau


class UnsupportedBlockError(TitopError):
    """The system holds something the Pinocchio reference does not model."""


@dataclass(frozen=True)
class BodyInfo:
    """Where a titopfmu body block lives in the Pinocchio model.

    ``kind`` is ``"root"`` (a floating RigidBody root), ``"ground"`` (a fixed base: the
    universe, joint 0), ``"revolute"``, ``"prismatic"``, ``"spherical"``, ``"free"`` or
    ``"welded"``; ``joint_id`` the Pinocchio joint that carries the body; ``placement`` the body
    frame (origin P) in that joint's frame; ``frame_id`` the operational frame named after the
    block; ``idx_q``/``idx_v`` the joint's first configuration / velocity index (-1 for a welded
    body); ``nv`` its number of velocities (0 for a welded body).

    A mimic follower (``leader`` not None: ``q_f = multiplier q_l + offset``) has no coordinate
    of its own in Pinocchio's reduced ``q, v``: its ``idx_q``, ``idx_v`` are its leader's, its
    ``nv`` (1) that of its titopfmu joint.
    """

    name: str
    kind: str
    joint_id: int
    placement: pin.SE3
    frame_id: int
    idx_q: int
    idx_v: int
    nv: int = 0
    leader: str | None = None
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class _External:
    block: str
    port: str
    joint_id: int
    placement: pin.SE3 | None  # None: identity (the body frame is the joint frame)
    point: FloatArray
    inertial: bool
    source: Callable[[float, FloatArray, FloatArray], FloatArray]


def _unit(v: ArrayLike) -> FloatArray:
    v = np.asarray(v, dtype=float).reshape(3)
    return v / np.linalg.norm(v)


def rotation_from_quaternion_xyzw(quat: ArrayLike) -> FloatArray:
    """DCM (body -> inertial) of a quaternion ``[x, y, z, w]`` (normalised here)."""
    x, y, z, w = np.asarray(quat, dtype=float) / np.linalg.norm(quat)
    return np.array(
        [
            [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y)],
            [2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x)],
            [2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)],
        ]
    )


def quaternion_rate_xyzw(quat: ArrayLike, omega: ArrayLike) -> FloatArray:
    """``d[x, y, z, w]/dt = ½ q ⊗ [ω, 0]`` for the local-frame angular velocity ω (rad/s), plus a
    norm-restoring term ``λ (1 - |q|²) q`` (the attitude it encodes is unaffected)."""
    x, y, z, w = quat
    p, r, s = omega
    lam = 1.0 - (x * x + y * y + z * z + w * w)
    return np.array(
        [
            0.5 * (w * p + y * s - z * r) + lam * x,
            0.5 * (w * r + z * p - x * s) + lam * y,
            0.5 * (w * s + x * r - y * p) + lam * z,
            -0.5 * (x * p + y * r + z * s) + lam * w,
        ]
    )


def euler_321(R: ArrayLike) -> FloatArray:
    """Euler angles [φ, θ, ψ] (rad) of the 3-2-1 sequence, ``R = R_z(ψ) R_y(θ) R_x(φ)``."""
    psi, th, phi = Rotation.from_matrix(np.asarray(R, dtype=float)).as_euler("ZYX")
    return np.array([phi, th, psi])


class PinocchioReference:
    """A Pinocchio model of a titopfmu system plus the conversions between the two.

    Attributes: ``model``, ``data`` (Pinocchio), ``system``, ``root`` (root block name),
    ``bodies`` (name -> :class:`BodyInfo`, titopfmu tree order), ``joints`` (names of the joint
    bodies in titopfmu tree order: the order of :meth:`accelerations` after the 6 root entries,
    each contributing its ``nv`` entries: 1 for revolute and prismatic, 3 for spherical, 6 for
    free joints), ``state_slices`` (the titopfmu engine state layout).
    """

    def __init__(self, system: System) -> None:
        self.system = system
        plan = system.check()
        self.state_slices: dict[str, slice] = dict(plan.state_slices)
        self.n_states: int = plan.n_states
        blocks = system.blocks
        for b in blocks.values():
            if isinstance(b, SignalBlock):
                continue
            if getattr(b, "flexible", None) is not None:
                raise UnsupportedBlockError(
                    f"block '{b.name}' is a flexible body: Pinocchio has rigid bodies only (the "
                    "flexible part's references are titopfmu.reference.flexible, a direct "
                    "finite-element analysis and Exudyn: docs/flexible.md §10)"
                )
            if type(b) not in SUPPORTED_BODIES:
                raise UnsupportedBlockError(
                    f"block '{b.name}' ({type(b).__name__}) is not supported by the Pinocchio "
                    "reference: only one root, a RigidBody (floating base) or a Ground (fixed "
                    "base), with RevoluteBody, PrismaticBody, SphericalBody, FreeBody and "
                    "WeldedBody descendants (forward dynamics), fed by signal blocks"
                )
        tree = [blocks[n] for n in plan.tree]
        roots = [b for b in tree if not b.has_parent]
        if (len(roots) != 1 or not isinstance(roots[0], (RigidBody, Ground))
                or tree[0] is not roots[0]):  # fmt: skip
            raise UnsupportedBlockError(
                f"the Pinocchio reference needs exactly one root, a RigidBody or a Ground; "
                f"roots: {[b.name for b in roots]}"
            )
        #: the root is a floating RigidBody (a free flyer), not a Ground (fixed base)
        self.floating = isinstance(tree[0], RigidBody)
        massive = [b for b in tree if not isinstance(b, Ground)]
        g = massive[0].gravity if massive else np.zeros(3)
        for b in massive:
            if not np.array_equal(b.gravity, g):
                raise UnsupportedBlockError(
                    f"block '{b.name}' has gravity {b.gravity.tolist()} but '{massive[0].name}' "
                    f"has {g.tolist()}; Pinocchio has one gravity per model"
                )

        model = pin.Model()
        model.name = system.name
        model.gravity = pin.Motion(np.array(g, dtype=float), np.zeros(3))
        self.bodies: dict[str, BodyInfo] = {}
        self.joints: list[str] = []
        for b in tree:
            if isinstance(b, Ground):  # the universe, placed by the base's position and euler
                X = pin.SE3(np.array(b.R), np.array(b.position, dtype=float))
                fid = model.addFrame(pin.Frame(b.name, 0, X, pin.FrameType.OP_FRAME))
                self.bodies[b.name] = BodyInfo(b.name, "ground", 0, X, fid, -1, -1, 0)
                continue
            if not b.has_parent:
                jid = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), b.name)
                kind, X = "root", pin.SE3.Identity()
            else:
                pname, pport = split_port(system.source(f"{b.name}.P"))
                parent = blocks[pname]
                pinfo = self.bodies[pname]
                C = np.array(parent.child_points[parent.child_names.index(pport)], dtype=float)
                if isinstance(b, RevoluteBody):
                    placement = pinfo.placement * pin.SE3(np.array(b.joint.R_a0b), C)
                    jm = pin.JointModelRevoluteUnaligned(_unit(b.joint.axis))
                    jid = model.addJoint(pinfo.joint_id, jm, placement, b.name)
                    kind, X = "revolute", pin.SE3.Identity()
                elif isinstance(b, PrismaticBody):
                    placement = pinfo.placement * pin.SE3(np.array(b.joint.R_ab), C)
                    jm = pin.JointModelPrismaticUnaligned(_unit(b.joint.axis))
                    jid = model.addJoint(pinfo.joint_id, jm, placement, b.name)
                    kind, X = "prismatic", pin.SE3.Identity()
                elif isinstance(b, (SphericalBody, FreeBody)):
                    placement = pinfo.placement * pin.SE3(np.array(b.joint.R_a0b), C)
                    if isinstance(b, SphericalBody):
                        jm, kind = pin.JointModelSpherical(), "spherical"
                    else:
                        jm, kind = pin.JointModelFreeFlyer(), "free"
                    jid = model.addJoint(pinfo.joint_id, jm, placement, b.name)
                    X = pin.SE3.Identity()
                else:  # WeldedBody
                    jid = pinfo.joint_id
                    kind, X = "welded", pinfo.placement * pin.SE3(np.array(b.joint.R_ab), C)
            inertia = pin.Inertia(float(b.mass), np.array(b.com, dtype=float), np.array(b.inertia))
            model.appendBodyToJoint(jid, inertia, X)
            fid = model.addFrame(pin.Frame(b.name, jid, X, pin.FrameType.OP_FRAME))
            if kind == "welded":
                iq = iv = -1
                nv = 0
            else:
                iq, iv = int(model.idx_qs[jid]), int(model.idx_vs[jid])
                nv = int(model.nvs[jid])
                if kind != "root":
                    self.joints.append(b.name)
            self.bodies[b.name] = BodyInfo(b.name, kind, jid, X, fid, iq, iv, nv)
        self.root = tree[0].name
        model = self._mimic_joints(model)
        self.model = model
        self.data = model.createData()
        self.nq, self.nv = model.nq, model.nv
        #: accelerations of the root in :meth:`accelerations` (6 for a free flyer, 0 for a Ground)
        self.n_root = 6 if self.floating else 0
        self._acc_index = np.array(
            list(range(self.n_root))
            + [
                j
                for n in self.joints
                for j in range(self.bodies[n].idx_v, self.bodies[n].idx_v + self.bodies[n].nv)
            ],
            dtype=int,
        )
        self.n_acc = len(self._acc_index)
        # with mimic joints: Pinocchio's reduced a (nv) -> titopfmu's accelerations (n_acc), a
        # follower's row the multiplier at its leader's column
        self._acc_map: FloatArray | None = None
        if self.followers:
            self._acc_map = np.zeros((self.n_acc, self.nv))
            row = self.n_root
            self._acc_map[np.arange(row), np.arange(row)] = 1.0
            for n in self.joints:
                info = self.bodies[n]
                for j in range(info.nv):
                    self._acc_map[row + j, info.idx_v + j] = info.multiplier
                row += info.nv
        one = [self.bodies[n] for n in self.joints
               if self.bodies[n].nv == 1 and self.bodies[n].leader is None]  # fmt: skip
        #: the followers' leader q and v indices, multipliers and offsets (:attr:`followers` order)
        self._followers_idx = self._follower_arrays()
        self._q1 = np.array([i.idx_q for i in one], dtype=int)  # 1-dof joints: q̇ = v
        self._v1 = np.array([i.idx_v for i in one], dtype=int)
        self._quat_joints = [
            (i.kind, i.idx_q, i.idx_v)
            for i in (self.bodies[n] for n in self.joints)
            if i.kind in ("spherical", "free")
        ]
        self._build_inputs()

    def _mimic_joints(self, model: pin.Model) -> pin.Model:
        """Each follower of a :class:`~titopfmu.blocks.JointMimic` made Pinocchio's mimic joint
        of its leader (``pin.transformJointIntoMimic``), the :attr:`bodies` re-indexed into the
        reduced ``q, v``; sets :attr:`followers` (follower name -> JointMimic)."""
        system, blocks = self.system, self.system.blocks
        #: follower joint name -> the JointMimic that ties it to its leader
        self.followers: dict[str, JointMimic] = {}
        pairs = []
        for name in self.joints:
            src = system.source(f"{name}.joint.tau")
            mm = blocks[split_port(src)[0]] if src is not None else None
            if not isinstance(mm, JointMimic):
                continue
            lref = system.source(f"{mm.name}.m")
            lead, lport = split_port(lref) if lref is not None else (None, None)
            linfo, finfo = self.bodies.get(lead), self.bodies[name]
            if (lport != "joint.m" or linfo is None or linfo.kind != finfo.kind
                    or finfo.kind not in ("revolute", "prismatic")):  # fmt: skip
                raise UnsupportedBlockError(
                    f"mimic joint '{mm.name}': its leader ({lref}) and follower ('{name}') must "
                    "be two revolute or two prismatic joint bodies (the leader's joint.m to its "
                    "'m', its 'tau' to the follower's joint.tau)"
                )
            if linfo.joint_id > finfo.joint_id:
                raise UnsupportedBlockError(
                    f"mimic joint '{mm.name}': the Pinocchio reference needs the leader "
                    f"'{lead}' before its follower '{name}' in the tree order (Pinocchio's "
                    "transformJointIntoMimic)"
                )
            self.followers[name] = mm
            pairs.append((finfo.joint_id, linfo.joint_id, name, lead, mm))
        if not pairs:
            return model
        leaders = {lead for _, _, _, lead, _ in pairs}
        for _, _, name, _, mm in pairs:
            if name in leaders:
                raise UnsupportedBlockError(
                    f"mimic joint '{mm.name}': '{name}' is a follower and a leader (a chain of "
                    "mimic joints)"
                )
        for fid, lid, _, _, mm in sorted(pairs, key=lambda p: p[0]):
            model = pin.transformJointIntoMimic(
                model, lid, fid, float(mm.multiplier), float(mm.offset)
            )
        lead_of = {name: (lead, mm) for _, _, name, lead, mm in pairs}
        for name, info in list(self.bodies.items()):
            if info.kind in ("welded", "ground"):
                continue
            if name in lead_of:
                lead, mm = lead_of[name]
                jl = self.bodies[lead].joint_id
                self.bodies[name] = replace(
                    info, idx_q=int(model.idx_qs[jl]), idx_v=int(model.idx_vs[jl]), leader=lead,
                    multiplier=float(mm.multiplier), offset=float(mm.offset),
                )  # fmt: skip
            else:
                jid = info.joint_id
                self.bodies[name] = replace(
                    info, idx_q=int(model.idx_qs[jid]), idx_v=int(model.idx_vs[jid])
                )
        # the follower's state from its leader's: the core's projection (titop_mimic_project)
        from ..assembly.engine import Engine

        self._project = Engine(system).consistent
        return model

    # -- signal sources -------------------------------------------------------------------------

    def _source_fn(self, consumer: str, size: int) -> Callable | float | FloatArray:
        """A constant value or a function f(t, q, v) for the input ``consumer``."""
        ref = self.system.source(consumer)
        sname, sport = split_port(ref)
        src = self.system.blocks[sname]
        if type(src) is Constant:
            return np.array(src.value, dtype=float).reshape(size)
        if type(src) is TimeFunction:
            f = src.f
            return lambda t, q, v: np.asarray(f(t), dtype=float).reshape(size)
        if type(src) is JointSpringDamper:
            mref = self.system.source(f"{sname}.m")
            jname, jport = split_port(mref)
            info = self.bodies.get(jname)
            if jport == "joint.m" and info is not None and info.kind in ("revolute", "prismatic"):
                iq, iv = info.idx_q, info.idx_v
                if info.leader is not None:  # a mimic follower: q_f = r q_l + offset
                    r, o = info.multiplier, info.offset
                    return lambda t, q, v: np.array(
                        [joint_law_effort(src, r * q[iq] + o, r * v[iv])]
                    )
                return lambda t, q, v: np.array([joint_law_effort(src, q[iq], v[iv])])

        def unsupported(t, q, v):
            if getattr(getattr(src, "declaration", None), "family", None) == "mimic":
                raise UnsupportedBlockError(
                    f"input '{consumer}' comes from the mimic joint '{sname}', whose effort "
                    "only its follower's joint.tau takes"
                )
            raise UnsupportedBlockError(
                f"input '{consumer}' comes from '{ref}' ({type(src).__name__}), which the "
                "Pinocchio reference does not interpret; pass its value explicitly"
            )

        return unsupported

    def _joint_slice(self, name: str) -> slice:
        info = self.bodies[name]
        return slice(info.idx_v, info.idx_v + info.nv)

    def _build_inputs(self) -> None:
        self._tau_const = np.zeros(self.nv)
        self._tau_dyn: list[tuple[slice, str, Callable]] = []
        for name in self.joints:
            if self.bodies[name].leader is not None:
                continue  # a mimic follower: its joint.tau is the constraint's (the mimic joint)
            sl = self._joint_slice(name)
            s = self._source_fn(f"{name}.joint.tau", self.bodies[name].nv)
            if callable(s):
                self._tau_dyn.append((sl, name, s))
            else:
                self._tau_const[sl] = s
        self._externals: list[_External] = []
        for name, info in self.bodies.items():
            b: BodyBlock = self.system.blocks[name]
            for ename, spec in b.external.items():
                s = self._source_fn(f"{name}.{ename}", 6)
                fn = s if callable(s) else (lambda t, q, v, c=s: c)
                ident = info.placement.isIdentity()
                self._externals.append(
                    _External(
                        name,
                        ename,
                        info.joint_id,
                        None if ident else info.placement,
                        np.array(spec.point, dtype=float),
                        spec.frame == "inertial",
                        fn,
                    )
                )
        self._need_fk = any(
            e.inertial and self.bodies[e.block].kind != "root" for e in self._externals
        )

    # -- conversions ----------------------------------------------------------------------------

    def q_v(self, x: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """titopfmu engine state -> Pinocchio ``(q, v)`` (the quaternion is normalised); a mimic
        follower's state is not read (Pinocchio's reduced ``q, v`` have its leader's only)."""
        x = np.asarray(x, dtype=float)
        q = np.empty(self.nq)
        v = np.empty(self.nv)
        for name, info in self.bodies.items():
            xs = x[self.state_slices[name]]
            if info.leader is not None:
                continue
            if info.kind == "root":
                q[0:3] = xs[0:3]
                quat = xs[[4, 5, 6, 3]]
                q[3:7] = quat / np.linalg.norm(quat)
                v[0:6] = xs[7:13]
            elif info.kind == "spherical":
                quat = xs[[1, 2, 3, 0]]
                q[info.idx_q : info.idx_q + 4] = quat / np.linalg.norm(quat)
                v[info.idx_v : info.idx_v + 3] = xs[4:7]
            elif info.kind == "free":
                R_a0b = self.system.blocks[name].joint.R_a0b
                quat = xs[[4, 5, 6, 3]]
                q[info.idx_q : info.idx_q + 3] = R_a0b.T @ xs[0:3]
                q[info.idx_q + 3 : info.idx_q + 7] = quat / np.linalg.norm(quat)
                v[info.idx_v : info.idx_v + 6] = xs[7:13]
            elif info.kind not in ("welded", "ground"):
                q[info.idx_q] = xs[0]
                v[info.idx_v] = xs[1]
        return q, v

    def state(self, q: ArrayLike, v: ArrayLike, x: ArrayLike | None = None) -> FloatArray:
        """Pinocchio ``(q, v)`` -> titopfmu engine state (other states copied from ``x``); a mimic
        follower's state set from its leader's by the core's projection (``Engine.consistent``).
        """
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        out = np.zeros(self.n_states) if x is None else np.array(x, dtype=float)
        for name, info in self.bodies.items():
            sl = self.state_slices[name]
            iq, iv = info.idx_q, info.idx_v
            if info.leader is not None:
                continue
            if info.kind == "root":
                out[sl] = np.concatenate([q[0:3], q[[6, 3, 4, 5]], v[0:6]])
            elif info.kind == "spherical":
                out[sl] = np.concatenate([q[[iq + 3, iq, iq + 1, iq + 2]], v[iv : iv + 3]])
            elif info.kind == "free":
                R_a0b = self.system.blocks[name].joint.R_a0b
                out[sl] = np.concatenate(
                    [R_a0b @ q[iq : iq + 3], q[[iq + 6, iq + 3, iq + 4, iq + 5]], v[iv : iv + 6]]
                )
            elif info.kind not in ("welded", "ground"):
                out[sl] = [q[iq], v[iv]]
        return self._project(out) if self.followers else out

    def initial_configuration(self) -> tuple[FloatArray, FloatArray]:
        """``(q, v)`` from the blocks' initial-condition parameters (position, euler, twist...)."""
        q = np.empty(self.nq)
        v = np.empty(self.nv)
        for name, info in self.bodies.items():
            b = self.system.blocks[name]
            if info.leader is not None:
                continue  # a mimic follower: its leader's (as the engine's initial state)
            if info.kind == "root":
                phi, th, psi = b.euler0
                q[0:3] = b.position0
                q[3:7] = Rotation.from_euler("ZYX", [psi, th, phi]).as_quat()  # [x, y, z, w]
                v[0:6] = b.twist0
            elif info.kind in ("spherical", "free"):
                quat = np.asarray(b.quaternion0, dtype=float)[[1, 2, 3, 0]]  # [x, y, z, w]
                iq, iv = info.idx_q, info.idx_v
                if info.kind == "spherical":
                    q[iq : iq + 4] = quat
                    v[iv : iv + 3] = b.omega0
                else:
                    q[iq : iq + 3] = b.joint.R_a0b.T @ np.asarray(b.position0, dtype=float)
                    q[iq + 3 : iq + 7] = quat
                    v[iv : iv + 6] = np.concatenate([b.velocity0, b.omega0])
            elif info.kind not in ("welded", "ground"):
                q[info.idx_q] = b.q0
                v[info.idx_v] = b.qd0
        return q, v

    def to_titop_acc(self, a: ArrayLike) -> FloatArray:
        """Pinocchio ``a`` (nv) -> [root acc (6; none for a Ground root), u̇ of :attr:`joints`]
        (titopfmu order); a mimic follower's is its multiplier times its leader's."""
        if self._acc_map is not None:
            return self._acc_map @ np.asarray(a)
        return np.asarray(a)[self._acc_index]

    # -- inputs ---------------------------------------------------------------------------------

    def efforts(
        self,
        t: float,
        q: FloatArray,
        v: FloatArray,
        overrides: Mapping[str, float] | Sequence[float] | None = None,
    ) -> FloatArray:
        """Generalised force vector ``tau`` (nv; zero on a root free flyer) at (t, q, v).

        ``overrides``: joint name -> effort (``nv`` values of that joint: the ``joint.tau`` of the
        block), or all of them in :attr:`joints` order (``n_acc - n_root`` values); the others come
        from the signal blocks wired to ``joint.tau``. A mimic follower's ``joint.tau`` is the
        constraint effort (the effort the joint transmits, computed with the accelerations, as
        the core reports it), not an input: it cannot be overridden (its entry in a sequence
        must be 0).
        """
        tau = self._tau_const.copy()
        given: dict[str, FloatArray] = {}
        if overrides is not None:
            if isinstance(overrides, Mapping):
                unknown = set(overrides) - set(self.joints)
                if unknown:
                    raise KeyError(f"no joint(s) {sorted(unknown)}; joints: {self.joints}")
                tied = sorted(set(overrides) & set(self.followers))
                if tied:
                    raise KeyError(
                        f"joint(s) {tied} follow a mimic joint: their effort is the constraint's, "
                        "not an input"
                    )
                given = {k: np.asarray(w, dtype=float).reshape(-1) for k, w in overrides.items()}
                for k, val in given.items():
                    if val.size != self.bodies[k].nv:
                        raise ValueError(
                            f"joint {k!r} takes {self.bodies[k].nv} effort(s), got {val.size}"
                        )
            else:
                vals = np.asarray(overrides, dtype=float).reshape(-1)
                if vals.size != self.n_acc - self.n_root:
                    raise ValueError(
                        f"expected {self.n_acc - self.n_root} efforts, got {vals.size}"
                    )
                sizes = np.cumsum([0] + [self.bodies[n].nv for n in self.joints])
                given = {n: vals[sizes[j] : sizes[j + 1]] for j, n in enumerate(self.joints)}
                for n in self.followers:
                    if np.any(given.pop(n) != 0.0):
                        raise ValueError(
                            f"joint {n!r} follows a mimic joint: its effort is the "
                            "constraint's, not an input (give 0)"
                        )
        for sl, name, fn in self._tau_dyn:
            if name not in given:
                tau[sl] = fn(t, q, v)
        for name, val in given.items():
            tau[self._joint_slice(name)] = val
        return tau + self.passive(q, v)

    def passive(self, q: FloatArray, v: FloatArray) -> FloatArray:
        """The generalised force (nv) of the ball and free joints' and the floating root's
        damping and springs (MuJoCo's mj_springdamper and -damping qvel), from the blocks'
        ``damping``, ``stiffness``, ``spring_ref``, ``spring_position``: ``-d v - k [t_R; θ]``
        on each such joint's Pinocchio velocity (local frame), see the module docstring."""
        out = np.zeros(self.nv)
        for name, info in self.bodies.items():
            b = self.system.blocks[name]
            d, k = float(getattr(b, "damping", 0.0)), float(getattr(b, "stiffness", 0.0))
            if info.kind not in ("root", "spherical", "free") or not (d or k):
                continue
            iq, iv, nv = info.idx_q, info.idx_v, info.nv
            out[iv : iv + nv] -= d * v[iv : iv + nv]
            if not k:
                continue
            q0 = np.asarray(b.spring_ref, dtype=float)[[1, 2, 3, 0]]
            quat = q[iq + (0 if info.kind == "spherical" else 3) :][:4]
            rel = Rotation.from_quat(q0).inv() * Rotation.from_quat(quat)
            out[iv + nv - 3 : iv + nv] -= k * rel.as_rotvec()
            if info.kind == "spherical":
                continue
            R = Rotation.from_quat(quat).as_matrix()  # the body's attitude in the parent's frame
            p = q[iq : iq + 3]
            if info.kind == "free":  # Pinocchio's t is in R_a0: [OP]_{R_b} = P_a0b t
                R0 = np.asarray(b.joint.R_a0b, dtype=float)
                p, R = R0 @ p, R0 @ R
            out[iv : iv + 3] -= k * (R.T @ (p - np.asarray(b.spring_position, dtype=float)))
        return out

    def external_forces(
        self,
        t: float,
        q: FloatArray,
        v: FloatArray,
        overrides: Mapping[str, ArrayLike] | None = None,
    ) -> list:
        """``fext`` of ``pin.aba``: one ``pin.Force`` per joint, in the joint's local frame,
        about its origin. ``overrides``: ``"block.port"`` -> [F, T] (6) replacing the signal
        wired to that external-wrench input (same frame and point as the block's spec)."""
        fext = [pin.Force.Zero() for _ in range(self.model.njoints)]
        if not self._externals:
            return fext
        overrides = overrides or {}
        unknown = set(overrides) - {f"{e.block}.{e.port}" for e in self._externals}
        if unknown:
            raise KeyError(f"no external-wrench input(s) {sorted(unknown)}")
        data = self._fresh() if self._need_fk else None
        if data is not None:
            pin.forwardKinematics(self.model, data, q)
        for e in self._externals:
            key = f"{e.block}.{e.port}"
            w = np.asarray(overrides[key] if key in overrides else e.source(t, q, v), dtype=float)
            F, T = w[0:3], w[3:6]
            if e.inertial:
                if self.bodies[e.block].kind == "root":
                    R = rotation_from_quaternion_xyzw(q[3:7])
                else:
                    R = data.oMi[e.joint_id].rotation
                    if e.placement is not None:
                        R = R @ e.placement.rotation
                F, T = R.T @ F, R.T @ T
            force = pin.Force(F, T + np.cross(e.point, F))  # about P, body frame
            if e.placement is not None:
                force = e.placement.act(force)
            fext[e.joint_id] += force
        return fext

    # -- dynamics -------------------------------------------------------------------------------

    def _fresh(self):
        """The Data of a Pinocchio call: :attr:`data`, or a new one on a model with mimic joints
        (see :meth:`forward_dynamics`)."""
        return self.model.createData() if self.followers else self.data

    def forward_dynamics(
        self, q: FloatArray, v: FloatArray, tau: FloatArray, fext: list | None = None
    ) -> FloatArray:
        """The accelerations (nv) without ``aba``, which Pinocchio 4.1 refuses on a model with
        mimic joints: ``M a = tau - b``, ``M = crba(q)`` (its upper triangle, symmetric), ``b =
        rnea(q, v, 0, fext)`` (gravity, Coriolis, centrifugal and the external forces), solved
        by a Cholesky factorisation (M is symmetric positive definite).

        A new Data each call: Pinocchio 4.1's ``crba`` on a mimic model, given a Data that an
        earlier ``crba`` call used, returns a wrong mass matrix that depends on that earlier
        call (observed on a 3-link arm whose second revolute joint mimics the first, multiplier
        -1.7: up to 290 % relative over 200 random configurations, while a fresh Data agrees
        with G^T M_full G of the model without the mimic to 4e-16; zeroing ``data.M`` first does
        not help). ``rnea`` showed no such effect: after ``crba`` on the same Data it equals
        ``rnea`` on a fresh one exactly (200 states of that arm and of the panda), so one Data
        serves both (creating one costs about 150 µs on the panda, 13 times its ``crba``)."""
        data = self.model.createData()
        # crba fills the upper triangle; the factorisation reads that triangle only (lower=False):
        # the Cholesky of the symmetrised matrix, without building it
        M = pin.crba(self.model, data, q)
        zero = np.zeros(self.nv)
        if fext is None:
            b = pin.rnea(self.model, data, q, v, zero)
        else:
            b = pin.rnea(self.model, data, q, v, zero, fext)
        factor = cho_factor(M, lower=False, check_finite=False)
        return cho_solve(factor, tau - b, check_finite=False)

    def aba(self, q: FloatArray, v: FloatArray, tau: FloatArray, fext: list | None = None):
        """``pin.aba`` on the model (the quaternion of q must be normalised); with mimic joints,
        :meth:`forward_dynamics`."""
        if self.followers:
            return self.forward_dynamics(q, v, tau, fext)
        if fext is None:
            return pin.aba(self.model, self.data, q, v, tau)
        return pin.aba(self.model, self.data, q, v, tau, fext)

    def accelerations(
        self,
        x: ArrayLike,
        t: float = 0.0,
        efforts: Mapping[str, float] | Sequence[float] | None = None,
        wrenches: Mapping[str, ArrayLike] | None = None,
    ) -> FloatArray:
        """Pinocchio's accelerations at the titopfmu engine state ``x`` and time ``t``:
        ``[v̇_P, ω̇ of a floating root (body frame), q̈ of each joint in :attr:`joints` order]``.

        Efforts and external wrenches come from the wired signal blocks unless given (see
        :meth:`efforts` and :meth:`external_forces`).
        """
        q, v = self.q_v(x)
        tau = self.efforts(t, q, v, efforts)
        fext = self.external_forces(t, q, v, wrenches)
        return self.to_titop_acc(self.aba(q, v, tau, fext))

    # -- integration ----------------------------------------------------------------------------

    def y_from_qv(self, q: ArrayLike, v: ArrayLike) -> FloatArray:
        """ODE state of :meth:`rhs`: ``y = [q (nq), v (nv)]``, followed, with mimic joints, by
        the followers' coordinates ``multiplier q_l + offset`` and speeds ``multiplier v_l``
        (:attr:`followers` order).

        Those copies make y hold the same values as the titopfmu engine's state, which keeps the
        followers' states: the integrator's error norm (an RMS over the components) and so its
        step choices are then those of the engine's run. They are integrated (their rates
        ``multiplier v_l`` and ``multiplier a_l``) but never read back: the dynamics use the
        reduced ``q, v`` only. Without them, the two legs of a chaotic motion (the panda
        falling onto its stops) part by their different step sequences' errors, amplified."""
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        if not self.followers:
            return np.concatenate([q, v])
        ql, vl, r, o = self._followers_idx
        return np.concatenate([q, v, r * q[ql] + o, r * v[vl]])

    def _follower_arrays(self) -> tuple:
        info = [self.bodies[n] for n in self.followers]
        return (
            np.array([i.idx_q for i in info], dtype=int),
            np.array([i.idx_v for i in info], dtype=int),
            np.array([i.multiplier for i in info]),
            np.array([i.offset for i in info]),
        )

    def rhs(self, t: float, y: FloatArray) -> FloatArray:
        """``dy/dt`` for ``y`` of :meth:`y_from_qv` (``[q, v]`` without mimic joints), the
        quaternion integrated as ``q̇ = ½ q ⊗ [ω, 0]`` plus a norm-restoring term
        ``λ (1 - |q|²) q`` (the attitude it encodes is unaffected)."""
        nq = self.nq
        q = y[0:nq].copy()
        v = y[nq : nq + self.nv]
        if self.floating:
            quat = y[3:7]
            q[3:7] = quat / math.sqrt(float(quat @ quat))
        for kind, iq, _ in self._quat_joints:
            j = iq if kind == "spherical" else iq + 3
            q[j : j + 4] /= np.linalg.norm(q[j : j + 4])
        tau = self._tau_const.copy()
        for sl, _, fn in self._tau_dyn:
            tau[sl] = fn(t, q, v)
        tau += self.passive(q, v)  # the ball and free joints' and the root's laws
        a = self.aba(q, v, tau, self.external_forces(t, q, v) if self._externals else None)
        dy = np.empty(len(y))
        if self.floating:
            dy[0:3] = rotation_from_quaternion_xyzw(q[3:7]) @ v[0:3]
            dy[3:7] = quaternion_rate_xyzw(quat, v[3:6])
        dy[self._q1] = v[self._v1]  # 1-dof joints: q̇ = v
        for kind, iq, iv in self._quat_joints:
            if kind == "spherical":
                dy[iq : iq + 4] = quaternion_rate_xyzw(y[iq : iq + 4], v[iv : iv + 3])
            else:  # free flyer: ṫ = R v (local linear velocity), q̇ from ω
                dy[iq : iq + 3] = rotation_from_quaternion_xyzw(q[iq + 3 : iq + 7]) @ v[iv : iv + 3]
                dy[iq + 3 : iq + 7] = quaternion_rate_xyzw(y[iq + 3 : iq + 7], v[iv + 3 : iv + 6])
        dy[nq : nq + self.nv] = a
        if self.followers:
            _, vl, r, _ = self._followers_idx
            nf = len(vl)
            end = nq + self.nv
            dy[end : end + nf] = r * v[vl]
            dy[end + nf :] = r * a[vl]
        return dy

    def simulate(
        self,
        t_final: float,
        t_eval: ArrayLike | None = None,
        *,
        t0: float = 0.0,
        q0: ArrayLike | None = None,
        v0: ArrayLike | None = None,
        method: str = "DOP853",
        rtol: float = 1e-8,
        atol: float = 1e-10,
        **kwargs,
    ):
        """``scipy.integrate.solve_ivp`` of :meth:`rhs` from the blocks' initial conditions (or
        ``q0, v0``). Returns the solve_ivp result; ``sol.y[:nq]`` is q, ``sol.y[nq:nq + nv]`` is
        v (then, with mimic joints, the followers' copies of :meth:`y_from_qv`)."""
        qi, vi = self.initial_configuration()
        q0 = qi if q0 is None else q0
        v0 = vi if v0 is None else v0
        return solve_ivp(
            self.rhs,
            (t0, t_final),
            self.y_from_qv(q0, v0),
            method=method,
            rtol=rtol,
            atol=atol,
            t_eval=t_eval,
            **kwargs,
        )

    # -- outputs --------------------------------------------------------------------------------

    def block_pose(self, q: ArrayLike, name: str) -> tuple[FloatArray, FloatArray]:
        """Inertial position of the block's reference point P (m) and its DCM P_{a/i}."""
        q = np.asarray(q, dtype=float).copy()
        if self.floating:
            q[3:7] /= np.linalg.norm(q[3:7])
        for kind, iq, _ in self._quat_joints:
            j = iq if kind == "spherical" else iq + 3
            q[j : j + 4] /= np.linalg.norm(q[j : j + 4])
        data = self._fresh()
        pin.framesForwardKinematics(self.model, data, q)
        M = data.oMf[self.bodies[name].frame_id]
        return M.translation.copy(), M.rotation.copy()

    def joint_coordinates(self, q: ArrayLike) -> FloatArray:
        """The joint positions of :attr:`joints` in a configuration q (nq) or in the columns of
        an (nq × T) array, as titopfmu's ``joint.m[2k:3k]``: q (rad or m) for a 1-dof joint, the
        3-2-1 Euler angles of the relative attitude P_{a/a0} (rad) for a spherical joint,
        ``[OP]_{R_b}`` (m) and those Euler angles for a free joint; a mimic follower's
        ``multiplier q_l + offset``."""
        q = np.asarray(q, dtype=float)
        if all(self.bodies[n].nv == 1 for n in self.joints):
            out = q[[self.bodies[n].idx_q for n in self.joints]]
            if self.followers:
                r = np.array([self.bodies[n].multiplier for n in self.joints])
                o = np.array([self.bodies[n].offset for n in self.joints])
                out = (r * out.T + o).T
            return out
        cols = q.reshape(self.nq, -1)
        rows = []
        for n in self.joints:
            info = self.bodies[n]
            iq = info.idx_q
            if info.kind == "spherical":
                rows += list(self._euler_columns(cols[iq : iq + 4]))
            elif info.kind == "free":
                rows += list(self.system.blocks[n].joint.R_a0b @ cols[iq : iq + 3])
                rows += list(self._euler_columns(cols[iq + 3 : iq + 7]))
            else:
                rows.append(info.multiplier * cols[iq] + info.offset)
        out = np.array(rows)
        return out[:, 0] if q.ndim == 1 else out

    @staticmethod
    def _euler_columns(quats: FloatArray) -> FloatArray:
        """3-2-1 Euler angles (3 × T) of the [x, y, z, w] quaternions in the columns of quats."""
        return np.array([euler_321(rotation_from_quaternion_xyzw(c)) for c in quats.T]).T


def to_pinocchio(system: System) -> PinocchioReference:
    """Build the Pinocchio reference of a titopfmu system (see the module docstring)."""
    return PinocchioReference(system)


__all__ = [
    "BodyInfo",
    "PinocchioReference",
    "UnsupportedBlockError",
    "euler_321",
    "quaternion_rate_xyzw",
    "rotation_from_quaternion_xyzw",
    "to_pinocchio",
]
