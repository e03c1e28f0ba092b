"""A per-user cache of built FMUs, so that ``titopfmu example --engine cosim`` builds them once.

The folder is ``$XDG_CACHE_HOME/titopfmu/fmus/<key>`` (``~/.cache`` when ``XDG_CACHE_HOME`` is
not set; ``TITOPFMU_CACHE_DIR`` replaces ``$XDG_CACHE_HOME/titopfmu``). The key
(:func:`cache_key`) is titopfmu's version, a hash of every source an FMU is built from (the C
core, the FMI wrapper and its generator, the FMI headers, the catalog of types), the FMI version
and the platforms the FMUs carry binaries for, e.g. ``0.3.0-0123456789abcdef-fmi2-linux64+win64``
or, without MinGW-w64, ``...-fmi2-linux64``: editing any source builds a fresh set, and a folder
never mixes FMUs with and without Windows binaries (a set built before MinGW-w64 was installed
is not taken for one with them once it is, nor the reverse). A set is built in a temporary
folder next to its final place and renamed into it once complete, so an interrupted build leaves
no half set behind.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from .._version import __version__
from .catalog import FMU_TYPES, FmuType
from .native.build import user_cache_dir


def cache_root() -> Path:
    """The folder holding the cached FMU sets (``fmus/`` in :func:`user_cache_dir`)."""
    return user_cache_dir() / "fmus"


def sources_hash() -> str:
    """Hash of the FMUs' sources (16 hex digits)."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256(__version__.encode())
    files: list[Path] = []
    for rel in ("core/csrc", "fmi/native", "fmi/headers"):
        files += sorted(f for f in (root / rel).iterdir() if f.suffix in (".c", ".h", ".py"))
    files += [root / "fmi" / f for f in ("build.py", "catalog.py", "ports.py")]
    # the lone-block model, the port channels the generator reads, the block declarations the
    # catalogue derives from and the classes an FMU type builds
    files += [root / "core" / "model.py", root / "blocks" / "standalone.py",
              root / "blocks" / "declarations.py", root / "blocks" / "bodies.py"]  # fmt: skip
    for f in files:
        h.update(str(f.relative_to(root)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def cache_key(win64: bool | None = None, fmi_version: int = 2) -> str:
    """The name of the cache folder of the FMUs built with ``win64`` (None: when MinGW-w64 is
    installed, :func:`~titopfmu.fmi.build.win64_default`) as FMI ``fmi_version``:
    ``<titopfmu version>-<sources hash>-fmi<2|3>-<platforms>``, the platforms being the FMUs'
    ``binaries/`` folders joined by ``+`` (``linux64+win64``, ``linux64``; FMI 3.0:
    ``x86_64-linux+x86_64-windows``, ``x86_64-linux``)."""
    from .build import platforms

    if fmi_version not in (2, 3):
        raise ValueError(f"fmi_version must be 2 or 3, not {fmi_version!r}")
    return (f"{__version__}-{sources_hash()}-fmi{fmi_version}-"
            f"{'+'.join(platforms(win64, fmi_version))}")  # fmt: skip


def fmu_file_names(types: list[str], max_children: int | None = None) -> list[str]:
    """The FMU files ``build_fmus(types=..., max_children=...)`` writes."""
    from .catalog import all_variants

    return [
        f"{t.model_name(n)}.fmu"
        for t, n in all_variants()
        if t.key in types and (max_children is None or n <= max_children)
    ]


def cached_fmus(
    types: list[str],
    max_children: int | None = None,
    *,
    progress: bool = False,
    notice=None,
    jobs: int | None = None,
    win64: bool | None = None,
    fmi_version: int = 2,
) -> Path:
    """The cache folder holding the FMUs of ``types`` (built there first if missing).

    ``notice`` (a function of one string) is told once before a build starts, what it builds
    where and about how long it takes (:func:`~titopfmu.fmi.build.build_notice`); None: nothing
    is said. ``jobs``: compiles at once (None: every core). ``win64``: FMUs with Windows
    binaries (None: when MinGW-w64 is installed); ``fmi_version``: 2 or 3. Each combination
    has a folder of its own (:func:`cache_key`)."""
    from .build import build_fmus, build_notice, selected_variants, win64_default

    unknown = sorted(set(types) - set(FMU_TYPES))
    if unknown:
        raise ValueError(f"unknown FMU type(s) {unknown}")
    win64 = win64_default(win64)  # decided once: the folder and the build agree
    key = cache_key(win64, fmi_version)
    names = fmu_file_names(types, max_children)
    folder = cache_root() / key
    missing = [n for n in names if not (folder / n).is_file()]
    if not missing:
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=folder.parent))
    try:
        if folder.is_dir():  # a set with other types: keep what it has
            for f in folder.glob("*.fmu"):
                shutil.copy2(f, stage / f.name)
        todo = sorted({n[: -len(".fmu")] for n in missing})
        wanted_types = [k for k in types if any(FMU_TYPES[k].model_name(n) in todo
                                                for n in FMU_TYPES[k].variants)]  # fmt: skip
        if notice is not None:
            n = len(selected_variants(wanted_types, max_children))
            notice(build_notice(n, folder, jobs, win64, fmi_version, cached=True))
        build_fmus(stage, types=wanted_types, max_children=max_children, progress=progress,
                   jobs=jobs, win64=win64, fmi_version=fmi_version)  # fmt: skip
        old = None
        if folder.is_dir():
            old = folder.with_name(f".{key}-old-{os.getpid()}")
            os.replace(folder, old)
        try:
            os.replace(stage, folder)
        except OSError:  # another process filled the folder meanwhile
            if any(not (folder / n).is_file() for n in names):
                raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if stage.exists():
            shutil.rmtree(stage, ignore_errors=True)
    return folder


def cached_variants(
    variants: list[tuple[str, int]],
    *,
    progress: bool = False,
    notice=None,
    jobs: int | None = None,
    win64: bool | None = None,
    fmi_version: int = 2,
    types: Mapping[str, FmuType] | None = None,
) -> Path:
    """The cache folder holding the FMUs of the (type key, number of child ports) pairs
    ``variants``, built there first if missing. Unlike :func:`cached_fmus` the port counts are
    not limited to the variants ``titopfmu build`` writes: a body with 7 child ports gets its
    ``...C7`` FMU (the C core and the FMI wrapper have no cap; the generator sizes every array).
    ``notice``, ``jobs``, ``win64``, ``fmi_version``: as for :func:`cached_fmus` (the same
    folders). ``types``: FMU types by key beside the catalogue's, the flexible blocks'
    (:func:`~titopfmu.fmi.catalog.flex_fmu_type`, whose model identifiers carry the hash of
    their reduced model)."""
    known = {**FMU_TYPES, **(types or {})}
    from .build import build_notice, build_variants, win64_default

    for key, n in variants:
        if key not in known:
            raise ValueError(f"unknown FMU type {key!r}")
        t = known[key]
        if t.variants == (0,) and n != 0 or n < min(t.variants):
            raise ValueError(f"FMU type {key!r} has no variant with {n} child ports")
    win64 = win64_default(win64)
    folder = cache_root() / cache_key(win64, fmi_version)
    wanted = sorted(set(variants))
    missing = [(k, n) for k, n in wanted
               if not (folder / f"{known[k].model_name(n)}.fmu").is_file()]  # fmt: skip
    if not missing:
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    if notice is not None:
        notice(build_notice(len(missing), folder, jobs, win64, fmi_version, cached=True))
    # built in a hidden folder inside `folder` and moved in once all are: no half file is ever
    # visible, and a concurrent process building the same ones replaces them with the same bytes
    build_variants(folder, [(known[k], n) for k, n in missing], jobs=jobs,
                   progress=progress, fmi_version=fmi_version, win64=win64)  # fmt: skip
    return folder
