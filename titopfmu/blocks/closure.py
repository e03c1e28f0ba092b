"""Loop-closure block ``L^A_C`` (seed 004, sec. 3.4, Figs. 13-14).

A closed kinematic chain is cut at a point C of a body A, split into A_l (ending the chain "left")
and A_r (ending the chain "right"). The block models the mechanical impedance of A at C as a
6×6 spring K and damper D acting on the relative motion δm_C = m_C^{A_r} - m_C^{A_l}, and feeds the
interaction wrenches back to both sides. It only needs twists and poses, so it is evaluated before
the algebraic loop: the loop stays a forest.
"""

from __future__ import annotations

import numpy as np

from ..core import _titop
from ..spatial.algebra import FloatArray
from .base import DeclaredBlock
from .declarations import LOOP_CLOSURE


class LoopClosure(DeclaredBlock):
    """Spring-damper closing a kinematic loop at a point C.

    Parameters
    ----------
    K:
        6×6 stiffness on ``δx = [δp (m), δθ (rad)]`` (N/m, N m/rad blocks), symmetric PSD.
    D:
        6×6 damping on ``δx' = [δv (m/s), δω (rad/s)]``, symmetric PSD.

    Ports ``left`` and ``right`` are parent-kind: each receives the motion vector of one side of
    the cut (projected in that side's frame) and returns the wrench the closure applies on it.
    Relative motion is taken in the left frame: δp = [IC_r - IC_l], δθ the rotation vector of
    P_{l/i}^T P_{r/i}, δv and δω the differences of the point velocities and angular rates. The
    wrench on the left side is ``K δx + D δx'`` and its opposite acts on the right side (projected
    in R_r).
    """

    declaration = LOOP_CLOSURE

    def __init__(self, name: str, *args, **kwargs) -> None:
        super().__init__(name)
        v = self._checked(self._bind(name, args, kwargs))
        self.K, self.D = v["K"], v["D"]
        self._K = np.ascontiguousarray(self.K.reshape(36))
        self._D = np.ascontiguousarray(self.D.reshape(36))
        for port in LOOP_CLOSURE.ports:
            self._add_port(port.name, port.kind, port.size, port.description)

    def wrenches(self, left, right) -> tuple[FloatArray, FloatArray]:
        """Wrenches on the left and right sides, each in its own frame (Fig. 14), from the core
        (``titop_cut_block``).

        ``left``/``right`` carry ``twist``, ``ip`` and ``R`` (see PortKinematics).
        """
        from ..core.model import packed

        w_l, w_r = np.empty(6), np.empty(6)
        _titop.cut_block(self._K, self._D, packed(left), packed(right), w_l, w_r)
        return w_l, w_r

    def potential_energy(self, left, right) -> float:
        """½ δx^T K δx (J): the energy stored in the closure spring (δx from the core's
        ``titop_cut_deflection``)."""
        from ..core.model import packed

        dx, dxd = np.empty(6), np.empty(6)
        _titop.cut_deflection(packed(left), packed(right), dx, dxd)
        return 0.5 * float(dx @ self.K @ dx)
