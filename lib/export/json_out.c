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

void jsonw_str_body(FILE *f, const char *str, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    size_t run = 0; /* start of the pending run of bytes copied verbatim */
    size_t i = 0;

    while (i < n) {
        unsigned char c = s[i];
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
            fwrite(s + run, 1, i - run, f);
        switch (c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default:
            if (c < 0x20) {
                char esc[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
                fputs(esc, f);
            } else {
                fputs("\\ufffd", f); /* a byte of malformed UTF-8 */
            }
            break;
        }
        i++;
        run = i;
    }
    if (i > run)
        fwrite(s + run, 1, i - run, f);
}

void jsonw_strn(FILE *f, const char *s, size_t n)
{
    putc('"', f);
    jsonw_str_body(f, s, n);
    putc('"', f);
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
    fwrite(p, 1, (size_t)(buf + sizeof buf - p), f);
}

void jsonw_i64(FILE *f, int64_t v)
{
    if (v < 0) {
        putc('-', f);
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
    fwrite(p, 1, (size_t)(end - p), f);
}

void jsonw_double(FILE *f, double v)
{
    char buf[40];

    if (!isfinite(v)) {
        fputs("null", f);
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
    fputs(buf, f);
}
