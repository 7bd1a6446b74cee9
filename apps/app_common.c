#include "app_common.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_parse.h"
#include "cc_timer.h"

const char *const app_phase_names[APP_PHASES] = {"outside", "distribution", "computation",
                                                 "communication", "substitution"};

void app_clock_start(app_clock *clock, app_phase first)
{
    memset(clock, 0, sizeof *clock);
    clock->current = APP_OUTSIDE;
    clock->started_ns = clock->phase_started_ns = cc_now_ns();
    app_phase_enter(clock, first);
}

void app_phase_enter(app_clock *clock, app_phase next)
{
    int64_t now = cc_now_ns();
    clock->seconds[clock->current] += (double)(now - clock->phase_started_ns) * 1e-9;
    if (next != clock->current) MPI_Pcontrol((int)next);
    clock->current = next;
    /* the mark itself belongs to the phase it opens, as the tracer sees it */
    clock->phase_started_ns = now;
}

double app_clock_stop(app_clock *clock)
{
    app_phase_enter(clock, APP_OUTSIDE);
    return (double)(clock->phase_started_ns - clock->started_ns) * 1e-9;
}

app_fault app_fault_read(void)
{
    const char *text = getenv("COMMCHAR_APP_FAULT");
    if (!text || !*text) return APP_FAULT_NONE;
    if (strcmp(text, "crash") == 0) return APP_FAULT_CRASH;
    if (strcmp(text, "wrong") == 0) return APP_FAULT_WRONG;
    cc_die("COMMCHAR_APP_FAULT='%s' is neither crash nor wrong", text);
}

void app_usage(const char *usage, const char *fmt, ...)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        char detail[CC_ERRLEN];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof detail, fmt, ap);
        va_end(ap);
        cc_emit_error(detail);
        fprintf(stderr, "%s\n%s", detail, usage);
    }
    MPI_Finalize();
    exit(APP_EXIT_USAGE);
}

long app_parse_long(const char *usage, const char *flag, const char *text, long lo, long hi)
{
    char err[CC_ERRLEN];
    long value = 0;
    if (cc_parse_long(flag, text, lo, hi, &value, err, sizeof err) != 0) app_usage(usage, "%s", err);
    return value;
}

double app_parse_double(const char *usage, const char *flag, const char *text)
{
    char err[CC_ERRLEN];
    double value = 0.0;
    if (cc_parse_double(flag, text, 0.0, INFINITY, 1, &value, err, sizeof err) != 0)
        app_usage(usage, "%s", err);
    return value;
}

void app_result_begin(cc_buf *line, const char *app, const app_clock *clock, unsigned phases,
                      double elapsed_s)
{
    double mine[APP_PHASES + 1], most[APP_PHASES + 1];
    memcpy(mine, clock->seconds, sizeof clock->seconds);
    mine[APP_PHASES] = elapsed_s;
    CC_MPI(MPI_Reduce(mine, most, APP_PHASES + 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
    int p = 0, len = 0;
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    CC_MPI(MPI_Comm_size(MPI_COMM_WORLD, &p));
    CC_MPI(MPI_Get_library_version(version, &len));
    version[strcspn(version, "\n")] = '\0';
    cc_buf_init(line);
    cc_buf_printf(line, "{\"type\":\"result\"");
    cc_buf_key(line, "app");
    cc_buf_str(line, app);
    cc_buf_key(line, "p");
    cc_buf_printf(line, "%d", p);
    cc_buf_key(line, "library_version");
    cc_buf_str(line, version);
    cc_buf_key(line, "phases_s");
    cc_buf_printf(line, "{");
    for (int phase = APP_DISTRIBUTION; phase < APP_PHASES; phase++) {
        if (!(phases & APP_PHASE_BIT(phase))) continue;
        cc_buf_key(line, app_phase_names[phase]);
        cc_buf_num(line, most[phase]);
    }
    cc_buf_printf(line, "}");
    cc_buf_key(line, "elapsed_s");
    cc_buf_num(line, most[APP_PHASES]);
}

void app_result_emit(cc_buf *line, int verified)
{
    cc_buf_key(line, "verified");
    cc_buf_bool(line, verified);
    cc_buf_printf(line, "}");
    cc_buf_emit(line);
    cc_buf_free(line);
}

void app_distance_begin(app_distance *d, int asked)
{
    d->asked = asked;
    d->before.rtt_ns = d->before.copy_ns = d->after.rtt_ns = d->after.copy_ns = -1.0;
    d->probe.side = -1;
    if (!asked) return;
    cc_core_distance_open(&d->probe, MPI_COMM_WORLD);
    d->before = cc_core_distance_sample(&d->probe);
}

void app_distance_end(app_distance *d)
{
    if (!d->asked) return;
    d->after = cc_core_distance_sample(&d->probe);
    cc_core_distance_close(&d->probe);
}

void app_distance_json(cc_buf *line, const app_distance *d)
{
    cc_core_distance_json(line, d->before, d->after);
}
