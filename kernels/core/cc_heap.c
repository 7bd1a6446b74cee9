#include "cc_heap.h"

#include <stdlib.h> /* defines __GLIBC__ where the C library is glibc */

#ifdef __GLIBC__
#include <malloc.h>
#endif

/* glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit hosts: its dynamic mmap
 * threshold never rises above it, and the trim threshold follows at twice */
#define CC_HEAP_MMAP_BYTES (32 * 1024 * 1024)
#define CC_HEAP_TRIM_BYTES (2 * CC_HEAP_MMAP_BYTES)

int cc_heap_steady(void)
{
#ifdef __GLIBC__
    /* mallopt returns 1 on success; setting either fixes both (no dynamic rule) */
    if (mallopt(M_MMAP_THRESHOLD, CC_HEAP_MMAP_BYTES) != 1) return -1;
    if (mallopt(M_TRIM_THRESHOLD, CC_HEAP_TRIM_BYTES) != 1) return -1;
    return 0;
#else
    return -1;
#endif
}
