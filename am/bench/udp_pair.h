/* The bare-UDP baselines: two forked processes, one UDP socket each, bound
 * and sized exactly as cc_am binds and sizes its socket (loopback, 4 MiB
 * buffers, non-blocking), so the comparison is with the same sockets. */
#ifndef UDP_PAIR_H
#define UDP_PAIR_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct udp_pair {
    int rank, fd;
    struct sockaddr_in peer;
    pid_t child;
} udp_pair;

static inline double udp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* rank r on core r (when there are two), as mpirun binds two ranks: both
 * sides of every comparison run pinned the same way */
static inline void udp_pin(int rank)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) < 2) return;
    int seen = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &set)) continue;
        if (seen++ == rank) {
            CPU_ZERO(&set);
            CPU_SET(cpu, &set);
            sched_setaffinity(0, sizeof set, &set);
            return;
        }
    }
}

static inline void udp_pair_open(udp_pair *u)
{
    int fd[2];
    struct sockaddr_in a[2];
    for (int r = 0; r < 2; r++) {
        fd[r] = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
        int size = 4 << 20;
        setsockopt(fd[r], SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
        setsockopt(fd[r], SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
        memset(&a[r], 0, sizeof a[r]);
        a[r].sin_family = AF_INET;
        socklen_t len = sizeof a[r];
        if (fd[r] < 0 || bind(fd[r], (struct sockaddr *)&a[r], sizeof a[r]) != 0 ||
            getsockname(fd[r], (struct sockaddr *)&a[r], &len) != 0) {
            perror("udp socket");
            exit(2);
        }
        a[r].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    }
    fflush(NULL);
    u->child = fork();
    u->rank = u->child == 0 ? 1 : 0;
    udp_pin(u->rank);
    u->fd = fd[u->rank];
    close(fd[1 - u->rank]);
    u->peer = a[1 - u->rank];
}

/* The same polling policy as cc_am: polls that find nothing for
 * CC_AM_YIELD_AFTER_US (default 1000) give the core away once.  Call it after
 * every empty poll; udp_busy() after every datagram. */
static double udp_idle_since;
static inline void udp_busy(void) { udp_idle_since = 0; }
static inline void udp_idle(void)
{
    static double after = -1;
    if (after < 0) {
        const char *text = getenv("CC_AM_YIELD_AFTER_US");
        after = text && *text ? atof(text) * 1e-6 : 1000e-6;
    }
    double now = udp_now();
    if (udp_idle_since == 0) {
        udp_idle_since = now;
    } else if (after > 0 && now - udp_idle_since > after) {
        udp_idle_since = now;
        sched_yield();
    }
}

static inline void udp_pair_close(udp_pair *u)
{
    close(u->fd);
    if (u->rank == 1) _exit(0);
    int status;
    waitpid(u->child, &status, 0);
}

static inline int udp_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double udp_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, udp_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* the upper quartile: the rate of transfers during which neither process
 * lost its core (on a loaded machine half of them may wait for a time slice) */
static inline double udp_upper_quartile(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, udp_cmp);
    return v[(3 * (n - 1)) / 4];
}

#endif
