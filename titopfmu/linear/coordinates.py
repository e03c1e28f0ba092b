"""Minimal coordinates of a state vector: every attitude quaternion through a rotation vector.

A state vector x of the engine holds unit quaternions [w, x, y, z] (a root's P_{b/i}, a spherical
or free joint's P_{a/a0}). Near an operating point x0 the chart

    q = q0 ⊗ exp(δθ/2),    exp(δθ/2) = [cos(|δθ|/2), sin(|δθ|/2) δθ/|δθ|]

(δθ a local rotation vector, in the frame of the quaternion's body) replaces the 4 components by
3, every other state is kept as it is: δx = x - x0. The reduced state has nx - (number of
quaternions) components.

First-order maps at x0 (used by the linearisation, cf. ``quaternion_tangent`` in the tests):

* ``T_in`` (nx × nr): δx_full = T_in δx_red; on a quaternion block ∂q/∂δθ = ½ [q0 ⊗]_{:,1:4}
  (the 4×3 matrix Q(q0) below);
* ``T_out`` (nr × nx): δx_red = T_out δx_full; on a quaternion block δθ = 2 vec(q0* ⊗ δq) = 4
  Q(q0)^T δq (Q^T Q = I/4 for a unit q0, and a change of the norm, δq ∥ q0, maps to 0).

For the state derivative, with q̇ = ½ q ⊗ [0, ω] (ω in the body frame): T_out q̇ = ω exactly at
x0, and along the chart δθ̇ = J_r(δθ)^-1 ω = ω + ½ δθ × ω + O(δθ²): the linear model's
attitude rows are ∂δθ̇/∂δθ = -½ [ω0 ×], ∂δθ̇/∂ω = I; T_out ∂f/∂x T_in gives exactly that (the
chart's second-order term D²ψ[Q δθ, q̇0] vanishes: both have a zero scalar part in q0* ⊗ ·).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

QUATERNION = ("qw", "qx", "qy", "qz")
#: names of the rotation-vector components that replace a quaternion
ROTATION = ("rx", "ry", "rz")


def quaternion_tangent(q: np.ndarray) -> np.ndarray:
    """Q(q) = ∂(q ⊗ exp(δθ/2))/∂δθ at δθ = 0 (4×3), q = [w, x, y, z] (normalised here)."""
    w, x, y, z = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return 0.5 * np.array([[-x, -y, -z], [w, -z, y], [z, w, -x], [-y, x, w]])


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product a ⊗ b of [w, x, y, z] quaternions."""
    aw, av = a[0], a[1:]
    bw, bv = b[0], b[1:]
    return np.concatenate([[aw * bw - av @ bv], aw * bv + bw * av + np.cross(av, bv)])


def quat_exp(r: np.ndarray) -> np.ndarray:
    """exp(r/2) = [cos(|r|/2), sin(|r|/2) r/|r|] (unit quaternion of the rotation vector r)."""
    th = float(np.linalg.norm(r))
    if th < 1e-12:
        return np.concatenate([[1.0], 0.5 * r])
    return np.concatenate([[np.cos(th / 2)], np.sin(th / 2) * r / th])


def quat_log(q: np.ndarray) -> np.ndarray:
    """The rotation vector r of a unit quaternion (q = exp(r/2), |r| <= π)."""
    q = q / np.linalg.norm(q)
    if q[0] < 0:
        q = -q
    s = float(np.linalg.norm(q[1:]))
    if s < 1e-12:
        return 2.0 * q[1:]
    return 2.0 * np.arctan2(s, q[0]) * q[1:] / s


def right_jacobian(r: np.ndarray) -> np.ndarray:
    """J_r(r) of SO(3): exp(r + δ) = exp(r) exp(J_r(r) δ) to first order."""
    th = float(np.linalg.norm(r))
    K = np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])
    if th < 1e-8:
        return np.eye(3) - 0.5 * K
    return np.eye(3) - (1 - np.cos(th)) / th**2 * K + (th - np.sin(th)) / th**3 * (K @ K)


@dataclass
class Chart:
    """The reduced coordinates of an engine's state vector (see the module docstring).

    ``quats`` = offsets of the quaternions in the full state; ``names`` = full state names
    (``block.state.name``), ``reduced_names`` = reduced ones (a quaternion's ``qw..qz`` become
    ``rx, ry, rz``); ``full_of_reduced[k]`` = the full index of reduced state k (the first of a
    quaternion for its three components); ``position_level[k]`` whether reduced state k is a
    configuration (position, angle, attitude) rather than a rate.
    """

    nx: int
    quats: list[int]
    names: list[str]
    reduced_names: list[str]
    reduced_blocks: list[str]
    position_level: list[bool]

    @classmethod
    def of(cls, engine) -> Chart:
        names, reduced, blocks, level, quats = [], [], [], [], []
        slices = engine.plan.state_slices
        stateful = [b for b in engine.system.blocks.values() if len(b.state_names)]
        for b in sorted(stateful, key=lambda b: slices[b.name].start):
            sl = slices[b.name]
            sn = list(b.state_names)
            names += [f"{b.name}.state.{s}" for s in sn]
            k = 0
            while k < len(sn):
                if tuple(sn[k : k + 4]) == QUATERNION:
                    quats.append(sl.start + k)
                    reduced += [f"{b.name}.state.{s}" for s in ROTATION]
                    blocks += [b.name] * 3
                    level += [True] * 3
                    k += 4
                    continue
                reduced.append(f"{b.name}.state.{sn[k]}")
                blocks.append(b.name)
                # configuration states: positions, joint coordinates (q), not rates
                level.append(sn[k] in ("x", "y", "z", "q"))
                k += 1
        if len(names) != engine.n_states:
            raise RuntimeError(f"{len(names)} state names for {engine.n_states} states")
        return cls(engine.n_states, quats, names, reduced, blocks, level)

    @property
    def nr(self) -> int:
        return self.nx - len(self.quats)

    def _pairs(self):
        """(full index, reduced index, is a quaternion) for each full/reduced group."""
        qset = set(self.quats)
        i = r = 0
        while i < self.nx:
            if i in qset:
                yield i, r, True
                i, r = i + 4, r + 3
            else:
                yield i, r, False
                i, r = i + 1, r + 1

    def t_in(self, x0: np.ndarray) -> np.ndarray:
        """∂x/∂δx_red at x0 (nx × nr)."""
        T = np.zeros((self.nx, self.nr))
        for i, r, q in self._pairs():
            if q:
                T[i : i + 4, r : r + 3] = quaternion_tangent(x0[i : i + 4])
            else:
                T[i, r] = 1.0
        return T

    def t_out(self, x0: np.ndarray) -> np.ndarray:
        """∂δx_red/∂x at x0 (nr × nx); a quaternion's norm change maps to 0."""
        T = np.zeros((self.nr, self.nx))
        for i, r, q in self._pairs():
            if q:
                T[r : r + 3, i : i + 4] = 4.0 * quaternion_tangent(x0[i : i + 4]).T
            else:
                T[r, i] = 1.0
        return T

    def retract(self, x0: np.ndarray, d: np.ndarray) -> np.ndarray:
        """x0 ⊕ δx_red: quaternions q0 ⊗ exp(δθ/2), the rest x0 + δx (dtype of d allowed)."""
        x = np.array(x0, dtype=float)
        for i, r, q in self._pairs():
            if q:
                q0 = x0[i : i + 4] / np.linalg.norm(x0[i : i + 4])
                x[i : i + 4] = quat_mul(q0, quat_exp(np.asarray(d[r : r + 3], dtype=float)))
            else:
                x[i] = x0[i] + d[r]
        return x

    def local(self, x0: np.ndarray, x: np.ndarray) -> np.ndarray:
        """x ⊖ x0 (the inverse of :meth:`retract`)."""
        d = np.empty(self.nr)
        for i, r, q in self._pairs():
            if q:
                q0 = x0[i : i + 4] / np.linalg.norm(x0[i : i + 4])
                q0c = q0 * np.array([1, -1, -1, -1])
                d[r : r + 3] = quat_log(quat_mul(q0c, x[i : i + 4]))
            else:
                d[r] = x[i] - x0[i]
        return d

    def retract_jacobian(self, x0: np.ndarray, d: np.ndarray) -> np.ndarray:
        """∂(x0 ⊕ δ)/∂δ at δ = d (nx × nr): Q(q) J_r(δθ) on a quaternion block."""
        x = self.retract(x0, d)
        T = self.t_in(x)
        for i, r, q in self._pairs():
            if q:
                T[i : i + 4, r : r + 3] = T[i : i + 4, r : r + 3] @ right_jacobian(d[r : r + 3])
        return T

    def normalise(self, x: np.ndarray) -> np.ndarray:
        x = np.array(x, dtype=float)
        for i in self.quats:
            x[i : i + 4] /= np.linalg.norm(x[i : i + 4])
        return x
