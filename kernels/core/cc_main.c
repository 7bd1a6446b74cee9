/* commchar-kernel: measures what --plan names and prints JSON Lines on rank
 * 0's stdout (docs/kernel-protocol.md).  No file I/O. */
#include <stdio.h>

#include "cc_fault.h"
#include "cc_heap.h"
#include "cc_options.h"
#include "cc_report.h"
#include "cc_run.h"

static void cc_make_comms(cc_env *env)
{
    CC_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &env->all));
    CC_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &env->all_ctl));
    int color = env->world_rank < 2 ? 0 : MPI_UNDEFINED;
    CC_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, env->world_rank, &env->pair));
    env->pair_ctl = MPI_COMM_NULL;
    if (env->pair != MPI_COMM_NULL) CC_MPI(MPI_Comm_dup(env->pair, &env->pair_ctl));
}

static void cc_free_comms(cc_env *env)
{
    MPI_Comm *comms[] = {&env->all, &env->all_ctl, &env->pair, &env->pair_ctl};
    for (size_t i = 0; i < sizeof comms / sizeof comms[0]; i++)
        if (*comms[i] != MPI_COMM_NULL) CC_MPI(MPI_Comm_free(comms[i]));
}

int main(int argc, char **argv)
{
    /* checked like every call: a library that returns an error here (its default
     * handler need not abort) is reported, not measured as if it had started */
    CC_MPI(MPI_Init(&argc, &argv));
    const int64_t start = cc_now_ns();
    /* errors come back to CC_MPI, which reports them as JSON before aborting */
    CC_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CC_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    cc_env env = {0};
    CC_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &env.world_rank));
    CC_MPI(MPI_Comm_size(MPI_COMM_WORLD, &env.world_size));

    /* every rank parses the same arguments, so all agree without talking */
    cc_options opt;
    cc_fault fault;
    char err[CC_ERRLEN] = "";
    cc_parse_status status = cc_options_parse(argc, argv, env.world_size, &opt, err, sizeof err);
    if (status == CC_PARSE_OK && cc_fault_read(&fault, err, sizeof err) != 0) status = CC_PARSE_ERROR;
    if (status != CC_PARSE_OK) {
        if (env.world_rank == 0) {
            if (status == CC_PARSE_HELP)
                fputs(cc_usage, stdout);
            else
                cc_emit_error(err);
        }
        cc_options_free(&opt);
        CC_MPI(MPI_Finalize());
        return status == CC_PARSE_HELP ? 0 : CC_EXIT_USAGE;
    }
    env.opt = &opt;
    /* before the first point: the library's temporaries of every point alike */
    opt.heap_held = opt.heap_steady && cc_heap_steady() == 0;
    cc_timer_calibrate(&env.timer);
    cc_make_comms(&env);
    cc_core_distance distance = {.side = -1};
    if (opt.core_distance) cc_core_distance_open(&distance, MPI_COMM_WORLD);
    env.core_distance = &distance;

    cc_report_header(&env, &fault);
    size_t points = cc_run_plan(&env, &fault);
    if (env.world_rank == 0) {
        cc_buf out;
        cc_buf_init(&out);
        cc_report_end(&out, points, (double)(cc_now_ns() - start) * 1e-9);
        cc_buf_free(&out);
    }
    cc_core_distance_close(&distance);
    cc_free_comms(&env);
    cc_options_free(&opt);
    CC_MPI(MPI_Finalize());
    return 0;
}
