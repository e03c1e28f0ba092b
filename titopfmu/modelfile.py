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

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from .assembly.document import (
    BLOCK_TYPES,
    FORMAT,
    VERSION,
    ModelFileError,
    ModelInfo,
    block_to_dict,
    dumps,
    save,
    to_dict,
)
from .assembly.system import AssemblyError, System
from .blocks import TimeFunction, TitopError
from .blocks.declarations import BlockType, Parameter
from .blocks.expressions import TimeExpression

# -- text -> System ------------------------------------------------------------------------------


_ARRAYS = {(3,): "vec3", (4,): "vec4", (6,): "vec6", (3, 3): "mat3", (6, 6): "mat6"}


def _parameter_schema(p: Parameter) -> dict:
    """The JSON Schema of one declared parameter in a model file."""
    if p.structural:
        return {"$ref": f"#/$defs/{p.check}"}
    if p.check == "free_vector":
        out: dict[str, Any] = {"oneOf": [{"type": "number"}, {"type": "array",
                                                            "items": {"type": "number"},
                                                            "minItems": 1}]}  # fmt: skip
    elif p.json == "string":
        out = {"oneOf": [{"type": "string"},
                         {"type": "array", "items": {"type": "string"}, "minItems": 1}]}
    elif p.json == "integer":
        out = {"type": "integer", "minimum": 1}
    elif p.shape == ():
        out = {"type": "number"}
        if p.check == "mass":
            out["exclusiveMinimum"] = 0
        elif p.check == "nonnegative":
            out["minimum"] = 0
    else:
        out = {"$ref": f"#/$defs/{_ARRAYS[p.shape]}"}
    unit = f" ({p.unit})" if p.unit else ""
    out["description"] = p.description + unit
    return out


def _type_schema(decl: BlockType) -> dict:
    props: dict[str, Any] = {"name": True, "type": True}
    for p in decl.parameters:
        props[p.name] = _parameter_schema(p)
    if "gravity" in props:
        props["gravity"]["description"] += "; default: the file's gravity"
    return {
        "description": decl.summary,
        "type": "object",
        "properties": props,
        "required": ["name", "type"] + [p.name for p in decl.parameters if p.required],
        "additionalProperties": False,
    }


def generated_schema(base: dict) -> dict:
    """The model-file JSON Schema: ``base`` (the shipped file's general part) with the block
    types' definitions and the list of types derived from their declarations."""
    from .blocks.declarations import BLOCK_TYPES as DECLARED

    out = json.loads(json.dumps(base))
    defs = {k: v for k, v in out["$defs"].items() if k not in DECLARED}
    for name, decl in DECLARED.items():
        defs[name] = _type_schema(decl)
    out["$defs"] = defs
    items = out["properties"]["blocks"]["items"]
    items["properties"]["type"] = {"enum": list(DECLARED)}
    items["allOf"] = [
        {"if": {"properties": {"type": {"const": n}}, "required": ["type"]},
         "then": {"$ref": f"#/$defs/{n}"}}
        for n in DECLARED
    ]  # fmt: skip
    return out


def schema_path() -> Path:
    """The shipped JSON Schema file (``titopfmu/schema/model.schema.json``), for editors."""
    return Path(str(resources.files("titopfmu").joinpath("schema/model.schema.json")))


@lru_cache(maxsize=1)
def schema() -> dict:
    """The JSON Schema of the format: the shipped file's general part, the block types'
    parts from their declarations (the shipped file is the same, written by
    ``python scripts/generate_declared.py``; a test checks it)."""
    return generated_schema(json.loads(schema_path().read_text("utf-8")))


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
        if gravity is not None and "gravity" in cls.declaration.names and "gravity" not in kwargs:
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
