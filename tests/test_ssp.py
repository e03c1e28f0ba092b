"""SSP round trip (issue 4): a co-simulation written as .ssp and read back, checked three ways.

* The balloon (seed 004) written as .ssp and read back has the same components, parameters,
  held inputs and connections, and co-simulates to bit-identical results.
* The .ssd is valid SSP 1.0 for independent readers: ``pyssp-standard`` (XML Schema
  validation, the standard's XSD 1.1 variant, which also checks the inline ssv:ParameterSet,
  its connection checker, and the values it reads) and FMPy's SSP reader.
* The .ssd's structure follows what third-party tools need (OMSimulator 2 and 3, libcosim):
  root children, element order, literal prefixes, OMSimulator's system annotation first.
* The loop-free inverse-dynamics chain Ground -> RevoluteBodyInverse -> PrismaticBodyInverse ->
  RevoluteBodyInverse, its constant joint motions and external wrench held as inputs (parameter
  bindings on input connectors), runs from the .ssp alone in libcosim, a second, independent
  SSP importer (parameters, connections and the step of the default experiment), and libcosim's
  outputs match the master's and the in-process engine's.

Then every bad input gets a clear error naming the file, line and element before any FMU runs,
and the ``titopfmu cosim`` command runs an .ssp.
"""

from __future__ import annotations

import csv
import gc
import os
import re
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fmpy", reason="the master needs fmpy (the 'fmi' extra)")

from titopfmu.cli import main  # noqa: E402
from titopfmu.examples.balloon import COSIM_RECORD, build_balloon_cosim  # noqa: E402
from titopfmu.master import CosimError, CoSimulation  # noqa: E402
from titopfmu.master.ssp import SSD_NAME, read_ssp, write_ssp  # noqa: E402

STEP = 1e-3
HORIZON = 0.2  # s of the balloon's round trip

#: the inverse-dynamics chain: instance -> (FMU, parameters)
GRAVITY = [0.4, -9.81, 1.3]
CHAIN = {
    "ground": ("TitopGroundC1", {"C1.point": [0.2, -0.1, 0.5], "position": [1.0, -2.0, 0.3],
                                 "euler": [0.3, -0.2, 0.9]}),
    "arm": ("TitopRevoluteBodyInverseC1", {
        "mass": 2.3, "inertia": [[0.1, 0.01, 0.0], [0.01, 0.2, 0.02], [0.0, 0.02, 0.25]],
        "com": [0.05, -0.4, 0.1], "C1.point": [0.1, -0.8, 0.05], "gravity": GRAVITY,
        "axis": [0.0, 0.6, 0.8]}),
    "slide": ("TitopPrismaticBodyInverseC1", {
        "mass": 1.4, "inertia": np.diag([0.05, 0.04, 0.03]), "com": [0.3, 0.02, -0.05],
        "C1.point": [0.6, 0.1, 0.0], "gravity": GRAVITY, "axis": [1.0, 0.0, 0.0]}),
    "hand": ("TitopRevoluteBodyInverseC0", {
        "mass": 0.7, "inertia": np.diag([0.01, 0.02, 0.015]), "com": [0.0, 0.15, 0.2],
        "gravity": GRAVITY, "axis": [0.0, 1.0, 0.0], "ext.point": [0.05, 0.2, 0.1],
        "ext.inertial": True}),
}  # fmt: skip
#: held inputs: constant joint motions [q̈, q̇, q] and the leaf's external wrench
HELD = {
    "arm.joint.m": [0.7, -0.3, 0.4],
    "slide.joint.m": [-1.1, 0.2, 0.15],
    "hand.joint.m": [2.0, 0.9, -0.5],
    "hand.ext.W": [1.5, -0.7, 2.0, 0.1, -0.3, 0.25],
}
CHAIN_OUTPUTS = ["arm.joint.tau", "slide.joint.tau", "hand.joint.tau", "ground.body.W",
                 "hand.body.m"]  # fmt: skip


@pytest.fixture(scope="session")
def fmu_dir(tmp_path_factory) -> Path:
    from titopfmu.fmi.build import build_fmus

    out = tmp_path_factory.mktemp("fmus_ssp")
    types = ["rigid_body", "prismatic_body", "revolute_body", "joint_spring_damper", "ground",
             "revolute_body_inverse", "prismatic_body_inverse"]  # fmt: skip
    build_fmus(out, types=types, max_children=1)
    return out


def inverse_chain(fmu_dir: Path) -> CoSimulation:
    cs = CoSimulation()
    for name, (model, params) in CHAIN.items():
        cs.add(name, fmu_dir / f"{model}.fmu", params)
    cs.connect("ground.C1", "arm.P")
    cs.connect("arm.C1", "slide.P")
    cs.connect("slide.C1", "hand.P")
    for ref, value in HELD.items():
        cs.set_input(ref, value)
    return cs


@pytest.fixture(scope="module")
def balloon_ssp(fmu_dir, tmp_path_factory) -> Path:
    cs = build_balloon_cosim(fmu_dir)
    path = tmp_path_factory.mktemp("ssp") / "balloon.ssp"
    return write_ssp(cs, path, stop_time=HORIZON, step=STEP)


@pytest.fixture(scope="module")
def chain_ssp(fmu_dir, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("ssp") / "chain.ssp"
    return write_ssp(inverse_chain(fmu_dir), path, stop_time=0.01, step=STEP)


def structure(cs: CoSimulation) -> dict:
    return {
        "components": {
            n: (Path(c.file.path).name, c.parameters) for n, c in cs.components.items()
        },  # fmt: skip
        "order": list(cs.components),
        "port_links": cs.port_links,
        "signal_links": cs.signal_links,
        "inputs": cs.inputs,
        "coupling": cs.coupling,
    }


# -- round trip ---------------------------------------------------------------------------------


def test_balloon_round_trip_is_bit_identical(fmu_dir, balloon_ssp):
    original = build_balloon_cosim(fmu_dir)
    cs, exp = read_ssp(balloon_ssp)
    assert (exp.start_time, exp.stop_time, exp.step) == (0.0, HORIZON, STEP)
    assert structure(cs) == structure(original)
    assert len(cs.port_links) == 3 and len(cs.signal_links) == 12 and len(cs.inputs) == 6
    r0 = original.simulate(HORIZON, STEP, record=COSIM_RECORD)
    r1 = cs.simulate(exp.stop_time, exp.step, start_time=exp.start_time, record=COSIM_RECORD)
    assert r1.columns == r0.columns and len(r1.rows) == int(round(HORIZON / STEP)) + 1
    np.testing.assert_array_equal(np.array(r1.time), np.array(r0.time))
    np.testing.assert_array_equal(np.array(r1.rows), np.array(r0.rows))
    assert np.ptp(r0["theta1"]) > 1e-3  # the comparison is not of constants


def test_archive_holds_each_fmu_once(balloon_ssp):
    names = zipfile.ZipFile(balloon_ssp).namelist()
    assert names[0] == SSD_NAME
    assert sorted(names[1:]) == [
        "resources/TitopJointSpringDamper.fmu",  # used by three components
        "resources/TitopPrismaticBodyC1.fmu",
        "resources/TitopRevoluteBodyC0.fmu",
        "resources/TitopRevoluteBodyC1.fmu",
        "resources/TitopRigidBodyC1.fmu",
    ]


def test_parameter_files_and_rewriting_a_read_system(fmu_dir, balloon_ssp, tmp_path):
    """Parameter sets as resources/*.ssv files; a system read from an .ssp can be written again
    (its FMUs live in the extracted folder as long as the system); that folder goes with it."""
    cs, _ = read_ssp(balloon_ssp)
    again = write_ssp(cs, tmp_path / "again.ssp", stop_time=HORIZON, parameter_files=True)
    names = zipfile.ZipFile(again).namelist()
    assert "resources/balloon.ssv" in names and "resources/pend2_law.ssv" in names
    cs2, exp2 = read_ssp(again)
    assert structure(cs2) == structure(cs)
    assert exp2.step is None and exp2.stop_time == HORIZON
    r0 = build_balloon_cosim(fmu_dir).simulate(0.02, STEP, record=COSIM_RECORD)
    r2 = cs2.simulate(0.02, STEP, record=COSIM_RECORD)
    np.testing.assert_array_equal(np.array(r2.rows), np.array(r0.rows))
    folder = Path(cs.components["balloon"].file.path).parent.parent
    assert folder.is_dir()
    del cs
    gc.collect()
    assert not folder.exists()


def test_unpacked_folder_and_bare_ssd(balloon_ssp, tmp_path):
    zipfile.ZipFile(balloon_ssp).extractall(tmp_path)
    a, _ = read_ssp(tmp_path)
    b, _ = read_ssp(tmp_path / SSD_NAME)
    assert structure(a) == structure(b)


def test_port_pairs_group_only_when_complete(chain_ssp, tmp_path):
    """Dropping one wrench connection of a port pair leaves its other 23 as signal links."""
    text = _ssd_text(chain_ssp)
    drop = ('<ssd:Connection startElement="hand" startConnector="P.W[4]" endElement="slide" '
            'endConnector="C1.W[4]"/>')  # fmt: skip
    assert drop in text
    cs, _ = read_ssp(_with_ssd(chain_ssp, tmp_path / "x.ssp", text.replace(drop, "")))
    assert cs.port_links == [("ground", "C1", "arm", "P"), ("arm", "C1", "slide", "P")]
    assert len(cs.signal_links) == 23
    assert ("slide", "C1.m[18]", "hand", "P.m[18]") in cs.signal_links


# -- the .ssd's structure: what third-party tools require -------------------------------------

# the namespaces every tool reads by these literal prefixes (libcosim and OMSimulator 2 match
# "ssd:System", "ssc:Annotation", "oms:SimulationInformation"..., not namespace URIs)
PREFIXES = {
    "ssd": "http://ssp-standard.org/SSP1/SystemStructureDescription",
    "ssc": "http://ssp-standard.org/SSP1/SystemStructureCommon",
    "ssv": "http://ssp-standard.org/SSP1/SystemStructureParameterValues",
    "osp": "http://opensimulationplatform.com/SSP/OSPAnnotations",
    "oms": "https://raw.githubusercontent.com/OpenModelica/OMSimulator/master/schema/oms.xsd",
    "titop": "urn:titopfmu:ssp",
}


def _ssd_tree(ssp: Path):
    from lxml import etree

    return etree.fromstring(zipfile.ZipFile(ssp).read(SSD_NAME))


def _name(el) -> str:
    """An element's name as written, prefix included (``ssd:System``)."""
    return f"{el.prefix}:{el.xpath('local-name()')}"


def _children(el) -> list[str]:
    return [_name(ch) for ch in el if isinstance(ch.tag, str)]


def _oms_information(system):
    """The system's first annotation (OMSimulator 2 reads only that one): its
    ``oms:SimulationInformation`` element, checked to be OMSimulator's."""
    annotations = system[-1]
    assert _name(annotations) == "ssd:Annotations"  # last in the system
    first = annotations[0]
    assert _name(first) == "ssc:Annotation" and first.get("type") == "org.openmodelica"
    assert _children(first) == ["oms:Annotations"]
    assert _children(first[0]) == ["oms:SimulationInformation"]
    return first[0][0]


def _check_common_structure(ssp: Path, implementation: str):
    root = _ssd_tree(ssp)
    assert _name(root) == "ssd:SystemStructureDescription" and root.get("version") == "1.0"
    for el in root.iter():
        if isinstance(el.tag, str):
            assert el.prefix in PREFIXES and el.nsmap[el.prefix] == PREFIXES[el.prefix], _name(el)
    # OMSimulator refuses any other root child than these, and SSP 1.0 fixes their order
    assert _children(root) == ["ssd:System", "ssd:DefaultExperiment"]
    system, experiment = root
    assert _children(system) == ["ssd:Elements", "ssd:Connections", "ssd:Annotations"]
    for comp in system[0]:
        assert _name(comp) == "ssd:Component"
        assert comp.get("implementation") == implementation
        assert comp.get("type") == "application/x-fmu-sharedlibrary"
        # OMSimulator 2 refuses any other child of an FMU component
        assert set(_children(comp)) <= {"ssd:Connectors", "ssd:ElementGeometry",
                                        "ssd:ParameterBindings"}  # fmt: skip
    annotations = system[2]
    assert [a.get("type") for a in annotations] == ["org.openmodelica", "titopfmu"]
    assert _children(annotations[1]) == ["titop:Master"]
    return root, system, experiment


def test_ssd_structure_for_co_simulation(balloon_ssp):
    """The balloon's .ssd as OMSimulator (2 and 3), libcosim and SSP 1.0 need it: a
    weakly coupled system, fixed-step master at the communication step."""
    _, system, experiment = _check_common_structure(balloon_ssp, "CoSimulation")
    info = _oms_information(system)
    # OMSimulator 3: the default solver of co-simulation units, defined with its step
    assert (info.get("name"), info.get("method")) == ("oms_ma_default", "oms_ma")
    assert float(info.get("fixedStepSize")) == STEP
    # OMSimulator 2: the child element's name sets the system type (weakly coupled)
    assert _children(info) == ["oms:FixedStepMaster"]
    master = info[0]
    assert master.get("description") == "oms-ma" and float(master.get("stepSize")) == STEP
    assert 0 < float(master.get("relativeTolerance")) < 1
    assert system[2][1][0].attrib == {"coupling": "polynomial", "interface": "CoSimulation"}
    # the default experiment: times, and the step for libcosim
    assert (float(experiment.get("startTime")), float(experiment.get("stopTime"))) == (
        0.0, HORIZON)  # fmt: skip
    assert _children(experiment) == ["ssd:Annotations"]
    osp = experiment[0][0]
    assert osp.get("type") == "com.opensimulationplatform"
    assert float(osp[0][0].get("baseStepSize")) == STEP and _name(osp[0][0]) == (
        "osp:FixedStepAlgorithm")  # fmt: skip


def test_ssd_structure_for_model_exchange(fmu_dir, tmp_path):
    """Written for model exchange: every component's implementation, and a strongly coupled
    system integrated by CVODE at the given tolerance, no step larger than the output step."""
    cs = build_balloon_cosim(fmu_dir)
    cs.coupling = "hold"
    path = write_ssp(cs, tmp_path / "me.ssp", stop_time=1.0, step=0.01,
                     interface="ModelExchange", tolerance=1e-7)  # fmt: skip
    _, system, _ = _check_common_structure(path, "ModelExchange")
    info = _oms_information(system)
    assert (info.get("name"), info.get("method")) == ("oms_me_solver", "cvode")
    assert float(info.get("relativeTolerance")) == 1e-7
    assert float(info.get("maximumStepSize")) == 0.01
    assert _children(info) == ["oms:VariableStepSolver"]  # OMSimulator 2: strongly coupled
    solver = info[0]
    assert solver.get("description") == "cvode"
    assert float(solver.get("relativeTolerance")) == 1e-7
    assert float(solver.get("maximumStepSize")) == 0.01
    assert 0 < float(solver.get("minimumStepSize")) <= float(solver.get("initialStepSize"))
    assert system[2][1][0].attrib == {"coupling": "hold", "interface": "ModelExchange",
                                      "tolerance": "1e-07"}  # fmt: skip
    # read back: the same system, and how it was meant to run
    back, exp = read_ssp(path)
    assert structure(back) == structure(cs)
    assert (exp.interface, exp.tolerance, exp.step, exp.stop_time) == (
        "ModelExchange", 1e-7, 0.01, 1.0)  # fmt: skip


def test_files_of_the_previous_layout_are_read(chain_ssp, tmp_path):
    """titopfmu 0.1 wrote its annotation at the .ssd root (after the default experiment) and no
    OMSimulator annotation: such files read as before."""
    text = _ssd_text(chain_ssp)
    start = text.index("    <ssd:Annotations>\n      <ssc:Annotation type=\"org.openmodelica\">")
    end = text.index("</ssd:Annotations>", start) + len("</ssd:Annotations>\n")
    old = text[:start] + text[end:]
    old = old.replace("</ssd:SystemStructureDescription>", (
        '  <ssd:Annotations>\n    <ssc:Annotation type="titopfmu">\n'
        '      <titop:Master coupling="hold"/>\n    </ssc:Annotation>\n  </ssd:Annotations>\n'
        "</ssd:SystemStructureDescription>"))  # fmt: skip
    assert "org.openmodelica" not in old and old.count("titop:Master") == 1
    cs, exp = read_ssp(_with_ssd(chain_ssp, tmp_path / "old.ssp", old))
    new, _ = read_ssp(chain_ssp)
    assert cs.coupling == "hold" and new.coupling == "polynomial"
    new.coupling = "hold"
    assert structure(cs) == structure(new)
    assert (exp.step, exp.stop_time, exp.interface, exp.tolerance) == (
        STEP, 0.01, "CoSimulation", None)  # fmt: skip


def test_initial_unknowns_derivatives_as_omsimulator_asks_for_them(fmu_dir):
    """In Initialization Mode OMSimulator asks for the derivative of an initial unknown with
    respect to one known and passes the unknown's whole dependency list (parameters included)
    with zero seeds for the others: the FMUs accept parameters with a zero seed there, refuse a
    non-zero one (fmi2Error naming it) and any parameter once initialised."""
    from fmpy.fmi1 import FMICallException

    sys.path.insert(0, str(Path(__file__).parent))
    from fmu_helpers import load

    lf = load(fmu_dir / "TitopRigidBodyC1.fmu")
    vr = lf.vr
    unknown = next(u for u in lf.md.initialUnknowns if u.variable.name == "C1.m[1]")
    deps = [v.valueReference for v in unknown.dependencies]
    assert vr["mass"] in deps and vr["C1.W[1]"] in deps  # parameters and inputs
    messages: list[str] = []

    def log(env, instance, status, category, message):
        messages.append(message.decode() if isinstance(message, bytes) else str(message))

    fmu = lf.instantiate("b", logger=log)
    try:
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        fmu.setReal([vr["mass"], vr["C1.W[1]"]], [3.0, 0.2])
        out, known = vr["C1.m[1]"], vr["C1.W[1]"]
        alone = fmu.getDirectionalDerivative([out], [known], [1.0])[0]
        assert alone != 0.0  # the child port's acceleration depends on its wrench
        seeds = [1.0 if d == known else 0.0 for d in deps]
        assert fmu.getDirectionalDerivative([out], deps, seeds)[0] == alone
        with pytest.raises(FMICallException):
            fmu.getDirectionalDerivative([out], [vr["mass"]], [1.0])
        assert "no derivative with respect to the parameter 'mass'" in messages[-1]
        fmu.exitInitializationMode()
        with pytest.raises(FMICallException):  # after initialisation: inputs and states only
            fmu.getDirectionalDerivative([out], [known, vr["mass"]], [1.0, 0.0])
        assert "'mass' is not an input or a state" in messages[-1]
        assert fmu.getDirectionalDerivative([out], [known], [1.0])[0] == alone
    finally:
        fmu.terminate()
        fmu.freeInstance()


# -- pyssp-standard ------------------------------------------------------------------------------


def test_ssd_is_valid_for_pyssp_standard(balloon_ssp):
    pytest.importorskip("pyssp_standard", reason="pyssp-standard is not installed")
    from pyssp_standard.ssp import SSP

    with SSP(balloon_ssp, mode="r") as ssp:
        ssd = ssp.system_structure
        ssd.__check_compliance__()  # XML Schema (SSP 1.0, XSD 1.1 variant); raises if invalid
        assert (ssd.name, ssd.version) == ("balloon", "1.0")
        assert ssd.check_connections(connector_not_in_system=True, unconnected_inputs=False) == []
        assert (ssd.default_experiment.start_time, ssd.default_experiment.stop_time) == (
            0.0, HORIZON)  # fmt: skip
        comps = {c.name: c for c in ssd.system.elements}
        assert list(comps) == ["balloon", "slider", "pend1", "pend2", "slider_law",
                               "pend1_law", "pend2_law"]  # fmt: skip
        assert comps["pend2_law"].source == "resources/TitopJointSpringDamper.fmu"
        assert len(ssd.system.connections) == 3 * 24 + 12
        kinds = {(c.name, k.name): k.kind for c in comps.values() for k in c.connectors}
        assert kinds[("slider", "P.m[1]")] == "input" and kinds[("slider", "P.W[1]")] == "output"
        assert kinds[("balloon", "mass")] == "parameter"
        assert kinds[("balloon", "ext.W[2]")] == "input"  # a held input
        values = {p["name"]: (p["type_name"], p["type_value"].parameter["value"]) for p in
                  comps["balloon"].parameter_bindings[0].ssv.parameters}  # fmt: skip
        assert values["mass"] == ("Real", "10.0")
        assert values["ext.inertial"] == ("Boolean", "true")
        assert values["solver.method"] == ("Integer", "4")  # from_system's RK4
        assert values["ext.W[2]"] == ("Real", "156.96")  # the held buoyancy


def test_model_exchange_ssd_is_valid_for_pyssp_standard(fmu_dir, tmp_path):
    pytest.importorskip("pyssp_standard", reason="pyssp-standard is not installed")
    from pyssp_standard.ssp import SSP

    path = write_ssp(build_balloon_cosim(fmu_dir), tmp_path / "me.ssp", stop_time=1.0,
                     interface="ModelExchange", parameter_files=True)  # fmt: skip
    with SSP(path, mode="r") as ssp:
        ssd = ssp.system_structure
        ssd.__check_compliance__()
        assert {c.implementation for c in ssd.system.elements} == {"ModelExchange"}


def test_ssd_reads_in_fmpy(balloon_ssp):
    """FMPy's SSP reader (with its schema validation) reads the .ssp: components, connections,
    connector kinds and the bound values (FMPy ignores the default experiment)."""
    from fmpy.ssp.ssd import read_ssd

    ssd = read_ssd(str(balloon_ssp), validate=True)
    assert (ssd.name, ssd.version, ssd.system.name) == ("balloon", "1.0", "balloon")
    comps = {c.name: c for c in ssd.system.elements}
    assert list(comps) == ["balloon", "slider", "pend1", "pend2", "slider_law", "pend1_law",
                           "pend2_law"]  # fmt: skip
    assert len(ssd.system.connections) == 3 * 24 + 12
    c = ssd.system.connections[0]
    assert (c.startElement, c.startConnector, c.endElement, c.endConnector) == (
        "balloon", "C1.m[1]", "slider", "P.m[1]")  # fmt: skip
    kinds = {k.name: k.kind for k in comps["slider"].connectors}
    assert kinds["P.m[1]"] == "input" and kinds["C1.m[1]"] == "output"
    (ps,) = comps["balloon"].parameterBindings[0].parameterValues
    values = {p.name: (p.type, p.value) for p in ps.parameters}
    assert values["mass"] == ("Real", "10.0") and values["ext.W[2]"] == ("Real", "156.96")
    assert values["ext.inertial"] == ("Boolean", "true")


# -- libcosim ------------------------------------------------------------------------------------


class _CaptureFds:
    """libcosim logs to the process's stdout/stderr (boost.log): capture fds 1 and 2."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved = [os.dup(1), os.dup(2)]
        with open(self.path, "wb") as f:
            os.dup2(f.fileno(), 1)
            os.dup2(f.fileno(), 2)
        return self

    def __exit__(self, *exc) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, copy in enumerate(self.saved, start=1):
            os.dup2(copy, fd)
            os.close(copy)
        self.text = self.path.read_text(errors="replace")


def chain_engine_outputs(columns: list[str]) -> np.ndarray:
    """The inverse chain's outputs (``columns`` of the master's record) from the in-process
    engine: the core's inverse dynamics of the same blocks, joint motions and wrench."""
    from titopfmu import Constant, Engine, Ground, PrismaticBodyInverse, RevoluteBodyInverse, System

    g, a, sl, h = (CHAIN[n][1] for n in ("ground", "arm", "slide", "hand"))

    def body(cls, name, p, **kw):
        return cls(name, p["mass"], p["inertia"], com=p["com"], gravity=GRAVITY,
                   axis=p["axis"], **kw)  # fmt: skip

    s = System()
    s.add(
        Ground("ground", children={"C1": g["C1.point"]}, position=g["position"],
               euler=g["euler"]),
        body(RevoluteBodyInverse, "arm", a, children={"C1": a["C1.point"]}),
        body(PrismaticBodyInverse, "slide", sl, children={"C1": sl["C1.point"]}),
        body(RevoluteBodyInverse, "hand", h,
             external={"ext": {"point": h["ext.point"], "frame": "inertial"}}),
        *(Constant(f"q_{j}", HELD[f"{j}.joint.m"]) for j in ("arm", "slide", "hand")),
        Constant("push", HELD["hand.ext.W"]),
    )  # fmt: skip
    s.connect("ground.C1", "arm.P")
    s.connect("arm.C1", "slide.P")
    s.connect("slide.C1", "hand.P")
    for j in ("arm", "slide", "hand"):
        s.connect(f"q_{j}.y", f"{j}.joint.m")
    s.connect("push.y", "hand.ext")
    engine = Engine(s)
    ev = engine.evaluate(0.0, engine.initial_state())
    signals = {"ground.body.W": "ground.W", "hand.body.m": "hand.m"}
    out = []
    for col in columns:
        base, _, index = col.partition("[")
        value = np.atleast_1d(engine.signal(ev, signals.get(base, base)))
        out.append(value[int(index[:-1]) - 1] if index else value[0])
    return np.array(out, dtype=float)


def test_inverse_chain_ssp_runs_in_libcosim(fmu_dir, chain_ssp, tmp_path):
    pytest.importorskip("libcosimpy.CosimExecution", reason="libcosimpy is not installed")
    from libcosimpy.CosimEnums import CosimExecutionState
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimObserver import CosimObserver

    n_steps = 10
    master = inverse_chain(fmu_dir).simulate(n_steps * STEP, STEP, record=CHAIN_OUTPUTS)
    with _CaptureFds(tmp_path / "libcosim.log") as log:
        log_output_level(CosimLogLevel.WARNING)
        # no step given: libcosim takes it from the SSD's default experiment (OSP annotation)
        ex = CosimExecution.from_ssp_file(str(chain_ssp))
        index = {s.name.decode(): s.index for s in ex.slave_infos()}
        observer = CosimObserver.create_last_value()
        assert ex.add_observer(observer)
        refs = {}
        for col in master.columns:
            comp, var = col.split(".", 1)
            vrs = {v.name.decode(): v.reference for v in ex.slave_variables(index[comp])}
            refs[col] = (index[comp], vrs[var])
        got = []
        for _ in range(n_steps):
            assert ex.step(1)
            got.append([observer.last_real_values(i, [vr])[0] for i, vr in refs.values()])
        status = ex.status()
    assert sorted(index) == sorted(CHAIN)
    assert CosimExecutionState(status.state) != CosimExecutionState.ERROR
    assert status.current_time == n_steps * 1_000_000  # the SSD's 1 ms step
    complaints = [ln for ln in log.text.splitlines()
                  if re.search(r"\[(warning|error|fatal)\]", ln)]  # fmt: skip
    assert not complaints, "libcosim logged:\n" + "\n".join(complaints)
    # libcosim passes a value across one connection per step: the last steps have settled
    np.testing.assert_array_equal(got[-1], got[-2])
    expected = np.array(master.rows[-1])
    scale = max(1.0, float(np.max(np.abs(expected))))
    assert np.max(np.abs(np.array(got[-1]) - expected)) <= 1e-12 * scale
    taus = expected[:3]
    assert np.min(np.abs(taus)) > 0.1  # parameters and held inputs reached the FMUs
    # and the in-process engine (the core's inverse dynamics of the same blocks) agrees
    engine = chain_engine_outputs(master.columns)
    assert len(engine) == len(expected) == 3 + 6 + 18
    scale = max(1.0, float(np.max(np.abs(engine))))
    assert np.max(np.abs(np.array(got[-1]) - engine)) <= 1e-9 * scale


# -- OMSimulator ------------------------------------------------------------------------------


#: the balloon's position and attitude, and its three joint coordinates
OMS_REFS = [("balloon", f"body.m[{i}]") for i in range(13, 19)]
OMS_REFS += [(c, "joint.m[3]") for c in ("slider", "pend1", "pend2")]


def _run_in_omsimulator(ssp: Path, tmp_path: Path) -> np.ndarray:
    """OMS_REFS every 10 ms up to HORIZON from OMSimulator (3: its SSP API; 2: its C API)."""
    oms = pytest.importorskip("OMSimulator", reason="OMSimulator is not installed")
    times = [k * 0.01 for k in range(1, int(round(HORIZON / 0.01)) + 1)]
    got = []
    if hasattr(oms, "SSP"):  # OMSimulator 3
        im = oms.SSP(str(ssp)).instantiate()
        im.setResultFile(str(tmp_path / "oms_res.mat"))
        im.initialize()
        for t in times:
            im.stepUntil(t)
            got.append([im.getValue(oms.CRef("balloon", c, v)) for c, v in OMS_REFS])
        im.terminate()
        im.delete()
    else:  # OMSimulator 2
        api = oms.OMSimulator()
        model, status = api.importFile(str(ssp))
        assert status == 0, f"OMSimulator 2 refused {ssp}"
        api.setResultFile(model, str(tmp_path / "oms_res.mat"))
        assert api.instantiate(model) == 0 and api.initialize(model) == 0
        for t in times:
            api.stepUntil(model, t)
            got.append([api.getReal(f"{model}.balloon.{c}.{v}")[0] for c, v in OMS_REFS])
        api.terminate(model)
        api.delete(model)
    return np.array(got)


def test_balloon_ssp_runs_unedited_in_omsimulator(fmu_dir, balloon_ssp, tmp_path):
    """OMSimulator (2 or 3) opens the balloon's .ssp as written and runs it with its fixed-step
    master at the file's step: inputs held over each step, the algebraic loop solved at every
    communication point, so it must equal titopfmu's master with held inputs.

    Runs where OMSimulator's Python package imports: its PyPI package downloads the native
    library from OpenModelica's servers at install time, so it is not in the test extra
    (``scripts/check_omsimulator.py`` and docs/cosim.md give the figures)."""
    got = _run_in_omsimulator(balloon_ssp, tmp_path)
    held = build_balloon_cosim(fmu_dir)
    held.coupling = "hold"
    r = held.simulate(HORIZON, STEP, output_interval=0.01,
                      record=[f"{c}.{v}" for c, v in OMS_REFS])  # fmt: skip
    expected = np.array(r.rows[1:])
    assert np.ptp(expected[:, -2]) > 1e-3  # theta1 moves: the comparison is not of constants
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-8)


def test_model_exchange_ssp_runs_unedited_in_omsimulator_2(fmu_dir, tmp_path):
    """Written for model exchange, OMSimulator 2 integrates the balloon's FMUs with CVODE in one
    strongly coupled system, the loop solved at every derivative evaluation: it equals the
    in-process engine to the integration tolerance. (The OMSimulator 3 build this was tried with,
    v3.0.0-114, updates the inputs of a strongly coupled system only at communication points;
    later sources update them in the right-hand side again: OMSimulator 3 is left out.)"""
    oms = pytest.importorskip("OMSimulator", reason="OMSimulator is not installed")
    if hasattr(oms, "SSP"):
        pytest.skip("OMSimulator 3 (v3.0.0-114) holds model-exchange units' inputs over a step")
    from titopfmu import Engine
    from titopfmu.examples.balloon import build_balloon

    path = write_ssp(build_balloon_cosim(fmu_dir), tmp_path / "me.ssp", stop_time=HORIZON,
                     step=STEP, name="balloon", interface="ModelExchange",
                     tolerance=1e-9)  # fmt: skip
    got = _run_in_omsimulator(path, tmp_path)
    signals = {"balloon": "balloon.m", "slider": "slider.joint.m", "pend1": "pend1.joint.m",
               "pend2": "pend2.joint.m"}  # fmt: skip
    engine = Engine(build_balloon())
    record = {f"{c}.{v}": f"{signals[c]}[{v[v.index('[') + 1:-1]}]" for c, v in OMS_REFS}
    ref = engine.simulate(HORIZON, output_interval=0.01, record=record, rtol=1e-12, atol=1e-13)
    expected = np.array([ref[k] for k in record]).T[1:]
    assert np.ptp(expected[:, -2]) > 1e-3
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-7)


# -- bad input ----------------------------------------------------------------------------------


def _ssd_text(ssp: Path) -> str:
    return zipfile.ZipFile(ssp).read(SSD_NAME).decode()


def _with_ssd(ssp: Path, out: Path, text: str | None, drop: tuple[str, ...] = (),
              extra: dict[str, bytes] | None = None) -> Path:  # fmt: skip
    """A copy of ``ssp`` with another SSD text (None: none), members dropped or added."""
    with zipfile.ZipFile(ssp) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            if item.filename in drop or item.filename == SSD_NAME:
                continue
            dst.writestr(item, src.read(item.filename))
        if text is not None:
            dst.writestr(SSD_NAME, text)
        for name, data in (extra or {}).items():
            dst.writestr(name, data)
    return out


def _first(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


MUTATIONS = {
    "malformed XML": (lambda t: t[: len(t) // 2], ["malformed XML", SSD_NAME, "line"]),
    "not SSP 1.0": (
        lambda t: t.replace("SSP1/SystemStructureDescription", "SSP9/SSD"),
        ["not an SSP 1.0 ssd:SystemStructureDescription"],
    ),
    "missing component": (
        lambda t: _first(t, 'endElement="slide"', 'endElement="slyde"'),
        ["connection 25 (arm.C1.m[1] -> slyde.P.m[1])", "no component 'slyde'", "line "],
    ),
    "missing connector": (
        lambda t: _first(t, 'endConnector="P.m[3]"', 'endConnector="P.m[33]"'),
        ["connection 3", "component 'arm' declares no connector 'P.m[33]'", "nor a variable"],
    ),
    "connector not in FMU": (
        lambda t: _first(t, 'name="mass" kind="parameter"', 'name="mas" kind="parameter"'),
        [
            "component 'arm': connector 'mas' is not a variable of its FMU",
            "resources/TitopRevoluteBodyInverseC1.fmu",
        ],
    ),
    "two outputs": (
        lambda t: _first(
            t,
            'endElement="slide" endConnector="P.m[1]"',
            'endElement="slide" endConnector="C1.m[1]"',
        ),
        ["(arm.C1.m[1] -> slide.C1.m[1]) joins an output and an output"],
    ),
    "connector kind": (
        lambda t: _first(t, 'name="C1.m[1]" kind="output"', 'name="C1.m[1]" kind="input"'),
        ["component 'ground': connector 'C1.m[1]' is declared as 'input' but is an output"],
    ),
    "input fed twice": (
        lambda t: _first(
            t,
            'startElement="arm" startConnector="C1.m[2]" endElement="slide" endConnector="P.m[2]"',
            'startElement="arm" startConnector="C1.m[2]" endElement="slide" endConnector="P.m[1]"',
        ),
        ["input 'slide.P.m[1]' is already fed by the connection on line"],
    ),
    "bad real": (
        lambda t: _first(t, '<ssv:Real value="2.3"/>', '<ssv:Real value="heavy"/>'),
        ["component 'arm', parameter 'mass': value \"heavy\" is not a number"],
    ),
    "bad boolean": (
        lambda t: _first(t, '<ssv:Boolean value="true"/>', '<ssv:Boolean value="yes"/>'),
        ["component 'hand', parameter 'ext.inertial'", "not a boolean"],
    ),
    "wrong type": (
        lambda t: _first(t, '<ssv:Real value="2.3"/>', '<ssv:Boolean value="true"/>'),
        ["component 'arm', parameter 'mass': an ssv:Boolean value for a Real variable"],
    ),
    "unknown parameter": (
        lambda t: _first(t, '<ssv:Parameter name="mass">', '<ssv:Parameter name="masss">'),
        ["component 'arm': parameter 'masss' is not a variable of its FMU"],
    ),
    "parameter on output": (
        lambda t: _first(t, '<ssv:Parameter name="mass">', '<ssv:Parameter name="joint.tau">'),
        ["component 'arm', parameter 'joint.tau'", "is an output, not a parameter or input"],
    ),
    "non-finite held input": (
        lambda t: _first(t, '<ssv:Real value="1.5"/>', '<ssv:Real value="NaN"/>'),
        ["component 'hand', parameter 'ext.W[1]': non-finite value NaN"],
    ),
    "stop before start": (
        lambda t: _first(t, 'stopTime="0.01"', 'stopTime="-1.0"'),
        ["DefaultExperiment", "stop time -1.0 must be after the start time 0.0"],
    ),
    "bad step": (
        lambda t: _first(t, 'baseStepSize="0.001"', 'baseStepSize="0"'),
        ["DefaultExperiment", "communication step must be positive"],
    ),
    "unknown implementation": (
        lambda t: _first(t, 'implementation="CoSimulation"', 'implementation="Hybrid"'),
        ["component 'ground': implementation 'Hybrid' is not one of any, CoSimulation"],
    ),
    "mixed implementations": (
        lambda t: _first(t, 'implementation="CoSimulation"', 'implementation="ModelExchange"'),
        ["component 'ground': implementation 'ModelExchange', but the system is written for "
         "CoSimulation"],
    ),
    "bad tolerance": (
        lambda t: _first(t, 'interface="CoSimulation"/>',
                         'interface="CoSimulation" tolerance="big"/>'),
        ['Master: tolerance="big" is not a number'],
    ),
    "nested system": (
        lambda t: _first(t, "</ssd:Elements>", '<ssd:System name="sub"/></ssd:Elements>'),
        ["element ssd:System is not supported"],
    ),
}


@pytest.mark.parametrize("case", list(MUTATIONS))
def test_bad_ssd_is_refused_with_a_clear_error(chain_ssp, tmp_path, case):
    mutate, expected = MUTATIONS[case]
    bad = _with_ssd(chain_ssp, tmp_path / "bad.ssp", mutate(_ssd_text(chain_ssp)))
    _assert_refused(bad, expected)


def _assert_refused(path, expected) -> None:
    """read_ssp(path) raises a CosimError naming the file and containing every ``expected``."""
    with pytest.raises(CosimError) as err:
        read_ssp(path)
    msg = str(err.value)
    assert str(path) in msg, msg
    for part in expected:
        assert part in msg, msg


def test_bad_archives_are_refused(chain_ssp, tmp_path):
    cases = []
    junk = tmp_path / "junk.ssp"
    junk.write_text("not a zip archive")
    cases.append((junk, ["is not a readable SSP (zip) archive"]))
    cut = tmp_path / "cut.ssp"
    data = chain_ssp.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    cut_msg = "looks truncated" if zipfile.is_zipfile(cut) else "not a readable SSP"
    cases.append((cut, [cut_msg]))  # (the tail may hold the zip directory of a stored FMU)
    no_ssd = _with_ssd(chain_ssp, tmp_path / "nossd.ssp", None,
                       extra={"Other.ssd": _ssd_text(chain_ssp).encode()})  # fmt: skip
    cases.append((no_ssd, [f"no {SSD_NAME} at the root of the archive", "Other.ssd"]))
    no_fmu = _with_ssd(chain_ssp, tmp_path / "nofmu.ssp", _ssd_text(chain_ssp),
                       drop=("resources/TitopGroundC1.fmu",))  # fmt: skip
    cases.append((no_fmu, ["component 'ground': its FMU 'resources/TitopGroundC1.fmu' is missing",
                           "line "]))  # fmt: skip
    fake = _with_ssd(chain_ssp, tmp_path / "fake.ssp", _ssd_text(chain_ssp),
                     drop=("resources/TitopGroundC1.fmu",),
                     extra={"resources/TitopGroundC1.fmu": b"no FMU"})  # fmt: skip
    cases.append((fake, ["component 'ground': 'resources/TitopGroundC1.fmu' is not a readable"]))
    cases.append((tmp_path / "absent.ssp", ["not found"]))
    for path, expected in cases:
        _assert_refused(path, expected)


def test_write_refuses_a_bad_experiment(fmu_dir, tmp_path):
    cs = inverse_chain(fmu_dir)
    for kwargs, part in (({"step": 0.0}, "step must be positive"),
                         ({"stop_time": 0.0}, "must be after the start time"),
                         ({"start_time": 1.0, "stop_time": 0.5}, "must be after"),
                         ({"interface": "ME"}, "interface 'ME' is not one of"),
                         ({"tolerance": 0.0}, "relative tolerance must be in")):  # fmt: skip
        with pytest.raises(CosimError, match=part):
            write_ssp(cs, tmp_path / "x.ssp", **kwargs)
    assert not list(tmp_path.iterdir())  # nothing written


# -- command line -------------------------------------------------------------------------------


def _read_csv(path: Path) -> tuple[list[str], np.ndarray]:
    rows = list(csv.reader(open(path)))
    return rows[0], np.array(rows[1:], dtype=float)


def test_cli_cosim_runs_an_ssp(fmu_dir, balloon_ssp, tmp_path, capsys):
    out = tmp_path / "r.csv"
    code = main(["cosim", str(balloon_ssp), "--stop-time", "0.05", "--out", str(out),
                 "--record", "pend1.joint.m", "slider.joint.m[3]"])  # fmt: skip
    assert code == 0
    assert "wrote" in capsys.readouterr().out
    assert out.read_text().splitlines()[0] == (
        '"time","pend1.joint.m[1]","pend1.joint.m[2]","pend1.joint.m[3]","slider.joint.m[3]"'
    )
    header, data = _read_csv(out)
    ref = build_balloon_cosim(fmu_dir).simulate(
        0.05, STEP, record={"a": "pend1.joint.m", "b": "slider.joint.m[3]"})  # fmt: skip
    np.testing.assert_array_equal(data[:, 0], ref["time"])
    np.testing.assert_array_equal(data[:, 1:], np.array(ref.rows))


def test_cli_cosim_defaults_from_the_default_experiment(chain_ssp, tmp_path):
    out = tmp_path / "chain.csv"
    assert main(["cosim", str(chain_ssp), "--out", str(out), "--quiet"]) == 0
    header, data = _read_csv(out)
    assert header[0] == "time" and "hand.joint.tau" in header and "ground.body.W[6]" in header
    np.testing.assert_allclose(data[:, 0], np.arange(11) * STEP, rtol=0, atol=1e-15)


def test_cli_cosim_errors(chain_ssp, tmp_path, capsys, monkeypatch):
    junk = tmp_path / "junk.ssp"
    junk.write_text("not a zip")
    assert main(["cosim", str(junk), "--out", str(tmp_path / "j.csv")]) == 2
    assert "is not a readable SSP" in capsys.readouterr().err
    assert not (tmp_path / "j.csv").exists()
    # a failure during the run: the results so far are written, exit status 1
    do_step = CoSimulation.do_step

    def failing(self, h, *args, **kwargs):
        if self.t >= 0.0045:
            raise CosimError("injected failure", self.t)
        return do_step(self, h, *args, **kwargs)

    monkeypatch.setattr(CoSimulation, "do_step", failing)
    out = tmp_path / "partial.csv"
    assert main(["cosim", str(chain_ssp), "--out", str(out), "--record", "arm.joint.tau"]) == 1
    err = capsys.readouterr().err
    assert "injected failure" in err and "written to" in err
    _, data = _read_csv(out)
    assert 1 <= len(data) < 11 and data[-1, 0] < 0.0055  # stopped early
