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

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from ..core import _titop
from ..spatial.algebra import FloatArray, dynamic_model, kinematic_model
from ..spatial.rotations import dcm_from_euler, quaternion_from_euler
from .base import (
    Block,
    DeclaredBlock,
    ParameterError,
    SingularJointError,
    TitopError,
    as_vector,
    check_dynamic_model,
    check_inertia,
    check_mass,
    check_parameter,
    inertia_reference,
)
from .declarations import (
    FREE,
    FREE_BODY,
    FREE_BODY_INVERSE,
    GROUND_TYPE,
    IMPOSED_MOTION_BODY,
    PRISMATIC,
    PRISMATIC_BODY,
    PRISMATIC_BODY_INVERSE,
    REVOLUTE,
    REVOLUTE_BODY,
    REVOLUTE_BODY_INVERSE,
    RIGID_BODY,
    SPHERICAL,
    SPHERICAL_BODY,
    SPHERICAL_BODY_INVERSE,
    WELD,
    WELDED_BODY,
)
from .joints import (
    FreeJoint,
    JointModel,
    PrismaticJoint,
    RevoluteJoint,
    SphericalJoint,
    WeldJoint,
    initial_quaternion,
    unit_quaternion,
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


@dataclass(slots=True)
class Response:
    """A body's outputs at given loop inputs (see ``respond``): the wrench on its parent
    ``w_p`` (R_b, None for a root), its own acceleration ``acc`` at P (R_a), its child ports'
    accelerations ``acc_c`` (6 per port, R_a) and its extra outputs ``extra`` (q̈ of a forward
    joint, the effort of an inverse one, ẋ'_P of a root, the wrench of an imposed-motion body)."""

    w_p: FloatArray | None
    acc: FloatArray | None
    acc_c: FloatArray | None
    extra: FloatArray | None


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

            if getattr(self, "flexible", None) is not None:
                raise TitopError(
                    f"block '{self.name}': a flexible body is evaluated with the whole model "
                    "in the core (the engine's core path, a whole-model FMU, its block FMU), "
                    "not on the object path")  # fmt: skip

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
    #: the flexible part (a titopfmu.flex ReducedModel; declared types only), or None: rigid
    flexible = None
    #: what ``flexible`` was given as: the reduced-model file's path, or the ReducedModel
    flexible_source = None
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
        self._setup_body(  # a joint body may be massless (the engine judges its subtree)
            check_mass(name, mass, zero=not root and self.has_parent),
            check_inertia(name, inertia, positive_definite=root,
                          reference=inertia_reference(mass, com)),
            as_vector(name, "com", com, 3), children, external,
            as_vector(name, "gravity", gravity, 3),
        )  # fmt: skip

    def _setup_body(self, mass: float, inertia: FloatArray, com: FloatArray, children, external,
                    gravity: FloatArray) -> None:  # fmt: skip
        """The body's mass properties (checked), child ports and external wrenches (checked
        here) and the matrices derived from them."""
        name = self.name
        check_dynamic_model(name, mass, inertia, com)  # D_P within range, or the culprit named
        self.mass, self.inertia, self.com, self.gravity = mass, inertia, com, gravity
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
            text = (f"external wrench [F (N), T (N m) about the point {list(spec.point)}] on "
                    f"{name}, in the {spec.frame} frame")  # fmt: skip
            red = getattr(self, "flexible", None)
            if red is not None:  # at a node of the flexible part: there (docs/flexible.md §6)
                from ..core.model import flex_external_node

                k = flex_external_node(spec.point, red)
                if k:
                    frame = f"node {k}'s frame N_{k}" if spec.frame == "body" else "inertial frame"
                    text = (f"external wrench [F (N), T (N m) about node {k} of the flexible "
                            f"part, at {list(spec.point)} undeformed] on {name}, in the {frame}")
            self._add_port(ename, "signal_in", 6, text)

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


class DeclaredBody(BodyBlock, DeclaredBlock):
    """A body block of a declared type (:mod:`titopfmu.blocks.declarations`): its constructor
    takes the declared parameters (the class's signature), checks them and sets them as
    attributes of the same names; the body's common part is :class:`BodyBlock`'s."""

    def __init__(self, name: str, *args, **kwargs) -> None:
        Block.__init__(self, name)
        v = self._checked(self._bind(name, args, kwargs))
        # the flexible part first: a joint's check of its leaf counts it
        self._setup_flex(v.get("flexible"), v.get("elastic_q0"), v.get("elastic_qdot0"))
        self._setup_body(v["mass"], v["inertia"], v["com"], v["children"], v["external"],
                         v["gravity"])  # fmt: skip
        self._check_flex_ports()
        self._setup_type(v)
        self.state_names = tuple(s.name for s in type(self).declaration.states)
        if self.flexible is not None:  # after the block's own states (the core's titop_flex)
            coords = self.flexible.coordinates
            self.state_names += tuple(f"q.{c}" for c in coords) + tuple(f"qd.{c}" for c in coords)

    def _checked(self, values: dict) -> dict:
        """As :meth:`DeclaredBlock._checked`; a root with a flexible part may have a zero rigid
        part (a joint body's checks: the flexible part's mass and inertia are the body's)."""
        decl = type(self).declaration
        pm, pi = decl.parameter("mass"), decl.parameter("inertia")
        if values.get("flexible") is None or (pm.check, pi.check) == ("joint_mass", "inertia"):
            return super()._checked(values)
        placeholders = dict(values, mass=1.0, inertia=np.eye(3))  # checked below
        out = super()._checked(placeholders)
        out["mass"] = check_parameter(self.name, replace(pm, check="joint_mass"), values["mass"])
        out["inertia"] = check_parameter(self.name, replace(pi, check="inertia"),
                                         values["inertia"],
                                         inertia_reference(out["mass"], out["com"]))
        return out

    def _setup_flex(self, flexible, q0, qd0) -> None:
        """The flexible part (``flexible``: a ReducedModel, a reduced-model file's path or a
        spec, :mod:`titopfmu.flex.spec`) and its initial elastic coordinates and rates (empty:
        zeros), checked; the refusals name this block and the parameter."""
        if flexible is None:
            for pname, v in (("elastic_q0", q0), ("elastic_qdot0", qd0)):
                if v is not None and np.size(v):
                    raise ParameterError(self.name, pname, "given without a flexible part "
                                         "(flexible=...): a rigid body has no elastic state")
            self.elastic_q0 = np.zeros(0)
            self.elastic_qdot0 = np.zeros(0)
            return
        from ..flex import FlexModelError, ReducedModel, read_reduced_model
        from ..flex.spec import reduced_from_spec

        self.flexible_source = flexible
        if isinstance(flexible, ReducedModel):
            red = flexible
        elif isinstance(flexible, Mapping):  # a beam or a finite-element file, and its reduction
            try:
                red = reduced_from_spec(self.name, flexible)
            except FlexModelError as exc:
                raise ParameterError(self.name, "flexible", f"{exc.item}: {exc.reason}") from None
        elif isinstance(flexible, (str, os.PathLike)):
            try:
                red = read_reduced_model(flexible)
            except FlexModelError as exc:  # the file's own problem, then the block's name
                raise ParameterError(self.name, "flexible", f"{os.fspath(flexible)!r}: "
                                     f"{exc.item}: {exc.reason}") from None  # fmt: skip
            except OSError as exc:
                raise ParameterError(self.name, "flexible", f"cannot read {str(flexible)!r}: "
                                     f"{exc.strerror or exc}") from None  # fmt: skip
            self.flexible_source = os.fspath(flexible)
        else:
            raise ParameterError(self.name, "flexible", "a titopfmu.flex.ReducedModel, the path "
                                 "of a reduced-model file or a mapping (beam or fe, and its "
                                 f"reduction: titopfmu.flex.spec), not {type(flexible).__name__}")
        self.flexible = red
        n = red.n_modes
        for pname, v in (("elastic_q0", q0), ("elastic_qdot0", qd0)):
            a = np.zeros(n) if v is None or np.size(v) == 0 else np.asarray(v, dtype=float)
            if a.ndim != 1 or a.shape[0] != n:
                raise ParameterError(self.name, pname, f"{np.size(v)} values for the {n} elastic "
                                     f"coordinates of the flexible part {red.coordinates}")
            if not np.all(np.isfinite(a)):
                raise ParameterError(self.name, pname, f"not finite: {a.tolist()}")
            setattr(self, pname, a)

    def _check_flex_ports(self) -> None:
        """A flexible body's child port k sits at its reduced model's node k + 1 (the root P is
        node 0; docs/flexible.md §6): :func:`~titopfmu.core.model.flex_port_fault`."""
        if self.flexible is None:
            return
        from ..core.model import flex_port_fault

        fault = flex_port_fault(self.child_points, self.flexible)
        if fault is not None:
            k, why = fault
            raise ParameterError(self.name, f"children[{self.child_names[k]}]", why)

    def elastic_initial_state(self) -> FloatArray:
        """[q(0), q̇(0)] of the flexible part (empty for a rigid body)."""
        return np.concatenate([self.elastic_q0, self.elastic_qdot0])

    def parameter_values(self) -> dict:
        out = super().parameter_values()
        if "flexible" in out:
            out["flexible"] = self.flexible_source
        return out

    def _setup_type(self, values: dict) -> None:
        """What the type adds to the body: its joint, ports and initial conditions."""
        for p in type(self).declaration.stored:
            if p.check in ("flexible", "elastic"):
                continue  # set by _setup_flex
            if not p.structural and p.name not in ("mass", "inertia", "com", "gravity"):
                setattr(self, p.name, values[p.name])
        if "spring_ref" in type(self).declaration.names:  # a ball or free joint's, a root's
            self.spring_ref = unit_quaternion(self.name, "spring_ref", values.get("spring_ref"))


# ----------------------------------------------------------------------------------------------
# roots
# ----------------------------------------------------------------------------------------------


class RigidBody(DeclaredBody):
    """Root rigid body, forward dynamics ``G^B_{P,C1..Cn}`` (Figs. 2-3, eqs. 11-13).

    States (13): inertial position [IP]_{R_i} (m), attitude quaternion [w, x, y, z] (integrated
    without Euler singularity), twist [v_P, ω] at P in R_b (m/s, rad/s). The Euler angles appear
    only on the ports. Extra output: the spatial acceleration ẋ'_P (6).

    Parameters (:data:`~titopfmu.blocks.declarations.RIGID_BODY`): those of :class:`BodyBlock`
    and ``position`` [IP(0)]_{R_i} (m), ``euler`` Θ(0) (rad, 3-2-1), ``twist`` x'_P(0) in R_b
    (m/s, rad/s).
    """

    declaration = RIGID_BODY
    has_parent = False
    n_extra = 6

    # the names of titopfmu 0.1 (the declaration's are position, euler, twist)
    position0 = property(lambda self: self.position)
    euler0 = property(lambda self: self.euler)
    twist0 = property(lambda self: self.twist)

    def initial_state(self) -> FloatArray:
        return np.concatenate([self.position, quaternion_from_euler(self.euler), self.twist,
                               self.elastic_initial_state()])  # fmt: skip


class ImposedMotionBody(DeclaredBody):
    """Direct dynamic model of a body with imposed motion (Fig. 1): inverse dynamics of a root.

    Signal input ``m`` (18): the motion vector imposed at P, projected in the body frame. Extra
    output and signal ``W`` (6): the external wrench W_ext,P that must be applied at P, in the body
    frame, to produce that motion (eq. 11 solved for the wrench). Child ports carry the transported
    motion (eq. 14). No state.
    """

    declaration = IMPOSED_MOTION_BODY
    has_parent = False
    n_extra = 6
    kinematic_inputs = ("m",)

    def _setup_type(self, values: dict) -> None:
        for port in type(self).declaration.ports:
            self._add_port(port.name, port.kind, port.size, port.description)

    def initial_state(self) -> FloatArray:
        """No state of its own; a flexible part's [q(0), q̇(0)]."""
        return self.elastic_initial_state()


class Ground(CoreBlock, DeclaredBlock):
    """Fixed base: a root whose motion is null (inverse dynamics with zero imposed motion).

    Child ports at points (m, vector from the base origin O to the port, base frame); ``position``
    [IO]_{R_i} (m) and ``euler`` (rad) place the base in the inertial frame. Extra output and
    signal ``W`` (6): the wrench the outside must apply at O to hold the base (reaction).
    """

    declaration = GROUND_TYPE
    has_parent = False
    n_extra = 6
    kinematic_inputs = ()

    def __init__(self, name: str, *args, **kwargs) -> None:
        Block.__init__(self, name)
        v = self._checked(self._bind(name, args, kwargs))
        children = v["children"] or {}
        self.child_names = tuple(children)
        self.child_points = [as_vector(name, f"children[{c}]", p, 3) for c, p in children.items()]
        self.position, self.euler = v["position"], v["euler"]
        self.R = dcm_from_euler(self.euler)
        n = len(self.child_points)
        self.tau_stack = np.zeros((6 * n, 6))
        for i, pc in enumerate(self.child_points):
            self.tau_stack[6 * i : 6 * i + 6] = kinematic_model(-pc)
        self.T = self.tau_stack.T.copy()
        self.external = {}
        for c in self.child_names:
            self._add_port(c, "child", 24, f"child port {c} of the fixed base {name}")
        for port in type(self).declaration.ports:
            self._add_port(port.name, port.kind, port.size, port.description)

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
# joint bodies
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
        self._setup_joint(joint)

    def own_apparent_inertia(self) -> FloatArray | None:
        """The apparent inertia ``S^T D_P S + diag(armature)`` (eq. 20; kg m^2 or kg per joint
        speed) of this body alone, without the subtree its joint moves, when the core's check
        (``titop_check_apparent_inertia``, the FMUs' too) finds it singular, else None. A leaf
        with it singular cannot be moved by its joint; a body with child ports is judged with
        its subtree (the engine), but its block FMU, which solves its joint alone with its
        children's wrenches as inputs, needs it regular."""
        k = self.joint.dof
        if not k:
            return None
        j = np.zeros((k, k))
        armature = np.broadcast_to(np.asarray(getattr(self, "armature", 0.0), dtype=float), (k,))
        code = _titop.check_apparent_inertia(
            np.ascontiguousarray(self.joint.S, dtype=float).reshape(6 * k),
            np.ascontiguousarray(self.D, dtype=float).reshape(36), k, j.reshape(k * k),
            np.ascontiguousarray(armature),
        )  # fmt: skip
        return j if code == _titop.CHECK_SINGULAR else None

    def _setup_joint(self, joint: JointModel) -> None:
        """The joint's part of the block: its model, the parent port, the apparent-inertia
        check (eq. 20) of a forward joint without child ports (a leaf: its own inertia and
        armature are all its joint moves; a body with child ports is judged with the subtree
        its joint moves, by the engine) and the joint's signal ports (those of the declaration
        if the type has one, else from the joint model's descriptions)."""
        name = self.name
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
        if not k:
            return
        j = self.own_apparent_inertia()
        if not self.inverse and not self.n_children and j is not None and self.flexible is None:
            raise SingularJointError(
                name,
                f"the apparent inertia seen from the joint (eq. 20) is "
                f"{'zero' if k == 1 else 'singular'} (to 1e-12 of the body's own inertia): "
                f"{j.tolist()}; the body has no child port and cannot be moved by its joint "
                "(e.g. a point mass on a revolute axis or on a ball joint, or no mass at all; "
                "give it an armature or an inertia about the joint)",
            )
        if self.inverse:
            self.kinematic_inputs = ("joint.m",)
        decl = getattr(type(self), "declaration", None)
        if decl is not None:
            for port in decl.ports:
                self._add_port(port.name, port.kind, port.size, port.description)
            return
        unit = joint.coordinate_unit
        effort = "N m" if unit == "rad" else "N"
        motion_doc = joint.motion_doc or f"[q̈, q̇, q] ({unit})"
        effort_doc = joint.effort_doc or f"driving effort C_m / F_m ({effort})"
        if self.inverse:
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


class DeclaredJointBody(JointBody, DeclaredBody):
    """A joint body of a declared type: its joint model built from the declared parameters
    (:data:`JOINT_MODELS`, by the core's body kind); forward or inverse as the declaration
    says. One class per joint serves both: the inverse type is the forward class with the
    inverse declaration (no initial conditions, no state, ``joint.m`` in, ``joint.tau`` out)."""

    __init__ = DeclaredBody.__init__

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        decl = cls.__dict__.get("declaration")
        if decl is not None:
            cls.inverse = decl.inverse

    def _setup_type(self, values: dict) -> None:
        joint = JOINT_MODELS[type(self).declaration.core_kind](self.name, values)
        if "armature" in values:  # before the apparent-inertia check, which counts it
            self.armature = values["armature"]
        self._setup_joint(joint)
        super()._setup_type(values)
        for key, v in (("axis", "axis"), ("P_a0b", "R_a0b"), ("P_ab", "R_ab")):
            if hasattr(self, key):
                setattr(self, key, getattr(joint, v))  # as the joint model holds it (normalised)
        if "quaternion0" in type(self).declaration.names:
            self.quaternion0 = initial_quaternion(self.name, values.get("euler0"),
                                                  values.get("quaternion0"))  # fmt: skip

    def initial_state(self) -> FloatArray:
        """The declared initial conditions, in declared order (empty for an inverse type)."""
        ps = [p for p in type(self).declaration.stored if p.initial]
        return np.concatenate([np.atleast_1d(np.asarray(getattr(self, p.name), dtype=float))
                               for p in ps] + [self.elastic_initial_state()])  # fmt: skip


#: the joint model of each joint body kind, from the checked parameter values
JOINT_MODELS = {
    WELD: lambda name, v: WeldJoint(name, v["P_ab"]),
    REVOLUTE: lambda name, v: RevoluteJoint(name, v["axis"], v["P_a0b"]),
    PRISMATIC: lambda name, v: PrismaticJoint(name, v["axis"], v["P_ab"]),
    SPHERICAL: lambda name, v: SphericalJoint(name, v["P_a0b"]),
    FREE: lambda name, v: FreeJoint(name, v["P_a0b"]),
}


class WeldedBody(DeclaredJointBody):
    """Welded body ``R^A_{P,C1..Cn}`` (Fig. 4 and 6, eq. 15): static, no state.

    ``P_ab`` is the constant DCM P_{a/b} from R_a to the parent frame R_b.
    """

    declaration = WELDED_BODY


class _OneDofBody(DeclaredJointBody):
    """A 1-dof joint body: states q, q̇; ``q0``/``qd0`` are its declared initial conditions
    (``theta0``/``theta_dot0`` or ``x0``/``x_dot0``)."""

    @property
    def q0(self) -> float:
        return self._initial()[0]

    @property
    def qd0(self) -> float:
        return self._initial()[1]

    def _initial(self) -> tuple[float, float]:
        ps = [p.name for p in type(self).declaration.stored if p.initial]
        return (getattr(self, ps[0]), getattr(self, ps[1])) if ps else (0.0, 0.0)


class RevoluteBody(_OneDofBody):
    """Revolute-joint body ``R^{A,r}_{P,C1..Cn}`` (Figs. 8-9, eqs. 16-23), forward dynamics.

    Parameters beyond :class:`BodyBlock`: ``axis`` r in R_a (normalised; zero is an error),
    ``P_a0b`` = P_{a0/b} (DCM at θ = 0), ``theta0`` θ(0) (rad), ``theta_dot0`` θ̇(0) (rad/s).
    Signal in ``joint.tau`` = C_m (N m); signal out ``joint.m`` = [θ̈, θ̇, θ]. States θ, θ̇.
    """

    declaration = REVOLUTE_BODY


class PrismaticBody(_OneDofBody):
    """Prismatic-joint body ``R^{A,t}_{P0,C1..Cn}`` (Figs. 11-12, eqs. 24-29), forward dynamics.

    Parameters beyond :class:`BodyBlock`: ``axis`` t in R_a, ``P_ab`` = P_{a/b} (constant DCM),
    ``x0`` x(0) (m), ``x_dot0`` ẋ(0) (m/s). The joint point P0 is fixed in the parent; the reference
    point P of A coincides with P0 at x = 0. Signal in ``joint.tau`` = F_m (N); signal out
    ``joint.m`` = [ẍ, ẋ, x]. States x, ẋ.
    """

    declaration = PRISMATIC_BODY


class RevoluteBodyInverse(RevoluteBody):
    """Revolute-joint body with imposed joint motion (inverse dynamics, eq. 21).

    Signal in ``joint.m`` = [θ̈, θ̇, θ] (rad/s², rad/s, rad); signal out ``joint.tau`` = C_m (N m).
    No state.
    """

    declaration = REVOLUTE_BODY_INVERSE


class PrismaticBodyInverse(PrismaticBody):
    """Prismatic-joint body with imposed joint motion (inverse dynamics, eq. 27).

    Signal in ``joint.m`` = [ẍ, ẋ, x] (m/s², m/s, m); signal out ``joint.tau`` = F_m (N). No state.
    """

    declaration = PRISMATIC_BODY_INVERSE


# ----------------------------------------------------------------------------------------------
# multi-dof joints with a quaternion attitude
# ----------------------------------------------------------------------------------------------


class SphericalBody(DeclaredJointBody):
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

    declaration = SPHERICAL_BODY


class FreeBody(DeclaredJointBody):
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

    declaration = FREE_BODY


class SphericalBodyInverse(SphericalBody):
    """Spherical-joint body with imposed joint motion (inverse dynamics, eq. 21 with k = 3).

    Signal in ``joint.m`` (9) = [ω̇_r (rad/s², R_a), ω_r (rad/s, R_a), Euler angles of P_{a/a0}
    (rad, 3-2-1)]; signal out ``joint.tau`` (3) = torque the parent must apply on A (N m, R_a).
    No state.
    """

    declaration = SPHERICAL_BODY_INVERSE


class FreeBodyInverse(FreeBody):
    """Free-joint body with imposed joint motion (inverse dynamics, eq. 21 with k = 6).

    Signal in ``joint.m`` (18) = [v̇_r, ω̇_r, v_r, ω_r (R_a), OP (m, R_b), Euler angles of
    P_{a/a0} (rad)]; signal out ``joint.tau`` (6) = wrench [F, T about P] the parent must apply
    on A (N, N m, R_a). No state.
    """

    declaration = FREE_BODY_INVERSE


#: the body type of each joint a flexible body can hang from (:func:`FlexibleBody`)
FLEXIBLE_JOINTS = {
    "free-floating": RigidBody, "imposed": ImposedMotionBody, "welded": WeldedBody,
    "revolute": RevoluteBody, "prismatic": PrismaticBody, "spherical": SphericalBody,
    "free": FreeBody,
}  # fmt: skip


def FlexibleBody(  # noqa: N802 - the block's name in the issue and the docs
    name: str,
    flexible,
    joint: str = "welded",
    *,
    mass: float = 0.0,
    inertia: ArrayLike | None = None,
    **parameters,
) -> DeclaredBody:
    """A flexible body (docs/flexible.md): the body type of ``joint`` with the flexible part
    ``flexible`` (a :class:`~titopfmu.flex.ReducedModel`, a reduced-model file's path or a spec,
    :mod:`titopfmu.flex.spec`) and a rigid part ``mass`` (kg), ``inertia`` (kg m², at the
    centre of mass ``com``, R_a) beside it, zero by default (a hub: give them).

    ``joint``: ``"free-floating"`` (a :class:`RigidBody` root), ``"imposed"``
    (:class:`ImposedMotionBody`), ``"welded"`` (on Ground or on any body's child port),
    ``"revolute"``, ``"prismatic"``, ``"spherical"`` or ``"free"``; ``parameters``: the other
    parameters of that type (axis, theta0, children at the model's nodes, external...). The
    joint and body combine once: every forward body type takes ``flexible=`` the same way, so
    the block returned is that type's (a model file writes it as such)."""
    cls = FLEXIBLE_JOINTS.get(joint)
    if cls is None:
        raise ParameterError(name, "joint", f"{joint!r}: one of {', '.join(FLEXIBLE_JOINTS)}")
    inertia = np.zeros((3, 3)) if inertia is None else inertia
    return cls(name, mass, inertia, flexible=flexible, **parameters)
