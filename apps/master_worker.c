/* Master-worker: rank 0 hands out K tasks of --bytes, one at a time to each
 * worker, and receives each result (--bytes) with MPI_ANY_SOURCE, then gives
 * that worker the next task; an empty message tagged STOP ends a worker.
 * One iteration is one task.  A task's first 8 bytes hold its number (the rest
 * is the pattern, stamped with the number); the worker stamps its result with
 * that number, and the master checks each result came from the worker it gave
 * that task to.
 *   master_worker --bytes N [--iterations K]   (loop_common.h, N >= 16) */
#include <string.h>

#include "loop_common.h"

enum { TASK = 1, RESULT = 2, STOP = 3 };
#define TASK_CODE 0xfffffu

static uint8_t *task, *result;
static long *assigned, next_task, received;

static uint32_t result_code(int worker) { return (uint32_t)worker; }

static void setup(loop_ctx *c)
{
    task = cc_xmalloc((size_t)c->bytes);
    result = cc_xmalloc((size_t)c->bytes);
    assigned = cc_xmalloc((size_t)c->p * sizeof *assigned);
    loop_fill(task, (size_t)c->bytes, TASK_CODE, 0);
    if (c->rank > 0) loop_fill(result, (size_t)c->bytes, result_code(c->rank), 0);
    next_task = received = 0;
}

static void give(loop_ctx *c, int worker)
{
    int count = (int)c->bytes;
    if (next_task == c->iterations) {
        CC_MPI(MPI_Send(task, 0, MPI_BYTE, worker, STOP, MPI_COMM_WORLD));
        return;
    }
    long k = next_task++;
    loop_stamp(task, (size_t)count, TASK_CODE, k);
    memcpy(task, &k, sizeof k);
    assigned[worker] = k;
    CC_MPI(MPI_Send(task, count, MPI_BYTE, worker, TASK, MPI_COMM_WORLD));
}

/* the master: one result in, that worker's next task out (first: a task to each worker) */
static void master(loop_ctx *c, long k)
{
    int count = (int)c->bytes;
    if (k == 0)
        for (int w = 1; w < c->p; w++) give(c, w);
    MPI_Status status;
    CC_MPI(MPI_Recv(result, count, MPI_BYTE, MPI_ANY_SOURCE, RESULT, MPI_COMM_WORLD, &status));
    int w = status.MPI_SOURCE;
    loop_perturb(c, k, result, (size_t)count);
    c->errors += loop_check(result, (size_t)count, result_code(w), assigned[w], k == c->iterations - 1);
    received++;
    give(c, w);
}

/* a worker serves tasks until STOP, all of it within the first iteration */
static void worker(loop_ctx *c)
{
    size_t n = (size_t)c->bytes;
    for (;;) {
        MPI_Status status;
        CC_MPI(MPI_Recv(task, (int)n, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &status));
        if (status.MPI_TAG == STOP) return;
        long k;
        memcpy(&k, task, sizeof k);
        if (k < 0 || k >= c->iterations) {
            c->errors++;
            k = 0;
        }
        for (size_t i = n - 8; i < n; i++) c->errors += task[i] != loop_byte(TASK_CODE, k, i, n);
        loop_stamp(result, n, result_code(c->rank), k);
        CC_MPI(MPI_Send(result, (int)n, MPI_BYTE, 0, RESULT, MPI_COMM_WORLD));
        received++;
    }
}

static void iterate(loop_ctx *c, long k)
{
    if (c->rank == 0)
        master(c, k);
    else if (k == 0)
        worker(c);
}

static void finish(loop_ctx *c)
{
    if (c->rank == 0) c->errors += received != c->iterations;
    free(task);
    free(result);
    free(assigned);
}

int main(int argc, char **argv)
{
    static const loop_program program = {"master_worker", 16, 1, 2, setup, iterate, finish};
    return loop_main(argc, argv, &program);
}
