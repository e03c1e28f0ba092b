"""Kernels of the object path: small matrix products, quaternion kinematics.

The object blocks (:mod:`titopfmu.blocks`) evaluate the block equations with these functions on
float64 arrays (:mod:`titopfmu.blocks.kernels`). The engine and the native FMUs run the same
equations in the C core (:mod:`titopfmu.core`, ``csrc/``); the tests hold both to rounding.
"""

from __future__ import annotations

import math

import numpy as np


def kernel(fn):
    """Mark ``fn`` as a kernel of the object path: a function on float64 arrays writing into
    output arrays, run by the Python interpreter (the C core, :mod:`titopfmu.core`, is what runs
    compiled)."""
    return fn


def matrix_view(v, rows, cols):
    """The 1-D array ``v`` (at least rows×cols values) seen as a row-major rows×cols matrix,
    without copy."""
    return v[: rows * cols].reshape(rows, cols)


# -- products and sums on small dense arrays (numpy) ---------------------------------------------


def mv(a, v, out):
    """``out = a v``."""
    np.dot(a, v, out=out)


def mtv(a, v, out):
    """``out = a^T v``."""
    np.dot(a.T, v, out=out)


def mm(a, b, out):
    """``out = a b``."""
    np.dot(a, b, out=out)


def mtm(a, b, out):
    """``out = a^T b``."""
    np.dot(a.T, b, out=out)


def unpack3(a):
    """The values of ``a`` as Python floats (a list): the scalar arithmetic that follows is
    several times faster on them than on numpy's scalars."""
    return a.tolist()


unpack4 = unpack6 = unpack3


def unpack33(m):
    """The values of the 3×3 ``m`` as Python floats, row by row (a list)."""
    return m.ravel().tolist()


def vadd(a, b, out):
    """``out = a + b`` (1-D)."""
    np.add(a, b, out=out)


def vsub(a, b, out):
    """``out = a - b`` (1-D)."""
    np.subtract(a, b, out=out)


def vneg(a):
    """``a = -a`` in place (1-D)."""
    np.negative(a, out=a)


def maxpy(a, x, b, out):
    """``out = a + x b`` (2-D, x a scalar)."""
    np.multiply(b, x, out=out)
    out += a


def mneg(a):
    """``a = -a`` in place (2-D)."""
    np.negative(a, out=a)


# -- quaternions ----------------------------------------------------------------------------------


@kernel
def euler_dcm(theta, out):
    """``out`` (3×3) = P_{b/i} = R_z(ψ) R_y(θ) R_x(φ) of the 3-2-1 Euler angles Θ = [φ, θ, ψ]
    (rad): scipy's ``Rotation.from_euler("ZYX", [ψ, θ, φ])``, in closed form."""
    phi, th, psi = unpack3(theta)
    sf, cf = math.sin(phi), math.cos(phi)
    st, ct = math.sin(th), math.cos(th)
    sp, cp = math.sin(psi), math.cos(psi)
    out[0, 0] = cp * ct
    out[0, 1] = cp * st * sf - sp * cf
    out[0, 2] = cp * st * cf + sp * sf
    out[1, 0] = sp * ct
    out[1, 1] = sp * st * sf + cp * cf
    out[1, 2] = sp * st * cf - cp * sf
    out[2, 0] = -st
    out[2, 1] = ct * sf
    out[2, 2] = ct * cf


@kernel
def euler_quaternion(theta, out):
    """``out`` (4) = the unit quaternion [w, x, y, z] of the 3-2-1 Euler angles Θ = [φ, θ, ψ]
    (rad), q = q_z(ψ) ⊗ q_y(θ) ⊗ q_x(φ): scipy's ``from_euler("ZYX", [ψ, θ, φ]).as_quat()``
    (same sign) in scalar-first order."""
    phi, th, psi = unpack3(theta)
    cf, sf = math.cos(0.5 * phi), math.sin(0.5 * phi)
    ct, st = math.cos(0.5 * th), math.sin(0.5 * th)
    cp, sp = math.cos(0.5 * psi), math.sin(0.5 * psi)
    out[0] = cf * ct * cp + sf * st * sp
    out[1] = sf * ct * cp - cf * st * sp
    out[2] = cf * st * cp + sf * ct * sp
    out[3] = cf * ct * sp - sf * st * cp


@kernel
def quaternion_dcm(q, out):
    """``out`` (3×3) = P_{b/i} of the (not necessarily normalised) quaternion q = [w, x, y, z]."""
    w, x, y, z = unpack4(q)
    s = 2.0 / (w * w + x * x + y * y + z * z)
    out[0, 0] = 1.0 - s * (y * y + z * z)
    out[0, 1] = s * (x * y - w * z)
    out[0, 2] = s * (x * z + w * y)
    out[1, 0] = s * (x * y + w * z)
    out[1, 1] = 1.0 - s * (x * x + z * z)
    out[1, 2] = s * (y * z - w * x)
    out[2, 0] = s * (x * z - w * y)
    out[2, 1] = s * (y * z + w * x)
    out[2, 2] = 1.0 - s * (x * x + y * y)


@kernel
def quaternion_rate_into(q, omega, out):
    """``out`` (4) = q̇ = ½ q ⊗ [0, ω] + λ (1 - |q|²) q for the body-frame rate ω (rad/s).

    The second term (λ = 1 s⁻¹) keeps the norm at one without affecting the attitude.
    """
    w, x, y, z = unpack4(q)
    p, r, s = unpack3(omega)
    lam = 1.0 - (w * w + x * x + y * y + z * z)
    out[0] = 0.5 * (-x * p - y * r - z * s) + lam * w
    out[1] = 0.5 * (w * p + y * s - z * r) + lam * x
    out[2] = 0.5 * (w * r + z * p - x * s) + lam * y
    out[3] = 0.5 * (w * s + x * r - y * p) + lam * z


@kernel
def solve_in_place(a, b):
    """Solve ``a z = b`` for a small square ``a`` (r×r) and ``b`` (r×m) by Gaussian elimination
    with partial pivoting; ``b`` is overwritten with z, ``a`` with its factors. Returns False if
    a pivot is zero (singular ``a``). For the 1-6 unknowns of the loop sweeps a LAPACK call
    costs more than the arithmetic."""
    r = a.shape[0]
    m = b.shape[1]
    for c in range(r):
        piv = c
        big = abs(a[c, c])
        for i in range(c + 1, r):
            if abs(a[i, c]) > big:
                big = abs(a[i, c])
                piv = i
        if big == 0.0:
            return False
        if piv != c:
            for j in range(r):
                a[c, j], a[piv, j] = a[piv, j], a[c, j]
            for j in range(m):
                b[c, j], b[piv, j] = b[piv, j], b[c, j]
        inv = 1.0 / a[c, c]
        for i in range(c + 1, r):
            f = a[i, c] * inv
            if f != 0.0:
                for j in range(c + 1, r):
                    a[i, j] -= f * a[c, j]
                for j in range(m):
                    b[i, j] -= f * b[c, j]
    for c in range(r - 1, -1, -1):
        inv = 1.0 / a[c, c]
        for j in range(m):
            acc = b[c, j]
            for i in range(c + 1, r):
                acc -= a[c, i] * b[i, j]
            b[c, j] = acc * inv
    return True


@kernel
def rotation_vector_into(R, out):
    """``out`` (3) = the rotation vector θ n (rad) of the DCM ``R`` (rotation by θ ∈ [0, π)
    about n): ``θ = atan2(|w|, (tr R - 1)/2)`` along ``w = vex(R - R^T)/2`` = sin θ n, accurate
    for the small rotations of a loop closure (``w`` itself below |w| = 1e-12)."""
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = unpack33(R)
    wx = 0.5 * (r21 - r12)
    wy = 0.5 * (r02 - r20)
    wz = 0.5 * (r10 - r01)
    s = math.sqrt(wx * wx + wy * wy + wz * wz)
    f = 1.0
    if s >= 1e-12:
        f = math.atan2(s, 0.5 * (r00 + r11 + r22 - 1.0)) / s
    out[0] = wx * f
    out[1] = wy * f
    out[2] = wz * f
