/* The bottom of the library: the clock, error text, and the checks every call makes. */
#include "cc_am_base.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

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
