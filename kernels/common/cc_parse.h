/* The one bounded-number parser of commchar's C code (kernel options, the
 * applications' flags, the active-message layer's CC_AM_* variables).  It
 * needs neither MPI nor the rest of common/, so libccam.a links it alone.
 * Every refusal reads the same way:
 *     NAME: 'TEXT' is not a number in [LO, HI]
 *     NAME: 'TEXT' is not a whole number in [LO, HI]
 * with "(" for an open lower bound and ")" for an infinite upper one. */
#ifndef CC_PARSE_H
#define CC_PARSE_H

#include <stddef.h>

/* 0 and *out set when all of text is a finite number in [lo, hi] ((lo, hi]
 * when lo_open; hi may be INFINITY); else -1, *out untouched, err set */
int cc_parse_double(const char *name, const char *text, double lo, double hi, int lo_open,
                    double *out, char *err, size_t errlen);
/* the same for a whole number in [lo, hi], decimal digits only */
int cc_parse_long(const char *name, const char *text, long lo, long hi, long *out, char *err,
                  size_t errlen);

#endif
