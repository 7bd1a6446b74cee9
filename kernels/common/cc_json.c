#include "cc_json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cc_buf_init(cc_buf *b)
{
    b->cap = 4096;
    b->len = 0;
    b->data = cc_xmalloc(b->cap);
    b->data[0] = '\0';
}

void cc_buf_free(cc_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

static void cc_buf_reserve(cc_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap;
    while (b->len + extra + 1 > cap) cap *= 2;
    b->data = cc_xrealloc(b->data, cap);
    b->cap = cap;
}

void cc_buf_append(cc_buf *b, const char *text, size_t len)
{
    cc_buf_reserve(b, len);
    memcpy(b->data + b->len, text, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void cc_buf_printf(cc_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (need < 0) cc_die("formatting output failed");
    if ((size_t)need >= b->cap - b->len) {
        cc_buf_reserve(b, (size_t)need);
        va_start(ap, fmt);
        vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)need;
}

void cc_buf_str(cc_buf *b, const char *s)
{
    cc_buf_append(b, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        switch (*c) {
        case '"': cc_buf_append(b, "\\\"", 2); break;
        case '\\': cc_buf_append(b, "\\\\", 2); break;
        case '\n': cc_buf_append(b, "\\n", 2); break;
        case '\t': cc_buf_append(b, "\\t", 2); break;
        case '\r': cc_buf_append(b, "\\r", 2); break;
        default:
            if (*c < 0x20)
                cc_buf_printf(b, "\\u%04x", *c);
            else
                cc_buf_append(b, (const char *)c, 1);
        }
    }
    cc_buf_append(b, "\"", 1);
}

void cc_buf_key(cc_buf *b, const char *key)
{
    if (b->len > 0 && b->data[b->len - 1] != '{') cc_buf_append(b, ",", 1);
    cc_buf_str(b, key);
    cc_buf_append(b, ":", 1);
}

void cc_buf_num(cc_buf *b, double v)
{
    if (isfinite(v))
        cc_buf_printf(b, "%.9g", v);
    else
        cc_buf_append(b, "null", 4);
}

void cc_buf_bool(cc_buf *b, int v)
{
    if (v)
        cc_buf_append(b, "true", 4);
    else
        cc_buf_append(b, "false", 5);
}

void cc_buf_emit(cc_buf *b)
{
    cc_buf_append(b, "\n", 1);
    fwrite(b->data, 1, b->len, stdout);
    fflush(stdout);
    b->len = 0;
    b->data[0] = '\0';
}
