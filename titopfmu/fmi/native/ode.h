/*
 * ode.h -- an explicit embedded Runge-Kutta integrator with error control and dense output, for
 * the internal step of a co-simulation FMU (C99, no dependency but libm).
 *
 * Methods (the algorithms of scipy.integrate.solve_ivp, so that an FMU reproduces the in-process
 * engine, which integrates with scipy's solver classes):
 *   ODE_DOP853  Dormand & Prince's explicit Runge-Kutta pair of order 8 with error estimators of
 *               orders 5 and 3 and a dense output of order 7: Hairer, Norsett & Wanner, "Solving
 *               Ordinary Differential Equations I: Nonstiff Problems", 2nd ed., Springer 1993,
 *               Sec. II.5 (method), II.6 (dense output), II.10 (code DOP853); the coefficients of
 *               Hairer's code dop853.f (http://www.unige.ch/~hairer/software.html), the same as
 *               scipy/integrate/_ivp/dop853_coefficients.py.
 *   ODE_RK45    Dormand & Prince's 5(4) pair (DOPRI5; Hairer, Norsett & Wanner, Sec. II.5,
 *               Table 5.2), first-same-as-last, with Shampine's dense output of order 4
 *               (Math. Comp. 46 (1986) 135-150), as scipy's RK45.
 * Step-size control as scipy's (Hairer, Norsett & Wanner, Sec. II.4): the scale of component i
 * is atol_i + rtol * max(|x_i(t)|, |x_i(t + h)|), the error norm is the root mean square of
 * error / scale, a step is accepted when the norm is < 1, and the next step is multiplied by
 * min(10, 0.9 * err^(-1/(q+1))) (q = 7 for DOP853, 4 for RK45), never more than 1 right after a
 * rejection, never less than 0.2 after a rejection; the initial step is scipy's
 * select_initial_step (Hairer, Norsett & Wanner, Sec. II.4, "Starting step size").
 *
 * Communication points do not shorten the steps. ode_advance(s, f, ctx, t_end, x_out) takes the
 * integrator's own steps until one ends at or after t_end and evaluates x(t_end) with the dense
 * output of that step: the sequence of steps, hence every result, is the same whatever the
 * sequence of t_end (bit for bit), the right-hand side being the same function of (t, x). Only
 * t_bound (an option; the FMU's stop time) is never stepped over: the step that would pass it is
 * shortened to end on it, as in solve_ivp (with t_bound = its t_span[1], the steps are those of
 * solve_ivp). Consequence for an FMU: the right-hand side is evaluated at times beyond the
 * communication point with the inputs of the current communication step held; when the host
 * changes an input (or a parameter, or the state), call ode_restart at the communication point.
 *
 * No global mutable state, no allocation: the caller owns the ode_state and a work array of
 * ode_work_size(n) doubles, used by that state only (the ode_state points into it: do not copy an
 * ode_state by value, use ode_save / ode_load). Functions of different states may run
 * concurrently. Integration is forward in time only.
 */
#ifndef TITOPFMU_ODE_H
#define TITOPFMU_ODE_H

#include <stddef.h>

/* Return codes (ODE_OK = 0, failures negative). After a failure of ode_advance other than
   ODE_EARG, the integration stopped at the last accepted step, s->t (< t_end, unless f failed in
   the 3 extra stages of the DOP853 dense output): x_out holds x(s->t), s->t_req = s->t, and the
   state stays usable (a later ode_advance continues from s->t, with t_end >= s->t). */
enum {
    ODE_OK = 0,
    ODE_EARG = -1,      /* invalid argument or option, or t_end before the last time reached;
                           nothing changed */
    ODE_ESTEP = -2,     /* step size underflow: the step needed fell below 10 ulp(t) */
    ODE_EMAXSTEPS = -3, /* max_steps step attempts in one ode_advance without reaching t_end */
    ODE_ERHS = -4,      /* the right-hand side failed: its nonzero return is in s->rhs_status */
    ODE_ENONFINITE = -5 /* non-finite state or derivative (at the start, or steps shrunk to
                           underflow while the stages stayed non-finite) */,
    ODE_ESTATE = -6     /* ode_load: not a saved state of this size (nothing changed) */
};

enum { ODE_DOP853 = 1, ODE_RK45 = 2 };

/* ode_restart flags */
enum { ODE_KEEP_H = 1 };

/* The right-hand side dx/dt = f(t, x): returns 0, or a nonzero code of failure (ODE_ERHS).
   dxdt never aliases x. */
typedef int (*ode_rhs)(void *ctx, double t, const double *x, double *dxdt);

typedef struct {
    int method;         /* ODE_DOP853 (default) or ODE_RK45 */
    double rtol;        /* relative tolerance, >= 0; raised to 100 eps as scipy does */
    double atol;        /* absolute tolerance, > 0 (used when atol_vec is NULL) */
    const double *atol_vec; /* NULL, or n absolute tolerances > 0 (copied by ode_init) */
    double h_max;       /* largest step, > 0 (INFINITY: none) */
    double h_init;      /* first step, 0: automatic (scipy's select_initial_step) */
    double t_bound;     /* never step beyond (the stop time; INFINITY: none), >= t0 */
    long max_steps;     /* step attempts per ode_advance call, > 0 (at most 2^31 - 1) */
} ode_options;

/* The state of an integration. Read-only for the caller (use the functions to change it). */
typedef struct {
    /* configuration (ode_init) */
    int n, method;
    double rtol, atol, h_max, h_init, t_bound;
    long max_steps;
    int atol_is_vec;
    /* integration */
    double t;          /* time of the last accepted step: x = x(t), f = f(t, x) */
    double h_abs;      /* size proposed for the next step (valid when h_ok) */
    double t_old;      /* start of the last accepted step (its dense output covers [t_old, t]) */
    double t_req;      /* the last time reached by ode_advance (or of ode_init / ode_restart) */
    int started;       /* f = f(t, x) evaluated (0 after ode_init / ode_restart) */
    int h_ok;          /* h_abs chosen (kept by ode_restart with ODE_KEEP_H) */
    int dense_ok;      /* dense-output coefficients of the last step in `dense` */
    long long n_steps, n_rejected, n_rhs; /* accepted steps, rejected steps, f evaluations */
    int rhs_status;    /* the nonzero return of the right-hand side in the last ODE_ERHS */
    int status;        /* return code of the last ode_advance (ODE_EARG excepted) */
    double err_norm;   /* error norm of the last step attempt */
    int k_ok;          /* transient: the stages of the last accepted step are in k (not saved) */
    /* in the work array */
    double *x, *f, *x_old, *dense, *atolv, *k, *y_stage, *y_new;
} ode_state;

/* Options with scipy's defaults: DOP853, rtol 1e-3, atol 1e-6, no h_max, automatic first step,
   no t_bound, max_steps 100000. */
void ode_default_options(ode_options *o);

/* Size (doubles) of the work array of a system of n states (either method). */
size_t ode_work_size(int n);

/* Start an integration at (t0, x0) (nothing evaluated yet: f(t0, x0) and the first step are
   computed by the first ode_advance). work: ode_work_size(n) doubles. ODE_OK or ODE_EARG. */
int ode_init(ode_state *s, int n, double t0, const double *x0, const ode_options *o,
             double *work);

/* Integrate to t_end (s->t_req <= t_end <= t_bound) and write x(t_end) into x_out (n doubles,
   not in the work array). Takes steps until one ends at or after t_end (none when the last step
   already did); x(t_end) is the state of that step if it ends on t_end, else the value of its
   dense output (3 more evaluations of f per step for DOP853, none for RK45, once a step). */
int ode_advance(ode_state *s, ode_rhs f, void *ctx, double t_end, double *x_out);

/* Restart from (t, x) (x: n doubles; t <= t_bound): the derivative f(t, x) is evaluated afresh
   by the next ode_advance (no first-same-as-last reuse, no dense output over the jump), and the
   first step is chosen again by select_initial_step, or, with ODE_KEEP_H, is the step size the
   controller had proposed. Counters and options are kept. For a jump of an input, a parameter
   or the state at a communication point t_c: ode_restart(s, t_c, x(t_c), flags). */
int ode_restart(ode_state *s, double t, const double *x, int flags);

/* Saving the whole state (options, counters, vectors) as plain doubles, for
   fmi2GetFMUstate / fmi2SetFMUstate / serialization: ode_save writes ode_save_size(n) doubles
   (some may be +-infinity: h_max, t_bound); ode_load restores them into a state initialized by
   ode_init with the same n (any options, its own work array): the integration then goes on
   bit-identically to the one saved. ode_load returns ODE_OK or ODE_ESTATE (nothing changed). */
size_t ode_save_size(int n);
#define ODE_SAVE_SIZE(n) ((n) > 0 ? 24 + 11 * (n) : 0) /* ode_save_size(n), as a constant */
int ode_save(const ode_state *s, double *buf);
int ode_load(ode_state *s, const double *buf);

/* A static English message for a return code. */
const char *ode_strerror(int code);

#endif /* TITOPFMU_ODE_H */
