/* Progress: datagrams received and dispatched, timers (keep-alive probes, dead
 * peers), and cc_am_poll.
 *
 * Per pair of ranks there are two channels, requests and replies, each with
 * its own sequence numbers and window.  The sender keeps every message until
 * it is acknowledged.  The receiver takes only the sequence number it
 * expects; anything later is dropped and answered with a NACK naming the
 * expected one, and the sender goes back and sends it and everything after it
 * again ("rounds" number these go-backs, so the NACKs of one loss trigger one
 * retransmission).  Every datagram carries the receiver-side state of both
 * channels as acknowledgements; an explicit ACK goes out when a quarter of a
 * window is unacknowledged, and after every bulk chunk.  A sender whose oldest
 * message waits longer than the keep-alive interval probes the receiver,
 * which answers with an ACK or a NACK: lost tails come back that way, and a
 * peer that answers nothing for dead_after_s is declared dead. */
#include "cc_am_progress.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define CC_AM_TIMER_NS 20000 /* how often polls look at timers */

static void cc_am_run_short(cc_am_ep *ep, int peer, int chan, const cc_am_hdr *h)
{
    cc_am_token tok = {ep, peer, chan == CC_AM_REQ, 0};
    if (!ep->handlers[h->handler].fn) {
        ep->handler_error = 1;
        cc_am_fail(ep, CC_AM_EHANDLER, "a message from rank %d names handler %d, none registered here",
                   peer, h->handler);
        return;
    }
    cc_am_word args[CC_AM_MAX_ARGS];
    memcpy(args, h->args, sizeof args);
    ep->in_handler++;
    ep->handlers[h->handler].fn(&tok, args, h->nargs, ep->handlers[h->handler].ctx);
    ep->in_handler--;
}

static void cc_am_answer_probe(cc_am_ep *ep, int peer, const cc_am_hdr *h)
{
    int nacked = 0;
    for (int c = 0; c < 2; c++) {
        if (cc_am_seq_before(ep->peers[peer].rcv[c].expect, h->args[c])) {
            cc_am_send_nack(ep, peer, c, (uint8_t)h->args[2 + c]);
            nacked = 1;
        }
    }
    if (!nacked) cc_am_send_ack(ep, peer);
}

static void cc_am_handle(cc_am_ep *ep, long len, const unsigned char *data, int64_t now)
{
    cc_am_pkt *pkt = (cc_am_pkt *)ep->rxbuf;
    cc_am_hdr *h = &pkt->h;
    if ((size_t)len < sizeof *h || h->magic != CC_AM_MAGIC || h->src >= ep->size) return;
    const int peer = h->src;
    cc_am_peer *p = &ep->peers[peer];
    if (p->dead) return;
    p->heard_ns = now;
    ep->stats.packets_received++;
    cc_am_acked(ep, peer, CC_AM_REQ, h->ack[CC_AM_REQ], now);
    cc_am_acked(ep, peer, CC_AM_REP, h->ack[CC_AM_REP], now);
    switch (h->type) {
    case CC_AM_T_ACK: return;
    case CC_AM_T_NACK:
        ep->stats.nacks_received++;
        cc_am_go_back(ep, peer, h->flags & 1, h->seq, h->round, now);
        return;
    case CC_AM_T_KEEPALIVE: cc_am_answer_probe(ep, peer, h); return;
    case CC_AM_T_SHORT:
    case CC_AM_T_GETERR: break;
    case CC_AM_T_GET:
    case CC_AM_T_CHUNK:
        if ((size_t)len < sizeof *pkt) return;
        break;
    default: return;
    }
    const int chan = h->flags & 1;
    cc_am_recv *r = &p->rcv[chan];
    if (h->seq != r->expect) {
        if (cc_am_seq_before(h->seq, r->expect)) {
            ep->stats.duplicates_dropped++;
        } else {
            ep->stats.out_of_order_dropped++;
            if (!(r->nacked && r->nack_seq == r->expect && r->nack_round == h->round))
                cc_am_send_nack(ep, peer, chan, h->round);
        }
        return;
    }
    if (h->type == CC_AM_T_CHUNK) {
        int complete = 0;
        cc_am_deliver_bulk(ep, peer, chan, pkt, data, (size_t)len - sizeof *pkt,
                           &complete);
        cc_am_predict(ep, peer, chan, pkt, complete);
        if (!complete) return;
        r->expect++;
        r->unacked++;
        ep->delivered++;
        if (pkt->b.xoff + pkt->b.chunk_len == pkt->b.total) cc_am_bulk_arrived(ep, peer, chan, pkt);
        /* chunks of several datagrams are acknowledged one by one; a single
         * datagram like any message, unless its sender waits for it */
        const int window = chan == CC_AM_REQ ? ep->cfg.request_window : ep->cfg.reply_window;
        if (r->unacked && (pkt->b.nfrags > 1 || (h->flags & CC_AM_F_ACK_NOW) || r->unacked >= window / 4))
            cc_am_send_ack(ep, peer);
        return;
    }
    r->expect++;
    r->unacked++;
    ep->delivered++;
    if (h->type == CC_AM_T_SHORT)
        cc_am_run_short(ep, peer, chan, h);
    else if (h->type == CC_AM_T_GET)
        ep->stats.gets_served++, cc_am_deliver_get(ep, peer, pkt);
    else
        cc_am_deliver_geterr(ep, peer, pkt);
    const int window = chan == CC_AM_REQ ? ep->cfg.request_window : ep->cfg.reply_window;
    if (r->unacked >= window / 4) cc_am_send_ack(ep, peer);
}

static void cc_am_declare_dead(cc_am_ep *ep, int peer)
{
    cc_am_peer *p = &ep->peers[peer];
    p->dead = 1;
    ep->dead_reported = 1;
    ep->predict.valid = 0;
    cc_am_fail(ep, CC_AM_EDEAD, "rank %d: no answer for %g s: declared dead", peer,
               ep->cfg.dead_after_s);
    for (int c = 0; c < 2; c++) {
        cc_am_send *s = &p->snd[c];
        while (s->head) {
            cc_am_item *it = s->head;
            s->head = it->next;
            free(it);
        }
        s->tail = NULL;
        for (; s->una != s->next; s->una++) s->ring[s->una % (uint32_t)s->window].xfer = NULL;
        s->chunks = 0;
    }
    cc_am_fail_peer_bulk(ep, peer);
}

static void cc_am_timers(cc_am_ep *ep, int64_t now)
{
    const int64_t dead_ns = (int64_t)(ep->cfg.dead_after_s * 1e9);
    for (int i = 0; i < ep->size; i++) {
        cc_am_peer *p = &ep->peers[i];
        if (p->dead) continue;
        int waiting = p->gets > 0, probe = 0;
        for (int c = 0; c < 2; c++) {
            cc_am_send *s = &p->snd[c];
            if (s->una == s->next) continue;
            waiting = 1;
            if (now >= s->probe_due_ns) probe = 1;
        }
        if (waiting && now - p->heard_ns > dead_ns) {
            cc_am_declare_dead(ep, i);
            continue;
        }
        if (probe) {
            cc_am_send_probe(ep, i);
            const int64_t due = now + (int64_t)(ep->cfg.keepalive_us * 1e3);
            p->snd[0].probe_due_ns = p->snd[1].probe_due_ns = due;
        }
    }
}

int cc_am_progress(cc_am_ep *ep)
{
    const int64_t now = cc_am_now_ns();
    if (now - ep->polled_ns > (int64_t)(ep->cfg.dead_after_s * 1e9) / 4)
        for (int k = 0; k < ep->size; k++) ep->peers[k].heard_ns = now; /* we were away, not they */
    ep->polled_ns = now;
    int i = 0;
    const int delivered = ep->delivered;
    /* up to 64 datagrams, but back to the caller as soon as a handler has run:
     * a caller waiting for a reply should not pay for one more empty receive */
    for (; i < 64 && ep->delivered == delivered; i++) {
        unsigned char *data;
        long got = cc_am_net_recv(ep, &data);
        if (got == 0) break;
        if (got < 0) return cc_am_fail(ep, CC_AM_ESYS, "recv: %s", strerror((int)-got));
        cc_am_handle(ep, got, data, now);
    }
    /* nothing has arrived for a while: the peer may be waiting for this core */
    if (i > 0) {
        ep->idle_since_ns = 0;
    } else if (ep->idle_since_ns == 0) {
        ep->idle_since_ns = now;
    } else if (ep->cfg.yield_after_us > 0 && now - ep->idle_since_ns > (int64_t)(ep->cfg.yield_after_us * 1e3)) {
        ep->idle_since_ns = now;
        sched_yield();
    }
    if (now >= ep->timers_ns) {
        ep->timers_ns = now + CC_AM_TIMER_NS;
        cc_am_timers(ep, now);
        cc_am_net_flush_late(ep, now);
    }
    return CC_AM_OK;
}

int cc_am_poll(cc_am_ep *ep)
{
    if (ep->in_handler) return cc_am_fail(ep, CC_AM_ECONTEXT, "cc_am_poll: not inside a handler");
    if (!ep->peers) return cc_am_fail(ep, CC_AM_ECONTEXT, "cc_am_poll: endpoint not connected");
    ep->delivered = 0;
    int rc = cc_am_progress(ep);
    if (rc < 0) return rc;
    if (ep->dead_reported) {
        ep->dead_reported = 0;
        return CC_AM_EDEAD;
    }
    if (ep->handler_error) {
        ep->handler_error = 0;
        return CC_AM_EHANDLER;
    }
    return ep->delivered;
}
