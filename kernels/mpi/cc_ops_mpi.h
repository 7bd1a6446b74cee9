/* MPI's operations (kernels/mpi/), in the operation table (kernels/cc_ops.c). */
#ifndef CC_OPS_MPI_H
#define CC_OPS_MPI_H

#include "cc_op.h"

/* point-to-point (cc_ops_p2p.c) */
extern const cc_op cc_op_pingpong, cc_op_bw, cc_op_bibw, cc_op_rndv, cc_op_loggp;
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
/* both ranks of a pair exchange at once: Sendrecv and Sendrecv_replace (cc_ops_exchange.c) */
extern const cc_op cc_op_exchange;

#endif
