/* Calls every MPI function the tracer follows, with known peers, tags and
 * sizes, so a test can check each record.  Run with 2 ranks:
 *   trace_calls          everything, then MPI_Finalize
 *   trace_calls crash    rank 1 aborts (SIGABRT) halfway
 *   trace_calls hang     rank 1 never sends what rank 0 waits for
 * Rank 0 prints a checksum of everything it received: traced and untraced
 * runs must print the same line. */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { N = 100 }; /* ints per message: 400 bytes */

static long checksum(const int *v, int n)
{
    long sum = 0;
    for (int i = 0; i < n; i++) sum = sum * 31 + v[i];
    return sum;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "all";
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = 1 - rank;
    int out[N], in[N] = {0}, big[2 * N] = {0};
    long sum = 0;
    for (int i = 0; i < N; i++) out[i] = rank * 1000 + i;
    /* where the message buffers lie in their pages, for the records' places */
    printf("places rank %d out %u in %u big %u\n", rank, (unsigned)((uintptr_t)out % 4096),
           (unsigned)((uintptr_t)in % 4096), (unsigned)((uintptr_t)big % 4096));

    MPI_Pcontrol(1);
    /* blocking sends in every mode, rank 0 -> rank 1 (tags 1..4) */
    static char bsend_buffer[N * sizeof(int) + MPI_BSEND_OVERHEAD];
    MPI_Buffer_attach(bsend_buffer, sizeof bsend_buffer);
    MPI_Request rsend_req = MPI_REQUEST_NULL;
    if (rank == 1) MPI_Irecv(in, N, MPI_INT, 0, 4, MPI_COMM_WORLD, &rsend_req);
    MPI_Barrier(MPI_COMM_WORLD); /* the Rsend's receive is posted */
    if (rank == 0) {
        MPI_Send(out, N, MPI_INT, 1, 1, MPI_COMM_WORLD);
        MPI_Bsend(out, N, MPI_INT, 1, 2, MPI_COMM_WORLD);
        MPI_Ssend(out, N, MPI_INT, 1, 3, MPI_COMM_WORLD);
        MPI_Rsend(out, N, MPI_INT, 1, 4, MPI_COMM_WORLD);
    } else {
        MPI_Recv(in, N, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(in, N, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(in, N, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&rsend_req, MPI_STATUS_IGNORE);
    }
    void *detached;
    int detached_size;
    MPI_Buffer_detach(&detached, &detached_size);
    sum += checksum(in, N);

    /* non-blocking exchange both ways (tag 10), completed by Waitall */
    MPI_Request reqs[4];
    MPI_Irecv(in, N, MPI_INT, peer, 10, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(out, N, MPI_INT, peer, 10, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    sum += checksum(in, N);

    /* Issend + Irecv(ANY_SOURCE) with 20 ints, completed by Waitany then Test loop */
    MPI_Irecv(in, N, MPI_INT, MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &reqs[0]);
    MPI_Issend(out, 20, MPI_INT, peer, 11, MPI_COMM_WORLD, &reqs[1]);
    int index, flag = 0;
    MPI_Waitany(2, reqs, &index, MPI_STATUS_IGNORE);
    int other = 1 - index;
    while (!flag) MPI_Test(&reqs[other], &flag, MPI_STATUS_IGNORE);
    sum += checksum(in, 20);

    /* Ibsend (tag 12) + Irsend (tag 13, receive posted first) with Waitsome/Testall */
    MPI_Buffer_attach(bsend_buffer, sizeof bsend_buffer);
    MPI_Irecv(in, N, MPI_INT, peer, 12, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(big, N, MPI_INT, peer, 13, MPI_COMM_WORLD, &reqs[1]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Ibsend(out, N, MPI_INT, peer, 12, MPI_COMM_WORLD, &reqs[2]);
    MPI_Irsend(out, N, MPI_INT, peer, 13, MPI_COMM_WORLD, &reqs[3]);
    int done = 0, outcount, indices[4];
    while (done < 4) {
        MPI_Waitsome(4, reqs, &outcount, indices, MPI_STATUSES_IGNORE);
        done += outcount;
    }
    MPI_Buffer_detach(&detached, &detached_size);
    sum += checksum(in, N) + checksum(big, N);

    MPI_Irecv(in, N, MPI_INT, peer, 14, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(out, N, MPI_INT, peer, 14, MPI_COMM_WORLD, &reqs[1]);
    for (flag = 0; !flag;) MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE);
    MPI_Irecv(in, N, MPI_INT, peer, 15, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(out, N, MPI_INT, peer, 15, MPI_COMM_WORLD, &reqs[1]);
    for (done = 0; done < 2;) {
        MPI_Testany(2, reqs, &index, &flag, MPI_STATUS_IGNORE);
        if (flag && index != MPI_UNDEFINED) done++;
    }
    MPI_Irecv(in, N, MPI_INT, peer, 16, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(out, N, MPI_INT, peer, 16, MPI_COMM_WORLD, &reqs[1]);
    for (done = 0; done < 2; done += outcount)
        MPI_Testsome(2, reqs, &outcount, indices, MPI_STATUSES_IGNORE);
    sum += checksum(in, N);

    if (strcmp(mode, "crash") == 0 && rank == 1) abort();
    if (strcmp(mode, "hang") == 0) {
        if (rank == 0) MPI_Recv(in, N, MPI_INT, 1, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else pause();
    }

    /* combined send-receive and probes (tags 20..22) */
    MPI_Sendrecv(out, N, MPI_INT, peer, 20, in, N, MPI_INT, peer, 20, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    memcpy(big, out, sizeof out);
    MPI_Sendrecv_replace(big, 50, MPI_INT, peer, 21, peer, 21, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
    sum += checksum(in, N) + checksum(big, 50);
    if (rank == 0) {
        MPI_Send(out, 30, MPI_INT, 1, 22, MPI_COMM_WORLD);
    } else {
        MPI_Status status;
        for (flag = 0; !flag;) MPI_Iprobe(0, 22, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        MPI_Probe(MPI_ANY_SOURCE, 22, MPI_COMM_WORLD, &status);
        MPI_Recv(in, N, MPI_INT, status.MPI_SOURCE, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }

    MPI_Pcontrol(2);
    /* collectives with root 0; 10 ints per rank unless said */
    int counts[2] = {10, 10}, displs[2] = {0, 10};
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Bcast(out, N, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatter(out, 10, MPI_INT, in, 10, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatterv(out, counts, displs, MPI_INT, in, 10, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gather(out, 10, MPI_INT, big, 10, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gatherv(out, 10, MPI_INT, big, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allgather(out, 10, MPI_INT, big, 10, MPI_INT, MPI_COMM_WORLD);
    MPI_Allgatherv(out, 10, MPI_INT, big, counts, displs, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoall(out, 10, MPI_INT, big, 10, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoallv(out, counts, displs, MPI_INT, big, counts, displs, MPI_INT, MPI_COMM_WORLD);
    MPI_Reduce(out, in, N, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Allreduce(out, in, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    sum += checksum(in, N);
    MPI_Reduce_scatter(out, in, counts, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Reduce_scatter_block(out, in, 10, MPI_INT, MPI_PROD, MPI_COMM_WORLD);
    MPI_Scan(out, in, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Exscan(out, in, N, MPI_INT, MPI_BOR, MPI_COMM_WORLD);

    /* communicators: split in reverse order, dup, create from the world group */
    MPI_Comm reversed, dup, created;
    MPI_Group world_group;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Comm_create(MPI_COMM_WORLD, world_group, &created);
    MPI_Group_free(&world_group);
    int one = 1, total = 0;
    MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, reversed);
    MPI_Send(out, 5, MPI_INT, 0, 30, reversed); /* rank 0 of reversed is world rank size-1 */
    if (rank == size - 1)
        for (int i = 0; i < size; i++)
            MPI_Recv(in, 5, MPI_INT, MPI_ANY_SOURCE, 30, reversed, MPI_STATUS_IGNORE);
    MPI_Comm_free(&reversed);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&created);

    /* calls that fail and return their error: recorded as failed, the program goes on */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int bad_send = MPI_Send(out, 1, MPI_INT, size + 5, 40, MPI_COMM_WORLD);
    int bad_bcast = MPI_Bcast(out, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (bad_send == MPI_SUCCESS || bad_bcast == MPI_SUCCESS) printf("an invalid call succeeded\n");

    /* a non-blocking collective: its request gets no COMPLETE record */
    MPI_Request ibarrier;
    MPI_Ibarrier(MPI_COMM_WORLD, &ibarrier);
    MPI_Wait(&ibarrier, MPI_STATUS_IGNORE);
    MPI_Pcontrol(0);

    long all = 0;
    MPI_Reduce(&sum, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("trace_calls checksum %ld total %d\n", all, total);
    MPI_Finalize();
    return 0;
}
