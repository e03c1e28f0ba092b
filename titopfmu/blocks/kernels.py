"""The body and joint equations of seed 004 as Python kernels, for the object path.

The physics runs in the C core (:mod:`titopfmu.core`, ``csrc/``) for the engine and the native
FMUs; these kernels are its second copy, kept for the object blocks of
:mod:`titopfmu.blocks.bodies` and :mod:`titopfmu.blocks.joints` (a user's block subclass, the
signals the core does not give). ``tests/test_native.py`` holds the two equal to 1e-12. Each
kernel reads parameters and inputs from float64 arrays and writes its results into output
arrays.

Frames and units as in :mod:`titopfmu.blocks.bodies`: a body's quantities in its frame R_a, the
parent port in the parent frame R_b, gravity in R_i; SI units.
"""

from __future__ import annotations

import math

import numpy as np

from ..spatial.kernels import (
    euler_quaternion,
    kernel,
    matrix_view,
    maxpy,
    mm,
    mneg,
    mtm,
    mtv,
    mv,
    quaternion_dcm,
    quaternion_rate_into,
    rotation_vector_into,
    unpack3,
    unpack6,
    unpack33,
    vadd,
    vneg,
    vsub,
)


@kernel
def body_bias(D, mass, com, gravity, twist, R, out):
    """``out`` = h = C(x'_P) D_P x'_P - D_P [g; 0] (eqs. 4, 7 and 11), in R_a.

    With ``[p_1; p_2] = D_P x'_P``: ``C(x') p = [ω × p_1 ; v × p_1 + ω × p_2]`` (eq. 7) and
    ``D_P [g; 0] = [m g ; m PB × g]`` (eq. 4), g projected in R_a (``R`` = P_{a/i}, ``com`` = PB).
    External wrenches are added by :func:`add_external_wrench`.
    """
    p = np.empty(6)
    mv(D, twist, p)
    vx, vy, vz, wx, wy, wz = unpack6(twist)
    a, b, c, d, e, f = unpack6(p)
    g0, g1, g2 = unpack3(gravity)
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = unpack33(R)
    gx = r00 * g0 + r10 * g1 + r20 * g2  # [g]_{R_a} = P_{a/i}^T [g]_{R_i}
    gy = r01 * g0 + r11 * g1 + r21 * g2
    gz = r02 * g0 + r12 * g1 + r22 * g2
    bx, by, bz = unpack3(com)
    out[0] = wy * c - wz * b - mass * gx
    out[1] = wz * a - wx * c - mass * gy
    out[2] = wx * b - wy * a - mass * gz
    out[3] = vy * c - vz * b + wy * f - wz * e - mass * (by * gz - bz * gy)
    out[4] = vz * a - vx * c + wz * d - wx * f - mass * (bz * gx - bx * gz)
    out[5] = vx * b - vy * a + wx * e - wy * d - mass * (bx * gy - by * gx)


@kernel
def add_external_wrench(out, w, point, inertial, R):
    """``out -= τ_EP^T W_E`` (eq. 13): the external wrench ``w`` = [F; T] (torque about E) at
    ``point`` = PE (R_a), given in R_i if ``inertial`` (then rotated by P_{a/i}^T) else in R_a;
    ``τ_EP^T [F; T] = [F ; T + PE × F]``."""
    Fx, Fy, Fz, Tx, Ty, Tz = unpack6(w)
    if inertial:  # [F; T]_{R_a} = P^{x2}_{i/a} [F; T]_{R_i}
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = unpack33(R)
        Fx, Fy, Fz = (r00 * Fx + r10 * Fy + r20 * Fz,
                      r01 * Fx + r11 * Fy + r21 * Fz,
                      r02 * Fx + r12 * Fy + r22 * Fz)  # fmt: skip
        Tx, Ty, Tz = (r00 * Tx + r10 * Ty + r20 * Tz,
                      r01 * Tx + r11 * Ty + r21 * Tz,
                      r02 * Tx + r12 * Ty + r22 * Tz)  # fmt: skip
    px, py, pz = unpack3(point)
    out[0] -= Fx
    out[1] -= Fy
    out[2] -= Fz
    out[3] -= Tx + py * Fz - pz * Fy
    out[4] -= Ty + pz * Fx - px * Fz
    out[5] -= Tz + px * Fy - py * Fx


@kernel
def child_port_kinematics(tau_c, pc, twist, ip, twist_c, ip_c):
    """Definition 1 at the child port C: ``twist_c = τ_CP x'_P``, ``ip_c = IP + PC`` (R_a)."""
    mv(tau_c, twist, twist_c)
    ip_c[0] = ip[0] + pc[0]
    ip_c[1] = ip[1] + pc[1]
    ip_c[2] = ip[2] + pc[2]


# -- joint kinematics: ẋ'_A = G ẋ'_B + e + S q̈, x'_A = G x'_B + S q̇ (joints.py) --------------


@kernel
def revolute_kinematics(Gc, r, th, thd, twist_b, ip_b, R_bi, gr, e, twist, ip, R):
    """Revolute joint (eqs. 16-17). ``gr`` (45) = [vec G (36) ; vec P_{aθ/b} (9)] with
    ``P_{aθ/b} = P_{a0/b} (1 + sin θ K + (1 - cos θ) K²)`` (Rodrigues form of eq. 16, K = (*r̃))
    and ``G = diag(P_{aθ/b}^T, P_{aθ/b}^T)``: ``gr = Gc (1, sin θ, 1 - cos θ)``.

    ``e = -θ̇ [(*r̃) v ; (*r̃) ω]`` and ``x'_A = x'_0 + θ̇ [0 ; r̃]`` with ``[v; ω] = x'_0 = G x'_B``
    (eq. 17); ``ip`` = P_{aθ/b}^T [IP]_{R_b}, ``R`` = P_{a/i} = P_{b/i} P_{aθ/b}.
    """
    co = np.empty(3)
    co[0] = 1.0
    co[1] = math.sin(th)
    co[2] = 1.0 - math.cos(th)
    mv(Gc, co, gr)
    G = matrix_view(gr, 6, 6)
    R_ab = matrix_view(gr[36:45], 3, 3)
    tw0 = np.empty(6)
    mv(G, twist_b, tw0)
    vx, vy, vz, wx, wy, wz = unpack6(tw0)
    rx, ry, rz = unpack3(r)
    e[0] = thd * (rz * vy - ry * vz)
    e[1] = thd * (rx * vz - rz * vx)
    e[2] = thd * (ry * vx - rx * vy)
    e[3] = thd * (rz * wy - ry * wz)
    e[4] = thd * (rx * wz - rz * wx)
    e[5] = thd * (ry * wx - rx * wy)
    twist[0] = vx
    twist[1] = vy
    twist[2] = vz
    twist[3] = wx + thd * rx
    twist[4] = wy + thd * ry
    twist[5] = wz + thd * rz
    mtv(R_ab, ip_b, ip)
    mm(R_bi, R_ab, R)


@kernel
def prismatic_kinematics(Gr, Gx, t, R_ab, x, xd, twist_b, ip_b, R_bi, G, e, twist, ip, R):
    """Prismatic joint (eq. 24): ``G = τ_{-x t̃} P^{×2}_{b/a} = Gr + x Gx``, ``x'_A = G x'_B +
    ẋ [t̃; 0]``, ``e = [-ẋ (*t̃) ω ; 0]``, ``ip = P_{b/a} [IP0]_{R_b} + x t̃``, ``R = P_{b/i}
    P_{a/b}``."""
    maxpy(Gr, x, Gx, G)
    tw0 = np.empty(6)
    mv(G, twist_b, tw0)
    tx, ty, tz = unpack3(t)
    vx, vy, vz, wx, wy, wz = unpack6(tw0)
    twist[0] = vx + xd * tx
    twist[1] = vy + xd * ty
    twist[2] = vz + xd * tz
    twist[3] = wx
    twist[4] = wy
    twist[5] = wz
    e[0] = xd * (wy * tz - wz * ty)
    e[1] = xd * (wz * tx - wx * tz)
    e[2] = xd * (wx * ty - wy * tx)
    e[3] = 0.0
    e[4] = 0.0
    e[5] = 0.0
    mtv(R_ab, ip_b, ip)
    ip[0] += x * tx
    ip[1] += x * ty
    ip[2] += x * tz
    mm(R_bi, R_ab, R)


@kernel
def weld_kinematics(Gc, R_ab, twist_b, ip_b, R_bi, G, e, twist, ip, R):
    """Welding joint (eq. 15): ``G = P^{×2}_{b/a}`` constant, ``e = 0``, ``x'_A = G x'_B``,
    ``ip = P_{b/a} [IP]_{R_b}``, ``R = P_{b/i} P_{a/b}``."""
    G[:, :] = Gc
    e[:] = 0.0
    mv(G, twist_b, twist)
    mtv(R_ab, ip_b, ip)
    mm(R_bi, R_ab, R)


@kernel
def relative_motion_bias_into(tw0, su, e):
    """Velocity-product term ``e = x'_0 ×ₘ (S u) = -C(x'_0)^T S u`` of a joint, in R_a.

    ``tw0`` = x'_0 = [v_0, ω_0] is the parent's twist carried to P and projected in R_a
    (``G x'_B``), ``su`` = [v_r, ω_r] = S u the relative twist of A w.r.t. B at P (m/s, rad/s,
    R_a), C the operator of eq. (7). Differentiating ``x'_A = x'_0 + S u`` in R_a (``d/dt|_a =
    d/dt|_b - (*ω_r)``, ``d(PO)/dt|_b = v_r``) gives ``e = [(*ω_0) v_r - (*ω_r) v_0 ; -(*ω_r)
    ω_0]``: for ``S u = θ̇ [0; r̃]`` it is the velocity-product part of eq. (17), for ``S u = ẋ
    [t̃; 0]`` that of eq. (24). Used by the spherical and free joints.
    """
    v0x, v0y, v0z, w0x, w0y, w0z = unpack6(tw0)
    vrx, vry, vrz, wrx, wry, wrz = unpack6(su)
    e[0] = w0y * vrz - w0z * vry + v0y * wrz - v0z * wry
    e[1] = w0z * vrx - w0x * vrz + v0z * wrx - v0x * wrz
    e[2] = w0x * vry - w0y * vrx + v0x * wry - v0y * wrx
    e[3] = w0y * wrz - w0z * wry
    e[4] = w0z * wrx - w0x * wrz
    e[5] = w0x * wry - w0y * wrx


@kernel
def quaternion_joint_kinematics(R_a0b, quat, r, u, twist_b, ip_b, R_bi, G, e, twist, ip, R,
                                R_ab):  # fmt: skip
    """Spherical joint (``r`` empty, ``u`` = ω_r, 3) or free joint (``r`` = [OP]_{R_b}, ``u`` =
    [v_r; ω_r], 6); see joints.SphericalJoint / FreeJoint. ``R_ab`` = P_{a/b} = P_{a0/b}
    P_{a/a0}(quat), ``G = P^{×2}_{b/a} τ_{PO}`` (τ_{PO} = 1 without r), ``x'_0 = G x'_B``,
    ``x'_A = x'_0 + S u``, ``e = x'_0 ×ₘ S u``, ``ip = P_{b/a} ([IO]_{R_b} + r)``,
    ``R = P_{b/i} P_{a/b}``."""
    Rq = np.empty((3, 3))
    quaternion_dcm(quat, Rq)
    mm(R_a0b, Rq, R_ab)
    G[:, :] = 0.0
    G[0:3, 0:3] = R_ab.T
    G[3:6, 3:6] = R_ab.T
    rb = np.empty(3)
    rb[:] = ip_b
    if r.shape[0]:  # G[0:3, 3:6] = P_{b/a} (*-r)
        rx, ry, rz = r[0], r[1], r[2]
        for i in range(3):
            a0, a1, a2 = R_ab[0, i], R_ab[1, i], R_ab[2, i]
            G[i, 3] = -(a1 * rz - a2 * ry)
            G[i, 4] = -(a2 * rx - a0 * rz)
            G[i, 5] = -(a0 * ry - a1 * rx)
            rb[i] += r[i]
    tw0 = np.empty(6)
    mv(G, twist_b, tw0)
    su = np.zeros(6)
    su[6 - u.shape[0] :] = u
    relative_motion_bias_into(tw0, su, e)
    vadd(tw0, su, twist)
    mtv(R_ab, rb, ip)
    mm(R_bi, R_ab, R)


@kernel
def joint_coordinates(p, q):
    """The configuration ``q`` (nq) of a joint from its position output ``p`` (k), the inverse
    of the joint models' ``position_output``: ``q = p`` for a 1-dof joint, the quaternion of the
    3-2-1 Euler angles p for a spherical joint (nq = 4), ``[r ; quaternion of p[3:6]]`` for a
    free joint (nq = 7)."""
    nq = q.shape[0]
    if nq == 4:
        euler_quaternion(p, q)
    elif nq == 7:
        q[0:3] = p[0:3]
        euler_quaternion(p[3:6], q[3:7])
    else:
        q[:] = p


@kernel
def free_coordinate_rate(R_ab, q, u, out):
    """``q̇`` (7) of a free joint: ``ṙ = P_{a/b} v_r`` (m/s, R_b) and the quaternion rate of
    ω_r (see joints.FreeJoint)."""
    mv(R_ab, u[0:3], out[0:3])
    quaternion_rate_into(q[3:7], u[3:6], out[3:7])


@kernel
def root_kinematics(x, R, ip):
    """Root body (eq. 12): ``R`` = P_{b/i} of the quaternion x[3:7], ``ip`` = [IP]_{R_b} =
    P_{b/i}^T [IP]_{R_i}; the twist is the state x[7:13]."""
    quaternion_dcm(x[3:7], R)
    mtv(R, x[0:3], ip)


@kernel
def root_state_rate(x, R, twist, acc, out):
    """``out`` (13) = [ d[IP]_{R_i}/dt = P_{b/i} v_P ; q̇ ; ẋ'_P ] (eq. 12 with a quaternion
    attitude): ``x`` the root's states, ``R`` = P_{b/i}, ``twist`` = x'_P, ``acc`` = ẋ'_P."""
    mv(R, twist[0:3], out[0:3])
    quaternion_rate_into(x[3:7], twist[3:6], out[3:7])
    out[7:13] = acc


# -- loop maps (see titopfmu.blocks.loop_map for the layout) ------------------------------------


@kernel
def joint_space_map(D, StD, St, ts, G, e, h, tau, PP, F, f0, cP, CP, cC):
    """Loop map of a forward joint body with k dof in the joint-space form (eqs. 17-23 / 24-29).

    With ``ẋ'_A = G ẋ'_B + e + S α`` (α = u̇), Newton-Euler (18)/(25) ``D ẋ'_A + h = W_{B/A,P} +
    T W_C`` and the joint equation (19)/(26) ``S^T W_{B/A,P} = τ``:
    ``J α = F ẋ'_B + U^T W_C + f0`` with J = S^T D S (eq. 20), ``F = -S^T D G``, U = τ S,
    ``f0 = τ - S^T (D e + h)``; ``ẋ'_C = CP ẋ'_B + U α + cC`` with ``CP = τ G``, ``cC = τ e``;
    ``W_P = -G^T W_{B/A,P} = PP ẋ'_B + F^T α + CP^T W_C + cP`` with ``PP = -G^T D G``,
    ``cP = -G^T (D e + h)``. ``ts`` = the stacked τ_{C_i P} (6n×6); ``StD`` = S^T D, ``St`` = S^T.
    """
    DG = np.empty((6, 6))
    mm(D, G, DG)
    mtm(G, DG, PP)
    mneg(PP)
    mm(StD, G, F)
    mneg(F)
    r = np.empty(6)
    mv(D, e, r)
    vadd(r, h, r)  # D e + h
    mv(St, r, f0)
    vsub(tau, f0, f0)
    mtv(G, r, cP)
    vneg(cP)
    if ts.shape[0]:
        mm(ts, G, CP)
        mv(ts, e, cC)


@kernel
def rigid_joint_map(D, G, a0, h, ts, DG, Da0h, PP, cP, CP, cC):
    """Loop map of a body whose joint acceleration is known (weld, or an imposed joint motion):
    ``ẋ'_A = G ẋ'_B + a0`` (a0 = e + S q̈), so Newton-Euler (18) gives ``W_P = -G^T (D ẋ'_A + h -
    T W_C)``: ``PP = -G^T D G``, ``cP = -G^T (D a0 + h)``, ``PC = G^T T`` (= CP^T), ``CP = τ G``,
    ``cC = τ a0``. Also writes ``DG`` = D G and ``Da0h`` = D a0 + h (for the inverse effort)."""
    mm(D, G, DG)
    mv(D, a0, Da0h)
    vadd(Da0h, h, Da0h)
    mtm(G, DG, PP)
    mtv(G, Da0h, cP)
    vneg(cP)
    mneg(PP)
    if ts.shape[0]:
        mm(ts, G, CP)
        mv(ts, a0, cC)


@kernel
def joint_acceleration(e, S, qdd, out):
    """``out`` = e + S q̈: the part of ``ẋ'_A = G ẋ'_B + e + S q̈`` (eqs. 17, 24) that does not
    depend on the parent, for a known joint acceleration q̈ (k) (an imposed joint motion)."""
    mv(S, qdd, out)
    vadd(out, e, out)


@kernel
def inverse_effort_map(S, DG, Da0h, XP, xc):
    """Extra output of an inverse joint body, the effort ``τ = S^T W_{B/A,P} = S^T (D ẋ'_A + h -
    T W_C)`` (eqs. 19/26) with ``ẋ'_A = G ẋ'_B + a0``: ``XP = S^T D G`` and ``xc = S^T (D a0 +
    h)`` from :func:`rigid_joint_map`'s ``DG`` and ``Da0h``; XC = -S^T T is constant."""
    mtm(S, DG, XP)
    mtv(S, Da0h, xc)


@kernel
def imposed_motion_map(D, h, acc, ts, xc, cC):
    """Loop map of a body with imposed motion (Fig. 1, eq. 11 solved for the wrench):
    ``W_ext,P = D_P ẋ'_P + h - Σ τ_{C_iP}^T W_C_i``, so ``xc = D acc + h`` (XC = -T), and the
    child ports' accelerations ``cC = τ acc`` (eq. 14); ``acc`` = the imposed ẋ'_P."""
    mv(D, acc, xc)
    vadd(xc, h, xc)
    if ts.shape[0]:
        mv(ts, acc, cC)


# -- loop closure (closure.py) ---------------------------------------------------------------------


@kernel
def closure_deflection(tw_l, ip_l, R_l, tw_r, ip_r, R_r, R_lr, dx, dxd):
    """Relative motion of the right side of a cut to the left one (Fig. 14), in the left frame:
    ``R_lr`` = P_{r/l} = P_{l/i}^T P_{r/i}, ``dx`` = [δp ; δθ] with δp = P_{r/l} [IC_r] - [IC_l]
    (m) and δθ the rotation vector of P_{r/l} (rad), ``dxd`` = [δv ; δω] the differences of the
    point velocities and angular rates (m/s, rad/s). Each side's twist ``tw`` and position
    ``ip`` in its own frame, ``R`` = that frame's P_{./i}."""
    mtm(R_l, R_r, R_lr)
    mv(R_lr, ip_r, dx[0:3])
    mv(R_lr, tw_r[0:3], dxd[0:3])
    mv(R_lr, tw_r[3:6], dxd[3:6])
    for t in range(3):
        dx[t] -= ip_l[t]
        dxd[t] -= tw_l[t]
        dxd[3 + t] -= tw_l[3 + t]
    rotation_vector_into(R_lr, dx[3:6])


@kernel
def closure_wrenches(K, D, tw_l, ip_l, R_l, tw_r, ip_r, R_r, w_l, w_r):
    """Wrenches of a loop closure ``L^A_C`` (Fig. 14) on its two sides: ``w_l = K δx + D δx'``
    in the left frame (see :func:`closure_deflection`), and its opposite on the right side,
    ``w_r = -P^{x2}_{l/r} w_l``, in the right frame (N, N m)."""
    R_lr = np.empty((3, 3))
    dx = np.empty(6)
    dxd = np.empty(6)
    closure_deflection(tw_l, ip_l, R_l, tw_r, ip_r, R_r, R_lr, dx, dxd)
    for t in range(6):
        acc = 0.0
        for m in range(6):
            acc += K[t, m] * dx[m] + D[t, m] * dxd[m]
        w_l[t] = acc
    mtv(R_lr, w_l[0:3], w_r[0:3])
    mtv(R_lr, w_l[3:6], w_r[3:6])
    for t in range(6):
        w_r[t] = -w_r[t]
