/* Ring exchange with MPI_Sendrecv_replace: each iteration every rank sends its
 * buffer to rank+1 and replaces it with rank-1's, so the data goes round the
 * ring; the sender restamps it each iteration with its own rank.
 *   ring_replace --bytes N [--iterations K]   (loop_common.h)
 * After K iterations a rank's body is the one rank - K started with; its
 * stamps are rank-1's of the last iteration.  The body's pattern is checked
 * apart from the stamps: the message code is the body's origin there. */
#include <string.h>

#include "loop_common.h"

static uint8_t *buf, *expect;
static int right, left;

static void setup(loop_ctx *c)
{
    buf = cc_xmalloc((size_t)c->bytes + 1);
    expect = cc_xmalloc((size_t)c->bytes + 1);
    right = (c->rank + 1) % c->p;
    left = (c->rank + c->p - 1) % c->p;
    loop_fill(buf, (size_t)c->bytes, (uint32_t)c->rank, 0);
}

static void iterate(loop_ctx *c, long k)
{
    int count = (int)c->bytes;
    loop_stamp(buf, (size_t)count, (uint32_t)c->rank, k);
    CC_MPI(MPI_Sendrecv_replace(buf, count, MPI_BYTE, right, 2, left, 2, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
    loop_perturb(c, k, buf, (size_t)count);
    c->errors += loop_check(buf, (size_t)count, (uint32_t)left, k, 0);
}

static void finish(loop_ctx *c)
{
    size_t n = (size_t)c->bytes;
    int origin = (int)(((long)c->rank - c->iterations % c->p + c->p) % c->p);
    /* the body of the origin's message, the stamps of the left neighbour's last */
    loop_fill(expect, n, (uint32_t)origin, 0);
    loop_stamp(expect, n, (uint32_t)left, c->iterations - 1);
    for (size_t i = 0; i < n; i++) c->errors += buf[i] != expect[i];
    free(buf);
    free(expect);
}

int main(int argc, char **argv)
{
    static const loop_program program = {"ring_replace", 0, 1, 2, setup, iterate, finish};
    return loop_main(argc, argv, &program);
}
