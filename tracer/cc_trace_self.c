/* The tracer's own time per traced call that falls outside the calls' spans:
 * a wrapper's entry, its record and its return run between one call's t_end
 * and the next call's t_start, so a replay would take them for the program's
 * computation.  Measured once at MPI_Init on the real wrappers: rounds of a
 * blocking send, a non-blocking send and its wait, all to MPI_PROC_NULL on
 * MPI_COMM_SELF (the library returns at once), the loop's time less the
 * recorded spans, per wrapper; the median round goes into the header
 * (record_gap_ps) and the records are discarded. */
#include <stdlib.h>

#include "cc_trace.h"

enum { CCT_SELF_LOOPS = 64, CCT_SELF_WRAPPERS = 3, CCT_SELF_ROUNDS = 9 };

static int cct_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* one round: the tracer's ps per wrapper, or UINT64_MAX when it cannot be told */
static uint64_t cct_self_round(void)
{
    const uint32_t first = cct.n;
    const uint64_t req_ids = cct.next_req;
    char byte = 0;
    uint64_t t0 = cct_now();
    for (int i = 0; i < CCT_SELF_LOOPS; i++) {
        MPI_Request req;
        MPI_Send(&byte, 1, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF);
        MPI_Isend(&byte, 1, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    uint64_t t1 = cct_now();
    uint64_t spans = 0;
    uint32_t wrappers = 0;
    for (uint32_t i = first; i < cct.n; i++) {
        const cc_trace_record *r = cct.buf + i;
        if (r->call == CC_COMPLETE) continue; /* written by the same Wait */
        spans += r->t_end - r->t_start;
        wrappers++;
    }
    cct.n = first; /* the calibration's records are not the program's */
    cct.next_req = req_ids;
    if (wrappers != CCT_SELF_LOOPS * CCT_SELF_WRAPPERS || t1 - t0 < spans) return UINT64_MAX;
    return (t1 - t0 - spans) * 1000 / wrappers;
}

uint32_t cct_self_cost_ps(void)
{
    /* each round's records must fit without a flush */
    if (!cct.on || cct.cap - cct.n < 2 * CCT_SELF_LOOPS * CCT_SELF_WRAPPERS) return 0;
    uint64_t rounds[CCT_SELF_ROUNDS];
    int n = 0;
    for (int i = 0; i < CCT_SELF_ROUNDS; i++) {
        uint64_t ps = cct_self_round();
        if (ps != UINT64_MAX) rounds[n++] = ps;
    }
    if (n == 0) return 0;
    qsort(rounds, (size_t)n, sizeof rounds[0], cct_cmp_u64);
    uint64_t median = rounds[n / 2];
    return median > UINT32_MAX ? UINT32_MAX : (uint32_t)median;
}
