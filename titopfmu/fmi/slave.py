"""The pythonfmu slave behind every titopfmu FMU: a thin adapter around one core block.

Each generated FMU module defines ``class TitopXxxCn(Fmi2Slave)`` with ``FMU_TYPE`` and
``N_CHILDREN`` set; ``Fmi2Slave`` there is :class:`BlockSlave` (pythonfmu's loader finds the
class by that literal text). The slave

* registers the FMI variables of its :class:`~titopfmu.fmi.catalog.FmuType`: ports first, each
  port's components consecutive in value references, then the parameters;
* builds the core block from the parameter values (the block's own checks give the errors) and
  evaluates it through :class:`~titopfmu.blocks.standalone.StandaloneBlock`; no physics here;
* computes all outputs once when an input or the state has changed and serves every
  ``fmi2GetReal`` from that cache;
* integrates its states over a communication step with the inputs held (Heun's method by default,
  RK4 or Euler by ``solver.method``; sub-steps no longer than the parameter ``solver.max_step``);
* saves and restores its complete internal state (mode, time, states, every variable value) as
  an immutable ``bytes`` object, which is also its serialized form;
* writes a complete ``ModelStructure`` (output dependencies measured on the core block with
  random parameters, ``InitialUnknowns``) and units into ``modelDescription.xml``.

pythonfmu's C++ layer turns any Python exception into a logged ``fmi2Fatal``; every exception
raised here is a :class:`FmuError` whose message names the instance and the FMI variable
concerned, and the FMI shim that ``titopfmu build`` puts in front of pythonfmu's binary
(:mod:`titopfmu.fmi.shim`) returns ``fmi2Error`` for those refusals (unexpected exceptions, which
``_fmi_entry`` reports as internal errors, stay ``fmi2Fatal``).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from typing import Any, ClassVar
from xml.etree.ElementTree import Element, SubElement

import numpy as np
from pythonfmu import Fmi2Slave
from pythonfmu.enums import Fmi2Causality, Fmi2Variability
from pythonfmu.variables import Boolean, Integer, Real

from ..blocks.base import ParameterError, TitopError
from ..blocks.standalone import Prepared, StandaloneBlock
from .catalog import FMU_TYPES, FmuType, Param, default_values, random_values
from .ports import UNIT_DEFINITIONS, port_variables

# modes of the FMI 2.0 co-simulation state machine
INSTANTIATED, INITIALIZATION, STEPPING, TERMINATED = 0, 1, 2, 3
_MODE_NAMES = ("instantiated", "initialization mode", "step mode", "terminated")
_STATE_MAGIC = 7.0e7 + 1  # first value of a serialized state (format version 1)

_SOLVER_PARAMS = [
    Param(
        "solver.max_step", (), "s", 1e-3,
        "largest internal step within a communication step (inputs are held over the step)",
    ),
    Param(
        "solver.method", (), "", 2,
        "order of the internal explicit Runge-Kutta method over a communication step: 2 (Heun, "
        "default: second order like the coupling of held or extrapolated inputs), 4 (classical "
        "RK4) or 1 (Euler, reuses the derivative computed with the outputs: cheapest)",
        integer=True,
    ),
]  # fmt: skip
_METHODS = (1, 2, 4)


#: One extra reference to a slave module's globals per execution of that module (see below).
_PINNED_GLOBALS: list[dict] = []


def pin_module_globals(namespace: dict) -> None:
    """Take one reference to a generated slave module's globals.

    pythonfmu 0.7.0's loader (``findClass`` in its C++ layer) executes the slave module once more
    each time it creates an instance, with the module's ``__dict__`` as globals, and afterwards
    releases a reference to that dict which it only borrowed. After a few instantiations the
    dict is freed while the module still uses it: "module has no attribute" errors and crashes
    in the garbage collector. The generated module calls this function on every execution, so
    each wrongful release is balanced (a fixed pythonfmu just keeps a few more references)."""
    _PINNED_GLOBALS.append(namespace)


class FmuError(TitopError):
    """An FMI call was refused: bad value, wrong calling sequence or failed computation."""


#: Objects kept alive after an FMI call failed (see :func:`_fmi_entry`).
_PINNED_AFTER_ERROR: list[Any] = []


def _fmi_entry(method: Callable) -> Callable:
    """Wrap a method that pythonfmu's C++ layer calls.

    When such a method raises, pythonfmu 0.7.0 logs the exception, returns an error status, and
    releases its references to the instance, its class and its log queue; it releases them again
    when the instance is freed. The second release would free live objects (a crash later, in
    the garbage collector), so every failure takes two more references to each (one balances
    the extra release, one keeps them): the failed instance is leaked (a few kB) instead of
    corrupting the host. Unexpected exceptions become
    :class:`FmuError` naming the instance and the call.
    """

    @functools.wraps(method)
    def entry(self, *args):
        try:
            return method(self, *args)
        except BaseException as exc:
            # one reference for the list, one for pythonfmu's extra release
            _PINNED_AFTER_ERROR.extend((self, type(self), self.log_queue) * 2)
            if isinstance(exc, FmuError):
                raise
            raise self._fail(
                f"internal error in {method.__name__}: {type(exc).__name__}: {exc}"
            ) from exc

    return entry


def block_name(instance_name: str) -> str:
    """A core block name (no '.', '[' or ']') made from an FMU instance name."""
    name = re.sub(r"[.\[\]\s]", "_", instance_name or "")
    return name or "fmu"


class BlockSlave(Fmi2Slave):
    """FMI 2.0 co-simulation slave of one titopfmu block (see the module docstring)."""

    FMU_TYPE: ClassVar[str] = ""
    N_CHILDREN: ClassVar[int] = 0

    def __init__(self, **kwargs: Any) -> None:
        try:
            self._init(**kwargs)
        except BaseException:
            # pythonfmu releases the class once more when the constructor fails
            _PINNED_AFTER_ERROR.extend((type(self), type(self)))
            raise

    def _init(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        ftype: FmuType = FMU_TYPES[self.FMU_TYPE]
        n = self.N_CHILDREN
        self._type = ftype
        self._name = block_name(self.instance_name)
        self._params = ftype.params(n) + _SOLVER_PARAMS
        proto = ftype.make(self._name, default_values(ftype.params(n)), n)
        self._channels = port_variables(StandaloneBlock(proto), ftype)
        self._values: list[Any] = []
        self._kind: list[int] = []  # 0 input, 1 output, 2 parameter
        self._units: list[str] = []
        self._in_slices: list[tuple[str, int, int]] = []
        self._out_slices: list[tuple[str, int, int]] = []
        self._param_slots: list[tuple[Param, list[tuple[int, tuple[int, ...]]]]] = []
        for ch in self._channels:
            vr0 = len(self._values)
            for comp in ch.components:
                causality = Fmi2Causality.input if ch.direction == "in" else Fmi2Causality.output
                self._register(
                    Real(comp.name, causality=causality, variability=Fmi2Variability.continuous,
                         description=comp.description),
                    0.0, 0 if ch.direction == "in" else 1, comp.unit,
                )  # fmt: skip
            target = self._in_slices if ch.direction == "in" else self._out_slices
            target.append((ch.core, vr0, len(ch.components)))
        for p in self._params:
            slots = []
            default = np.array(p.default, dtype=float)
            for fname, idx in p.names():
                vr = len(self._values)
                if p.boolean:
                    var = Boolean(
                        fname,
                        causality=Fmi2Causality.parameter,
                        variability=Fmi2Variability.fixed,
                        description=p.description,
                    )
                    self._register(var, bool(p.default), 2, "")
                elif p.integer:
                    var = Integer(
                        fname,
                        causality=Fmi2Causality.parameter,
                        variability=Fmi2Variability.fixed,
                        description=p.description,
                    )
                    self._register(var, int(p.default), 2, "")
                else:
                    var = Real(
                        fname,
                        causality=Fmi2Causality.parameter,
                        variability=Fmi2Variability.fixed,
                        description=p.description,
                    )
                    self._register(var, float(default[idx]), 2, p.unit)
                slots.append((vr, idx))
            self._param_slots.append((p, slots))
        self._out_vrs = frozenset(i for i, k in enumerate(self._kind) if k == 1)
        self._in_vrs = frozenset(i for i, k in enumerate(self._kind) if k == 0)
        self._mode = INSTANTIATED
        self._t = 0.0
        self._sa: StandaloneBlock | None = None
        self._block_key: tuple | None = None
        self._x = np.zeros(0)
        self._stale = True
        self._dx: np.ndarray | None = None
        # the inputs as the block takes them, (by channel, prepared), until an input changes
        self._held: tuple[dict[str, np.ndarray], Prepared] | None = None

    # -- variables --------------------------------------------------------------------------

    def _register(self, var, value: Any, kind: int, unit: str) -> None:
        vr = len(self._values)
        self._values.append(value)
        self._kind.append(kind)
        self._units.append(unit)
        values = self._values
        var.getter = lambda: values[vr]
        if kind != 1:
            var.setter = lambda v: self._set(vr, v)
        self.register_variable(var, nested=False)
        assert var.value_reference == vr

    def _name_of(self, vr: int) -> str:
        return self.vars[vr].name

    def _fail(self, message: str) -> FmuError:
        return FmuError(f"FMU instance '{self.instance_name}' ({self.modelName}): {message}")

    def _check_vr(self, vr: int, kind: type) -> None:
        if not (0 <= vr < len(self._values)):
            raise self._fail(f"no variable with value reference {vr}")
        if not isinstance(self.vars[vr], kind):
            raise self._fail(f"variable '{self._name_of(vr)}' is not of type {kind.__name__}")

    def _set(self, vr: int, value: Any) -> None:
        kind = self._kind[vr]
        if kind == 1:
            raise self._fail(f"'{self._name_of(vr)}' is an output and cannot be set")
        if self._mode == TERMINATED:
            raise self._fail(f"cannot set '{self._name_of(vr)}' after fmi2Terminate")
        if kind == 2:
            if self._mode == STEPPING:
                raise self._fail(
                    f"parameter '{self._name_of(vr)}' has variability 'fixed': it can only be set "
                    "before fmi2ExitInitializationMode"
                )
            if isinstance(value, float) and not math.isfinite(value):
                raise self._fail(f"parameter '{self._name_of(vr)}' = {value} is not finite")
            self._values[vr] = value
            self._sa = None
            self._stale = True
            self._held = None
            return
        if not math.isfinite(value):
            raise self._fail(
                f"input '{self._name_of(vr)}' = {value} is not finite at t = {self._t:.9g} s"
            )
        if self._values[vr] != value:
            self._values[vr] = value
            self._stale = True
            self._held = None

    @_fmi_entry
    def get_real(self, vrs: list[int]) -> list[float]:
        if self._stale and not self._out_vrs.isdisjoint(vrs):
            self._compute_outputs()
        values = self._values
        try:
            return [float(values[vr]) for vr in vrs]
        except IndexError:
            for vr in vrs:
                self._check_vr(vr, Real)
            raise

    @_fmi_entry
    def set_real(self, vrs: list[int], values: list[float]) -> None:
        if (
            self._in_vrs.issuperset(vrs)
            and math.isfinite(math.fsum(values))
            and self._mode != TERMINATED
        ):  # the common case: finite inputs
            v = self._values
            for vr, value in zip(vrs, values, strict=True):
                v[vr] = value
            self._stale = True
            self._held = None
            return
        for vr, value in zip(vrs, values, strict=True):
            self._check_vr(vr, Real)
            self._set(vr, value)

    @_fmi_entry
    def get_boolean(self, vrs: list[int]) -> list[bool]:
        for vr in vrs:
            self._check_vr(vr, Boolean)
        return [bool(self._values[vr]) for vr in vrs]

    @_fmi_entry
    def get_integer(self, vrs: list[int]) -> list[int]:
        for vr in vrs:
            self._check_vr(vr, Integer)
        return [int(self._values[vr]) for vr in vrs]

    @_fmi_entry
    def set_integer(self, vrs: list[int], values: list[int]) -> None:
        for vr, value in zip(vrs, values, strict=True):
            self._check_vr(vr, Integer)
            self._set(vr, int(value))

    @_fmi_entry
    def set_boolean(self, vrs: list[int], values: list[bool]) -> None:
        for vr, value in zip(vrs, values, strict=True):
            self._check_vr(vr, Boolean)
            self._set(vr, bool(value))

    # -- the core block ---------------------------------------------------------------------

    def _parameter_values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for p, slots in self._param_slots:
            if p.boolean or p.integer:
                out[p.name] = self._values[slots[0][0]]
                continue
            a = np.zeros(p.shape)
            for vr, idx in slots:
                a[idx] = self._values[vr]
            out[p.name] = a
        return out

    def _ensure_block(self) -> StandaloneBlock:
        if self._sa is not None:
            return self._sa
        values = self._parameter_values()
        max_step = float(values.pop("solver.max_step"))
        if not max_step > 0:
            raise self._fail(f"parameter 'solver.max_step' = {max_step} must be positive (s)")
        method = values.pop("solver.method")
        if method not in _METHODS:
            raise self._fail(f"parameter 'solver.method' = {method} must be one of {_METHODS}")
        self._method = method
        try:
            block = self._type.make(self._name, values, self.N_CHILDREN)
        except ParameterError as exc:
            fmi = self._type.param_names.get(exc.parameter, exc.parameter)
            raise self._fail(f"{exc} (FMI parameter {fmi})") from None
        self._max_step = max_step
        self._sa = StandaloneBlock(block)
        key = tuple(self._values[vr] for p, s in self._param_slots for vr, _ in s)
        if key != self._block_key:  # new parameters: states restart from their initial values
            self._x = self._sa.initial_state()
            self._block_key = key
        self._stale = True
        self._held = None
        return self._sa

    def _held_inputs(self) -> tuple[dict[str, np.ndarray], Prepared]:
        """The inputs by channel and prepared for the block (:meth:`StandaloneBlock.prepare`),
        built once per change of an input: an evaluation and the doStep after it share them."""
        held = self._held
        if held is None:
            v = self._values
            u = {core: np.array(v[vr0 : vr0 + n]) for core, vr0, n in self._in_slices}
            held = self._held = (u, self._ensure_block().prepare(u))
        return held

    def _compute_outputs(self) -> None:
        if self._mode == INSTANTIATED:
            raise self._fail("outputs are available from fmi2EnterInitializationMode on")
        sa = self._ensure_block()
        try:
            u, pr = self._held_inputs()
            out, dx = sa.evaluate(self._t, self._x, u, prepared=pr)
        except (ArithmeticError, ValueError) as exc:
            raise self._fail(f"evaluation failed at t = {self._t:.9g} s: {exc}") from None
        v = self._values
        ys = [out[core] for core, _, _ in self._out_slices]
        flat = np.concatenate(ys).tolist()
        if not math.isfinite(math.fsum(flat)):
            for (_, vr0, _), y in zip(self._out_slices, ys, strict=True):
                bad = np.nonzero(~np.isfinite(y))[0]
                if len(bad):
                    raise self._fail(
                        f"output '{self._name_of(vr0 + int(bad[0]))}' is not finite at "
                        f"t = {self._t:.9g} s (inputs or states out of range)"
                    )
        i = 0
        for _, vr0, n in self._out_slices:
            v[vr0 : vr0 + n] = flat[i : i + n]
            i += n
        self._dx = dx
        self._stale = False

    # -- FMI calling sequence ---------------------------------------------------------------

    @_fmi_entry
    def setup_experiment(self, start_time: float, stop_time=None, tolerance=None) -> None:
        if self._mode != INSTANTIATED:
            raise self._fail(f"fmi2SetupExperiment called in {_MODE_NAMES[self._mode]}")
        if not math.isfinite(start_time):
            raise self._fail(f"start time {start_time} is not finite")
        self._t = float(start_time)

    @_fmi_entry
    def enter_initialization_mode(self) -> None:
        if self._mode != INSTANTIATED:
            raise self._fail(f"fmi2EnterInitializationMode called in {_MODE_NAMES[self._mode]}")
        self._mode = INITIALIZATION
        self._ensure_block()

    @_fmi_entry
    def exit_initialization_mode(self) -> None:
        if self._mode != INITIALIZATION:
            raise self._fail(f"fmi2ExitInitializationMode called in {_MODE_NAMES[self._mode]}")
        self._ensure_block()
        self._mode = STEPPING

    @_fmi_entry
    def terminate(self) -> None:
        self._mode = TERMINATED

    @_fmi_entry
    def do_step(self, current_time: float, step_size: float) -> bool:
        if self._mode != STEPPING:
            raise self._fail(f"fmi2DoStep called in {_MODE_NAMES[self._mode]}")
        if not (step_size > 0 and math.isfinite(step_size)):
            raise self._fail(f"fmi2DoStep: communication step size {step_size} must be > 0")
        if not math.isfinite(current_time):
            raise self._fail(f"fmi2DoStep: current time {current_time} is not finite")
        sa = self._ensure_block()
        t0 = float(current_time)
        if sa.n_states:
            x = self._x
            pr = self._held_inputs()[1]  # held over the step
            n = max(1, math.ceil(step_size / self._max_step - 1e-9))
            dt = step_size / n
            method = self._method

            def f(t, x, pr=pr):
                return sa.state_derivative(t, x, pr)

            try:
                # at (t0, x): computed with the outputs, or alone when only the inputs changed
                k1 = f(t0, x) if self._stale else self._dx
                for i in range(n):
                    t = t0 + i * dt
                    if i:
                        k1 = f(t, x)
                    if method == 1:
                        x = x + dt * k1
                    elif method == 2:
                        k2 = f(t + dt, x + dt * k1)
                        x = x + (0.5 * dt) * (k1 + k2)
                    else:
                        k2 = f(t + 0.5 * dt, x + (0.5 * dt) * k1)
                        k3 = f(t + 0.5 * dt, x + (0.5 * dt) * k2)
                        k4 = f(t + dt, x + dt * k3)
                        x = x + (dt / 6.0) * (k1 + 2.0 * (k2 + k3) + k4)
            except (ArithmeticError, ValueError) as exc:
                raise self._fail(f"fmi2DoStep failed at t = {t0:.9g} s: {exc}") from None
            total = x.dot(x)  # NaN or inf if a component is (or on overflow: then checked in full)
            if total - total != 0.0 and not np.all(np.isfinite(x)):
                raise self._fail(
                    f"fmi2DoStep from t = {t0:.9g} s over {step_size:.3g} s: the state became "
                    "non-finite (step too large for the dynamics, or inputs out of range); "
                    "the state before the step is kept"
                )
            self._x = x
        self._t = t0 + step_size
        self._stale = True
        return True

    # -- FMU state --------------------------------------------------------------------------

    @_fmi_entry
    def _get_fmu_state(self) -> bytes:
        head = [_STATE_MAGIC, float(self._mode), self._t, float(len(self._x)),
                float(len(self._values))]  # fmt: skip
        vals = [float(v) for v in self._values]
        return np.concatenate([head, self._x, vals]).tobytes()

    @_fmi_entry
    def _set_fmu_state(self, state: bytes) -> None:
        a = np.frombuffer(bytes(state), dtype=float)
        if len(a) < 5 or a[0] != _STATE_MAGIC or int(a[4]) != len(self._values):
            raise self._fail("not an FMU state of this FMU type (or of another titopfmu version)")
        nx = int(a[3])
        if len(a) != 5 + nx + len(self._values):
            raise self._fail("corrupt FMU state (wrong length)")
        self._mode = int(a[1])
        self._t = float(a[2])
        vals = a[5 + nx :].tolist()
        for vr, v in enumerate(vals):
            var = self.vars[vr]
            self._values[vr] = (
                bool(v) if isinstance(var, Boolean) else int(v) if isinstance(var, Integer) else v
            )
        self._sa = None
        key = tuple(self._values[vr] for p, s in self._param_slots for vr, _ in s)
        if key != self._block_key:
            self._block_key = None  # rebuilt on demand, then the saved states are put back
        if self._mode != INSTANTIATED:
            self._ensure_block()
        self._x = a[5 : 5 + nx].copy()
        self._held = None
        self._stale = True

    @staticmethod
    def _fmu_state_to_bytes(state: bytes) -> bytes:
        return state

    @staticmethod
    def _fmu_state_from_bytes(state: bytes) -> bytes:
        return bytes(state)

    # -- model description ------------------------------------------------------------------

    def to_xml(self, model_options: dict[str, str] | None = None) -> Element:
        """pythonfmu's model description plus units and a complete ModelStructure."""
        root = super().to_xml(model_options or {})
        used = {u for u in self._units if u}
        units = Element("UnitDefinitions")
        for name, exps in UNIT_DEFINITIONS.items():
            if name in used:
                unit = SubElement(units, "Unit", name=name)
                SubElement(unit, "BaseUnit", {k: str(v) for k, v in exps.items()})
        children = list(root)
        pos = [c.tag for c in children].index("CoSimulation") + 1
        if len(units):
            root.insert(pos, units)
        for vr, sv in enumerate(root.find("ModelVariables")):
            if self._units[vr]:
                sv.find("Real").set("unit", self._units[vr])
        structure = root.find("ModelStructure")
        for c in list(structure):
            structure.remove(c)
        deps = self._dependencies()
        outputs = SubElement(structure, "Outputs")
        initial = Element("InitialUnknowns")
        params = [vr + 1 for vr, k in enumerate(self._kind) if k == 2]
        for vr in sorted(deps):
            d = " ".join(str(i + 1) for i in sorted(deps[vr]))
            SubElement(outputs, "Unknown", index=str(vr + 1), dependencies=d)
            di = " ".join(str(i) for i in sorted([i + 1 for i in deps[vr]] + params))
            SubElement(initial, "Unknown", index=str(vr + 1), dependencies=di)
        if len(outputs):
            structure.append(initial)
        else:
            structure.remove(outputs)
        return root

    def _dependencies(self) -> dict[int, set[int]]:
        """Which inputs each output depends on, measured on the core block: every input is
        perturbed at three random points (random parameters, states and inputs); a dependency
        is declared where an output moves by more than 1e-9 of the perturbation."""
        deps: dict[int, set[int]] = {vr: set() for vr in self._out_vrs}
        rng = np.random.default_rng(20261121)
        ftype, n = self._type, self.N_CHILDREN
        in_vrs = [vr for vr, k in enumerate(self._kind) if k == 0]
        for sample in range(3):
            values = random_values(ftype.params(n), rng)
            for p in ftype.params(n):
                if p.boolean:
                    values[p.name] = sample > 0
            sa = StandaloneBlock(ftype.make("probe", values, n))
            x = sa.initial_state() + 0.3 * rng.standard_normal(sa.n_states)
            base = {core: rng.normal(0.0, 0.7, k) for core, _, k in self._in_slices}
            for core, _, k in self._in_slices:
                if core == "joint.m" or core == "m":  # keep joint motions plausible
                    base[core] = rng.uniform(-1.0, 1.0, k)
            y0, _ = sa.evaluate(0.0, x, base, derivative=False)
            for core, vr0, k in self._in_slices:
                for i in range(k):
                    u = {c: v.copy() for c, v in base.items()}
                    u[core][i] += 1e-3
                    y, _ = sa.evaluate(0.0, x, u, derivative=False)
                    for ocore, ovr0, _ in self._out_slices:
                        diff = np.abs(y[ocore] - y0[ocore])
                        for j in np.nonzero(diff > 1e-12)[0]:
                            deps[ovr0 + int(j)].add(vr0 + i)
        assert all(vr in in_vrs for d in deps.values() for vr in d)
        return deps
