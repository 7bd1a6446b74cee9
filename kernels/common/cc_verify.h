/* Verification patterns: every byte or double depends on the sending rank, its
 * position and the point, so a misplaced, stale or wrong block is detected.
 * Doubles are small integers, so sums over ranks are exact. */
#ifndef CC_VERIFY_H
#define CC_VERIFY_H

#include <stddef.h>

/* buf[i] = pattern(src, first + i): byte pos of a message from rank src at the
 * point numbered seed is (251 pos + 13 (pos >> 8) + 97 src + 31 seed + 1) mod 256 */
void cc_fill_bytes(unsigned char *buf, size_t len, int src, size_t first, int seed);
/* the complement of the pattern: a receive that never happened cannot pass */
void cc_poison_bytes(unsigned char *buf, size_t len, int src, size_t first, int seed);
/* 0 when buf[i] == pattern(src, first + i) for all i < len; else 1 and err
 * names this rank (me), the byte index (from index_base), got and expected */
int cc_check_bytes(const unsigned char *buf, size_t len, int src, size_t first, int seed, int me,
                   size_t index_base, char *err, size_t errlen);
/* the same pattern over len bytes of payload laid out in blocks of `block` bytes every
 * `stride` (a strided datatype's buffer): payload byte i, pattern(src, i), lies at
 * i / block * stride + i % block; poison: its complement.  The check's err names the
 * payload index of the first wrong byte. */
void cc_fill_bytes_strided(unsigned char *buf, size_t len, size_t block, size_t stride, int src, int seed,
                           int poison);
int cc_check_bytes_strided(const unsigned char *buf, size_t len, size_t block, size_t stride, int src, int seed,
                           int me, char *err, size_t errlen);

double cc_pattern_double(int src, size_t pos, int seed);
void cc_fill_doubles(double *buf, size_t count, int src, size_t first, int seed);
/* expected element: the sum of pattern(r, first + i) over ranks r in [0, nranks),
 * or pattern(0, first + i) itself when nranks is 0 (every rank sent the same) */
int cc_check_doubles(const double *buf, size_t count, int nranks, size_t first, int seed, int me,
                     char *err, size_t errlen);

#endif
