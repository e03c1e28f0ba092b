/*
 * fmu_flex.c -- the flexible parts of an FMU's core model from its constant tables, shared by
 * the whole-model FMU (fmu_model.c) and the block FMU of a flexible block (fmu_block.c); included
 * by both (one compile unit each). The tables are those titopfmu.fmi.model.flex_tables writes
 * into fmu_config.h: per part its ints (titopfmu.core.model.flex_ints: body, n, first state,
 * number of load cases, number of nodes, the cases' codes) and its reduced model's row
 * (titopfmu.core.model.flex_row, the core's titop_flex_doubles layout; docs/flexible.md §7).
 * No physics here: the core's (titop_flex).
 */
#ifndef FMU_FLEX_C
#define FMU_FLEX_C

#include <stddef.h>
#include <string.h>

#include "fmu.h"
#include "titop.h"

/* The nflex parts into flex[] (arrays pointing into the constant row, Lee into lee, nlee
   doubles): parts[k] = (offset of its ints, of its row, of its Lee, the row's length), checked
   against the tables' sizes, the bodies (nbodies), the states (nx) and the core's row layout
   (titop_flex_doubles), so that a table that does not match is refused, never read out of
   bounds; body_name(i) names body i in the refusal (NULL: "the block"). */
static int fmu_flex_setup(FmuInstance *c, titop_flex *flex, int nflex, const int (*parts)[4],
                          const int *ints, size_t nints, const double *row, size_t nrow,
                          double *lee, size_t nlee, int nbodies, int nx,
                          const char *const *body_name)
{
    memset(flex, 0, (size_t)nflex * sizeof *flex);
    for (int k = 0; k < nflex; k++) {
        const int *p = parts[k];
        titop_flex *F = &flex[k];
        if (p[0] < 0 || (size_t)p[0] + 5 > nints)
            return fmu_refuse(c, "internal: flexible part %d out of its table", k);
        /* [body, n, x0, ncases, nnodes, case codes (ncases)] */
        const int *fi = ints + p[0];
        F->body = fi[0];
        F->n = fi[1];
        F->x0 = fi[2];
        F->ncases = fi[3];
        F->nnodes = fi[4];
        F->cases = fi + 5;
        if (F->body < 0 || F->body >= nbodies || F->n < 1 || F->ncases < 0 || F->nnodes < 1 ||
            (size_t)p[0] + 5 + (size_t)F->ncases > nints || F->x0 < 0 || F->x0 + 2 * F->n > nx ||
            p[1] < 0 || p[3] < 0 || (size_t)p[1] + (size_t)p[3] > nrow ||
            titop_flex_doubles(F->n, F->ncases, F->nnodes) != (size_t)p[3] || p[2] < 0 ||
            (size_t)p[2] + (size_t)F->n * (size_t)F->n > nlee)
            return fmu_refuse(c, "internal: the flexible part of '%s' does not match the "
                                 "core's layout (titop_flex_doubles): rebuild the FMU",
                              !body_name ? "the block"
                              : F->body >= 0 && F->body < nbodies ? body_name[F->body] : "?");
        titop_flex_from_row(F, row + p[1], lee + p[2]);
    }
    return FMU_OK;
}

#endif
