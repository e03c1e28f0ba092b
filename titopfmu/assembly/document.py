"""A System as a model-file document (the writing half of :mod:`titopfmu.modelfile`).

:func:`to_dict` turns a :class:`~titopfmu.assembly.system.System` into the document of the
format ``titopfmu-model`` version 1 (docs/model-files.md), each block from its type's declaration
(:mod:`titopfmu.blocks.declarations`); :func:`dumps` and :func:`save` write it as YAML or JSON.
Reading is :mod:`titopfmu.modelfile`'s, one layer up (it builds Systems). What a model file says
beyond blocks and connections is a :class:`ModelInfo`, kept on a loaded system.
"""

from __future__ import annotations

import io
import itertools
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..blocks import BLOCK_CLASSES, Function, TimeFunction
from ..blocks.base import TitopError, declared_values
from ..blocks.bodies import BodyBlock
from ..blocks.declarations import BlockType, Parameter
from ..blocks.expressions import TimeExpression

FORMAT = "titopfmu-model"
VERSION = 1

#: File ``type`` -> block class (the class name, exactly), from the block declarations
#: (:data:`titopfmu.blocks.declarations.BLOCK_TYPES`).
BLOCK_TYPES = BLOCK_CLASSES


class ModelFileError(TitopError):
    """A model file is invalid. ``file``, ``element`` (e.g. ``block 'arm'``) and ``line``
    (1-based, None when unknown) say where."""

    def __init__(
        self,
        message: str,
        file: str = "<string>",
        element: str | None = None,
        line: int | None = None,
    ) -> None:
        self.file, self.element, self.line, self.reason = file, element, line, message
        where = file if line is None else f"{file}:{line}"
        super().__init__(f"{where}: {element + ': ' if element else ''}{message}")


@dataclass
class ModelInfo:
    """What a model file says beyond the blocks and connections (kept on a loaded system as
    ``system.model_info`` and written back by :func:`to_dict`)."""

    description: str | None = None
    outputs: dict[str, str] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    experiment: dict[str, Any] = field(default_factory=dict)
    path: str | None = None


# -- System -> dict ------------------------------------------------------------------------------


def _exact_axis(u: np.ndarray) -> list[float]:
    """A vector v whose normalisation v/|v| (what the joint blocks do) is exactly the unit axis u,
    so that a saved and reloaded block has bit for bit the same axis (u itself is not always
    such a vector: normalising a unit vector can move its last bit)."""

    def norm(v):
        return v / float(np.linalg.norm(v))

    if np.array_equal(norm(u), u):
        return u.tolist()
    sp = np.spacing(u)
    for d in itertools.product(range(-4, 5), repeat=3):
        v = u + np.array(d) * sp
        if np.array_equal(norm(v), u):
            return v.tolist()
    for s in np.linspace(0.5, 2.0, 3001):
        if np.array_equal(norm(u * s), u):
            return (u * s).tolist()
    return u.tolist()  # pragma: no cover - not met in 25 000 random axes


def _vec(v) -> list:
    return np.asarray(v, dtype=float).tolist()


def _is_zero(v) -> bool:
    return not np.any(np.asarray(v, dtype=float))


def _is_eye(m) -> bool:
    return np.array_equal(np.asarray(m, dtype=float), np.eye(3))


def _is_default(p: Parameter, v) -> bool:
    if p.structural:
        return not v
    if p.check == "flexible":
        return v is None
    if p.check == "elastic":
        return not np.any(np.asarray(v, dtype=float))  # zeros: the default
    try:
        return bool(np.array_equal(np.asarray(v, dtype=float), np.asarray(p.default, dtype=float)))
    except (TypeError, ValueError):
        return False


def _plain(v):
    """A numpy number or array of a flexible part's spec as JSON's (json.dumps' default)."""
    if isinstance(v, (np.ndarray, np.generic)):
        return v.tolist()
    raise TypeError(f"not a model file's value: {v!r}")


def _relative(v: str, base: Path | None) -> str:
    """A flexible part's file path as a model file in the folder ``base`` holds it: relative
    to ``base`` (so that the folder can move), or as given when there is no base or the path is
    on another drive."""
    if base is None:
        return v
    try:
        return Path(os.path.relpath(os.path.abspath(v), os.path.abspath(base))).as_posix()
    except ValueError:  # another drive (Windows)
        return v


def _file_value(p: Parameter, v, base: Path | None = None):
    """A parameter value as a model file holds it (plain lists and floats); a flexible part's
    file paths relative to ``base``, the folder of the file written (None: as given)."""
    if p.check == "children":
        return {c: _vec(x) for c, x in v.items()}
    if p.check == "external":
        return {n: {"point": _vec(e["point"]), "frame": e["frame"]} for n, e in v.items()}
    if p.check == "axis":
        return _exact_axis(np.asarray(v, dtype=float))
    if p.check == "flexible":  # a path or a spec (block_to_dict refuses anything else)
        if isinstance(v, str):
            return _relative(v, base)
        from ..flex.spec import PATH_KEYS

        spec = json.loads(json.dumps(v, default=_plain))
        return {k: _relative(x, base) if k in PATH_KEYS and isinstance(x, str) else x
                for k, x in spec.items()}  # fmt: skip
    if p.check == "free_vector":
        a = np.asarray(v, dtype=float).reshape(-1)
        return float(a[0]) if a.size == 1 else a.tolist()
    if p.json == "boolean":
        return bool(v)
    if p.shape == ():
        return float(v)
    return _vec(v)


def block_to_dict(block, gravity=None, base: Path | None = None) -> dict:
    """One block as a file entry, from its type's declaration: every stored parameter, except
    those equal to their declared default (the axis of a joint and the required ones are always
    written) and ``gravity`` equal to the file-level one; a flexible part's file paths relative
    to the folder ``base`` of the file written (None: as given)."""
    t = type(block).__name__
    if BLOCK_TYPES.get(t) is not type(block):
        if isinstance(block, Function):
            why = "a Function block runs Python code, which a model file cannot hold"
        else:
            why = f"type {t} has no model-file form (types: {', '.join(BLOCK_TYPES)})"
        raise ModelFileError(why, "<system>", f"block '{block.name}'")
    d: dict[str, Any] = {"name": block.name, "type": t}
    if isinstance(block, TimeFunction):
        if not isinstance(block.f, TimeExpression):
            raise ModelFileError(
                "its function f is Python code, which a model file cannot hold; build it on a "
                "titopfmu.modelfile.TimeExpression (an expression of t) to save it",
                "<system>",
                f"block '{block.name}' (TimeFunction)",
            )
        e = block.f.expression
        d["expression"] = e if isinstance(e, str) else list(e)
        d["size"] = block.size
        return d
    decl: BlockType = block.declaration
    values = declared_values(block)
    for p in decl.file_parameters():
        v = values[p.name]
        if p.name == "gravity":
            if gravity is not None and np.array_equal(v, gravity):
                continue
        elif not p.required and p.check != "axis" and _is_default(p, v):
            continue
        if p.check == "flexible" and not isinstance(v, (str, Mapping)):
            raise ModelFileError(
                "its flexible part is a ReducedModel built in Python, which a model file names "
                "by its file: write it with titopfmu.flex.write_reduced_model and give the "
                "block flexible=<that path>", "<system>", f"block '{block.name}'")  # fmt: skip
        d[p.name] = _file_value(p, v, base)
    return d


def to_dict(system, base: Path | None = None) -> dict:
    """The model-file document of ``system`` (plain lists, floats and strings); file paths
    relative to the folder ``base`` the document is written in (None: as given)."""
    bodies = [b for b in system.blocks.values() if isinstance(b, BodyBlock)]
    gravity = None
    if bodies and all(np.array_equal(b.gravity, bodies[0].gravity) for b in bodies):
        gravity = bodies[0].gravity
    info: ModelInfo | None = getattr(system, "model_info", None)
    doc: dict[str, Any] = {"format": FORMAT, "version": VERSION, "name": system.name}
    if info is not None and info.description:
        doc["description"] = info.description
    if gravity is not None:
        doc["gravity"] = _vec(gravity)
    doc["blocks"] = [block_to_dict(b, gravity, base) for b in system.blocks.values()]
    doc["connections"] = [[a, b] for a, b in system.connections]
    if info is not None:
        for key in ("outputs", "units", "experiment"):
            if getattr(info, key):
                doc[key] = dict(getattr(info, key))
    return doc


def dumps(system, fmt: str = "yaml", base: Path | None = None) -> str:
    """The model file of ``system`` as text, ``fmt`` = ``"yaml"`` or ``"json"``; file paths
    relative to the folder ``base`` (None: as given)."""
    doc = to_dict(system, base)
    if fmt == "json":
        return json.dumps(doc, indent=2) + "\n"
    if fmt != "yaml":
        raise ValueError(f"fmt must be 'yaml' or 'json', not {fmt!r}")
    # YAML 1.2 resolution, as the reader's: a string that YAML 1.2 reads as a number ("1e-3",
    # a block named 1e3) is written quoted
    import yaml
    from yamlcore import CoreDumper

    class Dumper(CoreDumper):
        pass

    def flat(v) -> bool:  # vectors, pairs of port names and matrices in flow style
        return all(not isinstance(x, (dict, list)) for x in v) or all(
            isinstance(x, list) and all(isinstance(y, (int, float)) for y in x) for x in v
        )

    def rep_list(dumper, v):
        return dumper.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=flat(v))

    Dumper.add_representer(list, rep_list)
    out = io.StringIO()
    out.write(f"# titopfmu model file (docs/model-files.md): {system.name}\n")
    yaml.dump(doc, out, Dumper=Dumper, sort_keys=False, width=100, allow_unicode=True)
    return out.getvalue()


def save(system, path: str | Path) -> Path:
    """Write ``system`` to ``path`` (JSON if it ends in ``.json``, YAML otherwise); a flexible
    part's files named relative to the folder of ``path``."""
    path = Path(path)
    fmt = "json" if path.suffix.lower() == ".json" else "yaml"
    path.write_text(dumps(system, fmt, base=path.parent), encoding="utf-8")
    return path
