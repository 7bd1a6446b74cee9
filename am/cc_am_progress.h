/* Progress of an endpoint: receive, dispatch, run timers.  The top layers
 * (cc_am_ep.c, cc_am_ops.c) wait through it. */
#ifndef CC_AM_PROGRESS_H
#define CC_AM_PROGRESS_H

#include "cc_am_recv.h"

int cc_am_progress(cc_am_ep *ep);

#endif
