/* PVM's collectives over every rank, root 0, on the one timing loop.  n
 * follows models.md section 2 as for the MPI collectives.
 *
 *   pvm_mcast    the root packs n bytes (untimed) and pvm_mcast's them to the
 *                other p-1 tasks, which pvm_recv and unpack
 *   pvm_bcast    the same through the group library's pvm_bcast
 *   pvm_barrier  pvm_barrier of the whole group (n = 0)
 *   pvm_reduce   pvm_reduce of n/8 doubles to the root: sum (PvmSum) or nop (an
 *                empty function, to separate the computation t_c)
 *   pvm_gather   pvm_gather of n/p bytes from every rank
 *   pvm_scatter  pvm_scatter of n/p bytes to every rank
 *
 * Data are filled and checked as for the MPI collectives (cc_ops_coll.c).
 *
 * Messages are packed with PvmDataRaw: one machine's byte order, so the
 * collective's algorithm is measured, not XDR (pvm_pingpong:default has it). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_op_data.h"
#include "cc_ops_pvm.h"
#include "cc_pvm.h"

static const char *const cc_reduction_variants[] = {"sum", "nop", NULL};

static const int *cc_tids; /* the participants' task ids, by rank */

static const char *cc_size_check(size_t n, int p, size_t multiple, char *why, size_t whylen)
{
    if (multiple > 1 && n % multiple != 0) {
        snprintf(why, whylen, "%zu bytes is not a multiple of %zu", n, multiple);
        return why;
    }
    if (n > INT_MAX) {
        snprintf(why, whylen, "%zu bytes is too large for one call", n);
        return why;
    }
    (void)p;
    return NULL;
}

static const char *cc_pvm_size_any(size_t n, int p, int variant, char *why, size_t whylen)
{
    (void)variant;
    return cc_size_check(n, p, 1, why, whylen);
}

static const char *cc_size_per_rank(size_t n, int p, int variant, char *why, size_t whylen)
{
    (void)variant;
    return cc_size_check(n, p, (size_t)p, why, whylen);
}

static const char *cc_pvm_size_doubles(size_t n, int p, int variant, char *why, size_t whylen)
{
    (void)variant;
    return cc_size_check(n, p, 8, why, whylen);
}

/* every participant's task id first: the group is joined at the first collective */
static void cc_buffers(cc_point *pt, size_t slen, size_t rlen, size_t checked_len)
{
    cc_tids = cc_pvm_participants(pt);
    cc_coll_buffers(pt, slen, rlen, checked_len);
}

/* ---- pvm_mcast, pvm_bcast: the root's rbuf to every other rank's rbuf ----- */

static void cc_one_to_all_setup(cc_point *pt)
{
    cc_buffers(pt, 0, pt->n, pt->rank == 0 ? 0 : pt->n);
}

/* the root's message, packed before the timed region */
static void cc_one_to_all_before(cc_point *pt)
{
    if (pt->rank != 0) return;
    CC_PVM(pvm_initsend(PvmDataRaw));
    CC_PVM(pvm_pkbyte((char *)pt->rbuf, (int)pt->n, 1));
}

static void cc_receive_from_root(cc_point *pt, long count)
{
    for (long k = 0; k < count; k++) {
        CC_PVM(pvm_recv(cc_tids[0], CC_PVM_TAG_DATA));
        CC_PVM(pvm_upkbyte((char *)pt->rbuf, (int)pt->n, 1));
    }
}

static void cc_mcast_run(cc_point *pt, long count)
{
    if (pt->rank != 0) {
        cc_receive_from_root(pt, count);
        return;
    }
    for (long k = 0; k < count; k++)
        CC_PVM(pvm_mcast((int *)(cc_tids + 1), pt->size - 1, CC_PVM_TAG_DATA));
}

static void cc_bcast_run(cc_point *pt, long count)
{
    if (pt->rank != 0) {
        cc_receive_from_root(pt, count);
        return;
    }
    for (long k = 0; k < count; k++) CC_PVM(pvm_bcast(CC_PVM_GROUP, CC_PVM_TAG_DATA));
}

const cc_op cc_op_pvm_mcast = {
    .name = "pvm_mcast", .scope = CC_SCOPE_ALL, .phases = 1, .check_size = cc_pvm_size_any,
    .setup = cc_one_to_all_setup, .before = cc_one_to_all_before, .run = cc_mcast_run,
    .fill = cc_bcast_fill, .check = cc_bcast_check, .extra = cc_pvm_extra,
    .cleanup = cc_coll_cleanup,
};

const cc_op cc_op_pvm_bcast = {
    .name = "pvm_bcast", .scope = CC_SCOPE_ALL, .phases = 1, .check_size = cc_pvm_size_any,
    .setup = cc_one_to_all_setup, .before = cc_one_to_all_before, .run = cc_bcast_run,
    .fill = cc_bcast_fill, .check = cc_bcast_check, .extra = cc_pvm_extra,
    .cleanup = cc_coll_cleanup,
};

/* ---- pvm_barrier ------------------------------------------------------------ */

static void cc_barrier_setup(cc_point *pt)
{
    cc_buffers(pt, 0, 0, 0);
}

static void cc_barrier_run(cc_point *pt, long count)
{
    for (long k = 0; k < count; k++) CC_PVM(pvm_barrier(CC_PVM_GROUP, pt->size));
}

const cc_op cc_op_pvm_barrier = {
    .name = "pvm_barrier", .scope = CC_SCOPE_ALL, .phases = 1, .check_size = cc_size_zero,
    .setup = cc_barrier_setup, .run = cc_barrier_run, .extra = cc_pvm_extra, .cleanup = cc_coll_cleanup,
};

/* ---- pvm_reduce: in place in rbuf, refreshed from sbuf before each repetition */

static void cc_nop_fn(int *datatype, void *x, void *y, int *num, int *info)
{
    (void)datatype, (void)x, (void)y, (void)num;
    *info = PvmOk;
}

static void cc_reduce_setup(cc_point *pt)
{
    cc_buffers(pt, pt->n, pt->n, pt->rank == 0 ? pt->n : 0);
}

static void cc_reduce_before(cc_point *pt)
{
    memcpy(pt->rbuf, pt->sbuf, pt->n);
}

static void cc_reduce_run(cc_point *pt, long count)
{
    void (*fn)(int *, void *, void *, int *, int *) = pt->variant == CC_RED_SUM ? PvmSum : cc_nop_fn;
    for (long k = 0; k < count; k++)
        CC_PVM(pvm_reduce(fn, pt->rbuf, (int)(pt->n / 8), PVM_DOUBLE, CC_PVM_TAG_DATA, CC_PVM_GROUP, 0));
}

const cc_op cc_op_pvm_reduce = {
    .name = "pvm_reduce", .variants = cc_reduction_variants, .scope = CC_SCOPE_ALL, .phases = 1,
    .check_size = cc_pvm_size_doubles, .setup = cc_reduce_setup, .before = cc_reduce_before,
    .run = cc_reduce_run, .fill = cc_reduction_fill, .check = cc_reduce_check, .extra = cc_pvm_extra,
    .cleanup = cc_coll_cleanup,
};

/* ---- pvm_gather: rank r contributes pattern(r, j) --------------------------- */

static void cc_gather_setup(cc_point *pt)
{
    cc_buffers(pt, cc_block(pt), pt->n, pt->rank == 0 ? pt->n : 0);
}

static void cc_gather_run(cc_point *pt, long count)
{
    for (long k = 0; k < count; k++)
        CC_PVM(pvm_gather(pt->rbuf, pt->sbuf, (int)cc_block(pt), PVM_BYTE, CC_PVM_TAG_DATA, CC_PVM_GROUP,
                          0));
}

const cc_op cc_op_pvm_gather = {
    .name = "pvm_gather", .scope = CC_SCOPE_ALL, .phases = 1, .check_size = cc_size_per_rank,
    .setup = cc_gather_setup, .run = cc_gather_run, .fill = cc_gather_fill, .check = cc_gather_check,
    .extra = cc_pvm_extra, .cleanup = cc_coll_cleanup,
};

/* ---- pvm_scatter: the root's vector pattern(0, i); rank r gets block r ------ */

static void cc_scatter_setup(cc_point *pt)
{
    cc_buffers(pt, pt->n, cc_block(pt), cc_block(pt));
}

static void cc_scatter_run(cc_point *pt, long count)
{
    for (long k = 0; k < count; k++)
        CC_PVM(pvm_scatter(pt->rbuf, pt->sbuf, (int)cc_block(pt), PVM_BYTE, CC_PVM_TAG_DATA, CC_PVM_GROUP,
                           0));
}

const cc_op cc_op_pvm_scatter = {
    .name = "pvm_scatter", .scope = CC_SCOPE_ALL, .phases = 1, .check_size = cc_size_per_rank,
    .setup = cc_scatter_setup, .run = cc_scatter_run, .fill = cc_scatter_fill, .check = cc_scatter_check,
    .extra = cc_pvm_extra, .cleanup = cc_coll_cleanup,
};
