"""A tree of built-in blocks as a C core model (:mod:`titopfmu.core._titop`, ``csrc/titop.h``).

:class:`NativeTree` reads the parameters of the blocks (mass, inertia, centre of mass, ports,
joint axes, DCMs and rotor inertias (armature), gravity, external-wrench points, loop closures,
joint spring-damper laws) into the flat arrays the core takes, once; every evaluation is then
one call into C: the kinematics, biases, loop closures, the articulated-inertia sweep of the
algebraic loop and the state derivative. Exact first derivatives of the state derivative come
from the core compiled a second time on complex numbers (complex step).

Inputs the caller passes at each evaluation, in :attr:`NativeTree.inputs` order then
:attr:`NativeTree.externals` order: a forward joint's effort ``joint.tau`` (k), an inverse
joint's imposed motion ``joint.m`` = [u̇, u, p] (3k), an imposed-motion body's motion vector
``m`` (18), and each external wrench (6).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from . import _titop

if TYPE_CHECKING:  # annotations only: the core is below the spatial helpers, which call it
    from ..spatial.algebra import FloatArray

# the core's body kinds (titop.h, enum titop_kind), as the block declarations state them
# (titopfmu.blocks.declarations): this module reads blocks by their attributes and their
# type's declaration only, and imports no block class
RIGID, GROUND, IMPOSED, WELD, REVOLUTE, PRISMATIC, SPHERICAL, FREE = range(8)
NO_PARENT, PARENT_INPUT = -1, -2
#: the complex step h of :meth:`NativeTree.zevaluate` and :meth:`NativeTree.directional`
COMPLEX_STEP = 1e-100
SINGULAR, NONFINITE, UNSETTLED = _titop.SINGULAR, _titop.NONFINITE, _titop.UNSETTLED


def _declared(cls: type):
    """The declaration a class itself states (not one it inherits), or None."""
    return cls.__dict__.get("declaration")


def core_kind(block) -> int:
    """The core's body kind of a built-in block or of a subclass of one (its nearest built-in
    base class); a TypeError for any other block."""
    for cls in type(block).__mro__:
        d = _declared(cls)
        if d is not None and d.core_kind is not None:
            return d.core_kind
    raise TypeError(f"block '{block.name}' ({type(block).__name__}) is not a body block")


def builtin_kind(cls: type) -> int | None:
    """The core's body kind of a built-in body class (exactly; None for a subclass of one, a
    user's own block, or a block that is not a body)."""
    d = _declared(cls)
    return None if d is None else d.core_kind


#: a joint law's values in the order of the core's flat row (titop.h, titop_law_from_row)
LAW_ROW = ("k", "d", "q_ref", "friction", "friction_velocity", "limited", "lower", "upper",
           "k_stop", "d_stop")  # fmt: skip
assert len(LAW_ROW) == _titop.LAW_DOUBLES


def law_row(law) -> FloatArray:
    """The core's row of a joint law block (a JointSpringDamper: its attributes by
    :data:`LAW_ROW`; ``limited`` as 1.0 or 0.0)."""
    return np.array([float(getattr(law, n)) for n in LAW_ROW])


def check_law(row) -> tuple[str, str] | None:
    """The core's check of a joint law's row (``titop_check_law``): None, or (the parameter out
    of range, what it must be)."""
    return _titop.check_law(np.ascontiguousarray(row, dtype=float))


def joint_law(row, m) -> float:
    """The joint law's effort (the core's ``titop_spring_damper_block``) of a row at the joint
    motion ``m`` = [q̈, q̇, q]."""
    tau = np.zeros(1)
    _titop.joint_law(np.ascontiguousarray(row, dtype=float),
                     np.ascontiguousarray(m, dtype=float), tau)  # fmt: skip
    return float(tau[0])


def unsupported(blocks, closures=()) -> str | None:
    """Why the tree of ``blocks`` with the loop closures ``closures`` cannot run in the core, or
    None if it can: a block type the core does not know, such as a user's subclass (it may
    change any equation; the engine then runs its object path)."""
    for b in blocks:
        if builtin_kind(type(b)) is None:
            return f"block '{b.name}' ({type(b).__name__}) is not a built-in block"
    for c in closures:
        if getattr(_declared(type(c)), "family", None) != "closure":
            return f"block '{c.name}' ({type(c).__name__}) is not a built-in block"
    return None


#: the core's geometric-stiffness load cases (titop.h, enum titop_flex_case), codes 0 to 11; a
#: node's wrench component ``node<j>.<c>`` (j a finite-element node of interest, the reduced
#: model's node k >= 1) is :data:`FLEX_NODE` + 6 (k - 1) + the index of c in
#: ``NODE_LOAD_COMPONENTS``; any other case -1 (its load value zero)
FLEX_CASES = ("ax", "ay", "az", "alx", "aly", "alz", "wxx", "wyy", "wzz", "wxy", "wyz", "wxz")
FLEX_NODE = _titop.FLEX_NODE  # titop.h's TITOP_FLEX_NODE


def flex_case_code(case: str, node_ids) -> int:
    """The core's code of the load case ``case`` of a reduced model whose nodes of interest are
    ``node_ids`` (root first): see :data:`FLEX_CASES`."""
    from ..flex.fe import NODE_LOAD_COMPONENTS

    if case in FLEX_CASES:
        return FLEX_CASES.index(case)
    head, _, comp = case.partition(".")
    if head.startswith("node") and head[4:].isdigit() and comp in NODE_LOAD_COMPONENTS:
        j = int(head[4:])
        ids = [int(v) for v in node_ids]
        if j in ids[1:]:
            return FLEX_NODE + 6 * (ids.index(j) - 1) + NODE_LOAD_COMPONENTS.index(comp)
    return -1


def flex_ints(body: int, red, x0: int) -> list[int]:
    """A flexible part's ints for the core (titop_flex): body, n, first state, number of load
    cases, number of nodes (root first), the code of each case (:func:`flex_case_code`)."""
    codes = [flex_case_code(c, getattr(red, "node_ids", ())) for c in red.load_cases]
    k = len(np.asarray(red.node_positions, dtype=float).reshape(-1, 3))
    return [body, red.n_modes, x0, len(codes), k, *codes]


def flex_row(red) -> FloatArray:
    """A reduced model's arrays (docs/flexible.md §7) as the core's flat row
    (``titop_flex_doubles``: mass, first_moment, inertia, Ct, Cr, Mee, Kee, De, J1, J2, Cr1,
    KG, node_positions (k x 3, m, R_a), node_shapes (k x 6 x n))."""
    parts = [red.mass, red.first_moment, red.inertia, red.Ct, red.Cr, red.Mee, red.Kee,
             red.damping(), red.J1(), red.J2(), red.Cr1(), red.KG, red.node_positions,
             red.node_shapes]  # fmt: skip
    return np.concatenate([np.asarray(a, dtype=float).reshape(-1) for a in parts])


def flex_port_fault(points, red) -> tuple[int, str] | None:
    """Where a flexible body's child ports ``points`` (R_a, m) break the rule that child port
    k sits at its reduced model's node k + 1 (node 0 is the root P; ``red.node_positions``):
    (the port's index, what is wrong), or None. The one check of the rule in Python (the
    core's ``titop_check_flex`` holds it too); the callers name the block and the port."""
    nodes = np.asarray(red.node_positions, dtype=float).reshape(-1, 3)
    for k, pc in enumerate(points):
        if k + 1 >= len(nodes):
            return k, (f"child port {k + 1} of a flexible body needs node {k + 1} of its reduced "
                       f"model (the root P is node 0), which has {len(nodes) - 1} node(s) "
                       "besides the root: keep the port's node when reducing (child_nodes)")
        r = nodes[k + 1]
        if not np.allclose(pc, r, rtol=0.0, atol=1e-9 * max(1.0, float(np.max(np.abs(r))))):
            return k, (f"at {[float(v) for v in pc]} m, not at node {k + 1} of the reduced "
                       f"model (finite-element node {red.node_ids[k + 1]}, at "
                       f"{[float(v) for v in r]} m): a flexible body's child port k sits at its "
                       "model's node k")  # fmt: skip
    return None


def flex_external_node(point, red) -> int:
    """The node k >= 1 of the reduced model ``red`` at ``point`` (R_a, m) within 1e-9 of the
    body's size (its largest node coordinate, at least 1 m), or 0: where the core applies a
    flexible body's external wrench (at node k, in its frame N_k for ``frame: body``; 0: on the
    floating frame). The core decides (titop_ext.node, set by titop_model_init); this mirrors
    its rule for the block's port descriptions (docs/flexible.md §6)."""
    nodes = np.asarray(red.node_positions, dtype=float).reshape(-1, 3)
    size = max(1.0, float(np.max(np.abs(nodes))))
    p = np.asarray(point, dtype=float)
    for k in range(1, len(nodes)):
        if np.max(np.abs(p - nodes[k])) <= 1e-9 * size:
            return k
    return 0


def check_flex_ports(block, red) -> None:
    """:func:`flex_port_fault` as a one-line ValueError naming the block and the port."""
    fault = flex_port_fault(list(block.child_points), red)
    if fault is not None:
        k, why = fault
        raise ValueError(f"block '{block.name}', child port '{block.child_names[k]}': {why}")


class NativeTree:
    """A tree of built-in blocks as one core model (immutable; the Model, cf. Pinocchio).

    ``blocks`` in tree order (parents first); ``parents[i]`` = (parent index, child slot) or
    None; ``state_offsets[i]`` = first state of block i; ``closures`` = [(LoopClosure, (body,
    slot), (body, slot))]; ``laws`` = [(JointSpringDamper, source body, destination body)]: the
    effort of the destination (a forward 1-dof joint) is then the law of the source's motion,
    evaluated in the core, and is not an input; ``mimics`` = [(JointMimic, follower, leader)]:
    the follower's coordinate is tied to the leader's (``titop_mimic``), its effort is the
    constraint's and not an input; ``n_states`` the length of the state vector
    (default: up to the last state of the blocks).

    ``lone=True`` (one block, see :meth:`lone_block`): the block on its own, as an FMU computes
    it: its parent port's motion vector (18, parent frame) and the wrenches at its child ports
    (6 each, its frame) are inputs too, after the others (:attr:`parent_input`,
    :attr:`port_inputs`).

    ``boundary_parent`` / ``boundary_ports``: the same for a subsystem (a whole-model FMU cut
    out of a larger model at TITOP ports): the root, block 0, hangs from a parent port whose
    motion vector is an input (:attr:`parent_input`), and the child ports ``(body, slot)``
    listed, where the rest of the model hangs, take their wrenches as inputs
    (:attr:`port_inputs`, in that order).
    """

    def __init__(
        self,
        blocks: Sequence,
        parents: Sequence[tuple[int, int] | None],
        state_offsets: Sequence[int],
        closures: Sequence = (),
        laws: Sequence = (),
        n_states: int | None = None,
        lone: bool = False,
        boundary_parent: bool = False,
        boundary_ports: Sequence[tuple[int, int]] = (),
        mimics: Sequence = (),
        flex: Sequence = (),
    ) -> None:
        self.blocks = list(blocks)
        law_dst = {dst for _, _, dst in laws} | {f for _, f, _ in mimics}
        n = len(blocks)
        bi = np.zeros((n, 11), dtype=np.intc)
        bd = np.zeros((n, 46))
        port_i, port_d, ext_i, ext_d = [], [], [], []
        port0 = []
        #: (block index, port, width, offset) of the inputs the caller passes
        self.inputs: list[tuple[int, str, int, int]] = []
        #: (block index, external wrench name, offset)
        self.externals: list[tuple[int, str, int]] = []
        nin = 0
        children = [[-1] * b.n_children for b in blocks]
        for i, ps in enumerate(parents):
            if ps is not None:
                children[ps[0]][ps[1]] = i
        for i, b in enumerate(blocks):
            kind = core_kind(b)
            inverse = int(getattr(b, "inverse", False))
            dof = getattr(getattr(b, "joint", None), "dof", 0)
            ps = parents[i]
            in0 = -1
            if kind == IMPOSED:
                self.inputs.append((i, "m", 18, nin))
                in0, nin = nin, nin + 18
            elif dof and inverse:
                self.inputs.append((i, "joint.m", 3 * dof, nin))
                in0, nin = nin, nin + 3 * dof
            elif dof and i not in law_dst:
                self.inputs.append((i, "joint.tau", dof, nin))
                in0, nin = nin, nin + dof
            port0.append(len(port_i))
            for j, pc in enumerate(b.child_points):
                port_i.append((children[i][j], -1))
                port_d.append(pc)
            ext0 = len(ext_i)
            for ename, inertial, point in getattr(b, "_externals", ()):
                self.externals.append((i, ename, nin))
                ext_i.append((int(inertial), nin))
                ext_d.append(point)
                nin += 6
            bi[i] = (kind, inverse, ps[0] if ps else NO_PARENT, ps[1] if ps else 0, port0[i],
                     b.n_children, ext0, len(ext_i) - ext0, state_offsets[i], in0, -1)  # fmt: skip
            if kind == GROUND:
                bd[i, 19:28] = b.R.reshape(9)
                bd[i, 28:31] = b.position
                continue
            bd[i, 0] = b.mass
            bd[i, 1:4] = b.com
            bd[i, 4:13] = b.inertia.reshape(9)
            bd[i, 13:16] = b.gravity
            joint = getattr(b, "joint", None)
            if joint is not None:
                bd[i, 16:19] = getattr(joint, "axis", (0.0, 0.0, 0.0))
                R0 = joint.R_ab if kind in (WELD, PRISMATIC) else joint.R_a0b
                bd[i, 19:28] = R0.reshape(9)
                if dof:  # rotor inertia per joint speed (titop_body.armature), zero by default
                    bd[i, 31 : 31 + dof] = np.broadcast_to(getattr(b, "armature", 0.0), (dof,))
            # ball, free, free-flying root: -d u (titop_body.damping), -k θ and, free and root,
            # -k (r - r_ref) (titop_body.stiffness, spring_ref, spring_pos)
            bd[i, 37] = getattr(b, "damping", 0.0)
            bd[i, 38] = getattr(b, "stiffness", 0.0)
            bd[i, 39:43] = getattr(b, "spring_ref", (1.0, 0.0, 0.0, 0.0))
            bd[i, 43:46] = getattr(b, "spring_position", (0.0, 0.0, 0.0))
        #: offset of the parent motion vector input (or None) and of each boundary port wrench
        self.parent_input: int | None = None
        self.port_inputs: list[int] = []
        if lone:
            if n != 1 or closures or laws or mimics or flex:
                raise ValueError("a lone block model has one block, no closure, no law and no "
                                 "flexible part but the block's own")
            boundary_parent = blocks[0].has_parent
            boundary_ports = [(0, j) for j in range(blocks[0].n_children)]
        if boundary_parent:
            if parents[0] is not None or not blocks[0].has_parent:
                raise ValueError("a boundary parent port is the parent port of block 0, a root")
            self.parent_input = nin
            bi[0, 2], bi[0, 10] = PARENT_INPUT, nin
            nin += 18
        for i, j in boundary_ports:
            if children[i][j] != -1:
                raise ValueError(f"child port {j} of block {i} has a child: not a boundary")
            port_i[port0[i] + j] = (-1, nin)
            self.port_inputs.append(nin)
            nin += 6
        self.nin = nin
        clo_i = [(port0[left[0]] + left[1], port0[right[0]] + right[1])
                 for _, left, right in closures]  # fmt: skip
        clo_d = [np.concatenate([c.K.reshape(36), c.D.reshape(36)]) for c, _, _ in closures]
        law_i = [(src, dst) for _, src, dst in laws]
        law_d = [law_row(law) for law, _, _ in laws]
        mimic_i = [(f, lead) for _, f, lead in mimics]
        mimic_d = [(float(mm.multiplier), float(mm.offset)) for mm, _, _ in mimics]
        #: the mimic joints (JointMimic, follower index, leader index), in the core's order
        self.mimics = list(mimics)
        self.n_states = int(
            n_states
            if n_states is not None
            else max([0] + [state_offsets[i] + b.n_states for i, b in enumerate(blocks)])
        )

        def ints(rows, w):
            return np.ascontiguousarray(np.array(rows, dtype=np.intc).reshape(-1, w))

        def dbls(rows, w):
            return np.ascontiguousarray(np.array(rows, dtype=float).reshape(-1, w))

        #: the model's structure as the core takes it (titop.h): per body (kind, inverse, parent,
        #: slot, port0, nports, ext0, next, x0, in0, pm0); per port (child, w0); per external
        #: wrench (inertial, w0); per closure (left, right port); per law (source, destination)
        self.structure = {"bodies": bi.copy(), "ports": ints(port_i, 2), "exts": ints(ext_i, 2),
                          "closures": ints(clo_i, 2), "laws": ints(law_i, 2),
                          "mimics": ints(mimic_i, 2)}  # fmt: skip
        #: the flexible parts (body index, reduced model, first state), in the core's order:
        #: those given, then each block's own (its ``flexible``, whose elastic coordinates and
        #: rates are the block's last 2 n states)
        self.flex = [(int(i), red, int(x0)) for i, red, x0 in flex]
        for i, b in enumerate(self.blocks):
            red = getattr(b, "flexible", None)
            if red is not None:
                self.flex.append((i, red, int(state_offsets[i]) + b.n_states - 2 * red.n_modes))
        for i, red, _ in self.flex:  # child port k at node k + 1 (titop_flex, docs §6)
            check_flex_ports(blocks[i], red)
        flex_i = np.array([v for i, red, x0 in self.flex for v in flex_ints(i, red, x0)],
                          dtype=np.intc)  # fmt: skip
        flex_d = np.ascontiguousarray(
            np.concatenate([flex_row(red) for _, red, _ in self.flex] or [np.zeros(0)]))
        if self.flex:
            self.n_states = max(self.n_states,
                                max(x0 + 2 * red.n_modes for _, red, x0 in self.flex))  # fmt: skip
        try:
            self.model = _titop.Model(
                bi, bd, ints(port_i, 2), dbls(port_d, 3), ints(ext_i, 2), dbls(ext_d, 3),
                ints(clo_i, 2), dbls(clo_d, 72), ints(law_i, 2), dbls(law_d, len(LAW_ROW)),
                self.n_states, nin, ints(mimic_i, 2), dbls(mimic_d, 2), flex_i, flex_d,
            )  # fmt: skip
        except ValueError as exc:  # a model the core refuses: a bug of this adapter
            args = exc.args[0] if exc.args and isinstance(exc.args[0], tuple) else exc.args
            msg, body = (args[0], args[1]) if len(args) == 2 else (exc, -1)
            where = f" (block '{blocks[body].name}')" if 0 <= body < n else ""
            if isinstance(msg, str) and msg.startswith(("flexible part", "a flexible body")):
                # a reduced model the core's checks refuse (titop_check_flex): the user's input,
                # worded as titopfmu.flex.checks words it ("body 'B', matrix 'Mee': ...")
                name = blocks[body].name if 0 <= body < n else "?"
                rest = msg.removeprefix("flexible part, ")
                raise ValueError(f"body '{name}', {rest}") from None
            raise RuntimeError(f"the core refused the model{where}: {msg}") from None
        self.model_closures = len(clo_i)
        self.layout = self.model.layout()
        self.data_size = self.model.data_size

    @classmethod
    def lone_block(cls, block) -> NativeTree:
        """The model of one built-in block on its own (``lone=True``); its states, if any, start
        at 0."""
        return cls([block], [None], [0], lone=True)

    def project(self, x: FloatArray) -> FloatArray:
        """``x`` (a new array) made consistent with the mimic joints: each follower's q and q̇
        set from its leader's (the core's ``titop_mimic_project``); ``x`` itself without any."""
        if not self.mimics:
            return x
        x = np.array(x, dtype=float)
        self.model.mimic_project(x)
        return x

    def new_data(self) -> FloatArray:
        """A work buffer for :meth:`derivative` (the run-time Data; one per concurrent user)."""
        return np.zeros(self.data_size)

    def new_zwork(self) -> FloatArray:
        """A work buffer for :meth:`jacobian` (complex step)."""
        return np.zeros(self.model.zwork_size)

    def derivative(self, t: float, x: FloatArray, inputs: FloatArray, dx: FloatArray | None,
                   data: FloatArray, full: bool = False):  # fmt: skip
        """One evaluation (dx/dt into ``dx`` unless None; every wrench too with ``full``).
        Returns 0, or ``(status, body index)`` (SINGULAR, NONFINITE, or UNSETTLED: a flexible
        body's geometric-stiffness load values did not settle, titop.h)."""
        return self.model.eval(data, t, x, inputs, full, dx)

    def jacobian(self, t: float, x: FloatArray, inputs: FloatArray, zwork: FloatArray | None = None
                 ) -> tuple[FloatArray, FloatArray]:  # fmt: skip
        """Exact ``(∂dx/∂x, ∂dx/∂inputs)`` at (t, x, inputs), by complex step."""
        n = self.n_states
        jx = np.empty((n, n))
        jin = np.empty((n, self.nin))
        r = self.model.jacobian(self.new_zwork() if zwork is None else zwork, t, x, inputs, jx,
                                jin)  # fmt: skip
        if r:
            raise ArithmeticError(f"core status {r[0]} at block {r[1]}")
        return jx, jin

    def directional(self, t: float, x: FloatArray, inputs: FloatArray, vx: FloatArray | None,
                    vin: FloatArray | None) -> tuple[FloatArray, FloatArray]:  # fmt: skip
        """Directional derivatives of a full evaluation along (vx, vin), exact to rounding
        (complex step): ``(d data, d dx)``, ``d data`` laid out as a data buffer (read it with
        :meth:`body_values` and :meth:`port_wrenches`)."""
        h = COMPLEX_STEP
        zx = np.asarray(x, dtype=complex) + (0 if vx is None else 1j * h * np.asarray(vx))
        zi = np.asarray(inputs, dtype=complex) + (0 if vin is None else 1j * h * np.asarray(vin))
        zd = np.zeros(self.data_size, dtype=complex)
        zdx = np.zeros(self.n_states, dtype=complex)
        r = self.model.zeval(zd, t, np.ascontiguousarray(zx), np.ascontiguousarray(zi), True, zdx)
        if r:
            raise ArithmeticError(f"core status {r[0]} at block {r[1]}")
        return zd.imag / h, zdx.imag / h

    def zevaluate(self, t: float, x: FloatArray, inputs: FloatArray, vx: FloatArray | None,
                  vin: FloatArray | None) -> tuple[FloatArray, FloatArray]:  # fmt: skip
        """A full evaluation on complex values at ``x + i h vx``, ``inputs + i h vin`` (h =
        :data:`COMPLEX_STEP`): ``(zdata, zx)``, for :meth:`reader` s (the imaginary part of a
        value over h is its directional derivative, exact to rounding)."""
        h = COMPLEX_STEP
        zx = np.asarray(x, dtype=complex) + (0 if vx is None else 1j * h * np.asarray(vx))
        zi = np.asarray(inputs, dtype=complex) + (0 if vin is None else 1j * h * np.asarray(vin))
        zd = np.zeros(self.data_size, dtype=complex)
        zx = np.ascontiguousarray(zx)
        r = self.model.zeval(zd, t, zx, np.ascontiguousarray(zi), True,
                             np.zeros(self.n_states, dtype=complex))  # fmt: skip
        if r:
            raise ArithmeticError(f"core status {r[0]} at block {r[1]}")
        return zd, zx

    def reader(self, i: int, signal: str, state: int | None = None):
        """``value(data, x)`` of the signal ``signal`` of body ``i`` (``position``, ``euler``,
        ``twist``, ``acc``, a forward joint's ``joint.m``, an inverse joint's ``joint.tau``, a
        fixed or imposed-motion body's ``W``; or, with ``state``, the state of that index) read
        from a full evaluation's buffer ``data`` at the state ``x``, or None if the core does
        not compute it. ``data`` and ``x`` are float arrays, or complex ones
        (:meth:`zevaluate`): the one mapping from signals to the core's values of the engine's
        output sampling and of the linear models' exact outputs."""
        if state is not None:
            return lambda data, x: x[state : state + 1]
        b, m = self.blocks[i], self.model
        kind = core_kind(b)
        k = getattr(getattr(b, "joint", None), "dof", 0)
        inverse = getattr(b, "inverse", False)

        def fld(data, f: str, w: int):
            o = i * self.layout["body_stride"] + self.layout[f]
            return data[o : o + w]

        def motion(fn, zfn, width: int, part: slice):
            def value(data, x):
                out = np.empty(width, dtype=data.dtype)
                (zfn if data.dtype == complex else fn)(data, i, out)
                return out[part]

            return value

        if signal == "position":  # [IP]_{R_i} = P_{a/i} [IP]_{R_a}
            return lambda data, x: fld(data, "R", 9).reshape(3, 3) @ fld(data, "ip", 3)
        if signal == "euler":
            return motion(m.body_motion, m.zbody_motion, 18, slice(15, 18))
        fields = {"twist": ("tw", 6), "acc": ("acc", 6)}
        if k and signal == "joint.m" and not inverse:
            return motion(m.joint_motion, m.zjoint_motion, 3 * k, slice(0, 3 * k))
        if k and signal == "joint.tau" and inverse:
            fields["joint.tau"] = ("effort", k)
        if kind in (GROUND, IMPOSED) and signal == "W":
            fields["W"] = ("out", 6)
        if signal in fields:
            f, w = fields[signal]
            return lambda data, x: fld(data, f, w).copy()
        return None

    # -- views into a data buffer ------------------------------------------------------------

    def body_values(self, data: FloatArray, field: str, width: int) -> FloatArray:
        """The ``field`` (a key of :attr:`layout`) of every body, (n, width), a view."""
        L = self.layout
        n = len(self.blocks)
        rec = data[: n * L["body_stride"]].reshape(n, L["body_stride"])
        return rec[:, L[field] : L[field] + width]

    def port_wrenches(self, data: FloatArray) -> FloatArray:
        """The wrench applied on each body at each of its child ports (ports in body order,
        6 each, the body's frame), after a ``full`` evaluation; a view."""
        L = self.layout
        o = L["ports"]
        np_ = len(self.structure["ports"])  # (mimic joints' records follow the ports)
        rec = data[o : o + np_ * L["port_stride"]].reshape(np_, L["port_stride"])
        return rec[:, L["port_w"] : L["port_w"] + 6]


#: the fields of :meth:`LoneBlock.loop_map`'s buffer (``titop_block_map``, titop.h), in order:
#: name and shape, with ka internal accelerations, ne extra outputs and n child ports
_MAP_FIELDS = ("J", "F", "f0", "PP", "cP", "CP", "cC", "U", "XP", "XC", "xc", "XA")


class LoneBlock:
    """One built-in block on its own in the core (a :meth:`NativeTree.lone_block` model): what
    the object path of the block classes (:mod:`titopfmu.blocks.bodies`) calls for its
    equations, one step at a time (``titop_block_*`` in titop.h). No formula here: it moves
    port values to and from the core's buffers.

    A block's signal inputs are gathered into the model's input vector (:meth:`inputs`); its
    parent port's pose comes as ``[x' (6), IP (3), P_{b/i} (9)]`` (:func:`packed`), and each
    call works on the data buffer of one evaluation (``kin.data``).
    """

    def __init__(self, block) -> None:
        nt = NativeTree.lone_block(block)
        self.model = nt.model
        self.kind = core_kind(block)
        self.data_size = nt.data_size
        self.nin = nt.nin
        self.n_ports = n = block.n_children
        L = nt.layout
        self.fields = {f: L[f] for f in ("R", "ip", "tw", "acc", "alpha", "effort",
                                         "wrench_parent", "out", "h", "E")}  # fmt: skip
        self.slots = [(p, off, w) for _, p, w, off in nt.inputs]
        self.slots += [(e, off, 6) for _, e, off in nt.externals]
        kinematic = set(getattr(block, "kinematic_inputs", ()))
        self.kin_slots = [s for s in self.slots if s[0] in kinematic]
        self.imposed = [off for p, off, _ in self.slots if p == "m" and self.kind == IMPOSED]
        ka, ne, size = self.model.map_size(0)
        self.ka, self.ne, self.map_size = ka, ne, size
        q = 6 * n
        shapes = {"J": (ka, ka), "F": (ka, 6), "f0": (ka,), "PP": (6, 6), "cP": (6,),
                  "CP": (q, 6), "cC": (q,), "U": (q, ka), "XP": (ne, 6), "XC": (ne, q),
                  "xc": (ne,), "XA": (ne, ka)}  # fmt: skip
        self.map_fields = {}
        off = 0
        for f in _MAP_FIELDS:
            w = int(np.prod(shapes[f]))
            self.map_fields[f] = (off, off + w, shapes[f])
            off += w
        if off != size:
            raise RuntimeError(f"loop map layout: {off} values, the core writes {size}")
        self.scratch = np.zeros(self.data_size)  # for calls without an evaluation's buffer

    def inputs(self, signals, slots=None, out: FloatArray | None = None) -> FloatArray:
        """The model's input vector (``out``, else a new one, zeros where no signal is given)
        with the ``signals`` (port -> value) of ``slots`` (default: every signal input)."""
        inp = np.zeros(self.nin) if out is None else out
        for port, off, w in self.slots if slots is None else slots:
            v = signals.get(port)
            if v is not None:
                inp[off : off + w] = v
        return inp

    def field(self, data: FloatArray, name: str, width: int) -> FloatArray:
        """A view of the field ``name`` (a key of :attr:`fields`) of the body in ``data``."""
        o = self.fields[name]
        return data[o : o + width]

    def map_values(self, out: FloatArray) -> dict[str, FloatArray]:
        """The fields of a loop map buffer, as views with their shapes."""
        return {f: out[a:b].reshape(shape) for f, (a, b, shape) in self.map_fields.items()}


def packed(port) -> FloatArray:
    """``[x' (6), IP (3), P (9, row-major)]`` of a port's kinematics (an object with
    ``twist``, ``ip``, ``R`` and possibly ``packed``), as the core takes a parent port."""
    p = getattr(port, "packed", None)
    if p is not None:
        return p
    return np.concatenate((np.asarray(port.twist, dtype=float).reshape(6),
                           np.asarray(port.ip, dtype=float).reshape(3),
                           np.asarray(port.R, dtype=float).reshape(9)))  # fmt: skip
