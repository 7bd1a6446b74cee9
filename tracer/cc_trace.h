/* The tracer's state and the inline helpers every wrapper uses.
 *
 * One process, one buffer of records: a wrapper reserves the records its call
 * will write before calling PMPI (so a flush, and its MARK record, never
 * falls between a call and its COMPLETE or MEMBERS records), fills them after,
 * and commits them with one store.  No allocation, no lock on that path:
 * MPI_THREAD_MULTIPLE is not supported (tracing turns itself off). */
#ifndef CC_TRACE_H
#define CC_TRACE_H

#include <mpi.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cc_timer.h"
#include "cc_trace_format.h"

typedef struct cct_state {
    cc_trace_record *buf;
    uint32_t cap, n;  /* records the buffer holds, records in it now */
    int on;           /* between a successful MPI_Init and MPI_Finalize */
    int depth;        /* >0 inside a wrapper: MPI calls a library makes itself are not traced */
    int flushing;     /* a signal arriving mid-write must not write the same records twice */
    int fd;
    uint64_t written; /* records already in the file */
    uint64_t next_req;
    uint64_t cold;    /* the wrapper's receive buffer's bytes in pages not resident at entry */
    cc_trace_header header;
} cct_state;

extern cct_state cct;

/* The tracer's memory (cc_trace_mem.c): its own zeroed pages, never the program's heap, so
 * that a traced program's buffers lie where they lie untraced.  cct_realloc keeps the
 * contents and zeroes what it adds; cct_grow grows an array to at least `count` items (256
 * at least) and returns NULL, the array kept, when it cannot. */
void *cct_alloc(size_t bytes);
void *cct_realloc(void *p, size_t bytes);
void cct_free(void *p);
void *cct_grow(void *array, int *cap, int count, size_t item);

/* Room for k records (flushing or, for a huge request array, growing);
 * 0 when tracing had to stop (a write failed, no memory). */
int cct_make_room(uint32_t k);
int32_t cct_comm_lookup(MPI_Comm comm);
/* The tracer's own ps per traced call outside the calls' spans, measured on
 * the wrappers (cc_trace_self.c); 0 when it cannot be measured. */
/* the tracer's own time outside the spans (ps): per wrapper, per COMPLETE record and per
 * blocking collective's wrapper */
void cct_self_cost_ps(uint32_t *per_wrapper, uint32_t *per_complete, uint32_t *per_collective);

/* Bytes of [buf, buf + len) in pages not resident now (mincore); 0 for buffers of
 * less than CC_COLD_MIN_BYTES, MPI_IN_PLACE or NULL. */
uint64_t cct_cold_bytes(const void *buf, uint64_t len);

/* At a wrapper's entry, before the call: its receive buffer of count x type, whose
 * cold bytes go into the call's record (cct_end) */
static inline void cct_cold_recv(const void *buf, int count, MPI_Datatype type)
{
    if (buf == MPI_IN_PLACE || buf == NULL || count <= 0 || type == MPI_DATATYPE_NULL) return;
    int size = 0;
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS || size <= 0) return;
    cct.cold += cct_cold_bytes(buf, (uint64_t)count * (uint64_t)size);
}

/* Reserve k records and enter a wrapper; returns where they go, or NULL
 * when the call is to pass through untraced. */
static inline cc_trace_record *cct_begin(uint32_t k)
{
    if (!cct.on || cct.depth || (cct.cap - cct.n < k && !cct_make_room(k))) return NULL;
    cct.depth++;
    return cct.buf + cct.n;
}

/* The opening line of every wrapper: reserve k records, or call through. */
#define CCT_ENTER(k, passthrough)                     \
    cc_trace_record *r = cct_begin(k);                \
    if (!r) return passthrough

/* Publish k filled records; a signal handler flushing the buffer sees them
 * only once they are whole. */
static inline void cct_end(uint32_t k)
{
    if (cct.cold) { /* the first record is the call's own */
        cc_trace_record *r = cct.buf + cct.n;
        if (!(r->flags & CC_REC_ERROR)) {
            r->flags |= CC_REC_COLD;
            if (r->call == CC_IRECV) {
                r->aux = (int32_t)(uint32_t)cct.cold;
                r->aux2 = (int32_t)(uint32_t)(cct.cold >> 32);
            } else {
                r->req = cct.cold;
            }
        }
        cct.cold = 0;
    }
    atomic_signal_fence(memory_order_release);
    cct.n += k;
    cct.depth--;
}

static inline uint64_t cct_now(void) { return (uint64_t)cc_now_ns(); }

static inline uint16_t cct_flags(int rc, uint16_t flags)
{
    return (uint16_t)(flags | (rc != MPI_SUCCESS ? CC_REC_ERROR : 0));
}

static inline int32_t cct_comm(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD) return CC_COMM_WORLD;
    if (comm == MPI_COMM_SELF) return CC_COMM_SELF;
    return cct_comm_lookup(comm);
}

/* The MPI constants differ between libraries (Open MPI: ANY_SOURCE -1,
 * PROC_NULL -2; MPICH the other way round); the trace has its own. */
static inline int32_t cct_peer(int rank)
{
    if (rank == MPI_ANY_SOURCE) return CC_PEER_ANY;
    if (rank == MPI_PROC_NULL) return CC_PEER_NULL;
    return rank;
}

static inline int32_t cct_tag(int tag) { return tag == MPI_ANY_TAG ? CC_TAG_ANY : tag; }

/* Only for arguments MPI says are significant at this rank: an ignored
 * datatype may be anything, and asking its size would be an MPI error. */
static inline uint64_t cct_bytes(int count, MPI_Datatype type)
{
    int size = 0;
    if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS
        || size <= 0)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

/* Sizes are asked only after the call succeeded: a call that failed (with
 * MPI_ERRORS_RETURN) may have had an invalid datatype, and asking its size
 * could raise a fatal error the program itself would not have had. */
#define CCT_BYTES(count, type) (rc == MPI_SUCCESS ? cct_bytes(count, type) : 0)
/* CCT_RECEIVED: a blocking receive reads what arrived (its status's count, its buffer's
 * place) before its t_end, inside its span: the time outside the spans is calibrated on
 * sends (cc_trace_self.c), which have no status to read, so a read after t_end would pass
 * for the program's computation (docs/trace-format.md). */
#define CCT_STATUS_BYTES(status) (rc == MPI_SUCCESS ? cct_status_bytes(status) : 0)

/* The high bits of a size field: where its buffer lies in its page (cc_trace_format.h);
 * nothing for an empty message, whose buffer no copy reads. */
/* a message buffer the rank used (cc_trace_footprint.c), and the bytes of all of
 * them; *floor: more buffers than the tracer follows, so at least that many bytes */
void cct_buffer_seen(const void *buf, uint64_t bytes);
void cct_buffer_footprint(uint64_t *bytes, int *floor);

static inline uint64_t cct_page(const void *buf, uint64_t bytes)
{
    if (!bytes || !buf) return 0;
    cct_buffer_seen(buf, bytes);
    uint64_t place = CC_PAGE_KNOWN | ((uintptr_t)buf % CC_PAGE_SPAN);
    return place << CC_SIZE_BITS;
}

/* A size with its buffer's place */
#define CCT_PLACED(buf, bytes) ((bytes) | cct_page((buf), (bytes)))

/* how much of a send buffer of count x type changed since its last send
 * (cc_trace_written.c), the CC_WRITTEN bits of its size field; read after the send,
 * inside its span.  0 for a type whose data do not lie contiguously from buf. */
uint64_t cct_written(const void *buf, int count, MPI_Datatype type);
/* ...of a call that sent to `dest` and returned rc */
#define CCT_WRITTEN(buf, count, type, dest) \
    (rc != MPI_SUCCESS || (dest) == MPI_PROC_NULL ? 0 : cct_written((buf), (count), (type)))

static inline uint64_t cct_status_bytes(const MPI_Status *status)
{
    int count = 0;
    if (PMPI_Get_count(status, MPI_BYTE, &count) != MPI_SUCCESS || count == MPI_UNDEFINED
        || count < 0)
        return 0;
    return (uint64_t)count;
}

/* ---- requests: MPI_Request (a pointer in Open MPI, an int in MPICH) -> id ---- */

enum { CCT_REQ_RECV = 1, CCT_REQ_CANCELLED = 2 };

typedef struct cct_req_info {
    uint64_t id;   /* 0: not a request the tracer follows */
    int32_t comm;
    int32_t recv;  /* CCT_REQ_RECV: completion carries a received message; CCT_REQ_CANCELLED:
                    * MPI_Cancel was called on it */
} cct_req_info;

void cct_req_add(MPI_Request req, int32_t comm, int recv, uint64_t id);
/* Look up and forget (the oldest request with this handle): call before the
 * MPI call that may null the handle; re-add what did not complete. */
cct_req_info cct_req_take(MPI_Request req);
void cct_req_drop(MPI_Request req);
/* Look up without forgetting; marks it cancelled when `cancel` is set. */
cct_req_info cct_req_peek(MPI_Request req, int cancel);

static inline uint64_t cct_new_req(void) { return ++cct.next_req; }

/* Scratch arrays for Wait and Test calls: the handles before the call, and statuses when
 * the program passes MPI_STATUSES_IGNORE.  They grow (rarely) and are never freed. */
MPI_Status *cct_scratch_statuses(int count);
MPI_Request *cct_scratch_handles(int count);

/* One COMPLETE record for a request that completed with this status. */
static inline void cct_complete(cc_trace_record *r, cct_req_info info, int index,
                                const MPI_Status *status, uint64_t t)
{
    *r = (cc_trace_record){.call = CC_COMPLETE, .comm = info.comm, .peer = index,
                           .tag = -1, .t_start = t, .t_end = t, .req = info.id,
                           .aux = -1, .aux2 = -1};
    if (status && (info.recv & CCT_REQ_CANCELLED)) {
        int cancelled = 0;
        if (PMPI_Test_cancelled(status, &cancelled) == MPI_SUCCESS && cancelled) {
            r->flags = CC_REC_CANCELLED;
            return;
        }
    }
    if ((info.recv & CCT_REQ_RECV) && status) {
        r->aux = cct_peer(status->MPI_SOURCE);
        r->aux2 = cct_tag(status->MPI_TAG);
        r->bytes2 = cct_status_bytes(status);
    }
}

/* ---- polling: unsuccessful Test* calls ---- */

/* Polling loops alternate tests of a few request sets (a receive's and a send's): the
 * trailing TEST_RUN records, up to this many, are extended in place.  Inside a run only
 * every CCT_TEST_SAMPLE-th call reads the clock (two reads would cost more than the call),
 * and the run keeps the least time one of them took inside MPI: a poll that finds nothing
 * costs the same each time, and a rank descheduled inside one would only inflate it. */
enum { CCT_TEST_RUN_SETS = 4, CCT_TEST_SAMPLE = 64 };

/* The key of a request set for TEST_RUN records: its handles' values, mixed. */
static inline uint64_t cct_handles_key(int count, const MPI_Request *handles)
{
    uint64_t key = 0x9E3779B97F4A7C15ull ^ (uint64_t)(uint32_t)count;
    for (int i = 0; i < count; i++) {
        uint64_t h = 0;
        memcpy(&h, &handles[i], sizeof handles[i] < sizeof h ? sizeof handles[i] : sizeof h);
        key = (key ^ h) * 0x100000001b3ull;
        key ^= key >> 29;
    }
    return key;
}

/* Before a Test* call (r: its reserved record): the TEST_RUN record of this call on this
 * set among those the buffer ends with, NULL if none. */
static inline cc_trace_record *cct_test_run(cc_trace_record *r, uint16_t call, int count,
                                            uint64_t key)
{
    for (uint32_t back = 1; back <= CCT_TEST_RUN_SETS && back <= cct.n; back++) {
        cc_trace_record *last = r - back;
        if (last->call != CC_TEST_RUN) break;
        if (last->aux == call && last->req == key && last->aux2 == count) return last;
    }
    return NULL;
}

/* Whether this call reads the clock: outside a run always (it may complete something). */
static inline int cct_test_timed(const cc_trace_record *run)
{
    return !run || run->bytes % CCT_TEST_SAMPLE == 0;
}

/* An unsuccessful Test* call: one more in its run, or a run of one. */
static inline void cct_test_failed(cc_trace_record *r, cc_trace_record *run, uint16_t call,
                                   int count, uint64_t key, int timed, uint64_t t0, uint64_t t1)
{
    if (run) {
        run->bytes++;
        if (timed) {
            run->t_end = t1;
            if (t1 - t0 < run->bytes2) run->bytes2 = t1 - t0;
        }
        cct_end(0);
        return;
    }
    *r = (cc_trace_record){.call = CC_TEST_RUN, .comm = CC_COMM_NONE, .peer = CC_PEER_NONE,
                           .tag = -1, .bytes = 1, .bytes2 = t1 - t0, .t_start = t0,
                           .t_end = t1, .req = key, .aux = call, .aux2 = count};
    cct_end(1);
}

/* Communicators the program creates: MEMBERS records follow the call. */
uint32_t cct_members_records(MPI_Comm parent);
void cct_comm_created(cc_trace_record *r, uint16_t call, int32_t parent, MPI_Comm *created,
                      int rc, uint64_t t0, uint64_t t1);
/* As cct_comm_created, the members read from members_of (Comm_idup: the parent, since
 * the new communicator may not be used before its request completes). */
void cct_comm_created_like(cc_trace_record *r, uint16_t call, int32_t parent, MPI_Comm *created,
                           MPI_Comm members_of, int rc, uint64_t t0, uint64_t t1);
void cct_comm_forget(MPI_Comm comm);
/* NEIGHBORS records of a communicator with a topology (none without one). */
void cct_neighbors(MPI_Comm comm);
void cct_neighbors_like(MPI_Comm comm, MPI_Comm like);

/* An MPI call recorded by name only. */
static inline void cct_other(cc_trace_record *r, enum cc_other index, int32_t comm, int rc,
                             uint64_t t0)
{
    uint64_t t1 = cct_now();
    *r = (cc_trace_record){.call = CC_OTHER, .flags = cct_flags(rc, 0), .comm = comm,
                           .peer = CC_PEER_NONE, .tag = -1, .t_start = t0, .t_end = t1,
                           .aux = (int32_t)index};
    cct_end(1);
}

#endif
