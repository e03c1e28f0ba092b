"""Exact solution of the TITOP algebraic loop on a forest of affine blocks, in linear time.

Seed 004 closes the equations of motion through algebraic loops: a parent's acceleration depends
on its children's wrenches, which depend on that acceleration. At a fixed instant every block is
affine in its loop unknowns (see :mod:`titopfmu.blocks.bodies`). With

    u = [ẋ'_P (6, if the block has a parent) ; W_C = [W_C1 ; ... ; W_Cn]]
    y = [W_P (6, if parent) ; ẋ'_C = [ẋ'_C1 ; ... ; ẋ'_Cn] ; extra outputs]

a block is the :class:`LoopMap`

    W_P   = PP ẋ'_P + PC W_C + cP
    ẋ'_C  = CP ẋ'_P + CC W_C + cC        (CC = U V when it has low rank, e.g. a 1-dof joint)
    extra = XP ẋ'_P + XC W_C + xc

One backward sweep (leaves to roots) condenses every subtree into ``W_P = K ẋ'_P + k`` (an
articulated-inertia recursion) and folds each block's extra outputs into an affine map of its
parent acceleration; one forward sweep recovers the inputs and extra outputs of every block.
Child ports whose wrench is not a tree child's output (loop-closure blocks) enter as known
wrenches. Cost: linear in the number of blocks.

There is one sweep, :func:`loop_sweep`, a kernel on the maps of all blocks stacked in arrays
(:class:`LoopLayout` says where each block's rows are). Its callers only differ in who fills
the stacks: :class:`TreeLoopSolver` copies :class:`LoopMap` objects into them, whether they come
from the blocks' equations (the engine's object path) or from FMUs evaluated at probe inputs
(the co-simulation master, :meth:`LoopMap.from_dense`); the engine's compiled derivative
(:mod:`titopfmu.assembly.compiled`) has the block kernels write straight into them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..blocks.loop_map import LoopMap
from ..spatial.algebra import FloatArray
from ..spatial.kernels import kernel, matrix_view, mtv, mv, solve_in_place


@dataclass(frozen=True)
class LoopNode:
    """Structure of one block in the loop: parent node index and slot, child port count.

    ``children[j]`` is the node index attached to child port ``j``, or -1 when the wrench at that
    port is known beforehand (loop closure).
    """

    has_parent: bool
    parent: int
    parent_slot: int
    children: tuple[int, ...]


class LoopSolveError(ArithmeticError):
    """The loop equations of a block are singular."""

    def __init__(self, node: int, message: str) -> None:
        self.node = node
        super().__init__(message)


# -- the stacked layout ---------------------------------------------------------------------------

#: columns of LoopLayout.topo: parent node (-1 for a root), its child slot, child port count n,
#: first row of the node in the child-port stacks (6 per port), rank r of CC = U V, offset of U
#: and Vt (6n×r each) in their flat stacks, extra output count, first extra row, offset of XCt
#: (6n×ne) in its flat stack
PARENT, SLOT, NCH, RO, RANK, UO, NE, EO, XCO = range(9)
LOOP_COLUMNS = 9


class LoopLayout:
    """Where each block's map lives in the stacks of :func:`loop_sweep` (immutable; the Model).

    ``nodes`` listed parents first; ``ranks[i]`` the rank r of node i's CC = U V (its number of
    child-port rows 6 n for a dense CC, 0 for none); ``extras[i]`` its number of extra outputs.
    The stacks (the Data, from :meth:`new_stacks`), rows per node in node order:

    ========  ===================  ======================================================
    ``PP``    (N, 6, 6)            ∂W_P/∂ẋ'_P
    ``cP``    (N, 6)               W_P at zero inputs
    ``CP``    (rows, 6)            ∂ẋ'_C/∂ẋ'_P, 6 rows per child port
    ``PCt``   (rows, 6)            (∂W_P/∂W_C)^T
    ``cC``    (rows,)              ẋ'_C at zero inputs; **becomes ẋ'_C** (the solution)
    ``kv``    (rows,)              known child wrenches (loop closures; tree-child rows are
                                   overwritten with the children's k)
    ``U``     flat, 6n×r per node  CC = U V
    ``Vt``    flat, 6n×r per node  V^T
    ``XP``    (E, 6)               ∂extra/∂ẋ'_P; **becomes** the folded map (see the sweep)
    ``XCt``   flat, 6n×ne          (∂extra/∂W_C)^T
    ``xc``    (E,)                 extras at zero inputs; **becomes the extras**
    ========  ===================  ======================================================

    plus the sweep's work arrays ``K`` (N, 6, 6), ``k`` (N, 6), ``A`` (rows, 6), ``wc`` (rows,)
    (W_C, full solve only) and ``scratch``.
    """

    def __init__(self, nodes: list[LoopNode], ranks: list[int], extras: list[int]) -> None:
        n = len(nodes)
        check_order(nodes)
        self.nodes = list(nodes)
        self.ranks = [int(r) for r in ranks]
        self.extras = [int(e) for e in extras]
        topo = np.zeros((n, LOOP_COLUMNS), dtype=np.int64)
        child = []
        ro = uo = eo = xo = 0
        scratch = 0
        for i, nd in enumerate(nodes):
            q = 6 * len(nd.children)
            r, ne = self.ranks[i], self.extras[i]
            topo[i] = (nd.parent if nd.has_parent else -1, max(nd.parent_slot, 0),
                       len(nd.children), ro, r, uo, ne, eo, xo)  # fmt: skip
            child += list(nd.children)
            ro += q
            uo += q * r
            eo += ne
            xo += q * ne
            scratch = max(scratch, _scratch_size(q, r))
        self.topo = topo
        self.child = np.array(child, dtype=np.int64)
        self.n_rows, self.u_size, self.n_extras, self.xct_size = ro, uo, eo, xo
        self.scratch_size = scratch

    def new_stacks(self) -> LoopStacks:
        """Zero-filled stacks for :func:`loop_sweep` (one set per concurrent user)."""
        return LoopStacks(self)


def check_order(nodes: list[LoopNode]) -> None:
    """Raise ValueError unless every node's parent is listed before it."""
    for i, nd in enumerate(nodes):
        if nd.has_parent and not (0 <= nd.parent < i):
            raise ValueError(f"node {i}: parent {nd.parent} must be listed before it")


def _scratch_size(q: int, r: int) -> int:
    """Floats of the sweep's scratch for a node with 6n = q child rows and CC of rank r."""
    return r * q + r + q + r * r + 7 * r + q + 6 * q


class LoopStacks:
    """The arrays of one :class:`LoopLayout` (see there), zero-filled."""

    __slots__ = ("PP", "cP", "CP", "PCt", "cC", "kv", "U", "Vt", "XP", "XCt", "xc", "K", "k",
                 "A", "wc", "scratch")  # fmt: skip

    def __init__(self, layout: LoopLayout) -> None:
        n, rows, ne = len(layout.nodes), layout.n_rows, layout.n_extras
        self.PP, self.cP = np.zeros((n, 6, 6)), np.zeros((n, 6))
        self.CP, self.PCt = np.zeros((rows, 6)), np.zeros((rows, 6))
        self.cC, self.kv = np.zeros(rows), np.zeros(rows)
        self.U, self.Vt = np.zeros(layout.u_size), np.zeros(layout.u_size)
        self.XP, self.XCt, self.xc = np.zeros((ne, 6)), np.zeros(layout.xct_size), np.zeros(ne)
        self.K, self.k = np.zeros((n, 6, 6)), np.zeros((n, 6))
        self.A, self.wc = np.zeros((rows, 6)), np.zeros(rows)
        self.scratch = np.zeros(layout.scratch_size)

    def sweep(self, layout: LoopLayout, full: bool) -> int:
        """Run :func:`loop_sweep` on these stacks; returns its result."""
        return loop_sweep(layout.topo, layout.child, self.PP, self.cP, self.CP, self.PCt,
                          self.cC, self.kv, self.U, self.Vt, self.XP, self.XCt, self.xc, self.K,
                          self.k, self.A, self.wc, self.scratch, full)  # fmt: skip


@kernel
def loop_sweep(topo, child, PP, cP, CP, PCt, cC, kv, U, Vt, XP, XCt, xc, K, k, A, wc, scratch,
               full):  # fmt: skip
    """Solve the loop on the stacks of a :class:`LoopLayout` (see there for the arrays).

    On return ``cC`` holds every child-port acceleration ẋ'_C (a node's parent acceleration is
    its parent's row for its slot), ``xc`` every extra output and, with ``full``, ``wc`` every
    child-port wrench W_C. ``XP``, ``kv``, ``K``, ``k``, ``A`` and ``scratch`` are overwritten.
    Returns -1, or the index of the first node (from the leaves) whose loop equations are
    singular.

    Backward sweep, per node with children (Kbd = the children's K, block-diagonal, 0 at known
    ports; kv = the children's k, or the known wrenches):
    ``ẋ'_C = (1 - CC Kbd)^-1 (CP ẋ'_P + CC kv + cC) = A ẋ'_P + a`` by Woodbury,
    ``(1 - U V Kbd)^-1 = 1 + U (1_r - V Kbd U)^-1 V Kbd``; then with ``W_C = B ẋ'_P + b``
    (``B = Kbd A``, ``b = Kbd a + kv``): ``K = PP + PC B``, ``k = PC b + cP`` and the extras
    ``(XP + XC B) ẋ'_P + (xc + XC b)``. Forward sweep: ``ẋ'_C = A ẋ'_P + a``, extras likewise.
    """
    n = topo.shape[0]
    for i in range(n - 1, -1, -1):
        has_parent = topo[i, 0] >= 0
        nch = topo[i, 2]
        q = 6 * nch
        r0 = topo[i, 3]
        rank = topo[i, 4]
        ne = topo[i, 6]
        eo = topo[i, 7]
        if nch == 0:
            if has_parent:
                K[i] = PP[i]
                k[i] = cP[i]
            continue  # extras = XP ẋ'_P + xc as they are
        c0 = r0 // 6
        a = cC[r0 : r0 + q]  # becomes a, in place
        kvi = kv[r0 : r0 + q]
        CPi = CP[r0 : r0 + q]
        Ai = A[r0 : r0 + q]
        for j in range(nch):
            c = child[c0 + j]
            if c >= 0:
                kvi[6 * j : 6 * j + 6] = k[c]
        s = 0  # scratch offset
        if rank:
            Ui = matrix_view(U[topo[i, 5] :], q, rank)
            Vti = matrix_view(Vt[topo[i, 5] :], q, rank)
            W = matrix_view(scratch[s:], rank, q)  # W = V Kbd
            s += rank * q
            for j in range(nch):
                c = child[c0 + j]
                if c < 0:
                    W[:, 6 * j : 6 * j + 6] = 0.0
                    continue
                Kc = K[c]
                for m in range(rank):
                    for col in range(6):
                        acc = 0.0
                        for t in range(6):
                            acc += Vti[6 * j + t, m] * Kc[t, col]
                        W[m, 6 * j + col] = acc
            vkv = scratch[s : s + rank]
            s += rank
            mtv(Vti, kvi, vkv)
            yv = scratch[s : s + q]  # CC kv + cC
            s += q
            mv(Ui, vkv, yv)
            for t in range(q):
                yv[t] += a[t]
            small = matrix_view(scratch[s:], rank, rank)  # 1_r - W U
            s += rank * rank
            for m in range(rank):
                for col in range(rank):
                    acc = 0.0
                    for t in range(q):
                        acc += W[m, t] * Ui[t, col]
                    small[m, col] = (1.0 if m == col else 0.0) - acc
            width = 7 if has_parent else 1
            rhs = matrix_view(scratch[s:], rank, width)  # [W yv, W CP]
            s += 7 * rank
            for m in range(rank):
                acc = 0.0
                for t in range(q):
                    acc += W[m, t] * yv[t]
                rhs[m, 0] = acc
                if has_parent:
                    for col in range(6):
                        acc = 0.0
                        for t in range(q):
                            acc += W[m, t] * CPi[t, col]
                        rhs[m, 1 + col] = acc
            if not solve_in_place(small, rhs):
                return i
            for t in range(q):
                acc = yv[t]
                for m in range(rank):
                    acc += Ui[t, m] * rhs[m, 0]
                a[t] = acc
            if has_parent:
                for t in range(q):
                    for col in range(6):
                        acc = CPi[t, col]
                        for m in range(rank):
                            acc += Ui[t, m] * rhs[m, 1 + col]
                        Ai[t, col] = acc
        elif has_parent:
            Ai[:, :] = CPi
        # W_C = B ẋ'_P + b with B = Kbd A, b = Kbd a + kv
        b = scratch[s : s + q]
        s += q
        B = matrix_view(scratch[s:], q, 6)
        for j in range(nch):
            c = child[c0 + j]
            if c < 0:
                b[6 * j : 6 * j + 6] = kvi[6 * j : 6 * j + 6]
                if has_parent:
                    B[6 * j : 6 * j + 6] = 0.0
                continue
            Kc = K[c]
            mv(Kc, a[6 * j : 6 * j + 6], b[6 * j : 6 * j + 6])
            for t in range(6):
                b[6 * j + t] += kvi[6 * j + t]
            if has_parent:
                for t in range(6):
                    for col in range(6):
                        acc = 0.0
                        for m in range(6):
                            acc += Kc[t, m] * Ai[6 * j + m, col]
                        B[6 * j + t, col] = acc
        PCti = PCt[r0 : r0 + q]
        if has_parent:  # K = PP + PC B, k = PC b + cP
            for t in range(6):
                for col in range(6):
                    acc = PP[i, t, col]
                    for m in range(q):
                        acc += PCti[m, t] * B[m, col]
                    K[i, t, col] = acc
                acc = cP[i, t]
                for m in range(q):
                    acc += PCti[m, t] * b[m]
                k[i, t] = acc
        if ne:  # extras: XP += XC B, xc += XC b
            XCti = matrix_view(XCt[topo[i, 8] :], q, ne)
            for t in range(ne):
                acc = xc[eo + t]
                for m in range(q):
                    acc += XCti[m, t] * b[m]
                xc[eo + t] = acc
                if has_parent:
                    for col in range(6):
                        acc = XP[eo + t, col]
                        for m in range(q):
                            acc += XCti[m, t] * B[m, col]
                        XP[eo + t, col] = acc
    for i in range(n):
        p = topo[i, 0]
        nch = topo[i, 2]
        q = 6 * nch
        r0 = topo[i, 3]
        ne = topo[i, 6]
        eo = topo[i, 7]
        if p >= 0:
            pr = topo[p, 3] + 6 * topo[i, 1]
            accp = cC[pr : pr + 6]
            for t in range(q):
                acc = cC[r0 + t]
                for col in range(6):
                    acc += A[r0 + t, col] * accp[col]
                cC[r0 + t] = acc
            for t in range(ne):
                acc = xc[eo + t]
                for col in range(6):
                    acc += XP[eo + t, col] * accp[col]
                xc[eo + t] = acc
        if full:  # W_C = Kbd ẋ'_C + kv
            for j in range(nch):
                c = child[r0 // 6 + j]
                rows = slice(r0 + 6 * j, r0 + 6 * j + 6)
                if c >= 0:
                    mv(K[c], cC[rows], wc[rows])
                    for t in range(6):
                        wc[r0 + 6 * j + t] += kv[r0 + 6 * j + t]
                else:
                    wc[rows] = kv[rows]
    return -1


# -- LoopMap objects in, LoopSolution out ---------------------------------------------------------


class LoopSolution:
    """Inputs and extra outputs of every node after a solve.

    ``acc_p[i]`` (6, or None for a root) and ``w_c[i]`` (6 n_i) form the input ``u_i``;
    ``acc_c[i]`` (6 n_i) are the child-port accelerations, ``extra[i]`` the extra outputs;
    :meth:`wrench_to_parent` gives ``W_P``. After an extras-only solve ``acc_p``, ``acc_c`` and
    ``w_c`` are None. The arrays belong to this solution (later solves do not change them).
    """

    __slots__ = ("maps", "acc_p", "acc_c", "w_c", "extra")

    def __init__(self, maps, acc_p, acc_c, w_c, extra) -> None:
        self.maps = maps
        self.acc_p = acc_p
        self.acc_c = acc_c
        self.w_c = w_c
        self.extra = extra

    def u(self, i: int) -> FloatArray:
        if self.acc_p[i] is None:
            return self.w_c[i]
        return np.concatenate([self.acc_p[i], self.w_c[i]])

    def wrench_to_parent(self, i: int) -> FloatArray:
        m = self.maps[i]
        w = m.PP.dot(self.acc_p[i]) + m.cP
        if m.PC is not None and len(self.w_c[i]):
            w = w + m.PC.dot(self.w_c[i])
        return w


def map_shape(m: LoopMap, q: int) -> tuple[int, int, bool]:
    """``(rank of CC, extra outputs, dense CC)`` of a map with q child-port rows."""
    if m.U is not None:
        r, dense = m.U.shape[1], False
    elif m.CC is not None and q:
        r, dense = q, True
    else:
        r, dense = 0, False
    return r, 0 if m.xc is None else len(m.xc), dense


class TreeLoopSolver:
    """The loop of a forest of :class:`LoopMap` objects, nodes listed parents first.

    Each solve copies the maps into the stacks of a :class:`LoopLayout` and runs
    :func:`loop_sweep`. The layout follows the maps' shapes (the rank of each CC and the number
    of extra outputs); it is made at the first solve and again whenever they change. Not
    reentrant: one solver per thread.
    """

    def __init__(self, nodes: list[LoopNode]) -> None:
        check_order(nodes)
        self.nodes = nodes
        self.layout: LoopLayout | None = None
        self._shapes: list = []
        self._fill: list = []
        self._extra_rows: list = []
        self._child_rows: list = []
        self._parent_rows: list = []
        self._stacks: LoopStacks | None = None
        self._known_nodes = [i for i, nd in enumerate(nodes) if -1 in nd.children]

    def _make_layout(self, shapes: list[tuple[int, int, bool]]) -> None:
        nodes = self.nodes
        lay = LoopLayout(nodes, [s[0] for s in shapes], [s[1] for s in shapes])
        st = lay.new_stacks()
        fill = []  # per node: the views its map is copied into
        for i, nd in enumerate(nodes):
            r0, r, uo, ne, eo, xo = (int(v) for v in lay.topo[i, [RO, RANK, UO, NE, EO, XCO]])
            q = 6 * len(nd.children)
            rows = slice(r0, r0 + q)
            U = st.U[uo : uo + q * r].reshape(q, r)
            Vt = st.Vt[uo : uo + q * r].reshape(q, r)
            if shapes[i][2]:
                Vt[:] = np.eye(q)  # dense CC = CC 1
            fill.append((st.PP[i], st.cP[i], st.CP[rows], st.PCt[rows], st.cC[rows], U, Vt,
                         st.XP[eo : eo + ne], st.XCt[xo : xo + q * ne].reshape(q, ne),
                         st.xc[eo : eo + ne], st.kv[rows]))  # fmt: skip
        self.layout, self._stacks, self._fill, self._shapes = lay, st, fill, shapes
        t = lay.topo
        self._extra_rows = [slice(t[i, EO], t[i, EO] + t[i, NE]) for i in range(len(nodes))]
        self._child_rows = [slice(t[i, RO], t[i, RO] + 6 * t[i, NCH]) for i in range(len(nodes))]
        self._parent_rows = [
            slice(t[nd.parent, RO] + 6 * nd.parent_slot, t[nd.parent, RO] + 6 * nd.parent_slot + 6)
            if nd.has_parent else None
            for nd in nodes
        ]  # fmt: skip

    def solve(
        self, maps: list[LoopMap], known: list[FloatArray | None], extras_only: bool = False
    ) -> LoopSolution:
        """Solve the loop given every node's map and the known child wrenches.

        ``known[i]`` holds ``6 n_i`` values (or None for zeros); tree-child slots are ignored.
        With ``extras_only`` the solution holds the extra outputs only (the other fields are
        None): all a state derivative needs.
        """
        nodes = self.nodes
        shapes = [map_shape(m, 6 * len(nd.children)) for m, nd in zip(maps, nodes, strict=True)]
        if shapes != self._shapes:
            self._make_layout(shapes)
        for m, f in zip(maps, self._fill, strict=True):
            PP, cP, CP, PCt, cC, U, Vt, XP, XCt, xc, _ = f
            if m.PP is not None:
                PP[...] = m.PP
                cP[...] = m.cP
            if len(cC):
                cC[...] = m.cC
                if m.CP is not None:
                    CP[...] = m.CP
                    PCt[...] = m.PC.T
                if m.U is not None:
                    U[...] = m.U
                    Vt[...] = m.V.T
                elif U.shape[1]:
                    U[...] = m.CC
            if len(xc):
                xc[...] = m.xc
                XP[...] = 0.0 if m.XP is None else m.XP
                if XCt.size:
                    XCt[...] = 0.0 if m.XC is None else m.XC.T
        for i in self._known_nodes:
            self._fill[i][10][...] = 0.0 if known[i] is None else known[i]
        st = self._stacks
        node = st.sweep(self.layout, not extras_only)
        if node >= 0:
            raise LoopSolveError(node, "singular loop equations")
        xc = st.xc.copy()
        extra = [xc[e] for e in self._extra_rows]
        if extras_only:
            return LoopSolution(None, None, None, None, extra)
        acc, wc = st.cC.copy(), st.wc.copy()
        acc_c = [acc[r] for r in self._child_rows]
        w_c = [wc[r] for r in self._child_rows]
        acc_p = [None if r is None else acc[r] for r in self._parent_rows]
        return LoopSolution(maps, acc_p, acc_c, w_c, extra)
