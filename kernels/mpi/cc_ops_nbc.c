/* Non-blocking collectives with and without overlapped computation, as IMB-NBC
 * and OSU report them: ibcast, iallreduce (sum of doubles), ialltoall and
 * iallgather, n as for their blocking forms (kernel-protocol.md), with the
 * blocking forms' buffers, verification patterns and size rules.
 *
 * Variant `pure`: the call and MPI_Wait.  Variant `overlap`: the call, a busy
 * computation as long as the pure time (measured at set-up: the median of a
 * few pure calls, least over ranks), then MPI_Wait; the computation's length
 * is the point's `extra.compute_us`.  The overlap fraction
 * max(0, 1 - (t_overlap - compute) / t_pure) is derived from the two points
 * downstream, not here. */
#include <stdlib.h>
#include <string.h>

#include "cc_measure.h"
#include "cc_op_data.h"
#include "cc_ops_mpi.h"

enum { CC_NBC_PURE, CC_NBC_OVERLAP };
static const char *const cc_nbc_variants[] = {"pure", "overlap", NULL};
enum { CC_NBC_PROBE_WARM = 2, CC_NBC_PROBE_ROUND = 16, CC_NBC_PROBE_CALLS = 9 };

typedef void (*cc_nbc_start)(cc_point *pt, MPI_Request *req);

static void cc_ibcast_start(cc_point *pt, MPI_Request *req)
{
    CC_MPI(MPI_Ibcast(pt->rbuf, (int)pt->n, MPI_BYTE, 0, pt->comm, req));
}

static void cc_iallreduce_start(cc_point *pt, MPI_Request *req)
{
    CC_MPI(MPI_Iallreduce(pt->sbuf, pt->rbuf, (int)(pt->n / 8), MPI_DOUBLE, MPI_SUM, pt->comm, req));
}

static void cc_ialltoall_start(cc_point *pt, MPI_Request *req)
{
    CC_MPI(MPI_Ialltoall(pt->sbuf, (int)pt->n, MPI_BYTE, pt->rbuf, (int)pt->n, MPI_BYTE, pt->comm, req));
}

static void cc_iallgather_start(cc_point *pt, MPI_Request *req)
{
    const int b = (int)(pt->n / (size_t)pt->size);
    CC_MPI(MPI_Iallgather(pt->sbuf, b, MPI_BYTE, pt->rbuf, b, MPI_BYTE, pt->comm, req));
}

static void cc_busy_until(int64_t deadline)
{
    while (cc_now_ns() < deadline) {
    }
}

static void cc_nbc_run(cc_point *pt, long count, cc_nbc_start start)
{
    MPI_Request req;
    const int overlap = pt->variant == CC_NBC_OVERLAP;
    for (long k = 0; k < count; k++) {
        start(pt, &req);
        if (overlap) cc_busy_until(cc_now_ns() + pt->delay_ns);
        CC_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
}

static int cc_cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The computation's length: each rank's median pure time over
 * CC_NBC_PROBE_CALLS calls, each after a barrier, the least over ranks (on a
 * loaded machine one descheduled rank's median can be a time slice).  Before
 * them, pure calls back to back in rounds that double up to
 * CC_NBC_PROBE_ROUND, at least CC_NBC_PROBE_WARM and for as long as the
 * point's warm-up floor (the first point of a plan entry, or one whose
 * messages reach a page the entry's did not: cc_run.c).  Such a point's first
 * calls run cold (MPICH over UCX takes each eager message through the next of
 * 64 FIFO elements, and a larger message touches a new page of each), and a
 * control message after every call keeps some elements cold: after two warm
 * calls, or after 0.5 ms of calls each followed by an allreduce, an overlap
 * point of 5794 B computed 4.5 to 7 us where the same job's pure calls took
 * 1.1 (docs/kernel-protocol.md). */
static void cc_nbc_probe(cc_point *pt, cc_nbc_start start)
{
    double t[CC_NBC_PROBE_CALLS];
    MPI_Request req;
    const int64_t floor_ns = (int64_t)(pt->limits->warmup_min_time * 1e9), began = cc_now_ns();
    for (int round = 1, calls = 0, more = 1; more; round = round < CC_NBC_PROBE_ROUND ? 2 * round : round) {
        for (int i = 0; i < round; i++, calls++) {
            start(pt, &req);
            CC_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        const int mine = calls < CC_NBC_PROBE_WARM || cc_now_ns() - began < floor_ns;
        CC_MPI(MPI_Allreduce(&mine, &more, 1, MPI_INT, MPI_MAX, pt->ctl)); /* the same calls everywhere */
    }
    for (int i = 0; i < CC_NBC_PROBE_CALLS; i++) {
        CC_MPI(MPI_Barrier(pt->ctl));
        const int64_t t0 = cc_now_ns();
        start(pt, &req);
        CC_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        t[i] = (double)(cc_now_ns() - t0);
    }
    qsort(t, CC_NBC_PROBE_CALLS, sizeof t[0], cc_cmp_double);
    double mine = t[CC_NBC_PROBE_CALLS / 2], least = 0.0;
    CC_MPI(MPI_Allreduce(&mine, &least, 1, MPI_DOUBLE, MPI_MIN, pt->ctl));
    pt->delay_ns = (int64_t)least;
}

static void cc_nbc_extra(cc_point *pt, double main_median_us, cc_buf *json)
{
    (void)main_median_us;
    if (pt->rank != 0 || pt->variant != CC_NBC_OVERLAP) return;
    cc_buf_key(json, "compute_us");
    cc_buf_num(json, (double)pt->delay_ns / 1000.0);
}

/* The blocking form's set-up, fill and check read the variant as theirs (sum
 * for a reduction): they see variant 0 while they run. */
#define CC_WITH_BLOCKING_VARIANT(pt, call)  \
    do {                                    \
        const int cc_v_ = (pt)->variant;    \
        (pt)->variant = 0;                  \
        call;                               \
        (pt)->variant = cc_v_;              \
    } while (0)

#define CC_NBC_OP(opname, blocking, startfn)                                                                \
    static const char *cc_##opname##_size(size_t n, int p, int variant, char *why, size_t whylen)           \
    {                                                                                                     \
        (void)variant;                                                                                    \
        return cc_##blocking##_data.check_size(n, p, 0, why, whylen);                                         \
    }                                                                                                     \
    static void cc_##opname##_setup(cc_point *pt)                                                           \
    {                                                                                                     \
        CC_WITH_BLOCKING_VARIANT(pt, cc_##blocking##_data.setup(pt));                                         \
        if (pt->variant == CC_NBC_OVERLAP) cc_nbc_probe(pt, startfn);                                     \
    }                                                                                                     \
    static void cc_##opname##_run(cc_point *pt, long count) { cc_nbc_run(pt, count, startfn); }             \
    static void cc_##opname##_fill(cc_point *pt) { CC_WITH_BLOCKING_VARIANT(pt, cc_##blocking##_data.fill(pt)); } \
    static int cc_##opname##_check(const cc_point *pt, char *err, size_t errlen)                            \
    {                                                                                                     \
        cc_point copy = *pt;                                                                              \
        copy.variant = 0;                                                                                 \
        return cc_##blocking##_data.check(&copy, err, errlen);                                                \
    }                                                                                                     \
    static void cc_##opname##_cleanup(cc_point *pt) { CC_WITH_BLOCKING_VARIANT(pt, cc_##blocking##_data.cleanup(pt)); } \
    const cc_op cc_op_##opname = {                                                                          \
        .name = #opname, .variants = cc_nbc_variants, .scope = CC_SCOPE_ALL, .phases = 1,                   \
        .check_size = cc_##opname##_size, .setup = cc_##opname##_setup, .run = cc_##opname##_run,               \
        .fill = cc_##opname##_fill, .check = cc_##opname##_check, .extra = cc_nbc_extra,                      \
        .cleanup = cc_##opname##_cleanup,                                                                   \
    }

CC_NBC_OP(ibcast, bcast, cc_ibcast_start);
CC_NBC_OP(iallreduce, allreduce, cc_iallreduce_start);
CC_NBC_OP(ialltoall, alltoall, cc_ialltoall_start);
CC_NBC_OP(iallgather, allgather, cc_iallgather_start);
