/* am-test SCENARIO: cc_am between two real processes (forked), faults from
 * CC_AM_* variables.  Prints one "ok" line per rank with its statistics, or
 * "FAIL: ..." lines; exits 0 only when both ranks pass.
 *
 *   exact   every request, reply, stored and fetched byte arrives exactly once,
 *           in order, with the right checksum; both ranks send at once
 *   flood   both ranks fill each other's request windows: no deadlock
 *   tail    the last datagram of a burst is lost: the keep-alive recovers it
 *   dead    the peer is killed: the survivor gets CC_AM_EDEAD, no hang
 *   errors  bad arguments give the right codes and messages */
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "am_pair.h"
#include "cc_am.h"

static int failures;

static void fail(int rank, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stdout, "FAIL rank %d: ", rank);
    vfprintf(stdout, fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    failures++;
}

static uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

static void pattern(unsigned char *p, size_t n, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        p[i] = (unsigned char)x;
    }
}

static void report(cc_am_ep *ep, const char *what)
{
    cc_am_stats s;
    cc_am_get_stats(ep, &s);
    printf("ok rank %d %s: sent %llu recv %llu retx %llu nacks %llu/%llu keepalives %llu dups %llu "
           "ooo %llu injected loss %llu dup %llu reorder %llu delay %llu\n",
           cc_am_rank(ep), what, (unsigned long long)s.packets_sent,
           (unsigned long long)s.packets_received, (unsigned long long)s.retransmitted,
           (unsigned long long)s.nacks_sent, (unsigned long long)s.nacks_received,
           (unsigned long long)s.keepalives_sent, (unsigned long long)s.duplicates_dropped,
           (unsigned long long)s.out_of_order_dropped, (unsigned long long)s.injected_losses,
           (unsigned long long)s.injected_dups, (unsigned long long)s.injected_reorders,
           (unsigned long long)s.injected_delays);
}

/* ---- exact: ordering, exactly-once and checksums ------------------------ */

enum { H_REQ = 1, H_REP = 2, H_STORE = 3, H_GOT = 4 };
enum { SLOTS = 4, SLOT_BYTES = 300 * 1024 };
/* counts, scaled by the optional second argument */
static uint32_t NREQ = 3000, NSTORE = 120, NGET = 60, NFLOOD = 20000;
#define GET_AREA ((size_t)SLOTS * SLOT_BYTES)
#define SEGMENT (GET_AREA + 2 * 1024 * 1024)

typedef struct exact_state {
    int rank;
    uint32_t next_req, next_rep, next_store, stores_done, gets_done;
} exact_state;

static size_t store_len(uint32_t i)
{
    static const size_t lens[] = {0, 1, 16, 1000, 61440, 61441, 200000, SLOT_BYTES};
    size_t n = lens[(i * 7 + 3) % (sizeof lens / sizeof lens[0])];
    return n > 1 && i % 3 == 0 ? n - 1 : n;
}

static void on_req(cc_am_token *t, const cc_am_word *a, int n, void *ctx)
{
    exact_state *st = ctx;
    uint32_t i = a[0];
    if (i != st->next_req) fail(st->rank, "request %u arrived when %u was due", i, st->next_req);
    int want = 1 + (int)(i % 4);
    if (n != want) fail(st->rank, "request %u carries %d words, sent %d", i, n, want);
    for (int k = 1; k < n; k++)
        if (a[k] != i * 31 + (cc_am_word)k) fail(st->rank, "request %u word %d is %u", i, k, a[k]);
    st->next_req = i + 1;
    cc_am_reply_2(t, H_REP, i, ~i);
}

static void on_rep(cc_am_token *t, const cc_am_word *a, int n, void *ctx)
{
    (void)t;
    exact_state *st = ctx;
    if (n != 2 || a[0] != st->next_rep || a[1] != ~a[0])
        fail(st->rank, "reply %u (%d words) arrived when %u was due", a[0], n, st->next_rep);
    st->next_rep = a[0] + 1;
}

static void on_store(cc_am_token *t, void *addr, size_t nbytes, cc_am_word arg, void *ctx)
{
    exact_state *st = ctx;
    cc_am_ep *ep = cc_am_token_ep(t);
    const uint32_t i = arg;
    if (i != st->next_store) fail(st->rank, "store %u arrived when %u was due", i, st->next_store);
    st->next_store = i + 1;
    size_t seglen;
    unsigned char *seg = cc_am_segment(ep, &seglen);
    if ((unsigned char *)addr != seg + GET_AREA + (size_t)(i % 4) * 512 * 1024 || nbytes != store_len(i))
        fail(st->rank, "store %u landed at the wrong place or size (%zu)", i, nbytes);
    unsigned char *want = malloc(nbytes + 1);
    pattern(want, nbytes, 1000 + i + 100000u * (uint32_t)cc_am_token_source(t));
    if (fnv(want, nbytes) != fnv(addr, nbytes)) fail(st->rank, "store %u: checksum differs", i);
    free(want);
}

static void on_store_done(cc_am_ep *ep, int status, void *ctx)
{
    exact_state *st = ctx;
    if (status != CC_AM_OK) fail(st->rank, "async store failed: %s", cc_am_error(ep));
    st->stores_done++;
}

static void on_got(cc_am_token *t, void *addr, size_t nbytes, cc_am_word arg, void *ctx)
{
    (void)t;
    exact_state *st = ctx;
    unsigned char *want = malloc(nbytes + 1);
    pattern(want, nbytes, 7 + (uint32_t)(1 - st->rank));
    size_t off = (size_t)arg; /* the fetched range starts at this segment offset */
    unsigned char *full = malloc(GET_AREA);
    pattern(full, GET_AREA, 7 + (uint32_t)(1 - st->rank));
    if (memcmp(addr, full + off, nbytes) != 0) fail(st->rank, "get at %zu (%zu bytes): data differs", off, nbytes);
    free(full);
    free(want);
    st->gets_done++;
}

static int exact(cc_am_ep *ep, int rank, void *arg)
{
    (void)arg;
    exact_state st = {.rank = rank};
    const int peer = 1 - rank;
    am_pair_prepare(ep);
    cc_am_set_handler(ep, H_REQ, on_req, &st);
    cc_am_set_handler(ep, H_REP, on_rep, &st);
    cc_am_set_bulk_handler(ep, H_STORE, on_store, &st);
    cc_am_set_bulk_handler(ep, H_GOT, on_got, &st);
    size_t seglen;
    unsigned char *seg = cc_am_segment(ep, &seglen);
    pattern(seg, GET_AREA, 7 + (uint32_t)rank);

    for (uint32_t i = 0; i < NREQ; i++) {
        cc_am_word w[4] = {i, i * 31 + 1, i * 31 + 2, i * 31 + 3};
        int rc = cc_am_request(ep, peer, H_REQ, 1 + (int)(i % 4), w);
        if (rc < 0) return fail(rank, "request %u: %s", i, cc_am_error(ep)), 1;
    }
    while (st.next_rep < NREQ || st.next_req < NREQ)
        if (cc_am_poll(ep) < 0) return fail(rank, "poll: %s", cc_am_error(ep)), 1;

    /* stores: blocking and asynchronous, at most 4 in flight, each its own slot */
    unsigned char *src[4];
    for (int k = 0; k < 4; k++) src[k] = malloc(SLOT_BYTES + 1);
    for (uint32_t i = 0; i < NSTORE; i++) {
        while (i - st.stores_done >= 4 && i >= 4)
            if (cc_am_poll(ep) < 0) return fail(rank, "poll: %s", cc_am_error(ep)), 1;
        size_t n = store_len(i);
        pattern(src[i % 4], n, 1000 + i + 100000u * (uint32_t)rank);
        size_t off = GET_AREA + (size_t)(i % 4) * 512 * 1024;
        int rc;
        if (i % 5 == 0) {
            while (st.stores_done < i) /* keep order simple: blocking after the others */
                if (cc_am_poll(ep) < 0) return fail(rank, "poll: %s", cc_am_error(ep)), 1;
            rc = cc_am_store(ep, peer, src[i % 4], off, n, H_STORE, i);
            st.stores_done++;
        } else {
            rc = cc_am_store_async(ep, peer, src[i % 4], off, n, H_STORE, i, on_store_done, &st);
        }
        if (rc < 0) return fail(rank, "store %u: %s", i, cc_am_error(ep)), 1;
    }
    if (cc_am_wait_all(ep) < 0) return fail(rank, "wait_all: %s", cc_am_error(ep)), 1;

    /* gets: blocking and asynchronous, of the peer's patterned area */
    unsigned char *dst = malloc(GET_AREA);
    for (uint32_t i = 0; i < NGET; i++) {
        size_t off = ((size_t)i * 7919) % (GET_AREA / 2), n = store_len(i * 3 + 1);
        if (off + n > GET_AREA) n = GET_AREA - off;
        int rc = i % 2 ? cc_am_get(ep, peer, off, dst, n, H_GOT, (cc_am_word)off)
                       : cc_am_get_async(ep, peer, off, dst + GET_AREA / 2 * 0, n, H_GOT,
                                         (cc_am_word)off, NULL, NULL);
        if (rc < 0) return fail(rank, "get %u: %s", i, cc_am_error(ep)), 1;
        if (cc_am_wait_all(ep) < 0) return fail(rank, "wait_all: %s", cc_am_error(ep)), 1;
    }
    while (st.next_store < NSTORE)
        if (cc_am_poll(ep) < 0) return fail(rank, "poll: %s", cc_am_error(ep)), 1;
    if (st.next_req != NREQ || st.next_rep != NREQ || st.next_store != NSTORE || st.gets_done != NGET)
        fail(rank, "counts: requests %u replies %u stores %u gets %u", st.next_req, st.next_rep,
             st.next_store, st.gets_done);
    for (int k = 0; k < 4; k++) free(src[k]);
    free(dst);
    report(ep, "exact");
    int rc = am_pair_finish(ep);
    if (rc < 0) fail(rank, "finish: %s", cc_am_strerror(rc));
    return failures;
}

/* ---- flood: both request windows full at once --------------------------- */

static uint32_t flood_got, flood_replies;
static void flood_req(cc_am_token *t, const cc_am_word *a, int n, void *c)
{
    (void)n, (void)c;
    flood_got++;
    cc_am_reply_1(t, H_REP, a[0]);
}
static void flood_rep(cc_am_token *t, const cc_am_word *a, int n, void *c)
{
    (void)t, (void)a, (void)n, (void)c;
    flood_replies++;
}

static int flood(cc_am_ep *ep, int rank, void *arg)
{
    (void)arg;
    const uint32_t N = NFLOOD;
    am_pair_prepare(ep);
    cc_am_set_handler(ep, H_REQ, flood_req, NULL);
    cc_am_set_handler(ep, H_REP, flood_rep, NULL);
    /* no explicit polls: only the polling inside requests makes progress */
    for (uint32_t i = 0; i < N; i++)
        if (cc_am_request_1(ep, 1 - rank, H_REQ, i) < 0)
            return fail(rank, "request %u: %s", i, cc_am_error(ep)), 1;
    while (flood_got < N || flood_replies < N)
        if (cc_am_poll(ep) < 0) return fail(rank, "poll: %s", cc_am_error(ep)), 1;
    report(ep, "flood");
    int rc = am_pair_finish(ep);
    if (rc < 0) fail(rank, "finish: %s", cc_am_strerror(rc));
    return failures;
}

/* ---- tail: the last datagram is lost ------------------------------------ */

static uint32_t tail_got;
static void tail_req(cc_am_token *t, const cc_am_word *a, int n, void *c)
{
    (void)t, (void)a, (void)n, (void)c;
    tail_got++;
}

static int tail(cc_am_ep *ep, int rank, void *arg)
{
    (void)arg;
    am_pair_prepare(ep);
    cc_am_set_handler(ep, H_REQ, tail_req, NULL);
    if (rank == 0) {
        cc_am_faults none, all;
        memset(&none, 0, sizeof none);
        all = none;
        all.loss = 1.0;
        for (uint32_t i = 0; i < 9; i++) cc_am_request_1(ep, 1, H_REQ, i);
        cc_am_set_faults(ep, &all); /* the tenth request, and nothing after it, is lost */
        cc_am_request_1(ep, 1, H_REQ, 9);
        cc_am_set_faults(ep, &none);
        /* nothing else is sent: only the keep-alive can bring request 9 across */
    }
    while (am_pair_done_count == 0 && (rank == 0 || tail_got < 10))
        if (cc_am_poll(ep) < 0) return fail(rank, "poll: %s", cc_am_error(ep)), 1;
    cc_am_stats s;
    cc_am_get_stats(ep, &s);
    if (rank == 0 && (s.keepalives_sent == 0 || s.retransmitted == 0))
        fail(rank, "no keep-alive recovery (keep-alives %llu, retransmitted %llu)",
             (unsigned long long)s.keepalives_sent, (unsigned long long)s.retransmitted);
    if (rank == 1 && tail_got != 10) fail(rank, "%u requests arrived, 10 sent", tail_got);
    report(ep, "tail");
    int rc = am_pair_finish(ep);
    if (rc < 0) fail(rank, "finish: %s", cc_am_strerror(rc));
    return failures;
}

/* ---- dead: the peer is killed ------------------------------------------- */

static int dead(cc_am_ep *ep, int rank, void *arg)
{
    (void)arg;
    am_pair_prepare(ep);
    cc_am_set_handler(ep, H_REQ, tail_req, NULL);
    if (rank == 1) {
        while (tail_got == 0) cc_am_poll(ep);
        raise(SIGKILL);
    }
    cc_am_request_1(ep, 1, H_REQ, 0);
    unsigned char *buf = calloc(1, 1 << 20);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = CC_AM_OK;
    for (int i = 0; i < 1000 && rc == CC_AM_OK; i++) rc = cc_am_store(ep, 1, buf, 0, 1 << 20, H_STORE, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    if (rc != CC_AM_EDEAD) fail(rank, "store to a dead peer returned %d (%s)", rc, cc_am_strerror(rc));
    printf("dead rank 0: %s after %.2f s: %s\n", cc_am_strerror(rc), waited, cc_am_error(ep));
    if (cc_am_request_1(ep, 1, H_REQ, 1) != CC_AM_EDEAD) fail(rank, "request to a dead peer accepted");
    free(buf);
    cc_am_close(ep);
    return failures;
}

/* ---- errors: bad arguments ---------------------------------------------- */

static void expect(cc_am_ep *ep, int got, int want, const char *what)
{
    if (got != want)
        fail(cc_am_rank(ep), "%s: returned %d (%s), expected %d", what, got, cc_am_strerror(got), want);
    else if (want == CC_AM_OK)
        printf("ok rank %d %s\n", cc_am_rank(ep), what);
    else
        printf("error rank %d %s: %s\n", cc_am_rank(ep), what, cc_am_error(ep));
}

static int errors(cc_am_ep *ep, int rank, void *arg)
{
    (void)arg;
    am_pair_prepare(ep);
    if (rank == 0) {
        unsigned char buf[64] = {0};
        size_t seglen;
        cc_am_segment(ep, &seglen);
        expect(ep, cc_am_request_1(ep, 5, H_REQ, 0), CC_AM_ERANK, "unknown rank");
        expect(ep, cc_am_request_1(ep, -1, H_REQ, 0), CC_AM_ERANK, "negative rank");
        expect(ep, cc_am_request_1(ep, 1, CC_AM_MAX_HANDLERS, 0), CC_AM_EHANDLER, "handler out of range");
        expect(ep, cc_am_set_handler(ep, -3, NULL, NULL), CC_AM_EHANDLER, "register out of range");
        expect(ep, cc_am_store(ep, 1, buf, seglen - 10, 64, H_STORE, 0), CC_AM_ESEGMENT,
               "store past the segment");
        expect(ep, cc_am_store(ep, 1, buf, (size_t)-8, 64, H_STORE, 0), CC_AM_ESEGMENT,
               "store at a wrapping offset");
        expect(ep, cc_am_get(ep, 1, seglen, buf, 1, -1, 0), CC_AM_ESEGMENT, "get past the segment");
        expect(ep, cc_am_get(ep, 1, 0, buf, 8, 77, 0), CC_AM_EHANDLER, "get to an unregistered handler");
        expect(ep, cc_am_store(ep, 1, buf, 0, 8, H_STORE, 0), CC_AM_OK, "store in the segment");
        /* the peer has no handler H_STORE: its poll says so */
    } else {
        int rc = 0;
        while (rc >= 0) rc = cc_am_poll(ep);
        expect(ep, rc, CC_AM_EHANDLER, "message to an unregistered handler");
    }
    int rc = am_pair_finish(ep);
    if (rc < 0) fail(rank, "finish: %s", cc_am_strerror(rc));
    return failures;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        am_pair_fn fn;
    } scenarios[] = {{"exact", exact}, {"flood", flood}, {"tail", tail}, {"dead", dead}, {"errors", errors}};
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: am-test exact|flood|tail|dead|errors [SCALE]\n");
        return 2;
    }
    double scale = argc == 3 ? atof(argv[2]) : 1.0;
    if (!(scale > 0 && scale <= 100)) {
        fprintf(stderr, "am-test: SCALE must be in (0, 100]\n");
        return 2;
    }
    NREQ = (uint32_t)(NREQ * scale) + 1;
    NSTORE = (uint32_t)(NSTORE * scale) + 1;
    NGET = (uint32_t)(NGET * scale) + 1;
    NFLOOD = (uint32_t)(NFLOOD * scale) + 1;
    cc_am_config cfg;
    cc_am_config_default(&cfg);
    char err[CC_AM_ERRLEN];
    if (cc_am_config_from_env(&cfg, err, sizeof err) != CC_AM_OK) {
        fprintf(stderr, "am-test: %s\n", err);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        if (strcmp(argv[1], scenarios[i].name) != 0) continue;
        int child = 0;
        int rc = am_pair_run(cfg, SEGMENT, scenarios[i].fn, NULL, &child);
        int expect_killed = strcmp(argv[1], "dead") == 0;
        int child_ok = expect_killed ? WIFSIGNALED(child) && WTERMSIG(child) == SIGKILL
                                     : WIFEXITED(child) && WEXITSTATUS(child) == 0;
        if (!child_ok) printf("FAIL rank 1: ended with status %d\n", child);
        return rc == 0 && child_ok ? 0 : 1;
    }
    fprintf(stderr, "am-test: unknown scenario '%s'\n", argv[1]);
    return 2;
}
