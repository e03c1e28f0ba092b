"""Every FMU type run by a generic C host, as CS and as ME, against the core block.

``tests/core/fmu_host_any.c`` is an FMI 2.0 host written in C (no Python in its process): it
loads one FMU binary with ``dlopen``, sets parameters and inputs from a plan file, runs the unit
as a co-simulation unit (``fmi2DoStep``) or as a model-exchange unit (its own classical RK4 on
``fmi2GetDerivatives``, with the standard event-mode, continuous-time-mode and
``fmi2CompletedIntegratorStep`` calls), and prints the outputs at the end.
``tests/core/fmu3_host_any.c`` is the same host for the FMI 3.0 units (``fmi3DoStep``,
``fmi3GetContinuousStateDerivatives``, the ports as array variables set and read whole).

For each FMU type of the catalog, one variant (one child port where the type has child ports:
every port of a variant is the same code path in the wrapper, and the variants' port counts are
compared with the core by ``test_fmu.py``), random physical parameters (positive-definite
inertias within the triangle inequality, random axes and DCMs) and random held inputs (a parent
motion with non-zero acceleration and twist, child and external wrenches, efforts): every output
after 0.1 s must equal, to 1e-9, the same block of the core (``StandaloneBlock``) integrated by
scipy's DOP853 at rtol 1e-12 with the same held inputs, then evaluated at the end time. The
FMU integrates with RK4 (``solver.method`` 4) at 1 ms in both modes and both FMI versions.
"""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest
from fmpy import read_model_description
from scipy.integrate import solve_ivp
from test_fmu import fmi_values, output_vrs, random_inputs

from titopfmu.blocks.standalone import StandaloneBlock
from titopfmu.fmi.catalog import FMU_TYPES, random_values
from titopfmu.fmi.native.build import FMI_HEADERS, CoreObjects, build_native, compiler
from titopfmu.fmi.ports import port_variables

HOST = Path(__file__).parent / "core" / "fmu_host_any.c"
HOST3 = Path(__file__).parent / "core" / "fmu3_host_any.c"
TYPES = sorted(FMU_TYPES)
T_END, H = 0.1, 1e-3


def representative(key: str) -> int:
    """The child-port count of the variant run here: 1 when the type has child ports."""
    variants = FMU_TYPES[key].variants
    return 1 if 1 in variants else variants[0]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Every type's representative FMU, FMI 2.0 and 3.0 (Linux binary only), and the two
    hosts, built once."""
    out = tmp_path_factory.mktemp("host_all")
    core = CoreObjects(compiler(), False)
    built: dict = {"hosts": {}}
    try:
        for version in (2, 3):
            built[version] = {
                k: build_native(FMU_TYPES[k], representative(k), out / f"fmi{version}",
                                win64=False, core=core, fmi_version=version)
                for k in TYPES
            }  # fmt: skip
    finally:
        core.close()
    for version, source in ((2, HOST), (3, HOST3)):
        host = out / source.stem
        subprocess.run([compiler(), "-std=c99", "-D_POSIX_C_SOURCE=200809L", "-O2", "-Wall",
                        "-Wextra", "-Werror", "-I", str(FMI_HEADERS), str(source), "-o",
                        str(host), "-ldl", "-lm"], check=True)  # fmt: skip
        built["hosts"][version] = host
    return built


class _Names:
    """What the port helpers of test_fmu.py need: here the variables' FMI 2.0 names themselves
    (each FMI version maps them onto its own value references)."""

    class _Same(dict):
        def __missing__(self, key: str) -> str:
            return key

    vr = _Same()


def settings(ftype, n: int, values: dict, ports, u: dict) -> tuple[dict, dict, dict]:
    """Reals, integers and booleans set before initialization, by FMI 2.0 scalar name: the
    parameters (RK4 at 1 ms) and the held inputs."""
    reals, ints, bools = {}, {}, {}
    for p in ftype.params(n):
        if p.name not in values:
            continue
        if p.boolean:
            bools[p.name] = int(bool(values[p.name]))
        elif p.integer:
            ints[p.name] = int(values[p.name])
        else:
            a = np.asarray(values[p.name], dtype=float)
            reals.update({f: float(a[i]) for f, i in p.names()})
    ints["solver.method"] = 4
    reals["solver.max_step"] = H
    names, vals = fmi_values(_Names, ports, u)
    reals.update(zip(names, vals, strict=True))
    return reals, ints, bools


def plan2(md, reals: dict, ints: dict, bools: dict, outs: list[str]) -> list[str]:
    """The FMI 2.0 host's plan lines (``tests/core/fmu_host_plan.h``): one scalar a line."""
    vr = {v.name: v.valueReference for v in md.modelVariables}
    return [*(f"f64 {vr[k]} 1 {x!r}" for k, x in reals.items()),
            *(f"int {vr[k]} {x}" for k, x in ints.items()),
            *(f"bool {vr[k]} {x}" for k, x in bools.items()),
            *(f"out {vr[k]} 1" for k in outs)]  # fmt: skip


def fmi3_elements(md) -> dict[str, tuple]:
    """FMI 2.0 scalar name -> (FMI 3.0 variable, row-major index, element count)."""
    of = {}
    for v in md.modelVariables[1:]:
        dims = [int(d.start) for d in v.dimensions]
        if not dims:
            of[v.name] = (v, 0, 1)
        for k, idx in enumerate(np.ndindex(*dims) if dims else ()):
            of[f"{v.name}[{','.join(str(i + 1) for i in idx)}]"] = (v, k, int(np.prod(dims)))
    return of


def plan3(md, reals: dict, ints: dict, bools: dict, outs: list[str]) -> list[str]:
    """The FMI 3.0 host's plan lines: an array variable whole (unset elements at their start
    values), outputs as whole arrays in the order of the FMI 2.0 scalars asked for."""
    of = fmi3_elements(md)
    arrays: dict[int, list] = {}
    for name, x in reals.items():
        v, k, size = of[name]
        if v.valueReference not in arrays:
            start = str(v.start).split() if v.start is not None else ["0"] * size
            arrays[v.valueReference] = [float(s) for s in start]
        arrays[v.valueReference][k] = x
    lines = [f"f64 {vr} {len(a)} " + " ".join(repr(x) for x in a) for vr, a in arrays.items()]
    lines += [f"int {of[k][0].valueReference} {x}" for k, x in ints.items()]
    lines += [f"bool {of[k][0].valueReference} {x}" for k, x in bools.items()]
    seen = []
    for name in outs:
        v, _, size = of[name]
        if (v.valueReference, size) not in seen:
            seen.append((v.valueReference, size))
    return lines + [f"out {vr} {size}" for vr, size in seen]


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("key", TYPES)
def test_the_c_host_runs_every_fmu_type_as_cs_and_me_like_the_core(built, key, version,
                                                                   tmp_path):  # fmt: skip
    fmus, hosts = built[version], built["hosts"]
    ftype, n = FMU_TYPES[key], representative(key)
    fmu = fmus[key]
    unzipped = tmp_path / "x"
    with zipfile.ZipFile(fmu) as z:
        z.extractall(unzipped)
    md = read_model_description(str(fmu))
    rng = np.random.default_rng(TYPES.index(key) + 17)
    values = random_values(ftype.params(n), rng)
    sa = StandaloneBlock(ftype.make("ref", values, n))
    ports = port_variables(sa, ftype)
    u = random_inputs(sa, rng)
    x0 = sa.initial_state()
    xt = x0
    if len(x0):
        sol = solve_ivp(lambda t, x: sa.derivative(t, x, u), (0.0, T_END), x0, method="DOP853",
                        rtol=1e-12, atol=1e-12)  # fmt: skip
        assert sol.success
        xt = sol.y[:, -1]
    expected, _ = sa.evaluate(T_END, xt, u)
    outs = output_vrs(_Names, ports)  # core channel -> FMI 2.0 scalar names
    out_names = [name for names in outs.values() for name in names]
    nx = len(md.derivatives)
    assert nx == len(x0)
    reals, ints, bools = settings(ftype, n, values, ports, u)
    if version == 2:
        binary = unzipped / "binaries" / "linux64" / f"{fmu.stem}.so"
        resources = unzipped.as_uri() + "/resources"
        body = plan2(md, reals, ints, bools, out_names)
    else:
        binary = unzipped / "binaries" / "x86_64-linux" / f"{fmu.stem}.so"
        resources = str(unzipped / "resources") + "/"
        body = plan3(md, reals, ints, bools, out_names)
        # the whole arrays printed are exactly the FMI 2.0 scalars asked for, in order
        of, by_vr = fmi3_elements(md), {v.valueReference: v for v in md.modelVariables}
        printed = [name for line in body if line.startswith("out ")
                   for name, (v, _, _) in of.items()
                   if v is by_vr[int(line.split()[1])]]  # fmt: skip
        assert printed == out_names
    for mode in ("cs", "me"):
        plan = tmp_path / f"{mode}.plan"
        lines = [f"mode {mode}", f"states {nx}", f"steps {H!r} {round(T_END / H)}", *body]
        plan.write_text("\n".join(lines) + "\n")
        p = subprocess.run([str(hosts[version]), str(binary), md.guid, resources, str(plan)],
                           capture_output=True, text=True)  # fmt: skip
        assert p.returncode == 0, (version, mode, p.returncode, p.stderr[-2000:])
        got = np.array([float(v) for v in p.stdout.split()])
        assert len(got) == len(out_names)
        k = 0
        for core, names in outs.items():
            where = f"FMI {version} {key} {mode} {core}"
            np.testing.assert_allclose(got[k : k + len(names)], expected[core], rtol=1e-9,
                                       atol=1e-9, err_msg=where)  # fmt: skip
            k += len(names)
    if nx:  # the run moved the state: the comparison is not of initial values
        moved, _ = sa.evaluate(T_END, x0, u)
        assert max(np.max(np.abs(moved[c] - expected[c])) for c in outs) > 1e-4
