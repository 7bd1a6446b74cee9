/* am-mpi-test: cc_am bootstrapped through MPI (any number of ranks).  Every
 * rank sends requests and a store to every other rank and checks what it
 * receives; MPI is used only to start and for the final barrier. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_am_mpi.h"

enum { H_PING = 1, H_PONG = 2, H_STORE = 3, H_DONE = 4, N = 200, BYTES = 100000 };

static int pongs, stores, dones, bad;

static void on_ping(cc_am_token *t, const cc_am_word *a, int n, void *c)
{
    (void)n, (void)c;
    cc_am_reply_1(t, H_PONG, a[0] + 1);
}
static void on_pong(cc_am_token *t, const cc_am_word *a, int n, void *c)
{
    (void)t, (void)n, (void)c;
    if (a[0] == 0) bad++;
    pongs++;
}
static void on_store(cc_am_token *t, void *addr, size_t n, cc_am_word arg, void *c)
{
    (void)c;
    const unsigned char *p = addr;
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(arg + i)) {
            bad++;
            break;
        }
    if ((int)arg != cc_am_token_source(t)) bad++;
    stores++;
}
static void on_done(cc_am_token *t, const cc_am_word *a, int n, void *c)
{
    (void)t, (void)a, (void)n, (void)c;
    dones++;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cc_am_config cfg;
    cc_am_config_default(&cfg);
    char err[CC_AM_ERRLEN];
    if (cc_am_config_from_env(&cfg, err, sizeof err) != CC_AM_OK) {
        fprintf(stderr, "%s\n", err);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    cfg.segment_bytes = (size_t)size * BYTES;
    cfg.segment = calloc(1, cfg.segment_bytes);
    cc_am_ep *ep = NULL;
    if (cc_am_init_mpi(MPI_COMM_WORLD, &cfg, &ep, err, sizeof err) != CC_AM_OK) {
        fprintf(stderr, "rank %d: %s\n", rank, err);
        MPI_Finalize();
        return 1;
    }
    cc_am_set_handler(ep, H_PING, on_ping, NULL);
    cc_am_set_handler(ep, H_PONG, on_pong, NULL);
    cc_am_set_handler(ep, H_DONE, on_done, NULL);
    cc_am_set_bulk_handler(ep, H_STORE, on_store, NULL);
    unsigned char *src = malloc(BYTES);
    for (int i = 0; i < BYTES; i++) src[i] = (unsigned char)(rank + i);
    int rc = 0;
    for (int k = 0; k < N && rc >= 0; k++)
        for (int d = 0; d < size && rc >= 0; d++)
            if (d != rank) rc = cc_am_request_1(ep, d, H_PING, (cc_am_word)k);
    for (int d = 0; d < size && rc >= 0; d++)
        if (d != rank) rc = cc_am_store(ep, d, src, (size_t)rank * BYTES, BYTES, H_STORE, (cc_am_word)rank);
    for (int d = 0; d < size && rc >= 0; d++)
        if (d != rank) rc = cc_am_request_1(ep, d, H_DONE, 0);
    while (rc >= 0 && (dones < size - 1 || pongs < N * (size - 1))) rc = cc_am_poll(ep);
    int ok = rc >= 0 && !bad && stores == size - 1;
    if (!ok)
        printf("FAIL rank %d: rc %d (%s) pongs %d stores %d bad %d\n", rank, rc, cc_am_error(ep), pongs,
               stores, bad);
    rc = cc_am_close(ep);
    MPI_Barrier(MPI_COMM_WORLD);
    if (ok && rc == CC_AM_OK) printf("ok rank %d of %d\n", rank, size);
    free(src);
    free(cfg.segment);
    MPI_Finalize();
    return ok && rc == CC_AM_OK ? 0 : 1;
}
