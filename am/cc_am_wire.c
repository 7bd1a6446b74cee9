/* Putting messages of a channel on the wire: each datagram carries the
 * acknowledgements of both channels; data messages are numbered and retained
 * until acknowledged, control messages (ACK, NACK, keep-alive) are not. */
#include "cc_am_wire.h"

#include <string.h>

static void cc_am_stamp_acks(cc_am_peer *p, cc_am_hdr *h)
{
    h->ack[0] = p->rcv[0].expect;
    h->ack[1] = p->rcv[1].expect;
    p->rcv[0].unacked = p->rcv[1].unacked = 0;
}

void cc_am_transmit(cc_am_ep *ep, int peer, cc_am_slot *s)
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

void cc_am_send_ack(cc_am_ep *ep, int peer)
{
    cc_am_hdr h = {0};
    h.type = CC_AM_T_ACK;
    ep->stats.explicit_acks_sent++;
    cc_am_send_control(ep, peer, &h);
}

void cc_am_send_nack(cc_am_ep *ep, int peer, int chan, uint8_t round)
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

void cc_am_send_probe(cc_am_ep *ep, int peer)
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
