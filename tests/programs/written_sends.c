/* Sends whose buffers the program wrote in known ways between them: rank 0 sends rank 1
 * eight messages of 4096 bytes from one buffer (the first; unchanged; its first byte
 * changed; its last byte; every byte; its first half; unchanged again; bytes stored with
 * the values they held), then two through a strided vector type, then four 64-byte
 * messages of which it changes the last two. The tracer's WRITTEN codes of these sends are
 * what tests/test_trace_mpi.py checks. */
#include <mpi.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    static unsigned char buf[4096], small[64], in[4096 + 64];
    memset(buf, 7, sizeof buf);
    memset(small, 3, sizeof small);
    MPI_Datatype vector;
    MPI_Type_vector(16, 8, 16, MPI_BYTE, &vector);
    MPI_Type_commit(&vector);
    for (int k = 0; k < 8; k++) {
        if (rank == 0) {
            if (k == 2) buf[0] = 1;
            if (k == 3) buf[4095] = 2;
            if (k == 4) memset(buf, 9, sizeof buf);
            if (k == 5) memset(buf, 4, 2048);
            if (k == 7) memset(buf + 3000, 9, 64); /* they held 9 already */
            MPI_Send(buf, 4096, MPI_BYTE, 1, k, MPI_COMM_WORLD);
        } else {
            MPI_Recv(in, 4096, MPI_BYTE, 0, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    for (int k = 0; k < 2; k++) {
        if (rank == 0) {
            buf[1] = (unsigned char)k;
            MPI_Send(buf, 1, vector, 1, 20, MPI_COMM_WORLD);
        } else {
            MPI_Recv(in, 128, MPI_BYTE, 0, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    for (int k = 0; k < 4; k++) {
        if (rank == 0) {
            if (k >= 2) small[63] = (unsigned char)k;
            MPI_Send(small, 64, MPI_BYTE, 1, 30, MPI_COMM_WORLD);
        } else {
            MPI_Recv(in, 64, MPI_BYTE, 0, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    MPI_Type_free(&vector);
    MPI_Finalize();
    return 0;
}
