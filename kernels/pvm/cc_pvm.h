/* PVM (3.4) as a measured transport of the kernel: every rank, started by the
 * MPI launcher, enrols in the private virtual machine the runner started
 * (PVM_TMP names it) and joins one group; measured traffic is PVM's alone,
 * while the timing loop's control traffic (start synchronisation, sample
 * reductions, stop decisions) stays on the MPI control communicators, outside
 * the timed region, exactly as for the MPI operations. */
#ifndef CC_PVM_H
#define CC_PVM_H

#include <pvm3.h>

#include "cc_op.h"

/* the one group every rank joins: its instance number is its MPI rank */
#define CC_PVM_GROUP "commchar"
enum { CC_PVM_TAG_DATA = 101, CC_PVM_TAG_REPLY = 102, CC_PVM_TAG_SELF = 103 };

/* Every PVM call goes through CC_PVM: a negative result ends the job with one
 * JSON error line naming the call and PVM's reason (the runner records the
 * point as failed and goes on with the rest). */
void cc_pvm_fail(int rc, const char *call, const char *file, int line);
#define CC_PVM(call)                                                        \
    do {                                                                    \
        int cc_prc_ = (call);                                               \
        if (cc_prc_ < 0) cc_pvm_fail(cc_prc_, #call, __FILE__, __LINE__);   \
    } while (0)

/* Enrol (once per process) and return the task id of every participant of pt,
 * indexed by pt's rank (exchanged on pt's control communicator); for
 * collectives also join the group (once).  Every participant calls it from
 * its op's setup. */
const int *cc_pvm_participants(cc_point *pt);

/* "daemon" or "direct": the route messages between tasks take
 * (COMMCHAR_PVM_ROUTE, default PVM's own: through the daemons) */
const char *cc_pvm_route(void);

/* the route, as a point's extra fields */
void cc_pvm_extra(cc_point *pt, double main_median_us, cc_buf *json);

#endif
