/* 2-D halo exchange: the ranks on a periodic rows x cols grid (cols the
 * largest divisor of p up to sqrt(p)... p = 2 gives 1 x 2), each iteration
 * MPI_Irecv from and MPI_Isend of --bytes to each of its 4 neighbours (west,
 * east, north, south), then MPI_Waitall.  On a grid one rank wide a neighbour
 * is the rank itself; at p = 2 west and east are the other rank, told apart by
 * the tag (the direction the message travels).
 *   halo2d --bytes N [--iterations K]   (loop_common.h) */
#include "loop_common.h"

enum { WEST, EAST, NORTH, SOUTH, DIRECTIONS };
static const int opposite[DIRECTIONS] = {EAST, WEST, SOUTH, NORTH};

static uint8_t *out[DIRECTIONS], *in[DIRECTIONS];
static int neighbour[DIRECTIONS];

static void setup(loop_ctx *c)
{
    int rows = 1;
    for (int d = 1; d * d <= c->p; d++)
        if (c->p % d == 0) rows = d;
    int cols = c->p / rows, row = c->rank / cols, col = c->rank % cols;
    neighbour[WEST] = row * cols + (col + cols - 1) % cols;
    neighbour[EAST] = row * cols + (col + 1) % cols;
    neighbour[NORTH] = ((row + rows - 1) % rows) * cols + col;
    neighbour[SOUTH] = ((row + 1) % rows) * cols + col;
    for (int d = 0; d < DIRECTIONS; d++) {
        out[d] = cc_xmalloc((size_t)c->bytes + 1);
        in[d] = cc_xmalloc((size_t)c->bytes + 1);
        loop_fill(out[d], (size_t)c->bytes, (uint32_t)(c->rank * DIRECTIONS + d), 0);
    }
}

/* the message that arrives from direction d was sent towards the opposite one */
static uint32_t incoming(int d) { return (uint32_t)(neighbour[d] * DIRECTIONS + opposite[d]); }

static void iterate(loop_ctx *c, long k)
{
    int count = (int)c->bytes;
    MPI_Request requests[2 * DIRECTIONS];
    for (int d = 0; d < DIRECTIONS; d++)
        CC_MPI(MPI_Irecv(in[d], count, MPI_BYTE, neighbour[d], opposite[d], MPI_COMM_WORLD,
                         &requests[d]));
    for (int d = 0; d < DIRECTIONS; d++) {
        loop_stamp(out[d], (size_t)count, (uint32_t)(c->rank * DIRECTIONS + d), k);
        CC_MPI(MPI_Isend(out[d], count, MPI_BYTE, neighbour[d], d, MPI_COMM_WORLD,
                         &requests[DIRECTIONS + d]));
    }
    CC_MPI(MPI_Waitall(2 * DIRECTIONS, requests, cc_statuses_ignore));
    loop_perturb(c, k, in[0], (size_t)count);
    for (int d = 0; d < DIRECTIONS; d++)
        c->errors += loop_check(in[d], (size_t)count, incoming(d), k, 0);
}

static void finish(loop_ctx *c)
{
    for (int d = 0; d < DIRECTIONS; d++) {
        c->errors += loop_check(in[d], (size_t)c->bytes, incoming(d), c->iterations - 1, 1);
        free(out[d]);
        free(in[d]);
    }
}

int main(int argc, char **argv)
{
    static const loop_program program = {"halo2d", 0, 1, 1, setup, iterate, finish};
    return loop_main(argc, argv, &program);
}
