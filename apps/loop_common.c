#include "loop_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STAMP 8

static int in_stamp(size_t i, size_t n) { return i < STAMP || i + STAMP >= n; }

uint8_t loop_byte(uint32_t code, long k, size_t i, size_t n)
{
    uint32_t x = in_stamp(i, n) ? code * 2654435761u + (uint32_t)k * 40503u + (uint32_t)i * 97u
                                : code * 2246822519u + (uint32_t)i * 7u;
    return (uint8_t)(x ^ (x >> 13) ^ (x >> 24));
}

void loop_fill(uint8_t *buf, size_t n, uint32_t code, long k)
{
    for (size_t i = 0; i < n; i++) buf[i] = loop_byte(code, k, i, n);
}

void loop_stamp(uint8_t *buf, size_t n, uint32_t code, long k)
{
    size_t head = n < STAMP ? n : STAMP;
    for (size_t i = 0; i < head; i++) buf[i] = loop_byte(code, k, i, n);
    for (size_t i = n > STAMP ? n - STAMP : head; i < n; i++) buf[i] = loop_byte(code, k, i, n);
}

long loop_check(const uint8_t *buf, size_t n, uint32_t code, long k, int all)
{
    long wrong = 0;
    if (all) {
        for (size_t i = 0; i < n; i++) wrong += buf[i] != loop_byte(code, k, i, n);
        return wrong;
    }
    size_t head = n < STAMP ? n : STAMP;
    for (size_t i = 0; i < head; i++) wrong += buf[i] != loop_byte(code, k, i, n);
    for (size_t i = n > STAMP ? n - STAMP : head; i < n; i++)
        wrong += buf[i] != loop_byte(code, k, i, n);
    return wrong;
}

void loop_perturb(loop_ctx *ctx, long k, uint8_t *buf, size_t n)
{
    if (ctx->perturb && k == ctx->iterations - 1 && n > 0) buf[n / 2] ^= 0x5a;
}

static const char usage_fmt[] = "usage: %s --bytes N [--iterations K] [--core-distance]\n";

int loop_main(int argc, char **argv, const loop_program *program)
{
    CC_MPI(MPI_Init(&argc, &argv));
    MPI_Pcontrol(APP_OUTSIDE);
    loop_ctx ctx = {.bytes = -1, .iterations = 1000};
    int distance_asked = 0; /* --core-distance: time ranks 0 and 1's cache line before and after the loop */
    CC_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &ctx.rank));
    CC_MPI(MPI_Comm_size(MPI_COMM_WORLD, &ctx.p));
    char usage[128];
    snprintf(usage, sizeof usage, usage_fmt, program->name);
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(flag, "--bytes") == 0)
            ctx.bytes = app_parse_long(usage, flag, value, 0, 1L << 30);
        else if (strcmp(flag, "--iterations") == 0)
            ctx.iterations = app_parse_long(usage, flag, value, 1, 1L << 30);
        else if (strcmp(flag, "--core-distance") == 0) {
            distance_asked = 1;
            continue; /* takes no value */
        }
        else
            app_usage(usage, "unknown option '%s'", flag);
        i++;
    }
    if (ctx.bytes < 0) app_usage(usage, "--bytes is required");
    if (ctx.bytes < program->min_bytes)
        app_usage(usage, "%s needs --bytes of at least %ld", program->name, program->min_bytes);
    if (program->multiple > 1 && ctx.bytes % program->multiple != 0)
        app_usage(usage, "%s needs --bytes a multiple of %ld, not %ld", program->name,
                  program->multiple, ctx.bytes);
    if (ctx.p < program->min_p)
        app_usage(usage, "%s needs at least %d processes, not %d", program->name, program->min_p,
                  ctx.p);
    ctx.perturb = app_fault_read() == APP_FAULT_WRONG && ctx.rank == 0;

    program->setup(&ctx);
    app_distance distance;
    app_distance_begin(&distance, distance_asked);
    CC_MPI(MPI_Barrier(MPI_COMM_WORLD));
    app_clock clock;
    app_clock_start(&clock, APP_COMMUNICATION);
    for (long k = 0; k < ctx.iterations; k++) program->iterate(&ctx, k);
    double elapsed = app_clock_stop(&clock);
    app_distance_end(&distance);
    program->finish(&ctx);

    long errors = 0;
    CC_MPI(MPI_Allreduce(&ctx.errors, &errors, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    cc_buf line;
    app_result_begin(&line, program->name, &clock, APP_PHASE_BIT(APP_COMMUNICATION), elapsed);
    double slowest = 0;
    CC_MPI(MPI_Allreduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    if (ctx.rank == 0) {
        cc_buf_key(&line, "bytes");
        cc_buf_printf(&line, "%ld", ctx.bytes);
        cc_buf_key(&line, "iterations");
        cc_buf_printf(&line, "%ld", ctx.iterations);
        cc_buf_key(&line, "per_iteration_us");
        cc_buf_num(&line, slowest / (double)ctx.iterations * 1e6);
        cc_buf_key(&line, "errors");
        cc_buf_printf(&line, "%ld", errors);
        app_distance_json(&line, &distance);
        app_result_emit(&line, errors == 0);
    } else {
        cc_buf_free(&line);
    }
    if (errors && ctx.rank == 0)
        fprintf(stderr, "%s: %ld wrong values received\n", program->name, errors);
    CC_MPI(MPI_Finalize());
    return errors ? APP_EXIT_WRONG : 0;
}
