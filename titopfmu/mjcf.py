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
  :class:`~titopfmu.Ground`, placed by its ``pos`` and ``quat``; several top-level bodies with
  joints (none free) hang from the Ground, named ``world``, at the origin;
* several joints in one body, which MuJoCo composes in order, each about the body frame (moved
  by the joints before it) at its ``pos`` and ``axis``: a chain of joint bodies, one a joint, at
  the body's frame: massless intermediate ones named ``<body>__<joint>`` (``<body>__joint<k>``
  for an unnamed k-th joint), then the body itself, with its last joint, mass, inertia and
  children (Pinocchio's parser makes them one composite joint, the same motion);
* an unnamed body is named ``<parent>_body<k>``, the k-th body in its parent (``world_body<k>``
  at the top);
* the initial state is MuJoCo's reference configuration ``qpos0`` (the free body's ``pos`` and
  ``quat``, each joint's ``ref``), the velocities zero;
* gravity is ``<option gravity>`` (MuJoCo's default [0, 0, -9.81] without one, zero with
  ``<flag gravity="disable"/>``).

Joint damping and springs are imported as :class:`~titopfmu.JointSpringDamper` laws feeding the
joint's effort (``<body>_tau``): ``tau = -stiffness (q - springref) - damping q̇`` on hinge and
slide joints (``springref`` in degrees for hinges under ``<compiler angle="degree">``, as
MuJoCo reads it), with the ``<default>`` classes applied, and with them, in the same law,
``frictionloss`` as Coulomb friction regularised over 1e-3 rad/s (m/s) and a joint's ``range``
(where ``limited``, or ``auto`` with ``<compiler autolimits>``, MuJoCo's default) as one-sided
stops as stiff against a steady load as MuJoCo's soft limits (``solreflimit``, ``solimplimit``:
see :func:`_friction_and_limits`; ``<flag limit="disable">`` and ``frictionloss="disable"``
respected); a joint without any of these has a ``Constant`` (0). A ball joint's damping is
its SphericalBody's ``damping`` (``-damping ω`` on its 3 dof, ω in the child's frame, as
MuJoCo's ``-damping qvel``), its stiffness the SphericalBody's ``stiffness`` (``-stiffness θ``,
θ the rotation vector of the joint's attitude from qpos0, the identity, in the child's frame,
as MuJoCo's ``mj_springdamper``; MuJoCo reads no ``springref`` on a ball joint). A free joint
(``<joint type="free">``; ``<freejoint/>`` takes none) gives its damping and stiffness to the
free-flying root RigidBody's ``damping``, ``stiffness``, ``spring_ref`` and
``spring_position``: the wrench ``-damping`` x the twist at the body's origin and the spring
``-stiffness (p - p0)`` (world frame), ``-stiffness θ`` (θ the rotation vector from the body's
written attitude, its frame), p0 and the attitude MuJoCo's ``qpos_spring`` of a free joint (its
``qpos0``, the body's ``pos`` and ``quat``; no ``springref``). Friction or a range on a ball
joint and friction on the free joint are not imported (listed in the warning): the law is for
1-dof joints.

A joint's ``armature`` (rotor inertia, with the ``<default>`` classes) is the joint body's
``armature`` parameter, added to the joint's apparent inertia (eq. 20) as in MuJoCo and
Pinocchio's ``model.armature`` (a ball joint's on each of its 3 dof; a negative one is refused);
on a free-flying root it is listed in the warning (a RigidBody has no joint). A massless body is
imported when the bodies its joint moves have inertia about the joint.

Pinocchio 4.1's parser reads the first top-level body only, names unnamed bodies alike and leaves
a geom without contacts out of its body's inertia, where MuJoCo counts it: the import gives it,
where the file needs it, a copy with the bodies named, gathered under one top-level body, the
joints of a body chained, and those geoms given contacts (a body's inertia only); and scales
the masses to ``<compiler settotalmass>``, which Pinocchio ignores.

Refused with an error naming the element and its line, because Pinocchio 4.1's parser would drop
or mix it up silently (see :func:`_check_tree`): a second top-level body with joints beside a
free-flying one, a free joint anywhere but on a top-level body or with other joints in its
body, ``<frame>``, ``<include>``, ``<replicate>``, ``<composite>``, ``<flexcomp>`` and
``<attach>``, an extrinsic ``eulerseq``, duplicate body names, an orientation other than
``quat`` on a jointless top-level body, a body whose inertia comes from its geoms that has a
mesh geom, ``settotalmass`` with other top-level bodies beside a free-flying one (Pinocchio
would drop their masses from the total); and active equality constraints (a ``<joint>``
coupling, a mimic, names both joints; closed loops, welds), moving bodies whose subtree has no
inertia about their joint, non-physical inertias.

Everything else the import leaves out is listed in one :class:`MjcfWarning` per import, element
by element with its lines (its ``unimported`` attribute holds the list): actuators, tendons,
sensors, keyframes, the geoms' contacts,
and any element or attribute the import does not know. :data:`MJCF_RULES` is the table of every
element and attribute with its status; docs/model-files.md shows it.
"""

from __future__ import annotations

import re
import tempfile
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from .assembly.system import System
from .urdf import (
    _ZERO,
    APPROXIMATE,
    IMPORTED,
    NO_EFFECT,
    NOT_IMPORTED,
    REFUSED,
    DescriptionError,
    Rule,
    Unimported,
    UrdfWarning,
    _Format,
    _Law,
    _number,
    _parse_xml,
    _pinocchio,
    _scan,
    _system_from_model,
    _warn_unimported,
    stop_gains,
)

MUJOCO_GRAVITY = (0.0, 0.0, -9.81)


class MjcfError(DescriptionError):
    """An MJCF model cannot be imported (see :class:`~titopfmu.urdf.DescriptionError`)."""


class MjcfWarning(UrdfWarning):
    """Something in the MJCF model is not imported (limits, armature, actuators, contacts, ...):
    the message lists every element and attribute left out with its lines, ``unimported`` holds
    them."""


_MJCF = _Format(
    "MJCF",
    "body",
    MjcfError,
    "hinge, slide, ball, and free on the top-level body",
    "give the body an <inertial> or geoms with a mass",
)

_POSE = ("pos", "quat", "euler", "axisangle", "xyaxes", "zaxis")
_NUMERICS = ("timestep", "integrator", "iterations", "solver", "tolerance", "ls_iterations",
             "ls_tolerance", "noslip_iterations", "noslip_tolerance", "ccd_iterations",
             "ccd_tolerance", "sdf_iterations", "sdf_initpoints", "cone", "jacobian", "impratio",
             "apirate")  # fmt: skip
_CONTACT = ("contype", "conaffinity", "condim", "friction", "solref", "solimp", "solmix", "margin",
            "gap", "priority")  # fmt: skip
_ACTUATORS = ("general", "motor", "position", "velocity", "intvelocity", "damper", "cylinder",
              "muscle", "adhesion")  # fmt: skip
_LAW = ("a JointSpringDamper law tau = -stiffness (q - springref) - damping q_dot feeds the "
        "joint's effort (hinge, slide; springref in degrees for a hinge under angle='degree'); "
        "on a ball joint: the SphericalBody's damping and stiffness, -damping ω - stiffness "
        "θ on its 3 dof (θ the rotation vector from qpos0, the identity; springref not read, "
        "as in MuJoCo); on the free joint of the free-flying root: the RigidBody's damping and "
        "stiffness, -damping on its twist at the body's origin, -stiffness (p - p0) and "
        "-stiffness θ toward qpos0, the body's pos and quat (springref not read, as in MuJoCo)")
_FRICTION = ("Coulomb friction f_c of the joint law (hinge, slide), regularised: "
             "-f_c tanh(q_dot / v_c), v_c = 1e-3 rad/s or m/s (MuJoCo: a soft friction "
             "constraint); on a ball joint: listed")
_STOPS = ("position limits (hinge, slide) as the joint law's one-sided stops, as stiff against a "
          "steady load as MuJoCo's soft limit: stiffness J d k / (1 - d) and damping "
          "J d b / (1 - d) (bounded by the stop's spring), J the joint's apparent inertia at "
          "qpos0, "
          "k = d / (dmax timeconst dampratio)^2 and b = 2 / (dmax timeconst) of solreflimit "
          "(default 0.02 1; negative: stiffness d / dmax^2 and damping / dmax), d midway between "
          "dmin and dmax of solimplimit (default 0.9 0.95); the rebound differs; on a ball joint: "
          "listed")
_REFUSED_HOLDERS = ("frame", "include", "replicate", "composite", "flexcomp", "attach")

#: Every MJCF element (``parent/tag`` or ``tag``) and attribute (``element@attribute``,
#: ``element@*`` for the others) with what the import makes of it; an element or attribute not
#: in the table is NOT_IMPORTED (listed in the warning). Attributes of ``<default>`` classes are
#: judged as those of the elements they apply to. Importing armature or joint ranges later
#: changes their status here.
MJCF_RULES: dict[str, Rule] = {
    "mujoco@model": Rule(IMPORTED, "the System's name"),
    "compiler@angle": Rule(IMPORTED, "degree or radian (Pinocchio's parser)"),
    "compiler@eulerseq": Rule(IMPORTED, "intrinsic sequences; an extrinsic one is refused"),
    "compiler@inertiafromgeom": Rule(IMPORTED, "Pinocchio's parser"),
    "compiler@boundmass": Rule(IMPORTED, "Pinocchio's parser"),
    "compiler@boundinertia": Rule(IMPORTED, "Pinocchio's parser"),
    "compiler@settotalmass": Rule(IMPORTED, "every body's mass and inertia scaled so that "
                                  "the bodies' total mass is this (where positive); refused "
                                  "with other top-level bodies beside a free-flying one"),
    "compiler@coordinate": Rule(NOT_IMPORTED, "global coordinates (removed from MuJoCo 2.3.3); "
                                "local, the default, leaves nothing out", ("local",)),
    "compiler@autolimits": Rule(IMPORTED, "whether a joint's range alone limits it "
                                "(limited='auto'; MuJoCo's default: true)"),
    **{f"compiler@{a}": Rule(NO_EFFECT, "file locations (meshes are not read)")
       for a in ("meshdir", "texturedir", "assetdir", "strippath")},
    "option@gravity": Rule(IMPORTED, "gravity of every body"),
    **{f"option@{a}": Rule(NO_EFFECT, "MuJoCo's numerical settings: titopfmu integrates with "
                           "its own method and tolerances") for a in _NUMERICS},
    "option@*": Rule(NOT_IMPORTED, "MuJoCo option not modelled"),
    "option/flag@gravity": Rule(IMPORTED, "disable: zero gravity"),
    "option/flag@limit": Rule(IMPORTED, "disable: no joint stops"),
    "option/flag@frictionloss": Rule(IMPORTED, "disable: no joint friction"),
    "option/flag@*": Rule(NOT_IMPORTED, "switch of MuJoCo's pipeline"),
    "size": Rule(NO_EFFECT, "memory sizes"),
    "visual": Rule(NO_EFFECT, "rendering"),
    "statistic": Rule(NO_EFFECT, "rendering"),
    "custom": Rule(NO_EFFECT, "user data"),
    "asset": Rule(NO_EFFECT, "meshes, textures, materials; a mesh geom that would give a body "
                  "its inertia is refused"),
    "default": Rule(IMPORTED, "default classes, applied to joints and geoms"),
    "default@class": Rule(IMPORTED, "class name"),
    **{f"default/{a}": Rule(NO_EFFECT, "defaults of actuators (actuators are listed)")
       for a in _ACTUATORS},
    **{f"default/{a}": Rule(NO_EFFECT, "defaults of elements listed where used")
       for a in ("tendon", "equality", "pair", "mesh", "material")},
    "worldbody": Rule(IMPORTED, "the tree"),
    "body": Rule(IMPORTED, "a body block per joint; several joints in one body: a chain of "
                 "joint bodies at the body's frame, massless <body>__<joint> ones, then the body "
                 "with its last joint; bodies without a joint merged into their parent; several "
                 "top-level trees hang from the Ground ('world')"),
    "body@name": Rule(IMPORTED, "names the body block (an unnamed body: <parent>_body<k>, the "
                      "k-th body in its parent; duplicate names refused)"),
    "body@childclass": Rule(IMPORTED, "default class of the elements inside"),
    **{f"body@{a}": Rule(IMPORTED, "body frame (pose relative to the parent)") for a in _POSE},
    "body@mocap": Rule(NOT_IMPORTED, "a mocap body is moved by the user", ("false",)),
    "body@gravcomp": Rule(NOT_IMPORTED, "gravity compensation force", _ZERO),
    "body@user": Rule(NO_EFFECT, "user data"),
    **{f"inertial@{a}": Rule(IMPORTED, "mass, centre of mass and inertia of the body")
       for a in (*_POSE, "mass", "diaginertia", "fullinertia")},
    "joint": Rule(IMPORTED, "a joint body block; several in one body: composed in order, each "
                  "about the body frame moved by those before it, as MuJoCo does (a free joint "
                  "alone in its body)"),
    "joint@name": Rule(IMPORTED, "system.urdf_joints"),
    "joint@class": Rule(IMPORTED, "default class"),
    "joint@type": Rule(IMPORTED, "hinge, slide, ball; free on the first top-level body only"),
    "joint@pos": Rule(IMPORTED, "joint position in the body"),
    "joint@axis": Rule(IMPORTED, "joint axis"),
    "joint@ref": Rule(IMPORTED, "reference position: the initial joint coordinate (qpos0)"),
    "joint@damping": Rule(IMPORTED, _LAW),
    "joint@stiffness": Rule(IMPORTED, _LAW),
    "joint@springref": Rule(IMPORTED, _LAW),
    "joint@armature": Rule(IMPORTED, "rotor inertia: the joint body's armature, added to the "
                           "joint's apparent inertia (eq. 20; one value for each dof of a ball "
                           "joint); on the free-flying root: listed, a RigidBody has no joint"),
    "joint@frictionloss": Rule(APPROXIMATE, _FRICTION),
    "joint@range": Rule(APPROXIMATE, _STOPS),
    "joint@limited": Rule(IMPORTED, "true, false, or auto: limited where a range is given under "
                          "autolimits"),
    "joint@margin": Rule(NOT_IMPORTED, "a limit active before it is reached: the stops act from "
                         "the range's bounds", _ZERO),
    "joint@solreflimit": Rule(APPROXIMATE, _STOPS),
    "joint@solimplimit": Rule(APPROXIMATE, "its dmin and dmax (first two values) scale the "
                              "stops (see range); the impedance's variation with penetration is "
                              "not modelled"),
    "joint@solreffriction": Rule(NOT_IMPORTED, "softness of MuJoCo's friction constraint: the "
                                 "friction is regularised over 1e-3 rad/s (m/s) instead"),
    "joint@solimpfriction": Rule(NOT_IMPORTED, "softness of MuJoCo's friction constraint: the "
                                 "friction is regularised over 1e-3 rad/s (m/s) instead"),
    "joint@springdamper": Rule(NOT_IMPORTED, "spring-damper given by time constant and damping "
                               "ratio: give stiffness and damping", _ZERO),
    **{f"joint@{a}": Rule(NOT_IMPORTED, "actuator force limits and gravity compensation "
                          "(actuators are not imported)")
       for a in ("actuatorfrcrange", "actuatorfrclimited", "actuatorgravcomp")},
    "joint@group": Rule(NO_EFFECT, "display group"),
    "joint@user": Rule(NO_EFFECT, "user data"),
    "freejoint": Rule(IMPORTED, "the free-flying root, on the first top-level body only"),
    "freejoint@name": Rule(IMPORTED, "system.urdf_joints"),
    "freejoint@group": Rule(NO_EFFECT, "display group"),
    "geom": Rule(IMPORTED, "the body's inertia where it has no <inertial> (Pinocchio's parser; "
                 "a geom without contacts counted as MuJoCo does, a mesh geom refused there); "
                 "every geom that can collide is listed: contacts are not modelled"),
    **{f"geom@{a}": Rule(IMPORTED, "the body's inertia where it has no <inertial>")
       for a in ("name", "class", "type", "size", "fromto", "mass", "density", "mesh", *_POSE)},
    **{f"geom@{a}": Rule(NO_EFFECT, "contact parameter (the geom's contacts are listed)")
       for a in _CONTACT},
    **{f"geom@{a}": Rule(NO_EFFECT, "display") for a in ("rgba", "material", "group", "user")},
    "geom@shellinertia": Rule(REFUSED, "refused by Pinocchio's parser"),
    "site": Rule(NO_EFFECT, "a point of interest"),
    "camera": Rule(NO_EFFECT, "rendering"),
    "light": Rule(NO_EFFECT, "rendering"),
    **{tag: Rule(REFUSED, "Pinocchio's parser drops what it holds") for tag in _REFUSED_HOLDERS},
    "equality": Rule(REFUSED, "closed loops, welds and joint couplings are not supported yet "
                     "(an inactive one is listed)"),
    "actuator": Rule(NOT_IMPORTED, "actuators: joint efforts come from the System's blocks"),
    "tendon": Rule(NOT_IMPORTED, "tendons are not modelled"),
    "contact": Rule(NOT_IMPORTED, "contact pairs and exclusions: contacts are not modelled"),
    "sensor": Rule(NOT_IMPORTED, "sensors: record the System's outputs instead"),
    "keyframe": Rule(NOT_IMPORTED, "states other than the initial one (qpos0)"),
}


def _defaults(root: ET.Element, tag: str) -> dict[str, dict[str, str]]:
    """The ``tag`` attributes of each default class (nested classes inherit), "main" at the
    top."""
    out: dict[str, dict[str, str]] = {}

    def walk(node: ET.Element, name: str, inherited: dict[str, str]) -> None:
        element = node.find(tag)
        attrs = {**inherited, **(element.attrib if element is not None else {})}
        out[name] = attrs
        for child in node.findall("default"):
            walk(child, child.get("class", name), attrs)

    for top in root.findall("default"):
        walk(top, top.get("class", "main"), {})
    return out


_ORIENTATION = ("euler", "axisangle", "xyaxes", "zaxis")


@dataclass(frozen=True)
class _Switches:
    """The model-wide settings a joint's friction and limits depend on: ``<compiler angle
    autolimits>``, ``<option><flag limit frictionloss>``."""

    degrees: bool
    autolimits: bool
    limits: bool
    friction: bool


#: MuJoCo's defaults of a joint's limit: solreflimit (timeconst, dampratio), solimplimit
MUJOCO_SOLREF, MUJOCO_SOLIMP = (0.02, 1.0), (0.9, 0.95, 0.001, 0.5, 2.0)


def _numbers(attrs: dict, name: str, default: tuple, el: str, line, file: str) -> list[float]:
    """An attribute of several numbers (MuJoCo's defaults for those not given)."""
    words = attrs.get(name)
    if words is None:
        return list(default)
    try:
        values = [float(w) for w in words.split()]
    except ValueError:
        values = []
    if not values or len(values) > len(default) or not np.all(np.isfinite(values)):
        raise MjcfError(f"{name} '{words}' is not up to {len(default)} finite numbers", file, el,
                        line)  # fmt: skip
    return values + list(default[len(values):])


def _friction_and_limits(attrs: dict, switches: _Switches, el: str, line, file: str):
    """A joint's Coulomb friction (``frictionloss``), its limits (lower, upper), in radians for a
    hinge, or None, and its stops' stiffness and damping per unit apparent inertia: those of
    MuJoCo's soft limit against a steady load. MuJoCo's limit keeps 1 - d of a load's
    acceleration a and adds d (b q̇ + k r) against it (d the impedance, solimplimit; k = d /
    (dmax timeconst dampratio)^2 and b = 2 / (dmax timeconst) from solreflimit, or k =
    stiffness d / dmax^2, b = damping / dmax from a negative one): it settles at r = (1 - d) a /
    (d k), a spring of stiffness d k / (1 - d) per unit inertia, damping d b / (1 - d); d taken
    midway between solimplimit's dmin and dmax (the impedance across its transition width)."""
    friction = 0.0
    if switches.friction:
        friction = _number(attrs.get("frictionloss"), 0.0, "<joint frictionloss>", file, el,
                           line, MjcfError)  # fmt: skip
        if friction < 0.0:
            raise MjcfError(f"frictionloss {friction:g} is negative (it must be >= 0)", file, el,
                            line)  # fmt: skip
    limited = attrs.get("limited", "auto").strip().lower()
    if not (switches.limits and "range" in attrs and attrs.get("type", "hinge") != "free"
            and (limited == "true" or (limited == "auto" and switches.autolimits))):
        return friction, None, (0.0, 0.0)
    r = _numbers(attrs, "range", (0.0, 0.0), el, line, file)
    if attrs.get("type", "hinge") == "hinge" and switches.degrees:
        r = [float(np.deg2rad(v)) for v in r]
    if r[0] > r[1]:
        raise MjcfError(f"range '{attrs['range']}': its lower bound is above its upper one", file,
                        el, line)  # fmt: skip
    ref = _numbers(attrs, "solreflimit", MUJOCO_SOLREF, el, line, file)
    imp = _numbers(attrs, "solimplimit", MUJOCO_SOLIMP, el, line, file)
    if ref[0] > 0.0:  # time constant and damping ratio (k, b of dmax = 1)
        k, b = stop_gains(ref[0], ref[1]) if ref[1] > 0.0 else (0.0, 0.0)
    else:  # stiffness and damping
        k, b = -ref[0], -ref[1]
    if not (k > 0.0 and b >= 0.0):
        raise MjcfError(f"solreflimit '{attrs.get('solreflimit')}' gives no stiffness to the "
                        "limit", file, el, line)  # fmt: skip
    dmin, dmax = (min(max(v, 1e-4), 0.9999) for v in imp[:2])  # MuJoCo's bounds
    d = 0.5 * (dmin + dmax)
    k, b = d * d / (dmax * dmax) * k, d / dmax * b
    return friction, (r[0], r[1]), (k / (1.0 - d), b / (1.0 - d))


def _check_tree(root: ET.Element, line: Callable, file: str):
    """Whether the model has a free-flying root body, the pose of the world's static top-level
    body (``position``, ``euler`` of the Ground), the joints' spring-damper laws (body name ->
    _Law) and what the import leaves out (:class:`~titopfmu.urdf.Unimported`); refuses what it
    cannot map, before Pinocchio, whose parser would drop or merge it silently: Pinocchio 4.1
    reads only the first top-level body, drops the pose of a top-level body without a joint,
    the contents of ``<frame>``, ``<include>`` and the other generators, reads an extrinsic
    ``eulerseq`` as intrinsic, names every unnamed body alike, leaves geoms without contacts
    out of inertias and gives mesh geoms none of their own; and equality constraints. Rewrites
    the tree (in place) for Pinocchio's parser where it can: names unnamed bodies, gathers
    several top-level trees under one static body, chains the joints of a body (see the module
    docstring), gives contacts to geoms without (their mass counted, as MuJoCo does). Also
    returns the bodies it added or named (name -> the element and line to point at in errors)
    and whether it changed the tree."""
    unimported: list[Unimported] = []

    def refuse(message: str, element: ET.Element, what: str | None = None) -> MjcfError:
        where = what or f"{element.tag} '{element.get('name', '')}'"
        return MjcfError(message, file, where, line(element))

    world = root.find("worldbody")
    if world is None:
        raise MjcfError("no <worldbody>", file, "mujoco")
    for e in root.iter():
        if e.tag in _REFUSED_HOLDERS:
            raise refuse(f"<{e.tag}> is not supported (Pinocchio's MJCF parser drops what it "
                         "holds): write its bodies in place", e, e.tag)  # fmt: skip
    compiler = root.find("compiler")
    seq = compiler.get("eulerseq", "xyz") if compiler is not None else "xyz"
    if seq != seq.lower():
        raise refuse(f"eulerseq '{seq}' (extrinsic, fixed axes) is not supported: Pinocchio's "
                     "parser reads it as intrinsic; give the angles in an intrinsic "
                     "(lower-case) sequence", compiler, "compiler")  # fmt: skip
    for equality in root.findall("equality"):
        for eq in equality:
            if eq.get("active", "true").strip().lower() == "false":
                unimported.append(Unimported(f"<{eq.tag} active=\"false\">", "an inactive "
                                             "equality constraint", line(eq)))  # fmt: skip
                continue
            label = f"equality/{eq.tag}" + (f" '{eq.get('name')}'" if eq.get("name") else "")
            if eq.tag == "joint":
                follower, leader = eq.get("joint1", ""), eq.get("joint2")
                coupling = (f"couples joint '{follower}' to joint '{leader}' (polycoef "
                            f"{eq.get('polycoef', '0 1 0 0 0')})" if leader else
                            f"holds joint '{follower}' at a position")  # fmt: skip
                raise refuse(f"{coupling}: joint couplings (mimic joints) are not supported yet "
                             "(imported as independent joints they would move freely and change "
                             "the robot)", eq, label)  # fmt: skip
            raise refuse(
                f"equality constraints ({eq.tag}) are not supported: titopfmu imports trees "
                "(model a loop with a titopfmu LoopClosure instead)",
                eq,
                label,
            )

    def is_free(joint: ET.Element) -> bool:
        return joint.tag == "freejoint" or joint.get("type") == "free"

    def moving(body: ET.Element) -> bool:
        return any(c.tag in ("joint", "freejoint") for c in body.iter())

    given: dict[str, ET.Element] = {}
    for body in world.iter("body"):
        name = body.get("name")
        if name and name in given:
            raise refuse(f"a second body named '{name}' (body names must be unique)", body)
        if name:
            given[name] = body
    taken = set(given)

    def fresh(stem: str) -> str:
        out, k = stem, 2
        while out in taken:
            out, k = f"{stem}_{k}", k + 1
        taken.add(out)
        return out

    # bodies the import adds or names: generated name -> (element, line) to point at in errors
    generated: dict[str, tuple[str, int | None]] = {}
    extra_lines: dict[int, int | None] = {}
    file_line = line

    def line(element: ET.Element) -> int | None:  # noqa: F811 - the lines of added bodies too
        n = file_line(element)
        return extra_lines.get(id(element)) if n is None else n

    parent_of = {c: p for p in world.iter() for c in p}
    for body in world.iter("body"):  # document order: a parent is named before its children
        if body.get("name"):
            continue
        parent = parent_of[body]
        k = [c for c in parent if c.tag == "body"].index(body) + 1
        stem = parent.get("name") if parent is not world else "world"
        body.set("name", fresh(f"{stem}_body{k}"))
        generated[body.get("name")] = (f"unnamed body (named '{body.get('name')}')", line(body))
    tops = world.findall("body")
    movers = [b for b in tops if moving(b)]
    free_tops = [b for b in movers if any(is_free(c) for c in b if c.tag in ("joint", "freejoint"))]
    changed = bool(generated)
    total_mass = compiler is not None and compiler.get("settotalmass", "-1").strip() not in (
        "-1", "0")
    if free_tops and total_mass and len(tops) > 1:  # Pinocchio would drop the static ones
        raise refuse("<compiler settotalmass> with other top-level bodies beside a free-flying "
                     "one: their masses count in MuJoCo's total; scale the masses in the file",
                     free_tops[0])  # fmt: skip
    if free_tops and movers[0] is not tops[0] and len(movers) == 1:
        world.remove(movers[0])  # the static ones before it are fixed to the world, and
        world.insert(list(world).index(tops[0]), movers[0])  # Pinocchio reads the first only
        tops, changed = world.findall("body"), True
    elif len(movers) > 1 or (movers and (movers[0] is not tops[0] or total_mass and len(tops) > 1)):
        if free_tops:
            extra = next(b for b in movers if b is not free_tops[0])
            raise refuse(
                "a second top-level body with joints beside a free-flying one: titopfmu "
                "imports one tree (one free-flying root, or bodies hanging from the world)",
                extra,
            )
        # several trees hanging from the world: one static top-level body holds them all (its
        # pose the identity: the Ground), as Pinocchio's parser reads the first one only (and
        # the static ones too under settotalmass: their masses count in MuJoCo's total)
        wrapper = ET.Element("body", {"name": fresh("world")})
        world.insert(list(world).index(tops[0]), wrapper)
        for b in tops:
            world.remove(b)
            wrapper.append(b)
        extra_lines[id(wrapper)] = line(world)
        generated[wrapper.get("name")] = ("worldbody", line(world))
        tops, changed = [wrapper], True
    # several joints in one body, composed in order about the body frame as MuJoCo does: a chain
    # of bodies, one joint each, at the body's frame; massless intermediate ones named
    # <body>__<joint>, the last one the body itself with its inertia, its last joint and children
    parent_of = {c: p for p in world.iter() for c in p}
    for body in list(world.iter("body")):
        joints = [c for c in body if c.tag in ("joint", "freejoint")]
        if len(joints) < 2:
            continue
        if any(is_free(j) for j in joints):
            raise refuse(f"a free joint and {len(joints) - 1} other joint(s) in one body: a free "
                         "joint must be alone in its body", body)  # fmt: skip
        parent, bname = parent_of[body], body.get("name")
        index = list(parent).index(body)
        parent.remove(body)
        pose_attrs = {a: body.attrib.pop(a) for a in _POSE if a in body.attrib}
        holder = parent
        for k, joint in enumerate(joints[:-1]):
            jname = joint.get("name") or f"joint{k + 1}"
            attrs = {"name": fresh(f"{bname}__{jname}"), **(pose_attrs if k == 0 else {})}
            if body.get("childclass"):
                attrs["childclass"] = body.get("childclass")
            link = ET.Element("body", attrs)
            body.remove(joint)
            link.append(joint)
            if holder is parent:
                parent.insert(index, link)
            else:
                holder.append(link)
            holder = link
            extra_lines[id(link)] = line(joint)
            generated[attrs["name"]] = (f"joint '{jname}' of body '{bname}'", line(joint))
        holder.append(body)
        changed = True
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
    geom_defaults, joint_defaults = _defaults(root, "geom"), _defaults(root, "joint")
    parent_of = {c: p for p in world.iter() for c in p}

    def class_of(element: ET.Element, body: ET.Element) -> str:
        node: ET.Element | None = body
        while element.get("class") is None and node is not None and node is not world:
            if node.get("childclass"):
                return node.get("childclass")
            node = parent_of.get(node)
        return element.get("class") or "main"

    def attributes(element: ET.Element, body: ET.Element, defaults: dict) -> dict[str, str]:
        cls = class_of(element, body)
        return {**defaults.get("main", {}), **defaults.get(cls, {}), **element.attrib}

    compiler_attrs = compiler.attrib if compiler is not None else {}
    degrees = compiler_attrs.get("angle", "degree").strip().lower() != "radian"
    from_geoms = compiler_attrs.get("inertiafromgeom", "auto").strip().lower()
    option = root.find("option")
    flag = option.find("flag") if option is not None else None
    switches = _Switches(
        degrees=degrees,
        autolimits=compiler_attrs.get("autolimits", "true").strip().lower() == "true",
        limits=flag is None or flag.get("limit", "enable").strip().lower() != "disable",
        friction=flag is None or flag.get("frictionloss", "enable").strip().lower() != "disable",
    )
    laws: dict[str, _Law] = {}
    visual: list[ET.Element] = []  # geoms without contacts that give their body its inertia

    for body in world.iter("body"):
        joints = [c for c in body if c.tag in ("joint", "freejoint")]
        if any(is_free(j) for j in joints):
            if body is not base:
                raise refuse(
                    "a free joint is supported on the first top-level body only (the "
                    "free-flying root; Pinocchio's parser drops any other)",
                    body,
                )
            floating = True
        inertia_from_geoms = from_geoms == "true" or (
            from_geoms != "false" and body.find("inertial") is None)
        for geom in body.findall("geom") if inertia_from_geoms else ():
            attrs = attributes(geom, body, geom_defaults)
            if attrs.get("contype") == "0" and attrs.get("conaffinity") == "0":
                visual.append(geom)  # MuJoCo counts its mass, Pinocchio's parser does not
            if attrs.get("type") == "mesh":
                raise refuse(
                    "the body has no <inertial> and a mesh geom: MuJoCo computes the mesh's "
                    "mass and inertia, Pinocchio's parser does not; give the body an <inertial>",
                    body,
                )
        for joint in joints:
            if joint.tag != "joint":
                continue  # <freejoint/>: no default class, no damping, no spring
            attrs = attributes(joint, body, joint_defaults)
            el = f"joint '{joint.get('name', '')}'" if joint.get("name") else f"joint of body "\
                 f"'{body.get('name', '')}'"  # fmt: skip
            armature = _number(attrs.get("armature"), 0.0, "<joint armature>", file, el,
                               line(joint), MjcfError)  # fmt: skip
            if not armature >= 0.0:  # imported from Pinocchio's reading (model.armature)
                raise MjcfError(f"armature {armature:g} is negative (a rotor inertia: it must be "
                                ">= 0)", file, el, line(joint))  # fmt: skip
            given = [a for a in ("damping", "stiffness", "springref") if a in attrs]
            friction, limits, stop = _friction_and_limits(attrs, switches, el, line(joint), file)
            given += [a for a, on in (("frictionloss", friction > 0.0),
                                      ("range", limits is not None)) if on]  # fmt: skip
            if not given:
                continue
            k, d, q_ref = (_number(attrs.get(a), 0.0, f"<joint {a}>", file, el, line(joint),
                                   MjcfError) for a in ("stiffness", "damping", "springref"))
            for what, v in (("stiffness", k), ("damping", d)):
                if v < 0.0:
                    raise MjcfError(f"{what} {v:g} is negative (it must be >= 0)", file, el,
                                    line(joint))  # fmt: skip
            if attrs.get("type", "hinge") == "hinge" and degrees:
                q_ref = float(np.deg2rad(q_ref))
            laws[body.get("name", "")] = _Law(k, d, q_ref, el, line(joint),
                                              f"<joint {' '.join(given)}>", friction=friction,
                                              limits=limits, stop=stop)  # fmt: skip
    for body in (world, *world.iter("body")):  # MuJoCo's contacts: every geom that can collide
        for geom in body.findall("geom"):
            attrs = attributes(geom, body, geom_defaults)
            if not (attrs.get("contype", "1") == "0" and attrs.get("conaffinity", "1") == "0"):
                unimported.append(Unimported("<geom>", "collision geometry: contacts are not "
                                             "modelled", line(geom)))  # fmt: skip
    for geom in visual:  # in the copy Pinocchio reads: its mass counted, as in MuJoCo's
        geom.set("contype", "1")  # inertia (contacts are not modelled)
        changed = True
    return floating, pose, laws, unimported, generated, changed


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
    root, line = _parse_xml(text, file, MjcfError)
    if root.tag != "mujoco":
        raise MjcfError(f"the root element is <{root.tag}>, not <mujoco>", file, root.tag,
                        line(root))  # fmt: skip
    scanned = _scan(root, line, MJCF_RULES)  # the file as written
    floating, ground_pose, laws, unimported, generated, changed = _check_tree(root, line, file)
    unimported = scanned + unimported
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
                            line(option))  # fmt: skip
    try:
        with warnings.catch_warnings(), tempfile.TemporaryDirectory() as tmp:
            warnings.simplefilter("ignore")
            parsed = file
            if changed:  # the tree with the bodies named, chained or gathered by _check_tree
                parsed = str(Path(tmp) / "model.xml")
                Path(parsed).write_bytes(ET.tostring(root))
            model = pin.buildModelFromMJCF(parsed)
    except (RuntimeError, ValueError) as exc:
        msg = " ".join(str(exc).split()).replace(parsed, file)
        raise MjcfError(f"Pinocchio's MJCF parser refused it: {msg}", file) from None
    compiler = root.find("compiler")
    if compiler is not None and compiler.get("settotalmass") is not None:
        total = _number(compiler.get("settotalmass"), -1.0, "<compiler settotalmass>", file,
                        "compiler", line(compiler), MjcfError)  # fmt: skip
        mass = sum(float(inertia.mass) for inertia in model.inertias)  # [0]: the static bodies
        if total > 0.0 and mass > 0.0:  # MuJoCo scales every body's mass and inertia alike
            for j, inertia in enumerate(list(model.inertias)):
                model.inertias[j] = pin.Inertia(total / mass * inertia.mass, inertia.lever,
                                                total / mass * inertia.inertia)  # fmt: skip
    q0 = None
    for entry in model.referenceConfigurations:
        if entry.key() == "qpos0":
            q0 = np.asarray(entry.data(), dtype=float)
    try:
        system = _system_from_model(pin, model, text, file, floating, gravity,
                                    name or re.sub(r"\W", "_", root.get("model", "")) or None,
                                    fmt=_MJCF, q0=q0, ground_pose=ground_pose,
                                    laws=lambda joint, body: laws.get(body),
                                    unimported=unimported)  # fmt: skip
    except MjcfError as exc:  # point at the file's element where the import added a body
        element, at = exc.element, exc.line
        for body, (where, n) in generated.items():
            if exc.element == f"body '{body}'":
                element, at = where, n
        raise MjcfError(exc.reason.replace("bodys", "bodies"), file, element, at) from None
    _warn_unimported(unimported, file, MjcfWarning, "MJCF elements")
    return system


__all__ = ["MJCF_RULES", "MUJOCO_GRAVITY", "MjcfError", "MjcfWarning", "import_mjcf"]
