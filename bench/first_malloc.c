/* What copying n bytes into never-touched memory costs, by where the memory comes from:
 * the ways the `touch` probe (kernels/mpi/cc_ops_touch.c) can get fresh pages, beside a
 * program's own first malloc. No MPI: one process copies from a resident source.
 *
 *   cc -O2 -o /tmp/first_malloc bench/first_malloc.c
 *   for i in 1 2 3 4 5; do /tmp/first_malloc first 4718592; done   # a new process each
 *   /tmp/first_malloc paths 4718592 [reps] [region_bytes]
 *
 * first: malloc(n) in this process, never touched before, one copy (ns per byte).
 * paths: reps copies each (median ns per byte) into
 *   resident  one buffer, already touched;
 *   region    the next n-byte slot of a region of region_bytes (default 1 GiB), its pages
 *             given back with MADV_DONTNEED before (the probe's `fresh` variant);
 *   remap     one buffer unmapped and mapped again (the same address, pages just freed);
 *   newmap    a new mapping each copy, the old one unmapped after the new one is made.
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void *map(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { fprintf(stderr, "first_malloc: cannot map %zu bytes\n", n); exit(1); }
    return p;
}

static double copy_ns_per_byte(void *dst, const void *src, size_t n)
{
    double t = now_ns();
    memcpy(dst, src, n);
    __asm__ volatile("" ::: "memory");
    return (now_ns() - t) / (double)n;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int k)
{
    qsort(v, (size_t)k, sizeof *v, cmp);
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "first") != 0 && strcmp(argv[1], "paths") != 0)) {
        fprintf(stderr, "usage: first_malloc first|paths N [reps] [region_bytes]\n");
        return 2;
    }
    size_t n = strtoull(argv[2], NULL, 10);
    if (n < 4096) { fprintf(stderr, "first_malloc: N must be at least 4096\n"); return 2; }
    char *src = malloc(n);
    if (!src) { fprintf(stderr, "first_malloc: cannot allocate %zu bytes\n", n); return 1; }
    memset(src, 7, n);
    if (strcmp(argv[1], "first") == 0) {
        char *dst = malloc(n);
        if (!dst) { fprintf(stderr, "first_malloc: cannot allocate %zu bytes\n", n); return 1; }
        printf("first %zu %.3f\n", n, copy_ns_per_byte(dst, src, n));
        return dst[n / 2] == 7 ? 0 : 1;
    }
    int reps = argc > 3 ? atoi(argv[3]) : 9;
    size_t region = argc > 4 ? strtoull(argv[4], NULL, 10) : (size_t)1 << 30;
    if (reps < 1 || reps > 1000) { fprintf(stderr, "first_malloc: reps 1 to 1000\n"); return 2; }
    double *v = malloc((size_t)reps * sizeof *v);
    if (!v) { fprintf(stderr, "first_malloc: cannot allocate %d results\n", reps); return 1; }
    size_t step = (n + 4095) & ~(size_t)4095, slots = region / step < 2 ? 2 : region / step;
    char *buf = map(step);
    memset(buf, 1, n);
    for (int k = 0; k < reps; k++) v[k] = copy_ns_per_byte(buf, src, n);
    printf("resident %zu %.3f\n", n, median(v, reps));
    char *reg = map(slots * step);
    for (int k = 0; k < reps; k++) {
        char *slot = reg + (size_t)(k + 1) % slots * step;
        madvise(slot, step, MADV_DONTNEED);
        v[k] = copy_ns_per_byte(slot, src, n);
    }
    printf("region %zu %.3f\n", n, median(v, reps));
    munmap(reg, slots * step);
    for (int k = 0; k < reps; k++) {
        munmap(buf, step);
        buf = map(step);
        v[k] = copy_ns_per_byte(buf, src, n);
    }
    printf("remap %zu %.3f\n", n, median(v, reps));
    for (int k = 0; k < reps; k++) {
        char *fresh = map(step);
        munmap(buf, step);
        buf = fresh;
        v[k] = copy_ns_per_byte(buf, src, n);
    }
    printf("newmap %zu %.3f\n", n, median(v, reps));
    return 0;
}
