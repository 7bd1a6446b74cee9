/* Jacobi's method with MPI, timed by phase as in Markowsky's pSeries study.
 *
 *   jacobi --n N [--exchange allgather|direct|butterfly] [--iterations K] [--tolerance T]
 *          [--core-distance]
 *
 * The system: a[i][j] = 1 + (7i + 13j) % 10 / 10 off the diagonal, a[i][i] =
 * 2N (strictly diagonally dominant, so the iteration converges), and the known
 * solution x*[i] = 1 + i % 5 with b = A x*.  N must be a multiple of p (the
 * rows are spread with MPI_Scatter, the new values collected in equal blocks).
 *
 * Phases (each also marked with MPI_Pcontrol at its level, app_common.h):
 *   distribution   rank 0 builds A and b, MPI_Scatter of rows and of b,
 *                  MPI_Bcast of the initial guess (zero);
 *   computation    each rank updates its N/p unknowns (N multiplications and
 *                  N-1 additions per row);
 *   communication  every rank gets every new value (allgather: MPI_Allgather;
 *                  direct: an Isend to and an Irecv from every other rank;
 *                  butterfly: recursive doubling with MPI_Sendrecv, log2 p
 *                  steps, a power-of-two p only: any other p is refused), then
 *                  MPI_Allreduce of the largest change, the convergence test.
 * Without --iterations it stops when the largest change is below the
 * tolerance; with it, it runs exactly K iterations (steady timing).  Verified:
 * every unknown within 1e-6 (relative) of x*; otherwise exit 1.
 * Rank 0 prints one JSON line {"type":"result",...}. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_common.h"

static const char usage[] =
    "usage: jacobi --n N [--exchange allgather|direct|butterfly] [--iterations K]"
    " [--tolerance T] [--max-iterations M] [--core-distance]\n";

typedef enum { EXCHANGE_ALLGATHER, EXCHANGE_DIRECT, EXCHANGE_BUTTERFLY } exchange_kind;
static const char *const exchange_names[] = {"allgather", "direct", "butterfly"};

typedef struct options {
    long n, iterations, max_iterations;
    double tolerance;
    exchange_kind exchange;
    int core_distance;
} options;

static double coefficient(long i, long j, long n)
{
    return i == j ? 2.0 * (double)n : 1.0 + (double)((7 * i + 13 * j) % 10) / 10.0;
}

static double known_solution(long i) { return 1.0 + (double)(i % 5); }

static options parse(int argc, char **argv, int p)
{
    options o = {.n = 0, .iterations = 0, .max_iterations = 10000, .tolerance = 1e-10,
                 .exchange = EXCHANGE_ALLGATHER};
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(flag, "--core-distance") == 0) {
            o.core_distance = 1;
            continue; /* a flag without a value */
        }
        if (strcmp(flag, "--n") == 0)
            o.n = app_parse_long(usage, flag, value, 1, 1L << 16);
        else if (strcmp(flag, "--iterations") == 0)
            o.iterations = app_parse_long(usage, flag, value, 1, 1L << 30);
        else if (strcmp(flag, "--max-iterations") == 0)
            o.max_iterations = app_parse_long(usage, flag, value, 1, 1L << 30);
        else if (strcmp(flag, "--tolerance") == 0)
            o.tolerance = app_parse_double(usage, flag, value);
        else if (strcmp(flag, "--exchange") == 0) {
            int found = -1;
            for (int k = 0; k < 3 && value; k++)
                if (strcmp(value, exchange_names[k]) == 0) found = k;
            if (found < 0)
                app_usage(usage, "--exchange must be allgather, direct or butterfly");
            o.exchange = (exchange_kind)found;
        } else
            app_usage(usage, "unknown option '%s'", flag);
        i++;
    }
    if (o.n == 0) app_usage(usage, "--n is required");
    if (o.n % p != 0)
        app_usage(usage, "N (%ld) must be a multiple of the process count (%d)", o.n, p);
    if (o.exchange == EXCHANGE_BUTTERFLY && (p & (p - 1)) != 0)
        app_usage(usage, "the butterfly exchange needs a power-of-two process count, not %d", p);
    return o;
}

/* every rank's block of new values into x: block r is x[r*rows .. (r+1)*rows) */
static void exchange(exchange_kind kind, const double *mine, double *x, long rows, int rank,
                     int p, MPI_Request *requests)
{
    int count = (int)rows;
    switch (kind) {
    case EXCHANGE_ALLGATHER:
        CC_MPI(MPI_Allgather(mine, count, MPI_DOUBLE, x, count, MPI_DOUBLE, MPI_COMM_WORLD));
        return;
    case EXCHANGE_DIRECT: {
        memcpy(x + rank * rows, mine, (size_t)rows * sizeof *x);
        int k = 0;
        for (int peer = 0; peer < p; peer++) {
            if (peer == rank) continue;
            CC_MPI(MPI_Irecv(x + peer * rows, count, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD,
                             &requests[k++]));
        }
        for (int peer = 0; peer < p; peer++) {
            if (peer == rank) continue;
            CC_MPI(MPI_Isend(mine, count, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, &requests[k++]));
        }
        CC_MPI(MPI_Waitall(k, requests, cc_statuses_ignore));
        return;
    }
    case EXCHANGE_BUTTERFLY:
        /* after step s a rank holds the 2^(s+1) blocks of its aligned group */
        memcpy(x + rank * rows, mine, (size_t)rows * sizeof *x);
        for (int span = 1; span < p; span <<= 1) {
            int partner = rank ^ span;
            long have = (long)(rank & ~(span - 1)) * rows;
            long theirs = (long)(partner & ~(span - 1)) * rows;
            CC_MPI(MPI_Sendrecv(x + have, count * span, MPI_DOUBLE, partner, span, x + theirs,
                                count * span, MPI_DOUBLE, partner, span, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
        }
        return;
    }
}

int main(int argc, char **argv)
{
    CC_MPI(MPI_Init(&argc, &argv));
    MPI_Pcontrol(APP_OUTSIDE);
    int rank = 0, p = 1;
    CC_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CC_MPI(MPI_Comm_size(MPI_COMM_WORLD, &p));
    options o = parse(argc, argv, p);
    app_fault fault = app_fault_read();
    long n = o.n, rows = n / p, first = rank * rows;

    double *x = cc_xmalloc((size_t)n * sizeof *x);
    double *a_local = cc_xmalloc((size_t)(rows * n) * sizeof *a_local);
    double *b_local = cc_xmalloc((size_t)rows * sizeof *b_local);
    double *mine = cc_xmalloc((size_t)rows * sizeof *mine);
    MPI_Request *requests = cc_xmalloc((size_t)(2 * p) * sizeof *requests);
    double *a = NULL, *b = NULL;
    if (rank == 0) { /* the whole system lives on rank 0 only, as in the study */
        a = cc_xmalloc((size_t)(n * n) * sizeof *a);
        b = cc_xmalloc((size_t)n * sizeof *b);
        for (long i = 0; i < n; i++) {
            b[i] = 0.0;
            for (long j = 0; j < n; j++) {
                a[i * n + j] = coefficient(i, j, n);
                b[i] += a[i * n + j] * known_solution(j);
            }
            x[i] = 0.0;
        }
    }
    app_distance distance;
    app_distance_begin(&distance, o.core_distance);
    CC_MPI(MPI_Barrier(MPI_COMM_WORLD));

    app_clock clock;
    app_clock_start(&clock, APP_DISTRIBUTION);
    CC_MPI(MPI_Scatter(a, (int)(rows * n), MPI_DOUBLE, a_local, (int)(rows * n), MPI_DOUBLE, 0,
                       MPI_COMM_WORLD));
    CC_MPI(MPI_Scatter(b, (int)rows, MPI_DOUBLE, b_local, (int)rows, MPI_DOUBLE, 0,
                       MPI_COMM_WORLD));
    CC_MPI(MPI_Bcast(x, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD));

    long done = 0, limit = o.iterations ? o.iterations : o.max_iterations;
    double change = INFINITY;
    while (done < limit && (o.iterations || change >= o.tolerance)) {
        app_phase_enter(&clock, APP_COMPUTATION);
        double largest = 0.0;
        for (long r = 0; r < rows; r++) {
            const double *row = a_local + r * n;
            long i = first + r;
            double sum = 0.0;
            for (long j = 0; j < n; j++) sum += row[j] * x[j];
            double updated = (b_local[r] - (sum - row[i] * x[i])) / row[i];
            largest = fmax(largest, fabs(updated - x[i]));
            mine[r] = updated;
        }
        app_phase_enter(&clock, APP_COMMUNICATION);
        exchange(o.exchange, mine, x, rows, rank, p, requests);
        CC_MPI(MPI_Allreduce(&largest, &change, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
        done++;
        if (fault == APP_FAULT_CRASH && rank == 0) cc_die("injected crash (COMMCHAR_APP_FAULT)");
    }
    double elapsed = app_clock_stop(&clock);
    app_distance_end(&distance);

    if (fault == APP_FAULT_WRONG) x[0] += 1.0;
    double error = 0.0;
    for (long i = 0; i < n; i++)
        error = fmax(error, fabs(x[i] - known_solution(i)) / known_solution(i));
    int verified = error < 1e-6;

    cc_buf line;
    unsigned phases = APP_PHASE_BIT(APP_DISTRIBUTION) | APP_PHASE_BIT(APP_COMPUTATION) |
                      APP_PHASE_BIT(APP_COMMUNICATION);
    app_result_begin(&line, "jacobi", &clock, phases, elapsed);
    if (rank == 0) {
        cc_buf_key(&line, "N");
        cc_buf_printf(&line, "%ld", n);
        cc_buf_key(&line, "exchange");
        cc_buf_str(&line, exchange_names[o.exchange]);
        cc_buf_key(&line, "iterations");
        cc_buf_printf(&line, "%ld", done);
        cc_buf_key(&line, "last_change");
        cc_buf_num(&line, change);
        cc_buf_key(&line, "max_error");
        cc_buf_num(&line, error);
        app_distance_json(&line, &distance);
        app_result_emit(&line, verified);
    } else {
        cc_buf_free(&line);
    }
    free(a);
    free(b);
    free(x);
    free(a_local);
    free(b_local);
    free(mine);
    free(requests);
    CC_MPI(MPI_Finalize());
    return verified ? 0 : APP_EXIT_WRONG;
}
