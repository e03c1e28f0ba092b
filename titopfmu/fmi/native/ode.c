/*
 * ode.c -- explicit embedded Runge-Kutta integration with error control and dense output
 * (see ode.h): Dormand-Prince 8(5,3) (DOP853) and Dormand-Prince 5(4) (RK45), with the step-size
 * control, starting step and dense outputs of scipy.integrate.solve_ivp.
 *
 * References
 *   [HNW] E. Hairer, S. P. Norsett, G. Wanner, Solving Ordinary Differential Equations I:
 *         Nonstiff Problems, 2nd ed., Springer 1993: Sec. II.4 (step-size control, starting
 *         step), II.5 (the Dormand-Prince pairs), II.6 (dense output), II.10 (DOP853 code).
 *   [DOP] E. Hairer, G. Wanner, dop853.f / dop853.c, http://www.unige.ch/~hairer/software.html:
 *         the DOP853 coefficients (copied digit for digit below; scipy's
 *         scipy/integrate/_ivp/dop853_coefficients.py holds the same ones), the error estimate
 *         combining the 5th- and 3rd-order embedded solutions, the 7th-order dense output.
 *   [DP]  J. R. Dormand, P. J. Prince, A family of embedded Runge-Kutta formulae,
 *         J. Comput. Appl. Math. 6 (1980) 19-26 (RK45); P. J. Prince, J. R. Dormand, High order
 *         embedded Runge-Kutta formulae, J. Comput. Appl. Math. 7 (1981) 67-75 (order 8).
 *   [SH]  L. F. Shampine, Some practical Runge-Kutta formulas, Math. Comp. 46 (1986) 135-150
 *         (the RK45 dense output, scipy's RK45.P).
 *   scipy/integrate/_ivp/rk.py and common.py (select_initial_step, norm): the controller below
 *   is theirs, operation for operation where it matters (so that the steps are scipy's).
 *
 * Why dense output rather than stopping on communication points: a step shortened to land on
 * every communication point would make the step sequence (and the results, to within the
 * tolerance) depend on the host's communication step, and would cost a full step per point when
 * the points are denser than the natural steps (1 ms points, 50 ms steps: 50 times the work).
 * Here steps are the integrator's own; a communication point inside the last step is served by
 * the step's continuous extension (order 7 for DOP853, 4 for RK45, i.e. within the tolerance);
 * the results at any time are then bit-identical whatever the communication grid. Only
 * t_bound (the stop time) shortens a step, as solve_ivp's t_bound does.
 *
 * Numerics: the error is estimated directly from the stages with the weights of the differences
 * of the embedded formulas (E = b - bhat, never by subtracting two solutions); the scale uses
 * max(|x|, |x_new|) (no subtraction); the root-mean-square norms are accumulated with scaling
 * (as LAPACK's dnrm2) so that they neither overflow nor underflow; stage sums are formed first
 * and multiplied by h once (as scipy does).
 */
#include "ode.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>

/* scipy.integrate._ivp.rk: SAFETY, MIN_FACTOR, MAX_FACTOR */
#define SAFETY 0.9
#define MIN_FACTOR 0.2
#define MAX_FACTOR 10.0

#define DOP_STAGES 12 /* stages of a step; stage 12 is f(t + h, x_new) (first same as last) */
#define DOP_EXT 16    /* with the 3 extra stages of the dense output */
#define DOP_DENSE 7   /* coefficient vectors of the dense output */
#define RK45_STAGES 6
#define RK45_DENSE 4

/* work layout (doubles): x, f, x_old, dense[7], atolv (the saved part: 11 n), then k[16],
   y_stage, y_new (scratch: 18 n) */
#define SAVED_VECS 11
#define WORK_VECS 29
#define HDR 24 /* scalars of a saved state */
#define SAVE_MAGIC 5383853.0
#define SAVE_VERSION 1.0

/* ---- Dormand-Prince 8(5,3): the coefficients of [DOP] (dop853.f: c2..c16, a21..a1615,
   b1..b12, bhh1..bhh3, er1..er12, d41..d716), indexed as scipy's dop853_coefficients.py ---- */
static const double DOP_C[16] = {
    0.0,
    0.526001519587677318785587544488e-01,
    0.789002279381515978178381316732e-01,
    0.118350341907227396726757197510,
    0.281649658092772603273242802490,
    0.333333333333333333333333333333,
    0.25,
    0.307692307692307692307692307692,
    0.651282051282051282051282051282,
    0.6,
    0.857142857142857142857142857142,
    1.0,
    1.0,
    0.1,
    0.2,
    0.777777777777777777777777777778};
/* A[i][j], i = 1..15 (rows 13..15: the extra stages of the dense output); B = row 12 */
static const double DOP_A[16][16] = {
    [0] = {0},
    [1] = {[0] = 5.26001519587677318785587544488e-2},
    [2] = {[0] = 1.97250569845378994544595329183e-2, [1] = 5.91751709536136983633785987549e-2},
    [3] = {[0] = 2.95875854768068491816892993775e-2, [2] = 8.87627564304205475450678981324e-2},
    [4] = {
        [0] = 2.41365134159266685502369798665e-1, [2] = -8.84549479328286085344864962717e-1,
        [3] = 9.24834003261792003115737966543e-1
    },
    [5] = {
        [0] = 3.7037037037037037037037037037e-2, [3] = 1.70828608729473871279604482173e-1,
        [4] = 1.25467687566822425016691814123e-1
    },
    [6] = {
        [0] = 3.7109375e-2, [3] = 1.70252211019544039314978060272e-1,
        [4] = 6.02165389804559606850219397283e-2, [5] = -1.7578125e-2
    },
    [7] = {
        [0] = 3.70920001185047927108779319836e-2, [3] = 1.70383925712239993810214054705e-1,
        [4] = 1.07262030446373284651809199168e-1, [5] = -1.53194377486244017527936158236e-2,
        [6] = 8.27378916381402288758473766002e-3
    },
    [8] = {
        [0] = 6.24110958716075717114429577812e-1, [3] = -3.36089262944694129406857109825,
        [4] = -8.68219346841726006818189891453e-1, [5] = 2.75920996994467083049415600797e1,
        [6] = 2.01540675504778934086186788979e1, [7] = -4.34898841810699588477366255144e1
    },
    [9] = {
        [0] = 4.77662536438264365890433908527e-1, [3] = -2.48811461997166764192642586468,
        [4] = -5.90290826836842996371446475743e-1, [5] = 2.12300514481811942347288949897e1,
        [6] = 1.52792336328824235832596922938e1, [7] = -3.32882109689848629194453265587e1,
        [8] = -2.03312017085086261358222928593e-2
    },
    [10] = {
        [0] = -9.3714243008598732571704021658e-1, [3] = 5.18637242884406370830023853209,
        [4] = 1.09143734899672957818500254654, [5] = -8.14978701074692612513997267357,
        [6] = -1.85200656599969598641566180701e1, [7] = 2.27394870993505042818970056734e1,
        [8] = 2.49360555267965238987089396762, [9] = -3.0467644718982195003823669022
    },
    [11] = {
        [0] = 2.27331014751653820792359768449, [3] = -1.05344954667372501984066689879e1,
        [4] = -2.00087205822486249909675718444, [5] = -1.79589318631187989172765950534e1,
        [6] = 2.79488845294199600508499808837e1, [7] = -2.85899827713502369474065508674,
        [8] = -8.87285693353062954433549289258, [9] = 1.23605671757943030647266201528e1,
        [10] = 6.43392746015763530355970484046e-1
    },
    [12] = {
        [0] = 5.42937341165687622380535766363e-2, [5] = 4.45031289275240888144113950566,
        [6] = 1.89151789931450038304281599044, [7] = -5.8012039600105847814672114227,
        [8] = 3.1116436695781989440891606237e-1, [9] = -1.52160949662516078556178806805e-1,
        [10] = 2.01365400804030348374776537501e-1, [11] = 4.47106157277725905176885569043e-2
    },
    [13] = {
        [0] = 5.61675022830479523392909219681e-2, [6] = 2.53500210216624811088794765333e-1,
        [7] = -2.46239037470802489917441475441e-1, [8] = -1.24191423263816360469010140626e-1,
        [9] = 1.5329179827876569731206322685e-1, [10] = 8.20105229563468988491666602057e-3,
        [11] = 7.56789766054569976138603589584e-3, [12] = -8.298e-3
    },
    [14] = {
        [0] = 3.18346481635021405060768473261e-2, [5] = 2.83009096723667755288322961402e-2,
        [6] = 5.35419883074385676223797384372e-2, [7] = -5.49237485713909884646569340306e-2,
        [10] = -1.08347328697249322858509316994e-4, [11] = 3.82571090835658412954920192323e-4,
        [12] = -3.40465008687404560802977114492e-4, [13] = 1.41312443674632500278074618366e-1
    },
    [15] = {
        [0] = -4.28896301583791923408573538692e-1, [5] = -4.69762141536116384314449447206,
        [6] = 7.68342119606259904184240953878, [7] = 4.06898981839711007970213554331,
        [8] = 3.56727187455281109270669543021e-1, [12] = -1.39902416515901462129418009734e-3,
        [13] = 2.9475147891527723389556272149, [14] = -9.15095847217987001081870187138
    },
};
static const double DOP_E5[13] = {
    [0] = 0.1312004499419488073250102996e-1, [5] = -0.1225156446376204440720569753e+1,
    [6] = -0.4957589496572501915214079952, [7] = 0.1664377182454986536961530415e+1,
    [8] = -0.3503288487499736816886487290, [9] = 0.3341791187130174790297318841,
    [10] = 0.8192320648511571246570742613e-1, [11] = -0.2235530786388629525884427845e-1
};
/* E3 = B - bhh (bhh: the 3rd-order weights of dop853.f, nonzero at stages 0, 8, 11) */
static const double DOP_E3[13] = {
    [0] = 5.42937341165687622380535766363e-2 - 0.244094488188976377952755905512,
    [5] = 4.45031289275240888144113950566, [6] = 1.89151789931450038304281599044,
    [7] = -5.8012039600105847814672114227,
    [8] = 3.1116436695781989440891606237e-1 - 0.733846688281611857341361741547,
    [9] = -1.52160949662516078556178806805e-1, [10] = 2.01365400804030348374776537501e-1,
    [11] = 4.47106157277725905176885569043e-2 - 0.220588235294117647058823529412e-1
};
static const double DOP_D[4][16] = {
    {
        [0] = -0.84289382761090128651353491142e+1, [5] = 0.56671495351937776962531783590,
        [6] = -0.30689499459498916912797304727e+1, [7] = 0.23846676565120698287728149680e+1,
        [8] = 0.21170345824450282767155149946e+1, [9] = -0.87139158377797299206789907490,
        [10] = 0.22404374302607882758541771650e+1, [11] = 0.63157877876946881815570249290,
        [12] = -0.88990336451333310820698117400e-1, [13] = 0.18148505520854727256656404962e+2,
        [14] = -0.91946323924783554000451984436e+1, [15] = -0.44360363875948939664310572000e+1
    },
    {
        [0] = 0.10427508642579134603413151009e+2, [5] = 0.24228349177525818288430175319e+3,
        [6] = 0.16520045171727028198505394887e+3, [7] = -0.37454675472269020279518312152e+3,
        [8] = -0.22113666853125306036270938578e+2, [9] = 0.77334326684722638389603898808e+1,
        [10] = -0.30674084731089398182061213626e+2, [11] = -0.93321305264302278729567221706e+1,
        [12] = 0.15697238121770843886131091075e+2, [13] = -0.31139403219565177677282850411e+2,
        [14] = -0.93529243588444783865713862664e+1, [15] = 0.35816841486394083752465898540e+2
    },
    {
        [0] = 0.19985053242002433820987653617e+2, [5] = -0.38703730874935176555105901742e+3,
        [6] = -0.18917813819516756882830838328e+3, [7] = 0.52780815920542364900561016686e+3,
        [8] = -0.11573902539959630126141871134e+2, [9] = 0.68812326946963000169666922661e+1,
        [10] = -0.10006050966910838403183860980e+1, [11] = 0.77771377980534432092869265740,
        [12] = -0.27782057523535084065932004339e+1, [13] = -0.60196695231264120758267380846e+2,
        [14] = 0.84320405506677161018159903784e+2, [15] = 0.11992291136182789328035130030e+2
    },
    {
        [0] = -0.25693933462703749003312586129e+2, [5] = -0.15418974869023643374053993627e+3,
        [6] = -0.23152937917604549567536039109e+3, [7] = 0.35763911791061412378285349910e+3,
        [8] = 0.93405324183624310003907691704e+2, [9] = -0.37458323136451633156875139351e+2,
        [10] = 0.10409964950896230045147246184e+3, [11] = 0.29840293426660503123344363579e+2,
        [12] = -0.43533456590011143754432175058e+2, [13] = 0.96324553959188282948394950600e+2,
        [14] = -0.39177261675615439165231486172e+2, [15] = -0.14972683625798562581422125276e+3
    },
};

/* ---- Dormand-Prince 5(4) [DP], [HNW] Table II.5.2, with Shampine's dense output [SH]: the
   tableau of scipy's RK45 (rational coefficients, rounded once by the compiler) ---- */
static const double RK_C[RK45_STAGES] = {0.0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1.0};
static const double RK_A[RK45_STAGES][RK45_STAGES] = {
    {0},
    {1.0 / 5},
    {3.0 / 40, 9.0 / 40},
    {44.0 / 45, -56.0 / 15, 32.0 / 9},
    {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729},
    {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656},
};
static const double RK_B[RK45_STAGES] = {35.0 / 384, 0.0, 500.0 / 1113, 125.0 / 192,
                                         -2187.0 / 6784, 11.0 / 84};
/* b - bhat over the 6 stages and f(t + h, x_new) */
static const double RK_E[RK45_STAGES + 1] = {-71.0 / 57600, 0.0, 71.0 / 16695, -71.0 / 1920,
                                             17253.0 / 339200, -22.0 / 525, 1.0 / 40};
static const double RK_P[RK45_STAGES + 1][RK45_DENSE] = {
    {1.0, -8048581381.0 / 2820520608, 8663915743.0 / 2820520608,
     -12715105075.0 / 11282082432},
    {0.0, 0.0, 0.0, 0.0},
    {0.0, 131558114200.0 / 32700410799, -68118460800.0 / 10900136933,
     87487479700.0 / 32700410799},
    {0.0, -1754552775.0 / 470086768, 14199869525.0 / 1410260304,
     -10690763975.0 / 1880347072},
    {0.0, 127303824393.0 / 49829197408, -318862633887.0 / 49829197408,
     701980252875.0 / 199316789632},
    {0.0, -282668133.0 / 205662961, 2019193451.0 / 616988883, -1453857185.0 / 822651844},
    {0.0, 40617522.0 / 29380423, -110615467.0 / 29380423, 69997945.0 / 29380423},
};

/* ---- helpers ---- */

static int all_finite(const double *v, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (!isfinite(v[i])) return 0;
    return 1;
}

/* Euclidean norm with scaling (LAPACK dnrm2's one-pass update): no overflow or underflow of
   the squares; NaN and infinities propagate as non-finite results. */
typedef struct {
    double scale, ssq;
} nrm_acc;

static void nrm_add(nrm_acc *a, double v)
{
    if (v != 0.0) {
        double av = fabs(v);
        if (a->scale < av) {
            double r = a->scale / av;
            a->ssq = 1.0 + a->ssq * r * r;
            a->scale = av;
        } else {
            double r = av / a->scale;
            a->ssq += r * r;
        }
    }
}

static double nrm_value(const nrm_acc *a) { return a->scale * sqrt(a->ssq); }

static double scale_of(const ode_state *s, size_t i, double y)
{
    return (s->atol_is_vec ? s->atolv[i] : s->atol) + y * s->rtol;
}

static int order_err(int method) { return method == ODE_DOP853 ? 7 : 4; }
static int n_stages(int method) { return method == ODE_DOP853 ? DOP_STAGES : RK45_STAGES; }

static double a_coef(int method, int i, int j)
{
    return method == ODE_DOP853 ? DOP_A[i][j] : RK_A[i][j];
}

static double c_coef(int method, int i) { return method == ODE_DOP853 ? DOP_C[i] : RK_C[i]; }

/* b: row 12 of the DOP853 table */
static double b_coef(int method, int j) { return method == ODE_DOP853 ? DOP_A[12][j] : RK_B[j]; }

/* out = x + h * sum_{j < m} w(j) k_j, the sum formed first (scipy's np.dot(K.T, a) * h) */
static void combine(const ode_state *s, int method, int row, int m, double h, double *out,
                    int use_b)
{
    const size_t n = (size_t)s->n;
    for (size_t i = 0; i < n; ++i) out[i] = 0.0;
    for (int j = 0; j < m; ++j) {
        const double w = use_b ? b_coef(method, j) : a_coef(method, row, j);
        if (w == 0.0) continue;
        const double *kj = s->k + (size_t)j * n;
        for (size_t i = 0; i < n; ++i) out[i] += w * kj[i];
    }
    for (size_t i = 0; i < n; ++i) out[i] = s->x[i] + out[i] * h;
}

static int call_rhs(ode_state *s, ode_rhs f, void *ctx, double t, const double *x, double *dx)
{
    ++s->n_rhs;
    const int rc = f(ctx, t, x, dx);
    if (rc != 0) {
        s->rhs_status = rc;
        return ODE_ERHS;
    }
    return ODE_OK;
}

static int valid_options(const ode_options *o, int n, double t0)
{
    if (o->method != ODE_DOP853 && o->method != ODE_RK45) return 0;
    if (!(o->rtol >= 0.0 && isfinite(o->rtol))) return 0;
    if (o->atol_vec != NULL) {
        for (int i = 0; i < n; ++i)
            if (!(o->atol_vec[i] > 0.0 && isfinite(o->atol_vec[i]))) return 0;
    } else if (!(o->atol > 0.0 && isfinite(o->atol))) {
        return 0;
    }
    if (!(o->h_max > 0.0)) return 0; /* +inf allowed, NaN not */
    if (!(o->h_init >= 0.0 && isfinite(o->h_init))) return 0;
    if (!(o->t_bound >= t0)) return 0; /* +inf allowed */
    if (o->max_steps <= 0) return 0;
    return 1;
}

/* ---- public functions ---- */

void ode_default_options(ode_options *o)
{
    if (o == NULL) return;
    o->method = ODE_DOP853;
    o->rtol = 1e-3;
    o->atol = 1e-6;
    o->atol_vec = NULL;
    o->h_max = INFINITY;
    o->h_init = 0.0;
    o->t_bound = INFINITY;
    o->max_steps = 100000;
}

size_t ode_work_size(int n) { return n > 0 ? (size_t)WORK_VECS * (size_t)n : 0; }

size_t ode_save_size(int n) { return n > 0 ? HDR + (size_t)SAVED_VECS * (size_t)n : 0; }
typedef char ode_save_size_macro_matches[ODE_SAVE_SIZE(3) == HDR + SAVED_VECS * 3 ? 1 : -1];

static void set_pointers(ode_state *s, double *work)
{
    const size_t n = (size_t)s->n;
    s->x = work;
    s->f = work + n;
    s->x_old = work + 2 * n;
    s->dense = work + 3 * n;
    s->atolv = work + 10 * n;
    s->k = work + 11 * n;
    s->y_stage = work + 27 * n;
    s->y_new = work + 28 * n;
}

int ode_init(ode_state *s, int n, double t0, const double *x0, const ode_options *o,
             double *work)
{
    if (s == NULL || x0 == NULL || o == NULL || work == NULL || n <= 0) return ODE_EARG;
    if (n > (int)(INT_MAX / WORK_VECS)) return ODE_EARG;
    if (!isfinite(t0) || !valid_options(o, n, t0)) return ODE_EARG;
    memset(s, 0, sizeof *s);
    s->n = n;
    s->method = o->method;
    /* scipy's validate_tol: rtol below 100 eps is raised to it */
    s->rtol = o->rtol < 100.0 * DBL_EPSILON ? 100.0 * DBL_EPSILON : o->rtol;
    s->atol = o->atol_vec != NULL ? 0.0 : o->atol;
    s->atol_is_vec = o->atol_vec != NULL;
    s->h_max = o->h_max;
    s->h_init = o->h_init;
    s->t_bound = o->t_bound;
    s->max_steps = o->max_steps > 2147483647L ? 2147483647L : o->max_steps; /* any long */
    memset(work, 0, ode_work_size(n) * sizeof *work);
    set_pointers(s, work);
    if (s->atol_is_vec) memcpy(s->atolv, o->atol_vec, (size_t)n * sizeof *work);
    memcpy(s->x, x0, (size_t)n * sizeof *work);
    s->t = s->t_old = s->t_req = t0;
    s->status = ODE_OK;
    return ODE_OK;
}

int ode_restart(ode_state *s, double t, const double *x, int flags)
{
    if (s == NULL || x == NULL || !isfinite(t) || !(t <= s->t_bound)) return ODE_EARG;
    if ((flags & ~ODE_KEEP_H) != 0) return ODE_EARG;
    if (x != s->x) memmove(s->x, x, (size_t)s->n * sizeof *x);
    s->t = s->t_old = s->t_req = t;
    s->started = 0;
    s->dense_ok = 0;
    s->k_ok = 0;
    if (!(flags & ODE_KEEP_H)) s->h_ok = 0;
    return ODE_OK;
}

/* scipy's select_initial_step ([HNW] II.4): f(t, x) in s->f; one evaluation of f. */
static int initial_step(ode_state *s, ode_rhs f, void *ctx, double *h_out)
{
    const size_t n = (size_t)s->n;
    const double t0 = s->t, interval = s->t_bound - t0; /* +inf without a bound */
    if (interval == 0.0) {
        *h_out = 0.0;
        return ODE_OK;
    }
    nrm_acc a0 = {0.0, 1.0}, a1 = {0.0, 1.0}, a2 = {0.0, 1.0};
    for (size_t i = 0; i < n; ++i) {
        const double sc = scale_of(s, i, fabs(s->x[i]));
        nrm_add(&a0, s->x[i] / sc);
        nrm_add(&a1, s->f[i] / sc);
    }
    const double rn = sqrt((double)n);
    const double d0 = nrm_value(&a0) / rn, d1 = nrm_value(&a1) / rn;
    double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    if (h0 > interval) h0 = interval;
    double *y1 = s->y_stage, *f1 = s->k + n; /* scratch */
    for (size_t i = 0; i < n; ++i) y1[i] = s->x[i] + h0 * s->f[i];
    const int rc = call_rhs(s, f, ctx, t0 + h0, y1, f1);
    if (rc != ODE_OK) return rc;
    for (size_t i = 0; i < n; ++i) nrm_add(&a2, (f1[i] - s->f[i]) / scale_of(s, i, fabs(s->x[i])));
    const double d2 = nrm_value(&a2) / rn / h0;
    double h1;
    if (!isfinite(d2))
        h1 = h0; /* f non-finite a little ahead: start small, the controller will cut further */
    else if (d1 <= 1e-15 && d2 <= 1e-15)
        h1 = fmax(1e-6, h0 * 1e-3);
    else
        h1 = pow(0.01 / fmax(d1, d2), 1.0 / (order_err(s->method) + 1));
    double h = fmin(100.0 * h0, h1);
    h = fmin(h, interval);
    h = fmin(h, s->h_max);
    *h_out = h;
    return ODE_OK;
}

/* f(t, x) and the first step size */
static int start(ode_state *s, ode_rhs f, void *ctx)
{
    if (!all_finite(s->x, (size_t)s->n)) return ODE_ENONFINITE;
    int rc = call_rhs(s, f, ctx, s->t, s->x, s->f);
    if (rc != ODE_OK) return rc;
    if (!all_finite(s->f, (size_t)s->n)) return ODE_ENONFINITE;
    if (!s->h_ok) {
        if (s->h_init > 0.0) {
            s->h_abs = s->h_init;
        } else {
            rc = initial_step(s, f, ctx, &s->h_abs);
            if (rc != ODE_OK) return rc;
        }
        s->h_ok = 1;
    }
    s->started = 1;
    return ODE_OK;
}

/* The stages of a step of size h from (t, x): k_0 = f, ..., y_new, and k_ns = f(t + h, y_new). */
static int stages(ode_state *s, ode_rhs f, void *ctx, double t, double h)
{
    const size_t n = (size_t)s->n;
    const int m = s->method, ns = n_stages(m);
    memcpy(s->k, s->f, (size_t)n * sizeof *s->k);
    for (int st = 1; st < ns; ++st) {
        combine(s, m, st, st, h, s->y_stage, 0);
        const int rc = call_rhs(s, f, ctx, t + c_coef(m, st) * h, s->y_stage,
                                s->k + (size_t)st * n);
        if (rc != ODE_OK) return rc;
    }
    combine(s, m, 0, ns, h, s->y_new, 1);
    return call_rhs(s, f, ctx, t + h, s->y_new, s->k + (size_t)ns * n);
}

/* The error norm of the step just computed by stages() (scipy's _estimate_error_norm). */
static double error_norm(const ode_state *s, double h)
{
    const size_t n = (size_t)s->n;
    const double *k = s->k;
    const double rn = sqrt((double)n);
    if (s->method == ODE_DOP853) {
        /* [DOP]: err = h * |e5|^2 / sqrt(n (|e5|^2 + 0.01 |e3|^2)), written as
           h * |e5| * (|e5| / hypot(|e5|, 0.1 |e3|)) / sqrt(n) so that nothing overflows */
        nrm_acc a5 = {0.0, 1.0}, a3 = {0.0, 1.0};
        for (size_t i = 0; i < n; ++i) {
            double e5 = 0.0, e3 = 0.0;
            for (int j = 0; j <= DOP_STAGES; ++j) {
                const double kj = k[(size_t)j * n + i];
                if (DOP_E5[j] != 0.0) e5 += DOP_E5[j] * kj;
                if (DOP_E3[j] != 0.0) e3 += DOP_E3[j] * kj;
            }
            const double sc = scale_of(s, i, fmax(fabs(s->x[i]), fabs(s->y_new[i])));
            nrm_add(&a5, e5 / sc);
            nrm_add(&a3, e3 / sc);
        }
        const double n5 = nrm_value(&a5), n3 = nrm_value(&a3);
        if (n5 == 0.0 && n3 == 0.0) return 0.0;
        return fabs(h) * n5 * (n5 / hypot(n5, 0.1 * n3)) / rn;
    }
    nrm_acc a = {0.0, 1.0};
    for (size_t i = 0; i < n; ++i) {
        double e = 0.0;
        for (int j = 0; j <= RK45_STAGES; ++j)
            if (RK_E[j] != 0.0) e += RK_E[j] * k[(size_t)j * n + i];
        const double sc = scale_of(s, i, fmax(fabs(s->x[i]), fabs(s->y_new[i])));
        nrm_add(&a, e * h / sc);
    }
    return nrm_value(&a) / rn;
}

/* One accepted step (with the rejected attempts before it), scipy's RungeKutta._step_impl.
   *budget: step attempts left in this ode_advance. */
static int step(ode_state *s, ode_rhs f, void *ctx, long *budget)
{
    const size_t n = (size_t)s->n;
    const int ns = n_stages(s->method);
    const double t = s->t;
    const double exponent = -1.0 / (order_err(s->method) + 1);
    const double min_step = 10.0 * fabs(nextafter(t, INFINITY) - t);
    double h_abs = s->h_abs;
    if (h_abs > s->h_max)
        h_abs = s->h_max;
    else if (h_abs < min_step)
        h_abs = min_step;
    int rejected = 0, bad = 0;
    for (;;) {
        if (h_abs < min_step) {
            s->h_abs = h_abs;
            return bad ? ODE_ENONFINITE : ODE_ESTEP;
        }
        if (*budget <= 0) {
            s->h_abs = h_abs;
            return ODE_EMAXSTEPS;
        }
        --*budget;
        double t_new = t + h_abs;
        if (t_new > s->t_bound) t_new = s->t_bound;
        const double h = t_new - t;
        h_abs = fabs(h);
        s->k_ok = 0;
        const int rc = stages(s, f, ctx, t, h);
        if (rc != ODE_OK) {
            s->h_abs = h_abs;
            return rc;
        }
        const double err = error_norm(s, h);
        s->err_norm = err;
        const int finite = isfinite(err) && all_finite(s->y_new, n) &&
                           all_finite(s->k + (size_t)ns * n, n);
        if (finite && err < 1.0) {
            double factor = err == 0.0 ? MAX_FACTOR : fmin(MAX_FACTOR, SAFETY * pow(err, exponent));
            if (rejected) factor = fmin(1.0, factor);
            s->h_abs = h_abs * factor;
            memcpy(s->x_old, s->x, (size_t)n * sizeof *s->x);
            memcpy(s->x, s->y_new, (size_t)n * sizeof *s->x);
            memcpy(s->f, s->k + (size_t)ns * n, (size_t)n * sizeof *s->x);
            s->t_old = t;
            s->t = t_new;
            s->dense_ok = 0;
            s->k_ok = 1;
            ++s->n_steps;
            return ODE_OK;
        }
        bad = !finite;
        double factor = finite ? SAFETY * pow(err, exponent) : MIN_FACTOR;
        if (!(factor > MIN_FACTOR)) factor = MIN_FACTOR;
        h_abs *= factor;
        rejected = 1;
        ++s->n_rejected;
    }
}

/* The coefficients of the dense output of the last accepted step (its stages in k). */
static int make_dense(ode_state *s, ode_rhs f, void *ctx)
{
    const size_t n = (size_t)s->n;
    const double h = s->t - s->t_old; /* the step's h, bit for bit (t = t_old + h exactly) */
    double *d = s->dense;
    const double *k = s->k;
    if (s->method == ODE_DOP853) {
        /* [DOP], scipy's DOP853._dense_output_impl: 3 more stages (rows 13..15 of A) */
        for (int st = DOP_STAGES + 1; st < DOP_EXT; ++st) {
            double *y = s->y_stage;
            for (size_t i = 0; i < n; ++i) y[i] = 0.0;
            for (int j = 0; j < st; ++j) {
                const double w = DOP_A[st][j];
                if (w == 0.0) continue;
                for (size_t i = 0; i < n; ++i) y[i] += w * k[(size_t)j * n + i];
            }
            for (size_t i = 0; i < n; ++i) y[i] = s->x_old[i] + y[i] * h;
            const int rc = call_rhs(s, f, ctx, s->t_old + DOP_C[st] * h, y,
                                    s->k + (size_t)st * n);
            if (rc != ODE_OK) return rc;
        }
        for (size_t i = 0; i < n; ++i) {
            const double dy = s->x[i] - s->x_old[i], f_old = k[i];
            d[i] = dy;
            d[(size_t)n + i] = h * f_old - dy;
            d[2 * (size_t)n + i] = 2.0 * dy - h * (s->f[i] + f_old);
        }
        for (int r = 0; r < 4; ++r) {
            double *dr = d + (size_t)(3 + r) * n;
            for (size_t i = 0; i < n; ++i) dr[i] = 0.0;
            for (int j = 0; j < DOP_EXT; ++j) {
                const double w = DOP_D[r][j];
                if (w == 0.0) continue;
                for (size_t i = 0; i < n; ++i) dr[i] += w * k[(size_t)j * n + i];
            }
            for (size_t i = 0; i < n; ++i) dr[i] *= h;
        }
    } else {
        /* [SH], scipy's RK45: Q = K^T P, x(t_old + th) = x_old + h sum_r Q_r th^(r+1) */
        for (int r = 0; r < RK45_DENSE; ++r) {
            double *dr = d + (size_t)r * n;
            for (size_t i = 0; i < n; ++i) dr[i] = 0.0;
            for (int j = 0; j <= RK45_STAGES; ++j) {
                const double w = RK_P[j][r];
                if (w == 0.0) continue;
                for (size_t i = 0; i < n; ++i) dr[i] += w * k[(size_t)j * n + i];
            }
        }
    }
    s->dense_ok = 1;
    return ODE_OK;
}

/* x(t) for t in [t_old, t] from the dense output */
static void interpolate(const ode_state *s, double t, double *out)
{
    const size_t n = (size_t)s->n;
    const double h = s->t - s->t_old, th = (t - s->t_old) / h;
    const double *d = s->dense;
    if (s->method == ODE_DOP853) {
        /* scipy's Dop853DenseOutput: the powers of th and (1 - th) nested */
        for (size_t i = 0; i < n; ++i) {
            double y = 0.0;
            for (int r = DOP_DENSE - 1, q = 0; r >= 0; --r, ++q) {
                y += d[(size_t)r * n + i];
                y *= (q % 2 == 0) ? th : 1.0 - th;
            }
            out[i] = y + s->x_old[i];
        }
    } else {
        const double p1 = th, p2 = p1 * th, p3 = p2 * th, p4 = p3 * th;
        for (size_t i = 0; i < n; ++i) {
            const double q = d[i] * p1 + d[(size_t)n + i] * p2 + d[2 * (size_t)n + i] * p3 +
                             d[3 * (size_t)n + i] * p4;
            out[i] = h * q + s->x_old[i];
        }
    }
}

static int fail(ode_state *s, int rc, double *x_out)
{
    memcpy(x_out, s->x, (size_t)s->n * sizeof *x_out);
    s->t_req = s->t;
    s->status = rc;
    return rc;
}

int ode_advance(ode_state *s, ode_rhs f, void *ctx, double t_end, double *x_out)
{
    if (s == NULL || f == NULL || x_out == NULL || s->x == NULL) return ODE_EARG;
    if (!isfinite(t_end) || !(t_end >= s->t_req) || !(t_end <= s->t_bound)) return ODE_EARG;
    long budget = s->max_steps;
    int rc;
    if (s->t < t_end && !s->started) {
        rc = start(s, f, ctx);
        if (rc != ODE_OK) return fail(s, rc, x_out);
    }
    while (s->t < t_end) {
        rc = step(s, f, ctx, &budget);
        if (rc != ODE_OK) return fail(s, rc, x_out);
    }
    if (t_end == s->t) {
        memcpy(x_out, s->x, (size_t)s->n * sizeof *x_out);
    } else {
        /* t_req <= t_end < t: inside the last accepted step. Its dense output was made by the
           ode_advance that first stopped inside it, or is made now (its stages are in k). */
        if (!s->dense_ok) {
            if (!s->k_ok) return ODE_EARG; /* unreachable while the invariants hold */
            rc = make_dense(s, f, ctx);
            if (rc != ODE_OK) {
                /* the state at t is fine but x(t_end) is not available: restart at t */
                s->k_ok = 0;
                return fail(s, rc, x_out);
            }
        }
        interpolate(s, t_end, x_out);
    }
    s->t_req = t_end;
    s->status = ODE_OK;
    return ODE_OK;
}

/* ---- saving and loading ---- */

int ode_save(const ode_state *s, double *buf)
{
    if (s == NULL || buf == NULL || s->x == NULL) return ODE_EARG;
    const size_t n = (size_t)s->n;
    double *h = buf;
    h[0] = SAVE_MAGIC;
    h[1] = SAVE_VERSION;
    h[2] = (double)s->n;
    h[3] = (double)s->method;
    h[4] = s->rtol;
    h[5] = s->atol;
    h[6] = s->h_max;
    h[7] = s->h_init;
    h[8] = s->t_bound;
    h[9] = (double)s->max_steps;
    h[10] = (double)s->atol_is_vec;
    h[11] = s->t;
    h[12] = s->h_abs;
    h[13] = s->t_old;
    h[14] = s->t_req;
    h[15] = (double)s->started;
    h[16] = (double)s->h_ok;
    h[17] = (double)s->dense_ok;
    h[18] = (double)s->n_steps;
    h[19] = (double)s->n_rejected;
    h[20] = (double)s->n_rhs;
    h[21] = (double)s->rhs_status;
    h[22] = (double)s->status;
    h[23] = s->err_norm;
    memcpy(buf + HDR, s->x, SAVED_VECS * n * sizeof *buf); /* x, f, x_old, dense, atolv */
    return ODE_OK;
}

static int is_flag(double v) { return v == 0.0 || v == 1.0; }

static int is_count(double v) { return v >= 0.0 && v <= 9007199254740992.0 && v == floor(v); }

int ode_load(ode_state *s, const double *buf)
{
    if (s == NULL || buf == NULL || s->x == NULL) return ODE_EARG;
    const double *h = buf;
    const size_t n = (size_t)s->n;
    if (h[0] != SAVE_MAGIC || h[1] != SAVE_VERSION || h[2] != (double)n) return ODE_ESTATE;
    if (h[3] != (double)ODE_DOP853 && h[3] != (double)ODE_RK45) return ODE_ESTATE;
    const double t = h[11], t_old = h[13], t_req = h[14];
    const int vec = h[10] == 1.0;
    int ok = h[4] >= 100.0 * DBL_EPSILON && isfinite(h[4]) && is_flag(h[10]) &&
             (vec ? h[5] == 0.0 : (h[5] > 0.0 && isfinite(h[5]))) && h[6] > 0.0 &&
             h[7] >= 0.0 && isfinite(h[7]) && is_count(h[9]) && h[9] >= 1.0 &&
             h[9] <= 2147483647.0 && isfinite(t) && isfinite(t_old) && isfinite(t_req) &&
             t_old <= t_req && t_req <= t && t <= h[8] && h[12] >= 0.0 && isfinite(h[12]) &&
             is_flag(h[15]) && is_flag(h[16]) && is_flag(h[17]) && is_count(h[18]) &&
             is_count(h[19]) && is_count(h[20]) && h[21] == floor(h[21]) &&
             fabs(h[21]) <= (double)INT_MAX && h[22] <= 0.0 && h[22] >= (double)ODE_ESTATE &&
             h[22] == floor(h[22]) && !isnan(h[23]);
    /* the dense output is needed for a t_end in [t_req, t) */
    if (ok && t_req < t && h[17] != 1.0) ok = 0;
    const double *v = buf + HDR;
    if (ok) ok = all_finite(v, n) && (h[15] == 0.0 || all_finite(v + n, n));
    if (ok && vec)
        for (size_t i = 0; i < n; ++i)
            if (!(v[(size_t)10 * n + i] > 0.0 && isfinite(v[(size_t)10 * n + i]))) ok = 0;
    if (!ok) return ODE_ESTATE;
    s->method = (int)h[3];
    s->rtol = h[4];
    s->atol = h[5];
    s->h_max = h[6];
    s->h_init = h[7];
    s->t_bound = h[8];
    s->max_steps = (long)h[9];
    s->atol_is_vec = vec;
    s->t = t;
    s->h_abs = h[12];
    s->t_old = t_old;
    s->t_req = t_req;
    s->started = (int)h[15];
    s->h_ok = (int)h[16];
    s->dense_ok = (int)h[17];
    s->n_steps = (long long)h[18];
    s->n_rejected = (long long)h[19];
    s->n_rhs = (long long)h[20];
    s->rhs_status = (int)h[21];
    s->status = (int)h[22];
    s->err_norm = h[23];
    s->k_ok = 0;
    memcpy(s->x, v, SAVED_VECS * (size_t)n * sizeof *buf);
    return ODE_OK;
}

const char *ode_strerror(int code)
{
    switch (code) {
    case ODE_OK: return "success";
    case ODE_EARG: return "invalid argument, option or end time";
    case ODE_ESTEP: return "step size underflow (the step needed fell below 10 ulp of the time)";
    case ODE_EMAXSTEPS: return "too many steps (max_steps attempts in one call)";
    case ODE_ERHS: return "the right-hand side failed (its code is in rhs_status)";
    case ODE_ENONFINITE: return "non-finite state or derivative";
    case ODE_ESTATE: return "not a saved integrator state of this size";
    default: return "unknown error code";
    }
}
