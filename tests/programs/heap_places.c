/* Where buffers malloc'ed after MPI_Init lie in their pages: one line per rank,
 *   heap_places rank R: P1 P2 ...
 * A traced run must print what an untraced run prints (the tracer allocates
 * nothing from the program's heap and makes no MPI call of its own before
 * MPI_Finalize).  The sizes are those of the validation programs' buffers. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    static const size_t sizes[] = {65537, 65537, 32768, 32768, 4097, 4097, 1000};
    enum { K = sizeof sizes / sizeof sizes[0] };
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *buf[K];
    char line[256];
    int at = snprintf(line, sizeof line, "heap_places rank %d:", rank);
    for (int i = 0; i < K; i++) {
        buf[i] = malloc(sizes[i]);
        if (!buf[i]) MPI_Abort(MPI_COMM_WORLD, 1);
        memset(buf[i], i, sizes[i]);
        at += snprintf(line + at, sizeof line - (size_t)at, " %u",
                       (unsigned)((uintptr_t)buf[i] % 4096));
    }
    /* the first collective after the buffers: a library's lazy allocations come here */
    double mine = rank, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    puts(line);
    for (int i = 0; i < K; i++) free(buf[i]);
    MPI_Finalize();
    return 0;
}
