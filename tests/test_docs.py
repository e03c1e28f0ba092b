"""The documentation site builds without warnings (``mkdocs build --strict``), and the user
guide says what the code does: every command-line option is documented, and the user-facing
pages carry no development log."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from titopfmu.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def test_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs", reason="mkdocs is not installed (pip install -e '.[docs]')")
    pytest.importorskip("mkdocstrings", reason="mkdocstrings is not installed")
    site = tmp_path / "site"
    p = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    assert "WARNING" not in p.stderr, p.stderr
    for page in ("getting-started", "modelling", "fmus", "cosim", "crosscheck", "cli", "api"):
        assert (site / page / "index.html").is_file(), page
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    for name in ("titopfmu.blocks.bodies.RigidBody", "titopfmu.master.cosim.CoSimulation"):
        assert f'id="{name}"' in api, name  # mkdocstrings rendered the docstrings


def test_every_command_line_option_is_in_the_guide():
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    commands = build_parser()._subparsers._group_actions[0].choices
    for name, sub in commands.items():
        assert f"## titopfmu {name}" in text, name
        for action in sub._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert option in text, (name, option)


def test_user_pages_are_not_a_development_log():
    pages = [ROOT / "README.md", *(p for p in DOCS.glob("*.md") if p.name != "development.md")]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for pattern in (r"\bissue \d", r"previous master", r"\bcommit [0-9a-f]{7}",
                        r"shared/seeds", r"pythonfmu's loader", r"reference-count"):  # fmt: skip
            assert not re.search(pattern, text), (page.name, pattern)


def _python_blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)


def test_readme_example_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (code,) = _python_blocks(ROOT / "README.md")
    scope: dict = {}
    exec(code, scope)
    assert len(scope["result"].time) == 501 and (tmp_path / "results" / "arm.csv").is_file()


def test_cosim_guide_runs_and_matches_the_in_process_system(tmp_path, monkeypatch):
    """The co-simulation page's example, then its shell command on the SSP it writes; the result
    agrees with the in-process system of the modelling page (same parameters, gravity off)."""
    pytest.importorskip("fmpy", reason="needs the 'fmi' extra")
    from titopfmu.cli import main
    from titopfmu.fmi.build import build_fmus

    monkeypatch.chdir(tmp_path)
    build_fmus("fmus", types=["rigid_body", "revolute_body", "joint_spring_damper"],
               max_children=1)  # fmt: skip
    cosim_code, me_code = _python_blocks(DOCS / "cosim.md")  # co-simulation, model exchange
    cosim_code = cosim_code.replace("cs.simulate(5.0,", "cs.simulate(0.5,")
    cosim_code = cosim_code.replace("stop_time=5.0", "stop_time=0.5")
    scope: dict = {}
    exec(cosim_code, scope)
    text = (DOCS / "cosim.md").read_text(encoding="utf-8")
    command = re.search(r"```bash\n(titopfmu cosim .*?)\n```", text).group(1).split()
    assert main([*command[1:], "--quiet"]) == 0
    rows = (tmp_path / "results" / "arm.csv").read_text().splitlines()
    header = [h.strip('"') for h in rows[0].split(",")]
    last = [float(v) for v in rows[-1].split(",")]
    assert last[0] == pytest.approx(0.5)
    theta_cosim = last[header.index("arm.joint.m[3]")]
    modelling = _python_blocks(DOCS / "modelling.md")[0].replace("simulate(5.0,", "simulate(0.5,")
    exec(modelling, scope)
    theta_engine = scope["result"]["theta"][-1]
    assert abs(theta_cosim - theta_engine) < 1e-5, (theta_cosim, theta_engine)
    exec(me_code.replace("cs.simulate(5.0,", "cs.simulate(0.5,"), scope)  # the same cs
    theta_me = scope["result"]["theta"][-1]
    assert abs(theta_me - theta_engine) < 1e-7, (theta_me, theta_engine)
    assert abs(theta_engine - 0.3) > 1e-3  # it moved: the comparison means something
