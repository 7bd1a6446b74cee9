/* Bootstrap of cc_am through MPI: one MPI_Allgather of the ranks' addresses at
 * start-up, so mpirun and srun launch cc_am programs.  The data path never
 * touches MPI afterwards. */
#ifndef CC_AM_MPI_H
#define CC_AM_MPI_H

#include <mpi.h>

#include "cc_am.h"

/* Collective over comm: open an endpoint on every rank and connect them; the
 * cc_am rank is the rank in comm.  On failure *ep is NULL and err says why
 * (every rank fails together when any rank cannot open). */
int cc_am_init_mpi(MPI_Comm comm, const cc_am_config *cfg, cc_am_ep **ep, char *err, size_t errlen);

#endif
