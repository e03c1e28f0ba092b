"""The native FMUs' directional derivatives are computed once per seed and kept while nothing
changes (titopfmu/fmi/native/fmu_block.c): a kept value must never outlive a change of inputs,
states or time. Checked against central differences of the FMU's own outputs (a path that does
not touch the derivative code), at one point, then after each kind of change, asking the same
seed again each time."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave

from titopfmu.fmi.catalog import FMU_TYPES
from titopfmu.fmi.native.build import build_native


@pytest.fixture(scope="module")
def fmu(tmp_path_factory):
    out = tmp_path_factory.mktemp("ddcache")
    path = build_native(FMU_TYPES["revolute_body"], 1, out, win64=False)
    md = read_model_description(str(path))
    d = extract(str(path))
    f = FMU2Slave(guid=md.guid, unzipDirectory=d, modelIdentifier=md.coSimulation.modelIdentifier)
    f.instantiate()
    f.setupExperiment(startTime=0.0)
    vr = {v.name: v.valueReference for v in md.modelVariables}
    # an offset centre of mass and child port, a tilted axis, a spinning joint: every
    # derivative below is non-trivial
    names = ["com[1]", "com[2]", "C1.point[1]", "C1.point[3]", "axis[1]", "axis[3]",
             "theta_dot0", "inertia[1,1]", "inertia[2,2]", "inertia[3,3]"]  # fmt: skip
    f.setReal([vr[n] for n in names], [0.3, -0.4, 0.5, 0.2, 0.6, 0.8, 1.5, 0.2, 0.3, 0.4])
    f.enterInitializationMode()
    f.exitInitializationMode()
    yield f, vr
    f.terminate()
    f.freeInstance()
    shutil.rmtree(d, ignore_errors=True)


def central(f, outs, vr_in, h=1e-6):
    (x0,) = f.getReal([vr_in])
    f.setReal([vr_in], [x0 + h])
    yp = np.array(f.getReal(outs))
    f.setReal([vr_in], [x0 - h])
    ym = np.array(f.getReal(outs))
    f.setReal([vr_in], [x0])
    return (yp - ym) / (2 * h)


def test_a_kept_derivative_never_outlives_a_change(fmu):
    f, vr = fmu
    # outputs that depend non-linearly on the parent's twist: the child's acceleration and the
    # wrench to the parent
    outs = [vr[f"C1.m[{i}]"] for i in range(1, 7)] + [vr[f"P.W[{i}]"] for i in range(1, 7)]
    known = vr["P.m[12]"]  # the parent's ω_z
    f.setReal([vr["P.m[10]"], vr["P.m[11]"], known, vr["joint.tau"]], [0.3, -0.2, 0.5, 0.1])

    def check(what):
        d1 = np.array(f.getDirectionalDerivative(outs, [known], [1.0]))
        d2 = np.array(f.getDirectionalDerivative(outs, [known], [1.0]))  # the kept value
        ref = central(f, outs, known)
        assert np.array_equal(d1, d2), what
        assert np.allclose(d1, ref, rtol=1e-7, atol=1e-7), (what, d1, ref)
        return d1

    before = check("first point")
    f.setReal([known], [2.0])  # the seed's own input
    after_input = check("after the known input changed")
    f.setReal([vr["P.m[10]"]], [-1.1])  # another input
    after_other = check("after another input changed")
    f.doStep(0.0, 0.01)  # states and time
    after_step = check("after a step")
    for a, b in ((before, after_input), (after_input, after_other), (after_other, after_step)):
        assert np.max(np.abs(a - b)) > 1e-3  # each change does change the derivative
