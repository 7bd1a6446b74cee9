/* PVM's operations (kernels/pvm/), in the op table only of the kernel built
 * with WITH_PVM=1 (linked with libpvm3 and libgpvm3). */
#ifndef CC_OPS_PVM_H
#define CC_OPS_PVM_H

#include "cc_op.h"

extern const cc_op cc_op_pvm_pingpong, cc_op_pvm_pack, cc_op_pvm_mcast, cc_op_pvm_bcast,
    cc_op_pvm_barrier, cc_op_pvm_reduce, cc_op_pvm_gather, cc_op_pvm_scatter;

#define CC_PVM_OPS                                                                           \
    &cc_op_pvm_pingpong, &cc_op_pvm_pack, &cc_op_pvm_mcast, &cc_op_pvm_bcast,                \
        &cc_op_pvm_barrier, &cc_op_pvm_reduce, &cc_op_pvm_gather, &cc_op_pvm_scatter,

#endif
