/* The four kinds of output line (docs/kernel-protocol.md), rank 0 only. */
#ifndef CC_REPORT_H
#define CC_REPORT_H

#include "cc_fault.h"
#include "cc_measure.h"

/* every rank calls this (the host names are gathered); rank 0 prints */
void cc_report_header(const cc_env *env, const cc_fault *fault);
void cc_report_begin(cc_buf *out, const cc_point *pt);
void cc_report_point(cc_buf *out, const cc_point *pt, const cc_series *s, int valid, const char *error,
                     double wall_s, const cc_buf *extra);
/* --sync window: the point's window, clock round trip, late and redone
 * repetitions, as one "sync_window" object inside extra */
void cc_report_window(cc_buf *extra, const cc_series *s);
/* a point the library cannot measure (cc_op.unsupported): its identity and why */
void cc_report_unsupported(cc_buf *out, const cc_point *pt, const char *why);
void cc_report_end(cc_buf *out, size_t points, double wall_s);

#endif
