/* The receiving side of bulk transfers and gets (above the sending side: a get
 * is answered with a transfer). */
#ifndef CC_AM_RECV_H
#define CC_AM_RECV_H

#include "cc_am_send.h"

/* a free get slot (its id), or -1 out of memory; finished with a status */
int cc_am_get_slot_new(cc_am_ep *ep);
void cc_am_get_finish(cc_am_ep *ep, int id, int status);
void cc_am_deliver_get(cc_am_ep *ep, int peer, const cc_am_pkt *pkt);
void cc_am_deliver_geterr(cc_am_ep *ep, int peer, const cc_am_pkt *pkt);
/* after an in-order fragment: predict the next one of its transfer (or none) */
void cc_am_predict(cc_am_ep *ep, int peer, int chan, const cc_am_pkt *pkt, int complete);
void cc_am_deliver_bulk(cc_am_ep *ep, int peer, int chan, const cc_am_pkt *pkt,
                        const unsigned char *data, size_t len, int *complete);
/* the last chunk of a transfer has arrived in order: run its handler */
void cc_am_bulk_arrived(cc_am_ep *ep, int peer, int chan, const cc_am_pkt *pkt);
/* a peer declared dead: its transfers and gets end with CC_AM_EDEAD */
void cc_am_fail_peer_bulk(cc_am_ep *ep, int peer);
/* transfers or gets still open */
int cc_am_bulk_busy(const cc_am_ep *ep);

#endif
