/* The 2-D halo of apps/halo2d.c at p = 2 taken apart: each iteration MPI_Irecv and MPI_Isend
 * of n bytes with the neighbours the mode names, then MPI_Waitall; each send buffer's first
 * and last 8 bytes stamped with the iteration, each receive buffer's first byte read, as
 * the program does.  Modes: full (two messages to itself and two each way to the other
 * rank, as halo2d), self (the two to itself alone), other (the two to the other rank
 * alone), self1 and other1 (one of each).  The loop is the communication phase
 * (MPI_Pcontrol(3)), so `commchar trace` and `commchar replay --json` give its predicted
 * time.  Rank 0 prints the slowest rank's time per iteration, us.
 *   mpicc.mpich -std=c11 -O2 -o /tmp/halo_parts bench/halo_parts.c && \
 *     chrt -f 10 mpiexec.mpich -n 2 /tmp/halo_parts 32768 5000 full
 * Arguments: bytes (8 or more), iterations, mode. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WEST, EAST, NORTH, SOUTH, DIRECTIONS };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const long n = argc > 1 ? atol(argv[1]) : 0, iterations = argc > 2 ? atol(argv[2]) : 0;
    const char *const mode = argc > 3 ? argv[3] : "";
    const int full = strcmp(mode, "full") == 0, self = strcmp(mode, "self") == 0,
              other = strcmp(mode, "other") == 0, self1 = strcmp(mode, "self1") == 0,
              other1 = strcmp(mode, "other1") == 0;
    if (size != 2 || n < 8 || n > (1L << 30) || iterations < 1 || !(full || self || other || self1 || other1)) {
        if (rank == 0)
            fprintf(stderr, "usage: halo_parts BYTES>=8 ITERATIONS>=1 full|self|other|self1|other1 (2 ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* which directions carry a message: west and east go to the other rank, north and south
     * to the rank itself (a grid one row high) */
    const int used[DIRECTIONS] = {full || other || other1, full || other, full || self || self1, full || self};
    /* the direction whose message arrives from d: its opposite, unless one message each way */
    const int single = self1 || other1;
    const int from[DIRECTIONS] = {single ? WEST : EAST, WEST, single ? NORTH : SOUTH, NORTH};
    const int peer[DIRECTIONS] = {1 - rank, 1 - rank, rank, rank};
    unsigned char *out[DIRECTIONS], *in[DIRECTIONS];
    for (int d = 0; d < DIRECTIONS; d++) {
        out[d] = malloc((size_t)n);
        in[d] = malloc((size_t)n);
        if (!out[d] || !in[d]) MPI_Abort(MPI_COMM_WORLD, 1);
        memset(out[d], d, (size_t)n);
        memset(in[d], 0, (size_t)n);
    }
    unsigned char seen = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(3);
    const double t0 = MPI_Wtime();
    for (long k = 0; k < iterations; k++) {
        MPI_Request q[2 * DIRECTIONS];
        int m = 0;
        for (int d = 0; d < DIRECTIONS; d++)
            if (used[d])
                MPI_Irecv(in[d], (int)n, MPI_BYTE, peer[d], from[d], MPI_COMM_WORLD, &q[m++]);
        for (int d = 0; d < DIRECTIONS; d++) {
            if (!used[d]) continue;
            memcpy(out[d], &k, 8);
            memcpy(out[d] + n - 8, &k, 8);
            MPI_Isend(out[d], (int)n, MPI_BYTE, peer[d], d, MPI_COMM_WORLD, &q[m++]);
        }
        MPI_Waitall(m, q, MPI_STATUSES_IGNORE);
        for (int d = 0; d < DIRECTIONS; d++) seen ^= in[d][0];
    }
    const double t = MPI_Wtime() - t0;
    MPI_Pcontrol(0);
    double slowest = 0.0;
    MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("{\"mode\":\"%s\",\"bytes\":%ld,\"per_iteration_us\":%.4f,\"seen\":%d}\n", mode, n,
               slowest / (double)iterations * 1e6, seen);
    for (int d = 0; d < DIRECTIONS; d++) {
        free(out[d]);
        free(in[d]);
    }
    MPI_Finalize();
    return 0;
}
