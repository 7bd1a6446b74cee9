/* One-sided communication.  Each window gets an id (aux of its records) and a
 * private duplicate of its communicator.  An operation is recorded at its origin
 * (peer = target, bytes = bytes to the target, bytes2 = bytes from it; aux2 = 1
 * when issued inside a lock epoch, 2 inside a PSCW access epoch, 0 in a fence epoch).  A target
 * never sees the operations on it, so at each MPI_Win_fence the ranks exchange
 * what each moved to and from each other since the last fence (one Alltoall on
 * the private communicator, inside the fence's recorded span) and each rank
 * writes an RMA_IN record per origin that touched it, before the fence's record.
 * A PSCW epoch (Win_post/Win_start/Win_complete/Win_wait) does the same with
 * point-to-point messages on that communicator: at Win_complete each origin sends
 * every target of its start group what it moved to and from it, writing an RMA_IN
 * record per target (tag 1, before Win_complete's record), and at Win_wait each target
 * receives them from every origin of its post group (RMA_IN records, tag 0, before
 * Win_wait's). Lock and flush calls are recorded as they are. */
#include <stdlib.h>
#include <string.h>

#include "cc_trace_coll.h"

typedef struct {
    MPI_Win handle;
    int32_t id, comm; /* the window's id, its communicator's */
    MPI_Comm own;     /* the tracer's duplicate, for the fence's exchange */
    int size, epochs; /* communicator size; lock epochs open */
    uint64_t *moved;  /* per target: bytes to it, bytes from it (2 x size); then as much
                       * for what the fence's Alltoall receives */
    int *start, nstart, *post, npost; /* the PSCW groups, as ranks in the communicator */
    int start_cap, post_cap;          /* their arrays' room (two ints a member), kept */
    int access;                       /* a PSCW access epoch is open (Win_start) */
} cct_window;

static cct_window *cct_wins;
static int cct_nwins, cct_wins_cap;
static int32_t cct_next_win = 1;

static cct_window *cct_win(MPI_Win win)
{
    for (int i = cct_nwins - 1; i >= 0; i--)
        if (cct_wins[i].handle == win) return &cct_wins[i];
    return NULL;
}

static int32_t cct_win_created(MPI_Win win, MPI_Comm comm)
{
    if (cct_nwins == cct_wins_cap) {
        int cap = cct_wins_cap ? 2 * cct_wins_cap : 16;
        cct_window *grown = cct_realloc(cct_wins, (size_t)cap * sizeof *grown);
        if (!grown) return CC_COMM_NONE;
        cct_wins = grown;
        cct_wins_cap = cap;
    }
    cct_window w = {.handle = win, .id = cct_next_win++, .comm = cct_comm(comm),
                    .size = cct_size(comm), .own = MPI_COMM_NULL};
    w.moved = cct_alloc(4 * (size_t)w.size * sizeof *w.moved);
    if (!w.moved || PMPI_Comm_dup(comm, &w.own) != MPI_SUCCESS) {
        cct_free(w.moved);
        return CC_COMM_NONE;
    }
    cct_wins[cct_nwins++] = w;
    return w.id;
}

static void cct_win_record(cc_trace_record *r, uint16_t call, int rc, const cct_window *w,
                           int peer, uint64_t bytes, uint64_t bytes2, int32_t aux2, uint64_t t0,
                           uint64_t t1)
{
    *r = (cc_trace_record){.call = call, .flags = cct_flags(rc, 0),
                           .comm = w ? w->comm : CC_COMM_NONE, .peer = peer, .tag = -1,
                           .bytes = bytes, .bytes2 = bytes2, .t_start = t0, .t_end = t1,
                           .aux = w ? w->id : -1, .aux2 = aux2};
}

/* ---- windows ---- */

#define CCT_WIN_NEW(NAME, CALL, PARAMS, ARGS, COMM, WIN)                          \
    int MPI_##NAME PARAMS                                                         \
    {                                                                             \
        CCT_ENTER(1, PMPI_##NAME ARGS);                                           \
        uint64_t t0 = cct_now();                                                  \
        int rc = PMPI_##NAME ARGS;                                                \
        uint64_t t1 = cct_now();                                                  \
        int32_t id = rc == MPI_SUCCESS ? cct_win_created(*(WIN), COMM) : -1;      \
        *r = (cc_trace_record){.call = CALL, .flags = cct_flags(rc, 0),           \
                               .comm = cct_comm(COMM), .peer = CC_PEER_NONE,      \
                               .tag = -1, .t_start = t0, .t_end = t1, .aux = id}; \
        cct_end(1);                                                               \
        return rc;                                                                \
    }

CCT_WIN_NEW(Win_create, CC_WIN_CREATE,
            (void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win),
            (base, size, disp_unit, info, comm, win), comm, win)
CCT_WIN_NEW(Win_allocate, CC_WIN_ALLOCATE,
            (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
             MPI_Win *win),
            (size, disp_unit, info, comm, baseptr, win), comm, win)
CCT_WIN_NEW(Win_allocate_shared, CC_WIN_ALLOCATE_SHARED,
            (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
             MPI_Win *win),
            (size, disp_unit, info, comm, baseptr, win), comm, win)
CCT_WIN_NEW(Win_create_dynamic, CC_WIN_CREATE_DYNAMIC, (MPI_Info info, MPI_Comm comm, MPI_Win *win),
            (info, comm, win), comm, win)

int MPI_Win_free(MPI_Win *win)
{
    CCT_ENTER(1, PMPI_Win_free(win));
    cct_window *w = cct_win(*win);
    cct_window gone = w ? *w : (cct_window){.id = -1, .comm = CC_COMM_NONE};
    uint64_t t0 = cct_now();
    int rc = PMPI_Win_free(win);
    uint64_t t1 = cct_now();
    if (rc == MPI_SUCCESS && w) {
        PMPI_Comm_free(&w->own);
        cct_free(w->moved);
        cct_free(w->start);
        cct_free(w->post);
        *w = cct_wins[--cct_nwins];
    }
    cct_win_record(r, CC_WIN_FREE, rc, &gone, CC_PEER_NONE, 0, 0, 0, t0, t1);
    cct_end(1);
    return rc;
}

/* ---- operations: recorded at the origin, counted for the next fence ---- */

static void cct_rma_op(cc_trace_record *r, uint16_t call, int rc, MPI_Win win, int target,
                       uint64_t to, uint64_t from, uint64_t t0)
{
    uint64_t t1 = cct_now();
    cct_window *w = cct_win(win);
    int in_epoch = w && w->epochs > 0;
    if (rc == MPI_SUCCESS && w && !in_epoch && target >= 0 && target < w->size) {
        w->moved[2 * target] += to;
        w->moved[2 * target + 1] += from;
    }
    /* aux2: 1 inside a lock epoch, 2 inside a PSCW access epoch, 0 in a fence epoch */
    int32_t epoch = in_epoch ? 1 : w && w->access ? 2 : 0;
    cct_win_record(r, call, rc, w, cct_peer(target), to, from, epoch, t0, t1);
    cct_end(1);
}

#define CCT_RMA(NAME, CALL, PARAMS, ARGS, TARGET, TO, FROM)                 \
    int MPI_##NAME PARAMS                                                   \
    {                                                                       \
        CCT_ENTER(1, PMPI_##NAME ARGS);                                     \
        uint64_t t0 = cct_now();                                            \
        int rc = PMPI_##NAME ARGS;                                          \
        cct_rma_op(r, CALL, rc, win, TARGET, TO, FROM, t0);                 \
        return rc;                                                          \
    }

CCT_RMA(Put, CC_PUT,
        (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win),
        (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
         target_datatype, win),
        target_rank, CCT_BYTES(origin_count, origin_datatype), 0)

CCT_RMA(Get, CC_GET,
        (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win),
        (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
         target_datatype, win),
        target_rank, 0, CCT_BYTES(origin_count, origin_datatype))

CCT_RMA(Accumulate, CC_ACCUMULATE,
        (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
         MPI_Win win),
        (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
         target_datatype, op, win),
        target_rank, CCT_BYTES(origin_count, origin_datatype), 0)

CCT_RMA(Get_accumulate, CC_GET_ACCUMULATE,
        (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
         void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
         MPI_Win win),
        (origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
         target_rank, target_disp, target_count, target_datatype, op, win),
        target_rank, CCT_BYTES(origin_count, origin_datatype),
        CCT_BYTES(result_count, result_datatype))

CCT_RMA(Fetch_and_op, CC_FETCH_AND_OP,
        (const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
         MPI_Aint target_disp, MPI_Op op, MPI_Win win),
        (origin_addr, result_addr, datatype, target_rank, target_disp, op, win),
        target_rank, CCT_BYTES(1, datatype), CCT_BYTES(1, datatype))

CCT_RMA(Compare_and_swap, CC_COMPARE_AND_SWAP,
        (const void *origin_addr, const void *compare_addr, void *result_addr,
         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win),
        (origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win),
        target_rank, CCT_BYTES(2, datatype), CCT_BYTES(1, datatype))

/* the request-based ones: their requests are not followed (no COMPLETE record) */
CCT_RMA(Rput, CC_RPUT,
        (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
         MPI_Request *request),
        (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
         target_datatype, win, request),
        target_rank, CCT_BYTES(origin_count, origin_datatype), 0)

CCT_RMA(Rget, CC_RGET,
        (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
         MPI_Request *request),
        (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
         target_datatype, win, request),
        target_rank, 0, CCT_BYTES(origin_count, origin_datatype))

CCT_RMA(Raccumulate, CC_RACCUMULATE,
        (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
         MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
         MPI_Win win, MPI_Request *request),
        (origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
         target_datatype, op, win, request),
        target_rank, CCT_BYTES(origin_count, origin_datatype), 0)

/* ---- the fence: RMA_IN records, then the fence's own ---- */

int MPI_Win_fence(int assert, MPI_Win win)
{
    cct_window *w = cct_win(win);
    uint32_t k = 1 + (w ? (uint32_t)w->size : 0);
    CCT_ENTER(k, PMPI_Win_fence(assert, win));
    uint64_t t0 = cct_now();
    uint32_t n = 0;
    if (w) {
        uint64_t *in = w->moved + 2 * (size_t)w->size;
        if (PMPI_Alltoall(w->moved, 2, MPI_UINT64_T, in, 2, MPI_UINT64_T, w->own) == MPI_SUCCESS) {
            for (int origin = 0; origin < w->size; origin++)
                if (in[2 * origin] || in[2 * origin + 1])
                    cct_win_record(r + n++, CC_RMA_IN, MPI_SUCCESS, w, origin, in[2 * origin],
                                   in[2 * origin + 1], 0, t0, t0);
        }
        memset(w->moved, 0, 2 * (size_t)w->size * sizeof *w->moved);
    }
    int rc = PMPI_Win_fence(assert, win);
    cct_win_record(r + n++, CC_WIN_FENCE, rc, w, CC_PEER_NONE, 0, 0, assert, t0, cct_now());
    cct_end(n);
    return rc;
}

/* ---- PSCW epochs: the moved bytes sent from origins to targets ---- */

enum { CCT_PSCW_TAG = 7 };

/* The group's members as ranks of the window's communicator, in *ranks (grown, kept). */
static void cct_win_group(cct_window *w, MPI_Group group, int **ranks, int *cap, int *n)
{
    *n = 0;
    int size = 0;
    MPI_Group all;
    if (PMPI_Group_size(group, &size) != MPI_SUCCESS || size <= 0) return;
    int *both = cct_grow(*ranks, cap, 2 * size, sizeof *both);
    if (!both) return;
    *ranks = both;
    if (PMPI_Comm_group(w->own, &all) != MPI_SUCCESS) return;
    for (int i = 0; i < size; i++) both[i] = i;
    PMPI_Group_translate_ranks(group, size, both, all, both + size);
    PMPI_Group_free(&all);
    memmove(both, both + size, (size_t)size * sizeof *both);
    *n = size;
}

/* Win_post (post = 1) or Win_start: the group kept for Win_wait or Win_complete */
static int cct_win_epoch(cc_trace_record *r, uint16_t call, int rc, MPI_Group group, MPI_Win win,
                         int post, uint64_t t0)
{
    cct_window *w = cct_win(win);
    if (w && rc == MPI_SUCCESS) {
        if (post) {
            cct_win_group(w, group, &w->post, &w->post_cap, &w->npost);
        } else {
            cct_win_group(w, group, &w->start, &w->start_cap, &w->nstart);
            w->access = 1;
        }
    }
    cct_win_record(r, call, rc, w, CC_PEER_NONE, 0, 0, 0, t0, cct_now());
    cct_end(1);
    return rc;
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    CCT_ENTER(1, PMPI_Win_post(group, assert, win));
    uint64_t t0 = cct_now();
    return cct_win_epoch(r, CC_WIN_POST, PMPI_Win_post(group, assert, win), group, win, 1, t0);
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    CCT_ENTER(1, PMPI_Win_start(group, assert, win));
    uint64_t t0 = cct_now();
    return cct_win_epoch(r, CC_WIN_START, PMPI_Win_start(group, assert, win), group, win, 0, t0);
}

int MPI_Win_complete(MPI_Win win)
{
    cct_window *w = cct_win(win);
    CCT_ENTER(1 + (w ? (uint32_t)w->nstart : 0), PMPI_Win_complete(win));
    uint64_t t0 = cct_now();
    int rc = PMPI_Win_complete(win);
    uint32_t n = 0;
    if (w && rc == MPI_SUCCESS) {
        w->access = 0;
        for (int i = 0; i < w->nstart; i++) {
            int target = w->start[i];
            if (target < 0 || target >= w->size) continue;
            uint64_t *moved = w->moved + 2 * target;
            if (PMPI_Send(moved, 2, MPI_UINT64_T, target, CCT_PSCW_TAG, w->own) == MPI_SUCCESS) {
                cc_trace_record *m = r + n++;
                cct_win_record(m, CC_RMA_IN, MPI_SUCCESS, w, target, moved[0], moved[1], 0, t0,
                               t0);
                m->tag = 1;
            }
            moved[0] = moved[1] = 0;
        }
    }
    cct_win_record(r + n++, CC_WIN_COMPLETE, rc, w, CC_PEER_NONE, 0, 0, 0, t0, cct_now());
    cct_end(n);
    return rc;
}

int MPI_Win_wait(MPI_Win win)
{
    cct_window *w = cct_win(win);
    CCT_ENTER(1 + (w ? (uint32_t)w->npost : 0), PMPI_Win_wait(win));
    uint64_t t0 = cct_now();
    int rc = PMPI_Win_wait(win);
    uint32_t n = 0;
    if (w && rc == MPI_SUCCESS) {
        for (int i = 0; i < w->npost; i++) {
            int origin = w->post[i];
            uint64_t in[2];
            if (origin < 0 || origin >= w->size ||
                PMPI_Recv(in, 2, MPI_UINT64_T, origin, CCT_PSCW_TAG, w->own, MPI_STATUS_IGNORE)
                    != MPI_SUCCESS)
                continue;
            cct_win_record(r + n++, CC_RMA_IN, MPI_SUCCESS, w, origin, in[0], in[1], 0, t0, t0);
        }
    }
    cct_win_record(r + n++, CC_WIN_WAIT, rc, w, CC_PEER_NONE, 0, 0, 0, t0, cct_now());
    cct_end(n);
    return rc;
}

/* ---- lock epochs, flushes: recorded as they are ---- */

static int cct_win_sync(cc_trace_record *r, uint16_t call, int rc, MPI_Win win, int peer,
                        int opens, uint64_t t0)
{
    cct_window *w = cct_win(win);
    if (w && rc == MPI_SUCCESS) w->epochs += opens;
    cct_win_record(r, call, rc, w, peer, 0, 0, 0, t0, cct_now());
    cct_end(1);
    return rc;
}

#define CCT_WIN_SYNC(NAME, CALL, PARAMS, ARGS, PEER, OPENS)                     \
    int MPI_##NAME PARAMS                                                       \
    {                                                                           \
        CCT_ENTER(1, PMPI_##NAME ARGS);                                         \
        uint64_t t0 = cct_now();                                                \
        return cct_win_sync(r, CALL, PMPI_##NAME ARGS, win, PEER, OPENS, t0);   \
    }

CCT_WIN_SYNC(Win_lock, CC_WIN_LOCK, (int lock_type, int rank, int assert, MPI_Win win),
             (lock_type, rank, assert, win), cct_peer(rank), 1)
CCT_WIN_SYNC(Win_unlock, CC_WIN_UNLOCK, (int rank, MPI_Win win), (rank, win), cct_peer(rank), -1)
CCT_WIN_SYNC(Win_lock_all, CC_WIN_LOCK_ALL, (int assert, MPI_Win win), (assert, win),
             CC_PEER_NONE, 1)
CCT_WIN_SYNC(Win_unlock_all, CC_WIN_UNLOCK_ALL, (MPI_Win win), (win), CC_PEER_NONE, -1)
CCT_WIN_SYNC(Win_flush, CC_WIN_FLUSH, (int rank, MPI_Win win), (rank, win), cct_peer(rank), 0)
CCT_WIN_SYNC(Win_flush_all, CC_WIN_FLUSH_ALL, (MPI_Win win), (win), CC_PEER_NONE, 0)
CCT_WIN_SYNC(Win_flush_local, CC_WIN_FLUSH_LOCAL, (int rank, MPI_Win win), (rank, win),
             cct_peer(rank), 0)

