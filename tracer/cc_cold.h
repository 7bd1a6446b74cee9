/* Bytes of a buffer that lie in pages not yet resident (never touched, or swapped out):
 * what receiving into it will first fault in. No MPI: the tracer and the bench share it. */
#ifndef CC_COLD_H
#define CC_COLD_H

#include <stdint.h>

/* mincore(2) over [buf, buf + len), in chunks; a range not fully mapped counts up to where
 * mapping stops (such memory is not the program's to receive into). */
uint64_t cc_cold_bytes(const void *buf, uint64_t len);

#endif
