#include "cc_window.h"

#include <math.h>
#include <time.h>

/* waits longer than this sleep until this much before the start (a sleep's
 * wake-up is late by tens of microseconds), then spin */
#define CC_SLEEP_ABOVE_NS 200000
/* ping-pong rounds per rank for its offset: the least round trip wins (SKaMPI) */
#define CC_CLOCK_ROUNDS 16

/* rank r against rank 0, CC_CLOCK_ROUNDS times: rank r sends, rank 0 answers
 * with its clock; the offset assumes the reply's time was half-way */
static void cc_clock_offset(cc_window *w, const cc_point *pt, int r)
{
    int64_t theirs = 0, best = INT64_MAX;
    for (int k = 0; k < CC_CLOCK_ROUNDS; k++) {
        if (pt->rank == 0) {
            CC_MPI(MPI_Recv(&theirs, 1, MPI_INT64_T, r, CC_TAG_CLOCK, pt->ctl, MPI_STATUS_IGNORE));
            theirs = cc_now_ns();
            CC_MPI(MPI_Send(&theirs, 1, MPI_INT64_T, r, CC_TAG_CLOCK, pt->ctl));
        } else {
            const int64_t t0 = cc_now_ns();
            CC_MPI(MPI_Send(&t0, 1, MPI_INT64_T, 0, CC_TAG_CLOCK, pt->ctl));
            CC_MPI(MPI_Recv(&theirs, 1, MPI_INT64_T, 0, CC_TAG_CLOCK, pt->ctl, MPI_STATUS_IGNORE));
            const int64_t t1 = cc_now_ns();
            if (t1 - t0 < best) {
                best = t1 - t0;
                w->offset_ns = t0 + (t1 - t0) / 2 - theirs;
            }
        }
    }
    if (pt->rank != 0) w->rtt_ns = best;
}

void cc_window_setup(cc_window *w, const cc_point *pt, double estimate_ns, double factor, double fixed_us)
{
    w->offset_ns = 0;
    w->rtt_ns = 0;
    w->start_ns = 0;
    for (int r = 1; r < pt->size; r++)
        if (pt->rank == 0 || pt->rank == r) cc_clock_offset(w, pt, r);
    int64_t mine = w->rtt_ns, worst = 0;
    CC_MPI(MPI_Reduce(&mine, &worst, 1, MPI_INT64_T, MPI_MAX, 0, pt->ctl));
    int64_t length = 0;
    if (pt->rank == 0) {
        w->rtt_ns = worst;
        const double ns = fixed_us > 0.0 ? fixed_us * 1e3 : factor * estimate_ns + (double)worst;
        length = ns < 1.0 ? 1 : ns > 1e15 ? (int64_t)1e15 : (int64_t)llround(ns);
    }
    CC_MPI(MPI_Bcast(&length, 1, MPI_INT64_T, 0, pt->ctl));
    w->length_ns = length;
}

void cc_window_schedule(cc_window *w, const cc_point *pt)
{
    int64_t start = 0;
    /* a window and a few round trips ahead: the broadcast reaches every rank
     * first unless a rank is descheduled (then its first repetition is late) */
    if (pt->rank == 0) start = cc_now_ns() + w->length_ns + 4 * w->rtt_ns;
    CC_MPI(MPI_Bcast(&start, 1, MPI_INT64_T, 0, pt->ctl));
    w->start_ns = start + w->offset_ns;
}

int cc_window_wait(int64_t at)
{
    int64_t now = cc_now_ns();
    if (now > at) return 1;
    /* sleep through most of a long wait: a rank that spins for a whole window on a
     * shared machine is the one the scheduler takes the core from */
    if (at - now > CC_SLEEP_ABOVE_NS) {
        const int64_t ns = at - now - CC_SLEEP_ABOVE_NS;
        struct timespec nap = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
        nanosleep(&nap, NULL);
        now = cc_now_ns();
    }
    while (now < at) now = cc_now_ns();
    return 0;
}
