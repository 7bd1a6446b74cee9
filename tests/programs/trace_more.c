/* Calls real applications make beyond point-to-point and the classic collectives:
 * topologies and the neighborhood collectives on them, the other ways of making
 * a communicator, non-blocking collectives, Alltoallw, persistent requests,
 * MPI-IO and one-sided communication.  Each result is checked; the last line says how many checks failed.
 *   mpirun -n 2 trace_more DIR     (DIR: where the MPI-IO file goes) */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int failures;

static void check(int ok, const char *what, int rank)
{
    if (!ok) {
        failures++;
        fprintf(stderr, "trace_more: rank %d: %s is wrong\n", rank, what);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;

    /* a periodic ring: neighbors left and right */
    int dims[1] = {size}, periods[1] = {1};
    MPI_Comm ring;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    int send2[2] = {rank, rank}, recv2[2] = {-1, -1};
    MPI_Neighbor_alltoall(send2, 1, MPI_INT, recv2, 1, MPI_INT, ring);
    check(recv2[0] == left && recv2[1] == right, "Neighbor_alltoall", rank);
    double big[4096], bigs[2 * 4096];
    for (int i = 0; i < 4096; i++) big[i] = rank + i;
    MPI_Neighbor_allgather(big, 4096, MPI_DOUBLE, bigs, 4096, MPI_DOUBLE, ring);
    check(bigs[0] == left && bigs[4096] == right, "Neighbor_allgather", rank);
    MPI_Request req;
    MPI_Ineighbor_alltoall(send2, 1, MPI_INT, recv2, 1, MPI_INT, ring, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(recv2[0] == left, "Ineighbor_alltoall", rank);
    MPI_Comm line;
    int keep[1] = {1};
    MPI_Cart_sub(ring, keep, &line);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, line);
    check(sum == size * (size - 1) / 2, "Allreduce on Cart_sub", rank);

    /* a directed ring as a distributed graph: receive from the left, send to the right */
    MPI_Comm dist;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dist);
    int counts[1] = {1}, displs[1] = {0}, got = -1;
    MPI_Neighbor_allgatherv(&rank, 1, MPI_INT, &got, counts, displs, MPI_INT, dist);
    check(got == left, "Neighbor_allgatherv", rank);

    /* a graph: everyone's neighbor is everyone else */
    int index[16], edges[16 * 16], e = 0;
    for (int n = 0; n < size && size <= 16; n++) {
        for (int m = 0; m < size; m++)
            if (m != n) edges[e++] = m;
        index[n] = e;
    }
    MPI_Comm graph;
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &graph);
    MPI_Barrier(graph);

    /* the other ways of making a communicator */
    MPI_Comm node, all, copy;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_size = 0;
    MPI_Comm_size(node, &node_size);
    MPI_Allreduce(MPI_IN_PLACE, &node_size, 1, MPI_INT, MPI_MAX, node);
    MPI_Group world_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Comm_create_group(MPI_COMM_WORLD, world_group, 7, &all);
    int value = rank == 0 ? 42 : 0;
    MPI_Bcast(&value, 1, MPI_INT, 0, all);
    check(value == 42, "Bcast on Comm_create_group", rank);
    MPI_Comm_idup(MPI_COMM_WORLD, &copy, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Barrier(copy);

    /* non-blocking collectives, completed together */
    MPI_Request reqs[4];
    int bval = rank == 0 ? 5 : 0, total = 0, a2a_send[16], a2a_recv[16], gathered[16];
    for (int i = 0; i < size && i < 16; i++) a2a_send[i] = rank * 100 + i;
    MPI_Ibcast(&bval, 1, MPI_INT, 0, MPI_COMM_WORLD, &reqs[0]);
    MPI_Iallreduce(&rank, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[1]);
    MPI_Ialltoall(a2a_send, 1, MPI_INT, a2a_recv, 1, MPI_INT, MPI_COMM_WORLD, &reqs[2]);
    int gcounts[16], gdispls[16];
    for (int i = 0; i < size && i < 16; i++) gcounts[i] = 1, gdispls[i] = i;
    MPI_Igatherv(&rank, 1, MPI_INT, gathered, gcounts, gdispls, MPI_INT, 0, MPI_COMM_WORLD,
                 &reqs[3]);
    MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
    check(bval == 5 && total == size * (size - 1) / 2, "Ibcast and Iallreduce", rank);
    check(a2a_recv[left] == left * 100 + rank, "Ialltoall", rank);
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);

    /* Alltoallw: ints to everyone */
    int wcounts[16], wdispls[16];
    MPI_Datatype wtypes[16];
    for (int i = 0; i < size && i < 16; i++)
        wcounts[i] = 1, wdispls[i] = i * (int)sizeof(int), wtypes[i] = MPI_INT;
    MPI_Alltoallw(a2a_send, wcounts, wdispls, wtypes, a2a_recv, wcounts, wdispls, wtypes,
                  MPI_COMM_WORLD);
    check(a2a_recv[right] == right * 100 + rank, "Alltoallw", rank);

    /* persistent requests: a ring exchange three times */
    double out[1024], in[1024];
    MPI_Request ring_reqs[2];
    MPI_Send_init(out, 1024, MPI_DOUBLE, right, 3, MPI_COMM_WORLD, &ring_reqs[0]);
    MPI_Recv_init(in, 1024, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &ring_reqs[1]);
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < 1024; i++) out[i] = rank * 10 + it;
        MPI_Startall(2, ring_reqs);
        MPI_Waitall(2, ring_reqs, MPI_STATUSES_IGNORE);
        check(in[1023] == left * 10 + it, "a persistent receive", rank);
    }
    MPI_Start(&ring_reqs[0]);
    MPI_Start(&ring_reqs[1]);
    MPI_Wait(&ring_reqs[0], MPI_STATUS_IGNORE);
    MPI_Wait(&ring_reqs[1], MPI_STATUS_IGNORE);
    MPI_Request_free(&ring_reqs[0]);
    MPI_Request_free(&ring_reqs[1]);

    /* MPI-IO: each rank writes its block, reads its neighbor's */
    if (argc > 1) {
        char path[4096];
        snprintf(path, sizeof path, "%s/trace_more.dat", argv[1]);
        MPI_File fh;
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        MPI_File_write_at_all(fh, (MPI_Offset)rank * (MPI_Offset)sizeof big, big, 4096, MPI_DOUBLE,
                              MPI_STATUS_IGNORE);
        MPI_File_sync(fh);
        MPI_Barrier(MPI_COMM_WORLD);
        double back[4096];
        MPI_File_read_at(fh, (MPI_Offset)right * (MPI_Offset)sizeof big, back, 4096, MPI_DOUBLE,
                         MPI_STATUS_IGNORE);
        check(back[1] == right + 1, "MPI-IO", rank);
        MPI_File_close(&fh);
    }

    /* one-sided: a fence epoch (a Put to the right, a Get from the left), a PSCW epoch
     * and a lock epoch */
    double *base;
    MPI_Win win;
    MPI_Win_allocate(2048 * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                     &win);
    for (int i = 0; i < 2048; i++) base[i] = -1;
    double fetched[512];
    MPI_Win_fence(0, win);
    MPI_Put(big, 1024, MPI_DOUBLE, right, 0, 1024, MPI_DOUBLE, win);
    MPI_Win_fence(0, win);
    MPI_Get(fetched, 512, MPI_DOUBLE, left, 0, 512, MPI_DOUBLE, win);
    MPI_Win_fence(0, win);
    check(base[5] == left + 5 && fetched[5] == rank + 5, "Put and Get in fence epochs", rank);
    MPI_Group peers;
    int others[1] = {right};
    MPI_Group_incl(world_group, 1, others, &peers);
    MPI_Win_post(peers, 0, win);
    MPI_Win_start(peers, 0, win);
    MPI_Put(&big[1], 1, MPI_DOUBLE, right, 1024, 1, MPI_DOUBLE, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    check(base[1024] == left + 1, "Put in a PSCW epoch", rank);
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    double one = 1;
    MPI_Accumulate(&one, 1, MPI_DOUBLE, right, 2000, 1, MPI_DOUBLE, MPI_SUM, win);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    check(base[2000] == 0, "Accumulate in a lock epoch", rank);
    MPI_Win_unlock(rank, win);
    MPI_Group_free(&peers);
    MPI_Win_free(&win);

    MPI_Comm_free(&copy);
    MPI_Comm_free(&all);
    MPI_Comm_free(&node);
    MPI_Group_free(&world_group);
    MPI_Comm_free(&graph);
    MPI_Comm_free(&dist);
    MPI_Comm_free(&line);
    MPI_Comm_free(&ring);
    int all_failures = 0;
    MPI_Reduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("trace_more: %d ranks, %d failed checks\n", size, all_failures);
    MPI_Finalize();
    return all_failures != 0;
}
