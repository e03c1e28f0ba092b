/* titop_complex.c -- the core on double complex values (titopz_* functions, complex step). */
#define TITOP_COMPLEX 1
#include "titop_core.c"
