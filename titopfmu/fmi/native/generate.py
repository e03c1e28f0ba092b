"""Native FMUs: the generated parts of one FMU (its ``fmu_config.h`` and ``modelDescription.xml``).

A native FMU is the C core (``titopfmu/core/csrc``), the FMI 2.0 wrapper written once
(``fmi2_block.c``) and a configuration generated here from the FMU type's catalog entry
(:mod:`titopfmu.fmi.catalog`): its variables are those of today's FMUs, in the same order and with
the same value references (ports first, each port's components consecutive, then the parameters),
followed by ``solver.max_substeps`` and, for model exchange, the continuous states and their
derivatives. No physics here: only which variable is what.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element, SubElement, indent, tostring

import numpy as np

from ...blocks.declarations import BLOCK_TYPES
from ...blocks.standalone import StandaloneBlock
from ...core.model import NativeTree, builtin_kind, flex_ints, flex_row
from ..catalog import FmuType, Param, default_values
from ..ports import UNIT_DEFINITIONS, port_variables

T_REAL, T_INT, T_BOOL = 0, 1, 2
C_PARAM, C_INPUT, C_OUTPUT, C_LOCAL = 0, 1, 2, 3

#: parameters every native FMU adds after the block's own (the first two as today's FMUs)
SOLVER_PARAMS = [
    Param("solver.max_step", (), "s", 1e-3,
          "largest internal step within a communication step (inputs held, or interpolated "
          "with their derivatives)", role="PAR_MAX_STEP"),
    Param("solver.method", (), "", 2,
          "order of the internal explicit Runge-Kutta method over a communication step: 2 (Heun, "
          "default), 4 (classical RK4) or 1 (Euler)", integer=True, role="PAR_METHOD"),
    Param("solver.max_substeps", (), "", 100000,
          "largest number of internal steps in one fmi2DoStep: a longer step is refused with "
          "fmi2Error (never hours of work)", integer=True, role="PAR_MAX_SUBSTEPS"),
]  # fmt: skip

#: the role codes of fmu_config.h: what a parameter is to the C wrapper (``fmu_block.c``); each
#: FMI parameter has one, from its declaration (:attr:`titopfmu.fmi.catalog.Param.role`)
ROLES = sorted([
    "PAR_MASS", "PAR_INERTIA", "PAR_COM", "PAR_GRAVITY", "PAR_POINT", "PAR_EXT_POINT",
    "PAR_EXT_INERTIAL", "PAR_AXIS", "PAR_ARMATURE", "PAR_DCM", "PAR_Q0", "PAR_QD0", "PAR_POSITION0",
    "PAR_EULER0", "PAR_TWIST0", "PAR_JPOSITION0", "PAR_JEULER0", "PAR_JVELOCITY0",
    "PAR_JOMEGA0", "PAR_GROUND_POSITION", "PAR_GROUND_EULER", "PAR_K", "PAR_D", "PAR_LAW_K",
    "PAR_LAW_D", "PAR_LAW_ENABLED", "PAR_LAW_QREF", "PAR_LAW_FRICTION",
    "PAR_LAW_FRICTION_VELOCITY",
    "PAR_LAW_LIMITED", "PAR_LAW_LOWER", "PAR_LAW_UPPER", "PAR_LAW_K_STOP", "PAR_LAW_D_STOP",
    "PAR_MAX_STEP", "PAR_METHOD", "PAR_MAX_SUBSTEPS", "PAR_MIMIC_MULTIPLIER", "PAR_MIMIC_OFFSET",
    "PAR_JDAMPING", "PAR_JSTIFFNESS", "PAR_JSPRING_REF", "PAR_JSPRING_POS",
]) + ["PAR_ELASTIC_Q0", "PAR_ELASTIC_QD0"]  # a flexible block's [q(0), q̇(0)]  # fmt: skip
OUT_ROLES = ["OUT_WRENCH_PARENT", "OUT_PORT_MOTION", "OUT_BODY_MOTION", "OUT_JOINT_MOTION",
             "OUT_EFFORT", "OUT_BODY_WRENCH", "OUT_CLOSURE_LEFT", "OUT_CLOSURE_RIGHT",
             "OUT_LAW"]  # fmt: skip

#: the log categories of every native FMU, as fmu.c passes them to the host's logger by the
#: message's status (fmi2_block.c, fmi3_block.c; ``fmi3InstantiateScheduledExecution`` logs its
#: refusal as ``logStatusError``): ``<LogCategories>`` of both FMI versions
LOG_CATEGORIES = (
    ("logStatusError", "a refused call (status Error): what was refused and why, naming the "
     "variable, parameter, state or block at fault and the time"),
    ("logStatusWarning", "a doubtful value accepted (status Warning), e.g. principal moments of "
     "inertia that violate the triangle inequality"),
    ("logAll", "informational messages (status OK)"),
)  # fmt: skip

#: where an FMI 3.0 FMU's build description is (FMI 3.0, section 2.5.1: the sources' compile
#: units, include directory and language; FMI 2.0 lists the units in modelDescription.xml)
BUILD_DESCRIPTION = "sources/buildDescription.xml"

#: units of single components of a parameter whose components differ in unit, by role, as the
#: declarations state them (Parameter.units): FMI 2.0 gives each scalar its own; an FMI 3.0
#: array carries one unit, so it has none (its description says which element is what)
COMPONENT_UNITS = {p.role: p.units for d in BLOCK_TYPES.values() for p in d.parameters
                   if p.units}  # fmt: skip


def rate_unit(unit: str) -> str:
    """The unit of the time derivative of a quantity in ``unit`` (m -> m/s, rad/s -> rad/s2), or
    "" when that unit is not one of :data:`UNIT_DEFINITIONS` (a quaternion component's 1/s)."""
    rate = unit + "2" if unit.endswith("/s") else (unit + "/s" if unit else "1/s")
    return rate if rate in UNIT_DEFINITIONS else ""


def add_log_categories(root: Element) -> None:
    """``<LogCategories>`` (:data:`LOG_CATEGORIES`) under the model description ``root``, in
    its place (after the unit and type definitions, before the default experiment)."""
    cats = SubElement(root, "LogCategories")
    for name, description in LOG_CATEGORIES:
        SubElement(cats, "Category", name=name, description=description)


def add_source_files(interface: Element, sources: list[str]) -> None:
    """FMI 2.0: ``<SourceFiles>`` under ``<ModelExchange>`` or ``<CoSimulation>``, the compile
    units ``sources`` (names relative to ``sources/``); nothing when there is none."""
    if sources:
        files = SubElement(interface, "SourceFiles")
        for f in sources:
            SubElement(files, "File", name=f)


def build_description_xml(model_identifier: str, sources: list[str]) -> bytes:
    """FMI 3.0 ``sources/buildDescription.xml``: one build configuration of the compile units
    ``sources`` (names relative to ``sources/``), C99, the include directory ``sources/``
    itself (the headers are beside the units)."""
    root = Element("fmiBuildDescription", fmiVersion="3.0")
    bc = SubElement(root, "BuildConfiguration", modelIdentifier=model_identifier,
                    description="the C99 compile units of the FMU's shared library; on Linux "
                    "link the C math library (-lm)")  # fmt: skip
    fs = SubElement(bc, "SourceFileSet", language="C99")
    for f in sources:
        SubElement(fs, "SourceFile", name=f)
    SubElement(fs, "IncludeDirectory", name=".")
    indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + tostring(root, encoding="utf-8")


@dataclass
class Variable:
    name: str
    type: int
    causality: int
    default: float
    unit: str = ""
    description: str = ""
    derivative_of: int | None = None  # 1-based index of the state (model exchange)


@dataclass
class Array:
    """One FMI 3.0 variable: consecutive slots (FMI 2.0 scalars) ``slot0 .. slot0 + size - 1``,
    row-major for a matrix, with its ``<Dimension>`` sizes (empty for a scalar)."""

    name: str
    slot0: int
    dims: tuple[int, ...]
    description: str = ""

    @property
    def size(self) -> int:
        return int(np.prod(self.dims)) if self.dims else 1


@dataclass
class NativeFmu:
    """Everything generated for one FMU type and child-port count."""

    ftype: FmuType
    n_children: int
    variables: list[Variable] = field(default_factory=list)
    inputs: list[tuple[int, int, int]] = field(default_factory=list)  # (core offset, vr0, n)
    outputs: list[tuple[str, int, int, int]] = field(default_factory=list)  # role, arg, vr0, n
    params: list[tuple[str, int, int]] = field(default_factory=list)  # role, arg, vr0
    defines: dict[str, object] = field(default_factory=dict)
    deps: dict[int, list[int]] = field(default_factory=dict)  # output vr -> input vrs
    fmi_version: int = 2
    arrays: list[Array] = field(default_factory=list)  # the FMI 3.0 variables, after 'time'
    #: a whole-model FMU (titopfmu.fmi.model): its modelIdentifier, description, default
    #: experiment (startTime, stopTime, stepSize, tolerance) and more fmu_config.h lines
    name: str = ""
    title: str = ""
    experiment: tuple[float, float, float, float | None] = (0.0, 1.0, 0.001, None)
    config_lines: list[str] = field(default_factory=list)
    #: the C compile units of ``sources/`` (names relative to it), set by the build
    #: (:mod:`titopfmu.fmi.native.build`) before the model description is written: FMI 2.0's
    #: ``<SourceFiles>``, FMI 3.0's ``sources/buildDescription.xml``
    sources: list[str] = field(default_factory=list)

    @property
    def model_name(self) -> str:
        return self.name or self.ftype.model_name(self.n_children)

    def _experiment(self, root: Element) -> None:
        start, stop, step, tol = self.experiment
        attrs = {"startTime": repr(float(start)), "stopTime": repr(float(stop)),
                 "stepSize": repr(float(step))}  # fmt: skip
        if tol is not None:
            attrs["tolerance"] = repr(float(tol))
        SubElement(root, "DefaultExperiment", attrs)

    @property
    def guid(self) -> str:
        h = hashlib.sha1(self.config_header(with_guid=False).encode()).hexdigest()
        if self.fmi_version == 3:  # FMI 3.0's instantiationToken, distinct from the FMI 2 GUID
            h = hashlib.sha1(("fmi3" + h).encode()).hexdigest()
        return str(uuid.UUID(h[:32]))

    # -- fmu_config.h ----------------------------------------------------------------------

    def config_header(self, with_guid: bool = True) -> str:
        lines = [
            f"/* fmu_config.h -- generated by titopfmu for {self.model_name}: the variables of",
            "   the FMU and what they are (see titopfmu/fmi/native/generate.py). */",
            "#ifndef FMU_CONFIG_H", "#define FMU_CONFIG_H",
            f'#define FMU_MODEL_NAME "{self.model_name}"',
        ]  # fmt: skip
        if with_guid:
            lines.append(f'#define FMU_GUID "{{{self.guid}}}"')
        for k, v in self.defines.items():
            lines.append(f"#define {k} {v}")
        lines.append(f"#define FMU_NVARS {len(self.variables)}")
        for i, r in enumerate(ROLES):
            lines.append(f"#define {r} {i}")
        for i, r in enumerate(OUT_ROLES):
            lines.append(f"#define {r} {i}")
        v = self.variables

        def arr(ctype: str, name: str, values: list[str]) -> None:
            lines.append(f"static const {ctype} {name}[] = {{")
            for i in range(0, len(values), 8):
                lines.append("    " + ", ".join(values[i : i + 8]) + ",")
            lines.append("};")

        arr("unsigned char", "FMU_VAR_TYPE", [str(x.type) for x in v])
        arr("unsigned char", "FMU_VAR_CAUS", [str(x.causality) for x in v])
        arr("char *const", "FMU_VAR_NAME", ['"' + x.name + '"' for x in v])
        arr("double", "FMU_DEFAULT", [repr(float(x.default)) for x in v])
        lines.append("static const int FMU_INPUTS[][4] = {")
        rows = [f"    {{0, {o}, {vr0}, {n}}}," for o, vr0, n in self.inputs]
        lines += rows or ["    {0, 0, 0, 0},"]
        lines.append("};")
        lines.append("static const int FMU_OUTPUTS[][4] = {")
        lines += [f"    {{{r}, {a}, {vr0}, {n}}}," for r, a, vr0, n in self.outputs]
        lines.append("};")
        lines.append("static const int FMU_PARAMS[][3] = {")
        lines += [f"    {{{r}, {a}, {vr0}}}," for r, a, vr0 in self.params]
        lines.append("};")
        if self.fmi_version == 3:  # FMI 3.0 value reference -> first slot, number of slots
            lines.append(f"#define FMU3_NVARS {len(self.arrays) + 1}")
            lines.append("static const int FMU3_VARS[][2] = {")
            lines.append("    {-1, 1}, /* time */")
            lines += [f"    {{{a.slot0}, {a.size}}}, /* {a.name} */" for a in self.arrays]
            lines.append("};")
        lines += self.config_lines
        lines.append("#endif")
        return "\n".join(lines) + "\n"

    # -- modelDescription.xml --------------------------------------------------------------

    def model_description(self, description: str = "") -> bytes:
        if self.fmi_version == 3:
            return self.model_description3(description)
        nx = int(self.defines["FMU_NX"])
        root = Element("fmiModelDescription", {
            "fmiVersion": "2.0", "modelName": self.model_name, "guid": "{" + self.guid + "}",
            "description": description or self.title or self.ftype.title,
            "generationTool": "titopfmu",
            "variableNamingConvention": "structured",
            "numberOfEventIndicators": "0",
        })  # fmt: skip
        caps = {"modelIdentifier": self.model_name, "canGetAndSetFMUstate": "true",
                "canSerializeFMUstate": "true", "providesDirectionalDerivative": "true",
                "canNotUseMemoryManagementFunctions": "false"}  # fmt: skip
        me = SubElement(root, "ModelExchange",
                        {**caps, "completedIntegratorStepNotNeeded": "true"})  # fmt: skip
        add_source_files(me, self.sources)
        cs = SubElement(root, "CoSimulation", {**caps,
                                               "canHandleVariableCommunicationStepSize": "true",
                                               "canInterpolateInputs": "true",
                                               "maxOutputDerivativeOrder": "0"})  # fmt: skip
        add_source_files(cs, self.sources)
        used = {x.unit for x in self.variables if x.unit}
        if used:
            units = SubElement(root, "UnitDefinitions")
            for name, exps in UNIT_DEFINITIONS.items():
                if name in used:
                    u = SubElement(units, "Unit", name=name)
                    SubElement(u, "BaseUnit", {k: str(e) for k, e in exps.items()})
        add_log_categories(root)
        self._experiment(root)
        mv = SubElement(root, "ModelVariables")
        caus = {C_PARAM: "parameter", C_INPUT: "input", C_OUTPUT: "output", C_LOCAL: "local"}
        for vr, x in enumerate(self.variables):
            attrs = {"name": x.name, "valueReference": str(vr), "causality": caus[x.causality]}
            if x.description:
                attrs["description"] = x.description
            if x.causality == C_PARAM:
                attrs["variability"] = "fixed"
                attrs["initial"] = "exact"
            else:
                attrs["variability"] = "continuous"
            if x.causality == C_LOCAL:
                attrs["initial"] = "calculated"
            sv = SubElement(mv, "ScalarVariable", attrs)
            tag = ("Real", "Integer", "Boolean")[x.type]
            a = {}
            if x.causality in (C_PARAM, C_INPUT):
                a["start"] = (repr(float(x.default)) if x.type == T_REAL
                              else str(int(x.default)) if x.type == T_INT
                              else ("true" if x.default else "false"))  # fmt: skip
            if x.type == T_REAL and x.unit:
                a["unit"] = x.unit
            if x.derivative_of is not None:
                a["derivative"] = str(x.derivative_of)
            SubElement(sv, tag, a)
        ms = SubElement(root, "ModelStructure")
        outs = [vr for vr, x in enumerate(self.variables) if x.causality == C_OUTPUT]
        states = list(range(int(self.defines["FMU_X_VR0"]), int(self.defines["FMU_X_VR0"]) + nx))
        if outs:
            o = SubElement(ms, "Outputs")
            for vr in outs:
                d = " ".join(str(i + 1) for i in self.deps.get(vr, []))
                SubElement(o, "Unknown", index=str(vr + 1), dependencies=d)
        if nx:
            dv = SubElement(ms, "Derivatives")
            dx0 = int(self.defines["FMU_DX_VR0"])
            for k in range(nx):
                deps = " ".join(str(i + 1) for i in self.deps.get(dx0 + k, []))
                SubElement(dv, "Unknown", index=str(dx0 + k + 1), dependencies=deps)
        if outs or nx:
            init = SubElement(ms, "InitialUnknowns")
            params = [vr for vr, x in enumerate(self.variables) if x.causality == C_PARAM]
            inputs = [vr for vr, x in enumerate(self.variables) if x.causality == C_INPUT]
            x0 = int(self.defines["FMU_X_VR0"])
            dx0 = int(self.defines["FMU_DX_VR0"])
            unknowns = outs + states + list(range(dx0, dx0 + nx))
            for vr in sorted(unknowns):  # at initialization: its inputs and the parameters
                ins = [i for i in self.deps.get(vr, []) if i in inputs]
                if x0 <= vr < x0 + nx:
                    ins = []
                SubElement(
                    init,
                    "Unknown",
                    index=str(vr + 1),
                    dependencies=" ".join(str(i + 1) for i in sorted(ins + params)),
                )
        indent(root)
        return b'<?xml version="1.0" encoding="UTF-8"?>\n' + tostring(root, encoding="utf-8")

    def model_description3(self, description: str = "") -> bytes:
        """The FMI 3.0 modelDescription.xml: value reference 0 is ``time``, each port and each
        vector or matrix parameter one array variable (``<Dimension>``), the ModelStructure's
        dependencies those of :attr:`deps` gathered per variable."""
        nx = int(self.defines["FMU_NX"])
        V = self.variables
        root = Element("fmiModelDescription", {
            "fmiVersion": "3.0", "modelName": self.model_name,
            "instantiationToken": "{" + self.guid + "}",
            "description": description or self.title or self.ftype.title,
            "generationTool": "titopfmu",
            "variableNamingConvention": "structured",
        })  # fmt: skip
        caps = {"modelIdentifier": self.model_name, "canGetAndSetFMUState": "true",
                "canSerializeFMUState": "true", "providesDirectionalDerivatives": "true",
                "providesAdjointDerivatives": "true"}  # fmt: skip
        SubElement(root, "ModelExchange", {**caps, "needsCompletedIntegratorStep": "false"})
        SubElement(root, "CoSimulation", {**caps, "canHandleVariableCommunicationStepSize": "true",
                                          "maxOutputDerivativeOrder": "0",
                                          "hasEventMode": "false"})  # fmt: skip
        slot_vr = {}  # slot -> FMI 3.0 value reference
        for k, a in enumerate(self.arrays):
            for i in range(a.size):
                slot_vr[a.slot0 + i] = k + 1
        units = {
            V[a.slot0].unit
            for a in self.arrays
            if all(V[a.slot0 + i].unit == V[a.slot0].unit for i in range(a.size))
        }
        units.discard("")
        units.add("s")
        u = SubElement(root, "UnitDefinitions")
        for name, exps in UNIT_DEFINITIONS.items():
            if name in units:
                SubElement(SubElement(u, "Unit", name=name), "BaseUnit",
                           {k: str(e) for k, e in exps.items()})  # fmt: skip
        add_log_categories(root)
        self._experiment(root)
        mv = SubElement(root, "ModelVariables")
        SubElement(
            mv,
            "Float64",
            name="time",
            valueReference="0",
            causality="independent",
            variability="continuous",
            unit="s",
            description="simulation time",
        )
        caus = {C_PARAM: "parameter", C_INPUT: "input", C_OUTPUT: "output", C_LOCAL: "local"}
        for k, a in enumerate(self.arrays):
            x = V[a.slot0]
            attrs = {"name": a.name, "valueReference": str(k + 1),
                     "causality": caus[x.causality]}  # fmt: skip
            if a.description:
                attrs["description"] = a.description
            if x.causality == C_PARAM:
                attrs["variability"] = "fixed"
            elif x.type == T_REAL:
                attrs["variability"] = "continuous"
            else:  # pragma: no cover - no non-real input or output
                attrs["variability"] = "discrete"
            if x.causality == C_LOCAL:
                attrs["initial"] = "calculated"
            if (
                x.type == T_REAL
                and x.unit
                and all(V[a.slot0 + i].unit == x.unit for i in range(a.size))
            ):
                attrs["unit"] = x.unit
            if x.derivative_of is not None:
                attrs["derivative"] = str(slot_vr[x.derivative_of - 1])
            if x.causality in (C_PARAM, C_INPUT):
                vals = [V[a.slot0 + i].default for i in range(a.size)]
                attrs["start"] = " ".join(
                    repr(float(v)) if x.type == T_REAL
                    else str(int(v)) if x.type == T_INT
                    else ("true" if v else "false")
                    for v in vals
                )  # fmt: skip
            el = SubElement(mv, ("Float64", "Int32", "Boolean")[x.type], attrs)
            for d in a.dims:
                SubElement(el, "Dimension", start=str(d))
        ms = SubElement(root, "ModelStructure")
        x0, dx0 = int(self.defines["FMU_X_VR0"]), int(self.defines["FMU_DX_VR0"])

        def deps(slots) -> list[int]:
            return sorted({slot_vr[i] for s in slots for i in self.deps.get(s, [])})

        def unknown(tag: str, a_vr: int, dep: list[int]) -> None:
            SubElement(ms, tag, valueReference=str(a_vr),
                       dependencies=" ".join(map(str, dep)))  # fmt: skip

        outs = [(k + 1, a) for k, a in enumerate(self.arrays) if V[a.slot0].causality == C_OUTPUT]
        for a_vr, a in outs:
            unknown("Output", a_vr, deps(range(a.slot0, a.slot0 + a.size)))
        for s in range(dx0, dx0 + nx):
            unknown("ContinuousStateDerivative", slot_vr[s], deps([s]))
        params = sorted({k + 1 for k, a in enumerate(self.arrays)
                         if V[a.slot0].causality == C_PARAM})  # fmt: skip
        inputs = {k + 1 for k, a in enumerate(self.arrays) if V[a.slot0].causality == C_INPUT}
        initial = [(a_vr, list(range(a.slot0, a.slot0 + a.size))) for a_vr, a in outs]
        initial += [(slot_vr[s], [s]) for s in range(x0, x0 + nx)]
        initial += [(slot_vr[s], [s]) for s in range(dx0, dx0 + nx)]
        for a_vr, slots in sorted(initial):  # at initialization: its inputs and the parameters
            ins = [] if x0 <= slots[0] < x0 + nx else [d for d in deps(slots) if d in inputs]
            unknown("InitialUnknown", a_vr, sorted(set(ins) | set(params)))
        indent(root)
        return b'<?xml version="1.0" encoding="UTF-8"?>\n' + tostring(root, encoding="utf-8")

    def build_description(self) -> bytes:
        """FMI 3.0 ``sources/buildDescription.xml`` of the compile units :attr:`sources`."""
        return build_description_xml(self.model_name, self.sources)


def describe(ftype: FmuType, n: int, fmi_version: int = 2) -> NativeFmu:
    """The variables of FMU type ``ftype`` with ``n`` child ports and how the wrapper maps them
    (the slots are the FMI 2.0 value references; ``fmu.arrays`` groups them into the FMI 3.0
    variables)."""
    proto = ftype.make("proto", default_values(ftype.params(n)), n)
    sa = StandaloneBlock(proto)
    fmu = NativeFmu(ftype, n, fmi_version=fmi_version)
    A = fmu.arrays
    V = fmu.variables
    channels = port_variables(sa, ftype)
    # the core's input vector of a lone block (titopfmu.core.model.NativeTree.lone_block)
    kind = builtin_kind(type(proto))
    core_in: dict[str, int] = {}
    if kind is not None:
        nt = NativeTree.lone_block(proto)
        for _, port, _w, off in nt.inputs:
            core_in[port] = off
        for _, e, off in nt.externals:
            core_in[e] = off
        if nt.parent_input is not None:
            core_in["P.m"] = nt.parent_input
        for j, off in enumerate(nt.port_inputs):
            core_in[f"{proto.child_names[j]}.W"] = off
        nin = nt.nin
        nx = proto.n_states
        fmu.defines.update(
            FMU_KIND=kind, FMU_INVERSE=int(getattr(proto, "inverse", False)),
            FMU_HAS_PARENT=int(proto.has_parent), FMU_HAS_EXT=len(nt.externals),
            FMU_IN0=nt.inputs[0][3] if nt.inputs else -1,
            FMU_PM0=nt.parent_input if nt.parent_input is not None else -1,
            FMU_PORT_W0=nt.port_inputs[0] if nt.port_inputs else -1,
            FMU_EXT_W0=nt.externals[0][2] if nt.externals else -1,
        )  # fmt: skip
    elif ftype.key == "loop_closure":
        core_in = {"left.m": 0, "right.m": 18}
        nin, nx = 36, 0
        fmu.defines.update(FMU_KIND=-1, FMU_INVERSE=0, FMU_HAS_PARENT=0, FMU_HAS_EXT=0,
                           FMU_IN0=-1, FMU_PM0=-1, FMU_PORT_W0=-1, FMU_EXT_W0=-1)  # fmt: skip
    else:  # joint spring-damper
        core_in = {"m": 0}
        nin, nx = 3, 0
        fmu.defines.update(FMU_KIND=-2, FMU_INVERSE=0, FMU_HAS_PARENT=0, FMU_HAS_EXT=0,
                           FMU_IN0=-1, FMU_PM0=-1, FMU_PORT_W0=-1, FMU_EXT_W0=-1)  # fmt: skip
    fmu.defines.update(FMU_NCHILDREN=n, FMU_NIN=nin, FMU_NX=nx)
    children = list(getattr(proto, "child_names", ()))
    for ch in channels:
        vr0 = len(V)
        for comp in ch.components:
            V.append(Variable(comp.name, T_REAL, C_INPUT if ch.direction == "in" else C_OUTPUT,
                              0.0, comp.unit, comp.description))  # fmt: skip
        k = len(ch.components)
        A.append(Array(ch.name, vr0, (k,) if ch.components[0].name != ch.name else (),
                       _array_description(ch.components)))  # fmt: skip
        if ch.direction == "in":
            fmu.inputs.append((core_in[ch.core], vr0, k))
            continue
        core = ch.core
        if core == "P.W":
            role, arg = "OUT_WRENCH_PARENT", 0
        elif core.endswith(".m") and core.split(".")[0] in children:
            role, arg = "OUT_PORT_MOTION", children.index(core.split(".")[0])
        elif core == "body.m":
            role, arg = "OUT_BODY_MOTION", 0
        elif core == "joint.m":
            role, arg = "OUT_JOINT_MOTION", 0
        elif core == "joint.tau":
            role, arg = "OUT_EFFORT", 0
        elif core == "W":
            role, arg = "OUT_BODY_WRENCH", 0
        elif core == "left.W":
            role, arg = "OUT_CLOSURE_LEFT", 0
        elif core == "right.W":
            role, arg = "OUT_CLOSURE_RIGHT", 0
        elif core == "tau":
            role, arg = "OUT_LAW", 0
        else:  # pragma: no cover - a new channel kind
            raise ValueError(f"{ftype.key}: no native output for channel {core!r}")
        fmu.outputs.append((role, arg, vr0, k))
    for p in ftype.params(n) + SOLVER_PARAMS:
        default = np.array(p.default, dtype=float)
        vr0 = len(V)
        desc = p.description.replace("fmi2", "fmi3") if fmi_version == 3 else p.description
        units = COMPONENT_UNITS.get(p.role)
        for k, (fname, idx) in enumerate(p.names()):
            V.append(Variable(fname, T_BOOL if p.boolean else T_INT if p.integer else T_REAL,
                              C_PARAM, float(default[idx]) if default.shape else float(default),
                              units[k] if units else p.unit, desc))  # fmt: skip
        A.append(Array(p.name, vr0, tuple(p.shape), desc))
        if p.role not in ROLES:  # pragma: no cover - a declaration without a known role
            raise ValueError(f"{ftype.key}: parameter {p.name!r} has no role of fmu_config.h")
        arg = int(p.name[1:].split(".")[0]) if p.role == "PAR_POINT" else 0
        fmu.params.append((p.role, arg, vr0))
    names = list(getattr(proto, "state_names", ()))
    # the units of the states as the block type declares them (a quaternion's components: none)
    declared = {st.name: st.unit for st in ftype.declaration.states} if ftype.declaration else {}
    x0 = len(V)
    for s in names:
        V.append(Variable(f"state.{s}", T_REAL, C_LOCAL, 0.0, declared.get(s, ""),
                          "continuous state (model exchange)"))  # fmt: skip
    dx0 = len(V)
    for k, s in enumerate(names):
        V.append(Variable(f"der(state.{s})", T_REAL, C_LOCAL, 0.0,
                          rate_unit(declared.get(s, "")), "derivative of the state",
                          derivative_of=x0 + k + 1))  # fmt: skip
    A += [Array(V[vr].name, vr, (), V[vr].description) for vr in range(x0, len(V))]
    fmu.defines.update(FMU_X_VR0=x0, FMU_DX_VR0=dx0)
    if kind is not None and nt.flex:  # a flexible block: its reduced model as constant tables
        fmu.config_lines += flex_tables(nt.flex, [proto.name], fmu.defines)
    return fmu


def flex_tables(flex, names, defines: dict) -> list[str]:
    """The flexible parts ``flex`` ((body index, reduced model, first state) each, a
    :attr:`~titopfmu.core.model.NativeTree.flex`; ``names``: the bodies' names) as constant
    tables of fmu_config.h (fmu_model.h, fmu_block.h; read by fmu_flex.c): per part its ints
    (:func:`~titopfmu.core.model.flex_ints`) and its reduced model's row
    (:func:`~titopfmu.core.model.flex_row`, the core's ``titop_flex_doubles`` layout), a row
    shared by the parts of one reduced model; FMU_FLEX_PARTS holds per part the offsets of its
    ints, row and Lee (n n doubles, the instance's buffer), and the row's length, which the FMU
    checks against the core's titop_flex_doubles. Sets FMU_NFLEX and FMU_FLEX_NLEE in
    ``defines``. The matrices are constant data of the FMU, not parameters: another reduced
    model is another FMU. A ValueError names the block of a value that is not finite."""
    ints: list[int] = []
    rows: list[np.ndarray] = []
    row_at: list[int] = []
    parts = []
    lee = 0
    for i, red, x0 in flex:
        row = flex_row(red)
        if not np.all(np.isfinite(row)):  # (the block's checks refuse it before)
            raise ValueError(f"block '{names[i]}', parameter 'flexible': the reduced model "
                             f"'{red.name}' has a value that is not finite")  # fmt: skip
        for k, r in enumerate(rows):  # the same reduced model on several bodies: one row
            if r.shape == row.shape and np.array_equal(r, row):
                d0 = row_at[k]
                break
        else:
            d0 = sum(r.size for r in rows)
            rows.append(row)
            row_at.append(d0)
        parts.append((len(ints), d0, lee, row.size))
        ints += [int(v) for v in flex_ints(i, red, x0)]
        lee += red.n_modes**2
    defines.update(FMU_NFLEX=len(parts), FMU_FLEX_NLEE=lee)
    data = np.concatenate(rows) if rows else np.zeros(1)
    out = ["/* flexible parts: (ints offset, row offset, Lee offset, row length) per part */",
           "static const int FMU_FLEX_PARTS[][4] = {"]  # fmt: skip
    out += [f"    {{{a}, {b}, {c}, {d}}}," for a, b, c, d in parts] or ["    {0, 0, 0, 0},"]
    out.append("};")
    out.append("static const int FMU_FLEX_INTS[] = {")
    vals = [str(v) for v in ints] or ["0"]
    out += ["    " + ", ".join(vals[k : k + 16]) + "," for k in range(0, len(vals), 16)]
    out.append("};")
    out.append("static const double FMU_FLEX_ROW[] = {")
    vals = [repr(float(v)) for v in data]  # shortest round trip: the same doubles in C
    out += ["    " + ", ".join(vals[k : k + 6]) + "," for k in range(0, len(vals), 6)]
    out.append("};")
    return out


def _array_description(comps) -> str:
    """One description for the FMI 3.0 array of a port: what it is, then its elements by runs of
    one unit (``[1..3] linear acceleration v̇_P, in the parent frame R_b (m/s2); ...``)."""
    if len(comps) == 1:
        return comps[0].description
    heads = {c.description.split(": ", 1)[0] for c in comps}
    common = heads.pop() if len(heads) == 1 and ": " in comps[0].description else ""
    runs: list[list] = []
    for i, c in enumerate(comps):
        label = c.description.split(": ", 1)[1] if common else c.description
        label = re.sub(r" [xyz](?=,|$)", "", label)
        label = re.sub(r"Euler angle (roll φ|pitch θ|yaw ψ)", "Euler angles φ, θ, ψ", label)
        if runs and runs[-1][2] == label and runs[-1][3] == c.unit:
            runs[-1][1] = i + 1
        else:
            runs.append([i + 1, i + 1, label, c.unit])
    parts = [(f"[{a}..{b}]" if b > a else f"[{a}]") + f" {label}" + (f" ({u})" if u else "")
             for a, b, label, u in runs]  # fmt: skip
    return (common + ": " if common else "") + "; ".join(parts)
