/* Start synchronisation methods for collective repetitions. */
#include "cc_op.h"

static void cc_barrier_start(MPI_Comm comm)
{
    CC_MPI(MPI_Barrier(comm));
}

const cc_sync cc_sync_barrier = {"barrier", cc_barrier_start};
const cc_sync cc_sync_none = {"none", NULL};
