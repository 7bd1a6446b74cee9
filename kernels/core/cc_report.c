#include "cc_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
#define CC_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define CC_COMPILER "gcc " __VERSION__
#elif defined(__VERSION__)
#define CC_COMPILER __VERSION__
#else
#define CC_COMPILER "unknown"
#endif

static void cc_trim_end(char *s)
{
    size_t len = strlen(s);
    while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == ' ' || s[len - 1] == '\t')) s[--len] = '\0';
}

static void cc_header_options(cc_buf *b, const cc_options *opt, const cc_fault *fault)
{
    cc_buf_key(b, "options");
    cc_buf_printf(b, "{");
    cc_buf_key(b, "plan");
    cc_buf_str(b, opt->plan_text);
    cc_buf_key(b, "precision");
    cc_buf_num(b, opt->precision);
    cc_buf_key(b, "min_reps");
    cc_buf_printf(b, "%ld", opt->min_reps);
    cc_buf_key(b, "max_reps");
    cc_buf_printf(b, "%ld", opt->max_reps);
    cc_buf_key(b, "max_time");
    cc_buf_num(b, opt->max_time);
    cc_buf_key(b, "warmup_time");
    cc_buf_num(b, opt->warmup_time);
    cc_buf_key(b, "warmup_min_time");
    cc_buf_num(b, opt->warmup_min_time);
    cc_buf_key(b, "warmup_round_time");
    cc_buf_num(b, opt->warmup_round_time);
    cc_buf_key(b, "warmup");
    cc_buf_str(b, opt->warmup_series ? "series" : "point");
    cc_buf_key(b, "batch_threshold");
    cc_buf_num(b, opt->batch_threshold);
    cc_buf_key(b, "batch_min_us");
    cc_buf_num(b, opt->batch_min_us);
    cc_buf_key(b, "sync");
    cc_buf_str(b, opt->sync->name);
    cc_buf_key(b, "sync_window_factor");
    cc_buf_num(b, opt->sync_window_factor);
    cc_buf_key(b, "sync_window_us");
    cc_buf_num(b, opt->sync_window_us);
    cc_buf_key(b, "window");
    cc_buf_printf(b, "%ld", opt->window);
    cc_buf_key(b, "rndv_delay_us");
    cc_buf_num(b, opt->rndv_delay_us);
    cc_buf_key(b, "loggp_overheads_below");
    cc_buf_printf(b, "%ld", opt->loggp_overheads_below);
    cc_buf_key(b, "cache");
    cc_buf_str(b, opt->cache_cold ? "cold" : "warm");
    cc_buf_key(b, "cache_limit");
    cc_buf_printf(b, "%zu", opt->cache_limit);
    cc_buf_key(b, "buffer_offset");
    cc_buf_printf(b, "%ld", opt->buffer_offset);
    cc_buf_key(b, "recv_offset");
    cc_buf_printf(b, "%ld", opt->recv_offset >= 0 ? opt->recv_offset : opt->buffer_offset);
    cc_buf_key(b, "core_distance");
    cc_buf_bool(b, opt->core_distance);
    cc_buf_key(b, "prewarm");
    cc_buf_bool(b, opt->prewarm);
    cc_buf_key(b, "heap");
    cc_buf_str(b, opt->heap_held ? "steady" : "as-is");
    if (opt->cache_cold) {
        cc_buf_key(b, "llc_bytes");
        cc_buf_printf(b, "%zu", opt->llc_bytes);
        cc_buf_key(b, "llc_source");
        cc_buf_str(b, opt->llc_source);
    }
    cc_buf_key(b, "inject_fault");
    cc_buf_str(b, fault->text);
    cc_buf_printf(b, "}");
}

void cc_report_header(const cc_env *env, const cc_fault *fault)
{
    char me[MPI_MAX_PROCESSOR_NAME + 1];
    memset(me, 0, sizeof me);
    int len = 0;
    CC_MPI(MPI_Get_processor_name(me, &len));
    const int root = env->world_rank == 0;
    char *all = root ? cc_xmalloc((size_t)env->world_size * sizeof me) : NULL;
    CC_MPI(MPI_Gather(me, (int)sizeof me, MPI_CHAR, all, (int)sizeof me, MPI_CHAR, 0, env->all_ctl));
    if (!root) return;

    char library[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    memset(library, 0, sizeof library);
    CC_MPI(MPI_Get_library_version(library, &len));
    cc_trim_end(library);
    int major = 0, minor = 0;
    CC_MPI(MPI_Get_version(&major, &minor));

    cc_buf b;
    cc_buf_init(&b);
    cc_buf_printf(&b, "{\"type\":\"header\"");
    cc_buf_key(&b, "kernel_version");
    cc_buf_printf(&b, "%d", CC_KERNEL_VERSION);
    cc_buf_key(&b, "p");
    cc_buf_printf(&b, "%d", env->world_size);
    cc_buf_key(&b, "mpi_library_version");
    cc_buf_str(&b, library);
    cc_buf_key(&b, "mpi_version");
    cc_buf_printf(&b, "\"%d.%d\"", major, minor);
    cc_buf_key(&b, "hosts");
    cc_buf_printf(&b, "[");
    for (int r = 0; r < env->world_size; r++) {
        char *name = all + (size_t)r * sizeof me;
        name[sizeof me - 1] = '\0';
        if (r) cc_buf_printf(&b, ",");
        cc_buf_str(&b, name);
    }
    cc_buf_printf(&b, "]");
    cc_buf_key(&b, "timer");
    cc_buf_str(&b, CC_TIMER_NAME);
    cc_buf_key(&b, "timer_resolution_ns");
    cc_buf_num(&b, env->timer.resolution_ns);
    cc_buf_key(&b, "timer_cost_ns");
    cc_buf_num(&b, env->timer.cost_ns);
    cc_buf_key(&b, "compiler");
    cc_buf_str(&b, CC_COMPILER);
    cc_header_options(&b, env->opt, fault);
    cc_buf_printf(&b, "}");
    cc_buf_emit(&b);
    cc_buf_free(&b);
    free(all);
}

static void cc_point_identity(cc_buf *b, const char *type, const cc_point *pt)
{
    cc_buf_printf(b, "{\"type\":\"%s\"", type);
    cc_buf_key(b, "op");
    cc_buf_str(b, pt->op->name);
    cc_buf_key(b, "variant");
    cc_buf_str(b, pt->variant_name);
    cc_buf_key(b, "n_bytes");
    cc_buf_printf(b, "%zu", pt->n);
}

void cc_report_begin(cc_buf *out, const cc_point *pt)
{
    cc_point_identity(out, "begin", pt);
    cc_buf_printf(out, "}");
    cc_buf_emit(out);
}

void cc_report_point(cc_buf *out, const cc_point *pt, const cc_series *s, int valid, const char *error,
                     double wall_s, const cc_buf *extra)
{
    cc_point_identity(out, "point", pt);
    cc_buf_key(out, "p");
    cc_buf_printf(out, "%d", pt->env->world_size);
    cc_buf_key(out, "samples_us");
    cc_buf_printf(out, "[");
    for (long i = 0; i < s->n; i++) {
        if (i) cc_buf_append(out, ",", 1);
        cc_buf_num(out, s->samples_us[i]);
    }
    cc_buf_printf(out, "]");
    cc_buf_key(out, "batch");
    cc_buf_printf(out, "%ld", s->batch);
    cc_buf_key(out, "warmup");
    cc_buf_printf(out, "%ld", s->warmup);
    cc_buf_key(out, "reps");
    cc_buf_printf(out, "%ld", s->n);
    cc_buf_key(out, "precision_target");
    cc_buf_num(out, s->precision > 0.0 ? s->precision : pt->env->opt->precision);
    cc_buf_key(out, "min_reps");
    cc_buf_printf(out, "%ld", s->min_reps > 0 ? s->min_reps : pt->env->opt->min_reps);
    cc_buf_key(out, "precision_met");
    cc_buf_bool(out, s->precision_met);
    cc_buf_key(out, "ci_rel");
    cc_buf_num(out, s->ci_rel);
    cc_buf_key(out, "tick_us");
    cc_buf_num(out, s->tick_us);
    cc_buf_key(out, "stop_reason");
    cc_buf_str(out, s->stop_reason ? s->stop_reason : "");
    cc_buf_key(out, "valid");
    cc_buf_bool(out, valid);
    cc_buf_key(out, "error");
    cc_buf_str(out, error);
    cc_buf_key(out, "sync");
    cc_buf_str(out, pt->sync->name);
    cc_buf_key(out, "cache");
    cc_buf_str(out, pt->env->opt->cache_cold ? "cold" : "warm");
    cc_buf_key(out, "cache_region_bytes");
    cc_buf_printf(out, "%zu", pt->rot.region_bytes);
    cc_buf_key(out, "wall_s");
    cc_buf_num(out, wall_s);
    cc_buf_key(out, "extra");
    cc_buf_append(out, extra->data, extra->len);
    cc_buf_printf(out, "}");
    cc_buf_emit(out);
}

void cc_report_window(cc_buf *extra, const cc_series *s)
{
    cc_buf_key(extra, "sync_window");
    cc_buf_printf(extra, "{");
    cc_buf_key(extra, "window_us");
    cc_buf_num(extra, s->window_us);
    cc_buf_key(extra, "clock_rtt_us");
    cc_buf_num(extra, s->clock_rtt_us);
    cc_buf_key(extra, "estimate_us");
    cc_buf_num(extra, s->estimate_us);
    cc_buf_key(extra, "late");
    cc_buf_printf(extra, "%ld", s->late);
    cc_buf_key(extra, "redone");
    cc_buf_printf(extra, "%ld", s->redone);
    cc_buf_key(extra, "bound_hit");
    cc_buf_bool(extra, s->stop_reason && strcmp(s->stop_reason, "late") == 0);
    cc_buf_printf(extra, "}");
}

void cc_report_end(cc_buf *out, size_t points, double wall_s)
{
    cc_buf_printf(out, "{\"type\":\"end\"");
    cc_buf_key(out, "points");
    cc_buf_printf(out, "%zu", points);
    cc_buf_key(out, "wall_s");
    cc_buf_num(out, wall_s);
    cc_buf_printf(out, "}");
    cc_buf_emit(out);
}

void cc_report_unsupported(cc_buf *out, const cc_point *pt, const char *why)
{
    cc_point_identity(out, "unsupported", pt);
    cc_buf_key(out, "p");
    cc_buf_printf(out, "%d", pt->env->world_size);
    cc_buf_key(out, "reason");
    cc_buf_str(out, why);
    cc_buf_printf(out, "}");
    cc_buf_emit(out);
}
