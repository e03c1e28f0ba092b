"""SSP files for model exchange and with FMI 3.0 FMUs (``titopfmu export --ssp`` with
``--implementation modelexchange`` and ``--fmi-version 3``; ``write_ssp(interface=...,
fmi_version=...)``).

* The model-exchange SSP validates (pyssp-standard's SSP 1.0 schema check, FMPy's reader) and
  runs in titopfmu's master as written (``titopfmu cosim`` picks model exchange and the file's
  tolerance), agreeing with the in-process engine.
* The FMI 3.0 SSP is an SSP 2.0 file (SSP 1.0 has neither FMI 3.0's types nor arrays): it
  validates against the SSP 2.0 schemas (SSD and SSV), holds FMI 3.0 FMUs, and is the same system
  as the FMI 2.0 file, element for element (connectors, connections, bound values, read back
  here independently of the writer); its values instantiate the FMI 3.0 FMUs to the same outputs
  as the FMI 2.0 FMUs. No host here runs an SSP 2.0 file (titopfmu's master runs FMI 2.0 FMUs:
  it refuses these files by name; FMPy reads SSP 1.0 only; OMSimulator is not installed).
* Bad requests are refused before anything is written.
"""

from __future__ import annotations

import csv
import re
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fmpy", reason="the master needs fmpy (the 'fmi' extra)")

from fmpy import extract, read_model_description  # noqa: E402
from lxml import etree  # noqa: E402

from titopfmu.cli import main  # noqa: E402
from titopfmu.examples.balloon import build_balloon_cosim  # noqa: E402
from titopfmu.master import CosimError, CoSimulation  # noqa: E402
from titopfmu.master.ssp import SSD_NAME, read_ssp, write_ssp  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:.*triangle inequality")

NS = {
    "ssd": "http://ssp-standard.org/SSP1/SystemStructureDescription",
    "ssc": "http://ssp-standard.org/SSP1/SystemStructureCommon",
    "ssv": "http://ssp-standard.org/SSP1/SystemStructureParameterValues",
    "titop": "urn:titopfmu:ssp",
}
#: the balloon's FMUs: (type, child ports)
BALLOON = [("rigid_body", 1), ("prismatic_body", 1), ("revolute_body", 1), ("revolute_body", 0),
           ("joint_spring_damper", 0)]  # fmt: skip
#: FMI 3.0 type -> FMI 2.0 type of the same variable
FMI2_TYPE = {"Float64": "Real", "Int32": "Integer", "Boolean": "Boolean"}


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A fresh per-user FMU cache for this module; linux binaries only (the Windows
    cross-compiles would double the build time and are not what is tested here)."""
    import titopfmu.fmi.build as build

    mp = pytest.MonkeyPatch()
    folder = tmp_path_factory.mktemp("fmu_cache")
    mp.setenv("TITOPFMU_CACHE_DIR", str(folder))
    mp.setattr(build, "win64_default", lambda win64=None: bool(win64))
    yield folder
    mp.undo()


@pytest.fixture(scope="module")
def fmus2(cache) -> Path:
    from titopfmu.fmi.cache import cached_variants

    return cached_variants(BALLOON)


@pytest.fixture(scope="module")
def fmus3(cache) -> Path:
    from titopfmu.fmi.cache import cached_variants

    return cached_variants(BALLOON, fmi_version=3)


# -- reading an SSD back, independently of the writer -------------------------------------------


def _root(ssp: Path):
    return etree.fromstring(zipfile.ZipFile(ssp).read(SSD_NAME))


def _shape(el) -> tuple[int, ...]:
    return tuple(int(d.get("size")) for d in el.findall("ssc:Dimension", NS))


def _typed(el, ns: str):
    (t,) = [ch for ch in el if isinstance(ch.tag, str) and ch.tag.startswith(f"{{{NS[ns]}}}")
            and etree.QName(ch).localname != "Dimension"]  # fmt: skip
    return t


def _elements(shape: tuple[int, ...]) -> list[str]:
    """FMI 2.0 suffixes of an array's elements, row-major: ``[1]``.., ``[1,1]``, ``[1,2]``.."""
    if not shape:
        return [""]
    return ["[" + ",".join(str(i + 1) for i in idx) + "]" for idx in np.ndindex(*shape)]


def read_back(ssp: Path) -> dict:
    """Every component's connectors and bound values and the connections, arrays expanded to
    FMI 2.0 scalar names (row-major), types to FMI 2.0's: comparable across SSP versions."""
    z = zipfile.ZipFile(ssp)
    root = _root(ssp)
    out: dict = {"version": root.get("version"), "components": {}, "connections": []}
    shapes: dict[tuple[str, str], tuple[int, ...]] = {}
    for comp in root.findall("ssd:System/ssd:Elements/ssd:Component", NS):
        name = comp.get("name")
        connectors, values = [], {}
        for con in comp.findall("ssd:Connectors/ssd:Connector", NS):
            t = etree.QName(_typed(con, "ssc")).localname
            shapes[(name, con.get("name"))] = shape = _shape(con)
            connectors += [(con.get("name") + s, con.get("kind"), FMI2_TYPE.get(t, t))
                           for s in _elements(shape)]  # fmt: skip
        for b in comp.findall("ssd:ParameterBindings/ssd:ParameterBinding", NS):
            ps = (etree.fromstring(z.read(b.get("source"))) if b.get("source")
                  else b.find("ssd:ParameterValues/ssv:ParameterSet", NS))  # fmt: skip
            assert ps.get("version") == out["version"]
            for p in ps.findall("ssv:Parameters/ssv:Parameter", NS):
                items = _typed(p, "ssv").get("value").split()
                suffixes = _elements(_shape(p))
                assert len(items) == len(suffixes), p.get("name")
                for s, text in zip(suffixes, items, strict=True):
                    values[p.get("name") + s] = (True if text == "true" else False
                                                 if text == "false" else float(text))  # fmt: skip
        out["components"][name] = {"source": comp.get("source"),
                                   "implementation": comp.get("implementation"),
                                   "connectors": connectors, "values": values}  # fmt: skip
    for c in root.findall("ssd:System/ssd:Connections/ssd:Connection", NS):
        a, x, b, y = (c.get(k) for k in ("startElement", "startConnector", "endElement",
                                         "endConnector"))  # fmt: skip
        assert c.get("startIndices") is None and c.get("endIndices") is None
        assert shapes[(a, x)] == shapes[(b, y)]
        out["connections"] += [(a, x + s, b, y + s) for s in _elements(shapes[(a, x)])]
    return out


def _fmi_versions(ssp: Path) -> set[str]:
    z = zipfile.ZipFile(ssp)
    versions = set()
    for name in z.namelist():
        if name.endswith(".fmu"):
            with z.open(name) as f, zipfile.ZipFile(f) as fmu:
                md = etree.fromstring(fmu.read("modelDescription.xml"))
                versions.add(md.get("fmiVersion"))
    return versions


def _pyssp_valid(ssp: Path, version: str) -> None:
    """pyssp-standard's schema check of the SSD (the SSP version's XSD 1.1 schema) and of every
    parameter file (SSV)."""
    pytest.importorskip("pyssp_standard", reason="pyssp-standard is not installed")
    from pyssp_standard.ssp import SSP

    with SSP(ssp, mode="r") as s:
        ssd = s.system_structure
        assert ssd.version == version
        ssd.__check_compliance__()  # raises if invalid
        assert ssd.check_connections(connector_not_in_system=True, unconnected_inputs=False) == []
        for ssv in s.ssv:  # the parameter files
            assert ssv.version == version
            ssv.__check_compliance__()


def _read_csv(path: Path) -> tuple[list[str], np.ndarray]:
    rows = list(csv.reader(open(path)))
    return rows[0], np.array(rows[1:], dtype=float)


# -- model exchange -------------------------------------------------------------------------------


def test_export_model_exchange_ssp_validates_and_runs_as_written(fmus2, tmp_path, capsys):
    from fmpy.ssp.ssd import read_ssd

    from titopfmu.assembly.engine import Engine
    from titopfmu.sources import load_model

    out = tmp_path / "me.ssp"
    assert main(["export", "balloon", "--ssp", str(out), "--implementation", "modelexchange",
                 "--rtol", "1e-10", "--t-final", "0.3", "--step", "0.01"]) == 0  # fmt: skip
    said = capsys.readouterr().out
    # the balloon's three joint laws act on their own joints: computed inside those joints' FMUs
    assert "SSP 1.0, FMI 2.0 FMUs; 4 components, 4 FMUs" in said
    assert "model exchange, rtol 1e-10" in said
    back = read_back(out)
    assert back["version"] == "1.0" and _fmi_versions(out) == {"2.0"}
    assert {c["implementation"] for c in back["components"].values()} == {"ModelExchange"}
    master = _root(out).find("ssd:System/ssd:Annotations/ssc:Annotation/titop:Master", NS)
    assert master.get("interface") == "ModelExchange" and float(master.get("tolerance")) == 1e-10
    cs, exp = read_ssp(out)
    assert (exp.interface, exp.tolerance, exp.step, exp.stop_time) == (
        "ModelExchange", 1e-10, 0.01, 0.3)  # fmt: skip
    assert len(cs.components) == 4
    # valid SSP 1.0 for independent readers
    _pyssp_valid(out, "1.0")
    assert len(read_ssd(str(out), validate=True).system.elements) == 4
    # titopfmu cosim runs it as written: model exchange at the file's tolerance
    csv_path = tmp_path / "me.csv"
    cols = ["slider.joint.m[3]", "pend1.joint.m[3]", "pend2.joint.m[3]"]
    assert main(["cosim", str(out), "--out", str(csv_path), "--record", *cols]) == 0
    assert "model exchange, rtol 1e-10" in capsys.readouterr().out
    header, data = _read_csv(csv_path)
    assert header == ["time", *cols] and data.shape == (31, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = Engine(load_model("balloon")).simulate(0.3, output_interval=0.01, record=cols,
                                                     rtol=1e-12, atol=1e-13)  # fmt: skip
    np.testing.assert_allclose(data[:, 0], ref.time, rtol=0, atol=1e-12)
    engine = np.column_stack([ref[c] for c in cols])
    assert np.ptp(engine[:, 1]) > 1e-3  # the comparison is not of constants
    assert np.max(np.abs(data[:, 1:] - engine)) < 1e-7


# -- FMI 3.0 ----------------------------------------------------------------------------------


def test_export_fmi3_ssp_is_ssp_2_and_refused_by_the_master(cache, tmp_path, capsys):
    out = tmp_path / "b3.ssp"
    assert main(["export", "balloon", "--ssp", str(out), "--fmi-version", "3",
                 "--t-final", "0.5"]) == 0  # fmt: skip
    assert "SSP 2.0, FMI 3.0 FMUs; 4 components, 4 FMUs" in capsys.readouterr().out
    back = read_back(out)
    assert back["version"] == "2.0" and _fmi_versions(out) == {"3.0"}
    assert {c["implementation"] for c in back["components"].values()} == {"CoSimulation"}
    _pyssp_valid(out, "2.0")
    # titopfmu's master runs FMI 2.0 FMUs: refused by name, before anything runs
    with pytest.raises(CosimError, match=r"component 'balloon': 'resources/TitopRigidBodyC1.fmu' "
                                         r"is an FMI 3.0 FMU.*FMI 2.0 FMUs only"):  # fmt: skip
        read_ssp(out)
    assert main(["cosim", str(out), "--out", str(tmp_path / "x.csv")]) == 2
    err = capsys.readouterr().err
    assert "is an FMI 3.0 FMU" in err and "--fmi-version 2" in err
    assert not (tmp_path / "x.csv").exists()


@pytest.mark.parametrize("interface", ["CoSimulation", "ModelExchange"])
def test_fmi3_ssp_is_the_fmi2_system_element_for_element(fmus2, fmus3, tmp_path, interface):
    """The same co-simulation written with FMI 2.0 and FMI 3.0 FMUs: read back with the arrays
    of the SSP 2.0 file expanded, both files hold the same connectors, connections and values
    (parameter files checked against the SSV 2.0 schema)."""
    cs = build_balloon_cosim(fmus2)
    tol = 1e-9 if interface == "ModelExchange" else None
    p2 = write_ssp(cs, tmp_path / "b2.ssp", stop_time=1.0, step=1e-3, interface=interface,
                   tolerance=tol)  # fmt: skip
    p3 = write_ssp(cs, tmp_path / "b3.ssp", stop_time=1.0, step=1e-3, interface=interface,
                   tolerance=tol, fmi_version=3, fmus=fmus3, parameter_files=True)  # fmt: skip
    b2, b3 = read_back(p2), read_back(p3)
    assert (b2["version"], b3["version"]) == ("1.0", "2.0")
    assert _fmi_versions(p3) == {"3.0"}
    assert b3["connections"] == b2["connections"]
    assert len(b3["connections"]) == 3 * 24 + 12
    assert list(b3["components"]) == list(b2["components"])
    for name, c2 in b2["components"].items():
        c3 = b3["components"][name]
        assert c3["source"] == c2["source"] and c3["implementation"] == interface
        assert sorted(c3["connectors"]) == sorted(c2["connectors"]), name
        assert c3["values"] == c2["values"], name
    assert b3["components"]["balloon"]["values"]["ext.W[2]"] == pytest.approx(156.96)
    assert "resources/balloon.ssv" in zipfile.ZipFile(p3).namelist()
    _pyssp_valid(p3, "2.0")
    # the rest of the file is as for FMI 2.0: default experiment and annotations
    r2, r3 = _root(p2), _root(p3)
    for path in ("ssd:DefaultExperiment", "ssd:System/ssd:Annotations"):
        assert etree.tostring(r3.find(path, NS)) == etree.tostring(r2.find(path, NS))


def _rotation(a: float, b: float) -> np.ndarray:
    ca, sa, cb, sb = np.cos(a), np.sin(a), np.cos(b), np.sin(b)
    return np.array([[ca, -sa, 0], [sa, ca, 0], [0, 0, 1]]) @ np.array(
        [[1, 0, 0], [0, cb, -sb], [0, sb, cb]])  # fmt: skip


def _arm(fmus2: Path) -> CoSimulation:
    """A revolute body driven by a spring-damper law, its parent's motion held: a matrix
    parameter that is not symmetric (P_a0b), a held array input and one held element of
    another (ext.W[2], the others at their start value)."""
    cs = CoSimulation()
    cs.add("arm", fmus2 / "TitopRevoluteBodyC0.fmu", {
        "mass": 2.5, "inertia": [[0.3, 0.01, -0.02], [0.01, 0.2, 0.03], [-0.02, 0.03, 0.25]],
        "com": [0.1, -0.4, 0.05], "axis": [0.0, 0.6, 0.8], "P_a0b": _rotation(0.4, -0.7),
        "theta0": 0.3, "theta_dot0": -0.2, "gravity": [0.3, -9.81, 0.1], "ext.inertial": True,
        "ext.point": [0.0, -0.5, 0.1], "solver.method": 4})  # fmt: skip
    cs.add("law", fmus2 / "TitopJointSpringDamper.fmu", {"k": 3.0, "d": 0.4})
    cs.connect("arm.joint.m", "law.joint.m")
    cs.connect("law.joint.tau", "arm.joint.tau")
    cs.set_input("arm.P.m", np.linspace(-0.9, 0.8, 18))
    cs.set_input("arm.ext.W[2]", 1.7)
    return cs


def test_fmi3_values_instantiate_the_fmus_as_the_fmi2_values_do(fmus2, fmus3, tmp_path):
    """The arm's values as written in the SSP 2.0 file, set on its FMI 3.0 FMU, and the
    co-simulation's values set on its FMI 2.0 FMU, give the same outputs after initialisation
    (same inputs otherwise): every value reached the element it belongs to."""
    from fmpy.fmi2 import FMU2Slave
    from fmpy.fmi3 import FMU3Slave

    cs = _arm(fmus2)
    p3 = write_ssp(cs, tmp_path / "arm3.ssp", stop_time=1.0, fmi_version=3, fmus=fmus3)
    comp = _root(p3).find("ssd:System/ssd:Elements/ssd:Component[@name='arm']", NS)
    values = {p.get("name"): (etree.QName(_typed(p, "ssv")).localname,
                              _typed(p, "ssv").get("value").split())
              for p in comp.iterfind(".//ssv:Parameter", NS)}  # fmt: skip
    assert values["ext.W"] == ("Float64", ["0.0", "1.7", "0.0", "0.0", "0.0", "0.0"])
    assert values["solver.method"] == ("Int32", ["4"])
    tau, outputs = 0.37, ["P.W", "joint.m", "body.m"]

    # FMI 3.0: the file's values as start values, then initialisation
    path3 = fmus3 / "TitopRevoluteBodyC0.fmu"
    md3 = read_model_description(str(path3))
    v3 = {v.name: v for v in md3.modelVariables}
    f3 = FMU3Slave(
        guid=md3.guid,
        unzipDirectory=extract(str(path3)),
        modelIdentifier=md3.coSimulation.modelIdentifier,
        instanceName="arm",
    )
    f3.instantiate()
    for name, (t, items) in values.items():
        vr = [v3[name].valueReference]
        if t == "Float64":
            f3.setFloat64(vr, [float(x) for x in items])
        elif t == "Int32":
            f3.setInt32(vr, [int(x) for x in items])
        else:
            f3.setBoolean(vr, [x == "true" for x in items])
    f3.enterInitializationMode(startTime=0.0)
    f3.exitInitializationMode()
    f3.setFloat64([v3["joint.tau"].valueReference], [tau])
    got3 = np.concatenate([f3.getFloat64([v3[o].valueReference], int(np.prod(v3[o].shape)))
                           for o in outputs])  # fmt: skip
    f3.terminate()
    f3.freeInstance()

    # FMI 2.0: the co-simulation's own values, by scalar name
    c = cs.components["arm"]
    md2 = c.file.md
    f2 = FMU2Slave(
        guid=md2.guid,
        unzipDirectory=c.file.directory,
        modelIdentifier=md2.coSimulation.modelIdentifier,
        instanceName="arm",
    )
    f2.instantiate()
    f2.setupExperiment(startTime=0.0)
    bound = {**c.parameters, **{v: x for (n, v), x in cs.inputs.items() if n == "arm"}}
    for name, value in bound.items():
        t, vr = c.variables[name].type, [c.vr[name]]
        if t == "Real":
            f2.setReal(vr, [float(value)])
        elif t == "Integer":
            f2.setInteger(vr, [int(value)])
        else:
            f2.setBoolean(vr, [bool(value)])
    f2.enterInitializationMode()
    f2.exitInitializationMode()
    f2.setReal([c.vr["joint.tau"]], [tau])
    names2 = [n for o in outputs for n in c.variables if re.fullmatch(re.escape(o) + r"\[\d+\]", n)]
    got2 = np.array(f2.getReal([c.vr[n] for n in names2]))
    f2.terminate()
    f2.freeInstance()

    assert got3.shape == got2.shape == (6 + 3 + 18,)
    assert np.min(np.abs(got2[:6])) > 1e-6  # the wrench depends on every value bound
    np.testing.assert_allclose(got3, got2, rtol=1e-13, atol=1e-13)


def test_fmi3_write_refusals(fmus2, fmus3, tmp_path):
    cs = _arm(fmus2)
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "out"
    for kwargs, part in (
        ({"fmi_version": 4}, "fmi_version must be 2 or 3"),
        ({"fmus": fmus3}, "fmus= names the folder of FMI 3.0 FMUs"),
        ({"fmi_version": 3, "fmus": empty}, "component 'arm': no FMI 3.0 FMU"),
        ({"fmi_version": 3, "fmus": fmus2}, "TitopRevoluteBodyC0.fmu' is an FMI 2.0 FMU, not "
                                            "FMI 3.0"),
    ):  # fmt: skip
        with pytest.raises(CosimError, match=re.escape(part)):
            write_ssp(cs, out / "x.ssp", **kwargs)
    # a link between parts of two arrays has no whole-array form
    part = CoSimulation()
    part.add("arm", fmus2 / "TitopRevoluteBodyC0.fmu", {"theta0": 0.2})
    part.add("law", fmus2 / "TitopJointSpringDamper.fmu", {"k": 1.0})
    part.connect("arm.joint.m[3]", "law.joint.m[1]")
    with pytest.raises(CosimError, match=r"connection arm\.joint\.m\[3\] -> law\.joint\.m\[1\]: "
                                         r"an SSP 2\.0 file of FMI 3\.0 FMUs connects whole "
                                         r"arrays"):  # fmt: skip
        write_ssp(part, out / "x.ssp", fmi_version=3, fmus=fmus3)
    assert not out.exists()  # nothing written
    # the FMI 2.0 file of the same system is written as before
    assert write_ssp(part, out / "x.ssp").is_file()


def test_the_master_refuses_fmi3_fmus_by_name(fmus3):
    with pytest.raises(CosimError, match=r"TitopRevoluteBodyC0\.fmu' is an FMI 3\.0 FMU: "
                                         r"titopfmu's master runs FMI 2\.0 FMUs"):  # fmt: skip
        CoSimulation().add("arm", fmus3 / "TitopRevoluteBodyC0.fmu")


def test_export_option_refusals(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for argv, part in (
        (["--fmu", "x.fmu", "--implementation", "modelexchange"], "--implementation applies to "
                                                                   "--ssp"),
        (["--fmu", "x.fmu", "--rtol", "1e-6"], "--rtol applies to --ssp"),
        (["--ssp", "x.ssp", "--rtol", "1e-6"], "--rtol applies to --implementation "
                                               "modelexchange"),
    ):  # fmt: skip
        assert main(["export", "balloon", *argv]) == 2
        assert part in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
