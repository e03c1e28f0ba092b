"""SSP system structure packages: a co-simulation written as ``.ssp`` (SSP 1.0; SSP 2.0 with
FMI 3.0 FMUs), and read back.

An ``.ssp`` is a zip archive with ``SystemStructure.ssd`` at its root and the FMUs under
``resources/``. :func:`write_ssp` writes a :class:`~titopfmu.master.CoSimulation` as one;
:func:`read_ssp` rebuilds the co-simulation from one (also from an unpacked folder or a bare
``.ssd`` next to its resources), so the same system can be run here and opened in other SSP tools
(libcosim, OMSimulator, ...).

How titopfmu's notions map onto SSP 1.0 (which knows only scalar connectors):

* **Components**: one ``ssd:Component`` per FMU instance (type
  ``application/x-fmu-sharedlibrary``, ``source="resources/<file>.fmu"``), each FMU file stored
  once however many components use it. Its ``ssd:Connectors`` declare every variable the system
  uses (connected, parameterised or held), with the FMU's causality as ``kind`` and its type as
  ``ssc:Real`` / ``ssc:Integer`` / ``ssc:Boolean``.
* **TITOP port pairs**: ``connect("parent.Cj", "child.P")`` becomes 24 scalar connections: the
  motion vector down, ``parent.Cj.m[i]`` -> ``child.P.m[i]`` (i = 1..18), and the wrench up,
  ``child.P.W[i]`` -> ``parent.Cj.W[i]`` (i = 1..6). On reading, scalar connections between a
  child-kind port and a parent-kind port (README "FMUs") are grouped back into a port pair when
  all 24 are present with matching indices; any others stay scalar signal links.
* **Signal links**: one connection per scalar, output -> input.
* **Parameters and held inputs**: one ``ssd:ParameterBinding`` per component whose
  ``ssv:ParameterSet`` (inline in ``ssd:ParameterValues`` by default, or a
  ``resources/<component>.ssv`` file with ``parameter_files=True``) holds the component's
  parameters *and* its held inputs (:meth:`~titopfmu.master.CoSimulation.set_input`). SSP 1.0
  allows binding values to inputs: they are start values applied before initialisation, and an
  unconnected input keeps its start value for the whole run, which is exactly what a held input
  is. On reading, a bound variable whose FMU causality is ``parameter`` becomes a component
  parameter, a bound *Real input* becomes a held input (``set_input``) and a bound Integer or
  Boolean input a parameter of the component (set with its own FMI setter). One parameter set
  per component, because libcosim applies only a component's first one.
* **Default experiment**: ``ssd:DefaultExperiment`` with ``startTime`` and ``stopTime``; SSP 1.0
  has no step attribute, so the communication step is written as the Open Simulation Platform
  annotation (``com.opensimulationplatform``: ``osp:FixedStepAlgorithm baseStepSize``), which
  libcosim reads as well.
* **Annotations**, laid out so that tools open the file unedited: the root holds only
  ``ssd:System`` and ``ssd:DefaultExperiment`` (OMSimulator refuses any other root child than
  ``System``, ``Units``, ``Enumerations`` and ``DefaultExperiment``); the system's
  ``ssd:Annotations`` come last in the system and hold, first, OMSimulator's annotation
  (``org.openmodelica``: ``oms:Annotations/oms:SimulationInformation``; OMSimulator 2 reads only
  the first annotation of a system), then titopfmu's own (``titopfmu``: ``titop:Master`` with
  the coupling option ``CoSimulation.coupling`` and the interface; other tools ignore it).
  OMSimulator's annotation says how it must run the system, in the forms of both OMSimulator 2
  (a child element whose name sets the system type) and OMSimulator 3 (attributes naming the
  default solver of the system's units): for co-simulation units a weakly coupled system,
  ``oms:FixedStepMaster`` with the communication step (3: method ``oms_ma``, ``fixedStepSize``);
  for model-exchange units a strongly coupled system integrated by CVODE,
  ``oms:VariableStepSolver`` (3: method ``cvode``) with the relative tolerance. Files written by
  titopfmu 0.1 (the ``titopfmu`` annotation at the root) are read as well.
* **FMI 3.0** (``write_ssp(..., fmi_version=3)``): the same system with each FMU replaced by the
  FMI 3.0 FMU of the same model identifier, as an SSP 2.0 file (``version="2.0"`` in the SSD and
  the parameter sets; SSP 1.0 knows neither FMI 3.0's types nor arrays). The FMI 2.0 scalars
  ``X[i]`` / ``X[i,j]`` of an array are elements of the FMI 3.0 array variable ``X``: connectors
  of FMI 3.0 type (``ssc:Float64``, ``ssc:Int32``, ``ssc:Boolean``) with ``ssc:Dimension``,
  values as row-major lists with ``ssc:Dimension`` (unset elements at the FMU's start values),
  connections between whole arrays (SSP 2.0 leaves the base of ``startIndices`` open, so a link
  between parts of arrays is refused). Everything else is written as for FMI 2.0.

Reading is strict: every problem (malformed zip or XML, no ``SystemStructure.ssd``, an SSP
feature titopfmu does not implement, an FMU other than FMI 2.0, which the master does not run,
a missing component, FMU, connector or variable, connected
kinds that do not make an output -> input pair, an input fed twice, a parameter value that does
not parse or does not fit its variable, a bad default experiment) raises a
:class:`~titopfmu.master.CosimError` naming the file, the SSD line and the element or variable,
before any FMU is instantiated. A parameter naming a variable the FMU does not have is an error
too (SSP allows ignoring it; a typo should not pass silently).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import weakref
import zipfile
import zlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote, urlparse

from lxml import etree

from .._version import __version__
from ..archives import ArchiveError, Limits, bounded, check, extract
from .components import CosimError, M, W
from .cosim import CoSimulation

SSD = "http://ssp-standard.org/SSP1/SystemStructureDescription"
SSC = "http://ssp-standard.org/SSP1/SystemStructureCommon"
SSV = "http://ssp-standard.org/SSP1/SystemStructureParameterValues"
OSP = "http://opensimulationplatform.com/SSP/OSPAnnotations"
#: OMSimulator's annotation namespace (its ``schema/oms.xsd``)
OMS = "https://raw.githubusercontent.com/OpenModelica/OMSimulator/master/schema/oms.xsd"
TITOP = "urn:titopfmu:ssp"
#: prefixes as written: libcosim's parser and OMSimulator 2's match the literal prefixes ssd:,
#: ssc:, ssv:, osp: and oms:
NSMAP = {"ssd": SSD, "ssc": SSC, "ssv": SSV, "osp": OSP, "oms": OMS, "titop": TITOP}
NS = dict(NSMAP)

SSD_NAME = "SystemStructure.ssd"
FMU_MIME = "application/x-fmu-sharedlibrary"
PARAMETER_SET_MIME = "application/x-ssp-parameter-set"
OSP_ANNOTATION = "com.opensimulationplatform"
OMS_ANNOTATION = "org.openmodelica"
TITOP_ANNOTATION = "titopfmu"
COUPLINGS = ("polynomial", "extrapolated", "hold")
#: FMI interfaces a system can be written for (the components' ``implementation``)
INTERFACES = ("CoSimulation", "ModelExchange")
#: OMSimulator 3 gives every unit without a solver of its own the solver of this name (a
#: co-simulation unit) or of the second (a model-exchange unit), defining it if the system does
#: not: defining it in the system's annotation sets their step or tolerance
OMS3_CS_SOLVER = "oms_ma_default"
OMS3_ME_SOLVER = "oms_me_solver"
#: OMSimulator's defaults (s, and a relative tolerance), written in its annotation where its
#: schema requires a value and the caller gives none (its step is also titopfmu cosim's default)
OMS_DEFAULTS = {"step": 1e-3, "tolerance": 1e-4, "initial_step": 1e-6, "minimum_step": 1e-12}

#: FMI 2.0 type -> SSP connector / parameter type
_SSP_TYPE = {"Real": "Real", "Integer": "Integer", "Enumeration": "Integer", "Boolean": "Boolean"}
_KINDS = ("input", "output", "parameter", "calculatedParameter")
_DOUBLE = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|[+-]?INF|NaN")
_INT = re.compile(r"[+-]?\d+")


@dataclass(frozen=True)
class DefaultExperiment:
    """The SSD's default experiment: start and stop time (s) and communication step (s);
    ``None`` where the SSD gives none. ``interface`` is the FMI interface the system was
    written for (``"CoSimulation"`` or ``"ModelExchange"``, the components'
    ``implementation``) and ``tolerance`` the relative tolerance written with it (``None``:
    none given)."""

    start_time: float = 0.0
    stop_time: float | None = None
    step: float | None = None
    interface: str = "CoSimulation"
    tolerance: float | None = None


class SspSystem(NamedTuple):
    """What :func:`read_ssp` returns: ``cosim, experiment = read_ssp(path)``."""

    cosim: CoSimulation
    experiment: DefaultExperiment


# -- writing ------------------------------------------------------------------------------------


def _q(ns: str, tag: str) -> str:
    return f"{{{NS[ns]}}}{tag}"


def _format_value(value, fmi_type: str) -> tuple[str, str]:
    """(SSV element name, lexical value) of a parameter value for a variable of ``fmi_type``."""
    if fmi_type == "Boolean":
        return "Boolean", "true" if bool(value) else "false"
    if fmi_type in ("Integer", "Enumeration"):
        return "Integer", str(int(value))
    if fmi_type == "Real":
        return "Real", _format_double(float(value))
    raise CosimError(f"type {fmi_type} cannot be written to SSP")


def _format_double(x: float) -> str:
    """xs:double text that reads back as the same double (``repr`` is the shortest such)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "INF" if x > 0 else "-INF"
    return repr(x)


def _check_experiment(start_time: float, stop_time: float | None, step: float | None,
                      where: str) -> None:  # fmt: skip
    if not math.isfinite(start_time):
        raise CosimError(f"{where}: the start time must be finite, got {start_time}")
    if stop_time is not None and not (math.isfinite(stop_time) and stop_time > start_time):
        raise CosimError(
            f"{where}: the stop time {stop_time} must be after the start time {start_time}"
        )
    if step is not None and not (math.isfinite(step) and step > 0):
        raise CosimError(f"{where}: the communication step must be positive, got {step}")


def _used_variables(cs: CoSimulation) -> dict[str, set[str]]:
    used: dict[str, set[str]] = {name: set(c.parameters) for name, c in cs.components.items()}
    for a, pa, b, pb in cs.port_links:
        for i in range(1, M + 1):
            used[a].add(f"{pa}.m[{i}]")
            used[b].add(f"{pb}.m[{i}]")
        for i in range(1, W + 1):
            used[a].add(f"{pa}.W[{i}]")
            used[b].add(f"{pb}.W[{i}]")
    for a, o, b, i in cs.signal_links:
        used[a].add(o)
        used[b].add(i)
    for cname, var in cs.inputs:
        used[cname].add(var)
    return used


def _connections(cs: CoSimulation) -> list[tuple[str, str, str, str]]:
    """Scalar connections (start component, connector, end component, connector)."""
    out = []
    for a, pa, b, pb in cs.port_links:  # a.pa: child-kind port (motion out), b.pb: parent-kind
        out += [(a, f"{pa}.m[{i}]", b, f"{pb}.m[{i}]") for i in range(1, M + 1)]
        out += [(b, f"{pb}.W[{i}]", a, f"{pa}.W[{i}]") for i in range(1, W + 1)]
    return out + list(cs.signal_links)


def _oms_annotation(interface: str, step: float | None, tolerance: float | None):
    """OMSimulator's system annotation (module docstring): how it must run the system.

    One ``oms:SimulationInformation`` in the forms of OMSimulator 2 (its child element sets the
    system type, with the attributes its own export writes: ``FixedStepMaster``, a weakly
    coupled system of co-simulation units, or ``VariableStepSolver``, a strongly coupled one of
    model-exchange units; v2.1 ``Model::getSystemTypeHelper``,
    ``SystemWC``/``SystemSC::exportToSSD_SimulationInformation``) and 3 (its attributes define
    the solver its units use by default; v3 ``System.processElements``). Where the caller gives
    no step or tolerance, OMSimulator's defaults are written (``OMS_DEFAULTS``).
    """
    ann = etree.Element(_q("ssc", "Annotation"), type=OMS_ANNOTATION)
    info = etree.SubElement(etree.SubElement(ann, _q("oms", "Annotations")),
                            _q("oms", "SimulationInformation"))  # fmt: skip
    d = dict(OMS_DEFAULTS)
    if step is not None:
        d["step"] = float(step)
    if tolerance is not None:
        d["tolerance"] = float(tolerance)
    f = {k: _format_double(v) for k, v in d.items()}
    if interface == "CoSimulation":
        for k, v in (("name", OMS3_CS_SOLVER), ("method", "oms_ma"),
                     ("fixedStepSize", f["step"]), ("relativeTolerance", f["tolerance"])):
            info.set(k, v)
        etree.SubElement(info, _q("oms", "FixedStepMaster"), description="oms-ma",
                         stepSize=f["step"], absoluteTolerance=f["tolerance"],
                         relativeTolerance=f["tolerance"])  # fmt: skip
    else:  # the largest integration step is the communication step (the output grid)
        for k, v in (("name", OMS3_ME_SOLVER), ("method", "cvode"),
                     ("relativeTolerance", f["tolerance"]),
                     ("initialStepSize", f["initial_step"]),
                     ("minimumStepSize", f["minimum_step"]), ("maximumStepSize", f["step"])):
            info.set(k, v)
        etree.SubElement(info, _q("oms", "VariableStepSolver"), description="cvode",
                         absoluteTolerance=f["tolerance"], relativeTolerance=f["tolerance"],
                         minimumStepSize=f["minimum_step"], maximumStepSize=f["step"],
                         initialStepSize=f["initial_step"])  # fmt: skip
    return ann


#: SSP version written for the FMUs of each FMI version: SSP 1.0 knows only scalar connectors
#: and FMI 2.0 types; SSP 2.0 adds FMI 3.0's types and array connectors and values
SSP_VERSION = {2: "1.0", 3: "2.0"}
#: FMI 3.0 variable types an SSP 2.0 connector or value can have (the same element names)
_SSP2_TYPES = ("Float64", "Float32", "Int8", "UInt8", "Int16", "UInt16", "Int32", "UInt32",
               "Int64", "UInt64", "Boolean")  # fmt: skip
#: FMI 2.0 type -> the FMI 3.0 types of the same variable in a twin FMU
_FMI3_OF = {"Real": ("Float64", "Float32"), "Integer": _SSP2_TYPES[2:10], "Boolean": ("Boolean",)}
_ELEMENT = re.compile(r"(.+)\[(\d+(?:,\d+)*)\]")


@dataclass
class _Written:
    """A component as written: its FMU file, its connectors (name, kind, SSP type, array shape)
    and its bound values (name, SSV type, lexical value, array shape; parameters first, then
    held inputs)."""

    source: Path
    connectors: list[tuple[str, str, str, tuple[int, ...]]]
    values: list[tuple[str, str, str, tuple[int, ...]]]


def _parameter_set(values, name: str, version: str, nsmap: dict | None = None):
    """The ``ssv:ParameterSet`` of one component's bound ``values`` (:class:`_Written`)."""
    ps = etree.Element(_q("ssv", "ParameterSet"), version=version, name=name, nsmap=nsmap)
    params = etree.SubElement(ps, _q("ssv", "Parameters"))
    for var, kind, text, shape in values:
        p = etree.SubElement(params, _q("ssv", "Parameter"), name=var)
        etree.SubElement(p, _q("ssv", kind), value=text)
        for n in shape:
            etree.SubElement(p, _q("ssc", "Dimension"), size=str(n))
    return ps


def _plan_fmi2(cs: CoSimulation):
    """Components and scalar connections of ``cs`` as its own FMI 2.0 FMUs are written."""
    used = _used_variables(cs)
    comps: dict[str, _Written] = {}
    for c in cs.components.values():
        connectors = []
        for var, v in c.variables.items():  # the FMU's order
            if var not in used[c.name]:
                continue
            if v.causality not in _KINDS or v.type not in _SSP_TYPE:
                raise CosimError(
                    f"component '{c.name}': variable '{var}' ({v.causality} {v.type}) "
                    "cannot be an SSP connector"
                )
            connectors.append((var, v.causality, _SSP_TYPE[v.type], ()))
        inputs = {var: value for (cn, var), value in cs.inputs.items() if cn == c.name}
        values = [(var, *_format_value(value, c.variables[var].type), ())
                  for var, value in [*c.parameters.items(), *inputs.items()]]  # fmt: skip
        comps[c.name] = _Written(Path(c.file.path).resolve(), connectors, values)
    return comps, _connections(cs)


def _titop_variant(md) -> tuple[str, int] | None:
    """(FMU type key, number of child ports) of one of titopfmu's block FMUs, from its model
    description; None for any other FMU."""
    from ..fmi.catalog import FMU_TYPES

    if not str(getattr(md, "generationTool", "") or "").startswith("titopfmu"):
        return None
    ident = md.coSimulation.modelIdentifier
    for t in FMU_TYPES.values():
        if t.variants == (0,):
            if ident == t.model_prefix:
                return t.key, 0
        else:
            m = re.fullmatch(re.escape(t.model_prefix) + r"C(\d+)", ident)
            if m:
                return t.key, int(m.group(1))
    return None


def _fmi3_twins(cs: CoSimulation, fmus, interface: str, notice, where: str):
    """component -> (path, model description) of the FMI 3.0 FMU with the model identifier of
    its FMI 2.0 FMU: from the folder ``fmus``, else titopfmu's block FMUs in the per-user cache
    (built there first if missing, ``notice`` told)."""
    from fmpy import read_model_description

    idents = {n: c.file.md.coSimulation.modelIdentifier for n, c in cs.components.items()}
    if fmus is None:
        from ..fmi.cache import cached_variants

        variants = {}
        mapping = getattr(cs, "system_mapping", None)  # from_system: its flexible blocks' types
        types = dict(mapping.types) if mapping is not None else {}
        for n, c in cs.components.items():
            v = _titop_variant(c.file.md)
            if v is None and mapping is not None and mapping.variants.get(n, ("",))[0] in types:
                v = mapping.variants[n]  # a flexible block's FMU (its reduced model baked in)
            if v is None:
                raise CosimError(
                    f"{where}: component '{n}': its FMU '{c.file.path}' ({idents[n]}) is not "
                    "one of titopfmu's block FMUs, whose FMI 3.0 versions titopfmu builds: give "
                    f"fmus= a folder holding its FMI 3.0 version, {idents[n]}.fmu"
                )
            variants[n] = v
        if notice is None:
            from .from_system import _notice_on_stderr as notice
        folder = cached_variants(sorted(set(variants.values())), notice=notice, fmi_version=3,
                                 types=types)
    else:
        folder = Path(fmus)
    twins: dict[str, tuple[Path, object]] = {}
    mds: dict[Path, object] = {}
    for n, ident in idents.items():
        p = (folder / f"{ident}.fmu").resolve()
        if p not in mds:
            if not p.is_file():
                raise CosimError(
                    f"{where}: component '{n}': no FMI 3.0 FMU '{p}' (the model identifier of "
                    f"its FMU is {ident}); build them with 'titopfmu build --fmi-version 3 --out "
                    f"{folder}'"
                )
            try:
                check(p)
                md = read_model_description(str(p))
            except ArchiveError as exc:
                raise CosimError(f"{where}: component '{n}': {exc}") from None
            except Exception as exc:  # noqa: BLE001 - fmpy raises several kinds
                raise CosimError(f"{where}: component '{n}': '{p}' is not a readable FMU: "
                                 f"{exc}") from None  # fmt: skip
            if md.fmiVersion != "3.0":
                raise CosimError(f"{where}: component '{n}': '{p}' is an FMI {md.fmiVersion} "
                                 "FMU, not FMI 3.0")  # fmt: skip
            kind = md.coSimulation if interface == "CoSimulation" else md.modelExchange
            if kind is None or kind.modelIdentifier != ident:
                raise CosimError(f"{where}: component '{n}': '{p}' has no {interface} interface "
                                 f"of model identifier {ident}")  # fmt: skip
            mds[p] = md
        twins[n] = (p, mds[p])
    return twins


def _start_values(v, size: int) -> list:
    """The start values of the FMI 3.0 variable ``v`` as a list of ``size`` (None: not given)."""
    text = getattr(v, "start", None)
    items = [] if text is None else str(text).split()
    if len(items) != size:
        return [None] * size
    if v.type == "Boolean":
        return [t in ("true", "1") for t in items]
    if v.type.startswith(("Int", "UInt")):
        return [int(t) for t in items]
    return [float(t) for t in items]


def _format_fmi3(value, fmi_type: str) -> str:
    if fmi_type == "Boolean":
        return "true" if bool(value) else "false"
    if fmi_type.startswith("Float"):
        return _format_double(float(value))
    return str(int(value))


def _plan_fmi3(cs: CoSimulation, twins, where: str):
    """Components and connections of ``cs`` with every FMU replaced by its FMI 3.0 twin: the
    FMI 2.0 scalars ``X[i]`` / ``X[i,j]`` of an array are elements of the FMI 3.0 array ``X``
    (row-major), connected and bound as whole arrays."""
    used = _used_variables(cs)
    comps: dict[str, _Written] = {}
    locate: dict[str, object] = {}
    shapes: dict[str, dict[str, tuple[int, ...]]] = {}

    def locator(c, path3, variables3):
        def locate_var(var: str) -> tuple[str, int | None]:
            v2 = c.variables[var]
            base, flat = var, None
            if var not in variables3 or variables3[var].shape:
                m = _ELEMENT.fullmatch(var)
                base = m.group(1) if m else var
                v3 = variables3.get(base)
                index = [int(i) - 1 for i in m.group(2).split(",")] if m else []
                shape = tuple(v3.shape) if v3 is not None else ()
                if v3 is None or not shape or len(index) != len(shape) or not all(
                        0 <= i < n for i, n in zip(index, shape, strict=True)):  # fmt: skip
                    raise CosimError(
                        f"{where}: component '{c.name}': variable '{var}' of its FMU "
                        f"'{c.file.path}' has no counterpart in the FMI 3.0 FMU '{path3}'"
                    )
                flat = 0
                for i, n in zip(index, shape, strict=True):
                    flat = flat * n + i
            v3 = variables3[base]
            if v3.causality != v2.causality or v3.type not in _FMI3_OF.get(v2.type, ()):
                raise CosimError(
                    f"{where}: component '{c.name}': variable '{var}' ({v2.causality} "
                    f"{v2.type}) is '{base}' ({v3.causality} {v3.type}) in the FMI 3.0 FMU "
                    f"'{path3}': the two FMUs do not match"
                )
            return base, flat

        return locate_var

    for c in cs.components.values():
        path3, md3 = twins[c.name]
        variables3 = {v.name: v for v in md3.modelVariables}
        loc = locate[c.name] = locator(c, path3, variables3)
        shapes[c.name] = {name: tuple(v.shape or ()) for name, v in variables3.items()}
        used3 = {loc(var)[0] for var in used[c.name]}
        connectors = []
        for v in md3.modelVariables:  # the FMU's order
            if v.name in used3:
                if v.causality not in _KINDS or v.type not in _SSP2_TYPES:
                    raise CosimError(f"component '{c.name}': variable '{v.name}' ({v.causality} "
                                     f"{v.type}) cannot be an SSP connector")  # fmt: skip
                connectors.append((v.name, v.causality, v.type, shapes[c.name][v.name]))
        inputs = {var: value for (cn, var), value in cs.inputs.items() if cn == c.name}
        arrays: dict[str, list] = {}
        for var, value in [*c.parameters.items(), *inputs.items()]:
            base, flat = loc(var)
            if flat is None:
                arrays[base] = [value]
            else:
                if base not in arrays:
                    shape = shapes[c.name][base]
                    arrays[base] = _start_values(variables3[base], math.prod(shape))
                arrays[base][flat] = value
        values = []
        for base, items in arrays.items():
            if any(x is None for x in items):
                raise CosimError(
                    f"{where}: component '{c.name}': only some elements of the array '{base}' "
                    f"are set, and its FMI 3.0 FMU '{path3}' gives no start values for the others"
                )
            t = variables3[base].type
            values.append((base, t, " ".join(_format_fmi3(x, t) for x in items),
                           shapes[c.name][base]))  # fmt: skip
        comps[c.name] = _Written(path3, connectors, values)

    groups: dict[tuple[str, str, str, str], list] = {}
    for a, x, b, y in _connections(cs):
        (bo, ko), (bi, ki) = locate[a](x), locate[b](y)
        groups.setdefault((a, bo, b, bi), []).append((ko, ki, x, y))
    links = []
    for (a, bo, b, bi), pairs in groups.items():
        so, si = shapes[a][bo], shapes[b][bi]
        if pairs[0][0] is None or pairs[0][1] is None:  # a scalar end: both must be
            whole = not so and not si
        else:  # every element to the same element of an array of the same shape
            same = [(k, k) for k in range(math.prod(so))]
            whole = so == si and sorted(p[:2] for p in pairs) == same
        if not whole:
            _, _, x, y = pairs[0]
            raise CosimError(
                f"{where}: connection {a}.{x} -> {b}.{y}: an SSP 2.0 file of FMI 3.0 FMUs "
                f"connects whole arrays ('{a}.{bo}' -> '{b}.{bi}'), and this co-simulation "
                "connects only some of their elements, or elements at other places"
            )
        links.append((a, bo, b, bi))
    return comps, links


def write_ssp(
    cs: CoSimulation,
    path: str | os.PathLike,
    *,
    start_time: float = 0.0,
    stop_time: float | None = None,
    step: float | None = None,
    name: str | None = None,
    parameter_files: bool = False,
    interface: str = "CoSimulation",
    tolerance: float | None = None,
    fmi_version: int = 2,
    fmus: str | os.PathLike | None = None,
    notice=None,
) -> Path:
    """Write the co-simulation ``cs`` as the SSP archive ``path`` (module docstring):
    ``SystemStructure.ssd`` and the FMUs (each file once) under ``resources/``.

    ``start_time``, ``stop_time`` and ``step`` (s) make its default experiment (give ``step``
    for other tools: OMSimulator and libcosim run at it); ``name`` names the system (default:
    the file's stem); ``parameter_files`` puts each component's parameter set in
    ``resources/<component>.ssv`` instead of inline. ``interface`` is the FMI interface the
    components are used through: ``"CoSimulation"`` (a co-simulation master steps them at
    ``step``) or ``"ModelExchange"`` (one integrator for the whole system, at the relative
    ``tolerance``; every FMU must offer it).

    ``fmi_version=3`` writes the same system with FMI 3.0 FMUs, as an SSP 2.0 file (SSP 1.0
    knows neither FMI 3.0's types nor arrays): each component's FMU is replaced by the FMI 3.0
    FMU of the same model identifier, from the folder ``fmus`` (``titopfmu build --fmi-version
    3 --out DIR``) or, by default, titopfmu's block FMUs built once into the per-user cache
    (``notice``, a function of one string, is told before such a build; None: a line on
    stderr). Ports, signals and vector or matrix parameters are then array connectors and
    values (``ssc:Dimension``, values row-major), connected as whole arrays. titopfmu's master
    runs FMI 2.0 FMUs only: :func:`read_ssp` refuses these files by name. Returns the path
    written.
    """
    path = Path(path)
    where = f"write_ssp('{path}')"
    _check_experiment(float(start_time), stop_time, step, where)
    if interface not in INTERFACES:
        raise CosimError(f"{where}: interface '{interface}' is not one of {INTERFACES}")
    if tolerance is not None and not (math.isfinite(tolerance) and 0 < tolerance < 1):
        raise CosimError(f"{where}: the relative tolerance must be in (0, 1), got {tolerance}")
    if fmi_version not in SSP_VERSION:
        raise CosimError(f"{where}: fmi_version must be 2 or 3, not {fmi_version!r}")
    if fmus is not None and fmi_version != 3:
        raise CosimError(f"{where}: fmus= names the folder of FMI 3.0 FMUs (fmi_version=3); "
                         "with FMI 2.0 the co-simulation's own FMUs are written")  # fmt: skip
    if not cs.components:
        raise CosimError(f"{where}: the co-simulation has no components")
    if interface == "ModelExchange":
        for c in cs.components.values():
            if c.file.md.modelExchange is None:
                raise CosimError(f"{where}: component '{c.name}': its FMU '{c.file.path}' has no "
                                 "model-exchange interface")  # fmt: skip
    for c in cs.components.values():
        if not Path(c.file.path).is_file():
            raise CosimError(f"component '{c.name}': its FMU file '{c.file.path}' no longer "
                             "exists")  # fmt: skip
    if fmi_version == 3:
        twins = _fmi3_twins(cs, fmus, interface, notice, where)
        comps, links = _plan_fmi3(cs, twins, where)
    else:
        comps, links = _plan_fmi2(cs)
    version = SSP_VERSION[fmi_version]
    name = name or path.stem
    # FMU files -> archive names, each file once (same base name, different file: suffixed)
    arcnames: dict[Path, str] = {}
    for w in comps.values():
        src = w.source
        if src in arcnames:
            continue
        stem, k = src.stem, 1
        arc = f"resources/{src.name}"
        while arc in arcnames.values():
            k += 1
            arc = f"resources/{stem}_{k}{src.suffix}"
        arcnames[src] = arc

    root = etree.Element(
        _q("ssd", "SystemStructureDescription"), nsmap=NSMAP, version=version, name=name,
        generationTool=f"titopfmu {__version__}",
    )  # fmt: skip
    system = etree.SubElement(root, _q("ssd", "System"), name=name)
    elements = etree.SubElement(system, _q("ssd", "Elements"))
    ssv_files: dict[str, bytes] = {}
    for cname, w in comps.items():
        comp = etree.SubElement(
            elements, _q("ssd", "Component"), name=cname, type=FMU_MIME,
            source=arcnames[w.source], implementation=interface,
        )  # fmt: skip
        if w.connectors:
            connectors = etree.SubElement(comp, _q("ssd", "Connectors"))
            for var, kind, ssp_type, shape in w.connectors:
                con = etree.SubElement(connectors, _q("ssd", "Connector"), name=var, kind=kind)
                etree.SubElement(con, _q("ssc", ssp_type))
                for n in shape:
                    etree.SubElement(con, _q("ssc", "Dimension"), size=str(n))
        if w.values:
            bindings = etree.SubElement(comp, _q("ssd", "ParameterBindings"))
            if parameter_files:
                arc = f"resources/{cname}.ssv"
                etree.SubElement(bindings, _q("ssd", "ParameterBinding"), source=arc)
                ps = _parameter_set(w.values, cname, version, nsmap={"ssv": SSV, "ssc": SSC})
                ssv_files[arc] = etree.tostring(
                    ps, xml_declaration=True, encoding="UTF-8", pretty_print=True
                )
            else:
                binding = etree.SubElement(bindings, _q("ssd", "ParameterBinding"))
                values = etree.SubElement(binding, _q("ssd", "ParameterValues"))
                values.append(_parameter_set(w.values, cname, version))
    if links:
        connections = etree.SubElement(system, _q("ssd", "Connections"))
        for a, x, b, y in links:
            etree.SubElement(connections, _q("ssd", "Connection"), startElement=a,
                             startConnector=x, endElement=b, endConnector=y)  # fmt: skip
    annotations = etree.SubElement(system, _q("ssd", "Annotations"))  # last in a system
    annotations.append(_oms_annotation(interface, step, tolerance))  # first: OMSimulator 2
    ann = etree.SubElement(annotations, _q("ssc", "Annotation"), type=TITOP_ANNOTATION)
    master = etree.SubElement(ann, _q("titop", "Master"), coupling=str(cs.coupling),
                              interface=interface)  # fmt: skip
    if cs.extrapolation_degree is not None:
        master.set("extrapolationDegree", str(int(cs.extrapolation_degree)))
    if tolerance is not None:
        master.set("tolerance", _format_double(float(tolerance)))
    exp = etree.SubElement(root, _q("ssd", "DefaultExperiment"),
                           startTime=_format_double(float(start_time)))  # fmt: skip
    if stop_time is not None:
        exp.set("stopTime", _format_double(float(stop_time)))
    if step is not None:
        ann = etree.SubElement(etree.SubElement(exp, _q("ssd", "Annotations")),
                               _q("ssc", "Annotation"), type=OSP_ANNOTATION)  # fmt: skip
        alg = etree.SubElement(ann, _q("osp", "Algorithm"))
        etree.SubElement(alg, _q("osp", "FixedStepAlgorithm"),
                         baseStepSize=_format_double(float(step)))  # fmt: skip
    ssd_bytes = etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.part")  # then renamed: no half-written .ssp
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
            z.writestr(SSD_NAME, ssd_bytes)
            for arc, data in ssv_files.items():
                z.writestr(arc, data)
            for src, arc in arcnames.items():  # FMUs are zip files already: stored as they are
                z.write(src, arc, compress_type=zipfile.ZIP_STORED)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


# -- reading ------------------------------------------------------------------------------------


def _parse_xml(data: bytes, where: str):
    parser = etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=True,
                             huge_tree=False)  # fmt: skip
    try:
        return etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        line = f" line {exc.lineno}" if exc.lineno else ""
        raise CosimError(f"{where}{line}: malformed XML: {exc.msg}") from None


def _local(el) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else str(el.tag)


def _unpack(path: Path, limits: Limits | None = None) -> Path:
    """Extract the archive ``path`` into a new temporary folder (removed again on an error):
    :func:`titopfmu.archives.extract`, bounded in size and member count, refusing encrypted,
    absolute, ``..`` and symbolic-link members."""
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            if SSD_NAME not in names:
                ssds = [n for n in names if n.endswith(".ssd")]
                hint = f" (it holds {ssds})" if ssds else ""
                if min((i.header_offset for i in z.infolist()), default=0) > 0:
                    # the zip directory found is not at the archive's start: typically the
                    # directory of an FMU stored inside a truncated .ssp
                    hint = " (the archive looks truncated: the only zip directory found is " \
                           "that of an embedded file)"  # fmt: skip
                raise CosimError(f"'{path}': no {SSD_NAME} at the root of the archive{hint}")
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, OSError) as exc:
        raise CosimError(f"'{path}' is not a readable SSP (zip) archive: {exc}") from None
    try:
        return extract(path, limits=limits, prefix="titopfmu_ssp_")
    except ArchiveError as exc:
        raise CosimError(str(exc)) from None


@dataclass
class _Connector:
    kind: str
    type: str | None
    line: int


class _Reader:
    """One reading of an SSD: its context for error messages and the parsed pieces."""

    def __init__(self, ssd_path: Path, label: str, origin: str) -> None:
        self.ssd_path = ssd_path
        self.base = ssd_path.parent
        self.label = label  # how the SSD is named in messages
        self.origin = origin  # the archive or folder, to name the files in it
        self.mds: dict[Path, object] = {}

    def at(self, el) -> str:
        line = getattr(el, "sourceline", None)
        return f"{self.label}" + (f" line {line}" if line else "")

    def fail(self, el, message: str) -> CosimError:
        return CosimError(f"{self.at(el)}: {message}")

    # -- pieces -------------------------------------------------------------------------------

    def model_description(self, comp: str, source: str, fmu: Path, el):
        if fmu not in self.mds:
            from fmpy import read_model_description

            try:  # before fmpy opens it: bounded, no encrypted or misplaced member
                check(fmu, label=f"'{source}'")
            except ArchiveError as exc:
                raise self.fail(el, f"component '{comp}': {exc}") from None
            try:
                md = read_model_description(str(fmu))
            except Exception as exc:  # noqa: BLE001 - fmpy raises several kinds
                raise self.fail(
                    el, f"component '{comp}': '{source}' is not a readable FMU: {exc}"
                ) from None
            if md.fmiVersion != "2.0":
                raise self.fail(
                    el, f"component '{comp}': '{source}' is an FMI {md.fmiVersion} FMU, and "
                    "titopfmu's master runs FMI 2.0 FMUs only (write the system with FMI 2.0 "
                    "FMUs to run it here: titopfmu export MODEL --ssp FILE --fmi-version 2, or "
                    "write_ssp(..., fmi_version=2))",
                )  # fmt: skip
            if md.coSimulation is None:
                raise self.fail(el, f"component '{comp}': '{source}' is not a co-simulation FMU")
            self.mds[fmu] = md
        return self.mds[fmu]

    def resolve(self, uri: str, el, what: str) -> Path:
        """A file named by a relative URI (or a ``file:`` URI) against the SSD's folder."""
        u = urlparse(uri)
        if u.scheme not in ("", "file") or (u.scheme == "" and u.netloc):
            raise self.fail(el, f"{what}: only relative or file: URIs are supported, got '{uri}'")
        if u.fragment:
            raise self.fail(el, f"{what}: URI fragments (nested SSDs) are not supported: '{uri}'")
        p = Path(unquote(u.path))
        return p if p.is_absolute() else self.base / p

    def parameter_set(self, ps, comp: str, prefix: str) -> dict[str, tuple[str, str, int]]:
        """name -> (SSV type, lexical value, line) of an ``ssv:ParameterSet`` element."""
        if ps is None or ps.tag != _q("ssv", "ParameterSet"):
            raise self.fail(ps, f"component '{comp}': expected an ssv:ParameterSet")
        params = ps.find("ssv:Parameters", NS)
        out: dict[str, tuple[str, str, int]] = {}
        for p in [] if params is None else params.findall("ssv:Parameter", NS):
            pname = p.get("name")
            if not pname:
                raise self.fail(p, f"component '{comp}': a parameter without a name")
            typed = [ch for ch in p if isinstance(ch.tag, str) and ch.tag.startswith(f"{{{SSV}}}")]
            if len(typed) != 1 or _local(typed[0]) not in ("Real", "Integer", "Boolean"):
                found = [_local(ch) for ch in typed]
                raise self.fail(
                    p, f"component '{comp}', parameter '{pname}': expected one ssv:Real, "
                    f"ssv:Integer or ssv:Boolean value, found {found}",
                )  # fmt: skip
            value = typed[0].get("value")
            if value is None:
                raise self.fail(typed[0], f"component '{comp}', parameter '{pname}': no value")
            out[prefix + pname] = (_local(typed[0]), value, p.sourceline or 0)
        return out

    def bindings(self, comp_el, comp: str, fmu: Path) -> dict[str, tuple[str, str, int]]:
        """Every value bound to component ``comp``, later bindings taking priority."""
        values: dict[str, tuple[str, str, int]] = {}
        pbs = comp_el.find("ssd:ParameterBindings", NS)
        for b in [] if pbs is None else pbs.findall("ssd:ParameterBinding", NS):
            mime = b.get("type", PARAMETER_SET_MIME)
            if mime != PARAMETER_SET_MIME:
                raise self.fail(b, f"component '{comp}': parameter binding type '{mime}' is not "
                                   f"supported (only {PARAMETER_SET_MIME})")  # fmt: skip
            if b.find("ssd:ParameterMapping", NS) is not None:
                raise self.fail(b, f"component '{comp}': parameter mappings are not supported")
            prefix = b.get("prefix", "")
            source = b.get("source")
            inline = b.find("ssd:ParameterValues", NS)
            if source:
                if b.get("sourceBase", "SSD") != "SSD":
                    raise self.fail(b, f"component '{comp}': only sourceBase=\"SSD\" is supported")
                f = self.resolve(source, b, f"component '{comp}', parameter binding")
                if not f.is_file():
                    raise self.fail(b, f"component '{comp}': parameter file '{source}' is missing")
                sub = _Reader(f, f"{self.origin}: {source}", self.origin)
                root = _parse_xml(f.read_bytes(), sub.label)
                values.update(sub.parameter_set(root, comp, prefix))
            elif inline is not None:
                sets = [ch for ch in inline if isinstance(ch.tag, str)]
                if len(sets) != 1:
                    raise self.fail(inline, f"component '{comp}': ssd:ParameterValues must hold "
                                            "one ssv:ParameterSet")  # fmt: skip
                values.update(self.parameter_set(sets[0], comp, prefix))
        return values

    def number(self, el, attr: str, text: str) -> float:
        """The xs:double ``text`` of attribute ``attr`` of ``el``."""
        t = text.strip()
        if not _DOUBLE.fullmatch(t):
            raise self.fail(el, f'{_local(el)}: {attr}="{text}" is not a number')
        return float(t.replace("INF", "inf"))

    def experiment(self, root) -> DefaultExperiment:
        el = root.find("ssd:DefaultExperiment", NS)
        if el is None:
            return DefaultExperiment()

        def number(attr: str, text: str | None) -> float | None:
            return None if text is None else self.number(el, attr, text)

        start = number("startTime", el.get("startTime"))
        stop = number("stopTime", el.get("stopTime"))
        step = None
        for ann in el.findall("ssd:Annotations/ssc:Annotation", NS):
            if ann.get("type") == OSP_ANNOTATION:
                for alg in ann.iter(_q("osp", "FixedStepAlgorithm")):
                    step = number("baseStepSize", alg.get("baseStepSize"))
        start = 0.0 if start is None else start
        try:
            _check_experiment(start, stop, step, "DefaultExperiment")
        except CosimError as exc:
            raise self.fail(el, str(exc)) from None
        return DefaultExperiment(start, stop, step)


def _parse_value(r: _Reader, comp: str, name: str, var, entry: tuple[str, str, int]):
    """A bound value checked against its FMU variable: (Python value, is a held Real input)."""
    kind, text, line = entry
    where = f"{r.label} line {line}: component '{comp}', parameter '{name}'"
    t = text.strip()
    fmi = var.type
    if kind == "Real":
        if fmi != "Real":
            raise CosimError(f"{where}: an ssv:Real value for a {fmi} variable")
        if not _DOUBLE.fullmatch(t):
            raise CosimError(f'{where}: value "{text}" is not a number')
        value: object = float(t.replace("INF", "inf"))
        if not math.isfinite(value):
            raise CosimError(f"{where}: non-finite value {text}")
    elif kind == "Integer":
        if fmi not in ("Integer", "Enumeration", "Real"):
            raise CosimError(f"{where}: an ssv:Integer value for a {fmi} variable")
        if not _INT.fullmatch(t) or not -(2**31) <= int(t) < 2**31:
            raise CosimError(f'{where}: value "{text}" is not a 32-bit integer')
        value = float(int(t)) if fmi == "Real" else int(t)
    else:
        if fmi != "Boolean":
            raise CosimError(f"{where}: an ssv:Boolean value for a {fmi} variable")
        if t not in ("true", "false", "1", "0"):
            raise CosimError(f'{where}: value "{text}" is not a boolean (true, false, 1, 0)')
        value = t in ("true", "1")
    if var.variability == "constant":
        raise CosimError(f"{where}: the variable is a constant of its FMU and cannot be set")
    if var.causality not in ("parameter", "input"):
        raise CosimError(f"{where}: the variable is an {var.causality}, not a parameter or input")
    return value, var.causality == "input" and fmi == "Real"


def read_ssp(path: str | os.PathLike, *, limits: Limits | None = None) -> SspSystem:
    """Read an SSP: an ``.ssp`` archive, a folder holding ``SystemStructure.ssd``, or an
    ``.ssd`` file; returns ``(cosim, experiment)`` (module docstring for the mapping).

    An archive is extracted to a temporary folder that lives as long as the returned
    co-simulation (its components' ``file.path`` point into it, so the system can be written
    again). The archive and each FMU in it are unpacked by :func:`titopfmu.archives.extract`:
    bounded in expanded size, member count and compression ratio (``limits``, a
    :class:`titopfmu.archives.Limits`, over the environment's ``TITOPFMU_ARCHIVE_MAX_*`` and the
    defaults), encrypted, absolute, ``..`` and symbolic-link members refused; nothing is left
    behind on a refusal. Raises :class:`~titopfmu.master.CosimError` naming the file, line and
    element (or the archive and member) on any problem, before any FMU is instantiated.
    """
    try:
        with bounded(limits):
            return _read_ssp(Path(path), limits)
    except ArchiveError as exc:  # a bad bound (the environment's)
        raise CosimError(str(exc)) from None


def _read_ssp(path: Path, limits: Limits | None) -> SspSystem:
    if not path.exists():
        raise CosimError(f"SSP file '{path}' not found")
    tmp = None
    if path.is_dir():
        ssd_path, origin = path / SSD_NAME, str(path)
        if not ssd_path.is_file():
            raise CosimError(f"'{path}': no {SSD_NAME} in the folder")
    elif path.suffix.lower() == ".ssd":
        ssd_path, origin = path, str(path.parent)
    else:
        tmp = _unpack(path, limits)
        ssd_path, origin = tmp / SSD_NAME, str(path)
    label = f"{origin}: {ssd_path.name}"
    try:
        cs, experiment = _read_ssd(_Reader(ssd_path, label, origin))
    except BaseException:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    if tmp is not None:
        # the extracted resources live as long as the co-simulation that refers to them
        weakref.finalize(cs, shutil.rmtree, str(tmp), True)
    return SspSystem(cs, experiment)


def _read_ssd(r: _Reader) -> tuple[CoSimulation, DefaultExperiment]:
    root = _parse_xml(r.ssd_path.read_bytes(), r.label)
    if root.tag != _q("ssd", "SystemStructureDescription"):
        raise r.fail(root, f"the root element is {root.tag}, not an SSP 1.0 "
                           f"ssd:SystemStructureDescription ({{{SSD}}})")  # fmt: skip
    system = root.find("ssd:System", NS)
    if system is None:
        raise r.fail(root, "no ssd:System element")
    if system.find("ssd:Connectors/ssd:Connector", NS) is not None:
        raise r.fail(system, "system-level connectors are not supported (only FMU components "
                             "connected to one another)")  # fmt: skip
    if system.find("ssd:ParameterBindings/ssd:ParameterBinding", NS) is not None:
        raise r.fail(system, "system-level parameter bindings are not supported: bind values "
                             "to the components")  # fmt: skip
    experiment = r.experiment(root)
    cs = CoSimulation()
    interface, tolerance = None, None
    # titopfmu's annotation: in the system; at the root in files of titopfmu 0.1
    for ann in [*system.findall("ssd:Annotations/ssc:Annotation", NS),
                *root.findall("ssd:Annotations/ssc:Annotation", NS)]:  # fmt: skip
        if ann.get("type") == TITOP_ANNOTATION:
            for master in ann.findall("titop:Master", NS):
                coupling = master.get("coupling", "polynomial")
                if coupling not in COUPLINGS:
                    raise r.fail(master, f"coupling '{coupling}' is not one of {COUPLINGS}")
                cs.coupling = coupling
                degree = master.get("extrapolationDegree")
                if degree is not None:
                    if degree not in ("0", "1", "2", "3"):
                        raise r.fail(master, f"extrapolationDegree '{degree}' is not 0, 1, 2 "
                                             "or 3")  # fmt: skip
                    cs.extrapolation_degree = int(degree)
                interface = master.get("interface", interface)
                if interface is not None and interface not in INTERFACES:
                    raise r.fail(master, f"interface '{interface}' is not one of {INTERFACES}")
                if master.get("tolerance") is not None:
                    tolerance = r.number(master, "tolerance", master.get("tolerance"))
                    if not 0 < tolerance < 1:
                        raise r.fail(master, f"the relative tolerance must be in (0, 1), got "
                                             f"{master.get('tolerance')}")  # fmt: skip

    # components: FMU, declared connectors, bound values
    elements = system.find("ssd:Elements", NS)
    comp_vars: dict[str, dict[str, object]] = {}
    connectors: dict[str, dict[str, _Connector]] = {}
    held: list[tuple[str, str, float, int]] = []
    for el in [] if elements is None else elements:
        if not isinstance(el.tag, str):
            continue
        if el.tag != _q("ssd", "Component"):
            raise r.fail(el, f"element ssd:{_local(el)} is not supported (only FMU components)")
        name = el.get("name")
        if not name:
            raise r.fail(el, "a component without a name")
        if name in comp_vars:
            raise r.fail(el, f"a second component named '{name}'")
        mime = el.get("type", FMU_MIME)
        if mime != FMU_MIME:
            raise r.fail(el, f"component '{name}': type '{mime}' is not supported (only FMUs, "
                             f"{FMU_MIME})")  # fmt: skip
        implementation = el.get("implementation", "any")
        if implementation not in ("any", *INTERFACES):
            raise r.fail(el, f"component '{name}': implementation '{implementation}' is not "
                             f"one of any, {', '.join(INTERFACES)}")  # fmt: skip
        if implementation != "any":
            if interface is None:
                interface = implementation
            elif implementation != interface:
                raise r.fail(el, f"component '{name}': implementation '{implementation}', but "
                                 f"the system is written for {interface} (every component "
                                 "must use the same interface)")  # fmt: skip
        source = el.get("source")
        if not source:
            raise r.fail(el, f"component '{name}' has no source")
        fmu = r.resolve(source, el, f"component '{name}'")
        if not fmu.is_file():
            raise r.fail(el, f"component '{name}': its FMU '{source}' is missing")
        md = r.model_description(name, source, fmu, el)
        if implementation == "ModelExchange" and md.modelExchange is None:
            raise r.fail(el, f"component '{name}': implementation 'ModelExchange', but its FMU "
                             f"'{source}' has no model-exchange interface")  # fmt: skip
        variables = {v.name: v for v in md.modelVariables}
        comp_vars[name] = variables
        declared: dict[str, _Connector] = {}
        for con in el.findall("ssd:Connectors/ssd:Connector", NS):
            cname, kind = con.get("name"), con.get("kind")
            if cname in declared:
                raise r.fail(con, f"component '{name}': connector '{cname}' declared twice")
            if cname not in variables:
                raise r.fail(con, f"component '{name}': connector '{cname}' is not a variable of "
                                  f"its FMU '{source}'")  # fmt: skip
            v = variables[cname]
            if kind != v.causality:
                raise r.fail(con, f"component '{name}': connector '{cname}' is declared as "
                                  f"{kind!r} but is an {v.causality} of its FMU")  # fmt: skip
            typed = [_local(ch) for ch in con if isinstance(ch.tag, str)
                     and ch.tag.startswith(f"{{{SSC}}}")]  # fmt: skip
            ctype = typed[0] if typed else None
            if ctype is not None and _SSP_TYPE.get(v.type) != ctype:
                raise r.fail(con, f"component '{name}': connector '{cname}' is declared "
                                  f"ssc:{ctype} but is a {v.type} of its FMU")  # fmt: skip
            declared[cname] = _Connector(kind, ctype, con.sourceline or 0)
        connectors[name] = declared
        parameters: dict[str, object] = {}
        for pname, entry in r.bindings(el, name, fmu).items():
            if pname not in variables:
                raise CosimError(f"{r.label} line {entry[2]}: component '{name}': parameter "
                                 f"'{pname}' is not a variable of its FMU '{source}'")  # fmt: skip
            value, is_held = _parse_value(r, name, pname, variables[pname], entry)
            if is_held:
                held.append((name, pname, value, entry[2]))
            else:
                parameters[pname] = value
        try:
            cs.add(name, fmu, parameters)
        except CosimError as exc:
            raise r.fail(el, f"component '{name}': {exc}") from None

    # connections: scalar output -> input pairs
    scalars: list[tuple[str, str, str, str, int]] = []
    fed: dict[tuple[str, str], int] = {}
    conns = system.find("ssd:Connections", NS)
    for k, con in enumerate([] if conns is None else conns.findall("ssd:Connection", NS), 1):
        ends = []
        desc = (f"connection {k} ({con.get('startElement')}.{con.get('startConnector')} -> "
                f"{con.get('endElement')}.{con.get('endConnector')})")  # fmt: skip
        for side in ("start", "end"):
            comp, var = con.get(f"{side}Element"), con.get(f"{side}Connector")
            if comp is None:
                raise r.fail(con, f"{desc}: {side}Element is missing (connections to system "
                                  "connectors are not supported)")  # fmt: skip
            if comp not in comp_vars:
                raise r.fail(con, f"{desc}: no component '{comp}' (components: "
                                  f"{sorted(comp_vars)})")  # fmt: skip
            if var is None:
                raise r.fail(con, f"{desc}: {side}Connector is missing")
            if var not in connectors[comp]:
                extra = "" if var in comp_vars[comp] else " (nor a variable of its FMU)"
                raise r.fail(con, f"{desc}: component '{comp}' declares no connector "
                                  f"'{var}'{extra}")  # fmt: skip
            ends.append((comp, var, comp_vars[comp][var]))
        if any(isinstance(ch.tag, str) and ch.tag.startswith(f"{{{SSC}}}") for ch in con):
            raise r.fail(con, f"{desc}: transformations are not supported")
        kinds = (ends[0][2].causality, ends[1][2].causality)
        if kinds == ("output", "input"):
            src, dst = ends
        elif kinds == ("input", "output"):
            dst, src = ends
        else:
            raise r.fail(con, f"{desc} joins an {kinds[0]} and an {kinds[1]}: a connection "
                              "goes from an output to an input")  # fmt: skip
        if src[2].type != dst[2].type:
            raise r.fail(con, f"{desc} joins a {src[2].type} and a {dst[2].type} variable")
        if (dst[0], dst[1]) in fed:
            raise r.fail(con, f"{desc}: input '{dst[0]}.{dst[1]}' is already fed by the "
                              f"connection on line {fed[(dst[0], dst[1])]}")  # fmt: skip
        fed[(dst[0], dst[1])] = con.sourceline or 0
        scalars.append((src[0], src[1], dst[0], dst[1], con.sourceline or 0))

    for cname, var, value, line in held:
        try:
            cs.set_input(f"{cname}.{var}", value)
        except CosimError as exc:
            raise CosimError(f"{r.label} line {line}: {exc}") from None

    # TITOP port pairs: all 24 scalar connections of a child-kind -> parent-kind port pair
    groups: dict[tuple[str, str, str, str], set[str]] = {}
    first: dict[tuple[str, str, str, str], int] = {}
    role: list[tuple[tuple[str, str, str, str], str] | None] = []
    for k, (a, o, b, i, _line) in enumerate(scalars):
        key_tag = _port_scalar(cs, a, o, b, i)
        role.append(key_tag)
        if key_tag is not None:
            key, tag = key_tag
            groups.setdefault(key, set()).add(tag)
            first.setdefault(key, k)
    complete = {key for key, tags in groups.items() if len(tags) == M + W}
    for key in sorted(complete, key=first.__getitem__):
        a, pa, b, pb = key
        try:
            cs.connect(f"{a}.{pa}", f"{b}.{pb}")
        except CosimError as exc:
            raise CosimError(f"{r.label}: port pair {a}.{pa} -> {b}.{pb}: {exc}") from None
    for (a, o, b, i, line), key_tag in zip(scalars, role, strict=True):
        if key_tag is not None and key_tag[0] in complete:
            continue
        try:
            cs.connect(f"{a}.{o}", f"{b}.{i}")
        except CosimError as exc:
            raise CosimError(f"{r.label} line {line}: {exc}") from None
    experiment = replace(experiment, interface=interface or "CoSimulation", tolerance=tolerance)
    return cs, experiment


def _port_scalar(cs: CoSimulation, a: str, o: str, b: str, i: str):
    """If output ``a.o`` -> input ``b.i`` is one scalar of a TITOP port pair: ((component with
    the child-kind port, port, component with the parent-kind port, port), 'm<k>' or 'W<k>')."""
    mo = re.fullmatch(r"(.+)\.([mW])\[(\d+)\]", o)
    mi = re.fullmatch(r"(.+)\.([mW])\[(\d+)\]", i)
    if not (mo and mi) or mo.group(2) != mi.group(2) or mo.group(3) != mi.group(3):
        return None
    ca, cb = cs.components[a], cs.components[b]
    tag = f"{mo.group(2)}{mo.group(3)}"
    if mo.group(2) == "m" and mo.group(1) in ca.child_ports and mi.group(1) in cb.parent_ports:
        return (a, mo.group(1), b, mi.group(1)), tag
    if mo.group(2) == "W" and mo.group(1) in ca.parent_ports and mi.group(1) in cb.child_ports:
        return (b, mi.group(1), a, mo.group(1)), tag
    return None
