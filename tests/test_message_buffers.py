"""The kernel's message buffers (kernels/common/cc_errors.c, cc_xalloc_pages): each is mapped
for it alone, page-aligned and zeroed, and unmapped when given back, so a buffer given back is
never the next one's pages (a program's buffers are new to it). Compiled as it is with an MPI
compiler wrapper (it reports through MPI) and run without a launcher."""

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
/* every mapping the program makes and gives back, counted: these definitions win over the
 * C library's */
static long maps, unmaps;
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    maps++;
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}
int munmap(void *addr, size_t len) {
    unmaps++;
    return (int)syscall(SYS_munmap, addr, len);
}
#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
static int zero(const unsigned char *p, size_t n) { for (size_t i = 0; i < n; i++) if (p[i]) return 0; return 1; }
int main(void) {
    const size_t sizes[] = {0, 1, 8 * KIB, 64 * KIB, 4 * MIB};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        const size_t n = sizes[k] ? sizes[k] : 1;
        /* a buffer dirtied and given back: the next of the same size or smaller is mapped
         * again, zeroed and aligned, and the first was unmapped */
        const long m0 = maps, u0 = unmaps;
        unsigned char *a = cc_xalloc_pages(sizes[k]);
        memset(a, 0xab, n);
        cc_free_pages(a);
        unsigned char *b = cc_xalloc_pages(sizes[k]);
        printf("size %zu mapped %ld unmapped %ld zero %d aligned %d\n", sizes[k], maps - m0, unmaps - u0,
               zero(b, n), ((uintptr_t)b % CC_PAGE_BYTES) == 0);
        cc_free_pages(b);
    }
    cc_free_pages(NULL);
    printf("null_unmapped %ld\n", unmaps);
    return 0;
}
"""


@pytest.fixture(scope="module")
def buffers(tmp_path_factory) -> str:
    cc = compiler("mpicc", "mpicc.mpich", "mpicc.openmpi")  # cc_errors.c reports through MPI
    binary = build(tmp_path_factory.mktemp("buffers"), "buffers", DRIVER, COMMON, [COMMON / "cc_errors.c"], cc)
    done = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.parametrize("size", [0, 1, 8 << 10, 64 << 10, 4 << 20])
def test_each_buffer_is_mapped_afresh_zeroed_and_aligned_and_unmapped_when_given_back(buffers, size):
    assert f"size {size} mapped 2 unmapped 1 zero 1 aligned 1" in buffers


def test_giving_back_no_buffer_unmaps_nothing(buffers):
    # five sizes, each buffer given back twice: ten unmaps, none for NULL
    assert "null_unmapped 10" in buffers
