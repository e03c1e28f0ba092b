"""What each block type is, declared once: parameters, initial conditions, ports, states, FMU.

One :class:`BlockType` per block type, as data. Everything else is derived from these tables:

* the Python block's constructor (its signature, defaults and checks: :mod:`titopfmu.blocks`);
* the model-file schema, reader and writer (:mod:`titopfmu.modelfile`; a parameter's name is
  its key in a model file);
* the block's FMU: its parameters (same names), units, descriptions and the C configuration
  role of each (:mod:`titopfmu.fmi.catalog`, :mod:`titopfmu.fmi.native.generate`);
* the parameter names of campaigns, sweeps and SSP files (:mod:`titopfmu.parameters`), the
  binding of a System onto FMUs (:mod:`titopfmu.master.from_system`), the units of linear
  models (:mod:`titopfmu.linear.units`) and the parameter tables of the documentation.

So one quantity has one name end to end: ``theta0`` is ``theta0`` in the constructor, the model
file, the FMU and a campaign (``pend1.theta0``). Adding a block type means: its declaration
here, its equations in the C core, its tests (docs/development.md walks through it).

This module is data only: it imports nothing of the package, so that every layer may read it.
Units are SI; frames: R_a the block's own frame, R_b its parent's, R_i the inertial frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

#: a parameter without a default (the constructor requires it)
REQUIRED: Any = type("Required", (), {"__repr__": lambda self: "REQUIRED"})()

_I3 = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
_Z3 = (0.0, 0.0, 0.0)
_Z66 = tuple((0.0,) * 6 for _ in range(6))


@dataclass(frozen=True)
class Parameter:
    """One parameter of a block type.

    ``shape``: () for a scalar, (n,) for a vector, (n, m) for a matrix; ``None`` for a value
    of free size (a :class:`~titopfmu.blocks.Constant`'s value) or a structure (``children``,
    ``external``). ``check``: the name of the check that guards it (:data:`CHECKS`), the same
    as the core's where the core has one (a refusal names the block and this parameter).
    ``initial``: an initial condition of a state. ``fmu``: a parameter of the block's FMU, by
    the same name (``children`` and ``external`` are the FMU's ports ``Cj`` and ``ext``
    instead). ``role``: the code of the FMU's C configuration that says what the value is
    (``fmu_config.h``). ``alternative``: this parameter is another form of the one named (given
    instead of it, never stored nor saved: ``euler0`` for ``quaternion0``).
    """

    name: str
    shape: tuple[int, ...] | None
    unit: str
    default: Any
    description: str
    check: str = "vector"
    initial: bool = False
    fmu: bool = True
    role: str = ""
    alternative: str | None = None
    #: JSON type of a scalar in a model file: "number", "integer", "string" (expression),
    #: "boolean" (an FMU's Boolean parameter)
    json: str = "number"
    #: the FMU's start value of a required parameter (which has no default)
    start: Any = None
    #: the unit of each component, when they differ (``unit`` is then "": one unit cannot
    #: describe them; FMI 2.0 gives each scalar its own)
    units: tuple[str, ...] = ()

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def structural(self) -> bool:
        """``children`` and ``external``: ports of the block rather than numbers."""
        return self.check in ("children", "external")

    def scalar_names(self, prefix: str = "") -> list[str]:
        """The names of its scalars, 1-based as everywhere a user reads them (``inertia[2,3]``)."""
        base = prefix + self.name
        if not self.shape:
            return [base]
        if len(self.shape) == 1:
            return [f"{base}[{i + 1}]" for i in range(self.shape[0])]
        return [f"{base}[{i + 1},{j + 1}]" for i in range(self.shape[0])
                for j in range(self.shape[1])]  # fmt: skip


@dataclass(frozen=True)
class PortDecl:
    """A port every block of the type has (child ports and external-wrench ports come from its
    ``children`` and ``external`` parameters). ``units``: of each component, for the linear
    models and the FMU variables; ``labels``: of each component where the FMU names them."""

    name: str
    kind: str  # "parent", "child", "signal_in", "signal_out"
    size: int
    description: str
    units: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class State:
    """A continuous state: its name (``block.state.NAME``) and unit."""

    name: str
    unit: str = ""


@dataclass(frozen=True)
class FmuDecl:
    """How the block type is an FMU: its modelIdentifier prefix, its one-line description, the
    numbers of child ports of its variants and the FMU names of its signal ports."""

    prefix: str
    title: str
    variants: tuple[int, ...] = (0,)
    ports: tuple[tuple[str, str], ...] = ()  # block port -> FMU port
    #: the FMU can compute the joint law of its own joint (a forward 1-dof joint): the
    #: parameters :func:`own_law_parameters` (``law.enabled`` and the JointSpringDamper's,
    #: ``law.k``...), evaluated by the core inside the FMU, its effort added to ``joint.tau``
    law: bool = False


@dataclass(frozen=True)
class BlockType:
    """A block type: its name (the Python class and the model file's ``type``), its FMU key,
    its family (``root``, ``joint``, ``ground``, ``closure``, ``law``, ``signal``), the core's
    body kind (``enum titop_kind`` of titop.h) and joint, its parameters in constructor order,
    its fixed ports, its states and its FMU (None: no FMU)."""

    name: str
    key: str
    summary: str
    family: str
    parameters: tuple[Parameter, ...]
    ports: tuple[PortDecl, ...] = ()
    states: tuple[State, ...] = ()
    core_kind: int | None = None
    inverse: bool = False
    fmu: FmuDecl | None = None
    #: the unit of the joint coordinate (1-dof joints), "" otherwise
    coordinate_unit: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def parameter(self, name: str) -> Parameter:
        for p in self.parameters:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)

    @property
    def stored(self) -> tuple[Parameter, ...]:
        """The parameters a block holds and a model file saves (no alternative forms)."""
        return tuple(p for p in self.parameters if p.alternative is None)

    def common_first(self, params, first: tuple[str, ...]) -> tuple[Parameter, ...]:
        """``params`` (of this type) with the body's common ones first, in the order ``first``
        (:data:`FMU_ORDER`, :data:`FILE_ORDER`), then the type's own in declared order."""

        def order(p: Parameter) -> tuple[int, int]:
            return (first.index(p.name) if p.name in first else len(first),
                    self.names.index(p.name))  # fmt: skip

        return tuple(sorted(params, key=order))

    def fmu_parameters(self) -> tuple[Parameter, ...]:
        """The FMU's parameters, in value-reference order (:data:`FMU_ORDER`)."""
        return self.common_first([p for p in self.parameters if p.fmu], FMU_ORDER)

    def file_parameters(self) -> tuple[Parameter, ...]:
        """The stored parameters in the order a written model file lists them
        (:data:`FILE_ORDER`)."""
        return self.common_first(self.stored, FILE_ORDER)

    def port(self, name: str) -> PortDecl | None:
        return next((p for p in self.ports if p.name == name), None)


#: the body's common parameters first, in the FMUs' value-reference order (that of titopfmu 0.1's
#: FMUs) and in a written model file's key order (that of 0.1's files)
FMU_ORDER = ("mass", "inertia", "com", "children", "gravity", "external")
FILE_ORDER = ("mass", "inertia", "com", "children", "external", "gravity")

# -- the parameters shared by the body types -----------------------------------------------------


def _mass(root: bool, joint: bool = False) -> tuple[Parameter, ...]:
    """mass and inertia: a root's inertia positive definite; a joint body's mass may be zero."""
    return (
        Parameter("mass", (), "kg", REQUIRED, "mass m of the body (>= 0: a massless body is "
                  "valid when the subtree its joint moves has inertia about the joint)" if joint
                  else "mass m of the body (> 0)", "joint_mass" if joint else "mass",
                  role="PAR_MASS", start=1.0),
        Parameter(
            "inertia", (3, 3), "kg.m2", REQUIRED,
            "inertia tensor I_B at the centre of mass B, in the body frame R_a; symmetric, "
            + ("positive definite" if root else "positive semi-definite"),
            "inertia_pd" if root else "inertia", role="PAR_INERTIA",
            start=tuple(tuple(0.1 * float(i == j) for j in range(3)) for i in range(3)),
        ),
    )  # fmt: skip


_COM = Parameter("com", (3,), "m", _Z3, "vector PB from P to the centre of mass B, in R_a",
                 role="PAR_COM")  # fmt: skip
_CHILDREN = Parameter(
    "children", None, "m", None,
    "child ports: name -> vector from P to the port's point, in the body frame R_a (the FMU's "
    "ports C1, C2...: parameters Cj.point)", "children", fmu=True,
)  # fmt: skip
_EXTERNAL = Parameter(
    "external", None, "", None,
    "external-wrench inputs: name -> {point: vector from P to the point of application (m, "
    "R_a), frame: 'body' or 'inertial'} (the FMU's port ext.W: parameters ext.point, "
    "ext.inertial)", "external", fmu=True,
)  # fmt: skip
_GRAVITY = Parameter("gravity", (3,), "m/s2", (0.0, 0.0, -9.81),
                     "gravity g in the inertial frame R_i", role="PAR_GRAVITY")  # fmt: skip

_BODY_TAIL = (_COM, _CHILDREN, _EXTERNAL, _GRAVITY)

#: A flexible part, declared once for every forward body type (the joint x body combination:
#: the core's titop_flex is orthogonal to the joint kind; docs/flexible.md §6). ``flexible``
#: adds a floating-frame flexible body at P to the block's rigid part (mass, inertia, com: a
#: hub, or zero), its elastic coordinates q and rates q̇ after the block's own states.
_FLEX = (
    Parameter("flexible", None, "", None,
              "flexible part at P (docs/flexible.md): a reduced model (titopfmu.flex."
              "ReducedModel) or the path of a reduced-model file (.npz, format "
              "titopfmu.flex.reduced/1), or a mapping of a source (beam, plate, fe, reduced or "
              "ansys: an ANSYS MAPDL .full file) and its reduction (titopfmu.flex.spec); in a "
              "model file, file paths relative to the file; the block's "
              "mass, inertia and com are then a rigid part beside it (zero allowed); its child "
              "ports sit at the model's nodes; none: a rigid body", "flexible", fmu=False,
              json="string"),
    Parameter("elastic_q0", None, "", (),
              "initial elastic coordinates q(0) of the flexible part, one per coordinate of its "
              "reduced model (units of the coordinates: m, rad, or m kg^1/2 for mass-normalised "
              "modes); empty: zeros", "elastic", fmu=False),
    Parameter("elastic_qdot0", None, "", (),
              "initial elastic rates q̇(0) of the flexible part (units of the coordinates per "
              "s); empty: zeros", "elastic", fmu=False),
)  # fmt: skip


def _armature(shape: tuple[int, ...], unit: str, what: str, inverse: bool) -> Parameter:
    """The rotor inertia (armature) of a joint with a dof: one value per joint speed, added to
    the joint's apparent inertia S^T Ia S (eq. 20) as Pinocchio's ``model.armature`` and MJCF's
    joint ``armature`` (a motor's rotor inertia times its gear ratio squared)."""
    effect = ("the required effort gets + armature u̇" if inverse else
              "added to the joint's apparent inertia S^T Ia S, eq. 20")  # fmt: skip
    return Parameter("armature", shape, unit, 0.0 if not shape else (0.0,) * shape[0],
                     f"rotor inertia (armature) {what} ({effect}; Pinocchio's model.armature, "
                     "MJCF's joint armature); >= 0", "nonnegative", role="PAR_ARMATURE")

_MOTION_UNITS = ("m/s2",) * 3 + ("rad/s2",) * 3 + ("m/s",) * 3 + ("rad/s",) * 3 + ("m",) * 3 \
    + ("rad",) * 3  # fmt: skip
_WRENCH_UNITS = ("N",) * 3 + ("N.m",) * 3


def _xyz(label: str) -> tuple[str, ...]:
    return tuple(f"{label} {a}" for a in "xyz")


_EULER_REL = tuple(f"3-2-1 Euler angle {a} of P_{{a/a0}}" for a in ("roll φ", "pitch θ", "yaw ψ"))

_ROOT_STATES = tuple(State(s, u) for s, u in (
    ("x", "m"), ("y", "m"), ("z", "m"), ("qw", ""), ("qx", ""), ("qy", ""), ("qz", ""),
    ("vx", "m/s"), ("vy", "m/s"), ("vz", "m/s"), ("wx", "rad/s"), ("wy", "rad/s"),
    ("wz", "rad/s"),
))  # fmt: skip
_BALL_STATES = _ROOT_STATES[3:7] + _ROOT_STATES[10:13]

_EXT_PORTS = (("ext", "ext.W"),)

# core body kinds (titop.h, enum titop_kind)
RIGID, GROUND, IMPOSED, WELD, REVOLUTE, PRISMATIC, SPHERICAL, FREE = range(8)
_VARIANTS = (0, 1, 2, 3)

# -- joint coordinates: the joint.m / joint.tau ports of each joint -----------------------------


def _one_dof_ports(unit: str, inverse: bool) -> tuple[PortDecl, ...]:
    rate, acc = f"{unit}/s", f"{unit}/s2"
    effort = "N m" if unit == "rad" else "N"
    m = PortDecl("joint.m", "signal_in" if inverse else "signal_out", 3,
                 ("imposed joint motion" if inverse else "joint motion m =")
                 + f" [q̈, q̇, q] ({unit})", (acc, rate, unit))  # fmt: skip
    tau = PortDecl("joint.tau", "signal_out" if inverse else "signal_in", 1,
                   f"driving effort C_m / F_m ({effort})" + (", required" if inverse else ""),
                   ("N.m" if unit == "rad" else "N",))  # fmt: skip
    return (m, tau) if inverse else (tau, m)


def _ball_ports(free: bool, inverse: bool) -> tuple[PortDecl, ...]:
    if free:
        labels = (_xyz("relative linear acceleration v̇_r (R_a)")
                  + _xyz("relative angular acceleration ω̇_r (R_a)")
                  + _xyz("relative velocity v_r (R_a)")
                  + _xyz("relative angular velocity ω_r (R_a)")
                  + _xyz("relative position OP (R_b)") + _EULER_REL)  # fmt: skip
        units = _MOTION_UNITS
        tau_labels = _xyz("force applied by the parent (R_a)") + _xyz(
            "torque about P applied by the parent (R_a)")
        tau_units = _WRENCH_UNITS
        mdoc = ("relative motion [v̇_r, ω̇_r (m/s², rad/s², R_a), v_r, ω_r (m/s, rad/s, R_a), "
                "OP (m, R_parent), Euler angles of P_{a/a0} (rad, 3-2-1)]")
        tdoc = ("driving wrench W_{B/A,P} = [F (N), T (N m) about P] applied by the parent on the "
                "body, in R_a")
    else:
        labels = (_xyz("relative angular acceleration ω̇_r (R_a)")
                  + _xyz("relative angular velocity ω_r (R_a)") + _EULER_REL)
        units = ("rad/s2",) * 3 + ("rad/s",) * 3 + ("rad",) * 3
        tau_labels = _xyz("torque applied by the parent (R_a)")
        tau_units = ("N.m",) * 3
        mdoc = ("relative motion [ω̇_r (rad/s², R_a), ω_r (rad/s, R_a), Euler angles of P_{a/a0} "
                "(rad, 3-2-1)]")
        tdoc = "driving torque T_{B/A,P} applied by the parent on the body (N m, R_a)"
    m = PortDecl("joint.m", "signal_in" if inverse else "signal_out", len(units),
                 ("imposed joint motion " if inverse else "joint motion m = ") + mdoc, units,
                 labels)  # fmt: skip
    tau = PortDecl("joint.tau", "signal_out" if inverse else "signal_in", len(tau_units),
                   tdoc + (", required" if inverse else ""), tau_units, tau_labels)  # fmt: skip
    return (m, tau) if inverse else (tau, m)


def _joint_springs(kind: str) -> tuple[Parameter, ...]:
    """The damping and springs of a forward ball joint body (``kind`` 'ball'), free joint body
    ('free') or free-flying root ('root'): the core's titop_body.damping, stiffness, spring_ref
    and (free, root) spring_pos, as MuJoCo's ball and free joint damping and stiffness
    (mj_springdamper); parameters of the whole-model FMU (fmi/model.py JOINT_LAW_PARAMS), not
    of the block FMUs."""
    if kind == "ball":
        return (
            Parameter("damping", (), "", 0.0, "viscous joint damping d on every joint speed, "
                      "effort -d u added to the joint's (N m s/rad on ω_r; MJCF's ball joint "
                      "damping); >= 0", "nonnegative", fmu=False),
            Parameter("stiffness", (), "", 0.0, "rotational joint spring k (N m/rad), effort -k θ "
                      "added to the joint's, θ the rotation vector of spring_ref^-1 P_{a/a0} in "
                      "R_a (MJCF's ball joint stiffness); >= 0", "nonnegative", fmu=False),
            Parameter("spring_ref", (4,), "", (1.0, 0.0, 0.0, 0.0), "the spring's rest "
                      "attitude P_{a/a0} as a unit quaternion [w, x, y, z] (MJCF: qpos0, the "
                      "identity)", "unit_quaternion", fmu=False),
        )
    if kind == "free":
        speed, att, pos = ("joint speed, effort -d u added to the joint's (N s/m on v_r, "
                           "N m s/rad on ω_r)", "P_{a/a0}", "[OP]_{R_b}")
        mjcf, src = "MuJoCo's free joint", "MuJoCo's qpos_spring"
    else:
        speed, att, pos = ("speed, the wrench -d x'_P applied at P (N s/m on v_P, N m s/rad "
                           "on ω)", "P_{a/i}", "[IP]_{R_i}")
        mjcf, src = "MJCF's free joint of the top-level body", "MJCF: the body's {}, qpos0"
    return (
        Parameter("damping", (), "", 0.0, f"viscous damping d on every {speed} ({mjcf} "
                  "damping, -damping qvel); >= 0", "nonnegative", fmu=False),
        Parameter("stiffness", (), "", 0.0, "spring k (N/m on translation, N m/rad on "
                  f"rotation): the force -k ({pos} - spring_position) at P and the torque -k θ, "
                  f"θ the rotation vector of spring_ref^-1 {att} in R_a ({mjcf} stiffness); "
                  ">= 0", "nonnegative", fmu=False),
        Parameter("spring_ref", (4,), "", (1.0, 0.0, 0.0, 0.0), f"the spring's rest attitude "
                  f"{att} as a unit quaternion [w, x, y, z] ({src.format('quat')})",
                  "unit_quaternion", fmu=False),
        Parameter("spring_position", (3,), "m", _Z3, f"the spring's rest position {pos} of P "
                  f"({src.format('pos')})", "vector", fmu=False),
    )  # fmt: skip


# -- the block types -------------------------------------------------------------------------------

RIGID_BODY = BlockType(
    "RigidBody", "rigid_body",
    "root rigid body, forward dynamics G^B (Alazard et al. 2025, eqs. 11-13)", "root",
    _mass(root=True) + _BODY_TAIL + (
        Parameter("position", (3,), "m", _Z3, "initial position [IP]_{R_i} of P",
                  initial=True, role="PAR_POSITION0"),
        Parameter("euler", (3,), "rad", _Z3, "initial 3-2-1 Euler angles [φ, θ, ψ] of R_a in R_i",
                  initial=True, role="PAR_EULER0"),
        Parameter("twist", (6,), "", (0.0,) * 6,
                  "initial twist [v_P (m/s); ω (rad/s)] at P, in the body frame R_a",
                  initial=True, role="PAR_TWIST0", units=("m/s",) * 3 + ("rad/s",) * 3),
    ) + _joint_springs("root") + _FLEX,
    states=_ROOT_STATES, core_kind=RIGID,
    fmu=FmuDecl("TitopRigidBody",
                "root rigid body, forward dynamics G^B (Alazard et al. 2025, eqs. 11-13)",
                _VARIANTS, _EXT_PORTS),
)  # fmt: skip

IMPOSED_MOTION_BODY = BlockType(
    "ImposedMotionBody", "imposed_motion_body",
    "body with imposed motion: its direct dynamic model (Alazard et al. 2025, Fig. 1, eq. 11)",
    "root", _mass(root=False) + _BODY_TAIL + _FLEX,
    ports=(PortDecl("m", "signal_in", 18, "imposed motion vector at P (18, in the body frame)",
                    _MOTION_UNITS),
           PortDecl("W", "signal_out", 6, "external wrench required at P (6, body frame)",
                    _WRENCH_UNITS)),
    core_kind=IMPOSED,
    fmu=FmuDecl("TitopImposedMotionBody",
                "body with imposed motion: its direct dynamic model "
                "(Alazard et al. 2025, Fig. 1, eq. 11)",
                _VARIANTS, (("m", "body.m"), ("W", "body.W")) + _EXT_PORTS),
)  # fmt: skip

GROUND_TYPE = BlockType(
    "Ground", "ground", "fixed base (a root with zero motion)", "ground",
    (
        replace(_CHILDREN, description="child ports: name -> vector from the base origin O to "
                "the port's point, base frame (the FMU's ports C1, C2...: parameters Cj.point)"),
        Parameter("position", (3,), "m", _Z3, "position [IO]_{R_i} of the base origin",
                  role="PAR_GROUND_POSITION"),
        Parameter("euler", (3,), "rad", _Z3, "3-2-1 Euler angles of the base frame in R_i",
                  role="PAR_GROUND_EULER"),
    ),
    ports=(PortDecl("W", "signal_out", 6, "wrench holding the base at O (6, base frame)",
                    _WRENCH_UNITS),),
    core_kind=GROUND,
    fmu=FmuDecl("TitopGround", "fixed base (a root with zero motion)", (1, 2, 3),
                (("W", "body.W"),)),
)  # fmt: skip

WELDED_BODY = BlockType(
    "WeldedBody", "welded_body", "welded body R^A (Alazard et al. 2025, eq. 15)", "joint",
    _mass(root=False, joint=True) + (
        Parameter("P_ab", (3, 3), "", _I3, "constant DCM P_{a/b} of the body frame in the "
                  "parent's", "dcm", role="PAR_DCM"),
    ) + _BODY_TAIL + _FLEX,
    core_kind=WELD,
    fmu=FmuDecl("TitopWeldedBody", "welded body R^A (Alazard et al. 2025, eq. 15)", _VARIANTS,
                _EXT_PORTS),
)  # fmt: skip


#: per 1-dof joint: class-name stem, axis letter, default axis, DCM parameter and what it is,
#: the coordinate's names, the paper's equations (forward, inverse)
_ONE_DOF = {
    True: ("Revolute", "r", (0.0, 0.0, 1.0), "P_a0b", "DCM P_{a0/b} of the body frame in the "
           "parent's at θ = 0", ("theta0", "theta_dot0", "θ", "θ̇"), "R^{A,r}", "16-23", "21"),
    False: ("Prismatic", "t", (1.0, 0.0, 0.0), "P_ab", "constant DCM P_{a/b} of the body frame "
            "in the parent's", ("x0", "x_dot0", "x", "ẋ"), "R^{A,t}", "24-29", "27"),
}  # fmt: skip


def _one_dof(revolute: bool, inverse: bool) -> BlockType:
    unit = "rad" if revolute else "m"
    stem, letter, axis, dcm, dcm_doc, q, model, eqs, eq_inv = _ONE_DOF[revolute]
    name = f"{stem}Body" + ("Inverse" if inverse else "")
    key = f"{stem.lower()}_body" + ("_inverse" if inverse else "")
    own = (
        Parameter("axis", (3,), "", axis, f"joint axis {letter} in the body frame R_a "
                  "(normalised; not zero)", "axis", role="PAR_AXIS"),
        Parameter(dcm, (3, 3), "", _I3, dcm_doc, "dcm", role="PAR_DCM"),
    )  # fmt: skip
    title = (f"{stem.lower()}-joint body with imposed joint motion, inverse dynamics "
             f"(eq. {eq_inv})" if inverse else
             f"{stem.lower()}-joint body {model}, forward dynamics (Alazard et al. 2025, "
             f"eqs. {eqs})")  # fmt: skip
    if not inverse:
        own += (
            Parameter(q[0], (), unit, 0.0, f"initial joint coordinate {q[2]}(0)", "scalar",
                      initial=True, role="PAR_Q0"),
            Parameter(q[1], (), f"{unit}/s", 0.0, f"initial joint rate {q[3]}(0)", "scalar",
                      initial=True, role="PAR_QD0"),
        )  # fmt: skip
    armature = _armature((), "kg.m2" if revolute else "kg", "about the joint axis" if revolute
                         else "along the joint axis", inverse)  # fmt: skip
    return BlockType(
        name, key, title, "joint",
        _mass(root=False, joint=True) + own + _BODY_TAIL + (armature,) + (() if inverse else _FLEX),
        ports=_one_dof_ports(unit, inverse),
        states=() if inverse else (State("q", unit), State("qd", f"{unit}/s")),
        core_kind=REVOLUTE if revolute else PRISMATIC, inverse=inverse,
        fmu=FmuDecl(("TitopRevoluteBody" if revolute else "TitopPrismaticBody")
                    + ("Inverse" if inverse else ""), title, _VARIANTS, _EXT_PORTS,
                    law=not inverse),
        coordinate_unit=unit,
    )  # fmt: skip


def _ball(free: bool, inverse: bool) -> BlockType:
    name = ("Free" if free else "Spherical") + "Body" + ("Inverse" if inverse else "")
    key = ("free" if free else "spherical") + "_body" + ("_inverse" if inverse else "")
    what = "free-joint body (6 dof relative to its parent)" if free else \
        "spherical-joint body (3 dof, quaternion state)"  # fmt: skip
    title = (what.split(" (")[0] + " with imposed joint motion, inverse dynamics" if inverse
             else what + ", forward dynamics")  # fmt: skip
    own = (Parameter("P_a0b", (3, 3), "", _I3, "DCM P_{a0/b} of the body frame in the parent's "
                     "at zero joint rotation", "dcm", role="PAR_DCM"),)  # fmt: skip
    if not inverse:
        if free:
            own += (Parameter("position0", (3,), "m", _Z3, "initial position r(0) = [OP]_{R_b} "
                              "of P from the joint point O, parent frame R_b", initial=True,
                              role="PAR_JPOSITION0"),)  # fmt: skip
        own += (
            Parameter("euler0", (3,), "rad", _Z3, "initial 3-2-1 Euler angles [φ, θ, ψ] of the "
                      "joint rotation P_{a/a0} (or give quaternion0)", "euler_attitude",
                      initial=True, role="PAR_JEULER0", alternative="quaternion0"),
            Parameter("quaternion0", (4,), "", (1.0, 0.0, 0.0, 0.0), "initial joint rotation "
                      "P_{a/a0} as a unit quaternion [w, x, y, z] (or give euler0)",
                      "unit_quaternion", initial=True, fmu=False),
        )  # fmt: skip
        if free:
            own += (Parameter("velocity0", (3,), "m/s", _Z3, "initial relative velocity v_r(0) "
                              "of P, body frame R_a", initial=True, role="PAR_JVELOCITY0"),)
        own += (Parameter("omega0", (3,), "rad/s", _Z3, "initial relative angular velocity "
                          "ω_r(0), body frame R_a", initial=True, role="PAR_JOMEGA0"),)
    if inverse:
        states: tuple[State, ...] = ()
    elif free:
        states = _ROOT_STATES
    else:
        states = _BALL_STATES
    armature = (_armature((6,), "", "per joint speed [v_r (kg, 3), ω_r (kg m^2, 3)], R_a",
                          inverse) if free else
                _armature((3,), "kg.m2", "per joint speed ω_r (x, y, z in R_a)", inverse))
    tail: tuple[Parameter, ...] = (armature,)
    if not inverse:  # the core's titop_body.damping, stiffness, spring_ref (, spring_pos)
        tail += _joint_springs("free" if free else "ball")
    return BlockType(
        name, key, title, "joint",
        _mass(root=False, joint=True) + own + _BODY_TAIL + tail + (() if inverse else _FLEX),
        ports=_ball_ports(free, inverse), states=states,
        core_kind=FREE if free else SPHERICAL, inverse=inverse,
        fmu=FmuDecl(("TitopFreeBody" if free else "TitopSphericalBody")
                    + ("Inverse" if inverse else ""), title, _VARIANTS, _EXT_PORTS),
    )  # fmt: skip


REVOLUTE_BODY = _one_dof(True, False)
PRISMATIC_BODY = _one_dof(False, False)
REVOLUTE_BODY_INVERSE = _one_dof(True, True)
PRISMATIC_BODY_INVERSE = _one_dof(False, True)
SPHERICAL_BODY = _ball(False, False)
FREE_BODY = _ball(True, False)
SPHERICAL_BODY_INVERSE = _ball(False, True)
FREE_BODY_INVERSE = _ball(True, True)

LOOP_CLOSURE = BlockType(
    "LoopClosure", "loop_closure",
    "loop closure L^A_C: 6x6 spring-damper between two motion vectors (Fig. 14)", "closure",
    (
        Parameter("K", (6, 6), "", REQUIRED, "stiffness on [δp (m); δθ (rad)] (N/m, N, N.m/m, "
                  "N.m/rad blocks); symmetric positive semi-definite", "psd", role="PAR_K",
                  start=_Z66),
        Parameter("D", (6, 6), "", _Z66, "damping on [δv (m/s); δω (rad/s)]; symmetric positive "
                  "semi-definite", "psd", role="PAR_D"),
    ),
    ports=tuple(PortDecl(side, "parent", 24, f"{side} side of the cut: motion vector in (18, "
                         "that side's frame); wrench applied by the closure out (6, same frame)")
                for side in ("left", "right")),
    fmu=FmuDecl("TitopLoopClosure",
                "loop closure L^A_C: 6x6 spring-damper between two motion vectors (Fig. 14)"),
)  # fmt: skip

_LAW_TITLE = ("joint law tau = -k (q - q_ref) - d q_dot - friction tanh(q_dot / "
              "friction_velocity) + stops at lower, upper when limited, on a 1-dof joint motion "
              "[q̈, q̇, q]")

#: the default regularisation velocity of a joint law's friction (m/s or rad/s)
FRICTION_VELOCITY = 1e-3

JOINT_SPRING_DAMPER = BlockType(
    "JointSpringDamper", "joint_spring_damper", _LAW_TITLE, "law",
    (
        Parameter("k", (), "", 0.0, "stiffness (N/m or N.m/rad), >= 0", "nonnegative",
                  role="PAR_LAW_K"),
        Parameter("d", (), "", 0.0, "damping (N.s/m or N.m.s/rad), >= 0", "nonnegative",
                  role="PAR_LAW_D"),
        Parameter("q_ref", (), "", 0.0, "reference joint coordinate (m or rad)", "scalar",
                  role="PAR_LAW_QREF"),
        Parameter("friction", (), "", 0.0, "Coulomb friction f_c (N or N.m), >= 0: the effort "
                  "-f_c tanh(q_dot / friction_velocity), regularised", "nonnegative",
                  role="PAR_LAW_FRICTION"),
        Parameter("friction_velocity", (), "", FRICTION_VELOCITY, "regularisation velocity "
                  "v_c of the friction (m/s or rad/s), > 0: the friction reaches 76 % of f_c "
                  "at |q_dot| = v_c, 99.5 % at 3 v_c", "positive",
                  role="PAR_LAW_FRICTION_VELOCITY"),
        Parameter("limited", (), "", False, "true: one-sided stops at lower and upper (a "
                  "stiff spring k_stop on the penetration plus damping d_stop on the joint's "
                  "speed, bounded by the spring's effort: never pulling, continuous); false: no "
                  "stops", "flag",
                  role="PAR_LAW_LIMITED", json="boolean"),
        Parameter("lower", (), "", 0.0, "lower stop of the joint coordinate (m or rad), used "
                  "when limited", "scalar", role="PAR_LAW_LOWER"),
        Parameter("upper", (), "", 0.0, "upper stop of the joint coordinate (m or rad), used "
                  "when limited; >= lower", "scalar", role="PAR_LAW_UPPER"),
        Parameter("k_stop", (), "", 0.0, "stiffness of the stops (N/m or N.m/rad), > 0 when "
                  "limited: a steady effort F into a stop penetrates it by F / k_stop; J / tau^2 "
                  "for a stop of time constant tau on a joint of apparent inertia J",
                  "nonnegative", role="PAR_LAW_K_STOP"),
        Parameter("d_stop", (), "", 0.0, "damping of the stops (N.s/m or N.m.s/rad), >= 0, "
                  "bounded by the stop's spring effort (2 sqrt(k_stop J): critical)",
                  "nonnegative",
                  role="PAR_LAW_D_STOP"),
    ),
    ports=(PortDecl("m", "signal_in", 3, "joint motion [q̈, q̇, q]"),
           PortDecl("tau", "signal_out", 1, "joint effort (N or N m)")),
    fmu=FmuDecl("TitopJointSpringDamper", _LAW_TITLE, (0,),
                (("m", "joint.m"), ("tau", "joint.tau"))),
)  # fmt: skip

_MIMIC_TITLE = ("mimic joint: the follower's coordinate q_f = multiplier q_l + offset of its "
                "leader's, the follower's inertia reflected into the leader's dynamics")

JOINT_MIMIC = BlockType(
    "JointMimic", "joint_mimic", _MIMIC_TITLE, "mimic",
    (
        Parameter("multiplier", (), "", 1.0, "r in q_f = r q_l + offset (dimensionless), "
                  "finite", "scalar", role="PAR_MIMIC_MULTIPLIER"),
        Parameter("offset", (), "", 0.0, "offset of the follower's coordinate (m or rad), "
                  "finite", "scalar", role="PAR_MIMIC_OFFSET"),
    ),
    ports=(PortDecl("m", "signal_in", 3, "the leader's joint motion [q̈, q̇, q] (its joint.m)"),
           PortDecl("tau", "signal_out", 1, "to the follower's joint.tau: the constraint effort "
                    "on the follower (N or N m), computed in the core only")),
)  # fmt: skip


def own_law_parameters() -> tuple[Parameter, ...]:
    """The FMU parameters of the joint law a forward 1-dof joint's FMU computes on its own
    joint (:attr:`FmuDecl.law`): ``law.enabled``, then each FMU parameter of
    :data:`JOINT_SPRING_DAMPER` as ``law.NAME`` (same unit, default, check and role). The
    block-per-FMU co-simulation folds a JointSpringDamper that reads and drives the same joint
    into that joint's FMU with them, so the FMU's integrator sees the law between
    communication points."""
    enabled = Parameter("law.enabled", (), "", False, "true: the FMU computes the joint law "
                        "law.* on its own joint (the JointSpringDamper's parameters), its effort "
                        "added to the input joint.tau; false: no law (the law.* values unused)",
                        "flag", role="PAR_LAW_ENABLED", json="boolean")  # fmt: skip
    return (enabled,) + tuple(replace(p, name=f"law.{p.name}", description=f"joint law: "
                                      f"{p.description}")
                              for p in JOINT_SPRING_DAMPER.fmu_parameters())  # fmt: skip


CONSTANT = BlockType(
    "Constant", "constant", "constant signal y", "signal",
    (Parameter("value", None, "", REQUIRED, "the constant value y (a number or a vector)",
               "free_vector", fmu=False),),
    ports=(PortDecl("y", "signal_out", 0, "constant value"),),
)  # fmt: skip

TIME_FUNCTION = BlockType(
    "TimeFunction", "time_function",
    "y = f(t) from an arithmetic expression of t (numpy functions)", "signal",
    (
        Parameter("expression", None, "", REQUIRED, "f(t): an arithmetic expression of t, or "
                  "one per component (numbers, + - * / ** %, comparisons, a if c else b, pi, e, "
                  "numpy functions); in Python, TimeFunction(name, f, size) takes any callable",
                  "expression", fmu=False, json="string"),
        Parameter("size", (), "", REQUIRED, "number of components of y (>= 1)", "positive_int",
                  fmu=False, json="integer"),
    ),
    ports=(PortDecl("y", "signal_out", 0, "f(t)"),),
)  # fmt: skip

#: Every block type with a model-file form, by name (the model file's ``type``), in the
#: order of the documentation.
BLOCK_TYPES: dict[str, BlockType] = {
    t.name: t
    for t in (
        RIGID_BODY, IMPOSED_MOTION_BODY, GROUND_TYPE, WELDED_BODY, REVOLUTE_BODY, PRISMATIC_BODY,
        SPHERICAL_BODY, FREE_BODY, REVOLUTE_BODY_INVERSE, PRISMATIC_BODY_INVERSE,
        SPHERICAL_BODY_INVERSE, FREE_BODY_INVERSE, LOOP_CLOSURE, CONSTANT, JOINT_SPRING_DAMPER,
        JOINT_MIMIC, TIME_FUNCTION,
    )
}  # fmt: skip

#: The FMU parameter names of titopfmu 0.1 that a name of its declaration replaced, by FMU type
#: key: accepted with a DeprecationWarning where parameters are set by name.
OLD_FMU_NAMES: dict[str, dict[str, str]] = {}
for _t in BLOCK_TYPES.values():
    _old: dict[str, str] = {}
    if _t.name == "RigidBody":
        _old = {"position0": "position", "euler0": "euler", "twist0": "twist"}
    elif _t.core_kind in (REVOLUTE, PRISMATIC):
        _q = ("theta0", "theta_dot0") if _t.core_kind == REVOLUTE else ("x0", "x_dot0")
        _old = {"joint.axis": "axis", "joint.P_a0b": "P_a0b", "joint.P_ab": "P_ab",
                "joint.q0": _q[0], "joint.qd0": _q[1]}  # fmt: skip
    elif _t.core_kind in (SPHERICAL, FREE):
        _old = {"joint.P_a0b": "P_a0b", "joint.euler0": "euler0", "joint.omega0": "omega0",
                "joint.position0": "position0", "joint.velocity0": "velocity0"}  # fmt: skip
    _old = {o: n for o, n in _old.items() if n in _t.names and _t.parameter(n).fmu}
    if _old:
        OLD_FMU_NAMES[_t.key] = _old

__all__ = [
    "BLOCK_TYPES", "BlockType", "FmuDecl", "OLD_FMU_NAMES", "Parameter", "PortDecl", "REQUIRED",
    "State", "own_law_parameters",
]  # fmt: skip
