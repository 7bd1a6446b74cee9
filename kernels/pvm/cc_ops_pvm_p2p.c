/* PVM point to point between ranks 0 and 1, on the one timing loop.
 *
 *   pvm_pingpong  half a round trip of n bytes:
 *                 psend    pvm_psend / pvm_precv (no message buffer)
 *                 default  pvm_send / pvm_recv + pvm_upkbyte, packed with PvmDataDefault (XDR)
 *                 raw      the same, packed with PvmDataRaw
 *                 inplace  the same, packed with PvmDataInPlace (data copied at send)
 *                 Packing (pvm_initsend + pvm_pkbyte) is done before the timed
 *                 region, once per repetition: pvm_pack measures it apart, as
 *                 the AP3000 study did; the user pays pvm_pack + pvm_pingpong.
 *   pvm_pack      pvm_initsend + pvm_pkbyte of n bytes on rank 0 alone. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_measure.h"
#include "cc_op_data.h"
#include "cc_ops_pvm.h"
#include "cc_pvm.h"
#include "cc_verify.h"

enum { CC_PVM_PSEND, CC_PVM_DEFAULT, CC_PVM_RAW, CC_PVM_INPLACE };
static const char *const cc_pingpong_variants[] = {"psend", "default", "raw", "inplace", NULL};
static const char *const cc_pack_variants[] = {"default", "raw", "inplace", NULL};

/* PVM's encoding for a pvm_pingpong variant (not psend) or a pvm_pack one */
static int cc_encoding(const cc_point *pt)
{
    static const int by_pingpong[] = {0, PvmDataDefault, PvmDataRaw, PvmDataInPlace};
    static const int by_pack[] = {PvmDataDefault, PvmDataRaw, PvmDataInPlace};
    return pt->op == &cc_op_pvm_pack ? by_pack[pt->variant] : by_pingpong[pt->variant];
}

static const char *cc_pair_check_size(size_t n, int p, int variant, char *why, size_t whylen)
{
    (void)variant;
    if (p < 2) {
        snprintf(why, whylen, "needs at least 2 processes");
        return why;
    }
    if (n > INT_MAX) {
        snprintf(why, whylen, "%zu bytes is more than one PVM message can carry", n);
        return why;
    }
    return NULL;
}

static int cc_peer_tid;

static void cc_pvm_p2p_setup(cc_point *pt)
{
    const int *tids = cc_pvm_participants(pt);
    cc_peer_tid = tids[1 - pt->rank];
    cc_pair_buffers(pt);
}

static void cc_pvm_p2p_cleanup(cc_point *pt)
{
    cc_buffer_free(pt, pt->sbuf);
    cc_buffer_free(pt, pt->rbuf);
    pt->sbuf = pt->rbuf = NULL;
}

/* the message each rank sends, packed: the active send buffer can be sent any
 * number of times, so one packing serves a whole batch */
static void cc_pack(const cc_point *pt)
{
    CC_PVM(pvm_initsend(cc_encoding(pt)));
    CC_PVM(pvm_pkbyte((char *)pt->sbuf, (int)pt->n, 1));
}

static void cc_pingpong_before(cc_point *pt)
{
    if (pt->variant != CC_PVM_PSEND) cc_pack(pt);
}

static void cc_psend(const cc_point *pt, int tag)
{
    CC_PVM(pvm_psend(cc_peer_tid, tag, pt->sbuf, (int)pt->n, PVM_BYTE));
}

static void cc_precv(cc_point *pt, int tag)
{
    int from = 0, got_tag = 0, got = 0;
    CC_PVM(pvm_precv(cc_peer_tid, tag, pt->rbuf, (int)pt->n, PVM_BYTE, &from, &got_tag, &got));
    if (got != (int)pt->n) cc_die("pvm: pvm_precv got %d bytes, expected %zu", got, pt->n);
}

static void cc_send(int tag)
{
    CC_PVM(pvm_send(cc_peer_tid, tag));
}

static void cc_recv(cc_point *pt, int tag)
{
    CC_PVM(pvm_recv(cc_peer_tid, tag));
    CC_PVM(pvm_upkbyte((char *)pt->rbuf, (int)pt->n, 1));
}

static void cc_pingpong_run(cc_point *pt, long count)
{
    const int psend = pt->variant == CC_PVM_PSEND;
    for (long k = 0; k < count; k++) {
        if (pt->rank == 0) {
            if (psend) {
                cc_psend(pt, CC_PVM_TAG_DATA);
                cc_precv(pt, CC_PVM_TAG_REPLY);
            } else {
                cc_send(CC_PVM_TAG_DATA);
                cc_recv(pt, CC_PVM_TAG_REPLY);
            }
        } else {
            if (psend) {
                cc_precv(pt, CC_PVM_TAG_DATA);
                cc_psend(pt, CC_PVM_TAG_REPLY);
            } else {
                cc_recv(pt, CC_PVM_TAG_DATA);
                cc_send(CC_PVM_TAG_REPLY);
            }
        }
    }
}

const cc_op cc_op_pvm_pingpong = {
    .name = "pvm_pingpong", .variants = cc_pingpong_variants, .scope = CC_SCOPE_PAIR, .phases = 1,
    .check_size = cc_pair_check_size, .setup = cc_pvm_p2p_setup, .before = cc_pingpong_before,
    .run = cc_pingpong_run, .fill = cc_pair_fill, .check = cc_pair_check,
    .extra = cc_pvm_extra, .cleanup = cc_pvm_p2p_cleanup,
};

/* ---- pvm_pack -------------------------------------------------------------- */

static void cc_pack_run(cc_point *pt, long count)
{
    if (pt->rank != 0) return;
    for (long k = 0; k < count; k++) cc_pack(pt);
}

/* rank 0 unpacks what it packed (sent to itself): the packed message holds the data */
static void cc_pack_fill(cc_point *pt)
{
    cc_fill_bytes(pt->sbuf, pt->n, pt->rank, 0, pt->seed);
    cc_poison_bytes(pt->rbuf, pt->n, pt->rank, 0, pt->seed);
}

static int cc_pack_check(const cc_point *pt, char *err, size_t errlen)
{
    if (pt->rank != 0) return 0;
    int me = pvm_mytid();
    CC_PVM(pvm_send(me, CC_PVM_TAG_SELF));
    CC_PVM(pvm_recv(me, CC_PVM_TAG_SELF));
    CC_PVM(pvm_upkbyte((char *)pt->rbuf, (int)pt->n, 1));
    return cc_check_bytes(pt->rbuf, pt->n, 0, 0, pt->seed, 0, 0, err, errlen);
}

static void cc_pack_setup(cc_point *pt)
{
    cc_pvm_p2p_setup(pt);
    pt->scale = 1.0;
}

const cc_op cc_op_pvm_pack = {
    .name = "pvm_pack", .variants = cc_pack_variants, .scope = CC_SCOPE_PAIR, .phases = 1,
    .check_size = cc_pair_check_size, .setup = cc_pack_setup, .run = cc_pack_run,
    .fill = cc_pack_fill, .check = cc_pack_check, .extra = cc_pvm_extra, .cleanup = cc_pvm_p2p_cleanup,
};
