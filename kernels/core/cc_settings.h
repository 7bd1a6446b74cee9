/* What to measure and how: the command line and plan as data, the cc_options
 * every operation sees (cc_options.c parses them; this header needs nothing
 * else, so the operation contract cc_op.h can include it). */
#ifndef CC_SETTINGS_H
#define CC_SETTINGS_H

#include <stddef.h>

struct cc_op;
struct cc_sync;

typedef struct cc_entry {
    const struct cc_op *op;
    int variant; /* index into op->variants, 0 when the op has none */
    size_t *sizes;
    size_t nsizes;
    double precision; /* > 0: this entry's own precision target, in place of --precision */
    long min_reps;    /* > 0: this entry's own fewest samples, in place of --min-reps */
} cc_entry;

typedef struct cc_options {
    const char *plan_text;
    cc_entry *entries;
    size_t nentries;
    double precision;
    long min_reps, max_reps;
    double max_time, warmup_time, warmup_min_time, batch_threshold;
    double batch_min_us; /* a batched sample spans at least this long */
    double warmup_round_time; /* a warm-up round of fewer than 8 calls is representative from this long */
    /* --warmup series: --warmup-min-time binds the first measured point of each
     * plan entry only; point: every point */
    int warmup_series;
    const struct cc_sync *sync;
    /* --sync window: the window is factor x an estimate of one
     * repetition, or sync_window_us when that is above 0 */
    double sync_window_factor, sync_window_us;
    long window;
    double rndv_delay_us;
    /* LogGP's overhead phases (PRTT(m,d,n), o_r) only below this many bytes; 0: every size */
    long loggp_overheads_below;
    int cache_cold;          /* --cache cold: buffers rotate over a region (cc_cache.c) */
    size_t cache_limit;      /* the most bytes a rank's region may take */
    size_t llc_bytes;        /* the last-level cache the region must exceed twice */
    const char *llc_source;  /* where llc_bytes came from */
    long buffer_offset;      /* message buffers start this many bytes into a page (cc_buffer_alloc) */
    long recv_offset;        /* receive buffers start this many bytes into one; -1: buffer_offset */
    int core_distance;       /* time ranks 0 and 1's cache line around every point (cc_core_distance.h) */
    int prewarm;             /* --prewarm on: the library's eager path warmed once, before the first point
                              * that does not measure first traffic (cc_prewarm.h) */
    int heap_steady;         /* --heap steady: glibc's malloc thresholds fixed (cc_heap.h) */
    int heap_held;           /* the thresholds were set (0 under --heap as-is or without glibc) */
} cc_options;

#endif
