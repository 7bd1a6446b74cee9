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

/* Mappings given back are kept, up to CC_POOL_SLOTS of them, for the next
 * buffer they fit: a plan that measures up to 4 MiB op after op maps its
 * largest buffers and faults their pages in once, not at every point (on a
 * 2-vCPU virtual machine a 4 MiB ping-pong's set-up took 7 ms with fresh pages,
 * 0.8 ms with kept ones, zeroed again).  Only mappings of
 * CC_POOL_MIN_BYTES or more are kept (smaller ones cost little to map), one is
 * reused for a buffer at most CC_POOL_FIT times smaller (a small point does not
 * take the mapping the next large one needs), and the bytes kept never exceed
 * the most the kernel's buffers held at once: at most twice what the plan itself
 * needs.  The kernel is single-threaded. */
#define CC_POOL_SLOTS 6
#define CC_POOL_MIN_BYTES ((size_t)64 << 10)
#define CC_POOL_FIT 4
static unsigned char *cc_pool[CC_POOL_SLOTS];
static size_t cc_pool_kept, cc_pages_held, cc_pages_peak; /* bytes: kept; in buffers now; at most */

static size_t cc_mapping_len(const unsigned char *base)
{
    size_t len;
    memcpy(&len, base, sizeof len);
    return len;
}

/* a kept mapping of len bytes or more (the smallest), taken out of the pool; NULL: none */
static unsigned char *cc_pool_take(size_t len)
{
    int best = -1;
    for (int i = 0; i < CC_POOL_SLOTS; i++) {
        if (!cc_pool[i]) continue;
        const size_t have = cc_mapping_len(cc_pool[i]);
        if (have >= len && have / CC_POOL_FIT <= len && (best < 0 || have < cc_mapping_len(cc_pool[best])))
            best = i;
    }
    if (best < 0) return NULL;
    unsigned char *base = cc_pool[best];
    cc_pool[best] = NULL;
    cc_pool_kept -= cc_mapping_len(base);
    return base;
}

/* an empty slot, -1: none */
static int cc_pool_empty(void)
{
    for (int i = 0; i < CC_POOL_SLOTS; i++)
        if (!cc_pool[i]) return i;
    return -1;
}

/* the slot of the smallest kept mapping, -1: none kept */
static int cc_pool_smallest(void)
{
    int found = -1;
    for (int i = 0; i < CC_POOL_SLOTS; i++)
        if (cc_pool[i] && (found < 0 || cc_mapping_len(cc_pool[i]) < cc_mapping_len(cc_pool[found]))) found = i;
    return found;
}

/* keeps a mapping given back, dropping smaller kept ones to make room; or unmaps it */
static void cc_pool_keep(unsigned char *base)
{
    const size_t len = cc_mapping_len(base);
    for (;;) {
        const int empty = cc_pool_empty();
        if (len >= CC_POOL_MIN_BYTES && empty >= 0 && cc_pool_kept + len <= cc_pages_peak) {
            cc_pool[empty] = base;
            cc_pool_kept += len;
            return;
        }
        const int smallest = cc_pool_smallest();
        if (len < CC_POOL_MIN_BYTES || len > cc_pages_peak || smallest < 0 ||
            cc_mapping_len(cc_pool[smallest]) >= len) {
            munmap(base, len);
            return;
        }
        cc_pool_kept -= cc_mapping_len(cc_pool[smallest]);
        munmap(cc_pool[smallest], cc_mapping_len(cc_pool[smallest]));
        cc_pool[smallest] = NULL;
    }
}

void *cc_xalloc_pages(size_t size)
{
    /* one page ahead holds the mapping's length for cc_free_pages */
    const size_t len = CC_PAGE_BYTES + (size ? size : 1);
    unsigned char *base = cc_pool_take(len);
    if (!base) {
        base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED) cc_die("out of memory allocating a %zu-byte message buffer", size);
        memcpy(base, &len, sizeof len);
    }
    cc_pages_held += cc_mapping_len(base);
    if (cc_pages_held > cc_pages_peak) cc_pages_peak = cc_pages_held;
    /* touch every page now, so first-touch faults never land in a measurement; a kept
     * mapping's pages are in already, and its bytes are zeroed as a fresh one's are */
    memset(base + CC_PAGE_BYTES, 0, len - CC_PAGE_BYTES);
    return base + CC_PAGE_BYTES;
}

void cc_free_pages(void *ptr)
{
    if (!ptr) return;
    unsigned char *base = (unsigned char *)ptr - CC_PAGE_BYTES;
    cc_pages_held -= cc_mapping_len(base);
    cc_pool_keep(base);
}
