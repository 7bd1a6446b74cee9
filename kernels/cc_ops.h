/* The operation table. */
#ifndef CC_OPS_H
#define CC_OPS_H

#include "cc_op.h"

extern const cc_op cc_op_pingpong, cc_op_bw, cc_op_bibw, cc_op_rndv, cc_op_loggp;
/* multi-pair bandwidth and message rate over every rank (cc_ops_mbw.c) */
extern const cc_op cc_op_mbw;
extern const cc_op cc_op_barrier, cc_op_bcast, cc_op_scatter, cc_op_gather, cc_op_allgather,
    cc_op_alltoall, cc_op_reduce, cc_op_allreduce, cc_op_reduce_scatter, cc_op_scan;
/* The collectives' buffers and verification (root 0; rbuf, sbuf and n/p blocks as
 * in cc_ops_coll.c), shared by every transport's collectives (pvm/).  Buffers of
 * slen and rlen bytes, every rank timed, checked_len bytes of rbuf verified. */
void cc_coll_buffers(cc_point *pt, size_t slen, size_t rlen, size_t checked_len);
void cc_coll_cleanup(cc_point *pt);
void cc_bcast_fill(cc_point *pt);
int cc_bcast_check(const cc_point *pt, char *err, size_t errlen);
void cc_scatter_fill(cc_point *pt);
int cc_scatter_check(const cc_point *pt, char *err, size_t errlen);
void cc_gather_fill(cc_point *pt);
int cc_gather_check(const cc_point *pt, char *err, size_t errlen);
/* reductions: variant 0 is sum, 1 nop; the result is checked where check_len > 0 */
void cc_reduction_fill(cc_point *pt);
int cc_reduce_check(const cc_point *pt, char *err, size_t errlen);
/* two ranks exchanging n bytes of sbuf into rbuf: each sends its own pattern and checks
 * its peer's (cc_ops_p2p.c; partitioned point-to-point and PVM's sends use them) */
void cc_pair_buffers(cc_point *pt); /* n bytes each way, rank 0 timed, half a round trip */
/* NULL when ranks 0 and 1 can exchange one message of n bytes at p, else why not */
const char *cc_p2p_check_size(size_t n, int p, int variant, char *why, size_t whylen);
void cc_pair_fill(cc_point *pt);
int cc_pair_check(const cc_point *pt, char *err, size_t errlen);
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

#endif
