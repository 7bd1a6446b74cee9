/* The trace format shared by the tracer (C), commchar.trace (Python, numpy)
 * and the simulator's replay (Rust): docs/trace-format.md is its prose. */
#ifndef CC_TRACE_FORMAT_H
#define CC_TRACE_FORMAT_H

#include <stdint.h>

#define CC_TRACE_MAGIC "CCTRACE1"
#define CC_TRACE_VERSION 2u
#define CC_TRACE_HEADER_BYTES 256
#define CC_TRACE_RECORD_BYTES 64

enum cc_trace_flag { CC_TRACE_FINALIZED = 1u, CC_TRACE_BUFFERS_FLOOR = 2u };
/* CC_REC_COLD: the receive buffer (at least CC_COLD_MIN_BYTES) had bytes in pages not
 * resident at the call's entry (mincore): their count is the u64 at offset 48 (req) of a
 * blocking call, at offset 56 (aux, aux2) of an Irecv, whose req is its request */
/* CC_REC_CANCELLED: on a COMPLETE record, the request was cancelled (MPI_Cancel, then
 * MPI_Test_cancelled said so): it moved nothing. */
/* CC_REC_INTER: on a call that created a communicator, the new one is an
 * intercommunicator: its MEMBERS records list the local group, then the remote group,
 * and the record's tag holds the local group's size. */
enum cc_record_flag { CC_REC_NONBLOCKING = 1u, CC_REC_ERROR = 2u, CC_REC_COLD = 4u,
                      CC_REC_CANCELLED = 8u, CC_REC_INTER = 16u };
enum { CC_COLD_MIN_BYTES = 65536 };

/* A point-to-point record's bytes (what was sent) and bytes2 (what was received, or may
 * be) hold the size in their low CC_SIZE_BITS bits, and in the bits above it where the
 * buffer of that size lay: CC_PAGE_KNOWN | the address modulo CC_PAGE_SPAN (the place in
 * its 4 KiB page), 0 where not recorded (version 1, a call without that buffer).  A copy's
 * speed may depend on where its destination lies relative to its source in the page. */
#define CC_SIZE_BITS 48
#define CC_SIZE_MASK ((UINT64_C(1) << CC_SIZE_BITS) - 1)
enum { CC_PAGE_KNOWN = 0x8000, CC_PAGE_SPAN = 4096 };
/* A point-to-point send's `bytes` (Send, Bsend, Ssend, Rsend, their Isend forms and
 * Sendrecv's send) holds with its place, in the 3 bits above the place's 12, how much
 * of its buffer the program wrote since its last send of that size from that address
 * (cc_trace_written.c): 0 nothing seen (or its first send), CC_WRITTEN_ENDS its first or
 * last 8 bytes alone, 2 + the fifths of the words between them that changed up to
 * CC_WRITTEN_WHOLE (a buffer of at most two cache lines: WHOLE when it changed). */
enum { CC_WRITTEN_SHIFT = 12, CC_WRITTEN_MASK = 7, CC_WRITTEN_ENDS = 1, CC_WRITTEN_WHOLE = 7 };

enum cc_comm_id { CC_COMM_NONE = -1, CC_COMM_WORLD = 0, CC_COMM_SELF = 1 };
enum cc_peer { CC_PEER_NONE = -1, CC_PEER_ANY = -2, CC_PEER_NULL = -3 };
enum { CC_TAG_ANY = -1 };

enum cc_call {
    CC_SEND = 1, CC_BSEND = 2, CC_SSEND = 3, CC_RSEND = 4, CC_RECV = 5,
    CC_ISEND = 6, CC_IBSEND = 7, CC_ISSEND = 8, CC_IRSEND = 9, CC_IRECV = 10,
    CC_SENDRECV = 11, CC_SENDRECV_REPLACE = 12,
    CC_WAIT = 13, CC_WAITALL = 14, CC_WAITANY = 15, CC_WAITSOME = 16,
    CC_TEST = 17, CC_TESTALL = 18, CC_TESTANY = 19, CC_TESTSOME = 20,
    CC_PROBE = 21, CC_IPROBE = 22,
    CC_BARRIER = 23, CC_BCAST = 24, CC_SCATTER = 25, CC_SCATTERV = 26,
    CC_GATHER = 27, CC_GATHERV = 28, CC_ALLGATHER = 29, CC_ALLGATHERV = 30,
    CC_ALLTOALL = 31, CC_ALLTOALLV = 32, CC_REDUCE = 33, CC_ALLREDUCE = 34,
    CC_REDUCE_SCATTER = 35, CC_REDUCE_SCATTER_BLOCK = 36, CC_SCAN = 37, CC_EXSCAN = 38,
    CC_COMM_SPLIT = 39, CC_COMM_DUP = 40, CC_COMM_CREATE = 41, CC_COMM_FREE = 42,
    CC_PCONTROL = 43, CC_INIT = 44, CC_FINALIZE = 45,
    /* TEST_RUN: unsuccessful calls of one Test* call on one request set, with no other
     * record between them but TEST_RUNs of other sets, as one record (aux: the call,
     * bytes: how many, bytes2: the least ns one took inside MPI, req: the set's key,
     * aux2: its size;
     * t_start..t_end from the first call's start to the last one's end) */
    CC_TEST_RUN = 46, CC_CANCEL = 47,
    CC_MPROBE = 48, CC_IMPROBE = 49, CC_MRECV = 50, CC_IMRECV = 51,
    /* intercommunicators: MEMBERS records follow as for Comm_split (CC_REC_INTER) */
    CC_INTERCOMM_CREATE = 52, CC_INTERCOMM_MERGE = 53,
    CC_COMPLETE = 60, CC_MEMBERS = 61, CC_OTHER = 62, CC_MARK = 63,
    /* communicators and topologies: MEMBERS records follow as for Comm_split */
    CC_CART_CREATE = 70, CC_CART_SUB = 71, CC_GRAPH_CREATE = 72, CC_DIST_GRAPH_CREATE = 73,
    CC_DIST_GRAPH_CREATE_ADJACENT = 74, CC_COMM_CREATE_GROUP = 75, CC_COMM_SPLIT_TYPE = 76,
    CC_COMM_IDUP = 77, CC_NEIGHBORS = 79,
    /* collectives with per-rank types, non-blocking collectives (as their blocking call) */
    CC_ALLTOALLW = 80, CC_IBARRIER = 81, CC_IBCAST = 82, CC_ISCATTER = 83, CC_ISCATTERV = 84,
    CC_IGATHER = 85, CC_IGATHERV = 86, CC_IALLGATHER = 87, CC_IALLGATHERV = 88,
    CC_IALLTOALL = 89, CC_IALLTOALLV = 90, CC_IALLTOALLW = 91, CC_IREDUCE = 92,
    CC_IALLREDUCE = 93, CC_IREDUCE_SCATTER = 94, CC_IREDUCE_SCATTER_BLOCK = 95, CC_ISCAN = 96,
    CC_IEXSCAN = 97,
    /* neighborhood collectives, blocking and not */
    CC_NEIGHBOR_ALLGATHER = 100, CC_NEIGHBOR_ALLGATHERV = 101, CC_NEIGHBOR_ALLTOALL = 102,
    CC_NEIGHBOR_ALLTOALLV = 103, CC_NEIGHBOR_ALLTOALLW = 104, CC_INEIGHBOR_ALLGATHER = 105,
    CC_INEIGHBOR_ALLGATHERV = 106, CC_INEIGHBOR_ALLTOALL = 107, CC_INEIGHBOR_ALLTOALLV = 108,
    CC_INEIGHBOR_ALLTOALLW = 109,
    /* persistent requests: a START record per request started */
    CC_SEND_INIT = 110, CC_BSEND_INIT = 111, CC_SSEND_INIT = 112, CC_RSEND_INIT = 113,
    CC_RECV_INIT = 114, CC_START = 115, CC_STARTALL = 116, CC_REQUEST_FREE = 117,
    /* MPI-IO: recorded, replayed as computation */
    CC_FILE_OPEN = 120, CC_FILE_CLOSE = 121, CC_FILE_READ = 122, CC_FILE_READ_AT = 123,
    CC_FILE_READ_ALL = 124, CC_FILE_READ_AT_ALL = 125, CC_FILE_WRITE = 126,
    CC_FILE_WRITE_AT = 127, CC_FILE_WRITE_ALL = 128, CC_FILE_WRITE_AT_ALL = 129,
    CC_FILE_IREAD = 130, CC_FILE_IWRITE = 131, CC_FILE_SET_VIEW = 132, CC_FILE_SYNC = 133,
    /* one-sided: windows, their operations and synchronizations; RMA_IN records (what
     * each origin moved to and from this rank in the epoch) precede a fence's record */
    CC_WIN_CREATE = 140, CC_WIN_ALLOCATE = 141, CC_WIN_ALLOCATE_SHARED = 142,
    CC_WIN_CREATE_DYNAMIC = 143, CC_WIN_FREE = 144, CC_PUT = 145, CC_GET = 146,
    CC_ACCUMULATE = 147, CC_GET_ACCUMULATE = 148, CC_FETCH_AND_OP = 149,
    CC_COMPARE_AND_SWAP = 150, CC_RPUT = 151, CC_RGET = 152, CC_RACCUMULATE = 153,
    CC_WIN_FENCE = 154, CC_WIN_LOCK = 155, CC_WIN_UNLOCK = 156, CC_WIN_LOCK_ALL = 157,
    CC_WIN_UNLOCK_ALL = 158, CC_WIN_FLUSH = 159, CC_WIN_FLUSH_ALL = 160,
    CC_WIN_FLUSH_LOCAL = 161, CC_WIN_POST = 162, CC_WIN_START = 163, CC_WIN_COMPLETE = 164,
    CC_WIN_WAIT = 165, CC_RMA_IN = 166
};

/* Records that describe a call rather than being one (no MPI function of that name). */
#define CC_TRACE_PSEUDO_CALLS(X) X(COMPLETE) X(MEMBERS) X(MARK) X(NEIGHBORS) X(RMA_IN)

/* Records whose size fields carry their buffers' places (CC_SIZE_BITS): the readers
 * split them for these calls only.  The collectives among them place their send buffer
 * (none when it is MPI_IN_PLACE) above `bytes` and their receive buffer above `bytes2`:
 * the rank's own block is copied from one to the other. */
#define CC_TRACE_PLACED_CALLS(X)                                                       \
    X(SEND) X(BSEND) X(SSEND) X(RSEND) X(RECV) X(ISEND) X(IBSEND) X(ISSEND) X(IRSEND)  \
    X(IRECV) X(SENDRECV) X(SENDRECV_REPLACE) X(MRECV) X(IMRECV) X(SEND_INIT)          \
    X(BSEND_INIT) X(SSEND_INIT) X(RSEND_INIT) X(RECV_INIT) X(START) X(ALLTOALL)         \
    X(ALLREDUCE) X(SCAN) X(EXSCAN)

/* Placed calls whose `bytes` also carries the CC_WRITTEN bits: the sends. */
#define CC_TRACE_WRITTEN_CALLS(X)                                                      \
    X(SEND) X(BSEND) X(SSEND) X(RSEND) X(ISEND) X(IBSEND) X(ISSEND) X(IRSEND) X(SENDRECV)

enum cc_reduce_op { CC_OP_UNKNOWN = 0, CC_OP_SUM = 1, CC_OP_MAX = 2, CC_OP_MIN = 3,
                    CC_OP_PROD = 4, CC_OP_OTHER = 5 };

/* MPI calls the tracer wraps only to record that they happened (an OTHER
 * record whose aux is the index in this list).  Append only: an index, once
 * written in a trace, keeps its name. */
#define CC_TRACE_OTHER_NAMES(X)                                                   \
    X(Put) X(Get) X(Accumulate) X(Get_accumulate) X(Fetch_and_op)               \
    X(Compare_and_swap) X(Rput) X(Rget) X(Raccumulate)                          \
    X(Win_create) X(Win_allocate) X(Win_allocate_shared) X(Win_create_dynamic)  \
    X(Win_free) X(Win_fence) X(Win_lock) X(Win_unlock) X(Win_lock_all)          \
    X(Win_unlock_all) X(Win_flush) X(Win_flush_all) X(Win_flush_local)          \
    X(Win_post) X(Win_start) X(Win_complete) X(Win_wait)                        \
    X(Ibarrier) X(Ibcast) X(Iscatter) X(Iscatterv) X(Igather) X(Igatherv)       \
    X(Iallgather) X(Iallgatherv) X(Ialltoall) X(Ialltoallv) X(Ialltoallw)       \
    X(Ireduce) X(Iallreduce) X(Ireduce_scatter) X(Ireduce_scatter_block)        \
    X(Iscan) X(Iexscan) X(Alltoallw)                                            \
    X(Send_init) X(Bsend_init) X(Ssend_init) X(Rsend_init) X(Recv_init)         \
    X(Start) X(Startall) X(Request_free) X(Cancel)                              \
    X(Mprobe) X(Improbe) X(Mrecv) X(Imrecv)                                     \
    X(Comm_split_type) X(Comm_create_group) X(Comm_idup)                        \
    X(Intercomm_create) X(Intercomm_merge) X(Comm_spawn)                        \
    X(Cart_create) X(Graph_create) X(Dist_graph_create_adjacent)                \
    X(Neighbor_allgather) X(Neighbor_alltoall)                                  \
    X(File_open) X(File_close) X(File_read) X(File_read_at) X(File_read_all)    \
    X(File_read_at_all) X(File_write) X(File_write_at) X(File_write_all)        \
    X(File_write_at_all) X(File_iread) X(File_iwrite) X(File_set_view)          \
    X(File_sync)

#define CC_TRACE_OTHER_ENUM(name) CC_OTHER_##name,
enum cc_other { CC_TRACE_OTHER_NAMES(CC_TRACE_OTHER_ENUM) CC_OTHER_COUNT };
#undef CC_TRACE_OTHER_ENUM

/* Members per MEMBERS record: ten i32 in the 40 bytes at offsets 16..55; NEIGHBORS
 * records hold as many, tag 0 for the sources, 1 for the destinations. */
enum { CC_MEMBERS_PER_RECORD = 10 };

typedef struct {
    char magic[8];
    uint32_t version;
    uint32_t record_bytes;
    int32_t rank;
    int32_t size;
    uint64_t t_init_ns;
    uint64_t t_finalize_ns;
    uint64_t records;
    uint32_t flags;
    uint32_t record_gap_ps; /* the tracer's own time per call outside the spans; 0: unknown */
    char host[64];
    char library[64];
    uint32_t complete_gap_ps; /* ...and per COMPLETE record a wait or test writes; 0: unknown */
    uint32_t collective_gap_ps; /* ...and per blocking collective's wrapper; 0: unknown */
    /* the bytes of the distinct message buffers the rank's placed calls used
     * (cc_trace_footprint.c); 0: unknown.  CC_TRACE_BUFFERS_FLOOR: at least that */
    uint64_t buffer_bytes;
    char reserved1[56];
} cc_trace_header;

typedef struct {
    uint16_t call;
    uint16_t flags;
    int32_t comm;
    int32_t peer;
    int32_t tag;
    uint64_t bytes;
    uint64_t bytes2;
    uint64_t t_start;
    uint64_t t_end;
    uint64_t req;
    int32_t aux;
    int32_t aux2;
} cc_trace_record;

_Static_assert(sizeof(cc_trace_header) == CC_TRACE_HEADER_BYTES, "header layout");
_Static_assert(sizeof(cc_trace_record) == CC_TRACE_RECORD_BYTES, "record layout");

#endif
