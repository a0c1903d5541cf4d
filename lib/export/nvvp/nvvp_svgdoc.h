/*
 * lib/export/nvvp/nvvp_svgdoc.h — drawing primitives of the SVG timeline,
 * over libxml2's tree API: a document with a label column and a plot
 * area, rows stacked top to bottom, boxes with <title> tooltips, a time
 * axis with grid lines, and small counter charts.  The view itself
 * (which rows, what they hold) is nvvp_svg.c.
 *
 * Errors are sticky: after the first failed allocation every helper
 * does nothing and nvvp_sd.oom stays set, so callers check once at the
 * end.  Text given to the helpers may be any bytes: invalid UTF-8 and
 * characters XML cannot carry are replaced by '?', so the document is
 * always well-formed.
 */
#ifndef TRC_LIB_EXPORT_NVVP_SVGDOC_H
#define TRC_LIB_EXPORT_NVVP_SVGDOC_H

#include <stdint.h>
#include <stdio.h>

#include <libxml/tree.h>

#include "lib/export/nvvp/nvvp_data.h"
#include "lib/export/nvvp/nvvp_lanes.h"

#define NVVP_SD_LABEL_W 300.0  /* width of the label column */
#define NVVP_SD_LANE_H 14.0    /* one lane of an interval row */
#define NVVP_SD_TOP 58.0       /* first row below the heading and axis */

typedef struct nvvp_sd {
    xmlDocPtr doc;
    xmlNodePtr root, grid, rows, overlay;
    nvvp_scale sc;         /* time -> x of the plot area */
    int64_t origin;        /* time labels are relative to this */
    double width, y;       /* total width; next row's top */
    int stripe;            /* alternates row backgrounds */
    int oom;
    /* libxml2's error handlers, replaced while the document is open */
    int handlers_set;
    xmlStructuredErrorFunc saved_serror;
    void *saved_sctx;
    xmlGenericErrorFunc saved_gerror;
    void *saved_gctx;
} nvvp_sd;

/* Start a document `width` px wide for the window [t0, t1] with time
 * labels relative to origin. 0, or -1 when out of memory (nothing to
 * free then). */
int nvvp_sd_open(nvvp_sd *s, double width, int64_t t0, int64_t t1, int64_t origin);

/* Finish (grid lines, final height) and serialise to out; frees the
 * document in every case. 0, -1 out of memory, -2 write error. */
int nvvp_sd_close(nvvp_sd *s, FILE *out);

/* Free without writing (error paths). */
void nvvp_sd_discard(nvvp_sd *s);

/* Heading: a title line and a smaller detail line. */
void nvvp_sd_heading(nvvp_sd *s, const char *title, const char *detail);

/* A section header row ("Process 4242 ...", "GPU 0 ..."), indent levels
 * of 12 px. */
void nvvp_sd_section(nvvp_sd *s, const char *label, int indent);

/* A row holding boxes in `lanes` lanes: returns the <g> to put boxes in
 * (NULL after an error) and sets *top to the row's first lane y.  The
 * label gets a tooltip with `label_tip` when not NULL (full names). */
xmlNodePtr nvvp_sd_row(nvvp_sd *s, const char *label, const char *label_tip, int indent,
                       uint32_t lanes, double *top);

/* A box in row g: lane geometry from top, colour "#rrggbb", opacity 1
 * unless < 1, tooltip text (required: every interval has one).  Drawn
 * as <rect class="iv"> with a <title> child; charts are <polygon
 * class="chart">, loss bands <rect class="loss">, each with a <title>. */
void nvvp_sd_box(nvvp_sd *s, xmlNodePtr g, const nvvp_box *b, double top, const char *color,
                 double opacity, const char *tip);

/* A small chart row: readings sorted by time, drawn as filled steps
 * (a value holds until the next reading), reduced to first/min/max/last
 * per pixel column when denser than that.  The y range is [ymin, ymax];
 * ymax <= ymin: the range of the readings in the window, padded. */
void nvvp_sd_chart(nvvp_sd *s, const char *label, int indent, const nvvp_point *p, size_t n,
                   double ymin, double ymax, const char *color, const char *tip);

/* A full-height translucent band over the plot for [a, b] (losses),
 * drawn above the rows at close time. */
void nvvp_sd_band(nvvp_sd *s, int64_t a, int64_t b, const char *color, const char *tip);

/* A one-line note row (e.g. "... 12 more kernel functions"). */
void nvvp_sd_note(nvvp_sd *s, const char *text, int indent);

/* Colour of a key string: a stable hue from its hash; light = 0..100. */
void nvvp_sd_color(const char *key, int light, char out[8]);

/* Copy text into buf (n bytes) with invalid UTF-8 and XML-forbidden
 * characters replaced by '?', truncated at a character boundary with
 * "..." when it does not fit in max_chars characters (0 = no limit). */
char *nvvp_sd_clean(const char *text, char *buf, size_t n, size_t max_chars);

#endif
