"""The kernel's message buffers (kernels/common/cc_errors.c, cc_xalloc_pages): a mapping given
back is reused for the next buffer it fits, zeroed as a fresh one, page-aligned; small ones
and ones more than four times too large are not, and what is kept never exceeds the most the
buffers held at once. Compiled as it is with an MPI compiler wrapper (it reports through MPI)
and run without a launcher."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from _c_drivers import build, compiler

COMMON = Path(__file__).resolve().parents[1] / "kernels" / "common"

DRIVER = r"""
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "cc_errors.h"
/* every mapping the program makes, counted: this definition wins over the C library's */
static long maps;
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    maps++;
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}
/* a buffer, and whether it was mapped for it (1) or came from the pool (0) */
static unsigned char *take(size_t n, int *mapped) {
    const long before = maps;
    unsigned char *p = cc_xalloc_pages(n);
    *mapped = maps != before;
    return p;
}
#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
static int zero(const unsigned char *p, size_t n) { for (size_t i = 0; i < n; i++) if (p[i]) return 0; return 1; }
static void dirty(unsigned char *p, size_t n) { memset(p, 0xab, n); }
int main(void) {
    int m1, m2, m3;
    /* a 4 MiB buffer, dirtied and given back, comes back for 3 MiB: zeroed, aligned */
    unsigned char *a = take(4 * MIB, &m1);
    dirty(a, 4 * MIB);
    cc_free_pages(a);
    unsigned char *b = take(3 * MIB, &m2);
    printf("reused %d zero %d aligned %d\n", m1 && !m2 && b == a, zero(b, 3 * MIB),
           ((uintptr_t)b % CC_PAGE_BYTES) == 0);
    /* not for a buffer more than four times smaller */
    unsigned char *c = take(4 * MIB, &m1);
    dirty(c, 4 * MIB);
    cc_free_pages(c);
    unsigned char *d = take(512 * KIB, &m2);
    printf("small_took_large %d zero %d\n", !m2, zero(d, 512 * KIB));
    /* a small mapping is never kept */
    unsigned char *e = take(8 * KIB, &m1);
    dirty(e, 8 * KIB);
    cc_free_pages(e);
    unsigned char *f = take(8 * KIB, &m2);
    printf("small_kept %d zero %d\n", !m2, zero(f, 8 * KIB));
    cc_free_pages(f);
    cc_free_pages(d);
    cc_free_pages(b);
    /* the most held at once so far: 8 MiB and 2 pages (a's mapping as b, and c); d was kept
     * and dropped again to keep b within that: b and c are kept, and the next three 4 MiB
     * buffers are they and one mapped afresh, all three kept when given back */
    unsigned char *g = take(4 * MIB, &m1), *h = take(4 * MIB, &m2), *i = take(4 * MIB, &m3);
    printf("from_pool %d\n", !m1 + !m2 + !m3);
    cc_free_pages(g);
    cc_free_pages(h);
    cc_free_pages(i);
    take(4 * MIB, &m1);
    take(4 * MIB, &m2);
    take(4 * MIB, &m3);
    printf("kept_of_three %d\n", !m1 + !m2 + !m3);
    return 0;
}
"""


@pytest.fixture(scope="module")
def pool(tmp_path_factory) -> str:
    cc = compiler("mpicc", "mpicc.mpich", "mpicc.openmpi")  # cc_errors.c reports through MPI
    binary = build(tmp_path_factory.mktemp("pool"), "pool", DRIVER, COMMON, [COMMON / "cc_errors.c"], cc)
    done = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_mapping_given_back_is_reused_zeroed_and_aligned(pool):
    assert "reused 1 zero 1 aligned 1" in pool


def test_a_small_buffer_does_not_take_a_mapping_four_times_its_size(pool):
    assert "small_took_large 0 zero 1" in pool
    assert "small_kept 0 zero 1" in pool


def test_what_is_kept_never_exceeds_the_most_held_at_once(pool):
    # two of the three 4 MiB buffers come from the pool (b and c), the third is mapped
    assert "from_pool 2" in pool
    # 12 MiB were held at once: all three are kept now and come back
    assert "kept_of_three 3" in pool
