#include "cc_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cc_cache.h"
#include "cc_measure.h"
#include "cc_prewarm.h"
#include "cc_report.h"

/* Under --warmup series a later point of a plan entry keeps the time floor
 * where its messages reach a page no earlier message of the entry reached (the
 * first size of the entry in each 4 KiB step, up to CC_FLOOR_PAGES_UP_TO
 * bytes: TCP's eager limit, the largest of the libraries here), since they
 * may go through library buffers whose memory no message has touched yet.
 * MPICH over UCX sends each eager message through one element of a FIFO of 64
 * per direction, and a 4 KiB message reaches a page of each element that
 * messages of 256 B did not: ended at its first two agreeing rounds (17 calls,
 * each faulting a page in), a ping-pong of 4 KiB after 0 to 256 B measured
 * 5.5 us a message where it takes 0.65 (three launches each,
 * `pingpong:send=0,1,16,256,4096`, p = 2, 2 cores; 0.65 with
 * UCX_MM_FIFO_SIZE=16 or with --warmup point). */
#define CC_FLOOR_PAGES_UP_TO ((size_t)64 << 10)

static size_t cc_pages_reached(size_t n)
{
    return n > CC_FLOOR_PAGES_UP_TO ? 0 : n / CC_PAGE_BYTES + 1;
}

static void cc_point_init(cc_point *pt, const cc_env *env, const cc_entry *entry, size_t n, int seed)
{
    memset(pt, 0, sizeof *pt);
    pt->op = entry->op;
    pt->variant = entry->variant;
    pt->variant_name = entry->op->variants ? entry->op->variants[entry->variant] : "";
    pt->n = n;
    pt->seed = seed;
    pt->env = env;
    const int pair = entry->op->scope == CC_SCOPE_PAIR;
    pt->comm = pair ? env->pair : env->all;
    pt->ctl = pair ? env->pair_ctl : env->all_ctl;
    if (pair)
        pt->sync = &cc_sync_none;
    else if (env->opt->sync == &cc_sync_auto)
        pt->sync = entry->op->synchronizing ? &cc_sync_none : &cc_sync_barrier;
    else
        pt->sync = env->opt->sync;
    pt->window = env->opt->window;
    pt->reduce_op = MPI_OP_NULL;
    pt->scale = 1.0;
    pt->batch = 1;
    if (pt->comm != MPI_COMM_NULL) {
        CC_MPI(MPI_Comm_rank(pt->comm, &pt->rank));
        CC_MPI(MPI_Comm_size(pt->comm, &pt->size));
    }
}

/* the injected faults that stop the run, at the point they name */
static void cc_inject_stop(cc_fault_kind kind, int world_rank)
{
    if (kind == CC_FAULT_HANG && world_rank == 0) {
        struct timespec hour = {3600, 0};
        for (;;) nanosleep(&hour, NULL);
    }
    if (kind == CC_FAULT_CRASH && world_rank == 1) abort();
}

size_t cc_run_plan(const cc_env *env, const cc_fault *fault)
{
    const cc_options *opt = env->opt;
    const int root = env->world_rank == 0;
    cc_buf out, extra;
    cc_buf_init(&out);
    cc_buf_init(&extra);
    size_t points = 0;
    int seed = 0;
    /* the library's eager path, warmed once, after the points that measure a process's first
     * traffic and before any other (cc_prewarm.h); the next measured point reports how long
     * it took (-1: not yet run, or reported) */
    int prewarm_pending = opt->prewarm;
    double prewarm_s = -1.0;
    for (size_t e = 0; e < opt->nentries; e++) {
        const cc_entry *entry = &opt->entries[e];
        if (prewarm_pending && !entry->op->first_traffic) {
            prewarm_s = cc_prewarm(env);
            prewarm_pending = 0;
        }
        int warmed = 0; /* a point of this entry was measured: its connections and paths are set up */
        size_t pages_reached = 0; /* the most pages (cc_pages_reached) a point of this entry reached */
        for (size_t k = 0; k < entry->nsizes; k++) {
            const int64_t start = cc_now_ns();
            cc_point pt;
            cc_point_init(&pt, env, entry, entry->sizes[k], ++seed);
            if (root) cc_report_begin(&out, &pt);
            const char *missing = pt.op->unsupported ? pt.op->unsupported() : NULL;
            char why[CC_ERRLEN];
            if (!missing && opt->cache_cold && pt.op->bound_buffers) {
                snprintf(why, sizeof why, "--cache cold: %s", pt.op->bound_buffers);
                missing = why;
            }
            if (missing) { /* the same answer on every rank: nobody measures */
                if (root) cc_report_unsupported(&out, &pt, missing);
                points++;
                continue;
            }
            cc_fault_kind injected = cc_fault_at(fault, pt.op->name, pt.variant_name, pt.n);
            cc_inject_stop(injected, env->world_rank);
            pt.inject_late = injected == CC_FAULT_LATE;

            cc_series series;
            memset(&series, 0, sizeof series);
            char error[CC_ERRLEN] = "";
            int valid = 1;
            extra.len = 0;
            cc_buf_printf(&extra, "{");
            /* where ranks 0 and 1 ran, before and after: a host that moved them moved the times.
             * The probe before is not the last point's after, though nothing but a barrier and a
             * report line lies between: while it spins, the runner stores the line just printed
             * (0.2-0.3 ms of CPU on cores the ranks share).  Without it that work fell into the
             * next point's first samples: over the points of at most 1 KiB of an adaptive MPICH
             * run on 2 cores, the mean was 1.21 times the median and p95 2.03 times, against
             * 1.02 and 1.18 with it. */
            const cc_core_sample distance_before = cc_core_distance_sample(env->core_distance);
            if (pt.comm != MPI_COMM_NULL) { /* ranks outside a pair wait at the barrier */
                cc_limits lim;
                cc_limits_from_options(opt, pt.op->phases, &lim);
                if (entry->precision > 0.0) lim.precision = entry->precision;
                if (entry->min_reps > 0) lim.min_reps = entry->min_reps;
                /* --warmup series: a later point of the entry warms up until steady, with no
                 * floor, unless its messages reach a page the entry's did not */
                const size_t pages = cc_pages_reached(pt.n);
                if (opt->warmup_series && warmed && pages <= pages_reached) lim.warmup_min_time = 0.0;
                pt.limits = &lim;
                pt.op->setup(&pt);
                const char *refused = cc_cache_setup(&pt, why, sizeof why);
                if (refused) { /* the same answer on every participant */
                    pt.op->cleanup(&pt);
                    CC_MPI(MPI_Barrier(env->all_ctl));
                    if (root) cc_report_unsupported(&out, &pt, refused);
                    points++;
                    continue;
                }
                cc_measure(&pt, &lim, &series);
                warmed = 1; /* measured: its messages reached these pages (a refused point sent none) */
                if (pages > pages_reached) pages_reached = pages;
                valid = cc_verify(&pt, injected == CC_FAULT_CORRUPT, error, sizeof error);
                if (pt.op->extra) pt.op->extra(&pt, series.median_us, &extra);
                if (root) { /* how long the warm-up was, and whether it settled or hit --warmup-time */
                    cc_buf_key(&extra, "warmup_s");
                    cc_buf_num(&extra, series.warmup_s);
                    cc_buf_key(&extra, "warmup_end");
                    cc_buf_str(&extra, series.warmup_steady ? "steady" : "time");
                    cc_buf_key(&extra, "warmup_min_s");
                    cc_buf_num(&extra, lim.warmup_min_time);
                    if (prewarm_s >= 0.0) {
                        cc_buf_key(&extra, "prewarm_s");
                        cc_buf_num(&extra, prewarm_s);
                        prewarm_s = -1.0;
                    }
                }
                if (root && series.windowed) cc_report_window(&extra, &series);
                if (root && series.rank_median_us) { /* stragglers: each rank's own median */
                    cc_buf_key(&extra, "rank_median_us");
                    cc_buf_printf(&extra, "[");
                    for (int r = 0; r < series.ranks; r++) {
                        if (r) cc_buf_printf(&extra, ",");
                        cc_buf_num(&extra, series.rank_median_us[r]);
                    }
                    cc_buf_printf(&extra, "]");
                }
                cc_cache_release(&pt);
                pt.op->cleanup(&pt);
            }
            const cc_core_sample distance_after = cc_core_distance_sample(env->core_distance);
            if (root) cc_core_distance_json(&extra, distance_before, distance_after);
            cc_buf_printf(&extra, "}");
            CC_MPI(MPI_Barrier(env->all_ctl));
            if (root)
                cc_report_point(&out, &pt, &series, valid, error, (double)(cc_now_ns() - start) * 1e-9,
                                &extra);
            cc_series_free(&series);
            points++;
        }
    }
    cc_buf_free(&out);
    cc_buf_free(&extra);
    return points;
}
