"""The import contracts of pyproject.toml (``[tool.importlinter]``: the layers, the command line a
tree, nothing importing the package's root, no cycle between the modules of a package) hold on
the installed tree, and an added upward import breaks them, named; and the whole import graph
has no cycle at all (grimp), which also catches one through a package's ``__init__``.

Each check runs in a child process with ``PYTHONPATH`` set to the tree it checks (the installed
one, or a copy of it in ``tmp_path`` with one import added) and its working directory in
``tmp_path``: nothing depends on where the repository sits, and no cache is written.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import importlinter  # noqa: F401  (the test extra; a clear error here when it is missing)
import pytest

import titopfmu

CONFIG = Path(__file__).resolve().parents[1] / "pyproject.toml"
PACKAGE = Path(titopfmu.__file__).resolve().parent

#: ``lint-imports``, run by the Python of the tests
LINT = "from importlinter.cli import lint_imports_command; lint_imports_command()"

#: Prints the strongly connected components of more than one module of titopfmu's import graph
#: (imports inside functions count; those under ``if TYPE_CHECKING:`` do not, as for the
#: contracts), each with its imports and their lines, as JSON.
CYCLES = """
import json, grimp
g = grimp.build_graph("titopfmu", exclude_type_checking_imports=True, cache_dir=None)
edges = {m: sorted(g.find_modules_directly_imported_by(m)) for m in sorted(g.modules)}
index, low, stack, on_stack, found = {}, {}, [], set(), []
for root in edges:  # Tarjan's algorithm, iterative
    if root in index:
        continue
    work = [(root, 0)]
    while work:
        v, i = work.pop()
        if i == 0:
            index[v] = low[v] = len(index)
            stack.append(v)
            on_stack.add(v)
        for j in range(i, len(edges[v])):
            w = edges[v][j]
            if w not in index:
                work += [(v, j + 1), (w, 0)]
                break
            if w in on_stack:
                low[v] = min(low[v], index[w])
        else:
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
out = []
for comp in sorted(found):
    imports = [f"{a} -> {b} (l." + ", l.".join(str(d["line_number"]) for d in
               g.get_import_details(importer=a, imported=b)) + ")"
               for a in comp for b in edges[a] if b in comp]
    out.append({"modules": comp, "imports": imports})
print(json.dumps(out))
"""


def _run(code: str, args: list[str], tree: Path, cwd: Path) -> subprocess.CompletedProcess:
    """``python -c code args`` with ``tree`` (the folder holding a ``titopfmu`` package) first
    on the path."""
    path = os.pathsep.join(p for p in (str(tree), os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, PYTHONPATH=path, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def _lint(tree: Path, cwd: Path, *contracts: str) -> subprocess.CompletedProcess:
    args = ["--no-cache", "--no-logo", str(CONFIG)]
    for c in contracts:
        args += ["--contract", c]
    return _run(LINT, args, tree, cwd)


def _cycles(tree: Path, cwd: Path) -> list[dict]:
    result = _run(CYCLES, [], tree, cwd)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _copy_with(tmp_path: Path, module: str, statement: str) -> tuple[Path, int]:
    """A copy of the package's Python files in ``tmp_path/tree`` whose ``module`` (a path inside
    the package) ends with a function running ``statement``; and that statement's line."""
    tree = tmp_path / "tree"

    def ignore(folder, names):
        return [n for n in names if n == "__pycache__"
                or (Path(folder, n).is_file() and not n.endswith(".py"))]  # fmt: skip

    shutil.copytree(PACKAGE, tree / "titopfmu", ignore=ignore)
    path = tree / "titopfmu" / module
    text = path.read_text(encoding="utf-8").rstrip("\n")
    path.write_text(f"{text}\n\n\ndef _added():\n    {statement}\n", encoding="utf-8")
    return tree, text.count("\n") + 5


def test_the_import_contracts_are_kept(tmp_path):
    result = _lint(PACKAGE.parent, tmp_path)
    assert result.returncode == 0 and " 0 broken." in result.stdout, result.stdout + result.stderr


def test_no_import_cycle(tmp_path):
    cycles = _cycles(PACKAGE.parent, tmp_path)
    assert cycles == [], "\n".join(
        " <-> ".join(c["modules"]) + ":\n  " + "\n  ".join(c["imports"]) for c in cycles
    )


@pytest.mark.parametrize(
    "module, statement, contract, named",
    [
        # the spatial algebra importing the command line: the layers, and the command line's root
        ("spatial/algebra.py", "from ..cli import main", "layers",
         "titopfmu.spatial.algebra -> titopfmu.cli (l.{line})"),
        ("spatial/algebra.py", "from ..cli import main", "cli-root",
         "titopfmu.spatial.algebra -> titopfmu.cli (l.{line})"),
        # the core's Python side importing a block class
        ("core/model.py", "from ..blocks.signals import Constant", "layers",
         "titopfmu.core.model -> titopfmu.blocks.signals (l.{line})"),
        # one sub-command's module importing another's: not a tree
        ("model_cli.py", "from .linear.cli import add_linearize_parser", "cli-tree",
         "titopfmu.model_cli -> titopfmu.linear.cli (l.{line})"),
        # the version from the package's root, as before titopfmu._version
        ("fmi/cache.py", "from .. import __version__", "api-root",
         "titopfmu.fmi.cache -> titopfmu (l.{line})"),
    ],
)  # fmt: skip
def test_an_added_import_breaks_its_contract(tmp_path, module, statement, contract, named):
    tree, line = _copy_with(tmp_path, module, statement)
    result = _lint(tree, tmp_path, contract)
    assert result.returncode == 1, result.stdout + result.stderr
    assert " BROKEN" in result.stdout
    assert named.format(line=line) in result.stdout, result.stdout


def test_an_added_cycle_is_found(tmp_path):
    # titopfmu.campaign.results imports titopfmu.campaign.store; the reverse, inside a function
    tree, line = _copy_with(tmp_path, "campaign/store.py", "from .results import consolidate")
    cycle = ["titopfmu.campaign.results", "titopfmu.campaign.store"]
    found = {tuple(c["modules"]): c["imports"] for c in _cycles(tree, tmp_path)}
    assert tuple(cycle) in found, found
    assert f"titopfmu.campaign.store -> titopfmu.campaign.results (l.{line})" in found[tuple(cycle)]
    result = _lint(tree, tmp_path, "acyclic")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "No cycles are allowed in titopfmu.campaign." in result.stdout, result.stdout
