/* MPI_Allreduce loop: --bytes of doubles summed over the ranks each iteration.
 *   allreduce_loop --bytes N [--iterations K]   (loop_common.h)
 * Rank r contributes (r+1)(1 + i%7) at element i, and k at element 0 in
 * iteration k: the sums are whole numbers, exact in a double.  Element 0 is
 * checked each iteration, every element after the loop. */
#include "loop_common.h"

static double *mine, *sum;
static long count;

static double expected(const loop_ctx *c, long i, long k)
{
    double ranks = (double)c->p * (c->p + 1) / 2.0;
    return ranks * (double)(1 + i % 7) + (i == 0 ? (double)c->p * (double)k : 0.0);
}

static void setup(loop_ctx *c)
{
    count = c->bytes / 8;
    mine = cc_xmalloc((size_t)count * sizeof *mine);
    sum = cc_xmalloc((size_t)count * sizeof *sum);
    for (long i = 0; i < count; i++) mine[i] = (double)(c->rank + 1) * (double)(1 + i % 7);
}

static void iterate(loop_ctx *c, long k)
{
    mine[0] = (double)(c->rank + 1) + (double)k;
    CC_MPI(MPI_Allreduce(mine, sum, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    if (c->perturb && k == c->iterations - 1) sum[count / 2] += 1.0;
    c->errors += sum[0] != expected(c, 0, k);
}

static void finish(loop_ctx *c)
{
    for (long i = 0; i < count; i++) c->errors += sum[i] != expected(c, i, c->iterations - 1);
    free(mine);
    free(sum);
}

int main(int argc, char **argv)
{
    static const loop_program program = {"allreduce_loop", 8, 8, 1, setup, iterate, finish};
    return loop_main(argc, argv, &program);
}
