/* Cache-cold buffers (--cache cold): after an op's set-up, its send and receive
 * buffers move to one slot of a region at least twice the last-level cache,
 * and every repetition takes the next slot, so none finds its data in cache
 * (IMB's -off_cache does the same).  The ops never know: they read pt->sbuf
 * and pt->rbuf, which point into the slot in use.  An op that asks for it
 * (pt->rotate_slots, the footprint probe) rotates the same way, warm, over
 * the slots it names. */
#ifndef CC_CACHE_H
#define CC_CACHE_H

#include <stddef.h>

#include "cc_op.h"

/* when nothing says how large the last-level cache is */
#define CC_LLC_DEFAULT_BYTES ((size_t)32 << 20)
/* the most a rank's region may take unless --cache-limit says otherwise */
#define CC_CACHE_LIMIT_DEFAULT ((size_t)1 << 30)

/* the last-level cache of cpu0 in bytes; *source says where it was read
 * ("sysfs", "sysconf", or "default" when neither answered) */
size_t cc_llc_bytes(const char **source);

/* len rounded up to whole pages (one page for 0) */
size_t cc_round_pages(size_t len);
/* slots of `stride` bytes covering twice the last-level cache (opt->llc_bytes), at least two:
 * the slot a repetition uses was last touched a whole region of traffic ago */
size_t cc_cache_slots(const cc_options *opt, size_t stride);

/* After op->setup, on every participant (it talks on pt->ctl): take the
 * region.  Returns NULL, or why the point cannot be measured with it (written
 * into why); the answer is the same on every participant. */
const char *cc_cache_setup(cc_point *pt, char *why, size_t whylen);
/* the next slot's buffers in pt->sbuf and pt->rbuf; nothing when warm */
void cc_cache_next(cc_point *pt);
/* give the op its own buffers back and free the region (before op->cleanup) */
void cc_cache_release(cc_point *pt);

#endif
