/* The operation table. */
#ifndef CC_OPS_H
#define CC_OPS_H

#include "cc_op.h"

extern const cc_op cc_op_pingpong, cc_op_bw, cc_op_bibw, cc_op_rndv, cc_op_loggp;
/* multi-pair bandwidth and message rate over every rank (cc_ops_mbw.c) */
extern const cc_op cc_op_mbw;
extern const cc_op cc_op_barrier, cc_op_bcast, cc_op_scatter, cc_op_gather, cc_op_allgather,
    cc_op_alltoall, cc_op_reduce, cc_op_allreduce, cc_op_reduce_scatter, cc_op_scan;
/* the active-message layer (cc_ops_am.c) */
extern const cc_op cc_op_am_rtt, cc_op_am_store, cc_op_am_get, cc_op_am_pipe, cc_op_am_exchange,
    cc_op_am_cost, cc_op_am_loss;
/* one-sided (cc_ops_rma.c) and non-blocking collectives (cc_ops_nbc.c) */
extern const cc_op cc_op_put, cc_op_get, cc_op_acc;
extern const cc_op cc_op_ibcast, cc_op_iallreduce, cc_op_ialltoall, cc_op_iallgather;
/* neighbourhood collectives (cc_ops_neighbor.c), derived datatypes (cc_ops_ddt.c) */
extern const cc_op cc_op_neighbor_allgather, cc_op_neighbor_alltoall, cc_op_ddt_pingpong, cc_op_ddt_bcast;
/* MPI-4 persistent collectives and partitioned point-to-point (cc_ops_mpi4.c) */
extern const cc_op cc_op_pbcast, cc_op_pallreduce, cc_op_partitioned;
/* a program's first messages (cc_ops_coldstart.c) */
extern const cc_op cc_op_coldstart;
extern const cc_op cc_op_touch;
/* both ranks of a pair exchange at once: Sendrecv and Sendrecv_replace (cc_ops_exchange.c) */
extern const cc_op cc_op_exchange;

#endif
