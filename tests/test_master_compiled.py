"""The master's compiled communication step and its interface Jacobians, on real FMUs.

The compiled step (``titopfmu.master._step``) and the Python path run the same algorithm on the
same FMUs: on the balloon they take the same decisions (iterations, Jacobian measurements) but
at the few points where a residual falls within rounding of the tolerance (the loop solve is a
dense LU there, the tree solver here), and their results differ by the loop's tolerance, a
small fraction of their common distance to the engine. The
Jacobians from ``fmi2GetDirectionalDerivative`` equal those measured by unit perturbations (the
maps are affine); an FMU whose model description does not declare directional derivatives is
measured by perturbations and run by the Python path. An FMU that fails mid-run is reported
with the same message, at the same time and with the same results so far by both paths.
"""

from __future__ import annotations

import shutil
import subprocess
import sysconfig
import warnings
import zipfile
from pathlib import Path

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
from titopfmu.master import CosimError, CoSimulation, fastpath

pytestmark = pytest.mark.filterwarnings("ignore:.*triangle inequality")

TYPES = ["rigid_body", "prismatic_body", "revolute_body", "joint_spring_damper"]


@pytest.fixture(scope="module")
def fmu_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("fmus_compiled")
    build_fmus(out, types=TYPES, max_children=1)
    return out


def balloon_run(fmu_dir, compiled: bool, t_end: float = 0.3):
    cs = build_balloon_cosim(fmu_dir)
    cs.compiled = compiled
    res = cs.simulate(t_end, 1e-3, record=COSIM_RECORD, output_interval=0.01)
    return cs, res


def test_the_compiled_step_is_built_and_applies_to_native_fmus(fmu_dir):
    assert fastpath.available()
    cs = build_balloon_cosim(fmu_dir)
    cs.initialize(0.0)
    try:
        assert fastpath.applies(cs) is None
        cs.loop = "gauss-seidel"
        assert "Gauss-Seidel" in fastpath.applies(cs)
    finally:
        cs.free()


def test_compiled_and_python_paths_agree_on_the_balloon(fmu_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        ref = run_balloon(0.3, 0.01, rtol=1e-12, atol=1e-13)
    cs_py, r_py = balloon_run(fmu_dir, False)
    cs_c, r_c = balloon_run(fmu_dir, True)
    steps = len(r_c.iterations) - 1
    assert cs_c.stats.compiled_steps == steps and cs_py.stats.compiled_steps == 0
    # the same decisions (iterations, Jacobians measured) but where the residual of a point
    # falls within rounding of the tolerance
    it_py, it_c = np.array(r_py.iterations), np.array(r_c.iterations)
    assert np.count_nonzero(it_py != it_c) <= 0.03 * len(it_py), (it_py, it_c)
    assert abs(cs_c.stats.jacobian_updates - cs_py.stats.jacobian_updates) <= len(cs_c.order)
    a, b = np.array(r_py.rows), np.array(r_c.rows)
    assert a.shape == b.shape and np.array_equal(r_py.time, r_c.time)
    # the same algorithm: they differ by the rounding of the loop solve and, where a decision
    # differs, by the loop's tolerance (1e-8): far below the co-simulation's own error
    diff = float(np.max(np.abs(a - b) / (1.0 + np.abs(a))))
    print(
        f"compiled vs Python path: {diff:.3g}, iterations differ at "
        f"{np.count_nonzero(it_py != it_c)} points"
    )
    cols_py, cols_c = balloon_columns_from_cosim(r_py), balloon_columns_from_cosim(r_c)
    n = len(ref["time"])
    err = max(float(np.max(np.abs(cols_c[k][:n] - ref[k][:n]))) for k in COLUMNS)
    err_py = max(float(np.max(np.abs(cols_py[k][:n] - ref[k][:n]))) for k in COLUMNS)
    assert diff < 1e-7, diff
    assert diff < 5e-2 * err, (diff, err)
    assert abs(err - err_py) < 1e-2 * err_py, (err, err_py)


def test_directional_derivatives_equal_unit_perturbations(fmu_dir):
    cs = build_balloon_cosim(fmu_dir)
    cs.initialize(0.0)
    try:
        cs.solve_loop()
        exact = [b.Mx.copy() for b in cs._bodies]
        assert all(b.dd is not None for b in cs._bodies)
        for i, b in enumerate(cs._bodies):
            b.dd = None  # measure again by unit perturbations through set/get
            cs._measure(i)
            scale = max(1.0, float(np.abs(exact[i]).max()))
            assert np.abs(b.Mx - exact[i]).max() <= 1e-9 * scale, cs.order[i]
            assert np.abs(exact[i]).max() > 0.0
    finally:
        cs.free()


def without_directional_derivatives(src, dst):
    """A copy of an FMU whose model description does not declare directional derivatives."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "modelDescription.xml":
                text = data.decode()
                assert 'providesDirectionalDerivative="true"' in text
                data = text.replace('providesDirectionalDerivative="true"',
                                    'providesDirectionalDerivative="false"').encode()  # fmt: skip
            zout.writestr(item, data)


def two_bodies(fmu_dir, arm_fmu):
    cs = CoSimulation()
    cs.add("root", fmu_dir / "TitopRigidBodyC1.fmu", {
        "mass": 2.0, "inertia": np.diag([0.1, 0.2, 0.3]), "C1.point": [0.3, 0.0, 0.0],
        "gravity": [0.0, 0.0, -9.81], "twist": [0.1, 0.0, 0.0, 0.0, 0.2, 0.5],
    })  # fmt: skip
    cs.add("arm", arm_fmu, {"mass": 1.0, "com": [0.3, 0.0, 0.0], "theta_dot0": 1.0,
                            "gravity": [0.0, 0.0, -9.81]})  # fmt: skip
    cs.connect("root.C1", "arm.P")
    cs.set_input("arm.joint.tau", 0.0)
    return cs


def test_an_fmu_without_directional_derivatives_runs_the_python_path(fmu_dir, tmp_path):
    plain = tmp_path / "PlainRevoluteBodyC0.fmu"
    without_directional_derivatives(fmu_dir / "TitopRevoluteBodyC0.fmu", plain)
    cs_fd = two_bodies(fmu_dir, plain)
    r_fd = cs_fd.simulate(0.1, 1e-3, record=["arm.joint.m[3]", "root.body.m[13]"])
    assert cs_fd.stats.compiled_steps == 0  # the Python path, Jacobians by unit perturbations
    assert "provides no directional derivatives" in fastpath.applies(cs_fd)
    cs_dd = two_bodies(fmu_dir, fmu_dir / "TitopRevoluteBodyC0.fmu")
    r_dd = cs_dd.simulate(0.1, 1e-3, record=["arm.joint.m[3]", "root.body.m[13]"])
    assert cs_dd.stats.compiled_steps == len(r_dd.iterations) - 1
    a, b = np.array(r_fd.rows), np.array(r_dd.rows)
    assert np.abs(a - b).max() < 1e-9 * (1.0 + np.abs(a).max())
    assert max(r_fd.iterations[1:]) <= 2 and max(r_dd.iterations[1:]) <= 2


def test_an_fmu_that_cannot_interpolate_inputs_holds_the_lines_mean(fmu_dir, tmp_path):
    """The default (polynomial) coupling sends a line over the step to FMUs that declare
    canInterpolateInputs, and holds its mean for one that does not: both paths agree on such a
    system, which gets one fmi2SetRealInputDerivatives call fewer per step (the arm's)."""
    plain = tmp_path / "HeldRevoluteBodyC0.fmu"
    with zipfile.ZipFile(fmu_dir / "TitopRevoluteBodyC0.fmu") as zin, zipfile.ZipFile(
        plain, "w", zipfile.ZIP_DEFLATED
    ) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "modelDescription.xml":
                assert b'canInterpolateInputs="true"' in data
                data = data.replace(b'canInterpolateInputs="true"', b'canInterpolateInputs="false"')
            zout.writestr(item, data)
    runs = {}
    for name, arm in (("held", plain), ("line", fmu_dir / "TitopRevoluteBodyC0.fmu")):
        for compiled in (True, False):
            cs = two_bodies(fmu_dir, arm)
            cs.compiled = compiled
            r = cs.simulate(0.1, 1e-3, record=["arm.joint.m[3]", "root.body.m[13]"])
            runs[name, compiled] = (cs, np.array(r.rows), r.iterations)
    for name in ("held", "line"):
        (c1, a, _), (c2, b, _) = runs[name, True], runs[name, False]
        assert c1.stats.compiled_steps == 100 and c2.stats.compiled_steps == 0
        assert np.abs(a - b).max() < 1e-9 * (1.0 + np.abs(a).max()), name
    held, line = runs["held", True], runs["line", True]
    assert not held[0].components["arm"].can_interpolate_inputs
    assert held[2] == line[2]  # the same iterations: the call counts differ by the derivatives
    assert line[0].stats.fmu_calls - held[0].stats.fmu_calls == 100
    d = np.abs(held[1] - line[1]).max()
    assert 0.0 < d < 1e-4 * (1.0 + np.abs(line[1]).max()), d


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("ratio", [1e4, 1e-4])
def test_both_paths_converge_in_two_iterations_whatever_the_mass_ratio(fmu_dir, ratio, compiled):
    cs = CoSimulation()
    cs.add("root", fmu_dir / "TitopRigidBodyC1.fmu", {
        "mass": 1.0, "inertia": np.diag([0.1, 0.2, 0.3]), "C1.point": [0.3, 0.0, 0.0],
        "gravity": [0.0, 0.0, 0.0], "twist": [0.1, 0.0, 0.0, 0.0, 0.2, 0.5],
    })  # fmt: skip
    cs.add("child", fmu_dir / "TitopRevoluteBodyC0.fmu", {
        "mass": ratio, "inertia": np.diag([1.0, 2.0, 1.5]) * ratio / 10.0,
        "com": [0.5, 0.1, 0.0], "axis": [0.0, 0.0, 1.0], "theta_dot0": 1.0,
        "gravity": [0.0, 0.0, 0.0],
    })  # fmt: skip
    cs.connect("root.C1", "child.P")
    cs.set_input("child.joint.tau", 0.0)
    cs.compiled = compiled
    res = cs.simulate(0.2, 1e-3, record=["child.joint.m[3]"])
    steps = len(res.iterations) - 1
    assert cs.stats.compiled_steps == (steps if compiled else 0)
    assert max(res.iterations[1:]) <= 2, res.iterations
    assert cs.stats.jacobian_updates <= 2 + steps // 10, cs.stats.jacobian_updates


@pytest.mark.parametrize("tau, call", [(1e16, "fmi2DoStep"), (1e40, "fmi2GetReal")])
def test_a_failure_mid_run_is_reported_alike_and_keeps_the_results(fmu_dir, tau, call):
    outcomes = []
    for compiled in (False, True):
        cs = two_bodies(fmu_dir, fmu_dir / "TitopRevoluteBodyC0.fmu")
        cs.compiled = compiled
        # finite at t = 0; the rates then grow until the FMUs' values overflow, in a step or
        # in a read
        cs.set_input("arm.joint.tau", tau)
        with pytest.raises(CosimError) as info:
            cs.simulate(0.05, 1e-3, record=["arm.joint.m[3]"], output_interval=1e-3)
        outcomes.append((str(info.value), info.value.time, info.value.result))
    (msg_py, t_py, res_py), (msg_c, t_c, res_c) = outcomes
    assert msg_c == msg_py, (msg_c, msg_py)
    assert f"{call} of component 'root'" in msg_c or f"'root': {call}" in msg_c, msg_c
    assert "failed (status error)" in msg_c and "root" in msg_c, msg_c
    assert t_c == t_py and t_c > 0.0
    assert len(res_c.time) >= 2 and res_c.time == res_py.time
    assert res_c.iterations == res_py.iterations
    assert np.allclose(np.array(res_c.rows), np.array(res_py.rows), rtol=1e-9, atol=0.0)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
def test_the_compiled_step_compiles_as_strict_c99(tmp_path):
    src = Path(fastpath.__file__).with_name("_step.c")
    p = subprocess.run(
        ["gcc", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-Wshadow",
         "-Wstrict-prototypes", "-O2", "-fPIC", f"-I{sysconfig.get_paths()['include']}", "-c",
         str(src), "-o", str(tmp_path / "step.o")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr


SANITIZED_RUN = """
import importlib.util, sys, warnings
spec = importlib.util.spec_from_file_location("titopfmu.master._step", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
sys.modules["titopfmu.master._step"] = mod
warnings.simplefilter("ignore")
from titopfmu.examples.balloon import COSIM_RECORD, build_balloon_cosim
from titopfmu.master import fastpath
assert fastpath._step is mod
cs = build_balloon_cosim(sys.argv[2])
res = cs.simulate(0.05, 1e-3, record=COSIM_RECORD, output_interval=0.01)
assert cs.stats.compiled_steps == 50, cs.stats.compiled_steps
for row in res.rows:
    print(" ".join(f"{v:.17g}" for v in row))
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
def test_the_compiled_step_under_address_and_undefined_behaviour_sanitizers(tmp_path, fmu_dir):
    """``_step.c`` rebuilt with ASan + UBSan drives the balloon's FMUs for 50 steps: no
    out-of-bounds access or undefined behaviour (either aborts the run), and the numbers of the
    installed build, bit for bit."""
    import os
    import sys

    cc = shutil.which("gcc")
    src = Path(fastpath.__file__).with_name("_step.c")
    so = tmp_path / ("_step" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run([cc, "-std=c99", "-g", "-O1", "-fPIC", "-shared", "-Wall", "-Wextra",
                    "-Werror", "-ffp-contract=off", "-fsanitize=address,undefined",
                    "-fno-sanitize-recover=all", "-fno-omit-frame-pointer",
                    f"-I{sysconfig.get_paths()['include']}", str(src), "-o", str(so)],
                   check=True)  # fmt: skip
    libasan = subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True,
                             text=True).stdout.strip()  # fmt: skip
    if not os.path.isabs(libasan):
        pytest.skip("libasan not found")
    script = tmp_path / "run.py"
    script.write_text(SANITIZED_RUN)
    env = dict(os.environ, LD_PRELOAD=libasan, ASAN_OPTIONS="detect_leaks=0:abort_on_error=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")  # fmt: skip
    san = subprocess.run([sys.executable, str(script), str(so), str(fmu_dir)], env=env,
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    assert san.returncode == 0, san.stderr[-4000:]
    assert "ERROR: AddressSanitizer" not in san.stderr and "runtime error" not in san.stderr
    plain = subprocess.run([sys.executable, str(script), fastpath._step.__file__, str(fmu_dir)],
                           capture_output=True, text=True, timeout=600)  # fmt: skip
    assert plain.returncode == 0, plain.stderr[-4000:]
    assert san.stdout == plain.stdout and len(san.stdout.splitlines()) == 6
