/*
 * fmi2_block.c -- the FMI 2.0 functions of every titopfmu FMU (CoSimulation and ModelExchange in
 * one FMU): the block FMUs and the linear-model FMU alike, whatever the model.
 *
 * Thin: each function maps onto the model-independent layer fmu.c (fmu.h: the instance, the
 * variables by slot, stepping, FMU state, directional derivatives), which is shared with the
 * FMI 3.0 functions (fmi3_block.c) and calls the model (FMU_MODEL: fmu_block.c,
 * fmi2_state_space.c). A value reference is a slot of fmu.c (one per scalar variable,
 * fmu_config.h).
 *
 * Refusals (bad value, wrong calling sequence, failed evaluation) log a message naming the
 * variable and return fmi2Error; the instance stays usable (reset, restore, free). fmi2Fatal is
 * only returned for a failed allocation.
 */
#include <math.h>

#include "fmi2Functions.h"
#include "fmu.h"

typedef FmuInstance Instance;

/* the host's fmi2CallbackFunctions.logger: the message is passed as "%s" so that a percent sign
   in it reaches the host unchanged */
static void emit2(const Instance *c, int status, const char *category, const char *message)
{
    fmi2CallbackLogger logger = (fmi2CallbackLogger)c->host_logger;
    if (logger)
        logger(c->host_env, c->name, (fmi2Status)status, category, "%s", message);
}

/* ---- instance life cycle ---- */

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation,
                              const fmi2CallbackFunctions *functions, fmi2Boolean visible,
                              fmi2Boolean loggingOn)
{
    (void)fmuResourceLocation;
    (void)visible;
    (void)loggingOn;
    if (!functions || !functions->allocateMemory || !functions->freeMemory)
        return NULL;
    return fmu_new("fmi2", instanceName, fmuType == fmi2CoSimulation, fmuGUID,
                   functions->allocateMemory, functions->freeMemory, emit2,
                   (void (*)(void))functions->logger, functions->componentEnvironment);
}

void fmi2FreeInstance(fmi2Component comp) { fmu_free(comp); }

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component comp, fmi2Boolean on, size_t n,
                               const fmi2String categories[])
{
    (void)n;
    (void)categories;
    ((Instance *)comp)->logging = on;
    return fmi2OK;
}

fmi2Status fmi2SetupExperiment(fmi2Component comp, fmi2Boolean toleranceDefined,
                               fmi2Real tolerance, fmi2Real startTime, fmi2Boolean stopTimeDefined,
                               fmi2Real stopTime)
{
    (void)toleranceDefined;
    (void)tolerance;
    return (fmi2Status)fmu_setup(comp, startTime, stopTimeDefined ? stopTime : INFINITY);
}

fmi2Status fmi2EnterInitializationMode(fmi2Component comp)
{
    return (fmi2Status)fmu_enter_init(comp);
}

fmi2Status fmi2ExitInitializationMode(fmi2Component comp)
{
    return (fmi2Status)fmu_exit_init(comp);
}

fmi2Status fmi2Terminate(fmi2Component comp) { return (fmi2Status)fmu_terminate(comp); }
fmi2Status fmi2Reset(fmi2Component comp) { return (fmi2Status)fmu_reset(comp); }

/* ---- variables ---- */

fmi2Status fmi2GetReal(fmi2Component comp, const fmi2ValueReference vr[], size_t n,
                       fmi2Real value[])
{
    return (fmi2Status)fmu_get(comp, vr, n, T_REAL, value);
}

fmi2Status fmi2GetInteger(fmi2Component comp, const fmi2ValueReference vr[], size_t n,
                          fmi2Integer value[])
{
    Instance *c = comp;
    for (size_t i = 0; i < n; i++) {
        if (fmu_check_slot(c, vr[i], T_INT))
            return fmi2Error;
        value[i] = (fmi2Integer)c->v[vr[i]];
    }
    return fmi2OK;
}

fmi2Status fmi2GetBoolean(fmi2Component comp, const fmi2ValueReference vr[], size_t n,
                          fmi2Boolean value[])
{
    Instance *c = comp;
    for (size_t i = 0; i < n; i++) {
        if (fmu_check_slot(c, vr[i], T_BOOL))
            return fmi2Error;
        value[i] = c->v[vr[i]] != 0.0;
    }
    return fmi2OK;
}

fmi2Status fmi2GetString(fmi2Component comp, const fmi2ValueReference vr[], size_t n,
                         fmi2String value[])
{
    (void)value;
    if (n)
        return (fmi2Status)fmu_refuse(comp, "no String variable (value reference %u)",
                                      (unsigned)vr[0]);
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component comp, const fmi2ValueReference vr[], size_t n,
                       const fmi2Real value[])
{
    return (fmi2Status)fmu_set(comp, vr, n, T_REAL, value);
}

/* integers and booleans through fmu_set, all at once: a refused call changes nothing */
static fmi2Status set_converted(Instance *c, const fmi2ValueReference vr[], size_t n, int type,
                                const fmi2Integer *ints, const fmi2Boolean *bools)
{
    double *buf = c->alloc(n + 1, sizeof(double));
    if (!buf)
        return fmi2Fatal;
    for (size_t i = 0; i < n; i++)
        buf[i] = ints ? (double)ints[i] : (bools[i] != 0);
    fmi2Status st = (fmi2Status)fmu_set(c, vr, n, type, buf);
    c->dealloc(buf);
    return st;
}

fmi2Status fmi2SetInteger(fmi2Component comp, const fmi2ValueReference vr[], size_t n,
                          const fmi2Integer value[])
{
    return set_converted(comp, vr, n, T_INT, value, NULL);
}

fmi2Status fmi2SetBoolean(fmi2Component comp, const fmi2ValueReference vr[], size_t n,
                          const fmi2Boolean value[])
{
    return set_converted(comp, vr, n, T_BOOL, NULL, value);
}

fmi2Status fmi2SetString(fmi2Component comp, const fmi2ValueReference vr[], size_t n,
                         const fmi2String value[])
{
    (void)value;
    if (n)
        return (fmi2Status)fmu_refuse(comp, "no String variable (value reference %u)",
                                      (unsigned)vr[0]);
    return fmi2OK;
}

/* ---- FMU state ---- */

fmi2Status fmi2GetFMUstate(fmi2Component comp, fmi2FMUstate *state)
{
    return (fmi2Status)fmu_state_get(comp, state);
}

fmi2Status fmi2SetFMUstate(fmi2Component comp, fmi2FMUstate state)
{
    if (!state)
        return (fmi2Status)fmu_refuse(comp, "fmi2SetFMUstate: no state");
    return (fmi2Status)fmu_state_set(comp, state);
}

fmi2Status fmi2FreeFMUstate(fmi2Component comp, fmi2FMUstate *state)
{
    fmu_state_free(comp, state);
    return fmi2OK;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component comp, fmi2FMUstate state, size_t *size)
{
    (void)comp;
    (void)state;
    *size = fmu_state_size();
    return fmi2OK;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component comp, fmi2FMUstate state, fmi2Byte bytes[],
                                 size_t size)
{
    return (fmi2Status)fmu_state_serialize(comp, state, (unsigned char *)bytes, size);
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component comp, const fmi2Byte bytes[], size_t size,
                                   fmi2FMUstate *state)
{
    return (fmi2Status)fmu_state_deserialize(comp, (const unsigned char *)bytes, size, state);
}

/* ---- directional derivatives ---- */

fmi2Status fmi2GetDirectionalDerivative(fmi2Component comp, const fmi2ValueReference vUnknown[],
                                        size_t nUnknown, const fmi2ValueReference vKnown[],
                                        size_t nKnown, const fmi2Real dvKnown[],
                                        fmi2Real dvUnknown[])
{
    return (fmi2Status)fmu_directional(comp, vUnknown, nUnknown, vKnown, nKnown, dvKnown,
                                       dvUnknown, "GetDirectionalDerivative");
}

/* ---- co-simulation ---- */

fmi2Status fmi2SetRealInputDerivatives(fmi2Component comp, const fmi2ValueReference vr[],
                                       size_t n, const fmi2Integer order[],
                                       const fmi2Real value[])
{
    return (fmi2Status)fmu_set_input_derivatives(comp, vr, n, order, value);
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component comp, const fmi2ValueReference vr[],
                                        size_t n, const fmi2Integer order[], fmi2Real value[])
{
    return (fmi2Status)fmu_get_output_derivatives(comp, vr, n, order, value,
                                                  "GetRealOutputDerivatives");
}

fmi2Status fmi2DoStep(fmi2Component comp, fmi2Real currentCommunicationPoint,
                      fmi2Real communicationStepSize, fmi2Boolean noSetFMUStatePriorToCurrentPoint)
{
    (void)noSetFMUStatePriorToCurrentPoint;
    return (fmi2Status)fmu_do_step(comp, currentCommunicationPoint, communicationStepSize);
}

fmi2Status fmi2CancelStep(fmi2Component comp)
{
    return (fmi2Status)fmu_refuse(comp, "fmi2CancelStep: steps are synchronous");
}

static fmi2Status status_of(fmi2Component comp, int kind)
{
    (void)kind;
    return (fmi2Status)fmu_refuse(comp, "no asynchronous step status");
}

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *v)
{
    (void)v;
    return status_of(c, s);
}
fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *v)
{
    Instance *inst = c;
    if (s == fmi2LastSuccessfulTime) {
        *v = inst->t;
        return fmi2OK;
    }
    return status_of(c, s);
}
fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *v)
{
    (void)v;
    return status_of(c, s);
}
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *v)
{
    if (s == fmi2Terminated) {
        *v = fmi2False;
        return fmi2OK;
    }
    return status_of(c, s);
}
fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *v)
{
    (void)v;
    return status_of(c, s);
}

/* ---- model exchange ---- */

fmi2Status fmi2EnterEventMode(fmi2Component comp)
{
    return (fmi2Status)fmu_enter_event_mode(comp);
}

fmi2Status fmi2NewDiscreteStates(fmi2Component comp, fmi2EventInfo *info)
{
    if (fmu_event_update(comp, "NewDiscreteStates"))
        return fmi2Error;
    info->newDiscreteStatesNeeded = fmi2False;
    info->terminateSimulation = fmi2False;
    info->nominalsOfContinuousStatesChanged = fmi2False;
    info->valuesOfContinuousStatesChanged = fmi2False;
    info->nextEventTimeDefined = fmi2False;
    info->nextEventTime = 0.0;
    return fmi2OK;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component comp)
{
    return (fmi2Status)fmu_enter_continuous_time_mode(comp);
}

fmi2Status fmi2CompletedIntegratorStep(fmi2Component comp, fmi2Boolean noSetFMUStatePrior,
                                       fmi2Boolean *enterEventMode, fmi2Boolean *terminate)
{
    (void)noSetFMUStatePrior;
    if (fmu_me_call(comp, "CompletedIntegratorStep", IN_MODES(M_CONT)))
        return fmi2Error;
    *enterEventMode = fmi2False;
    *terminate = fmi2False;
    return fmi2OK;
}

fmi2Status fmi2SetTime(fmi2Component comp, fmi2Real time)
{
    return (fmi2Status)fmu_set_time(comp, time);
}

fmi2Status fmi2SetContinuousStates(fmi2Component comp, const fmi2Real x[], size_t nx)
{
    return (fmi2Status)fmu_set_states(comp, x, nx, "SetContinuousStates");
}

fmi2Status fmi2GetDerivatives(fmi2Component comp, fmi2Real derivatives[], size_t nx)
{
    return (fmi2Status)fmu_get_derivatives(comp, derivatives, nx, "GetDerivatives");
}

fmi2Status fmi2GetEventIndicators(fmi2Component comp, fmi2Real indicators[], size_t ni)
{
    (void)indicators;
    if (ni)
        return (fmi2Status)fmu_refuse(comp, "the FMU has no event indicator");
    return fmi2OK;
}

fmi2Status fmi2GetContinuousStates(fmi2Component comp, fmi2Real x[], size_t nx)
{
    return (fmi2Status)fmu_get_states(comp, x, nx, "GetContinuousStates");
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component comp, fmi2Real nominals[], size_t nx)
{
    return (fmi2Status)fmu_get_nominals(comp, nominals, nx, "GetNominalsOfContinuousStates");
}
