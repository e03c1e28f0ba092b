"""Every script in examples/ runs as a user would run it (``python examples/NAME.py``), on a
short horizon, and prints its summary; the TITOP modelling examples also write their plot."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

#: script -> (arguments, a line of its summary); "{tmp}" is the test's temporary folder. A
#: script not listed runs without arguments (a new example is tested as it is).
ARGS = {
    "satellite.py": (["--t-final", "10", "--plot", "{tmp}/satellite.png"], "momentum drift"),
    "robot_arm.py": (["--t-final", "2", "--plot", "{tmp}/robot_arm.png"], "shoulder"),
    "four_bar.py": (["--t-final", "1", "--plot", "{tmp}/four_bar.png"], "gap at the cut"),
    "balloon.py": ([], "wrote results/balloon.csv"),
    "denoc_pendulum.py": (["--t-final", "1", "--out", "{tmp}/denoc.png"], "energy drift"),
    "kane_eight_body.py": (["1"], "energy drift"),
    "riccati_branch.py": (["--t-final", "1"], "energy drift"),
    "flexible_spacecraft.py": (["--t-final", "4", "--plot", "{tmp}/flexible.png"],
                               "attitude error vs the rigid profile"),
}
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("*.py"))


def test_every_example_is_listed_here_or_runs_without_arguments():
    assert {"satellite.py", "robot_arm.py", "four_bar.py"} <= set(SCRIPTS)
    assert set(ARGS) <= set(SCRIPTS), sorted(set(ARGS) - set(SCRIPTS))


@pytest.mark.parametrize("script", SCRIPTS)
def test_example_runs(script, tmp_path):
    args, expected = ARGS.get(script, ([], ""))
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    p = subprocess.run([sys.executable, str(EXAMPLES / script), *args], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert expected in p.stdout, p.stdout
    assert "Warning" not in p.stderr, p.stderr  # the balloon's known inertia warning is hidden
    for a in args:
        if a.endswith(".png"):
            assert Path(a).stat().st_size > 5_000 and f"wrote {a}" in p.stdout
