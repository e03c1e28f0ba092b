"""What tools that rebuild or inspect an FMU read (issue 31, point 3): the compile units of
``sources/``, the log categories and the units of the model-exchange states.

* FMI 2.0 lists the compile units in ``<SourceFiles>`` of ``<ModelExchange>`` and
  ``<CoSimulation>``, FMI 3.0 in ``sources/buildDescription.xml`` (valid against fmpy's copy of
  the FMI 3.0 schema); block FMUs, whole-model FMUs and linear-model FMUs each their own units.
* fmpy rebuilds each FMU from its sources alone (``fmpy compile``: CMake on the units listed),
  and the rebuilt FMU simulates the same numbers as the original (co-simulation and model
  exchange).
* ``<LogCategories>`` declares exactly the categories the C sources pass to the host's logger.
* The states of model exchange carry their declared units, their derivatives the units per
  second; RigidBody's ``twist`` has m/s and rad/s per FMI 2.0 scalar.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path
from xml.etree import ElementTree as ET

import numpy as np
import pytest

fmpy = pytest.importorskip("fmpy")
from fmpy import extract, read_model_description, simulate_fmu  # noqa: E402
from fmpy.validation import validate_fmu  # noqa: E402

from titopfmu import Constant, Ground, RevoluteBody, System, export_fmu  # noqa: E402
from titopfmu.fmi.catalog import FMU_TYPES, all_variants  # noqa: E402
from titopfmu.fmi.native.build import build_native  # noqa: E402
from titopfmu.fmi.native.generate import LOG_CATEGORIES, describe, rate_unit  # noqa: E402
from titopfmu.linear import LinearModel  # noqa: E402

NATIVE = Path(__file__).resolve().parent.parent / "titopfmu" / "fmi" / "native"
BUILD_XSD = Path(fmpy.__file__).parent / "schema" / "fmi3" / "fmi3BuildDescription.xsd"
CORE_UNITS = ["titop_double.c", "titop_complex.c"]
WRAPPER = {2: "fmi2_block.c", 3: "fmi3_block.c"}

#: a pendulum: the revolute body's parameters (arrays by base name)
PENDULUM = {"mass": 1.2, "com": [0.0, -0.4, 0.0], "theta0": 0.7, "theta_dot0": -0.3,
            "gravity": [0.0, -9.81, 0.0], "solver.method": 4}  # fmt: skip


def pendulum_system() -> System:
    """Ground and a double pendulum of revolute bodies, each driven by a Constant torque: a
    whole-model FMU."""
    s = System("pend")
    s.add(Ground("g", children={"A": (0.0, 0.0, 0.0)}))
    s.add(RevoluteBody("p", 1.0, np.diag([0.02, 0.01, 0.02]), axis=(0, 0, 1),
                       com=(0.25, 0.0, 0.0), theta0=0.4, theta_dot0=0.5,
                       children={"T": (0.5, 0.0, 0.0)}, gravity=(0.0, -9.81, 0.0)))  # fmt: skip
    s.add(RevoluteBody("q", 0.5, np.diag([0.01, 0.005, 0.01]), axis=(0, 0, 1),
                       com=(0.2, 0.0, 0.0), theta0=-0.3, gravity=(0.0, -9.81, 0.0)))  # fmt: skip
    s.add(Constant("tau", 0.1), Constant("tau2", -0.05))
    s.connect("g.A", "p.P")
    s.connect("p.T", "q.P")
    s.connect("tau.y", "p.joint.tau")
    s.connect("tau2.y", "q.joint.tau")
    return s


@pytest.fixture(scope="module")
def block(tmp_path_factory):
    out = tmp_path_factory.mktemp("block_sources")
    return {v: build_native(FMU_TYPES["revolute_body"], 0, out / f"v{v}", win64=False,
                            fmi_version=v) for v in (2, 3)}  # fmt: skip


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    out = tmp_path_factory.mktemp("model_sources")
    signals = ["p.joint.m", "q.joint.m"]
    return {v: export_fmu(pendulum_system(), out / f"pend{v}.fmu", fmi_version=v,
                          signals=signals, win64=False) for v in (2, 3)}  # fmt: skip


@pytest.fixture(scope="module")
def linear(tmp_path_factory):
    out = tmp_path_factory.mktemp("linear_sources")
    A = np.array([[0.0, 1.0], [-4.0, -0.4]])
    lm = LinearModel(A, np.array([[0.0], [1.0]]), np.eye(2), np.zeros((2, 1)), ["q", "qd"],
                     ["u"], ["yq", "yqd"], units={"q": "rad", "u": "N.m"})  # fmt: skip
    return {v: lm.to_fmu(out / f"lin{v}.fmu", win64=False, fmi_version=v) for v in (2, 3)}


def compile_units(fmu: Path) -> list[str]:
    """The compile units fmpy reads (FMI 2.0 SourceFiles, FMI 3.0 buildDescription.xml)."""
    md = read_model_description(str(fmu))
    (config,) = md.buildConfigurations
    (files,) = config.sourceFileSets
    assert config.modelIdentifier == md.coSimulation.modelIdentifier
    return files.sourceFiles


def check_sources(fmu: Path, version: int, units: list[str]) -> None:
    """Valid FMU; the compile units ``units`` listed (FMI 2.0: the same under both interfaces;
    FMI 3.0: a schema-valid buildDescription.xml, C99, sources/ the include directory), each in
    sources/; the log categories declared."""
    assert validate_fmu(str(fmu)) == []
    assert compile_units(fmu) == units
    with zipfile.ZipFile(fmu) as z:
        names = set(z.namelist())
        root = ET.fromstring(z.read("modelDescription.xml"))
        build = z.read("sources/buildDescription.xml") if version == 3 else None
    assert {f"sources/{u}" for u in units} <= names
    if version == 2:
        for interface in ("ModelExchange", "CoSimulation"):
            listed = [f.get("name") for f in root.findall(f"{interface}/SourceFiles/File")]
            assert listed == units, interface
        assert "sources/buildDescription.xml" not in names
    else:
        from lxml import etree

        schema = etree.XMLSchema(file=str(BUILD_XSD))
        doc = etree.fromstring(build)
        assert schema.validate(doc), schema.error_log
        (fs,) = doc.findall("BuildConfiguration/SourceFileSet")
        assert fs.get("language") == "C99"
        assert [d.get("name") for d in fs.findall("IncludeDirectory")] == ["."]
        assert root.find("ModelExchange/SourceFiles") is None  # not in FMI 3.0
    cats = {c.get("name"): c.get("description") for c in root.findall("LogCategories/Category")}
    assert cats == dict(LOG_CATEGORIES) and all(cats.values())


def rebuilt(fmu: Path, tmp: Path, monkeypatch) -> Path:
    """``fmu`` with its binaries removed and rebuilt by fmpy from ``sources/`` alone (the
    compile units it lists), as ``fmpy compile`` does."""
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not installed: fmpy compiles FMU sources with CMake")
    monkeypatch.setenv("CMAKE_BUILD_PARALLEL_LEVEL", "2")
    d = tmp / f"{fmu.stem}_src"
    extract(str(fmu), unzipdir=str(d))
    shutil.rmtree(d / "binaries")
    out = tmp / f"{fmu.stem}_rebuilt.fmu"
    try:
        from fmpy.build import build_platform_binary
    except ImportError:  # fmpy before 0.3.22: the FMU itself, compiled in place
        from fmpy.util import compile_platform_binary, create_zip_archive

        create_zip_archive(str(out), str(d))
        compile_platform_binary(str(out))
        return out
    from fmpy.util import create_zip_archive

    build_platform_binary(d.resolve())
    assert list((d / "binaries").rglob("*.so")), "fmpy built no binary"
    create_zip_archive(str(out), str(d))
    return out


def run(fmu: Path, kind: str, start: dict | None = None) -> np.ndarray:
    res = simulate_fmu(str(fmu), fmi_type=kind, start_values=start or {}, stop_time=1.0,
                       output_interval=0.01, step_size=1e-3 if kind == "CoSimulation" else None,
                       relative_tolerance=1e-9)  # fmt: skip
    return np.column_stack([res[n] for n in res.dtype.names])


def fmi2_scalars(values: dict) -> dict:
    """Array start values as FMI 2.0 scalars (``com`` -> ``com[1]``, ...)."""
    out = {}
    for k, v in values.items():
        if isinstance(v, list):
            out.update({f"{k}[{i + 1}]": x for i, x in enumerate(v)})
        else:
            out[k] = v
    return out


def same_numbers(original: Path, again: Path, start: dict | None = None) -> None:
    for kind in ("CoSimulation", "ModelExchange"):
        a, b = run(original, kind, start), run(again, kind, start)
        assert a.shape == b.shape
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12, err_msg=kind)
        assert np.ptp(a[:, 1:], axis=0).max() > 0.1  # it moved


# -- the compile units -------------------------------------------------------------------------


@pytest.mark.parametrize("version", [2, 3])
def test_block_fmus_list_their_compile_units(block, version):
    check_sources(block[version], version, [WRAPPER[version], "fmu_block.c", *CORE_UNITS])


@pytest.mark.parametrize("version", [2, 3])
def test_model_fmus_list_their_compile_units(model, version):
    check_sources(model[version], version,
                  [WRAPPER[version], "fmu_model.c", "ode.c", *CORE_UNITS])  # fmt: skip


@pytest.mark.parametrize("version", [2, 3])
def test_linear_fmus_list_their_compile_units(linear, version):
    check_sources(linear[version], version,
                  [WRAPPER[version], "fmi2_state_space.c", "fmu.c", "expm.c"])  # fmt: skip


@pytest.mark.parametrize("version", [2, 3])
def test_fmpy_rebuilds_a_block_fmu_that_simulates_the_same(block, version, tmp_path,
                                                           monkeypatch):  # fmt: skip
    again = rebuilt(block[version], tmp_path, monkeypatch)
    start = PENDULUM if version == 3 else fmi2_scalars(PENDULUM)
    same_numbers(block[version], again, start)


def test_fmpy_rebuilds_a_model_fmu_that_simulates_the_same(model, tmp_path, monkeypatch):
    same_numbers(model[2], rebuilt(model[2], tmp_path, monkeypatch))


def test_fmpy_rebuilds_a_linear_fmu_that_simulates_the_same(linear, tmp_path, monkeypatch):
    same_numbers(linear[2], rebuilt(linear[2], tmp_path, monkeypatch), {"q": 0.5})


# -- log categories ----------------------------------------------------------------------------


def test_the_log_categories_are_those_the_c_sources_pass_to_the_logger():
    """Every category string in the C layer and the FMI functions (fmu.c maps a message's
    status to one; fmi3_block.c logs a refused scheduled execution) is declared, and nothing
    else."""
    used = set()
    for f in ("fmu.c", "fmi2_block.c", "fmi3_block.c", "fmu_block.c", "fmu_model.c",
              "fmi2_state_space.c"):  # fmt: skip
        used |= set(re.findall(r'"(log[A-Z][A-Za-z]*)"', (NATIVE / f).read_text()))
    assert used == {name for name, _ in LOG_CATEGORIES}


# -- units of the model-exchange states --------------------------------------------------------


def test_model_exchange_states_have_their_declared_units(block, model):
    v2 = {x.name: x for x in read_model_description(str(block[2])).modelVariables}
    v3 = {x.name: x for x in read_model_description(str(block[3])).modelVariables}
    for v in (v2, v3):
        assert v["state.q"].unit == "rad" and v["state.qd"].unit == "rad/s"
        assert v["der(state.q)"].unit == "rad/s" and v["der(state.qd)"].unit == "rad/s2"
    vm = {x.name: x for x in read_model_description(str(model[2])).modelVariables}
    assert vm["p.state.q"].unit == "rad" and vm["der(p.state.qd)"].unit == "rad/s2"


@pytest.mark.parametrize("version", [2, 3])
def test_every_fmu_types_states_carry_units(version):
    """Every variant's states: the block type's declared unit (a quaternion component none),
    the derivative that unit per second (none when it is not a unit of the FMUs)."""
    seen = set()
    for ftype, n in all_variants():
        declared = {s.name: s.unit for s in ftype.declaration.states}
        fmu = describe(ftype, n, fmi_version=version)
        states = {x.name[6:]: x for x in fmu.variables if x.name.startswith("state.")}
        ders = {x.name[10:-1]: x for x in fmu.variables if x.name.startswith("der(state.")}
        assert set(states) == set(ders) == set(declared) or not declared
        for s, x in states.items():
            assert x.unit == declared[s], (ftype.key, s)
            assert ders[s].unit == rate_unit(declared[s]), (ftype.key, s)
            seen.add((declared[s], ders[s].unit))
        if version == 3:  # a scalar variable each: its unit in the XML
            root = ET.fromstring(fmu.model_description())
            xml = {e.get("name"): e.get("unit") for e in root.find("ModelVariables")}
            assert all(xml[f"state.{s}"] == (declared[s] or None) for s in states)
    assert {("m", "m/s"), ("rad", "rad/s"), ("m/s", "m/s2"), ("rad/s", "rad/s2"),
            ("", "")} <= seen  # fmt: skip


def test_rigid_body_twist_has_units():
    """FMI 2.0: twist[1..3] in m/s, twist[4..6] in rad/s; FMI 3.0: one array, no single unit
    (its description gives both)."""
    f2 = describe(FMU_TYPES["rigid_body"], 0, fmi_version=2)
    units = [x.unit for x in f2.variables if x.name.startswith("twist[")]
    assert units == ["m/s"] * 3 + ["rad/s"] * 3
    root = ET.fromstring(f2.model_description())
    xml = {e.get("name"): e[0].get("unit") for e in root.find("ModelVariables")}
    assert [xml[f"twist[{i}]"] for i in range(1, 7)] == units
    root3 = ET.fromstring(describe(FMU_TYPES["rigid_body"], 0, fmi_version=3).model_description())
    (twist,) = [e for e in root3.find("ModelVariables") if e.get("name") == "twist"]
    assert twist.get("unit") is None and "m/s" in twist.get("description")
