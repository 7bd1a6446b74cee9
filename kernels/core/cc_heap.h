/* Where the library's temporary buffers come from.
 *
 * An MPI library allocates temporaries inside some calls (MPICH's
 * MPI_Sendrecv_replace packs into a malloc'd buffer, a reduction's
 * algorithm receives into one) and frees them before it returns.  With
 * glibc's default settings the cost of such a call depends on the heap's
 * history: a temporary that lands at the top of the heap is given back to
 * the system when it is freed (the top exceeds the trim threshold) and
 * faults its pages in again on the next call, which on this machine makes an
 * MPICH MPI_Sendrecv_replace of 256 KiB 2 to 3 times as slow; one that lands
 * below live blocks is reused warm.  A program's loop pays one or the other
 * depending on what it allocated before.  The kernel measures the library,
 * not that lottery: cc_heap_steady fixes glibc's thresholds at the values its dynamic
 * rule reaches at most (mmap above 32 MiB, trim above 64 MiB), so every
 * temporary below 32 MiB is reused warm, as in a loop whose heap holds its
 * pages.  `--heap as-is` keeps glibc's defaults. */
#ifndef CC_HEAP_H
#define CC_HEAP_H

/* 0 when the thresholds were set; -1 where the C library has no such
 * settings (not glibc) or refused them */
int cc_heap_steady(void);

#endif
