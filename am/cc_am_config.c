/* Defaults and the CC_AM_* environment variables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_am.h"
#include "cc_parse.h"

/* Defaults chosen by measurement on loopback (am/README.md, "Sizes"): the
 * largest datagrams cost the fewest system calls per byte; 8 of them per
 * chunk, two chunks in flight, keep the receiver busy while each chunk's
 * acknowledgement travels, and still fit twice in a 4 MiB socket buffer. */
void cc_am_config_default(cc_am_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->packet_bytes = 60 * 1024;
    cfg->chunk_packets = 8;
    cfg->chunks_in_flight = 2;
    cfg->request_window = 64;
    cfg->reply_window = 128;
    cfg->keepalive_us = 2000;
    cfg->dead_after_s = 10.0;
    cfg->yield_after_us = 1000;
    cfg->socket_buffer = 4 << 20;
    cfg->faults.delay_us = 200;
    cfg->faults.seed = 1;
}

/* a variable left unset or empty keeps the default */
static int cc_am_env_double(const char *name, double lo, double hi, double *out, char *err,
                            size_t errlen)
{
    const char *text = getenv(name);
    if (!text || !*text) return 0;
    return cc_parse_double(name, text, lo, hi, 0, out, err, errlen);
}

static int cc_am_env_int(const char *name, long lo, long hi, int *out, char *err, size_t errlen)
{
    const char *text = getenv(name);
    if (!text || !*text) return 0;
    long v = 0;
    if (cc_parse_long(name, text, lo, hi, &v, err, errlen) != 0) return -1;
    *out = (int)v;
    return 0;
}

int cc_am_config_from_env(cc_am_config *cfg, char *err, size_t errlen)
{
    double packet = (double)cfg->packet_bytes, seed = (double)cfg->faults.seed;
    cc_am_faults *f = &cfg->faults;
    int bad = cc_am_env_double("CC_AM_PACKET", 256, 65000, &packet, err, errlen) ||
              cc_am_env_int("CC_AM_CHUNK_PACKETS", 1, CC_AM_MAX_CHUNK_PACKETS, &cfg->chunk_packets,
                            err, errlen) ||
              cc_am_env_int("CC_AM_CHUNKS_IN_FLIGHT", 1, 16, &cfg->chunks_in_flight, err, errlen) ||
              cc_am_env_int("CC_AM_REQUEST_WINDOW", 4, 4096, &cfg->request_window, err, errlen) ||
              cc_am_env_int("CC_AM_REPLY_WINDOW", 4, 8192, &cfg->reply_window, err, errlen) ||
              cc_am_env_double("CC_AM_KEEPALIVE_US", 10, 1e7, &cfg->keepalive_us, err, errlen) ||
              cc_am_env_double("CC_AM_DEAD_AFTER", 0.01, 1e5, &cfg->dead_after_s, err, errlen) ||
              cc_am_env_double("CC_AM_YIELD_AFTER_US", 0, 1e7, &cfg->yield_after_us, err, errlen) ||
              cc_am_env_int("CC_AM_SOCKET_BUFFER", 4096, 1 << 30, &cfg->socket_buffer, err, errlen) ||
              cc_am_env_double("CC_AM_LOSS", 0, 0.9, &f->loss, err, errlen) ||
              cc_am_env_double("CC_AM_DUP", 0, 0.9, &f->dup, err, errlen) ||
              cc_am_env_double("CC_AM_REORDER", 0, 0.9, &f->reorder, err, errlen) ||
              cc_am_env_double("CC_AM_DELAY", 0, 0.9, &f->delay, err, errlen) ||
              cc_am_env_double("CC_AM_DELAY_US", 0, 1e6, &f->delay_us, err, errlen) ||
              cc_am_env_double("CC_AM_SEED", 0, 9007199254740992.0, &seed, err, errlen);
    if (bad) return CC_AM_EARG;
    cfg->packet_bytes = (size_t)packet;
    f->seed = (uint64_t)seed;
    return CC_AM_OK;
}
