"""``titopfmu build``: write one FMI 2.0 co-simulation FMU per block type and variant.

Each FMU is built with pythonfmu from a generated slave module and carries, in its resources:

* a copy of the titopfmu layers it needs (``spatial``, ``blocks``, ``fmi`` slave), renamed to
  ``_titopfmu_<version>_<hash>`` so that FMUs built from different titopfmu sources can run in one
  process without one shadowing the other (all Python FMUs of a process share one interpreter);
* ``requirements.txt`` (numpy, scipy) for ``pythonfmu deploy``;
* ``documentation/index.html``, generated from the same variable table as the model description.

On Linux x86_64 with a C compiler, ``binaries/linux64/<modelIdentifier>.so`` is titopfmu's FMI
shim (``shim/titopfmu_fmi2_shim.c``) and pythonfmu's binary sits next to it as
``libpythonfmu-export.so``: the shim forwards every FMI call to pythonfmu and returns
``fmi2Error`` instead of pythonfmu's ``fmi2Fatal`` when the slave refused a call (bad parameter,
non-finite input, non-positive step, call out of sequence). Without a compiler the FMUs keep
pythonfmu's binary and a refused call returns ``fmi2Fatal`` (a :class:`ShimWarning` says so).
Windows binaries are pythonfmu's.
"""

from __future__ import annotations

import hashlib
import html
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import warnings
import zipfile
from pathlib import Path

from .. import __version__
from .catalog import FMU_TYPES, FmuType, all_variants

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
#: Parts of titopfmu an FMU needs at run time (relative to the package root).
RUNTIME_FILES = ("spatial", "blocks", "fmi/catalog.py", "fmi/ports.py", "fmi/slave.py")
REQUIREMENTS = "numpy>=1.24\nscipy>=1.11\n"
SHIM_DIR = Path(__file__).resolve().parent / "shim"
SHIM_SOURCE = SHIM_DIR / "titopfmu_fmi2_shim.c"
#: pythonfmu's Linux binary, renamed, next to the shim (INNER_NAME in the shim's source).
INNER_BINARY = "libpythonfmu-export.so"
SHIM_CFLAGS = ("-shared", "-fPIC", "-O2", "-std=c99", "-fvisibility=hidden")


class ShimWarning(UserWarning):
    """The FMI shim could not be built: refused calls of the FMUs return fmi2Fatal."""


def find_c_compiler() -> list[str] | None:
    """The C compiler command: ``$CC`` if set (only that), else ``cc``, ``gcc`` or ``clang``."""
    cc = os.environ.get("CC")
    candidates = [cc] if cc is not None else ["cc", "gcc", "clang"]
    for cand in candidates:
        words = shlex.split(cand)
        if words and shutil.which(words[0]):
            return words
    return None


def compile_shim(dest_dir: str | Path) -> tuple[Path | None, str]:
    """Compile the FMI shim into ``dest_dir``: (path, "") or (None, why it was not built)."""
    if not (sys.platform.startswith("linux") and platform.machine() in ("x86_64", "amd64")):
        here = f"{sys.platform} {platform.machine()}"
        return None, f"the shim is built on Linux x86_64 only (this is {here})"
    cc = find_c_compiler()
    if cc is None:
        looked = f"$CC={os.environ['CC']!r}" if "CC" in os.environ else "cc, gcc, clang"
        return None, f"no C compiler found (looked for {looked})"
    out = Path(dest_dir) / "titopfmu_fmi2_shim.so"
    cmd = [*cc, *SHIM_CFLAGS, "-I", str(SHIM_DIR), "-o", str(out), str(SHIM_SOURCE), "-ldl"]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"{shlex.join(cmd)} failed: {exc}"
    if run.returncode != 0 or not out.is_file():
        return None, f"{shlex.join(cmd)} failed ({run.returncode}): {run.stderr.strip()}"
    return out, ""


def install_shim(fmu: str | Path, model_identifier: str, shim: str | Path) -> None:
    """Rewrite ``fmu``: pythonfmu's Linux binary becomes ``libpythonfmu-export.so`` and the
    shim takes its place as ``binaries/linux64/<modelIdentifier>.so`` (every other entry is
    copied unchanged, in order)."""
    fmu = Path(fmu)
    entry = f"binaries/linux64/{model_identifier}.so"
    tmp = fmu.with_name(fmu.name + ".tmp")
    with zipfile.ZipFile(fmu) as zin, zipfile.ZipFile(tmp, "w") as zout:
        names = zin.namelist()
        if entry not in names:
            raise RuntimeError(f"{fmu} has no {entry}")
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == entry:
                inner = zipfile.ZipInfo(f"binaries/linux64/{INNER_BINARY}", info.date_time)
                inner.compress_type = info.compress_type
                inner.external_attr = info.external_attr
                zout.writestr(inner, data)
                data = Path(shim).read_bytes()
            zout.writestr(info, data)
    os.replace(tmp, fmu)


def runtime_hash() -> str:
    """Short hash of the run-time sources (names the vendored package)."""
    h = hashlib.sha256(__version__.encode())
    for rel in RUNTIME_FILES:
        p = PACKAGE_ROOT / rel
        files = sorted(p.rglob("*.py")) if p.is_dir() else [p]
        for f in files:
            h.update(str(f.relative_to(PACKAGE_ROOT)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:10]


def vendor_name() -> str:
    return f"_titopfmu_{__version__.replace('.', '_')}_{runtime_hash()}"


def _vendor(stage: Path) -> Path:
    name = vendor_name()
    dest = stage / name
    dest.mkdir()
    (dest / "__init__.py").write_text(
        f'"""Run-time copy of titopfmu {__version__} (spatial, blocks, fmi) inside an FMU."""\n\n'
        f'__version__ = "{__version__}"\n'
    )
    for rel in RUNTIME_FILES:
        src = PACKAGE_ROOT / rel
        if src.is_dir():
            shutil.copytree(src, dest / rel, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    (dest / "fmi" / "__init__.py").write_text('"""FMU slave (run-time copy)."""\n')
    return dest


_TEMPLATE = '''"""{title}

FMI 2.0 co-simulation slave generated by titopfmu {version} (``titopfmu build``). The equations
are in the package {vendor} next to this file, a copy of titopfmu's spatial, blocks and fmi
layers; see documentation/index.html for the variables.
"""

# pythonfmu's loader looks for the literal text "class <Name>(Fmi2Slave):"
from {vendor}.fmi.slave import BlockSlave as Fmi2Slave
from {vendor}.fmi.slave import pin_module_globals

# balances a reference pythonfmu 0.7.0's loader releases at each instantiation (see the function)
pin_module_globals(globals())


class {model}(Fmi2Slave):
    FMU_TYPE = "{key}"
    N_CHILDREN = {n}
    author = "titopfmu"
    version = "{version}"
    license = "MIT"
    description = "{description}"
'''


def _description(ftype: FmuType, n: int) -> str:
    ports = f", {n} child port{'s' if n != 1 else ''}" if ftype.variants != (0,) else ""
    return f"TITOP {ftype.title}{ports} (titopfmu {__version__})"


def documentation_html(ftype: FmuType, n: int) -> str:
    """The FMU's documentation page: what it models and every variable with its layout."""
    from .slave import BlockSlave

    cls = type(ftype.model_name(n), (BlockSlave,), {"FMU_TYPE": ftype.key, "N_CHILDREN": n})
    slave = cls(instance_name="documentation")
    rows = []
    for vr, var in slave.vars.items():
        start = ""
        if var.causality.name in ("parameter", "input"):
            start = html.escape(str(slave._values[vr]))
        rows.append(
            f"<tr><td>{vr}</td><td><code>{html.escape(var.name)}</code></td>"
            f"<td>{var.causality.name}</td><td>{html.escape(slave._units[vr])}</td>"
            f"<td>{start}</td><td>{html.escape(var.description or '')}</td></tr>"
        )
    title = html.escape(_description(ftype, n))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;max-width:72em}}td,th{{border:1px solid #ccc;padding:2px 6px}}
table{{border-collapse:collapse}}</style></head><body>
<h1>{html.escape(ftype.model_name(n))}</h1>
<p>{title}. FMI 2.0 co-simulation unit generated by titopfmu; the physics is the titopfmu core
block of the same name, shipped in this FMU's resources.</p>
<h2>Conventions</h2>
<ul>
<li>Motion vector <code>X.m[1..18]</code> = [v&#775;<sub>P</sub> (m/s2), &omega;&#775; (rad/s2),
v<sub>P</sub> (m/s), &omega; (rad/s), IP (m), &Theta; = [&phi;, &theta;, &psi;] (rad)]: spatial
acceleration with respect to the frame, twist and position, all projected in the frame the
variable description names (the parent frame R_b for <code>P.m</code>, the body frame R_a for
child ports and <code>body.m</code>); &Theta; are the 3-2-1 Euler angles of that frame in the
inertial frame R_i: P<sub>b/i</sub> = R<sub>z</sub>(&psi;) R<sub>y</sub>(&theta;)
R<sub>x</sub>(&phi;).</li>
<li>Wrench <code>X.W[1..6]</code> = [F (N), T (N.m)] at the port point. A connection between a
parent B and a child A carries <code>C.m</code> of B down into <code>P.m</code> of A and
<code>P.W</code> of A up into <code>C.W</code> of B (seed 004, Figs. 6 and 8).</li>
<li>Joint motion <code>joint.m</code> = [q&#776;, q&#775;, q]; joint effort
<code>joint.tau</code>.</li>
<li>Parameters have variability <em>fixed</em>: set them before
<code>fmi2ExitInitializationMode</code>; they are checked there and a bad value makes the call
fail with a message naming the parameter. Over a communication step the FMU integrates its own
states with its inputs held, with an explicit Runge-Kutta method of order
<code>solver.method</code> (2, Heun, by default; 4 or 1) in sub-steps of at most
<code>solver.max_step</code>.</li>
<li>Non-finite inputs, non-positive steps and calls out of the FMI calling sequence are refused
with a logged message naming the variable.</li>
<li>The FMU can get, set and serialize its complete state (rollback).</li>
<li>Run-time requirements: Python 3.10+ with numpy and scipy
(<code>resources/requirements.txt</code>, <code>pythonfmu deploy</code>); on Linux hosts that
are not Python processes, preload libpython
(<code>LD_PRELOAD=libpython3.X.so</code>); on Windows, Python must be on the PATH.</li>
</ul>
<h2>Variables</h2>
<table><tr><th>VR</th><th>name</th><th>causality</th><th>unit</th><th>start</th>
<th>description</th></tr>
{chr(10).join(rows)}
</table></body></html>
"""


def _build_native(out_dir, types, max_children, progress) -> list[Path]:
    from ..progress import bar
    from .native.build import MINGW, CoreObjects, build_native, compiler

    variants = [
        (ftype, n)
        for ftype, n in all_variants()
        if (types is None or ftype.key in types) and (max_children is None or n <= max_children)
    ]
    win64 = shutil.which(MINGW) is not None
    core = CoreObjects(compiler(), win64)
    meter = bar(len(variants), "building FMUs", "FMU", progress)
    try:
        built = []
        for ftype, n in variants:
            if meter is not None:
                meter.set_postfix_str(ftype.model_name(n), refresh=False)
            built.append(build_native(ftype, n, out_dir, win64=win64, core=core))
            if meter is not None:
                meter.update(1)
        return built
    finally:
        core.close()
        if meter is not None:
            meter.close()


def build_fmus(
    out_dir: str | Path = "fmus",
    types: list[str] | None = None,
    max_children: int | None = None,
    log=None,
    progress: bool = False,
    native: bool = True,
) -> list[Path]:
    """Build the FMUs into ``out_dir`` and return their paths.

    ``native`` (default): FMUs compiled from the C core and the FMI wrapper of
    :mod:`titopfmu.fmi.native` (no Python where they run; co-simulation and model exchange);
    ``native=False``: the pythonfmu FMUs of the previous releases.

    ``types`` restricts the FMU types (keys of :data:`~titopfmu.fmi.catalog.FMU_TYPES`);
    ``max_children`` drops body variants with more child ports. The FMI shim is compiled once
    (see the module docstring); if it cannot be, a :class:`ShimWarning` is issued (and logged).
    ``progress`` shows a bar over the FMUs (on stderr, after a second).
    """
    if types is not None:
        unknown = sorted(set(types) - set(FMU_TYPES))
        if unknown:
            raise ValueError(f"unknown FMU type(s) {unknown}; choose from {sorted(FMU_TYPES)}")
    if native:
        return _build_native(out_dir, types, max_children, progress)
    from pythonfmu.builder import FmuBuilder

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    built = []
    with tempfile.TemporaryDirectory(prefix="titopfmu_build_") as tmp:
        stage = Path(tmp)
        vendor = _vendor(stage)
        req = stage / "requirements.txt"
        req.write_text(REQUIREMENTS)
        shim, why = compile_shim(stage)
        if shim is None:
            text = (
                f"titopfmu build: FMI shim not built: {why}. The FMUs use pythonfmu's binary "
                "unchanged: a refused call (bad parameter, non-finite input, non-positive step, "
                "call out of sequence) returns fmi2Fatal instead of fmi2Error."
            )
            warnings.warn(text, ShimWarning, stacklevel=2)
            if log:
                log(text)
        variants = [
            (ftype, n)
            for ftype, n in all_variants()
            if (types is None or ftype.key in types) and (max_children is None or n <= max_children)
        ]
        from ..progress import bar

        meter = bar(len(variants), "building FMUs", "FMU", progress)
        for ftype, n in variants:
            if meter is not None:
                meter.set_postfix_str(ftype.model_name(n), refresh=False)
            model = ftype.model_name(n)
            script_dir = stage / model
            script_dir.mkdir()
            # a module name per FMU and per titopfmu source: pythonfmu imports the slave module
            # by name, and modules of one process share sys.modules
            script = script_dir / f"{model.lower()}_{runtime_hash()}.py"
            script.write_text(
                _TEMPLATE.format(
                    title=_description(ftype, n), version=__version__, vendor=vendor.name,
                    model=model, key=ftype.key, n=n, description=_description(ftype, n),
                )
            )  # fmt: skip
            shutil.copytree(vendor, script_dir / vendor.name)
            doc = stage / f"doc_{model}"
            doc.mkdir()
            (doc / "index.html").write_text(documentation_html(ftype, n), encoding="utf-8")
            path = FmuBuilder.build_FMU(
                script,
                dest=out,
                project_files=[script_dir / vendor.name, req],
                documentation_folder=doc,
                canGetAndSetFMUstate=True,
                canSerializeFMUstate=True,
            )
            if shim is not None:
                install_shim(path, model, shim)
            built.append(Path(path))
            if log:
                log(f"built {path}")
            if meter is not None:
                meter.update()
        if meter is not None:
            meter.close()
    return built
