/* coldstart: what a program's first messages cost.
 *
 * A library's first messages can cost far more than the warm ones every other
 * operation measures: MPICH's shared-memory transport sends each eager message
 * from one of its cells, and the first use of a cell faults its pages in (about
 * 5 us a message until every cell has been used once), so a program that sends
 * a few hundred messages in all (Gaussian elimination of N = 256) runs a tenth
 * slower than the warm parameters predict.
 *
 * The runner gives this point a process of its own, so setup runs before any
 * other traffic of the kernel's: after one barrier, ranks 0 and 1 send n bytes to each other in
 * turn, CC_COLD_SENDS times each, the receiver already waiting (as a program's
 * pivot row or halo finds it), and each rank keeps the duration of each of its
 * sends, rank 0 also each round trip.  The timed loop then measures the same
 * exchange warm (half a round trip), and extra reports the cold durations in
 * order; the fit (commchar.models.coldstart) finds how many sends are cold and
 * what each costs its sender and its receiver.
 *
 * Then the first time a process holds many requests at once: each rank posts
 * CC_COLD_REQUESTS receives from the other, then as many sends to it, and keeps
 * each call's duration, the k-th being the one that first holds k + 1 requests.
 * A library keeps a few requests ready and allocates more when a program holds
 * more (MPICH 4 and 5: the ninth costs a few hundred microseconds to a
 * millisecond, once per process); a program of many peers (an exchange posting
 * a receive and a send to each) pays it in its first exchange.  The fit
 * (commchar.models.request_growth) finds those counts and what each costs.
 *
 * Last, the pair's first rendezvous messages: rank 0 sends CC_COLD_RNDV_BYTES to rank
 * 1 CC_COLD_RNDV_SENDS times, then rank 1 to rank 0 as often, each after a barrier
 * (the receiver waiting), both buffers written before, each send timed.  MPICH over
 * UCX pays for a pair's first rendezvous (100 to 250 us the first way, 30 to 60 the
 * other), per pair of ranks, not once a process; the fit takes the first send less
 * the later ones. */
#include <stdlib.h>
#include <string.h>

#include "cc_op_data.h"
#include "cc_ops_mpi.h"

/* three times MPICH 4's 64 cells a rank, so the warm tail is long enough to judge */
#define CC_COLD_SENDS 192
/* receives posted at once, then as many sends: twice as many requests as a rank of
 * a 256-rank exchange holds */
#define CC_COLD_REQUESTS 256

/* larger than any eager limit of the libraries measured (MPICH's 8 KiB, Open MPI's 4) */
#define CC_COLD_RNDV_BYTES 65536
#define CC_COLD_RNDV_SENDS 3

typedef struct {
    double send_ns[CC_COLD_SENDS];
    /* this rank's rendezvous sends to the other, in order */
    double rndv_ns[CC_COLD_RNDV_SENDS];
    /* rank 0: from its send's start to the end of its receive of the reply; less both
     * sends, what is left is the two messages' way and their receivers' work */
    double round_ns[CC_COLD_SENDS];
    /* the k-th nonblocking call's duration: the first time the rank holds k + 1 requests */
    double post_ns[2 * CC_COLD_REQUESTS];
} cc_cold_record;

static void cc_cold_exchange(cc_point *pt, cc_cold_record *rec)
{
    const int n = (int)pt->n, peer = 1 - pt->rank;
    int64_t round_start = 0;
    for (int k = 0; k < 2 * CC_COLD_SENDS; k++) {
        if (k % 2 == pt->rank) {
            const int64_t t0 = cc_now_ns();
            CC_MPI(MPI_Send(pt->sbuf, n, MPI_BYTE, peer, CC_TAG_DATA, pt->comm));
            rec->send_ns[k / 2] = (double)(cc_now_ns() - t0);
            round_start = t0;
        } else {
            CC_MPI(MPI_Recv(pt->rbuf, n, MPI_BYTE, peer, CC_TAG_DATA, pt->comm, MPI_STATUS_IGNORE));
            if (pt->rank == 0) rec->round_ns[k / 2] = (double)(cc_now_ns() - round_start);
        }
    }
}

/* each rank posts CC_COLD_REQUESTS receives (each into a slot of its own, written
 * before so that no page faults), then as many sends, timing each call */
static void cc_cold_requests(cc_point *pt, cc_cold_record *rec)
{
    const int n = (int)pt->n, peer = 1 - pt->rank;
    const size_t slot = pt->n ? pt->n : 1;
    unsigned char *slots = cc_xalloc_pages(slot * CC_COLD_REQUESTS);
    memset(slots, 0, slot * CC_COLD_REQUESTS);
    MPI_Request *req = cc_xmalloc(2 * CC_COLD_REQUESTS * sizeof *req);
    CC_MPI(MPI_Barrier(pt->comm));
    for (int k = 0; k < CC_COLD_REQUESTS; k++) {
        const int64_t t0 = cc_now_ns();
        CC_MPI(MPI_Irecv(slots + (size_t)k * slot, n, MPI_BYTE, peer, CC_TAG_DATA, pt->comm, &req[k]));
        rec->post_ns[k] = (double)(cc_now_ns() - t0);
    }
    for (int k = 0; k < CC_COLD_REQUESTS; k++) {
        const int64_t t0 = cc_now_ns();
        CC_MPI(MPI_Isend(pt->sbuf, n, MPI_BYTE, peer, CC_TAG_DATA, pt->comm,
                         &req[CC_COLD_REQUESTS + k]));
        rec->post_ns[CC_COLD_REQUESTS + k] = (double)(cc_now_ns() - t0);
    }
    CC_MPI(MPI_Waitall(2 * CC_COLD_REQUESTS, req, cc_statuses_ignore));
    free(req);
    cc_free_pages(slots);
}

/* rank 0's rendezvous sends to rank 1, then rank 1's to rank 0, each timed */
static void cc_cold_rendezvous(cc_point *pt, cc_cold_record *rec)
{
    const int peer = 1 - pt->rank;
    unsigned char *out = cc_xalloc_pages(CC_COLD_RNDV_BYTES), *in = cc_xalloc_pages(CC_COLD_RNDV_BYTES);
    memset(out, pt->rank + 1, CC_COLD_RNDV_BYTES);
    memset(in, 0, CC_COLD_RNDV_BYTES);
    for (int sender = 0; sender < 2; sender++) {
        for (int k = 0; k < CC_COLD_RNDV_SENDS; k++) {
            CC_MPI(MPI_Barrier(pt->comm));
            if (pt->rank == sender) {
                const int64_t t0 = cc_now_ns();
                CC_MPI(MPI_Send(out, CC_COLD_RNDV_BYTES, MPI_BYTE, peer, CC_TAG_DATA, pt->comm));
                rec->rndv_ns[k] = (double)(cc_now_ns() - t0);
            } else {
                CC_MPI(MPI_Recv(in, CC_COLD_RNDV_BYTES, MPI_BYTE, peer, CC_TAG_DATA, pt->comm,
                                MPI_STATUS_IGNORE));
            }
        }
    }
    cc_free_pages(out);
    cc_free_pages(in);
}

static void cc_coldstart_setup(cc_point *pt)
{
    cc_pair_buffers(pt);
    cc_cold_record *rec = cc_xmalloc(sizeof *rec);
    /* programs synchronise once before they work (their setup is not what is timed):
     * the communicator's own first use (Open MPI sets up a peer's state then) is paid here */
    cc_pair_fill(pt); /* a program's data is written before it is sent: no page of ours faults */
    CC_MPI(MPI_Barrier(pt->comm));
    cc_cold_exchange(pt, rec);
    cc_cold_requests(pt, rec);
    cc_cold_rendezvous(pt, rec);
    pt->attached = rec;
}

static void cc_coldstart_run(cc_point *pt, long count)
{
    const int n = (int)pt->n, peer = 1 - pt->rank;
    for (long k = 0; k < count; k++) {
        if (pt->rank == 0) {
            CC_MPI(MPI_Send(pt->sbuf, n, MPI_BYTE, peer, CC_TAG_DATA, pt->comm));
            CC_MPI(MPI_Recv(pt->rbuf, n, MPI_BYTE, peer, CC_TAG_DATA, pt->comm, MPI_STATUS_IGNORE));
        } else {
            CC_MPI(MPI_Recv(pt->rbuf, n, MPI_BYTE, peer, CC_TAG_DATA, pt->comm, MPI_STATUS_IGNORE));
            CC_MPI(MPI_Send(pt->sbuf, n, MPI_BYTE, peer, CC_TAG_DATA, pt->comm));
        }
    }
}

static void cc_cold_list(cc_buf *json, const char *key, const double *ns, int count)
{
    cc_buf_key(json, key);
    cc_buf_printf(json, "[");
    for (int i = 0; i < count; i++) {
        if (i) cc_buf_printf(json, ",");
        cc_buf_printf(json, "%.3f", ns[i] / 1000.0);
    }
    cc_buf_printf(json, "]");
}

/* both ranks' cold send and request durations (us, in order) on rank 0's line */
static void cc_coldstart_extra(cc_point *pt, double main_median_us, cc_buf *json)
{
    (void)main_median_us;
    const cc_cold_record *own = pt->attached;
    if (pt->rank == 1) {
        CC_MPI(MPI_Send(own->send_ns, CC_COLD_SENDS, MPI_DOUBLE, 0, CC_TAG_DATA, pt->ctl));
        CC_MPI(MPI_Send(own->post_ns, 2 * CC_COLD_REQUESTS, MPI_DOUBLE, 0, CC_TAG_DATA, pt->ctl));
        CC_MPI(MPI_Send(own->rndv_ns, CC_COLD_RNDV_SENDS, MPI_DOUBLE, 0, CC_TAG_DATA, pt->ctl));
        return;
    }
    cc_cold_record *peer = cc_xmalloc(sizeof *peer);
    CC_MPI(MPI_Recv(peer->send_ns, CC_COLD_SENDS, MPI_DOUBLE, 1, CC_TAG_DATA, pt->ctl,
                    MPI_STATUS_IGNORE));
    CC_MPI(MPI_Recv(peer->post_ns, 2 * CC_COLD_REQUESTS, MPI_DOUBLE, 1, CC_TAG_DATA, pt->ctl,
                    MPI_STATUS_IGNORE));
    CC_MPI(MPI_Recv(peer->rndv_ns, CC_COLD_RNDV_SENDS, MPI_DOUBLE, 1, CC_TAG_DATA, pt->ctl,
                    MPI_STATUS_IGNORE));
    cc_cold_list(json, "cold_send_us_rank0", own->send_ns, CC_COLD_SENDS);
    cc_cold_list(json, "cold_send_us_rank1", peer->send_ns, CC_COLD_SENDS);
    cc_cold_list(json, "cold_round_us_rank0", own->round_ns, CC_COLD_SENDS);
    cc_cold_list(json, "request_post_us_rank0", own->post_ns, 2 * CC_COLD_REQUESTS);
    cc_cold_list(json, "request_post_us_rank1", peer->post_ns, 2 * CC_COLD_REQUESTS);
    cc_cold_list(json, "rendezvous_send_us_rank0", own->rndv_ns, CC_COLD_RNDV_SENDS);
    cc_cold_list(json, "rendezvous_send_us_rank1", peer->rndv_ns, CC_COLD_RNDV_SENDS);
    free(peer);
}

static void cc_coldstart_cleanup(cc_point *pt)
{
    free(pt->attached);
    pt->attached = NULL;
    cc_buffer_free(pt, pt->sbuf);
    cc_buffer_free(pt, pt->rbuf);
    pt->sbuf = pt->rbuf = NULL;
}

const cc_op cc_op_coldstart = {
    .name = "coldstart",
    .scope = CC_SCOPE_PAIR,
    .phases = 1,
    .check_size = cc_p2p_check_size,
    .setup = cc_coldstart_setup,
    .run = cc_coldstart_run,
    .fill = cc_pair_fill,
    .check = cc_pair_check,
    .extra = cc_coldstart_extra,
    .cleanup = cc_coldstart_cleanup,
    .first_traffic = 1,
};
