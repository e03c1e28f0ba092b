"""Spatial algebra and attitude conventions (seed 004, sec. 2 and nomenclature).

Every expected value is computed independently of titopfmu: explicit cross products, the block
matrices written out in the paper, scipy's Rotation, numerical differentiation of rigid motions
and numerical integration.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

from titopfmu.spatial import (
    axis_rotation,
    coriolis_operator,
    dcm_from_euler,
    dcm_from_quaternion,
    dual_dcm,
    dynamic_model,
    euler_from_dcm,
    euler_of,
    kinematic_model,
    motion_dcm,
    newton_euler_residual,
    quaternion_from_euler,
    quaternion_rate,
    skew,
    transport_motion,
)

SEEDS = range(5)


def random_inertia(rng: np.random.Generator) -> np.ndarray:
    """A random inertia tensor of a real mass distribution (positive definite)."""
    a, b, c = rng.uniform(0.1, 1.0, size=3)
    R = random_rotation(rng)
    return R @ np.diag([b + c, a + c, a + b]) @ R.T


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    return Rotation.from_rotvec(rng.normal(size=3)).as_matrix()


def vee(s: np.ndarray) -> np.ndarray:
    """Vector of a (numerically) skew-symmetric matrix."""
    return 0.5 * np.array([s[2, 1] - s[1, 2], s[0, 2] - s[2, 0], s[1, 0] - s[0, 1]])


def ddt(f, t: float, h: float = 1e-3):
    """Five-point central difference of a (vector or matrix valued) function of time."""
    return (-f(t + 2 * h) + 8 * f(t + h) - 8 * f(t - h) + f(t - 2 * h)) / (12 * h)


def rigid_motion(seed: int):
    """A smooth rigid motion: body DCM P_{b/i}(t) and the inertial position of the point P(t)."""
    rng = np.random.default_rng(100 + seed)
    r0, r1, r2 = rng.normal(size=(3, 3))
    p0, p1, p2 = rng.normal(size=(3, 3))

    def R(t):
        return Rotation.from_rotvec(r0 + r1 * t + r2 * np.sin(t)).as_matrix()

    def p(t):
        return p0 + p1 * t + p2 * np.cos(1.3 * t)

    return R, p


def motion_vector_fd(R, p, t: float) -> np.ndarray:
    """Motion vector [v̇, ω̇, v, ω, IP, Θ] (body frame) of a point moving as p(t) with the body
    frame R(t), by numerical differentiation only."""

    def twist(s):
        Rs = R(s)
        v = Rs.T @ ddt(p, s)
        w = vee(Rs.T @ ddt(R, s))
        return np.concatenate([v, w])

    acc = ddt(twist, t)
    psi, th, phi = Rotation.from_matrix(R(t)).as_euler("ZYX")
    return np.concatenate([acc, twist(t), R(t).T @ p(t), [phi, th, psi]])


# ----------------------------------------------------------------------------------------------
# skew, kinematic model, dynamic model
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_skew_is_cross_product(seed):
    rng = np.random.default_rng(seed)
    v, w = rng.normal(size=(2, 3))
    s = skew(v)
    np.testing.assert_allclose(s @ w, np.cross(v, w), atol=1e-14)
    np.testing.assert_allclose(s, -s.T, atol=0)


def test_skew_layout_matches_nomenclature():
    x, y, z = 1.0, 2.0, 3.0
    np.testing.assert_array_equal(skew([x, y, z]), [[0, -z, y], [z, 0, -x], [-y, x, 0]])


@pytest.mark.parametrize("seed", SEEDS)
def test_kinematic_model_transports_twists(seed):
    rng = np.random.default_rng(seed)
    cp = rng.normal(size=3)  # vector C -> P
    v_p, w = rng.normal(size=(2, 3))
    tw_c = kinematic_model(cp) @ np.concatenate([v_p, w])
    pc = -cp
    np.testing.assert_allclose(tw_c[0:3], v_p + np.cross(w, pc), atol=1e-13)
    np.testing.assert_allclose(tw_c[3:6], w, atol=0)


@pytest.mark.parametrize("seed", SEEDS)
def test_kinematic_model_transports_wrenches_with_the_same_power(seed):
    rng = np.random.default_rng(seed)
    cp = rng.normal(size=3)
    f, t_c = rng.normal(size=(2, 3))  # force and torque about C
    tau = kinematic_model(cp)
    w_p = tau.T @ np.concatenate([f, t_c])
    # moment about P of a force applied at C: T_P = T_C + PC × F
    np.testing.assert_allclose(w_p[0:3], f, atol=0)
    np.testing.assert_allclose(w_p[3:6], t_c + np.cross(-cp, f), atol=1e-13)
    # the power of the wrench does not depend on the point where it is evaluated
    tw_p = rng.normal(size=6)
    v_c = tw_p[0:3] + np.cross(tw_p[3:6], -cp)
    power_c = f @ v_c + t_c @ tw_p[3:6]
    assert power_c == pytest.approx(w_p @ tw_p, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_dynamic_model_equals_block_matrix_of_eq2(seed):
    rng = np.random.default_rng(seed)
    m = rng.uniform(0.5, 5.0)
    ib = random_inertia(rng)
    bp = rng.normal(size=3)
    s = np.array([[0, -bp[2], bp[1]], [bp[2], 0, -bp[0]], [-bp[1], bp[0], 0]])
    expected = np.block([[m * np.eye(3), m * s], [-m * s, ib - m * s @ s]])
    d = dynamic_model(m, ib, bp)
    np.testing.assert_allclose(d, expected, atol=1e-12)
    np.testing.assert_allclose(d, d.T, atol=1e-12)
    # kinetic energy ½ x'^T D x' = ½ m |v_B|^2 + ½ ω^T I_B ω (König)
    tw = rng.normal(size=6)
    v_b = tw[0:3] + np.cross(tw[3:6], -bp)
    ke = 0.5 * m * v_b @ v_b + 0.5 * tw[3:6] @ ib @ tw[3:6]
    assert 0.5 * tw @ d @ tw == pytest.approx(ke, rel=1e-12)


# ----------------------------------------------------------------------------------------------
# Newton-Euler: coriolis operator, eqs. (5), (7), (11)
# ----------------------------------------------------------------------------------------------


def velocity_products_eq5(m, ib, bp, v, w):
    """The velocity-product terms of eq. (5), written exactly as in the paper."""
    s_w, s_bp = skew(w), skew(bp)
    top = m * s_w @ v + m * s_w @ s_bp @ w
    bottom = -m * s_bp @ s_w @ v + s_w @ (ib - m * s_bp @ s_bp) @ w
    return np.concatenate([top, bottom])


def newton_euler_first_principles(m, ib, pb, twist, acc, g):
    """Wrench [F; T_P] that must act on a rigid body (besides gravity) for it to have the spatial
    acceleration ``acc`` = [v̇_P, ω̇] (body-frame derivatives) at P, from Newton at the centre of
    mass and Euler's equation about it. Everything in the body frame."""
    v, w = twist[0:3], twist[3:6]
    vd, wd = acc[0:3], acc[3:6]
    a_p = vd + np.cross(w, v)
    a_b = a_p + np.cross(wd, pb) + np.cross(w, np.cross(w, pb))
    f = m * (a_b - g)
    t_b = ib @ wd + np.cross(w, ib @ w)
    return np.concatenate([f, t_b + np.cross(pb, f)])


@pytest.mark.parametrize("seed", SEEDS)
def test_coriolis_term_equals_velocity_products_of_eq5(seed):
    rng = np.random.default_rng(seed)
    m = rng.uniform(0.5, 5.0)
    ib = random_inertia(rng)
    bp = rng.normal(size=3)
    v, w = rng.normal(size=(2, 3))
    d = dynamic_model(m, ib, bp)
    tw = np.concatenate([v, w])
    np.testing.assert_allclose(
        coriolis_operator(tw) @ d @ tw, velocity_products_eq5(m, ib, bp, v, w), atol=1e-11
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_eq7_equals_eq5_and_first_principles(seed):
    """Eq. (7) (compact form, via the Jacobi identity (6)) equals eq. (5) and Newton-Euler about
    the centre of mass, for random bodies, twists and accelerations."""
    rng = np.random.default_rng(seed)
    m = rng.uniform(0.5, 5.0)
    ib = random_inertia(rng)
    pb = rng.normal(size=3)
    tw = rng.normal(size=6)
    acc = rng.normal(size=6)
    d = dynamic_model(m, ib, -pb)
    eq7 = d @ acc + coriolis_operator(tw) @ d @ tw
    eq5 = d @ acc + velocity_products_eq5(m, ib, -pb, tw[0:3], tw[3:6])
    np.testing.assert_allclose(eq7, eq5, atol=1e-11)
    np.testing.assert_allclose(
        eq7, newton_euler_first_principles(m, ib, pb, tw, acc, np.zeros(3)), atol=1e-11
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_jacobi_identity_eq6(seed):
    rng = np.random.default_rng(seed)
    bp, w, v = rng.normal(size=(3, 3))
    lhs = skew(bp) @ skew(w) @ v
    rhs = skew(w) @ skew(bp) @ v - skew(v) @ skew(bp) @ w
    np.testing.assert_allclose(lhs, rhs, atol=1e-13)


@pytest.mark.parametrize("seed", SEEDS)
def test_newton_euler_residual_eq11(seed):
    rng = np.random.default_rng(seed)
    m = rng.uniform(0.5, 5.0)
    ib = random_inertia(rng)
    pb = rng.normal(size=3)
    tw, acc = rng.normal(size=(2, 6))
    g = rng.normal(size=3)
    d = dynamic_model(m, ib, -pb)
    w_ext = newton_euler_first_principles(m, ib, pb, tw, acc, g)
    np.testing.assert_allclose(newton_euler_residual(d, tw, acc, g, w_ext), 0.0, atol=1e-11)
    # a different wrench leaves exactly that difference as residual
    dw = rng.normal(size=6)
    np.testing.assert_allclose(newton_euler_residual(d, tw, acc, g, w_ext + dw), -dw, atol=1e-11)


def test_coriolis_operator_layout():
    v = np.array([1.0, 2.0, 3.0])
    w = np.array([-0.5, 0.7, 0.2])
    c = coriolis_operator(np.concatenate([v, w]))
    np.testing.assert_array_equal(c[0:3, 0:3], skew(w))
    np.testing.assert_array_equal(c[0:3, 3:6], np.zeros((3, 3)))
    np.testing.assert_array_equal(c[3:6, 0:3], skew(v))
    np.testing.assert_array_equal(c[3:6, 3:6], skew(w))


# ----------------------------------------------------------------------------------------------
# motion-vector transport (Definition 1) and frame changes
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_transport_motion_composes(seed):
    rng = np.random.default_rng(seed)
    m_p = rng.normal(size=18)
    cp, dc = rng.normal(size=(2, 3))
    m_d_two_steps = transport_motion(transport_motion(m_p, cp), dc)
    m_d_direct = transport_motion(m_p, dc + cp)  # DP = DC + CP
    np.testing.assert_allclose(m_d_two_steps, m_d_direct, atol=1e-12)
    # there and back again
    np.testing.assert_allclose(transport_motion(transport_motion(m_p, cp), -cp), m_p, atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_transport_motion_matches_rigid_motion(seed):
    """m_C = v_CP(m_P) for a point C fixed in a rigid body, each side obtained by numerical
    differentiation of the trajectories of P and C."""
    R, p = rigid_motion(seed)
    pc = np.random.default_rng(seed).normal(size=3)  # PC in the body frame, constant

    def p_c(t):
        return p(t) + R(t) @ pc

    t = 0.37
    m_p = motion_vector_fd(R, p, t)
    m_c = motion_vector_fd(R, p_c, t)
    np.testing.assert_allclose(transport_motion(m_p, -pc), m_c, atol=1e-7)


@pytest.mark.parametrize("seed", SEEDS)
def test_dual_and_motion_dcm_compose_and_invert(seed):
    rng = np.random.default_rng(seed)
    p_ab, p_bc = random_rotation(rng), random_rotation(rng)
    p_ac = p_bc @ p_ab  # [v]_c = P_{b/c} P_{a/b} [v]_a
    np.testing.assert_allclose(dual_dcm(p_bc) @ dual_dcm(p_ab), dual_dcm(p_ac), atol=1e-12)
    np.testing.assert_allclose(motion_dcm(p_bc) @ motion_dcm(p_ab), motion_dcm(p_ac), atol=1e-12)
    np.testing.assert_allclose(dual_dcm(p_ab.T) @ dual_dcm(p_ab), np.eye(6), atol=1e-12)
    np.testing.assert_allclose(motion_dcm(p_ab.T) @ motion_dcm(p_ab), np.eye(18), atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_motion_dcm_projects_each_part_and_keeps_euler(seed):
    rng = np.random.default_rng(seed)
    p = random_rotation(rng)
    m = rng.normal(size=18)
    out = motion_dcm(p) @ m
    for k in range(5):
        np.testing.assert_allclose(out[3 * k : 3 * k + 3], p @ m[3 * k : 3 * k + 3], atol=1e-12)
    np.testing.assert_array_equal(out[15:18], m[15:18])
    # a wrench and a twist changed of frame keep their power
    w, tw = rng.normal(size=(2, 6))
    assert (dual_dcm(p) @ w) @ (dual_dcm(p) @ tw) == pytest.approx(w @ tw, rel=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_transport_commutes_with_frame_change(seed):
    """Transporting then changing frame equals changing frame then transporting (with the
    lever arm projected in the new frame)."""
    rng = np.random.default_rng(seed)
    p = random_rotation(rng)
    m = rng.normal(size=18)
    cp = rng.normal(size=3)
    lhs = motion_dcm(p) @ transport_motion(m, cp)
    rhs = transport_motion(motion_dcm(p) @ m, p @ cp)
    np.testing.assert_allclose(lhs, rhs, atol=1e-12)


# ----------------------------------------------------------------------------------------------
# attitude parameterisations
# ----------------------------------------------------------------------------------------------


def rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def ry(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def random_euler(rng):
    return np.array(
        [rng.uniform(-np.pi, np.pi), rng.uniform(-1.4, 1.4), rng.uniform(-np.pi, np.pi)]
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_dcm_from_euler_is_3_2_1(seed):
    rng = np.random.default_rng(seed)
    phi, th, psi = random_euler(rng)
    p = dcm_from_euler([phi, th, psi])
    np.testing.assert_allclose(p, rz(psi) @ ry(th) @ rx(phi), atol=1e-13)
    np.testing.assert_allclose(
        p, Rotation.from_euler("ZYX", [psi, th, phi]).as_matrix(), atol=1e-13
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_euler_round_trip(seed):
    rng = np.random.default_rng(seed)
    theta = random_euler(rng)
    np.testing.assert_allclose(euler_from_dcm(dcm_from_euler(theta)), theta, atol=1e-12)
    p = random_rotation(rng)
    np.testing.assert_allclose(dcm_from_euler(euler_from_dcm(p)), p, atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_euler_of_composes_attitudes(seed):
    rng = np.random.default_rng(seed)
    p_bi, p_ab = random_rotation(rng), random_rotation(rng)
    theta_a = euler_of(p_bi, p_ab)
    np.testing.assert_allclose(dcm_from_euler(theta_a), p_bi @ p_ab, atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_quaternions_match_scipy(seed):
    rng = np.random.default_rng(seed)
    theta = random_euler(rng)
    q = quaternion_from_euler(theta)
    assert np.linalg.norm(q) == pytest.approx(1.0, abs=1e-14)
    x, y, z, w = Rotation.from_euler("ZYX", theta[::-1]).as_quat()  # same sign too
    np.testing.assert_allclose(q, [w, x, y, z], atol=1e-15)
    np.testing.assert_allclose(dcm_from_quaternion(q), dcm_from_euler(theta), atol=1e-13)
    q_raw = rng.normal(size=4)  # not normalised, scalar first
    expected = Rotation.from_quat([q_raw[1], q_raw[2], q_raw[3], q_raw[0]]).as_matrix()
    np.testing.assert_allclose(dcm_from_quaternion(q_raw), expected, atol=1e-13)
    np.testing.assert_allclose(dcm_from_quaternion(-q_raw), expected, atol=1e-13)


@pytest.mark.parametrize("seed", range(3))
def test_quaternion_rate_integrates_to_exponential(seed):
    """q̇ = quaternion_rate(q, ω) with a constant body rate ω gives P(t) = P(0) exp(t (*ω))."""
    rng = np.random.default_rng(seed)
    q0 = quaternion_from_euler(random_euler(rng))
    w = rng.normal(size=3)
    t_end = 2.0
    sol = solve_ivp(
        lambda t, q: quaternion_rate(q, w),
        (0.0, t_end),
        q0,
        rtol=1e-12,
        atol=1e-12,
        method="DOP853",
    )
    q_end = sol.y[:, -1]
    expected = dcm_from_quaternion(q0) @ Rotation.from_rotvec(w * t_end).as_matrix()
    np.testing.assert_allclose(dcm_from_quaternion(q_end), expected, atol=1e-8)
    assert np.linalg.norm(q_end) == pytest.approx(1.0, abs=1e-8)


@pytest.mark.parametrize("seed", SEEDS)
def test_quaternion_rate_gives_body_angular_rate(seed):
    """d/dt P(q) along q̇ is P (*ω): ω is the body-frame angular rate."""
    rng = np.random.default_rng(seed)
    q = quaternion_from_euler(random_euler(rng))
    w = rng.normal(size=3)
    qd = quaternion_rate(q, w)
    h = 1e-6
    dp = (dcm_from_quaternion(q + h * qd) - dcm_from_quaternion(q - h * qd)) / (2 * h)
    np.testing.assert_allclose(dp, dcm_from_quaternion(q) @ skew(w), atol=1e-8)


def test_quaternion_rate_restores_the_norm():
    q = np.array([1.1, 0.0, 0.0, 0.0])  # same attitude, norm too large
    qd = quaternion_rate(q, np.zeros(3))
    assert q @ qd < 0  # the norm decreases towards one
    # and the encoded attitude is unaffected
    np.testing.assert_allclose(
        dcm_from_quaternion(q + 1e-3 * qd), dcm_from_quaternion(q), atol=1e-14
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_axis_rotation_matches_rotvec(seed):
    rng = np.random.default_rng(seed)
    r = rng.normal(size=3)
    r /= np.linalg.norm(r)
    angle = rng.uniform(-4.0, 4.0)
    np.testing.assert_allclose(
        axis_rotation(r, angle), Rotation.from_rotvec(angle * r).as_matrix(), atol=1e-13
    )
    # e^{θ (*r)} leaves r invariant and rotates a perpendicular vector by θ
    np.testing.assert_allclose(axis_rotation(r, angle) @ r, r, atol=1e-13)


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("phi_psi", [(0.3, 0.2), (-2.0, 1.0), (3.0, -3.0)])
def test_euler_at_gimbal_lock_follows_scipy(sign, phi_psi):
    """At θ = ±90° the closed form must give a valid attitude and scipy's φ = 0 convention."""
    phi, psi = phi_psi
    p = dcm_from_euler([phi, sign * np.pi / 2, psi])
    theta = euler_from_dcm(p)
    np.testing.assert_allclose(dcm_from_euler(theta), p, atol=1e-14)
    with pytest.warns(UserWarning, match="Gimbal lock"):
        psi_s, th_s, phi_s = Rotation.from_matrix(p).as_euler("ZYX")
    np.testing.assert_allclose(theta, [phi_s, th_s, psi_s], atol=1e-12)


def test_euler_from_dcm_matches_scipy_everywhere():
    rng = np.random.default_rng(7)
    for p in Rotation.random(2000, random_state=rng).as_matrix():
        psi, th, phi = Rotation.from_matrix(p).as_euler("ZYX")
        np.testing.assert_allclose(euler_from_dcm(p), [phi, th, psi], atol=1e-10)


def test_rotation_vector_kernel_matches_scipy():
    """The loop closure's δθ (rotation vector of a DCM) against scipy's as_rotvec, from 1e-14
    rad (the |w| < 1e-12 branch) to 3 rad."""
    from titopfmu.spatial.rotations import rotation_vector

    rng = np.random.default_rng(4)
    for angle in (1e-14, 1e-9, 1e-4, 0.3, 1.5, 3.0):
        for _ in range(5):
            n = rng.normal(size=3)
            rv = angle * n / np.linalg.norm(n)
            R = Rotation.from_rotvec(rv).as_matrix()
            out = rotation_vector(R)
            np.testing.assert_allclose(out, rv, rtol=1e-9, atol=1e-15)
