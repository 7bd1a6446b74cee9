/* A derived datatype's cost: ping-pong and broadcast of a strided vector,
 * MPI_Type_vector(n/8, 8, 16, MPI_BYTE): n bytes of payload in blocks of 8
 * every 16 bytes (half the extent is gaps), so the library packs or sends
 * scattered blocks.  Compare with `pingpong:send` and `bcast` of n contiguous
 * bytes for the price of the layout. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "cc_op_data.h"
#include "cc_ops_mpi.h"
#include "cc_verify.h"

enum { CC_DDT_BLOCK = 8, CC_DDT_STRIDE = 16 };

static const char *cc_ddt_size(size_t n, int p, int variant, char *why, size_t whylen)
{
    (void)variant;
    if (p < 2) {
        snprintf(why, whylen, "needs at least 2 processes");
        return why;
    }
    if (n % CC_DDT_BLOCK != 0) {
        snprintf(why, whylen, "%zu bytes is not a whole number of %d-byte blocks", n, CC_DDT_BLOCK);
        return why;
    }
    if (n > INT_MAX / 2) {
        snprintf(why, whylen, "%zu bytes is too large for one vector", n);
        return why;
    }
    return NULL;
}

static size_t cc_ddt_extent(size_t n)
{
    return n ? (n / CC_DDT_BLOCK - 1) * CC_DDT_STRIDE + CC_DDT_BLOCK : 0;
}

static void cc_ddt_setup(cc_point *pt)
{
    MPI_Datatype *vec = cc_xmalloc(sizeof *vec);
    CC_MPI(MPI_Type_vector((int)(pt->n / CC_DDT_BLOCK), CC_DDT_BLOCK, CC_DDT_STRIDE, MPI_BYTE, vec));
    CC_MPI(MPI_Type_commit(vec));
    pt->attached = vec;
    pt->sbuf_len = pt->rbuf_len = cc_ddt_extent(pt->n);
    pt->sbuf = cc_buffer_alloc(pt, pt->sbuf_len);
    pt->rbuf = cc_recv_buffer_alloc(pt, pt->rbuf_len);
    pt->check_off = 0; /* an injected corruption must hit payload: the first block */
    pt->check_len = pt->n ? CC_DDT_BLOCK : 0;
    pt->timed = 1;
    pt->scale = 1.0;
}

static void cc_ddt_cleanup(cc_point *pt)
{
    MPI_Datatype *vec = pt->attached;
    CC_MPI(MPI_Type_free(vec));
    free(vec);
    cc_buffer_free(pt, pt->sbuf);
    cc_buffer_free(pt, pt->rbuf);
    pt->sbuf = pt->rbuf = NULL;
    pt->attached = NULL;
}

/* payload byte i (in order) of src sits at block i/8, offset i%8 */
static void cc_ddt_fill_payload(unsigned char *buf, size_t n, int src, int seed, int poison)
{
    cc_fill_bytes_strided(buf, n, CC_DDT_BLOCK, CC_DDT_STRIDE, src, seed, poison);
}

static int cc_ddt_check_payload(const cc_point *pt, const unsigned char *buf, int src, char *err, size_t errlen)
{
    return cc_check_bytes_strided(buf, pt->n, CC_DDT_BLOCK, CC_DDT_STRIDE, src, pt->seed, pt->rank, err, errlen);
}

/* ---- ddt_pingpong: ranks 0 and 1, half a round trip ---------------------- */

static void cc_ddt_pingpong_setup(cc_point *pt)
{
    cc_ddt_setup(pt);
    pt->timed = pt->rank == 0;
    pt->scale = 0.5;
}

static void cc_ddt_pingpong_run(cc_point *pt, long count)
{
    const MPI_Datatype vec = *(MPI_Datatype *)pt->attached;
    const int peer = 1 - pt->rank;
    for (long k = 0; k < count; k++) {
        if (pt->rank == 0) {
            CC_MPI(MPI_Send(pt->sbuf, 1, vec, peer, CC_TAG_DATA, pt->comm));
            CC_MPI(MPI_Recv(pt->rbuf, 1, vec, peer, CC_TAG_DATA, pt->comm, MPI_STATUS_IGNORE));
        } else {
            CC_MPI(MPI_Recv(pt->rbuf, 1, vec, peer, CC_TAG_DATA, pt->comm, MPI_STATUS_IGNORE));
            CC_MPI(MPI_Send(pt->sbuf, 1, vec, peer, CC_TAG_DATA, pt->comm));
        }
    }
}

static void cc_ddt_pingpong_fill(cc_point *pt)
{
    cc_ddt_fill_payload(pt->sbuf, pt->n, pt->rank, pt->seed, 0);
    cc_ddt_fill_payload(pt->rbuf, pt->n, 1 - pt->rank, pt->seed, 1);
}

static int cc_ddt_pingpong_check(const cc_point *pt, char *err, size_t errlen)
{
    return cc_ddt_check_payload(pt, pt->rbuf, 1 - pt->rank, err, errlen);
}

const cc_op cc_op_ddt_pingpong = {
    .name = "ddt_pingpong", .scope = CC_SCOPE_PAIR, .phases = 1, .check_size = cc_ddt_size,
    .setup = cc_ddt_pingpong_setup, .run = cc_ddt_pingpong_run, .fill = cc_ddt_pingpong_fill,
    .check = cc_ddt_pingpong_check, .cleanup = cc_ddt_cleanup,
};

/* ---- ddt_bcast: from rank 0, into the same layout everywhere ------------- */

static void cc_ddt_bcast_run(cc_point *pt, long count)
{
    const MPI_Datatype vec = *(MPI_Datatype *)pt->attached;
    for (long k = 0; k < count; k++) CC_MPI(MPI_Bcast(pt->rbuf, 1, vec, 0, pt->comm));
}

static void cc_ddt_bcast_fill(cc_point *pt)
{
    cc_ddt_fill_payload(pt->rbuf, pt->n, 0, pt->seed, pt->rank != 0);
}

static int cc_ddt_bcast_check(const cc_point *pt, char *err, size_t errlen)
{
    return pt->rank == 0 ? 0 : cc_ddt_check_payload(pt, pt->rbuf, 0, err, errlen);
}

const cc_op cc_op_ddt_bcast = {
    .name = "ddt_bcast", .scope = CC_SCOPE_ALL, .phases = 1, .check_size = cc_ddt_size,
    .setup = cc_ddt_setup, .run = cc_ddt_bcast_run, .fill = cc_ddt_bcast_fill, .check = cc_ddt_bcast_check,
    .cleanup = cc_ddt_cleanup,
};
