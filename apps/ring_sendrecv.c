/* Ring exchange with MPI_Sendrecv: each iteration every rank sends --bytes to
 * rank+1 and receives as many from rank-1 (at p = 2 both ranks exchange at once).
 *   ring_sendrecv --bytes N [--iterations K]   (loop_common.h) */
#include "loop_common.h"

static uint8_t *out, *in;
static int right, left;

static void setup(loop_ctx *c)
{
    out = cc_xmalloc((size_t)c->bytes + 1);
    in = cc_xmalloc((size_t)c->bytes + 1);
    right = (c->rank + 1) % c->p;
    left = (c->rank + c->p - 1) % c->p;
    loop_fill(out, (size_t)c->bytes, (uint32_t)c->rank, 0);
}

static void iterate(loop_ctx *c, long k)
{
    int count = (int)c->bytes;
    loop_stamp(out, (size_t)count, (uint32_t)c->rank, k);
    CC_MPI(MPI_Sendrecv(out, count, MPI_BYTE, right, 1, in, count, MPI_BYTE, left, 1,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    loop_perturb(c, k, in, (size_t)count);
    c->errors += loop_check(in, (size_t)count, (uint32_t)left, k, 0);
}

static void finish(loop_ctx *c)
{
    c->errors += loop_check(in, (size_t)c->bytes, (uint32_t)left, c->iterations - 1, 1);
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    static const loop_program program = {"ring_sendrecv", 0, 1, 2, setup, iterate, finish};
    return loop_main(argc, argv, &program);
}
