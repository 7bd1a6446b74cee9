#include "cc_measure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_cache.h"
#include "cc_stats.h"
#include "cc_window.h"

enum { CC_STOP_GO = 0, CC_STOP_PRECISION, CC_STOP_MAX_REPS, CC_STOP_MAX_TIME, CC_STOP_LATE, CC_STOP_UNREACHABLE };
static const char *const cc_stop_names[] = {"", "precision", "max_reps", "max_time", "late", "unreachable"};
/* a point stops "unreachable" once it has spent this share of max-time and
 * has this many samples (and min-reps), when the CI says reaching the
 * precision would take more than this many times max-time longer */
#define CC_UNREACHABLE_AFTER 0.5
#define CC_UNREACHABLE_MIN_REPS 100
#define CC_UNREACHABLE_FACTOR 4.0

#define CC_MAX_BATCH (1L << 20)
/* repetitions at least this long need no re-alignment before a chunk: the
 * skew left by the control messages (microseconds) is lost in them */
#define CC_RESYNC_BELOW_NS 1e6
/* --sync window: untimed runs whose median sizes the window */
#define CC_ESTIMATE_RUNS 9

void cc_limits_from_options(const cc_options *opt, int phases, cc_limits *lim)
{
    lim->precision = opt->precision;
    lim->min_reps = opt->min_reps;
    lim->max_reps = opt->max_reps;
    lim->max_time = opt->max_time / (phases > 0 ? phases : 1);
    lim->warmup_time = opt->warmup_time;
    lim->warmup_min_time = opt->warmup_min_time < opt->warmup_time ? opt->warmup_min_time : opt->warmup_time;
    lim->warmup_round_time = opt->warmup_round_time < opt->warmup_time ? opt->warmup_round_time : opt->warmup_time;
    lim->batch_threshold = opt->batch_threshold;
    lim->batch_min_us = opt->batch_min_us;
    lim->sync_window_factor = opt->sync_window_factor;
    lim->sync_window_us = opt->sync_window_us;
}

/* untimed steps of one repetition: start synchronisation, then the op's own */
static void cc_prepare(cc_point *pt)
{
    if (pt->sync->start) pt->sync->start(pt->comm);
    if (pt->op->before) pt->op->before(pt);
}

/* calls per sample: enough that the sample spans `threshold` timer resolutions and at
 * least min_us; a sample's bounds (two timer reads, and where the slowest rank's time is
 * kept, the skew between the ranks' starts) cost the same however many calls it holds */
static long cc_batch_for(double per_call_ns, double resolution_ns, double threshold, double min_us)
{
    double target = fmax(threshold * resolution_ns, min_us * 1000.0);
    if (per_call_ns < 1.0) per_call_ns = 1.0;
    if (per_call_ns >= target) return 1;
    double batch = ceil(target / per_call_ns);
    return batch > (double)CC_MAX_BATCH ? CC_MAX_BATCH : (long)batch;
}

static long cc_clamp(double v, long lo, long hi)
{
    if (!(v >= (double)lo)) return lo; /* also NaN */
    if (v >= (double)hi) return hi;
    return (long)v;
}

/* Untimed warm-up in rounds, until the per-call time has settled: two
 * consecutive representative rounds (8 calls, or warmup_round_time)
 * whose means agree within CC_WARMUP_STEADY, once warmup_min_time has passed;
 * or, for a point that never settles, until warmup_time (the cap) has passed.
 * At least two calls either way.  A fixed time would spend the whole cap on
 * every point: 5 ms is 25,000 calls of a 0.2 us ping-pong, where connections
 * and buffers are in place after the first few.  Rounds double until the least
 * time, then keep their length (or shrink to the fewest calls that are
 * representative) so that consecutive means compare like with like.
 * Rank 0 decides from the rounds, broadcast to every participant: the batch,
 * and the first chunk (small, and short enough for max_time). */
#define CC_WARMUP_STEADY 0.05

/* What rank 0 decides after each warm-up round, broadcast as CC_WARMUP_LONGS longs. */
typedef struct cc_warmup_decision {
    long next_round;  /* calls in the next round; 0: warm-up done */
    long batch;       /* calls per timed sample */
    long first_chunk; /* repetitions of the first chunk */
    long resync;      /* nonzero: resynchronise before each sample */
    long steady;      /* nonzero: the round means settled */
} cc_warmup_decision;
#define CC_WARMUP_LONGS 5
_Static_assert(sizeof(cc_warmup_decision) == CC_WARMUP_LONGS * sizeof(long),
               "cc_warmup_decision is broadcast as an array of longs");

static void cc_warmup(cc_point *pt, const cc_limits *lim, cc_series *out, long *first_chunk, int *resync)
{
    const double res = pt->env->timer.resolution_ns;
    const int64_t start = cc_now_ns();
    long round = 1, total = 0;
    cc_warmup_decision decision = {.next_round = 0, .batch = 1, .first_chunk = 1, .resync = 1, .steady = 0};
    double fastest = INFINITY;    /* rank 0: least per-call time of any round */
    double previous = -1.0;       /* rank 0: the last representative round's mean, -1: none */
    pt->batch = 1;
    for (;;) {
        const int64_t round_start = cc_now_ns();
        double busy = 0.0;
        for (long i = 0; i < round; i++) {
            cc_cache_next(pt);
            cc_prepare(pt);
            const int64_t t0 = cc_now_ns();
            pt->op->run(pt, 1);
            const int64_t t1 = cc_now_ns();
            busy += (double)(t1 - t0);
        }
        total += round;
        double mine = pt->timed ? busy / (double)round : 0.0, per_call = 0.0;
        CC_MPI(MPI_Reduce(&mine, &per_call, 1, MPI_DOUBLE, MPI_MAX, 0, pt->ctl));
        if (pt->rank == 0) {
            /* the least round mean: one-off stalls (connection set-up, a
             * descheduled peer) must not switch batching off */
            if (per_call < fastest) fastest = per_call;
            const int64_t now = cc_now_ns();
            const double elapsed = (double)(now - start) * 1e-9;
            double wall = (double)(now - round_start) / (double)round; /* ns, with prepare */
            if (wall < 1.0) wall = 1.0;
            /* the batch is decided from a round of several calls (or a long
             * one), not from the first calls, which set up connections */
            const double round_s = (double)(now - round_start) * 1e-9;
            const int representative = round >= 8 || round_s >= lim->warmup_round_time;
            const int steady = representative && previous >= 0.0 &&
                               fabs(per_call - previous) <= CC_WARMUP_STEADY * fmin(per_call, previous);
            if (representative) previous = per_call;
            const int settled = steady && elapsed >= lim->warmup_min_time;
            if (total >= 2 && representative && (settled || elapsed >= lim->warmup_time)) {
                decision.next_round = 0;
                /* cold: one repetition per sample, as a batch would repeat one slot;
                 * window: one call per window, as ReproMPI times it (back-to-back calls
                 * would overlap, and their mean is a throughput, not one call's time);
                 * unbatched: the op times a burst of its own, which a batch would lengthen */
                decision.batch = pt->rot.region || pt->sync->windowed || pt->op->unbatched
                                  ? 1
                                  /* a lone call's time holds one timer read: an operation of
                                   * 10 ns looked 3 times longer, was batched 3 times too little,
                                   * and its samples spanned too few ticks for a 1% CI */
                                  : cc_batch_for(fastest - pt->env->timer.cost_ns, res,
                                                 lim->batch_threshold, lim->batch_min_us);
                long first = lim->min_reps < lim->max_reps ? lim->min_reps : lim->max_reps;
                decision.first_chunk = cc_clamp(lim->max_time * 1e9 / (wall * (double)decision.batch), 1, first);
                decision.resync = wall * (double)decision.batch < CC_RESYNC_BELOW_NS;
                decision.steady = settled;
            } else if (elapsed < lim->warmup_min_time) {
                decision.next_round = cc_clamp(ceil((lim->warmup_min_time - elapsed) * 1e9 / wall), 1, 2 * round);
            } else if (elapsed < lim->warmup_time) {
                /* as long as the last round, or the fewest calls that are representative
                 * (8, or one long call), within the time left */
                const long least = cc_clamp(ceil(lim->warmup_round_time * 1e9 / wall), 1, 8);
                decision.next_round = cc_clamp(ceil((lim->warmup_time - elapsed) * 1e9 / wall), 1,
                                               round > least ? round : least);
            } else {
                decision.next_round = cc_clamp(ceil(lim->warmup_round_time * 1e9 / wall), 1, 8);
            }
        }
        CC_MPI(MPI_Bcast(&decision, CC_WARMUP_LONGS, MPI_LONG, 0, pt->ctl));
        if (decision.next_round == 0) break;
        round = decision.next_round;
    }
    out->warmup = total;
    out->warmup_s = (double)(cc_now_ns() - start) * 1e-9;
    out->warmup_steady = decision.steady != 0;
    out->batch = decision.batch;
    *first_chunk = decision.first_chunk;
    *resync = decision.resync != 0;
}

static void cc_series_reserve(cc_series *s, long need, double **scratch)
{
    if (need <= s->cap) return;
    long cap = s->cap ? s->cap : 64;
    while (cap < need) cap *= 2;
    s->samples_us = cc_xrealloc(s->samples_us, (size_t)cap * sizeof(double));
    s->sorted_us = cc_xrealloc(s->sorted_us, (size_t)cap * sizeof(double));
    *scratch = cc_xrealloc(*scratch, (size_t)cap * sizeof(double));
    s->cap = cap;
}

/* rank 0: the CI test on everything measured so far */
static void cc_evaluate(cc_series *s, const cc_limits *lim, double reference_us)
{
    cc_ci ci = cc_median_ci(s->sorted_us, (size_t)s->n);
    double below = ci.median - ci.lo, above = ci.hi - ci.median;
    double widest = below > above ? below : above;
    /* samples come in whole timer ticks: order statistics that agree to the tick
     * (a VM's clock may tick every 20 ns) bound the median no closer than half of one */
    if (widest < 0.5 * s->tick_us) widest = 0.5 * s->tick_us;
    double scale = ci.median > reference_us ? ci.median : reference_us;
    s->median_us = ci.median;
    s->ci_rel = scale > 0.0 ? widest / scale : INFINITY;
    s->precision_met = s->n >= lim->min_reps && s->ci_rel <= lim->precision;
}

/* rank 0: the samples the CI needs to reach the precision, projected from the
 * CI so far (its width shrinks as 1/sqrt(n)); INFINITY when it has no width to go by */
static double cc_reps_needed(const cc_series *s, const cc_limits *lim)
{
    if (s->ci_rel <= 0.0) return (double)s->n;
    if (!isfinite(s->ci_rel)) return INFINITY;
    const double ratio = s->ci_rel / lim->precision;
    return (double)s->n * ratio * ratio;
}

/* What rank 0 decides after each chunk, broadcast as CC_CHUNK_LONGS longs. */
typedef struct cc_chunk_decision {
    long next_chunk; /* repetitions of the next chunk; 0: stop */
    long stop;       /* CC_STOP_GO, or why the series stops (cc_stop_names) */
} cc_chunk_decision;
#define CC_CHUNK_LONGS 2
_Static_assert(sizeof(cc_chunk_decision) == CC_CHUNK_LONGS * sizeof(long),
               "cc_chunk_decision is broadcast as an array of longs");

/* a chunk ends where the projected need times this lies, and is at least the samples so far
 * over CC_LEAST_STEP */
#define CC_PROJECTION_MARGIN 1.15
#define CC_LEAST_STEP 8

/* rank 0: stop (and why), or how many repetitions the next chunk has */
static void cc_decide(const cc_series *s, const cc_limits *lim, double elapsed, cc_chunk_decision *decision)
{
    decision->next_chunk = 0;
    const double per_rep = s->n > 0 ? elapsed / (double)s->n : 0.0;
    const double needed = cc_reps_needed(s, lim);
    if (s->precision_met) {
        decision->stop = CC_STOP_PRECISION;
    } else if (s->n >= lim->max_reps) {
        decision->stop = CC_STOP_MAX_REPS;
    } else if (elapsed >= lim->max_time && s->n >= lim->min_reps) {
        /* min-reps is a floor: a slow point still gets its fewest samples */
        decision->stop = CC_STOP_MAX_TIME;
    } else if (s->late >= lim->max_reps || (elapsed >= lim->max_time && s->late >= lim->min_reps)) {
        /* redoing late repetitions is bounded by what was asked: a point whose
         * windows are too short for this machine's load stops, flagged, not failed */
        decision->stop = CC_STOP_LATE;
    } else if (elapsed >= lim->max_time * CC_UNREACHABLE_AFTER && s->n >= CC_UNREACHABLE_MIN_REPS &&
               s->n >= lim->min_reps &&
               (needed - (double)s->n) * per_rep > CC_UNREACHABLE_FACTOR * lim->max_time) {
        /* far from the precision with half of max-time spent: at the rate so far
         * it would take several times max-time, so the rest of max-time would end at
         * max_time unmet all the same (the samples are kept, the point is flagged) */
        decision->stop = CC_STOP_UNREACHABLE;
    } else {
        /* grow geometrically (x1.5 in total), never past max-reps or max-time.  Not
         * in smaller fixed steps: every chunk ends in control messages that wait for
         * both ranks, and on a loaded machine each such wait can be a time slice
         * (x1.125 steps made a one-sided sweep slower and meet the precision less
         * often than x1.5) */
        long by_time = per_rep > 0.0 ? cc_clamp((lim->max_time - elapsed) / per_rep, 1, lim->max_reps)
                                     : lim->max_reps;
        long chunk = (s->n + 1) / 2;
        /* ...but no further than the CI's projection says the precision needs, with a
         * margin for the projection's own error: a stop is checked only after a whole
         * chunk, and a step of x1.5 past the need measures up to half as much again */
        if (isfinite(needed) && needed > (double)s->n) {
            long projected = (long)ceil(needed * CC_PROJECTION_MARGIN) - s->n;
            const long least = s->n / CC_LEAST_STEP > 1 ? s->n / CC_LEAST_STEP : 1;
            if (projected < least) projected = least;
            if (projected < chunk) chunk = projected;
        }
        if (chunk > lim->max_reps - s->n) chunk = lim->max_reps - s->n;
        if (chunk > by_time) chunk = by_time;
        if (s->n + chunk < lim->min_reps) chunk = lim->min_reps - s->n;
        decision->next_chunk = chunk > 0 ? chunk : 1;
        decision->stop = CC_STOP_GO;
    }
}

static int cc_cmp_ns(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* every rank's median of its own durations, gathered on rank 0 (outside the timed region) */
static void cc_rank_medians(const cc_point *pt, double *own, long n, double to_us, cc_series *out)
{
    double mine = 0.0;
    if (n > 0) {
        qsort(own, (size_t)n, sizeof *own, cc_cmp_ns);
        mine = (n % 2 ? own[n / 2] : 0.5 * (own[n / 2 - 1] + own[n / 2])) * to_us;
    }
    if (pt->rank == 0) {
        out->ranks = pt->size;
        out->rank_median_us = cc_xmalloc((size_t)pt->size * sizeof *out->rank_median_us);
    }
    CC_MPI(MPI_Gather(&mine, 1, MPI_DOUBLE, out->rank_median_us, 1, MPI_DOUBLE, 0, pt->ctl));
}

/* this rank's durations (ns) kept for its own median */
typedef struct cc_own {
    double *d;
    long n, cap;
} cc_own;

static void cc_own_add(cc_own *own, const double *d, long count)
{
    if (own->n + count > own->cap) {
        own->cap = 2 * (own->n + count);
        own->d = cc_xrealloc(own->d, (size_t)own->cap * sizeof *own->d);
    }
    memcpy(own->d + own->n, d, (size_t)count * sizeof *d);
    own->n += count;
}

/* --sync window: one batched repetition's time from a few untimed runs, each
 * started at a barrier: the median over runs of the maximum over ranks (the
 * median, so that a rank descheduled in one run does not size every window) */
static double cc_one_repetition_ns(cc_point *pt)
{
    double mine[CC_ESTIMATE_RUNS], worst[CC_ESTIMATE_RUNS];
    for (int k = 0; k < CC_ESTIMATE_RUNS; k++) {
        cc_prepare(pt);
        const int64_t t0 = cc_now_ns();
        pt->op->run(pt, pt->batch);
        const int64_t t1 = cc_now_ns();
        mine[k] = pt->timed ? (double)(t1 - t0) : 0.0;
    }
    CC_MPI(MPI_Allreduce(mine, worst, CC_ESTIMATE_RUNS, MPI_DOUBLE, MPI_MAX, pt->ctl));
    qsort(worst, CC_ESTIMATE_RUNS, sizeof *worst, cc_cmp_ns);
    return worst[CC_ESTIMATE_RUNS / 2];
}

/* the test fault: the last rank starts every fourth windowed repetition half a
 * window late */
static void cc_inject_late(const cc_point *pt, const cc_window *win, long rep, int64_t at)
{
    if (pt->inject_late && pt->rank == pt->size - 1 && rep % 4 == 3)
        while (cc_now_ns() <= at + win->length_ns / 2) {
        }
}

/* One chunk under --sync window: repetition i starts at the common time
 * cc_window_at(i); its duration is from that start to this rank's end, and +inf
 * when this rank arrived late, so the max over ranks marks it late on any. */
static void cc_window_chunk(cc_point *pt, cc_window *win, long chunk, long first_rep, double *dur)
{
    void (*const run)(cc_point *, long) = pt->op->run;
    const long batch = pt->batch;
    cc_window_schedule(win, pt);
    for (long i = 0; i < chunk; i++) {
        cc_cache_next(pt); /* before the start time: cold buffers of the next slot */
        const int64_t at = cc_window_at(win, i);
        cc_inject_late(pt, win, first_rep + i, at);
        const int late = cc_window_wait(at);
        run(pt, batch);
        const int64_t t1 = cc_now_ns();
        dur[i] = late ? INFINITY : pt->timed ? (double)(t1 - at) : 0.0;
    }
}

void cc_measure(cc_point *pt, const cc_limits *lim, cc_series *out)
{
    memset(out, 0, sizeof *out);
    out->precision = lim->precision;
    out->min_reps = lim->min_reps;
    long chunk = 1;
    int resync = 1;
    cc_warmup(pt, lim, out, &chunk, &resync);
    const long batch = pt->batch = out->batch;

    const int root = pt->rank == 0;
    const int windowed = pt->sync->windowed;
    const double to_us = pt->scale / (double)batch / 1000.0;
    out->tick_us = pt->env->timer.resolution_ns * to_us;
    void (*const sync_start)(MPI_Comm) = pt->sync->start;
    void (*const before)(cc_point *) = pt->op->before;
    void (*const run)(cc_point *, long) = pt->op->run;
    const MPI_Comm comm = pt->comm;
    double *dur = NULL, *maxed = NULL, *scratch = NULL;
    long dur_cap = 0, timed_reps = 0;
    cc_own own = {NULL, 0, 0}; /* this rank's durations (ns), for its own median */
    cc_chunk_decision decision = {.next_chunk = chunk, .stop = CC_STOP_GO};
    cc_window win;
    if (windowed) {
        const double estimate_ns = lim->sync_window_us > 0.0 ? 0.0 : cc_one_repetition_ns(pt);
        cc_window_setup(&win, pt, estimate_ns, lim->sync_window_factor, lim->sync_window_us);
        out->windowed = 1;
        out->window_us = (double)win.length_ns * 1e-3;
        out->clock_rtt_us = (double)win.rtt_ns * 1e-3;
        out->estimate_us = estimate_ns * 1e-3;
    }
    const int64_t start = cc_now_ns();

    for (;;) {
        if (chunk > dur_cap) {
            dur_cap = chunk;
            dur = cc_xrealloc(dur, (size_t)dur_cap * sizeof *dur);
            if (windowed) maxed = cc_xrealloc(maxed, (size_t)dur_cap * sizeof *maxed);
        }
        long kept = chunk;
        if (windowed) {
            /* the start is global: no re-alignment, no barrier */
            cc_window_chunk(pt, &win, chunk, timed_reps, dur);
            /* every rank learns which repetitions were late, to leave them out of its own median too */
            CC_MPI(MPI_Allreduce(dur, maxed, (int)chunk, MPI_DOUBLE, MPI_MAX, pt->ctl));
            kept = 0;
            for (long i = 0; i < chunk; i++) {
                if (isinf(maxed[i])) continue;
                dur[kept] = dur[i];
                maxed[kept++] = maxed[i];
            }
            out->late += chunk - kept;
            if (pt->op->scope == CC_SCOPE_ALL) cc_own_add(&own, dur, kept);
            if (root) {
                cc_series_reserve(out, out->n + kept, &scratch);
                memcpy(out->samples_us + out->n, maxed, (size_t)kept * sizeof *maxed);
            }
        } else {
            /* one untimed repetition first: the control exchange above leaves the
             * ranks skewed, which would otherwise land in the chunk's first sample */
            if (resync) {
                cc_cache_next(pt);
                cc_prepare(pt);
                run(pt, 1);
            }
            /* the timed region: the op's MPI calls between two timer reads */
            for (long i = 0; i < chunk; i++) {
                cc_cache_next(pt); /* untimed: cold buffers of the next slot */
                if (sync_start) sync_start(comm);
                if (before) before(pt);
                const int64_t t0 = cc_now_ns();
                run(pt, batch);
                const int64_t t1 = cc_now_ns();
                dur[i] = (double)(t1 - t0);
            }
            if (!pt->timed) memset(dur, 0, (size_t)chunk * sizeof *dur);
            if (pt->op->scope == CC_SCOPE_ALL) cc_own_add(&own, dur, chunk);
            if (root) cc_series_reserve(out, out->n + chunk, &scratch);
            CC_MPI(MPI_Reduce(dur, root ? out->samples_us + out->n : NULL, (int)chunk, MPI_DOUBLE,
                              MPI_MAX, 0, pt->ctl));
        }
        timed_reps += chunk;
        if (root) {
            double *fresh = out->samples_us + out->n;
            for (long i = 0; i < kept; i++) {
                fresh[i] *= to_us;
                dur[i] = fresh[i];
            }
            cc_merge_chunk(out->sorted_us, (size_t)out->n, dur, (size_t)kept, scratch);
            out->n += kept;
            cc_evaluate(out, lim, pt->ci_reference_us);
            cc_decide(out, lim, (double)(cc_now_ns() - start) * 1e-9, &decision);
        } else {
            out->n += kept;
        }
        CC_MPI(MPI_Bcast(&decision, CC_CHUNK_LONGS, MPI_LONG, 0, pt->ctl));
        if (decision.next_chunk == 0) break;
        /* the late repetitions so far are made up for by the chunks that follow */
        out->redone = out->late;
        chunk = decision.next_chunk;
    }
    out->stop_reason = cc_stop_names[decision.stop];
    if (pt->op->scope == CC_SCOPE_ALL) cc_rank_medians(pt, own.d, own.n, to_us, out);
    free(own.d);
    free(dur);
    free(maxed);
    free(scratch);
}

void cc_series_free(cc_series *s)
{
    free(s->samples_us);
    free(s->sorted_us);
    free(s->rank_median_us);
    memset(s, 0, sizeof *s);
}

/* flip one received byte on the highest rank that checks any */
static void cc_corrupt_one(cc_point *pt)
{
    int mine = pt->check_len > 0 ? pt->rank : -1, victim = -1;
    CC_MPI(MPI_Allreduce(&mine, &victim, 1, MPI_INT, MPI_MAX, pt->ctl));
    if (victim >= 0 && victim == pt->rank) pt->rbuf[pt->check_off + pt->check_len / 2] ^= 0x01;
}

int cc_verify(cc_point *pt, int corrupt, char *err, size_t errlen)
{
    pt->batch = 1;
    cc_cache_next(pt); /* the slot filled is the slot used */
    if (pt->op->fill) pt->op->fill(pt);
    cc_prepare(pt);
    pt->op->run(pt, 1);
    if (corrupt) cc_corrupt_one(pt);

    char mine[CC_ERRLEN] = "";
    int bad = pt->op->check ? pt->op->check(pt, mine, sizeof mine) : 0;
    int candidate = bad ? pt->rank : pt->size, first = pt->size;
    CC_MPI(MPI_Allreduce(&candidate, &first, 1, MPI_INT, MPI_MIN, pt->ctl));
    if (first == pt->size) return 1;
    if (first != 0 && pt->rank == first)
        CC_MPI(MPI_Send(mine, CC_ERRLEN, MPI_CHAR, 0, CC_TAG_DATA, pt->ctl));
    if (pt->rank == 0) {
        if (first != 0)
            CC_MPI(MPI_Recv(mine, CC_ERRLEN, MPI_CHAR, first, CC_TAG_DATA, pt->ctl, MPI_STATUS_IGNORE));
        mine[CC_ERRLEN - 1] = '\0';
        snprintf(err, errlen, "%s", mine);
    }
    return 0;
}
