/*
 * fmu_host_plan.h -- what the generic C test hosts (fmu_host_any.c for FMI 2.0, fmu3_host_any.c
 * for FMI 3.0) share: their plan file and the model-exchange integrator. No FMI type here.
 *
 * PLAN is a text file of lines:
 *     mode cs|me          how the unit runs
 *     states NX           its number of continuous states (ME; 0 for a stateless unit)
 *     f64 VR N V1 .. VN   a Real (FMI 2.0, N = 1) or Float64 (FMI 3.0: N values of an array
 *                         variable, row-major) set before initialization: a parameter, or an
 *                         input held constant over the run
 *     int VR VALUE        an Integer (Int32), a Boolean (0 or 1)
 *     bool VR VALUE
 *     steps H N           N steps of H seconds: doStep in CS; in ME the host's own classical
 *                         RK4 (plan_rk4)
 *     out VR N            an output of N values printed at the end (in the order given)
 */
#ifndef FMU_HOST_PLAN_H
#define FMU_HOST_PLAN_H

#include <stdio.h>
#include <string.h>

#define MAX_VARS 512
#define MAX_VALUES 4096
#define MAX_STATES 64

/* what PLAN says (every array sized by the constants above; checked while reading) */
typedef struct {
    int me;
    size_t nx;
    double h;
    long n;
    size_t nf, ni, nb, no, nfv, nov;
    unsigned fvr[MAX_VARS], ivr[MAX_VARS], bvr[MAX_VARS], ovr[MAX_VARS];
    size_t fcount[MAX_VARS], ocount[MAX_VARS];
    double fv[MAX_VALUES];
    int iv[MAX_VARS], bv[MAX_VARS];
} plan_t;

static int read_plan(const char *path, plan_t *p)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    char word[16];
    unsigned vr;
    size_t count;
    double x;
    int ok = 1;
    memset(p, 0, sizeof *p);
    while (ok && fscanf(f, "%15s", word) == 1) {
        if (!strcmp(word, "mode")) {
            ok = fscanf(f, "%15s", word) == 1;
            p->me = !strcmp(word, "me");
        } else if (!strcmp(word, "states")) {
            ok = fscanf(f, "%zu", &p->nx) == 1 && p->nx <= MAX_STATES;
        } else if (!strcmp(word, "steps")) {
            ok = fscanf(f, "%lf %ld", &p->h, &p->n) == 2;
        } else if (!strcmp(word, "out")) {
            ok = fscanf(f, "%u %zu", &vr, &count) == 2 && p->no < MAX_VARS &&
                 count <= MAX_VALUES - p->nov;
            if (ok) {
                p->ovr[p->no] = vr;
                p->ocount[p->no++] = count;
                p->nov += count;
            }
        } else if (!strcmp(word, "f64")) {
            ok = fscanf(f, "%u %zu", &vr, &count) == 2 && p->nf < MAX_VARS &&
                 count <= MAX_VALUES - p->nfv;
            for (size_t k = 0; ok && k < count; k++)
                ok = fscanf(f, "%lf", &p->fv[p->nfv + k]) == 1;
            if (ok) {
                p->fvr[p->nf] = vr;
                p->fcount[p->nf++] = count;
                p->nfv += count;
            }
        } else if (fscanf(f, "%u %lf", &vr, &x) == 2) {
            if (!strcmp(word, "int") && p->ni < MAX_VARS) {
                p->ivr[p->ni] = vr;
                p->iv[p->ni++] = (int)x;
            } else if (!strcmp(word, "bool") && p->nb < MAX_VARS) {
                p->bvr[p->nb] = vr;
                p->bv[p->nb++] = x != 0.0;
            } else {
                ok = 0;
            }
        } else {
            ok = 0;
        }
    }
    fclose(f);
    return ok ? 0 : 1;
}

/* the unit's state derivatives dx at (t, x); its state accepted at (t, x) after a step */
typedef int (*plan_derivatives)(void *unit, double t, const double *x, size_t nx, double *dx);
typedef int (*plan_completed)(void *unit, double t, const double *x, size_t nx);

/* p->n classical RK4 steps of p->h from x (nx states, updated): 0, or the failing call's 1 */
static int plan_rk4(const plan_t *p, void *unit, plan_derivatives f, plan_completed done,
                    double *x)
{
    const double a[4] = {0.0, 0.5, 0.5, 1.0}, w[4] = {1.0, 2.0, 2.0, 1.0};
    double y[MAX_STATES], k[4][MAX_STATES];
    size_t nx = p->nx;
    for (long i = 0; i < p->n; i++) {
        double h = p->h, t = (double)i * h;
        for (int s = 0; s < 4; s++) { /* k_s = f(t + a_s h, x + a_s h k_{s-1}) */
            for (size_t j = 0; j < nx; j++)
                y[j] = s ? x[j] + a[s] * h * k[s - 1][j] : x[j];
            if (f(unit, t + a[s] * h, y, nx, k[s]))
                return 1;
        }
        for (size_t j = 0; j < nx; j++)
            x[j] += h / 6.0 * (w[0] * k[0][j] + w[1] * k[1][j] + w[2] * k[2][j] + w[3] * k[3][j]);
        if (done(unit, (double)(i + 1) * h, x, nx))
            return 1;
    }
    return 0;
}

/* the outputs, "%.17g" separated by spaces, on one line */
static void plan_print(const double *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf(i ? " %.17g" : "%.17g", out[i]);
    printf("\n");
}

#endif
