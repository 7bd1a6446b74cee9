/* What an exchange costs as the buffers it cycles through grow, outside the kernel: ranks 0
 * and 1 MPI_Sendrecv n bytes to each other, each call from and into the next of k pairs of
 * buffers (each buffer on pages of its own, 16 bytes into its first page, as the kernel's
 * `footprint` probe places them), so that a rank's buffers span 2kn bytes. The counts k are
 * alternated in blocks of calls within one launch, rounds times over (so the host's moves land
 * on every k alike), each block after 4k untimed calls. The first k is the reference.
 *   mpicc.mpich -std=c11 -O2 -o /tmp/cycle_pairs bench/cycle_pairs.c && \
 *     chrt -f 10 mpiexec.mpich -n 2 /tmp/cycle_pairs 262144 400 7 1 2 3 4
 * (the same with mpicc.openmpi and mpirun.openmpi). Arguments: bytes, calls a block, rounds,
 * then up to 16 counts k (1 to 256). Prints per k the bytes a rank's buffers span, the median
 * over the rounds of one exchange's time (us, the slower rank's), the smallest and largest,
 * and the median over the rounds of its ratio to the first k's block of the same round. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rounds.h"

enum { MAX_COUNTS = 16, MAX_ROUNDS = 101, MAX_PAIRS = 256, PAGE = 4096, OFFSET = 16 };
#define PROGRAM "cycle_pairs"
#define ARGS "BYTES CALLS ROUNDS K ..."

static int usage(int rank, const char *why) { return rounds_refuse(rank, PROGRAM, ARGS, why); }

/* a buffer of n bytes OFFSET bytes into pages of its own */
static char *place(long n, int fill)
{
    const size_t span = ((size_t)n + OFFSET + PAGE - 1) / PAGE * PAGE;
    char *base = aligned_alloc(PAGE, span);
    if (!base) return NULL;
    memset(base, fill, span);
    return base + OFFSET;
}

int main(int argc, char **argv)
{
    int rank;
    const int refused = rounds_pair(&argc, &argv, 5, &rank, PROGRAM, ARGS, "too few arguments");
    if (refused) return refused;
    const long n = atol(argv[1]), calls = atol(argv[2]);
    const int rounds = atoi(argv[3]), counts = argc - 4;
    if (n < 1 || n > (1L << 30)) return usage(rank, "BYTES must be 1 to 2^30");
    if (calls < 1 || calls > 100000000L) return usage(rank, "CALLS must be 1 to 10^8");
    if (rounds < 1 || rounds > MAX_ROUNDS) return usage(rank, "ROUNDS must be 1 to 101");
    if (counts > MAX_COUNTS) return usage(rank, "at most 16 counts");
    int k[MAX_COUNTS], most = 0;
    for (int i = 0; i < counts; i++) {
        k[i] = atoi(argv[4 + i]);
        if (k[i] < 1 || k[i] > MAX_PAIRS) return usage(rank, "each K must be 1 to 256");
        if (k[i] > most) most = k[i];
    }
    char *send[MAX_PAIRS], *recv[MAX_PAIRS];
    for (int j = 0; j < most; j++) {
        send[j] = place(n, j + 1);
        recv[j] = place(n, 0);
        if (!send[j] || !recv[j]) return usage(rank, "out of memory");
    }
    static double times[MAX_COUNTS][MAX_ROUNDS], ratios[MAX_COUNTS][MAX_ROUNDS];
    const int peer = 1 - rank;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < counts; i++) {
            for (long c = 0; c < 4L * k[i]; c++)
                MPI_Sendrecv(send[c % k[i]], (int)n, MPI_BYTE, peer, 0, recv[c % k[i]], (int)n, MPI_BYTE, peer,
                             0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Barrier(MPI_COMM_WORLD);
            const double t0 = MPI_Wtime();
            for (long c = 0; c < calls; c++)
                MPI_Sendrecv(send[c % k[i]], (int)n, MPI_BYTE, peer, 0, recv[c % k[i]], (int)n, MPI_BYTE, peer,
                             0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            const double mine = (MPI_Wtime() - t0) / (double)calls * 1e6;
            MPI_Allreduce(&mine, &times[i][r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        }
        for (int i = 0; i < counts; i++) ratios[i][r] = times[i][r] / times[0][r];
    }
    if (rank == 0) {
        printf("%5s %12s %12s %18s %8s\n", "pairs", "a rank, MiB", "median us", "smallest..largest", "ratio");
        for (int i = 0; i < counts; i++) {
            double sorted[MAX_ROUNDS];
            memcpy(sorted, times[i], sizeof(double) * (size_t)rounds);
            qsort(sorted, (size_t)rounds, sizeof(double), rounds_cmp);
            printf("%5d %12.3f %12.3f %8.3f..%-9.3f %8.3f\n", k[i], 2.0 * k[i] * (double)n / 1048576.0,
                   sorted[rounds / 2], sorted[0], sorted[rounds - 1], rounds_median(ratios[i], rounds));
        }
    }
    MPI_Finalize();
    return 0;
}
