/* Intercommunicators, traced and replayed: the world split into two groups (even and odd
 * ranks), joined by MPI_Intercomm_create; messages between the groups (a named peer, a
 * wildcard receive, Sendrecv), on a duplicate of the intercommunicator too; then
 * MPI_Intercomm_merge and a collective on the merged communicator; with an argument, a
 * barrier on the intercommunicator too. Checks what it received and prints "intercomm: P ranks, F failed checks". */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, failed = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int color = rank % 2;
    MPI_Comm half, inter, dup, merged;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
    int me;
    MPI_Comm_rank(half, &me);
    /* the other group's leader is world rank 1 (for the even ranks) or 0 */
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 7, &inter);
    int remote;
    MPI_Comm_remote_size(inter, &remote);
    double buf[512] = {0}, got[512];
    for (int round = 0; round < 20; round++) {
        /* rank me of each group exchanges with rank me of the other, when it has one */
        if (me < remote) {
            buf[0] = rank + round;
            if (color == 0) {
                MPI_Send(buf, 512, MPI_DOUBLE, me, round, inter);
                MPI_Recv(got, 512, MPI_DOUBLE, me, round, inter, MPI_STATUS_IGNORE);
            } else {
                MPI_Status st;
                MPI_Recv(got, 512, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, inter, &st);
                failed += st.MPI_SOURCE != me || st.MPI_TAG != round;
                MPI_Send(buf, 512, MPI_DOUBLE, me, round, inter);
            }
            /* the peer is world rank rank ^ 1 */
            failed += got[0] != (rank ^ 1) + round;
        }
    }
    MPI_Comm_dup(inter, &dup);
    if (me < remote) {
        double out = rank, in = -1;
        MPI_Sendrecv(&out, 1, MPI_DOUBLE, me, 3, &in, 1, MPI_DOUBLE, me, 3, dup, MPI_STATUS_IGNORE);
        failed += in != (rank ^ 1);
    }
    if (argc > 1) MPI_Barrier(inter);
    MPI_Intercomm_merge(inter, color, &merged);
    int msize, sum = 0, one = 1;
    MPI_Comm_size(merged, &msize);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged);
    failed += msize != size || sum != size;
    MPI_Comm_free(&merged);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    int total = 0;
    MPI_Reduce(&failed, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("intercomm: %d ranks, %d failed checks\n", size, total);
    MPI_Finalize();
    return 0;
}
