/* cc_am: a reliable active-message layer over UDP (after SP-2 Active Messages).
 *
 * Generic Active Message style: a request names a handler that runs at the
 * destination when that rank polls; a request handler may send one reply.
 * Bulk stores and gets move memory to and from a segment each rank registers
 * at start-up.  The transport is UDP datagrams on one socket per rank; the
 * layer adds sequence numbers, sender-side retention, NACK with go-back-N
 * retransmission, piggybacked and quarter-window acknowledgements, separate
 * request and reply windows (the reply window larger, so replies can always
 * be sent), bulk data in acknowledged chunks (two in flight) and a keep-alive
 * that recovers lost tails and detects dead peers.
 *
 * Ranks find each other through a bootstrap: cc_am_open on every rank, the
 * cc_am_addr records exchanged by any means (cc_am_mpi.h does it with one
 * MPI_Allgather), then cc_am_connect.  Nothing here uses MPI.
 *
 * Every call returns CC_AM_OK (0) or a negative cc_am_status; the endpoint's
 * cc_am_error() then says what went wrong in one line.  Not thread-safe: one
 * thread per endpoint. */
#ifndef CC_AM_H
#define CC_AM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint32_t cc_am_word;

enum {
    CC_AM_MAX_ARGS = 4,
    CC_AM_MAX_HANDLERS = 256, /* handler indices are 0 .. CC_AM_MAX_HANDLERS - 1 */
    CC_AM_MAX_CHUNK_PACKETS = 64,
    CC_AM_ERRLEN = 256,
};

typedef enum cc_am_status {
    CC_AM_OK = 0,
    CC_AM_ERANK = -1,     /* no such rank */
    CC_AM_EHANDLER = -2,  /* handler index out of range, or none registered there */
    CC_AM_ESEGMENT = -3,  /* bulk transfer outside the registered segment */
    CC_AM_EDEAD = -4,     /* the peer stopped answering: declared dead */
    CC_AM_EARG = -5,      /* any other bad argument or configuration */
    CC_AM_ESYS = -6,      /* a socket call failed */
    CC_AM_ECONTEXT = -7,  /* call not allowed here (a reply outside a request handler...) */
    CC_AM_ENOMEM = -8,
} cc_am_status;

typedef struct cc_am_ep cc_am_ep;
typedef struct cc_am_token cc_am_token;

/* Injected faults, applied to every datagram this rank sends (all off by default). */
typedef struct cc_am_faults {
    double loss;      /* probability a datagram is dropped */
    double dup;       /* ... sent twice */
    double reorder;   /* ... held back and sent after the next one */
    double delay;     /* ... held back delay_us microseconds */
    double delay_us;
    uint64_t seed;    /* the generator is seeded with seed + rank */
} cc_am_faults;

typedef struct cc_am_config {
    size_t packet_bytes;   /* data bytes per datagram (bulk fragments) */
    int chunk_packets;     /* datagrams per bulk chunk (one sequence number, one ack) */
    int chunks_in_flight;  /* unacknowledged chunks per channel (2: the study's choice) */
    int request_window;    /* unacknowledged requests per peer */
    int reply_window;      /* unacknowledged replies per peer: larger than request_window */
    double keepalive_us;   /* probe a peer whose oldest message waits this long */
    double dead_after_s;   /* declare a peer dead after this long without a word */
    double yield_after_us; /* polls that find nothing this long give the core away once (0: never) */
    int socket_buffer;     /* SO_SNDBUF / SO_RCVBUF request, bytes */
    void *segment;         /* memory remote stores and gets may touch */
    size_t segment_bytes;
    cc_am_faults faults;
} cc_am_config;

/* What a rank publishes about itself for the bootstrap (plain bytes: send it as such). */
typedef struct cc_am_addr {
    char host[64];
    uint8_t ip[4];
    uint16_t port;
    uint16_t pad;
    uint64_t segment_bytes;
    uint32_t packet_bytes, chunk_packets, request_window, reply_window;
} cc_am_addr;

typedef void (*cc_am_handler)(cc_am_token *token, const cc_am_word *args, int nargs, void *ctx);
/* a store's handler at its destination, a get's at its origin */
typedef void (*cc_am_bulk_handler)(cc_am_token *token, void *addr, size_t nbytes, cc_am_word arg,
                                   void *ctx);
/* local completion of an asynchronous store or get: status is CC_AM_OK or an error */
typedef void (*cc_am_done)(cc_am_ep *ep, int status, void *ctx);

typedef struct cc_am_stats {
    uint64_t packets_sent, packets_received, bytes_sent;
    uint64_t retransmitted, nacks_sent, nacks_received, keepalives_sent;
    uint64_t duplicates_dropped, out_of_order_dropped, explicit_acks_sent;
    uint64_t injected_losses, injected_dups, injected_reorders, injected_delays;
    uint64_t gets_served; /* get requests this rank has answered */
} cc_am_stats;

/* Defaults, then CC_AM_* environment variables (docs in am/README.md). */
void cc_am_config_default(cc_am_config *cfg);
int cc_am_config_from_env(cc_am_config *cfg, char *err, size_t errlen);

/* Bind this rank's socket; *addr is what the others need to reach it. */
int cc_am_open(const cc_am_config *cfg, cc_am_ep **ep, cc_am_addr *addr, char *err, size_t errlen);
/* Learn every rank's address (addrs[rank] is this rank's own). */
int cc_am_connect(cc_am_ep *ep, int rank, int size, const cc_am_addr *addrs);
/* Deliver everything still unacknowledged (bounded by dead_after_s), then close. */
int cc_am_close(cc_am_ep *ep);

int cc_am_rank(const cc_am_ep *ep);
int cc_am_size(const cc_am_ep *ep);
void *cc_am_segment(const cc_am_ep *ep, size_t *bytes);
const char *cc_am_error(const cc_am_ep *ep);
const char *cc_am_strerror(int status);
void cc_am_get_stats(const cc_am_ep *ep, cc_am_stats *stats);
/* change the injected faults from now on (benchmarks of throughput under loss) */
void cc_am_set_faults(cc_am_ep *ep, const cc_am_faults *faults);

int cc_am_set_handler(cc_am_ep *ep, int index, cc_am_handler handler, void *ctx);
int cc_am_set_bulk_handler(cc_am_ep *ep, int index, cc_am_bulk_handler handler, void *ctx);

/* Requests poll the network after sending; they wait (polling) while the
 * request window to dest is full.  Not allowed inside handlers. */
int cc_am_request(cc_am_ep *ep, int dest, int handler, int nargs, const cc_am_word *args);
/* Only from a request handler (or a store's handler), at most once; never waits. */
int cc_am_reply(cc_am_token *token, int handler, int nargs, const cc_am_word *args);
int cc_am_token_source(const cc_am_token *token);
cc_am_ep *cc_am_token_ep(const cc_am_token *token);

/* Run the handlers of what has arrived; returns how many ran, or an error. */
int cc_am_poll(cc_am_ep *ep);

/* Copy nbytes from src to dest's segment at remote_offset, then run handler
 * there.  The blocking form returns when dest has everything; the
 * asynchronous one returns at once, src must stay untouched until done runs. */
int cc_am_store(cc_am_ep *ep, int dest, const void *src, size_t remote_offset, size_t nbytes,
                int handler, cc_am_word arg);
int cc_am_store_async(cc_am_ep *ep, int dest, const void *src, size_t remote_offset, size_t nbytes,
                      int handler, cc_am_word arg, cc_am_done done, void *ctx);
/* Fetch nbytes from dest's segment at remote_offset into dst, then run the
 * bulk handler here (handler < 0: none). */
int cc_am_get(cc_am_ep *ep, int dest, size_t remote_offset, void *dst, size_t nbytes, int handler,
              cc_am_word arg);
int cc_am_get_async(cc_am_ep *ep, int dest, size_t remote_offset, void *dst, size_t nbytes,
                    int handler, cc_am_word arg, cc_am_done done, void *ctx);
/* 1 when a datagram waits in this rank's socket (nothing is taken from it) */
int cc_am_pending(const cc_am_ep *ep);
/* 1 when nothing this rank sent waits for an acknowledgement or for room to be sent */
int cc_am_quiet(const cc_am_ep *ep);
/* Poll until every asynchronous store and get of this rank has completed. */
int cc_am_wait_all(cc_am_ep *ep);

#define CC_AM_ARGS(...) ((const cc_am_word[]){__VA_ARGS__})
static inline int cc_am_request_1(cc_am_ep *ep, int dest, int h, cc_am_word a)
{
    return cc_am_request(ep, dest, h, 1, CC_AM_ARGS(a));
}
static inline int cc_am_request_2(cc_am_ep *ep, int dest, int h, cc_am_word a, cc_am_word b)
{
    return cc_am_request(ep, dest, h, 2, CC_AM_ARGS(a, b));
}
static inline int cc_am_request_3(cc_am_ep *ep, int dest, int h, cc_am_word a, cc_am_word b,
                                  cc_am_word c)
{
    return cc_am_request(ep, dest, h, 3, CC_AM_ARGS(a, b, c));
}
static inline int cc_am_request_4(cc_am_ep *ep, int dest, int h, cc_am_word a, cc_am_word b,
                                  cc_am_word c, cc_am_word d)
{
    return cc_am_request(ep, dest, h, 4, CC_AM_ARGS(a, b, c, d));
}
static inline int cc_am_reply_1(cc_am_token *t, int h, cc_am_word a)
{
    return cc_am_reply(t, h, 1, CC_AM_ARGS(a));
}
static inline int cc_am_reply_2(cc_am_token *t, int h, cc_am_word a, cc_am_word b)
{
    return cc_am_reply(t, h, 2, CC_AM_ARGS(a, b));
}
static inline int cc_am_reply_3(cc_am_token *t, int h, cc_am_word a, cc_am_word b, cc_am_word c)
{
    return cc_am_reply(t, h, 3, CC_AM_ARGS(a, b, c));
}
static inline int cc_am_reply_4(cc_am_token *t, int h, cc_am_word a, cc_am_word b, cc_am_word c,
                                cc_am_word d)
{
    return cc_am_reply(t, h, 4, CC_AM_ARGS(a, b, c, d));
}

#ifdef __cplusplus
}
#endif

#endif
