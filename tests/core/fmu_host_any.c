/*
 * fmu_host_any.c -- a generic FMI 2.0 C host (no Python in its process) for
 * tests/test_fmu_host_all.py: any FMU binary, run as a co-simulation or a model-exchange unit.
 *
 *     fmu_host_any BINARY GUID RESOURCE_URI PLAN
 *
 * PLAN is a text file of lines:
 *     mode cs|me          how the unit runs
 *     states NX           its number of continuous states (ME; 0 for a stateless unit)
 *     real VR VALUE       a Real set before initialization (a parameter, or an input held
 *     int VR VALUE        constant over the run), an Integer, a Boolean (0 or 1)
 *     bool VR VALUE
 *     steps H N           N steps of H seconds: fmi2DoStep in CS; in ME the host's own
 *                         classical RK4 on fmi2GetDerivatives, with fmi2CompletedIntegratorStep
 *     out VR              an output printed at the end (in the order given)
 * Prints the outputs at the end time, "%.17g" separated by spaces. Exit status: 0, or the
 * stage that failed (with the FMU's log on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>

#include "fmi2Functions.h"

#define MAX_VARS 512
#define MAX_STATES 64

#define F(name)                                                                                \
    name##TYPE *name = (name##TYPE *)dlsym(lib, #name);                                        \
    if (!name) {                                                                               \
        fprintf(stderr, "no %s in the binary\n", #name);                                       \
        return 2;                                                                              \
    }

static void logger(fmi2ComponentEnvironment e, fmi2String inst, fmi2Status st, fmi2String cat,
                   fmi2String msg, ...)
{
    (void)e;
    (void)cat;
    fprintf(stderr, "[%s %d] %s\n", inst, (int)st, msg);
}

/* what PLAN says (every array sized by the constants above; checked while reading) */
typedef struct {
    int me;
    size_t nx;
    double h;
    long n;
    size_t nr, ni, nb, no;
    fmi2ValueReference rvr[MAX_VARS], ivr[MAX_VARS], bvr[MAX_VARS], ovr[MAX_VARS];
    fmi2Real rv[MAX_VARS];
    fmi2Integer iv[MAX_VARS];
    fmi2Boolean bv[MAX_VARS];
} plan_t;

static int read_plan(const char *path, plan_t *p)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    char word[16];
    unsigned vr;
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
            ok = fscanf(f, "%u", &vr) == 1 && p->no < MAX_VARS;
            if (ok)
                p->ovr[p->no++] = vr;
        } else if (fscanf(f, "%u %lf", &vr, &x) == 2) {
            if (!strcmp(word, "real") && p->nr < MAX_VARS) {
                p->rvr[p->nr] = vr;
                p->rv[p->nr++] = x;
            } else if (!strcmp(word, "int") && p->ni < MAX_VARS) {
                p->ivr[p->ni] = vr;
                p->iv[p->ni++] = (fmi2Integer)x;
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
    F(fmi2Instantiate);
    F(fmi2SetupExperiment);
    F(fmi2EnterInitializationMode);
    F(fmi2ExitInitializationMode);
    F(fmi2SetReal);
    F(fmi2SetInteger);
    F(fmi2SetBoolean);
    F(fmi2GetReal);
    F(fmi2DoStep);
    F(fmi2NewDiscreteStates);
    F(fmi2EnterContinuousTimeMode);
    F(fmi2SetTime);
    F(fmi2SetContinuousStates);
    F(fmi2GetContinuousStates);
    F(fmi2GetDerivatives);
    F(fmi2CompletedIntegratorStep);
    F(fmi2FreeInstance);
    fmi2CallbackFunctions cb = {logger, calloc, free, NULL, NULL};
    fmi2Component c = fmi2Instantiate("host", p->me ? fmi2ModelExchange : fmi2CoSimulation,
                                      argv[2], argv[3], &cb, fmi2False, fmi2False);
    if (!c)
        return 3;
    if ((p->nr && fmi2SetReal(c, p->rvr, p->nr, p->rv)) ||
        (p->ni && fmi2SetInteger(c, p->ivr, p->ni, p->iv)) ||
        (p->nb && fmi2SetBoolean(c, p->bvr, p->nb, p->bv)))
        return 4;
    if (fmi2SetupExperiment(c, fmi2False, 0.0, 0.0, fmi2False, 0.0) ||
        fmi2EnterInitializationMode(c) || fmi2ExitInitializationMode(c))
        return 5;
    double t = 0.0;
    if (!p->me) {
        for (long i = 0; i < p->n; i++, t = (double)i * p->h)
            if (fmi2DoStep(c, t, p->h, fmi2True))
                return 6;
        t = (double)p->n * p->h;
    } else {
        fmi2EventInfo info = {0};
        info.newDiscreteStatesNeeded = fmi2True;
        while (info.newDiscreteStatesNeeded && !info.terminateSimulation)
            if (fmi2NewDiscreteStates(c, &info))
                return 7;
        if (fmi2EnterContinuousTimeMode(c))
            return 7;
        size_t nx = p->nx;
        double x[MAX_STATES], y[MAX_STATES], k[4][MAX_STATES];
        if (nx && fmi2GetContinuousStates(c, x, nx))
            return 7;
        const double a[4] = {0.0, 0.5, 0.5, 1.0}, w[4] = {1.0, 2.0, 2.0, 1.0};
        for (long i = 0; i < p->n; i++) {
            double h = p->h;
            t = (double)i * h;
            for (int s = 0; s < 4; s++) { /* k_s = f(t + a_s h, x + a_s h k_{s-1}) */
                for (size_t j = 0; j < nx; j++)
                    y[j] = s ? x[j] + a[s] * h * k[s - 1][j] : x[j];
                if (fmi2SetTime(c, t + a[s] * h) || (nx && fmi2SetContinuousStates(c, y, nx)) ||
                    (nx && fmi2GetDerivatives(c, k[s], nx)))
                    return 8;
            }
            for (size_t j = 0; j < nx; j++)
                x[j] += h / 6.0 * (w[0] * k[0][j] + w[1] * k[1][j] + w[2] * k[2][j] +
                                   w[3] * k[3][j]);
            t = (double)(i + 1) * h;
            fmi2Boolean enter = fmi2False, stop = fmi2False;
            if (fmi2SetTime(c, t) || (nx && fmi2SetContinuousStates(c, x, nx)) ||
                fmi2CompletedIntegratorStep(c, fmi2True, &enter, &stop))
                return 8;
        }
    }
    double out[MAX_VARS];
    if (p->no && fmi2GetReal(c, p->ovr, p->no, out))
        return 10;
    for (size_t i = 0; i < p->no; i++)
        printf(i ? " %.17g" : "%.17g", out[i]);
    printf("\n");
    fmi2FreeInstance(c);
    dlclose(lib);
    return 0;
}
