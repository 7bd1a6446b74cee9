/* What a message costs when its sender has just written its buffer, outside the kernel:
 * ranks 0 and 1 ping-pong with MPI_Send and MPI_Recv (or exchange with MPI_Sendrecv, or
 * with MPI_Irecv, MPI_Isend and MPI_Waitall) from buffers 16 bytes into their pages, each
 * rank storing into its send buffer before each send nothing (clean), a new value into its
 * first and last byte (ends) or into every byte (whole, memset); the MPI calls are timed
 * alone (the stores excluded), the three variants alternated per size, rounds times over.
 *   mpicc.mpich -std=c11 -O2 -o /tmp/written_pingpong bench/written_pingpong.c && \
 *     chrt -f 10 mpirun.mpich -np 2 /tmp/written_pingpong 4000 3 pingpong
 * (the same with mpicc.openmpi and mpirun.openmpi). Arguments: iterations per point (an
 * eighth of them at 256 KiB), rounds, pingpong | sendrecv | isend. Prints per round,
 * variant and size the MPI calls' time per round trip or exchange and the loop's (stores
 * included), us. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const long sizes[] = {4096, 32768, 262144};
    const char *const variants[] = {"clean", "ends", "whole"};
    const int iterations = argc > 1 ? atoi(argv[1]) : 4000, rounds = argc > 2 ? atoi(argv[2]) : 3;
    const char *const pattern = argc > 3 ? argv[3] : "pingpong";
    const int sendrecv = strcmp(pattern, "sendrecv") == 0, isend = strcmp(pattern, "isend") == 0;
    const size_t span = (1u << 20) + 8192;
    unsigned char *s0 = NULL, *r0 = NULL;
    if (iterations < 8 || rounds < 1 || !(sendrecv || isend || strcmp(pattern, "pingpong") == 0)
        || posix_memalign((void **)&s0, 4096, span) || posix_memalign((void **)&r0, 4096, span)) {
        if (rank == 0)
            fprintf(stderr, "usage: written_pingpong ITERATIONS>=8 ROUNDS>=1 [pingpong|sendrecv|isend]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(s0, 1, span);
    memset(r0, 2, span);
    unsigned char *sb = s0 + 16, *rb = r0 + 16;
    const int peer = 1 - rank, warm = 50;
    for (int round = 0; round < rounds; round++)
        for (int si = 0; si < 3; si++)
            for (int v = 0; v < 3; v++) {
                const int n = (int)sizes[si], count = n >= 262144 ? iterations / 8 : iterations;
                double calls = 0, loop0 = 0;
                MPI_Barrier(MPI_COMM_WORLD);
                for (int k = 0; k < warm + count; k++) {
                    if (k == warm) {
                        calls = 0;
                        loop0 = now_us();
                    }
                    if (v == 1) sb[0] = sb[n - 1] = (unsigned char)k;
                    else if (v == 2) memset(sb, k, (size_t)n);
                    const double t = now_us();
                    if (sendrecv) {
                        MPI_Sendrecv(sb, n, MPI_BYTE, peer, 0, rb, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD,
                                     MPI_STATUS_IGNORE);
                    } else if (isend) {
                        MPI_Request q[2];
                        MPI_Status done[2];
                        MPI_Irecv(rb, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &q[0]);
                        MPI_Isend(sb, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &q[1]);
                        MPI_Waitall(2, q, done);
                    } else if (rank == 0) {
                        MPI_Send(sb, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
                        MPI_Recv(rb, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    } else {
                        MPI_Recv(rb, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                        MPI_Send(sb, n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
                    }
                    calls += now_us() - t;
                }
                const double loop = now_us() - loop0;
                if (rank == 0)
                    printf("round %d %-5s %7d B: calls %.3f us, loop %.3f us a %s\n", round, variants[v], n,
                           calls / count, loop / count, sendrecv || isend ? "exchange" : "round trip");
            }
    free(s0);
    free(r0);
    MPI_Finalize();
    return 0;
}
