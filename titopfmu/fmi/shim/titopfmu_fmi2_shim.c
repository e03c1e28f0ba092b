/*
 * titopfmu FMI 2.0 co-simulation shim (Linux).
 *
 * `titopfmu build` compiles this file into binaries/linux64/<modelIdentifier>.so of every FMU and
 * renames pythonfmu 0.7's binary, next to it, to libpythonfmu-export.so. The shim loads that
 * binary (dlopen RTLD_NOW | RTLD_LOCAL, dlsym on the handle) and forwards every fmi2 function to
 * it, with one change: a call that the titopfmu slave *refused* returns fmi2Error, not fmi2Fatal.
 *
 * Why: pythonfmu 0.7 turns every Python exception into fmi2Fatal ("the model computations are
 * irreparably corrupted for all FMU instances"). The slave refuses bad parameters, non-finite
 * inputs, non-positive steps and calls out of the calling sequence by raising FmuError, which
 * deserves fmi2Error ("this instance cannot go on; free it, reset it or restore a saved state").
 *
 * How a refusal is recognised: pythonfmu logs the exception through the logger callback just
 * before it returns fmi2Fatal, with the status fmi2Fatal and the text
 *     "Fatal py exception encountered: [<call>] <what>\nFmuError(<message>)"
 * (PySlaveInstance::handle_py_exception, then the catch block of the fmi2 function). The shim
 * gives pythonfmu its own logger callback; a fatal message whose exception is an FmuError, and
 * not one of the slave's "internal error in ..." wrappers of an unexpected exception, marks the
 * call as refused, is passed on to the host with the status fmi2Error (text unchanged), and the
 * call's fmi2Fatal becomes fmi2Error. Anything else (an unexpected exception, a failed import)
 * stays fmi2Fatal.
 *
 * Logging: pythonfmu only calls the logger when debug logging is on, so the shim instantiates
 * pythonfmu with loggingOn = fmi2True and filters for the host exactly as pythonfmu would (host's
 * loggingOn, then the categories of fmi2SetDebugLogging), except that messages with the status
 * fmi2Error or fmi2Fatal are always passed on unless the host switched logging off with
 * fmi2SetDebugLogging (as the FMI Reference FMUs do: an error return comes with its message).
 * Messages are passed on as pythonfmu passes them (the message as the format, no arguments), with
 * any '%' doubled so that a host that formats the message prints it unchanged.
 *
 * The FMI 2.0.1 headers next to this file are the standard's (2-Clause BSD License, copyright
 * notices in them), copied from FMPy 0.3.32 (fmpy/c-code), whose fmi2Functions.h always exports
 * the functions and adds no name prefix.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"

#define INNER_NAME "libpythonfmu-export.so"

/* -- the pythonfmu binary ------------------------------------------------------------------- */

#define SHIM_FUNCTIONS(X)                                                                       \
    X(fmi2GetTypesPlatform)                                                                     \
    X(fmi2GetVersion)                                                                           \
    X(fmi2SetDebugLogging)                                                                      \
    X(fmi2Instantiate)                                                                          \
    X(fmi2FreeInstance)                                                                         \
    X(fmi2SetupExperiment)                                                                      \
    X(fmi2EnterInitializationMode)                                                              \
    X(fmi2ExitInitializationMode)                                                               \
    X(fmi2Terminate)                                                                            \
    X(fmi2Reset)                                                                                \
    X(fmi2GetReal)                                                                              \
    X(fmi2GetInteger)                                                                           \
    X(fmi2GetBoolean)                                                                           \
    X(fmi2GetString)                                                                            \
    X(fmi2SetReal)                                                                              \
    X(fmi2SetInteger)                                                                           \
    X(fmi2SetBoolean)                                                                           \
    X(fmi2SetString)                                                                            \
    X(fmi2GetFMUstate)                                                                          \
    X(fmi2SetFMUstate)                                                                          \
    X(fmi2FreeFMUstate)                                                                         \
    X(fmi2SerializedFMUstateSize)                                                               \
    X(fmi2SerializeFMUstate)                                                                    \
    X(fmi2DeSerializeFMUstate)                                                                  \
    X(fmi2GetDirectionalDerivative)                                                             \
    X(fmi2SetRealInputDerivatives)                                                              \
    X(fmi2GetRealOutputDerivatives)                                                             \
    X(fmi2DoStep)                                                                               \
    X(fmi2CancelStep)                                                                           \
    X(fmi2GetStatus)                                                                            \
    X(fmi2GetRealStatus)                                                                        \
    X(fmi2GetIntegerStatus)                                                                     \
    X(fmi2GetBooleanStatus)                                                                     \
    X(fmi2GetStringStatus)

static struct {
#define X(name) name##TYPE *name;
    SHIM_FUNCTIONS(X)
#undef X
} inner;

static void *inner_handle = NULL;
static char load_error[8192] = "not loaded";

/* Load the pythonfmu binary that sits next to this library (its path comes from dladdr, so it
 * is found where the host found the shim, whatever the current directory is later). */
__attribute__((constructor)) static void shim_load(void)
{
    Dl_info info;
    char path[4096];
    const char *slash;
    size_t dir_len;

    if (!dladdr((void *)&inner_handle, &info) || info.dli_fname == NULL) {
        snprintf(load_error, sizeof load_error, "dladdr cannot locate the titopfmu shim");
        return;
    }
    slash = strrchr(info.dli_fname, '/');
    dir_len = slash ? (size_t)(slash - info.dli_fname) + 1 : 0;
    if (dir_len + sizeof INNER_NAME > sizeof path) {
        snprintf(load_error, sizeof load_error, "path too long: %s", info.dli_fname);
        return;
    }
    memcpy(path, info.dli_fname, dir_len);
    memcpy(path + dir_len, INNER_NAME, sizeof INNER_NAME);
    inner_handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (inner_handle == NULL) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error, "cannot load %s: %s", path, why ? why : "?");
        return;
    }
#define X(name)                                                                                 \
    *(void **)(&inner.name) = dlsym(inner_handle, #name);                                       \
    if (inner.name == NULL) {                                                                   \
        snprintf(load_error, sizeof load_error, "%s has no function %s", path, #name);          \
        dlclose(inner_handle);                                                                  \
        inner_handle = NULL;                                                                    \
        return;                                                                                 \
    }
    SHIM_FUNCTIONS(X)
#undef X
    load_error[0] = '\0';
}

__attribute__((destructor)) static void shim_unload(void)
{
    if (inner_handle != NULL) {
        dlclose(inner_handle);
        inner_handle = NULL;
    }
}

/* -- one instance --------------------------------------------------------------------------- */

typedef struct {
    fmi2Component inner;          /* pythonfmu's instance */
    fmi2CallbackFunctions host;   /* the host's callbacks (a copy) */
    fmi2CallbackFunctions own;    /* given to pythonfmu: shim_logger, this struct as environment */
    int refused;                  /* set by shim_logger during a call the slave refused */
    int debug_on;                 /* the host's debug logging switch */
    int errors_on;                /* error and fatal messages are passed on */
    size_t n_categories;
    char **categories;            /* the host's categories (none: all) */
} Shim;

static const char FATAL_PREFIX[] = "Fatal py exception encountered: ";
static const char REFUSAL[] = "FmuError(";
static const char INTERNAL[] = "): internal error in ";

/* The message pythonfmu logs for an FmuError that is not an unexpected exception in disguise. */
static int is_refusal(fmi2String message)
{
    const char *line;

    if (message == NULL || strncmp(message, FATAL_PREFIX, sizeof FATAL_PREFIX - 1) != 0) {
        return 0;
    }
    line = strchr(message, '\n');
    if (line == NULL || strncmp(line + 1, REFUSAL, sizeof REFUSAL - 1) != 0) {
        return 0;
    }
    return strstr(line + 1, INTERNAL) == NULL;
}

static int passes_filter(const Shim *s, fmi2Status status, fmi2String category)
{
    size_t i;
    const char *cat = category ? category : "";

    if (status == fmi2Error || status == fmi2Fatal) {
        return s->errors_on;
    }
    if (!s->debug_on) {
        return 0;
    }
    if (s->n_categories == 0) {
        return 1;
    }
    for (i = 0; i < s->n_categories; i++) {
        if (strcmp(s->categories[i], cat) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The host's logger, with '%' doubled (the message is a printf format for the host). */
static void pass_on(const Shim *s, fmi2String instanceName, fmi2Status status,
                    fmi2String category, fmi2String message)
{
    size_t n_pct = 0, i, j;
    char *escaped;
    const char *p;

    if (s->host.logger == NULL) {
        return;
    }
    for (p = message ? message : ""; *p; p++) {
        n_pct += (*p == '%');
    }
    if (n_pct == 0) {
        s->host.logger(s->host.componentEnvironment, instanceName, status, category, message);
        return;
    }
    escaped = malloc(strlen(message) + n_pct + 1);
    if (escaped == NULL) {
        s->host.logger(s->host.componentEnvironment, instanceName, status, category, "%s", message);
        return;
    }
    for (i = 0, j = 0; message[i]; i++) {
        escaped[j++] = message[i];
        if (message[i] == '%') {
            escaped[j++] = '%';
        }
    }
    escaped[j] = '\0';
    s->host.logger(s->host.componentEnvironment, instanceName, status, category, escaped);
    free(escaped);
}

/* The logger pythonfmu calls (it passes the message as the format and no arguments). */
static void shim_logger(fmi2ComponentEnvironment env, fmi2String instanceName, fmi2Status status,
                        fmi2String category, fmi2String message, ...)
{
    Shim *s = (Shim *)env;

    if (s == NULL) {
        return;
    }
    if (status == fmi2Fatal && is_refusal(message)) {
        s->refused = 1;
        status = fmi2Error;
    }
    if (passes_filter(s, status, category)) {
        pass_on(s, instanceName, status, category, message);
    }
}

static void free_categories(Shim *s)
{
    size_t i;

    for (i = 0; i < s->n_categories; i++) {
        free(s->categories[i]);
    }
    free(s->categories);
    s->categories = NULL;
    s->n_categories = 0;
}

/* Forward a call; a refused call's fmi2Fatal becomes fmi2Error. */
#define FORWARD(c, call)                                                                        \
    do {                                                                                        \
        Shim *s_ = (Shim *)(c);                                                                 \
        fmi2Status st_;                                                                         \
        if (s_ == NULL) {                                                                       \
            return fmi2Error;                                                                   \
        }                                                                                       \
        s_->refused = 0;                                                                        \
        st_ = inner.call;                                                                       \
        if (st_ == fmi2Fatal && s_->refused) {                                                  \
            st_ = fmi2Error;                                                                    \
        }                                                                                       \
        return st_;                                                                             \
    } while (0)

#define INNER(c) (((Shim *)(c))->inner)

/* -- the FMI 2.0 functions ------------------------------------------------------------------ */

const char *fmi2GetTypesPlatform(void)
{
    return fmi2TypesPlatform;
}

const char *fmi2GetVersion(void)
{
    return fmi2Version;
}

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation,
                              const fmi2CallbackFunctions *functions, fmi2Boolean visible,
                              fmi2Boolean loggingOn)
{
    Shim *s;

    if (functions == NULL) {
        return NULL;
    }
    if (inner_handle == NULL) {
        if (functions->logger != NULL) {
            functions->logger(functions->componentEnvironment, instanceName, fmi2Fatal, "",
                              "titopfmu shim: %s", load_error);
        }
        return NULL;
    }
    s = calloc(1, sizeof *s);
    if (s == NULL) {
        if (functions->logger != NULL) {
            functions->logger(functions->componentEnvironment, instanceName, fmi2Fatal, "",
                              "titopfmu shim: out of memory");
        }
        return NULL;
    }
    s->host = *functions;
    s->own = *functions;
    s->own.logger = shim_logger;
    s->own.componentEnvironment = s;
    s->debug_on = loggingOn == fmi2True;
    s->errors_on = 1;
    s->inner = inner.fmi2Instantiate(instanceName, fmuType, fmuGUID, fmuResourceLocation,
                                     &s->own, visible, fmi2True);
    if (s->inner == NULL) {
        free(s);
        return NULL;
    }
    return s;
}

void fmi2FreeInstance(fmi2Component c)
{
    Shim *s = (Shim *)c;

    if (s == NULL) {
        return;
    }
    inner.fmi2FreeInstance(s->inner);  /* may still log through s */
    free_categories(s);
    free(s);
}

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[])
{
    /* pythonfmu's fmi2SetDebugLogging only sets its logger's filter: the shim filters instead
     * and keeps pythonfmu's logging on. */
    Shim *s = (Shim *)c;
    size_t i;

    if (s == NULL) {
        return fmi2Error;
    }
    if (nCategories > 0 && categories == NULL) {
        return fmi2Error;
    }
    for (i = 0; i < nCategories; i++) {
        if (categories[i] == NULL) {
            return fmi2Error;
        }
    }
    free_categories(s);
    if (nCategories > 0) {
        s->categories = calloc(nCategories, sizeof *s->categories);
        if (s->categories == NULL) {
            return fmi2Error;
        }
        for (i = 0; i < nCategories; i++) {
            s->categories[i] = strdup(categories[i]);
            if (s->categories[i] == NULL) {
                s->n_categories = i;
                free_categories(s);
                return fmi2Error;
            }
        }
        s->n_categories = nCategories;
    }
    s->debug_on = loggingOn == fmi2True;
    s->errors_on = loggingOn == fmi2True;
    return fmi2OK;
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                               fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime)
{
    FORWARD(c, fmi2SetupExperiment(INNER(c), toleranceDefined, tolerance, startTime,
                                   stopTimeDefined, stopTime));
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c)
{
    FORWARD(c, fmi2EnterInitializationMode(INNER(c)));
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c)
{
    FORWARD(c, fmi2ExitInitializationMode(INNER(c)));
}

fmi2Status fmi2Terminate(fmi2Component c)
{
    FORWARD(c, fmi2Terminate(INNER(c)));
}

fmi2Status fmi2Reset(fmi2Component c)
{
    FORWARD(c, fmi2Reset(INNER(c)));
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                       fmi2Real value[])
{
    FORWARD(c, fmi2GetReal(INNER(c), vr, nvr, value));
}

fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                          fmi2Integer value[])
{
    FORWARD(c, fmi2GetInteger(INNER(c), vr, nvr, value));
}

fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                          fmi2Boolean value[])
{
    FORWARD(c, fmi2GetBoolean(INNER(c), vr, nvr, value));
}

fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                         fmi2String value[])
{
    FORWARD(c, fmi2GetString(INNER(c), vr, nvr, value));
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                       const fmi2Real value[])
{
    FORWARD(c, fmi2SetReal(INNER(c), vr, nvr, value));
}

fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                          const fmi2Integer value[])
{
    FORWARD(c, fmi2SetInteger(INNER(c), vr, nvr, value));
}

fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                          const fmi2Boolean value[])
{
    FORWARD(c, fmi2SetBoolean(INNER(c), vr, nvr, value));
}

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                         const fmi2String value[])
{
    FORWARD(c, fmi2SetString(INNER(c), vr, nvr, value));
}

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *FMUstate)
{
    FORWARD(c, fmi2GetFMUstate(INNER(c), FMUstate));
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate FMUstate)
{
    FORWARD(c, fmi2SetFMUstate(INNER(c), FMUstate));
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *FMUstate)
{
    FORWARD(c, fmi2FreeFMUstate(INNER(c), FMUstate));
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate FMUstate, size_t *size)
{
    FORWARD(c, fmi2SerializedFMUstateSize(INNER(c), FMUstate, size));
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate FMUstate,
                                 fmi2Byte serializedState[], size_t size)
{
    FORWARD(c, fmi2SerializeFMUstate(INNER(c), FMUstate, serializedState, size));
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte serializedState[],
                                   size_t size, fmi2FMUstate *FMUstate)
{
    FORWARD(c, fmi2DeSerializeFMUstate(INNER(c), serializedState, size, FMUstate));
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown_ref[],
                                        size_t nUnknown, const fmi2ValueReference vKnown_ref[],
                                        size_t nKnown, const fmi2Real dvKnown[],
                                        fmi2Real dvUnknown[])
{
    FORWARD(c, fmi2GetDirectionalDerivative(INNER(c), vUnknown_ref, nUnknown, vKnown_ref, nKnown,
                                            dvKnown, dvUnknown));
}

fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[],
                                       size_t nvr, const fmi2Integer order[],
                                       const fmi2Real value[])
{
    FORWARD(c, fmi2SetRealInputDerivatives(INNER(c), vr, nvr, order, value));
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[],
                                        size_t nvr, const fmi2Integer order[], fmi2Real value[])
{
    FORWARD(c, fmi2GetRealOutputDerivatives(INNER(c), vr, nvr, order, value));
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint,
                      fmi2Real communicationStepSize, fmi2Boolean noSetFMUStatePriorToCurrentPoint)
{
    FORWARD(c, fmi2DoStep(INNER(c), currentCommunicationPoint, communicationStepSize,
                          noSetFMUStatePriorToCurrentPoint));
}

fmi2Status fmi2CancelStep(fmi2Component c)
{
    FORWARD(c, fmi2CancelStep(INNER(c)));
}

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value)
{
    FORWARD(c, fmi2GetStatus(INNER(c), s, value));
}

fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value)
{
    FORWARD(c, fmi2GetRealStatus(INNER(c), s, value));
}

fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value)
{
    FORWARD(c, fmi2GetIntegerStatus(INNER(c), s, value));
}

fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value)
{
    FORWARD(c, fmi2GetBooleanStatus(INNER(c), s, value));
}

fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value)
{
    FORWARD(c, fmi2GetStringStatus(INNER(c), s, value));
}
