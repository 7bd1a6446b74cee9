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

/* A send buffer whose place means something: none for MPI_IN_PLACE (cct_page) */
static inline const void *cct_not_in_place(const void *sendbuf)
{
    return sendbuf == MPI_IN_PLACE ? NULL : sendbuf;
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

/* The bytes a collective's record carries (docs/trace-format.md), blocking or not alike:
 * bytes as sent by the calling rank, bytes2 as received. */
static inline void cct_scatter_bytes(int sendcount, MPI_Datatype sendtype, const void *recvbuf,
                                     int recvcount, MPI_Datatype recvtype, int root,
                                     MPI_Comm comm, uint64_t *bytes, uint64_t *bytes2)
{
    uint64_t p = (uint64_t)cct_size(comm);
    if (cct_rank(comm) == root) {
        *bytes = p * cct_bytes(sendcount, sendtype);
        *bytes2 = recvbuf == MPI_IN_PLACE ? *bytes / p : cct_bytes(recvcount, recvtype);
    } else {
        *bytes2 = cct_bytes(recvcount, recvtype);
        *bytes = p * *bytes2;
    }
}

static inline void cct_scatterv_bytes(const int sendcounts[], MPI_Datatype sendtype,
                                      const void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                      int root, MPI_Comm comm, uint64_t *bytes, uint64_t *bytes2)
{
    int me = cct_rank(comm);
    *bytes = 0;
    if (me == root) {
        *bytes = cct_sum_bytes(sendcounts, cct_size(comm), sendtype);
        *bytes2 = recvbuf == MPI_IN_PLACE ? cct_bytes(sendcounts[me], sendtype)
                                          : cct_bytes(recvcount, recvtype);
    } else {
        *bytes2 = cct_bytes(recvcount, recvtype);
    }
}

static inline void cct_gather_bytes(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    int recvcount, MPI_Datatype recvtype, int root,
                                    MPI_Comm comm, uint64_t *bytes, uint64_t *bytes2)
{
    uint64_t p = (uint64_t)cct_size(comm);
    if (cct_rank(comm) == root) {
        *bytes2 = p * cct_bytes(recvcount, recvtype);
        *bytes = sendbuf == MPI_IN_PLACE ? *bytes2 / p : cct_bytes(sendcount, sendtype);
    } else {
        *bytes = cct_bytes(sendcount, sendtype);
        *bytes2 = p * *bytes;
    }
}

static inline void cct_gatherv_bytes(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     const int recvcounts[], MPI_Datatype recvtype, int root,
                                     MPI_Comm comm, uint64_t *bytes, uint64_t *bytes2)
{
    int me = cct_rank(comm);
    *bytes2 = 0;
    if (me == root) {
        *bytes2 = cct_sum_bytes(recvcounts, cct_size(comm), recvtype);
        *bytes = sendbuf == MPI_IN_PLACE ? cct_bytes(recvcounts[me], recvtype)
                                         : cct_bytes(sendcount, sendtype);
    } else {
        *bytes = cct_bytes(sendcount, sendtype);
    }
}

static inline void cct_allgather_bytes(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                       uint64_t *bytes, uint64_t *bytes2)
{
    uint64_t each = cct_bytes(recvcount, recvtype);
    *bytes = sendbuf == MPI_IN_PLACE ? each : cct_bytes(sendcount, sendtype);
    *bytes2 = each * (uint64_t)cct_size(comm);
}

static inline void cct_allgatherv_bytes(const void *sendbuf, int sendcount,
                                        MPI_Datatype sendtype, const int recvcounts[],
                                        MPI_Datatype recvtype, MPI_Comm comm, uint64_t *bytes,
                                        uint64_t *bytes2)
{
    *bytes = sendbuf == MPI_IN_PLACE ? cct_bytes(recvcounts[cct_rank(comm)], recvtype)
                                     : cct_bytes(sendcount, sendtype);
    *bytes2 = cct_sum_bytes(recvcounts, cct_size(comm), recvtype);
}

/* Alltoall: bytes2 is what arrives from each rank */
static inline void cct_alltoall_bytes(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                      int recvcount, MPI_Datatype recvtype, uint64_t *bytes,
                                      uint64_t *bytes2)
{
    *bytes2 = cct_bytes(recvcount, recvtype);
    *bytes = sendbuf == MPI_IN_PLACE ? *bytes2 : cct_bytes(sendcount, sendtype);
}

static inline void cct_alltoallv_bytes(const void *sendbuf, const int sendcounts[],
                                       MPI_Datatype sendtype, const int recvcounts[],
                                       MPI_Datatype recvtype, MPI_Comm comm, uint64_t *bytes,
                                       uint64_t *bytes2)
{
    int p = cct_size(comm);
    *bytes2 = cct_sum_bytes(recvcounts, p, recvtype);
    *bytes = sendbuf == MPI_IN_PLACE ? *bytes2 : cct_sum_bytes(sendcounts, p, sendtype);
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
