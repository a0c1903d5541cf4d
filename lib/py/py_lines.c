/*
 * py_lines.c — decoders for the three line-table formats (py_lines.h,
 * docs/design/cpython.md §6):
 *
 *  ≤3.9  co_lnotab: pairs (address increment, signed line increment);
 *        the line after adding pair k holds from its address on.
 *  3.10  co_linetable: pairs (range length in bytes, signed line delta);
 *        delta -128 marks a range with no line.
 *  3.11+ location table: entries starting with a byte that has bit 7
 *        set; bits 3–6 are the code, bits 0–2 the length in code units
 *        minus one.  Code 15: no location; 14: long form (signed varint
 *        line delta, then three varints); 13: signed varint line delta
 *        only; 10–12: line delta code−10 then two column bytes; 0–9:
 *        same line, one column byte.  Varints are 6-bit groups, low
 *        group first, bit 6 = more; a signed varint keeps the sign in
 *        bit 0.  The decoder only needs the line, so it skips to the
 *        next byte with bit 7 set after reading the delta.
 */
#include "lib/py/py_lines.h"

#include "lib/py/py_layout.h"
#include "lib/util/alloc.h"
#include "lib/util/grow.h"

#include <errno.h>

typedef struct builder {
    py_lineent *e;
    uint32_t n;
    size_t cap;
} builder;

/* Appends {start, line}; an entry with the same start as the previous
 * one replaces it, and one repeating the previous line is dropped. */
static int emit(builder *b, uint32_t start, int32_t line)
{
    if (b->n > 0 && b->e[b->n - 1].start == start) {
        b->e[b->n - 1].line = line;
        if (b->n > 1 && b->e[b->n - 2].line == line)
            b->n--;
        return 0;
    }
    if (b->n > 0 && b->e[b->n - 1].line == line)
        return 0;
    if (trcu_grow((void **)&b->e, &b->cap, b->n, sizeof *b->e) != TRC_OK)
        return -1;
    b->e[b->n++] = (py_lineent){ start, line };
    return 0;
}

static int decode_lnotab(builder *b, const uint8_t *t, size_t len, int first)
{
    uint64_t addr = 0;
    int64_t line = first;

    if (emit(b, 0, first) != 0)
        return -1;
    for (size_t i = 0; i + 1 < len; i += 2) {
        addr += t[i];
        line += (int8_t)t[i + 1];
        if (addr > UINT32_MAX || line < -1 || line > INT32_MAX)
            return errno = EINVAL, -1;
        if (emit(b, (uint32_t)addr, (int32_t)line) != 0)
            return -1;
    }
    return 0;
}

static int decode_310(builder *b, const uint8_t *t, size_t len, int first)
{
    uint64_t end = 0;
    int64_t line = first;

    for (size_t i = 0; i + 1 < len; i += 2) {
        uint64_t start = end;
        int ldelta = (int8_t)t[i + 1];
        end += t[i];
        int32_t l = -1;
        if (ldelta != -128) {
            line += ldelta;
            if (line < 0 || line > INT32_MAX)
                return errno = EINVAL, -1;
            l = (int32_t)line;
        }
        if (end > UINT32_MAX)
            return errno = EINVAL, -1;
        if (end > start && emit(b, (uint32_t)start, l) != 0)
            return -1;
    }
    return emit(b, (uint32_t)end, -1);
}

/* Reads a varint at t[*i]; -1 if it runs past len or is absurd. */
static int varint(const uint8_t *t, size_t len, size_t *i, uint32_t *out)
{
    uint32_t v = 0;
    unsigned shift = 0;

    for (;;) {
        if (*i >= len || shift > 30)
            return -1;
        uint8_t c = t[(*i)++];
        v |= (uint32_t)(c & 63) << shift;
        if (!(c & 64))
            break;
        shift += 6;
    }
    *out = v;
    return 0;
}

static int decode_locations(builder *b, const uint8_t *t, size_t len, int first)
{
    uint64_t addr = 0;
    int64_t line = first;
    size_t i = 0;

    while (i < len) {
        uint8_t h = t[i];
        if (!(h & 0x80))
            return errno = EINVAL, -1;
        int code = (h >> 3) & 15;
        uint64_t units = (uint64_t)(h & 7) + 1;
        size_t j = i + 1;
        int32_t l;
        if (code == 15) {
            l = -1;
        } else {
            int64_t delta = 0;
            if (code == 14 || code == 13) {
                uint32_t u;
                if (varint(t, len, &j, &u) != 0)
                    return errno = EINVAL, -1;
                delta = (u & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
            } else if (code >= 10) {
                delta = code - 10;
            }
            line += delta;
            if (line < -1 || line > INT32_MAX)
                return errno = EINVAL, -1;
            l = (int32_t)line;
        }
        if (addr > UINT32_MAX || emit(b, (uint32_t)addr, l) != 0)
            return addr > UINT32_MAX ? (errno = EINVAL, -1) : -1;
        addr += units * 2;
        i = j;
        while (i < len && !(t[i] & 0x80))
            i++;
    }
    if (addr > UINT32_MAX)
        return errno = EINVAL, -1;
    return emit(b, (uint32_t)addr, -1);
}

int py_lines_decode(int kind, const uint8_t *tab, size_t len, int firstlineno,
                    py_lineent **out, uint32_t *n)
{
    builder b = { 0 };
    int rc;

    *out = NULL;
    *n = 0;
    if (len > PY_LINES_MAX_TABLE)
        return errno = EINVAL, -1;
    errno = ENOMEM;
    switch (kind) {
    case PY_LINES_LNOTAB: rc = decode_lnotab(&b, tab, len, firstlineno); break;
    case PY_LINES_310: rc = decode_310(&b, tab, len, firstlineno); break;
    case PY_LINES_LOCATIONS: rc = decode_locations(&b, tab, len, firstlineno); break;
    default: rc = -1; errno = EINVAL; break;
    }
    if (rc == 0 && b.n == 0)
        rc = emit(&b, 0, -1);
    if (rc != 0) {
        trc_free(b.e);
        return -1;
    }
    *out = b.e;
    *n = b.n;
    return 0;
}

uint32_t py_lines_lookup(const py_lineent *m, uint32_t n, int64_t addr, int firstlineno)
{
    if (addr < 0)
        return firstlineno > 0 ? (uint32_t)firstlineno : 0;
    if (n == 0 || addr < m[0].start)
        return 0;
    uint32_t lo = 0, hi = n;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m[mid].start <= addr)
            lo = mid;
        else
            hi = mid;
    }
    return m[lo].line > 0 ? (uint32_t)m[lo].line : 0;
}
