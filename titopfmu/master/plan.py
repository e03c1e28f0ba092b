"""The plan of a co-simulation: what is connected, which loop, in what order.

From the components and connections of :mod:`.wiring`, :meth:`Plan._plan` makes, again after
every change of the system:

- the tree: each body's parent (``parent_of``), the sides of the loop closures
  (``closure_side``), the bodies in tree order (``order``) and the nodes of the
  :class:`~titopfmu.assembly.loop_solver.TreeLoopSolver` (``nodes``, ``solver``);
- the loop's variables, per body ``u = [P.m[1..6] ; Cj.W]`` in and ``y = [P.W ; Cj.m[1..6]]``
  out, their flat layout and the pairs the loop's residual compares (:meth:`Plan._residual_plan`);
- the order of the values that do not depend on the loop (:meth:`Plan._pre_loop_schedule`, from
  the FMUs' ``ModelStructure``), and the links carried after the loop (``_post_links``);
- the program of FMU calls of one communication point (:meth:`Plan._build_program`), lists of
  names that :mod:`.binding` binds to channels.

FMU calls: the master keeps the value of every input it writes and sends all writes to a
component since its last read in one ``fmi2SetReal`` just before the next ``fmi2GetReal``; each
read takes every output needed at that point (see :meth:`Plan._build_program`); the calls go
straight to the FMUs' functions (:class:`~.components.RealChannel`). For the balloon (7 FMUs)
that is about 47 calls per step: 7 ``fmi2DoStep`` and 7 ``fmi2SetReal`` of the held inputs, 7
of their derivatives, 14 for the pre-loop values, 8 per iteration, 3 for values passed after
the loop.

:meth:`Plan.check_inputs` refuses unconnected inputs before any FMU is instantiated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..assembly.loop_solver import LoopNode, TreeLoopSolver
from .components import CosimError, M, W, describe
from .wiring import Wiring

ACC = range(1, 7)  # loop part of a motion vector (1-based)
PRE = range(7, M + 1)  # twist, position, Euler angles


def unit_groups(names: list[str]) -> np.ndarray:
    """A group number for each variable name, the same for the variables of one unit at one
    port: ``X.m[1..3]`` (a linear acceleration), ``X.m[4..6]`` (an angular one), and so on by
    threes through a motion vector (velocities, position, angles), ``X.W[1..3]`` (a force),
    ``X.W[4..6]`` (a torque); any other variable (a joint's effort) is a group of its own."""
    keys: dict[tuple[str, int], int] = {}
    out = []
    for k, n in enumerate(names):
        base, _, tail = n.rpartition("[")
        key = (n, k)
        if base.endswith((".m", ".W")) and tail.endswith("]") and tail[:-1].isdigit():
            key = (base, (int(tail[:-1]) - 1) // 3)
        out.append(keys.setdefault(key, len(keys)))
    return np.array(out, dtype=int)


def loop_units(names: list[str]) -> np.ndarray:
    """The unit of each loop input, by its name: 0 a linear acceleration (``X.m[1..3]``), 1 an
    angular one (``X.m[4..6]``), 2 a force (``X.W[1..3]``), 3 a torque (``X.W[4..6]``); any
    other variable a unit of its own (4, 5, ...). The loop equations of one unit are judged
    against the largest of them in the whole model (:func:`.loop.scales`)."""
    out = []
    for n in names:
        base, _, tail = n.rpartition("[")
        if base.endswith((".m", ".W")) and tail.endswith("]") and tail[:-1].isdigit():
            k = (int(tail[:-1]) - 1) // 3
            if k < 2:
                out.append(k + (2 if base.endswith(".W") else 0))
                continue
        out.append(4 + len(out))
    return np.array(out, dtype=int)


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


class Plan(Wiring):
    """The tree, the loop's variables and the program of a communication point, made from the
    connections (:meth:`_plan`; ``_ready`` says it is up to date)."""

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
        u_flat = [x for u in self._u_names for x in u]
        #: the unit of each loop equation (:func:`loop_units`: its input's)
        self._res_unit = loop_units([u_flat[k] for k in res_u])
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
