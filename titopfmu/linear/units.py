"""SI units of the named states, inputs and outputs of a linear model (where they are known).

Only names: which block a signal belongs to and what kind of signal it is. A name whose unit
is not known (a signal block's output, an energy's momentum, a multi-dof joint motion) gets "".
"""

from __future__ import annotations

from ..blocks.bodies import JointBody, PrismaticBody, RevoluteBody
from .linearize import split_index

_VEC = {"x": "m", "y": "m", "z": "m", "rx": "rad", "ry": "rad", "rz": "rad", "vx": "m/s",
        "vy": "m/s", "vz": "m/s", "wx": "rad/s", "wy": "rad/s", "wz": "rad/s"}  # fmt: skip
_MOTION = ["m/s2"] * 3 + ["rad/s2"] * 3 + ["m/s"] * 3 + ["rad/s"] * 3 + ["m"] * 3 + ["rad"] * 3
_WRENCH = ["N"] * 3 + ["N.m"] * 3
_SIGNALS = {
    "position": ["m"] * 3, "com": ["m"] * 3, "euler": ["rad"] * 3,
    "twist": ["m/s"] * 3 + ["rad/s"] * 3, "acc": ["m/s2"] * 3 + ["rad/s2"] * 3,
    "m": _MOTION, "W": _WRENCH, "kinetic_energy": ["J"], "potential_energy": ["J"],
}  # fmt: skip


def _one_dof(block) -> tuple[str, str, str, str] | None:
    """(position, rate, acceleration, effort) units of a 1-dof joint body, or None."""
    if isinstance(block, PrismaticBody):
        return "m", "m/s", "m/s2", "N"
    if isinstance(block, RevoluteBody):
        return "rad", "rad/s", "rad/s2", "N.m"
    return None


def units_of(system, name: str, width: int | None = None) -> list[str]:
    """Units of the components of ``name`` (``block.signal`` or ``block.signal[i]``, a state
    ``block.state.s``, a core input): a list of ``width`` strings (the signal's own width when
    None), "" where unknown."""
    base, idx = split_index(name)
    bname, _, rest = base.partition(".")
    block = system.blocks.get(bname)
    units: list[str] = []
    dof = _one_dof(block) if block is not None else None
    if rest.startswith("state."):
        s = rest[6:]
        if s in ("q", "qd") and dof is not None:
            units = [dof[0] if s == "q" else dof[1]]
        else:
            units = [_VEC.get(s, "")]
    elif rest in _SIGNALS:
        units = list(_SIGNALS[rest])
    elif rest == "joint.tau" and dof is not None:
        units = [dof[3]]
    elif rest == "joint.m" and dof is not None:
        units = [dof[2], dof[1], dof[0]]
    elif block is not None and rest in getattr(block, "external", {}):
        units = list(_WRENCH)
    elif isinstance(block, JointBody) and rest in ("joint.tau", "joint.m"):
        units = []  # a multi-dof joint: components not named here
    elif rest.endswith((".m", ".W")):  # a port's motion vector or wrench
        units = list(_MOTION if rest.endswith(".m") else _WRENCH)
    if idx is not None:
        return [units[idx] if idx < len(units) else ""]
    n = len(units) if width is None else width
    return [units[k] if k < len(units) else "" for k in range(n)]
