/* mbw: multi-pair bandwidth and message rate, after OSU's osu_mbw_mr.  Of p
 * ranks, the first p/2 each stream windows of W non-blocking sends of n bytes
 * to a partner in the second half (rank i to rank i + p/2), which posts W
 * receives and answers each window with a 4-byte ack; with p odd the last rank
 * only joins the start synchronisation.  Every pair streams at once, so the
 * pairs share whatever the node shares: its memory bandwidth and the library's
 * progress engine.  One sample is the slowest sender's window divided by W:
 * the aggregate bandwidth is (p/2) n / sample and the message rate (p/2) / sample. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_measure.h"
#include "cc_op_data.h"
#include "cc_ops_mpi.h"
#include "cc_verify.h"

static int cc_mbw_pairs(const cc_point *pt)
{
    return pt->size / 2;
}

/* this rank's partner, or -1 for the odd rank out */
static int cc_mbw_partner(const cc_point *pt)
{
    const int half = cc_mbw_pairs(pt);
    if (pt->rank < half) return pt->rank + half;
    if (pt->rank < 2 * half) return pt->rank - half;
    return -1;
}

static int cc_mbw_sends(const cc_point *pt)
{
    return pt->rank < cc_mbw_pairs(pt);
}

static const char *cc_mbw_check_size(size_t n, int p, int variant, char *why, size_t whylen)
{
    return cc_p2p_check_size(n, p, variant, why, whylen);
}

static void cc_mbw_setup(cc_point *pt)
{
    cc_window_fit(pt);
    const long w = pt->window;
    const int partner = cc_mbw_partner(pt), receives = partner >= 0 && !cc_mbw_sends(pt);
    pt->sbuf_len = pt->n;
    pt->rbuf_len = receives ? (size_t)w * pt->n : 0;
    pt->sbuf = cc_buffer_alloc(pt, pt->sbuf_len);
    pt->rbuf = cc_recv_buffer_alloc(pt, pt->rbuf_len);
    pt->check_off = 0;
    pt->check_len = pt->rbuf_len;
    pt->nreqs = (int)w;
    pt->reqs = cc_xmalloc((size_t)w * sizeof *pt->reqs);
    pt->timed = partner >= 0 && cc_mbw_sends(pt);
    pt->scale = 1.0 / (double)w;
}

static void cc_mbw_run(cc_point *pt, long count)
{
    const int n = (int)pt->n, w = (int)pt->window, partner = cc_mbw_partner(pt);
    const MPI_Comm c = pt->comm;
    MPI_Request *q = pt->reqs;
    if (partner < 0) return;
    if (cc_mbw_sends(pt)) {
        for (long k = 0; k < count; k++) {
            for (int i = 0; i < w; i++)
                CC_MPI(MPI_Isend(pt->sbuf, n, MPI_BYTE, partner, CC_TAG_DATA, c, &q[i]));
            CC_MPI(MPI_Waitall(w, q, cc_statuses_ignore));
            CC_MPI(MPI_Recv(pt->ack, 4, MPI_BYTE, partner, CC_TAG_ACK, c, MPI_STATUS_IGNORE));
        }
    } else {
        for (long k = 0; k < count; k++) {
            /* one buffer per message: overlapping pending receives are erroneous */
            for (int i = 0; i < w; i++)
                CC_MPI(MPI_Irecv(pt->rbuf + (size_t)i * pt->n, n, MPI_BYTE, partner, CC_TAG_DATA, c,
                                 &q[i]));
            CC_MPI(MPI_Waitall(w, q, cc_statuses_ignore));
            CC_MPI(MPI_Send(pt->ack, 4, MPI_BYTE, partner, CC_TAG_ACK, c));
        }
    }
}

/* each sender its own pattern; each receiver expects its partner's in every slot */
static void cc_mbw_fill(cc_point *pt)
{
    cc_fill_bytes(pt->sbuf, pt->sbuf_len, pt->rank, 0, pt->seed);
    const int partner = cc_mbw_partner(pt);
    if (pt->check_len == 0 || pt->n == 0) return;
    cc_poison_bytes(pt->rbuf, pt->n, partner, 0, pt->seed);
    for (size_t at = pt->n; at + pt->n <= pt->check_len; at += pt->n) memcpy(pt->rbuf + at, pt->rbuf, pt->n);
}

static int cc_mbw_check(const cc_point *pt, char *err, size_t errlen)
{
    if (pt->check_len == 0 || pt->n == 0) return 0;
    const int partner = cc_mbw_partner(pt);
    for (size_t at = 0; at + pt->n <= pt->check_len; at += pt->n) {
        if (at == 0 || memcmp(pt->rbuf + at, pt->rbuf, pt->n) != 0) {
            if (cc_check_bytes(pt->rbuf + at, pt->n, partner, 0, pt->seed, pt->rank, at, err, errlen))
                return 1;
        }
    }
    return 0;
}

static void cc_mbw_extra(cc_point *pt, double main_median_us, cc_buf *json)
{
    if (pt->rank != 0) return;
    const int pairs = cc_mbw_pairs(pt);
    cc_buf_key(json, "window");
    cc_buf_num(json, (double)pt->window);
    cc_buf_key(json, "pairs");
    cc_buf_num(json, (double)pairs);
    if (main_median_us > 0.0) {
        /* bytes per microsecond is MB/s */
        cc_buf_key(json, "aggregate_mb_s");
        cc_buf_num(json, (double)pairs * (double)pt->n / main_median_us);
        cc_buf_key(json, "message_rate_per_s");
        cc_buf_num(json, (double)pairs / main_median_us * 1e6);
    }
}

static void cc_mbw_cleanup(cc_point *pt)
{
    cc_buffer_free(pt, pt->sbuf);
    cc_buffer_free(pt, pt->rbuf);
    free(pt->reqs);
    pt->sbuf = pt->rbuf = NULL;
    pt->reqs = NULL;
}

const cc_op cc_op_mbw = {
    .name = "mbw",
    .scope = CC_SCOPE_ALL,
    .phases = 1,
    .check_size = cc_mbw_check_size,
    .setup = cc_mbw_setup,
    .run = cc_mbw_run,
    .extra = cc_mbw_extra,
    .fill = cc_mbw_fill,
    .check = cc_mbw_check,
    .cleanup = cc_mbw_cleanup,
};
