/* Shared by the kernel, the tracer and the applications: MPI error checking,
 * error lines, fatal errors, checked allocation.  Every MPI call goes through
 * CC_MPI so a failure anywhere is reported the same way: one JSON error line,
 * then MPI_Abort. */
#ifndef CC_ERRORS_H
#define CC_ERRORS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define CC_KERNEL_VERSION 1
#define CC_EXIT_USAGE 2 /* bad option, plan or fault specification */
#define CC_EXIT_FATAL 3 /* MPI failure or exhausted memory (via MPI_Abort) */
#define CC_ERRLEN 512   /* room for any message the kernel composes */

#if defined(__GNUC__)
#define CC_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define CC_PRINTF(fmt, args)
#endif

void cc_mpi_fail(int rc, const char *call, const char *file, int line);

#define CC_MPI(call)                                                       \
    do {                                                                   \
        int cc_rc_ = (call);                                               \
        if (cc_rc_ != MPI_SUCCESS) cc_mpi_fail(cc_rc_, #call, __FILE__, __LINE__); \
    } while (0)

/* {"type":"error","message":...} on stdout, flushed (any rank may call it;
 * no allocation, so it also reports running out of memory) */
void cc_emit_error(const char *message);

_Noreturn void cc_die(const char *fmt, ...) CC_PRINTF(1, 2);

/* MPI_STATUSES_IGNORE through a variable: gcc 12 misreads MPICH's constant
 * ((MPI_Status *)1) as a zero-sized array and warns on every MPI_Waitall */
extern MPI_Status *cc_statuses_ignore;

void *cc_xmalloc(size_t size);
void *cc_xrealloc(void *ptr, size_t size);
#define CC_PAGE_BYTES 4096 /* the alignment of cc_xalloc_pages */
/* page-aligned, at least one byte even for size 0, so MPI never sees NULL,
 * every page touched and every byte zero; in pages mapped for it alone, never
 * from the heap, so a message buffer does not decide where the library's own
 * temporaries land in their pages (docs/method.md, "The library's temporary
 * buffers"); mapped afresh for each buffer, as a program's new buffer is */
void *cc_xalloc_pages(size_t size);
/* unmaps what cc_xalloc_pages returned (NULL: nothing) */
void cc_free_pages(void *ptr);

#endif
