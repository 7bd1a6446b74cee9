/* What the tracer costs, measured by bench/trace_overhead.py (run once
 * untraced and once traced, alternately):
 *
 *   trace_overhead iprobe COUNT    COUNT MPI_Iprobe calls that find nothing
 *   trace_overhead selfsend COUNT  COUNT x (0-byte Irecv + Isend to itself + Waitall)
 *   trace_overhead app ITERATIONS  an application-like loop: ~200 us of computation,
 *                                  a 64 KiB exchange with the neighbours, and an
 *                                  Allreduce every 10 iterations
 *
 * Rank 0 prints "ns_per_call X" (the loop's time over its MPI calls) and
 * "loop_s Y", the loop's wall time. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_timer.h"

static void compute(double *v, int n, int64_t ns)
{
    int64_t end = cc_now_ns() + ns;
    while (cc_now_ns() < end)
        for (int i = 1; i < n; i++) v[i] = 0.5 * (v[i] + v[i - 1]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3) {
        if (rank == 0) fprintf(stderr, "usage: trace_overhead iprobe|selfsend|app COUNT\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *mode = argv[1];
    long count = atol(argv[2]);
    long calls = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t t0 = cc_now_ns();
    if (strcmp(mode, "iprobe") == 0) {
        int flag;
        for (long i = 0; i < count; i++)
            MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        calls = count;
    } else if (strcmp(mode, "selfsend") == 0) {
        MPI_Request reqs[2];
        char byte = 0;
        for (long i = 0; i < count; i++) {
            MPI_Irecv(&byte, 0, MPI_CHAR, rank, 7, MPI_COMM_WORLD, &reqs[0]);
            MPI_Isend(&byte, 0, MPI_CHAR, rank, 7, MPI_COMM_WORLD, &reqs[1]);
            MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
        }
        calls = 3 * count;
    } else {
        enum { HALO = 8192 }; /* doubles: 64 KiB */
        double *send = calloc(2 * HALO, sizeof *send), *recv = calloc(2 * HALO, sizeof *recv);
        double work[256] = {1.0}, local = 1.0, global;
        int left = (rank + size - 1) % size, right = (rank + 1) % size;
        for (long i = 0; i < count; i++) {
            compute(work, 256, 200000);
            MPI_Request reqs[4];
            MPI_Irecv(recv, HALO, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &reqs[0]);
            MPI_Irecv(recv + HALO, HALO, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &reqs[1]);
            MPI_Isend(send, HALO, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &reqs[2]);
            MPI_Isend(send + HALO, HALO, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &reqs[3]);
            MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
            calls += 5;
            if (i % 10 == 9) {
                MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                calls++;
            }
        }
        free(send);
        free(recv);
    }
    int64_t t1 = cc_now_ns();
    double mine = (double)(t1 - t0), slowest;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("ns_per_call %.2f\nloop_s %.6f\n", mine / (double)(calls ? calls : 1),
               slowest / 1e9);
    MPI_Finalize();
    return 0;
}
