#include "cc_options.h"

#include <ctype.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_cache.h"
#include "cc_errors.h"
#include "cc_op.h"
#include "cc_parse.h"

const char cc_usage[] =
    "usage: commchar-kernel --plan PLAN [options]\n"
    "  PLAN: ';'-separated entries op[:variant][@R][/M]=n1,n2,... (sizes in bytes; @R: the\n"
    "        entry's own precision in place of --precision; /M: its own fewest samples in\n"
    "        place of --min-reps)\n"
    "  --precision R          stop when the 95% CI of the median is within R (0.01)\n"
    "  --min-reps N           fewest samples per point (10)\n"
    "  --max-reps N           most samples per point (100000)\n"
    "  --max-time S           most seconds of measurement per point (1.0)\n"
    "  --warmup-time S        most untimed warm-up per point, at least 2 calls (0.005)\n"
    "  --warmup-min-time S    least warm-up: it ends once the per-call time is steady (0.0005)\n"
    "  --warmup series|point  series: the least warm-up binds the first point of each plan\n"
    "                         entry and the first of each 4 KiB step up to 64 KiB, the\n"
    "                         others end once steady (series)\n"
    "  --warmup-round-time S  a warm-up round of fewer than 8 calls compares only when it\n"
    "                         lasts S seconds (0.00025)\n"
    "  --batch-threshold K    batch calls shorter than K timer resolutions (100)\n"
    "  --batch-min-us U       a batch spans at least U microseconds: each sample's bounds\n"
    "                         (its timer reads, the ranks' skew where the slowest rank\n"
    "                         times it) stay a small part of it (20; 0: none)\n"
    "  --sync auto|barrier|none|window  start synchronisation of collectives (auto:\n"
    "                         none for those that synchronise their ranks, barrier\n"
    "                         for the others); window: at common times on\n"
    "                         offset-corrected clocks\n"
    "  --sync-window-factor F window = F x an estimate of one repetition (4)\n"
    "  --sync-window-us W     a fixed window of W microseconds instead (0: from F)\n"
    "  --window W             messages per window of bw, bibw, mbw and the one-sided _bw\n"
    "                         variants, fewer (at least 2) past 1 MiB a window (64)\n"
    "  --rndv-delay-us D      receiver delay of rndv (200)\n"
    "  --loggp-overheads-below B\n"
    "                         LogGP's o_s and o_r phases only below B bytes; from B\n"
    "                         on, its gap alone (0: at every size) (0)\n"
    "  --cache cold|warm      cold: each repetition uses buffers out of cache (warm)\n"
    "  --cache-limit B        most bytes of a rank's cold-buffer region (1073741824)\n"
    "  --buffer-offset B      message buffers start B bytes past a page boundary, as\n"
    "                         malloc's large blocks do (16; 0: page-aligned)\n"
    "  --recv-offset B        receive buffers start B bytes past a page boundary instead\n"
    "                         (a copy's speed may depend on where its ends lie in a line)\n"
    "  --core-distance on|off time a cache line between ranks 0 and 1 around every\n"
    "                         point (on; off where they share cores)\n"
    "  --heap steady|as-is    steady: the library's temporaries are reused warm, never\n"
    "                         given back to the system and faulted in again (steady)\n"
    "  --prewarm on|off       256 messages of 8 KiB around the ranks' ring before the\n"
    "                         first point that is not coldstart or collstart, so every\n"
    "                         point finds the library's eager buffers touched (on)\n"
    "Output: JSON Lines on rank 0's stdout (docs/kernel-protocol.md).\n";

#define CC_MAX_SIZE ((size_t)1 << 40)

static int cc_fail(char *err, size_t errlen, const char *fmt, ...) CC_PRINTF(3, 4);

static int cc_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static char *cc_trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    char *end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1])) *--end = '\0';
    return s;
}

static int cc_parse_size(const char *text, size_t *out)
{
    if (!*text) return -1;
    size_t v = 0;
    for (const char *c = text; *c; c++) {
        if (!isdigit((unsigned char)*c)) return -1;
        v = v * 10 + (size_t)(*c - '0');
        if (v > CC_MAX_SIZE) return -1;
    }
    *out = v;
    return 0;
}

/* one entry op[:variant][@precision][/min-reps]=n1,n2,... (modified in place) */
static int cc_parse_entry(char *text, int p, cc_entry *entry, char *err, size_t errlen)
{
    char *eq = strchr(text, '=');
    if (!eq) return cc_fail(err, errlen, "plan entry '%s' has no '=' before its sizes", text);
    *eq = '\0';
    char *name = cc_trim(text), *sizes = eq + 1;
    entry->precision = 0.0;
    entry->min_reps = 0;
    char *slash = strchr(name, '/'), *at = strchr(name, '@');
    if (slash) *slash = '\0';
    if (at) *at = '\0';
    name = cc_trim(name);
    char label[96];
    if (at) {
        snprintf(label, sizeof label, "%.80s: @precision", name);
        if (cc_parse_double(label, cc_trim(at + 1), 0.0, 1.0, 1, &entry->precision, err, errlen) != 0) return -1;
    }
    if (slash) {
        snprintf(label, sizeof label, "%.80s: /min-reps", name);
        if (cc_parse_long(label, cc_trim(slash + 1), 1, 100000000, &entry->min_reps, err, errlen) != 0) return -1;
    }
    char *colon = strchr(name, ':');
    const char *variant = "";
    if (colon) {
        *colon = '\0';
        variant = cc_trim(colon + 1);
        name = cc_trim(name);
    }
    const cc_op *op = cc_op_find(name);
    if (!op) {
        char known[256];
        cc_op_list(known, sizeof known);
        return cc_fail(err, errlen, "unknown operation '%s' (known: %s)", name, known);
    }
    int v = cc_op_variant(op, variant);
    if (v < 0) {
        char known[128];
        cc_op_variant_list(op, known, sizeof known);
        if (!op->variants)
            return cc_fail(err, errlen, "operation '%s' has no variants (got '%s')", name, variant);
        if (!*variant) return cc_fail(err, errlen, "operation '%s' needs a variant: %s", name, known);
        return cc_fail(err, errlen, "operation '%s' has no variant '%s' (known: %s)", name, variant, known);
    }
    entry->op = op;
    entry->variant = v;
    entry->nsizes = 0;
    size_t cap = 8;
    entry->sizes = cc_xmalloc(cap * sizeof *entry->sizes);
    char *save = NULL;
    for (char *tok = strtok_r(sizes, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *word = cc_trim(tok);
        size_t n = 0;
        if (cc_parse_size(word, &n) != 0)
            return cc_fail(err, errlen, "%s: size '%s' is not a whole number of bytes", name, word);
        char why[160];
        if (op->check_size(n, p, v, why, sizeof why))
            return cc_fail(err, errlen, "%s: size %zu cannot be used at p=%d: %s", name, n, p, why);
        if (entry->nsizes == cap) {
            cap *= 2;
            entry->sizes = cc_xrealloc(entry->sizes, cap * sizeof *entry->sizes);
        }
        entry->sizes[entry->nsizes++] = n;
    }
    if (entry->nsizes == 0) return cc_fail(err, errlen, "%s: no sizes given", name);
    return 0;
}

static int cc_parse_plan(const char *plan, int p, cc_options *opt, char *err, size_t errlen)
{
    size_t len = strlen(plan);
    char *copy = cc_xmalloc(len + 1);
    memcpy(copy, plan, len + 1);
    size_t cap = 8;
    opt->entries = cc_xmalloc(cap * sizeof *opt->entries);
    opt->nentries = 0;
    int rc = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ";", &save); tok && rc == 0; tok = strtok_r(NULL, ";", &save)) {
        if (!*cc_trim(tok)) continue;
        if (opt->nentries == cap) {
            cap *= 2;
            opt->entries = cc_xrealloc(opt->entries, cap * sizeof *opt->entries);
        }
        cc_entry *entry = &opt->entries[opt->nentries];
        entry->sizes = NULL;
        rc = cc_parse_entry(tok, p, entry, err, errlen);
        if (rc == 0 && entry->min_reps > opt->max_reps)
            rc = cc_fail(err, errlen, "%s: /min-reps %ld is above --max-reps %ld", entry->op->name, entry->min_reps,
                         opt->max_reps);
        opt->nentries++;
    }
    if (rc == 0 && opt->nentries == 0) rc = cc_fail(err, errlen, "the plan is empty");
    free(copy);
    return rc;
}

cc_parse_status cc_options_parse(int argc, char **argv, int p, cc_options *opt, char *err, size_t errlen)
{
    memset(opt, 0, sizeof *opt);
    opt->precision = 0.01;
    opt->min_reps = 10;
    opt->max_reps = 100000;
    opt->max_time = 1.0;
    opt->warmup_time = 0.005;
    opt->warmup_min_time = 0.0005;
    opt->warmup_series = 1;
    opt->warmup_round_time = 0.00025;
    opt->batch_threshold = 100.0;
    opt->batch_min_us = 20.0;
    opt->sync = &cc_sync_auto;
    opt->sync_window_factor = 4.0;
    opt->sync_window_us = 0.0;
    opt->window = 64;
    opt->rndv_delay_us = 200.0;
    opt->cache_limit = CC_CACHE_LIMIT_DEFAULT;
    opt->llc_source = "";
    opt->buffer_offset = 16;
    opt->recv_offset = -1;
    opt->core_distance = 1;
    opt->heap_steady = 1;
    opt->prewarm = 1;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) return CC_PARSE_HELP;
        if (strncmp(arg, "--", 2) != 0) {
            cc_fail(err, errlen, "unexpected argument '%s'", arg);
            return CC_PARSE_ERROR;
        }
        char name[64];
        const char *value = NULL, *eq = strchr(arg, '=');
        if (eq) {
            snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
            value = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", arg);
            if (i + 1 < argc) value = argv[++i];
        }
        if (!value) {
            cc_fail(err, errlen, "%s needs a value", name);
            return CC_PARSE_ERROR;
        }
        int rc = 0;
        if (strcmp(name, "--plan") == 0)
            opt->plan_text = value;
        else if (strcmp(name, "--precision") == 0)
            rc = cc_parse_double(name, value, 0.0, 1.0, 1, &opt->precision, err, errlen);
        else if (strcmp(name, "--min-reps") == 0)
            rc = cc_parse_long(name, value, 1, 100000000, &opt->min_reps, err, errlen);
        else if (strcmp(name, "--max-reps") == 0)
            rc = cc_parse_long(name, value, 1, 100000000, &opt->max_reps, err, errlen);
        else if (strcmp(name, "--max-time") == 0)
            rc = cc_parse_double(name, value, 0.0, 1e6, 1, &opt->max_time, err, errlen);
        else if (strcmp(name, "--warmup-time") == 0)
            rc = cc_parse_double(name, value, 0.0, 1e6, 0, &opt->warmup_time, err, errlen);
        else if (strcmp(name, "--warmup-min-time") == 0)
            rc = cc_parse_double(name, value, 0.0, 1e6, 0, &opt->warmup_min_time, err, errlen);
        else if (strcmp(name, "--warmup-round-time") == 0)
            rc = cc_parse_double(name, value, 0.0, 1e6, 0, &opt->warmup_round_time, err, errlen);
        else if (strcmp(name, "--warmup") == 0) {
            if (strcmp(value, "series") == 0 || strcmp(value, "point") == 0)
                opt->warmup_series = strcmp(value, "series") == 0;
            else
                rc = cc_fail(err, errlen, "--warmup: '%s' is not series or point", value);
        } else if (strcmp(name, "--batch-threshold") == 0)
            rc = cc_parse_double(name, value, 0.0, 1e9, 0, &opt->batch_threshold, err, errlen);
        else if (strcmp(name, "--batch-min-us") == 0)
            rc = cc_parse_double(name, value, 0.0, 1e6, 0, &opt->batch_min_us, err, errlen);
        else if (strcmp(name, "--sync-window-factor") == 0)
            rc = cc_parse_double(name, value, 1.0, 1e6, 0, &opt->sync_window_factor, err, errlen);
        else if (strcmp(name, "--sync-window-us") == 0)
            rc = cc_parse_double(name, value, 0.0, 1e7, 0, &opt->sync_window_us, err, errlen);
        else if (strcmp(name, "--window") == 0)
            rc = cc_parse_long(name, value, 1, 100000, &opt->window, err, errlen);
        else if (strcmp(name, "--rndv-delay-us") == 0)
            rc = cc_parse_double(name, value, 0.0, 1e7, 0, &opt->rndv_delay_us, err, errlen);
        else if (strcmp(name, "--loggp-overheads-below") == 0)
            rc = cc_parse_long(name, value, 0, LONG_MAX, &opt->loggp_overheads_below, err, errlen);
        else if (strcmp(name, "--cache") == 0) {
            if (strcmp(value, "cold") == 0 || strcmp(value, "warm") == 0)
                opt->cache_cold = strcmp(value, "cold") == 0;
            else
                rc = cc_fail(err, errlen, "--cache: '%s' is not cold or warm", value);
        } else if (strcmp(name, "--core-distance") == 0) {
            if (strcmp(value, "on") == 0 || strcmp(value, "off") == 0)
                opt->core_distance = strcmp(value, "on") == 0;
            else
                rc = cc_fail(err, errlen, "--core-distance: '%s' is not on or off", value);
        } else if (strcmp(name, "--prewarm") == 0) {
            if (strcmp(value, "on") == 0 || strcmp(value, "off") == 0)
                opt->prewarm = strcmp(value, "on") == 0;
            else
                rc = cc_fail(err, errlen, "--prewarm: '%s' is not on or off", value);
        } else if (strcmp(name, "--heap") == 0) {
            if (strcmp(value, "steady") == 0 || strcmp(value, "as-is") == 0)
                opt->heap_steady = strcmp(value, "steady") == 0;
            else
                rc = cc_fail(err, errlen, "--heap: '%s' is not steady or as-is", value);
        } else if (strcmp(name, "--buffer-offset") == 0) {
            rc = cc_parse_long(name, value, 0, 4095, &opt->buffer_offset, err, errlen);
        } else if (strcmp(name, "--recv-offset") == 0) {
            rc = cc_parse_long(name, value, 0, 4095, &opt->recv_offset, err, errlen);
        } else if (strcmp(name, "--cache-limit") == 0) {
            if (cc_parse_size(value, &opt->cache_limit) != 0 || opt->cache_limit == 0)
                rc = cc_fail(err, errlen, "--cache-limit: '%s' is not a whole number of bytes in [1, %zu]",
                             value, CC_MAX_SIZE);
        } else if (strcmp(name, "--sync") == 0) {
            if (strcmp(value, "auto") == 0)
                opt->sync = &cc_sync_auto;
            else if (strcmp(value, "barrier") == 0)
                opt->sync = &cc_sync_barrier;
            else if (strcmp(value, "none") == 0)
                opt->sync = &cc_sync_none;
            else if (strcmp(value, "window") == 0)
                opt->sync = &cc_sync_window;
            else
                rc = cc_fail(err, errlen, "--sync: '%s' is not auto, barrier, none or window", value);
        } else
            rc = cc_fail(err, errlen, "unknown option %s", name);
        if (rc) return CC_PARSE_ERROR;
    }
    if (!opt->plan_text) {
        cc_fail(err, errlen, "--plan is required");
        return CC_PARSE_ERROR;
    }
    if (opt->max_reps < opt->min_reps) {
        cc_fail(err, errlen, "--max-reps %ld is below --min-reps %ld", opt->max_reps, opt->min_reps);
        return CC_PARSE_ERROR;
    }
    /* the cold-buffer region and the touch probe's fresh pages both exceed it twice */
    opt->llc_bytes = cc_llc_bytes(&opt->llc_source);
    if (opt->cache_cold) {
        /* the cache size is read from the machine, never trusted to be small */
        if (opt->llc_bytes > opt->cache_limit / 2) {
            cc_fail(err, errlen,
                    "--cache cold: twice the last-level cache (%zu bytes, from %s) is more than --cache-limit %zu bytes",
                    opt->llc_bytes, opt->llc_source, opt->cache_limit);
            return CC_PARSE_ERROR;
        }
    }
    if (cc_parse_plan(opt->plan_text, p, opt, err, errlen) != 0) return CC_PARSE_ERROR;
    return CC_PARSE_OK;
}

void cc_options_free(cc_options *opt)
{
    for (size_t i = 0; i < opt->nentries; i++) free(opt->entries[i].sizes);
    free(opt->entries);
    opt->entries = NULL;
    opt->nentries = 0;
}
