/* What the bench's MPI programs that alternate their variants within one launch share: their
 * start on a pair of ranks, the median of one variant's rounds, and the one-line refusal of
 * bad arguments. Included by
 * path from beside them (bench/place_pingpong.c, bench/cycle_pairs.c): no -I needed. */
#ifndef CC_BENCH_ROUNDS_H
#define CC_BENCH_ROUNDS_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rounds_cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the median of v[0..n), v sorted in place */
static double rounds_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, rounds_cmp);
    return v[n / 2];
}

/* rank 0 says why and how to call `program` on one line; every rank leaves MPI; exit status 2 */
static int rounds_refuse(int rank, const char *program, const char *args, const char *why)
{
    if (rank == 0) fprintf(stderr, "%s: %s (usage: %s)\n", program, why, args);
    MPI_Finalize();
    return 2;
}

/* MPI started, on exactly 2 ranks with at least `least` arguments (argc, the program's name
 * counted): 0 with *rank set, else the exit status of rounds_refuse, `too_few` its reason
 * where the arguments fall short */
static int rounds_pair(int *argc, char ***argv, int least, int *rank, const char *program, const char *args,
                       const char *too_few)
{
    MPI_Init(argc, argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) return rounds_refuse(*rank, program, args, "runs on exactly 2 ranks");
    if (*argc < least) return rounds_refuse(*rank, program, args, too_few);
    return 0;
}

#endif
