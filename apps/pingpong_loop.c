/* Ping-pong loop: ranks 2i and 2i+1 send a message of --bytes back and forth;
 * one iteration is a round trip (an odd last rank idles).
 *   pingpong_loop --bytes N [--iterations K]   (loop_common.h) */
#include "loop_common.h"

typedef struct state {
    uint8_t *out, *in;
    int peer;
} state;

static state st;

static void setup(loop_ctx *c)
{
    size_t n = (size_t)c->bytes;
    st.out = cc_xmalloc(n + 1);
    st.in = cc_xmalloc(n + 1);
    st.peer = c->rank ^ 1;
    if (st.peer >= c->p) st.peer = MPI_PROC_NULL;
    loop_fill(st.out, n, (uint32_t)c->rank, 0);
    c->state = &st;
}

static void iterate(loop_ctx *c, long k)
{
    if (st.peer == MPI_PROC_NULL) return;
    int count = (int)c->bytes;
    if (c->rank % 2 == 0) {
        loop_stamp(st.out, (size_t)count, (uint32_t)c->rank, k);
        CC_MPI(MPI_Send(st.out, count, MPI_BYTE, st.peer, 0, MPI_COMM_WORLD));
        CC_MPI(MPI_Recv(st.in, count, MPI_BYTE, st.peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
        CC_MPI(MPI_Recv(st.in, count, MPI_BYTE, st.peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        loop_stamp(st.out, (size_t)count, (uint32_t)c->rank, k);
        CC_MPI(MPI_Send(st.out, count, MPI_BYTE, st.peer, 0, MPI_COMM_WORLD));
    }
    loop_perturb(c, k, st.in, (size_t)count);
    c->errors += loop_check(st.in, (size_t)count, (uint32_t)st.peer, k, 0);
}

static void finish(loop_ctx *c)
{
    if (st.peer != MPI_PROC_NULL)
        c->errors += loop_check(st.in, (size_t)c->bytes, (uint32_t)st.peer, c->iterations - 1, 1);
    free(st.out);
    free(st.in);
}

int main(int argc, char **argv)
{
    static const loop_program program = {"pingpong_loop", 0, 1, 2, setup, iterate, finish};
    return loop_main(argc, argv, &program);
}
