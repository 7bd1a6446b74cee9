/* Neighbourhood collectives on a periodic two-dimensional Cartesian topology
 * of all ranks (MPI_Dims_create(p, 2)): every rank has four neighbours, in
 * MPI's order (-x, +x, -y, +y); with a dimension of size 1 or 2 a neighbour
 * appears more than once, as MPI defines.  n is the bytes a rank sends to
 * each neighbour: neighbor_allgather sends one block of n to all four,
 * neighbor_alltoall a different block of n to each. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "cc_op_data.h"
#include "cc_ops_mpi.h"
#include "cc_verify.h"

enum { CC_NB_DIMS = 2, CC_NB_COUNT = 2 * CC_NB_DIMS };

typedef struct cc_nb_state {
    MPI_Comm cart;
    int src[CC_NB_DIMS], dst[CC_NB_DIMS]; /* the -1 and +1 neighbour per dimension */
} cc_nb_state;

static const char *cc_nb_size(size_t n, int p, int variant, char *why, size_t whylen)
{
    (void)variant;
    (void)p;
    if (n > INT_MAX / CC_NB_COUNT) {
        snprintf(why, whylen, "%zu bytes is too large for one call", n);
        return why;
    }
    return NULL;
}

static void cc_nb_setup(cc_point *pt, size_t slen)
{
    cc_nb_state *st = cc_xmalloc(sizeof *st);
    int dims[CC_NB_DIMS] = {0, 0}, periods[CC_NB_DIMS] = {1, 1};
    CC_MPI(MPI_Dims_create(pt->size, CC_NB_DIMS, dims));
    CC_MPI(MPI_Cart_create(pt->comm, CC_NB_DIMS, dims, periods, 0, &st->cart));
    for (int d = 0; d < CC_NB_DIMS; d++) CC_MPI(MPI_Cart_shift(st->cart, d, 1, &st->src[d], &st->dst[d]));
    pt->attached = st;
    pt->sbuf_len = slen;
    pt->rbuf_len = CC_NB_COUNT * pt->n;
    pt->sbuf = cc_buffer_alloc(pt, pt->sbuf_len);
    pt->rbuf = cc_recv_buffer_alloc(pt, pt->rbuf_len);
    pt->check_off = 0;
    pt->check_len = pt->rbuf_len;
    pt->timed = 1;
    pt->scale = 1.0;
}

static void cc_nb_allgather_setup(cc_point *pt) { cc_nb_setup(pt, pt->n); }
static void cc_nb_alltoall_setup(cc_point *pt) { cc_nb_setup(pt, CC_NB_COUNT * pt->n); }

static void cc_nb_cleanup(cc_point *pt)
{
    cc_nb_state *st = pt->attached;
    CC_MPI(MPI_Comm_free(&st->cart));
    free(st);
    cc_buffer_free(pt, pt->sbuf);
    cc_buffer_free(pt, pt->rbuf);
    pt->sbuf = pt->rbuf = NULL;
    pt->attached = NULL;
}

static void cc_nb_allgather_run(cc_point *pt, long count)
{
    const cc_nb_state *st = pt->attached;
    const int n = (int)pt->n;
    for (long k = 0; k < count; k++)
        CC_MPI(MPI_Neighbor_allgather(pt->sbuf, n, MPI_BYTE, pt->rbuf, n, MPI_BYTE, st->cart));
}

static void cc_nb_alltoall_run(cc_point *pt, long count)
{
    const cc_nb_state *st = pt->attached;
    const int n = (int)pt->n;
    for (long k = 0; k < count; k++)
        CC_MPI(MPI_Neighbor_alltoall(pt->sbuf, n, MPI_BYTE, pt->rbuf, n, MPI_BYTE, st->cart));
}

/* the neighbour whose data lands in receive block i, and (alltoall) the block
 * it sent: what it sent towards +d arrives from the -d side, and back */
static int cc_nb_source(const cc_nb_state *st, int i)
{
    return i % 2 == 0 ? st->src[i / 2] : st->dst[i / 2];
}

static void cc_nb_allgather_fill(cc_point *pt)
{
    const cc_nb_state *st = pt->attached;
    cc_fill_bytes(pt->sbuf, pt->n, pt->rank, 0, pt->seed);
    for (int i = 0; i < CC_NB_COUNT; i++)
        cc_poison_bytes(pt->rbuf + (size_t)i * pt->n, pt->n, cc_nb_source(st, i), 0, pt->seed);
}

static int cc_nb_allgather_check(const cc_point *pt, char *err, size_t errlen)
{
    const cc_nb_state *st = pt->attached;
    for (int i = 0; i < CC_NB_COUNT; i++)
        if (cc_check_bytes(pt->rbuf + (size_t)i * pt->n, pt->n, cc_nb_source(st, i), 0, pt->seed, pt->rank,
                           (size_t)i * pt->n, err, errlen))
            return 1;
    return 0;
}

/* block i of a sender is pattern(sender, i*n ...); a receiver's block i holds
 * the block its source sent in the opposite direction (i ^ 1) */
static void cc_nb_alltoall_fill(cc_point *pt)
{
    const cc_nb_state *st = pt->attached;
    cc_fill_bytes(pt->sbuf, pt->sbuf_len, pt->rank, 0, pt->seed);
    for (int i = 0; i < CC_NB_COUNT; i++)
        cc_poison_bytes(pt->rbuf + (size_t)i * pt->n, pt->n, cc_nb_source(st, i), (size_t)(i ^ 1) * pt->n,
                        pt->seed);
}

static int cc_nb_alltoall_check(const cc_point *pt, char *err, size_t errlen)
{
    const cc_nb_state *st = pt->attached;
    for (int i = 0; i < CC_NB_COUNT; i++)
        if (cc_check_bytes(pt->rbuf + (size_t)i * pt->n, pt->n, cc_nb_source(st, i), (size_t)(i ^ 1) * pt->n,
                           pt->seed, pt->rank, (size_t)i * pt->n, err, errlen))
            return 1;
    return 0;
}

const cc_op cc_op_neighbor_allgather = {
    .name = "neighbor_allgather", .scope = CC_SCOPE_ALL, .phases = 1, .check_size = cc_nb_size,
    .setup = cc_nb_allgather_setup, .run = cc_nb_allgather_run, .fill = cc_nb_allgather_fill,
    .check = cc_nb_allgather_check, .cleanup = cc_nb_cleanup,
};

const cc_op cc_op_neighbor_alltoall = {
    .name = "neighbor_alltoall", .scope = CC_SCOPE_ALL, .phases = 1, .check_size = cc_nb_size,
    .setup = cc_nb_alltoall_setup, .run = cc_nb_alltoall_run, .fill = cc_nb_alltoall_fill,
    .check = cc_nb_alltoall_check, .cleanup = cc_nb_cleanup,
};
