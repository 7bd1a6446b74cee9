/* One-sided operations between ranks 0 (origin) and 1 (target): MPI_Put,
 * MPI_Get and MPI_Accumulate, each under the three synchronisations of MPI-3
 * (variant = synchronisation): active target with MPI_Win_fence, general
 * active target with post-start-complete-wait, passive target with one
 * MPI_Win_lock_all for the point and MPI_Win_flush per repetition.  One sample
 * is one epoch: the operation and the synchronisation that completes it
 * (latency).  The `_bw` variants put W operations (the --window, fewer for
 * long messages) to distinct target offsets in one epoch and divide by W.
 * Accumulate adds doubles (MPI_SUM), so n is a multiple of 8. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_ops_mpi.h"
#include "cc_verify.h"

enum { CC_RMA_FENCE, CC_RMA_PSCW, CC_RMA_LOCK, CC_RMA_FENCE_BW, CC_RMA_PSCW_BW, CC_RMA_LOCK_BW };
static const char *const cc_rma_variants[] = {"fence", "pscw", "lock", "fence_bw", "pscw_bw", "lock_bw", NULL};
enum { CC_PUT, CC_GET, CC_ACC };

typedef struct cc_rma_state {
    MPI_Win win;
    MPI_Group peer;
    unsigned char *winbuf; /* the exposed memory, W slots of n bytes: rbuf (put, accumulate), sbuf (get) */
    size_t winlen;
} cc_rma_state;

static int cc_rma_sync(const cc_point *pt)
{
    return pt->variant % 3;
}

static long cc_rma_count(const cc_point *pt)
{
    return pt->variant >= CC_RMA_FENCE_BW ? pt->window : 1;
}

static const char *cc_rma_check_size(size_t n, int p, int variant, char *why, size_t whylen, int doubles)
{
    (void)variant;
    if (p < 2) {
        snprintf(why, whylen, "needs at least 2 processes");
        return why;
    }
    if (doubles && n % 8 != 0) {
        snprintf(why, whylen, "%zu bytes is not a whole number of doubles (multiple of 8)", n);
        return why;
    }
    if (n > INT_MAX / 64) {
        snprintf(why, whylen, "%zu bytes is too large for one window", n);
        return why;
    }
    return NULL;
}

static const char *cc_rma_bytes(size_t n, int p, int variant, char *why, size_t whylen)
{
    return cc_rma_check_size(n, p, variant, why, whylen, 0);
}

static const char *cc_rma_doubles(size_t n, int p, int variant, char *why, size_t whylen)
{
    return cc_rma_check_size(n, p, variant, why, whylen, 1);
}

/* The bytes verified are always in rbuf (the target's window for put and
 * accumulate, the origin's destination for get), so an injected corruption
 * (cc_verify) lands where the check looks. */
static void cc_rma_setup(cc_point *pt, int kind)
{
    if (pt->variant >= CC_RMA_FENCE_BW) cc_window_fit(pt);
    const long w = cc_rma_count(pt);
    cc_rma_state *st = cc_xmalloc(sizeof *st);
    st->winlen = pt->sbuf_len = pt->rbuf_len = (size_t)w * pt->n;
    pt->sbuf = cc_xalloc_pages(pt->sbuf_len);
    pt->rbuf = cc_xalloc_pages(pt->rbuf_len);
    st->winbuf = kind == CC_GET ? pt->sbuf : pt->rbuf;
    pt->check_off = 0;
    pt->check_len = pt->rank == (kind == CC_GET ? 0 : 1) ? pt->rbuf_len : 0;
    pt->timed = pt->rank == 0;
    pt->scale = 1.0 / (double)w;
    CC_MPI(MPI_Win_create(st->winbuf, (MPI_Aint)(st->winlen ? st->winlen : 1), 1, MPI_INFO_NULL, pt->comm,
                          &st->win));
    MPI_Group all;
    CC_MPI(MPI_Comm_group(pt->comm, &all));
    const int other = 1 - pt->rank;
    CC_MPI(MPI_Group_incl(all, 1, &other, &st->peer));
    CC_MPI(MPI_Group_free(&all));
    if (cc_rma_sync(pt) == CC_RMA_FENCE) CC_MPI(MPI_Win_fence(0, st->win));
    if (cc_rma_sync(pt) == CC_RMA_LOCK && pt->rank == 0) CC_MPI(MPI_Win_lock_all(0, st->win));
    pt->attached = st;
}

static void cc_rma_cleanup(cc_point *pt)
{
    cc_rma_state *st = pt->attached;
    if (cc_rma_sync(pt) == CC_RMA_LOCK && pt->rank == 0) CC_MPI(MPI_Win_unlock_all(st->win));
    if (cc_rma_sync(pt) == CC_RMA_FENCE) CC_MPI(MPI_Win_fence(0, st->win));
    CC_MPI(MPI_Win_free(&st->win));
    CC_MPI(MPI_Group_free(&st->peer));
    free(st);
    cc_free_pages(pt->sbuf);
    cc_free_pages(pt->rbuf);
    pt->sbuf = pt->rbuf = NULL;
    pt->attached = NULL;
}

/* the W operations of one epoch, from the origin to distinct slots of the target */
static void cc_rma_issue(cc_point *pt, int kind, MPI_Win win)
{
    const int n = (int)pt->n;
    const long w = cc_rma_count(pt);
    for (long i = 0; i < w; i++) {
        const size_t at = (size_t)i * pt->n;
        switch (kind) {
        case CC_PUT:
            CC_MPI(MPI_Put(pt->sbuf + at, n, MPI_BYTE, 1, (MPI_Aint)at, n, MPI_BYTE, win));
            break;
        case CC_GET:
            CC_MPI(MPI_Get(pt->rbuf + at, n, MPI_BYTE, 1, (MPI_Aint)at, n, MPI_BYTE, win));
            break;
        default:
            CC_MPI(MPI_Accumulate(pt->sbuf + at, n / 8, MPI_DOUBLE, 1, (MPI_Aint)at, n / 8, MPI_DOUBLE, MPI_SUM,
                                  win));
        }
    }
}

static void cc_rma_run_kind(cc_point *pt, long count, int kind)
{
    cc_rma_state *st = pt->attached;
    const int origin = pt->rank == 0;
    switch (cc_rma_sync(pt)) {
    case CC_RMA_FENCE: /* the closing fence of one epoch opens the next */
        for (long k = 0; k < count; k++) {
            if (origin) cc_rma_issue(pt, kind, st->win);
            CC_MPI(MPI_Win_fence(0, st->win));
        }
        break;
    case CC_RMA_PSCW:
        for (long k = 0; k < count; k++) {
            if (origin) {
                CC_MPI(MPI_Win_start(st->peer, 0, st->win));
                cc_rma_issue(pt, kind, st->win);
                CC_MPI(MPI_Win_complete(st->win));
            } else {
                CC_MPI(MPI_Win_post(st->peer, 0, st->win));
                CC_MPI(MPI_Win_wait(st->win));
            }
        }
        break;
    default: /* passive target: the target takes no part (it waits in MPI for the chunk's end) */
        if (!origin) return;
        for (long k = 0; k < count; k++) {
            cc_rma_issue(pt, kind, st->win);
            CC_MPI(MPI_Win_flush(1, st->win));
        }
    }
}

static void cc_put_setup(cc_point *pt) { cc_rma_setup(pt, CC_PUT); }
static void cc_get_setup(cc_point *pt) { cc_rma_setup(pt, CC_GET); }
static void cc_acc_setup(cc_point *pt) { cc_rma_setup(pt, CC_ACC); }
static void cc_put_run(cc_point *pt, long count) { cc_rma_run_kind(pt, count, CC_PUT); }
static void cc_get_run(cc_point *pt, long count) { cc_rma_run_kind(pt, count, CC_GET); }
static void cc_acc_run(cc_point *pt, long count) { cc_rma_run_kind(pt, count, CC_ACC); }

/* Verification runs one epoch after fill.  Under passive target the target
 * takes no part in it, so it reads its window only after the origin's flush
 * (a barrier on the control communicator); both libraries' shared-memory
 * windows are of the unified memory model, where that suffices. */
static void cc_rma_settle(cc_point *pt)
{
    if (cc_rma_sync(pt) == CC_RMA_LOCK) CC_MPI(MPI_Barrier(pt->ctl));
}

static void cc_put_fill(cc_point *pt)
{
    cc_rma_state *st = pt->attached;
    const size_t len = pt->sbuf_len;
    if (pt->rank == 0)
        for (size_t at = 0; at < len; at += pt->n) cc_fill_bytes(pt->sbuf + at, pt->n, 0, 0, pt->seed);
    else
        cc_poison_bytes(st->winbuf, st->winlen, 0, 0, pt->seed);
    CC_MPI(MPI_Barrier(pt->ctl)); /* the target's window is ready before any put */
}

static int cc_slots_check(const cc_point *pt, const unsigned char *buf, size_t len, int src, char *err,
                          size_t errlen)
{
    for (size_t at = 0; at < len; at += pt->n)
        if (cc_check_bytes(buf + at, pt->n, src, 0, pt->seed, pt->rank, at, err, errlen)) return 1;
    return 0;
}

static int cc_put_check(const cc_point *pt, char *err, size_t errlen)
{
    cc_rma_settle((cc_point *)pt);
    const cc_rma_state *st = pt->attached;
    if (pt->rank != 1 || pt->n == 0) return 0;
    return cc_slots_check(pt, st->winbuf, st->winlen, 0, err, errlen);
}

static void cc_get_fill(cc_point *pt)
{
    cc_rma_state *st = pt->attached;
    if (pt->rank == 1) {
        for (size_t at = 0; at < st->winlen; at += pt->n) cc_fill_bytes(st->winbuf + at, pt->n, 1, 0, pt->seed);
    } else {
        cc_poison_bytes(pt->rbuf, pt->rbuf_len, 1, 0, pt->seed);
    }
    CC_MPI(MPI_Barrier(pt->ctl));
}

static int cc_get_check(const cc_point *pt, char *err, size_t errlen)
{
    cc_rma_settle((cc_point *)pt);
    if (pt->rank != 0 || pt->n == 0) return 0;
    return cc_slots_check(pt, pt->rbuf, pt->rbuf_len, 1, err, errlen);
}

static void cc_acc_fill(cc_point *pt)
{
    cc_rma_state *st = pt->attached;
    if (pt->rank == 0) {
        for (size_t at = 0; at < pt->sbuf_len; at += pt->n)
            cc_fill_doubles((double *)(void *)(pt->sbuf + at), pt->n / 8, 0, 0, pt->seed);
    } else {
        memset(st->winbuf, 0, st->winlen); /* 0 + the origin's values = the origin's values */
    }
    CC_MPI(MPI_Barrier(pt->ctl));
}

static int cc_acc_check(const cc_point *pt, char *err, size_t errlen)
{
    cc_rma_settle((cc_point *)pt);
    const cc_rma_state *st = pt->attached;
    if (pt->rank != 1 || pt->n == 0) return 0;
    for (size_t at = 0; at < st->winlen; at += pt->n)
        if (cc_check_doubles((const double *)(const void *)(st->winbuf + at), pt->n / 8, 0, 0, pt->seed,
                             pt->rank, err, errlen))
            return 1;
    return 0;
}

static void cc_rma_extra(cc_point *pt, double main_median_us, cc_buf *json)
{
    (void)main_median_us;
    if (pt->rank != 0) return;
    cc_buf_key(json, "window");
    cc_buf_num(json, (double)cc_rma_count(pt));
}

#define CC_RMA_OP(opname, kind_size, prefix)                                                              \
    const cc_op cc_op_##opname = {                                                                        \
        .name = #opname, .variants = cc_rma_variants, .scope = CC_SCOPE_PAIR, .phases = 1,                \
        .check_size = kind_size, .setup = prefix##_setup, .run = prefix##_run, .fill = prefix##_fill,       \
        .check = prefix##_check, .extra = cc_rma_extra, .cleanup = cc_rma_cleanup,                        \
        .bound_buffers = "the window is created over the buffers once per point",                         \
    }

CC_RMA_OP(put, cc_rma_bytes, cc_put);
CC_RMA_OP(get, cc_rma_bytes, cc_get);
CC_RMA_OP(acc, cc_rma_doubles, cc_acc);
