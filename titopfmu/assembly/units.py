"""SI units of the named states, inputs and outputs of a linear model (where they are known).

Only names: which block a signal belongs to and what kind of signal it is. A block's states and
signal ports have the units their type declares (:mod:`titopfmu.blocks.declarations`); the
engine's derived signals (``position``, ``twist``, ``acc``...) and the ports' motion vectors and
wrenches have theirs below. A name whose unit is not known (a signal block's output, an energy's
momentum) gets "".
"""

from __future__ import annotations

import re

_INDEX = re.compile(r"^(.*)\[(\d+)\]$")

#: the coordinates of a linear model's chart (attitude deviations rx, ry, rz) and of the states
_VEC = {"x": "m", "y": "m", "z": "m", "rx": "rad", "ry": "rad", "rz": "rad", "vx": "m/s",
        "vy": "m/s", "vz": "m/s", "wx": "rad/s", "wy": "rad/s", "wz": "rad/s"}  # fmt: skip
_MOTION = ["m/s2"] * 3 + ["rad/s2"] * 3 + ["m/s"] * 3 + ["rad/s"] * 3 + ["m"] * 3 + ["rad"] * 3
_WRENCH = ["N"] * 3 + ["N.m"] * 3
#: the engine's signals of a body (Engine.signal_names)
_SIGNALS = {
    "position": ["m"] * 3, "com": ["m"] * 3, "euler": ["rad"] * 3,
    "twist": ["m/s"] * 3 + ["rad/s"] * 3, "acc": ["m/s2"] * 3 + ["rad/s2"] * 3,
    "m": _MOTION, "W": _WRENCH, "kinetic_energy": ["J"], "potential_energy": ["J"],
}  # fmt: skip


def split_index(name: str) -> tuple[str, int | None]:
    """``"a.b[3]"`` -> ("a.b", 2) (0-based); ``"a.b"`` -> ("a.b", None)."""
    m = _INDEX.match(name)
    return (m.group(1), int(m.group(2)) - 1) if m else (name, None)


def units_of(system, name: str, width: int | None = None) -> list[str]:
    """Units of the components of ``name`` (``block.signal`` or ``block.signal[i]``, a state
    ``block.state.s``, a core input): a list of ``width`` strings (the signal's own width when
    None), "" where unknown."""
    base, idx = split_index(name)
    bname, _, rest = base.partition(".")
    block = system.blocks.get(bname)
    decl = getattr(type(block), "declaration", None) if block is not None else None
    port = decl.port(rest) if decl is not None else None
    units: list[str] = []
    if rest.startswith("state."):
        s = rest[6:]
        declared = {st.name: st.unit for st in decl.states} if decl is not None else {}
        units = [declared[s] if s in declared else _VEC.get(s, "")]
    elif port is not None and port.units:
        units = list(port.units)
    elif rest in _SIGNALS:
        units = list(_SIGNALS[rest])
    elif block is not None and rest in getattr(block, "external", {}):
        units = list(_WRENCH)
    elif rest.endswith((".m", ".W")):  # a port's motion vector or wrench
        units = list(_MOTION if rest.endswith(".m") else _WRENCH)
    if idx is not None:
        return [units[idx] if idx < len(units) else ""]
    n = len(units) if width is None else width
    return [units[k] if k < len(units) else "" for k in range(n)]
