/* Start synchronisation methods for collective repetitions. */
#include "cc_op.h"

static void cc_barrier_start(MPI_Comm comm)
{
    CC_MPI(MPI_Barrier(comm));
}

const cc_sync cc_sync_barrier = {"barrier", cc_barrier_start, 0};
const cc_sync cc_sync_none = {"none", NULL, 0};
/* untimed repetitions still start at a barrier: only the timed ones need the
 * common start time (and untimed runs at a barrier size the window) */
const cc_sync cc_sync_window = {"window", cc_barrier_start, 1};
/* a marker: each point takes none or barrier (cc_run.c) */
const cc_sync cc_sync_auto = {"auto", cc_barrier_start, 0};
