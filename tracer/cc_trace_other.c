/* Calls the tracer does not follow: each is recorded as an OTHER record
 * naming it (CC_TRACE_OTHER_NAMES) and passed straight through, so a replay
 * can say what it cannot model instead of silently missing it. */
#include "cc_trace.h"

#define CCT_OTHER(NAME, COMM, PARAMS, ARGS)                  \
    int MPI_##NAME PARAMS                                    \
    {                                                        \
        CCT_ENTER(1, PMPI_##NAME ARGS);                      \
        uint64_t t0 = cct_now();                             \
        int rc = PMPI_##NAME ARGS;                           \
        cct_other(r, CC_OTHER_##NAME, COMM, rc, t0);         \
        return rc;                                           \
    }

#define CCT_NO_COMM CC_COMM_NONE

CCT_OTHER(Put, CCT_NO_COMM,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
           int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
           MPI_Win win),
          (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
           target_datatype, win))

CCT_OTHER(Get, CCT_NO_COMM,
          (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win),
          (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
           target_datatype, win))

CCT_OTHER(Accumulate, CCT_NO_COMM,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
           int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
           MPI_Op op, MPI_Win win),
          (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
           target_datatype, op, win))

CCT_OTHER(Get_accumulate, CCT_NO_COMM,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
           void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
           MPI_Win win),
          (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
           target_rank, target_disp, target_count, target_datatype, op, win))

CCT_OTHER(Fetch_and_op, CCT_NO_COMM,
          (const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
           MPI_Aint target_disp, MPI_Op op, MPI_Win win),
          (origin_addr, result_addr, datatype, target_rank, target_disp, op, win))

CCT_OTHER(Compare_and_swap, CCT_NO_COMM,
          (const void *origin_addr, const void *compare_addr, void *result_addr,
           MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win),
          (origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win))

CCT_OTHER(Rput, CCT_NO_COMM,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
           int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
           MPI_Win win, MPI_Request *request),
          (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
           target_datatype, win, request))

CCT_OTHER(Rget, CCT_NO_COMM,
          (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
           MPI_Request *request),
          (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
           target_datatype, win, request))

CCT_OTHER(Raccumulate, CCT_NO_COMM,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
           int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
           MPI_Op op, MPI_Win win, MPI_Request *request),
          (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
           target_datatype, op, win, request))

CCT_OTHER(Win_create, cct_comm(comm),
          (void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win),
          (base, size, disp_unit, info, comm, win))

CCT_OTHER(Win_allocate, cct_comm(comm),
          (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win),
          (size, disp_unit, info, comm, baseptr, win))

CCT_OTHER(Win_allocate_shared, cct_comm(comm),
          (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win),
          (size, disp_unit, info, comm, baseptr, win))

CCT_OTHER(Win_create_dynamic, cct_comm(comm),
          (MPI_Info info, MPI_Comm comm, MPI_Win *win),
          (info, comm, win))

CCT_OTHER(Win_free, CCT_NO_COMM,
          (MPI_Win *win),
          (win))

CCT_OTHER(Win_fence, CCT_NO_COMM,
          (int assert, MPI_Win win),
          (assert, win))

CCT_OTHER(Win_lock, CCT_NO_COMM,
          (int lock_type, int rank, int assert, MPI_Win win),
          (lock_type, rank, assert, win))

CCT_OTHER(Win_unlock, CCT_NO_COMM,
          (int rank, MPI_Win win),
          (rank, win))

CCT_OTHER(Win_lock_all, CCT_NO_COMM,
          (int assert, MPI_Win win),
          (assert, win))

CCT_OTHER(Win_unlock_all, CCT_NO_COMM,
          (MPI_Win win),
          (win))

CCT_OTHER(Win_flush, CCT_NO_COMM,
          (int rank, MPI_Win win),
          (rank, win))

CCT_OTHER(Win_flush_all, CCT_NO_COMM,
          (MPI_Win win),
          (win))

CCT_OTHER(Win_flush_local, CCT_NO_COMM,
          (int rank, MPI_Win win),
          (rank, win))

CCT_OTHER(Win_post, CCT_NO_COMM,
          (MPI_Group group, int assert, MPI_Win win),
          (group, assert, win))

CCT_OTHER(Win_start, CCT_NO_COMM,
          (MPI_Group group, int assert, MPI_Win win),
          (group, assert, win))

CCT_OTHER(Win_complete, CCT_NO_COMM,
          (MPI_Win win),
          (win))

CCT_OTHER(Win_wait, CCT_NO_COMM,
          (MPI_Win win),
          (win))

CCT_OTHER(Ibarrier, cct_comm(comm),
          (MPI_Comm comm, MPI_Request *request),
          (comm, request))

CCT_OTHER(Ibcast, cct_comm(comm),
          (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
           MPI_Request *request),
          (buffer, count, datatype, root, comm, request))

CCT_OTHER(Iscatter, cct_comm(comm),
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request),
          (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request))

CCT_OTHER(Iscatterv, cct_comm(comm),
          (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
           MPI_Request *request),
          (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
           request))

CCT_OTHER(Igather, cct_comm(comm),
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request),
          (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request))

CCT_OTHER(Igatherv, cct_comm(comm),
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
           MPI_Comm comm, MPI_Request *request),
          (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
           request))

CCT_OTHER(Iallgather, cct_comm(comm),
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),
          (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))

CCT_OTHER(Iallgatherv, cct_comm(comm),
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
           MPI_Request *request),
          (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request))

CCT_OTHER(Ialltoall, cct_comm(comm),
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),
          (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))

CCT_OTHER(Ialltoallv, cct_comm(comm),
          (const void *sendbuf, const int sendcounts[], const int sdispls[],
           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),
          (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
           request))

CCT_OTHER(Ialltoallw, cct_comm(comm),
          (const void *sendbuf, const int sendcounts[], const int sdispls[],
           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
           const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
           MPI_Request *request),
          (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm,
           request))

CCT_OTHER(Ireduce, cct_comm(comm),
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           int root, MPI_Comm comm, MPI_Request *request),
          (sendbuf, recvbuf, count, datatype, op, root, comm, request))

CCT_OTHER(Iallreduce, cct_comm(comm),
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Request *request),
          (sendbuf, recvbuf, count, datatype, op, comm, request))

CCT_OTHER(Ireduce_scatter, cct_comm(comm),
          (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
           MPI_Op op, MPI_Comm comm, MPI_Request *request),
          (sendbuf, recvbuf, recvcounts, datatype, op, comm, request))

CCT_OTHER(Ireduce_scatter_block, cct_comm(comm),
          (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Request *request),
          (sendbuf, recvbuf, recvcount, datatype, op, comm, request))

CCT_OTHER(Iscan, cct_comm(comm),
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Request *request),
          (sendbuf, recvbuf, count, datatype, op, comm, request))

CCT_OTHER(Iexscan, cct_comm(comm),
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Request *request),
          (sendbuf, recvbuf, count, datatype, op, comm, request))

CCT_OTHER(Alltoallw, cct_comm(comm),
          (const void *sendbuf, const int sendcounts[], const int sdispls[],
           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
           const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm),
          (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm))

CCT_OTHER(Send_init, cct_comm(comm),
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request),
          (buf, count, datatype, dest, tag, comm, request))

CCT_OTHER(Bsend_init, cct_comm(comm),
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request),
          (buf, count, datatype, dest, tag, comm, request))

CCT_OTHER(Ssend_init, cct_comm(comm),
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request),
          (buf, count, datatype, dest, tag, comm, request))

CCT_OTHER(Rsend_init, cct_comm(comm),
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request),
          (buf, count, datatype, dest, tag, comm, request))

CCT_OTHER(Recv_init, cct_comm(comm),
          (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
           MPI_Request *request),
          (buf, count, datatype, source, tag, comm, request))

CCT_OTHER(Start, CCT_NO_COMM,
          (MPI_Request *request),
          (request))

CCT_OTHER(Startall, CCT_NO_COMM,
          (int count, MPI_Request array_of_requests[]),
          (count, array_of_requests))

/* a request freed before it completes is never waited for: forget it */
int MPI_Request_free(MPI_Request *request)
{
    CCT_ENTER(1, PMPI_Request_free(request));
    cct_req_drop(*request);
    uint64_t t0 = cct_now();
    int rc = PMPI_Request_free(request);
    cct_other(r, CC_OTHER_Request_free, CC_COMM_NONE, rc, t0);
    return rc;
}

/* MPI_Cancel, Mprobe, Improbe, Mrecv and Imrecv are followed: cc_trace_mprobe.c */

CCT_OTHER(Comm_split_type, cct_comm(comm),
          (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm),
          (comm, split_type, key, info, newcomm))

CCT_OTHER(Comm_create_group, cct_comm(comm),
          (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm),
          (comm, group, tag, newcomm))

CCT_OTHER(Comm_idup, cct_comm(comm),
          (MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request),
          (comm, newcomm, request))

CCT_OTHER(Intercomm_create, cct_comm(local_comm),
          (MPI_Comm local_comm, int local_leader, MPI_Comm bridge_comm, int remote_leader,
           int tag, MPI_Comm *newintercomm),
          (local_comm, local_leader, bridge_comm, remote_leader, tag, newintercomm))

CCT_OTHER(Intercomm_merge, cct_comm(intercomm),
          (MPI_Comm intercomm, int high, MPI_Comm *newintercomm),
          (intercomm, high, newintercomm))

CCT_OTHER(Comm_spawn, cct_comm(comm),
          (const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
           MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]),
          (command, argv, maxprocs, info, root, comm, intercomm, array_of_errcodes))

CCT_OTHER(Cart_create, cct_comm(old_comm),
          (MPI_Comm old_comm, int ndims, const int dims[], const int periods[], int reorder,
           MPI_Comm *comm_cart),
          (old_comm, ndims, dims, periods, reorder, comm_cart))

CCT_OTHER(Graph_create, cct_comm(comm_old),
          (MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
           MPI_Comm *comm_graph),
          (comm_old, nnodes, index, edges, reorder, comm_graph))

CCT_OTHER(Dist_graph_create_adjacent, cct_comm(comm_old),
          (MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
           int outdegree, const int destinations[], const int destweights[], MPI_Info info,
           int reorder, MPI_Comm *comm_dist_graph),
          (comm_old, indegree, sources, sourceweights, outdegree, destinations, destweights, info,
           reorder, comm_dist_graph))

CCT_OTHER(Neighbor_allgather, cct_comm(comm),
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           int recvcount, MPI_Datatype recvtype, MPI_Comm comm),
          (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))

CCT_OTHER(Neighbor_alltoall, cct_comm(comm),
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           int recvcount, MPI_Datatype recvtype, MPI_Comm comm),
          (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))

CCT_OTHER(File_open, cct_comm(comm),
          (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh),
          (comm, filename, amode, info, fh))

CCT_OTHER(File_close, CCT_NO_COMM,
          (MPI_File *fh),
          (fh))

CCT_OTHER(File_read, CCT_NO_COMM,
          (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
          (fh, buf, count, datatype, status))

CCT_OTHER(File_read_at, CCT_NO_COMM,
          (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
           MPI_Status *status),
          (fh, offset, buf, count, datatype, status))

CCT_OTHER(File_read_all, CCT_NO_COMM,
          (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
          (fh, buf, count, datatype, status))

CCT_OTHER(File_read_at_all, CCT_NO_COMM,
          (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
           MPI_Status *status),
          (fh, offset, buf, count, datatype, status))

CCT_OTHER(File_write, CCT_NO_COMM,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
          (fh, buf, count, datatype, status))

CCT_OTHER(File_write_at, CCT_NO_COMM,
          (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
           MPI_Status *status),
          (fh, offset, buf, count, datatype, status))

CCT_OTHER(File_write_all, CCT_NO_COMM,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
          (fh, buf, count, datatype, status))

CCT_OTHER(File_write_at_all, CCT_NO_COMM,
          (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
           MPI_Status *status),
          (fh, offset, buf, count, datatype, status))

CCT_OTHER(File_iread, CCT_NO_COMM,
          (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request),
          (fh, buf, count, datatype, request))

CCT_OTHER(File_iwrite, CCT_NO_COMM,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request),
          (fh, buf, count, datatype, request))

CCT_OTHER(File_set_view, CCT_NO_COMM,
          (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
           const char *datarep, MPI_Info info),
          (fh, disp, etype, filetype, datarep, info))

CCT_OTHER(File_sync, CCT_NO_COMM,
          (MPI_File fh),
          (fh))
