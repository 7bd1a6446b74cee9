/* Communicators with topologies and the other ways of making one: each is
 * recorded as Comm_split is (the call, then MEMBERS records of world ranks),
 * and a communicator with a topology adds NEIGHBORS records (its sources and
 * destinations as ranks in it) for the neighborhood collectives. */
#include <stdlib.h>
#include <string.h>

#include "cc_trace_coll.h"

#define CCT_CREATES(CALL, PARENT, NEWCOMM, EXPR)                                           \
    CCT_ENTER(cct_members_records(PARENT), EXPR);                                          \
    int32_t parent_id = cct_comm(PARENT);                                                  \
    uint64_t t0 = cct_now();                                                               \
    int rc = EXPR;                                                                         \
    uint64_t t1 = cct_now();                                                               \
    cct_comm_created(r, CALL, parent_id, NEWCOMM, rc, t0, t1)

int MPI_Cart_create(MPI_Comm old_comm, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm *comm_cart)
{
    CCT_CREATES(CC_CART_CREATE, old_comm, comm_cart,
                PMPI_Cart_create(old_comm, ndims, dims, periods, reorder, comm_cart));
    if (rc == MPI_SUCCESS) cct_neighbors(*comm_cart);
    return rc;
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    CCT_CREATES(CC_CART_SUB, comm, newcomm, PMPI_Cart_sub(comm, remain_dims, newcomm));
    if (rc == MPI_SUCCESS) cct_neighbors(*newcomm);
    return rc;
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm *comm_graph)
{
    CCT_CREATES(CC_GRAPH_CREATE, comm_old, comm_graph,
                PMPI_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph));
    if (rc == MPI_SUCCESS) cct_neighbors(*comm_graph);
    return rc;
}

int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info,
                          int reorder, MPI_Comm *comm_dist_graph)
{
    CCT_CREATES(CC_DIST_GRAPH_CREATE, comm_old, comm_dist_graph,
                PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info,
                                       reorder, comm_dist_graph));
    if (rc == MPI_SUCCESS) cct_neighbors(*comm_dist_graph);
    return rc;
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    CCT_CREATES(CC_DIST_GRAPH_CREATE_ADJACENT, comm_old, comm_dist_graph,
                PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights,
                                                outdegree, destinations, destweights, info,
                                                reorder, comm_dist_graph));
    if (rc == MPI_SUCCESS) cct_neighbors(*comm_dist_graph);
    return rc;
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    CCT_CREATES(CC_COMM_CREATE_GROUP, comm, newcomm,
                PMPI_Comm_create_group(comm, group, tag, newcomm));
    return rc;
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                        MPI_Comm *newcomm)
{
    CCT_CREATES(CC_COMM_SPLIT_TYPE, comm, newcomm,
                PMPI_Comm_split_type(comm, split_type, key, info, newcomm));
    return rc;
}

/* The new communicator may not be used before the request completes: its members are
 * the parent's, in the parent's order.  Its request gets no COMPLETE record. */
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    CCT_ENTER(cct_members_records(comm), PMPI_Comm_idup(comm, newcomm, request));
    int32_t parent_id = cct_comm(comm);
    uint64_t t0 = cct_now();
    int rc = PMPI_Comm_idup(comm, newcomm, request);
    uint64_t t1 = cct_now();
    cct_comm_created_like(r, CC_COMM_IDUP, parent_id, newcomm, comm, rc, t0, t1);
    if (rc == MPI_SUCCESS) cct_neighbors_like(*newcomm, comm);
    return rc;
}

/* ---- NEIGHBORS records ---- */

/* Sources and destinations of the calling rank in comm's topology (MPI's order for the
 * neighborhood collectives); returns 0 for a communicator without one. */
static int cct_topology(MPI_Comm comm, int **in, int *nin, int **out, int *nout)
{
    int kind = MPI_UNDEFINED;
    *in = *out = NULL;
    *nin = *nout = 0;
    if (PMPI_Topo_test(comm, &kind) != MPI_SUCCESS) return 0;
    if (kind == MPI_CART) {
        int ndims = 0;
        PMPI_Cartdim_get(comm, &ndims);
        *in = cct_alloc(2 * (size_t)(ndims + 1) * sizeof **in);
        *out = cct_alloc(2 * (size_t)(ndims + 1) * sizeof **out);
        if (!*in || !*out) return 0;
        for (int d = 0; d < ndims; d++) {
            int source = MPI_PROC_NULL, dest = MPI_PROC_NULL;
            PMPI_Cart_shift(comm, d, 1, &source, &dest);
            (*in)[2 * d] = source;
            (*in)[2 * d + 1] = dest;
            (*out)[2 * d] = source;
            (*out)[2 * d + 1] = dest;
        }
        *nin = *nout = 2 * ndims;
        return 1;
    }
    if (kind == MPI_GRAPH) {
        int rank = 0, count = 0;
        PMPI_Comm_rank(comm, &rank);
        PMPI_Graph_neighbors_count(comm, rank, &count);
        *in = cct_alloc((size_t)(count + 1) * sizeof **in);
        *out = cct_alloc((size_t)(count + 1) * sizeof **out);
        if (!*in || !*out) return 0;
        PMPI_Graph_neighbors(comm, rank, count, *in);
        memcpy(*out, *in, (size_t)count * sizeof **in);
        *nin = *nout = count;
        return 1;
    }
    if (kind == MPI_DIST_GRAPH) {
        int indegree = 0, outdegree = 0, weighted = 0;
        PMPI_Dist_graph_neighbors_count(comm, &indegree, &outdegree, &weighted);
        *in = cct_alloc(2 * (size_t)(indegree + 1) * sizeof **in);
        *out = cct_alloc(2 * (size_t)(outdegree + 1) * sizeof **out);
        if (!*in || !*out) return 0;
        /* the weights (when there are any) go to the arrays' second halves */
        PMPI_Dist_graph_neighbors(comm, indegree, *in, weighted ? *in + indegree : MPI_UNWEIGHTED,
                                  outdegree, *out,
                                  weighted ? *out + outdegree : MPI_UNWEIGHTED);
        *nin = indegree;
        *nout = outdegree;
        return 1;
    }
    return 0;
}

static uint32_t cct_neighbor_records(int n)
{
    return (uint32_t)(n + CC_MEMBERS_PER_RECORD - 1) / CC_MEMBERS_PER_RECORD;
}

static cc_trace_record *cct_put_neighbors(cc_trace_record *m, int32_t id, int direction,
                                          const int *ranks, int n, uint64_t t)
{
    for (int first = 0; first < n; first += CC_MEMBERS_PER_RECORD) {
        int count = n - first < CC_MEMBERS_PER_RECORD ? n - first : CC_MEMBERS_PER_RECORD;
        *m = (cc_trace_record){.call = CC_NEIGHBORS, .comm = id, .peer = n, .tag = direction,
                               .t_start = t, .t_end = t, .aux = first, .aux2 = count};
        int32_t values[CC_MEMBERS_PER_RECORD];
        for (int i = 0; i < count; i++) values[i] = cct_peer(ranks[first + i]);
        memcpy((char *)m + 16, values, (size_t)count * sizeof(int32_t));
        m++;
    }
    return m;
}

/* comm's records for the topology of like (the same communicator, or the one it
 * duplicates) */
void cct_neighbors_like(MPI_Comm comm, MPI_Comm like)
{
    int32_t id = comm == MPI_COMM_NULL ? CC_COMM_NONE : cct_comm(comm);
    if (id == CC_COMM_NONE || !cct.on || cct.depth) return;
    int *in, *out, nin, nout;
    if (cct_topology(like, &in, &nin, &out, &nout)) {
        uint32_t k = cct_neighbor_records(nin) + cct_neighbor_records(nout);
        cc_trace_record *r = k ? cct_begin(k) : NULL;
        if (r) {
            uint64_t t = cct_now();
            r = cct_put_neighbors(r, id, 0, in, nin, t);
            cct_put_neighbors(r, id, 1, out, nout, t);
            cct_end(k);
        }
    }
    cct_free(in);
    cct_free(out);
}

void cct_neighbors(MPI_Comm comm) { cct_neighbors_like(comm, comm); }

void cct_degrees(MPI_Comm comm, int *in, int *out)
{
    int *sources, *destinations;
    cct_topology(comm, &sources, in, &destinations, out);
    cct_free(sources);
    cct_free(destinations);
}

/* An intercommunicator: its groups' world ranks, local then remote (CC_REC_INTER); each
 * group may hold any ranks of the world. */
int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                         int remote_leader, int tag, MPI_Comm *newintercomm)
{
    CCT_ENTER(cct_members_records(MPI_COMM_WORLD),
              PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag,
                                    newintercomm));
    int32_t parent_id = cct_comm(local_comm);
    uint64_t t0 = cct_now();
    int rc = PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag,
                                   newintercomm);
    uint64_t t1 = cct_now();
    cct_comm_created(r, CC_INTERCOMM_CREATE, parent_id, newintercomm, rc, t0, t1);
    return rc;
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    CCT_CREATES(CC_INTERCOMM_MERGE, intercomm, newintracomm,
                PMPI_Intercomm_merge(intercomm, high, newintracomm));
    return rc;
}
