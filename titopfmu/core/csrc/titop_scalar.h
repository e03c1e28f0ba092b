/*
 * titop_scalar.h -- the scalar type of one build of the core (internal).
 *
 * TITOP_COMPLEX = 0: real_t is double and the functions are titop_*.
 * TITOP_COMPLEX = 1: real_t is double complex and the functions are titopz_*. Every elementary
 * function is then its first-order extension f(a + ib) = f(a) + i b f'(a), which is what the
 * complex step needs (ib is ~1e-100: higher orders vanish), and branches read the real part.
 */
#ifndef TITOP_SCALAR_H
#define TITOP_SCALAR_H

#include <math.h>

#if TITOP_COMPLEX
#include <complex.h>
typedef double complex real_t;
#define TITOP_FN(name) titopz_##name
#define RE(x) creal(x)

/* a + i b without C11's CMPLX (a complex is an array of two doubles, C99 6.2.5) */
static inline real_t mkc(double a, double b)
{
    union {
        real_t z;
        double d[2];
    } u;
    u.d[0] = a;
    u.d[1] = b;
    return u.z;
}

static inline real_t r_sin(real_t x)
{
    double a = creal(x);
    return mkc(sin(a), cimag(x) * cos(a));
}
static inline real_t r_cos(real_t x)
{
    double a = creal(x);
    return mkc(cos(a), -cimag(x) * sin(a));
}
static inline real_t r_sqrt(real_t x)
{
    double s = sqrt(creal(x));
    return mkc(s, cimag(x) / (2.0 * s));
}
static inline real_t r_atan2(real_t y, real_t x)
{
    double a = creal(y), b = creal(x);
    return mkc(atan2(a, b), (b * cimag(y) - a * cimag(x)) / (a * a + b * b));
}
static inline real_t r_tanh(real_t x)
{
    double t = tanh(creal(x));
    return mkc(t, cimag(x) * (1.0 - t * t));
}
static inline int r_isfinite(real_t x) { return isfinite(creal(x)) && isfinite(cimag(x)); }

#else
typedef double real_t;
#define TITOP_FN(name) titop_##name
#define RE(x) (x)
#define r_sin sin
#define r_cos cos
#define r_sqrt sqrt
#define r_atan2 atan2
#define r_tanh tanh
#define r_isfinite(x) isfinite(x)
#endif

#endif /* TITOP_SCALAR_H */
