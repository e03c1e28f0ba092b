"""MJCF import: a MuJoCo model as a titopfmu :class:`~titopfmu.System`.

>>> system = titopfmu.import_mjcf("arm.xml")

The MJCF is parsed by Pinocchio (``pinocchio.buildModelFromMJCF``): no hand-written reader of the
kinematic tree. Pinocchio applies the ``<compiler>`` settings (angle units, intrinsic Euler
sequences), the ``<default>`` classes, and inertias from geoms where a body has no
``<inertial>``; it merges every body without a joint into its parent. The mapping then is the
URDF import's (:mod:`titopfmu.urdf`), joint by joint:

* ``hinge`` -> :class:`~titopfmu.RevoluteBody`; ``slide`` -> :class:`~titopfmu.PrismaticBody`;
  ``ball`` -> :class:`~titopfmu.SphericalBody`;
* the moving bodies hang from the first top-level body: with ``free`` (``<freejoint/>``) it is a
  free-flying root :class:`~titopfmu.RigidBody`; without a joint it is the
  :class:`~titopfmu.Ground`, placed by its ``pos`` and ``quat``;
* the initial state is MuJoCo's reference configuration ``qpos0`` (the free body's ``pos`` and
  ``quat``, each joint's ``ref``), the velocities zero;
* gravity is ``<option gravity>`` (MuJoCo's default [0, 0, -9.81] without one, zero with
  ``<flag gravity="disable"/>``).

Refused with an error naming the element and its line, because Pinocchio 4.1's parser would drop
or mix it up silently (see :func:`_check_tree`): a second top-level body with joints, a free
joint anywhere but on the first top-level body, several joints in one body, ``<frame>`` and
``<include>``, an extrinsic ``eulerseq``, unnamed or duplicate body names, an orientation other
than ``quat`` on a jointless top-level body, a body without ``<inertial>`` that has a geom
without contacts; and equality constraints (closed loops, welds), massless moving bodies,
non-physical inertias.

Ignored, with one warning: joint ranges and limits, damping, stiffness, armature and friction
loss, actuators, tendons, contacts, sensors; geometry is only used for the inertias.
"""

from __future__ import annotations

import re
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from .assembly.system import System
from .urdf import (
    DescriptionError,
    UrdfWarning,
    _Format,
    _pinocchio,
    _system_from_model,
)

MUJOCO_GRAVITY = (0.0, 0.0, -9.81)


class MjcfError(DescriptionError):
    """An MJCF model cannot be imported (see :class:`~titopfmu.urdf.DescriptionError`)."""


class MjcfWarning(UrdfWarning):
    """Something in the MJCF model is ignored by the import (limits, actuators, contacts)."""


_MJCF = _Format(
    "MJCF",
    "body",
    MjcfError,
    "hinge, slide, ball, and free on the top-level body",
    "give the body an <inertial> or geoms with a mass",
)

#: joint attributes that change MuJoCo's dynamics and that the import leaves out
_IGNORED_JOINT = ("range", "limited", "damping", "stiffness", "armature", "frictionloss")
_IGNORED_SECTIONS = ("actuator", "tendon", "contact", "sensor")


class _Lines:
    """Line numbers of elements: the k-th ``<tag`` of the text (comments blanked out, lines
    kept) is the k-th ``tag`` element of the tree in document order."""

    def __init__(self, text: str, root: ET.Element) -> None:
        blank = re.sub(r"<!--.*?-->", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text,
                       flags=re.S)  # fmt: skip
        self._starts: dict[str, list[int]] = {}
        self._index: dict[int, tuple[str, int]] = {}
        for tag in {e.tag for e in root.iter()}:
            self._starts[tag] = [
                blank.count("\n", 0, m.start()) + 1 for m in re.finditer(rf"<{tag}\b", blank)
            ]
            for k, e in enumerate(root.iter(tag)):
                self._index[id(e)] = (tag, k)

    def __call__(self, element: ET.Element) -> int | None:
        tag, k = self._index.get(id(element), (element.tag, -1))
        starts = self._starts.get(tag, [])
        return starts[k] if 0 <= k < len(starts) else None


def _geom_defaults(root: ET.Element) -> dict[str, dict[str, str]]:
    """The geom attributes of each default class (nested classes inherit), "main" at the top."""
    out: dict[str, dict[str, str]] = {}

    def walk(node: ET.Element, name: str, inherited: dict[str, str]) -> None:
        geom = node.find("geom")
        attrs = {**inherited, **(geom.attrib if geom is not None else {})}
        out[name] = attrs
        for child in node.findall("default"):
            walk(child, child.get("class", name), attrs)

    for top in root.findall("default"):
        walk(top, top.get("class", "main"), {})
    return out


_ORIENTATION = ("euler", "axisangle", "xyaxes", "zaxis")


def _check_tree(root: ET.Element, text: str, file: str) -> tuple[bool, list[str], dict]:
    """Whether the model has a free-flying root body, what the import ignores, and the pose of
    the world's static top-level body (``position``, ``euler`` of the Ground); refuses what it
    cannot map, before Pinocchio, whose parser would drop or merge it silently: Pinocchio 4.1
    reads only the first top-level body, drops the pose of a top-level body without a joint,
    the contents of ``<frame>`` and ``<include>``, reads an extrinsic ``eulerseq`` as intrinsic,
    names every unnamed body alike, and leaves geoms without contacts out of inertias."""
    line = _Lines(text, root)

    def refuse(message: str, element: ET.Element, what: str | None = None) -> MjcfError:
        where = what or f"{element.tag} '{element.get('name', '')}'"
        return MjcfError(message, file, where, line(element))

    world = root.find("worldbody")
    if world is None:
        raise MjcfError("no <worldbody>", file, "mujoco")
    for tag in ("include", "frame"):
        for e in root.iter(tag):
            raise refuse(f"<{tag}> is not supported (Pinocchio's MJCF parser drops what it "
                         "holds): write its bodies in place", e, tag)  # fmt: skip
    compiler = root.find("compiler")
    seq = compiler.get("eulerseq", "xyz") if compiler is not None else "xyz"
    if seq != seq.lower():
        raise refuse(f"eulerseq '{seq}' (extrinsic, fixed axes) is not supported: Pinocchio's "
                     "parser reads it as intrinsic; give the angles in an intrinsic "
                     "(lower-case) sequence", compiler, "compiler")  # fmt: skip
    equality = root.find("equality")
    if equality is not None and len(equality):
        first = equality[0]
        raise refuse(
            f"equality constraints ({first.tag}) are not supported: titopfmu imports trees "
            "(model a loop with a titopfmu LoopClosure instead)",
            first,
            f"equality/{first.tag}",
        )

    def is_free(joint: ET.Element) -> bool:
        return joint.tag == "freejoint" or joint.get("type") == "free"

    def moving(body: ET.Element) -> bool:
        return any(c.tag in ("joint", "freejoint") for c in body.iter())

    names: dict[str, ET.Element] = {}
    for body in world.iter("body"):
        name = body.get("name")
        if not name:
            raise refuse("an unnamed body: give every body a name (Pinocchio's parser names "
                         "them alike and mixes them up)", body, "body")  # fmt: skip
        if name in names:
            raise refuse(f"a second body named '{name}' (body names must be unique)", body)
        names[name] = body
    tops = world.findall("body")
    movers = [b for b in tops if moving(b)]
    if movers and (len(movers) > 1 or movers[0] is not tops[0]):
        extra = movers[1] if movers[0] is tops[0] else movers[0]
        raise refuse(
            "a second top-level body with joints: Pinocchio's MJCF parser reads the first "
            "top-level body only; put the moving bodies under one top-level body",
            extra,
        )
    pose: dict = {}
    base = tops[0] if tops else None
    if base is not None and moving(base) and not [
        c for c in base if c.tag in ("joint", "freejoint")
    ]:  # a static base: Pinocchio drops its pose, which becomes the Ground's
        for attr in _ORIENTATION:
            if base.get(attr) is not None:
                raise refuse(
                    f"the top-level body without a joint gives its orientation as '{attr}': "
                    "only 'pos' and 'quat' are supported there (Pinocchio's parser drops the "
                    "pose of that body; titopfmu places the Ground with it)",
                    base,
                )
        try:
            pos = [float(w) for w in base.get("pos", "0 0 0").split()]
            quat = [float(w) for w in base.get("quat", "1 0 0 0").split()]
        except ValueError:
            pos, quat = [], []
        if len(pos) != 3 or len(quat) != 4 or not np.linalg.norm(quat) > 0.0:
            raise refuse("'pos' must be three numbers and 'quat' four (w x y z)", base)
        w, x, y, z = np.asarray(quat) / np.linalg.norm(quat)
        zyx = Rotation.from_quat([x, y, z, w]).as_euler("ZYX")  # [ψ, θ, φ]
        pose = dict(position=np.asarray(pos), euler=zyx[::-1])
    floating = False
    geom_defaults = _geom_defaults(root)
    parent_of = {c: p for p in world.iter() for c in p}

    def geom_class(geom: ET.Element, body: ET.Element) -> str:
        node: ET.Element | None = body
        while geom.get("class") is None and node is not None and node is not world:
            if node.get("childclass"):
                return node.get("childclass")
            node = parent_of.get(node)
        return geom.get("class") or "main"

    for body in world.iter("body"):
        joints = [c for c in body if c.tag in ("joint", "freejoint")]
        if len(joints) > 1:
            raise refuse(
                f"{len(joints)} joints in one body: not supported (Pinocchio makes them one "
                "composite joint); give each joint a body of its own",
                body,
            )
        if any(is_free(j) for j in joints):
            if body is not base:
                raise refuse(
                    "a free joint is supported on the first top-level body only (the "
                    "free-flying root; Pinocchio's parser drops any other)",
                    body,
                )
            floating = True
        if body.find("inertial") is None:
            for geom in body.findall("geom"):
                cls = geom_class(geom, body)
                attrs = {**geom_defaults.get("main", {}), **geom_defaults.get(cls, {}),
                         **geom.attrib}  # fmt: skip
                if attrs.get("contype") == "0" and attrs.get("conaffinity") == "0":
                    raise refuse(
                        "the body has no <inertial> and a geom without contacts (contype and "
                        "conaffinity 0): MuJoCo counts its mass, Pinocchio's parser does not; "
                        "give the body an <inertial>",
                        body,
                    )
    ignored: set[str] = set()
    for joint in root.iter("joint"):  # the bodies' joints and the <default> classes'
        ignored.update(a for a in _IGNORED_JOINT if joint.get(a) not in (None, "0", "false"))
    for section in _IGNORED_SECTIONS:
        node = root.find(section)
        if node is not None and len(node):
            ignored.add(f"<{section}>")
    return floating, sorted(ignored), pose


def import_mjcf(source: str | Path, gravity=None, name: str | None = None) -> System:
    """A System from an MJCF (MuJoCo XML) file (see the module docstring).

    ``gravity``: m/s², inertial frame; None takes the model's ``<option gravity>``.
    """
    pin = _pinocchio()
    file = str(source)
    try:
        text = Path(file).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise MjcfError(f"cannot read the file: {exc.strerror}", file) from None
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise MjcfError(f"not well-formed XML: {exc}", file, None, exc.position[0]) from None
    if root.tag != "mujoco":
        raise MjcfError(f"the root element is <{root.tag}>, not <mujoco>", file, root.tag, 1)
    floating, ignored, ground_pose = _check_tree(root, text, file)
    option = root.find("option")
    flag = option.find("flag") if option is not None else None
    if gravity is None and flag is not None and flag.get("gravity") == "disable":
        gravity = [0.0, 0.0, 0.0]
    if gravity is None:
        words = (option.get("gravity") if option is not None else None) or ""
        try:
            gravity = [float(w) for w in words.split()] if words else list(MUJOCO_GRAVITY)
        except ValueError:
            gravity = []
        if len(gravity) != 3:
            raise MjcfError(f"gravity '{words}' is not three numbers", file, "option",
                            _Lines(text, root)(option))  # fmt: skip
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = pin.buildModelFromMJCF(file)
    except (RuntimeError, ValueError) as exc:
        msg = " ".join(str(exc).split())
        raise MjcfError(f"Pinocchio's MJCF parser refused it: {msg}", file) from None
    q0 = None
    for entry in model.referenceConfigurations:
        if entry.key() == "qpos0":
            q0 = np.asarray(entry.data(), dtype=float)
    system = _system_from_model(pin, model, text, file, floating, gravity,
                                name or re.sub(r"\W", "_", root.get("model", "")) or None,
                                fmt=_MJCF, q0=q0, ground_pose=ground_pose)  # fmt: skip
    if ignored:
        warnings.warn(
            f"{file}: ignored by the titopfmu import (only the rigid-body tree is imported): "
            f"{', '.join(ignored)}",
            MjcfWarning,
            stacklevel=3,  # the caller of titopfmu.import_mjcf
        )
    return system


__all__ = ["MUJOCO_GRAVITY", "MjcfError", "MjcfWarning", "import_mjcf"]
