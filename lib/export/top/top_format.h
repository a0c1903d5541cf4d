/*
 * lib/export/top/top_format.h — trc-top's lines as text, the same on
 * the screen (top_screen.c) and in the plain snapshots: the header (what
 * the view is, one line per GPU device), the key help line, the column
 * titles and one line per row (docs/top.md).  Internal API, prefix top_.
 */
#ifndef TRC_LIB_EXPORT_TOP_TOP_FORMAT_H
#define TRC_LIB_EXPORT_TOP_TOP_FORMAT_H

#include <stddef.h>
#include <stdio.h>

#include "lib/export/top/top.h"

/* Longest line written; longer ones are cut. */
#define TOP_LINE 512

/* What the view shows besides the table: the window length in seconds,
 * and the filters as the user gave them ("" for none). */
typedef struct top_context {
    double window_s;
    const char *filters;
    const char *status;    /* a note on the input ("recording", "ended",
                            * an error), "" for none */
    const char *recorder;  /* the last line the recorder trc-top started
                            * wrote on its standard error (kept off the
                            * screen), "" for none: a header line of its own */
    int show_frames;       /* the screen numbers its redraws in a corner,
                            * so that a test can measure the refresh rate */
    unsigned long frame;   /* redraws so far (top_screen.c counts them) */
} top_context;

/* The one-line help of the keys. */
extern const char top_key_help[];

/* The name of a sort key as the header shows it ("own %"). */
const char *top_sort_name(top_sort s);

/* The header: the view line, the recorder's output line, then one line
 * per GPU device and the share of GPU time with a Python line (and, with
 * several devices, one line per device's share).  Writes at most max
 * lines of TOP_LINE bytes; returns how many.  Cannot fail.
 * TOP_HEADER_MAX holds it all for up to EXP_GPU_SHARE_DEVICES devices. */
#define TOP_HEADER_MAX (3 + 2 * (EXP_GPU_SHARE_DEVICES + 1))
size_t top_format_header(const top_table *t, const top_view *v, const top_context *c,
                         char (*lines)[TOP_LINE], size_t max);
/* The column titles; the GPU column only when t->has_gpu. */
void top_format_titles(const top_table *t, char *buf, size_t n);
/* Row r of t. */
void top_format_row(const top_table *t, const top_row *r, char *buf, size_t n);

/* A whole snapshot to out: header, key help (when keys), titles and at
 * most max_rows rows (0 = all), then an empty line.  Returns 0, or -1 when
 * writing failed. */
int top_write_snapshot(FILE *out, const top_table *t, const top_view *v, const top_context *c,
                       size_t max_rows);

#endif /* TRC_LIB_EXPORT_TOP_TOP_FORMAT_H */
