"""A :class:`~titopfmu.System` as a co-simulation of native FMUs: ``CoSimulation.from_system``.

Every block becomes a component of the same name, an instance of its FMU type
(:data:`titopfmu.fmi.catalog.FMU_TYPES`) with as many child ports as the block has; its
parameters are bound from the block's own attributes (no physics here: the FMU builds the same
core block from them, and :func:`from_system` checks that it does, see :func:`_check_rebuilt`).
The wiring follows the System's connections:

* child port -> parent port (motion down, wrench up): ``parent.Cj`` -> ``child.P``, where the
  j-th child port of a body (in the order of its ``children``) is the FMU's ``Cj``;
* a body's joint motion and effort to and from its joint law: ``joint.m`` / ``joint.tau`` (the
  law's ports ``m`` / ``tau`` are its FMU's ``joint.m`` / ``joint.tau``), except a law that
  reads and drives the same forward 1-dof joint: it is folded into that joint's FMU (its
  ``law.*`` parameters, :func:`own_laws`), so that the FMU's integrator sees it between
  communication points;
* loop closures: ``body.Cj`` -> ``closure.left`` / ``closure.right``;
* an external wrench of a body is its FMU's ``ext.W`` (point and frame bound as parameters);
  a body without one leaves ``ext.W`` unconnected, at its start value zero. A body FMU has one
  ``ext.W``: each further external wrench ``e`` of a body ``b`` is the ``ext.W`` of a massless
  :class:`~titopfmu.blocks.WeldedBody` component ``b__e`` (frame as b's, wrench at its origin
  in the wrench's frame) on an extra child port of b's FMU at the wrench's point, after b's own
  ports: its FMU carries the wrench, transported to b's reference point with its torque, to b,
  as the core does for the wrenches of one block (no physics here); ``b.e`` names that input;
* a :class:`~titopfmu.blocks.Constant` has no FMU: every input it feeds is held at its value;
* a body with a flexible part (``flexible=``) is an FMU of its own type
  (:func:`~titopfmu.fmi.catalog.flex_fmu_type`: its body type's FMU with the reduced model baked
  in, one per reduced model, built on demand into the cache; :attr:`SystemMapping.types`), its
  initial elastic state bound as ``elastic_q0`` / ``elastic_qdot0`` and its internal step
  ``solver.max_step`` from its highest eigenfrequency (:func:`flex_max_step`) unless ``solver=``
  gives one; its child port j sits at the reduced model's node j.

Blocks that have no FMU (a :class:`~titopfmu.blocks.TimeFunction`, a
:class:`~titopfmu.blocks.Function`, a user's subclass of a block) are refused with an error naming
the block.

Names: the System's names are accepted by the returned co-simulation wherever a reference is
taken (``connect``, ``set_input``, ``simulate(record=...)``): ``base.hinge`` for ``base.C1``,
``motor.m`` for ``motor.joint.m``. :func:`simulate_system` records the engine's signals
(``balloon.position[1]``, ``arm.joint.m[3]``, ...) and returns the engine's
:class:`~titopfmu.assembly.engine.SimulationResult`, so the same columns come out of both.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..assembly.engine import RunInterrupted
from ..assembly.system import System
from ..blocks import BodyBlock, Constant, Ground, ImposedMotionBody
from ..fmi.catalog import FMU_TYPE_OF, FMU_TYPES, FmuType, flex_fmu_type
from ..spatial.rotations import dcm_from_euler, dcm_from_quaternion, euler_from_dcm
from .components import CosimError

_INDEX = re.compile(r"^(.*)\[(\d+)\]$")


class FromSystemError(CosimError):
    """A System cannot be co-simulated with FMUs (names the block)."""


@dataclass
class SystemMapping:
    """How a System maps onto its co-simulation: the FMU of each block, the FMU name of each
    System port and the values of the constant blocks. Kept on the co-simulation as
    ``cs.system_mapping``."""

    system: System
    #: block name -> (FMU type key, number of child ports)
    variants: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: block name -> {System port name -> FMU port or variable base name}
    ports: dict[str, dict[str, str]] = field(default_factory=dict)
    #: block name -> FMI parameters bound
    parameters: dict[str, dict[str, object]] = field(default_factory=dict)
    #: constant block name -> its value
    constants: dict[str, np.ndarray] = field(default_factory=dict)
    #: the massless welded components carrying a body's further external wrenches:
    #: (body block, its FMU's child port, component name)
    wrench_carriers: list[tuple[str, str, str]] = field(default_factory=list)
    #: joint law folded into its joint's FMU (a JointSpringDamper reading and driving the same
    #: forward 1-dof joint: that FMU's law.* parameters) -> the joint's block name
    folded: dict[str, str] = field(default_factory=dict)
    #: the FMU types of the flexible blocks by key (:func:`~titopfmu.fmi.catalog.flex_fmu_type`:
    #: one per block type and reduced model, built into the cache on demand)
    types: dict[str, FmuType] = field(default_factory=dict)
    #: flexible block -> its reduced model's highest eigenfrequency (rad/s), for the flexible
    #: blocks coupled to other FMUs (a child, or a parent other than a Ground or an imposed
    #: motion, whose motion depends on the block's wrench): the
    #: communication step must resolve it (:func:`simulate_system` warns)
    stiff: dict[str, float] = field(default_factory=dict)

    def fmu_type(self, key: str) -> FmuType:
        """The FMU type of ``key``: a flexible block's (:attr:`types`) or a catalogue one."""
        return self.types[key] if key in self.types else FMU_TYPES[key]

    def fmu_ref(self, ref: str) -> str:
        """The FMU-side reference of a System reference: ``"base.hinge"`` -> ``"base.C1"``,
        ``"motor.m[3]"`` -> ``"motor.joint.m[3]"``; FMU names pass unchanged."""
        from .wiring import alias_name

        block, rest = ref.split(".", 1)
        out = alias_name(self.ports.get(block, {}), rest)
        return out[1:] if out.startswith("@") else f"{block}.{out}"  # "@": another component

    def model_names(self) -> dict[str, str]:
        """block name -> modelIdentifier of its FMU."""
        return {b: self.fmu_type(k).model_name(n) for b, (k, n) in self.variants.items()}


# -- the parameters of a block ----------------------------------------------------------------


def block_parameters(block) -> dict[str, object]:
    """The FMI parameters of ``block``'s FMU (names as in the FMU, arrays by base name), from
    its type's declaration: every declared FMU parameter by its name, the child ports' points
    as ``Cj.point`` (j in the order of the block's ``children``), its first external wrench's
    point and frame as ``ext.point`` and ``ext.inertial``, the points of its further external
    wrenches as those of extra child ports after its own (their carriers' ports, see
    :func:`wrench_carriers`), and the Euler-angle form of an attitude the block holds as a
    quaternion."""
    ftype = FMU_TYPES[FMU_TYPE_OF[type(block)]]
    values = block.parameter_values()
    p: dict[str, object] = {}
    for par in ftype.declaration.fmu_parameters():
        if par.check == "children":
            for j, pc in enumerate(values["children"].values(), start=1):
                p[f"C{j}.point"] = pc
        elif par.check == "external":
            ext = list(values["external"].values())
            for e in ext[:1]:
                p["ext.point"] = e["point"]
                p["ext.inertial"] = e["frame"] == "inertial"
            n = len(values.get("children") or {})
            for j, e in enumerate(ext[1:], start=n + 1):  # carried by welded components
                p[f"C{j}.point"] = e["point"]
        elif par.alternative is not None:  # euler0, the FMU's form of quaternion0
            p[par.name] = euler_from_dcm(dcm_from_quaternion(values[par.alternative]))
        else:
            p[par.name] = values[par.name]
    if getattr(block, "flexible", None) is not None:  # its FMU's initial elastic state
        n_modes = block.flexible.n_modes
        p["elastic_q0"] = np.asarray(block.elastic_q0, float).reshape(n_modes)
        p["elastic_qdot0"] = np.asarray(block.elastic_qdot0, float).reshape(n_modes)
    return {
        k: v if isinstance(v, bool) else float(v) if np.ndim(v) == 0 else np.asarray(v, float)
        for k, v in p.items()
    }


def wrench_carriers(block, taken) -> list[tuple[str, str, str, dict[str, object]]]:
    """The components carrying ``block``'s external wrenches after the first (its FMU has one
    ``ext.W``): (wrench name, the block's FMU child port, component name, its WeldedBody FMU's
    parameters). A carrier is a massless welded body whose frame is the block's (``P_ab`` the
    identity), on an extra child port at the wrench's point, the wrench acting at its origin in
    the wrench's frame: its FMU passes the wrench on to the block's FMU, which transports it to
    the block's reference point P as the core does any child's wrench. ``taken``: names in
    use (the carriers' are added)."""
    ext = list(getattr(block, "external", {}).items())
    n = len(getattr(block, "child_names", ()))
    out = []
    for j, (name, e) in enumerate(ext[1:], start=n + 1):
        comp, k = f"{block.name}__{name}", 2
        while comp in taken:
            comp, k = f"{block.name}__{name}_{k}", k + 1
        taken.add(comp)
        params = {"mass": 0.0, "inertia": np.zeros((3, 3)), "com": np.zeros(3),
                  "gravity": np.zeros(3), "ext.point": np.zeros(3),
                  "ext.inertial": e.frame == "inertial", "P_ab": np.eye(3)}  # fmt: skip
        out.append((name, f"C{j}", comp, params))
    return out


def _check_rebuilt(block, ftype: FmuType, n: int, params: dict[str, object]) -> None:
    """Build the block the FMU will build from ``params`` (the catalog's constructor call) and
    check it is ``block``: every model-file field equal (to 1e-12; the initial attitude of a
    spherical or free joint goes through Euler angles). A difference means a block feature the
    FMU type does not carry: refused, naming the block and the field."""
    import warnings

    from ..fmi.catalog import default_values
    from ..modelfile import block_to_dict

    values = default_values(ftype.params(n))
    values.update({k: (v if isinstance(v, bool) else np.asarray(v, dtype=float))
                   for k, v in params.items()})  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the block's own checks already warned once
        rebuilt = ftype.make(block.name, values, n)
        if ftype.flexible is not None:  # the same reduced model by the FMU type's key (its
            block, rebuilt = copy.copy(block), copy.copy(rebuilt)  # hash): named alike here
            block.flexible_source = rebuilt.flexible_source = "<the FMU's reduced model>"
        a, b = block_to_dict(block), block_to_dict(rebuilt)
    names = list(getattr(block, "child_names", []))
    if len(a.get("external", {})) > 1:  # the further wrenches: points of extra child ports
        further = list(a["external"].items())[1:]
        a["children"] = {**a.get("children", {}), **{f"({w})": e["point"] for w, e in further}}
        names += [f"({w})" for w, _ in further]
        a["external"] = dict(list(a["external"].items())[:1])
    if "children" in b:
        b["children"] = dict(zip(names, b["children"].values(), strict=True))
    if "external" in a:
        b["external"] = dict(zip(a["external"], b.get("external", {}).values(), strict=False))
    elif "external" in b and all(not np.any(e["point"]) for e in b["external"].values()):
        b.pop("external")  # the FMU's ext.W, unused (held at zero)
    if "quaternion0" in a or "quaternion0" in b:
        qa = np.asarray(a.pop("quaternion0", [1.0, 0.0, 0.0, 0.0]))
        qb = np.asarray(b.pop("quaternion0", [1.0, 0.0, 0.0, 0.0]))
        if not np.allclose(dcm_from_quaternion(qa), dcm_from_quaternion(qb), atol=1e-12):
            raise FromSystemError(f"block '{block.name}': its initial attitude does not survive "
                                  "the FMU's Euler-angle parameter")  # fmt: skip
    for d in (a, b):  # saved as any vector of the right direction (_exact_axis)
        if "axis" in d:
            d["axis"] = (np.asarray(d["axis"]) / np.linalg.norm(d["axis"])).tolist()
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key), b.get(key)
        same = va == vb
        if not same and va is not None and vb is not None:
            try:
                same = np.allclose(np.asarray(va, dtype=float), np.asarray(vb, dtype=float),
                                   rtol=1e-12, atol=1e-12)  # fmt: skip
            except (TypeError, ValueError):
                same = False
        if not same:
            raise FromSystemError(
                f"block '{block.name}': its field '{key}' ({va!r}) has no equivalent in the FMU "
                f"{ftype.model_name(n)} (which would build {vb!r})"
            )


# -- the mapping ------------------------------------------------------------------------------


def _no_fmu(block) -> FromSystemError:
    t = type(block).__name__
    base = next((c for c in FMU_TYPE_OF if isinstance(block, c)), None)
    if base is not None:
        why = (f"type {t} is a subclass of {base.__name__}: its equations may differ, and only "
               f"{base.__name__} itself has an FMU")  # fmt: skip
    else:
        why = f"type {t} has no FMU (FMU types: {', '.join(c.__name__ for c in FMU_TYPE_OF)})"
    return FromSystemError(
        f"block '{block.name}': {why}; replace it by a block with an FMU, or co-simulate it with "
        "an FMU of your own added with CoSimulation.add"
    )


def own_laws(system: System) -> dict[str, str]:
    """The joint laws of ``system`` that act on their own joint: law name -> joint name, for a
    :class:`~titopfmu.blocks.JointSpringDamper` whose ``m`` is a joint's ``joint.m`` and whose
    ``tau`` feeds only that joint's ``joint.tau``, the joint's FMU able to carry it
    (:attr:`~titopfmu.blocks.declarations.FmuDecl.law`: forward 1-dof joints). Each becomes that
    joint FMU's ``law.*`` parameters: computed by the core inside the FMU, its integrator sees
    it between communication points (a separate law FMU is coupled to its joint only at them,
    explicitly: stiff joint stops then make the co-simulation fail). Laws between different
    joints stay FMUs of their own."""
    from ..blocks import JointSpringDamper

    src = system._source
    out: dict[str, str] = {}
    for b in system.blocks.values():
        if type(b) is not JointSpringDamper or (b.name, "m") not in src:
            continue
        joint, port = src[(b.name, "m")]
        j = system.blocks[joint]
        ftype = FMU_TYPES.get(FMU_TYPE_OF.get(type(j), ""))
        if port != "joint.m" or ftype is None or not ftype.declaration.fmu.law:
            continue
        fed = [dst for dst, s in src.items() if s == (b.name, "tau")]
        if fed == [(joint, "joint.tau")]:
            out[b.name] = joint
    return out


def system_mapping(system: System, fold_laws: bool = True) -> SystemMapping:
    """The FMU type, port names and parameters of every block of ``system`` (checked: raises
    :class:`FromSystemError` naming the block for anything without an FMU). A joint law acting
    on its own joint is folded into that joint's FMU (:func:`own_laws`, ``folded``) unless
    ``fold_laws`` is false (then every law is an FMU of its own)."""
    system.check()
    m = SystemMapping(system)
    taken = set(system.blocks)  # the names of the components carrying further wrenches
    m.folded = own_laws(system) if fold_laws else {}
    for b in system.blocks.values():
        if b.name in m.folded:
            continue
        if type(b) is Constant:
            m.constants[b.name] = np.asarray(b.value, dtype=float).reshape(-1)
            continue
        if getattr(getattr(type(b), "declaration", None), "family", None) == "mimic":
            raise FromSystemError(f"block '{b.name}': a mimic joint couples its joints through the "
                                  "whole model's dynamics, which no block FMU has; run it in "
                                  "process or as one model FMU: titopfmu export --fmu")
        if type(b) not in FMU_TYPE_OF:
            raise _no_fmu(b)
        for a in ("damping", "stiffness"):  # titop_body's: not block FMU parameters (yet)
            if getattr(b, a, 0.0):
                raise FromSystemError(f"block '{b.name}': its joint {a} ({type(b).__name__} "
                                      f"{a}) is not in the block FMU yet; run it in process "
                                      "or as one model FMU: titopfmu export --fmu")
        own = getattr(b, "own_apparent_inertia", None)
        rigid = getattr(b, "flexible", None) is None  # (a flexible part's inertia: the FMU's)
        if own is not None and not b.inverse and rigid and own() is not None:
            raise FromSystemError(f"block '{b.name}': its body alone has no inertia about its "
                                  "joint (a massless link: what its joint moves is its "
                                  "children's inertia, in other FMUs), and its FMU solves its "
                                  "joint with its own; run it in process or as one model FMU: "
                                  "titopfmu export --fmu")  # fmt: skip
        key = FMU_TYPE_OF[type(b)]
        ftype = FMU_TYPES[key]
        red = getattr(b, "flexible", None)
        if red is not None:  # its own FMU type: the reduced model is constant data of the FMU
            if len(getattr(b, "external", {})) > 1:
                raise FromSystemError(f"block '{b.name}': a flexible body's FMU has one external "
                                      "wrench (ext.W); its further ones would hang from child "
                                      "ports off its reduced model's nodes: run it in process "
                                      "or as one model FMU: titopfmu export --fmu")  # fmt: skip
            ftype = flex_fmu_type(ftype, red)
            key = ftype.key
            m.types[key] = ftype
        carriers = wrench_carriers(b, taken)
        n = len(getattr(b, "child_names", ())) if ftype.variants != (0,) else 0
        n += len(carriers)
        if key == "ground" and n == 0:
            raise FromSystemError(f"block '{b.name}': a Ground without child ports")
        m.variants[b.name] = (key, n)
        if red is not None:
            parent = system.source(f"{b.name}.P") if "P" in b.ports else None
            # a Ground's or an imposed motion's output does not depend on the child's wrench
            moving = parent is not None and not isinstance(
                system.blocks[parent.split(".", 1)[0]], (Ground, ImposedMotionBody))
            w = np.asarray(red.frequencies(), dtype=float)
            if (n > 0 or moving) and w.size:
                m.stiff[b.name] = float(np.max(w))
        ports = {c: f"C{j}" for j, c in enumerate(getattr(b, "child_names", ()), start=1)}
        ports.update({e: "ext.W" for e in list(getattr(b, "external", {}))[:1]})
        ports.update({e: f"@{comp}.ext.W" for e, _, comp, _ in carriers})
        ports.update({k: v for k, v in ftype.rename.items() if k != "ext"})
        if ftype.declaration.family in ("root", "joint", "ground"):
            ports.setdefault("m", "body.m")  # the body's own motion vector
        m.ports[b.name] = ports
        params = block_parameters(b)
        _check_rebuilt(b, ftype, n, params)
        m.parameters[b.name] = params
        for _, port, comp, cparams in carriers:
            m.variants[comp] = ("welded_body", 0)
            m.ports[comp] = {}
            m.parameters[comp] = cparams
            m.wrench_carriers.append((b.name, port, comp))
    for law, joint in m.folded.items():
        lp = block_parameters(system.blocks[law])
        m.parameters[joint].update({"law.enabled": True,
                                    **{f"law.{k}": v for k, v in lp.items()}})  # fmt: skip
    return m


def _fmu_folder(m: SystemMapping, fmus, progress: bool, notice) -> Path:
    names = m.model_names()
    if fmus is not None:
        d = Path(fmus)
        missing = sorted({f"{v}.fmu" for v in names.values() if not (d / f"{v}.fmu").is_file()})
        flex = sorted(b for b, (k, _) in m.variants.items()
                      if k in m.types and f"{names[b]}.fmu" in missing)  # fmt: skip
        if flex:
            raise FromSystemError(
                f"FMU folder '{d}' lacks the FMU of flexible block '{flex[0]}', "
                f"{names[flex[0]]}.fmu (its reduced model is constant data of the FMU, which "
                "'titopfmu build' does not write): leave fmus=None, it is built on demand into "
                "the cache"
            )
        if missing:
            raise FromSystemError(
                f"FMU folder '{d}' lacks {', '.join(missing)} (needed by blocks "
                + ", ".join(sorted(b for b, v in names.items() if f"{v}.fmu" in missing))
                + "); build them with 'titopfmu build --out DIR' (bodies with more than "
                "3 child ports: leave fmus=None, they are built on demand into the cache)"
            )
        return d
    from ..fmi.cache import cached_variants

    if notice is None:
        notice = _notice_on_stderr
    return cached_variants(sorted(set(m.variants.values())), progress=progress, notice=notice,
                           types=m.types)


def flex_max_step(red) -> float:
    """The internal step (s) a flexible block's FMU takes by default (its ``solver.max_step``,
    unless ``solver=`` gives one): 1 ms, or a tenth of the period over 2π of the reduced model's
    highest eigenfrequency (``red.frequencies()``, rad/s) when shorter: h ω_max <= 0.1, where
    the classical Runge-Kutta method's error is small (about (h ω)^4 per unit of phase) and far
    from its stability limit (h ω = 2.8)."""
    w = np.asarray(red.frequencies(), dtype=float)
    w_max = float(np.max(w)) if w.size else 0.0
    return min(1e-3, 0.1 / w_max) if w_max > 0 else 1e-3


def _notice_on_stderr(message: str) -> None:
    """:func:`from_system`'s default ``notice``: one line on stderr."""
    import sys

    print(f"titopfmu: {message}", file=sys.stderr, flush=True)


def populate(
    cs,
    system: System,
    fmus: str | os.PathLike | None = None,
    *,
    solver: Mapping[str, object] | None = None,
    progress: bool = False,
    notice: Callable[[str], None] | None = None,
    fold_laws: bool = True,
):
    """Fill the empty co-simulation ``cs`` with ``system``: one FMU component per block, same
    names, same wiring; returns ``cs`` (:meth:`CoSimulation.from_system
    <titopfmu.master.CoSimulation.from_system>` calls it with a new instance).

    ``fmus``: a folder of FMUs (``titopfmu build``); None builds the ones needed into the
    per-user cache (:mod:`titopfmu.fmi.cache`; bodies with any number of child ports).
    ``solver``: FMU solver parameters for every component; None: ``{"solver.method": 4}``,
    the FMUs' classical Runge-Kutta steps, whose order matches the master's default coupling
    (:attr:`CoSimulation.coupling`, fourth order; the FMUs' own default, Heun's method, would
    limit it to the second).
    ``notice``: a function of one string, told once when FMUs must be built into the cache
    (how many, where, and an estimate of the time; later calls reuse them); None (the default)
    prints that line on stderr, prefixed ``titopfmu:``; ``notice=lambda message: None``
    keeps the build silent. ``fold_laws``: a joint law that reads and drives the same forward
    1-dof joint is computed inside that joint's FMU (its ``law.*`` parameters, :func:`own_laws`:
    its integrator sees the law between communication points; the law's effort is then no FMU
    output); false keeps each law an FMU of its own. The mapping is ``cs.system_mapping``.
    """
    m = system_mapping(system, fold_laws)
    folder = _fmu_folder(m, fmus, progress, notice)
    cs.system_mapping = m
    extra = dict({"solver.method": 4} if solver is None else solver)
    models = m.model_names()
    for name in m.variants:
        own = {}
        red = m.fmu_type(m.variants[name][0]).flexible
        if red is not None and "solver.max_step" not in extra:
            own["solver.max_step"] = flex_max_step(red)
        cs.add(name, folder / f"{models[name]}.fmu", {**m.parameters[name], **own, **extra})
        cs.aliases[name] = dict(m.ports[name])
    for body, port, comp in m.wrench_carriers:
        cs.connect(f"{body}.{port}", f"{comp}.P")
    for joint in m.folded.values():  # its effort is the law's, computed inside its FMU
        cs.set_input(f"{joint}.joint.tau", 0.0)
    for a, b in system.connections:
        if {a.split(".", 1)[0], b.split(".", 1)[0]} & set(m.folded):
            continue  # inside the joint's FMU
        pa, pb = system.port(a), system.port(b)
        if {pa.kind, pb.kind} == {"child", "parent"}:
            child, parent = (a, b) if pa.kind == "child" else (b, a)
            cs.connect(m.fmu_ref(child), m.fmu_ref(parent))
            continue
        out, inp = (a, b) if pa.kind == "signal_out" else (b, a)
        ob = out.split(".", 1)[0]
        if ob in m.constants:
            cs.set_input(m.fmu_ref(inp), m.constants[ob])
        else:
            cs.connect(m.fmu_ref(out), m.fmu_ref(inp))
    return cs


# -- recording the engine's signals -----------------------------------------------------------


@dataclass
class _Column:
    label: str
    refs: list[str]  # FMU variables read
    value: Callable[[np.ndarray], float]


def _signal_columns(cs, alias: str, name: str) -> list[_Column]:
    """Columns recording the engine signal ``name`` (as ``Engine.simulate`` names them)."""
    m: SystemMapping = cs.system_mapping
    mm = _INDEX.match(name)
    base, index = (mm.group(1), int(mm.group(2))) if mm else (name, None)
    if "." not in base:
        raise FromSystemError(f"cannot record {name!r}: signals read 'block.signal'")
    block, sig = base.split(".", 1)
    b = m.system.blocks.get(block)
    if b is None:
        raise FromSystemError(f"cannot record {name!r}: no block '{block}'")

    def expand(size: int, make) -> list[_Column]:
        if index is not None:
            if not 1 <= index <= size:
                raise FromSystemError(f"cannot record {name!r}: index out of 1..{size}")
            return [make(alias, index - 1)]
        if size == 1:
            return [make(alias, 0)]
        return [make(f"{alias}[{k + 1}]", k) for k in range(size)]

    if block in m.folded:
        if sig != "m":
            raise FromSystemError(
                f"cannot record {name!r} from the FMUs: the joint law '{block}' is computed "
                f"inside the FMU of its joint '{m.folded[block]}' (its law.* parameters), "
                "which does not output its effort"
            )
        return _signal_columns(cs, alias, f"{m.folded[block]}.joint.m"
                               + (f"[{index}]" if index is not None else ""))  # fmt: skip
    if block in m.constants:
        val = m.constants[block]
        return expand(val.size, lambda lab, k: _Column(lab, [], lambda v, k=k: float(val[k])))
    port = b.ports.get(sig)
    if port is not None and port.kind == "signal_in" and sig not in m.ports[block]:
        s = m.system.source(base)  # recorded at its source, as the engine does
        return _signal_columns(cs, alias, s + (f"[{index}]" if index is not None else ""))
    body_m = [f"{block}.body.m[{i}]" for i in range(1, 19)]
    if sig == "position" and isinstance(b, (BodyBlock, Ground)):
        # [IP]_{R_i} = P_{b/i}(Θ) [IP]_{R_a}: the FMU's motion vector is projected in R_a
        return expand(
            3,
            lambda lab, k: _Column(
                lab, body_m, lambda v, k=k: float((dcm_from_euler(v[15:18]) @ v[12:15])[k])
            ),
        )
    derived = {"euler": (15, 3), "twist": (6, 6), "acc": (0, 6)}
    if sig in derived and isinstance(b, (BodyBlock, Ground)):
        o, size = derived[sig]
        return expand(size, lambda lab, k: _Column(lab, [body_m[o + k]], lambda v: float(v[0])))
    ref = m.fmu_ref(base)
    comp, var = ref.split(".", 1)
    c = cs.components[comp]
    try:
        names = cs._expand_var(c, var, None, name, "record ")
    except CosimError as exc:
        raise FromSystemError(
            f"cannot record {name!r} from the FMUs: {exc}. The FMUs give the motion vectors "
            "and wrenches of every port, joint motions and efforts, body.m (position, euler, "
            "twist, acc) and the states (state.*); energies, momenta and centres of mass are "
            "engine-only signals"
        ) from None
    return expand(len(names), lambda lab, k: _Column(lab, [f"{comp}.{names[k]}"],
                                                     lambda v: float(v[0])))  # fmt: skip


def record_plan(cs, record: Sequence[str] | Mapping[str, str]):
    """(FMU variables to record, a function turning a CosimResult into a SimulationResult with
    the engine's columns) for engine-style ``record``."""
    from ..assembly.engine import SimulationResult

    items = list(record.items()) if isinstance(record, Mapping) else [(r, r) for r in record]
    if not items:
        raise FromSystemError("nothing to record: give signal names (Engine.signal_names())")
    cols: list[_Column] = []
    for alias, name in items:
        cols += _signal_columns(cs, alias, name)
    refs: list[str] = []
    for c in cols:
        refs += [r for r in c.refs if r not in refs]

    def convert(res) -> SimulationResult:
        out = SimulationResult([c.label for c in cols])
        data = {r: res[r] for r in refs}
        for k, t in enumerate(res["time"]):
            out.append(float(t), [c.value(np.array([data[r][k] for r in c.refs]))
                                  for c in cols])  # fmt: skip
        return out

    return refs, convert


class StiffCouplingWarning(UserWarning):
    """A flexible block's FMU co-simulated, coupled to other moving FMUs, at a communication
    step too long for its modes (docs/cosim.md)."""


#: h ω_max above which a coupled flexible block's co-simulation is warned about: measured
#: (docs/cosim.md, a rigid link at a flexible strip's tip), the coupling error is 1e-5 rad at
#: h ω_max = 0.36 and 3e-3 rad at 1.4, where a deflected strip's run diverges
STIFF_COUPLING = 0.5


def _warn_stiff(m: SystemMapping, step: float) -> None:
    """Warn (:class:`StiffCouplingWarning`) of each flexible block of ``m`` coupled to other
    moving FMUs whose highest eigenfrequency the communication step ``step`` (s) does not
    resolve (h ω_max > :data:`STIFF_COUPLING`)."""
    import warnings

    for name, w in m.stiff.items():
        if step * w > STIFF_COUPLING:
            warnings.warn(
                f"block '{name}': its flexible part's fastest mode ({w:.4g} rad/s) is coupled to "
                f"other FMUs at a communication step of {step:g} s (h ω = {step * w:.2g} > "
                f"{STIFF_COUPLING:g}): expect coupling errors or a diverging run; take a step of "
                f"at most {STIFF_COUPLING / w:.2g} s, the master's model-exchange mode "
                "(mode='me'), or the whole-model FMU (titopfmu export --fmu)",
                StiffCouplingWarning, stacklevel=3)  # fmt: skip


def simulate_system(cs, stop_time: float, step: float = 1e-3, *,
                    record: Sequence[str] | Mapping[str, str] = (), **options):  # fmt: skip
    """Co-simulate ``cs`` (from :func:`from_system`) and record engine signals: returns an
    :class:`~titopfmu.assembly.engine.SimulationResult` with the columns ``Engine.simulate``
    gives for the same ``record`` (positions in R_i from the FMUs' motion vectors).
    ``options`` go to :meth:`CoSimulation.simulate`. A run-time failure raises a CosimError,
    a Ctrl-C a :class:`~titopfmu.assembly.engine.RunInterrupted`, whose ``result`` is converted
    too."""
    m = getattr(cs, "system_mapping", None)
    if m is not None and options.get("mode", "cs") == "cs":
        _warn_stiff(m, step)
    refs, convert = record_plan(cs, record)
    try:
        res = cs.simulate(stop_time, step, record=refs, **options)
    except (CosimError, RunInterrupted) as exc:
        if getattr(exc, "result", None) is not None:
            exc.result = convert(exc.result)
        raise
    out = convert(res)
    out.n_evaluations = cs.stats.fmu_calls
    return out


__all__ = [
    "FMU_TYPE_OF", "FromSystemError", "STIFF_COUPLING", "StiffCouplingWarning", "SystemMapping",
    "block_parameters", "flex_max_step",
    "own_laws",
    "populate", "record_plan", "simulate_system", "system_mapping",
]  # fmt: skip
