/*
 * model_host.c -- a C host (no Python in its process) for whole-model FMUs
 * (tests/test_model_fmu.py, scripts/bench_model_fmu.py).
 *
 *   model_host LIB GUID STOP STEP EVERY VR...
 *
 * Loads the FMU binary LIB, instantiates it as a co-simulation unit with its start values, runs
 * it from 0 to STOP (s) in communication steps of STEP (s), and prints "t y1 y2 ..." (the real
 * variables VR..., %.17g) at t = 0 and after every EVERY-th step (and at the end); on stderr,
 * "elapsed S" (wall-clock seconds of the simulation loop, instantiation excluded). Exit status
 * 0, or 2 for a refused call (the FMU's messages on stderr), 9 for bad arguments. Compiled
 * with MinGW-w64 it loads a win64 DLL instead (LoadLibrary), to run under wine.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fmi2Functions.h"

#ifdef _WIN32
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
    if (st != fmi2OK)
        fprintf(stderr, "[%s %d] %s\n", inst, (int)st, msg);
}

static double now(void)
{
#ifdef _WIN32
    LARGE_INTEGER f, t;
    QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&t);
    return (double)t.QuadPart / (double)f.QuadPart;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
#endif
}

int main(int argc, char **argv)
{
    if (argc < 6)
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
    F(fmi2Terminate);
    F(fmi2FreeInstance);
    if (!fmi2Instantiate || !fmi2DoStep || !fmi2GetReal || !fmi2FreeInstance)
        return 1;
    double stop = atof(argv[3]), step = atof(argv[4]);
    long every = atol(argv[5]);
    int nout = argc - 6;
    if (!(step > 0) || every < 1 || nout > 256)
        return 9;
    fmi2ValueReference vr[256];
    double y[256];
    for (int k = 0; k < nout; k++)
        vr[k] = (fmi2ValueReference)atol(argv[6 + k]);
    fmi2CallbackFunctions cb = {logger, calloc, free, NULL, NULL};
    fmi2Component c = fmi2Instantiate("host", fmi2CoSimulation, argv[2], "", &cb, 0, 0);
    if (!c)
        return 2;
    if (fmi2SetupExperiment(c, fmi2False, 0.0, 0.0, fmi2True, stop) ||
        fmi2EnterInitializationMode(c) || fmi2ExitInitializationMode(c))
        return 2;
    long n = (long)(stop / step + 0.5);
    double t0 = now();
    for (long i = 0; i <= n; i++) {
        double t = i * step; /* the host's own clock: i steps of STEP */
        if (i % every == 0 || i == n) {
            if (fmi2GetReal(c, vr, (size_t)nout, y))
                return 2;
            printf("%.17g", t);
            for (int k = 0; k < nout; k++)
                printf(" %.17g", y[k]);
            printf("\n");
        }
        if (i < n && fmi2DoStep(c, t, step, fmi2True))
            return 2;
    }
    fprintf(stderr, "elapsed %.9f\n", now() - t0);
    fmi2Terminate(c);
    fmi2FreeInstance(c);
#ifdef _WIN32
    FreeLibrary(lib);
#else
    dlclose(lib);
#endif
    return 0;
}
