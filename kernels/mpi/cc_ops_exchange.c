/* exchange: ranks 0 and 1 swap n bytes at once, one call each, as a ring or a
 * halo of two does.  Variant sendrecv: MPI_Sendrecv from one buffer into
 * another; variant replace: MPI_Sendrecv_replace of one buffer, whose
 * temporary copy inside the library (MPICH packs before it sends, Open MPI
 * unpacks after it receives) is what replace costs beyond sendrecv: the model's
 * `loggp.replace_copy` (models/replace_copy.py) is that difference per size.
 * Variant self: each rank MPI_Sendrecv's n bytes to itself (the library's self
 * path, as a halo's neighbour that is the rank itself): the model's
 * `loggp.self_message` (models/self_message.py).
 * One repetition is one exchange; rank 0 times it.
 *
 * footprint: the sendrecv exchange with each rank cycling through K pairs of
 * buffers (variant xK: K = 1, 4, 16 or 64), the next pair each repetition, as
 * a program that sends from and receives into many buffers does (a 2-D halo's
 * four neighbours, a solver's blocks): the same copies, from and into memory
 * a whole cycle of traffic away in the caches.  x1 is the same loop over one
 * pair, the others' baseline measured beside them.  The point reports the
 * bytes a rank cycles through (`cache_region_bytes`); the model's
 * `loggp.copy_footprint` (models/copy_footprint.py) is what it costs beyond
 * x1 per byte. */
#include <string.h>

#include "cc_measure.h"
#include "cc_op_data.h"
#include "cc_ops_mpi.h"
#include "cc_verify.h"

enum { CC_EX_SENDRECV, CC_EX_REPLACE, CC_EX_SELF };
static const char *const cc_exchange_variants[] = {"sendrecv", "replace", "self", NULL};

static void cc_exchange_setup(cc_point *pt)
{
    cc_pair_buffers(pt);
    pt->scale = 1.0; /* one exchange */
}

/* replace: the buffer that goes out holds this rank's pattern and comes back
 * holding the peer's (the one verified repetition) */
static void cc_exchange_fill(cc_point *pt)
{
    cc_pair_fill(pt);
    if (pt->variant == CC_EX_REPLACE) cc_fill_bytes(pt->rbuf, pt->n, pt->rank, 0, pt->seed);
    if (pt->variant == CC_EX_SELF) cc_poison_bytes(pt->rbuf, pt->n, pt->rank, 0, pt->seed);
}

/* what came back: the peer's pattern, or this rank's own for self */
static int cc_exchange_check(const cc_point *pt, char *err, size_t errlen)
{
    if (pt->variant != CC_EX_SELF) return cc_pair_check(pt, err, errlen);
    return cc_check_bytes(pt->rbuf, pt->n, pt->rank, 0, pt->seed, pt->rank, 0, err, errlen);
}

/* count MPI_Sendrecv's of sbuf into rbuf with peer */
static void cc_sendrecv_run(cc_point *pt, long count, int peer)
{
    const int n = (int)pt->n;
    for (long k = 0; k < count; k++)
        CC_MPI(MPI_Sendrecv(pt->sbuf, n, MPI_BYTE, peer, CC_TAG_DATA, pt->rbuf, n, MPI_BYTE, peer, CC_TAG_DATA,
                            pt->comm, MPI_STATUS_IGNORE));
}

static void cc_exchange_run(cc_point *pt, long count)
{
    const int n = (int)pt->n, peer = pt->variant == CC_EX_SELF ? pt->rank : 1 - pt->rank;
    if (pt->variant == CC_EX_REPLACE) {
        for (long k = 0; k < count; k++)
            CC_MPI(MPI_Sendrecv_replace(pt->rbuf, n, MPI_BYTE, peer, CC_TAG_DATA, peer, CC_TAG_DATA, pt->comm,
                                        MPI_STATUS_IGNORE));
    } else {
        cc_sendrecv_run(pt, count, peer);
    }
}

static void cc_exchange_cleanup(cc_point *pt)
{
    cc_buffer_free(pt, pt->sbuf);
    cc_buffer_free(pt, pt->rbuf);
    pt->sbuf = pt->rbuf = NULL;
}

/* the pairs of buffers each variant cycles through */
static const char *const cc_footprint_variants[] = {"x1", "x4", "x16", "x64", NULL};
static const size_t cc_footprint_pairs[] = {1, 4, 16, 64};

static void cc_footprint_setup(cc_point *pt)
{
    cc_exchange_setup(pt);
    pt->rotate_slots = cc_footprint_pairs[pt->variant]; /* cc_cache.c moves sbuf and rbuf */
}

/* one buffer pair a call: batches are 1 while buffers rotate (cc_measure.c) */
static void cc_footprint_run(cc_point *pt, long count)
{
    cc_sendrecv_run(pt, count, 1 - pt->rank);
}

const cc_op cc_op_footprint = {
    .name = "footprint",
    .variants = cc_footprint_variants,
    .scope = CC_SCOPE_PAIR,
    .phases = 1,
    .check_size = cc_p2p_check_size,
    .setup = cc_footprint_setup,
    .run = cc_footprint_run,
    .fill = cc_pair_fill,
    .check = cc_pair_check,
    .cleanup = cc_exchange_cleanup,
};

const cc_op cc_op_exchange = {
    .name = "exchange",
    .variants = cc_exchange_variants,
    .scope = CC_SCOPE_PAIR,
    .phases = 1,
    .check_size = cc_p2p_check_size,
    .setup = cc_exchange_setup,
    .run = cc_exchange_run,
    .fill = cc_exchange_fill,
    .check = cc_exchange_check,
    .cleanup = cc_exchange_cleanup,
};
