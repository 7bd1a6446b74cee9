/* Operations of the active-message layer (am/) between ranks 0 and 1, on the
 * one timing loop: the SP-2 Active Messages study's benchmarks.
 *
 *   am_rtt       request + reply round trip, n = 4 bytes per argument word (4..16)
 *   am_store     blocking store of n bytes (latency)
 *   am_get       blocking get of n bytes (latency)
 *   am_pipe      1 MiB moved in stores of n bytes, blocking or async (pipelined):
 *                one sample is the time per store
 *   am_exchange  both ranks store n bytes to each other at once, blocking or async
 *   am_cost      the cost of a request, of handling a message with a reply, an
 *                empty poll, a poll per received message (n = 0)
 *   am_loss      async stores of n bytes with that fraction of datagrams dropped
 *
 * The endpoint opens at the first AM point (bootstrap: one MPI_Allgather on
 * the pair's control communicator) with a segment as large as the plan needs;
 * measured traffic never touches MPI.  Injected faults are off except in
 * am_loss: there, and only there, the end of a repetition is agreed through
 * MPI, since a rank that stops polling cannot retransmit. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_am_mpi.h"
#include "cc_measure.h"
#include "cc_ops_am.h"
#include "cc_verify.h"

/* why --cache cold cannot move these buffers */
#define CC_AM_BOUND "stores land in the active-message layer's one segment"

enum { CC_H_PING = 1, CC_H_PONG, CC_H_SINK, CC_H_STORED };
#define CC_AM_PIPE_BYTES ((size_t)1 << 20)

static cc_am_ep *cc_am;
static unsigned char *cc_am_seg;
static size_t cc_am_seg_len;
static cc_am_stats cc_am_before; /* at the point's setup: extra reports the difference */

/* what the handlers saw */
static struct {
    long pongs, served, sinks, stored;
    cc_am_word last_args[CC_AM_MAX_ARGS];
    int last_nargs;
    int bad_pong;
} cc_seen;

static void cc_on_ping(cc_am_token *t, const cc_am_word *a, int n, void *ctx)
{
    (void)ctx;
    memcpy(cc_seen.last_args, a, (size_t)n * sizeof *a);
    cc_seen.last_nargs = n;
    cc_seen.served++;
    cc_am_reply(t, CC_H_PONG, n, a);
}

static void cc_on_pong(cc_am_token *t, const cc_am_word *a, int n, void *ctx)
{
    (void)t, (void)ctx;
    if (n < 1 || a[0] != (cc_am_word)cc_seen.pongs) cc_seen.bad_pong = 1;
    cc_seen.pongs++;
}

static void cc_on_sink(cc_am_token *t, const cc_am_word *a, int n, void *ctx)
{
    (void)t, (void)a, (void)n, (void)ctx;
    cc_seen.sinks++;
}

static void cc_on_stored(cc_am_token *t, void *addr, size_t n, cc_am_word arg, void *ctx)
{
    (void)t, (void)addr, (void)n, (void)arg, (void)ctx;
    cc_seen.stored++;
}

static long cc_async_done;
static void cc_on_done(cc_am_ep *ep, int status, void *ctx)
{
    (void)ctx;
    if (status != CC_AM_OK) cc_die("active messages: %s", cc_am_error(ep));
    cc_async_done++;
}

/* every layer error ends the job with one line (the runner records the point as failed) */
static int cc_am_ok(int rc)
{
    if (rc < 0) cc_die("active messages: %s", cc_am_error(cc_am));
    return rc;
}

static void cc_poll_until(const long *counter, long target)
{
    while (*(volatile const long *)counter < target) cc_am_ok(cc_am_poll(cc_am));
}

/* Serving ranks count toward cumulative goals: one poll may already take the
 * next repetition's first message, so "count more than at the start" would
 * ask for one message too many at the end. */
static long cc_goal, cc_goal_pongs;
static void cc_serve(const long *counter, long count)
{
    cc_goal += count;
    cc_poll_until(counter, cc_goal);
}

/* the largest n of the plan's AM points: the segment every rank registers */
static size_t cc_am_plan_bytes(const cc_options *opt)
{
    size_t most = CC_AM_PIPE_BYTES;
    for (size_t e = 0; e < opt->nentries; e++) {
        if (strncmp(opt->entries[e].op->name, "am_", 3) != 0) continue;
        for (size_t k = 0; k < opt->entries[e].nsizes; k++)
            if (opt->entries[e].sizes[k] > most) most = opt->entries[e].sizes[k];
    }
    return most;
}

static void cc_am_open_once(cc_point *pt)
{
    if (cc_am) return;
    cc_am_config cfg;
    cc_am_config_default(&cfg);
    char err[CC_AM_ERRLEN] = "";
    if (cc_am_config_from_env(&cfg, err, sizeof err) != CC_AM_OK) cc_die("active messages: %s", err);
    memset(&cfg.faults, 0, sizeof cfg.faults); /* am_loss sets its own */
    cc_am_seg_len = cc_am_plan_bytes(pt->env->opt);
    cc_am_seg = cc_xalloc_pages(cc_am_seg_len);
    cfg.segment = cc_am_seg;
    cfg.segment_bytes = cc_am_seg_len;
    if (cc_am_init_mpi(pt->ctl, &cfg, &cc_am, err, sizeof err) != CC_AM_OK)
        cc_die("active messages: %s", err);
    cc_am_ok(cc_am_set_handler(cc_am, CC_H_PING, cc_on_ping, NULL));
    cc_am_ok(cc_am_set_handler(cc_am, CC_H_PONG, cc_on_pong, NULL));
    cc_am_ok(cc_am_set_handler(cc_am, CC_H_SINK, cc_on_sink, NULL));
    cc_am_ok(cc_am_set_bulk_handler(cc_am, CC_H_STORED, cc_on_stored, NULL));
}

static const char *cc_am_check_size(size_t n, int p, int variant, char *why, size_t whylen)
{
    (void)variant;
    if (p < 2) {
        snprintf(why, whylen, "needs at least 2 processes");
        return why;
    }
    (void)n;
    return NULL;
}

static int cc_peer(const cc_point *pt) { return 1 - pt->rank; }

/* common setup: the endpoint, a send buffer of n bytes, rank 0 timed.  rbuf
 * is the segment where stores land (verified there), or a buffer of its own. */
static void cc_am_setup_common(cc_point *pt, int gets)
{
    cc_am_open_once(pt);
    cc_am_get_stats(cc_am, &cc_am_before);
    cc_goal = 0; /* each run's serving side counts from here (cc_serve) */
    cc_seen.served = cc_seen.sinks = cc_seen.stored = 0;
    cc_goal_pongs = cc_seen.pongs;
    pt->sbuf_len = pt->n;
    pt->sbuf = cc_xalloc_pages(pt->sbuf_len);
    pt->rbuf_len = pt->n;
    pt->rbuf = gets ? cc_xalloc_pages(pt->n) : cc_am_seg;
    pt->timed = pt->rank == 0;
    pt->scale = 1.0;
}

/* Both ranks poll until both have everything they sent acknowledged: a rank
 * that stopped polling early could not answer its peer's keep-alive.  Each
 * says "quiet" through MPI and keeps polling until it hears the other's. */
static void cc_am_settle(cc_point *pt)
{
    MPI_Request reqs[2];
    int sent = 0, done = 0;
    CC_MPI(MPI_Irecv(pt->ack + 1, 0, MPI_BYTE, cc_peer(pt), CC_TAG_ACK, pt->ctl, &reqs[1]));
    while (!sent || !done) {
        cc_am_ok(cc_am_poll(cc_am));
        if (!sent && cc_am_quiet(cc_am)) {
            CC_MPI(MPI_Isend(pt->ack, 0, MPI_BYTE, cc_peer(pt), CC_TAG_ACK, pt->ctl, &reqs[0]));
            sent = 1;
        }
        if (!done) CC_MPI(MPI_Test(&reqs[1], &done, MPI_STATUS_IGNORE));
    }
    CC_MPI(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
}

static void cc_am_cleanup(cc_point *pt)
{
    /* nothing of this point may still be in flight when the next one starts */
    cc_am_settle(pt);
    cc_free_pages(pt->sbuf);
    if (pt->rbuf != cc_am_seg) cc_free_pages(pt->rbuf);
    pt->sbuf = pt->rbuf = NULL;
}

/* what the layer had to do for this point */
static void cc_am_extra(cc_point *pt, double median_us, cc_buf *json)
{
    (void)median_us;
    cc_am_stats now;
    cc_am_get_stats(cc_am, &now);
    unsigned long long mine[3] = {now.retransmitted - cc_am_before.retransmitted,
                                  now.keepalives_sent - cc_am_before.keepalives_sent,
                                  now.injected_losses - cc_am_before.injected_losses};
    unsigned long long sum[3];
    CC_MPI(MPI_Reduce(mine, sum, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, pt->ctl));
    if (pt->rank != 0) return;
    cc_buf_key(json, "am_retransmitted");
    cc_buf_printf(json, "%llu", sum[0]);
    cc_buf_key(json, "am_keepalives");
    cc_buf_printf(json, "%llu", sum[1]);
    cc_buf_key(json, "am_injected_losses");
    cc_buf_printf(json, "%llu", sum[2]);
}

/* the receiver of stores verifies the segment, the others nothing */
static void cc_am_store_fill(cc_point *pt)
{
    cc_fill_bytes(pt->sbuf, pt->n, pt->rank, 0, pt->seed);
    cc_poison_bytes(cc_am_seg, pt->n, cc_peer(pt), 0, pt->seed);
    pt->check_off = 0;
    pt->check_len = pt->rank == 1 ? pt->n : 0;
}

static int cc_am_bytes_check(const cc_point *pt, char *err, size_t errlen)
{
    if (pt->check_len == 0) return 0;
    return cc_check_bytes(pt->rbuf, pt->check_len, cc_peer(pt), 0, pt->seed, pt->rank, 0, err, errlen);
}

/* ---- am_rtt ------------------------------------------------------------- */

static const char *cc_rtt_check_size(size_t n, int p, int variant, char *why, size_t whylen)
{
    if (cc_am_check_size(n, p, variant, why, whylen)) return why;
    if (n < 4 || n > 16 || n % 4) {
        snprintf(why, whylen, "n is 4 bytes per argument word: 4, 8, 12 or 16");
        return why;
    }
    return NULL;
}

static void cc_rtt_setup(cc_point *pt)
{
    cc_am_setup_common(pt, 1);
    pt->window = (long)(pt->n / 4); /* words */
}

static void cc_rtt_run(cc_point *pt, long count)
{
    const int words = (int)pt->window;
    if (pt->rank == 1) {
        cc_serve(&cc_seen.served, count);
        return;
    }
    for (long i = 0; i < count; i++) {
        const long want = cc_seen.pongs + 1;
        cc_am_word args[4] = {(cc_am_word)cc_seen.pongs, 1, 2, 3};
        cc_am_ok(cc_am_request(cc_am, 1, CC_H_PING, words, args));
        cc_poll_until(&cc_seen.pongs, want);
    }
}

static void cc_rtt_fill(cc_point *pt)
{
    memset(cc_seen.last_args, 0xff, sizeof cc_seen.last_args);
    cc_seen.last_nargs = 0;
    cc_seen.bad_pong = 0;
    pt->check_len = 0;
}

static int cc_rtt_check(const cc_point *pt, char *err, size_t errlen)
{
    const int words = (int)pt->window;
    if (pt->rank == 0 && cc_seen.bad_pong) {
        snprintf(err, errlen, "rank 0: a reply came back out of order");
        return 1;
    }
    if (pt->rank == 1) {
        if (cc_seen.last_nargs != words) {
            snprintf(err, errlen, "rank 1: a request carried %d words, %d sent", cc_seen.last_nargs, words);
            return 1;
        }
        for (int k = 1; k < words; k++)
            if (cc_seen.last_args[k] != (cc_am_word)k) {
                snprintf(err, errlen, "rank 1: word %d is %u, expected %d", k, cc_seen.last_args[k], k);
                return 1;
            }
    }
    return 0;
}

const cc_op cc_op_am_rtt = {
    .name = "am_rtt",
    .scope = CC_SCOPE_PAIR,
    .check_size = cc_rtt_check_size,
    .setup = cc_rtt_setup,
    .run = cc_rtt_run,
    .fill = cc_rtt_fill,
    .check = cc_rtt_check,
    .extra = cc_am_extra,
    .cleanup = cc_am_cleanup,
    .bound_buffers = CC_AM_BOUND,
};

/* ---- am_store, am_get: blocking latency ----------------------------------- */

static void cc_store_setup(cc_point *pt) { cc_am_setup_common(pt, 0); }

static void cc_store_run(cc_point *pt, long count)
{
    if (pt->rank == 1) {
        cc_serve(&cc_seen.stored, count);
        return;
    }
    for (long i = 0; i < count; i++) cc_am_ok(cc_am_store(cc_am, 1, pt->sbuf, 0, pt->n, CC_H_STORED, 0));
}

const cc_op cc_op_am_store = {
    .name = "am_store",
    .scope = CC_SCOPE_PAIR,
    .check_size = cc_am_check_size,
    .setup = cc_store_setup,
    .run = cc_store_run,
    .fill = cc_am_store_fill,
    .check = cc_am_bytes_check,
    .extra = cc_am_extra,
    .cleanup = cc_am_cleanup,
    .bound_buffers = CC_AM_BOUND,
};

static void cc_get_setup(cc_point *pt) { cc_am_setup_common(pt, 1); }

static void cc_get_run(cc_point *pt, long count)
{
    if (pt->rank == 1) { /* serve the gets, and see their data acknowledged */
        cc_goal += count;
        for (;;) {
            cc_am_stats s;
            cc_am_get_stats(cc_am, &s);
            if ((long)(s.gets_served - cc_am_before.gets_served) >= cc_goal && cc_am_quiet(cc_am)) return;
            cc_am_ok(cc_am_poll(cc_am));
        }
    }
    for (long i = 0; i < count; i++) cc_am_ok(cc_am_get(cc_am, 1, 0, pt->rbuf, pt->n, -1, 0));
}

/* rank 1 serves its pattern from the segment; rank 0 checks what it got */
static void cc_get_fill(cc_point *pt)
{
    if (pt->rank == 1) cc_fill_bytes(cc_am_seg, pt->n, 1, 0, pt->seed);
    if (pt->rank == 0) cc_poison_bytes(pt->rbuf, pt->n, 1, 0, pt->seed);
    pt->check_off = 0;
    pt->check_len = pt->rank == 0 ? pt->n : 0;
}

const cc_op cc_op_am_get = {
    .name = "am_get",
    .scope = CC_SCOPE_PAIR,
    .check_size = cc_am_check_size,
    .setup = cc_get_setup,
    .run = cc_get_run,
    .fill = cc_get_fill,
    .check = cc_am_bytes_check,
    .extra = cc_am_extra,
    .cleanup = cc_am_cleanup,
    .bound_buffers = CC_AM_BOUND,
};

/* ---- am_pipe: 1 MiB in stores of n, blocking or pipelined ------------------ */

enum { CC_PIPE_BLOCKING, CC_PIPE_ASYNC };
static const char *const cc_pipe_variants[] = {"blocking", "async", NULL};

static const char *cc_pipe_check_size(size_t n, int p, int variant, char *why, size_t whylen)
{
    if (cc_am_check_size(n, p, variant, why, whylen)) return why;
    if (n == 0) {
        snprintf(why, whylen, "moves 1 MiB in stores of n bytes: n must be positive");
        return why;
    }
    return NULL;
}

static void cc_pipe_setup(cc_point *pt)
{
    cc_am_setup_common(pt, 0);
    /* stores per repetition; one sample is the time per store */
    pt->window = pt->n >= CC_AM_PIPE_BYTES ? 1 : (long)(CC_AM_PIPE_BYTES / pt->n);
    pt->scale = 1.0 / (double)pt->window;
}

static void cc_pipe_stores(cc_point *pt, long count, int async, int dest)
{
    const long k = pt->window;
    for (long c = 0; c < count; c++) {
        for (long i = 0; i < k; i++) {
            const size_t off = (size_t)i * pt->n; /* consecutive pieces of the 1 MiB */
            if (async)
                cc_am_ok(cc_am_store_async(cc_am, dest, pt->sbuf, off, pt->n, CC_H_STORED, 0, cc_on_done, NULL));
            else
                cc_am_ok(cc_am_store(cc_am, dest, pt->sbuf, off, pt->n, CC_H_STORED, 0));
        }
    }
    if (async) cc_am_ok(cc_am_wait_all(cc_am));
}

static void cc_pipe_run(cc_point *pt, long count)
{
    if (pt->rank == 1) {
        cc_serve(&cc_seen.stored, count * pt->window);
        return;
    }
    cc_pipe_stores(pt, count, pt->variant == CC_PIPE_ASYNC, 1);
}

const cc_op cc_op_am_pipe = {
    .name = "am_pipe",
    .variants = cc_pipe_variants,
    .scope = CC_SCOPE_PAIR,
    .check_size = cc_pipe_check_size,
    .setup = cc_pipe_setup,
    .run = cc_pipe_run,
    .fill = cc_am_store_fill,
    .check = cc_am_bytes_check,
    .extra = cc_am_extra,
    .cleanup = cc_am_cleanup,
    .bound_buffers = CC_AM_BOUND,
};

/* ---- am_exchange: both ranks store at once --------------------------------- */

static void cc_exchange_setup(cc_point *pt)
{
    cc_am_setup_common(pt, 0);
    pt->timed = 1; /* the exchange ends when both ranks have their data */
}

static void cc_exchange_run(cc_point *pt, long count)
{
    const int async = pt->variant == CC_PIPE_ASYNC;
    for (long c = 0; c < count; c++) {
        if (async)
            cc_am_ok(cc_am_store_async(cc_am, cc_peer(pt), pt->sbuf, 0, pt->n, CC_H_STORED, 0, cc_on_done, NULL));
        else
            cc_am_ok(cc_am_store(cc_am, cc_peer(pt), pt->sbuf, 0, pt->n, CC_H_STORED, 0));
    }
    if (async) cc_am_ok(cc_am_wait_all(cc_am));
    cc_serve(&cc_seen.stored, count);
}

static void cc_exchange_fill(cc_point *pt)
{
    cc_am_store_fill(pt);
    pt->check_len = pt->n; /* both ranks receive */
}

const cc_op cc_op_am_exchange = {
    .name = "am_exchange",
    .variants = cc_pipe_variants,
    .scope = CC_SCOPE_PAIR,
    .check_size = cc_am_check_size,
    .setup = cc_exchange_setup,
    .run = cc_exchange_run,
    .fill = cc_exchange_fill,
    .check = cc_am_bytes_check,
    .extra = cc_am_extra,
    .cleanup = cc_am_cleanup,
    .bound_buffers = CC_AM_BOUND,
};

/* ---- am_cost: the cost of one call -------------------------------------- */

enum { CC_COST_REQUEST, CC_COST_REPLY, CC_COST_POLL_EMPTY, CC_COST_POLL_MSG };
static const char *const cc_cost_variants[] = {"request", "reply", "poll_empty", "poll_msg", NULL};
/* at most this many messages wait for the receiver at a repetition's start */
#define CC_COST_QUEUED 32

static const char *cc_cost_check_size(size_t n, int p, int variant, char *why, size_t whylen)
{
    if (cc_am_check_size(n, p, variant, why, whylen)) return why;
    if (n != 0) {
        snprintf(why, whylen, "measures single calls: n must be 0");
        return why;
    }
    return NULL;
}

static void cc_cost_setup(cc_point *pt)
{
    cc_am_setup_common(pt, 1);
    const int receiver = pt->variant == CC_COST_REPLY || pt->variant == CC_COST_POLL_MSG;
    pt->timed = receiver ? pt->rank == 1 : pt->rank == 0;
}

/* reply and poll_msg time the receiver: its messages are sent before the
 * repetition (untimed) so that they wait in its socket.  Through MPI, rank 1
 * says it has finished the last repetition (so it cannot take these early)
 * and rank 0 says they have all been sent. */
static void cc_cost_before(cc_point *pt)
{
    if (pt->variant != CC_COST_REPLY && pt->variant != CC_COST_POLL_MSG) return;
    const long queued = pt->batch < CC_COST_QUEUED ? pt->batch : CC_COST_QUEUED;
    const int handler = pt->variant == CC_COST_REPLY ? CC_H_PING : CC_H_SINK;
    if (pt->rank == 0) {
        CC_MPI(MPI_Recv(pt->ack, 0, MPI_BYTE, 1, CC_TAG_READY, pt->ctl, MPI_STATUS_IGNORE));
        for (long i = 0; i < queued; i++)
            cc_am_ok(cc_am_request_1(cc_am, 1, handler, (cc_am_word)(cc_seen.pongs + i)));
        CC_MPI(MPI_Send(pt->ack, 0, MPI_BYTE, 1, CC_TAG_READY, pt->ctl));
    } else {
        CC_MPI(MPI_Send(pt->ack, 0, MPI_BYTE, 0, CC_TAG_READY, pt->ctl));
        CC_MPI(MPI_Recv(pt->ack, 0, MPI_BYTE, 0, CC_TAG_READY, pt->ctl, MPI_STATUS_IGNORE));
        /* MPI's word can overtake the datagrams (loopback hands them to the
         * socket from a deferred softirq): wait until they are there, at most 10 ms */
        const int64_t give_up = cc_now_ns() + 10000000;
        while (!cc_am_pending(cc_am) && cc_now_ns() < give_up) {}
    }
}

static void cc_cost_run(cc_point *pt, long count)
{
    const int rank = pt->rank;
    switch (pt->variant) {
    case CC_COST_REQUEST:
        if (rank == 0)
            for (long i = 0; i < count; i++) cc_am_ok(cc_am_request_1(cc_am, 1, CC_H_SINK, 0));
        else
            cc_serve(&cc_seen.sinks, count);
        break;
    case CC_COST_POLL_EMPTY:
        if (rank == 0)
            for (long i = 0; i < count; i++) cc_am_ok(cc_am_poll(cc_am));
        break;
    case CC_COST_REPLY:
    case CC_COST_POLL_MSG: {
        /* before queued min(batch, CC_COST_QUEUED) messages: rank 0 sends what
         * did not fit, and the repetition takes all (the measurement loop's
         * untimed single repetition takes a whole queue) */
        const long queued = pt->batch < CC_COST_QUEUED ? pt->batch : CC_COST_QUEUED;
        const int reply = pt->variant == CC_COST_REPLY;
        if (count < queued) count = queued;
        if (rank == 0) {
            for (long i = queued; i < count; i++)
                cc_am_ok(cc_am_request_1(cc_am, 1, reply ? CC_H_PING : CC_H_SINK,
                                         (cc_am_word)(cc_seen.pongs + i)));
            if (reply) {
                cc_goal_pongs += count;
                cc_poll_until(&cc_seen.pongs, cc_goal_pongs);
            }
        } else {
            cc_serve(reply ? &cc_seen.served : &cc_seen.sinks, count);
        }
        break;
    }
    }
}

static void cc_cost_fill(cc_point *pt) { pt->check_len = 0; }

const cc_op cc_op_am_cost = {
    .name = "am_cost",
    .variants = cc_cost_variants,
    .scope = CC_SCOPE_PAIR,
    .check_size = cc_cost_check_size,
    .setup = cc_cost_setup,
    .before = cc_cost_before,
    .run = cc_cost_run,
    .fill = cc_cost_fill,
    .extra = cc_am_extra,
    .cleanup = cc_am_cleanup,
    .bound_buffers = CC_AM_BOUND,
};

/* ---- am_loss: throughput under injected loss --------------------------- */

static const char *const cc_loss_variants[] = {"0", "0.001", "0.01", "0.05", "0.1", NULL};

static void cc_loss_setup(cc_point *pt)
{
    cc_am_setup_common(pt, 0);
    cc_am_faults f;
    memset(&f, 0, sizeof f);
    f.loss = strtod(pt->variant_name, NULL);
    f.seed = (uint64_t)pt->seed;
    cc_am_set_faults(cc_am, &f);
}

static void cc_loss_cleanup(cc_point *pt)
{
    cc_am_faults none;
    memset(&none, 0, sizeof none);
    cc_am_cleanup(pt); /* settles with the faults still on */
    cc_am_set_faults(cc_am, &none);
}

static void cc_loss_run(cc_point *pt, long count)
{
    if (pt->rank == 0) {
        for (long c = 0; c < count; c++)
            cc_am_ok(cc_am_store_async(cc_am, 1, pt->sbuf, 0, pt->n, CC_H_STORED, 0, cc_on_done, NULL));
        cc_am_ok(cc_am_wait_all(cc_am));
        /* everything is acknowledged: rank 1 may stop polling */
        CC_MPI(MPI_Send(pt->ack, 0, MPI_BYTE, 1, CC_TAG_READY, pt->ctl));
        return;
    }
    MPI_Request done;
    int flag = 0;
    CC_MPI(MPI_Irecv(pt->ack, 0, MPI_BYTE, 0, CC_TAG_READY, pt->ctl, &done));
    while (!flag) {
        cc_am_ok(cc_am_poll(cc_am));
        CC_MPI(MPI_Test(&done, &flag, MPI_STATUS_IGNORE));
    }
}

const cc_op cc_op_am_loss = {
    .name = "am_loss",
    .variants = cc_loss_variants,
    .scope = CC_SCOPE_PAIR,
    .check_size = cc_am_check_size,
    .setup = cc_loss_setup,
    .run = cc_loss_run,
    .fill = cc_am_store_fill,
    .check = cc_am_bytes_check,
    .extra = cc_am_extra,
    .cleanup = cc_loss_cleanup,
    .bound_buffers = CC_AM_BOUND,
};
