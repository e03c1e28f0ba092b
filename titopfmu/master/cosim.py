"""The co-simulation master: TITOP FMUs wired into a tree, the algebraic loop solved exactly.

At every communication point the master

1. resolves, in dependency order (the FMUs' ``ModelStructure``), every input that does not
   depend on the loop: twists and poses flow down the tree (``P.m[7..18]`` from the parent's
   ``Cj.m[7..18]``), loop closures turn them into wrenches, signal FMUs (joint laws) read joint
   motions and give efforts;
2. solves the algebraic loop of the tree — accelerations down (``P.m[1..6]``), wrenches up
   (``Cj.W``) — with the same :class:`~titopfmu.assembly.loop_solver.TreeLoopSolver` as the
   in-process engine. Each FMU is affine in its loop inputs at a fixed point, ``y = M u + c``:
   ``M`` comes from the FMU's directional derivatives (``fmi2GetDirectionalDerivative``,
   exact), or by unit perturbations through set/get for an FMU that does not provide them
   (exact up to rounding, the map being affine), and is reused across steps; ``c`` comes from
   the outputs at the current inputs.
   The loop inputs start from the polynomial through their last solutions (``guess_order``).
   A body's outputs are read once, with its pre-loop values; inputs written to it after that
   read (its *late* inputs: a joint law's effort, a loop closure's wrench) are then carried to
   its outputs by more measured columns of its Jacobian, and sent with the first iteration.
   Each iteration is a chord step of Newton's method on the reused Jacobians. The residual after an
   iteration is exactly each FMU's mismatch between its outputs and their prediction by its
   Jacobian: when that mismatch, shrunk by the last contraction, predicts that the next iteration
   would not reach a tenth of the tolerance, the Jacobians of those FMUs only are measured again,
   so that the next iteration is exact for them. The residual decides, not the age of the
   Jacobians; the convergence does not depend on mass ratios (about one iteration per step, at most
   two in practice). ``loop="gauss-seidel"`` instead passes outputs to inputs in tree order,
   repeated until convergence: a fixed-point iteration that converges only when the children
   are light compared with their parents (kept for comparison);
3. advances every FMU by one communication step (``fmi2DoStep``), each input a line over the
   step (value and ``fmi2SetRealInputDerivatives``): the least-squares fit over the step of the
   cubic through its last four values, fourth order in the step with RK4 inside the FMUs
   (``coupling="extrapolated"``: held at the linear extrapolation to mid-step, second order;
   ``"hold"``: held at the value at the point, first order; docs/cosim.md, "Coupling error").

With fixed steps and Newton's loop, the steps between output points run in compiled code
(:mod:`.fastpath`, ``_step.c``): the same program and algorithm on the same arrays, the loop
solved by an LU factorization of the assembled interface Jacobians (``compiled = False``: this
module's Python path).

FMU calls: the master keeps the value of every input it writes and sends all writes to a
component since its last read in one ``fmi2SetReal`` just before the next ``fmi2GetReal``; each
read takes every output needed at that point (see :meth:`CoSimulation._build_program`); the
calls go straight to the FMUs' functions (:class:`~.components.RealChannel`). For the balloon
(7 FMUs) that is about 47 calls per step: 7 ``fmi2DoStep`` and 7 ``fmi2SetReal`` of the held
inputs, 7 of their derivatives, 14 for the pre-loop values, 8 per iteration, 3 for values
passed after the loop.
"""

from __future__ import annotations

import csv
import math
import os
import sys
import time
import warnings
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from ..assembly.engine import interrupted, timeout_message, wall_limit
from ..assembly.loop_solver import LoopNode, LoopSolveError, TreeLoopSolver
from ..blocks.loop_map import LoopMap
from .components import (
    Component,
    CosimError,
    Derivatives,
    FmuFile,
    InputDerivativeChannel,
    M,
    RealChannel,
    Stepper,
    W,
    describe,
)
from .fastpath import CompiledStep, applies

ACC = range(1, 7)  # loop part of a motion vector (1-based)
PRE = range(7, M + 1)  # twist, position, Euler angles


@dataclass
class StepStats:
    """Per-step counters of the loop solution."""

    iterations: int = 0
    jacobian_updates: int = 0
    fmu_calls: int = 0
    compiled_steps: int = 0  # communication steps made by the compiled step (fastpath.py)


@dataclass(eq=False)
class _Op:
    """One read in the program of a communication point: the pending writes to ``comp``
    (``flush``) sent, ``reads`` read, values passed to other components' inputs (``dests``:
    target -> positions in ``reads``, input names); a body's loop outputs (and the extra outputs
    after them) from position ``yoff`` when ``body`` >= 0."""

    comp: str
    flush: list[str]
    reads: list[str]
    dests: dict[str, tuple[list[int], list[str]]]
    body: int = -1
    yoff: int = 0


@dataclass(eq=False)
class _Body:
    """Run-time data of one body of the loop: its inputs ``x = [u ; late inputs]`` (``xv``, a
    slice of the master's copy of the written inputs, which its channel sends in place) and the
    value of ``x`` at which its loop outputs (``Yv``, a slice of ``Y``) were read; its interface
    Jacobian ``Mx = [M | N] = d y / d x`` and loop map ``y = M u + c``."""

    sy: slice
    se: slice
    ny: int
    nu: int
    xv: np.ndarray
    xch: RealChannel
    ych: RealChannel
    lc: np.ndarray  # positions in u of the loop inputs fed by another body
    cols: np.ndarray  # positions in x of the inputs that move during a solve (measured)
    feed: np.ndarray  # positions in y of the loop outputs that feed one
    c: np.ndarray  # the map's constant term (updated in place)
    tmp: np.ndarray
    x_read: np.ndarray
    has_parent: bool
    n_children: int
    Yv: np.ndarray | None = None
    xu: np.ndarray | None = None  # views of xv: u ...
    xl: np.ndarray | None = None  # ... and the late inputs
    nl: int = 0
    ne: int = 0  # extra outputs read with the loop outputs
    xs: slice | None = None  # of xv in V
    g: np.ndarray | None = None  # positions in V of x[cols]
    lcv: np.ndarray | None = None  # positions in V of u[lc]
    Mx: np.ndarray | None = None
    M: np.ndarray | None = None
    N: np.ndarray | None = None
    map: LoopMap | None = None
    xnames: list[str] | None = None  # input names of x
    dd: Derivatives | None = None  # the FMU's directional derivatives of y (None: none)


def _line_weights(s: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
    """Weights of the least-squares line over ``[0, h]`` of the polynomial through values at
    the times ``s`` (s, relative to the start of the step; distinct, at most 4): the line
    ``a + b s`` with ``a = alpha . v`` and ``b = beta . v`` (``v`` the values at ``s``). The
    line keeps the polynomial's mean ``(1/h) int p`` and first moment
    ``(12/h^3) int (s - h/2) p`` (Gauss-Legendre with 3 nodes: exact up to degree 5)."""
    x = 0.5 * h * (1.0 + np.array([-math.sqrt(0.6), 0.0, math.sqrt(0.6)]))
    w = np.array([5.0, 8.0, 5.0]) / 18.0  # weights of the mean over the step
    n = len(s)
    mu = np.empty(n)
    nu = np.empty(n)
    for j in range(n):
        lj = np.ones(3)  # the Lagrange polynomial of point j at the nodes
        for k in range(n):
            if k != j:
                lj *= (x - s[k]) / (s[j] - s[k])
        mu[j] = w @ lj
        nu[j] = 12.0 / (h * h) * (w @ ((x - 0.5 * h) * lj))
    return mu - 0.5 * h * nu, nu


def _user_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside titopfmu, for a warning issued by the
    caller of this function."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def _reissue_logged(component: Component, messages: list[tuple[int, str]],
                    inertia: bool = True) -> None:  # fmt: skip
    """Issue the warnings a native FMU logged (fmi2Warning) as Python warnings naming the
    component and the FMU file; a remark on an inertia as titopfmu's InertiaWarning (skipped
    when not ``inertia``: the System's block gave it already)."""
    from ..blocks.base import InertiaWarning

    for status, text in messages:
        if status == 1:
            cat = InertiaWarning if "parameter 'inertia'" in text else UserWarning
            if cat is InertiaWarning and not inertia:
                continue
            warnings.warn(f"component '{component.name}' ({component.file.path.name}): {text}",
                          cat, stacklevel=_user_stacklevel())  # fmt: skip


def alias_name(aliases: Mapping[str, str], name: str) -> str:
    """The FMU name of ``name`` under ``aliases`` (System name -> FMU name): ``hinge`` ->
    ``C1``, ``hinge.m[3]`` -> ``C1.m[3]``, ``m[2]`` -> ``joint.m[2]``; others unchanged."""
    base, bracket, idx = name.partition("[")
    if base in aliases:
        return aliases[base] + bracket + idx
    port, dot, what = base.rpartition(".")
    if dot and port in aliases and what in ("m", "W"):
        return f"{aliases[port]}.{what}{bracket}{idx}"
    return name


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


class CoSimulation:
    """A system of FMU components, its connections and its run.

    >>> cs = CoSimulation()
    >>> cs.add("base", "fmus/TitopRigidBodyC1.fmu", {"mass": 10.0, "inertia": np.eye(3)})
    >>> cs.add("arm", "fmus/TitopRevoluteBodyC0.fmu", {"mass": 2.0, "com": [0, -1, 0]})
    >>> cs.connect("base.C1", "arm.P")          # a TITOP port pair: motion down, wrench up
    >>> result = cs.simulate(5.0, step=1e-3, record=["arm.joint.m[3]"])
    """

    def __init__(self) -> None:
        self.components: dict[str, Component] = {}
        self._files: dict[str, FmuFile] = {}
        self.port_links: list[tuple[str, str, str, str]] = []  # child comp/port -> parent comp/port
        self.signal_links: list[tuple[str, str, str, str]] = []  # out comp/var -> in comp/var
        self.inputs: dict[tuple[str, str], float] = {}
        #: how coupled inputs move over a communication step: "polynomial" (default: each
        #: input a line over the step, its value and first derivative sent to the FMU,
        #: ``fmi2SetRealInputDerivatives``; the line is the least-squares fit over the step of
        #: the polynomial of degree :attr:`extrapolation_degree` through the input's last
        #: values: fourth order in the step with degree 3 and RK4 inside the FMUs; an FMU that
        #: cannot interpolate inputs holds the line's mean; with a loop closure FMU in the
        #: system and no explicit degree, "extrapolated" is used), "extrapolated" (inputs held at
        #: their linear extrapolation to mid-step, second order) or "hold" (inputs held at
        #: their value at the start of the step, first order)
        self.coupling = "polynomial"
        #: degree (0 to 3) of the polynomial through the last values of each coupled input
        #: that ``coupling="polynomial"`` extrapolates over the next step; None (default): 3,
        #: or the "extrapolated" coupling when a loop closure FMU is present
        #: (:meth:`_effective_degree`)
        self.extrapolation_degree: int | None = None
        #: "newton" (default: interface Jacobian, exact tree solve) or "gauss-seidel"
        self.loop = "newton"
        #: largest number of Gauss-Seidel sweeps per communication point
        self.gauss_seidel_max_iterations = 100
        #: degree of the polynomial through the last loop solutions that gives the first guess
        #: of the next one (fewer iterations; the solution itself does not depend on it)
        self.guess_order = 3
        #: fixed steps with Newton's loop run in the compiled step (:mod:`.fastpath`) when every
        #: body's FMU provides directional derivatives; False: the Python path (same results)
        self.compiled = True
        #: component -> {System name -> FMU name} (``from_system``: ``hinge`` -> ``C1``,
        #: ``m`` -> ``joint.m``), accepted wherever a reference is taken
        self.aliases: dict[str, dict[str, str]] = {}
        #: how a System maps onto this co-simulation (``from_system``), else None
        self.system_mapping = None
        self._ready = False
        self._deadline: float | None = None  # time.perf_counter() limit of the run (timeout)
        self._timeout: float | None = None

    @classmethod
    def from_system(cls, system, fmus: str | os.PathLike | None = None, **options) -> CoSimulation:
        """The co-simulation of a :class:`~titopfmu.System` (see
        :func:`titopfmu.master.from_system.from_system`): one FMU per block, same names."""
        from .from_system import from_system

        return from_system(system, fmus, **options)

    # -- building -----------------------------------------------------------------------------

    def add(self, name: str, fmu: str | os.PathLike, parameters: Mapping | None = None) -> None:
        """Add a component ``name``: an instance of the FMU file ``fmu`` with ``parameters``
        (FMI names; arrays by base name, e.g. ``inertia`` for ``inertia[i,j]``)."""
        if name in self.components:
            raise CosimError(f"a component named '{name}' already exists")
        key = os.fspath(fmu)
        if key not in self._files:
            self._files[key] = FmuFile.load(key)
        self.components[name] = Component(name, self._files[key], dict(parameters or {}))
        self._ready = False

    def _split(self, ref: str) -> tuple[Component, str]:
        if not isinstance(ref, str) or "." not in ref:
            raise CosimError(
                f"reference {ref!r} must read 'component.variable' or 'component.port'"
            )
        c, rest = ref.split(".", 1)
        if c not in self.components:
            known = ", ".join(self.components) or "none yet (add them first)"
            raise CosimError(f"reference '{ref}': no component '{c}'; components: {known}")
        if c in self.aliases:
            rest = alias_name(self.aliases[c], rest)
        return self.components[c], rest

    def connect(self, source: str, target: str) -> None:
        """Connect ``source`` to ``target``.

        A TITOP port pair ``"parent.Cj"`` -> ``"child.P"`` (child-kind to parent-kind) carries
        the motion vector down and the wrench up. Otherwise an output variable (or an array of
        them, ``"c.joint.m"`` for ``joint.m[1..k]``) feeds an input of the same size.
        """
        a, pa = self._split(source)
        b, pb = self._split(target)
        if pa in a.child_ports and pb in b.parent_ports:
            for link in self.port_links:
                if (link[2], link[3]) == (b.name, pb):
                    raise CosimError(f"port '{target}' is already connected")
                if (link[0], link[1]) == (a.name, pa):
                    raise CosimError(f"port '{source}' is already connected")
            self.port_links.append((a.name, pa, b.name, pb))
            self._ready = False
            return
        self._check_port_pair(a, pa, b, pb, source, target)
        outs = self._expand_var(a, pa, "output", source)
        ins = self._expand_var(b, pb, "input", target)
        if len(outs) != len(ins):
            raise CosimError(
                f"'{source}' ({len(outs)} values) and '{target}' ({len(ins)}) differ in size"
            )
        for o, i in zip(outs, ins, strict=True):
            if any((lk[2], lk[3]) == (b.name, i) for lk in self.signal_links):
                raise CosimError(f"input '{b.name}.{i}' is already connected")
            if (b.name, i) in self.inputs:
                raise CosimError(f"input '{b.name}.{i}' is held by set_input; not both")
            self.signal_links.append((a.name, o, b.name, i))
        self._ready = False

    def _check_port_pair(self, a: Component, pa: str, b: Component, pb: str, source: str,
                         target: str) -> None:  # fmt: skip
        """Raise a CosimError naming the valid choices when either side of a connection is a
        TITOP port but the two do not make a child-port -> parent-port pair."""
        kinds = {"child": "a child port (motion vector out, wrench in)",
                 "parent": "a parent port (motion vector in, wrench out)"}  # fmt: skip

        def kind(c: Component, p: str) -> str | None:
            return "child" if p in c.child_ports else "parent" if p in c.parent_ports else None

        ka, kb = kind(a, pa), kind(b, pb)
        if ka is None and kb is None:
            return
        if ka == "parent" and kb == "child":
            raise CosimError(
                f"'{source}' -> '{target}': a TITOP connection goes from a child port to a "
                f"parent port: connect('{target}', '{source}')"
            )
        if ka == "child":
            free = [f"{n}.{p}" for n, c in self.components.items() for p in c.parent_ports
                    if n != a.name and not any((lk[2], lk[3]) == (n, p)
                                               for lk in self.port_links)]  # fmt: skip
            other = f"'{target}' is {kinds[kb]}" if kb else f"'{target}' is not a port"
            raise CosimError(
                f"'{source}' -> '{target}': '{source}' is {kinds['child']}; it connects to a "
                f"parent port, and {other}. Unconnected parent ports: "
                + (", ".join(free) or "none")
            )
        if kb == "parent":
            free = [f"{n}.{p}" for n, c in self.components.items() for p in c.child_ports
                    if n != b.name and not any((lk[0], lk[1]) == (n, p)
                                               for lk in self.port_links)]  # fmt: skip
            other = f"'{source}' is {kinds[ka]}" if ka else f"'{source}' is not a port"
            raise CosimError(
                f"'{source}' -> '{target}': '{target}' is {kinds['parent']}; it is fed by a "
                f"child port, and {other}. Unconnected child ports: " + (", ".join(free) or "none")
            )
        # a parent port as source or a child port as target, the other side a signal
        p, c, k = (pa, a, ka) if ka else (pb, b, kb)
        raise CosimError(
            f"'{source}' -> '{target}': '{c.name}.{p}' is {kinds[k]}; a TITOP connection goes "
            "from a child port ('parent.Cj') to a parent port ('child.P'), both given whole; "
            f"its variables are {p}.m[1..18] and {p}.W[1..6]"
        )

    @staticmethod
    def valid_names(c: Component, causality: str | None = None) -> list[str]:
        """What a reference to component ``c`` may name: its TITOP ports (for connections) and
        its Real variables of ``causality`` (any when None), arrays by their base name."""
        ports = set(c.child_ports) | set(c.parent_ports)
        out = sorted(ports) if causality is None or causality in ("input", "output") else []
        for n, v in c.variables.items():
            if v.type != "Real" or (causality is not None and v.causality != causality):
                continue
            base = n.split("[", 1)[0]
            if base.rsplit(".", 1)[0] in ports and base.rsplit(".", 1)[-1] in ("m", "W"):
                continue  # a port's own variables: listed as the port
            if base not in out:
                out.append(base)
        return out

    @classmethod
    def _expand_var(cls, c: Component, name: str, causality: str | None, ref: str,
                    what: str = "") -> list[str]:  # fmt: skip
        """FMI names of the variable ``name`` or of the array ``name[...]``, checked to have
        ``causality`` (any when None) and type Real. ``what`` prefixes the messages."""
        where = f"{what}'{ref}'"
        if name in c.variables:
            names = [name]
        else:
            names = sorted(
                (n for n in c.variables if n.startswith(name + "[")),
                key=lambda n: [int(x) for x in n[len(name) + 1 : -1].split(",")],
            )
            if (
                not names and causality is None and name in set(c.child_ports) | set(c.parent_ports)
            ):  # a whole port, recorded: its motion vector and its wrench
                names = [f"{name}.m[{i}]" for i in range(1, 19)]
                names += [f"{name}.W[{i}]" for i in range(1, 7)]
            if not names:
                import difflib

                valid = cls.valid_names(c, causality)
                if name in c.child_ports or name in c.parent_ports:
                    hint = f" ('{name}' is a TITOP port: name its variables '{name}.m', '{name}.W')"
                else:
                    close = difflib.get_close_matches(name, valid, n=1)
                    hint = f" (did you mean '{close[0]}'?)" if close else ""
                kind = f"{causality} " if causality else ""
                raise CosimError(
                    f"{where}: component '{c.name}' has no variable '{name}'{hint}; "
                    f"valid {kind}names: {', '.join(valid) or 'none'}"
                )
        for n in names:
            v = c.variables[n]
            if causality is not None and v.causality != causality:
                raise CosimError(
                    f"{where}: '{c.name}.{n}' has causality '{v.causality}', not '{causality}'"
                )
            if v.type != "Real":
                raise CosimError(
                    f"{where}: '{c.name}.{n}' is of type {v.type}; connections, held inputs and "
                    "recordings take Real variables"
                )
        return names

    def set_input(self, ref: str, value) -> None:
        """Hold an unconnected input (or array of inputs) at a constant value."""
        c, name = self._split(ref)
        names = self._expand_var(c, name, "input", ref)
        vals = np.atleast_1d(np.asarray(value, dtype=float)).reshape(-1)
        if vals.size != len(names):
            raise CosimError(f"'{ref}' has {len(names)} values, got {vals.size}")
        if not np.all(np.isfinite(vals)):
            raise CosimError(f"'{ref}': non-finite value {vals.tolist()}")
        for n, v in zip(names, vals, strict=True):
            if any((lk[2], lk[3]) == (c.name, n) for lk in self.signal_links) or (
                n.startswith(tuple(f"{pp}." for _, _, cb, pp in self.port_links if cb == c.name))
                or n.startswith(tuple(f"{cp}." for ca, cp, _, _ in self.port_links
                                      if ca == c.name))
            ):  # fmt: skip
                raise CosimError(f"input '{c.name}.{n}' is connected; it cannot also be held")
            self.inputs[(c.name, n)] = float(v)

    #: inputs that may stay free (then at their FMU start value): a body's external wrench,
    #: zero unless connected or held, like a block without an ``external`` port in process
    OPTIONAL_INPUTS = ("ext.W[",)

    def unconnected_inputs(self) -> list[tuple[str, str]]:
        """(component, input) of every Real input that no connection feeds and no
        :meth:`set_input` holds, :attr:`OPTIONAL_INPUTS` aside, in component order."""
        if not self._ready:
            self._plan()
        fed = {(cb, i) for _, _, cb, i in self._pre_loop_links()}
        fed |= self._loop_input_names() | set(self.inputs)
        ports: dict[str, list[str]] = {}  # every variable of a connected TITOP port is fed
        for ca, pa, cb, pb in self.port_links:  # (a closure does not read the accelerations)
            ports.setdefault(ca, []).append(f"{pa}.")
            ports.setdefault(cb, []).append(f"{pb}.")
        return [(cn, n) for cn, c in self.components.items() for n in c.inputs
                if c.variables[n].type == "Real" and (cn, n) not in fed
                and not n.startswith((*self.OPTIONAL_INPUTS, *ports.get(cn, ())))]  # fmt: skip

    def check_inputs(self) -> None:
        """Refuse unconnected inputs, as the in-process engine refuses unconnected ports:
        a CosimError naming every one (component and input), raised before any FMU is
        instantiated. Hold an input the system leaves free with :meth:`set_input`."""
        free = self.unconnected_inputs()
        if not free:
            return
        by: dict[str, list[str]] = {}
        for cn, n in free:
            by.setdefault(cn, []).append(n)
        names = "; ".join(f"'{cn}': {describe(ns)}" for cn, ns in by.items())
        cn, n = free[0]
        base = n.split("[", 1)[0]
        size = sum(1 for c, m in free if c == cn and m.split("[", 1)[0] == base)
        value = "0.0" if size == 1 else f"[0.0] * {size}"
        raise CosimError(
            f"unconnected input(s) {names}: every input must be connected or held at a value, "
            f"e.g. set_input('{cn}.{base}', {value}) (a body's ext.W may stay free: zero)"
        )

    # -- structure ----------------------------------------------------------------------------

    def _plan(self) -> None:
        """Tree order, loop nodes and the schedule of the pre-loop values."""
        comps = self.components
        parent_of: dict[str, tuple[str, str]] = {}  # body -> (parent body, child port)
        closure_side: dict[tuple[str, str], tuple[str, str]] = {}  # (closure, side) -> body port
        for ca, pa, cb, pb in self.port_links:
            if comps[cb].is_closure:
                closure_side[(cb, pb)] = (ca, pa)
            elif pb == "P":
                parent_of[cb] = (ca, pa)
            else:
                raise CosimError(f"'{cb}.{pb}' is not a body's parent port P")
        bodies = [c for c in comps.values() if c.is_body]
        for c in bodies:
            if c.has_parent and c.name not in parent_of:
                raise CosimError(f"the parent port '{c.name}.P' is not connected")
        for c in comps.values():
            if c.is_closure:
                for side in ("left", "right"):
                    if (c.name, side) not in closure_side:
                        raise CosimError(
                            f"the loop-closure port '{c.name}.{side}' is not connected"
                        )
        children: dict[str, list[str]] = {c.name: [] for c in bodies}
        for child, (parent, _) in parent_of.items():
            children[parent].append(child)
        order: list[str] = []
        stack = [c.name for c in bodies if not c.has_parent][::-1]
        while stack:
            n = stack.pop()
            order.append(n)
            stack.extend(sorted(children[n], reverse=True))
        if len(order) != len(bodies):
            missing = sorted({c.name for c in bodies} - set(order))
            raise CosimError(f"bodies {missing} form a cycle (close loops with a loop closure)")
        index = {n: i for i, n in enumerate(order)}
        self.order = order
        self.parent_of = parent_of
        self.closure_side = closure_side
        nodes = []
        self._slots: list[dict[str, int]] = []
        for n in order:
            c = comps[n]
            slot_children = []
            for port in c.child_ports:
                kids = [k for k, (p, pp) in parent_of.items() if p == n and pp == port]
                slot_children.append(index[kids[0]] if kids else -1)
            self._slots.append({p: j for j, p in enumerate(c.child_ports)})
            if c.has_parent:
                p, pp = parent_of[n]
                nodes.append(LoopNode(True, index[p], comps[p].child_ports.index(pp),
                                      tuple(slot_children)))  # fmt: skip
            else:
                nodes.append(LoopNode(False, -1, -1, tuple(slot_children)))
        self.solver = TreeLoopSolver(nodes)
        self.nodes = nodes
        # loop variables of every body: u = [P.m[1..6] ; Cj.W], y = [P.W ; Cj.m[1..6]]
        self._u_names: list[list[str]] = []
        self._y_names: list[list[str]] = []
        for n in order:
            c = comps[n]
            u = [f"P.m[{i}]" for i in ACC] if c.has_parent else []
            y = [f"P.W[{i}]" for i in range(1, W + 1)] if c.has_parent else []
            for p in c.child_ports:
                u += [f"{p}.W[{i}]" for i in range(1, W + 1)]
                y += [f"{p}.m[{i}]" for i in ACC]
            self._u_names.append(u)
            self._y_names.append(y)
        self._schedule = self._pre_loop_schedule()
        self._residual_plan()
        self._build_program()
        self._ready = True

    def _residual_plan(self) -> None:
        """Flat layout of the loop variables and the pairs the residual compares.

        ``U`` stacks the bodies' loop inputs ``u_i``, ``Y`` their loop outputs ``y_i``; each loop
        equation says that an input equals the output feeding it, ``U[res_u] = Y[res_y]``."""
        su, sy, a, b = [], [], 0, 0
        for u, y in zip(self._u_names, self._y_names, strict=True):
            su.append(slice(a, a + len(u)))
            sy.append(slice(b, b + len(y)))
            a, b = a + len(u), b + len(y)
        res_u: list[int] = []
        res_y: list[int] = []
        names: list[str] = []
        for i, n in enumerate(self.order):
            node = self.nodes[i]
            if not node.has_parent:
                continue
            p = node.parent
            s = (6 if self.nodes[p].has_parent else 0) + 6 * node.parent_slot
            res_u += range(su[i].start, su[i].start + 6)  # the child's acceleration at P ...
            res_y += range(sy[p].start + s, sy[p].start + s + 6)  # ... is the parent's at Cj
            names += [f"{n}.P.m"] * 6
            res_u += range(su[p].start + s, su[p].start + s + 6)  # the parent's wrench at Cj ...
            res_y += range(sy[i].start, sy[i].start + 6)  # ... is the child's at P
            names += [f"{self.order[p]}.W of {n}"] * 6
        self._su, self._sy = su, sy
        self._res_u, self._res_y = np.array(res_u, dtype=int), np.array(res_y, dtype=int)
        self._res_names = names
        ru, ry = set(res_u), set(res_y)
        #: per body: positions in u_i of the loop inputs (fed by another body) ...
        self._lc = [[k for k in range(s.stop - s.start) if s.start + k in ru] for s in su]
        #: ... and in y_i of the loop outputs that feed one (what the residual sees)
        self._feed = [[k for k in range(s.stop - s.start) if s.start + k in ry] for s in sy]

    def _build_program(self) -> None:
        """The FMU calls of one communication point, fixed once as lists of names (bound to
        :class:`RealChannel` objects when the FMUs are instantiated).

        The master keeps the value of every input it writes (``_written``: link targets and
        loop inputs) and writes it only when the component is about to be read: every write
        since a component's last read goes in one ``fmi2SetReal`` before its next
        ``fmi2GetReal``. Each read takes all the outputs needed at that point; a body's loop
        outputs join its last pre-loop read when nothing is written to it after that read.
        """
        comps = self.components
        order = self.order
        index = {n: i for i, n in enumerate(order)}
        post = self._post_links
        post_targets = {(cb, i) for _, _, cb, i in post}
        written: dict[str, set[str]] = {}
        for _, _, cb, i in self._pre_loop_links():  # every link target, pre- or post-loop
            written.setdefault(cb, set()).add(i)
        for n, u in zip(order, self._u_names, strict=True):
            written.setdefault(n, set()).update(u)
        self._written = {cb: sorted(ns, key=comps[cb].vr.__getitem__) for cb, ns in written.items()}
        wpos = {cb: {x: k for k, x in enumerate(ns)} for cb, ns in self._written.items()}

        def deps_of(cname: str, out: str) -> list[str]:
            d = comps[cname].dependencies.get(out)
            return comps[cname].inputs if d is None else d

        # outputs read along with a body's loop outputs: sources of post-loop links that depend
        # on no post-loop target (their value at the loop solution is then known)
        extras: dict[str, list[str]] = {n: [] for n in order}
        for ca, o, _, _ in post:
            if ca in index and o not in extras[ca]:
                if not any((ca, d) in post_targets for d in deps_of(ca, o)):
                    extras[ca].append(o)
        self._extras = [extras[n] for n in order]
        # the loop inputs' first guess is written before anything else
        pending: dict[str, set[str]] = {
            n: {self._u_names[i][k] for k in self._lc[i]} for i, n in enumerate(order)
        }

        def flush(cname: str) -> list[str]:
            return sorted(pending.pop(cname, ()), key=wpos.get(cname, {}).__getitem__)

        def targets(dests: list[list[tuple[str, str]]]) -> dict[str, tuple[list[int], list[str]]]:
            by: dict[str, tuple[list[int], list[str]]] = {}
            for k, ds in enumerate(dests):
                for dc, dn in ds:
                    e = by.setdefault(dc, ([], []))
                    e[0].append(k)
                    e[1].append(dn)
                    pending.setdefault(dc, set()).add(dn)
            return by

        ops: list[_Op] = []
        for cname, outs, dests in self._schedule:
            f = flush(cname)
            ops.append(_Op(cname, f, list(outs), targets(dests)))
        # a body's loop outputs are read with its last pre-loop read. Inputs written to it after
        # that read (a joint law's effort, a loop closure's wrench: its *late* inputs) are sent
        # before the read at their previous values, and their change is carried to the outputs
        # by measured columns of its Jacobian, like a change of the loop inputs: the first
        # iteration sends them with the loop inputs (no read at the guess)
        last = {op.comp: op for op in ops}
        self._late: list[list[str]] = []
        for i, n in enumerate(order):
            tail = self._y_names[i] + self._extras[i]
            op = last.get(n)
            if op is None:  # not read before the loop: one read, everything written before it
                if tail:  # (a body without loop variables is not read: writes wait)
                    ops.append(_Op(n, flush(n), tail, {}, body=i, yoff=0))
                self._late.append([])
                continue
            op.body, op.yoff = i, len(op.reads)
            op.reads += tail
            late = flush(n)
            op.flush = sorted(set(op.flush) | set(late), key=wpos[n].__getitem__)
            self._late.append(late)
        self._ops = ops
        # after the loop: post-loop links in dependency order, from the bodies' extra outputs
        # (read with the loop outputs) or from a read of the source
        post_ops: list[_Op] = []
        for ca, o, cb, i in post:
            extra = ca in index and o in extras[ca]
            op = post_ops[-1] if post_ops else None
            if (op is None or op.comp != ca or op.body != (index[ca] if extra else -1)
                    or (not extra and pending.get(ca))):  # fmt: skip
                op = _Op(ca, [] if extra else flush(ca), [], {}, body=index[ca] if extra else -1)
                post_ops.append(op)
            if extra:
                op.reads.append(o)
            elif o not in op.reads:
                op.reads.append(o)
            k = op.reads.index(o)
            e = op.dests.setdefault(cb, ([], []))
            e[0].append(k)
            e[1].append(i)
            pending.setdefault(cb, set()).add(i)
        self._post_ops = post_ops
        self._final_flush = [(cname, flush(cname)) for cname in list(pending) if pending[cname]]
        # a body's written inputs start with x = [u ; late inputs] (see :meth:`_bind`)
        for i, n in enumerate(order):
            x = self._u_names[i] + [v for v in self._late[i] if v not in self._u_names[i]]
            self._written[n] = x + [v for v in self._written[n] if v not in x]

    def _loop_input_names(self) -> set[tuple[str, str]]:
        out = set()
        for n in self.order:
            c = self.components[n]
            if c.has_parent:
                out |= {(n, f"P.m[{i}]") for i in ACC}
            for p in c.child_ports:
                kids = [k for k, (pp, port) in self.parent_of.items() if pp == n and port == p]
                if kids:
                    out |= {(n, f"{p}.W[{i}]") for i in range(1, W + 1)}
        return out

    def _pre_loop_links(self) -> list[tuple[str, str, str, str]]:
        links = []
        for child, (parent, port) in self.parent_of.items():
            links += [(parent, f"{port}.m[{i}]", child, f"P.m[{i}]") for i in PRE]
        for (closure, side), (body, port) in self.closure_side.items():
            links += [(body, f"{port}.m[{i}]", closure, f"{side}.m[{i}]") for i in PRE]
            links += [(closure, f"{side}.W[{i}]", body, f"{port}.W[{i}]") for i in range(1, W + 1)]
        return links + list(self.signal_links)

    def _pre_loop_schedule(self) -> list[tuple[str, list[str], list[tuple[str, str]]]]:
        """Steps (component, outputs to read, where each goes) in dependency order.

        An output is read once every input it depends on (``ModelStructure``) is known. Links
        whose source depends on a loop variable (e.g. a joint acceleration q̈ passed to a joint
        law that does not use it) are carried after the loop instead (:attr:`_post_links`); it is
        an error if anything the loop needs depends on them."""
        links = self._pre_loop_links()
        comps = self.components
        loop_inputs = self._loop_input_names()

        def deps_of(cname: str, out: str) -> list[str]:
            d = comps[cname].dependencies.get(out)
            return comps[cname].inputs if d is None else d

        # inputs whose value is only known after the loop: loop inputs and, transitively, the
        # targets of links from outputs that depend on them
        late = set(loop_inputs)
        post: list[tuple[str, str, str, str]] = []
        changed = True
        while changed:
            changed = False
            for link in links:
                ca, o, cb, i = link
                if link not in post and any((ca, d) in late for d in deps_of(ca, o)):
                    post.append(link)
                    late.add((cb, i))
                    changed = True
        post_targets = {(cb, i) for _, _, cb, i in post}
        for cname, c in comps.items():
            needed = set(c.outputs) if (c.is_body or c.is_closure) else set()
            needed |= {o for ca, o, _, _ in links if ca == cname}
            for out in needed:
                for d in deps_of(cname, out):
                    if (cname, d) in post_targets:
                        src = next(lk for lk in post if (lk[2], lk[3]) == (cname, d))
                        if (
                            out.endswith(tuple(f".m[{k}]" for k in ACC))
                            or ".W[" in out
                            or any((cname, out) == (lk[0], lk[1]) for lk in links if lk not in post)
                        ):
                            raise CosimError(
                                f"'{cname}.{out}' depends on '{cname}.{d}', which is fed by "
                                f"'{src[0]}.{src[1]}', itself a function of the loop variables "
                                "(accelerations and wrenches of the tree); signals may only use "
                                "positions and rates"
                            )
        self._post_links = post
        pre = [lk for lk in links if lk not in post]
        targets: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for ca, o, cb, i in pre:
            targets.setdefault((ca, o), []).append((cb, i))
        pending_inputs = {(cb, i) for _, _, cb, i in pre}
        todo = set(targets)
        schedule = []
        while todo:
            # read one component at a time, all its ready outputs at once; prefer one whose
            # outputs still to read are all ready (it is then read once per point)
            ready: dict[str, list[tuple[str, str]]] = {}
            waiting: set[str] = set()
            for key in sorted(todo):
                if any((key[0], d) in pending_inputs for d in deps_of(key[0], key[1])):
                    waiting.add(key[0])
                else:
                    ready.setdefault(key[0], []).append(key)
            if not ready:
                names = sorted(f"{a}.{b}" for a, b in todo)
                raise CosimError(f"algebraic loop among signal connections: {names[:6]}")
            full = [c for c in comps if c in ready and c not in waiting]
            cname = full[0] if full else next(c for c in comps if c in ready)
            dests = []
            for k in ready[cname]:
                todo.discard(k)
                dests.append(targets[k])
                for t in targets[k]:
                    pending_inputs.discard(t)
            schedule.append((cname, [k[1] for k in ready[cname]], dests))
        return schedule

    # -- run ----------------------------------------------------------------------------------

    def initialize(self, start_time: float = 0.0) -> None:
        """Instantiate every FMU, set parameters and held inputs, solve the first point."""
        if not self._ready:
            self._plan()
        self.check_inputs()
        self.t = float(start_time)
        comps = self.components
        current = None
        try:
            for c in comps.values():
                current = c
                c.instantiate()
                c.slave.setupExperiment(startTime=self.t)
                c.slave.enterInitializationMode()
                c.apply_parameters()
            for (cn, n), v in self.inputs.items():
                current = comps[cn]
                comps[cn].slave.setReal([comps[cn].vr[n]], [v])
            for c in comps.values():
                current = c
                seen = len(c.messages)
                c.slave.exitInitializationMode()  # the FMU checks its parameters here
                _reissue_logged(c, c.messages[seen:], self.system_mapping is None)
        except CosimError:
            self.free()
            raise
        except Exception as exc:
            detail = current.last_error() if current is not None else ""
            name = current.name if current is not None else "?"
            self.free()
            raise CosimError(
                f"initialization of component '{name}' failed: {exc}{detail}"
            ) from None
        self.stats = StepStats()
        self._bind()
        self.stats.fmu_calls = 0

    def _channel(self, cname: str, names: Sequence[str], what: str = "",
                 buffer: np.ndarray | None = None) -> RealChannel:  # fmt: skip
        return RealChannel(self.components[cname], names, self.stats, self, what, buffer)

    def _bind(self) -> None:
        """Channels for the program of :meth:`_build_program` and the master's copy of the
        inputs it writes, read once from the FMUs.

        Every written input has a place in the flat array ``_V`` (its value at the current
        point; ``_P`` at the previous point, ``_H`` the value held over the step), a body's
        ``x = [u ; late inputs]`` first: its channel sends that slice of ``_V`` in place."""
        comps = self.components
        base: dict[str, int] = {}
        n = 0
        for cname, names in self._written.items():
            base[cname] = n
            n += len(names)
        V = self._V = np.zeros(n)
        H = self._H = np.zeros(n)
        self._P = np.zeros(n)
        self._D = np.zeros(n)
        ang = []
        self._hold_channels = []
        # polynomial coupling: first derivatives over the step (B), the last values (Vh at
        # times Th, oldest first, Nh of them), the inputs of FMUs that hold the line's mean
        self._B = np.zeros(n)
        self._Vh = np.zeros((4, n))
        self._Th = np.zeros(4)
        self._Nh = 0
        self._deriv_channels: list[InputDerivativeChannel] = []
        self._deriv_hold: list[int] = []  # the hold channel of each derivative channel
        mean = []
        for cname, names in self._written.items():
            sl = slice(base[cname], base[cname] + len(names))
            if not names:
                continue
            ch = self._channel(cname, names, "its connected inputs", H[sl])
            V[sl] = ch.get()
            self._hold_channels.append(ch)
            if comps[cname].can_interpolate_inputs:
                self._deriv_hold.append(len(self._hold_channels) - 1)
                self._deriv_channels.append(
                    InputDerivativeChannel(comps[cname], names, self.stats, self, self._B[sl])
                )
            else:
                mean += range(sl.start, sl.stop)
            ang += [base[cname] + k for k, x in enumerate(names)
                    if x.endswith((".m[16]", ".m[17]", ".m[18]"))]  # fmt: skip
        self._mean = np.array(mean, dtype=int)
        self._degree = self._effective_degree()
        #: the coupling in effect: :attr:`coupling`, but "extrapolated" for "polynomial" with
        #: the automatic degree when a loop closure is present (:meth:`_effective_degree`)
        self._coupling = self.coupling
        if self.coupling == "polynomial" and self._degree is None:
            self._coupling, self._degree = "extrapolated", 1
        self._angles = np.array(ang, dtype=int) if ang else None
        self._P[:] = V
        H[:] = V
        pos = {c: {x: base[c] + k for k, x in enumerate(ns)} for c, ns in self._written.items()}

        def idx(cname: str, names: Sequence[str]) -> np.ndarray:
            return np.array([pos[cname][x] for x in names], dtype=int)

        def bind_op(op: _Op, source=None):
            fch = self._channel(op.comp, op.flush) if op.flush else None
            rch = source if source is not None else self._channel(op.comp, op.reads)
            dests = [(np.array(src, dtype=int), idx(dc, names))
                     for dc, (src, names) in op.dests.items()]  # fmt: skip
            fidx = idx(op.comp, op.flush) if fch is not None else None
            return fch, fidx, rch, dests, op.body, op.yoff

        self._Y = np.zeros(self._sy[-1].stop if self._sy else 0)
        self._dY = np.zeros_like(self._Y)
        self._Yp = np.zeros_like(self._Y)
        self._Vg = np.zeros_like(V)
        self._XR = np.zeros_like(V)  # bodies' x_read, at their x's positions in V
        self._maps: list | None = None
        se, e = [], 0
        for x in self._extras:
            se.append(slice(e, e + len(x)))
            e += len(x)
        self._E = np.zeros(e)
        self._bodies: list[_Body] = []
        # every body's Jacobian Mx (ny x nx, row-major) in one flat array: the compiled step
        # (fastpath.py) reads and writes them in place
        sizes = []
        for i in range(len(self.order)):
            u = self._u_names[i]
            sizes.append(len(self._y_names[i]) * len(u + [x for x in self._late[i] if x not in u]))
        self._MX = np.zeros(sum(sizes))
        mx0 = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        for i, name in enumerate(self.order):
            node = self.nodes[i]
            ny = len(self._y_names[i])
            u = self._u_names[i]
            late = self._late[i]
            xn = u + [x for x in late if x not in u]
            x0 = base[name]
            assert self._written[name][: len(xn)] == xn  # x leads the body's written inputs
            xv = V[x0 : x0 + len(xn)]
            cols = sorted(set(self._lc[i]) | {xn.index(x) for x in late})
            what = "its loop inputs" + (" and late inputs" if late else "")
            self._XR[x0 : x0 + len(xn)] = xv
            b = _Body(
                sy=self._sy[i], se=se[i], ny=ny, nu=len(u), xv=xv,
                xch=self._channel(name, xn, what, xv),
                ych=self._channel(name, self._y_names[i] + self._extras[i], "its loop outputs"),
                lc=np.array(self._lc[i], dtype=int), cols=np.array(cols, dtype=int),
                feed=np.array(self._feed[i], dtype=int), c=np.zeros(ny), tmp=np.zeros(ny),
                x_read=self._XR[x0 : x0 + len(xn)], has_parent=node.has_parent,
                n_children=len(node.children),
            )  # fmt: skip
            b.Yv = self._Y[b.sy]
            b.Mx = self._MX[mx0[i] : mx0[i + 1]].reshape(ny, len(xn))
            b.M, b.N = b.Mx[:, : b.nu], b.Mx[:, b.nu :]
            b.xnames = xn
            comp = comps[name]
            b.dd = (Derivatives(comp, self._y_names[i], self.stats, self, "its loop outputs")
                    if comp.provides_directional_derivative else None)  # fmt: skip
            b.xu, b.xl = xv[: b.nu], xv[b.nu :]
            b.nl, b.ne = len(b.xl), se[i].stop - se[i].start
            b.xs = slice(x0, x0 + len(xn))
            b.g = x0 + b.cols
            b.lcv = x0 + b.lc
            self._bodies.append(b)
        # the residual compares V at the loop inputs with Y at the outputs feeding them
        u_abs = np.concatenate(
            [base[n] + np.arange(len(u)) for n, u in zip(self.order, self._u_names, strict=True)]
        )
        self._res_uv = u_abs[self._res_u] if len(self._res_u) else self._res_u
        self._g = np.concatenate([b.g for b in self._bodies]) if self._bodies else np.zeros(0, int)
        self._lcv = (np.concatenate([b.lcv for b in self._bodies]) if self._bodies
                     else np.zeros(0, int))  # fmt: skip
        self._known = [
            b.xv[6 if nd.has_parent else 0 : b.nu] if any(ch < 0 for ch in nd.children)
            else None for b, nd in zip(self._bodies, self.nodes, strict=True)
        ]  # fmt: skip
        #: some body reads its loop outputs before its late inputs are sent: the residual at the
        #: first guess is then not known, one iteration at least
        self._forced = any(len(x) for x in self._late)
        self._ops_rt = [bind_op(op) for op in self._ops]
        self._post_rt = []
        for op in self._post_ops:
            if op.body >= 0:  # values from the extra outputs read with the loop outputs
                b = self._bodies[op.body]
                offs = np.array([b.se.start + self._extras[op.body].index(r) for r in op.reads])
                rt = bind_op(op, source=self._E)
                self._post_rt.append((None, None, None, [(offs[s], d) for s, d in rt[3]], -1, 0))
            else:
                self._post_rt.append(bind_op(op))
        self._flush_rt = [(self._channel(cname, names), idx(cname, names))
                          for cname, names in self._final_flush]  # fmt: skip
        self._steppers = [Stepper(c, self.stats) for c in comps.values()]
        self._mx_dirty = True  # a Jacobian changed since the compiled step factored them
        self._compiled: CompiledStep | None = None  # built at its first use
        self._hist: list[tuple[float, np.ndarray]] = []
        self._have_prev = False
        self._h_prev = 0.0

    def free(self) -> None:
        self._compiled = None  # it refers to the instances
        for c in self.components.values():
            c.free()

    def _run(self, ops) -> None:
        """Execute bound program steps: send the pending writes to a component, read it, pass
        the values on, keep a body's loop outputs and the inputs they were read at."""
        V, Y, E = self._V, self._Y, self._E
        for fch, fidx, rch, dests, body, yoff in ops:
            if fch is not None:
                fch.set_from(V, fidx)
            out = rch.get() if rch is not None else E
            for src, dst in dests:
                V[dst] = out[src]
            if body >= 0:
                b = self._bodies[body]
                Y[b.sy] = out[yoff : yoff + b.ny]
                E[b.se] = out[yoff + b.ny : yoff + b.ny + (b.se.stop - b.se.start)]
                b.x_read[:] = b.xv  # every input in x has just been sent

    def _read_y(self, b: _Body) -> None:
        out = b.ych.get()
        b.Yv[:] = out[: b.ny]
        self._E[b.se] = out[b.ny :]

    def _set_u(self, i: int, u: np.ndarray) -> None:
        """Send body i's loop inputs ``u`` (and its late inputs' current values)."""
        b = self._bodies[i]
        b.xv[: b.nu] = u
        b.xch.send()

    def _outputs(self, i: int) -> np.ndarray:
        b = self._bodies[i]
        self._read_y(b)
        return b.Yv

    def _guess(self) -> np.ndarray | None:
        """First guess of the inputs that move in the solve (loop inputs, late inputs): the
        polynomial through their values at the last ``guess_order + 1`` points, extrapolated to
        the current time (None before the first point)."""
        pts = self._hist[-(self.guess_order + 1) :]
        if not pts:
            return None
        t = self.t
        g = None
        for k, (tk, uk) in enumerate(pts):
            w = 1.0
            for j, (tj, _) in enumerate(pts):
                if j != k:
                    w *= (t - tj) / (tk - tj)
            g = w * uk if g is None else g + w * uk
        return g

    def _pre_loop(self, newton: bool) -> None:
        """Step 1 of the module docstring: the loop's first guess written, the pre-loop values
        passed on, every body's loop outputs read at the guess."""
        if newton:
            g = self._guess()
            if g is not None:
                self._V[self._g] = g
        else:  # Gauss-Seidel starts from the inputs held over the last step
            self._V[self._lcv] = self._H[self._lcv]
        self._run(self._ops_rt)

    def _post_loop(self) -> None:
        self._run(self._post_rt)
        V = self._V
        for ch, idx in self._flush_rt:
            ch.set_from(V, idx)
        point = (self.t, V[self._g])
        if self._hist and self._hist[-1][0] == self.t:
            self._hist[-1] = point
        else:
            self._hist.append(point)
            del self._hist[: -(self.guess_order + 1)]

    def _measure(self, i: int) -> None:
        """The Jacobian ``Mx`` of body i (in place), column by column: from the FMU's directional
        derivatives (``fmi2GetDirectionalDerivative``, exact) when it provides them, else by
        unit perturbations of its inputs at the point where its outputs were read (the map being
        affine, exact up to rounding; the FMU is then left at the last probe: the iteration that
        follows sends every body's inputs). Columns of inputs that do not move during a solve (a
        free port's held wrench) stay zero."""
        b = self._bodies[i]
        Mx = b.Mx
        Mx[:] = 0.0
        if b.dd is not None:
            for k in b.cols:
                Mx[:, k] = b.dd.column(b.xnames[k])
        else:
            y0 = b.Yv.copy()
            x = b.xv
            kept = x.copy()
            x[:] = b.x_read
            for k in b.cols:
                x[k] += 1.0
                b.xch.send()
                Mx[:, k] = b.ych.get()[: b.ny] - y0
                x[k] = b.x_read[k]
            x[:] = kept
        b.map = LoopMap.from_dense(b.M, b.c, b.has_parent, b.n_children)
        self._mx_dirty = True
        self.stats.jacobian_updates += 1

    def _residual(self, Y: np.ndarray | None = None, V: np.ndarray | None = None):
        """Largest mismatch between a loop input and the output that feeds it, relative to the
        size of the loop variables; with the variable's name."""
        Y = self._Y if Y is None else Y
        V = self._V if V is None else V
        if not len(self._res_u):
            self._scale = 1.0
            return 0.0, ""
        d = np.abs(V[self._res_uv] - Y[self._res_y])
        k = int(d.argmax())
        self._scale = max(1.0, float(np.abs(Y).max()))
        return float(d[k]) / self._scale, self._res_names[k]

    def _newton(self, tolerance: float, max_iterations: int) -> int:
        """Chord iterations on the reused interface Jacobians (module docstring, step 2)."""
        bodies = self._bodies
        Y, dY = self._Y, self._dY
        forced = self._forced
        res, where = (math.inf, "") if forced else self._residual()
        it = 0
        dot, subtract = np.dot, np.subtract
        while not res <= tolerance or (forced and it == 0):
            if it >= max_iterations or (it and not math.isfinite(res)):
                raise CosimError(
                    f"the algebraic loop did not converge: residual {res:.3g} at '{where}' "
                    f"after {it} iterations", self.t,
                )  # fmt: skip
            for i, b in enumerate(bodies):
                if b.map is None:
                    self._measure(i)
                    self._maps = None
                # y = Mx x + const at this point: y = M u + c with the late inputs at their
                # current values (before the first iteration they differ from x_read)
                dot(b.Mx, b.x_read, out=b.tmp)
                subtract(b.Yv, b.tmp, out=b.c)
                if b.nl:
                    b.c += dot(b.N, b.xl)
            if self._maps is None:
                self._maps = [b.map for b in bodies]
            try:
                sol = self.solver.solve(self._maps, self._known)
            except LoopSolveError as exc:
                raise CosimError(
                    f"singular loop equations at component '{self.order[exc.node]}'", self.t
                ) from None
            np.copyto(dY, Y)
            if it == 0 and forced:
                np.copyto(self._Vg, self._V)  # the first guess
            for i, b in enumerate(bodies):
                b.xu[:] = sol.u(i)
                b.xch.send()
            for b in bodies:
                out = b.ych.get()
                b.Yv[:] = out[: b.ny]
                if b.ne:
                    self._E[b.se] = out[b.ny :]
            it += 1
            r_prev = res
            res, where = self._residual()
            refresh = res > tolerance and math.isfinite(res)
            if refresh and it == 1 and forced:
                # the residual at the first guess as the maps predicted it: its loop inputs,
                # the late ones at their new values
                Yp = self._Yp
                Vg = self._Vg
                for b in bodies:
                    np.add(b.c, dot(b.M, Vg[b.xs][: b.nu]), out=Yp[b.sy])
                r_prev = self._residual(Yp, Vg)[0]
                self._residual()  # the scale of Y
            # at a fixed time each FMU is affine: the residual is the mismatch between the
            # outputs and their prediction by the maps, (Y - Y_old) - Mx (x - x_read). The
            # Jacobians are exact where measured; they age as the states move
            subtract(Y, dY, out=dY)
            eps = 64.0 * np.finfo(float).eps * self._scale
            ratio = min(1.0, res / r_prev) if r_prev > 0.0 else 1.0
            for b in bodies:
                d = subtract(b.xv, b.x_read)
                b.x_read[:] = b.xv
                mis = subtract(dY[b.sy], dot(b.Mx, d, out=b.tmp), out=b.tmp)
                amis = np.abs(mis)
                if amis.max() > eps:
                    # the last iteration contracted the residual by `ratio`; a body's mismatch
                    # scaled by that predicts its share of the next residual. Measure again, so
                    # that the next iteration is exact for them, the bodies whose share would
                    # stay above a tenth of the tolerance (Broyden updates along the step, which
                    # an earlier master made, are not worth their cost with exact Jacobians)
                    if refresh and len(b.feed):
                        share = float(amis[b.feed].max()) / self._scale * ratio
                        if share > 0.1 * tolerance:
                            b.map = None
        return it

    def _gauss_seidel(self, tolerance: float) -> int:
        """Fixed-point iteration: accelerations passed down in tree order, then wrenches up, until
        the residual is below ``tolerance``. Converges only when the children are light compared
        with their parents (the iteration's gain is about the mass ratio)."""
        count = len(self.order)
        try:
            return self._gauss_seidel_sweeps(tolerance, count)
        except CosimError as exc:
            if "Gauss-Seidel" in str(exc):
                raise
            raise CosimError(f"Gauss-Seidel diverged ({exc})", self.t) from None

    def _gauss_seidel_sweeps(self, tolerance: float, count: int) -> int:
        res, where, it = math.inf, "", 0
        bodies = self._bodies
        for it in range(1, self.gauss_seidel_max_iterations + 1):
            for i in range(count):  # down: each child takes its parent's latest acceleration
                node = self.nodes[i]
                if node.has_parent:
                    p = node.parent
                    yp = self._outputs(p)
                    off = 6 if self.nodes[p].has_parent else 0
                    u = bodies[i].xv[: bodies[i].nu].copy()
                    u[0:6] = yp[off + 6 * node.parent_slot : off + 6 * node.parent_slot + 6]
                    self._set_u(i, u)
            for i in reversed(range(count)):  # up: each parent takes its children's wrenches
                node = self.nodes[i]
                if node.has_parent:
                    p = node.parent
                    w = self._outputs(i)[0:6]
                    off = 6 if self.nodes[p].has_parent else 0
                    u = bodies[p].xv[: bodies[p].nu].copy()
                    u[off + 6 * node.parent_slot : off + 6 * node.parent_slot + 6] = w
                    self._set_u(p, u)
            for i in range(count):
                self._outputs(i)
            res, where = self._residual()
            if not np.isfinite(res):
                break
            if res <= tolerance:
                return it
        raise CosimError(
            f"Gauss-Seidel did not converge: residual {res:.3g} at '{where}' after {it} sweeps "
            "(children whose apparent inertia is not small compared with their parent's make "
            "the fixed point slow or unstable; use loop='newton')",
            self.t,
        )

    def solve_loop(self, tolerance: float = 1e-8, max_iterations: int = 5) -> None:
        """Steps 1-2 of the module docstring at the current time: on return every input the
        master writes holds its value at this point, and the loop residual is below
        ``tolerance`` (:attr:`last_iterations` iterations, 0 when the first guess already is)."""
        newton = self.loop != "gauss-seidel"
        self._pre_loop(newton)
        if newton:
            self.last_iterations = self._newton(tolerance, max_iterations)
        else:
            for i, b in enumerate(self._bodies):
                if b.nu < len(b.xv):  # the late inputs first
                    self._set_u(i, b.xv[: b.nu])
            self.last_iterations = self._gauss_seidel(tolerance)
        self.stats.iterations += self.last_iterations
        self._post_loop()

    def _extrapolate_inputs(self, h: float) -> None:
        """Hold each coupled input at its value extrapolated to the middle of the step,
        ``u_n + (u_n - u_{n-1}) / 2``: the integral of a held input over the step is then right
        to O(h³), which makes the coupling second order (docs/cosim.md, "Coupling error")."""
        ratio = h / self._h_prev if self._h_prev else 0.0  # u̇ ≈ (u_n - u_{n-1}) / h_{n-1}
        self._h_prev = h
        V, P, H, D = self._V, self._P, self._H, self._D
        if not self._have_prev:
            P[:] = V
            H[:] = V
            self._have_prev = True
            return
        np.subtract(V, P, out=D)
        a = self._angles
        if a is not None:
            D[a] = (D[a] + np.pi) % (2.0 * np.pi) - np.pi
        P[:] = V
        D *= 0.5 * ratio
        np.add(V, D, out=H)
        for ch in self._hold_channels:
            ch.send()

    def _effective_degree(self) -> int | None:
        """The degree of :meth:`_polynomial_inputs`: :attr:`extrapolation_degree`, or when it
        is None 3, but None (the "extrapolated" coupling instead) if a component is a loop
        closure. A closure is a penalty spring and damper, stiff by design; an explicit
        coupling extrapolated with degree k is stable for a shrinking range of h times the
        stiffness as k grows (as the Adams-Bashforth methods: about 1 for degree 1, 0.3 for
        degree 3): the four-bar of tests/test_master.py, stable at h = 2 ms with the mid-step
        hold of the linear extrapolation, is not with degree 3, and a line through the last
        two points (degree 1) is less accurate there than that hold."""
        d = self.extrapolation_degree
        if d is None:
            return None if any(c.is_closure for c in self.components.values()) else 3
        if d not in (0, 1, 2, 3):
            raise CosimError(f"extrapolation_degree must be 0, 1, 2 or 3 (or None), got {d!r}")
        return int(d)

    def _polynomial_inputs(self, h: float) -> None:
        """Send each coupled input as a line over the step ``[t, t + h]``: value ``a`` at ``t``
        and first derivative ``b`` (``fmi2SetRealInputDerivatives``), the least-squares fit over
        the step of the polynomial through the input's last values (:meth:`_line_weights`).
        With degree 3 the line's error is orthogonal to constants and ramps over the step, so
        the states err by O(h^5) per step: fourth order, given an internal method of that order
        (RK4, ``solver.method`` 4). An FMU that cannot interpolate its inputs holds the line's
        mean ``a + b h / 2`` (second order). Euler angles are extrapolated through their
        differences to the current value, wrapped to (-pi, pi]."""
        V, H, B, Vh, Th = self._V, self._H, self._B, self._Vh, self._Th
        t, m = self.t, self._Nh
        m = min(m, self._degree)  # past points used, besides the current one
        if m == 0:
            H[:] = V
            B[:] = 0.0
        else:
            alpha, beta = _line_weights(np.append(Th[4 - m :] - t, 0.0), h)
            D = Vh[4 - m :] - V
            a = self._angles
            if a is not None:
                D[:, a] = (D[:, a] + np.pi) % (2.0 * np.pi) - np.pi
            np.dot(beta[:-1], D, out=B)
            np.dot(alpha[:-1], D, out=H)
            H += V
            if len(self._mean):
                H[self._mean] += 0.5 * h * B[self._mean]
                B[self._mean] = 0.0
        # the current point joins the history (a repeated point, after a rollback, replaces)
        if not (self._Nh and Th[3] == t):
            Vh[:-1] = Vh[1:]
            Th[:-1] = Th[1:]
            self._Nh = min(self._Nh + 1, 4)
        Vh[3] = V
        Th[3] = t
        for ch in self._hold_channels:
            ch.send()
        for dch in self._deriv_channels:
            dch.send()

    def do_step(self, h: float) -> None:
        """Step 3 of the module docstring: every FMU advanced from ``t`` to ``t + h``."""
        if self._coupling == "polynomial":
            self._polynomial_inputs(h)
        elif self._coupling == "extrapolated":
            self._extrapolate_inputs(h)
        else:
            self._H[:] = self._V
        t = self.t
        for step in self._steppers:
            step(t, h)
        self.t += h

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

    # -- variable step ----------------------------------------------------------------------------

    def _save(self):
        states = {n: c.slave.getFMUstate() for n, c in self.components.items()}
        master = (self.t, self._V.copy(), self._P.copy(), self._H.copy(), self._have_prev,
                  list(self._hist), self._h_prev, self._Y.copy(), self._E.copy(),
                  self._Vh.copy(), self._Th.copy(), self._Nh)  # fmt: skip
        return states, master

    def _restore(self, saved) -> None:
        """Back to a saved point: FMU states (inputs included) and the master's copies, in
        place (channels and views refer to them)."""
        states, master = saved
        for n, c in self.components.items():
            c.slave.setFMUstate(states[n])
        self.t, V, P, H, self._have_prev, hist, self._h_prev, Y, E, Vh, Th, self._Nh = master
        self._V[:], self._P[:], self._H[:], self._Y[:], self._E[:] = V, P, H, Y, E
        self._Vh[:], self._Th[:] = Vh, Th
        self._hist = list(hist)

    def _free_saved(self, saved) -> None:
        for n, c in self.components.items():
            c.slave.freeFMUstate(saved[0][n])

    def _error_plan(self) -> list[tuple[RealChannel, np.ndarray]]:
        """Outputs compared by the step-doubling error estimate: every body's twist, position
        and attitude (``body.m[7..18]``) and joint rates and coordinates."""
        plan = []
        for n in self.order:
            c = self.components[n]
            names = [f"body.m[{i}]" for i in PRE if f"body.m[{i}]" in c.vr]
            k = sum(1 for v in c.vr if v.startswith("joint.m[")) // 3
            if k and c.variables["joint.m[1]"].causality == "output":
                names += [f"joint.m[{i}]" for i in range(k + 1, 3 * k + 1)]
            angle = np.array([nm in ("body.m[16]", "body.m[17]", "body.m[18]") for nm in names])
            if names:
                plan.append((self._channel(n, names, "its states' outputs"), angle))
        return plan

    def _error_outputs(self) -> list[np.ndarray]:
        return [ch.get().copy() for ch, _ in self._err_plan]

    def _error_norm(self, a: list[np.ndarray], b: list[np.ndarray], tol: float) -> float:
        worst = 0.0
        for (_, angle), x, y in zip(self._err_plan, a, b, strict=True):
            d = y - x
            d[angle] = (d[angle] + np.pi) % (2.0 * np.pi) - np.pi
            # step doubling: the two half steps are more accurate by 2^p - 1 (p: _step_order)
            e = np.abs(d) / self._doubling / (tol + tol * np.maximum(np.abs(x), np.abs(y)))
            worst = max(worst, float(np.max(e)) if len(e) else 0.0)
        return worst

    def _step_order(self) -> int:
        """The order p in the step of the co-simulation's error (local error h^(p+1)): the
        coupling's (hold 1, extrapolated 2, polynomial its degree + 1), at most the internal
        order of every FMU that has a ``solver.method`` (titopfmu's: 1, 2 or 4; its value
        as set, else its start value)."""
        p = {"hold": 1, "extrapolated": 2}.get(self._coupling, self._degree + 1)
        for c in self.components.values():
            v = c.variables.get("solver.method")
            if v is not None:
                m = c.parameters.get("solver.method", v.start)
                try:
                    p = min(p, int(float(m)))
                except (TypeError, ValueError):
                    pass
        return max(p, 1)

    def _advance_variable(self, t_end: float, tol: float, loop_tol: float, h_min: float) -> None:
        """Advance to ``t_end`` with error-controlled steps (step doubling, rollback through the
        FMUs' get/set state); ``self._h`` carries the step size from call to call."""
        while self.t < t_end - 1e-12 * max(1.0, abs(t_end)):
            h = min(self._h, t_end - self.t)
            saved = self._save()
            self.do_step(h)
            self.solve_loop(loop_tol)
            y1 = self._error_outputs()
            self._restore(saved)
            self.do_step(0.5 * h)
            self.solve_loop(loop_tol)
            self.do_step(0.5 * h)
            self.solve_loop(loop_tol)
            y2 = self._error_outputs()
            err = self._error_norm(y1, y2, tol)
            factor = 0.9 * (err if err > 0 else 1e-12) ** self._exponent
            self._check_deadline()
            if err <= 1.0:
                self._free_saved(saved)
                self.accepted += 1
                if h >= self._h * (1 - 1e-12):  # not shortened to hit t_end
                    self._h = min(self._h_max, h * min(2.0, factor))
            else:
                self._restore(saved)
                self._free_saved(saved)
                self.rejected += 1
                self._h = h * max(0.2, factor)
                if self._h < h_min:
                    raise CosimError(
                        f"step size {self._h:.3g} s below the minimum {h_min:.3g} s for the "
                        f"tolerance {tol:g} (error estimate {err:.3g})", self.t,
                    )  # fmt: skip
                self.solve_loop(loop_tol)  # the restored point's loop inputs

    def simulate(
        self,
        stop_time: float,
        step: float = 1e-3,
        *,
        start_time: float = 0.0,
        record: Sequence[str] | Mapping[str, str] = (),
        output_interval: float | None = None,
        tolerance: float = 1e-8,
        step_tolerance: float | None = None,
        max_step: float | None = None,
        progress: bool = False,
        mode: str = "cs",
        rtol: float = 1e-8,
        atol: float = 1e-10,
        method: str = "DOP853",
        timeout: float | None = None,
    ) -> CosimResult:
        """Co-simulate from ``start_time`` to ``stop_time`` (s).

        Fixed communication step ``step`` by default. With ``step_tolerance`` the step is
        error-controlled (``step`` is then the first step): each step is done once with h and
        again as two steps of h/2 from the same saved FMU states; their difference estimates the
        error of the states (relative and absolute ``step_tolerance``) and sets the next step.
        ``tolerance`` is the relative residual to which the algebraic loop is solved.

        Samples are taken at ``start_time + k * output_interval`` (s) and at ``stop_time``
        (every communication point when None with a fixed step, a hundredth of the run with a
        variable one). A fixed step must divide ``output_interval`` and the run (relative
        1e-9), else a CosimError is raised before any FMU is instantiated; variable steps are
        shortened to land on every output time.

        ``mode="me"`` runs the FMUs' model-exchange interfaces instead: one error-controlled
        scipy integrator (``method``, ``rtol``, ``atol``; ``max_step`` bounds its step) over
        every unit's continuous states, the algebraic loop solved at every derivative
        evaluation (:class:`~titopfmu.master.model_exchange.ModelExchange`); ``step`` and
        ``step_tolerance`` are then not used.

        ``timeout`` (s of wall-clock time, None: none) stops the run with a CosimError carrying
        the samples so far, checked at least every 256 communication steps (every integrator
        step in model exchange). A Ctrl-C raises a
        :class:`~titopfmu.assembly.engine.RunInterrupted` (a KeyboardInterrupt) carrying them too.
        """
        if not (math.isfinite(step) and step > 0):
            raise CosimError(f"the communication step must be positive, got {step}")
        if not (math.isfinite(stop_time) and math.isfinite(start_time) and stop_time > start_time):
            raise CosimError(f"stop time {stop_time} must be after the start time {start_time}")
        span = stop_time - start_time
        if output_interval is not None and not (
            math.isfinite(output_interval) and output_interval > 0
        ):
            raise CosimError(f"the output interval must be positive, got {output_interval}")
        if self.coupling not in ("polynomial", "extrapolated", "hold"):
            raise CosimError(f"unknown coupling {self.coupling!r}: 'polynomial' (default), "
                             "'extrapolated' or 'hold'")  # fmt: skip
        if self.extrapolation_degree is not None and self.extrapolation_degree not in (0, 1, 2, 3):
            raise CosimError("extrapolation_degree must be 0, 1, 2 or 3 (or None), got "
                             f"{self.extrapolation_degree!r}")  # fmt: skip
        if mode not in ("cs", "me"):
            raise CosimError(
                f"unknown mode {mode!r}: 'cs' (co-simulation) or 'me' (model exchange)"
            )
        self._deadline = wall_limit(timeout, CosimError)
        self._timeout = timeout
        if mode == "me":
            from .model_exchange import ModelExchange

            return ModelExchange(self, rtol=rtol, atol=atol, method=method).simulate(
                stop_time, start_time=start_time, record=record, output_interval=output_interval,
                tolerance=tolerance, max_step=max_step, progress=progress, timeout=timeout,
            )  # fmt: skip
        if step_tolerance is not None:
            return self._simulate_variable(
                stop_time, step, start_time, record, output_interval, tolerance, step_tolerance,
                max_step, progress,
            )  # fmt: skip
        n_steps = int(round(span / step))
        if n_steps < 1 or abs(n_steps * step - span) > 1e-9 * span:
            raise CosimError(
                f"the communication step {step:g} s must divide the interval {span:g} s "
                f"({span / step:.6g} steps)"
            )
        # the output grid: every `every` steps, exactly at start + k * output_interval
        every = 1
        if output_interval is not None:
            every = int(round(output_interval / step))
            if every < 1 or abs(every * step - output_interval) > 1e-9 * output_interval:
                raise CosimError(
                    f"the communication step {step:g} s does not divide the output interval "
                    f"{output_interval:g} s ({output_interval / step:.6g} steps): choose a "
                    f"step of {output_interval:g} s / n, e.g. "
                    f"{output_interval / max(1, math.ceil(output_interval / step)):.6g} s, or "
                    "an output interval that is a multiple of the step"
                )
        oi = step * every if output_interval is None else output_interval
        if not self._ready:
            self._plan()
        cols = self._record_columns(record)
        result = CosimResult([c for c, _, _ in cols])
        self.initialize(start_time)
        sample = self._sampler(cols, result)
        with self._running(result, progress, n_steps, "step") as bar:
            self.solve_loop(tolerance)
            result.iterations.append(self.last_iterations)
            k = 0
            while True:
                if k == n_steps:
                    sample(stop_time)
                    break
                if k % every == 0:
                    sample(start_time + (k // every) * oi)
                m = min(every - k % every, n_steps - k)  # steps to the next output point
                if self._deadline is not None:
                    m = min(m, 256)  # the timeout checked at least every 256 steps
                self._advance_fixed(m, step, tolerance, result.iterations, start_time, k)
                k += m
                if bar is not None:
                    bar.update(m)
                self._check_deadline()
        return result

    def _advance_fixed(self, n: int, h: float, tolerance: float, iterations: list[int],
                       t0: float, k0: int) -> None:  # fmt: skip
        """``n`` communication steps of ``h`` (s) from step ``k0`` of a run from ``t0``, each
        followed by the loop's solution; the time after step k is exactly ``t0 + k h`` (no drift
        of a sum of steps). The loop iterations of each are appended to ``iterations`` (also
        those done before an error). The compiled step (:mod:`.fastpath`) does them when it
        applies and :attr:`compiled` is true, else :meth:`do_step` and :meth:`solve_loop`."""
        if self.compiled and applies(self) is None:
            if self._compiled is None:
                self._compiled = CompiledStep(self)
            try:
                iterations += self._compiled.run(n, h, tolerance, 5, t0, k0)
            except CosimError:
                iterations += self._compiled.done
                raise
            return
        for j in range(n):
            self.do_step(h)
            self.t = t0 + (k0 + j + 1) * h
            self.solve_loop(tolerance)
            iterations.append(self.last_iterations)

    def _simulate_variable(
        self, stop_time, step, start_time, record, output_interval, tolerance, step_tolerance,
        max_step, progress,
    ) -> CosimResult:  # fmt: skip
        if not step_tolerance > 0:
            raise CosimError(f"the step tolerance must be positive, got {step_tolerance}")
        span = stop_time - start_time
        if output_interval is None:
            output_interval = span / 100.0
        if not self._ready:
            self._plan()
        cols = self._record_columns(record)
        result = CosimResult([c for c, _, _ in cols])
        self.initialize(start_time)
        self._err_plan = self._error_plan()
        sample = self._sampler(cols, result)
        self._h = step
        self._h_max = max_step if max_step is not None else output_interval
        p = self._step_order()
        self._doubling, self._exponent = 2.0**p - 1.0, -1.0 / (p + 1.0)
        self.accepted = self.rejected = 0
        n_out = int(math.floor(span / output_interval + 1e-9))
        grid = [start_time + k * output_interval for k in range(n_out + 1)]
        if grid[-1] < stop_time - 1e-12 * max(1.0, stop_time):
            grid.append(stop_time)
        with self._running(result, progress, len(grid) - 1, "output") as bar:
            self.solve_loop(tolerance)
            for k, t_out in enumerate(grid):
                self._check_deadline()
                if k:
                    self._advance_variable(t_out, step_tolerance, tolerance, 1e-9 * span)
                    self.t = t_out  # landed on it (to rounding): no drift of a sum of steps
                    if bar is not None:
                        bar.update()
                sample(t_out)
                result.iterations.append(self.last_iterations)
        return result

    def _check_deadline(self) -> None:
        """Raise the CosimError of a run past its ``timeout`` (see :meth:`simulate`)."""
        if self._deadline is not None and time.perf_counter() > self._deadline:
            raise CosimError(timeout_message(self._timeout), self.t)

    @contextmanager
    def _running(self, result: CosimResult, progress: bool, total: int, unit: str):
        """Around a run: a tqdm bar of ``total`` ``unit`` (None without ``progress``), the
        results so far attached to a CosimError, the bar closed and the FMUs freed at the end."""
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=total, unit=unit, desc="cosim")
        try:
            yield bar
        except CosimError as exc:
            exc.result = result
            raise
        except KeyboardInterrupt as exc:  # Ctrl-C: the samples so far go with it
            raise interrupted(exc, result, self.t) from None
        finally:
            if bar is not None:
                bar.close()
            self.free()


#: the master's own step and loop solution: the compiled step (:mod:`.fastpath`) stands in for
#: them only while they are not overridden
OWN_STEP = (CoSimulation.do_step, CoSimulation.solve_loop)
