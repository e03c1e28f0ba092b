"""Whole-model FMUs with flexible bodies (issue 34; docs/flexible.md §6, docs/fmus.md "Model
FMUs"): a flexible part's reduced model is constant data of the FMU (its configuration's tables,
made by titopfmu.core.model's flex_ints and flex_row), its elastic coordinates and rates are
continuous states, their initial values parameters.

The references are the in-process engine's (titopfmu.Engine) on the same System, whose state
derivative the core computes from the same reduced model: the FMU's model-exchange derivatives
at the initial and at perturbed states, and its co-simulation runs (its internal DOP853 against
scipy's DOP853, both at tight tolerances), in FMI 2.0 and 3.0. Two systems: a flexible strip on
a revolute joint swinging under gravity, and a free-floating rigid hub carrying two flexible
arrays on revolute joints (one reduced model for both).
"""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

import titopfmu as t
from titopfmu.flex import Beam, Section, cantilever_modes

fmpy = pytest.importorskip("fmpy")
from flex_systems import hub_with_arrays, linked, pendulum, strip  # noqa: E402
from fmpy import read_model_description, simulate_fmu  # noqa: E402
from fmpy.validation import validate_fmu  # noqa: E402
from fmu_helpers import MeInstance  # noqa: E402

#: the initial elastic state of the pendulum's strip: small deflections and rates of its 6 modes
#: (mass-normalised coordinates, sqrt(kg) m)
Q0 = np.linspace(1e-4, 6e-4, 6)
QD0 = np.linspace(-2e-3, 3e-3, 6)
#: tight tolerances both sides (the FMU's solver.rtol / solver.atol and the engine's)
RTOL, ATOL = 1e-10, 1e-12


@pytest.fixture(scope="module")
def red():
    fe = strip().fe_model()
    return cantilever_modes(fe, 6, [fe.n_nodes - 1], damping=0.01)


@pytest.fixture(scope="module")
def red_array():
    beam = Beam("array", 1.5, 70e9, 2700.0, Section.rectangle(0.3, 0.01), nu=0.3, n_elements=4)
    return cantilever_modes(beam.fe_model(), 6, damping=0.005)


@pytest.fixture(scope="module")
def systems(red, red_array):
    return {"pendulum": lambda: pendulum(red, Q0, QD0),
            "hub": lambda: hub_with_arrays(red_array, moving=True),
            "linked": lambda: linked(red, Q0)}


@pytest.fixture(scope="module")
def fmus(systems, tmp_path_factory):
    out = tmp_path_factory.mktemp("flex_model_fmu")
    return {k: t.export_fmu(make(), out / f"{k}.fmu", win64=False) for k, make in systems.items()}


def state_names(system: t.System) -> list[str]:
    """The FMU's state variables, in the engine's order: ``block.state.NAME``."""
    e = t.Engine(system)
    names = [""] * e.n_states
    for _, b, sl in e.stateful:
        for k, n in enumerate(b.state_names):
            names[sl.start + k] = f"{b.name}.state.{n}"
    return names


def test_states_and_initial_values_are_declared(fmus, systems):
    """The elastic states are continuous states after the block's own, by the block's state
    names; their initial values parameters ``block.elastic_q0[k]``, ``block.elastic_qdot0[k]``
    starting at the block's; the reduced model's matrices are no variable of the FMU."""
    for key, path in fmus.items():
        s = systems[key]()
        assert validate_fmu(str(path)) == []
        md = read_model_description(str(path))
        v = {x.name: x for x in md.modelVariables}
        ders = [d.variable.name for d in md.derivatives]
        assert ders == [f"der({n})" for n in state_names(s)]
        for b in s.blocks.values():
            red = getattr(b, "flexible", None)
            if red is None:
                continue
            for k in range(red.n_modes):
                for p in ("elastic_q0", "elastic_qdot0"):
                    values = getattr(b, p)
                    x = v[f"{b.name}.{p}[{k + 1}]"]
                    assert x.causality == "parameter"
                    assert float(x.start) == values[k]
                assert f"{b.name}.state.q.{red.coordinates[k]}" in v
        assert not [n for n in v if any(m in n for m in ("Mee", "Kee", "KG", "Ct"))]


def _table(header: str, name: str) -> np.ndarray:
    """The values of the constant table ``name`` of a generated fmu_config.h."""
    body = header.split(f" {name}[]")[1].split("{", 1)[1].split("};", 1)[0]
    body = body.replace("{", " ").replace("}", " ")
    return np.array([float(v) for v in body.replace(",", " ").split()])


def test_the_reduced_model_is_the_fmus_constant_data(fmus, systems):
    """The FMU's tables hold the core's row of each reduced model (flex_row) to the last bit,
    once for the two arrays that share one, and each part's ints (flex_ints)."""
    from titopfmu.core.model import flex_ints, flex_row

    for key, path in fmus.items():
        s = systems[key]()
        with zipfile.ZipFile(path) as z:
            header = z.read("sources/fmu_config.h").decode()
        flexible = [b for b in s.blocks.values() if getattr(b, "flexible", None) is not None]
        row = flex_row(flexible[0].flexible)
        np.testing.assert_array_equal(_table(header, "FMU_FLEX_ROW"), row)  # one row
        parts = _table(header, "FMU_FLEX_PARTS").reshape(-1, 4)
        assert len(parts) == len(flexible) and not parts[:, 1].any()
        assert np.all(parts[:, 3] == row.size)
        ints = _table(header, "FMU_FLEX_INTS")
        e = t.Engine(s)
        for k, b in enumerate(flexible):
            i = e.native.blocks.index(b)
            x0 = e.plan.state_slices[b.name].stop - 2 * b.flexible.n_modes
            want = flex_ints(i, b.flexible, x0)
            a = int(parts[k, 0])
            np.testing.assert_array_equal(ints[a : a + len(want)], want)


@pytest.mark.parametrize("key", ["pendulum", "hub", "linked"])
def test_model_exchange_derivatives_are_the_engines(fmus, systems, key):
    """At the initial state (the block's initial values) and at perturbed states, the FMU's
    state derivative equals the engine's (the same core on the same reduced model) to 1e-9
    relative."""
    s = systems[key]()
    e = t.Engine(s)
    me = MeInstance(fmus[key])
    try:
        x = me.state()
        np.testing.assert_array_equal(x, e.initial_state())
        rng = np.random.default_rng(34)
        points = [x] + [x + 1e-2 * rng.standard_normal(x.size) * np.maximum(np.abs(x), 0.1)
                        for _ in range(3)]  # fmt: skip
        for xp in points:
            dx = me.derivative(xp)
            ref = e.derivative(0.0, xp)
            scale = np.abs(ref).max()
            assert scale > 1.0  # the elastic accelerations at least: not a state at rest
            np.testing.assert_allclose(dx, ref, rtol=1e-9, atol=1e-9 * scale)
    finally:
        me.close()


@pytest.mark.parametrize("key", ["pendulum", "hub"])
def test_directional_derivatives_are_the_engines_jacobian(fmus, systems, key):
    """The FMU's exact directional derivatives of the state derivative (the core's complex step
    on the FMU's tables) are the engine's Jacobian, at a perturbed state, to 1e-12 of its
    largest entry."""
    e = t.Engine(systems[key]())
    me = MeInstance(fmus[key])
    try:
        x = me.state()
        x = x + 1e-2 * np.random.default_rng(7).standard_normal(x.size) * np.maximum(
            np.abs(x), 0.1)
        me.derivative(x)
        J = e.jacobian(0.0, x)
        md = read_model_description(str(fmus[key]))
        ders = [d.variable.valueReference for d in md.derivatives]
        xs = [me.vr[n] for n in state_names(systems[key]())]
        Jf = np.array([me.fmu.getDirectionalDerivative(ders, [xs[k]], [1.0])
                       for k in range(len(xs))]).T  # fmt: skip
        assert np.abs(J).max() > 1.0  # (the elastic stiffness's: -Mee^-1 Kee, rad^2/s^2)
        np.testing.assert_allclose(Jf, J, rtol=1e-12, atol=1e-12 * np.abs(J).max())
    finally:
        me.close()


def test_elastic_start_values_set_the_initial_state(fmus, red):
    """``arm.elastic_q0[k]`` and ``arm.elastic_qdot0[k]`` set before initialisation are the
    initial state, as the block's elastic_q0 / elastic_qdot0 are the engine's."""
    q0 = Q0[::-1] * 2.0
    qd0 = -QD0
    start = {f"arm.elastic_q0[{k + 1}]": q0[k] for k in range(6)}
    start.update({f"arm.elastic_qdot0[{k + 1}]": qd0[k] for k in range(6)})
    me = MeInstance(fmus["pendulum"], start)
    try:
        x = me.state()
        e = t.Engine(pendulum(red, q0, qd0))
        np.testing.assert_array_equal(x, e.initial_state())
        assert np.array_equal(x[2:8], q0) and np.array_equal(x[8:14], qd0)
        ref = e.derivative(0.0, x)
        np.testing.assert_allclose(me.derivative(), ref, rtol=1e-9,
                                   atol=1e-9 * np.abs(ref).max())  # fmt: skip
    finally:
        me.close()


def _cosim_error(path, system: t.System, t_final: float, interval: float) -> tuple[float, float]:
    """(largest difference of the FMU's co-simulation run from the engine's, each state scaled
    by its largest magnitude; the largest elastic excursion relative to its start) over
    ``t_final`` s, sampled every ``interval`` s."""
    names = state_names(system)
    r = simulate_fmu(str(path), fmi_type="CoSimulation", stop_time=t_final,
                     output_interval=interval, output=names,
                     start_values={"solver.rtol": RTOL, "solver.atol": ATOL})  # fmt: skip
    e = t.Engine(system)
    res = e.simulate(t_final, output_interval=interval, record=names, rtol=RTOL, atol=ATOL)
    assert np.allclose(r["time"], res.time, atol=1e-12)
    got = np.column_stack([r[n] for n in names])
    ref = np.column_stack([res[n] for n in names])
    scale = np.maximum(np.abs(ref).max(axis=0), 1e-12)
    err = float((np.abs(got - ref) / scale).max())
    moved = float(np.abs(ref[-1] - ref[0]).max())
    return err, moved


@pytest.mark.parametrize("key", ["pendulum", "hub", "linked"])
def test_co_simulation_matches_the_engine(fmus, systems, key):
    """A 0.2 s co-simulation run (fmpy, 10 ms communication steps) against the engine's run:
    every state within 1e-6 of its largest magnitude (measured: 4e-12 and 1e-12)."""
    err, moved = _cosim_error(fmus[key], systems[key](), 0.2, 0.01)
    assert err < 1e-6, err
    assert moved > 1e-3  # the system moved: not a comparison of constants


def test_fmi3_model_fmu_validates_and_runs_like_the_engine(systems, tmp_path):
    """The FMI 3.0 model FMU of the flexible pendulum validates and its co-simulation run is
    the engine's, as FMI 2.0's."""
    path = t.export_fmu(systems["pendulum"](), tmp_path / "pend3.fmu", fmi_version=3,
                        win64=False)  # fmt: skip
    assert validate_fmu(str(path)) == []
    md = read_model_description(str(path))
    assert md.fmiVersion == "3.0"
    v = {x.name: x for x in md.modelVariables}
    assert v["arm.elastic_q0"].causality == "parameter"
    err, moved = _cosim_error(path, systems["pendulum"](), 0.2, 0.01)
    assert err < 1e-6, err
    assert moved > 1e-3
