"""The flexible-body layer's error type and its checks of matrices and physical quantities.

Every refusal is one line naming the body, the matrix (or quantity) and what is wrong, e.g.
``body 'boom', matrix 'M': not symmetric (max |M - M^T| = 3e-02 > 1e-09 * max |M|)``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]

#: relative tolerance of the symmetry checks (on max |A - A^T| / max |A|)
SYMMETRY_TOL = 1e-9
#: relative tolerance of the definiteness checks: an eigenvalue below -tol * max |eig| is negative,
#: one below tol * max |eig| is zero
DEFINITENESS_TOL = 1e-10


class FlexModelError(ValueError):
    """A flexible body's finite-element or reduced model is invalid. Names the body, the matrix
    (or quantity) and what is wrong; ``body``, ``item`` and ``reason`` hold the three parts."""

    def __init__(self, body: str, item: str, reason: str) -> None:
        self.body = body
        self.item = item
        self.reason = reason
        super().__init__(f"body '{body}', {item}: {reason}")


def positive(body: str, name: str, value: float) -> float:
    """``value`` as a float, refused unless finite and > 0 (a length, modulus, density...)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise FlexModelError(body, f"'{name}'", f"not a number: {value!r}") from None
    if not np.isfinite(v) or v <= 0.0:
        raise FlexModelError(body, f"'{name}'", f"must be finite and > 0, got {v!r}")
    return v


def square(body: str, name: str, a: ArrayLike, size: int | None = None) -> FloatArray:
    """``a`` as a finite square float matrix (of ``size`` rows if given), symmetric to
    :data:`SYMMETRY_TOL`; returned symmetrised."""
    try:
        m = np.array(a, dtype=float)
    except (TypeError, ValueError):
        raise FlexModelError(body, f"matrix '{name}'", "not a numeric array") from None
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise FlexModelError(body, f"matrix '{name}'", f"not square: shape {m.shape}")
    if size is not None and m.shape[0] != size:
        raise FlexModelError(
            body, f"matrix '{name}'", f"has {m.shape[0]} rows, the model has {size} dofs"
        )
    if not np.all(np.isfinite(m)):
        raise FlexModelError(body, f"matrix '{name}'", "has non-finite entries")
    scale = float(np.max(np.abs(m))) if m.size else 0.0
    asym = float(np.max(np.abs(m - m.T))) if m.size else 0.0
    if asym > SYMMETRY_TOL * max(scale, np.finfo(float).tiny):
        raise FlexModelError(
            body,
            f"matrix '{name}'",
            f"not symmetric (max |{name} - {name}^T| = {asym:.3g} > {SYMMETRY_TOL:g} * "
            f"max |{name}| = {scale:.3g})",
        )
    return 0.5 * (m + m.T)


def eigenvalues(m: FloatArray) -> FloatArray:
    """The eigenvalues of the symmetric matrix ``m`` after a symmetric diagonal (Jacobi)
    scaling ``D^-1/2 m D^-1/2`` (D = |diag m|, zeros replaced by 1), ascending. The scaling
    keeps the signs and the number of zero eigenvalues (Sylvester's law of inertia) and makes
    a finite-element matrix's spectrum far less spread (translations against rotations)."""
    d = np.abs(np.diag(m)).copy()
    d[d == 0.0] = 1.0
    s = 1.0 / np.sqrt(d)
    return np.linalg.eigvalsh(m * s[:, None] * s[None, :])


def positive_definite(body: str, name: str, m: FloatArray) -> None:
    """Refuse the symmetric matrix ``m`` unless positive definite."""
    ev = eigenvalues(m)
    top = float(np.max(np.abs(ev))) if ev.size else 0.0
    if top == 0.0 or ev[0] <= DEFINITENESS_TOL * top:
        raise FlexModelError(
            body,
            f"matrix '{name}'",
            f"not positive definite (smallest eigenvalue {ev[0] if ev.size else 0.0:.3g}, "
            f"largest {top:.3g})",
        )


def positive_semidefinite(body: str, name: str, m: FloatArray) -> int:
    """Refuse the symmetric matrix ``m`` unless positive semi-definite; return its number of
    zero eigenvalues (relative to the largest)."""
    ev = eigenvalues(m)
    top = float(np.max(np.abs(ev))) if ev.size else 0.0
    if ev.size and ev[0] < -DEFINITENESS_TOL * top:
        raise FlexModelError(
            body,
            f"matrix '{name}'",
            f"not positive semi-definite (eigenvalue {ev[0]:.3g} < 0, largest {top:.3g})",
        )
    return int(np.sum(ev <= DEFINITENESS_TOL * top))
