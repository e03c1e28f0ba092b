/*
 * fmu.h -- the model-independent layer of every titopfmu FMU: one FMI wrapper, many models (the
 * layout of the FMI Reference FMUs, whose fmi2Functions.c, fmi3Functions.c and cosimulation.c
 * serve every model.c).
 *
 *   fmi2_block.c, fmi3_block.c   the FMI 2.0 / FMI 3.0 functions, on fmu.c alone
 *   fmu.c                        the instance, its modes and calling sequence, the variables by
 *                                slot, refusals and the log, the FMU state (snapshot, validation,
 *                                serialization), the communication step (checks, the internal
 *                                Runge-Kutta loop, input derivatives), model exchange
 *   a model file                 what the model computes, behind FMU_MODEL (below):
 *                                fmu_block.c (a titopfmu block on the C core),
 *                                fmi2_state_space.c (a linear state-space model)
 *   fmu_config.h                 generated for each FMU: its variables (below)
 *
 * Variables are addressed by *slot*: one slot per scalar, the FMI 2.0 value reference (an FMI 3.0
 * array variable covers consecutive slots). fmu_config.h defines FMU_MODEL_NAME, FMU_GUID,
 * FMU_NVARS and, by slot, FMU_VAR_NAME, FMU_VAR_TYPE (T_*), FMU_VAR_CAUS (C_*) and FMU_DEFAULT
 * (start values); FMU_NX continuous states at slots FMU_X_VR0.., their derivatives at
 * FMU_DX_VR0..; for FMI 3.0, FMU3_NVARS and FMU3_VARS (value reference -> first slot, count).
 *
 * Statuses are the FMI ones (FMU_OK .. FMU_FATAL have the values of fmi2Status and fmi3Status).
 * Refusals log a message naming the variable and return FMU_ERROR; the instance stays usable.
 * FMU_FATAL only for a failed allocation. No global mutable state: everything is in the instance.
 */
#ifndef FMU_H
#define FMU_H

#include <stddef.h>

#include "fmu_config.h"

enum { FMU_OK = 0, FMU_WARNING = 1, FMU_DISCARD = 2, FMU_ERROR = 3, FMU_FATAL = 4 };
enum { T_REAL = 0, T_INT = 1, T_BOOL = 2 };
/* causality of a slot: C_LOCAL is computed (a block's states and every state derivative);
   C_STATE a continuous state with a start value, settable until ExitInitializationMode */
enum { C_PARAM = 0, C_INPUT = 1, C_OUTPUT = 2, C_LOCAL = 3, C_STATE = 4 };
enum { M_INSTANTIATED, M_INIT, M_STEP, M_EVENT, M_CONT, M_TERMINATED, M_ERROR };

#define FMU_NX1 (FMU_NX > 0 ? FMU_NX : 1)
/* doubles of the model's own data kept in an FMU state (FMU_MODEL.save / load; fmu_config.h
   may define FMU_EXTRA) */
#ifndef FMU_EXTRA
#define FMU_EXTRA 0
#endif
#define FMU_EXTRA1 (FMU_EXTRA > 0 ? FMU_EXTRA : 1)
/* the slot of the independent variable (FMI 3.0 'time'): readable, never settable */
#define FMU_TIME_SLOT 0xFFFFFFFFu
#define IN_MODES(a) (1u << (a))

typedef struct FmuInstance FmuInstance;
/* the model's own data: a struct each model file defines, FMU_MODEL.size bytes, zeroed */
typedef struct FmuModelData FmuModelData;
/* hands one finished message to the host's logger (the FMI version's callback) */
typedef void (*FmuEmit)(const FmuInstance *c, int status, const char *category,
                        const char *message);

struct FmuInstance {
    const char *api; /* "fmi2" or "fmi3": prefix of the function names in messages */
    char *name;
    int cs; /* co-simulation (1) or model exchange (0) */
    int mode;
    int logging; /* SetDebugLogging(false) silences the log; refusals are logged otherwise,
                    whatever loggingOn was at instantiation (as the FMI Reference FMUs) */
    /* the host: allocation, logger (as a generic function pointer) and its environment */
    void *(*alloc)(size_t, size_t);
    void (*dealloc)(void *);
    FmuEmit emit;
    void (*host_logger)(void);
    void *host_env;
    double t;
    double stop; /* the experiment's stop time (s), INFINITY if none */
    double v[FMU_NVARS];  /* every variable by slot (ints and booleans too); the states and
                             their derivatives are x and dx */
    double du[FMU_NVARS]; /* CS input derivatives (fmi2SetRealInputDerivatives) */
    double x[FMU_NX1], dx[FMU_NX1];
    /* the internal Runge-Kutta step of co-simulation (models without FMU_MODEL.step): order
       1, 2 or 4, the largest internal step and the most internal steps in one DoStep; set by
       the model when it builds */
    int method;
    double max_step;
    long max_substeps;
    FmuModelData *m;
};

/*
 * The model interface: each model file defines `const FmuModel FMU_MODEL = {...}`. fmu.c calls
 * the entries, with every value reference, mode and value already checked; an optional entry is
 * NULL. Each returns an FMU status (after fmu_refuse for a refusal) unless said otherwise.
 */
typedef struct {
    size_t size; /* sizeof(struct FmuModelData) */
    /* optional: after instantiation (c->m zeroed, c->v and c->x at their start values) */
    int (*init)(FmuInstance *c);
    /* optional: release what the model allocated */
    void (*free)(FmuInstance *c);
    /* optional: the model from the parameters in c->v, when they changed (it may set the
       states, c->x, from them); from EnterInitializationMode on, and before any computation */
    int (*build)(FmuInstance *c);
    /* what is computed from the time, the states, the inputs (and the parameters, when
       `parameters`) is out of date */
    void (*touch)(FmuInstance *c, int parameters);
    /* the outputs among slot[0..n) (other slots may be listed) up to date in c->v */
    int (*outputs)(FmuInstance *c, const unsigned slot[], size_t n);
    /* c->dx up to date (the model built) */
    int (*derivatives)(FmuInstance *c);
    /* for the Runge-Kutta step: the state derivative dx at time t0 + s, state x, the inputs
       moved on by s with their derivatives (c->v + s c->du); nonzero if it failed */
    int (*rate)(FmuInstance *c, double t0, double s, const double x[], double dx[]);
    /* optional: a communication step of its own instead of Runge-Kutta: the state at t0 + h
       into x (checked finite by the caller) */
    int (*step)(FmuInstance *c, double t0, double h, double x[]);
    /* dUnknown = J dKnown: unknowns outputs or state-derivative slots; knowns input or state
       slots, or parameters with a zero seed (Initialization Mode) that add nothing; seeds
       finite. The model is built. */
    int (*directional)(FmuInstance *c, const unsigned unknown[], size_t nUnknown,
                       const unsigned known[], size_t nKnown, const double seed[],
                       double dUnknown[]);
    /* optional (NULL: none, maxOutputDerivativeOrder 0): first time derivatives of the output
       slots slot[0..n) into value */
    int (*output_derivatives)(FmuInstance *c, const unsigned slot[], size_t n, double value[]);
    /* optional: the model's own run-time data that an FMU state keeps (FMU_EXTRA doubles):
       save writes them; load, after the rest of the state is restored, takes them back (a
       model that finds them unusable recomputes what they held: never an error) */
    void (*save)(const FmuInstance *c, double extra[]);
    void (*load)(FmuInstance *c, const double extra[]);
} FmuModel;

extern const FmuModel FMU_MODEL;
extern const char *const FMU_MODE_NAME[];

/* messages: fmu_refuse logs "FMU instance 'name' (model): ..." as an error, returns FMU_ERROR;
   fmu_log logs as it is; fmu_num prints a double as Python's repr */
int fmu_refuse(FmuInstance *c, const char *fmt, ...);
void fmu_log(FmuInstance *c, int status, const char *fmt, ...);
typedef struct {
    char s[40];
} FmuNum;
FmuNum fmu_num(double x);

/* life cycle; fmu_new returns NULL (after logging why) on a wrong GUID / instantiation token */
FmuInstance *fmu_new(const char *api, const char *name, int cs, const char *token,
                     void *(*alloc)(size_t, size_t), void (*dealloc)(void *), FmuEmit emit,
                     void (*host_logger)(void), void *host_env);
void fmu_free(FmuInstance *c);
/* the start time, and the stop time (INFINITY: none) that an internal integrator never steps
   over */
int fmu_setup(FmuInstance *c, double start, double stop);
int fmu_enter_init(FmuInstance *c);
int fmu_exit_init(FmuInstance *c);
int fmu_terminate(FmuInstance *c);
int fmu_reset(FmuInstance *c);
int fmu_build(FmuInstance *c);
void fmu_touch(FmuInstance *c, int parameters);

/* variables by slot: a refused call changes nothing */
int fmu_check_slot(FmuInstance *c, unsigned slot, int type);
int fmu_get(FmuInstance *c, const unsigned slot[], size_t n, int type, double *out);
int fmu_set(FmuInstance *c, const unsigned slot[], size_t n, int type, const double *val);

/* co-simulation: one communication step; input derivatives (first order, FMI 2.0); output
   derivatives (the model's, if any) */
int fmu_do_step(FmuInstance *c, double t0, double h);
int fmu_set_input_derivatives(FmuInstance *c, const unsigned slot[], size_t n,
                              const int order[], const double value[]);
int fmu_get_output_derivatives(FmuInstance *c, const unsigned slot[], size_t n,
                               const int order[], double value[], const char *what);

/* model exchange */
int fmu_me_call(FmuInstance *c, const char *what, unsigned modes);
int fmu_enter_event_mode(FmuInstance *c);
int fmu_event_update(FmuInstance *c, const char *what);
int fmu_enter_continuous_time_mode(FmuInstance *c);
int fmu_set_time(FmuInstance *c, double time);
int fmu_set_states(FmuInstance *c, const double x[], size_t nx, const char *what);
int fmu_get_derivatives(FmuInstance *c, double dx[], size_t nx, const char *what);
int fmu_get_states(FmuInstance *c, double x[], size_t nx, const char *what);
int fmu_get_nominals(FmuInstance *c, double nominals[], size_t nx, const char *what);

/* FMU state: a fixed-size snapshot, validated completely before it is used */
int fmu_state_get(FmuInstance *c, void **state);
int fmu_state_set(FmuInstance *c, const void *state);
void fmu_state_free(FmuInstance *c, void **state);
size_t fmu_state_size(void);
int fmu_state_serialize(FmuInstance *c, const void *state, unsigned char bytes[], size_t size);
int fmu_state_deserialize(FmuInstance *c, const unsigned char bytes[], size_t size,
                          void **state);

/* directional derivative: dUnknown = J dKnown, by slots of outputs and state derivatives
   (unknowns), inputs and states (knowns; a repeated known adds its seeds), all checked before
   the model's FMU_MODEL.directional */
int fmu_directional(FmuInstance *c, const unsigned unknown[], size_t nUnknown,
                    const unsigned known[], size_t nKnown, const double dKnown[],
                    double dUnknown[], const char *what);

#endif
