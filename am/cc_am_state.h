/* The endpoint's state and the wire format, shared by the layers of the cc_am
 * library (not installed); types only. */
#ifndef CC_AM_STATE_H
#define CC_AM_STATE_H

#include <netinet/in.h>
#include <stdint.h>
#include <sys/uio.h>

#include "cc_am.h"

enum { CC_AM_REQ = 0, CC_AM_REP = 1 }; /* the two channels of a pair of ranks */

enum cc_am_type {
    CC_AM_T_SHORT = 1, /* a request or reply with up to four words */
    CC_AM_T_GET,       /* a get request (request channel) */
    CC_AM_T_CHUNK,     /* a fragment of a bulk chunk: store data or get data */
    CC_AM_T_GETERR,    /* a get that the owner of the segment refused (reply channel) */
    CC_AM_T_ACK,       /* acknowledgements only */
    CC_AM_T_NACK,      /* seq: the sequence number expected next on channel flags & 1 */
    CC_AM_T_KEEPALIVE, /* args: next sequence numbers and rounds of the sender's channels */
};

enum { CC_AM_MAGIC = 0xA3 };
/* header flags: bit 0 is the channel */
enum { CC_AM_F_ACK_NOW = 2 }; /* acknowledge this chunk at once (someone waits for it) */

/* The header of every datagram.  Native byte order: ranks of one job share
 * an architecture. */
typedef struct cc_am_hdr {
    uint8_t magic, type, flags, handler; /* flags: bit 0 the channel */
    uint8_t nargs, round;                /* round: the go-back-N round of the channel */
    uint16_t src;
    uint32_t seq;
    uint32_t ack[2]; /* next sequence number this sender expects from the receiver, per channel */
    cc_am_word args[CC_AM_MAX_ARGS];
} cc_am_hdr;

/* follows the header of CHUNK and GET datagrams */
typedef struct cc_am_bulk_hdr {
    uint64_t base;  /* store: segment offset of the transfer; get request: remote offset */
    uint64_t total; /* bytes of the whole transfer */
    uint64_t xoff;  /* this chunk's offset within the transfer */
    uint32_t frag_off, frag_len, chunk_len;
    uint32_t xfer_id; /* get: the origin's transfer number */
    uint16_t frag, nfrags;
    uint32_t pad;
} cc_am_bulk_hdr;

typedef struct cc_am_pkt {
    cc_am_hdr h;
    cc_am_bulk_hdr b;
} cc_am_pkt;

/* A bulk transfer leaving this rank: a store, or the data answering a get. */
typedef struct cc_am_xfer {
    struct cc_am_xfer *next_active, *prev_active; /* every unfinished transfer of the endpoint */
    int peer, chan;
    const unsigned char *src;
    size_t n, next_off;
    int started, inflight, finished, status;
    uint64_t base;
    uint32_t id;
    uint8_t handler;
    cc_am_word arg;
    cc_am_done done;
    void *ctx;
    int waited; /* a blocking call frees it */
} cc_am_xfer;

/* a message retained until acknowledged */
typedef struct cc_am_slot {
    cc_am_pkt pkt;
    const unsigned char *data; /* chunk data (the sender's memory: never copied) */
    cc_am_xfer *xfer;
} cc_am_slot;

/* a message waiting for room in its window */
typedef struct cc_am_item {
    struct cc_am_item *next;
    cc_am_pkt pkt;
    cc_am_xfer *xfer; /* NULL for a short message */
} cc_am_item;

typedef struct cc_am_send {
    uint32_t next, una; /* next sequence number to use, oldest unacknowledged */
    int window, chunks;
    uint8_t round;
    int64_t probe_due_ns;
    cc_am_slot *ring;
    cc_am_item *head, *tail;
} cc_am_send;

typedef struct cc_am_recv {
    uint32_t expect;
    int unacked;
    int nacked;
    uint32_t nack_seq;
    uint8_t nack_round;
    uint32_t chunk_seq; /* the partly received chunk, when chunk_bits != 0 */
    uint64_t chunk_bits;
} cc_am_recv;

typedef struct cc_am_peer {
    struct sockaddr_in addr;
    uint64_t segment_bytes;
    cc_am_send snd[2];
    cc_am_recv rcv[2];
    int64_t heard_ns;
    int dead;
    int gets; /* outstanding gets addressed to this peer */
} cc_am_peer;

typedef struct cc_am_get_slot {
    unsigned char *dst;
    size_t n, received;
    int peer, handler, active, finished, status, waited;
    cc_am_word arg;
    cc_am_done done;
    void *ctx;
} cc_am_get_slot;

typedef struct cc_am_late {
    int64_t due_ns; /* 0: after the next datagram sent */
    int peer;
    size_t len;
    unsigned char *buf;
} cc_am_late;

struct cc_am_token {
    cc_am_ep *ep;
    int src;
    int may_reply, replied;
};

struct cc_am_ep {
    cc_am_config cfg;
    int fd, rank, size;
    cc_am_peer *peers;
    struct {
        cc_am_handler fn;
        cc_am_bulk_handler bulk;
        void *ctx, *bulk_ctx;
    } handlers[CC_AM_MAX_HANDLERS];
    unsigned char *rxbuf;
    size_t rxcap;
    int in_handler;  /* inside a message handler: only replies allowed */
    int in_callback; /* inside a completion callback: no blocking calls */
    int delivered; /* messages delivered by the current poll */
    int64_t idle_since_ns; /* the first of the empty polls in a row, 0 after a datagram */
    /* where the next bulk fragment is expected to go: the receive path puts
     * its data there directly (cc_am_bulk.c, cc_am_predict) */
    struct {
        int valid, peer, chan;
        uint32_t seq;
        uint16_t frag;
        unsigned char *dst;
        size_t len;
    } predict;
    int64_t polled_ns; /* the last poll: time not spent polling does not count against peers */
    int64_t timers_ns;
    cc_am_xfer *active;  /* unfinished outgoing transfers */
    long user_xfers;     /* of which this rank's own stores (not data served to gets) */
    long open_gets;      /* gets started and not finished */
    cc_am_get_slot *gets;
    int ngets, get_hint;
    int dead_reported;   /* a death not yet returned by a call */
    int handler_error;   /* a message for an unregistered handler, not yet returned */
    uint64_t rng;
    cc_am_late late[32];
    int nlate;
    cc_am_stats stats;
    char err[CC_AM_ERRLEN];
};

#endif
