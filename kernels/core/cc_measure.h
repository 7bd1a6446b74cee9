/* The one measurement loop: warm-up, batching, chunks of timed repetitions,
 * the adaptive stopping rule, and verification outside the timed region. */
#ifndef CC_MEASURE_H
#define CC_MEASURE_H

#include "cc_op.h"

typedef struct cc_limits {
    double precision;
    long min_reps, max_reps;
    double max_time, warmup_time, batch_threshold, batch_min_us;
    double warmup_min_time; /* the warm-up ends once steady, but not before this */
    double warmup_round_time; /* a round of fewer than 8 calls is representative from this long */
    double sync_window_factor, sync_window_us; /* --sync window only */
} cc_limits;

/* The result, complete on rank 0 only (the other ranks keep the counters). */
typedef struct cc_series {
    double *samples_us; /* per repetition, in measurement order */
    double *sorted_us;
    long n, cap;
    long batch, warmup;
    double warmup_s;   /* the warm-up's seconds */
    int warmup_steady; /* 1: it ended settled, 0: at --warmup-time */
    double median_us, ci_rel;
    double tick_us; /* one timer tick in a sample's units: no CI is narrower than half of it */
    double precision; /* the target it was measured to */
    long min_reps;    /* the fewest samples it was allowed to stop with */
    int precision_met;
    const char *stop_reason; /* precision | max_reps | max_time | late */
    /* --sync window: the window, the clock offsets' round trip, the estimate, repetitions
     * discarded as late (on any rank) and how many of them were redone; a
     * point stops with stop_reason "late" when late reaches max_reps, or
     * min_reps once max_time has passed */
    int windowed;
    double window_us, clock_rtt_us;
    double estimate_us; /* the untimed runs' time of one batched repetition (0 with a fixed window) */
    long late, redone;
    /* rank 0, collectives: each rank's own median duration (us), so stragglers
     * and imbalance show beside the slowest-rank samples; NULL otherwise */
    double *rank_median_us;
    int ranks;
} cc_series;

void cc_limits_from_options(const cc_options *opt, int phases, cc_limits *lim);
/* every participant of pt calls this */
void cc_measure(cc_point *pt, const cc_limits *lim, cc_series *out);
void cc_series_free(cc_series *s);

/* Run one repetition on patterned data and check it.  When corrupt is set, one
 * received byte is flipped first.  Returns 1 when valid; on rank 0 err then
 * names the first failing rank's problem.  Every participant calls it. */
int cc_verify(cc_point *pt, int corrupt, char *err, size_t errlen);

#endif
