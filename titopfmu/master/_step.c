/* The co-simulation master's communication step, compiled (titopfmu.master._step).
 *
 * Executes the program that titopfmu/master/cosim.py plans (CoSimulation._build_program and
 * _bind) for fixed communication steps, with the loop solved by Newton's method on the FMUs'
 * interface Jacobians (exact, from fmi2GetDirectionalDerivative), exactly as the Python path
 * does (CoSimulation._newton), so that both give the same results to rounding. Python keeps the
 * planning, the checks, the error messages, the recording at output points and the other modes
 * (Gauss-Seidel, variable steps, FMUs without directional derivatives); see
 * titopfmu/master/fastpath.py, which fills the plan below (a ctypes.Structure with the same
 * fields) from the master's own arrays: this file owns no memory and has no global state.
 *
 * The loop at a communication point: each body is affine in its inputs x at a fixed time,
 * y = Y_read + Mx (x - x_read). The loop equations say that every loop input z_j equals the
 * output that feeds it, z_j = y_{r(j)}. One Newton step from the current inputs z0 solves
 * (1 - A) dz = y(z0)[r] - z0 with A = d y[r] / d z assembled from the bodies' Jacobians (block
 * sparse, dense here: a few dozen unknowns), factored by LU with partial pivoting only when a
 * Jacobian was measured again. The unknowns are of several units (accelerations, forces,
 * torques): the LU works on them divided by the scales of their loop equations (powers of two,
 * so that this scaling is exact), and every test of the loop (the residual, the shares, the
 * rounding) is relative to those scales, as in CoSimulation._residual: the same decisions on a
 * system scaled in mass and length. This is linear algebra on measured maps, not physics: the
 * equations of the blocks stay in titopfmu/core/csrc and in the FMUs.
 *
 * C99, no allocation: every buffer belongs to the caller (numpy arrays of the master).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef int (*get_real_fn)(void *, const unsigned int *, size_t, double *);
typedef int (*set_real_fn)(void *, const unsigned int *, size_t, const double *);
typedef int (*do_step_fn)(void *, double, double, int);
typedef int (*set_der_fn)(void *, const unsigned int *, size_t, const int *, const double *);
typedef int (*dir_der_fn)(void *, const unsigned int *, size_t, const unsigned int *, size_t,
                          const double *, double *);

/* pi as numpy has it (np.pi) */
#define PI_ 3.14159265358979323846
/* loop.TINY: the floor of a loop equation's scale, against a division by zero only;
 * loop.ROUNDING: a relative mismatch below it is rounding */
#define TINY_ 1e-300
#define ROUNDING_ (64.0 * DBL_EPSILON)

/* error codes (err_code); Python turns each into the same CosimError as its own path */
enum { E_OK = 0, E_SET = 1, E_GET = 2, E_STEP = 3, E_DD = 4, E_CONVERGE = 5, E_SINGULAR = 6,
       E_SETDER = 7 };

/* fields of one body in plan.body (NB int64 per body) */
enum {
    B_SY, B_NY, B_SE, B_NE, B_XV, B_NX, B_NU, B_MX, B_XR, B_XCH, B_YCH,
    B_COLS, B_NCOLS, B_FEED, B_NFEED, B_COMP, NB
};
/* fields of one program step in plan.ops (NO int64 per step): a flush (channel, or -1; its
 * values gathered from V at idx[FIDX..]), a read (channel; -1: the values are in E already;
 * -2: no read), destinations (pairs src, dst in dest[DEST..]: V[dst] = values[src]), and the
 * body whose loop outputs start at YOFF of the read (or -1) */
enum { O_FCH, O_FIDX, O_RCH, O_DEST, O_NDEST, O_BODY, O_YOFF, NO };
/* fields of a channel in plan.ch: component, offset of its value references in vr, count */
enum { C_COMP, C_VR, C_N, NC };

/* Every field is 8 bytes wide (ctypes mirror in fastpath.py: keep the order). */
typedef struct {
    int64_t ncomp, nch, nbody, nops, npre, nhold, nres, ng, nang, order;
    void *const *inst;             /* ncomp: fmi2Component of each component */
    const get_real_fn *fget;       /* ncomp FMI functions each (fdd[c] NULL: none) */
    const set_real_fn *fset;
    const do_step_fn *fstep;
    const dir_der_fn *fdd;
    const int64_t *ch;             /* nch x NC */
    const unsigned int *vr;        /* value references of the channels */
    double *const *chbuf;          /* nch: each channel's value buffer */
    const int64_t *body;           /* nbody x NB */
    const int64_t *lists;          /* measured columns and feeding rows of the bodies */
    const int64_t *ops;            /* nops x NO: the pre-loop steps (npre), then the post-loop */
    const int64_t *idx;            /* positions in V of flushed values */
    const int64_t *dest;           /* (src, dst) pairs */
    const int64_t *hold;           /* nhold channels sending H over the step */
    const int64_t *res_uv, *res_y; /* nres: loop input V[res_uv] = output Y[res_y] */
    const int64_t *rb, *rr;        /* nres: body and row in its y of res_y */
    const int64_t *cb, *cc;        /* nres: body and column in its x of res_uv */
    const int64_t *g;              /* ng: positions in V of the inputs that move in a solve */
    const int64_t *ang;            /* nang: positions in V of Euler angles */
    double *V, *P, *H, *D, *Y, *E, *XR, *MX;
    double *work;                  /* nres*nres + 5*nres + 2*nY + max(ng, largest ny) */
    int64_t *piv;                  /* nres */
    int64_t *stale;                /* nbody: Jacobian to measure before the next solve */
    double *ht, *hv;               /* (order+1) times and values (ng each) of past solutions */
    int64_t nh, nY, nV;
    double t, h_prev;
    int64_t have_prev, dirty, extrapolate, forced;
    int64_t calls, updates;
    int64_t *iters;                /* out: loop iterations of each step */
    int64_t err_code, err_index, err_status, err_aux, err_where, done;
    double err_res, err_t;
    /* the polynomial coupling (extrapolate == 2: CoSimulation._polynomial_inputs) */
    int64_t degree, nhist, ndch, nmean;
    const set_der_fn *fsetder;     /* ncomp: fmi2SetRealInputDerivatives (NULL: none) */
    const int64_t *dch;            /* ndch: the hold channel whose inputs get derivatives */
    double *const *dchbuf;         /* ndch: their derivatives (slices of B) */
    const int *orders;             /* 1 for each input of the longest channel */
    const int64_t *mean;           /* nmean: positions in V held at the line's mean */
    double *B, *Vh, *Th;           /* derivatives (nV); last values (4 x nV) at times Th (4) */
    double *SY, *SV;               /* loop equations' scales at their outputs (nY), inputs (nV) */
    const int64_t *unit;           /* nres: the unit of each loop equation (plan.loop_units) */
} plan_t;

/* the work buffer: the factored (1 - A) (nres x nres), the scales it was factored with (nres),
 * the right-hand side (nres), three vectors of the residual (nres each), the predicted Y and
 * the last Y (nY each), then a column of a Jacobian or the first guess */
#define W_SCALE(p) ((p)->work + (p)->nres * (p)->nres)
#define W_RHS(p) (W_SCALE(p) + (p)->nres)
#define W_G(p) (W_RHS(p) + (p)->nres)
#define W_N(p) (W_G(p) + (p)->nres)
#define W_T(p) (W_N(p) + (p)->nres)
#define W_YP(p) (W_T(p) + (p)->nres)
#define W_TAIL(p) (W_YP(p) + 2 * (p)->nY)

static int fail(plan_t *p, int code, int64_t index, int64_t status, int64_t aux)
{
    p->err_code = code;
    p->err_index = index;
    p->err_status = status;
    p->err_aux = aux;
    p->err_t = p->t;
    return code;
}

static int send(plan_t *p, int64_t c)
{
    const int64_t *ch = p->ch + NC * c;
    set_real_fn f = p->fset[ch[C_COMP]];
    p->calls++;
    int st = f(p->inst[ch[C_COMP]], p->vr + ch[C_VR], (size_t)ch[C_N], p->chbuf[c]);
    return st > 1 ? fail(p, E_SET, c, st, 0) : 0;
}

static int receive(plan_t *p, int64_t c)
{
    const int64_t *ch = p->ch + NC * c;
    get_real_fn f = p->fget[ch[C_COMP]];
    p->calls++;
    int st = f(p->inst[ch[C_COMP]], p->vr + ch[C_VR], (size_t)ch[C_N], p->chbuf[c]);
    return st > 1 ? fail(p, E_GET, c, st, 0) : 0;
}

/* program steps [a, b): CoSimulation._run */
static int run_ops(plan_t *p, int64_t a, int64_t b)
{
    for (int64_t k = a; k < b; k++) {
        const int64_t *op = p->ops + NO * k;
        if (op[O_FCH] >= 0) {
            double *buf = p->chbuf[op[O_FCH]];
            const int64_t *ix = p->idx + op[O_FIDX];
            for (int64_t i = 0; i < p->ch[NC * op[O_FCH] + C_N]; i++)
                buf[i] = p->V[ix[i]];
            if (send(p, op[O_FCH]))
                return p->err_code;
        }
        if (op[O_RCH] == -2)
            continue;
        const double *out = p->E;
        if (op[O_RCH] >= 0) {
            if (receive(p, op[O_RCH]))
                return p->err_code;
            out = p->chbuf[op[O_RCH]];
        }
        const int64_t *d = p->dest + 2 * op[O_DEST];
        for (int64_t i = 0; i < op[O_NDEST]; i++)
            p->V[d[2 * i + 1]] = out[d[2 * i]];
        if (op[O_BODY] >= 0) {
            const int64_t *bd = p->body + NB * op[O_BODY];
            const double *o = out + op[O_YOFF];
            /* (empty buffers may be NULL: no copy of nothing) */
            if (bd[B_NY])
                memcpy(p->Y + bd[B_SY], o, (size_t)bd[B_NY] * sizeof(double));
            if (bd[B_NE])
                memcpy(p->E + bd[B_SE], o + bd[B_NY], (size_t)bd[B_NE] * sizeof(double));
            if (bd[B_NX])
                memcpy(p->XR + bd[B_XR], p->V + bd[B_XV], (size_t)bd[B_NX] * sizeof(double));
        }
    }
    return 0;
}

/* numpy's floor remainder (np.remainder), for the angles' wrap to (-pi, pi] */
static double py_mod(double a, double b)
{
    double m = fmod(a, b);
    if (m != 0.0) {
        if ((b < 0) != (m < 0))
            m += b;
    } else {
        m = copysign(0.0, b);
    }
    return m;
}

/* cosim._line_weights: the least-squares line over [0, h] of the polynomial through values at
 * the times s[0..n) (n <= 4), a + b s with a = alpha . v, b = beta . v; the line keeps the
 * polynomial's mean and first moment over the step (3-node Gauss-Legendre, exact to degree 5) */
static void line_weights(const double *s, int64_t n, double h, double *alpha, double *beta)
{
    const double r = sqrt(0.6);
    const double x[3] = {0.5 * h * (1.0 - r), 0.5 * h, 0.5 * h * (1.0 + r)};
    const double w[3] = {5.0 / 18.0, 8.0 / 18.0, 5.0 / 18.0};
    for (int64_t j = 0; j < n; j++) {
        double l[3] = {1.0, 1.0, 1.0}; /* the Lagrange polynomial of point j at the nodes */
        for (int64_t k = 0; k < n; k++)
            if (k != j)
                for (int q = 0; q < 3; q++)
                    l[q] *= (x[q] - s[k]) / (s[j] - s[k]);
        double mu = 0.0, nu = 0.0;
        for (int q = 0; q < 3; q++) {
            mu += w[q] * l[q];
            nu += w[q] * ((x[q] - 0.5 * h) * l[q]);
        }
        nu *= 12.0 / (h * h);
        alpha[j] = mu - 0.5 * h * nu;
        beta[j] = nu;
    }
}

/* CoSimulation._polynomial_inputs: each coupled input sent as a line over the step, value H and
 * derivative B, the least-squares line of the polynomial through its last values */
static int polynomial_inputs(plan_t *p, double h)
{
    size_t nv = (size_t)p->nV;
    double *V = p->V, *H = p->H, *B = p->B, *Vh = p->Vh, *Th = p->Th;
    int64_t m = p->nhist < p->degree ? p->nhist : p->degree;
    if (m == 0) {
        memcpy(H, V, nv * sizeof(double));
        memset(B, 0, nv * sizeof(double));
    } else {
        double s[5], alpha[5], beta[5];
        for (int64_t j = 0; j < m; j++)
            s[j] = Th[4 - m + j] - p->t;
        s[m] = 0.0;
        line_weights(s, m + 1, h, alpha, beta);
        for (size_t i = 0; i < nv; i++) {
            double a = 0.0, b = 0.0;
            for (int64_t j = 0; j < m; j++) {
                double d = Vh[(size_t)(4 - m + j) * nv + i] - V[i];
                a += alpha[j] * d;
                b += beta[j] * d;
            }
            H[i] = V[i] + a;
            B[i] = b;
        }
        for (int64_t k = 0; k < p->nang; k++) { /* angles: differences wrapped to (-pi, pi] */
            size_t i = (size_t)p->ang[k];
            double a = 0.0, b = 0.0;
            for (int64_t j = 0; j < m; j++) {
                double d = Vh[(size_t)(4 - m + j) * nv + i] - V[i];
                d = py_mod(d + PI_, 2.0 * PI_) - PI_;
                a += alpha[j] * d;
                b += beta[j] * d;
            }
            H[i] = V[i] + a;
            B[i] = b;
        }
        for (int64_t k = 0; k < p->nmean; k++) { /* FMUs that cannot interpolate inputs */
            size_t i = (size_t)p->mean[k];
            H[i] += 0.5 * h * B[i];
            B[i] = 0.0;
        }
    }
    if (!(p->nhist && Th[3] == p->t)) { /* the current point joins the history */
        memmove(Vh, Vh + nv, 3 * nv * sizeof(double));
        memmove(Th, Th + 1, 3 * sizeof(double));
        p->nhist = p->nhist < 4 ? p->nhist + 1 : 4;
    }
    memcpy(Vh + 3 * nv, V, nv * sizeof(double));
    Th[3] = p->t;
    for (int64_t c = 0; c < p->nhold; c++)
        if (send(p, p->hold[c]))
            return p->err_code;
    for (int64_t c = 0; c < p->ndch; c++) {
        const int64_t *ch = p->ch + NC * p->dch[c];
        p->calls++;
        int st = p->fsetder[ch[C_COMP]](p->inst[ch[C_COMP]], p->vr + ch[C_VR], (size_t)ch[C_N],
                                        p->orders, p->dchbuf[c]);
        if (st > 1)
            return fail(p, E_SETDER, c, st, 0);
    }
    return 0;
}

/* CoSimulation.do_step: inputs held at their extrapolation to mid-step (extrapolate 1), or
 * lines over the step (2), or held (0); every FMU advanced */
static int do_step(plan_t *p, double h)
{
    size_t nv = (size_t)p->nV;
    if (p->extrapolate == 2) {
        if (polynomial_inputs(p, h))
            return p->err_code;
    } else if (p->extrapolate) {
        double ratio = p->h_prev != 0.0 ? h / p->h_prev : 0.0;
        p->h_prev = h;
        if (!p->have_prev) {
            memcpy(p->P, p->V, nv * sizeof(double));
            memcpy(p->H, p->V, nv * sizeof(double));
            p->have_prev = 1;
        } else {
            for (size_t i = 0; i < nv; i++)
                p->D[i] = p->V[i] - p->P[i];
            for (int64_t k = 0; k < p->nang; k++) {
                int64_t i = p->ang[k];
                p->D[i] = py_mod(p->D[i] + PI_, 2.0 * PI_) - PI_;
            }
            memcpy(p->P, p->V, nv * sizeof(double));
            double s = 0.5 * ratio;
            for (size_t i = 0; i < nv; i++) {
                p->D[i] *= s;
                p->H[i] = p->V[i] + p->D[i];
            }
            for (int64_t c = 0; c < p->nhold; c++)
                if (send(p, p->hold[c]))
                    return p->err_code;
        }
    } else {
        memcpy(p->H, p->V, nv * sizeof(double));
    }
    for (int64_t c = 0; c < p->ncomp; c++) {
        p->calls++;
        int st = p->fstep[c](p->inst[c], p->t, h, 1);
        if (st > 1)
            return fail(p, E_STEP, c, st, 0);
    }
    return 0;
}

/* CoSimulation._guess: the polynomial through the last solutions, at t */
static void guess(plan_t *p)
{
    int64_t m = p->nh;
    if (!m)
        return;
    double *g = W_TAIL(p); /* ng values */
    for (int64_t k = 0; k < m; k++) {
        double w = 1.0;
        for (int64_t j = 0; j < m; j++)
            if (j != k)
                w *= (p->t - p->ht[j]) / (p->ht[k] - p->ht[j]);
        const double *u = p->hv + k * p->ng;
        for (int64_t i = 0; i < p->ng; i++)
            g[i] = k ? g[i] + w * u[i] : w * u[i];
    }
    for (int64_t i = 0; i < p->ng; i++)
        p->V[p->g[i]] = g[i];
}

static void remember(plan_t *p)
{
    int64_t cap = p->order + 1;
    if (p->nh && p->ht[p->nh - 1] == p->t) {
        for (int64_t i = 0; i < p->ng; i++)
            p->hv[(p->nh - 1) * p->ng + i] = p->V[p->g[i]];
        return;
    }
    if (p->nh == cap) {
        memmove(p->ht, p->ht + 1, (size_t)(cap - 1) * sizeof(double));
        memmove(p->hv, p->hv + p->ng, (size_t)((cap - 1) * p->ng) * sizeof(double));
        p->nh--;
    }
    p->ht[p->nh] = p->t;
    for (int64_t i = 0; i < p->ng; i++)
        p->hv[p->nh * p->ng + i] = p->V[p->g[i]];
    p->nh++;
}

/* np.maximum: the larger, NaN if either is */
static double nan_max(double a, double b)
{
    if (a != a || b != b)
        return a != a ? a : b;
    return a > b ? a : b;
}

/* the largest of each group of three of v (NaN if one is), over the group */
static void group_max(int64_t n, double *v)
{
    for (int64_t g = 0; g < n; g += 3) {
        double m = nan_max(nan_max(v[g], v[g + 1]), v[g + 2]);
        v[g] = v[g + 1] = v[g + 2] = m;
    }
}

/* out = max(g, |A| v) by groups (A_ji: output j's derivative in loop input i, same body) */
static void terms(const plan_t *p, const double *g, const double *v, double *out)
{
    int64_t n = p->nres;
    for (int64_t j = 0; j < n; j++) {
        const int64_t *bd = p->body + NB * p->rb[j];
        const double *row = p->MX + bd[B_MX] + p->rr[j] * bd[B_NX];
        double t = 0.0;
        for (int64_t i = 0; i < n; i++)
            t += (p->cb[i] == p->rb[j] ? fabs(row[p->cc[i]]) : 0.0) * v[i];
        out[j] = nan_max(g[j], t);
    }
    group_max(n, out);
}

/* np.minimum: the smaller, NaN if either is */
static double nan_min(double a, double b)
{
    if (a != a || b != b)
        return a != a ? a : b;
    return a < b ? a : b;
}

/* loop._fed: what each loop equation i feeds, C_i = min_j N_j / A_ji over the outputs j that
 * depend on its input (A_ji > 0), the smallest over its group (NaN if one is); for a group that
 * feeds none, infinite when the Jacobian of the body that reads it is measured (not stale), else
 * 0 (a Jacobian not measured yet, or to be measured again, says nothing) */
static void fed(const plan_t *p, const double *N, double *out)
{
    int64_t n = p->nres;
    for (int64_t i = 0; i < n; i++)
        out[i] = INFINITY;
    for (int64_t j = 0; j < n; j++) {
        const int64_t *bd = p->body + NB * p->rb[j];
        const double *row = p->MX + bd[B_MX] + p->rr[j] * bd[B_NX];
        for (int64_t i = 0; i < n; i++) {
            double a = p->cb[i] == p->rb[j] ? fabs(row[p->cc[i]]) : 0.0;
            if (a > 0.0)
                out[i] = nan_min(out[i], N[j] / a);
        }
    }
    for (int64_t i = 0; i < n; i++)
        if (out[i] == INFINITY && (p->cb[i] < 0 || p->stale[p->cb[i]]))
            out[i] = 0.0;
    for (int64_t g = 0; g < n; g += 3) {
        double m = nan_min(nan_min(out[g], out[g + 1]), out[g + 2]);
        out[g] = out[g + 1] = out[g + 2] = m;
    }
}

/* loop._unit_max: the largest of G over the equations of equation j's unit (NaN if one is) */
static double unit_max(const plan_t *p, const double *G, int64_t j)
{
    double m = 0.0;
    for (int64_t i = 0; i < p->nres; i++)
        if (p->unit[i] == p->unit[j])
            m = nan_max(m, G[i]);
    return m;
}

/* CoSimulation._residual: the largest mismatch relative to the scale of its loop equation, and
 * where. loop.scales: by groups of three of one unit, the size G (the largest |Y|), the terms
 * N = max(G, |A| max(G, |A| G)), what it feeds C (fed), the scale
 * max(largest G of its unit in the model, N rounding / tolerance, C rounding / tolerance,
 * TINY_); written at the outputs (SY) and at the inputs (SV) */
static double residual(const plan_t *p, const double *Y, double tol, int64_t *where)
{
    int64_t n = p->nres;
    *where = -1;
    if (!n)
        return 0.0;
    double *G = W_G(p), *N = W_N(p), *T = W_T(p);
    for (int64_t j = 0; j < n; j++)
        G[j] = fabs(Y[p->res_y[j]]);
    group_max(n, G);
    terms(p, G, G, T);
    terms(p, G, T, N);
    fed(p, N, T);
    double k = tol > ROUNDING_ ? ROUNDING_ / tol : 1.0;
    for (int64_t j = 0; j < n; j++) {
        double s = nan_max(nan_max(nan_max(unit_max(p, G, j), k * N[j]), k * T[j]), TINY_);
        p->SY[p->res_y[j]] = s;
        p->SV[p->res_uv[j]] = s;
    }
    double worst = -1.0;
    int64_t w = 0;
    for (int64_t j = 0; j < n; j++) {
        double d = fabs(p->V[p->res_uv[j]] - Y[p->res_y[j]]) / p->SY[p->res_y[j]];
        if (d > worst || (d != d && worst == worst)) { /* argmax: the first NaN wins */
            worst = d;
            w = j;
            if (d != d)
                break;
        }
    }
    *where = w;
    return worst;
}

/* body b's Jacobian, column by column from fmi2GetDirectionalDerivative */
static int measure(plan_t *p, int64_t b)
{
    const int64_t *bd = p->body + NB * b;
    double *Mx = p->MX + bd[B_MX];
    int64_t ny = bd[B_NY], nx = bd[B_NX], comp = bd[B_COMP];
    const unsigned int *vy = p->vr + p->ch[NC * bd[B_YCH] + C_VR];
    const unsigned int *vx = p->vr + p->ch[NC * bd[B_XCH] + C_VR];
    double *col = W_TAIL(p);
    const double one = 1.0;
    memset(Mx, 0, (size_t)(ny * nx) * sizeof(double));
    const int64_t *cols = p->lists + bd[B_COLS];
    for (int64_t c = 0; c < bd[B_NCOLS]; c++) {
        int64_t k = cols[c];
        p->calls++;
        int st = p->fdd[comp](p->inst[comp], vy, (size_t)ny, vx + k, 1, &one, col);
        if (st > 1)
            return fail(p, E_DD, b, st, k);
        for (int64_t r = 0; r < ny; r++)
            Mx[r * nx + k] = col[r];
    }
    p->updates++;
    return 0;
}

/* the power of two nearest above a loop equation's scale (1 if it is not a positive number):
 * dividing by it is exact */
static double power_of_two(double s)
{
    int e;
    if (!(s > 0.0) || !isfinite(s))
        return 1.0;
    frexp(s, &e);
    return ldexp(1.0, e);
}

/* assemble 1 - A over the unknowns divided by their equations' scales D (powers of two: the
 * matrix D^-1 (1 - A) D, entries without unit) and factor it (LU, partial pivoting) in place */
static int factor(plan_t *p)
{
    int64_t n = p->nres;
    double *A = p->work, *D = W_SCALE(p);
    for (int64_t j = 0; j < n; j++)
        D[j] = power_of_two(p->SY[p->res_y[j]]);
    for (int64_t j = 0; j < n; j++) {
        const int64_t *bd = p->body + NB * p->rb[j];
        const double *row = p->MX + bd[B_MX] + p->rr[j] * bd[B_NX];
        for (int64_t i = 0; i < n; i++)
            A[j * n + i] = (p->cb[i] == p->rb[j] ? -row[p->cc[i]] * D[i] / D[j] : 0.0)
                           + (i == j ? 1.0 : 0.0);
    }
    for (int64_t k = 0; k < n; k++) {
        int64_t m = k;
        for (int64_t i = k + 1; i < n; i++)
            if (fabs(A[i * n + k]) > fabs(A[m * n + k]))
                m = i;
        p->piv[k] = m;
        if (!(fabs(A[m * n + k]) > 0.0) || !isfinite(A[m * n + k]))
            return fail(p, E_SINGULAR, p->rb[m], 0, 0);
        if (m != k)
            for (int64_t i = 0; i < n; i++) {
                double tmp = A[k * n + i];
                A[k * n + i] = A[m * n + i];
                A[m * n + i] = tmp;
            }
        double inv = 1.0 / A[k * n + k];
        for (int64_t i = k + 1; i < n; i++) {
            double f = A[i * n + k] * inv;
            A[i * n + k] = f;
            if (f != 0.0)
                for (int64_t j = k + 1; j < n; j++)
                    A[i * n + j] -= f * A[k * n + j];
        }
    }
    return 0;
}

/* (1 - A) x = b, b in x: through the scaled factors, (D^-1 (1 - A) D) (D^-1 x) = D^-1 b */
static void lu_solve(const plan_t *p, double *x)
{
    int64_t n = p->nres;
    const double *A = p->work, *D = W_SCALE(p);
    for (int64_t k = 0; k < n; k++)
        x[k] /= D[k];
    for (int64_t k = 0; k < n; k++) {
        int64_t m = p->piv[k];
        if (m != k) {
            double tmp = x[k];
            x[k] = x[m];
            x[m] = tmp;
        }
    }
    for (int64_t i = 0; i < n; i++) {
        double s = x[i];
        for (int64_t j = 0; j < i; j++)
            s -= A[i * n + j] * x[j];
        x[i] = s;
    }
    for (int64_t i = n - 1; i >= 0; i--) {
        double s = x[i];
        for (int64_t j = i + 1; j < n; j++)
            s -= A[i * n + j] * x[j];
        x[i] = s / A[i * n + i];
    }
    for (int64_t k = 0; k < n; k++)
        x[k] *= D[k];
}

/* Yp = Y + Mx (x - x_read), body by body */
static void predict(const plan_t *p, double *Yp)
{
    for (int64_t b = 0; b < p->nbody; b++) {
        const int64_t *bd = p->body + NB * b;
        const double *Mx = p->MX + bd[B_MX], *x = p->V + bd[B_XV], *xr = p->XR + bd[B_XR];
        int64_t nx = bd[B_NX];
        for (int64_t r = 0; r < bd[B_NY]; r++) {
            double s = 0.0;
            for (int64_t k = 0; k < nx; k++)
                s += Mx[r * nx + k] * (x[k] - xr[k]);
            Yp[bd[B_SY] + r] = p->Y[bd[B_SY] + r] + s;
        }
    }
}

/* CoSimulation._newton */
static int newton(plan_t *p, double tol, int64_t max_it, int64_t *iterations)
{
    int64_t n = p->nres, where = -1;
    double *rhs = W_RHS(p), *Yp = W_YP(p), *Yold = Yp + p->nY;
    double r_pred = 0.0;
    int forced = (int)p->forced;
    double res = forced ? INFINITY : residual(p, p->Y, tol, &where);
    int64_t it = 0;
    while (!(res <= tol) || (forced && it == 0)) {
        if (it >= max_it || (it && !isfinite(res))) {
            p->err_res = res;
            p->err_where = where;
            return fail(p, E_CONVERGE, -1, 0, it);
        }
        for (int64_t b = 0; b < p->nbody; b++)
            if (p->stale[b]) {
                if (measure(p, b))
                    return p->err_code;
                p->stale[b] = 0;
                p->dirty = 1;
            }
        if (p->dirty) {
            if (factor(p))
                return p->err_code;
            p->dirty = 0;
        }
        predict(p, Yp);
        for (int64_t j = 0; j < n; j++)
            rhs[j] = Yp[p->res_y[j]] - p->V[p->res_uv[j]];
        if (it == 0 && forced) { /* the residual at the first guess, as the maps predict it */
            int64_t w;
            r_pred = residual(p, Yp, tol, &w);
        }
        lu_solve(p, rhs);
        for (int64_t j = 0; j < n; j++)
            p->V[p->res_uv[j]] += rhs[j];
        memcpy(Yold, p->Y, (size_t)p->nY * sizeof(double));
        for (int64_t b = 0; b < p->nbody; b++)
            if (send(p, p->body[NB * b + B_XCH]))
                return p->err_code;
        for (int64_t b = 0; b < p->nbody; b++) {
            const int64_t *bd = p->body + NB * b;
            if (receive(p, bd[B_YCH]))
                return p->err_code;
            const double *o = p->chbuf[bd[B_YCH]];
            memcpy(p->Y + bd[B_SY], o, (size_t)bd[B_NY] * sizeof(double));
            memcpy(p->E + bd[B_SE], o + bd[B_NY], (size_t)bd[B_NE] * sizeof(double));
        }
        it++;
        double r_prev = res;
        res = residual(p, p->Y, tol, &where);
        int refresh = res > tol && isfinite(res);
        if (refresh && it == 1 && forced)
            r_prev = r_pred;
        /* each FMU's mismatch between its outputs and their prediction by its Jacobian, at the
         * outputs that feed a loop input, relative to their equations' scales: a body whose
         * share of the next residual would stay above a tenth of the tolerance, its mismatch
         * above rounding, is measured again before the next iteration */
        double ratio = r_prev > 0.0 ? (res / r_prev < 1.0 ? res / r_prev : 1.0) : 1.0;
        for (int64_t b = 0; b < p->nbody; b++) {
            const int64_t *bd = p->body + NB * b;
            const double *Mx = p->MX + bd[B_MX];
            double *x = p->V + bd[B_XV], *xr = p->XR + bd[B_XR];
            int64_t nx = bd[B_NX], sy = bd[B_SY];
            if (refresh && bd[B_NFEED]) {
                /* as numpy's max: a NaN makes the test below false */
                double worst = 0.0;
                int nan = 0;
                const int64_t *feed = p->lists + bd[B_FEED];
                for (int64_t f = 0; f < bd[B_NFEED]; f++) {
                    int64_t r = feed[f];
                    double s = 0.0;
                    for (int64_t k = 0; k < nx; k++)
                        s += Mx[r * nx + k] * (x[k] - xr[k]);
                    double rel = fabs((p->Y[sy + r] - Yold[sy + r]) - s) / p->SY[sy + r];
                    nan |= rel != rel;
                    if (rel > worst)
                        worst = rel;
                }
                if (!nan && worst > ROUNDING_ && worst * ratio > 0.1 * tol)
                    p->stale[b] = 1;
            }
            memcpy(xr, x, (size_t)nx * sizeof(double));
        }
    }
    *iterations = it;
    return 0;
}

/* run(plan_address, n_steps, h, tolerance, max_iterations, t0, k0) -> error code (0: done);
 * the time after step k of the run is t0 + k h (CoSimulation.simulate: no drift of a sum) */
static PyObject *run(PyObject *self, PyObject *args)
{
    (void)self;
    unsigned long long address;
    Py_ssize_t n_steps, max_it, k0;
    double h, tol, t0;
    if (!PyArg_ParseTuple(args, "Knddndn", &address, &n_steps, &h, &tol, &max_it, &t0, &k0))
        return NULL;
    plan_t *p = (plan_t *)(uintptr_t)address;
    p->err_code = E_OK;
    p->done = 0;
    for (Py_ssize_t s = 0; s < n_steps; s++) {
        int64_t it = 0;
        if (do_step(p, h))
            break;
        p->t = t0 + (double)(k0 + s + 1) * h;
        guess(p);
        if (run_ops(p, 0, p->npre))
            break;
        if (newton(p, tol, max_it, &it))
            break;
        if (run_ops(p, p->npre, p->nops))
            break;
        remember(p);
        p->iters[s] = it;
        p->done = s + 1;
    }
    return PyLong_FromLong((long)p->err_code);
}

/* plan_size() -> sizeof(plan_t): fastpath.py checks its ctypes mirror against it */
static PyObject *plan_size(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    return PyLong_FromSize_t(sizeof(plan_t));
}

static PyMethodDef methods[] = {
    {"plan_size", plan_size, METH_NOARGS, "plan_size() -> the size of the plan in bytes"},
    {"run", run, METH_VARARGS,
     "run(plan_address, n_steps, h, tolerance, max_iterations, t0, k0) -> error code: "
     "n_steps communication steps of the plan that titopfmu.master.fastpath fills"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_step",
                                    "The co-simulation master's compiled communication step.",
                                    -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__step(void) { return PyModule_Create(&module); }
