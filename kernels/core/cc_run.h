/* Runs the plan: every point through set-up, the measurement loop,
 * verification, extras and clean-up, with its begin and point lines. */
#ifndef CC_RUN_H
#define CC_RUN_H

#include "cc_fault.h"
#include "cc_op.h"

/* every rank calls this; returns the number of points measured */
size_t cc_run_plan(const cc_env *env, const cc_fault *fault);

#endif
