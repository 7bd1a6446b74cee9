/* Window start synchronisation (--sync window, as ReproMPI and SKaMPI): every
 * rank's clock offset to rank 0, then per chunk a start time chosen by rank 0,
 * and repetition i of the chunk begun on every rank at start + i * length on
 * its offset-corrected clock.  A rank that reaches a start after it has passed
 * marks the repetition late; the measurement loop discards and redoes it. */
#ifndef CC_WINDOW_H
#define CC_WINDOW_H

#include <stdint.h>

#include "cc_op.h"

typedef struct cc_window {
    int64_t offset_ns; /* this rank's clock minus rank 0's (0 on rank 0) */
    int64_t rtt_ns;    /* rank 0: the largest over ranks of the least round trip */
    int64_t length_ns; /* one repetition's window */
    int64_t start_ns;  /* this chunk's first start, on this rank's own clock */
} cc_window;

/* Every participant: the offsets (offset only, no drift: the offset is taken
 * again for every point, so drift acts over one point's max-time at most), and
 * the window length, rank 0's choice broadcast: fixed_us when above 0, else
 * factor * estimate_ns + the round trip (the offsets' uncertainty). */
void cc_window_setup(cc_window *w, const cc_point *pt, double estimate_ns, double factor, double fixed_us);
/* Every participant, before a chunk: rank 0's start time, far enough ahead
 * for the broadcast to arrive, converted to this rank's clock. */
void cc_window_schedule(cc_window *w, const cc_point *pt);
/* This rank's clock at which repetition i of the chunk starts. */
static inline int64_t cc_window_at(const cc_window *w, long i)
{
    return w->start_ns + (int64_t)i * w->length_ns;
}
/* Busy-waits until `at`; 1 when this rank arrived after it (late), else 0. */
int cc_window_wait(int64_t at);

#endif
