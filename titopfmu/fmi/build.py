"""``titopfmu build``: one FMI 2.0 (or 3.0) FMU per block type and variant, native.

Every FMU is compiled from the C core (``titopfmu/core/csrc``) and the FMI wrapper written once
in C (:mod:`titopfmu.fmi.native`); it offers co-simulation and model exchange, exact directional
derivatives, and needs no Python where it runs. It carries ``binaries/linux64`` (and
``binaries/win64`` when a MinGW-w64 cross compiler is installed; ``x86_64-linux`` and
``x86_64-windows`` for FMI 3.0), ``sources/`` (to compile it for another platform) and
``documentation/index.html``, generated from the same variable table as the model description.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from .catalog import FMU_TYPES, FmuType, all_variants
from .native.documentation import documentation_html as documentation_html
from .terminals import osp_file_name

#: Build times (s) measured on a 2-core x86-64 server (AMD EPYC, gcc 12 and MinGW-w64 gcc 12):
#: the C core's objects (titop_double.c, titop_complex.c), compiled once per build, for Linux
#: and for Windows; and per FMU, its Linux binary (with the Python side: describing, measuring
#: its dependencies, zipping), its Windows one, and for FMI 3.0 the FMI 2.0 probe its
#: dependencies are measured on. :func:`estimate_seconds` combines them (all 49 FMI 2.0 FMUs
#: with Windows binaries: about 140 s on one core, 70 s on two).
CORE_SECONDS = {"linux": (4.0, 10.5), "win64": (4.5, 11.0)}
FMU_SECONDS = {"linux": 1.2, "win64": 1.0, "fmi3_probe": 1.0}


def default_jobs() -> int:
    """The number of compiles run at once by default: the CPUs this process may use."""
    from .native.build import default_jobs as jobs

    return jobs()


def win64_default(win64: bool | None = None) -> bool:
    """Whether a build with ``win64`` includes Windows binaries: ``win64`` itself when given,
    else (None, every default) whether MinGW-w64's cross compiler
    (``x86_64-w64-mingw32-gcc``) is on the PATH."""
    from .native.build import MINGW

    return shutil.which(MINGW) is not None if win64 is None else bool(win64)


def platforms(win64: bool | None = None, fmi_version: int = 2) -> tuple[str, ...]:
    """The ``binaries/`` folders of the FMUs a build with ``win64`` (None: when MinGW-w64 is
    installed, :func:`win64_default`) writes: ``("linux64", "win64")`` or ``("linux64",)``;
    FMI 3.0: ``x86_64-linux`` and ``x86_64-windows``."""
    from .native.build import PLATFORMS

    linux, windows = PLATFORMS[fmi_version]
    return (linux, windows) if win64_default(win64) else (linux,)


def fmu_platforms(path: str | Path) -> tuple[str, ...]:
    """The platforms an FMU file carries binaries for: the folders under its ``binaries/``,
    sorted."""
    import zipfile

    with zipfile.ZipFile(path) as z:
        return tuple(sorted({n.split("/")[1] for n in z.namelist()
                             if n.startswith("binaries/") and n.count("/") >= 2}))  # fmt: skip


def win64_notice(win64: bool | None = None, fmi_version: int = 2) -> str | None:
    """None when a build with ``win64`` (None: when MinGW-w64 is installed) includes Windows
    binaries; else the line saying that it does not, and why, e.g. ``no win64 binaries: the
    FMUs carry binaries/linux64 only (MinGW-w64's x86_64-w64-mingw32-gcc is not on the PATH;
    install it, e.g. apt-get install gcc-mingw-w64-x86-64, for FMUs that also run on
    Windows)``. No ``titopfmu:`` prefix: the caller adds its own."""
    from .native.build import MINGW, PLATFORMS

    if win64_default(win64):
        return None
    linux, windows = PLATFORMS[fmi_version]
    why = ("not asked for (win64=False)" if win64 is not None else
           f"MinGW-w64's {MINGW} is not on the PATH; install it, e.g. apt-get install "
           "gcc-mingw-w64-x86-64, for FMUs that also run on Windows")  # fmt: skip
    return f"no {windows} binaries: the FMUs carry binaries/{linux} only ({why})"


def estimate_seconds(n_fmus: int, jobs: int | None = None, win64: bool | None = None,
                     fmi_version: int = 2) -> float:  # fmt: skip
    """A rough wall time (s) of building ``n_fmus`` FMUs on ``jobs`` cores (None: all), with
    Windows binaries when ``win64`` (None: when MinGW-w64 is installed): the C core once (its
    objects in parallel, the longest one at least), then the FMUs spread over the cores. From
    :data:`CORE_SECONDS` and :data:`FMU_SECONDS`, measured on one machine: a guide, not a
    promise."""
    if n_fmus <= 0:
        return 0.0
    jobs = default_jobs() if jobs is None else max(1, int(jobs))
    win64 = win64_default(win64)
    core = list(CORE_SECONDS["linux"]) + (list(CORE_SECONDS["win64"]) if win64 else [])
    core_wall = max(max(core), sum(core) / min(jobs, len(core)))
    per_fmu = FMU_SECONDS["linux"] + (FMU_SECONDS["win64"] if win64 else 0.0)
    if fmi_version == 3:
        per_fmu += FMU_SECONDS["fmi3_probe"]
    return core_wall + per_fmu * -(-n_fmus // min(jobs, n_fmus))


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(5, 5 * round(seconds / 5))} s"
    minutes = round(seconds / 30) / 2
    return f"{minutes:g} min"


def build_notice(n_fmus: int, out_dir: str | Path, jobs: int | None = None,
                 win64: bool | None = None, fmi_version: int = 2,
                 cached: bool = False) -> str:  # fmt: skip
    """The one line announcing a build, with its estimate (:func:`estimate_seconds`), e.g.
    ``building 14 FMUs (FMI 2.0, linux64 + win64) into fmus on 2 cores, about 35 s``;
    ``cached`` adds ``(once; later runs reuse them)``. ``jobs`` None: all cores; ``win64`` None:
    when MinGW-w64 is installed. No ``titopfmu:`` prefix: the caller adds its own. Without the
    Windows binaries the platforms are the Linux one alone: :func:`win64_notice` says so in
    words."""
    jobs = default_jobs() if jobs is None else max(1, int(jobs))
    win64 = win64_default(win64)
    binaries = " + ".join(platforms(win64, fmi_version))
    text = (f"building {n_fmus} FMU{'s' if n_fmus != 1 else ''} (FMI {fmi_version}.0, "
            f"{binaries}) into {out_dir} on {jobs} core{'s' if jobs != 1 else ''}, about "
            f"{_duration(estimate_seconds(n_fmus, jobs, win64, fmi_version))}")  # fmt: skip
    return text + (" (once; later runs reuse them)" if cached else "")


def build_variants(out_dir: str | Path, variants: list[tuple[FmuType, int]], *,
                   jobs: int | None = None, progress: bool = False, fmi_version: int = 2,
                   win64: bool | None = None) -> list[Path]:  # fmt: skip
    """Build the FMUs of ``variants`` ((type, number of child ports) pairs, any port count)
    into ``out_dir``; returns their paths in the order of ``variants``.

    The C core is compiled once, then the FMUs on ``jobs`` threads (None: every core, see
    :func:`default_jobs`; 1: one after the other), each driving its compiler processes. All of
    them are made in a hidden folder inside ``out_dir`` and moved to their names only once every
    one is built: a failed or interrupted build leaves no FMU of its own in ``out_dir`` (and the
    FMUs there from an earlier build untouched). The first failure stops the build (the running
    compiles are killed) and is raised; so is a KeyboardInterrupt."""
    from ..progress import bar
    from .native.build import Compiles, CoreObjects, build_native, compiler, run_tasks

    if fmi_version not in (2, 3):
        raise ValueError(f"fmi_version must be 2 or 3, not {fmi_version!r}")
    if jobs is None:
        jobs = default_jobs()
    elif isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, not {jobs!r}")
    out_dir = Path(out_dir)
    if not variants:
        return []
    win64 = win64_default(win64)
    cc = compiler()
    out_dir.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".titopfmu-build-", dir=out_dir))
    compiles = Compiles()
    meter = bar(len(variants), "building FMUs", "FMU", progress)
    try:
        if meter is not None:
            meter.set_postfix_str("C core", refresh=False)
        core = CoreObjects(cc, win64, jobs=jobs, compiles=compiles)
        try:

            def task(ftype: FmuType, n: int):
                return lambda: build_native(ftype, n, stage, win64=win64, core=core,
                                            fmi_version=fmi_version, compiles=compiles)  # fmt: skip

            def done(i: int, path: Path) -> None:
                if meter is not None:
                    meter.set_postfix_str(path.stem, refresh=False)
                    meter.update(1)

            built = run_tasks([task(t, n) for t, n in variants], jobs, compiles, done)
        finally:
            core.close()
        paths = []
        for p in built:  # every one built: now under their names (with their OSP-IS files)
            os.replace(p, out_dir / p.name)
            osp = p.with_name(osp_file_name(p.stem))
            if osp.exists():
                os.replace(osp, out_dir / osp.name)
            paths.append(out_dir / p.name)
        return paths
    finally:
        if meter is not None:
            meter.close()
        shutil.rmtree(stage, ignore_errors=True)


def selected_variants(types: list[str] | None = None,
                      max_children: int | None = None) -> list[tuple[FmuType, int]]:  # fmt: skip
    """The (type, number of child ports) pairs ``build_fmus(types=..., max_children=...)``
    builds, in its order."""
    return [
        (ftype, n)
        for ftype, n in all_variants()
        if (types is None or ftype.key in types) and (max_children is None or n <= max_children)
    ]


def build_fmus(
    out_dir: str | Path = "fmus",
    types: list[str] | None = None,
    max_children: int | None = None,
    log=None,
    progress: bool = False,
    fmi_version: int = 2,
    win64: bool | None = None,
    jobs: int | None = None,
) -> list[Path]:
    """Build the FMUs into ``out_dir`` and return their paths (in the catalog's order).

    ``types`` restricts the FMU types (keys of :data:`~titopfmu.fmi.catalog.FMU_TYPES`);
    ``max_children`` drops body variants with more child ports; ``progress`` shows a bar over
    the FMUs (on stderr, after a second). Without a C compiler a
    :class:`~titopfmu.fmi.native.build.BuildError` says which one to install. ``log`` is kept
    for compatibility (unused). ``fmi_version``: 2 (FMI 2.0, default) or 3 (FMI 3.0: the same
    units with each port and vector or matrix parameter as one array variable); ``win64``: also
    cross-compile the Windows binaries (default: when MinGW-w64 is installed, see
    :func:`win64_default`); ``jobs``: how many compiles run at once (None: every core,
    :func:`default_jobs`; 1: one after the other). A failed or interrupted build leaves none of
    its FMUs in ``out_dir`` (:func:`build_variants`). It prints nothing but the bar: announce it
    with :func:`build_notice`, and a build without Windows binaries with :func:`win64_notice`
    (what ``titopfmu build`` does); :func:`fmu_platforms` reads what an FMU carries.
    """
    if fmi_version not in (2, 3):
        raise ValueError(f"fmi_version must be 2 or 3, not {fmi_version!r}")
    if types is not None:
        unknown = sorted(set(types) - set(FMU_TYPES))
        if unknown:
            raise ValueError(f"unknown FMU type(s) {unknown}; choose from {sorted(FMU_TYPES)}")
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    return build_variants(out_dir, selected_variants(types, max_children), jobs=jobs,
                          progress=progress, fmi_version=fmi_version, win64=win64)  # fmt: skip
