/*
 * tests/support/fuzz_mutate.c — seeded mutations of .trc bytes (see
 * fuzz_mutate.h).  Knows the chunk header layout and record framing of
 * spec/DESIGN-NOTES.md well enough to fix lengths and CRCs after a
 * change, and nothing else: it must not share the library's code, or a
 * bug in the codec would hide itself.
 */
#include "tests/support/fuzz_mutate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define HDR 40
#define MAX_CHUNKS 256
#define MAX_RECS 4096
#define MAX_VARINTS 64

typedef struct bytes {
    uint8_t *p;
    size_t len, cap;
    int oom;
} bytes;

uint64_t fm_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t below(uint64_t *rs, size_t n)
{
    return n ? (size_t)(fm_rand(rs) % n) : 0;
}

static void reserve(bytes *b, size_t extra)
{
    if (b->oom || b->len + extra <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra)
        cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return;
    }
    b->p = p;
    b->cap = cap;
}

/* Replace b[at, at+del) with ins[0..n). */
static void splice(bytes *b, size_t at, size_t del, const uint8_t *ins, size_t n)
{
    if (at > b->len)
        at = b->len;
    if (del > b->len - at)
        del = b->len - at;
    if (n > del)
        reserve(b, n - del);
    if (b->oom)
        return;
    memmove(b->p + at + n, b->p + at + del, b->len - at - del);
    if (n)
        memcpy(b->p + at, ins, n);
    b->len = b->len - del + n;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static int is_magic(const uint8_t *p)
{
    return p[0] == 0x89 && p[1] == 'T' && p[2] == 'R' && p[3] == 'C';
}

static void fix_header_crc(uint8_t *h)
{
    put32(h + 36, (uint32_t)crc32(0L, h, 36));
}

/* Chunks with complete framing: [off[i], end[i]). Lenient: skips
 * unframed bytes to the next magic, stops at a chunk running off the end. */
static size_t layout(const bytes *b, size_t *off, size_t *end, size_t max)
{
    size_t i = 0, n = 0;
    while (n < max && i + HDR <= b->len) {
        if (!is_magic(b->p + i)) {
            i++;
            continue;
        }
        size_t e = i + HDR + (size_t)le32(b->p + i + 8);
        if (e > b->len)
            break;
        off[n] = i;
        end[n] = e;
        n++;
        i = e;
    }
    return n;
}

/* ---- varints ---- */

static size_t put_uv(uint8_t *o, uint64_t v)
{
    size_t n = 0;
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        o[n++] = (uint8_t)(c | (v ? 0x80 : 0));
    } while (v);
    return n;
}

/* Length of the varint at p (limit bytes), 0 if unterminated within 10. */
static size_t uv_len(const uint8_t *p, size_t limit, uint64_t *v)
{
    uint64_t x = 0;
    size_t i;
    for (i = 0; i < limit && i < 10; i++) {
        x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            if (v)
                *v = x;
            return i + 1;
        }
    }
    return 0;
}

/* ---- records inside a decoded payload ---- */

typedef struct rec {
    size_t start, body, len;    /* body offset and length; end = body + len */
    uint64_t tag;
} rec;

static size_t parse_recs(const bytes *p, rec *r, size_t max)
{
    size_t i = 0, n = 0;
    while (n < max && i < p->len) {
        uint64_t tag, len;
        size_t a = uv_len(p->p + i, p->len - i, &tag);
        if (!a)
            break;
        size_t b = uv_len(p->p + i + a, p->len - i - a, &len);
        if (!b || len > p->len - i - a - b)
            break;
        r[n].start = i;
        r[n].body = i + a + b;
        r[n].len = (size_t)len;
        r[n].tag = tag;
        n++;
        i += a + b + (size_t)len;
    }
    return n;
}

/* Rebuild record k with a new tag and body. */
static void replace_rec(bytes *p, const rec *r, uint64_t tag, const uint8_t *body, size_t len)
{
    uint8_t *tmp = malloc(len + 20);
    if (!tmp) {
        p->oom = 1;
        return;
    }
    size_t n = put_uv(tmp, tag);
    n += put_uv(tmp + n, len);
    memcpy(tmp + n, body, len);
    splice(p, r->start, r->body + r->len - r->start, tmp, n + len);
    free(tmp);
}

static const uint64_t huge_values[] = {
    0xffffffffffffffffull, 0x7fffffffffffffffull, 0x8000000000000000ull, 0xffffffffull,
    0x100000000ull, 1u << 24, (1u << 24) + 1, (1u << 20) + 1, 65537, 4097, 0x7fffffffull, 0,
};

/* A body-level mutation of record k: varint lengthened or replaced by a
 * huge value, bytes cut or appended.  Rebuilds the record's len. */
static void mutate_body(bytes *p, const rec *r, uint64_t *rs, char *what, size_t wn)
{
    size_t cap = r->len + 64;
    uint8_t *b = malloc(cap);
    if (!b) {
        p->oom = 1;
        return;
    }
    memcpy(b, p->p + r->body, r->len);
    size_t len = r->len;
    size_t vs[MAX_VARINTS], nv = 0, i = 0;
    while (i < len && nv < MAX_VARINTS) {
        size_t l = uv_len(b + i, len - i, NULL);
        if (!l)
            break;
        vs[nv++] = i;
        i += l;
    }
    int op = (int)below(rs, 4);
    if (op == 0 && nv) {               /* lengthen a varint (same value, overlong maybe) */
        size_t at = vs[below(rs, nv)], l = uv_len(b + at, len - at, NULL);
        size_t extra = 1 + below(rs, 10);
        memmove(b + at + l + extra, b + at + l, len - at - l);
        b[at + l - 1] |= 0x80;
        for (size_t k = 0; k < extra; k++)
            b[at + l + k] = k + 1 == extra ? 0x00 : 0x80;
        len += extra;
        snprintf(what, wn, "varint at body+%zu lengthened by %zu", at, extra);
    } else if (op == 1 && nv) {        /* varint -> huge value */
        size_t at = vs[below(rs, nv)], l = uv_len(b + at, len - at, NULL);
        uint64_t v = huge_values[below(rs, sizeof huge_values / sizeof huge_values[0])];
        uint8_t enc[10];
        size_t el = put_uv(enc, v);
        memmove(b + at + el, b + at + l, len - at - l);
        memcpy(b + at, enc, el);
        len = len - l + el;
        snprintf(what, wn, "varint at body+%zu set to %llu", at, (unsigned long long)v);
    } else if (op == 2 && len) {       /* body cut short */
        len = below(rs, len);
        snprintf(what, wn, "body cut to %zu bytes", len);
    } else {                           /* trailing bytes (minor-version extension) */
        size_t extra = 1 + below(rs, 16);
        for (size_t k = 0; k < extra; k++)
            b[len++] = (uint8_t)fm_rand(rs);
        snprintf(what, wn, "%zu bytes appended to body", extra);
    }
    replace_rec(p, r, r->tag, b, len);
    free(b);
}

/* A crafted record of a known type with small varint fields, so that it
 * refers to ids that probably exist. */
static void insert_crafted(bytes *p, size_t at, uint64_t *rs, char *what, size_t wn)
{
    uint8_t body[96];
    size_t n = 0, fields = 1 + below(rs, 24);
    uint64_t type = 1 + below(rs, 23);
    for (size_t k = 0; k < fields && n + 10 <= sizeof body; k++) {
        uint64_t v = below(rs, 8) ? below(rs, 6) : huge_values[below(rs, 12)];
        n += put_uv(body + n, v);
    }
    uint8_t rec_b[sizeof body + 20];
    size_t h = put_uv(rec_b, type << 1);
    h += put_uv(rec_b + h, n);
    memcpy(rec_b + h, body, n);
    splice(p, at, 0, rec_b, h + n);
    snprintf(what, wn, "crafted type %llu record (%zu fields) inserted", (unsigned long long)type, fields);
}

static void mutate_payload(bytes *p, uint64_t *rs, char *what, size_t wn)
{
    static rec r[MAX_RECS];
    size_t n = parse_recs(p, r, MAX_RECS);
    int op = (int)below(rs, 10);
    if (n == 0 && op >= 2 && op != 9)
        op = 0;
    switch (op) {
    case 0:
    case 1:
        if (p->len) {
            size_t at = below(rs, p->len);
            static const uint8_t vals[] = {0x00, 0xff, 0x80, 0x7f, 0x01};
            if (op == 0)
                p->p[at] ^= (uint8_t)(1u << below(rs, 8));
            else
                p->p[at] = vals[below(rs, sizeof vals)];
            snprintf(what, wn, "payload byte %zu %s", at, op == 0 ? "bit-flipped" : "set");
        } else {
            snprintf(what, wn, "empty payload left alone");
        }
        break;
    case 2:
    case 3:
    case 4:
        mutate_body(p, &r[below(rs, n)], rs, what, wn);
        break;
    case 5: {                          /* retype: body decoded as another type */
        const rec *x = &r[below(rs, n)];
        uint64_t t = below(rs, 4) ? 1 + below(rs, 22) : below(rs, 2000);
        uint64_t tag = (t << 1) | (below(rs, 8) == 0 ? 1u : 0u);
        uint8_t *b = malloc(x->len + 1);
        if (!b) {
            p->oom = 1;
            break;
        }
        memcpy(b, p->p + x->body, x->len);
        replace_rec(p, x, tag, b, x->len);
        free(b);
        snprintf(what, wn, "record at %zu retyped to tag %llu", x->start, (unsigned long long)tag);
        break;
    }
    case 6: {                          /* duplicate a record */
        const rec *x = &r[below(rs, n)];
        size_t l = x->body + x->len - x->start;
        uint8_t *b = malloc(l ? l : 1);
        if (!b) {
            p->oom = 1;
            break;
        }
        memcpy(b, p->p + x->start, l);
        size_t at = r[below(rs, n)].start;
        splice(p, at, 0, b, l);
        free(b);
        snprintf(what, wn, "record at %zu copied to %zu", x->start, at);
        break;
    }
    case 7: {                          /* remove a record */
        const rec *x = &r[below(rs, n)];
        splice(p, x->start, x->body + x->len - x->start, NULL, 0);
        snprintf(what, wn, "record at %zu removed", x->start);
        break;
    }
    case 8: {                          /* swap two records (definition after use) */
        size_t a = below(rs, n), c = below(rs, n);
        if (a > c) {
            size_t t = a;
            a = c;
            c = t;
        }
        if (a == c) {
            snprintf(what, wn, "swap of one record: no-op");
            break;
        }
        size_t la = r[a].body + r[a].len - r[a].start, lc = r[c].body + r[c].len - r[c].start;
        uint8_t *ba = malloc(la + 1), *bc = malloc(lc + 1);
        if (!ba || !bc) {
            free(ba);
            free(bc);
            p->oom = 1;
            break;
        }
        memcpy(ba, p->p + r[a].start, la);
        memcpy(bc, p->p + r[c].start, lc);
        splice(p, r[c].start, lc, ba, la);   /* later one first: offsets of a stay valid */
        splice(p, r[a].start, la, bc, lc);
        free(ba);
        free(bc);
        snprintf(what, wn, "records %zu and %zu swapped", a, c);
        break;
    }
    default:
        insert_crafted(p, n ? r[below(rs, n + 1) % n].start : 0, rs, what, wn);
        break;
    }
}

/* Decode chunk [o, e) payload into out.  0 on success. */
static int decode_payload(const bytes *b, size_t o, size_t e, bytes *out)
{
    const uint8_t *h = b->p + o;
    size_t stored = e - o - HDR;
    out->len = 0;
    if (!(h[7] & 1)) {
        reserve(out, stored + 1);
        if (out->oom)
            return -1;
        memcpy(out->p, h + HDR, stored);
        out->len = stored;
        return 0;
    }
    uint32_t dl = le32(h + 12);
    if (dl > (16u << 20))
        return -1;
    reserve(out, (size_t)dl + 1);
    if (out->oom)
        return -1;
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, -15) != Z_OK)
        return -1;
    zs.next_in = (Bytef *)(uintptr_t)(h + HDR);
    zs.avail_in = (uInt)stored;
    zs.next_out = out->p;
    zs.avail_out = dl;
    int rc = inflate(&zs, Z_FINISH);
    out->len = dl - zs.avail_out;
    inflateEnd(&zs);
    return rc == Z_STREAM_END ? 0 : -1;
}

/* Replace chunk [o, e) of b by its header with payload p (deflated when
 * deflate != 0), lengths and both CRCs fixed. */
static void reencode(bytes *b, size_t o, size_t e, const bytes *p, int compress)
{
    uint8_t h[HDR];
    memcpy(h, b->p + o, HDR);
    bytes st = {0};
    if (compress) {
        uLong bound = compressBound((uLong)p->len) + 64;
        reserve(&st, bound);
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        if (st.oom || deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
            free(st.p);
            b->oom = 1;
            return;
        }
        zs.next_in = p->p;
        zs.avail_in = (uInt)p->len;
        zs.next_out = st.p;
        zs.avail_out = (uInt)bound;
        deflate(&zs, Z_FINISH);
        st.len = bound - zs.avail_out;
        deflateEnd(&zs);
        h[7] |= 1;
    } else {
        reserve(&st, p->len + 1);
        if (st.oom) {
            b->oom = 1;
            return;
        }
        memcpy(st.p, p->p, p->len);
        st.len = p->len;
        h[7] &= (uint8_t)~1u;
    }
    put32(h + 8, (uint32_t)st.len);
    put32(h + 12, (uint32_t)p->len);
    put32(h + 32, (uint32_t)crc32(0L, st.p, (uInt)st.len));
    fix_header_crc(h);
    uint8_t *chunk = malloc(HDR + st.len);
    if (!chunk) {
        free(st.p);
        b->oom = 1;
        return;
    }
    memcpy(chunk, h, HDR);
    memcpy(chunk + HDR, st.p, st.len);
    splice(b, o, e - o, chunk, HDR + st.len);
    free(chunk);
    free(st.p);
}

static int plain_chunk(const uint8_t *h)
{
    return h[4] == 1 && (h[6] == 1 || h[6] == 2) && (h[7] & 0xfe) == 0;
}

static void mutate_once(bytes *b, uint64_t *rs, fm_info *info, int single)
{
    static size_t off[MAX_CHUNKS], end[MAX_CHUNKS];
    size_t n = layout(b, off, end, MAX_CHUNKS);
    char *what = info->what;
    size_t wn = sizeof info->what;
    int op = (int)below(rs, 16);
    if (n == 0 && op >= 4 && op != 15)
        op = (int)below(rs, 4);
    if (b->len == 0 && op < 4)
        op = 15;
    switch (op) {
    case 0:                            /* bit flip */
    case 1: {                          /* byte set */
        size_t at = below(rs, b->len);
        static const uint8_t vals[] = {0x00, 0xff, 0x80};
        uint8_t old = b->p[at];
        if (op == 0)
            b->p[at] ^= (uint8_t)(1u << below(rs, 8));
        else
            b->p[at] = below(rs, 4) ? vals[below(rs, 3)] : (uint8_t)fm_rand(rs);
        snprintf(what, wn, "byte %zu %s", at, op == 0 ? "bit-flipped" : "set");
        for (size_t k = 0; single && k < n && b->p[at] != old; k++)
            if (at >= off[k] && at < end[k] && plain_chunk(b->p + off[k]) && (at < off[k] || at >= off[k] + 4))
                info->raw_damage = 1;
        break;
    }
    case 2: {                          /* truncation */
        size_t at = below(rs, b->len);
        for (size_t k = 0; single && k < n; k++)
            if (at > off[k] && at < end[k] && plain_chunk(b->p + off[k]))
                info->raw_damage = 1;
        b->len = at;
        snprintf(what, wn, "truncated to %zu bytes", at);
        break;
    }
    case 3: {                          /* garbage inserted */
        uint8_t g[32];
        size_t gl = 1 + below(rs, sizeof g), at = below(rs, b->len + 1);
        for (size_t k = 0; k < gl; k++)
            g[k] = (uint8_t)fm_rand(rs);
        splice(b, at, 0, g, gl);
        snprintf(what, wn, "%zu garbage bytes inserted at %zu", gl, at);
        break;
    }
    case 4: {                          /* duplicate a chunk */
        size_t k = below(rs, n), at = below(rs, 2) ? end[k] : off[below(rs, n)];
        size_t l = end[k] - off[k];
        uint8_t *c = malloc(l);
        if (!c) {
            b->oom = 1;
            break;
        }
        memcpy(c, b->p + off[k], l);
        splice(b, at, 0, c, l);
        free(c);
        snprintf(what, wn, "chunk at %zu copied to %zu", off[k], at);
        info->crc_fixed = 1;
        break;
    }
    case 5: {                          /* remove a chunk */
        size_t k = below(rs, n);
        splice(b, off[k], end[k] - off[k], NULL, 0);
        snprintf(what, wn, "chunk at %zu removed", off[k]);
        info->crc_fixed = 1;
        break;
    }
    case 6: {                          /* swap two chunks */
        size_t a = below(rs, n), c = below(rs, n);
        if (a > c) {
            size_t t = a;
            a = c;
            c = t;
        }
        if (a != c) {
            size_t la = end[a] - off[a], lc = end[c] - off[c];
            uint8_t *ba = malloc(la), *bc = malloc(lc);
            if (ba && bc) {
                memcpy(ba, b->p + off[a], la);
                memcpy(bc, b->p + off[c], lc);
                splice(b, off[c], lc, ba, la);
                splice(b, off[a], la, bc, lc);
            } else {
                b->oom = 1;
            }
            free(ba);
            free(bc);
        }
        snprintf(what, wn, "chunks %zu and %zu swapped", a, c);
        info->crc_fixed = 1;
        break;
    }
    case 7:                            /* length fields huge, header CRC fixed */
    case 8: {
        size_t k = below(rs, n);
        uint8_t *h = b->p + off[k];
        static const uint32_t lens[] = {0xffffffffu, 0x7fffffffu, (16u << 20) + 1, (16u << 20) + (64u << 10) + 1,
                                        16u << 20, 0, 1, 39};
        size_t field = below(rs, 2) ? 8 : 12;
        uint32_t v = below(rs, 3) ? lens[below(rs, 8)] : le32(h + field) + (uint32_t)below(rs, 64) - 32;
        put32(h + field, v);
        fix_header_crc(h);
        snprintf(what, wn, "chunk at %zu %s length set to %u (header CRC fixed)", off[k],
                 field == 8 ? "stored" : "decoded", v);
        info->crc_fixed = 1;
        break;
    }
    case 9:                            /* other header byte, header CRC fixed */
    case 10: {
        size_t k = below(rs, n);
        uint8_t *h = b->p + off[k];
        size_t at = 4 + below(rs, 32);
        if (below(rs, 2))
            h[at] ^= (uint8_t)(1u << below(rs, 8));
        else
            h[at] = (uint8_t)fm_rand(rs);
        fix_header_crc(h);
        snprintf(what, wn, "chunk at %zu header byte %zu changed (header CRC fixed)", off[k], at);
        info->crc_fixed = 1;
        break;
    }
    default: {                         /* the decoded payload, all checks fixed */
        size_t k = below(rs, n);
        bytes p = {0};
        if (n == 0 || decode_payload(b, off[k], end[k], &p) != 0) {
            free(p.p);
            size_t at = below(rs, b->len);
            if (b->len)
                b->p[at] ^= 0x10;
            snprintf(what, wn, "undecodable: byte %zu flipped", at);
            break;
        }
        char inner[120];
        inner[0] = 0;
        mutate_payload(&p, rs, inner, sizeof inner);
        if (p.oom)
            b->oom = 1;
        else
            reencode(b, off[k], end[k], &p, (b->p[off[k] + 7] & 1) ? 1 : (below(rs, 4) == 0));
        free(p.p);
        snprintf(what, wn, "chunk at %zu payload: %s (CRCs fixed)", off[k], inner);
        info->crc_fixed = 1;
        break;
    }
    }
}

uint8_t *fm_mutate(const uint8_t *in, size_t len, uint64_t seed, int rounds, size_t *out_len,
                   fm_info *info)
{
    fm_info local;
    if (!info)
        info = &local;
    memset(info, 0, sizeof *info);
    bytes b = {0};
    reserve(&b, len + 1);
    if (b.oom)
        return NULL;
    if (len)
        memcpy(b.p, in, len);
    b.len = len;
    uint64_t rs = seed * 0x2545f4914f6cdd1dull + len;
    if (rounds < 1)
        rounds = 1;
    int all_fixed = 1;
    char first[160] = "";
    for (int i = 0; i < rounds && !b.oom; i++) {
        mutate_once(&b, &rs, info, rounds == 1);
        all_fixed &= info->crc_fixed;
        info->crc_fixed = 0;
        if (i == 0)
            snprintf(first, sizeof first, "%s", info->what);
    }
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    info->crc_fixed = all_fixed;
    if (rounds > 1) {
        snprintf(info->what, sizeof info->what, "%.120s (+%d more)", first, rounds - 1);
    }
    *out_len = b.len;
    return b.p;
}
