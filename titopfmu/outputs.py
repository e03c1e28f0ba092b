"""Output files of the command line: checked before a run, written with a fallback after it.

A run can take minutes; a CSV or plot path that cannot be written should not cost its results.
:func:`check_output` refuses, before the run, a path that is a directory, lies under a file, is
in a folder that cannot be written, or (plots) has an extension matplotlib cannot write.
:func:`write_output` writes after the run and, if that still fails (disk full, the folder
removed meanwhile), writes the same content to a fallback file in the current directory (else
the temporary directory) and says where.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


class OutputError(Exception):
    """An output path that cannot be written (the message names it and says why)."""


def plot_formats() -> dict[str, str]:
    """File extensions matplotlib can write (without the dot) -> description."""
    from matplotlib.figure import Figure

    return dict(Figure().canvas.get_supported_filetypes())


def _nearest_existing(path: Path) -> Path:
    p = path
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def _probe_folder(folder: Path) -> None:
    """Raise OSError unless a file can be created in ``folder`` (created and removed)."""
    with tempfile.TemporaryFile(dir=folder, prefix=".titopfmu_probe_"):
        pass


def check_output(path: str | os.PathLike, option: str, *, plot: bool = False) -> None:
    """Raise :class:`OutputError` if ``path`` (given with ``option``) cannot be written.

    Nothing is created or changed: a missing folder is checked through its nearest existing
    ancestor (writing creates it later)."""
    p = Path(os.fspath(path))
    if plot:
        ext = p.suffix[1:].lower()
        formats = plot_formats()
        if ext not in formats:
            what = f"unknown image extension '.{ext}'" if ext else "no file extension"
            raise OutputError(
                f"{option} '{path}': {what}; use one of: " + ", ".join(sorted(formats))
            )
    if p.is_dir():
        raise OutputError(f"{option} '{path}' is a directory; give a file name")
    if p.exists():
        try:
            with open(p, "ab"):  # opened for appending, nothing written: unchanged
                pass
        except OSError as exc:
            raise OutputError(f"{option} '{path}' cannot be written: {exc.strerror}") from None
        return
    base = _nearest_existing(p.parent if str(p.parent) else Path("."))
    if not base.is_dir():
        raise OutputError(f"{option} '{path}': '{base}' is a file, not a folder")
    try:
        _probe_folder(base)
    except OSError as exc:
        raise OutputError(
            f"{option} '{path}': cannot create files in '{base}': {exc.strerror}"
        ) from None


def fallback_path(path: str | os.PathLike, suffix: str = "") -> Path:
    """A new file named after ``path`` in the current directory, else the temporary directory
    (with ``path``'s extension, else ``suffix``)."""
    p = Path(os.fspath(path))
    stem, suffix = p.stem or "titopfmu", p.suffix or suffix
    for folder in (Path.cwd(), Path(tempfile.gettempdir())):
        try:
            fd, name = tempfile.mkstemp(prefix=f"{stem}-", suffix=suffix, dir=folder)
        except OSError:
            continue
        os.close(fd)
        return Path(name)
    raise OutputError(f"no folder to write a copy of '{path}' to")


def write_output(
    write: Callable[[str], None], path: str | os.PathLike, option: str, suffix: str = ""
) -> tuple[str, str | None]:
    """Call ``write(path)``; on failure call ``write`` on a :func:`fallback_path`.

    Returns (the path written, None) or (the fallback written, the message naming ``path``, the
    reason and the fallback). ``suffix`` is the fallback's extension if ``path`` has none.
    Raises :class:`OutputError` if the fallback fails too."""
    try:
        write(os.fspath(path))
        return os.fspath(path), None
    except OSError as exc:
        reason = exc.strerror or str(exc)
    other = fallback_path(path, suffix)
    try:
        write(str(other))
    except OSError as exc:
        raise OutputError(
            f"{option} '{path}' could not be written ({reason}), nor the copy '{other}' "
            f"({exc.strerror or exc})"
        ) from None
    return str(other), f"{option} '{path}' could not be written ({reason}); wrote {other} instead"
