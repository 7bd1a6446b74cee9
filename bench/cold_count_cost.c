/* What the tracer's cold-byte count costs a receive (tracer/cc_cold.c, cc_cold_bytes):
 * the same mincore(2) walk, timed on resident and on never-touched buffers.
 *   cc -std=c11 -O2 -I tracer -o /tmp/cold_count_cost bench/cold_count_cost.c tracer/cc_cold.c && /tmp/cold_count_cost
 * Prints, per size, ns per count (the least of 5 rounds) and the bytes it found cold. */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cc_cold.h"

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(void)
{
    const size_t sizes[] = {64 << 10, 1 << 20, 16 << 20, 72 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const size_t n = sizes[k];
        for (int touched = 0; touched < 2; touched++) {
            unsigned char *b = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (b == MAP_FAILED) return 1;
            if (touched) memset(b, 1, n);
            const int calls = n > (8u << 20) ? 200 : 20000;
            double best = 1e300;
            uint64_t cold = 0;
            for (int round = 0; round < 5; round++) {
                const double t0 = now_ns();
                for (int i = 0; i < calls; i++) cold = cc_cold_bytes(b, n);
                const double per = (now_ns() - t0) / calls;
                if (per < best) best = per;
            }
            printf("%9zu B %-9s %10.0f ns per count, %zu bytes cold\n", n,
                   touched ? "resident" : "untouched", best, (size_t)cold);
            munmap(b, n);
        }
    }
    return 0;
}
