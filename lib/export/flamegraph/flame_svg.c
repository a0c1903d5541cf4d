/*
 * lib/export/flamegraph/flame_svg.c — the flame graph as one SVG file
 * (contract in flamegraph.h; the file's shape in docs/design/outputs.md,
 * "Flame graph SVG").  Geometry follows flamegraph.pl: a frame's width is its value
 * times (width - 2 * XPAD) / total, children laid out left to right in
 * name order from their parent's left edge, a frame narrower than
 * min_width not drawn (nor anything above it), the image as tall as the
 * deepest frame drawn.  Text goes through xml_text: the five XML
 * specials escaped, control characters and bytes that are not UTF-8
 * written as U+FFFD, so any name from any trace gives well-formed XML.
 */
#include "lib/export/flamegraph/flamegraph.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"

#define XPAD 10.0
#define FONT 12.0
#define FRAME_H 16.0
#define YPAD_TOP (FONT * 3)
#define YPAD_BOTTOM (FONT * 2 + 10)
#define CHAR_W (0.59 * FONT) /* Verdana's mean advance, as flamegraph.pl */

typedef struct placed {
    uint32_t node;
    uint64_t start; /* left edge in value units from the root's */
    double x, w;
} placed;

/* Length of the UTF-8 sequence at s (1..4), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s, size_t left)
{
    size_t n = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3
             : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
    if (n == 0 || n > left)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    uint32_t cp = n == 1 ? s[0] : n == 2 ? (uint32_t)(s[0] & 0x1f) << 6 | (s[1] & 0x3f)
                : n == 3 ? (uint32_t)(s[0] & 0x0f) << 12 | (uint32_t)(s[1] & 0x3f) << 6 | (s[2] & 0x3f)
                : (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3f) << 12 |
                      (uint32_t)(s[2] & 0x3f) << 6 | (s[3] & 0x3f);
    /* overlong forms, surrogates and code points past U+10FFFF are not UTF-8;
     * U+FFFE and U+FFFF are not XML characters */
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff || cp == 0xfffe || cp == 0xffff)
        return 0;
    return n;
}

/* Writes s as XML character data, at most max_chars characters (then
 * "..", flamegraph.pl's mark of a cut name; SIZE_MAX for all).  A
 * character is a UTF-8 sequence or a byte replaced by U+FFFD. */
static void xml_text(FILE *out, const char *str, size_t max_chars)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t left = strlen(str), chars = 0;
    while (left) {
        if (chars == max_chars) {
            fputs("..", out);
            return;
        }
        size_t n = utf8_len(s, left);
        if (n == 0 || (n == 1 && (s[0] < 0x20 || s[0] == 0x7f))) {
            fputs("\xef\xbf\xbd", out);
            n = 1;
        } else if (n == 1) {
            switch (s[0]) {
            case '<': fputs("&lt;", out); break;
            case '>': fputs("&gt;", out); break;
            case '&': fputs("&amp;", out); break;
            case '"': fputs("&quot;", out); break;
            case '\'': fputs("&apos;", out); break;
            default: putc(s[0], out);
            }
        } else {
            fwrite(s, 1, n, out);
        }
        s += n;
        left -= n;
        chars++;
    }
}

/* Characters (as xml_text counts them) in s. */
static size_t text_chars(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t left = strlen(str), chars = 0;
    while (left) {
        size_t n = utf8_len(s, left);
        n = n ? n : 1;
        s += n;
        left -= n;
        chars++;
    }
    return chars;
}

/* 0 <= v < 1 from the name, so a function keeps its shade everywhere. */
static double name_shade(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return (double)(h % 1000) / 1000.0;
}

/* A frame is shown idle when most of its time was off-CPU; a GPU
 * activity never is (it has no CPU state). */
static exp_flame_kind shown_kind(const exp_flame_node *n)
{
    if (n->kind != EXP_FLAME_GPU && n->idle * 2 > n->value)
        return EXP_FLAME_IDLE;
    return (exp_flame_kind)n->kind;
}

static void kind_colour(const exp_flame_tree *t, const exp_flame_node *n, char *buf, size_t sz)
{
    double v = name_shade(exp_flame_tree_name(t, n));
    switch (shown_kind(n)) {
    case EXP_FLAME_PYTHON: /* flamegraph.pl's "hot" */
        snprintf(buf, sz, "rgb(%d,%d,%d)", 205 + (int)(50 * v), (int)(230 * v), (int)(55 * v));
        break;
    case EXP_FLAME_NATIVE:
        snprintf(buf, sz, "rgb(%d,%d,%d)", 80 + (int)(60 * v), 150 + (int)(60 * v), 230);
        break;
    case EXP_FLAME_GPU:
        snprintf(buf, sz, "rgb(%d,%d,%d)", 40 + (int)(60 * v), 180 + (int)(60 * v), 60);
        break;
    case EXP_FLAME_IDLE:
        snprintf(buf, sz, "rgb(%d,%d,%d)", 170 + (int)(40 * v), 170 + (int)(40 * v),
                 170 + (int)(40 * v));
        break;
    default:
        snprintf(buf, sz, "rgb(%d,%d,%d)", 200 + (int)(30 * v), 180 + (int)(30 * v), 220);
    }
}

/* Red for a frame that grew its share since BASE, blue for one that
 * shrank, the deeper the larger the change against the largest. */
static void diff_colour(double d, double dmax, char *buf, size_t sz)
{
    double i = dmax > 0 ? fabs(d) / dmax : 0;
    int fade = 235 - (int)(200 * i);
    if (d > 0)
        snprintf(buf, sz, "rgb(255,%d,%d)", fade, fade);
    else if (d < 0)
        snprintf(buf, sz, "rgb(%d,%d,255)", fade, fade);
    else
        snprintf(buf, sz, "rgb(235,235,235)");
}

static void put_time(FILE *out, uint64_t ns)
{
    if (ns >= 1000000000u)
        fprintf(out, "%.3f s", (double)ns / 1e9);
    else if (ns >= 1000000u)
        fprintf(out, "%.3f ms", (double)ns / 1e6);
    else
        fprintf(out, "%.3f us", (double)ns / 1e3);
}

/* Thousands separators make large counts readable in a tooltip. */
static void put_count(FILE *out, uint64_t v)
{
    char d[32];
    int n = snprintf(d, sizeof d, "%" PRIu64, v);
    for (int i = 0; i < n; i++) {
        putc(d[i], out);
        if (i + 1 < n && (n - 1 - i) % 3 == 0)
            putc(',', out);
    }
}

/* BASE's node for the same path as node i of t, or UINT32_MAX. */
static uint32_t base_node(const exp_flame_tree *t, const exp_flame_tree *b, const uint32_t *bmap,
                          uint32_t i)
{
    const exp_flame_node *n = exp_flame_tree_node(t, i);
    if (i == 0)
        return 0;
    uint32_t bp = bmap[n->parent];
    return bp == UINT32_MAX ? UINT32_MAX : exp_flame_tree_find(b, bp, exp_flame_tree_name(t, n));
}

typedef struct layout {
    placed *p;
    size_t n, cap;
    uint32_t max_depth;
} layout;

/* The frames drawn, in pre-order (a parent before its children, so the
 * script's first frame is the root). */
static trc_status lay_out(const exp_flame_tree *t, double scale, double min_w, layout *L)
{
    placed *stack = NULL;
    size_t sn = 0, scap = 0;
    trc_status st = TRC_OK;
    if (trcu_grow((void **)&stack, &scap, 0, sizeof *stack) != TRC_OK)
        return TRC_ERR_NOMEM;
    stack[sn++] = (placed){0, 0, XPAD, (double)exp_flame_tree_node(t, 0)->value * scale};
    while (sn) {
        placed cur = stack[--sn];
        const exp_flame_node *n = exp_flame_tree_node(t, cur.node);
        if (trcu_grow((void **)&L->p, &L->cap, L->n, sizeof *L->p) != TRC_OK) {
            st = TRC_ERR_NOMEM;
            break;
        }
        L->p[L->n++] = cur;
        if (n->depth > L->max_depth)
            L->max_depth = n->depth;
        /* children from the parent's left edge in name order, its own
         * time to their right; pushed last first, so they pop in order */
        uint64_t end = cur.start;
        for (uint32_t k = 0; k < n->nchild; k++)
            end += exp_flame_tree_node(t, exp_flame_tree_child(t, n->child0 + k))->value;
        for (uint32_t k = n->nchild; k-- > 0;) {
            uint32_t c = exp_flame_tree_child(t, n->child0 + k);
            uint64_t v = exp_flame_tree_node(t, c)->value;
            end -= v;
            double w = (double)v * scale;
            if (w < min_w)
                continue;
            if (trcu_grow((void **)&stack, &scap, sn, sizeof *stack) != TRC_OK) {
                st = TRC_ERR_NOMEM;
                goto out;
            }
            stack[sn++] = (placed){c, end, XPAD + (double)end * scale, w};
        }
    }
out:
    trc_free(stack);
    return st;
}

trc_status exp_flame_svg_write(const exp_flame_tree *t, const exp_flame_options *o, int gpu,
                               FILE *out)
{
    double width = o->width > 0 ? o->width : 1200;
    double min_w = o->min_width >= 0 ? o->min_width : 0.1;
    const exp_flame_node *root = exp_flame_tree_node(t, 0);
    uint64_t total = root->value;
    double scale = total ? (width - 2 * XPAD) / (double)total : 0;
    layout L = {0};
    uint32_t *bmap = NULL;
    trc_status st = TRC_OK;
    if (total && (st = lay_out(t, scale, min_w, &L)) != TRC_OK)
        goto out;
    if (o->base) {
        bmap = trc_malloc((size_t)exp_flame_tree_size(t) * sizeof *bmap);
        if (!bmap) {
            st = TRC_ERR_NOMEM;
            goto out;
        }
        /* pre-order: a parent is mapped before its children */
        for (size_t i = 0; i < L.n; i++)
            bmap[L.p[i].node] = base_node(t, o->base, bmap, L.p[i].node);
    }
    /* a subtitle (baseline at 24 + FONT + 2) needs a line more above the
     * frames, or an icicle's root frame covers it */
    double ypad_top = YPAD_TOP + (o->subtitle ? FONT : 0);
    double height = (L.max_depth + 1) * FRAME_H + ypad_top + YPAD_BOTTOM;
    const char *title = o->title ? o->title : o->icicle ? "Icicle Graph" : "Flame Graph";
    const char *unit = o->calls ? "calls" : gpu ? "activities" : "samples";
    const char *one = o->calls ? "call" : gpu ? "activity" : "sample";
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
            "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" data-xpad=\"%.0f\" data-fontsize=\"%.0f\" "
            "data-icicle=\"%d\" data-total=\"%" PRIu64 "\" data-unit=\"%s\">\n",
            width, height, width, height, XPAD, FONT, o->icicle ? 1 : 0, total,
            o->fold.weight_us ? "us" : unit);
    fprintf(out, "<style>\n%s</style>\n", exp_flame_css);
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#f8f8f4\"/>\n",
            width, height);
    fprintf(out, "<text id=\"title\" x=\"%.1f\" y=\"24\">", width / 2);
    xml_text(out, title, SIZE_MAX);
    fputs("</text>\n", out);
    if (o->subtitle) {
        fprintf(out, "<text id=\"subtitle\" x=\"%.1f\" y=\"%.0f\">", width / 2, 24 + FONT + 2);
        xml_text(out, o->subtitle, SIZE_MAX);
        fputs("</text>\n", out);
    }
    fprintf(out, "<text id=\"unzoom\" class=\"hide\" x=\"%.0f\" y=\"24\">Reset Zoom</text>\n",
            XPAD);
    fprintf(out, "<text id=\"search\" x=\"%.0f\" y=\"24\">Search</text>\n", width - XPAD);
    fprintf(out, "<text id=\"details\" x=\"%.0f\" y=\"%.0f\"> </text>\n", XPAD, height - 17);
    fprintf(out, "<text id=\"matched\" x=\"%.0f\" y=\"%.0f\"> </text>\n", width - XPAD,
            height - 17);
    if (!total)
        fprintf(out, "<text id=\"empty\" x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">no %s "
                "selected</text>\n", width / 2, ypad_top + FRAME_H, unit);

    double dmax = 0;
    uint64_t btotal = o->base ? exp_flame_tree_node(o->base, 0)->value : 0;
    if (o->base)
        for (size_t i = 0; i < L.n; i++) {
            const exp_flame_node *n = exp_flame_tree_node(t, L.p[i].node);
            uint32_t b = bmap[L.p[i].node];
            double bv = b == UINT32_MAX || !btotal ? 0
                        : (double)exp_flame_tree_node(o->base, b)->value / (double)btotal;
            double d = fabs((double)n->value / (double)total - bv);
            if (d > dmax)
                dmax = d;
        }

    static const char *const kind_class[] = {"py", "nat", "gpu", "idle", "oth"};
    fputs("<g id=\"frames\">\n", out);
    for (size_t i = 0; i < L.n; i++) {
        const placed *p = &L.p[i];
        const exp_flame_node *n = exp_flame_tree_node(t, p->node);
        const char *name = exp_flame_tree_name(t, n);
        double y = o->icicle ? ypad_top + n->depth * FRAME_H
                             : height - YPAD_BOTTOM - (n->depth + 1) * FRAME_H;
        exp_flame_kind k = shown_kind(n);
        double pct = 100.0 * (double)n->value / (double)total;
        char fill[64];
        fprintf(out, "<g class=\"%s\"><title>", kind_class[k]);
        xml_text(out, name, SIZE_MAX);
        fputc('\n', out);
        put_count(out, n->count);
        fprintf(out, " %s, %.2f%%", n->count != 1 ? unit : one, pct);
        if (n->ns) {
            fputs(", ", out);
            put_time(out, n->ns);
        }
        if (n->idle)
            fprintf(out, ", %.1f%% off-CPU", 100.0 * (double)n->idle / (double)n->value);
        if (o->base) {
            uint32_t b = bmap[p->node];
            double bv = b == UINT32_MAX || !btotal ? 0
                        : 100.0 * (double)exp_flame_tree_node(o->base, b)->value / (double)btotal;
            fputc('\n', out);
            xml_text(out, o->base_name ? o->base_name : "base", SIZE_MAX);
            fprintf(out, ": %.2f%%, change %+.2f points", bv, pct - bv);
            diff_colour(pct / 100 - bv / 100, dmax, fill, sizeof fill);
        } else {
            kind_colour(t, n, fill, sizeof fill);
        }
        fprintf(out, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
                "fill=\"%s\" rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%.1f\">",
                p->x, y, p->w, FRAME_H - 1, fill, p->x + 3, y + 11.5);
        double fit = floor((p->w - 3) / CHAR_W);
        if (fit >= 3)
            xml_text(out, name, text_chars(name) <= (size_t)fit ? SIZE_MAX : (size_t)fit - 2);
        fputs("</text></g>\n", out);
    }
    fputs("</g>\n<script><![CDATA[\n", out);
    fputs(exp_flame_js, out);
    fputs("]]></script>\n</svg>\n", out);
    if (fflush(out) != 0 || ferror(out))
        st = TRC_ERR_IO;
out:
    trc_free(L.p);
    trc_free(bmap);
    return st;
}
