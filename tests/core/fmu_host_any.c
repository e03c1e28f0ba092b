/*
 * fmu_host_any.c -- a generic FMI 2.0 C host (no Python in its process) for
 * tests/test_fmu_host_all.py: any FMU binary, run as a co-simulation or a model-exchange unit.
 * fmu3_host_any.c is the same host for FMI 3.0.
 *
 *     fmu_host_any BINARY GUID RESOURCE_URI PLAN
 *
 * PLAN: see fmu_host_plan.h (here every "f64" and "out" line has N = 1: FMI 2.0 scalars). CS
 * calls fmi2DoStep; ME runs the plan's RK4 on fmi2GetDerivatives after the standard event-mode
 * calls, with fmi2CompletedIntegratorStep after each step. Prints the outputs at the end time.
 * Exit status: 0, or the stage that failed (with the FMU's log on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>

#include "fmi2Functions.h"
#include "fmu_host_plan.h"

#define F(s, name)                                                                             \
    s.name = (name##TYPE *)dlsym(lib, #name);                                                  \
    if (!s.name) {                                                                             \
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

/* the instance and the functions the ME integrator calls */
typedef struct {
    fmi2Component c;
    fmi2SetTimeTYPE *fmi2SetTime;
    fmi2SetContinuousStatesTYPE *fmi2SetContinuousStates;
    fmi2GetDerivativesTYPE *fmi2GetDerivatives;
    fmi2CompletedIntegratorStepTYPE *fmi2CompletedIntegratorStep;
} unit_t;

static int derivatives(void *unit, double t, const double *x, size_t nx, double *dx)
{
    unit_t *u = unit;
    return u->fmi2SetTime(u->c, t) || (nx && u->fmi2SetContinuousStates(u->c, x, nx)) ||
           (nx && u->fmi2GetDerivatives(u->c, dx, nx));
}

static int completed(void *unit, double t, const double *x, size_t nx)
{
    unit_t *u = unit;
    fmi2Boolean enter = fmi2False, stop = fmi2False;
    return u->fmi2SetTime(u->c, t) || (nx && u->fmi2SetContinuousStates(u->c, x, nx)) ||
           u->fmi2CompletedIntegratorStep(u->c, fmi2True, &enter, &stop) || stop;
}

int main(int argc, char **argv)
{
    if (argc != 5)
        return 9;
    static plan_t plan; /* large: not on the stack */
    plan_t *p = &plan;
    if (read_plan(argv[4], p) || p->nfv != p->nf || p->nov != p->no) {
        fprintf(stderr, "bad plan %s\n", argv[4]);
        return 9;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    struct {
        fmi2InstantiateTYPE *fmi2Instantiate;
        fmi2SetupExperimentTYPE *fmi2SetupExperiment;
        fmi2EnterInitializationModeTYPE *fmi2EnterInitializationMode;
        fmi2ExitInitializationModeTYPE *fmi2ExitInitializationMode;
        fmi2SetRealTYPE *fmi2SetReal;
        fmi2SetIntegerTYPE *fmi2SetInteger;
        fmi2SetBooleanTYPE *fmi2SetBoolean;
        fmi2GetRealTYPE *fmi2GetReal;
        fmi2DoStepTYPE *fmi2DoStep;
        fmi2NewDiscreteStatesTYPE *fmi2NewDiscreteStates;
        fmi2EnterContinuousTimeModeTYPE *fmi2EnterContinuousTimeMode;
        fmi2GetContinuousStatesTYPE *fmi2GetContinuousStates;
        fmi2FreeInstanceTYPE *fmi2FreeInstance;
    } u;
    unit_t me;
    F(u, fmi2Instantiate);
    F(u, fmi2SetupExperiment);
    F(u, fmi2EnterInitializationMode);
    F(u, fmi2ExitInitializationMode);
    F(u, fmi2SetReal);
    F(u, fmi2SetInteger);
    F(u, fmi2SetBoolean);
    F(u, fmi2GetReal);
    F(u, fmi2DoStep);
    F(u, fmi2NewDiscreteStates);
    F(u, fmi2EnterContinuousTimeMode);
    F(u, fmi2GetContinuousStates);
    F(u, fmi2FreeInstance);
    F(me, fmi2SetTime);
    F(me, fmi2SetContinuousStates);
    F(me, fmi2GetDerivatives);
    F(me, fmi2CompletedIntegratorStep);
    fmi2CallbackFunctions cb = {logger, calloc, free, NULL, NULL};
    fmi2Component c = u.fmi2Instantiate("host", p->me ? fmi2ModelExchange : fmi2CoSimulation,
                                        argv[2], argv[3], &cb, fmi2False, fmi2False);
    if (!c)
        return 3;
    me.c = c;
    fmi2Integer iv[MAX_VARS];
    fmi2Boolean bv[MAX_VARS];
    for (size_t i = 0; i < p->ni; i++)
        iv[i] = p->iv[i];
    for (size_t i = 0; i < p->nb; i++)
        bv[i] = p->bv[i];
    if ((p->nf && u.fmi2SetReal(c, p->fvr, p->nf, p->fv)) ||
        (p->ni && u.fmi2SetInteger(c, p->ivr, p->ni, iv)) ||
        (p->nb && u.fmi2SetBoolean(c, p->bvr, p->nb, bv)))
        return 4;
    if (u.fmi2SetupExperiment(c, fmi2False, 0.0, 0.0, fmi2False, 0.0) ||
        u.fmi2EnterInitializationMode(c) || u.fmi2ExitInitializationMode(c))
        return 5;
    if (!p->me) {
        for (long i = 0; i < p->n; i++)
            if (u.fmi2DoStep(c, (double)i * p->h, p->h, fmi2True))
                return 6;
    } else {
        fmi2EventInfo info = {0};
        info.newDiscreteStatesNeeded = fmi2True;
        while (info.newDiscreteStatesNeeded && !info.terminateSimulation)
            if (u.fmi2NewDiscreteStates(c, &info))
                return 7;
        double x[MAX_STATES];
        if (u.fmi2EnterContinuousTimeMode(c) || (p->nx && u.fmi2GetContinuousStates(c, x, p->nx)))
            return 7;
        if (plan_rk4(p, &me, derivatives, completed, x))
            return 8;
    }
    static double out[MAX_VALUES];
    if (p->no && u.fmi2GetReal(c, p->ovr, p->no, out))
        return 10;
    plan_print(out, p->no);
    u.fmi2FreeInstance(c);
    dlclose(lib);
    return 0;
}
