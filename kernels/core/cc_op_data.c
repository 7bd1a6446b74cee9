/* Buffers, fill and verification of a point, shared by the operation files of
 * every transport: collectives over all ranks (root 0; blocks of n/p bytes)
 * and pairs of ranks exchanging n bytes.  Operation files use these instead of
 * each other. */
#include "cc_op_data.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_verify.h"

/* ---- collectives ------------------------------------------------------------ */

const char *cc_too_large(size_t n, size_t factor, char *why, size_t whylen)
{
    if (n > INT_MAX / (factor ? factor : 1)) {
        snprintf(why, whylen, "%zu bytes is too large for one call", n);
        return why;
    }
    return NULL;
}

const char *cc_size_zero(size_t n, int p, int variant, char *why, size_t whylen)
{
    (void)variant;
    (void)p;
    if (n != 0) {
        snprintf(why, whylen, "moves no data: the only size is 0");
        return why;
    }
    return NULL;
}

const char *cc_size_any(size_t n, int p, int variant, char *why, size_t whylen)
{
    (void)variant;
    (void)p;
    return cc_too_large(n, 1, why, whylen);
}

const char *cc_size_doubles(size_t n, int p, int variant, char *why, size_t whylen)
{
    (void)variant;
    (void)p;
    if (n % 8 != 0) {
        snprintf(why, whylen, "%zu bytes is not a whole number of doubles (multiple of 8)", n);
        return why;
    }
    return cc_too_large(n, 1, why, whylen);
}

void cc_bcast_setup(cc_point *pt)
{
    cc_coll_buffers(pt, 0, pt->n, pt->rank == 0 ? 0 : pt->n);
}

void *cc_buffer_alloc_at(size_t n, long offset)
{
    return (unsigned char *)cc_xalloc_pages(n + (size_t)offset) + offset;
}

void *cc_buffer_alloc(const cc_point *pt, size_t n)
{
    return cc_buffer_alloc_at(n, pt->env->opt->buffer_offset);
}

void *cc_recv_buffer_alloc(const cc_point *pt, size_t n)
{
    const cc_options *opt = pt->env->opt;
    return cc_buffer_alloc_at(n, opt->recv_offset >= 0 ? opt->recv_offset : opt->buffer_offset);
}

void cc_buffer_free(const cc_point *pt, void *buf)
{
    (void)pt;
    /* both offsets lie within the first page of the page-aligned block */
    if (buf) cc_free_pages((unsigned char *)buf - ((uintptr_t)buf & (CC_PAGE_BYTES - 1)));
}

/* checked_len: the bytes of rbuf (from 0) this rank verifies */
void cc_coll_buffers(cc_point *pt, size_t slen, size_t rlen, size_t checked_len)
{
    pt->sbuf_len = slen;
    pt->rbuf_len = rlen;
    pt->sbuf = cc_buffer_alloc(pt, slen);
    pt->rbuf = cc_recv_buffer_alloc(pt, rlen);
    pt->check_off = 0;
    pt->check_len = checked_len;
    pt->timed = 1;
    pt->scale = 1.0;
}

void cc_coll_cleanup(cc_point *pt)
{
    cc_buffer_free(pt, pt->sbuf);
    cc_buffer_free(pt, pt->rbuf);
    pt->sbuf = pt->rbuf = NULL;
    if (pt->reduce_op != MPI_OP_NULL && pt->reduce_op != MPI_SUM) CC_MPI(MPI_Op_free(&pt->reduce_op));
    pt->reduce_op = MPI_OP_NULL;
}

size_t cc_block(const cc_point *pt)
{
    return pt->n / (size_t)pt->size;
}

void cc_bcast_fill(cc_point *pt)
{
    if (pt->rank == 0)
        cc_fill_bytes(pt->rbuf, pt->n, 0, 0, pt->seed);
    else
        cc_poison_bytes(pt->rbuf, pt->n, 0, 0, pt->seed);
}

int cc_bcast_check(const cc_point *pt, char *err, size_t errlen)
{
    if (pt->rank == 0) return 0;
    return cc_check_bytes(pt->rbuf, pt->n, 0, 0, pt->seed, pt->rank, 0, err, errlen);
}

void cc_scatter_fill(cc_point *pt)
{
    cc_fill_bytes(pt->sbuf, pt->sbuf_len, 0, 0, pt->seed);
    cc_poison_bytes(pt->rbuf, cc_block(pt), 0, (size_t)pt->rank * cc_block(pt), pt->seed);
}

int cc_scatter_check(const cc_point *pt, char *err, size_t errlen)
{
    return cc_check_bytes(pt->rbuf, cc_block(pt), 0, (size_t)pt->rank * cc_block(pt), pt->seed, pt->rank,
                          0, err, errlen);
}

void cc_gather_fill(cc_point *pt)
{
    cc_fill_bytes(pt->sbuf, cc_block(pt), pt->rank, 0, pt->seed);
    for (int r = 0; r < pt->size; r++)
        cc_poison_bytes(pt->rbuf + (size_t)r * cc_block(pt), cc_block(pt), r, 0, pt->seed);
}

int cc_gather_check(const cc_point *pt, char *err, size_t errlen)
{
    if (pt->check_len == 0) return 0;
    const size_t b = cc_block(pt);
    for (int r = 0; r < pt->size; r++)
        if (cc_check_bytes(pt->rbuf + (size_t)r * b, b, r, 0, pt->seed, pt->rank, (size_t)r * b, err,
                           errlen))
            return 1;
    return 0;
}

int cc_contributor(const cc_point *pt)
{
    return pt->variant == CC_RED_SUM ? pt->rank : 0;
}

/* how many ranks' patterns the expected result sums (0: the nop vector) */
int cc_summed(const cc_point *pt, int nranks)
{
    return pt->variant == CC_RED_SUM ? nranks : 0;
}

void cc_reduction_fill(cc_point *pt)
{
    cc_fill_doubles((double *)(void *)pt->sbuf, pt->n / 8, cc_contributor(pt), 0, pt->seed);
    memset(pt->rbuf, 0xff, pt->rbuf_len); /* NaN: equal to nothing */
}

int cc_reduce_check(const cc_point *pt, char *err, size_t errlen)
{
    if (pt->check_len == 0) return 0;
    return cc_check_doubles((const double *)(const void *)pt->rbuf, pt->n / 8, cc_summed(pt, pt->size), 0,
                            pt->seed, pt->rank, err, errlen);
}

const char *cc_size_multiple_of_p(size_t n, int p, int variant, char *why, size_t whylen)
{
    (void)variant;
    if (n % (size_t)p != 0) {
        snprintf(why, whylen, "%zu bytes is not a multiple of p=%d", n, p);
        return why;
    }
    return cc_too_large(n, 1, why, whylen);
}

const char *cc_size_per_peer(size_t n, int p, int variant, char *why, size_t whylen)
{
    (void)variant;
    return cc_too_large(n, (size_t)p, why, whylen);
}

void cc_allgather_setup(cc_point *pt)
{
    cc_coll_buffers(pt, cc_block(pt), pt->n, pt->n);
}

void cc_alltoall_setup(cc_point *pt)
{
    const size_t total = pt->n * (size_t)pt->size;
    cc_coll_buffers(pt, total, total, total);
}

void cc_alltoall_fill(cc_point *pt)
{
    cc_fill_bytes(pt->sbuf, pt->sbuf_len, pt->rank, 0, pt->seed);
    for (int j = 0; j < pt->size; j++)
        cc_poison_bytes(pt->rbuf + (size_t)j * pt->n, pt->n, j, (size_t)pt->rank * pt->n, pt->seed);
}

int cc_alltoall_check(const cc_point *pt, char *err, size_t errlen)
{
    for (int j = 0; j < pt->size; j++)
        if (cc_check_bytes(pt->rbuf + (size_t)j * pt->n, pt->n, j, (size_t)pt->rank * pt->n, pt->seed,
                           pt->rank, (size_t)j * pt->n, err, errlen))
            return 1;
    return 0;
}

static void cc_nop_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)in;
    (void)inout;
    (void)len;
    (void)type;
}

/* sum: rank r contributes pattern(r, i); nop: every rank pattern(0, i), so
 * whichever operand the library keeps, the result is that vector */
void cc_reduction_setup(cc_point *pt, size_t rlen, size_t checked_len)
{
    cc_coll_buffers(pt, pt->n, rlen, checked_len);
    if (pt->variant == CC_RED_SUM)
        pt->reduce_op = MPI_SUM;
    else
        CC_MPI(MPI_Op_create(cc_nop_fn, 1, &pt->reduce_op));
}

void cc_allreduce_setup(cc_point *pt)
{
    cc_reduction_setup(pt, pt->n, pt->n);
}

/* what a non-blocking or persistent form shares with its blocking collective */
const cc_coll_data cc_bcast_data = {cc_size_any, cc_bcast_setup, cc_bcast_fill, cc_bcast_check,
                                    cc_coll_cleanup};
const cc_coll_data cc_allreduce_data = {cc_size_doubles, cc_allreduce_setup, cc_reduction_fill,
                                        cc_reduce_check, cc_coll_cleanup};
const cc_coll_data cc_alltoall_data = {cc_size_per_peer, cc_alltoall_setup, cc_alltoall_fill,
                                       cc_alltoall_check, cc_coll_cleanup};
const cc_coll_data cc_allgather_data = {cc_size_multiple_of_p, cc_allgather_setup, cc_gather_fill,
                                        cc_gather_check, cc_coll_cleanup};

/* ---- pairs ------------------------------------------------------------------ */

const char *cc_p2p_check_size(size_t n, int p, int variant, char *why, size_t whylen)
{
    (void)variant;
    if (p < 2) {
        snprintf(why, whylen, "needs at least 2 processes");
        return why;
    }
    if (n > INT_MAX) {
        snprintf(why, whylen, "%zu bytes is more than one message can carry", n);
        return why;
    }
    return NULL;
}

/* every rank sends its own pattern and expects its peer's in rbuf (repeated
 * per window of n bytes) */
void cc_pair_buffers(cc_point *pt)
{
    cc_pair_buffers_of(pt, pt->n);
}

void cc_pair_buffers_of(cc_point *pt, size_t len)
{
    pt->sbuf_len = pt->rbuf_len = len;
    pt->sbuf = cc_buffer_alloc(pt, len);
    pt->rbuf = cc_recv_buffer_alloc(pt, len);
    pt->check_off = 0;
    pt->check_len = len;
    pt->timed = pt->rank == 0;
    pt->scale = 0.5; /* half a round trip */
}

void cc_pair_fill(cc_point *pt)
{
    cc_fill_bytes(pt->sbuf, pt->n, pt->rank, 0, pt->seed);
    cc_poison_bytes(pt->rbuf, pt->n, 1 - pt->rank, 0, pt->seed);
}

int cc_pair_check(const cc_point *pt, char *err, size_t errlen)
{
    return cc_check_bytes(pt->rbuf, pt->n, 1 - pt->rank, 0, pt->seed, pt->rank, 0, err, errlen);
}
