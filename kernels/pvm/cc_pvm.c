/* Enrolment in the private virtual machine, the group, and PVM's errors. */
#include "cc_pvm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_json.h"

/* libpvm3's message table (not declared in pvm3.h) */
extern char *pvm_errlist[];
extern int pvm_nerr;

#define CC_PVM_MAX_TASKS 4096 /* one tid table; the runner never asks for more */

static int cc_mytid = -1, cc_joined;
static int *cc_tids;
static int cc_ntids;

void cc_pvm_fail(int rc, const char *call, const char *file, int line)
{
    const char *reason = (-rc > 0 && -rc < pvm_nerr && pvm_errlist[-rc]) ? pvm_errlist[-rc] : "unknown";
    cc_die("pvm: %.200s failed (%s:%d): %s (%d)", call, file, line, reason, rc);
}

const char *cc_pvm_route(void)
{
    const char *route = getenv("COMMCHAR_PVM_ROUTE");
    return route && strcmp(route, "direct") == 0 ? "direct" : "daemon";
}

static void cc_pvm_leave(void)
{
    if (cc_mytid >= 0) pvm_exit();
    cc_mytid = -1;
}

static void cc_pvm_enrol(void)
{
    if (cc_mytid >= 0) return;
    const char *route = getenv("COMMCHAR_PVM_ROUTE");
    if (route && strcmp(route, "direct") != 0 && strcmp(route, "daemon") != 0)
        cc_die("COMMCHAR_PVM_ROUTE: '%.40s' is neither daemon nor direct", route);
    /* errors are reported once, by CC_PVM, not also by libpvm on stderr */
    pvm_setopt(PvmAutoErr, 0);
    int tid = pvm_mytid();
    if (tid < 0)
        cc_die("pvm: cannot enrol in the virtual machine (is its daemon running, PVM_TMP=%.200s?): %s",
               getenv("PVM_TMP") ? getenv("PVM_TMP") : "unset",
               (-tid < pvm_nerr && pvm_errlist[-tid]) ? pvm_errlist[-tid] : "unknown");
    cc_mytid = tid;
    atexit(cc_pvm_leave);
    CC_PVM(pvm_setopt(PvmRoute, strcmp(cc_pvm_route(), "direct") == 0 ? PvmRouteDirect : PvmDontRoute));
}

/* Join in rank order, one at a time, so that instance numbers are the ranks:
 * gather, scatter and reduce order their data by instance. */
static void cc_pvm_join(cc_point *pt)
{
    if (cc_joined) return;
    int inst = -1;
    for (int r = 0; r < pt->size; r++) {
        if (r == pt->rank) {
            inst = pvm_joingroup(CC_PVM_GROUP);
            CC_PVM(inst);
        }
        CC_MPI(MPI_Barrier(pt->ctl));
    }
    if (inst != pt->rank) cc_die("pvm: rank %d joined group %s as instance %d", pt->rank, CC_PVM_GROUP, inst);
    /* a static group's membership is cached by every task: pvm_bcast, pvm_barrier
     * and the others then need no query to the group server per call, as PVM's
     * documentation recommends for measured codes */
    CC_PVM(pvm_freezegroup(CC_PVM_GROUP, pt->size));
    cc_joined = 1;
}

const int *cc_pvm_participants(cc_point *pt)
{
    cc_pvm_enrol();
    if (pt->size > CC_PVM_MAX_TASKS) cc_die("pvm: %d tasks is more than %d", pt->size, CC_PVM_MAX_TASKS);
    if (!cc_tids) cc_tids = cc_xmalloc(CC_PVM_MAX_TASKS * sizeof *cc_tids);
    CC_MPI(MPI_Allgather(&cc_mytid, 1, MPI_INT, cc_tids, 1, MPI_INT, pt->ctl));
    cc_ntids = pt->size;
    if (pt->op->scope == CC_SCOPE_ALL) cc_pvm_join(pt);
    return cc_tids;
}

void cc_pvm_extra(cc_point *pt, double main_median_us, cc_buf *json)
{
    (void)main_median_us;
    if (pt->rank != 0) return;
    cc_buf_key(json, "pvm_route");
    cc_buf_str(json, cc_pvm_route());
}
