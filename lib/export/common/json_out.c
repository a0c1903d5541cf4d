/*
 * lib/export/common/json_out.c — buffered JSON value emitter (see json_out.h).
 *
 * Strings follow RFC 8259 §7: '"' and '\' are escaped, control bytes
 * below 0x20 become \n, \t, ... or \u00XX, DEL passes through.  Bytes of
 * well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
 * above U+10FFFF) are copied unchanged; every byte that does not start a
 * well-formed sequence is replaced by U+FFFD, because a trace may hold
 * names read from another process's memory and the output must still be
 * valid JSON for strict parsers.
 */
#include "lib/export/common/json_out.h"

#include "lib/util/alloc.h"

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

#define JSONW_BUF_SIZE (256u * 1024u)

int jsonw_open(jsonw *w, FILE *f)
{
    w->buf = trc_malloc(JSONW_BUF_SIZE);
    w->f = f;
    w->p = w->buf;
    w->end = w->buf ? w->buf + JSONW_BUF_SIZE : NULL;
    return w->buf ? 0 : -1;
}

void jsonw_flush(jsonw *w)
{
    if (w->p > w->buf)
        fwrite_unlocked(w->buf, 1, (size_t)(w->p - w->buf), w->f);
    w->p = w->buf;
}

void jsonw_close(jsonw *w)
{
    if (w->buf)
        jsonw_flush(w);
    trc_free(w->buf);
    w->buf = w->p = w->end = NULL;
}

void jsonw_free(jsonw *w)
{
    trc_free(w->buf);
    w->buf = w->p = w->end = NULL;
}

void jsonw_drain(jsonw *w)
{
    jsonw_flush(w);
}

void jsonw_bytes_slow(jsonw *w, const void *p, size_t n)
{
    jsonw_flush(w);
    if (n >= JSONW_BUF_SIZE / 2) {
        fwrite_unlocked(p, 1, n, w->f); /* big pieces skip the copy */
        return;
    }
    memcpy(w->p, p, n);
    w->p += n;
}

static void emit_w(void *ctx, const void *p, size_t n)
{
    jsonw_bytes(ctx, p, n);
}

void jsonw_str_body(jsonw *w, const char *s, size_t n)
{
    escape(s, n, emit_w, w);
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

void jsonw_strn(jsonw *w, const char *s, size_t n)
{
    jsonw_putc(w, '"');
    jsonw_str_body(w, s, n);
    jsonw_putc(w, '"');
}

void jsonw_str(jsonw *w, const char *s)
{
    if (!s)
        s = "";
    jsonw_strn(w, s, strlen(s));
}

/* Two decimal digits per step: the division is the cost of formatting. */
static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Digits of v ending just before end; returns the first.  Four digits
 * per division of v: the chain of divisions is the cost, the splits of
 * each group into pairs run beside it. */
static char *u64_digits(char *end, uint64_t v)
{
    char *p = end;
    unsigned x;

    while (v >= 10000) {
        uint64_t q = v / 10000;
        unsigned r = (unsigned)(v - q * 10000);
        p -= 4;
        memcpy(p, digit_pairs + 2 * (r / 100), 2);
        memcpy(p + 2, digit_pairs + 2 * (r % 100), 2);
        v = q;
    }
    x = (unsigned)v;
    if (x >= 100) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * (x % 100), 2);
        x /= 100;
    }
    if (x >= 10) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * x, 2);
    } else {
        *--p = (char)('0' + x);
    }
    return p;
}

static const uint64_t pow10_tab[20] = {
    UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000), UINT64_C(10000),
    UINT64_C(100000), UINT64_C(1000000), UINT64_C(10000000), UINT64_C(100000000),
    UINT64_C(1000000000), UINT64_C(10000000000), UINT64_C(100000000000),
    UINT64_C(1000000000000), UINT64_C(10000000000000), UINT64_C(100000000000000),
    UINT64_C(1000000000000000), UINT64_C(10000000000000000), UINT64_C(100000000000000000),
    UINT64_C(1000000000000000000), UINT64_C(10000000000000000000)};

/* Number of decimal digits of v (1 for 0), without dividing: t, the bit
 * length times log10(2) (1233 / 4096), is one less than the digit count
 * or equal to it.
 * (v | 1 counts 0 as 1; it changes no other answer, 10^t being even.) */
static size_t u64_len(uint64_t v)
{
    unsigned t = (unsigned)((64 - __builtin_clzll(v | 1)) * 1233) >> 12;
    return t + 1 - ((v | 1) < pow10_tab[t]);
}

char *jsonw_put_u64(char *dst, uint64_t v)
{
    char *end = dst + u64_len(v);
    u64_digits(end, v); /* in place: no copy from a scratch buffer */
    return end;
}

char *jsonw_put_i64(char *dst, int64_t v)
{
    if (v < 0) {
        *dst++ = '-';
        return jsonw_put_u64(dst, (uint64_t)0 - (uint64_t)v); /* right for INT64_MIN too */
    }
    return jsonw_put_u64(dst, (uint64_t)v);
}

size_t jsonw_fmt_i64(char *dst, int64_t v)
{
    return (size_t)(jsonw_put_i64(dst, v) - dst);
}

size_t jsonw_fmt_us3(char *dst, int64_t ns)
{
    uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    uint64_t whole = mag / 1000;
    unsigned frac = (unsigned)(mag - whole * 1000);
    size_t n = (ns < 0) + u64_len(whole) + 4;
    char *p = dst + n;

    /* Written in place from the end: this runs twice per Chrome slice. */
    *--p = (char)('0' + frac % 10);
    frac /= 10;
    *--p = digit_pairs[frac * 2 + 1];
    *--p = digit_pairs[frac * 2];
    *--p = '.';
    u64_digits(p, whole);
    if (ns < 0)
        dst[0] = '-';
    return n;
}

void jsonw_u64(jsonw *w, uint64_t v)
{
    w->p = jsonw_put_u64(jsonw_space(w, 24), v);
}

void jsonw_i64(jsonw *w, int64_t v)
{
    w->p = jsonw_put_i64(jsonw_space(w, 24), v);
}

size_t jsonw_fmt_double(char *dst, double v)
{
    char buf[40];
    size_t n;

    if (!isfinite(v)) {
        memcpy(dst, "null", 4);
        return 4;
    }
    if (fabs(v) < 9007199254740992.0 && v == (double)(int64_t)v) /* range first: the cast of a larger double is UB */
        return jsonw_fmt_i64(dst, (int64_t)v); /* exact integers without exponent or ".0" */
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (prec == 17 || strtod(buf, NULL) == v)
            break;
    }
    n = strlen(buf); /* "%.17g" of a double: at most 24 bytes */
    memcpy(dst, buf, n);
    return n;
}

void jsonw_double(jsonw *w, double v)
{
    char *p = jsonw_space(w, 32);
    w->p = p + jsonw_fmt_double(p, v);
}
