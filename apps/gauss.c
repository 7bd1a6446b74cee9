/* Gaussian elimination with MPI, after the LogGPS study (Ino, Fujimoto, Hagihara).
 *
 *   gauss --n N [--fragment BYTES] [--core-distance]
 *
 * Rows are distributed cyclically (row i on rank i % p), each rank building
 * its own rows of the system: a[i][j] = 1 + (7i + 13j) % 10 / 10 off the
 * diagonal, a[i][i] = 2N (strictly diagonally dominant, so elimination needs
 * no pivot search and row k is the pivot row of step k), known solution
 * x*[i] = 1 + i % 5 and b = A x*.
 *
 * Step k: the owner of row k sends its columns k..N-1 and b[k] (N-k+1 doubles)
 * to every other rank with MPI_Send, in rank order (communication); every rank
 * eliminates column k from its rows below k (computation).  The original code
 * sends a row as one message; --fragment BYTES sends it as consecutive
 * messages of at most BYTES (a multiple of 8), to stay below the library's
 * rendezvous threshold.  Back substitution (its own phase): the owner of row k
 * solves x[k] and sends it to every other rank, which subtracts its column.
 * Verified: every rank recomputes the residual max |b - A x| / |b| of its
 * original rows and the error against x*, both below 1e-9; otherwise exit 1.
 * Rank 0 prints one JSON line {"type":"result",...}. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_common.h"

static const char usage[] = "usage: gauss --n N [--fragment BYTES] [--core-distance]\n";

enum { PIVOT_TAG = 1, SOLUTION_TAG = 2 };

static double coefficient(long i, long j, long n)
{
    return i == j ? 2.0 * (double)n : 1.0 + (double)((7 * i + 13 * j) % 10) / 10.0;
}

static double known_solution(long i) { return 1.0 + (double)(i % 5); }

/* row i's coefficients and right-hand side, as the original system has them */
static void build_row(long i, long n, double *row, double *rhs)
{
    *rhs = 0.0;
    for (long j = 0; j < n; j++) {
        row[j] = coefficient(i, j, n);
        *rhs += row[j] * known_solution(j);
    }
}

/* one row (count doubles) to or from a peer, whole or in fragments */
static void send_row(const double *data, long count, long fragment, int peer)
{
    long step = fragment ? fragment : count;
    for (long at = 0; at < count; at += step) {
        long len = count - at < step ? count - at : step;
        CC_MPI(MPI_Send(data + at, (int)len, MPI_DOUBLE, peer, PIVOT_TAG, MPI_COMM_WORLD));
    }
}

static void recv_row(double *data, long count, long fragment, int owner)
{
    long step = fragment ? fragment : count;
    for (long at = 0; at < count; at += step) {
        long len = count - at < step ? count - at : step;
        CC_MPI(MPI_Recv(data + at, (int)len, MPI_DOUBLE, owner, PIVOT_TAG, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    }
}

int main(int argc, char **argv)
{
    CC_MPI(MPI_Init(&argc, &argv));
    MPI_Pcontrol(APP_OUTSIDE);
    int rank = 0, p = 1;
    CC_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CC_MPI(MPI_Comm_size(MPI_COMM_WORLD, &p));
    long n = 0, fragment_bytes = 0;
    int core_distance = 0;
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--core-distance") == 0) {
            core_distance = 1;
            continue; /* a flag without a value */
        }
        if (strcmp(argv[i], "--n") == 0)
            n = app_parse_long(usage, argv[i], value, 1, 1L << 16);
        else if (strcmp(argv[i], "--fragment") == 0)
            fragment_bytes = app_parse_long(usage, argv[i], value, 8, 1L << 30);
        else
            app_usage(usage, "unknown option '%s'", argv[i]);
        i++;
    }
    if (n == 0) app_usage(usage, "--n is required");
    if (fragment_bytes % 8 != 0)
        app_usage(usage, "--fragment must be a multiple of 8 bytes (whole doubles), not %ld",
                  fragment_bytes);
    long fragment = fragment_bytes / 8;
    app_fault fault = app_fault_read();

    /* local row r is global row rank + r p; its N coefficients then b */
    long mine = n / p + (rank < n % p ? 1 : 0), width = n + 1;
    double *rows = cc_xmalloc((size_t)(mine * width) * sizeof *rows);
    double *pivot = cc_xmalloc((size_t)width * sizeof *pivot);
    double *x = cc_xmalloc((size_t)n * sizeof *x);
    for (long r = 0; r < mine; r++)
        build_row(rank + r * p, n, rows + r * width, rows + r * width + n);
    app_distance distance;
    app_distance_begin(&distance, core_distance);
    CC_MPI(MPI_Barrier(MPI_COMM_WORLD));

    app_clock clock;
    app_clock_start(&clock, APP_COMMUNICATION);
    for (long k = 0; k < n; k++) {
        int owner = (int)(k % p);
        long count = n - k + 1; /* columns k..n-1 and b */
        const double *source = pivot;
        app_phase_enter(&clock, APP_COMMUNICATION);
        if (rank == owner) {
            source = rows + (k / p) * width + k; /* columns k..N-1 then b: contiguous */
            for (int peer = 0; peer < p; peer++)
                if (peer != owner) send_row(source, count, fragment, peer);
        } else {
            recv_row(pivot, count, fragment, owner);
        }
        app_phase_enter(&clock, APP_COMPUTATION);
        double diagonal = source[0];
        long below = k + 1 > rank ? (k + 1 - rank + p - 1) / p : 0; /* first local row > k */
        for (long r = below; r < mine; r++) {
            double *row = rows + r * width;
            double factor = row[k] / diagonal;
            for (long j = 0; j < count; j++) row[k + j] -= factor * source[j];
        }
        if (fault == APP_FAULT_CRASH && rank == 0 && k == n / 2)
            cc_die("injected crash (COMMCHAR_APP_FAULT)");
    }

    /* back substitution; partial[r] = b - sum of the columns solved so far */
    app_phase_enter(&clock, APP_SUBSTITUTION);
    double *partial = cc_xmalloc((size_t)(mine ? mine : 1) * sizeof *partial);
    for (long r = 0; r < mine; r++) partial[r] = rows[r * width + n];
    for (long k = n - 1; k >= 0; k--) {
        int owner = (int)(k % p);
        if (rank == owner) {
            x[k] = partial[k / p] / rows[(k / p) * width + k];
            for (int peer = 0; peer < p; peer++)
                if (peer != owner)
                    CC_MPI(MPI_Send(&x[k], 1, MPI_DOUBLE, peer, SOLUTION_TAG, MPI_COMM_WORLD));
        } else {
            CC_MPI(MPI_Recv(&x[k], 1, MPI_DOUBLE, owner, SOLUTION_TAG, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
        }
        for (long r = 0; r < mine; r++)
            if (rank + r * p < k) partial[r] -= rows[r * width + k] * x[k];
    }
    double elapsed = app_clock_stop(&clock);
    app_distance_end(&distance);

    if (fault == APP_FAULT_WRONG) x[n - 1] += 1e-3;
    double worst[2] = {0.0, 0.0}, most[2]; /* residual, error against x* */
    for (long r = 0; r < mine; r++) {
        long i = rank + r * p;
        double rhs = 0.0, ax = 0.0;
        build_row(i, n, pivot, &rhs);
        for (long j = 0; j < n; j++) ax += pivot[j] * x[j];
        worst[0] = fmax(worst[0], fabs(rhs - ax) / fabs(rhs));
    }
    for (long i = 0; i < n; i++)
        worst[1] = fmax(worst[1], fabs(x[i] - known_solution(i)) / known_solution(i));
    CC_MPI(MPI_Allreduce(worst, most, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    int verified = most[0] < 1e-9 && most[1] < 1e-9;

    cc_buf line;
    unsigned phases = APP_PHASE_BIT(APP_COMPUTATION) | APP_PHASE_BIT(APP_COMMUNICATION) |
                      APP_PHASE_BIT(APP_SUBSTITUTION);
    app_result_begin(&line, "gauss", &clock, phases, elapsed);
    if (rank == 0) {
        cc_buf_key(&line, "N");
        cc_buf_printf(&line, "%ld", n);
        cc_buf_key(&line, "fragment_bytes");
        cc_buf_printf(&line, "%ld", fragment_bytes);
        cc_buf_key(&line, "largest_message_bytes");
        cc_buf_printf(&line, "%ld", 8 * (fragment && fragment < n + 1 ? fragment : n + 1));
        cc_buf_key(&line, "residual");
        cc_buf_num(&line, most[0]);
        cc_buf_key(&line, "max_error");
        cc_buf_num(&line, most[1]);
        app_distance_json(&line, &distance);
        app_result_emit(&line, verified);
    } else {
        cc_buf_free(&line);
    }
    free(rows);
    free(pivot);
    free(x);
    free(partial);
    CC_MPI(MPI_Finalize());
    return verified ? 0 : APP_EXIT_WRONG;
}
