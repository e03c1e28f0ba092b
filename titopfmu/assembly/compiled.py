"""The engine's state derivative as one compiled sweep over per-body stacks (Model/Data layout).

:class:`CompiledTree` lays the constants of every body of a tree out in contiguous arrays, one
row per body in tree order (cf. Pinocchio's Model); :func:`tree_derivative` runs one
right-hand-side evaluation over them: the kinematics, the bias h and the loop map of every body
(the kernels of :mod:`titopfmu.blocks.kernels`, the same functions the object blocks call), the
loop solution on the stacked maps and the state derivatives. Everything it writes per
evaluation lives in one work buffer allocated once per engine and walked in order, so the cost
per body stays flat on long chains.

The loop itself is solved by :func:`~titopfmu.assembly.loop_solver.loop_sweep`, the sweep that
:class:`~titopfmu.assembly.loop_solver.TreeLoopSolver` (hence the object path and the
co-simulation master) runs too: the block kernels write each body's map straight into its
stacks, laid out by a :class:`~titopfmu.assembly.loop_solver.LoopLayout`.

Covered: every built-in block: trees of :class:`~titopfmu.blocks.bodies.RigidBody`,
:class:`~titopfmu.blocks.bodies.Ground` or :class:`~titopfmu.blocks.bodies.ImposedMotionBody`
roots with welded, revolute, prismatic, spherical and free joint bodies, forward or inverse, and
:class:`~titopfmu.blocks.closure.LoopClosure` blocks between their child ports. A system with a
block type it does not know (a user's subclass) runs the object path of the engine (same
results to rounding).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..blocks.bodies import (
    FreeBody,
    FreeBodyInverse,
    Ground,
    ImposedMotionBody,
    PrismaticBody,
    PrismaticBodyInverse,
    RevoluteBody,
    RevoluteBodyInverse,
    RigidBody,
    SphericalBody,
    SphericalBodyInverse,
    WeldedBody,
)
from ..blocks.closure import LoopClosure
from ..blocks.kernels import (
    add_external_wrench,
    body_bias,
    child_port_kinematics,
    closure_wrenches,
    forward_joint_map,
    free_coordinate_rate,
    imposed_motion_map,
    inverse_effort_map,
    joint_acceleration,
    joint_coordinates,
    prismatic_kinematics,
    quaternion_joint_kinematics,
    revolute_kinematics,
    rigid_joint_map,
    root_kinematics,
    root_map,
    root_state_rate,
    weld_kinematics,
)
from ..spatial.algebra import FloatArray
from ..spatial.kernels import euler_dcm, kernel, quaternion_rate_into
from .loop_solver import (
    EO,
    LOOP_COLUMNS,
    NCH,
    NE,
    PARENT,
    RO,
    SLOT,
    UO,
    XCO,
    LoopLayout,
    LoopNode,
    loop_sweep,
)  # fmt: skip

ROOT, GROUND, REVOLUTE, PRISMATIC, WELD, SPHERICAL, FREE, IMPOSED = range(8)
_KINDS = {RigidBody: ROOT, Ground: GROUND, RevoluteBody: REVOLUTE, PrismaticBody: PRISMATIC,
          WeldedBody: WELD, SphericalBody: SPHERICAL, FreeBody: FREE,
          ImposedMotionBody: IMPOSED}  # fmt: skip
#: the inverse-dynamics joint bodies (imposed joint motion), by the kind of their joint
_INVERSE = {RevoluteBodyInverse: REVOLUTE, PrismaticBodyInverse: PRISMATIC,
            SphericalBodyInverse: SPHERICAL, FreeBodyInverse: FREE}  # fmt: skip
# columns of CompiledTree.topo after the LoopLayout's: block kind, first row of its Q, first
# state, first and number of external wrench inputs, joint dof k, inverse joint (1) or not (0)
KIND, QO, XO, EXO, EXN, DOF, INV = range(LOOP_COLUMNS, LOOP_COLUMNS + 7)


def unsupported(blocks, closures=()) -> str | None:
    """Why the tree of ``blocks`` with the loop-closure blocks ``closures`` cannot run
    compiled, or None if it can: a block type the compiled pass does not know, such as a
    user's subclass (it may change any equation)."""
    for b in blocks:
        if type(b) not in _KINDS and type(b) not in _INVERSE:
            return f"block '{b.name}' ({type(b).__name__})"
    for c in closures:
        if type(c) is not LoopClosure:
            return f"block '{c.name}' ({type(c).__name__})"
    return None


class CompiledTree:
    """The stacked constants of a tree (immutable after construction) and its evaluation.

    ``blocks`` in tree order (parents first); ``parents[i]`` = (parent index, child slot) or
    None; ``state_offsets[i]`` = first state of block i; ``inputs`` lists the (block, port,
    width) signal inputs the caller passes to :meth:`derivative` in ``u``, in that order: the
    effort ``joint.tau`` (k) of a forward joint body, the motion ``joint.m`` = [u̇, u, p] (3k) of
    an inverse one, the motion vector ``m`` (18) of an ImposedMotionBody; ``externals`` the
    (block, external name) pairs whose wrench input it passes in ``ext``. ``layout`` places
    the loop maps (the extras of a root are ẋ'_P, of a joint body u̇ or, inverse, its effort).
    ``closures`` lists the loop closures as (block, (left body, child slot), (right body, child
    slot)): their wrenches are the known wrenches at those ports.
    """

    def __init__(self, blocks, parents, state_offsets, closures=()) -> None:
        n = len(blocks)
        self.blocks = list(blocks)
        children = [[-1] * b.n_children for b in blocks]
        for i, ps in enumerate(parents):
            if ps is not None:
                children[ps[0]][ps[1]] = i
        nodes = [
            LoopNode(ps is not None, ps[0] if ps else -1, ps[1] if ps else -1, tuple(ch))
            for ps, ch in zip(parents, children, strict=True)
        ]
        kinds = [_KINDS.get(type(b), _INVERSE.get(type(b))) for b in blocks]
        inverse = [type(b) in _INVERSE for b in blocks]
        # joint dof k: the extras (u̇ forward, the effort inverse) and the rank of CC = U α_C of
        # a forward joint body (inverse: CC = 0)
        dofs = [0 if k in (ROOT, GROUND, IMPOSED) else b.joint.dof
                for b, k in zip(blocks, kinds, strict=True)]  # fmt: skip
        ranks = [(6 if k == ROOT else 0 if inv else d) if b.n_children else 0
                 for b, k, d, inv in zip(blocks, kinds, dofs, inverse, strict=True)]  # fmt: skip
        extras = [6 if k in (ROOT, GROUND, IMPOSED) else d
                  for k, d in zip(kinds, dofs, strict=True)]  # fmt: skip
        lay = self.layout = LoopLayout(nodes, ranks, extras)
        ports = [b.n_children for b in blocks]
        n_rows = lay.n_rows
        q_rows = [6 + d + 12 * p for p, d in zip(ports, dofs, strict=True)]
        qo = np.concatenate([[0], np.cumsum(q_rows)[:-1]]).astype(np.int64) if n else []
        topo = np.zeros((n, LOOP_COLUMNS + 7), dtype=np.int64)
        topo[:, :LOOP_COLUMNS] = lay.topo
        self.D = np.zeros((n, 6, 6))
        self.D_inv = np.zeros((n, 6, 6))
        self.mass = np.zeros(n)
        self.com = np.zeros((n, 3))
        self.gravity = np.zeros((n, 3))
        self.ts = np.zeros((n_rows, 6))
        self.pc = np.zeros((n_rows // 6, 3))
        self.U = np.zeros(lay.u_size)
        self.Vt = np.zeros(lay.u_size)
        self.XCt = np.zeros(lay.xct_size)
        self.Gc = np.zeros((n, 45, 3))
        self.axis = np.zeros((n, 3))
        self.Gx = np.zeros((n, 6, 6))
        self.Gr = np.zeros((n, 6, 6))
        self.R_ab = np.zeros((n, 3, 3))
        self.S = np.zeros((n, 6, 6))  # S, D S (6×k) and J^-1 (k×k) in the leading columns
        self.DS = np.zeros((n, 6, 6))
        self.J_inv = np.zeros((n, 6, 6))
        self.Q = np.zeros((sum(q_rows), 6))
        self.fixed_R = np.zeros((n, 3, 3))
        self.fixed_ip = np.zeros((n, 3))
        self.inputs: list[tuple[int, str, int]] = []
        self.externals: list[tuple[int, str]] = []
        points, inertial = [], []
        for i, b in enumerate(blocks):
            kind = kinds[i]
            q = 6 * ports[i]
            r0 = int(lay.topo[i, RO])
            rows = slice(r0, r0 + q)
            uo, xo = int(lay.topo[i, UO]), int(lay.topo[i, XCO])
            U = self.U[uo : uo + q * ranks[i]].reshape(q, ranks[i])
            Vt = self.Vt[uo : uo + q * ranks[i]].reshape(q, ranks[i])
            XCt = self.XCt[xo : xo + q * extras[i]].reshape(q, extras[i])
            topo[i, KIND], topo[i, QO], topo[i, XO] = kind, qo[i], state_offsets[i]
            topo[i, DOF], topo[i, INV] = dofs[i], inverse[i]
            self.ts[rows] = b.tau_stack
            for j, pc in enumerate(b.child_points):
                self.pc[r0 // 6 + j] = pc
            if kind == GROUND:
                self.fixed_R[i] = b.R
                self.fixed_ip[i] = b._kin.ip
                XCt[:] = -b.tau_stack
                continue
            self.D[i] = b.D
            self.mass[i] = b.mass
            self.com[i] = b.com
            self.gravity[i] = b.gravity
            topo[i, EXO] = len(points)
            for ename, inert, point in b._externals:
                self.externals.append((i, ename))
                points.append(point)
                inertial.append(inert)
            topo[i, EXN] = len(points) - topo[i, EXO]
            if kind == IMPOSED:  # the motion vector m (18) in, the wrench W_ext,P out (eq. 11)
                self.inputs.append((i, "m", 18))
                XCt[:] = -b.tau_stack
                continue
            if kind == ROOT:
                self.D_inv[i] = b.D_inv
                if q:  # CC = τ D^-1 τ^T (eq. 11), the extras ẋ'_P = D^-1 τ^T W_C + ...
                    U[:] = b.tau_stack @ b.D_inv
                    Vt[:] = b.tau_stack
                    XCt[:] = b.tau_stack @ b.D_inv.T
                continue
            joint = b.joint
            if kind == WELD:
                self.Gr[i] = joint.Gc
                self.R_ab[i] = joint.R_ab
                continue
            c = b._c
            k = dofs[i]
            self.S[i, :, 0:k] = c.S
            if inverse[i]:  # joint.m = [u̇, u, p] (3k) in, the effort τ = S^T W_{B/A,P} out
                self.inputs.append((i, "joint.m", 3 * k))
                if q:
                    XCt[:] = -c.StT.T
            else:  # the effort τ (k) in, u̇ out
                self.inputs.append((i, "joint.tau", k))
                self.DS[i, :, 0:k] = c.DS
                self.J_inv[i, 0:k, 0:k] = c.J_inv
                self.Q[qo[i] : qo[i] + q_rows[i]] = c.Q
                if q:  # CC = U α_C, the extras u̇ = α_C W_C + ...
                    U[:] = c.U
                    Vt[:] = c.alpha_C.T
                    XCt[:] = c.alpha_C.T
            if kind in (SPHERICAL, FREE):
                self.R_ab[i] = joint.R_a0b
            elif kind == REVOLUTE:
                self.Gc[i] = joint._Gc
                self.axis[i] = joint.axis
            else:
                self.Gr[i] = joint.Gr
                self.Gx[i] = joint._Gx
                self.axis[i] = joint.axis
                self.R_ab[i] = joint.R_ab
        self.topo = topo
        self.closure_K = np.array([c.K for c, _, _ in closures], dtype=float).reshape(-1, 6, 6)
        self.closure_D = np.array([c.D for c, _, _ in closures], dtype=float).reshape(-1, 6, 6)
        # the closures' sides after the child table: (left body, slot, right body, slot) each
        self.child = np.concatenate(
            [lay.child, np.array([v for _, lt, rt in closures for v in (*lt, *rt)], dtype=np.int64)]
        )
        self.ext_point = np.array(points, dtype=float).reshape(len(points), 3)
        self.ext_inertial = np.array(inertial, dtype=float)
        # one buffer for every constant (a numba call costs ~0.15 µs per array argument): the
        # arrays above become views into it, in the order of MODEL_SEGMENTS
        self.model, self.model_offsets = _pack([getattr(self, a) for a in MODEL_SEGMENTS])
        for name, view in zip(MODEL_SEGMENTS, _views(self.model, self.model_offsets), strict=True):
            setattr(self, name, view.reshape(getattr(self, name).shape))
        self.data_size = _data_size(n, n_rows, lay.n_extras, lay.scratch_size)

    def new_data(self) -> FloatArray:
        """A work buffer for :meth:`derivative` (the run-time Data; one per concurrent user)."""
        return np.empty(self.data_size)

    def derivative(
        self, x: FloatArray, tau: FloatArray, ext: FloatArray, dx: FloatArray, data: FloatArray
    ) -> int:
        """Write dx/dt at the state ``x`` into ``dx``; ``tau`` (the values of :attr:`inputs`, one
        after the other) and ``ext`` (E×6, one row per :attr:`externals`) are the signal inputs,
        ``data`` a buffer from :meth:`new_data`. Returns -1, or the index of the block whose
        loop equations are singular (``dx`` is then incomplete), or the number of blocks if
        ``dx`` is not finite."""
        return tree_derivative(
            self.topo, self.child, self.model, self.model_offsets, data, x, tau, ext, dx
        )


#: the model's float arrays, in their order in CompiledTree.model
MODEL_SEGMENTS = (
    "D", "D_inv", "mass", "com", "gravity", "ts", "pc", "U", "Vt", "XCt", "Gc", "axis", "Gx",
    "Gr", "R_ab", "S", "DS", "J_inv", "Q", "fixed_R", "fixed_ip", "closure_K", "closure_D",
    "ext_point", "ext_inertial",
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


#: floats per body, per child-port row and per extra output in the work buffer, and those of
#: the per-body scratch (h, twist and position at the parent's port, D G, D a0 + h, -D Π G,
#: twist and position at the two sides of a loop closure, an inverse joint's configuration and
#: imposed acceleration a0)
_PER_NODE = 6 + 3 + 9 + 45 + 6 + 36 + 6 + 36 + 6
_PER_ROW = 6 + 6 + 6 + 1 + 1
_PER_EXTRA = 6 + 1
_SCRATCH = 6 + 6 + 3 + 36 + 6 + 36 + 18 + 7 + 6


def _data_size(n: int, n_rows: int, n_extras: int, sweep_scratch: int) -> int:
    """Floats of the work buffer; the layout is the one of tree_derivative."""
    return n * _PER_NODE + n_rows * _PER_ROW + n_extras * _PER_EXTRA + _SCRATCH + sweep_scratch


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
    nseg = mo.shape[0] - 1
    D = _view3(model, mo[0], n, 6, 6)
    D_inv = _view3(model, mo[1], n, 6, 6)
    mass = _segment(model, mo, 2)
    com = _view2(model, mo[3], n, 3)
    gravity = _view2(model, mo[4], n, 3)
    ts = _view2(model, mo[5], (mo[5 + 1] - mo[5]) // 6, 6)
    n_rows = ts.shape[0]
    pc = _view2(model, mo[6], (mo[6 + 1] - mo[6]) // 3, 3)
    U = _segment(model, mo, 7)
    Vt = _segment(model, mo, 8)
    XCt = _segment(model, mo, 9)
    Gc = _view3(model, mo[10], n, 45, 3)
    axis = _view2(model, mo[11], n, 3)
    Gx = _view3(model, mo[12], n, 6, 6)
    Gr = _view3(model, mo[13], n, 6, 6)
    R_ab = _view3(model, mo[14], n, 3, 3)
    S = _view3(model, mo[15], n, 6, 6)
    DS = _view3(model, mo[16], n, 6, 6)
    J_inv = _view3(model, mo[17], n, 6, 6)
    Q = _view2(model, mo[18], (mo[18 + 1] - mo[18]) // 6, 6)
    fixed_R = _view3(model, mo[19], n, 3, 3)
    fixed_ip = _view2(model, mo[20], n, 3)
    closure_K = _view3(model, mo[21], (mo[21 + 1] - mo[21]) // 36, 6, 6)
    closure_D = _view3(model, mo[22], (mo[22 + 1] - mo[22]) // 36, 6, 6)
    ext_point = _view2(model, mo[nseg - 2], (mo[nseg - 2 + 1] - mo[nseg - 2]) // 3, 3)
    ext_inertial = _segment(model, mo, nseg - 1)
    n_extras = 0 if n == 0 else topo[n - 1, EO] + topo[n - 1, NE]
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
    K = _view3(data, o, n, 6, 6)
    o += 36 * n
    k = _view2(data, o, n, 6)
    o += 6 * n
    CP = _view2(data, o, n_rows, 6)
    o += 6 * n_rows
    PCt = _view2(data, o, n_rows, 6)
    o += 6 * n_rows
    A = _view2(data, o, n_rows, 6)
    o += 6 * n_rows
    cC = data[o : o + n_rows]
    o += n_rows
    kv = data[o : o + n_rows]
    o += n_rows
    XP = _view2(data, o, n_extras, 6)
    o += 6 * n_extras
    xc = data[o : o + n_extras]
    o += n_extras
    h = data[o : o + 6]
    twb = data[o + 6 : o + 12]
    ipb = data[o + 12 : o + 15]
    DG = _view2(data, o + 15, 6, 6)
    Da0h = data[o + 51 : o + 57]
    DPG = _view2(data, o + 57, 6, 6)
    tw_l = data[o + 93 : o + 99]
    ip_l = data[o + 99 : o + 102]
    tw_r = data[o + 102 : o + 108]
    ip_r = data[o + 108 : o + 111]
    qbuf = data[o + 111 : o + 118]  # configuration of an inverse joint, from its motion input
    a0 = data[o + 118 : o + 124]  # its imposed acceleration e + S u̇
    o += 124
    scratch = data[o:]
    ti = 0  # next effort input
    # -- kinematics, bias and loop map of every body, parents first ------------------------------
    for i in range(n):
        kind = topo[i, KIND]
        p = topo[i, PARENT]
        q = 6 * topo[i, NCH]
        r0 = topo[i, RO]
        q0 = topo[i, QO]
        xo = topo[i, XO]
        eo = topo[i, EO]
        G = _view2(gr[i], 0, 6, 6)
        if kind == GROUND:
            R[i] = fixed_R[i]
            ip[i] = fixed_ip[i]
            twist[i] = 0.0
            xc[eo : eo + 6] = 0.0
            cC[r0 : r0 + q] = 0.0
            continue
        nd = topo[i, DOF]
        inv = topo[i, INV] == 1
        if kind == ROOT:
            root_kinematics(x[xo : xo + 13], R[i], ip[i])
            twist[i] = x[xo + 7 : xo + 13]
        elif kind == IMPOSED:  # m = [ẋ'_P, x'_P, IP, Θ] (eq. 14's motion vector, R_a)
            m = tau[ti : ti + 18]
            euler_dcm(m[15:18], R[i])
            twist[i] = m[6:12]
            ip[i] = m[12:15]
        else:
            pr = topo[p, RO] + 6 * topo[i, SLOT]
            child_port_kinematics(ts[pr : pr + 6], pc[pr // 6], twist[p], ip[p], twb, ipb)
            # configuration qv and speeds uv: states [q (nq), u (k)], or an inverse joint's
            # motion input [u̇, u, p] with p the position output (Euler angles for rotations)
            nq = 4 if kind == SPHERICAL else 7 if kind == FREE else nd
            qv = x[xo : xo + nq]
            uv = x[xo + nq : xo + nq + nd]
            if inv:
                pv = tau[ti + 2 * nd : ti + 3 * nd]
                uv = tau[ti + nd : ti + 2 * nd]
                qv = qbuf[0:nq]
                joint_coordinates(pv, qv)
            if kind == REVOLUTE:
                revolute_kinematics(Gc[i], axis[i], qv[0], uv[0], twb, ipb, R[p], gr[i], e[i],
                                    twist[i], ip[i], R[i])  # fmt: skip
            elif kind == PRISMATIC:
                prismatic_kinematics(Gr[i], Gx[i], axis[i], R_ab[i], qv[0], uv[0], twb, ipb,
                                     R[p], G, e[i], twist[i], ip[i], R[i])  # fmt: skip
            elif kind == SPHERICAL:  # q = quaternion (4), u = ω_r (3); P_{a/b} in gr[36:45]
                quaternion_joint_kinematics(R_ab[i], qv, qv[0:0], uv, twb, ipb, R[p], G, e[i],
                                            twist[i], ip[i], R[i],
                                            _view2(gr[i], 36, 3, 3))  # fmt: skip
            elif kind == FREE:  # q = [r (3), quaternion (4)], u = [v_r, ω_r] (6)
                quaternion_joint_kinematics(R_ab[i], qv[3:7], qv[0:3], uv, twb, ipb, R[p], G,
                                            e[i], twist[i], ip[i], R[i],
                                            _view2(gr[i], 36, 3, 3))  # fmt: skip
            else:
                weld_kinematics(Gr[i], R_ab[i], twb, ipb, R[p], G, e[i], twist[i], ip[i], R[i])
        body_bias(D[i], mass[i], com[i], gravity[i], twist[i], R[i], h)
        for j in range(topo[i, EXO], topo[i, EXO] + topo[i, EXN]):
            add_external_wrench(h, ext[j], ext_point[j], ext_inertial[j], R[i])
        tsi = ts[r0 : r0 + q]
        if kind == ROOT:
            root_map(D_inv[i], h, tsi, xc[eo : eo + 6], cC[r0 : r0 + q])
        elif kind == IMPOSED:
            imposed_motion_map(D[i], h, tau[ti : ti + 6], tsi, xc[eo : eo + 6], cC[r0 : r0 + q])
            ti += 18
        elif kind == WELD:
            rigid_joint_map(D[i], G, e[i], h, tsi, DG, Da0h, PP[i], cP[i], CP[r0 : r0 + q],
                            cC[r0 : r0 + q])  # fmt: skip
            PCt[r0 : r0 + q] = CP[r0 : r0 + q]  # PC^T = CP
        elif inv:  # ẋ'_A = G ẋ'_B + e + S u̇ with u̇ imposed; the effort is the extra output
            Sk = S[i, :, 0:nd]
            joint_acceleration(e[i], Sk, tau[ti : ti + nd], a0)
            rigid_joint_map(D[i], G, a0, h, tsi, DG, Da0h, PP[i], cP[i], CP[r0 : r0 + q],
                            cC[r0 : r0 + q])  # fmt: skip
            PCt[r0 : r0 + q] = CP[r0 : r0 + q]
            inverse_effort_map(Sk, DG, Da0h, XP[eo : eo + nd], xc[eo : eo + nd])
            ti += 3 * nd
        else:
            forward_joint_map(D[i], S[i, :, 0:nd], DS[i, :, 0:nd], J_inv[i, 0:nd, 0:nd],
                              Q[q0 : q0 + 6 + nd + 2 * q], tsi, G, e[i], h, tau[ti : ti + nd], DPG,
                              XP[eo : eo + nd], CP[r0 : r0 + q], PCt[r0 : r0 + q], PP[i], cP[i],
                              cC[r0 : r0 + q], xc[eo : eo + nd])  # fmt: skip
            ti += nd
    # -- loop closures: their wrenches are the known wrenches at their two ports ----------------
    ports = n_rows // 6
    for c in range(closure_K.shape[0]):
        li = child[ports + 4 * c]
        ri = child[ports + 4 * c + 2]
        pl = topo[li, RO] + 6 * child[ports + 4 * c + 1]
        pr = topo[ri, RO] + 6 * child[ports + 4 * c + 3]
        child_port_kinematics(ts[pl : pl + 6], pc[pl // 6], twist[li], ip[li], tw_l, ip_l)
        child_port_kinematics(ts[pr : pr + 6], pc[pr // 6], twist[ri], ip[ri], tw_r, ip_r)
        closure_wrenches(closure_K[c], closure_D[c], tw_l, ip_l, R[li], tw_r, ip_r, R[ri],
                         kv[pl : pl + 6], kv[pr : pr + 6])  # fmt: skip
    # -- the loop (titopfmu.assembly.loop_solver): ẋ'_C into cC, the extras into xc ---------------
    i = loop_sweep(topo, child, PP, cP, CP, PCt, cC, kv, U, Vt, XP, XCt, xc, K, k, A, cC[0:0],
                   scratch, False)  # fmt: skip
    if i >= 0:
        return i
    # -- state derivatives ----------------------------------------------------------------------
    for i in range(n):
        kind = topo[i, KIND]
        xo = topo[i, XO]
        eo = topo[i, EO]
        if kind == ROOT:
            root_state_rate(x[xo : xo + 13], R[i], twist[i], xc[eo : eo + 6], dx[xo : xo + 13])
        elif topo[i, INV] == 1 or kind == IMPOSED or kind == WELD or kind == GROUND:
            continue  # no state
        elif kind == REVOLUTE or kind == PRISMATIC:
            dx[xo] = x[xo + 1]
            dx[xo + 1] = xc[eo]
        elif kind == SPHERICAL:
            quaternion_rate_into(x[xo : xo + 4], x[xo + 4 : xo + 7], dx[xo : xo + 4])
            dx[xo + 4 : xo + 7] = xc[eo : eo + 3]
        elif kind == FREE:
            free_coordinate_rate(_view2(gr[i], 36, 3, 3), x[xo : xo + 7], x[xo + 7 : xo + 13],
                                 dx[xo : xo + 7])  # fmt: skip
            dx[xo + 7 : xo + 13] = xc[eo : eo + 6]
    total = 0.0
    for t in range(dx.shape[0]):
        total += dx[t] * dx[t]
    if total - total != 0.0:  # NaN or inf somewhere (or an overflow)
        return n
    return -1
