/* The simplest hand-written ping-pong: the reference bench/fidelity.py holds
 * commchar-kernel's pingpong:send against.
 *
 *   mpirun -np 2 simple_pingpong LOOPS SIZE:ITERATIONS [SIZE:ITERATIONS ...]
 *
 * For each size, LOOPS times: ITERATIONS round trips of MPI_Send/MPI_Recv timed
 * as one loop with MPI_Wtime; rank 0 prints "SIZE HALF_ROUND_TRIP_US" per loop.
 * Buffers are like the kernel's (one to send, one to receive, page-aligned), so
 * the comparison isolates the harness: with one buffer for both, MPICH 4.0.2
 * (ch4:ucx) is up to 3x slower at 64 KiB. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *page_buffer(long size)
{
    void *buf = NULL;
    if (posix_memalign(&buf, 4096, size > 0 ? (size_t)size : 1) != 0) MPI_Abort(MPI_COMM_WORLD, 1);
    memset(buf, 1, size > 0 ? (size_t)size : 1);
    return buf;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3) {
        if (rank == 0) fprintf(stderr, "usage: simple_pingpong LOOPS SIZE:ITERATIONS ...\n");
        MPI_Finalize();
        return 2;
    }
    int loops = atoi(argv[1]);
    if (loops < 1) {
        if (rank == 0) fprintf(stderr, "LOOPS '%s' is not a positive number\n", argv[1]);
        MPI_Finalize();
        return 2;
    }
    for (int a = 2; a < argc; a++) {
        long size = 0, iterations = 0;
        if (sscanf(argv[a], "%ld:%ld", &size, &iterations) != 2 || size < 0 || iterations < 1) {
            if (rank == 0) fprintf(stderr, "bad SIZE:ITERATIONS '%s'\n", argv[a]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        char *sbuf = page_buffer(size), *rbuf = page_buffer(size);
        for (int loop = -1; loop < loops; loop++) { /* loop -1 warms up, unreported */
            MPI_Barrier(MPI_COMM_WORLD);
            double start = MPI_Wtime();
            for (long i = 0; i < iterations; i++) {
                if (rank == 0) {
                    MPI_Send(sbuf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                    MPI_Recv(rbuf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == 1) {
                    MPI_Recv(rbuf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(sbuf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
                }
            }
            double elapsed = MPI_Wtime() - start;
            if (rank == 0 && loop >= 0) printf("%ld %.6f\n", size, elapsed / iterations / 2 * 1e6);
        }
        free(sbuf);
        free(rbuf);
    }
    MPI_Finalize();
    return 0;
}
