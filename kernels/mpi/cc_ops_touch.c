/* touch: what a receive into never-touched memory costs.
 *
 * A program that receives into a buffer it has just allocated (a scatter of a
 * matrix into a fresh malloc) pays, during the call, for every 4 KiB page the
 * kernel faults in and zeroes; every other operation receives into resident
 * buffers.  Ranks 0 and 1 ping-pong n bytes.  Variant "fresh": each repetition
 * receives into the next n-byte slot of a region at least twice the last-level
 * cache (at most --cache-limit), whose pages were given back to the
 * kernel (MADV_DONTNEED, untimed) since the slot's last use, so each message
 * lands in memory that has no page yet, and the pages the kernel then hands out
 * were last written a whole region ago: out of cache, as the pages of a
 * program's first malloc are.  (Unmapping and mapping one buffer again would
 * get back the pages just freed, still in cache, and cost a program's first
 * touch only in part.)  Variant "resident": the same buffers stay mapped and
 * touched.  Half a round trip is one receive; fresh less resident, per size,
 * is the first-touch cost of n bytes (commchar.models.first_touch fits it per
 * byte and per page). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "cc_cache.h"
#include "cc_op_data.h"
#include "cc_ops_mpi.h"
#include "cc_verify.h"

enum { CC_TOUCH_FRESH = 0, CC_TOUCH_RESIDENT = 1 };
static const char *const cc_touch_variants[] = {"fresh", "resident", NULL};

static unsigned char *cc_touch_map(size_t n)
{
    void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) cc_die("touch: cannot map a %zu-byte receive buffer", n);
    return p;
}

static void cc_touch_unmap(unsigned char *p, size_t n)
{
    if (p && munmap(p, n ? n : 1) != 0) cc_die("touch: cannot unmap a %zu-byte receive buffer", n);
}

/* The fresh variant's region: slots of n bytes, the one in use at `slot`. */
static struct {
    unsigned char *base;
    size_t slots, slot, len;
} cc_touch_region;

/* the region's slots (cc_cache_slots), as many as --cache-limit holds, at least two */
static void cc_touch_region_map(const cc_options *opt, size_t n)
{
    const size_t step = cc_round_pages(n);
    size_t slots = cc_cache_slots(opt, step);
    if (slots > opt->cache_limit / step) slots = opt->cache_limit / step;
    if (slots < 2) slots = 2;
    cc_touch_region.slots = slots;
    cc_touch_region.slot = 0;
    cc_touch_region.len = slots * step;
    cc_touch_region.base = cc_touch_map(cc_touch_region.len);
}

static const char *cc_touch_check_size(size_t n, int p, int variant, char *why, size_t whylen)
{
    return cc_p2p_check_size(n, p, variant, why, whylen);
}

static void cc_touch_setup(cc_point *pt)
{
    pt->sbuf_len = pt->rbuf_len = pt->n;
    pt->sbuf = cc_xalloc_pages(pt->n);
    if (pt->variant == CC_TOUCH_FRESH) {
        cc_touch_region_map(pt->env->opt, pt->n);
        pt->rbuf = cc_touch_region.base;
    } else {
        pt->rbuf = cc_touch_map(pt->n);
        cc_poison_bytes(pt->rbuf, pt->n, 1 - pt->rank, 0, pt->seed);
    }
    pt->check_off = 0;
    pt->check_len = pt->n;
    pt->timed = pt->rank == 0;
    pt->scale = 0.5; /* half a round trip: one receive */
}

/* fresh: the next slot, its pages given back to the kernel */
static void cc_touch_renew(cc_point *pt)
{
    const size_t step = cc_round_pages(pt->n);
    cc_touch_region.slot = (cc_touch_region.slot + 1) % cc_touch_region.slots;
    pt->rbuf = cc_touch_region.base + cc_touch_region.slot * step;
    if (madvise(pt->rbuf, step, MADV_DONTNEED) != 0)
        cc_die("touch: cannot give back a %zu-byte receive buffer's pages", pt->n);
}

static void cc_touch_before(cc_point *pt)
{
    if (pt->variant == CC_TOUCH_FRESH) cc_touch_renew(pt);
}

static void cc_touch_run(cc_point *pt, long count)
{
    const int n = (int)pt->n, peer = 1 - pt->rank;
    for (long k = 0; k < count; k++) {
        /* a batch (which the kernel chooses only for calls far shorter than a fault of
         * the smallest size's pages) remaps between its repetitions */
        if (k > 0 && pt->variant == CC_TOUCH_FRESH) cc_touch_renew(pt);
        if (pt->rank == 0) {
            CC_MPI(MPI_Send(pt->sbuf, n, MPI_BYTE, peer, CC_TAG_DATA, pt->comm));
            CC_MPI(MPI_Recv(pt->rbuf, n, MPI_BYTE, peer, CC_TAG_DATA, pt->comm, MPI_STATUS_IGNORE));
        } else {
            CC_MPI(MPI_Recv(pt->rbuf, n, MPI_BYTE, peer, CC_TAG_DATA, pt->comm, MPI_STATUS_IGNORE));
            CC_MPI(MPI_Send(pt->sbuf, n, MPI_BYTE, peer, CC_TAG_DATA, pt->comm));
        }
    }
}

/* the verification run's receive buffer is renewed after the fill (fresh), so its
 * poison may be gone: the pattern is never all zeros, and a fresh page is */
static void cc_touch_fill(cc_point *pt)
{
    cc_fill_bytes(pt->sbuf, pt->n, pt->rank, 0, pt->seed);
    cc_poison_bytes(pt->rbuf, pt->n, 1 - pt->rank, 0, pt->seed);
}

static int cc_touch_check(const cc_point *pt, char *err, size_t errlen)
{
    return cc_check_bytes(pt->rbuf, pt->n, 1 - pt->rank, 0, pt->seed, pt->rank, 0, err, errlen);
}

static void cc_touch_cleanup(cc_point *pt)
{
    cc_free_pages(pt->sbuf);
    if (pt->variant == CC_TOUCH_FRESH) {
        cc_touch_unmap(cc_touch_region.base, cc_touch_region.len);
        cc_touch_region.base = NULL;
    } else {
        cc_touch_unmap(pt->rbuf, pt->n);
    }
    pt->sbuf = pt->rbuf = NULL;
}

const cc_op cc_op_touch = {
    .name = "touch",
    .variants = cc_touch_variants,
    .scope = CC_SCOPE_PAIR,
    .phases = 1,
    .check_size = cc_touch_check_size,
    .setup = cc_touch_setup,
    .before = cc_touch_before,
    .run = cc_touch_run,
    .fill = cc_touch_fill,
    .check = cc_touch_check,
    .cleanup = cc_touch_cleanup,
    .bound_buffers = "the fresh receive buffer is a slot of a region of its own, renewed each repetition",
};
