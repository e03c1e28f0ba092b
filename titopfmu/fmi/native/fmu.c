/*
 * fmu.c -- the model-independent layer of every titopfmu FMU (fmu.h): the instance and its
 * calling sequence, the variables by slot, refusals and the log, the FMU state, the
 * communication step (the internal Runge-Kutta loop, or the model's own step), model exchange,
 * the checks of a directional derivative. What the model computes is behind FMU_MODEL.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmu.h"

typedef FmuInstance Instance;

const char *const FMU_MODE_NAME[] = {"instantiated",  "initialization mode", "step mode",
                                     "event mode",    "continuous-time mode", "terminated",
                                     "error"};
#define MODE_NAME FMU_MODE_NAME

#define STATE_MAGIC 0x54495431u /* "TIT1" */

/* slot s is one of the n slots from lo */
static int in_range(unsigned s, int lo, int n)
{
    return n > 0 && s >= (unsigned)lo && s - (unsigned)lo < (unsigned)n;
}
#define IS_X(s) in_range((s), FMU_X_VR0, FMU_NX)

static const char *slot_name(unsigned s) { return s < FMU_NVARS ? FMU_VAR_NAME[s] : "?"; }
#define IS_DX(s) in_range((s), FMU_DX_VR0, FMU_NX)

/* ---- messages ---- */

static void vlog(Instance *c, int st, const char *fmt, va_list ap)
{
    char buf[640];
    vsnprintf(buf, sizeof buf, fmt, ap);
    if (c->emit && c->logging)
        c->emit(c, st,
                st == FMU_OK ? "logAll" : st == FMU_WARNING ? "logStatusWarning" : "logStatusError",
                buf);
}

void fmu_log(Instance *c, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(c, status, fmt, ap);
    va_end(ap);
}

/* a double as Python's repr prints it (shortest round trip, ".0" on integers): messages read
   the same as the values the host passed */
FmuNum fmu_num(double x)
{
    FmuNum n;
    if (isnan(x)) {
        strcpy(n.s, "nan");
        return n;
    }
    if (isinf(x)) {
        strcpy(n.s, x > 0 ? "inf" : "-inf");
        return n;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(n.s, sizeof n.s, "%.*g", prec, x);
        if (strtod(n.s, NULL) == x)
            break;
    }
    if (!strpbrk(n.s, ".en"))
        strcat(n.s, ".0");
    return n;
}
#define num fmu_num

int fmu_refuse(Instance *c, const char *fmt, ...)
{
    char buf[560];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fmu_log(c, FMU_ERROR, "FMU instance '%s' (%s): %s", c->name, FMU_MODEL_NAME, buf);
    return FMU_ERROR;
}

/* ---- the model ---- */

int fmu_build(Instance *c) { return FMU_MODEL.build ? FMU_MODEL.build(c) : FMU_OK; }

void fmu_touch(Instance *c, int parameters) { FMU_MODEL.touch(c, parameters); }

/* the start values: every variable, and the states from theirs */
static void start_values(Instance *c)
{
    memcpy(c->v, FMU_DEFAULT, sizeof c->v);
    memset(c->du, 0, sizeof c->du);
    memset(c->x, 0, sizeof c->x);
    for (int k = 0; k < FMU_NX; k++)
        c->x[k] = FMU_DEFAULT[FMU_X_VR0 + k];
}

/* ---- instance life cycle ---- */

FmuInstance *fmu_new(const char *api, const char *name, int cs, const char *token,
                     void *(*alloc)(size_t, size_t), void (*dealloc)(void *), FmuEmit emit,
                     void (*host_logger)(void), void *host_env)
{
    Instance *c = alloc(1, sizeof(Instance));
    if (!c)
        return NULL;
    c->api = api;
    c->alloc = alloc;
    c->dealloc = dealloc;
    c->emit = emit;
    c->host_logger = host_logger;
    c->host_env = host_env;
    const char *nm = name && *name ? name : "fmu";
    c->name = alloc(strlen(nm) + 1, 1);
    if (!c->name) {
        dealloc(c);
        return NULL;
    }
    strcpy(c->name, nm);
    c->logging = 1;
    if (!token || strcmp(token, FMU_GUID) != 0) {
        fmu_refuse(c, "%s '%s' does not match this FMU's '%s'",
                   api[3] == '3' ? "instantiation token" : "GUID", token ? token : "", FMU_GUID);
        dealloc(c->name);
        dealloc(c);
        return NULL;
    }
    c->cs = cs;
    c->mode = M_INSTANTIATED;
    c->stop = INFINITY;
    start_values(c);
    c->m = alloc(1, FMU_MODEL.size);
    if (!c->m || (FMU_MODEL.init && FMU_MODEL.init(c) != FMU_OK)) {
        fmu_free(c);
        return NULL;
    }
    fmu_touch(c, 1);
    return c;
}

void fmu_free(Instance *c)
{
    if (!c)
        return;
    void (*fr)(void *) = c->dealloc;
    if (c->m) {
        if (FMU_MODEL.free)
            FMU_MODEL.free(c);
        fr(c->m);
    }
    fr(c->name);
    fr(c);
}

int fmu_setup(Instance *c, double startTime, double stopTime)
{
    if (c->mode != M_INSTANTIATED)
        return fmu_refuse(c, "%s%s called in %s", c->api,
                          c->api[3] == '3' ? "EnterInitializationMode" : "SetupExperiment",
                          MODE_NAME[c->mode]);
    if (!isfinite(startTime))
        return fmu_refuse(c, "start time %s is not finite", num(startTime).s);
    if (isnan(stopTime) || stopTime < startTime)
        return fmu_refuse(c, "stop time %s is before the start time %s", num(stopTime).s,
                          num(startTime).s);
    c->t = startTime;
    c->stop = stopTime;
    return FMU_OK;
}

int fmu_enter_init(Instance *c)
{
    if (c->mode != M_INSTANTIATED)
        return fmu_refuse(c, "%sEnterInitializationMode called in %s", c->api,
                          MODE_NAME[c->mode]);
    int bs = fmu_build(c);
    if (bs != FMU_OK)
        return bs;
    c->mode = M_INIT;
    return FMU_OK;
}

int fmu_exit_init(Instance *c)
{
    if (c->mode != M_INIT)
        return fmu_refuse(c, "%sExitInitializationMode called in %s", c->api,
                          MODE_NAME[c->mode]);
    int bs = fmu_build(c);
    if (bs != FMU_OK)
        return bs;
    c->mode = c->cs ? M_STEP : M_EVENT;
    return FMU_OK;
}

int fmu_terminate(Instance *c)
{
    c->mode = M_TERMINATED;
    return FMU_OK;
}

int fmu_reset(Instance *c)
{
    start_values(c);
    c->t = 0.0;
    fmu_touch(c, 1);
    c->mode = M_INSTANTIATED;
    c->stop = INFINITY;
    return FMU_OK;
}

/* ---- variables ---- */

int fmu_check_slot(Instance *c, unsigned vr, int type)
{
    static const char *const TYPE[][3] = {{"Real", "Integer", "Boolean"},
                                          {"Float64", "Int32", "Boolean"}};
    if (vr >= FMU_NVARS)
        return fmu_refuse(c, "no variable with value reference %u", (unsigned)vr);
    if (FMU_VAR_TYPE[vr] != type)
        return fmu_refuse(c, "variable '%s' is not of type %s", FMU_VAR_NAME[vr],
                          TYPE[c->api[3] == '3'][type]);
    return FMU_OK;
}

int fmu_get(Instance *c, const unsigned vr[], size_t n, int type, double *out)
{
    int outputs = 0; /* outputs asked for */
    int locals = 0;  /* computed states or state derivatives asked for */
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == FMU_TIME_SLOT && type == T_REAL && c->api[3] == '3')
            continue;
        if (fmu_check_slot(c, vr[i], type))
            return FMU_ERROR;
        outputs |= FMU_VAR_CAUS[vr[i]] == C_OUTPUT;
        locals |= FMU_VAR_CAUS[vr[i]] == C_LOCAL;
    }
    if (outputs || locals) {
        if (c->mode == M_INSTANTIATED)
            return fmu_refuse(c, "outputs are available from %sEnterInitializationMode on", c->api);
        int st = outputs ? FMU_MODEL.outputs(c, vr, n) : FMU_OK;
        if (st == FMU_OK && locals)
            st = FMU_MODEL.derivatives(c);
        if (st != FMU_OK)
            return st;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned s = vr[i];
        out[i] = s == FMU_TIME_SLOT ? c->t
                 : IS_X(s)          ? c->x[s - FMU_X_VR0]
                 : IS_DX(s)         ? c->dx[s - FMU_DX_VR0]
                                    : c->v[s];
    }
    return FMU_OK;
}

/* Check every value first: a refused call changes nothing. */
int fmu_set(Instance *c, const unsigned vr[], size_t n, int type, const double *val)
{
    if (c->mode == M_TERMINATED || c->mode == M_ERROR)
        return fmu_refuse(c, "cannot set '%s' after %sTerminate (%s)",
                          n && vr[0] < FMU_NVARS ? FMU_VAR_NAME[vr[0]] : "?", c->api,
                          MODE_NAME[c->mode]);
    int early = c->mode == M_INSTANTIATED || c->mode == M_INIT;
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == FMU_TIME_SLOT && c->api[3] == '3')
            return fmu_refuse(c, "'time' is the independent variable and cannot be set");
        if (fmu_check_slot(c, vr[i], type))
            return FMU_ERROR;
        int caus = FMU_VAR_CAUS[vr[i]];
        const char *nm = FMU_VAR_NAME[vr[i]];
        if (IS_DX(vr[i]))
            return fmu_refuse(c, "'%s' is a state derivative and cannot be set", nm);
        if (caus == C_OUTPUT || caus == C_LOCAL)
            return fmu_refuse(c, "'%s' is an output and cannot be set", nm);
        if (caus == C_PARAM && !early)
            return fmu_refuse(c, "parameter '%s' has variability 'fixed': it can only be set "
                                 "before %sExitInitializationMode", nm, c->api);
        if (caus == C_STATE && !early)
            return fmu_refuse(c, "state '%s' can only be set before %sExitInitializationMode "
                                 "(then through %sSetContinuousStates in model exchange)", nm,
                              c->api, c->api);
        if (!isfinite(val[i]))
            return fmu_refuse(c, "%s '%s' = %s is not finite at t = %.9g s",
                              caus == C_PARAM ? "parameter" : caus == C_STATE ? "state" : "input",
                              nm, num(val[i]).s, c->t);
    }
    int changed = 0, parameters = 0;
    for (size_t i = 0; i < n; i++) {
        double *p = IS_X(vr[i]) ? &c->x[vr[i] - FMU_X_VR0] : &c->v[vr[i]];
        if (*p != val[i]) {
            *p = val[i];
            changed = 1;
            parameters |= FMU_VAR_CAUS[vr[i]] == C_PARAM;
        }
        c->v[vr[i]] = val[i];
    }
    if (changed)
        fmu_touch(c, parameters);
    return FMU_OK;
}

/* ---- FMU state: mode, time, states, every variable; validated completely before use ---- */

typedef struct {
    /* FNV-1a (64 bits) of every byte of the snapshot with this field zero: any change of one
       byte (one flipped bit, in transit or in storage) changes it, so a corrupted state is
       refused before anything is restored */
    unsigned long long check;
    unsigned magic, nvars, nx, mode;
    char model[64];
    double t;
    double v[FMU_NVARS];
    double du[FMU_NVARS];
    double x[FMU_NX1];
    double extra[FMU_EXTRA1]; /* the model's own (FMU_MODEL.save / load), e.g. its integrator */
} Snapshot;

static unsigned long long checksum(const Snapshot *s)
{
    Snapshot z;
    memcpy(&z, s, sizeof z);
    z.check = 0;
    const unsigned char *b = (const unsigned char *)&z;
    unsigned long long h = 14695981039346656037ull;
    for (size_t i = 0; i < sizeof z; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

int fmu_state_get(Instance *c, void **state)
{
    Snapshot *s = *state ? *state : c->alloc(1, sizeof(Snapshot));
    if (!s)
        return FMU_FATAL;
    memset(s, 0, sizeof *s);
    s->magic = STATE_MAGIC;
    s->nvars = FMU_NVARS;
    s->nx = FMU_NX;
    s->mode = (unsigned)c->mode;
    snprintf(s->model, sizeof s->model, "%s", FMU_MODEL_NAME);
    s->t = c->t;
    memcpy(s->v, c->v, sizeof s->v);
    memcpy(s->du, c->du, sizeof s->du);
    memcpy(s->x, c->x, sizeof s->x);
    if (FMU_MODEL.save)
        FMU_MODEL.save(c, s->extra);
    s->check = checksum(s);
    *state = s;
    return FMU_OK;
}

/* every value of the snapshot possible; then the model built from its parameters, or
   everything as it was */
static int restore(Instance *c, const Snapshot *s)
{
    if (s->check != checksum(s))
        return fmu_refuse(c, "corrupt FMU state (checksum mismatch: the state was changed "
                             "after %sGetFMUState)", c->api);
    if (s->magic != STATE_MAGIC || strncmp(s->model, FMU_MODEL_NAME, sizeof s->model) != 0 ||
        s->nvars != FMU_NVARS)
        return fmu_refuse(c, "not an FMU state of this FMU type (%s)", FMU_MODEL_NAME);
    int cs_mode = s->mode == M_STEP, me_mode = s->mode == M_EVENT || s->mode == M_CONT;
    if (s->nx != (unsigned)FMU_NX || s->mode > M_TERMINATED || (c->cs ? me_mode : cs_mode))
        return fmu_refuse(c, "corrupt FMU state (states %u, mode %u, for a %s instance)", s->nx,
                          s->mode, c->cs ? "co-simulation" : "model-exchange");
    if (!isfinite(s->t))
        return fmu_refuse(c, "corrupt FMU state (time not finite)");
    for (int k = 0; k < FMU_NVARS; k++) {
        double x = s->v[k];
        int bad = !isfinite(x) || !isfinite(s->du[k]);
        if (FMU_VAR_TYPE[k] == T_INT)
            bad |= !(fabs(x) <= 2147483647.0) || x != floor(x);
        else if (FMU_VAR_TYPE[k] == T_BOOL)
            bad |= x != 0.0 && x != 1.0;
        if (bad)
            return fmu_refuse(c, "corrupt FMU state (variable '%s' = %s)", FMU_VAR_NAME[k],
                              num(x).s);
    }
    for (int k = 0; k < FMU_NX1; k++)
        if (k < FMU_NX ? !isfinite(s->x[k]) : s->x[k] != 0.0)
            return fmu_refuse(c, "corrupt FMU state (state %d %s)", k,
                              k < FMU_NX ? "not finite" : "set, but the FMU has no state");
    for (int k = 0; k < FMU_EXTRA1; k++) /* the model's data: +-inf allowed (no bound), no NaN */
        if (k < FMU_EXTRA ? isnan(s->extra[k]) : s->extra[k] != 0.0)
            return fmu_refuse(c, "corrupt FMU state (model data %d)", k);
    /* the parameters it holds must build the model: try them, put everything back if not */
    Snapshot *was = NULL;
    if ((int)s->mode != M_INSTANTIATED && FMU_MODEL.build) {
        void *p = NULL;
        if (fmu_state_get(c, &p) != FMU_OK)
            return FMU_FATAL;
        was = p;
    }
    memcpy(c->v, s->v, sizeof c->v);
    memcpy(c->du, s->du, sizeof c->du);
    fmu_touch(c, 1);
    if (was) {
        int r = fmu_build(c);
        if (r != FMU_OK) {
            memcpy(c->v, was->v, sizeof c->v);
            memcpy(c->du, was->du, sizeof c->du);
            fmu_touch(c, 1);
            if (was->mode != M_INSTANTIATED)
                fmu_build(c);
            memcpy(c->x, was->x, sizeof c->x); /* the build set the states from the parameters */
            c->dealloc(was);
            return r;
        }
        c->dealloc(was);
    }
    memcpy(c->x, s->x, sizeof c->x);
    c->t = s->t;
    c->mode = (int)s->mode;
    fmu_touch(c, 0);
    if (FMU_MODEL.load)
        FMU_MODEL.load(c, s->extra);
    return FMU_OK;
}

int fmu_state_set(Instance *c, const void *state)
{
    if (!state)
        return fmu_refuse(c, "%sSetFMUState: no state", c->api);
    return restore(c, state);
}

void fmu_state_free(Instance *c, void **state)
{
    if (state && *state) {
        c->dealloc(*state);
        *state = NULL;
    }
}

size_t fmu_state_size(void) { return sizeof(Snapshot); }

int fmu_state_serialize(Instance *c, const void *state, unsigned char bytes[], size_t size)
{
    if (size < sizeof(Snapshot))
        return fmu_refuse(c, "%sSerializeFMU%s: %zu bytes, %zu needed", c->api,
                          c->api[3] == '3' ? "State" : "state", size, sizeof(Snapshot));
    memcpy(bytes, state, sizeof(Snapshot));
    return FMU_OK;
}

int fmu_state_deserialize(Instance *c, const unsigned char bytes[], size_t size, void **state)
{
    if (size != sizeof(Snapshot))
        return fmu_refuse(c, "corrupt FMU state (%zu bytes, %zu expected)", size,
                          sizeof(Snapshot));
    Snapshot probe;
    memcpy(&probe, bytes, sizeof probe);
    if (probe.check != checksum(&probe))
        return fmu_refuse(c, "corrupt FMU state (checksum mismatch: the bytes are not those "
                             "%sSerializeFMU%s wrote)", c->api,
                          c->api[3] == '3' ? "State" : "state");
    if (probe.magic != STATE_MAGIC || strncmp(probe.model, FMU_MODEL_NAME, sizeof probe.model))
        return fmu_refuse(c, "not an FMU state of this FMU type (%s)", FMU_MODEL_NAME);
    Snapshot *s = c->alloc(1, sizeof(Snapshot));
    if (!s)
        return FMU_FATAL;
    *s = probe;
    *state = s;
    return FMU_OK;
}

/* ---- directional derivatives: the checks, then the model's ---- */

int fmu_directional(Instance *c, const unsigned vUnknown[], size_t nUnknown,
                    const unsigned vKnown[], size_t nKnown, const double dvKnown[],
                    double dvUnknown[], const char *what)
{
    if (c->mode == M_INSTANTIATED || c->mode == M_TERMINATED)
        return fmu_refuse(c, "%s%s called in %s", c->api, what, MODE_NAME[c->mode]);
    for (size_t i = 0; i < nUnknown; i++) {
        unsigned vr = vUnknown[i];
        if (!IS_DX(vr) && (vr >= FMU_NVARS || FMU_VAR_CAUS[vr] != C_OUTPUT))
            return fmu_refuse(c, "%s%s: value reference %u is not an output%s", c->api, what, vr,
                              FMU_NX ? " or a state derivative" : "");
    }
    /* Knowns: inputs and states. In Initialization Mode the knowns are the dependencies of the
       InitialUnknowns, parameters with initial="exact" included (FMI 2.0 section 2.1.9;
       OMSimulator passes the whole dependency list, seeds of 0 but one). The models give no
       derivative with respect to a parameter: one with a zero seed contributes nothing and is
       accepted, any other is refused. */
    for (size_t i = 0; i < nKnown; i++) {
        unsigned vr = vKnown[i];
        if (vr >= FMU_NVARS)
            return fmu_refuse(c, "%s%s: no variable with value reference %u", c->api, what, vr);
        if (!isfinite(dvKnown[i]))
            return fmu_refuse(c, "%s%s: seed %s of '%s' is not finite", c->api, what,
                              num(dvKnown[i]).s, FMU_VAR_NAME[vr]);
        if (IS_X(vr))
            continue;
        if (c->mode == M_INIT && FMU_VAR_CAUS[vr] == C_PARAM) {
            if (dvKnown[i] == 0.0)
                continue;
            return fmu_refuse(c, "%s%s: no derivative with respect to the parameter '%s' (its "
                                 "seed must be 0)", c->api, what, FMU_VAR_NAME[vr]);
        }
        if (FMU_VAR_CAUS[vr] != C_INPUT)
            return fmu_refuse(c, "%s%s: '%s' is not an input%s", c->api, what, FMU_VAR_NAME[vr],
                              FMU_NX ? " or a state" : "");
    }
    int bs = fmu_build(c);
    if (bs != FMU_OK)
        return bs;
    return FMU_MODEL.directional(c, vUnknown, nUnknown, vKnown, nKnown, dvKnown, dvUnknown);
}

/* ---- co-simulation ---- */

/* The internal explicit Runge-Kutta method (c->method: Euler, Heun or the classical RK4) over
   [t0, t0 + h] in equal steps of at most c->max_step, the inputs moving on with their
   derivatives: the state at t0 + h into xn. */
static int runge_kutta(Instance *c, double t0, double h, double xn[])
{
    double nsteps = ceil(h / c->max_step - 1e-9);
    if (nsteps < 1)
        nsteps = 1;
    if (nsteps > (double)c->max_substeps)
        return fmu_refuse(c, "%sDoStep over %g s needs %.0f internal steps of at most "
                             "solver.max_step = %g s, more than solver.max_substeps = %ld: step "
                             "refused (shorter communication steps, or raise the parameters)",
                          c->api, h, nsteps, c->max_step, c->max_substeps);
    long n = (long)nsteps;
    double dt = h / (double)n;
    /* initialised: a failed evaluation may leave a stage unwritten (the step is then refused,
       and nothing reads an undefined value on the way) */
    double x[FMU_NX1] = {0}, k1[FMU_NX1] = {0}, k2[FMU_NX1] = {0}, k3[FMU_NX1] = {0},
           k4[FMU_NX1] = {0}, y[FMU_NX1] = {0};
    const int nx = FMU_NX;
    int bad = 0;
    memcpy(x, c->x, sizeof x);
    for (long i = 0; i < n && !bad; i++) {
        double s = i * dt;
        bad = FMU_MODEL.rate(c, t0, s, x, k1);
        if (c->method == 1) {
            for (int k = 0; k < nx; k++)
                x[k] += dt * k1[k];
        } else if (c->method == 2) {
            for (int k = 0; k < nx; k++)
                y[k] = x[k] + dt * k1[k];
            bad |= FMU_MODEL.rate(c, t0, s + dt, y, k2);
            for (int k = 0; k < nx; k++)
                x[k] += 0.5 * dt * (k1[k] + k2[k]);
        } else {
            for (int k = 0; k < nx; k++)
                y[k] = x[k] + 0.5 * dt * k1[k];
            bad |= FMU_MODEL.rate(c, t0, s + 0.5 * dt, y, k2);
            for (int k = 0; k < nx; k++)
                y[k] = x[k] + 0.5 * dt * k2[k];
            bad |= FMU_MODEL.rate(c, t0, s + 0.5 * dt, y, k3);
            for (int k = 0; k < nx; k++)
                y[k] = x[k] + dt * k3[k];
            bad |= FMU_MODEL.rate(c, t0, s + dt, y, k4);
            for (int k = 0; k < nx; k++)
                x[k] += dt / 6.0 * (k1[k] + 2.0 * (k2[k] + k3[k]) + k4[k]);
        }
        for (int k = 0; k < nx; k++)
            bad |= !isfinite(x[k]);
    }
    memcpy(xn, x, sizeof x);
    return bad ? FMU_DISCARD : FMU_OK; /* FMU_DISCARD: refused by the caller */
}

int fmu_do_step(Instance *c, double currentCommunicationPoint, double communicationStepSize)
{
    if (c->mode != M_STEP)
        return fmu_refuse(c, "%sDoStep called in %s", c->api, MODE_NAME[c->mode]);
    double h = communicationStepSize;
    if (!(h > 0 && isfinite(h)))
        return fmu_refuse(c, "%sDoStep: communication step size %s must be > 0", c->api, num(h).s);
    if (!isfinite(currentCommunicationPoint))
        return fmu_refuse(c, "%sDoStep: current time %s is not finite", c->api,
                          num(currentCommunicationPoint).s);
    int bs = fmu_build(c);
    if (bs != FMU_OK)
        return bs;
    double t0 = currentCommunicationPoint;
    if (!isfinite(t0 + h))
        return fmu_refuse(c, "%sDoStep: the time %s + %s overflows", c->api, num(t0).s,
                          num(h).s);
    if (FMU_NX) {
        double x[FMU_NX1] = {0};
        int st = FMU_MODEL.step ? FMU_MODEL.step(c, t0, h, x) : runge_kutta(c, t0, h, x);
        for (int k = 0; st == FMU_OK && k < FMU_NX; k++)
            if (!isfinite(x[k]))
                st = FMU_DISCARD;
        if (st == FMU_DISCARD) {
            fmu_touch(c, 0);
            return fmu_refuse(c, "%sDoStep from t = %.9g s over %.3g s: the state became "
                                 "non-finite (%s); the state before the step is kept",
                              c->api, currentCommunicationPoint, h,
                              FMU_MODEL.step ? "the model is unstable on that time scale"
                                             : "step too large for the dynamics, or inputs out "
                                               "of range");
        }
        if (st != FMU_OK)
            return st;
        memcpy(c->x, x, sizeof x);
    }
    /* inputs move on with their derivatives */
    for (int vr = 0; vr < FMU_NVARS; vr++)
        if (c->du[vr] != 0.0)
            c->v[vr] += h * c->du[vr];
    c->t = t0 + h;
    fmu_touch(c, 0);
    return FMU_OK;
}

int fmu_set_input_derivatives(Instance *c, const unsigned vr[], size_t n, const int order[],
                              const double value[])
{
    if (!c->cs || (c->mode != M_INIT && c->mode != M_STEP))
        return fmu_refuse(c, "%sSetRealInputDerivatives called in %s%s", c->api,
                          MODE_NAME[c->mode], c->cs ? "" : " of a model-exchange instance");
    for (size_t i = 0; i < n; i++) {
        if (fmu_check_slot(c, vr[i], T_REAL))
            return FMU_ERROR;
        if (FMU_VAR_CAUS[vr[i]] != C_INPUT)
            return fmu_refuse(c, "'%s' is not an input", FMU_VAR_NAME[vr[i]]);
        if (order[i] != 1)
            return fmu_refuse(c, "input derivative of order %d: only order 1 "
                                 "(maxOutputDerivativeOrder)", order[i]);
        if (!isfinite(value[i]))
            return fmu_refuse(c, "derivative of input '%s' = %s is not finite",
                              FMU_VAR_NAME[vr[i]], num(value[i]).s);
    }
    for (size_t i = 0; i < n; i++)
        c->du[vr[i]] = value[i];
    return FMU_OK;
}

int fmu_get_output_derivatives(Instance *c, const unsigned vr[], size_t n, const int order[],
                               double value[], const char *what)
{
    if (!FMU_MODEL.output_derivatives)
        return n ? fmu_refuse(c, "output derivatives are not provided") : FMU_OK;
    if (!c->cs || c->mode == M_INSTANTIATED)
        return fmu_refuse(c, "%s%s called in %s%s", c->api, what, MODE_NAME[c->mode],
                          c->cs ? "" : " of a model-exchange instance");
    for (size_t i = 0; i < n; i++) {
        if (vr[i] >= FMU_NVARS || FMU_VAR_CAUS[vr[i]] != C_OUTPUT)
            return fmu_refuse(c, "%s%s: value reference %u is not an output", c->api, what,
                              vr[i]);
        if (order[i] != 1)
            return fmu_refuse(c, "output derivative of order %d: only order 1 "
                                 "(maxOutputDerivativeOrder)", order[i]);
    }
    return FMU_MODEL.output_derivatives(c, vr, n, value);
}

/* ---- model exchange ---- */

/* a model-exchange call in one of the modes allowed (bit mask of modes) */
int fmu_me_call(Instance *c, const char *what, unsigned modes)
{
    if (c->cs)
        return fmu_refuse(c, "%s%s: a model-exchange function, this instance is a co-simulation "
                             "one", c->api, what);
    if (!(modes & (1u << c->mode)))
        return fmu_refuse(c, "%s%s called in %s", c->api, what, MODE_NAME[c->mode]);
    return FMU_OK;
}

int fmu_enter_event_mode(Instance *c)
{
    if (c->mode != M_CONT && c->mode != M_EVENT)
        return fmu_refuse(c, "%sEnterEventMode called in %s", c->api, MODE_NAME[c->mode]);
    c->mode = M_EVENT;
    return FMU_OK;
}

/* NewDiscreteStates (FMI 2) / UpdateDiscreteStates (FMI 3): there are no discrete states */
int fmu_event_update(Instance *c, const char *what)
{
    if (c->mode != M_EVENT)
        return fmu_refuse(c, "%s%s called in %s", c->api, what, MODE_NAME[c->mode]);
    return FMU_OK;
}

int fmu_enter_continuous_time_mode(Instance *c)
{
    if (c->mode != M_EVENT)
        return fmu_refuse(c, "%sEnterContinuousTimeMode called in %s", c->api,
                          MODE_NAME[c->mode]);
    c->mode = M_CONT;
    return FMU_OK;
}

int fmu_set_time(Instance *c, double time)
{
    if (fmu_me_call(c, "SetTime", IN_MODES(M_EVENT) | IN_MODES(M_CONT)))
        return FMU_ERROR;
    if (!isfinite(time))
        return fmu_refuse(c, "%sSetTime: time %s is not finite", c->api, num(time).s);
    c->t = time;
    fmu_touch(c, 0);
    return FMU_OK;
}

static int states_call(Instance *c, size_t nx, const char *what, unsigned modes)
{
    if (fmu_me_call(c, what, modes))
        return FMU_ERROR;
    if (nx != (size_t)FMU_NX)
        return fmu_refuse(c, "%s%s: %zu states, the FMU has %d", c->api, what, nx, FMU_NX);
    return FMU_OK;
}
#define READABLE (IN_MODES(M_INIT) | IN_MODES(M_EVENT) | IN_MODES(M_CONT) | IN_MODES(M_TERMINATED))

int fmu_set_states(Instance *c, const double x[], size_t nx, const char *what)
{
    if (states_call(c, nx, what, IN_MODES(M_CONT)))
        return FMU_ERROR;
    for (size_t k = 0; k < nx; k++)
        if (!isfinite(x[k]))
            return fmu_refuse(c, "%s%s: state '%s' = %s is not finite", c->api, what,
                              slot_name(FMU_X_VR0 + (unsigned)k), num(x[k]).s);
    memcpy(c->x, x, nx * sizeof(double));
    fmu_touch(c, 0);
    return FMU_OK;
}

int fmu_get_derivatives(Instance *c, double derivatives[], size_t nx, const char *what)
{
    if (states_call(c, nx, what, READABLE))
        return FMU_ERROR;
    int st = FMU_MODEL.derivatives(c); /* the state derivative only: no output computed */
    if (st != FMU_OK)
        return st;
    memcpy(derivatives, c->dx, nx * sizeof(double));
    return FMU_OK;
}

int fmu_get_states(Instance *c, double x[], size_t nx, const char *what)
{
    if (states_call(c, nx, what, READABLE))
        return FMU_ERROR;
    int bs = fmu_build(c);
    if (bs != FMU_OK)
        return bs;
    memcpy(x, c->x, nx * sizeof(double));
    return FMU_OK;
}

int fmu_get_nominals(Instance *c, double nominals[], size_t nx, const char *what)
{
    if (nx != (size_t)FMU_NX)
        return fmu_refuse(c, "%s%s: %zu states, the FMU has %d", c->api, what, nx, FMU_NX);
    for (size_t k = 0; k < nx; k++)
        nominals[k] = 1.0;
    return FMU_OK;
}
