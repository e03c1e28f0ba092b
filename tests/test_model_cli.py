"""``titopfmu crosscheck MODEL`` and ``titopfmu run MODEL`` (titopfmu.model_cli)."""

from __future__ import annotations

import json
import warnings

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
    import numpy as np

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
