"""Signal blocks: sources and control laws feeding joint efforts, external wrenches and imposed
motions. They are evaluated before the algebraic loop, so they may use positions and rates but
not accelerations (those are NaN at that point; a signal that comes out non-finite is reported)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from ..spatial.algebra import FloatArray
from .base import Block, DeclaredBlock, ParameterError, as_vector
from .declarations import CONSTANT, JOINT_SPRING_DAMPER, TIME_FUNCTION


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
    """Joint control law ``tau = -k (q - q_ref) - d q̇`` on a 1-dof joint motion ``m = [q̈, q̇, q]``.

    ``k`` in N/m or N m/rad, ``d`` in N s/m or N m s/rad (>= 0).
    """

    declaration = JOINT_SPRING_DAMPER

    def __init__(self, name: str, *args, **kwargs) -> None:
        super().__init__(name)
        v = self._checked(self._bind(name, args, kwargs))
        self.k, self.d, self.q_ref = v["k"], v["d"], v["q_ref"]
        for port in JOINT_SPRING_DAMPER.ports:
            self._add_port(port.name, port.kind, port.size, port.description)

    def evaluate(self, t, inputs):
        _, qd, q = inputs["m"].tolist()
        return {"tau": np.array([-self.k * (q - self.q_ref) - self.d * qd])}


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
