/* Bulk stores and gets.
 *
 * A transfer moves in chunks of chunk_packets datagrams.  All datagrams of a
 * chunk share one sequence number of their channel (stores: requests; get
 * data: replies), the receiver acknowledges each complete chunk, and at most
 * chunks_in_flight chunks of a channel are unacknowledged: the next leaves
 * when the one before last is acknowledged.  Data goes from the sender's
 * memory straight into datagrams (no copy is retained: an asynchronous
 * store's source must stay untouched until its completion). */
#include <stdlib.h>
#include <string.h>

#include "cc_am_internal.h"

static void cc_am_unlink(cc_am_ep *ep, cc_am_xfer *x)
{
    if (x->prev_active)
        x->prev_active->next_active = x->next_active;
    else
        ep->active = x->next_active;
    if (x->next_active) x->next_active->prev_active = x->prev_active;
    x->next_active = x->prev_active = NULL;
    if (x->done || x->waited) ep->user_xfers--;
}

static void cc_am_xfer_finish(cc_am_ep *ep, cc_am_xfer *x, int status)
{
    cc_am_unlink(ep, x);
    x->finished = 1;
    x->status = status;
    if (x->done) {
        ep->in_callback++;
        x->done(ep, status, x->ctx);
        ep->in_callback--;
    }
    if (!x->waited) free(x);
}

void cc_am_xfer_chunk_acked(cc_am_ep *ep, cc_am_xfer *x)
{
    x->inflight--;
    if (x->inflight == 0 && x->started && x->next_off >= x->n) cc_am_xfer_finish(ep, x, CC_AM_OK);
}

int cc_am_send_chunk(cc_am_ep *ep, int peer, int chan, cc_am_xfer *x)
{
    const size_t step = ep->cfg.packet_bytes, chunk = step * (size_t)ep->cfg.chunk_packets;
    const size_t len = x->n - x->next_off < chunk ? x->n - x->next_off : chunk;
    cc_am_pkt pkt;
    memset(&pkt, 0, sizeof pkt);
    pkt.h.type = CC_AM_T_CHUNK;
    pkt.h.handler = x->handler;
    pkt.h.nargs = 1;
    pkt.h.args[0] = x->arg;
    pkt.b.base = x->base;
    pkt.b.total = x->n;
    pkt.b.xoff = x->next_off;
    pkt.b.chunk_len = (uint32_t)len;
    pkt.b.xfer_id = x->id;
    pkt.b.nfrags = (uint16_t)(len ? (len + step - 1) / step : 1);
    const unsigned char *data = x->src ? x->src + x->next_off : NULL;
    x->next_off += len;
    /* the last chunk of a transfer someone waits for, or with nothing queued
     * behind it, asks for its acknowledgement at once */
    const cc_am_send *s = &ep->peers[peer].snd[chan];
    if (x->next_off >= x->n && (x->waited || !s->head || !s->head->next))
        pkt.h.flags |= CC_AM_F_ACK_NOW;
    x->started = 1;
    x->inflight++;
    cc_am_send_data(ep, peer, chan, &pkt, data, x);
    return CC_AM_OK;
}

static cc_am_xfer *cc_am_xfer_new(cc_am_ep *ep, int peer, int chan, const void *src, size_t n)
{
    cc_am_xfer *x = calloc(1, sizeof *x);
    if (!x) return NULL;
    x->peer = peer;
    x->chan = chan;
    x->src = src;
    x->n = n;
    x->next_active = ep->active;
    if (ep->active) ep->active->prev_active = x;
    ep->active = x;
    return x;
}

static int cc_am_check_bulk(cc_am_ep *ep, int dest, size_t offset, size_t n, const void *local,
                            const char *call)
{
    int rc = cc_am_check_peer(ep, dest, call);
    if (rc != CC_AM_OK) return rc;
    const uint64_t seg = ep->peers[dest].segment_bytes;
    if (offset > seg || n > seg - offset)
        return cc_am_fail(ep, CC_AM_ESEGMENT,
                          "%s: bytes [%zu, %zu) are outside rank %d's segment of %llu bytes", call,
                          offset, offset + n, dest, (unsigned long long)seg);
    if (n > 0 && local == NULL) return cc_am_fail(ep, CC_AM_EARG, "%s: NULL buffer", call);
    return CC_AM_OK;
}

static int cc_am_wait_xfer(cc_am_ep *ep, cc_am_xfer *x)
{
    int rc = CC_AM_OK;
    while (!x->finished && rc >= 0) rc = cc_am_progress(ep);
    if (!x->finished) return rc; /* a socket error: x stays owned by the endpoint */
    rc = x->status;
    if (rc == CC_AM_EDEAD)
        cc_am_fail(ep, rc, "rank %d: no answer for %g s: declared dead", x->peer,
                   ep->cfg.dead_after_s);
    free(x);
    return rc;
}

static int cc_am_store_start(cc_am_ep *ep, int dest, const void *src, size_t offset, size_t n,
                             int handler, cc_am_word arg, cc_am_done done, void *ctx, int wait,
                             const char *call)
{
    if (ep->in_handler || (wait && ep->in_callback))
        return cc_am_fail(ep, CC_AM_ECONTEXT, "%s: not inside a handler", call);
    int rc = cc_am_check_bulk(ep, dest, offset, n, src, call);
    if (rc != CC_AM_OK) return rc;
    if (handler < 0 || handler >= CC_AM_MAX_HANDLERS)
        return cc_am_fail(ep, CC_AM_EHANDLER, "%s: handler %d is not in [0, %d)", call, handler,
                          CC_AM_MAX_HANDLERS);
    cc_am_xfer *x = cc_am_xfer_new(ep, dest, CC_AM_REQ, src, n);
    if (!x) return cc_am_fail(ep, CC_AM_ENOMEM, "%s: out of memory", call);
    x->base = offset;
    x->handler = (uint8_t)handler;
    x->arg = arg;
    x->done = done;
    x->ctx = ctx;
    x->waited = wait;
    ep->user_xfers++;
    if ((rc = cc_am_enqueue(ep, dest, CC_AM_REQ, NULL, x)) != CC_AM_OK) {
        cc_am_unlink(ep, x);
        free(x);
        return rc;
    }
    if (!wait) return cc_am_progress(ep);
    return cc_am_wait_xfer(ep, x);
}

int cc_am_store(cc_am_ep *ep, int dest, const void *src, size_t remote_offset, size_t nbytes,
                int handler, cc_am_word arg)
{
    return cc_am_store_start(ep, dest, src, remote_offset, nbytes, handler, arg, NULL, NULL, 1,
                             "cc_am_store");
}

int cc_am_store_async(cc_am_ep *ep, int dest, const void *src, size_t remote_offset, size_t nbytes,
                      int handler, cc_am_word arg, cc_am_done done, void *ctx)
{
    return cc_am_store_start(ep, dest, src, remote_offset, nbytes, handler, arg, done, ctx, 0,
                             "cc_am_store_async");
}

/* ---- gets --------------------------------------------------------------- */

static int cc_am_get_slot_new(cc_am_ep *ep)
{
    for (int k = 0; k < ep->ngets; k++) { /* from where the last search stopped */
        int i = (ep->get_hint + k) % ep->ngets;
        if (!ep->gets[i].active) {
            ep->get_hint = i + 1;
            return i;
        }
    }
    int grown = ep->ngets ? 2 * ep->ngets : 16;
    cc_am_get_slot *more = realloc(ep->gets, (size_t)grown * sizeof *more);
    if (!more) return -1;
    memset(more + ep->ngets, 0, (size_t)(grown - ep->ngets) * sizeof *more);
    ep->gets = more;
    int id = ep->ngets;
    ep->ngets = grown;
    return id;
}

static void cc_am_get_finish(cc_am_ep *ep, int id, int status)
{
    cc_am_get_slot *g = &ep->gets[id];
    ep->peers[g->peer].gets--;
    ep->open_gets--;
    g->finished = 1;
    g->status = status;
    if (status == CC_AM_OK && g->handler >= 0) {
        cc_am_token tok = {ep, g->peer, 0, 0};
        ep->in_handler++;
        ep->handlers[g->handler].bulk(&tok, g->dst, g->n, g->arg, ep->handlers[g->handler].bulk_ctx);
        ep->in_handler--;
    }
    if (g->done) {
        cc_am_done done = g->done;
        void *ctx = g->ctx;
        g->active = 0; /* the callback may start another get in this slot */
        ep->in_callback++;
        done(ep, status, ctx);
        ep->in_callback--;
    } else if (!g->waited) {
        g->active = 0;
    }
}

static int cc_am_get_start(cc_am_ep *ep, int dest, size_t offset, void *dst, size_t n, int handler,
                           cc_am_word arg, cc_am_done done, void *ctx, int wait, const char *call)
{
    if (ep->in_handler || (wait && ep->in_callback))
        return cc_am_fail(ep, CC_AM_ECONTEXT, "%s: not inside a handler", call);
    int rc = cc_am_check_bulk(ep, dest, offset, n, dst, call);
    if (rc != CC_AM_OK) return rc;
    if (handler >= CC_AM_MAX_HANDLERS || (handler >= 0 && !ep->handlers[handler].bulk))
        return cc_am_fail(ep, CC_AM_EHANDLER, "%s: no bulk handler %d registered here", call, handler);
    int id = cc_am_get_slot_new(ep);
    if (id < 0) return cc_am_fail(ep, CC_AM_ENOMEM, "%s: out of memory", call);
    cc_am_get_slot *g = &ep->gets[id];
    *g = (cc_am_get_slot){dst, n, 0, dest, handler < 0 ? -1 : handler, 1, 0, 0, wait, arg, done, ctx};
    ep->peers[dest].gets++;
    ep->open_gets++;
    cc_am_pkt pkt;
    memset(&pkt, 0, sizeof pkt);
    pkt.h.type = CC_AM_T_GET;
    pkt.h.nargs = 1;
    pkt.h.args[0] = (cc_am_word)id;
    pkt.b.base = offset;
    pkt.b.total = n;
    if ((rc = cc_am_enqueue(ep, dest, CC_AM_REQ, &pkt, NULL)) != CC_AM_OK) {
        ep->peers[dest].gets--;
        ep->open_gets--;
        g->active = 0;
        return rc;
    }
    if (!wait) return cc_am_progress(ep);
    rc = CC_AM_OK;
    while (!ep->gets[id].finished && rc >= 0) rc = cc_am_progress(ep);
    g = &ep->gets[id]; /* the table may have moved */
    if (!g->finished) return rc;
    g->active = 0;
    if (g->status == CC_AM_EDEAD)
        return cc_am_fail(ep, CC_AM_EDEAD, "%s: rank %d: no answer for %g s: declared dead", call,
                          dest, ep->cfg.dead_after_s);
    if (g->status == CC_AM_ESEGMENT)
        return cc_am_fail(ep, CC_AM_ESEGMENT, "%s: rank %d refused bytes [%zu, %zu) of its segment",
                          call, dest, offset, offset + n);
    return g->status;
}

int cc_am_get(cc_am_ep *ep, int dest, size_t remote_offset, void *dst, size_t nbytes, int handler,
              cc_am_word arg)
{
    return cc_am_get_start(ep, dest, remote_offset, dst, nbytes, handler, arg, NULL, NULL, 1,
                           "cc_am_get");
}

int cc_am_get_async(cc_am_ep *ep, int dest, size_t remote_offset, void *dst, size_t nbytes,
                    int handler, cc_am_word arg, cc_am_done done, void *ctx)
{
    return cc_am_get_start(ep, dest, remote_offset, dst, nbytes, handler, arg, done, ctx, 0,
                           "cc_am_get_async");
}

/* the owner of the segment: answer a get with its data, on the reply channel */
void cc_am_deliver_get(cc_am_ep *ep, int peer, const cc_am_pkt *pkt)
{
    const uint64_t off = pkt->b.base, n = pkt->b.total;
    if (off > ep->cfg.segment_bytes || n > ep->cfg.segment_bytes - off) {
        cc_am_pkt err;
        memset(&err, 0, sizeof err);
        err.h.type = CC_AM_T_GETERR;
        err.h.nargs = 1;
        err.h.args[0] = pkt->h.args[0];
        cc_am_enqueue(ep, peer, CC_AM_REP, &err, NULL);
        return;
    }
    cc_am_xfer *x = cc_am_xfer_new(ep, peer, CC_AM_REP, (unsigned char *)ep->cfg.segment + off, n);
    if (!x) return; /* the origin's keep-alive will ask again */
    x->id = pkt->h.args[0];
    cc_am_enqueue(ep, peer, CC_AM_REP, NULL, x);
}

void cc_am_deliver_geterr(cc_am_ep *ep, int peer, const cc_am_pkt *pkt)
{
    const uint32_t id = pkt->h.args[0];
    if ((int)id < ep->ngets && ep->gets[id].active && !ep->gets[id].finished && ep->gets[id].peer == peer)
        cc_am_get_finish(ep, (int)id, CC_AM_ESEGMENT);
}

/* where a fragment's bytes go, or NULL when they belong nowhere */
static unsigned char *cc_am_bulk_target(cc_am_ep *ep, int peer, int chan, const cc_am_pkt *pkt)
{
    const cc_am_bulk_hdr *b = &pkt->b;
    if (b->nfrags == 0 || b->nfrags > CC_AM_MAX_CHUNK_PACKETS || b->frag >= b->nfrags ||
        (uint64_t)b->frag_off + b->frag_len > b->chunk_len || b->xoff + b->chunk_len > b->total)
        return NULL;
    const uint64_t at = b->xoff + b->frag_off;
    if (chan == CC_AM_REQ) {
        const uint64_t seg = ep->cfg.segment_bytes;
        if (b->base > seg || b->total > seg - b->base) return NULL;
        return (unsigned char *)ep->cfg.segment + b->base + at;
    }
    const uint32_t id = b->xfer_id;
    if ((int)id >= ep->ngets) return NULL;
    cc_am_get_slot *g = &ep->gets[id];
    if (!g->active || g->finished || g->peer != peer || g->n != b->total) return NULL;
    return g->dst + at;
}

/* The next fragment of the transfer pkt belongs to: the lowest one of its
 * chunk not yet received, else the first of the next chunk, else none. */
void cc_am_predict(cc_am_ep *ep, int peer, int chan, const cc_am_pkt *pkt, int complete)
{
    const cc_am_recv *r = &ep->peers[peer].rcv[chan];
    const uint32_t step = (uint32_t)ep->cfg.packet_bytes;
    cc_am_pkt next = *pkt;
    ep->predict.valid = 0;
    if (!complete) {
        int f = 0;
        while (f < pkt->b.nfrags && (r->chunk_bits >> f & 1)) f++;
        if (f == pkt->b.nfrags) return;
        next.b.frag = (uint16_t)f;
    } else {
        const uint64_t xoff = pkt->b.xoff + pkt->b.chunk_len, chunk = (uint64_t)step * (uint64_t)ep->cfg.chunk_packets;
        if (xoff >= pkt->b.total) return;
        next.h.seq = pkt->h.seq + 1;
        next.b.xoff = xoff;
        next.b.chunk_len = (uint32_t)(pkt->b.total - xoff < chunk ? pkt->b.total - xoff : chunk);
        next.b.nfrags = (uint16_t)((next.b.chunk_len + step - 1) / step);
        next.b.frag = 0;
    }
    next.b.frag_off = (uint32_t)next.b.frag * step;
    next.b.frag_len = next.b.chunk_len - next.b.frag_off < step ? next.b.chunk_len - next.b.frag_off : step;
    if (next.b.frag_len == 0) return;
    unsigned char *dst = cc_am_bulk_target(ep, peer, chan, &next);
    if (!dst) return;
    ep->predict.valid = 1;
    ep->predict.peer = peer;
    ep->predict.chan = chan;
    ep->predict.seq = next.h.seq;
    ep->predict.frag = next.b.frag;
    ep->predict.dst = dst;
    ep->predict.len = next.b.frag_len;
}

int cc_am_prediction_open(const cc_am_ep *ep)
{
    const cc_am_recv *r = &ep->peers[ep->predict.peer].rcv[ep->predict.chan];
    if (r->expect != ep->predict.seq) return 0;
    if (ep->predict.frag == 0 && r->chunk_bits == 0) return 1;
    return r->chunk_seq == ep->predict.seq && !(r->chunk_bits >> ep->predict.frag & 1);
}

void cc_am_deliver_bulk(cc_am_ep *ep, int peer, int chan, const cc_am_pkt *pkt,
                        const unsigned char *data, size_t len, int *complete)
{
    cc_am_recv *r = &ep->peers[peer].rcv[chan];
    const cc_am_bulk_hdr *b = &pkt->b;
    unsigned char *dst = len == b->frag_len ? cc_am_bulk_target(ep, peer, chan, pkt) : NULL;
    if (!dst && b->total > 0) {
        /* only a broken or foreign sender gets here: take the sequence number,
         * drop the data, say so */
        cc_am_fail(ep, CC_AM_ESEGMENT, "rank %d sent bulk data that fits nowhere here: dropped", peer);
        r->chunk_bits = 0;
        *complete = 1;
        return;
    }
    if (r->chunk_bits == 0 || r->chunk_seq != pkt->h.seq) {
        r->chunk_bits = 0;
        r->chunk_seq = pkt->h.seq;
    }
    const uint64_t bit = 1ULL << b->frag;
    if (!(r->chunk_bits & bit)) {
        if (len && dst != data) memcpy(dst, data, len);
        r->chunk_bits |= bit;
    }
    const uint64_t all = b->nfrags == 64 ? ~0ULL : (1ULL << b->nfrags) - 1;
    if (r->chunk_bits == all) {
        r->chunk_bits = 0;
        *complete = 1;
    }
}

void cc_am_bulk_arrived(cc_am_ep *ep, int peer, int chan, const cc_am_pkt *pkt)
{
    if (chan == CC_AM_REP) {
        const uint32_t id = pkt->b.xfer_id;
        if ((int)id < ep->ngets && ep->gets[id].active && !ep->gets[id].finished &&
            ep->gets[id].peer == peer)
            cc_am_get_finish(ep, (int)id, CC_AM_OK);
        return;
    }
    const int h = pkt->h.handler;
    if (!ep->handlers[h].bulk) {
        ep->handler_error = 1;
        cc_am_fail(ep, CC_AM_EHANDLER, "a store from rank %d names bulk handler %d, none registered here",
                   peer, h);
        return;
    }
    cc_am_token tok = {ep, peer, 1, 0};
    ep->in_handler++;
    ep->handlers[h].bulk(&tok, (unsigned char *)ep->cfg.segment + pkt->b.base, pkt->b.total,
                         pkt->h.args[0], ep->handlers[h].bulk_ctx);
    ep->in_handler--;
}

void cc_am_fail_peer_bulk(cc_am_ep *ep, int peer)
{
    for (cc_am_xfer *x = ep->active, *next; x; x = next) {
        next = x->next_active;
        if (x->peer == peer) cc_am_xfer_finish(ep, x, CC_AM_EDEAD);
    }
    for (int i = 0; i < ep->ngets; i++)
        if (ep->gets[i].active && !ep->gets[i].finished && ep->gets[i].peer == peer)
            cc_am_get_finish(ep, i, CC_AM_EDEAD);
}

int cc_am_bulk_busy(const cc_am_ep *ep) { return ep->active != NULL || ep->open_gets > 0; }

int cc_am_wait_all(cc_am_ep *ep)
{
    if (ep->in_handler || ep->in_callback)
        return cc_am_fail(ep, CC_AM_ECONTEXT, "cc_am_wait_all: not inside a handler");
    int failed = 0;
    /* not the data this rank serves to others' gets */
    while (ep->user_xfers > 0 || ep->open_gets > 0) {
        int rc = cc_am_progress(ep);
        if (rc < 0) return rc;
        if (ep->dead_reported) failed = 1;
    }
    if (failed) {
        ep->dead_reported = 0;
        return CC_AM_EDEAD;
    }
    return CC_AM_OK;
}
