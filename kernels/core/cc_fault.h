/* Fault injection for tests: COMMCHAR_INJECT_FAULT=KIND@op[:variant]:n, read
 * once at start. */
#ifndef CC_FAULT_H
#define CC_FAULT_H

#include <stddef.h>

/* late: under --sync window the last rank starts every fourth timed repetition
 * half a window late (the point's late and redone counts show it) */
typedef enum { CC_FAULT_NONE, CC_FAULT_HANG, CC_FAULT_CRASH, CC_FAULT_CORRUPT, CC_FAULT_LATE } cc_fault_kind;

typedef struct cc_fault {
    cc_fault_kind kind;
    char op[32], variant[32];
    size_t n;
    char text[128]; /* as given, for the header */
} cc_fault;

/* 0, or -1 with err set when the variable is malformed */
int cc_fault_read(cc_fault *fault, char *err, size_t errlen);
/* the fault to inject at this point (CC_FAULT_NONE almost always) */
cc_fault_kind cc_fault_at(const cc_fault *fault, const char *op, const char *variant, size_t n);

#endif
