/* noise: what the node takes from a rank while every rank works, after the
 * "selfish detour" benchmark (Beckman et al., 2006).
 *
 * Every rank of the point reads the clock in a tight loop for CC_NOISE_NS at
 * once; a gap between two reads of CC_NOISE_THRESHOLD_NS or more is a detour:
 * the rank was not running (an interrupt, a kernel thread, a hypervisor that
 * took the core).  A tightly coupled program pays a detour of any rank: its
 * partners wait for it, so the more ranks, the more often an iteration is held
 * up (Petrini, Kerbyson and Pakin, 2003).  The fit (commchar.models.noise)
 * turns the detours into a rate per rank and a length distribution, which the
 * simulator's replay draws from.
 *
 * The timed loop is a barrier (the point's time says nothing of the noise);
 * extra reports, on rank 0's line, each rank's detour count, time lost and the
 * seconds looped, and the detours of every rank in bins of length by powers of
 * two: how many and how long in all, so a bin's mean length is exact. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cc_op_data.h"
#include "cc_ops_mpi.h"

#define CC_NOISE_NS 500000000LL    /* each rank loops half a second */
#define CC_NOISE_THRESHOLD_NS 1000 /* a gap of 1 us or more is a detour */
#define CC_NOISE_BINS 32           /* detours of [2^k, 2^(k+1)) us, k < 32 (the last open) */

typedef struct {
    double summary[3];                   /* detours, ns lost, seconds looped */
    double bins[2 * CC_NOISE_BINS];      /* per bin: detours, ns lost */
    int rested;                          /* slept a real-time throttling period first */
} cc_noise_record;

/* the bin of a gap of gap_ns >= 1 us: floor(log2(gap in us)), the last open */
static int cc_noise_bin(int64_t gap_ns)
{
    int k = 0;
    for (int64_t us = gap_ns / 1000; us > 1 && k < CC_NOISE_BINS - 1; us >>= 1) k++;
    return k;
}

static void cc_noise_loop(cc_noise_record *rec)
{
    const int64_t start = cc_now_ns(), end = start + CC_NOISE_NS;
    int64_t prev = start;
    while (prev < end) {
        const int64_t now = cc_now_ns();
        const int64_t gap = now - prev;
        if (gap >= CC_NOISE_THRESHOLD_NS) {
            const int k = cc_noise_bin(gap);
            rec->bins[2 * k] += 1.0;
            rec->bins[2 * k + 1] += (double)gap;
            rec->summary[0] += 1.0;
            rec->summary[1] += (double)gap;
        }
        prev = now;
    }
    rec->summary[2] = (double)(prev - start) / 1e9;
}

/* A number from one /proc/sys file, or fallback when it cannot be read. */
static long cc_noise_sysctl(const char *path, long fallback)
{
    long value = fallback;
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%ld", &value) != 1) value = fallback;
        fclose(f);
    }
    return value;
}

/* A rank at real-time priority (chrt -f, as measurements run on a quiet machine) that
 * has kept its core busy for most of a second is stopped by the kernel's real-time
 * throttling (sched_rt_runtime_us of every sched_rt_period_us: 50 ms a second by
 * default): a detour its own long run causes, which a program of a few hundred
 * milliseconds never meets. The kernel takes the runtime off a core's real-time account
 * at the end of every period, so a rank that sleeps period - runtime within a period
 * cannot overrun it there, and a loop that starts early in the next one (a sleep across
 * its start) begins with the account empty. Such a rank sleeps twice that (100 ms by
 * default; none when the runtime is unlimited, -1), so that the loop (shorter than the
 * runtime) meets no throttling. Returns 1 when it slept. */
static int cc_noise_rest(void)
{
    const int policy = sched_getscheduler(0);
    if (policy != SCHED_FIFO && policy != SCHED_RR) return 0;
    long period_us = cc_noise_sysctl("/proc/sys/kernel/sched_rt_period_us", 1000000);
    if (period_us <= 0 || period_us > 10000000) period_us = 1000000;
    const long runtime_us = cc_noise_sysctl("/proc/sys/kernel/sched_rt_runtime_us", 950000);
    if (runtime_us < 0) return 0; /* unlimited: no throttling to wait out */
    long rest_us = runtime_us < period_us ? 2 * (period_us - runtime_us) : 0;
    if (rest_us > period_us) rest_us = period_us;
    if (rest_us == 0) return 0;
    struct timespec nap = {rest_us / 1000000, (rest_us % 1000000) * 1000};
    while (nanosleep(&nap, &nap) != 0) {
    }
    return 1;
}

static void cc_noise_setup(cc_point *pt)
{
    cc_coll_buffers(pt, 0, 0, 0);
    cc_noise_record *rec = cc_xmalloc(sizeof *rec);
    memset(rec, 0, sizeof *rec);
    rec->rested = cc_noise_rest();
    CC_MPI(MPI_Barrier(pt->comm));
    cc_noise_loop(rec);
    CC_MPI(MPI_Barrier(pt->comm));
    pt->attached = rec;
}

static void cc_noise_run(cc_point *pt, long count)
{
    for (long k = 0; k < count; k++) CC_MPI(MPI_Barrier(pt->comm));
}

/* each rank's detours, time lost and seconds looped, and the bins summed over ranks
 * ([lower bound us, detours, us lost] for each bin any rank hit), on rank 0's line */
static void cc_noise_extra(cc_point *pt, double main_median_us, cc_buf *json)
{
    (void)main_median_us;
    const cc_noise_record *own = pt->attached;
    const int p = pt->size, root = pt->rank == 0;
    double *summary = root ? cc_xmalloc((size_t)p * 3 * sizeof *summary) : NULL;
    double bins[2 * CC_NOISE_BINS];
    CC_MPI(MPI_Gather(own->summary, 3, MPI_DOUBLE, summary, 3, MPI_DOUBLE, 0, pt->ctl));
    CC_MPI(MPI_Reduce(own->bins, bins, 2 * CC_NOISE_BINS, MPI_DOUBLE, MPI_SUM, 0, pt->ctl));
    if (!root) return;
    cc_buf_key(json, "noise_threshold_us");
    cc_buf_printf(json, "%.3f", CC_NOISE_THRESHOLD_NS / 1000.0);
    cc_buf_key(json, "noise_realtime_rested");
    cc_buf_printf(json, "%s", own->rested ? "true" : "false");
    static const char *const keys[] = {"noise_detours_rank", "noise_lost_us_rank", "noise_seconds_rank"};
    static const double scales[] = {1.0, 1e-3, 1.0};
    for (int k = 0; k < 3; k++) {
        cc_buf_key(json, keys[k]);
        cc_buf_printf(json, "[");
        for (int r = 0; r < p; r++) cc_buf_printf(json, "%s%.6g", r ? "," : "", summary[3 * r + k] * scales[k]);
        cc_buf_printf(json, "]");
    }
    cc_buf_key(json, "noise_bins");
    cc_buf_printf(json, "[");
    int first = 1;
    for (int k = 0; k < CC_NOISE_BINS; k++) {
        if (bins[2 * k] == 0.0) continue;
        cc_buf_printf(json, "%s[%lld,%.0f,%.3f]", first ? "" : ",", 1LL << k, bins[2 * k], bins[2 * k + 1] / 1000.0);
        first = 0;
    }
    cc_buf_printf(json, "]");
    free(summary);
}

static void cc_noise_cleanup(cc_point *pt)
{
    free(pt->attached);
    pt->attached = NULL;
    cc_coll_cleanup(pt);
}

const cc_op cc_op_noise = {
    .name = "noise",
    .scope = CC_SCOPE_ALL,
    .phases = 1,
    .check_size = cc_size_zero,
    .setup = cc_noise_setup,
    .run = cc_noise_run,
    .extra = cc_noise_extra,
    .cleanup = cc_noise_cleanup,
};
