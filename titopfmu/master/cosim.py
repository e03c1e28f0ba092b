"""The co-simulation master: TITOP FMUs wired into a tree, the algebraic loop solved exactly.

At every communication point the master

1. resolves, in dependency order (the FMUs' ``ModelStructure``), every input that does not
   depend on the loop: twists and poses flow down the tree (``P.m[7..18]`` from the parent's
   ``Cj.m[7..18]``), loop closures turn them into wrenches, signal FMUs (joint laws) read joint
   motions and give efforts;
2. solves the algebraic loop of the tree — accelerations down (``P.m[1..6]``), wrenches up
   (``Cj.W``) — with the same :class:`~titopfmu.assembly.loop_solver.TreeLoopSolver` as the
   in-process engine. Each FMU is affine in its loop inputs at a fixed point, ``y = M u + c``:
   ``M`` is measured by finite differences through set/get (pythonfmu offers no directional
   derivatives) and reused across steps; ``c`` comes from the outputs at the current inputs.
   This is Newton's method with a reused interface Jacobian: one iteration when ``M`` is
   current, a second one (chord step) when it has aged; when the residual does not fall below
   the tolerance within ``max_iterations``, ``M`` is measured again. Its convergence does not
   depend on mass ratios. ``loop="gauss-seidel"`` instead passes outputs to inputs in tree
   order, repeated until convergence: a fixed-point iteration that converges only when the
   children are light compared with their parents (kept for comparison);
3. advances every FMU by one communication step (``fmi2DoStep``), each holding its inputs.

The coupling error of held inputs is first order in the step (README, "Co-simulation").
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..assembly.loop_solver import LoopNode, LoopSolveError, TreeLoopSolver
from ..blocks.loop_map import LoopMap
from .components import Component, CosimError, FmuFile, M, W

ACC = range(1, 7)  # loop part of a motion vector (1-based)
PRE = range(7, M + 1)  # twist, position, Euler angles


@dataclass
class StepStats:
    """Per-step counters of the loop solution."""

    iterations: int = 0
    jacobian_updates: int = 0
    fmu_calls: int = 0


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
        #: "extrapolated" (default: inputs held at their mid-step extrapolation, second order)
        #: or "hold" (inputs held at their value at the start of the step, first order)
        self.coupling = "extrapolated"
        #: "newton" (default: interface Jacobian, exact tree solve) or "gauss-seidel"
        self.loop = "newton"
        #: largest number of Gauss-Seidel sweeps per communication point
        self.gauss_seidel_max_iterations = 100
        self._ready = False

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
            raise CosimError(f"reference '{ref}': no component '{c}'")
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
        if pa in a.parent_ports or pb in b.child_ports:
            raise CosimError(
                f"'{source}' -> '{target}': a TITOP connection goes from a child port (motion "
                "out, wrench in) to a parent port (motion in, wrench out)"
            )
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

    @staticmethod
    def _expand_var(c: Component, name: str, causality: str | None, ref: str) -> list[str]:
        """FMI names of the variable ``name`` or of the array ``name[...]``, checked to have
        ``causality`` (any when None) and type Real."""
        if name in c.variables:
            names = [name]
        else:
            names = sorted(
                (n for n in c.variables if n.startswith(name + "[")),
                key=lambda n: [int(x) for x in n[len(name) + 1 : -1].split(",")],
            )
            if not names:
                raise CosimError(f"'{ref}': component '{c.name}' has no variable '{name}'")
        for n in names:
            v = c.variables[n]
            if causality is not None and v.causality != causality:
                raise CosimError(
                    f"'{ref}': '{c.name}.{n}' has causality '{v.causality}', not '{causality}'"
                )
            if v.type != "Real":
                raise CosimError(
                    f"'{ref}': '{c.name}.{n}' is of type {v.type}; connections, held inputs and "
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
        # loop variables (value references) of every body
        self._u_vrs: list[list[int]] = []
        self._y_vrs: list[list[int]] = []
        for n in order:
            c = comps[n]
            u = [c.vr[f"P.m[{i}]"] for i in ACC] if c.has_parent else []
            y = [c.vr[f"P.W[{i}]"] for i in range(1, W + 1)] if c.has_parent else []
            for p in c.child_ports:
                u += [c.vr[f"{p}.W[{i}]"] for i in range(1, W + 1)]
                y += [c.vr[f"{p}.m[{i}]"] for i in ACC]
            self._u_vrs.append(u)
            self._y_vrs.append(y)
        self._schedule = self._pre_loop_schedule()
        self._known_slots = [i for i, nd in enumerate(nodes) if any(ch < 0 for ch in nd.children)]
        self._coupled = self._coupled_input_plan()
        self._ready = True

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
                        if out.endswith(tuple(f".m[{k}]" for k in ACC)) or ".W[" in out or any(
                            (cname, out) == (lk[0], lk[1]) for lk in links if lk not in post
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
            progressed = False
            for cname in list(comps):
                ready = []
                for key in sorted(k for k in todo if k[0] == cname):
                    if not any((cname, d) in pending_inputs for d in deps_of(cname, key[1])):
                        ready.append(key)
                if ready:
                    dests = []
                    for k in ready:
                        todo.discard(k)
                        dests.append(targets[k])
                        for t in targets[k]:
                            pending_inputs.discard(t)
                    schedule.append((cname, [k[1] for k in ready], dests))
                    progressed = True
            if not progressed:
                names = sorted(f"{a}.{b}" for a, b in todo)
                raise CosimError(f"algebraic loop among signal connections: {names[:6]}")
        return schedule

    def _transfer(self, links: list[tuple[str, str, str, str]]) -> None:
        """Copy outputs to inputs along ``links`` (after the loop)."""
        comps = self.components
        by_src: dict[str, list[tuple[str, str, str]]] = {}
        for ca, o, cb, i in links:
            by_src.setdefault(ca, []).append((o, cb, i))
        for ca, items in by_src.items():
            vals = comps[ca].slave.getReal([comps[ca].vr[o] for o, _, _ in items])
            self.stats.fmu_calls += 1
            for v, (_, cb, i) in zip(vals, items, strict=True):
                comps[cb].slave.setReal([comps[cb].vr[i]], [v])
                self.stats.fmu_calls += 1

    # -- run ----------------------------------------------------------------------------------

    def initialize(self, start_time: float = 0.0) -> None:
        """Instantiate every FMU, set parameters and held inputs, solve the first point."""
        if not self._ready:
            self._plan()
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
                c.slave.exitInitializationMode()
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
        self._u = [np.array(comps[n].slave.getReal(vrs)) for n, vrs in
                   zip(self.order, self._u_vrs, strict=True)]  # fmt: skip
        self._maps: list[np.ndarray | None] = [None] * len(self.order)
        self._prev_inputs: dict[str, np.ndarray] = {}
        self._u_guess: list[np.ndarray | None] = [None] * len(self.order)
        self._h_prev = 0.0
        self.stats = StepStats()

    def free(self) -> None:
        for c in self.components.values():
            c.free()

    def _resolve_pre_loop(self) -> None:
        comps = self.components
        for cname, outs, dests in self._schedule:
            c = comps[cname]
            vals = c.slave.getReal([c.vr[o] for o in outs])
            self.stats.fmu_calls += 1
            by_comp: dict[str, tuple[list[int], list[float]]] = {}
            for v, ds in zip(vals, dests, strict=True):
                for dc, dn in ds:
                    e = by_comp.setdefault(dc, ([], []))
                    e[0].append(comps[dc].vr[dn])
                    e[1].append(v)
            for dc, (vrs, vs) in by_comp.items():
                comps[dc].slave.setReal(vrs, vs)
                self.stats.fmu_calls += 1

    def _outputs(self, i: int) -> np.ndarray:
        c = self.components[self.order[i]]
        self.stats.fmu_calls += 1
        try:
            return np.array(c.slave.getReal(self._y_vrs[i]))
        except Exception as exc:
            raise CosimError(
                f"component '{c.name}': reading its loop outputs failed: {exc}{c.last_error()}",
                self.t,
            ) from None

    def _set_u(self, i: int, u: np.ndarray) -> None:
        c = self.components[self.order[i]]
        try:
            c.slave.setReal(self._u_vrs[i], u.tolist())
        except Exception as exc:
            raise CosimError(
                f"component '{c.name}': setting its loop inputs (P.m[1..6], Cj.W) to "
                f"{np.array2string(u, precision=3)} failed: {exc}{c.last_error()}", self.t,
            ) from None  # fmt: skip
        self.stats.fmu_calls += 1
        self._u[i] = u

    def _measure(self, i: int) -> np.ndarray:
        """The matrix M of body i by unit perturbations of its loop inputs (affine: exact up to
        rounding), inputs restored afterwards."""
        u0 = self._u[i]
        y0 = self._outputs(i)
        Mi = np.empty((len(y0), len(u0)))
        for k in range(len(u0)):
            u = u0.copy()
            u[k] += 1.0
            self._set_u(i, u)
            Mi[:, k] = self._outputs(i) - y0
        self._set_u(i, u0)
        self.stats.jacobian_updates += 1
        return Mi

    def _known(self) -> list[np.ndarray | None]:
        known = []
        for i, n in enumerate(self.order):
            node = self.nodes[i]
            if any(ch < 0 for ch in node.children):
                c = self.components[n]
                k = np.zeros(W * len(node.children))
                off = 6 if c.has_parent else 0
                k[:] = self._u[i][off:]  # current values of the free / closure wrenches
                known.append(k)
            else:
                known.append(None)
        return known

    def _residual(self, ys: list[np.ndarray]) -> tuple[float, str]:
        """Largest mismatch between a loop input and the output that feeds it, relative to the
        size of the loop variables; with the variable's name."""
        worst, where, scale = 0.0, "", 1.0
        for i in range(len(self.order)):
            scale = max(scale, float(np.max(np.abs(ys[i]))) if len(ys[i]) else 0.0)
        for i, n in enumerate(self.order):
            node = self.nodes[i]
            if node.has_parent:
                p = node.parent
                off_p = 6 if self.nodes[p].has_parent else 0
                s = node.parent_slot
                acc_from_parent = ys[p][off_p + 6 * s : off_p + 6 * s + 6]
                r = np.abs(self._u[i][0:6] - acc_from_parent)
                w_to_parent = ys[i][0:6]
                off_u = 6 if self.nodes[p].has_parent else 0
                r2 = np.abs(self._u[p][off_u + 6 * s : off_u + 6 * s + 6] - w_to_parent)
                for arr, what in ((r, f"{n}.P.m"), (r2, f"{self.order[p]}.W of {n}")):
                    if arr.max() > worst:
                        worst, where = float(arr.max()), what
        return worst / scale, where

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
        for it in range(1, self.gauss_seidel_max_iterations + 1):
            for i in range(count):  # down: each child takes its parent's latest acceleration
                node = self.nodes[i]
                if node.has_parent:
                    p = node.parent
                    yp = self._outputs(p)
                    off = 6 if self.nodes[p].has_parent else 0
                    u = self._u[i].copy()
                    u[0:6] = yp[off + 6 * node.parent_slot : off + 6 * node.parent_slot + 6]
                    self._set_u(i, u)
            for i in reversed(range(count)):  # up: each parent takes its children's wrenches
                node = self.nodes[i]
                if node.has_parent:
                    p = node.parent
                    w = self._outputs(i)[0:6]
                    off = 6 if self.nodes[p].has_parent else 0
                    u = self._u[p].copy()
                    u[off + 6 * node.parent_slot : off + 6 * node.parent_slot + 6] = w
                    self._set_u(p, u)
            ys = [self._outputs(i) for i in range(count)]
            res, where = self._residual(ys)
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
        """Steps 1-2 of the module docstring at the current time."""
        if self.loop == "gauss-seidel":
            count = len(self.order)
            for i in range(count):
                self._u_guess[i] = None
            self._resolve_pre_loop()
            for i in self._known_slots:
                c = self.components[self.order[i]]
                self._u[i] = np.array(c.slave.getReal(self._u_vrs[i]))
            self.last_iterations = self._gauss_seidel(tolerance)
            self.stats.iterations += self.last_iterations
            if self._post_links:
                self._transfer(self._post_links)
            return
        count = len(self.order)
        for i in range(count):  # start from the extrapolated solution (fewer chord iterations)
            if self._u_guess[i] is not None:
                self._set_u(i, self._u_guess[i])
                self._u_guess[i] = None
        self._resolve_pre_loop()
        for i in self._known_slots:  # closure wrenches were just set; free ports keep theirs
            c = self.components[self.order[i]]
            self._u[i] = np.array(c.slave.getReal(self._u_vrs[i]))
        ys = [self._outputs(i) for i in range(count)]
        r0 = self._residual(ys)[0]  # of the first guess
        it = 0
        while True:
            for i in range(count):
                if self._maps[i] is None:
                    self._maps[i] = self._measure(i)
            maps = []
            for i, _n in enumerate(self.order):
                Mi = self._maps[i]
                c = ys[i] - Mi @ self._u[i]
                node = self.nodes[i]
                maps.append(LoopMap.from_dense(Mi, c, node.has_parent, len(node.children)))
            try:
                sol = self.solver.solve(maps, self._known())
            except LoopSolveError as exc:
                raise CosimError(
                    f"singular loop equations at component '{self.order[exc.node]}'", self.t
                ) from None
            it += 1
            u_old = [u.copy() for u in self._u]
            y_old = ys
            for i in range(count):
                self._set_u(i, sol.u(i))
            ys = [self._outputs(i) for i in range(count)]
            # Broyden: at a fixed point in time each FMU is affine, so the secant
            # (u_old, y_old) -> (u, y) is exact; correct M along it (the direction in which the
            # loop inputs move from one step to the next)
            for i in range(count):
                du = self._u[i] - u_old[i]
                nrm = float(du @ du)
                if nrm > 0.0:
                    Mi = self._maps[i]
                    Mi += np.outer(ys[i] - y_old[i] - Mi @ du, du / nrm)
            res, where = self._residual(ys)
            if res <= tolerance:
                break
            if it >= max_iterations or not np.isfinite(res):
                raise CosimError(
                    f"the algebraic loop did not converge: residual {res:.3g} at '{where}' "
                    f"after {it} iterations", self.t,
                )  # fmt: skip
            # the reused Jacobians contracted the residual by res / r0; unless one more chord
            # step is predicted to reach a tenth of the tolerance, measure them again: the next
            # iteration is then exact (the FMUs are affine at a fixed time)
            if it == 1 and 10.0 * res * res > tolerance * max(r0, res):
                self._maps = [None] * count
            r0 = res
        self.stats.iterations += it
        self.last_iterations = it
        if self._post_links:
            self._transfer(self._post_links)

    def _coupled_input_plan(self) -> dict[str, tuple[list[int], np.ndarray]]:
        """Per component: the value references of its inputs that other components feed, and
        which of them are Euler angles (wrapped at ±π)."""
        names: dict[str, set[str]] = {}
        for _, _, cb, i in self._pre_loop_links() + list(self._post_links):
            names.setdefault(cb, set()).add(i)
        for cb, i in self._loop_input_names():
            names.setdefault(cb, set()).add(i)
        plan = {}
        for cb, ns in names.items():
            c = self.components[cb]
            ordered = sorted(ns, key=lambda n: c.vr[n])
            angle = np.array([n.endswith((".m[16]", ".m[17]", ".m[18]")) for n in ordered])
            plan[cb] = ([c.vr[n] for n in ordered], angle)
        return plan

    def _extrapolate_inputs(self, h: float) -> None:
        """Hold each coupled input at its value extrapolated to the middle of the step,
        ``u_n + (u_n - u_{n-1}) / 2``: the integral of a held input over the step is then right
        to O(h³), which makes the coupling second order (README, "Co-simulation")."""
        comps = self.components
        ratio = h / self._h_prev if self._h_prev else 0.0  # u̇ ≈ (u_n - u_{n-1}) / h_{n-1}
        self._h_prev = h
        for cb, (vrs, angle) in self._coupled.items():
            slave = comps[cb].slave
            cur = np.array(slave.getReal(vrs))
            prev = self._prev_inputs.get(cb)
            self._prev_inputs[cb] = cur
            if prev is None:
                continue
            d = cur - prev
            d[angle] = (d[angle] + np.pi) % (2.0 * np.pi) - np.pi
            slave.setReal(vrs, (cur + (0.5 * ratio) * d).tolist())
            self.stats.fmu_calls += 2
        for i, n in enumerate(self.order):
            u_mid = np.array(comps[n].slave.getReal(self._u_vrs[i]))
            # first guess of the next loop solution: the extrapolation over a whole step
            if ratio:
                self._u_guess[i] = 2.0 * u_mid - self._u[i]
            self._u[i] = u_mid

    def do_step(self, h: float) -> None:
        if self.coupling == "extrapolated":
            self._extrapolate_inputs(h)
        for c in self.components.values():
            try:
                c.slave.doStep(self.t, h)
            except Exception as exc:
                raise CosimError(
                    f"fmi2DoStep of component '{c.name}' failed: {exc}{c.last_error()}", self.t
                ) from None
        self.t += h

    def _record_columns(self, record) -> list[tuple[str, str, int]]:
        items = record.items() if isinstance(record, Mapping) else [(r, r) for r in record]
        cols = []
        for col, ref in items:
            c, name = self._split(ref)
            names = self._expand_var(c, name, None, f"record '{ref}'")
            for n in names:
                label = col if len(names) == 1 else f"{col}{n[len(name):]}"
                cols.append((label, c.name, c.vr[n]))
        return cols

    # -- variable step ----------------------------------------------------------------------------

    def _save(self):
        states = {n: c.slave.getFMUstate() for n, c in self.components.items()}
        master = (self.t, [u.copy() for u in self._u], dict(self._prev_inputs),
                  list(self._u_guess), self._h_prev)  # fmt: skip
        return states, master

    def _restore(self, saved) -> None:
        states, master = saved
        for n, c in self.components.items():
            c.slave.setFMUstate(states[n])
        self.t, u, prev, guess, self._h_prev = master
        self._u = [x.copy() for x in u]
        self._prev_inputs = dict(prev)
        self._u_guess = list(guess)

    def _free_saved(self, saved) -> None:
        for n, c in self.components.items():
            c.slave.freeFMUstate(saved[0][n])

    def _error_plan(self) -> list[tuple[str, list[int], np.ndarray]]:
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
            plan.append((n, [c.vr[nm] for nm in names], angle))
        return plan

    def _error_outputs(self) -> list[np.ndarray]:
        return [np.array(self.components[n].slave.getReal(vrs)) for n, vrs, _ in self._err_plan]

    def _error_norm(self, a: list[np.ndarray], b: list[np.ndarray], tol: float) -> float:
        worst = 0.0
        for (_, _, angle), x, y in zip(self._err_plan, a, b, strict=True):
            d = y - x
            d[angle] = (d[angle] + np.pi) % (2.0 * np.pi) - np.pi
            # step doubling: the two half steps are more accurate by 2^p - 1 = 3 (p = 2)
            e = np.abs(d) / 3.0 / (tol + tol * np.maximum(np.abs(x), np.abs(y)))
            worst = max(worst, float(np.max(e)) if len(e) else 0.0)
        return worst

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
            factor = 0.9 * (err if err > 0 else 1e-12) ** (-1.0 / 3.0)
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
    ) -> CosimResult:
        """Co-simulate from ``start_time`` to ``stop_time`` (s).

        Fixed communication step ``step`` by default. With ``step_tolerance`` the step is
        error-controlled (``step`` is then the first step): each step is done once with h and
        again as two steps of h/2 from the same saved FMU states; their difference estimates the
        error of the states (relative and absolute ``step_tolerance``) and sets the next step.
        ``tolerance`` is the relative residual to which the algebraic loop is solved.
        """
        if not (math.isfinite(step) and step > 0):
            raise CosimError(f"the communication step must be positive, got {step}")
        if not (math.isfinite(stop_time) and stop_time > start_time):
            raise CosimError(f"stop time {stop_time} must be after the start time {start_time}")
        if step_tolerance is not None:
            return self._simulate_variable(
                stop_time, step, start_time, record, output_interval, tolerance, step_tolerance,
                max_step, progress,
            )  # fmt: skip
        n_steps = int(round((stop_time - start_time) / step))
        if abs(n_steps * step - (stop_time - start_time)) > 1e-9 * max(1.0, stop_time):
            raise CosimError(f"the step {step} must divide the interval {stop_time - start_time}")
        every = 1 if output_interval is None else max(1, int(round(output_interval / step)))
        if not self._ready:
            self._plan()
        cols = self._record_columns(record)
        result = CosimResult([c for c, _, _ in cols])
        self.initialize(start_time)
        comps = self.components

        def sample():
            row = [comps[cn].slave.getReal([vr])[0] for _, cn, vr in cols]
            result.append(self.t, row)

        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=n_steps, unit="step", desc="cosim")
        try:
            for k in range(n_steps + 1):
                self.solve_loop(tolerance)
                result.iterations.append(self.last_iterations)
                if k % every == 0 or k == n_steps:
                    sample()
                if k == n_steps:
                    break
                self.do_step(step)
                if bar is not None:
                    bar.update()
        except CosimError as exc:
            exc.result = result
            raise
        finally:
            if bar is not None:
                bar.close()
            self.free()
        return result

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
        self._h = step
        self._h_max = max_step if max_step is not None else output_interval
        self.accepted = self.rejected = 0
        comps = self.components
        n_out = int(math.floor(span / output_interval + 1e-9))
        grid = [start_time + k * output_interval for k in range(n_out + 1)]
        if grid[-1] < stop_time - 1e-12 * max(1.0, stop_time):
            grid.append(stop_time)
        bar = None
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=len(grid) - 1, unit="output", desc="cosim")
        try:
            self.solve_loop(tolerance)
            for k, t_out in enumerate(grid):
                if k:
                    self._advance_variable(t_out, step_tolerance, tolerance, 1e-9 * span)
                    if bar is not None:
                        bar.update()
                row = [comps[cn].slave.getReal([vr])[0] for _, cn, vr in cols]
                result.append(self.t, row)
                result.iterations.append(self.last_iterations)
        except CosimError as exc:
            exc.result = result
            raise
        finally:
            if bar is not None:
                bar.close()
            self.free()
        return result
