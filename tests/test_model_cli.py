"""``titopfmu crosscheck MODEL`` and ``titopfmu run MODEL`` (titopfmu.model_cli)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from titopfmu.model_cli import main

pytest.importorskip("pinocchio")


@pytest.fixture(autouse=True)
def _fmu_cache(tmp_path_factory, monkeypatch):
    """The FMU legs build their FMUs once into a cache folder shared by this module's tests."""
    monkeypatch.setenv("TITOPFMU_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "fmu_cache"))


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_crosscheck_balloon_writes_a_passing_report(tmp_path):
    out = tmp_path / "cc"
    assert main(["crosscheck", "balloon", "--out", str(out), "--states", "10", "--quiet"]) == 0
    data = json.loads((out / "results.json").read_text())
    assert data["passed"] and data["acc_error"] < 1e-9 and data["traj_error"] < 1e-6
    assert data["cosim_acc_error"] < 1e-8 and data["cosim_traj_error"] < 1e-4
    report = (out / "report.md").read_text()
    assert "| comparison |" in report and "trajectory.png" in report and "from_system" in report
    assert "FMUs + master vs in process" in report
    assert (out / "trajectory.png").stat().st_size > 10_000


def test_crosscheck_of_an_unsupported_model_is_a_clear_error(tmp_path, capsys):
    from test_native import tethered_pendulum

    p = tmp_path / "tether.yaml"
    tethered_pendulum().save(p)
    assert main(["crosscheck", str(p), "--out", str(tmp_path / "cc")]) == 2
    assert "RigidBody" in capsys.readouterr().err


def test_run_a_saved_random_tree_with_default_columns(tmp_path):
    from random_trees import random_tree

    s, _ = random_tree(3, multi_dof=True)
    p = s.save(tmp_path / "tree.json")
    csv = tmp_path / "tree.csv"
    assert (
        main(
            [
                "run",
                str(p),
                "--t-final",
                "0.2",
                "--out",
                str(csv),
                "--plot",
                str(tmp_path / "tree.png"),
                "--quiet",
            ]
        )
        == 0
    )
    header = csv.read_text().splitlines()[0].split(",")
    assert header[:4] == ["time", "root.x", "root.y", "root.z"] and len(header) > 7
    assert (tmp_path / "tree.png").exists()
    # the same model through its FMUs and the master: same columns, the engine's values to the
    # coupling error of the step
    co = tmp_path / "tree_cosim.csv"
    assert main(["run", str(p), "--t-final", "0.2", "--engine", "cosim", "--step", "5e-4",
                 "--out", str(co), "--quiet"]) == 0  # fmt: skip

    a = np.genfromtxt(csv, delimiter=",", skip_header=1)
    b = np.genfromtxt(co, delimiter=",", skip_header=1)
    assert co.read_text().splitlines()[0] == csv.read_text().splitlines()[0]
    assert a.shape == b.shape and np.max(np.abs(a - b)) < 1e-4


def test_run_checks_its_outputs_before_the_run_and_falls_back_after(tmp_path, capsys,
                                                                    monkeypatch):  # fmt: skip
    """``run`` shares ``example``'s output handling: a plot it cannot write is refused before
    the run (nothing written), a CSV path it cannot write gets a named fallback file."""
    out = tmp_path / "b.csv"
    assert main(["run", "balloon", "--t-final", "0.1", "--out", str(out),
                 "--plot", str(tmp_path / "b.xyz")]) == 2  # fmt: skip
    assert "unknown image extension" in capsys.readouterr().err
    assert not out.exists()
    monkeypatch.chdir(tmp_path)  # where the fallback goes
    blocked = tmp_path / "full.csv"
    blocked.symlink_to("/dev/full")
    assert main(["run", "balloon", "--t-final", "0.1", "--out", str(blocked), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert str(blocked) in err
    fallbacks = [p for p in tmp_path.iterdir() if p.name.startswith("full") and p != blocked]
    assert len(fallbacks) == 1 and fallbacks[0].read_text().startswith("time,")


def test_crosscheck_of_a_fixed_base_robot_from_urdf_passes(tmp_path):
    """A Ground-rooted model (ur5 of example-robot-data, fixed base): Pinocchio's reference takes
    the Ground as the universe; the trajectory compares the six joint coordinates."""
    from test_urdf import erd

    out = tmp_path / "cc"
    code = main(["crosscheck", str(erd("ur5_robot.urdf")), "--out", str(out), "--states", "10",
                 "--no-cosim", "--quiet"])  # fmt: skip
    data = json.loads((out / "results.json").read_text())
    assert code == 0 and data["passed"], data
    assert data["acc_error"] < 1e-9 and data["traj_error"] < 1e-6
    assert len(data["per_signal"]) == 6
    assert all(c.endswith(".joint.m[3]") for c in data["per_signal"])


def ground_branches(position=(0.3, -0.2, 1.0), euler=(0.1, -0.2, 0.3)):
    """A Ground with two child ports: a double pendulum on one (its second joint held by a
    spring-damper law), a single pendulum on the other; the base placed off the origin and
    turned, so that its placement matters."""
    from titopfmu import Constant, Ground, JointSpringDamper, RevoluteBody, System

    g = (0.0, -9.81, 0.0)
    s = System("branches")
    s.add(
        Ground("base", children={"A": (0.0, 0.0, 0.0), "B": (0.6, 0.1, 0.0)},
               position=position, euler=euler),
        RevoluteBody("upper", 1.5, np.diag([0.02, 0.1, 0.11]), com=(0.4, 0.0, 0.0),
                     theta0=0.7, children={"tip": (0.8, 0.0, 0.0)}, gravity=g),
        RevoluteBody("lower", 0.8, np.diag([0.01, 0.05, 0.05]), com=(0.3, 0.02, 0.0),
                     axis=(0.0, 0.2, 1.0), theta0=-0.4, theta_dot0=1.0, gravity=g),
        RevoluteBody("side", 0.5, np.diag([0.01, 0.02, 0.02]), com=(0.0, -0.3, 0.0),
                     theta0=0.2, gravity=g),
        JointSpringDamper("spring", k=5.0, d=0.2, q_ref=0.1),
        Constant("tau_upper", 0.3),
        Constant("tau_side", 0.0),
    )  # fmt: skip
    s.connect("base.A", "upper.P")
    s.connect("upper.tip", "lower.P")
    s.connect("base.B", "side.P")
    s.connect("lower.joint.m", "spring.m")
    s.connect("spring.tau", "lower.joint.tau")
    s.connect("tau_upper.y", "upper.joint.tau")
    s.connect("tau_side.y", "side.joint.tau")
    return s


def test_crosscheck_of_a_ground_rooted_model_with_its_fmus(tmp_path):
    """Both legs on a fixed base with two branches: Pinocchio (the Ground's placement and child
    ports as joint placements in the universe) and the FMUs through the master."""
    p = ground_branches().save(tmp_path / "branches.yaml")
    out = tmp_path / "cc"
    assert main(["crosscheck", str(p), "--out", str(out), "--states", "10", "--t-final", "1",
                 "--quiet"]) == 0  # fmt: skip
    data = json.loads((out / "results.json").read_text())
    assert data["passed"] and data["acc_error"] < 1e-9 and data["traj_error"] < 1e-6, data
    assert data["cosim_acc_error"] < 1e-8 and data["cosim_traj_error"] < 1e-4, data
    assert sorted(data["per_signal"]) == [f"{n}.joint.m[3]" for n in ("lower", "side", "upper")]


def test_pinocchio_reference_of_a_ground_root_against_the_engine():
    """The reference's accelerations of a Ground-rooted model (no root entries) equal the
    engine's at random states, and the Ground's placement changes them (gravity turns)."""
    from titopfmu import Engine
    from titopfmu.crosscheck import engine_accelerations, random_state
    from titopfmu.reference import to_pinocchio

    s = ground_branches()
    ref, engine = to_pinocchio(s), Engine(s)
    assert not ref.floating and ref.n_acc == 3
    rng = np.random.default_rng(4)
    for _ in range(5):
        x = random_state(engine, rng)
        a_ref = ref.accelerations(x, 0.0)
        a_eng = engine_accelerations(engine, ref, engine.derivative(0.0, x))
        assert np.max(np.abs(a_ref - a_eng)) < 1e-10 * max(1.0, np.max(np.abs(a_ref)))
    level = to_pinocchio(ground_branches(euler=(0.0, 0.0, 0.0)))
    assert np.max(np.abs(level.accelerations(x, 0.0) - a_ref)) > 1e-3
