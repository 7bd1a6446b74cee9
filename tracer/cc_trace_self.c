/* The tracer's own time per traced call that falls outside the calls' spans:
 * a wrapper's entry, its record and its return run between one call's t_end
 * and the next call's t_start, and so do the COMPLETE records a wait or test
 * writes after its span, one per request; a replay would take them for the
 * program's computation.  Measured once at MPI_Finalize, after the program's
 * last call (so that these MPI calls cannot move its heap: cc_trace_mem.c), on
 * the real wrappers, all to MPI_PROC_NULL on MPI_COMM_SELF (the library
 * returns at once), the loop's time less the recorded spans: rounds of
 * blocking sends give the time per wrapper, rounds of CCT_SELF_REQUESTS
 * non-blocking sends and their Waitall the time per COMPLETE record beyond
 * their wrappers', and rounds of an Allreduce and an Alltoall of one int on
 * MPI_COMM_SELF the time per blocking collective's wrapper (which sizes both
 * buffers and the communicator), each Waitall round taking off the wrapper
 * round measured just before it.  After one discarded round of each, the
 * median rounds go into the header (record_gap_ps, complete_gap_ps,
 * collective_gap_ps); the records are discarded. */
#include <stdlib.h>

#include "cc_trace.h"

enum { CCT_SELF_LOOPS = 64, CCT_SELF_REQUESTS = 8, CCT_SELF_ROUNDS = 9 };

static int cct_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* the loop's time less the spans of its records since `first` (ps), the records
 * counted; then the records are dropped (the calibration's are not the program's) */
static uint64_t cct_self_outside(uint32_t first, uint64_t req_ids, uint64_t t0, uint64_t t1,
                                 uint32_t *wrappers, uint32_t *completes)
{
    uint64_t spans = 0;
    *wrappers = *completes = 0;
    for (uint32_t i = first; i < cct.n; i++) {
        const cc_trace_record *r = cct.buf + i;
        if (r->call == CC_COMPLETE) { /* written by the Wait after its span */
            ++*completes;
            continue;
        }
        spans += r->t_end - r->t_start;
        ++*wrappers;
    }
    cct.n = first;
    cct.next_req = req_ids;
    return t1 - t0 < spans ? UINT64_MAX : (t1 - t0 - spans) * 1000;
}

/* one round of blocking sends: ps per wrapper, or UINT64_MAX when it cannot be told */
static uint64_t cct_self_wrapper_round(void)
{
    const uint32_t first = cct.n;
    const uint64_t req_ids = cct.next_req;
    char byte = 0;
    uint64_t t0 = cct_now();
    for (int i = 0; i < CCT_SELF_LOOPS; i++)
        MPI_Send(&byte, 1, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF);
    uint64_t t1 = cct_now();
    uint32_t wrappers, completes;
    uint64_t outside = cct_self_outside(first, req_ids, t0, t1, &wrappers, &completes);
    if (outside == UINT64_MAX || wrappers != CCT_SELF_LOOPS) return UINT64_MAX;
    return outside / wrappers;
}

/* one round of Isends and their Waitall: ps per COMPLETE record beyond its wrappers'
 * (`wrapper` each), or UINT64_MAX when it cannot be told */
static uint64_t cct_self_complete_round(uint64_t wrapper)
{
    const uint32_t first = cct.n;
    const uint64_t req_ids = cct.next_req;
    char byte = 0;
    MPI_Request reqs[CCT_SELF_REQUESTS];
    uint64_t t0 = cct_now();
    for (int i = 0; i < CCT_SELF_LOOPS / CCT_SELF_REQUESTS; i++) {
        for (int k = 0; k < CCT_SELF_REQUESTS; k++)
            MPI_Isend(&byte, 1, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, &reqs[k]);
        MPI_Waitall(CCT_SELF_REQUESTS, reqs, MPI_STATUSES_IGNORE);
    }
    uint64_t t1 = cct_now();
    uint32_t wrappers, completes;
    uint64_t outside = cct_self_outside(first, req_ids, t0, t1, &wrappers, &completes);
    if (outside == UINT64_MAX || completes != CCT_SELF_LOOPS ||
        wrappers != CCT_SELF_LOOPS / CCT_SELF_REQUESTS * (CCT_SELF_REQUESTS + 1))
        return UINT64_MAX;
    uint64_t theirs = wrapper * wrappers;
    return outside > theirs ? (outside - theirs) / completes : 0;
}

/* one round of Allreduce and Alltoall: ps per collective wrapper, or UINT64_MAX */
static uint64_t cct_self_collective_round(void)
{
    const uint32_t first = cct.n;
    const uint64_t req_ids = cct.next_req;
    int in = 1, out = 0;
    uint64_t t0 = cct_now();
    for (int i = 0; i < CCT_SELF_LOOPS / 2; i++) {
        MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
        MPI_Alltoall(&in, 1, MPI_INT, &out, 1, MPI_INT, MPI_COMM_SELF);
    }
    uint64_t t1 = cct_now();
    uint32_t wrappers, completes;
    uint64_t outside = cct_self_outside(first, req_ids, t0, t1, &wrappers, &completes);
    if (outside == UINT64_MAX || wrappers != CCT_SELF_LOOPS) return UINT64_MAX;
    return outside / wrappers;
}

static uint32_t cct_median_u32(uint64_t *rounds, int n)
{
    if (n == 0) return 0;
    qsort(rounds, (size_t)n, sizeof rounds[0], cct_cmp_u64);
    return rounds[n / 2] > UINT32_MAX ? UINT32_MAX : (uint32_t)rounds[n / 2];
}

void cct_self_cost_ps(uint32_t *per_wrapper, uint32_t *per_complete, uint32_t *per_collective)
{
    *per_wrapper = *per_complete = *per_collective = 0;
    /* each round's records must fit without a flush */
    if (!cct.on || cct.cap - cct.n < 2 * 2 * CCT_SELF_LOOPS) return;
    /* one round of each, discarded: the first calls after the buffer's flush run cold */
    uint64_t warm = cct_self_wrapper_round();
    if (warm != UINT64_MAX) (void)cct_self_complete_round(warm);
    (void)cct_self_collective_round();
    /* each round of Waitalls beside the round of wrappers just before it, whose time it
     * takes off: a drift of the machine's speed between rounds cancels */
    uint64_t wrappers[CCT_SELF_ROUNDS], completes[CCT_SELF_ROUNDS], rounds[CCT_SELF_ROUNDS];
    int nw = 0, nc = 0, n = 0;
    for (int i = 0; i < CCT_SELF_ROUNDS; i++) {
        uint64_t ps = cct_self_wrapper_round();
        if (ps == UINT64_MAX) continue;
        wrappers[nw++] = ps;
        uint64_t complete = cct_self_complete_round(ps);
        if (complete != UINT64_MAX) completes[nc++] = complete;
    }
    *per_wrapper = cct_median_u32(wrappers, nw);
    if (*per_wrapper == 0) return;
    *per_complete = cct_median_u32(completes, nc);
    for (int i = 0; i < CCT_SELF_ROUNDS; i++) {
        uint64_t ps = cct_self_collective_round();
        if (ps != UINT64_MAX) rounds[n++] = ps;
    }
    *per_collective = cct_median_u32(rounds, n);
}
