"""FMI variable names, units and descriptions of the ports of a titopfmu FMU.

A port's components are named with FMI structured 1-based indices and listed consecutively:

* motion vector ``X.m[1..18]``: [v̇_P (m/s2), ω̇ (rad/s2), v_P (m/s), ω (rad/s), IP (m),
  Θ = [φ, θ, ψ] (rad, 3-2-1)], everything projected in the frame the description names except
  the Euler angles Θ, which give the attitude of that frame in R_i;
* wrench ``X.W[1..6]``: [F (N), T (N.m) about the port point];
* joint motion ``joint.m[1..3k]``: [q̈, q̇, q]; joint effort ``joint.tau`` (k = 1) or
  ``joint.tau[1..k]``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..blocks.standalone import StandaloneBlock
from .catalog import FmuType

#: SI units used by the FMUs, as FMI 2.0 BaseUnit exponents.
UNIT_DEFINITIONS: dict[str, dict[str, int]] = {
    "m": {"m": 1},
    "m/s": {"m": 1, "s": -1},
    "m/s2": {"m": 1, "s": -2},
    "rad": {"rad": 1},
    "rad/s": {"rad": 1, "s": -1},
    "rad/s2": {"rad": 1, "s": -2},
    "N": {"kg": 1, "m": 1, "s": -2},
    "N.m": {"kg": 1, "m": 2, "s": -2},
    "kg": {"kg": 1},
    "kg.m2": {"kg": 1, "m": 2},
    "s": {"s": 1},
}

_MOTION = [
    ("linear acceleration v̇_P", "m/s2"),
    ("angular acceleration ω̇", "rad/s2"),
    ("linear velocity v_P", "m/s"),
    ("angular velocity ω", "rad/s"),
    ("position IP", "m"),
]
_AXES = "xyz"
_EULER = ("roll φ", "pitch θ", "yaw ψ")


@dataclass(frozen=True)
class Component:
    name: str
    unit: str
    description: str


@dataclass(frozen=True)
class PortVariables:
    """The FMI variables of one channel of a standalone block."""

    core: str  # channel name in StandaloneBlock
    name: str  # FMI port name
    direction: str
    components: tuple[Component, ...]


def _frame(port: str) -> str:
    if port == "P":
        return "parent frame R_b"
    if port in ("left", "right"):
        return f"frame of the {port} side"
    return "body frame R_a"


def _motion(name: str, what: str, frame: str) -> list[Component]:
    comps = []
    for i in range(15):
        label, unit = _MOTION[i // 3]
        comps.append(
            Component(f"{name}[{i + 1}]", unit, f"{what}: {label} {_AXES[i % 3]}, in the {frame}")
        )
    for i in range(3):
        comps.append(
            Component(
                f"{name}[{16 + i}]", "rad",
                f"{what}: 3-2-1 Euler angle {_EULER[i]} of the {frame} in R_i",
            )
        )  # fmt: skip
    return comps


def _wrench(name: str, what: str, frame: str) -> list[Component]:
    return [
        Component(
            f"{name}[{i + 1}]", "N" if i < 3 else "N.m",
            f"{what}: {'force' if i < 3 else 'torque'} {_AXES[i % 3]}, in the {frame}",
        )
        for i in range(6)
    ]  # fmt: skip


def port_variables(sa: StandaloneBlock, ftype: FmuType) -> list[PortVariables]:
    """FMI variables of every channel of ``sa``, ports grouped (inputs and outputs of one port
    together), in value-reference order."""
    channels = [(c, "in") for c in sa.inputs] + [(c, "out") for c in sa.outputs]
    order: list[str] = []
    for c, _ in channels:
        port = ftype.rename.get(c.name, c.name).rsplit(".", 1)[0]
        if port not in order:
            order.append(port)
    q_unit = ftype.joint_unit or ""
    effort = {"rad": "N.m", "m": "N"}.get(q_unit, "")
    result = []
    for port in order:
        for c, direction in channels:
            name = ftype.rename.get(c.name, c.name)
            if name.rsplit(".", 1)[0] != port:
                continue
            frame = _frame(port)
            if name.endswith(".m") and c.size == 18:
                what = {
                    "P": "motion vector of the parent at the joint point P",
                    "body": "motion vector of this body at its reference point P",
                }.get(port, f"motion vector at port {port}")
                if name == "body.m" and direction == "in":
                    what = "imposed motion vector of the body at P"
                comps = _motion(name, what, frame)
            elif name.endswith(".W") and c.size == 6:
                what = {
                    "P": "wrench applied by this body on its parent at P",
                    "ext": "external wrench on the body at ext.point",
                    "body": "wrench that must act on the body at P (reaction / required effort)",
                }.get(port, f"wrench on this body at port {port}")
                if port in ("left", "right"):
                    what = f"wrench applied by the closure on its {port} side"
                if port == "ext":
                    frame = "body frame R_a, or R_i if ext.inertial"
                comps = _wrench(name, what, frame)
            elif name in ("joint.m", "joint.tau") and ftype.joint_layout:
                layout = ftype.joint_layout["m" if name == "joint.m" else "tau"]
                comps = [
                    Component(f"{name}[{i + 1}]", unit, label)
                    for i, (label, unit) in enumerate(layout)
                ]
            elif name == "joint.m":
                k = c.size // 3
                rate = {"rad": "rad/s", "m": "m/s"}.get(q_unit, "")
                acc = {"rad": "rad/s2", "m": "m/s2"}.get(q_unit, "")
                labels = [("joint acceleration q̈", acc), ("joint rate q̇", rate),
                          ("joint coordinate q", q_unit)]  # fmt: skip
                comps = [
                    Component(f"{name}[{i + 1}]", labels[i // k][1], labels[i // k][0])
                    for i in range(c.size)
                ]
            elif name == "joint.tau":
                desc = "joint driving effort (C_m in N.m, or F_m in N)"
                if c.size == 1:
                    comps = [Component(name, effort, desc)]
                else:
                    comps = [Component(f"{name}[{i + 1}]", effort, desc) for i in range(c.size)]
            else:  # generic signal
                comps = (
                    [Component(name, "", c.description)]
                    if c.size == 1
                    else [Component(f"{name}[{i + 1}]", "", c.description) for i in range(c.size)]
                )
            result.append(PortVariables(c.name, name, direction, tuple(comps)))
    return result
