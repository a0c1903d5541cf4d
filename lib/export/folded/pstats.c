/*
 * lib/export/folded/pstats.c — writes exp_stats as a pstats file (docs/design/outputs.md §3):
 * one marshal-ed dict, no header, as cProfile's dump_stats writes it and
 * pstats.Stats.load_stats reads it on Python 3.8–3.13.  Contract in
 * folded.h.
 *
 *   {(file, first_line, function): (cc, nc, tt, ct,
 *                                   {(caller key): (nc, cc, tt, ct), ...}), ...}
 *
 * Marshal codes used (all little-endian): '{' dict ended by '0', ')'
 * small tuple (1-byte count), 'i' int32, 'l' long in 15-bit digits (for
 * counts over 2^31-1), 'g' binary double, 'u' int32 length + UTF-8 (the
 * 'a'/'z' codes would be decoded as Latin-1).  No reference flags.
 */
#include "lib/export/folded/folded.h"

#include <string.h>

typedef struct mw {
    FILE *f;
    int err;
} mw;

static void put(mw *w, const void *p, size_t n)
{
    if (!w->err && fwrite(p, 1, n, w->f) != n)
        w->err = 1;
}

static void put_byte(mw *w, unsigned char c) { put(w, &c, 1); }

static void put_u32(mw *w, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    put(w, b, 4);
}

static void put_int(mw *w, uint64_t v)
{
    if (v <= INT32_MAX) {
        put_byte(w, 'i');
        put_u32(w, (uint32_t)v);
        return;
    }
    /* 'l': signed digit count, then base-2^15 digits, least significant first */
    uint16_t digits[5];
    uint32_t n = 0;
    for (; v; v >>= 15)
        digits[n++] = (uint16_t)(v & 0x7fff);
    put_byte(w, 'l');
    put_u32(w, n);
    for (uint32_t i = 0; i < n; i++) {
        unsigned char b[2] = {(unsigned char)digits[i], (unsigned char)(digits[i] >> 8)};
        put(w, b, 2);
    }
}

static void put_seconds(mw *w, uint64_t ns)
{
    double d = (double)ns / 1e9;
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(bits >> (8 * i));
    put_byte(w, 'g');
    put(w, b, 8);
}

static void put_str(mw *w, const char *s)
{
    size_t n = strlen(s);
    if (n > INT32_MAX) {
        w->err = 1;
        return;
    }
    put_byte(w, 'u');
    put_u32(w, (uint32_t)n);
    put(w, s, n);
}

static void put_key(mw *w, const exp_func *f)
{
    put_byte(w, ')');
    put_byte(w, 3);
    put_str(w, f->file);
    put_int(w, f->first_line); /* lines fit in int32 in practice; 'l' otherwise */
    put_str(w, f->function);
}

trc_status exp_pstats_write(const exp_stats *s, FILE *out)
{
    size_t nf = exp_stats_func_count(s), ne = exp_stats_edge_count(s);
    if (nf == 0)
        return TRC_ERR_ARG;
    mw w = {out, 0};
    size_t e = 0;
    put_byte(&w, '{');
    for (size_t i = 0; i < nf; i++) {
        const exp_func *f = exp_stats_func(s, i);
        put_key(&w, f);
        put_byte(&w, ')');
        put_byte(&w, 5);
        put_int(&w, f->cc);
        put_int(&w, f->nc);
        put_seconds(&w, f->tt_ns);
        put_seconds(&w, f->ct_ns);
        put_byte(&w, '{');
        /* edges are sorted by callee: this function's callers are next */
        while (e < ne && exp_stats_edge(s, e)->callee < i)
            e++;
        for (; e < ne && exp_stats_edge(s, e)->callee == i; e++) {
            const exp_edge *ed = exp_stats_edge(s, e);
            put_key(&w, exp_stats_func(s, ed->caller));
            put_byte(&w, ')');
            put_byte(&w, 4);
            put_int(&w, ed->nc);
            put_int(&w, ed->cc);
            put_seconds(&w, ed->tt_ns);
            put_seconds(&w, ed->ct_ns);
        }
        put_byte(&w, '0');
    }
    put_byte(&w, '0');
    if (w.err || fflush(out) != 0 || ferror(out))
        return TRC_ERR_IO;
    return TRC_OK;
}
