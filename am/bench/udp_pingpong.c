/* udp-pingpong [BATCHES [ROUNDS [BYTES]]]: the bare round trip of BYTES-byte
 * datagrams between two processes, busy-polling (recv with MSG_DONTWAIT) as
 * active messages do.  Prints the median of single round trips (after one
 * warm-up batch): on a loaded machine the median, unlike a batch mean, is not
 * the scheduler's time slice. */
#include "udp_pair.h"

int main(int argc, char **argv)
{
    int batches = argc > 1 ? atoi(argv[1]) : 30, rounds = argc > 2 ? atoi(argv[2]) : 1000;
    size_t bytes = argc > 3 ? (size_t)atol(argv[3]) : 8;
    if (batches < 1 || rounds < 1 || bytes < 1 || bytes > 65000) return 2;
    char buf[65536] = {0};
    udp_pair u;
    udp_pair_open(&u);
    const int n = batches * rounds;
    double *rtt = calloc((size_t)n, sizeof *rtt);
    for (int i = -rounds; i < n; i++) { /* the first batch warms up */
        double t0 = udp_now();
        if (u.rank == 0) sendto(u.fd, buf, bytes, 0, (struct sockaddr *)&u.peer, sizeof u.peer);
        while (recv(u.fd, buf, sizeof buf, MSG_DONTWAIT) < 0) udp_idle();
        udp_busy();
        if (u.rank == 1) sendto(u.fd, buf, bytes, 0, (struct sockaddr *)&u.peer, sizeof u.peer);
        if (i >= 0) rtt[i] = (udp_now() - t0) * 1e6;
    }
    if (u.rank == 0) printf("rtt_us %.3f\n", udp_median(rtt, n));
    free(rtt);
    udp_pair_close(&u);
    return 0;
}
