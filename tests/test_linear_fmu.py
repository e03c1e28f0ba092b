"""A linear model exported as a native FMI 2.0 FMU (issue 22): ``LinearModel.to_fmu``.

References independent of the FMU: scipy.signal.lsim and scipy.linalg.expm on the same
(A, B, C, D) (co-simulation to rounding, model exchange to CVode's tolerance), the non-linear
engine (a small input step agrees to second order in the step's size), the matrices themselves
(directional derivatives, ModelStructure).
"""

from __future__ import annotations

import shutil
import subprocess
import warnings
import zipfile

import numpy as np
import pytest
from fmpy import extract, read_model_description, simulate_fmu
from fmpy.fmi2 import FMU2Slave
from fmpy.validation import validate_fmu
from scipy.linalg import expm
from scipy.signal import lsim
from test_linearize import double_pendulum

from titopfmu import Engine, InertiaWarning, linearize
from titopfmu.linear import LinearModel
from titopfmu.linear.fmu import LinearFmuError, fmi_name

XN, UN, YN = ["x1", "x2", "x3", "x4"], ["u1", "u2"], ["y1", "y2", "y3"]


def random_model(seed: int = 1) -> LinearModel:
    """A stable 4-state, 2-input, 3-output model with structural zeros, a feedthrough, an
    operating point and a drift."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(4, 4))
    A -= (np.max(np.linalg.eigvals(A).real) + 0.5) * np.eye(4)
    A[0, 2] = A[3, 1] = 0.0
    B = rng.normal(size=(4, 2))
    B[2, 0] = 0.0
    C = rng.normal(size=(3, 4))
    C[1, :2] = 0.0
    D = np.zeros((3, 2))
    D[0, 1] = 0.5
    return LinearModel(A, B, C, D, XN, UN, YN, u0=np.array([1.5, -2.0]),
                       y0=np.array([3.0, 0.1, -1.0]), xdot0=np.array([0.01, 0.0, -0.02, 0.03]),
                       units={"u1": "N", "y1": "m", "x2": "rad/s"})  # fmt: skip


@pytest.fixture(scope="module")
def plant(tmp_path_factory):
    model = random_model()
    return model, str(model.to_fmu(tmp_path_factory.mktemp("linfmu") / "plant.fmu"))


def augmented(model: LinearModel):
    """(A, [B xdot0], C, [D 0]): the drift as a third input held at 1."""
    p = model.C.shape[0]
    return (model.A, np.column_stack([model.B, model.xdot0]), model.C,
            np.column_stack([model.D, np.zeros(p)]))  # fmt: skip


def test_fmu_validates_and_declares_the_true_structure(plant):
    model, path = plant
    assert validate_fmu(path) == []
    md = read_model_description(path)
    assert md.coSimulation is not None and md.modelExchange is not None
    v = {x.name: x for x in md.modelVariables}
    assert [x.name for x in md.modelVariables] == UN + YN + XN + [f"der({s})" for s in XN]
    assert [v[s].causality for s in UN + YN] == ["input"] * 2 + ["output"] * 3
    assert [float(v[s].start) for s in UN] == [1.5, -2.0]  # absolute inputs
    assert (v["u1"].unit, v["y1"].unit, v["x2"].unit, v["y2"].unit) == ("N", "m", "rad/s", None)
    vr = {x.name: x.valueReference for x in md.modelVariables}

    def expected(Mx, Mu, row):
        return sorted([XN[j] for j in np.flatnonzero(Mx[row])] +
                      [UN[k] for k in np.flatnonzero(Mu[row])])  # fmt: skip

    for unknown in md.outputs:
        row = YN.index(unknown.variable.name)
        assert sorted(d.name for d in unknown.dependencies) == expected(model.C, model.D, row)
    for unknown in md.derivatives:
        row = XN.index(unknown.variable.name[4:-1])
        assert sorted(d.name for d in unknown.dependencies) == expected(model.A, model.B, row)
    assert len(md.derivatives) == 4 and vr["der(x1)"] == 9
    names = zipfile.ZipFile(path).namelist()
    assert {"sources/fmi2_state_space.c", "sources/state_space_config.h",
            "binaries/linux64/plant.so"} <= set(names)  # fmt: skip


def test_sources_compile_on_their_own(plant, tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    _, path = plant
    zipfile.ZipFile(path).extractall(tmp_path)
    srcs = sorted(str(p) for p in (tmp_path / "sources").glob("*.c"))
    cmd = [cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", *srcs, "-o",
           str(tmp_path / "again.so"), "-lm"]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_cosimulation_is_exact_with_inputs_held(plant):
    """fmpy's co-simulation against lsim (zero-order hold) to rounding; fmpy records the outputs
    after each step before it sets the next inputs, so D acts on the held inputs."""
    model, path = plant
    h, T = 0.01, 3.0
    t = np.round(np.arange(0.0, T + h / 2, h), 12)
    U = np.column_stack([1.5 + np.sin(3 * t), -2.0 + np.where(t >= 1.0, 0.7, 0.0) + 0.5 * t])
    sig = np.zeros(len(t), dtype=[("time", float), ("u1", float), ("u2", float)])
    sig["time"], sig["u1"], sig["u2"] = t, U[:, 0], U[:, 1]
    A, Bx, _, _ = augmented(model)
    Ux = np.column_stack([U - model.u0, np.ones(len(t))])
    _, _, x = lsim((A, Bx, np.eye(4), np.zeros((4, 3))), Ux, t, interp=False)
    held = np.vstack([U[:1], U[:-1]])
    y_ref = model.y0 + x @ model.C.T + (held - model.u0) @ model.D.T
    r = simulate_fmu(path, fmi_type="CoSimulation", stop_time=T, step_size=h, output_interval=h,
                     input=sig, output=YN + XN)  # fmt: skip
    assert len(r) == len(t)
    y = np.column_stack([r[s] for s in YN])
    assert np.max(np.abs(y - y_ref)) < 1e-9 * max(1.0, np.max(np.abs(y_ref)))
    assert np.max(np.abs(np.column_stack([r[s] for s in XN]) - x)) < 1e-10


def test_cosimulation_is_exact_with_input_derivatives(plant):
    """Inputs given with their derivatives (fmi2SetRealInputDerivatives, a first-order hold)
    are integrated exactly: against lsim with linear interpolation; held over each step
    instead, the same run is off by O(h). (fmpy's simulate_fmu sizes its input-derivative
    buffer for 9 inputs, so the steps are driven through its FMU2Slave here.)"""
    model, path = plant
    h, T = 0.05, 2.0
    tt = np.round(np.arange(0.0, T + h / 2, h), 12)
    U = np.column_stack([1.5 + np.sin(2 * tt), -2.0 + 0.8 * tt - 0.3 * tt**2])
    _, y_ref, _ = lsim(augmented(model), np.column_stack([U - model.u0, np.ones(len(tt))]), tt,
                       interp=True)  # fmt: skip
    y_ref += model.y0
    errors = []
    for derivatives in (True, False):
        fmu, vr = _slave(path)
        try:
            uvr, yvr = [vr[s] for s in UN], [vr[s] for s in YN]
            ys = [fmu.getReal(yvr)]
            for k in range(len(tt) - 1):
                fmu.setReal(uvr, list(U[k]))
                if derivatives:
                    fmu.setRealInputDerivatives(uvr, [1, 1], list((U[k + 1] - U[k]) / h))
                fmu.doStep(tt[k], h)
                ys.append(fmu.getReal(yvr))
        finally:
            fmu.terminate()
            fmu.freeInstance()
        errors.append(float(np.max(np.abs(np.array(ys) - y_ref))))
    assert errors[0] < 1e-9 * max(1.0, np.max(np.abs(y_ref))), errors
    assert errors[1] > 1e-3, errors


def test_model_exchange_matches_lsim(plant):
    """fmpy's CVode on the FMU's derivatives (inputs stepped at t = 0, initial deviations set
    through the states' start values) against lsim, to 1e-9."""
    model, path = plant
    us, xs = model.u0 + [0.3, -0.4], [0.1, 0.0, -0.2, 0.05]
    start = {"u1": us[0], "u2": us[1], **dict(zip(XN, xs, strict=True))}
    r = simulate_fmu(path, fmi_type="ModelExchange", stop_time=3.0, output_interval=0.01,
                     start_values=start, output=YN, relative_tolerance=1e-12)  # fmt: skip
    tt = r["time"]
    _, y_ref, _ = lsim(augmented(model), np.tile(np.r_[us - model.u0, 1.0], (len(tt), 1)), tt,
                       X0=xs)  # fmt: skip
    y = np.column_stack([r[s] for s in YN])
    assert np.max(np.abs(y - (y_ref + model.y0))) < 1e-9


def _slave(path: str) -> tuple[FMU2Slave, dict[str, int]]:
    md = read_model_description(path)
    fmu = FMU2Slave(guid=md.guid, unzipDirectory=extract(path), instanceName="lin",
                    modelIdentifier=md.coSimulation.modelIdentifier)  # fmt: skip
    fmu.instantiate()
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    return fmu, {v.name: v.valueReference for v in md.modelVariables}


def test_variable_steps_states_and_directional_derivatives(plant):
    """Steps of changing size against expm of the augmented generator; an FMU state restored
    reproduces a step bit for bit; directional derivatives and output derivatives are the
    matrices."""
    model, path = plant
    fmu, vr = _slave(path)
    try:
        u = np.array([2.0, -1.0])
        fmu.setReal([vr["u1"], vr["u2"]], list(u))
        x = np.zeros(4)
        A, Bx = model.A, model.B
        M = np.zeros((5, 5))
        M[:4, :4] = A
        M[:4, 4] = Bx @ (u - model.u0) + model.xdot0
        t = 0.0
        for h in (0.01, 0.037, 0.01, 0.5):
            fmu.doStep(t, h)
            t += h
            x = (expm(M * h) @ np.r_[x, 1.0])[:4]
            got = np.array(fmu.getReal([vr[s] for s in XN]))
            assert np.max(np.abs(got - x)) < 1e-12
        saved = fmu.getFMUstate()
        fmu.doStep(t, 0.2)
        after = fmu.getReal([vr[s] for s in YN + XN])
        fmu.setFMUstate(saved)
        fmu.doStep(t, 0.2)
        assert fmu.getReal([vr[s] for s in YN + XN]) == after
        fmu.freeFMUstate(saved)
        known = [vr[s] for s in XN + UN]
        J = np.column_stack([
            fmu.getDirectionalDerivative([vr[s] for s in YN + [f"der({n})" for n in XN]],
                                         [k], [1.0]) for k in known
        ])  # fmt: skip
        np.testing.assert_array_equal(J[:3], np.column_stack([model.C, model.D]))
        np.testing.assert_array_equal(J[3:], np.column_stack([model.A, model.B]))
    finally:
        fmu.terminate()
        fmu.freeInstance()


def test_double_pendulum_fmu_step_response_is_second_order(tmp_path):
    """The FMU of the hanging double pendulum (shoulder torque in) against the non-linear engine
    for a torque step of size a: the error falls as a² (ratios ~4 when halving a)."""
    T, n = 1.5, 31
    outs = ["p1.joint.m[3]", "p2.joint.m[3]", "p2.position"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        model = linearize(double_pendulum(), 0.0, inputs=["p1.joint.tau"], outputs=outs)
    path = str(model.to_fmu(tmp_path / "double_pendulum.fmu"))
    names = model.output_names
    assert validate_fmu(path) == []
    md = read_model_description(path)
    units = {v.name: v.unit for v in md.modelVariables}
    assert (units["p1.joint.tau"], units["p1.joint.m[3]"], units["p2.position[2]"],
            units["p1.state.qd"]) == ("N.m", "rad", "m", "rad/s")  # fmt: skip
    errors = []
    for a in (1e-2, 5e-3, 2.5e-3):
        r = simulate_fmu(path, fmi_type="CoSimulation", stop_time=T, step_size=T / (n - 1),
                         output_interval=T / (n - 1), start_values={"p1.joint.tau": a},
                         output=names)  # fmt: skip
        y_fmu = np.column_stack([r[s] for s in names])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InertiaWarning)
            res = Engine(double_pendulum(tau1=a)).simulate(
                T, output_interval=T / (n - 1), rtol=1e-12, atol=1e-14, record=outs
            )
        assert y_fmu.shape == res.values.shape
        errors.append(float(np.max(np.abs(res.values - y_fmu))))
        assert float(np.max(np.abs(res.values - model.y0))) > 10 * errors[-1]
    ratios = [errors[0] / errors[1], errors[1] / errors[2]]
    print(f"FMU step errors {errors}, ratios {ratios}")
    for q in ratios:
        assert 3.6 < q < 4.4, f"errors {errors}: ratio {q:.3f} (expected ~4: second order)"


def test_cli_writes_the_balloon_fmu_with_its_drift(tmp_path, capsys):
    """``titopfmu linearize example:balloon ... --fmu``: the balloon's initial state is not an
    equilibrium; the FMU's state derivatives at its start are the model's drift xdot0."""
    import argparse
    import ctypes

    from fmpy.fmi2 import FMU2Model

    from titopfmu.linear.cli import add_linearize_parser

    parser = argparse.ArgumentParser(prog="titopfmu")
    add_linearize_parser(parser.add_subparsers(dest="command"))
    fmu_path, npz = tmp_path / "balloon.fmu", tmp_path / "balloon.npz"
    args = parser.parse_args(["linearize", "example:balloon", "--inputs", "balloon.buoyancy[1]",
                              "--outputs", "pend1.joint.m[3],balloon.position", "--out",
                              str(npz), "--fmu", str(fmu_path)])  # fmt: skip
    assert args.handler(args) == 0
    assert "balloon.fmu" in capsys.readouterr().out
    model = LinearModel.load(npz)
    assert model.units["balloon.state.rx"] == "rad" and model.units["balloon.buoyancy[1]"] == "N"
    path = str(fmu_path)
    assert validate_fmu(path) == []
    md = read_model_description(path)
    assert "balloon.state.rx" in {v.name for v in md.modelVariables}
    fmu = FMU2Model(guid=md.guid, unzipDirectory=extract(path), instanceName="me",
                    modelIdentifier=md.modelExchange.modelIdentifier)  # fmt: skip
    fmu.instantiate()
    try:
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
        fmu.enterContinuousTimeMode()
        dx = (ctypes.c_double * model.n_states)()
        fmu.getDerivatives(dx, model.n_states)
        dx = np.array(dx)
        np.testing.assert_allclose(dx, model.xdot0, rtol=0, atol=1e-12 * max(1, np.abs(dx).max()))
        assert np.abs(model.xdot0).max() > 1e-3
        y = fmu.getReal([v.valueReference for v in md.modelVariables
                         if v.causality == "output"])  # fmt: skip
        np.testing.assert_array_equal(y, model.y0)
    finally:
        fmu.terminate()
        fmu.freeInstance()


def test_fmi_names():
    assert fmi_name("pend1.joint.m[3]") == "pend1.joint.m[3]"
    assert fmi_name("a b.c-d[2]") == "a_b.c_d[2]"
    assert fmi_name("arm.2nd") == "arm._2nd"
    assert fmi_name("θ.x") == "_.x"


def test_bad_input_is_named_before_any_build(tmp_path):
    good = random_model()
    out = tmp_path / "bad.fmu"

    def variant(**kw):
        d = {k: getattr(good, k) for k in ("A", "B", "C", "D", "state_names", "input_names",
                                           "output_names", "u0", "y0", "xdot0")}  # fmt: skip
        d.update(kw)
        return LinearModel(**d)

    A = good.A.copy()
    A[0, 1] = np.nan
    with pytest.raises(LinearFmuError, match=r"A\[1,2\] \(row 'x1', column 'x2'\) = nan"):
        variant(A=A).to_fmu(out)
    D = good.D.copy()
    D[2, 0] = np.inf
    with pytest.raises(LinearFmuError, match=r"D\[3,1\] \(row 'y3', column 'u1'\) = inf"):
        variant(D=D).to_fmu(out)
    with pytest.raises(LinearFmuError, match=r"y0\[2\] \('y2'\) = nan"):
        variant(y0=np.array([0.0, np.nan, 0.0])).to_fmu(out)
    with pytest.raises(LinearFmuError, match="the state 'x 1' and the input 'x_1' both become "
                                             "the FMI variable 'x_1'"):  # fmt: skip
        variant(state_names=["x 1", "x2", "x3", "x4"], input_names=["x_1", "u2"]).to_fmu(out)
    with pytest.raises(LinearFmuError, match="'u1' is both an input and an output"):
        variant(output_names=["u1", "y2", "y3"]).to_fmu(out)
    with pytest.raises(LinearFmuError, match="the state name 'x1' appears twice"):
        variant(state_names=["x1", "x1", "x3", "x4"]).to_fmu(out)
    with pytest.raises(LinearFmuError, match=r"LinearModel.B has shape \(4, 2\), expected "
                                             r"\(4, 3\)"):  # fmt: skip
        variant(input_names=["u1", "u2", "u3"]).to_fmu(out)
    with pytest.raises(LinearFmuError, match="rename: \\['nope'\\]"):
        good.to_fmu(out, rename={"nope": "x"})
    with pytest.raises(LinearFmuError, match="model name '1x' is not a C identifier"):
        good.to_fmu(out, model_name="1x")
    with pytest.raises(LinearFmuError, match="must end in .fmu"):
        good.to_fmu(tmp_path / "bad.zip")
    assert not out.exists()
    # a collision resolved by renaming
    path = variant(output_names=["u1", "y2", "y3"]).to_fmu(out, rename={"output:u1": "y1"})
    assert validate_fmu(str(path)) == []


VALGRIND_SCRIPT = """
import sys
import numpy as np
from fmpy import extract, read_model_description, simulate_fmu
from fmpy.fmi2 import FMU2Slave

path = sys.argv[1]
r = simulate_fmu(path, fmi_type="ModelExchange", stop_time=0.5, output_interval=0.1,
                 start_values={"u1": 2.0, "x1": 0.1})
print(r["y1"][-1])
md = read_model_description(path)
vr = {v.name: v.valueReference for v in md.modelVariables}
fmu = FMU2Slave(guid=md.guid, unzipDirectory=extract(path), instanceName="vg",
                modelIdentifier=md.coSimulation.modelIdentifier)
fmu.instantiate()
fmu.setupExperiment(startTime=0.0)
fmu.enterInitializationMode()
fmu.exitInitializationMode()
fmu.setRealInputDerivatives([vr["u1"], vr["u2"]], [1, 1], [0.5, -0.2])
for h in (0.1, 0.05, 0.1):
    fmu.doStep(0.0, h)
state = fmu.getFMUstate()
blob = fmu.serializeFMUstate(state)
fmu.freeFMUstate(state)
fmu.setFMUstate(fmu.deSerializeFMUstate(blob))
print(fmu.getReal([vr["y1"], vr["der(x1)"]]))
print(fmu.getDirectionalDerivative([vr["y1"]], [vr["x1"]], [1.0]))
fmu.terminate()
fmu.freeInstance()
"""


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_fmu_under_valgrind(plant, tmp_path):
    """Model exchange, co-simulation with input derivatives and steps of changing size (the
    matrix exponential), FMU states serialised and restored, directional derivatives: no
    memcheck error involves the FMU's binary."""
    import os
    import sys

    _, path = plant
    script, log = tmp_path / "exercise.py", tmp_path / "vg.log"
    script.write_text(VALGRIND_SCRIPT)
    p = subprocess.run(["valgrind", "--tool=memcheck", "--leak-check=full",
                        "--show-leak-kinds=definite", f"--log-file={log}", sys.executable,
                        str(script), path], capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, PYTHONMALLOC="malloc"))  # fmt: skip
    assert p.returncode == 0, p.stderr[-4000:]
    text = log.read_text()
    assert "ERROR SUMMARY" in text  # valgrind did run
    ours = [r for r in text.split("\n\n") if ("plant.so" in r or "fmi2" in r) and
            ("Invalid" in r or "uninitialised" in r or "definitely lost" in r)]  # fmt: skip
    assert not ours, "\n\n".join(ours)[:4000]


def test_fmi3_fmu_validates_and_runs_like_the_fmi2_one(plant, tmp_path):
    """``to_fmu(fmi_version=3)``: the same model on the FMI 3.0 functions of the shared FMI
    layer; fmpy validates it and its co-simulation and model exchange give the FMI 2.0 FMU's
    outputs (co-simulation to rounding, model exchange to the solver's tolerance)."""
    model, path2 = plant
    path3 = str(model.to_fmu(tmp_path / "plant3.fmu", fmi_version=3))
    assert validate_fmu(path3) == []
    md = read_model_description(path3)
    assert md.fmiVersion == "3.0"
    assert {v.name for v in md.modelVariables} >= set(UN + YN)
    h, T = 0.01, 2.0
    t = np.round(np.arange(0.0, T + h / 2, h), 12)
    sig = np.zeros(len(t), dtype=[("time", float), ("u1", float), ("u2", float)])
    sig["time"], sig["u1"], sig["u2"] = t, 1.5 + np.sin(3 * t), -2.0 + 0.5 * t
    for kind, tol in (("CoSimulation", 1e-12), ("ModelExchange", 1e-5)):
        r2, r3 = (simulate_fmu(p, fmi_type=kind, stop_time=T, step_size=h, output_interval=h,
                               input=sig, output=YN) for p in (path2, path3))  # fmt: skip
        y2 = np.column_stack([r2[s] for s in YN])
        y3 = np.column_stack([r3[s] for s in YN])
        assert y2.shape == y3.shape
        assert np.max(np.abs(y3 - y2)) < tol * max(1.0, np.max(np.abs(y2))), kind


def test_cli_writes_an_fmi3_fmu(tmp_path, capsys):
    """``titopfmu linearize ... --fmu F --fmi-version 3``."""
    import argparse

    from titopfmu.linear.cli import add_linearize_parser

    parser = argparse.ArgumentParser(prog="titopfmu")
    add_linearize_parser(parser.add_subparsers(dest="command"))
    fmu_path = tmp_path / "balloon3.fmu"
    args = parser.parse_args(["linearize", "example:balloon", "--inputs", "balloon.buoyancy[1]",
                              "--outputs", "pend1.joint.m[3]", "--fmu", str(fmu_path),
                              "--fmi-version", "3"])  # fmt: skip
    assert args.handler(args) == 0
    assert "balloon3.fmu" in capsys.readouterr().out
    assert validate_fmu(str(fmu_path)) == []
    assert read_model_description(str(fmu_path)).fmiVersion == "3.0"
