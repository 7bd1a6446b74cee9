/* What the place of a message's destination relative to its source costs, outside the
 * kernel: ranks 0 and 1 ping-pong with MPI_Send and MPI_Recv from a send buffer S bytes
 * into its page into a receive buffer R bytes into its own, both ranks placing theirs
 * alike, each place pair a block of round trips, the pairs alternated, rounds times over
 * (so the host's moves land on every pair alike). The first pair is the reference.
 *   mpicc.mpich -std=c11 -O2 -o /tmp/place_pingpong bench/place_pingpong.c && \
 *     chrt -f 10 mpirun.mpich -np 2 /tmp/place_pingpong 32768 1000 9 16:16 16:32 16:64 16:80 16:96
 * (the same with mpicc.openmpi and mpirun.openmpi). Arguments: bytes, round trips a block,
 * rounds, then up to 32 places S:R (0 to 4095 each). Prints per pair the distance (R - S
 * modulo 4096), the median over the rounds of a round trip's time (us), the smallest and
 * largest, and the median over the rounds of its ratio to the first pair's block of the
 * same round. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rounds.h"

enum { MAX_PLACES = 32, MAX_ROUNDS = 101, PAGE = 4096 };
#define PROGRAM "place_pingpong"
#define ARGS "BYTES ITERS ROUNDS S:R ..."

static int usage(int rank, const char *why) { return rounds_refuse(rank, PROGRAM, ARGS, why); }

int main(int argc, char **argv)
{
    int rank;
    const int refused = rounds_pair(&argc, &argv, 5, &rank, PROGRAM, ARGS,
                                    "give the bytes, the round trips a block, the rounds and a place");
    if (refused) return refused;
    const long n = atol(argv[1]);
    const int iterations = atoi(argv[2]), rounds = atoi(argv[3]), places = argc - 4;
    if (n < 1 || n > (1L << 26)) return usage(rank, "bytes must be 1 to 64 MiB");
    if (iterations < 1 || rounds < 1 || rounds > MAX_ROUNDS) return usage(rank, "iterations >= 1, rounds 1 to 101");
    if (places > MAX_PLACES) return usage(rank, "at most 32 places");
    int at[MAX_PLACES][2];
    unsigned char *buf[MAX_PLACES][2];
    for (int p = 0; p < places; p++) {
        char tail;
        if (sscanf(argv[4 + p], "%d:%d%c", &at[p][0], &at[p][1], &tail) != 2 || at[p][0] < 0 ||
            at[p][0] >= PAGE || at[p][1] < 0 || at[p][1] >= PAGE)
            return usage(rank, "a place is S:R, each 0 to 4095");
        for (int k = 0; k < 2; k++) {
            void *page = NULL;
            if (posix_memalign(&page, PAGE, (size_t)n + PAGE) != 0) return usage(rank, "out of memory");
            memset(page, k == 0 ? rank + 1 : 0, (size_t)n + PAGE);
            buf[p][k] = (unsigned char *)page + at[p][k];
        }
    }
    static double t[MAX_PLACES][MAX_ROUNDS], ratio[MAX_PLACES][MAX_ROUNDS];
    const int peer = 1 - rank;
    for (int r = 0; r < rounds; r++)
        for (int p = 0; p < places; p++) {
            MPI_Barrier(MPI_COMM_WORLD);
            const double t0 = MPI_Wtime();
            for (int k = 0; k < iterations; k++) {
                if (rank == 0) {
                    MPI_Send(buf[p][0], (int)n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
                    MPI_Recv(buf[p][1], (int)n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(buf[p][1], (int)n, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf[p][0], (int)n, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
                }
            }
            t[p][r] = (MPI_Wtime() - t0) / iterations * 1e6;
        }
    if (rank == 0) {
        printf("%ld bytes, %d round trips a block, %d rounds\n", n, iterations, rounds);
        printf("%-11s %8s %12s %18s %10s\n", "send:recv", "ahead", "us (median)", "smallest..largest", "/ first");
        for (int p = 0; p < places; p++) /* before any median sorts a pair's times */
            for (int r = 0; r < rounds; r++) ratio[p][r] = t[p][r] / t[0][r];
        for (int p = 0; p < places; p++) {
            const double mid = rounds_median(t[p], rounds), rel = rounds_median(ratio[p], rounds);
            printf("%4d:%-6d %8d %12.3f %8.3f..%-8.3f %10.3f\n", at[p][0], at[p][1],
                   ((at[p][1] - at[p][0]) % PAGE + PAGE) % PAGE, mid, t[p][0], t[p][rounds - 1], rel);
        }
    }
    MPI_Finalize();
    return 0;
}
