/* Page faults a traced loop takes between its MPI calls: 4096 sends to
 * MPI_PROC_NULL (the library returns at once and touches no new memory), the
 * process's minor faults counted before and after.  Traced, every call writes a
 * 64-byte record; a record buffer whose pages were not faulted in beforehand
 * would fault once every 64 records, in the gaps the replay charges as the
 * program's computation.  Prints "trace_faults rank R: F". */
#define _DEFAULT_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <sys/resource.h>

enum { CALLS = 4096 };

static long minor_faults(void)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char byte = 0;
    MPI_Send(&byte, 1, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    long before = minor_faults();
    for (int i = 0; i < CALLS; i++) MPI_Send(&byte, 1, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    long after = minor_faults();
    printf("trace_faults rank %d: %ld\n", rank, after - before);
    MPI_Finalize();
    return 0;
}
