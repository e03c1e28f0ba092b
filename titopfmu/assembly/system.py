"""Assembly of blocks into a system: connections, checks, and the evaluation plan.

>>> sys = System()
>>> sys.add(RigidBody("base", 1.0, np.eye(3), children={"C": [0, 0, -1]}))
>>> sys.add(RevoluteBody("arm", 1.0, np.zeros((3, 3)), com=[0, 0, -1]), Constant("free", 0.0))
>>> sys.connect("base.C", "arm.P")
>>> sys.connect("free.y", "arm.joint.tau")

Connections join a ``child`` port to a ``parent`` port (motion down, wrench up) or a
``signal_out`` to a ``signal_in`` of the same size. Every input is connected exactly once; the
tree of bodies may only close on itself through :class:`~titopfmu.blocks.LoopClosure` blocks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..blocks.base import Block, Port, TitopError
from ..blocks.bodies import BodyBlock, Ground, JointBody
from ..blocks.closure import LoopClosure
from ..blocks.signals import SignalBlock
from .loop_solver import LoopNode


class AssemblyError(TitopError):
    """The system's wiring is invalid (unconnected or doubly connected port, cycle, kinds...)."""


TREE_TYPES = (BodyBlock, Ground)


def split_port(ref: str) -> tuple[str, str]:
    """``"block.port"`` -> ``("block", "port")``; the port name may itself contain dots."""
    if not isinstance(ref, str) or "." not in ref:
        raise AssemblyError(f"port reference {ref!r} must read 'block.port'")
    b, p = ref.split(".", 1)
    return b, p


class System:
    """A set of blocks and the connections between their ports."""

    def __init__(self, name: str = "system") -> None:
        self.name = name
        self.blocks: dict[str, Block] = {}
        # input endpoint (block, port) -> output endpoint (block, port); for child/parent pairs
        # both directions are inputs, so each pair is stored twice.
        self._source: dict[tuple[str, str], tuple[str, str]] = {}
        self.connections: list[tuple[str, str]] = []

    # -- construction -------------------------------------------------------------------------

    def add(self, *blocks: Block) -> Block:
        """Add blocks; returns the first one (convenient for ``b = sys.add(Block(...))``)."""
        for b in blocks:
            if not isinstance(b, Block):
                raise AssemblyError(f"{b!r} is not a block")
            if b.name in self.blocks:
                raise AssemblyError(f"a block named '{b.name}' is already in the system")
            self.blocks[b.name] = b
        return blocks[0]

    def port(self, ref: str) -> Port:
        b, p = split_port(ref)
        if b not in self.blocks:
            raise AssemblyError(f"no block named '{b}' (in {ref!r}); blocks: {sorted(self.blocks)}")
        ports = self.blocks[b].ports
        if p not in ports:
            raise AssemblyError(f"block '{b}' has no port '{p}'; its ports: {sorted(ports)}")
        return ports[p]

    def connect(self, a: str, b: str) -> None:
        """Connect two ports (order free): child <-> parent, or signal_out -> signal_in."""
        pa, pb = self.port(a), self.port(b)
        ea, eb = split_port(a), split_port(b)
        kinds = {pa.kind, pb.kind}
        if kinds == {"child", "parent"}:
            for e, other in ((ea, eb), (eb, ea)):
                if e in self._source:
                    prev = ".".join(self._source[e])
                    raise AssemblyError(
                        f"port '{'.'.join(e)}' is already connected to '{prev}'; cannot also "
                        f"connect it to '{'.'.join(other)}'"
                    )
            self._source[ea] = eb
            self._source[eb] = ea
        elif kinds == {"signal_out", "signal_in"}:
            src, dst = (ea, eb) if pa.kind == "signal_out" else (eb, ea)
            p_src, p_dst = (pa, pb) if pa.kind == "signal_out" else (pb, pa)
            if p_src.size != p_dst.size:
                raise AssemblyError(
                    f"size mismatch: '{'.'.join(src)}' has {p_src.size} components, "
                    f"'{'.'.join(dst)}' expects {p_dst.size}"
                )
            if dst in self._source:
                raise AssemblyError(
                    f"input '{'.'.join(dst)}' is already connected to "
                    f"'{'.'.join(self._source[dst])}'; cannot also connect '{'.'.join(src)}'"
                )
            self._source[dst] = src
        else:
            raise AssemblyError(
                f"mismatched port kinds: '{a}' is a {pa.kind} port and '{b}' a {pb.kind} port; "
                "connect a child port to a parent port, or a signal output to a signal input"
            )
        self.connections.append((a, b))

    # -- model files (writing: :mod:`titopfmu.assembly.document`; reading: titopfmu.modelfile) --

    def to_dict(self) -> dict:
        """The model-file document of this system (see :func:`titopfmu.modelfile.to_dict`)."""
        from .document import to_dict

        return to_dict(self)

    def save(self, path):
        """Write this system as a model file (YAML, or JSON for ``*.json``); returns the path."""
        from .document import save

        return save(self, path)

    def source(self, ref: str) -> str | None:
        """The port connected to the input ``ref``, as ``"block.port"``, or None."""
        e = self._source.get(split_port(ref))
        return None if e is None else ".".join(e)

    # -- checks and plan ----------------------------------------------------------------------

    def check(self) -> Plan:
        """Validate the wiring and return the evaluation plan (raises :class:`AssemblyError`)."""
        missing = [
            f"{b.name}.{p.name} ({p.kind})"
            for b in self.blocks.values()
            for p in b.ports.values()
            if p.kind in ("parent", "child", "signal_in") and (b.name, p.name) not in self._source
        ]
        if missing:
            raise AssemblyError(
                "unconnected input port(s): " + ", ".join(missing) + " (every input must be "
                "connected exactly once; feed unused joint efforts or wrenches from a Constant)"
            )
        return Plan(self)


@dataclass
class Plan:
    """Evaluation order and loop structure of a checked system."""

    system: System
    tree: list[str] = field(default_factory=list)  # tree blocks, parents first
    nodes: list[LoopNode] = field(default_factory=list)
    pre_loop: list[tuple[str, str]] = field(default_factory=list)  # ("kin"|"sig"|"loop", block)
    state_slices: dict[str, slice] = field(default_factory=dict)

    def __post_init__(self) -> None:
        sysm = self.system
        blocks = sysm.blocks
        src = sysm._source
        # parent of each tree block
        parent: dict[str, tuple[str, str] | None] = {}
        for b in blocks.values():
            if isinstance(b, TREE_TYPES):
                if b.has_parent:
                    pb, pp = src[(b.name, "P")]
                    if not isinstance(blocks[pb], TREE_TYPES):
                        raise AssemblyError(
                            f"the parent port '{b.name}.P' must hang from a body's child port, "
                            f"not from '{pb}.{pp}'"
                        )
                    parent[b.name] = (pb, pp)
                else:
                    parent[b.name] = None
        # each tree block must reach a root: otherwise there is a kinematic cycle (linear time:
        # every block is walked once, memoising the blocks known to reach a root)
        reaches_root: set[str] = set()
        for name in parent:
            path: list[str] = []
            on_path: set[str] = set()
            cur = name
            while cur not in reaches_root and parent[cur] is not None:
                if cur in on_path:
                    cyc = " -> ".join(path[path.index(cur) :] + [cur])
                    raise AssemblyError(
                        f"kinematic cycle without a loop-closure block: {cyc}; cut the loop with "
                        "a LoopClosure block"
                    )
                path.append(cur)
                on_path.add(cur)
                cur = parent[cur][0]
            reaches_root.update(path)
            reaches_root.add(cur)
        # order parents first (depth-first from the roots, children in port order), iteratively
        children_of: dict[str, dict[str, str]] = {n: {} for n in parent}
        for name, par in parent.items():
            if par is not None:
                children_of[par[0]][par[1]] = name
        order: list[str] = []
        stack = [n for n in reversed(list(parent)) if parent[n] is None]
        while stack:
            n = stack.pop()
            order.append(n)
            chs = children_of[n]
            stack.extend(chs[c] for c in reversed(blocks[n].child_names) if c in chs)
        self.tree = order
        index = {n: i for i, n in enumerate(order)}
        for n in order:
            blk = blocks[n]
            chs = []
            for cport in blk.child_names:
                other = src[(n, cport)]
                chs.append(index[other[0]] if other[0] in index else -1)
            par = parent[n]
            self.nodes.append(
                LoopNode(
                    has_parent=par is not None,
                    parent=index[par[0]] if par is not None else -1,
                    parent_slot=blocks[par[0]].child_names.index(par[1]) if par is not None else -1,
                    children=tuple(chs),
                )
            )
        # states
        offset = 0
        for b in blocks.values():
            self.state_slices[b.name] = slice(offset, offset + b.n_states)
            offset += b.n_states
        self.n_states = offset
        self._order_pre_loop(parent)

    def _producer_node(self, consumer: str, ref: tuple[str, str]) -> tuple[str, str]:
        """Pre-loop node that produces the signal ``ref`` consumed by ``consumer``."""
        blocks = self.system.blocks
        b = blocks[ref[0]]
        if isinstance(b, SignalBlock):
            return ("sig", b.name)
        if isinstance(b, JointBody) and not b.inverse and ref[1] == "joint.m":
            return ("kin", b.name)
        raise AssemblyError(
            f"'{consumer}' reads '{ref[0]}.{ref[1]}', which is only known once the algebraic loop "
            "is solved; pre-loop signals may only come from signal blocks and forward joint motions"
        )

    def _order_pre_loop(self, parent) -> None:
        blocks = self.system.blocks
        src = self.system._source
        deps: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for b in blocks.values():
            sig_inputs = [p.name for p in b.ports.values() if p.kind == "signal_in"]
            if isinstance(b, TREE_TYPES):
                node = ("kin", b.name)
                d = []
                if parent[b.name] is not None:
                    d.append(("kin", parent[b.name][0]))
                for p in sig_inputs:
                    producer = self._producer_node(f"{b.name}.{p}", src[(b.name, p)])
                    if p in b.kinematic_inputs and producer[0] == "kin":
                        raise AssemblyError(
                            f"'{b.name}.{p}' imposes a motion with accelerations, but "
                            f"'{src[(b.name, p)][0]}.{src[(b.name, p)][1]}' only knows its "
                            "acceleration once the algebraic loop is solved; feed imposed "
                            "motions from signal blocks (e.g. TimeFunction)"
                        )
                    # efforts and external wrenches are only needed by the loop, which runs after
                    # every pre-loop node; kinematic inputs (imposed motions) order the sweep
                    if p in b.kinematic_inputs:
                        d.append(producer)
                deps[node] = d
            elif isinstance(b, SignalBlock):
                deps[("sig", b.name)] = [
                    self._producer_node(f"{b.name}.{p}", src[(b.name, p)]) for p in sig_inputs
                ]
            elif isinstance(b, LoopClosure):
                deps[("loop", b.name)] = [("kin", src[(b.name, s)][0]) for s in ("left", "right")]
            else:
                raise AssemblyError(f"block '{b.name}' of type {type(b).__name__} is not supported")
        order: list[tuple[str, str]] = []
        state: dict[tuple[str, str], int] = {}  # 1: on the stack, 2: done
        for start in deps:
            if state.get(start):
                continue
            stack = [(start, iter(deps[start]))]
            state[start] = 1
            while stack:
                node, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    stack.pop()
                    state[node] = 2
                    order.append(node)
                elif state.get(nxt) == 1:
                    path = [n for n, _ in stack]
                    cyc = " -> ".join(x[1] for x in path[path.index(nxt) :] + [nxt])
                    raise AssemblyError(f"algebraic loop through signal connections: {cyc}")
                elif not state.get(nxt):
                    state[nxt] = 1
                    stack.append((nxt, iter(deps[nxt])))
        self.pre_loop = order
