/* The sending side of cc_am: channel queues and windows, acknowledgements,
 * go-back, and outgoing bulk transfers. */
#ifndef CC_AM_SEND_H
#define CC_AM_SEND_H

#include "cc_am_wire.h"

/* outgoing transfers: made, linked into ep->active, finished with a status */
void cc_am_unlink(cc_am_ep *ep, cc_am_xfer *x);
void cc_am_xfer_finish(cc_am_ep *ep, cc_am_xfer *x, int status);
void cc_am_xfer_chunk_acked(cc_am_ep *ep, cc_am_xfer *x);
int cc_am_send_chunk(cc_am_ep *ep, int peer, int chan, cc_am_xfer *x);
cc_am_xfer *cc_am_xfer_new(cc_am_ep *ep, int peer, int chan, const void *src, size_t n);
/* channel queues: send what waits while the window (and chunk limit) allow */
void cc_am_pump(cc_am_ep *ep, int peer, int chan);
int cc_am_enqueue(cc_am_ep *ep, int peer, int chan, const cc_am_pkt *pkt, cc_am_xfer *xfer);
/* acknowledgements up to ack; a NACK: acknowledge, then go back and resend */
void cc_am_acked(cc_am_ep *ep, int peer, int chan, uint32_t ack, int64_t now);
void cc_am_go_back(cc_am_ep *ep, int peer, int chan, uint32_t from, uint8_t round, int64_t now);

#endif
