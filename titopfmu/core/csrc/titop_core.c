/*
 * titop_core.c -- body equations and the loop sweep on real_t (see titop.h).
 *
 * Not compiled on its own: titop_double.c and titop_complex.c include it with TITOP_COMPLEX set
 * to 0 and 1, so the physics is written once and evaluated on doubles and on complex numbers
 * (complex step). The model (parameters, double) is shared by both.
 */
#include <stddef.h>
#include <string.h>

#include "titop.h"
#include "titop_spatial.h"

/* Run-time values of one body (one record of the data buffer, real_t only). */
typedef struct bodydata {
    real_t R[9];      /* P_{a/i} */
    real_t ip[3];     /* [IP]_{R_a} */
    real_t tw[6];     /* x'_P, R_a */
    real_t E[9];      /* joint: P_{a/b} */
    real_t p[3];      /* joint: G = τ(p) diag(E^T, E^T) */
    real_t e[6];      /* joint: velocity-product part of ẋ'_A (eqs. 17, 24) */
    real_t h[6];      /* bias h = C(x') D x' - D [g; 0] - Σ τ_EP^T W_E (eqs. 7, 11, 13) */
    real_t Ia[36];    /* articulated inertia at P (R_a) */
    real_t ha[6];     /* articulated bias at P (R_a) */
    real_t Y[36];     /* forward joint: (S^T Ia S)^-1 (Ia S)^T (nv x 6); rigid root: LDL^T of Ia */
    real_t L[36];     /* forward joint: LDL^T of S^T Ia S (nv x nv) */
    real_t z[6];      /* forward joint: (S^T Ia S)^-1 (τ - S^T ha) */
    real_t Ma[36];    /* apparent inertia seen by the parent: W_{A/B} = -(Ma ẋ'_B + ba), R_b */
    real_t ba[6];
    real_t accp[6];   /* ẋ' of the parent port, R_b */
    real_t acc[6];    /* ẋ'_P, R_a */
    real_t alpha[6];  /* u̇ (rigid root: ẋ'_P) */
    real_t effort[6]; /* joint effort: applied (forward) or required (inverse) */
    real_t wP[6];     /* wrench applied on the parent, R_b */
    real_t out[6];    /* ground, imposed: external wrench at P (R_a) */
    real_t q[7];      /* joint configuration */
    real_t u[6];      /* joint speeds */
} bodydata;

/* LDL^T of the symmetric k x k matrix A (ldl_factor, titop_spatial.h) with a tolerance per
   pivot: pivot j above tol[j] (>= 0), so that each unknown is judged in its own unit (a mass
   and an inertia are not compared). Returns 0, or 1 if a pivot is not. */
static int ldl_factor_each(real_t *A, int k, const double *tol)
{
    if (ldl_factor(A, k, 0.0))
        return 1;
    for (int j = 0; j < k; j++)
        if (!(RE(A[k * j + j]) > tol[j]))
            return 1;
    return 0;
}

/* Run-time values of one child port. */
typedef struct portdata {
    real_t w[6];  /* wrench applied on the body at the port (R_a) */
    real_t kv[6]; /* known wrench (closure or input) */
    /* a port of a flexible body, at node j (flex_kinematics, docs §6): */
    real_t x[3];  /* node position x_j(q) = r_j + Φt,j q (R_a) */
    real_t Rt[9]; /* its elastic rotation exp(θ~), θ = Φr,j q: [v]_a = Rt [v]_N */
    real_t Rn[9]; /* the node frame's attitude P_{N/i} = P_{a/i} Rt */
    real_t dv[6]; /* its elastic twist [Φt,j q̇; J_l(θ) Φr,j q̇] (R_a) */
    real_t ca[6]; /* its acceleration's velocity-product part c_j (R_a) */
} portdata;

#define BODY_STRIDE (sizeof(bodydata) / sizeof(real_t))
#define PORT_STRIDE (sizeof(portdata) / sizeof(real_t))

static bodydata *body_data(real_t *data, int i) { return (bodydata *)data + i; }

static portdata *port_data(const titop_model *m, real_t *data, int j)
{
    return (portdata *)((bodydata *)data + m->nbodies) + j;
}

static void copy_d(const double *src, real_t *dst, int n)
{
    for (int k = 0; k < n; k++)
        dst[k] = src[k];
}

/* Twist and position of child port j of its owner, in the port's frame, and (R, unless NULL)
   the port frame's attitude: Definition 1 (eq. 14), the owner's frame; the port of a flexible
   body is the frame N of its node (titop_flex, docs §6): at x_j(q), turned by exp(θ~), its
   twist with the node's elastic twist. */
static void port_kinematics(const titop_model *m, const real_t *data, int j, real_t *tw,
                            real_t *ip, real_t *R)
{
    const int o = m->ports[j].owner;
    const bodydata *b = (const bodydata *)data + o;
    real_t p[3];
    if (m->bodies[o].flex >= 0) {
        const portdata *pd = (const portdata *)((const bodydata *)data + m->nbodies) + j;
        real_t y[6], c[3];
        for (int k = 0; k < 3; k++) {
            p[k] = -pd->x[k];
            c[k] = b->ip[k] + pd->x[k];
        }
        tau_motion(p, b->tw, y);
        for (int k = 0; k < 6; k++)
            y[k] += pd->dv[k];
        mtv3(pd->Rt, y, tw); /* N components */
        mtv3(pd->Rt, y + 3, tw + 3);
        mtv3(pd->Rt, c, ip);
        if (R)
            memcpy(R, pd->Rn, sizeof pd->Rn);
        return;
    }
    if (R)
        memcpy(R, b->R, sizeof b->R);
    const double *pc = m->ports[j].pc;
    p[0] = -pc[0];
    p[1] = -pc[1];
    p[2] = -pc[2];
    tau_motion(p, b->tw, tw); /* τ_CP x'_P, CP = -PC */
    ip[0] = b->ip[0] + pc[0];
    ip[1] = b->ip[1] + pc[1];
    ip[2] = b->ip[2] + pc[2];
}

static real_t *flex_rec(const titop_model *m, real_t *data, int f);

/* Acceleration ẋ' of child port j (its owner's acceleration known): τ_CP ẋ'_P (eq. 14); at a
   flexible body's node, in N components, Rt^T (τ(-x_j) ẋ'_P + Ψ_j q̈ + c_j) (docs §6,
   flex_kinematics: Ψ_j = [Φt,j; J_l(θ) Φr,j]). */
static void port_acceleration(const titop_model *m, const real_t *data, int j, real_t *out)
{
    const int o = m->ports[j].owner;
    const bodydata *b = (const bodydata *)data + o;
    const int f = m->bodies[o].flex;
    real_t p[3];
    if (f < 0) {
        const double *pc = m->ports[j].pc;
        p[0] = -pc[0];
        p[1] = -pc[1];
        p[2] = -pc[2];
        tau_motion(p, b->acc, out);
        return;
    }
    const titop_flex *F = &m->flex[f];
    const int n = F->n, k = j - m->bodies[o].port0;
    const portdata *pd = (const portdata *)((const bodydata *)data + m->nbodies) + j;
    const double *Phi = F->node_shapes + (size_t)6 * n * (k + 1);
    const real_t *rec = flex_rec(m, (real_t *)data, f), *qdd = rec + 36 + 7 * n;
    const real_t *Pr = rec + 36 + 8 * (size_t)n + (size_t)n * n + (size_t)3 * n * k;
    real_t y[6];
    for (int a = 0; a < 3; a++)
        p[a] = -pd->x[a];
    tau_motion(p, b->acc, y);
    for (int r = 0; r < 6; r++) {
        real_t s = pd->ca[r];
        for (int l = 0; l < n; l++)
            s += (r < 3 ? (real_t)Phi[n * r + l] : Pr[n * (r - 3) + l]) * qdd[l];
        y[r] += s;
    }
    mtv3(pd->Rt, y, out);
    mtv3(pd->Rt, y + 3, out + 3);
}

/* Joint transform (E, p) of a joint body at configuration q (eqs. 16, 24). */
static void joint_transform(const titop_body *B, const real_t *q, real_t *E, real_t *p)
{
    real_t R0[9];
    copy_d(B->R0, R0, 9);
    p[0] = p[1] = p[2] = 0.0;
    switch (B->kind) {
    case TITOP_REVOLUTE: {
        /* P_{aθ/b} = P_{a0/b} (1 + sin θ K + (1 - cos θ) K²), K = (*r̃) (eq. 16) */
        real_t sn = r_sin(q[0]), c = 1.0 - r_cos(q[0]);
        for (int k = 0; k < 9; k++)
            E[k] = R0[k] + sn * B->RK[k] + c * B->RK2[k];
        break;
    }
    case TITOP_PRISMATIC: /* G = τ_{-x t̃} P^{x2}_{b/a} (eq. 24) */
        memcpy(E, R0, sizeof R0);
        for (int k = 0; k < 3; k++)
            p[k] = -q[0] * B->axis[k];
        break;
    case TITOP_SPHERICAL: {
        real_t Rq[9];
        quaternion_dcm(q, Rq);
        mm3(R0, Rq, E);
        break;
    }
    case TITOP_FREE: { /* G = P^{x2}_{b/a} τ_{PO} = τ(-E^T r) diag(E^T, E^T), r = [OP]_{R_b} */
        real_t Rq[9], rp[3];
        quaternion_dcm(q + 3, Rq);
        mm3(R0, Rq, E);
        mtv3(E, q, rp);
        p[0] = -rp[0];
        p[1] = -rp[1];
        p[2] = -rp[2];
        break;
    }
    default: /* weld: P_{a/b} constant (eq. 15) */
        memcpy(E, R0, sizeof R0);
        break;
    }
}

/* Joint configuration from its position output p (joint.m = [u̇, u, p]). */
static void coordinates_from_position(int kind, const real_t *p, real_t *q)
{
    if (kind == TITOP_SPHERICAL) {
        euler_quaternion(p, q);
    } else if (kind == TITOP_FREE) {
        q[0] = p[0];
        q[1] = p[1];
        q[2] = p[2];
        euler_quaternion(p + 3, q + 3);
    } else {
        q[0] = p[0];
    }
}

/* Kinematics of body i, its parent's done (pre-loop part of the motion vectors); `parent`, if
   not NULL, gives the parent port's [x' (6), IP (3), P_{b/i} (9)] instead (a block on its own). */
static void body_kinematics(const titop_model *m, real_t *data, int i, const real_t *x,
                            const real_t *in, const real_t *parent)
{
    const titop_body *B = &m->bodies[i];
    bodydata *d = body_data(data, i);
    switch (B->kind) {
    case TITOP_RIGID: { /* states [IP_i, q, x'_P] (eq. 12) */
        const real_t *xs = x + B->x0;
        quaternion_dcm(xs + 3, d->R);
        mtv3(d->R, xs, d->ip);
        for (int k = 0; k < 6; k++)
            d->tw[k] = xs[7 + k];
        return;
    }
    case TITOP_GROUND: {
        real_t pos[3];
        copy_d(B->R0, d->R, 9);
        copy_d(B->pos, pos, 3);
        mtv3(d->R, pos, d->ip);
        for (int k = 0; k < 6; k++)
            d->tw[k] = 0.0;
        return;
    }
    case TITOP_IMPOSED: { /* motion vector m (18) in (Fig. 1) */
        const real_t *mv = in + B->in0;
        for (int k = 0; k < 6; k++)
            d->tw[k] = mv[6 + k];
        for (int k = 0; k < 3; k++)
            d->ip[k] = mv[12 + k];
        euler_dcm(mv + 15, d->R);
        return;
    }
    default:
        break;
    }
    /* a joint body: the parent port's motion */
    real_t twb[6], ipb[3], Rb[9];
    const real_t *Rbp = Rb;
    if (parent) {
        for (int k = 0; k < 6; k++)
            twb[k] = parent[k];
        for (int k = 0; k < 3; k++)
            ipb[k] = parent[6 + k];
        Rbp = parent + 9;
    } else if (B->parent >= 0) {
        port_kinematics(m, data, m->bodies[B->parent].port0 + B->slot, twb, ipb, Rb);
    } else { /* TITOP_PARENT_INPUT */
        const real_t *mv = in + B->pm0;
        for (int k = 0; k < 6; k++)
            twb[k] = mv[6 + k];
        for (int k = 0; k < 3; k++)
            ipb[k] = mv[12 + k];
        euler_dcm(mv + 15, Rb);
    }
    int nq = B->nq, nv = B->nv;
    if (nv) {
        if (B->inverse) { /* joint.m = [u̇, u, p] in */
            const real_t *jm = in + B->in0;
            coordinates_from_position(B->kind, jm + 2 * nv, d->q);
            for (int k = 0; k < nv; k++) {
                d->u[k] = jm[nv + k];
                d->alpha[k] = jm[k];
            }
        } else {
            for (int k = 0; k < nq; k++)
                d->q[k] = x[B->x0 + k];
            for (int k = 0; k < nv; k++)
                d->u[k] = x[B->x0 + nq + k];
        }
    }
    joint_transform(B, d->q, d->E, d->p);
    /* x'_0 = G x'_B, x'_A = x'_0 + S u, e = x'_0 x_m (S u) (eqs. 17, 24; see relative_motion) */
    real_t tw0[6], su[6];
    joint_motion(d->E, d->p, twb, tw0);
    for (int r = 0; r < 6; r++) {
        real_t s = 0.0;
        for (int k = 0; k < nv; k++)
            s += B->S[nv * r + k] * d->u[k];
        su[r] = s;
        d->tw[r] = tw0[r] + s;
    }
    /* e = [ω0 x v_r - ω_r x v0 ; -ω_r x ω0]: for S u = θ̇ [0; r̃] the velocity-product part of
       eq. (17), for S u = ẋ [t̃; 0] that of eq. (24) */
    real_t c1[3], c2[3];
    cross3(tw0 + 3, su, c1);
    cross3(su + 3, tw0, c2);
    cross3(su + 3, tw0 + 3, d->e + 3);
    for (int k = 0; k < 3; k++) {
        d->e[k] = c1[k] - c2[k];
        d->e[3 + k] = -d->e[3 + k];
    }
    /* IP = IO + r: [IP]_{R_a} = E^T [IO]_{R_b} - p; P_{a/i} = P_{b/i} P_{a/b} */
    mtv3(d->E, ipb, d->ip);
    for (int k = 0; k < 3; k++)
        d->ip[k] -= d->p[k];
    mm3(Rbp, d->E, d->R);
}

/* h = C(x') D x' - D [g; 0] - Σ τ_EP^T W_E (eqs. 4, 7, 11, 13), in R_a. */
static void body_bias(const titop_model *m, real_t *data, int i, const real_t *in)
{
    const titop_body *B = &m->bodies[i];
    bodydata *d = body_data(data, i);
    real_t *h = d->h;
    if (B->kind == TITOP_GROUND) {
        for (int k = 0; k < 6; k++)
            h[k] = 0.0;
        return;
    }
    real_t Dm[36], pv[6], g[3], ga[3];
    copy_d(B->D, Dm, 36);
    mv6(Dm, d->tw, pv); /* [p1; p2] = D x' */
    copy_d(B->gravity, g, 3);
    mtv3(d->R, g, ga); /* [g]_{R_a} = P_{a/i}^T [g]_{R_i} */
    const real_t *v = d->tw, *w = d->tw + 3;
    real_t c[3], mgb[3], bg[3];
    /* C(x') p = [ω x p1 ; v x p1 + ω x p2] (eq. 7) */
    cross3(w, pv, h);
    cross3(v, pv, c);
    cross3(w, pv + 3, h + 3);
    /* D [g; 0] = [m g ; m PB x g] (eq. 4) */
    real_t com[3];
    copy_d(B->com, com, 3);
    cross3(com, ga, bg);
    for (int k = 0; k < 3; k++) {
        mgb[k] = B->mass * bg[k];
        h[k] -= B->mass * ga[k];
        h[3 + k] += c[k] - mgb[k];
    }
    for (int j = 0; j < B->next; j++) {
        const titop_ext *X = &m->exts[B->ext0 + j];
        if (X->node > 0) /* at a flexible body's node: flex_bias (docs §6) */
            continue;
        const real_t *wi = in + X->w0;
        real_t W[6], pt[3], tp[3];
        if (X->inertial) { /* [F; T]_{R_a} = P^{x2}_{i/a} [F; T]_{R_i} */
            mtv3(d->R, wi, W);
            mtv3(d->R, wi + 3, W + 3);
        } else {
            for (int k = 0; k < 6; k++)
                W[k] = wi[k];
        }
        copy_d(X->point, pt, 3);
        cross3(pt, W, tp); /* τ_EP^T [F; T] = [F ; T + PE x F] */
        for (int k = 0; k < 3; k++) {
            h[k] -= W[k];
            h[3 + k] -= W[3 + k] + tp[k];
        }
    }
}

/* Wrenches of loop closure c on its two sides (Fig. 14): w_l = K δx + D δx' in the left frame,
   w_r = -P^{x2}_{l/r} w_l in the right frame. */
/* Spring-damper wrenches between two sides of a cut (Fig. 14), each side given by its twist, its
   position and P_{./i}: w_l = K δx + D δx' in the left frame (δx = [δp, δθ], δx' = [δv, δω], in
   the left frame) and w_r = -P^{x2}_{l/r} w_l in the right frame. */
/* The relative motion of the right side of a cut to the left one, in the left frame:
   Rlr = P_{r/l}, dx = [δp, δθ], dxd = [δv, δω]. */
static void cut_deflection(const real_t *twl, const real_t *ipl, const real_t *Rl,
                           const real_t *twr, const real_t *ipr, const real_t *Rr, real_t *Rlr,
                           real_t *dx, real_t *dxd)
{
    /* P_{r/l} = P_{l/i}^T P_{r/i} */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            Rlr[3 * i + j] = Rl[i] * Rr[j] + Rl[3 + i] * Rr[3 + j] + Rl[6 + i] * Rr[6 + j];
    mv3(Rlr, ipr, dx);
    mv3(Rlr, twr, dxd);
    mv3(Rlr, twr + 3, dxd + 3);
    for (int k = 0; k < 3; k++) {
        dx[k] -= ipl[k];
        dxd[k] -= twl[k];
        dxd[3 + k] -= twl[3 + k];
    }
    rotation_vector(Rlr, dx + 3);
}

static void cut_wrenches(const double *K, const double *Dm, const real_t *twl, const real_t *ipl,
                         const real_t *Rl, const real_t *twr, const real_t *ipr, const real_t *Rr,
                         real_t *wl, real_t *wr)
{
    real_t Rlr[9], dx[6], dxd[6];
    cut_deflection(twl, ipl, Rl, twr, ipr, Rr, Rlr, dx, dxd);
    for (int r = 0; r < 6; r++) {
        real_t s = 0.0;
        for (int k = 0; k < 6; k++)
            s += K[6 * r + k] * dx[k] + Dm[6 * r + k] * dxd[k];
        wl[r] = s;
    }
    mtv3(Rlr, wl, wr);
    mtv3(Rlr, wl + 3, wr + 3);
    for (int k = 0; k < 6; k++)
        wr[k] = -wr[k];
}

/* Wrenches of loop closure c on its two ports (Fig. 14). */
static void closure_wrenches(const titop_model *m, real_t *data, int c)
{
    const titop_closure *C = &m->closures[c];
    int lp = C->left, rp = C->right;
    real_t twl[6], ipl[3], twr[6], ipr[3], Rl[9], Rr[9];
    port_kinematics(m, data, lp, twl, ipl, Rl);
    port_kinematics(m, data, rp, twr, ipr, Rr);
    cut_wrenches(C->K, C->Dm, twl, ipl, Rl, twr, ipr, Rr, port_data(m, data, lp)->kv,
                 port_data(m, data, rp)->kv);
}

/* ---- outputs of an evaluation as motion vectors (what a block's ports carry) ---- */

/* Motion vector m (18) of body i at its reference point P: [ẋ'_P, x'_P, [IP]_{R_a}, Θ]. */
void TITOP_FN(body_motion)(const titop_model *m, const double *data_d, int i, double *out_d)
{
    const bodydata *d = body_data((real_t *)data_d, i);
    real_t *out = (real_t *)out_d;
    (void)m;
    for (int k = 0; k < 6; k++) {
        out[k] = d->acc[k];
        out[6 + k] = d->tw[k];
    }
    for (int k = 0; k < 3; k++)
        out[12 + k] = d->ip[k];
    dcm_euler(d->R, out + 15);
}

/* Motion vector (18) at child port j (Definition 1, eq. 14): [τ_CP ẋ'_P, τ_CP x'_P, IP + PC, Θ]. */
void TITOP_FN(port_motion)(const titop_model *m, const double *data_d, int j, double *out_d)
{
    real_t *out = (real_t *)out_d, R[9];
    port_acceleration(m, (const real_t *)data_d, j, out);
    port_kinematics(m, (const real_t *)data_d, j, out + 6, out + 12, R);
    dcm_euler(R, out + 15);
}

/* Joint motion [u̇, u, p] (3 nv) of joint body i (p: the coordinate of a 1-dof joint, the Euler
   angles of P_{a/a0} for a spherical joint, [r, Euler angles] for a free one). */
void TITOP_FN(joint_motion)(const titop_model *m, const double *data_d, int i, double *out_d)
{
    const titop_body *B = &m->bodies[i];
    const bodydata *d = body_data((real_t *)data_d, i);
    real_t *out = (real_t *)out_d;
    int nv = B->nv;
    for (int k = 0; k < nv; k++) {
        out[k] = d->alpha[k];
        out[nv + k] = d->u[k];
    }
    real_t R[9];
    if (B->kind == TITOP_SPHERICAL) {
        quaternion_dcm(d->q, R);
        dcm_euler(R, out + 2 * nv);
    } else if (B->kind == TITOP_FREE) {
        for (int k = 0; k < 3; k++)
            out[2 * nv + k] = d->q[k];
        quaternion_dcm(d->q + 3, R);
        dcm_euler(R, out + 2 * nv + 3);
    } else {
        out[2 * nv] = d->q[0];
    }
}

/* A loop closure on its own: its wrenches on the two sides (6 each, each side's frame) from their
   motion vectors (18 each). */
void TITOP_FN(closure_block)(const double *K, const double *Dm, const double *ml_d,
                             const double *mr_d, double *wl_d, double *wr_d)
{
    const real_t *ml = (const real_t *)ml_d, *mr = (const real_t *)mr_d;
    real_t Rl[9], Rr[9];
    euler_dcm(ml + 15, Rl);
    euler_dcm(mr + 15, Rr);
    cut_wrenches(K, Dm, ml + 6, ml + 12, Rl, mr + 6, mr + 12, Rr, (real_t *)wl_d,
                 (real_t *)wr_d);
}

/* The same from the two sides' [x' (6), IP (3), P_{./i} (9)] (18 each, each side's frame). */
void TITOP_FN(cut_block)(const double *K, const double *Dm, const double *l_d, const double *r_d,
                         double *wl_d, double *wr_d)
{
    const real_t *l = (const real_t *)l_d, *r = (const real_t *)r_d;
    cut_wrenches(K, Dm, l, l + 6, l + 9, r, r + 6, r + 9, (real_t *)wl_d, (real_t *)wr_d);
}

/* One stop's effort (>= 0, pushing out) at penetration p > 0 and speed v into it: the spring
   k_s p plus the damping d_s v bounded by the spring's effort, in [0, 2 k_s p] (titop.h). */
static real_t stop_effort(double ks, double ds, real_t p, real_t v)
{
    real_t s = ks * p, damping = ds * v;
    if (RE(damping) > RE(s))
        return s + s;
    if (RE(damping) < -RE(s))
        return 0.0; /* leaving faster than the spring pushes: no pull */
    return s + damping;
}

/* The joint law (titop_law in titop.h) at q, q̇: spring-damper, regularised Coulomb friction and
   the one-sided stops. Branches read real parts: each piece is analytic, so the complex step
   gives its exact derivative (on a branch's boundary, the one side's). */
static real_t spring_damper(const titop_law *L, real_t q, real_t qd)
{
    real_t tau = -L->k * (q - L->qref) - L->d * qd;
    if (L->friction > 0.0)
        tau -= L->friction * r_tanh(qd / L->friction_velocity);
    if (L->limited) {
        if (RE(q) < L->lower)
            tau += stop_effort(L->k_stop, L->d_stop, L->lower - q, -qd);
        else if (RE(q) > L->upper)
            tau -= stop_effort(L->k_stop, L->d_stop, q - L->upper, qd);
    }
    return tau;
}

void TITOP_FN(spring_damper_block)(const titop_law *law, const double *m3_d, double *tau_d)
{
    const real_t *m3 = (const real_t *)m3_d;
    *(real_t *)tau_d = spring_damper(law, m3[2], m3[1]);
}

#if !TITOP_COMPLEX
void titop_law_from_row(const double *row, titop_law *law)
{
    law->k = row[0];
    law->d = row[1];
    law->qref = row[2];
    law->friction = row[3];
    law->friction_velocity = row[4];
    law->limited = row[5] != 0.0;
    law->lower = row[6];
    law->upper = row[7];
    law->k_stop = row[8];
    law->d_stop = row[9];
}

int titop_check_law(const titop_law *L)
{
    if (!(L->k >= 0.0 && isfinite(L->k)))
        return TITOP_LAW_K;
    if (!(L->d >= 0.0 && isfinite(L->d)))
        return TITOP_LAW_D;
    if (!isfinite(L->qref))
        return TITOP_LAW_QREF;
    if (!(L->friction >= 0.0 && isfinite(L->friction)))
        return TITOP_LAW_FRICTION;
    if (!(L->friction_velocity > 0.0 && isfinite(L->friction_velocity)))
        return TITOP_LAW_FRICTION_VELOCITY;
    if (!L->limited)
        return TITOP_LAW_OK;
    if (!isfinite(L->lower))
        return TITOP_LAW_LOWER;
    if (!(isfinite(L->upper) && L->upper >= L->lower))
        return TITOP_LAW_UPPER;
    if (!(L->k_stop > 0.0 && isfinite(L->k_stop)))
        return TITOP_LAW_K_STOP;
    if (!(L->d_stop >= 0.0 && isfinite(L->d_stop)))
        return TITOP_LAW_D_STOP;
    return TITOP_LAW_OK;
}

const char *titop_law_parameter(int code)
{
    static const char *names[] = {"",      "k",     "d",      "q_ref", "friction", "friction_velocity",
                                  "lower", "upper", "k_stop", "d_stop"};
    return code > 0 && code <= TITOP_LAW_D_STOP ? names[code] : "";
}

const char *titop_law_rule(int code)
{
    switch (code) {
    case TITOP_LAW_K:
    case TITOP_LAW_D:
    case TITOP_LAW_FRICTION:
    case TITOP_LAW_D_STOP:
        return "must be >= 0";
    case TITOP_LAW_QREF:
    case TITOP_LAW_LOWER:
        return "must be finite";
    case TITOP_LAW_FRICTION_VELOCITY:
        return "must be > 0 (the regularisation velocity of the friction, m/s or rad/s)";
    case TITOP_LAW_UPPER:
        return "must be finite and >= lower when limited";
    case TITOP_LAW_K_STOP:
        return "must be > 0 when limited (the stops' stiffness, N/m or N m/rad: e.g. J / tau^2 "
               "for a joint of apparent inertia J and a stop time constant tau)";
    default:
        return "";
    }
}
#endif

/* ẋ'_A = G ẋ'_B + e + S u̇ of a joint body (eqs. 17, 24) from its parent port's acceleration
   accp (R_b) and u̇ (nv); out may not alias accp. */
static void joint_acceleration(const titop_body *B, const bodydata *d, const real_t *accp,
                               const real_t *alpha, real_t *out)
{
    int nv = B->nv;
    joint_motion(d->E, d->p, accp, out);
    for (int r = 0; r < 6; r++) {
        real_t s = out[r] + d->e[r];
        for (int k = 0; k < nv; k++)
            s += B->S[nv * r + k] * alpha[k];
        out[r] = s;
    }
}

static int flex_condense(const titop_model *m, real_t *data, int i);
static void flex_accel(const titop_model *m, real_t *data, int f);

/* Backward step of body i (its children done): the articulated inertia Ia = D_P + Σ τ_C^T Ma_C
   τ_C and bias ha = h + Σ τ_C^T ba_C - Σ τ_C^T W_known of its subtree, so that Newton-Euler
   (eqs. 11, 13, 18, 25) reads Ia ẋ'_A + ha = W_{B/A,P}; then, for a joint body, what the parent
   sees: W_{A/B} = -(Ma ẋ'_B + ba). Returns 0 or 1 (S^T Ia S not positive definite). */
static int backward_step(const titop_model *m, real_t *data, int i)
{
    const titop_body *B = &m->bodies[i];
    bodydata *d = body_data(data, i);
    copy_d(B->D, d->Ia, 36);
    for (int k = 0; k < 6; k++)
        d->ha[k] = d->h[k];
    const int nodes = B->flex >= 0 && B->nports > 0;
    if (nodes && flex_condense(m, data, i)) /* children at its nodes: condensed with it */
        return 1;
    if (B->flex >= 0) { /* its flexible part's M_P* (docs eq. T3) joins D_P */
        const real_t *Ms = flex_rec(m, data, B->flex);
        for (int k = 0; k < 36; k++)
            d->Ia[k] += Ms[k];
    }
    for (int j = B->port0; j < B->port0 + B->nports && !nodes; j++) {
        const titop_port *P = &m->ports[j];
        real_t p[3] = {-P->pc[0], -P->pc[1], -P->pc[2]}; /* τ_CP = τ(CP) */
        real_t t[36], w[6];
        if (P->child >= 0) {
            const bodydata *c = body_data(data, P->child);
            sym_transport(p, c->Ma, t);
            for (int k = 0; k < 36; k++)
                d->Ia[k] += t[k];
            tau_wrench(p, c->ba, w);
            for (int k = 0; k < 6; k++)
                d->ha[k] += w[k];
        } else {
            tau_wrench(p, port_data(m, data, j)->kv, w);
            for (int k = 0; k < 6; k++)
                d->ha[k] -= w[k];
        }
    }
    if (B->kind == TITOP_RIGID || B->kind == TITOP_GROUND || B->kind == TITOP_IMPOSED)
        return 0;
    int nv = B->nv;
    real_t Ip[36], bl[6];
    if (nv && !B->inverse) {
        /* forward joint: u̇ = (S^T Ia S)^-1 (τ - S^T ha - (Ia S)^T a0), a0 = G ẋ'_B + e
           (eqs. 20-22, 28, with the subtree's articulated inertia) */
        real_t U[36];
        for (int r = 0; r < 6; r++)
            for (int k = 0; k < nv; k++) {
                real_t s = 0.0;
                for (int c = 0; c < 6; c++)
                    s += d->Ia[6 * r + c] * B->S[nv * c + k];
                U[nv * r + k] = s;
            }
        /* D = S^T Ia S + diag(armature): eq. (20) with the rotor inertia of the joint (the
           subtree's articulated inertia for D_P; Featherstone's ABA D_i = S^T U + armature,
           as Pinocchio's model.armature) */
        for (int a = 0; a < nv; a++)
            for (int b2 = 0; b2 <= a; b2++) {
                real_t s = a == b2 ? (real_t)B->armature[a] : 0.0;
                for (int r = 0; r < 6; r++)
                    s += B->S[nv * r + a] * U[nv * r + b2];
                d->L[nv * a + b2] = s;
                d->L[nv * b2 + a] = s;
            }
        /* singular when a pivot is at most 1e-14 of the sum of the magnitudes of the terms of
           its diagonal entry, |S|^T |Ia| |S| + armature (rounding): each dof in its own unit, as
           the checks (titop_check_apparent_inertia). A massless body is judged here with the
           subtree its joint moves: only that subtree's inertia about the joint matters */
        double tol[6] = {0};
        for (int a = 0; a < nv; a++) {
            double s = B->armature[a];
            for (int r = 0; r < 6; r++) {
                double sr = fabs(B->S[nv * r + a]);
                if (sr != 0.0)
                    for (int c = 0; c < 6; c++)
                        s += sr * fabs(RE(d->Ia[6 * r + c])) * fabs(B->S[nv * c + a]);
            }
            tol[a] = 1e-14 * s;
        }
        if (ldl_factor_each(d->L, nv, tol))
            return 1;
        /* Y = (S^T Ia S)^-1 U^T (nv x 6), z = (S^T Ia S)^-1 (τ - S^T ha) */
        for (int c = 0; c < 6; c++) {
            real_t col[6];
            for (int k = 0; k < nv; k++)
                col[k] = U[nv * c + k];
            ldl_solve(d->L, nv, col);
            for (int k = 0; k < nv; k++)
                d->Y[6 * k + c] = col[k];
        }
        for (int k = 0; k < nv; k++) {
            real_t s = d->effort[k];
            for (int r = 0; r < 6; r++)
                s -= B->S[nv * r + k] * d->ha[r];
            d->z[k] = s;
        }
        ldl_solve(d->L, nv, d->z);
        /* Ia' = Ia - U Y (symmetric), bl = Ia' e + ha + U z */
        for (int r = 0; r < 6; r++)
            for (int c = 0; c <= r; c++) {
                real_t s = d->Ia[6 * r + c];
                for (int k = 0; k < nv; k++)
                    s -= U[nv * r + k] * d->Y[6 * k + c];
                Ip[6 * r + c] = s;
                Ip[6 * c + r] = s;
            }
        mv6(Ip, d->e, bl);
        for (int r = 0; r < 6; r++) {
            real_t s = 0.0;
            for (int k = 0; k < nv; k++)
                s += U[nv * r + k] * d->z[k];
            bl[r] += d->ha[r] + s;
        }
    } else {
        /* known joint acceleration (weld, imposed joint motion): ẋ'_A = G ẋ'_B + e + S u̇ */
        real_t a[6];
        for (int r = 0; r < 6; r++) {
            real_t s = d->e[r];
            for (int k = 0; k < nv; k++)
                s += B->S[nv * r + k] * d->alpha[k];
            a[r] = s;
        }
        memcpy(Ip, d->Ia, sizeof Ip);
        mv6(Ip, a, bl);
        for (int r = 0; r < 6; r++)
            bl[r] += d->ha[r];
    }
    /* W_{A/B} = -G^T W_{B/A,P}: Ma = G^T Ia' G, ba = G^T bl (eqs. 18, 29) */
    sym_joint(d->E, d->p, Ip, d->Ma);
    joint_wrench(d->E, d->p, bl, d->ba);
    return 0;
}

/* Forward step of body i (its parent done): its acceleration, joint acceleration or effort and,
   with full, the wrenches at its ports and on its parent. Returns 0 or 1 (rigid root: Ia not
   positive definite). */
static int forward_step(const titop_model *m, real_t *data, int i, const real_t *in,
                        const real_t *accp, int full)
{
    const titop_body *B = &m->bodies[i];
    bodydata *d = body_data(data, i);
    real_t W[6];
    switch (B->kind) {
    case TITOP_RIGID: { /* Ia ẋ'_P + ha = 0 (eq. 11 with the subtree) */
        double tol[6] = {0}; /* each pivot above 1e-14 of its own diagonal entry (kg, kg m^2) */
        memcpy(d->Y, d->Ia, sizeof d->Y);
        for (int k = 0; k < 6; k++)
            tol[k] = 1e-14 * fabs(RE(d->Ia[7 * k]));
        if (ldl_factor_each(d->Y, 6, tol))
            return 1;
        for (int k = 0; k < 6; k++)
            d->acc[k] = -d->ha[k];
        ldl_solve(d->Y, 6, d->acc);
        memcpy(d->alpha, d->acc, sizeof d->acc);
        break;
    }
    case TITOP_GROUND:
        for (int k = 0; k < 6; k++)
            d->acc[k] = 0.0;
        memcpy(d->out, d->ha, sizeof d->out); /* the wrench holding the base */
        break;
    case TITOP_IMPOSED: /* W_ext,P = Ia ẋ'_P + ha (eq. 11 solved for the wrench) */
        for (int k = 0; k < 6; k++)
            d->acc[k] = in[B->in0 + k];
        mv6(d->Ia, d->acc, d->out);
        for (int k = 0; k < 6; k++)
            d->out[k] += d->ha[k];
        break;
    default: {
        int nv = B->nv;
        if (accp) {
            for (int k = 0; k < 6; k++)
                d->accp[k] = accp[k];
        } else if (B->parent >= 0) {
            port_acceleration(m, data, m->bodies[B->parent].port0 + B->slot, d->accp);
        } else {
            for (int k = 0; k < 6; k++)
                d->accp[k] = in[B->pm0 + k];
        }
        real_t a0[6];
        joint_motion(d->E, d->p, d->accp, a0);
        for (int k = 0; k < 6; k++)
            a0[k] += d->e[k];
        if (nv && !B->inverse) /* u̇ = z - Y a0 */
            for (int k = 0; k < nv; k++) {
                real_t s = d->z[k];
                for (int c = 0; c < 6; c++)
                    s -= d->Y[6 * k + c] * a0[c];
                d->alpha[k] = s;
            }
        joint_acceleration(B, d, d->accp, d->alpha, d->acc);
        if (full || B->inverse) { /* W_{B/A,P} = Ia ẋ'_A + ha; τ = S^T W_{B/A,P} (eqs. 19, 26) */
            mv6(d->Ia, d->acc, W);
            for (int k = 0; k < 6; k++)
                W[k] += d->ha[k];
            if (B->inverse) /* τ = S^T W_{B/A,P} + armature u̇ (the rotor's inertia, eq. 20) */
                for (int k = 0; k < nv; k++) {
                    real_t s = B->armature[k] * d->alpha[k];
                    for (int r = 0; r < 6; r++)
                        s += B->S[nv * r + k] * W[r];
                    d->effort[k] = s;
                }
            if (full) {
                joint_wrench(d->E, d->p, W, d->wP);
                for (int k = 0; k < 6; k++)
                    d->wP[k] = -d->wP[k];
            }
        }
        break;
    }
    }
    if (B->flex >= 0) /* q̈ of its flexible part (docs eq. T2), before its children */
        flex_accel(m, data, B->flex);
    if (full) /* wrenches applied on the body at its ports */
        for (int j = B->port0; j < B->port0 + B->nports; j++) {
            portdata *pd = port_data(m, data, j);
            const titop_port *P = &m->ports[j];
            if (P->child < 0) {
                memcpy(pd->w, pd->kv, sizeof pd->w);
                continue;
            }
            const bodydata *c = body_data(data, P->child);
            real_t ac[6];
            port_acceleration(m, data, j, ac);
            mv6(c->Ma, ac, pd->w);
            for (int k = 0; k < 6; k++)
                pd->w[k] = -(pd->w[k] + c->ba[k]);
        }
    return 0;
}

/* State derivative of body i. */
static void state_rate(const titop_model *m, real_t *data, int i, const real_t *x, real_t *dx)
{
    const titop_body *B = &m->bodies[i];
    const bodydata *d = body_data(data, i);
    if (B->flex >= 0) { /* [q̇, q̈] of its flexible part (docs eq. T2) */
        const titop_flex *F = &m->flex[B->flex];
        const real_t *qdd = flex_rec(m, data, B->flex) + 36 + 7 * F->n;
        for (int k = 0; k < F->n; k++) {
            dx[F->x0 + k] = x[F->x0 + F->n + k];
            dx[F->x0 + F->n + k] = qdd[k];
        }
    }
    if (B->x0 < 0)
        return;
    real_t *o = dx + B->x0;
    const real_t *xs = x + B->x0;
    int nq = B->nq, nv = B->nv;
    switch (B->kind) {
    case TITOP_RIGID: /* eq. 12: d[IP]_{R_i}/dt = P_{b/i} v_P, q̇, ẋ'_P */
        mv3(d->R, d->tw, o);
        quaternion_rate(xs + 3, d->tw + 3, o + 3);
        for (int k = 0; k < 6; k++)
            o[7 + k] = d->acc[k];
        return;
    case TITOP_SPHERICAL:
        quaternion_rate(xs, xs + 4, o);
        break;
    case TITOP_FREE: /* ṙ = P_{a/b} v_r, quaternion rate of ω_r */
        mv3(d->E, xs + 7, o);
        quaternion_rate(xs + 3, xs + 10, o + 3);
        break;
    default: /* 1-dof: q̇ = u */
        for (int k = 0; k < nv; k++)
            o[k] = xs[nq + k];
        break;
    }
    for (int k = 0; k < nv; k++)
        o[nq + k] = d->alpha[k];
}

/* ---- one body on its own, step by step: the object path (see titop.h) ---- */

/* out (6 x w, row-major) = τ(p) M for M (6 x w, row-major; NULL: the identity, w = 6) */
static void tau_matrix(const real_t *p, const real_t *M, int w, real_t *out)
{
    for (int c = 0; c < w; c++) {
        real_t col[6];
        for (int r = 0; r < 6; r++)
            col[r] = M ? M[w * r + c] : (real_t)(r == c);
        tau_motion(p, col, col);
        for (int r = 0; r < 6; r++)
            out[w * r + c] = col[r];
    }
}

void TITOP_FN(block_kinematics)(const titop_model *m, double *data_d, int i, const double *x_d,
                                const double *in_d, const double *parent_d, double *ports_d)
{
    real_t *data = (real_t *)data_d;
    const titop_body *B = &m->bodies[i];
    body_kinematics(m, data, i, (const real_t *)x_d, (const real_t *)in_d,
                    (const real_t *)parent_d);
    if (ports_d) {
        real_t *o = (real_t *)ports_d;
        for (int j = 0; j < B->nports; j++, o += 18)
            port_kinematics(m, data, B->port0 + j, o, o + 6, o + 9);
    }
}

void TITOP_FN(block_bias)(const titop_model *m, double *data_d, int i, const double *in_d)
{
    body_bias(m, (real_t *)data_d, i, (const real_t *)in_d);
}

int TITOP_FN(block_map)(const titop_model *m, double *data_d, int i, const double *in_d,
                        double *map_d)
{
    const real_t *in = (const real_t *)in_d;
    const titop_body *B = &m->bodies[i];
    const bodydata *d = body_data((real_t *)data_d, i);
    int ka, ne, n = B->nports, nv = B->nv;
    size_t size = titop_map_size(m, i, &ka, &ne);
    real_t *J = (real_t *)map_d;
    for (size_t k = 0; k < size; k++)
        J[k] = 0.0;
    real_t *F = J + ka * ka, *f0 = F + 6 * ka, *PP = f0 + ka, *cP = PP + 36, *CP = cP + 6;
    real_t *cC = CP + 36 * n, *U = cC + 6 * n, *XP = U + 6 * n * ka, *XC = XP + 6 * ne;
    real_t *xc = XC + 6 * n * ne, *XA = xc + ne;
    real_t Dm[36], S[36], t[36], a[6];
    for (int k = 0; k < 36; k++) {
        Dm[k] = B->D[k];
        S[k] = B->S[k];
    }
    for (int k = 0; k < ka; k++)
        XA[ka * k + k] = 1.0;
    switch (B->kind) {
    case TITOP_RIGID: /* eq. (11), α = ẋ'_P: D_P α = Σ τ_CP^T W_C - h; ẋ'_C = τ_CP α (eq. 14) */
        memcpy(J, Dm, sizeof Dm);
        for (int k = 0; k < 6; k++)
            f0[k] = -d->h[k];
        break;
    case TITOP_GROUND:
        for (int k = 0; k < 6; k++)
            a[k] = 0.0;
        break;
    case TITOP_IMPOSED: /* W_ext,P = D_P ẋ'_P + h - Σ τ_CP^T W_C (eq. 11 for the wrench) */
        for (int k = 0; k < 6; k++)
            a[k] = in[B->in0 + k];
        mv6(Dm, a, xc);
        for (int k = 0; k < 6; k++)
            xc[k] += d->h[k];
        break;
    default: {
        /* ẋ'_A = G ẋ'_B + e + S u̇ (eqs. 17, 24), Newton-Euler (18, 25) D ẋ'_A + h = W_{B/A,P} +
           Σ τ_CP^T W_C, the joint equation (19, 26) S^T W_{B/A,P} = τ, W_P = -G^T W_{B/A,P} */
        real_t G[36], DG[36], r[6];
        for (int c = 0; c < 6; c++) {
            real_t u[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, g[6];
            u[c] = 1.0;
            joint_motion(d->E, d->p, u, g);
            for (int k = 0; k < 6; k++)
                G[6 * k + c] = g[k];
        }
        for (int rr = 0; rr < 6; rr++)
            for (int c = 0; c < 6; c++) {
                real_t s = 0.0;
                for (int k = 0; k < 6; k++)
                    s += Dm[6 * rr + k] * G[6 * k + c];
                DG[6 * rr + c] = s;
            }
        for (int rr = 0; rr < 6; rr++) /* PP = -G^T D G */
            for (int c = 0; c < 6; c++) {
                real_t s = 0.0;
                for (int k = 0; k < 6; k++)
                    s += G[6 * k + rr] * DG[6 * k + c];
                PP[6 * rr + c] = -s;
            }
        for (int k = 0; k < 6; k++) { /* a = e + S u̇ (imposed joint motion) or e (forward) */
            real_t s = d->e[k];
            if (B->inverse)
                for (int q = 0; q < nv; q++)
                    s += S[nv * k + q] * d->alpha[q];
            a[k] = s;
        }
        mv6(Dm, a, r); /* r = D a + h */
        for (int k = 0; k < 6; k++)
            r[k] += d->h[k];
        joint_wrench(d->E, d->p, r, cP);
        for (int k = 0; k < 6; k++)
            cP[k] = -cP[k];
        if (ka) { /* forward (eqs. 20, 22, 28): J α = F ẋ'_B + U^T W_C + f0 */
            for (int q = 0; q < nv; q++) {
                real_t s = B->in0 >= 0 ? in[B->in0 + q] : 0.0;
                for (int k = 0; k < 6; k++)
                    s -= S[nv * k + q] * r[k];
                f0[q] = s;
                for (int c = 0; c < 6; c++) { /* F = -S^T D G */
                    real_t f = 0.0;
                    for (int k = 0; k < 6; k++)
                        f += S[nv * k + q] * DG[6 * k + c];
                    F[6 * q + c] = -f;
                }
                for (int c = 0; c < nv; c++) { /* J = S^T D S + diag(armature) (eq. 20) */
                    real_t jj = c == q ? (real_t)B->armature[q] : 0.0;
                    for (int k = 0; k < 6; k++)
                        for (int l = 0; l < 6; l++)
                            jj += S[nv * k + q] * Dm[6 * k + l] * S[nv * l + c];
                    J[nv * q + c] = jj;
                }
            }
        } else if (nv) { /* inverse: τ = S^T W_{B/A,P} + armature u̇
                                      = S^T (D G ẋ'_B + r - Σ τ_CP^T W_C) + armature u̇ */
            for (int q = 0; q < nv; q++) {
                real_t s = B->armature[q] * d->alpha[q];
                for (int k = 0; k < 6; k++)
                    s += S[nv * k + q] * r[k];
                xc[q] = s;
                for (int c = 0; c < 6; c++) {
                    real_t f = 0.0;
                    for (int k = 0; k < 6; k++)
                        f += S[nv * k + q] * DG[6 * k + c];
                    XP[6 * q + c] = f;
                }
            }
        }
        for (int j = 0; j < n; j++) { /* ẋ'_C = τ_CP ẋ'_A: CP = τ_CP G */
            const double *pc = m->ports[B->port0 + j].pc;
            real_t p[3] = {-pc[0], -pc[1], -pc[2]};
            tau_matrix(p, G, 6, CP + 36 * j);
        }
        break;
    }
    }
    for (int j = 0; j < n; j++) { /* ẋ'_C = τ_CP (a + S α): cC, U; extra outputs -Σ τ^T W_C */
        const double *pc = m->ports[B->port0 + j].pc;
        real_t p[3] = {-pc[0], -pc[1], -pc[2]};
        if (B->kind != TITOP_RIGID)
            tau_motion(p, a, cC + 6 * j);
        if (ka) {
            tau_matrix(p, B->kind == TITOP_RIGID ? NULL : S, ka, t);
            for (int k = 0; k < 6 * ka; k++)
                U[6 * ka * j + k] = t[k];
        }
        if (B->kind == TITOP_GROUND || B->kind == TITOP_IMPOSED || (nv && B->inverse)) {
            int w = B->inverse ? nv : 6; /* XC = -(τ_CP S)^T, S = 1 for a root */
            tau_matrix(p, B->inverse ? S : NULL, w, t);
            for (int q = 0; q < w; q++)
                for (int c = 0; c < 6; c++)
                    XC[6 * n * q + 6 * j + c] = -t[w * c + q];
        }
    }
    return TITOP_OK;
}

int TITOP_FN(block_respond)(const titop_model *m, double *data_d, int i, const double *in_d,
                            const double *accp_d, const double *wc_d, int full, double *accc_d)
{
    real_t *data = (real_t *)data_d;
    const real_t *in = (const real_t *)in_d, *wc = (const real_t *)wc_d;
    const titop_body *B = &m->bodies[i];
    bodydata *d = body_data(data, i);
    for (int j = B->port0; j < B->port0 + B->nports; j++)
        if (m->ports[j].child >= 0)
            return TITOP_BAD_MODEL;
    if (B->nv && !B->inverse)
        for (int k = 0; k < B->nv; k++)
            d->effort[k] = B->in0 >= 0 ? in[B->in0 + k] : 0.0;
    for (int j = 0; j < B->nports; j++) {
        const titop_port *P = &m->ports[B->port0 + j];
        portdata *pd = port_data(m, data, B->port0 + j);
        for (int k = 0; k < 6; k++)
            pd->kv[k] = wc ? wc[6 * j + k] : P->w0 >= 0 ? in[P->w0 + k] : 0.0;
    }
    if (backward_step(m, data, i) ||
        forward_step(m, data, i, in, (const real_t *)accp_d, full))
        return TITOP_SINGULAR;
    if (accc_d)
        for (int j = 0; j < B->nports; j++) {
            const double *pc = m->ports[B->port0 + j].pc;
            real_t p[3] = {-pc[0], -pc[1], -pc[2]};
            tau_motion(p, d->acc, (real_t *)accc_d + 6 * j);
        }
    return TITOP_OK;
}

void TITOP_FN(block_acceleration)(const titop_model *m, const double *data_d, int i,
                                  const double *accp_d, const double *alpha_d, double *out_d)
{
    joint_acceleration(&m->bodies[i], body_data((real_t *)data_d, i), (const real_t *)accp_d,
                       (const real_t *)alpha_d, (real_t *)out_d);
}

void TITOP_FN(block_state_rate)(const titop_model *m, double *data_d, int i, const double *x_d,
                                const double *alpha_d, double *dx_d)
{
    const titop_body *B = &m->bodies[i];
    bodydata *d = body_data((real_t *)data_d, i);
    const real_t *alpha = (const real_t *)alpha_d;
    if (B->kind == TITOP_RIGID)
        for (int k = 0; k < 6; k++)
            d->acc[k] = alpha[k];
    else
        for (int k = 0; k < B->nv; k++)
            d->alpha[k] = alpha[k];
    state_rate(m, (real_t *)data_d, i, (const real_t *)x_d, (real_t *)dx_d);
}

/* ---- mimic joints (titop.h, titop_mimic) ---- */

/* Response of one body to a unit constraint effort, bias-free (no h, no known wrench, no
   velocity product e, no gravity, zero imposed and parent-input accelerations): the accelerations
   are affine in the joint efforts, and this is their linear part. */
typedef struct respdata {
    real_t ha[6];    /* articulated bias of the subtree (R_a) */
    real_t ba[6];    /* what the parent sees: W_{A/B} = -(Ma ẋ'_B + ba), R_b */
    real_t acc[6];   /* ẋ'_P (R_a) */
    real_t alpha[6]; /* u̇ (the backward sweep keeps z there) */
} respdata;

#define RESP_STRIDE (sizeof(respdata) / sizeof(real_t))

static size_t mimic_offset(const titop_model *m)
{
    return (size_t)m->nbodies * BODY_STRIDE + (size_t)m->nports * PORT_STRIDE;
}

static respdata *resp_data(const titop_model *m, real_t *data, int i)
{
    return (respdata *)(data + mimic_offset(m)) + i;
}

/* The joint effort of body i in the response of mimic c's unit multiplier: +1 on the follower,
   -r on the leader (the gradient of q_f - r q_l). */
static double unit_effort(const titop_mimic *c, int i)
{
    return i == c->follower ? 1.0 : i == c->leader ? -c->multiplier : 0.0;
}

/* The bias-free sweep of mimic c's unit multiplier: the articulated inertias Ia, Ma, the LDL^T
   factors L and Y = (S^T Ia S)^-1 U^T of the evaluation's backward sweep are effort-independent
   and reused; only the bias parts (ha, z, bl, ba) and the accelerations are recomputed (the
   backward and forward steps with h, known wrenches, e, gravity and imposed accelerations zero). */
static void mimic_response(const titop_model *m, real_t *data, const titop_mimic *c)
{
    int n = m->nbodies;
    for (int i = n - 1; i >= 0; i--) { /* backward: ha = Σ τ_C^T ba_C, z, bl = ha + U z */
        const titop_body *B = &m->bodies[i];
        const bodydata *d = body_data(data, i);
        respdata *r = resp_data(m, data, i);
        for (int k = 0; k < 6; k++)
            r->ha[k] = 0.0;
        for (int j = B->port0; j < B->port0 + B->nports; j++) {
            const titop_port *P = &m->ports[j];
            if (P->child < 0)
                continue;
            real_t p[3] = {-P->pc[0], -P->pc[1], -P->pc[2]}, w[6];
            tau_wrench(p, resp_data(m, data, P->child)->ba, w);
            for (int k = 0; k < 6; k++)
                r->ha[k] += w[k];
        }
        if (B->kind == TITOP_RIGID || B->kind == TITOP_GROUND || B->kind == TITOP_IMPOSED)
            continue;
        int nv = B->nv;
        real_t bl[6];
        memcpy(bl, r->ha, sizeof bl);
        if (nv && !B->inverse) { /* z = (S^T Ia S)^-1 (δτ - S^T ha), bl += Ia S z (eqs. 20-22) */
            real_t sz[6];
            for (int k = 0; k < nv; k++) {
                real_t s = k == 0 ? unit_effort(c, i) : 0.0;
                for (int q = 0; q < 6; q++)
                    s -= B->S[nv * q + k] * r->ha[q];
                r->alpha[k] = s;
            }
            ldl_solve(d->L, nv, r->alpha);
            for (int q = 0; q < 6; q++) {
                real_t s = 0.0;
                for (int k = 0; k < nv; k++)
                    s += B->S[nv * q + k] * r->alpha[k];
                sz[q] = s;
            }
            real_t u[6];
            mv6(d->Ia, sz, u);
            for (int q = 0; q < 6; q++)
                bl[q] += u[q];
        }
        joint_wrench(d->E, d->p, bl, r->ba); /* ba = G^T bl (eqs. 18, 29) */
    }
    for (int i = 0; i < n; i++) { /* forward */
        const titop_body *B = &m->bodies[i];
        const bodydata *d = body_data(data, i);
        respdata *r = resp_data(m, data, i);
        switch (B->kind) {
        case TITOP_RIGID: /* Ia ẋ'_P + ha = 0, Y holds Ia's LDL^T (forward_step) */
            for (int k = 0; k < 6; k++)
                r->acc[k] = -r->ha[k];
            ldl_solve(d->Y, 6, r->acc);
            break;
        case TITOP_GROUND:
        case TITOP_IMPOSED:
            for (int k = 0; k < 6; k++)
                r->acc[k] = 0.0;
            break;
        default: {
            int nv = B->nv;
            real_t accp[6] = {0}, a0[6];
            if (B->parent >= 0) {
                const titop_port *P = &m->ports[m->bodies[B->parent].port0 + B->slot];
                real_t p[3] = {-P->pc[0], -P->pc[1], -P->pc[2]};
                tau_motion(p, resp_data(m, data, B->parent)->acc, accp);
            }
            joint_motion(d->E, d->p, accp, a0);
            for (int k = 0; k < nv; k++) { /* u̇ = z - Y a0; imposed joint motion: 0 */
                real_t s = B->inverse ? 0.0 : r->alpha[k];
                if (!B->inverse)
                    for (int q = 0; q < 6; q++)
                        s -= d->Y[6 * k + q] * a0[q];
                r->alpha[k] = s;
            }
            for (int q = 0; q < 6; q++) {
                real_t s = a0[q];
                for (int k = 0; k < nv; k++)
                    s += B->S[nv * q + k] * r->alpha[k];
                r->acc[q] = s;
            }
            break;
        }
        }
    }
}

/* The constraint efforts λ of the mimic joints after a sweep with the applied efforts: the
   residual c = q̈_f - r q̈_l of each, the matrix G = J M^-1 J^T (k x k, symmetric positive
   definite: column c is the residuals' response to mimic c's unit multiplier), G λ = -c by
   LDL^T; then each follower's effort += λ and its leader's -= r λ. Returns -1, or the index of
   the follower whose pivot is not positive (singular). */
static int mimic_efforts(const titop_model *m, real_t *data)
{
    int k = m->nmimics;
    real_t *G = data + mimic_offset(m) + (size_t)m->nbodies * RESP_STRIDE;
    real_t *lam = G + (size_t)k * k, *diag = lam + k;
    for (int a = 0; a < k; a++) {
        const titop_mimic *c = &m->mimics[a];
        lam[a] = -(body_data(data, c->follower)->alpha[0] -
                   c->multiplier * body_data(data, c->leader)->alpha[0]);
    }
    for (int b = 0; b < k; b++) {
        mimic_response(m, data, &m->mimics[b]);
        for (int a = 0; a < k; a++) {
            const titop_mimic *c = &m->mimics[a];
            G[k * a + b] = resp_data(m, data, c->follower)->alpha[0] -
                           c->multiplier * resp_data(m, data, c->leader)->alpha[0];
        }
    }
    for (int a = 0; a < k; a++)
        diag[a] = G[(k + 1) * a];
    /* LDL^T, each pivot above 1e-12 of its diagonal entry (an independent constraint) */
    for (int j = 0; j < k; j++) {
        real_t dj = G[k * j + j];
        for (int q = 0; q < j; q++)
            dj -= G[k * j + q] * G[k * j + q] * G[k * q + q];
        if (!(RE(dj) > 1e-12 * RE(diag[j])) || !(RE(diag[j]) > 0.0))
            return m->mimics[j].follower;
        G[k * j + j] = dj;
        for (int i = j + 1; i < k; i++) {
            real_t s = G[k * i + j];
            for (int q = 0; q < j; q++)
                s -= G[k * i + q] * G[k * j + q] * G[k * q + q];
            G[k * i + j] = s / dj;
        }
    }
    ldl_solve(G, k, lam);
    for (int a = 0; a < k; a++) {
        const titop_mimic *c = &m->mimics[a];
        body_data(data, c->follower)->effort[0] += lam[a];
        body_data(data, c->leader)->effort[0] -= c->multiplier * lam[a];
    }
    return -1;
}

/* The algebraic loop: backward, then forward sweep; 0 or 1 + the body (singular). */
/* ---- flexible parts (docs/flexible.md §3-§7, titop_flex) ---- */

/* The passes of an evaluation on the load values of the geometric stiffness (flex_loads,
   flex_next; docs/flexible.md §6 "The passes"): plain passes, after TITOP_FLEX_PLAIN of them
   only while their measured rate predicts settling within the exact solve's passes, at most
   TITOP_FLEX_PASSES; then the exact affine solve (one pass per iterated value, one with the
   solution) and at most TITOP_FLEX_REFINE passes of iterative refinement. */
#define TITOP_FLEX_PLAIN 4
#define TITOP_FLEX_PASSES 40
#define TITOP_FLEX_REFINE 4

static size_t flex_offset(const titop_model *m)
{
    size_t k = m->nmimics > 0 ? (size_t)m->nmimics : 0;
    return mimic_offset(m) + (k ? (size_t)m->nbodies * RESP_STRIDE + k * k + 2 * k : 0);
}

/* values of part f's record: M_P* (36), Y (n x 6), z (n), q̈ (n), LDL^T of Mee_eff (n x n),
   then per node k >= 1 the rotational rows of its Jacobian J_l(θ) Φr,k (3 x n; child port
   k - 1's node, or an external wrench's: titop_ext.node) */
static size_t flex_rec_size(const titop_model *m, const titop_flex *F)
{
    size_t n = (size_t)F->n, k = (size_t)(F->nnodes > 1 ? F->nnodes - 1 : 0);
    (void)m;
    size_t c = (size_t)F->ncases;
    return 36 + 8 * n + n * n + 3 * n * k + 12 * k + 6 + c + 42 + 7 * n + c * n + c + 3 * n + 7 +
           n;
}

/* The load values' block of part f's record (flex_loads), after the nodes' Jacobians: per
   node k >= 1 the known wrench on the body at the node (6 k: external wrenches at the node and
   a known port wrench, R_a), the tree child's wrench on the body at the node from the last
   pass (6 k, R_a), the body's acceleration ẋ'_P from the last pass (6, R_a), the load values
   of this pass (ncases); then what the passes share (flex_base): M_rr (36), M_er (n x 6), the
   elastic right-hand side without the geometric stiffness z_0 (n), the bias h_0 (6), KG_c q
   (ncases x n; only for the cases whose load value may be non-zero: flex_live), the scratch
   of flex_loads (ncases + 3 n); for a body with child ports, whether this pass reuses the
   last one's condensation (1), the children's share of its bias ha (6) and of its elastic
   right-hand side (n) (flex_condense) */
static real_t *flex_loads_block(const titop_model *m, real_t *data, int f)
{
    const titop_flex *F = &m->flex[f];
    size_t n = (size_t)F->n, k = (size_t)(F->nnodes > 1 ? F->nnodes - 1 : 0);
    return flex_rec(m, data, f) + 36 + 8 * n + n * n + 3 * n * k;
}

/* Where flex_loads_block's flag "this pass reuses the last one's condensation" sits (after
   the known and children's wrenches 12 k, ẋ'_P 6, λ ncases, M_rr 36, M_er 6 n, z_0 n, h_0 6,
   KG_c q ncases n, the scratch ncases + 3 n), followed by the children's share of ha (6) and
   of z (n): flex_bias sets it, flex_condense reads it */
static real_t *flex_reuse(const titop_model *m, real_t *data, int f)
{
    const titop_flex *F = &m->flex[f];
    size_t n = (size_t)F->n, k = (size_t)(F->nnodes > 1 ? F->nnodes - 1 : 0);
    size_t c = (size_t)F->ncases;
    return flex_loads_block(m, data, f) + 12 * k + 48 + 10 * n + c * (n + 2);
}

static real_t *flex_rec(const titop_model *m, real_t *data, int f)
{
    size_t o = flex_offset(m);
    for (int g = 0; g < f; g++)
        o += flex_rec_size(m, &m->flex[g]);
    return data + o;
}

/* The coefficients of exp(θ~) = 1 + A θ~ + B θ~^2 and of its left Jacobian J_l(θ) = 1 + B θ~ +
   C θ~^2 (the angular velocity of exp(θ~) is J_l θ̇, in the frame it turns from), and dB/ds,
   dC/ds, functions of s = θ . θ (rad^2): by their series below s = 1e-2 (14 terms: exact to
   rounding, and analytic at θ = 0 for the complex step), closed forms above. */
static void rotation_coefficients(real_t s, real_t *c)
{
    if (RE(s) < 1e-2) {
        real_t A = 0.0, B = 0.0, C = 0.0, dB = 0.0, dC = 0.0, pw = 1.0, pm = 0.0;
        double f1 = 1.0, f2 = 2.0, f3 = 6.0; /* (2k + 1)!, (2k + 2)!, (2k + 3)! */
        for (int k = 0; k < 7; k++) {
            double sg = k % 2 ? -1.0 : 1.0;
            A += sg * pw / f1;
            B += sg * pw / f2;
            C += sg * pw / f3;
            dB += sg * k * pm / f2;
            dC += sg * k * pm / f3;
            pm = pw;
            pw *= s;
            f1 = f3;
            f2 = f3 * (2 * k + 4);
            f3 = f2 * (2 * k + 5);
        }
        c[0] = A;
        c[1] = B;
        c[2] = C;
        c[3] = dB;
        c[4] = dC;
        return;
    }
    real_t t = r_sqrt(s), sn = r_sin(t), cs = r_cos(t);
    c[0] = sn / t;
    c[1] = (1.0 - cs) / s;
    c[2] = (t - sn) / (s * t);
    /* dB/ds = (dB/dt) / (2 t), dB/dt = sin t / t^2 - 2 (1 - cos t) / t^3; likewise C */
    c[3] = (sn / s - 2.0 * (1.0 - cs) / (s * t)) / (2.0 * t);
    c[4] = ((1.0 - cs) / (s * t) - 3.0 * (t - sn) / (s * s)) / (2.0 * t);
}

/* out = 1 + a θ~ + b θ~^2 (3 x 3) */
static void rotation_series(const real_t *th, real_t a, real_t b, real_t *out)
{
    real_t K[9] = {0.0, -th[2], th[1], th[2], 0.0, -th[0], -th[1], th[0], 0.0}, K2[9];
    mm3(K, K, K2);
    for (int k = 0; k < 9; k++)
        out[k] = a * K[k] + b * K2[k] + (k % 4 == 0 ? 1.0 : 0.0);
}

/* Node kinematics of part f's child ports (port k at node k + 1; docs §6). The node frame N:
   at x_j = r_j + Φt,j q, turned by Rt = exp(θ~), θ = Φr,j q (R_a components). Its twist in R_a
   components y = X_j x'_P + Ψ_j q̇ (X_j = τ(-x_j), Ψ_j = [Φt,j; J_l(θ) Φr,j]) and in N
   components Rt^T y; its acceleration in N components Rt^T (X_j ẋ'_P + Ψ_j q̈ + c_j), the rate of
   Rt^T y: c_j = [ω x Φt,j q̇; J̇_l θ̇] - [ω_r x y_v; ω_r x y_ω], ω_r = J_l θ̇ (the rate of N
   relative to R_a). Exact rigid kinematics of the node frame (a child's dynamics conserve
   energy with the body's), the linear model's x_j and θ. */
/* Node k's frame of part F at its elastic coordinates q (docs §6, N1): x = r_k + Φt,k q
   (R_a), Rt = exp(θ~) with θ = Φr,k q, Jl = J_l(θ), Pr = J_l Φr,k (3 x n; Ψ_k's rotational
   rows), c the coefficients of rotation_coefficients at θ . θ. */
static void node_frame(const titop_flex *F, int k, const real_t *q, real_t *x, real_t *th,
                       real_t *c, real_t *Rt, real_t *Jl, real_t *Pr)
{
    const int n = F->n;
    const double *r = F->node_positions + 3 * k;
    const double *Phi = F->node_shapes + (size_t)6 * n * k;
    for (int a = 0; a < 3; a++) {
        real_t s = 0.0, u = 0.0;
        for (int l = 0; l < n; l++) {
            s += Phi[n * a + l] * q[l];
            u += Phi[n * (3 + a) + l] * q[l];
        }
        x[a] = r[a] + s;
        th[a] = u;
    }
    rotation_coefficients(th[0] * th[0] + th[1] * th[1] + th[2] * th[2], c);
    rotation_series(th, c[0], c[1], Rt);
    rotation_series(th, c[1], c[2], Jl);
    for (int a = 0; a < 3; a++) /* J_l Φr,k */
        for (int l = 0; l < n; l++)
            Pr[n * a + l] = Jl[3 * a] * Phi[n * 3 + l] + Jl[3 * a + 1] * Phi[n * 4 + l] +
                            Jl[3 * a + 2] * Phi[n * 5 + l];
}

/* Node kinematics of part f's child ports (port k at node k + 1; docs §6). The node frame N:
   at x_j = r_j + Φt,j q, turned by Rt = exp(θ~), θ = Φr,j q (R_a components; node_frame). Its
   twist in R_a components y = X_j x'_P + Ψ_j q̇ (X_j = τ(-x_j), Ψ_j = [Φt,j; J_l(θ) Φr,j]) and
   in N components Rt^T y; its acceleration in N components Rt^T (X_j ẋ'_P + Ψ_j q̈ + c_j), the
   rate of Rt^T y: c_j = [ω x Φt,j q̇; J̇_l θ̇] - [ω_r x y_v; ω_r x y_ω], ω_r = J_l θ̇ (the rate of
   N relative to R_a). Exact rigid kinematics of the node frame (a child's dynamics conserve
   energy with the body's), the linear model's x_j and θ. */
static void flex_kinematics(const titop_model *m, real_t *data, int f, const real_t *x)
{
    const titop_flex *F = &m->flex[f];
    const titop_body *B = &m->bodies[F->body];
    const bodydata *d = body_data(data, F->body);
    const int n = F->n;
    const real_t *q = x + F->x0, *qd = q + n;
    real_t *Pr0 = flex_rec(m, data, f) + 36 + 8 * (size_t)n + (size_t)n * n;
    for (int k = 0; k < B->nports; k++) {
        portdata *pd = port_data(m, data, B->port0 + k);
        const double *Phi = F->node_shapes + (size_t)6 * n * (k + 1);
        real_t th[3], thd[3], vt[3], c[5], Jl[9], wr[3];
        node_frame(F, k + 1, q, pd->x, th, c, pd->Rt, Jl, Pr0 + (size_t)3 * n * k);
        mm3(d->R, pd->Rt, pd->Rn);
        for (int a = 0; a < 3; a++) {
            real_t t = 0.0, w = 0.0;
            for (int l = 0; l < n; l++) {
                t += Phi[n * a + l] * qd[l];
                w += Phi[n * (3 + a) + l] * qd[l];
            }
            vt[a] = t;
            thd[a] = w;
        }
        mv3(Jl, thd, wr);
        for (int a = 0; a < 3; a++) {
            pd->dv[a] = vt[a];
            pd->dv[3 + a] = wr[a];
        }
        /* J̇_l θ̇ = Ḃ θ x θ̇ + Ċ θ x (θ x θ̇) + C θ̇ x (θ x θ̇), Ḃ = dB/ds ṡ, ṡ = 2 θ . θ̇ */
        real_t sd = 2.0 * (th[0] * thd[0] + th[1] * thd[1] + th[2] * thd[2]);
        real_t e1[3], e2[3], e3[3], y[6], pp[3] = {-pd->x[0], -pd->x[1], -pd->x[2]};
        cross3(th, thd, e1);
        cross3(th, e1, e2);
        cross3(thd, e1, e3);
        tau_motion(pp, d->tw, y);
        for (int a = 0; a < 6; a++)
            y[a] += pd->dv[a];
        real_t c1[3], c2[3], c3[3];
        cross3(d->tw + 3, vt, c1);
        cross3(wr, y, c2);
        cross3(wr, y + 3, c3);
        for (int a = 0; a < 3; a++) {
            pd->ca[a] = c1[a] - c2[a];
            pd->ca[3 + a] = c[3] * sd * e1[a] + c[4] * sd * e2[a] + c[2] * e3[a] - c3[a];
        }
    }
}

/* b := L^-1 b, b := L^-T D^-1 b with L D L^T on real_t (Mee_eff's factors) */
static void flex_lower_r(const real_t *L, int n, real_t *b, int s)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < i; k++)
            b[s * i] -= L[n * i + k] * b[s * k];
}

static void flex_upper_r(const real_t *L, int n, real_t *b, int s)
{
    for (int i = 0; i < n; i++)
        b[s * i] /= L[n * i + i];
    for (int i = n - 1; i >= 0; i--)
        for (int k = i + 1; k < n; k++)
            b[s * i] -= L[n * k + i] * b[s * k];
}

/* A known wrench W (force; moment about the node; R_a components) at node k of part F, x its
   position x_k(q) and Pr = J_l(θ) Φr,k (node_frame): its generalised forces by the power
   W . y_k (docs eqs. N1, E4 with Ψ_k = [Φt,k; Pr]): the rigid rows into the body's bias, h -=
   X_k^T W (X_k = τ(-x_k)), the elastic ones into the right-hand side z += Ψ_k^T W. A child
   port's known wrench (a closure's, an input) and an external wrench at a node both go here. */
static void flex_node_wrench(const titop_flex *F, int k, const real_t *x, const real_t *Pr,
                             const real_t *W, real_t *h, real_t *z)
{
    const int n = F->n;
    const double *Phi = F->node_shapes + (size_t)6 * n * k;
    real_t p[3] = {-x[0], -x[1], -x[2]}, w[6];
    tau_wrench(p, W, w);
    for (int r = 0; r < 6; r++)
        h[r] -= w[r];
    for (int l = 0; l < n; l++)
        for (int r = 0; r < 6; r++)
            z[l] += (r < 3 ? (real_t)Phi[n * r + l] : Pr[n * (r - 3) + l]) * W[r];
}

/* Backward step of a flexible body i with child ports (its children done): the flexible
   articulated-body step. The body's equations (docs eq. E1 with the nodes' wrenches W_j =
   -(Ma_j a_j + ba_j) by eq. E4, a_j = X_j ẋ'_P + Φ_j q̈ + c_j, X_j = τ(-x_j)) read
     [M_rr + Σ X_j^T Ma_j X_j   M_re + Σ X_j^T Ma_j Φ_j] [ẋ'_P]   [r_r - Σ X_j^T (Ma_j c_j + ba_j)]
     [  .                       Mee + Σ Φ_j^T Ma_j Φ_j ] [q̈   ] = [z_0 - Σ Φ_j^T (Ma_j c_j + ba_j)]
   (known port wrenches: + X_j^T kv, + Φ_j^T kv); Mee_eff (SPD: Mee SPD, Ma_j PSD) is factored
   (LDL^T) and the elastic rows condensed as in flex_bias: M_P* = A - W^T D^-1 W into the
   record, W^T D^-1 L^-1 z into ha, Y = Mee_eff^-1 M_er and z = Mee_eff^-1 z for q̈ = z - Y ẋ'_P
   (docs eq. T2). flex_bias left the raw M_rr, M_er and z_0 in the record. Returns 0, or 1 if
   Mee_eff is not positive definite (a pivot at most 1e-14 of its diagonal entry). */
static int flex_condense(const titop_model *m, real_t *data, int i)
{
    const titop_body *B = &m->bodies[i];
    const titop_flex *F = &m->flex[B->flex];
    bodydata *d = body_data(data, i);
    const int n = F->n;
    real_t *Ms = flex_rec(m, data, B->flex), *Y = Ms + 36, *z = Y + 6 * n, *Lf = z + 2 * n;
    const real_t *Pr0 = Lf + (size_t)n * n;
    /* flex_bias's flag, then the children's share of ha and z (flex_loads_block) */
    real_t *reuse = flex_reuse(m, data, B->flex);
    real_t *hac = reuse + 1, *zc = hac + 6;
    if (RE(*reuse) != 0.0) { /* a later pass, the subtree unchanged: only z changed */
        for (int l = 0; l < n; l++)
            z[l] += zc[l];
        for (int r = 0; r < 6; r++) { /* + M_re' Mee_eff^-1 z = Y^T z */
            real_t b = hac[r];
            for (int l = 0; l < n; l++)
                b += Y[6 * l + r] * z[l];
            d->ha[r] += b;
        }
        flex_lower_r(Lf, n, z, 1);
        flex_upper_r(Lf, n, z, 1);
        return 0;
    }
    for (int r = 0; r < 6; r++)
        hac[r] = -d->ha[r];
    for (int l = 0; l < n; l++)
        zc[l] = -z[l];
    copy_d(F->Mee, Lf, n * n);
    for (int j = B->port0; j < B->port0 + B->nports; j++) {
        const titop_port *P = &m->ports[j];
        const portdata *pd = port_data(m, data, j);
        const double *Phi = F->node_shapes + (size_t)6 * n * (j - B->port0 + 1);
        const real_t *Pr = Pr0 + (size_t)3 * n * (j - B->port0);
        real_t p[3] = {-pd->x[0], -pd->x[1], -pd->x[2]}, w[6], bb[6], kv[6];
#define PSI(r, l) ((r) < 3 ? (real_t)Phi[n * (r) + (l)] : Pr[n * ((r) - 3) + (l)])
        if (P->child < 0) { /* a known wrench kv (N components) at the node (docs eq. E4) */
            mv3(pd->Rt, pd->kv, kv);
            mv3(pd->Rt, pd->kv + 3, kv + 3);
            flex_node_wrench(F, j - B->port0 + 1, pd->x, Pr, kv, d->ha, z);
            continue;
        }
        const bodydata *c = body_data(data, P->child);
        real_t Ma[36], t[36], col[6], Rt[9];
        /* the child's Ma, ba in R_a components: diag(Rt, Rt) Ma diag(Rt, Rt)^T, Rt ba */
        memcpy(Rt, pd->Rt, sizeof Rt);
        for (int bi = 0; bi < 2; bi++)
            for (int bj = 0; bj < 2; bj++) {
                real_t blk[9], tmp[9];
                for (int a = 0; a < 3; a++)
                    for (int e = 0; e < 3; e++)
                        blk[3 * a + e] = c->Ma[6 * (3 * bi + a) + 3 * bj + e];
                mm3(Rt, blk, tmp);
                for (int a = 0; a < 3; a++)
                    for (int e = 0; e < 3; e++)
                        Ma[6 * (3 * bi + a) + 3 * bj + e] =
                            tmp[3 * a] * Rt[3 * e] + tmp[3 * a + 1] * Rt[3 * e + 1] +
                            tmp[3 * a + 2] * Rt[3 * e + 2];
            }
        sym_transport(p, Ma, t); /* M_rr += X^T Ma X */
        for (int k = 0; k < 36; k++)
            Ms[k] += t[k];
        mv3(Rt, c->ba, kv);
        mv3(Rt, c->ba + 3, kv + 3);
        mv6(Ma, pd->ca, bb); /* Ma c_j + ba_j */
        for (int k = 0; k < 6; k++)
            bb[k] += kv[k];
        tau_wrench(p, bb, w);
        for (int k = 0; k < 6; k++)
            d->ha[k] += w[k];
        for (int l = 0; l < n; l++) {
            real_t phil[6];
            for (int r = 0; r < 6; r++)
                phil[r] = PSI(r, l);
            mv6(Ma, phil, col); /* Ma Ψ_l */
            tau_wrench(p, col, w); /* M_er row l += (X^T Ma Ψ_l)^T */
            real_t s = 0.0;
            for (int r = 0; r < 6; r++) {
                Y[6 * l + r] += w[r];
                s += phil[r] * bb[r];
            }
            z[l] -= s;
            for (int l2 = 0; l2 <= l; l2++) { /* Mee_eff (lower triangle) += Ψ^T Ma Ψ */
                real_t e = 0.0;
                for (int r = 0; r < 6; r++)
                    e += PSI(r, l2) * col[r];
                Lf[n * l + l2] += e;
            }
        }
#undef PSI
    }
    for (int r = 0; r < 6; r++)
        hac[r] += d->ha[r];
    for (int l = 0; l < n; l++)
        zc[l] += z[l];
    for (int l = 0; l < n; l++) /* the upper triangle, for a symmetric factor input */
        for (int l2 = 0; l2 < l; l2++)
            Lf[n * l2 + l] = Lf[n * l + l2];
    /* SPD in exact arithmetic (Mee SPD, checked at init; Ma_j PSD): each pivot at least Mee's
       own, judged against 1e-14 of Mee's diagonal entry */
    if (ldl_factor(Lf, n, 0.0))
        return 1;
    for (int l = 0; l < n; l++)
        if (!(RE(Lf[(n + 1) * l]) > 1e-14 * F->Mee[(n + 1) * l]))
            return 1;
    for (int c = 0; c < 6; c++)
        flex_lower_r(Lf, n, Y + c, 6);
    flex_lower_r(Lf, n, z, 1);
    for (int l = 0; l < n; l++) {
        real_t dl = Lf[n * l + l];
        for (int r = 0; r < 6; r++) {
            d->ha[r] += Y[6 * l + r] * z[l] / dl;
            for (int c = 0; c <= r; c++)
                Ms[6 * r + c] -= Y[6 * l + r] * Y[6 * l + c] / dl;
        }
    }
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < r; c++)
            Ms[6 * c + r] = Ms[6 * r + c];
    for (int c = 0; c < 6; c++)
        flex_upper_r(Lf, n, Y + c, 6);
    flex_upper_r(Lf, n, z, 1);
    return 0;
}

/* b := L^-1 b (L the unit lower factor of LDL^T, double), b of n values with stride s */
static void flex_lower(const double *L, int n, real_t *b, int s)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < i; k++)
            b[s * i] -= L[n * i + k] * b[s * k];
}

/* b := L^-T D^-1 b */
static void flex_upper(const double *L, int n, real_t *b, int s)
{
    for (int i = 0; i < n; i++)
        b[s * i] /= L[n * i + i];
    for (int i = n - 1; i >= 0; i--)
        for (int k = i + 1; k < n; k++)
            b[s * i] -= L[n * k + i] * b[s * k];
}

/* Whether no other flexible part hangs below body i (part f's): the children's articulated
   inertias and biases are then the same in every pass of an evaluation */
static int flex_subtree_fixed(const titop_model *m, int i, int f)
{
    for (int g = 0; g < m->nflex; g++) {
        int j = m->flex[g].body;
        if (g == f)
            continue;
        while (j > i)
            j = m->bodies[j].parent;
        if (j == i)
            return 0;
    }
    return 1;
}

/* Whether the load value of case code may be non-zero for the flexible part of body i, given
   the known wrenches at its nodes (flex_base): a body-load case, or a node case of a node
   with a known wrench or a tree child. Dead cases (a node case of a node of interest carrying
   nothing) cost nothing per pass. */
static int flex_live(const titop_model *m, int i, int code, const real_t *known)
{
    if (code < TITOP_FLEX_NODE)
        return code >= 0;
    const titop_body *B = &m->bodies[i];
    const int k = (code - TITOP_FLEX_NODE) / 6; /* node k + 1, port k */
    int live = k < B->nports && m->ports[B->port0 + k].child >= 0;
    for (int r = 0; r < 6; r++)
        live |= known[6 * k + r] != 0.0;
    return live;
}

/* What the passes of an evaluation share for the flexible part f (flex_loads_block), at the
   body's twist and its states [q, q̇]: M_rr and M_er of M(q) (docs eq. 5), the elastic
   right-hand side without the geometric stiffness z_0 = f_e - h_e - Kee q - De q̇ (docs eqs.
   E1-E5; external wrenches at its nodes by eq. E4), the bias h_0 = h_r - f_r, KG_c q per load
   case, and the known wrenches at its nodes (the node cases' known load values). */
static void flex_base(const titop_model *m, real_t *data, int f, const real_t *x,
                      const real_t *in)
{
    const titop_flex *F = &m->flex[f];
    const titop_body *B = &m->bodies[F->body];
    bodydata *d = body_data(data, F->body);
    const int n = F->n, nk = F->nnodes - 1;
    real_t *known = flex_loads_block(m, data, f), *child = known + 6 * nk, *accp = child + 6 * nk;
    real_t *Ms = accp + 6 + F->ncases, *Y = Ms + 36, *z = Y + 6 * n, *h0 = z + n, *G = h0 + 6;
    const real_t *q = x + F->x0, *qd = q + n;
    const real_t *v = d->tw, *w = d->tw + 3;
    real_t g[3], ga[3];
    copy_d(B->gravity, g, 3);
    mtv3(d->R, g, ga); /* [g]_{R_a} */
    const double m0 = F->mass[0];
    /* m c(q) = m c + Ct q, Ct q̇, J(q) = J_P + Σ q_k J1_k + Σ q_k q_l J2_kl (docs eq. 5) */
    real_t mc[3], ctqd[3], J[9];
    for (int a = 0; a < 3; a++) {
        real_t s = F->first_moment[a], t = 0.0;
        for (int k = 0; k < n; k++) {
            s += F->Ct[n * a + k] * q[k];
            t += F->Ct[n * a + k] * qd[k];
        }
        mc[a] = s;
        ctqd[a] = t;
    }
    for (int e = 0; e < 9; e++) {
        real_t s = F->inertia[e];
        for (int k = 0; k < n; k++) {
            real_t t = F->J1[9 * k + e];
            for (int l = 0; l < n; l++)
                t += q[l] * F->J2[9 * ((size_t)n * k + l) + e];
            s += q[k] * t;
        }
        J[e] = s;
    }
    /* M_er (n x 6) into Y: row l = [Ct_l^T, Cr(q)_l^T], Cr(q) = Cr + Σ q_k Cr1_k (docs eq. 5) */
    real_t crqd[3] = {0.0, 0.0, 0.0};
    for (int l = 0; l < n; l++)
        for (int a = 0; a < 3; a++) {
            real_t s = F->Cr[n * a + l];
            for (int k = 0; k < n; k++)
                s += q[k] * F->Cr1[3 * (size_t)n * k + n * a + l];
            Y[6 * l + a] = F->Ct[n * a + l];
            Y[6 * l + 3 + a] = s;
            crqd[a] += s * qd[l];
        }
    /* p = M(q) u: p_v = m v - m c(q) x ω + Ct q̇, p_ω = m c(q) x v + J(q) ω + Cr(q) q̇ */
    real_t pv[3], pw[3], c1[3], c2[3], Jw[3];
    cross3(mc, w, c1);
    cross3(mc, v, c2);
    mv3(J, w, Jw);
    for (int a = 0; a < 3; a++) {
        pv[a] = m0 * v[a] - c1[a] + ctqd[a];
        pw[a] = c2[a] + Jw[a] + crqd[a];
    }
    /* h (docs eq. E2) with M̊ u from dM/dq_k (docs eqs. E3, E5), rigid rows */
    real_t hr[6], t1[3], t2[3], t3[3];
    cross3(w, ctqd, t1);
    cross3(w, pv, t2);
    for (int a = 0; a < 3; a++)
        hr[a] = t1[a] + t2[a];
    cross3(ctqd, v, t1);
    cross3(w, pw, t2);
    cross3(v, pv, t3);
    for (int a = 0; a < 3; a++)
        hr[3 + a] = t1[a] + t2[a] + t3[a];
    /* external wrenches at its nodes (titop_ext.node): at the node, by eq. (E4) with Ψ_k
       (flex_node_wrench); 'body' components are the node frame N_k's: W_a = Rt W_N; inertial
       ones W_a = P_{a/i}^T W_i. Their sum per node, with a known port wrench's (Rt kv, the port
       of node k being k - 1), is the known load of the node cases (flex_loads_block) */
    real_t *Pr0 = flex_rec(m, data, f) + 36 + 8 * (size_t)n + (size_t)n * n;
    for (int l = 0; l < n; l++)
        z[l] = 0.0;
    for (int r = 0; r < 6; r++)
        h0[r] = 0.0;
    for (int k = 0; k < 6 * nk; k++)
        known[k] = child[k] = 0.0;
    for (int j = 0; j < B->next; j++) {
        const titop_ext *X = &m->exts[B->ext0 + j];
        if (X->node <= 0)
            continue;
        const real_t *wi = in + X->w0;
        real_t xk[3], th[3], c[5], Rt[9], Jl[9], W[6], *Pr = Pr0 + (size_t)3 * n * (X->node - 1);
        node_frame(F, X->node, q, xk, th, c, Rt, Jl, Pr);
        if (X->inertial) {
            mtv3(d->R, wi, W);
            mtv3(d->R, wi + 3, W + 3);
        } else {
            mv3(Rt, wi, W);
            mv3(Rt, wi + 3, W + 3);
        }
        flex_node_wrench(F, X->node, xk, Pr, W, h0, z);
        for (int r = 0; r < 6; r++)
            known[6 * (X->node - 1) + r] += W[r];
    }
    for (int k = 0; k < B->nports; k++)
        if (m->ports[B->port0 + k].child < 0) {
            const portdata *pd = port_data(m, data, B->port0 + k);
            real_t W[6];
            mv3(pd->Rt, pd->kv, W);
            mv3(pd->Rt, pd->kv + 3, W + 3);
            for (int r = 0; r < 6; r++)
                known[6 * k + r] += W[r];
        }
    real_t vxw[3];
    cross3(v, w, vxw);
    for (int c = 0; c < F->ncases; c++) /* KG_c q (docs eq. G2) */
        for (int l = 0; l < (flex_live(m, F->body, F->cases[c], known) ? n : 0); l++) {
            real_t s = 0.0;
            for (int k = 0; k < n; k++)
                s += F->KG[(size_t)n * n * c + (size_t)n * l + k] * q[k];
            G[(size_t)n * c + l] = s;
        }
    for (int l = 0; l < n; l++) {
        /* Jq_l = J1_l + Σ_m q_m (J2_lm + J2_ml) (docs eq. E5) */
        real_t Jq[9], Jqw[3], cq[3];
        for (int e = 0; e < 9; e++) {
            real_t s = F->J1[9 * l + e];
            for (int k = 0; k < n; k++)
                s += q[k] * (F->J2[9 * ((size_t)n * l + k) + e] + F->J2[9 * ((size_t)n * k + l) + e]);
            Jq[e] = s;
        }
        mv3(Jq, w, Jqw);
        real_t he = 0.0;
        for (int a = 0; a < 3; a++) {
            real_t s = 0.0;
            for (int k = 0; k < n; k++) {
                s += F->Cr1[3 * (size_t)n * l + n * a + k] * qd[k];       /* Cr1_l q̇ */
                he += qd[k] * F->Cr1[3 * (size_t)n * k + n * a + l] * w[a]; /* Σ q̇_k Cr1_k^T ω */
            }
            cq[a] = s;
            hr[3 + a] += qd[l] * (Jqw[a] + s);
        }
        /* -1/2 u^T dM/dq_l u = -(Ct_l . (v x ω) + 1/2 ω^T Jq_l ω + ω^T Cr1_l q̇) */
        for (int a = 0; a < 3; a++)
            he -= F->Ct[n * a + l] * vxw[a] + 0.5 * w[a] * Jqw[a] + w[a] * cq[a];
        /* z_0,l = f_e - h_e - Kee q - De q̇, f_e = Ct^T g (docs eqs. E1, E4); the geometric
           stiffness's -Σ_c λ_c KG_c q per pass (flex_bias) */
        real_t s = -he;
        for (int a = 0; a < 3; a++)
            s += F->Ct[n * a + l] * ga[a];
        for (int k = 0; k < n; k++)
            s -= F->Kee[n * l + k] * q[k] + F->De[n * l + k] * qd[k];
        z[l] += s;
    }
    /* f_r of gravity [m g; m c(q) x g] (docs eq. E4) */
    real_t fr[6];
    cross3(mc, ga, fr + 3);
    for (int a = 0; a < 3; a++)
        fr[a] = m0 * ga[a];
    for (int r = 0; r < 36; r++)
        Ms[r] = 0.0;
    for (int a = 0; a < 3; a++) {
        Ms[7 * a] = m0;
        for (int b = 0; b < 3; b++)
            Ms[6 * (3 + a) + 3 + b] = J[3 * a + b];
    }
    real_t sk[9] = {0.0, -mc[2], mc[1], mc[2], 0.0, -mc[0], -mc[1], mc[0], 0.0};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            Ms[6 * a + 3 + b] = -sk[3 * a + b];
            Ms[6 * (3 + a) + b] = sk[3 * a + b];
        }
    for (int r = 0; r < 6; r++)
        h0[r] += hr[r] - fr[r];
}

/* The flexible part f of its body at the body's twist and its states [q, q̇], pass `pass` of
   the evaluation (pass 0 first computes what the passes share: flex_base): adds its condensed
   articulated inertia M_P* = M_rr - M_re Mee^-1 M_er (docs eq. T3) to the record and its bias
   b_P = h_r - f_r + M_re Mee^-1 (f_e - h_e - K_eff q - De q̇) (docs §6) to the body's h (seed
   eqs. 7, 11: Ia ẋ'_P + ha = W_{B/A,P}). Mee^-1 through its LDL^T factors (Lee): with
   W = L^-1 M_er, M_re Mee^-1 M_er = W^T D^-1 W, symmetric and PSD by construction.
   The load values of the geometric stiffness K_eff = Kee + Σ_c λ_c KG_c (docs eq. G2, §6;
   titop_flex's comment): a_P - g with a_P = v̇ + ω x v (ω x v = -(v x ω) known from the state,
   v̇ from the last pass), α from the last pass, ω_i ω_j; a node case: the component of the
   wrench applied on the body at node k, R_a components (the known wrenches, plus a tree
   child's from the last pass). Pass 0 takes v̇ = α = 0 and no child's wrench; titop_eval
   repeats the sweep with the values of the last pass until they stop changing the elastic
   forces (flex_loads). Each pass holds them fixed: M_P* stays SPD. */
static void flex_bias(const titop_model *m, real_t *data, int f, const real_t *x,
                      const real_t *in, int pass)
{
    const titop_flex *F = &m->flex[f];
    const titop_body *B = &m->bodies[F->body];
    bodydata *d = body_data(data, F->body);
    const int n = F->n, nk = F->nnodes - 1;
    real_t *Ms = flex_rec(m, data, f), *Y = Ms + 36, *z = Y + 6 * n;
    real_t *known = flex_loads_block(m, data, f), *child = known + 6 * nk, *accp = child + 6 * nk;
    real_t *lamv = accp + 6, *M0 = lamv + F->ncases, *Y0 = M0 + 36, *z0 = Y0 + 6 * n;
    const real_t *h0 = z0 + n, *G = h0 + 6, *v = d->tw, *w = d->tw + 3;
    if (pass == 0)
        flex_base(m, data, f, x, in);
    real_t g[3], ga[3], vxw[3];
    copy_d(B->gravity, g, 3);
    mtv3(d->R, g, ga); /* [g]_{R_a} */
    cross3(v, w, vxw);
    real_t lam[12] = {-vxw[0] - ga[0], -vxw[1] - ga[1], -vxw[2] - ga[2], 0.0, 0.0, 0.0,
                      w[0] * w[0], w[1] * w[1], w[2] * w[2], w[0] * w[1], w[1] * w[2],
                      w[0] * w[2]};
    if (pass > 0)
        for (int a = 0; a < 6; a++)
            lam[a] += accp[a];
    for (int c = 0; c < F->ncases; c++) {
        const int code = F->cases[c];
        if (code >= TITOP_FLEX_NODE)
            lamv[c] = known[code - TITOP_FLEX_NODE] + child[code - TITOP_FLEX_NODE];
        else
            lamv[c] = code >= 0 ? lam[code] : (real_t)0.0;
    }
    for (int l = 0; l < n; l++) /* z = z_0 - Σ_c λ_c KG_c q (λ_c = 0 for dead cases) */
        z[l] = z0[l];
    for (int c = 0; c < F->ncases; c++)
        if (lamv[c] != 0.0)
            for (int l = 0; l < n; l++)
                z[l] -= lamv[c] * G[(size_t)n * c + l];
    real_t *reuse = flex_reuse(m, data, f);
    *reuse = pass > 0 && B->nports > 0 && flex_subtree_fixed(m, F->body, f);
    if (RE(*reuse) != 0.0) { /* flex_condense reuses pass 0's condensation: z raw */
        for (int r = 0; r < 6; r++)
            d->h[r] += h0[r];
        return;
    }
    if (pass > 0 && B->nports == 0) { /* M_P* and Y = Mee^-1 M_er kept from pass 0 */
        for (int r = 0; r < 6; r++) { /* M_re Mee^-1 z = Y^T z */
            real_t b = h0[r];
            for (int l = 0; l < n; l++)
                b += Y[6 * l + r] * z[l];
            d->h[r] += b;
        }
        flex_lower(F->Lee, n, z, 1);
        flex_upper(F->Lee, n, z, 1);
        return;
    }
    for (int r = 0; r < 36; r++)
        Ms[r] = M0[r];
    for (int r = 0; r < 6 * n; r++)
        Y[r] = Y0[r];
    if (B->nports > 0) { /* children at its nodes: M_rr, M_er, z_0 raw for flex_condense */
        for (int r = 0; r < 6; r++)
            d->h[r] += h0[r];
        return;
    }
    /* W = L^-1 M_er, t = L^-1 z; M_P* = M_rr - W^T D^-1 W, M_re Mee^-1 z = W^T D^-1 t */
    for (int c = 0; c < 6; c++)
        flex_lower(F->Lee, n, Y + c, 6);
    flex_lower(F->Lee, n, z, 1);
    real_t bz[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    for (int l = 0; l < n; l++) {
        double dl = F->Lee[n * l + l];
        for (int r = 0; r < 6; r++) {
            bz[r] += Y[6 * l + r] * z[l] / dl;
            for (int c = 0; c <= r; c++)
                Ms[6 * r + c] -= Y[6 * l + r] * Y[6 * l + c] / dl;
        }
    }
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < r; c++)
            Ms[6 * c + r] = Ms[6 * r + c];
    for (int r = 0; r < 6; r++)
        d->h[r] += h0[r] + bz[r];
    /* Y = Mee^-1 M_er, z = Mee^-1 (f_e - h_e - K_eff q - De q̇) for q̈ = z - Y ẋ'_P (T2) */
    for (int c = 0; c < 6; c++)
        flex_upper(F->Lee, n, Y + c, 6);
    flex_upper(F->Lee, n, z, 1);
}

/* q̈ = z - Y ẋ'_P (docs eq. T2) of part f, its body's acceleration known */
static void flex_accel(const titop_model *m, real_t *data, int f)
{
    const int n = m->flex[f].n;
    real_t *Y = flex_rec(m, data, f) + 36, *z = Y + 6 * n, *qdd = z + n;
    const real_t *acc = body_data(data, m->flex[f].body)->acc;
    for (int l = 0; l < n; l++) {
        real_t s = z[l];
        for (int c = 0; c < 6; c++)
            s -= Y[6 * l + c] * acc[c];
        qdd[l] = s;
    }
}

/* |real part|, |imaginary part| of a value (the imaginary part: 0 in the double build) */
static double re_abs(real_t v) { return fabs(RE(v)); }
#if TITOP_COMPLEX
static double im_abs(real_t v) { return fabs(cimag(v)); }
#else
static double im_abs(real_t v)
{
    (void)v;
    return 0.0;
}
#endif

/* After a pass of the sweep, the load values of part f that depend on its solution (docs §6,
   "What the C core does"): the tree children's wrenches on the body at its nodes, W_j = -Rt
   (Ma_j a_j + ba_j) (R_a components; a_j the node's acceleration, port_acceleration) and the
   body's acceleration ẋ'_P (v̇ and α of the cases ax..alz), stored for the next pass
   (flex_bias). Whether their change Δλ moves the elastic forces by at most 1e-13 of their
   size, |Σ_c Δλ_c KG_c q| <= 1e-13 (|Kee q| + Σ_c |λ_c| |KG_c q|) (max norms; the real and the
   imaginary parts each against their own, so that a complex-step derivative converges too):
   returns 1 (real parts) + 2 (imaginary parts; always in the double build), or -1 if a value is
   not finite (the passes diverged). Exact when q = 0: KG q = 0, the pass's solution does not
   depend on them. Raises *ratio to the real parts' change against their size (flex_next). */
static int flex_loads(const titop_model *m, real_t *data, int f, const real_t *x, int pass,
                      double *ratio)
{
    const titop_flex *F = &m->flex[f];
    const titop_body *B = &m->bodies[F->body];
    const int n = F->n, nk = F->nnodes - 1;
    const real_t *q = x + F->x0;
    real_t *known = flex_loads_block(m, data, f), *child = known + 6 * nk, *accp = child + 6 * nk;
    const real_t *lamv = accp + 6, *acc = body_data(data, F->body)->acc;
    const real_t *G = lamv + F->ncases + 42 + 7 * (size_t)n;
    real_t dacc[6];
    for (int a = 0; a < 6; a++) { /* ẋ'_P: the cases ax..alz move by its change */
        dacc[a] = acc[a] - (pass > 0 ? accp[a] : (real_t)0.0);
        accp[a] = acc[a];
    }
    for (int k = 0; k < B->nports; k++) { /* the tree children's wrenches on the body */
        const titop_port *P = &m->ports[B->port0 + k];
        if (P->child < 0)
            continue;
        const bodydata *c = body_data(data, P->child);
        const portdata *pd = port_data(m, data, B->port0 + k);
        real_t ac[6], wN[6];
        port_acceleration(m, data, B->port0 + k, ac);
        mv6(c->Ma, ac, wN);
        for (int r = 0; r < 6; r++)
            wN[r] = -(wN[r] + c->ba[r]);
        mv3(pd->Rt, wN, child + 6 * k);
        mv3(pd->Rt, wN + 3, child + 6 * k + 3);
    }
    real_t *dl = (real_t *)G + (size_t)n * F->ncases; /* Δλ_c */
    real_t *dz = dl + F->ncases, *are = dz + n, *aim = are + n;
    for (int l = 0; l < n; l++) { /* Σ_c Δλ_c KG_c q and the scales, per row */
        real_t kq = 0.0;
        for (int k = 0; k < n; k++)
            kq += F->Kee[n * l + k] * q[k];
        dz[l] = 0.0;
        are[l] = re_abs(kq);
        aim[l] = im_abs(kq);
    }
    for (int c = 0; c < F->ncases; c++) {
        const int code = F->cases[c];
        dl[c] = 0.0;
        if (code >= TITOP_FLEX_NODE)
            dl[c] = known[code - TITOP_FLEX_NODE] + child[code - TITOP_FLEX_NODE] - lamv[c];
        else if (code >= 0 && code < 6)
            dl[c] = dacc[code];
        const real_t lc = lamv[c] + dl[c];
        if (lc == 0.0 && dl[c] == 0.0) /* a dead case (flex_live): KG_c q not formed */
            continue;
        const double lr = re_abs(lc), li = im_abs(lc);
        for (int l = 0; l < n; l++) {
            const real_t g = G[(size_t)n * c + l];
            dz[l] += dl[c] * g;
            are[l] += lr * re_abs(g);
            aim[l] += lr * im_abs(g) + li * re_abs(g);
        }
    }
    double dre = 0.0, dim = 0.0, sre = 0.0, sim = 0.0;
    int finite = 1;
    for (int l = 0; l < n; l++) {
        finite &= r_isfinite(dz[l]) && isfinite(RE(are[l])) && isfinite(RE(aim[l]));
        dre = fmax(dre, re_abs(dz[l]));
        dim = fmax(dim, im_abs(dz[l]));
        sre = fmax(sre, RE(are[l]));
        sim = fmax(sim, RE(aim[l]));
    }
    if (!finite)
        return -1;
    if (dre > 0.0) /* the change against the size, real parts (flex_next's rate) */
        *ratio = fmax(*ratio, sre > 0.0 ? dre / sre : INFINITY);
    return (dre <= 1e-13 * sre) + 2 * (dim <= 1e-13 * sim);
}

/* The iterated load values (flex_next), per part f in the order of its load cases: the body's
   acceleration ẋ'_P component code (a case ax..alz, code < 6: flex_bias) and component code -
   TITOP_FLEX_NODE of a tree child's wrench at node (code - TITOP_FLEX_NODE) / 6 + 1 (a node
   case of a port with a tree child), once each (a repeated case: its first). Where the value
   of case c of part f is kept: its offset from the children's wrenches of the load values'
   block (flex_loads_block; ẋ'_P follows them), or -1 if it is not one. */
static int flex_iterated(const titop_model *m, int f, int c)
{
    const titop_flex *F = &m->flex[f];
    const titop_body *B = &m->bodies[F->body];
    const int code = F->cases[c];
    int o = -1;
    if (code >= 0 && code < 6)
        o = 6 * (F->nnodes - 1) + code;
    else if (code >= TITOP_FLEX_NODE) {
        const int k = (code - TITOP_FLEX_NODE) / 6;
        if (k < B->nports && m->ports[B->port0 + k].child >= 0)
            o = code - TITOP_FLEX_NODE;
    }
    for (int e = 0; e < c && o >= 0; e++)
        if (F->cases[e] == code)
            o = -1;
    return o;
}

/* v <- the iterated load values (flex_iterated) from raw, the copy of the parts' blocks of
   children's wrenches and ẋ'_P (flex_raw); raw and v NULL: neither. Returns their number, or
   with which >= 0 the body of the part of value `which`. */
static int flex_exchange(const titop_model *m, const real_t *raw, real_t *v, int which)
{
    int i = 0;
    size_t r = 0;
    for (int f = 0; f < m->nflex; f++) {
        const int nk = m->flex[f].nnodes - 1;
        for (int c = 0; c < m->flex[f].ncases; c++) {
            const int o = flex_iterated(m, f, c);
            if (o < 0)
                continue;
            if (i == which)
                return m->flex[f].body;
            if (raw && v)
                v[i] = raw[r + o];
            i++;
        }
        r += 6 * (size_t)nk + 6;
    }
    return which >= 0 ? -1 : i;
}

/* ix <- the positions in data of the iterated values (flex_iterated), as real_t; then
   flex_move gathers (put = 0: v <- data) or scatters (put = 1: data <- v) them by those */
static void flex_index(const titop_model *m, real_t *data, real_t *ix)
{
    int i = 0;
    for (int f = 0; f < m->nflex; f++) {
        const real_t *child = flex_loads_block(m, data, f) + 6 * (m->flex[f].nnodes - 1);
        for (int c = 0; c < m->flex[f].ncases; c++) {
            const int o = flex_iterated(m, f, c);
            if (o >= 0)
                ix[i++] = (double)(child + o - data);
        }
    }
}

static void flex_move(real_t *data, const real_t *ix, int dim, real_t *v, int put)
{
    for (int i = 0; i < dim; i++) {
        real_t *p = data + (size_t)RE(ix[i]);
        if (put)
            *p = v[i];
        else
            v[i] = *p;
    }
}

/* raw <- the parts' blocks of children's wrenches and ẋ'_P (flex_loads_block: 6 (nnodes - 1)
   + 6 values each; flex_next keeps pass 0's), or their total size with raw NULL */
static size_t flex_raw(const titop_model *m, real_t *data, real_t *raw)
{
    size_t r = 0;
    for (int f = 0; f < m->nflex; f++) {
        const int nk = m->flex[f].nnodes - 1;
        if (raw) {
            const real_t *child = flex_loads_block(m, data, f) + 6 * nk;
            for (int k = 0; k < 6 * nk + 6; k++)
                raw[r + k] = child[k];
        }
        r += 6 * (size_t)nk + 6;
    }
    return r;
}

/* the scales s_i of the iterated values (flex_next): |b_i| (real parts), at least 1e-3 of the
   largest |b_j|, 1 if b = 0 */
static void flex_scales(const real_t *b, int dim, real_t *s)
{
    double bmax = 0.0;
    for (int j = 0; j < dim; j++)
        bmax = fmax(bmax, fabs(RE(b[j])));
    for (int j = 0; j < dim; j++) {
        const double v = fmax(fabs(RE(b[j])), 1e-3 * bmax);
        s[j] = v > 0.0 ? v : 1.0;
    }
}

/* LU factors of the n x n matrix A (row-major, in place) with partial pivoting on the real
   parts (complex-step safe: the pivots' choice does not depend on the imaginary parts; the
   row swapped with row k in piv[k]). Returns -1, or the column k whose pivot is at most
   1e-12 of A's largest entry (real parts) or not finite: A (near) singular. */
static int flex_lu(real_t *A, real_t *piv, int n)
{
    double amax = 0.0;
    for (int r = 0; r < n * n; r++)
        amax = fmax(amax, fabs(RE(A[r])));
    for (int k = 0; k < n; k++) {
        int p = k;
        for (int r = k + 1; r < n; r++)
            if (fabs(RE(A[n * r + k])) > fabs(RE(A[n * p + k])))
                p = r;
        piv[k] = (double)p;
        for (int c = 0; c < n && p != k; c++) {
            real_t t = A[n * k + c];
            A[n * k + c] = A[n * p + c];
            A[n * p + c] = t;
        }
        const real_t d = A[n * k + k];
        if (!(fabs(RE(d)) > 1e-12 * amax) || !r_isfinite(d) || !isfinite(amax))
            return k;
        for (int r = k + 1; r < n; r++) {
            const real_t l = A[n * r + k] / d;
            A[n * r + k] = l;
            for (int c = k + 1; c < n; c++)
                A[n * r + c] -= l * A[n * k + c];
        }
    }
    return -1;
}

/* b <- A^-1 b by flex_lu's factors */
static void flex_lu_solve(const real_t *A, const real_t *piv, int n, real_t *b)
{
    for (int k = 0; k < n; k++) {
        const int p = (int)RE(piv[k]);
        real_t t = b[k];
        b[k] = b[p];
        b[p] = t;
    }
    for (int r = 0; r < n; r++)
        for (int c = 0; c < r; c++)
            b[r] -= A[n * r + c] * b[c];
    for (int r = n - 1; r >= 0; r--) {
        for (int c = r + 1; c < n; c++)
            b[r] -= A[n * r + c] * b[c];
        b[r] /= A[n * r + r];
    }
}

/* The passes' progress in one evaluation (titop_eval) */
typedef struct flexiter {
    int pass;     /* the pass just done, from 0 */
    int probe;    /* -1: plain passes; 0 <= probe < dim: the probe pass of value probe; dim:
                     passes with the solution */
    int refine;   /* passes with the solution */
    double ratio; /* the last plain pass's change against the size (flex_loads) */
    int imag;     /* the last pass settled the real parts, not the imaginary ones */
    int dim;      /* the number of iterated values (flex_exchange), -1 until needed */
} flexiter;

/* After pass it->pass, whose load values did not settle (flex_loads), sets the load values of
   the next pass (docs/flexible.md §6 "The passes"). The pass map y -> Φ(y) of the iterated
   values y (flex_iterated; dim of them, all parts together) is exactly affine, Φ(y) = A y + b:
   they enter the elastic right-hand sides only, through -Σ_c λ_c KG_c q (flex_bias), and the
   sweep is linear in the right-hand sides. Plain passes y <- Φ(y) converge at the rate ρ(A);
   after TITOP_FLEX_PLAIN of them they go on only while the measured rate r_k / r_(k-1) of
   their change r (flex_loads) predicts settling within dim + 1 passes (the solve's cost).
   Else the exact solve: b = Φ(0) (pass 0's results, kept), one probe pass per value with
   y = s_i e_i (s_i: flex_scales) for the column A s_i e_i = Φ(s_i e_i) - b, then (I - Â) ẑ =
   S^-1 b with Â = S^-1 A S (S = diag s, unit-free), LU with partial pivoting on real parts
   (flex_lu), y = S ẑ, a pass with y; if that pass does not settle (rounding), iterative
   refinement y += S (I - Â)^-1 S^-1 (Φ(y) - y), at most TITOP_FLEX_REFINE passes. All
   operations analytic on real_t (complex step: the derivative of the solution is exact),
   decisions on real parts. Only the imaginary parts unsettled (it->imag, complex build): the
   plain passes go on (the rate test skipped). Returns 0 (sweep again), or 1 (TITOP_UNSETTLED;
   *bad: the body) if I - A is (near) singular (a body near buckling), the refinement does not
   settle, or the iterated values are none. */
static int flex_next(const titop_model *m, real_t *data, flexiter *it, double ratio, int *bad)
{
    real_t *raw = flex_rec(m, data, m->nflex);
    if (it->pass == 0) /* Φ(0): pass 0's values, all of them (cheaper than picking) */
        flex_raw(m, data, raw);
    if (it->dim < 0 && (it->pass >= TITOP_FLEX_PLAIN - 1 || it->probe >= 0))
        it->dim = flex_exchange(m, NULL, NULL, -1);
    const int dim = it->dim;
    real_t *b = raw + flex_raw(m, NULL, NULL), *y = b + dim, *w = y + dim, *sc = w + dim;
    real_t *piv = sc + dim, *ix = piv + dim, *A = ix + dim;
    if (it->probe < 0) {
        const double rate = it->pass > 0 ? ratio / it->ratio : 0.0;
        int plain = it->pass + 1 < TITOP_FLEX_PASSES;
        if (it->pass >= TITOP_FLEX_PLAIN - 1 && !it->imag) { /* ratio rate^(dim + 1) */
            double left = ratio;
            for (int k = 0; k <= dim && left > 1e-13; k++)
                left *= rate;
            plain = plain && rate < 1.0 && left <= 1e-13;
        }
        it->ratio = ratio;
        if (plain) {
            it->pass++;
            return 0;
        }
        if (dim == 0)
            return 1;
        flex_exchange(m, raw, b, -1); /* b = Φ(0) */
        flex_index(m, data, ix);
        flex_scales(b, dim, sc);
        it->probe = 0;
    } else if (it->probe < dim) { /* column probe of Â: (Φ(s_p e_p) - b)_j / s_j */
        const int p = it->probe;
        flex_move(data, ix, dim, w, 0);
        for (int j = 0; j < dim; j++)
            A[dim * j + p] = (j == p ? 1.0 : 0.0) - (w[j] - b[j]) / sc[j];
        it->probe++;
        if (it->probe == dim) { /* (I - Â) ẑ = S^-1 b, y = S ẑ */
            int k = flex_lu(A, piv, dim);
            if (k >= 0) {
                *bad = flex_exchange(m, NULL, NULL, k);
                return 1;
            }
            for (int j = 0; j < dim; j++)
                y[j] = b[j] / sc[j];
            flex_lu_solve(A, piv, dim, y);
            for (int j = 0; j < dim; j++)
                y[j] *= sc[j];
            flex_move(data, ix, dim, y, 1);
            it->pass++;
            return 0;
        }
    } else { /* refinement: y += S (I - Â)^-1 S^-1 (Φ(y) - y) */
        if (++it->refine > TITOP_FLEX_REFINE)
            return 1;
        flex_move(data, ix, dim, w, 0);
        for (int j = 0; j < dim; j++)
            w[j] = (w[j] - y[j]) / sc[j];
        flex_lu_solve(A, piv, dim, w);
        for (int j = 0; j < dim; j++)
            y[j] += sc[j] * w[j];
        flex_move(data, ix, dim, y, 1);
        it->pass++;
        return 0;
    }
    for (int j = 0; j < dim; j++) /* the next probe: y = s_p e_p */
        w[j] = j == it->probe ? sc[j] : 0.0;
    flex_move(data, ix, dim, w, 1);
    it->pass++;
    return 0;
}

static int sweep(const titop_model *m, real_t *data, const real_t *in, int full)
{
    for (int i = m->nbodies - 1; i >= 0; i--)
        if (backward_step(m, data, i))
            return 1 + i;
    for (int i = 0; i < m->nbodies; i++)
        if (forward_step(m, data, i, in, NULL, full))
            return 1 + i;
    return 0;
}

/* rotation vector θ (rad, |θ| <= π) of q_ref^-1 q in the child's frame (MuJoCo's mju_subQuat
   of q and q_ref), q [w, x, y, z] not necessarily unit, q_ref finite and not zero */
static void ball_spring_angle(const double *r, const real_t *q, real_t *th)
{
    real_t w = r[0] * q[0] + r[1] * q[1] + r[2] * q[2] + r[3] * q[3];
    real_t v[3] = {r[0] * q[1] - q[0] * r[1] - (r[2] * q[3] - r[3] * q[2]),
                   r[0] * q[2] - q[0] * r[2] - (r[3] * q[1] - r[1] * q[3]),
                   r[0] * q[3] - q[0] * r[3] - (r[1] * q[2] - r[2] * q[1])};
    if (RE(w) < 0.0) { /* the shorter way round */
        w = -w;
        for (int k = 0; k < 3; k++)
            v[k] = -v[k];
    }
    real_t s2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    real_t f;
    if (RE(s2) >= 1e-24 * RE(w * w)) {
        real_t sn = r_sqrt(s2);
        f = 2.0 * r_atan2(sn, w) / sn;
    } else
        f = 2.0 / w; /* 2 atan2(s, w) / s to O(s^2 / w^2) */
    for (int k = 0; k < 3; k++)
        th[k] = f * v[k];
}

/* The spring of a free joint body or a rigid root (titop_body.stiffness, MuJoCo's free joint
   in mj_springdamper), its kinematics done: -k θ on ω (θ of q_ref^-1 q, the body's frame) and
   the force -k (r - r_ref) at P, r = [OP]_{R_b} (free joint: the force in R_a is
   -k P_{a/b}^T (r - r_ref)) or [IP]_{R_i} (rigid root: -k P_{b/i}^T (IP - r_ref)), added to the
   body's effort (a rigid root's: the wrench applied at P, R_a; eval adds it to h). */
static void free_spring(const titop_model *m, real_t *data, int i, const real_t *x)
{
    const titop_body *B = &m->bodies[i];
    if (B->stiffness == 0.0 || B->inverse || (B->kind != TITOP_FREE && B->kind != TITOP_RIGID))
        return;
    bodydata *d = body_data(data, i);
    const real_t *xs = x + B->x0;
    real_t dr[3], f[3], th[3];
    for (int k = 0; k < 3; k++)
        dr[k] = xs[k] - B->spring_pos[k];
    mtv3(B->kind == TITOP_FREE ? d->E : d->R, dr, f); /* into the body's frame R_a */
    ball_spring_angle(B->spring_ref, xs + 3, th);
    for (int k = 0; k < 3; k++) {
        d->effort[k] -= B->stiffness * f[k];
        d->effort[3 + k] -= B->stiffness * th[k];
    }
}

int TITOP_FN(eval)(const titop_model *m, double *data_d, double t, const double *x_d,
                   const double *in_d, int full, double *dx_d, int *bad_body)
{
    real_t *data = (real_t *)data_d;
    const real_t *x = (const real_t *)x_d;
    const real_t *in = (const real_t *)in_d;
    real_t *dx = (real_t *)dx_d;
    int n = m->nbodies;
    (void)t;
    if (bad_body)
        *bad_body = -1;
    for (int k = 0; k < m->nx; k++)
        if (!r_isfinite(x[k]))
            goto nonfinite_state;
    for (int k = 0; k < m->nin; k++)
        if (!r_isfinite(in[k]))
            goto nonfinite_input;
    /* with flexible parts, passes until their solution-dependent load values settle
       (flex_loads, flex_next; pass 0 without them) */
    flexiter it = {0, -1, 0, 0.0, 0, -1};
again:
    /* efforts: inputs, then the joint laws */
    for (int i = 0; i < n; i++) {
        const titop_body *B = &m->bodies[i];
        bodydata *d = body_data(data, i);
        if (B->nv && !B->inverse)
            for (int k = 0; k < B->nv; k++)
                d->effort[k] = B->in0 >= 0 ? in[B->in0 + k] : 0.0;
        if (B->damping != 0.0 && !B->inverse) /* ball, free, rigid root: -d u (-d x'_P) */
            for (int k = 0; k < B->nv; k++)
                d->effort[k] -= B->damping * x[B->x0 + B->nq + k];
        if (B->stiffness != 0.0 && !B->inverse && B->kind == TITOP_SPHERICAL) {
            real_t th[3]; /* ball: -k θ (titop_body.stiffness) */
            ball_spring_angle(B->spring_ref, x + B->x0, th);
            for (int k = 0; k < 3; k++)
                d->effort[k] -= B->stiffness * th[k];
        }
    }
    for (int l = 0; l < m->nlaws; l++) {
        const titop_law *Lw = &m->laws[l];
        const titop_body *S = &m->bodies[Lw->src];
        real_t q, qd;
        if (S->inverse) {
            qd = in[S->in0 + 1];
            q = in[S->in0 + 2];
        } else {
            q = x[S->x0];
            qd = x[S->x0 + 1];
        }
        body_data(data, Lw->dst)->effort[0] += spring_damper(Lw, q, qd); /* + its input */
    }
    /* pre-loop: kinematics (parents first), known port wrenches, biases */
    for (int i = 0; i < n; i++) {
        body_kinematics(m, data, i, x, in, NULL);
        if (m->bodies[i].flex >= 0) /* its nodes, before its children (docs §6) */
            flex_kinematics(m, data, m->bodies[i].flex, x);
        free_spring(m, data, i, x);
    }
    for (int j = 0; j < m->nports; j++)
        if (m->ports[j].child < 0) {
            portdata *pd = port_data(m, data, j);
            for (int k = 0; k < 6; k++)
                pd->kv[k] = m->ports[j].w0 >= 0 ? in[m->ports[j].w0 + k] : 0.0;
        }
    for (int c = 0; c < m->nclosures; c++)
        closure_wrenches(m, data, c);
    for (int i = 0; i < n; i++) {
        body_bias(m, data, i, in);
        if (m->bodies[i].kind == TITOP_RIGID) { /* a rigid root's damping, spring: applied at P */
            bodydata *d = body_data(data, i);
            for (int k = 0; k < 6; k++)
                d->h[k] -= d->effort[k];
        }
    }
    for (int f = 0; f < m->nflex; f++)
        flex_bias(m, data, f, x, in, it.pass);
    /* the algebraic loop: backward, then forward sweep; with mimic joints, the constraint
       efforts from that sweep's accelerations and a second sweep with them (titop_mimic) */
    int sb = sweep(m, data, in, full && !m->nmimics);
    if (!sb && m->nmimics) {
        int f = mimic_efforts(m, data);
        if (f >= 0) {
            if (bad_body)
                *bad_body = f;
            return TITOP_SINGULAR;
        }
        sb = sweep(m, data, in, full);
    }
    if (sb) {
        if (bad_body)
            *bad_body = sb - 1;
        return TITOP_SINGULAR;
    }
    if (m->nflex > 0) { /* the load values of the geometric stiffness (docs §6, flex_loads) */
        int moved = -1, imag = -1, diverged = 0;
        double ratio = 0.0;
        for (int f = 0; f < m->nflex; f++) {
            int r = flex_loads(m, data, f, x, it.pass, &ratio);
            if ((r < 0 || !(r & 1)) && moved < 0)
                moved = m->flex[f].body;
            if ((r < 0 || !(r & 2)) && imag < 0)
                imag = m->flex[f].body;
            diverged |= r < 0;
        }
        /* the real parts settled, the imaginary ones not (complex build): plain passes go on
           (flex_next); after the exact solve, 2 refinement passes are enough (its imaginary
           part exact but for rounding, which its refinement cannot reduce below the noise of
           Φ's evaluation where the imaginary parts cancel) */
        if (moved < 0 && imag >= 0 && !(it.probe >= 0 && it.refine >= 2))
            moved = imag, it.imag = 1;
        else
            it.imag = 0;
        if (moved >= 0) {
            if (!diverged && !flex_next(m, data, &it, ratio, &moved))
                goto again;
            if (bad_body) /* I - A (near) singular: the coupling too strong (near buckling) */
                *bad_body = moved;
            return TITOP_UNSETTLED;
        }
    }
    for (int f = 0; f < m->nflex; f++) { /* q̈ (flex_accel in the forward sweep) */
        const real_t *qdd = flex_rec(m, data, f) + 36 + 7 * m->flex[f].n;
        for (int k = 0; k < m->flex[f].n; k++)
            if (!r_isfinite(qdd[k])) {
                if (bad_body)
                    *bad_body = m->flex[f].body;
                return TITOP_NONFINITE;
            }
    }
    for (int i = 0; i < n; i++) {
        const titop_body *B = &m->bodies[i];
        bodydata *d = body_data(data, i);
        int bad = 0;
        for (int k = 0; k < 6; k++)
            bad |= !r_isfinite(d->acc[k]);
        for (int k = 0; k < B->nv; k++)
            bad |= !r_isfinite(d->alpha[k]) || !r_isfinite(d->effort[k]);
        if (B->kind == TITOP_GROUND || B->kind == TITOP_IMPOSED)
            for (int k = 0; k < 6; k++)
                bad |= !r_isfinite(d->out[k]);
        if (bad) {
            if (bad_body)
                *bad_body = i;
            return TITOP_NONFINITE;
        }
    }
    if (dx)
        for (int i = 0; i < n; i++)
            state_rate(m, data, i, x, dx);
    return TITOP_OK;

nonfinite_state:
    if (bad_body)
        for (int i = 0; i < n; i++) {
            const titop_body *B = &m->bodies[i];
            if (B->x0 < 0)
                continue;
            int ns = B->kind == TITOP_RIGID ? 13 : B->nq + B->nv;
            for (int k = 0; k < ns; k++)
                if (!r_isfinite(x[B->x0 + k]))
                    *bad_body = i;
            if (*bad_body >= 0)
                break;
        }
    if (bad_body) /* the states of a flexible part: its body */
        for (int f = 0; f < m->nflex && *bad_body < 0; f++)
            for (int k = 0; k < 2 * m->flex[f].n; k++)
                if (!r_isfinite(x[m->flex[f].x0 + k]))
                    *bad_body = m->flex[f].body;
    return TITOP_NONFINITE;
nonfinite_input:
    if (bad_body)
        for (int i = 0; i < n && *bad_body < 0; i++) {
            const titop_body *B = &m->bodies[i];
            int ranges[3][2] = {{B->in0, B->kind == TITOP_IMPOSED ? 18
                                         : B->inverse       ? 3 * B->nv
                                                            : B->nv},
                                {B->pm0, 18},
                                {-1, 0}};
            for (int r = 0; r < 2; r++)
                if (ranges[r][0] >= 0 && (r == 0 || B->parent == TITOP_PARENT_INPUT))
                    for (int k = 0; k < ranges[r][1]; k++)
                        if (!r_isfinite(in[ranges[r][0] + k]))
                            *bad_body = i;
            for (int j = 0; j < B->next; j++)
                for (int k = 0; k < 6; k++)
                    if (!r_isfinite(in[m->exts[B->ext0 + j].w0 + k]))
                        *bad_body = i;
            for (int j = B->port0; j < B->port0 + B->nports; j++)
                if (m->ports[j].w0 >= 0)
                    for (int k = 0; k < 6; k++)
                        if (!r_isfinite(in[m->ports[j].w0 + k]))
                            *bad_body = i;
        }
    return TITOP_NONFINITE;
}

#if !TITOP_COMPLEX
/* ---- model set-up and helpers: double build only ---- */

size_t titop_data_size(const titop_model *m)
{
    size_t s = flex_offset(m);
    for (int f = 0; f < m->nflex; f++)
        s += flex_rec_size(m, &m->flex[f]);
    /* flex_next's work: pass 0's values, b, y, w, the scales, the pivots, the positions,
       I - Â */
    const size_t d = (size_t)flex_exchange(m, NULL, NULL, -1);
    return s + flex_raw(m, NULL, NULL) + 6 * d + d * d;
}

void titop_mimic_project(const titop_model *m, double *x)
{
    for (int a = 0; a < m->nmimics; a++) { /* q_f = r q_l + offset, q̇_f = r q̇_l */
        const titop_mimic *c = &m->mimics[a];
        const titop_body *F = &m->bodies[c->follower], *Ld = &m->bodies[c->leader];
        x[F->x0] = c->multiplier * x[Ld->x0] + c->offset;
        x[F->x0 + 1] = c->multiplier * x[Ld->x0 + 1];
    }
}

void titop_data_layout(const titop_model *m, titop_layout *L)
{
    (void)m;
    L->body_stride = BODY_STRIDE;
    L->R = offsetof(bodydata, R) / sizeof(real_t);
    L->ip = offsetof(bodydata, ip) / sizeof(real_t);
    L->tw = offsetof(bodydata, tw) / sizeof(real_t);
    L->acc = offsetof(bodydata, acc) / sizeof(real_t);
    L->acc_parent = offsetof(bodydata, accp) / sizeof(real_t);
    L->alpha = offsetof(bodydata, alpha) / sizeof(real_t);
    L->effort = offsetof(bodydata, effort) / sizeof(real_t);
    L->wrench_parent = offsetof(bodydata, wP) / sizeof(real_t);
    L->out = offsetof(bodydata, out) / sizeof(real_t);
    L->h = offsetof(bodydata, h) / sizeof(real_t);
    L->E = offsetof(bodydata, E) / sizeof(real_t);
    L->p = offsetof(bodydata, p) / sizeof(real_t);
    L->ports = (size_t)m->nbodies * BODY_STRIDE;
    L->port_stride = PORT_STRIDE;
    L->port_w = offsetof(portdata, w) / sizeof(real_t);
    L->mimic = m->nmimics > 0 ? mimic_offset(m) : 0;
    L->mimic_stride = RESP_STRIDE;
    L->flex = m->nflex > 0 ? flex_offset(m) : 0;
}

size_t titop_map_size(const titop_model *m, int i, int *ka, int *ne)
{
    const titop_body *B = &m->bodies[i];
    size_t n = (size_t)B->nports;
    int a = B->kind == TITOP_RIGID ? 6 : B->inverse ? 0 : B->nv;
    int e = B->kind <= TITOP_IMPOSED ? 6 : B->nv;
    if (ka)
        *ka = a;
    if (ne)
        *ne = e;
    return (size_t)(a * a + 7 * a + 42 + 7 * e + e * a) + n * (42 + 6 * a + 6 * e);
}

void titop_cut_deflection(const double *l, const double *r, double *dx, double *dxd)
{
    double Rlr[9];
    cut_deflection(l, l + 6, l + 9, r, r + 6, r + 9, Rlr, dx, dxd);
}
void titop_rotation_vector(const double R[9], double out[3]) { rotation_vector(R, out); }
void titop_euler_dcm(const double theta[3], double out[9]) { euler_dcm(theta, out); }
void titop_dcm_euler(const double R[9], double out[3]) { dcm_euler(R, out); }
void titop_euler_quaternion(const double theta[3], double out[4])
{
    euler_quaternion(theta, out);
}
void titop_quaternion_dcm(const double q[4], double out[9]) { quaternion_dcm(q, out); }
void titop_quaternion_rate(const double q[4], const double omega[3], double out[4])
{
    quaternion_rate(q, omega, out);
}

void titop_joint_position(int kind, const double *q, double *p)
{
    double R[9];
    if (kind == TITOP_SPHERICAL) {
        quaternion_dcm(q, R);
        dcm_euler(R, p);
    } else if (kind == TITOP_FREE) {
        p[0] = q[0];
        p[1] = q[1];
        p[2] = q[2];
        quaternion_dcm(q + 3, R);
        dcm_euler(R, p + 3);
    } else {
        p[0] = q[0];
    }
}

void titop_joint_coordinates(int kind, const double *p, double *q)
{
    coordinates_from_position(kind, p, q);
}

/* ---- parameter checks: codes and the failing quantities, no I/O (the callers word them) ---- */

double titop_rotation_error(const double P[9])
{
    for (int k = 0; k < 9; k++)
        if (!isfinite(P[k]))
            return INFINITY;
    double err = 0.0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s = -(double)(i == j);
            for (int k = 0; k < 3; k++)
                s += P[3 * k + i] * P[3 * k + j];
            if (!(fabs(s) <= err)) /* an overflow (inf) counts */
                err = fabs(s);
        }
    double det = P[0] * (P[4] * P[8] - P[5] * P[7]) - P[1] * (P[3] * P[8] - P[5] * P[6]) +
                 P[2] * (P[3] * P[7] - P[4] * P[6]);
    if (!(fabs(det - 1.0) <= err))
        err = isnan(det) ? INFINITY : fabs(det - 1.0); /* inf - inf: NaN */
    return err;
}

/* the power of two 2^e with s < 2^e <= 2 s (s > 0 finite): dividing by it is exact, so that a
   computation on x / 2^e is the same computation on x, scaled, without overflow or underflow */
static double pow2_above(double s)
{
    int e;
    (void)frexp(s, &e);
    return ldexp(1.0, e);
}

/* eigenvalues of a symmetric 3x3 matrix, ascending: cyclic Jacobi rotations (Golub & Van Loan,
   Matrix Computations, 8.5), accurate to rounding for every eigenvalue, a repeated one (a rod's,
   a sphere's) included, where a closed form loses half the digits */
void titop_symmetric_eigenvalues(const double A[9], double e[3])
{
    static const int P[3] = {0, 0, 1}, Q[3] = {1, 2, 2};
    double a[9];
    memcpy(a, A, sizeof a);
    for (int sweep = 0; sweep < 50; sweep++) {
        if (a[1] == 0.0 && a[2] == 0.0 && a[5] == 0.0)
            break;
        for (int k = 0; k < 3; k++) {
            int p = P[k], q = Q[k], r = 3 - p - q;
            double apq = a[3 * p + q], app = a[3 * p + p], aqq = a[3 * q + q];
            if (apq == 0.0)
                continue;
            if (sweep > 3 && fabs(app) + 100.0 * fabs(apq) == fabs(app) &&
                fabs(aqq) + 100.0 * fabs(apq) == fabs(aqq)) {
                a[3 * p + q] = a[3 * q + p] = 0.0; /* below rounding of both diagonal entries */
                continue;
            }
            double theta = (aqq - app) / (2.0 * apq);
            double t = fabs(theta) > 1e150 ? 0.5 / theta
                                           : (theta >= 0.0 ? 1.0 : -1.0) /
                                                 (fabs(theta) + sqrt(theta * theta + 1.0));
            double c = 1.0 / sqrt(t * t + 1.0), sn = t * c;
            double arp = a[3 * r + p], arq = a[3 * r + q];
            a[3 * p + p] = app - t * apq;
            a[3 * q + q] = aqq + t * apq;
            a[3 * p + q] = a[3 * q + p] = 0.0;
            a[3 * r + p] = a[3 * p + r] = c * arp - sn * arq;
            a[3 * r + q] = a[3 * q + r] = sn * arp + c * arq;
        }
    }
    e[0] = a[0], e[1] = a[4], e[2] = a[8];
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (e[j] < e[i]) {
                double t = e[i];
                e[i] = e[j];
                e[j] = t;
            }
}

int titop_check_inertia(const double In[9], int definite, double reference, double moments[3])
{
    double scale = 0.0, A[9];
    for (int k = 0; k < 9; k++) {
        if (!isfinite(In[k])) {
            moments[0] = moments[1] = moments[2] = NAN;
            return TITOP_CHECK_NOT_SYMMETRIC;
        }
        if (fabs(In[k]) > scale)
            scale = fabs(In[k]);
    }
    /* every threshold relative to the inertia's own largest entry, or to the reference (the
       body's m |PB|^2) where larger: a body scaled in mass and length (I in kg m^2) passes or
       fails as the original does; a zero inertia (a point mass) is symmetric and
       semi-definite, not definite, and so is its rounding noise (-5e-20 kg m^2 on a link of
       0.5 kg at 3 cm) */
    double big = reference >= 0.0 && isfinite(reference) && reference > scale ? reference : scale;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (!(fabs(In[3 * i + j] - In[3 * j + i]) <= 1e-9 * big))
                return TITOP_CHECK_NOT_SYMMETRIC;
    /* the eigenvalues of I / 2^e (entries at most 1 in magnitude) times 2^e: exactly the
       eigenvalues of I computed directly, without overflow near the double range */
    double p = scale > 0.0 ? pow2_above(scale) : 1.0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            A[3 * i + j] = (0.5 * In[3 * i + j] + 0.5 * In[3 * j + i]) / p;
    titop_symmetric_eigenvalues(A, moments);
    for (int k = 0; k < 3; k++)
        moments[k] *= p;
    double tol = 1e-12 * scale, tol_big = 1e-12 * big;
    if (!(moments[0] >= -tol_big))
        return TITOP_CHECK_NOT_PSD;
    if (definite && !(moments[0] > tol)) /* a root's own inertia: D_P is inverted */
        return TITOP_CHECK_NOT_PD;
    if (moments[2] > tol_big && moments[0] + moments[1] < moments[2] * (1.0 - 1e-9))
        return TITOP_CHECK_TRIANGLE;
    return TITOP_CHECK_OK;
}

/* Frobenius norm of the 3x3 block of a 6x6 matrix at (r0, c0), without overflow */
static double block_norm(const double D[36], int r0, int c0)
{
    double big = 0.0, s = 0.0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (fabs(D[6 * (r0 + i) + c0 + j]) > big)
                big = fabs(D[6 * (r0 + i) + c0 + j]);
    if (!(big > 0.0))
        return big;
    double p = pow2_above(big);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double x = D[6 * (r0 + i) + c0 + j] / p;
            s += x * x;
        }
    return p * sqrt(s);
}

/* Euclidean norm of n values, without overflow or underflow */
static double safe_norm(const double *v, int n, int stride)
{
    double big = 0.0, s = 0.0;
    for (int k = 0; k < n; k++)
        if (fabs(v[stride * k]) > big)
            big = fabs(v[stride * k]);
    if (!(big > 0.0) || !isfinite(big))
        return big;
    double p = pow2_above(big);
    for (int k = 0; k < n; k++) {
        double x = v[stride * k] / p;
        s += x * x;
    }
    return p * sqrt(s);
}

int titop_check_apparent_inertia(const double *S, const double D[36], int nv,
                                 const double *armature, double J[36])
{
    double L[36], tol[6] = {0}, arm[6] = {0};
    int finite = 1;
    for (int k = 0; k < 36; k++)
        finite = finite && isfinite(D[k]);
    for (int a = 0; a < nv && armature; a++) {
        arm[a] = armature[a];
        finite = finite && isfinite(arm[a]);
    }
    for (int a = 0; a < nv; a++) /* J = S^T D S + diag(armature), eq. (20) */
        for (int b = 0; b < nv; b++) {
            double s = a == b ? arm[a] : 0.0;
            for (int r = 0; r < 6; r++)
                for (int q = 0; q < 6; q++)
                    s += S[nv * r + a] * D[6 * r + q] * S[nv * q + b];
            J[nv * a + b] = L[nv * a + b] = s;
            finite = finite && isfinite(s);
        }
    if (!finite) /* out of range: titop_check_dynamic_model names the parameter */
        return TITOP_CHECK_SINGULAR;
    /* the body's own inertia along each dof, from the blocks of D_P (eq. 4): m (D_tt), m |PB|
       (D_tw), about |I_B| + m |PB|^2 (D_ww); zero for a point mass on a revolute axis, whose
       J_r (eq. 20) is then exactly zero too */
    double ntt = block_norm(D, 0, 0), ntw = block_norm(D, 0, 3), nww = block_norm(D, 3, 3);
    for (int a = 0; a < nv; a++) {
        double t = safe_norm(S + a, 3, nv), w = safe_norm(S + 3 * nv + a, 3, nv);
        double own = t * t * ntt + 2.0 * t * w * ntw + w * w * nww + fabs(arm[a]);
        if (!(J[nv * a + a] > 1e-12 * own)) /* zero (e.g. a point mass on a revolute axis) */
            return TITOP_CHECK_SINGULAR;
        tol[a] = 1e-12 * J[nv * a + a];
    }
    /* LDL^T (the solver's own factorization): every pivot above 1e-12 of its diagonal entry
       (each dof in its own unit: kg, kg m^2) */
    if (ldl_factor_each(L, nv, tol))
        return TITOP_CHECK_SINGULAR;
    return TITOP_CHECK_OK;
}

int titop_check_dynamic_model(double mass, const double inertia[9], const double com[3],
                              double D[36])
{
    double Db[36] = {0}, Dp[36];
    /* m = 0: a massless joint body (its subtree is judged by the sweep); the callers refuse it
       for a root */
    if (!(mass == 0.0 || (mass >= TITOP_RANGE_MIN && mass <= TITOP_RANGE_MAX)))
        return TITOP_CHECK_MASS;
    double imax = 0.0;
    for (int k = 0; k < 9; k++) {
        if (!(fabs(inertia[k]) <= TITOP_RANGE_MAX))
            return TITOP_CHECK_INERTIA_RANGE;
        imax = fabs(inertia[k]) > imax ? fabs(inertia[k]) : imax;
    }
    double c = safe_norm(com, 3, 1);
    if (!(c <= sqrt(TITOP_RANGE_MAX)))
        return TITOP_CHECK_COM;
    /* D_P = τ_BP^T diag(m 1, I_B) τ_BP, BP = -PB (eq. 4), as titop_model_init builds it */
    for (int k = 0; k < 3; k++) {
        Db[7 * k] = mass;
        for (int j = 0; j < 3; j++)
            Db[6 * (3 + k) + 3 + j] = inertia[3 * k + j];
    }
    double bp[3] = {-com[0], -com[1], -com[2]};
    sym_transport(bp, Db, Dp);
    if (D)
        memcpy(D, Dp, sizeof Dp);
    for (int k = 0; k < 36; k++)
        if (!(fabs(Dp[k]) <= TITOP_RANGE_MAX)) {
            /* m |PB| or m |PB|^2 (with I_B) out of range (then |PB| > 1, m |PB|^2 >= m |PB|):
               the larger of I_B and m |PB|^2 (inf when it overflows), then of m and |PB|^2 */
            double c2 = c * c;
            if (imax >= mass * c2)
                return TITOP_CHECK_INERTIA_RANGE;
            return mass >= c2 ? TITOP_CHECK_MASS : TITOP_CHECK_COM;
        }
    return TITOP_CHECK_OK;
}

int titop_check_axis(const double a[3], double unit[3])
{
    double big = 0.0;
    for (int k = 0; k < 3; k++) {
        if (!isfinite(a[k]))
            return TITOP_CHECK_AXIS;
        big = fabs(a[k]) > big ? fabs(a[k]) : big;
    }
    if (!(big > 0.0)) /* a direction: only the zero vector has none */
        return TITOP_CHECK_AXIS;
    /* a / 2^e first: no overflow of the squares (1e200) nor underflow (1e-200), and the same
       result as a / |a| computed directly wherever that does not overflow */
    double p = pow2_above(big), s[3] = {a[0] / p, a[1] / p, a[2] / p};
    double n = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
    for (int k = 0; k < 3; k++)
        unit[k] = s[k] / n;
    return TITOP_CHECK_OK;
}
#endif

#if !TITOP_COMPLEX
#include <stdio.h>

size_t titop_flex_doubles(int n, int ncases, int nnodes)
{
    size_t N = n > 0 ? (size_t)n : 0, c = ncases > 0 ? (size_t)ncases : 0;
    size_t k = nnodes > 0 ? (size_t)nnodes : 0;
    return 13 + 6 * N + 3 * N * N + 9 * N + 9 * N * N + 3 * N * N + c * N * N + 3 * k +
           6 * k * N;
}

void titop_flex_from_row(titop_flex *f, const double *row, double *Lee)
{
    size_t N = f->n > 0 ? (size_t)f->n : 0;
    f->mass = row;
    f->first_moment = row + 1;
    f->inertia = row + 4;
    row += 13;
    f->Ct = row;
    f->Cr = row + 3 * N;
    row += 6 * N;
    f->Mee = row;
    f->Kee = row + N * N;
    f->De = row + 2 * N * N;
    row += 3 * N * N;
    f->J1 = row;
    row += 9 * N;
    f->J2 = row;
    row += 9 * N * N;
    f->Cr1 = row;
    row += 3 * N * N;
    f->KG = row;
    row += (size_t)(f->ncases > 0 ? f->ncases : 0) * N * N;
    f->node_positions = row;
    f->node_shapes = row + 3 * (size_t)(f->nnodes > 0 ? f->nnodes : 0);
    f->Lee = Lee;
}

static int all_finite(const double *a, size_t k)
{
    for (size_t i = 0; i < k; i++)
        if (!isfinite(a[i]))
            return 0;
    return 1;
}

/* symmetric to 1e-9 of its largest entry, finite; *scale = its largest entry */
static int flex_symmetric(const double *A, int n, double *scale)
{
    double s = 0.0;
    if (!all_finite(A, (size_t)n * n))
        return 0;
    for (int k = 0; k < n * n; k++)
        if (fabs(A[k]) > s)
            s = fabs(A[k]);
    *scale = s;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (fabs(A[n * i + j] - A[n * j + i]) > 1e-9 * s)
                return 0;
    return 1;
}

int titop_check_flex(const titop_flex *f)
{
    int n = f->n;
    if (n < 1 || f->ncases < 0 || f->nnodes < 0)
        return TITOP_FLEX_SIZE;
    size_t N = (size_t)n;
    if (!(isfinite(f->mass[0]) && f->mass[0] > 0.0))
        return TITOP_FLEX_MASS;
    if (!all_finite(f->first_moment, 3) || !all_finite(f->inertia, 9) ||
        !all_finite(f->Ct, 3 * N) || !all_finite(f->Cr, 3 * N) || !all_finite(f->J1, 9 * N) ||
        !all_finite(f->J2, 9 * N * N) || !all_finite(f->Cr1, 3 * N * N) ||
        !all_finite(f->KG, (size_t)f->ncases * N * N) ||
        !all_finite(f->node_positions, 3 * (size_t)f->nnodes) ||
        !all_finite(f->node_shapes, 6 * (size_t)f->nnodes * N))
        return TITOP_FLEX_FINITE;
    for (int c = 0; c < f->ncases; c++)
        if (f->cases[c] < TITOP_FLEX_ZERO || f->cases[c] >= TITOP_FLEX_NODE + 6 * (f->nnodes - 1))
            return TITOP_FLEX_CASE;
    double s;
    if (!flex_symmetric(f->Kee, n, &s))
        return TITOP_FLEX_KEE_SYM;
    /* PSD: Kee + 1e-9 s I has positive pivots (rigid-body modes' zero eigenvalues pass) */
    memcpy(f->Lee, f->Kee, N * N * sizeof(double));
    for (int k = 0; k < n; k++)
        f->Lee[(n + 1) * k] += 1e-9 * (s > 0.0 ? s : 1.0);
    if (ldl_factor(f->Lee, n, 0.0))
        return TITOP_FLEX_KEE_PSD;
    if (!flex_symmetric(f->De, n, &s))
        return TITOP_FLEX_DE;
    if (!flex_symmetric(f->Mee, n, &s))
        return TITOP_FLEX_MEE_SYM;
    memcpy(f->Lee, f->Mee, N * N * sizeof(double));
    if (!(s > 0.0) || ldl_factor(f->Lee, n, 1e-12 * s))
        return TITOP_FLEX_MEE_PD;
    return TITOP_FLEX_OK; /* Lee: the LDL^T factors of Mee */
}

const char *titop_status_text(int status)
{
    switch (status) {
    case TITOP_OK:
        return "ok";
    case TITOP_SINGULAR:
        return "singular joint inertia";
    case TITOP_NONFINITE:
        return "a value is not finite (inputs or states out of range)";
    case TITOP_BAD_MODEL:
        return "the model does not pass its checks";
    case TITOP_UNSETTLED:
        return "the load values of a flexible body's geometric stiffness did not settle (no "
               "fixed point of the passes: the body near buckling?)";
    default:
        return "unknown status";
    }
}

const char *titop_flex_parameter(int code)
{
    static const char *names[] = {"", "'n_modes'", "'mass'", "'invariants'", "matrix 'Mee'",
                                  "matrix 'Mee'", "matrix 'Kee'", "matrix 'Kee'", "matrix 'De'",
                                  "'load_cases'"};
    return code > 0 && code <= TITOP_FLEX_CASE ? names[code] : "";
}

const char *titop_flex_rule(int code)
{
    static const char *rules[] = {"",
                                  "must be at least 1",
                                  "must be finite and > 0",
                                  "has non-finite entries",
                                  "not symmetric",
                                  "not positive definite",
                                  "not symmetric",
                                  "not positive semi-definite",
                                  "not symmetric or not finite",
                                  "has an unknown load case code"};
    return code > 0 && code <= TITOP_FLEX_CASE ? rules[code] : "";
}

static int bad(int i, int *bad_body, char *msg, size_t size, const char *text)
{
    if (bad_body)
        *bad_body = i;
    if (msg && size)
        snprintf(msg, size, "%s", text);
    return TITOP_BAD_MODEL;
}

int titop_model_init(titop_model *m, int *bad_body, char *msg, size_t size)
{
    static const int NQ[8] = {7, 0, 0, 0, 1, 1, 4, 7};
    static const int NV[8] = {6, 0, 0, 0, 1, 1, 3, 6};
    if (bad_body)
        *bad_body = -1;
    if (msg && size)
        msg[0] = '\0';
    for (int j = 0; j < m->nports; j++)
        m->ports[j].owner = -1;
    for (int i = 0; i < m->nbodies; i++)
        m->bodies[i].flex = -1;
    for (int f = 0; f < m->nflex; f++) { /* flexible parts (titop_flex) */
        int i = m->flex[f].body;
        if (i < 0 || i >= m->nbodies)
            return bad(-1, bad_body, msg, size, "flexible part: body out of range");
        if (m->bodies[i].flex >= 0)
            return bad(i, bad_body, msg, size, "a body carries one flexible part at most");
        if (m->bodies[i].kind == TITOP_GROUND)
            return bad(i, bad_body, msg, size, "Ground cannot be flexible");
        m->bodies[i].flex = f;
    }
    for (int i = 0; i < m->nbodies; i++) {
        titop_body *B = &m->bodies[i];
        if (B->kind < 0 || B->kind > TITOP_FREE)
            return bad(i, bad_body, msg, size, "unknown body kind");
        int root = B->kind <= TITOP_IMPOSED;
        if (root && B->parent != TITOP_NO_PARENT)
            return bad(i, bad_body, msg, size, "a root body cannot have a parent");
        if (!root && !(B->parent == TITOP_PARENT_INPUT || (B->parent >= 0 && B->parent < i)))
            return bad(i, bad_body, msg, size, "a joint body needs a parent listed before it");
        if (B->parent >= 0 && (B->slot < 0 || B->slot >= m->bodies[B->parent].nports))
            return bad(i, bad_body, msg, size, "parent slot out of range");
        if (B->port0 < 0 || B->nports < 0 || B->port0 + B->nports > m->nports)
            return bad(i, bad_body, msg, size, "child ports out of range");
        if (B->ext0 < 0 || B->next < 0 || B->ext0 + B->next > m->nexts)
            return bad(i, bad_body, msg, size, "external wrenches out of range");
        B->nq = NQ[B->kind];
        B->nv = NV[B->kind];
        for (int k = 0; k < 6; k++) /* the rotor inertia of each joint speed (none on a root) */
            if (!(isfinite(B->armature[k]) && B->armature[k] >= 0.0) ||
                ((root || k >= B->nv) && B->armature[k] != 0.0))
                return bad(i, bad_body, msg, size, "armature must be >= 0 and finite, one per "
                                                   "joint speed (none on a root)");
        int sprung = B->kind == TITOP_SPHERICAL || B->kind == TITOP_FREE ||
                     B->kind == TITOP_RIGID; /* the bodies with damping, stiffness */
        if (!(isfinite(B->damping) && B->damping >= 0.0) ||
            (B->damping != 0.0 && (B->inverse || !sprung)))
            return bad(i, bad_body, msg, size, "damping must be >= 0 and finite (only on a "
                                               "forward spherical or free joint body or a "
                                               "free-flying root)");
        if (!(isfinite(B->stiffness) && B->stiffness >= 0.0) ||
            (B->stiffness != 0.0 && (B->inverse || !sprung)))
            return bad(i, bad_body, msg, size, "stiffness must be >= 0 and finite (only on a "
                                               "forward spherical or free joint body or a "
                                               "free-flying root)");
        if (B->stiffness != 0.0 && B->kind != TITOP_SPHERICAL &&
            !(isfinite(B->spring_pos[0]) && isfinite(B->spring_pos[1]) &&
              isfinite(B->spring_pos[2])))
            return bad(i, bad_body, msg, size, "spring_position must be finite");
        if (B->stiffness != 0.0) {
            double n2 = 0.0;
            for (int k = 0; k < 4; k++)
                n2 += B->spring_ref[k] * B->spring_ref[k];
            if (!(isfinite(n2) && fabs(n2 - 1.0) <= 1e-6))
                return bad(i, bad_body, msg, size, "spring_ref must be a unit quaternion "
                                                   "[w, x, y, z]");
        }
        if (B->inverse && (root || B->nv == 0))
            return bad(i, bad_body, msg, size, "only a joint body with a dof can be inverse");
        if (B->kind == TITOP_RIGID) {
            if (B->x0 < 0 || B->x0 + 13 > m->nx)
                return bad(i, bad_body, msg, size, "states out of range");
        } else if (B->nv && !B->inverse) {
            if (B->x0 < 0 || B->x0 + B->nq + B->nv > m->nx)
                return bad(i, bad_body, msg, size, "states out of range");
        } else {
            B->x0 = -1;
        }
        int nin = B->kind == TITOP_IMPOSED ? 18 : B->inverse ? 3 * B->nv : B->nv;
        if (B->kind == TITOP_IMPOSED || (B->nv && B->inverse)) {
            if (B->in0 < 0 || B->in0 + nin > m->nin)
                return bad(i, bad_body, msg, size, "inputs out of range");
        } else if (B->in0 >= 0 && B->in0 + nin > m->nin) {
            return bad(i, bad_body, msg, size, "inputs out of range");
        }
        if (B->parent == TITOP_PARENT_INPUT && (B->pm0 < 0 || B->pm0 + 18 > m->nin))
            return bad(i, bad_body, msg, size, "parent motion input out of range");
        for (int j = B->port0; j < B->port0 + B->nports; j++) {
            if (m->ports[j].owner >= 0)
                return bad(i, bad_body, msg, size, "a child port belongs to two bodies");
            m->ports[j].owner = i;
        }
        /* D_P = τ_BP^T diag(m 1, I_B) τ_BP, BP = -PB (eq. 4) */
        double Db[36] = {0};
        if (B->kind != TITOP_GROUND) {
            if (root && !(B->mass > 0.0) && B->flex < 0)
                return bad(i, bad_body, msg, size, "the mass of a root body must be positive");
            if (!(B->mass >= 0.0)) /* a joint body: massless is valid if its subtree is not */
                return bad(i, bad_body, msg, size, "mass must be >= 0");
            for (int k = 0; k < 3; k++) {
                Db[7 * k] = B->mass;
                for (int c = 0; c < 3; c++)
                    Db[6 * (3 + k) + 3 + c] = B->inertia[3 * k + c];
            }
        }
        double bp[3] = {-B->com[0], -B->com[1], -B->com[2]};
        sym_transport(bp, Db, B->D);
        B->dscale = 0.0;
        for (int k = 0; k < 36; k++)
            if (fabs(B->D[k]) > B->dscale)
                B->dscale = fabs(B->D[k]);
        if (B->kind == TITOP_REVOLUTE) { /* P_{a0/b} K and P_{a0/b} K² of eq. (16) */
            const double *r = B->axis;
            double K[9] = {0, -r[2], r[1], r[2], 0, -r[0], -r[1], r[0], 0}, K2[9];
            mm3(K, K, K2);
            mm3(B->R0, K, B->RK);
            mm3(B->R0, K2, B->RK2);
        }
        /* motion subspace S (6 x nv), constant in R_a */
        for (int k = 0; k < 36; k++)
            B->S[k] = 0.0;
        int nv = B->nv;
        if (B->kind == TITOP_REVOLUTE)
            for (int k = 0; k < 3; k++)
                B->S[3 + k] = B->axis[k];
        else if (B->kind == TITOP_PRISMATIC)
            for (int k = 0; k < 3; k++)
                B->S[k] = B->axis[k];
        else if (B->kind == TITOP_SPHERICAL)
            for (int k = 0; k < 3; k++)
                B->S[nv * (3 + k) + k] = 1.0;
        else if (B->kind == TITOP_FREE)
            for (int k = 0; k < 6; k++)
                B->S[nv * k + k] = 1.0;
    }
    for (int j = 0; j < m->nports; j++) {
        titop_port *P = &m->ports[j];
        if (P->owner < 0)
            return bad(-1, bad_body, msg, size, "a child port belongs to no body");
        if (P->child >= 0) {
            const titop_body *C = P->child < m->nbodies ? &m->bodies[P->child] : NULL;
            if (!C || C->parent != P->owner || m->bodies[C->parent].port0 + C->slot != j)
                return bad(P->owner, bad_body, msg, size, "port and child disagree");
        } else if (P->w0 >= 0 && P->w0 + 6 > m->nin) {
            return bad(P->owner, bad_body, msg, size, "port wrench input out of range");
        }
    }
    for (int i = 0; i < m->nbodies; i++) { /* and child -> port */
        const titop_body *B = &m->bodies[i];
        if (B->parent >= 0 && m->ports[m->bodies[B->parent].port0 + B->slot].child != i)
            return bad(i, bad_body, msg, size, "its parent's port does not name it as its child");
    }
    for (int j = 0; j < m->nexts; j++) {
        if (m->exts[j].w0 < 0 || m->exts[j].w0 + 6 > m->nin)
            return bad(-1, bad_body, msg, size, "external wrench input out of range");
        m->exts[j].node = 0; /* a flexible body's below */
    }
    for (int c = 0; c < m->nclosures; c++) {
        const titop_closure *C = &m->closures[c];
        if (C->left < 0 || C->left >= m->nports || C->right < 0 || C->right >= m->nports ||
            C->left == C->right || m->ports[C->left].child >= 0 || m->ports[C->right].child >= 0)
            return bad(-1, bad_body, msg, size, "a loop closure needs two free child ports");
    }
    for (int l = 0; l < m->nlaws; l++) {
        const titop_law *L = &m->laws[l];
        if (L->src < 0 || L->src >= m->nbodies || L->dst < 0 || L->dst >= m->nbodies ||
            m->bodies[L->src].nv != 1 || m->bodies[L->dst].nv != 1 ||
            m->bodies[L->dst].inverse)
            return bad(-1, bad_body, msg, size, "a joint law needs 1-dof joint bodies");
        int code = titop_check_law(L);
        if (code != TITOP_LAW_OK) {
            if (bad_body)
                *bad_body = -1;
            if (msg && size)
                snprintf(msg, size, "joint law %d: '%s' %s", l, titop_law_parameter(code),
                         titop_law_rule(code));
            return TITOP_BAD_MODEL;
        }
    }
    for (int a = 0; a < m->nmimics; a++) {
        const titop_mimic *c = &m->mimics[a];
        int f = c->follower, l = c->leader;
        char text[160];
        if (f < 0 || f >= m->nbodies || l < 0 || l >= m->nbodies || f == l)
            return bad(f >= 0 && f < m->nbodies ? f : -1, bad_body, msg, size,
                       "a mimic joint needs a follower and a leader, two bodies of the model");
        const titop_body *F = &m->bodies[f], *Ld = &m->bodies[l];
        for (int s = 0; s < 2; s++) {
            const titop_body *B = s ? Ld : F;
            if ((B->kind != TITOP_REVOLUTE && B->kind != TITOP_PRISMATIC) || B->inverse) {
                snprintf(text, sizeof text, "mimic joint %d: its %s (body %d) must be a forward "
                         "revolute or prismatic joint body", a, s ? "leader" : "follower",
                         s ? l : f);
                return bad(f, bad_body, msg, size, text);
            }
        }
        if (F->kind != Ld->kind) {
            snprintf(text, sizeof text, "mimic joint %d: the follower (body %d) and its leader "
                     "(body %d) must be joints of the same kind", a, f, l);
            return bad(f, bad_body, msg, size, text);
        }
        if (!isfinite(c->multiplier) || !isfinite(c->offset)) {
            snprintf(text, sizeof text, "mimic joint %d: multiplier and offset must be finite",
                     a);
            return bad(f, bad_body, msg, size, text);
        }
        for (int b = 0; b < m->nmimics; b++) {
            if (b != a && m->mimics[b].follower == f) {
                snprintf(text, sizeof text, "mimic joint %d: body %d follows two leaders", a, f);
                return bad(f, bad_body, msg, size, text);
            }
            if (m->mimics[b].leader == f) {
                snprintf(text, sizeof text, "mimic joint %d: body %d is a follower and a leader "
                         "(a chain or a cycle of mimic joints)", a, f);
                return bad(f, bad_body, msg, size, text);
            }
        }
    }
    for (int f = 0; f < m->nflex; f++) {
        titop_flex *F = &m->flex[f];
        int i = F->body;
        char text[160];
        const titop_body *Bf = &m->bodies[i];
        if (Bf->nports > 0 && Bf->nports > F->nnodes - 1) {
            snprintf(text, sizeof text, "a flexible body's %d child ports need %d nodes after "
                     "the root, the reduced model has %d", Bf->nports, Bf->nports,
                     F->nnodes > 0 ? F->nnodes - 1 : 0);
            return bad(i, bad_body, msg, size, text);
        }
        if (Bf->nports > 0 && m->nmimics > 0)
            return bad(i, bad_body, msg, size, "a flexible body with child ports and mimic "
                                               "joints in one model are not supported");
        for (int k = 0; k < Bf->nports && k + 1 < F->nnodes; k++) {
            const double *pc = m->ports[Bf->port0 + k].pc, *r = F->node_positions + 3 * (k + 1);
            double e = 0.0, s = 1.0;
            for (int a = 0; a < 3; a++) {
                e = fmax(e, fabs(pc[a] - r[a]));
                s = fmax(s, fabs(r[a]));
            }
            if (!(e <= 1e-9 * s)) {
                snprintf(text, sizeof text, "a flexible body's child port %d is not at node %d "
                         "(%g m off)", k, k + 1, e);
                return bad(i, bad_body, msg, size, text);
            }
        }
        if (F->n < 1 || F->x0 < 0 || F->x0 + 2 * F->n > m->nx)
            return bad(i, bad_body, msg, size, "flexible part: states out of range");
        /* its external wrenches at nodes k >= 1 (within 1e-9 of the body's size, the largest
           node coordinate, at least 1 m): acting at the node (titop_ext.node, flex_bias) */
        double size_b = 1.0;
        for (int e = 0; e < 3 * F->nnodes; e++)
            size_b = fmax(size_b, fabs(F->node_positions[e]));
        for (int j = Bf->ext0; j < Bf->ext0 + Bf->next; j++)
            for (int k = 1; k < F->nnodes && !m->exts[j].node; k++) {
                const double *r = F->node_positions + 3 * k, *pt = m->exts[j].point;
                double e = fmax(fabs(pt[0] - r[0]), fmax(fabs(pt[1] - r[1]), fabs(pt[2] - r[2])));
                if (e <= 1e-9 * size_b)
                    m->exts[j].node = k;
            }
        int code = titop_check_flex(F); /* and Lee := LDL^T of Mee */
        if (code != TITOP_FLEX_OK) {
            snprintf(text, sizeof text, "flexible part, %s: %s", titop_flex_parameter(code),
                     titop_flex_rule(code));
            return bad(i, bad_body, msg, size, text);
        }
    }
    return TITOP_OK;
}
#else
int titop_eval_seeded(const titop_model *m, double *zwork, double t, const double *x,
                      const double *in, const double *vx, const double *vin, int full,
                      int *bad_body)
{
    const double h = TITOP_CSTEP_H;
    size_t nd = titop_data_size(m);
    real_t *zd = (real_t *)zwork;
    real_t *zx = zd + nd, *zin = zx + m->nx, *zdx = zin + m->nin;
    for (int k = 0; k < m->nx; k++)
        zx[k] = mkc(x[k], vx ? h * vx[k] : 0.0);
    for (int k = 0; k < m->nin; k++)
        zin[k] = mkc(in[k], vin ? h * vin[k] : 0.0);
    return titopz_eval(m, (double *)zd, t, (const double *)zx, (const double *)zin, full,
                       m->nx ? (double *)zdx : NULL, bad_body);
}

int titop_derivative_jvp(const titop_model *m, double *zwork, double t, const double *x,
                         const double *in, const double *vx, const double *vin, double *jdx,
                         int *bad_body)
{
    int st = titop_eval_seeded(m, zwork, t, x, in, vx, vin, 0, bad_body);
    if (st != TITOP_OK)
        return st;
    const real_t *zdx = (const real_t *)zwork + titop_data_size(m) + m->nx + m->nin;
    for (int k = 0; k < m->nx; k++)
        jdx[k] = cimag(zdx[k]) / TITOP_CSTEP_H;
    return TITOP_OK;
}
#endif
