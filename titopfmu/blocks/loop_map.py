"""The affine form of a block at one instant, as the loop solver consumes it.

With ``u = [ẋ'_P (6, if the block has a parent); W_C (6 per child port)]`` and
``y = [W_P (6, if parent); ẋ'_C (6 per child port); extra outputs]``::

    W_P   = PP ẋ'_P + PC W_C + cP
    ẋ'_C  = CP ẋ'_P + CC W_C + cC        (CC = U V when it has low rank, e.g. a 1-dof joint)
    extra = XP ẋ'_P + XC W_C + xc

Body blocks build it analytically (:mod:`titopfmu.blocks.bodies`); an FMU adapter builds it by
evaluating the FMU at probe inputs (:meth:`LoopMap.from_dense`).
"""

from __future__ import annotations

import numpy as np

from ..spatial.algebra import FloatArray


class LoopMap:
    """Affine map of one block at one instant (see the module docstring). ``None`` = zero/absent.

    ``U`` (6n×r) and ``V`` (r×6n) give ``CC = U V`` when the block provides that factorisation
    (``CC`` is then ignored); otherwise ``CC`` is dense (6n×6n) or None for zero.
    """

    __slots__ = ("PP", "PC", "CP", "CC", "U", "V", "cP", "cC", "XP", "XC", "xc")

    def __init__(
        self, PP=None, PC=None, CP=None, CC=None, U=None, V=None, cP=None, cC=None,
        XP=None, XC=None, xc=None,
    ) -> None:  # fmt: skip
        self.PP, self.PC, self.CP, self.CC = PP, PC, CP, CC
        self.U, self.V = U, V
        self.cP, self.cC = cP, cC
        self.XP, self.XC, self.xc = XP, XC, xc

    @classmethod
    def from_dense(cls, M: FloatArray, c: FloatArray, has_parent: bool, n_children: int) -> LoopMap:
        """Split a dense map ``y = M u + c`` (layout of the module docstring)."""
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
        """The dense ``(M, c)`` of this map (for tests and diagnostics)."""
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
            cc = self.U @ self.V if self.U is not None else self.CC
            if cc is not None:
                M[p : p + q, p : p + q] = cc
            c[p : p + q] = self.cC
            if ne and self.XC is not None:
                M[p + q :, p:] = self.XC
        if ne:
            c[p + q :] = self.xc
        return M, c
