/* What the validation programs share: a barrier, then a timed loop of one
 * communication pattern, its data checked, one JSON result line.
 *
 *   <program> --bytes N [--iterations K] [--core-distance]
 *
 * Every message carries a known pattern: byte i of the message identified by
 * `code` is body(code, i), except its first and last 8 bytes (the stamps),
 * which carry stamp(code, k, i) of the iteration k that sent it.  The sender
 * fills the body once and writes the stamps each iteration; the receiver checks
 * the stamps each iteration and every byte after the loop, so a message
 * delivered late, twice or to the wrong buffer is caught without filling or
 * reading a whole buffer inside the timed loop.
 *
 * The loop is the communication phase (MPI_Pcontrol level 3, app_common.h), so
 * a trace of the program marks it; rank 0 prints
 *   {"type":"result","app":NAME,"p":P,...,"bytes":N,"iterations":K,
 *    "per_iteration_us":T,"errors":E,"verified":true}
 * with T the loop's time (the slowest rank's) over K.  Wrong data: exit 1.
 * --core-distance adds "core_rtt_ns":[before,after], the round trip of a cache
 * line between ranks 0 and 1's cores just before and after the loop, and
 * "core_copy_ns":[before,after], the slower of the two ranks' copy of 4 KiB
 * within its L1 cache (cc_core_distance.h): which state of the host the loop
 * ran in. */
#ifndef LOOP_COMMON_H
#define LOOP_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "app_common.h"

typedef struct loop_ctx {
    int rank, p;
    long bytes, iterations;
    long errors;   /* data found wrong on this rank */
    int perturb;   /* COMMCHAR_APP_FAULT=wrong: corrupt one received byte */
    void *state;   /* the program's own */
} loop_ctx;

typedef struct loop_program {
    const char *name;
    long min_bytes;   /* smallest --bytes */
    long multiple;    /* --bytes must be a multiple of this */
    int min_p;        /* fewest ranks */
    void (*setup)(loop_ctx *ctx);
    void (*iterate)(loop_ctx *ctx, long k);
    void (*finish)(loop_ctx *ctx); /* after the loop: check everything, free */
} loop_program;

/* parses the options, runs setup, barrier, the timed loop, finish; returns the exit status */
int loop_main(int argc, char **argv, const loop_program *program);

/* byte i of message `code` as sent in iteration k, of n bytes */
uint8_t loop_byte(uint32_t code, long k, size_t i, size_t n);
/* fills all n bytes of message `code` for iteration k */
void loop_fill(uint8_t *buf, size_t n, uint32_t code, long k);
/* writes only the stamps of iteration k */
void loop_stamp(uint8_t *buf, size_t n, uint32_t code, long k);
/* wrong bytes among the stamps (all: every byte) of message `code` of iteration k */
long loop_check(const uint8_t *buf, size_t n, uint32_t code, long k, int all);
/* the fault injection: flips the middle byte of what the last iteration
 * received when ctx->perturb is set (COMMCHAR_APP_FAULT=wrong, rank 0) */
void loop_perturb(loop_ctx *ctx, long k, uint8_t *buf, size_t n);

#endif
