/* MPI-4 calls, where the library has them: persistent collectives (pbcast,
 * pallreduce: MPI_Bcast_init / MPI_Allreduce_init once per point, then
 * MPI_Start and MPI_Wait per call) and partitioned point-to-point
 * (partitioned: a ping-pong whose message of n bytes goes as 8 partitions,
 * MPI_Psend_init / MPI_Precv_init, MPI_Pready per partition).  n, buffers and
 * verification are those of bcast, allreduce (doubles, sum) and
 * pingpong.  Built against an MPI-3 library (Open MPI 4.1) the operations
 * exist but say they are unsupported, and no point is measured. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_op_data.h"
#include "cc_ops_mpi.h"
#include "cc_verify.h"

/* why --cache cold cannot move these buffers */
#define CC_PERSISTENT_BOUND "a persistent request binds the buffers once per point"

enum { CC_PARTITIONS = 8 };

static const char *cc_mpi4_missing(void)
{
#if MPI_VERSION >= 4
    return NULL;
#else
    static char cc_mpi4_why[160];
    snprintf(cc_mpi4_why, sizeof cc_mpi4_why,
             "needs MPI-4 (persistent collectives, partitioned communication); this library implements MPI %d.%d",
             MPI_VERSION, MPI_SUBVERSION);
    return cc_mpi4_why;
#endif
}

static const char *cc_pbcast_size(size_t n, int p, int variant, char *why, size_t whylen)
{
    (void)variant;
    return cc_size_any(n, p, 0, why, whylen);
}

static const char *cc_pallreduce_size(size_t n, int p, int variant, char *why, size_t whylen)
{
    (void)variant;
    return cc_size_doubles(n, p, 0, why, whylen);
}

static const char *cc_partitioned_size(size_t n, int p, int variant, char *why, size_t whylen)
{
    (void)variant;
    if (p < 2) {
        snprintf(why, whylen, "needs at least 2 processes");
        return why;
    }
    if (n % CC_PARTITIONS != 0 || n > (size_t)1 << 30) {
        snprintf(why, whylen, "%zu bytes is not %d equal partitions of a message up to 1 GiB", n, CC_PARTITIONS);
        return why;
    }
    return NULL;
}

static void cc_persistent_run(cc_point *pt, long count)
{
    for (long k = 0; k < count; k++) {
        CC_MPI(MPI_Start(&pt->reqs[0]));
        CC_MPI(MPI_Wait(&pt->reqs[0], MPI_STATUS_IGNORE));
    }
}

static void cc_persistent_free(cc_point *pt)
{
    for (int i = 0; i < pt->nreqs; i++)
        if (pt->reqs[i] != MPI_REQUEST_NULL) CC_MPI(MPI_Request_free(&pt->reqs[i]));
    free(pt->reqs);
    pt->reqs = NULL;
    pt->nreqs = 0;
}

static void cc_requests(cc_point *pt, int count)
{
    pt->nreqs = count;
    pt->reqs = cc_xmalloc((size_t)count * sizeof *pt->reqs);
    for (int i = 0; i < count; i++) pt->reqs[i] = MPI_REQUEST_NULL;
}

/* ---- persistent collectives ------------------------------------------------ */

static void cc_pbcast_setup(cc_point *pt)
{
    cc_bcast_setup(pt);
    cc_requests(pt, 1);
#if MPI_VERSION >= 4
    CC_MPI(MPI_Bcast_init(pt->rbuf, (int)pt->n, MPI_BYTE, 0, pt->comm, MPI_INFO_NULL, &pt->reqs[0]));
#endif
}

static void cc_pallreduce_setup(cc_point *pt)
{
    cc_coll_buffers(pt, pt->n, pt->n, pt->n);
    pt->reduce_op = MPI_SUM;
    cc_requests(pt, 1);
#if MPI_VERSION >= 4
    CC_MPI(MPI_Allreduce_init(pt->sbuf, pt->rbuf, (int)(pt->n / 8), MPI_DOUBLE, MPI_SUM, pt->comm, MPI_INFO_NULL,
                              &pt->reqs[0]));
#endif
}

static void cc_pbcast_fill(cc_point *pt) { cc_bcast_fill(pt); }
static int cc_pbcast_check(const cc_point *pt, char *err, size_t errlen) { return cc_bcast_check(pt, err, errlen); }
static void cc_pallreduce_fill(cc_point *pt) { cc_reduction_fill(pt); }
static int cc_pallreduce_check(const cc_point *pt, char *err, size_t errlen)
{
    return cc_reduce_check(pt, err, errlen);
}

static void cc_pbcast_cleanup(cc_point *pt)
{
    cc_persistent_free(pt);
    cc_coll_cleanup(pt);
}

static void cc_pallreduce_cleanup(cc_point *pt)
{
    cc_persistent_free(pt);
    cc_coll_cleanup(pt);
}

const cc_op cc_op_pbcast = {
    .name = "pbcast", .scope = CC_SCOPE_ALL, .phases = 1, .check_size = cc_pbcast_size,
    .setup = cc_pbcast_setup, .run = cc_persistent_run, .fill = cc_pbcast_fill, .check = cc_pbcast_check,
    .cleanup = cc_pbcast_cleanup, .unsupported = cc_mpi4_missing,
    .bound_buffers = CC_PERSISTENT_BOUND,
};

const cc_op cc_op_pallreduce = {
    .name = "pallreduce", .scope = CC_SCOPE_ALL, .phases = 1, .check_size = cc_pallreduce_size,
    .setup = cc_pallreduce_setup, .run = cc_persistent_run, .fill = cc_pallreduce_fill,
    .check = cc_pallreduce_check, .cleanup = cc_pallreduce_cleanup, .unsupported = cc_mpi4_missing,
    .bound_buffers = CC_PERSISTENT_BOUND,
};

/* ---- partitioned ping-pong: requests 0 send, 1 receive -------------------- */

static void cc_partitioned_setup(cc_point *pt)
{
    cc_pair_buffers(pt);
    cc_requests(pt, 2);
#if MPI_VERSION >= 4
    const MPI_Count part = (MPI_Count)(pt->n / CC_PARTITIONS);
    const int peer = 1 - pt->rank;
    CC_MPI(MPI_Psend_init(pt->sbuf, CC_PARTITIONS, part, MPI_BYTE, peer, CC_TAG_DATA, pt->comm, MPI_INFO_NULL,
                          &pt->reqs[0]));
    CC_MPI(MPI_Precv_init(pt->rbuf, CC_PARTITIONS, part, MPI_BYTE, peer, CC_TAG_DATA, pt->comm, MPI_INFO_NULL,
                          &pt->reqs[1]));
#endif
}

static void cc_partitioned_send(cc_point *pt)
{
    CC_MPI(MPI_Start(&pt->reqs[0]));
#if MPI_VERSION >= 4
    for (int i = 0; i < CC_PARTITIONS; i++) CC_MPI(MPI_Pready(i, pt->reqs[0]));
#endif
    CC_MPI(MPI_Wait(&pt->reqs[0], MPI_STATUS_IGNORE));
}

static void cc_partitioned_run(cc_point *pt, long count)
{
    for (long k = 0; k < count; k++) {
        CC_MPI(MPI_Start(&pt->reqs[1]));
        if (pt->rank == 0) {
            cc_partitioned_send(pt);
            CC_MPI(MPI_Wait(&pt->reqs[1], MPI_STATUS_IGNORE));
        } else {
            CC_MPI(MPI_Wait(&pt->reqs[1], MPI_STATUS_IGNORE));
            cc_partitioned_send(pt);
        }
    }
}

static void cc_partitioned_cleanup(cc_point *pt)
{
    cc_persistent_free(pt);
    cc_buffer_free(pt, pt->sbuf);
    cc_buffer_free(pt, pt->rbuf);
    pt->sbuf = pt->rbuf = NULL;
}

const cc_op cc_op_partitioned = {
    .name = "partitioned", .scope = CC_SCOPE_PAIR, .phases = 1, .check_size = cc_partitioned_size,
    .setup = cc_partitioned_setup, .run = cc_partitioned_run, .fill = cc_pair_fill,
    .check = cc_pair_check, .cleanup = cc_partitioned_cleanup, .unsupported = cc_mpi4_missing,
    .bound_buffers = CC_PERSISTENT_BOUND,
};
