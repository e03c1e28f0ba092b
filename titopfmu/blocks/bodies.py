"""Body blocks of the TITOP library (seed 004, secs. 2-3): parameters, ports and the object path.

The engine and the FMUs evaluate these blocks in the C core (:mod:`titopfmu.core`). The methods
below are the object path (a system with a user's block subclass, the master's loop, a block
evaluated on its own): each built-in block owns a one-body core model
(:class:`~titopfmu.core.model.LoneBlock`) and gets every equation from it; a subclass may
override any of them (``kinematics``, ``bias``, ``loop_map``, ``respond``, ``derivative``): an
overridden ``bias`` (e.g. an extra force) enters the inherited ``loop_map`` and ``respond``.

Every body block is causal and, at a fixed instant, **affine in the loop unknowns**: the spatial
acceleration it receives from its parent and the wrenches it receives from its children. A block
therefore exposes its equations as a map

    y = M u + c,   u = [ẋ'_P (6, if the block has a parent port), W_{./A,C1..Cn} (6 each)]
                   y = [W_{A/B,P} (6, if parent port), ẋ'_{C1..Cn} (6 each), extra outputs]

evaluated analytically here (``loop_map``) and, for an FMU, by evaluation through its inputs and
outputs. :mod:`titopfmu.assembly.loop_solver` resolves the algebraic loop of a tree from these maps
in one recursive sweep, for the in-process engine and the co-simulation master alike.

Frames: a block's parent port is projected in the parent's frame R_b, its child ports and all its
parameters (centre of mass, port points, axes, inertia) in its own body frame R_a, gravity in the
inertial frame R_i. Units are SI.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from ..core import _titop
from ..spatial.algebra import FloatArray, dynamic_model, kinematic_model
from ..spatial.rotations import dcm_from_euler, quaternion_from_euler
from .base import (
    Block,
    ParameterError,
    as_vector,
    check_inertia,
    check_mass,
)
from .joints import (
    FreeJoint,
    JointModel,
    PrismaticJoint,
    RevoluteJoint,
    SphericalJoint,
    WeldJoint,
    _finite_scalar,
    initial_quaternion,
)
from .loop_map import LoopMap

_I3 = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))

#: Standard gravity used when none is given (m/s², inertial frame, along -z).
DEFAULT_GRAVITY = (0.0, 0.0, -9.81)


class PortKinematics:
    """Twist, position and attitude of a port point (the pre-loop part of a motion vector).

    ``twist`` = [v, ω] (m/s, rad/s) and ``ip`` = [IP] (m) are projected in the frame of the block
    that owns the port; ``R`` = P_{frame/i} is that frame's DCM.
    """

    __slots__ = ("twist", "ip", "R", "packed")

    def __init__(
        self, twist: FloatArray, ip: FloatArray, R: FloatArray, packed: FloatArray | None = None
    ) -> None:
        self.twist = twist
        self.ip = ip
        self.R = R
        self.packed = packed  # [twist, ip, R] contiguous (the core's form), when known


class BodyKinematics:
    """Pre-loop kinematics of a body block: at its reference point P (``twist`` = x'_P, ``ip`` =
    [IP], in R_a; ``R`` = P_{a/i}; ``R_ab`` = P_{a/b} of a joint body) and at its child ports
    (``children``, :class:`PortKinematics`); ``imposed_acc`` = the imposed ẋ'_P of an
    imposed-motion body. ``data`` and ``inputs`` are the core's buffers of this evaluation of
    the block (:class:`~titopfmu.core.model.LoneBlock`)."""

    __slots__ = ("twist", "ip", "R", "R_ab", "children", "imposed_acc", "data", "inputs")

    def __init__(self, twist, ip, R, children, imposed_acc=None, data=None, inputs=None,
                 R_ab=None) -> None:  # fmt: skip
        self.twist: FloatArray = twist
        self.ip: FloatArray = ip
        self.R: FloatArray = R
        self.R_ab = R_ab
        self.children: list[PortKinematics] = children
        self.imposed_acc = imposed_acc
        self.data = data
        self.inputs = inputs

    @property
    def joint(self) -> BodyKinematics:
        """The joint's kinematics: this object (``R_ab``)."""
        return self


class Response:
    """A body's outputs at given loop inputs (see ``respond``): the wrench on its parent
    ``w_p`` (R_b, None for a root), its own acceleration ``acc`` at P (R_a), its child ports'
    accelerations ``acc_c`` (6 per port, R_a) and its extra outputs ``extra`` (q̈ of a forward
    joint, the effort of an inverse one, ẋ'_P of a root, the wrench of an imposed-motion body)."""

    __slots__ = ("w_p", "acc", "acc_c", "extra")

    def __init__(self, w_p, acc, acc_c, extra) -> None:
        self.w_p = w_p
        self.acc = acc
        self.acc_c = acc_c
        self.extra = extra


@dataclass(frozen=True)
class ExternalWrench:
    """An external-wrench input: applied at ``point`` (m, vector P→point in the body frame),
    given in the ``"body"`` or the ``"inertial"`` frame, torque taken about the point."""

    point: tuple[float, float, float] = (0.0, 0.0, 0.0)
    frame: Literal["body", "inertial"] = "body"


class CoreBlock(Block):
    """A block whose equations come from the C core, one step at a time (the object path): its
    one-body core model (:class:`~titopfmu.core.model.LoneBlock`, built on first use) gives its
    kinematics, bias, loop map, response and state derivative."""

    has_parent = False
    n_children = 0

    @property
    def core(self):
        """This block on its own in the core (:class:`~titopfmu.core.model.LoneBlock`)."""
        c = self.__dict__.get("_core")
        if c is None:
            from ..core.model import LoneBlock

            c = self.__dict__["_core"] = LoneBlock(self)
        return c

    def __getstate__(self) -> dict:
        """Pickled (Dask, multiprocessing) and deep-copied without :attr:`core`, a cache
        rebuilt on first use (the extension's model is not picklable)."""
        state = self.__dict__.copy()
        state.pop("_core", None)
        return state

    def kinematics(self, x: FloatArray, parent, signals, children: bool = True) -> BodyKinematics:
        """Pre-loop kinematics from the states ``x``, the parent port's
        :class:`PortKinematics` (a body with a parent) and the kinematic signal inputs;
        ``children=False`` skips the child ports (enough for the state derivative)."""
        from ..core.model import packed

        c = self.core
        data = np.empty(c.data_size)
        inp = c.inputs(signals, c.kin_slots)
        n = self.n_children
        ports = np.empty(18 * n) if children and n else None
        pk = packed(parent) if self.has_parent else None
        x = np.ascontiguousarray(x, dtype=float)
        c.model.block_kinematics(data, 0, x, inp, pk, ports)
        kids = []
        if ports is not None:
            kids = [PortKinematics(ports[o : o + 6], ports[o + 6 : o + 9],
                                   ports[o + 9 : o + 18].reshape(3, 3), ports[o : o + 18])
                    for o in range(0, 18 * n, 18)]  # fmt: skip
        R = c.field(data, "R", 9).reshape(3, 3)
        imposed = inp[c.imposed[0] : c.imposed[0] + 6].copy() if c.imposed else None
        R_ab = c.field(data, "E", 9).reshape(3, 3) if self.has_parent else None
        return BodyKinematics(c.field(data, "tw", 6), c.field(data, "ip", 3), R, kids, imposed,
                              data, inp, R_ab)  # fmt: skip

    def _prepare(self, kin: BodyKinematics, signals) -> FloatArray:
        """The inputs with every signal, and the bias in ``kin.data``: the core's, or that of
        an overridden :meth:`bias`."""
        c = self.core
        inp = c.inputs(signals, None, kin.inputs)
        if not isinstance(self, BodyBlock) or type(self).bias is BodyBlock.bias:
            c.model.block_bias(kin.data, 0, inp)
        else:
            c.field(kin.data, "h", 6)[:] = self.bias(kin.twist, kin.R, signals)
        return inp

    def loop_map(self, kin: BodyKinematics, signals) -> LoopMap:
        """The block's affine map at this instant (:mod:`titopfmu.blocks.loop_map`), from the
        core (``titop_block_map``): the joint-space form of a root body (eq. 11, α = ẋ'_P) and
        of a forward joint body (eqs. 17-23 / 24-29, α = u̇), the hybrid form of the others
        (welded, eq. 15; imposed joint motion, eqs. 21/27, its effort an extra output; imposed
        motion and fixed base, eq. 11 solved for the wrench)."""
        c = self.core
        inp = self._prepare(kin, signals)
        out = np.empty(c.map_size)
        c.model.block_map(kin.data, 0, inp, out)
        v = c.map_values(out)
        n = self.n_children
        kids = n > 0
        if c.ka and not self.has_parent:  # root body
            return LoopMap(J=v["J"], U=v["U"] if kids else None, f0=v["f0"],
                           cC=v["cC"] if kids else None, XA=v["XA"], xc=v["xc"])  # fmt: skip
        if not self.has_parent:  # imposed motion, fixed base
            return LoopMap(cC=v["cC"], XC=v["XC"], xc=v["xc"]) if kids else LoopMap(xc=v["xc"])
        if c.ka:  # forward joint
            return LoopMap(PP=v["PP"], PC=v["CP"].T if kids else None,
                           CP=v["CP"] if kids else None, U=v["U"] if kids else None, J=v["J"],
                           F=v["F"], f0=v["f0"], cP=v["cP"], cC=v["cC"] if kids else None,
                           XA=v["XA"], xc=v["xc"])  # fmt: skip
        ne = c.ne > 0
        XP, XC, xc = (v["XP"], v["XC"], v["xc"]) if ne else (None, None, None)
        if not kids:
            return LoopMap(PP=v["PP"], cP=v["cP"], XP=XP, xc=xc)
        return LoopMap(PP=v["PP"], PC=v["CP"].T, CP=v["CP"], cP=v["cP"], cC=v["cC"], XP=XP,
                       XC=XC, xc=xc)  # fmt: skip

    def respond(self, kin: BodyKinematics, signals, acc_p, w_c, full: bool = True) -> Response:
        """The block's outputs at given loop inputs (``titop_block_respond``): its acceleration
        at P, the wrench on its parent ``W_P = -G^T W_{B/A,P}`` (eqs. 18/25), its child ports'
        accelerations (eq. 14) and its extra output (see :class:`Response`). With
        ``full=False`` a forward joint body stops at u̇ (``extra``; the rest None), all a state
        derivative needs."""
        c = self.core
        inp = self._prepare(kin, signals)
        n = self.n_children
        accc = np.empty(6 * n) if n else None
        forward = c.ka and self.has_parent
        ap = None if acc_p is None else np.ascontiguousarray(acc_p, dtype=float)
        wc = None if not n else np.ascontiguousarray(w_c, dtype=float)
        r = c.model.block_respond(kin.data, 0, inp, ap, wc, full or not forward, accc)
        if r:
            raise ArithmeticError(f"block '{self.name}': singular equations (core status {r[0]})")
        d = kin.data
        k = getattr(getattr(self, "joint", None), "dof", 0)
        if not self.has_parent:
            acc = c.field(d, "acc", 6).copy()
            extra = acc if c.ka else c.field(d, "out", 6).copy()
            return Response(None, acc, accc, extra)
        if not k:
            extra = None
        else:
            extra = c.field(d, "alpha" if forward else "effort", k).copy()
        if forward and not full:
            return Response(None, None, None, extra)
        return Response(c.field(d, "wrench_parent", 6).copy(), c.field(d, "acc", 6).copy(), accc,
                        extra)  # fmt: skip

    def derivative(self, x: FloatArray, kin, extra: FloatArray) -> FloatArray:
        """The state derivative (``titop_block_state_rate``): a root's ``[P_{b/i} v_P ; q̇ ;
        ẋ'_P]`` (eq. 12, quaternion attitude), a joint body's ``[q̇ = f(q, u) (nq), u̇ (k)]``;
        ``extra`` = ẋ'_P or u̇ from the loop solution; ``kin`` is only read when
        :attr:`derivative_uses_kinematics`."""
        c = self.core
        out = np.empty(self.n_states)
        data = c.scratch if kin is None else kin.data
        c.model.block_state_rate(data, 0, np.ascontiguousarray(x, dtype=float),
                                 np.ascontiguousarray(extra, dtype=float), out)  # fmt: skip
        return out


class BodyBlock(CoreBlock):
    """Common part of the body blocks: mass properties, child ports, external wrenches, gravity.

    Parameters
    ----------
    name:
        Block name (no dots).
    mass:
        Mass m (kg), > 0.
    inertia:
        Inertia tensor I_B at the centre of mass B, in the body frame (kg m²), 3×3 symmetric
        positive semi-definite (positive definite for a root body).
    com:
        Vector PB from the reference point P to the centre of mass B, in the body frame (m).
    children:
        Child ports: name -> vector PC from P to the port point C, in the body frame (m).
    external:
        External-wrench inputs: name -> :class:`ExternalWrench` (or a dict of its fields). Each
        becomes a 6-component ``signal_in`` port of that name.
    gravity:
        Uniform gravitational acceleration g in the inertial frame (m/s²).
    """

    has_parent = True
    n_extra = 0
    kinematic_inputs: tuple[str, ...] = ()
    #: whether :meth:`derivative` reads its ``kin`` argument (the engine may pass None if not)
    derivative_uses_kinematics = True

    def __init__(
        self,
        name: str,
        mass: float,
        inertia: ArrayLike,
        com: ArrayLike = (0.0, 0.0, 0.0),
        children: Mapping[str, ArrayLike] | None = None,
        external: Mapping[str, ExternalWrench | Mapping] | None = None,
        gravity: ArrayLike = DEFAULT_GRAVITY,
        *,
        root: bool = False,
    ) -> None:
        super().__init__(name)
        self.mass = check_mass(name, mass)
        self.inertia = check_inertia(name, inertia, positive_definite=root)
        self.com = as_vector(name, "com", com, 3)
        self.gravity = as_vector(name, "gravity", gravity, 3)
        self.D = dynamic_model(self.mass, self.inertia, -self.com)  # D_P, eq. (4)
        self.child_names: tuple[str, ...] = tuple(children or {})
        self.child_points = [
            as_vector(name, f"children[{c}]", p, 3) for c, p in (children or {}).items()
        ]
        n = len(self.child_points)
        # τ_{C_i P} for twists/accelerations, stacked (6n×6); its transpose T sums the wrenches
        # transported to P (eq. 13).
        self.tau_stack = np.zeros((6 * n, 6))
        for i, pc in enumerate(self.child_points):
            self.tau_stack[6 * i : 6 * i + 6] = kinematic_model(-pc)
        self.T = self.tau_stack.T.copy()
        self.external: dict[str, ExternalWrench] = {}
        # (name, given in the inertial frame, point PE) for :meth:`bias`
        self._externals: list[tuple[str, bool, FloatArray]] = []
        for ename, spec in (external or {}).items():
            if isinstance(spec, Mapping):
                try:
                    spec = ExternalWrench(**spec)
                except TypeError:
                    raise ParameterError(
                        name,
                        f"external[{ename}]",
                        f"expected keys 'point' and 'frame', got {sorted(spec)}",
                    ) from None
            elif not isinstance(spec, ExternalWrench):
                raise ParameterError(
                    name, f"external[{ename}]", f"not an ExternalWrench or a dict: {spec!r}"
                )
            if spec.frame not in ("body", "inertial"):
                raise ParameterError(
                    name, f"external[{ename}].frame", f"'body' or 'inertial', not {spec.frame!r}"
                )
            point = as_vector(name, f"external[{ename}].point", spec.point, 3)
            self.external[ename] = ExternalWrench(tuple(point), spec.frame)
            self._externals.append((ename, spec.frame == "inertial", point))
        for c in self.child_names:
            self._add_port(
                c,
                "child",
                24,
                f"child port {c}: motion vector out (18, in R_{name}); wrench applied on {name} in "
                f"(6, in R_{name})",
            )
        for ename, spec in self.external.items():
            self._add_port(
                ename,
                "signal_in",
                6,
                f"external wrench [F (N), T (N m) about the point {list(spec.point)}] on {name}, "
                f"in the {spec.frame} frame",
            )

    @property
    def n_children(self) -> int:
        return len(self.child_names)

    # -- shared equations -----------------------------------------------------------------------

    def bias(
        self, twist: FloatArray, R: FloatArray, signals: Mapping[str, FloatArray]
    ) -> FloatArray:
        """``h = C(x'_P) D_P x'_P - D_P [g; 0] - Σ τ_EP^T W_ext,E`` (eqs. 7, 11 and 13), in R_a,
        from the core (``titop_block_bias``).

        With it, Newton-Euler reads ``D_P ẋ'_P + h = Σ τ_{C_i P}^T W_{./A,C_i} + W_{./A,P}``.
        ``twist`` = x'_P (R_a), ``R`` = P_{a/i}, ``signals`` the external wrenches by name. A
        subclass may override it: :meth:`loop_map` and :meth:`respond` then use its value.
        """
        c = self.core
        data = np.zeros(c.data_size)
        c.field(data, "tw", 6)[:] = twist
        c.field(data, "R", 9)[:] = np.asarray(R, dtype=float).reshape(9)
        c.model.block_bias(data, 0, c.inputs(signals))
        return c.field(data, "h", 6).copy()

    # -- invariants (for tests and users) -------------------------------------------------------

    def kinetic_energy(self, kin: BodyKinematics) -> float:
        """½ x'^T D_P x' (eq. 10), J."""
        return 0.5 * float(kin.twist @ self.D @ kin.twist)

    def com_position(self, kin: BodyKinematics) -> FloatArray:
        """Centre of mass in the inertial frame (m)."""
        return kin.R @ (kin.ip + self.com)

    def potential_energy(self, kin: BodyKinematics) -> float:
        """Gravitational potential -m g·IB (J), zero at the inertial origin."""
        return -self.mass * float(self.gravity @ self.com_position(kin))

    def momentum(self, kin: BodyKinematics) -> FloatArray:
        """[linear momentum (kg m/s); angular momentum about the inertial origin I (kg m²/s)],
        both in the inertial frame."""
        v, w = kin.twist[0:3], kin.twist[3:6]
        p_b = self.mass * (v + np.cross(w, self.com))
        p = kin.R @ p_b
        h = np.cross(self.com_position(kin), p) + kin.R @ (self.inertia @ w)
        return np.concatenate([p, h])


# ----------------------------------------------------------------------------------------------
# roots
# ----------------------------------------------------------------------------------------------


class RigidBody(BodyBlock):
    """Root rigid body, forward dynamics ``G^B_{P,C1..Cn}`` (Figs. 2-3, eqs. 11-13).

    States (13): inertial position [IP]_{R_i} (m), attitude quaternion [w, x, y, z] (integrated
    without Euler singularity), twist [v_P, ω] at P in R_b (m/s, rad/s). The Euler angles appear
    only on the ports. Extra output: the spatial acceleration ẋ'_P (6).

    Extra parameters: ``position`` [IP(0)]_{R_i} (m), ``euler`` Θ(0) (rad, 3-2-1), ``twist`` x'_P(0)
    in R_b (m/s, rad/s).
    """

    kind = "rigid_body"
    has_parent = False
    n_extra = 6

    def __init__(
        self,
        name: str,
        mass: float,
        inertia: ArrayLike,
        com: ArrayLike = (0.0, 0.0, 0.0),
        children: Mapping[str, ArrayLike] | None = None,
        external: Mapping[str, ExternalWrench | Mapping] | None = None,
        gravity: ArrayLike = DEFAULT_GRAVITY,
        position: ArrayLike = (0.0, 0.0, 0.0),
        euler: ArrayLike = (0.0, 0.0, 0.0),
        twist: ArrayLike = (0.0,) * 6,
    ) -> None:
        super().__init__(name, mass, inertia, com, children, external, gravity, root=True)
        self.position0 = as_vector(name, "position", position, 3)
        self.euler0 = as_vector(name, "euler", euler, 3)
        self.twist0 = as_vector(name, "twist", twist, 6)
        self.state_names = (
            "x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz",
        )  # fmt: skip

    def initial_state(self) -> FloatArray:
        return np.concatenate([self.position0, quaternion_from_euler(self.euler0), self.twist0])



class ImposedMotionBody(BodyBlock):
    """Direct dynamic model of a body with imposed motion (Fig. 1): inverse dynamics of a root.

    Signal input ``m`` (18): the motion vector imposed at P, projected in the body frame. Extra
    output and signal ``W`` (6): the external wrench W_ext,P that must be applied at P, in the body
    frame, to produce that motion (eq. 11 solved for the wrench). Child ports carry the transported
    motion (eq. 14). No state.
    """

    kind = "imposed_motion_body"
    has_parent = False
    n_extra = 6

    def __init__(
        self,
        name: str,
        mass: float,
        inertia: ArrayLike,
        com: ArrayLike = (0.0, 0.0, 0.0),
        children: Mapping[str, ArrayLike] | None = None,
        external: Mapping[str, ExternalWrench | Mapping] | None = None,
        gravity: ArrayLike = DEFAULT_GRAVITY,
    ) -> None:
        super().__init__(
            name, mass, inertia, com=com, children=children, external=external, gravity=gravity
        )
        self._add_port("m", "signal_in", 18, "imposed motion vector at P (18, in the body frame)")
        self._add_port("W", "signal_out", 6, "external wrench required at P (6, body frame)")

    kinematic_inputs = ("m",)

class Ground(CoreBlock):
    """Fixed base: a root whose motion is null (inverse dynamics with zero imposed motion).

    Child ports at points (m, vector from the base origin O to the port, base frame); ``position``
    [IO]_{R_i} (m) and ``euler`` (rad) place the base in the inertial frame. Extra output and
    signal ``W`` (6): the wrench the outside must apply at O to hold the base (reaction).
    """

    kind = "ground"
    has_parent = False
    n_extra = 6
    kinematic_inputs = ()

    def __init__(
        self,
        name: str,
        children: Mapping[str, ArrayLike] | None = None,
        position: ArrayLike = (0.0, 0.0, 0.0),
        euler: ArrayLike = (0.0, 0.0, 0.0),
    ) -> None:
        super().__init__(name)
        self.child_names = tuple(children or {})
        self.child_points = [
            as_vector(name, f"children[{c}]", p, 3) for c, p in (children or {}).items()
        ]
        self.position = as_vector(name, "position", position, 3)
        self.euler = as_vector(name, "euler", euler, 3)
        self.R = dcm_from_euler(self.euler)
        n = len(self.child_points)
        self.tau_stack = np.zeros((6 * n, 6))
        for i, pc in enumerate(self.child_points):
            self.tau_stack[6 * i : 6 * i + 6] = kinematic_model(-pc)
        self.T = self.tau_stack.T.copy()
        self.external = {}
        for c in self.child_names:
            self._add_port(c, "child", 24, f"child port {c} of the fixed base {name}")
        self._add_port("W", "signal_out", 6, "wrench holding the base at O (6, base frame)")

    @property
    def n_children(self) -> int:
        return len(self.child_names)

    def kinematics(self, x, parent, signals, children: bool = True) -> BodyKinematics:
        """The base's pose (constant; computed once by the core)."""
        kin = self.__dict__.get("_kin")
        if kin is None:
            kin = self.__dict__["_kin"] = super().kinematics(np.zeros(0), None, {})
        return kin


# ----------------------------------------------------------------------------------------------
# bodies hanging from a parent through a joint
# ----------------------------------------------------------------------------------------------


class JointBody(BodyBlock):
    """A body A hanging from its parent B through a joint: the TITOP model ``R^{A,.}_{P,C1..Cn}``.

    One implementation for the welded (eq. 15), revolute (eqs. 16-23), prismatic (eqs. 24-29),
    spherical and free (:class:`~titopfmu.blocks.joints.SphericalJoint`,
    :class:`~titopfmu.blocks.joints.FreeJoint`) cases, forward (driving effort in, joint
    acceleration out, eqs. 22 and 28) or inverse (imposed joint motion in, driving effort out,
    eqs. 21 and 27). The joint point is the reference point P of A; the parent port is projected
    in R_b, everything else in R_a.

    A k-dof joint with ``nq`` configuration coordinates has the states ``[q (nq), u (k)]`` (u: the
    generalized speeds, ``q̇ = f(q, u)`` given by the joint model), the extra output ``u̇`` (k)
    and the joint motion ``joint.m = [u̇, u, p]`` (3k, p = the joint's position output).
    """

    has_parent = True
    inverse = False
    kinematic_inputs: tuple[str, ...] = ()

    def __init__(
        self,
        name: str,
        mass,
        inertia,
        joint: JointModel,
        com: ArrayLike = (0.0, 0.0, 0.0),
        children: Mapping[str, ArrayLike] | None = None,
        external: Mapping[str, ExternalWrench | Mapping] | None = None,
        gravity: ArrayLike = DEFAULT_GRAVITY,
    ) -> None:
        super().__init__(
            name, mass, inertia, com=com, children=children, external=external, gravity=gravity
        )
        self.joint = joint
        k = joint.dof
        if joint.identity_rate and joint.nq != k:  # derivative() relies on q̇ = u
            raise TypeError(f"{type(joint).__name__}: identity_rate needs nq == dof")
        self.derivative_uses_kinematics = not joint.identity_rate
        self.n_extra = k
        self._add_port(
            "P",
            "parent",
            24,
            f"parent port: motion vector of the parent at P in (18, in the parent frame); wrench "
            f"applied by {name} on its parent out (6, in the parent frame)",
        )
        if k:
            j = np.zeros((k, k))  # apparent inertia seen from the joint, eq. (20): the core's
            singular = _titop.check_apparent_inertia(  # check, the FMUs' too
                np.ascontiguousarray(joint.S, dtype=float).reshape(6 * k),
                np.ascontiguousarray(self.D, dtype=float).reshape(36), k, j.reshape(k * k),
            ) == _titop.CHECK_SINGULAR  # fmt: skip
            if singular:
                raise ParameterError(
                    name,
                    "inertia",
                    f"the apparent inertia seen from the joint (eq. 20) is "
                    f"{'zero' if k == 1 else 'singular'}: {j.tolist()}; the body cannot be moved "
                    "by its joint (e.g. a point mass on a revolute axis or on a ball joint)",
                )
            unit = joint.coordinate_unit
            effort = "N m" if unit == "rad" else "N"
            motion_doc = joint.motion_doc or f"[q̈, q̇, q] ({unit})"
            effort_doc = joint.effort_doc or f"driving effort C_m / F_m ({effort})"
            if self.inverse:
                self.kinematic_inputs = ("joint.m",)
                self._add_port("joint.m", "signal_in", 3 * k, f"imposed joint motion {motion_doc}")
                self._add_port("joint.tau", "signal_out", k, f"{effort_doc}, required")
            else:
                self._add_port("joint.tau", "signal_in", k, effort_doc)
                self._add_port("joint.m", "signal_out", 3 * k, f"joint motion m = {motion_doc}")

    def joint_motion(self, x: FloatArray, acc: FloatArray) -> FloatArray:
        """Forward block: ``joint.m = [u̇ (k), u (k), p (k)]`` from the states ``x`` and
        ``acc`` = u̇ (NaN before the loop is solved)."""
        joint = self.joint
        nq, k = joint.nq, joint.dof
        return np.concatenate([acc, x[nq : nq + k], joint.position_output(x[0:nq])])

    def acceleration(self, kin: BodyKinematics, acc_p: FloatArray, alpha: FloatArray
                     ) -> FloatArray:  # fmt: skip
        """``ẋ'_A = G ẋ'_B + e + S u̇`` (eqs. 17, 24; ``titop_block_acceleration``) from the
        parent port's acceleration ``acc_p`` (R_b) and ``alpha`` = u̇ (k), in R_a."""
        out = np.empty(6)
        ap, al = np.ascontiguousarray(acc_p, dtype=float), np.ascontiguousarray(alpha, dtype=float)
        self.core.model.block_acceleration(kin.data, 0, ap, al, out)
        return out


class WeldedBody(JointBody):
    """Welded body ``R^A_{P,C1..Cn}`` (Fig. 4 and 6, eq. 15): static, no state.

    ``P_ab`` is the constant DCM P_{a/b} from R_a to the parent frame R_b.
    """

    kind = "welded_body"

    def __init__(
        self,
        name: str,
        mass,
        inertia,
        P_ab: ArrayLike = _I3,
        com: ArrayLike = (0.0, 0.0, 0.0),
        children: Mapping[str, ArrayLike] | None = None,
        external: Mapping[str, ExternalWrench | Mapping] | None = None,
        gravity: ArrayLike = DEFAULT_GRAVITY,
    ) -> None:
        super().__init__(
            name,
            mass,
            inertia,
            WeldJoint(name, P_ab),
            com=com,
            children=children,
            external=external,
            gravity=gravity,
        )


class _OneDofBody(JointBody):
    def _init_state(self, q0: float, qd0: float, names: tuple[str, str]) -> None:
        self.q0 = _finite_scalar(self.name, names[0], q0)
        self.qd0 = _finite_scalar(self.name, names[1], qd0)
        if not self.inverse:
            self.state_names = ("q", "qd")

    def initial_state(self) -> FloatArray:
        return np.array([self.q0, self.qd0]) if not self.inverse else np.zeros(0)


class RevoluteBody(_OneDofBody):
    """Revolute-joint body ``R^{A,r}_{P,C1..Cn}`` (Figs. 8-9, eqs. 16-23), forward dynamics.

    Parameters beyond :class:`BodyBlock`: ``axis`` r in R_a (normalised; zero is an error),
    ``P_a0b`` = P_{a0/b} (DCM at θ = 0), ``theta0`` θ(0) (rad), ``theta_dot0`` θ̇(0) (rad/s).
    Signal in ``joint.tau`` = C_m (N m); signal out ``joint.m`` = [θ̈, θ̇, θ]. States θ, θ̇.
    """

    kind = "revolute_body"

    def __init__(
        self,
        name: str,
        mass,
        inertia,
        axis: ArrayLike = (0.0, 0.0, 1.0),
        P_a0b: ArrayLike = _I3,
        theta0: float = 0.0,
        theta_dot0: float = 0.0,
        com: ArrayLike = (0.0, 0.0, 0.0),
        children: Mapping[str, ArrayLike] | None = None,
        external: Mapping[str, ExternalWrench | Mapping] | None = None,
        gravity: ArrayLike = DEFAULT_GRAVITY,
    ) -> None:
        super().__init__(
            name,
            mass,
            inertia,
            RevoluteJoint(name, axis, P_a0b),
            com=com,
            children=children,
            external=external,
            gravity=gravity,
        )
        self._init_state(theta0, theta_dot0, ("theta0", "theta_dot0"))


class PrismaticBody(_OneDofBody):
    """Prismatic-joint body ``R^{A,t}_{P0,C1..Cn}`` (Figs. 11-12, eqs. 24-29), forward dynamics.

    Parameters beyond :class:`BodyBlock`: ``axis`` t in R_a, ``P_ab`` = P_{a/b} (constant DCM),
    ``x0`` x(0) (m), ``x_dot0`` ẋ(0) (m/s). The joint point P0 is fixed in the parent; the reference
    point P of A coincides with P0 at x = 0. Signal in ``joint.tau`` = F_m (N); signal out
    ``joint.m`` = [ẍ, ẋ, x]. States x, ẋ.
    """

    kind = "prismatic_body"

    def __init__(
        self,
        name: str,
        mass,
        inertia,
        axis: ArrayLike = (1.0, 0.0, 0.0),
        P_ab: ArrayLike = _I3,
        x0: float = 0.0,
        x_dot0: float = 0.0,
        com: ArrayLike = (0.0, 0.0, 0.0),
        children: Mapping[str, ArrayLike] | None = None,
        external: Mapping[str, ExternalWrench | Mapping] | None = None,
        gravity: ArrayLike = DEFAULT_GRAVITY,
    ) -> None:
        super().__init__(
            name,
            mass,
            inertia,
            PrismaticJoint(name, axis, P_ab),
            com=com,
            children=children,
            external=external,
            gravity=gravity,
        )
        self._init_state(x0, x_dot0, ("x0", "x_dot0"))


class RevoluteBodyInverse(RevoluteBody):
    """Revolute-joint body with imposed joint motion (inverse dynamics, eq. 21).

    Signal in ``joint.m`` = [θ̈, θ̇, θ] (rad/s², rad/s, rad); signal out ``joint.tau`` = C_m (N m).
    No state.
    """

    kind = "revolute_body_inverse"
    inverse = True

    def __init__(
        self,
        name: str,
        mass,
        inertia,
        axis: ArrayLike = (0.0, 0.0, 1.0),
        P_a0b: ArrayLike = _I3,
        com: ArrayLike = (0.0, 0.0, 0.0),
        children: Mapping[str, ArrayLike] | None = None,
        external: Mapping[str, ExternalWrench | Mapping] | None = None,
        gravity: ArrayLike = DEFAULT_GRAVITY,
    ) -> None:
        super().__init__(
            name,
            mass,
            inertia,
            axis=axis,
            P_a0b=P_a0b,
            com=com,
            children=children,
            external=external,
            gravity=gravity,
        )


class PrismaticBodyInverse(PrismaticBody):
    """Prismatic-joint body with imposed joint motion (inverse dynamics, eq. 27).

    Signal in ``joint.m`` = [ẍ, ẋ, x] (m/s², m/s, m); signal out ``joint.tau`` = F_m (N). No state.
    """

    kind = "prismatic_body_inverse"
    inverse = True

    def __init__(
        self,
        name: str,
        mass,
        inertia,
        axis: ArrayLike = (1.0, 0.0, 0.0),
        P_ab: ArrayLike = _I3,
        com: ArrayLike = (0.0, 0.0, 0.0),
        children: Mapping[str, ArrayLike] | None = None,
        external: Mapping[str, ExternalWrench | Mapping] | None = None,
        gravity: ArrayLike = DEFAULT_GRAVITY,
    ) -> None:
        super().__init__(
            name,
            mass,
            inertia,
            axis=axis,
            P_ab=P_ab,
            com=com,
            children=children,
            external=external,
            gravity=gravity,
        )


# ----------------------------------------------------------------------------------------------
# multi-dof joints with a quaternion attitude
# ----------------------------------------------------------------------------------------------


class SphericalBody(JointBody):
    """Spherical-joint (ball-and-socket) body, 3 dof, forward dynamics.

    The joint model is :class:`~titopfmu.blocks.joints.SphericalJoint` (its docstring derives
    the equations, after eqs. 16-23). Parameters beyond :class:`BodyBlock`: ``P_a0b`` = P_{a0/b}
    (DCM of A w.r.t. the parent at zero rotation), the initial relative attitude P_{a/a0} as
    ``euler0`` (3-2-1 Euler angles [φ, θ, ψ], rad) or ``quaternion0`` (unit, [w, x, y, z]; at
    most one of them, identity by default), ``omega0`` = ω_r(0), the relative angular velocity of
    A w.r.t. its parent in R_a (rad/s).

    States (7): the relative quaternion ``qw, qx, qy, qz`` and ``wx, wy, wz`` = ω_r (R_a).
    Signal in ``joint.tau`` (3): torque applied by the parent on A (N m, R_a). Signal out
    ``joint.m`` (9) = [ω̇_r (rad/s², R_a), ω_r (rad/s, R_a), Euler angles of P_{a/a0} (rad)].
    """

    kind = "spherical_body"

    def __init__(
        self,
        name: str,
        mass,
        inertia,
        P_a0b: ArrayLike = _I3,
        euler0: ArrayLike | None = None,
        quaternion0: ArrayLike | None = None,
        omega0: ArrayLike = (0.0, 0.0, 0.0),
        com: ArrayLike = (0.0, 0.0, 0.0),
        children: Mapping[str, ArrayLike] | None = None,
        external: Mapping[str, ExternalWrench | Mapping] | None = None,
        gravity: ArrayLike = DEFAULT_GRAVITY,
    ) -> None:
        super().__init__(
            name,
            mass,
            inertia,
            SphericalJoint(name, P_a0b),
            com=com,
            children=children,
            external=external,
            gravity=gravity,
        )
        if not self.inverse:
            self.quaternion0 = initial_quaternion(name, euler0, quaternion0)
            self.omega0 = as_vector(name, "omega0", omega0, 3)
            self.state_names = ("qw", "qx", "qy", "qz", "wx", "wy", "wz")

    def initial_state(self) -> FloatArray:
        if self.inverse:
            return np.zeros(0)
        return np.concatenate([self.quaternion0, self.omega0])


class FreeBody(JointBody):
    """Free-joint (6-dof) body hanging from a parent body, forward dynamics.

    The joint model is :class:`~titopfmu.blocks.joints.FreeJoint` (its docstring derives the
    equations). Parameters beyond :class:`BodyBlock`: ``P_a0b`` = P_{a0/b} (DCM of A w.r.t. the
    parent at zero rotation), ``position0`` = r(0) = [OP]_{R_b} (m; O the parent's port point, P
    the reference point of A), the initial relative attitude P_{a/a0} as ``euler0`` (rad, 3-2-1)
    or ``quaternion0`` (unit, [w, x, y, z]; identity by default), ``velocity0`` = v_r(0), the
    velocity of P relative to the parent frame, in R_a (m/s), and ``omega0`` = ω_r(0), the
    relative angular velocity in R_a (rad/s).

    States (13): ``x, y, z`` = [OP]_{R_b}, the relative quaternion ``qw, qx, qy, qz``,
    ``vx, vy, vz`` = v_r and ``wx, wy, wz`` = ω_r (R_a). Signal in ``joint.tau`` (6): wrench
    [F (N), T (N m) about P] applied by the parent on A, in R_a. Signal out ``joint.m`` (18) =
    [v̇_r, ω̇_r, v_r, ω_r (R_a), OP (m, R_b), Euler angles of P_{a/a0} (rad)].
    """

    kind = "free_body"

    def __init__(
        self,
        name: str,
        mass,
        inertia,
        P_a0b: ArrayLike = _I3,
        position0: ArrayLike = (0.0, 0.0, 0.0),
        euler0: ArrayLike | None = None,
        quaternion0: ArrayLike | None = None,
        velocity0: ArrayLike = (0.0, 0.0, 0.0),
        omega0: ArrayLike = (0.0, 0.0, 0.0),
        com: ArrayLike = (0.0, 0.0, 0.0),
        children: Mapping[str, ArrayLike] | None = None,
        external: Mapping[str, ExternalWrench | Mapping] | None = None,
        gravity: ArrayLike = DEFAULT_GRAVITY,
    ) -> None:
        super().__init__(
            name,
            mass,
            inertia,
            FreeJoint(name, P_a0b),
            com=com,
            children=children,
            external=external,
            gravity=gravity,
        )
        if not self.inverse:
            self.position0 = as_vector(name, "position0", position0, 3)
            self.quaternion0 = initial_quaternion(name, euler0, quaternion0)
            self.velocity0 = as_vector(name, "velocity0", velocity0, 3)
            self.omega0 = as_vector(name, "omega0", omega0, 3)
            self.state_names = (
                "x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz",
            )  # fmt: skip

    def initial_state(self) -> FloatArray:
        if self.inverse:
            return np.zeros(0)
        return np.concatenate([self.position0, self.quaternion0, self.velocity0, self.omega0])


class SphericalBodyInverse(SphericalBody):
    """Spherical-joint body with imposed joint motion (inverse dynamics, eq. 21 with k = 3).

    Signal in ``joint.m`` (9) = [ω̇_r (rad/s², R_a), ω_r (rad/s, R_a), Euler angles of P_{a/a0}
    (rad, 3-2-1)]; signal out ``joint.tau`` (3) = torque the parent must apply on A (N m, R_a).
    No state.
    """

    kind = "spherical_body_inverse"
    inverse = True

    def __init__(
        self,
        name: str,
        mass,
        inertia,
        P_a0b: ArrayLike = _I3,
        com: ArrayLike = (0.0, 0.0, 0.0),
        children: Mapping[str, ArrayLike] | None = None,
        external: Mapping[str, ExternalWrench | Mapping] | None = None,
        gravity: ArrayLike = DEFAULT_GRAVITY,
    ) -> None:
        super().__init__(
            name,
            mass,
            inertia,
            P_a0b=P_a0b,
            com=com,
            children=children,
            external=external,
            gravity=gravity,
        )


class FreeBodyInverse(FreeBody):
    """Free-joint body with imposed joint motion (inverse dynamics, eq. 21 with k = 6).

    Signal in ``joint.m`` (18) = [v̇_r, ω̇_r, v_r, ω_r (R_a), OP (m, R_b), Euler angles of
    P_{a/a0} (rad)]; signal out ``joint.tau`` (6) = wrench [F, T about P] the parent must apply
    on A (N, N m, R_a). No state.
    """

    kind = "free_body_inverse"
    inverse = True

    def __init__(
        self,
        name: str,
        mass,
        inertia,
        P_a0b: ArrayLike = _I3,
        com: ArrayLike = (0.0, 0.0, 0.0),
        children: Mapping[str, ArrayLike] | None = None,
        external: Mapping[str, ExternalWrench | Mapping] | None = None,
        gravity: ArrayLike = DEFAULT_GRAVITY,
    ) -> None:
        super().__init__(
            name,
            mass,
            inertia,
            P_a0b=P_a0b,
            com=com,
            children=children,
            external=external,
            gravity=gravity,
        )
