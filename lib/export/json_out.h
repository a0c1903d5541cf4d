/*
 * lib/export/json_out.h — a small streaming JSON emitter shared by the
 * JSON exporters (speedscope, Chrome trace, GPU views).
 *
 * The emitter writes straight to a stdio stream; it keeps no state and
 * never allocates.  Structure (braces, commas, keys) is the caller's job;
 * these functions write the values that are easy to get wrong: strings
 * (RFC 8259 escaping, UTF-8 passed through, invalid UTF-8 replaced by
 * U+FFFD so the output is always valid JSON text) and numbers (integers
 * exactly, doubles so that they parse back to the same value).
 *
 * Errors.  Write errors are left in the stream (ferror); the caller checks
 * once at the end.  None of these functions fails otherwise.
 */
#ifndef TRC_LIB_EXPORT_JSON_OUT_H
#define TRC_LIB_EXPORT_JSON_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Write s (NUL-terminated; NULL is written as "") as a quoted JSON string. */
void jsonw_str(FILE *f, const char *s);

/* Same for n bytes of s (which may contain NUL bytes: written as \u0000). */
void jsonw_strn(FILE *f, const char *s, size_t n);

/* Write the bytes of s inside an already opened string: escaped like
 * jsonw_strn, no quotes.  For names built from several pieces. */
void jsonw_str_body(FILE *f, const char *s, size_t n);

/* The escaped body of s[0..n) in memory, as jsonw_str_body writes it:
 * at most 6 * n bytes go to dst (no quotes, no NUL).  Returns the length.
 * For text built once and written many times. */
size_t jsonw_escape(char *dst, const char *s, size_t n);

/* v in decimal into dst (at most 20 bytes, no NUL); returns the length. */
size_t jsonw_fmt_i64(char *dst, int64_t v);

/* Integers, in decimal. */
void jsonw_u64(FILE *f, uint64_t v);
void jsonw_i64(FILE *f, int64_t v);

/* A double that parses back (strtod / JSON.parse) to exactly v, in the
 * shortest of %.15g/%.16g/%.17g that does; NaN and infinities (which JSON
 * cannot hold) are written as null. */
void jsonw_double(FILE *f, double v);

/* ns / 1000 with exactly three decimals ("-12.345"): a nanosecond count
 * shown in microseconds, exact (no double rounding involved). */
void jsonw_us3(FILE *f, int64_t ns);

/* A literal piece of JSON text (punctuation, keys known to need no
 * escaping), one byte, or n bytes.  Exporters write through these (and
 * the functions above) only: they use the unlocked stdio calls, as an
 * exporter's stream belongs to one thread, which halves the cost of
 * writing many small pieces. */
static inline void jsonw_raw(FILE *f, const char *text) { fputs_unlocked(text, f); }
static inline void jsonw_putc(FILE *f, char c) { putc_unlocked(c, f); }
static inline void jsonw_bytes(FILE *f, const void *p, size_t n) { fwrite_unlocked(p, 1, n, f); }

#endif /* TRC_LIB_EXPORT_JSON_OUT_H */
