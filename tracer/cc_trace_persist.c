/* Persistent requests.  The *_init call is recorded with its message (peer, tag,
 * bytes); each MPI_Start of it writes a START record that carries the same
 * message and a fresh request id, so the Wait or Test that completes it writes
 * a COMPLETE record, as for an Isend or Irecv.  MPI_Startall writes one record
 * for the call, then a START record per request. */
#include <stdlib.h>

#include "cc_trace.h"

typedef struct {
    MPI_Request handle;
    cc_trace_record message; /* the init call's record: call, comm, peer, tag, bytes */
} cct_persistent;

static cct_persistent *cct_inits;
static int cct_ninits, cct_inits_cap;

/* the newest entry of this handle (a freed handle's value may come back) */
static cct_persistent *cct_init_find(MPI_Request handle)
{
    for (int i = cct_ninits - 1; i >= 0; i--)
        if (cct_inits[i].handle == handle) return &cct_inits[i];
    return NULL;
}

static void cct_init_add(MPI_Request handle, const cc_trace_record *message)
{
    if (cct_ninits == cct_inits_cap) {
        int cap = cct_inits_cap ? 2 * cct_inits_cap : 64;
        cct_persistent *grown = cct_realloc(cct_inits, (size_t)cap * sizeof *grown);
        if (!grown) return; /* its Starts are then recorded as calls without a message */
        cct_inits = grown;
        cct_inits_cap = cap;
    }
    cct_inits[cct_ninits++] = (cct_persistent){handle, *message};
}

static void cct_init_forget(MPI_Request handle)
{
    cct_persistent *p = cct_init_find(handle);
    if (p) *p = cct_inits[--cct_ninits];
}

#define CCT_INIT(NAME, CALL, RECV, CONST)                                                     \
    int MPI_##NAME(CONST void *buf, int count, MPI_Datatype type, int peer, int tag,          \
                   MPI_Comm comm, MPI_Request *request)                                       \
    {                                                                                         \
        CCT_ENTER(1, PMPI_##NAME(buf, count, type, peer, tag, comm, request));                \
        uint64_t t0 = cct_now();                                                              \
        int rc = PMPI_##NAME(buf, count, type, peer, tag, comm, request);                     \
        uint64_t t1 = cct_now();                                                              \
        uint64_t bytes = CCT_PLACED(buf, CCT_BYTES(count, type));                             \
        *r = (cc_trace_record){.call = CALL, .flags = cct_flags(rc, 0),                       \
                               .comm = cct_comm(comm), .peer = cct_peer(peer),                \
                               .tag = RECV ? cct_tag(tag) : tag, .bytes = RECV ? 0 : bytes,   \
                               .bytes2 = RECV ? bytes : 0, .t_start = t0, .t_end = t1};       \
        if (rc == MPI_SUCCESS) cct_init_add(*request, r);                                     \
        cct_end(1);                                                                           \
        return rc;                                                                            \
    }

CCT_INIT(Send_init, CC_SEND_INIT, 0, const)
CCT_INIT(Bsend_init, CC_BSEND_INIT, 0, const)
CCT_INIT(Ssend_init, CC_SSEND_INIT, 0, const)
CCT_INIT(Rsend_init, CC_RSEND_INIT, 0, const)
CCT_INIT(Recv_init, CC_RECV_INIT, 1, )

/* The START record of one request (a request the tracer did not see created gets one
 * without a message: comm -1, aux 0). */
static void cct_start_record(cc_trace_record *r, MPI_Request handle, int rc, uint64_t t0,
                             uint64_t t1)
{
    cct_persistent *p = cct_init_find(handle);
    *r = (cc_trace_record){.call = CC_START, .flags = cct_flags(rc, CC_REC_NONBLOCKING),
                           .comm = CC_COMM_NONE, .peer = CC_PEER_NONE, .tag = -1,
                           .t_start = t0, .t_end = t1};
    if (!p || rc != MPI_SUCCESS) return;
    const cc_trace_record *m = &p->message;
    int recv = m->call == CC_RECV_INIT;
    r->comm = m->comm;
    r->peer = m->peer;
    r->tag = m->tag;
    r->bytes = m->bytes;
    r->bytes2 = m->bytes2;
    r->aux = m->call;
    r->req = cct_new_req();
    cct_req_drop(handle); /* an earlier start that was never completed */
    cct_req_add(handle, m->comm, recv, r->req);
}

int MPI_Start(MPI_Request *request)
{
    CCT_ENTER(1, PMPI_Start(request));
    uint64_t t0 = cct_now();
    int rc = PMPI_Start(request);
    cct_start_record(r, *request, rc, t0, cct_now());
    cct_end(1);
    return rc;
}

int MPI_Startall(int count, MPI_Request requests[])
{
    uint32_t k = 1 + (uint32_t)(count > 0 ? count : 0);
    CCT_ENTER(k, PMPI_Startall(count, requests));
    uint64_t t0 = cct_now();
    int rc = PMPI_Startall(count, requests);
    uint64_t t1 = cct_now();
    *r = (cc_trace_record){.call = CC_STARTALL, .flags = cct_flags(rc, 0), .comm = CC_COMM_NONE,
                           .peer = CC_PEER_NONE, .tag = -1, .t_start = t0, .t_end = t1,
                           .aux = count};
    uint32_t n = 1;
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < count; i++) cct_start_record(r + n++, requests[i], rc, t1, t1);
    cct_end(n);
    return rc;
}

/* A request freed is never waited for: forget it (and its message, if persistent). */
int MPI_Request_free(MPI_Request *request)
{
    CCT_ENTER(1, PMPI_Request_free(request));
    MPI_Request handle = *request;
    cct_req_drop(handle);
    uint64_t t0 = cct_now();
    int rc = PMPI_Request_free(request);
    if (rc == MPI_SUCCESS) cct_init_forget(handle);
    *r = (cc_trace_record){.call = CC_REQUEST_FREE, .flags = cct_flags(rc, 0),
                           .comm = CC_COMM_NONE, .peer = CC_PEER_NONE, .tag = -1,
                           .t_start = t0, .t_end = cct_now()};
    cct_end(1);
    return rc;
}
