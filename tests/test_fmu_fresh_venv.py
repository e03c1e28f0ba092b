"""The FMUs are self-contained: they run in a fresh virtual environment without titopfmu.

A real venv (``python -m venv``, no system site packages) gets numpy, scipy and fmpy, pinned to
the versions of the test environment (so pip takes the wheels from its cache when it can), and
nothing else: neither titopfmu nor pythonfmu (the FMUs are native: the C core and the FMI wrapper
in their binaries; they load no Python module at all). The venv's python loads built FMUs with
fmpy, sets random parameters and inputs, takes a few steps and writes every output; the test runs
the same sequence with fmpy in this process and requires the same numbers (1e-12, and bit for bit
when the binaries are the very same in both environments).

The venv is created once per session (~20 s with a warm pip cache). If it cannot be created or pip
cannot install the packages (no network, no index), the test is skipped with pip's message.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest
from fmpy import read_model_description

from titopfmu.fmi.build import build_fmus
from titopfmu.fmi.catalog import FMU_TYPES, random_values

#: packages the fresh venv gets (and their dependencies), pinned to this environment's versions
VENV_PACKAGES = ("numpy", "scipy", "fmpy")
VENV_CREATE_TIMEOUT = 300  # s
PIP_TIMEOUT = 900  # s: generous (a cold cache downloads ~100 MB), yet bounded for CI
RUN_TIMEOUT = 600  # s

#: (FMU, seed) cases: C0 and C1 variants of a root body and of a joint body, and a second instance
CASES = [
    ("TitopRevoluteBodyC1", 1),
    ("TitopRigidBodyC1", 2),
    ("TitopRevoluteBodyC0", 3),
    ("TitopRigidBodyC0", 4),
    ("TitopRevoluteBodyC1", 5),
]
STEPS = (1e-3, 2.5e-3, 1e-3)  # communication steps (s); inputs change before each
T0 = 0.25

#: Runs in the fresh venv (as a script) and in this process (exec'd): fmpy only, no titopfmu.
RUNNER = r'''
"""Run FMUs with fmpy alone: read cases (JSON), write every output and the environment (JSON)."""

import importlib.metadata
import importlib.util
import json
import sys
from pathlib import Path


def binary_fingerprint(dist_name):
    """sha256 of every compiled file of an installed distribution, from its RECORD."""
    files = importlib.metadata.distribution(dist_name).files or []
    return sorted(
        [str(f), f.hash.value if f.hash else None]
        for f in files
        if str(f).endswith((".so", ".pyd", ".dylib"))
    )


def environment(packages):
    return {
        "executable": sys.executable,
        "prefix": sys.prefix,
        "base_prefix": sys.base_prefix,
        "sys_path": list(sys.path),
        "versions": {p: importlib.metadata.version(p) for p in packages},
        "binaries": {p: binary_fingerprint(p) for p in ("numpy", "scipy")},
        "titopfmu_importable": importlib.util.find_spec("titopfmu") is not None,
        "pythonfmu_importable": importlib.util.find_spec("pythonfmu") is not None,
    }


def loaded_modules():
    """Top-level modules named like titopfmu, its FMU copies or pythonfmu, with their files."""
    return {
        name: getattr(module, "__file__", None)
        for name, module in sorted(sys.modules.items())
        if "." not in name and ("titopfmu" in name or name == "pythonfmu")
    }


def run_case(case, workdir):
    """Instantiate, set parameters, initialize, then per step: set inputs, read outputs,
    doStep, read outputs."""
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave

    md = read_model_description(case["fmu"])
    unzipdir = extract(case["fmu"], unzipdir=str(Path(workdir) / case["instance"]))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    kind = {v.name: v.type for v in md.modelVariables}
    outputs = [v.name for v in md.modelVariables if v.causality == "output"]
    out_vrs = [vr[n] for n in outputs]
    fmu = FMU2Slave(
        guid=md.guid,
        unzipDirectory=unzipdir,
        modelIdentifier=md.coSimulation.modelIdentifier,
        instanceName=case["instance"],
    )
    fmu.instantiate(loggingOn=True)  # messages go to stdout (fmpy default logger)
    frames = []
    try:
        t = case["t0"]
        fmu.setupExperiment(startTime=t)
        fmu.enterInitializationMode()
        params = case["parameters"]
        reals = [k for k in params if kind[k] == "Real"]
        bools = [k for k in params if kind[k] == "Boolean"]
        assert len(reals) + len(bools) == len(params), "parameters of unexpected type"
        if reals:
            fmu.setReal([vr[k] for k in reals], [float(params[k]) for k in reals])
        if bools:
            fmu.setBoolean([vr[k] for k in bools], [bool(params[k]) for k in bools])
        fmu.exitInitializationMode()
        frames.append({"t": t, "outputs": fmu.getReal(out_vrs)})
        for step in case["steps"]:
            inputs = step["inputs"]
            if inputs:
                fmu.setReal([vr[k] for k in inputs], [float(x) for x in inputs.values()])
            before = fmu.getReal(out_vrs)
            fmu.doStep(t, step["h"])
            t += step["h"]
            frames.append({"t": t, "before": before, "outputs": fmu.getReal(out_vrs)})
        fmu.terminate()
    finally:
        fmu.freeInstance()
    return {"outputs": outputs, "frames": frames}


def main(cases_file, result_file, workdir, packages):
    cases = json.loads(Path(cases_file).read_text())
    result = {"environment": environment(packages)}
    result["runs"] = {c["instance"]: run_case(c, workdir) for c in cases}
    result["modules"] = loaded_modules()
    Path(result_file).write_text(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(","))
'''


def _runner_namespace() -> dict:
    namespace = {"__name__": "titopfmu_fresh_venv_runner"}
    exec(compile(RUNNER, "<fresh venv runner>", "exec"), namespace)
    return namespace


def _clean_env() -> dict[str, str]:
    """This process's environment (pip configuration, certificates) without what would let the
    venv see this environment's packages or break a venv install."""
    drop = {"VIRTUAL_ENV", "CONDA_PREFIX", "PIP_USER", "PIP_TARGET", "PIP_PREFIX", "PIP_ROOT"}
    return {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("PYTHON")}


def _tail(text: str, n: int = 25) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


def _dependency_closure(names) -> dict[str, str]:
    """name -> installed version of ``names`` and of their (non-extra) requirements."""
    pins: dict[str, str] = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in pins:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # e.g. a platform-conditional requirement not installed here
        pins[key] = dist.version
        for req in dist.requires or []:
            if re.search(r"\bextra\s*==", req):
                continue
            m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
            if m:
                todo.append(m.group(1))
    return pins


@pytest.fixture(scope="session")
def fresh_venv(tmp_path_factory) -> Path:
    """Python of a new venv with numpy, scipy and fmpy at this environment's versions."""
    root = tmp_path_factory.mktemp("fresh_venv")
    venv = root / "venv"
    env = _clean_env()
    t_start = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True,
                              text=True, timeout=VENV_CREATE_TIMEOUT, env=env)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.skip(f"python -m venv did not finish in {VENV_CREATE_TIMEOUT} s")
    if proc.returncode != 0:
        pytest.skip(f"cannot create a venv (ensurepip missing?):\n{_tail(proc.stderr)}")
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")

    pins = _dependency_closure(VENV_PACKAGES)
    constraints = root / "constraints.txt"
    constraints.write_text("".join(f"{k}=={v}\n" for k, v in sorted(pins.items())))
    wanted = [f"{p}=={metadata.version(p)}" for p in VENV_PACKAGES]
    cmd = [str(python), "-m", "pip", "install", "--no-input", "--disable-pip-version-check",
           "--retries", "2", "-c", str(constraints), *wanted]  # fmt: skip
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=PIP_TIMEOUT, env=env,
                              cwd=root)  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.skip(f"pip could not install {wanted} in {PIP_TIMEOUT} s (network?)")
    if proc.returncode != 0:
        pytest.skip(
            f"pip could not install {wanted} into a fresh venv (no network or index?):\n"
            f"{_tail(proc.stdout, 5)}\n{_tail(proc.stderr)}"
        )
    fresh_venv_seconds = time.perf_counter() - t_start
    print(f"\nfresh venv with {', '.join(wanted)} in {fresh_venv_seconds:.1f} s: {venv}")
    return python


@pytest.fixture(scope="module")
def fmus(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("fresh_venv_fmus")
    paths = build_fmus(out, types=["revolute_body", "rigid_body"], max_children=1)
    return {p.stem: p for p in paths}


def _model_type(model: str):
    for t in FMU_TYPES.values():
        for n in t.variants:
            if t.model_name(n) == model:
                return t, n
    raise KeyError(model)


def _input_value(name: str, rng: np.random.Generator) -> float:
    # Euler angles of a motion vector (components 16-18): keep the pitch away from gimbal lock
    m = re.search(r"\.m\[(\d+)\]$", name)
    if m and int(m.group(1)) >= 16:
        return float(rng.uniform(-1.2, 1.2))
    return float(rng.normal(0.0, 0.8))


def make_case(fmu_path: Path, seed: int) -> dict:
    """Random parameters (flattened to FMI names) and random inputs for each step, as JSON."""
    model = fmu_path.stem
    ftype, n = _model_type(model)
    rng = np.random.default_rng(seed)
    values = random_values(ftype.params(n), rng)
    params = {}
    for p in ftype.params(n):
        value = values[p.name]
        if p.boolean:
            params[p.name] = bool(value)
            continue
        a = np.asarray(value, dtype=float)
        for fname, idx in p.names():
            params[fname] = float(a[idx])
    md = read_model_description(str(fmu_path))
    inputs = [v.name for v in md.modelVariables if v.causality == "input"]
    assert set(params) <= {v.name for v in md.modelVariables}
    steps = [{"h": h, "inputs": {k: _input_value(k, rng) for k in inputs}} for h in STEPS]
    return {"fmu": str(fmu_path), "instance": f"{model}_{seed}", "t0": T0,
            "parameters": params, "steps": steps}  # fmt: skip


def test_venv_has_numpy_scipy_fmpy_but_neither_titopfmu_nor_pythonfmu(fresh_venv):
    code = (
        "import importlib.metadata as m, importlib.util as u, json, sys;"
        "print(json.dumps({'prefix': sys.prefix, 'base': sys.base_prefix,"
        "'dists': sorted(d.metadata['Name'].lower() for d in m.distributions()),"
        "'titopfmu': u.find_spec('titopfmu') is not None,"
        "'pythonfmu': u.find_spec('pythonfmu') is not None}))"
    )
    proc = subprocess.run([str(fresh_venv), "-I", "-c", code], capture_output=True, text=True,
                          timeout=RUN_TIMEOUT, env=_clean_env())  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert Path(info["prefix"]) == fresh_venv.parent.parent
    assert info["prefix"] != info["base"]
    for p in VENV_PACKAGES:
        assert p in info["dists"], info["dists"]
    assert "titopfmu" not in info["dists"] and not info["titopfmu"]
    assert "pythonfmu" not in info["dists"] and not info["pythonfmu"]
    proc = subprocess.run([str(fresh_venv), "-I", "-c", "import titopfmu"], capture_output=True,
                          text=True, timeout=RUN_TIMEOUT, env=_clean_env())  # fmt: skip
    assert proc.returncode != 0
    assert "No module named 'titopfmu'" in proc.stderr, proc.stderr


def test_fmus_give_the_same_outputs_in_a_fresh_venv(fresh_venv, fmus, tmp_path):
    cases = [make_case(fmus[name], seed) for name, seed in CASES]
    cases_file = tmp_path / "cases.json"
    cases_file.write_text(json.dumps(cases))
    (tmp_path / "runner.py").write_text(RUNNER)
    (tmp_path / "venv_work").mkdir()
    result_file = tmp_path / "venv_result.json"
    cmd = [str(fresh_venv), "-I", str(tmp_path / "runner.py"), str(cases_file), str(result_file),
           str(tmp_path / "venv_work"), ",".join(VENV_PACKAGES)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT,
                          env=_clean_env(), cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, f"fresh venv run failed:\n{proc.stdout}\n{proc.stderr}"
    venv = json.loads(result_file.read_text())

    # it really ran in the venv, on the pinned packages, without titopfmu or pythonfmu installed
    env = venv["environment"]
    assert Path(env["prefix"]) == fresh_venv.parent.parent and env["prefix"] != env["base_prefix"]
    assert env["versions"] == {p: metadata.version(p) for p in VENV_PACKAGES}
    assert not env["titopfmu_importable"] and not env["pythonfmu_importable"]
    assert not any("site-packages" in p and not p.startswith(env["prefix"])
                   for p in env["sys_path"]), env["sys_path"]  # fmt: skip
    # ... and the FMUs loaded no Python code at all (native: the C core in their binaries)
    modules = venv["modules"]
    assert not any("titopfmu" in m for m in modules), modules
    assert "pythonfmu" not in modules, modules

    # the same sequence in this process
    here = _runner_namespace()
    (tmp_path / "here_work").mkdir()
    same_binaries = here["environment"](VENV_PACKAGES)["binaries"] == env["binaries"]
    for case in cases:
        got = venv["runs"][case["instance"]]
        expected = here["run_case"](case, str(tmp_path / "here_work"))
        assert got["outputs"] == expected["outputs"] and got["outputs"]
        assert len(got["frames"]) == len(expected["frames"]) == len(STEPS) + 1
        for k, (g, e) in enumerate(zip(got["frames"], expected["frames"], strict=True)):
            assert g["t"] == e["t"]
            for key in ("before", "outputs"):
                if key not in e:
                    continue
                where = f"{case['instance']} frame {k} {key}"
                a, b = np.array(g[key]), np.array(e[key])
                assert np.all(np.isfinite(b)), where
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=where)
                if same_binaries:
                    assert g[key] == e[key], f"{where}: not bit-identical"
        # not a vacuous comparison: the states moved over the steps
        first = np.array(expected["frames"][0]["outputs"])
        last = np.array(expected["frames"][-1]["outputs"])
        assert np.max(np.abs(last - first)) > 1e-6
