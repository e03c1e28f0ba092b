"""Ports that other tools recognise (titopfmu.fmi.terminals): the FMI 3.0 terminals of the TITOP
ports and the OSP-IS model description, for every FMU type and variant of the catalog.

* Both files are valid against the published schemas, each checked by two validators
  (xmlschema and libxml2 through lxml): ``fmi3TerminalsAndIcons.xsd`` as fmpy ships it, and
  ``OspModelDescription-1.0.1.xsd`` of the Open Simulation Platform's osp-validator, vendored in
  ``tests/data/osp`` (see its README).
* Every terminal member and every OSP reference is a variable of the FMU with the causality the
  port says; the OSP-IS rules the schema cannot express (the osp-validator's: one causality per
  typed group, opposite causalities in a mechanical port, unique group names, one unit and axis
  per variable) hold.
* In libcosim, one ``VariableGroupConnection`` of the Generic groups (a ground's ``C1`` and a
  pendulum's ``P``) connects all 24 variables of the port; the six typed groups together
  connect the same variables and give bit-identical numbers.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import xmlschema
from lxml import etree

from titopfmu.fmi.catalog import FMU_TYPES
from titopfmu.fmi.native import generate
from titopfmu.fmi.native.generate import describe
from titopfmu.fmi.terminals import (
    ANNOTATION_TYPE,
    OSP_NAMESPACE,
    TERMINAL_KIND,
    TitopPort,
    causality,
    osp_file_name,
    osp_model_description_xml,
    terminals_and_icons_xml,
    titop_ports,
)

fmpy = pytest.importorskip("fmpy")

DATA = Path(__file__).parent / "data" / "osp"
FMI3_XSD = Path(fmpy.__file__).parent / "schema" / "fmi3" / "fmi3TerminalsAndIcons.xsd"
OSP_XSD = DATA / "OspModelDescription-1.0.1.xsd"
NS = {"osp": OSP_NAMESPACE}
VARIANTS = [(k, n) for k, t in FMU_TYPES.items() for n in t.variants]
#: the OSP-IS port groups: (effort, flow) children, opposite causalities
PORT_GROUPS = {"LinearMechanicalPort": ("Force", "LinearVelocity"),
               "AngularMechanicalPort": ("Torque", "AngularVelocity")}  # fmt: skip


@pytest.fixture(scope="module")
def schemas():
    return {
        "fmi3": (xmlschema.XMLSchema(str(FMI3_XSD)), etree.XMLSchema(etree.parse(str(FMI3_XSD)))),
        "osp": (xmlschema.XMLSchema(str(OSP_XSD)), etree.XMLSchema(etree.parse(str(OSP_XSD)))),
    }


def _valid(schemas, which: str, xml: bytes) -> etree._Element:
    xs, lx = schemas[which]
    xs.validate(xml)  # raises with the reason
    doc = etree.fromstring(xml)
    assert lx.validate(doc), lx.error_log
    return doc


def _fmu(key: str, n: int, version: int):
    fmu = describe(FMU_TYPES[key], n, fmi_version=version)
    return fmu, titop_ports(fmu.variables)


# -- the ports -----------------------------------------------------------------------------------


def test_causality_codes_are_generates():
    """terminals.py does not import the generator (no cycle): its codes must stay the same."""

    class V:
        def __init__(self, c):
            self.causality = c

    assert causality(V(generate.C_INPUT)) == "input"
    assert causality(V(generate.C_OUTPUT)) == "output"
    assert causality(V(generate.C_PARAM)) == causality(V(generate.C_LOCAL)) == ""
    assert causality(V("output")) == "output"


@pytest.mark.parametrize("key, n", VARIANTS)
def test_ports_of_every_variant(key, n):
    fmu, ports = _fmu(key, n, 2)
    names = [p.name for p in ports]
    if key == "loop_closure":
        assert [(p.name, p.kind) for p in ports] == [("left", "parent"), ("right", "parent")]
        return
    if key == "joint_spring_damper":
        assert ports == []
        return
    parent = ["P"] if "P.m[1]" in {v.name for v in fmu.variables} else []
    assert names == parent + [f"C{j}" for j in range(1, n + 1)]
    by_name = {v.name: v for v in fmu.variables}
    for p in ports:
        assert p.kind == ("parent" if p.name == "P" else "child")
        assert p.motion == tuple(f"{p.name}.m[{i}]" for i in range(1, 19))
        assert p.wrench == tuple(f"{p.name}.W[{i}]" for i in range(1, 7))
        assert (p.motion_array, p.wrench_array) == (f"{p.name}.m", f"{p.name}.W")
        assert {causality(by_name[x]) for x in p.motion} == {p.motion_causality}
        assert {causality(by_name[x]) for x in p.wrench} == {p.wrench_causality}
        assert {p.motion_direction, p.wrench_direction} == {"in", "out"}
        assert p.frame and p.point
    # never a port: the body's own motion/wrench, the external wrench, the joint
    assert not {"body", "ext", "joint"} & set(names)


def test_imposed_motion_body_is_not_a_parent_port():
    """body.m in / body.W out of the imposed-motion body has the opposite sign convention (the
    wrench acting on the body): not a TITOP port."""
    fmu, ports = _fmu("imposed_motion_body", 1, 2)
    assert {"body.m[1]", "body.W[1]"} <= {v.name for v in fmu.variables}
    assert [p.name for p in ports] == ["C1"]


def test_port_of_a_model_fmu():
    """A model FMU's boundary port, any name, is found by its variables alone; incomplete or
    same-causality vectors are not ports."""

    class V:
        def __init__(self, name, c):
            self.name, self.causality, self.unit = name, c, ""

    vs = [V(f"launcher.m[{i}]", "input") for i in range(1, 19)]
    vs += [V(f"launcher.W[{i}]", "output") for i in range(1, 7)]
    vs += [V(f"arm.m[{i}]", "output") for i in range(1, 19)]  # a monitored motion vector
    vs += [V(f"both.m[{i}]", "output") for i in range(1, 19)]
    vs += [V(f"both.W[{i}]", "output") for i in range(1, 7)]
    vs += [V(f"short.m[{i}]", "input") for i in range(1, 18)]
    vs += [V(f"short.W[{i}]", "output") for i in range(1, 7)]
    (p,) = titop_ports(vs)
    assert (p.name, p.kind) == ("launcher", "parent")
    assert "launcher" in p.frame and "launcher" in p.point
    q = replace(p, frame="launcher frame R_L", point="interface ring centre")
    assert "interface ring centre" in q.description
    osp = osp_model_description_xml("Spacecraft", vs, [q])
    doc = etree.fromstring(osp)
    assert doc.find("osp:VariableGroups/osp:Generic[@name='launcher']", NS) is not None
    assert doc.find("osp:VariableGroups/osp:Generic[@name='arm.m']", NS) is not None


def test_bad_ports_refused():
    m = tuple(f"P.m[{i}]" for i in range(1, 19))
    w = tuple(f"P.W[{i}]" for i in range(1, 7))
    with pytest.raises(ValueError, match="kind"):
        TitopPort("P", "root", m, w, "f", "p")
    with pytest.raises(ValueError, match="not 18 and 6"):
        TitopPort("P", "parent", m[:-1], w, "f", "p")
    fmu, ports = _fmu("revolute_body", 1, 3)
    with pytest.raises(ValueError, match="no variable 'C1.m'"):
        terminals_and_icons_xml(ports, ["P.m", "P.W", "C1.W"])
    with pytest.raises(ValueError, match="not a variable"):
        osp_model_description_xml(fmu.model_name, fmu.variables[:10], ports)
    flipped = [replace(ports[0], kind="child")]
    with pytest.raises(ValueError, match="causality"):
        osp_model_description_xml(fmu.model_name, fmu.variables, flipped)


# -- FMI 3.0 terminals ---------------------------------------------------------------------------


@pytest.mark.parametrize("key, n", VARIANTS)
def test_terminals_schema_valid_and_members_exist(schemas, key, n):
    fmu, ports = _fmu(key, n, 3)
    arrays = {a.name: fmu.variables[a.slot0] for a in fmu.arrays}
    doc = _valid(schemas, "fmi3", terminals_and_icons_xml(ports, arrays))
    assert doc.get("fmiVersion") == "3.0"
    terminals = doc.findall("Terminals/Terminal")
    assert [t.get("name") for t in terminals] == [p.name for p in ports]
    for t, p in zip(terminals, ports, strict=True):
        assert (t.get("matchingRule"), t.get("terminalKind")) == ("plug", TERMINAL_KIND)
        members = {m.get("memberName"): m for m in t.findall("TerminalMemberVariable")}
        assert set(members) == {"m", "W"}
        for member, want in (("m", p.motion_causality), ("W", p.wrench_causality)):
            var = members[member].get("variableName")
            assert var in arrays, var
            assert members[member].get("variableKind") == "signal"
            assert causality(arrays[var]) == want
            a = next(a for a in fmu.arrays if a.name == var)
            assert a.dims == ((18,) if member == "m" else (6,))
        ann = t.find(f"Annotations/Annotation[@type='{ANNOTATION_TYPE}']/TitopPort")
        assert ann.get("role") == p.kind and ann.get("frame") == p.frame
        assert "applied by the child side A on the parent side B" in ann.find(
            "Member[@name='W']").get("signConvention")  # fmt: skip


def test_terminals_of_scalar_variables(schemas):
    """An FMU whose FMI 3.0 variables are scalars (P.m[1]...) gets members m[1]..m[18]."""
    fmu, ports = _fmu("revolute_body", 1, 2)
    doc = _valid(schemas, "fmi3", terminals_and_icons_xml(ports, [v.name for v in fmu.variables]))
    t = doc.find("Terminals/Terminal[@name='C1']")
    pairs = [(m.get("variableName"), m.get("memberName")) for m in t.findall("*[@memberName]")]
    assert pairs == [(f"C1.m[{i}]", f"m[{i}]") for i in range(1, 19)] + [
        (f"C1.W[{i}]", f"W[{i}]") for i in range(1, 7)]  # fmt: skip


def test_parent_and_child_terminals_plug_together():
    """'plug': a child port's terminal and a parent port's terminal have the same members and
    the same kind; each member is an output on one side and an input on the other."""
    body, bports = _fmu("revolute_body", 1, 3)
    ground, gports = _fmu("ground", 1, 3)

    def terminal(fmu, ports, name):
        doc = etree.fromstring(terminals_and_icons_xml(ports, [a.name for a in fmu.arrays]))
        t = doc.find(f"Terminals/Terminal[@name='{name}']")
        by = {a.name: fmu.variables[a.slot0] for a in fmu.arrays}
        return t.get("terminalKind"), {
            m.get("memberName"): causality(by[m.get("variableName")])
            for m in t.findall("TerminalMemberVariable")
        }

    kind_c, child = terminal(ground, gports, "C1")
    kind_p, parent = terminal(body, bports, "P")
    assert kind_c == kind_p
    assert set(child) == set(parent) == {"m", "W"}
    assert all({child[k], parent[k]} == {"input", "output"} for k in child)


# -- OSP-IS model description --------------------------------------------------------------------


@pytest.mark.parametrize("key, n", VARIANTS)
def test_osp_schema_valid_and_rules(schemas, key, n):
    fmu, ports = _fmu(key, n, 2)
    by_name = {v.name: v for v in fmu.variables}
    doc = _valid(schemas, "osp", osp_model_description_xml(fmu.model_name, fmu.variables, ports))
    units = {u.get("name") for u in doc.findall("osp:UnitDefinitions/osp:Unit", NS)}
    groups = doc.find("osp:VariableGroups", NS)
    names = [g.get("name") for g in groups.iter() if g.get("name") is not None]
    assert len(names) == len(set(names)), "OSP-IS: variable group names must be unique"
    attrs: dict[str, tuple] = {}
    for v in groups.iter(f"{{{OSP_NAMESPACE}}}Variable"):
        ref = v.get("ref")
        assert ref in by_name, ref
        assert causality(by_name[ref]) in ("input", "output")
        assert v.get("unit") is None or v.get("unit") in units
        if v.get("unit") is not None and by_name[ref].unit:
            assert v.get("unit") == by_name[ref].unit, ref
        attrs.setdefault(ref, (v.get("unit"), v.get("axis")))
        assert attrs[ref] == (v.get("unit"), v.get("axis")), f"{ref}: two units or axes"

    def caus(g) -> set[str]:
        return {causality(by_name[v.get("ref")]) for v in g.findall("osp:Variable", NS)}

    for g in groups.iter():
        tag = etree.QName(g).localname
        if tag in ("Variable", "VariableGroups", "Generic") or tag in PORT_GROUPS:
            continue
        assert len(caus(g)) == 1, f"{g.get('name')}: mixed causalities"
    for tag, (effort, flow) in PORT_GROUPS.items():
        for g in groups.findall(f"osp:{tag}", NS):
            e, f = g.find(f"osp:{effort}", NS), g.find(f"osp:{flow}", NS)
            assert caus(e) | caus(f) == {"input", "output"} and caus(e) != caus(f)
    referenced = set(attrs)
    for p in ports:  # every port: the whole port, and its parts covering it exactly once
        whole = groups.find(f"osp:Generic[@name='{p.name}']", NS)
        assert [v.get("ref") for v in whole] == list(p.motion + p.wrench)
        parts = [f"{p.name}.{s}" for s in ("force", "velocity", "torque", "angular_velocity",
                                           "acceleration", "angular_acceleration", "position",
                                           "attitude")]  # fmt: skip
        refs = [v.get("ref") for g in groups.iter() if g.get("name") in parts for v in g]
        assert sorted(refs) == sorted(p.motion + p.wrench)
    io = {v.name for v in fmu.variables if causality(v) in ("input", "output")}
    assert referenced == io, "every input and output in a group"


def test_osp_file_name():
    assert osp_file_name("TitopGroundC1") == "TitopGroundC1_OspModelDescription.xml"


# -- libcosim: the OSP groups connect the ports -------------------------------------------------

GROUND = {"position": [1.0, 2.0, 3.0], "euler": [0.1, 0.2, 0.3], "C1.point": [0.5, -0.2, 0.1]}
PENDULUM = {"com": [0.4, 0.0, 0.1], "axis": [0.0, 1.0, 0.0], "theta0": 0.3}
TYPED = ("linear", "angular", "acceleration", "angular_acceleration", "position", "attitude")


@pytest.fixture(scope="module")
def osp_fmus(tmp_path_factory) -> Path:
    """TitopGroundC1 and TitopRevoluteBodyC0 (FMI 2.0), each with its OSP-IS file beside."""
    pytest.importorskip("libcosimpy.CosimExecution")
    from titopfmu.fmi.build import build_fmus

    out = tmp_path_factory.mktemp("fmus_osp")
    built = build_fmus(out, types=["ground", "revolute_body"], max_children=1, win64=False)
    variant = {"TitopGroundC1": ("ground", 1), "TitopRevoluteBodyC0": ("revolute_body", 0),
               "TitopRevoluteBodyC1": ("revolute_body", 1)}  # fmt: skip
    for path in built:
        fmu, ports = _fmu(*variant[path.stem], 2)
        assert fmu.model_name == path.stem
        (out / osp_file_name(fmu.model_name)).write_bytes(
            osp_model_description_xml(fmu.model_name, fmu.variables, ports))  # fmt: skip
    return out


def _config(directory: Path, groups: list[tuple[str, str]], name: str) -> Path:
    def initial(values: dict) -> str:
        rows = []
        for k, v in values.items():
            for i, x in enumerate(v if isinstance(v, list) else [v]):
                var = f"{k}[{i + 1}]" if isinstance(v, list) else k
                rows.append(f'<InitialValue variable="{var}"><Real value="{x!r}"/></InitialValue>')
        return "".join(rows)

    conns = "".join(
        f'<VariableGroupConnection><VariableGroup simulator="ground" name="{a}"/>'
        f'<VariableGroup simulator="pendulum" name="{b}"/></VariableGroupConnection>'
        for a, b in groups
    )
    path = directory / name
    path.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<OspSystemStructure xmlns="http://opensimulationplatform.com/MSMI/OSPSystemStructure" '
        'version="0.1"><StartTime>0.0</StartTime><BaseStepSize>0.001</BaseStepSize>'
        "<Algorithm>fixedStep</Algorithm><Simulators>"
        f'<Simulator name="ground" source="TitopGroundC1.fmu"><InitialValues>{initial(GROUND)}'
        "</InitialValues></Simulator>"
        f'<Simulator name="pendulum" source="TitopRevoluteBodyC0.fmu"><InitialValues>'
        f"{initial(PENDULUM)}</InitialValues></Simulator>"
        f"</Simulators><Connections>{conns}</Connections></OspSystemStructure>"
    )
    return path


def _run(config: Path, steps: int = 40):
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimObserver import CosimObserver

    sys.stdout.flush()
    saved = os.dup(1)
    with open(config.with_suffix(".log"), "wb") as log:  # libcosim logs to fd 1
        os.dup2(log.fileno(), 1)
    try:
        log_output_level(CosimLogLevel.WARNING)
        ex = CosimExecution.from_osp_config_file(str(config))
        obs = CosimObserver.create_last_value()
        ex.add_observer(obs)
        idx = {s: ex.slave_index_from_instance_name(s) for s in ("ground", "pendulum")}
        vr = {s: {v.name.decode(): v.reference for v in ex.slave_variables(i)}
              for s, i in idx.items()}  # fmt: skip

        def get(sim, names):
            return obs.last_real_values(idx[sim], [vr[sim][n] for n in names])

        rows = []
        for _ in range(steps):
            assert ex.step()
            rows.append({"C1.m": get("ground", [f"C1.m[{i}]" for i in range(1, 19)]),
                         "P.m": get("pendulum", [f"P.m[{i}]" for i in range(1, 19)]),
                         "C1.W": get("ground", [f"C1.W[{i}]" for i in range(1, 7)]),
                         "P.W": get("pendulum", [f"P.W[{i}]" for i in range(1, 7)])})  # fmt: skip
        del ex
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
    return rows


@pytest.mark.parametrize("how", ["generic", "typed"])
def test_libcosim_connects_ports_through_osp_groups(osp_fmus, how):
    """libcosim reads <modelName>_OspModelDescription.xml beside each FMU: the ground's C1 and
    the pendulum's P, connected by group only, exchange all 24 variables (motion down, wrench up,
    one step late: libcosim's fixed-step master is Jacobi)."""
    groups = ([("C1", "P")] if how == "generic"
              else [(f"C1.{s}", f"P.{s}") for s in TYPED])  # fmt: skip
    rows = _run(_config(osp_fmus, groups, f"OspSystemStructure_{how}.xml"))
    ground_motion = rows[0]["C1.m"]
    assert ground_motion[12:15] != [0.0, 0.0, 0.0]
    assert ground_motion[15:] == pytest.approx(GROUND["euler"], abs=1e-12)
    for k, r in enumerate(rows):
        assert r["P.m"] == r["C1.m"] == ground_motion  # the whole motion vector, bit for bit
        if k:
            assert r["C1.W"] == rows[k - 1]["P.W"]  # the whole wrench, one step late
    assert rows[-1]["P.W"] != rows[0]["P.W"]  # the pendulum swings: the wrench is live
    assert any(x != 0.0 for x in rows[-1]["C1.W"])
    if how == "typed":  # both ways connect the same variables: the same numbers
        generic = _run(_config(osp_fmus, [("C1", "P")], "OspSystemStructure_check.xml"))
        assert generic == rows
