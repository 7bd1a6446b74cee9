#define _DEFAULT_SOURCE
#include "cc_cold.h"

#include <sys/mman.h>
#include <unistd.h>

/* mincore's answer for up to this many pages at once (4 KiB of vector: 16 MiB of 4 KiB pages) */
enum { CC_COLD_CHUNK = 4096 };

uint64_t cc_cold_bytes(const void *buf, uint64_t len)
{
    static long page;
    if (!page) page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
    const uintptr_t start = (uintptr_t)buf, end = start + len, ps = (uintptr_t)page;
    unsigned char vec[CC_COLD_CHUNK];
    uint64_t cold = 0;
    for (uintptr_t at = start & ~(ps - 1); at < end;) {
        uintptr_t pages = (end - at + ps - 1) / ps;
        if (pages > CC_COLD_CHUNK) pages = CC_COLD_CHUNK;
        if (mincore((void *)at, pages * ps, vec) != 0) return cold;
        for (uintptr_t i = 0; i < pages; i++, at += ps) {
            if (vec[i] & 1) continue;
            const uintptr_t lo = at > start ? at : start, hi = at + ps < end ? at + ps : end;
            cold += hi - lo;
        }
    }
    return cold;
}
