/* Datagrams: one UDP socket per rank, and the faults injected on the way out.
 * Every fault is drawn from one seeded generator, so a run is repeatable. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cc_am_net.h"

static int cc_am_local_ip(uint8_t ip[4], char *host, size_t hostlen)
{
    const char *configured = getenv("CC_AM_ADDR");
    struct in_addr a;
    if (gethostname(host, hostlen) != 0) snprintf(host, hostlen, "localhost");
    host[hostlen - 1] = '\0';
    if (configured && *configured) {
        if (inet_pton(AF_INET, configured, &a) != 1) return -1;
        memcpy(ip, &a, 4);
        return 0;
    }
    /* the address the host name resolves to (peers on other hosts use it);
     * peers on this host use the loopback interface */
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_DGRAM;
    a.s_addr = htonl(INADDR_LOOPBACK);
    if (getaddrinfo(host, NULL, &hints, &res) == 0 && res) {
        a = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
        freeaddrinfo(res);
    }
    memcpy(ip, &a, 4);
    return 0;
}

int cc_am_net_open(cc_am_ep *ep, cc_am_addr *addr, char *err, size_t errlen)
{
    memset(addr, 0, sizeof *addr);
    if (cc_am_local_ip(addr->ip, addr->host, sizeof addr->host) != 0) {
        snprintf(err, errlen, "CC_AM_ADDR: '%s' is not an IPv4 address", getenv("CC_AM_ADDR"));
        return CC_AM_EARG;
    }
    ep->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (ep->fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return CC_AM_ESYS;
    }
    int size = ep->cfg.socket_buffer;
    /* the kernel caps these at net.core.[rw]mem_max; a smaller buffer only costs speed */
    setsockopt(ep->fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    setsockopt(ep->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof sa;
    if (bind(ep->fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        getsockname(ep->fd, (struct sockaddr *)&sa, &len) != 0) {
        snprintf(err, errlen, "bind: %s", strerror(errno));
        close(ep->fd);
        ep->fd = -1;
        return CC_AM_ESYS;
    }
    addr->port = ntohs(sa.sin_port);
    return CC_AM_OK;
}

/* xorshift64*: uniform in [0, 1) */
static double cc_am_random(cc_am_ep *ep)
{
    ep->rng ^= ep->rng >> 12;
    ep->rng ^= ep->rng << 25;
    ep->rng ^= ep->rng >> 27;
    return (double)((ep->rng * 2685821657736338717ULL) >> 11) * 0x1.0p-53;
}

static void cc_am_raw_send(cc_am_ep *ep, int peer, const struct iovec *iov, int iovcnt)
{
    struct msghdr m = {0};
    m.msg_name = &ep->peers[peer].addr;
    m.msg_namelen = sizeof ep->peers[peer].addr;
    m.msg_iov = (struct iovec *)iov;
    m.msg_iovlen = (size_t)iovcnt;
    for (;;) {
        ssize_t sent = sendmsg(ep->fd, &m, 0);
        if (sent >= 0) break;
        if (errno == EINTR) continue;
        /* a full socket buffer (EAGAIN, ENOBUFS) or an unreachable peer is a lost
         * datagram: the protocol recovers it like any other */
        break;
    }
    ep->stats.packets_sent++;
    for (int i = 0; i < iovcnt; i++) ep->stats.bytes_sent += iov[i].iov_len;
}

static void cc_am_hold(cc_am_ep *ep, int peer, const struct iovec *iov, int iovcnt, int64_t due)
{
    if (ep->nlate == (int)(sizeof ep->late / sizeof ep->late[0])) {
        cc_am_raw_send(ep, peer, iov, iovcnt); /* no room to hold it: send it now */
        return;
    }
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++) len += iov[i].iov_len;
    unsigned char *buf = malloc(len ? len : 1);
    if (!buf) {
        cc_am_raw_send(ep, peer, iov, iovcnt);
        return;
    }
    size_t at = 0;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(buf + at, iov[i].iov_base, iov[i].iov_len);
        at += iov[i].iov_len;
    }
    ep->late[ep->nlate++] = (cc_am_late){due, peer, len, buf};
}

static void cc_am_release_late(cc_am_ep *ep, int64_t now, int after_send)
{
    int kept = 0;
    for (int i = 0; i < ep->nlate; i++) {
        cc_am_late *l = &ep->late[i];
        int go = l->due_ns == 0 ? after_send : l->due_ns <= now;
        if (go) {
            struct iovec iov = {l->buf, l->len};
            cc_am_raw_send(ep, l->peer, &iov, 1);
            free(l->buf);
        } else {
            ep->late[kept++] = *l;
        }
    }
    ep->nlate = kept;
}

void cc_am_net_flush_late(cc_am_ep *ep, int64_t now)
{
    if (ep->nlate) cc_am_release_late(ep, now, 0);
}

void cc_am_net_send(cc_am_ep *ep, int peer, const struct iovec *iov, int iovcnt)
{
    const cc_am_faults *f = &ep->cfg.faults;
    if (f->loss <= 0 && f->dup <= 0 && f->reorder <= 0 && f->delay <= 0) {
        cc_am_raw_send(ep, peer, iov, iovcnt);
        return;
    }
    if (f->loss > 0 && cc_am_random(ep) < f->loss) {
        ep->stats.injected_losses++;
        return;
    }
    if (f->reorder > 0 && cc_am_random(ep) < f->reorder) {
        ep->stats.injected_reorders++;
        cc_am_hold(ep, peer, iov, iovcnt, 0);
        return;
    }
    if (f->delay > 0 && cc_am_random(ep) < f->delay) {
        ep->stats.injected_delays++;
        cc_am_hold(ep, peer, iov, iovcnt, cc_am_now_ns() + (int64_t)(f->delay_us * 1e3) + 1);
        return;
    }
    cc_am_raw_send(ep, peer, iov, iovcnt);
    if (f->dup > 0 && cc_am_random(ep) < f->dup) {
        ep->stats.injected_dups++;
        cc_am_raw_send(ep, peer, iov, iovcnt);
    }
    if (ep->nlate) cc_am_release_late(ep, cc_am_now_ns(), 1);
}

/* While bulk data streams in, the next datagram is most likely the predicted
 * fragment: receive its header into rxbuf and its data straight into the
 * destination, one copy and one system call.  Anything else that carries data
 * has put it into a slot of the same unfinished transfer that is still to
 * come (it will be overwritten by the right fragment before the transfer
 * completes), and is copied from there to rxbuf; short datagrams fit in rxbuf
 * and write nothing there. */
static long cc_am_recv_predicted(cc_am_ep *ep, unsigned char **data)
{
    const size_t head = sizeof(cc_am_pkt);
    struct iovec iov[2] = {{ep->rxbuf, head}, {ep->predict.dst, ep->predict.len}};
    struct msghdr m = {0};
    m.msg_iov = iov;
    m.msg_iovlen = 2;
    ssize_t got = recvmsg(ep->fd, &m, MSG_DONTWAIT);
    *data = ep->rxbuf + head;
    if (got <= (ssize_t)head) return (long)got; /* < 0: errno, as for recv */
    const cc_am_pkt *pkt = (const cc_am_pkt *)ep->rxbuf;
    if (m.msg_flags & MSG_TRUNC) { /* larger than the slot: a lost datagram */
        ep->rxbuf[0] = 0;           /* no magic: ignored */
        return (long)got;
    }
    if (pkt->h.magic == CC_AM_MAGIC && pkt->h.type == CC_AM_T_CHUNK && pkt->h.src == ep->predict.peer &&
        (pkt->h.flags & 1) == ep->predict.chan && pkt->h.seq == ep->predict.seq &&
        pkt->b.frag == ep->predict.frag && pkt->b.frag_len == (size_t)got - head) {
        *data = ep->predict.dst;
        return (long)got;
    }
    memcpy(ep->rxbuf + head, ep->predict.dst, (size_t)got - head);
    return (long)got;
}

void cc_am_net_send_many(cc_am_ep *ep, int peer, cc_am_pkt *hdrs, const unsigned char *data, int count)
{
    const cc_am_faults *f = &ep->cfg.faults;
    struct iovec iov[CC_AM_MAX_CHUNK_PACKETS][2];
    struct mmsghdr msgs[CC_AM_MAX_CHUNK_PACKETS];
    const int faults = f->loss > 0 || f->dup > 0 || f->reorder > 0 || f->delay > 0;
    for (int i = 0; i < count; i++) {
        iov[i][0] = (struct iovec){&hdrs[i], sizeof hdrs[i]};
        iov[i][1] = (struct iovec){(void *)(data + hdrs[i].b.frag_off), hdrs[i].b.frag_len};
        if (faults) cc_am_net_send(ep, peer, iov[i], hdrs[i].b.frag_len ? 2 : 1);
    }
    if (faults) return; /* every datagram drew its faults */
    memset(msgs, 0, (size_t)count * sizeof msgs[0]);
    for (int i = 0; i < count; i++) {
        msgs[i].msg_hdr.msg_name = &ep->peers[peer].addr;
        msgs[i].msg_hdr.msg_namelen = sizeof ep->peers[peer].addr;
        msgs[i].msg_hdr.msg_iov = iov[i];
        msgs[i].msg_hdr.msg_iovlen = hdrs[i].b.frag_len ? 2 : 1;
        ep->stats.bytes_sent += sizeof hdrs[i] + hdrs[i].b.frag_len;
    }
    for (int done = 0; done < count;) {
        int sent = sendmmsg(ep->fd, msgs + done, (unsigned)(count - done), 0);
        if (sent > 0) {
            done += sent;
        } else if (sent < 0 && errno == EINTR) {
            continue;
        } else {
            done++; /* a full buffer: that datagram is lost, the protocol recovers it */
        }
    }
    ep->stats.packets_sent += (uint64_t)count;
}

int cc_am_pending(const cc_am_ep *ep)
{
    unsigned char byte;
    return recv(ep->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) >= 0;
}

long cc_am_net_recv(cc_am_ep *ep, unsigned char **data)
{
    const int predicted = ep->predict.valid && cc_am_prediction_open(ep);
    *data = ep->rxbuf + sizeof(cc_am_pkt);
    for (;;) {
        ssize_t got = predicted ? cc_am_recv_predicted(ep, data)
                                : recv(ep->fd, ep->rxbuf, ep->rxcap, MSG_DONTWAIT);
        if (got >= 0) return (long)got;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
        if (errno == EINTR) continue;
        /* ECONNREFUSED and the like report an earlier send to a closed port */
        if (errno == ECONNREFUSED || errno == EHOSTUNREACH || errno == ENETUNREACH) continue;
        return -errno;
    }
}

/* the prediction still names a fragment the receiver will take and has not got */
int cc_am_prediction_open(const cc_am_ep *ep)
{
    const cc_am_recv *r = &ep->peers[ep->predict.peer].rcv[ep->predict.chan];
    if (r->expect != ep->predict.seq) return 0;
    if (ep->predict.frag == 0 && r->chunk_bits == 0) return 1;
    return r->chunk_seq == ep->predict.seq && !(r->chunk_bits >> ep->predict.frag & 1);
}
