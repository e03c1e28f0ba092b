"""A linear model as a native FMI 2.0 FMU (co-simulation and model exchange in one).

``build_fmu(model, "plant.fmu")`` (also ``LinearModel.to_fmu`` and ``titopfmu linearize ...
--fmu plant.fmu``) writes an FMU whose binary is ``titopfmu/fmi/native/fmi2_state_space.c``
compiled with a generated ``state_space_config.h`` holding the matrices (C arrays, exact to the
last bit: Python's ``repr`` of every double):

* **inputs** ``u`` — the model's input names, absolute values (start: the operating point u0);
* **outputs** ``y = y0 + C δx + D (u - u0)`` — absolute values (y0 the outputs at the operating
  point);
* **states** ``δx`` — the deviation from the operating point in the model's reduced coordinates
  (a quaternion through its rotation vector), named as the model's states, start 0 (settable
  before initialisation: ``initial="exact"``), with ``der(name)`` their derivatives
  ``F0 + A δx + B (u - u0)``, F0 the drift ``LinearModel.xdot0`` (zero at an equilibrium).

``operating_point=False`` exports the deviation model alone (u0, y0 and F0 taken as zero: inputs
and outputs are then deviations too). Directional derivatives are the matrices; ModelStructure
lists the exact non-zeros of A, B, C, D as the dependencies. Co-simulation steps are exact for
the LTI system (the matrix exponential of the augmented system per step size, computed in C at
run time and kept for the last four step sizes; inputs held, or moved on with the derivatives
the master gives). The FMU contains ``sources/`` (``cc -std=c99 -shared -fPIC sources/*.c
-lm`` rebuilds it elsewhere).
"""

from __future__ import annotations

import hashlib
import html
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path
from xml.etree.ElementTree import Element, SubElement, indent, tostring

import numpy as np

from ..blocks.base import TitopError
from ..fmi.native.build import FLAGS, FMI_HEADERS, HEADERS, MINGW, _compile, compiler, zip_fmu
from ..fmi.ports import UNIT_DEFINITIONS
from .model import LinearModel

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "fmi" / "native" / "fmi2_state_space.c"
CONFIG = "state_space_config.h"

#: units of a linear model beyond those of the block FMUs (FMI 2.0 BaseUnit exponents)
UNITS = {**UNIT_DEFINITIONS, "J": {"kg": 1, "m": 2, "s": -2}}

_PART = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[0-9]+(,[0-9]+)*\])?$")
_INDEX = re.compile(r"\[[0-9]+(,[0-9]+)*\]$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class LinearFmuError(TitopError):
    """A linear model that cannot be exported as an FMU (names, sizes, non-finite values)."""


def fmi_name(name: str) -> str:
    """``name`` as a legal FMI 2.0 structured name: each dot-separated part an identifier with
    an optional array index (``pend1.joint.m[3]`` stays as it is); any other character becomes
    ``_`` and a part starting with a digit gets a leading ``_``."""
    parts = []
    for part in name.split("."):
        if _PART.match(part):
            parts.append(part)
            continue
        m = _INDEX.search(part)
        suffix = m.group(0) if m else ""
        base = re.sub(r"[^A-Za-z0-9_]", "_", part[: len(part) - len(suffix)])
        if not base or base[0].isdigit():
            base = "_" + base
        parts.append(base + suffix)
    return ".".join(parts)


def _vector(model: LinearModel, attr: str, n: int, use: bool) -> np.ndarray:
    v = np.asarray(getattr(model, attr), dtype=float).reshape(-1)
    if not use or v.size == 0:
        return np.zeros(n)
    if v.size != n:
        raise LinearFmuError(f"LinearModel.{attr} has {v.size} values, the model {n}")
    return v


def _an(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def _check_finite(label: str, M: np.ndarray, rows: list[str], cols: list[str] | None) -> None:
    bad = np.argwhere(~np.isfinite(M))
    if bad.size == 0:
        return
    k = tuple(bad[0])
    if cols is None:
        where = f"{label}[{k[0] + 1}] ({rows[k[0]]!r})"
    else:
        where = f"{label}[{k[0] + 1},{k[1] + 1}] (row {rows[k[0]]!r}, column {cols[k[1]]!r})"
    many = "1 such entry" if len(bad) == 1 else f"{len(bad)} such entries"
    raise LinearFmuError(
        f"{where} = {float(M[k])!r} is not finite ({many} in {label}): the FMU needs finite "
        "matrices"
    )


def _c_array(name: str, values: np.ndarray) -> list[str]:
    vals = [repr(float(v)) for v in np.asarray(values, dtype=float).reshape(-1)] or ["0.0"]
    lines = [f"static const double {name}[] = {{"]
    for i in range(0, len(vals), 6):
        lines.append("    " + ", ".join(vals[i : i + 6]) + ",")
    lines.append("};")
    return lines


def _deps(M: np.ndarray, row: int, vr0: int) -> list[int]:
    return [vr0 + j for j in np.flatnonzero(M[row])]


def build_fmu(
    model: LinearModel,
    path: str | os.PathLike,
    *,
    model_name: str | None = None,
    description: str | None = None,
    operating_point: bool = True,
    x_start=None,
    rename: Mapping[str, str] | None = None,
    win64: bool | None = None,
) -> Path:
    """Write ``model`` as the native FMU ``path`` (a ``.fmu`` file); returns its path.

    ``model_name``: the FMU's model name and identifier (a C identifier; default: the file's
    stem made one). ``description``: the model description's text (default: what the variables
    are and the operating point). ``operating_point``: absolute inputs and outputs about the
    operating point (default) or the deviation model alone. ``x_start``: start values of the
    state deviations (default 0). ``rename``: model name -> FMI name for any state, input or
    output (to resolve a collision, or for shorter names); a key ``"output:NAME"`` (or
    ``state:``, ``input:``) renames only the variable of that kind. ``win64``: also
    cross-compile for Windows (default: when MinGW-w64 is on the PATH).
    Raises :class:`LinearFmuError` naming the entry or the names at fault, before any build.
    """
    path = Path(path)
    if path.suffix != ".fmu":
        raise LinearFmuError(f"FMU file {str(path)!r}: the name must end in .fmu")
    A, B = np.asarray(model.A, dtype=float), np.asarray(model.B, dtype=float)
    C, D = np.asarray(model.C, dtype=float), np.asarray(model.D, dtype=float)
    sn, un, yn = list(model.state_names), list(model.input_names), list(model.output_names)
    n, m, p = len(sn), len(un), len(yn)
    for label, M, shape in (("A", A, (n, n)), ("B", B, (n, m)), ("C", C, (p, n)),
                            ("D", D, (p, m))):  # fmt: skip
        if M.shape != shape and not (M.size == 0 and 0 in shape):
            raise LinearFmuError(
                f"LinearModel.{label} has shape {M.shape}, expected {shape} from {n} state, "
                f"{m} input and {p} output names"
            )
    A, B, C, D = A.reshape(n, n), B.reshape(n, m), C.reshape(p, n), D.reshape(p, m)
    if n + m + p == 0:
        raise LinearFmuError("the linear model is empty: no state, input or output")
    u0 = _vector(model, "u0", m, operating_point)
    y0 = _vector(model, "y0", p, operating_point)
    f0 = _vector(model, "xdot0", n, operating_point)
    xs = np.zeros(n) if x_start is None else np.asarray(x_start, dtype=float).reshape(-1)
    if xs.size != n:
        raise LinearFmuError(f"x_start has {xs.size} values, the model {n} states")
    for label, M, rows, cols in (("A", A, sn, sn), ("B", B, sn, un), ("C", C, yn, sn),
                                 ("D", D, yn, un)):  # fmt: skip
        _check_finite(label, M, rows, cols)
    for label, v, rows in (("u0", u0, un), ("y0", y0, yn), ("xdot0", f0, sn),
                           ("x_start", xs, sn)):  # fmt: skip
        _check_finite(label, v, rows, None)

    # names: the model's (or renamed), made FMI-legal, unique over every variable
    rename = dict(rename or {})
    kinds = [("state", s) for s in sn] + [("input", s) for s in un] + [("output", s) for s in yn]
    known = {s for _, s in kinds} | {f"{k}:{s}" for k, s in kinds}
    unknown = sorted(set(rename) - known)
    if unknown:
        raise LinearFmuError(
            f"rename: {unknown} are not state, input or output names of the model (NAME, or "
            "KIND:NAME with KIND state, input or output)"
        )
    seen: dict[str, tuple[str, str]] = {}
    fmi: dict[tuple[str, str], str] = {}
    for kind, s in kinds:
        if not isinstance(s, str) or not s.strip():
            raise LinearFmuError(f"the model has an empty {kind} name")
        name = fmi_name(str(rename.get(f"{kind}:{s}", rename.get(s, s))).strip())
        if name in seen:
            k2, s2 = seen[name]
            if (k2, s2) == (kind, s):
                raise LinearFmuError(f"name collision: the {kind} name {s!r} appears twice")
            if s2 != s:
                what = f"the {k2} {s2!r} and the {kind} {s!r} both become"
            else:
                what = f"the name {s!r} is both {_an(k2)} and {_an(kind)}: it would be"
            raise LinearFmuError(
                f"name collision: {what} the FMI variable {name!r}; give one of them another "
                f"name with rename={{{kind + ':' + s!r}: ...}}"
            )
        seen[name] = (kind, s)
        fmi[(kind, s)] = name
    ident = model_name if model_name is not None else re.sub(r"\W", "_", path.stem, flags=re.ASCII)
    if model_name is None and (not ident or ident[0].isdigit()):
        ident = "_" + ident
    if not _IDENT.match(ident):
        raise LinearFmuError(f"model name {ident!r} is not a C identifier (letters, digits, _)")

    units = dict(model.units or {})
    names_u = [fmi[("input", s)] for s in un]
    names_y = [fmi[("output", s)] for s in yn]
    names_x = [fmi[("state", s)] for s in sn]
    vr_u, vr_y, vr_x, vr_dx = 0, m, m + p, m + p + n

    # state_space_config.h
    head = [f"/* {CONFIG} -- generated by titopfmu (titopfmu/linear/fmu.py) for {ident}: the",
            "   linear model compiled into fmi2_state_space.c. Matrices row-major. */",
            "#ifndef STATE_SPACE_CONFIG_H", "#define STATE_SPACE_CONFIG_H",
            f'#define SS_MODEL_NAME "{ident}"', f"#define SS_NX {n}", f"#define SS_NU {m}",
            f"#define SS_NY {p}"]  # fmt: skip
    body = [*_c_array("SS_A", A), *_c_array("SS_B", B), *_c_array("SS_C", C),
            *_c_array("SS_D", D), *_c_array("SS_U0", u0), *_c_array("SS_Y0", y0),
            *_c_array("SS_F0", f0), *_c_array("SS_U_START", u0), *_c_array("SS_X_START", xs),
            *_c_array("SS_X_NOMINAL", np.ones(n))]  # fmt: skip
    all_names = names_u + names_y + names_x + [f"der({s})" for s in names_x]
    body.append("static const char *const SS_VAR_NAME[] = {")
    body += [f'    "{s}",' for s in all_names] or ['    "",']
    body += ["};", "#endif"]
    unit_of = {fmi[k]: units.get(k[1], "") for k in fmi}
    text = description or _default_description(model, ident, operating_point, f0)
    digest = hashlib.sha1("\n".join(head + body + [text, repr(sorted(unit_of.items()))]).encode())
    guid = "{" + str(uuid.UUID(digest.hexdigest()[:32])) + "}"
    header = "\n".join([*head, f'#define SS_GUID "{guid}"', *body]) + "\n"

    # modelDescription.xml
    root = Element("fmiModelDescription", {
        "fmiVersion": "2.0", "modelName": ident, "guid": guid, "description": text,
        "generationTool": "titopfmu", "variableNamingConvention": "structured",
        "numberOfEventIndicators": "0",
    })  # fmt: skip
    caps = {"modelIdentifier": ident, "canGetAndSetFMUstate": "true",
            "canSerializeFMUstate": "true", "providesDirectionalDerivative": "true"}  # fmt: skip
    SubElement(root, "ModelExchange", {**caps, "completedIntegratorStepNotNeeded": "true"})
    SubElement(root, "CoSimulation", {**caps, "canHandleVariableCommunicationStepSize": "true",
                                      "canInterpolateInputs": "true",
                                      "maxOutputDerivativeOrder": "1"})  # fmt: skip
    used = sorted({u for u in unit_of.values() if u})
    if used:
        ud = SubElement(root, "UnitDefinitions")
        for u in used:
            e = SubElement(ud, "Unit", name=u)
            if u in UNITS:
                SubElement(e, "BaseUnit", {k: str(v) for k, v in UNITS[u].items()})
    SubElement(root, "DefaultExperiment", startTime="0", stopTime="10", stepSize="0.01")
    mv = SubElement(root, "ModelVariables")

    def var(name, vr, caus, desc, start=None, initial=None, derivative=None):
        a = {"name": name, "valueReference": str(vr), "causality": caus,
             "variability": "continuous", "description": desc}  # fmt: skip
        if initial:
            a["initial"] = initial
        sv = SubElement(mv, "ScalarVariable", a)
        r = {}
        if start is not None:
            r["start"] = repr(float(start))
        unit = unit_of.get(name[4:-1] if derivative else name, "")
        if unit and not derivative:
            r["unit"] = unit
        if derivative:
            r["derivative"] = str(derivative)
        SubElement(sv, "Real", r)

    op = "operating point" if operating_point else "deviation model: operating value taken as"
    for k, s in enumerate(un):
        var(names_u[k], vr_u + k, "input", f"input {s} (absolute; {op} {float(u0[k])!r})", u0[k])
    methods = list(model.output_methods) + ["exact"] * p
    for k, s in enumerate(yn):
        var(names_y[k], vr_y + k, "output",
            f"output {s} = y0 + C dx + D (u - u0) ({op} y0 = {float(y0[k])!r}; row of C, D: "
            f"{methods[k]})", initial="calculated")  # fmt: skip
    level = list(model.position_level) + [None] * n
    for k, s in enumerate(sn):
        kind = "" if level[k] is None else (" (a configuration)" if level[k] else " (a rate)")
        var(names_x[k], vr_x + k, "local",
            f"deviation of the state {s} from the operating point{kind}", xs[k],
            initial="exact")  # fmt: skip
    for k, _s in enumerate(sn):
        var(f"der({names_x[k]})", vr_dx + k, "local", f"time derivative of {names_x[k]}",
            initial="calculated", derivative=vr_x + k + 1)  # fmt: skip

    ms = SubElement(root, "ModelStructure")

    def deps(Mx, Mu, row):
        return " ".join(str(v + 1) for v in sorted(_deps(Mx, row, vr_x) + _deps(Mu, row, vr_u)))

    rows_y = [(vr_y + i, deps(C, D, i)) for i in range(p)]
    rows_dx = [(vr_dx + i, deps(A, B, i)) for i in range(n)]
    if rows_y:
        o = SubElement(ms, "Outputs")
        for vr, d in rows_y:
            SubElement(o, "Unknown", index=str(vr + 1), dependencies=d)
    if rows_dx:
        dv = SubElement(ms, "Derivatives")
        for vr, d in rows_dx:
            SubElement(dv, "Unknown", index=str(vr + 1), dependencies=d)
    if rows_y or rows_dx:
        iu = SubElement(ms, "InitialUnknowns")
        for vr, d in rows_y + rows_dx:
            SubElement(iu, "Unknown", index=str(vr + 1), dependencies=d)
    indent(root)
    xml = b'<?xml version="1.0" encoding="UTF-8"?>\n' + tostring(root, encoding="utf-8")

    cc = compiler()
    with tempfile.TemporaryDirectory(prefix="titopfmu-linear-") as tmp:
        tree = Path(tmp)
        src = tree / "sources"
        src.mkdir()
        shutil.copy(SOURCE, src / SOURCE.name)
        for f in HEADERS:
            shutil.copy(FMI_HEADERS / f, src / f)
        (src / CONFIG).write_text(header)
        lib = tree / "binaries" / "linux64" / f"{ident}.so"
        lib.parent.mkdir(parents=True)
        _compile([cc, *FLAGS, "-fPIC", "-I", str(src), str(src / SOURCE.name), "-o", str(lib),
                  "-lm"], ident)  # fmt: skip
        if win64 is None:
            win64 = shutil.which(MINGW) is not None
        if win64:
            dll = tree / "binaries" / "win64" / f"{ident}.dll"
            dll.parent.mkdir(parents=True)
            _compile([MINGW, *FLAGS, "-I", str(src), str(src / SOURCE.name), "-o", str(dll),
                      "-static-libgcc"], ident)  # fmt: skip
        (tree / "modelDescription.xml").write_bytes(xml)
        doc = tree / "documentation" / "index.html"
        doc.parent.mkdir()
        doc.write_text(_documentation(ident, text, all_names, unit_of), encoding="utf-8")
        return zip_fmu(tree, path)


def _default_description(model: LinearModel, ident: str, operating_point: bool,
                         f0: np.ndarray) -> str:  # fmt: skip
    n, m, p = len(model.state_names), len(model.input_names), len(model.output_names)
    if operating_point:
        drift = (" + F0 (the drift at a point that is not an equilibrium)"
                 if np.any(f0 != 0.0) else "")  # fmt: skip
        return (
            f"{ident}: linear state-space model (titopfmu.linearize at t = {model.t!r} s), "
            f"{n} states, {m} inputs, {p} outputs. Inputs u and outputs y are absolute: "
            f"y = y0 + C dx + D (u - u0), der(dx) = A dx + B (u - u0){drift}; the states dx are "
            "deviations from the operating point (attitudes as rotation vectors). "
            "Co-simulation steps are exact (matrix exponential; inputs held, or ramped with "
            "their derivatives)."
        )
    return (
        f"{ident}: linear state-space model (deviation form), {n} states, {m} inputs, {p} "
        "outputs: der(x) = A x + B u, y = C x + D u, every variable a deviation from the "
        "operating point. Co-simulation steps are exact (matrix exponential)."
    )


def _documentation(ident: str, text: str, names: list[str], unit_of: dict[str, str]) -> str:
    rows = "\n".join(
        f"<tr><td>{html.escape(s)}</td><td>{html.escape(unit_of.get(s, ''))}</td></tr>"
        for s in names
    )
    return (
        f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{ident}</title></head>"
        f"<body><h1>{ident}</h1><p>{html.escape(text)}</p>"
        f"<table><tr><th>variable</th><th>unit</th></tr>\n{rows}\n</table></body></html>\n"
    )
