"""Model files (titopfmu.modelfile): the shipped balloon, System -> file -> System round trips with
identical derivatives, and clear errors on bad files (file, element, line)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from random_trees import random_state, random_tree
from test_native import SYSTEMS, ground_tree

import titopfmu
from titopfmu import Constant, Engine, InertiaWarning, TimeFunction
from titopfmu.examples.balloon import build_balloon
from titopfmu.model_cli import main as model_cli
from titopfmu.modelfile import ModelFileError, TimeExpression, dumps, example_path, loads

BALLOON = example_path("balloon")


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        yield


def assert_same_derivatives(a, b, n: int = 20, seed: int = 0, times=(0.0, 0.37, 1.3)):
    """Bitwise-equal derivatives of two systems at random states and a few times."""
    ea, eb = Engine(a), Engine(b)
    assert ea.n_states == eb.n_states
    np.testing.assert_array_equal(ea.initial_state(), eb.initial_state())
    rng = np.random.default_rng(seed)
    for k in range(n):
        try:
            x = random_state(ea, rng)
        except ValueError:  # inverse bodies (no state): perturb the initial state instead
            x = ea.initial_state() + rng.normal(0.0, 0.3, ea.n_states)
        t = times[k % len(times)]
        np.testing.assert_array_equal(ea.derivative(t, x), eb.derivative(t, x))


def round_trip(system, fmt="yaml"):
    text = dumps(system, fmt)
    back = loads(text)
    # file -> System -> file is the identity on the text
    assert dumps(back, fmt) == text
    return back


def test_balloon_file_is_build_balloon():
    assert_same_derivatives(titopfmu.load(BALLOON), build_balloon(), n=50)


def test_balloon_file_reproduces_the_cli_example_csv(tmp_path):
    from titopfmu.cli import main as cli

    assert cli(["example", "balloon", "--out", str(tmp_path / "ex.csv"), "--quiet"]) == 0
    assert model_cli(["run", str(BALLOON), "--out", str(tmp_path / "run.csv"), "--quiet"]) == 0
    assert (tmp_path / "ex.csv").read_bytes() == (tmp_path / "run.csv").read_bytes()
    # the shipped name works too, and command-line options override the experiment section
    assert model_cli(["run", "balloon", "--t-final", "0.5", "--out", str(tmp_path / "s.csv"),
                      "--quiet"]) == 0  # fmt: skip
    assert (tmp_path / "s.csv").read_text().count("\n") == 52  # header + 51 samples


def test_balloon_round_trip_yaml_and_json(tmp_path):
    s = build_balloon()
    assert_same_derivatives(round_trip(s), s)
    assert_same_derivatives(round_trip(s, "json"), s)
    p = s.save(tmp_path / "b.json")
    json.loads(p.read_text())
    assert_same_derivatives(titopfmu.load(p), s)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("multi_dof", [False, True])
def test_random_tree_round_trip(seed, multi_dof):
    s, _ = random_tree(seed, multi_dof=multi_dof)
    assert_same_derivatives(round_trip(s), s, seed=seed)


def _timefunctions_as_constants(system, t=0.37):
    """Python-coded TimeFunctions cannot be saved: replace them by their value at t."""
    for name, b in list(system.blocks.items()):
        if isinstance(b, TimeFunction):
            system.blocks[name] = Constant(name, b.evaluate(t, {})["y"])
    return system


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_closure_inverse_and_imposed_systems_round_trip(name):
    s = SYSTEMS[name][0]()
    if any(isinstance(b, TimeFunction) for b in s.blocks.values()):
        with pytest.raises(ModelFileError, match="TimeFunction.*Python code"):
            dumps(s)
        s = _timefunctions_as_constants(s)
    assert_same_derivatives(round_trip(s), s)


def test_time_expressions_round_trip():
    s = ground_tree()
    s.blocks["tau_r1"] = TimeFunction("tau_r1", TimeExpression("sin(t)"), 1)
    s.blocks["tau_r3"] = TimeFunction("tau_r3", TimeExpression(["0.3 * t"]), 1)
    s.blocks["push"] = TimeFunction(
        "push", TimeExpression(["1.0", "2.0 * t", "0", "0", "0.1", "0"]), 6
    )
    back = round_trip(s)
    assert_same_derivatives(back, ground_tree())  # the lambdas of ground_tree, same values


def test_function_blocks_and_unsafe_expressions_are_refused():
    s = build_balloon()
    s.blocks["buoyancy"] = titopfmu.Function(
        "buoyancy", lambda t, u: {"y": np.zeros(6)}, {}, {"y": 6}
    )
    with pytest.raises(ModelFileError, match="block 'buoyancy'.*Function"):
        dumps(s)
    for bad in ("__import__('os')", "t.real", "open('x')", "lambda: 1"):
        with pytest.raises(ValueError, match="expression"):
            TimeExpression(bad)


# -- bad files --------------------------------------------------------------------------------


def _balloon_text() -> str:
    return BALLOON.read_text()


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _err(text: str) -> ModelFileError:
    with pytest.raises(ModelFileError) as exc:
        loads(text, file="bad.yaml")
    return exc.value


def test_schema_error_names_file_block_and_line():
    text = _balloon_text().replace("  mass: 1.0\n", "  mass: heavy\n")
    e = _err(text)
    assert e.file == "bad.yaml" and e.line == _line_of(text, "mass: heavy")
    assert "block 'slider' (PrismaticBody)" in str(e) and "schema" in str(e), str(e)
    text = _balloon_text().replace("  theta0: -2.96", "  theta_0: -2.96")
    e = _err(text)
    assert "pend2" in str(e) and "theta_0" in str(e) and e.line == _line_of(text, "theta_0")


def test_unknown_block_type():
    text = _balloon_text().replace("type: PrismaticBody", "type: SliderBody")
    e = _err(text)
    assert "unknown block type 'SliderBody'" in str(e) and "block 'slider'" in str(e)
    assert e.line == _line_of(text, "SliderBody") and str(e).startswith(f"bad.yaml:{e.line}: ")


def test_non_physical_inertia():
    text = _balloon_text().replace("[0.0, 10.0, -7.0], [0.0, -7.0, 10.0]",
                                   "[0.0, -10.0, -7.0], [0.0, -7.0, 10.0]")  # fmt: skip
    e = _err(text)
    assert "block 'balloon'" in str(e) and "inertia" in str(e)
    assert e.line == _line_of(text, "inertia: [[5.0")


def test_unknown_port_in_connection():
    text = _balloon_text().replace("- [slider.S, pend1.P]", "- [slider.Q, pend1.P]")
    e = _err(text)
    assert "connection 2" in str(e) and "no port 'Q'" in str(e)
    assert e.line == _line_of(text, "slider.Q")


def test_wrong_format_version_and_yaml_syntax():
    assert "format" in str(_err(_balloon_text().replace("titopfmu-model", "other")))
    assert "version 2" in str(_err(_balloon_text().replace("version: 1", "version: 2")))
    e = _err(_balloon_text().replace("- [balloon.C, slider.P]", "- [balloon.C, slider.P"))
    assert "not valid YAML" in str(e) and e.line is not None
    e = _err(_balloon_text().replace("- [pend2_law.tau, pend2.joint.tau]\n", ""))
    assert "unconnected" in str(e) and "pend2.joint.tau" in str(e)


def test_model_cli_reports_bad_files(tmp_path, capsys):
    p = tmp_path / "bad.yaml"
    p.write_text(_balloon_text().replace("type: PrismaticBody", "type: SliderBody"))
    assert model_cli(["run", str(p), "--out", str(tmp_path / "x.csv")]) == 2
    assert f"{p}:" in capsys.readouterr().err
