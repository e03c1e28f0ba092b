"""Exact solution of the TITOP algebraic loop on a forest of affine blocks, in linear time.

Seed 004 closes the equations of motion through algebraic loops: a parent's acceleration depends
on its children's wrenches, which depend on that acceleration. At a fixed instant every block is
affine in its loop unknowns (see :mod:`titopfmu.blocks.bodies`)::

    y_i = M_i u_i + c_i
    u_i = [ẋ'_P (6, if the block has a parent) ; W_C1 ; ... ; W_Cn]
    y_i = [W_P (6, if parent) ; ẋ'_C1 ; ... ; ẋ'_Cn ; extra outputs]

The solver does not care where ``M_i, c_i`` come from: the in-process engine builds them
analytically, the co-simulation master by evaluating an FMU at probe inputs. One backward sweep
(leaves to roots) condenses every subtree into ``W_P = K ẋ'_P + k`` (an articulated-inertia
recursion), one forward sweep recovers every input and output. Child ports whose wrench is not a
tree child's output (loop-closure blocks) enter as known wrenches. Cost: linear in the number of
blocks, one (6n×6n) solve per block with n tree children.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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


class TreeLoopSolver:
    """Backward/forward sweep over a forest whose nodes are listed parents first."""

    def __init__(self, nodes: list[LoopNode]) -> None:
        for i, n in enumerate(nodes):
            if n.has_parent and not (0 <= n.parent < i):
                raise ValueError(f"node {i}: parent {n.parent} must be listed before it")
        self.nodes = nodes

    def solve(
        self,
        maps: list[tuple[FloatArray, FloatArray]],
        known: list[FloatArray | None],
    ) -> tuple[list[FloatArray], list[FloatArray]]:
        """Return ``(u, y)`` for every node, given the maps and the known child wrenches.

        ``known[i]`` holds ``6 n_i`` values; the slots of tree children are ignored.
        """
        nodes = self.nodes
        count = len(nodes)
        K: list = [None] * count
        k: list = [None] * count
        A: list = [None] * count
        a: list = [None] * count
        Kbd: list = [None] * count
        kvec: list = [None] * count
        for i in range(count - 1, -1, -1):
            node = nodes[i]
            M, c = maps[i]
            n = len(node.children)
            p = 6 if node.has_parent else 0
            if n == 0:
                if p:
                    K[i] = M[0:6, 0:6]
                    k[i] = c[0:6]
                continue
            if n == 1 and node.children[0] >= 0:
                ch = node.children[0]
                kb, kv = K[ch], k[ch]
            else:
                kb = np.zeros((6 * n, 6 * n))
                kv = np.array(known[i], dtype=float) if known[i] is not None else np.zeros(6 * n)
                for j, ch in enumerate(node.children):
                    if ch >= 0:
                        kb[6 * j : 6 * j + 6, 6 * j : 6 * j + 6] = K[ch]
                        kv[6 * j : 6 * j + 6] = k[ch]
            Kbd[i], kvec[i] = kb, kv
            M_CC = M[p : p + 6 * n, p : p + 6 * n]
            lhs = np.eye(6 * n) - M_CC @ kb
            rhs = np.empty((6 * n, p + 1))
            rhs[:, 0:p] = M[p : p + 6 * n, 0:p]
            rhs[:, p] = M_CC @ kv + c[p : p + 6 * n]
            try:
                sol = np.linalg.solve(lhs, rhs)
            except np.linalg.LinAlgError:
                raise LoopSolveError(i, "singular loop equations") from None
            A[i] = sol[:, 0:p]
            a[i] = sol[:, p]
            if p:
                M_PC = M[0:6, 6 : 6 + 6 * n]
                K[i] = M[0:6, 0:6] + M_PC @ (kb @ A[i])
                k[i] = M_PC @ (kb @ a[i] + kv) + c[0:6]
        us: list = [None] * count
        ys: list = [None] * count
        acc_c: list = [None] * count
        for i, node in enumerate(nodes):
            M, c = maps[i]
            n = len(node.children)
            if node.has_parent:
                s = node.parent_slot
                acc_p = acc_c[node.parent][6 * s : 6 * s + 6]
            else:
                acc_p = None
            if n:
                ac = a[i] if acc_p is None else A[i] @ acc_p + a[i]
                acc_c[i] = ac
                w_c = Kbd[i] @ ac + kvec[i]
            else:
                w_c = np.zeros(0)
            u = w_c if acc_p is None else np.concatenate([acc_p, w_c])
            us[i] = u
            ys[i] = M @ u + c
        return us, ys
