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

CCT_OTHER(Cancel, CCT_NO_COMM,
          (MPI_Request *request),
          (request))

CCT_OTHER(Mprobe, cct_comm(comm),
          (int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status),
          (source, tag, comm, message, status))

CCT_OTHER(Improbe, cct_comm(comm),
          (int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status),
          (source, tag, comm, flag, message, status))

CCT_OTHER(Mrecv, CCT_NO_COMM,
          (void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status),
          (buf, count, type, message, status))

CCT_OTHER(Imrecv, CCT_NO_COMM,
          (void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request),
          (buf, count, type, message, request))

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

