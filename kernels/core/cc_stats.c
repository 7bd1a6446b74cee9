#include "cc_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The 97.5% quantile of the standard normal, to the digits Python's statistics use
 * (commchar.measure.statistics.Z95): with 1.96 the ranks differed from n = 1666 on. */
#define CC_Z95 1.959963984540054

void cc_ci_ranks(size_t n, size_t *lo_rank, size_t *hi_rank)
{
    double root = CC_Z95 * sqrt((double)n);
    double lo = floor(((double)n - root) / 2.0);
    double hi = ceil(1.0 + ((double)n + root) / 2.0);
    if (lo < 1.0) lo = 1.0;
    if (hi > (double)n) hi = (double)n;
    *lo_rank = (size_t)lo;
    *hi_rank = (size_t)hi;
}

double cc_median_sorted(const double *sorted, size_t n)
{
    if (n == 0) return NAN;
    if (n % 2) return sorted[n / 2];
    return 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

cc_ci cc_median_ci(const double *sorted, size_t n)
{
    cc_ci ci = {NAN, NAN, NAN};
    if (n == 0) return ci;
    size_t lo, hi;
    cc_ci_ranks(n, &lo, &hi);
    ci.median = cc_median_sorted(sorted, n);
    ci.lo = sorted[lo - 1];
    ci.hi = sorted[hi - 1];
    return ci;
}

static int cc_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void cc_merge_chunk(double *sorted, size_t n_old, double *chunk, size_t k, double *scratch)
{
    qsort(chunk, k, sizeof *chunk, cc_cmp_double);
    size_t i = 0, j = 0, out = 0;
    while (i < n_old && j < k) scratch[out++] = sorted[i] <= chunk[j] ? sorted[i++] : chunk[j++];
    while (i < n_old) scratch[out++] = sorted[i++];
    while (j < k) scratch[out++] = chunk[j++];
    memcpy(sorted, scratch, out * sizeof *sorted);
}
