"""The algebraic loop at a communication point, solved with the FMUs' interface Jacobians.

At every communication point the master

1. resolves, in dependency order (the FMUs' ``ModelStructure``), every input that does not
   depend on the loop: twists and poses flow down the tree (``P.m[7..18]`` from the parent's
   ``Cj.m[7..18]``), loop closures turn them into wrenches, signal FMUs (joint laws) read joint
   motions and give efforts;
2. solves the algebraic loop of the tree — accelerations down (``P.m[1..6]``), wrenches up
   (``Cj.W``) — with the same :class:`~titopfmu.assembly.loop_solver.TreeLoopSolver` as the
   in-process engine. Each FMU is affine in its loop inputs at a fixed point, ``y = M u + c``:
   ``M`` comes from the FMU's directional derivatives (``fmi2GetDirectionalDerivative``,
   exact), or by unit perturbations through set/get for an FMU that does not provide them
   (exact up to rounding, the map being affine), and is reused across steps; ``c`` comes from
   the outputs at the current inputs.
   The loop inputs start from the polynomial through their last solutions (``guess_order``).
   A body's outputs are read once, with its pre-loop values; inputs written to it after that
   read (its *late* inputs: a joint law's effort, a loop closure's wrench) are then carried to
   its outputs by more measured columns of its Jacobian, and sent with the first iteration.
   Each iteration is a chord step of Newton's method on the reused Jacobians. The residual after an
   iteration is exactly each FMU's mismatch between its outputs and their prediction by its
   Jacobian: when that mismatch, shrunk by the last contraction, predicts that the next iteration
   would not reach a tenth of the tolerance, the Jacobians of those FMUs only are measured again,
   so that the next iteration is exact for them. The residual decides, not the age of the
   Jacobians; the convergence does not depend on mass ratios (about one iteration per step, at most
   two in practice). Every mismatch is relative to the scale of the loop equation it belongs to,
   a group of three of one unit at one port, judged against the largest of that unit in the
   model (:meth:`LoopSolution._residual`), and so is every threshold of the solve (convergence,
   the shares, the rounding below which a Jacobian is not measured again, the size of a probe):
   the solve takes the same decisions on a system scaled in mass and length (the balloon scaled
   by 1e-6 and 1e6, tests/test_scale_invariance.py).
   ``loop="gauss-seidel"`` instead passes outputs to inputs in tree order, repeated until
   convergence: a fixed-point iteration that converges only when the children
   are light compared with their parents (kept for comparison).

Step 3, every FMU advanced over the next communication step, is :mod:`.coupling`'s.
"""

from __future__ import annotations

import math

import numpy as np

from ..assembly.loop_solver import LoopSolveError
from ..blocks.loop_map import LoopMap
from .binding import Binding, _Body
from .components import CosimError

#: the floor of a loop equation's scale, against a division by zero only
TINY = 1e-300
#: a relative mismatch below this is rounding (64 units in the last place)
ROUNDING = 64.0 * np.finfo(float).eps


def _group_max(v: np.ndarray) -> np.ndarray:
    """The largest of each group of three (NaN if one is), repeated over the group."""
    return np.repeat(v.reshape(-1, 3).max(axis=1), 3)


def _unit_max(g: np.ndarray, units: np.ndarray) -> np.ndarray:
    """The largest of ``g`` over the equations of each unit (NaN if one is), at each."""
    top = np.zeros(int(units.max(initial=-1)) + 1)
    np.maximum.at(top, units, g)
    return top[units]


def scales(y: np.ndarray, a: np.ndarray, tolerance: float, known: np.ndarray | None = None,
           units: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """The scale of every loop equation, from its output's size ``y = |Y_j|`` and the interface
    matrix ``a = |A|`` (``A_ji``: the derivative of output j in loop input i; zero between
    bodies), for a residual ``tolerance``; ``known``: the equations whose input is read by a
    body whose Jacobian is measured (:func:`_fed`; None: none); ``units``: the unit of each
    equation (:func:`.plan.loop_units`; None: each group of three its own).

    The equations go by groups of three of one unit at one port (a linear acceleration, an
    angular acceleration, a force, a torque; ``Binding._bind_scales``), and a group is judged as
    one vector: its size ``G`` is its largest output. Its *terms* ``N`` are the size of what the
    Jacobians make it of, two links deep (an acceleration from wrenches, these from
    accelerations: the loop's round trip): ``N = max(G, |A| max(G, |A| G))`` by groups. A
    group's scale is the largest ``G`` of its unit in the whole model (all the forces, all the
    torques, all the linear, all the angular accelerations: a mismatch is judged against the
    size of what it is a mismatch of in the model, not against its own port's size, which
    may be small by chance, as the small torque between two pendulums of the balloon; scaling
    the system in mass and length scales every variable of a unit alike), but not below ``N``
    times the rounding over the tolerance: a group that is zero in the motion (the torques at
    the joints of a planar mechanism, the acceleration of a body that nothing pushes), or the
    small difference of large terms, is then converged when its mismatch is rounding of its
    terms, all that floating point can give. Nor below the rounding over the tolerance times
    what the equation feeds (:func:`_fed`): a mismatch whose effect on every output it feeds is
    below rounding of that output's terms is converged (an output that no Jacobian makes of
    anything, a ball joint's torque, has no terms of its own). Every scale is in the unit of
    its variables and follows them when the system is scaled in mass, length or time: no
    absolute floor (1e-300 against a division by zero only)."""
    g = _group_max(y)
    n = _group_max(np.maximum(g, a.dot(g)))
    n = _group_max(np.maximum(g, a.dot(n)))
    k = ROUNDING / tolerance if tolerance > ROUNDING else 1.0
    top = g if units is None else _unit_max(g, units)
    return np.maximum(np.maximum(np.maximum(top, k * n), k * _fed(n, a, known)), TINY)


def _fed(n: np.ndarray, a: np.ndarray, known: np.ndarray | None = None) -> np.ndarray:
    """What each loop equation feeds, in its own unit: ``C_i = min_j N_j / A_ji`` over the
    equations j whose output depends on its input (``A_ji > 0``), the smallest over its group
    (NaN if one is). A mismatch of equation i below ``C_i`` times the rounding moves every
    output it feeds by less than rounding of that output's terms: it is rounding for the loop,
    whatever the equation's own size. This is the scale of an output that the Jacobians make of
    nothing, such as a joint's torque about its free axes (zero in exact arithmetic whatever the
    inputs: its value is the rounding of terms inside its FMU that no Jacobian shows, and its
    terms ``N`` are its own rounding noise), which would otherwise be judged against that noise
    and not converge: a ball joint's torque at its parent in the MJCF floater of
    tests/test_mjcf.py ('left.W of left_foot': no convergence at all), a pin's torque on the
    fixed ground in examples/four_bar.py (a second iteration and a Jacobian measured again at
    every other step). A group that feeds no output is infinite (its mismatch moves nothing:
    the wrench a fixed ground reads) when the Jacobian of the body that reads it is measured
    (``known``), else 0: a Jacobian not measured yet (zero) or to be measured again says
    nothing."""
    on = a > 0.0
    q = np.where(on, n[:, None] / np.where(on, a, 1.0), np.inf).min(axis=0)
    q[(q == np.inf) & (True if known is None else ~known)] = 0.0
    return np.repeat(q.reshape(-1, 3).min(axis=1), 3)  # NaN if one is


class LoopSolution(Binding):
    """Steps 1-2 at the current time: :meth:`solve_loop` (Newton's chord iterations, or
    Gauss-Seidel sweeps with ``loop="gauss-seidel"``)."""

    def _read_y(self, b: _Body) -> None:
        out = b.ych.get()
        b.Yv[:] = out[: b.ny]
        self._E[b.se] = out[b.ny :]

    def _set_u(self, i: int, u: np.ndarray) -> None:
        """Send body i's loop inputs ``u`` (and its late inputs' current values)."""
        b = self._bodies[i]
        b.xv[: b.nu] = u
        b.xch.send()

    def _outputs(self, i: int) -> np.ndarray:
        b = self._bodies[i]
        self._read_y(b)
        return b.Yv

    def _guess(self) -> np.ndarray | None:
        """First guess of the inputs that move in the solve (loop inputs, late inputs): the
        polynomial through their values at the last ``guess_order + 1`` points, extrapolated to
        the current time (None before the first point)."""
        pts = self._hist[-(self.guess_order + 1) :]
        if not pts:
            return None
        t = self.t
        g = None
        for k, (tk, uk) in enumerate(pts):
            w = 1.0
            for j, (tj, _) in enumerate(pts):
                if j != k:
                    w *= (t - tj) / (tk - tj)
            g = w * uk if g is None else g + w * uk
        return g

    def _pre_loop(self, newton: bool) -> None:
        """Step 1 of the module docstring: the loop's first guess written, the pre-loop values
        passed on, every body's loop outputs read at the guess."""
        if newton:
            g = self._guess()
            if g is not None:
                self._V[self._g] = g
        else:  # Gauss-Seidel starts from the inputs held over the last step
            self._V[self._lcv] = self._H[self._lcv]
        self._run(self._ops_rt)

    def _post_loop(self) -> None:
        self._run(self._post_rt)
        V = self._V
        for ch, idx in self._flush_rt:
            ch.set_from(V, idx)
        point = (self.t, V[self._g])
        if self._hist and self._hist[-1][0] == self.t:
            self._hist[-1] = point
        else:
            self._hist.append(point)
            del self._hist[: -(self.guess_order + 1)]

    def _measure(self, i: int) -> None:
        """The Jacobian ``Mx`` of body i (in place), column by column: from the FMU's directional
        derivatives (``fmi2GetDirectionalDerivative``, exact) when it provides them, else by
        perturbations of its inputs at the point where its outputs were read (the map being
        affine, exact up to rounding; the FMU is then left at the last probe: the iteration that
        follows sends every body's inputs), each of the size of its input (:meth:`_probes`).
        Columns of inputs that do not move during a solve (a free port's held wrench) stay
        zero."""
        b = self._bodies[i]
        Mx = b.Mx
        Mx[:] = 0.0
        if b.dd is not None:
            for k in b.cols:
                Mx[:, k] = b.dd.column(b.xnames[k])
        else:
            y0 = b.Yv.copy()
            x = b.xv
            kept = x.copy()
            x[:] = b.x_read
            size = self._probes(b)
            for k in b.cols:
                x[k] += size[k]
                step = x[k] - b.x_read[k]  # the step made, rounded
                b.xch.send()
                Mx[:, k] = (b.ych.get()[: b.ny] - y0) / step
                x[k] = b.x_read[k]
            x[:] = kept
        b.map = LoopMap.from_dense(b.M, b.c, b.has_parent, b.n_children)
        self._mx_dirty = True
        self.stats.jacobian_updates += 1

    def _probes(self, b: _Body) -> np.ndarray:
        """The perturbation of each input of body ``b`` that measures its Jacobian column: the
        size of its unit group (the three components of a force, of an acceleration, ...) at
        the point read, or, for a loop input, the scale of its loop equation at the last
        residual if larger; 1 (in the input's own unit) only when all of these are zero,
        nothing else being known of its scale."""
        sv = self._sV[b.xs]  # infinite for an input that feeds no output (loop._fed)
        size = np.maximum(np.abs(b.x_read), np.where(sv < np.inf, sv, 0.0))
        top = np.zeros(int(b.xgroups.max(initial=-1)) + 1)
        np.maximum.at(top, b.xgroups, size)
        size = top[b.xgroups]
        size[~((size > 0.0) & np.isfinite(size))] = 1.0
        return size

    def _residual(self, Y: np.ndarray | None = None, V: np.ndarray | None = None):
        """Largest mismatch between a loop input and the output that feeds it, relative to the
        scale of its loop equation (:func:`scales`); with the variable's name. Sets the scales
        of every equation at its output (``_sY``, for the predicted shares of :meth:`_newton`)
        and at its input (``_sV``, for the probes of :meth:`_measure`)."""
        Y = self._Y if Y is None else Y
        V = self._V if V is None else V
        if not len(self._res_u):
            return 0.0, ""
        a = np.where(self._a_on, np.abs(self._MX[self._a_idx]), 0.0)
        # the bodies whose Jacobian is measured (not to be measured again), and False last for
        # an input that no body reads (index -1)
        measured = np.array([b.map is not None for b in self._bodies] + [False])
        s = scales(np.abs(Y[self._res_y]), a, self._tol, measured[self._cb], self._res_unit)
        self._sY[self._res_y] = s
        self._sV[self._res_uv] = s
        r = np.abs(V[self._res_uv] - Y[self._res_y]) / s
        k = int(r.argmax())  # the first NaN, if any
        return float(r[k]), self._res_names[k]

    def _newton(self, tolerance: float, max_iterations: int) -> int:
        """Chord iterations on the reused interface Jacobians (module docstring, step 2)."""
        bodies = self._bodies
        Y, dY = self._Y, self._dY
        forced = self._forced
        res, where = (math.inf, "") if forced else self._residual()
        it = 0
        dot, subtract = np.dot, np.subtract
        while not res <= tolerance or (forced and it == 0):
            if it >= max_iterations or (it and not math.isfinite(res)):
                raise CosimError(
                    f"the algebraic loop did not converge: residual {res:.3g} at '{where}' "
                    f"after {it} iterations", self.t,
                )  # fmt: skip
            for i, b in enumerate(bodies):
                if b.map is None:
                    self._measure(i)
                    self._maps = None
                # y = Mx x + const at this point: y = M u + c with the late inputs at their
                # current values (before the first iteration they differ from x_read)
                dot(b.Mx, b.x_read, out=b.tmp)
                subtract(b.Yv, b.tmp, out=b.c)
                if b.nl:
                    b.c += dot(b.N, b.xl)
            if self._maps is None:
                self._maps = [b.map for b in bodies]
            try:
                sol = self.solver.solve(self._maps, self._known)
            except LoopSolveError as exc:
                raise CosimError(
                    f"singular loop equations at component '{self.order[exc.node]}'", self.t
                ) from None
            np.copyto(dY, Y)
            if it == 0 and forced:
                np.copyto(self._Vg, self._V)  # the first guess
            for i, b in enumerate(bodies):
                b.xu[:] = sol.u(i)
                b.xch.send()
            for b in bodies:
                out = b.ych.get()
                b.Yv[:] = out[: b.ny]
                if b.ne:
                    self._E[b.se] = out[b.ny :]
            it += 1
            r_prev = res
            res, where = self._residual()
            refresh = res > tolerance and math.isfinite(res)
            if refresh and it == 1 and forced:
                # the residual at the first guess as the maps predicted it: its loop inputs,
                # the late ones at their new values
                Yp = self._Yp
                Vg = self._Vg
                for b in bodies:
                    np.add(b.c, dot(b.M, Vg[b.xs][: b.nu]), out=Yp[b.sy])
                r_prev = self._residual(Yp, Vg)[0]
                self._residual()  # the scales at Y
            # at a fixed time each FMU is affine: the residual is the mismatch between the
            # outputs and their prediction by the maps, (Y - Y_old) - Mx (x - x_read). The
            # Jacobians are exact where measured; they age as the states move
            subtract(Y, dY, out=dY)
            ratio = min(1.0, res / r_prev) if r_prev > 0.0 else 1.0
            sY = self._sY
            for b in bodies:
                d = subtract(b.xv, b.x_read)
                b.x_read[:] = b.xv
                if refresh and len(b.feed):
                    mis = subtract(dY[b.sy], dot(b.Mx, d, out=b.tmp), out=b.tmp)
                    # the last iteration contracted the residual by `ratio`; a body's mismatch
                    # at the outputs that feed a loop input, relative to their equations'
                    # scales and shrunk by that ratio, predicts its share of the next residual.
                    # Measure again, so that the next iteration is exact for them, the bodies
                    # whose share would stay above a tenth of the tolerance and whose mismatch
                    # is above rounding (Broyden updates along the step, which an earlier
                    # master made, are not worth their cost with exact Jacobians)
                    worst = float((np.abs(mis[b.feed]) / sY[b.sy][b.feed]).max())
                    if worst > ROUNDING and worst * ratio > 0.1 * tolerance:
                        b.map = None
        return it

    def _gauss_seidel(self, tolerance: float) -> int:
        """Fixed-point iteration: accelerations passed down in tree order, then wrenches up, until
        the residual is below ``tolerance``. Converges only when the children are light compared
        with their parents (the iteration's gain is about the mass ratio)."""
        count = len(self.order)
        try:
            return self._gauss_seidel_sweeps(tolerance, count)
        except CosimError as exc:
            if "Gauss-Seidel" in str(exc):
                raise
            raise CosimError(f"Gauss-Seidel diverged ({exc})", self.t) from None

    def _gauss_seidel_sweeps(self, tolerance: float, count: int) -> int:
        res, where, it = math.inf, "", 0
        bodies = self._bodies
        for it in range(1, self.gauss_seidel_max_iterations + 1):
            for i in range(count):  # down: each child takes its parent's latest acceleration
                node = self.nodes[i]
                if node.has_parent:
                    p = node.parent
                    yp = self._outputs(p)
                    off = 6 if self.nodes[p].has_parent else 0
                    u = bodies[i].xv[: bodies[i].nu].copy()
                    u[0:6] = yp[off + 6 * node.parent_slot : off + 6 * node.parent_slot + 6]
                    self._set_u(i, u)
            for i in reversed(range(count)):  # up: each parent takes its children's wrenches
                node = self.nodes[i]
                if node.has_parent:
                    p = node.parent
                    w = self._outputs(i)[0:6]
                    off = 6 if self.nodes[p].has_parent else 0
                    u = bodies[p].xv[: bodies[p].nu].copy()
                    u[off + 6 * node.parent_slot : off + 6 * node.parent_slot + 6] = w
                    self._set_u(p, u)
            for i in range(count):
                self._outputs(i)
            res, where = self._residual()
            if not np.isfinite(res):
                break
            if res <= tolerance:
                return it
        raise CosimError(
            f"Gauss-Seidel did not converge: residual {res:.3g} at '{where}' after {it} sweeps "
            "(children whose apparent inertia is not small compared with their parent's make "
            "the fixed point slow or unstable; use loop='newton')",
            self.t,
        )

    def solve_loop(self, tolerance: float = 1e-8, max_iterations: int = 5) -> None:
        """Steps 1-2 of the module docstring at the current time: on return every input the
        master writes holds its value at this point, and the loop residual is below
        ``tolerance`` (:attr:`last_iterations` iterations, 0 when the first guess already is)."""
        newton = self.loop != "gauss-seidel"
        self._tol = tolerance  # the residual's scales depend on it (loop.scales)
        self._pre_loop(newton)
        if newton:
            self.last_iterations = self._newton(tolerance, max_iterations)
        else:
            for i, b in enumerate(self._bodies):
                if b.nu < len(b.xv):  # the late inputs first
                    self._set_u(i, b.xv[: b.nu])
            self.last_iterations = self._gauss_seidel(tolerance)
        self.stats.iterations += self.last_iterations
        self._post_loop()
