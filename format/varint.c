/*
 * format/varint.c — out-of-line parts of the primitive decoders
 * (spec/DESIGN-NOTES.md "Primitive encodings"; see format/varint.h).
 */
#include "format/varint.h"

#include "format/limits.h"

int trcf_uv_decode_slow(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
    uint64_t x = 0;
    int i;

    for (i = 0; i < TRCF_UV_MAX; i++) {
        uint8_t b;
        if (p + i >= end)
            return 0;
        b = p[i];
        if (i == TRCF_UV_MAX - 1 && b > 1)
            return -1;          /* value would need more than 64 bits */
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (b < 0x80) {
            *v = x;
            return i + 1;
        }
    }
    return -1;                  /* an 11th byte would follow */
}

void trcf_cur_fail(trcf_cur *c, trc_status err, const char *why)
{
    if (c->err == TRC_OK) {
        c->err = err;
        c->why = why;
    }
    c->p = c->end;
}

uint64_t trcf_cur_uv_slow(trcf_cur *c)
{
    uint64_t v = 0;
    int n;

    if (c->err != TRC_OK)
        return 0;
    n = trcf_uv_decode_slow(c->p, c->end, &v);
    if (n <= 0) {
        trcf_cur_fail(c, TRC_ERR_CORRUPT, n == 0 ? "record body too short" : "overlong varint");
        return 0;
    }
    c->p += n;
    return v;
}

uint8_t trcf_cur_u8(trcf_cur *c)
{
    if (c->p >= c->end) {
        trcf_cur_fail(c, TRC_ERR_CORRUPT, "record body too short");
        return 0;
    }
    return *c->p++;
}

const uint8_t *trcf_cur_bytes(trcf_cur *c, size_t n)
{
    const uint8_t *p = c->p;
    if ((size_t)(c->end - c->p) < n || c->err != TRC_OK) {
        trcf_cur_fail(c, TRC_ERR_CORRUPT, "record body too short");
        return NULL;
    }
    c->p += n;
    return p;
}

double trcf_cur_f64(trcf_cur *c)
{
    const uint8_t *p = trcf_cur_bytes(c, 8);
    uint64_t u;
    double d;

    if (!p)
        return 0.0;
    u = trcf_get_u64le(p);
    memcpy(&d, &u, sizeof d);
    return d;
}

void trcf_cur_str(trcf_cur *c, trcf_str *s)
{
    uint64_t len = trcf_cur_uv(c);
    const uint8_t *p;

    s->p = "";
    s->len = 0;
    if (c->err != TRC_OK)
        return;
    if (len > TRC_MAX_STRING) {
        trcf_cur_fail(c, TRC_ERR_LIMIT, "string longer than 1 MiB");
        return;
    }
    p = trcf_cur_bytes(c, (size_t)len);
    if (!p)
        return;
    if (memchr(p, 0, (size_t)len)) {
        trcf_cur_fail(c, TRC_ERR_CORRUPT, "NUL byte in string");
        return;
    }
    s->p = (const char *)p;
    s->len = (size_t)len;
}
