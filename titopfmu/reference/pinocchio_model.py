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
* gravity: ``model.gravity = Motion(g, 0)`` (all blocks must share the same g);
* an external wrench ``[F, T]`` about the point p (vector from P, body frame), given in the body
  or the inertial frame, becomes a force about the joint-frame origin, in the joint frame, added
  to the ``fext`` argument of ``pin.aba``.

Joint efforts and external wrenches are read, by default, from the signal blocks wired to the
``joint.tau`` and external-wrench inputs: :class:`~titopfmu.blocks.Constant`,
:class:`~titopfmu.blocks.TimeFunction` and :class:`~titopfmu.blocks.JointSpringDamper` (fed by a
joint motion of the model) are interpreted here from their parameters; any other source must be
given explicitly (``efforts=`` / ``wrenches=``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.integrate import solve_ivp
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
from ..blocks.signals import Constant, JointSpringDamper, SignalBlock, TimeFunction

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
    """

    name: str
    kind: str
    joint_id: int
    placement: pin.SE3
    frame_id: int
    idx_q: int
    idx_v: int
    nv: int = 0


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
        one = [self.bodies[n] for n in self.joints if self.bodies[n].nv == 1]
        self._q1 = np.array([i.idx_q for i in one], dtype=int)  # 1-dof joints: q̇ = v
        self._v1 = np.array([i.idx_v for i in one], dtype=int)
        self._quat_joints = [
            (i.kind, i.idx_q, i.idx_v)
            for i in (self.bodies[n] for n in self.joints)
            if i.kind in ("spherical", "free")
        ]
        self._build_inputs()

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
                return lambda t, q, v: np.array([joint_law_effort(src, q[iq], v[iv])])

        def unsupported(t, q, v):
            if getattr(getattr(src, "declaration", None), "family", None) == "mimic":
                raise UnsupportedBlockError(
                    f"input '{consumer}' comes from the mimic joint '{sname}': the Pinocchio "
                    "reference has no mimic joints yet (Pinocchio 4.1's aba refuses them); "
                    "tests/test_mimic.py checks them against Pinocchio's mimic model"
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
        """titopfmu engine state -> Pinocchio ``(q, v)`` (the quaternion is normalised)."""
        x = np.asarray(x, dtype=float)
        q = np.empty(self.nq)
        v = np.empty(self.nv)
        for name, info in self.bodies.items():
            xs = x[self.state_slices[name]]
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
        """Pinocchio ``(q, v)`` -> titopfmu engine state (other states copied from ``x``)."""
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        out = np.zeros(self.n_states) if x is None else np.array(x, dtype=float)
        for name, info in self.bodies.items():
            sl = self.state_slices[name]
            iq, iv = info.idx_q, info.idx_v
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
        return out

    def initial_configuration(self) -> tuple[FloatArray, FloatArray]:
        """``(q, v)`` from the blocks' initial-condition parameters (position, euler, twist...)."""
        q = np.empty(self.nq)
        v = np.empty(self.nv)
        for name, info in self.bodies.items():
            b = self.system.blocks[name]
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
        (titopfmu order)."""
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
        from the signal blocks wired to ``joint.tau``.
        """
        tau = self._tau_const.copy()
        given: dict[str, FloatArray] = {}
        if overrides is not None:
            if isinstance(overrides, Mapping):
                unknown = set(overrides) - set(self.joints)
                if unknown:
                    raise KeyError(f"no joint(s) {sorted(unknown)}; joints: {self.joints}")
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
        for sl, name, fn in self._tau_dyn:
            if name not in given:
                tau[sl] = fn(t, q, v)
        for name, val in given.items():
            tau[self._joint_slice(name)] = val
        return tau

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
        if self._need_fk:
            pin.forwardKinematics(self.model, self.data, q)
        for e in self._externals:
            key = f"{e.block}.{e.port}"
            w = np.asarray(overrides[key] if key in overrides else e.source(t, q, v), dtype=float)
            F, T = w[0:3], w[3:6]
            if e.inertial:
                if self.bodies[e.block].kind == "root":
                    R = rotation_from_quaternion_xyzw(q[3:7])
                else:
                    R = self.data.oMi[e.joint_id].rotation
                    if e.placement is not None:
                        R = R @ e.placement.rotation
                F, T = R.T @ F, R.T @ T
            force = pin.Force(F, T + np.cross(e.point, F))  # about P, body frame
            if e.placement is not None:
                force = e.placement.act(force)
            fext[e.joint_id] += force
        return fext

    # -- dynamics -------------------------------------------------------------------------------

    def aba(self, q: FloatArray, v: FloatArray, tau: FloatArray, fext: list | None = None):
        """``pin.aba`` on the model (the quaternion of q must be normalised)."""
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
        """ODE state of :meth:`rhs`: ``y = [q (nq), v (nv)]``."""
        return np.concatenate([np.asarray(q, dtype=float), np.asarray(v, dtype=float)])

    def rhs(self, t: float, y: FloatArray) -> FloatArray:
        """``dy/dt`` for ``y = [q, v]``, the quaternion integrated as ``q̇ = ½ q ⊗ [ω, 0]`` plus a
        norm-restoring term ``λ (1 - |q|²) q`` (the attitude it encodes is unaffected)."""
        nq = self.nq
        q = y[0:nq].copy()
        v = y[nq:]
        if self.floating:
            quat = y[3:7]
            q[3:7] = quat / math.sqrt(float(quat @ quat))
        for kind, iq, _ in self._quat_joints:
            j = iq if kind == "spherical" else iq + 3
            q[j : j + 4] /= np.linalg.norm(q[j : j + 4])
        tau = self._tau_const.copy()
        for sl, _, fn in self._tau_dyn:
            tau[sl] = fn(t, q, v)
        if self._externals:
            a = pin.aba(self.model, self.data, q, v, tau, self.external_forces(t, q, v))
        else:
            a = pin.aba(self.model, self.data, q, v, tau)
        dy = np.empty(nq + self.nv)
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
        dy[nq:] = a
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
        ``q0, v0``). Returns the solve_ivp result; ``sol.y[:nq]`` is q, ``sol.y[nq:]`` is v."""
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
        pin.framesForwardKinematics(self.model, self.data, q)
        M = self.data.oMf[self.bodies[name].frame_id]
        return M.translation.copy(), M.rotation.copy()

    def joint_coordinates(self, q: ArrayLike) -> FloatArray:
        """The joint positions of :attr:`joints` in a configuration q (nq) or in the columns of
        an (nq × T) array, as titopfmu's ``joint.m[2k:3k]``: q (rad or m) for a 1-dof joint, the
        3-2-1 Euler angles of the relative attitude P_{a/a0} (rad) for a spherical joint,
        ``[OP]_{R_b}`` (m) and those Euler angles for a free joint."""
        q = np.asarray(q, dtype=float)
        if all(self.bodies[n].nv == 1 for n in self.joints):
            return q[[self.bodies[n].idx_q for n in self.joints]]
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
                rows.append(cols[iq])
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
