/* The tracer's memory: pages of its own (mmap), never the program's heap.
 *
 * Where a program's malloc'ed buffers lie in their pages decides what some of
 * its copies cost (a receive buffer 16 bytes ahead of the send buffer in its
 * page is copied at half speed), and the trace records those places for the
 * replay.  Had the tracer allocated from the same heap, a traced run's buffers
 * would lie elsewhere than an untraced run's, and the trace would describe a
 * program that does not run untraced.  Each allocation is one mapping with its
 * length in a header; mremap grows it.  Allocations are few and long-lived
 * (the record buffer, the request table, grow-once scratch arrays), so a
 * system call each costs nothing measurable.  Every page is touched when it is
 * mapped: a first write to a fresh page faults (2.2 to 2.9 us on a KVM guest),
 * and the faults of a record buffer filled for the first time would fall
 * between the program's calls, one every 64 records, where the replay takes
 * them for the program's computation. */
#define _GNU_SOURCE
#include "cc_trace.h"

#include <sys/mman.h>
#include <unistd.h>

/* the header keeps the mapping's length; 16 bytes keep what follows aligned */
enum { CCT_MEM_HEADER = 16 };

static size_t cct_page_size(void)
{
    static size_t page;
    if (!page) page = sysconf(_SC_PAGESIZE) > 0 ? (size_t)sysconf(_SC_PAGESIZE) : 4096;
    return page;
}

static size_t cct_mem_pages(size_t bytes)
{
    size_t page = cct_page_size();
    if (bytes > SIZE_MAX - CCT_MEM_HEADER - page) return 0;
    return (bytes + CCT_MEM_HEADER + page - 1) / page * page;
}

/* fault in the pages of [from, to) of a mapping now, not between the program's calls */
static void cct_mem_touch(char *base, size_t from, size_t to)
{
    size_t page = cct_page_size();
    for (size_t at = from; at < to; at += page) ((volatile char *)base)[at] = 0;
}

void *cct_alloc(size_t bytes)
{
    size_t length = cct_mem_pages(bytes);
    if (!length) return NULL;
    void *base = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return NULL;
    cct_mem_touch(base, 0, length);
    *(size_t *)base = length;
    return (char *)base + CCT_MEM_HEADER;
}

void *cct_realloc(void *p, size_t bytes)
{
    if (!p) return cct_alloc(bytes);
    char *base = (char *)p - CCT_MEM_HEADER;
    size_t length = *(size_t *)base, wanted = cct_mem_pages(bytes);
    if (!wanted) return NULL;
    if (wanted <= length) return p;
    void *moved = mremap(base, length, wanted, MREMAP_MAYMOVE);
    if (moved == MAP_FAILED) return NULL;
    cct_mem_touch(moved, length, wanted);
    *(size_t *)moved = wanted;
    return (char *)moved + CCT_MEM_HEADER;
}

void cct_free(void *p)
{
    if (!p) return;
    char *base = (char *)p - CCT_MEM_HEADER;
    munmap(base, *(size_t *)base);
}

void *cct_grow(void *array, int *cap, int count, size_t item)
{
    if (count <= *cap) return array;
    int grown_cap = count < 256 ? 256 : count;
    void *grown = cct_realloc(array, (size_t)grown_cap * item);
    if (!grown) return NULL;
    *cap = grown_cap;
    return grown;
}
