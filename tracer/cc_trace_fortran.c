/* Fortran programs.  Open MPI's Fortran bindings (mpif.h, `use mpi`, `use mpi_f08`)
 * and MPICH's mpi_f08 bindings call the library below MPI_ (through PMPI_ or its
 * own entry points), so the C wrappers never see them: the Fortran entry points
 * of the calls below are wrapped here, their arguments converted, and the C
 * wrapper called.  MPICH's mpif.h and `use mpi` bindings call the C MPI_
 * functions, so they need nothing here.
 *
 * Open MPI: mpi_send_ (mpif.h, use mpi) and mpi_send_f08_ take the same
 * arguments (an f08 handle is a struct of one integer; its ierror is optional,
 * so it may be NULL).  MPICH's mpi_f08: calls with a choice buffer are
 * mpi_send_f08ts_, whose buffer is a C descriptor (CFI_cdesc_t, its first member
 * the address); its statuses are C MPI_Status.
 *
 * The library's Fortran sentinels are weak references: a library built without
 * Fortran bindings (MPICH's Python wheel) has none, and the tracer must still load
 * there; a sentinel that is absent matches no argument. */
#include <stdlib.h>

#include "cc_trace.h"

typedef MPI_Fint F;

/* p is the sentinel `sym`, which the library may lack (then its address is NULL) */
#define CCTF_IS(p, sym) ((void *)&(sym) != NULL && (void *)(p) == (void *)&(sym))

#if defined(OPEN_MPI)
extern F mpi_fortran_in_place_ __attribute__((weak)), mpi_fortran_bottom_ __attribute__((weak));
extern F mpi_fortran_status_ignore_ __attribute__((weak)), mpi_fortran_statuses_ignore_ __attribute__((weak));
#define CCTF_IN_PLACE(p) CCTF_IS(p, mpi_fortran_in_place_)
#define CCTF_BOTTOM(p) CCTF_IS(p, mpi_fortran_bottom_)
#define CCTF_STATUS_IGNORE(s) CCTF_IS(s, mpi_fortran_status_ignore_)
#define CCTF_STATUSES_IGNORE(s) CCTF_IS(s, mpi_fortran_statuses_ignore_)
typedef void cctf_buffer;
#define CCTF_ADDRESS(b) ((void *)(b))
/* a status in Fortran's integer array form */
static void cctf_status_out(const MPI_Status *c, void *f) { PMPI_Status_c2f(c, (F *)f); }
/* MPI_STATUS_SIZE integers: as many as the C status holds */
static size_t cctf_status_bytes(void) { return sizeof(MPI_Status) / sizeof(F) * sizeof(F); }
/* the entry points: mpif.h / use mpi, and use mpi_f08 */
#define CCTF_NAMES(lower, buffered) \
    __typeof__(lower##_) lower##_f08_ __attribute__((alias(#lower "_")));
#elif defined(MPICH)
extern int MPIR_F08_MPI_IN_PLACE __attribute__((weak)), MPIR_F08_MPI_BOTTOM __attribute__((weak));
extern MPI_F08_status MPIR_F08_MPI_STATUS_IGNORE_OBJ __attribute__((weak));
extern MPI_F08_status MPIR_F08_MPI_STATUSES_IGNORE_OBJ[1] __attribute__((weak));
#define CCTF_IN_PLACE(p) CCTF_IS(p, MPIR_F08_MPI_IN_PLACE)
#define CCTF_BOTTOM(p) CCTF_IS(p, MPIR_F08_MPI_BOTTOM)
#define CCTF_STATUS_IGNORE(s) CCTF_IS(s, MPIR_F08_MPI_STATUS_IGNORE_OBJ)
#define CCTF_STATUSES_IGNORE(s) CCTF_IS(s, MPIR_F08_MPI_STATUSES_IGNORE_OBJ[0])
typedef void *cctf_buffer; /* CFI_cdesc_t: base_addr first */
#define CCTF_ADDRESS(b) (*(void *const *)(b))
static void cctf_status_out(const MPI_Status *c, void *f) { PMPI_Status_c2f08(c, f); }
static size_t cctf_status_bytes(void) { return sizeof(MPI_F08_status); }
#define CCTF_NAMES(lower, buffered)
#endif

#if defined(OPEN_MPI) || defined(MPICH)

/* The entry point of a call: Open MPI's mpif.h name (with its f08 alias) or
 * MPICH's f08 name (f08ts for a call with a choice buffer). */
#if defined(OPEN_MPI)
#define CCTF(lower, buffered) lower##_
#else
#define CCTF_TS_1(lower) lower##_f08ts_
#define CCTF_TS_0(lower) lower##_f08_
#define CCTF(lower, buffered) CCTF_TS_##buffered(lower)
#endif

static inline void *cctf_buf(const cctf_buffer *b)
{
    void *p = CCTF_ADDRESS(b);
    if (CCTF_IN_PLACE(p)) return MPI_IN_PLACE;
    if (CCTF_BOTTOM(p)) return MPI_BOTTOM;
    return p;
}

static inline void cctf_done(F *ierr, int rc)
{
    if (ierr) *ierr = (F)rc;
}

static inline MPI_Comm C(const F *f) { return PMPI_Comm_f2c(*f); }
static inline MPI_Datatype T(const F *f) { return PMPI_Type_f2c(*f); }
static inline MPI_Op O(const F *f) { return PMPI_Op_f2c(*f); }

static inline void cctf_status(const MPI_Status *c, void *f)
{
    if (f && !CCTF_STATUS_IGNORE(f)) cctf_status_out(c, f);
}

/* ---- start and end ---- */

void CCTF(mpi_init, 0)(F *ierr) { cctf_done(ierr, MPI_Init(NULL, NULL)); }
CCTF_NAMES(mpi_init, 0)

void CCTF(mpi_init_thread, 0)(const F *required, F *provided, F *ierr)
{
    int got = 0;
    int rc = MPI_Init_thread(NULL, NULL, (int)*required, &got);
    *provided = (F)got;
    cctf_done(ierr, rc);
}
CCTF_NAMES(mpi_init_thread, 0)

void CCTF(mpi_finalize, 0)(F *ierr) { cctf_done(ierr, MPI_Finalize()); }
CCTF_NAMES(mpi_finalize, 0)

/* ---- point to point ---- */

#define CCTF_SEND(lower, NAME)                                                               \
    void CCTF(lower, 1)(const cctf_buffer *buf, const F *count, const F *type, const F *dest, \
                        const F *tag, const F *comm, F *ierr)                                \
    {                                                                                        \
        cctf_done(ierr, MPI_##NAME(cctf_buf(buf), (int)*count, T(type), (int)*dest,          \
                                   (int)*tag, C(comm)));                                     \
    }                                                                                        \
    CCTF_NAMES(lower, 1)

CCTF_SEND(mpi_send, Send)
CCTF_SEND(mpi_ssend, Ssend)

#define CCTF_ISEND(lower, NAME)                                                              \
    void CCTF(lower, 1)(const cctf_buffer *buf, const F *count, const F *type, const F *peer, \
                        const F *tag, const F *comm, F *request, F *ierr)                    \
    {                                                                                        \
        MPI_Request c = MPI_REQUEST_NULL;                                                    \
        int rc = MPI_##NAME(cctf_buf(buf), (int)*count, T(type), (int)*peer, (int)*tag,      \
                            C(comm), &c);                                                    \
        *request = PMPI_Request_c2f(c);                                                      \
        cctf_done(ierr, rc);                                                                 \
    }                                                                                        \
    CCTF_NAMES(lower, 1)

CCTF_ISEND(mpi_isend, Isend)
CCTF_ISEND(mpi_irecv, Irecv)

void CCTF(mpi_recv, 1)(cctf_buffer *buf, const F *count, const F *type, const F *source,
                       const F *tag, const F *comm, void *status, F *ierr)
{
    MPI_Status c;
    int rc = MPI_Recv(cctf_buf(buf), (int)*count, T(type), (int)*source, (int)*tag, C(comm), &c);
    cctf_status(&c, status);
    cctf_done(ierr, rc);
}
CCTF_NAMES(mpi_recv, 1)

void CCTF(mpi_sendrecv, 1)(const cctf_buffer *sendbuf, const F *sendcount, const F *sendtype,
                           const F *dest, const F *sendtag, cctf_buffer *recvbuf,
                           const F *recvcount, const F *recvtype, const F *source,
                           const F *recvtag, const F *comm, void *status, F *ierr)
{
    MPI_Status c;
    int rc = MPI_Sendrecv(cctf_buf(sendbuf), (int)*sendcount, T(sendtype), (int)*dest,
                          (int)*sendtag, cctf_buf(recvbuf), (int)*recvcount, T(recvtype),
                          (int)*source, (int)*recvtag, C(comm), &c);
    cctf_status(&c, status);
    cctf_done(ierr, rc);
}
CCTF_NAMES(mpi_sendrecv, 1)

void CCTF(mpi_wait, 0)(F *request, void *status, F *ierr)
{
    MPI_Request c = PMPI_Request_f2c(*request);
    MPI_Status s;
    int rc = MPI_Wait(&c, &s);
    *request = PMPI_Request_c2f(c);
    cctf_status(&s, status);
    cctf_done(ierr, rc);
}
CCTF_NAMES(mpi_wait, 0)

/* the C handles and statuses of a Waitall's requests (the tracer's scratch arrays are its
 * own): grown once, kept */
static MPI_Request *cctf_handles;
static MPI_Status *cctf_statuses;
static int cctf_handles_cap, cctf_statuses_cap;

void CCTF(mpi_waitall, 0)(const F *count, F *requests, void *statuses, F *ierr)
{
    int n = (int)*count > 0 ? (int)*count : 0;
    MPI_Request *reqs = cct_grow(cctf_handles, &cctf_handles_cap, n > 0 ? n : 1, sizeof *reqs);
    if (reqs) cctf_handles = reqs;
    MPI_Status *s = cct_grow(cctf_statuses, &cctf_statuses_cap, n > 0 ? n : 1, sizeof *s);
    if (s) cctf_statuses = s;
    if (!reqs || !s) {
        cctf_done(ierr, MPI_ERR_NO_MEM);
        return;
    }
    for (int i = 0; i < n; i++) reqs[i] = PMPI_Request_f2c(requests[i]);
    int ignore = statuses == NULL || CCTF_STATUSES_IGNORE(statuses);
    int rc = MPI_Waitall(n, reqs, ignore ? MPI_STATUSES_IGNORE : s);
    for (int i = 0; i < n; i++) {
        requests[i] = PMPI_Request_c2f(reqs[i]);
        if (!ignore) cctf_status_out(&s[i], (char *)statuses + (size_t)i * cctf_status_bytes());
    }
    cctf_done(ierr, rc);
}
CCTF_NAMES(mpi_waitall, 0)

/* ---- collectives ---- */

void CCTF(mpi_barrier, 0)(const F *comm, F *ierr) { cctf_done(ierr, MPI_Barrier(C(comm))); }
CCTF_NAMES(mpi_barrier, 0)

void CCTF(mpi_bcast, 1)(cctf_buffer *buf, const F *count, const F *type, const F *root,
                        const F *comm, F *ierr)
{
    cctf_done(ierr, MPI_Bcast(cctf_buf(buf), (int)*count, T(type), (int)*root, C(comm)));
}
CCTF_NAMES(mpi_bcast, 1)

void CCTF(mpi_reduce, 1)(const cctf_buffer *sendbuf, cctf_buffer *recvbuf, const F *count,
                         const F *type, const F *op, const F *root, const F *comm, F *ierr)
{
    cctf_done(ierr, MPI_Reduce(cctf_buf(sendbuf), cctf_buf(recvbuf), (int)*count, T(type), O(op),
                               (int)*root, C(comm)));
}
CCTF_NAMES(mpi_reduce, 1)

void CCTF(mpi_allreduce, 1)(const cctf_buffer *sendbuf, cctf_buffer *recvbuf, const F *count,
                            const F *type, const F *op, const F *comm, F *ierr)
{
    cctf_done(ierr, MPI_Allreduce(cctf_buf(sendbuf), cctf_buf(recvbuf), (int)*count, T(type),
                                  O(op), C(comm)));
}
CCTF_NAMES(mpi_allreduce, 1)

#define CCTF_ALL(lower, NAME)                                                                \
    void CCTF(lower, 1)(const cctf_buffer *sendbuf, const F *sendcount, const F *sendtype,   \
                        cctf_buffer *recvbuf, const F *recvcount, const F *recvtype,         \
                        const F *comm, F *ierr)                                              \
    {                                                                                        \
        cctf_done(ierr, MPI_##NAME(cctf_buf(sendbuf), (int)*sendcount, T(sendtype),          \
                                   cctf_buf(recvbuf), (int)*recvcount, T(recvtype),          \
                                   C(comm)));                                                \
    }                                                                                        \
    CCTF_NAMES(lower, 1)

CCTF_ALL(mpi_allgather, Allgather)
CCTF_ALL(mpi_alltoall, Alltoall)

#define CCTF_ROOTED(lower, NAME)                                                             \
    void CCTF(lower, 1)(const cctf_buffer *sendbuf, const F *sendcount, const F *sendtype,   \
                        cctf_buffer *recvbuf, const F *recvcount, const F *recvtype,         \
                        const F *root, const F *comm, F *ierr)                               \
    {                                                                                        \
        cctf_done(ierr, MPI_##NAME(cctf_buf(sendbuf), (int)*sendcount, T(sendtype),          \
                                   cctf_buf(recvbuf), (int)*recvcount, T(recvtype),          \
                                   (int)*root, C(comm)));                                    \
    }                                                                                        \
    CCTF_NAMES(lower, 1)

CCTF_ROOTED(mpi_gather, Gather)
CCTF_ROOTED(mpi_scatter, Scatter)

/* ---- communicators ---- */

void CCTF(mpi_comm_split, 0)(const F *comm, const F *color, const F *key, F *newcomm, F *ierr)
{
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_split(C(comm), (int)*color, (int)*key, &c);
    *newcomm = PMPI_Comm_c2f(c);
    cctf_done(ierr, rc);
}
CCTF_NAMES(mpi_comm_split, 0)

void CCTF(mpi_comm_dup, 0)(const F *comm, F *newcomm, F *ierr)
{
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_dup(C(comm), &c);
    *newcomm = PMPI_Comm_c2f(c);
    cctf_done(ierr, rc);
}
CCTF_NAMES(mpi_comm_dup, 0)

void CCTF(mpi_comm_free, 0)(F *comm, F *ierr)
{
    MPI_Comm c = C(comm);
    int rc = MPI_Comm_free(&c);
    *comm = PMPI_Comm_c2f(c);
    cctf_done(ierr, rc);
}
CCTF_NAMES(mpi_comm_free, 0)

void CCTF(mpi_cart_create, 0)(const F *comm, const F *ndims, const F *dims, const F *periods,
                              const F *reorder, F *newcomm, F *ierr)
{
    int n = (int)*ndims, d[32], p[32];
    if (n > 32 || n < 0) {
        cctf_done(ierr, MPI_ERR_DIMS);
        return;
    }
    for (int i = 0; i < n; i++) {
        d[i] = (int)dims[i];
        p[i] = periods[i] != 0; /* a Fortran LOGICAL: nonzero is true */
    }
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Cart_create(C(comm), n, d, p, *reorder != 0, &c);
    *newcomm = PMPI_Comm_c2f(c);
    cctf_done(ierr, rc);
}
CCTF_NAMES(mpi_cart_create, 0)

#endif
