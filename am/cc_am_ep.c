/* Endpoints: opening, connecting, registration, the getters, and closing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cc_am_progress.h"

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
