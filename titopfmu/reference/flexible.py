"""A Python reference of the equations a ``FlexibleBody`` block evaluates (docs/flexible.md,
"Equations of motion" and "The TITOP block"): an independent reference, as the seeds'
formulations beside it, and the executable specification the C core's block is tested against
(the run-time physics is the core's, as for every block).

Generalised velocities u = (v, omega, qdot) (6 + n): v the velocity of P and omega the angular
velocity of the floating frame R_a, both in R_a components (m/s, rad/s); qdot the elastic rates.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..flex.checks import FlexModelError, FloatArray
from ..flex.fe import skew
from ..flex.reduce import ReducedModel


def mass_matrix_derivatives(red: ReducedModel, q: FloatArray) -> FloatArray:
    """dM/dq_k (n, 6 + n, 6 + n) at q (docs eq. (E5)): the v-omega block -(Ct_k)~, the
    omega-omega block J1_k + sum_l q_l (J2_kl + J2_lk), the omega-q block Cr1_k."""
    n = red.n_modes
    key = "_flex_dM0"
    cache = red.__dict__.get(key)
    if cache is None:  # the constant part, once per model
        dM0 = np.zeros((n, 6 + n, 6 + n))
        for k in range(n):
            s = skew(red.Ct[:, k])
            dM0[k, :3, 3:6] = -s
            dM0[k, 3:6, :3] = s
            dM0[k, 3:6, 3:6] = red.J1()[k]
            dM0[k, 3:6, 6:] = red.Cr1()[k]
            dM0[k, 6:, 3:6] = red.Cr1()[k].T
        J2s = red.J2() + np.swapaxes(red.J2(), 0, 1)
        cache = (dM0, J2s)
        red.__dict__[key] = cache  # a cache beside the frozen fields
    dM0, J2s = cache
    out = dM0.copy()
    out[:, 3:6, 3:6] += np.einsum("l,klcd->kcd", np.asarray(q, dtype=float), J2s)
    return out


def quadratic_forces(red: ReducedModel, q: FloatArray, u: FloatArray) -> FloatArray:
    """The quadratic velocity vector h(q, u) (6 + n) (docs eq. (E2)): with p = M(q) u,
    h = Mdot u + [omega x p_v; omega x p_omega + v x p_v; -1/2 u^T dM/dq u]
    (N; N m; N per unit q)."""
    q, u = np.asarray(q, dtype=float), np.asarray(u, dtype=float)
    dM = mass_matrix_derivatives(red, q)
    qd = u[6:]
    v, w = u[:3], u[3:6]
    p = red.mass_matrix(q) @ u
    h = np.einsum("k,kij,j->i", qd, dM, u)
    h[:3] += np.cross(w, p[:3])
    h[3:6] += np.cross(w, p[3:6]) + np.cross(v, p[:3])
    h[6:] -= 0.5 * np.einsum("i,kij,j->k", u, dM, u)
    return h


def load_values(
    red: ReducedModel,
    omega: FloatArray,
    a_P: FloatArray = (0.0, 0.0, 0.0),
    alpha: FloatArray = (0.0, 0.0, 0.0),
    gravity: FloatArray = (0.0, 0.0, 0.0),
    node_wrenches: Mapping[int, FloatArray] | None = None,
) -> dict[str, float]:
    """The load values lambda_k of the geometric stiffness (docs eq. (G2), §6 "Load values of
    (G2)"): the frame's acceleration minus gravity a_P - g (m/s^2), alpha (rad/s^2), the
    products omega_i omega_j (rad^2/s^2), and each node's applied wrench (N, N m), all in R_a;
    ``node_wrenches`` maps a node's finite-element index j to the wrench (force, moment about
    the node) applied on the body at node j, the values of the cases ``node<j>.fx`` ... ``mz``
    (a force +x_a at the tip of a beam along +x_a: tension, the KG of titopfmu.flex.beam)."""
    a = np.asarray(a_P, dtype=float) - np.asarray(gravity, dtype=float)
    al, w = np.asarray(alpha, dtype=float), np.asarray(omega, dtype=float)
    vals = {"ax": a[0], "ay": a[1], "az": a[2], "alx": al[0], "aly": al[1], "alz": al[2],
            "wxx": w[0] ** 2, "wyy": w[1] ** 2, "wzz": w[2] ** 2, "wxy": w[0] * w[1],
            "wyz": w[1] * w[2], "wxz": w[0] * w[2]}  # fmt: skip
    for node, wrench in (node_wrenches or {}).items():
        for name, value in zip(("fx", "fy", "fz", "mx", "my", "mz"), wrench, strict=True):
            vals[f"node{node}.{name}"] = float(value)
    return {k: float(v) for k, v in vals.items() if k in red.load_cases}


def node_forces(
    red: ReducedModel, q: FloatArray, node: int, force: FloatArray, moment: FloatArray
) -> FloatArray:
    """Generalised forces (6 + n) of a force (N) and a moment (N m) applied at a node of
    interest (its finite-element index), R_a components (docs eq. (E4)):
    [F; x_j(q) x F + tau; Phi_t,j^T F + Phi_r,j^T tau], x_j(q) = r_j + Phi_t,j q."""
    if node not in red.node_ids:
        raise FlexModelError(red.name, "'node'", f"node {node} is not a node of interest")
    j = red.node_ids.index(node)
    shape = red.node_shapes[j]
    F, tau = np.asarray(force, dtype=float), np.asarray(moment, dtype=float)
    x = red.node_positions[j] + shape[:3] @ np.asarray(q, dtype=float)
    return np.concatenate([F, np.cross(x, F) + tau, shape[:3].T @ F + shape[3:].T @ tau])


def gravity_forces(red: ReducedModel, q: FloatArray, g: FloatArray) -> FloatArray:
    """Generalised forces (6 + n) of a uniform field g (m/s^2, R_a):
    [m g; (m c + Ct q) x g; Ct^T g]."""
    g = np.asarray(g, dtype=float)
    mc = red.first_moment + red.Ct @ np.asarray(q, dtype=float)
    return np.concatenate([red.mass * g, np.cross(mc, g), red.Ct.T @ g])


def elastic_forces(red: ReducedModel, q: FloatArray, qd: FloatArray,
                   loads: Mapping[str, float]) -> FloatArray:  # fmt: skip
    """(Kee + sum_k lambda_k KG_k) q + De qdot (n) (docs eq. (E3))."""
    return red.stiffness(dict(loads)) @ np.asarray(q) + red.damping() @ np.asarray(qd)


def accelerations(
    red: ReducedModel, q: FloatArray, u: FloatArray, f: FloatArray, loads: Mapping[str, float]
) -> FloatArray:
    """udot of the free body (docs eq. (E1)): M(q) udot = f - h(q, u) - [0; 0; elastic], f
    the generalised external forces (6 + n)."""
    rhs = np.asarray(f, dtype=float) - quadratic_forces(red, q, u)
    rhs[6:] -= elastic_forces(red, q, u[6:], loads)
    return np.linalg.solve(red.mass_matrix(q), rhs)


def articulated_inertia(red: ReducedModel, q: FloatArray) -> FloatArray:
    """The body's 6 x 6 articulated inertia at P (docs eq. (T2)): the Schur complement
    M_rr - M_re Mee^-1 M_er of the mass matrix M(q), positive definite with M(q)."""
    M = red.mass_matrix(q)
    return M[:6, :6] - M[:6, 6:] @ np.linalg.solve(M[6:, 6:], M[6:, :6])


def titop_direct(
    red: ReducedModel,
    q: FloatArray,
    u: FloatArray,
    a_P: FloatArray,
    alpha: FloatArray,
    f: FloatArray,
    loads: Mapping[str, float],
) -> tuple[FloatArray, FloatArray]:
    """The block's direct model (docs eqs. (T1)-(T3)): given the parent port's motion (u's v,
    omega; the acceleration a_P of P (m/s^2) and alpha (rad/s^2), R_a) and the applied
    generalised forces f (the children's wrenches, gravity, external), return ``(qddot,
    W_P)``: the elastic accelerations and the wrench (force N, moment about P N m, R_a) the body
    applies on its parent at P."""
    u = np.asarray(u, dtype=float)
    M = red.mass_matrix(q)
    h = quadratic_forces(red, q, u)
    h[6:] += elastic_forces(red, q, u[6:], loads)
    rdot = np.concatenate([np.asarray(a_P) - np.cross(u[3:6], u[:3]), np.asarray(alpha)])
    f = np.asarray(f, dtype=float)
    qdd = np.linalg.solve(M[6:, 6:], f[6:] - h[6:] - M[6:, :6] @ rdot)
    W_parent_on_body = M[:6, :6] @ rdot + M[:6, 6:] @ qdd + h[:6] - f[:6]
    return qdd, -W_parent_on_body


def load_value_columns(
    red: ReducedModel,
    omega: FloatArray,
    a_P: FloatArray,
    alpha: FloatArray,
    gravity: FloatArray,
    node_wrenches: Mapping[int, FloatArray] | None = None,
) -> FloatArray:
    """The load values of :func:`load_values` for m evaluations at once, as a (ncases, m)
    array in the order of ``red.load_cases`` (a case without a value: 0): omega, a_P, alpha,
    gravity (3,) or (3, m) (rad/s, m/s^2, rad/s^2, m/s^2; R_a), ``node_wrenches`` maps a node's
    finite-element index to its (6,) or (6, m) wrench (force N, moment about the node N m,
    R_a). Broadcast over the columns: e.g. omega = 0 for the part of the values linear in the
    accelerations (docs/flexible.md §6, "Load values of (G2)")."""
    cols = [np.asarray(a, dtype=float).reshape(np.shape(a)[0], -1)
            for a in (omega, a_P, alpha, gravity)]  # fmt: skip
    m = max(c.shape[1] for c in cols)
    for w in (node_wrenches or {}).values():
        m = max(m, np.asarray(w).reshape(6, -1).shape[1])
    w, a, al, g = (np.broadcast_to(c, (3, m)) for c in cols)
    acc = a - g
    rows = {"ax": acc[0], "ay": acc[1], "az": acc[2], "alx": al[0], "aly": al[1],
            "alz": al[2], "wxx": w[0] ** 2, "wyy": w[1] ** 2, "wzz": w[2] ** 2,
            "wxy": w[0] * w[1], "wyz": w[1] * w[2], "wxz": w[0] * w[2]}  # fmt: skip
    for node, wrench in (node_wrenches or {}).items():
        W = np.broadcast_to(np.asarray(wrench, dtype=float).reshape(6, -1), (6, m))
        for name, row in zip(("fx", "fy", "fz", "mx", "my", "mz"), W, strict=True):
            rows[f"node{node}.{name}"] = row
    out = np.zeros((len(red.load_cases), m))
    for i, case in enumerate(red.load_cases):
        if case in rows:
            out[i] = rows[case]
    return out


def geometric_columns(red: ReducedModel, q: FloatArray) -> FloatArray:
    """The columns KG_c q (n, ncases) of the geometric stiffness' load cases at q (docs eq.
    (E3)): the elastic generalised forces of load values lambda (ncases) are
    (KG_c q)_c lambda (N per unit q)."""
    KG = np.asarray(red.KG, dtype=float).reshape(len(red.load_cases), red.n_modes, red.n_modes)
    return np.einsum("cij,j->ic", KG, np.asarray(q, dtype=float))
