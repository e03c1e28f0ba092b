/*
 * titop.h -- the TITOP multibody core: the physics of titopfmu, written once.
 *
 * C99, libm only, no global state, no allocation: every buffer is owned and sized by the caller.
 * Re-entrant: one titop_model (immutable parameters, cf. Pinocchio's Model) may serve any number
 * of threads, each with its own data buffer (run-time values, cf. Pinocchio's Data).
 *
 * Seed: D. Alazard, F. Sanfedino, E. Kassarian, "Non-linear dynamics of multibody systems: a
 * system-based approach" (arXiv 2505.03248). Equation numbers in the sources refer to it.
 *
 * Conventions (SI units):
 *   - a dual vector (twist, spatial acceleration) is [linear(3), angular(3)]; a wrench [F(3), T(3)],
 *     the torque about the port point;
 *   - motion vector m_P (18) = [v̇_P, ω̇, v_P, ω, IP, Θ]: spatial acceleration w.r.t. the body frame,
 *     twist, position, all projected in the body frame, and the 3-2-1 Euler angles Θ = [φ, θ, ψ],
 *     P_{b/i} = R_z(ψ) R_y(θ) R_x(φ);
 *   - P_{a/b} is the DCM from R_a to R_b: [v]_b = P_{a/b} [v]_a; matrices are row-major;
 *   - quaternions are [w, x, y, z] (scalar first).
 *
 * Every body is a node of a tree listed parents first. A joint body A hangs from its parent B
 * through a joint whose kinematics are
 *     ẋ'_A = G ẋ'_B + e + S u̇,   x'_A = G x'_B + S u,   G = τ(p) diag(E^T, E^T)
 * (E = P_{a/b}, p a vector of R_a, τ(p) = [[1, (*p)], [0, 1]]), eqs. (15)-(17) and (24). The
 * algebraic loop of the block diagram is solved in one backward and one forward sweep in the
 * articulated-inertia form: each node assembles the symmetric positive definite inertia
 * Ia = D_P + Σ τ_C^T Ma_C τ_C of its subtree and solves with its LDL^T factors, so no difference
 * of large terms (compliance times inertia) is ever formed, whatever the mass ratios.
 *
 * The same sources are compiled twice: with real_t = double (titop_* functions) and with
 * real_t = double complex (titopz_* functions). The complex build evaluates f(x + i h v) and so
 * gives the directional derivative Im f / h = J v exact to rounding (complex step).
 */
#ifndef TITOP_H
#define TITOP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TITOP_VERSION 1

/* Body kinds. */
enum titop_kind {
    TITOP_RIGID = 0,     /* free-floating root (eqs. 11-13), states [IP_i(3), q(4), x'_P(6)] */
    TITOP_GROUND = 1,    /* fixed root; output: the wrench holding it (6, its frame, at O) */
    TITOP_IMPOSED = 2,   /* root with imposed motion vector (input 18, Fig. 1); output: W_ext,P */
    TITOP_WELD = 3,      /* welded joint body (eq. 15) */
    TITOP_REVOLUTE = 4,  /* revolute joint body (eqs. 16-23), 1 dof */
    TITOP_PRISMATIC = 5, /* prismatic joint body (eqs. 24-29), 1 dof */
    TITOP_SPHERICAL = 6, /* ball joint body, 3 dof, relative quaternion */
    TITOP_FREE = 7       /* free joint body, 6 dof, [OP]_{R_b} and relative quaternion */
};

/* Special values of titop_body.parent. */
#define TITOP_NO_PARENT (-1)
#define TITOP_PARENT_INPUT (-2) /* the parent port's motion vector is an input (a lone block) */

/* Return codes of the evaluation functions. */
enum titop_status {
    TITOP_OK = 0,
    TITOP_SINGULAR = 1,  /* a joint's articulated inertia S^T Ia S is not positive definite */
    TITOP_NONFINITE = 2, /* a non-finite value in an input, a state or a result */
    TITOP_BAD_MODEL = 3, /* the model does not pass titop_model_check */
    TITOP_UNSETTLED = 4  /* a flexible part's load values of the geometric stiffness did not
                            settle (titop_flex: I - A of their affine pass map (near)
                            singular or not finite; the body near buckling, or a made-up
                            coupling) */
};
/* What a titop_status means, in words (one phrase, for messages) */
const char *titop_status_text(int status);

/* One body (node of the tree). Parameters in the body frame R_a unless said. */
typedef struct titop_body {
    int kind;     /* enum titop_kind */
    int inverse;  /* joint bodies: 1 = imposed joint motion (inverse dynamics, eqs. 21, 27) */
    int parent;   /* parent body index (< this one), TITOP_NO_PARENT, or TITOP_PARENT_INPUT */
    int slot;     /* child-port index of the parent this body hangs from */
    int port0;    /* its child ports: model->ports[port0 .. port0 + nports) */
    int nports;
    int ext0;     /* its external wrenches: model->exts[ext0 .. ext0 + next) */
    int next;
    int x0;       /* first state in x (rigid root: 13; forward joint bodies: nq + nv), or -1 */
    int in0;      /* first input: forward joint effort (nv), inverse joint motion [u̇, u, p]
                     (3 nv), imposed motion vector (18); -1 if none */
    int pm0;      /* parent == TITOP_PARENT_INPUT: first input of the parent motion vector (18,
                     projected in the parent frame R_b) */
    double mass;        /* kg: > 0 for a root (unused by GROUND), >= 0 for a joint body (a
                           massless link is valid when the subtree its joint moves has inertia
                           about the joint: the sweep's pivots judge it, TITOP_SINGULAR) */
    double com[3];      /* PB: reference point P -> centre of mass B, m */
    double inertia[9];  /* I_B at the centre of mass, kg m^2 */
    double gravity[3];  /* g in the inertial frame, m/s^2 */
    double axis[3];     /* revolute r / prismatic t (unit) */
    double R0[9];       /* P_{a0/b} (revolute, spherical, free), P_{a/b} (weld, prismatic),
                           P_{b/i} (ground) */
    double pos[3];      /* ground: [IO]_{R_i}, m */
    double armature[6]; /* joint bodies: rotor inertia per joint speed u_k (k < nv), >= 0, kg m^2
                           (rotational) or kg (translational), added to the joint's apparent
                           inertia S^T Ia S (eq. 20) as Pinocchio's model.armature; zero unless
                           set */
    double damping;     /* forward spherical and free joint bodies and free-flying (rigid)
                           roots: viscous damping d >= 0 on every joint speed, effort -d u added
                           to the joint's (N s/m on v_r, N m s/rad on ω_r: MuJoCo's joint
                           damping, -d qvel, the same vector in any frame); on a rigid root the
                           wrench -d x'_P applied at P (MuJoCo's free joint of a top-level
                           body); zero unless set, zero on other bodies */
    double stiffness;   /* forward spherical and free joint bodies and rigid roots: spring
                           k >= 0 (N m/rad on rotation; N/m on translation, free and root), effort
                           -k θ added to the joint's, θ the rotation vector of q_ref^-1 q (the
                           child's frame; MuJoCo's ball and free joint stiffness, mj_springdamper);
                           free joint: also the force -k (r - r_ref), r = [OP]_{R_b}, applied at P;
                           rigid root: -k (IP - r_ref), [IP]_{R_i}, q its attitude P_{b/i}; zero
                           unless set, zero on other bodies */
    double spring_ref[4]; /* its reference attitude q_ref, a quaternion [w, x, y, z] (finite,
                           not zero; read only when stiffness is not zero) */
    double spring_pos[3]; /* free joint: reference position r_ref, [OP]_{R_b}; rigid root:
                           [IP]_{R_i} (m, finite; read only when stiffness is not zero) */
    /* set by titop_model_init: */
    int nq, nv;         /* configuration and speed counts of the joint (root rigid: 7, 6) */
    double D[36];       /* D_P = τ_BP^T diag(m 1, I_B) τ_BP (eq. 4) */
    double S[36];       /* motion subspace S (6 x nv, row-major with row stride nv) */
    double dscale;      /* largest |D_P| entry (a scale for the callers' singularity checks) */
    double RK[9], RK2[9]; /* revolute: P_{a0/b} K and P_{a0/b} K², K = (*r̃) (eq. 16) */
    int flex;           /* the titop_flex part it carries (model->flex[flex]), or -1 */
} titop_body;

/* A child port C of a body (point PC in the body frame). */
typedef struct titop_port {
    double pc[3]; /* vector P -> C, m */
    int child;    /* body hanging from it, or -1 (a loop closure side or an input wrench) */
    int w0;       /* child == -1: first input of the wrench applied on the body at C (6, R_a;
                     a flexible body's node port: its node frame N_j),
                     or -1 (a closure writes it, or none: zero) */
    int owner;    /* set by titop_model_init: the body the port belongs to */
} titop_port;

/* An external wrench input of a body, torque about the point. */
typedef struct titop_ext {
    double point[3]; /* vector P -> E, body frame, m */
    int inertial;    /* 1: given in R_i, 0: in R_a */
    int w0;          /* first input of its 6 values */
    int node;        /* set by titop_model_init: on a flexible body, the node k >= 1 of its
                        reduced model at the point (within 1e-9 of the body's size), where the
                        wrench acts (docs/flexible.md §6, eq. E4 with Ψ_k; inertial == 0: in the
                        node frame N_k's components); 0: on the (floating) frame, at the point */
} titop_ext;

/* Loop closure L^A_C (Fig. 14): spring-damper between two child ports. */
typedef struct titop_closure {
    int left, right; /* port indices */
    double K[36];    /* stiffness on [δp, δθ] */
    double Dm[36];   /* damping on [δv, δω] */
} titop_closure;

/* Joint law on 1-dof joint bodies: spring-damper, regularised Coulomb friction and, when
   `limited`, one-sided stops at `lower` and `upper` (q = q_src, q̇ its rate):
     τ_dst = -k (q - q_ref) - d q̇ - f_c tanh(q̇ / v_c) + τ_stop(q, q̇)
     τ_stop = k_s p + sat(-d_s q̇, k_s p)        p = lower - q > 0 (below the lower stop)
            = -(k_s p + sat(d_s q̇, k_s p))      p = q - upper > 0 (above the upper stop)
            = 0                                   otherwise, or not limited,
     sat(x, s) = min(max(x, -s), s).
   A stop is a stiff spring on the penetration p with damping on the joint's speed, the damping
   bounded by the spring's effort: the stop's effort lies in [0, 2 k_s p], it pushes out and
   never pulls, and τ is continuous (Lipschitz) in q and q̇, without an event at contact. A joint
   hitting a stop at speed v with d_s = 2 sqrt(k_s J) (critical, J its apparent inertia) enters
   it by 0.72 v sqrt(J / k_s) and leaves at 0.26 v (0.16 v at twice that damping). Friction:
   |τ_f| < f_c, τ_f = f_c tanh(q̇ / v_c) reaches 76 % of f_c at q̇ = v_c (N or N m; v_c m/s or
   rad/s). titop_check_law states the ranges. */
typedef struct titop_law {
    int src;    /* 1-dof joint body whose motion is read (forward: its states; inverse: its
                   imposed motion input) */
    int dst;    /* forward 1-dof joint body whose effort it adds to (to its effort input, if
                   any: a joint FMU carrying the law of its own joint, src = dst) */
    double k, d, qref;
    double friction;          /* f_c >= 0 (N or N m) */
    double friction_velocity; /* v_c > 0 (m/s or rad/s) */
    int limited;              /* 0: no stops (lower, upper, k_stop, d_stop unused) */
    double lower, upper;      /* stops (m or rad), lower <= upper */
    double k_stop, d_stop;    /* k_s > 0 when limited (N/m or N m/rad), d_s >= 0 */
} titop_law;

/* Values per law of a flat row (the Python side's law_doubles, the FMUs' parameters), in this
   order: k, d, q_ref, friction, friction_velocity, limited (0 or 1), lower, upper, k_stop,
   d_stop. */
#define TITOP_LAW_DOUBLES 10
void titop_law_from_row(const double *row, titop_law *law);
/* A joint law's values out of range: TITOP_LAW_OK, or the code of the first one, in row order
   (k, d, friction >= 0 and finite; q_ref finite; friction_velocity > 0 and finite; when limited:
   lower, upper finite, lower <= upper, k_stop > 0 and d_stop >= 0, finite).
   titop_law_parameter names the parameter of a code, titop_law_rule says what it must be. */
enum {
    TITOP_LAW_OK = 0,
    TITOP_LAW_K,
    TITOP_LAW_D,
    TITOP_LAW_QREF,
    TITOP_LAW_FRICTION,
    TITOP_LAW_FRICTION_VELOCITY,
    TITOP_LAW_LOWER,
    TITOP_LAW_UPPER, /* also: upper < lower */
    TITOP_LAW_K_STOP,
    TITOP_LAW_D_STOP
};
int titop_check_law(const titop_law *law);
const char *titop_law_parameter(int code);
const char *titop_law_rule(int code);

/* Mimic joint (a coupling, as Pinocchio 4's JointModelMimic and URDF's <mimic>): the follower's
   coordinate is q_f = r q_l + offset, r the multiplier. Both bodies are forward 1-dof joint
   bodies of the same kind (revolute or prismatic); a follower follows one leader, and a leader
   follows none (no chain, no cycle). The follower keeps its states: titop_eval enforces
   q̈_f = r q̈_l exactly with a constraint effort λ, applied as +λ on the follower and -r λ on
   the leader (the constraint's gradient: it does no work on motions that satisfy it), so that
   the follower's inertia is reflected into the leader's dynamics (the reduced dynamics
   J^T M J q̈_l = J^T (τ - c), J = [1; r], of Pinocchio's mimic model). The velocity and position
   relations are linear invariants of these dynamics, kept exactly by any Runge-Kutta method from
   consistent initial states: titop_mimic_project makes a state consistent. */
typedef struct titop_mimic {
    int follower, leader; /* body indices */
    double multiplier;    /* r, finite and non-zero */
    double offset;        /* m or rad, finite */
} titop_mimic;

/* The flexible part of a body (docs/flexible.md §3-§7; issue 34): a floating frame of reference
   at the body's reference point P, n elastic coordinates q with states [q, q̇] (2 n, from x0),
   whatever the body's joint (weld, revolute, prismatic, spherical, free, a free-floating or an
   imposed-motion root). Its mass matrix M(q) (docs eq. 5) adds to the body's rigid D_P through
   the condensed articulated inertia M_P* = M_rr - M_re Mee^-1 M_er (docs eq. T3, SPD as M(q)),
   and its bias b_P (docs §6) to the body's h, so it joins the same SPD recursion (seed eqs. 7,
   11, 18); q̈ by docs eq. (T2) in the forward sweep. The body's child port k sits at the
   reduced model's node k + 1 (node 0 is P; ports' pc = node_positions[k + 1]): the port frame
   N_j is at x_j(q) = r_j + Φt,j q, turned by exp(θ~), θ = Φr,j q, with exact rigid kinematics
   (twist X_j x'_P + Ψ_j q̇ in R_a components, X_j = τ(-x_j), Ψ_j = [Φt,j; J_l(θ) Φr,j]; docs
   §6 eq. N1); a child's motion vector and the wrench at the port are in N_j components, the
   wrench entering by docs eq. (E4) with Ψ_j. With children the sweep condenses the child
   subtrees into the elastic coordinates (Mee_eff = Mee + Σ Ψ_j^T Ma_j Ψ_j factored per
   evaluation, docs eq. T4); without, Mee's constant factors serve. External wrenches at
   points of the floating frame enter as for a rigid body. Not with mimic joints (refused).
   Load values of the geometric stiffness K_eff = Kee + Σ_c λ_c KG_c (docs eq. G2, §6), all
   exact: the centrifugal cases ω_i ω_j; ax, ay, az = components of a_P - g, a_P = v̇ + ω x v;
   alx, aly, alz = α; a node case (TITOP_FLEX_NODE) = the component of the wrench applied on the
   body at the node (R_a; moment about the node): external wrenches at the node and a known port
   wrench (input, closure) plus a tree child's, -Rt (Ma_j a_j + ba_j). Those known before the
   sweep (ω, the known wrenches) enter directly; v̇, α and the children's wrenches by passes:
   pass 0 without them, each next pass with the last one's, until their change moves the
   elastic forces by at most 1e-13 of their size (real and imaginary parts alike: complex-step
   exact). A pass is affine in those values y, Φ(y) = A y + b: when the plain passes do not
   settle fast (after 4, while their measured rate does not predict settling within dim + 1
   passes; at most 40), the exact solve (I - A) y = b, A probed column by column by one pass
   per iterated value (dim of them, all parts), LU with partial pivoting on real parts, then a
   pass with y and at most 4 of iterative refinement (docs/flexible.md §6 "The passes";
   titop_core.c flex_next). TITOP_UNSETTLED naming the body only if I - A is (near) singular
   or a value is not finite. Each pass holds the values fixed, so M_P* stays SPD; the passes share M(q), h and KG_c q (one evaluation of those), and
   a body without child ports re-solves only its elastic right-hand side. Exact at q = 0 in one
   pass (KG q = 0).
   Every array is the caller's (row-major, SI, R_a components), read only but Lee, which
   titop_model_init fills with the LDL^T factors of Mee (n x n, the caller's buffer). */
enum titop_flex_case {
    TITOP_FLEX_AX = 0, TITOP_FLEX_AY, TITOP_FLEX_AZ, TITOP_FLEX_ALX, TITOP_FLEX_ALY,
    TITOP_FLEX_ALZ, TITOP_FLEX_WXX, TITOP_FLEX_WYY, TITOP_FLEX_WZZ, TITOP_FLEX_WXY,
    TITOP_FLEX_WYZ, TITOP_FLEX_WXZ,
    TITOP_FLEX_ZERO = -1, /* a case whose load value the core leaves at zero */
    TITOP_FLEX_NODE = 12  /* + 6 (k - 1) + c: component c of [f; m] (fx, fy, fz, mx, my, mz)
                             of the wrench applied on the body at its node k >= 1, R_a
                             components, moment about the node (titopfmu/flex/fe.py
                             NODE_LOAD_COMPONENTS; k < nnodes) */
};
typedef struct titop_flex {
    int body;           /* the body carrying it */
    int n;              /* elastic coordinates, >= 1 */
    int x0;             /* first of its 2 n states [q, q̇] */
    int ncases;         /* geometric-stiffness load cases */
    const int *cases;   /* (ncases) enum titop_flex_case */
    const double *mass, *first_moment, *inertia; /* m (1), m c (3), J_P (3 x 3) */
    const double *Ct, *Cr;                       /* 3 x n each */
    const double *Mee, *Kee, *De;                /* n x n each */
    const double *J1;                            /* n x 3 x 3 (docs eq. 6) */
    const double *J2;                            /* n x n x 3 x 3 (docs eq. 7) */
    const double *Cr1;                           /* n x 3 x n (docs eq. 8) */
    const double *KG;                            /* ncases x n x n (docs eq. G2) */
    int nnodes;                                  /* nodes of interest k (root first), >= 1 +
                                                    the body's child ports */
    const double *node_positions;                /* k x 3: r_j (node 0: P, zero) */
    const double *node_shapes;                   /* k x 6 x n: [Φt,j; Φr,j] */
    double *Lee;                                 /* n x n: LDL^T of Mee, set by init */
} titop_flex;

/* Doubles of a flexible part's flat row, in this order: mass, first_moment (3), inertia (9), Ct
   (3 n), Cr (3 n), Mee, Kee, De (n n each), J1 (9 n), J2 (9 n n), Cr1 (3 n n), KG (c n n),
   node_positions (3 k), node_shapes (6 k n). */
size_t titop_flex_doubles(int n, int ncases, int nnodes);
/* Point f's arrays into row (titop_flex_doubles(f->n, f->ncases, f->nnodes) values; f->n,
   f->ncases, f->nnodes set) and Lee (n n). */
void titop_flex_from_row(titop_flex *f, const double *row, double *Lee);
/* A flexible part's arrays: TITOP_FLEX_OK or the code of the first one out of range
   (titop_flex_parameter names the array, "matrix 'Mee'", titop_flex_rule says what is wrong,
   in the words of titopfmu/flex/checks.py). Uses f->Lee as its work buffer (n n doubles). */
enum {
    TITOP_FLEX_OK = 0,
    TITOP_FLEX_SIZE,     /* n >= 1, ncases >= 0, nnodes >= 1 */
    TITOP_FLEX_MASS,     /* mass > 0, finite */
    TITOP_FLEX_FINITE,   /* first_moment, inertia, Ct, Cr, J1, J2, Cr1, KG, node arrays
                            finite */
    TITOP_FLEX_MEE_SYM,  /* Mee symmetric (1e-9 of its largest entry) */
    TITOP_FLEX_MEE_PD,   /* Mee positive definite (LDL^T pivots > 1e-12 of its largest entry) */
    TITOP_FLEX_KEE_SYM,  /* Kee symmetric */
    TITOP_FLEX_KEE_PSD,  /* Kee positive semi-definite (pivots of Kee + 1e-9 s I > 0) */
    TITOP_FLEX_DE,       /* De symmetric, finite */
    TITOP_FLEX_CASE      /* a load case code out of range */
};
int titop_check_flex(const titop_flex *f);
const char *titop_flex_parameter(int code);
const char *titop_flex_rule(int code);

typedef struct titop_model {
    int nbodies, nports, nexts, nclosures, nlaws;
    titop_body *bodies;
    titop_port *ports;
    titop_ext *exts;
    titop_closure *closures;
    titop_law *laws;
    int nx;  /* states */
    int nin; /* inputs */
    int nmimics;          /* mimic joints (0: none; mimics may then be NULL) */
    titop_mimic *mimics;
    int nflex;            /* flexible parts (0: none; flex may then be NULL) */
    titop_flex *flex;
} titop_model;

/* Make the state x (nx) consistent with the mimic joints: each follower's q and q̇ set from its
   leader's (q_f = r q_l + offset, q̇_f = r q̇_l). Call it on initial states and whenever a state
   is set from outside; the evaluation keeps it. */
void titop_mimic_project(const titop_model *model, double *x);

/* Fill the derived fields of every body (nq, nv, D, S). Returns TITOP_OK or TITOP_BAD_MODEL
   (then *bad_body says which body; message in msg, of msg_size bytes, if msg is not NULL). */
int titop_model_init(titop_model *model, int *bad_body, char *msg, size_t msg_size);

/* Number of real_t values of a data buffer for this model. */
size_t titop_data_size(const titop_model *model);

/* Layout of the data buffer (offsets and strides in real_t units). */
typedef struct titop_layout {
    size_t body_stride;   /* values per body record */
    size_t R, ip, tw;     /* P_{a/i} (9), [IP]_{R_a} (3), twist x'_P (6, R_a) */
    size_t acc;           /* ẋ'_P (6, R_a) */
    size_t acc_parent;    /* ẋ' of the parent port (6, R_b) */
    size_t alpha;         /* u̇ (nv; rigid root: ẋ'_P) */
    size_t effort;        /* joint effort used (nv): input, law, or (inverse) the result */
    size_t wrench_parent; /* W_{A/B,P} applied on the parent (6, R_b), full evaluations */
    size_t out;           /* ground / imposed: the external wrench at P (6, R_a) */
    size_t h;             /* bias h (6) */
    size_t E, p;          /* joint transform: P_{a/b} (9), p (3) */
    size_t ports;         /* first port record */
    size_t port_stride;   /* values per port record */
    size_t port_w;        /* wrench applied on the body at the port (6, R_a; a flexible body's
                             node port: its node frame N_j), full evaluations */
    size_t mimic;         /* with mimic joints (k > 0), after the ports: per body a response
                             record (24: ha, ba, acc, alpha of a unit constraint effort), then
                             G (k x k, its LDL^T), the residual / multipliers λ (k) and the
                             scratch of one response (k); 0 without */
    size_t mimic_stride;  /* values per body response record */
    size_t flex;          /* with flexible parts, after the mimic joints' records: per part a
                             record: M_P* (36), Y = Mee^-1 M_er (n x 6), z (n), q̈ (n), the
                             LDL^T of Mee_eff (n x n), per node k >= 1 J_l Φr,k (3 x n), then
                             the load values' block (titop_core.c flex_loads_block: 12 (nnodes
                             - 1) + 48 + 10 n + c (n + 2) values, c load cases); after
                             them the exact solve's work (titop_core.c flex_next: pass 0's
                             load values, 6 nnodes per part, then 6 d + d^2 values, d
                             iterated load values); 0 without */
} titop_layout;

void titop_data_layout(const titop_model *model, titop_layout *layout);

/* ------------------------------------------------------------------------------------------ */
/* Double precision. */

/* One evaluation at time t (s), state x (nx) and inputs in (nin): kinematics, loop closures,
   biases, both sweeps, and, if dx is not NULL, the state derivative dx (nx). With full != 0 also
   every wrench (wrench_parent, port_w, out). Returns a titop_status; on failure *bad_body (if
   not NULL) is the body concerned (-1 for none). With mimic joints, the efforts of a follower
   and of its leader (layout.effort) include the constraint's (+λ and -r λ): what each joint
   transmits; TITOP_SINGULAR naming a follower when the constraints' matrix J M^-1 J^T is
   singular. */
int titop_eval(const titop_model *model, double *data, double t, const double *x,
               const double *in, int full, double *dx, int *bad_body);

/* Outputs of an evaluated data buffer (full evaluation), as the ports carry them. */
void titop_body_motion(const titop_model *model, const double *data, int body, double *out);
void titop_port_motion(const titop_model *model, const double *data, int port, double *out);
void titop_joint_motion(const titop_model *model, const double *data, int body, double *out);
/* Blocks without a body: a loop closure (Fig. 14) from the motion vectors of its two sides, and
   the joint law (titop_law: spring-damper, friction, stops) on a joint motion [q̈, q̇, q]. */
void titop_closure_block(const double *K, const double *Dm, const double *ml,
                         const double *mr, double *wl, double *wr);
void titop_spring_damper_block(const titop_law *law, const double *m, double *tau);
/* A loop closure from its two sides' [x' (6), IP (3), P_{./i} (9)] (18 each, each side's frame,
   the object path), and their relative motion dx = [δp, δθ], dxd = [δv, δω] in the left frame. */
void titop_cut_block(const double *K, const double *Dm, const double *left, const double *right,
                     double *wl, double *wr);
void titop_cut_deflection(const double *left, const double *right, double *dx, double *dxd);

/* Spatial helpers (the conventions above). */
void titop_euler_dcm(const double theta[3], double out[9]);
void titop_dcm_euler(const double R[9], double out[3]);
void titop_euler_quaternion(const double theta[3], double out[4]);
void titop_quaternion_dcm(const double q[4], double out[9]);
void titop_quaternion_rate(const double q[4], const double omega[3], double out[4]);
void titop_rotation_vector(const double R[9], double out[3]); /* rotation vector of a DCM */
/* Parameter checks: no I/O, a code (TITOP_CHECK_*) and the quantities that failed; the callers
   (the Python blocks, the FMUs) word the message, naming the parameter the code names. The FMUs
   and the blocks refuse the same parameters. Every threshold is relative to the body's own
   scale (its inertia's largest entry, its mass, m |PB|^2), so a body scaled in mass and length
   passes or fails as the original does; absolute limits are only those of the floating-point
   range (TITOP_RANGE_MIN, TITOP_RANGE_MAX). */
enum {
    TITOP_CHECK_OK = 0,
    TITOP_CHECK_TRIANGLE = 1, /* a warning: principal moments with I1 + I2 < I3 */
    TITOP_CHECK_NOT_SYMMETRIC = 2,
    TITOP_CHECK_NOT_PSD = 3,
    TITOP_CHECK_NOT_PD = 4,
    TITOP_CHECK_SINGULAR = 5,
    /* from titop_check_dynamic_model and titop_check_axis only (the older checks return none
       of these): the parameter named is out of range */
    TITOP_CHECK_MASS = 6,          /* 'mass' */
    TITOP_CHECK_COM = 7,           /* 'com' */
    TITOP_CHECK_INERTIA_RANGE = 8, /* 'inertia' */
    TITOP_CHECK_AXIS = 9           /* a joint's 'axis' */
};
/* The range of D_P's entries (kg, kg m, kg m^2) and of the mass that the checks accept: a margin
   under the double range for the sums and products the equations form from them. */
#define TITOP_RANGE_MAX 1e300
#define TITOP_RANGE_MIN 1e-300
/* largest of |P^T P - 1| (entries) and |det P - 1|: 0 for a rotation matrix (dimensionless:
   the callers compare it with 1e-9); +inf for a matrix with a non-finite entry */
double titop_rotation_error(const double P[9]);
/* eigenvalues of a symmetric 3x3 matrix, ascending */
void titop_symmetric_eigenvalues(const double A[9], double e[3]);
/* an inertia at the centre of mass (kg m^2, row-major), relative to s, the larger of its own
   largest entry and `reference` (kg m^2, the body's m |PB|^2: its inertia about P, eq. 4; 0
   for none; ignored unless finite and >= 0): symmetric to 1e-9 s, principal moments (out,
   ascending) >= -1e-12 s (rounding noise of a point mass's zero inertia passes); > 1e-12 of
   its own largest entry when `definite` (a root: D_P is inverted, eq. 11; a zero inertia is
   not definite); the triangle inequality I1 + I2 >= I3 is only a warning (moments above
   1e-12 s). A non-finite entry: TITOP_CHECK_NOT_SYMMETRIC (moments NaN; the callers check
   finiteness first). */
int titop_check_inertia(const double inertia[9], int definite, double reference,
                        double moments[3]);
/* the apparent inertia J = S^T D S + diag(armature) (eq. 20 with the rotor inertia, nv x nv,
   out) of a joint with nv dof (S 6 x nv and D = D_P 6 x 6, row-major; armature: nv values, or
   NULL for none) of the body alone (a leaf; a body with children is judged with its subtree by
   the sweep, TITOP_SINGULAR): TITOP_CHECK_SINGULAR when a diagonal entry J_aa is at most 1e-12
   of the body's own inertia along that dof, |t_a|^2 |D_tt| + 2 |t_a| |w_a| |D_tw| +
   |w_a|^2 |D_ww| + armature_a (S's column a = [t_a; w_a], |.| Frobenius norms of D's 3x3
   blocks: m, m |PB| and about |I_B| + m |PB|^2, eq. 4), when an LDL^T pivot of J is at most
   1e-12 of its own diagonal entry, or when D, the armature or J is not finite (a massless body
   without armature: J = 0, singular) */
int titop_check_apparent_inertia(const double *S, const double D[36], int nv,
                                 const double *armature, double J[36]);
/* D_P = tau_BP^T diag(m 1, I_B) tau_BP (eq. 4, out unless NULL) of a body of mass m, inertia
   I_B and centre of mass PB (com), within the range: TITOP_CHECK_MASS (m not zero nor within
   [TITOP_RANGE_MIN, TITOP_RANGE_MAX]: m = 0, a massless joint body, is in range; the callers
   refuse it for a root), TITOP_CHECK_COM (PB not finite, or
   |PB|^2 above TITOP_RANGE_MAX), TITOP_CHECK_INERTIA_RANGE (an entry of I_B not finite or above
   TITOP_RANGE_MAX); then an entry of D_P above TITOP_RANGE_MAX (m |PB|, m |PB|^2, I_B +
   m |PB|^2) names the larger of its factors: 'inertia' if |I_B| >= m |PB|^2, else 'mass' if
   m >= |PB|^2 (SI), else 'com'. Checks no more of the inertia than that (titop_check_inertia). */
int titop_check_dynamic_model(double mass, const double inertia[9], const double com[3],
                              double D[36]);
/* a joint axis (any length, dimensionless): the unit vector along it (out), computed without
   overflow or underflow, or TITOP_CHECK_AXIS for a zero or non-finite axis */
int titop_check_axis(const double axis[3], double unit[3]);

/* Joint position output p (nv) from the joint configuration q (nq), and back. */
void titop_joint_position(int kind, const double *q, double *p);
void titop_joint_coordinates(int kind, const double *p, double *q);

/* One body on its own, step by step: the object path of titopfmu (each built-in Python block
   owns a one-body model, its parent port and child-port wrenches inputs, and gets its equations
   from these). Body i must have no tree child nor flexible part (titop_flex: the whole-model
   evaluation only, titop_eval). In call order:
   - block_kinematics: pose, twist, joint transform, velocity-product terms and joint
     configuration of body i (data) from its states x, its kinematic inputs (inverse joint
     motion, imposed motion vector) and, for a joint body, its parent port's [x' (6), IP (3),
     P_{b/i} (9)] in R_b (`parent`, 18; NULL: the parent motion input); writes each child port's
     [x', IP, P_{a/i}] (18 each, R_a) to `ports` unless NULL;
   - block_bias: its bias h (eqs. 7, 11, 13; external wrench inputs from in), or the caller
     writes its own h into the data buffer (layout.h);
   - block_map: its loop map (the affine form of titopfmu/blocks/loop_map.py) into `map`, of
     titop_map_size values: J (ka x ka), F (ka x 6), f0 (ka), PP (6 x 6), cP (6), CP (6n x 6),
     cC (6n), U (6n x ka), XP (ne x 6), XC (ne x 6n), xc (ne), XA (ne x ka), row-major; n child
     ports, ka internal accelerations (forward joint: nv, rigid root: 6, else 0), ne extra
     outputs (roots: 6, joints: nv); the effort of a forward joint from in;
   - block_respond: the body at given parent-port acceleration accp (6, R_b; NULL: the input) and
     child-port wrenches wc (6 n, R_a; NULL: the inputs): ẋ'_P, u̇ or the effort, the external
     wrench of a root and, with full, the wrench on the parent (data, layout); each child
     port's acceleration to accc (6 n) unless NULL. Returns a titop_status;
   - block_acceleration: ẋ'_P = G ẋ'_B + e + S u̇ of a joint body (eqs. 17, 24) from accp and
     alpha = u̇ (nv);
   - block_state_rate: its state derivative dx (from its state offset) with u̇ (rigid root:
     ẋ'_P) = alpha. */
size_t titop_map_size(const titop_model *model, int body, int *ka, int *ne);
void titop_block_kinematics(const titop_model *model, double *data, int body, const double *x,
                            const double *in, const double *parent, double *ports);
void titop_block_bias(const titop_model *model, double *data, int body, const double *in);
int titop_block_map(const titop_model *model, double *data, int body, const double *in,
                    double *map);
int titop_block_respond(const titop_model *model, double *data, int body, const double *in,
                        const double *accp, const double *wc, int full, double *accc);
void titop_block_acceleration(const titop_model *model, const double *data, int body,
                              const double *accp, const double *alpha, double *out);
void titop_block_state_rate(const titop_model *model, double *data, int body, const double *x,
                            const double *alpha, double *dx);

/* ------------------------------------------------------------------------------------------ */
/* Complex step: the same functions on double complex values (interleaved re, im pairs). */

int titopz_eval(const titop_model *model, double *zdata, double t, const double *zx,
                const double *zin, int full, double *zdx, int *bad_body);
void titopz_body_motion(const titop_model *model, const double *zdata, int body, double *zout);
void titopz_port_motion(const titop_model *model, const double *zdata, int port, double *zout);
void titopz_joint_motion(const titop_model *model, const double *zdata, int body, double *zout);
void titopz_closure_block(const double *K, const double *Dm, const double *zml,
                          const double *zmr, double *zwl, double *zwr);
void titopz_cut_block(const double *K, const double *Dm, const double *zleft,
                      const double *zright, double *zwl, double *zwr);
void titopz_spring_damper_block(const titop_law *law, const double *zm, double *ztau);

void titopz_block_kinematics(const titop_model *model, double *zdata, int body,
                             const double *zx, const double *zin, const double *zparent,
                             double *zports);
void titopz_block_bias(const titop_model *model, double *zdata, int body, const double *zin);
int titopz_block_map(const titop_model *model, double *zdata, int body, const double *zin,
                     double *zmap);
int titopz_block_respond(const titop_model *model, double *zdata, int body, const double *zin,
                         const double *zaccp, const double *zwc, int full, double *zaccc);
void titopz_block_acceleration(const titop_model *model, const double *zdata, int body,
                               const double *zaccp, const double *zalpha, double *zout);
void titopz_block_state_rate(const titop_model *model, double *zdata, int body,
                             const double *zx, const double *zalpha, double *zdx);

/* The complex step h of the seeded evaluations below: a derivative is Im(z) / TITOP_CSTEP_H. */
#define TITOP_CSTEP_H 1e-100

/* One complex-step evaluation at (t, x + i h vx, in + i h vin) (vx, vin either may be NULL for
   zero), the seeding of every exact directional derivative: zwork holds, as complex values,
   [zdata (titop_data_size), zx (nx), zin (nin), zdx (nx)], 2 * (titop_data_size + nx + nin + nx)
   doubles, and is left evaluated (with full, every wrench too), so that the titopz_* readers on
   zdata, and zdx, give the directional derivatives of every output and of dx along the seed
   (Im / TITOP_CSTEP_H). Returns a titop_status. */
int titop_eval_seeded(const titop_model *model, double *zwork, double t, const double *x,
                      const double *in, const double *vx, const double *vin, int full,
                      int *bad_body);

/* Directional derivatives of dx (nx) at (t, x, in) along (vx, vin) (either may be NULL for
   zero): jdx = ∂dx/∂x vx + ∂dx/∂in vin, exact to rounding (complex step, h = 1e-100).
   zwork holds 2 * (titop_data_size + nx + nin + nx) doubles. */
int titop_derivative_jvp(const titop_model *model, double *zwork, double t, const double *x,
                         const double *in, const double *vx, const double *vin, double *jdx,
                         int *bad_body);

#ifdef __cplusplus
}
#endif

#endif /* TITOP_H */
