/* MPI_Cancel and the matched probes (Mprobe, Improbe) with their receives (Mrecv,
 * Imrecv).  A matched probe takes its message off the queue: the tracer keeps the
 * message's communicator, source, tag and size by its handle until a receive names it,
 * so that receive is recorded with the source and tag it got. */
#include <string.h>

#include "cc_trace.h"

/* ---- messages probed and not yet received: a short list, searched linearly ---- */

enum { CCT_MAX_MESSAGES = 256 };
typedef struct {
    MPI_Message handle;
    int32_t comm, source, tag;
    uint64_t bytes;
} cct_message;
static cct_message cct_messages[CCT_MAX_MESSAGES];
static int cct_nmessages;

static void cct_message_add(MPI_Message handle, int32_t comm, const MPI_Status *status)
{
    if (handle == MPI_MESSAGE_NULL || handle == MPI_MESSAGE_NO_PROC) return;
    if (cct_nmessages == CCT_MAX_MESSAGES) /* never received: forget the oldest */
        memmove(cct_messages, cct_messages + 1, (CCT_MAX_MESSAGES - 1) * sizeof *cct_messages);
    else
        cct_nmessages++;
    cct_messages[cct_nmessages - 1] = (cct_message){handle, comm, cct_peer(status->MPI_SOURCE),
                                                    cct_tag(status->MPI_TAG),
                                                    cct_status_bytes(status)};
}

/* The probed message this handle names (taken off the list); a message of
 * MPI_MESSAGE_NO_PROC comes from MPI_PROC_NULL. */
static cct_message cct_message_take(MPI_Message handle)
{
    cct_message m = {handle, CC_COMM_NONE, CC_PEER_NONE, -1, 0};
    if (handle == MPI_MESSAGE_NO_PROC) {
        m.source = CC_PEER_NULL;
        return m;
    }
    for (int i = cct_nmessages - 1; i >= 0; i--)
        if (cct_messages[i].handle == handle) {
            m = cct_messages[i];
            cct_messages[i] = cct_messages[--cct_nmessages];
            return m;
        }
    return m;
}

/* ---- cancel ---- */

/* The request's COMPLETE record says whether the cancel succeeded (CC_REC_CANCELLED). */
int MPI_Cancel(MPI_Request *request)
{
    CCT_ENTER(1, PMPI_Cancel(request));
    cct_req_info info = cct_req_peek(*request, 1);
    uint64_t t0 = cct_now();
    int rc = PMPI_Cancel(request);
    uint64_t t1 = cct_now();
    *r = (cc_trace_record){.call = CC_CANCEL, .flags = cct_flags(rc, 0), .comm = info.comm,
                           .peer = CC_PEER_NONE, .tag = -1, .t_start = t0, .t_end = t1,
                           .req = info.id};
    cct_end(1);
    return rc;
}

/* ---- matched probes: recorded as Probe and Iprobe, with the actual source ---- */

static void cct_probed(cc_trace_record *r, uint16_t call, int rc, int source, int tag,
                       int32_t comm, int found, MPI_Message message, const MPI_Status *status,
                       uint64_t t0, uint64_t t1)
{
    *r = (cc_trace_record){.call = call, .flags = cct_flags(rc, 0), .comm = comm,
                           .peer = cct_peer(source), .tag = cct_tag(tag), .t_start = t0,
                           .t_end = t1, .aux = CC_PEER_NONE, .aux2 = -1};
    if (rc != MPI_SUCCESS || !found) return;
    if (message == MPI_MESSAGE_NO_PROC) {
        r->aux = CC_PEER_NULL;
        return;
    }
    r->aux = cct_peer(status->MPI_SOURCE);
    r->aux2 = cct_tag(status->MPI_TAG);
    r->bytes2 = cct_status_bytes(status);
    cct_message_add(message, comm, status);
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    CCT_ENTER(1, PMPI_Mprobe(source, tag, comm, message, status));
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    uint64_t t0 = cct_now();
    int rc = PMPI_Mprobe(source, tag, comm, message, status);
    uint64_t t1 = cct_now();
    cct_probed(r, CC_MPROBE, rc, source, tag, cct_comm(comm), 1, *message, status, t0, t1);
    cct_end(1);
    return rc;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status)
{
    CCT_ENTER(1, PMPI_Improbe(source, tag, comm, flag, message, status));
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    uint64_t t0 = cct_now();
    int rc = PMPI_Improbe(source, tag, comm, flag, message, status);
    uint64_t t1 = cct_now();
    cct_probed(r, CC_IMPROBE, rc, source, tag, cct_comm(comm), *flag, *message, status, t0, t1);
    cct_end(1);
    return rc;
}

/* ---- their receives: peer and tag are the message's own ---- */

int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
              MPI_Status *status)
{
    CCT_ENTER(1, PMPI_Mrecv(buf, count, type, message, status));
    uint64_t t0 = cct_now(); /* the page check inside the span (cc_trace_coll.c, CCT_START) */
    cct_cold_recv(buf, count, type);
    MPI_Status own;
    if (status == MPI_STATUS_IGNORE) status = &own;
    cct_message m = cct_message_take(*message);
    int rc = PMPI_Mrecv(buf, count, type, message, status);
    uint64_t got = m.source == CC_PEER_NULL ? 0 : CCT_PLACED(buf, CCT_STATUS_BYTES(status));
    uint64_t t1 = cct_now(); /* CCT_RECEIVED */
    *r = (cc_trace_record){.call = CC_MRECV, .flags = cct_flags(rc, 0), .comm = m.comm,
                           .peer = m.source, .tag = m.tag, .t_start = t0, .t_end = t1,
                           .aux = m.source, .aux2 = m.tag, .bytes2 = got};
    cct_end(1);
    return rc;
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
               MPI_Request *request)
{
    CCT_ENTER(1, PMPI_Imrecv(buf, count, type, message, request));
    cct_message m = cct_message_take(*message);
    uint64_t t0 = cct_now();
    int rc = PMPI_Imrecv(buf, count, type, message, request);
    uint64_t t1 = cct_now();
    uint64_t req = 0;
    if (rc == MPI_SUCCESS && m.source != CC_PEER_NULL)
        cct_req_add(*request, m.comm, CCT_REQ_RECV, req = cct_new_req());
    *r = (cc_trace_record){.call = CC_IMRECV, .flags = cct_flags(rc, CC_REC_NONBLOCKING),
                           .comm = m.comm, .peer = m.source, .tag = m.tag,
                           .bytes2 = CCT_PLACED(buf, m.bytes), .t_start = t0, .t_end = t1,
                           .req = req};
    cct_end(1);
    return rc;
}
