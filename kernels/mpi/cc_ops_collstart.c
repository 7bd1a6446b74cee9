/* collstart: what a communicator's first collectives cost.
 *
 * A library can change how it runs a collective after a communicator has made a
 * few: MPICH 4 and 5 (ch4 with its POSIX shared-memory module) count the Bcast,
 * Reduce, Barrier and Allreduce calls of a communicator and, past a threshold
 * (MPIR_CVAR_POSIX_NUM_COLLS_THRESHOLD, 5), set up shared buffers for its
 * "release-gather" algorithms; the call that does pays for the mapping and its
 * first touch, a few hundred microseconds at 16 ranks.  Every first call of a
 * kind may cost more too.  A program pays these once; the kernels' other
 * collectives measure them warm.
 *
 * The runner gives this point a process of its own.  Setup times, on a fresh
 * duplicate of the communicator each, CC_COLLSTART_CALLS calls of: Bcast,
 * Reduce, Barrier and Allreduce in turn ("mixed", a program's order), then each
 * kind alone; 8 bytes (one double) each, back to back, every rank keeping the
 * duration of each of its calls.  Extra reports, per series, each call's
 * median and largest duration over the ranks; the fit (commchar.models.
 * collstart) finds the calls that cost more than the warm ones, and whether the
 * mixed series meets them where the kinds alone do (one count for all kinds). */
#include <stdio.h>
#include <stdlib.h>

#include "cc_op_data.h"
#include "cc_ops_mpi.h"

#define CC_COLLSTART_CALLS 12
enum { CC_CS_MIXED, CC_CS_BCAST, CC_CS_REDUCE, CC_CS_BARRIER, CC_CS_ALLREDUCE, CC_CS_SERIES };
static const char *const cc_cs_names[CC_CS_SERIES] = {"mixed", "bcast", "reduce", "barrier", "allreduce"};

typedef struct {
    double ns[CC_CS_SERIES][CC_COLLSTART_CALLS];
} cc_collstart_record;

/* the k-th call of a series: its kind alone, or the mixed series' turn */
static void cc_collstart_call(int series, int k, MPI_Comm c, double *in, double *out)
{
    const int kind = series == CC_CS_MIXED ? CC_CS_BCAST + k % 4 : series;
    switch (kind) {
    case CC_CS_BCAST: CC_MPI(MPI_Bcast(in, 1, MPI_DOUBLE, 0, c)); break;
    case CC_CS_REDUCE: CC_MPI(MPI_Reduce(in, out, 1, MPI_DOUBLE, MPI_SUM, 0, c)); break;
    case CC_CS_BARRIER: CC_MPI(MPI_Barrier(c)); break;
    default: CC_MPI(MPI_Allreduce(in, out, 1, MPI_DOUBLE, MPI_SUM, c)); break;
    }
}

static void cc_collstart_setup(cc_point *pt)
{
    cc_coll_buffers(pt, 0, 0, 0);
    cc_collstart_record *rec = cc_xmalloc(sizeof *rec);
    double in = (double)pt->rank, out = 0.0;
    for (int s = 0; s < CC_CS_SERIES; s++) {
        MPI_Comm c;
        CC_MPI(MPI_Comm_dup(pt->comm, &c));
        for (int k = 0; k < CC_COLLSTART_CALLS; k++) {
            const int64_t t0 = cc_now_ns();
            cc_collstart_call(s, k, c, &in, &out);
            rec->ns[s][k] = (double)(cc_now_ns() - t0);
        }
        CC_MPI(MPI_Comm_free(&c));
    }
    pt->attached = rec;
}

static void cc_collstart_run(cc_point *pt, long count)
{
    double in = (double)pt->rank, out = 0.0;
    for (long k = 0; k < count; k++) CC_MPI(MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, pt->comm));
}

static int cc_collstart_compare(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* per series and call, the median and the largest duration over the ranks (us) */
static void cc_collstart_extra(cc_point *pt, double main_median_us, cc_buf *json)
{
    (void)main_median_us;
    const cc_collstart_record *own = pt->attached;
    const int p = pt->size, per = CC_CS_SERIES * CC_COLLSTART_CALLS;
    double *all = pt->rank == 0 ? cc_xmalloc((size_t)p * (size_t)per * sizeof *all) : NULL;
    CC_MPI(MPI_Gather(own->ns, per, MPI_DOUBLE, all, per, MPI_DOUBLE, 0, pt->ctl));
    if (pt->rank != 0) return;
    double *column = cc_xmalloc((size_t)p * sizeof *column);
    for (int s = 0; s < CC_CS_SERIES; s++) {
        for (int stat = 0; stat < 2; stat++) {
            char key[64];
            snprintf(key, sizeof key, "collstart_%s_us_%s", stat ? "max" : "median", cc_cs_names[s]);
            cc_buf_key(json, key);
            cc_buf_printf(json, "[");
            for (int k = 0; k < CC_COLLSTART_CALLS; k++) {
                for (int r = 0; r < p; r++) column[r] = all[(size_t)r * (size_t)per + (size_t)(s * CC_COLLSTART_CALLS + k)];
                qsort(column, (size_t)p, sizeof *column, cc_collstart_compare);
                const double v = stat ? column[p - 1] : (p % 2 ? column[p / 2] : 0.5 * (column[p / 2 - 1] + column[p / 2]));
                cc_buf_printf(json, "%s%.3f", k ? "," : "", v / 1000.0);
            }
            cc_buf_printf(json, "]");
        }
    }
    free(column);
    free(all);
}

static void cc_collstart_cleanup(cc_point *pt)
{
    free(pt->attached);
    pt->attached = NULL;
    cc_coll_cleanup(pt);
}

const cc_op cc_op_collstart = {
    .name = "collstart",
    .scope = CC_SCOPE_ALL,
    .phases = 1,
    .check_size = cc_size_zero,
    .setup = cc_collstart_setup,
    .run = cc_collstart_run,
    .extra = cc_collstart_extra,
    .cleanup = cc_collstart_cleanup,
    .first_traffic = 1,
};
