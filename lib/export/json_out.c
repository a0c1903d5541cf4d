/*
 * lib/export/json_out.c — streaming JSON value emitter (see json_out.h).
 *
 * Strings follow RFC 8259 §7: '"' and '\' are escaped, control bytes
 * below 0x20 become \n, \t, ... or \u00XX, DEL passes through.  Bytes of
 * well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
 * above U+10FFFF) are copied unchanged; every byte that does not start a
 * well-formed sequence is replaced by U+FFFD, because a trace may hold
 * names read from another process's memory and the output must still be
 * valid JSON for strict parsers.
 */
#include "lib/export/json_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Length of the well-formed UTF-8 sequence at s[0..n), or 0 if the bytes
 * there are not one (s[0] >= 0x80 assumed). */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the 2nd byte */

    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;           /* no overlong 3-byte forms */
        else if (c == 0xED)
            hi = 0x9F;           /* no UTF-16 surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;           /* no overlong 4-byte forms */
        else if (c == 0xF4)
            hi = 0x8F;           /* nothing above U+10FFFF */
    } else {
        return 0;                /* continuation byte, C0/C1, F5..FF */
    }
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return len;
}

/* Escape s[0..n) (see the top comment), handing the output to emit in
 * pieces: verbatim runs straight from s, escapes from a small buffer. */
typedef void (*emit_fn)(void *ctx, const void *p, size_t n);

static void escape(const char *str, size_t n, emit_fn emit, void *ctx)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    size_t run = 0; /* start of the pending run of bytes copied verbatim */
    size_t i = 0;

    while (i < n) {
        unsigned char c = s[i];
        char esc[7] = {'\\', 0, 0, 0, 0, 0, 0};
        size_t elen = 2;
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0x80) {
            size_t len = utf8_seq_len(s + i, n - i);
            if (len) {
                i += len;
                continue;
            }
        }
        if (i > run)
            emit(ctx, s + run, i - run);
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        default:
            /* a control byte, or a byte of malformed UTF-8 -> U+FFFD */
            memcpy(esc + 1, c < 0x20 ? "u00" : "ufffd", c < 0x20 ? 3 : 5);
            if (c < 0x20) {
                esc[4] = hex[c >> 4];
                esc[5] = hex[c & 15];
            }
            elen = 6;
            break;
        }
        emit(ctx, esc, elen);
        i++;
        run = i;
    }
    if (i > run)
        emit(ctx, s + run, i - run);
}

static void emit_file(void *ctx, const void *p, size_t n)
{
    jsonw_bytes(ctx, p, n);
}

void jsonw_str_body(FILE *f, const char *s, size_t n)
{
    escape(s, n, emit_file, f);
}

static void emit_mem(void *ctx, const void *p, size_t n)
{
    char **dst = ctx;
    memcpy(*dst, p, n);
    *dst += n;
}

size_t jsonw_escape(char *dst, const char *s, size_t n)
{
    char *p = dst;
    escape(s, n, emit_mem, &p);
    return (size_t)(p - dst);
}

void jsonw_strn(FILE *f, const char *s, size_t n)
{
    jsonw_putc(f, '"');
    jsonw_str_body(f, s, n);
    jsonw_putc(f, '"');
}

void jsonw_str(FILE *f, const char *s)
{
    if (!s)
        s = "";
    jsonw_strn(f, s, strlen(s));
}

/* Digits of v into the end of buf; returns the start. */
static char *u64_digits(char *end, uint64_t v)
{
    char *p = end;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return p;
}

void jsonw_u64(FILE *f, uint64_t v)
{
    char buf[24];
    char *p = u64_digits(buf + sizeof buf, v);
    jsonw_bytes(f, p, (size_t)(buf + sizeof buf - p));
}

size_t jsonw_fmt_i64(char *dst, int64_t v)
{
    char buf[24];
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    char *p = u64_digits(buf + sizeof buf, mag);
    size_t n;
    if (v < 0)
        *--p = '-';
    n = (size_t)(buf + sizeof buf - p);
    memcpy(dst, p, n);
    return n;
}

void jsonw_i64(FILE *f, int64_t v)
{
    if (v < 0) {
        jsonw_putc(f, '-');
        jsonw_u64(f, (uint64_t)0 - (uint64_t)v); /* also right for INT64_MIN */
    } else {
        jsonw_u64(f, (uint64_t)v);
    }
}

void jsonw_us3(FILE *f, int64_t ns)
{
    uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    char buf[32];
    char *end = buf + sizeof buf;
    char *p = end;
    uint64_t frac = mag % 1000;

    *--p = (char)('0' + frac % 10);
    *--p = (char)('0' + frac / 10 % 10);
    *--p = (char)('0' + frac / 100);
    *--p = '.';
    p = u64_digits(p, mag / 1000);
    if (ns < 0)
        *--p = '-';
    jsonw_bytes(f, p, (size_t)(end - p));
}

void jsonw_double(FILE *f, double v)
{
    char buf[40];

    if (!isfinite(v)) {
        jsonw_raw(f, "null");
        return;
    }
    if (v == (double)(int64_t)v && fabs(v) < 9007199254740992.0) {
        jsonw_i64(f, (int64_t)v); /* exact integers without exponent or ".0" */
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (prec == 17 || strtod(buf, NULL) == v)
            break;
    }
    jsonw_raw(f, buf);
}
