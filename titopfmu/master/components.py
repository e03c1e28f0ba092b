"""FMUs as components of a co-simulation: loading, parameters, ports and dependencies.

A component is one instance of an FMI 2.0 co-simulation FMU, loaded with fmpy. Its TITOP ports
are recognised by name (titopfmu's layout, README "FMUs"):

* a *parent-kind* port ``X`` has inputs ``X.m[1..18]`` and outputs ``X.W[1..6]`` (a body's
  ``P``, a loop closure's ``left`` and ``right``);
* a *child-kind* port ``X`` has outputs ``X.m[1..18]`` and inputs ``X.W[1..6]``.

Any FMU can be a component; one without TITOP ports takes part through signal connections only.
"""

from __future__ import annotations

import itertools
import re
import shutil
import weakref
from collections.abc import Callable, Sequence
from ctypes import CFUNCTYPE, POINTER, byref, c_double, c_int, c_size_t, c_uint, c_void_p, cast
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from fmpy import calloc, free, read_model_description
from fmpy.fmi2 import (
    FMU2Slave,
    fmi2CallbackAllocateMemoryTYPE,
    fmi2CallbackFreeMemoryTYPE,
    fmi2CallbackFunctions,
    fmi2CallbackLoggerTYPE,
)
from fmpy.logging import addLoggerProxy

from ..archives import ArchiveError, Limits, check, extract
from ..blocks.base import TitopError

M = 18  # motion vector components
W = 6  # wrench components

_STATUS = {1: "warning", 2: "discard", 3: "error", 4: "fatal", 5: "pending"}

# fmpy's logger proxy (fmpy/logging/linux64/logging.so, which formats the FMU's variadic
# message) keeps a single Python logger for the whole process, in a C global that every
# ``addLoggerProxy`` call overwrites: the last one registered receives every FMI 2.0 instance's
# messages, those of instances made with fmpy's default callbacks (``simulate_fmu``) included.
# Registering a logger that dies with its instance leaves that global pointing at freed code:
# the next message of any FMU then crashes the process. So every callback structure made here
# registers the same logger, alive as long as the module, which routes a message by the
# instance's componentEnvironment (a number per instance) to that instance's sink.
Sink = list[tuple[int, str]] | Callable[..., None]
_SINKS: dict[int, Sink] = {}
_ENV = itertools.count(1)


def _log(env, instance, status, category, message) -> None:
    sink = _SINKS.get(env or 0)
    if sink is None:  # an instance whose sink is gone, or made with other callbacks
        return
    if callable(sink):
        sink(env, instance, status, category, message)
        return
    text = message.decode("utf-8", "replace") if isinstance(message, bytes) else message
    sink.append((int(status), str(text)))


_LOGGER = fmi2CallbackLoggerTYPE(_log)  # alive as long as the module: FMUs keep its address
_ALLOCATE = fmi2CallbackAllocateMemoryTYPE(calloc)
_FREE = fmi2CallbackFreeMemoryTYPE(free)


def fmi2_callbacks(sink: Sink) -> fmi2CallbackFunctions:
    """FMI 2.0 callbacks for one instance, its messages delivered to ``sink`` only.

    A list receives ``(status, text)``; a callable is called as
    ``sink(env, instance, status, category, message)`` (``message`` already formatted, bytes).
    The callbacks go through fmpy's logger proxy with the one module-lifetime logger (see
    above), never a logger of their own, so no sink's lifetime can leave the proxy dangling.
    Keep the returned structure alive as long as the instance (the FMU keeps pointers into it);
    the route to ``sink`` is removed when it is garbage collected: later messages of that
    instance are dropped.
    """
    env = next(_ENV)
    _SINKS[env] = sink
    cb = fmi2CallbackFunctions()
    cb.logger = _LOGGER
    cb.allocateMemory = _ALLOCATE
    cb.freeMemory = _FREE
    cb.componentEnvironment = env
    addLoggerProxy(byref(cb))
    weakref.finalize(cb, _SINKS.pop, env, None)
    return cb


class CosimError(TitopError):
    """A co-simulation could not be set up or run. Names the component and variable involved;
    a run-time error carries the time and the results computed so far (``result``)."""

    def __init__(self, message: str, time: float | None = None, result=None) -> None:
        self.time = time
        self.result = result
        where = f"at t = {time:.9g} s: " if time is not None else ""
        super().__init__(where + message)


@dataclass
class FmuFile:
    """A loaded FMU file: model description and one extraction shared by its instances."""

    path: Path
    md: object
    directory: str
    vr: dict[str, int] = field(default_factory=dict)
    variables: dict[str, object] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | Path, *, limits: Limits | None = None) -> FmuFile:
        """The FMU at ``path``, unpacked by :func:`titopfmu.archives.extract` into a temporary
        folder removed with the returned object: bounded (``limits`` over the ones in force),
        encrypted, absolute, ``..`` and symbolic-link members refused in one line, before fmpy
        reads the model description."""
        path = Path(path)
        if not path.is_file():
            raise CosimError(f"FMU file '{path}' not found")
        try:
            check(path, limits=limits)
        except ArchiveError as exc:
            raise CosimError(str(exc)) from None
        try:
            md = read_model_description(str(path))
        except Exception as exc:  # fmpy raises several kinds
            raise CosimError(f"'{path}' is not a readable FMU: {exc}") from None
        if md.fmiVersion != "2.0":
            raise CosimError(f"'{path}' is an FMI {md.fmiVersion} FMU: titopfmu's master runs "
                             "FMI 2.0 FMUs ('titopfmu build' writes them by default)")  # fmt: skip
        if md.coSimulation is None:
            raise CosimError(f"'{path}' is not a co-simulation FMU")
        try:
            directory = extract(path, limits=limits, prefix="titopfmu_fmu_")
        except ArchiveError as exc:
            raise CosimError(str(exc)) from None
        f = cls(path, md, str(directory))
        # a new temporary folder: removed with the FmuFile
        weakref.finalize(f, shutil.rmtree, f.directory, True)
        f.vr = {v.name: v.valueReference for v in md.modelVariables}
        f.variables = {v.name: v for v in md.modelVariables}
        return f


def _port_names(names: set[str], causality_m: str, causality_w: str, variables) -> list[str]:
    ports = []
    for name in sorted(names):
        mm = re.fullmatch(r"(.+)\.m\[1\]", name)
        if not mm:
            continue
        p = mm.group(1)
        ok = all(
            f"{p}.m[{i}]" in variables and variables[f"{p}.m[{i}]"].causality == causality_m
            for i in range(1, M + 1)
        ) and all(
            f"{p}.W[{i}]" in variables and variables[f"{p}.W[{i}]"].causality == causality_w
            for i in range(1, W + 1)
        )
        if ok:
            ports.append(p)
    return ports


class Component:
    """One FMU instance in a co-simulation."""

    def __init__(self, name: str, fmu: FmuFile, parameters: dict | None = None) -> None:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise CosimError(f"component name {name!r} must be an identifier")
        self.name = name
        self.file = fmu
        self.vr = fmu.vr
        self.variables = fmu.variables
        vs = fmu.md.modelVariables
        self.inputs = [v.name for v in vs if v.causality == "input"]
        self.outputs = [v.name for v in vs if v.causality == "output"]
        names = set(self.variables)
        self.parent_ports = _port_names(names, "input", "output", self.variables)
        self.child_ports = _port_names(names, "output", "input", self.variables)
        deps: dict[str, list[str] | None] = {}
        for u in fmu.md.outputs:
            deps[u.variable.name] = (
                None if u.dependencies is None else [d.name for d in u.dependencies]
            )
        #: output name -> input names it depends on (None: all inputs, FMI default)
        self.dependencies = deps
        self.parameters = self._expand(parameters or {})
        self.slave: FMU2Slave | None = None

    @property
    def provides_directional_derivative(self) -> bool:
        """The FMU declares ``providesDirectionalDerivative`` for co-simulation."""
        return bool(getattr(self.file.md.coSimulation, "providesDirectionalDerivative", False))

    @property
    def can_interpolate_inputs(self) -> bool:
        """The FMU declares ``canInterpolateInputs`` (it accepts first derivatives of its
        inputs, ``fmi2SetRealInputDerivatives``, and moves them on along a step)."""
        return bool(getattr(self.file.md.coSimulation, "canInterpolateInputs", False))

    def function_address(self, name: str) -> int:
        """The address of the FMI function ``name`` in the instance's library (for the
        master's compiled step, :mod:`titopfmu.master.fastpath`)."""
        return int(cast(getattr(self.slave.dll, name), c_void_p).value)

    @property
    def instance_address(self) -> int:
        """The ``fmi2Component`` pointer of the instance."""
        c = self.slave.component
        return int(c.value if isinstance(c, c_void_p) else c)

    @property
    def is_closure(self) -> bool:
        return set(self.parent_ports) >= {"left", "right"} and not self.child_ports

    @property
    def is_body(self) -> bool:
        return not self.is_closure and (
            "P" in self.parent_ports or bool(self.child_ports) or "body.m[1]" in self.vr
        )

    @property
    def has_parent(self) -> bool:
        return "P" in self.parent_ports

    def depends(self, output: str, inp: str) -> bool:
        d = self.dependencies.get(output)
        return True if d is None else inp in d

    # -- parameters -------------------------------------------------------------------------

    def _expand(self, parameters: dict) -> dict[str, object]:
        """Scalar FMI names -> values; arrays given by base name expand to ``name[i]`` /
        ``name[i,j]`` (1-based)."""
        out: dict[str, object] = {}
        for name, value in parameters.items():
            name = self._current_name(name)
            if name in self.variables:
                out[name] = value
                continue
            a = np.asarray(value)
            if a.ndim == 0:
                raise CosimError(f"component '{self.name}': no variable '{name}' in its FMU")
            for idx in np.ndindex(a.shape):
                fname = f"{name}[{','.join(str(i + 1) for i in idx)}]"
                if fname not in self.variables:
                    raise CosimError(
                        f"component '{self.name}': parameter '{name}' has shape {a.shape} but "
                        f"the FMU has no variable '{fname}'"
                    )
                out[fname] = a[idx].item()
        for fname in out:
            v = self.variables[fname]
            if v.causality not in ("parameter", "input"):
                raise CosimError(
                    f"component '{self.name}': '{fname}' is an {v.causality}, not a parameter"
                )
        return out

    def _current_name(self, name: str) -> str:
        """``name``, or today's name of a titopfmu 0.1 FMU parameter (``joint.q0`` ->
        ``theta0``; :data:`titopfmu.blocks.declarations.OLD_FMU_NAMES`), with a
        DeprecationWarning."""
        base, bracket, rest = name.partition("[")
        if name in self.variables or any(v.startswith(base + "[") for v in self.variables):
            return name
        from ..fmi.catalog import renamed_parameter

        new = renamed_parameter(self.file.md.coSimulation.modelIdentifier, base)
        if new is None:
            return name
        import warnings

        warnings.warn(f"component '{self.name}': FMU parameter '{base}' is now named '{new}' "
                      "(the model file's name); the old name will be removed",
                      DeprecationWarning, stacklevel=4)  # fmt: skip
        return new + bracket + rest

    # -- FMI calls --------------------------------------------------------------------------

    def instantiate(self) -> None:
        """Instantiate with a logger that keeps the FMU's messages (:attr:`messages`): errors
        then name what the FMU itself said."""
        f = self.file
        self.messages: list[tuple[int, str]] = []
        cb = fmi2_callbacks(self.messages)
        self._env = int(cb.componentEnvironment)
        self._callbacks = cb  # the FMU keeps pointers into it
        self.slave = FMU2Slave(
            guid=f.md.guid,
            unzipDirectory=f.directory,
            modelIdentifier=f.md.coSimulation.modelIdentifier,
            instanceName=self.name,
        )
        try:
            self.slave.instantiate(loggingOn=True, callbacks=cb)
        except Exception as exc:
            raise CosimError(f"component '{self.name}': {exc}{self.last_error()}") from None

    def last_error(self) -> str:
        """The FMU's last error or warning message, as a suffix for an error message."""
        for status, text in reversed(getattr(self, "messages", [])):
            if status >= 1:
                return f" ({text.strip().splitlines()[-1]})"
        return ""

    def apply_parameters(self) -> None:
        reals, rvals, bools, bvals, ints, ivals = [], [], [], [], [], []
        for name, value in self.parameters.items():
            t = self.variables[name].type
            if t == "Real":
                reals.append(self.vr[name])
                rvals.append(float(value))
            elif t == "Boolean":
                bools.append(self.vr[name])
                bvals.append(bool(value))
            elif t in ("Integer", "Enumeration"):
                ints.append(self.vr[name])
                ivals.append(int(value))
            else:
                raise CosimError(f"component '{self.name}': unsupported type {t} of '{name}'")
        if reals:
            self.slave.setReal(reals, rvals)
        if bools:
            self.slave.setBoolean(bools, bvals)
        if ints:
            self.slave.setInteger(ints, ivals)

    def free(self) -> None:
        if self.slave is not None:
            try:
                self.slave.terminate()
            except Exception:  # noqa: BLE001 - a failed instance may refuse; free it anyway
                pass
            self.slave.freeInstance()
            self.slave = None
        _SINKS.pop(getattr(self, "_env", 0), None)  # the messages stay in :attr:`messages`


def describe(names: Sequence[str]) -> str:
    """Variable names, runs of an array collapsed: ``P.W[1..6], C1.m[1..3]``."""
    parts: list[str] = []
    run: list = []  # base, first index, last index

    def close() -> None:
        if run:
            base, a, b = run
            parts.append(f"{base}[{a}]" if a == b else f"{base}[{a}..{b}]")
            run.clear()

    for name in names:
        m = re.fullmatch(r"(.+)\[(\d+)\]", name)
        if m and run and run[0] == m.group(1) and run[2] + 1 == int(m.group(2)):
            run[2] += 1
            continue
        close()
        if m:
            run.extend((m.group(1), int(m.group(2)), int(m.group(2))))
        else:
            parts.append(name)
    close()
    return ", ".join(parts)


class RealChannel:
    """``fmi2GetReal`` / ``fmi2SetReal`` of one fixed list of Real variables of a component.

    The value-reference array and a value buffer are built once; each call goes straight to the
    FMU's function (fmpy's ``getReal``/``setReal`` rebuild ctypes arrays on every call). Every
    call adds one to ``stats.fmu_calls``. A failing call raises a :class:`CosimError` naming the
    component, the variables and what the FMU logged, at ``clock.t``.
    """

    __slots__ = ("component", "names", "what", "values", "_vr", "_n", "_ptr", "_get", "_set",
                 "_instance", "_stats", "_clock")  # fmt: skip

    def __init__(self, component: Component, names: Sequence[str], stats, clock,
                 what: str = "", buffer: np.ndarray | None = None) -> None:  # fmt: skip
        slave = component.slave
        self.component = component
        self.names = list(names)
        #: how errors name the variables
        self.what = what or describe(self.names)
        self._n = len(self.names)
        self._vr = (c_uint * self._n)(*[component.vr[n] for n in self.names])
        #: the value buffer: :meth:`get` fills it, :meth:`send` sends it. ``buffer`` (a
        #: contiguous float array, e.g. a slice of a larger one) is used in place
        if buffer is None:
            buffer = np.zeros(self._n)
        if buffer.dtype != np.float64 or buffer.shape != (self._n,):
            raise ValueError(f"buffer of shape {buffer.shape} for {self._n} variables")
        if not buffer.flags.c_contiguous:
            raise ValueError("the buffer must be contiguous")
        self.values = buffer
        self._ptr = self.values.ctypes.data_as(POINTER(c_double))
        self._get = slave.dll.fmi2GetReal  # fmpy set its argument and result types
        self._set = slave.dll.fmi2SetReal
        self._instance = slave.component
        self._stats = stats
        self._clock = clock

    def get(self) -> np.ndarray:
        """The current values (the buffer itself: copy what must outlive the next call)."""
        self._stats.fmu_calls += 1
        status = self._get(self._instance, self._vr, self._n, self._ptr)
        if status > 1:
            self._fail("fmi2GetReal", status)
        return self.values

    def set(self, values) -> None:
        """Send ``values`` (any sequence of the channel's length), through the buffer."""
        self.values[:] = values
        self.send()

    def set_from(self, source: np.ndarray, index: np.ndarray) -> None:
        """Send ``source[index]``, through the buffer."""
        source.take(index, out=self.values)
        self.send()

    def send(self) -> None:
        """Send the buffer as it is."""
        self._stats.fmu_calls += 1
        status = self._set(self._instance, self._vr, self._n, self._ptr)
        if status > 1:
            self._fail("fmi2SetReal", status)

    def _fail(self, function: str, status: int) -> None:
        c = self.component
        detail = ""
        if function == "fmi2SetReal":
            detail = f" to {np.array2string(self.values, precision=4, threshold=12)}"
        raise CosimError(
            f"component '{c.name}': {function} of {self.what}{detail} failed "
            f"(status {_STATUS.get(status, status)}){c.last_error()}",
            self._clock.t,
        )


class InputDerivativeChannel:
    """``fmi2SetRealInputDerivatives`` (order 1) of one fixed list of Real inputs of a
    component, from a value buffer (1/s times the inputs' units). Each call adds one to
    ``stats.fmu_calls``; a failing call raises a :class:`CosimError` as :class:`RealChannel`."""

    __slots__ = ("component", "names", "values", "_vr", "_n", "_order", "_ptr", "_set",
                 "_instance", "_stats", "_clock")  # fmt: skip

    def __init__(self, component: Component, names: Sequence[str], stats, clock,
                 buffer: np.ndarray) -> None:  # fmt: skip
        self.component = component
        self.names = list(names)
        self._n = len(self.names)
        if buffer.dtype != np.float64 or buffer.shape != (self._n,):
            raise ValueError(f"buffer of shape {buffer.shape} for {self._n} variables")
        if not buffer.flags.c_contiguous:
            raise ValueError("the buffer must be contiguous")
        self.values = buffer
        self._vr = (c_uint * self._n)(*[component.vr[n] for n in self.names])
        self._order = (c_int * self._n)(*([1] * self._n))
        self._ptr = self.values.ctypes.data_as(POINTER(c_double))
        self._set = component.slave.dll.fmi2SetRealInputDerivatives
        self._instance = component.slave.component
        self._stats = stats
        self._clock = clock

    def send(self) -> None:
        """Send the buffer as it is: the first derivatives of the inputs over the next step."""
        self._stats.fmu_calls += 1
        status = self._set(self._instance, self._vr, self._n, self._order, self._ptr)
        if status > 1:
            self.fail(status)

    def fail(self, status: int) -> None:
        """Raise the CosimError of a failed call."""
        c = self.component
        raise CosimError(
            f"component '{c.name}': fmi2SetRealInputDerivatives of "
            f"{describe(self.names)} failed (status {_STATUS.get(status, status)})"
            f"{c.last_error()}", self._clock.t,
        )  # fmt: skip


class Stepper:
    """``fmi2DoStep`` of one component straight to the FMU's function; a failure raises a
    :class:`CosimError` with what the FMU logged. Each call adds one to ``stats.fmu_calls``."""

    __slots__ = ("component", "_step", "_instance", "_stats")

    def __init__(self, component: Component, stats) -> None:
        self.component = component
        self._step = component.slave.dll.fmi2DoStep
        self._instance = component.slave.component
        self._stats = stats

    def __call__(self, t: float, h: float) -> None:
        self._stats.fmu_calls += 1
        status = self._step(self._instance, t, h, 1)
        if status > 1:
            self.fail(t, status)

    def fail(self, t: float, status: int) -> None:
        """Raise the CosimError of a failed ``fmi2DoStep`` from ``t``."""
        c = self.component
        raise CosimError(
            f"fmi2DoStep of component '{c.name}' failed (status "
            f"{_STATUS.get(status, status)}){c.last_error()}", t,
        )  # fmt: skip


_DD = CFUNCTYPE(c_int, c_void_p, POINTER(c_uint), c_size_t, POINTER(c_uint), c_size_t,
                POINTER(c_double), POINTER(c_double))  # fmi2GetDirectionalDerivativeTYPE


class Derivatives:
    """``fmi2GetDirectionalDerivative`` of fixed outputs (the unknowns) of a component with
    respect to its inputs, one column of the Jacobian per call (exact for titopfmu's native
    FMUs: the core's complex step). Each call adds one to ``stats.fmu_calls``."""

    __slots__ = ("component", "what", "_dd", "_instance", "_vu", "_nu", "_vk", "_one",
                 "_col", "_colp", "_stats", "_clock")  # fmt: skip

    def __init__(self, component: Component, unknowns: Sequence[str], stats, clock,
                 what: str = "") -> None:  # fmt: skip
        self.component = component
        self.what = what or describe(list(unknowns))
        self._dd = _DD(component.function_address("fmi2GetDirectionalDerivative"))
        self._instance = component.slave.component
        self._nu = len(unknowns)
        self._vu = (c_uint * self._nu)(*[component.vr[n] for n in unknowns])
        self._vk = (c_uint * 1)()
        self._one = (c_double * 1)(1.0)
        self._col = np.zeros(self._nu)
        self._colp = self._col.ctypes.data_as(POINTER(c_double))
        self._stats = stats
        self._clock = clock

    def column(self, known: str) -> np.ndarray:
        """d unknowns / d ``known`` (an input), at the component's current point; the array is
        reused by the next call."""
        self._stats.fmu_calls += 1
        self._vk[0] = self.component.vr[known]
        status = self._dd(self._instance, self._vu, self._nu, self._vk, 1, self._one, self._colp)
        if status > 1:
            self.fail(known, status)
        return self._col

    def fail(self, known: str, status: int) -> None:
        """Raise the CosimError of a failed call for the input ``known``."""
        c = self.component
        raise CosimError(
            f"component '{c.name}': fmi2GetDirectionalDerivative of {self.what} with "
            f"respect to {known} failed (status {_STATUS.get(status, status)})"
            f"{c.last_error()}", self._clock.t,
        )  # fmt: skip
