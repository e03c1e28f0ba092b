"""Zip archives (``.ssp``, ``.fmu``) unpacked safely: bounded, checked, all or nothing.

:func:`extract` is how titopfmu unpacks an archive (the master's SSP reader and FMU loader);
:func:`check` runs the same checks without writing anything (before fmpy reads an FMU's
model description). Before a byte is written, every member is checked:

* the archive has at most ``max_members`` members and expands to at most ``max_size`` bytes in
  all (its members' declared sizes; the bytes written are counted too, and Python's zipfile
  never expands a member past its declared size);
* no member larger than :data:`RATIO_FLOOR` expands more than ``max_ratio`` times its
  compressed size (a zip bomb: deflate reaches about 1000);
* no member is encrypted, has an absolute path (``/x``, ``\\x``, ``C:x``), ``..`` in its path,
  a backslash (zip paths use ``/``), a NUL character, or is a symbolic link.

The bounds are a :class:`Limits`: the defaults (:data:`DEFAULTS`: 1 GiB, 10,000 members, ratio
200), overridden by the environment variables of :data:`ENV` (``TITOPFMU_ARCHIVE_MAX_SIZE``:
bytes, or with a suffix ``k``, ``M``, ``G``, binary: ``512M``; ``TITOPFMU_ARCHIVE_MAX_MEMBERS``;
``TITOPFMU_ARCHIVE_MAX_RATIO``), by :func:`bounded` around the code that reads archives, and by
a ``limits=`` keyword (:func:`~titopfmu.master.ssp.read_ssp`, ``FmuFile.load``, here), each
over the ones before.

A refusal is an :class:`ArchiveError` of one line naming the archive and the member (the master
turns it into a :class:`~titopfmu.master.CosimError`); the folder being written is removed on
any failure, an interruption included.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import re
import shutil
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, fields, replace
from pathlib import Path

#: Members smaller than this (bytes, expanded) are never refused for their compression ratio:
#: small text files may compress very well.
RATIO_FLOOR = 1 << 20

_CHUNK = 1 << 20


class ArchiveError(ValueError):
    """An archive that cannot be unpacked safely: unreadable, past a bound, or holding a member
    that is encrypted or would land outside its folder. The message is one line naming the
    archive and the member."""


@dataclass(frozen=True)
class Limits:
    """Bounds of an archive: ``max_size`` bytes expanded (all members), ``max_members``
    members, ``max_ratio`` expanded/compressed bytes of a member (above :data:`RATIO_FLOOR`).
    A field left None takes the value in force (:func:`current_limits`)."""

    max_size: int | None = None
    max_members: int | None = None
    max_ratio: float | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None:
                continue
            ok = not isinstance(v, bool) and isinstance(v, (int, float)) and v > 0
            if f.name != "max_ratio":
                ok = ok and float(v).is_integer()
            if not ok or not math.isfinite(v):
                raise ArchiveError(f"archive bound {f.name} must be a positive "
                                   f"{'number' if f.name == 'max_ratio' else 'integer'}, "
                                   f"got {v!r}")  # fmt: skip


#: The bounds when nothing else is set.
DEFAULTS = Limits(max_size=1 << 30, max_members=10_000, max_ratio=200.0)

#: The environment variable of each bound.
ENV = {
    "max_size": "TITOPFMU_ARCHIVE_MAX_SIZE",
    "max_members": "TITOPFMU_ARCHIVE_MAX_MEMBERS",
    "max_ratio": "TITOPFMU_ARCHIVE_MAX_RATIO",
}

_SCOPED: contextvars.ContextVar[Limits | None] = contextvars.ContextVar(
    "titopfmu_archive_limits", default=None
)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def _from_env(field: str, text: str):
    name = ENV[field]
    t = text.strip()
    try:
        if field == "max_size":
            m = re.fullmatch(r"([0-9]+(?:\.[0-9]*)?)\s*([kKmMgGtT]?)(?:i?[bB])?", t)
            if not m:
                raise ValueError
            return int(float(m.group(1)) * _UNITS[m.group(2).lower()])
        if field == "max_members":
            return int(t)
        return float(t)
    except ValueError:
        raise ArchiveError(f"{name}={text!r} is not a valid "
                           f"{'size (bytes, or 512M, 2G...)' if field == 'max_size' else 'number'}"
                           ) from None  # fmt: skip


def _merge(base: Limits, over: Limits | None) -> Limits:
    if over is None:
        return base
    return replace(base, **{f.name: v for f in fields(over)
                            if (v := getattr(over, f.name)) is not None})  # fmt: skip


def current_limits(limits: Limits | None = None) -> Limits:
    """The bounds in force: :data:`DEFAULTS`, the environment (:data:`ENV`), :func:`bounded`,
    then ``limits``, each over the ones before. :class:`ArchiveError` for a bad setting."""
    env = {}
    for field, name in ENV.items():
        text = os.environ.get(name)
        if text is not None and text.strip():
            env[field] = _from_env(field, text)
    try:
        current = _merge(DEFAULTS, Limits(**env))
    except ArchiveError as exc:
        raise ArchiveError(f"{exc} (from the environment: {', '.join(ENV.values())})") from None
    return _merge(_merge(current, _SCOPED.get()), limits)


@contextlib.contextmanager
def bounded(limits: Limits | None = None, **bounds) -> Iterator[Limits]:
    """Inside: the archives read take ``limits`` (or the ``bounds`` given by name:
    ``max_size``, ``max_members``, ``max_ratio``) over the ones in force.

    >>> with bounded(max_size=4 << 30):
    ...     cs, experiment = read_ssp("big.ssp")
    """
    new = _merge(current_limits(), _merge(limits or Limits(), Limits(**bounds)))
    token = _SCOPED.set(new)
    try:
        yield new
    finally:
        _SCOPED.reset(token)


def _shown(text: str) -> str:
    """``text`` on one line: control and other non-printable characters escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


def _bytes(n: float) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("kiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.4g} {unit}"
    return f"{int(n)} bytes"


def _name_problem(name: str) -> str | None:
    if not name:
        return "has an empty name"
    if "\x00" in name:
        return "has a NUL character in its name"
    if name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name):
        return "has an absolute path"
    if "\\" in name:
        return "has a backslash in its path (zip paths use '/')"
    if ".." in name.split("/"):
        return "has '..' in its path (it would land outside the archive's folder)"
    if os.name == "nt" and re.search(r'[:<>|"?*]', name):  # pragma: no cover - Windows
        return "has a character Windows does not allow in a file name"
    return None


def _checked(z: zipfile.ZipFile, label: str, lim: Limits) -> list[zipfile.ZipInfo]:
    """The members of ``z`` after every check (see the module's docstring)."""
    infos = z.infolist()
    if len(infos) > lim.max_members:
        raise ArchiveError(f"{label}: {len(infos)} members, more than the {lim.max_members} "
                           f"allowed ({ENV['max_members']})")  # fmt: skip
    total = 0
    for info in infos:
        where = f"{label}: member '{_shown(info.filename)}'"
        problem = _name_problem(info.filename)
        if problem:
            raise ArchiveError(f"{where} {problem}")
        if info.flag_bits & 0x1:
            raise ArchiveError(f"{where} is encrypted (password-protected archives are not "
                               "supported)")  # fmt: skip
        if stat.S_ISLNK(info.external_attr >> 16):
            raise ArchiveError(f"{where} is a symbolic link")
        size = info.file_size
        if size > RATIO_FLOOR and size > lim.max_ratio * max(info.compress_size, 1):
            raise ArchiveError(
                f"{where} expands {size / max(info.compress_size, 1):.0f} times "
                f"({_bytes(info.compress_size)} to {_bytes(size)}), more than the "
                f"{lim.max_ratio:g} allowed ({ENV['max_ratio']}): a zip bomb?"
            )
        total += size
        if total > lim.max_size:
            raise ArchiveError(f"{where}: the archive expands to more than "
                               f"{_bytes(lim.max_size)} ({ENV['max_size']})")  # fmt: skip
    return infos


def _open(archive: Path, label: str) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
        raise ArchiveError(f"{label} is not a readable zip archive: {_shown(exc)}") from None


def check(
    archive: str | os.PathLike, *, limits: Limits | None = None, label: str | None = None
) -> list[zipfile.ZipInfo]:
    """The members of ``archive`` after the checks of :func:`extract`; nothing is written.
    ``label``: how messages name the archive (default ``'path'``)."""
    archive = Path(archive)
    label = label or f"'{_shown(archive)}'"
    lim = current_limits(limits)
    with _open(archive, label) as z:
        return _checked(z, label, lim)


def extract(
    archive: str | os.PathLike,
    *,
    limits: Limits | None = None,
    prefix: str = "titopfmu_",
    dir: str | os.PathLike | None = None,
    label: str | None = None,
) -> Path:
    """Unpack ``archive`` into a new temporary folder (``tempfile.mkdtemp(prefix=, dir=)``),
    its path returned; the caller removes it. Every member is checked first (module docstring);
    a refusal or any failure (a corrupt member, a full disk, an interruption) removes the
    folder and raises :class:`ArchiveError` (of one line naming the archive and the member) or
    the interruption. ``label``: how messages name the archive (default ``'path'``)."""
    archive = Path(archive)
    label = label or f"'{_shown(archive)}'"
    lim = current_limits(limits)
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=dir))
    member = None
    try:
        with _open(archive, label) as z:
            infos = _checked(z, label, lim)
            written = 0
            for info in infos:
                member = info.filename
                parts = [p for p in member.split("/") if p not in ("", ".")]
                target = folder.joinpath(*parts)
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with z.open(info) as src, open(target, "wb") as dst:
                    while chunk := src.read(_CHUNK):
                        written += len(chunk)
                        if written > lim.max_size:
                            raise ArchiveError(
                                f"{label}: member '{_shown(member)}': the archive expands to "
                                f"more than {_bytes(lim.max_size)} ({ENV['max_size']})"
                            )
                        dst.write(chunk)
    except ArchiveError:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError,
            OSError, ValueError) as exc:  # fmt: skip
        shutil.rmtree(folder, ignore_errors=True)
        where = label if member is None else f"{label}: member '{_shown(member)}'"
        text = _shown(exc)
        if isinstance(exc, zipfile.BadZipFile) and "CRC" in text:
            raise ArchiveError(f"{where} is corrupt (CRC mismatch)") from None
        raise ArchiveError(f"{where} cannot be unpacked: {type(exc).__name__}: {text}") from None
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder


__all__ = [
    "ArchiveError",
    "DEFAULTS",
    "ENV",
    "Limits",
    "RATIO_FLOOR",
    "bounded",
    "check",
    "current_limits",
    "extract",
]
