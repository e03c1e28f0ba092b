"""The engine's state derivative as one compiled sweep over per-body stacks (Model/Data layout).

:class:`CompiledTree` lays the constants of every body of a tree out in contiguous arrays, one
row per body in tree order (cf. Pinocchio's Model); :func:`tree_derivative` runs one
right-hand-side evaluation over them: the kinematics, the bias h and the loop map of every body
(the kernels of :mod:`titopfmu.blocks.kernels`, the same functions the object blocks call), the
backward and forward sweeps of :class:`~titopfmu.assembly.loop_solver.TreeLoopSolver` on the
stacked maps (extras only, as in ``TreeLoopSolver.solve(..., extras_only=True)``) and the state
derivatives. Everything it writes per evaluation lives in arrays allocated once per call and
walked in order, so the cost per body stays flat on long chains.

The sweeps repeat the algebra of ``TreeLoopSolver.solve(..., extras_only=True)`` on stacked
arrays instead of LoopMap objects; tests/test_compiled.py holds the two to 1e-12 on random trees.
The next step is one stacked sweep that TreeLoopSolver (hence the co-simulation master) calls too.

Covered: trees of :class:`~titopfmu.blocks.bodies.RigidBody` or
:class:`~titopfmu.blocks.bodies.Ground` roots with forward revolute, prismatic and welded
bodies, without loop closures. Any other system runs the object path of the engine (same
results to rounding).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..blocks.bodies import Ground, PrismaticBody, RevoluteBody, RigidBody, WeldedBody
from ..blocks.kernels import (
    add_external_wrench,
    body_bias,
    child_port_kinematics,
    forward_joint_map,
    prismatic_kinematics,
    revolute_kinematics,
    rigid_joint_map,
    root_kinematics,
    root_map,
    root_state_rate,
    weld_kinematics,
)
from ..spatial.algebra import FloatArray
from ..spatial.kernels import kernel, mtv, mv, solve_in_place

ROOT, GROUND, REVOLUTE, PRISMATIC, WELD = range(5)
_KINDS = {RigidBody: ROOT, Ground: GROUND, RevoluteBody: REVOLUTE, PrismaticBody: PRISMATIC,
          WeldedBody: WELD}  # fmt: skip
# columns of CompiledTree.topo
_KIND, _PARENT, _SLOT, _NCH, _RO, _QO, _XO, _EO, _NE, _RANK, _NX = range(11)


def unsupported(blocks, closures: bool) -> str | None:
    """Why the tree of ``blocks`` cannot run compiled, or None if it can."""
    if closures:
        return "loop closures"
    for b in blocks:
        if type(b) not in _KINDS:
            return f"block '{b.name}' ({type(b).__name__})"
    return None


class CompiledTree:
    """The stacked constants of a tree (immutable after construction) and its evaluation.

    ``blocks`` in tree order (parents first); ``parents[i]`` = (parent index, child slot) or
    None; ``state_offsets[i]`` = first state of block i; ``tau_blocks`` / ``externals`` list the
    blocks whose effort input and the (block, external name) pairs whose wrench input the caller
    passes to :meth:`derivative`, in that order.
    """

    def __init__(self, blocks, parents, state_offsets) -> None:
        n = len(blocks)
        self.blocks = list(blocks)
        ports = [b.n_children for b in blocks]
        ro = np.concatenate([[0], np.cumsum(ports)[:-1]]).astype(np.int64) * 6 if n else []
        n_rows = 6 * sum(ports)
        q_rows = [7 + 12 * p for p in ports]
        qo = np.concatenate([[0], np.cumsum(q_rows)[:-1]]).astype(np.int64) if n else []
        topo = np.zeros((n, 11), dtype=np.int64)
        self.D = np.zeros((n, 6, 6))
        self.D_inv = np.zeros((n, 6, 6))
        self.mass = np.zeros(n)
        self.com = np.zeros((n, 3))
        self.gravity = np.zeros((n, 3))
        self.ts = np.zeros((n_rows, 6))
        self.pc = np.zeros((n_rows // 6, 3))
        self.child = np.full(n_rows // 6, -1, dtype=np.int64)
        self.U = np.zeros((n_rows, 6))
        self.Vt = np.zeros((n_rows, 6))
        self.XCt = np.zeros((n_rows, 6))
        self.Gc = np.zeros((n, 45, 3))
        self.axis = np.zeros((n, 3))
        self.Gx = np.zeros((n, 6, 6))
        self.Gr = np.zeros((n, 6, 6))
        self.R_ab = np.zeros((n, 3, 3))
        self.S = np.zeros((n, 6, 1))
        self.DS = np.zeros((n, 6, 1))
        self.J_inv = np.zeros((n, 1, 1))
        self.Q = np.zeros((sum(q_rows), 6))
        self.fixed_R = np.zeros((n, 3, 3))
        self.fixed_ip = np.zeros((n, 3))
        self.tau_blocks: list[int] = []
        self.externals: list[tuple[int, str]] = []
        points, inertial = [], []
        for i, b in enumerate(blocks):
            kind = _KINDS[type(b)]
            q = 6 * ports[i]
            r0 = int(ro[i])
            rows = slice(r0, r0 + q)
            p, slot = parents[i] if parents[i] is not None else (-1, 0)
            topo[i, _KIND], topo[i, _PARENT], topo[i, _SLOT] = kind, p, slot
            topo[i, _NCH], topo[i, _RO], topo[i, _QO] = ports[i], r0, qo[i]
            topo[i, _XO] = state_offsets[i]
            if p >= 0:
                self.child[int(ro[p]) // 6 + slot] = i
            self.ts[rows] = b.tau_stack
            for j, pc in enumerate(b.child_points):
                self.pc[r0 // 6 + j] = pc
            if kind == GROUND:
                self.fixed_R[i] = b.R
                self.fixed_ip[i] = b._kin.ip
                topo[i, _NX] = 6
                self.XCt[rows] = -b.tau_stack
                continue
            self.D[i] = b.D
            self.mass[i] = b.mass
            self.com[i] = b.com
            self.gravity[i] = b.gravity
            topo[i, _EO] = len(points)
            for ename, inert, point in b._externals:
                self.externals.append((i, ename))
                points.append(point)
                inertial.append(inert)
            topo[i, _NE] = len(points) - topo[i, _EO]
            if kind == ROOT:
                self.D_inv[i] = b.D_inv
                topo[i, _NX] = 6
                if q:
                    topo[i, _RANK] = 6
                    self.U[rows] = b.tau_stack @ b.D_inv
                    self.Vt[rows] = b.tau_stack
                    self.XCt[rows] = b.tau_stack @ b.D_inv.T
                continue
            joint = b.joint
            if kind == WELD:
                self.Gr[i] = joint.Gc
                self.R_ab[i] = joint.R_ab
                continue
            c = b._c
            self.tau_blocks.append(i)
            topo[i, _NX] = 1
            self.S[i] = c.S
            self.DS[i] = c.DS
            self.J_inv[i] = c.J_inv
            self.Q[qo[i] : qo[i] + 7 + 2 * q] = c.Q
            if q:
                topo[i, _RANK] = 1
                self.U[rows, 0] = c.U[:, 0]
                self.Vt[rows, 0] = c.alpha_C[0]
                self.XCt[rows, 0] = c.alpha_C[0]
            if kind == REVOLUTE:
                self.Gc[i] = joint._Gc
                self.axis[i] = joint.axis
            else:
                self.Gr[i] = joint.Gr
                self.Gx[i] = joint._Gx
                self.axis[i] = joint.axis
                self.R_ab[i] = joint.R_ab
        self.topo = topo
        self.ext_point = np.array(points, dtype=float).reshape(len(points), 3)
        self.ext_inertial = np.array(inertial, dtype=float)
        # one buffer for every constant (a numba call costs ~0.15 µs per array argument): the
        # arrays above become views into it, in the order of MODEL_SEGMENTS
        self.model, self.model_offsets = _pack([getattr(self, a) for a in MODEL_SEGMENTS])
        for name, view in zip(MODEL_SEGMENTS, _views(self.model, self.model_offsets), strict=True):
            setattr(self, name, view.reshape(getattr(self, name).shape))
        self.max_rows = 6 * max(ports, default=0)
        self.data_size = _data_size(n, n_rows, self.Q.shape[0], self.max_rows)

    def new_data(self) -> FloatArray:
        """A work buffer for :meth:`derivative` (the run-time Data; one per concurrent user)."""
        return np.empty(self.data_size)

    def derivative(
        self, x: FloatArray, tau: FloatArray, ext: FloatArray, dx: FloatArray, data: FloatArray
    ) -> int:
        """Write dx/dt at the state ``x`` into ``dx``; ``tau`` (one per :attr:`tau_blocks`) and
        ``ext`` (E×6, one row per :attr:`externals`) are the signal inputs, ``data`` a buffer from
        :meth:`new_data`. Returns -1, or the index of the block whose loop equations are
        singular (``dx`` is then incomplete), or the number of blocks if ``dx`` is not finite."""
        return tree_derivative(
            self.topo, self.child, self.model, self.model_offsets, data, x, tau, ext, dx
        )


#: the model's float arrays, in their order in CompiledTree.model
MODEL_SEGMENTS = (
    "D", "D_inv", "mass", "com", "gravity", "ts", "pc", "U", "Vt", "XCt", "Gc", "axis", "Gx",
    "Gr", "R_ab", "S", "DS", "J_inv", "Q", "fixed_R", "fixed_ip", "ext_point", "ext_inertial",
)  # fmt: skip


def _pack(arrays: list[FloatArray]) -> tuple[FloatArray, np.ndarray]:
    sizes = [a.size for a in arrays]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    buf = np.empty(int(offsets[-1]))
    for a, o in zip(arrays, offsets[:-1], strict=False):
        buf[o : o + a.size] = a.reshape(-1)
    return buf, offsets


def _views(buf: FloatArray, offsets: np.ndarray) -> list[FloatArray]:
    return [buf[offsets[j] : offsets[j + 1]] for j in range(len(offsets) - 1)]


def _data_size(n: int, n_rows: int, q_rows: int, max_rows: int) -> int:
    """Floats of the work buffer; the layout is the one of tree_derivative."""
    per_node = 6 + 3 + 9 + 45 + 6 + 36 + 6 + 6 + 36 + 6 + 36 + 6
    return n * per_node + 8 * n_rows + 6 * q_rows + 6 * max_rows + 7 * max_rows


@kernel
def _segment(buf, offsets, j):
    return buf[offsets[j] : offsets[j + 1]]


# C-ordered views into a buffer, from an offset (``reshape`` costs ~15 ns a call in numba: on
# the ~40 arrays of an evaluation that is ~1 µs, the cost of a whole body)
@kernel
def _view2(buf, o, a, b):
    return as_strided(buf[o:], shape=(a, b), strides=(8 * b, 8))


@kernel
def _view3(buf, o, a, b, c):
    return as_strided(buf[o:], shape=(a, b, c), strides=(8 * b * c, 8 * c, 8))


@kernel
def tree_derivative(topo, child, model, mo, data, x, tau, ext, dx):
    """One evaluation of dx/dt over the stacks of :class:`CompiledTree` (see there): ``model``
    holds its constants (segments ``mo``, in the order of MODEL_SEGMENTS), ``data`` is the work
    buffer (every value below is rewritten before it is read)."""
    n = topo.shape[0]
    ne = mo.shape[0] - 1
    D = _view3(model, mo[0], n, 6, 6)
    D_inv = _view3(model, mo[1], n, 6, 6)
    mass = _segment(model, mo, 2)
    com = _view2(model, mo[3], n, 3)
    gravity = _view2(model, mo[4], n, 3)
    ts = _view2(model, mo[5], (mo[5 + 1] - mo[5]) // 6, 6)
    n_rows = ts.shape[0]
    pc = _view2(model, mo[6], (mo[6 + 1] - mo[6]) // 3, 3)
    U = _view2(model, mo[7], (mo[7 + 1] - mo[7]) // 6, 6)
    Vt = _view2(model, mo[8], (mo[8 + 1] - mo[8]) // 6, 6)
    XCt = _view2(model, mo[9], (mo[9 + 1] - mo[9]) // 6, 6)
    Gc = _view3(model, mo[10], n, 45, 3)
    axis = _view2(model, mo[11], n, 3)
    Gx = _view3(model, mo[12], n, 6, 6)
    Gr = _view3(model, mo[13], n, 6, 6)
    R_ab = _view3(model, mo[14], n, 3, 3)
    S = _view3(model, mo[15], n, 6, 1)
    DS = _view3(model, mo[16], n, 6, 1)
    J_inv = _view3(model, mo[17], n, 1, 1)
    Q = _view2(model, mo[18], (mo[18 + 1] - mo[18]) // 6, 6)
    fixed_R = _view3(model, mo[19], n, 3, 3)
    fixed_ip = _view2(model, mo[20], n, 3)
    ext_point = _view2(model, mo[ne - 2], (mo[ne - 2 + 1] - mo[ne - 2]) // 3, 3)
    ext_inertial = _segment(model, mo, ne - 1)
    # the work buffer, carved in the order of _data_size
    o = 0
    twist = _view2(data, o, n, 6)
    o += 6 * n
    ip = _view2(data, o, n, 3)
    o += 3 * n
    R = _view3(data, o, n, 3, 3)
    o += 9 * n
    gr = _view2(data, o, n, 45)
    o += 45 * n
    e = _view2(data, o, n, 6)
    o += 6 * n
    PP = _view3(data, o, n, 6, 6)
    o += 36 * n
    cP = _view2(data, o, n, 6)
    o += 6 * n
    xc = _view2(data, o, n, 6)
    o += 6 * n
    K = _view3(data, o, n, 6, 6)
    o += 36 * n
    k = _view2(data, o, n, 6)
    o += 6 * n
    XE = _view3(data, o, n, 6, 6)
    o += 36 * n
    xe = _view2(data, o, n, 6)
    o += 6 * n
    cC = data[o : o + n_rows]
    o += n_rows
    kv = data[o : o + n_rows]
    o += n_rows
    A = _view2(data, o, n_rows, 6)
    o += 6 * n_rows
    QG = _view2(data, o, Q.shape[0], 6)
    o += Q.size
    max_rows = (data.shape[0] - o) // 13
    Wm = _view2(data, o, 6, max_rows)
    o += 6 * max_rows
    bbuf = data[o : o + max_rows]
    o += max_rows
    Bbuf = _view2(data, o, max_rows, 6)
    h = np.empty(6)
    twb = np.empty(6)
    ipb = np.empty(3)
    DG = np.empty((6, 6))
    Da0h = np.empty(6)
    ti = 0  # next effort input
    # -- kinematics, bias and loop map of every body, parents first ------------------------------
    for i in range(n):
        kind = topo[i, 0]
        p = topo[i, 1]
        q = 6 * topo[i, 3]
        r0 = topo[i, 4]
        q0 = topo[i, 5]
        xo = topo[i, 6]
        G = _view2(gr[i], 0, 6, 6)
        if kind == GROUND:
            R[i] = fixed_R[i]
            ip[i] = fixed_ip[i]
            twist[i] = 0.0
            xc[i] = 0.0
            cC[r0 : r0 + q] = 0.0
            continue
        if kind == ROOT:
            root_kinematics(x[xo : xo + 13], R[i], ip[i])
            twist[i] = x[xo + 7 : xo + 13]
        else:
            pr = topo[p, 4] + 6 * topo[i, 2]
            child_port_kinematics(ts[pr : pr + 6], pc[pr // 6], twist[p], ip[p], twb, ipb)
            if kind == REVOLUTE:
                revolute_kinematics(Gc[i], axis[i], x[xo], x[xo + 1], twb, ipb, R[p], gr[i],
                                    e[i], twist[i], ip[i], R[i])  # fmt: skip
            elif kind == PRISMATIC:
                prismatic_kinematics(Gr[i], Gx[i], axis[i], R_ab[i], x[xo], x[xo + 1], twb,
                                     ipb, R[p], G, e[i], twist[i], ip[i], R[i])  # fmt: skip
            else:
                weld_kinematics(Gr[i], R_ab[i], twb, ipb, R[p], G, e[i], twist[i], ip[i], R[i])
        body_bias(D[i], mass[i], com[i], gravity[i], twist[i], R[i], h)
        for j in range(topo[i, 7], topo[i, 7] + topo[i, 8]):
            add_external_wrench(h, ext[j], ext_point[j], ext_inertial[j], R[i])
        tsi = ts[r0 : r0 + q]
        if kind == ROOT:
            root_map(D_inv[i], h, tsi, xc[i], cC[r0 : r0 + q])
        elif kind == WELD:
            rigid_joint_map(D[i], G, e[i], h, tsi, DG, Da0h, PP[i], cP[i],
                            QG[q0 + 7 : q0 + 7 + q], cC[r0 : r0 + q])  # fmt: skip
            QG[q0 + 7 + q : q0 + 7 + 2 * q] = QG[q0 + 7 : q0 + 7 + q]  # PC^T = CP
        else:
            rows = slice(q0, q0 + 7 + 2 * q)
            forward_joint_map(D[i], S[i], DS[i], J_inv[i], Q[rows], tsi, G, e[i], h,
                              tau[ti : ti + 1], QG[rows], PP[i], cP[i], cC[r0 : r0 + q],
                              xc[i, 0:1])  # fmt: skip
            ti += 1
    # -- backward sweep: W_P = K ẋ'_P + k of every subtree; extras folded (loop_solver.py) ------
    for i in range(n - 1, -1, -1):
        kind = topo[i, 0]
        has_parent = topo[i, 1] >= 0
        nch = topo[i, 3]
        q = 6 * nch
        r0 = topo[i, 4]
        q0 = topo[i, 5]
        rank = topo[i, 9]
        nx = topo[i, 10]
        XP = QG[q0 + 6 : q0 + 7]
        if nch == 0:
            if has_parent:
                K[i] = PP[i]
                k[i] = cP[i]
            if kind == REVOLUTE or kind == PRISMATIC:
                XE[i, 0] = XP[0]
            xe[i] = xc[i]
            continue
        CP = QG[q0 + 7 : q0 + 7 + q]
        PCt = QG[q0 + 7 + q : q0 + 7 + 2 * q]
        a = cC[r0 : r0 + q]  # becomes a = (1 - CC Kbd)^-1 (CC kv + cC), in place
        for j in range(nch):
            kv[r0 + 6 * j : r0 + 6 * j + 6] = k[child[r0 // 6 + j]]
        kvi = kv[r0 : r0 + q]
        Ai = A[r0 : r0 + q]
        if rank:
            # Woodbury: (1 - U V Kbd)^-1 = 1 + U (1_r - V Kbd U)^-1 V Kbd
            Ui = U[r0 : r0 + q, 0:rank]
            Vti = Vt[r0 : r0 + q, 0:rank]
            W = Wm[0:rank, 0:q]
            for j in range(nch):
                Kc = K[child[r0 // 6 + j]]
                for m in range(rank):
                    for c in range(6):
                        acc = 0.0
                        for t in range(6):
                            acc += Vti[6 * j + t, m] * Kc[t, c]
                        W[m, 6 * j + c] = acc
            vkv = np.empty(rank)
            mtv(Vti, kvi, vkv)
            yv = np.empty(q)
            mv(Ui, vkv, yv)
            for t in range(q):
                yv[t] += a[t]
            small = np.eye(rank)
            for m in range(rank):
                for c in range(rank):
                    acc = 0.0
                    for t in range(q):
                        acc += W[m, t] * Ui[t, c]
                    small[m, c] -= acc
            wy = np.empty(rank)
            mv(W, yv, wy)
            rhs = np.empty((rank, 7 if has_parent else 1))
            rhs[:, 0] = wy
            if has_parent:
                for m in range(rank):
                    for c in range(6):
                        acc = 0.0
                        for t in range(q):
                            acc += W[m, t] * CP[t, c]
                        rhs[m, 1 + c] = acc
            if not solve_in_place(small, rhs):
                return i
            z = rhs
            for t in range(q):
                acc = yv[t]
                for m in range(rank):
                    acc += Ui[t, m] * z[m, 0]
                a[t] = acc
            if has_parent:
                for t in range(q):
                    for c in range(6):
                        acc = CP[t, c]
                        for m in range(rank):
                            acc += Ui[t, m] * z[m, 1 + c]
                        Ai[t, c] = acc
        elif has_parent:
            Ai[:, :] = CP
        # B = Kbd A, b = Kbd a + kv (child blocks), then K = PP + PC B, k = PC b + cP and the
        # extras XE = XP + XC B, xe = XC b + xc
        b = bbuf[0:q]
        B = Bbuf[0:q]
        for j in range(nch):
            Kc = K[child[r0 // 6 + j]]
            rows = slice(6 * j, 6 * j + 6)
            mv(Kc, a[rows], b[rows])
            for t in range(6):
                b[6 * j + t] += kvi[6 * j + t]
            if has_parent:
                for t in range(6):
                    for c in range(6):
                        acc = 0.0
                        for m in range(6):
                            acc += Kc[t, m] * Ai[6 * j + m, c]
                        B[6 * j + t, c] = acc
        if has_parent:
            for t in range(6):
                for c in range(6):
                    acc = PP[i, t, c]
                    for m in range(q):
                        acc += PCt[m, t] * B[m, c]
                    K[i, t, c] = acc
                acc = cP[i, t]
                for m in range(q):
                    acc += PCt[m, t] * b[m]
                k[i, t] = acc
        for t in range(nx):
            acc = xc[i, t]
            for m in range(q):
                acc += XCt[r0 + m, t] * b[m]
            xe[i, t] = acc
            if has_parent:
                for c in range(6):
                    acc = XP[t, c]
                    for m in range(q):
                        acc += XCt[r0 + m, t] * B[m, c]
                    XE[i, t, c] = acc
    # -- forward sweep: ẋ'_C = A ẋ'_P + a, extras = XE ẋ'_P + xe; state derivatives ------------
    extra = np.empty(6)
    for i in range(n):
        kind = topo[i, 0]
        p = topo[i, 1]
        q = 6 * topo[i, 3]
        r0 = topo[i, 4]
        nx = topo[i, 10]
        xo = topo[i, 6]
        if p >= 0:
            pr = topo[p, 4] + 6 * topo[i, 2]
            accp = cC[pr : pr + 6]
            for t in range(q):
                acc = cC[r0 + t]
                for c in range(6):
                    acc += A[r0 + t, c] * accp[c]
                cC[r0 + t] = acc
            for t in range(nx):
                acc = xe[i, t]
                for c in range(6):
                    acc += XE[i, t, c] * accp[c]
                extra[t] = acc
        else:
            extra[0:nx] = xe[i, 0:nx]
        if kind == ROOT:
            root_state_rate(x[xo : xo + 13], R[i], twist[i], extra, dx[xo : xo + 13])
        elif kind == REVOLUTE or kind == PRISMATIC:
            dx[xo] = x[xo + 1]
            dx[xo + 1] = extra[0]
    total = 0.0
    for t in range(dx.shape[0]):
        total += dx[t] * dx[t]
    if total - total != 0.0:  # NaN or inf somewhere (or an overflow)
        return n
    return -1
