/*
 * ode_check.c -- the test driver of titopfmu/fmi/native/ode.c (tests/test_ode.py builds and runs
 * it). Problems with known solutions or references, integrated through ode_advance on a
 * communication grid; results printed as "key value..." lines (%.17g: exact round trip).
 *
 *   ode_check run PROBLEM METHOD RTOL ATOL T_END DT BOUND PRINT [H_MAX]
 *       ATOL: one value, or one per state separated by commas (atol_vec);
 *       DT: communication step (0: one ode_advance to T_END); points k*DT, then T_END;
 *       BOUND 1: t_bound = T_END (solve_ivp's t_bound), 0: none; PRINT 1: every point.
 *   ode_check save PROBLEM METHOD RTOL ATOL T_END DT KSAVE
 *       saves the state at point KSAVE, goes on to T_END; loads the saved state into a fresh
 *       state (other options, a work array full of NaN) and goes on again: same results?
 *   ode_check restart METHOD RTOL ATOL T_END DT EVERY FLAGS
 *       x' = u - x, u jumping between 1 and -2 every EVERY points, ode_restart at each jump
 *       (FLAGS: 0 or ODE_KEEP_H; -1: no restart, the wrong way); prints the largest error
 *       against the exact solution.
 *   ode_check errors        every failure and its code
 *   ode_check bench PROBLEM METHOD RTOL ATOL T_END REPEAT
 *       CPU time per step, with and without the right-hand side's own time.
 *
 * PROBLEM: harmonic, kepler (eccentricity 0.9), vdp (van der Pol, mu = 5), arenstorf.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ode.h"

#define MAXN 8

typedef struct {
    const char *name;
    int n;
    double x0[MAXN];
    ode_rhs f;
} problem;

typedef struct {
    double u;           /* input of the decay problem */
    double fail_after;  /* the rhs fails (returns 7) beyond this time */
    double nan_above;   /* the rhs returns NaN once x[0] exceeds this */
    long calls;
} context;

static int harmonic(void *ctx, double t, const double *x, double *dx)
{
    (void)ctx;
    (void)t;
    dx[0] = x[1];
    dx[1] = -x[0];
    return 0;
}

static int kepler(void *ctx, double t, const double *x, double *dx)
{
    (void)ctx;
    (void)t;
    const double r2 = x[0] * x[0] + x[1] * x[1], r3 = r2 * sqrt(r2);
    dx[0] = x[2];
    dx[1] = x[3];
    dx[2] = -x[0] / r3;
    dx[3] = -x[1] / r3;
    return 0;
}

static int vdp(void *ctx, double t, const double *x, double *dx)
{
    (void)ctx;
    (void)t;
    const double mu = 5.0;
    dx[0] = x[1];
    dx[1] = mu * (1.0 - x[0] * x[0]) * x[1] - x[0];
    return 0;
}

/* [HNW] I.0 (0.1): the restricted three-body problem, a periodic (Arenstorf) orbit */
#define ARENSTORF_MU 0.012277471
static int arenstorf(void *ctx, double t, const double *x, double *dx)
{
    (void)ctx;
    (void)t;
    const double mu = ARENSTORF_MU, mup = 1.0 - mu;
    const double a = (x[0] + mu) * (x[0] + mu) + x[1] * x[1];
    const double b = (x[0] - mup) * (x[0] - mup) + x[1] * x[1];
    const double d1 = a * sqrt(a), d2 = b * sqrt(b);
    dx[0] = x[2];
    dx[1] = x[3];
    dx[2] = x[0] + 2.0 * x[3] - mup * (x[0] + mu) / d1 - mu * (x[0] - mup) / d2;
    dx[3] = x[1] - 2.0 * x[2] - mup * x[1] / d1 - mu * x[1] / d2;
    return 0;
}

static int decay(void *ctx, double t, const double *x, double *dx)
{
    (void)t;
    context *c = ctx;
    dx[0] = c->u - x[0];
    return 0;
}

/* harmonic, failing beyond fail_after, or NaN beyond nan_above */
static int flaky(void *ctx, double t, const double *x, double *dx)
{
    context *c = ctx;
    ++c->calls;
    if (t > c->fail_after) return 7;
    dx[0] = x[0] > c->nan_above ? NAN : x[1];
    dx[1] = -x[0];
    return 0;
}

static int ramp(void *ctx, double t, const double *x, double *dx)
{
    (void)t;
    context *c = ctx;
    dx[0] = x[0] > c->nan_above ? NAN : 1.0;
    return 0;
}

static int blowup(void *ctx, double t, const double *x, double *dx)
{
    (void)ctx;
    (void)t;
    dx[0] = x[0] * x[0];
    return 0;
}

static problem get_problem(const char *name)
{
    problem p;
    memset(&p, 0, sizeof p);
    p.name = name;
    if (strcmp(name, "harmonic") == 0) {
        p.n = 2;
        p.x0[0] = 1.0;
        p.f = harmonic;
    } else if (strcmp(name, "kepler") == 0) {
        const double e = 0.9;
        p.n = 4;
        p.x0[0] = 1.0 - e;
        p.x0[3] = sqrt((1.0 + e) / (1.0 - e));
        p.f = kepler;
    } else if (strcmp(name, "vdp") == 0) {
        p.n = 2;
        p.x0[0] = 2.0;
        p.f = vdp;
    } else if (strcmp(name, "arenstorf") == 0) {
        p.n = 4;
        p.x0[0] = 0.994;
        p.x0[3] = -2.00158510637908252240537862224;
        p.f = arenstorf;
    } else {
        fprintf(stderr, "unknown problem %s\n", name);
        exit(2);
    }
    return p;
}

static int get_method(const char *name)
{
    if (strcmp(name, "dop853") == 0) return ODE_DOP853;
    if (strcmp(name, "rk45") == 0) return ODE_RK45;
    fprintf(stderr, "unknown method %s\n", name);
    exit(2);
}

static void print_vec(const char *key, const double *v, int n)
{
    printf("%s", key);
    for (int i = 0; i < n; ++i) printf(" %.17g", v[i]);
    printf("\n");
}

static void print_counts(const ode_state *s)
{
    printf("steps %lld\nrejected %lld\nrhs %lld\n", s->n_steps, s->n_rejected, s->n_rhs);
}

/* the communication points: k * dt (k = 1, 2, ...) below t_end, then t_end */
static long n_points(double t_end, double dt)
{
    if (dt <= 0.0) return 1;
    long m = (long)ceil(t_end / dt - 1e-9);
    return m < 1 ? 1 : m;
}

static double point(long k, long m, double t_end, double dt)
{
    return (k >= m || dt <= 0.0) ? t_end : (double)k * dt;
}

static double *xmalloc(size_t count)
{
    double *p = malloc(count * sizeof *p);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(3);
    }
    return p;
}

static int cmd_run(char **a)
{
    problem p = get_problem(a[0]);
    ode_options o;
    ode_default_options(&o);
    o.method = get_method(a[1]);
    o.rtol = atof(a[2]);
    double atolv[MAXN];
    if (strchr(a[3], ',') != NULL) {
        char *q = a[3];
        for (int i = 0; i < p.n; ++i) {
            atolv[i] = strtod(q, &q);
            if (*q == ',') ++q;
        }
        o.atol_vec = atolv;
    } else {
        o.atol = atof(a[3]);
    }
    const double t_end = atof(a[4]), dt = atof(a[5]);
    if (atoi(a[6])) o.t_bound = t_end;
    const int print = atoi(a[7]);
    if (a[8] != NULL) o.h_max = atof(a[8]);
    double *work = xmalloc(ode_work_size(p.n)), x[MAXN];
    ode_state s;
    if (ode_init(&s, p.n, 0.0, p.x0, &o, work) != ODE_OK) return 1;
    const long m = n_points(t_end, dt);
    int rc = ODE_OK;
    for (long k = 1; k <= m && rc == ODE_OK; ++k) {
        const double tk = point(k, m, t_end, dt);
        rc = ode_advance(&s, p.f, NULL, tk, x);
        if (print && rc == ODE_OK) {
            printf("p %.17g", tk);
            print_vec("", x, p.n);
        }
    }
    printf("rc %d\n", rc);
    print_vec("x", x, p.n);
    printf("t %.17g\n", s.t_req);
    print_counts(&s);
    free(work);
    return 0;
}

/* on through points k0..k1 of m, recording them */
static int go_on(ode_state *s, const problem *p, long k0, long k1, long m, double t_end,
                 double dt, double *rec)
{
    for (long k = k0; k <= k1; ++k) {
        const int rc = ode_advance(s, p->f, NULL, point(k, m, t_end, dt), rec + (k - 1) * p->n);
        if (rc != ODE_OK) return rc;
    }
    return ODE_OK;
}

static int cmd_save(char **a)
{
    problem p = get_problem(a[0]);
    ode_options o;
    ode_default_options(&o);
    o.method = get_method(a[1]);
    o.rtol = atof(a[2]);
    o.atol = atof(a[3]);
    const double t_end = atof(a[4]), dt = atof(a[5]);
    const long ksave = atol(a[6]);
    const int n = p.n;
    const long m = n_points(t_end, dt);
    const size_t nw = ode_work_size(n), nb = ode_save_size(n);
    double *w1 = xmalloc(nw), *w2 = xmalloc(nw), *buf = xmalloc(nb);
    double *r1 = xmalloc((size_t)m * n), *r2 = xmalloc((size_t)m * n);
    ode_state s1, s2;
    ode_init(&s1, n, 0.0, p.x0, &o, w1);
    int rc = go_on(&s1, &p, 1, ksave, m, t_end, dt, r1);
    if (rc == ODE_OK) rc = ode_save(&s1, buf);
    if (rc == ODE_OK) rc = go_on(&s1, &p, ksave + 1, m, m, t_end, dt, r1);
    /* another state: other options, a work array of NaN, to be overwritten by ode_load */
    ode_options o2;
    ode_default_options(&o2);
    o2.method = o.method == ODE_DOP853 ? ODE_RK45 : ODE_DOP853;
    double zero[MAXN] = {0};
    ode_init(&s2, n, -5.0, zero, &o2, w2);
    for (size_t i = 0; i < nw; ++i) w2[i] = NAN;
    int rc2 = ode_load(&s2, buf);
    memcpy(r2, r1, (size_t)ksave * n * sizeof *r2);
    if (rc2 == ODE_OK) rc2 = go_on(&s2, &p, ksave + 1, m, m, t_end, dt, r2);
    const int same = memcmp(r1, r2, (size_t)m * n * sizeof *r1) == 0 &&
                     s1.n_steps == s2.n_steps && s1.n_rejected == s2.n_rejected &&
                     s1.n_rhs == s2.n_rhs && s1.t == s2.t && s1.h_abs == s2.h_abs;
    printf("rc %d %d\nidentical %d\nsize %zu\n", rc, rc2, same, nb);
    print_vec("x", r1 + (m - 1) * n, n);
    print_counts(&s1);
    free(w1);
    free(w2);
    free(buf);
    free(r1);
    free(r2);
    return 0;
}

static int cmd_restart(char **a)
{
    ode_options o;
    ode_default_options(&o);
    o.method = get_method(a[0]);
    o.rtol = atof(a[1]);
    o.atol = atof(a[2]);
    const double t_end = atof(a[3]), dt = atof(a[4]);
    const long every = atol(a[5]);
    const int flags = atoi(a[6]);
    double work[29], x[1], x0[1] = {0.0}, exact = 0.0, worst = 0.0;
    context c = {1.0, INFINITY, INFINITY, 0};
    ode_state s;
    ode_init(&s, 1, 0.0, x0, &o, work);
    const long m = n_points(t_end, dt);
    double t_prev = 0.0;
    int rc = ODE_OK;
    for (long k = 1; k <= m && rc == ODE_OK; ++k) {
        const double tk = point(k, m, t_end, dt);
        rc = ode_advance(&s, decay, &c, tk, x);
        exact = c.u + (exact - c.u) * exp(-(tk - t_prev)); /* x' = u - x over [t_prev, tk] */
        t_prev = tk;
        if (fabs(x[0] - exact) > worst) worst = fabs(x[0] - exact);
        if (k % every == 0) { /* the host sets another input */
            c.u = c.u == 1.0 ? -2.0 : 1.0;
            if (flags >= 0 && rc == ODE_OK) rc = ode_restart(&s, tk, x, flags);
        }
    }
    printf("rc %d\nerror %.17g\n", rc, worst);
    print_counts(&s);
    return 0;
}

#define CHECK(name, expr)                                                                     \
    do {                                                                                       \
        printf("%s %d\n", name, (int)(expr));                                                  \
    } while (0)

static int cmd_errors(void)
{
    ode_options o;
    double work[29 * 2], buf[64], x[2], x0[2] = {1.0, 0.0};
    ode_state s;
    context c = {0.0, INFINITY, INFINITY, 0};

    /* the right-hand side fails beyond t = 1 */
    ode_default_options(&o);
    o.rtol = 1e-8;
    o.atol = 1e-10;
    c.fail_after = 1.0;
    ode_init(&s, 2, 0.0, x0, &o, work);
    int rc = ode_advance(&s, flaky, &c, 3.0, x);
    CHECK("rhs_rc", rc);
    CHECK("rhs_status", s.rhs_status);
    CHECK("rhs_status_field", s.status);
    printf("rhs_t %.17g\n", s.t);
    CHECK("rhs_x_is_state", x[0] == s.x[0] && x[1] == s.x[1]);
    CHECK("rhs_x_exact", fabs(x[0] - cos(s.t)) < 1e-7 && fabs(x[1] + sin(s.t)) < 1e-7);
    CHECK("rhs_again_before", ode_advance(&s, flaky, &c, s.t * 0.5, x)); /* before t reached */
    c.fail_after = INFINITY; /* the host fixed the cause: go on */
    rc = ode_advance(&s, flaky, &c, 3.0, x);
    CHECK("rhs_resume_rc", rc);
    CHECK("rhs_resume_exact", fabs(x[0] - cos(3.0)) < 1e-7 && fabs(x[1] + sin(3.0)) < 1e-7);

    /* failure in the first evaluation */
    c.fail_after = -1.0;
    ode_init(&s, 2, 0.0, x0, &o, work);
    CHECK("rhs_first_rc", ode_advance(&s, flaky, &c, 1.0, x));
    CHECK("rhs_first_t_is_0", s.t == 0.0 && s.t_req == 0.0);
    c.fail_after = INFINITY;

    /* too many steps, then going on in further calls */
    o.max_steps = 5;
    ode_init(&s, 2, 0.0, x0, &o, work);
    int calls = 0;
    do {
        rc = ode_advance(&s, flaky, &c, 10.0, x);
        ++calls;
    } while (rc == ODE_EMAXSTEPS && calls < 1000);
    CHECK("maxsteps_first_rc", calls > 1 ? ODE_EMAXSTEPS : rc);
    CHECK("maxsteps_calls", calls);
    CHECK("maxsteps_final_rc", rc);
    CHECK("maxsteps_exact", fabs(x[0] - cos(10.0)) < 1e-7);
    o.max_steps = 100000;

    /* NaN from the right-hand side past x = 0.5 (within a step): steps shrink to nothing */
    c.nan_above = 0.5;
    double y0[1] = {0.0};
    ode_init(&s, 1, 0.0, y0, &o, work);
    rc = ode_advance(&s, ramp, &c, 2.0, x);
    CHECK("nan_rc", rc);
    printf("nan_t %.17g\n", s.t);
    CHECK("nan_x_finite", isfinite(x[0]));
    c.nan_above = INFINITY;

    /* non-finite initial state */
    y0[0] = NAN;
    ode_init(&s, 1, 0.0, y0, &o, work);
    CHECK("nan_x0_rc", ode_advance(&s, ramp, &c, 1.0, x));

    /* x' = x^2, x(0) = 1: x = 1 / (1 - t) blows up at t = 1 */
    y0[0] = 1.0;
    ode_init(&s, 1, 0.0, y0, &o, work);
    rc = ode_advance(&s, blowup, NULL, 2.0, x);
    CHECK("blowup_rc", rc);
    printf("blowup_t %.17g\n", s.t);

    /* arguments */
    ode_default_options(&o);
    CHECK("arg_n0", ode_init(&s, 0, 0.0, x0, &o, work));
    CHECK("arg_null_x0", ode_init(&s, 2, 0.0, NULL, &o, work));
    CHECK("arg_null_work", ode_init(&s, 2, 0.0, x0, &o, NULL));
    CHECK("arg_nan_t0", ode_init(&s, 2, NAN, x0, &o, work));
    o.rtol = -1.0;
    CHECK("arg_rtol", ode_init(&s, 2, 0.0, x0, &o, work));
    ode_default_options(&o);
    o.atol = 0.0;
    CHECK("arg_atol", ode_init(&s, 2, 0.0, x0, &o, work));
    ode_default_options(&o);
    double av[2] = {1e-6, -1.0};
    o.atol_vec = av;
    CHECK("arg_atol_vec", ode_init(&s, 2, 0.0, x0, &o, work));
    ode_default_options(&o);
    o.h_max = 0.0;
    CHECK("arg_h_max", ode_init(&s, 2, 0.0, x0, &o, work));
    ode_default_options(&o);
    o.method = 0;
    CHECK("arg_method", ode_init(&s, 2, 0.0, x0, &o, work));
    ode_default_options(&o);
    o.t_bound = -1.0;
    CHECK("arg_t_bound", ode_init(&s, 2, 0.0, x0, &o, work));
    ode_default_options(&o);
    o.max_steps = 0;
    CHECK("arg_max_steps", ode_init(&s, 2, 0.0, x0, &o, work));
    ode_default_options(&o);
    o.t_bound = 2.0;
    CHECK("arg_ok", ode_init(&s, 2, 0.0, x0, &o, work));
    CHECK("arg_past_bound", ode_advance(&s, harmonic, NULL, 2.5, x));
    CHECK("arg_nan_t_end", ode_advance(&s, harmonic, NULL, NAN, x));
    CHECK("arg_to_bound", ode_advance(&s, harmonic, NULL, 2.0, x));
    CHECK("arg_bound_reached", s.t == 2.0);
    CHECK("arg_backwards", ode_advance(&s, harmonic, NULL, 1.0, x));
    CHECK("arg_same_time", ode_advance(&s, harmonic, NULL, 2.0, x));
    CHECK("arg_restart_past_bound", ode_restart(&s, 3.0, x0, 0));
    CHECK("arg_restart_flags", ode_restart(&s, 1.0, x0, 8));

    /* loading */
    ode_init(&s, 2, 0.0, x0, &o, work);
    CHECK("save_size", (int)ode_save_size(2));
    ode_save(&s, buf);
    CHECK("load_ok", ode_load(&s, buf));
    buf[0] += 1.0;
    CHECK("load_magic", ode_load(&s, buf));
    buf[0] -= 1.0;
    buf[2] = 3.0;
    CHECK("load_n", ode_load(&s, buf));
    buf[2] = 2.0;
    buf[24] = NAN;
    CHECK("load_nan_x", ode_load(&s, buf));
    buf[24] = 1.0;
    buf[14] = 1.0; /* t_req beyond t */
    CHECK("load_times", ode_load(&s, buf));
    buf[14] = 0.0;
    CHECK("load_again_ok", ode_load(&s, buf));
    printf("strerror %s\n", ode_strerror(ODE_ESTEP));
    return 0;
}

static int cmd_bench(char **a)
{
    problem p = get_problem(a[0]);
    ode_options o;
    ode_default_options(&o);
    o.method = get_method(a[1]);
    o.rtol = atof(a[2]);
    o.atol = atof(a[3]);
    const double t_end = atof(a[4]);
    const long repeat = atol(a[5]);
    double *work = xmalloc(ode_work_size(p.n)), x[MAXN], dx[MAXN];
    ode_state s;
    long long steps = 0, rhs = 0;
    clock_t c0 = clock();
    for (long r = 0; r < repeat; ++r) {
        ode_init(&s, p.n, 0.0, p.x0, &o, work);
        if (ode_advance(&s, p.f, NULL, t_end, x) != ODE_OK) return 1;
        steps += s.n_steps + s.n_rejected;
        rhs += s.n_rhs;
    }
    const double total = (double)(clock() - c0) / CLOCKS_PER_SEC;
    /* the right-hand side alone, as many calls */
    volatile double sink = 0.0;
    memcpy(x, p.x0, sizeof x);
    c0 = clock();
    for (long long i = 0; i < rhs; ++i) {
        x[0] = p.x0[0] + 1e-9 * (double)(i & 1023);
        p.f(NULL, 0.0, x, dx);
        sink += dx[0];
    }
    const double f_time = (double)(clock() - c0) / CLOCKS_PER_SEC;
    printf("steps %lld\nrhs %lld\nns_per_step %.6g\nns_per_step_without_rhs %.6g\n", steps, rhs,
           1e9 * total / (double)steps, 1e9 * (total - f_time) / (double)steps);
    free(work);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 10 && strcmp(argv[1], "run") == 0) return cmd_run(argv + 2);
    if (argc >= 9 && strcmp(argv[1], "save") == 0) return cmd_save(argv + 2);
    if (argc >= 9 && strcmp(argv[1], "restart") == 0) return cmd_restart(argv + 2);
    if (argc >= 2 && strcmp(argv[1], "errors") == 0) return cmd_errors();
    if (argc >= 8 && strcmp(argv[1], "bench") == 0) return cmd_bench(argv + 2);
    fprintf(stderr, "usage: see the comment at the top of ode_check.c\n");
    return 2;
}
