"""Model files: a :class:`~titopfmu.System` as a versionable YAML (or JSON) text, and back.

>>> system = titopfmu.load("balloon.yaml")        # or titopfmu.loads(text)
>>> system.save("copy.yaml")                       # or dumps(system) / to_dict(system)

The format (``format: titopfmu-model``, ``version: 1``) is documented in ``docs/model-files.md``
and checked against the JSON Schema ``titopfmu/schema/model.schema.json``. Each block entry holds
the block's ``type`` (its class name), its ``name`` and the keyword arguments of its constructor;
connections are pairs of ``"block.port"`` references, in the order :meth:`System.connect` got
them; optional ``outputs`` (CSV column -> signal), ``units`` and ``experiment`` sections say how
``titopfmu run`` simulates the model.

Errors (:class:`ModelFileError`) name the file, the element (block or connection) and its line.
"""

from __future__ import annotations

import ast
import io
import itertools
import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from .assembly.system import AssemblyError, System
from .blocks import (
    Constant,
    FreeBody,
    FreeBodyInverse,
    Function,
    Ground,
    ImposedMotionBody,
    JointSpringDamper,
    LoopClosure,
    PrismaticBody,
    PrismaticBodyInverse,
    RevoluteBody,
    RevoluteBodyInverse,
    RigidBody,
    SphericalBody,
    SphericalBodyInverse,
    TimeFunction,
    TitopError,
    WeldedBody,
)
from .blocks.bodies import BodyBlock

FORMAT = "titopfmu-model"
VERSION = 1

#: File ``type`` -> block class (the class name, exactly).
BLOCK_TYPES = {
    cls.__name__: cls
    for cls in (
        RigidBody,
        ImposedMotionBody,
        Ground,
        WeldedBody,
        RevoluteBody,
        PrismaticBody,
        SphericalBody,
        FreeBody,
        RevoluteBodyInverse,
        PrismaticBodyInverse,
        SphericalBodyInverse,
        FreeBodyInverse,
        LoopClosure,
        Constant,
        JointSpringDamper,
        TimeFunction,
    )
}


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


# -- time functions from expressions ------------------------------------------------------------

_FUNCS = {
    n: getattr(np, n)
    for n in (
        "sin",
        "cos",
        "tan",
        "arcsin",
        "arccos",
        "arctan",
        "arctan2",
        "sinh",
        "cosh",
        "tanh",
        "exp",
        "log",
        "log10",
        "sqrt",
        "abs",
        "sign",
        "minimum",
        "maximum",
        "floor",
        "ceil",
        "heaviside",
        "hypot",
        "clip",
        "where",
    )
}
_CONSTS = {"pi": math.pi, "e": math.e}
_NODES = (
    ast.Expression,
    ast.BinOp,
    ast.UnaryOp,
    ast.Call,
    ast.Name,
    ast.Load,
    ast.Constant,
    ast.Compare,
    ast.IfExp,
    ast.List,
    ast.Tuple,
    ast.operator,
    ast.unaryop,
    ast.cmpop,
)


class TimeExpression:
    """``f(t)`` from arithmetic expressions of ``t`` (one per component, or one giving a list):
    numbers, ``+ - * / ** %``, comparisons, ``a if c else b``, ``pi``, ``e`` and the numpy
    functions of :data:`_FUNCS`. Nothing else is allowed (no attributes, no other names), so a
    model file cannot run arbitrary code. A :class:`TimeFunction` built on one can be saved."""

    def __init__(self, expression: str | list[str]) -> None:
        self.expression = expression
        exprs = [expression] if isinstance(expression, str) else list(expression)
        self._code = [self._compile(e) for e in exprs]

    @staticmethod
    def _compile(text: str):
        try:
            tree = ast.parse(str(text), mode="eval")
        except SyntaxError as exc:
            raise ValueError(f"expression {text!r}: {exc.msg}") from None
        for node in ast.walk(tree):
            if not isinstance(node, _NODES):
                raise ValueError(f"expression {text!r}: {type(node).__name__} is not allowed")
            if (
                isinstance(node, ast.Name)
                and node.id not in _FUNCS
                and node.id not in _CONSTS
                and node.id != "t"
            ):
                raise ValueError(f"expression {text!r}: unknown name {node.id!r}")
            if isinstance(node, ast.Call) and not (
                isinstance(node.func, ast.Name) and node.func.id in _FUNCS
            ):
                raise ValueError(f"expression {text!r}: only the functions {sorted(_FUNCS)}")
        return compile(tree, "<expression>", "eval")

    def __call__(self, t: float):
        env = {"__builtins__": {}, **_FUNCS, **_CONSTS, "t": t}
        vals = [eval(c, env) for c in self._code]  # noqa: S307 - AST checked above
        if isinstance(self.expression, str):
            return np.asarray(vals[0], dtype=float).reshape(-1)
        return np.array(vals, dtype=float).reshape(-1)

    def __repr__(self) -> str:
        return f"TimeExpression({self.expression!r})"


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


def block_to_dict(block, gravity=None) -> dict:
    """One block as a file entry (parameters equal to the constructor defaults are left out;
    ``gravity`` equal to the file-level one is left out)."""
    t = type(block).__name__
    if t not in BLOCK_TYPES:
        if isinstance(block, Function):
            why = "a Function block runs Python code, which a model file cannot hold"
        else:
            why = f"type {t} has no model-file form (types: {', '.join(BLOCK_TYPES)})"
        raise ModelFileError(why, "<system>", f"block '{block.name}'")
    d: dict[str, Any] = {"name": block.name, "type": t}
    if isinstance(block, BodyBlock):
        d["mass"] = float(block.mass)
        d["inertia"] = _vec(block.inertia)
        if not _is_zero(block.com):
            d["com"] = _vec(block.com)
        if block.child_names:
            d["children"] = {
                c: _vec(p) for c, p in zip(block.child_names, block.child_points, strict=True)
            }
        if block.external:
            d["external"] = {
                n: {"point": _vec(e.point), "frame": e.frame} for n, e in block.external.items()
            }
        if gravity is None or not np.array_equal(block.gravity, gravity):
            d["gravity"] = _vec(block.gravity)
    j = getattr(block, "joint", None)
    if isinstance(block, RigidBody):
        for key, v in (
            ("position", block.position0),
            ("euler", block.euler0),
            ("twist", block.twist0),
        ):
            if not _is_zero(v):
                d[key] = _vec(v)
    elif isinstance(block, Ground):
        if block.child_names:
            d["children"] = {
                c: _vec(p) for c, p in zip(block.child_names, block.child_points, strict=True)
            }
        for key, v in (("position", block.position), ("euler", block.euler)):
            if not _is_zero(v):
                d[key] = _vec(v)
    elif isinstance(block, WeldedBody):
        if not _is_eye(j.R_ab):
            d["P_ab"] = _vec(j.R_ab)
    elif isinstance(block, (RevoluteBody, PrismaticBody)):
        d["axis"] = _exact_axis(j.axis)
        dcm, key = (j.R_a0b, "P_a0b") if isinstance(block, RevoluteBody) else (j.R_ab, "P_ab")
        if not _is_eye(dcm):
            d[key] = _vec(dcm)
        if not block.inverse:
            names = (
                ("theta0", "theta_dot0") if isinstance(block, RevoluteBody) else ("x0", "x_dot0")
            )
            for key, v in zip(names, (block.q0, block.qd0), strict=True):
                if v != 0.0:
                    d[key] = float(v)
    elif isinstance(block, (SphericalBody, FreeBody)):
        if not _is_eye(j.R_a0b):
            d["P_a0b"] = _vec(j.R_a0b)
        if not block.inverse:
            extra = [("quaternion0", block.quaternion0)]
            if isinstance(block, FreeBody):
                extra = [("position0", block.position0), *extra, ("velocity0", block.velocity0)]
            extra.append(("omega0", block.omega0))
            for key, v in extra:
                if key == "quaternion0" and np.array_equal(v, [1.0, 0.0, 0.0, 0.0]):
                    continue
                if key == "quaternion0" or not _is_zero(v):
                    d[key] = _vec(v)
    elif isinstance(block, LoopClosure):
        d["K"] = _vec(block.K)
        if not _is_zero(block.D):
            d["D"] = _vec(block.D)
    elif isinstance(block, Constant):
        d["value"] = float(block.value[0]) if block.value.size == 1 else _vec(block.value)
    elif isinstance(block, JointSpringDamper):
        for key in ("k", "d", "q_ref"):
            if getattr(block, key) != 0.0:
                d[key] = float(getattr(block, key))
    elif isinstance(block, TimeFunction):
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


def to_dict(system: System) -> dict:
    """The model-file document of ``system`` (plain lists, floats and strings)."""
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
    doc["blocks"] = [block_to_dict(b, gravity) for b in system.blocks.values()]
    doc["connections"] = [[a, b] for a, b in system.connections]
    if info is not None:
        for key in ("outputs", "units", "experiment"):
            if getattr(info, key):
                doc[key] = dict(getattr(info, key))
    return doc


def dumps(system: System, fmt: str = "yaml") -> str:
    """The model file of ``system`` as text, ``fmt`` = ``"yaml"`` or ``"json"``."""
    doc = to_dict(system)
    if fmt == "json":
        return json.dumps(doc, indent=2) + "\n"
    if fmt != "yaml":
        raise ValueError(f"fmt must be 'yaml' or 'json', not {fmt!r}")
    import yaml

    class Dumper(yaml.SafeDumper):
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


def save(system: System, path: str | Path) -> Path:
    """Write ``system`` to ``path`` (JSON if it ends in ``.json``, YAML otherwise)."""
    path = Path(path)
    path.write_text(
        dumps(system, "json" if path.suffix.lower() == ".json" else "yaml"), encoding="utf-8"
    )
    return path


# -- text -> System ------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def schema() -> dict:
    """The JSON Schema of the format (``titopfmu/schema/model.schema.json``)."""
    text = resources.files("titopfmu").joinpath("schema/model.schema.json").read_text("utf-8")
    return json.loads(text)


def _line_map(text: str) -> dict[tuple, int]:
    """Path (tuple of keys and indices) -> 1-based line of every node of a YAML/JSON text."""
    import yaml

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return {}
    lines: dict[tuple, int] = {}

    def walk(node, path):
        lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                lines[path + (k.value,)] = k.start_mark.line + 1
                walk(v, path + (k.value,))
                lines[path + (k.value,)] = k.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                walk(v, path + (i,))

    if root is not None:
        walk(root, ())
    return lines


def _parse(text: str, file: str, is_json: bool) -> tuple[Any, dict]:
    import yaml

    if is_json:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ModelFileError(f"not valid JSON: {exc.msg}", file, None, exc.lineno) from None
    else:
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            msg = " ".join(str(getattr(exc, "problem", None) or exc).split())
            raise ModelFileError(
                f"not valid YAML: {msg}", file, None, None if mark is None else mark.line + 1
            ) from None
    return doc, _line_map(text)


class _Where:
    def __init__(self, doc, lines, file):
        self.doc, self.lines, self.file = doc, lines, file

    def line(self, path) -> int | None:
        path = tuple(path)
        while path not in self.lines and path:
            path = path[:-1]
        return self.lines.get(path)

    def element(self, path) -> str | None:
        path = list(path)
        if len(path) >= 2 and path[0] == "blocks" and isinstance(path[1], int):
            try:
                b = self.doc["blocks"][path[1]]
                name = b.get("name", f"#{path[1] + 1}")
                typ = f" ({b['type']})" if isinstance(b.get("type"), str) else ""
            except (KeyError, IndexError, TypeError, AttributeError):
                name, typ = f"#{path[1] + 1}", ""
            # element indices 1-based, as everywhere a user reads them (signals, blocks, lines)
            rest = "".join(f"[{p + 1}]" if isinstance(p, int) else f".{p}" for p in path[2:])
            return f"block '{name}'{typ}" + (f", parameter {rest.lstrip('.')}" if rest else "")
        if len(path) >= 2 and path[0] == "connections" and isinstance(path[1], int):
            try:
                return f"connection {path[1] + 1} {self.doc['connections'][path[1]]}"
            except (IndexError, TypeError, KeyError):
                return f"connection {path[1] + 1}"
        if not path:
            return None
        return "'" + ".".join(str(p + 1 if isinstance(p, int) else p) for p in path) + "'"

    def error(self, message, path) -> ModelFileError:
        return ModelFileError(message, self.file, self.element(path), self.line(path))


def _validate(doc, where: _Where) -> None:
    import jsonschema

    if not isinstance(doc, dict):
        raise where.error("a model file is a mapping with keys format, version, blocks...", ())
    if doc.get("format") != FORMAT:
        raise where.error(f"'format' must be '{FORMAT}' (got {doc.get('format')!r})", ("format",))
    if doc.get("version") != VERSION:
        raise where.error(
            f"unsupported version {doc.get('version')!r}; this titopfmu reads version {VERSION}",
            ("version",),
        )
    for i, b in enumerate(doc.get("blocks") or []):  # a clear message for an unknown type
        if isinstance(b, dict) and "type" in b and b["type"] not in BLOCK_TYPES:
            hint = (
                " (a Function runs Python code: not expressible in a file)"
                if b["type"] == "Function"
                else ""
            )
            raise where.error(
                f"unknown block type {b['type']!r}{hint}; known types: {', '.join(BLOCK_TYPES)}",
                ("blocks", i, "type"),
            )
    validator = jsonschema.Draft202012Validator(schema())
    errors = list(validator.iter_errors(doc))
    if errors:
        # the deepest error is the most precise one
        e = max(errors, key=lambda e: (len(e.absolute_path), -len(str(e.message))))
        e = jsonschema.exceptions.best_match([e]) or e
        path = list(e.absolute_path)
        msg = e.message
        if e.validator == "additionalProperties" and isinstance(e.instance, dict):
            extra = [k for k in e.instance if k not in e.schema.get("properties", {})]
            if extra:
                msg = f"unknown key(s) {', '.join(map(repr, extra))}; allowed: " + ", ".join(
                    k for k in e.schema.get("properties", {}) if k not in ("name", "type")
                )
                path.append(extra[0])
        more = f" (and {len(errors) - 1} more schema error(s))" if len(errors) > 1 else ""
        raise where.error(f"does not match the schema: {msg}{more}", path)


def from_dict(
    doc: dict, file: str = "<dict>", lines: dict | None = None, check: bool = True
) -> System:
    """Build the System of a model-file document (validated against the schema first)."""
    where = _Where(doc, lines or {}, file)
    _validate(doc, where)
    system = System(doc.get("name", Path(file).stem if file[0] != "<" else "system"))
    gravity = doc.get("gravity")
    for i, spec in enumerate(doc["blocks"]):
        kwargs = {k: v for k, v in spec.items() if k not in ("name", "type")}
        cls = BLOCK_TYPES[spec["type"]]
        if gravity is not None and issubclass(cls, BodyBlock) and "gravity" not in kwargs:
            kwargs["gravity"] = gravity
        if cls is TimeFunction:
            try:
                kwargs = {"f": TimeExpression(kwargs["expression"]), "size": kwargs["size"]}
            except ValueError as exc:
                raise where.error(str(exc), ("blocks", i, "expression")) from None
        try:
            system.add(cls(spec["name"], **kwargs))
        except TitopError as exc:
            param = getattr(exc, "parameter", None)
            path = ["blocks", i]
            if param:
                path.append(param.split("[")[0])
            msg = str(exc)
            for prefix in (f"block '{spec['name']}', ", f"parameter '{param}': "):
                if msg.startswith(prefix):
                    msg = msg[len(prefix) :]
            raise where.error(msg, path) from None
    for j, (a, b) in enumerate(doc.get("connections") or []):
        try:
            system.connect(a, b)
        except AssemblyError as exc:
            raise where.error(str(exc), ("connections", j)) from None
    if check:
        try:
            system.check()
        except AssemblyError as exc:
            raise ModelFileError(str(exc), file) from None
    system.model_info = ModelInfo(
        description=doc.get("description"),
        outputs=dict(doc.get("outputs") or {}),
        units=dict(doc.get("units") or {}),
        experiment=dict(doc.get("experiment") or {}),
        path=None if file.startswith("<") else file,
    )
    _check_outputs(system, where)
    return system


def _check_outputs(system: System, where: _Where) -> None:
    """Output signals must name a block of the system (the engine checks the rest)."""
    for col, sig in system.model_info.outputs.items():
        if sig.split(".", 1)[0] not in system.blocks:
            raise where.error(f"output {col!r} reads {sig!r}: no such block", ("outputs", col))


def loads(text: str, file: str = "<string>", fmt: str | None = None, check: bool = True) -> System:
    """The System of a model-file text (YAML, or JSON if ``fmt="json"`` or the text starts
    with ``{``)."""
    is_json = fmt == "json" or (fmt is None and text.lstrip().startswith("{"))
    doc, lines = _parse(text, file, is_json)
    return from_dict(doc, file, lines, check)


def load(path: str | Path, check: bool = True) -> System:
    """The System of the model file at ``path`` (``.json``: JSON, otherwise YAML)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ModelFileError(f"cannot read the file: {exc.strerror}", str(p)) from None
    return loads(text, str(p), "json" if p.suffix.lower() == ".json" else None, check)


def example_path(name: str) -> Path:
    """Path of a model file shipped in ``titopfmu/examples`` (e.g. ``"balloon"``)."""
    p = Path(str(resources.files("titopfmu").joinpath(f"examples/{name}.yaml")))
    if not p.exists():
        raise FileNotFoundError(f"no shipped model '{name}' ({p})")
    return p


__all__ = [
    "BLOCK_TYPES",
    "FORMAT",
    "ModelFileError",
    "ModelInfo",
    "TimeExpression",
    "VERSION",
    "block_to_dict",
    "dumps",
    "example_path",
    "from_dict",
    "load",
    "loads",
    "save",
    "schema",
    "to_dict",
]
