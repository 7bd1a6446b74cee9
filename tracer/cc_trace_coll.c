/* Collectives, communicator management and Pcontrol.
 *
 * Byte counts follow docs/trace-format.md.  Only arguments MPI says are
 * significant at this rank are read: at a non-root rank the root's buffers
 * and datatypes may be anything. */
#include "cc_trace_coll.h"

/* The call's span starts here, after CCT_ENTER: the tracer's own work before the call (the page
 * check of a receive buffer, cct_cold_recv: mincore, 1 to 2 us for 64 KiB on a VM) lies inside
 * the span, which a replay charges by the model, not in the gap before it, which a replay keeps
 * as the program's computation. */
#define CCT_START const uint64_t t0 = cct_now()

/* Time the call from CCT_START; a call that failed is recorded as such and nothing more is
 * asked about its arguments (they may be invalid: asking could be fatal). */
#define CCT_TIMED(ID, COMM, EXPR)                                                            \
    int rc = EXPR;                                                                           \
    uint64_t t1 = cct_now();                                                                 \
    if (rc != MPI_SUCCESS) {                                                                 \
        *r = (cc_trace_record){.call = ID, .flags = CC_REC_ERROR, .comm = COMM,              \
                               .peer = CC_PEER_NONE, .tag = -1, .t_start = t0, .t_end = t1}; \
        cct_end(1);                                                                          \
        return rc;                                                                           \
    }

int MPI_Barrier(MPI_Comm comm)
{
    CCT_ENTER(1, PMPI_Barrier(comm));
    CCT_START;
    CCT_TIMED(CC_BARRIER, cct_comm(comm), PMPI_Barrier(comm));
    cct_coll(r, CC_BARRIER, rc, comm, CC_PEER_NONE, 0, 0, t0, t1, 0);
    return rc;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    CCT_ENTER(1, PMPI_Bcast(buf, count, type, root, comm));
    CCT_START;
    if (cct_rank(comm) != root) cct_cold_recv(buf, count, type);
    CCT_TIMED(CC_BCAST, cct_comm(comm), PMPI_Bcast(buf, count, type, root, comm));
    uint64_t bytes = cct_bytes(count, type);
    cct_coll(r, CC_BCAST, rc, comm, root, bytes, bytes, t0, t1, 0);
    return rc;
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    CCT_ENTER(1, PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                              comm));
    CCT_START;
    cct_cold_recv(recvbuf, recvcount, recvtype); /* the root's own part too */
    CCT_TIMED(CC_SCATTER, cct_comm(comm),
              PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
    uint64_t bytes, bytes2;
    cct_scatter_bytes(sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &bytes,
                      &bytes2);
    cct_coll(r, CC_SCATTER, rc, comm, root, bytes, bytes2, t0, t1, 0);
    return rc;
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    CCT_ENTER(1, PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                               recvtype, root, comm));
    CCT_START;
    CCT_TIMED(CC_SCATTERV, cct_comm(comm),
              PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
              root, comm));
    uint64_t bytes, bytes2;
    cct_scatterv_bytes(sendcounts, sendtype, recvbuf, recvcount, recvtype, root, comm, &bytes,
                       &bytes2);
    cct_coll(r, CC_SCATTERV, rc, comm, root, bytes, bytes2, t0, t1, 0);
    return rc;
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    CCT_ENTER(1, PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                             comm));
    CCT_START;
    if (cct_rank(comm) == root && recvbuf != MPI_IN_PLACE)
        cct.cold += cct_cold_bytes(recvbuf, cct_bytes(recvcount, recvtype) * (uint64_t)cct_size(comm));
    CCT_TIMED(CC_GATHER, cct_comm(comm),
              PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
    uint64_t bytes, bytes2;
    cct_gather_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype, root, comm, &bytes,
                     &bytes2);
    cct_coll(r, CC_GATHER, rc, comm, root, bytes, bytes2, t0, t1, 0);
    return rc;
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    CCT_ENTER(1, PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                              recvtype, root, comm));
    CCT_START;
    CCT_TIMED(CC_GATHERV, cct_comm(comm),
              PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
              root, comm));
    uint64_t bytes, bytes2;
    cct_gatherv_bytes(sendbuf, sendcount, sendtype, recvcounts, recvtype, root, comm, &bytes,
                      &bytes2);
    cct_coll(r, CC_GATHERV, rc, comm, root, bytes, bytes2, t0, t1, 0);
    return rc;
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    CCT_ENTER(1, PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                comm));
    CCT_START;
    if (recvbuf != MPI_IN_PLACE)
        cct.cold += cct_cold_bytes(recvbuf, cct_bytes(recvcount, recvtype) * (uint64_t)cct_size(comm));
    CCT_TIMED(CC_ALLGATHER, cct_comm(comm),
              PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
    uint64_t bytes, bytes2;
    cct_allgather_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype, comm, &bytes, &bytes2);
    cct_coll(r, CC_ALLGATHER, rc, comm, CC_PEER_NONE, bytes, bytes2, t0, t1, 0);
    return rc;
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    CCT_ENTER(1, PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                 recvtype, comm));
    CCT_START;
    CCT_TIMED(CC_ALLGATHERV, cct_comm(comm),
              PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
              comm));
    uint64_t bytes, bytes2;
    cct_allgatherv_bytes(sendbuf, sendcount, sendtype, recvcounts, recvtype, comm, &bytes,
                         &bytes2);
    cct_coll(r, CC_ALLGATHERV, rc, comm, CC_PEER_NONE, bytes, bytes2, t0, t1, 0);
    return rc;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    CCT_ENTER(1, PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                               comm));
    CCT_START;
    if (recvbuf != MPI_IN_PLACE)
        cct.cold += cct_cold_bytes(recvbuf, cct_bytes(recvcount, recvtype) * (uint64_t)cct_size(comm));
    CCT_TIMED(CC_ALLTOALL, cct_comm(comm),
              PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
    uint64_t bytes, bytes2;
    cct_alltoall_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype, &bytes, &bytes2);
    cct_coll(r, CC_ALLTOALL, rc, comm, CC_PEER_NONE, CCT_PLACED(cct_not_in_place(sendbuf), bytes),
             CCT_PLACED(recvbuf, bytes2), t0, t1, 0);
    return rc;
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    CCT_ENTER(1, PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                rdispls, recvtype, comm));
    CCT_START;
    CCT_TIMED(CC_ALLTOALLV, cct_comm(comm),
              PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
              recvtype, comm));
    uint64_t bytes, bytes2;
    cct_alltoallv_bytes(sendbuf, sendcounts, sendtype, recvcounts, recvtype, comm, &bytes,
                        &bytes2);
    cct_coll(r, CC_ALLTOALLV, rc, comm, CC_PEER_NONE, bytes, bytes2, t0, t1, 0);
    return rc;
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm)
{
    CCT_ENTER(1, PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm));
    CCT_START;
    if (cct_rank(comm) == root) cct_cold_recv(recvbuf, count, type);
    CCT_TIMED(CC_REDUCE, cct_comm(comm),
              PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm));
    uint64_t bytes = cct_bytes(count, type);
    cct_coll(r, CC_REDUCE, rc, comm, root, bytes, cct_rank(comm) == root ? bytes : 0, t0, t1,
             cct_op(op));
    return rc;
}

#define CCT_VECTOR_REDUCTION(NAME, CALL)                                                      \
    int MPI_##NAME(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,          \
                   MPI_Op op, MPI_Comm comm)                                                  \
    {                                                                                         \
        CCT_ENTER(1, PMPI_##NAME(sendbuf, recvbuf, count, type, op, comm));                   \
        CCT_START;                                                                            \
        cct_cold_recv(recvbuf, count, type);                                                  \
        CCT_TIMED(CALL, cct_comm(comm), PMPI_##NAME(sendbuf, recvbuf, count, type, op, comm)); \
        uint64_t bytes = cct_bytes(count, type);                                              \
        cct_coll(r, CALL, rc, comm, CC_PEER_NONE, CCT_PLACED(cct_not_in_place(sendbuf), bytes), \
                 CCT_PLACED(recvbuf, bytes), t0, t1, cct_op(op));                             \
        return rc;                                                                            \
    }

CCT_VECTOR_REDUCTION(Allreduce, CC_ALLREDUCE)
CCT_VECTOR_REDUCTION(Scan, CC_SCAN)
CCT_VECTOR_REDUCTION(Exscan, CC_EXSCAN)

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    CCT_ENTER(1, PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm));
    CCT_START;
    CCT_TIMED(CC_REDUCE_SCATTER, cct_comm(comm),
              PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm));
    cct_coll(r, CC_REDUCE_SCATTER, rc, comm, CC_PEER_NONE,
             cct_sum_bytes(recvcounts, cct_size(comm), type),
             cct_bytes(recvcounts[cct_rank(comm)], type), t0, t1, cct_op(op));
    return rc;
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    CCT_ENTER(1, PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm));
    CCT_START;
    CCT_TIMED(CC_REDUCE_SCATTER_BLOCK, cct_comm(comm),
              PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm));
    uint64_t each = cct_bytes(recvcount, type);
    cct_coll(r, CC_REDUCE_SCATTER_BLOCK, rc, comm, CC_PEER_NONE,
             each * (uint64_t)cct_size(comm), each, t0, t1, cct_op(op));
    return rc;
}

/* ---- communicators ---- */

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    CCT_ENTER(cct_members_records(comm), PMPI_Comm_split(comm, color, key, newcomm));
    CCT_START;
    CCT_TIMED(CC_COMM_SPLIT, cct_comm(comm), PMPI_Comm_split(comm, color, key, newcomm));
    cct_comm_created(r, CC_COMM_SPLIT, cct_comm(comm), newcomm, rc, t0, t1);
    return rc;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    CCT_ENTER(cct_members_records(comm), PMPI_Comm_dup(comm, newcomm));
    CCT_START;
    CCT_TIMED(CC_COMM_DUP, cct_comm(comm), PMPI_Comm_dup(comm, newcomm));
    cct_comm_created(r, CC_COMM_DUP, cct_comm(comm), newcomm, rc, t0, t1);
    if (rc == MPI_SUCCESS) cct_neighbors(*newcomm); /* a duplicate keeps the topology */
    return rc;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    CCT_ENTER(cct_members_records(comm), PMPI_Comm_create(comm, group, newcomm));
    CCT_START;
    CCT_TIMED(CC_COMM_CREATE, cct_comm(comm), PMPI_Comm_create(comm, group, newcomm));
    cct_comm_created(r, CC_COMM_CREATE, cct_comm(comm), newcomm, rc, t0, t1);
    return rc;
}

int MPI_Comm_free(MPI_Comm *comm)
{
    CCT_ENTER(1, PMPI_Comm_free(comm));
    CCT_START;
    MPI_Comm handle = *comm;
    int32_t id = cct_comm(handle);
    CCT_TIMED(CC_COMM_FREE, id, PMPI_Comm_free(comm));
    cct_comm_forget(handle);
    *r = (cc_trace_record){.call = CC_COMM_FREE, .comm = id,
                           .peer = CC_PEER_NONE, .tag = -1, .t_start = t0, .t_end = t1};
    cct_end(1);
    return rc;
}

/* ---- phases ---- */

int MPI_Pcontrol(const int level, ...)
{
    CCT_ENTER(1, PMPI_Pcontrol(level));
    CCT_START;
    CCT_TIMED(CC_PCONTROL, CC_COMM_NONE, PMPI_Pcontrol(level));
    *r = (cc_trace_record){.call = CC_PCONTROL, .comm = CC_COMM_NONE, .peer = CC_PEER_NONE, .tag = -1,
                           .t_start = t0, .t_end = t1, .aux = level};
    cct_end(1);
    return rc;
}
