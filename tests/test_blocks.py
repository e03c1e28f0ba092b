"""The equations of each TITOP block (seed 004, sec. 3) on random inputs.

Expected values never come from titopfmu: accelerations of a body are derived by hand (and checked
against numerical differentiation of trajectories), wrenches from Newton's law at the centre of
mass and Euler's equation about it, composite bodies from the parallel-axis theorem, and the loop
solver is compared with a dense solve of all the block equations at once.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from titopfmu import (
    Constant,
    Engine,
    FreeBody,
    FreeBodyInverse,
    Ground,
    ImposedMotionBody,
    JointSpringDamper,
    LoopClosure,
    PrismaticBody,
    PrismaticBodyInverse,
    RevoluteBody,
    RevoluteBodyInverse,
    RigidBody,
    SphericalBody,
    SphericalBodyInverse,
    System,
    TimeFunction,
    WeldedBody,
)
from titopfmu.assembly.loop_solver import LoopNode, TreeLoopSolver
from titopfmu.blocks.loop_map import LoopMap
from titopfmu.spatial import newton_euler_residual

SEEDS = range(4)

# ----------------------------------------------------------------------------------------------
# independent helpers
# ----------------------------------------------------------------------------------------------


def rot(rotvec) -> np.ndarray:
    return Rotation.from_rotvec(np.asarray(rotvec, dtype=float)).as_matrix()


def random_rotation(rng) -> np.ndarray:
    return rot(rng.normal(size=3))


def random_inertia(rng) -> np.ndarray:
    """A random inertia tensor of a real mass distribution (triangle inequality holds)."""
    a, b, c = rng.uniform(0.1, 1.0, size=3)
    R = random_rotation(rng)
    return R @ np.diag([b + c, a + c, a + b]) @ R.T


def euler_zyx(p_bi) -> np.ndarray:
    psi, th, phi = Rotation.from_matrix(p_bi).as_euler("ZYX")
    return np.array([phi, th, psi])


def dcm_of_euler(theta) -> np.ndarray:
    phi, th, psi = theta
    return Rotation.from_euler("ZYX", [psi, th, phi]).as_matrix()


def vee(s) -> np.ndarray:
    return 0.5 * np.array([s[2, 1] - s[1, 2], s[0, 2] - s[2, 0], s[1, 0] - s[0, 1]])


def ddt(f, t, h=1e-3):
    """Five-point central difference."""
    return (-f(t + 2 * h) + 8 * f(t + h) - 8 * f(t - h) + f(t - 2 * h)) / (12 * h)


def motion_fd(R, p, t):
    """Motion vector [v̇, ω̇, v, ω, IP] (body frame R(t)) of the point p(t), numerically."""

    def twist(s):
        Rs = R(s)
        return np.concatenate([Rs.T @ ddt(p, s), vee(Rs.T @ ddt(R, s))])

    return np.concatenate([ddt(twist, t), twist(t), R(t).T @ p(t)])


def skew3(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def paper_d(m, ib, bp):
    """D_P of eq. (2), written out (bp = vector BP)."""
    s = skew3(bp)
    return np.block([[m * np.eye(3), m * s], [-m * s, ib - m * s @ s]])


def paper_c(twist):
    """C(x') of eq. (7), written out."""
    z = np.zeros((3, 3))
    return np.block([[skew3(twist[3:6]), z], [skew3(twist[0:3]), skew3(twist[3:6])]])


def transport_wrench(w, arm):
    """Wrench [F; T about E] -> [F; T about P], with arm = vector P->E."""
    return np.concatenate([w[0:3], w[3:6] + np.cross(arm, w[0:3])])


def transport_acc(acc, pc):
    """Spatial acceleration (body-frame derivatives) at P -> at C, for PC fixed in the body."""
    return np.concatenate([acc[0:3] + np.cross(acc[3:6], pc), acc[3:6]])


def rotate6(R, w):
    return np.concatenate([R @ w[0:3], R @ w[3:6]])


def required_wrench(m, ib, pb, twist, acc, g):
    """Total wrench at P, besides gravity, that gives a rigid body the spatial acceleration
    ``acc`` = [v̇_P, ω̇] (body-frame derivatives) at P: Newton at the centre of mass B
    (PB = ``pb``) and Euler about B. All in the body frame."""
    v, w = twist[0:3], twist[3:6]
    a_p = acc[0:3] + np.cross(w, v)
    a_b = a_p + np.cross(acc[3:6], pb) + np.cross(w, np.cross(w, pb))
    f = m * (a_b - g)
    t_b = ib @ acc[3:6] + np.cross(w, ib @ w)
    return np.concatenate([f, t_b + np.cross(pb, f)])


def solve_acc(m, ib, pb, twist, g, wrench):
    """Spatial acceleration produced by ``wrench`` (at P, body frame) on a free body, by solving
    the affine relation ``required_wrench(acc) = wrench``."""
    b = required_wrench(m, ib, pb, twist, np.zeros(6), g)
    a = np.column_stack([required_wrench(m, ib, pb, twist, e, g) - b for e in np.eye(6)])
    return np.linalg.solve(a, wrench - b)


def composite(parts):
    """Mass, centre of mass and inertia at the centre of mass of rigidly joined parts, each
    ``(m, I_B, PB)`` in a common frame."""
    mt = sum(m for m, _, _ in parts)
    com = sum(m * np.asarray(c) for m, _, c in parts) / mt
    it = np.zeros((3, 3))
    for m, ib, c in parts:
        d = np.asarray(c) - com
        it += ib + m * (d @ d * np.eye(3) - np.outer(d, d))
    return mt, it, com


def revolute_acc(acc_b, twist_b, R_ab, r, thd, thdd):
    """Eq. (17) derived by hand: spatial acceleration of A at P in R_a from the parent's (R_b)."""
    v, w = R_ab.T @ twist_b[0:3], R_ab.T @ twist_b[3:6]
    return np.concatenate(
        [
            R_ab.T @ acc_b[0:3] - thd * np.cross(r, v),
            R_ab.T @ acc_b[3:6] - thd * np.cross(r, w) + thdd * r,
        ]
    )


def prismatic_twist_acc(acc_b, twist_b, R_ab, t, x, xd, xdd):
    """Eq. (24) derived by hand: twist and acceleration of A at P = P0 + x t (in R_a)."""
    w = R_ab.T @ twist_b[3:6]
    wd = R_ab.T @ acc_b[3:6]
    v = R_ab.T @ twist_b[0:3] + np.cross(w, x * t) + xd * t
    vd = R_ab.T @ acc_b[0:3] + np.cross(wd, x * t) + xd * np.cross(w, t) + xdd * t
    return np.concatenate([v, w]), np.concatenate([vd, wd])


def dense_map(res, has_parent, n_children):
    """``(M, c)`` of a block's loop map ``y = M u + c``, whatever container the block returns."""
    if isinstance(res, tuple):
        return np.asarray(res[0], dtype=float), np.asarray(res[1], dtype=float)
    if isinstance(res, LoopMap):
        return res.dense(has_parent, n_children)
    p, q = (6 if has_parent else 0), 6 * n_children
    ne = 0 if res.xc is None else len(res.xc)
    M = np.zeros((p + q + ne, p + q))
    c = np.zeros(p + q + ne)
    cc = res.U @ res.V if getattr(res, "U", None) is not None else res.CC
    for rows, cols, val in (
        (slice(0, p), slice(0, p), res.PP),
        (slice(0, p), slice(p, p + q), res.PC),
        (slice(p, p + q), slice(0, p), res.CP),
        (slice(p, p + q), slice(p, p + q), cc),
        (slice(p + q, None), slice(0, p), res.XP),
        (slice(p + q, None), slice(p, p + q), res.XC),
    ):
        if val is not None and M[rows, cols].size:
            M[rows, cols] = val
    for rows, val in (
        (slice(0, p), res.cP),
        (slice(p, p + q), res.cC),
        (slice(p + q, None), res.xc),
    ):
        if val is not None and c[rows].size:
            c[rows] = val
    return M, c


def block_map(blk, kin, signals):
    return dense_map(blk.loop_map(kin, signals), blk.has_parent, blk.n_children)


def as_map_input(M, c, has_parent, n_children):
    """What TreeLoopSolver.solve takes for one node."""
    try:
        from titopfmu.assembly.loop_solver import LoopMap
    except ImportError:
        return (M, c)
    return LoopMap.from_dense(M, c, has_parent, n_children)


def solver_uy(result, nodes):
    """``(u_i, y_i)`` lists from TreeLoopSolver.solve's result, whatever its container."""
    if isinstance(result, tuple):
        return [np.asarray(u) for u in result[0]], [np.asarray(y) for y in result[1]]
    us, ys = [], []
    for i, node in enumerate(nodes):
        us.append(np.asarray(result.u(i)))
        parts = []
        if node.has_parent:
            parts.append(result.wrench_to_parent(i))
        if node.children:
            parts.append(result.acc_c[i])
        parts.append(result.extra[i])
        ys.append(np.concatenate(parts))
    return us, ys


def parent_port(rng):
    """Random kinematics of a parent port: twist, [IP] and P_{b/i}."""
    return SimpleNamespace(twist=rng.normal(size=6), ip=rng.normal(size=3), R=random_rotation(rng))


# ----------------------------------------------------------------------------------------------
# RigidBody (root, eqs. 11-13)
# ----------------------------------------------------------------------------------------------


def make_root(rng, frame="body"):
    m = rng.uniform(1.0, 4.0)
    ib = random_inertia(rng)
    com = rng.normal(size=3)
    pcs = rng.normal(size=(2, 3))
    pe = rng.normal(size=3)
    g = rng.normal(size=3) * 5
    blk = RigidBody(
        "root",
        m,
        ib,
        com=com,
        children={"C1": pcs[0], "C2": pcs[1]},
        external={"ext": {"point": pe, "frame": frame}},
        gravity=g,
        position=rng.normal(size=3),
        euler=[0.3, -0.4, 1.2],
        twist=rng.normal(size=6),
    )
    return blk, SimpleNamespace(m=m, ib=ib, com=com, pcs=pcs, pe=pe, g=g)


@pytest.mark.parametrize("seed", SEEDS)
def test_rigid_body_loop_map_is_newton_euler(seed):
    rng = np.random.default_rng(seed)
    blk, p = make_root(rng)
    x = blk.initial_state()
    x[3:7] = rng.normal(size=4)
    x[3:7] /= np.linalg.norm(x[3:7])
    w_ext = rng.normal(size=6)
    sig = {"ext": w_ext}
    kin = blk.kinematics(x, None, sig)
    R = Rotation.from_quat([x[4], x[5], x[6], x[3]]).as_matrix()
    np.testing.assert_allclose(kin.R, R, atol=1e-12)
    np.testing.assert_allclose(kin.twist, x[7:13], atol=0)
    np.testing.assert_allclose(kin.ip, R.T @ x[0:3], atol=1e-12)
    M, c = block_map(blk, kin, sig)
    w_c = rng.normal(size=12)
    y = M @ w_c + c
    acc = y[12:18]
    total = (
        transport_wrench(w_c[0:6], p.pcs[0])
        + transport_wrench(w_c[6:12], p.pcs[1])
        + transport_wrench(w_ext, p.pe)
    )
    expected = required_wrench(p.m, p.ib, p.com, x[7:13], acc, R.T @ p.g)
    np.testing.assert_allclose(expected, total, atol=1e-9)
    np.testing.assert_allclose(
        acc, solve_acc(p.m, p.ib, p.com, x[7:13], R.T @ p.g, total), atol=1e-9
    )
    # child ports: acceleration transported rigidly, twists and positions too
    for j, pc in enumerate(p.pcs):
        np.testing.assert_allclose(y[6 * j : 6 * j + 6], transport_acc(acc, pc), atol=1e-10)
        tw = x[7:13]
        np.testing.assert_allclose(
            kin.children[j].twist,
            np.concatenate([tw[0:3] + np.cross(tw[3:6], pc), tw[3:6]]),
            atol=1e-12,
        )
        np.testing.assert_allclose(kin.children[j].ip, R.T @ x[0:3] + pc, atol=1e-12)
        np.testing.assert_allclose(kin.children[j].R, R, atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_rigid_body_external_wrench_inertial_equals_body(seed):
    rng = np.random.default_rng(seed)
    body, _ = make_root(np.random.default_rng(seed))
    inertial, _ = make_root(np.random.default_rng(seed), frame="inertial")
    x = body.initial_state()
    w_b = rng.normal(size=6)
    kb = body.kinematics(x, None, {"ext": w_b})
    ki = inertial.kinematics(x, None, {})
    w_i = rotate6(kb.R, w_b)
    Mb, cb = block_map(body, kb, {"ext": w_b})
    Mi, ci = block_map(inertial, ki, {"ext": w_i})
    np.testing.assert_allclose(Mb, Mi, atol=1e-12)
    np.testing.assert_allclose(cb, ci, atol=1e-10)
    assert np.linalg.norm(cb) > 1e-3  # the wrench matters


@pytest.mark.parametrize("seed", SEEDS)
def test_several_external_wrenches_in_both_frames_add_up(seed):
    """Two body-frame and two inertial-frame wrenches at four points: the root's acceleration is
    that of their resultant at P (eq. 13) under gravity (eq. 11)."""
    rng = np.random.default_rng(seed)
    m, ib = rng.uniform(1.0, 4.0), random_inertia(rng)
    com, g = rng.normal(size=3), rng.normal(size=3)
    frames = {"a": "inertial", "b": "body", "c": "inertial", "d": "body"}
    points = {e: rng.normal(size=3) for e in frames}
    external = {e: {"point": points[e], "frame": f} for e, f in frames.items()}
    blk = RigidBody("root", m, ib, com=com, gravity=g, twist=rng.normal(size=6), external=external)
    x = blk.initial_state()
    x[3:7] = rng.normal(size=4)
    x[0:3] = rng.normal(size=3)
    sig = {e: rng.normal(size=6) for e in frames}
    kin = blk.kinematics(x, None, sig)
    R = Rotation.from_quat([x[4], x[5], x[6], x[3]]).as_matrix()
    total = sum(
        transport_wrench(rotate6(R.T, sig[e]) if f == "inertial" else sig[e], points[e])
        for e, f in frames.items()
    )
    _, c = block_map(blk, kin, sig)
    np.testing.assert_allclose(c, solve_acc(m, ib, com, x[7:13], R.T @ g, total), atol=1e-9)


def test_rigid_body_engine_residual_and_state_derivative():
    """Through the engine: eq. (11) residual with the wrenches of a welded child and an
    external wrench is zero, and the states move as position' = P_{b/i} v, P' = P (*ω)."""
    rng = np.random.default_rng(7)
    m, ib, com = 2.0, random_inertia(rng), np.array([0.1, -0.3, 0.2])
    pc, pe, g = np.array([0.5, 0.2, -0.7]), np.array([-0.2, 0.4, 0.1]), np.array([0.0, 0.0, -9.81])
    s = System()
    s.add(
        RigidBody(
            "b", m, ib, com=com, children={"C": pc},
            external={"e": {"point": pe, "frame": "body"}}, gravity=g,
            position=[1, 2, 3], euler=[0.2, -0.5, 0.9], twist=[0.3, -0.2, 0.1, 0.5, -0.7, 0.4],
        ),
        WeldedBody("w", 1.5, random_inertia(rng), P_ab=random_rotation(rng), com=[0, 0.3, 0.1],
                   gravity=g),
        Constant("f", [1.0, -2.0, 0.5, 0.3, 0.1, -0.4]),
    )  # fmt: skip
    s.connect("b.C", "w.P")
    s.connect("f.y", "b.e")
    eng = Engine(s)
    x0 = eng.initial_state()
    ev = eng.evaluate(0.0, x0)
    R = dcm_of_euler(eng.signal(ev, "b.euler"))
    tw = eng.signal(ev, "b.twist")
    acc = eng.signal(ev, "b.acc")
    w_c = eng.signal(ev, "b.C.W")
    w_e = eng.signal(ev, "b.e")
    s_bp = -com
    sk = np.array([[0, -s_bp[2], s_bp[1]], [s_bp[2], 0, -s_bp[0]], [-s_bp[1], s_bp[0], 0]])
    d_p = np.block([[m * np.eye(3), m * sk], [-m * sk, ib - m * sk @ sk]])  # eq. (2)
    res = newton_euler_residual(
        d_p, tw, acc, R.T @ g, transport_wrench(w_c, pc) + transport_wrench(w_e, pe)
    )
    np.testing.assert_allclose(res, 0.0, atol=1e-9)
    # the child's wrench on b is the welded body's wrench on its parent
    np.testing.assert_allclose(eng.signal(ev, "w.P.W"), w_c, atol=1e-12)
    # state derivative: states are [IP]_Ri, q = [w, x, y, z], twist
    names = list(s.blocks["b"].state_names)
    dx = eng.derivative(0.0, x0)
    assert x0.size == 13  # b is the only stateful block
    xb, dxb = x0, dx
    np.testing.assert_array_equal(xb, s.blocks["b"].initial_state())
    assert names[0:3] == ["x", "y", "z"] and names[3:7] == ["qw", "qx", "qy", "qz"]
    np.testing.assert_allclose(xb[0:3], eng.signal(ev, "b.position"), atol=1e-12)
    np.testing.assert_allclose(dxb[0:3], R @ tw[0:3], atol=1e-12)
    q, qd = xb[3:7], dxb[3:7]
    h = 1e-6

    def dcm(qq):
        return Rotation.from_quat([qq[1], qq[2], qq[3], qq[0]]).as_matrix()

    dR = (dcm(q + h * qd) - dcm(q - h * qd)) / (2 * h)
    w = tw[3:6]
    np.testing.assert_allclose(
        dR, R @ np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]]), atol=1e-7
    )
    np.testing.assert_allclose(dxb[7:13], acc, atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_root_plus_welded_equals_one_composite_body(seed):
    """A RigidBody with a WeldedBody child accelerates exactly as one body with the combined
    mass properties (parallel-axis theorem), under gravity, an external wrench and rotation."""
    rng = np.random.default_rng(seed)
    m_b, i_b, com_b = 2.0, random_inertia(rng), rng.normal(size=3) * 0.3
    m_w, i_w, com_w = 1.3, random_inertia(rng), rng.normal(size=3) * 0.3
    pc, p_ab = rng.normal(size=3), random_rotation(rng)
    g = np.array([0.0, -9.81, 0.0])
    tw0, eu0 = rng.normal(size=6), [0.4, 0.3, -1.1]
    w_ext = rng.normal(size=6)

    s = System()
    s.add(
        RigidBody("b", m_b, i_b, com=com_b, children={"C": pc}, gravity=g, euler=eu0, twist=tw0,
                  external={"e": {"frame": "inertial"}}),
        WeldedBody("w", m_w, i_w, P_ab=p_ab, com=com_w, gravity=g),
        Constant("f", w_ext),
    )  # fmt: skip
    s.connect("b.C", "w.P")
    s.connect("f.y", "b.e")
    m_t, i_t, com_t = composite([(m_b, i_b, com_b), (m_w, p_ab @ i_w @ p_ab.T, pc + p_ab @ com_w)])
    one = System()
    one.add(
        RigidBody("b", m_t, i_t, com=com_t, gravity=g, euler=eu0, twist=tw0,
                  external={"e": {"frame": "inertial"}}),
        Constant("f", w_ext),
    )  # fmt: skip
    one.connect("f.y", "b.e")
    e1, e2 = Engine(s), Engine(one)
    ev1, ev2 = e1.evaluate(0.0, e1.initial_state()), e2.evaluate(0.0, e2.initial_state())
    acc = e1.signal(ev1, "b.acc")
    np.testing.assert_allclose(acc, e2.signal(ev2, "b.acc"), atol=1e-9)
    R = dcm_of_euler(eu0)
    np.testing.assert_allclose(
        acc, solve_acc(m_t, i_t, com_t, tw0, R.T @ g, rotate6(R.T, w_ext)), atol=1e-9
    )
    # the welded body's motion at P is the parent's at C, projected in R_a (eq. 15, Fig. 6)
    m_w_sig = e1.signal(ev1, "w.m")
    m_c = e1.signal(ev1, "b.C.m")
    np.testing.assert_allclose(m_w_sig[0:6], rotate6(p_ab.T, m_c[0:6]), atol=1e-10)
    np.testing.assert_allclose(m_w_sig[6:12], rotate6(p_ab.T, m_c[6:12]), atol=1e-12)
    np.testing.assert_allclose(m_w_sig[12:15], p_ab.T @ m_c[12:15], atol=1e-12)
    np.testing.assert_allclose(dcm_of_euler(m_w_sig[15:18]), R @ p_ab, atol=1e-10)


# ----------------------------------------------------------------------------------------------
# WeldedBody (eq. 15)
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_welded_body_equation_15(seed):
    rng = np.random.default_rng(seed)
    m, ib, com, pc, pe = (
        1.7,
        random_inertia(rng),
        rng.normal(size=3),
        rng.normal(size=3),
        rng.normal(size=3),
    )
    p_ab, g = random_rotation(rng), rng.normal(size=3)
    blk = WeldedBody("w", m, ib, P_ab=p_ab, com=com, children={"C": pc}, gravity=g,
                     external={"e": {"point": pe}})  # fmt: skip
    par = parent_port(rng)
    w_e = rng.normal(size=6)
    sig = {"e": w_e}
    kin = blk.kinematics(np.zeros(0), par, sig)
    tw_a = rotate6(p_ab.T, par.twist)
    np.testing.assert_allclose(kin.twist, tw_a, atol=1e-12)
    np.testing.assert_allclose(kin.R, par.R @ p_ab, atol=1e-12)
    np.testing.assert_allclose(kin.ip, p_ab.T @ par.ip, atol=1e-12)
    M, c = block_map(blk, kin, sig)
    u = rng.normal(size=12)
    y = M @ u + c
    acc_a = rotate6(p_ab.T, u[0:6])
    w_on_a = -rotate6(p_ab.T, y[0:6])  # W_{./A,P} = -W_{A/B,P}, in R_a
    lhs = w_on_a + transport_wrench(u[6:12], pc) + transport_wrench(w_e, pe)
    np.testing.assert_allclose(
        lhs, required_wrench(m, ib, com, tw_a, acc_a, (par.R @ p_ab).T @ g), atol=1e-9
    )
    np.testing.assert_allclose(y[6:12], transport_acc(acc_a, pc), atol=1e-10)


# ----------------------------------------------------------------------------------------------
# RevoluteBody / RevoluteBodyInverse (eqs. 16-23)
# ----------------------------------------------------------------------------------------------


def revolute_setup(rng, cls=RevoluteBody):
    prm = SimpleNamespace(
        m=rng.uniform(0.5, 3.0), ib=random_inertia(rng), com=rng.normal(size=3),
        axis=rng.normal(size=3) * 2.0, p_a0b=random_rotation(rng), pc=rng.normal(size=3),
        pe=rng.normal(size=3), g=rng.normal(size=3) * 3,
    )  # fmt: skip
    blk = cls(
        "arm", prm.m, prm.ib, axis=prm.axis, P_a0b=prm.p_a0b, com=prm.com,
        children={"C": prm.pc}, external={"e": {"point": prm.pe}}, gravity=prm.g,
    )  # fmt: skip
    prm.r = prm.axis / np.linalg.norm(prm.axis)
    return blk, prm


@pytest.mark.parametrize("seed", SEEDS)
def test_revolute_forward_satisfies_newton_euler_and_joint_equation(seed):
    """y = M u + c of the forward block satisfies eq. (18) (Newton-Euler of A with the
    acceleration of eq. 17) and eq. (19)/(21) (C_m is the axial torque of B on A)."""
    rng = np.random.default_rng(seed)
    blk, p = revolute_setup(rng)
    par = parent_port(rng)
    th, thd, cm = rng.uniform(-3, 3), rng.normal(), rng.normal()
    w_e = rng.normal(size=6)
    sig = {"joint.tau": np.array([cm]), "e": w_e}
    kin = blk.kinematics(np.array([th, thd]), par, sig)
    M, c = block_map(blk, kin, sig)
    u = rng.normal(size=12)
    y = M @ u + c
    assert y.shape == (13,)
    thdd = y[12]
    R_ab = p.p_a0b @ rot(th * p.r)  # eq. (16)
    tw_a = np.concatenate([R_ab.T @ par.twist[0:3], R_ab.T @ par.twist[3:6] + thd * p.r])
    np.testing.assert_allclose(kin.twist, tw_a, atol=1e-12)
    np.testing.assert_allclose(kin.R, par.R @ R_ab, atol=1e-12)
    np.testing.assert_allclose(kin.ip, R_ab.T @ par.ip, atol=1e-12)
    acc_a = revolute_acc(u[0:6], par.twist, R_ab, p.r, thd, thdd)
    w_b_on_a = -rotate6(R_ab.T, y[0:6])
    lhs = w_b_on_a + transport_wrench(u[6:12], p.pc) + transport_wrench(w_e, p.pe)
    g_a = (par.R @ R_ab).T @ p.g
    np.testing.assert_allclose(lhs, required_wrench(p.m, p.ib, p.com, tw_a, acc_a, g_a), atol=1e-8)
    assert p.r @ w_b_on_a[3:6] == pytest.approx(cm, abs=1e-9)
    # eq. (21) literally, with D_P of eq. (2), J_r of eq. (20) and C(x') of eq. (7)
    d_p, sel = paper_d(p.m, p.ib, -p.com), np.r_[np.zeros(3), p.r]
    acc_b_a = rotate6(R_ab.T, u[0:6])
    tw_b_a = rotate6(R_ab.T, par.twist)
    inner = d_p @ (
        acc_b_a
        - np.r_[g_a, np.zeros(3)]
        - thd * np.r_[np.cross(p.r, tw_b_a[0:3]), np.cross(p.r, tw_b_a[3:6])]
    )
    inner += paper_c(tw_a) @ d_p @ tw_a
    inner -= transport_wrench(u[6:12], p.pc) + transport_wrench(w_e, p.pe)
    assert sel @ d_p @ sel * thdd + sel @ inner == pytest.approx(cm, abs=1e-8)
    np.testing.assert_allclose(y[6:12], transport_acc(acc_a, p.pc), atol=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_revolute_forward_and_inverse_agree(seed):
    rng = np.random.default_rng(seed)
    fwd, _ = revolute_setup(np.random.default_rng(seed))
    inv, _ = revolute_setup(np.random.default_rng(seed), RevoluteBodyInverse)
    par = parent_port(rng)
    th, thd, cm = rng.uniform(-3, 3), rng.normal(), rng.normal()
    w_e = rng.normal(size=6)
    u = rng.normal(size=12)
    sig_f = {"joint.tau": np.array([cm]), "e": w_e}
    Mf, cf = block_map(fwd, fwd.kinematics(np.array([th, thd]), par, sig_f), sig_f)
    yf = Mf @ u + cf
    sig_i = {"joint.m": np.array([yf[12], thd, th]), "e": w_e}
    Mi, ci = block_map(inv, inv.kinematics(np.zeros(0), par, sig_i), sig_i)
    yi = Mi @ u + ci
    assert yi[12] == pytest.approx(cm, abs=1e-9)  # C_m back
    np.testing.assert_allclose(yi[0:12], yf[0:12], atol=1e-9)  # same W_P, same child motion


@pytest.mark.parametrize("seed", range(3))
def test_revolute_kinematics_match_numerical_differentiation(seed):
    """Eq. (17) and the transport to a child port against differentiated trajectories."""
    rng = np.random.default_rng(seed)
    inv, p = revolute_setup(rng, RevoluteBodyInverse)
    r0, r1, q0, q1 = rng.normal(size=(4, 3))
    a0, a1, a2 = rng.normal(size=3)

    def R_b(t):
        return rot(r0 + r1 * np.sin(t))

    def p_p(t):  # inertial position of the joint point P (a point of B)
        return q0 + q1 * t**2

    def theta(t):
        return a0 + a1 * t + a2 * np.cos(2 * t)

    def R_a(t):
        return R_b(t) @ p.p_a0b @ rot(theta(t) * p.r)

    def p_c(t):
        return p_p(t) + R_a(t) @ p.pc

    t = 0.6
    m_b = motion_fd(R_b, p_p, t)
    m_a_p = motion_fd(R_a, p_p, t)
    m_a_c = motion_fd(R_a, p_c, t)
    thd = a1 - 2 * a2 * np.sin(2 * t)
    thdd = -4 * a2 * np.cos(2 * t)
    # the hand-derived eq. (17) used by the other tests
    np.testing.assert_allclose(
        revolute_acc(m_b[0:6], m_b[6:12], p.p_a0b @ rot(theta(t) * p.r), p.r, thd, thdd),
        m_a_p[0:6], atol=1e-6,
    )  # fmt: skip
    par = SimpleNamespace(twist=m_b[6:12], ip=m_b[12:15], R=R_b(t))
    sig = {"joint.m": np.array([thdd, thd, theta(t)]), "e": np.zeros(6)}
    kin = inv.kinematics(np.zeros(0), par, sig)
    np.testing.assert_allclose(kin.twist, m_a_p[6:12], atol=1e-7)
    np.testing.assert_allclose(kin.ip, m_a_p[12:15], atol=1e-9)
    np.testing.assert_allclose(kin.R, R_a(t), atol=1e-12)
    np.testing.assert_allclose(kin.children[0].twist, m_a_c[6:12], atol=1e-7)
    np.testing.assert_allclose(kin.children[0].ip, m_a_c[12:15], atol=1e-9)
    M, c = block_map(inv, kin, sig)
    y = M @ np.concatenate([m_b[0:6], rng.normal(size=6)]) + c
    np.testing.assert_allclose(y[6:12], m_a_c[0:6], atol=1e-6)
    # the forward block has the same pose and twist kinematics
    fwd, _ = revolute_setup(np.random.default_rng(seed))
    kf = fwd.kinematics(np.array([theta(t), thd]), par, {})
    np.testing.assert_allclose(kf.twist, m_a_p[6:12], atol=1e-7)
    np.testing.assert_allclose(kf.children[0].ip, m_a_c[12:15], atol=1e-9)


# ----------------------------------------------------------------------------------------------
# PrismaticBody / PrismaticBodyInverse (eqs. 24-29)
# ----------------------------------------------------------------------------------------------


def prismatic_setup(rng, cls=PrismaticBody):
    prm = SimpleNamespace(
        m=rng.uniform(0.5, 3.0), ib=random_inertia(rng), com=rng.normal(size=3),
        axis=rng.normal(size=3) * 0.7, p_ab=random_rotation(rng), pc=rng.normal(size=3),
        pe=rng.normal(size=3), g=rng.normal(size=3) * 3,
    )  # fmt: skip
    blk = cls(
        "slider", prm.m, prm.ib, axis=prm.axis, P_ab=prm.p_ab, com=prm.com,
        children={"C": prm.pc}, external={"e": {"point": prm.pe}}, gravity=prm.g,
    )  # fmt: skip
    prm.t = prm.axis / np.linalg.norm(prm.axis)
    return blk, prm


@pytest.mark.parametrize("seed", SEEDS)
def test_prismatic_forward_satisfies_newton_euler_and_joint_equation(seed):
    """Eqs. (24)-(29): Newton-Euler of A at P = P0 + x t, F_m the axial force of B on A, and the
    wrench on the parent transported back to P0 (eq. 29)."""
    rng = np.random.default_rng(seed)
    blk, p = prismatic_setup(rng)
    par = parent_port(rng)
    x, xd, fm = rng.normal(), rng.normal(), rng.normal()
    w_e = rng.normal(size=6)
    sig = {"joint.tau": np.array([fm]), "e": w_e}
    kin = blk.kinematics(np.array([x, xd]), par, sig)
    M, c = block_map(blk, kin, sig)
    u = rng.normal(size=12)
    y = M @ u + c
    xdd = y[12]
    tw_a, acc_a = prismatic_twist_acc(u[0:6], par.twist, p.p_ab, p.t, x, xd, xdd)
    np.testing.assert_allclose(kin.twist, tw_a, atol=1e-12)
    np.testing.assert_allclose(kin.ip, p.p_ab.T @ par.ip + x * p.t, atol=1e-12)
    np.testing.assert_allclose(kin.R, par.R @ p.p_ab, atol=1e-12)
    # wrench of B on A: y[0:6] is A on B at P0 in R_b; move it to P (arm P->P0 = -x t)
    w_b_on_a = transport_wrench(-rotate6(p.p_ab.T, y[0:6]), -x * p.t)
    lhs = w_b_on_a + transport_wrench(u[6:12], p.pc) + transport_wrench(w_e, p.pe)
    g_a = (par.R @ p.p_ab).T @ p.g
    np.testing.assert_allclose(lhs, required_wrench(p.m, p.ib, p.com, tw_a, acc_a, g_a), atol=1e-8)
    assert p.t @ w_b_on_a[0:3] == pytest.approx(fm, abs=1e-9)
    # eq. (27) literally: F_m = m ẍ + [t; 0]^T (D_P (τ_{-xt} ẋ'_P0 - g - ẋ (*t) ω) + C D x' - τ^T W)
    d_p, sel = paper_d(p.m, p.ib, -p.com), np.r_[p.t, np.zeros(3)]
    acc_p0 = rotate6(p.p_ab.T, u[0:6])
    tau_mxt = np.block([[np.eye(3), skew3(-x * p.t)], [np.zeros((3, 3)), np.eye(3)]])
    inner = d_p @ (
        tau_mxt @ acc_p0
        - np.r_[g_a, np.zeros(3)]
        - xd * np.r_[np.cross(p.t, tw_a[3:6]), np.zeros(3)]
    )
    inner += paper_c(tw_a) @ d_p @ tw_a
    inner -= transport_wrench(u[6:12], p.pc) + transport_wrench(w_e, p.pe)
    assert p.m * xdd + sel @ inner == pytest.approx(fm, abs=1e-8)
    np.testing.assert_allclose(y[6:12], transport_acc(acc_a, p.pc), atol=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_prismatic_forward_and_inverse_agree(seed):
    rng = np.random.default_rng(seed)
    fwd, _ = prismatic_setup(np.random.default_rng(seed))
    inv, _ = prismatic_setup(np.random.default_rng(seed), PrismaticBodyInverse)
    par = parent_port(rng)
    x, xd, fm = rng.normal(), rng.normal(), rng.normal()
    w_e = rng.normal(size=6)
    u = rng.normal(size=12)
    sig_f = {"joint.tau": np.array([fm]), "e": w_e}
    Mf, cf = block_map(fwd, fwd.kinematics(np.array([x, xd]), par, sig_f), sig_f)
    yf = Mf @ u + cf
    sig_i = {"joint.m": np.array([yf[12], xd, x]), "e": w_e}
    Mi, ci = block_map(inv, inv.kinematics(np.zeros(0), par, sig_i), sig_i)
    yi = Mi @ u + ci
    assert yi[12] == pytest.approx(fm, abs=1e-9)
    np.testing.assert_allclose(yi[0:12], yf[0:12], atol=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_prismatic_kinematics_match_numerical_differentiation(seed):
    rng = np.random.default_rng(seed)
    inv, p = prismatic_setup(rng, PrismaticBodyInverse)
    r0, r1, q0, q1 = rng.normal(size=(4, 3))
    a0, a1, a2 = rng.normal(size=3)

    def R_b(t):
        return rot(r0 + r1 * t)

    def p_p0(t):
        return q0 + q1 * np.sin(t)

    def xj(t):
        return a0 + a1 * t + a2 * t**2

    def R_a(t):
        return R_b(t) @ p.p_ab

    def p_p(t):
        return p_p0(t) + R_a(t) @ (xj(t) * p.t)

    def p_c(t):
        return p_p(t) + R_a(t) @ p.pc

    t = 0.45
    m_b = motion_fd(R_b, p_p0, t)
    m_a_p = motion_fd(R_a, p_p, t)
    m_a_c = motion_fd(R_a, p_c, t)
    xd, xdd = a1 + 2 * a2 * t, 2 * a2
    tw, acc = prismatic_twist_acc(m_b[0:6], m_b[6:12], p.p_ab, p.t, xj(t), xd, xdd)
    np.testing.assert_allclose(tw, m_a_p[6:12], atol=1e-7)
    np.testing.assert_allclose(acc, m_a_p[0:6], atol=1e-6)
    par = SimpleNamespace(twist=m_b[6:12], ip=m_b[12:15], R=R_b(t))
    sig = {"joint.m": np.array([xdd, xd, xj(t)]), "e": np.zeros(6)}
    kin = inv.kinematics(np.zeros(0), par, sig)
    np.testing.assert_allclose(kin.twist, m_a_p[6:12], atol=1e-7)
    np.testing.assert_allclose(kin.ip, m_a_p[12:15], atol=1e-9)
    np.testing.assert_allclose(kin.children[0].twist, m_a_c[6:12], atol=1e-7)
    np.testing.assert_allclose(kin.children[0].ip, m_a_c[12:15], atol=1e-9)
    M, c = block_map(inv, kin, sig)
    y = M @ np.concatenate([m_b[0:6], rng.normal(size=6)]) + c
    np.testing.assert_allclose(y[6:12], m_a_c[0:6], atol=1e-6)


# ----------------------------------------------------------------------------------------------
# ImposedMotionBody and Ground
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_imposed_motion_body_outputs_the_required_wrench(seed):
    """ImposedMotionBody + WeldedBody child: the wrench W at P, plus the external wrench, is what
    the composite body needs for the imposed motion (Newton-Euler of the composite)."""
    rng = np.random.default_rng(seed)
    m_b, i_b, com_b = 2.0, random_inertia(rng), rng.normal(size=3) * 0.5
    m_w, i_w, com_w = 0.8, random_inertia(rng), rng.normal(size=3) * 0.5
    pc, p_ab, pe = rng.normal(size=3), random_rotation(rng), rng.normal(size=3)
    g = np.array([0.0, 0.0, -9.81])
    motion = np.concatenate([rng.normal(size=15), [0.3, -0.6, 2.0]])
    w_e = rng.normal(size=6)
    s = System()
    s.add(
        ImposedMotionBody("imp", m_b, i_b, com=com_b, children={"C": pc}, gravity=g,
                          external={"e": {"point": pe}}),
        WeldedBody("w", m_w, i_w, P_ab=p_ab, com=com_w, gravity=g),
        Constant("mot", motion),
        Constant("f", w_e),
    )  # fmt: skip
    s.connect("imp.C", "w.P")
    s.connect("mot.y", "imp.m")
    s.connect("f.y", "imp.e")
    eng = Engine(s)
    ev = eng.evaluate(0.0, eng.initial_state())
    w = eng.signal(ev, "imp.W")
    R = dcm_of_euler(motion[15:18])
    m_t, i_t, com_t = composite([(m_b, i_b, com_b), (m_w, p_ab @ i_w @ p_ab.T, pc + p_ab @ com_w)])
    need = required_wrench(m_t, i_t, com_t, motion[6:12], motion[0:6], R.T @ g)
    np.testing.assert_allclose(w + transport_wrench(w_e, pe), need, atol=1e-9)
    np.testing.assert_allclose(eng.signal(ev, "imp.m")[0:15], motion[0:15], atol=1e-12)
    np.testing.assert_allclose(eng.signal(ev, "imp.position"), R @ motion[12:15], atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_ground_holds_a_welded_body_against_gravity(seed):
    rng = np.random.default_rng(seed)
    pc, p_ab, com_w = rng.normal(size=3), random_rotation(rng), rng.normal(size=3)
    m_w = 2.5
    g = np.array([0.0, -9.81, 0.0])
    euler = [0.2, 0.5, -0.3]
    s = System()
    s.add(
        Ground("g", children={"C": pc}, position=[1.0, 2.0, 3.0], euler=euler),
        WeldedBody("w", m_w, random_inertia(rng), P_ab=p_ab, com=com_w, gravity=g),
    )
    s.connect("g.C", "w.P")
    eng = Engine(s)
    ev = eng.evaluate(0.0, eng.initial_state())
    g_base = dcm_of_euler(euler).T @ g
    ob = pc + p_ab @ com_w
    expected = -np.concatenate([m_w * g_base, np.cross(ob, m_w * g_base)])
    np.testing.assert_allclose(eng.signal(ev, "g.W"), expected, atol=1e-10)
    np.testing.assert_allclose(eng.signal(ev, "g.acc"), 0.0, atol=0)
    np.testing.assert_allclose(eng.signal(ev, "w.twist"), 0.0, atol=0)
    np.testing.assert_allclose(
        eng.signal(ev, "w.position"), [1.0, 2.0, 3.0] + dcm_of_euler(euler) @ pc, atol=1e-12
    )


# ----------------------------------------------------------------------------------------------
# LoopClosure (sec. 3.4)
# ----------------------------------------------------------------------------------------------


def side(twist, ip, R):
    return SimpleNamespace(twist=np.asarray(twist, float), ip=np.asarray(ip, float), R=R)


def test_loop_closure_zero_wrench_for_coincident_motions():
    rng = np.random.default_rng(0)
    K = np.diag([100.0, 200.0, 300.0, 10.0, 20.0, 30.0])
    lc = LoopClosure("lc", K, np.eye(6))
    R_l, R_r = random_rotation(rng), random_rotation(rng)
    p_i, tw_i = rng.normal(size=3), rng.normal(size=6)  # same point, same motion (inertial)
    left = side(rotate6(R_l.T, tw_i), R_l.T @ p_i, R_l)
    right = side(rotate6(R_r.T, tw_i), R_r.T @ p_i, R_r)
    # same frame attitude for a coincident pose: use R_r = R_l
    right_same = side(rotate6(R_l.T, tw_i), R_l.T @ p_i, R_l)
    w_l, w_r = lc.wrenches(left, right_same)
    np.testing.assert_allclose(w_l, 0.0, atol=1e-12)
    np.testing.assert_allclose(w_r, 0.0, atol=1e-12)
    # different frames but same position and velocity: only a rotational spring torque
    w_l, _ = lc.wrenches(left, right)
    np.testing.assert_allclose(w_l[0:3], 0.0, atol=1e-10)


@pytest.mark.parametrize("seed", SEEDS)
def test_loop_closure_restores_and_is_equal_and_opposite(seed):
    rng = np.random.default_rng(seed)
    k_lin, k_rot, d_lin = 500.0, 40.0, 3.0
    K = np.diag([k_lin] * 3 + [k_rot] * 3)
    D = np.diag([d_lin] * 3 + [0.0] * 3)
    lc = LoopClosure("lc", K, D)
    R_l = random_rotation(rng)
    dp_i = rng.normal(size=3) * 1e-2  # right side displaced by dp (inertial)
    dth = rng.normal(size=3) * 1e-2  # and rotated by dth (left frame)
    R_r = R_l @ rot(dth)
    p_i = rng.normal(size=3)
    tw_l = rng.normal(size=6)
    dv_i = rng.normal(size=3)
    left = side(tw_l, R_l.T @ p_i, R_l)
    v_r_i = R_l @ tw_l[0:3] + dv_i
    right = side(
        np.concatenate([R_r.T @ v_r_i, R_r.T @ (R_l @ tw_l[3:6])]), R_r.T @ (p_i + dp_i), R_r
    )
    w_l, w_r = lc.wrenches(left, right)
    # force on the left side pulls it towards the right side (and along the relative velocity)
    expected_f_l = R_l.T @ (k_lin * dp_i + d_lin * dv_i)
    np.testing.assert_allclose(w_l[0:3], expected_f_l, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(w_l[3:6], k_rot * dth, rtol=1e-6, atol=1e-10)
    # the right side is pushed back: opposite force, restoring (negative power on dp)
    f_r_i = R_r @ w_r[0:3]
    assert f_r_i @ dp_i < 0
    # equal and opposite once projected in the same (inertial) frame
    np.testing.assert_allclose(rotate6(R_l, w_l) + rotate6(R_r, w_r), 0.0, atol=1e-10)
    # potential energy is ½ δx^T K δx
    assert lc.potential_energy(left, right) == pytest.approx(
        0.5 * (k_lin * dp_i @ dp_i + k_rot * dth @ dth), rel=1e-6
    )


# ----------------------------------------------------------------------------------------------
# signal blocks
# ----------------------------------------------------------------------------------------------


def test_signal_blocks_outputs():
    law = JointSpringDamper("law", k=3.0, d=0.5, q_ref=0.2)
    out = law.evaluate(0.0, {"m": np.array([np.nan, 2.0, 1.0])})  # q̈ unknown before the loop
    np.testing.assert_allclose(out["tau"], [-3.0 * (1.0 - 0.2) - 0.5 * 2.0])
    c = Constant("c", [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(c.evaluate(5.0, {})["y"], [1.0, 2.0, 3.0])
    assert c.ports["y"].size == 3
    f = TimeFunction("f", lambda t: [np.sin(t), t**2], 2)
    np.testing.assert_allclose(f.evaluate(0.7, {})["y"], [np.sin(0.7), 0.49])
    assert f.ports["y"].size == 2


def test_signal_blocks_drive_a_joint_through_the_engine():
    """JointSpringDamper on a revolute joint: the torque read by the joint is -k (θ - θ_ref) - d θ̇,
    and a TimeFunction feeds an external wrench at the time of the evaluation."""
    s = System()
    s.add(
        Ground("g", children={"C": [0, 0, 0]}),
        RevoluteBody("arm", 1.0, np.eye(3) * 0.1, com=[1, 0, 0], theta0=0.3, theta_dot0=-0.7,
                     external={"push": {"point": [1, 0, 0]}}, gravity=[0, 0, 0]),
        JointSpringDamper("law", k=2.0, d=0.4, q_ref=0.1),
        TimeFunction("push", lambda t: [0, t, 0, 0, 0, 0], 6),
    )  # fmt: skip
    s.connect("g.C", "arm.P")
    s.connect("arm.joint.m", "law.m")
    s.connect("law.tau", "arm.joint.tau")
    s.connect("push.y", "arm.push")
    eng = Engine(s)
    ev = eng.evaluate(1.5, eng.initial_state())
    tau = -2.0 * (0.3 - 0.1) - 0.4 * (-0.7)
    np.testing.assert_allclose(eng.signal(ev, "arm.joint.tau"), [tau], atol=1e-14)
    np.testing.assert_allclose(eng.signal(ev, "push.y"), [0, 1.5, 0, 0, 0, 0])
    # θ̈ J = C_m + moment of the push about the axis; J = I_zz + m |PB_perp|^2 = 0.1 + 1
    qdd = eng.signal(ev, "arm.joint.m")[0]
    np.testing.assert_allclose(eng.signal(ev, "arm.joint.m")[1:], [-0.7, 0.3])
    moment = np.cross([1.0, 0.0, 0.0], [0.0, 1.5, 0.0])[2]  # body-frame push at [1, 0, 0]
    assert qdd == pytest.approx((tau + moment) / 1.1, rel=1e-10)


# ----------------------------------------------------------------------------------------------
# loop solver
# ----------------------------------------------------------------------------------------------


def random_forest(rng, n_nodes=9):
    """Random forest (two roots) listed parents first, with some known (loop-closure) slots."""
    parent = [-1]
    for i in range(1, n_nodes):
        parent.append(-1 if i == 4 else int(rng.integers(0, i)))
    slots = {i: [j for j in range(n_nodes) if parent[j] == i] for i in range(n_nodes)}
    for i in range(n_nodes):
        if rng.random() < 0.4:
            slots[i].append(-1)
        rng.shuffle(slots[i])
    nodes = []
    for i in range(n_nodes):
        pi = parent[i]
        nodes.append(
            LoopNode(
                has_parent=pi >= 0,
                parent=pi,
                parent_slot=slots[pi].index(i) if pi >= 0 else -1,
                children=tuple(slots[i]),
            )
        )
    return nodes


@pytest.mark.parametrize("seed", range(6))
def test_tree_loop_solver_against_dense_solve(seed):
    rng = np.random.default_rng(seed)
    nodes = random_forest(rng)
    dense, maps, known = [], [], []
    for node in nodes:
        p, q = (6 if node.has_parent else 0), 6 * len(node.children)
        ne = int(rng.integers(0, 4))
        M = rng.normal(size=(p + q + ne, p + q)) * 0.15
        c = rng.normal(size=p + q + ne)
        dense.append((M, c))
        maps.append(as_map_input(M, c, node.has_parent, len(node.children)))
        known.append(rng.normal(size=q) if q else None)
    us, ys = solver_uy(TreeLoopSolver(nodes).solve(maps, known), nodes)

    # every block's own equation and every connection
    for i, node in enumerate(nodes):
        M, c = dense[i]
        np.testing.assert_allclose(ys[i], M @ us[i] + c, atol=1e-10)
        p = 6 if node.has_parent else 0
        if node.has_parent:
            pp = 6 if nodes[node.parent].has_parent else 0
            s = pp + 6 * node.parent_slot
            np.testing.assert_allclose(us[i][0:6], ys[node.parent][s : s + 6], atol=1e-10)
        for j, ch in enumerate(node.children):
            w = us[i][p + 6 * j : p + 6 * j + 6]
            if ch >= 0:
                np.testing.assert_allclose(w, ys[ch][0:6], atol=1e-10)
                assert nodes[ch].parent == i and nodes[ch].parent_slot == j
            else:
                np.testing.assert_allclose(w, known[i][6 * j : 6 * j + 6], atol=0)

    # the same unknowns from one dense linear system of all blocks
    sizes = [(6 if n.has_parent else 0) + 6 * len(n.children) for n in nodes]
    off = np.concatenate([[0], np.cumsum(sizes)])
    total = int(off[-1])
    A = np.zeros((total, total))
    b = np.zeros(total)
    for i, node in enumerate(nodes):
        p = 6 if node.has_parent else 0
        if node.has_parent:
            par = node.parent
            Mp, cp = dense[par]
            s = (6 if nodes[par].has_parent else 0) + 6 * node.parent_slot
            rows = slice(off[i], off[i] + 6)
            A[rows, off[i] : off[i] + 6] += np.eye(6)
            A[rows, off[par] : off[par + 1]] -= Mp[s : s + 6]
            b[rows] = cp[s : s + 6]
        for j, ch in enumerate(node.children):
            rows = slice(off[i] + p + 6 * j, off[i] + p + 6 * j + 6)
            A[rows, rows] += np.eye(6)
            if ch >= 0:
                Mc, cc = dense[ch]
                A[rows, off[ch] : off[ch + 1]] -= Mc[0:6]
                b[rows] = cc[0:6]
            else:
                b[rows] = known[i][6 * j : 6 * j + 6]
    sol = np.linalg.solve(A, b)
    for i in range(len(nodes)):
        np.testing.assert_allclose(us[i], sol[off[i] : off[i + 1]], atol=1e-9)


@pytest.mark.parametrize(
    "cls",
    [RigidBody, ImposedMotionBody, WeldedBody, RevoluteBody, PrismaticBody, RevoluteBodyInverse,
     PrismaticBodyInverse, SphericalBody, FreeBody, SphericalBodyInverse, FreeBodyInverse],
)  # fmt: skip
def test_body_blocks_keep_few_instance_attributes(cls):
    """A body block has at most 29 instance attributes. CPython shares one key table among the
    instances of a class only up to that many; beyond, every block carries its own 1.6 kB dict,
    read cold at each evaluation on long chains (about 6 % of the step at 1000 bodies in
    scripts/bench_engine.py). New constants belong in a record such as JointEquations."""
    blk = cls(
        "b", 2.0, np.diag([1.0, 2.0, 3.0]), children={"c1": [0, 0, 1], "c2": [1, 0, 0]},
        external={"push": {"point": [0, 1, 0], "frame": "inertial"}},
    )  # fmt: skip
    assert len(vars(blk)) <= 29, sorted(vars(blk))


@pytest.mark.parametrize("seed", range(4))
def test_tree_loop_solver_extras_only_gives_the_same_extras(seed):
    """``extras_only`` (the engine's state-derivative path) skips the child-port wrenches;
    its extras are those of the full solve, with dense maps, rank-r factored ones (U V), and
    maps without extra outputs. The solver reuses its stacks: a later solve, with other
    values, leaves an earlier solution as it was."""
    rng = np.random.default_rng(100 + seed)
    nodes = random_forest(rng, n_nodes=12)
    maps, known = [], []
    for node in nodes:
        p, q = (6 if node.has_parent else 0), 6 * len(node.children)
        ne = int(rng.integers(0, 4))
        M = rng.normal(size=(p + q + ne, p + q)) * 0.15
        m = LoopMap.from_dense(M, rng.normal(size=p + q + ne), node.has_parent, len(node.children))
        if q and rng.random() < 0.5:  # factored CC = U V
            r = int(rng.integers(1, 4))
            m.U, m.V = rng.normal(size=(q, r)) * 0.3, rng.normal(size=(r, q)) * 0.3
        if ne == 0 and rng.random() < 0.5:
            m.XP = m.XC = m.xc = None
        maps.append(m)
        known.append(rng.normal(size=q) if q else None)
    solver = TreeLoopSolver(nodes)
    full = solver.solve(list(maps), known)
    kept = [e.copy() for e in full.extra], [w.copy() for w in full.w_c]
    lean = solver.solve(list(maps), known, extras_only=True)
    assert lean.w_c is None and lean.acc_c is None
    other = []
    for m, n in zip(maps, nodes, strict=True):
        dense = m.dense(n.has_parent, len(n.children))
        other.append(LoopMap.from_dense(*dense, n.has_parent, len(n.children)))
    for m in other:
        m.xc = None if m.xc is None else m.xc + 1.0
    solver.solve(other, [None if k is None else -k for k in known])
    for before, after in zip(kept[0] + kept[1], full.extra + full.w_c, strict=True):
        np.testing.assert_array_equal(before, after)
    assert any(len(e) for e in full.extra)
    scale = max(float(np.max(np.abs(e))) for e in full.extra if len(e))
    for i in range(len(nodes)):
        np.testing.assert_allclose(lean.extra[i], full.extra[i], rtol=1e-13, atol=1e-14 * scale)


def chain_system(closure=False):
    """Floating base with a prismatic-revolute-revolute branch and a welded branch; with
    ``closure``, a loop-closure spring-damper ties the first pendulum back to the base."""
    rng = np.random.default_rng(11)
    g = [0.0, -9.81, 0.0]
    base_ports = {"C1": [0.0, -1.0, 0.0], "C2": [0.5, 0.0, 0.3]}
    p1_ports = {"T": [0, -1.2, 0]}
    if closure:
        base_ports["C3"] = [0.2, -1.0, 0.5]
        p1_ports["K"] = [0.3, -0.5, 0.2]
    s = System()
    s.add(
        RigidBody("base", 5.0, random_inertia(rng), com=[0.1, 0.2, 0.0], children=base_ports,
                  gravity=g, euler=[0.1, 0.2, 0.3], twist=[0.1, 0.2, -0.3, 0.4, -0.2, 0.3]),
        PrismaticBody("slide", 1.0, random_inertia(rng), axis=[1, 0, -1], children={"S": [0, 0, 0]},
                      x0=0.2, x_dot0=-0.1, gravity=g, P_ab=random_rotation(rng)),
        RevoluteBody("p1", 2.0, np.zeros((3, 3)), com=[0, -1.2, 0], children=p1_ports,
                     theta0=2.9, theta_dot0=0.5, gravity=g),
        RevoluteBody("p2", 3.0, np.zeros((3, 3)), com=[0, -1.6, 0], theta0=-2.9, gravity=g,
                     axis=[0, 1, 1], P_a0b=random_rotation(rng)),
        WeldedBody("tip", 0.7, random_inertia(rng), com=[0.2, 0, 0], P_ab=random_rotation(rng),
                   gravity=g),
        Constant("f0", [0.5]), Constant("f1", [-0.2]), Constant("f2", [0.1]),
    )  # fmt: skip
    s.connect("base.C1", "slide.P")
    s.connect("slide.S", "p1.P")
    s.connect("p1.T", "p2.P")
    s.connect("base.C2", "tip.P")
    s.connect("f0.y", "slide.joint.tau")
    s.connect("f1.y", "p1.joint.tau")
    s.connect("f2.y", "p2.joint.tau")
    if closure:
        k = np.diag([20.0, 30.0, 40.0, 5.0, 6.0, 7.0])
        s.add(LoopClosure("lc", k, 0.1 * k))
        s.connect("p1.K", "lc.left")
        s.connect("lc.right", "base.C3")
    return s


@pytest.mark.parametrize("closure", [False, True])
def test_engine_solution_matches_dense_solve_of_block_maps(closure):
    """The engine's tree solution equals the dense solve of all block loop maps at once, and the
    connections are consistent (child's parent-port motion = parent's child-port motion). With
    a loop closure, its wrenches enter as known wrenches at two child ports."""
    s = chain_system(closure)
    eng = Engine(s)
    x0 = eng.initial_state()
    ev = eng.evaluate(0.0, x0)
    # my own pre-loop pass: kinematics parents first, then each block's dense map
    order = ["base", "slide", "p1", "p2", "tip"]
    parent_of = {"slide": ("base", 0), "p1": ("slide", 0), "p2": ("p1", 0), "tip": ("base", 1)}
    effort = {"slide": "f0", "p1": "f1", "p2": "f2"}
    kin, maps = {}, {}
    for name in order:
        blk = s.blocks[name]
        par = kin[parent_of[name][0]].children[parent_of[name][1]] if name in parent_of else None
        sig = {"joint.tau": s.blocks[effort[name]].evaluate(0.0, {})["y"]} if name in effort else {}
        kin[name] = blk.kinematics(blk.initial_state(), par, sig)
        maps[name] = block_map(blk, kin[name], sig)
    sizes = {n: (6 if s.blocks[n].has_parent else 0) + 6 * s.blocks[n].n_children for n in order}
    off = {}
    k = 0
    for n in order:
        off[n] = k
        k += sizes[n]
    A, b = np.eye(k), np.zeros(k)
    for n, (par, slot) in parent_of.items():
        Mp, cp = maps[par]
        pp = 6 if s.blocks[par].has_parent else 0
        r = slice(off[n], off[n] + 6)  # child's acc_P = parent's acc at the slot
        A[r, off[par] : off[par] + sizes[par]] -= Mp[pp + 6 * slot : pp + 6 * slot + 6]
        b[r] = cp[pp + 6 * slot : pp + 6 * slot + 6]
        r = slice(off[par] + pp + 6 * slot, off[par] + pp + 6 * slot + 6)  # parent's W_C
        Mc, cc = maps[n]
        A[r, off[n] : off[n] + sizes[n]] -= Mc[0:6]
        b[r] = cc[0:6]
    if closure:  # p1.K (slot 1, after the parent port) and base.C3 (slot 2, root)
        w_l, w_r = s.blocks["lc"].wrenches(kin["p1"].children[1], kin["base"].children[2])
        assert np.linalg.norm(w_l) > 1.0
        b[off["p1"] + 6 + 6 : off["p1"] + 18] = w_l
        b[off["base"] + 12 : off["base"] + 18] = w_r
    sol = np.linalg.solve(A, b)
    # root acceleration and joint accelerations
    nb = sizes["base"]
    y_base = maps["base"][0] @ sol[off["base"] : off["base"] + nb] + maps["base"][1]
    np.testing.assert_allclose(eng.signal(ev, "base.acc"), y_base[nb : nb + 6], atol=1e-9)
    for n in ("slide", "p1", "p2"):
        y = maps[n][0] @ sol[off[n] : off[n] + sizes[n]] + maps[n][1]
        assert eng.signal(ev, f"{n}.joint.m")[0] == pytest.approx(y[-1], abs=1e-9)
        np.testing.assert_allclose(eng.signal(ev, f"{n}.P.W"), y[0:6], atol=1e-9)
    # connection consistency as reported by the engine
    for n, (par, slot) in parent_of.items():
        port = s.blocks[par].child_names[slot]
        np.testing.assert_allclose(
            eng.signal(ev, f"{n}.P.m"), eng.signal(ev, f"{par}.{port}.m"), atol=1e-12
        )
        np.testing.assert_allclose(
            eng.signal(ev, f"{n}.P.W"), eng.signal(ev, f"{par}.{port}.W"), atol=1e-12
        )


def body_energy_com(eng, ev, s, g):
    """Kinetic + potential energy and m·(centre of mass) of every body, from the engine's twists
    and poses and the blocks' mass properties (own formulas)."""
    e, mc, mt = 0.0, np.zeros(3), 0.0
    for name, blk in s.blocks.items():
        if not hasattr(blk, "mass"):
            continue
        tw = eng.signal(ev, f"{name}.twist")
        R = dcm_of_euler(eng.signal(ev, f"{name}.euler"))
        ip_i = eng.signal(ev, f"{name}.position")
        v_b = tw[0:3] + np.cross(tw[3:6], blk.com)
        com_i = ip_i + R @ blk.com
        e += 0.5 * blk.mass * v_b @ v_b + 0.5 * tw[3:6] @ blk.inertia @ tw[3:6]
        e -= blk.mass * g @ com_i
        mc += blk.mass * com_i
        mt += blk.mass
    return e, mc / mt


def test_free_chain_conserves_energy_and_com_falls_freely():
    """No effort, no damping: energy is conserved and the total centre of mass follows the
    parabola of free fall, for a root with prismatic, revolute and welded descendants."""
    s = chain_system()
    for n in ("f0", "f1", "f2"):
        s.blocks[n].value[:] = 0.0
    g = np.array([0.0, -9.81, 0.0])
    eng = Engine(s)
    x0 = eng.initial_state()
    ev0 = eng.evaluate(0.0, x0)
    e0, c0 = body_energy_com(eng, ev0, s, g)
    h = 1e-6
    ev_p, ev_m = eng.evaluate(h, x0 + h * eng.derivative(0.0, x0)), None
    ev_m = eng.evaluate(-h, x0 - h * eng.derivative(0.0, x0))
    vc0 = (body_energy_com(eng, ev_p, s, g)[1] - body_energy_com(eng, ev_m, s, g)[1]) / (2 * h)
    res = eng.simulate(0.6, output_interval=0.3, record=["base.state.x"], rtol=1e-10, atol=1e-12)
    assert res.time[-1] == pytest.approx(0.6)
    # re-integrate to the end state with the engine's derivative to check the invariants
    from scipy.integrate import solve_ivp

    sol = solve_ivp(eng.derivative, (0.0, 0.6), x0, method="DOP853", rtol=1e-10, atol=1e-12)
    x1 = sol.y[:, -1]
    e1, c1 = body_energy_com(eng, eng.evaluate(0.6, x1), s, g)
    assert e1 == pytest.approx(e0, abs=1e-6 * max(1.0, abs(e0)))
    np.testing.assert_allclose(c1, c0 + vc0 * 0.6 + 0.5 * g * 0.36, atol=1e-6)
    assert res["base.state.x"][-1] == pytest.approx(x1[0], abs=1e-7)


def test_free_bodies_joined_by_a_closure_spring_conserve_momentum_and_energy():
    """Two free bodies (no gravity) tied by an isotropic translational closure spring: the
    spring force acts along the line of the two points, so linear and angular momentum and
    the energy ½ m v² + ½ ω·Iω + ½ k |IC_r - IC_l|² are conserved. Exercises known wrenches
    on root child ports."""
    rng = np.random.default_rng(3)
    k = 50.0
    zero = [0.0, 0.0, 0.0]
    s = System()
    s.add(
        RigidBody("a", 1.5, random_inertia(rng), com=[0.1, 0.0, 0.2], children={"C": [0.5, 0, 0]},
                  gravity=zero, twist=[0.1, 0.2, 0.0, 0.3, -0.2, 0.5], euler=[0.1, 0.2, 0.3]),
        RigidBody("b", 2.5, random_inertia(rng), com=[0.0, -0.1, 0.0], children={"C": [0, 0.4, 0]},
                  gravity=zero, position=[1.0, -0.2, 0.3], twist=[-0.2, 0.0, 0.1, 0.0, 0.4, -0.3]),
        LoopClosure("lc", np.diag([k, k, k, 0.0, 0.0, 0.0])),
    )  # fmt: skip
    s.connect("a.C", "lc.left")
    s.connect("lc.right", "b.C")
    eng = Engine(s)

    def invariants(x):
        ev = eng.evaluate(0.0, x)
        p_tot, l_tot, e = np.zeros(3), np.zeros(3), 0.0
        for name in ("a", "b"):
            blk = s.blocks[name]
            tw = eng.signal(ev, f"{name}.twist")
            R = dcm_of_euler(eng.signal(ev, f"{name}.euler"))
            v_b = tw[0:3] + np.cross(tw[3:6], blk.com)
            com_i = eng.signal(ev, f"{name}.position") + R @ blk.com
            p = blk.mass * (R @ v_b)
            p_tot += p
            l_tot += np.cross(com_i, p) + R @ (blk.inertia @ tw[3:6])
            e += 0.5 * blk.mass * v_b @ v_b + 0.5 * tw[3:6] @ blk.inertia @ tw[3:6]
        ca = eng.signal(ev, "a.position") + dcm_of_euler(eng.signal(ev, "a.euler")) @ [0.5, 0, 0]
        cb = eng.signal(ev, "b.position") + dcm_of_euler(eng.signal(ev, "b.euler")) @ [0, 0.4, 0]
        e += 0.5 * k * (cb - ca) @ (cb - ca)
        return p_tot, l_tot, e

    from scipy.integrate import solve_ivp

    x0 = eng.initial_state()
    sol = solve_ivp(eng.derivative, (0.0, 1.5), x0, method="DOP853", rtol=1e-10, atol=1e-12)
    p0, l0, e0 = invariants(x0)
    p1, l1, e1 = invariants(sol.y[:, -1])
    assert e0 > 1.0  # the spring is loaded: the two points start apart
    np.testing.assert_allclose(p1, p0, atol=1e-7)
    np.testing.assert_allclose(l1, l0, atol=1e-7)
    assert e1 == pytest.approx(e0, rel=1e-7)


@pytest.mark.parametrize("seed", range(4))
def test_relative_motion_bias_kernel_is_minus_c_transpose(seed):
    """The joints' velocity-product term e = -C(x'_0)^T S u against the operator C of eq. (7)
    (titopfmu.spatial.coriolis_operator)."""
    from titopfmu.blocks.bodies import FreeBody, PortKinematics
    from titopfmu.spatial import coriolis_operator

    rng = np.random.default_rng(seed)
    tw0, su = rng.normal(size=6), rng.normal(size=6)
    # the core's e: a free joint (S = 1, u = S u) at zero configuration (G = 1, x'_0 = tw0),
    # whose acceleration at zero parent acceleration and u̇ = 0 is e
    blk = FreeBody("f", 1.0, np.eye(3))
    x = np.concatenate([np.zeros(3), [1.0, 0.0, 0.0, 0.0], su])
    kin = blk.kinematics(x, PortKinematics(tw0, np.zeros(3), np.eye(3)), {})
    e = blk.acceleration(kin, np.zeros(6), np.zeros(6))
    np.testing.assert_allclose(e, -coriolis_operator(tw0).T @ su, rtol=1e-14, atol=1e-14)
