/* Non-blocking collectives, Alltoallw and the neighborhood collectives.
 *
 * A non-blocking collective is recorded as its blocking call is (the same bytes,
 * root and op) under its own id; its request is not followed (no non-blocking
 * flag, no COMPLETE record).  A neighborhood collective records the bytes this rank
 * sends to all its destinations and receives from all its sources (the
 * communicator's NEIGHBORS records name them). */
#include "cc_trace_coll.h"

static inline void cct_nbc(cc_trace_record *r, uint16_t call, int rc, MPI_Comm comm, int root,
                           uint64_t bytes, uint64_t bytes2, uint64_t t0, uint64_t t1,
                           int32_t aux)
{
    *r = (cc_trace_record){.call = call, .flags = cct_flags(rc, 0),
                           .comm = cct_comm(comm), .peer = root, .tag = -1, .bytes = bytes,
                           .bytes2 = bytes2, .t_start = t0, .t_end = t1, .aux = aux};
    cct_end(1);
}

/* The call, timed; sizes are asked only when it succeeded. */
#define CCT_CALL(EXPR)                \
    uint64_t t0 = cct_now();          \
    int rc = EXPR;                    \
    uint64_t t1 = cct_now();          \
    uint64_t bytes = 0, bytes2 = 0;   \
    int ok = rc == MPI_SUCCESS

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    CCT_ENTER(1, PMPI_Ibarrier(comm, request));
    CCT_CALL(PMPI_Ibarrier(comm, request));
    (void)ok;
    cct_nbc(r, CC_IBARRIER, rc, comm, CC_PEER_NONE, bytes, bytes2, t0, t1, 0);
    return rc;
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request)
{
    CCT_ENTER(1, PMPI_Ibcast(buffer, count, datatype, root, comm, request));
    CCT_CALL(PMPI_Ibcast(buffer, count, datatype, root, comm, request));
    if (ok) bytes = bytes2 = cct_bytes(count, datatype);
    cct_nbc(r, CC_IBCAST, rc, comm, root, bytes, bytes2, t0, t1, 0);
    return rc;
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    CCT_ENTER(1, PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                               comm, request));
    CCT_CALL(PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                           comm, request));
    if (ok)
        cct_scatter_bytes(sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &bytes,
                          &bytes2);
    cct_nbc(r, CC_ISCATTER, rc, comm, root, bytes, bytes2, t0, t1, 0);
    return rc;
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request *request)
{
    CCT_ENTER(1, PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                recvtype, root, comm, request));
    CCT_CALL(PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                            root, comm, request));
    if (ok)
        cct_scatterv_bytes(sendcounts, sendtype, recvbuf, recvcount, recvtype, root, comm, &bytes,
                           &bytes2);
    cct_nbc(r, CC_ISCATTERV, rc, comm, root, bytes, bytes2, t0, t1, 0);
    return rc;
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request *request)
{
    CCT_ENTER(1, PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                              comm, request));
    CCT_CALL(PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                          request));
    if (ok)
        cct_gather_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype, root, comm, &bytes,
                         &bytes2);
    cct_nbc(r, CC_IGATHER, rc, comm, root, bytes, bytes2, t0, t1, 0);
    return rc;
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request *request)
{
    CCT_ENTER(1, PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                               recvtype, root, comm, request));
    CCT_CALL(PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           root, comm, request));
    if (ok)
        cct_gatherv_bytes(sendbuf, sendcount, sendtype, recvcounts, recvtype, root, comm, &bytes,
                          &bytes2);
    cct_nbc(r, CC_IGATHERV, rc, comm, root, bytes, bytes2, t0, t1, 0);
    return rc;
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    CCT_ENTER(1, PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                 comm, request));
    CCT_CALL(PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                             request));
    if (ok)
        cct_allgather_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype, comm, &bytes,
                            &bytes2);
    cct_nbc(r, CC_IALLGATHER, rc, comm, CC_PEER_NONE, bytes, bytes2, t0, t1, 0);
    return rc;
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request)
{
    CCT_ENTER(1, PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                  recvtype, comm, request));
    CCT_CALL(PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                              recvtype, comm, request));
    if (ok)
        cct_allgatherv_bytes(sendbuf, sendcount, sendtype, recvcounts, recvtype, comm, &bytes,
                             &bytes2);
    cct_nbc(r, CC_IALLGATHERV, rc, comm, CC_PEER_NONE, bytes, bytes2, t0, t1, 0);
    return rc;
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    CCT_ENTER(1, PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                request));
    CCT_CALL(PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                            request));
    if (ok)
        cct_alltoall_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype, &bytes, &bytes2);
    cct_nbc(r, CC_IALLTOALL, rc, comm, CC_PEER_NONE, bytes, bytes2, t0, t1, 0);
    return rc;
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request)
{
    CCT_ENTER(1, PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                 rdispls, recvtype, comm, request));
    CCT_CALL(PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                             rdispls, recvtype, comm, request));
    if (ok)
        cct_alltoallv_bytes(sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm, &bytes,
                            &bytes2);
    cct_nbc(r, CC_IALLTOALLV, rc, comm, CC_PEER_NONE, bytes, bytes2, t0, t1, 0);
    return rc;
}

int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request *request)
{
    CCT_ENTER(1, PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                 rdispls, recvtypes, comm, request));
    CCT_CALL(PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                             rdispls, recvtypes, comm, request));
    if (ok)
        cct_alltoallw_bytes(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes,
                            cct_size(comm), &bytes, &bytes2);
    cct_nbc(r, CC_IALLTOALLW, rc, comm, CC_PEER_NONE, bytes, bytes2, t0, t1, 0);
    return rc;
}

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    CCT_ENTER(1, PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                rdispls, recvtypes, comm));
    CCT_CALL(PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                            rdispls, recvtypes, comm));
    if (ok)
        cct_alltoallw_bytes(sendbuf, sendcounts, sendtypes, recvcounts, recvtypes,
                            cct_size(comm), &bytes, &bytes2);
    cct_coll(r, CC_ALLTOALLW, rc, comm, CC_PEER_NONE, bytes, bytes2, t0, t1, 0);
    return rc;
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request)
{
    CCT_ENTER(1, PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request));
    CCT_CALL(PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request));
    if (ok) {
        bytes = cct_bytes(count, datatype);
        bytes2 = cct_rank(comm) == root ? bytes : 0;
    }
    cct_nbc(r, CC_IREDUCE, rc, comm, root, bytes, bytes2, t0, t1, cct_op(op));
    return rc;
}

#define CCT_IVECTOR_REDUCTION(NAME, CALL)                                                    \
    int MPI_##NAME(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,         \
                   MPI_Op op, MPI_Comm comm, MPI_Request *request)                           \
    {                                                                                        \
        CCT_ENTER(1, PMPI_##NAME(sendbuf, recvbuf, count, type, op, comm, request));         \
        CCT_CALL(PMPI_##NAME(sendbuf, recvbuf, count, type, op, comm, request));             \
        if (ok) bytes = bytes2 = cct_bytes(count, type);                                     \
        cct_nbc(r, CALL, rc, comm, CC_PEER_NONE, bytes, bytes2, t0, t1, cct_op(op));         \
        return rc;                                                                           \
    }

CCT_IVECTOR_REDUCTION(Iallreduce, CC_IALLREDUCE)
CCT_IVECTOR_REDUCTION(Iscan, CC_ISCAN)
CCT_IVECTOR_REDUCTION(Iexscan, CC_IEXSCAN)

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    CCT_ENTER(1, PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request));
    CCT_CALL(PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request));
    if (ok) {
        bytes = cct_sum_bytes(recvcounts, cct_size(comm), datatype);
        bytes2 = cct_bytes(recvcounts[cct_rank(comm)], datatype);
    }
    cct_nbc(r, CC_IREDUCE_SCATTER, rc, comm, CC_PEER_NONE, bytes, bytes2, t0, t1, cct_op(op));
    return rc;
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request *request)
{
    CCT_ENTER(1, PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm,
                                            request));
    CCT_CALL(PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm,
                                        request));
    if (ok) {
        bytes2 = cct_bytes(recvcount, datatype);
        bytes = bytes2 * (uint64_t)cct_size(comm);
    }
    cct_nbc(r, CC_IREDUCE_SCATTER_BLOCK, rc, comm, CC_PEER_NONE, bytes, bytes2, t0, t1,
            cct_op(op));
    return rc;
}

/* ---- neighborhood collectives: bytes to all destinations, from all sources ---- */

static inline void cct_neighbor(cc_trace_record *r, uint16_t call, int rc,
                                MPI_Comm comm, uint64_t bytes, uint64_t bytes2, uint64_t t0,
                                uint64_t t1)
{
    *r = (cc_trace_record){.call = call, .flags = cct_flags(rc, 0), .comm = cct_comm(comm),
                           .peer = CC_PEER_NONE, .tag = -1, .bytes = bytes, .bytes2 = bytes2,
                           .t_start = t0, .t_end = t1};
    cct_end(1);
}

#define CCT_NEIGHBOR_FIXED(NAME, CALL, REQ_PARAM, REQ_ARG)                             \
    int MPI_##NAME(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,  \
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm REQ_PARAM)             \
    {                                                                                         \
        CCT_ENTER(1, PMPI_##NAME(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,  \
                                 comm REQ_ARG));                                              \
        CCT_CALL(PMPI_##NAME(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,      \
                             comm REQ_ARG));                                                  \
        if (ok) {                                                                             \
            int in = 0, out = 0;                                                              \
            cct_degrees(comm, &in, &out);                                                     \
            bytes = (uint64_t)out * cct_bytes(sendcount, sendtype);                           \
            bytes2 = (uint64_t)in * cct_bytes(recvcount, recvtype);                           \
        }                                                                                     \
        cct_neighbor(r, CALL, rc, comm, bytes, bytes2, t0, t1);                        \
        return rc;                                                                            \
    }

#define CCT_REQ_PARAM , MPI_Request *request
#define CCT_REQ_ARG , request
#define CCT_NONE

CCT_NEIGHBOR_FIXED(Neighbor_allgather, CC_NEIGHBOR_ALLGATHER, CCT_NONE, CCT_NONE)
CCT_NEIGHBOR_FIXED(Neighbor_alltoall, CC_NEIGHBOR_ALLTOALL, CCT_NONE, CCT_NONE)
CCT_NEIGHBOR_FIXED(Ineighbor_allgather, CC_INEIGHBOR_ALLGATHER,
                   CCT_REQ_PARAM, CCT_REQ_ARG)
CCT_NEIGHBOR_FIXED(Ineighbor_alltoall, CC_INEIGHBOR_ALLTOALL,
                   CCT_REQ_PARAM, CCT_REQ_ARG)

#define CCT_NEIGHBOR_ALLGATHERV(NAME, CALL, REQ_PARAM, REQ_ARG)                        \
    int MPI_##NAME(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,  \
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,         \
                   MPI_Comm comm REQ_PARAM)                                                   \
    {                                                                                         \
        CCT_ENTER(1, PMPI_##NAME(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,   \
                                 recvtype, comm REQ_ARG));                                    \
        CCT_CALL(PMPI_##NAME(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,       \
                             recvtype, comm REQ_ARG));                                        \
        if (ok) {                                                                             \
            int in = 0, out = 0;                                                              \
            cct_degrees(comm, &in, &out);                                                     \
            bytes = (uint64_t)out * cct_bytes(sendcount, sendtype);                           \
            bytes2 = cct_sum_bytes(recvcounts, in, recvtype);                                 \
        }                                                                                     \
        cct_neighbor(r, CALL, rc, comm, bytes, bytes2, t0, t1);                        \
        return rc;                                                                            \
    }

CCT_NEIGHBOR_ALLGATHERV(Neighbor_allgatherv, CC_NEIGHBOR_ALLGATHERV, CCT_NONE, CCT_NONE)
CCT_NEIGHBOR_ALLGATHERV(Ineighbor_allgatherv, CC_INEIGHBOR_ALLGATHERV,
                        CCT_REQ_PARAM, CCT_REQ_ARG)

#define CCT_NEIGHBOR_ALLTOALLV(NAME, CALL, REQ_PARAM, REQ_ARG)                         \
    int MPI_##NAME(const void *sendbuf, const int sendcounts[], const int sdispls[],          \
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],              \
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm REQ_PARAM)       \
    {                                                                                         \
        CCT_ENTER(1, PMPI_##NAME(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, \
                                 rdispls, recvtype, comm REQ_ARG));                           \
        CCT_CALL(PMPI_##NAME(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,     \
                             rdispls, recvtype, comm REQ_ARG));                               \
        if (ok) {                                                                             \
            int in = 0, out = 0;                                                              \
            cct_degrees(comm, &in, &out);                                                     \
            bytes = cct_sum_bytes(sendcounts, out, sendtype);                                 \
            bytes2 = cct_sum_bytes(recvcounts, in, recvtype);                                 \
        }                                                                                     \
        cct_neighbor(r, CALL, rc, comm, bytes, bytes2, t0, t1);                        \
        return rc;                                                                            \
    }

CCT_NEIGHBOR_ALLTOALLV(Neighbor_alltoallv, CC_NEIGHBOR_ALLTOALLV, CCT_NONE, CCT_NONE)
CCT_NEIGHBOR_ALLTOALLV(Ineighbor_alltoallv, CC_INEIGHBOR_ALLTOALLV,
                       CCT_REQ_PARAM, CCT_REQ_ARG)

#define CCT_NEIGHBOR_ALLTOALLW(NAME, CALL, REQ_PARAM, REQ_ARG)                         \
    int MPI_##NAME(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],     \
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],     \
                   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],                  \
                   MPI_Comm comm REQ_PARAM)                                                   \
    {                                                                                         \
        CCT_ENTER(1, PMPI_##NAME(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,            \
                                 recvcounts, rdispls, recvtypes, comm REQ_ARG));              \
        CCT_CALL(PMPI_##NAME(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,    \
                             rdispls, recvtypes, comm REQ_ARG));                              \
        if (ok) {                                                                             \
            int in = 0, out = 0;                                                              \
            cct_degrees(comm, &in, &out);                                                     \
            for (int i = 0; i < out; i++) bytes += cct_bytes(sendcounts[i], sendtypes[i]);    \
            for (int i = 0; i < in; i++) bytes2 += cct_bytes(recvcounts[i], recvtypes[i]);    \
        }                                                                                     \
        cct_neighbor(r, CALL, rc, comm, bytes, bytes2, t0, t1);                        \
        return rc;                                                                            \
    }

CCT_NEIGHBOR_ALLTOALLW(Neighbor_alltoallw, CC_NEIGHBOR_ALLTOALLW, CCT_NONE, CCT_NONE)
CCT_NEIGHBOR_ALLTOALLW(Ineighbor_alltoallw, CC_INEIGHBOR_ALLTOALLW,
                       CCT_REQ_PARAM, CCT_REQ_ARG)
