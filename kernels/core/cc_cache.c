#include "cc_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { CC_CACHE_INDEXES = 16 };

/* "32768K", "1M", "512" (bytes) as sysfs writes a cache size; 0 when unreadable */
static size_t cc_parse_cache_size(const char *text)
{
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (end == text) return 0;
    unsigned long long unit = 1;
    if (*end == 'K') unit = 1ULL << 10;
    else if (*end == 'M') unit = 1ULL << 20;
    else if (*end == 'G') unit = 1ULL << 30;
    return (size_t)(v * unit);
}

static int cc_read_line(const char *path, char *out, size_t outlen)
{
    FILE *fh = fopen(path, "r");
    if (!fh) return -1;
    int ok = fgets(out, (int)outlen, fh) != NULL;
    fclose(fh);
    if (!ok) return -1;
    out[strcspn(out, "\n")] = '\0';
    return 0;
}

/* the highest-level data or unified cache sysfs lists for cpu0 */
static size_t cc_llc_sysfs(void)
{
    size_t best = 0;
    int best_level = 0;
    for (int i = 0; i < CC_CACHE_INDEXES; i++) {
        char path[96], level[32], type[32], size[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        if (cc_read_line(path, level, sizeof level) != 0) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        if (cc_read_line(path, type, sizeof type) != 0 || strcmp(type, "Instruction") == 0) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (cc_read_line(path, size, sizeof size) != 0) continue;
        int lv = atoi(level);
        size_t bytes = cc_parse_cache_size(size);
        if (bytes > 0 && lv >= best_level) {
            best_level = lv;
            best = bytes;
        }
    }
    return best;
}

size_t cc_llc_bytes(const char **source)
{
    size_t bytes = cc_llc_sysfs();
    if (bytes > 0) {
        *source = "sysfs";
        return bytes;
    }
#ifdef _SC_LEVEL3_CACHE_SIZE
    long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (v > 0) {
        *source = "sysconf";
        return (size_t)v;
    }
#endif
    *source = "default";
    return CC_LLC_DEFAULT_BYTES;
}

size_t cc_round_pages(size_t len)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t p = page > 0 ? (size_t)page : 4096;
    if (len == 0) len = 1;
    return (len + p - 1) / p * p;
}

size_t cc_cache_slots(const cc_options *opt, size_t stride)
{
    const size_t floor_bytes = 2 * opt->llc_bytes; /* <= the limit: cc_options_parse */
    /* whole slots covering twice the cache, and at least two, so the slot a
     * repetition uses was last touched a whole region of traffic ago */
    size_t slots = floor_bytes / stride + (floor_bytes % stride != 0);
    return slots < 2 ? 2 : slots;
}

const char *cc_cache_setup(cc_point *pt, char *why, size_t whylen)
{
    const cc_options *opt = pt->env->opt;
    memset(&pt->rot, 0, sizeof pt->rot);
    if (!opt->cache_cold && !pt->rotate_slots) return NULL;
    /* cold: every buffer on a page of its own; a warm rotation keeps the offset
     * warm buffers have (cc_buffer_alloc), so only the number of buffers differs */
    const size_t offset = opt->cache_cold ? 0 : (size_t)opt->buffer_offset;
    /* one slot holds both buffers, each on pages of its own */
    const size_t rbuf_at = cc_round_pages(pt->sbuf_len + offset);
    const size_t stride = rbuf_at + cc_round_pages(pt->rbuf_len + offset);
    const size_t slots = opt->cache_cold ? cc_cache_slots(opt, stride) : pt->rotate_slots;
    /* the largest region of any participant decides, so all agree */
    unsigned long long mine = stride > opt->cache_limit / slots ? ~0ULL : (unsigned long long)(slots * stride);
    unsigned long long most = 0;
    CC_MPI(MPI_Allreduce(&mine, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, pt->ctl));
    if (most > opt->cache_limit) {
        snprintf(why, whylen,
                 "%s: %zu slots of %zu bytes (send and receive buffers) exceed --cache-limit %zu bytes",
                 opt->cache_cold ? "--cache cold" : "buffer rotation", slots, stride, opt->cache_limit);
        return why;
    }
    pt->rot.region = cc_xalloc_pages(slots * stride);
    /* touch every page now: a first touch in the timed region would be a page
     * fault, not a cache miss */
    memset(pt->rot.region, 0, slots * stride);
    pt->rot.own_sbuf = pt->sbuf;
    pt->rot.own_rbuf = pt->rbuf;
    pt->rot.stride = stride;
    pt->rot.rbuf_at = rbuf_at;
    pt->rot.offset = offset;
    pt->rot.slots = slots;
    pt->rot.slot = slots - 1; /* the first cc_cache_next takes slot 0 */
    pt->rot.region_bytes = slots * stride;
    cc_cache_next(pt);
    return NULL;
}

void cc_cache_next(cc_point *pt)
{
    if (!pt->rot.region) return;
    pt->rot.slot = pt->rot.slot + 1 == pt->rot.slots ? 0 : pt->rot.slot + 1;
    unsigned char *slot = pt->rot.region + pt->rot.slot * pt->rot.stride;
    pt->sbuf = slot + pt->rot.offset;
    pt->rbuf = slot + pt->rot.rbuf_at + pt->rot.offset;
}

void cc_cache_release(cc_point *pt)
{
    if (!pt->rot.region) return;
    pt->sbuf = pt->rot.own_sbuf;
    pt->rbuf = pt->rot.own_rbuf;
    cc_free_pages(pt->rot.region);
    pt->rot.region = NULL;
}
