/* Endpoints, short messages and the reliability protocol.
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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "cc_am_internal.h"

#define CC_AM_TIMER_NS 20000 /* how often polls look at timers */

int64_t cc_am_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int cc_am_fail(cc_am_ep *ep, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ep->err, sizeof ep->err, fmt, ap);
    va_end(ap);
    return status;
}

const char *cc_am_strerror(int status)
{
    switch (status) {
    case CC_AM_OK: return "success";
    case CC_AM_ERANK: return "no such rank";
    case CC_AM_EHANDLER: return "handler index out of range or not registered";
    case CC_AM_ESEGMENT: return "bulk transfer outside the registered segment";
    case CC_AM_EDEAD: return "peer declared dead";
    case CC_AM_EARG: return "bad argument";
    case CC_AM_ESYS: return "socket error";
    case CC_AM_ECONTEXT: return "call not allowed here";
    case CC_AM_ENOMEM: return "out of memory";
    default: return "unknown error";
    }
}

static int cc_am_seq_before(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }

static int cc_am_window_free(const cc_am_send *s)
{
    return (uint32_t)(s->next - s->una) < (uint32_t)s->window;
}

static int cc_am_check_config(const cc_am_config *c, char *err, size_t errlen)
{
    const char *bad = NULL;
    if (c->packet_bytes < 256 || c->packet_bytes + sizeof(cc_am_pkt) > 65507)
        bad = "packet_bytes must be in [256, 65507 - header]";
    else if (c->chunk_packets < 1 || c->chunk_packets > CC_AM_MAX_CHUNK_PACKETS)
        bad = "chunk_packets must be in [1, 64]";
    else if (c->chunks_in_flight < 1)
        bad = "chunks_in_flight must be at least 1";
    else if (c->request_window < 4 || c->reply_window < c->request_window)
        bad = "request_window must be at least 4 and reply_window at least request_window";
    else if (c->chunks_in_flight >= c->request_window)
        bad = "chunks_in_flight must be smaller than request_window";
    else if (!(c->keepalive_us > 0) || !(c->dead_after_s > 0))
        bad = "keepalive_us and dead_after_s must be positive";
    else if (c->segment_bytes > 0 && c->segment == NULL)
        bad = "segment_bytes > 0 needs a segment";
    if (bad) snprintf(err, errlen, "cc_am_open: %s", bad);
    return bad ? CC_AM_EARG : CC_AM_OK;
}

int cc_am_open(const cc_am_config *cfg, cc_am_ep **out, cc_am_addr *addr, char *err, size_t errlen)
{
    *out = NULL;
    int rc = cc_am_check_config(cfg, err, errlen);
    if (rc != CC_AM_OK) return rc;
    cc_am_ep *ep = calloc(1, sizeof *ep);
    if (!ep) return CC_AM_ENOMEM;
    ep->cfg = *cfg;
    ep->rank = -1;
    ep->rxcap = cfg->packet_bytes + sizeof(cc_am_pkt);
    ep->rxbuf = malloc(ep->rxcap);
    if (!ep->rxbuf) {
        free(ep);
        return CC_AM_ENOMEM;
    }
    rc = cc_am_net_open(ep, addr, err, errlen);
    if (rc != CC_AM_OK) {
        free(ep->rxbuf);
        free(ep);
        return rc;
    }
    addr->segment_bytes = cfg->segment_bytes;
    addr->packet_bytes = (uint32_t)cfg->packet_bytes;
    addr->chunk_packets = (uint32_t)cfg->chunk_packets;
    addr->request_window = (uint32_t)cfg->request_window;
    addr->reply_window = (uint32_t)cfg->reply_window;
    *out = ep;
    return CC_AM_OK;
}

int cc_am_connect(cc_am_ep *ep, int rank, int size, const cc_am_addr *addrs)
{
    if (size < 1 || size > 65535 || rank < 0 || rank >= size)
        return cc_am_fail(ep, CC_AM_ERANK, "cc_am_connect: rank %d of %d is not a rank", rank, size);
    if (ep->peers) return cc_am_fail(ep, CC_AM_ECONTEXT, "cc_am_connect: already connected");
    const cc_am_addr *me = &addrs[rank];
    for (int i = 0; i < size; i++) {
        const cc_am_addr *a = &addrs[i];
        if (a->packet_bytes != me->packet_bytes || a->chunk_packets != me->chunk_packets ||
            a->request_window != me->request_window || a->reply_window != me->reply_window)
            return cc_am_fail(ep, CC_AM_EARG,
                              "cc_am_connect: rank %d uses other sizes (packet, chunk, windows) "
                              "than rank %d: set the same CC_AM_* everywhere",
                              i, rank);
    }
    ep->peers = calloc((size_t)size, sizeof *ep->peers);
    if (!ep->peers) return cc_am_fail(ep, CC_AM_ENOMEM, "cc_am_connect: out of memory");
    const int64_t now = cc_am_now_ns();
    for (int i = 0; i < size; i++) {
        cc_am_peer *p = &ep->peers[i];
        const cc_am_addr *a = &addrs[i];
        p->addr.sin_family = AF_INET;
        p->addr.sin_port = htons(a->port);
        if (strncmp(a->host, me->host, sizeof a->host) == 0)
            p->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        else
            memcpy(&p->addr.sin_addr, a->ip, 4);
        p->segment_bytes = a->segment_bytes;
        p->snd[CC_AM_REQ].window = ep->cfg.request_window;
        p->snd[CC_AM_REP].window = ep->cfg.reply_window;
        for (int c = 0; c < 2; c++) {
            p->snd[c].ring = calloc((size_t)p->snd[c].window, sizeof(cc_am_slot));
            if (!p->snd[c].ring) return cc_am_fail(ep, CC_AM_ENOMEM, "cc_am_connect: out of memory");
        }
        p->heard_ns = now;
    }
    ep->rank = rank;
    ep->size = size;
    cc_am_set_faults(ep, &ep->cfg.faults);
    return CC_AM_OK;
}

void cc_am_set_faults(cc_am_ep *ep, const cc_am_faults *faults)
{
    ep->cfg.faults = *faults;
    /* splitmix64 of seed and rank: distinct, never-zero streams per rank */
    uint64_t z = faults->seed + 0x9E3779B97F4A7C15ULL * (uint64_t)(ep->rank + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    ep->rng = (z ^ (z >> 31)) | 1;
}

int cc_am_rank(const cc_am_ep *ep) { return ep->rank; }
int cc_am_size(const cc_am_ep *ep) { return ep->size; }
const char *cc_am_error(const cc_am_ep *ep) { return ep->err; }
void cc_am_get_stats(const cc_am_ep *ep, cc_am_stats *stats) { *stats = ep->stats; }
int cc_am_token_source(const cc_am_token *token) { return token->src; }
cc_am_ep *cc_am_token_ep(const cc_am_token *token) { return token->ep; }

void *cc_am_segment(const cc_am_ep *ep, size_t *bytes)
{
    if (bytes) *bytes = ep->cfg.segment_bytes;
    return ep->cfg.segment;
}

int cc_am_set_handler(cc_am_ep *ep, int index, cc_am_handler handler, void *ctx)
{
    if (index < 0 || index >= CC_AM_MAX_HANDLERS)
        return cc_am_fail(ep, CC_AM_EHANDLER, "cc_am_set_handler: index %d is not in [0, %d)", index,
                          CC_AM_MAX_HANDLERS);
    ep->handlers[index].fn = handler;
    ep->handlers[index].ctx = ctx;
    return CC_AM_OK;
}

int cc_am_set_bulk_handler(cc_am_ep *ep, int index, cc_am_bulk_handler handler, void *ctx)
{
    if (index < 0 || index >= CC_AM_MAX_HANDLERS)
        return cc_am_fail(ep, CC_AM_EHANDLER, "cc_am_set_bulk_handler: index %d is not in [0, %d)",
                          index, CC_AM_MAX_HANDLERS);
    ep->handlers[index].bulk = handler;
    ep->handlers[index].bulk_ctx = ctx;
    return CC_AM_OK;
}

int cc_am_check_peer(cc_am_ep *ep, int dest, const char *call)
{
    if (!ep->peers) return cc_am_fail(ep, CC_AM_ECONTEXT, "%s: endpoint not connected", call);
    if (dest < 0 || dest >= ep->size)
        return cc_am_fail(ep, CC_AM_ERANK, "%s: rank %d is not in [0, %d)", call, dest, ep->size);
    if (ep->peers[dest].dead)
        return cc_am_fail(ep, CC_AM_EDEAD, "%s: rank %d was declared dead (silent for %g s)", call,
                          dest, ep->cfg.dead_after_s);
    return CC_AM_OK;
}

/* ---- sending ---------------------------------------------------------- */

static void cc_am_stamp_acks(cc_am_peer *p, cc_am_hdr *h)
{
    h->ack[0] = p->rcv[0].expect;
    h->ack[1] = p->rcv[1].expect;
    p->rcv[0].unacked = p->rcv[1].unacked = 0;
}

static void cc_am_transmit(cc_am_ep *ep, int peer, cc_am_slot *s)
{
    cc_am_peer *p = &ep->peers[peer];
    cc_am_pkt *pkt = &s->pkt;
    cc_am_stamp_acks(p, &pkt->h);
    pkt->h.round = p->snd[pkt->h.flags & 1].round;
    if (pkt->h.type == CC_AM_T_CHUNK) {
        const uint32_t len = pkt->b.chunk_len, step = (uint32_t)ep->cfg.packet_bytes;
        cc_am_pkt hdrs[CC_AM_MAX_CHUNK_PACKETS];
        for (uint32_t f = 0; f < pkt->b.nfrags; f++) {
            hdrs[f] = *pkt;
            hdrs[f].b.frag = (uint16_t)f;
            hdrs[f].b.frag_off = f * step;
            hdrs[f].b.frag_len = len - hdrs[f].b.frag_off < step ? len - hdrs[f].b.frag_off : step;
        }
        cc_am_net_send_many(ep, peer, hdrs, s->data, pkt->b.nfrags);
    } else {
        struct iovec iov = {pkt, pkt->h.type == CC_AM_T_GET ? sizeof *pkt : sizeof pkt->h};
        cc_am_net_send(ep, peer, &iov, 1);
    }
}

/* a datagram that is not retained: ACK, NACK, keep-alive */
static void cc_am_send_control(cc_am_ep *ep, int peer, cc_am_hdr *h)
{
    h->magic = CC_AM_MAGIC;
    h->src = (uint16_t)ep->rank;
    cc_am_stamp_acks(&ep->peers[peer], h);
    struct iovec iov = {h, sizeof *h};
    cc_am_net_send(ep, peer, &iov, 1);
}

static void cc_am_send_ack(cc_am_ep *ep, int peer)
{
    cc_am_hdr h = {0};
    h.type = CC_AM_T_ACK;
    ep->stats.explicit_acks_sent++;
    cc_am_send_control(ep, peer, &h);
}

static void cc_am_send_nack(cc_am_ep *ep, int peer, int chan, uint8_t round)
{
    cc_am_recv *r = &ep->peers[peer].rcv[chan];
    cc_am_hdr h = {0};
    h.type = CC_AM_T_NACK;
    h.flags = (uint8_t)chan;
    h.seq = r->expect;
    h.round = round;
    r->nacked = 1;
    r->nack_seq = r->expect;
    r->nack_round = round;
    ep->stats.nacks_sent++;
    cc_am_send_control(ep, peer, &h);
}

static void cc_am_send_probe(cc_am_ep *ep, int peer)
{
    cc_am_peer *p = &ep->peers[peer];
    cc_am_hdr h = {0};
    h.type = CC_AM_T_KEEPALIVE;
    h.nargs = 4;
    h.args[0] = p->snd[0].next;
    h.args[1] = p->snd[1].next;
    h.args[2] = p->snd[0].round;
    h.args[3] = p->snd[1].round;
    ep->stats.keepalives_sent++;
    cc_am_send_control(ep, peer, &h);
}

/* give pkt the next sequence number of the channel, retain it, send it */
void cc_am_send_data(cc_am_ep *ep, int peer, int chan, const cc_am_pkt *pkt, const unsigned char *data,
                     cc_am_xfer *xfer)
{
    cc_am_send *s = &ep->peers[peer].snd[chan];
    const uint32_t seq = s->next++;
    cc_am_slot *slot = &s->ring[seq % (uint32_t)s->window];
    slot->pkt = *pkt;
    slot->pkt.h.magic = CC_AM_MAGIC;
    slot->pkt.h.src = (uint16_t)ep->rank;
    slot->pkt.h.seq = seq;
    slot->pkt.h.flags = (uint8_t)((slot->pkt.h.flags & ~1u) | (unsigned)chan);
    slot->data = data;
    slot->xfer = xfer;
    if (xfer && pkt->b.nfrags > 1) s->chunks++; /* single datagrams only use the window */
    /* the clock as of the last poll: one read less per message, a probe a little early at worst */
    if (seq == s->una) s->probe_due_ns = ep->polled_ns + (int64_t)(ep->cfg.keepalive_us * 1e3);
    cc_am_transmit(ep, peer, slot);
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

/* ---- acknowledgements ------------------------------------------------- */

static void cc_am_acked(cc_am_ep *ep, int peer, int chan, uint32_t ack, int64_t now)
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

static void cc_am_go_back(cc_am_ep *ep, int peer, int chan, uint32_t from, uint8_t round, int64_t now)
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

/* ---- receiving -------------------------------------------------------- */

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

/* ---- failure of a peer ------------------------------------------------ */

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

/* ---- polling ---------------------------------------------------------- */

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

static int cc_am_check_short(cc_am_ep *ep, int handler, int nargs, const char *call)
{
    if (handler < 0 || handler >= CC_AM_MAX_HANDLERS)
        return cc_am_fail(ep, CC_AM_EHANDLER, "%s: handler %d is not in [0, %d)", call, handler,
                          CC_AM_MAX_HANDLERS);
    if (nargs < 0 || nargs > CC_AM_MAX_ARGS)
        return cc_am_fail(ep, CC_AM_EARG, "%s: %d arguments (0 to %d words)", call, nargs,
                          CC_AM_MAX_ARGS);
    return CC_AM_OK;
}

static void cc_am_short_pkt(cc_am_pkt *pkt, int handler, int nargs, const cc_am_word *args)
{
    memset(&pkt->h, 0, sizeof pkt->h);
    pkt->h.type = CC_AM_T_SHORT;
    pkt->h.handler = (uint8_t)handler;
    pkt->h.nargs = (uint8_t)nargs;
    for (int i = 0; i < nargs; i++) pkt->h.args[i] = args[i];
}

int cc_am_request(cc_am_ep *ep, int dest, int handler, int nargs, const cc_am_word *args)
{
    if (ep->in_handler) return cc_am_fail(ep, CC_AM_ECONTEXT, "cc_am_request: not inside a handler");
    int rc = cc_am_check_peer(ep, dest, "cc_am_request");
    if (rc == CC_AM_OK) rc = cc_am_check_short(ep, handler, nargs, "cc_am_request");
    if (rc != CC_AM_OK) return rc;
    cc_am_send *s = &ep->peers[dest].snd[CC_AM_REQ];
    while (s->head || !cc_am_window_free(s)) {
        if ((rc = cc_am_progress(ep)) < 0) return rc;
        if (ep->peers[dest].dead) return cc_am_check_peer(ep, dest, "cc_am_request");
    }
    cc_am_pkt pkt;
    cc_am_short_pkt(&pkt, handler, nargs, args);
    cc_am_send_data(ep, dest, CC_AM_REQ, &pkt, NULL, NULL);
    return cc_am_progress(ep);
}

int cc_am_reply(cc_am_token *token, int handler, int nargs, const cc_am_word *args)
{
    cc_am_ep *ep = token->ep;
    if (!token->may_reply)
        return cc_am_fail(ep, CC_AM_ECONTEXT, "cc_am_reply: only from a request handler");
    if (token->replied)
        return cc_am_fail(ep, CC_AM_ECONTEXT, "cc_am_reply: one reply per request");
    int rc = cc_am_check_peer(ep, token->src, "cc_am_reply");
    if (rc == CC_AM_OK) rc = cc_am_check_short(ep, handler, nargs, "cc_am_reply");
    if (rc != CC_AM_OK) return rc;
    cc_am_pkt pkt;
    cc_am_short_pkt(&pkt, handler, nargs, args);
    token->replied = 1;
    return cc_am_enqueue(ep, token->src, CC_AM_REP, &pkt, NULL);
}

/* ---- closing ---------------------------------------------------------- */

int cc_am_quiet(const cc_am_ep *ep)
{
    for (int i = 0; i < ep->size; i++)
        for (int c = 0; c < 2; c++)
            if (!ep->peers[i].dead &&
                (ep->peers[i].snd[c].una != ep->peers[i].snd[c].next || ep->peers[i].snd[c].head))
                return 0;
    return !cc_am_bulk_busy(ep);
}

static int cc_am_unacked(const cc_am_ep *ep)
{
    for (int i = 0; i < ep->size; i++)
        for (int c = 0; c < 2; c++)
            if (!ep->peers[i].dead &&
                (ep->peers[i].snd[c].una != ep->peers[i].snd[c].next || ep->peers[i].snd[c].head))
                return 1;
    return 0;
}

int cc_am_close(cc_am_ep *ep)
{
    if (!ep) return CC_AM_OK;
    int rc = CC_AM_OK;
    if (ep->peers) {
        while (rc == CC_AM_OK && (cc_am_unacked(ep) || cc_am_bulk_busy(ep))) rc = cc_am_progress(ep);
        /* our last acknowledgements may be lost: answer probes until the
         * peers have been quiet for a while */
        for (int i = 0; i < ep->size; i++)
            if (!ep->peers[i].dead && i != ep->rank) cc_am_send_ack(ep, i);
        int64_t quiet_ns = (int64_t)(ep->cfg.keepalive_us * 1e3) * 10;
        if (quiet_ns < 5000000) quiet_ns = 5000000;
        int64_t last = cc_am_now_ns();
        uint64_t seen = ep->stats.packets_received;
        while (rc == CC_AM_OK && cc_am_now_ns() - last < quiet_ns) {
            rc = cc_am_progress(ep);
            if (ep->stats.packets_received != seen) {
                seen = ep->stats.packets_received;
                last = cc_am_now_ns();
            }
        }
        if (ep->dead_reported) rc = CC_AM_EDEAD;
        for (int i = 0; i < ep->size; i++)
            for (int c = 0; c < 2; c++) {
                cc_am_item *it = ep->peers[i].snd[c].head;
                while (it) {
                    cc_am_item *next = it->next;
                    free(it);
                    it = next;
                }
                free(ep->peers[i].snd[c].ring);
            }
    }
    for (int i = 0; i < ep->nlate; i++) free(ep->late[i].buf);
    while (ep->active) {
        cc_am_xfer *x = ep->active;
        ep->active = x->next_active;
        free(x);
    }
    free(ep->gets);
    free(ep->peers);
    free(ep->rxbuf);
    if (ep->fd >= 0) close(ep->fd);
    free(ep);
    return rc;
}
