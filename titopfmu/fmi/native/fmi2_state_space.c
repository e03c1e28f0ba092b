/*
 * fmi2_state_space.c -- the linear state-space model behind the FMU layer (fmu.h): a
 * titopfmu linear model's FMU is this file, the FMI functions of every titopfmu FMU
 * (fmi2_block.c), the model-independent layer (fmu.c) and the matrix exponential (expm.c).
 *
 * The model is compiled in by a generated state_space_config.h (titopfmu/linear/fmu.py): the
 * sizes SS_NU, SS_NY (the states are fmu_config.h's FMU_NX), the matrices SS_A (nx x nx), SS_B
 * (nx x nu), SS_C (ny x nx), SS_D (ny x nu), row-major, and the operating point: inputs SS_U0,
 * outputs SS_Y0 and the state derivative there SS_F0 (the drift, zero at an equilibrium). With
 * the state δx the deviation from the operating point and the inputs u absolute:
 *
 *     dδx/dt = F0 + A δx + B (u - U0),        y = Y0 + C δx + D (u - U0).
 *
 * Slots (value references): inputs 0..nu-1, outputs nu..nu+ny-1, states, then their
 * derivatives. No physics here: linear algebra of given matrices.
 *
 * Co-simulation is exact for this LTI system over a communication step h, up to rounding: with
 * the inputs held (zero-order hold), or moving on with the derivatives the master gives by
 * fmi2SetRealInputDerivatives (first-order hold, u(t0 + s) = u + s du), the state at t0 + h is
 * the top block row of exp(M h) applied to [δx; u - U0; 1; du], M the augmented generator
 *
 *     [ A  B  F0  0 ]
 *     [ 0  0  0   I ]      (Van Loan's block form: x' = A x + B v + F0 w, v' = du, w' = 0,
 *     [ 0  0  0   0 ]       du' = 0, integrated exactly)
 *     [ 0  0  0   0 ],
 *
 * computed at the first step of each new step size and kept for the last four step sizes.
 * Directional derivatives are the matrices; output derivatives dy/dt = C dx/dt + D du/dt.
 */
#include <math.h>
#include <string.h>

#include "expm.h"
#include "fmu.h"
#include "state_space_config.h"

#define NX FMU_NX
#define NU SS_NU
#define NY SS_NY
#define NU1 (NU > 0 ? NU : 1)
#define VR_Y0 NU
/* the augmented generator: state, input deviation, the constant 1 of the drift, input rates */
#define NA (NX + 2 * NU + 1)
#define NSLOT 4

typedef char state_space_slots_match[FMU_NVARS == NU + NY + 2 * NX && FMU_X_VR0 == NU + NY &&
                                             FMU_DX_VR0 == NU + NY + NX ? 1 : -1];

struct FmuModelData {
    int stale; /* dx and the outputs not computed at the current state and inputs */
    /* co-simulation: the top NX rows of exp(M h) for the last NSLOT step sizes (a master's
       fixed step often comes as a few sizes that differ in the last bits: t_{k+1} - t_k) */
    double h_slot[NSLOT]; /* 0: slot empty */
    int next_slot;
    double *phi;  /* NSLOT blocks of NX x NA, row-major */
    double *work; /* expm's workspace, then M h and exp(M h) */
};

/* co-simulation with states: the step's buffers */
static int ss_init(FmuInstance *c)
{
    if (!c->cs || NX == 0)
        return FMU_OK;
    size_t nn = (size_t)NA * NA;
    c->m->phi = c->alloc((size_t)NSLOT * NX * NA, sizeof(double));
    c->m->work = c->alloc(EXPM_WORK(NA) + 2 * nn, sizeof(double));
    return c->m->phi && c->m->work ? FMU_OK : FMU_FATAL;
}

static void ss_free(FmuInstance *c)
{
    if (c->m->phi)
        c->dealloc(c->m->phi);
    if (c->m->work)
        c->dealloc(c->m->work);
}

static void ss_touch(FmuInstance *c, int parameters)
{
    (void)parameters;
    c->m->stale = 1;
}

/* dx = F0 + A x + B (u - U0) and y = Y0 + C x + D (u - U0) at the instance's x and u */
static int evaluate(FmuInstance *c)
{
    if (!c->m->stale)
        return FMU_OK;
    double du[NU1];
    for (int k = 0; k < NU; k++)
        du[k] = c->v[k] - SS_U0[k];
    for (int i = 0; i < NX; i++) {
        double s = SS_F0[i];
        for (int j = 0; j < NX; j++)
            s += SS_A[i * NX + j] * c->x[j];
        for (int k = 0; k < NU; k++)
            s += SS_B[i * NU + k] * du[k];
        c->dx[i] = s;
    }
    for (int i = 0; i < NY; i++) {
        double s = SS_Y0[i];
        for (int j = 0; j < NX; j++)
            s += SS_C[i * NX + j] * c->x[j];
        for (int k = 0; k < NU; k++)
            s += SS_D[i * NU + k] * du[k];
        c->v[VR_Y0 + i] = s;
    }
    c->m->stale = 0;
    return FMU_OK;
}

static int ss_outputs(FmuInstance *c, const unsigned slot[], size_t n)
{
    (void)slot;
    (void)n;
    return evaluate(c);
}

/* the top NX rows of exp(M h): a slot computed before, or a new one */
static int discretize(FmuInstance *c, double h, const double **out)
{
    FmuModelData *m = c->m;
    for (int k = 0; k < NSLOT; k++)
        if (m->h_slot[k] == h) {
            *out = m->phi + (size_t)k * NX * NA;
            return FMU_OK;
        }
    int slot = m->next_slot;
    double *phi = m->phi + (size_t)slot * NX * NA;
    size_t nn = (size_t)NA * NA;
    double *Mh = m->work + EXPM_WORK(NA), *E = Mh + nn;
    memset(Mh, 0, nn * sizeof(double));
    for (int i = 0; i < NX; i++) {
        for (int j = 0; j < NX; j++)
            Mh[(size_t)i * NA + j] = SS_A[i * NX + j] * h;
        for (int k = 0; k < NU; k++)
            Mh[(size_t)i * NA + NX + k] = SS_B[i * NU + k] * h;
        Mh[(size_t)i * NA + NX + NU] = SS_F0[i] * h;
    }
    for (int k = 0; k < NU; k++)
        Mh[(size_t)(NX + k) * NA + NX + NU + 1 + k] = h;
    if (expm(NA, Mh, E, m->work))
        return fmu_refuse(c, "%sDoStep: the matrix exponential over %s s is not finite", c->api,
                          fmu_num(h).s);
    for (int i = 0; i < NX; i++)
        for (int j = 0; j < NA; j++) {
            double v = E[(size_t)i * NA + j];
            if (!isfinite(v))
                return fmu_refuse(c, "%sDoStep: the matrix exponential over %s s overflows (the "
                                     "model is unstable on that time scale): shorter steps",
                                  c->api, fmu_num(h).s);
            phi[(size_t)i * NA + j] = v;
        }
    m->h_slot[slot] = h;
    m->next_slot = (slot + 1) % NSLOT;
    *out = phi;
    return FMU_OK;
}

/* the exact step: x(t0 + h) = [exp(M h)]_top [δx; u - U0; 1; du] */
static int ss_step(FmuInstance *c, double t0, double h, double x[])
{
    (void)t0;
    const double *phi = NULL;
    int st = discretize(c, h, &phi);
    if (st != FMU_OK)
        return st;
    double z[NA];
    memcpy(z, c->x, NX * sizeof(double));
    for (int k = 0; k < NU; k++) {
        z[NX + k] = c->v[k] - SS_U0[k];
        z[NX + NU + 1 + k] = c->du[k];
    }
    z[NX + NU] = 1.0;
    for (int i = 0; i < NX; i++) {
        const double *row = phi + (size_t)i * NA;
        double s = 0.0;
        for (int j = 0; j < NA; j++)
            s += row[j] * z[j];
        x[i] = s;
    }
    return FMU_OK;
}

/* the matrices themselves: rows of [C D] for outputs, of [A B] for state derivatives */
static int ss_directional(FmuInstance *c, const unsigned vUnknown[], size_t nUnknown,
                          const unsigned vKnown[], size_t nKnown, const double dvKnown[],
                          double dvUnknown[])
{
    (void)c;
    double dx[FMU_NX1], du[NU1];
    memset(dx, 0, sizeof dx);
    memset(du, 0, sizeof du);
    for (size_t i = 0; i < nKnown; i++) {
        unsigned r = vKnown[i];
        if (r < VR_Y0)
            du[r] += dvKnown[i];
        else if (r >= (unsigned)FMU_X_VR0 && r < (unsigned)FMU_DX_VR0)
            dx[r - FMU_X_VR0] += dvKnown[i];
    }
    for (size_t i = 0; i < nUnknown; i++) {
        unsigned r = vUnknown[i];
        int out = r < (unsigned)FMU_X_VR0;
        size_t row = out ? r - VR_Y0 : r - FMU_DX_VR0;
        const double *rowx = (out ? SS_C : SS_A) + row * NX;
        const double *rowu = (out ? SS_D : SS_B) + row * NU;
        double s = 0.0;
        for (int j = 0; j < NX; j++)
            s += rowx[j] * dx[j];
        for (int k = 0; k < NU; k++)
            s += rowu[k] * du[k];
        dvUnknown[i] = s;
    }
    return FMU_OK;
}

/* first derivatives of the outputs: dy/dt = C dx/dt + D du/dt */
static int ss_output_derivatives(FmuInstance *c, const unsigned slot[], size_t n,
                                 double value[])
{
    evaluate(c);
    for (size_t i = 0; i < n; i++) {
        size_t row = slot[i] - VR_Y0;
        double s = 0.0;
        for (int j = 0; j < NX; j++)
            s += SS_C[row * NX + j] * c->dx[j];
        for (int k = 0; k < NU; k++)
            s += SS_D[row * NU + k] * c->du[k];
        value[i] = s;
    }
    return FMU_OK;
}

/* by concern: life cycle; values; stepping; derivatives */
const FmuModel FMU_MODEL = {
    .size = sizeof(FmuModelData), .init = ss_init, .free = ss_free, .touch = ss_touch,
    .outputs = ss_outputs, .derivatives = evaluate,
    .step = ss_step,
    .directional = ss_directional, .output_derivatives = ss_output_derivatives,
};
