/*
 * fmu3_host_any.c -- a generic FMI 3.0 C host (no Python in its process) for
 * tests/test_fmu_host_all.py: any FMI 3.0 FMU binary, run as a co-simulation or a
 * model-exchange unit. fmu_host_any.c is the same host for FMI 2.0.
 *
 *     fmu3_host_any BINARY INSTANTIATION_TOKEN RESOURCE_PATH PLAN
 *
 * PLAN: see fmu_host_plan.h ("f64" and "out" lines: whole array variables, row-major). CS calls
 * fmi3DoStep; ME runs the plan's RK4 on fmi3GetContinuousStateDerivatives after the event mode
 * that follows initialization (fmi3UpdateDiscreteStates), with fmi3CompletedIntegratorStep after
 * each step. Prints the outputs at the end time. Exit status: 0, or the stage that failed (with
 * the FMU's log on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>

#include "fmi3Functions.h"
#include "fmu_host_plan.h"

#define F(s, name)                                                                             \
    s.name = (name##TYPE *)dlsym(lib, #name);                                                  \
    if (!s.name) {                                                                             \
        fprintf(stderr, "no %s in the binary\n", #name);                                       \
        return 2;                                                                              \
    }

static void logger(fmi3InstanceEnvironment e, fmi3Status st, fmi3String cat, fmi3String msg)
{
    (void)e;
    (void)cat;
    fprintf(stderr, "[%d] %s\n", (int)st, msg);
}

/* the instance and the functions the ME integrator calls */
typedef struct {
    fmi3Instance c;
    fmi3SetTimeTYPE *fmi3SetTime;
    fmi3SetContinuousStatesTYPE *fmi3SetContinuousStates;
    fmi3GetContinuousStateDerivativesTYPE *fmi3GetContinuousStateDerivatives;
    fmi3CompletedIntegratorStepTYPE *fmi3CompletedIntegratorStep;
} unit_t;

static int derivatives(void *unit, double t, const double *x, size_t nx, double *dx)
{
    unit_t *u = unit;
    return u->fmi3SetTime(u->c, t) || (nx && u->fmi3SetContinuousStates(u->c, x, nx)) ||
           (nx && u->fmi3GetContinuousStateDerivatives(u->c, dx, nx));
}

static int completed(void *unit, double t, const double *x, size_t nx)
{
    unit_t *u = unit;
    fmi3Boolean enter = fmi3False, stop = fmi3False;
    return u->fmi3SetTime(u->c, t) || (nx && u->fmi3SetContinuousStates(u->c, x, nx)) ||
           u->fmi3CompletedIntegratorStep(u->c, fmi3True, &enter, &stop) || stop;
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
    struct {
        fmi3InstantiateCoSimulationTYPE *fmi3InstantiateCoSimulation;
        fmi3InstantiateModelExchangeTYPE *fmi3InstantiateModelExchange;
        fmi3EnterInitializationModeTYPE *fmi3EnterInitializationMode;
        fmi3ExitInitializationModeTYPE *fmi3ExitInitializationMode;
        fmi3SetFloat64TYPE *fmi3SetFloat64;
        fmi3SetInt32TYPE *fmi3SetInt32;
        fmi3SetBooleanTYPE *fmi3SetBoolean;
        fmi3GetFloat64TYPE *fmi3GetFloat64;
        fmi3DoStepTYPE *fmi3DoStep;
        fmi3UpdateDiscreteStatesTYPE *fmi3UpdateDiscreteStates;
        fmi3EnterContinuousTimeModeTYPE *fmi3EnterContinuousTimeMode;
        fmi3GetContinuousStatesTYPE *fmi3GetContinuousStates;
        fmi3TerminateTYPE *fmi3Terminate;
        fmi3FreeInstanceTYPE *fmi3FreeInstance;
    } u;
    unit_t me;
    F(u, fmi3InstantiateCoSimulation);
    F(u, fmi3InstantiateModelExchange);
    F(u, fmi3EnterInitializationMode);
    F(u, fmi3ExitInitializationMode);
    F(u, fmi3SetFloat64);
    F(u, fmi3SetInt32);
    F(u, fmi3SetBoolean);
    F(u, fmi3GetFloat64);
    F(u, fmi3DoStep);
    F(u, fmi3UpdateDiscreteStates);
    F(u, fmi3EnterContinuousTimeMode);
    F(u, fmi3GetContinuousStates);
    F(u, fmi3Terminate);
    F(u, fmi3FreeInstance);
    F(me, fmi3SetTime);
    F(me, fmi3SetContinuousStates);
    F(me, fmi3GetContinuousStateDerivatives);
    F(me, fmi3CompletedIntegratorStep);
    fmi3Instance c =
        p->me ? u.fmi3InstantiateModelExchange("host", argv[2], argv[3], fmi3False, fmi3False,
                                               NULL, logger)
              : u.fmi3InstantiateCoSimulation("host", argv[2], argv[3], fmi3False, fmi3False,
                                              fmi3False, fmi3False, NULL, 0, NULL, logger, NULL);
    if (!c)
        return 3;
    me.c = c;
    fmi3Int32 iv[MAX_VARS];
    fmi3Boolean bv[MAX_VARS];
    for (size_t i = 0; i < p->ni; i++)
        iv[i] = p->iv[i];
    for (size_t i = 0; i < p->nb; i++)
        bv[i] = p->bv[i];
    for (size_t i = 0, k = 0; i < p->nf; k += p->fcount[i++]) /* one array variable a call */
        if (u.fmi3SetFloat64(c, &p->fvr[i], 1, &p->fv[k], p->fcount[i]))
            return 4;
    if ((p->ni && u.fmi3SetInt32(c, p->ivr, p->ni, iv, p->ni)) ||
        (p->nb && u.fmi3SetBoolean(c, p->bvr, p->nb, bv, p->nb)))
        return 4;
    if (u.fmi3EnterInitializationMode(c, fmi3False, 0.0, 0.0, fmi3False, 0.0) ||
        u.fmi3ExitInitializationMode(c))
        return 5;
    if (!p->me) {
        for (long i = 0; i < p->n; i++) {
            fmi3Boolean event = fmi3False, stop = fmi3False, early = fmi3False;
            fmi3Float64 last = 0.0;
            if (u.fmi3DoStep(c, (double)i * p->h, p->h, fmi3True, &event, &stop, &early, &last) ||
                stop || early)
                return 6;
        }
    } else {
        fmi3Boolean update = fmi3True, stop = fmi3False, nominals, values, timed;
        fmi3Float64 next;
        while (update && !stop) /* the event mode after initialization */
            if (u.fmi3UpdateDiscreteStates(c, &update, &stop, &nominals, &values, &timed, &next))
                return 7;
        double x[MAX_STATES];
        if (u.fmi3EnterContinuousTimeMode(c) || (p->nx && u.fmi3GetContinuousStates(c, x, p->nx)))
            return 7;
        if (plan_rk4(p, &me, derivatives, completed, x))
            return 8;
    }
    static double out[MAX_VALUES];
    for (size_t i = 0, k = 0; i < p->no; k += p->ocount[i++])
        if (u.fmi3GetFloat64(c, &p->ovr[i], 1, &out[k], p->ocount[i]))
            return 10;
    plan_print(out, p->nov);
    if (u.fmi3Terminate(c))
        return 11;
    u.fmi3FreeInstance(c);
    dlclose(lib);
    return 0;
}
