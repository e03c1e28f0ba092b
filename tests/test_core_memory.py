"""The C core under AddressSanitizer + UndefinedBehaviorSanitizer and under valgrind.

The extension is rebuilt from ``titopfmu/core/csrc`` with ``-fsanitize=address,undefined
-fno-sanitize-recover=all`` and loaded in a subprocess that runs ``tests/core/exercise.py``
(every block kind, closures, laws, full evaluations, complex-step Jacobians, refusals); any
out-of-bounds access or undefined behaviour aborts it. Its work buffers start as NaN, so a value
read before it is written shows as a NaN result (the sanitizers do not see uninitialised reads;
valgrind does). The same script runs on the installed build under valgrind's memcheck, and no
error may involve the core: memcheck's XML report is read error by error, and an error is the
core's when one of its stacks goes through the extension or the core's sources (by file name,
never by a substring of a path: the test must not depend on where the repository sits). Both
runs must print the numbers of a plain run (the sanitized one bit for bit). A scratch build with
planted bugs shows that the valgrind check does catch the core's errors.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import xml.etree.ElementTree as ET
from pathlib import Path, PurePath

import pytest

ROOT = Path(__file__).resolve().parents[1]
CSRC = ROOT / "titopfmu" / "core" / "csrc"
EXERCISE = Path(__file__).parent / "core" / "exercise.py"
SOURCES = ("_titop.c", "titop_double.c", "titop_complex.c")  # titop_core.c: included twice
EXT_NAME = "_titop" + sysconfig.get_config_var("EXT_SUFFIX")


def run_exercise(*extra, env=None, prefix=(), timeout=900) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*prefix, sys.executable, str(EXERCISE), *extra],
        capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT,
    )  # fmt: skip


def c_compiler() -> str:
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    return cc


def build_core(cc: str, csrc: Path, so: Path, flags: list[str]) -> None:
    """Compile the extension from the core sources in ``csrc`` into ``so``."""
    inc = ["-I", str(csrc), "-I", sysconfig.get_paths()["include"]]
    sources = [str(csrc / f) for f in SOURCES]
    subprocess.run([cc, *flags, *inc, *sources, "-lm", "-o", str(so)], check=True)


@pytest.fixture(scope="module")
def plain_output() -> str:
    p = run_exercise("--quick")
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_core_under_address_and_undefined_behaviour_sanitizers(tmp_path, plain_output):
    cc = c_compiler()
    so = tmp_path / EXT_NAME
    flags = ["-std=c99", "-g", "-O1", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror",
             "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
             "-fno-omit-frame-pointer"]  # fmt: skip
    build_core(cc, CSRC, so, flags)
    libasan = subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True,
                             text=True).stdout.strip()  # fmt: skip
    if not os.path.isabs(libasan):
        pytest.skip("libasan not found")
    env = dict(os.environ, LD_PRELOAD=libasan, ASAN_OPTIONS="detect_leaks=0:abort_on_error=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")  # fmt: skip
    p = run_exercise("--quick", "--extension", str(so), env=env)
    assert p.returncode == 0, p.stderr[-4000:]
    assert "ERROR: AddressSanitizer" not in p.stderr and "runtime error" not in p.stderr
    assert p.stdout == plain_output


# memcheck's error kinds that fail the check when they are the core's: bad reads, writes, frees
# and jumps (Invalid*), uses of uninitialised values (Uninit*: conditions, values), system-call
# parameters, overlapping copies, fishy sizes, mismatched frees and blocks definitely lost
FLAGGED_PREFIXES = ("Invalid", "Uninit")
FLAGGED_KINDS = {"SyscallParam", "Overlap", "FishyValue", "MismatchedFree", "Leak_DefinitelyLost"}
CORE_SOURCES = frozenset(p.name for p in CSRC.iterdir() if p.suffix in (".c", ".h"))
MEMCHECK = ("valgrind", "--tool=memcheck", "--leak-check=full", "--show-leak-kinds=definite",
            "--track-origins=no", "--error-limit=no", "--num-callers=24")  # fmt: skip


def core_errors(report: ET.Element, extension: str) -> list[tuple[str, str]]:
    """The errors of a memcheck XML report that are the core's, as (kind, description).

    An error is the core's when one of its stacks (where it happened; for a bad access or free,
    also where the block was allocated or freed; for a leak, where the block was allocated) has a
    frame in the extension's shared object (``extension``: compared by file name) or in one of
    the core's source files (by file name). Descriptions: the kind, memcheck's words and the top
    frames (function, file:line) of the stack."""

    def ours(frame: ET.Element) -> bool:
        obj, file = PurePath(frame.findtext("obj", "")), PurePath(frame.findtext("file", ""))
        return obj.name == PurePath(extension).name or file.name in CORE_SOURCES

    def where(frame: ET.Element) -> str:
        fn = frame.findtext("fn", frame.findtext("ip", "?"))
        if frame.findtext("file"):
            at = f"{frame.findtext('file')}:{frame.findtext('line', '?')}"
        else:
            at = PurePath(frame.findtext("obj", "?")).name
        return f"    {fn} ({at}){'  <- core' if ours(frame) else ''}"

    found = []
    for error in report.iter("error"):
        kind = error.findtext("kind", "")
        if not (kind.startswith(FLAGGED_PREFIXES) or kind in FLAGGED_KINDS):
            continue
        if not any(ours(f) for f in error.iter("frame")):
            continue
        what = error.findtext("what") or error.findtext("xwhat/text", "")
        frames = error.find("stack").findall("frame")  # the first stack: where it happened
        top = [where(f) for f in frames[:6]]
        first = next((i for i, f in enumerate(frames) if ours(f)), None)
        if first is not None and first >= 6:
            top += ["    ...", where(frames[first])]
        found.append((kind, "\n".join([f"{kind}: {what}", *top])))
    return found


def memcheck_exercise(tmp_path: Path, *args: str):
    """Run the exercise under memcheck: its process, the extension it loaded (the file that
    the errors are attributed to) and the core's errors (:func:`core_errors`).

    Checks that the check is not vacuous: the exercise succeeded, and valgrind ran the very
    process that loaded the extension through to its end and wrote a complete XML report."""
    xml = tmp_path / "memcheck.xml"
    p = run_exercise(
        *args,
        env=dict(os.environ, PYTHONMALLOC="malloc"),  # every allocation seen by memcheck
        prefix=(*MEMCHECK, "--xml=yes", f"--xml-file={xml}", f"--log-file={xml}.log"),
        timeout=1800,
    )
    assert p.returncode == 0, p.stderr[-4000:]
    loaded = re.findall(r"^core extension (.+) pid (\d+)$", p.stderr, re.MULTILINE)
    assert len(loaded) == 1, p.stderr[-4000:]
    extension, pid = loaded[0]
    report = ET.parse(xml).getroot()
    assert report.findtext("protocoltool") == "memcheck"
    # valgrind ran the interpreter itself (not, say, a wrapper script that exec'd it, left
    # untraced) through to its exit: the report is of that process and is complete
    assert report.findtext("pid") == pid
    assert "FINISHED" in [s.findtext("state") for s in report.iter("status")], "incomplete report"
    return p, extension, core_errors(report, extension)


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_core_under_valgrind(tmp_path, plain_output):
    p, extension, errors = memcheck_exercise(tmp_path, "--quick")
    assert PurePath(extension).name == EXT_NAME
    # valgrind runs other SIMD paths of numpy (its CPU model has no AVX-512): the checksums,
    # sums of numpy arrays, agree to rounding rather than bit for bit
    assert same_numbers(p.stdout, plain_output, 1e-12)
    kinds = sorted({k for k, _ in errors})
    message = f"{len(errors)} memcheck errors in the core ({', '.join(kinds)}):\n"
    assert not errors, (message + "\n".join(d for _, d in errors))[:4000]


def test_core_errors_are_attributed_by_file_names():
    """Where the repository sits does not matter: a clone in a folder named titopfmu puts "titop"
    in the paths of the interpreter's own errors, which are not the core's."""
    home = "/home/u/titopfmu"  # the clone, its virtual environment and an installed extension

    def frame(fn, obj, file=None):
        src = f"<dir>{home}/src</dir><file>{file}</file><line>7</line>" if file else ""
        return f"<frame><ip>0x1</ip><obj>{obj}</obj><fn>{fn}</fn>{src}</frame>"

    python = frame("PyObject_Free", f"{home}/.venv/lib/libpython3.11.so", "obmalloc.c")
    ext = frame("joint_conversion", f"{home}/titopfmu/core/{EXT_NAME}")
    core = frame("titop_eval", "/elsewhere/a.so", "titop_core.c")  # a build of the sources
    report = ET.fromstring(
        "<valgrindoutput>"
        + "".join(
            f"<error><kind>{kind}</kind><what>{kind}</what><stack>{stack}</stack></error>"
            for kind, stack in [
                ("UninitCondition", python * 3),  # the interpreter's, in a path with "titop"
                ("InvalidRead", python + ext),
                ("UninitValue", core + python),
                ("Leak_DefinitelyLost", python + ext),
                ("Leak_PossiblyLost", python + ext),  # not a kind that fails the check
            ]
        )
        + "</valgrindoutput>"
    )
    errors = core_errors(report, f"/tmp/scratch/{EXT_NAME}")
    assert [k for k, _ in errors] == ["InvalidRead", "UninitValue", "Leak_DefinitelyLost"]
    assert "joint_conversion (" + EXT_NAME + ")  <- core" in errors[0][1]


# bugs planted in a scratch copy of the core, on the path of the exercise's --smoke run (the
# joint helpers): (file, text, replacement, the kind of error, a function of its stack)
PLANTED = [
    ("titop_core.c",
     "static void coordinates_from_position(int kind, const real_t *p, real_t *q)\n{\n",
     "static void coordinates_from_position(int kind, const real_t *p, real_t *q)\n{\n"
     "    volatile int planted; /* never written */\n"
     "    if (planted == 42)\n        planted = 0;\n",
     "UninitCondition", "coordinates_from_position"),
    ("titop_core.c", "        p[0] = q[0];\n    }\n}\n",
     "        p[0] = q[0];\n"
     "        volatile double planted = q[1]; /* one past the end of q (revolute: 1 double) */\n"
     "        (void)planted;\n    }\n}\n",
     "InvalidRead", "titop_joint_position"),
    ("_titop.c", "    if (to_position)\n        titop_joint_position(",
     "    (void)PyMem_Malloc(64); /* never freed */\n"
     "    if (to_position)\n        titop_joint_position(",
     "Leak_DefinitelyLost", "joint_conversion"),
]  # fmt: skip


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_valgrind_check_finds_planted_bugs(tmp_path):
    """The valgrind check catches the core's errors: a branch on an uninitialised value, a read
    past the end of a buffer and a leak, planted in a scratch build (-O1 -g) of the extension."""
    csrc = tmp_path / "csrc"
    shutil.copytree(CSRC, csrc)
    for file, text, planted, _, _ in PLANTED:
        source = (csrc / file).read_text()
        assert source.count(text) == 1, f"{file}: {text!r} not found once: update PLANTED"
        (csrc / file).write_text(source.replace(text, planted))
    so = tmp_path / "scratch" / EXT_NAME
    so.parent.mkdir()
    # no -Werror: the planted bugs draw warnings
    build_core(c_compiler(), csrc, so, ["-std=c99", "-g", "-O1", "-fPIC", "-shared"])
    _, extension, errors = memcheck_exercise(tmp_path, "--smoke", "--extension", str(so))
    assert Path(extension).resolve() == so.resolve()
    report = "\n".join(d for _, d in errors)
    for _, _, _, kind, fn in PLANTED:
        assert any(k == kind and fn in d for k, d in errors), f"{kind} in {fn}:\n{report}"[:4000]


def same_numbers(a: str, b: str, rtol: float) -> bool:
    """Whether two outputs of the exercise have the same names and numbers to ``rtol``."""
    la, lb = a.split(), b.split()
    if len(la) != len(lb):
        return False
    for u, v in zip(la, lb, strict=True):
        if u != v:
            try:
                fu, fv = float(u), float(v)
            except ValueError:
                return False
            if abs(fu - fv) > rtol * max(1.0, abs(fv)):
                return False
    return True
