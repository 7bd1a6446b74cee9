/* Datagrams: one UDP socket per rank, with the injected faults (above
 * cc_am_base.h, below every channel). */
#ifndef CC_AM_NET_H
#define CC_AM_NET_H

#include <sys/uio.h>

#include "cc_am_base.h"

int cc_am_net_open(cc_am_ep *ep, cc_am_addr *addr, char *err, size_t errlen);
void cc_am_net_send(cc_am_ep *ep, int peer, const struct iovec *iov, int iovcnt);
/* a chunk's datagrams, each a header and a piece of data, in as few system calls as possible */
void cc_am_net_send_many(cc_am_ep *ep, int peer, cc_am_pkt *hdrs, const unsigned char *data, int count);
/* One datagram: its header into ep->rxbuf, its data after it or, for the
 * predicted bulk fragment (ep->predict, set by cc_am_predict), straight to
 * where it belongs (*data says where).  Returns its length, 0 when none, < 0
 * on error. */
long cc_am_net_recv(cc_am_ep *ep, unsigned char **data);
void cc_am_net_flush_late(cc_am_ep *ep, int64_t now);
/* the prediction still names a fragment the receiver will take and has not got */
int cc_am_prediction_open(const cc_am_ep *ep);

#endif
