#include "cc_prewarm.h"

#include <stdlib.h>
#include <string.h>

#include "cc_errors.h"

/* CC_PREWARM_ROUNDS exchanges: each rank sends to `to` and receives from `from` */
static void cc_prewarm_ring(MPI_Comm comm, int to, int from, unsigned char *out, unsigned char *in)
{
    for (int k = 0; k < CC_PREWARM_ROUNDS; k++)
        CC_MPI(MPI_Sendrecv(out, CC_PREWARM_BYTES, MPI_BYTE, to, CC_TAG_DATA, in, CC_PREWARM_BYTES, MPI_BYTE,
                            from, CC_TAG_DATA, comm, MPI_STATUS_IGNORE));
}

double cc_prewarm(const cc_env *env)
{
    const int64_t began = cc_now_ns();
    const int p = env->world_size, me = env->world_rank;
    if (p < 2) return 0.0;
    unsigned char *out = cc_xmalloc(CC_PREWARM_BYTES), *in = cc_xmalloc(CC_PREWARM_BYTES);
    memset(out, me & 0xff, CC_PREWARM_BYTES);
    memset(in, 0, CC_PREWARM_BYTES);
    cc_prewarm_ring(env->all, (me + 1) % p, (me + p - 1) % p, out, in);
    if (p > 2 && env->pair != MPI_COMM_NULL) cc_prewarm_ring(env->pair, 1 - me, 1 - me, out, in);
    free(out);
    free(in);
    CC_MPI(MPI_Barrier(env->all_ctl));
    return (double)(cc_now_ns() - began) * 1e-9;
}
