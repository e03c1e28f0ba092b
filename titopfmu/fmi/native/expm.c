/*
 * expm.c -- the matrix exponential by scaling and squaring with the [13/13] Padé approximant
 * (Higham, SIAM J. Matrix Anal. Appl. 26(4), 2005, the algorithm of MATLAB's expm and
 * scipy.linalg.expm), for the exact co-simulation step of the linear model (fmi2_state_space.c).
 * Row-major n x n matrices; the caller sizes every buffer (expm.h).
 */
#include <math.h>
#include <string.h>

#include "expm.h"

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
int expm(int n, double *M, double *E, double *work)
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
