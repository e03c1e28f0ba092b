"""URDF import: a robot description as a titopfmu :class:`~titopfmu.System`.

>>> system = titopfmu.import_urdf("ur5_robot.urdf")                     # fixed base
>>> system = titopfmu.import_urdf("solo12.urdf", floating_base=True)    # free-flying base

The URDF is parsed by Pinocchio (``pinocchio.buildModelFromUrdf`` / ``buildModelFromXML``, i.e.
ROS's urdfdom): no hand-written XML reader. Pinocchio also merges every link hanging from a
``fixed`` joint into its parent (inertias added at the right place, frames kept), which is what
titopfmu needs: a body block per moving joint. The mapping, joint by joint:

* ``revolute`` and ``continuous`` -> :class:`~titopfmu.RevoluteBody` (axis in the joint frame,
  ``P_a0b`` the rotation of the joint origin);
* ``prismatic`` -> :class:`~titopfmu.PrismaticBody` (``P_ab`` the rotation of the origin);
* ``floating`` -> :class:`~titopfmu.FreeBody`; with ``floating_base=True`` the root link is a
  free-flying :class:`~titopfmu.RigidBody`, otherwise the root is a :class:`~titopfmu.Ground`;
* ``fixed`` -> merged into the parent body (by Pinocchio);
* ``planar`` -> an error;
* a ``<mimic>`` on a revolute, continuous or prismatic joint -> a :class:`~titopfmu.JointMimic`
  block (``<follower link>_mimic``) reading the leader's ``joint.m`` and feeding the follower's
  ``joint.tau``.

Each body block is named after its (child) link, each child port after the URDF joint that
hangs from it; the body's reference point P and frame are the joint frame, its ``com`` and
``inertia`` those of the link's ``<inertial>`` (plus merged fixed links) in that frame. Each
joint effort ``joint.tau`` is fed by a block named ``<link>_tau``: a
:class:`~titopfmu.JointSpringDamper` law reading the same joint's motion where the joint has
``<dynamics damping friction>`` or position limits, a ``Constant`` (0) otherwise: viscous damping
``-d q̇``, Coulomb friction ``-f_c tanh(q̇ / v_c)`` regularised over v_c = 1e-3 rad/s (m/s), and
the ``<limit lower upper>`` of a revolute or prismatic joint as one-sided stops, stiff springs
``J / tc²`` with damping ``2 J / tc`` bounded by the spring's effort, J the joint's apparent
inertia at the initial configuration and tc = :data:`STOP_TIME_CONSTANT` (2 ms, stiff: a
steady acceleration a into a stop penetrates it by ``a tc²``). The initial joint coordinates
are zero, or the nearest limit of a joint whose limits exclude zero. The URDF joint of every
block is kept in ``system.urdf_joints`` (URDF joint name -> block name).

A ``<mimic joint multiplier offset>`` element on a moving joint makes it follow its leader,
``q = multiplier x q_leader + offset``, as Pinocchio's ``buildModelFromUrdf(..., mimic=True)``
does: a :class:`~titopfmu.JointMimic` block, the constraint enforced exactly in the core (the
follower's inertia reflected into the leader's dynamics). A leader that does not exist, is fixed,
is of another type (revolute and continuous are one type), or is itself a follower (a chain, a
cycle) is refused (:class:`UrdfError` naming the file, the line and the joint); the follower's
own ``<dynamics>`` and ``<limit>`` are listed as not imported. A ``<transmission>`` whose
``<actuator>`` gives ``<motorInertia>`` or ``<rotorInertia>`` I_r with its
``<mechanicalReduction>`` n adds I_r n^2 to its joint's ``armature`` (ROS's simple transmission:
the rotor turns at n q_dot). Everything else the import leaves
out is listed in one :class:`UrdfWarning` per import, element by element with its lines (its
``unimported`` attribute holds the list): velocity and effort limits, transmissions, collision
geometry (contacts are not modelled), simulator extensions and any element or attribute
the import does not know. :data:`URDF_RULES` is the table of every element and attribute, with
its status (imported, not imported, refused, no effect); docs/model-files.md shows it. Display
geometry is not read (a missing mesh file is no problem).
"""

from __future__ import annotations

import re
import warnings
import xml.etree.ElementTree as ET
import xml.parsers.expat as expat
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from .assembly.system import System
from .blocks import (
    Constant,
    FreeBody,
    Ground,
    JointMimic,
    JointSpringDamper,
    PrismaticBody,
    RevoluteBody,
    RigidBody,
    SphericalBody,
    TitopError,
)
from .blocks.base import SingularJointError

DEFAULT_GRAVITY = (0.0, 0.0, -9.81)


class DescriptionError(TitopError):
    """A robot description (URDF, MJCF) cannot be imported. ``file``, ``element`` and ``line``
    say where (``line`` is None when it cannot be located)."""

    def __init__(
        self, message: str, file: str, element: str | None = None, line: int | None = None
    ) -> None:
        self.file, self.element, self.line, self.reason = file, element, line, message
        where = file if line is None else f"{file}:{line}"
        super().__init__(f"{where}: {element + ': ' if element else ''}{message}")


class UrdfError(DescriptionError):
    """A URDF cannot be imported (see :class:`DescriptionError`)."""


class UrdfWarning(UserWarning):
    """Something in the URDF is not imported (limits, friction, transmissions, ...). The message
    lists every element and attribute left out, with its lines; ``unimported`` holds them as
    :class:`Unimported` records."""

    unimported: list[Unimported]


def _pinocchio():
    try:
        import pinocchio as pin
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "titopfmu.import_urdf parses URDF with Pinocchio, an optional dependency: install it "
            "with `pip install pin` (PyPI name 'pin', imported as 'pinocchio') or "
            "`pip install titopfmu[urdf]`"
        ) from exc
    return pin


def _line_of(text: str | None, tag: str, name: str) -> int | None:
    """Line of ``<tag ... name="name"`` in the URDF text (to point at it in errors)."""
    if not text:
        return None
    m = re.search(rf"<{tag}\b[^>]*\bname\s*=\s*[\"']{re.escape(name)}[\"']", text)
    return None if m is None else text.count("\n", 0, m.start()) + 1


def _block_name(name: str, taken: set[str]) -> str:
    """A block or port name from a URDF name: letters, digits and '_' only, unique."""
    base = re.sub(r"\W", "_", name) or "link"
    if base[0].isdigit():
        base = "_" + base
    out, k = base, 2
    while out in taken:
        out, k = f"{base}_{k}", k + 1
    taken.add(out)
    return out


# -- what a description file holds and what the import makes of it ---------------------------

#: Statuses of an element or attribute of a robot description (:data:`URDF_RULES`,
#: ``titopfmu.mjcf.MJCF_RULES``). Only NOT_IMPORTED ones are listed in the import's warning:
#: IMPORTED and APPROXIMATE are read (APPROXIMATE says how in its note), REFUSED raise an error
#: naming the element and its line, NO_EFFECT are not read because nothing in the motion depends
#: on them (names of display material, numerical settings of another simulator, ...).
IMPORTED = "imported"
APPROXIMATE = "imported approximately"
NOT_IMPORTED = "not imported"
REFUSED = "refused"
NO_EFFECT = "no effect on the motion"


@dataclass(frozen=True)
class Rule:
    """What the import makes of one element or attribute: a status and why. ``nothing_when``:
    values of a NOT_IMPORTED attribute that leave nothing out (a zero friction)."""

    status: str
    note: str = ""
    nothing_when: tuple[str, ...] = ()


@dataclass(frozen=True)
class Unimported:
    """An element or attribute of a file that the import leaves out: ``what`` (``<limit lower
    upper>``), ``note`` (why, what it would do), ``line`` (None: not located)."""

    what: str
    note: str
    line: int | None


_ZERO = ("0",)  # any number equal to zero


def _leaves_nothing(value: str, rule: Rule) -> bool:
    """Whether an attribute's value leaves nothing to import (a zero friction)."""
    v = value.strip().lower()
    if v in rule.nothing_when:
        return True
    if rule.nothing_when is _ZERO:
        try:
            return float(v) == 0.0
        except ValueError:
            return False
    return False


#: Every URDF element (``parent/tag`` or ``tag``) and attribute (``element@attribute``) with
#: what the import makes of it; an element or attribute not in the table is NOT_IMPORTED
#: (listed). A later import of limits or of rotor inertia changes the status here, nothing else.
URDF_RULES: dict[str, Rule] = {
    "robot": Rule(IMPORTED, "the robot"),
    "robot@name": Rule(IMPORTED, "the System's name"),
    "robot@version": Rule(NO_EFFECT, "format version"),
    "link": Rule(IMPORTED, "a body block per moving joint, fixed links merged into it"),
    "link@name": Rule(IMPORTED, "names the body block"),
    "link/inertial": Rule(IMPORTED, "mass, centre of mass and inertia of the body"),
    "inertial/origin@xyz": Rule(IMPORTED, "centre of mass"),
    "inertial/origin@rpy": Rule(IMPORTED, "orientation of the inertia's axes"),
    "inertial/mass@value": Rule(IMPORTED, "mass (kg)"),
    **{
        f"inertial/inertia@{a}": Rule(IMPORTED, "inertia at the centre of mass (kg m^2)")
        for a in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    },
    "link/visual": Rule(NO_EFFECT, "display geometry (not read: a missing mesh is no problem)"),
    "link/collision": Rule(NOT_IMPORTED, "collision geometry: contacts are not modelled"),
    "link/contact": Rule(NOT_IMPORTED, "contact parameters (PyBullet): contacts are not modelled"),
    "robot/material": Rule(NO_EFFECT, "display colour"),
    "joint": Rule(IMPORTED, "a joint body block (revolute, continuous, prismatic, floating)"),
    "joint@name": Rule(IMPORTED, "names the parent's child port; system.urdf_joints"),
    "joint@type": Rule(
        IMPORTED, "revolute, continuous, prismatic, floating, fixed (planar refused)"
    ),
    "joint/origin@xyz": Rule(IMPORTED, "joint frame: the body's reference point"),
    "joint/origin@rpy": Rule(IMPORTED, "joint frame orientation"),
    "joint/parent@link": Rule(IMPORTED, "the tree"),
    "joint/child@link": Rule(IMPORTED, "the tree"),
    "joint/axis@xyz": Rule(IMPORTED, "joint axis"),
    "joint/dynamics@damping": Rule(
        IMPORTED,
        "viscous damping d: a JointSpringDamper law tau = -d q_dot feeds the joint's effort "
        "(on a floating joint: listed, the law is for 1-dof joints)",
    ),
    "joint/dynamics@friction": Rule(
        APPROXIMATE,
        "Coulomb friction f_c, regularised: the joint law's friction term -f_c tanh(q_dot / v_c), "
        "v_c = 1e-3 rad/s or m/s (JointSpringDamper friction_velocity)",
    ),
    **{
        f"joint/limit@{a}": Rule(
            APPROXIMATE,
            "position limits (revolute, prismatic; a continuous joint has none) as the joint "
            "law's one-sided stops: stiffness J / tc^2 and damping 2 J / tc (bounded by the "
            "stop's spring), J the joint's apparent inertia at the initial configuration, "
            "tc = 2 ms (a steady acceleration a into a stop penetrates it by a tc^2); a joint "
            "whose limits exclude 0 starts at the nearest one",
        )
        for a in ("lower", "upper")
    },
    "joint/limit@effort": Rule(
        NOT_IMPORTED, "effort and velocity limits: efforts come from the System's blocks, unbounded"
    ),
    "joint/limit@velocity": Rule(
        NOT_IMPORTED, "effort and velocity limits: efforts come from the System's blocks, unbounded"
    ),
    "joint/mimic": Rule(
        IMPORTED,
        "a JointMimic block: the follower's coordinate q = multiplier x q_leader + offset, its "
        "inertia reflected into the leader's dynamics (as Pinocchio's mimic=True); both joints "
        "revolute/continuous or both prismatic; a leader that is missing, fixed, of another "
        "type or itself a follower (a chain or a cycle) is refused; the follower's <dynamics> "
        "and <limit> are then listed (its motion is its leader's); on a fixed joint: no effect",
    ),
    "joint/mimic@joint": Rule(IMPORTED, "the leader joint"),
    "joint/mimic@multiplier": Rule(IMPORTED, "the multiplier (default 1)"),
    "joint/mimic@offset": Rule(IMPORTED, "the offset, rad or m (default 0)"),
    "joint/safety_controller": Rule(NOT_IMPORTED, "soft limits of a controller"),
    "joint/calibration": Rule(NO_EFFECT, "encoder reference positions"),
    "transmission": Rule(
        NOT_IMPORTED,
        "actuator description: without a rotor inertia it changes nothing in the motion "
        "(efforts come from the System's blocks) and is listed; one whose <actuator> gives "
        "<motorInertia> or <rotorInertia> is imported (below)",
    ),
    "actuator/mechanicalReduction": Rule(
        IMPORTED, "the reduction n (also <transmission><mechanicalReduction>; default 1)"
    ),
    "actuator/motorInertia": Rule(
        IMPORTED,
        "the rotor's inertia I_r (kg m^2, >= 0) reflected on the transmission's one joint as "
        "armature += I_r n^2 (the rotor's kinetic energy I_r (n q_dot)^2 / 2); on several "
        "joints (a differential): listed",
    ),
    "actuator/rotorInertia": Rule(IMPORTED, "as <motorInertia>"),
    "gazebo": Rule(NOT_IMPORTED, "simulator extension"),
}

#: joint types whose dynamics, limits and mimic have no effect (the joint does not move)
_FIXED = ("fixed",)


def rules_table(rules: dict[str, Rule]) -> str:
    """``rules`` as the Markdown table of docs/model-files.md: a row per element and per group
    of its attributes of one status and note (elements alone of one status and note share a
    row), in the table's order."""
    groups: dict[tuple, list[str]] = {}
    for key, rule in rules.items():
        element, _, attr = key.partition("@")
        tag = "".join(f"<{t}>" for t in element.split("/"))
        if attr:
            groups.setdefault((tag, rule.status, rule.note), []).append(attr)
        else:  # an element's own rule: one row with the others of its status and note
            groups.setdefault(("", rule.status, rule.note), []).append(tag)
    rows = ["| element | attributes | status | how, or why not |", "|---|---|---|---|"]
    for (tag, status, note), names in groups.items():
        note = re.sub(r"(<[\w/]+>)", r"`\1`", note)  # an element named in a note: code
        if tag:
            attrs = " ".join("any other" if a == "*" else f"`{a}`" for a in names)
            rows.append(f"| `{tag}` | {attrs} | {status} | {note} |")
        else:
            rows.append(f"| {', '.join(f'`{t}`' for t in names)} | | {status} | {note} |")
    rows.append("| any other element or attribute | | not imported | listed in the warning |")
    return "\n".join(rows)


def _parse_xml(text: str, file: str, error: type[DescriptionError]):
    """The element tree of ``text`` and ``line(element)``, its line number (expat, without
    namespace processing: a prefixed tag stays as written)."""
    parser = expat.ParserCreate()
    builder = ET.TreeBuilder()
    lines: dict[int, int] = {}

    def start(tag, attrs):
        lines[id(builder.start(tag, attrs))] = parser.CurrentLineNumber

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    try:
        parser.Parse(text, True)
        root = builder.close()
    except expat.ExpatError as exc:
        raise error(f"not well-formed XML: {expat.ErrorString(exc.code)} (line {exc.lineno}, "
                    f"column {exc.offset})", file, None, exc.lineno) from None  # fmt: skip
    except AssertionError:  # pragma: no cover - an empty document
        raise error("not well-formed XML: no element found", file) from None
    return root, lambda element: lines.get(id(element))


def _scan(root: ET.Element, line: Callable, rules: dict[str, Rule],
          skip: Callable[[ET.Element], bool] = lambda e: False) -> list[Unimported]:  # fmt: skip
    """What ``root``'s document holds that ``rules`` does not import (NOT_IMPORTED or unknown),
    in document order; ``skip(element)`` leaves an element and what it holds out of the scan
    (handled elsewhere)."""
    out: list[Unimported] = []
    # an element whose attributes have rules is read (its own rule may be left out)
    read = {k.split("@")[0] for k in rules if "@" in k}

    def rule_of(key: str) -> Rule | None:
        return rules.get(key) or (Rule(IMPORTED) if key in read else None)

    def visit(el: ET.Element, parent: str | None) -> None:
        tag = el.tag
        key = f"{parent}/{tag}"
        rule = rule_of(key)
        if rule is None:
            key = tag
            rule = rule_of(tag) or Rule(NOT_IMPORTED, "not read by the import")
        if skip(el) or rule.status in (NO_EFFECT, REFUSED):
            return
        if rule.status == NOT_IMPORTED:
            out.append(Unimported(f"<{tag}>", rule.note, line(el)))
            return
        left: dict[str, list[str]] = {}  # note -> attributes
        for attr, value in el.attrib.items():
            if attr == "xmlns" or attr.startswith("xmlns:"):
                continue  # a namespace declaration
            r = rules.get(f"{key}@{attr}") or rules.get(f"{key}@*")
            if r is None:
                r = Rule(NOT_IMPORTED, "attribute not read by the import")
            if r.status == NOT_IMPORTED and not _leaves_nothing(value, r):
                left.setdefault(r.note, []).append(attr)
        for note, attrs in left.items():
            out.append(Unimported(f"<{tag} {' '.join(attrs)}>", note, line(el)))
        for child in el:
            visit(child, tag)

    visit(root, None)
    return out


def _warn_unimported(items: list[Unimported], file: str, category: type[UrdfWarning],
                     docs: str) -> None:  # fmt: skip
    """One warning listing ``items``, grouped by element and reason, with their lines."""
    if not items:
        return
    groups: dict[tuple[str, str], list[int | None]] = {}
    for u in items:
        groups.setdefault((u.what, u.note), []).append(u.line)
    parts = []
    for (what, note), lines in groups.items():
        known = sorted({n for n in lines if n is not None})
        where = (("line " if len(known) == 1 else "lines ") + ", ".join(map(str, known))
                 if known else f"{len(lines)} place{'s' if len(lines) > 1 else ''}")  # fmt: skip
        parts.append(f"{what} ({note}): {where}")
    message = (f"{file}: not imported by titopfmu (the table of {docs} in docs/model-files.md "
               f"says why): " + "; ".join(parts))  # fmt: skip
    w = category(message)
    w.unimported = list(items)
    warnings.warn(w, stacklevel=4)  # the caller of titopfmu.import_urdf / import_mjcf


def _number(value: str | None, default: float, what: str, file: str, element: str,
            line: int | None, error: type[DescriptionError]) -> float:  # fmt: skip
    """An attribute's number (``default`` when absent), or an error naming it."""
    if value is None:
        return default
    try:
        v = float(value)
    except ValueError:
        v = float("nan")
    if not np.isfinite(v):
        raise error(f"{what} '{value}' is not a finite number", file, element, line)
    return v


#: time constant tc (s) and damping ratio zeta of the stops of a URDF joint's limits (hard limits:
#: stiff stops): stiffness ``J / (tc zeta)^2`` and damping ``2 J / tc`` for the joint's apparent
#: inertia J, so that a steady acceleration a into a stop penetrates it by ``a tc^2`` (4e-5 m
#: or rad at 1 g or 9.81 rad/s^2), and a joint hitting it at speed v enters it by ``0.72 v tc``
#: and leaves at 0.26 v
STOP_TIME_CONSTANT, STOP_DAMPING_RATIO = 0.002, 1.0


def stop_gains(time_constant: float = STOP_TIME_CONSTANT,
               damping_ratio: float = STOP_DAMPING_RATIO) -> tuple[float, float]:  # fmt: skip
    """A stop's stiffness and damping per unit apparent inertia of the joint (1/s², 1/s) from a
    time constant and a damping ratio, as MuJoCo's ``solref`` (timeconst, dampratio)."""
    return 1.0 / (time_constant * damping_ratio) ** 2, 2.0 / time_constant


@dataclass(frozen=True)
class _Law:
    """A joint's law from the file (a :class:`~titopfmu.JointSpringDamper`): spring-damper
    ``tau = -k (q - q_ref) - d q_dot``, Coulomb ``friction``, ``limits`` (lower, upper) or None;
    ``stop``: the stops' stiffness and damping per unit apparent inertia of the joint
    (:func:`stop_gains`); ``where`` (element, line) and ``what`` (the attributes, for
    messages)."""

    k: float
    d: float
    q_ref: float
    element: str
    line: int | None
    what: str
    friction: float = 0.0
    limits: tuple[float, float] | None = None
    stop: tuple[float, float] = stop_gains()

    @property
    def empty(self) -> bool:
        """Nothing to model."""
        return self.k == 0.0 and self.d == 0.0 and self.friction == 0.0 and self.limits is None

    def parameters(self, inertia: float) -> dict:
        """The JointSpringDamper's parameters for a joint of apparent inertia ``inertia``
        (without one, > 0, the stops are left out: the import refuses that joint anyway)."""
        out = dict(k=self.k, d=self.d, q_ref=self.q_ref, friction=self.friction)
        if self.limits is not None and inertia > 0.0:
            out.update(limited=True, lower=self.limits[0], upper=self.limits[1],
                       k_stop=inertia * self.stop[0], d_stop=inertia * self.stop[1])  # fmt: skip
        return out


def _transmissions(root, line, file: str, kinds: dict[str, str], handled: set[int],
                   unimported: list[Unimported]) -> dict[str, float]:  # fmt: skip
    """The armature each joint gets from the rotor inertias of the transmissions (joint name ->
    sum of I_r n^2 over its actuators): a transmission whose actuators give <motorInertia> or
    <rotorInertia> (kg m^2) with their <mechanicalReduction> n (default 1, or the
    transmission's own) on one joint; it is then handled (its element ids into ``handled``).
    One on several joints or on a joint without one coordinate (floating, planar) is listed in
    ``unimported``, one on a fixed joint has no effect; one without a rotor inertia is left to
    the scan (listed as a transmission); one naming a joint the file lacks is refused."""
    out: dict[str, float] = {}
    for t in root.findall("transmission"):
        el = f"transmission '{t.get('name', '')}'"
        acts = [(a, a.find("motorInertia") if a.find("motorInertia") is not None
                 else a.find("rotorInertia")) for a in t.findall("actuator")]  # fmt: skip
        acts = [(a, i) for a, i in acts if i is not None]
        if not acts:
            continue
        joints = [j.get("name", "") for j in t.findall("joint")]
        for jn in joints:
            if jn not in kinds:
                raise UrdfError(f"names joint '{jn}', which the file does not have", file, el,
                                line(t))  # fmt: skip
        if len(joints) == 1 and kinds[joints[0]] == "fixed":
            handled.add(id(t))  # a rotor on a joint that does not move: no effect
            continue
        if len(joints) == 1 and kinds[joints[0]] not in ("revolute", "continuous", "prismatic"):
            unimported.append(Unimported(f"<{acts[0][1].tag}> of {el}", "a rotor inertia on a "
                                         f"{kinds[joints[0]]} joint (1-dof joints only)",
                                         line(acts[0][1])))  # fmt: skip
            handled.add(id(t))
            continue
        if len(joints) != 1:
            unimported.append(Unimported(f"<{acts[0][1].tag}> of {el}", "a rotor inertia on "
                                         f"{len(joints)} joints (not a simple transmission)",
                                         line(acts[0][1])))  # fmt: skip
            handled.add(id(t))
            continue
        total = 0.0
        for a, i in acts:
            red = a.find("mechanicalReduction")
            if red is None:
                red = t.find("mechanicalReduction")
            n = 1.0 if red is None else _number((red.text or "").strip(), 1.0,
                                                "<mechanicalReduction>", file, el,
                                                line(red), UrdfError)  # fmt: skip
            inertia = _number((i.text or "").strip(), 0.0, f"<{i.tag}>", file, el, line(i),
                              UrdfError)  # fmt: skip
            if inertia < 0.0:
                raise UrdfError(f"<{i.tag}> {inertia:g} is negative (a rotor inertia, kg m^2, "
                                "must be >= 0)", file, el, line(i))  # fmt: skip
            total += inertia * n * n  # the rotor turns at n q_dot: I_r n^2 on the joint
        out[joints[0]] = out.get(joints[0], 0.0) + total
        handled.add(id(t))
    return out


def _urdf_tree(text: str, file: str):
    """The URDF's laws (joint name -> _Law), the list of what is not imported, its mimic
    joints (follower joint name -> (leader joint name, multiplier, offset)) and the rotor
    inertias of its transmissions (joint name -> armature); a mimic that cannot be is refused
    (file, line, joint and leader named)."""
    root, line = _parse_xml(text, file, UrdfError)
    joints = root.findall("joint")  # (a <transmission> names joints too: not these)
    mimics = []
    laws: dict[str, _Law] = {}
    fixed_extras: set[int] = set()
    unimported_follower: list[Unimported] = []
    for j in joints:
        name, kind = j.get("name", ""), j.get("type", "")
        mimic = j.find("mimic")
        if kind in _FIXED:
            fixed_extras.update(
                id(c) for c in j if c.tag in ("mimic", "limit", "dynamics", "safety_controller")
            )
            continue
        if mimic is not None:
            mimics.append((j, mimic))
            continue
        el = f"joint '{name}'"
        dyn, limit = j.find("dynamics"), j.find("limit")
        d = friction = 0.0
        given: list[str] = []
        if dyn is not None:
            d, friction = (_number(dyn.get(a), 0.0, f"<dynamics {a}>", file, el, line(dyn),
                                   UrdfError) for a in ("damping", "friction"))  # fmt: skip
            for a, v in (("damping", d), ("friction", friction)):
                if v < 0.0:
                    raise UrdfError(f"<dynamics {a}> {v:g} is negative (it must be >= 0)", file,
                                    el, line(dyn))  # fmt: skip
            read = [a for a in ("damping", "friction") if dyn.get(a) is not None]
            if read:
                given.append(f"<dynamics {' '.join(read)}>")
        limits = None
        # position limits of revolute and prismatic joints (a continuous joint has none); a
        # <limit> with neither bound (effort and velocity only) gives no stops
        if limit is not None and kind in ("revolute", "prismatic") and (
                limit.get("lower") is not None or limit.get("upper") is not None):
            lower, upper = (_number(limit.get(a), 0.0, f"<limit {a}>", file, el, line(limit),
                                    UrdfError) for a in ("lower", "upper"))  # fmt: skip
            if lower > upper:
                raise UrdfError(f"<limit lower> {lower:g} is above <limit upper> {upper:g}",
                                file, el, line(limit))  # fmt: skip
            limits = (lower, upper)
            given.append("<limit lower upper>")
        if given:
            where = line(dyn) if dyn is not None else line(limit)
            laws[name] = _Law(0.0, d, 0.0, el, where, " ".join(given), friction=friction,
                              limits=limits,
                              stop=stop_gains(STOP_TIME_CONSTANT, STOP_DAMPING_RATIO))  # fmt: skip
    kinds = {j.get("name", ""): j.get("type", "") for j in joints}
    rotors = _transmissions(root, line, file, kinds, fixed_extras, unimported_follower)
    followers = {j.get("name", ""): mimic for j, mimic in mimics}
    out: dict[str, tuple[str, float, float]] = {}
    family = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic"}
    for j, mimic in mimics:
        name, kind = j.get("name", ""), j.get("type", "")
        el, ln = f"joint '{name}'", line(mimic)
        leader = mimic.get("joint")
        r, offset = (_number(mimic.get(a), dflt, f"<mimic {a}>", file, el, ln, UrdfError)
                     for a, dflt in (("multiplier", 1.0), ("offset", 0.0)))  # fmt: skip
        if not leader:
            raise UrdfError("<mimic> names no leader joint (its 'joint' attribute)", file, el, ln)
        if leader not in kinds:
            raise UrdfError(f"<mimic> names joint '{leader}', which the file does not have",
                            file, el, ln)  # fmt: skip
        if kind not in family:
            raise UrdfError(f"a <mimic> on a {kind} joint: a follower must be revolute, "
                            "continuous or prismatic (one coordinate)", file, el, ln)  # fmt: skip
        if leader == name or leader in followers:
            chain = "itself" if leader == name else (
                f"joint '{leader}', which mimics joint "
                f"'{followers[leader].get('joint', '')}' in turn")
            raise UrdfError(f"<mimic> names {chain}: a chain or a cycle of mimic joints is "
                            "refused (make each follower mimic the first leader, with the "
                            "product of the multipliers)", file, el, ln)  # fmt: skip
        if kinds[leader] not in family:
            raise UrdfError(f"<mimic> names joint '{leader}', a {kinds[leader] or 'typeless'} "
                            "joint: a leader must be revolute, continuous or prismatic", file,
                            el, ln)  # fmt: skip
        if family[kinds[leader]] != family[kind]:
            raise UrdfError(f"<mimic> names joint '{leader}', a {kinds[leader]} joint, from a "
                            f"{kind} joint: a mimic couples joints of one type (revolute and "
                            "continuous, or prismatic)", file, el, ln)  # fmt: skip
        out[name] = (leader, r, offset)
        for c in j:  # what the follower's motion, its leader's, overrides
            if c.tag in ("dynamics", "limit", "safety_controller"):
                fixed_extras.add(id(c))
                unimported_follower.append(Unimported(
                    f"<{c.tag}> of {el}", "on a mimic follower: its motion is its leader's",
                    line(c)))  # fmt: skip
    unimported = _scan(root, line, URDF_RULES, skip=lambda e: id(e) in fixed_extras)
    return laws, unimported_follower + unimported, out, rotors


def import_urdf(
    source: str | Path,
    floating_base: bool = False,
    gravity=DEFAULT_GRAVITY,
    name: str | None = None,
) -> System:
    """A System from a URDF file path or a URDF XML string (see the module docstring).

    ``floating_base``: the root link is a free-flying RigidBody (False: it is fixed, a Ground).
    ``gravity``: m/s², inertial frame (URDF has none; default [0, 0, -9.81]).
    """
    pin = _pinocchio()
    text = None
    src = str(source)
    is_xml = src.lstrip().startswith("<")
    file = "<urdf string>" if is_xml else src
    if is_xml:
        text = src
    else:
        try:
            text = Path(src).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise UrdfError(f"cannot read the file: {exc.strerror}", file) from None
    if not text.strip():
        raise UrdfError("the file is empty", file)
    # read before Pinocchio (called with mimic=False: each follower a joint of its own, tied to
    # its leader by a JointMimic block)
    laws, unimported, mimics, rotors = _urdf_tree(text, file)
    root_joint = [pin.JointModelFreeFlyer()] if floating_base else []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = (
                pin.buildModelFromXML(text, *root_joint)
                if is_xml
                else pin.buildModelFromUrdf(src, *root_joint)
            )
    except (RuntimeError, ValueError) as exc:
        msg = " ".join(str(exc).split())
        line = None
        m = re.search(r"(?:link|joint)[^'\"]*['\"]([^'\"]+)['\"]", msg)
        if m:
            line = _line_of(text, "joint", m.group(1)) or _line_of(text, "link", m.group(1))
        raise UrdfError(
            f"Pinocchio's URDF parser refused it: {msg} (a URDF must be a tree: one root link, "
            "each other link the child of exactly one joint; closed loops are not expressible)",
            file,
            None,
            line,
        ) from None
    system = _system_from_model(pin, model, text, file, floating_base, gravity, name,
                                laws=lambda joint, link: laws.get(joint),
                                unimported=unimported, mimics=mimics,
                                rotors=rotors)  # fmt: skip
    _warn_unimported(unimported, file, UrdfWarning, "URDF elements")
    return system


@dataclass(frozen=True)
class _Format:
    """What the shared mapping needs to word its errors for one description format."""

    name: str  # "URDF", "MJCF"
    link: str  # the element of a body: "link", "body"
    error: type[DescriptionError]
    supported: str  # the joint types it maps
    massless_hint: str


_URDF = _Format("URDF", "link", UrdfError, "revolute, continuous, prismatic, fixed and floating",
                "give the link an <inertial>")  # fmt: skip


def _system_from_model(pin, model, text, file, floating_base, gravity, name,
                       fmt: _Format = _URDF, q0=None, ground_pose=None,
                       laws: Callable[[str, str], _Law | None] = lambda joint, link: None,
                       unimported: list[Unimported] | None = None,
                       mimics: dict[str, tuple[str, float, float]] | None = None,
                       rotors: dict[str, float] | None = None) -> System:  # fmt: skip
    """The System of a Pinocchio model: a body block per joint (Pinocchio has merged the fixed
    ones), named after its link; ``q0`` (Pinocchio's configuration vector) gives the initial
    joint coordinates and the free root's pose (None: zero, the root at the origin);
    ``ground_pose`` the Ground's ``position`` and ``euler`` (fixed base; None: the origin).
    ``laws(joint name, link name)``: the joint's spring-damper law from the file, or None; a
    law on a 1-dof joint feeds its effort (a JointSpringDamper); the damping and stiffness of a
    ball joint and of the free-flying root's free joint are their SphericalBody's and
    RigidBody's parameters (MuJoCo's ball and free joint laws); the rest of a law on a
    multi-dof joint is added to ``unimported``. ``mimics``: follower joint name -> (leader
    joint name, multiplier, offset): the follower's effort is then a JointMimic's.
    ``rotors``: joint name -> rotor inertia added to its armature (a 1-dof joint's; URDF
    transmissions)."""
    mimics = mimics or {}
    rotors = rotors or {}
    g = np.asarray(gravity, dtype=float)
    # the link attached to each joint: the first BODY frame whose parent joint it is
    link_of: dict[int, str] = {}
    for fr in model.frames:
        if fr.type == pin.FrameType.BODY and fr.parentJoint not in link_of:
            link_of[fr.parentJoint] = fr.name
    taken: set[str] = set()
    block_of: dict[int, str] = {
        j: _block_name(link_of.get(j, model.names[j]), taken) for j in range(model.njoints)
    }
    children: dict[int, dict[str, np.ndarray]] = {j: {} for j in range(model.njoints)}
    port_of: dict[int, str] = {}
    for j in range(1, model.njoints):
        p = model.parents[j]
        port = _block_name(model.names[j], set(children[p]) | {"P", "W", "joint"})
        port_of[j] = port
        children[p][port] = np.array(model.jointPlacements[j].translation, dtype=float)
    system = System(name or re.sub(r"\W", "_", model.name) or "robot")
    system.urdf_joints = {}

    def where_link(j):
        link = link_of.get(j, model.names[j])
        return f"{fmt.link} '{link}'", _line_of(text, fmt.link, link)

    def where_joint(j):
        return f"joint '{model.names[j]}'", _line_of(text, "joint", model.names[j])

    def body_params(j, root=False):
        inertia = model.inertias[j]
        mass = float(inertia.mass)
        if root and not mass > 0.0:  # a joint body may be massless: its subtree is judged below
            el, line = where_link(j)
            raise fmt.error(
                "massless free-flying root (after merging the links fixed to it): the root "
                f"needs a mass and an inertia; {fmt.massless_hint}",
                file,
                el,
                line,
            )
        return dict(
            mass=mass,
            inertia=np.array(inertia.inertia, dtype=float),
            com=np.array(inertia.lever, dtype=float),
            children=children[j] or None,
            gravity=g,
        )

    def singular(j, exc: SingularJointError) -> DescriptionError:
        el, line = where_link(j)
        what = "massless" if not float(model.inertias[j].mass) > 0.0 else \
            "without inertia about its joint"  # fmt: skip
        return fmt.error(f"{what} moving {fmt.link} (after merging the {fmt.link}s fixed to it): "
                         f"{exc.reason}; {fmt.massless_hint}", file, el, line)

    def armature(j):  # the rotor inertia of each of the joint's speeds (Pinocchio's reading,
        jm = model.joints[j]  # plus a URDF transmission's rotor, I_r n^2)
        a = np.array(model.armature[jm.idx_v : jm.idx_v + jm.nv], dtype=float)
        if jm.nv == 1:
            a[0] += rotors.get(model.names[j], 0.0)
        return a

    diagonal: list = []  # the joint-space inertia's diagonal at the initial configuration

    def apparent_inertia(j) -> float:
        """The joint's apparent inertia J = M_jj at the initial configuration (the links it
        moves, locked together, about its axis): the scale of its stops."""
        if not diagonal:
            q = pin.neutral(model) if q0 is None else np.asarray(q0, dtype=float)
            diagonal.append(np.diag(pin.crba(model, model.createData(), q)).copy())
        return float(diagonal[0][model.joints[j].idx_v])

    def coordinates(j):
        jm = model.joints[j]
        if q0 is None:  # (URDF) zero, or the nearest stop of a joint whose limits exclude zero
            law = laws(model.names[j], link_of.get(j, model.names[j]))
            if law is None or law.limits is None or jm.nq != 1:
                return None
            return np.clip(np.zeros(1), *law.limits)
        return np.asarray(q0[jm.idx_q : jm.idx_q + jm.nq], dtype=float)

    if floating_base:
        if model.njoints < 2 or model.joints[1].shortname() != "JointModelFreeFlyer":
            raise fmt.error("no free-flying root joint", file)  # pragma: no cover
        first = 2
    else:
        first = 1
        system.add(Ground(block_of[0], children=children[0] or None, **(ground_pose or {})))
    for j in range(1, model.njoints):
        kind = model.joints[j].shortname()
        bname = block_of[j]
        q = coordinates(j)
        try:
            if floating_base and j == 1:
                pose = {}
                if q is not None:  # [x, y, z, qx, qy, qz, qw] of the root in the world frame
                    zyx = Rotation.from_quat(q[3:7]).as_euler("ZYX")  # [ψ, θ, φ]
                    pose = dict(position=q[0:3], euler=zyx[::-1])
                block = RigidBody(bname, **pose, **body_params(j, root=True))
                if np.any(armature(j)) and unimported is not None:
                    el, line = where_joint(j)
                    unimported.append(Unimported(f"armature of {el}", "rotor inertia on the "
                                                 "free-flying root: a RigidBody has no joint "
                                                 "to add it to", line))  # fmt: skip
            else:
                M = model.jointPlacements[j]
                R = np.array(M.rotation, dtype=float)
                jm = model.joints[j]
                if kind.startswith(("JointModelR", "JointModelP")) and jm.nv == 1:
                    jd = jm.createData()
                    jm.calc(jd, pin.neutral(model))
                    S = np.array(jd.S, dtype=float).reshape(6)
                    if kind.startswith("JointModelR"):
                        angle = 0.0 if q is None or jm.nq != 1 else float(q[0])
                        block = RevoluteBody(bname, axis=S[3:6], P_a0b=R, theta0=angle,
                                             armature=armature(j)[0],
                                             **body_params(j))  # fmt: skip
                    else:
                        block = PrismaticBody(bname, axis=S[0:3], P_ab=R,
                                              x0=0.0 if q is None else float(q[0]),
                                              armature=armature(j)[0],
                                              **body_params(j))  # fmt: skip
                elif kind == "JointModelSpherical":
                    quat = None if q is None else q[[3, 0, 1, 2]]  # Pinocchio: [x, y, z, w]
                    block = SphericalBody(bname, P_a0b=R, quaternion0=quat,
                                          armature=armature(j), **body_params(j))
                elif kind == "JointModelFreeFlyer":
                    block = FreeBody(bname, P_a0b=R, armature=armature(j), **body_params(j))
                else:
                    el, line = where_joint(j)
                    what = {"JointModelPlanar": "planar", "JointModelMimic": "mimic",
                            "JointModelComposite": "composite (several joints in one "
                            f"{fmt.link})"}.get(kind, kind)  # fmt: skip
                    raise fmt.error(
                        f"joint type '{what}' is not supported ({fmt.supported} are)",
                        file,
                        el,
                        line,
                    )
        except DescriptionError:
            raise
        except SingularJointError as exc:  # a leaf without inertia about its joint
            raise singular(j, exc) from None
        except TitopError as exc:
            el, line = where_link(j)
            raise fmt.error(f"{exc}", file, el, line) from None
        system.add(block)
        system.urdf_joints[model.names[j]] = bname
        law = laws(model.names[j], link_of.get(j, model.names[j]))
        if law is not None and law.empty:
            law = None  # nothing to model
        one_dof = j >= first and isinstance(block, (RevoluteBody, PrismaticBody))
        if law is not None and j >= first and isinstance(block, SphericalBody):
            # -d ω on its 3 dof and -k θ (θ the rotation vector from qpos0, the identity: a
            # ball joint's springref is not read), as MuJoCo's ball joint damping and stiffness
            block.damping, block.stiffness = law.d, law.k
            what = law.what
            for a in (" damping", " stiffness", " springref"):
                what = what.replace(a, "")
            law = replace(law, d=0.0, k=0.0, q_ref=0.0, what=what)
            law = None if law.empty else law  # what is left (friction, a range)
        if law is not None and j < first and isinstance(block, RigidBody):
            # MJCF's free joint of the top-level body: -d qvel on its 6 dof and the spring
            # -k (p - p0), -k θ toward qpos0, the body's pose as written (MuJoCo's qpos_spring of
            # a free joint; springref not read): the RigidBody's damping and springs (the core's
            # titop_body.damping, stiffness, spring_ref, spring_pos)
            block.damping, block.stiffness = law.d, law.k
            if q is not None:
                block.spring_position = np.array(q[0:3], dtype=float)
                block.spring_ref = np.array(q[[6, 3, 4, 5]], dtype=float)  # [w, x, y, z]
                block.spring_ref /= np.linalg.norm(block.spring_ref)
            what = law.what
            for a in (" damping", " stiffness", " springref"):
                what = what.replace(a, "")
            law = replace(law, d=0.0, k=0.0, q_ref=0.0, what=what)
            law = None if law.empty else law  # what is left (friction)
        if law is not None and not one_dof:
            if unimported is not None:
                what = "the free-flying root" if j < first else f"a {block.joint.dof}-dof joint"
                unimported.append(
                    Unimported(
                        law.what, f"on {what}: the joint law is for 1-dof joints", law.line
                    )
                )
            law = None
        if j >= first:
            system.connect(f"{block_of[model.parents[j]]}.{port_of[j]}", f"{bname}.P")
            if model.names[j] in mimics:  # its effort: the JointMimic's, below
                continue
            tau = _block_name(f"{bname}_tau", taken)
            if law is None:
                system.add(Constant(tau, np.zeros(block.joint.dof)))
            else:
                try:
                    system.add(JointSpringDamper(tau, **law.parameters(apparent_inertia(j))))
                except TitopError as exc:
                    raise fmt.error(f"{law.what}: {exc}", file,
                                    law.element, law.line) from None  # fmt: skip
                system.connect(f"{bname}.joint.m", f"{tau}.m")
            system.connect(f"{tau}.{'y' if law is None else 'tau'}", f"{bname}.joint.tau")
    for follower, (leader, r, offset) in mimics.items():
        fb, lb = system.urdf_joints[follower], system.urdf_joints[leader]
        mm = _block_name(f"{fb}_mimic", taken)
        system.add(JointMimic(mm, multiplier=r, offset=offset))
        system.connect(f"{lb}.joint.m", f"{mm}.m")
        system.connect(f"{mm}.tau", f"{fb}.joint.tau")
    # a massless link is imported when the links its joint moves have inertia about the joint:
    # the engine's check of the articulated inertia (eq. 20) at the initial state
    from .assembly.engine import Engine

    joint_of = {b: j for j, b in block_of.items()}
    try:
        Engine(system)
    except SingularJointError as exc:
        if exc.block not in joint_of:  # pragma: no cover - a block the import did not make
            raise
        raise singular(joint_of[exc.block], exc) from None
    return system


__all__ = [
    "APPROXIMATE", "DEFAULT_GRAVITY", "IMPORTED", "NOT_IMPORTED", "NO_EFFECT", "REFUSED",
    "STOP_DAMPING_RATIO", "STOP_TIME_CONSTANT",
    "URDF_RULES", "DescriptionError", "Rule", "Unimported", "UrdfError", "UrdfWarning",
    "import_urdf", "rules_table",
]  # fmt: skip
