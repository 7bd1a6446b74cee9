/* A point's buffers, fill and verification, shared by the operation files of
 * every transport (mpi/, am/, pvm/): they use these, never each other. */
#ifndef CC_OP_DATA_H
#define CC_OP_DATA_H

#include <stddef.h>

#include "cc_op.h"

/* the reductions' variants: sum, or an operation that keeps either operand */
enum { CC_RED_SUM, CC_RED_NOP };

/* ---- collectives (root 0; rbuf, sbuf and n/p blocks as in cc_ops_coll.c) ---- */

/* check_size of a collective: NULL when n * factor bytes fit one call; any n
 * one call can carry; n a whole number of doubles */
const char *cc_too_large(size_t n, size_t factor, char *why, size_t whylen);
const char *cc_size_any(size_t n, int p, int variant, char *why, size_t whylen);
const char *cc_size_doubles(size_t n, int p, int variant, char *why, size_t whylen);
/* n a multiple of p; n * p bytes fit one call (n per peer) */
const char *cc_size_multiple_of_p(size_t n, int p, int variant, char *why, size_t whylen);
const char *cc_size_per_peer(size_t n, int p, int variant, char *why, size_t whylen);
/* n 0 only: an operation that moves no data (a barrier, a probe) */
const char *cc_size_zero(size_t n, int p, int variant, char *why, size_t whylen);
/* buffers of slen and rlen bytes, every rank timed, checked_len bytes of rbuf verified */
void cc_coll_buffers(cc_point *pt, size_t slen, size_t rlen, size_t checked_len);
/* A message buffer of n bytes, every page touched, starting --buffer-offset bytes
 * (16) past a page boundary as malloc's large blocks do: the buffer spans the
 * pages a program's would, which single-copy transfers (CMA) pin one by one.
 * A receive buffer starts --recv-offset bytes past one where that is given: a
 * copy's speed may depend on where its two ends lie relative to each other.
 * Free either with cc_buffer_free of the same point. */
void *cc_buffer_alloc(const cc_point *pt, size_t n);
void *cc_recv_buffer_alloc(const cc_point *pt, size_t n);
/* ...and one starting `offset` bytes (0 to 4095) past a page boundary */
void *cc_buffer_alloc_at(size_t n, long offset);
void cc_buffer_free(const cc_point *pt, void *buf);
void cc_coll_cleanup(cc_point *pt);
size_t cc_block(const cc_point *pt); /* n / p */
void cc_bcast_setup(cc_point *pt); /* n bytes from root 0 into every rbuf */
void cc_bcast_fill(cc_point *pt);
int cc_bcast_check(const cc_point *pt, char *err, size_t errlen);
void cc_scatter_fill(cc_point *pt);
int cc_scatter_check(const cc_point *pt, char *err, size_t errlen);
void cc_allgather_setup(cc_point *pt); /* n/p bytes from each rank, n into every rbuf */
void cc_gather_fill(cc_point *pt);
int cc_gather_check(const cc_point *pt, char *err, size_t errlen);
/* reductions: variant CC_RED_SUM or CC_RED_NOP; the result is checked where check_len > 0 */
int cc_contributor(const cc_point *pt);       /* whose pattern this rank sends */
int cc_summed(const cc_point *pt, int nranks); /* ranks summed in the result (0: the nop vector) */
/* buffers of n bytes in, rlen out (checked_len verified); MPI_SUM, or an empty
 * commutative operation for CC_RED_NOP */
void cc_reduction_setup(cc_point *pt, size_t rlen, size_t checked_len);
void cc_allreduce_setup(cc_point *pt);
void cc_reduction_fill(cc_point *pt);
int cc_reduce_check(const cc_point *pt, char *err, size_t errlen);

/* alltoall: n bytes from every rank to every rank */
void cc_alltoall_setup(cc_point *pt);
void cc_alltoall_fill(cc_point *pt);
int cc_alltoall_check(const cc_point *pt, char *err, size_t errlen);

/* A collective's sizes, buffers, fill and check, for the operations that run
 * it another way (non-blocking, persistent) and verify it the same way.  They
 * read the point's variant as the blocking form's (0: sum for a reduction). */
typedef struct cc_coll_data {
    const char *(*check_size)(size_t n, int p, int variant, char *why, size_t whylen);
    void (*setup)(cc_point *pt);
    void (*fill)(cc_point *pt);
    int (*check)(const cc_point *pt, char *err, size_t errlen);
    void (*cleanup)(cc_point *pt);
} cc_coll_data;
extern const cc_coll_data cc_bcast_data, cc_allreduce_data, cc_alltoall_data, cc_allgather_data;

/* ---- pairs: two ranks exchanging n bytes of sbuf into rbuf ---------------------
 * each sends its own pattern and checks its peer's (point-to-point,
 * partitioned, PVM's sends) */
void cc_pair_buffers(cc_point *pt); /* n bytes each way, rank 0 timed, half a round trip */
void cc_pair_buffers_of(cc_point *pt, size_t len); /* the same with len-byte buffers, all checked */
/* NULL when ranks 0 and 1 can exchange one message of n bytes at p, else why not */
const char *cc_p2p_check_size(size_t n, int p, int variant, char *why, size_t whylen);
void cc_pair_fill(cc_point *pt);
int cc_pair_check(const cc_point *pt, char *err, size_t errlen);

#endif
