"""Block base classes, port descriptions, parameter checks and the project's error types.

Port kinds (DEVELOPERS.md, seed 004 Figs. 6 and 8):

* ``parent``: the port by which a block hangs from its parent. Motion vector m_P (18) *in*,
  projected in the parent's frame; wrench W_{A/B,P} (6) applied by the block on its parent *out*,
  also in the parent's frame.
* ``child``: a port where a child block (or a loop-closure block) attaches. Motion vector m_C (18)
  *out*, in this block's frame; wrench W_{./A,C} (6) applied on this block *in*, in this block's
  frame.
* ``signal_in`` / ``signal_out``: plain vectors (joint torques, joint motions, external wrenches).

A connection always joins a ``child`` port to a ``parent`` port, or a ``signal_out`` to a
``signal_in`` of the same size.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from ..core import _titop
from ..spatial.algebra import FloatArray
from ..spatial.rotations import DCM_TOLERANCE, rotation_error

PortKind = Literal["parent", "child", "signal_in", "signal_out"]


class TitopError(ValueError):
    """Base class of the errors titopfmu raises on bad input."""


class ParameterError(TitopError):
    """A block parameter is invalid. Names the block and the parameter."""

    def __init__(self, block: str, parameter: str, message: str) -> None:
        self.block = block
        self.parameter = parameter
        super().__init__(f"block '{block}', parameter '{parameter}': {message}")


class InertiaWarning(UserWarning):
    """An inertia tensor is physically dubious (e.g. violates the triangle inequality)."""


@dataclass(frozen=True)
class Port:
    """A port of a block: its name, kind, size and a description stating units and frame."""

    name: str
    kind: PortKind
    size: int
    description: str = ""


class Block:
    """Base of every block. Parameters are fixed at construction; run-time values live elsewhere.

    Subclasses set :attr:`ports`; stateful blocks also set :attr:`state_names` and implement
    :meth:`initial_state`.
    """

    kind: str = "block"

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name or "." in name or "[" in name:
            raise ParameterError(str(name), "name", "must be a non-empty string without '.' or '['")
        self.name = name
        self.ports: dict[str, Port] = {}
        self.state_names: tuple[str, ...] = ()

    @property
    def n_states(self) -> int:
        return len(self.state_names)

    def initial_state(self) -> FloatArray:
        return np.zeros(self.n_states)

    def _add_port(self, name: str, kind: PortKind, size: int, description: str) -> None:
        if name in self.ports:
            raise ParameterError(self.name, name, "port name used twice")
        self.ports[name] = Port(name, kind, size, description)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


# ----------------------------------------------------------------------------------------------
# parameter checks shared by all blocks
# ----------------------------------------------------------------------------------------------


def as_vector(block: str, parameter: str, value: ArrayLike, size: int) -> FloatArray:
    """``value`` as a finite float vector of ``size`` components, or a ParameterError."""
    try:
        v = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise ParameterError(block, parameter, f"not a numeric vector ({exc})") from None
    if v.size != size:
        raise ParameterError(block, parameter, f"expected {size} components, got {v.size}")
    if not np.all(np.isfinite(v)):
        raise ParameterError(block, parameter, f"non-finite value {v.tolist()}")
    return v


def as_matrix(block: str, parameter: str, value: ArrayLike, shape: tuple[int, int]) -> FloatArray:
    """``value`` as a finite float matrix of ``shape``, or a ParameterError."""
    try:
        m = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ParameterError(block, parameter, f"not a numeric matrix ({exc})") from None
    if m.shape != shape:
        raise ParameterError(block, parameter, f"expected shape {shape}, got {m.shape}")
    if not np.all(np.isfinite(m)):
        raise ParameterError(block, parameter, "non-finite entries")
    return m


def check_mass(block: str, mass: float) -> float:
    try:
        m = float(mass)
    except (TypeError, ValueError):
        raise ParameterError(block, "mass", f"not a number: {mass!r}") from None
    if not np.isfinite(m) or m <= 0.0:
        raise ParameterError(block, "mass", f"must be positive and finite (kg), got {mass}")
    return m


def check_inertia(block: str, inertia: ArrayLike, *, positive_definite: bool) -> FloatArray:
    """Check an inertia tensor at the centre of mass (kg m²).

    Symmetric and positive semi-definite (point masses, I = 0, are legal), positive definite when
    ``positive_definite`` (a root body). Principal moments that violate the triangle inequality
    give an :class:`InertiaWarning`, not an error (seed 004's own balloon does).
    """
    i = as_matrix(block, "inertia", inertia, (3, 3))
    moments = np.zeros(3)
    # the core's check (titop_check_inertia), the FMUs' too: the same parameters are refused
    code = _titop.check_inertia(np.ascontiguousarray(i).reshape(9), positive_definite, moments)
    if code == _titop.CHECK_NOT_SYMMETRIC:
        raise ParameterError(block, "inertia", f"not symmetric: {i.tolist()}")
    i = 0.5 * (i + i.T)
    if code == _titop.CHECK_NOT_PSD:
        raise ParameterError(
            block, "inertia", f"not positive semi-definite (principal moments {moments.tolist()})"
        )
    if code == _titop.CHECK_NOT_PD:
        raise ParameterError(
            block,
            "inertia",
            "a root body needs a positive-definite inertia (its D_P is inverted, eq. 11); "
            f"principal moments {moments.tolist()}",
        )
    if code == _titop.CHECK_TRIANGLE:
        warnings.warn(
            f"block '{block}', parameter 'inertia': principal moments "
            f"{np.round(moments, 6).tolist()} violate the triangle inequality I1 + I2 >= I3 "
            "(no real mass distribution has them); simulating anyway",
            InertiaWarning,
            stacklevel=3,
        )
    return i


def check_dcm(block: str, parameter: str, value: ArrayLike) -> FloatArray:
    """Check that ``value`` is a rotation matrix (orthonormal, det +1)."""
    p = as_matrix(block, parameter, value, (3, 3))
    err = rotation_error(p)
    if err > DCM_TOLERANCE:
        raise ParameterError(
            block, parameter, f"not a rotation matrix (|P^T P - 1|, |det P - 1| up to {err:.3g})"
        )
    return p


def check_axis(block: str, parameter: str, value: ArrayLike) -> FloatArray:
    """A joint axis, returned normalised; a zero axis is an error."""
    v = as_vector(block, parameter, value, 3)
    n = float(np.linalg.norm(v))
    if n < 1e-12:
        raise ParameterError(block, parameter, f"zero joint axis {v.tolist()}")
    return v / n
