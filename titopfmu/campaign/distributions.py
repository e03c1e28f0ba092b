"""Distributions of a campaign's parameters and the sampling plans that draw from them.

A distribution is written as on the command line, ``normal(2, 0.1)``, ``uniform(1.5, 2.5)``,
``truncnormal(2, 0.5, 1, 3)``, ``lognormal(0.7, 0.1)``, ``values(1, 2, 4)``,
``linspace(1, 3, 5)``, or built from the classes here; any
frozen ``scipy.stats`` distribution works in the Python API too. Values are in the units of the
parameter (SI, radians).

Every plan draws points ``u`` in the unit cube ``[0, 1)^d`` and maps each coordinate through the
inverse cumulative distribution of its parameter (``ppf``): ``random`` (independent uniform
draws of numpy's PCG64), ``lhs`` (Latin hypercube) and ``sobol`` (scrambled Sobol' sequence),
both from :mod:`scipy.stats.qmc`. The same seed gives the same samples, bit for bit. A sweep
(``grid``) takes instead every combination of the values of ``values(...)``/``linspace(...)``.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..blocks.base import TitopError

METHODS = ("random", "lhs", "sobol", "grid")


class DistributionError(TitopError):
    """An invalid distribution or sampling plan (the message names the parameter)."""


@dataclass(frozen=True)
class Normal:
    """Normal distribution: mean ``mean``, standard deviation ``std`` > 0."""

    mean: float
    std: float

    def check(self) -> None:
        _finite(self, self.mean, self.std)
        if not self.std > 0:
            raise ValueError(f"std must be positive, got {self.std}")

    def frozen(self):
        from scipy import stats

        return stats.norm(loc=self.mean, scale=self.std)

    def spec(self) -> str:
        return f"normal({self.mean!r}, {self.std!r})"


@dataclass(frozen=True)
class Uniform:
    """Uniform distribution on ``[low, high)``, ``low < high``."""

    low: float
    high: float

    def check(self) -> None:
        _finite(self, self.low, self.high)
        if not self.low < self.high:
            raise ValueError(f"low ({self.low}) must be less than high ({self.high})")

    def frozen(self):
        from scipy import stats

        return stats.uniform(loc=self.low, scale=self.high - self.low)

    def spec(self) -> str:
        return f"uniform({self.low!r}, {self.high!r})"


@dataclass(frozen=True)
class TruncNormal:
    """Normal distribution of mean ``mean`` and standard deviation ``std`` (before truncation)
    restricted to ``[low, high]`` (``low < high``; ``-inf``/``inf`` for a one-sided bound)."""

    mean: float
    std: float
    low: float
    high: float

    def check(self) -> None:
        _finite(self, self.mean, self.std)
        if not self.std > 0:
            raise ValueError(f"std must be positive, got {self.std}")
        if math.isnan(self.low) or math.isnan(self.high) or not self.low < self.high:
            raise ValueError(f"low ({self.low}) must be less than high ({self.high})")
        if math.isinf(self.low) and math.isinf(self.high):
            raise ValueError("at least one bound must be finite (else use normal)")
        from scipy import stats

        a, b = (self.low - self.mean) / self.std, (self.high - self.mean) / self.std
        if not stats.norm.cdf(b) - stats.norm.cdf(a) > 1e-12:
            raise ValueError(
                f"[{self.low}, {self.high}] lies more than 7 standard deviations from the mean "
                f"{self.mean}: no probability left"
            )

    def frozen(self):
        from scipy import stats

        a, b = (self.low - self.mean) / self.std, (self.high - self.mean) / self.std
        return stats.truncnorm(a, b, loc=self.mean, scale=self.std)

    def spec(self) -> str:
        return f"truncnormal({self.mean!r}, {self.std!r}, {self.low!r}, {self.high!r})"


@dataclass(frozen=True)
class LogNormal:
    """Log-normal distribution: ``log(value)`` is normal with mean ``mu`` and standard deviation
    ``sigma`` > 0 (the median is ``exp(mu)``); values are positive."""

    mu: float
    sigma: float

    def check(self) -> None:
        _finite(self, self.mu, self.sigma)
        if not self.sigma > 0:
            raise ValueError(f"sigma must be positive, got {self.sigma}")

    def frozen(self):
        from scipy import stats

        return stats.lognorm(s=self.sigma, scale=math.exp(self.mu))

    def spec(self) -> str:
        return f"lognormal({self.mu!r}, {self.sigma!r})"


@dataclass(frozen=True)
class Values:
    """A finite set of values (``values(a, b, c)`` or ``linspace(low, high, n)``): every one of
    them, in order, in a ``grid`` sweep; equally likely under the other plans."""

    values: tuple[float, ...]

    def check(self) -> None:
        if not self.values:
            raise ValueError("give at least one value")
        _finite(self, *self.values)

    def ppf(self, u) -> np.ndarray:
        v = np.asarray(self.values, dtype=float)
        k = np.minimum((np.asarray(u) * v.size).astype(int), v.size - 1)
        return v[k]

    def spec(self) -> str:
        return f"values({', '.join(repr(float(v)) for v in self.values)})"


def _finite(dist, *values: float) -> None:
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"parameters must be finite numbers, got {values}")


#: Names of the distributions on the command line -> (class, argument names).
DISTRIBUTIONS = {
    "normal": (Normal, ("mean", "std")),
    "uniform": (Uniform, ("low", "high")),
    "truncnormal": (TruncNormal, ("mean", "std", "low", "high")),
    "lognormal": (LogNormal, ("mu", "sigma")),
    "values": (Values, ("v1", "v2", "...")),
    "linspace": (Values, ("low", "high", "n")),
}
_ALIASES = {"truncnorm": "truncnormal", "lognorm": "lognormal", "gauss": "normal"}

_CALL = re.compile(r"^\s*([A-Za-z_]\w*)\s*\((.*)\)\s*$")


def parse_distribution(text: str, parameter: str = "?"):
    """A distribution from its text, e.g. ``"normal(2, 0.1)"`` (numbers may be ``inf``)."""
    m = _CALL.match(text)
    known = ", ".join(f"{k}({', '.join(a)})" for k, (_, a) in DISTRIBUTIONS.items())
    if m is None:
        raise DistributionError(
            f"parameter {parameter!r}: distribution {text!r} must read NAME(ARGS); one of {known}"
        )
    name = _ALIASES.get(m[1].lower(), m[1].lower())
    if name not in DISTRIBUTIONS:
        raise DistributionError(
            f"parameter {parameter!r}: unknown distribution {m[1]!r}; one of {known}"
        )
    cls, argnames = DISTRIBUTIONS[name]
    parts = [p.strip() for p in m[2].split(",")] if m[2].strip() else []
    if name == "values":
        try:
            return check_distribution(Values(tuple(float(p) for p in parts)), parameter)
        except ValueError:
            raise DistributionError(
                f"parameter {parameter!r}: {text!r}: the values must be numbers"
            ) from None
    if name == "linspace":
        try:
            low, high, n = float(parts[0]), float(parts[1]), int(parts[2])
        except (ValueError, IndexError):
            raise DistributionError(
                f"parameter {parameter!r}: {text!r} must read linspace(low, high, n), n an integer"
            ) from None
        if len(parts) != 3 or n < 2 or not low < high:
            raise DistributionError(
                f"parameter {parameter!r}: {text!r}: linspace needs low < high and n >= 2"
            )
        return check_distribution(Values(tuple(np.linspace(low, high, n).tolist())), parameter)
    if len(parts) != len(argnames):
        raise DistributionError(
            f"parameter {parameter!r}: {name} takes {len(argnames)} numbers "
            f"({', '.join(argnames)}), got {len(parts)} in {text!r}"
        )
    try:
        args = [float(p) for p in parts]
    except ValueError:
        raise DistributionError(
            f"parameter {parameter!r}: {text!r}: the arguments must be numbers"
        ) from None
    return check_distribution(cls(*args), parameter)


def check_distribution(dist, parameter: str = "?"):
    """``dist`` (one of this module's classes or a frozen ``scipy.stats`` distribution) if it
    is valid, else :class:`DistributionError` naming the parameter."""
    if isinstance(dist, str):
        return parse_distribution(dist, parameter)
    if hasattr(dist, "check"):
        try:
            dist.check()
        except ValueError as exc:
            raise DistributionError(f"parameter {parameter!r}: {dist.spec()}: {exc}") from None
        return dist
    if not callable(getattr(dist, "ppf", None)):
        raise DistributionError(
            f"parameter {parameter!r}: {dist!r} is not a distribution (give a text such as "
            "'normal(2, 0.1)', a titopfmu.campaign distribution or a frozen scipy.stats one)"
        )
    q = np.asarray(dist.ppf([0.25, 0.5, 0.75]), dtype=float)
    if not np.all(np.isfinite(q)):
        raise DistributionError(f"parameter {parameter!r}: {spec_of(dist)} gives no finite values")
    return dist


def spec_of(dist) -> str:
    """A canonical text of a distribution (what the campaign's manifest hashes)."""
    if hasattr(dist, "spec"):
        return dist.spec()
    d = getattr(dist, "dist", None)
    name = getattr(d, "name", type(dist).__name__)
    args = ", ".join(repr(float(a)) for a in getattr(dist, "args", ()))
    kwds = ", ".join(f"{k}={v!r}" for k, v in sorted(getattr(dist, "kwds", {}).items()))
    return f"scipy.stats.{name}({', '.join(x for x in (args, kwds) if x)})"


def _ppf(dist, u: np.ndarray) -> np.ndarray:
    frozen = dist.frozen() if hasattr(dist, "frozen") else dist
    return np.asarray(frozen.ppf(u), dtype=float)


def grid_size(vary: Mapping[str, object]) -> int:
    """The number of points of the full grid of ``vary`` (every distribution a :class:`Values`),
    else :class:`DistributionError`."""
    bad = [n for n, d in vary.items() if not isinstance(d, Values)]
    if bad:
        raise DistributionError(
            f"a grid sweep needs values(...) or linspace(...) for every parameter; not for {bad}"
        )
    return int(np.prod([len(d.values) for d in vary.values()]))


def unit_points(n: int, d: int, method: str, seed: int) -> np.ndarray:
    """``n`` points of ``[0, 1)^d`` by ``method`` (:data:`METHODS`), reproducible from ``seed``."""
    if method not in METHODS:
        raise DistributionError(f"unknown sampling method {method!r}; choose from {METHODS}")
    if n < 1:
        raise DistributionError(f"the number of samples must be at least 1, got {n}")
    rng = np.random.default_rng(seed)
    if method == "random":
        return rng.random((n, d))
    from scipy.stats import qmc

    cls = qmc.LatinHypercube if method == "lhs" else qmc.Sobol
    try:
        engine = cls(d, rng=rng)
    except TypeError:  # scipy < 1.15
        engine = cls(d, seed=rng)
    with warnings.catch_warnings():  # Sobol' balance: said once in the docs and the CLI
        warnings.simplefilter("ignore", UserWarning)
        return engine.random(n)


def draw(vary: Mapping[str, object], n: int, method: str, seed: int) -> dict[str, np.ndarray]:
    """``n`` values of every parameter of ``vary`` (name -> checked distribution)."""
    names = list(vary)
    if method == "grid":  # the full factorial, the first parameter varying slowest
        size = grid_size(vary)
        if n != size:
            raise DistributionError(f"the grid has {size} points, not {n} samples")
        mesh = np.meshgrid(*(np.asarray(vary[k].values) for k in names), indexing="ij")
        return {k: m.reshape(-1).astype(float) for k, m in zip(names, mesh, strict=True)}
    u = unit_points(n, len(names), method, seed)
    out = {}
    for k, name in enumerate(names):
        v = _ppf(vary[name], u[:, k])
        if not np.all(np.isfinite(v)):
            raise DistributionError(
                f"parameter {name!r}: {spec_of(vary[name])} drew non-finite values"
            )
        out[name] = v
    return out


__all__ = [
    "DISTRIBUTIONS",
    "DistributionError",
    "LogNormal",
    "METHODS",
    "Normal",
    "TruncNormal",
    "Uniform",
    "Values",
    "check_distribution",
    "draw",
    "grid_size",
    "parse_distribution",
    "spec_of",
    "unit_points",
]
