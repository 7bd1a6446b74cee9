/* udp-stream [MIB [BYTES]]: the bare one-way bandwidth of BYTES-byte datagrams
 * (default 61440, cc_am's packet), sent back to back with no flow control.
 * The receiver counts what arrives (datagrams that overflow its buffer are
 * lost, as they would be for any UDP user) between the first datagram and the
 * last before 50 ms of silence, and prints MB/s (10^6 B/s) received. */
#include <errno.h>

#include "udp_pair.h"

int main(int argc, char **argv)
{
    double mib = argc > 1 ? atof(argv[1]) : 256;
    size_t bytes = argc > 2 ? (size_t)atol(argv[2]) : 61440;
    if (!(mib > 0) || bytes < 1 || bytes > 65000) return 2;
    static char buf[65536];
    const long count = (long)(mib * 1048576 / (double)bytes);
    udp_pair u;
    udp_pair_open(&u);
    if (u.rank == 0) {
        /* wait until the receiver is up (it sends one datagram) */
        while (recv(u.fd, buf, sizeof buf, MSG_DONTWAIT) < 0) udp_idle();
        for (long i = 0; i < count; i++)
            while (sendto(u.fd, buf, bytes, 0, (struct sockaddr *)&u.peer, sizeof u.peer) < 0 &&
                   (errno == EAGAIN || errno == ENOBUFS)) {}
        /* the receiver's report */
        double mbps = 0;
        while (recv(u.fd, &mbps, sizeof mbps, MSG_DONTWAIT) < 0) {}
        printf("bw_MBps %.1f\n", mbps);
    } else {
        sendto(u.fd, buf, 1, 0, (struct sockaddr *)&u.peer, sizeof u.peer);
        double first = 0, last = 0;
        long got = 0;
        for (;;) {
            ssize_t n = recv(u.fd, buf, sizeof buf, MSG_DONTWAIT);
            double now = udp_now();
            if (n > 0) {
                if (!got) first = now;
                got += n;
                last = now;
            } else if (got && now - last > 0.05) {
                break;
            } else {
                udp_idle();
            }
        }
        double mbps = last > first ? (double)(got - (long)bytes) / (last - first) / 1e6 : 0;
        sendto(u.fd, &mbps, sizeof mbps, 0, (struct sockaddr *)&u.peer, sizeof u.peer);
    }
    udp_pair_close(&u);
    return 0;
}
