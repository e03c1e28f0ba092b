"""The internal integrator of native FMUs (``titopfmu/fmi/native/ode.c``) against scipy.

``tests/core/ode_check.c`` drives it on a harmonic oscillator, the Kepler problem (eccentricity
0.9), a van der Pol oscillator (mu = 5) and the Arenstorf orbit; it is built here with gcc
(``-std=c99 -pedantic -Wall -Wextra -Werror -O2``, and again with AddressSanitizer and
UndefinedBehaviorSanitizer). Checked: the steps and evaluations of ``solve_ivp`` (DOP853 and RK45,
the same rtol/atol, ``t_bound`` = the end time), its results to within what rounding amplifies
(scipy moves as much when x0 moves by one ulp), its dense output, the errors against exact
solutions; results bit-identical whatever the communication grid (one call, 1 ms, 10 ms, 0.1 s);
a saved state resuming bit-identically; restarts at input jumps; every failure's code.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

HERE = Path(__file__).resolve().parent
NATIVE = HERE.parent / "titopfmu" / "fmi" / "native"
DRIVER = HERE / "core" / "ode_check.c"
CC = shutil.which("gcc")
FLAGS = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror"]
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]

pytestmark = pytest.mark.skipif(CC is None, reason="gcc is not installed")

MU_ARENSTORF = 0.012277471
ECC = 0.9
METHODS = {"dop853": "DOP853", "rk45": "RK45"}


def harmonic(t, x):
    return [x[1], -x[0]]


def kepler(t, x):
    r3 = np.hypot(x[0], x[1]) ** 3
    return [x[2], x[3], -x[0] / r3, -x[1] / r3]


def vdp(t, x):
    return [x[1], 5.0 * (1.0 - x[0] ** 2) * x[1] - x[0]]


def arenstorf(t, x):
    mu, mup = MU_ARENSTORF, 1.0 - MU_ARENSTORF
    d1 = ((x[0] + mu) ** 2 + x[1] ** 2) ** 1.5
    d2 = ((x[0] - mup) ** 2 + x[1] ** 2) ** 1.5
    return [x[2], x[3],
            x[0] + 2 * x[3] - mup * (x[0] + mu) / d1 - mu * (x[0] - mup) / d2,
            x[1] - 2 * x[2] - mup * x[1] / d1 - mu * x[1] / d2]  # fmt: skip


# name: (f, x0, end time, largest difference from scipy that rounding explains); the Kepler and
# Arenstorf orbits amplify rounding errors (scipy against itself with x0[0] moved by one ulp:
# 2e-10 and 2e-9), the harmonic oscillator and van der Pol's limit cycle do not
PROBLEMS = {
    "harmonic": (harmonic, [1.0, 0.0], 10.0, 1e-13),
    "kepler": (kepler, [1 - ECC, 0.0, 0.0, np.sqrt((1 + ECC) / (1 - ECC))], 6 * np.pi, 1e-8),
    "vdp": (vdp, [2.0, 0.0], 20.0, 1e-11),
    "arenstorf": (
        arenstorf,
        [0.994, 0.0, 0.0, -2.00158510637908252240537862224],
        17.0652165601579625588917206249,
        1e-8,
    ),
}


def exact(name: str) -> np.ndarray:
    """The exact state at the problem's end time (Kepler: 3 periods, Arenstorf: 1 period)."""
    _, x0, t_end, _ = PROBLEMS[name]
    if name == "harmonic":
        return np.array([np.cos(t_end), -np.sin(t_end)])
    return np.array(x0)


def build(out: Path, extra: list[str]) -> Path:
    exe = out / "ode_check"
    cmd = [CC, *FLAGS, *extra, "-I", str(NATIVE), str(NATIVE / "ode.c"), str(DRIVER), "-o",
           str(exe), "-lm"]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert not r.stderr, r.stderr
    return exe


@pytest.fixture(scope="module")
def driver(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("ode"), ["-O2"])


@pytest.fixture(scope="module")
def asan_driver(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("ode_asan")
    probe = tmp / "probe.c"
    probe.write_text("int main(void) { return 0; }\n")
    r = subprocess.run([CC, *SANITIZE, str(probe), "-o", str(tmp / "probe")],
                       capture_output=True, text=True)  # fmt: skip
    if r.returncode != 0 or subprocess.run([str(tmp / "probe")]).returncode != 0:
        pytest.skip("no AddressSanitizer/UndefinedBehaviorSanitizer runtime (libasan, libubsan)")
    return build(tmp, ["-O1", "-g", *SANITIZE])


def run(exe: Path, *args, env=None) -> str:
    r = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, env=env,
                       timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return r.stdout


def parse(out: str) -> dict[str, list[float]]:
    rows = (line.split() for line in out.splitlines() if not line.startswith("strerror "))
    return {k: [float(v) for v in vs] for k, *vs in rows}


def points(out: str) -> np.ndarray:
    """The "p t x..." lines: one row per communication point."""
    return np.array([[float(v) for v in line.split()[1:]] for line in out.splitlines()
                     if line.startswith("p ")])  # fmt: skip


def integrate(exe, name, method="dop853", rtol=1e-8, atol=1e-10, dt=0.0, bound=1, extra=()):
    t_end = PROBLEMS[name][2]
    return parse(run(exe, "run", name, method, rtol, atol, repr(t_end), dt, bound, 0, *extra))


@functools.cache
def scipy_solution(name, method, rtol, atol, dense=False, **kw):
    """solve_ivp's solution (with dense_output, its nfev counts the dense output's evaluations)"""
    f, x0, t_end, _ = PROBLEMS[name]
    sol = solve_ivp(f, (0.0, t_end), x0, method=METHODS[method], rtol=rtol, atol=atol,
                    dense_output=dense, **kw)  # fmt: skip
    assert sol.success
    return sol


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", PROBLEMS)
@pytest.mark.parametrize("rtol, atol", [(1e-6, 1e-9), (1e-10, 1e-12)])
def test_same_steps_and_results_as_scipy(driver, name, method, rtol, atol):
    """With t_bound at the end time, the integrator takes scipy's steps: as many accepted,
    as many evaluations of f (12 a step for DOP853, 6 for RK45, and 2 to start), and ends on
    scipy's result to within rounding."""
    d = integrate(driver, name, method, rtol, atol)
    sol = scipy_solution(name, method, rtol, atol)
    assert d["rc"] == [0]
    steps, rhs = d["steps"][0], d["rhs"][0]
    assert abs(steps - (len(sol.t) - 1)) <= 2 + 0.02 * steps  # equal with scipy 1.17
    assert abs(rhs - sol.nfev) <= 30 + 0.02 * rhs
    diff = np.max(np.abs(np.array(d["x"]) - sol.y[:, -1]))
    assert diff <= PROBLEMS[name][3], diff


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", ["harmonic", "kepler", "arenstorf"])
def test_errors_against_exact_solutions(driver, name, method):
    """The error at the end time is scipy's (they take the same steps), on problems with exact
    solutions; the Kepler orbit keeps its energy (-1/2) and angular momentum."""
    rtol, atol = 1e-10, 1e-12
    for bound in (1, 0):  # at a step's end / from the dense output
        x = np.array(integrate(driver, name, method, rtol, atol, dt=0.01, bound=bound)["x"])
        err = np.max(np.abs(x - exact(name)))
        err_scipy = np.max(np.abs(scipy_solution(name, method, rtol, atol).y[:, -1] - exact(name)))
        assert err <= 2.5 * err_scipy + 1e-12, (err, err_scipy)
        if name == "harmonic":
            assert err < 1e-9
        if name == "kepler":
            q, p = x[:2], x[2:]
            assert abs(0.5 * p @ p - 1.0 / np.hypot(*q) + 0.5) < 1e-8
            assert abs(q[0] * p[1] - q[1] * p[0] - np.sqrt(1 - ECC**2)) < 1e-9


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", PROBLEMS)
def test_results_do_not_depend_on_the_communication_grid(driver, name, method):
    """One ode_advance to the end, or 1 ms, 10 ms, 0.1 s communication steps: the same steps,
    the same result bit for bit (with or without t_bound); the points only cost the dense
    output's 3 evaluations once a step (DOP853). Within 1e-6 of scipy stepped as the engine does
    (t_bound at the end time) at the engine's tolerances."""
    sol = scipy_solution(name, method, 1e-8, 1e-10)
    for bound in (1, 0):
        runs = {dt: integrate(driver, name, method, dt=dt, bound=bound)
                for dt in (0.0, 0.001, 0.01, 0.1)}  # fmt: skip
        one = runs[0.0]
        for dt, d in runs.items():
            assert d["rc"] == [0]
            assert d["x"] == one["x"], dt  # bit-identical (%.17g round-trips)
            assert d["steps"] == one["steps"] and d["rejected"] == one["rejected"]
            extra = d["rhs"][0] - one["rhs"][0]
            assert 0 <= extra <= (3 * one["steps"][0] + 3 if method == "dop853" else 0)
        assert np.max(np.abs(np.array(one["x"]) - sol.y[:, -1])) < 1e-6


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", PROBLEMS)
def test_dense_output_is_scipys(driver, name, method):
    """Every 0.1 s point comes from the dense output of the step holding it: scipy's."""
    t_end = PROBLEMS[name][2]
    pts = points(run(driver, "run", name, method, 1e-8, 1e-10, repr(t_end), 0.1, 1, 1))
    assert len(pts) == int(np.ceil(t_end / 0.1 - 1e-9))
    ref = scipy_solution(name, method, 1e-8, 1e-10, dense=True).sol(pts[:, 0]).T
    assert np.max(np.abs(pts[:, 1:] - ref)) <= PROBLEMS[name][3]


def test_atol_per_component_and_h_max(driver):
    """A vector of absolute tolerances and a largest step, as solve_ivp's atol and max_step."""
    atol = [1e-10, 1e-12, 1e-9, 1e-11]
    d = integrate(driver, "kepler", "dop853", 1e-8, ",".join(map(repr, atol)), extra=(0.05,))
    sol = scipy_solution("kepler", "dop853", 1e-8, tuple(atol), max_step=0.05)
    assert d["steps"][0] == len(sol.t) - 1 and d["rhs"][0] == sol.nfev
    assert np.max(np.abs(np.array(d["x"]) - sol.y[:, -1])) < 1e-8


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("ksave", [0, 1, 7, 50, 99, 100])
def test_saved_state_resumes_bit_identically(driver, method, ksave):
    """ode_save at point ksave of 100 (0: before the first evaluation; most fall inside a step,
    after its dense output), ode_load into another state (other options, a work array of NaN):
    every later point, the counters and the step size are those of the uninterrupted run."""
    d = parse(run(driver, "save", "kepler", method, 1e-8, 1e-10, repr(2 * np.pi), 2 * np.pi / 100,
                  ksave))  # fmt: skip
    assert d["rc"] == [0, 0]
    assert d["identical"] == [1]
    assert d["size"] == [24 + 11 * 4]  # doubles: 24 scalars, 11 vectors of n


@pytest.mark.parametrize("method", METHODS)
def test_restart_at_input_jumps(driver, method):
    """x' = u - x with u jumping every 7 communication points (10 ms): with ode_restart at each
    jump the result is exact to the tolerance, the previous step size kept (ODE_KEEP_H) or
    chosen again; without it, the steps already taken past the point with the old input make
    the result wrong."""
    args = ("restart", method, 1e-8, 1e-10, 5.0, 0.01, 7)
    fresh, keep, none = (parse(run(driver, *args, flags)) for flags in (0, 1, -1))
    for d in (fresh, keep):
        assert d["rc"] == [0]
        assert d["error"][0] < 1e-8
    assert keep["rhs"][0] < fresh["rhs"][0]
    assert none["error"][0] > 1e-3


def test_errors_are_reported(driver):
    out = run(driver, "errors")
    assert "strerror step size underflow" in out
    d = parse(out)
    codes = {"EARG": -1, "ESTEP": -2, "EMAXSTEPS": -3, "ERHS": -4, "ENONFINITE": -5, "ESTATE": -6}
    # the right-hand side fails beyond t = 1: the run stops at the last step before, its state
    # in x_out; it goes on once the cause is gone
    assert d["rhs_rc"] == [codes["ERHS"]] and d["rhs_status"] == [7]
    assert d["rhs_status_field"] == [codes["ERHS"]]
    assert 0 < d["rhs_t"][0] <= 1.0
    assert d["rhs_x_is_state"] == [1] and d["rhs_x_exact"] == [1]
    assert d["rhs_again_before"] == [codes["EARG"]]
    assert d["rhs_resume_rc"] == [0] and d["rhs_resume_exact"] == [1]
    assert d["rhs_first_rc"] == [codes["ERHS"]] and d["rhs_first_t_is_0"] == [1]
    # max_steps attempts per call: several calls get there
    assert d["maxsteps_first_rc"] == [codes["EMAXSTEPS"]] and d["maxsteps_calls"][0] > 1
    assert d["maxsteps_final_rc"] == [0] and d["maxsteps_exact"] == [1]
    # NaN from f past x = 0.5, x = t: steps shrink to underflow just before t = 0.5
    assert d["nan_rc"] == [codes["ENONFINITE"]] and d["nan_x_finite"] == [1]
    assert 0.5 - 1e-9 < d["nan_t"][0] <= 0.5
    assert d["nan_x0_rc"] == [codes["ENONFINITE"]]
    # x' = x^2 blows up at t = 1
    assert d["blowup_rc"] == [codes["ESTEP"]] and abs(d["blowup_t"][0] - 1.0) < 1e-6
    for key in ("arg_n0", "arg_null_x0", "arg_null_work", "arg_nan_t0", "arg_rtol", "arg_atol",
                "arg_atol_vec", "arg_h_max", "arg_method", "arg_t_bound", "arg_max_steps",
                "arg_past_bound", "arg_nan_t_end", "arg_backwards", "arg_restart_past_bound",
                "arg_restart_flags"):  # fmt: skip
        assert d[key] == [codes["EARG"]], key
    assert d["arg_ok"] == [0] and d["arg_to_bound"] == [0] and d["arg_same_time"] == [0]
    assert d["arg_bound_reached"] == [1]
    assert d["save_size"] == [24 + 11 * 2]
    assert d["load_ok"] == [0] and d["load_again_ok"] == [0]
    for key in ("load_magic", "load_n", "load_nan_x", "load_times"):
        assert d[key] == [codes["ESTATE"]], key


def test_no_mutable_global_state(tmp_path):
    """ode.o defines functions and read-only tables only (no data, bss or common symbols)."""
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm is not installed")
    obj = tmp_path / "ode.o"
    subprocess.run([CC, *FLAGS, "-O2", "-c", str(NATIVE / "ode.c"), "-o", str(obj)], check=True)
    symbols = subprocess.run([nm, str(obj)], capture_output=True, text=True, check=True).stdout
    kinds = {line.split()[-2] for line in symbols.splitlines() if len(line.split()) >= 2}
    assert not kinds & set("BbCDdGgSsV"), symbols


def test_under_sanitizers(driver, asan_driver):
    """Every scenario again under ASan + UBSan (any invalid access or undefined behaviour
    aborts): the same output as the plain build, bit for bit."""
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")  # fmt: skip
    t_end = repr(PROBLEMS["arenstorf"][2])
    for args in (("errors",),
                 ("run", "arenstorf", "dop853", 1e-8, 1e-10, t_end, 0.001, 0, 0),
                 ("run", "vdp", "rk45", 1e-6, "1e-9,1e-8", 20, 0.1, 1, 1, 0.5),
                 ("save", "kepler", "dop853", 1e-8, 1e-10, t_end, 0.01, 321),
                 ("save", "vdp", "rk45", 1e-8, 1e-10, 5, 0.01, 17),
                 ("restart", "dop853", 1e-8, 1e-10, 2, 0.01, 3, 1),
                 ("restart", "rk45", 1e-8, 1e-10, 2, 0.01, 3, 0)):  # fmt: skip
        assert run(asan_driver, *args, env=env) == run(driver, *args), args
