/*
 * fmu_checks.c -- the parameter checks of a body, worded once for every FMU that builds bodies
 * (fmu_block.c: one block; fmu_model.c: a whole model), included by both. The checks are the
 * core's (titop_check_*, titop.h: no I/O, codes and quantities); here only the words, the same
 * as the Python blocks' (titopfmu/blocks/base.py). A parameter is named by its FMU name: `pfx`
 * is "" for a block FMU ('inertia') or the block's name and a dot for a model FMU
 * ('pend1.inertia').
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmu.h"
#include "titop.h"

/* a 3x3 DCM: orthonormal, det +1 (the core's titop_rotation_error, as the Python blocks') */
static int check_dcm(FmuInstance *c, const char *name, const double *P)
{
    double err = titop_rotation_error(P);
    if (!(err <= 1e-9)) {
        fmu_refuse(c, "parameter '%s' is not a rotation matrix (|P^T P - 1|, |det P - 1| up to "
                      "%.3g)", name, err);
        return -1;
    }
    return 0;
}

/* a joint axis of any length, normalised by the core (titop_check_axis) into unit */
static int check_axis(FmuInstance *c, const char *name, const double *a, double unit[3])
{
    if (titop_check_axis(a, unit) != TITOP_CHECK_OK) {
        fmu_refuse(c, "parameter '%s': zero joint axis", name);
        return -1;
    }
    return 0;
}

/* a number to 6 significant digits as Python prints float(f"{x:.6g}") (base.py's significant):
   "3.0", "17.25", "1.5e-18", "1234570.0" */
static void py_float(double x, char *out, size_t size)
{
    char g[32];
    snprintf(g, sizeof g, "%.6g", x);
    double r = strtod(g, NULL), a = fabs(r);
    if (a >= 1e6 && a < 1e16) /* repr's fixed notation up to 1e16: an integer here */
        snprintf(g, sizeof g, "%.1f", r);
    else if (!strpbrk(g, ".e"))
        strcat(g, ".0");
    snprintf(out, size, "%s", g);
}

/* a finite double as Python's repr prints it: the shortest round trip, in fixed notation from
   1e-4 up to 1e16 (where printf's %g turns to exponents from its precision on: 100.0, not
   1e+02), ".0" on integers */
typedef struct {
    char s[40];
} PyRepr;
static PyRepr py_repr(double x)
{
    PyRepr r;
    int p = 1;
    for (; p <= 17; p++) {
        snprintf(r.s, sizeof r.s, "%.*g", p, x);
        if (strtod(r.s, NULL) == x)
            break;
    }
    double a = fabs(x);
    if (strchr(r.s, 'e') && a >= 1.0 && a < 1e16) /* an integer of at most p digits */
        snprintf(r.s, sizeof r.s, "%.0f", x);
    if (!strpbrk(r.s, ".en"))
        strcat(r.s, ".0");
    return r;
}

/* a vector of n doubles as Python prints a list of floats (repr) */
static void py_list(const double *v, int n, char *out, size_t size)
{
    size_t k = 0;
    out[0] = '\0';
    for (int i = 0; i < n && k + 1 < size; i++) {
        int w = snprintf(out + k, size - k, "%s%s%s", i ? ", " : "[", py_repr(v[i]).s,
                         i == n - 1 ? "]" : "");
        if (w < 0)
            break;
        k += (size_t)w;
    }
}

/* inertia at the centre of mass: the core's check (titop_check_inertia), the Python blocks'
   too: symmetric, positive semi-definite (definite for a root); principal moments that violate
   the triangle inequality are a logged warning; `reference` is the body's m |PB|^2 (rounding
   noise of a zero inertia is judged against it) */
static int check_inertia(FmuInstance *c, const char *pfx, const double *In, int definite,
                         double reference)
{
    double e[3];
    int code = titop_check_inertia(In, definite, reference, e);
    if (code == TITOP_CHECK_NOT_SYMMETRIC) {
        fmu_refuse(c, "parameter '%sinertia' is not symmetric", pfx);
        return -1;
    }
    if (code == TITOP_CHECK_NOT_PSD) {
        fmu_refuse(c, "parameter '%sinertia' is not positive semi-definite", pfx);
        return -1;
    }
    if (code == TITOP_CHECK_NOT_PD) {
        fmu_refuse(c, "parameter '%sinertia': a root body needs a positive-definite inertia (its "
                      "D_P is inverted, eq. 11)", pfx);
        return -1;
    }
    if (code == TITOP_CHECK_TRIANGLE) {
        char a[32], b[32], d[32];
        py_float(e[0], a, sizeof a);
        py_float(e[1], b, sizeof b);
        py_float(e[2], d, sizeof d);
        char blk[128];
        snprintf(blk, sizeof blk, "%s", *pfx ? pfx : c->name);
        if (*pfx) /* "pend1." -> "pend1" */
            blk[strlen(blk) - 1] = '\0';
        fmu_log(c, FMU_WARNING, "block '%s', parameter 'inertia': principal moments [%s, %s, %s] "
                              "violate the triangle inequality I1 + I2 >= I3 (no real mass "
                              "distribution has them); simulating anyway", blk, a, b, d);
    }
    return 0;
}

/* the body's dynamic model D_P (eq. 4) within the range the equations can represent: the core's
   check (titop_check_dynamic_model), the Python blocks' too (base.py's check_dynamic_model,
   same words), naming the parameter out of range or the larger factor of m |com|^2 */
static int check_dynamic_model(FmuInstance *c, const char *pfx, double m, const double *In,
                               const double *com)
{
    int code = titop_check_dynamic_model(m, In, com, NULL);
    if (code == TITOP_CHECK_OK)
        return 0;
    double cmax = 0.0, imax = 0.0, n = 0.0;
    for (int k = 0; k < 3; k++)
        cmax = fabs(com[k]) > cmax ? fabs(com[k]) : cmax;
    for (int k = 0; k < 3 && cmax > 0.0; k++)
        n += (com[k] / cmax) * (com[k] / cmax);
    double cn = cmax > 0.0 ? cmax * sqrt(n) : 0.0; /* |com| without overflow */
    for (int k = 0; k < 9; k++)
        imax = fabs(In[k]) > imax ? fabs(In[k]) : imax;
    char cs[160], product[200];
    py_list(com, 3, cs, sizeof cs);
    snprintf(product, sizeof product, "m |com|^2 (in D_P, eq. 4) = %s kg x (%.6g m)^2 is beyond "
             "%g kg m^2, the range the equations can represent", py_repr(m).s, cn,
             TITOP_RANGE_MAX);
    if (code == TITOP_CHECK_MASS) {
        if (!(m >= TITOP_RANGE_MIN && m <= TITOP_RANGE_MAX))
            fmu_refuse(c, "parameter '%smass': %s kg is outside the range the equations can "
                          "represent (%g to %g kg)", pfx, py_repr(m).s, TITOP_RANGE_MIN,
                       TITOP_RANGE_MAX);
        else
            fmu_refuse(c, "parameter '%smass': %s; com = %s", pfx, product, cs);
    } else if (code == TITOP_CHECK_COM) {
        if (!(cn * cn <= TITOP_RANGE_MAX))
            fmu_refuse(c, "parameter '%scom': %s: |com|^2 = (%.6g m)^2 is beyond %g m^2, the range "
                          "the equations can represent", pfx, cs, cn, TITOP_RANGE_MAX);
        else
            fmu_refuse(c, "parameter '%scom': %s: %s", pfx, cs, product);
    } else if (code == TITOP_CHECK_INERTIA_RANGE && !(imax <= TITOP_RANGE_MAX)) {
        fmu_refuse(c, "parameter '%sinertia': an entry of %.6g kg m^2 is beyond %g, the range the "
                      "equations can represent", pfx, imax, TITOP_RANGE_MAX);
    } else {
        fmu_refuse(c, "parameter '%sinertia': I + m |com|^2 (in D_P, eq. 4) is beyond %g kg m^2, "
                      "the range the equations can represent; mass %s kg, com %s",
                   pfx, TITOP_RANGE_MAX, py_repr(m).s, cs);
    }
    return -1;
}

/* a body's mass (positive for a root, >= 0 for a joint body: a massless link is valid when the
   subtree its joint moves has inertia about the joint), inertia (definite for a root) and
   dynamic model within range, in that order */
static int check_body(FmuInstance *c, const char *pfx, double m, const double *In,
                      const double *com, int root)
{
    if (root ? !(m > 0) : !(m >= 0)) {
        fmu_refuse(c, "parameter '%smass' = %s must be %s (kg)", pfx, fmu_num(m).s,
                   root ? "positive" : ">= 0");
        return -1;
    }
    double reference = m * (com[0] * com[0] + com[1] * com[1] + com[2] * com[2]);
    if (check_inertia(c, pfx, In, root, isfinite(reference) ? reference : 0.0))
        return -1;
    return check_dynamic_model(c, pfx, m, In, com);
}

/* a joint's rotor inertia: one value >= 0 per joint speed (the core's titop_model_init refuses
   the same), named as the Python blocks name it ('armature', 'armature[2]') */
static int check_armature(FmuInstance *c, const char *pfx, const titop_body *B, int nv)
{
    for (int k = 0; k < nv; k++)
        if (!(B->armature[k] >= 0.0)) {
            char idx[16] = "";
            if (nv > 1)
                snprintf(idx, sizeof idx, "[%d]", k + 1);
            fmu_refuse(c, "parameter '%sarmature%s' = %s must be >= 0 (kg m^2 or kg)", pfx, idx,
                       fmu_num(B->armature[k]).s);
            return -1;
        }
    return 0;
}

/* a forward joint on its own (a block FMU: its child ports are inputs) must see a non-singular
   inertia, its own and its armature (eq. 20): the core's check, the blocks' too (a Python block
   is judged so when it has no child port; a body with children, in a system, with the subtree
   its joint moves, as the model FMUs do) */
static int check_apparent_inertia(FmuInstance *c, const char *pfx, const titop_body *B)
{
    double J[36];
    if (B->nv && B->kind != TITOP_RIGID && !B->inverse &&
        titop_check_apparent_inertia(B->S, B->D, B->nv, B->armature, J) ==
            TITOP_CHECK_SINGULAR) {
        fmu_refuse(c, "parameter '%sinertia': the apparent inertia seen from the joint (eq. 20) "
                      "is singular (to 1e-12 of the body's own inertia): the body cannot be "
                      "moved by its joint (a massless body, or a point mass on its axis; give "
                      "it an inertia about the joint or an armature)", pfx);
        return -1;
    }
    return 0;
}
