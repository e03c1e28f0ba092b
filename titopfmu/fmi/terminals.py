"""Ports that other tools recognise: FMI 3.0 terminals and the OSP-IS model description.

A **TITOP port** of an FMU is a motion vector ``X.m`` (18) and a wrench ``X.W`` (6) that travel
in opposite directions (:mod:`titopfmu.fmi.ports` gives their components):

* a **parent** port (``P`` of a body, ``left``/``right`` of a loop closure, the boundary port of a
  model FMU hanging from another model) takes the motion vector in and gives the wrench out: it
  plugs into a child port of the block it hangs from;
* a **child** port (``C1``, ``C2``... of a body or a ground) gives the motion vector out and takes
  the wrench in.

In both, ``X.W`` is the wrench W_{A/B,X} = [F (N), T (N.m) about the port point] applied by the
child side A on the parent side B, projected in the parent side's frame (R_b of a parent port,
R_a of a child port; they are the same frame across a connection), and ``X.m`` is the motion
vector m = [v̇ (m/s2), ω̇ (rad/s2), v (m/s), ω (rad/s), IP (m), Θ = φ, θ, ψ (rad, 3-2-1)] of the
port point in the same frame (Θ: the attitude of that frame in R_i). A parent's ``Cj.m[i]``
connects to the child's ``P.m[i]``, the child's ``P.W[i]`` to the parent's ``Cj.W[i]``.

This module writes, from an FMU's variables (no compiler, no FMU needed):

* :func:`terminals_and_icons_xml`: ``terminalsAndIcons/terminalsAndIcons.xml`` of an FMI 3.0
  FMU, one ``<Terminal>`` per TITOP port (terminal kind :data:`TERMINAL_KIND`, matching rule
  ``plug``: members ``m`` and ``W`` matched by name, all of them required), the frame, point and
  sign convention in a ``titopfmu`` annotation;
* :func:`osp_model_description_xml`: the Open Simulation Platform Interface Specification
  (OSP-IS 1.0) model description of an FMI 2.0 FMU, ``<modelName>_OspModelDescription.xml``
  beside the ``.fmu`` (where libcosim looks for it): per TITOP port a ``Generic`` group of all
  24 variables (one OSP ``VariableGroupConnection`` couples two ports), the OSP-IS
  ``LinearMechanicalPort`` (Force + LinearVelocity) and ``AngularMechanicalPort`` (Torque +
  AngularVelocity), and the rest of the motion vector as ``LinearAcceleration``,
  ``AngularAcceleration``, ``LinearDisplacement`` and ``AngularDisplacement``; every other input
  and output in a ``Generic`` group named after it (``ext.W`` also as ``Force`` + ``Torque``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from xml.etree.ElementTree import Comment, Element, SubElement, indent, tostring

from .ports import UNIT_DEFINITIONS

#: where the FMI 3.0 terminals go inside the FMU archive
TERMINALS_PATH = "terminalsAndIcons/terminalsAndIcons.xml"
#: the terminal kind of a TITOP port (FMI 3.0: vendor-specific kinds start with ``_toolName``)
TERMINAL_KIND = "_titopfmu_TitopPort"
#: the ``type`` of titopfmu's annotations (as in the SSP files titopfmu writes)
ANNOTATION_TYPE = "titopfmu"
#: OSP-IS model description namespace (the schema OspModelDescription-1.0.1.xsd of
#: open-simulation-platform/osp-validator; its ``version`` attribute is fixed to "1.0")
OSP_NAMESPACE = "https://open-simulation-platform.com/OspModelDescription/1.0.1"

MOTION_SIZE, WRENCH_SIZE = 18, 6
#: variable prefixes that are never TITOP ports: the joint's signals, the external wrench, the
#: body's own motion and required wrench (imposed-motion body, ground)
NOT_PORTS = ("body", "ext", "joint")
#: FMI causality codes of :class:`titopfmu.fmi.native.generate.Variable` (C_INPUT, C_OUTPUT)
_CAUSALITY_CODES = {1: "input", 2: "output"}

#: the motion vector by runs of 3: (first 0-based index, symbol, what, unit, OSP-IS group, suffix
#: of the OSP group name); the Euler angles are not components along the frame's axes
MOTION_LAYOUT = (
    (0, "v̇", "linear acceleration of the port point", "m/s2", "LinearAcceleration",
     "acceleration"),
    (3, "ω̇", "angular acceleration", "rad/s2", "AngularAcceleration", "angular_acceleration"),
    (6, "v", "linear velocity of the port point", "m/s", "LinearVelocity", "velocity"),
    (9, "ω", "angular velocity", "rad/s", "AngularVelocity", "angular_velocity"),
    (12, "IP", "position of the port point from the inertial origin I", "m",
     "LinearDisplacement", "position"),
    (15, "Θ", "3-2-1 Euler angles φ, θ, ψ of the frame in R_i", "rad", "AngularDisplacement",
     "attitude"),
)  # fmt: skip
WRENCH_LAYOUT = (
    (0, "F", "force", "N", "Force", "force"),
    (3, "T", "torque about the port point", "N.m", "Torque", "torque"),
)
#: the order of the OSP-IS VariableGroups elements this module writes (the schema's sequence)
_OSP_ORDER = ("Generic", "Force", "Torque", "LinearVelocity", "AngularVelocity",
              "LinearDisplacement", "AngularDisplacement", "LinearAcceleration",
              "AngularAcceleration", "LinearMechanicalPort", "AngularMechanicalPort")  # fmt: skip

SIGN_CONVENTION = (
    "W = W_{A/B,point} = [F, T about the port point]: the wrench applied by the child side A on "
    "the parent side B, projected in the frame of the port; both ends of a connection carry the "
    "same value (no sign change across a connection)"
)


@dataclass(frozen=True)
class TitopPort:
    """One TITOP port of an FMU.

    ``motion``/``wrench``: the FMI 2.0 scalar names (``P.m[1]`` .. ``P.m[18]``,
    ``P.W[1]`` .. ``P.W[6]``); ``motion_array``/``wrench_array``: the FMI 3.0 array variables
    (``P.m``, ``P.W``). ``kind``: "parent" (motion in, wrench out) or "child" (motion out,
    wrench in). ``frame``/``point``: in words, the frame both vectors are projected in and the
    point they are taken at.
    """

    name: str
    kind: str
    motion: tuple[str, ...]
    wrench: tuple[str, ...]
    frame: str
    point: str

    def __post_init__(self) -> None:
        if self.kind not in ("parent", "child"):
            raise ValueError(f"TITOP port {self.name!r}: kind must be 'parent' or 'child', "
                             f"not {self.kind!r}")  # fmt: skip
        if len(self.motion) != MOTION_SIZE or len(self.wrench) != WRENCH_SIZE:
            raise ValueError(f"TITOP port {self.name!r}: {len(self.motion)} motion and "
                             f"{len(self.wrench)} wrench variables, not 18 and 6")  # fmt: skip

    @property
    def motion_array(self) -> str:
        return f"{self.name}.m"

    @property
    def wrench_array(self) -> str:
        return f"{self.name}.W"

    @property
    def motion_direction(self) -> str:
        """Direction of the motion vector: "in" or "out"."""
        return "in" if self.kind == "parent" else "out"

    @property
    def wrench_direction(self) -> str:
        return "out" if self.kind == "parent" else "in"

    @property
    def motion_causality(self) -> str:
        """FMI causality of the motion vector: "input" or "output"."""
        return "input" if self.kind == "parent" else "output"

    @property
    def wrench_causality(self) -> str:
        return "output" if self.kind == "parent" else "input"

    @property
    def description(self) -> str:
        if self.kind == "parent":
            role = ("TITOP parent port: plugs into a child port of the block this one hangs "
                    "from (motion vector in, wrench out)")  # fmt: skip
        else:
            role = ("TITOP child port: a block hangs from it by its parent port (motion vector "
                    "out, wrench in)")  # fmt: skip
        return f"{role}; frame: {self.frame}; point: {self.point}"


def causality(variable) -> str:
    """FMI causality name of ``variable`` (``causality`` a name or a code of generate.py)."""
    c = variable.causality
    return _CAUSALITY_CODES.get(c, "") if isinstance(c, int) else str(c)


def _frame_and_point(name: str, kind: str) -> tuple[str, str]:
    if name == "P":
        return ("parent frame R_b (the parent body's frame at the joint)",
                "joint point P, where the body hangs from its parent")  # fmt: skip
    if re.fullmatch(r"C\d+", name):
        return ("body frame R_a", f"child port point {name} (parameter {name}.point, from P, "
                                  "in R_a)")  # fmt: skip
    if name in ("left", "right"):
        return (f"frame of the body on the {name} side of the cut (the frame of the child port "
                "it is connected to)", f"the cut point on the {name} side")  # fmt: skip
    if kind == "parent":
        return (f"frame of the block that port {name} hangs from (its child port's frame)",
                f"the point of port {name}")  # fmt: skip
    return (f"frame of this model's body at port {name}", f"the point of port {name}")


def titop_ports(variables: Iterable) -> list[TitopPort]:
    """The TITOP ports among ``variables`` (objects with ``name`` and ``causality``, e.g.
    :attr:`titopfmu.fmi.native.generate.NativeFmu.variables`, the FMI 2.0 scalars of both FMI
    versions), in the order of their first variable.

    A port ``X`` is ``X.m[1..18]`` all of one causality and ``X.W[1..6]`` all of the other;
    ``body``, ``ext`` and ``joint`` (:data:`NOT_PORTS`) never are. Frame and point are
    described in words from the port's name (``P``, ``Cj``, ``left``/``right``, else generic);
    :func:`dataclasses.replace` sets others.
    """
    found: dict[str, dict[str, dict[int, str]]] = {}
    order: list[str] = []
    for v in variables:
        m = re.fullmatch(r"(.+)\.(m|W)\[(\d+)\]", v.name)
        if m is None or m.group(1) in NOT_PORTS:
            continue
        port, what, i = m.group(1), m.group(2), int(m.group(3))
        if port not in found:
            found[port] = {"m": {}, "W": {}}
            order.append(port)
        found[port][what][i] = causality(v)
    ports = []
    for port in order:
        m, w = found[port]["m"], found[port]["W"]
        if sorted(m) != list(range(1, MOTION_SIZE + 1)) or sorted(w) != list(
            range(1, WRENCH_SIZE + 1)
        ):
            continue  # e.g. a motion vector only (an output of the body's motion)
        cm, cw = set(m.values()), set(w.values())
        if cm == {"input"} and cw == {"output"}:
            kind = "parent"
        elif cm == {"output"} and cw == {"input"}:
            kind = "child"
        else:
            continue
        frame, point = _frame_and_point(port, kind)
        ports.append(TitopPort(
            port, kind,
            tuple(f"{port}.m[{i}]" for i in range(1, MOTION_SIZE + 1)),
            tuple(f"{port}.W[{i}]" for i in range(1, WRENCH_SIZE + 1)),
            frame, point,
        ))  # fmt: skip
    return ports


def _layout(layout, frame: str) -> str:
    runs = "; ".join(f"[{i0 + 1}..{i0 + 3}] {sym}: {what} ({unit})"
                     for i0, sym, what, unit, _group, _suffix in layout)  # fmt: skip
    if layout is MOTION_LAYOUT:
        return f"{runs}; projected in the {frame}, except Θ (the attitude of that frame in R_i)"
    return f"{runs}; projected in the {frame}"


def _xml(root: Element) -> bytes:
    indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + tostring(root, encoding="utf-8") + b"\n"


def terminals_and_icons_xml(ports: Sequence[TitopPort], fmi3_names: Iterable[str]) -> bytes:
    """``terminalsAndIcons/terminalsAndIcons.xml`` (FMI 3.0) for ``ports``: one ``<Terminal>``
    per port, named as the port, ``matchingRule="plug"``, ``terminalKind`` :data:`TERMINAL_KIND`,
    members ``m`` (the motion vector) and ``W`` (the wrench), ``variableKind="signal"``.

    ``fmi3_names``: the names of the FMU's FMI 3.0 variables (e.g. ``[a.name for a in
    fmu.arrays]``). A member is the array variable (``P.m``) when it is one of them, else the
    FMI 2.0-style scalars (``P.m[1]``.., members ``m[1]``..); a member that is neither raises
    ValueError. A port's frame, point, the layout of its vectors and the sign convention are in
    an ``<Annotation type="titopfmu">`` of the terminal. Without ports the file has no
    ``<Terminals>`` (valid, but there is no reason to write it).
    """
    names = set(fmi3_names)
    root = Element("fmiTerminalsAndIcons", fmiVersion="3.0")
    root.append(Comment(" TITOP ports of the FMU, by titopfmu (titopfmu/fmi/terminals.py) "))
    terminals = SubElement(root, "Terminals") if ports else None  # never empty (the schema)
    for p in ports:
        t = SubElement(terminals, "Terminal", name=p.name, matchingRule="plug",
                       terminalKind=TERMINAL_KIND, description=p.description)  # fmt: skip
        for member, array, scalars in (("m", p.motion_array, p.motion),
                                       ("W", p.wrench_array, p.wrench)):  # fmt: skip
            if array in names:
                pairs = [(array, member)]
            elif all(s in names for s in scalars):
                pairs = [(s, member + s[len(array) :]) for s in scalars]
            else:
                raise ValueError(f"TITOP port {p.name!r}: the FMU has no variable {array!r} "
                                 f"(nor {scalars[0]!r}..{scalars[-1]!r})")  # fmt: skip
            for variable, member_name in pairs:
                SubElement(t, "TerminalMemberVariable", variableName=variable,
                           memberName=member_name, variableKind="signal")  # fmt: skip
        ann = SubElement(SubElement(t, "Annotations"), "Annotation", type=ANNOTATION_TYPE)
        port = SubElement(ann, "TitopPort", role=p.kind, frame=p.frame, point=p.point)
        SubElement(port, "Member", name="m", quantity="motion vector", size=str(MOTION_SIZE),
                   causality=p.motion_causality,
                   layout=_layout(MOTION_LAYOUT, p.frame))  # fmt: skip
        SubElement(port, "Member", name="W", quantity="wrench", size=str(WRENCH_SIZE),
                   causality=p.wrench_causality, layout=_layout(WRENCH_LAYOUT, p.frame),
                   signConvention=SIGN_CONVENTION)  # fmt: skip
        SubElement(port, "Connection").text = (
            "a parent port (motion in, wrench out) connects to a child port (motion out, wrench "
            "in): member m to m, W to W, element by element"
        )
    return _xml(root)


def osp_file_name(model_name: str) -> str:
    """The OSP-IS model description's file name, beside ``<model_name>.fmu`` (libcosim reads
    ``<modelName>_OspModelDescription.xml`` from the FMU's directory)."""
    return f"{model_name}_OspModelDescription.xml"


def _base(name: str) -> str:
    return name.split("[", 1)[0]


def osp_model_description_xml(model_name: str, variables: Sequence,
                              ports: Sequence[TitopPort]) -> bytes:  # fmt: skip
    """The OSP-IS model description (``OspModelDescription``, schema 1.0.1) of the FMI 2.0 FMU
    ``model_name`` with FMI 2.0 scalar ``variables`` (``name``, ``causality``, ``unit``) and
    TITOP ``ports`` (from :func:`titop_ports`).

    Groups (names unique; the OSP-IS types where the physics has one):

    * per port ``X``: ``Generic`` ``X`` (the 24 variables, m then W: one libcosim
      ``VariableGroupConnection`` between a parent port and a child port connects the whole
      port), ``LinearMechanicalPort`` ``X.linear`` = ``Force`` ``X.force`` (W[1..3]) +
      ``LinearVelocity`` ``X.velocity`` (m[7..9]), ``AngularMechanicalPort`` ``X.angular`` =
      ``Torque`` ``X.torque`` (W[4..6]) + ``AngularVelocity`` ``X.angular_velocity`` (m[10..12]),
      ``LinearAcceleration`` ``X.acceleration`` (m[1..3]), ``AngularAcceleration``
      ``X.angular_acceleration`` (m[4..6]), ``LinearDisplacement`` ``X.position`` (m[13..15]),
      ``AngularDisplacement`` ``X.attitude`` (m[16..18], Euler angles: no axis);
    * every other input and output ``Y`` (``Y`` or ``Y[i]``): ``Generic`` ``Y``; the external
      wrench ``ext.W`` also as ``Force`` ``ext.force`` + ``Torque`` ``ext.torque``.

    Vector components carry ``axis`` x, y, z; every reference carries the variable's unit,
    defined in ``<UnitDefinitions>`` (the FMU's own units, so the file stands alone). A variable
    referenced by two groups has the same unit and axis in both.
    """
    by_name = {v.name: v for v in variables}
    for p in ports:
        for n in p.motion + p.wrench:
            if n not in by_name:
                raise ValueError(f"{model_name}: TITOP port {p.name!r} names {n!r}, which is not "
                                 "a variable of the FMU")  # fmt: skip
        bad = [n for n in p.motion if causality(by_name[n]) != p.motion_causality]
        bad += [n for n in p.wrench if causality(by_name[n]) != p.wrench_causality]
        if bad:
            raise ValueError(f"{model_name}: TITOP port {p.name!r}: {bad[0]!r} has causality "
                             f"{causality(by_name[bad[0]])!r}")  # fmt: skip
    # the unit and axis of each referenced variable, fixed once
    unit: dict[str, str] = {}
    axis: dict[str, str] = {}
    for p in ports:
        for names, layout in ((p.motion, MOTION_LAYOUT), (p.wrench, WRENCH_LAYOUT)):
            for i0, _sym, _what, u, group, _suffix in layout:
                for k in range(3):
                    unit[names[i0 + k]] = u
                    if group != "AngularDisplacement":
                        axis[names[i0 + k]] = "xyz"[k]
    in_ports = set(unit)
    rest: dict[str, list[str]] = {}
    for v in variables:
        if v.name in in_ports or causality(v) not in ("input", "output"):
            continue
        rest.setdefault(_base(v.name), []).append(v.name)
        u = getattr(v, "unit", "") or ""
        if u in UNIT_DEFINITIONS:
            unit[v.name] = u
    ext = [f"ext.W[{i}]" for i in range(1, 7)]
    has_ext = rest.get("ext.W") == ext
    if has_ext:
        for k, n in enumerate(ext):
            axis[n] = "xyz"[k % 3]

    groups: dict[str, list[Element]] = {t: [] for t in _OSP_ORDER}
    seen: set[str] = set()

    def group(tag: str, name: str, refs: Sequence[str] = (), parent: Element | None = None):
        if name in seen:
            raise ValueError(f"{model_name}: two OSP variable groups named {name!r}")
        seen.add(name)
        g = Element(tag, name=name)
        for r in refs:
            attrs = {"ref": r}
            if r in unit:
                attrs["unit"] = unit[r]
            if r in axis:
                attrs["axis"] = axis[r]
            SubElement(g, "Variable", attrs)
        if parent is None:
            groups[tag].append(g)
        else:
            parent.append(g)
        return g

    def run(names: Sequence[str], i0: int) -> list[str]:
        return list(names[i0 : i0 + 3])

    for p in ports:
        group("Generic", p.name, p.motion + p.wrench)
        lin = group("LinearMechanicalPort", f"{p.name}.linear")
        group("Force", f"{p.name}.force", run(p.wrench, 0), lin)
        group("LinearVelocity", f"{p.name}.velocity", run(p.motion, 6), lin)
        ang = group("AngularMechanicalPort", f"{p.name}.angular")
        group("Torque", f"{p.name}.torque", run(p.wrench, 3), ang)
        group("AngularVelocity", f"{p.name}.angular_velocity", run(p.motion, 9), ang)
        for i0, _sym, _what, _unit, tag, suffix in MOTION_LAYOUT:
            if tag not in ("LinearVelocity", "AngularVelocity"):
                group(tag, f"{p.name}.{suffix}", run(p.motion, i0))
    for base, names in rest.items():
        group("Generic", base, names)
    if has_ext:
        group("Force", "ext.force", ext[:3])
        group("Torque", "ext.torque", ext[3:])

    root = Element("OspModelDescription", xmlns=OSP_NAMESPACE, version="1.0")
    root.append(Comment(
        f" OSP-IS model description of {model_name}, written by titopfmu "
        "(titopfmu/fmi/terminals.py). Couple two TITOP ports with one VariableGroupConnection "
        "of their Generic groups (e.g. a parent's C1 and a child's P); the mechanical-port "
        "groups name the physics but carry only the velocities, not the whole motion vector. "
    ))  # fmt: skip
    used = sorted({u for u in unit.values()}, key=list(UNIT_DEFINITIONS).index)
    if used:
        units = SubElement(root, "UnitDefinitions")
        for u in used:
            SubElement(SubElement(units, "Unit", name=u), "BaseUnit",
                       {k: str(e) for k, e in UNIT_DEFINITIONS[u].items()})  # fmt: skip
    vg = SubElement(root, "VariableGroups")
    for tag in _OSP_ORDER:
        vg.extend(groups[tag])
    return _xml(root)
