/*
 * fmu_host.c -- a C host (no Python in its process) for tests/test_fmu_host.py.
 *
 * Loads a TitopRevoluteBodyC0 binary, sets a pendulum's parameters (value references on the
 * command line), holds its parent port still (P.m = 0: a fixed point) and runs 1 s twice: as a
 * co-simulation unit (fmi2DoStep of 10 ms, RK4 sub-steps of at most 0.1 ms) and as a
 * model-exchange unit (the host's own RK4 of 0.1 ms on fmi2GetDerivatives). Prints the joint
 * coordinate and rate at the end of each run: "q_cs qd_cs q_me qd_me". Compiled with MinGW-w64
 * it loads a win64 DLL instead (LoadLibrary), to run under wine.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fmi2Functions.h"

#ifdef _WIN32 /* the same host, cross-compiled with MinGW-w64, runs a win64 DLL (under wine) */
#include <windows.h>
#define F(name) name##TYPE *name = (name##TYPE *)(void (*)(void))GetProcAddress(lib, #name)
#else
#include <dlfcn.h>
#define F(name) name##TYPE *name = (name##TYPE *)dlsym(lib, #name)
#endif

static void logger(fmi2ComponentEnvironment e, fmi2String inst, fmi2Status st, fmi2String cat,
                   fmi2String msg, ...)
{
    (void)e;
    (void)cat;
    fprintf(stderr, "[%s %d] %s\n", inst, (int)st, msg);
}

int main(int argc, char **argv)
{
    if (argc != 15)
        return 9;
#ifdef _WIN32
    HMODULE lib = LoadLibraryA(argv[1]);
    if (!lib) {
        fprintf(stderr, "LoadLibrary(%s) failed: error %lu\n", argv[1], GetLastError());
        return 1;
    }
#else
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
#endif
    F(fmi2Instantiate);
    F(fmi2SetupExperiment);
    F(fmi2EnterInitializationMode);
    F(fmi2ExitInitializationMode);
    F(fmi2DoStep);
    F(fmi2GetReal);
    F(fmi2SetReal);
    F(fmi2SetInteger);
    F(fmi2FreeInstance);
    F(fmi2EnterContinuousTimeMode);
    F(fmi2SetTime);
    F(fmi2SetContinuousStates);
    F(fmi2GetContinuousStates);
    F(fmi2GetDerivatives);
    F(fmi2NewDiscreteStates);
    fmi2CallbackFunctions cb = {logger, calloc, free, NULL, NULL};
    unsigned v[12];
    for (int k = 0; k < 12; k++)
        v[k] = (unsigned)atoi(argv[3 + k]);
    /* mass, com[2], inertia diag, q0, gravity y, z, method, max_step, joint.m[3], joint.m[2] */
    double par[9] = {1.3, -0.7, 0.05, 0.02, 0.04, 0.6, -9.81, 0.0, 1e-4};
    double out[4];
    for (int mode = 0; mode < 2; mode++) {
        fmi2Component c = fmi2Instantiate("host", mode == 0 ? fmi2CoSimulation : fmi2ModelExchange,
                                          argv[2], "", &cb, 0, 1);
        if (!c)
            return 2;
        unsigned pv[9] = {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[9]};
        fmi2SetReal(c, pv, 9, par);
        fmi2Integer rk4 = 4;
        fmi2SetInteger(c, &v[8], 1, &rk4);
        fmi2SetupExperiment(c, 0, 0.0, 0.0, 0, 0.0);
        if (fmi2EnterInitializationMode(c) || fmi2ExitInitializationMode(c))
            return 3;
        if (mode == 0) {
            for (int i = 0; i < 100; i++)
                if (fmi2DoStep(c, 0.01 * i, 0.01, fmi2True))
                    return 4;
        } else {
            fmi2EventInfo info;
            fmi2NewDiscreteStates(c, &info);
            fmi2EnterContinuousTimeMode(c);
            double x[2], k1[2], k2[2], k3[2], k4[2], y[2], h = 1e-4;
            fmi2GetContinuousStates(c, x, 2);
            for (int i = 0; i < 10000; i++) {
                double t = i * h;
#define RATE(tt, xx, kk)                                                                       \
    fmi2SetTime(c, tt);                                                                        \
    fmi2SetContinuousStates(c, xx, 2);                                                         \
    if (fmi2GetDerivatives(c, kk, 2))                                                          \
        return 5;
                RATE(t, x, k1);
                for (int k = 0; k < 2; k++)
                    y[k] = x[k] + 0.5 * h * k1[k];
                RATE(t + 0.5 * h, y, k2);
                for (int k = 0; k < 2; k++)
                    y[k] = x[k] + 0.5 * h * k2[k];
                RATE(t + 0.5 * h, y, k3);
                for (int k = 0; k < 2; k++)
                    y[k] = x[k] + h * k3[k];
                RATE(t + h, y, k4);
                for (int k = 0; k < 2; k++)
                    x[k] += h / 6.0 * (k1[k] + 2.0 * (k2[k] + k3[k]) + k4[k]);
            }
            fmi2SetContinuousStates(c, x, 2);
        }
        unsigned ov[2] = {v[10], v[11]};
        if (fmi2GetReal(c, ov, 2, out + 2 * mode))
            return 6;
        fmi2FreeInstance(c);
    }
    printf("%.17g %.17g %.17g %.17g\n", out[0], out[1], out[2], out[3]);
    return 0;
}
