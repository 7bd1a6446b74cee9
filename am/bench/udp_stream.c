/* udp-stream [BURSTS [BURST_KIB [BYTES]]]: the bare one-way bandwidth of
 * BYTES-byte datagrams (default 61440, cc_am's packet) sent back to back in
 * bursts of BURST_KIB (default 4096), with no flow control inside a burst.
 * A burst moves a buffer of BURST_KIB into one of the same size at the
 * receiver, datagram after datagram, as a bulk transfer moves memory (not one
 * cache-resident datagram buffer over and over).
 * For each burst the receiver says "go" and times until the burst's last
 * datagram arrives (or 20 ms of silence: datagrams that overflow its buffer
 * are lost, as for any UDP user) and counts the bytes that arrived.  Prints
 * the upper quartile over bursts of MB/s (10^6 B/s): on a loaded machine a
 * long mean, even a median, measures the scheduler's time slices. */
#include <errno.h>
#include <stdint.h>

#include "udp_pair.h"

int main(int argc, char **argv)
{
    int bursts = argc > 1 ? atoi(argv[1]) : 40;
    size_t burst = (size_t)(argc > 2 ? atol(argv[2]) : 4096) * 1024;
    size_t bytes = argc > 3 ? (size_t)atol(argv[3]) : 61440;
    if (bursts < 1 || burst < bytes || bytes < 16 || bytes > 65000) return 2;
    static unsigned char buf[65536];
    const uint32_t count = (uint32_t)((burst + bytes - 1) / bytes);
    /* room for whole datagrams: the last one of a burst is a full one too */
    unsigned char *mem = calloc(count, bytes);
    if (!mem) return 2;
    for (uint32_t i = 0; i < count; i++) memcpy(mem + (size_t)i * bytes, &i, sizeof i);
    udp_pair u;
    udp_pair_open(&u);
    double *rate = calloc((size_t)bursts, sizeof *rate);
    for (int b = -1; b < bursts; b++) { /* burst -1 warms up */
        if (u.rank == 0) {
            while (recv(u.fd, buf, sizeof buf, MSG_DONTWAIT) < 0) udp_idle(); /* go */
            udp_busy();
            for (uint32_t i = 0; i < count; i++)
                while (sendto(u.fd, mem + (size_t)i * bytes, bytes, 0, (struct sockaddr *)&u.peer,
                              sizeof u.peer) < 0 &&
                       (errno == EAGAIN || errno == ENOBUFS)) {}
            continue;
        }
        double t0 = udp_now(), last = t0;
        long got = 0;
        sendto(u.fd, buf, 1, 0, (struct sockaddr *)&u.peer, sizeof u.peer);
        for (;;) {
            unsigned char *at = mem + (got < (long)((size_t)count * bytes) ? (size_t)got : 0);
            ssize_t n = recv(u.fd, at, bytes, MSG_DONTWAIT);
            double now = udp_now();
            if (n > 0) {
                udp_busy();
                got += n;
                last = now;
                uint32_t i;
                memcpy(&i, at, sizeof i);
                if (i == count - 1) break;
            } else if (now - last > 0.02) {
                break;
            } else {
                udp_idle();
            }
        }
        if (b >= 0) rate[b] = (double)got / (last - t0) / 1e6;
    }
    if (u.rank == 1) {
        double mbps = udp_upper_quartile(rate, bursts);
        sendto(u.fd, &mbps, sizeof mbps, 0, (struct sockaddr *)&u.peer, sizeof u.peer);
    } else {
        double mbps = 0;
        while (recv(u.fd, &mbps, sizeof mbps, MSG_DONTWAIT) != sizeof mbps) udp_idle();
        printf("bw_MBps %.1f\n", mbps);
    }
    free(rate);
    free(mem);
    udp_pair_close(&u);
    return 0;
}
