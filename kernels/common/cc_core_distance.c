#include "cc_core_distance.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "cc_errors.h"
#include "cc_timer.h"

enum {
    CC_DISTANCE_WARM = 4,     /* round trips before the timed ones: the line moves in */
    CC_DISTANCE_SAMPLES = 16, /* timed samples ... */
    CC_DISTANCE_TRIPS = 4,    /* ... of this many round trips each (the clock's cost spread thin) */
    CC_DISTANCE_SPINS = 4096, /* polls before yielding the core: ranks that share one still progress */
    CC_COPY_BYTES = 4096,     /* the copy: one page, from one buffer to the other, both in L1 */
    CC_COPY_SAMPLES = 9,      /* timed samples ... */
    CC_COPY_REPS = 16,        /* ... of this many copies each (the clock's 20 ns step spread thin) */
    CC_LINE_BYTES = 64
};

/* static, not from the heap: a traced program's buffers lie where they would without the probe */
static _Alignas(CC_LINE_BYTES) unsigned char cc_copy_buffers[2 * CC_COPY_BYTES];

void cc_core_distance_open(cc_core_distance *pl, MPI_Comm comm)
{
    memset(pl, 0, sizeof *pl);
    pl->node = MPI_COMM_NULL;
    pl->win = MPI_WIN_NULL;
    pl->side = -1;
    int rank;
    CC_MPI(PMPI_Comm_rank(comm, &rank));
    MPI_Comm two;
    CC_MPI(PMPI_Comm_split(comm, rank < 2 ? 0 : MPI_UNDEFINED, rank, &two));
    if (two == MPI_COMM_NULL) return;
    CC_MPI(PMPI_Comm_split_type(two, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &pl->node));
    CC_MPI(PMPI_Comm_free(&two));
    int size;
    CC_MPI(PMPI_Comm_size(pl->node, &size));
    if (size != 2) { /* ranks 0 and 1 on different hosts: no line to share */
        CC_MPI(PMPI_Comm_free(&pl->node));
        return;
    }
    CC_MPI(PMPI_Comm_rank(pl->node, &pl->side));
    void *base = NULL;
    CC_MPI(PMPI_Win_allocate_shared(pl->side == 0 ? 3 * CC_LINE_BYTES : 0, 1, MPI_INFO_NULL, pl->node, &base,
                                    &pl->win));
    MPI_Aint bytes;
    int unit;
    CC_MPI(PMPI_Win_shared_query(pl->win, 0, &bytes, &unit, &base));
    pl->line = (_Atomic long *)base;
    pl->peer_copy = (_Atomic long *)((unsigned char *)base + 2 * CC_LINE_BYTES);
    if (pl->side == 0) {
        atomic_store(pl->line, 0);
        atomic_store(pl->peer_copy, -1);
    }
    pl->copy = cc_copy_buffers;
    memset(pl->copy, 1, sizeof cc_copy_buffers);
    CC_MPI(PMPI_Barrier(pl->node));
}

/* wait until the line holds `value` */
static void cc_core_distance_await(const cc_core_distance *pl, long value)
{
    _Atomic long *line = pl->line;
    for (int spins = 0; atomic_load_explicit(line, memory_order_acquire) != value;)
        if (++spins == CC_DISTANCE_SPINS) {
            spins = 0;
            sched_yield();
        }
}

static void cc_core_distance_trip(cc_core_distance *pl)
{
    _Atomic long *line = pl->line;
    if (pl->side == 0) {
        atomic_store_explicit(line, ++pl->seq, memory_order_release);
        cc_core_distance_await(pl, ++pl->seq);
    } else {
        cc_core_distance_await(pl, ++pl->seq);
        atomic_store_explicit(line, ++pl->seq, memory_order_release);
    }
}

static int cc_core_distance_cmp(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* this rank's median time of one copy of CC_COPY_BYTES between its two buffers, ps */
static long cc_core_copy_ps(cc_core_distance *pl)
{
    unsigned char *from = pl->copy, *to = pl->copy + CC_COPY_BYTES;
    int64_t samples[CC_COPY_SAMPLES];
    memcpy(to, from, CC_COPY_BYTES); /* both buffers into the cache */
    for (int s = 0; s < CC_COPY_SAMPLES; s++) {
        const int64_t start = cc_now_ns();
        for (int i = 0; i < CC_COPY_REPS; i++) {
            memcpy(to, from, CC_COPY_BYTES);
            from[(size_t)i * CC_LINE_BYTES] ^= to[(size_t)(i + 1) * CC_LINE_BYTES]; /* each copy is used */
        }
        samples[s] = cc_now_ns() - start;
    }
    qsort(samples, CC_COPY_SAMPLES, sizeof samples[0], cc_core_distance_cmp);
    return (long)(samples[CC_COPY_SAMPLES / 2] * 1000 / CC_COPY_REPS);
}

cc_core_sample cc_core_distance_sample(cc_core_distance *pl)
{
    cc_core_sample none = {-1.0, -1.0};
    if (pl->side < 0) return none;
    /* both ranks copy at once; side 1's time is in place before its first trip below */
    const long copy_ps = cc_core_copy_ps(pl);
    if (pl->side == 1) atomic_store_explicit(pl->peer_copy, copy_ps, memory_order_release);
    for (int i = 0; i < CC_DISTANCE_WARM; i++) cc_core_distance_trip(pl);
    int64_t samples[CC_DISTANCE_SAMPLES];
    for (int s = 0; s < CC_DISTANCE_SAMPLES; s++) {
        const int64_t start = cc_now_ns();
        for (int i = 0; i < CC_DISTANCE_TRIPS; i++) cc_core_distance_trip(pl);
        samples[s] = cc_now_ns() - start;
    }
    if (pl->side != 0) return none;
    qsort(samples, CC_DISTANCE_SAMPLES, sizeof samples[0], cc_core_distance_cmp);
    const int mid = CC_DISTANCE_SAMPLES / 2;
    const long peer_ps = atomic_load_explicit(pl->peer_copy, memory_order_acquire);
    cc_core_sample out;
    out.rtt_ns = (double)(samples[mid - 1] + samples[mid]) / 2.0 / CC_DISTANCE_TRIPS;
    out.copy_ns = (double)(peer_ps > copy_ps ? peer_ps : copy_ps) * 1e-3;
    return out;
}

void cc_core_distance_close(cc_core_distance *pl)
{
    if (pl->side >= 0) { /* a line was shared; one never opened ({.side = -1}) has nothing to free */
        CC_MPI(PMPI_Win_free(&pl->win));
        CC_MPI(PMPI_Comm_free(&pl->node));
        pl->copy = NULL;
    }
    pl->side = -1;
}

static void cc_core_pair_json(cc_buf *b, const char *key, double before, double after)
{
    if (before < 0 || after < 0) return;
    cc_buf_key(b, key);
    cc_buf_printf(b, "[");
    cc_buf_num(b, before);
    cc_buf_printf(b, ",");
    cc_buf_num(b, after);
    cc_buf_printf(b, "]");
}

void cc_core_distance_json(cc_buf *b, cc_core_sample before, cc_core_sample after)
{
    cc_core_pair_json(b, "core_rtt_ns", before.rtt_ns, after.rtt_ns);
    cc_core_pair_json(b, "core_copy_ns", before.copy_ns, after.copy_ns);
}
