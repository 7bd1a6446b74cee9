#include "cc_verify.h"

#include <stdio.h>

unsigned char cc_pattern_byte(int src, size_t pos, int seed)
{
    size_t v = pos * 251u + (pos >> 8) * 13u + (size_t)src * 97u + (size_t)seed * 31u + 1u;
    return (unsigned char)(v & 0xffu);
}

void cc_fill_bytes(unsigned char *buf, size_t len, int src, size_t first, int seed)
{
    for (size_t i = 0; i < len; i++) buf[i] = cc_pattern_byte(src, first + i, seed);
}

void cc_poison_bytes(unsigned char *buf, size_t len, int src, size_t first, int seed)
{
    for (size_t i = 0; i < len; i++) buf[i] = (unsigned char)~cc_pattern_byte(src, first + i, seed);
}

int cc_check_bytes(const unsigned char *buf, size_t len, int src, size_t first, int seed, int me,
                   size_t index_base, char *err, size_t errlen)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char want = cc_pattern_byte(src, first + i, seed);
        if (buf[i] != want) {
            snprintf(err, errlen, "rank %d: byte %zu is 0x%02x, expected 0x%02x", me, index_base + i,
                     buf[i], want);
            return 1;
        }
    }
    return 0;
}

double cc_pattern_double(int src, size_t pos, int seed)
{
    return (double)(1 + src + (long)((pos * 7u + (size_t)seed * 3u) % 1000u));
}

void cc_fill_doubles(double *buf, size_t count, int src, size_t first, int seed)
{
    for (size_t i = 0; i < count; i++) buf[i] = cc_pattern_double(src, first + i, seed);
}

int cc_check_doubles(const double *buf, size_t count, int nranks, size_t first, int seed, int me,
                     char *err, size_t errlen)
{
    for (size_t i = 0; i < count; i++) {
        double want = 0.0;
        if (nranks == 0)
            want = cc_pattern_double(0, first + i, seed);
        for (int r = 0; r < nranks; r++) want += cc_pattern_double(r, first + i, seed);
        if (!(buf[i] == want)) {
            snprintf(err, errlen, "rank %d: element %zu is %.17g, expected %.17g", me, i, buf[i], want);
            return 1;
        }
    }
    return 0;
}
