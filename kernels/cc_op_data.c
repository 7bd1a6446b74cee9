/* Buffers, fill and verification of a point, shared by the operation files of
 * every transport: collectives over all ranks (root 0; blocks of n/p bytes)
 * and pairs of ranks exchanging n bytes.  Operation files use these instead of
 * each other. */
#include "cc_op_data.h"

#include <limits.h>
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

/* checked_len: the bytes of rbuf (from 0) this rank verifies */
void cc_coll_buffers(cc_point *pt, size_t slen, size_t rlen, size_t checked_len)
{
    pt->sbuf_len = slen;
    pt->rbuf_len = rlen;
    pt->sbuf = cc_xalloc_pages(slen);
    pt->rbuf = cc_xalloc_pages(rlen);
    pt->check_off = 0;
    pt->check_len = checked_len;
    pt->timed = 1;
    pt->scale = 1.0;
}

void cc_coll_cleanup(cc_point *pt)
{
    free(pt->sbuf);
    free(pt->rbuf);
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
    pt->sbuf_len = pt->rbuf_len = pt->n;
    pt->sbuf = cc_xalloc_pages(pt->n);
    pt->rbuf = cc_xalloc_pages(pt->n);
    pt->check_off = 0;
    pt->check_len = pt->n;
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
