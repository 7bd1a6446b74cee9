/* Error lines, fatal-error reporting and checked allocation: the bottom of the
 * shared C code (it uses nothing else of it). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "cc_errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

MPI_Status *cc_statuses_ignore = MPI_STATUSES_IGNORE;

void cc_emit_error(const char *message)
{
    /* no allocation here: this also reports running out of memory */
    char line[4 * CC_ERRLEN];
    size_t at = (size_t)snprintf(line, sizeof line, "{\"type\":\"error\",\"message\":\"");
    for (const unsigned char *c = (const unsigned char *)message; *c && at + 8 < sizeof line; c++) {
        if (*c == '"' || *c == '\\') {
            line[at++] = '\\';
            line[at++] = (char)*c;
        } else if (*c < 0x20) {
            at += (size_t)snprintf(line + at, sizeof line - at, "\\u%04x", *c);
        } else {
            line[at++] = (char)*c;
        }
    }
    snprintf(line + at, sizeof line - at, "\"}\n");
    fputs(line, stdout);
    fflush(stdout);
}

/* Whether MPI calls are allowed now: after MPI_Init and before MPI_Finalize
 * (a failed MPI_Init or MPI_Finalize is reported through here too). */
static int cc_mpi_running(void)
{
    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    return up && !down;
}

static int cc_world_rank(void)
{
    int rank = -1;
    if (cc_mpi_running()) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

_Noreturn static void cc_abort(const char *message)
{
    cc_emit_error(message);
    if (cc_mpi_running()) MPI_Abort(MPI_COMM_WORLD, CC_EXIT_FATAL);
    exit(CC_EXIT_FATAL);
}

void cc_mpi_fail(int rc, const char *call, const char *file, int line)
{
    char reason[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(rc, reason, &len) != MPI_SUCCESS)
        snprintf(reason, sizeof reason, "MPI error code %d", rc);
    char message[CC_ERRLEN + MPI_MAX_ERROR_STRING];
    snprintf(message, sizeof message, "rank %d: %.200s failed (%s:%d): %s", cc_world_rank(),
             call, file, line, reason);
    cc_abort(message);
}

void cc_die(const char *fmt, ...)
{
    char detail[CC_ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    char message[CC_ERRLEN + 32];
    snprintf(message, sizeof message, "rank %d: %s", cc_world_rank(), detail);
    cc_abort(message);
}

void *cc_xmalloc(size_t size)
{
    void *ptr = malloc(size ? size : 1);
    if (!ptr) cc_die("out of memory allocating %zu bytes", size);
    return ptr;
}

void *cc_xrealloc(void *ptr, size_t size)
{
    void *grown = realloc(ptr, size ? size : 1);
    if (!grown) cc_die("out of memory growing a buffer to %zu bytes", size);
    return grown;
}

/* Every buffer is mapped afresh and unmapped when given back, as a program's
 * buffers are new to it.  Reusing a mapping given back for the next buffer it
 * fits sets points up faster (a 4 MiB ping-pong 0.8 ms instead of 7) but
 * measures faster than the program: a buffer in pages an earlier, larger one
 * had copied through runs a copy-bound collective 8% faster (MPICH's alltoall
 * of 256 KiB; docs/kernel-protocol.md, "Measurement procedure"). */
static size_t cc_mapping_len(const unsigned char *base)
{
    size_t len;
    memcpy(&len, base, sizeof len);
    return len;
}

void *cc_xalloc_pages(size_t size)
{
    /* one page ahead holds the mapping's length for cc_free_pages */
    const size_t len = CC_PAGE_BYTES + (size ? size : 1);
    unsigned char *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) cc_die("out of memory allocating a %zu-byte message buffer", size);
    memcpy(base, &len, sizeof len);
    /* every page touched now, so first-touch faults never land in a measurement */
    memset(base + CC_PAGE_BYTES, 0, len - CC_PAGE_BYTES);
    return base + CC_PAGE_BYTES;
}

void cc_free_pages(void *ptr)
{
    if (!ptr) return;
    unsigned char *base = (unsigned char *)ptr - CC_PAGE_BYTES;
    munmap(base, cc_mapping_len(base));
}
