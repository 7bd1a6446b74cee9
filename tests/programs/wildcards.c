/* Every way a wildcard receive completes, for the tracer and the replay: rank 1 sends
 * messages tagged 1..NMSG of tag ints each (value: the tag); rank 0 receives them with
 * MPI_ANY_SOURCE and MPI_ANY_TAG through Wait, Waitany, Waitsome, Waitall, Test,
 * Testany, Testsome, Testall, Iprobe + Recv, Probe + Recv, Mprobe + Mrecv and
 * Improbe + Imrecv, and a Sendrecv's (tag 201), cancels a receive no message matches,
 * then polls a receive and a
 * send alternately (Testany, Test) while computing, as chatty programs do.
 * Prints "wildcards ok polls <Testany calls> <Test calls>" on rank 0 when every message
 * arrived whole. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <time.h>

enum { NMSG = 18, MAXN = NMSG, POLL_TAG = 100, NEVER_TAG = 99 };

static int bad;
static int got[NMSG + 1][MAXN];

static void check(const MPI_Status *status, int index)
{
    int count = 0;
    MPI_Get_count(status, MPI_INT, &count);
    int tag = status->MPI_TAG;
    if (status->MPI_SOURCE != 1 || tag < 1 || tag > NMSG || count != tag) {
        bad++;
        return;
    }
    for (int i = 0; i < count; i++) bad += got[index][i] != tag;
}

static void work(double us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3 < us);
}

static void receive(void)
{
    MPI_Request r[2];
    MPI_Status s[2];
    int slot = 0, flag = 0, index, outcount, indices[2];
#define POST(k) MPI_Irecv(got[slot + (k)], MAXN, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r[k])
    /* Wait */
    POST(0);
    MPI_Wait(&r[0], &s[0]);
    check(&s[0], slot++);
    /* Waitany, twice */
    POST(0), POST(1);
    for (int n = 0; n < 2; n++) {
        MPI_Waitany(2, r, &index, &s[0]);
        check(&s[0], slot + index);
    }
    slot += 2;
    /* Waitsome until both */
    POST(0), POST(1);
    for (int done = 0; done < 2; done += outcount) {
        MPI_Waitsome(2, r, &outcount, indices, s);
        for (int i = 0; i < outcount; i++) check(&s[i], slot + indices[i]);
    }
    slot += 2;
    /* Waitall */
    POST(0), POST(1);
    MPI_Waitall(2, r, s);
    check(&s[0], slot), check(&s[1], slot + 1);
    slot += 2;
    /* Test until done */
    POST(0);
    for (flag = 0; !flag;) MPI_Test(&r[0], &flag, &s[0]);
    check(&s[0], slot++);
    /* Testany until both */
    POST(0), POST(1);
    for (int done = 0; done < 2;) {
        MPI_Testany(2, r, &index, &flag, &s[0]);
        if (flag && index != MPI_UNDEFINED) check(&s[0], slot + index), done++;
    }
    slot += 2;
    /* Testsome until both */
    POST(0), POST(1);
    for (int done = 0; done < 2; done += outcount) {
        MPI_Testsome(2, r, &outcount, indices, s);
        for (int i = 0; i < outcount; i++) check(&s[i], slot + indices[i]);
    }
    slot += 2;
    /* Testall until both */
    POST(0), POST(1);
    for (flag = 0; !flag;) MPI_Testall(2, r, &flag, s);
    check(&s[0], slot), check(&s[1], slot + 1);
    slot += 2;
    /* Iprobe, then a receive of what it found */
    for (flag = 0; !flag;) MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &s[1]);
    MPI_Recv(got[slot], MAXN, MPI_INT, s[1].MPI_SOURCE, s[1].MPI_TAG, MPI_COMM_WORLD, &s[0]);
    check(&s[0], slot++);
    /* Probe, then a receive */
    MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &s[1]);
    MPI_Recv(got[slot], MAXN, MPI_INT, s[1].MPI_SOURCE, s[1].MPI_TAG, MPI_COMM_WORLD, &s[0]);
    check(&s[0], slot++);
    /* Mprobe + Mrecv */
    MPI_Message message;
    MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &message, &s[1]);
    MPI_Mrecv(got[slot], MAXN, MPI_INT, &message, &s[0]);
    check(&s[0], slot++);
    /* Improbe + Imrecv + Wait */
    for (flag = 0; !flag;)
        MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &message, &s[1]);
    MPI_Imrecv(got[slot], MAXN, MPI_INT, &message, &r[0]);
    MPI_Wait(&r[0], &s[0]);
    check(&s[0], slot++);
    if (slot != NMSG) bad++;
#undef POST
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "wildcards: run with 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    int out[MAXN], token = 7, in_token = 0;
    if (rank == 1) {
        for (int tag = 1; tag <= NMSG; tag++) {
            for (int i = 0; i < tag; i++) out[i] = tag;
            MPI_Send(out, tag, MPI_INT, 0, tag, MPI_COMM_WORLD);
        }
    } else {
        receive();
        /* a receive nothing matches, cancelled */
        MPI_Request never;
        MPI_Status status;
        MPI_Irecv(out, 1, MPI_INT, MPI_ANY_SOURCE, NEVER_TAG, MPI_COMM_WORLD, &never);
        MPI_Cancel(&never);
        MPI_Wait(&never, &status);
        int cancelled = 0;
        MPI_Test_cancelled(&status, &cancelled);
        bad += !cancelled;
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* a Sendrecv whose receive is a wildcard at rank 0 */
    int back = 0;
    if (rank == 0) {
        MPI_Status status;
        MPI_Sendrecv(&token, 1, MPI_INT, 1, 200, &back, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                     MPI_COMM_WORLD, &status);
        bad += back != 9 || status.MPI_SOURCE != 1 || status.MPI_TAG != 201;
    } else {
        int nine = 9;
        MPI_Sendrecv(&nine, 1, MPI_INT, 0, 201, &back, 1, MPI_INT, 0, 200, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
    }

    /* polling: rank 0 tests a wildcard receive and a send in turn, computing between */
    int any_calls = 0, test_calls = 0;
    if (rank == 0) {
        MPI_Request rr, sr;
        MPI_Status status;
        MPI_Irecv(&in_token, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rr);
        MPI_Isend(&token, 1, MPI_INT, 1, POLL_TAG + 1, MPI_COMM_WORLD, &sr);
        int rdone = 0, sdone = 0, index;
        while (!rdone || !sdone) {
            if (!rdone) MPI_Testany(1, &rr, &index, &rdone, &status), any_calls++;
            if (!sdone) MPI_Test(&sr, &sdone, MPI_STATUS_IGNORE), test_calls++;
            work(2.0);
        }
        bad += in_token != 8 || status.MPI_TAG != POLL_TAG || status.MPI_SOURCE != 1;
    } else {
        MPI_Recv(&in_token, 1, MPI_INT, 0, POLL_TAG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        work(20000.0);
        token = in_token + 1;
        MPI_Send(&token, 1, MPI_INT, 0, POLL_TAG, MPI_COMM_WORLD);
    }
    if (rank == 0) {
        if (bad)
            printf("wildcards FAILED (%d)\n", bad);
        else
            printf("wildcards ok polls %d %d\n", any_calls, test_calls);
    }
    MPI_Finalize();
    return bad ? 1 : 0;
}
