/* How much of a send buffer the program wrote since its last send from it.  A
 * message whose sender just wrote its lines costs more than the same message
 * sent again unchanged: the copy that moves it (the receiver's single copy, or
 * the library's) pulls lines held modified by the sender's core (the kernel's
 * `written` probe measures what that costs, docs/models.md).  The tracer samples
 * up to CCT_SAMPLES 8-byte words of each send buffer after its send call, inside
 * the call's span (the words are the sender's own lines: reading them moves no
 * line), and compares them with the words of the last send of the same size from
 * the same address: the first and last words are the buffer's ends, the others
 * spread evenly between them.  The result is a code of CC_WRITTEN_BITS in the
 * send's size field (cc_trace_format.h).  A word rewritten with its old value
 * passes for unwritten.  A fixed table, one slot per address hash: a loop's few
 * buffers keep their slots; a buffer whose slot another took is unknown at its
 * next send, as at its first. */
#include <string.h>

#include "cc_trace.h"

enum { CCT_SAMPLES = 16, CCT_WRITTEN_SLOTS = 1024 /* a power of two */ };

static struct cct_sampled {
    uintptr_t at; /* 0: free */
    uint64_t bytes;
    uint64_t word[CCT_SAMPLES];
} cct_sampled[CCT_WRITTEN_SLOTS];

/* where sample i of k lies in a buffer of n >= 16 bytes: 0, n - 8 and between */
static size_t cct_sample_at(uint64_t n, int i, int k)
{
    if (i == 0) return 0;
    if (i == k - 1) return (size_t)(n - 8);
    /* interior words evenly between the ends, 8-byte steps from the buffer's start */
    return (size_t)(n * (uint64_t)i / (uint64_t)(k - 1)) & ~(size_t)7;
}

uint64_t cct_written(const void *buf, int count, MPI_Datatype type)
{
    /* only data that lie contiguously from buf are read: a derived type's may lie
     * anywhere (below buf, or from MPI_BOTTOM), and its gaps may be unmapped */
    const uint64_t bytes = cct_bytes(count, type); /* > 0: count > 0, a type of bytes / count */
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    if (!buf || bytes == 0) return 0;
    const MPI_Aint size = (MPI_Aint)(bytes / (uint64_t)count);
    if (PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS
        || PMPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS || lb != 0
        || true_lb != 0 || extent != size || true_extent != size)
        return 0;
    const uintptr_t at = (uintptr_t)buf;
    struct cct_sampled *s =
        cct_sampled + ((at >> 4) * UINT64_C(0x9E3779B97F4A7C15) >> 54) % CCT_WRITTEN_SLOTS;
    const unsigned char *b = buf;
    uint64_t word[CCT_SAMPLES] = {0};
    int k;
    if (bytes < 16) {
        k = 1;
        memcpy(word, b, bytes < 8 ? (size_t)bytes : 8);
    } else {
        const uint64_t lines = (bytes + 63) / 64;
        k = lines < 2 ? 2 : lines > CCT_SAMPLES ? CCT_SAMPLES : (int)lines;
        for (int i = 0; i < k; i++) memcpy(word + i, b + cct_sample_at(bytes, i, k), 8);
    }
    const int known = s->at == at && s->bytes == bytes;
    int ends = 0, inside = 0;
    if (known)
        for (int i = 0; i < k; i++) {
            if (word[i] == s->word[i]) continue;
            if (i == 0 || i == k - 1) ends++;
            else inside++;
        }
    s->at = at;
    s->bytes = bytes;
    memcpy(s->word, word, sizeof word);
    if (!known || ends + inside == 0) return 0;
    uint64_t code;
    if (k <= 2) /* the ends are the whole buffer */
        code = CC_WRITTEN_WHOLE;
    else if (inside == 0)
        code = CC_WRITTEN_ENDS;
    else /* the share of the inside words changed, in fifths above ENDS + 1 */
        code = CC_WRITTEN_ENDS + 1 + ((uint64_t)inside * 10 / (uint64_t)(k - 2) + 1) / 2;
    return code << (CC_SIZE_BITS + CC_WRITTEN_SHIFT);
}
