/* How far apart the cores of ranks 0 and 1 are, as a cache line's round trip
 * between them.  A virtual machine's host may move its vCPUs: on the 2-core
 * KVM guests commchar is developed on, the two vCPUs share a last-level cache
 * for seconds (a round trip of 75-170 ns) and then sit further apart for
 * seconds to tens of seconds (400-520 or 800-870 ns), and intra-node message
 * times follow (MPICH's 4 KiB ping-pong 1.7 against 6.1 us).  Measured beside every point
 * and every validation loop, it says which of these states a time was
 * measured in (docs/method.md, "Where the ranks' cores are").
 *
 * Beside it, each of the two ranks times a copy of 4 KiB between two buffers of
 * its own L1 cache, which no distance moves: it takes longer only while the
 * rank's core runs slower than its own best, as when the host runs another
 * guest's thread on the core's other hyperthread.  On a 2-vCPU KVM guest of an
 * AMD EPYC the copy took 42 ns when neither rank was slowed and 46 to 144 ns
 * otherwise, both states lasting tens of milliseconds to seconds, with the
 * round trip in the same 65 to 90 ns, and the points a slowed core measured
 * took a median 1.18 (MPICH) and 1.21 (Open MPI) times the others: a time
 * measured on a slowed core, like one measured apart, describes another
 * machine (docs/method.md, "A slowed core").
 *
 * Shared by the kernel and the applications; MPI only to find the other rank
 * on the node and share one cache line with it (MPI_Win_allocate_shared),
 * through the PMPI names, so that a tool wrapping the MPI calls (commchar's
 * tracer) sees none of it: a traced program's own calls stay the trace. */
#ifndef CC_CORE_DISTANCE_H
#define CC_CORE_DISTANCE_H

#include <mpi.h>
#include <stdatomic.h>

#include "cc_json.h"

typedef struct cc_core_distance {
    MPI_Comm node;          /* ranks 0 and 1 of the communicator, when on one node */
    MPI_Win win;
    _Atomic long *line;     /* the shared cache line */
    _Atomic long *peer_copy; /* a line of its own: side 1's copy time (ps), for side 0 */
    unsigned char *copy;    /* this rank's two buffers of the copy (static), in its L1 cache */
    long seq;
    int side;               /* 0 or 1: which end of the round trip; -1: not measuring */
} cc_core_distance;

/* One look at the two cores: the line's round trip and the slower rank's copy (ns),
 * both -1 where nothing was measured (side 1, or no line shared). */
typedef struct cc_core_sample {
    double rtt_ns;
    double copy_ns;
} cc_core_sample;

/* Collective over comm: ranks 0 and 1 of comm get a shared line when they are
 * on the same node (side -1 everywhere else, and on both when they are not). */
void cc_core_distance_open(cc_core_distance *pl, MPI_Comm comm);
/* Called by ranks 0 and 1 together (any other rank returns at once): on side 0,
 * the median round trip of the line between their cores and the slower of the
 * two ranks' median copy (ns); -1 on side 1 and where nothing is measured. */
cc_core_sample cc_core_distance_sample(cc_core_distance *pl);
/* Collective over the comm of cc_core_distance_open. */
void cc_core_distance_close(cc_core_distance *pl);
/* "core_rtt_ns":[before,after] and "core_copy_ns":[before,after] into an open JSON
 * object, each when both of its ends were measured (>= 0) */
void cc_core_distance_json(cc_buf *b, cc_core_sample before, cc_core_sample after);

#endif
