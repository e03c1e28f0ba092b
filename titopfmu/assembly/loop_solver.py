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

The solver does not care where the maps come from: the in-process engine builds them
analytically, the co-simulation master by evaluating an FMU at probe inputs
(:meth:`LoopMap.from_dense`). One backward sweep (leaves to roots) condenses every subtree into
``W_P = K ẋ'_P + k`` (an articulated-inertia recursion); one forward sweep recovers the inputs and
extra outputs of every block. Child ports whose wrench is not a tree child's output (loop-closure
blocks) enter as known wrenches. Cost: linear in the number of blocks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg.lapack import dgesv

from ..blocks.loop_map import LoopMap
from ..spatial.algebra import FloatArray


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


class LoopSolution:
    """Inputs and extra outputs of every node after a solve.

    ``acc_p[i]`` (6, or None for a root) and ``w_c[i]`` (6 n_i) form the input ``u_i``;
    ``extra[i]`` holds the extra outputs; :meth:`wrench_to_parent` gives ``W_P``.
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


_EMPTY = np.zeros(0)


def _solve(a: FloatArray, b: FloatArray) -> FloatArray:
    """``a^-1 b`` by LAPACK's dgesv (LU with partial pivoting), called directly: on the 6×6
    systems here ``np.linalg.solve`` spends four times as long in its Python wrapper."""
    x, info = dgesv(a, b)[2:]
    if info != 0:
        raise np.linalg.LinAlgError("singular matrix")
    return x


class TreeLoopSolver:
    """Backward/forward sweep over a forest whose nodes are listed parents first."""

    def __init__(self, nodes: list[LoopNode]) -> None:
        for i, n in enumerate(nodes):
            if n.has_parent and not (0 <= n.parent < i):
                raise ValueError(f"node {i}: parent {n.parent} must be listed before it")
        self.nodes = nodes
        self._eye = {}
        # per node, for the sweeps: (index, has parent, child count, the single tree child or -1)
        self._back = [
            (i, n.has_parent, len(n.children),
             n.children[0] if len(n.children) == 1 and n.children[0] >= 0 else -1)
            for i, n in reversed(list(enumerate(nodes)))
        ]  # fmt: skip
        # (index, has parent, parent, offset of its slot in the parent's child accelerations
        # or -1 when that port is the parent's only one (the whole vector is then used: no view
        # object per node), n)
        self._fwd = [
            (
                i, n.has_parent, n.parent,
                -1 if n.has_parent and len(nodes[n.parent].children) == 1 else 6 * n.parent_slot,
                len(n.children),
            )
            for i, n in enumerate(nodes)
        ]  # fmt: skip

    def _identity(self, n: int) -> FloatArray:
        e = self._eye.get(n)
        if e is None:
            e = self._eye[n] = np.eye(n)
        return e

    def solve(
        self, maps: list[LoopMap], known: list[FloatArray | None], extras_only: bool = False
    ) -> LoopSolution:
        """Solve the loop given every node's map and the known child wrenches.

        ``known[i]`` holds ``6 n_i`` values (or None for zeros); tree-child slots are ignored.
        With ``extras_only`` the solution holds the extra outputs only (its other fields are
        None) and ``maps`` is consumed: each entry is set to None once the backward sweep has
        used it, each node's extras are folded there into an affine map of its parent
        acceleration, and every per-node intermediate is released as soon as the sweeps are past
        it, so that on long trees new values reuse memory that is still in the processor's
        caches. The extras then equal the full solve's to rounding (the sums are regrouped).
        """
        nodes = self.nodes
        count = len(nodes)
        K: list = [None] * count
        k: list = [None] * count
        A: list = [None] * count
        a: list = [None] * count
        Kbd: list = [None] * count
        kvec: list = [None] * count
        ext: list = maps
        if extras_only:  # what the forward sweep needs of each map
            ext = [None] * count
        for i, has_parent, n, single in self._back:
            m = maps[i]
            if extras_only:
                ext[i] = None if m.xc is None else (m.XP, m.XC, m.xc)
                maps[i] = None
            if n == 0:
                if has_parent:
                    K[i] = m.PP
                    k[i] = m.cP
                if extras_only and m.xc is not None:
                    ext[i] = (m.XP, m.xc)
                continue
            if single >= 0:
                kb, kv = K[single], k[single]
            else:
                kb = np.zeros((6 * n, 6 * n))
                kv = np.array(known[i], dtype=float) if known[i] is not None else np.zeros(6 * n)
                for j, ch in enumerate(nodes[i].children):
                    if ch >= 0:
                        kb[6 * j : 6 * j + 6, 6 * j : 6 * j + 6] = K[ch]
                        kv[6 * j : 6 * j + 6] = k[ch]
            if not extras_only:
                Kbd[i], kvec[i] = kb, kv
            # ẋ'_C = (1 - CC Kbd)^-1 (CP ẋ'_P + CC kv + cC)
            Ymat = m.CP if has_parent else None
            try:
                if m.U is not None:
                    # Woodbury: (1 - U V Kbd)^-1 = 1 + U (1_r - V Kbd U)^-1 V Kbd
                    U = m.U
                    W = m.V.dot(kb)
                    yv = U.dot(m.V.dot(kv))
                    yv += m.cC
                    r = U.shape[1]
                    if r == 1:
                        w0 = W[0]
                        u0 = U[:, 0]
                        s = 1.0 - float(w0.dot(u0))
                        if s == 0.0:
                            raise np.linalg.LinAlgError
                        a[i] = yv + u0 * (float(w0.dot(yv)) / s)
                        if Ymat is not None:  # Y + u0 (w0 Y) / s
                            A[i] = Ymat + U.dot(W.dot(Ymat) * (1.0 / s))
                    else:
                        small = self._identity(r) - W.dot(U)
                        if Ymat is not None:
                            rhs = np.empty((r, 7))
                            rhs[:, 0:6] = W.dot(Ymat)
                            rhs[:, 6] = W.dot(yv)
                            z = _solve(small, rhs)
                            A[i] = Ymat + U.dot(z[:, 0:6])
                            a[i] = yv + U.dot(z[:, 6])
                        else:
                            a[i] = yv + U.dot(_solve(small, W.dot(yv)))
                elif m.CC is not None:
                    lhs = self._identity(6 * n) - m.CC.dot(kb)
                    yv = m.CC.dot(kv) + m.cC
                    if Ymat is not None:
                        rhs = np.empty((6 * n, 7))
                        rhs[:, 0:6] = Ymat
                        rhs[:, 6] = yv
                        z = _solve(lhs, rhs)
                        A[i], a[i] = z[:, 0:6], z[:, 6]
                    else:
                        a[i] = _solve(lhs, yv)
                else:
                    A[i], a[i] = Ymat, m.cC
            except np.linalg.LinAlgError:
                raise LoopSolveError(i, "singular loop equations") from None
            if has_parent:
                kA = kb.dot(A[i])
                K[i] = m.PP + m.PC.dot(kA)
                ka = kb.dot(a[i])
                ka += kv
                k[i] = m.PC.dot(ka) + m.cP
            if extras_only:
                # extra = XP ẋ'_P + XC W_C + xc with W_C = Kbd ẋ'_C + kv and ẋ'_C = A ẋ'_P + a:
                # extra = (XP + XC Kbd A) ẋ'_P + (xc + XC (Kbd a + kv)), so that the forward
                # sweep needs neither Kbd nor the map any more
                X = ext[i]
                if X is not None:
                    XP, XC, xc = X
                    if XC is None:
                        ext[i] = (XP, xc)
                    elif has_parent:
                        EP = XC.dot(kA)
                        if XP is not None:
                            EP += XP
                        ext[i] = (EP, xc + XC.dot(ka))
                    else:
                        ka = kb.dot(a[i])
                        ka += kv
                        ext[i] = (None, xc + XC.dot(ka))
                if single >= 0:
                    K[single] = k[single] = None
        K = k = None  # what the forward sweep still needs is in Kbd and kvec (full solve)
        acc_p: list = [None] * count
        acc_c: list = [None] * count
        w_c: list = [_EMPTY] * count
        extra: list = [_EMPTY] * count
        for i, has_parent, parent, s, n in self._fwd:
            ap = None
            if has_parent:
                ap = acc_c[parent] if s < 0 else acc_c[parent][s : s + 6]
                acc_p[i] = ap
            if n:
                ac = a[i] if ap is None else A[i].dot(ap) + a[i]
                acc_c[i] = ac
                if extras_only:
                    A[i] = a[i] = None
                else:
                    wc = Kbd[i].dot(ac) + kvec[i]
                    w_c[i] = wc
            m = ext[i]
            if m is None:
                continue
            if extras_only:  # (EP, e0) of the backward sweep: extra = EP ẋ'_P + e0
                EP, x = m
                ext[i] = None
                if ap is not None and EP is not None:
                    x = x + EP.dot(ap)
                extra[i] = x
                continue
            XP, XC, x = m.XP, m.XC, m.xc
            if x is None:
                continue
            if ap is not None and XP is not None:
                x = x + XP.dot(ap)
            if n and XC is not None:
                x = x + XC.dot(wc)
            extra[i] = x
        if extras_only:
            return LoopSolution(None, None, None, None, extra)
        return LoopSolution(maps, acc_p, acc_c, w_c, extra)
