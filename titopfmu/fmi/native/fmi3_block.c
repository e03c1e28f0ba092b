/*
 * fmi3_block.c -- the FMI 3.0 functions of every titopfmu FMU (ModelExchange and CoSimulation in
 * one FMU), whatever the model.
 *
 * Thin, like fmi2_block.c: everything maps onto the model-independent layer fmu.c (fmu.h:
 * instance, variables, stepping, FMU state, directional derivatives), which calls the model
 * (FMU_MODEL). What is FMI 3.0's own: value reference 0 is the independent variable 'time'; a
 * port or a vector/matrix parameter is one array variable (its value reference covers
 * consecutive slots of fmu.c, FMU3_VARS in fmu_config.h), so a call's value references are
 * expanded into slots and its nValues checked; Float64, Int32 and Boolean variables (no
 * others); the host's logger takes the finished message; memory comes from calloc/free (FMI
 * 3.0 has no allocation callbacks). Co-simulation holds the inputs over a step (FMI 3.0 has no
 * input derivatives); there is no event mode in co-simulation, no clock and no configuration
 * mode. fmi3GetAdjointDerivative is computed column by column from the directional
 * derivatives.
 *
 * Refusals log a message naming the variable and return fmi3Error; the instance stays usable.
 * fmi3Fatal only for a failed allocation.
 */
#include <stdbool.h>
#include <stdlib.h>

#include <math.h>

#include "fmi3Functions.h"
#include "fmu.h"

typedef FmuInstance Instance;

static void emit3(const Instance *c, int status, const char *category, const char *message)
{
    fmi3LogMessageCallback logger = (fmi3LogMessageCallback)c->host_logger;
    if (logger)
        logger(c->host_env, (fmi3Status)status, category, message);
}

/* ---- value references -> slots ---- */

#define LOCAL_SLOTS 256

typedef struct {
    unsigned *slot;
    size_t n;
    unsigned local[LOCAL_SLOTS];
} Slots;

/* The slots of the variables vr[0..nvr) in order (an array's elements row-major); their number
   must be nValues. 'time' (value reference 0) only where allow_time. */
static int expand(Instance *c, const fmi3ValueReference vr[], size_t nvr, size_t nValues,
                  int allow_time, const char *what, Slots *s)
{
    size_t total = 0;
    s->slot = s->local;
    s->n = 0;
    for (size_t i = 0; i < nvr; i++) {
        if (vr[i] >= FMU3_NVARS)
            return fmu_refuse(c, "%s: no variable with value reference %u", what,
                              (unsigned)vr[i]);
        if (vr[i] == 0 && !allow_time)
            return fmu_refuse(c, "%s: 'time' (value reference 0) is the independent variable",
                              what);
        total += (size_t)FMU3_VARS[vr[i]][1];
    }
    if (total != nValues)
        return fmu_refuse(c, "%s: %zu values passed, the %zu variables have %zu", what, nValues,
                          nvr, total);
    if (total > LOCAL_SLOTS) {
        s->slot = c->alloc(total, sizeof(unsigned));
        if (!s->slot)
            return FMU_FATAL;
    }
    for (size_t i = 0; i < nvr; i++) {
        if (vr[i] == 0) {
            s->slot[s->n++] = FMU_TIME_SLOT;
            continue;
        }
        for (int k = 0; k < FMU3_VARS[vr[i]][1]; k++)
            s->slot[s->n++] = (unsigned)(FMU3_VARS[vr[i]][0] + k);
    }
    return FMU_OK;
}

static void release(Instance *c, Slots *s)
{
    if (s->slot != s->local)
        c->dealloc(s->slot);
    s->slot = s->local;
}

/* ---- instance life cycle ---- */

fmi3Instance fmi3InstantiateModelExchange(fmi3String instanceName,
                                          fmi3String instantiationToken,
                                          fmi3String resourcePath, fmi3Boolean visible,
                                          fmi3Boolean loggingOn,
                                          fmi3InstanceEnvironment instanceEnvironment,
                                          fmi3LogMessageCallback logMessage)
{
    (void)resourcePath;
    (void)visible;
    (void)loggingOn;
    return fmu_new("fmi3", instanceName, 0, instantiationToken, calloc, free, emit3,
                   (void (*)(void))logMessage, instanceEnvironment);
}

fmi3Instance fmi3InstantiateCoSimulation(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath,
    fmi3Boolean visible, fmi3Boolean loggingOn, fmi3Boolean eventModeUsed,
    fmi3Boolean earlyReturnAllowed, const fmi3ValueReference requiredIntermediateVariables[],
    size_t nRequiredIntermediateVariables, fmi3InstanceEnvironment instanceEnvironment,
    fmi3LogMessageCallback logMessage, fmi3IntermediateUpdateCallback intermediateUpdate)
{
    (void)resourcePath;
    (void)visible;
    (void)loggingOn;
    (void)earlyReturnAllowed;
    (void)requiredIntermediateVariables;
    (void)nRequiredIntermediateVariables;
    (void)intermediateUpdate;
    Instance *c = fmu_new("fmi3", instanceName, 1, instantiationToken, calloc, free, emit3,
                          (void (*)(void))logMessage, instanceEnvironment);
    if (c && eventModeUsed) {
        fmu_refuse(c, "fmi3InstantiateCoSimulation: eventModeUsed, but the FMU has no event "
                      "mode in co-simulation (hasEventMode is false)");
        fmu_free(c);
        return NULL;
    }
    return c;
}

fmi3Instance fmi3InstantiateScheduledExecution(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath,
    fmi3Boolean visible, fmi3Boolean loggingOn, fmi3InstanceEnvironment instanceEnvironment,
    fmi3LogMessageCallback logMessage, fmi3ClockUpdateCallback clockUpdate,
    fmi3LockPreemptionCallback lockPreemption, fmi3UnlockPreemptionCallback unlockPreemption)
{
    (void)instanceName;
    (void)instantiationToken;
    (void)resourcePath;
    (void)visible;
    (void)loggingOn;
    (void)clockUpdate;
    (void)lockPreemption;
    (void)unlockPreemption;
    if (logMessage)
        logMessage(instanceEnvironment, fmi3Error, "logStatusError",
                   "FMU " FMU_MODEL_NAME ": no scheduled execution (model exchange and "
                   "co-simulation only)");
    return NULL;
}

void fmi3FreeInstance(fmi3Instance instance) { fmu_free(instance); }

const char *fmi3GetVersion(void) { return fmi3Version; }

fmi3Status fmi3SetDebugLogging(fmi3Instance instance, fmi3Boolean loggingOn, size_t nCategories,
                               const fmi3String categories[])
{
    (void)nCategories;
    (void)categories;
    ((Instance *)instance)->logging = loggingOn;
    return fmi3OK;
}

fmi3Status fmi3EnterInitializationMode(fmi3Instance instance, fmi3Boolean toleranceDefined,
                                       fmi3Float64 tolerance, fmi3Float64 startTime,
                                       fmi3Boolean stopTimeDefined, fmi3Float64 stopTime)
{
    (void)toleranceDefined;
    (void)tolerance;
    int st = fmu_setup(instance, startTime, stopTimeDefined ? stopTime : INFINITY);
    return (fmi3Status)(st ? st : fmu_enter_init(instance));
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance instance)
{
    return (fmi3Status)fmu_exit_init(instance);
}

fmi3Status fmi3EnterEventMode(fmi3Instance instance)
{
    return (fmi3Status)fmu_enter_event_mode(instance);
}

fmi3Status fmi3Terminate(fmi3Instance instance) { return (fmi3Status)fmu_terminate(instance); }
fmi3Status fmi3Reset(fmi3Instance instance) { return (fmi3Status)fmu_reset(instance); }

/* ---- variables: Float64, Int32 and Boolean ---- */

fmi3Status fmi3GetFloat64(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                          fmi3Float64 values[], size_t nValues)
{
    Instance *c = instance;
    Slots s;
    int st = expand(c, vr, nvr, nValues, 1, "fmi3GetFloat64", &s);
    if (st == FMU_OK)
        st = fmu_get(c, s.slot, s.n, T_REAL, values);
    release(c, &s);
    return (fmi3Status)st;
}

fmi3Status fmi3SetFloat64(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                          const fmi3Float64 values[], size_t nValues)
{
    Instance *c = instance;
    Slots s;
    int st = expand(c, vr, nvr, nValues, 1, "fmi3SetFloat64", &s);
    if (st == FMU_OK)
        st = fmu_set(c, s.slot, s.n, T_REAL, values);
    release(c, &s);
    return (fmi3Status)st;
}

/* Int32 and Boolean through doubles, all at once: a refused call changes nothing */
static int get_converted(Instance *c, const fmi3ValueReference vr[], size_t nvr,
                         size_t nValues, int type, fmi3Int32 *ints, fmi3Boolean *bools)
{
    Slots s;
    int st = expand(c, vr, nvr, nValues, 0, type == T_INT ? "fmi3GetInt32" : "fmi3GetBoolean",
                    &s);
    if (st != FMU_OK)
        return st;
    double *buf = c->alloc(s.n + 1, sizeof(double));
    if (!buf) {
        release(c, &s);
        return FMU_FATAL;
    }
    st = fmu_get(c, s.slot, s.n, type, buf);
    for (size_t i = 0; st == FMU_OK && i < s.n; i++) {
        if (ints)
            ints[i] = (fmi3Int32)buf[i];
        else
            bools[i] = buf[i] != 0.0;
    }
    c->dealloc(buf);
    release(c, &s);
    return st;
}

static int set_converted(Instance *c, const fmi3ValueReference vr[], size_t nvr,
                         size_t nValues, int type, const fmi3Int32 *ints,
                         const fmi3Boolean *bools)
{
    Slots s;
    int st = expand(c, vr, nvr, nValues, 0, type == T_INT ? "fmi3SetInt32" : "fmi3SetBoolean",
                    &s);
    if (st != FMU_OK)
        return st;
    double *buf = c->alloc(s.n + 1, sizeof(double));
    if (!buf) {
        release(c, &s);
        return FMU_FATAL;
    }
    for (size_t i = 0; i < s.n; i++)
        buf[i] = ints ? (double)ints[i] : (bools[i] ? 1.0 : 0.0);
    st = fmu_set(c, s.slot, s.n, type, buf);
    c->dealloc(buf);
    release(c, &s);
    return st;
}

fmi3Status fmi3GetInt32(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                        fmi3Int32 values[], size_t nValues)
{
    return (fmi3Status)get_converted(instance, vr, nvr, nValues, T_INT, values, NULL);
}

fmi3Status fmi3SetInt32(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                        const fmi3Int32 values[], size_t nValues)
{
    return (fmi3Status)set_converted(instance, vr, nvr, nValues, T_INT, values, NULL);
}

fmi3Status fmi3GetBoolean(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                          fmi3Boolean values[], size_t nValues)
{
    return (fmi3Status)get_converted(instance, vr, nvr, nValues, T_BOOL, NULL, values);
}

fmi3Status fmi3SetBoolean(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                          const fmi3Boolean values[], size_t nValues)
{
    return (fmi3Status)set_converted(instance, vr, nvr, nValues, T_BOOL, NULL, values);
}

/* the types the FMU has no variable of */
static fmi3Status no_type(fmi3Instance instance, const char *type,
                          const fmi3ValueReference vr[], size_t nvr)
{
    if (!nvr)
        return fmi3OK;
    return (fmi3Status)fmu_refuse(instance, "no %s variable (value reference %u)", type,
                                  (unsigned)vr[0]);
}

#define NO_TYPE(T)                                                                             \
    fmi3Status fmi3Get##T(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,     \
                          fmi3##T values[], size_t nValues)                                    \
    {                                                                                          \
        (void)values;                                                                          \
        (void)nValues;                                                                         \
        return no_type(instance, #T, vr, nvr);                                                 \
    }                                                                                          \
    fmi3Status fmi3Set##T(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,     \
                          const fmi3##T values[], size_t nValues)                              \
    {                                                                                          \
        (void)values;                                                                          \
        (void)nValues;                                                                         \
        return no_type(instance, #T, vr, nvr);                                                 \
    }

NO_TYPE(Float32)
NO_TYPE(Int8)
NO_TYPE(UInt8)
NO_TYPE(Int16)
NO_TYPE(UInt16)
NO_TYPE(UInt32)
NO_TYPE(Int64)
NO_TYPE(UInt64)
NO_TYPE(String)

fmi3Status fmi3GetBinary(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                         size_t valueSizes[], fmi3Binary values[], size_t nValues)
{
    (void)valueSizes;
    (void)values;
    (void)nValues;
    return no_type(instance, "Binary", vr, nvr);
}

fmi3Status fmi3SetBinary(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                         const size_t valueSizes[], const fmi3Binary values[], size_t nValues)
{
    (void)valueSizes;
    (void)values;
    (void)nValues;
    return no_type(instance, "Binary", vr, nvr);
}

fmi3Status fmi3GetClock(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                        fmi3Clock values[])
{
    (void)values;
    return no_type(instance, "Clock", vr, nvr);
}

fmi3Status fmi3SetClock(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                        const fmi3Clock values[])
{
    (void)values;
    return no_type(instance, "Clock", vr, nvr);
}

/* ---- what the FMU does not have: clocks, configuration mode, per-element dependencies ---- */

static fmi3Status not_provided(fmi3Instance instance, const char *what)
{
    return (fmi3Status)fmu_refuse(instance, "%s: not provided by this FMU", what);
}

fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance instance,
                                               fmi3ValueReference valueReference,
                                               size_t *nDependencies)
{
    (void)valueReference;
    (void)nDependencies;
    return not_provided(instance, "fmi3GetNumberOfVariableDependencies (the dependencies are "
                                  "in modelDescription.xml)");
}

fmi3Status fmi3GetVariableDependencies(fmi3Instance instance, fmi3ValueReference dependent,
                                       size_t elementIndicesOfDependent[],
                                       fmi3ValueReference independents[],
                                       size_t elementIndicesOfIndependents[],
                                       fmi3DependencyKind dependencyKinds[],
                                       size_t nDependencies)
{
    (void)dependent;
    (void)elementIndicesOfDependent;
    (void)independents;
    (void)elementIndicesOfIndependents;
    (void)dependencyKinds;
    (void)nDependencies;
    return not_provided(instance, "fmi3GetVariableDependencies (the dependencies are in "
                                  "modelDescription.xml)");
}

fmi3Status fmi3EnterConfigurationMode(fmi3Instance instance)
{
    return not_provided(instance, "fmi3EnterConfigurationMode (no structural parameter)");
}

fmi3Status fmi3ExitConfigurationMode(fmi3Instance instance)
{
    return not_provided(instance, "fmi3ExitConfigurationMode (no structural parameter)");
}

fmi3Status fmi3GetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference vr[],
                                  size_t nvr, fmi3Float64 intervals[],
                                  fmi3IntervalQualifier qualifiers[])
{
    (void)intervals;
    (void)qualifiers;
    return no_type(instance, "Clock", vr, nvr);
}

fmi3Status fmi3GetIntervalFraction(fmi3Instance instance, const fmi3ValueReference vr[],
                                   size_t nvr, fmi3UInt64 counters[], fmi3UInt64 resolutions[],
                                   fmi3IntervalQualifier qualifiers[])
{
    (void)counters;
    (void)resolutions;
    (void)qualifiers;
    return no_type(instance, "Clock", vr, nvr);
}

fmi3Status fmi3GetShiftDecimal(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                               fmi3Float64 shifts[])
{
    (void)shifts;
    return no_type(instance, "Clock", vr, nvr);
}

fmi3Status fmi3GetShiftFraction(fmi3Instance instance, const fmi3ValueReference vr[],
                                size_t nvr, fmi3UInt64 counters[], fmi3UInt64 resolutions[])
{
    (void)counters;
    (void)resolutions;
    return no_type(instance, "Clock", vr, nvr);
}

fmi3Status fmi3SetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference vr[],
                                  size_t nvr, const fmi3Float64 intervals[])
{
    (void)intervals;
    return no_type(instance, "Clock", vr, nvr);
}

fmi3Status fmi3SetIntervalFraction(fmi3Instance instance, const fmi3ValueReference vr[],
                                   size_t nvr, const fmi3UInt64 counters[],
                                   const fmi3UInt64 resolutions[])
{
    (void)counters;
    (void)resolutions;
    return no_type(instance, "Clock", vr, nvr);
}

fmi3Status fmi3SetShiftDecimal(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                               const fmi3Float64 shifts[])
{
    (void)shifts;
    return no_type(instance, "Clock", vr, nvr);
}

fmi3Status fmi3SetShiftFraction(fmi3Instance instance, const fmi3ValueReference vr[],
                                size_t nvr, const fmi3UInt64 counters[],
                                const fmi3UInt64 resolutions[])
{
    (void)counters;
    (void)resolutions;
    return no_type(instance, "Clock", vr, nvr);
}

fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance instance)
{
    (void)instance;
    return fmi3OK; /* no discrete state */
}

fmi3Status fmi3ActivateModelPartition(fmi3Instance instance, fmi3ValueReference clockReference,
                                      fmi3Float64 activationTime)
{
    (void)clockReference;
    (void)activationTime;
    return not_provided(instance, "fmi3ActivateModelPartition (no scheduled execution)");
}

/* ---- FMU state ---- */

fmi3Status fmi3GetFMUState(fmi3Instance instance, fmi3FMUState *state)
{
    return (fmi3Status)fmu_state_get(instance, state);
}

fmi3Status fmi3SetFMUState(fmi3Instance instance, fmi3FMUState state)
{
    return (fmi3Status)fmu_state_set(instance, state);
}

fmi3Status fmi3FreeFMUState(fmi3Instance instance, fmi3FMUState *state)
{
    fmu_state_free(instance, state);
    return fmi3OK;
}

fmi3Status fmi3SerializedFMUStateSize(fmi3Instance instance, fmi3FMUState state, size_t *size)
{
    (void)instance;
    (void)state;
    *size = fmu_state_size();
    return fmi3OK;
}

fmi3Status fmi3SerializeFMUState(fmi3Instance instance, fmi3FMUState state, fmi3Byte bytes[],
                                 size_t size)
{
    return (fmi3Status)fmu_state_serialize(instance, state, bytes, size);
}

fmi3Status fmi3DeserializeFMUState(fmi3Instance instance, const fmi3Byte bytes[], size_t size,
                                   fmi3FMUState *state)
{
    return (fmi3Status)fmu_state_deserialize(instance, bytes, size, state);
}

/* ---- partial derivatives ---- */

fmi3Status fmi3GetDirectionalDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[],
                                        size_t nUnknowns, const fmi3ValueReference knowns[],
                                        size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
                                        fmi3Float64 sensitivity[], size_t nSensitivity)
{
    Instance *c = instance;
    Slots u, k;
    int st = expand(c, unknowns, nUnknowns, nSensitivity, 0, "fmi3GetDirectionalDerivative", &u);
    if (st != FMU_OK)
        return (fmi3Status)st;
    st = expand(c, knowns, nKnowns, nSeed, 0, "fmi3GetDirectionalDerivative", &k);
    if (st == FMU_OK)
        st = fmu_directional(c, u.slot, u.n, k.slot, k.n, seed, sensitivity,
                             "GetDirectionalDerivative");
    release(c, &k);
    release(c, &u);
    return (fmi3Status)st;
}

/* sensitivity = seed^T J (J: d unknowns / d knowns), one column of J per known element */
fmi3Status fmi3GetAdjointDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[],
                                    size_t nUnknowns, const fmi3ValueReference knowns[],
                                    size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
                                    fmi3Float64 sensitivity[], size_t nSensitivity)
{
    Instance *c = instance;
    Slots u, k;
    int st = expand(c, unknowns, nUnknowns, nSeed, 0, "fmi3GetAdjointDerivative", &u);
    if (st != FMU_OK)
        return (fmi3Status)st;
    st = expand(c, knowns, nKnowns, nSensitivity, 0, "fmi3GetAdjointDerivative", &k);
    double *col = st == FMU_OK ? c->alloc(u.n + 1, sizeof(double)) : NULL;
    if (st == FMU_OK && !col)
        st = FMU_FATAL;
    const double one = 1.0;
    for (size_t j = 0; st == FMU_OK && j < k.n; j++) {
        st = fmu_directional(c, u.slot, u.n, &k.slot[j], 1, &one, col,
                             "GetAdjointDerivative");
        double s = 0.0;
        for (size_t i = 0; i < u.n; i++)
            s += seed[i] * col[i];
        if (st == FMU_OK)
            sensitivity[j] = s;
    }
    if (col)
        c->dealloc(col);
    release(c, &k);
    release(c, &u);
    return (fmi3Status)st;
}

/* ---- model exchange ---- */

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance instance, fmi3Boolean *discreteStatesNeedUpdate,
                                    fmi3Boolean *terminateSimulation,
                                    fmi3Boolean *nominalsOfContinuousStatesChanged,
                                    fmi3Boolean *valuesOfContinuousStatesChanged,
                                    fmi3Boolean *nextEventTimeDefined,
                                    fmi3Float64 *nextEventTime)
{
    if (fmu_event_update(instance, "UpdateDiscreteStates"))
        return fmi3Error;
    *discreteStatesNeedUpdate = false;
    *terminateSimulation = false;
    *nominalsOfContinuousStatesChanged = false;
    *valuesOfContinuousStatesChanged = false;
    *nextEventTimeDefined = false;
    *nextEventTime = 0.0;
    return fmi3OK;
}

fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance instance)
{
    return (fmi3Status)fmu_enter_continuous_time_mode(instance);
}

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance instance,
                                       fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi3Boolean *enterEventMode,
                                       fmi3Boolean *terminateSimulation)
{
    (void)noSetFMUStatePriorToCurrentPoint;
    if (fmu_me_call(instance, "CompletedIntegratorStep", IN_MODES(M_CONT)))
        return fmi3Error;
    *enterEventMode = false;
    *terminateSimulation = false;
    return fmi3OK;
}

fmi3Status fmi3SetTime(fmi3Instance instance, fmi3Float64 time)
{
    return (fmi3Status)fmu_set_time(instance, time);
}

fmi3Status fmi3SetContinuousStates(fmi3Instance instance, const fmi3Float64 x[], size_t nx)
{
    return (fmi3Status)fmu_set_states(instance, x, nx, "SetContinuousStates");
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance instance, fmi3Float64 derivatives[],
                                             size_t nx)
{
    return (fmi3Status)fmu_get_derivatives(instance, derivatives, nx,
                                           "GetContinuousStateDerivatives");
}

fmi3Status fmi3GetEventIndicators(fmi3Instance instance, fmi3Float64 indicators[], size_t ni)
{
    (void)indicators;
    if (ni)
        return (fmi3Status)fmu_refuse(instance, "the FMU has no event indicator");
    return fmi3OK;
}

fmi3Status fmi3GetContinuousStates(fmi3Instance instance, fmi3Float64 x[], size_t nx)
{
    return (fmi3Status)fmu_get_states(instance, x, nx, "GetContinuousStates");
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance instance, fmi3Float64 nominals[],
                                             size_t nx)
{
    return (fmi3Status)fmu_get_nominals(instance, nominals, nx,
                                        "GetNominalsOfContinuousStates");
}

fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance instance, size_t *n)
{
    (void)instance;
    *n = 0;
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance instance, size_t *n)
{
    (void)instance;
    *n = FMU_NX;
    return fmi3OK;
}

/* ---- co-simulation ---- */

fmi3Status fmi3EnterStepMode(fmi3Instance instance)
{
    return (fmi3Status)fmu_refuse(instance, "fmi3EnterStepMode: the FMU has no event mode in "
                                            "co-simulation (hasEventMode is false)");
}

/* the order of each variable for each of its slots */
fmi3Status fmi3GetOutputDerivatives(fmi3Instance instance, const fmi3ValueReference vr[],
                                    size_t nvr, const fmi3Int32 orders[], fmi3Float64 values[],
                                    size_t nValues)
{
    Instance *c = instance;
    if (!nvr)
        return fmi3OK;
    Slots s;
    int st = expand(c, vr, nvr, nValues, 0, "fmi3GetOutputDerivatives", &s);
    if (st != FMU_OK)
        return (fmi3Status)st;
    int *order = c->alloc(s.n + 1, sizeof(int));
    if (!order)
        st = FMU_FATAL;
    for (size_t i = 0, j = 0; order && i < nvr; i++)
        for (int k = 0; k < FMU3_VARS[vr[i]][1]; k++)
            order[j++] = orders[i];
    if (order)
        st = fmu_get_output_derivatives(c, s.slot, s.n, order, values, "GetOutputDerivatives");
    if (order)
        c->dealloc(order);
    release(c, &s);
    return (fmi3Status)st;
}

fmi3Status fmi3DoStep(fmi3Instance instance, fmi3Float64 currentCommunicationPoint,
                      fmi3Float64 communicationStepSize,
                      fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                      fmi3Boolean *eventHandlingNeeded, fmi3Boolean *terminateSimulation,
                      fmi3Boolean *earlyReturn, fmi3Float64 *lastSuccessfulTime)
{
    Instance *c = instance;
    (void)noSetFMUStatePriorToCurrentPoint;
    int st = fmu_do_step(c, currentCommunicationPoint, communicationStepSize);
    if (eventHandlingNeeded)
        *eventHandlingNeeded = false;
    if (terminateSimulation)
        *terminateSimulation = false;
    if (earlyReturn)
        *earlyReturn = false;
    if (lastSuccessfulTime)
        *lastSuccessfulTime = c->t;
    return (fmi3Status)st;
}
