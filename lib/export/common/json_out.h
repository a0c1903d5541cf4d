/*
 * lib/export/common/json_out.h — a small buffered JSON emitter shared by the
 * JSON exporters (speedscope, Chrome trace, GPU views).
 *
 * A jsonw collects output in its own 256 KiB buffer and hands it to a
 * stdio stream in whole blocks.  Exporters write millions of small
 * pieces (a Chrome slice is ten of them); going through stdio for each
 * costs more than formatting them, and small write(2) calls cost more
 * in the kernel than large ones.  Structure (braces, commas, keys) is the
 * caller's job; these functions write the values that are easy to get
 * wrong: strings (RFC 8259 escaping, UTF-8 passed through, invalid UTF-8
 * replaced by U+FFFD so the output is always valid JSON text) and numbers
 * (integers exactly, doubles so that they parse back to the same value).
 *
 * Errors.  Write errors are left in the stream (ferror); the caller
 * checks once after jsonw_flush.  Only jsonw_open can fail (memory).
 */
#ifndef TRC_LIB_EXPORT_JSON_OUT_H
#define TRC_LIB_EXPORT_JSON_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A block of this many bytes always fits after jsonw_space(). */
#define JSONW_SPACE_MAX 4096u

typedef struct jsonw {
    char *p;    /* next free byte */
    char *end;  /* end of the buffer */
    char *buf;  /* start of the buffer (owned) */
    FILE *f;    /* borrowed */
} jsonw;

/* Bind w to f with a new buffer.  0, or -1 when out of memory (w is then
 * unusable: jsonw_close is still safe).  Release with jsonw_close. */
int jsonw_open(jsonw *w, FILE *f);

/* Hand the buffered bytes to the stream (fwrite; errors stay in ferror). */
void jsonw_flush(jsonw *w);

/* Flush and free the buffer; the stream is not closed.  Safe on a w that
 * was zeroed or whose open failed. */
void jsonw_close(jsonw *w);

/* Free the buffer WITHOUT writing what it holds (the stream may be gone:
 * an output being discarded).  Safe on a zeroed w. */
void jsonw_free(jsonw *w);

/* Slow paths of the inline functions below. */
void jsonw_drain(jsonw *w);
void jsonw_bytes_slow(jsonw *w, const void *p, size_t n);

/* memcpy for the short pieces of text an exporter copies per event
 * (names, ids): fixed-size moves the compiler turns into a few vector
 * loads and stores, where a libc call per piece would cost more than the
 * copy.  Reads and writes exactly s[0..n) and d[0..n). */
static inline void jsonw_copy(char *d, const char *s, size_t n)
{
    if (n >= 16 && n <= 32) {
        memcpy(d, s, 16);
        memcpy(d + n - 16, s + n - 16, 16);
    } else if (n > 32 && n <= 64) {
        memcpy(d, s, 32);
        memcpy(d + n - 32, s + n - 32, 32);
    } else if (n >= 8 && n < 16) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4 && n < 8) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else if (n < 4) {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    } else {
        memcpy(d, s, n);
    }
}

/* At least n (<= JSONW_SPACE_MAX) free bytes at the returned pointer;
 * the caller writes there and advances w->p past what it wrote. */
static inline char *jsonw_space(jsonw *w, size_t n)
{
    if ((size_t)(w->end - w->p) < n)
        jsonw_drain(w);
    return w->p;
}

/* A literal piece of JSON text (punctuation, keys known to need no
 * escaping), one byte, or n bytes. */
static inline void jsonw_bytes(jsonw *w, const void *p, size_t n)
{
    if ((size_t)(w->end - w->p) >= n) {
        memcpy(w->p, p, n);
        w->p += n;
    } else {
        jsonw_bytes_slow(w, p, n);
    }
}

static inline void jsonw_raw(jsonw *w, const char *text)
{
    jsonw_bytes(w, text, strlen(text));
}

static inline void jsonw_putc(jsonw *w, char c)
{
    if (w->p == w->end)
        jsonw_drain(w);
    *w->p++ = c;
}

/* Write s (NUL-terminated; NULL is written as "") as a quoted JSON string. */
void jsonw_str(jsonw *w, const char *s);

/* Same for n bytes of s (which may contain NUL bytes: written as \u0000). */
void jsonw_strn(jsonw *w, const char *s, size_t n);

/* Write the bytes of s inside an already opened string: escaped like
 * jsonw_strn, no quotes.  For names built from several pieces. */
void jsonw_str_body(jsonw *w, const char *s, size_t n);

/* The escaped body of s[0..n) in memory, as jsonw_str_body writes it:
 * at most 6 * n bytes go to dst (no quotes, no NUL).  Returns the length.
 * For text built once and written many times. */
size_t jsonw_escape(char *dst, const char *s, size_t n);

/* v in decimal into dst (at most 20 bytes, no NUL); returns the length. */
size_t jsonw_fmt_i64(char *dst, int64_t v);

/* The same written at dst (at most 20 bytes, no NUL); returns the byte
 * after the last digit.  For writers that fill one jsonw_space() block. */
char *jsonw_put_u64(char *dst, uint64_t v);
char *jsonw_put_i64(char *dst, int64_t v);

/* ns / 1000 with exactly three decimals ("-12.345") into dst (at most 22
 * bytes, no NUL); returns the length. */
size_t jsonw_fmt_us3(char *dst, int64_t ns);

/* jsonw_double's text into dst (at most 32 bytes, no NUL); returns the
 * length. */
size_t jsonw_fmt_double(char *dst, double v);

/* Integers, in decimal. */
void jsonw_u64(jsonw *w, uint64_t v);
void jsonw_i64(jsonw *w, int64_t v);

/* A double that parses back (strtod / JSON.parse) to exactly v, in the
 * shortest of %.15g/%.16g/%.17g that does; NaN and infinities (which JSON
 * cannot hold) are written as null. */
void jsonw_double(jsonw *w, double v);

/* ns / 1000 with exactly three decimals ("-12.345"): a nanosecond count
 * shown in microseconds, exact (no double rounding involved). */
static inline void jsonw_us3(jsonw *w, int64_t ns)
{
    char *p = jsonw_space(w, 24);
    w->p = p + jsonw_fmt_us3(p, ns);
}

#endif /* TRC_LIB_EXPORT_JSON_OUT_H */
