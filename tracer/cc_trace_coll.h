/* What the collective wrappers share: their record, and the sizes and ops they ask. */
#ifndef CC_TRACE_COLL_H
#define CC_TRACE_COLL_H

#include "cc_trace.h"

static inline void cct_coll(cc_trace_record *r, uint16_t call, int rc, MPI_Comm comm, int root,
                            uint64_t bytes, uint64_t bytes2, uint64_t t0, uint64_t t1,
                            int32_t aux)
{
    *r = (cc_trace_record){.call = call, .flags = cct_flags(rc, 0), .comm = cct_comm(comm),
                           .peer = root, .tag = -1, .bytes = bytes, .bytes2 = bytes2,
                           .t_start = t0, .t_end = t1, .aux = aux};
    cct_end(1);
}

static inline int cct_rank(MPI_Comm comm)
{
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    return rank;
}

static inline int cct_size(MPI_Comm comm)
{
    int size = 1;
    PMPI_Comm_size(comm, &size);
    return size;
}

static inline uint64_t cct_sum_bytes(const int *counts, int n, MPI_Datatype type)
{
    uint64_t total = 0;
    for (int i = 0; i < n; i++) total += (uint64_t)(counts[i] > 0 ? counts[i] : 0);
    return total * cct_bytes(1, type);
}

static inline int32_t cct_op(MPI_Op op)
{
    if (op == MPI_SUM) return CC_OP_SUM;
    if (op == MPI_MAX) return CC_OP_MAX;
    if (op == MPI_MIN) return CC_OP_MIN;
    if (op == MPI_PROD) return CC_OP_PROD;
    if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR || op == MPI_BAND || op == MPI_BOR
        || op == MPI_BXOR || op == MPI_MAXLOC || op == MPI_MINLOC || op == MPI_REPLACE
        || op == MPI_NO_OP)
        return CC_OP_OTHER;
    return CC_OP_UNKNOWN;
}

/* The bytes sent and received by an Alltoallw (per-peer types) */
static inline void cct_alltoallw_bytes(const void *sendbuf, const int sendcounts[],
                                       const MPI_Datatype sendtypes[], const int recvcounts[],
                                       const MPI_Datatype recvtypes[], int n, uint64_t *bytes,
                                       uint64_t *bytes2)
{
    *bytes = *bytes2 = 0;
    for (int i = 0; i < n; i++) *bytes2 += cct_bytes(recvcounts[i], recvtypes[i]);
    if (sendbuf == MPI_IN_PLACE) {
        *bytes = *bytes2;
        return;
    }
    for (int i = 0; i < n; i++) *bytes += cct_bytes(sendcounts[i], sendtypes[i]);
}

/* Sources and destinations of the calling rank in comm's topology (0 and 0 without one) */
void cct_degrees(MPI_Comm comm, int *in, int *out);

#endif
