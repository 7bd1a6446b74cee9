#include "cc_am_mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cc_am_init_mpi(MPI_Comm comm, const cc_am_config *cfg, cc_am_ep **out, char *err, size_t errlen)
{
    *out = NULL;
    int rank = 0, size = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS) {
        snprintf(err, errlen, "cc_am_init_mpi: not a usable communicator");
        return CC_AM_EARG;
    }
    cc_am_ep *ep = NULL;
    cc_am_addr mine;
    memset(&mine, 0, sizeof mine);
    int rc = cc_am_open(cfg, &ep, &mine, err, errlen);
    /* every rank learns whether all opened, so none waits for a missing peer */
    int worst = rc;
    if (MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) worst = CC_AM_ESYS;
    if (worst != CC_AM_OK) {
        if (rc == CC_AM_OK) snprintf(err, errlen, "cc_am_init_mpi: another rank could not open its socket");
        cc_am_close(ep);
        return worst;
    }
    cc_am_addr *all = calloc((size_t)size, sizeof *all);
    if (!all) {
        snprintf(err, errlen, "cc_am_init_mpi: out of memory");
        cc_am_close(ep);
        return CC_AM_ENOMEM;
    }
    if (MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, comm) !=
        MPI_SUCCESS) {
        snprintf(err, errlen, "cc_am_init_mpi: MPI_Allgather of the addresses failed");
        free(all);
        cc_am_close(ep);
        return CC_AM_ESYS;
    }
    rc = cc_am_connect(ep, rank, size, all);
    free(all);
    if (rc != CC_AM_OK) {
        snprintf(err, errlen, "%s", cc_am_error(ep));
        cc_am_close(ep);
        return rc;
    }
    *out = ep;
    return CC_AM_OK;
}
