/* The table of every operation a plan can name: where the transports' operations
 * (mpi/, am/, pvm/) meet the one measurement loop (core/), which finds them here
 * by name (cc_op_find, cc_op.h). */
#include <stdio.h>
#include <string.h>

#include "cc_ops_am.h"
#include "cc_ops_mpi.h"
#ifdef CC_WITH_PVM
#include "cc_ops_pvm.h"
#endif

static const cc_op *const cc_all_ops[] = {
    &cc_op_pingpong, &cc_op_bw,        &cc_op_bibw,      &cc_op_rndv,      &cc_op_loggp,
    &cc_op_barrier,  &cc_op_bcast,     &cc_op_scatter,   &cc_op_gather,    &cc_op_allgather,
    &cc_op_alltoall, &cc_op_reduce,    &cc_op_allreduce, &cc_op_reduce_scatter, &cc_op_scan,
    &cc_op_am_rtt,   &cc_op_am_store,  &cc_op_am_get,    &cc_op_am_pipe,   &cc_op_am_exchange,
    &cc_op_am_cost,  &cc_op_am_loss,
    &cc_op_put,      &cc_op_get,       &cc_op_acc,
    &cc_op_ibcast,   &cc_op_iallreduce, &cc_op_ialltoall, &cc_op_iallgather,
    &cc_op_neighbor_allgather, &cc_op_neighbor_alltoall, &cc_op_ddt_pingpong, &cc_op_ddt_bcast,
    &cc_op_pbcast,   &cc_op_pallreduce, &cc_op_partitioned, &cc_op_coldstart, &cc_op_mbw, &cc_op_touch,
    &cc_op_exchange, &cc_op_footprint, &cc_op_skew,  &cc_op_noise,     &cc_op_collstart, &cc_op_post,
    &cc_op_written,
#ifdef CC_WITH_PVM
    CC_PVM_OPS /* PVM's operations (pvm/) */
#endif
};

enum { CC_NOPS = sizeof cc_all_ops / sizeof cc_all_ops[0] };

const cc_op *cc_op_find(const char *name)
{
    for (size_t i = 0; i < CC_NOPS; i++)
        if (strcmp(cc_all_ops[i]->name, name) == 0) return cc_all_ops[i];
    return NULL;
}

int cc_op_variant(const cc_op *op, const char *variant)
{
    if (!op->variants) return variant[0] == '\0' ? 0 : -1;
    for (int i = 0; op->variants[i]; i++)
        if (strcmp(op->variants[i], variant) == 0) return i;
    return -1;
}

static void cc_join(char *out, size_t outlen, const char *const *names, size_t count)
{
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < count && at < outlen; i++)
        at += (size_t)snprintf(out + at, outlen - at, "%s%s", i ? ", " : "", names[i]);
}

void cc_op_list(char *out, size_t outlen)
{
    const char *names[CC_NOPS];
    for (size_t i = 0; i < CC_NOPS; i++) names[i] = cc_all_ops[i]->name;
    cc_join(out, outlen, names, CC_NOPS);
}

void cc_op_variant_list(const cc_op *op, char *out, size_t outlen)
{
    size_t count = 0;
    while (op->variants && op->variants[count]) count++;
    cc_join(out, outlen, op->variants, count);
}
