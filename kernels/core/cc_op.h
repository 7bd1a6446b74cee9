/* The operation contract: a table of these is all the kernel knows about what
 * it measures.  One timing loop (cc_measure.c) drives every entry. */
#ifndef CC_OP_H
#define CC_OP_H

#include <stddef.h>
#include <stdint.h>

#include "cc_errors.h"
#include "cc_json.h"
#include "cc_core_distance.h"
#include "cc_settings.h"
#include "cc_timer.h"

enum { CC_TAG_DATA = 1, CC_TAG_ACK = 2, CC_TAG_READY = 3, CC_TAG_CLOCK = 4 };

/* start synchronisation of a collective repetition, a named choice */
typedef struct cc_sync {
    const char *name;
    /* before an untimed repetition (warm-up, verification) and, unless windowed,
     * before every timed one; NULL: none */
    void (*start)(MPI_Comm comm);
    /* timed repetitions start at common times on offset-corrected clocks
     * (cc_window.h) instead of after start() */
    int windowed;
} cc_sync;

extern const cc_sync cc_sync_barrier, cc_sync_none, cc_sync_window;
/* --sync auto: none for an op whose calls synchronise their ranks themselves
 * (cc_op.synchronizing), barrier for the others */
extern const cc_sync cc_sync_auto;

typedef enum { CC_SCOPE_PAIR, CC_SCOPE_ALL } cc_scope;

/* What every rank shares for the whole run. */
typedef struct cc_env {
    const cc_options *opt;
    cc_timer_info timer;
    int world_rank, world_size;
    MPI_Comm all, all_ctl;   /* every rank: measured traffic, control traffic */
    MPI_Comm pair, pair_ctl; /* ranks 0 and 1 (MPI_COMM_NULL elsewhere) */
    cc_core_distance *core_distance; /* the cache line ranks 0 and 1 time between points */
} cc_env;

struct cc_point;
struct cc_limits;

typedef struct cc_op {
    const char *name;
    const char *const *variants; /* NULL-terminated, or NULL when the op has none */
    cc_scope scope;
    int phases; /* separate measurements sharing the point's max-time */
    /* NULL when n can be used at p with this variant, else why not (written into why) */
    const char *(*check_size)(size_t n, int p, int variant, char *why, size_t whylen);
    /* allocate buffers and state; set timed, scale */
    void (*setup)(struct cc_point *pt);
    /* untimed step before each (batched) repetition; NULL: none */
    void (*before)(struct cc_point *pt);
    /* count back-to-back repetitions: only MPI calls */
    void (*run)(struct cc_point *pt, long count);
    /* put the verification pattern in send buffers, poison receive buffers */
    void (*fill)(struct cc_point *pt);
    /* 0 when the data received in one run is right, else 1 and err set */
    int (*check)(const struct cc_point *pt, char *err, size_t errlen);
    /* measurements derived from the main series (LogGP); NULL: none */
    void (*extra)(struct cc_point *pt, double main_median_us, cc_buf *json);
    void (*cleanup)(struct cc_point *pt);
    /* NULL, or a function saying why this library cannot run the op (an MPI-4
     * call in an MPI-3 library): the point is reported unsupported, not measured */
    const char *(*unsupported)(void);
    /* NULL when run reads pt->sbuf and pt->rbuf afresh each repetition, so
     * --cache cold can move them (cc_cache.c); else why the buffers are bound
     * at set-up (a persistent request, a window): such a point is unsupported cold */
    const char *bound_buffers;
    /* nonzero: measured as a process's first traffic (the runner puts the point
     * first in its job), so the library is warmed only after it (cc_prewarm.h) */
    int first_traffic;
    /* nonzero: no rank's call ends before every rank's call began (allreduce,
     * alltoall, allgather, reduce_scatter, barrier), so no rank's back-to-back
     * calls can run ahead of the others', as in a program's loop of them:
     * --sync auto times them back to back. A barrier before each would add the
     * barrier's own exit skew, which the rank it lets out first waits for
     * inside the call */
    int synchronizing;
    /* nonzero: each repetition is one call of run(pt, 1), never a batch of them (run
     * times a fixed burst of its own, which a batch would lengthen) */
    int unbatched;
} cc_op;

typedef struct cc_point {
    const cc_op *op;
    int variant;
    const char *variant_name; /* "" when the op has none */
    size_t n;
    int seed; /* the point's place in the plan: verification patterns differ per point */
    const cc_env *env;
    MPI_Comm comm, ctl; /* participants: measured traffic, control traffic */
    int rank, size;
    const cc_sync *sync; /* start synchronisation (cc_sync_none for point-to-point) */
    int timed;           /* this rank's durations count (max over ranks) */
    double scale;        /* one sample = duration / batch * scale */
    /* the CI is judged against max(median, this); 0 for all but rndv */
    double ci_reference_us;
    long batch;          /* set by the measurement loop */
    /* the point's limits (its plan entry's precision and fewest samples): an op's
     * further measurements of the point (LogGP's phases) take them too */
    const struct cc_limits *limits;
    unsigned char *sbuf, *rbuf;
    size_t sbuf_len, rbuf_len;
    size_t check_off, check_len; /* the received bytes this rank verifies, within rbuf */
    unsigned char ack[8];
    MPI_Request *reqs;
    int nreqs;
    MPI_Op reduce_op;
    long window;  /* messages per window of bw and bibw (not the sync window) */
    int64_t delay_ns;
    int inject_late;  /* tests: the last rank starts some windowed repetitions late */
    void *attached;
    int attached_len;
    /* set by an op's setup: rotate sbuf and rbuf over this many slots of warm
     * memory, each buffer --buffer-offset bytes into its pages, so a rank cycles
     * through that many pairs of buffers as a program with many does (0: none;
     * --cache cold's region takes precedence) */
    size_t rotate_slots;
    /* --cache cold, or rotate_slots: the region whose slots sbuf and rbuf rotate
     * over (cc_cache.c); region NULL when neither */
    struct cc_rotation {
        unsigned char *region, *own_sbuf, *own_rbuf;
        size_t stride, rbuf_at, offset, slots, slot;
        size_t region_bytes; /* kept after release, for the point's report */
    } rot;
} cc_point;

const cc_op *cc_op_find(const char *name);
/* -1 when the op has no such variant */
int cc_op_variant(const cc_op *op, const char *variant);
/* "a, b, c" for messages */
void cc_op_list(char *out, size_t outlen);
void cc_op_variant_list(const cc_op *op, char *out, size_t outlen);

#endif
