/*
 * fmu_block.h -- the part of a titopfmu block FMU that is not tied to an FMI version (the
 * layout of the FMI Reference FMUs: one model, thin fmi2/fmi3 function files).
 *
 * fmu_block.c holds the instance, its parameters' validation, the core model built from them,
 * the evaluation of outputs and state derivatives, the internal Runge-Kutta step of
 * co-simulation, the FMU state (snapshot, validation, serialization) and the exact directional
 * derivatives (the core's complex-step build). fmi2_block.c and fmi3_block.c map the FMI
 * functions of each version onto it. Variables are addressed here by *slot*: one slot per
 * scalar, the FMI 2.0 value reference (an FMI 3.0 array variable covers consecutive slots).
 *
 * Statuses are the FMI ones (FMU_OK .. FMU_FATAL have the values of fmi2Status and fmi3Status).
 * Refusals log a message naming the variable and return FMU_ERROR; the instance stays usable.
 * FMU_FATAL only for a failed allocation.
 */
#ifndef FMU_BLOCK_H
#define FMU_BLOCK_H

#include <stddef.h>

#include "fmu_config.h"
#include "titop.h"

enum { FMU_OK = 0, FMU_WARNING = 1, FMU_DISCARD = 2, FMU_ERROR = 3, FMU_FATAL = 4 };
enum { T_REAL = 0, T_INT = 1, T_BOOL = 2 };
enum { C_PARAM = 0, C_INPUT = 1, C_OUTPUT = 2, C_LOCAL = 3 };
enum { M_INSTANTIATED, M_INIT, M_STEP, M_EVENT, M_CONT, M_TERMINATED, M_ERROR };

#define MAX_X 13
enum { EVAL_DX = 1, EVAL_FULL = 2 };
/* the slot of the independent variable (FMI 3.0 'time'): readable, never settable */
#define FMU_TIME_SLOT 0xFFFFFFFFu
#define IN_MODES(a) (1u << (a))

typedef struct FmuInstance FmuInstance;
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
    double v[FMU_NVARS];  /* every variable by slot (ints and booleans too) */
    double du[FMU_NVARS]; /* CS input derivatives (fmi2SetRealInputDerivatives) */
    double x[MAX_X], dx[MAX_X];
    int nx;
    int built; /* model built from the current parameters */
    /* What is up to date at the current time, state and inputs (all cleared together by any
       change of them): each is computed on demand, at most once per change. */
    int evaluated;   /* 0; EVAL_DX: titop_eval without the wrenches (dx and every output but
                        the wrench on the parent); EVAL_FULL: every wrench too */
    unsigned out_ok; /* output groups (rows of FMU_OUTPUTS, bit g) converted into v */
    /* directional derivatives: zwork holds the complex-step evaluation along zseed (the
       states' then the core inputs' seeds) up to z_level (0: none, EVAL_DX, EVAL_FULL), and
       dout the derivatives of the output groups read from it (bit g of zout_ok), until the
       next change */
    int z_level;
    unsigned zout_ok;
    double zseed[FMU_NX + FMU_NIN + 1];
    double dout[FMU_NVARS];
    /* the core model of the block (one body, its ports and external wrench) */
    titop_model model;
    titop_body body;
    titop_port ports[FMU_NCHILDREN > 0 ? FMU_NCHILDREN : 1];
    titop_ext ext;
    double *data;  /* titop_data_size doubles */
    double *zwork; /* complex step: data, x, inputs, dx */
    double in[FMU_NIN > 0 ? FMU_NIN : 1];
    double max_step;
    int method;
    long max_substeps;
};

extern const char *const FMU_MODE_NAME[];

/* life cycle; fmu_new returns NULL (after logging why) on a wrong GUID / instantiation token */
FmuInstance *fmu_new(const char *api, const char *name, int cs, const char *token,
                     void *(*alloc)(size_t, size_t), void (*dealloc)(void *), FmuEmit emit,
                     void (*host_logger)(void), void *host_env);
void fmu_free(FmuInstance *c);
int fmu_refuse(FmuInstance *c, const char *fmt, ...);
int fmu_setup(FmuInstance *c, double start);
int fmu_enter_init(FmuInstance *c);
int fmu_exit_init(FmuInstance *c);
int fmu_terminate(FmuInstance *c);
int fmu_reset(FmuInstance *c);
int fmu_ensure_built(FmuInstance *c);

/* variables by slot: a refused call changes nothing */
int fmu_check_slot(FmuInstance *c, unsigned slot, int type);
int fmu_get(FmuInstance *c, const unsigned slot[], size_t n, int type, double *out);
int fmu_set(FmuInstance *c, const unsigned slot[], size_t n, int type, const double *val);

/* co-simulation: one communication step with the internal Runge-Kutta method */
int fmu_do_step(FmuInstance *c, double t0, double h);

/* model exchange */
int fmu_me_call(FmuInstance *c, const char *what, unsigned modes);
int fmu_enter_event_mode(FmuInstance *c);
int fmu_event_update(FmuInstance *c, const char *what);
int fmu_enter_continuous_time_mode(FmuInstance *c);
int fmu_set_time(FmuInstance *c, double time);
int fmu_set_states(FmuInstance *c, const double x[], size_t nx, const char *what);
int fmu_get_derivatives(FmuInstance *c, double dx[], size_t nx, const char *what);
int fmu_get_states(FmuInstance *c, double x[], size_t nx, const char *what);

/* FMU state: a fixed-size snapshot, validated completely before it is used */
int fmu_state_get(FmuInstance *c, void **state);
int fmu_state_set(FmuInstance *c, const void *state);
void fmu_state_free(FmuInstance *c, void **state);
size_t fmu_state_size(void);
int fmu_state_deserialize(FmuInstance *c, const unsigned char bytes[], size_t size,
                          void **state);

/* exact directional derivative (complex step in the core): dUnknown = J dKnown, by slots of
   outputs and state derivatives (unknowns), inputs and states (knowns; a repeated known adds
   its seeds). One complex-step evaluation per seed vector dKnown, whatever the number of
   unknowns, kept and reused while the same seed is asked at the same time, state and inputs. */
int fmu_directional(FmuInstance *c, const unsigned unknown[], size_t nUnknown,
                    const unsigned known[], size_t nKnown, const double dKnown[],
                    double dUnknown[], const char *what);

#endif
