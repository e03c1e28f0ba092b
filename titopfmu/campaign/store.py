"""A campaign's output directory: its manifest, the append log of finished runs, the
consolidated table and the trajectories.

``DIR/campaign.json``
    the manifest: the campaign's specification (model fingerprint, parameters and their
    distributions, samples, method, seed, simulation settings, outcomes) and its SHA-256. A
    directory holding another campaign is refused before any run.
``DIR/runs.jsonl``
    one JSON line per finished run, appended (and flushed) as each run arrives: what a resumed
    campaign reads to skip the runs already done. A line cut by a kill is dropped on resume.
``DIR/samples.parquet``, ``DIR/results.parquet``, ``DIR/summary.csv``
    the samples (run, parameters), the consolidated table (one row per run: parameters,
    outcomes, status, error) and its summary statistics.
``DIR/trajectories/run_NNNNNN.parquet``
    each run's recorded columns against ``time``, when asked for (written before its log line).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..blocks.base import TitopError

FORMAT = "titopfmu-campaign"
VERSION = 1
MANIFEST = "campaign.json"
LOG = "runs.jsonl"


class CampaignError(TitopError):
    """A campaign cannot start (bad input, a directory holding another campaign, no scheduler),
    or cannot go on."""


def spec_hash(spec: dict) -> str:
    """SHA-256 of a specification's canonical JSON."""
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_manifest(directory: Path) -> dict | None:
    """The manifest of ``directory``, or None if it has none."""
    p = directory / MANIFEST
    if not p.exists():
        return None
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CampaignError(f"'{p}' is not a readable campaign manifest: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or "spec" not in doc:
        raise CampaignError(f"'{p}' is not a titopfmu campaign manifest")
    return doc


def _differences(old: dict, new: dict) -> list[str]:
    out = []
    for k in sorted(set(old) | set(new)):
        if old.get(k) != new.get(k):
            a, b = json.dumps(old.get(k)), json.dumps(new.get(k))
            if len(a) > 60:
                a = a[:57] + "..."
            if len(b) > 60:
                b = b[:57] + "..."
            out.append(f"{k}: {a} there, {b} now")
    return out


def check(directory: Path, spec: dict) -> bool:
    """True if ``directory`` holds the campaign ``spec`` (a resume), False if it is new or empty;
    :class:`CampaignError` for a file, another campaign, or a non-empty directory that is not a
    campaign. Nothing is written."""
    h = spec_hash(spec)
    if directory.exists() and not directory.is_dir():
        raise CampaignError(f"output directory '{directory}' is a file")
    manifest = read_manifest(directory) if directory.is_dir() else None
    if manifest is not None:
        if manifest.get("hash") == h:
            return True
        diff = _differences(manifest["spec"], spec)
        raise CampaignError(
            f"'{directory}' holds a different campaign ("
            + "; ".join(diff or ["same settings, different hash"])
            + "); give another --out directory, or remove it to start over"
        )
    if directory.is_dir() and any(directory.iterdir()):
        raise CampaignError(
            f"output directory '{directory}' is not empty and holds no campaign "
            f"(no {MANIFEST}); give a new or empty directory"
        )
    parent = directory.parent if str(directory.parent) else Path(".")
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise CampaignError(f"cannot create the output directory '{directory}' in '{parent}'")
    return False


def prepare(directory: Path, spec: dict) -> bool:
    """:func:`check`, then create ``directory`` and its manifest if new; True for a resume."""
    if check(directory, spec):
        return True
    try:
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory / (MANIFEST + ".tmp")
        doc = {"format": FORMAT, "version": VERSION, "hash": spec_hash(spec), "spec": spec}
        tmp.write_text(json.dumps(doc, indent=1, allow_nan=True) + "\n", encoding="utf-8")
        os.replace(tmp, directory / MANIFEST)
    except OSError as exc:
        raise CampaignError(f"cannot write the campaign into '{directory}': {exc}") from None
    return False


def read_log(directory: Path) -> dict[int, dict]:
    """The finished runs recorded in ``directory`` (run -> record; a later line wins). A last
    line cut short by a kill is dropped from the file."""
    p = directory / LOG
    if not p.exists():
        return {}
    data = p.read_bytes()
    if data and not data.endswith(b"\n"):  # a write cut by a kill: drop the partial line
        data = data[: data.rfind(b"\n") + 1]
        with open(p, "r+b") as f:
            f.truncate(len(data))
    done: dict[int, dict] = {}
    for line in data.decode("utf-8").splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        done[int(rec["run"])] = rec
    return done


class RunLog:
    """The append log of finished runs (one JSON line each, flushed as written)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._f = open(directory / LOG, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()

    def write(self, record: dict) -> None:
        traj = record.pop("_trajectory", None)
        if traj is not None:
            write_trajectory(self.directory, record["run"], *traj)
        self._f.write(json.dumps(record, allow_nan=True) + "\n")
        self._f.flush()

    def close(self) -> None:
        try:
            self._f.flush()
            os.fsync(self._f.fileno())
        finally:
            self._f.close()


def trajectory_path(directory: Path, run: int) -> Path:
    return directory / "trajectories" / f"run_{run:06d}.parquet"


def write_trajectory(directory: Path, run: int, columns, times, rows) -> Path:
    """One run's trajectory as Parquet: ``time`` (s) and the recorded columns (SI units)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    values = np.asarray(rows, dtype=float).reshape(len(times), len(columns))
    table = pa.table(
        {"time": np.asarray(times, dtype=float), **{c: values[:, j] for j, c in enumerate(columns)}}
    )
    p = trajectory_path(directory, run)
    p.parent.mkdir(exist_ok=True)
    tmp = p.with_suffix(".tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, p)
    return p


__all__ = [
    "CampaignError",
    "LOG",
    "MANIFEST",
    "RunLog",
    "check",
    "prepare",
    "read_log",
    "read_manifest",
    "spec_hash",
    "trajectory_path",
    "write_trajectory",
]
