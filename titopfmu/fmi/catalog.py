"""The FMU types: which core block each FMU wraps, its FMI parameters and its variable names.

Derived from the block declarations (:mod:`titopfmu.blocks.declarations`): an FMU type is a
declared block type with an FMU; its FMI parameters are the declared ones, by the same names
(``theta0`` in the FMU as in the model file and a campaign), with the declared units,
defaults and descriptions; the block's ``children`` become the parameters ``Cj.point`` of its
child ports ``C1..Cn`` and its ``external`` wrench the port ``ext.W`` with the parameters
``ext.point`` and ``ext.inertial``. Body types come in variants with 0 to :data:`MAX_CHILDREN`
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

from ..blocks import BLOCK_CLASSES
from ..blocks.base import Block
from ..blocks.declarations import BLOCK_TYPES, OLD_FMU_NAMES, BlockType, own_law_parameters
from ..spatial.rotations import dcm_from_quaternion

#: Largest number of child ports of the body variants that ``titopfmu build`` writes.
MAX_CHILDREN = 3


@dataclass(frozen=True)
class Param:
    """One FMI parameter (possibly an array): base name, shape, unit, default, description;
    ``role``: what it is in the FMU's C configuration (``fmu_config.h``)."""

    name: str
    shape: tuple[int, ...]
    unit: str
    default: object
    description: str
    boolean: bool = False
    integer: bool = False
    role: str = ""

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
    """A family of FMUs wrapping one declared block type (:attr:`declaration`)."""

    key: str
    model_prefix: str
    title: str
    make: Callable[[str, dict, int], Block]
    params: Callable[[int], list[Param]]
    variants: tuple[int, ...] = (0,)
    #: core channel name -> FMI port name (e.g. the imposed motion ``m`` -> ``body.m``)
    rename: dict[str, str] = field(default_factory=dict)
    joint_unit: str = ""
    #: (label, unit) of each component of ``joint.m`` and ``joint.tau`` (multi-dof joints)
    joint_layout: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    declaration: BlockType | None = None
    #: FMI parameter names of titopfmu 0.1 -> today's (accepted with a DeprecationWarning)
    old_names: dict[str, str] = field(default_factory=dict)
    #: a flexible block's FMU type (:func:`flex_fmu_type`): its reduced model
    #: (:class:`titopfmu.flex.ReducedModel`), constant data of the FMU; None: a rigid block's
    flexible: object = None

    def model_name(self, n_children: int) -> str:
        """modelIdentifier of a variant, e.g. ``TitopRevoluteBodyC2``."""
        return f"{self.model_prefix}C{n_children}" if self.variants != (0,) else self.model_prefix


# -- from the declarations ------------------------------------------------------------------------


def _fmu_params(decl: BlockType, n: int) -> list[Param]:
    """The FMI parameters of ``decl``'s FMU with ``n`` child ports, in value-reference order."""
    out: list[Param] = []
    ground = decl.family == "ground"
    for p in decl.fmu_parameters():
        if p.check == "children":
            where = ("vector from the base origin O to the point of child port C{j}, base frame"
                     if ground else
                     "vector from P to the point of child port C{j}, in the body frame R_a")
            out += [Param(f"C{j}.point", (3,), "m", (0.0, 0.0, 0.0), where.format(j=j),
                          role="PAR_POINT") for j in range(1, n + 1)]  # fmt: skip
        elif p.check == "external":
            out += [
                Param("ext.point", (3,), "m", (0.0, 0.0, 0.0),
                      "vector from P to the point where the external wrench ext.W acts, in R_a",
                      role="PAR_EXT_POINT"),
                Param("ext.inertial", (), "", False,
                      "true: ext.W is given in the inertial frame R_i; false: in the body frame "
                      "R_a", boolean=True, role="PAR_EXT_INERTIAL"),
            ]  # fmt: skip
        else:
            default = p.start if p.required else p.default
            out.append(Param(p.name, p.shape, p.unit, default, p.description,
                             boolean=p.json == "boolean", role=p.role))
    if decl.fmu is not None and decl.fmu.law:  # the law of its own joint (law.enabled, law.k...)
        out += [Param(p.name, p.shape, p.unit, p.default, p.description,
                      boolean=p.json == "boolean", role=p.role) for p in own_law_parameters()]
    return out


def _maker(decl: BlockType) -> Callable[[str, dict, int], Block]:
    """The block an FMU of ``decl`` builds from its FMI parameter values (``values``: name ->
    value, arrays by base name) with ``n`` child ports."""
    cls = BLOCK_CLASSES[decl.name]

    def make(name: str, values: dict, n: int) -> Block:
        return cls(name, **_make_kwargs(decl, values, n))

    return make


def _make_kwargs(decl: BlockType, values: dict, n: int) -> dict[str, object]:
    """The constructor's keywords of ``decl``'s block from its FMU's parameter values (as
    :func:`_maker`'s)."""
    kw: dict[str, object] = {}
    for p in decl.fmu_parameters():
        if p.check == "children":
            kw["children"] = {f"C{j}": values[f"C{j}.point"] for j in range(1, n + 1)}
        elif p.check == "external":
            kw["external"] = {"ext": {"point": tuple(values["ext.point"]),
                                      "frame": "inertial" if values["ext.inertial"]
                                      else "body"}}  # fmt: skip
        else:
            v = values[p.name]
            kw[p.name] = bool(v) if p.json == "boolean" else float(v) if p.shape == () else v
    return kw


def fmu_type(decl: BlockType) -> FmuType:
    """The FMU type of a declared block type (which has an FMU)."""
    f = decl.fmu
    layout = {}
    for port in decl.ports:
        if port.labels:
            layout["m" if port.name == "joint.m" else "tau"] = tuple(zip(port.labels, port.units,
                                                                        strict=True))  # fmt: skip
    return FmuType(decl.key, f.prefix, f.title, _maker(decl), lambda n: _fmu_params(decl, n),
                   f.variants, dict(f.ports), decl.coordinate_unit, layout, decl,
                   dict(OLD_FMU_NAMES.get(decl.key, {})))  # fmt: skip


#: Every FMU type ``titopfmu build`` writes, by key.
FMU_TYPES: dict[str, FmuType] = {
    d.key: fmu_type(d) for d in BLOCK_TYPES.values() if d.fmu is not None
}

def flex_key(base: FmuType, red) -> str:
    """A hash (12 hex digits) of what a flexible block's FMU bakes in: its block type
    ``base.key`` and its reduced model ``red`` (its row :func:`~titopfmu.core.model.flex_row`,
    its ints :func:`~titopfmu.core.model.flex_ints` and its coordinates' names)."""
    import hashlib

    from ..core.model import flex_ints, flex_row

    h = hashlib.sha256(base.key.encode())
    h.update(np.ascontiguousarray(flex_row(red), dtype="<f8").tobytes())
    h.update(repr(flex_ints(0, red, 0)).encode())
    h.update("\0".join(red.coordinates).encode())
    return h.hexdigest()[:12]


def flex_fmu_type(base: FmuType, red) -> FmuType:
    """The FMU type of a flexible block: the block type ``base`` (a forward body type) with the
    reduced model ``red`` (:class:`titopfmu.flex.ReducedModel`) baked in as constant data
    (docs/flexible.md §6, docs/fmus.md "One FMU per flexible block"). Its key and model
    identifier carry :func:`flex_key` (``TitopRevoluteBodyFlex<hash>C1``: another reduced model
    is another FMU); its parameters are ``base``'s, the child ports' points defaulting to the
    model's nodes (child port k at node k + 1, the core's rule), then ``elastic_q0`` and
    ``elastic_qdot0`` (n each, the initial elastic coordinates and rates); its states the
    block's own, then ``q.COORD`` and ``qd.COORD``."""
    if base.declaration is None or not any(p.check == "flexible"
                                           for p in base.declaration.parameters):
        raise ValueError(f"FMU type {base.key!r} has no flexible part (forward body types only)")
    h = flex_key(base, red)
    n_modes = red.n_modes
    nodes = np.asarray(red.node_positions, dtype=float).reshape(-1, 3)
    coords = ", ".join(red.coordinates)
    elastic = [
        Param("elastic_q0", (n_modes,), "", np.zeros(n_modes),
              f"initial elastic coordinates q(0) of the flexible part (reduced model "
              f"'{red.name}', coordinates {coords}; units of the coordinates: m, rad, or "
              "m kg^1/2 for mass-normalised modes)", role="PAR_ELASTIC_Q0"),
        Param("elastic_qdot0", (n_modes,), "", np.zeros(n_modes),
              f"initial elastic rates q̇(0) of the flexible part (reduced model '{red.name}'; "
              "units of the coordinates per s)", role="PAR_ELASTIC_QD0"),
    ]  # fmt: skip

    def params(n: int) -> list[Param]:
        out = []
        for p in base.params(n):
            if p.role == "PAR_POINT":  # child port j at node j (node 0 is P)
                j = int(p.name[1:].split(".")[0])
                default = tuple(nodes[j]) if j < len(nodes) else p.default
                p = Param(p.name, p.shape, p.unit, default,
                          p.description + f" (at node {j} of the flexible part)", role=p.role)
            out.append(p)
        return out + elastic

    cls = BLOCK_CLASSES[base.declaration.name]

    def make(name: str, values: dict, n: int) -> Block:
        kw = _make_kwargs(base.declaration, values, n)
        kw.update(flexible=red, elastic_q0=np.asarray(values["elastic_q0"], float),
                  elastic_qdot0=np.asarray(values["elastic_qdot0"], float))  # fmt: skip
        return cls(name, **kw)

    return FmuType(f"{base.key}~flex{h}", f"{base.model_prefix}Flex{h}",
                   f"{base.title}, with a flexible part (reduced model '{red.name}', {n_modes} "
                   "elastic coordinates)", make, params, base.variants, dict(base.rename),
                   base.joint_unit, dict(base.joint_layout), base.declaration,
                   dict(base.old_names), red)  # fmt: skip


def renamed_parameter(model_identifier: str, name: str) -> str | None:
    """Today's name of the titopfmu 0.1 FMU parameter ``name`` (base name, e.g. ``joint.q0``
    -> ``theta0``) of the FMU ``model_identifier``, or None if it was not renamed."""
    import re

    prefix = re.sub(r"C\d+$", "", model_identifier)
    for t in FMU_TYPES.values():
        if t.model_prefix == prefix:
            return t.old_names.get(name)
    return None


#: Block class -> FMU type key (exact classes: a subclass may change the equations).
FMU_TYPE_OF: dict[type, str] = {BLOCK_CLASSES[t.declaration.name]: k for k, t in FMU_TYPES.items()}


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
    """Valid random parameter values: masses 0.5-5 kg, full inertias, random DCMs and axes; a
    joint FMU's own law off (``law.enabled``), its values valid."""
    v: dict[str, object] = {}
    for p in params:
        n = p.name.removeprefix("law.")  # a joint FMU's own law: as the law block's
        if p.name == "law.enabled":  # a joint FMU as its block alone (the law's values valid)
            v[p.name] = False
        elif p.boolean:
            v[p.name] = bool(rng.integers(0, 2))
        elif p.integer:
            v[p.name] = int(p.default)
        elif n == "mass":
            v[p.name] = np.array(rng.uniform(0.5, 5.0))
        elif n == "inertia":
            v[p.name] = _random_inertia(rng)
        elif p.shape == (3, 3):
            v[p.name] = _random_rotation(rng)
        elif n in ("K", "D"):
            v[p.name] = _random_spd(rng, 6, 100.0 if n == "K" else 5.0)
        elif n in ("k", "d", "friction", "d_stop"):
            v[p.name] = np.array(rng.uniform(0.0, 20.0))
        elif n == "k_stop":  # (> 0: a joint law may be limited)
            v[p.name] = np.array(rng.uniform(50.0, 500.0))
        elif n == "friction_velocity":
            v[p.name] = np.array(rng.uniform(0.2, 2.0))
        elif n in ("lower", "upper"):  # a range around 0 (upper >= lower)
            v[p.name] = np.array(rng.uniform(0.1, 1.0) * (-1.0 if n == "lower" else 1.0))
        elif n == "armature":  # a rotor inertia per joint speed, >= 0
            v[p.name] = (rng.uniform(0.0, 0.5, p.shape) if p.shape
                         else np.array(rng.uniform(0.0, 0.5)))
        elif n.endswith("axis"):
            a = rng.standard_normal(3)
            v[p.name] = a / np.linalg.norm(a)
        elif n == "euler0" or n == "euler":
            v[p.name] = rng.uniform(-1.2, 1.2, 3)
        else:
            v[p.name] = rng.normal(0.0, 0.5, p.shape) if p.shape else np.array(rng.normal(0.0, 0.5))
    return v
