/* Command line and plan: parsed identically on every rank, so all ranks agree
 * on what to measure (and on rejecting it) without talking to each other. */
#ifndef CC_OPTIONS_H
#define CC_OPTIONS_H

#include <stddef.h>

struct cc_op;
struct cc_sync;

typedef struct cc_entry {
    const struct cc_op *op;
    int variant; /* index into op->variants, 0 when the op has none */
    size_t *sizes;
    size_t nsizes;
} cc_entry;

typedef struct cc_options {
    const char *plan_text;
    cc_entry *entries;
    size_t nentries;
    double precision;
    long min_reps, max_reps;
    double max_time, warmup_time, warmup_min_time, batch_threshold;
    const struct cc_sync *sync;
    /* --sync window: the window is factor x an estimate of one
     * repetition, or sync_window_us when that is above 0 */
    double sync_window_factor, sync_window_us;
    long window;
    double rndv_delay_us;
    int cache_cold;          /* --cache cold: buffers rotate over a region (cc_cache.c) */
    size_t cache_limit;      /* the most bytes a rank's region may take */
    size_t llc_bytes;        /* the last-level cache the region must exceed twice */
    const char *llc_source;  /* where llc_bytes came from */
} cc_options;

typedef enum { CC_PARSE_OK, CC_PARSE_HELP, CC_PARSE_ERROR } cc_parse_status;

/* p: the number of processes, to reject sizes an operation cannot use */
cc_parse_status cc_options_parse(int argc, char **argv, int p, cc_options *opt, char *err,
                                 size_t errlen);
void cc_options_free(cc_options *opt);
extern const char cc_usage[];

#endif
