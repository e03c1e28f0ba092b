"""Every FMU type run by a generic C host, as CS and as ME, against the core block.

``tests/core/fmu_host_any.c`` is an FMI 2.0 host written in C (no Python in its process): it
loads one FMU binary with ``dlopen``, sets parameters and inputs from a plan file, runs the unit
as a co-simulation unit (``fmi2DoStep``) or as a model-exchange unit (its own classical RK4 on
``fmi2GetDerivatives``, with the standard event-mode, continuous-time-mode and
``fmi2CompletedIntegratorStep`` calls), and prints the outputs at the end.

For each FMU type of the catalog, one variant (one child port where the type has child ports:
every port of a variant is the same code path in the wrapper, and the variants' port counts are
compared with the core by ``test_fmu.py``), random physical parameters (positive-definite
inertias within the triangle inequality, random axes and DCMs) and random held inputs (a parent
motion with non-zero acceleration and twist, child and external wrenches, efforts): every output
after 0.1 s must equal, to 1e-9, the same block of the core (``StandaloneBlock``) integrated by
scipy's DOP853 at rtol 1e-12 with the same held inputs, then evaluated at the end time. The
FMU integrates with RK4 (``solver.method`` 4) at 1 ms in both modes.
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
TYPES = sorted(FMU_TYPES)
T_END, H = 0.1, 1e-3


def representative(key: str) -> int:
    """The child-port count of the variant run here: 1 when the type has child ports."""
    variants = FMU_TYPES[key].variants
    return 1 if 1 in variants else variants[0]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Every type's representative FMU (Linux binary only) and the host, built once."""
    out = tmp_path_factory.mktemp("host_all")
    core = CoreObjects(compiler(), False)
    try:
        fmus = {k: build_native(FMU_TYPES[k], representative(k), out, win64=False, core=core)
                for k in TYPES}  # fmt: skip
    finally:
        core.close()
    host = out / "fmu_host_any"
    subprocess.run([compiler(), "-std=c99", "-D_POSIX_C_SOURCE=200809L", "-O2", "-Wall",
                    "-Wextra", "-Werror", "-I", str(FMI_HEADERS), str(HOST), "-o", str(host),
                    "-ldl", "-lm"], check=True)  # fmt: skip
    return fmus, host


class _Names:
    """What the port helpers of test_fmu.py need of a loaded FMU: its value references."""

    def __init__(self, md) -> None:
        self.vr = {v.name: v.valueReference for v in md.modelVariables}


def plan_lines(ftype, n: int, values: dict, names: _Names, ports, u: dict) -> list[str]:
    """The host's plan: parameters (RK4 at 1 ms), the held inputs."""
    lines = []
    for p in ftype.params(n):
        if p.name not in values:
            continue
        if p.boolean:
            lines.append(f"bool {names.vr[p.name]} {int(bool(values[p.name]))}")
        elif p.integer:
            lines.append(f"int {names.vr[p.name]} {int(values[p.name])}")
        else:
            a = np.asarray(values[p.name], dtype=float)
            lines += [f"real {names.vr[f]} {float(a[i])!r}" for f, i in p.names()]
    lines += [f"int {names.vr['solver.method']} 4", f"real {names.vr['solver.max_step']} {H!r}"]
    vrs, vals = fmi_values(names, ports, u)
    lines += [f"real {v} {x!r}" for v, x in zip(vrs, vals, strict=True)]
    return lines


@pytest.mark.parametrize("key", TYPES)
def test_the_c_host_runs_every_fmu_type_as_cs_and_me_like_the_core(built, key, tmp_path):
    fmus, host = built
    ftype, n = FMU_TYPES[key], representative(key)
    fmu = fmus[key]
    unzipped = tmp_path / "x"
    with zipfile.ZipFile(fmu) as z:
        z.extractall(unzipped)
    md = read_model_description(str(fmu))
    names = _Names(md)
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
    outs = output_vrs(names, ports)
    nx = len(md.derivatives)
    assert nx == len(x0)
    so = unzipped / "binaries" / "linux64" / f"{fmu.stem}.so"
    results = {}
    for mode in ("cs", "me"):
        plan = tmp_path / f"{mode}.plan"
        lines = [f"mode {mode}", f"states {nx}", f"steps {H!r} {round(T_END / H)}",
                 *plan_lines(ftype, n, values, names, ports, u),
                 *(f"out {v}" for vrs in outs.values() for v in vrs)]  # fmt: skip
        plan.write_text("\n".join(lines) + "\n")
        p = subprocess.run([str(host), str(so), md.guid, unzipped.as_uri() + "/resources",
                            str(plan)], capture_output=True, text=True)  # fmt: skip
        assert p.returncode == 0, (mode, p.returncode, p.stderr[-2000:])
        got = np.array([float(v) for v in p.stdout.split()])
        k = 0
        for core, vrs in outs.items():
            np.testing.assert_allclose(got[k : k + len(vrs)], expected[core], rtol=1e-9,
                                       atol=1e-9, err_msg=f"{key} {mode} {core}")  # fmt: skip
            k += len(vrs)
        results[mode] = got
    if nx:  # the run moved the state: the comparison is not of initial values
        moved, _ = sa.evaluate(T_END, x0, u)
        assert max(np.max(np.abs(moved[c] - expected[c])) for c in outs) > 1e-4
