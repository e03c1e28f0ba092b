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

import inspect
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
        self.reason = message
        super().__init__(f"block '{block}', parameter '{parameter}': {message}")


class SingularJointError(ParameterError):
    """A joint's apparent inertia (eq. 20) is singular: the body it moves (a leaf, its own
    inertia and armature) or the subtree it moves (judged by the engine) has no inertia about
    the joint, so its acceleration is undefined. Names the joint's block; ``parameter`` is
    'inertia'."""

    def __init__(self, block: str, message: str) -> None:
        super().__init__(block, "inertia", message)


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


def check_mass(block: str, mass: float, zero: bool = False) -> float:
    """A mass (kg): positive and finite; zero too with ``zero`` (a joint body: a massless link
    is valid when the subtree its joint moves has inertia about the joint, which the engine
    judges on the whole system)."""
    try:
        m = float(mass)
    except (TypeError, ValueError):
        raise ParameterError(block, "mass", f"not a number: {mass!r}") from None
    if not np.isfinite(m) or m < 0.0 or (m == 0.0 and not zero):
        rule = ">= 0" if zero else "positive"
        raise ParameterError(block, "mass", f"must be {rule} and finite (kg), got {mass}")
    return m


def significant(values) -> list[float]:
    """``values`` to 6 significant digits, as the FMUs print them in their messages (a tiny
    body's moments do not print as zeros)."""
    return [float(f"{float(v):.6g}") for v in values]


def check_inertia(block: str, inertia: ArrayLike, *, positive_definite: bool,
                  stacklevel: int = 3, reference: float = 0.0) -> FloatArray:
    """Check an inertia tensor at the centre of mass (kg m²).

    Symmetric and positive semi-definite (point masses, I = 0, are legal), each relative to the
    larger of the tensor's own largest entry and ``reference`` (kg m², the body's m |com|²: the
    rounding noise of a point mass's zero inertia passes), positive definite relative to its own
    largest entry when ``positive_definite`` (a root body) (the core's ``titop_check_inertia``: a
    body scaled in mass and length passes as the original does). Principal moments that violate
    the triangle inequality give an :class:`InertiaWarning`, not an error (seed 004's own
    balloon does).
    """
    i = as_matrix(block, "inertia", inertia, (3, 3))
    moments = np.zeros(3)
    # the core's check (titop_check_inertia), the FMUs' too: the same parameters are refused
    code = _titop.check_inertia(np.ascontiguousarray(i).reshape(9), positive_definite, moments,
                                float(reference))  # fmt: skip
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
            f"{significant(moments)} violate the triangle inequality I1 + I2 >= I3 "
            "(no real mass distribution has them); simulating anyway",
            InertiaWarning,
            stacklevel=stacklevel,
        )
    return i


def _fmt(values) -> str:
    """A number or a vector for a message: every digit (repr)."""
    v = np.asarray(values, dtype=float)
    return repr(float(v)) if v.ndim == 0 else repr(v.tolist())


def check_dynamic_model(block: str, mass: float, inertia: FloatArray, com: FloatArray) -> None:
    """The body's dynamic model D_P (eq. 4) within the range the equations can represent, or a
    ParameterError naming the parameter out of it (the core's ``titop_check_dynamic_model``, the
    FMUs' too): mass, com or inertia alone, or the product m |com|² (with the inertia) named by
    its larger factor. ``mass``, ``inertia`` and ``com`` already checked on their own."""
    code = _titop.check_dynamic_model(
        float(mass), np.ascontiguousarray(inertia, dtype=float).reshape(9),
        np.ascontiguousarray(com, dtype=float).reshape(3), None,
    )  # fmt: skip
    if code == _titop.CHECK_OK:
        return
    lo, hi = _titop.RANGE_MIN, _titop.RANGE_MAX
    c = float(np.max(np.abs(com)))  # |com| without overflow: its largest component, times ≤ √3
    c = c * float(np.linalg.norm(np.asarray(com) / c)) if c > 0 else 0.0
    product = (f"m |com|^2 (in D_P, eq. 4) = {_fmt(mass)} kg x ({c:.6g} m)^2 is beyond {hi:g} "
               f"kg m^2, the range the equations can represent")  # fmt: skip
    if code == _titop.CHECK_MASS:
        if not lo <= mass <= hi:
            raise ParameterError(block, "mass", f"{_fmt(mass)} kg is outside the range the "
                                 f"equations can represent ({lo:g} to {hi:g} kg)")  # fmt: skip
        raise ParameterError(block, "mass", f"{product}; com = {_fmt(com)}")
    if code == _titop.CHECK_COM:
        if not c * c <= hi:
            raise ParameterError(block, "com", f"{_fmt(com)}: |com|^2 = ({c:.6g} m)^2 is beyond "
                                 f"{hi:g} m^2, the range the equations can represent")  # fmt: skip
        raise ParameterError(block, "com", f"{_fmt(com)}: {product}")
    if code == _titop.CHECK_INERTIA_RANGE:
        big = float(np.max(np.abs(inertia)))
        if not big <= hi:
            raise ParameterError(block, "inertia", f"an entry of {big:.6g} kg m^2 is beyond "
                                 f"{hi:g}, the range the equations can represent")  # fmt: skip
        raise ParameterError(block, "inertia", f"I + m |com|^2 (in D_P, eq. 4) is beyond {hi:g} "
                             f"kg m^2, the range the equations can represent; mass "
                             f"{_fmt(mass)} kg, com {_fmt(com)}")  # fmt: skip
    raise ParameterError(block, "inertia", f"refused by the core's check (code {code})")


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
    """A joint axis, returned normalised (any length: a direction, normalised without overflow
    by the core's ``titop_check_axis``, the FMUs' too); a zero axis is an error."""
    v = as_vector(block, parameter, value, 3)
    unit = np.zeros(3)
    if _titop.check_axis(np.ascontiguousarray(v), unit) != _titop.CHECK_OK:
        raise ParameterError(block, parameter, f"zero joint axis {v.tolist()}")
    return unit


def check_finite_scalar(block: str, parameter: str, value) -> float:
    """``value`` as a finite float, or a ParameterError."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(block, parameter, f"not a number: {value!r}") from None
    if not np.isfinite(v):
        raise ParameterError(block, parameter, f"non-finite value {value}")
    return v


def check_psd(block: str, parameter: str, value: ArrayLike, shape: tuple[int, int]) -> FloatArray:
    """A symmetric positive semi-definite matrix (a loop closure's K and D)."""
    m = as_matrix(block, parameter, value, shape)
    scale = max(1.0, float(np.max(np.abs(m))))
    if np.max(np.abs(m - m.T)) > 1e-9 * scale:
        raise ParameterError(block, parameter, "not symmetric")
    if np.linalg.eigvalsh(0.5 * (m + m.T))[0] < -1e-12 * scale:
        raise ParameterError(block, parameter, "not positive semi-definite")
    return m


def check_nonnegative(block: str, parameter: str, value, shape: tuple[int, ...] = ()):
    """A finite number >= 0, or (``shape`` (n,)) a vector of them (a joint's armature)."""
    if not shape:
        v = check_finite_scalar(block, parameter, value)
        if v < 0:
            raise ParameterError(block, parameter, "must be >= 0")
        return v
    if np.ndim(value) == 0 and not isinstance(value, str):  # one value for every component
        value = np.full(shape[0], check_finite_scalar(block, parameter, value))
    vec = as_vector(block, parameter, value, shape[0])
    if np.any(vec < 0):
        raise ParameterError(block, parameter, f"must be >= 0, got {vec.tolist()}")
    return vec


def check_positive(block: str, parameter: str, value) -> float:
    v = check_finite_scalar(block, parameter, value)
    if not v > 0:
        raise ParameterError(block, parameter, "must be > 0")
    return v


def check_flag(block: str, parameter: str, value) -> bool:
    """A boolean: True, False, or a number equal to 1 or 0 (an FMU's or a campaign's value)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(block, parameter, f"not a boolean: {value!r}") from None
    if v not in (0.0, 1.0):
        raise ParameterError(block, parameter, f"must be true or false (1 or 0), got {value!r}")
    return v == 1.0


def _caller_level() -> int:
    """The ``stacklevel`` of a warning issued two calls below here (by a check called from this
    module) that points at the first frame outside the ``titopfmu.blocks`` package: the code
    that built the block, however deep the constructors' chain."""
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    f, level = sys._getframe(1), 2  # the caller, check_parameter: level 2 of check_inertia
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == here:
        f, level = f.f_back, level + 1
    return level


def inertia_reference(mass, com) -> float:
    """m |com|² (kg m²) of unchecked values, the scale :func:`check_inertia` judges rounding
    noise against; 0 when they are not numbers or it is not finite."""
    try:
        c = np.asarray(com, dtype=float).reshape(3)
        with np.errstate(over="ignore", invalid="ignore"):  # out of range: judged elsewhere
            r = float(mass) * float(c @ c)
    except (TypeError, ValueError):
        return 0.0
    return r if np.isfinite(r) and r >= 0.0 else 0.0


def check_parameter(block: str, p, value, reference: float = 0.0):
    """``value`` of the declared parameter ``p`` (:class:`~titopfmu.blocks.declarations.
    Parameter`) checked by its declared check; the checked value (arrays as floats).
    ``reference``: the body's m |com|² for an inertia (:func:`check_inertia`)."""
    c = p.check
    if c in ("mass", "joint_mass"):
        return check_mass(block, value, zero=c == "joint_mass")
    if c in ("inertia", "inertia_pd"):
        # the warning of a dubious inertia points at the code that built the block
        return check_inertia(block, value, positive_definite=c == "inertia_pd",
                             stacklevel=_caller_level(), reference=reference)  # fmt: skip
    if c == "dcm":
        return check_dcm(block, p.name, value)
    if c == "axis":
        return check_axis(block, p.name, value)
    if c == "scalar":
        return check_finite_scalar(block, p.name, value)
    if c == "nonnegative":
        return check_nonnegative(block, p.name, value, p.shape or ())
    if c == "positive":
        return check_positive(block, p.name, value)
    if c == "flag":
        return check_flag(block, p.name, value)
    if c == "psd":
        return check_psd(block, p.name, value, p.shape)
    if c == "vector":
        if len(p.shape) == 2:
            return as_matrix(block, p.name, value, p.shape)
        return as_vector(block, p.name, value, p.shape[0])
    raise ValueError(f"block '{block}': parameter '{p.name}' has no plain check ({c})")


class DeclaredBlock(Block):
    """A block whose type is declared (:mod:`titopfmu.blocks.declarations`): its constructor's
    signature, defaults and checks are those of :attr:`declaration`, its parameter values by
    name are :meth:`parameter_values`."""

    declaration = None  # a BlockType, set by each concrete class

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        decl = cls.__dict__.get("declaration")
        if decl is None:
            return
        cls._signature = declared_signature(decl)
        cls.kind = decl.key
        init = cls.__dict__.get("__init__")
        if init is None:  # its own __init__, so that its signature is its own (a user's
            base = cls.__init__  # subclass with another __init__ shows that one's)

            def init(self, name, *args, **kwargs):
                base(self, name, *args, **kwargs)

            init.__doc__, init.__qualname__ = base.__doc__, f"{cls.__qualname__}.__init__"
            cls.__init__ = init
        init.__signature__ = cls._signature  # what help(), inspect and IDEs show

    def _bind(self, name: str, args: tuple, kwargs: dict) -> dict:
        """The constructor's arguments by parameter name, defaults applied."""
        try:
            bound = self._signature.bind(self, name, *args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{type(self).__name__}(): {exc}") from None
        bound.apply_defaults()
        out = dict(bound.arguments)
        del out["self"], out["name"]
        return out

    def parameter_values(self) -> dict:
        """Every stored parameter by its declared name (the model file's keys): numbers and
        arrays as the block holds them (checked), ``children`` as {port: point} and
        ``external`` as {name: {"point": point, "frame": frame}}."""
        out: dict = {}
        for p in type(self).declaration.stored:
            if p.check == "children":
                out[p.name] = dict(zip(self.child_names, self.child_points, strict=True))
            elif p.check == "external":
                out[p.name] = {n: {"point": np.asarray(e.point, dtype=float), "frame": e.frame}
                               for n, e in self.external.items()}  # fmt: skip
            else:
                out[p.name] = getattr(self, p.name)
        return out

    def _checked(self, values: dict) -> dict:
        """The bound constructor arguments checked by their declared checks, in declared order
        (a None for an optional parameter is its default; ``children``, ``external`` and the
        pair ``euler0``/``quaternion0`` are left to the block's own setup)."""
        out = dict(values)
        for p in type(self).declaration.parameters:
            v = values.get(p.name)
            if p.structural or p.alternative or p.check in ("unit_quaternion", "axis", "dcm",
                                                            "flexible", "elastic"):
                continue  # checked where they are used (the joint model checks axis and DCM)
            if v is None and not p.required:
                v = p.default
            ref = 0.0
            if p.check in ("inertia", "inertia_pd"):  # its rounding noise against m |com|^2
                com = values.get("com")
                ref = inertia_reference(values.get("mass"), _default_of(type(self), "com")
                                        if com is None else com)  # fmt: skip
            out[p.name] = check_parameter(self.name, p, v, ref)
        return out


def _default_of(cls, name: str):
    """The declared default of parameter ``name`` of a declared class (zeros if none)."""
    try:
        return cls.declaration.parameter(name).default
    except KeyError:
        return (0.0, 0.0, 0.0)


def declared_signature(decl):
    """The constructor signature of a declared block type: ``(self, name, <parameters in
    declared order>)``; a parameter with an alternative form (``quaternion0``/``euler0``)
    defaults to None, the structures (``children``, ``external``) too."""

    P = inspect.Parameter
    ps = [P("self", P.POSITIONAL_OR_KEYWORD), P("name", P.POSITIONAL_OR_KEYWORD)]
    paired = {p.alternative for p in decl.parameters if p.alternative}
    for p in decl.parameters:
        if p.required:
            ps.append(P(p.name, P.POSITIONAL_OR_KEYWORD))
        elif p.structural or p.alternative or p.name in paired:
            ps.append(P(p.name, P.POSITIONAL_OR_KEYWORD, default=None))
        else:
            ps.append(P(p.name, P.POSITIONAL_OR_KEYWORD, default=p.default))
    return inspect.Signature(ps)


def declared_values(block: Block) -> dict:
    """The stored parameters of a block of a declared type by name (:meth:`DeclaredBlock.
    parameter_values`; for a signal block, its attributes of the declared names)."""
    if isinstance(block, DeclaredBlock):
        return block.parameter_values()
    return {p.name: getattr(block, p.name) for p in type(block).declaration.stored}
