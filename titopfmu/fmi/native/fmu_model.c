/*
 * fmu_model.c -- the whole-model FMU behind the FMU layer (fmu.h): every body of a System as one
 * core tree model (titop.h; data in fmu_model.h), its algebraic loop solved inside by the core's
 * articulated-inertia sweep, so that any FMI host runs it exactly, with no iteration between
 * FMUs.
 *
 *   parameters   every block parameter and initial condition by its model-file name
 *                ("pend1.mass"), checked with the core's checks (titop_check_*) and built into
 *                the core model (build); a flexible part's reduced model is constant data
 *                (fmu_model.h), its initial elastic state parameters;
 *   inputs       the System's inputs fed from outside (joint efforts, external wrenches, imposed
 *                motions) and, for a subsystem, its TITOP boundary ports (the parent port's
 *                motion vector, child ports' wrenches);
 *   outputs      signals read from the core's evaluation (positions, Euler angles, twists,
 *                joint motions, wrenches, states), the TITOP boundary ports' wrench and motions;
 *   model exchange  the state derivative from titop_eval, exact directional derivatives from the
 *                core's complex-step build (titop_eval_seeded);
 *   co-simulation   an internal DOP853 (or RK45) integrator with error control and dense output
 *                (ode.h), kept from one communication step to the next, so that the results do
 *                not depend on the host's communication steps (ode.h explains why).
 * No physics here: the core's.
 */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fmu_model.h"
#include "fmu_checks.c"
#include "fmu_flex.c"

#define NPARAMS (sizeof FMU_PARAMS / sizeof FMU_PARAMS[0])
#define NINPUTS (sizeof FMU_INPUTS / sizeof FMU_INPUTS[0])
#define NMOUT FMU_NMOUT

static void clear(FmuInstance *c);
static void gather_inputs(FmuInstance *c, double dt, double *in);
static const char *body_name(int body);

/* ---- building the core model from the parameters ---- */

/* the first slot of the parameter (role, arg), or -1 */
static int par_slot(int role, int arg)
{
    for (size_t g = 0; g < NPARAMS; g++)
        if (FMU_PARAMS[g][0] == role && FMU_PARAMS[g][1] == arg)
            return FMU_PARAMS[g][2];
    return -1;
}

/* a parameter's name without its index ("pend1.inertia" for "pend1.inertia[1,1]") */
typedef struct {
    char s[128];
} Name;

static Name par_name(int slot)
{
    Name n;
    snprintf(n.s, sizeof n.s, "%s", FMU_VAR_NAME[slot]);
    char *b = strchr(n.s, '[');
    if (b)
        *b = '\0';
    return n;
}

/* "pend1." : the prefix of body i's parameter names */
static Name prefix(int i)
{
    Name n;
    snprintf(n.s, sizeof n.s, "%s.", FMU_BODY_NAME[i]);
    return n;
}

/* n initial values into the states of body B from its state `at` (checked against the state
   vector: a configuration that does not match is refused, never written out of bounds) */
static int put_state(FmuInstance *c, const titop_body *B, int at, const double *v, int n)
{
    int k0 = B->x0 + at;
    if (B->x0 < 0 || k0 + n > FMU_NX)
        return fmu_refuse(c, "internal: initial condition of body %d out of the state vector",
                          (int)(B - c->m->bodies));
    for (int k = 0; k < n; k++) { /* (the bounds again, for the compiler) */
        int i = k0 + k;
        if (i >= 0 && i < FMU_NX)
            c->x[i] = v[k];
    }
    return FMU_OK;
}

/* the flexible part of body i, or NULL */
static const titop_flex *flex_of(const FmuModelData *b, int i)
{
    for (int k = 0; k < FMU_NFLEX; k++)
        if (b->flex[k].body == i)
            return &b->flex[k];
    return NULL;
}

/* the flexible parts from the constant tables (fmu_model.h), by fmu_flex_setup (fmu_flex.c) */
static int setup_flex(FmuInstance *c)
{
    FmuModelData *b = c->m;
    return fmu_flex_setup(c, b->flex, FMU_NFLEX, FMU_FLEX_PARTS, FMU_FLEX_INTS,
                          sizeof FMU_FLEX_INTS / sizeof FMU_FLEX_INTS[0], FMU_FLEX_ROW,
                          sizeof FMU_FLEX_ROW / sizeof FMU_FLEX_ROW[0], b->lee,
                          (size_t)FMU_FLEX_NLEE, FMU_NBODIES, FMU_NX, FMU_BODY_NAME);
}

/* one parameter row into the core model (its checks first); initial conditions into c->x */
static int apply(FmuInstance *c, int role, int arg, int slot)
{
    FmuModelData *b = c->m;
    const double *v = &c->v[slot];
    titop_body *B = &b->bodies[arg < FMU_NBODIES ? arg : 0];
    double q[4];
    Name n = par_name(slot);
    switch (role) {
    case PAR_MASS: /* mass, inertia and centre of mass checked together (build) */
        B->mass = v[0];
        return FMU_OK;
    case PAR_INERTIA:
        memcpy(B->inertia, v, sizeof B->inertia);
        return FMU_OK;
    case PAR_COM:
        memcpy(B->com, v, sizeof B->com);
        return FMU_OK;
    case PAR_GRAVITY:
        memcpy(B->gravity, v, sizeof B->gravity);
        return FMU_OK;
    case PAR_AXIS:
        return check_axis(c, n.s, v, B->axis) ? FMU_ERROR : FMU_OK;
    case PAR_ARMATURE: { /* the rotor inertia of each joint speed (eq. 20), checked here */
        int nv = B->kind == TITOP_FREE ? 6 : B->kind == TITOP_SPHERICAL ? 3 : 1;
        memcpy(B->armature, v, (size_t)nv * sizeof(double));
        return check_armature(c, prefix(arg).s, B, nv) ? FMU_ERROR : FMU_OK;
    }
    case PAR_DCM:
        if (check_dcm(c, n.s, v))
            return FMU_ERROR;
        memcpy(B->R0, v, sizeof B->R0);
        return FMU_OK;
    case PAR_GROUND_POSITION:
        memcpy(B->pos, v, sizeof B->pos);
        return FMU_OK;
    case PAR_GROUND_EULER:
        titop_euler_dcm(v, B->R0);
        return FMU_OK;
    case PAR_POINT:
        memcpy(b->ports[arg].pc, v, 3 * sizeof(double));
        return FMU_OK;
    case PAR_EXT_POINT:
        memcpy(b->exts[arg].point, v, 3 * sizeof(double));
        return FMU_OK;
    case PAR_JDAMPING: /* ball, free, free-flying root: -d u, -k θ, free and root: -k (r - r_ref)
                          (titop_body; the core checks them) */
        if (!(v[0] >= 0))
            return fmu_refuse(c, "parameter '%s' = %s must be >= 0", n.s, fmu_num(v[0]).s);
        B->damping = v[0];
        return FMU_OK;
    case PAR_JSTIFFNESS:
        if (!(v[0] >= 0))
            return fmu_refuse(c, "parameter '%s' = %s must be >= 0", n.s, fmu_num(v[0]).s);
        B->stiffness = v[0];
        return FMU_OK;
    case PAR_JSPRING_POS: /* finite (build: the parameters' finiteness check) */
        memcpy(B->spring_pos, v, sizeof B->spring_pos);
        return FMU_OK;
    case PAR_JSPRING_REF: { /* a unit quaternion [w, x, y, z] (to 1e-6, normalised here) */
        double n2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3];
        if (!(fabs(n2 - 1.0) <= 2e-6))
            return fmu_refuse(c, "parameter '%s' is not a unit quaternion [w, x, y, z]", n.s);
        for (int k = 0; k < 4; k++)
            B->spring_ref[k] = v[k] / sqrt(n2);
        return FMU_OK;
    }
    case PAR_MIMIC_MULTIPLIER: /* finite (build: the parameters' finiteness check) */
        b->mimics[arg < FMU_NMIMICS ? arg : 0].multiplier = v[0];
        return FMU_OK;
    case PAR_MIMIC_OFFSET:
        b->mimics[arg < FMU_NMIMICS ? arg : 0].offset = v[0];
        return FMU_OK;
    case PAR_K:
    case PAR_D:
        memcpy(role == PAR_K ? b->closures[arg].K : b->closures[arg].Dm, v, 36 * sizeof(double));
        return FMU_OK;
    case PAR_LAW_K:
    case PAR_LAW_D:
        if (!(v[0] >= 0))
            return fmu_refuse(c, "parameter '%s' = %s must be >= 0", n.s, fmu_num(v[0]).s);
        *(role == PAR_LAW_K ? &b->laws[arg].k : &b->laws[arg].d) = v[0];
        return FMU_OK;
    case PAR_LAW_QREF:
        b->laws[arg].qref = v[0];
        return FMU_OK;
    case PAR_LAW_FRICTION: /* the law's values are checked together (check_laws) */
        b->laws[arg].friction = v[0];
        return FMU_OK;
    case PAR_LAW_FRICTION_VELOCITY:
        b->laws[arg].friction_velocity = v[0];
        return FMU_OK;
    case PAR_LAW_LIMITED:
        b->laws[arg].limited = v[0] != 0.0;
        return FMU_OK;
    case PAR_LAW_LOWER:
        b->laws[arg].lower = v[0];
        return FMU_OK;
    case PAR_LAW_UPPER:
        b->laws[arg].upper = v[0];
        return FMU_OK;
    case PAR_LAW_K_STOP:
        b->laws[arg].k_stop = v[0];
        return FMU_OK;
    case PAR_LAW_D_STOP:
        b->laws[arg].d_stop = v[0];
        return FMU_OK;
    /* initial conditions: the states of the body (x0 in its record) */
    case PAR_POSITION0: /* rigid root: [IP_i (3), q (4), twist (6)] */
    case PAR_JPOSITION0: /* free joint: [OP_b (3), q (4), v (3), omega (3)] */
        return put_state(c, B, 0, v, 3);
    case PAR_EULER0:
        titop_euler_quaternion(v, q);
        return put_state(c, B, 3, q, 4);
    case PAR_TWIST0:
        return put_state(c, B, 7, v, 6);
    case PAR_Q0:
    case PAR_QD0:
        return put_state(c, B, role == PAR_Q0 ? 0 : 1, v, 1);
    case PAR_JEULER0: /* spherical: [q (4), omega (3)]; free: after OP */
        titop_euler_quaternion(v, q);
        return put_state(c, B, B->kind == TITOP_FREE ? 3 : 0, q, 4);
    case PAR_JVELOCITY0:
        return put_state(c, B, 7, v, 3);
    case MPAR_ELASTIC_Q0: /* a flexible part's [q (n), q̇ (n)] from its first state x0 */
    case MPAR_ELASTIC_QD0: {
        const titop_flex *F = flex_of(b, arg);
        if (!F)
            return fmu_refuse(c, "internal: parameter '%s' of a body without a flexible part",
                              n.s);
        return put_state(c, B, F->x0 - B->x0 + (role == MPAR_ELASTIC_QD0 ? F->n : 0), v, F->n);
    }
    case PAR_JOMEGA0:
        return put_state(c, B, B->kind == TITOP_FREE ? 10 : 4, v, 3);
    default: /* solver parameters: read by build */
        return FMU_OK;
    }
}

/* every joint law's values by the core's titop_check_law, the one at fault named
   ('slider_law.k_stop') */
static int check_laws(FmuInstance *c)
{
    static const int roles[TITOP_LAW_DOUBLES] = {
        PAR_LAW_K,       PAR_LAW_D,     PAR_LAW_QREF,  PAR_LAW_FRICTION, PAR_LAW_FRICTION_VELOCITY,
        PAR_LAW_LIMITED, PAR_LAW_LOWER, PAR_LAW_UPPER, PAR_LAW_K_STOP,   PAR_LAW_D_STOP};
    for (int j = 0; j < FMU_NLAWS; j++) {
        int code = titop_check_law(&c->m->laws[j]);
        if (code == TITOP_LAW_OK)
            continue;
        int slot = par_slot(roles[code <= TITOP_LAW_FRICTION_VELOCITY ? code - 1 : code], j);
        if (slot < 0) /* (every law has all its parameters) */
            return fmu_refuse(c, "joint law %d: '%s' %s", j, titop_law_parameter(code),
                              titop_law_rule(code));
        return fmu_refuse(c, "parameter '%s' = %s %s", par_name(slot).s, fmu_num(c->v[slot]).s,
                          titop_law_rule(code));
    }
    return FMU_OK;
}

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
    double rtol = c->v[par_slot(MPAR_RTOL, 0)], atol = c->v[par_slot(MPAR_ATOL, 0)];
    double hmax = c->v[par_slot(PAR_MAX_STEP, 0)];
    double maxsub = c->v[par_slot(PAR_MAX_SUBSTEPS, 0)];
    if (!(rtol > 0 && rtol < 1)) {
        fmu_refuse(c, "parameter 'solver.rtol' = %s must be in (0, 1)", fmu_num(rtol).s);
        return -1;
    }
    if (!(atol > 0)) {
        fmu_refuse(c, "parameter 'solver.atol' = %s must be positive", fmu_num(atol).s);
        return -1;
    }
    if (!(hmax >= 0)) {
        fmu_refuse(c, "parameter 'solver.max_step' = %s must be >= 0 (s; 0: no limit)",
                   fmu_num(hmax).s);
        return -1;
    }
    if (!(maxsub >= 1)) {
        fmu_refuse(c, "parameter 'solver.max_substeps' = %s must be at least 1",
                   fmu_num(maxsub).s);
        return -1;
    }
    memset(b->bodies, 0, sizeof b->bodies);
    memset(b->ports, 0, sizeof b->ports);
    memset(b->exts, 0, sizeof b->exts);
    memset(b->closures, 0, sizeof b->closures);
    memset(b->laws, 0, sizeof b->laws);
    memset(b->mimics, 0, sizeof b->mimics);
    for (int i = 0; i < FMU_NBODIES; i++) {
        titop_body *B = &b->bodies[i];
        const int *r = FMU_BODIES[i];
        B->kind = r[0];
        B->inverse = r[1];
        B->parent = r[2];
        B->slot = r[3];
        B->port0 = r[4];
        B->nports = r[5];
        B->ext0 = r[6];
        B->next = r[7];
        B->x0 = r[8];
        B->in0 = r[9];
        B->pm0 = r[10];
        for (int k = 0; k < 9; k++)
            B->R0[k] = k % 4 == 0;
    }
    for (int j = 0; j < FMU_NPORTS; j++) {
        b->ports[j].child = FMU_PORTS[j][0];
        b->ports[j].w0 = FMU_PORTS[j][1];
    }
    for (int j = 0; j < FMU_NEXTS; j++) {
        b->exts[j].inertial = FMU_EXTS[j][0];
        b->exts[j].w0 = FMU_EXTS[j][1];
    }
    for (int j = 0; j < FMU_NCLOSURES; j++) {
        b->closures[j].left = FMU_CLOSURES[j][0];
        b->closures[j].right = FMU_CLOSURES[j][1];
    }
    for (int j = 0; j < FMU_NLAWS; j++) {
        b->laws[j].src = FMU_LAWS[j][0];
        b->laws[j].dst = FMU_LAWS[j][1];
    }
    for (int j = 0; j < FMU_NMIMICS; j++) {
        b->mimics[j].follower = FMU_MIMICS[j][0];
        b->mimics[j].leader = FMU_MIMICS[j][1];
    }
    if (setup_flex(c) != FMU_OK)
        return -1;
    for (size_t g = 0; g < NPARAMS; g++)
        if (apply(c, FMU_PARAMS[g][0], FMU_PARAMS[g][1], FMU_PARAMS[g][2]) != FMU_OK)
            return -1;
    if (check_laws(c) != FMU_OK)
        return -1;
    for (int i = 0; i < FMU_NBODIES; i++) { /* each body's checks, the blocks' (fmu_checks.c) */
        const titop_body *B = &b->bodies[i];
        if (B->kind != TITOP_GROUND &&
            check_body(c, prefix(i).s, B->mass, B->inertia, B->com, B->kind == TITOP_RIGID))
            return -1;
    }
    titop_model *m = &b->model;
    memset(m, 0, sizeof *m);
    m->nbodies = FMU_NBODIES;
    m->bodies = b->bodies;
    m->nports = FMU_NPORTS;
    m->ports = b->ports;
    m->nexts = FMU_NEXTS;
    m->exts = b->exts;
    m->nclosures = FMU_NCLOSURES;
    m->closures = b->closures;
    m->nlaws = FMU_NLAWS;
    m->laws = b->laws;
    m->nmimics = FMU_NMIMICS;
    m->mimics = b->mimics;
    m->nflex = FMU_NFLEX;
    m->flex = b->flex;
    m->nx = FMU_NX;
    m->nin = FMU_NIN;
    int bad;
    char msg[200];
    if (titop_model_init(m, &bad, msg, sizeof msg) != TITOP_OK) {
        fmu_refuse(c, "invalid model, block '%s': %s", body_name(bad), msg);
        return -1;
    }
    /* the mimic followers' initial states from their leaders' (titop_mimic): the integration
       keeps the relation from there */
    titop_mimic_project(m, c->x);
    for (int i = 0; i < FMU_NBODIES; i++) /* a forward joint without child ports (a leaf): */
        if (b->bodies[i].nports == 0 && /* its own inertia (eq. 20), as its Python block; */
            !flex_of(b, i) && /* with a flexible part: judged by the evaluation below */
            check_apparent_inertia(c, prefix(i).s, &b->bodies[i]))
            return -1;
    if (!b->data) { /* every buffer, or none */
        size_t n = titop_data_size(m);
        double *data = c->alloc(n, sizeof(double));
        double *zw = c->alloc(2 * (n + 2 * (size_t)FMU_NX + FMU_NIN) + 2, sizeof(double));
        double *ow = FMU_NX ? c->alloc(ode_work_size(FMU_NX), sizeof(double)) : NULL;
        if (!data || !zw || (FMU_NX && !ow)) {
            if (data)
                c->dealloc(data);
            if (zw)
                c->dealloc(zw);
            if (ow)
                c->dealloc(ow);
            return -2;
        }
        b->data = data;
        b->zwork = zw;
        b->ode_work = ow;
    }
    /* a joint whose articulated inertia S^T Ia S + armature (eq. 20: the subtree its joint
       moves) is singular cannot be solved: one evaluation at the initial state and inputs, the
       sweep's pivots judging it (a massless body is valid when what it carries is not), the
       block named, as the engine does */
    gather_inputs(c, 0.0, b->in);
    if (titop_eval(m, b->data, c->t, c->x, b->in, 0, NULL, &bad) == TITOP_SINGULAR &&
        bad >= 0 && bad < FMU_NBODIES) {
        fmu_refuse(c, "parameter '%sinertia': the articulated inertia seen from the joint of "
                      "'%s' (eq. 20, with the armature) is singular at the initial state: the "
                      "subtree the joint moves has no inertia about the joint (give one of its "
                      "bodies a mass or inertia the joint can move, or the joint an armature)",
                   prefix(bad).s, FMU_BODY_NAME[bad]);
        return -1;
    }
    b->built = 1;
    b->ode_ready = 0; /* new tolerances, or a new model: the integrator starts afresh */
    clear(c);
    return 0;
}

static int model_build(FmuInstance *c)
{
    int r = build(c);
    return r == 0 ? FMU_OK : r == -2 ? FMU_FATAL : FMU_ERROR;
}

/* ---- evaluation ---- */

/* the core's input vector from the FMI inputs, moved on by dt with their derivatives */
static void gather_inputs(FmuInstance *c, double dt, double *in)
{
    for (size_t g = 0; g < NINPUTS; g++) {
        int off = FMU_INPUTS[g][1], vr0 = FMU_INPUTS[g][2], n = FMU_INPUTS[g][3];
        for (int k = 0; k < n; k++)
            in[off + k] = c->v[vr0 + k] + dt * c->du[vr0 + k];
    }
}

static void clear(FmuInstance *c)
{
    FmuModelData *b = c->m;
    b->evaluated = 0;
    memset(b->out_ok, 0, sizeof b->out_ok);
    b->z_level = 0;
}

static void model_touch(FmuInstance *c, int parameters)
{
    if (parameters)
        c->m->built = 0;
    clear(c);
}

/* the output group (row of FMU_MOUTPUTS) holding slot vr, or -1 */
static int group_of(unsigned vr)
{
    for (int g = 0; g < NMOUT; g++)
        if (vr >= (unsigned)FMU_MOUTPUTS[g][2] &&
            vr < (unsigned)(FMU_MOUTPUTS[g][2] + FMU_MOUTPUTS[g][3]))
            return g;
    return -1;
}

/* the evaluation an output role needs: the wrench on a boundary parent port and the wrench
   holding a fixed or imposed-motion root are computed by full evaluations only */
static int level_of(int role)
{
    return role == MOUT_WRENCH_PARENT || role == MOUT_BODY_WRENCH ? EVAL_FULL : EVAL_DX;
}

static const char *failure(int st)
{
    return titop_status_text(st);
}

/* the block a core failure concerns (its body index, or -1) */
static const char *body_name(int body)
{
    return body >= 0 && body < FMU_NBODIES ? FMU_BODY_NAME[body] : "?";
}

static int evaluate(FmuInstance *c, int level)
{
    FmuModelData *b = c->m;
    if (b->evaluated >= level)
        return FMU_OK;
    int bs = model_build(c);
    if (bs != FMU_OK)
        return bs;
    gather_inputs(c, 0.0, b->in);
    int bad = -1;
    int st = titop_eval(&b->model, b->data, c->t, c->x, b->in, level >= EVAL_FULL,
                        FMU_NX ? c->dx : NULL, &bad);
    if (st != TITOP_OK)
        return fmu_refuse(c, "evaluation failed at t = %.9g s, block '%s': %s", c->t,
                          body_name(bad), failure(st));
    for (int k = 0; k < FMU_NX; k++)
        if (!isfinite(c->dx[k]))
            return fmu_refuse(c, "state derivative '%s' is not finite at t = %.9g s (inputs or "
                                 "states out of range)", FMU_VAR_NAME[FMU_DX_VR0 + k], c->t);
    b->evaluated = level;
    return FMU_OK;
}

/* the whole signal of output group g (up to 18 values; real parts) from an evaluated data
   buffer, data being real (z = 0) or complex (z = 1, interleaved) */
static void read_signal(FmuInstance *c, int g, const double *data, const double *x, int z,
                        double complex *out)
{
    FmuModelData *b = c->m;
    int role = FMU_MOUTPUTS[g][0], arg = FMU_MOUTPUTS[g][1];
    titop_layout L;
    titop_data_layout(&b->model, &L);
    const double complex *zd = (const double complex *)data;
    size_t rec = (size_t)arg * L.body_stride;
#define AT(off) (z ? zd[(off)] : (double complex)data[(off)])
    double buf[36];
    double complex zbuf[18];
    switch (role) {
    case MOUT_POSITION: /* [IP]_{R_i} = P_{a/i} [IP]_{R_a} */
        for (int r = 0; r < 3; r++) {
            out[r] = 0;
            for (int k = 0; k < 3; k++)
                out[r] += AT(rec + L.R + 3 * r + k) * AT(rec + L.ip + k);
        }
        return;
    case MOUT_EULER:
    case MOUT_PORT_MOTION:
        if (z) {
            if (role == MOUT_EULER)
                titopz_body_motion(&b->model, data, arg, (double *)zbuf);
            else
                titopz_port_motion(&b->model, data, arg, (double *)zbuf);
            for (int k = 0; k < 18; k++)
                out[k] = zbuf[k];
        } else {
            if (role == MOUT_EULER)
                titop_body_motion(&b->model, data, arg, buf);
            else
                titop_port_motion(&b->model, data, arg, buf);
            for (int k = 0; k < 18; k++)
                out[k] = buf[k];
        }
        if (role == MOUT_EULER)
            for (int k = 0; k < 3; k++)
                out[k] = out[15 + k];
        return;
    case MOUT_JOINT_MOTION: {
        int w = 3 * b->bodies[arg].nv;
        if (z) {
            titopz_joint_motion(&b->model, data, arg, (double *)zbuf);
            for (int k = 0; k < w; k++)
                out[k] = zbuf[k];
        } else {
            titop_joint_motion(&b->model, data, arg, buf);
            for (int k = 0; k < w; k++)
                out[k] = buf[k];
        }
        return;
    }
    case MOUT_TWIST:
    case MOUT_ACC:
    case MOUT_EFFORT:
    case MOUT_BODY_WRENCH:
    case MOUT_WRENCH_PARENT: {
        size_t f = role == MOUT_TWIST ? L.tw : role == MOUT_ACC ? L.acc
                 : role == MOUT_EFFORT ? L.effort : role == MOUT_BODY_WRENCH ? L.out
                 : L.wrench_parent;
        for (int k = 0; k < 6; k++)
            out[k] = AT(rec + f + k);
        return;
    }
    default: /* MOUT_STATE: state arg */
        out[0] = z ? ((const double complex *)x)[arg] : (double complex)x[arg];
        return;
    }
#undef AT
}

static int outputs(FmuInstance *c, const unsigned char *want)
{
    FmuModelData *b = c->m;
    int level = 0;
    for (int g = 0; g < NMOUT; g++)
        if (want[g] && !b->out_ok[g] && level_of(FMU_MOUTPUTS[g][0]) > level)
            level = level_of(FMU_MOUTPUTS[g][0]);
    if (!level)
        return FMU_OK;
    int st = evaluate(c, level);
    if (st != FMU_OK)
        return st;
    for (int g = 0; g < NMOUT; g++) {
        if (!want[g] || b->out_ok[g])
            continue;
        double complex sig[18];
        read_signal(c, g, b->data, c->x, 0, sig);
        int vr0 = FMU_MOUTPUTS[g][2], n = FMU_MOUTPUTS[g][3], first = FMU_MOUTPUTS[g][4];
        for (int k = 0; k < n; k++) {
            double v = creal(sig[first + k]);
            if (!isfinite(v))
                return fmu_refuse(c, "output '%s' is not finite at t = %.9g s (inputs or states "
                                     "out of range)", FMU_VAR_NAME[vr0 + k], c->t);
            c->v[vr0 + k] = v;
        }
        b->out_ok[g] = 1;
    }
    return FMU_OK;
}

static int model_outputs(FmuInstance *c, const unsigned slot[], size_t n)
{
    unsigned char want[ONE(NMOUT)];
    memset(want, 0, sizeof want);
    for (size_t i = 0; i < n; i++)
        if (slot[i] < FMU_NVARS && FMU_VAR_CAUS[slot[i]] == C_OUTPUT) {
            int g = group_of(slot[i]);
            if (g >= 0)
                want[g] = 1;
        }
    return outputs(c, want);
}

static int model_derivatives(FmuInstance *c) { return evaluate(c, EVAL_DX); }

/* ---- co-simulation: the internal integrator ---- */

/* f(t, x) for ode.h: the state derivative with the inputs of the current communication step,
   moved on with their derivatives */
static int rhs(void *ctx, double t, const double *x, double *dx)
{
    FmuInstance *c = ctx;
    FmuModelData *b = c->m;
    double in[ONE(FMU_NIN)] = {0.0}; /* (a model without inputs: its one slot, unread) */
    for (int k = 0; k < FMU_NIN; k++)
        in[k] = b->step_in[k] + (t - b->step_t0) * b->step_din[k];
    int bad;
    return titop_eval(&b->model, b->data, t, x, in, 0, dx, &bad);
}

/* Why the integrator stopped, naming the state and the time: a state that is not finite, else
   the model's evaluation at the last state reached (the block that failed, or the state
   derivative that is not finite), else the state changing fastest for its tolerance. */
static int step_failure(FmuInstance *c, int r, const double *x)
{
    FmuModelData *b = c->m;
    const double t = b->ode.t;
    const char *tail = "; the state before the step is kept";
    for (int k = 0; k < FMU_NX; k++)
        if (!isfinite(x[k]))
            return fmu_refuse(c, "state '%s' became non-finite at t = %.9g s%s",
                              FMU_VAR_NAME[FMU_X_VR0 + k], t, tail);
    double dx[ONE(FMU_NX)];
    int bad = -1;
    int st = rhs(c, t, x, dx);
    if (st == TITOP_OK)
        for (int k = 0; k < FMU_NX; k++)
            if (!isfinite(dx[k]))
                return fmu_refuse(c, "the derivative of state '%s' is not finite at t = %.9g s "
                                     "(inputs or states out of range)%s",
                                  FMU_VAR_NAME[FMU_X_VR0 + k], t, tail);
    if (st != TITOP_OK) {
        titop_eval(&b->model, b->data, t, x, b->step_in, 0, dx, &bad);
        return fmu_refuse(c, "evaluation failed at t = %.9g s, block '%s': %s%s", t,
                          body_name(bad), failure(st), tail);
    }
    int fast = 0;
    double worst = -1.0;
    for (int k = 0; k < FMU_NX; k++) {
        double s = fabs(dx[k]) / (b->ode.atol + b->ode.rtol * fabs(x[k]));
        if (s > worst) {
            worst = s;
            fast = k;
        }
    }
    if (r == ODE_ERHS) /* inside a step, at a stage the integrator tried */
        return fmu_refuse(c, "evaluation failed within the step from t = %.9g s: %s (state "
                             "'%s' changes fastest)%s", t, failure(b->ode.rhs_status),
                          FMU_VAR_NAME[FMU_X_VR0 + fast], tail);
    return fmu_refuse(c, "the internal integrator stopped at t = %.9g s: %s%s (state '%s' "
                         "changes fastest)%s", t, ode_strerror(r),
                      r == ODE_EMAXSTEPS ? ", raise solver.max_substeps" : "",
                      FMU_VAR_NAME[FMU_X_VR0 + fast], tail);
}

static int model_step(FmuInstance *c, double t0, double h, double x[])
{
    FmuModelData *b = c->m;
    double in[ONE(FMU_NIN)], din[ONE(FMU_NIN)];
    memset(in, 0, sizeof in);
    memset(din, 0, sizeof din);
    gather_inputs(c, 0.0, in);
    int ramps = 0;
    for (size_t g = 0; g < NINPUTS; g++)
        for (int k = 0; k < FMU_INPUTS[g][3]; k++) {
            din[FMU_INPUTS[g][1] + k] = c->du[FMU_INPUTS[g][2] + k];
            ramps |= din[FMU_INPUTS[g][1] + k] != 0.0;
        }
    double t_end = t0 + h;
    if (t_end > c->stop) /* rounding of the host's last step: never past the stop time */
        t_end = c->stop < t0 ? t0 : c->stop;
    if (!b->ode_ready) {
        ode_options o;
        ode_default_options(&o);
        o.method = ODE_DOP853;
        o.rtol = c->v[par_slot(MPAR_RTOL, 0)];
        o.atol = c->v[par_slot(MPAR_ATOL, 0)];
        double hmax = c->v[par_slot(PAR_MAX_STEP, 0)];
        o.h_max = hmax > 0 ? hmax : INFINITY;
        o.t_bound = c->stop >= t_end ? c->stop : INFINITY;
        o.max_steps = (long)fmin(c->v[par_slot(PAR_MAX_SUBSTEPS, 0)], 2147483647.0);
        if (ode_init(&b->ode, FMU_NX, t0, c->x, &o, b->ode_work) != ODE_OK)
            return fmu_refuse(c, "the internal integrator refused its options (solver.*)");
        b->ode_ready = 1;
    } else if (ramps || fabs(b->ode_tc - t0) > 1e-12 * fmax(1.0, fabs(t0)) ||
               memcmp(b->ode_x, c->x, sizeof b->ode_x) != 0 ||
               memcmp(b->ode_in, in, sizeof b->ode_in) != 0) {
        /* a jump of the time, the state or an input: restart there (ode.h) */
        if (ode_restart(&b->ode, t0, c->x, ODE_KEEP_H) != ODE_OK)
            return fmu_refuse(c, "the internal integrator cannot restart at t = %.9g s", t0);
    }
    b->step_t0 = t0;
    memcpy(b->step_in, in, sizeof in);
    memcpy(b->step_din, din, sizeof din);
    int r = ode_advance(&b->ode, rhs, c, t_end, x);
    clear(c); /* the data buffer holds the integrator's last stage */
    if (r != ODE_OK) {
        b->ode_ready = 0;
        return step_failure(c, r, x);
    }
    b->ode_tc = t0 + h;
    memcpy(b->ode_x, x, sizeof b->ode_x);
    memcpy(b->ode_in, in, sizeof b->ode_in);
    return FMU_OK;
}

/* the CS rate entry of fmu.h: unused (the model steps itself) but kept well defined */
static int model_rate(FmuInstance *c, double t0, double s, const double *x, double *dx)
{
    FmuModelData *b = c->m;
    gather_inputs(c, s, b->in);
    int bad;
    return titop_eval(&b->model, b->data, t0 + s, x, b->in, 0, dx, &bad);
}

/* the integrator in an FMU state: [ready, tc, x (nx), in (nin), ode_save] */
static void model_save(const FmuInstance *c, double extra[])
{
    const FmuModelData *b = c->m;
    memset(extra, 0, FMU_EXTRA * sizeof(double));
    if (!FMU_NX || !b->ode_ready)
        return;
    extra[0] = 1.0;
    extra[1] = b->ode_tc;
    memcpy(extra + 2, b->ode_x, FMU_NX * sizeof(double));
    memcpy(extra + 2 + FMU_NX, b->ode_in, FMU_NIN * sizeof(double));
    ode_save(&b->ode, extra + 2 + FMU_NX + FMU_NIN);
}

static void model_load(FmuInstance *c, const double extra[])
{
    FmuModelData *b = c->m;
    b->ode_ready = 0;
    if (!FMU_NX || extra[0] != 1.0 || model_build(c) != FMU_OK)
        return; /* the next step starts the integrator afresh from the restored state */
    ode_options o;
    ode_default_options(&o);
    if (ode_init(&b->ode, FMU_NX, c->t, c->x, &o, b->ode_work) != ODE_OK ||
        ode_load(&b->ode, extra + 2 + FMU_NX + FMU_NIN) != ODE_OK)
        return;
    b->ode_tc = extra[1];
    memcpy(b->ode_x, extra + 2, FMU_NX * sizeof(double));
    memcpy(b->ode_in, extra + 2 + FMU_NX, FMU_NIN * sizeof(double));
    b->ode_ready = 1;
}

/* ---- directional derivatives: one complex-step evaluation per seed ---- */

static int model_directional(FmuInstance *c, const unsigned vUnknown[], size_t nUnknown,
                             const unsigned vKnown[], size_t nKnown, const double dvKnown[],
                             double dvUnknown[])
{
    FmuModelData *b = c->m;
    int level = EVAL_DX;
    for (size_t i = 0; i < nUnknown; i++)
        if (FMU_VAR_CAUS[vUnknown[i]] == C_OUTPUT) {
            int g = group_of(vUnknown[i]);
            if (g >= 0 && level_of(FMU_MOUTPUTS[g][0]) > level)
                level = level_of(FMU_MOUTPUTS[g][0]);
        }
    double seed[FMU_NX + FMU_NIN + 1];
    memset(seed, 0, sizeof seed);
    for (size_t i = 0; i < nKnown; i++) { /* a parameter's seed is 0: it adds nothing */
        int vr = (int)vKnown[i];
        if (FMU_NX && vr >= FMU_X_VR0 && vr < FMU_X_VR0 + FMU_NX)
            seed[vr - FMU_X_VR0] += dvKnown[i];
        for (size_t g = 0; g < NINPUTS; g++)
            if (vr >= FMU_INPUTS[g][2] && vr < FMU_INPUTS[g][2] + FMU_INPUTS[g][3])
                seed[FMU_NX + FMU_INPUTS[g][1] + vr - FMU_INPUTS[g][2]] += dvKnown[i];
    }
    if (!(b->z_level >= level &&
          memcmp(seed, b->zseed, (FMU_NX + FMU_NIN) * sizeof(double)) == 0)) {
        gather_inputs(c, 0.0, b->in);
        b->z_level = 0;
        int bad = -1;
        int st = titop_eval_seeded(&b->model, b->zwork, c->t, c->x, b->in, seed, seed + FMU_NX,
                                   level >= EVAL_FULL, &bad);
        if (st != TITOP_OK)
            return fmu_refuse(c, "directional derivative: evaluation failed at t = %.9g s, "
                                 "block '%s': %s", c->t, body_name(bad), failure(st));
        memcpy(b->zseed, seed, (FMU_NX + FMU_NIN) * sizeof(double));
        b->z_level = level;
    }
    size_t nd = titop_data_size(&b->model);
    const double *zx = b->zwork + 2 * nd;
    const double complex *zdx = (const double complex *)b->zwork + nd + FMU_NX + FMU_NIN;
    for (size_t i = 0; i < nUnknown; i++) {
        unsigned vr = vUnknown[i];
        if (FMU_NX && vr >= (unsigned)FMU_DX_VR0 && vr < (unsigned)(FMU_DX_VR0 + FMU_NX)) {
            dvUnknown[i] = cimag(zdx[vr - FMU_DX_VR0]) / TITOP_CSTEP_H;
            continue;
        }
        int g = group_of(vr);
        double complex sig[18];
        read_signal(c, g, b->zwork, zx, 1, sig);
        dvUnknown[i] = cimag(sig[FMU_MOUTPUTS[g][4] + (int)vr - FMU_MOUTPUTS[g][2]]) /
                       TITOP_CSTEP_H;
    }
    return FMU_OK;
}

static void model_free(FmuInstance *c)
{
    FmuModelData *b = c->m;
    if (b->data)
        c->dealloc(b->data);
    if (b->zwork)
        c->dealloc(b->zwork);
    if (b->ode_work)
        c->dealloc(b->ode_work);
}

const FmuModel FMU_MODEL = {
    .size = sizeof(FmuModelData), .free = model_free, .build = model_build,
    .touch = model_touch, .outputs = model_outputs, .derivatives = model_derivatives,
    .rate = model_rate, .step = model_step,
    .directional = model_directional, .save = model_save, .load = model_load,
};

#include "fmu.c"
