/* The bottom layer of cc_am: the clock, the error text of an endpoint, peer checks
 * and sequence arithmetic.  Every other layer builds on it. */
#ifndef CC_AM_BASE_H
#define CC_AM_BASE_H

#include "cc_am_state.h"

/* writes ep->err and returns status */
int cc_am_fail(cc_am_ep *ep, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* CLOCK_MONOTONIC in ns */
int64_t cc_am_now_ns(void);
/* CC_AM_OK when dest is a live peer of a connected endpoint, else the failure */
int cc_am_check_peer(cc_am_ep *ep, int dest, const char *call);

/* sequence numbers compare modulo 2^32; a window has room */
static inline int cc_am_seq_before(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }

static inline int cc_am_window_free(const cc_am_send *s)
{
    return (uint32_t)(s->next - s->una) < (uint32_t)s->window;
}

#endif
