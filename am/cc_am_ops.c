/* The calls that move data: short requests and replies, bulk stores and gets,
 * and the waits of their blocking forms (through cc_am_progress). */
#include <stdlib.h>
#include <string.h>

#include "cc_am_progress.h"

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
