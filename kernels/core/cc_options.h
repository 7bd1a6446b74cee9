/* Command line and plan: parsed identically on every rank, so all ranks agree
 * on what to measure (and on rejecting it) without talking to each other. */
#ifndef CC_OPTIONS_H
#define CC_OPTIONS_H

#include <stddef.h>

#include "cc_settings.h"

typedef enum { CC_PARSE_OK, CC_PARSE_HELP, CC_PARSE_ERROR } cc_parse_status;

/* p: the number of processes, to reject sizes an operation cannot use */
cc_parse_status cc_options_parse(int argc, char **argv, int p, cc_options *opt, char *err,
                                 size_t errlen);
void cc_options_free(cc_options *opt);
extern const char cc_usage[];

#endif
