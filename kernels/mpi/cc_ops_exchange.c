/* exchange: ranks 0 and 1 swap n bytes at once, one call each, as a ring or a
 * halo of two does.  Variant sendrecv: MPI_Sendrecv from one buffer into
 * another; variant replace: MPI_Sendrecv_replace of one buffer, whose
 * temporary copy inside the library (MPICH packs before it sends, Open MPI
 * unpacks after it receives) is what replace costs beyond sendrecv: the model's
 * `loggp.replace_copy` (models/replace_copy.py) is that difference per size.
 * Variant self: each rank MPI_Sendrecv's n bytes to itself (the library's self
 * path, as a halo's neighbour that is the rank itself): the model's
 * `loggp.self_message` (models/self_message.py).
 * Variants isend and isend2: one and two messages each way, as a halo exchange
 * sends them (MPI_Irecv of each, then MPI_Isend of each, then MPI_Waitall):
 * the second message of isend2 is taken in once its bytes are there, after
 * the rank's own sends, so isend2 less isend is what one more message each
 * way costs the two CPUs (the receiver's copy `O_r` of `loggp.regimes`,
 * models/receive_copy.py).
 * One repetition is one exchange; rank 0 times it.
 *
 * footprint: the sendrecv exchange with each rank cycling through K pairs of
 * buffers (variant xK: K = 1, 4, 16 or 64), the next pair each repetition, as
 * a program that sends from and receives into many buffers does (a 2-D halo's
 * four neighbours, a solver's blocks): the same copies, from and into memory
 * a whole cycle of traffic away in the caches.  x1 is the same loop over one
 * pair, the others' baseline where a run lacks exchange:sendrecv.  The point
 * reports the bytes a rank cycles through (`cache_region_bytes`); the model's
 * `loggp.copy_footprint` (models/copy_footprint.py) is what it costs beyond
 * the one-pair exchange per byte.  Variants self_xK run the same loop with
 * each rank sending to itself (the library's self path, as exchange:self,
 * self_x1 standing in for it): a copy within one process meets the footprint
 * differently from one between two (`copy_footprint.self_by_size`). */
#include <string.h>

#include "cc_measure.h"
#include "cc_op_data.h"
#include "cc_ops_mpi.h"
#include "cc_verify.h"

enum { CC_EX_SENDRECV, CC_EX_REPLACE, CC_EX_SELF, CC_EX_ISEND, CC_EX_ISEND2 };
static const char *const cc_exchange_variants[] = {"sendrecv", "replace", "self", "isend", "isend2", NULL};
/* the largest number of messages each way of a variant (isend2) */
enum { CC_EX_MOST_MESSAGES = 2 };

/* messages each way of an exchange variant: 2 for isend2, else 1 */
static int cc_exchange_messages(const cc_point *pt)
{
    return pt->variant == CC_EX_ISEND2 ? 2 : 1;
}

/* one pair of n-byte buffers, one exchange a repetition (exchange and footprint) */
static void cc_one_pair_setup(cc_point *pt)
{
    cc_pair_buffers(pt);
    pt->scale = 1.0; /* one exchange */
}

/* message i of a variant carries bytes [i n, (i+1) n) of the pattern, into its own part of rbuf */
static void cc_exchange_setup(cc_point *pt)
{
    cc_pair_buffers_of(pt, (size_t)cc_exchange_messages(pt) * pt->n);
    pt->scale = 1.0; /* one exchange */
}

/* what goes out: this rank's pattern; to itself, the receive buffer poisoned
 * so that a copy which never happened is caught */
static void cc_sendrecv_fill(cc_point *pt, int to_self)
{
    cc_pair_fill(pt);
    if (to_self) cc_poison_bytes(pt->rbuf, pt->n, pt->rank, 0, pt->seed);
}

/* what came back: the peer's pattern, or this rank's own when it sent to itself */
static int cc_sendrecv_check(const cc_point *pt, int to_self, char *err, size_t errlen)
{
    if (!to_self) return cc_pair_check(pt, err, errlen);
    return cc_check_bytes(pt->rbuf, pt->n, pt->rank, 0, pt->seed, pt->rank, 0, err, errlen);
}

/* replace: the buffer that goes out holds this rank's pattern and comes back
 * holding the peer's (the one verified repetition) */
static void cc_exchange_fill(cc_point *pt)
{
    if (cc_exchange_messages(pt) > 1) { /* every message's bytes, as one pattern */
        cc_fill_bytes(pt->sbuf, pt->sbuf_len, pt->rank, 0, pt->seed);
        cc_poison_bytes(pt->rbuf, pt->rbuf_len, 1 - pt->rank, 0, pt->seed);
        return;
    }
    cc_sendrecv_fill(pt, pt->variant == CC_EX_SELF);
    if (pt->variant == CC_EX_REPLACE) cc_fill_bytes(pt->rbuf, pt->n, pt->rank, 0, pt->seed);
}

static int cc_exchange_check(const cc_point *pt, char *err, size_t errlen)
{
    if (cc_exchange_messages(pt) > 1)
        return cc_check_bytes(pt->rbuf, pt->rbuf_len, 1 - pt->rank, 0, pt->seed, pt->rank, 0, err, errlen);
    return cc_sendrecv_check(pt, pt->variant == CC_EX_SELF, err, errlen);
}

/* count MPI_Sendrecv's of sbuf into rbuf with peer */
static void cc_sendrecv_run(cc_point *pt, long count, int peer)
{
    const int n = (int)pt->n;
    for (long k = 0; k < count; k++)
        CC_MPI(MPI_Sendrecv(pt->sbuf, n, MPI_BYTE, peer, CC_TAG_DATA, pt->rbuf, n, MPI_BYTE, peer, CC_TAG_DATA,
                            pt->comm, MPI_STATUS_IGNORE));
}

/* count halo-style exchanges with peer: k receives posted, k sends, all completed */
static void cc_isend_run(cc_point *pt, long count, int k, int peer)
{
    const int n = (int)pt->n;
    MPI_Request q[2 * CC_EX_MOST_MESSAGES];
    for (long r = 0; r < count; r++) {
        for (int i = 0; i < k; i++)
            CC_MPI(MPI_Irecv(pt->rbuf + (size_t)i * pt->n, n, MPI_BYTE, peer, CC_TAG_DATA, pt->comm, &q[i]));
        for (int i = 0; i < k; i++)
            CC_MPI(MPI_Isend(pt->sbuf + (size_t)i * pt->n, n, MPI_BYTE, peer, CC_TAG_DATA, pt->comm, &q[k + i]));
        CC_MPI(MPI_Waitall(2 * k, q, cc_statuses_ignore));
    }
}

static void cc_exchange_run(cc_point *pt, long count)
{
    const int n = (int)pt->n, peer = pt->variant == CC_EX_SELF ? pt->rank : 1 - pt->rank;
    if (pt->variant == CC_EX_ISEND || pt->variant == CC_EX_ISEND2) {
        cc_isend_run(pt, count, cc_exchange_messages(pt), peer);
    } else if (pt->variant == CC_EX_REPLACE) {
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

/* the pairs of buffers each variant cycles through: to the other rank, then
 * to itself */
static const char *const cc_footprint_variants[] = {"x1",      "x4",      "x16",      "x64",
                                                    "self_x1", "self_x4", "self_x16", "self_x64", NULL};
enum { CC_FOOTPRINT_SIZES = 4 };
static const size_t cc_footprint_pairs[CC_FOOTPRINT_SIZES] = {1, 4, 16, 64};

static int cc_footprint_self(const cc_point *pt)
{
    return pt->variant >= CC_FOOTPRINT_SIZES;
}

static void cc_footprint_setup(cc_point *pt)
{
    cc_one_pair_setup(pt);
    /* cc_cache.c moves sbuf and rbuf */
    pt->rotate_slots = cc_footprint_pairs[pt->variant % CC_FOOTPRINT_SIZES];
}

static void cc_footprint_fill(cc_point *pt)
{
    cc_sendrecv_fill(pt, cc_footprint_self(pt));
}

static int cc_footprint_check(const cc_point *pt, char *err, size_t errlen)
{
    return cc_sendrecv_check(pt, cc_footprint_self(pt), err, errlen);
}

/* one buffer pair a call: batches are 1 while buffers rotate (cc_measure.c) */
static void cc_footprint_run(cc_point *pt, long count)
{
    cc_sendrecv_run(pt, count, cc_footprint_self(pt) ? pt->rank : 1 - pt->rank);
}

const cc_op cc_op_footprint = {
    .name = "footprint",
    .variants = cc_footprint_variants,
    .scope = CC_SCOPE_PAIR,
    .phases = 1,
    .check_size = cc_p2p_check_size,
    .setup = cc_footprint_setup,
    .run = cc_footprint_run,
    .fill = cc_footprint_fill,
    .check = cc_footprint_check,
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
