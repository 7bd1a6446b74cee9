/* The MPI library's eager path, warmed once a job, before its points.
 *
 * A library moves eager messages through buffers it allocates once and reuses
 * in turn: MPICH over UCX takes each one through the next of the receiver's
 * 64 FIFO elements, and a message that reaches a page of an element no
 * earlier message reached faults it in.  A job's first points then ran cold
 * for tens of calls, and where a control message followed every call (a
 * collective's start barrier, the overlap probe's timing) some elements stayed
 * cold past the point's warm-up: on 2 cores MPICH's first ialltoall overlap
 * point of 6 KiB computed 8.5 to 11.4 us against the pure call's 1.8 to 2.7 in
 * 2 of 3 jobs, none of 9 after 8 KiB messages had gone first
 * (docs/kernel-protocol.md, step 0 of "Measurement procedure").  cc_prewarm
 * sends CC_PREWARM_ROUNDS messages of CC_PREWARM_BYTES back to back around the
 * ring of every rank and, with more than 2 ranks, between ranks 0 and 1.  The
 * plan runs it (under --prewarm on) before its first point whose operation is
 * not measured as a process's first traffic (cc_op.first_traffic: coldstart
 * and collstart lead the jobs the runner gives them, and must find nothing
 * warmed). */
#ifndef CC_PREWARM_H
#define CC_PREWARM_H

#include "cc_op.h"

#define CC_PREWARM_BYTES 8192
#define CC_PREWARM_ROUNDS 256

/* every rank of the job, at the same place in the plan; the seconds it took */
double cc_prewarm(const cc_env *env);

#endif
