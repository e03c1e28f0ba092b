/*
 * fmu3_host_any.c -- a generic FMI 3.0 C host (no Python in its process) for
 * tests/test_fmu_host_all.py: any FMI 3.0 FMU binary, run as a co-simulation or a
 * model-exchange unit. The FMI 2.0 counterpart is fmu_host_any.c.
 *
 *     fmu3_host_any BINARY INSTANTIATION_TOKEN RESOURCE_PATH PLAN
 *
 * PLAN is a text file of lines:
 *     mode cs|me          how the unit runs
 *     states NX           its number of continuous states (ME; 0 for a stateless unit)
 *     f64 VR N V1 .. VN   a Float64 variable (N values: an array variable, row-major) set
 *                         before initialization (a parameter, or an input held constant)
 *     i32 VR VALUE        an Int32, a Boolean (0 or 1)
 *     bool VR VALUE
 *     steps H N           N steps of H seconds: fmi3DoStep in CS; in ME the host's own
 *                         classical RK4 on fmi3GetContinuousStateDerivatives, with
 *                         fmi3CompletedIntegratorStep
 *     out VR N            an output of N values printed at the end (in the order given)
 * Prints the outputs at the end time, "%.17g" separated by spaces. Exit status: 0, or the
 * stage that failed (with the FMU's log on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>

#include "fmi3Functions.h"

#define MAX_VARS 256
#define MAX_VALUES 4096
#define MAX_STATES 64

#define F(name)                                                                                \
    name##TYPE *name = (name##TYPE *)dlsym(lib, #name);                                        \
    if (!name) {                                                                               \
        fprintf(stderr, "no %s in the binary\n", #name);                                       \
        return 2;                                                                              \
    }

static void logger(fmi3InstanceEnvironment e, fmi3Status st, fmi3String cat, fmi3String msg)
{
    (void)e;
    (void)cat;
    fprintf(stderr, "[%d] %s\n", (int)st, msg);
}

/* what PLAN says (every array sized by the constants above; checked while reading) */
typedef struct {
    int me;
    size_t nx;
    double h;
    long n;
    size_t nf, ni, nb, no, nfv, nov;
    fmi3ValueReference fvr[MAX_VARS], ivr[MAX_VARS], bvr[MAX_VARS], ovr[MAX_VARS];
    size_t fcount[MAX_VARS], ocount[MAX_VARS];
    fmi3Float64 fv[MAX_VALUES];
    fmi3Int32 iv[MAX_VARS];
    fmi3Boolean bv[MAX_VARS];
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
            if (!strcmp(word, "i32") && p->ni < MAX_VARS) {
                p->ivr[p->ni] = vr;
                p->iv[p->ni++] = (fmi3Int32)x;
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

int main(int argc, char **argv)
{
    if (argc != 5)
        return 9;
    static plan_t plan; /* large: not on the stack */
    plan_t *p = &plan;
    if (read_plan(argv[4], p)) {
        fprintf(stderr, "bad plan %s\n", argv[4]);
        return 9;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    F(fmi3InstantiateCoSimulation);
    F(fmi3InstantiateModelExchange);
    F(fmi3EnterInitializationMode);
    F(fmi3ExitInitializationMode);
    F(fmi3SetFloat64);
    F(fmi3SetInt32);
    F(fmi3SetBoolean);
    F(fmi3GetFloat64);
    F(fmi3DoStep);
    F(fmi3UpdateDiscreteStates);
    F(fmi3EnterContinuousTimeMode);
    F(fmi3SetTime);
    F(fmi3SetContinuousStates);
    F(fmi3GetContinuousStates);
    F(fmi3GetContinuousStateDerivatives);
    F(fmi3CompletedIntegratorStep);
    F(fmi3Terminate);
    F(fmi3FreeInstance);
    fmi3Instance c =
        p->me ? fmi3InstantiateModelExchange("host", argv[2], argv[3], fmi3False, fmi3False, NULL,
                                             logger)
              : fmi3InstantiateCoSimulation("host", argv[2], argv[3], fmi3False, fmi3False,
                                            fmi3False, fmi3False, NULL, 0, NULL, logger, NULL);
    if (!c)
        return 3;
    for (size_t i = 0, k = 0; i < p->nf; k += p->fcount[i++])
        if (fmi3SetFloat64(c, &p->fvr[i], 1, &p->fv[k], p->fcount[i]))
            return 4;
    if ((p->ni && fmi3SetInt32(c, p->ivr, p->ni, p->iv, p->ni)) ||
        (p->nb && fmi3SetBoolean(c, p->bvr, p->nb, p->bv, p->nb)))
        return 4;
    if (fmi3EnterInitializationMode(c, fmi3False, 0.0, 0.0, fmi3False, 0.0) ||
        fmi3ExitInitializationMode(c))
        return 5;
    double t = 0.0;
    if (!p->me) {
        for (long i = 0; i < p->n; i++, t = (double)i * p->h) {
            fmi3Boolean event = fmi3False, stop = fmi3False, early = fmi3False;
            fmi3Float64 last = 0.0;
            if (fmi3DoStep(c, t, p->h, fmi3True, &event, &stop, &early, &last) || stop || early)
                return 6;
        }
        t = (double)p->n * p->h;
    } else {
        fmi3Boolean update = fmi3True, stop = fmi3False, nominals, values, timed;
        fmi3Float64 next;
        while (update && !stop) /* event mode after initialization (FMI 3.0, 3.2.1) */
            if (fmi3UpdateDiscreteStates(c, &update, &stop, &nominals, &values, &timed, &next))
                return 7;
        if (fmi3EnterContinuousTimeMode(c))
            return 7;
        size_t nx = p->nx;
        double x[MAX_STATES], y[MAX_STATES], k[4][MAX_STATES];
        if (nx && fmi3GetContinuousStates(c, x, nx))
            return 7;
        const double a[4] = {0.0, 0.5, 0.5, 1.0}, w[4] = {1.0, 2.0, 2.0, 1.0};
        for (long i = 0; i < p->n; i++) {
            double h = p->h;
            t = (double)i * h;
            for (int s = 0; s < 4; s++) { /* k_s = f(t + a_s h, x + a_s h k_{s-1}) */
                for (size_t j = 0; j < nx; j++)
                    y[j] = s ? x[j] + a[s] * h * k[s - 1][j] : x[j];
                if (fmi3SetTime(c, t + a[s] * h) || (nx && fmi3SetContinuousStates(c, y, nx)) ||
                    (nx && fmi3GetContinuousStateDerivatives(c, k[s], nx)))
                    return 8;
            }
            for (size_t j = 0; j < nx; j++)
                x[j] += h / 6.0 * (w[0] * k[0][j] + w[1] * k[1][j] + w[2] * k[2][j] +
                                   w[3] * k[3][j]);
            t = (double)(i + 1) * h;
            fmi3Boolean enter = fmi3False;
            if (fmi3SetTime(c, t) || (nx && fmi3SetContinuousStates(c, x, nx)) ||
                fmi3CompletedIntegratorStep(c, fmi3True, &enter, &stop))
                return 8;
        }
    }
    static double out[MAX_VALUES];
    for (size_t i = 0, k = 0; i < p->no; k += p->ocount[i++])
        if (fmi3GetFloat64(c, &p->ovr[i], 1, &out[k], p->ocount[i]))
            return 10;
    for (size_t i = 0; i < p->nov; i++)
        printf(i ? " %.17g" : "%.17g", out[i]);
    printf("\n");
    if (fmi3Terminate(c))
        return 11;
    fmi3FreeInstance(c);
    dlclose(lib);
    return 0;
}
