/* Collective operations over all ranks (root 0).  n follows models.md section
 * 2; check_size rejects an n the operation cannot use at p. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_op_data.h"
#include "cc_ops_mpi.h"
#include "cc_verify.h"

static const char *const cc_reduction_variants[] = {"sum", "nop", NULL};

/* ---- sizes ---------------------------------------------------------------- */

static const char *cc_size_doubles_per_rank(size_t n, int p, int variant, char *why, size_t whylen)
{
    (void)variant;
    if (n % (8 * (size_t)p) != 0) {
        snprintf(why, whylen, "%zu bytes is not a multiple of 8p=%d", n, 8 * p);
        return why;
    }
    return cc_too_large(n, 1, why, whylen);
}

/* ---- barrier --------------------------------------------------------------- */

static void cc_barrier_setup(cc_point *pt)
{
    cc_coll_buffers(pt, 0, 0, 0);
}

static void cc_barrier_run(cc_point *pt, long count)
{
    for (long k = 0; k < count; k++) CC_MPI(MPI_Barrier(pt->comm));
}

const cc_op cc_op_barrier = {
    .name = "barrier", .scope = CC_SCOPE_ALL, .phases = 1, .check_size = cc_size_zero,
    .setup = cc_barrier_setup, .run = cc_barrier_run, .cleanup = cc_coll_cleanup,
    .synchronizing = 1,
};

/* ---- bcast ----------------------------------------------------------------- */

static void cc_bcast_run(cc_point *pt, long count)
{
    for (long k = 0; k < count; k++) CC_MPI(MPI_Bcast(pt->rbuf, (int)pt->n, MPI_BYTE, 0, pt->comm));
}

const cc_op cc_op_bcast = {
    .name = "bcast", .scope = CC_SCOPE_ALL, .phases = 1, .check_size = cc_size_any,
    .setup = cc_bcast_setup, .run = cc_bcast_run, .fill = cc_bcast_fill, .check = cc_bcast_check,
    .cleanup = cc_coll_cleanup,
};

/* ---- scatter: the root's vector pattern(0, i); rank r gets cc_block r ------- */

static void cc_scatter_setup(cc_point *pt)
{
    cc_coll_buffers(pt, pt->n, cc_block(pt), cc_block(pt));
}

static void cc_scatter_run(cc_point *pt, long count)
{
    const int b = (int)cc_block(pt);
    for (long k = 0; k < count; k++)
        CC_MPI(MPI_Scatter(pt->sbuf, b, MPI_BYTE, pt->rbuf, b, MPI_BYTE, 0, pt->comm));
}

const cc_op cc_op_scatter = {
    .name = "scatter", .scope = CC_SCOPE_ALL, .phases = 1, .check_size = cc_size_multiple_of_p,
    .setup = cc_scatter_setup, .run = cc_scatter_run, .fill = cc_scatter_fill, .check = cc_scatter_check,
    .cleanup = cc_coll_cleanup,
};

/* ---- gather, allgather: rank r contributes pattern(r, j) ------------------ */

static void cc_gather_setup(cc_point *pt)
{
    cc_coll_buffers(pt, cc_block(pt), pt->n, pt->rank == 0 ? pt->n : 0);
}

static void cc_gather_run(cc_point *pt, long count)
{
    const int b = (int)cc_block(pt);
    for (long k = 0; k < count; k++)
        CC_MPI(MPI_Gather(pt->sbuf, b, MPI_BYTE, pt->rbuf, b, MPI_BYTE, 0, pt->comm));
}

static void cc_allgather_run(cc_point *pt, long count)
{
    const int b = (int)cc_block(pt);
    for (long k = 0; k < count; k++)
        CC_MPI(MPI_Allgather(pt->sbuf, b, MPI_BYTE, pt->rbuf, b, MPI_BYTE, pt->comm));
}

const cc_op cc_op_gather = {
    .name = "gather", .scope = CC_SCOPE_ALL, .phases = 1, .check_size = cc_size_multiple_of_p,
    .setup = cc_gather_setup, .run = cc_gather_run, .fill = cc_gather_fill, .check = cc_gather_check,
    .cleanup = cc_coll_cleanup,
};

const cc_op cc_op_allgather = {
    .name = "allgather", .scope = CC_SCOPE_ALL, .phases = 1, .check_size = cc_size_multiple_of_p,
    .setup = cc_allgather_setup, .run = cc_allgather_run, .fill = cc_gather_fill, .check = cc_gather_check,
    .cleanup = cc_coll_cleanup,
    .synchronizing = 1,
};

/* ---- alltoall: rank r's cc_block for j is pattern(r, j*n + k) ---------------- */

static void cc_alltoall_run(cc_point *pt, long count)
{
    const int n = (int)pt->n;
    for (long k = 0; k < count; k++)
        CC_MPI(MPI_Alltoall(pt->sbuf, n, MPI_BYTE, pt->rbuf, n, MPI_BYTE, pt->comm));
}

const cc_op cc_op_alltoall = {
    .name = "alltoall", .scope = CC_SCOPE_ALL, .phases = 1, .check_size = cc_size_per_peer,
    .setup = cc_alltoall_setup, .run = cc_alltoall_run, .fill = cc_alltoall_fill, .check = cc_alltoall_check,
    .cleanup = cc_coll_cleanup,
    .synchronizing = 1,
};

/* ---- reductions: sum of doubles, or an empty commutative operation -------- */

static void cc_reduce_setup(cc_point *pt)
{
    cc_reduction_setup(pt, pt->n, pt->rank == 0 ? pt->n : 0);
}

static void cc_reduce_scatter_setup(cc_point *pt)
{
    cc_reduction_setup(pt, cc_block(pt), cc_block(pt));
}

static void cc_reduce_run(cc_point *pt, long count)
{
    for (long k = 0; k < count; k++)
        CC_MPI(MPI_Reduce(pt->sbuf, pt->rbuf, (int)(pt->n / 8), MPI_DOUBLE, pt->reduce_op, 0, pt->comm));
}

static void cc_allreduce_run(cc_point *pt, long count)
{
    for (long k = 0; k < count; k++)
        CC_MPI(MPI_Allreduce(pt->sbuf, pt->rbuf, (int)(pt->n / 8), MPI_DOUBLE, pt->reduce_op, pt->comm));
}

static void cc_scan_run(cc_point *pt, long count)
{
    for (long k = 0; k < count; k++)
        CC_MPI(MPI_Scan(pt->sbuf, pt->rbuf, (int)(pt->n / 8), MPI_DOUBLE, pt->reduce_op, pt->comm));
}

static void cc_reduce_scatter_run(cc_point *pt, long count)
{
    const int per_rank = (int)(cc_block(pt) / 8);
    for (long k = 0; k < count; k++)
        CC_MPI(MPI_Reduce_scatter_block(pt->sbuf, pt->rbuf, per_rank, MPI_DOUBLE, pt->reduce_op,
                                        pt->comm));
}

static int cc_scan_check(const cc_point *pt, char *err, size_t errlen)
{
    return cc_check_doubles((const double *)(const void *)pt->rbuf, pt->n / 8, cc_summed(pt, pt->rank + 1),
                            0, pt->seed, pt->rank, err, errlen);
}

static int cc_reduce_scatter_check(const cc_point *pt, char *err, size_t errlen)
{
    const size_t per_rank = cc_block(pt) / 8;
    return cc_check_doubles((const double *)(const void *)pt->rbuf, per_rank, cc_summed(pt, pt->size),
                            (size_t)pt->rank * per_rank, pt->seed, pt->rank, err, errlen);
}

const cc_op cc_op_reduce = {
    .name = "reduce", .variants = cc_reduction_variants, .scope = CC_SCOPE_ALL, .phases = 1,
    .check_size = cc_size_doubles, .setup = cc_reduce_setup, .run = cc_reduce_run, .fill = cc_reduction_fill,
    .check = cc_reduce_check, .cleanup = cc_coll_cleanup,
};

const cc_op cc_op_allreduce = {
    .name = "allreduce", .variants = cc_reduction_variants, .scope = CC_SCOPE_ALL, .phases = 1,
    .check_size = cc_size_doubles, .setup = cc_allreduce_setup, .run = cc_allreduce_run,
    .fill = cc_reduction_fill, .check = cc_reduce_check, .cleanup = cc_coll_cleanup,
    .synchronizing = 1,
};

const cc_op cc_op_scan = {
    .name = "scan", .variants = cc_reduction_variants, .scope = CC_SCOPE_ALL, .phases = 1,
    .check_size = cc_size_doubles, .setup = cc_allreduce_setup, .run = cc_scan_run, .fill = cc_reduction_fill,
    .check = cc_scan_check, .cleanup = cc_coll_cleanup,
};

const cc_op cc_op_reduce_scatter = {
    .name = "reduce_scatter", .variants = cc_reduction_variants, .scope = CC_SCOPE_ALL, .phases = 1,
    .check_size = cc_size_doubles_per_rank, .setup = cc_reduce_scatter_setup, .run = cc_reduce_scatter_run,
    .fill = cc_reduction_fill, .check = cc_reduce_scatter_check, .cleanup = cc_coll_cleanup,
    .synchronizing = 1,
};
