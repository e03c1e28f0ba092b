"""The FMUs under a second, independent FMI importer: libcosim (the Open Simulation Platform's
co-simulation engine, PyPI ``libcosimpy``, which loads FMUs through the FMI Library).

A loop-free inverse-dynamics chain Ground -> revolute -> prismatic -> revolute (leaf) is wired
port to port in libcosim (motions flow down, wrenches flow up), sinusoidal joint trajectories
[q̈, q̇, q] are imposed from Python through libcosim's override manipulator, and every joint effort,
the ground reaction and the leaf's motion vector must equal the core's inverse dynamics
(:class:`titopfmu.Engine`) of the same system to 1e-9 (relative).

libcosim's fixed-step algorithm is a Jacobi scheme: in each communication step every FMU steps
with the inputs it received after the previous step, then the outputs are copied along the
connections. A value crosses one connection per step, so a new joint motion needs a few steps to
reach the leaf and its wrenches a few more to come back up to the ground (6 here). Each trajectory
sample is therefore held for ``HOLD`` steps, and the test checks, deterministically, that the
outputs of the last two steps of every hold are bit-identical (the chain has settled: every FMU
saw the same inputs in both steps) before it compares them with the core at the sample's time.

The same FMUs driven by plain fmpy (one Gauss-Seidel sweep down and up the chain per sample) give
bit-identical numbers: the two importers feed the FMUs the same doubles.
"""

from __future__ import annotations

import math
import os
import re
import sys

import numpy as np
import pytest

pytest.importorskip(
    "libcosimpy.CosimExecution",
    reason="libcosimpy (PyPI 'libcosimpy', the libcosim co-simulation engine) is not installed",
)

from libcosimpy.CosimEnums import CosimExecutionState  # noqa: E402
from libcosimpy.CosimExecution import CosimExecution  # noqa: E402
from libcosimpy.CosimLogging import CosimLogLevel, log_output_level  # noqa: E402
from libcosimpy.CosimManipulator import CosimManipulator  # noqa: E402
from libcosimpy.CosimObserver import CosimObserver  # noqa: E402
from libcosimpy.CosimSlave import CosimLocalSlave  # noqa: E402

from titopfmu import (  # noqa: E402
    Constant,
    Engine,
    Ground,
    PrismaticBodyInverse,
    RevoluteBodyInverse,
    System,
    TimeFunction,
)
from titopfmu.spatial.rotations import dcm_from_quaternion  # noqa: E402

STEP_NS = 1_000_000  # communication step: 1 ms
HOLD = 8  # steps each trajectory sample is held (the chain settles in 6)
N_SAMPLES = 12
RTOL = 1e-9

GRAVITY = [0.4, -9.81, 1.3]


def _rotation(rng: np.random.Generator) -> np.ndarray:
    q = rng.standard_normal(4)
    return dcm_from_quaternion(q / np.linalg.norm(q))


def _inertia(rng: np.random.Generator, scale: float) -> np.ndarray:
    """A full (non-diagonal) physical inertia tensor: a cloud of point masses about its centroid."""
    r = rng.normal(size=(8, 3))
    r -= r.mean(axis=0)
    i = scale * sum(np.dot(p, p) * np.eye(3) - np.outer(p, p) for p in r)
    return 0.5 * (i + i.T)


def _unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


_RNG = np.random.default_rng(20261121)

# FMI parameter values of the four blocks (arrays are split into name[i] / name[i,j] below)
GROUND = {"C1.point": [0.2, -0.1, 0.5], "position": [1.0, -2.0, 0.3], "euler": [0.3, -0.2, 0.9]}
ARM = {
    "mass": 2.3, "inertia": _inertia(_RNG, 0.05), "com": [0.05, -0.4, 0.1],
    "C1.point": [0.1, -0.8, 0.05], "gravity": GRAVITY, "axis": _unit([0.2, 0.1, 1.0]),
    "P_a0b": _rotation(_RNG),
}  # fmt: skip
SLIDE = {
    "mass": 1.4, "inertia": _inertia(_RNG, 0.02), "com": [0.3, 0.02, -0.05],
    "C1.point": [0.6, 0.1, 0.0], "gravity": GRAVITY, "axis": _unit([1.0, 0.3, -0.2]),
    "P_ab": _rotation(_RNG),
}  # fmt: skip
HAND = {
    "mass": 0.7, "inertia": _inertia(_RNG, 0.01), "com": [0.0, 0.15, 0.2],
    "gravity": GRAVITY, "axis": _unit([0.0, 1.0, 0.4]), "P_a0b": _rotation(_RNG),
    "ext.point": [0.05, 0.2, 0.1], "ext.inertial": True,
}  # fmt: skip
#: a constant external wrench on the leaf (inertial frame, at ext.point)
EXT_W = [1.5, -0.7, 2.0, 0.1, -0.3, 0.25]

#: FMU instance -> (model identifier, parameter values)
CHAIN = {
    "ground": ("TitopGroundC1", GROUND),
    "arm": ("TitopRevoluteBodyInverseC1", ARM),
    "slide": ("TitopPrismaticBodyInverseC1", SLIDE),
    "hand": ("TitopRevoluteBodyInverseC0", HAND),
}
EDGES = [("ground", "arm"), ("arm", "slide"), ("slide", "hand")]  # parent's C1 -> child's P
JOINTS = ("arm", "slide", "hand")

#: imposed joint trajectories q(t) = a + b sin(w t + c) (rad or m), rates and accelerations exact
TRAJ = {
    "arm": (0.4, 0.9, 7.0, 0.3),
    "slide": (0.15, 0.2, 11.0, -1.0),
    "hand": (-0.5, 1.2, 5.0, 2.0),
}

#: compared outputs: (instance, FMI port, number of components; 0 = a scalar variable)
OUTPUTS = [("arm", "joint.tau", 0), ("slide", "joint.tau", 0), ("hand", "joint.tau", 0),
           ("ground", "body.W", 6), ("hand", "body.m", 18)]  # fmt: skip


def joint_motion(joint: str, t: float) -> list[float]:
    """[q̈, q̇, q] of a joint at time t."""
    a, b, w, c = TRAJ[joint]
    s, co = math.sin(w * t + c), math.cos(w * t + c)
    return [-b * w * w * s, b * w * co, a + b * s]


def sample_time(s: int) -> float:
    """Time of trajectory sample s, imposed from the start of communication step s * HOLD."""
    return s * HOLD * STEP_NS * 1e-9


def fmi_parameters(values: dict) -> dict[str, float | bool]:
    """Scalar FMI parameters (``name``, ``name[i]``, ``name[i,j]``) from arrays."""
    out: dict[str, float | bool] = {}
    for name, v in values.items():
        if isinstance(v, bool):
            out[name] = v
            continue
        a = np.asarray(v, dtype=float)
        if a.ndim == 0:
            out[name] = float(a)
        elif a.ndim == 1:
            out.update({f"{name}[{i + 1}]": float(a[i]) for i in range(a.size)})
        else:
            out.update(
                {f"{name}[{i + 1},{j + 1}]": float(a[i, j]) for i in range(3) for j in range(3)}
            )
    return out


def port_names(port: str, n: int) -> list[str]:
    return [port] if n == 0 else [f"{port}[{i + 1}]" for i in range(n)]


def assert_close(actual, expected, what: str) -> None:
    """Agreement to RTOL relative to the largest component (1 at least)."""
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    scale = max(1.0, float(np.max(np.abs(expected))))
    err = float(np.max(np.abs(actual - expected)))
    assert err <= RTOL * scale, f"{what}: {actual} != {expected} (max error {err:.3g})"


# -- the reference: the core's inverse dynamics ------------------------------------------------


def core_engine() -> Engine:
    s = System()
    s.add(
        Ground("ground", children={"C1": GROUND["C1.point"]}, position=GROUND["position"],
               euler=GROUND["euler"]),
        RevoluteBodyInverse("arm", ARM["mass"], ARM["inertia"], com=ARM["com"],
                            children={"C1": ARM["C1.point"]}, gravity=GRAVITY,
                            axis=ARM["axis"], P_a0b=ARM["P_a0b"]),
        PrismaticBodyInverse("slide", SLIDE["mass"], SLIDE["inertia"], com=SLIDE["com"],
                             children={"C1": SLIDE["C1.point"]}, gravity=GRAVITY,
                             axis=SLIDE["axis"], P_ab=SLIDE["P_ab"]),
        RevoluteBodyInverse("hand", HAND["mass"], HAND["inertia"], com=HAND["com"],
                            gravity=GRAVITY, axis=HAND["axis"], P_a0b=HAND["P_a0b"],
                            external={"ext": {"point": HAND["ext.point"], "frame": "inertial"}}),
        Constant("push", EXT_W),
        *(TimeFunction(f"q_{j}", lambda t, j=j: joint_motion(j, t), 3) for j in JOINTS),
    )  # fmt: skip
    for parent, child in EDGES:
        s.connect(f"{parent}.C1", f"{child}.P")
    for j in JOINTS:
        s.connect(f"q_{j}.y", f"{j}.joint.m")
    s.connect("push.y", "hand.ext")
    return Engine(s)


def core_outputs(engine: Engine, t: float) -> dict[str, np.ndarray]:
    ev = engine.evaluate(t, engine.initial_state())
    out = {f"{j}.joint.tau": engine.signal(ev, f"{j}.joint.tau") for j in JOINTS}
    out["ground.body.W"] = engine.signal(ev, "ground.W")
    out["hand.body.m"] = engine.signal(ev, "hand.m")
    return out


# -- fixtures ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fmu_paths(tmp_path_factory) -> dict[str, str]:
    from titopfmu.fmi.build import build_fmus

    out = tmp_path_factory.mktemp("fmus_libcosim")
    types = ["ground", "revolute_body_inverse", "prismatic_body_inverse"]
    by_model = {p.stem: str(p) for p in build_fmus(out, types=types, max_children=1)}
    return {inst: by_model[model] for inst, (model, _) in CHAIN.items()}


def _libcosim_error() -> str:
    try:
        from libcosimpy._internal import get_last_error_message

        return get_last_error_message()
    except Exception:  # a private helper of libcosimpy: only for the failure message
        return "?"


@pytest.fixture(scope="module")
def libcosim_run(fmu_paths, tmp_path_factory):
    """Run the chain in libcosim for N_SAMPLES * HOLD steps. Returns the observed outputs of the
    last two steps of every hold, by step number, and libcosim's log (warnings and errors)."""
    # libcosim logs (boost.log) to the process's stdout: capture fds 1 and 2 while it runs
    log_path = tmp_path_factory.mktemp("libcosim_log") / "log.txt"
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(log_path, "wb") as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
    try:
        log_output_level(CosimLogLevel.WARNING)
        kept = _run_libcosim(fmu_paths)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, copy in enumerate(saved, start=1):
            os.dup2(copy, fd)
            os.close(copy)
    return kept, log_path.read_text(errors="replace")


def _run_libcosim(fmu_paths: dict[str, str]) -> dict[int, dict[str, np.ndarray]]:
    ex = CosimExecution.from_step_size(STEP_NS)
    slaves, index, vrs = {}, {}, {}
    for inst in CHAIN:
        slaves[inst] = CosimLocalSlave(fmu_path=fmu_paths[inst], instance_name=inst)
        index[inst] = ex.add_local_slave(slaves[inst])
        assert index[inst] >= 0, f"libcosim could not load {fmu_paths[inst]}: {_libcosim_error()}"
        vrs[inst] = {v.name.decode(): v.reference for v in ex.slave_variables(index[inst])}

    # parameters and the constant external wrench, as initial values
    for inst, (_, values) in CHAIN.items():
        for name, value in fmi_parameters(values).items():
            if isinstance(value, bool):
                ok = ex.boolean_initial_value(index[inst], vrs[inst][name], value)
            else:
                ok = ex.real_initial_value(index[inst], vrs[inst][name], value)
            assert ok, f"libcosim refused the value of {inst}.{name}: {_libcosim_error()}"
    for i, w in enumerate(EXT_W):
        assert ex.real_initial_value(index["hand"], vrs["hand"][f"ext.W[{i + 1}]"], w)
    # motions down, wrenches up
    for parent, child in EDGES:
        pairs = [(parent, f"C1.m[{i}]", child, f"P.m[{i}]") for i in range(1, 19)]
        pairs += [(child, f"P.W[{i}]", parent, f"C1.W[{i}]") for i in range(1, 7)]
        for src, out, dst, inp in pairs:
            rc = ex.connect_real_variables(index[src], vrs[src][out], index[dst], vrs[dst][inp])
            assert rc == 0, f"libcosim refused {src}.{out} -> {dst}.{inp}: {_libcosim_error()}"

    observer = CosimObserver.create_last_value()
    assert ex.add_observer(observer)
    manipulator = CosimManipulator.create_override()
    assert ex.add_manipulator(manipulator)

    joint_vrs = {j: [vrs[j][f"joint.m[{i}]"] for i in (1, 2, 3)] for j in JOINTS}
    out_vrs = [(f"{inst}.{port}", index[inst], [vrs[inst][v] for v in port_names(port, n)])
               for inst, port, n in OUTPUTS]  # fmt: skip
    kept: dict[int, dict[str, np.ndarray]] = {}
    for k in range(N_SAMPLES * HOLD):
        if k % HOLD == 0:  # a new trajectory sample, applied to the inputs from step k on
            t = sample_time(k // HOLD)
            for j in JOINTS:
                assert manipulator.slave_real_values(index[j], joint_vrs[j], joint_motion(j, t))
        assert ex.step(1), f"libcosim step {k} failed: {ex.status()} {_libcosim_error()}"
        if k % HOLD >= HOLD - 2:
            kept[k] = {
                key: np.array(observer.last_real_values(i, refs)) for key, i, refs in out_vrs
            }
    status = ex.status()
    assert CosimExecutionState(status.state) != CosimExecutionState.ERROR, str(status)
    assert status.current_time == N_SAMPLES * HOLD * STEP_NS
    return kept


def _settled(kept: dict[int, dict[str, np.ndarray]], s: int) -> dict[str, np.ndarray]:
    """Outputs at the end of the hold of sample s, checked to be a fixed point of the scheme."""
    last = s * HOLD + HOLD - 1
    for key, value in kept[last].items():
        np.testing.assert_array_equal(
            kept[last - 1][key], value, err_msg=f"{key} has not settled by the end of sample {s}"
        )
    return kept[last]


# -- tests -------------------------------------------------------------------------------------


def test_libcosim_inverse_chain_matches_core(libcosim_run):
    kept, log = libcosim_run
    engine = core_engine()
    taus = []
    for s in range(N_SAMPLES):
        t = sample_time(s)
        got = _settled(kept, s)
        ref = core_outputs(engine, t)
        for key, value in got.items():
            assert_close(value, ref[key], f"{key} at t = {t:g} s")
        taus.append([float(got[f"{j}.joint.tau"][0]) for j in JOINTS])
    # the trajectory really moved every effort (the comparison is not of constants)
    assert np.min(np.ptp(np.array(taus), axis=0)) > 0.1
    # the FMI Library and libcosim had nothing to complain about (model descriptions, calls)
    complaints = [ln for ln in log.splitlines() if re.search(r"\[(warning|error|fatal)\]", ln)]
    assert not complaints, "libcosim logged:\n" + "\n".join(complaints)


def test_fmpy_gives_the_same_numbers_as_libcosim(fmu_paths, libcosim_run, tmp_path):
    """The same FMUs and parameters under plain fmpy: one sweep down (motions) and up (wrenches)
    per sample gives bit-identical outputs to libcosim's settled ones."""
    fmpy = pytest.importorskip("fmpy")
    from fmpy.fmi2 import FMU2Slave

    kept, _ = libcosim_run
    fmus, vrs = {}, {}
    try:
        for inst, (_, values) in CHAIN.items():
            md = fmpy.read_model_description(fmu_paths[inst])
            vrs[inst] = {v.name: v.valueReference for v in md.modelVariables}
            fmu = FMU2Slave(
                guid=md.guid, unzipDirectory=str(fmpy.extract(fmu_paths[inst], tmp_path / inst)),
                modelIdentifier=md.coSimulation.modelIdentifier, instanceName=inst,
            )  # fmt: skip
            fmus[inst] = fmu
            fmu.instantiate()
            fmu.setupExperiment(startTime=0.0)
            fmu.enterInitializationMode()
            for name, value in fmi_parameters(values).items():
                if isinstance(value, bool):
                    fmu.setBoolean([vrs[inst][name]], [value])
                else:
                    fmu.setReal([vrs[inst][name]], [value])
            fmu.exitInitializationMode()
        fmus["hand"].setReal([vrs["hand"][f"ext.W[{i + 1}]"] for i in range(6)], EXT_W)

        def get(inst: str, names: list[str]) -> list[float]:
            return fmus[inst].getReal([vrs[inst][n] for n in names])

        def put(inst: str, names: list[str], values: list[float]) -> None:
            fmus[inst].setReal([vrs[inst][n] for n in names], list(values))

        motion_out, motion_in = port_names("C1.m", 18), port_names("P.m", 18)
        wrench_out, wrench_in = port_names("P.W", 6), port_names("C1.W", 6)
        for s in range(N_SAMPLES):
            t = sample_time(s)
            for j in JOINTS:
                put(j, port_names("joint.m", 3), joint_motion(j, t))
            for parent, child in EDGES:
                put(child, motion_in, get(parent, motion_out))
            for parent, child in reversed(EDGES):
                put(parent, wrench_in, get(child, wrench_out))
            got = {f"{i}.{p}": np.array(get(i, port_names(p, n))) for i, p, n in OUTPUTS}
            for key, value in _settled(kept, s).items():
                np.testing.assert_array_equal(got[key], value, err_msg=f"{key} at t = {t:g} s")
            for inst in CHAIN:
                fmus[inst].doStep(currentCommunicationPoint=t, communicationStepSize=HOLD * 1e-3)
    finally:
        for fmu in fmus.values():
            fmu.terminate()
            fmu.freeInstance()
