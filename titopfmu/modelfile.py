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
Files are read as YAML 1.2 (``1e-8`` is a number, ``no`` a string) or JSON, by a reader whose
nesting, alias expansion and numbers are bounded and which refuses duplicate keys (see
:data:`MAX_DEPTH`, :data:`MAX_ALIAS_NODES` and the comment above ``_loader_class``).
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
    elif p.check == "flexible":
        out = {"oneOf": [{"type": "string"}, {"type": "object"}]}
    elif p.check == "elastic":
        out = {"type": "array", "items": {"type": "number"}}
    elif p.json == "string":
        out = {"oneOf": [{"type": "string"},
                         {"type": "array", "items": {"type": "string"}, "minItems": 1}]}
    elif p.json == "integer":
        out = {"type": "integer", "minimum": 1}
    elif p.json == "boolean":
        out = {"type": "boolean"}
    elif p.shape == ():
        out = {"type": "number"}
        if p.check in ("mass", "positive"):
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


# -- reading: a parser that cannot be made to explode ---------------------------------------------
#
# YAML: PyYAML's pure-Python parser (the C one composes recursively in C: a deep file could
# overflow the C stack) with the YAML 1.2 Core schema of yamlcore (by PyYAML's maintainer; PyYAML
# itself reads YAML 1.1, where ``1e-8`` is a string and ``no`` is false) and, in a subclass, what
# no maintained Python YAML library offers (none of ruamel.yaml, strictyaml or PyYAML bounds
# alias expansion or nesting; strictyaml also refuses the flow style that model files use): a
# bound on the nesting (MAX_DEPTH), on the nodes that aliases bring in (MAX_ALIAS_NODES, the
# "billion laughs"), recursive aliases refused, duplicate keys refused with both lines, numbers
# beyond the float range refused by name. One composition gives the document and its line
# numbers. JSON: the json module, with duplicate keys and numbers beyond the float range refused,
# and the same composition for the lines.

#: deepest nesting of mappings and sequences (a model file needs 7)
MAX_DEPTH = 64
#: most nodes that aliases may bring into a document (each alias counts the nodes it stands for)
MAX_ALIAS_NODES = 100_000

_FLOAT_MAX = 1.7976931348623157e308


class _Refused(Exception):
    """A bound of the reader exceeded (or a duplicate key) at ``line`` of element ``path``."""

    def __init__(self, message: str, mark, path: tuple, names: dict) -> None:
        super().__init__(message)
        self.message, self.path, self.names = message, path, names
        self.line = None if mark is None else mark.line + 1


class _TooLarge:
    """A number of the file beyond the float range (refused by :func:`_check_values`)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return _short(self.text)


def _short(text, limit: int = 40) -> str:
    """``text`` for a one-line message: control characters escaped, at most ``limit`` long."""
    text = str(text)
    if not text.isprintable():
        text = repr(text)[1:-1]
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _number(text: str, kind: str):
    """The int or float of a number's text (YAML 1.2 Core or JSON), or _TooLarge."""
    if kind == "int":
        body = text.lstrip("+-")
        if body[:2] in ("0x", "0o"):
            n = int(body[2:], 16 if body[1] == "x" else 8)  # linear in the digits: no limit
        elif len(body.lstrip("0")) > 310:  # past 1.8e308 (and Python's int() digit limit)
            return _TooLarge(text)
        else:
            n = int(body)
        n = -n if text.startswith("-") else n
        return _TooLarge(text) if abs(n) > _FLOAT_MAX else n
    low = text.lower().lstrip("+-")
    if low in (".inf", ".nan"):
        v = float("nan") if low == ".nan" else float("inf")
        return -v if text.startswith("-") else v
    v = float(text)
    return _TooLarge(text) if v in (float("inf"), float("-inf")) else v


def _loader_class():
    import yaml
    from yamlcore import CoreLoader
    from yamlcore.loader import CommonConstructor

    class Loader(CoreLoader):
        """YAML 1.2 Core schema (yamlcore) with the bounds of this module."""

        def __init__(self, text: str) -> None:
            super().__init__(text)
            self.depth = 0  # level of the node being composed (aliases expanded)
            self.reach = 0  # deepest level seen inside it
            self.nodes = 0  # nodes of the document so far, aliases expanded
            self.aliased = 0  # of which brought in by aliases
            self.path: list = []  # keys and indices from the root to the node being composed
            self.lines: dict[tuple, int] = {}  # path -> 1-based line
            self.names: dict[int, dict] = {}  # block index -> its name and type seen so far

        def refuse(self, message: str, mark, extra: tuple = (), keep: int | None = None):
            path = (tuple(self.path) + extra)[:keep]
            return _Refused(message, mark, path, self.names)

        def compose_node(self, parent, index):
            event = self.peek_event()
            if parent is None:
                step = None  # the root
            elif isinstance(index, int):
                step = index
            elif isinstance(index, yaml.ScalarNode):
                step = index.value
            else:
                step = _KEY  # a key, or the value of a key that is not a scalar
            if step is not None:
                self.path.append(step)
            if _KEY not in self.path:
                mark = index.start_mark if isinstance(index, yaml.ScalarNode) else event.start_mark
                self.lines[tuple(self.path)] = mark.line + 1
            try:
                if isinstance(event, yaml.AliasEvent):
                    return self.compose_alias(parent, index, event)
                level = self.depth + 1
                if level > MAX_DEPTH:  # (the element: where the nesting starts, not all of it)
                    raise self.refuse(
                        f"nested deeper than {MAX_DEPTH} levels", event.start_mark, keep=4
                    )
                outer, self.depth, self.reach = self.reach, level, level
                before = self.nodes
                self.nodes += 1
                node = super().compose_node(parent, index)
                if event.anchor is not None:  # complete: an alias may stand for it now
                    # (nodes of its expansion, levels)
                    node.titopfmu_extent = (self.nodes - before, self.reach - level + 1)
                self.depth, self.reach = level - 1, max(outer, self.reach)
                if (
                    len(self.path) == 3
                    and self.path[0] == "blocks"
                    and self.path[2] in ("name", "type")
                    and isinstance(node, yaml.ScalarNode)
                ):
                    self.names.setdefault(self.path[1], {})[self.path[2]] = node.value
                return node
            finally:
                if step is not None:
                    self.path.pop()

        def compose_alias(self, parent, index, event):
            node = self.anchors.get(event.anchor)
            if node is not None:
                extent = getattr(node, "titopfmu_extent", None)
                name = _short(event.anchor, 30)
                if extent is None:
                    raise self.refuse(
                        f"the alias *{name} is inside the node it names (a recursive structure)",
                        event.start_mark,
                    )
                size, height = extent
                self.nodes += size
                self.aliased += size
                if self.aliased > MAX_ALIAS_NODES:
                    raise self.refuse(
                        f"aliases (here *{name}) stand for more than {MAX_ALIAS_NODES} nodes",
                        event.start_mark,
                    )
                if self.depth + height > MAX_DEPTH:
                    raise self.refuse(
                        f"the alias *{name} nests deeper than {MAX_DEPTH} levels",
                        event.start_mark,
                        keep=4,
                    )
                self.reach = max(self.reach, self.depth + height)
            return super().compose_node(parent, index)  # an undefined alias: PyYAML's error

        def compose_mapping_node(self, anchor):
            node = super().compose_mapping_node(anchor)
            seen: dict[tuple, Any] = {}
            for key, _ in node.value:
                if not isinstance(key, yaml.ScalarNode):
                    continue
                first = seen.setdefault((key.tag, key.value), key)
                if first is not key:
                    a, b = first.start_mark, key.start_mark
                    where = (
                        f"lines {a.line + 1} and {b.line + 1}"
                        if a.line != b.line
                        else f"line {a.line + 1}, columns {a.column + 1} and {b.column + 1}"
                    )
                    raise self.refuse(
                        f"duplicate key {_short(key.value)!r} ({where})", b, (key.value,)
                    )
            return node

        # numbers, booleans, nulls: yamlcore's, with bad text under an explicit tag (!!int x)
        # and numbers beyond the float range refused
        def construct_checked(self, node, kind):
            value = self.construct_scalar(node)
            try:
                if kind in ("int", "float"):
                    return _number(value, kind)
                return getattr(CommonConstructor, f"construct_yaml_{kind}_core")(self, node)
            except (ValueError, KeyError, IndexError):
                raise yaml.constructor.ConstructorError(
                    None, None, f"{_short(value)!r} is not a valid {kind}", node.start_mark
                ) from None

    for kind in ("int", "float", "bool", "null"):
        Loader.add_constructor(
            f"tag:yaml.org,2002:{kind}", lambda self, node, k=kind: self.construct_checked(node, k)
        )
    return Loader


_KEY = object()  # a path step that is no key of the document (inside a mapping's key)


_LOADER = None


def _compose(text: str, construct: bool):
    """(document or None, line map) of a YAML (or JSON) text; raises _Refused, yaml.YAMLError."""
    global _LOADER
    if _LOADER is None:
        _LOADER = _loader_class()
    loader = _LOADER(text)
    try:
        node = loader.get_single_node()
        doc = loader.construct_document(node) if construct and node is not None else None
    finally:
        loader.dispose()
    return doc, loader.lines


def _line_map(text: str) -> dict[tuple, int]:
    """Path (tuple of keys and indices) -> 1-based line of every node of a YAML/JSON text
    ({} if the text cannot be composed)."""
    import yaml

    try:
        return _compose(text, construct=False)[1]
    except (yaml.YAMLError, _Refused, RecursionError):
        return {}


def _json(text: str, file: str, lines: dict) -> Any:
    """The document of a JSON text: duplicate keys and numbers beyond the float range refused."""
    duplicate: list = []

    def pairs(items):
        out: dict = {}
        for k, v in items:
            if k in out and not duplicate:
                duplicate.append(k)
            out[k] = v
        return out

    try:
        doc = json.loads(
            text,
            object_pairs_hook=pairs,
            parse_int=lambda s: _number(s, "int"),
            parse_float=lambda s: _number(s, "float"),
        )
    except json.JSONDecodeError as exc:
        raise ModelFileError(f"not valid JSON: {exc.msg}", file, None, exc.lineno) from None
    except RecursionError:
        raise ModelFileError(f"nested deeper than {MAX_DEPTH} levels", file) from None
    if duplicate:  # (the composition, when it could read the text, named the lines already)
        raise ModelFileError(f"duplicate key {_short(duplicate[0])!r}", file)
    return doc


def _parse(text: str, file: str, is_json: bool) -> tuple[Any, dict]:
    import yaml

    try:
        if is_json:
            try:  # the lines, the bounds and duplicate keys with their lines
                lines = _compose(text, construct=False)[1]
            except yaml.YAMLError:  # JSON that YAML cannot read (tabs...): no lines
                lines = {}
            return _json(text, file, lines), lines
        return _compose(text, construct=True)
    except _Refused as r:
        names = {"blocks": r.names}  # what the block's entry said before the refusal
        raise _Where(names, {}, file).error(r.message, r.path, r.line) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        msg = " ".join(str(getattr(exc, "problem", None) or exc).split())
        raise ModelFileError(
            f"not valid YAML: {msg}", file, None, None if mark is None else mark.line + 1
        ) from None
    except RecursionError:  # not expected within MAX_DEPTH; never a traceback all the same
        raise ModelFileError(f"nested deeper than {MAX_DEPTH} levels", file) from None


def _check_values(doc, where: _Where) -> None:
    """Nesting within MAX_DEPTH (JSON, documents given as dicts) and every number within the
    float range (an int beyond it would overflow in a block; 1e400 would read as inf)."""
    stack = [(doc, ())]
    while stack:
        x, path = stack.pop()
        if len(path) > MAX_DEPTH:
            raise where.error(f"nested deeper than {MAX_DEPTH} levels", path[:4])
        if isinstance(x, dict):
            for k, v in x.items():
                if isinstance(k, _TooLarge):
                    raise where.error(f"the number {k!r} is beyond the float range", path)
                stack.append((v, path + (k,)))
        elif isinstance(x, list):
            stack.extend((v, path + (i,)) for i, v in enumerate(x))
        elif isinstance(x, _TooLarge) or (
            isinstance(x, int) and not isinstance(x, bool) and abs(x) > _FLOAT_MAX
        ):
            if isinstance(x, int) and x.bit_length() > 4000:  # (Python refuses str() of it)
                what = f"an integer of about {int(x.bit_length() * 0.30103)} digits"
            else:
                n = x.text if isinstance(x, _TooLarge) else str(x)
                size = f" ({len(n)} characters)" if len(n) > 40 else ""
                what = f"the number {_short(n)}{size}"
            raise where.error(f"{what} is beyond the float range (+-1.8e308)", path)


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
                name = _short(b.get("name", f"#{path[1] + 1}"), 80)  # one line, not too long
                typ = f" ({_short(b['type'])})" if isinstance(b.get("type"), str) else ""
            except (KeyError, IndexError, TypeError, AttributeError):
                name, typ = f"#{path[1] + 1}", ""
            # element indices 1-based, as everywhere a user reads them (signals, blocks, lines)
            rest = "".join(f"[{p + 1}]" if isinstance(p, int) else f".{p}" for p in path[2:])
            rest = _short(rest, 120)
            return f"block '{name}'{typ}" + (f", parameter {rest.lstrip('.')}" if rest else "")
        if len(path) >= 2 and path[0] == "connections" and isinstance(path[1], int):
            try:
                return f"connection {path[1] + 1} {_short(self.doc['connections'][path[1]], 120)}"
            except (IndexError, TypeError, KeyError):
                return f"connection {path[1] + 1}"
        if not path:
            return None
        dotted = ".".join(str(p + 1 if isinstance(p, int) else p) for p in path)
        return "'" + _short(dotted, 120) + "'"

    def error(self, message, path, line: int | None = None) -> ModelFileError:
        line = self.line(path) if line is None else line
        return ModelFileError(message, self.file, self.element(path), line)


def _validate(doc, where: _Where) -> None:
    import jsonschema

    if not isinstance(doc, dict):
        raise where.error("a model file is a mapping with keys format, version, blocks...", ())
    _check_values(doc, where)
    if doc.get("format") != FORMAT:
        raise where.error(f"'format' must be '{FORMAT}' (got {doc.get('format')!r})", ("format",))
    if doc.get("version") != VERSION:
        raise where.error(
            f"unsupported version {doc.get('version')!r}; this titopfmu reads version {VERSION}",
            ("version",),
        )
    blocks = doc.get("blocks")
    for i, b in enumerate(blocks if isinstance(blocks, list) else []):  # unknown types: clearly
        typ = b.get("type") if isinstance(b, dict) else None
        if typ is not None and not isinstance(typ, (list, dict)) and typ not in BLOCK_TYPES:
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
        msg = _short(e.message, 200)  # (it quotes the value, which may be long)
        if e.validator == "additionalProperties" and isinstance(e.instance, dict):
            extra = [k for k in e.instance if k not in e.schema.get("properties", {})]
            if extra:
                shown = ", ".join(repr(_short(k)) for k in extra[:5])
                shown += f" and {len(extra) - 5} more" if len(extra) > 5 else ""
                msg = f"unknown key(s) {shown}; allowed: " + ", ".join(
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
        flexible = kwargs.get("flexible")
        if not file.startswith("<"):  # its files relative to the model file
            here = Path(file).parent
            if isinstance(flexible, str):
                kwargs["flexible"] = str(here / flexible)
            elif isinstance(flexible, dict):
                from .flex.spec import PATH_KEYS

                kwargs["flexible"] = {k: str(here / v) if k in PATH_KEYS
                                      and isinstance(v, str) else v
                                      for k, v in flexible.items()}  # fmt: skip
        if cls is TimeFunction:
            try:
                f = TimeExpression(kwargs["expression"])
            except ValueError as exc:
                path = ("blocks", i, "expression")
                index = getattr(exc, "index", None)  # the component of a list of expressions
                raise where.error(str(exc), path if index is None else path + (index,)) from None
            if f.size != kwargs["size"]:  # (also bounds the port's size by the expression's)
                raise where.error(
                    f"the expression gives {f.size} value(s), size says {kwargs['size']}",
                    ("blocks", i, "size"),
                )
            kwargs = {"f": f, "size": kwargs["size"]}
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
        data = p.read_bytes()
    except OSError as exc:
        raise ModelFileError(f"cannot read the file: {exc.strerror}", str(p)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ModelFileError(
            f"not UTF-8 text (byte {exc.start + 1}: {exc.reason})", str(p), None, line
        ) from None
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
