"""Each block type is declared once (titopfmu.blocks.declarations); everything else derives from it.

The checks compare what the other layers offer (constructor signatures, the model-file schema,
the FMU variables, campaign names, the binding of a System onto FMUs, linear-model units, the
generated files) with the declarations, so a type added or changed in one place shows up in all.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import titopfmu
from titopfmu.blocks import BLOCK_CLASSES
from titopfmu.blocks.declarations import BLOCK_TYPES, OLD_FMU_NAMES, own_law_parameters
from titopfmu.fmi.catalog import FMU_TYPES, MAX_CHILDREN
from titopfmu.fmi.native.generate import SOLVER_PARAMS, describe
from titopfmu.linear.units import units_of
from titopfmu.master.from_system import system_mapping
from titopfmu.modelfile import example_path, generated_schema, load, schema, schema_path
from titopfmu.parameters import parameter_names, with_parameters

ROOT = Path(__file__).resolve().parent.parent
I3 = np.diag([0.1, 0.2, 0.3])


def test_constructors_take_the_declared_parameters_in_order():
    for name, decl in BLOCK_TYPES.items():
        cls = BLOCK_CLASSES[name]
        if name == "TimeFunction":  # Python takes a callable f; the file an expression
            continue
        params = list(inspect.signature(cls).parameters)
        assert params == ["name", *decl.names], name
        assert cls.kind == decl.key


def test_the_schema_lists_every_declared_parameter_and_nothing_else():
    s = schema()
    for name, decl in BLOCK_TYPES.items():
        props = s["$defs"][name]["properties"]
        assert set(props) - {"name", "type"} == set(decl.names), name
        required = set(s["$defs"][name]["required"]) - {"name", "type"}
        assert required == {p.name for p in decl.parameters if p.required}, name
    assert s["properties"]["blocks"]["items"]["properties"]["type"]["enum"] == list(BLOCK_TYPES)


def test_the_generated_files_are_up_to_date():
    """docs/blocks.md, the model-file table and the shipped schema are the declarations'."""
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "generate_declared.py"),
                        "--check"], capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(schema_path().read_text("utf-8")) == schema()


@pytest.mark.parametrize("key", sorted(FMU_TYPES))
def test_fmu_parameters_have_the_declared_names_units_and_defaults(key):
    """Every FMI parameter of every variant is a declared parameter by the same name (or a
    child port's point, the external wrench's point and frame, a solver setting; a forward
    1-dof joint's own law: law.enabled and the JointSpringDamper's as law.NAME)."""
    ftype = FMU_TYPES[key]
    decl = ftype.declaration
    declared = {p.name: p for p in decl.fmu_parameters()}
    if decl.fmu.law:
        law = BLOCK_TYPES["JointSpringDamper"].fmu_parameters()
        assert [p.name for p in own_law_parameters()] == ["law.enabled"] + [
            f"law.{p.name}" for p in law]
        for p, q in zip(own_law_parameters()[1:], law, strict=True):
            assert (p.unit, p.default, p.check, p.role) == (q.unit, q.default, q.check, q.role)
        declared |= {p.name: p for p in own_law_parameters()}
    solver = {p.name for p in SOLVER_PARAMS}
    for n in ftype.variants:
        if n > MAX_CHILDREN:
            continue
        fmu = describe(ftype, n)
        names = {v.name.split("[")[0] for v in fmu.variables if v.causality == 0}
        structural = {f"C{j}.point" for j in range(1, n + 1)} | {"ext.point", "ext.inertial"}
        assert names - solver - structural == set(declared) - {"children", "external"}, key
        for v in fmu.variables:
            p = declared.get(v.name.split("[")[0])
            if p is not None and v.causality == 0:
                k = int(v.name.split("[")[1].rstrip("]")) - 1 if p.units else 0
                assert v.unit == (p.units[k] if p.units else p.unit), v.name
                assert v.description.startswith(p.description[:20]), v.name


def test_one_name_end_to_end_model_file_campaign_fmu():
    """``pend1.theta0`` is the model file's key, the campaign's name and the FMU's parameter."""
    system = load(example_path("balloon"))
    names = parameter_names(system, ["pend1"])
    assert "pend1.theta0" in names and "pend1.axis[3]" in names
    changed = with_parameters(system, {"pend1.theta0": 0.25})
    assert changed.blocks["pend1"].theta0 == 0.25
    params = system_mapping(changed).parameters["pend1"]
    assert params["theta0"] == 0.25
    decl = BLOCK_TYPES["RevoluteBody"]
    for block in ("pend1", "pend2", "balloon", "slider"):
        b = system.blocks[block]
        bound = set(system_mapping(system).parameters[block])
        declared = {p.name for p in b.declaration.fmu_parameters() if not p.structural}
        assert declared <= bound, block
        keys = {n.split(".")[1].split("[")[0] for n in parameter_names(system, [block])}
        assert keys <= set(b.declaration.names), block
    assert decl.parameter("theta0").unit == "rad"


def test_every_declared_type_round_trips_through_its_model_file_entry():
    blocks = [
        titopfmu.RigidBody("r", 2.0, I3, position=[1, 2, 3], euler=[0.1, 0.2, 0.3],
                           twist=[0, 0, 0, 0.1, 0, 0], children={"c": [0, 0, 1]}),
        titopfmu.SphericalBody("s", 1.0, I3, euler0=[0.1, -0.2, 0.3], omega0=[0, 1, 0]),
        titopfmu.FreeBody("f", 1.0, I3, position0=[0, 0, 1], velocity0=[1, 0, 0]),
        titopfmu.PrismaticBodyInverse("p", 1.0, I3, axis=[0, 1, 1]),
        titopfmu.Ground("g", children={"a": [1, 0, 0]}, euler=[0, 0, 1]),
        titopfmu.LoopClosure("l", np.eye(6)),
        titopfmu.JointSpringDamper("k", 3.0, 0.5, 0.1),
    ]  # fmt: skip
    from titopfmu.assembly.document import block_to_dict

    for b in blocks:
        d = block_to_dict(b)
        kwargs = {k: v for k, v in d.items() if k not in ("name", "type")}
        again = block_to_dict(BLOCK_CLASSES[d["type"]](b.name, **kwargs))
        assert again.keys() == d.keys(), b.name
        for k, v in d.items():  # to the last bit but a unit quaternion's renormalisation
            if isinstance(v, (str, dict)):
                assert again[k] == v, (b.name, k)
            else:
                np.testing.assert_allclose(again[k], v, rtol=4e-16, atol=0, err_msg=k)


def test_old_fmu_names_are_mapped_to_the_declared_ones():
    assert OLD_FMU_NAMES["revolute_body"]["joint.q0"] == "theta0"
    assert OLD_FMU_NAMES["prismatic_body"]["joint.qd0"] == "x_dot0"
    assert OLD_FMU_NAMES["rigid_body"]["twist0"] == "twist"
    assert OLD_FMU_NAMES["free_body"]["joint.velocity0"] == "velocity0"
    for key, old in OLD_FMU_NAMES.items():
        names = FMU_TYPES[key].declaration.names
        assert set(old.values()) <= set(names), key


def test_linear_model_units_come_from_the_declared_ports_and_states():
    s = titopfmu.System("s")
    s.add(titopfmu.Ground("g", children={"o": [0, 0, 0]}),
          titopfmu.SphericalBody("ball", 1.0, I3, com=[0, 0, -1]))  # fmt: skip
    assert units_of(s, "ball.joint.tau") == ["N.m"] * 3
    assert units_of(s, "ball.joint.m[4]") == ["rad/s"]
    assert units_of(s, "ball.state.wx") == ["rad/s"]
    s2 = titopfmu.System("p")
    s2.add(titopfmu.PrismaticBody("slide", 1.0, I3))
    assert units_of(s2, "slide.state.q") == ["m"]
    assert units_of(s2, "slide.joint.m") == ["m/s2", "m/s", "m"]


def test_a_new_declaration_reaches_the_schema_and_the_docs(monkeypatch):
    """Adding a type is its declaration (and its equations and tests): the schema and the
    documentation follow without another edit."""
    import titopfmu.blocks.declarations as d

    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import generate_declared
    finally:
        sys.path.pop(0)
    new = replace(d.REVOLUTE_BODY, name="GearedRevoluteBody", key="geared_revolute_body",
                  parameters=d.REVOLUTE_BODY.parameters + (d.Parameter(
                      "gear_ratio", (), "", 1.0, "gear ratio n of the rotor", "scalar"),))
    monkeypatch.setitem(d.BLOCK_TYPES, new.name, new)
    base = json.loads(schema_path().read_text("utf-8"))
    s = generated_schema(base)
    assert "gear_ratio" in s["$defs"]["GearedRevoluteBody"]["properties"]
    assert "GearedRevoluteBody" in s["properties"]["blocks"]["items"]["properties"]["type"]["enum"]
    assert "| `gear_ratio` |" in generate_declared.blocks_md()


def test_old_fmu_parameter_names_still_work_with_a_deprecation_warning():
    """An SSP file or a script of titopfmu 0.1 that sets ``joint.q0`` keeps working (the real
    FMU, loaded by the master), with a warning naming the new name."""
    from titopfmu.fmi.cache import cached_variants
    from titopfmu.master import CoSimulation

    folder = cached_variants([("revolute_body", 0)], notice=lambda message: None)
    cs = CoSimulation()
    with pytest.warns(DeprecationWarning, match="'joint.q0' is now named 'theta0'"):
        cs.add("arm", folder / "TitopRevoluteBodyC0.fmu",
               {"joint.q0": 0.3, "joint.axis": [1.0, 0.0, 0.0]})  # fmt: skip
    p = cs.components["arm"].parameters
    assert p["theta0"] == 0.3 and p["axis[1]"] == 1.0 and p["axis[3]"] == 0.0
    with pytest.raises(Exception, match="no variable 'joint.nope'"):
        cs.add("arm2", folder / "TitopRevoluteBodyC0.fmu", {"joint.nope": 1.0})


def test_a_users_subclass_keeps_its_own_signature_and_warnings_point_at_the_caller():
    class Arm(titopfmu.RevoluteBody):
        def __init__(self, name: str, length: float) -> None:
            super().__init__(name, 1.0, np.diag([0.01, 0.1, 0.1]), com=[length, 0.0, 0.0])

    assert list(inspect.signature(Arm).parameters) == ["name", "length"]
    assert list(inspect.signature(titopfmu.RevoluteBodyInverse).parameters)[:3] == [
        "name", "mass", "inertia"]  # fmt: skip
    assert Arm("a", 2.0).com.tolist() == [2.0, 0.0, 0.0]
    with pytest.warns(titopfmu.InertiaWarning) as record:
        titopfmu.RevoluteBodyInverse("b", 1.0, np.diag([3.0, 5.0, 17.0]))  # violates I1+I2>=I3
    assert record[0].filename == __file__
