"""The FMU types: which core block each FMU wraps, its FMI parameters and its variable names.

An FMU type is a core block class (:mod:`titopfmu.blocks`) plus a table of FMI parameters that
map onto the block's constructor. Body types come in variants with 0 to :data:`MAX_CHILDREN`
child ports (FMI 2.0 has no structural parameters; a variant per port count is what importers
handle best). Nothing here computes physics: a native FMU builds its block as a one-body model of
the C core from the parameter values (:mod:`titopfmu.fmi.native`).

Variable layout (docs/fmus.md): ports first, each port's components consecutive in
value references and named with 1-based FMI structured indices (``P.m[1]``..``P.m[18]``), then
the parameters. Vector parameters are ``name[i]``, matrices ``name[i,j]`` (row i, column j).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..blocks.base import Block
from ..blocks.bodies import (
    FreeBody,
    FreeBodyInverse,
    Ground,
    ImposedMotionBody,
    PrismaticBody,
    PrismaticBodyInverse,
    RevoluteBody,
    RevoluteBodyInverse,
    RigidBody,
    SphericalBody,
    SphericalBodyInverse,
    WeldedBody,
)
from ..blocks.closure import LoopClosure
from ..blocks.signals import JointSpringDamper
from ..spatial.rotations import dcm_from_quaternion

#: Largest number of child ports of the body variants that ``titopfmu build`` writes.
MAX_CHILDREN = 3

_I3 = tuple(tuple(float(i == j) for j in range(3)) for i in range(3))


@dataclass(frozen=True)
class Param:
    """One FMI parameter (possibly an array): base name, shape, unit, default, description."""

    name: str
    shape: tuple[int, ...]
    unit: str
    default: object
    description: str
    boolean: bool = False
    integer: bool = False

    def names(self) -> list[tuple[str, tuple[int, ...]]]:
        """FMI names of the scalar variables, with their 0-based index in the array."""
        if not self.shape:
            return [(self.name, ())]
        if len(self.shape) == 1:
            return [(f"{self.name}[{i + 1}]", (i,)) for i in range(self.shape[0])]
        return [
            (f"{self.name}[{i + 1},{j + 1}]", (i, j))
            for i in range(self.shape[0])
            for j in range(self.shape[1])
        ]


@dataclass(frozen=True)
class FmuType:
    """A family of FMUs wrapping one core block class."""

    key: str
    model_prefix: str
    title: str
    make: Callable[[str, dict, int], Block]
    params: Callable[[int], list[Param]]
    variants: tuple[int, ...] = (0,)
    #: core channel name -> FMI port name (e.g. the imposed motion ``m`` -> ``body.m``)
    rename: dict[str, str] = field(default_factory=dict)
    #: core parameter name -> FMI parameter name, for error messages
    param_names: dict[str, str] = field(default_factory=dict)
    joint_unit: str = ""
    #: (label, unit) of each component of ``joint.m`` and ``joint.tau`` (multi-dof joints)
    joint_layout: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)

    def model_name(self, n_children: int) -> str:
        """modelIdentifier of a variant, e.g. ``TitopRevoluteBodyC2``."""
        return f"{self.model_prefix}C{n_children}" if self.variants != (0,) else self.model_prefix


# -- parameter tables ------------------------------------------------------------------------


def _mass_params(root: bool) -> list[Param]:
    return [
        Param("mass", (), "kg", 1.0, "mass m of the body (> 0)"),
        Param(
            "inertia",
            (3, 3),
            "kg.m2",
            tuple(tuple(0.1 * float(i == j) for j in range(3)) for i in range(3)),
            "inertia tensor I_B at the centre of mass B, in the body frame R_a; symmetric, "
            + ("positive definite" if root else "positive semi-definite"),
        ),
        Param("com", (3,), "m", (0.0, 0.0, 0.0), "vector PB from P to the centre of mass, R_a"),
    ]


def _common_body_params(n: int, root: bool) -> list[Param]:
    ps = _mass_params(root)
    ps += [
        Param(
            f"C{j}.point",
            (3,),
            "m",
            (0.0, 0.0, 0.0),
            f"vector from P to the point of child port C{j}, in the body frame R_a",
        )
        for j in range(1, n + 1)
    ]
    ps += [
        Param("gravity", (3,), "m/s2", (0.0, 0.0, -9.81), "gravity g in the inertial frame R_i"),
        Param(
            "ext.point", (3,), "m", (0.0, 0.0, 0.0),
            "vector from P to the point where the external wrench ext.W acts, in R_a",
        ),
        Param(
            "ext.inertial", (), "", False,
            "true: ext.W is given in the inertial frame R_i; false: in the body frame R_a",
            boolean=True,
        ),
    ]  # fmt: skip
    return ps


def _body_kwargs(p: dict, n: int) -> dict:
    return dict(
        com=p["com"],
        children={f"C{j}": p[f"C{j}.point"] for j in range(1, n + 1)},
        external={
            "ext": {
                "point": tuple(p["ext.point"]),
                "frame": "inertial" if p["ext.inertial"] else "body",
            }
        },
        gravity=p["gravity"],
    )


_BODY_NAMES = {
    "mass": "mass", "inertia": "inertia[i,j]", "com": "com[i]", "gravity": "gravity[i]",
    "external[ext].point": "ext.point[i]",
}  # fmt: skip


def _child_names(n: int) -> dict[str, str]:
    return {f"children[C{j}]": f"C{j}.point[i]" for j in range(1, n + 1)}


def _rigid_params(n: int) -> list[Param]:
    return _common_body_params(n, root=True) + [
        Param("position0", (3,), "m", (0.0, 0.0, 0.0), "initial position [IP]_{R_i} of P"),
        Param("euler0", (3,), "rad", (0.0, 0.0, 0.0), "initial 3-2-1 Euler angles [φ, θ, ψ]"),
        Param(
            "twist0", (6,), "", (0.0,) * 6,
            "initial twist [v_P (m/s); ω (rad/s)] at P, in the body frame R_a",
        ),
    ]  # fmt: skip


def _make_rigid(name: str, p: dict, n: int) -> Block:
    return RigidBody(
        name, p["mass"], p["inertia"], position=p["position0"], euler=p["euler0"],
        twist=p["twist0"], **_body_kwargs(p, n),
    )  # fmt: skip


def _welded_params(n: int) -> list[Param]:
    return _common_body_params(n, root=False) + [
        Param("P_ab", (3, 3), "", _I3, "constant DCM P_{a/b} of the body frame in the parent's"),
    ]


def _make_welded(name: str, p: dict, n: int) -> Block:
    return WeldedBody(name, p["mass"], p["inertia"], P_ab=p["P_ab"], **_body_kwargs(p, n))


def _joint_params(kind: str, inverse: bool) -> Callable[[int], list[Param]]:
    rev = kind == "revolute"
    unit = "rad" if rev else "m"

    def params(n: int) -> list[Param]:
        ps = _common_body_params(n, root=False)
        ps.append(
            Param(
                "joint.axis", (3,), "", (0.0, 0.0, 1.0) if rev else (1.0, 0.0, 0.0),
                f"joint axis {'r' if rev else 't'} in the body frame R_a (normalised; not zero)",
            )
        )  # fmt: skip
        dcm = "joint.P_a0b" if rev else "joint.P_ab"
        what = "at θ = 0" if rev else "(constant)"
        ps.append(Param(dcm, (3, 3), "", _I3, f"DCM of the body frame in the parent's {what}"))
        if not inverse:
            rate = "rad/s" if rev else "m/s"
            ps += [
                Param("joint.q0", (), unit, 0.0, "initial joint coordinate"),
                Param("joint.qd0", (), rate, 0.0, "initial joint rate"),
            ]
        return ps

    return params


def _make_joint(cls: type, kind: str, inverse: bool) -> Callable[[str, dict, int], Block]:
    rev = kind == "revolute"

    def make(name: str, p: dict, n: int) -> Block:
        kw = _body_kwargs(p, n)
        if rev:
            kw["P_a0b"] = p["joint.P_a0b"]
        else:
            kw["P_ab"] = p["joint.P_ab"]
        if not inverse:
            kw["theta0" if rev else "x0"] = float(p["joint.q0"])
            kw["theta_dot0" if rev else "x_dot0"] = float(p["joint.qd0"])
        return cls(name, p["mass"], p["inertia"], axis=p["joint.axis"], **kw)

    return make


def _joint_names(kind: str) -> dict[str, str]:
    if kind == "revolute":
        return {"axis": "joint.axis[i]", "P_a0b": "joint.P_a0b[i,j]", "theta0": "joint.q0",
                "theta_dot0": "joint.qd0"}  # fmt: skip
    return {"axis": "joint.axis[i]", "P_ab": "joint.P_ab[i,j]", "x0": "joint.q0",
            "x_dot0": "joint.qd0"}  # fmt: skip


def _xyz(label: str, unit: str) -> tuple[tuple[str, str], ...]:
    return tuple((f"{label} {a}", unit) for a in "xyz")


_EULER_REL = tuple(
    (f"3-2-1 Euler angle {a} of P_{{a/a0}}", "rad") for a in ("roll φ", "pitch θ", "yaw ψ")
)
_SPHERICAL_LAYOUT = {
    "m": _xyz("relative angular acceleration ω̇_r (R_a)", "rad/s2")
    + _xyz("relative angular velocity ω_r (R_a)", "rad/s")
    + _EULER_REL,
    "tau": _xyz("torque applied by the parent (R_a)", "N.m"),
}
_FREE_LAYOUT = {
    "m": _xyz("relative linear acceleration v̇_r (R_a)", "m/s2")
    + _xyz("relative angular acceleration ω̇_r (R_a)", "rad/s2")
    + _xyz("relative velocity v_r (R_a)", "m/s")
    + _xyz("relative angular velocity ω_r (R_a)", "rad/s")
    + _xyz("relative position OP (R_b)", "m")
    + _EULER_REL,
    "tau": _xyz("force applied by the parent (R_a)", "N")
    + _xyz("torque about P applied by the parent (R_a)", "N.m"),
}


def _ball_params(free: bool, inverse: bool) -> Callable[[int], list[Param]]:
    def params(n: int) -> list[Param]:
        ps = _common_body_params(n, root=False)
        ps.append(
            Param(
                "joint.P_a0b",
                (3, 3),
                "",
                _I3,
                "DCM P_{a0/b} of the body frame in the parent's at zero joint rotation",
            )
        )
        if not inverse:
            if free:
                ps.append(
                    Param(
                        "joint.position0",
                        (3,),
                        "m",
                        (0.0, 0.0, 0.0),
                        "initial position of P from the joint point, parent frame R_b",
                    )
                )
            ps.append(
                Param(
                    "joint.euler0",
                    (3,),
                    "rad",
                    (0.0, 0.0, 0.0),
                    "initial 3-2-1 Euler angles of the joint rotation P_{a/a0}",
                )
            )
            if free:
                ps.append(
                    Param(
                        "joint.velocity0",
                        (3,),
                        "m/s",
                        (0.0, 0.0, 0.0),
                        "initial relative velocity v_r, body frame R_a",
                    )
                )
            ps.append(
                Param(
                    "joint.omega0",
                    (3,),
                    "rad/s",
                    (0.0, 0.0, 0.0),
                    "initial relative angular velocity ω_r, body frame R_a",
                )
            )
        return ps  # fmt: skip

    return params


def _make_ball(cls: type, free: bool, inverse: bool) -> Callable[[str, dict, int], Block]:
    def make(name: str, p: dict, n: int) -> Block:
        kw = _body_kwargs(p, n)
        kw["P_a0b"] = p["joint.P_a0b"]
        if not inverse:
            kw["euler0"] = p["joint.euler0"]
            kw["omega0"] = p["joint.omega0"]
            if free:
                kw["position0"] = p["joint.position0"]
                kw["velocity0"] = p["joint.velocity0"]
        return cls(name, p["mass"], p["inertia"], **kw)

    return make


_BALL_NAMES = {
    "P_a0b": "joint.P_a0b[i,j]", "euler0": "joint.euler0[i]", "omega0": "joint.omega0[i]",
    "position0": "joint.position0[i]", "velocity0": "joint.velocity0[i]",
}  # fmt: skip


def _imposed_params(n: int) -> list[Param]:
    return _common_body_params(n, root=False)


def _make_imposed(name: str, p: dict, n: int) -> Block:
    return ImposedMotionBody(name, p["mass"], p["inertia"], **_body_kwargs(p, n))


def _ground_params(n: int) -> list[Param]:
    return [
        Param(
            f"C{j}.point", (3,), "m", (0.0, 0.0, 0.0),
            f"vector from the base origin O to the point of child port C{j}, base frame",
        )
        for j in range(1, n + 1)
    ] + [
        Param("position", (3,), "m", (0.0, 0.0, 0.0), "position [IO]_{R_i} of the base origin"),
        Param("euler", (3,), "rad", (0.0, 0.0, 0.0), "3-2-1 Euler angles of the base frame"),
    ]  # fmt: skip


def _make_ground(name: str, p: dict, n: int) -> Block:
    return Ground(
        name,
        children={f"C{j}": p[f"C{j}.point"] for j in range(1, n + 1)},
        position=p["position"],
        euler=p["euler"],
    )


def _closure_params(n: int) -> list[Param]:
    zero6 = tuple((0.0,) * 6 for _ in range(6))
    return [
        Param("K", (6, 6), "", zero6,
              "stiffness on [δp (m); δθ (rad)] (N/m, N, N.m/m, N.m/rad blocks); symmetric PSD"),
        Param("D", (6, 6), "", zero6,
              "damping on [δv (m/s); δω (rad/s)]; symmetric PSD"),
    ]  # fmt: skip


def _make_closure(name: str, p: dict, n: int) -> Block:
    return LoopClosure(name, p["K"], p["D"])


def _spring_params(n: int) -> list[Param]:
    return [
        Param("k", (), "", 0.0, "stiffness (N/m or N.m/rad), >= 0"),
        Param("d", (), "", 0.0, "damping (N.s/m or N.m.s/rad), >= 0"),
        Param("q_ref", (), "", 0.0, "reference joint coordinate (m or rad)"),
    ]


def _make_spring(name: str, p: dict, n: int) -> Block:
    return JointSpringDamper(name, float(p["k"]), float(p["d"]), float(p["q_ref"]))


_VARIANTS = tuple(range(MAX_CHILDREN + 1))
_IMPOSED_RENAME = {"m": "body.m", "W": "body.W", "ext": "ext.W"}

#: Every FMU type ``titopfmu build`` writes, by key.
FMU_TYPES: dict[str, FmuType] = {
    t.key: t
    for t in (
        FmuType("rigid_body", "TitopRigidBody",
                "root rigid body, forward dynamics G^B (Alazard et al. 2025, eqs. 11-13)",
                _make_rigid, _rigid_params, _VARIANTS, {"ext": "ext.W"},
                {**_BODY_NAMES, "position": "position0[i]", "euler": "euler0[i]",
                 "twist": "twist0[i]"}),
        FmuType("welded_body", "TitopWeldedBody", "welded body R^A (Alazard et al. 2025, eq. 15)",
                _make_welded, _welded_params, _VARIANTS, {"ext": "ext.W"},
                {**_BODY_NAMES, "P_ab": "P_ab[i,j]"}),
        FmuType("revolute_body", "TitopRevoluteBody",
                "revolute-joint body R^{A,r}, forward dynamics (Alazard et al. 2025, eqs. 16-23)",
                _make_joint(RevoluteBody, "revolute", False), _joint_params("revolute", False),
                _VARIANTS, {"ext": "ext.W"}, {**_BODY_NAMES, **_joint_names("revolute")}, "rad"),
        FmuType("prismatic_body", "TitopPrismaticBody",
                "prismatic-joint body R^{A,t}, forward dynamics (Alazard et al. 2025, eqs. 24-29)",
                _make_joint(PrismaticBody, "prismatic", False), _joint_params("prismatic", False),
                _VARIANTS, {"ext": "ext.W"}, {**_BODY_NAMES, **_joint_names("prismatic")}, "m"),
        FmuType("revolute_body_inverse", "TitopRevoluteBodyInverse",
                "revolute-joint body with imposed joint motion, inverse dynamics (eq. 21)",
                _make_joint(RevoluteBodyInverse, "revolute", True),
                _joint_params("revolute", True), _VARIANTS, {"ext": "ext.W"},
                {**_BODY_NAMES, **_joint_names("revolute")}, "rad"),
        FmuType("prismatic_body_inverse", "TitopPrismaticBodyInverse",
                "prismatic-joint body with imposed joint motion, inverse dynamics (eq. 27)",
                _make_joint(PrismaticBodyInverse, "prismatic", True),
                _joint_params("prismatic", True), _VARIANTS, {"ext": "ext.W"},
                {**_BODY_NAMES, **_joint_names("prismatic")}, "m"),
        FmuType("spherical_body", "TitopSphericalBody",
                "spherical-joint body (3 dof, quaternion state), forward dynamics",
                _make_ball(SphericalBody, False, False), _ball_params(False, False), _VARIANTS,
                {"ext": "ext.W"}, {**_BODY_NAMES, **_BALL_NAMES}, "rad", _SPHERICAL_LAYOUT),
        FmuType("free_body", "TitopFreeBody",
                "free-joint body (6 dof relative to its parent), forward dynamics",
                _make_ball(FreeBody, True, False), _ball_params(True, False), _VARIANTS,
                {"ext": "ext.W"}, {**_BODY_NAMES, **_BALL_NAMES}, "", _FREE_LAYOUT),
        FmuType("spherical_body_inverse", "TitopSphericalBodyInverse",
                "spherical-joint body with imposed joint motion, inverse dynamics",
                _make_ball(SphericalBodyInverse, False, True), _ball_params(False, True),
                _VARIANTS, {"ext": "ext.W"}, {**_BODY_NAMES, **_BALL_NAMES}, "rad",
                _SPHERICAL_LAYOUT),
        FmuType("free_body_inverse", "TitopFreeBodyInverse",
                "free-joint body with imposed joint motion, inverse dynamics",
                _make_ball(FreeBodyInverse, True, True), _ball_params(True, True), _VARIANTS,
                {"ext": "ext.W"}, {**_BODY_NAMES, **_BALL_NAMES}, "", _FREE_LAYOUT),
        FmuType("imposed_motion_body", "TitopImposedMotionBody",
                "body with imposed motion: its direct dynamic model "
                "(Alazard et al. 2025, Fig. 1, eq. 11)",
                _make_imposed, _imposed_params, _VARIANTS, _IMPOSED_RENAME, dict(_BODY_NAMES)),
        FmuType("ground", "TitopGround", "fixed base (a root with zero motion)",
                _make_ground, _ground_params, tuple(range(1, MAX_CHILDREN + 1)),
                {"W": "body.W"}, {"position": "position[i]", "euler": "euler[i]"}),
        FmuType("loop_closure", "TitopLoopClosure",
                "loop closure L^A_C: 6x6 spring-damper between two motion vectors (Fig. 14)",
                _make_closure, _closure_params, (0,), {}, {"K": "K[i,j]", "D": "D[i,j]"}),
        FmuType("joint_spring_damper", "TitopJointSpringDamper",
                "joint law tau = -k (q - q_ref) - d q_dot on a 1-dof joint motion [q̈, q̇, q]",
                _make_spring, _spring_params, (0,), {"m": "joint.m", "tau": "joint.tau"},
                {"k,d,q_ref": "k, d, q_ref", "k": "k", "d": "d"}),
    )
}  # fmt: skip

for _t in FMU_TYPES.values():
    _t.param_names.update(_child_names(MAX_CHILDREN))


def all_variants() -> list[tuple[FmuType, int]]:
    """Every (type, number of child ports) pair that ``titopfmu build`` writes."""
    return [(t, n) for t in FMU_TYPES.values() for n in t.variants]


def default_values(params: list[Param]) -> dict[str, object]:
    """Parameter values (arrays / bools) at their defaults."""
    return {
        p.name: bool(p.default)
        if p.boolean
        else int(p.default)
        if p.integer
        else np.array(p.default, dtype=float)
        for p in params
    }


# -- random parameters (dependency analysis at build time, tests) ----------------------------


def _random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A uniformly distributed rotation: the DCM of a normalised Gaussian quaternion."""
    q = rng.standard_normal(4)
    return dcm_from_quaternion(q / np.linalg.norm(q))


def _random_inertia(rng: np.random.Generator) -> np.ndarray:
    while True:
        m = rng.uniform(0.05, 1.0, 3)
        s = np.sort(m)
        if s[0] + s[1] > 1.02 * s[2]:
            break
    R = _random_rotation(rng)
    i = R @ np.diag(m) @ R.T
    return 0.5 * (i + i.T)


def _random_spd(rng: np.random.Generator, n: int, scale: float) -> np.ndarray:
    a = rng.standard_normal((n, n))
    return scale * (a @ a.T / n + 0.1 * np.eye(n))


def random_values(params: list[Param], rng: np.random.Generator) -> dict[str, object]:
    """Valid random parameter values: masses 0.5-5 kg, full inertias, random DCMs and axes."""
    v: dict[str, object] = {}
    for p in params:
        n = p.name
        if p.boolean:
            v[n] = bool(rng.integers(0, 2))
        elif p.integer:
            v[n] = int(p.default)
        elif n == "mass":
            v[n] = np.array(rng.uniform(0.5, 5.0))
        elif n == "inertia":
            v[n] = _random_inertia(rng)
        elif p.shape == (3, 3):
            v[n] = _random_rotation(rng)
        elif n in ("K", "D"):
            v[n] = _random_spd(rng, 6, 100.0 if n == "K" else 5.0)
        elif n in ("k", "d"):
            v[n] = np.array(rng.uniform(0.0, 20.0))
        elif n.endswith("axis"):
            a = rng.standard_normal(3)
            v[n] = a / np.linalg.norm(a)
        elif n == "euler0" or n == "euler":
            v[n] = rng.uniform(-1.2, 1.2, 3)
        else:
            v[n] = rng.normal(0.0, 0.5, p.shape) if p.shape else np.array(rng.normal(0.0, 0.5))
    return v
