"""The coupling over a communication step: the inputs' extrapolation, every FMU advanced.

After the loop's solution at a point (steps 1-2, :mod:`.loop`) the master

3. advances every FMU by one communication step (``fmi2DoStep``), each input a line over the
   step (value and ``fmi2SetRealInputDerivatives``): the least-squares fit over the step of the
   cubic through its last four values, fourth order in the step with RK4 inside the FMUs
   (``coupling="extrapolated"``: held at the linear extrapolation to mid-step, second order;
   ``"hold"``: held at the value at the point, first order; docs/cosim.md, "Coupling error").

:data:`OWN_STEP` names the master's own step and loop solution, for which the compiled step
(:mod:`.fastpath`) stands in.
"""

from __future__ import annotations

import math

import numpy as np

from .loop import LoopSolution


def _line_weights(s: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
    """Weights of the least-squares line over ``[0, h]`` of the polynomial through values at
    the times ``s`` (s, relative to the start of the step; distinct, at most 4): the line
    ``a + b s`` with ``a = alpha . v`` and ``b = beta . v`` (``v`` the values at ``s``). The
    line keeps the polynomial's mean ``(1/h) int p`` and first moment
    ``(12/h^3) int (s - h/2) p`` (Gauss-Legendre with 3 nodes: exact up to degree 5)."""
    x = 0.5 * h * (1.0 + np.array([-math.sqrt(0.6), 0.0, math.sqrt(0.6)]))
    w = np.array([5.0, 8.0, 5.0]) / 18.0  # weights of the mean over the step
    n = len(s)
    mu = np.empty(n)
    nu = np.empty(n)
    for j in range(n):
        lj = np.ones(3)  # the Lagrange polynomial of point j at the nodes
        for k in range(n):
            if k != j:
                lj *= (x - s[k]) / (s[j] - s[k])
        mu[j] = w @ lj
        nu[j] = 12.0 / (h * h) * (w @ ((x - 0.5 * h) * lj))
    return mu - 0.5 * h * nu, nu


class Coupling(LoopSolution):
    """Step 3: :meth:`do_step`, each coupled input sent as :attr:`coupling` says."""

    def _extrapolate_inputs(self, h: float) -> None:
        """Hold each coupled input at its value extrapolated to the middle of the step,
        ``u_n + (u_n - u_{n-1}) / 2``: the integral of a held input over the step is then right
        to O(h³), which makes the coupling second order (docs/cosim.md, "Coupling error")."""
        ratio = h / self._h_prev if self._h_prev else 0.0  # u̇ ≈ (u_n - u_{n-1}) / h_{n-1}
        self._h_prev = h
        V, P, H, D = self._V, self._P, self._H, self._D
        if not self._have_prev:
            P[:] = V
            H[:] = V
            self._have_prev = True
            return
        np.subtract(V, P, out=D)
        a = self._angles
        if a is not None:
            D[a] = (D[a] + np.pi) % (2.0 * np.pi) - np.pi
        P[:] = V
        D *= 0.5 * ratio
        np.add(V, D, out=H)
        for ch in self._hold_channels:
            ch.send()

    def _polynomial_inputs(self, h: float) -> None:
        """Send each coupled input as a line over the step ``[t, t + h]``: value ``a`` at ``t``
        and first derivative ``b`` (``fmi2SetRealInputDerivatives``), the least-squares fit over
        the step of the polynomial through the input's last values (:meth:`_line_weights`).
        With degree 3 the line's error is orthogonal to constants and ramps over the step, so
        the states err by O(h^5) per step: fourth order, given an internal method of that order
        (RK4, ``solver.method`` 4). An FMU that cannot interpolate its inputs holds the line's
        mean ``a + b h / 2`` (second order). Euler angles are extrapolated through their
        differences to the current value, wrapped to (-pi, pi]."""
        V, H, B, Vh, Th = self._V, self._H, self._B, self._Vh, self._Th
        t, m = self.t, self._Nh
        m = min(m, self._degree)  # past points used, besides the current one
        if m == 0:
            H[:] = V
            B[:] = 0.0
        else:
            alpha, beta = _line_weights(np.append(Th[4 - m :] - t, 0.0), h)
            D = Vh[4 - m :] - V
            a = self._angles
            if a is not None:
                D[:, a] = (D[:, a] + np.pi) % (2.0 * np.pi) - np.pi
            np.dot(beta[:-1], D, out=B)
            np.dot(alpha[:-1], D, out=H)
            H += V
            if len(self._mean):
                H[self._mean] += 0.5 * h * B[self._mean]
                B[self._mean] = 0.0
        # the current point joins the history (a repeated point, after a rollback, replaces)
        if not (self._Nh and Th[3] == t):
            Vh[:-1] = Vh[1:]
            Th[:-1] = Th[1:]
            self._Nh = min(self._Nh + 1, 4)
        Vh[3] = V
        Th[3] = t
        for ch in self._hold_channels:
            ch.send()
        for dch in self._deriv_channels:
            dch.send()

    def do_step(self, h: float) -> None:
        """Step 3 of the module docstring: every FMU advanced from ``t`` to ``t + h``."""
        if self._coupling == "polynomial":
            self._polynomial_inputs(h)
        elif self._coupling == "extrapolated":
            self._extrapolate_inputs(h)
        else:
            self._H[:] = self._V
        t = self.t
        for step in self._steppers:
            step(t, h)
        self.t += h


#: the master's own step and loop solution: the compiled step (:mod:`.fastpath`) stands in for
#: them only while they are not overridden
OWN_STEP = (Coupling.do_step, Coupling.solve_loop)
