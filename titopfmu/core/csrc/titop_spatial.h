/*
 * titop_spatial.h -- spatial algebra of seed 004 on real_t (internal; included by titop_core.c).
 *
 * Dual vectors are [linear(3), angular(3)], wrenches [F(3), T(3)], 3x3 and 6x6 matrices
 * row-major. τ(p) = [[1, (*p)], [0, 1]] is the kinematic model of the nomenclature: τ_CP = τ(CP)
 * moves a twist from P to C (v_C = v_P + CP x ω) and τ_CP^T moves a wrench from C to P (eq. 13).
 * A joint transform G = τ(p) diag(E^T, E^T) (E = P_{a/b}) maps the parent's dual vectors (R_b)
 * to the body's (R_a); G^T maps wrenches back (eqs. 18, 29).
 */
#ifndef TITOP_SPATIAL_H
#define TITOP_SPATIAL_H

#include "titop_scalar.h"

/* out = a x b */
static inline void cross3(const real_t *a, const real_t *b, real_t *out)
{
    real_t x = a[1] * b[2] - a[2] * b[1];
    real_t y = a[2] * b[0] - a[0] * b[2];
    real_t z = a[0] * b[1] - a[1] * b[0];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

/* out = E v */
static inline void mv3(const real_t *E, const real_t *v, real_t *out)
{
    real_t x = E[0] * v[0] + E[1] * v[1] + E[2] * v[2];
    real_t y = E[3] * v[0] + E[4] * v[1] + E[5] * v[2];
    real_t z = E[6] * v[0] + E[7] * v[1] + E[8] * v[2];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

/* out = E^T v */
static inline void mtv3(const real_t *E, const real_t *v, real_t *out)
{
    real_t x = E[0] * v[0] + E[3] * v[1] + E[6] * v[2];
    real_t y = E[1] * v[0] + E[4] * v[1] + E[7] * v[2];
    real_t z = E[2] * v[0] + E[5] * v[1] + E[8] * v[2];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

/* out = A B (3x3); out may not alias A or B */
static inline void mm3(const real_t *A, const real_t *B, real_t *out)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

/* out = τ(p) x = [v + p x ω, ω] (may alias x) */
static inline void tau_motion(const real_t *p, const real_t *x, real_t *out)
{
    real_t c[3];
    cross3(p, x + 3, c);
    out[0] = x[0] + c[0];
    out[1] = x[1] + c[1];
    out[2] = x[2] + c[2];
    out[3] = x[3];
    out[4] = x[4];
    out[5] = x[5];
}

/* out = τ(p)^T w = [F, T - p x F] (may alias w) */
static inline void tau_wrench(const real_t *p, const real_t *w, real_t *out)
{
    real_t c[3];
    cross3(p, w, c);
    out[0] = w[0];
    out[1] = w[1];
    out[2] = w[2];
    out[3] = w[3] - c[0];
    out[4] = w[4] - c[1];
    out[5] = w[5] - c[2];
}

/* out = G x = τ(p) diag(E^T, E^T) x */
static inline void joint_motion(const real_t *E, const real_t *p, const real_t *x, real_t *out)
{
    real_t y[6];
    mtv3(E, x, y);
    mtv3(E, x + 3, y + 3);
    tau_motion(p, y, out);
}

/* out = G^T w = diag(E, E) τ(p)^T w */
static inline void joint_wrench(const real_t *E, const real_t *p, const real_t *w, real_t *out)
{
    real_t y[6];
    tau_wrench(p, w, y);
    mv3(E, y, out);
    mv3(E, y + 3, out + 3);
}

/* out = M x (6x6) */
static inline void mv6(const real_t *M, const real_t *x, real_t *out)
{
    for (int i = 0; i < 6; i++) {
        const real_t *r = M + 6 * i;
        out[i] = r[0] * x[0] + r[1] * x[1] + r[2] * x[2] + r[3] * x[3] + r[4] * x[4] + r[5] * x[5];
    }
}

/* out = τ(p)^T M τ(p) for a symmetric 6x6 M (out may alias M): with M = [[A, B], [B^T, C]] and
   P = (*p): [[A, A P + B], [., P^T A P + P^T B + B^T P + C]] (eq. 4's transport). */
static inline void sym_transport(const real_t *p, const real_t *M, real_t *out)
{
    real_t X[9], Y[9];
    /* X = A P + B, column j of A P = A (p x e_j) */
    for (int i = 0; i < 3; i++) {
        const real_t *a = M + 6 * i;
        X[3 * i + 0] = a[1] * p[2] - a[2] * p[1] + a[3];
        X[3 * i + 1] = a[2] * p[0] - a[0] * p[2] + a[4];
        X[3 * i + 2] = a[0] * p[1] - a[1] * p[0] + a[5];
    }
    /* Y = P^T X + B^T P + C = -(p x X) + (B^T P) + C, row by row of P^T X: (P^T X)_{ij} =
       -(p x X_{:,j})_i */
    for (int j = 0; j < 3; j++) {
        real_t col[3] = {X[j], X[3 + j], X[6 + j]};
        real_t c[3];
        cross3(p, col, c);
        Y[j] = -c[0];
        Y[3 + j] = -c[1];
        Y[6 + j] = -c[2];
    }
    for (int i = 0; i < 3; i++) {
        /* (B^T P)_{ij} = row i of B^T = column i of B, times P: (b_i^T (p x e_j)) = (b_i x p)_j */
        real_t bi[3] = {M[3 + i], M[9 + i], M[15 + i]};
        real_t c[3];
        cross3(bi, p, c);
        for (int j = 0; j < 3; j++)
            Y[3 * i + j] += c[j] + M[6 * (3 + i) + 3 + j];
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            out[6 * i + j] = M[6 * i + j];
            out[6 * i + 3 + j] = X[3 * i + j];
            out[6 * (3 + j) + i] = X[3 * i + j];
        }
    /* symmetric by construction up to rounding: keep the mean */
    for (int i = 0; i < 3; i++)
        for (int j = i; j < 3; j++) {
            real_t v = 0.5 * (Y[3 * i + j] + Y[3 * j + i]);
            out[6 * (3 + i) + 3 + j] = v;
            out[6 * (3 + j) + 3 + i] = v;
        }
}

/* out = diag(E, E) M diag(E^T, E^T) for a symmetric 6x6 M (out may alias M) */
static inline void sym_rotate(const real_t *E, const real_t *M, real_t *out)
{
    real_t blk[4][9], t[9], r[9];
    for (int bi = 0; bi < 2; bi++)
        for (int bj = 0; bj < 2; bj++) {
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    blk[2 * bi + bj][3 * i + j] = M[6 * (3 * bi + i) + 3 * bj + j];
        }
    for (int b = 0; b < 4; b++) {
        if (b == 2)
            continue; /* the lower-left block is the transpose of the upper-right one */
        mm3(E, blk[b], t);
        /* r = t E^T */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                r[3 * i + j] = t[3 * i] * E[3 * j] + t[3 * i + 1] * E[3 * j + 1] +
                               t[3 * i + 2] * E[3 * j + 2];
        int bi = b / 2, bj = b % 2;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                out[6 * (3 * bi + i) + 3 * bj + j] = r[3 * i + j];
                if (b == 1)
                    out[6 * (3 + j) + i] = r[3 * i + j];
            }
    }
}

/* out = G^T M G = diag(E, E) τ(p)^T M τ(p) diag(E^T, E^T) (symmetric M) */
static inline void sym_joint(const real_t *E, const real_t *p, const real_t *M, real_t *out)
{
    if (p[0] == 0.0 && p[1] == 0.0 && p[2] == 0.0) { /* revolute, weld, spherical: τ(0) = 1 */
        sym_rotate(E, M, out);
        return;
    }
    real_t T[36];
    sym_transport(p, M, T);
    sym_rotate(E, T, out);
}

/* In-place LDL^T of the symmetric k x k matrix A (row stride k, lower triangle read): L (unit,
   strictly lower part) and D (diagonal) overwrite it. Returns 0, or 1 if a pivot is not above
   tol (not positive definite). */
static inline int ldl_factor(real_t *A, int k, double tol)
{
    for (int j = 0; j < k; j++) {
        real_t d = A[k * j + j];
        for (int m = 0; m < j; m++)
            d -= A[k * j + m] * A[k * j + m] * A[k * m + m];
        if (!(RE(d) > tol))
            return 1;
        A[k * j + j] = d;
        for (int i = j + 1; i < k; i++) {
            real_t s = A[k * i + j];
            for (int m = 0; m < j; m++)
                s -= A[k * i + m] * A[k * j + m] * A[k * m + m];
            A[k * i + j] = s / d;
        }
    }
    return 0;
}

/* Solve (L D L^T) z = b in place (b of length k). */
static inline void ldl_solve(const real_t *L, int k, real_t *b)
{
    for (int i = 0; i < k; i++)
        for (int m = 0; m < i; m++)
            b[i] -= L[k * i + m] * b[m];
    for (int i = 0; i < k; i++)
        b[i] /= L[k * i + i];
    for (int i = k - 1; i >= 0; i--)
        for (int m = i + 1; m < k; m++)
            b[i] -= L[k * m + i] * b[m];
}

/* P_{b/i} = R_z(ψ) R_y(θ) R_x(φ) of Θ = [φ, θ, ψ] */
static inline void euler_dcm(const real_t *th, real_t *out)
{
    real_t sf = r_sin(th[0]), cf = r_cos(th[0]);
    real_t st = r_sin(th[1]), ct = r_cos(th[1]);
    real_t sp = r_sin(th[2]), cp = r_cos(th[2]);
    out[0] = cp * ct;
    out[1] = cp * st * sf - sp * cf;
    out[2] = cp * st * cf + sp * sf;
    out[3] = sp * ct;
    out[4] = sp * st * sf + cp * cf;
    out[5] = sp * st * cf - cp * sf;
    out[6] = -st;
    out[7] = ct * sf;
    out[8] = ct * cf;
}

/* unit quaternion q = q_z(ψ) ⊗ q_y(θ) ⊗ q_x(φ) of Θ (scipy's sign) */
static inline void euler_quaternion(const real_t *th, real_t *out)
{
    real_t cf = r_cos(0.5 * th[0]), sf = r_sin(0.5 * th[0]);
    real_t ct = r_cos(0.5 * th[1]), st = r_sin(0.5 * th[1]);
    real_t cp = r_cos(0.5 * th[2]), sp = r_sin(0.5 * th[2]);
    out[0] = cf * ct * cp + sf * st * sp;
    out[1] = sf * ct * cp - cf * st * sp;
    out[2] = cf * st * cp + sf * ct * sp;
    out[3] = cf * ct * sp - sf * st * cp;
}

/* P_{b/i} of a (not necessarily normalised) quaternion [w, x, y, z] */
static inline void quaternion_dcm(const real_t *q, real_t *out)
{
    real_t w = q[0], x = q[1], y = q[2], z = q[3];
    real_t s = 2.0 / (w * w + x * x + y * y + z * z);
    out[0] = 1.0 - s * (y * y + z * z);
    out[1] = s * (x * y - w * z);
    out[2] = s * (x * z + w * y);
    out[3] = s * (x * y + w * z);
    out[4] = 1.0 - s * (x * x + z * z);
    out[5] = s * (y * z - w * x);
    out[6] = s * (x * z - w * y);
    out[7] = s * (y * z + w * x);
    out[8] = 1.0 - s * (x * x + y * y);
}

/* q̇ = ½ q ⊗ [0, ω] + λ (1 - |q|²) q, λ = 1 /s (keeps |q| = 1 without changing the attitude) */
static inline void quaternion_rate(const real_t *q, const real_t *om, real_t *out)
{
    real_t w = q[0], x = q[1], y = q[2], z = q[3];
    real_t p = om[0], r = om[1], s = om[2];
    real_t lam = 1.0 - (w * w + x * x + y * y + z * z);
    out[0] = 0.5 * (-x * p - y * r - z * s) + lam * w;
    out[1] = 0.5 * (w * p + y * s - z * r) + lam * x;
    out[2] = 0.5 * (w * r + z * p - x * s) + lam * y;
    out[3] = 0.5 * (w * s + x * r - y * p) + lam * z;
}

/* 3-2-1 Euler angles of P_{b/i}, θ in [-π/2, π/2]; at gimbal lock (cos θ < 1e-9) φ = 0 and ψ
   carries the rotation about the vertical (scipy's convention). */
static inline void dcm_euler(const real_t *R, real_t *out)
{
    real_t c = r_sqrt(R[0] * R[0] + R[3] * R[3]);
    if (RE(c) < 1e-9) {
        out[0] = 0.0;
        out[1] = r_atan2(-R[6], c);
        out[2] = r_atan2(-R[1], R[4]);
        return;
    }
    out[0] = r_atan2(R[7], R[8]);
    out[1] = r_atan2(-R[6], c);
    out[2] = r_atan2(R[3], R[0]);
}

/* rotation vector θ n of a DCM (θ in [0, π)), accurate for small rotations */
static inline void rotation_vector(const real_t *R, real_t *out)
{
    real_t wx = 0.5 * (R[7] - R[5]);
    real_t wy = 0.5 * (R[2] - R[6]);
    real_t wz = 0.5 * (R[3] - R[1]);
    real_t s2 = wx * wx + wy * wy + wz * wz;
    real_t f = 1.0;
    if (RE(s2) >= 1e-24) {
        real_t s = r_sqrt(s2);
        f = r_atan2(s, 0.5 * (R[0] + R[4] + R[8] - 1.0)) / s;
    }
    out[0] = wx * f;
    out[1] = wy * f;
    out[2] = wz * f;
}

#endif /* TITOP_SPATIAL_H */
