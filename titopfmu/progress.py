"""Progress output of the command line: bars on a terminal, notices before slow first steps."""

from __future__ import annotations

import sys
from pathlib import Path

#: A bar shows only once its run has lasted this long (s): short runs stay quiet.
BAR_DELAY = 1.0

#: Modules whose numba kernels are compiled on first use and cached next to their source.
_KERNEL_MODULES = (
    "spatial/kernels.py",
    "blocks/kernels.py",
    "assembly/compiled.py",
    "assembly/loop_solver.py",
)


def wanted(flag: bool | None) -> bool:
    """``--progress`` / ``--no-progress``, else on when stderr is a terminal."""
    if flag is not None:
        return flag
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def bar(total: float, desc: str, unit: str, enabled: bool):
    """A tqdm bar on stderr (shown after :data:`BAR_DELAY` s), or None when not ``enabled``."""
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, delay=BAR_DELAY, file=sys.stderr)


def kernels_need_compiling() -> bool:
    """Whether numba will compile the kernels in this process (no cache index newer than a
    kernel module's source next to it; numba's cache is then empty or stale)."""
    try:
        from .spatial import kernels
    except ImportError:  # pragma: no cover - a build without the kernels module
        return False
    if not getattr(kernels, "COMPILED", False):  # no numba, or kernels not JIT-compiled
        return False
    root = Path(kernels.__file__).resolve().parent.parent
    for rel in _KERNEL_MODULES:
        src = root / rel
        if not src.is_file():
            continue
        cache = src.parent / "__pycache__"
        stamp = src.stat().st_mtime
        index = list(cache.glob(f"{src.stem}.*.nbi")) if cache.is_dir() else []
        if not index or max(f.stat().st_mtime for f in index) < stamp:
            return True
    return False


def compile_notice(quiet: bool = False) -> None:
    """Print a one-line notice to stderr if numba is about to compile the kernels."""
    if not quiet and kernels_need_compiling():
        print(
            "compiling the numeric kernels (first run only, ~30 s)...", file=sys.stderr, flush=True
        )
