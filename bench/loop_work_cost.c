/* What a validation program's own work between its MPI calls costs: loop_stamp of one
 * block before the call and loop_check of one block after it (apps/loop_common.c, 8 bytes
 * at each end of the block), warm, in one process, without MPI. A replayed loop keeps this
 * work as computation; the ring exchange does it once a call, the 2-rank all-to-all twice.
 *   make -C apps MPICC=mpicc.mpich BUILD=/tmp/lwc-apps && mpicc.mpich -std=c11 -O2 \
 *     -I apps -I kernels/common -o /tmp/loop_work_cost bench/loop_work_cost.c \
 *     /tmp/lwc-apps/loop_common.o /tmp/lwc-apps/app_common.o /tmp/lwc-apps/cc_*.o -lm \
 *     && /tmp/loop_work_cost
 * Prints, per block size, ns per stamp and check (the least of 5 rounds). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "loop_common.h"

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(void)
{
    const size_t sizes[] = {256, 4096, 32768, 262144};
    const long calls = 1000000;
    long wrong = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        uint8_t *block = malloc(sizes[s]);
        if (!block) return 1;
        double best = 1e300;
        for (int round = 0; round < 5; round++) {
            const double t0 = now_ns();
            for (long k = 0; k < calls; k++) {
                loop_stamp(block, sizes[s], 1, k);
                wrong += loop_check(block, sizes[s], 1, k, 0);
            }
            const double per = (now_ns() - t0) / (double)calls;
            if (per < best) best = per;
        }
        printf("%7zu B  %6.1f ns per stamp and check\n", sizes[s], best);
        free(block);
    }
    return wrong != 0;
}
