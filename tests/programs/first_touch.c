/* Receives into never-touched and into touched memory, for the tracer's cold-byte
 * count (tests/test_first_touch_trace.py).  Run with 2 ranks; rank 1 receives:
 *   Recv of 1 MiB into a fresh mapping            cold 1 MiB
 *   Recv of 1 MiB into the same mapping, now touched   cold 0
 *   Recv of 1 MiB into a mapping whose first half is touched   cold 512 KiB
 *   Recv of 16 KiB into a fresh mapping            not counted (under 64 KiB)
 *   Irecv of 256 KiB into a fresh mapping          cold 256 KiB
 *   Sendrecv receiving 128 KiB into a fresh mapping   cold 128 KiB
 * then both ranks Scatter 2 x 512 KiB from rank 0 into fresh mappings (cold 512 KiB
 * at each, the root's own part too) and Bcast 256 KiB into a fresh mapping at rank 1
 * (cold 256 KiB) and a touched one at rank 0 (the root: not counted).
 * Every received byte is checked; rank 1 prints "first_touch ok". */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { KIB = 1024, MIB = 1024 * 1024 };

static unsigned char *fresh(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "first_touch: mmap failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

static void fill(unsigned char *b, size_t n, int salt)
{
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)((i * 7 + (size_t)salt) % 251 + 1);
}

static int bad(const unsigned char *b, size_t n, int salt)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (unsigned char)((i * 7 + (size_t)salt) % 251 + 1)) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "first_touch: run with 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    int errors = 0;
    unsigned char *src = malloc(MIB);
    fill(src, MIB, 1);
    if (rank == 0) {
        for (int k = 0; k < 4; k++)
            MPI_Send(src, k == 3 ? 16 * KIB : MIB, MPI_BYTE, 1, k, MPI_COMM_WORLD);
        MPI_Send(src, 256 * KIB, MPI_BYTE, 1, 4, MPI_COMM_WORLD);
        unsigned char *in = fresh(128 * KIB);
        MPI_Sendrecv(src, 128 * KIB, MPI_BYTE, 1, 5, in, 128 * KIB, MPI_BYTE, 1, 5, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        errors += bad(in, 128 * KIB, 1);
    } else {
        unsigned char *a = fresh(MIB);
        MPI_Recv(a, MIB, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        errors += bad(a, MIB, 1);
        MPI_Recv(a, MIB, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        errors += bad(a, MIB, 1);
        unsigned char *half = fresh(MIB);
        memset(half, 0, MIB / 2);
        MPI_Recv(half, MIB, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        errors += bad(half, MIB, 1);
        unsigned char *small = fresh(16 * KIB);
        MPI_Recv(small, 16 * KIB, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        errors += bad(small, 16 * KIB, 1);
        unsigned char *later = fresh(256 * KIB);
        MPI_Request req;
        MPI_Irecv(later, 256 * KIB, MPI_BYTE, 0, 4, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        errors += bad(later, 256 * KIB, 1);
        unsigned char *in = fresh(128 * KIB);
        MPI_Sendrecv(src, 128 * KIB, MPI_BYTE, 0, 5, in, 128 * KIB, MPI_BYTE, 0, 5, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        errors += bad(in, 128 * KIB, 1);
    }
    unsigned char *part = fresh(512 * KIB);
    MPI_Scatter(src, 512 * KIB, MPI_BYTE, part, 512 * KIB, MPI_BYTE, 0, MPI_COMM_WORLD);
    errors += bad(part, 512 * KIB, 1 + (rank ? 512 * KIB * 7 % 251 : 0));
    unsigned char *bc = rank == 0 ? src : fresh(256 * KIB);
    MPI_Bcast(bc, 256 * KIB, MPI_BYTE, 0, MPI_COMM_WORLD);
    errors += bad(bc, 256 * KIB, 1);
    int total = 0;
    MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 1, MPI_COMM_WORLD);
    if (rank == 1) printf(total ? "first_touch: %d wrong buffers\n" : "first_touch ok\n", total);
    free(src);
    MPI_Finalize();
    return total != 0;
}
