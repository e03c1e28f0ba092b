"""The results of a run: what is recorded, and the samples.

:class:`CosimResult` holds the samples (``time``, one column per recorded variable; CSV in the
FMI cross-check format). :class:`Recording` reads ``record`` (references, or column -> reference)
as FMU variables, a whole array or port as its elements, and samples them at a point with one
``fmi2GetReal`` per component.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping

import numpy as np

from .binding import Binding


class CosimResult:
    """Sampled results: ``time`` and one column per recorded variable."""

    def __init__(self, columns: list[str]) -> None:
        self.columns = columns
        self.time: list[float] = []
        self.rows: list[list[float]] = []
        self.iterations: list[int] = []

    def append(self, t: float, row: list[float]) -> None:
        self.time.append(t)
        self.rows.append(row)

    def __getitem__(self, name: str) -> np.ndarray:
        if name == "time":
            return np.array(self.time)
        return np.array([r[self.columns.index(name)] for r in self.rows])

    def to_csv(self, path: str | os.PathLike) -> None:
        """CSV in the FMI cross-check format: quoted header, ``time`` first, SI units."""
        path = os.fspath(path)
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", newline="") as f:
            w = csv.writer(f, quoting=csv.QUOTE_NONNUMERIC)
            w.writerow(["time", *self.columns])
            for t, row in zip(self.time, self.rows, strict=True):
                w.writerow([float(t), *[float(v) for v in row]])


class Recording(Binding):
    """The recorded columns of a run (:meth:`_record_columns`) and their sampler
    (:meth:`_sampler`)."""

    def _record_columns(self, record) -> list[tuple[str, str, str]]:
        items = record.items() if isinstance(record, Mapping) else [(r, r) for r in record]
        cols = []
        for col, ref in items:
            c, name = self._split(ref)
            names = self._expand_var(c, name, None, ref, "record ")
            for n in names:
                label = col if len(names) == 1 else f"{col}{n[len(name) :]}"
                cols.append((label, c.name, n))
        return cols

    def _sampler(self, cols: list[tuple[str, str, str]], result: CosimResult):
        """A function appending the recorded values at the current time to ``result``: one
        ``fmi2GetReal`` per component."""
        by: dict[str, list[str]] = {}
        for _, cn, n in cols:
            if n not in by.setdefault(cn, []):
                by[cn].append(n)
        # every channel reads into its slice of one buffer; the row picks from it
        buf = np.zeros(sum(len(names) for names in by.values()))
        chans, base, k = [], {}, 0
        for cn, names in by.items():
            base[cn] = k
            chans.append(self._channel(cn, names, "recorded variables", buf[k : k + len(names)]))
            k += len(names)
        where = np.array([base[cn] + by[cn].index(n) for _, cn, n in cols], dtype=int)

        def sample(t: float | None = None) -> None:
            """Append the values at the current point, labelled ``t`` (the output time the
            point is on; the master's time when None)."""
            for ch in chans:
                ch.get()
            result.append(self.t if t is None else t, buf[where].tolist())

        return sample
