/* A small MPI program for replay tests: two phases (MPI_Pcontrol) that mix
 * computation (a timed busy loop) with eager and rendezvous messages, blocking
 * and non-blocking, and an Allreduce.
 *
 *   mpirun -n 2 replay_mix [ITERATIONS] [COMPUTE_US] [LONG_BYTES]
 */
#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Computation that takes `us` microseconds of CPU whatever the compiler does. */
static volatile double sink;
static void compute(double us)
{
    double end = now_us() + us, x = 1.0;
    while (now_us() < end)
        for (int i = 0; i < 64; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iterations = argc > 1 ? atoi(argv[1]) : 50;
    double compute_us = argc > 2 ? atof(argv[2]) : 200.0;
    size_t long_bytes = argc > 3 ? (size_t)atol(argv[3]) : 1u << 20;
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "replay_mix: run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int peer = 1 - rank;
    char *out = calloc(long_bytes, 1), *in = calloc(long_bytes, 1);
    double sum = 0.0;

    MPI_Pcontrol(1); /* phase 1: blocking ping-pong, eager and rendezvous, uneven computation */
    for (int i = 0; i < iterations; i++) {
        size_t n = (i % 2) ? long_bytes : 1024;
        if (rank == 0) {
            compute(compute_us);
            MPI_Send(out, (int)n, MPI_BYTE, peer, i, MPI_COMM_WORLD);
            MPI_Recv(in, (int)n, MPI_BYTE, peer, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(in, (int)n, MPI_BYTE, MPI_ANY_SOURCE, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            compute(compute_us / 2);
            MPI_Send(out, (int)n, MPI_BYTE, peer, i, MPI_COMM_WORLD);
        }
    }
    MPI_Pcontrol(2); /* phase 2: non-blocking exchange overlapped with computation, then a reduction */
    for (int i = 0; i < iterations; i++) {
        size_t n = (i % 2) ? long_bytes : 1024;
        MPI_Request req[2];
        MPI_Status status[2];
        MPI_Irecv(in, (int)n, MPI_BYTE, peer, 1000 + i, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(out, (int)n, MPI_BYTE, peer, 1000 + i, MPI_COMM_WORLD, &req[1]);
        compute(compute_us);
        MPI_Waitall(2, req, status);
        double v = rank + i, r;
        MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        sum += r;
    }
    if (rank == 0)
        printf("replay_mix: %d iterations, checksum %.0f\n", iterations, sum);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
