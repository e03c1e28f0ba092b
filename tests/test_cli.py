"""The command line: the README's demo command, on a short horizon."""

import csv
import subprocess
import sys

from titopfmu.cli import build_parser, main


def test_example_balloon_writes_csv_and_plot(tmp_path):
    out, png = tmp_path / "b.csv", tmp_path / "b.png"
    code = main(
        ["example", "balloon", "--t-final", "0.5", "--output-interval", "0.1",
         "--out", str(out), "--plot", str(png), "--quiet"]
    )  # fmt: skip
    assert code == 0
    rows = list(csv.reader(open(out)))
    assert rows[0] == ["time", "x", "y", "z", "phi", "theta", "psi", "p", "theta1", "theta2"]
    assert len(rows) == 7
    assert abs(float(rows[1][8]) - 170 * 3.141592653589793 / 180) < 1e-12  # theta1(0)
    assert png.stat().st_size > 10_000


def test_help_explains_every_option():
    helptext = build_parser()._subparsers._group_actions[0].choices["example"].format_help()
    for opt in (
        "--t-final",
        "--output-interval",
        "--out",
        "--plot",
        "--rtol",
        "--atol",
        "--method",
    ):
        assert opt in helptext


def test_bad_option_value_is_refused(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "titopfmu.cli", "example", "balloon", "--rtol", "-1"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert p.returncode == 2 and "must be positive" in p.stderr


def test_build_command_writes_validated_fmus(tmp_path, capsys):
    code = main(["build", "--out", str(tmp_path), "--type", "revolute_body", "--max-children", "1"])
    assert code == 0
    assert sorted(p.name for p in tmp_path.glob("*.fmu")) == [
        "TitopRevoluteBodyC0.fmu",
        "TitopRevoluteBodyC1.fmu",
    ]
    assert "0 problems" in capsys.readouterr().out


def test_build_command_rejects_unknown_type(tmp_path, capsys):
    assert main(["build", "--out", str(tmp_path), "--type", "no_such_block"]) == 2
    assert "no_such_block" in capsys.readouterr().err


def test_example_balloon_cosim_has_the_same_columns_and_agrees(tmp_path):
    inproc, cosim = tmp_path / "a.csv", tmp_path / "b.csv"
    common = ["example", "balloon", "--t-final", "0.02", "--output-interval", "0.01", "--quiet"]
    assert main([*common, "--out", str(inproc)]) == 0
    assert main([*common, "--engine", "cosim", "--out", str(cosim)]) == 0
    a = list(csv.reader(open(inproc)))
    b = list(csv.reader(open(cosim)))
    assert a[0] == b[0] and len(a) == len(b) == 4
    for ra, rb in zip(a[1:], b[1:], strict=True):
        assert max(abs(float(x) - float(y)) for x, y in zip(ra, rb, strict=True)) < 1e-6
