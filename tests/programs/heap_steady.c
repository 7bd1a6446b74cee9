/* What cc_heap_steady does to glibc's heap, without MPI:
 *   heap_steady steady|as-is
 * prints "heap_steady: from_heap=F kept=K" where K says whether the heap kept
 * the pages of two freed 100 KiB blocks at its top (did not trim them) and F
 * whether a 256 KiB block then came from the heap (not a mapping of its own). */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cc_heap.h"

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    if (strcmp(argv[1], "steady") == 0 && cc_heap_steady() != 0) {
        puts("heap_steady: the thresholds were refused");
        return 1;
    }
    /* the trim first: freeing a mapped block would raise glibc's own thresholds */
    char *a = malloc(100 * 1024), *b = malloc(100 * 1024);
    if (!a || !b) return 1;
    memset(a, 1, 100 * 1024);
    memset(b, 1, 100 * 1024);
    char *top = sbrk(0);
    free(b);
    free(a);
    int kept = (char *)sbrk(0) == top;
    char *base = sbrk(0);
    char *big = malloc(256 * 1024);
    if (!big) return 1;
    memset(big, 1, 256 * 1024);
    int from_heap = big >= base - (64 << 20) && big < (char *)sbrk(0);
    free(big);
    printf("heap_steady: from_heap=%d kept=%d\n", from_heap, kept);
    return 0;
}
