/* What the applications commchar ships share: phase timing marked with
 * MPI_Pcontrol so a tracer sees the same phases, the JSON result line, option
 * parsing and test-only fault injection.  MPI errors, fatal errors and the
 * JSON buffer are the kernel's shared code (kernels/common/: cc_errors.h,
 * cc_json.h). */
#ifndef APP_COMMON_H
#define APP_COMMON_H

#include <stdint.h>

#include "cc_core_distance.h"
#include "cc_errors.h"
#include "cc_json.h"

#define APP_EXIT_WRONG 1 /* the answer failed its check */
#define APP_EXIT_USAGE 2

/* Phases, also the MPI_Pcontrol levels that mark them; level 0 is outside
 * every phase (setup, verification, reporting). */
typedef enum {
    APP_OUTSIDE = 0,
    APP_DISTRIBUTION = 1,
    APP_COMPUTATION = 2,
    APP_COMMUNICATION = 3,
    APP_SUBSTITUTION = 4,
    APP_PHASES
} app_phase;

extern const char *const app_phase_names[APP_PHASES];

typedef struct app_clock {
    int64_t started_ns, phase_started_ns;
    app_phase current;
    double seconds[APP_PHASES];
} app_clock;

/* starts the elapsed time and the first phase */
void app_clock_start(app_clock *clock, app_phase first);
/* closes the current phase, marks the next with MPI_Pcontrol and opens it */
void app_phase_enter(app_clock *clock, app_phase next);
/* closes the current phase; returns this rank's elapsed seconds */
double app_clock_stop(app_clock *clock);

/* Test-only faults, from COMMCHAR_APP_FAULT: "crash" aborts rank 0 mid-run,
 * "wrong" perturbs the computed answer so its check fails. */
typedef enum { APP_FAULT_NONE, APP_FAULT_CRASH, APP_FAULT_WRONG } app_fault;
app_fault app_fault_read(void);

/* rank 0 prints the usage error as a JSON error line; every rank exits 2 */
_Noreturn void app_usage(const char *usage, const char *fmt, ...) CC_PRINTF(2, 3);
/* a whole number in [lo, hi]; a positive number: else app_usage with the message
 * of kernels/common/cc_parse.h ("--n: 'x' is not a whole number in [1, 65536]") */
long app_parse_long(const char *usage, const char *flag, const char *text, long lo, long hi);
double app_parse_double(const char *usage, const char *flag, const char *text);

/* --core-distance: ranks 0 and 1's cache line and L1 copy timed just before
 * the timed region and just after it (cc_core_distance.h, through the PMPI
 * names, so a tracer sees none of it), reported as the result's core_rtt_ns
 * and core_copy_ns: which state of the host's cores the run was measured in. */
typedef struct app_distance {
    int asked;
    cc_core_distance probe;
    cc_core_sample before, after;
} app_distance;
/* collective: opens the probe and times the line when asked */
void app_distance_begin(app_distance *d, int asked);
/* collective: times the line again and closes the probe */
void app_distance_end(app_distance *d);
/* "core_rtt_ns":[before,after] into the result line, when both were measured */
void app_distance_json(cc_buf *line, const app_distance *d);

/* Opens the result line with the fields both applications report: app, p,
 * the library's version, then the phases' and the elapsed times (maximum over
 * ranks, collective: every rank must call it), for the phases whose
 * APP_PHASE_BIT is set in `phases`.  The caller appends its own
 * fields and calls app_result_emit on rank 0. */
void app_result_begin(cc_buf *line, const char *app, const app_clock *clock, unsigned phases,
                      double elapsed_s);
#define APP_PHASE_BIT(phase) (1u << (phase))
void app_result_emit(cc_buf *line, int verified);

#endif
