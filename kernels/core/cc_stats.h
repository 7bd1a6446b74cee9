/* The statistics of the stopping rule: the median and its 95% confidence
 * interval by order statistics (binomial, normal approximation), kept cheap by
 * merging each new chunk into an already sorted copy of the samples. */
#ifndef CC_STATS_H
#define CC_STATS_H

#include <stddef.h>

typedef struct cc_ci {
    double median, lo, hi;
} cc_ci;

/* 1-based ranks of the CI bounds among n sorted samples, clamped to [1, n] */
void cc_ci_ranks(size_t n, size_t *lo_rank, size_t *hi_rank);
double cc_median_sorted(const double *sorted, size_t n);
cc_ci cc_median_ci(const double *sorted, size_t n);

/* sorted[0..n_old) is sorted; sort chunk[0..k) in place and merge it in, so
 * sorted[0..n_old+k) is sorted (scratch holds n_old + k doubles) */
void cc_merge_chunk(double *sorted, size_t n_old, double *chunk, size_t k, double *scratch);

#endif
