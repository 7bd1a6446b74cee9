/* Calls the tracer does not follow: each is recorded as an OTHER record
 * naming it (CC_TRACE_OTHER_NAMES) and passed straight through, so a replay
 * can say what it cannot model instead of silently missing it. */
#include "cc_trace.h"

#define CCT_OTHER(NAME, COMM, PARAMS, ARGS)                  \
    int MPI_##NAME PARAMS                                    \
    {                                                        \
        CCT_ENTER(1, PMPI_##NAME ARGS);                      \
        uint64_t t0 = cct_now();                             \
        int rc = PMPI_##NAME ARGS;                           \
        cct_other(r, CC_OTHER_##NAME, COMM, rc, t0);         \
        return rc;                                           \
    }

#define CCT_NO_COMM CC_COMM_NONE

/* MPI_Cancel, Mprobe, Improbe, Mrecv and Imrecv are followed in cc_trace_mprobe.c; the
 * intercommunicators in cc_trace_comm.c; one-sided,
 * non-blocking collectives and persistent requests in cc_trace_rma.c, cc_trace_nbc.c and
 * cc_trace_persist.c */

CCT_OTHER(Comm_spawn, cct_comm(comm),
          (const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
           MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]),
          (command, argv, maxprocs, info, root, comm, intercomm, array_of_errcodes))

