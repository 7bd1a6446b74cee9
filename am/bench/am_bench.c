/* am-bench rtt [BATCHES [ROUNDS]] | bw [STORES [TRANSFER_KIB]]: cc_am between
 * two forked processes, measured the way udp-pingpong and udp-stream measure
 * the bare sockets.  rtt: one-word request and reply, median of single round
 * trips (us).  bw: blocking stores of TRANSFER_KIB (default 4096), each timed
 * from the call to its return (the destination has every byte): the upper
 * quartile over STORES (default 40) of MB/s (10^6 B/s), as udp-stream reports
 * its bursts, then the mean (all bytes over all the time: what losses cost
 * shows there, as most stores see none).  Faults and sizes from CC_AM_*. */
#include "am_pair.h"
#include "../bench/udp_pair.h"

enum { H_PING = 1, H_PONG = 2, H_STOP = 3, H_SINK = 4 };

static volatile int pongs, stopped;
static void on_ping(cc_am_token *t, const cc_am_word *a, int n, void *c)
{
    (void)n, (void)c;
    cc_am_reply_1(t, H_PONG, a[0]);
}
static void on_pong(cc_am_token *t, const cc_am_word *a, int n, void *c) { (void)t, (void)a, (void)n, (void)c; pongs++; }
static void on_stop(cc_am_token *t, const cc_am_word *a, int n, void *c) { (void)t, (void)a, (void)n, (void)c; stopped = 1; }
static void on_sink(cc_am_token *t, void *a, size_t n, cc_am_word w, void *c) { (void)t, (void)a, (void)n, (void)w, (void)c; }

typedef struct { int batches, rounds, stores; size_t transfer; int bw; } params;

static int run(cc_am_ep *ep, int rank, void *arg)
{
    const params *p = arg;
    am_pair_prepare(ep);
    cc_am_set_handler(ep, H_PING, on_ping, NULL);
    cc_am_set_handler(ep, H_PONG, on_pong, NULL);
    cc_am_set_handler(ep, H_STOP, on_stop, NULL);
    cc_am_set_bulk_handler(ep, H_SINK, on_sink, NULL);
    if (rank == 1) {
        while (!stopped)
            if (cc_am_poll(ep) < 0) return 1;
        return am_pair_finish(ep) < 0;
    }
    if (!p->bw) {
        const int n = p->batches * p->rounds;
        double *rtt = calloc((size_t)n, sizeof *rtt);
        for (int i = -p->rounds; i < n; i++) { /* the first batch warms up */
            double t0 = udp_now();
            int want = pongs + 1;
            if (cc_am_request_1(ep, 1, H_PING, (cc_am_word)i) < 0) return 1;
            while (pongs < want)
                if (cc_am_poll(ep) < 0) return 1;
            if (i >= 0) rtt[i] = (udp_now() - t0) * 1e6;
        }
        printf("rtt_us %.3f\n", udp_median(rtt, n));
        free(rtt);
    } else {
        unsigned char *src = malloc(p->transfer);
        memset(src, 1, p->transfer);
        double *rate = calloc((size_t)p->stores, sizeof *rate), total = 0;
        for (int i = -1; i < p->stores; i++) { /* store -1 warms up */
            double t0 = udp_now();
            if (cc_am_store(ep, 1, src, 0, p->transfer, H_SINK, 0) < 0) return 1;
            if (i >= 0) {
                rate[i] = (double)p->transfer / (udp_now() - t0) / 1e6;
                total += udp_now() - t0;
            }
        }
        printf("bw_MBps %.1f %.1f\n", udp_upper_quartile(rate, p->stores),
               (double)p->transfer * p->stores / total / 1e6);
        free(rate);
        if (getenv("AM_BENCH_STATS")) {
            cc_am_stats s;
            cc_am_get_stats(ep, &s);
            fprintf(stderr, "sent %llu retx %llu nacks-in %llu keepalives %llu acks-out %llu\n",
                    (unsigned long long)s.packets_sent, (unsigned long long)s.retransmitted,
                    (unsigned long long)s.nacks_received, (unsigned long long)s.keepalives_sent,
                    (unsigned long long)s.explicit_acks_sent);
        }
        free(src);
    }
    if (cc_am_request_1(ep, 1, H_STOP, 0) < 0) return 1;
    return am_pair_finish(ep) < 0;
}

int main(int argc, char **argv)
{
    params p = {30, 1000, 40, 4 << 20, 0};
    if (argc < 2) return 2;
    if (p.stores < 1 || p.transfer < 1) return 2;
    if (strcmp(argv[1], "bw") == 0) {
        p.bw = 1;
        if (argc > 2) p.stores = atoi(argv[2]);
        if (argc > 3) p.transfer = (size_t)atol(argv[3]) * 1024;
    } else if (strcmp(argv[1], "rtt") == 0) {
        if (argc > 2) p.batches = atoi(argv[2]);
        if (argc > 3) p.rounds = atoi(argv[3]);
    } else {
        fprintf(stderr, "usage: am-bench rtt [BATCHES [ROUNDS]] | bw [STORES [TRANSFER_KIB]]\n");
        return 2;
    }
    cc_am_config cfg;
    cc_am_config_default(&cfg);
    char err[CC_AM_ERRLEN];
    if (cc_am_config_from_env(&cfg, err, sizeof err) != CC_AM_OK) {
        fprintf(stderr, "am-bench: %s\n", err);
        return 2;
    }
    int child = 0;
    am_pair_pin = udp_pin;
    int rc = am_pair_run(cfg, p.transfer, run, &p, &child);
    return rc == 0 && WIFEXITED(child) && WEXITSTATUS(child) == 0 ? 0 : 1;
}
