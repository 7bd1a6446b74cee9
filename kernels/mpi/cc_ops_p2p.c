/* Point-to-point operations between ranks 0 and 1: pingpong (five send modes),
 * bw, bibw, the posting cost of MPI_Isend, the late-receiver rndv probe,
 * Netgauge's LogGP PRTT method, and the skew and written probes of what a copy pays. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_measure.h"
#include "cc_op_data.h"
#include "cc_ops_mpi.h"
#include "cc_verify.h"

#define CC_LOGGP_M 16

enum { CC_PP_SEND, CC_PP_BSEND, CC_PP_SSEND, CC_PP_RSEND, CC_PP_ISEND };
static const char *const cc_pingpong_variants[] = {"send", "bsend", "ssend", "rsend", "isend", NULL};

static int cc_peer(const cc_point *pt)
{
    return 1 - pt->rank;
}

/* sbuf of n bytes; rbuf of rlen bytes, all of which this rank verifies */
static void cc_p2p_buffers(cc_point *pt, size_t rlen, int nreqs)
{
    pt->sbuf_len = pt->n;
    pt->rbuf_len = rlen;
    pt->sbuf = cc_buffer_alloc(pt, pt->sbuf_len);
    pt->rbuf = cc_recv_buffer_alloc(pt, pt->rbuf_len);
    pt->check_off = 0;
    pt->check_len = rlen;
    pt->nreqs = nreqs;
    pt->reqs = cc_xmalloc((size_t)(nreqs > 0 ? nreqs : 1) * sizeof *pt->reqs);
    pt->timed = pt->rank == 0;
    pt->scale = 1.0;
}

static void cc_p2p_cleanup(cc_point *pt)
{
    cc_buffer_free(pt, pt->sbuf);
    cc_buffer_free(pt, pt->rbuf);
    free(pt->reqs);
    pt->sbuf = pt->rbuf = NULL;
    pt->reqs = NULL;
}

static void cc_p2p_fill(cc_point *pt)
{
    cc_fill_bytes(pt->sbuf, pt->sbuf_len, pt->rank, 0, pt->seed);
    if (pt->n == 0 || pt->check_len < pt->n) return;
    cc_poison_bytes(pt->rbuf, pt->n, cc_peer(pt), 0, pt->seed);
    for (size_t at = pt->n; at + pt->n <= pt->check_len; at += pt->n) /* a window: W copies */
        memcpy(pt->rbuf + at, pt->rbuf, pt->n);
}

static int cc_p2p_check(const cc_point *pt, char *err, size_t errlen)
{
    if (pt->check_len == 0 || pt->n == 0) return 0;
    if (cc_check_bytes(pt->rbuf, pt->n, cc_peer(pt), 0, pt->seed, pt->rank, 0, err, errlen)) return 1;
    /* further windows must equal the first, which is right */
    for (size_t at = pt->n; at + pt->n <= pt->check_len; at += pt->n) {
        if (memcmp(pt->rbuf + at, pt->rbuf, pt->n) != 0)
            return cc_check_bytes(pt->rbuf + at, pt->n, cc_peer(pt), 0, pt->seed, pt->rank, at, err,
                                  errlen);
    }
    return 0;
}

/* ---- pingpong ---------------------------------------------------------- */

/* the bsend buffer: room for two messages in flight, even if the library frees late */
static size_t cc_bsend_bytes(size_t n)
{
    return 4 * (n + (size_t)MPI_BSEND_OVERHEAD);
}

static const char *cc_pingpong_check_size(size_t n, int p, int variant, char *why, size_t whylen)
{
    if (cc_p2p_check_size(n, p, variant, why, whylen)) return why;
    if (variant == CC_PP_BSEND && cc_bsend_bytes(n) > INT_MAX) {
        snprintf(why, whylen, "its bsend buffer of %zu bytes is more than MPI_Buffer_attach takes",
                 cc_bsend_bytes(n));
        return why;
    }
    return NULL;
}

static void cc_pingpong_setup(cc_point *pt)
{
    cc_p2p_buffers(pt, pt->n, 2);
    pt->scale = 0.5; /* half a round trip */
    if (pt->variant == CC_PP_BSEND) {
        pt->attached_len = (int)cc_bsend_bytes(pt->n); /* fits: cc_pingpong_check_size */
        pt->attached = cc_xmalloc((size_t)pt->attached_len);
        CC_MPI(MPI_Buffer_attach(pt->attached, pt->attached_len));
    }
}

static void cc_pingpong_cleanup(cc_point *pt)
{
    if (pt->attached) {
        void *addr = NULL;
        int len = 0;
        CC_MPI(MPI_Buffer_detach(&addr, &len));
        free(pt->attached);
        pt->attached = NULL;
    }
    cc_p2p_cleanup(pt);
}

/* rsend is legal only if the receive is already posted: rank 1 pre-posts the
 * first ping's receive and says so before the batch; within a batch it posts
 * the next receive before it replies, and rank 0 posts its reply receive
 * before it sends */
static void cc_pingpong_before(cc_point *pt)
{
    if (pt->variant != CC_PP_RSEND) return;
    if (pt->rank == 1) {
        CC_MPI(MPI_Irecv(pt->rbuf, (int)pt->n, MPI_BYTE, 0, CC_TAG_DATA, pt->comm, &pt->reqs[0]));
        CC_MPI(MPI_Send(pt->ack, 0, MPI_BYTE, 0, CC_TAG_READY, pt->comm));
    } else {
        CC_MPI(MPI_Recv(pt->ack, 0, MPI_BYTE, 1, CC_TAG_READY, pt->comm, MPI_STATUS_IGNORE));
    }
}

static void cc_pingpong_run_origin(cc_point *pt, long count)
{
    const int n = (int)pt->n;
    const MPI_Comm c = pt->comm;
    unsigned char *s = pt->sbuf, *r = pt->rbuf;
    MPI_Request *q = pt->reqs;
    switch (pt->variant) {
    case CC_PP_SEND:
        for (long k = 0; k < count; k++) {
            CC_MPI(MPI_Send(s, n, MPI_BYTE, 1, CC_TAG_DATA, c));
            CC_MPI(MPI_Recv(r, n, MPI_BYTE, 1, CC_TAG_DATA, c, MPI_STATUS_IGNORE));
        }
        break;
    case CC_PP_BSEND:
        for (long k = 0; k < count; k++) {
            CC_MPI(MPI_Bsend(s, n, MPI_BYTE, 1, CC_TAG_DATA, c));
            CC_MPI(MPI_Recv(r, n, MPI_BYTE, 1, CC_TAG_DATA, c, MPI_STATUS_IGNORE));
        }
        break;
    case CC_PP_SSEND:
        for (long k = 0; k < count; k++) {
            CC_MPI(MPI_Ssend(s, n, MPI_BYTE, 1, CC_TAG_DATA, c));
            CC_MPI(MPI_Recv(r, n, MPI_BYTE, 1, CC_TAG_DATA, c, MPI_STATUS_IGNORE));
        }
        break;
    case CC_PP_RSEND:
        for (long k = 0; k < count; k++) {
            CC_MPI(MPI_Irecv(r, n, MPI_BYTE, 1, CC_TAG_DATA, c, &q[1]));
            CC_MPI(MPI_Rsend(s, n, MPI_BYTE, 1, CC_TAG_DATA, c));
            CC_MPI(MPI_Wait(&q[1], MPI_STATUS_IGNORE));
        }
        break;
    default: /* CC_PP_ISEND */
        for (long k = 0; k < count; k++) {
            CC_MPI(MPI_Irecv(r, n, MPI_BYTE, 1, CC_TAG_DATA, c, &q[0]));
            CC_MPI(MPI_Isend(s, n, MPI_BYTE, 1, CC_TAG_DATA, c, &q[1]));
            CC_MPI(MPI_Waitall(2, q, cc_statuses_ignore));
        }
    }
}

static void cc_pingpong_run_echo(cc_point *pt, long count)
{
    const int n = (int)pt->n;
    const MPI_Comm c = pt->comm;
    unsigned char *s = pt->sbuf, *r = pt->rbuf;
    MPI_Request *q = pt->reqs;
    switch (pt->variant) {
    case CC_PP_SEND:
        for (long k = 0; k < count; k++) {
            CC_MPI(MPI_Recv(r, n, MPI_BYTE, 0, CC_TAG_DATA, c, MPI_STATUS_IGNORE));
            CC_MPI(MPI_Send(s, n, MPI_BYTE, 0, CC_TAG_DATA, c));
        }
        break;
    case CC_PP_BSEND:
        for (long k = 0; k < count; k++) {
            CC_MPI(MPI_Recv(r, n, MPI_BYTE, 0, CC_TAG_DATA, c, MPI_STATUS_IGNORE));
            CC_MPI(MPI_Bsend(s, n, MPI_BYTE, 0, CC_TAG_DATA, c));
        }
        break;
    case CC_PP_SSEND:
        for (long k = 0; k < count; k++) {
            CC_MPI(MPI_Recv(r, n, MPI_BYTE, 0, CC_TAG_DATA, c, MPI_STATUS_IGNORE));
            CC_MPI(MPI_Ssend(s, n, MPI_BYTE, 0, CC_TAG_DATA, c));
        }
        break;
    case CC_PP_RSEND:
        for (long k = 0; k < count; k++) {
            CC_MPI(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
            if (k + 1 < count) CC_MPI(MPI_Irecv(r, n, MPI_BYTE, 0, CC_TAG_DATA, c, &q[0]));
            CC_MPI(MPI_Rsend(s, n, MPI_BYTE, 0, CC_TAG_DATA, c));
        }
        break;
    default: /* CC_PP_ISEND */
        for (long k = 0; k < count; k++) {
            CC_MPI(MPI_Irecv(r, n, MPI_BYTE, 0, CC_TAG_DATA, c, &q[0]));
            CC_MPI(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
            CC_MPI(MPI_Isend(s, n, MPI_BYTE, 0, CC_TAG_DATA, c, &q[1]));
            CC_MPI(MPI_Wait(&q[1], MPI_STATUS_IGNORE));
        }
    }
}

static void cc_pingpong_run(cc_point *pt, long count)
{
    if (pt->rank == 0)
        cc_pingpong_run_origin(pt, count);
    else
        cc_pingpong_run_echo(pt, count);
}

const cc_op cc_op_pingpong = {
    .name = "pingpong",
    .variants = cc_pingpong_variants,
    .scope = CC_SCOPE_PAIR,
    .phases = 1,
    .check_size = cc_pingpong_check_size,
    .setup = cc_pingpong_setup,
    .before = cc_pingpong_before,
    .run = cc_pingpong_run,
    .fill = cc_p2p_fill,
    .check = cc_p2p_check,
    .cleanup = cc_pingpong_cleanup,
};

/* ---- skew: where a message lands in its page ----------------------------- */

/* A standard-mode ping-pong whose receive buffers start, for `ahead`, CC_SKEW_BYTES
 * further into their page than the send buffers (for `aligned`, where they do;
 * --recv-offset is not theirs): a copy from one into the other may run at another
 * speed (on an AMD EPYC, a destination 1 to 31 bytes ahead of its source modulo 4096
 * costs 1.3 to 7 times from 32 KiB by the host's state, where the libraries copy once).
 * `self_aligned` and `self_ahead` place the buffers alike, each rank sending to itself
 * (one MPI_Sendrecv a call, as exchange:self): the library's own copy in memory, which
 * need not be the one it copies another rank's message with.  `ahead80` puts the receive
 * buffers CC_SKEW_LINE_BYTES further than `ahead` does: at the same place in their 64-byte
 * line, in the next line.  It tells which distances a processor copies slowly: on the
 * AMD EPYC only those within 31 bytes ahead (80 ahead is as fast as aligned), on an Intel
 * Xeon any distance ahead that is no whole number of lines (80 ahead costs what 16 does).
 * Under --cache cold every buffer starts on a page: the variants would not differ. */
enum { CC_SKEW_ALIGNED, CC_SKEW_AHEAD, CC_SKEW_SELF_ALIGNED, CC_SKEW_SELF_AHEAD, CC_SKEW_AHEAD80 };
static const char *const cc_skew_variants[] = {"aligned", "ahead", "self_aligned", "self_ahead", "ahead80", NULL};
#define CC_SKEW_BYTES 16
#define CC_SKEW_LINE_BYTES 64

static int cc_skew_self(const cc_point *pt)
{
    return pt->variant == CC_SKEW_SELF_ALIGNED || pt->variant == CC_SKEW_SELF_AHEAD;
}

static void cc_skew_setup(cc_point *pt)
{
    cc_p2p_buffers(pt, pt->n, 2);
    pt->scale = cc_skew_self(pt) ? 1.0 : 0.5; /* one message to oneself, or half a round trip */
    cc_buffer_free(pt, pt->rbuf);
    const int ahead = pt->variant == CC_SKEW_AHEAD || pt->variant == CC_SKEW_SELF_AHEAD;
    const long skew = ahead ? CC_SKEW_BYTES
                            : pt->variant == CC_SKEW_AHEAD80 ? CC_SKEW_BYTES + CC_SKEW_LINE_BYTES : 0;
    const long at = pt->env->opt->buffer_offset + skew;
    pt->rbuf = cc_buffer_alloc_at(pt->rbuf_len, at % CC_PAGE_BYTES);
}

/* to itself: this rank's pattern goes out and comes back into a poisoned buffer */
static void cc_skew_fill(cc_point *pt)
{
    cc_p2p_fill(pt);
    if (cc_skew_self(pt) && pt->n > 0) cc_poison_bytes(pt->rbuf, pt->n, pt->rank, 0, pt->seed);
}

static int cc_skew_check(const cc_point *pt, char *err, size_t errlen)
{
    if (!cc_skew_self(pt)) return cc_p2p_check(pt, err, errlen);
    if (pt->check_len == 0 || pt->n == 0) return 0;
    return cc_check_bytes(pt->rbuf, pt->n, pt->rank, 0, pt->seed, pt->rank, 0, err, errlen);
}

/* count standard-mode round trips between ranks 0 and 1, sbuf out and rbuf in */
static void cc_round_trips(cc_point *pt, long count)
{
    const int n = (int)pt->n, peer = cc_peer(pt);
    const MPI_Comm c = pt->comm;
    for (long k = 0; k < count; k++) {
        if (pt->rank == 0) {
            CC_MPI(MPI_Send(pt->sbuf, n, MPI_BYTE, peer, CC_TAG_DATA, c));
            CC_MPI(MPI_Recv(pt->rbuf, n, MPI_BYTE, peer, CC_TAG_DATA, c, MPI_STATUS_IGNORE));
        } else {
            CC_MPI(MPI_Recv(pt->rbuf, n, MPI_BYTE, peer, CC_TAG_DATA, c, MPI_STATUS_IGNORE));
            CC_MPI(MPI_Send(pt->sbuf, n, MPI_BYTE, peer, CC_TAG_DATA, c));
        }
    }
}

static void cc_skew_run(cc_point *pt, long count)
{
    if (!cc_skew_self(pt)) {
        cc_round_trips(pt, count);
        return;
    }
    const int n = (int)pt->n;
    for (long k = 0; k < count; k++)
        CC_MPI(MPI_Sendrecv(pt->sbuf, n, MPI_BYTE, pt->rank, CC_TAG_DATA, pt->rbuf, n, MPI_BYTE,
                            pt->rank, CC_TAG_DATA, pt->comm, MPI_STATUS_IGNORE));
}

const cc_op cc_op_skew = {
    .name = "skew",
    .variants = cc_skew_variants,
    .scope = CC_SCOPE_PAIR,
    .phases = 1,
    .check_size = cc_p2p_check_size,
    .setup = cc_skew_setup,
    .run = cc_skew_run,
    .fill = cc_skew_fill,
    .check = cc_skew_check,
    .cleanup = cc_p2p_cleanup,
    .bound_buffers = "the receive buffer's place in its cache line is what it measures",
};

/* ---- written: a message its sender has just written --------------------- */

/* A standard-mode ping-pong whose ranks each store into their send buffer in the untimed
 * step before every round trip: for `ends` its first and last CC_WRITTEN_WORD bytes, for
 * `whole` one byte in every CC_WRITTEN_LINE-byte cache line and its last byte, for `clean`
 * nothing (the ping-pong every benchmark times).  A store leaves its line modified in the
 * writer's cache, so whoever reads the message next, the receiver or the library's single
 * copy, must pull each such line from the other core's cache where a clean buffer is
 * shared; a library whose sender copies a small message itself (eager) reads its own
 * lines and pays almost nothing.
 * Programs write what they send (a halo is packed, a solver's rows change each sweep), so
 * the model charges the excess over `clean` (the model's `written_send`).  Each byte keeps
 * its value (read and stored back through a volatile pointer), so verification holds, and
 * the stores before the warm-up's and verification's repetitions (cc_measure.c) change
 * nothing.  A sample is one round trip, halved (unbatched: a batch would send the same
 * lines clean again after its first).
 * `exchange_ends` times a loop of CC_WRITTEN_BURST MPI_Sendrecv exchanges a sample, each
 * rank storing into the ends of its send buffer before each exchange as a program's loop
 * stamps and exchanges, and `exchange_clean` the same loop storing into a line of its own
 * that no message carries (the same work, no line to pull): in an exchange the two
 * ranks' pulls overlap, and the written lines cost another excess than one message's
 * (docs/models.md).  The stores are timed here, so no `whole` is measured so: its stores
 * would be in its excess. */
enum {
    CC_WRITTEN_CLEAN,
    CC_WRITTEN_ENDS,
    CC_WRITTEN_WHOLE,
    CC_WRITTEN_EXCHANGE /* exchange_clean; + CC_WRITTEN_ENDS: exchange_ends */
};
static const char *const cc_written_variants[] = {"clean", "ends", "whole", "exchange_clean",
                                                  "exchange_ends", NULL};
#define CC_WRITTEN_WORD 8
#define CC_WRITTEN_LINE 64
#define CC_WRITTEN_BURST 16

/* stores each of len bytes from at back unchanged: their lines become modified */
static void cc_written_store(unsigned char *buf, size_t at, size_t len)
{
    volatile unsigned char *b = buf;
    for (size_t i = at; i < at + len; i++) b[i] = b[i];
}

/* the stores of variant `stores` (CC_WRITTEN_*) into the n bytes of buf */
static void cc_written_stores(unsigned char *buf, size_t n, int stores)
{
    if (n == 0) return;
    if (stores == CC_WRITTEN_ENDS) {
        const size_t word = n < CC_WRITTEN_WORD ? n : CC_WRITTEN_WORD;
        cc_written_store(buf, 0, word);
        cc_written_store(buf, n - word, word);
    } else if (stores == CC_WRITTEN_WHOLE) {
        /* one byte every line's length from the start meets every line the buffer spans
         * but perhaps its last, which its last byte lies in */
        for (size_t at = 0; at < n; at += CC_WRITTEN_LINE) cc_written_store(buf, at, 1);
        cc_written_store(buf, n - 1, 1);
    }
}

static void cc_written_setup(cc_point *pt)
{
    cc_p2p_buffers(pt, pt->n, 2);
    /* per message: half a round trip; per exchange: a burst's share */
    pt->scale = pt->variant >= CC_WRITTEN_EXCHANGE ? 1.0 / CC_WRITTEN_BURST : 0.5;
}

static void cc_written_before(cc_point *pt)
{
    if (pt->variant < CC_WRITTEN_EXCHANGE) cc_written_stores(pt->sbuf, pt->n, pt->variant);
}

/* count is 1: the op is unbatched (cc_measure.c) */
static void cc_written_run(cc_point *pt, long count)
{
    if (pt->variant < CC_WRITTEN_EXCHANGE) {
        cc_round_trips(pt, count);
        return;
    }
    const int n = (int)pt->n, peer = cc_peer(pt);
    const int written = pt->variant == CC_WRITTEN_EXCHANGE + CC_WRITTEN_ENDS;
    /* the clean loop's stores go to a line no message carries: the same work, no pull */
    static unsigned char own[CC_WRITTEN_LINE];
    for (long k = 0; k < count * CC_WRITTEN_BURST; k++) {
        if (written)
            cc_written_stores(pt->sbuf, pt->n, CC_WRITTEN_ENDS);
        else
            cc_written_stores(own, 2 * CC_WRITTEN_WORD, CC_WRITTEN_ENDS);
        CC_MPI(MPI_Sendrecv(pt->sbuf, n, MPI_BYTE, peer, CC_TAG_DATA, pt->rbuf, n, MPI_BYTE, peer,
                            CC_TAG_DATA, pt->comm, MPI_STATUS_IGNORE));
    }
}

const cc_op cc_op_written = {
    .name = "written",
    .variants = cc_written_variants,
    .scope = CC_SCOPE_PAIR,
    .phases = 1,
    .check_size = cc_p2p_check_size,
    .setup = cc_written_setup,
    .before = cc_written_before,
    .run = cc_written_run,
    .fill = cc_p2p_fill,
    .check = cc_p2p_check,
    .cleanup = cc_p2p_cleanup,
    .bound_buffers = "it compares a send buffer written just before against the same buffer clean "
                     "in the caches, where --cache cold would leave the clean one in memory",
    .unbatched = 1,
};

/* ---- bw, bibw: windows of W non-blocking sends -------------------------- */

static void cc_window_extra(cc_point *pt, double main_median_us, cc_buf *json)
{
    (void)main_median_us;
    if (pt->rank != 0) return;
    cc_buf_key(json, "window");
    cc_buf_num(json, (double)pt->window);
}

static void cc_bw_setup(cc_point *pt)
{
    cc_window_fit(pt);
    const long w = pt->window;
    const int receives = pt->rank == 1;
    cc_p2p_buffers(pt, receives ? (size_t)w * pt->n : 0, (int)w);
    pt->scale = 1.0 / (double)w;
}

static void cc_bw_run(cc_point *pt, long count)
{
    const int n = (int)pt->n, w = (int)pt->window;
    const MPI_Comm c = pt->comm;
    MPI_Request *q = pt->reqs;
    if (pt->rank == 0) {
        for (long k = 0; k < count; k++) {
            for (int i = 0; i < w; i++)
                CC_MPI(MPI_Isend(pt->sbuf, n, MPI_BYTE, 1, CC_TAG_DATA, c, &q[i]));
            CC_MPI(MPI_Waitall(w, q, cc_statuses_ignore));
            CC_MPI(MPI_Recv(pt->ack, 4, MPI_BYTE, 1, CC_TAG_ACK, c, MPI_STATUS_IGNORE));
        }
    } else {
        for (long k = 0; k < count; k++) {
            /* one buffer per message: overlapping pending receives are erroneous */
            for (int i = 0; i < w; i++)
                CC_MPI(MPI_Irecv(pt->rbuf + (size_t)i * pt->n, n, MPI_BYTE, 0, CC_TAG_DATA, c, &q[i]));
            CC_MPI(MPI_Waitall(w, q, cc_statuses_ignore));
            CC_MPI(MPI_Send(pt->ack, 4, MPI_BYTE, 0, CC_TAG_ACK, c));
        }
    }
}

const cc_op cc_op_bw = {
    .name = "bw",
    .scope = CC_SCOPE_PAIR,
    .phases = 1,
    .check_size = cc_p2p_check_size,
    .setup = cc_bw_setup,
    .run = cc_bw_run,
    .extra = cc_window_extra,
    .fill = cc_p2p_fill,
    .check = cc_p2p_check,
    .cleanup = cc_p2p_cleanup,
};

static void cc_bibw_setup(cc_point *pt)
{
    cc_window_fit(pt);
    cc_p2p_buffers(pt, (size_t)pt->window * pt->n, (int)(2 * pt->window));
    pt->scale = 1.0 / (double)pt->window;
}

static void cc_bibw_run(cc_point *pt, long count)
{
    const int n = (int)pt->n, w = (int)pt->window, other = cc_peer(pt);
    const MPI_Comm c = pt->comm;
    MPI_Request *q = pt->reqs;
    for (long k = 0; k < count; k++) {
        for (int i = 0; i < w; i++)
            CC_MPI(MPI_Irecv(pt->rbuf + (size_t)i * pt->n, n, MPI_BYTE, other, CC_TAG_DATA, c, &q[i]));
        for (int i = 0; i < w; i++)
            CC_MPI(MPI_Isend(pt->sbuf, n, MPI_BYTE, other, CC_TAG_DATA, c, &q[w + i]));
        CC_MPI(MPI_Waitall(2 * w, q, cc_statuses_ignore));
    }
}

const cc_op cc_op_bibw = {
    .name = "bibw",
    .scope = CC_SCOPE_PAIR,
    .phases = 1,
    .check_size = cc_p2p_check_size,
    .setup = cc_bibw_setup,
    .run = cc_bibw_run,
    .extra = cc_window_extra,
    .fill = cc_p2p_fill,
    .check = cc_p2p_check,
    .cleanup = cc_p2p_cleanup,
};

/* ---- post: what posting a non-blocking send costs its caller ------------ */

/* Both ranks exchange a burst of CC_POST_BURST messages as a halo exchange does: each
 * posts its receives (untimed), then its MPI_Isends (timed on rank 0), and completes
 * them all in the untimed step before the next burst. A sample is the mean time one
 * MPI_Isend takes to return with its request open while the peer posts its own. The
 * burst is not batched: a batch of the fastest posts would hold hundreds of requests,
 * more than a program keeps open to one peer. */
#define CC_POST_BURST 8
/* the CI is judged against max(median, this): a post of 0.08 us is 0.64 us a sample,
 * 32 ticks of a VM's 20 ns clock, whose half tick bounds the median no closer than
 * 1.25 ns a call, 1.6% of it; a prediction adds the post to the whole exchange */
#define CC_POST_CI_REFERENCE_US 0.25

static void cc_post_setup(cc_point *pt)
{
    /* one receive buffer a message: overlapping pending receives are erroneous */
    cc_p2p_buffers(pt, (size_t)CC_POST_BURST * pt->n, 2 * CC_POST_BURST);
    pt->nreqs = 0; /* the requests of the burst in flight */
    pt->scale = 1.0 / CC_POST_BURST;
    pt->ci_reference_us = CC_POST_CI_REFERENCE_US;
}

/* the burst in flight completed (its requests are MPI_REQUEST_NULL after, so again is harmless) */
static void cc_post_complete(const cc_point *pt)
{
    if (pt->nreqs > 0) CC_MPI(MPI_Waitall(pt->nreqs, pt->reqs, cc_statuses_ignore));
}

static void cc_post_before(cc_point *pt)
{
    cc_post_complete(pt);
    const int n = (int)pt->n, peer = cc_peer(pt);
    for (int i = 0; i < CC_POST_BURST; i++)
        CC_MPI(MPI_Irecv(pt->rbuf + (size_t)i * pt->n, n, MPI_BYTE, peer, CC_TAG_DATA, pt->comm,
                         &pt->reqs[i]));
    pt->nreqs = CC_POST_BURST;
}

/* count is 1: the op is unbatched (cc_measure.c) */
static void cc_post_run(cc_point *pt, long count)
{
    (void)count;
    const int n = (int)pt->n, peer = cc_peer(pt);
    const MPI_Comm c = pt->comm;
    MPI_Request *q = pt->reqs + CC_POST_BURST;
    for (int i = 0; i < CC_POST_BURST; i++) CC_MPI(MPI_Isend(pt->sbuf, n, MPI_BYTE, peer, CC_TAG_DATA, c, &q[i]));
    pt->nreqs = 2 * CC_POST_BURST;
}

/* the burst's receives are complete once its requests are */
static int cc_post_check(const cc_point *pt, char *err, size_t errlen)
{
    cc_post_complete(pt);
    return cc_p2p_check(pt, err, errlen);
}

static void cc_post_cleanup(cc_point *pt)
{
    cc_post_complete(pt);
    cc_p2p_cleanup(pt);
}

const cc_op cc_op_post = {
    .name = "post",
    .scope = CC_SCOPE_PAIR,
    .phases = 1,
    .check_size = cc_p2p_check_size,
    .setup = cc_post_setup,
    .before = cc_post_before,
    .run = cc_post_run,
    .fill = cc_p2p_fill,
    .check = cc_post_check,
    .cleanup = cc_post_cleanup,
    .unbatched = 1,
};

/* ---- late receivers: rndv (sender timed) and LogGP o_r (receiver timed) -- */

/* rank 1 says it is about to wait, then waits; rank 0's clock starts when it
 * hears that, so its sends meet a receiver that is late by the delay */
static void cc_late_receiver_handshake(cc_point *pt, int64_t wait_ns)
{
    if (pt->rank == 1) {
        CC_MPI(MPI_Send(pt->ack, 0, MPI_BYTE, 0, CC_TAG_READY, pt->comm));
        cc_spin_ns(wait_ns);
    } else {
        CC_MPI(MPI_Recv(pt->ack, 0, MPI_BYTE, 1, CC_TAG_READY, pt->comm, MPI_STATUS_IGNORE));
    }
}

/* rndv: one delay D per (batched) repetition; a batch only exceeds 1 for sends
 * far shorter than D, which do not wait for the receiver anyway */
static void cc_rndv_before(cc_point *pt)
{
    cc_late_receiver_handshake(pt, pt->delay_ns);
}

/* LogGP o_r: d per message of the batch, so every message has arrived before
 * the timed receives */
static void cc_recv_overhead_before(cc_point *pt)
{
    cc_late_receiver_handshake(pt, pt->delay_ns * pt->batch);
}

static void cc_late_receiver_run(cc_point *pt, long count)
{
    const int n = (int)pt->n;
    if (pt->rank == 0) {
        for (long k = 0; k < count; k++)
            CC_MPI(MPI_Send(pt->sbuf, n, MPI_BYTE, 1, CC_TAG_DATA, pt->comm));
    } else {
        for (long k = 0; k < count; k++)
            CC_MPI(MPI_Recv(pt->rbuf, n, MPI_BYTE, 0, CC_TAG_DATA, pt->comm, MPI_STATUS_IGNORE));
    }
}

static void cc_rndv_setup(cc_point *pt)
{
    cc_p2p_buffers(pt, pt->rank == 1 ? pt->n : 0, 1);
    pt->delay_ns = (int64_t)llround(pt->env->opt->rndv_delay_us * 1000.0);
    /* a send either returns in its overhead or waits about D: D is the scale
     * that tells them apart, so the CI is judged against it */
    pt->ci_reference_us = pt->env->opt->rndv_delay_us;
}

static void cc_rndv_extra(cc_point *pt, double main_median_us, cc_buf *json)
{
    (void)main_median_us;
    if (pt->rank != 0) return;
    cc_buf_key(json, "delay_us");
    cc_buf_num(json, (double)pt->delay_ns / 1000.0);
}

const cc_op cc_op_rndv = {
    .name = "rndv",
    .scope = CC_SCOPE_PAIR,
    .phases = 1,
    .check_size = cc_p2p_check_size,
    .setup = cc_rndv_setup,
    .before = cc_rndv_before,
    .run = cc_late_receiver_run,
    .fill = cc_p2p_fill,
    .check = cc_p2p_check,
    .extra = cc_rndv_extra,
    .cleanup = cc_p2p_cleanup,
};

/* ---- LogGP: Netgauge's PRTT(m, d, n) ------------------------------------- */

/* m messages of n bytes from 0 to 1 with a delay of d between them, one n-byte reply */
static void cc_prtt_run(cc_point *pt, long count)
{
    const int n = (int)pt->n, m = CC_LOGGP_M;
    const MPI_Comm c = pt->comm;
    const int64_t d = pt->delay_ns;
    if (pt->rank == 0) {
        for (long k = 0; k < count; k++) {
            for (int i = 0; i < m; i++) {
                CC_MPI(MPI_Send(pt->sbuf, n, MPI_BYTE, 1, CC_TAG_DATA, c));
                if (d > 0 && i + 1 < m) cc_spin_ns(d);
            }
            CC_MPI(MPI_Recv(pt->rbuf, n, MPI_BYTE, 1, CC_TAG_DATA, c, MPI_STATUS_IGNORE));
        }
    } else {
        for (long k = 0; k < count; k++) {
            for (int i = 0; i < m; i++)
                CC_MPI(MPI_Recv(pt->rbuf, n, MPI_BYTE, 0, CC_TAG_DATA, c, MPI_STATUS_IGNORE));
            CC_MPI(MPI_Send(pt->sbuf, n, MPI_BYTE, 0, CC_TAG_DATA, c));
        }
    }
}

static const cc_op cc_loggp_prtt = {.name = "loggp/prtt", .scope = CC_SCOPE_PAIR, .phases = 1, .run = cc_prtt_run};
static const cc_op cc_loggp_recv_overhead = {.name = "loggp/o_r", .scope = CC_SCOPE_PAIR, .phases = 1,
                                          .before = cc_recv_overhead_before, .run = cc_late_receiver_run};

/* one more measurement with the point's limits (its plan entry's precision and fewest
 * samples, its share of max-time); its median on rank 0, its samples in *reps */
static double cc_loggp_phase(const cc_point *pt, const cc_op *op, int64_t delay_ns, int timed_by, long *reps)
{
    const cc_limits lim = *pt->limits;
    cc_point sub = *pt;
    sub.op = op;
    sub.scale = 1.0;
    sub.delay_ns = delay_ns;
    sub.timed = sub.rank == timed_by;
    cc_series s;
    cc_measure(&sub, &lim, &s);
    double median = s.median_us;
    *reps = s.n;
    cc_series_free(&s);
    return median;
}

static void cc_loggp_extra(cc_point *pt, double main_median_us, cc_buf *json)
{
    const int m = CC_LOGGP_M;
    double prtt1 = 2.0 * main_median_us; /* rank 0 */
    long reps[3] = {0, 0, 0};
    double prttm = cc_loggp_phase(pt, &cc_loggp_prtt, 0, 0, &reps[0]);
    /* o_s and o_r are the model's below the rendezvous threshold only: past
     * --loggp-overheads-below the point keeps its gap (the same answer on every rank) */
    const long below = pt->env->opt->loggp_overheads_below;
    const int overheads = below == 0 || pt->n < (size_t)below;
    double prttmd = 0.0, o_r = 0.0;
    int64_t d_ns = 0;
    if (overheads) {
        /* d >= PRTT(1,0,n), so the sender's delay, not the network, spaces the messages */
        d_ns = pt->rank == 0 ? (int64_t)ceil(prtt1 * 1000.0) : 0;
        CC_MPI(MPI_Bcast(&d_ns, 1, MPI_INT64_T, 0, pt->ctl));
        prttmd = cc_loggp_phase(pt, &cc_loggp_prtt, d_ns, 0, &reps[1]);
        /* the receiver waits d (per message of a batch) so the data has arrived */
        o_r = cc_loggp_phase(pt, &cc_loggp_recv_overhead, d_ns, 1, &reps[2]);
    }
    if (pt->rank != 0) return;
    cc_buf_key(json, "prtt1_us");
    cc_buf_num(json, prtt1);
    cc_buf_key(json, "prttm_us");
    cc_buf_num(json, prttm);
    cc_buf_key(json, "m");
    cc_buf_printf(json, "%d", m);
    cc_buf_key(json, "gap_us");
    cc_buf_num(json, (prttm - prtt1) / (m - 1));
    if (overheads) {
        const double d_us = (double)d_ns / 1000.0;
        cc_buf_key(json, "prttmd_us");
        cc_buf_num(json, prttmd);
        cc_buf_key(json, "d_us");
        cc_buf_num(json, d_us);
        cc_buf_key(json, "o_s_us");
        cc_buf_num(json, (prttmd - prtt1) / (m - 1) - d_us);
        cc_buf_key(json, "o_r_us");
        cc_buf_num(json, o_r);
    }
    cc_buf_key(json, "phase_reps");
    cc_buf_printf(json, "[%ld,%ld,%ld]", reps[0], reps[1], reps[2]);
}

const cc_op cc_op_loggp = {
    .name = "loggp",
    .scope = CC_SCOPE_PAIR,
    .phases = 4, /* PRTT(1,0,n), PRTT(m,0,n), PRTT(m,d,n), o_r share max-time */
    .check_size = cc_p2p_check_size,
    .setup = cc_pingpong_setup, /* the main series is PRTT(1,0,n)/2: a standard-mode ping-pong */
    .before = cc_pingpong_before,
    .run = cc_pingpong_run,
    .fill = cc_p2p_fill,
    .check = cc_p2p_check,
    .extra = cc_loggp_extra,
    .cleanup = cc_pingpong_cleanup,
};
