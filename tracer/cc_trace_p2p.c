/* Point-to-point wrappers: sends in every mode, receives, probes, and the
 * Wait/Test family with one COMPLETE record per request that completed.
 * Request ids are read before PMPI_Wait and Test calls because those null the handles. */
#include "cc_trace.h"

/* ---- blocking sends ---- */

#define CCT_BLOCKING_SEND(NAME, CALL)                                                         \
    int MPI_##NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,          \
                   MPI_Comm comm)                                                             \
    {                                                                                         \
        CCT_ENTER(1, PMPI_##NAME(buf, count, type, dest, tag, comm));                         \
        uint64_t t0 = cct_now();                                                              \
        int rc = PMPI_##NAME(buf, count, type, dest, tag, comm);                              \
        const uint64_t written = CCT_WRITTEN(buf, count, type, dest);                         \
        uint64_t t1 = cct_now();                                                              \
        *r = (cc_trace_record){.call = CALL, .flags = cct_flags(rc, 0), .comm = cct_comm(comm), \
                               .peer = cct_peer(dest), .tag = tag,                            \
                               .bytes = CCT_PLACED(buf, CCT_BYTES(count, type)) | written,  \
                               .t_start = t0, .t_end = t1};                                   \
        cct_end(1);                                                                           \
        return rc;                                                                            \
    }

CCT_BLOCKING_SEND(Send, CC_SEND)
CCT_BLOCKING_SEND(Bsend, CC_BSEND)
CCT_BLOCKING_SEND(Ssend, CC_SSEND)
CCT_BLOCKING_SEND(Rsend, CC_RSEND)

/* ---- non-blocking sends ---- */

#define CCT_NONBLOCKING_SEND(NAME, CALL)                                                      \
    int MPI_##NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,          \
                   MPI_Comm comm, MPI_Request *request)                                       \
    {                                                                                         \
        CCT_ENTER(1, PMPI_##NAME(buf, count, type, dest, tag, comm, request));                \
        uint64_t t0 = cct_now();                                                              \
        int rc = PMPI_##NAME(buf, count, type, dest, tag, comm, request);                     \
        const uint64_t written = CCT_WRITTEN(buf, count, type, dest);                         \
        uint64_t t1 = cct_now();                                                              \
        int32_t id = cct_comm(comm);                                                          \
        uint64_t req = 0;                                                                     \
        if (rc == MPI_SUCCESS) cct_req_add(*request, id, 0, req = cct_new_req());             \
        *r = (cc_trace_record){.call = CALL, .flags = cct_flags(rc, CC_REC_NONBLOCKING),      \
                               .comm = id, .peer = cct_peer(dest), .tag = tag,                \
                               .bytes = CCT_PLACED(buf, CCT_BYTES(count, type)) | written, \
                               .t_start = t0, .t_end = t1, .req = req};                       \
        cct_end(1);                                                                           \
        return rc;                                                                            \
    }

CCT_NONBLOCKING_SEND(Isend, CC_ISEND)
CCT_NONBLOCKING_SEND(Ibsend, CC_IBSEND)
CCT_NONBLOCKING_SEND(Issend, CC_ISSEND)
CCT_NONBLOCKING_SEND(Irsend, CC_IRSEND)

/* ---- receives ---- */

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    CCT_ENTER(1, PMPI_Recv(buf, count, type, source, tag, comm, status));
    uint64_t t0 = cct_now(); /* the page check inside the span (cc_trace_coll.c, CCT_START) */
    cct_cold_recv(buf, count, type);
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    int rc = PMPI_Recv(buf, count, type, source, tag, comm, status);
    uint64_t got = CCT_PLACED(buf, CCT_STATUS_BYTES(status)); /* inside the span: CCT_RECEIVED */
    uint64_t t1 = cct_now();
    *r = (cc_trace_record){.call = CC_RECV, .flags = cct_flags(rc, 0), .comm = cct_comm(comm),
                           .peer = cct_peer(source), .tag = cct_tag(tag), .t_start = t0,
                           .t_end = t1, .aux = cct_peer(status->MPI_SOURCE),
                           .aux2 = cct_tag(status->MPI_TAG), .bytes2 = got};
    cct_end(1);
    return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    CCT_ENTER(1, PMPI_Irecv(buf, count, type, source, tag, comm, request));
    uint64_t t0 = cct_now(); /* the page check inside the span */
    cct_cold_recv(buf, count, type);
    int rc = PMPI_Irecv(buf, count, type, source, tag, comm, request);
    uint64_t t1 = cct_now();
    int32_t id = cct_comm(comm);
    uint64_t req = 0;
    if (rc == MPI_SUCCESS) cct_req_add(*request, id, 1, req = cct_new_req());
    *r = (cc_trace_record){.call = CC_IRECV, .flags = cct_flags(rc, CC_REC_NONBLOCKING),
                           .comm = id, .peer = cct_peer(source), .tag = cct_tag(tag),
                           .bytes2 = CCT_PLACED(buf, CCT_BYTES(count, type)), .t_start = t0,
                           .t_end = t1, .req = req};
    cct_end(1);
    return rc;
}

/* A wildcard receive of a Sendrecv: aux and aux2 are what the status says arrived. */
static inline void cct_received_from(cc_trace_record *r, int rc, int source,
                                     const MPI_Status *status)
{
    if (rc != MPI_SUCCESS || source == MPI_PROC_NULL) return;
    r->aux = cct_peer(status->MPI_SOURCE);
    r->aux2 = cct_tag(status->MPI_TAG);
}

/* bytes2 is what arrived (the status), which is what the replay must move */
int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                 int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                 int recvtag, MPI_Comm comm, MPI_Status *status)
{
    CCT_ENTER(1, PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                               recvtype, source, recvtag, comm, status));
    uint64_t t0 = cct_now(); /* the page check inside the span */
    if (source != MPI_PROC_NULL) cct_cold_recv(recvbuf, recvcount, recvtype);
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                           recvtype, source, recvtag, comm, status);
    uint64_t got = source == MPI_PROC_NULL ? 0 : CCT_PLACED(recvbuf, CCT_STATUS_BYTES(status));
    const uint64_t written = CCT_WRITTEN(sendbuf, sendcount, sendtype, dest);
    uint64_t t1 = cct_now(); /* CCT_RECEIVED */
    *r = (cc_trace_record){.call = CC_SENDRECV, .flags = cct_flags(rc, 0),
                           .comm = cct_comm(comm), .peer = cct_peer(dest), .tag = sendtag,
                           .bytes = CCT_PLACED(sendbuf, CCT_BYTES(sendcount, sendtype)) | written,
                           .bytes2 = got, .t_start = t0, .t_end = t1, .aux = cct_peer(source),
                           .aux2 = cct_tag(recvtag)};
    cct_received_from(r, rc, source, status);
    cct_end(1);
    return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    CCT_ENTER(1, PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm,
                                       status));
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    uint64_t t0 = cct_now();
    int rc = PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm,
                                   status);
    uint64_t got = source == MPI_PROC_NULL ? 0 : CCT_PLACED(buf, CCT_STATUS_BYTES(status));
    uint64_t t1 = cct_now(); /* CCT_RECEIVED */
    *r = (cc_trace_record){.call = CC_SENDRECV_REPLACE, .flags = cct_flags(rc, 0),
                           .comm = cct_comm(comm), .peer = cct_peer(dest), .tag = sendtag,
                           .bytes = CCT_PLACED(buf, CCT_BYTES(count, type)), .bytes2 = got,
                           .t_start = t0, .t_end = t1, .aux = cct_peer(source),
                           .aux2 = cct_tag(recvtag)};
    cct_received_from(r, rc, source, status);
    cct_end(1);
    return rc;
}

/* ---- probes ---- */

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    CCT_ENTER(1, PMPI_Probe(source, tag, comm, status));
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    uint64_t t0 = cct_now();
    int rc = PMPI_Probe(source, tag, comm, status);
    uint64_t t1 = cct_now();
    *r = (cc_trace_record){.call = CC_PROBE, .flags = cct_flags(rc, 0), .comm = cct_comm(comm),
                           .peer = cct_peer(source), .tag = cct_tag(tag),
                           .bytes2 = CCT_STATUS_BYTES(status), .t_start = t0, .t_end = t1,
                           .aux = cct_peer(status->MPI_SOURCE), .aux2 = cct_tag(status->MPI_TAG)};
    cct_end(1);
    return rc;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    CCT_ENTER(1, PMPI_Iprobe(source, tag, comm, flag, status));
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    uint64_t t0 = cct_now();
    int rc = PMPI_Iprobe(source, tag, comm, flag, status);
    uint64_t t1 = cct_now();
    *r = (cc_trace_record){.call = CC_IPROBE, .flags = cct_flags(rc, 0), .comm = cct_comm(comm),
                           .peer = cct_peer(source), .tag = cct_tag(tag), .t_start = t0,
                           .t_end = t1, .aux = *flag, .aux2 = -1};
    if (*flag) {
        r->aux2 = cct_tag(status->MPI_TAG);
        r->bytes2 = CCT_STATUS_BYTES(status);
    }
    cct_end(1);
    return rc;
}

/* ---- completion ---- */

static inline void cct_call(cc_trace_record *r, uint16_t call, int rc, uint64_t t0,
                            uint64_t t1, int32_t aux)
{
    *r = (cc_trace_record){.call = call, .flags = cct_flags(rc, 0), .comm = CC_COMM_NONE,
                           .peer = CC_PEER_NONE, .tag = -1, .t_start = t0, .t_end = t1,
                           .aux = aux};
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    CCT_ENTER(2, PMPI_Wait(request, status));
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    cct_req_info info = cct_req_take(*request);
    uint64_t t0 = cct_now();
    int rc = PMPI_Wait(request, status);
    uint64_t t1 = cct_now();
    cct_call(r, CC_WAIT, rc, t0, t1, 1);
    uint32_t n = 1;
    if (info.id) cct_complete(r + n++, info, 0, status, t1);
    cct_end(n);
    return rc;
}

/* Test calls that complete nothing are the polling loops of chatty programs: they touch
 * neither the request map nor a new record (cct_test_failed extends a TEST_RUN), and most
 * read no clock. */
#define CCT_TEST_BEGIN(CALL, COUNT, HANDLES)                                                  \
    uint64_t key = cct_handles_key(COUNT, HANDLES);                                           \
    cc_trace_record *run = cct_test_run(r, CALL, COUNT, key);                                 \
    int timed = cct_test_timed(run);                                                          \
    uint64_t t0 = timed ? cct_now() : 0

#define CCT_TEST_END(CALL, COUNT, FAILED)                                                     \
    uint64_t t1 = timed ? cct_now() : 0;                                                      \
    if (rc == MPI_SUCCESS && (FAILED)) {                                                      \
        cct_test_failed(r, run, CALL, COUNT, key, timed, t0, t1);                             \
        return rc;                                                                            \
    }                                                                                         \
    if (!timed) t0 = t1 = cct_now() /* a test that completes something takes little time */

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    CCT_ENTER(2, PMPI_Test(request, flag, status));
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    MPI_Request handle = *request;
    CCT_TEST_BEGIN(CC_TEST, 1, &handle);
    int rc = PMPI_Test(request, flag, status);
    CCT_TEST_END(CC_TEST, 1, !*flag);
    cct_call(r, CC_TEST, rc, t0, t1, *flag);
    uint32_t n = 1;
    cct_req_info info = *flag ? cct_req_take(handle) : (cct_req_info){0, CC_COMM_NONE, 0};
    if (info.id) cct_complete(r + n++, info, 0, status, t1);
    cct_end(n);
    return rc;
}

/* Before a call on a request array: copy the handles (the call nulls those that complete)
 * to `small` when they fit, to a scratch array otherwise. */
enum { CCT_SMALL_SET = 8 };
static inline MPI_Request *cct_before(int count, const MPI_Request *requests,
                                      MPI_Request *small)
{
    MPI_Request *copy = count <= CCT_SMALL_SET ? small : cct_scratch_handles(count);
    for (int i = 0; i < count; i++) copy[i] = requests[i];
    return copy;
}

/* COMPLETE records for the requests at these indices (all when indices is NULL), each
 * taken out of the map by its handle from before the call.  Requests the tracer did not
 * create (a non-blocking collective, a persistent request) get no record: the replay
 * knows no start for them. */
static uint32_t cct_after(cc_trace_record *r, const MPI_Request *handles, int completed,
                          const int *indices, const MPI_Status *statuses, uint64_t t)
{
    uint32_t written = 0;
    for (int i = 0; i < completed; i++) {
        int index = indices ? indices[i] : i;
        cct_req_info info = cct_req_take(handles[index]);
        if (!info.id) continue;
        cct_complete(r + written++, info, index, statuses ? &statuses[i] : NULL, t);
    }
    return written;
}

static inline uint32_t cct_slots(int count) { return (uint32_t)(count > 0 ? count : 0) + 1; }

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    CCT_ENTER(cct_slots(count), PMPI_Waitall(count, requests, statuses));
    if (statuses == MPI_STATUSES_IGNORE) statuses = cct_scratch_statuses(count);
    MPI_Request small[CCT_SMALL_SET], *handles = cct_before(count, requests, small);
    uint64_t t0 = cct_now();
    int rc = PMPI_Waitall(count, requests, statuses);
    uint64_t t1 = cct_now();
    cct_call(r, CC_WAITALL, rc, t0, t1, count);
    /* on an error some may still be pending: the statuses do not say which */
    uint32_t n = 1 + cct_after(r + 1, handles, count, NULL, statuses, t1);
    cct_end(n);
    return rc;
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    CCT_ENTER(cct_slots(count), PMPI_Testall(count, requests, flag, statuses));
    if (statuses == MPI_STATUSES_IGNORE) statuses = cct_scratch_statuses(count);
    MPI_Request small[CCT_SMALL_SET], *handles = cct_before(count, requests, small);
    CCT_TEST_BEGIN(CC_TESTALL, count, handles);
    int rc = PMPI_Testall(count, requests, flag, statuses);
    CCT_TEST_END(CC_TESTALL, count, !*flag);
    cct_call(r, CC_TESTALL, rc, t0, t1, *flag);
    /* all complete, or none */
    uint32_t n = 1 + cct_after(r + 1, handles, *flag ? count : 0, NULL, statuses, t1);
    cct_end(n);
    return rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    CCT_ENTER(2, PMPI_Waitany(count, requests, index, status));
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    MPI_Request small[CCT_SMALL_SET], *handles = cct_before(count, requests, small);
    uint64_t t0 = cct_now();
    int rc = PMPI_Waitany(count, requests, index, status);
    uint64_t t1 = cct_now();
    cct_call(r, CC_WAITANY, rc, t0, t1, *index);
    int done = *index != MPI_UNDEFINED;
    uint32_t n = 1 + cct_after(r + 1, handles, done, index, status, t1);
    cct_end(n);
    return rc;
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    CCT_ENTER(2, PMPI_Testany(count, requests, index, flag, status));
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    MPI_Request small[CCT_SMALL_SET], *handles = cct_before(count, requests, small);
    CCT_TEST_BEGIN(CC_TESTANY, count, handles);
    int rc = PMPI_Testany(count, requests, index, flag, status);
    int done = *flag && *index != MPI_UNDEFINED;
    CCT_TEST_END(CC_TESTANY, count, !done);
    cct_call(r, CC_TESTANY, rc, t0, t1, *flag);
    uint32_t n = 1 + cct_after(r + 1, handles, done, index, status, t1);
    cct_end(n);
    return rc;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    CCT_ENTER(cct_slots(incount), PMPI_Waitsome(incount, requests, outcount, indices, statuses));
    if (statuses == MPI_STATUSES_IGNORE) statuses = cct_scratch_statuses(incount);
    MPI_Request small[CCT_SMALL_SET], *handles = cct_before(incount, requests, small);
    uint64_t t0 = cct_now();
    int rc = PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    uint64_t t1 = cct_now();
    cct_call(r, CC_WAITSOME, rc, t0, t1, *outcount);
    int done = *outcount == MPI_UNDEFINED ? 0 : *outcount;
    uint32_t n = 1 + cct_after(r + 1, handles, done, indices, statuses, t1);
    cct_end(n);
    return rc;
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    CCT_ENTER(cct_slots(incount), PMPI_Testsome(incount, requests, outcount, indices, statuses));
    if (statuses == MPI_STATUSES_IGNORE) statuses = cct_scratch_statuses(incount);
    MPI_Request small[CCT_SMALL_SET], *handles = cct_before(incount, requests, small);
    CCT_TEST_BEGIN(CC_TESTSOME, incount, handles);
    int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
    int done = *outcount == MPI_UNDEFINED ? 0 : *outcount;
    CCT_TEST_END(CC_TESTSOME, incount, done == 0);
    cct_call(r, CC_TESTSOME, rc, t0, t1, *outcount);
    uint32_t n = 1 + cct_after(r + 1, handles, done, indices, statuses, t1);
    cct_end(n);
    return rc;
}
