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
* ``planar`` (and mimic joints) -> an error.

Each body block is named after its (child) link, each child port after the URDF joint that
hangs from it; the body's reference point P and frame are the joint frame, its ``com`` and
``inertia`` those of the link's ``<inertial>`` (plus merged fixed links) in that frame. Each
joint effort ``joint.tau`` is fed by a ``Constant`` named ``<link>_tau`` (0). The URDF joint of
every block is kept in ``system.urdf_joints`` (URDF joint name -> block name).

Ignored, with one warning: position, velocity and effort limits, joint dynamics (damping,
friction). Meshes and all geometry are not read (a missing mesh file is no problem).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from .assembly.system import System
from .blocks import (
    Constant,
    FreeBody,
    Ground,
    PrismaticBody,
    RevoluteBody,
    RigidBody,
    SphericalBody,
    TitopError,
)

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
    """Something in the URDF is ignored by the import (limits, joint dynamics)."""


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
    system = _system_from_model(pin, model, text, file, floating_base, gravity, name)
    _warn_ignored_limits(text, file)
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
                       fmt: _Format = _URDF, q0=None, ground_pose=None) -> System:  # fmt: skip
    """The System of a Pinocchio model: a body block per joint (Pinocchio has merged the fixed
    ones), named after its link; ``q0`` (Pinocchio's configuration vector) gives the initial
    joint coordinates and the free root's pose (None: zero, the root at the origin);
    ``ground_pose`` the Ground's ``position`` and ``euler`` (fixed base; None: the origin)."""
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

    def body_params(j):
        inertia = model.inertias[j]
        mass = float(inertia.mass)
        if not mass > 0.0:
            el, line = where_link(j)
            raise fmt.error(
                "massless moving link (after merging the links fixed to it): a joint body needs "
                f"a mass and an inertia that its joint can move; {fmt.massless_hint}",
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

    def coordinates(j):
        jm = model.joints[j]
        return None if q0 is None else np.asarray(q0[jm.idx_q : jm.idx_q + jm.nq], dtype=float)

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
                block = RigidBody(bname, **pose, **body_params(j))
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
                                             **body_params(j))  # fmt: skip
                    else:
                        block = PrismaticBody(bname, axis=S[0:3], P_ab=R,
                                              x0=0.0 if q is None else float(q[0]),
                                              **body_params(j))  # fmt: skip
                elif kind == "JointModelSpherical":
                    quat = None if q is None else q[[3, 0, 1, 2]]  # Pinocchio: [x, y, z, w]
                    block = SphericalBody(bname, P_a0b=R, quaternion0=quat, **body_params(j))
                elif kind == "JointModelFreeFlyer":
                    block = FreeBody(bname, P_a0b=R, **body_params(j))
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
        except TitopError as exc:
            el, line = where_link(j)
            raise fmt.error(f"{exc}", file, el, line) from None
        system.add(block)
        system.urdf_joints[model.names[j]] = bname
        if j >= first:
            system.connect(f"{block_of[model.parents[j]]}.{port_of[j]}", f"{bname}.P")
            tau = _block_name(f"{bname}_tau", taken)
            system.add(Constant(tau, np.zeros(block.joint.dof)))
            system.connect(f"{tau}.y", f"{bname}.joint.tau")
    return system


def _warn_ignored_limits(text, file) -> None:
    if text is not None and ("<limit" in text or "<dynamics" in text):
        warnings.warn(
            f"{file}: joint limits (position, velocity, effort) and joint dynamics (damping, "
            "friction) are ignored by the titopfmu import",
            UrdfWarning,
            stacklevel=4,
        )


__all__ = ["DEFAULT_GRAVITY", "DescriptionError", "UrdfError", "UrdfWarning", "import_urdf"]
