/* Sending on a channel: numbered, retained data messages and unretained control
 * messages (above the datagrams of cc_am_net.h). */
#ifndef CC_AM_WIRE_H
#define CC_AM_WIRE_H

#include "cc_am_net.h"

/* (re)send a retained message; a keep-alive probe (control, not retained) */
void cc_am_transmit(cc_am_ep *ep, int peer, cc_am_slot *s);
void cc_am_send_probe(cc_am_ep *ep, int peer);
/* an explicit ACK of both channels; a NACK naming what channel chan expects next */
void cc_am_send_ack(cc_am_ep *ep, int peer);
void cc_am_send_nack(cc_am_ep *ep, int peer, int chan, uint8_t round);
/* give pkt the next sequence number of the channel, retain it, send it */
void cc_am_send_data(cc_am_ep *ep, int peer, int chan, const cc_am_pkt *pkt, const unsigned char *data,
                     cc_am_xfer *xfer);

#endif
