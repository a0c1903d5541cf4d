/*
 * lib/export/nvvp/nvvp_svgdoc.c — SVG drawing primitives for the NVVP-like
 * timeline (contract in nvvp_svgdoc.h), built with libxml2's tree API
 * (xmlNewDoc / xmlNewChild / xmlNewTextChild) so escaping and
 * well-formedness are libxml2's job; we only make sure the text we hand
 * it is valid UTF-8 without characters XML 1.0 forbids.
 *
 * Note: libxml2 allocates with its own allocator (tools route it through
 * lib/util/alloc.h in test mode); its failures surface as NULL nodes and
 * set the sticky oom flag like ours.  libxml2 reports errors through
 * process-wide handlers that print to stderr: while a document is open
 * ours are installed instead (library code never prints), and an error
 * reported while saving marks the output incomplete (libxml2 may still
 * return success after dropping a node it could not escape).
 */
#include "lib/export/nvvp/nvvp_svgdoc.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include <libxml/globals.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlmemory.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"

#define HEAD_TITLE_Y 16.0
#define HEAD_DETAIL_Y 31.0
#define AXIS_LABEL_Y 47.0
#define AXIS_LINE_Y 52.0
#define CHART_H 30.0
#define SECTION_H 20.0
#define NOTE_H 16.0
#define CHAR_W 6.2  /* average advance of the 11 px label font */

static const char style_css[] =
    "text{font-family:DejaVu Sans,Arial,Helvetica,sans-serif}"
    ".h1{font-size:13px;font-weight:bold;fill:#111}"
    ".h2{font-size:11px;fill:#555}"
    ".ax{font-size:10px;fill:#333}"
    ".lb{font-size:11px;fill:#222}"
    ".sec{font-size:12px;font-weight:bold;fill:#0b3d66}"
    ".nt{font-size:10px;fill:#777;font-style:italic}"
    ".gl{stroke:#dde2e8;stroke-width:1}"
    ".tk{stroke:#555;stroke-width:1}";

/* ------------------------------------------------------------------ */
/* Text cleaning                                                        */
/* ------------------------------------------------------------------ */

/* Length of the valid UTF-8 character XML allows at p (1..4), or 0. */
static size_t valid_char(const unsigned char *p, size_t avail)
{
    unsigned c = p[0];
    if (c < 0x80)
        return (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') ? 1 : 0;
    size_t len;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (avail < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    if ((cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
        return 0;
    return len;
}

char *nvvp_sd_clean(const char *text, char *buf, size_t n, size_t max_chars)
{
    const unsigned char *p = (const unsigned char *)(text ? text : "");
    size_t left = strlen((const char *)p), o = 0, chars = 0;
    if (n == 0)
        return buf;
    while (left > 0) {
        size_t k = valid_char(p, left);
        size_t need = k ? k : 1;
        if ((max_chars && chars + 1 >= max_chars && left > need) || o + need + 4 > n) {
            /* does not fit: end with an ellipsis */
            if (o + 3 < n) {
                memcpy(buf + o, "\xe2\x80\xa6", 3);
                o += 3;
            }
            break;
        }
        if (k) {
            memcpy(buf + o, p, k);
            o += k;
        } else {
            buf[o++] = '?';
        }
        p += need;
        left -= need;
        chars++;
    }
    buf[o] = '\0';
    return buf;
}

/* ------------------------------------------------------------------ */
/* Nodes                                                                */
/* ------------------------------------------------------------------ */

static xmlNodePtr node(nvvp_sd *s, xmlNodePtr parent, const char *name)
{
    if (s->oom || !parent)
        return NULL;
    xmlNodePtr n = xmlNewChild(parent, NULL, BAD_CAST name, NULL);
    if (!n)
        s->oom = 1;
    return n;
}

static void attr(nvvp_sd *s, xmlNodePtr n, const char *k, const char *v)
{
    if (s->oom || !n)
        return;
    if (!xmlSetProp(n, BAD_CAST k, BAD_CAST v))
        s->oom = 1;
}

static void attrf(nvvp_sd *s, xmlNodePtr n, const char *k, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void attrf(nvvp_sd *s, xmlNodePtr n, const char *k, const char *fmt, ...)
{
    char buf[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    attr(s, n, k, buf);
}

/* A number with at most two decimals and no trailing zeros. */
static void attr_num(nvvp_sd *s, xmlNodePtr n, const char *k, double v)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.2f", v);
    char *dot = strchr(buf, '.');
    if (dot) {
        char *e = buf + strlen(buf) - 1;
        while (e > dot && *e == '0')
            *e-- = '\0';
        if (e == dot)
            *e = '\0';
    }
    if (strcmp(buf, "-0") == 0)
        strcpy(buf, "0");
    attr(s, n, k, buf);
}

/* A child element holding text (escaped by libxml2), text cleaned first. */
static xmlNodePtr text_child(nvvp_sd *s, xmlNodePtr parent, const char *name, const char *text,
                             size_t max_chars)
{
    if (s->oom || !parent)
        return NULL;
    size_t cap = strlen(text) * 3 + 8;
    char small[1024], *buf = cap <= sizeof small ? small : trc_malloc(cap);
    if (!buf) {
        s->oom = 1;
        return NULL;
    }
    nvvp_sd_clean(text, buf, cap, max_chars);
    xmlNodePtr n = xmlNewTextChild(parent, NULL, BAD_CAST name, BAD_CAST buf);
    if (buf != small)
        trc_free(buf);
    if (!n)
        s->oom = 1;
    return n;
}

static xmlNodePtr text_at(nvvp_sd *s, xmlNodePtr parent, double x, double y, const char *cls,
                          const char *text, size_t max_chars)
{
    xmlNodePtr t = text_child(s, parent, "text", text, max_chars);
    attr_num(s, t, "x", x);
    attr_num(s, t, "y", y);
    attr(s, t, "class", cls);
    return t;
}

static xmlNodePtr rect(nvvp_sd *s, xmlNodePtr parent, double x, double y, double w, double h,
                       const char *fill)
{
    xmlNodePtr r = node(s, parent, "rect");
    attr_num(s, r, "x", x);
    attr_num(s, r, "y", y);
    attr_num(s, r, "width", w);
    attr_num(s, r, "height", h);
    attr(s, r, "fill", fill);
    return r;
}

static xmlNodePtr line_el(nvvp_sd *s, xmlNodePtr parent, double x1, double y1, double x2,
                          double y2, const char *cls)
{
    xmlNodePtr l = node(s, parent, "line");
    attr_num(s, l, "x1", x1);
    attr_num(s, l, "y1", y1);
    attr_num(s, l, "x2", x2);
    attr_num(s, l, "y2", y2);
    attr(s, l, "class", cls);
    return l;
}

void nvvp_sd_color(const char *key, int light, char out[8])
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 16777619u;
    double hue = (double)(h % 360u), sat = 0.55 + (double)((h >> 9) % 20u) / 100.0;
    double l = light / 100.0;
    double c = (1 - fabs(2 * l - 1)) * sat, hp = hue / 60.0;
    double x = c * (1 - fabs(fmod(hp, 2.0) - 1)), m = l - c / 2;
    double r = 0, g = 0, b = 0;
    if (hp < 1) { r = c; g = x; }
    else if (hp < 2) { r = x; g = c; }
    else if (hp < 3) { g = c; b = x; }
    else if (hp < 4) { g = x; b = c; }
    else if (hp < 5) { r = x; b = c; }
    else { r = c; b = x; }
    snprintf(out, 8, "#%02x%02x%02x", (unsigned)lround((r + m) * 255),
             (unsigned)lround((g + m) * 255), (unsigned)lround((b + m) * 255));
}

/* ------------------------------------------------------------------ */
/* Axis                                                                 */
/* ------------------------------------------------------------------ */

/* A 1-2-5 step giving about `want` ticks over span ns. */
static int64_t tick_step(int64_t span, double want)
{
    double raw = (double)span / (want > 1 ? want : 1);
    int64_t mag = 1;
    while ((double)mag * 10 <= raw && mag < INT64_MAX / 100)
        mag *= 10;
    if ((double)mag >= raw)
        return mag;
    if ((double)mag * 2 >= raw)
        return mag * 2;
    if ((double)mag * 5 >= raw)
        return mag * 5;
    return mag * 10;
}

/* Label of a tick at rel ns: the unit is chosen by the largest label
 * (mag) so that "5.00005 s" is written rather than "5000050 us", with as
 * many decimals as the step needs. */
static void tick_label(int64_t rel, int64_t step, int64_t mag, char *buf, size_t n)
{
    static const char *const units[4] = {"ns", "\xc2\xb5s", "ms", "s"};
    static const int64_t scale[4] = {1, 1000, 1000000, 1000000000};
    int64_t m = mag > step ? mag : step;
    int u = m >= scale[3] ? 3 : m >= scale[2] ? 2 : m >= scale[1] ? 1 : 0;
    int dec = 0;
    int64_t p = 1;
    while (dec < 9 && (step * p) % scale[u] != 0 && p < INT64_MAX / 10 / (step > 0 ? step : 1)) {
        dec++;
        p *= 10;
    }
    snprintf(buf, n, "%.*f %s", dec, (double)rel / (double)scale[u], units[u]);
}

static void draw_axis(nvvp_sd *s)
{
    xmlNodePtr g = node(s, s->root, "g");
    attr(s, g, "id", "axis");
    /* t1 > t0, but hostile times are any int64: spans and times relative
     * to the origin in 128 bits, so they cannot overflow (spec §2.6) */
    uint64_t uspan = (uint64_t)s->sc.t1 - (uint64_t)s->sc.t0;
    int64_t span = uspan > INT64_MAX ? INT64_MAX : (int64_t)uspan;
    int64_t step = tick_step(span > 0 ? span : 1, s->sc.width / 110.0);
    __int128 rel0 = (__int128)s->sc.t0 - s->origin;
    __int128 first = rel0 >= 0 ? (rel0 + step - 1) / step * step : -((-rel0) / step * step);
    __int128 last_rel = (__int128)s->sc.t1 - s->origin;
    __int128 mag = last_rel < 0 ? -last_rel : last_rel;
    if ((first < 0 ? -first : first) > mag)
        mag = first < 0 ? -first : first;
    line_el(s, g, s->sc.x0, AXIS_LINE_Y, s->sc.x0 + s->sc.width, AXIS_LINE_Y, "tk");
    for (__int128 rel = first; rel + s->origin <= s->sc.t1 && !s->oom; rel += step) {
        double x = nvvp_scale_x(&s->sc, (int64_t)(rel + s->origin));
        char lbl[48];
        tick_label((int64_t)rel, step, mag > INT64_MAX ? INT64_MAX : (int64_t)mag, lbl, sizeof lbl);
        line_el(s, g, x, AXIS_LINE_Y - 4, x, AXIS_LINE_Y, "tk");
        xmlNodePtr t = text_at(s, g, x, AXIS_LABEL_Y, "ax", lbl, 0);
        /* keep the last label inside the picture */
        attr(s, t, "text-anchor", x + 3.2 * (double)strlen(lbl) > s->width - 2 ? "end" : "middle");
        /* grid line, stretched to the full height at close */
        line_el(s, s->grid, x, NVVP_SD_TOP, x, NVVP_SD_TOP, "gl");
    }
}

/* ------------------------------------------------------------------ */
/* Document                                                             */
/* ------------------------------------------------------------------ */

#if LIBXML_VERSION >= 21200
static void on_xml_error(void *ctx, const xmlError *e)
#else
static void on_xml_error(void *ctx, xmlErrorPtr e)
#endif
{
    /* in a tree of cleaned text, only memory fails; warnings do not count */
    if (!e || e->level >= XML_ERR_ERROR)
        ((nvvp_sd *)ctx)->oom = 1;
}

static void quiet_generic(void *ctx, const char *msg, ...)
{
}

static void restore_handlers(nvvp_sd *s)
{
    if (!s->handlers_set)
        return;
    xmlSetStructuredErrorFunc(s->saved_sctx, s->saved_serror);
    xmlSetGenericErrorFunc(s->saved_gctx, s->saved_gerror);
    s->handlers_set = 0;
}

int nvvp_sd_open(nvvp_sd *s, double width, int64_t t0, int64_t t1, int64_t origin)
{
    memset(s, 0, sizeof *s);
    /* libxml2 allocates through our wrapper, so the tools' allocation
     * hooks (tools/common/startup.c) count and fail its blocks too.  Set
     * here, where SVG writing starts, so only the tool that writes SVG
     * links libxml2; the wrapper is plain malloc unless a hook is armed,
     * and blocks libxml2 took before are freed by the same free(). */
    xmlMemSetup(trc_free, trc_malloc, trc_realloc, trc_strdup);
    s->saved_serror = xmlStructuredError;
    s->saved_sctx = xmlStructuredErrorContext;
    s->saved_gerror = xmlGenericError;
    s->saved_gctx = xmlGenericErrorContext;
    s->handlers_set = 1;
    xmlSetStructuredErrorFunc(s, on_xml_error);
    xmlSetGenericErrorFunc(s, quiet_generic);
    s->width = width;
    s->sc.t0 = t0;
    s->sc.t1 = t1 > t0 ? t1 : t0 + 1;
    s->sc.x0 = NVVP_SD_LABEL_W + 8;
    s->sc.width = width - s->sc.x0 - 12;
    if (s->sc.width < 50)
        s->sc.width = 50;
    s->origin = origin;
    s->y = NVVP_SD_TOP;
    s->doc = xmlNewDoc(BAD_CAST "1.0");
    s->root = s->doc ? xmlNewNode(NULL, BAD_CAST "svg") : NULL;
    if (!s->root) {
        nvvp_sd_discard(s);
        return -1;
    }
    xmlDocSetRootElement(s->doc, s->root);
    attr(s, s->root, "xmlns", "http://www.w3.org/2000/svg");
    attr(s, s->root, "version", "1.1");
    text_child(s, s->root, "style", style_css, 0);
    xmlNodePtr bg = rect(s, s->root, 0, 0, width, 100, "#ffffff");
    attr(s, bg, "id", "background");
    s->grid = node(s, s->root, "g");
    attr(s, s->grid, "id", "grid");
    s->rows = node(s, s->root, "g");
    attr(s, s->rows, "id", "rows");
    s->overlay = node(s, s->root, "g");
    attr(s, s->overlay, "id", "overlay");
    draw_axis(s);
    if (s->oom) {
        nvvp_sd_discard(s);
        return -1;
    }
    return 0;
}

void nvvp_sd_discard(nvvp_sd *s)
{
    if (s->doc)
        xmlFreeDoc(s->doc);
    s->doc = NULL;
    restore_handlers(s);
}

int nvvp_sd_close(nvvp_sd *s, FILE *out)
{
    double height = s->y + 12;
    int rc = 0;
    attr_num(s, s->root, "width", s->width);
    attr_num(s, s->root, "height", height);
    attrf(s, s->root, "viewBox", "0 0 %.0f %.0f", s->width, ceil(height));
    for (xmlNodePtr n = s->root->children; n && !s->oom; n = n->next) {
        xmlChar *id = xmlGetProp(n, BAD_CAST "id");
        if (id && strcmp((const char *)id, "background") == 0)
            attr_num(s, n, "height", height);
        xmlFree(id);
    }
    for (xmlNodePtr n = s->grid ? s->grid->children : NULL; n && !s->oom; n = n->next)
        attr_num(s, n, "y2", s->y);
    for (xmlNodePtr n = s->overlay ? s->overlay->children : NULL; n && !s->oom; n = n->next)
        attr_num(s, n, "height", s->y - NVVP_SD_TOP);
    if (s->oom) {
        rc = -1;
    } else if (xmlDocFormatDump(out, s->doc, 1) < 0 || s->oom || fflush(out) != 0 ||
               ferror(out)) {
        /* without a stream error, libxml2 failed on its own: memory */
        rc = ferror(out) ? -2 : -1;
    }
    nvvp_sd_discard(s);
    return rc;
}

void nvvp_sd_heading(nvvp_sd *s, const char *title, const char *detail)
{
    text_at(s, s->root, 8, HEAD_TITLE_Y, "h1", title, 200);
    text_at(s, s->root, 8, HEAD_DETAIL_Y, "h2", detail, 260);
}

void nvvp_sd_section(nvvp_sd *s, const char *label, int indent)
{
    xmlNodePtr g = node(s, s->rows, "g");
    xmlNodePtr r = rect(s, g, 0, s->y, s->width, SECTION_H, "#e8eef5");
    (void)r;
    line_el(s, g, 0, s->y, s->width, s->y, "gl");
    text_at(s, g, 6 + 12.0 * indent, s->y + 14, "sec", label, 0);
    s->y += SECTION_H;
    s->stripe = 0;
}

void nvvp_sd_note(nvvp_sd *s, const char *text, int indent)
{
    text_at(s, s->rows, 6 + 12.0 * indent, s->y + 11, "nt", text, 0);
    s->y += NOTE_H;
}

static size_t label_chars(int indent)
{
    double room = NVVP_SD_LABEL_W - 10 - 12.0 * indent;
    return room > CHAR_W * 4 ? (size_t)(room / CHAR_W) : 4;
}

xmlNodePtr nvvp_sd_row(nvvp_sd *s, const char *label, const char *label_tip, int indent,
                       uint32_t lanes, double *top)
{
    if (lanes < 1)
        lanes = 1;
    double h = lanes * NVVP_SD_LANE_H + 4;
    xmlNodePtr g = node(s, s->rows, "g");
    if (s->stripe++ % 2)
        rect(s, g, 0, s->y, s->width, h, "#f5f7fa");
    xmlNodePtr t = text_at(s, g, 6 + 12.0 * indent, s->y + 13, "lb", label, label_chars(indent));
    if (label_tip)
        text_child(s, t, "title", label_tip, 0);
    *top = s->y + 2;
    s->y += h;
    return s->oom ? NULL : g;
}

void nvvp_sd_box(nvvp_sd *s, xmlNodePtr g, const nvvp_box *b, double top, const char *color,
                 double opacity, const char *tip)
{
    xmlNodePtr r = rect(s, g, b->x0, top + b->lane * NVVP_SD_LANE_H, b->x1 - b->x0,
                        NVVP_SD_LANE_H - 2, color);
    attr(s, r, "class", "iv");
    if (opacity < 1)
        attr_num(s, r, "fill-opacity", opacity);
    text_child(s, r, "title", tip, 0);
}

void nvvp_sd_band(nvvp_sd *s, int64_t a, int64_t b, const char *color, const char *tip)
{
    if (b < s->sc.t0 || a > s->sc.t1)
        return;
    double x0 = nvvp_scale_x(&s->sc, a < s->sc.t0 ? s->sc.t0 : a);
    double x1 = nvvp_scale_x(&s->sc, b > s->sc.t1 ? s->sc.t1 : b);
    if (x1 - x0 < 2)
        x1 = x0 + 2;
    xmlNodePtr r = rect(s, s->overlay, x0, NVVP_SD_TOP, x1 - x0, 1, color);
    attr(s, r, "class", "loss");
    attr(s, r, "fill-opacity", "0.18");
    text_child(s, r, "title", tip, 0);
}

/* ------------------------------------------------------------------ */
/* Charts                                                               */
/* ------------------------------------------------------------------ */

typedef struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

static void sb_point(sbuf *b, double x, double y)
{
    /* Room for one point, at most 48 bytes with its NUL. */
    if (trcu_grow((void **)&b->p, &b->cap, b->n + 47, 1) != TRC_OK) {
        b->oom = 1;
        return;
    }
    b->n += (size_t)snprintf(b->p + b->n, b->cap - b->n, "%s%.1f,%.1f", b->n ? " " : "", x, y);
}

static double chart_y(double v, double base, double h, double ymin, double ymax)
{
    return base - h * ((v - ymin) / (ymax - ymin));
}

void nvvp_sd_chart(nvvp_sd *s, const char *label, int indent, const nvvp_point *p, size_t n,
                   double ymin, double ymax, const char *color, const char *tip)
{
    double top;
    xmlNodePtr g = nvvp_sd_row(s, label, NULL, indent, 2, &top);
    s->y += CHART_H - (2 * NVVP_SD_LANE_H + 4);
    if (!g)
        return;
    double base = top + CHART_H - 4, h = CHART_H - 8;
    if (ymax <= ymin) {
        /* scale to the readings inside the window */
        int any = 0;
        for (size_t k = 0; k < n; k++) {
            if (p[k].t < s->sc.t0 || p[k].t > s->sc.t1)
                continue;
            ymin = !any || p[k].v < ymin ? p[k].v : ymin;
            ymax = !any || p[k].v > ymax ? p[k].v : ymax;
            any = 1;
        }
        double pad = (ymax - ymin) * 0.08;
        if (pad <= 0)
            pad = ymax != 0 ? (ymax < 0 ? -ymax : ymax) * 0.5 : 1;
        ymin -= pad;
        ymax += pad;
    }
    sbuf b = {0};
    double xmin = s->sc.x0, xmax = s->sc.x0 + s->sc.width, first_x = -1, last_x = -1;
    double prev = 0;
    /* A counter holds its value until the next reading: drawn as steps,
     * the last one held to the end of the window.  Per pixel column only
     * the first, min, max and last readings are kept, which draws the
     * same envelope with a bounded number of points. */
    size_t i = 0;
    while (i < n && p[i].t < s->sc.t0)
        i++;
    if (i > 0)
        i--;
    while (i < n && !b.oom && p[i].t <= s->sc.t1) {
        double x = nvvp_scale_x(&s->sc, p[i].t);
        long col = lround(floor(x));
        double vmin = p[i].v, vmax = p[i].v, vfirst = p[i].v, vlast = p[i].v;
        size_t j = i + 1;
        while (j < n && p[j].t <= s->sc.t1 && lround(floor(nvvp_scale_x(&s->sc, p[j].t))) == col) {
            vmin = p[j].v < vmin ? p[j].v : vmin;
            vmax = p[j].v > vmax ? p[j].v : vmax;
            vlast = p[j].v;
            j++;
        }
        double xc = x < xmin ? xmin : x;
        if (first_x < 0) {
            first_x = xc;
            sb_point(&b, xc, base);
        } else {
            sb_point(&b, xc, chart_y(prev, base, h, ymin, ymax));
        }
        sb_point(&b, xc, chart_y(vfirst, base, h, ymin, ymax));
        if (j - i > 1) {
            sb_point(&b, xc, chart_y(vmin, base, h, ymin, ymax));
            sb_point(&b, xc, chart_y(vmax, base, h, ymin, ymax));
            sb_point(&b, xc, chart_y(vlast, base, h, ymin, ymax));
        }
        prev = vlast;
        last_x = xc;
        i = j;
    }
    if (first_x >= 0) {
        last_x = xmax;
        sb_point(&b, last_x, chart_y(prev, base, h, ymin, ymax));
    }
    if (first_x >= 0 && !b.oom) {
        sb_point(&b, last_x, base);
        xmlNodePtr poly = node(s, g, "polygon");
        attr(s, poly, "class", "chart");
        attr(s, poly, "points", b.p);
        attr(s, poly, "fill", color);
        attr(s, poly, "fill-opacity", "0.35");
        attr(s, poly, "stroke", color);
        attr(s, poly, "stroke-width", "1");
        text_child(s, poly, "title", tip, 0);
    }
    if (b.oom)
        s->oom = 1;
    trc_free(b.p);
    line_el(s, g, s->sc.x0, base, s->sc.x0 + s->sc.width, base, "gl");
}
