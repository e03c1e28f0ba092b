"""MJCF import: a MuJoCo model as a titopfmu :class:`~titopfmu.System`.

>>> system = titopfmu.import_mjcf("arm.xml")

The MJCF is parsed by Pinocchio (``pinocchio.buildModelFromMJCF``): no hand-written reader of the
kinematic tree. Pinocchio applies the ``<compiler>`` settings (angle units, Euler sequences),
the ``<default>`` classes, and MuJoCo's inertias from geoms where a body has no ``<inertial>``;
it merges every body without a joint into its parent. The mapping then is the URDF import's
(:mod:`titopfmu.urdf`), joint by joint:

* ``hinge`` -> :class:`~titopfmu.RevoluteBody`; ``slide`` -> :class:`~titopfmu.PrismaticBody`;
  ``ball`` -> :class:`~titopfmu.SphericalBody`;
* ``free`` (``<freejoint/>``) on the one top-level moving body -> a free-flying root
  :class:`~titopfmu.RigidBody`; otherwise the world is a :class:`~titopfmu.Ground`;
* the initial state is MuJoCo's reference configuration ``qpos0`` (the free body's ``pos`` and
  ``quat``, each joint's ``ref``), the velocities zero;
* gravity is ``<option gravity>`` (MuJoCo's default [0, 0, -9.81] without one).

Refused with an error naming the element and its line: several joints in one body (Pinocchio
makes them a composite joint), a free joint below the top level or on a second top-level body
(which Pinocchio's parser would drop), equality constraints (closed loops, welds), massless
moving bodies, non-physical inertias.

Ignored, with one warning: joint ranges and limits, damping, stiffness, armature and friction
loss, actuators, tendons, contacts, sensors; geometry is only used for the inertias.
"""

from __future__ import annotations

import re
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from .assembly.system import System
from .urdf import (
    DescriptionError,
    UrdfWarning,
    _Format,
    _line_of,
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


def _line(text: str, element: ET.Element, tag: str) -> int | None:
    """Line of a named element (None for an unnamed one)."""
    name = element.get("name")
    return _line_of(text, tag, name) if name else None


def _tag_line(text: str, tag: str) -> int | None:
    """Line of the first ``<tag`` in the text."""
    m = re.search(rf"<{tag}\b", text)
    return None if m is None else text.count("\n", 0, m.start()) + 1


def _check_tree(root: ET.Element, text: str, file: str) -> tuple[bool, list[str]]:
    """Whether the model has a free-flying root body, and what the import ignores; refuses
    what it cannot map (before Pinocchio, which would drop or merge it silently)."""
    world = root.find("worldbody")
    if world is None:
        raise MjcfError("no <worldbody>", file, "mujoco")
    equality = root.find("equality")
    if equality is not None and len(equality):
        first = equality[0]
        raise MjcfError(
            f"equality constraints ({first.tag}) are not supported: titopfmu imports trees "
            "(model a loop with a titopfmu LoopClosure instead)",
            file,
            f"equality/{first.tag}",
            _line(text, first, first.tag),
        )

    def is_free(joint: ET.Element) -> bool:
        return joint.tag == "freejoint" or joint.get("type") == "free"

    def moving(body: ET.Element) -> bool:
        return any(c.tag in ("joint", "freejoint") for c in body.iter())

    ignored: set[str] = set()
    top = [b for b in world.findall("body") if moving(b)]
    floating = False
    for body in world.iter("body"):
        joints = [c for c in body if c.tag in ("joint", "freejoint")]
        where = f"body '{body.get('name', '?')}'"
        if len(joints) > 1:
            raise MjcfError(
                f"{len(joints)} joints in one body: not supported (Pinocchio makes them one "
                "composite joint); give each joint a body of its own",
                file,
                where,
                _line(text, body, "body"),
            )
        for joint in joints:
            if is_free(joint):
                if body not in top or len(top) > 1:
                    raise MjcfError(
                        "a free joint is supported on the one top-level moving body only (the "
                        "free-flying root; Pinocchio's parser drops any other)",
                        file,
                        where,
                        _line(text, body, "body"),
                    )
                floating = True
    for joint in root.iter("joint"):  # the bodies' joints and the <default> classes'
        ignored.update(a for a in _IGNORED_JOINT if joint.get(a) not in (None, "0", "false"))
    for section in _IGNORED_SECTIONS:
        node = root.find(section)
        if node is not None and len(node):
            ignored.add(f"<{section}>")
    return floating, sorted(ignored)


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
    floating, ignored = _check_tree(root, text, file)
    if gravity is None:
        option = root.find("option")
        words = (option.get("gravity") if option is not None else None) or ""
        try:
            gravity = [float(w) for w in words.split()] if words else list(MUJOCO_GRAVITY)
        except ValueError:
            gravity = []
        if len(gravity) != 3:
            raise MjcfError(f"gravity '{words}' is not three numbers", file, "option",
                            _tag_line(text, "option"))  # fmt: skip
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
                                fmt=_MJCF, q0=q0)  # fmt: skip
    if ignored:
        warnings.warn(
            f"{file}: ignored by the titopfmu import (only the rigid-body tree is imported): "
            f"{', '.join(ignored)}",
            MjcfWarning,
            stacklevel=2,
        )
    return system


__all__ = ["MUJOCO_GRAVITY", "MjcfError", "MjcfWarning", "import_mjcf"]
