/*
 * format/varint.h — primitive encodings of spec/DESIGN-NOTES.md
 * "Primitive encodings": uv (unsigned LEB128, <= 10 bytes), sv (zigzag),
 * u8/u32le/u64le, f64, str, and the chunk time cursor (time / dur).
 *
 * Encoding: trcf_put_* write into memory the caller has already reserved
 * (at most TRCF_UV_MAX bytes per varint) and return the new end.
 *
 * Decoding: a trcf_cur walks a body with an explicit end pointer.  Every
 * getter is total: on a short body or an overlong varint it records the
 * first problem in cur->err / cur->why, returns 0 and stops advancing, so
 * a decoder reads all its fields and checks trcf_cur_ok() once at the end.
 * The one-byte varint case is inline because it dominates sample records.
 */
#ifndef TRC_FORMAT_VARINT_H
#define TRC_FORMAT_VARINT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "trc/trc.h"

#define TRCF_UV_MAX 10

/* ---- encoding (cannot fail; caller reserved the space) ---- */

static inline size_t trcf_uv_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline uint8_t *trcf_put_uv(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint64_t trcf_zigzag(int64_t n)
{
    uint64_t u = (uint64_t)n;
    return (u << 1) ^ (0 - (u >> 63));
}

static inline int64_t trcf_unzigzag(uint64_t u)
{
    return (int64_t)((u >> 1) ^ (0 - (u & 1)));
}

static inline uint8_t *trcf_put_sv(uint8_t *p, int64_t v)
{
    return trcf_put_uv(p, trcf_zigzag(v));
}

static inline uint8_t *trcf_put_u32le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
    return p + 4;
}

static inline uint8_t *trcf_put_u64le(uint8_t *p, uint64_t v)
{
    p = trcf_put_u32le(p, (uint32_t)v);
    return trcf_put_u32le(p, (uint32_t)(v >> 32));
}

static inline uint8_t *trcf_put_f64(uint8_t *p, double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return trcf_put_u64le(p, u);
}

/* A `time` field: the signed delta from the cursor, which then moves to
 * t.  Arithmetic is modulo 2^64 so every int64 pair round-trips. */
static inline uint8_t *trcf_put_time(uint8_t *p, int64_t *tcur, int64_t t)
{
    uint64_t d = (uint64_t)t - (uint64_t)*tcur;
    *tcur = t;
    return trcf_put_uv(p, trcf_zigzag((int64_t)d));
}

static inline uint32_t trcf_get_u32le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t trcf_get_u64le(const uint8_t *p)
{
    return (uint64_t)trcf_get_u32le(p) | (uint64_t)trcf_get_u32le(p + 4) << 32;
}

/* ---- decoding a plain buffer ---- */

/* Decode one uv at p (not reading at or past end).  Returns the bytes
 * used (1..10), 0 if the input ends inside the varint, -1 if it is
 * overlong (an 11th byte, or a 10th byte > 1). */
int trcf_uv_decode_slow(const uint8_t *p, const uint8_t *end, uint64_t *v);

static inline int trcf_uv_decode(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
    if (p < end && *p < 0x80) {
        *v = *p;
        return 1;
    }
    return trcf_uv_decode_slow(p, end, v);
}

/* ---- decoding cursor ---- */

typedef struct trcf_cur {
    const uint8_t *p, *end;
    trc_status err;        /* TRC_OK, or the first problem met */
    const char *why;       /* static phrase for err, or NULL */
} trcf_cur;

/* A string field as it lies in the body: not NUL-terminated, borrowed. */
typedef struct trcf_str {
    const char *p;
    size_t len;
} trcf_str;

static inline void trcf_cur_init(trcf_cur *c, const uint8_t *p, size_t len)
{
    c->p = p;
    c->end = p + len;
    c->err = TRC_OK;
    c->why = NULL;
}

static inline int trcf_cur_ok(const trcf_cur *c)
{
    return c->err == TRC_OK;
}

/* Records the first failure; later getters return 0 without moving. */
void trcf_cur_fail(trcf_cur *c, trc_status err, const char *why);

uint64_t trcf_cur_uv_slow(trcf_cur *c);

/* One to three bytes inline (ids, flags and time deltas up to ~1 ms),
 * the rest out of line. */
static inline uint64_t trcf_cur_uv(trcf_cur *c)
{
    const uint8_t *p = c->p;
    ptrdiff_t left = c->end - p;

    if (left >= 1 && p[0] < 0x80) {
        c->p = p + 1;
        return p[0];
    }
    if (left >= 2 && p[1] < 0x80) {
        c->p = p + 2;
        return (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
    }
    if (left >= 3 && p[2] < 0x80) {
        c->p = p + 3;
        return (uint64_t)(p[0] & 0x7f) | (uint64_t)(p[1] & 0x7f) << 7 | (uint64_t)p[2] << 14;
    }
    return trcf_cur_uv_slow(c);
}

static inline int64_t trcf_cur_sv(trcf_cur *c)
{
    return trcf_unzigzag(trcf_cur_uv(c));
}

/* A `time` field: moves *tcur and returns the absolute time.  On failure
 * returns 0 and leaves *tcur alone. */
static inline int64_t trcf_cur_time(trcf_cur *c, int64_t *tcur)
{
    int64_t d = trcf_cur_sv(c);
    if (c->err != TRC_OK)
        return 0;
    *tcur = (int64_t)((uint64_t)*tcur + (uint64_t)d);
    return *tcur;
}

/* A `dur` field: returns base + the unsigned duration (mod 2^64). */
static inline int64_t trcf_cur_dur(trcf_cur *c, int64_t base)
{
    uint64_t d = trcf_cur_uv(c);
    return (int64_t)((uint64_t)base + d);
}

uint8_t trcf_cur_u8(trcf_cur *c);
double trcf_cur_f64(trcf_cur *c);
/* n raw bytes (pointer into the body), NULL if fewer remain. */
const uint8_t *trcf_cur_bytes(trcf_cur *c, size_t n);
/* A `str`: length <= TRC_MAX_STRING (else TRC_ERR_LIMIT), no NUL byte
 * inside (else corrupt).  On failure *s is the empty string. */
void trcf_cur_str(trcf_cur *c, trcf_str *s);

#endif /* TRC_FORMAT_VARINT_H */
