"""Signal blocks: sources and control laws feeding joint efforts, external wrenches and imposed
motions. They are evaluated before the algebraic loop, so they may use positions and rates but
not accelerations (those are NaN at that point; a signal that comes out non-finite is reported)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from ..core.model import check_law, joint_law, law_row
from ..spatial.algebra import FloatArray
from .base import Block, DeclaredBlock, ParameterError, as_vector
from .declarations import CONSTANT, JOINT_MIMIC, JOINT_SPRING_DAMPER, TIME_FUNCTION


class SignalBlock(Block):
    """A block of signals only: ``y = evaluate(t, inputs)``."""

    kind = "signal"
    kinematic_inputs: tuple[str, ...] = ()
    #: True when the outputs depend neither on t nor on inputs: the engine evaluates the block
    #: once, when it is built, instead of at every right-hand-side evaluation.
    constant = False

    def evaluate(self, t: float, inputs: dict[str, FloatArray]) -> dict[str, FloatArray]:
        raise NotImplementedError


class Constant(SignalBlock):
    """Constant output ``y`` (any size)."""

    kind = "constant"
    declaration = CONSTANT
    constant = True

    def __init__(self, name: str, value: ArrayLike) -> None:
        super().__init__(name)
        v = np.atleast_1d(np.asarray(value, dtype=float)).reshape(-1)
        self.value = as_vector(name, "value", v, v.size)
        self._add_port("y", "signal_out", self.value.size, "constant value")

    def evaluate(self, t, inputs):
        return {"y": self.value}


class TimeFunction(SignalBlock):
    """Output ``y = f(t)`` of ``size`` components, for time-varying inputs and trajectories."""

    kind = "time_function"
    #: its model-file form (an expression of t); the constructor takes any callable f
    declaration = TIME_FUNCTION

    def __init__(self, name: str, f: Callable[[float], ArrayLike], size: int) -> None:
        super().__init__(name)
        if not callable(f):
            raise ParameterError(name, "f", "must be callable f(t)")
        self.f = f
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise ParameterError(name, "size", f"must be a positive integer, got {size!r}")
        self.size = int(size)
        self._add_port("y", "signal_out", self.size, "f(t)")

    def evaluate(self, t, inputs):
        y = np.asarray(self.f(t), dtype=float).reshape(-1)
        if y.size != self.size:
            raise ValueError(f"f(t) returned {y.size} values, the port 'y' has {self.size}")
        return {"y": y}


class JointSpringDamper(SignalBlock, DeclaredBlock):
    """Joint law on a 1-dof joint motion ``m = [q̈, q̇, q]``: a spring-damper, regularised
    Coulomb friction and, when ``limited``, one-sided stops::

        tau = -k (q - q_ref) - d q̇ - friction tanh(q̇ / friction_velocity) + tau_stop
        tau_stop = k_stop p + sat(-d_stop q̇, k_stop p),     p = lower - q > 0
                 = -(k_stop p + sat(d_stop q̇, k_stop p)),  p = q - upper > 0
                 = 0 between the stops (or not limited),  sat(x, s) = min(max(x, -s), s)

    ``k`` in N/m or N m/rad, ``d`` in N s/m or N m s/rad (>= 0); ``friction`` (N or N m, >= 0)
    is Coulomb friction regularised over ``friction_velocity`` (> 0, m/s or rad/s, default
    1e-3: 76 % of it at that speed, 99.5 % at three times it). A stop is a stiff spring on its
    penetration ``p`` (``k_stop`` > 0 when ``limited``) with damping ``d_stop`` on the joint's
    speed, that damping bounded by the spring's effort: the stop's effort lies in [0, 2 k_stop
    p], it pushes out, never pulls, and the law is continuous in q and q̇ (no event for an
    integrator to find). A steady effort F into a stop penetrates it by F / k_stop. For a joint
    of apparent inertia J, ``k_stop = J / tau^2`` and ``d_stop = 2 J / tau`` (critical) make a
    stop of time constant tau: hit at speed v, the joint enters it by 0.72 v tau and leaves at
    0.26 v. The formula is the core's (``titop_spring_damper_block``), here as in the engine
    and FMUs.
    """

    declaration = JOINT_SPRING_DAMPER

    def __init__(self, name: str, *args, **kwargs) -> None:
        super().__init__(name)
        v = self._checked(self._bind(name, args, kwargs))
        for p in JOINT_SPRING_DAMPER.parameters:
            setattr(self, p.name, v[p.name])
        bad = check_law(law_row(self))  # the core's check: the values together
        if bad is not None:
            raise ParameterError(name, bad[0], bad[1])
        for port in JOINT_SPRING_DAMPER.ports:
            self._add_port(port.name, port.kind, port.size, port.description)

    def evaluate(self, t, inputs):
        return {"tau": np.array([joint_law(law_row(self), inputs["m"])])}


class JointMimic(SignalBlock, DeclaredBlock):
    """Mimic joint (Pinocchio 4's mimic, URDF's ``<mimic>``): connect the leader's ``joint.m``
    to ``m`` and ``tau`` to the follower's ``joint.tau``; the follower's coordinate is then
    ``q_f = multiplier * q_l + offset``, and the follower's inertia is reflected into the
    leader's dynamics. Both joints are forward 1-dof joint bodies of the same kind (revolute or
    prismatic); a follower follows one leader, a leader follows none.

    The core enforces ``q̈_f = multiplier q̈_l`` exactly with a constraint effort λ, applied as
    +λ on the follower (this block's ``tau``) and -multiplier λ on the leader (titop.h,
    ``titop_mimic``); the engine and the model FMU start from the follower's state set from its
    leader's (the initial conditions given on the follower are replaced), and the integration
    keeps it. The constraint effort depends on the whole model's accelerations: it exists in the
    core only (the engine's core evaluation, the whole-model FMU), not as a signal block on its
    own (:meth:`evaluate` gives NaN) nor in block-per-FMU co-simulation.
    """

    declaration = JOINT_MIMIC

    def __init__(self, name: str, *args, **kwargs) -> None:
        super().__init__(name)
        v = self._checked(self._bind(name, args, kwargs))
        for p in JOINT_MIMIC.parameters:
            setattr(self, p.name, v[p.name])
        for port in JOINT_MIMIC.ports:
            self._add_port(port.name, port.kind, port.size, port.description)

    def evaluate(self, t, inputs):
        # the constraint effort depends on the whole model's accelerations, unknown before the
        # loop is solved: NaN outside the core (the object path then fails, naming this block)
        return {"tau": np.full(1, np.nan)}


class Function(SignalBlock):
    """General signal block ``outputs = f(t, inputs)``.

    ``inputs`` and ``outputs`` map port names to sizes; ``f(t, dict) -> dict`` of arrays.
    """

    kind = "function"

    def __init__(
        self,
        name: str,
        f: Callable[[float, dict[str, FloatArray]], dict[str, ArrayLike]],
        inputs: dict[str, int],
        outputs: dict[str, int],
    ) -> None:
        super().__init__(name)
        if not callable(f):
            raise ParameterError(name, "f", "must be callable f(t, inputs)")
        self.f = f
        for p, n in inputs.items():
            self._add_port(p, "signal_in", int(n), "input")
        for p, n in outputs.items():
            self._add_port(p, "signal_out", int(n), "output")
        self._sizes = dict(outputs)

    def evaluate(self, t, inputs):
        out = self.f(t, inputs)
        res = {}
        for p, n in self._sizes.items():
            v = np.asarray(out[p], dtype=float).reshape(-1)
            if v.size != n:
                raise ValueError(f"output '{p}' has {v.size} values, its port has {n}")
            res[p] = v
        return res
