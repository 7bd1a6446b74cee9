/* MPI-IO: each call is recorded (bytes = bytes written, bytes2 = bytes asked to be
 * read) and the replay charges its span as computation, saying so. */
#include "cc_trace.h"

static inline void cct_io(cc_trace_record *r, uint16_t call, int rc, int32_t comm,
                          uint64_t bytes, uint64_t bytes2, uint64_t t0)
{
    *r = (cc_trace_record){.call = call, .flags = cct_flags(rc, 0), .comm = comm,
                           .peer = CC_PEER_NONE, .tag = -1, .bytes = bytes, .bytes2 = bytes2,
                           .t_start = t0, .t_end = cct_now()};
    cct_end(1);
}

#define CCT_IO(NAME, CALL, COMM, WRITTEN, READ, PARAMS, ARGS)      \
    int MPI_##NAME PARAMS                                          \
    {                                                              \
        CCT_ENTER(1, PMPI_##NAME ARGS);                            \
        uint64_t t0 = cct_now();                                   \
        int rc = PMPI_##NAME ARGS;                                 \
        cct_io(r, CALL, rc, COMM, WRITTEN, READ, t0);              \
        return rc;                                                 \
    }

#define CCT_NO_BYTES 0

CCT_IO(File_open, CC_FILE_OPEN, cct_comm(comm), CCT_NO_BYTES, CCT_NO_BYTES,
       (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh),
       (comm, filename, amode, info, fh))

CCT_IO(File_close, CC_FILE_CLOSE, CC_COMM_NONE, CCT_NO_BYTES, CCT_NO_BYTES,
       (MPI_File *fh), (fh))

CCT_IO(File_set_view, CC_FILE_SET_VIEW, CC_COMM_NONE, CCT_NO_BYTES, CCT_NO_BYTES,
       (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
        const char *datarep, MPI_Info info),
       (fh, disp, etype, filetype, datarep, info))

CCT_IO(File_sync, CC_FILE_SYNC, CC_COMM_NONE, CCT_NO_BYTES, CCT_NO_BYTES,
       (MPI_File fh), (fh))

#define CCT_IO_READ(NAME, CALL)                                                              \
    CCT_IO(NAME, CALL, CC_COMM_NONE, CCT_NO_BYTES, CCT_BYTES(count, datatype),              \
           (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status),  \
           (fh, buf, count, datatype, status))
#define CCT_IO_WRITE(NAME, CALL)                                                             \
    CCT_IO(NAME, CALL, CC_COMM_NONE, CCT_BYTES(count, datatype), CCT_NO_BYTES,              \
           (MPI_File fh, const void *buf, int count, MPI_Datatype datatype,                  \
            MPI_Status *status),                                                             \
           (fh, buf, count, datatype, status))
#define CCT_IO_READ_AT(NAME, CALL)                                                           \
    CCT_IO(NAME, CALL, CC_COMM_NONE, CCT_NO_BYTES, CCT_BYTES(count, datatype),              \
           (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,     \
            MPI_Status *status),                                                             \
           (fh, offset, buf, count, datatype, status))
#define CCT_IO_WRITE_AT(NAME, CALL)                                                          \
    CCT_IO(NAME, CALL, CC_COMM_NONE, CCT_BYTES(count, datatype), CCT_NO_BYTES,              \
           (MPI_File fh, MPI_Offset offset, const void *buf, int count,                      \
            MPI_Datatype datatype, MPI_Status *status),                                      \
           (fh, offset, buf, count, datatype, status))

CCT_IO_READ(File_read, CC_FILE_READ)
CCT_IO_READ(File_read_all, CC_FILE_READ_ALL)
CCT_IO_READ_AT(File_read_at, CC_FILE_READ_AT)
CCT_IO_READ_AT(File_read_at_all, CC_FILE_READ_AT_ALL)
CCT_IO_WRITE(File_write, CC_FILE_WRITE)
CCT_IO_WRITE(File_write_all, CC_FILE_WRITE_ALL)
CCT_IO_WRITE_AT(File_write_at, CC_FILE_WRITE_AT)
CCT_IO_WRITE_AT(File_write_at_all, CC_FILE_WRITE_AT_ALL)

/* the request of a non-blocking file access gets no COMPLETE record */
CCT_IO(File_iread, CC_FILE_IREAD, CC_COMM_NONE, CCT_NO_BYTES, CCT_BYTES(count, datatype),
       (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request),
       (fh, buf, count, datatype, request))

CCT_IO(File_iwrite, CC_FILE_IWRITE, CC_COMM_NONE, CCT_BYTES(count, datatype), CCT_NO_BYTES,
       (MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
        MPI_Request *request),
       (fh, buf, count, datatype, request))
