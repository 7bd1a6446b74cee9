#include "cc_parse.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int cc_parse_double(const char *name, const char *text, double lo, double hi, int lo_open,
                    double *out, char *err, size_t errlen)
{
    char *end = NULL;
    errno = 0;
    double v = text ? strtod(text, &end) : 0.0;
    int ok = text && end != text && *end == '\0' && errno == 0 && isfinite(v) && v <= hi &&
             (lo_open ? v > lo : v >= lo);
    if (!ok) {
        snprintf(err, errlen, "%s: '%s' is not a number in %s%g, %g%s", name, text ? text : "",
                 lo_open ? "(" : "[", lo, hi, isinf(hi) ? ")" : "]");
        return -1;
    }
    *out = v;
    return 0;
}

int cc_parse_long(const char *name, const char *text, long lo, long hi, long *out, char *err,
                  size_t errlen)
{
    char *end = NULL;
    errno = 0;
    long v = text ? strtol(text, &end, 10) : 0;
    if (!text || end == text || *end != '\0' || errno != 0 || v < lo || v > hi) {
        snprintf(err, errlen, "%s: '%s' is not a whole number in [%ld, %ld]", name,
                 text ? text : "", lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}
