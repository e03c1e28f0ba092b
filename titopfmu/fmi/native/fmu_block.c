/*
 * fmu_block.c -- the block model behind the FMU layer (fmu.h): a titopfmu block as a one-body
 * core model whose parent motion and child-port wrenches are inputs (titop.h,
 * TITOP_PARENT_INPUT; data in fmu_block.h). Its parameters are checked and built into the core
 * model, its outputs and state derivatives computed by titop_eval, its exact directional
 * derivatives by the core's complex-step build; co-simulation steps with the layer's internal
 * Runge-Kutta method (the solver.* parameters). No physics here: the core's.
 */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmu_block.h"
#if FMU_KIND >= 0
#include "fmu_checks.c"
#endif
#if FMU_NFLEX
#include "fmu_flex.c"
#endif

static void clear(FmuModelData *b);

/* ---- building the core model from the parameters ---- */
static const double *par(const FmuInstance *c, int role, int arg)
{
    for (size_t g = 0; g < sizeof FMU_PARAMS / sizeof FMU_PARAMS[0]; g++)
        if (FMU_PARAMS[g][0] == role && FMU_PARAMS[g][1] == arg)
            return &c->v[FMU_PARAMS[g][2]];
    return NULL;
}

#if FMU_KIND != -1
static int par_vr(int role, int arg)
{
    for (size_t g = 0; g < sizeof FMU_PARAMS / sizeof FMU_PARAMS[0]; g++)
        if (FMU_PARAMS[g][0] == role && FMU_PARAMS[g][1] == arg)
            return FMU_PARAMS[g][2];
    return -1;
}

/* the joint law of the parameters (titop.h), checked by the core's titop_check_law: a joint
   law block's (FMU_KIND -2: k, d, ...) or the law a forward 1-dof joint body carries on its own
   joint (law.k, law.d, ..., used when law.enabled); a refusal names the FMU's parameter */
static int build_law(FmuInstance *c, titop_law *law)
{
    static const int roles[TITOP_LAW_DOUBLES] = {
        PAR_LAW_K,       PAR_LAW_D,     PAR_LAW_QREF,  PAR_LAW_FRICTION, PAR_LAW_FRICTION_VELOCITY,
        PAR_LAW_LIMITED, PAR_LAW_LOWER, PAR_LAW_UPPER, PAR_LAW_K_STOP,   PAR_LAW_D_STOP};
    double row[TITOP_LAW_DOUBLES];
    for (int k = 0; k < TITOP_LAW_DOUBLES; k++)
        row[k] = *par(c, roles[k], 0);
    memset(law, 0, sizeof *law);
    titop_law_from_row(row, law);
    int code = titop_check_law(law);
    if (code != TITOP_LAW_OK) {
        int k = code <= TITOP_LAW_FRICTION_VELOCITY ? code - 1 : code; /* its place in the row */
        return fmu_refuse(c, "parameter '%s' = %s %s", FMU_VAR_NAME[par_vr(roles[k], 0)],
                          fmu_num(row[k]).s, titop_law_rule(code));
    }
    return FMU_OK;
}
#endif

static int build(FmuInstance *c)
{
    FmuModelData *b = c->m;
    if (b->built)
        return 0;
    for (int vr = 0; vr < FMU_NVARS; vr++)
        if (FMU_VAR_CAUS[vr] == C_PARAM && !isfinite(c->v[vr])) {
            fmu_refuse(c, "parameter '%s' = %s is not finite", FMU_VAR_NAME[vr],
                       fmu_num(c->v[vr]).s);
            return -1;
        }
    c->max_step = *par(c, PAR_MAX_STEP, 0);
    c->method = (int)*par(c, PAR_METHOD, 0);
    c->max_substeps = (long)*par(c, PAR_MAX_SUBSTEPS, 0);
    if (!(c->max_step > 0)) {
        fmu_refuse(c, "parameter 'solver.max_step' = %s must be positive (s)",
                   fmu_num(c->max_step).s);
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
#if FMU_KIND == -2
    if (build_law(c, &b->law) != FMU_OK)
        return -1;
#endif
#if FMU_KIND >= 0
    titop_body *B = &b->body;
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
        if (check_body(c, "", B->mass, par(c, PAR_INERTIA, 0), par(c, PAR_COM, 0),
                       FMU_KIND == TITOP_RIGID))
            return -1;
        memcpy(B->inertia, par(c, PAR_INERTIA, 0), sizeof B->inertia);
        memcpy(B->com, par(c, PAR_COM, 0), sizeof B->com);
        memcpy(B->gravity, par(c, PAR_GRAVITY, 0), sizeof B->gravity);
    }
    for (int k = 0; k < 9; k++)
        B->R0[k] = k % 4 == 0;
    if (par(c, PAR_DCM, 0)) {
        if (check_dcm(c, FMU_VAR_NAME[par_vr(PAR_DCM, 0)], par(c, PAR_DCM, 0)))
            return -1;
        memcpy(B->R0, par(c, PAR_DCM, 0), sizeof B->R0);
    }
    if (par(c, PAR_AXIS, 0)) { /* normalised by the core, as the Python blocks' (any length) */
        if (check_axis(c, FMU_VAR_NAME[par_vr(PAR_AXIS, 0)], par(c, PAR_AXIS, 0), B->axis))
            return -1;
    }
    if (par(c, PAR_ARMATURE, 0)) { /* the rotor inertia of each joint speed (eq. 20) */
        int nv = FMU_KIND == TITOP_FREE ? 6 : FMU_KIND == TITOP_SPHERICAL ? 3 : 1;
        memcpy(B->armature, par(c, PAR_ARMATURE, 0), (size_t)nv * sizeof(double));
        if (check_armature(c, "", B, nv))
            return -1;
    }
    if (FMU_KIND == TITOP_GROUND) {
        titop_euler_dcm(par(c, PAR_GROUND_EULER, 0), B->R0);
        memcpy(B->pos, par(c, PAR_GROUND_POSITION, 0), sizeof B->pos);
    }
    for (int j = 0; j < FMU_NCHILDREN; j++) {
        memcpy(b->ports[j].pc, par(c, PAR_POINT, j + 1), 3 * sizeof(double));
        b->ports[j].child = -1;
        b->ports[j].w0 = FMU_PORT_W0 + 6 * j;
    }
    if (FMU_HAS_EXT) {
        memcpy(b->ext.point, par(c, PAR_EXT_POINT, 0), sizeof b->ext.point);
        b->ext.inertial = *par(c, PAR_EXT_INERTIAL, 0) != 0.0;
        b->ext.w0 = FMU_EXT_W0;
    }
    titop_model *m = &b->model;
    memset(m, 0, sizeof *m);
    m->nbodies = 1;
    m->bodies = B;
    m->nports = FMU_NCHILDREN;
    m->ports = b->ports;
    m->nexts = FMU_HAS_EXT;
    m->exts = &b->ext;
    m->nx = FMU_NX;
    m->nin = FMU_NIN;
    if (par(c, PAR_LAW_ENABLED, 0) && *par(c, PAR_LAW_ENABLED, 0) != 0.0) {
        /* the law of its own joint, in the core's evaluation (its effort adds to joint.tau) */
        if (build_law(c, &b->law) != FMU_OK)
            return -1;
        b->law.src = b->law.dst = 0;
        m->nlaws = 1;
        m->laws = &b->law;
    }
#if FMU_NFLEX
    /* its flexible part: the reduced model's constant tables (fmu_flex.c), checked by the core
       (titop_model_init: titop_check_flex, child port k at node k + 1; docs/flexible.md §6) */
    if (fmu_flex_setup(c, b->flex, FMU_NFLEX, FMU_FLEX_PARTS, FMU_FLEX_INTS,
                       sizeof FMU_FLEX_INTS / sizeof FMU_FLEX_INTS[0], FMU_FLEX_ROW,
                       sizeof FMU_FLEX_ROW / sizeof FMU_FLEX_ROW[0], b->lee,
                       (size_t)FMU_FLEX_NLEE, 1, FMU_NX, NULL) != FMU_OK)
        return -1;
    m->nflex = FMU_NFLEX;
    m->flex = b->flex;
#endif
    int bad;
    char msg[200];
    if (titop_model_init(m, &bad, msg, sizeof msg) != TITOP_OK) {
        fmu_refuse(c, "invalid block: %s", msg);
        return -1;
    }
    /* a body alone with no inertia about its joint is refused (eq. 20); with a flexible part
       its inertia is the part's too: judged by the evaluation (TITOP_SINGULAR) */
    if (!FMU_NFLEX && check_apparent_inertia(c, "", B))
        return -1;
    if (!b->data) { /* both buffers, or neither */
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
        b->data = data;
        b->zwork = zw;
    }
    /* initial states */
    double *x = c->x;
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
#if FMU_NFLEX
    { /* the flexible part's [q(0), q̇(0)] after the block's own states (its x0) */
        const titop_flex *F = &b->flex[0];
        memcpy(x + F->x0, par(c, PAR_ELASTIC_Q0, 0), (size_t)F->n * sizeof(double));
        memcpy(x + F->x0 + F->n, par(c, PAR_ELASTIC_QD0, 0), (size_t)F->n * sizeof(double));
    }
#endif
#endif
    b->built = 1;
    clear(b);
    return 0;
}

/* build() as an FMI status: out of memory is the only FMU_FATAL */
static int block_build(FmuInstance *c)
{
    int r = build(c);
    return r == 0 ? FMU_OK : r == -2 ? FMU_FATAL : FMU_ERROR;
}

/* ---- evaluation ---- */

/* the core's input vector from the FMI inputs (at time t for CS input derivatives) */
static void gather_inputs(FmuInstance *c, double dt)
{
    FmuModelData *b = c->m;
    for (size_t g = 0; g < sizeof FMU_INPUTS / sizeof FMU_INPUTS[0]; g++) {
        int off = FMU_INPUTS[g][1], vr0 = FMU_INPUTS[g][2], n = FMU_INPUTS[g][3];
        for (int k = 0; k < n; k++)
            b->in[off + k] = c->v[vr0 + k] + dt * c->du[vr0 + k];
    }
}

/* Everything computed from the time, the state and the inputs is out of date. */
static void clear(FmuModelData *b)
{
    b->evaluated = 0;
    b->out_ok = 0;
    b->z_level = 0;
    b->zout_ok = 0;
}

/* ... and from the parameters too: the model is built again when next needed */
static void block_touch(FmuInstance *c, int parameters)
{
    if (parameters)
        c->m->built = 0;
    clear(c->m);
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
static int evaluate(FmuInstance *c, int level)
{
    FmuModelData *b = c->m;
    if (b->evaluated >= level)
        return FMU_OK;
    int bs = block_build(c);
    if (bs != FMU_OK)
        return bs;
    gather_inputs(c, 0.0);
#if FMU_KIND >= 0
    int bad;
    int st = titop_eval(&b->model, b->data, c->t, c->x, b->in, level >= EVAL_FULL,
                        FMU_NX ? c->dx : NULL, &bad);
    if (st != TITOP_OK)
        return fmu_refuse(c, "evaluation failed at t = %.9g s: %s", c->t,
                      titop_status_text(st));
    for (int k = 0; k < FMU_NX; k++)
        if (!isfinite(c->dx[k]))
            return fmu_refuse(c, "state derivative '%s' is not finite at t = %.9g s (inputs or "
                                 "states out of range)", FMU_VAR_NAME[FMU_DX_VR0 + k], c->t);
#endif
    b->evaluated = level;
    return FMU_OK;
}

/* The output groups of `mask` (bit g: row g of FMU_OUTPUTS) converted into v, each once per
   change of the time, state or inputs. */
static int outputs(FmuInstance *c, unsigned mask)
{
    FmuModelData *b = c->m;
#if FMU_KIND == -1
    if (mask & ~b->out_ok) /* both sides of a closure come from one call */
        mask = (1u << NGROUPS) - 1u;
#endif
    mask &= ~b->out_ok;
    if (!mask)
        return FMU_OK;
    int st = evaluate(c, need_level(mask));
    if (st != FMU_OK)
        return st;
#if FMU_KIND >= 0
    titop_layout L;
    titop_data_layout(&b->model, &L);
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
            memcpy(o, b->data + L.wrench_parent, 6 * sizeof(double));
            break;
        case OUT_PORT_MOTION:
            titop_port_motion(&b->model, b->data, arg, o);
            break;
        case OUT_BODY_MOTION:
            titop_body_motion(&b->model, b->data, 0, o);
            break;
        case OUT_JOINT_MOTION:
            titop_joint_motion(&b->model, b->data, 0, o);
            break;
        case OUT_EFFORT:
        case OUT_BODY_WRENCH:
            memcpy(o, b->data + (role == OUT_EFFORT ? L.effort : L.out),
                   FMU_OUTPUTS[g][3] * sizeof(double));
            break;
#endif
#if FMU_KIND == -1
        case OUT_CLOSURE_LEFT:
            titop_closure_block(par(c, PAR_K, 0), par(c, PAR_D, 0), b->in, b->in + 18, o,
                                &c->v[FMU_OUTPUTS[g + 1][2]]);
            break;
        case OUT_CLOSURE_RIGHT:
            break;
#endif
#if FMU_KIND == -2
        case OUT_LAW:
            titop_spring_damper_block(&b->law, b->in, o);
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
    b->out_ok |= mask;
    return FMU_OK;
}

/* The complex-step evaluation along `seed` up to `level` (the core's titop_eval_seeded), unless
   the one held is along the same seed at the same time, state and inputs; the derivatives of
   the outputs are then read from it group by group (derivative_group). */
static int seeded(FmuInstance *c, const double *seed, int level)
{
    FmuModelData *b = c->m;
    if (b->z_level >= level && memcmp(seed, b->zseed, (FMU_NX + FMU_NIN) * sizeof(double)) == 0)
        return FMU_OK;
    gather_inputs(c, 0.0);
    b->z_level = 0;
    b->zout_ok = 0;
#if FMU_KIND >= 0
    int bad;
    int st = titop_eval_seeded(&b->model, b->zwork, c->t, c->x, b->in, seed, seed + FMU_NX,
                               level >= EVAL_FULL, &bad);
    if (st != TITOP_OK)
        return fmu_refuse(c, "directional derivative: evaluation failed at t = %.9g s", c->t);
#else /* a loop closure or a joint law: every output at once, from the inputs */
    double complex zin[FMU_NIN], zw[12];
    for (int k = 0; k < FMU_NIN; k++)
        zin[k] = b->in[k] + I * (TITOP_CSTEP_H * seed[k]);
#if FMU_KIND == -1
    titopz_closure_block(par(c, PAR_K, 0), par(c, PAR_D, 0), (double *)zin, (double *)(zin + 18),
                         (double *)zw, (double *)(zw + 6));
#else
    titopz_spring_damper_block(&b->law, (double *)zin, (double *)zw);
#endif
    /* outputs in value-reference order: left.W (6) then right.W (6), or tau */
    for (size_t g = 0; g < NGROUPS; g++)
        for (int k = 0; k < FMU_OUTPUTS[g][3]; k++)
            b->dout[FMU_OUTPUTS[g][2] + k] =
                cimag(zw[(FMU_OUTPUTS[g][0] == OUT_CLOSURE_RIGHT ? 6 : 0) + k]) / TITOP_CSTEP_H;
    b->zout_ok = (1u << NGROUPS) - 1u;
#endif
    memcpy(b->zseed, seed, (FMU_NX + FMU_NIN) * sizeof(double));
    b->z_level = level;
    return FMU_OK;
}

#if FMU_KIND >= 0
/* the derivatives of output group g from the held complex-step evaluation, into dout */
static void derivative_group(FmuInstance *c, int g)
{
    FmuModelData *b = c->m;
    if (b->zout_ok & (1u << g))
        return;
    titop_layout L;
    titop_data_layout(&b->model, &L);
    const double complex *zd = (const double complex *)b->zwork;
    double complex buf[18];
    const double complex *out = buf;
    switch (FMU_OUTPUTS[g][0]) {
    case OUT_WRENCH_PARENT:
        out = zd + L.wrench_parent;
        break;
    case OUT_PORT_MOTION:
        titopz_port_motion(&b->model, b->zwork, FMU_OUTPUTS[g][1], (double *)buf);
        break;
    case OUT_BODY_MOTION:
        titopz_body_motion(&b->model, b->zwork, 0, (double *)buf);
        break;
    case OUT_JOINT_MOTION:
        titopz_joint_motion(&b->model, b->zwork, 0, (double *)buf);
        break;
    case OUT_EFFORT:
        out = zd + L.effort;
        break;
    default: /* OUT_BODY_WRENCH */
        out = zd + L.out;
        break;
    }
    for (int k = 0; k < FMU_OUTPUTS[g][3]; k++)
        b->dout[FMU_OUTPUTS[g][2] + k] = cimag(out[k]) / TITOP_CSTEP_H;
    b->zout_ok |= 1u << g;
}
#endif

/* ---- the model interface (fmu.h) ---- */

static void block_free(FmuInstance *c)
{
    if (c->m->data)
        c->dealloc(c->m->data);
    if (c->m->zwork)
        c->dealloc(c->m->zwork);
}

static int block_outputs(FmuInstance *c, const unsigned slot[], size_t n)
{
    unsigned groups = 0; /* the output groups asked for */
    for (size_t i = 0; i < n; i++)
        if (slot[i] < FMU_NVARS && FMU_VAR_CAUS[slot[i]] == C_OUTPUT)
            groups |= 1u << group_of(slot[i]);
    return outputs(c, groups);
}

/* the state derivative only: no output converted */
static int block_derivatives(FmuInstance *c) { return evaluate(c, EVAL_DX); }

/* f(t0 + s, x): the state derivative with the inputs at t0 + s (held, or interpolated) */
static int block_rate(FmuInstance *c, double t0, double s, const double *x, double *dx)
{
#if FMU_KIND >= 0
    int bad;
    gather_inputs(c, s);
    return titop_eval(&c->m->model, c->m->data, t0 + s, x, c->m->in, 0, dx, &bad);
#else
    (void)c;
    (void)t0;
    (void)s;
    (void)x;
    (void)dx;
    return 0;
#endif
}

/* exact: one complex-step evaluation per seed vector (states, then core inputs), whatever the
   number of unknowns, kept and reused while the same seed is asked at the same time, state
   and inputs */
static int block_directional(FmuInstance *c, const unsigned vUnknown[], size_t nUnknown,
                             const unsigned vKnown[], size_t nKnown, const double dvKnown[],
                             double dvUnknown[])
{
    FmuModelData *b = c->m;
    unsigned groups = 0;
    for (size_t i = 0; i < nUnknown; i++)
        if (FMU_VAR_CAUS[vUnknown[i]] == C_OUTPUT)
            groups |= 1u << group_of(vUnknown[i]);
    double seed[FMU_NX + FMU_NIN + 1];
    memset(seed, 0, sizeof seed);
    for (size_t i = 0; i < nKnown; i++) { /* a parameter's seed is 0: it adds nothing */
        int vr = (int)vKnown[i];
        if (FMU_NX && vr >= FMU_X_VR0 && vr < FMU_X_VR0 + FMU_NX)
            seed[vr - FMU_X_VR0] += dvKnown[i];
        for (size_t g = 0; g < sizeof FMU_INPUTS / sizeof FMU_INPUTS[0]; g++)
            if (vr >= FMU_INPUTS[g][2] && vr < FMU_INPUTS[g][2] + FMU_INPUTS[g][3])
                seed[FMU_NX + FMU_INPUTS[g][1] + vr - FMU_INPUTS[g][2]] += dvKnown[i];
    }
    int st = seeded(c, seed, need_level(groups));
    if (st != FMU_OK)
        return st;
#if FMU_KIND >= 0
    const double complex *zdx = (const double complex *)b->zwork +
                                titop_data_size(&b->model) + FMU_NX + FMU_NIN;
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
        dvUnknown[i] = b->dout[vr];
    }
    return FMU_OK;
}

/* by concern: life cycle; values; stepping; derivatives */
const FmuModel FMU_MODEL = {
    .size = sizeof(FmuModelData), .free = block_free, .build = block_build, .touch = block_touch,
    .outputs = block_outputs, .derivatives = block_derivatives,
    .rate = block_rate,
    .directional = block_directional,
};

/* The model-independent layer, compiled with the block: native/build.py compiles the FMI
   functions (fmi2_block.c or fmi3_block.c) and this file. */
#include "fmu.c"
