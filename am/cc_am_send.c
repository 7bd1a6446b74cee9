/* What leaves a rank: the queue of each channel, pumped while its window and
 * chunk limit allow, acknowledgements and go-back retransmission, and bulk
 * transfers cut into chunks (cc_am_recv.c has the receiving side).
 *
 * A transfer moves in chunks of chunk_packets datagrams.  All datagrams of a
 * chunk share one sequence number of their channel (stores: requests; get
 * data: replies), the receiver acknowledges each complete chunk, and at most
 * chunks_in_flight chunks of a channel are unacknowledged: the next leaves
 * when the one before last is acknowledged.  Data goes from the sender's
 * memory straight into datagrams (no copy is retained: an asynchronous
 * store's source must stay untouched until its completion). */
#include "cc_am_send.h"

#include <stdlib.h>
#include <string.h>

void cc_am_unlink(cc_am_ep *ep, cc_am_xfer *x)
{
    if (x->prev_active)
        x->prev_active->next_active = x->next_active;
    else
        ep->active = x->next_active;
    if (x->next_active) x->next_active->prev_active = x->prev_active;
    x->next_active = x->prev_active = NULL;
    if (x->done || x->waited) ep->user_xfers--;
}

void cc_am_xfer_finish(cc_am_ep *ep, cc_am_xfer *x, int status)
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

cc_am_xfer *cc_am_xfer_new(cc_am_ep *ep, int peer, int chan, const void *src, size_t n)
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

/* send what waits in the channel's queue while its window (and chunk limit) allow */
void cc_am_pump(cc_am_ep *ep, int peer, int chan)
{
    cc_am_send *s = &ep->peers[peer].snd[chan];
    cc_am_item *it;
    while ((it = s->head) != NULL && cc_am_window_free(s)) {
        if (it->xfer) {
            if (s->chunks >= ep->cfg.chunks_in_flight &&
                it->xfer->n - it->xfer->next_off > ep->cfg.packet_bytes)
                break;
            cc_am_send_chunk(ep, peer, chan, it->xfer);
            if (it->xfer->next_off < it->xfer->n) continue;
        } else {
            cc_am_send_data(ep, peer, chan, &it->pkt, NULL, NULL);
        }
        s->head = it->next;
        if (!s->head) s->tail = NULL;
        free(it);
    }
}

int cc_am_enqueue(cc_am_ep *ep, int peer, int chan, const cc_am_pkt *pkt, cc_am_xfer *xfer)
{
    cc_am_send *s = &ep->peers[peer].snd[chan];
    if (!xfer && !s->head && cc_am_window_free(s)) { /* the common case: straight out */
        cc_am_send_data(ep, peer, chan, pkt, NULL, NULL);
        return CC_AM_OK;
    }
    cc_am_item *it = calloc(1, sizeof *it);
    if (!it) return cc_am_fail(ep, CC_AM_ENOMEM, "out of memory queueing a message");
    if (pkt) it->pkt = *pkt;
    it->xfer = xfer;
    if (s->tail)
        s->tail->next = it;
    else
        s->head = it;
    s->tail = it;
    cc_am_pump(ep, peer, chan);
    return CC_AM_OK;
}

void cc_am_acked(cc_am_ep *ep, int peer, int chan, uint32_t ack, int64_t now)
{
    cc_am_send *s = &ep->peers[peer].snd[chan];
    if (!cc_am_seq_before(s->una, ack) || cc_am_seq_before(s->next, ack)) return;
    while (s->una != ack) {
        cc_am_slot *slot = &s->ring[s->una % (uint32_t)s->window];
        s->una++;
        if (slot->xfer) {
            cc_am_xfer *x = slot->xfer;
            slot->xfer = NULL;
            if (slot->pkt.b.nfrags > 1) s->chunks--;
            cc_am_xfer_chunk_acked(ep, x);
        }
    }
    s->probe_due_ns = now + (int64_t)(ep->cfg.keepalive_us * 1e3);
    if (s->head) cc_am_pump(ep, peer, chan);
}

void cc_am_go_back(cc_am_ep *ep, int peer, int chan, uint32_t from, uint8_t round, int64_t now)
{
    cc_am_send *s = &ep->peers[peer].snd[chan];
    cc_am_acked(ep, peer, chan, from, now);
    if (round != s->round || s->una == s->next || s->una != from) return;
    s->round++;
    for (uint32_t seq = s->una; seq != s->next; seq++) {
        cc_am_transmit(ep, peer, &s->ring[seq % (uint32_t)s->window]);
        ep->stats.retransmitted++;
    }
    s->probe_due_ns = now + (int64_t)(ep->cfg.keepalive_us * 1e3);
}
