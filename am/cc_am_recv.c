/* What arrives in bulk: fragments placed where they belong (the segment, or a
 * get's destination), the next fragment predicted so the datagram layer can
 * receive it in place, gets served and completed, and a dead peer's transfers
 * ended. */
#include "cc_am_recv.h"

#include <stdlib.h>
#include <string.h>

int cc_am_get_slot_new(cc_am_ep *ep)
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

void cc_am_get_finish(cc_am_ep *ep, int id, int status)
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
