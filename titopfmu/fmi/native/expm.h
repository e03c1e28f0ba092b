/*
 * expm.h -- the matrix exponential (expm.c).
 */
#ifndef EXPM_H
#define EXPM_H

#include <stddef.h>

/* the doubles of expm's workspace for n x n matrices: 7 matrices, then n pivots (ints, one
   double's room each) */
#define EXPM_WORK(n) (7 * (size_t)(n) * (size_t)(n) + (size_t)(n))

/* E = exp(M), n x n row-major; M is overwritten; work holds EXPM_WORK(n) doubles. Returns -1
   if M is not finite or the Padé denominator is singular. */
int expm(int n, double *M, double *E, double *work);

#endif
