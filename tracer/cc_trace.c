/* The tracer's life cycle: open rank-<r>.cctrace at MPI_Init, stream the
 * buffer to it when full, finalize its header at MPI_Finalize.  A crash
 * (signal, MPI_Abort, exit without MPI_Finalize) still writes what the buffer
 * holds; the header then stays unfinalized, which is how a reader knows. */
#define _GNU_SOURCE
#include "cc_trace.h"
#include "cc_cold.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* 256 KiB: a buffer that stays in cache costs ~50 ns a record to write out here,
 * one of 4 MiB up to ten times that (measured on a loaded 2-core VM). */
enum { CCT_DEFAULT_BUFFER = 4096, CCT_MIN_BUFFER = 64 };

cct_state cct = {.fd = -1};

uint64_t cct_cold_bytes(const void *buf, uint64_t len)
{
    if (len < CC_COLD_MIN_BYTES || buf == NULL) return 0;
    return cc_cold_bytes(buf, len);
}

static void cct_warn(const char *what, const char *detail)
{
    fprintf(stderr, "commchar-trace: %s%s%s; tracing disabled, the program runs on\n", what,
            detail ? ": " : "", detail ? detail : "");
}

/* ---- writing ---- */

static int cct_write_all(int fd, const void *data, size_t len, off_t at)
{
    const char *p = data;
    while (len > 0) {
        ssize_t done = at >= 0 ? pwrite(fd, p, len, at) : write(fd, p, len);
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) return -1;
        p += done;
        len -= (size_t)done;
        if (at >= 0) at += done;
    }
    return 0;
}

/* Async-signal-safe: write(2) only. */
static int cct_flush_buffer(void)
{
    if (cct.fd < 0 || cct.n == 0 || cct.flushing) return 0;
    cct.flushing = 1;
    int rc = cct_write_all(cct.fd, cct.buf, (size_t)cct.n * sizeof *cct.buf, -1);
    if (rc == 0) cct.written += cct.n;
    cct.n = 0;
    cct.flushing = 0;
    return rc;
}

static void cct_stop(void)
{
    cct.on = 0;
    if (cct.fd >= 0) close(cct.fd);
    cct.fd = -1;
}

int cct_make_room(uint32_t k)
{
    uint64_t t0 = cct_now();
    if (cct_flush_buffer() != 0) {
        cct_warn("writing the trace failed", strerror(errno));
        cct_stop();
        return 0;
    }
    if (k + 1 > cct.cap) {
        /* a request array larger than the buffer: grow it once, it is rare */
        cc_trace_record *grown = cct_realloc(cct.buf, (size_t)(k + 1) * sizeof *grown);
        if (!grown) {
            cct_warn("out of memory for the trace buffer", NULL);
            cct_stop();
            return 0;
        }
        cct.buf = grown;
        cct.cap = k + 1;
    }
    /* the MARK record spans the flush, so its time is not taken for computation */
    cct.buf[cct.n++] = (cc_trace_record){.call = CC_MARK, .comm = CC_COMM_NONE,
                                         .peer = CC_PEER_NONE, .tag = -1, .t_start = t0,
                                         .t_end = cct_now()};
    return 1;
}

/* ---- crashes: keep what the buffer holds ---- */

static const int cct_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT};
static struct sigaction cct_previous[sizeof cct_signals / sizeof cct_signals[0]];

static void cct_on_signal(int sig)
{
    cct_flush_buffer();
    for (size_t i = 0; i < sizeof cct_signals / sizeof cct_signals[0]; i++)
        if (cct_signals[i] == sig) sigaction(sig, &cct_previous[i], NULL);
    raise(sig);
}

static void cct_on_exit(void)
{
    if (cct.on) cct_flush_buffer(); /* exit() without MPI_Finalize */
}

static void cct_catch_crashes(void)
{
    struct sigaction action = {.sa_handler = cct_on_signal};
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < sizeof cct_signals / sizeof cct_signals[0]; i++)
        sigaction(cct_signals[i], &action, &cct_previous[i]);
    atexit(cct_on_exit);
}

/* ---- start and finish ---- */

static void cct_prepare_requests(void);

static uint32_t cct_buffer_records(void)
{
    const char *text = getenv("COMMCHAR_TRACE_BUFFER");
    if (!text || !*text) return CCT_DEFAULT_BUFFER;
    char *end = NULL;
    unsigned long value = strtoul(text, &end, 10);
    if (*end || value < CCT_MIN_BUFFER || value > (1ul << 26)) return CCT_DEFAULT_BUFFER;
    return (uint32_t)value;
}

/* Returns an error text, NULL when the trace file is open. */
static const char *cct_open(const char *dir, int rank, char *path, size_t path_len)
{
    snprintf(path, path_len, "%s/rank-%d.cctrace", dir, rank);
    cct.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (cct.fd < 0) return strerror(errno);
    cct.cap = cct_buffer_records();
    cct.buf = cct_alloc((size_t)cct.cap * sizeof *cct.buf);
    if (!cct.buf) return "out of memory for the trace buffer";
    if (cct_write_all(cct.fd, &cct.header, sizeof cct.header, -1) != 0) return strerror(errno);
    return NULL;
}

/* How MPI_Init left this rank: agreed on by every rank at MPI_Finalize (cct_all_traced). */
enum cct_start { CCT_OK, CCT_NO_DIR, CCT_FAILED };
static struct {
    enum cct_start state;
    const char *failure; /* CCT_FAILED: why */
    char path[PATH_MAX]; /* the trace file, or the directory when there is none */
} cct_start;

/* No MPI call of the tracer's own and no allocation from the program's heap here: either
 * would move where the program's buffers land (an MPI library allocates on a
 * communicator's first collective), and the trace would describe another program. */
static void cct_started(uint64_t t0, int rc, int thread_level)
{
    if (rc != MPI_SUCCESS) return;
    const char *dir = getenv("COMMCHAR_TRACE_DIR");
    int rank = 0, size = 1, len = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);

    cc_trace_header *h = &cct.header;
    memcpy(h->magic, CC_TRACE_MAGIC, sizeof h->magic);
    h->version = CC_TRACE_VERSION;
    h->record_bytes = CC_TRACE_RECORD_BYTES;
    h->rank = rank;
    h->size = size;
    gethostname(h->host, sizeof h->host - 1);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    PMPI_Get_library_version(version, &len);
    /* the first 63 bytes: the format's field, truncation intended */
    memcpy(h->library, version, sizeof h->library - 1 < (size_t)len ? sizeof h->library - 1
                                                                      : (size_t)len);
    for (char *c = h->library; *c; c++)
        if (*c == '\n') *c = ' ';

    if (!dir || !*dir) {
        cct_start.state = CCT_NO_DIR; /* preloaded without a destination: pass everything through */
        return;
    }
    snprintf(cct_start.path, sizeof cct_start.path, "%s", dir);
    if (thread_level == MPI_THREAD_MULTIPLE) {
        cct_start.failure = "MPI_THREAD_MULTIPLE is not supported";
    } else {
        cct_start.failure = cct_open(dir, rank, cct_start.path, sizeof cct_start.path);
    }
    if (cct_start.failure) {
        cct_start.state = CCT_FAILED;
        if (cct.fd >= 0) unlink(cct_start.path);
        cct_stop();
        cct_free(cct.buf);
        cct.buf = NULL;
        return;
    }
    cct_prepare_requests();
    cct.on = 1;
    /* the tracer's own start belongs to MPI_Init: the program's first gap starts after it */
    uint64_t t1 = cct_now();
    h->t_init_ns = t1;
    if (cct_write_all(cct.fd, h, sizeof *h, 0) != 0) {
        cct_start.state = CCT_FAILED;
        cct_start.failure = strerror(errno);
        unlink(cct_start.path);
        cct_stop();
        return;
    }
    cct.buf[cct.n++] = (cc_trace_record){.call = CC_INIT, .comm = CC_COMM_WORLD,
                                         .peer = CC_PEER_NONE, .tag = -1, .t_start = t0,
                                         .t_end = t1, .aux = thread_level};
    cct_catch_crashes();
}

/* At MPI_Finalize, on every rank: every rank's trace is kept or none is.  When a rank could
 * not trace, the lowest such rank says why in one line and the others remove their files. */
static void cct_all_traced(void)
{
    struct { int state, rank; } mine = {cct_start.state, cct.header.rank}, worst = {0, 0};
    if (PMPI_Allreduce(&mine, &worst, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD) != MPI_SUCCESS)
        return;
    if (worst.state == CCT_OK) return;
    if (worst.state == CCT_FAILED && worst.rank == mine.rank)
        fprintf(stderr, "commchar-trace: cannot trace to %s: %s; no rank keeps its trace\n",
                cct_start.path, cct_start.failure);
    if (cct.fd >= 0) {
        cct_stop();
        unlink(cct_start.path);
    }
}

/* At MPI_Finalize, after the program's last call: the tracer's own time per call
 * (cc_trace_self.c), measured now so that its MPI calls come after all of the program's.
 * A MARK record spans it (and the agreement before it): not the program's time. */
static void cct_measure_self(uint64_t t0)
{
    if (cct_flush_buffer() != 0) {
        cct_warn("writing the trace failed", strerror(errno));
        cct_stop();
        return;
    }
    cc_trace_header *h = &cct.header;
    cct_self_cost_ps(&h->record_gap_ps, &h->complete_gap_ps, &h->collective_gap_ps);
    cct.buf[cct.n++] = (cc_trace_record){.call = CC_MARK, .comm = CC_COMM_NONE,
                                         .peer = CC_PEER_NONE, .tag = -1, .t_start = t0,
                                         .t_end = cct_now()};
}

int MPI_Init(int *argc, char ***argv)
{
    uint64_t t0 = cct_now();
    int rc = PMPI_Init(argc, argv);
    cct_started(t0, rc, MPI_THREAD_SINGLE);
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    uint64_t t0 = cct_now();
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    cct_started(t0, rc, *provided);
    return rc;
}

int MPI_Finalize(void)
{
    uint64_t t_own = cct_now();
    cct_all_traced();
    /* the program's buffers, before the tracer's own calls below add theirs */
    int buffers_floor = 0;
    cct_buffer_footprint(&cct.header.buffer_bytes, &buffers_floor);
    if (cct.on) cct_measure_self(t_own);
    CCT_ENTER(1, PMPI_Finalize());
    uint64_t t0 = cct_now();
    int rc = PMPI_Finalize();
    *r = (cc_trace_record){.call = CC_FINALIZE, .flags = cct_flags(rc, 0),
                                       .comm = CC_COMM_WORLD, .peer = CC_PEER_NONE, .tag = -1,
                                       .t_start = t0, .t_end = cct_now()};
    cct_end(1);
    cct.on = 0;
    if (cct_flush_buffer() == 0) {
        cct.header.t_finalize_ns = t_own; /* where the program reached MPI_Finalize */
        cct.header.records = cct.written;
        cct.header.flags = CC_TRACE_FINALIZED | (buffers_floor ? CC_TRACE_BUFFERS_FLOOR : 0u);
        if (cct_write_all(cct.fd, &cct.header, sizeof cct.header, 0) != 0)
            cct_warn("finalizing the trace header failed", strerror(errno));
    } else {
        cct_warn("writing the trace failed", strerror(errno));
    }
    cct_stop();
    return rc;
}

int MPI_Abort(MPI_Comm comm, int errorcode)
{
    if (cct.on) cct_flush_buffer();
    return PMPI_Abort(comm, errorcode);
}

/* ---- communicators the program created: a short list, searched linearly ---- */

enum { CCT_MAX_COMMS = 4096 };
typedef struct {
    MPI_Comm handle;
    int32_t id;
} cct_comm_entry;
static cct_comm_entry cct_comms[CCT_MAX_COMMS];
static int cct_ncomms;
static int32_t cct_next_comm = 2;

int32_t cct_comm_lookup(MPI_Comm comm)
{
    for (int i = cct_ncomms - 1; i >= 0; i--)
        if (cct_comms[i].handle == comm) return cct_comms[i].id;
    return CC_COMM_NONE;
}

static int32_t cct_comm_add(MPI_Comm comm)
{
    int32_t id = cct_next_comm++;
    if (cct_ncomms < CCT_MAX_COMMS) cct_comms[cct_ncomms++] = (cct_comm_entry){comm, id};
    return id;
}

void cct_comm_forget(MPI_Comm comm)
{
    for (int i = 0; i < cct_ncomms; i++)
        if (cct_comms[i].handle == comm) {
            cct_comms[i] = cct_comms[--cct_ncomms];
            return;
        }
}

uint32_t cct_members_records(MPI_Comm parent)
{
    int size = 1, inter = 0, remote = 0;
    PMPI_Comm_size(parent, &size);
    PMPI_Comm_test_inter(parent, &inter);
    if (inter) PMPI_Comm_remote_size(parent, &remote);
    size += remote; /* a communicator made from an intercommunicator lists both groups */
    return 1 + (uint32_t)(size + CC_MEMBERS_PER_RECORD - 1) / CC_MEMBERS_PER_RECORD;
}

void cct_comm_created(cc_trace_record *r, uint16_t call, int32_t parent, MPI_Comm *created,
                      int rc, uint64_t t0, uint64_t t1)
{
    cct_comm_created_like(r, call, parent, created, *created, rc, t0, t1);
}

/* World ranks of a group's members into out[0..n). */
static void cct_world_ranks(MPI_Group group, int n, int *scratch, int *out)
{
    MPI_Group world;
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    for (int i = 0; i < n; i++) scratch[i] = i;
    PMPI_Group_translate_ranks(group, n, scratch, world, out);
    PMPI_Group_free(&world);
}

void cct_comm_created_like(cc_trace_record *r, uint16_t call, int32_t parent, MPI_Comm *created,
                           MPI_Comm members_of, int rc, uint64_t t0, uint64_t t1)
{
    int local = 0, remote = 0, inter = 0;
    int32_t id = CC_COMM_NONE;
    if (rc == MPI_SUCCESS && *created != MPI_COMM_NULL) {
        id = cct_comm_add(*created);
        PMPI_Comm_size(members_of, &local);
        PMPI_Comm_test_inter(members_of, &inter);
        if (inter) PMPI_Comm_remote_size(members_of, &remote);
    }
    int size = local + remote;
    r[0] = (cc_trace_record){.call = call, .flags = cct_flags(rc, 0) | (inter ? CC_REC_INTER : 0),
                             .comm = parent, .peer = CC_PEER_NONE, .tag = inter ? local : -1,
                             .t_start = t0, .t_end = t1, .aux = id, .aux2 = size};
    uint32_t written = 1;
    if (size > 0) {
        int stack_ranks[2 * 64], *ranks = stack_ranks;
        if (size > 64) ranks = cct_alloc(2 * (size_t)size * sizeof *ranks);
        MPI_Group group;
        int ok = ranks && PMPI_Comm_group(members_of, &group) == MPI_SUCCESS;
        if (ok) {
            cct_world_ranks(group, local, ranks, ranks + size);
            PMPI_Group_free(&group);
        }
        if (ok && inter) {
            ok = PMPI_Comm_remote_group(members_of, &group) == MPI_SUCCESS;
            if (ok) {
                cct_world_ranks(group, remote, ranks, ranks + size + local);
                PMPI_Group_free(&group);
            }
        }
        if (ok) {
            for (int first = 0; first < size; first += CC_MEMBERS_PER_RECORD) {
                int count = size - first < CC_MEMBERS_PER_RECORD ? size - first
                                                                 : CC_MEMBERS_PER_RECORD;
                cc_trace_record *m = r + written++;
                *m = (cc_trace_record){.call = CC_MEMBERS, .comm = id, .peer = CC_PEER_NONE,
                                       .tag = -1, .t_start = t1, .t_end = t1, .aux = first,
                                       .aux2 = count};
                memcpy((char *)m + 16, ranks + size + first, (size_t)count * sizeof(int32_t));
            }
        }
        if (ranks != stack_ranks) cct_free(ranks);
    }
    cct_end(written);
}

/* ---- requests: open addressing with linear probing, backward-shift deletion ---- */

typedef struct {
    uint64_t key;
    cct_req_info info; /* info.id == 0: empty slot */
} cct_req_slot;

static cct_req_slot *cct_reqs;
static uint64_t cct_req_mask, cct_req_count;

static inline uint64_t cct_req_key(MPI_Request req)
{
    uint64_t key = 0;
    memcpy(&key, &req, sizeof req < sizeof key ? sizeof req : sizeof key);
    return key;
}

static inline uint64_t cct_req_home(uint64_t key)
{
    return (key * 0x9E3779B97F4A7C15ull >> 20) & cct_req_mask;
}

static void cct_req_grow(void)
{
    uint64_t old_size = cct_reqs ? cct_req_mask + 1 : 0;
    uint64_t size = old_size ? 2 * old_size : 1024;
    cct_req_slot *old = cct_reqs;
    cct_req_slot *fresh = cct_alloc(size * sizeof *fresh);
    if (!fresh) return; /* keep the full table: adds beyond it are dropped below */
    cct_reqs = fresh;
    cct_req_mask = size - 1;
    cct_req_count = 0;
    for (uint64_t i = 0; i < old_size; i++)
        if (old[i].info.id) {
            uint64_t at = cct_req_home(old[i].key);
            while (cct_reqs[at].info.id) at = (at + 1) & cct_req_mask;
            cct_reqs[at] = old[i];
            cct_req_count++;
        }
    cct_free(old);
}

static inline uint64_t cct_req_find(uint64_t key)
{
    uint64_t at = cct_req_home(key);
    while (cct_reqs[at].info.id && cct_reqs[at].key != key) at = (at + 1) & cct_req_mask;
    return at;
}

/* One handle value may stand for several live requests: MPICH returns one
 * shared handle for every send that completed at once.  Entries with the same
 * handle stay in creation order along the probe chain (backward-shift
 * deletion preserves it), so the oldest is taken first. */
void cct_req_add(MPI_Request req, int32_t comm, int recv, uint64_t id)
{
    if (req == MPI_REQUEST_NULL) return;
    if (!cct_reqs || 2 * (cct_req_count + 1) > cct_req_mask + 1) cct_req_grow();
    if (!cct_reqs || cct_req_count + 1 > cct_req_mask) return;
    uint64_t key = cct_req_key(req), at = cct_req_home(key);
    while (cct_reqs[at].info.id) at = (at + 1) & cct_req_mask;
    cct_reqs[at] = (cct_req_slot){key, {id, comm, recv}};
    cct_req_count++;
}

static void cct_req_remove_at(uint64_t at)
{
    cct_reqs[at].info.id = 0;
    cct_req_count--;
    for (uint64_t next = (at + 1) & cct_req_mask; cct_reqs[next].info.id;
         next = (next + 1) & cct_req_mask) {
        uint64_t home = cct_req_home(cct_reqs[next].key);
        /* move it back if its home is not in the cyclic range (at, next] */
        if (((next - home) & cct_req_mask) >= ((next - at) & cct_req_mask)) {
            cct_reqs[at] = cct_reqs[next];
            cct_reqs[next].info.id = 0;
            at = next;
        }
    }
}

cct_req_info cct_req_take(MPI_Request req)
{
    if (!cct_reqs || req == MPI_REQUEST_NULL) return (cct_req_info){0, CC_COMM_NONE, 0};
    uint64_t at = cct_req_find(cct_req_key(req));
    cct_req_info info = cct_reqs[at].info;
    if (info.id) cct_req_remove_at(at);
    return info;
}

void cct_req_drop(MPI_Request req) { (void)cct_req_take(req); }

cct_req_info cct_req_peek(MPI_Request req, int cancel)
{
    if (!cct_reqs || req == MPI_REQUEST_NULL) return (cct_req_info){0, CC_COMM_NONE, 0};
    uint64_t at = cct_req_find(cct_req_key(req));
    if (cancel && cct_reqs[at].info.id) cct_reqs[at].info.recv |= CCT_REQ_CANCELLED;
    return cct_reqs[at].info;
}

/* ---- scratch arrays for Wait* and Test*: grown rarely, never freed ---- */

/* Allocated at MPI_Init, so that a program's first requests allocate nothing. */
static void cct_prepare_requests(void)
{
    cct_req_grow();
    cct_scratch_statuses(256);
    cct_scratch_handles(256);
}

static void *cct_scratch(void *array, int *cap, int count, size_t item)
{
    void *grown = cct_grow(array, cap, count, item);
    if (!grown) {
        /* nothing sensible is left to do for the program either */
        fprintf(stderr, "commchar-trace: out of memory\n");
        abort();
    }
    return grown;
}

static MPI_Status *cct_statuses;
static MPI_Request *cct_handles;
static int cct_statuses_cap, cct_handles_cap;

MPI_Status *cct_scratch_statuses(int count)
{
    return cct_statuses = cct_scratch(cct_statuses, &cct_statuses_cap, count,
                                      sizeof *cct_statuses);
}

MPI_Request *cct_scratch_handles(int count)
{
    return cct_handles = cct_scratch(cct_handles, &cct_handles_cap, count, sizeof *cct_handles);
}
