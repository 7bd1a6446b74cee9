/* Two real processes joined by cc_am without MPI: the parent opens both
 * sockets, forks, and each side keeps one.  Used by the tests and the
 * benchmark (the MPI bootstrap has its own test). */
#ifndef AM_PAIR_H
#define AM_PAIR_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cc_am.h"

typedef int (*am_pair_fn)(cc_am_ep *ep, int rank, void *arg);
/* called with its rank in each process after the fork (the benchmark pins) */
static void (*am_pair_pin)(int rank);

/* each rank gets its own segment of segment_bytes; returns rank 0's result,
 * and the child's wait status in *child_status */
static int am_pair_run(cc_am_config cfg, size_t segment_bytes, am_pair_fn fn, void *arg,
                       int *child_status)
{
    cc_am_ep *ep[2] = {NULL, NULL};
    cc_am_addr addr[2];
    char err[CC_AM_ERRLEN];
    for (int r = 0; r < 2; r++) {
        cfg.segment_bytes = segment_bytes;
        cfg.segment = segment_bytes ? calloc(1, segment_bytes) : NULL;
        if (cc_am_open(&cfg, &ep[r], &addr[r], err, sizeof err) != CC_AM_OK) {
            fprintf(stderr, "cc_am_open: %s\n", err);
            exit(2);
        }
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(2);
    }
    const int rank = pid == 0 ? 1 : 0;
    if (am_pair_pin) am_pair_pin(rank);
    cc_am_close(ep[1 - rank]); /* never connected: just its socket */
    if (cc_am_connect(ep[rank], rank, 2, addr) != CC_AM_OK) {
        fprintf(stderr, "cc_am_connect: %s\n", cc_am_error(ep[rank]));
        exit(2);
    }
    int rc = fn(ep[rank], rank, arg);
    if (rank == 1) {
        fflush(NULL);
        _exit(rc == 0 ? 0 : 1);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {}
    *child_status = status;
    return rc;
}

/* both ranks reach this before closing: neither closes while the other still needs it */
static int am_pair_done_count;
static void am_pair_done_handler(cc_am_token *t, const cc_am_word *a, int n, void *c)
{
    (void)t, (void)a, (void)n, (void)c;
    am_pair_done_count++;
}
enum { AM_PAIR_DONE_HANDLER = 255 };
static void am_pair_prepare(cc_am_ep *ep)
{
    am_pair_done_count = 0;
    cc_am_set_handler(ep, AM_PAIR_DONE_HANDLER, am_pair_done_handler, NULL);
}
static int am_pair_finish(cc_am_ep *ep)
{
    int rc = cc_am_request_1(ep, 1 - cc_am_rank(ep), AM_PAIR_DONE_HANDLER, 0);
    while (rc >= 0 && am_pair_done_count == 0) rc = cc_am_poll(ep);
    int closed = cc_am_close(ep);
    return rc < 0 ? rc : closed;
}

#endif
