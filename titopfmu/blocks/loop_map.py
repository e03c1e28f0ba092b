"""The affine form of a block at one instant, as the loop solver consumes it.

With ``u = [ẋ'_P (6, if the block has a parent); W_C (6 per child port)]`` and
``y = [W_P (6, if parent); ẋ'_C (6 per child port); extra outputs]``, a block is affine in u.
Two forms:

**Joint-space form** (``J`` given; the body blocks of :mod:`titopfmu.blocks.bodies`): the block
has k internal accelerations α (a joint's u̇, a root's ẋ'_P) with a symmetric positive definite
inertia J (k×k)::

    J α   = F ẋ'_P + U^T W_C + f0            (F = 0 without a parent)
    W_P   = PP ẋ'_P + F^T α + PC W_C + cP
    ẋ'_C  = CP ẋ'_P + U α + cC
    extra = XP ẋ'_P + XA α + XC W_C + xc

The loop solver then assembles ``J - U^T Kbd U`` (Kbd = the children's apparent inertias, negative
semi-definite) and never forms a compliance times an inertia: the articulated-inertia form,
accurate whatever the mass ratios (:mod:`titopfmu.assembly.loop_solver`).

**Hybrid form** (``J`` None; a block known only by its input-output map, e.g. an FMU evaluated
at probe inputs, :meth:`LoopMap.from_dense`)::

    W_P   = PP ẋ'_P + PC W_C + cP
    ẋ'_C  = CP ẋ'_P + CC W_C + cC        (CC = U V when it has low rank)
    extra = XP ẋ'_P + XC W_C + xc
"""

from __future__ import annotations

import numpy as np

from ..spatial.algebra import FloatArray


class LoopMap:
    """Affine map of one block at one instant (see the module docstring). ``None`` = zero/absent.

    Hybrid form: ``U`` (6n×r) and ``V`` (r×6n) give ``CC = U V`` when the block provides that
    factorisation (``CC`` is then ignored); otherwise ``CC`` is dense (6n×6n) or None for zero.
    Joint-space form: ``J`` (k×k), ``F`` (k×6), ``f0`` (k), ``U`` (6n×k), ``XA`` (ne×k).
    """

    __slots__ = ("PP", "PC", "CP", "CC", "U", "V", "cP", "cC", "XP", "XC", "xc", "J", "F", "f0",
                 "XA")  # fmt: skip

    def __init__(
        self, PP=None, PC=None, CP=None, CC=None, U=None, V=None, cP=None, cC=None,
        XP=None, XC=None, xc=None, J=None, F=None, f0=None, XA=None,
    ) -> None:  # fmt: skip
        self.PP, self.PC, self.CP, self.CC = PP, PC, CP, CC
        self.U, self.V = U, V
        self.cP, self.cC = cP, cC
        self.XP, self.XC, self.xc = XP, XC, xc
        self.J, self.F, self.f0, self.XA = J, F, f0, XA

    @classmethod
    def from_dense(cls, M: FloatArray, c: FloatArray, has_parent: bool, n_children: int) -> LoopMap:
        """Split a dense map ``y = M u + c`` (hybrid form, layout of the module docstring)."""
        p = 6 if has_parent else 0
        q = 6 * n_children
        return cls(
            PP=M[0:p, 0:p] if p else None,
            PC=M[0:p, p : p + q] if p else None,
            CP=M[p : p + q, 0:p] if p else None,
            CC=M[p : p + q, p : p + q],
            cP=c[0:p] if p else None,
            cC=c[p : p + q],
            XP=M[p + q :, 0:p] if p else None,
            XC=M[p + q :, p : p + q],
            xc=c[p + q :],
        )

    def dense(self, has_parent: bool, n_children: int) -> tuple[FloatArray, FloatArray]:
        """The dense ``(M, c)`` of this map, α eliminated (for tests and diagnostics)."""
        p = 6 if has_parent else 0
        q = 6 * n_children
        ne = 0 if self.xc is None else len(self.xc)
        M = np.zeros((p + q + ne, p + q))
        c = np.zeros(p + q + ne)
        if p:
            M[0:p, 0:p] = self.PP
            if q:
                M[0:p, p:] = self.PC
                M[p : p + q, 0:p] = self.CP
            c[0:p] = self.cP
            if ne and self.XP is not None:
                M[p + q :, 0:p] = self.XP
        if q:
            c[p : p + q] = self.cC
            if ne and self.XC is not None:
                M[p + q :, p:] = self.XC
            if self.J is None:
                cc = self.U @ self.V if self.U is not None else self.CC
                if cc is not None:
                    M[p : p + q, p : p + q] = cc
        if ne:
            c[p + q :] = self.xc
        if self.J is not None:  # α = J^-1 (F ẋ'_P + U^T W_C + f0): its effect on every output
            k = self.J.shape[0]
            A = np.zeros((k, p + q))
            if p and self.F is not None:
                A[:, 0:p] = self.F
            if q:
                A[:, p:] = self.U.T
            Ji = np.linalg.inv(self.J)
            B = np.zeros((p + q + ne, k))
            if p and self.F is not None:
                B[0:p] = self.F.T
            if q:
                B[p : p + q] = self.U
            if ne and self.XA is not None:
                B[p + q :] = self.XA
            M += B @ Ji @ A
            c += B @ (Ji @ self.f0)
        return M, c
