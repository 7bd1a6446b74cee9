/* The bytes of message buffers a rank sends from and receives into: every
 * buffer of a call whose size fields carry places (cc_trace_format.h's
 * CC_TRACE_PLACED_CALLS), counted once by its address at the largest size it
 * carried.  A program that cycles through more buffers than its caches hold
 * copies each message from and into memory further away (the kernel's
 * `footprint` probe measures what that costs); the header's buffer_bytes is
 * what the replay looks that cost up by.  A fixed table, looked up by the
 * address's hash: a loop's few buffers are found at the first probe. */
#include "cc_trace.h"

enum { CCT_BUFFERS = 4096 }; /* a power of two */

static struct cct_buffer {
    uintptr_t at;  /* 0: free */
    uint64_t bytes;
} cct_buffers[CCT_BUFFERS];
static uint32_t cct_buffers_used;
static uint64_t cct_buffer_total;
static int cct_buffers_full; /* a buffer went uncounted: the total is a floor */

void cct_buffer_seen(const void *buf, uint64_t bytes)
{
    const uintptr_t at = (uintptr_t)buf;
    uint32_t i = (uint32_t)((at >> 4) * UINT64_C(0x9E3779B97F4A7C15) >> 52) & (CCT_BUFFERS - 1);
    for (uint32_t probes = 0; probes < CCT_BUFFERS; probes++, i = (i + 1) & (CCT_BUFFERS - 1)) {
        struct cct_buffer *b = cct_buffers + i;
        if (b->at == at) {
            if (bytes > b->bytes) {
                cct_buffer_total += bytes - b->bytes;
                b->bytes = bytes;
            }
            return;
        }
        if (b->at == 0) {
            /* at most three quarters full, so a probe ends soon */
            if (cct_buffers_used >= CCT_BUFFERS / 4 * 3) break;
            b->at = at;
            b->bytes = bytes;
            cct_buffers_used++;
            cct_buffer_total += bytes;
            return;
        }
    }
    cct_buffers_full = 1;
}

void cct_buffer_footprint(uint64_t *bytes, int *floor)
{
    *bytes = cct_buffer_total;
    *floor = cct_buffers_full;
}
