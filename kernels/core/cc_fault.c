#include "cc_fault.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cc_op.h"

#define CC_FAULT_ENV "COMMCHAR_INJECT_FAULT"

int cc_fault_read(cc_fault *fault, char *err, size_t errlen)
{
    memset(fault, 0, sizeof *fault);
    const char *spec = getenv(CC_FAULT_ENV);
    if (!spec || !*spec) return 0;
    snprintf(fault->text, sizeof fault->text, "%s", spec);

    char copy[128];
    snprintf(copy, sizeof copy, "%s", spec);
    char *at = strchr(copy, '@'), *last = strrchr(copy, ':');
    if (!at || !last || last < at) goto malformed;
    *at = '\0';
    *last = '\0';
    if (strcmp(copy, "hang") == 0)
        fault->kind = CC_FAULT_HANG;
    else if (strcmp(copy, "crash") == 0)
        fault->kind = CC_FAULT_CRASH;
    else if (strcmp(copy, "corrupt") == 0)
        fault->kind = CC_FAULT_CORRUPT;
    else if (strcmp(copy, "late") == 0)
        fault->kind = CC_FAULT_LATE;
    else
        goto malformed;
    const char *size = last + 1;
    if (!*size) goto malformed;
    for (const char *c = size; *c; c++)
        if (!isdigit((unsigned char)*c)) goto malformed;
    fault->n = (size_t)strtoull(size, NULL, 10);
    char *op = at + 1, *colon = strchr(op, ':');
    if (colon) {
        *colon = '\0';
        snprintf(fault->variant, sizeof fault->variant, "%s", colon + 1);
    }
    snprintf(fault->op, sizeof fault->op, "%s", op);
    const cc_op *known = cc_op_find(fault->op);
    if (!known || cc_op_variant(known, fault->variant) < 0) {
        snprintf(err, errlen, "%s: no operation %s%s%s", CC_FAULT_ENV, fault->op,
                 fault->variant[0] ? ":" : "", fault->variant);
        return -1;
    }
    return 0;

malformed:
    snprintf(err, errlen, "%s='%s' is not KIND@op[:variant]:n with KIND hang, crash, corrupt or late",
             CC_FAULT_ENV, spec);
    return -1;
}

cc_fault_kind cc_fault_at(const cc_fault *fault, const char *op, const char *variant, size_t n)
{
    if (fault->kind == CC_FAULT_NONE) return CC_FAULT_NONE;
    if (fault->n != n || strcmp(fault->op, op) != 0 || strcmp(fault->variant, variant) != 0)
        return CC_FAULT_NONE;
    return fault->kind;
}
