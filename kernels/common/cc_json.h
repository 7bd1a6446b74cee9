/* JSON Lines output on rank 0's stdout: a growable line buffer, JSON string
 * escaping, numbers in %.9g, and one flushed line per emit. */
#ifndef CC_JSON_H
#define CC_JSON_H

#include <stddef.h>

#include "cc_errors.h"

typedef struct cc_buf {
    char *data;
    size_t len, cap;
} cc_buf;

void cc_buf_init(cc_buf *b);
void cc_buf_free(cc_buf *b);
void cc_buf_printf(cc_buf *b, const char *fmt, ...) CC_PRINTF(2, 3);
void cc_buf_append(cc_buf *b, const char *text, size_t len);
/* a JSON string literal, quotes included */
void cc_buf_str(cc_buf *b, const char *s);
/* ,"key": (the comma only when the object already has a member) */
void cc_buf_key(cc_buf *b, const char *key);
/* %.9g, or null when not finite */
void cc_buf_num(cc_buf *b, double v);
void cc_buf_bool(cc_buf *b, int v);
/* write the buffer as one line on stdout, flush, and empty the buffer */
void cc_buf_emit(cc_buf *b);

#endif
