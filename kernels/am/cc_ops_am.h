/* The active-message layer's operations (kernels/am/, over ../am), in the
 * operation table (kernels/cc_ops.c). */
#ifndef CC_OPS_AM_H
#define CC_OPS_AM_H

#include "cc_op.h"

extern const cc_op cc_op_am_rtt, cc_op_am_store, cc_op_am_get, cc_op_am_pipe, cc_op_am_exchange,
    cc_op_am_cost, cc_op_am_loss;

#endif
