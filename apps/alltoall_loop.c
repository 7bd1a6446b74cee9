/* MPI_Alltoall loop: each iteration every rank sends --bytes to every rank
 * (its own block included), n the bytes per pair as MPI counts it.
 *   alltoall_loop --bytes N [--iterations K]   (loop_common.h) */
#include "loop_common.h"

static uint8_t *out, *in;

static uint32_t code(const loop_ctx *c, int from, int to) { return (uint32_t)(from * c->p + to); }

static void setup(loop_ctx *c)
{
    size_t n = (size_t)c->bytes;
    out = cc_xmalloc(n * (size_t)c->p + 1);
    in = cc_xmalloc(n * (size_t)c->p + 1);
    for (int to = 0; to < c->p; to++) loop_fill(out + to * n, n, code(c, c->rank, to), 0);
}

static void iterate(loop_ctx *c, long k)
{
    size_t n = (size_t)c->bytes;
    for (int to = 0; to < c->p; to++) loop_stamp(out + to * n, n, code(c, c->rank, to), k);
    CC_MPI(MPI_Alltoall(out, (int)n, MPI_BYTE, in, (int)n, MPI_BYTE, MPI_COMM_WORLD));
    loop_perturb(c, k, in, n * (size_t)c->p);
    for (int from = 0; from < c->p; from++)
        c->errors += loop_check(in + from * n, n, code(c, from, c->rank), k, 0);
}

static void finish(loop_ctx *c)
{
    size_t n = (size_t)c->bytes;
    for (int from = 0; from < c->p; from++)
        c->errors += loop_check(in + from * n, n, code(c, from, c->rank), c->iterations - 1, 1);
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    static const loop_program program = {"alltoall_loop", 0, 1, 1, setup, iterate, finish};
    return loop_main(argc, argv, &program);
}
