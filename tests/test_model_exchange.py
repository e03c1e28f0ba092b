"""The master's output grid, its refusal of unconnected inputs, and its model-exchange mode.

Real FMUs of ``titopfmu build`` loaded with fmpy. The output grid: samples exactly at
``start + k * output_interval`` in every mode, a fixed step that does not divide the interval
refused before any FMU is instantiated (the 4 ms step and 10 ms interval that once sampled every
8 ms). Unconnected inputs: refused with their names unless held by ``set_input``. Model
exchange: the balloon of seed 004 and a four-bar closed by a loop-closure FMU against the
in-process engine (an independent integration of the C core's equations) at tight tolerances;
the loop equations hold on the FMUs' own outputs at every mass ratio; an FMU without a
model-exchange interface is refused by name.
"""

from __future__ import annotations

import re
import shutil
import warnings
import zipfile

import numpy as np
import pytest

from titopfmu import InertiaWarning
from titopfmu.examples.balloon import (
    COLUMNS,
    COSIM_RECORD,
    balloon_columns_from_cosim,
    build_balloon_cosim,
    run_balloon,
)
from titopfmu.fmi.build import build_fmus
from titopfmu.master import CosimError, CoSimulation, ModelExchange

pytestmark = pytest.mark.filterwarnings("ignore:.*triangle inequality")


@pytest.fixture(scope="module")
def fmu_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("fmus_me")
    build_fmus(out, types=["rigid_body", "prismatic_body", "revolute_body", "joint_spring_damper",
                           "ground", "loop_closure"], max_children=2)  # fmt: skip
    return out


def engine_balloon(t_end: float, interval: float):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        return run_balloon(t_end, interval, rtol=1e-12, atol=1e-13)


def errors_at_equal_times(result, ref) -> dict[str, float]:
    cols = balloon_columns_from_cosim(result)
    np.testing.assert_array_equal(cols["time"], ref["time"])  # the same grid, exactly
    return {k: float(np.max(np.abs(cols[k] - ref[k]))) for k in COLUMNS}


def not_instantiated(cs: CoSimulation) -> bool:
    return all(c.slave is None for c in cs.components.values())


# -- output grid ----------------------------------------------------------------------------


def test_a_step_that_does_not_divide_the_output_interval_is_refused_before_any_fmu(fmu_dir):
    cs = build_balloon_cosim(fmu_dir)
    with pytest.raises(CosimError, match=r"step 0\.004 s does not divide the output interval "
                                         r"0\.01 s \(2\.5 steps\)"):  # fmt: skip
        cs.simulate(0.1, 4e-3, record=COSIM_RECORD, output_interval=0.01)
    assert not_instantiated(cs)
    for kwargs, match in (({"output_interval": 5e-4}, "does not divide"),
                          ({"output_interval": 0.0}, "must be positive"),
                          ({"output_interval": float("nan")}, "must be positive"),
                          ({"mode": "sc"}, "unknown mode")):  # fmt: skip
        with pytest.raises(CosimError, match=match):
            cs.simulate(0.1, 1e-3, **kwargs)
        assert not_instantiated(cs)


def test_fixed_steps_sample_exactly_on_the_output_grid(fmu_dir):
    """4 ms steps, 20 ms interval: samples at k * 20 ms exactly, each the value of the run
    sampled at every step at that time; errors against the engine at equal times."""
    every = build_balloon_cosim(fmu_dir).simulate(0.2, 4e-3, record=COSIM_RECORD)
    grid = build_balloon_cosim(fmu_dir).simulate(0.2, 4e-3, record=COSIM_RECORD,
                                                 output_interval=0.02)  # fmt: skip
    assert grid.time == [0.02 * k for k in range(11)]
    np.testing.assert_allclose(every.time, 4e-3 * np.arange(51), rtol=0, atol=1e-15)
    picked = [round(t / 4e-3) for t in grid.time]
    for col in grid.columns:
        np.testing.assert_array_equal(grid[col], every[col][picked])
    err = errors_at_equal_times(grid, engine_balloon(0.2, 0.02))
    assert max(err.values()) < 1e-2, err


def test_variable_steps_land_on_every_output_time(fmu_dir):
    cs = build_balloon_cosim(fmu_dir)
    res = cs.simulate(0.1, 1e-3, record=COSIM_RECORD, output_interval=0.01, step_tolerance=1e-6)
    assert res.time == [0.01 * k for k in range(11)]
    err = errors_at_equal_times(res, engine_balloon(0.1, 0.01))
    assert max(err.values()) < 1e-4, err


# -- unconnected inputs -----------------------------------------------------------------------


def test_unconnected_inputs_are_refused_by_name_unless_held(fmu_dir):
    cs = CoSimulation()
    cs.add("root", fmu_dir / "TitopRigidBodyC2.fmu", {"gravity": [0, 0, 0]})
    cs.add("arm", fmu_dir / "TitopRevoluteBodyC0.fmu", {"com": [0.3, 0, 0], "gravity": [0, 0, 0]})
    cs.add("law", fmu_dir / "TitopJointSpringDamper.fmu", {"k": 2.0})
    cs.connect("root.C1", "arm.P")
    cs.connect("law.joint.tau", "arm.joint.tau")  # the law's own input joint.m left free
    expected = ("unconnected input(s) 'root': C2.W[1..6]; 'law': joint.m[1..3]: every input "
                "must be connected or held at a value, e.g. set_input('root.C2.W', [0.0] * 6)")
    for mode in ("cs", "me"):
        with pytest.raises(CosimError) as info:
            cs.simulate(0.01, 1e-3, mode=mode)
        assert str(info.value).startswith(expected), str(info.value)
        assert not_instantiated(cs)
    assert cs.unconnected_inputs()[0] == ("root", "C2.W[1]")
    cs.set_input("root.C2.W", [0.0, 0.0, 0.0, 0.0, 0.0, 0.5])  # a torque on the free port
    cs.connect("arm.joint.m", "law.joint.m")
    assert cs.unconnected_inputs() == []  # a body's external wrench ext.W may stay free
    res = cs.simulate(0.01, 1e-3, record=["root.body.m[6]", "root.ext.W"])
    assert res["root.body.m[6]"][0] > 0.0 and not res["root.ext.W[1]"].any()


# -- model exchange ---------------------------------------------------------------------------


def test_balloon_in_model_exchange_equals_the_engine(fmu_dir):
    """Seed 004's balloon, 3 s (20 s in scripts/cosim_convergence.py): within 1e-7 (m, rad)
    of the in-process engine at equal times, every loop solved in one sweep whose residual on
    the FMUs' outputs is rounding."""
    T = 3.0
    cs = build_balloon_cosim(fmu_dir)
    me = ModelExchange(cs, rtol=1e-12, atol=1e-13)
    res = me.simulate(T, output_interval=0.01, record=COSIM_RECORD)
    assert res.time == [min(0.01 * k, T) for k in range(301)]
    err = errors_at_equal_times(res, engine_balloon(T, 0.01))
    assert max(err.values()) < 1e-7, err
    assert me.stats.iterations == me.stats.solves  # one sweep each
    assert me.stats.max_residual < 1e-12
    assert me.stats.steps > 10 and me.stats.events == 1  # initialisation only: no events
    assert all(c.slave is None for c in cs.components.values())  # freed
    # the same through CoSimulation.simulate, and its tolerances are the integrator's
    loose = build_balloon_cosim(fmu_dir).simulate(T, record=COSIM_RECORD, output_interval=0.01,
                                                  mode="me", rtol=1e-6, atol=1e-8)  # fmt: skip
    err_loose = max(errors_at_equal_times(loose, engine_balloon(T, 0.01)).values())
    assert 10 * max(err.values()) < err_loose < 1e-3


def test_a_four_bar_closed_by_a_loop_closure_in_model_exchange_equals_the_engine(fmu_dir):
    from test_master import BARS, four_bar_cosim, four_bar_engine

    ref = four_bar_engine(0.5)
    res = four_bar_cosim(fmu_dir).simulate(0.5, record=[f"{n}.joint.m[3]" for n in BARS],
                                           output_interval=0.01, mode="me", rtol=1e-12,
                                           atol=1e-13)  # fmt: skip
    assert np.ptp(ref["crank"]) > 0.2  # the mechanism falls under gravity
    err = max(float(np.max(np.abs(res[f"{n}.joint.m[3]"] - ref[n]))) for n in BARS)
    assert err < 1e-9, err


@pytest.mark.parametrize("ratio", [1e4, 1e-4])
def test_model_exchange_loop_holds_at_extreme_mass_ratios(fmu_dir, ratio):
    """A root carrying a child 1e4 times heavier or lighter: at most two sweeps per
    evaluation, the loop equations satisfied by the FMUs' outputs to 1e-10 (relative)."""
    from test_master import two_bodies

    me = ModelExchange(two_bodies(fmu_dir, ratio), rtol=1e-10, atol=1e-12)
    res = me.simulate(0.05, output_interval=0.01, record=["child.joint.m[3]"])
    assert max(res.iterations) <= 2 and me.stats.iterations <= 2 * me.stats.solves
    assert me.stats.max_residual < 1e-10
    assert np.all(np.diff(res["child.joint.m[3]"]) > 0)  # the joint turns (qd0 = 1 rad/s)


def _edited(src, dst, pattern: str, replacement: str):
    """A copy of the FMU file ``src`` whose model description has ``pattern`` replaced."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "modelDescription.xml":
                text, n = re.subn(pattern, replacement, data.decode("utf-8"), flags=re.S)
                assert n, pattern
                data = text.encode("utf-8")
            zout.writestr(item, data)
    return dst


def _without_model_exchange(src, dst):
    # the element, empty or with children (its <SourceFiles>)
    return _edited(src, dst, r"<ModelExchange\b[^>]*?(/>|>.*?</ModelExchange>)", "")


def test_an_fmu_without_directional_derivatives_gets_its_jacobian_by_perturbation(fmu_dir,
                                                                                  tmp_path):
    """The same child, once declaring no directional derivatives: the master measures its
    interface Jacobian through set/get instead, with the same results."""
    from test_master import two_bodies

    plain = _edited(fmu_dir / "TitopRevoluteBodyC0.fmu", tmp_path / "NoDerivatives.fmu",
                    r'(<ModelExchange[^>]*providesDirectionalDerivative=)"true"', r'\1"false"')
    runs = []
    for child in (None, plain):
        cs = two_bodies(fmu_dir, 3.0)
        if child is not None:
            params = cs.components["child"].parameters
            del cs.components["child"]
            cs.add("child", child, {})
            cs.components["child"].parameters = params
        me = ModelExchange(cs, rtol=1e-10, atol=1e-12)
        runs.append(me.simulate(0.2, output_interval=0.02, record=["child.joint.m[3]"]))
        assert me.stats.max_residual < 1e-12
    assert not cs.components["child"].file.md.modelExchange.providesDirectionalDerivative
    np.testing.assert_allclose(runs[1]["child.joint.m[3]"], runs[0]["child.joint.m[3]"],
                               rtol=0, atol=1e-9)  # fmt: skip


def test_model_exchange_refuses_an_fmu_without_it_and_bad_options(fmu_dir, tmp_path):
    cs_only = _without_model_exchange(fmu_dir / "TitopRevoluteBodyC0.fmu",
                                      tmp_path / "CsOnlyRevolute.fmu")  # fmt: skip
    cs = CoSimulation()
    cs.add("root", fmu_dir / "TitopRigidBodyC1.fmu")
    cs.add("arm", cs_only, {"mass": 1.0, "com": [0.3, 0.0, 0.0]})
    cs.connect("root.C1", "arm.P")
    cs.set_input("arm.joint.tau", 0.0)
    with pytest.raises(CosimError, match=r"component 'arm': the FMU 'CsOnlyRevolute.fmu' has no "
                                         r"model-exchange interface"):  # fmt: skip
        cs.simulate(0.01, mode="me")
    assert not_instantiated(cs)
    cs.simulate(0.01, 1e-3)  # co-simulation runs it
    with pytest.raises(CosimError, match="unknown integration method 'Euler'"):
        cs.simulate(0.01, mode="me", method="Euler")
    with pytest.raises(CosimError, match="tolerances must be positive"):
        cs.simulate(0.01, mode="me", rtol=0.0)
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_a_model_exchange_failure_names_the_component_and_keeps_the_results(fmu_dir):
    """An effort that makes the joint acceleration overflow: the FMU's refusal, named, at the
    time it happened."""
    from test_master import root_and_arm

    cs = root_and_arm(fmu_dir)
    cs.set_input("arm.joint.tau", 1e308)
    with pytest.raises(CosimError) as info:
        cs.simulate(0.01, mode="me", record=["arm.joint.m[3]"])
    msg = str(info.value)
    assert "component 'arm'" in msg and "is not finite" in msg, msg
    assert info.value.time == 0.0 and info.value.result is not None
    assert not_instantiated(cs)


def test_the_cosim_command_runs_an_ssp_in_model_exchange(fmu_dir, tmp_path, capsys):
    from titopfmu.cli import main
    from titopfmu.master import write_ssp

    ssp = write_ssp(build_balloon_cosim(fmu_dir), tmp_path / "balloon.ssp", stop_time=0.1,
                    step=1e-3)  # fmt: skip
    out = tmp_path / "me.csv"
    assert main(["cosim", str(ssp), "--mode", "me", "--rtol", "1e-11", "--atol", "1e-12",
                 "--output-interval", "0.01", "--record", "pend1.joint.m[3]",
                 "--out", str(out), "--no-progress"]) == 0  # fmt: skip
    assert "(model exchange, rtol 1e-11, 1 columns)" in capsys.readouterr().out
    rows = [r.split(",") for r in out.read_text().splitlines()[1:]]
    assert [float(r[0]) for r in rows] == [0.01 * k for k in range(11)]
    ref = engine_balloon(0.1, 0.01)["theta1"]
    np.testing.assert_allclose([float(r[1]) for r in rows], ref, rtol=0, atol=1e-9)


def test_an_ssp_written_for_model_exchange_runs_as_such_by_default(fmu_dir, tmp_path, capsys):
    """``write_ssp(interface="ModelExchange", tolerance=...)``: ``titopfmu cosim`` without
    ``--mode`` runs the file's interface at the file's tolerance, like the engine to 1e-9."""
    from titopfmu.cli import main
    from titopfmu.master import write_ssp

    ssp = write_ssp(build_balloon_cosim(fmu_dir), tmp_path / "balloon_me.ssp", stop_time=0.1,
                    interface="ModelExchange", tolerance=1e-11)  # fmt: skip
    out = tmp_path / "me.csv"
    assert main(["cosim", str(ssp), "--atol", "1e-12", "--output-interval", "0.01",
                 "--record", "pend1.joint.m[3]", "--out", str(out), "--no-progress"]) == 0
    assert "(model exchange, rtol 1e-11, 1 columns)" in capsys.readouterr().out
    rows = [r.split(",") for r in out.read_text().splitlines()[1:]]
    ref = engine_balloon(0.1, 0.01)["theta1"]
    np.testing.assert_allclose([float(r[1]) for r in rows], ref, rtol=0, atol=1e-9)
