"""Block parameters by name, as the model files spell them: read one, list them, or derive a
system with some of them changed (what a campaign or a sweep varies).

A name is ``block.key`` for a scalar (``pend1.mass``, ``slider_law.k``, ``pend1.theta0``),
``block.key[i]`` for one component of a vector and ``block.key[i,j]`` for one element of a
matrix (1-based, as signal names are: ``balloon.position[3]``, ``balloon.inertia[2,3]``), and
``block.children.PORT[i]`` for a coordinate of a child port's position. ``key`` is the keyword
of the block's constructor, as in a model file (``docs/model-files.md``); the values are in the
units and frames the block's docstring states (SI, radians). Initial conditions (``theta0``,
``position``, ``twist``...) are parameters like the others. Setting an off-diagonal element of an
``inertia`` (or of a loop closure's ``K`` or ``D``) sets its symmetric element too.

The changed blocks are built anew through their constructors, so a value a block refuses (a
negative mass, an inertia that is not positive) raises the block's own
:class:`~titopfmu.blocks.base.ParameterError`; blocks not changed are shared with the original
system, which is left untouched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import numpy as np

from .assembly.system import System
from .blocks.base import Block, ParameterError, TitopError, declared_values
from .flex.spec import spec_scalars, spec_with

_NAME = re.compile(
    r"^(?P<block>[^.\[\]\s]+)\.(?P<key>[A-Za-z_]\w*)(?:\.(?P<sub>[^.\[\]\s]+))?"
    r"(?:\[(?P<idx>[^\]]*)\])?$"
)

#: the checks of symmetric matrix parameters (inertia, a loop closure's K and D): element
#: (i, j) and (j, i) are set together
SYMMETRIC_CHECKS = ("inertia", "inertia_pd", "psd")


class ParameterNameError(TitopError):
    """A parameter name that does not name a numeric parameter of the system (the message says
    which part is wrong and what the block offers)."""


def _numeric(p) -> bool:
    """Whether a declared parameter is a number, a vector or a matrix a campaign may vary
    (not an expression, a size or an external wrench's frame)."""
    return p.json == "number" and p.check != "external"


def _entry(block: Block) -> dict:
    """Every numeric parameter of ``block`` by its declared name (the model file's key), the
    defaults included: arrays, and ``children`` as {port: [x, y, z]}."""
    from .modelfile import block_to_dict

    try:
        block_to_dict(block, None)  # the same refusal as a model file's, e.g. Python code
    except TitopError as exc:
        raise ParameterNameError(
            f"block '{block.name}' ({type(block).__name__}) has no named parameters: {exc}"
        ) from None
    return {k: v for k, v in _values(block).items() if k != "external"}


def _values(block: Block) -> dict:
    """The stored numeric parameters of a block of a declared type, by name."""
    decl = type(block).declaration
    values = declared_values(block)
    out: dict = {}
    for p in decl.stored:
        if not _numeric(p):
            continue
        v = values[p.name]
        if p.check == "children":
            out[p.name] = {c: [float(x) for x in pt] for c, pt in v.items()}
        else:
            out[p.name] = np.asarray(v, dtype=float)
    spec = getattr(block, "flexible_source", None)
    if isinstance(spec, Mapping):  # a flexible part built from a spec: its numbers by name
        out["flexible"] = {k: np.asarray(v) for k, v in spec_scalars(spec).items()}
    return out


def _scalar_names(prefix: str, v: np.ndarray) -> list[str]:
    if v.ndim == 0:
        return [prefix]
    if v.ndim == 1:
        return [f"{prefix}[{i + 1}]" for i in range(v.shape[0])]
    return [f"{prefix}[{i + 1},{j + 1}]" for i in range(v.shape[0]) for j in range(v.shape[1])]


def parameter_names(system: System, blocks: Iterable[str] | None = None) -> list[str]:
    """Every scalar parameter name of ``system`` (or of the named ``blocks``), in block order."""
    names: list[str] = []
    for b in system.blocks.values():
        if blocks is not None and b.name not in blocks:
            continue
        try:
            entry = _entry(b)
        except ParameterNameError:
            continue
        for k, v in entry.items():
            if k == "children":
                for c, p in v.items():
                    names += _scalar_names(f"{b.name}.children.{c}", np.asarray(p))
            elif k == "flexible":
                names += [f"{b.name}.flexible.{leaf}" for leaf in v]
            else:
                names += _scalar_names(f"{b.name}.{k}", v)
    return names


def _locate(system: System, name: str, entries: dict[str, dict]):
    """(block name, key, child port or None, index tuple) of a name, checked against the system."""
    m = _NAME.match(name) if isinstance(name, str) else None
    if m is None:
        raise ParameterNameError(
            f"parameter name {name!r} must read 'block.key', 'block.key[i]', 'block.key[i,j]' "
            "or 'block.children.PORT[i]' (1-based indices)"
        )
    b, key, sub, idx = m["block"], m["key"], m["sub"], m["idx"]
    if b not in system.blocks:
        raise ParameterNameError(
            f"parameter {name!r}: no block '{b}' in system '{system.name}'; blocks: "
            + ", ".join(system.blocks)
        )
    if b not in entries:
        entries[b] = _entry(system.blocks[b])
    entry = entries[b]
    keys = [k for k in entry if k not in ("children", "flexible")] + (
        [f"children.{c}" for c in entry["children"]] if "children" in entry else []
    ) + [f"flexible.{leaf}" for leaf in entry.get("flexible", {})]
    if key == "flexible" and "flexible" in entry:
        if sub is None or sub not in entry["flexible"] or idx is not None:
            raise ParameterNameError(
                f"parameter {name!r}: block '{b}' has no flexible-part number {sub!r}; its "
                "parameters: " + ", ".join(keys)
            )
        return b, key, sub, ()
    if key == "children":
        if sub is None or sub not in entry.get("children", {}):
            raise ParameterNameError(
                f"parameter {name!r}: block '{b}' has no child port {sub!r}; its parameters: "
                + ", ".join(keys)
            )
        value = np.asarray(entry["children"][sub])
    else:
        if sub is not None or key not in entry:
            raise ParameterNameError(
                f"parameter {name!r}: block '{b}' ({type(system.blocks[b]).__name__}) has no "
                f"parameter '{key}{'.' + sub if sub else ''}'; its parameters: " + ", ".join(keys)
            )
        value = entry[key]
    if idx is None:
        if value.ndim != 0:
            shape = "x".join(map(str, value.shape))
            example = _scalar_names(name, value)[0]
            raise ParameterNameError(
                f"parameter {name!r} has {shape} components; name one of them, e.g. {example!r}"
            )
        return b, key, sub, ()
    try:
        ix = tuple(int(s) for s in idx.split(","))
    except ValueError:
        raise ParameterNameError(f"parameter {name!r}: index [{idx}] must be integers") from None
    if len(ix) != value.ndim or any(not 1 <= i <= n for i, n in zip(ix, value.shape, strict=True)):
        shape = "x".join(map(str, value.shape)) if value.ndim else "a scalar"
        raise ParameterNameError(
            f"parameter {name!r}: index [{idx}] out of range ({b}.{key} is "
            f"{shape}; indices are 1-based)"
        )
    return b, key, sub, tuple(i - 1 for i in ix)


def check_parameter_names(system: System, names: Iterable[str]) -> None:
    """Raise :class:`ParameterNameError` unless every name is a scalar parameter of ``system``."""
    entries: dict[str, dict] = {}
    for n in names:
        _locate(system, n, entries)


def get_parameter(system: System, name: str) -> float:
    """The current value of the parameter ``name`` of ``system`` (SI units, radians)."""
    b, key, sub, ix = _locate(system, name, {})
    entry = _entry(system.blocks[b])
    v = np.asarray(entry[key][sub]) if key in ("children", "flexible") else entry[key]
    return float(v[ix]) if ix else float(v)


class ParameterSetter:
    """Systems derived from ``system`` with the parameters ``names`` set: the names are checked
    and the constructor arguments of their blocks gathered once, so that each :meth:`apply`
    only builds the changed blocks and wires a new system (what a campaign does per run)."""

    def __init__(self, system: System, names: Iterable[str]) -> None:
        self.system = system
        self.names = list(names)
        entries: dict[str, dict] = {}
        self._where = {n: _locate(system, n, entries) for n in self.names}
        self._kwargs: dict[str, dict] = {}
        self._classes: dict[str, type] = {}
        for b in {w[0] for w in self._where.values()}:
            block = system.blocks[b]
            self._classes[b] = type(block)
            kw = {}
            for key, value in declared_values(block).items():
                if key == "children":
                    kw[key] = {c: [float(x) for x in p] for c, p in value.items()}
                elif key == "external":
                    kw[key] = {n: {"point": [float(x) for x in e["point"]], "frame": e["frame"]}
                               for n, e in value.items()}  # fmt: skip
                elif key == "flexible":
                    kw[key] = value  # a reduced model or its file, as given (None: rigid)
                elif key in ("elastic_q0", "elastic_qdot0") and not np.any(value):
                    kw[key] = ()  # zeros, whatever the number of modes a campaign sets
                else:
                    v = np.asarray(value, dtype=float)
                    kw[key] = float(v) if v.ndim == 0 else v.tolist()
            self._kwargs[b] = kw

    def _symmetric(self, block: str, key: str) -> bool:
        decl = self._classes[block].declaration
        return key in decl.names and decl.parameter(key).check in SYMMETRIC_CHECKS

    def apply(self, values: Mapping[str, float]) -> System:
        """A new system with ``values`` (name -> value, names among :attr:`names`) set."""
        kwargs: dict[str, dict] = {}
        for name, value in values.items():
            if name not in self._where:
                raise ParameterNameError(
                    f"parameter {name!r} was not declared to this setter ({self.names})"
                )
            b, key, sub, ix = self._where[name]
            kw = kwargs.get(b)
            if kw is None:
                kw = kwargs[b] = dict(self._kwargs[b])
            value = float(value)
            if key == "flexible":  # a number of the spec: the part is built again
                kw["flexible"] = spec_with(kw["flexible"], sub, value)
            elif key == "children":
                pts = {c: list(p) for c, p in kw["children"].items()}
                pts[sub][ix[0]] = value
                kw["children"] = pts
            elif ix:
                arr = np.array(kw[key], dtype=float)
                arr[ix] = value
                if len(ix) == 2 and self._symmetric(b, key):
                    arr[ix[::-1]] = value
                kw[key] = arr.tolist()
            else:
                kw[key] = value
        new_blocks: dict[str, Block] = {}
        for b, kw in kwargs.items():
            try:
                new_blocks[b] = self._classes[b](b, **kw)
            except TitopError:
                raise
            except (TypeError, ValueError) as exc:
                names = ", ".join(n for n in values if self._where[n][0] == b)
                raise ParameterError(b, names, str(exc)) from None
        system = self.system
        out = System(system.name)
        out.add(*(new_blocks.get(n, blk) for n, blk in system.blocks.items()))
        for a, c in system.connections:
            out.connect(a, c)
        info = getattr(system, "model_info", None)
        if info is not None:
            out.model_info = info
        return out


def with_parameters(system: System, values: Mapping[str, float]) -> System:
    """A new :class:`System` equal to ``system`` but with the named parameters set to
    ``values`` (name -> value). Raises :class:`ParameterNameError` for a name that is not a
    parameter, and the block's :class:`~titopfmu.blocks.base.ParameterError` for a value it
    refuses. ``system`` is left untouched."""
    return ParameterSetter(system, values).apply(values)


__all__ = [
    "ParameterNameError",
    "ParameterSetter",
    "check_parameter_names",
    "get_parameter",
    "parameter_names",
    "with_parameters",
]
