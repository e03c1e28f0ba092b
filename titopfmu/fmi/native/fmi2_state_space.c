/*
 * fmi2_state_space.c -- the FMI 2.0 wrapper of a linear state-space model (CoSimulation and
 * ModelExchange in one FMU), written once for every model.
 *
 * The model is compiled in by a generated state_space_config.h (titopfmu/linear/fmu.py): the
 * sizes SS_NX, SS_NU, SS_NY, the matrices SS_A (nx x nx), SS_B (nx x nu), SS_C (ny x nx),
 * SS_D (ny x nu), row-major, and the operating point: inputs SS_U0, outputs SS_Y0 and the state
 * derivative there SS_F0 (the drift, zero at an equilibrium). With the state δx the deviation
 * from the operating point and the inputs u absolute:
 *
 *     dδx/dt = F0 + A δx + B (u - U0),        y = Y0 + C δx + D (u - U0).
 *
 * Value references: inputs 0..nu-1, outputs nu..nu+ny-1, states, then their derivatives.
 * No physics here: linear algebra of given matrices.
 *
 * Co-simulation is exact for this LTI system over a communication step h, up to rounding: with
 * the inputs held (zero-order hold), or moving on with the derivatives the master gives by
 * fmi2SetRealInputDerivatives (first-order hold, u(t0 + s) = u + s du), the state at t0 + h is
 * the top block row of exp(M h) applied to [δx; u - U0; 1; du], M the augmented generator
 *
 *     [ A  B  F0  0 ]
 *     [ 0  0  0   I ]      (Van Loan's block form: x' = A x + B v + F0 w, v' = du, w' = 0,
 *     [ 0  0  0   0 ]       du' = 0, integrated exactly)
 *     [ 0  0  0   0 ].
 *
 * exp(M h) by scaling and squaring with the [13/13] Padé approximant (Higham, SIAM J. Matrix Anal.
 * Appl. 26(4), 2005, the algorithm of MATLAB's expm and scipy.linalg.expm), computed at the first
 * step of each new step size and kept for the last four step sizes.
 *
 * Refusals (bad value, wrong calling sequence) log a message naming the variable and return
 * fmi2Error; the instance stays usable. fmi2Fatal is only returned for a failed allocation.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "state_space_config.h"

#define NX SS_NX
#define NU SS_NU
#define NY SS_NY
#define NX1 (NX > 0 ? NX : 1)
#define NU1 (NU > 0 ? NU : 1)
#define NY1 (NY > 0 ? NY : 1)
#define VR_Y0 NU
#define VR_X0 (NU + NY)
#define VR_DX0 (NU + NY + NX)
#define NVARS (NU + NY + 2 * NX)
/* the augmented generator: state, input deviation, the constant 1 of the drift, input rates */
#define NA (NX + 2 * NU + 1)
#define NSLOT 4

enum { M_INSTANTIATED, M_INIT, M_STEP, M_EVENT, M_CONT, M_TERMINATED, M_ERROR };
static const char *const MODE_NAME[] = {"instantiated",  "initialization mode", "step mode",
                                        "event mode",    "continuous-time mode", "terminated",
                                        "error"};

#define STATE_MAGIC 0x54495353u /* "TISS" */

typedef struct {
    fmi2CallbackFunctions cb;
    char *name;
    int cs; /* co-simulation (1) or model exchange (0) */
    int mode;
    int logging;
    double t;
    double u[NU1], du[NU1]; /* inputs (absolute) and their derivatives (co-simulation) */
    double x[NX1];          /* the state deviation δx */
    double dx[NX1], y[NY1]; /* derivative and outputs at (t, x, u), valid when !stale */
    int stale;
    /* co-simulation: the top NX rows of exp(M h) for the last NSLOT step sizes (a master's
       fixed step often comes as a few sizes that differ in the last bits: t_{k+1} - t_k) */
    double h_slot[NSLOT]; /* 0: slot empty */
    int next_slot;
    double *phi; /* NSLOT blocks of NX x NA, row-major */
    double *work;  /* expm workspace: 8 NA x NA doubles, then NA pivots */
} Instance;

/* ---- messages ---- */

static void logf_(Instance *c, fmi2Status st, const char *fmt, ...)
{
    char buf[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (c->cb.logger && c->logging)
        c->cb.logger(c->cb.componentEnvironment, c->name, st,
                     st == fmi2OK ? "logAll" : st == fmi2Warning ? "logStatusWarning" : "logStatusError",
                     "%s", buf);
}

/* a double as Python's repr prints it (shortest round trip, ".0" on integers) */
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

static fmi2Status refuse(Instance *c, const char *fmt, ...)
{
    char buf[480];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    logf_(c, fmi2Error, "FMU instance '%s' (%s): %s", c->name, SS_MODEL_NAME, buf);
    return fmi2Error;
}

/* ---- the model ---- */

/* dx = F0 + A x + B (u - U0) and y = Y0 + C x + D (u - U0) at the instance's x and u */
static void evaluate(Instance *c)
{
    if (!c->stale)
        return;
    double du[NU1];
    for (int k = 0; k < NU; k++)
        du[k] = c->u[k] - SS_U0[k];
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
        c->y[i] = s;
    }
    c->stale = 0;
}

/* ---- the matrix exponential (Higham 2005, [13/13] Padé, scaling and squaring) ---- */

/* C = A B, n x n row-major (C distinct from A and B) */
static void matmul(int n, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; i++) {
        double *ci = C + (size_t)i * n;
        for (int j = 0; j < n; j++)
            ci[j] = 0.0;
        for (int k = 0; k < n; k++) {
            double a = A[(size_t)i * n + k];
            if (a == 0.0)
                continue;
            const double *bk = B + (size_t)k * n;
            for (int j = 0; j < n; j++)
                ci[j] += a * bk[j];
        }
    }
}

/* Solve P X = R in place (R n x n, overwritten by X) by LU with partial pivoting of P
   (overwritten). Returns -1 if P is singular. */
static int solve(int n, double *P, double *R, int *piv)
{
    for (int k = 0; k < n; k++) {
        int p = k;
        double best = fabs(P[(size_t)k * n + k]);
        for (int i = k + 1; i < n; i++)
            if (fabs(P[(size_t)i * n + k]) > best) {
                best = fabs(P[(size_t)i * n + k]);
                p = i;
            }
        if (!(best > 0.0))
            return -1;
        piv[k] = p;
        if (p != k)
            for (int j = 0; j < n; j++) {
                double t = P[(size_t)k * n + j];
                P[(size_t)k * n + j] = P[(size_t)p * n + j];
                P[(size_t)p * n + j] = t;
                t = R[(size_t)k * n + j];
                R[(size_t)k * n + j] = R[(size_t)p * n + j];
                R[(size_t)p * n + j] = t;
            }
        double d = P[(size_t)k * n + k];
        for (int i = k + 1; i < n; i++) {
            double l = P[(size_t)i * n + k] / d;
            if (l == 0.0)
                continue;
            P[(size_t)i * n + k] = l;
            for (int j = k + 1; j < n; j++)
                P[(size_t)i * n + j] -= l * P[(size_t)k * n + j];
            for (int j = 0; j < n; j++)
                R[(size_t)i * n + j] -= l * R[(size_t)k * n + j];
        }
    }
    for (int k = n - 1; k >= 0; k--) {
        double d = P[(size_t)k * n + k];
        for (int j = 0; j < n; j++) {
            double s = R[(size_t)k * n + j];
            for (int i = k + 1; i < n; i++)
                s -= P[(size_t)k * n + i] * R[(size_t)i * n + j];
            R[(size_t)k * n + j] = s / d;
        }
    }
    return 0;
}

/* E = exp(M), n x n; M is overwritten; work holds 7 n x n doubles and n ints after them.
   Returns -1 if M is not finite or the Padé denominator is singular. */
static int expm(int n, double *M, double *E, double *work)
{
    static const double b[14] = {64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
                                 1187353796428800.0,  129060195264000.0,   10559470521600.0,
                                 670442572800.0,      33522128640.0,       1323241920.0,
                                 40840800.0,          960960.0,            16380.0,
                                 182.0,               1.0};
    const double theta13 = 5.371920351148152;
    size_t nn = (size_t)n * n;
    double *A2 = work, *A4 = A2 + nn, *A6 = A4 + nn, *U = A6 + nn, *V = U + nn, *T = V + nn,
           *P = T + nn;
    int *piv = (int *)(P + nn);
    double norm = 0.0; /* 1-norm: largest column sum */
    for (int j = 0; j < n; j++) {
        double s = 0.0;
        for (int i = 0; i < n; i++)
            s += fabs(M[(size_t)i * n + j]);
        if (!isfinite(s))
            return -1;
        if (s > norm)
            norm = s;
    }
    int sq = 0;
    if (norm > theta13) {
        sq = (int)ceil(log2(norm / theta13));
        double f = ldexp(1.0, -sq);
        for (size_t k = 0; k < nn; k++)
            M[k] *= f;
    }
    matmul(n, M, M, A2);
    matmul(n, A2, A2, A4);
    matmul(n, A4, A2, A6);
    /* U = M [A6 (b13 A6 + b11 A4 + b9 A2) + b7 A6 + b5 A4 + b3 A2 + b1 I] */
    for (size_t k = 0; k < nn; k++)
        T[k] = b[13] * A6[k] + b[11] * A4[k] + b[9] * A2[k];
    matmul(n, A6, T, P);
    for (size_t k = 0; k < nn; k++)
        P[k] += b[7] * A6[k] + b[5] * A4[k] + b[3] * A2[k];
    for (int i = 0; i < n; i++)
        P[(size_t)i * n + i] += b[1];
    matmul(n, M, P, U);
    /* V = A6 (b12 A6 + b10 A4 + b8 A2) + b6 A6 + b4 A4 + b2 A2 + b0 I */
    for (size_t k = 0; k < nn; k++)
        T[k] = b[12] * A6[k] + b[10] * A4[k] + b[8] * A2[k];
    matmul(n, A6, T, V);
    for (size_t k = 0; k < nn; k++)
        V[k] += b[6] * A6[k] + b[4] * A4[k] + b[2] * A2[k];
    for (int i = 0; i < n; i++)
        V[(size_t)i * n + i] += b[0];
    /* (V - U) E = (V + U) */
    for (size_t k = 0; k < nn; k++) {
        P[k] = V[k] - U[k];
        E[k] = V[k] + U[k];
    }
    if (solve(n, P, E, piv))
        return -1;
    for (int s = 0; s < sq; s++) {
        matmul(n, E, E, T);
        memcpy(E, T, nn * sizeof(double));
    }
    return 0;
}

/* the top NX rows of exp(M h): a slot computed before, or a new one */
static fmi2Status discretize(Instance *c, double h, const double **out)
{
    for (int k = 0; k < NSLOT; k++)
        if (c->h_slot[k] == h) {
            *out = c->phi + (size_t)k * NX * NA;
            return fmi2OK;
        }
    int slot = c->next_slot;
    double *phi = c->phi + (size_t)slot * NX * NA;
    size_t nn = (size_t)NA * NA;
    /* layout of c->work: expm's 7 matrices and pivots, then M h, then exp(M h) */
    double *work = c->work, *Mh = c->work + 7 * nn + NA, *E = Mh + nn;
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
    if (expm(NA, Mh, E, work))
        return refuse(c, "fmi2DoStep: the matrix exponential over %s s is not finite",
                      num(h).s);
    for (int i = 0; i < NX; i++)
        for (int j = 0; j < NA; j++) {
            double v = E[(size_t)i * NA + j];
            if (!isfinite(v))
                return refuse(c, "fmi2DoStep: the matrix exponential over %s s overflows (the "
                                 "model is unstable on that time scale): shorter steps",
                              num(h).s);
            phi[(size_t)i * NA + j] = v;
        }
    c->h_slot[slot] = h;
    c->next_slot = (slot + 1) % NSLOT;
    *out = phi;
    return fmi2OK;
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
    Instance *c = functions->allocateMemory(1, sizeof(Instance));
    if (!c)
        return NULL;
    c->cb = *functions;
    c->logging = 1;
    const char *nm = instanceName && *instanceName ? instanceName : "fmu";
    c->name = functions->allocateMemory(strlen(nm) + 1, 1);
    if (!c->name) {
        functions->freeMemory(c);
        return NULL;
    }
    strcpy(c->name, nm);
    if (!fmuGUID || strcmp(fmuGUID, SS_GUID) != 0) {
        refuse(c, "GUID '%s' does not match this FMU's '%s'", fmuGUID ? fmuGUID : "", SS_GUID);
        functions->freeMemory(c->name);
        functions->freeMemory(c);
        return NULL;
    }
    c->cs = fmuType == fmi2CoSimulation;
    if (c->cs && NX > 0) {
        size_t nn = (size_t)NA * NA;
        c->phi = functions->allocateMemory((size_t)NSLOT * NX * NA, sizeof(double));
        /* 9 matrices and the pivots (ints, one double's room each) */
        c->work = functions->allocateMemory(9 * nn + NA, sizeof(double));
        if (!c->phi || !c->work) {
            if (c->phi)
                functions->freeMemory(c->phi);
            if (c->work)
                functions->freeMemory(c->work);
            functions->freeMemory(c->name);
            functions->freeMemory(c);
            return NULL;
        }
    }
    memcpy(c->u, SS_U_START, sizeof c->u);
    memcpy(c->x, SS_X_START, sizeof c->x);
    c->mode = M_INSTANTIATED;
    c->stale = 1;
    return c;
}

void fmi2FreeInstance(fmi2Component comp)
{
    Instance *c = comp;
    if (!c)
        return;
    fmi2CallbackFreeMemory fr = c->cb.freeMemory;
    if (c->phi)
        fr(c->phi);
    if (c->work)
        fr(c->work);
    fr(c->name);
    fr(c);
}

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
    Instance *c = comp;
    (void)toleranceDefined;
    (void)tolerance;
    (void)stopTimeDefined;
    (void)stopTime;
    if (c->mode != M_INSTANTIATED)
        return refuse(c, "fmi2SetupExperiment called in %s", MODE_NAME[c->mode]);
    if (!isfinite(startTime))
        return refuse(c, "start time %s is not finite", num(startTime).s);
    c->t = startTime;
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component comp)
{
    Instance *c = comp;
    if (c->mode != M_INSTANTIATED)
        return refuse(c, "fmi2EnterInitializationMode called in %s", MODE_NAME[c->mode]);
    c->mode = M_INIT;
    return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component comp)
{
    Instance *c = comp;
    if (c->mode != M_INIT)
        return refuse(c, "fmi2ExitInitializationMode called in %s", MODE_NAME[c->mode]);
    c->mode = c->cs ? M_STEP : M_EVENT;
    return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component comp)
{
    Instance *c = comp;
    c->mode = M_TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component comp)
{
    Instance *c = comp;
    memcpy(c->u, SS_U_START, sizeof c->u);
    memcpy(c->x, SS_X_START, sizeof c->x);
    memset(c->du, 0, sizeof c->du);
    c->t = 0.0;
    c->stale = 1;
    c->mode = M_INSTANTIATED;
    return fmi2OK;
}

/* ---- variables ---- */

fmi2Status fmi2GetReal(fmi2Component comp, const fmi2ValueReference vr[], size_t n,
                       fmi2Real value[])
{
    Instance *c = comp;
    for (size_t i = 0; i < n; i++)
        if (vr[i] >= NVARS)
            return refuse(c, "no variable with value reference %u", (unsigned)vr[i]);
    evaluate(c);
    for (size_t i = 0; i < n; i++) {
        unsigned r = vr[i];
        value[i] = r < VR_Y0    ? c->u[r]
                   : r < VR_X0  ? c->y[r - VR_Y0]
                   : r < VR_DX0 ? c->x[r - VR_X0]
                                : c->dx[r - VR_DX0];
    }
    return fmi2OK;
}

/* Inputs in any mode before fmi2Terminate; the states (initial="exact") before
   fmi2ExitInitializationMode. Every value is checked first: a refused call changes nothing. */
fmi2Status fmi2SetReal(fmi2Component comp, const fmi2ValueReference vr[], size_t n,
                       const fmi2Real value[])
{
    Instance *c = comp;
    if (c->mode == M_TERMINATED || c->mode == M_ERROR)
        return refuse(c, "cannot set '%s' after fmi2Terminate (%s)",
                      n && vr[0] < NVARS ? SS_VAR_NAME[vr[0]] : "?", MODE_NAME[c->mode]);
    for (size_t i = 0; i < n; i++) {
        unsigned r = vr[i];
        if (r >= NVARS)
            return refuse(c, "no variable with value reference %u", r);
        const char *nm = SS_VAR_NAME[r];
        if (r >= VR_Y0 && r < VR_X0)
            return refuse(c, "'%s' is an output and cannot be set", nm);
        if (r >= VR_DX0)
            return refuse(c, "'%s' is a state derivative and cannot be set", nm);
        if (r >= VR_X0 && c->mode != M_INSTANTIATED && c->mode != M_INIT)
            return refuse(c, "state '%s' can only be set before fmi2ExitInitializationMode "
                             "(then through fmi2SetContinuousStates in model exchange)", nm);
        if (!isfinite(value[i]))
            return refuse(c, "%s '%s' = %s is not finite at t = %.9g s",
                          r < VR_Y0 ? "input" : "state", nm, num(value[i]).s, c->t);
    }
    for (size_t i = 0; i < n; i++) {
        unsigned r = vr[i];
        if (r < VR_Y0)
            c->u[r] = value[i];
        else
            c->x[r - VR_X0] = value[i];
    }
    c->stale = 1;
    return fmi2OK;
}

fmi2Status fmi2GetInteger(fmi2Component comp, const fmi2ValueReference vr[], size_t n,
                          fmi2Integer value[])
{
    (void)value;
    if (n)
        return refuse(comp, "no Integer variable (value reference %u)", (unsigned)vr[0]);
    return fmi2OK;
}

fmi2Status fmi2GetBoolean(fmi2Component comp, const fmi2ValueReference vr[], size_t n,
                          fmi2Boolean value[])
{
    (void)value;
    if (n)
        return refuse(comp, "no Boolean variable (value reference %u)", (unsigned)vr[0]);
    return fmi2OK;
}

fmi2Status fmi2GetString(fmi2Component comp, const fmi2ValueReference vr[], size_t n,
                         fmi2String value[])
{
    (void)value;
    if (n)
        return refuse(comp, "no String variable (value reference %u)", (unsigned)vr[0]);
    return fmi2OK;
}

fmi2Status fmi2SetInteger(fmi2Component comp, const fmi2ValueReference vr[], size_t n,
                          const fmi2Integer value[])
{
    (void)value;
    if (n)
        return refuse(comp, "no Integer variable (value reference %u)", (unsigned)vr[0]);
    return fmi2OK;
}

fmi2Status fmi2SetBoolean(fmi2Component comp, const fmi2ValueReference vr[], size_t n,
                          const fmi2Boolean value[])
{
    (void)value;
    if (n)
        return refuse(comp, "no Boolean variable (value reference %u)", (unsigned)vr[0]);
    return fmi2OK;
}

fmi2Status fmi2SetString(fmi2Component comp, const fmi2ValueReference vr[], size_t n,
                         const fmi2String value[])
{
    (void)value;
    if (n)
        return refuse(comp, "no String variable (value reference %u)", (unsigned)vr[0]);
    return fmi2OK;
}

/* ---- FMU state: mode, time, inputs, their derivatives, states; validated before use ---- */

typedef struct {
    unsigned magic, nx, nu, mode;
    char model[64];
    double t;
    double u[NU1], du[NU1], x[NX1];
} Snapshot;

fmi2Status fmi2GetFMUstate(fmi2Component comp, fmi2FMUstate *state)
{
    Instance *c = comp;
    Snapshot *s = *state ? *state : c->cb.allocateMemory(1, sizeof(Snapshot));
    if (!s)
        return fmi2Fatal;
    memset(s, 0, sizeof *s);
    s->magic = STATE_MAGIC;
    s->nx = NX;
    s->nu = NU;
    s->mode = (unsigned)c->mode;
    snprintf(s->model, sizeof s->model, "%s", SS_MODEL_NAME);
    s->t = c->t;
    memcpy(s->u, c->u, sizeof s->u);
    memcpy(s->du, c->du, sizeof s->du);
    memcpy(s->x, c->x, sizeof s->x);
    *state = s;
    return fmi2OK;
}

static fmi2Status restore(Instance *c, const Snapshot *s)
{
    if (s->magic != STATE_MAGIC || strncmp(s->model, SS_MODEL_NAME, sizeof s->model) != 0 ||
        s->nx != NX || s->nu != NU)
        return refuse(c, "not an FMU state of this FMU (%s)", SS_MODEL_NAME);
    int cs_mode = s->mode == M_STEP, me_mode = s->mode == M_EVENT || s->mode == M_CONT;
    if (s->mode > M_TERMINATED || (c->cs ? me_mode : cs_mode))
        return refuse(c, "corrupt FMU state (mode %u, for a %s instance)", s->mode,
                      c->cs ? "co-simulation" : "model-exchange");
    int ok = isfinite(s->t);
    for (int k = 0; k < NU; k++)
        ok &= isfinite(s->u[k]) && isfinite(s->du[k]);
    for (int k = 0; k < NX; k++)
        ok &= isfinite(s->x[k]);
    if (!ok)
        return refuse(c, "corrupt FMU state (a value is not finite)");
    c->t = s->t;
    memcpy(c->u, s->u, sizeof c->u);
    memcpy(c->du, s->du, sizeof c->du);
    memcpy(c->x, s->x, sizeof c->x);
    c->mode = (int)s->mode;
    c->stale = 1;
    return fmi2OK;
}

fmi2Status fmi2SetFMUstate(fmi2Component comp, fmi2FMUstate state)
{
    if (!state)
        return refuse(comp, "fmi2SetFMUstate: no state");
    return restore(comp, state);
}

fmi2Status fmi2FreeFMUstate(fmi2Component comp, fmi2FMUstate *state)
{
    Instance *c = comp;
    if (state && *state) {
        c->cb.freeMemory(*state);
        *state = NULL;
    }
    return fmi2OK;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component comp, fmi2FMUstate state, size_t *size)
{
    (void)comp;
    (void)state;
    *size = sizeof(Snapshot);
    return fmi2OK;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component comp, fmi2FMUstate state, fmi2Byte bytes[],
                                 size_t size)
{
    if (size < sizeof(Snapshot))
        return refuse(comp, "fmi2SerializeFMUstate: %zu bytes, %zu needed", size,
                      sizeof(Snapshot));
    memcpy(bytes, state, sizeof(Snapshot));
    return fmi2OK;
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component comp, const fmi2Byte bytes[], size_t size,
                                   fmi2FMUstate *state)
{
    Instance *c = comp;
    if (size != sizeof(Snapshot))
        return refuse(c, "corrupt FMU state (%zu bytes, %zu expected)", size, sizeof(Snapshot));
    Snapshot probe;
    memcpy(&probe, bytes, sizeof probe);
    if (probe.magic != STATE_MAGIC || strncmp(probe.model, SS_MODEL_NAME, sizeof probe.model))
        return refuse(c, "not an FMU state of this FMU (%s)", SS_MODEL_NAME);
    Snapshot *s = c->cb.allocateMemory(1, sizeof(Snapshot));
    if (!s)
        return fmi2Fatal;
    *s = probe;
    *state = s;
    return fmi2OK;
}

/* ---- directional derivatives: the matrices themselves ---- */

fmi2Status fmi2GetDirectionalDerivative(fmi2Component comp, const fmi2ValueReference vUnknown[],
                                        size_t nUnknown, const fmi2ValueReference vKnown[],
                                        size_t nKnown, const fmi2Real dvKnown[],
                                        fmi2Real dvUnknown[])
{
    Instance *c = comp;
    if (c->mode == M_INSTANTIATED || c->mode == M_TERMINATED)
        return refuse(c, "fmi2GetDirectionalDerivative called in %s", MODE_NAME[c->mode]);
    double dx[NX1], du[NU1];
    memset(dx, 0, sizeof dx);
    memset(du, 0, sizeof du);
    for (size_t i = 0; i < nKnown; i++) {
        unsigned r = vKnown[i];
        if (r < VR_Y0)
            du[r] += dvKnown[i];
        else if (r >= VR_X0 && r < VR_DX0)
            dx[r - VR_X0] += dvKnown[i];
        else
            return refuse(c, "directional derivative: value reference %u is not an input or a "
                             "state",
                          r);
    }
    for (size_t i = 0; i < nUnknown; i++) {
        unsigned r = vUnknown[i];
        const double *rowx, *rowu;
        if (r >= VR_Y0 && r < VR_X0) {
            rowx = SS_C + (size_t)(r - VR_Y0) * NX;
            rowu = SS_D + (size_t)(r - VR_Y0) * NU;
        } else if (r >= VR_DX0 && r < NVARS) {
            rowx = SS_A + (size_t)(r - VR_DX0) * NX;
            rowu = SS_B + (size_t)(r - VR_DX0) * NU;
        } else
            return refuse(c, "directional derivative: value reference %u is not an output or a "
                             "state derivative",
                          r);
        double s = 0.0;
        for (int j = 0; j < NX; j++)
            s += rowx[j] * dx[j];
        for (int k = 0; k < NU; k++)
            s += rowu[k] * du[k];
        dvUnknown[i] = s;
    }
    return fmi2OK;
}

/* ---- co-simulation ---- */

fmi2Status fmi2SetRealInputDerivatives(fmi2Component comp, const fmi2ValueReference vr[],
                                       size_t n, const fmi2Integer order[],
                                       const fmi2Real value[])
{
    Instance *c = comp;
    if (!c->cs || (c->mode != M_INIT && c->mode != M_STEP))
        return refuse(c, "fmi2SetRealInputDerivatives called in %s%s", MODE_NAME[c->mode],
                      c->cs ? "" : " of a model-exchange instance");
    for (size_t i = 0; i < n; i++) {
        if (vr[i] >= VR_Y0)
            return refuse(c, "fmi2SetRealInputDerivatives: value reference %u is not an input",
                          (unsigned)vr[i]);
        if (order[i] != 1)
            return refuse(c, "input derivative of order %d: only order 1", (int)order[i]);
        if (!isfinite(value[i]))
            return refuse(c, "derivative of input '%s' = %s is not finite", SS_VAR_NAME[vr[i]],
                          num(value[i]).s);
    }
    for (size_t i = 0; i < n; i++)
        c->du[vr[i]] = value[i];
    return fmi2OK;
}

/* first derivatives of the outputs: dy/dt = C dx/dt + D du/dt */
fmi2Status fmi2GetRealOutputDerivatives(fmi2Component comp, const fmi2ValueReference vr[],
                                        size_t n, const fmi2Integer order[], fmi2Real value[])
{
    Instance *c = comp;
    if (!c->cs || c->mode == M_INSTANTIATED)
        return refuse(c, "fmi2GetRealOutputDerivatives called in %s%s", MODE_NAME[c->mode],
                      c->cs ? "" : " of a model-exchange instance");
    for (size_t i = 0; i < n; i++) {
        if (!(vr[i] >= VR_Y0 && vr[i] < VR_X0))
            return refuse(c, "fmi2GetRealOutputDerivatives: value reference %u is not an "
                             "output",
                          (unsigned)vr[i]);
        if (order[i] != 1)
            return refuse(c, "output derivative of order %d: only order 1 "
                             "(maxOutputDerivativeOrder)",
                          (int)order[i]);
    }
    evaluate(c);
    for (size_t i = 0; i < n; i++) {
        size_t row = vr[i] - VR_Y0;
        double s = 0.0;
        for (int j = 0; j < NX; j++)
            s += SS_C[row * NX + j] * c->dx[j];
        for (int k = 0; k < NU; k++)
            s += SS_D[row * NU + k] * c->du[k];
        value[i] = s;
    }
    return fmi2OK;
}

fmi2Status fmi2DoStep(fmi2Component comp, fmi2Real currentCommunicationPoint,
                      fmi2Real communicationStepSize, fmi2Boolean noSetFMUStatePriorToCurrentPoint)
{
    Instance *c = comp;
    (void)noSetFMUStatePriorToCurrentPoint;
    if (c->mode != M_STEP)
        return refuse(c, "fmi2DoStep called in %s", MODE_NAME[c->mode]);
    double h = communicationStepSize;
    if (!(h > 0 && isfinite(h)))
        return refuse(c, "fmi2DoStep: communication step size %s must be > 0", num(h).s);
    if (!isfinite(currentCommunicationPoint))
        return refuse(c, "fmi2DoStep: current time %s is not finite",
                      num(currentCommunicationPoint).s);
    if (NX > 0) {
        const double *phi = NULL;
        fmi2Status st = discretize(c, h, &phi);
        if (st != fmi2OK)
            return st;
        double z[NA], x[NX1];
        memcpy(z, c->x, NX * sizeof(double));
        for (int k = 0; k < NU; k++) {
            z[NX + k] = c->u[k] - SS_U0[k];
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
        for (int i = 0; i < NX; i++)
            if (!isfinite(x[i]))
                return refuse(c, "fmi2DoStep from t = %.9g s over %s s: the state became "
                                 "non-finite; the state before the step is kept",
                              currentCommunicationPoint, num(h).s);
        memcpy(c->x, x, NX * sizeof(double));
    }
    /* inputs move on with their derivatives (first-order hold) */
    for (int k = 0; k < NU; k++)
        c->u[k] += h * c->du[k];
    c->t = currentCommunicationPoint + h;
    c->stale = 1;
    return fmi2OK;
}

fmi2Status fmi2CancelStep(fmi2Component comp)
{
    return refuse(comp, "fmi2CancelStep: steps are synchronous");
}

static fmi2Status status_of(fmi2Component comp, int kind)
{
    (void)kind;
    return refuse(comp, "no asynchronous step status");
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

static fmi2Status me_call(Instance *c, const char *what, unsigned modes)
{
    if (c->cs)
        return refuse(c, "%s: a model-exchange function, this instance is a co-simulation one",
                      what);
    if (!(modes & (1u << c->mode)))
        return refuse(c, "%s called in %s", what, MODE_NAME[c->mode]);
    return fmi2OK;
}
#define IN_MODES(a) (1u << (a))

fmi2Status fmi2EnterEventMode(fmi2Component comp)
{
    Instance *c = comp;
    if (me_call(c, "fmi2EnterEventMode", IN_MODES(M_EVENT) | IN_MODES(M_CONT)))
        return fmi2Error;
    c->mode = M_EVENT;
    return fmi2OK;
}

fmi2Status fmi2NewDiscreteStates(fmi2Component comp, fmi2EventInfo *info)
{
    Instance *c = comp;
    if (me_call(c, "fmi2NewDiscreteStates", IN_MODES(M_EVENT)))
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
    Instance *c = comp;
    if (me_call(c, "fmi2EnterContinuousTimeMode", IN_MODES(M_EVENT)))
        return fmi2Error;
    c->mode = M_CONT;
    return fmi2OK;
}

fmi2Status fmi2CompletedIntegratorStep(fmi2Component comp, fmi2Boolean noSetFMUStatePrior,
                                       fmi2Boolean *enterEventMode, fmi2Boolean *terminate)
{
    (void)noSetFMUStatePrior;
    if (me_call(comp, "fmi2CompletedIntegratorStep", IN_MODES(M_CONT)))
        return fmi2Error;
    *enterEventMode = fmi2False;
    *terminate = fmi2False;
    return fmi2OK;
}

fmi2Status fmi2SetTime(fmi2Component comp, fmi2Real time)
{
    Instance *c = comp;
    if (me_call(c, "fmi2SetTime", IN_MODES(M_EVENT) | IN_MODES(M_CONT)))
        return fmi2Error;
    if (!isfinite(time))
        return refuse(c, "fmi2SetTime: time %s is not finite", num(time).s);
    c->t = time; /* time-invariant: nothing depends on it */
    return fmi2OK;
}

fmi2Status fmi2SetContinuousStates(fmi2Component comp, const fmi2Real x[], size_t nx)
{
    Instance *c = comp;
    if (me_call(c, "fmi2SetContinuousStates", IN_MODES(M_CONT)))
        return fmi2Error;
    if (nx != (size_t)NX)
        return refuse(c, "fmi2SetContinuousStates: %zu states, the FMU has %d", nx, NX);
    for (size_t k = 0; k < nx; k++)
        if (!isfinite(x[k]))
            return refuse(c, "fmi2SetContinuousStates: state '%s' = %s is not finite",
                          SS_VAR_NAME[VR_X0 + k], num(x[k]).s);
    memcpy(c->x, x, nx * sizeof(double));
    c->stale = 1;
    return fmi2OK;
}

fmi2Status fmi2GetDerivatives(fmi2Component comp, fmi2Real derivatives[], size_t nx)
{
    Instance *c = comp;
    if (me_call(c, "fmi2GetDerivatives", IN_MODES(M_INIT) | IN_MODES(M_EVENT) |
                                             IN_MODES(M_CONT) | IN_MODES(M_TERMINATED)))
        return fmi2Error;
    if (nx != (size_t)NX)
        return refuse(c, "fmi2GetDerivatives: %zu states, the FMU has %d", nx, NX);
    evaluate(c);
    memcpy(derivatives, c->dx, nx * sizeof(double));
    return fmi2OK;
}

fmi2Status fmi2GetEventIndicators(fmi2Component comp, fmi2Real indicators[], size_t ni)
{
    (void)indicators;
    if (ni)
        return refuse(comp, "the FMU has no event indicator");
    return fmi2OK;
}

fmi2Status fmi2GetContinuousStates(fmi2Component comp, fmi2Real x[], size_t nx)
{
    Instance *c = comp;
    if (me_call(c, "fmi2GetContinuousStates", IN_MODES(M_INIT) | IN_MODES(M_EVENT) |
                                                  IN_MODES(M_CONT) | IN_MODES(M_TERMINATED)))
        return fmi2Error;
    if (nx != (size_t)NX)
        return refuse(c, "fmi2GetContinuousStates: %zu states, the FMU has %d", nx, NX);
    memcpy(x, c->x, nx * sizeof(double));
    return fmi2OK;
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component comp, fmi2Real nominals[], size_t nx)
{
    Instance *c = comp;
    if (nx != (size_t)NX)
        return refuse(c, "fmi2GetNominalsOfContinuousStates: %zu states, the FMU has %d", nx, NX);
    for (size_t k = 0; k < nx; k++)
        nominals[k] = SS_X_NOMINAL[k];
    return fmi2OK;
}
