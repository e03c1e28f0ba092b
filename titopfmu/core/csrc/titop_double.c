/* titop_double.c -- the core on doubles (titop_* functions). */
#define TITOP_COMPLEX 0
#include "titop_core.c"
