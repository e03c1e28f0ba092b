"""Exact solution of the TITOP algebraic loop on a forest of affine blocks, in linear time.

Seed 004 closes the equations of motion through algebraic loops: a parent's acceleration depends
on its children's wrenches, which depend on that acceleration. At a fixed instant every block is
affine in its loop unknowns (:class:`~titopfmu.blocks.loop_map.LoopMap`). One backward sweep
(leaves to roots) condenses every subtree into ``W_P = K ẋ'_P + k`` (K = minus its apparent
inertia); one forward sweep recovers the inputs and extra outputs of every block. Child ports
whose wrench is not a tree child's output (loop-closure blocks) enter as known wrenches.

A block in the joint-space form (every body block) is condensed in the articulated-inertia form:
with Kbd the children's K (block-diagonal, negative semi-definite) its internal accelerations
solve ``(J - U^T Kbd U) α = (F + U^T Kbd CP) ẋ'_P + f0 + U^T (Kbd cC + kv)``, an assembled
symmetric positive definite system (Cholesky): no compliance is ever multiplied by an inertia, so
no accuracy is lost at large mass ratios. A block in the hybrid form (known only by its
input-output map) is condensed through ``(1 - CC Kbd)``, the only form its map allows.

This is the object path of the engine (blocks written in Python, e.g. a user's subclass) and the
co-simulation master's loop between FMUs; the engine runs the same articulated sweep in the C
core (:mod:`titopfmu.core`) for systems of built-in blocks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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


def check_order(nodes: list[LoopNode]) -> None:
    """Raise ValueError unless every node's parent is listed before it."""
    for i, nd in enumerate(nodes):
        if nd.has_parent and not (0 <= nd.parent < i):
            raise ValueError(f"node {i}: parent {nd.parent} must be listed before it")


class LoopSolution:
    """Inputs and extra outputs of every node after a solve.

    ``acc_p[i]`` (6, or None for a root) and ``w_c[i]`` (6 n_i) form the input ``u_i``;
    ``acc_c[i]`` (6 n_i) are the child-port accelerations, ``extra[i]`` the extra outputs,
    ``alpha[i]`` the internal accelerations of a joint-space map (else None);
    :meth:`wrench_to_parent` gives ``W_P``. After an extras-only solve ``acc_p``, ``acc_c`` and
    ``w_c`` are None.
    """

    __slots__ = ("maps", "acc_p", "acc_c", "w_c", "extra", "alpha")

    def __init__(self, maps, acc_p, acc_c, w_c, extra, alpha=None) -> None:
        self.maps = maps
        self.acc_p = acc_p
        self.acc_c = acc_c
        self.w_c = w_c
        self.extra = extra
        self.alpha = alpha

    def u(self, i: int) -> FloatArray:
        if self.acc_p[i] is None:
            return self.w_c[i]
        return np.concatenate([self.acc_p[i], self.w_c[i]])

    def wrench_to_parent(self, i: int) -> FloatArray:
        m = self.maps[i]
        w = m.PP.dot(self.acc_p[i]) + m.cP
        if m.PC is not None and len(self.w_c[i]):
            w = w + m.PC.dot(self.w_c[i])
        if m.J is not None and m.F is not None:
            w = w + m.F.T.dot(self.alpha[i])
        return w


class TreeLoopSolver:
    """The loop of a forest of :class:`LoopMap` objects, nodes listed parents first."""

    def __init__(self, nodes: list[LoopNode]) -> None:
        check_order(nodes)
        self.nodes = nodes

    def solve(
        self, maps: list[LoopMap], known: list[FloatArray | None], extras_only: bool = False
    ) -> LoopSolution:
        """Solve the loop given every node's map and the known child wrenches.

        ``known[i]`` holds ``6 n_i`` values (or None for zeros); tree-child slots are ignored.
        With ``extras_only`` the solution holds the extra outputs only (the other fields are
        None): all a state derivative needs.
        """
        nodes = self.nodes
        n = len(nodes)
        K: list = [None] * n
        k: list = [None] * n
        saved: list = [None] * n
        for i in range(n - 1, -1, -1):
            nd, m = nodes[i], maps[i]
            q = 6 * len(nd.children)
            Kb = np.zeros((q, q))
            kv = np.zeros(q)
            if known[i] is not None:
                kv[:] = known[i]
            for j, c in enumerate(nd.children):
                if c >= 0:
                    Kb[6 * j : 6 * j + 6, 6 * j : 6 * j + 6] = K[c]
                    kv[6 * j : 6 * j + 6] = k[c]
            has_p = nd.has_parent
            cC = m.cC if q and m.cC is not None else np.zeros(q)
            if m.J is not None:  # articulated-inertia form
                Ja = np.array(m.J, dtype=float)
                fp = np.array(m.f0, dtype=float)
                r = Ja.shape[0]
                Fp = m.F.copy() if has_p and m.F is not None else np.zeros((r, 6))
                t = Kb.dot(cC) + kv  # W_C at zero ẋ'_P and α
                KZ = Kb.dot(m.CP) if has_p and q and m.CP is not None else np.zeros((q, 6))
                if q:
                    KU = Kb.dot(m.U)
                    Ja -= m.U.T.dot(KU)
                    fp += m.U.T.dot(t)
                    Fp += m.U.T.dot(KZ)
                try:
                    L = np.linalg.cholesky(0.5 * (Ja + Ja.T))
                except np.linalg.LinAlgError:
                    raise LoopSolveError(i, "singular loop equations") from None
                # α = A ẋ'_P + a with J [A a] = [F f]: two triangular solves with the factor
                # of the assembled SPD J (no explicit inverse)
                sol = np.linalg.solve(L.T, np.linalg.solve(L, np.column_stack([Fp, fp])))
                A, a = sol[:, :-1], sol[:, -1]
                if has_p:
                    PCKb = m.PC.dot(Kb) if q and m.PC is not None else np.zeros((6, q))
                    Gm = PCKb.dot(m.U) if q else np.zeros((6, r))
                    if m.F is not None:
                        Gm = Gm + m.F.T
                    K[i] = m.PP + PCKb.dot(m.CP if q and m.CP is not None else np.zeros((q, 6)))
                    K[i] = K[i] + Gm.dot(A)
                    k[i] = m.cP + (PCKb.dot(cC) + (m.PC.dot(kv) if q else 0.0)) + Gm.dot(a)
                saved[i] = ("J", Kb, kv, A, a, cC)
            else:  # hybrid form: (1 - CC Kbd) ẋ'_C = CP ẋ'_P + CC kv + cC
                CC = (m.U.dot(m.V) if m.U is not None else m.CC) if q else None
                CP = m.CP if has_p and q and m.CP is not None else np.zeros((q, 6))
                if CC is not None:
                    Amat = np.eye(q) - CC.dot(Kb)
                    rhs = np.column_stack([CC.dot(kv) + cC, CP])
                    try:
                        sol = np.linalg.solve(Amat, rhs)
                    except np.linalg.LinAlgError:
                        raise LoopSolveError(i, "singular loop equations") from None
                    av, Am = sol[:, 0], sol[:, 1:]
                else:
                    av, Am = cC, CP
                if has_p:
                    B = Kb.dot(Am)
                    b = Kb.dot(av) + kv
                    K[i] = m.PP + (m.PC.dot(B) if q else 0.0)
                    k[i] = m.cP + (m.PC.dot(b) if q else 0.0)
                saved[i] = ("H", Kb, kv, Am, av, None)
        # forward sweep
        acc_p: list = [None] * n
        acc_c: list = [None] * n
        w_c: list = [None] * n
        extra: list = [None] * n
        alpha: list = [None] * n
        for i in range(n):
            nd, m = nodes[i], maps[i]
            form, Kb, kv, A, a, cC = saved[i]
            ap = None
            if nd.has_parent:
                p = nd.parent
                s = 6 * nd.parent_slot
                ap = acc_c[p][s : s + 6]
            acc_p[i] = ap
            q = 6 * len(nd.children)
            if form == "J":
                al = a + A.dot(ap) if ap is not None else a.copy()
                alpha[i] = al
                ac = cC + (m.U.dot(al) if q else 0.0)
                if ap is not None and q and m.CP is not None:
                    ac = ac + m.CP.dot(ap)
            else:
                ac = a + A.dot(ap) if ap is not None and q else np.array(a, dtype=float)
            ac = np.asarray(ac, dtype=float).reshape(q)
            acc_c[i] = ac
            wc = Kb.dot(ac) + kv
            w_c[i] = wc
            if m.xc is not None and len(m.xc):
                e = np.array(m.xc, dtype=float)
                if ap is not None and m.XP is not None:
                    e += m.XP.dot(ap)
                if q and m.XC is not None:
                    e += m.XC.dot(wc)
                if form == "J" and m.XA is not None:
                    e += m.XA.dot(alpha[i])
                extra[i] = e
            else:
                extra[i] = np.zeros(0)
        if extras_only:
            return LoopSolution(None, None, None, None, extra, alpha)
        return LoopSolution(maps, acc_p, acc_c, w_c, extra, alpha)
