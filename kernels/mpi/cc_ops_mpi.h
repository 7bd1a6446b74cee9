/* MPI's operations (kernels/mpi/), in the operation table (kernels/cc_ops.c). */
#ifndef CC_OPS_MPI_H
#define CC_OPS_MPI_H

#include "cc_op.h"

/* The most bytes one window of W messages (bw, bibw, mbw and the one-sided _bw
 * variants) may hold: past it the window shrinks to fit, to 2 messages at
 * least.  Two messages in flight already keep a link streaming; a larger
 * window only makes each sample and its buffers larger.  Against 4 MiB, on 2
 * cores with MPICH and Open MPI, windows of 64 KiB to 512 KiB messages measured
 * the same per-message time within the runs' scatter (bw, bibw, put, get) or up
 * to a sixth less (accumulate, whose 4 MiB windows left the cache), in a third
 * to a half of the time. */
#define CC_WINDOW_BYTES ((size_t)1 << 20)

/* pt->window, shrunk so that its n-byte messages fit CC_WINDOW_BYTES */
static inline void cc_window_fit(cc_point *pt)
{
    if (pt->n > 0 && (size_t)pt->window * pt->n > CC_WINDOW_BYTES) {
        const size_t fit = CC_WINDOW_BYTES / pt->n;
        pt->window = fit < 2 ? 2 : (long)fit;
    }
}

/* point-to-point (cc_ops_p2p.c) */
extern const cc_op cc_op_pingpong, cc_op_bw, cc_op_bibw, cc_op_post, cc_op_rndv, cc_op_loggp;
/* multi-pair bandwidth and message rate over every rank (cc_ops_mbw.c) */
extern const cc_op cc_op_mbw;
/* collectives (cc_ops_coll.c) */
extern const cc_op cc_op_barrier, cc_op_bcast, cc_op_scatter, cc_op_gather, cc_op_allgather,
    cc_op_alltoall, cc_op_reduce, cc_op_allreduce, cc_op_reduce_scatter, cc_op_scan;
/* one-sided (cc_ops_rma.c) and non-blocking collectives (cc_ops_nbc.c) */
extern const cc_op cc_op_put, cc_op_get, cc_op_acc;
extern const cc_op cc_op_ibcast, cc_op_iallreduce, cc_op_ialltoall, cc_op_iallgather;
/* neighbourhood collectives (cc_ops_neighbor.c), derived datatypes (cc_ops_ddt.c) */
extern const cc_op cc_op_neighbor_allgather, cc_op_neighbor_alltoall, cc_op_ddt_pingpong, cc_op_ddt_bcast;
/* MPI-4 persistent collectives and partitioned point-to-point (cc_ops_mpi4.c) */
extern const cc_op cc_op_pbcast, cc_op_pallreduce, cc_op_partitioned;
/* a program's first messages (cc_ops_coldstart.c), receives into untouched memory (cc_ops_touch.c) */
extern const cc_op cc_op_coldstart;
extern const cc_op cc_op_noise;
extern const cc_op cc_op_collstart;
extern const cc_op cc_op_touch;
extern const cc_op cc_op_skew;
extern const cc_op cc_op_written; /* a message its sender just wrote (cc_ops_p2p.c) */
/* both ranks of a pair exchange at once: Sendrecv and Sendrecv_replace (cc_ops_exchange.c) */
extern const cc_op cc_op_exchange;
extern const cc_op cc_op_footprint; /* the exchange over many buffer pairs (cc_ops_exchange.c) */

#endif
