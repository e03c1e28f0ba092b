/*
 * fmu_block.c -- a titopfmu block as an FMU, apart from the FMI version (fmu_block.h): the
 * instance, its parameters checked and built into a one-body core model, outputs and state
 * derivatives by titop_eval, the internal Runge-Kutta step of co-simulation, the FMU state, the
 * exact directional derivatives by the core's complex-step build. No physics here: the block is
 * a one-body core model whose parent motion and child-port wrenches are inputs (titop.h,
 * TITOP_PARENT_INPUT). fmi2_block.c and fmi3_block.c are the FMI functions around it.
 */
#include <complex.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmu_block.h"

typedef FmuInstance Instance;

const char *const FMU_MODE_NAME[] = {"instantiated",  "initialization mode", "step mode",
                                     "event mode",    "continuous-time mode", "terminated",
                                     "error"};
#define MODE_NAME FMU_MODE_NAME

#define STATE_MAGIC 0x54495431u /* "TIT1" */

static void touch(Instance *c);

/* ---- messages ---- */

static void logf_(Instance *c, int st, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (c->emit && c->logging)
        c->emit(c, st,
                st == FMU_OK ? "logAll" : st == FMU_WARNING ? "logStatusWarning" : "logStatusError",
                buf);
}

/* a double as Python's repr prints it (shortest round trip, ".0" on integers): messages read
   the same as the values the host passed */
typedef struct {
    char s[40];
} Num;

static Num num(double x)
{
    Num n;
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

int fmu_refuse(Instance *c, const char *fmt, ...)
{
    char buf[480];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    logf_(c, FMU_ERROR, "FMU instance '%s' (%s): %s", c->name, FMU_MODEL_NAME, buf);
    return FMU_ERROR;
}

/* ---- building the core model from the parameters ---- */
static const double *par(const Instance *c, int role, int arg)
{
    for (size_t g = 0; g < sizeof FMU_PARAMS / sizeof FMU_PARAMS[0]; g++)
        if (FMU_PARAMS[g][0] == role && FMU_PARAMS[g][1] == arg)
            return &c->v[FMU_PARAMS[g][2]];
    return NULL;
}

#if FMU_KIND >= 0
static int par_vr(int role, int arg)
{
    for (size_t g = 0; g < sizeof FMU_PARAMS / sizeof FMU_PARAMS[0]; g++)
        if (FMU_PARAMS[g][0] == role && FMU_PARAMS[g][1] == arg)
            return FMU_PARAMS[g][2];
    return -1;
}

/* a 3x3 DCM: orthonormal, det +1 (the core's titop_rotation_error, as the Python blocks') */
static int check_dcm(Instance *c, int role)
{
    const double *P = par(c, role, 0);
    if (!P)
        return 0;
    double err = titop_rotation_error(P);
    if (!(err <= 1e-9)) {
        fmu_refuse(c, "parameter '%s' is not a rotation matrix (|P^T P - 1|, |det P - 1| up to %.3g)",
               FMU_VAR_NAME[par_vr(role, 0)], err);
        return -1;
    }
    return 0;
}

/* a number as Python prints round(x, 6): at least one decimal ("3.0", "17.25") */
static void py_float(double x, char *out, size_t size)
{
    snprintf(out, size, "%.6f", x);
    size_t n = strlen(out);
    while (n > 2 && out[n - 1] == '0' && out[n - 2] != '.')
        out[--n] = '\0';
}

/* inertia at the centre of mass: the core's check (titop_check_inertia), the Python blocks'
   too: symmetric, positive semi-definite (definite for a root); principal moments that violate
   the triangle inequality are a logged warning */
static int check_inertia(Instance *c, int definite)
{
    double e[3];
    int code = titop_check_inertia(par(c, PAR_INERTIA, 0), definite, e);
    if (code == TITOP_CHECK_NOT_SYMMETRIC) {
        fmu_refuse(c, "parameter 'inertia' is not symmetric");
        return -1;
    }
    if (code == TITOP_CHECK_NOT_PSD) {
        fmu_refuse(c, "parameter 'inertia' is not positive semi-definite");
        return -1;
    }
    if (code == TITOP_CHECK_NOT_PD) {
        fmu_refuse(c, "parameter 'inertia': a root body needs a positive-definite inertia (its "
                      "D_P is inverted, eq. 11)");
        return -1;
    }
    if (code == TITOP_CHECK_TRIANGLE) {
        char a[32], b[32], d[32];
        py_float(e[0], a, sizeof a);
        py_float(e[1], b, sizeof b);
        py_float(e[2], d, sizeof d);
        logf_(c, FMU_WARNING, "block '%s', parameter 'inertia': principal moments [%s, %s, %s] "
                              "violate the triangle inequality I1 + I2 >= I3 (no real mass "
                              "distribution has them); simulating anyway", c->name, a, b, d);
    }
    return 0;
}

#endif

static int build(Instance *c)
{
    if (c->built)
        return 0;
    for (int vr = 0; vr < FMU_NVARS; vr++)
        if (FMU_VAR_CAUS[vr] == C_PARAM && !isfinite(c->v[vr])) {
            fmu_refuse(c, "parameter '%s' = %s is not finite", FMU_VAR_NAME[vr], num(c->v[vr]).s);
            return -1;
        }
    c->max_step = *par(c, PAR_MAX_STEP, 0);
    c->method = (int)*par(c, PAR_METHOD, 0);
    c->max_substeps = (long)*par(c, PAR_MAX_SUBSTEPS, 0);
    if (!(c->max_step > 0)) {
        fmu_refuse(c, "parameter 'solver.max_step' = %s must be positive (s)", num(c->max_step).s);
        return -1;
    }
    if (c->method != 1 && c->method != 2 && c->method != 4) {
        fmu_refuse(c, "parameter 'solver.method' = %d must be 1, 2 or 4", c->method);
        return -1;
    }
    if (!(c->max_substeps >= 1)) {
        fmu_refuse(c, "parameter 'solver.max_substeps' = %ld must be at least 1", c->max_substeps);
        return -1;
    }
#if FMU_KIND >= 0
    titop_body *B = &c->body;
    memset(B, 0, sizeof *B);
    B->kind = FMU_KIND;
    B->inverse = FMU_INVERSE;
    B->parent = FMU_HAS_PARENT ? TITOP_PARENT_INPUT : TITOP_NO_PARENT;
    B->nports = FMU_NCHILDREN;
    B->next = FMU_HAS_EXT;
    B->x0 = 0;
    B->in0 = FMU_IN0;
    B->pm0 = FMU_PM0;
    if (FMU_KIND != TITOP_GROUND) {
        B->mass = *par(c, PAR_MASS, 0);
        if (!(B->mass > 0)) {
            fmu_refuse(c, "parameter 'mass' = %s must be positive (kg)", num(B->mass).s);
            return -1;
        }
        if (check_inertia(c, FMU_KIND == TITOP_RIGID))
            return -1;
        memcpy(B->inertia, par(c, PAR_INERTIA, 0), sizeof B->inertia);
        memcpy(B->com, par(c, PAR_COM, 0), sizeof B->com);
        memcpy(B->gravity, par(c, PAR_GRAVITY, 0), sizeof B->gravity);
    }
    for (int k = 0; k < 9; k++)
        B->R0[k] = k % 4 == 0;
    if (par(c, PAR_DCM, 0)) {
        if (check_dcm(c, PAR_DCM))
            return -1;
        memcpy(B->R0, par(c, PAR_DCM, 0), sizeof B->R0);
    }
    if (par(c, PAR_AXIS, 0)) {
        const double *a = par(c, PAR_AXIS, 0);
        double n = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
        if (!(n >= 1e-12)) {
            fmu_refuse(c, "parameter '%s': zero joint axis", FMU_VAR_NAME[par_vr(PAR_AXIS, 0)]);
            return -1;
        }
        for (int k = 0; k < 3; k++)
            B->axis[k] = a[k] / n;
    }
    if (FMU_KIND == TITOP_GROUND) {
        titop_euler_dcm(par(c, PAR_GROUND_EULER, 0), B->R0);
        memcpy(B->pos, par(c, PAR_GROUND_POSITION, 0), sizeof B->pos);
    }
    for (int j = 0; j < FMU_NCHILDREN; j++) {
        memcpy(c->ports[j].pc, par(c, PAR_POINT, j + 1), 3 * sizeof(double));
        c->ports[j].child = -1;
        c->ports[j].w0 = FMU_PORT_W0 + 6 * j;
    }
    if (FMU_HAS_EXT) {
        memcpy(c->ext.point, par(c, PAR_EXT_POINT, 0), sizeof c->ext.point);
        c->ext.inertial = *par(c, PAR_EXT_INERTIAL, 0) != 0.0;
        c->ext.w0 = FMU_EXT_W0;
    }
    titop_model *m = &c->model;
    memset(m, 0, sizeof *m);
    m->nbodies = 1;
    m->bodies = B;
    m->nports = FMU_NCHILDREN;
    m->ports = c->ports;
    m->nexts = FMU_HAS_EXT;
    m->exts = &c->ext;
    m->nx = FMU_NX;
    m->nin = FMU_NIN;
    int bad;
    char msg[200];
    if (titop_model_init(m, &bad, msg, sizeof msg) != TITOP_OK) {
        fmu_refuse(c, "invalid block: %s", msg);
        return -1;
    }
    /* a joint must see a non-singular inertia (eq. 20): the core's check, the blocks' too */
    if (B->nv && FMU_KIND != TITOP_RIGID) {
        double J[36];
        if (titop_check_apparent_inertia(B->S, B->D, B->nv, J) == TITOP_CHECK_SINGULAR) {
            fmu_refuse(c, "parameter 'inertia': the apparent inertia seen from the joint (eq. 20) is "
                      "singular: the body cannot be moved by its joint");
            return -1;
        }
    }
    if (!c->data) { /* both buffers, or neither */
        size_t n = titop_data_size(m);
        double *data = c->alloc(n, sizeof(double));
        double *zw = c->alloc(2 * (n + 2 * (size_t)FMU_NX + FMU_NIN) + 2,
                                          sizeof(double));
        if (!data || !zw) {
            if (data)
                c->dealloc(data);
            if (zw)
                c->dealloc(zw);
            return -2;
        }
        c->data = data;
        c->zwork = zw;
    }
    /* initial states */
    double *x = c->x;
    c->nx = FMU_NX;
    if (FMU_KIND == TITOP_RIGID) {
        memcpy(x, par(c, PAR_POSITION0, 0), 3 * sizeof(double));
        titop_euler_quaternion(par(c, PAR_EULER0, 0), x + 3);
        memcpy(x + 7, par(c, PAR_TWIST0, 0), 6 * sizeof(double));
    } else if (FMU_NX && (FMU_KIND == TITOP_REVOLUTE || FMU_KIND == TITOP_PRISMATIC)) {
        x[0] = *par(c, PAR_Q0, 0);
        x[1] = *par(c, PAR_QD0, 0);
    } else if (FMU_NX && FMU_KIND == TITOP_SPHERICAL) {
        titop_euler_quaternion(par(c, PAR_JEULER0, 0), x);
        memcpy(x + 4, par(c, PAR_JOMEGA0, 0), 3 * sizeof(double));
    } else if (FMU_NX && FMU_KIND == TITOP_FREE) {
        memcpy(x, par(c, PAR_JPOSITION0, 0), 3 * sizeof(double));
        titop_euler_quaternion(par(c, PAR_JEULER0, 0), x + 3);
        memcpy(x + 7, par(c, PAR_JVELOCITY0, 0), 3 * sizeof(double));
        memcpy(x + 10, par(c, PAR_JOMEGA0, 0), 3 * sizeof(double));
    }
#endif
    c->built = 1;
    touch(c);
    return 0;
}

/* build() as an FMI status: out of memory is the only FMU_FATAL */
int fmu_ensure_built(Instance *c)
{
    int r = build(c);
    return r == 0 ? FMU_OK : r == -2 ? FMU_FATAL : FMU_ERROR;
}

/* ---- evaluation ---- */

/* the core's input vector from the FMI inputs (at time t for CS input derivatives) */
static void gather_inputs(Instance *c, double dt)
{
    for (size_t g = 0; g < sizeof FMU_INPUTS / sizeof FMU_INPUTS[0]; g++) {
        int off = FMU_INPUTS[g][1], vr0 = FMU_INPUTS[g][2], n = FMU_INPUTS[g][3];
        for (int k = 0; k < n; k++)
            c->in[off + k] = c->v[vr0 + k] + dt * c->du[vr0 + k];
    }
}

/* Everything computed from the time, the state and the inputs is out of date. */
static void touch(Instance *c)
{
    c->evaluated = 0;
    c->out_ok = 0;
    c->z_level = 0;
    c->zout_ok = 0;
}

#define NGROUPS (sizeof FMU_OUTPUTS / sizeof FMU_OUTPUTS[0])
/* one bit per output group in out_ok and zout_ok */
typedef char fmu_output_groups_fit_in_a_mask[NGROUPS <= 32 ? 1 : -1];

/* the evaluation the output groups of mask need: the wrench on the parent is the only output
   that needs every wrench (titop_eval's `full`) */
static int need_level(unsigned mask)
{
    for (size_t g = 0; g < NGROUPS; g++)
        if ((mask & (1u << g)) && FMU_OUTPUTS[g][0] == OUT_WRENCH_PARENT)
            return EVAL_FULL;
    return EVAL_DX;
}

/* the output group (row of FMU_OUTPUTS) holding slot vr, or -1 */
static int group_of(unsigned vr)
{
    for (size_t g = 0; g < NGROUPS; g++)
        if (vr >= (unsigned)FMU_OUTPUTS[g][2] &&
            vr < (unsigned)(FMU_OUTPUTS[g][2] + FMU_OUTPUTS[g][3]))
            return (int)g;
    return -1;
}

/* The core's evaluation at the current time, state and inputs, up to `level`: EVAL_DX (the
   state derivative, no wrenches) or EVAL_FULL (every wrench too, for the outputs). */
static int evaluate(Instance *c, int level)
{
    if (c->evaluated >= level)
        return FMU_OK;
    int bs = fmu_ensure_built(c);
    if (bs != FMU_OK)
        return bs;
    gather_inputs(c, 0.0);
#if FMU_KIND >= 0
    int bad;
    int st = titop_eval(&c->model, c->data, c->t, c->x, c->in, level >= EVAL_FULL,
                        FMU_NX ? c->dx : NULL, &bad);
    if (st != TITOP_OK)
        return fmu_refuse(c, "evaluation failed at t = %.9g s: %s", c->t,
                      st == TITOP_SINGULAR ? "singular joint inertia"
                                           : "a value is not finite (inputs or states out of range)");
    for (int k = 0; k < FMU_NX; k++)
        if (!isfinite(c->dx[k]))
            return fmu_refuse(c, "state derivative '%s' is not finite at t = %.9g s (inputs or "
                                 "states out of range)", FMU_VAR_NAME[FMU_DX_VR0 + k], c->t);
#endif
    c->evaluated = level;
    return FMU_OK;
}

/* The output groups of `mask` (bit g: row g of FMU_OUTPUTS) converted into v, each once per
   change of the time, state or inputs. */
static int outputs(Instance *c, unsigned mask)
{
#if FMU_KIND == -1
    if (mask & ~c->out_ok) /* both sides of a closure come from one call */
        mask = (1u << NGROUPS) - 1u;
#endif
    mask &= ~c->out_ok;
    if (!mask)
        return FMU_OK;
    int st = evaluate(c, need_level(mask));
    if (st != FMU_OK)
        return st;
#if FMU_KIND >= 0
    titop_layout L;
    titop_data_layout(&c->model, &L);
#endif
    for (size_t g = 0; g < NGROUPS; g++) {
        if (!(mask & (1u << g)))
            continue;
        int role = FMU_OUTPUTS[g][0], arg = FMU_OUTPUTS[g][1], vr0 = FMU_OUTPUTS[g][2];
        double *o = &c->v[vr0];
        (void)arg;
        switch (role) {
#if FMU_KIND >= 0
        case OUT_WRENCH_PARENT:
            memcpy(o, c->data + L.wrench_parent, 6 * sizeof(double));
            break;
        case OUT_PORT_MOTION:
            titop_port_motion(&c->model, c->data, arg, o);
            break;
        case OUT_BODY_MOTION:
            titop_body_motion(&c->model, c->data, 0, o);
            break;
        case OUT_JOINT_MOTION:
            titop_joint_motion(&c->model, c->data, 0, o);
            break;
        case OUT_EFFORT:
        case OUT_BODY_WRENCH:
            memcpy(o, c->data + (role == OUT_EFFORT ? L.effort : L.out),
                   FMU_OUTPUTS[g][3] * sizeof(double));
            break;
#endif
#if FMU_KIND == -1
        case OUT_CLOSURE_LEFT:
            titop_closure_block(par(c, PAR_K, 0), par(c, PAR_D, 0), c->in, c->in + 18, o,
                                &c->v[FMU_OUTPUTS[g + 1][2]]);
            break;
        case OUT_CLOSURE_RIGHT:
            break;
#endif
#if FMU_KIND == -2
        case OUT_LAW:
            titop_spring_damper_block(*par(c, PAR_LAW_K, 0), *par(c, PAR_LAW_D, 0),
                                      *par(c, PAR_LAW_QREF, 0), c->in, o);
            break;
#endif
        default:
            break;
        }
    }
    for (size_t g = 0; g < NGROUPS; g++) /* all converted first: a closure writes two groups */
        for (int k = 0; (mask & (1u << g)) && k < FMU_OUTPUTS[g][3]; k++)
            if (!isfinite(c->v[FMU_OUTPUTS[g][2] + k]))
                return fmu_refuse(c, "output '%s' is not finite at t = %.9g s (inputs or states "
                                     "out of range)", FMU_VAR_NAME[FMU_OUTPUTS[g][2] + k], c->t);
    c->out_ok |= mask;
    return FMU_OK;
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
    memcpy(c->v, FMU_DEFAULT, sizeof c->v);
    c->mode = M_INSTANTIATED;
    touch(c);
    return c;
}

void fmu_free(Instance *c)
{
    if (!c)
        return;
    void (*fr)(void *) = c->dealloc;
    if (c->data)
        fr(c->data);
    if (c->zwork)
        fr(c->zwork);
    fr(c->name);
    fr(c);
}

int fmu_setup(Instance *c, double startTime)
{
    if (c->mode != M_INSTANTIATED)
        return fmu_refuse(c, "%s%s called in %s", c->api,
                          c->api[3] == '3' ? "EnterInitializationMode" : "SetupExperiment",
                          MODE_NAME[c->mode]);
    if (!isfinite(startTime))
        return fmu_refuse(c, "start time %s is not finite", num(startTime).s);
    c->t = startTime;
    return FMU_OK;
}

int fmu_enter_init(Instance *c)
{
    if (c->mode != M_INSTANTIATED)
        return fmu_refuse(c, "%sEnterInitializationMode called in %s", c->api,
                          MODE_NAME[c->mode]);
    int bs = fmu_ensure_built(c);
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
    int bs = fmu_ensure_built(c);
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
    memcpy(c->v, FMU_DEFAULT, sizeof c->v);
    memset(c->du, 0, sizeof c->du);
    c->t = 0.0;
    c->built = 0;
    touch(c);
    c->mode = M_INSTANTIATED;
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
        return fmu_refuse(c, "variable '%s' is not of type %s", FMU_VAR_NAME[vr], TYPE[c->api[3] == '3'][type]);
    return FMU_OK;
}

int fmu_get(Instance *c, const unsigned vr[], size_t n, int type, double *out)
{
    unsigned groups = 0; /* the output groups asked for */
    int locals = 0;      /* states or state derivatives asked for */
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == FMU_TIME_SLOT && type == T_REAL && c->api[3] == '3')
            continue;
        if (fmu_check_slot(c, vr[i], type))
            return FMU_ERROR;
        if (FMU_VAR_CAUS[vr[i]] == C_OUTPUT)
            groups |= 1u << group_of(vr[i]);
        locals |= FMU_VAR_CAUS[vr[i]] == C_LOCAL;
    }
    if (groups || locals) {
        if (c->mode == M_INSTANTIATED)
            return fmu_refuse(c, "outputs are available from %sEnterInitializationMode on", c->api);
        int st = outputs(c, groups);
        if (st == FMU_OK && locals)
            st = evaluate(c, EVAL_DX);
        if (st != FMU_OK)
            return st;
#if FMU_NX
        if (locals) {
            memcpy(&c->v[FMU_X_VR0], c->x, FMU_NX * sizeof(double));
            memcpy(&c->v[FMU_DX_VR0], c->dx, FMU_NX * sizeof(double));
        }
#endif
    }
    for (size_t i = 0; i < n; i++)
        out[i] = vr[i] < FMU_NVARS ? c->v[vr[i]] : c->t;
    return FMU_OK;
}

/* Check every value first: a refused call changes nothing. */
int fmu_set(Instance *c, const unsigned vr[], size_t n, int type, const double *val)
{
    if (c->mode == M_TERMINATED || c->mode == M_ERROR)
        return fmu_refuse(c, "cannot set '%s' after %sTerminate (%s)",
                      n && vr[0] < FMU_NVARS ? FMU_VAR_NAME[vr[0]] : "?", c->api,
                      MODE_NAME[c->mode]);
    for (size_t i = 0; i < n; i++) {
        if (vr[i] == FMU_TIME_SLOT && c->api[3] == '3')
            return fmu_refuse(c, "'time' is the independent variable and cannot be set");
        if (fmu_check_slot(c, vr[i], type))
            return FMU_ERROR;
        int caus = FMU_VAR_CAUS[vr[i]];
        const char *nm = FMU_VAR_NAME[vr[i]];
        if (caus == C_OUTPUT || caus == C_LOCAL)
            return fmu_refuse(c, "'%s' is an output and cannot be set", nm);
        if (caus == C_PARAM && c->mode != M_INSTANTIATED && c->mode != M_INIT)
            return fmu_refuse(c, "parameter '%s' has variability 'fixed': it can only be set before "
                             "%sExitInitializationMode", nm, c->api);
        if (!isfinite(val[i]))
            return fmu_refuse(c, "%s '%s' = %s is not finite at t = %.9g s",
                          caus == C_PARAM ? "parameter" : "input", nm, num(val[i]).s, c->t);
    }
    for (size_t i = 0; i < n; i++) {
        if (FMU_VAR_CAUS[vr[i]] == C_PARAM && c->v[vr[i]] != val[i])
            c->built = 0;
        if (c->v[vr[i]] != val[i]) {
            c->v[vr[i]] = val[i];
            touch(c);
        }
    }
    return FMU_OK;
}
/* ---- FMU state: mode, time, states, every variable; validated completely before use ---- */

typedef struct {
    unsigned magic, nvars, nx, mode;
    char model[64];
    double t;
    double v[FMU_NVARS];
    double du[FMU_NVARS];
    double x[MAX_X];
} Snapshot;

int fmu_state_get(Instance *c, void **state)
{
    Snapshot *s = *state ? *state : c->alloc(1, sizeof(Snapshot));
    if (!s)
        return FMU_FATAL;
    memset(s, 0, sizeof *s);
    s->magic = STATE_MAGIC;
    s->nvars = FMU_NVARS;
    s->nx = (unsigned)c->nx;
    s->mode = (unsigned)c->mode;
    snprintf(s->model, sizeof s->model, "%s", FMU_MODEL_NAME);
    s->t = c->t;
    memcpy(s->v, c->v, sizeof s->v);
    memcpy(s->du, c->du, sizeof s->du);
    memcpy(s->x, c->x, sizeof s->x);
    *state = s;
    return FMU_OK;
}

static int restore(Instance *c, const Snapshot *s)
{
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
    for (int k = 0; k < MAX_X; k++)
        if (k < FMU_NX ? !isfinite(s->x[k]) : s->x[k] != 0.0)
            return fmu_refuse(c, "corrupt FMU state (state %d %s)", k,
                          k < FMU_NX ? "not finite" : "set, but the FMU has fewer states");
    /* the parameters it holds must build the block: try them, put everything back if not */
    double v[FMU_NVARS], du[FMU_NVARS];
    memcpy(v, c->v, sizeof v);
    memcpy(du, c->du, sizeof du);
    int built = c->built;
    memcpy(c->v, s->v, sizeof c->v);
    memcpy(c->du, s->du, sizeof c->du);
    c->built = 0;
    if ((int)s->mode != M_INSTANTIATED) {
        int r = build(c);
        if (r) {
            memcpy(c->v, v, sizeof v);
            memcpy(c->du, du, sizeof du);
            c->built = 0;
            if (built)
                build(c);
            return r == -2 ? FMU_FATAL : FMU_ERROR;
        }
    }
    memcpy(c->x, s->x, sizeof c->x);
    c->t = s->t;
    c->mode = (int)s->mode;
    touch(c);
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

int fmu_state_deserialize(Instance *c, const unsigned char bytes[], size_t size, void **state)
{
    if (size != sizeof(Snapshot))
        return fmu_refuse(c, "corrupt FMU state (%zu bytes, %zu expected)", size,
                          sizeof(Snapshot));
    Snapshot probe;
    memcpy(&probe, bytes, sizeof probe);
    if (probe.magic != STATE_MAGIC || strncmp(probe.model, FMU_MODEL_NAME, sizeof probe.model))
        return fmu_refuse(c, "not an FMU state of this FMU type (%s)", FMU_MODEL_NAME);
    Snapshot *s = c->alloc(1, sizeof(Snapshot));
    if (!s)
        return FMU_FATAL;
    *s = probe;
    *state = s;
    return FMU_OK;
}

/* ---- directional derivatives (exact: the core's complex step) ---- */

/* A known that is a parameter: in Initialization Mode the knowns are the dependencies of the
   InitialUnknowns, parameters with initial="exact" included (FMI 2.0 section 2.1.9; OMSimulator
   passes the whole dependency list, seeds of 0 but one). The units give no derivative with
   respect to a parameter: one with a zero seed contributes nothing and is accepted, any other
   is refused. Returns 1 when the known can be skipped, else refuses and returns 0. */
static int parameter_known(Instance *c, unsigned vr, double seed, const char *what)
{
    if (seed == 0.0)
        return 1;
    fmu_refuse(c, "%s%s: no derivative with respect to the parameter '%s' (its seed must be 0)",
               c->api, what, FMU_VAR_NAME[vr]);
    return 0;
}

/* the seed vector (states, then core inputs) of the knowns: refused before any work if a
   known is not an input or a state, or a seed value is not finite */
static int seed_of(Instance *c, const unsigned vKnown[], size_t nKnown, const double dvKnown[],
                   double *seed, const char *what)
{
    memset(seed, 0, (FMU_NX + FMU_NIN) * sizeof(double));
    for (size_t i = 0; i < nKnown; i++) {
        unsigned vr = vKnown[i];
        if (vr >= FMU_NVARS)
            return fmu_refuse(c, "%s%s: no variable with value reference %u", c->api, what, vr);
        if (!isfinite(dvKnown[i]))
            return fmu_refuse(c, "%s%s: seed %s of '%s' is not finite", c->api, what,
                              num(dvKnown[i]).s, FMU_VAR_NAME[vr]);
        if (FMU_NX && vr >= (unsigned)FMU_X_VR0 && vr < (unsigned)(FMU_X_VR0 + FMU_NX)) {
            seed[vr - FMU_X_VR0] += dvKnown[i];
            continue;
        }
        if (c->mode == M_INIT && FMU_VAR_CAUS[vr] == C_PARAM) {
            if (!parameter_known(c, vr, dvKnown[i], what))
                return FMU_ERROR;
            continue;
        }
        if (FMU_VAR_CAUS[vr] != C_INPUT)
            return fmu_refuse(c, "%s%s: '%s' is not an input%s", c->api, what, FMU_VAR_NAME[vr],
                              FMU_NX ? " or a state" : "");
        for (size_t g = 0; g < sizeof FMU_INPUTS / sizeof FMU_INPUTS[0]; g++)
            if ((int)vr >= FMU_INPUTS[g][2] && (int)vr < FMU_INPUTS[g][2] + FMU_INPUTS[g][3])
                seed[FMU_NX + FMU_INPUTS[g][1] + (int)vr - FMU_INPUTS[g][2]] += dvKnown[i];
    }
    return FMU_OK;
}

/* The complex-step evaluation along `seed` up to `level` (the core's titop_eval_seeded), unless
   the one held is along the same seed at the same time, state and inputs; the derivatives of
   the outputs are then read from it group by group (derivative_group). */
static int seeded(Instance *c, const double *seed, int level)
{
    if (c->z_level >= level && memcmp(seed, c->zseed, (FMU_NX + FMU_NIN) * sizeof(double)) == 0)
        return FMU_OK;
    gather_inputs(c, 0.0);
    c->z_level = 0;
    c->zout_ok = 0;
#if FMU_KIND >= 0
    int bad;
    int st = titop_eval_seeded(&c->model, c->zwork, c->t, c->x, c->in, seed, seed + FMU_NX,
                               level >= EVAL_FULL, &bad);
    if (st != TITOP_OK)
        return fmu_refuse(c, "directional derivative: evaluation failed at t = %.9g s", c->t);
#else /* a loop closure or a joint law: every output at once, from the inputs */
    double complex zin[FMU_NIN], zw[12];
    for (int k = 0; k < FMU_NIN; k++)
        zin[k] = c->in[k] + I * (TITOP_CSTEP_H * seed[k]);
#if FMU_KIND == -1
    titopz_closure_block(par(c, PAR_K, 0), par(c, PAR_D, 0), (double *)zin, (double *)(zin + 18),
                         (double *)zw, (double *)(zw + 6));
#else
    titopz_spring_damper_block(*par(c, PAR_LAW_K, 0), *par(c, PAR_LAW_D, 0),
                               *par(c, PAR_LAW_QREF, 0), (double *)zin, (double *)zw);
#endif
    /* outputs in value-reference order: left.W (6) then right.W (6), or tau */
    for (size_t g = 0; g < NGROUPS; g++)
        for (int k = 0; k < FMU_OUTPUTS[g][3]; k++)
            c->dout[FMU_OUTPUTS[g][2] + k] =
                cimag(zw[(FMU_OUTPUTS[g][0] == OUT_CLOSURE_RIGHT ? 6 : 0) + k]) / TITOP_CSTEP_H;
    c->zout_ok = (1u << NGROUPS) - 1u;
#endif
    memcpy(c->zseed, seed, (FMU_NX + FMU_NIN) * sizeof(double));
    c->z_level = level;
    return FMU_OK;
}

#if FMU_KIND >= 0
/* the derivatives of output group g from the held complex-step evaluation, into dout */
static void derivative_group(Instance *c, int g)
{
    if (c->zout_ok & (1u << g))
        return;
    titop_layout L;
    titop_data_layout(&c->model, &L);
    const double complex *zd = (const double complex *)c->zwork;
    double complex buf[18];
    const double complex *out = buf;
    switch (FMU_OUTPUTS[g][0]) {
    case OUT_WRENCH_PARENT:
        out = zd + L.wrench_parent;
        break;
    case OUT_PORT_MOTION:
        titopz_port_motion(&c->model, c->zwork, FMU_OUTPUTS[g][1], (double *)buf);
        break;
    case OUT_BODY_MOTION:
        titopz_body_motion(&c->model, c->zwork, 0, (double *)buf);
        break;
    case OUT_JOINT_MOTION:
        titopz_joint_motion(&c->model, c->zwork, 0, (double *)buf);
        break;
    case OUT_EFFORT:
        out = zd + L.effort;
        break;
    default: /* OUT_BODY_WRENCH */
        out = zd + L.out;
        break;
    }
    for (int k = 0; k < FMU_OUTPUTS[g][3]; k++)
        c->dout[FMU_OUTPUTS[g][2] + k] = cimag(out[k]) / TITOP_CSTEP_H;
    c->zout_ok |= 1u << g;
}
#endif

int fmu_directional(Instance *c, const unsigned vUnknown[], size_t nUnknown,
                    const unsigned vKnown[], size_t nKnown, const double dvKnown[],
                    double dvUnknown[], const char *what)
{
    if (c->mode == M_INSTANTIATED || c->mode == M_TERMINATED)
        return fmu_refuse(c, "%s%s called in %s", c->api, what, MODE_NAME[c->mode]);
    unsigned groups = 0;
    for (size_t i = 0; i < nUnknown; i++) {
        unsigned vr = vUnknown[i];
        if (FMU_NX && vr >= (unsigned)FMU_DX_VR0 && vr < (unsigned)(FMU_DX_VR0 + FMU_NX))
            continue;
        if (vr >= FMU_NVARS || FMU_VAR_CAUS[vr] != C_OUTPUT)
            return fmu_refuse(c, "%s%s: value reference %u is not an output%s", c->api, what, vr,
                              FMU_NX ? " or a state derivative" : "");
        groups |= 1u << group_of(vr);
    }
    double seed[FMU_NX + FMU_NIN + 1];
    if (seed_of(c, vKnown, nKnown, dvKnown, seed, what))
        return FMU_ERROR;
    int bs = fmu_ensure_built(c);
    if (bs != FMU_OK)
        return bs;
    int st = seeded(c, seed, need_level(groups));
    if (st != FMU_OK)
        return st;
#if FMU_KIND >= 0
    const double complex *zdx = (const double complex *)c->zwork +
                                titop_data_size(&c->model) + FMU_NX + FMU_NIN;
#endif
    for (size_t i = 0; i < nUnknown; i++) {
        unsigned vr = vUnknown[i];
#if FMU_KIND >= 0
        if (FMU_NX && vr >= (unsigned)FMU_DX_VR0 && vr < (unsigned)(FMU_DX_VR0 + FMU_NX)) {
            dvUnknown[i] = cimag(zdx[vr - FMU_DX_VR0]) / TITOP_CSTEP_H;
            continue;
        }
        derivative_group(c, group_of(vr));
#endif
        dvUnknown[i] = c->dout[vr];
    }
    return FMU_OK;
}

/* ---- co-simulation ---- */

/* f(t0 + s, x): the state derivative with the inputs at t0 + s (held, or interpolated) */
static int rate(Instance *c, double t0, double s, const double *x, double *dx)
{
#if FMU_KIND >= 0
    int bad;
    gather_inputs(c, s);
    return titop_eval(&c->model, c->data, t0 + s, x, c->in, 0, dx, &bad);
#else
    (void)c;
    (void)t0;
    (void)s;
    (void)x;
    (void)dx;
    return 0;
#endif
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
    int bs = fmu_ensure_built(c);
    if (bs != FMU_OK)
        return bs;
    double t0 = currentCommunicationPoint;
    if (FMU_NX) {
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
        double x[MAX_X], k1[MAX_X], k2[MAX_X], k3[MAX_X], k4[MAX_X], y[MAX_X];
        int nx = FMU_NX;
        memcpy(x, c->x, sizeof x);
        for (long i = 0; i < n; i++) {
            double s = i * dt;
            int bad = rate(c, t0, s, x, k1);
            if (c->method == 1) {
                for (int k = 0; k < nx; k++)
                    x[k] += dt * k1[k];
            } else if (c->method == 2) {
                for (int k = 0; k < nx; k++)
                    y[k] = x[k] + dt * k1[k];
                bad |= rate(c, t0, s + dt, y, k2);
                for (int k = 0; k < nx; k++)
                    x[k] += 0.5 * dt * (k1[k] + k2[k]);
            } else {
                for (int k = 0; k < nx; k++)
                    y[k] = x[k] + 0.5 * dt * k1[k];
                bad |= rate(c, t0, s + 0.5 * dt, y, k2);
                for (int k = 0; k < nx; k++)
                    y[k] = x[k] + 0.5 * dt * k2[k];
                bad |= rate(c, t0, s + 0.5 * dt, y, k3);
                for (int k = 0; k < nx; k++)
                    y[k] = x[k] + dt * k3[k];
                bad |= rate(c, t0, s + dt, y, k4);
                for (int k = 0; k < nx; k++)
                    x[k] += dt / 6.0 * (k1[k] + 2.0 * (k2[k] + k3[k]) + k4[k]);
            }
            int finite = !bad;
            for (int k = 0; k < nx; k++)
                finite &= isfinite(x[k]);
            if (!finite) {
                touch(c);
                return fmu_refuse(c, "%sDoStep from t = %.9g s over %.3g s: the state became "
                                 "non-finite (step too large for the dynamics, or inputs out of "
                                 "range); the state before the step is kept",
                              c->api, currentCommunicationPoint, h);
            }
        }
        memcpy(c->x, x, sizeof x);
    }
    /* inputs move on with their derivatives */
    for (int vr = 0; vr < FMU_NVARS; vr++)
        if (c->du[vr] != 0.0)
            c->v[vr] += h * c->du[vr];
    c->t = t0 + h;
    touch(c);
    return FMU_OK;
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
        return fmu_refuse(c, "%sSetTime: time %g is not finite", c->api, time);
    c->t = time;
    touch(c);
    return FMU_OK;
}

int fmu_set_states(Instance *c, const double x[], size_t nx, const char *what)
{
    if (fmu_me_call(c, what, IN_MODES(M_CONT)))
        return FMU_ERROR;
    if (nx != (size_t)FMU_NX)
        return fmu_refuse(c, "%s%s: %zu states, the FMU has %d", c->api, what, nx, FMU_NX);
    for (size_t k = 0; k < nx; k++)
        if (!isfinite(x[k]))
            return fmu_refuse(c, "%s%s: state %zu = %g is not finite", c->api, what, k, x[k]);
    memcpy(c->x, x, nx * sizeof(double));
    touch(c);
    return FMU_OK;
}

int fmu_get_derivatives(Instance *c, double derivatives[], size_t nx, const char *what)
{
    if (fmu_me_call(c, what, IN_MODES(M_INIT) | IN_MODES(M_EVENT) | IN_MODES(M_CONT) |
                                 IN_MODES(M_TERMINATED)))
        return FMU_ERROR;
    if (nx != (size_t)FMU_NX)
        return fmu_refuse(c, "%s%s: %zu states, the FMU has %d", c->api, what, nx, FMU_NX);
    int st = evaluate(c, EVAL_DX); /* the state derivative only: no output converted */
    if (st != FMU_OK)
        return st;
    memcpy(derivatives, c->dx, nx * sizeof(double));
    return FMU_OK;
}

int fmu_get_states(Instance *c, double x[], size_t nx, const char *what)
{
    if (fmu_me_call(c, what, IN_MODES(M_INIT) | IN_MODES(M_EVENT) | IN_MODES(M_CONT) |
                                 IN_MODES(M_TERMINATED)))
        return FMU_ERROR;
    if (nx != (size_t)FMU_NX)
        return fmu_refuse(c, "%s%s: %zu states, the FMU has %d", c->api, what, nx, FMU_NX);
    int bs = fmu_ensure_built(c);
    if (bs != FMU_OK)
        return bs;
    memcpy(x, c->x, nx * sizeof(double));
    return FMU_OK;
}
