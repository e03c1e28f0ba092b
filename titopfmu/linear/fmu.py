"""A linear model as a native FMI 2.0 (or 3.0) FMU (co-simulation and model exchange in one).

``build_fmu(model, "plant.fmu")`` (also ``LinearModel.to_fmu`` and ``titopfmu linearize ...
--fmu plant.fmu``) writes an FMU whose binary is the state-space model
``titopfmu/fmi/native/fmi2_state_space.c`` on the FMI wrapper of every titopfmu FMU (the FMI
functions ``fmi2_block.c`` or ``fmi3_block.c`` and the model-independent ``fmu.c``, as for the
block FMUs), compiled with a generated ``fmu_config.h`` (the variables, as for a block) and
``state_space_config.h`` (the matrices: C arrays, exact to the last bit, Python's ``repr`` of
every double):

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
the master gives through FMI 2.0's fmi2SetRealInputDerivatives). The FMU contains ``sources/``
(``cc -std=c99 -shared -fPIC -Isources sources/*.c -lm`` rebuilds it elsewhere).
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
from typing import TYPE_CHECKING
from xml.etree.ElementTree import Element, SubElement, indent, tostring

import numpy as np

from ..blocks.base import TitopError
from ..fmi.native.build import (
    FLAGS,
    FMI_HEADERS,
    HEADERS,
    HEADERS3,
    MINGW,
    PLATFORMS,
    _compile,
    compiler,
    zip_fmu,
)
from ..fmi.native.generate import (
    BUILD_DESCRIPTION,
    add_log_categories,
    add_source_files,
    build_description_xml,
)
from ..fmi.ports import UNIT_DEFINITIONS

if TYPE_CHECKING:  # duck-typed at run time: linear.model imports this module
    from .model import LinearModel

NATIVE = Path(__file__).resolve().parent.parent / "fmi" / "native"
#: the C units: the model, the model-independent layer shared with the block FMUs and the matrix
#: exponential of the exact co-simulation step; then the FMI functions of the version (the block
#: FMUs' too)
C_UNITS = ("fmi2_state_space.c", "fmu.c", "expm.c")
WRAPPER = {2: "fmi2_block.c", 3: "fmi3_block.c"}
HEADERS_C = ("fmu.h", "expm.h")
#: the generated headers: the variables (fmu.c's), the matrices (the model's)
CONFIG, MATRICES = "fmu_config.h", "state_space_config.h"
#: causalities of fmu.h: input, output, computed (the derivatives), state with a start value
C_INPUT, C_OUTPUT, C_LOCAL, C_STATE = 1, 2, 3, 4

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


def _c_table(ctype: str, name: str, values: list[str]) -> list[str]:
    lines = [f"static const {ctype} {name}[] = {{"]
    for i in range(0, len(values), 8):
        lines.append("    " + ", ".join(values[i : i + 8]) + ",")
    return lines + ["};"]


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
    fmi_version: int = 2,
) -> Path:
    """Write ``model`` as the native FMU ``path`` (a ``.fmu`` file); returns its path.

    ``model_name``: the FMU's model name and identifier (a C identifier; default: the file's
    stem made one). ``description``: the model description's text (default: what the variables
    are and the operating point). ``operating_point``: absolute inputs and outputs about the
    operating point (default) or the deviation model alone. ``x_start``: start values of the
    state deviations (default 0). ``rename``: model name -> FMI name for any state, input or
    output (to resolve a collision, or for shorter names); a key ``"output:NAME"`` (or
    ``state:``, ``input:``) renames only the variable of that kind. ``win64``: also
    cross-compile for Windows (default: when MinGW-w64 is on the PATH). ``fmi_version``: 2
    (FMI 2.0) or 3 (FMI 3.0: value reference 0 is ``time``, every other one the FMI 2.0 one plus
    1; no input derivatives in co-simulation, the inputs are held over a step).
    Raises :class:`LinearFmuError` naming the entry or the names at fault, before any build.
    """
    if fmi_version not in (2, 3):
        raise LinearFmuError(f"fmi_version must be 2 or 3, not {fmi_version!r}")
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

    # state_space_config.h: the matrices, for the model (fmi2_state_space.c)
    matrices = [f"/* {MATRICES} -- generated by titopfmu (titopfmu/linear/fmu.py) for {ident}:",
                "   the linear model of fmi2_state_space.c. Matrices row-major. */",
                "#ifndef STATE_SPACE_CONFIG_H", "#define STATE_SPACE_CONFIG_H",
                f"#define SS_NU {m}", f"#define SS_NY {p}",
                *_c_array("SS_A", A), *_c_array("SS_B", B), *_c_array("SS_C", C),
                *_c_array("SS_D", D), *_c_array("SS_U0", u0), *_c_array("SS_Y0", y0),
                *_c_array("SS_F0", f0), "#endif"]  # fmt: skip
    # fmu_config.h: the variables by slot (value reference), for the FMU layer (fmu.h)
    all_names = names_u + names_y + names_x + [f"der({s})" for s in names_x]
    caus = [C_INPUT] * m + [C_OUTPUT] * p + [C_STATE] * n + [C_LOCAL] * n
    start = [*u0, *np.zeros(p), *xs, *np.zeros(n)]
    variables = [f'#define FMU_MODEL_NAME "{ident}"', f"#define FMU_NX {n}",
                 f"#define FMU_X_VR0 {vr_x}", f"#define FMU_DX_VR0 {vr_dx}",
                 f"#define FMU_NVARS {m + p + 2 * n}",
                 *_c_table("unsigned char", "FMU_VAR_TYPE", ["0"] * len(caus)),
                 *_c_table("unsigned char", "FMU_VAR_CAUS", [str(k) for k in caus]),
                 *_c_table("char *const", "FMU_VAR_NAME", [f'"{s}"' for s in all_names]),
                 *_c_table("double", "FMU_DEFAULT", [repr(float(v)) for v in start])]  # fmt: skip
    if fmi_version == 3:  # FMI 3.0 value reference -> first slot, number of slots: 0 is time
        variables += [f"#define FMU3_NVARS {len(caus) + 1}",
                      "static const int FMU3_VARS[][2] = {", "    {-1, 1}, /* time */",
                      *(f"    {{{k}, 1}}," for k in range(len(caus))), "};"]  # fmt: skip
    unit_of = {fmi[k]: units.get(k[1], "") for k in fmi}
    text = description or _default_description(model, ident, operating_point, f0, fmi_version)
    digest = hashlib.sha1("\n".join(matrices + variables + [text, repr(sorted(unit_of.items()))])
                          .encode())  # fmt: skip
    guid = "{" + str(uuid.UUID(digest.hexdigest()[:32])) + "}"
    config = "\n".join([f"/* {CONFIG} -- generated by titopfmu (titopfmu/linear/fmu.py) for "
                        f"{ident}: the", "   variables of the FMU (fmu.h). */",
                        "#ifndef FMU_CONFIG_H", "#define FMU_CONFIG_H", *variables[:1],
                        f'#define FMU_GUID "{guid}"', *variables[1:], "#endif"]) + "\n"  # fmt: skip

    # the variables by slot: name, causality, description, start, initial
    op = "operating point" if operating_point else "deviation model: operating value taken as"
    methods = list(model.output_methods) + ["exact"] * p
    level = list(model.position_level) + [None] * n
    kind = ["" if v is None else " (a configuration)" if v else " (a rate)" for v in level]
    V = [(names_u[k], "input", f"input {s} (absolute; {op} {float(u0[k])!r})", u0[k], None)
         for k, s in enumerate(un)]  # fmt: skip
    V += [(names_y[k], "output", f"output {s} = y0 + C dx + D (u - u0) ({op} y0 = "
           f"{float(y0[k])!r}; row of C, D: {methods[k]})", None, "calculated")
          for k, s in enumerate(yn)]  # fmt: skip
    V += [(names_x[k], "local", f"deviation of the state {s} from the operating point{kind[k]}",
           xs[k], "exact") for k, s in enumerate(sn)]  # fmt: skip
    V += [(f"der({x})", "local", f"time derivative of {x}", None, "calculated") for x in names_x]
    # the dependencies of the outputs and the state derivatives: the non-zeros of the matrices
    deps = {vr_y + i: sorted(_deps(C, i, vr_x) + _deps(D, i, vr_u)) for i in range(p)}
    deps.update({vr_dx + i: sorted(_deps(A, i, vr_x) + _deps(B, i, vr_u)) for i in range(n)})
    # the compile units of sources/ (FMI 2.0: <SourceFiles>; FMI 3.0: buildDescription.xml)
    sources = [WRAPPER[fmi_version], *C_UNITS]
    write = _model_description2 if fmi_version == 2 else _model_description3
    xml = write(ident, guid, text, V, unit_of, deps, vr_x, vr_dx, sources)

    cc = compiler()
    with tempfile.TemporaryDirectory(prefix="titopfmu-linear-") as tmp:
        tree = Path(tmp)
        src = tree / "sources"
        src.mkdir()
        units_c = list(sources)
        for f in (*units_c, *HEADERS_C):
            shutil.copy(NATIVE / f, src / f)
        for f in HEADERS if fmi_version == 2 else HEADERS3:
            shutil.copy(FMI_HEADERS / f, src / f)
        (src / CONFIG).write_text(config)
        (src / MATRICES).write_text("\n".join(matrices) + "\n")
        if fmi_version == 3:
            (tree / BUILD_DESCRIPTION).write_bytes(build_description_xml(ident, sources))
        units_c = [f"sources/{f}" for f in units_c]
        linux, windows = PLATFORMS[fmi_version]
        lib = f"binaries/{linux}/{ident}.so"
        (tree / lib).parent.mkdir(parents=True)
        _compile([cc, *FLAGS, "-fPIC", "-I", "sources", *units_c, "-o", lib, "-lm"], ident,
                 cwd=tree)  # fmt: skip
        if win64 is None:
            win64 = shutil.which(MINGW) is not None
        if win64:
            dll = f"binaries/{windows}/{ident}.dll"
            (tree / dll).parent.mkdir(parents=True)
            _compile([MINGW, *FLAGS, "-I", "sources", *units_c, "-o", dll, "-static-libgcc",
                      "-Wl,--no-insert-timestamp"], ident, cwd=tree)  # fmt: skip
        (tree / "modelDescription.xml").write_bytes(xml)
        doc = tree / "documentation" / "index.html"
        doc.parent.mkdir()
        doc.write_text(_documentation(ident, text, all_names, unit_of), encoding="utf-8")
        return zip_fmu(tree, path)


#: a variable of the linear FMU: name, causality, description, start value (or None), initial
Var = tuple[str, str, str, "float | None", "str | None"]


def _units(root: Element, used: set[str]) -> None:
    if used:
        ud = SubElement(root, "UnitDefinitions")
        for u in sorted(used):
            e = SubElement(ud, "Unit", name=u)
            if u in UNITS:
                SubElement(e, "BaseUnit", {k: str(v) for k, v in UNITS[u].items()})


def _model_description2(ident: str, guid: str, text: str, V: list[Var], unit_of: dict[str, str],
                        deps: dict[int, list[int]], vr_x: int, vr_dx: int,
                        sources: list[str]) -> bytes:  # fmt: skip
    """The FMI 2.0 modelDescription.xml: one ScalarVariable a slot, value reference = slot;
    ``sources``: the compile units of ``sources/``."""
    root = Element("fmiModelDescription", {
        "fmiVersion": "2.0", "modelName": ident, "guid": guid, "description": text,
        "generationTool": "titopfmu", "variableNamingConvention": "structured",
        "numberOfEventIndicators": "0",
    })  # fmt: skip
    caps = {"modelIdentifier": ident, "canGetAndSetFMUstate": "true",
            "canSerializeFMUstate": "true", "providesDirectionalDerivative": "true"}  # fmt: skip
    me = SubElement(root, "ModelExchange", {**caps, "completedIntegratorStepNotNeeded": "true"})
    add_source_files(me, sources)
    cs = SubElement(root, "CoSimulation", {**caps, "canHandleVariableCommunicationStepSize": "true",
                                           "canInterpolateInputs": "true",
                                           "maxOutputDerivativeOrder": "1"})  # fmt: skip
    add_source_files(cs, sources)
    _units(root, {u for u in unit_of.values() if u})
    add_log_categories(root)
    SubElement(root, "DefaultExperiment", startTime="0", stopTime="10", stepSize="0.01")
    mv = SubElement(root, "ModelVariables")
    for vr, (name, caus, desc, start, initial) in enumerate(V):
        a = {"name": name, "valueReference": str(vr), "causality": caus,
             "variability": "continuous", "description": desc}  # fmt: skip
        if initial:
            a["initial"] = initial
        sv = SubElement(mv, "ScalarVariable", a)
        r = {}
        if start is not None:
            r["start"] = repr(float(start))
        if vr >= vr_dx:  # the index of its state
            r["derivative"] = str(vr - vr_dx + vr_x + 1)
        elif unit_of.get(name):
            r["unit"] = unit_of[name]
        SubElement(sv, "Real", r)
    ms = SubElement(root, "ModelStructure")
    rows_y = [vr for vr in deps if vr < vr_x]
    rows_dx = [vr for vr in deps if vr >= vr_dx]
    for tag, rows in (("Outputs", rows_y), ("Derivatives", rows_dx),
                      ("InitialUnknowns", rows_y + rows_dx)):  # fmt: skip
        if rows:
            e = SubElement(ms, tag)
            for vr in rows:  # indices: 1-based
                SubElement(e, "Unknown", index=str(vr + 1),
                           dependencies=" ".join(str(d + 1) for d in deps[vr]))  # fmt: skip
    indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + tostring(root, encoding="utf-8")


def _model_description3(ident: str, token: str, text: str, V: list[Var], unit_of: dict[str, str],
                        deps: dict[int, list[int]], vr_x: int, vr_dx: int,
                        sources: list[str]) -> bytes:  # fmt: skip
    """The FMI 3.0 modelDescription.xml: value reference 0 is ``time``, slot k is the Float64
    variable of value reference k + 1 (``sources``: in buildDescription.xml, not here)."""
    del sources
    root = Element("fmiModelDescription", {
        "fmiVersion": "3.0", "modelName": ident, "instantiationToken": token,
        "description": text, "generationTool": "titopfmu",
        "variableNamingConvention": "structured",
    })  # fmt: skip
    caps = {"modelIdentifier": ident, "canGetAndSetFMUState": "true",
            "canSerializeFMUState": "true", "providesDirectionalDerivatives": "true",
            "providesAdjointDerivatives": "true"}  # fmt: skip
    SubElement(root, "ModelExchange", {**caps, "needsCompletedIntegratorStep": "false"})
    SubElement(root, "CoSimulation", {**caps, "canHandleVariableCommunicationStepSize": "true",
                                      "maxOutputDerivativeOrder": "1",
                                      "hasEventMode": "false"})  # fmt: skip
    _units(root, {u for u in unit_of.values() if u} | {"s"})
    add_log_categories(root)
    SubElement(root, "DefaultExperiment", startTime="0", stopTime="10", stepSize="0.01")
    mv = SubElement(root, "ModelVariables")
    SubElement(mv, "Float64", name="time", valueReference="0", causality="independent",
               variability="continuous", unit="s", description="simulation time")  # fmt: skip
    for slot, (name, caus, desc, start, initial) in enumerate(V):
        a = {"name": name, "valueReference": str(slot + 1), "causality": caus,
             "variability": "continuous", "description": desc}  # fmt: skip
        if initial:
            a["initial"] = initial
        if slot >= vr_dx:  # the value reference of its state
            a["derivative"] = str(slot - vr_dx + vr_x + 1)
        elif unit_of.get(name):
            a["unit"] = unit_of[name]
        if start is not None:
            a["start"] = repr(float(start))
        SubElement(mv, "Float64", a)
    ms = SubElement(root, "ModelStructure")
    rows_y = [vr for vr in deps if vr < vr_x]
    rows_dx = [vr for vr in deps if vr >= vr_dx]
    for tag, rows in (("Output", rows_y), ("ContinuousStateDerivative", rows_dx),
                      ("InitialUnknown", rows_y + rows_dx)):  # fmt: skip
        for vr in rows:  # value references: slot + 1
            SubElement(ms, tag, valueReference=str(vr + 1),
                       dependencies=" ".join(str(d + 1) for d in deps[vr]))  # fmt: skip
    indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + tostring(root, encoding="utf-8")


def _default_description(model: LinearModel, ident: str, operating_point: bool,
                         f0: np.ndarray, fmi_version: int = 2) -> str:  # fmt: skip
    n, m, p = len(model.state_names), len(model.input_names), len(model.output_names)
    if operating_point:
        drift = (" + F0 (the drift at a point that is not an equilibrium)"
                 if np.any(f0 != 0.0) else "")  # fmt: skip
        return (
            f"{ident}: linear state-space model (titopfmu.linearize at t = {model.t!r} s), "
            f"{n} states, {m} inputs, {p} outputs. Inputs u and outputs y are absolute: "
            f"y = y0 + C dx + D (u - u0), der(dx) = A dx + B (u - u0){drift}; the states dx are "
            "deviations from the operating point (attitudes as rotation vectors). "
            "Co-simulation steps are exact (matrix exponential; inputs held"
            + (", or ramped with their derivatives)." if fmi_version == 2 else ").")
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
