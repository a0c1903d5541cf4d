/*
 * tests/support/fuzz_sinks.c — the converter targets of fuzz_sinks.h and
 * the target table.  A converter target is a list of sinks
 * (lib/export/sink.h), each fed by the converters' own pipeline
 * (lib/export/pipeline/pipeline.h: selection, call sites, sink), twice:
 * with the tool's defaults (on-CPU samples, no window), then with every
 * option on and --idle --from 1us --to 1s, so clipping of folded samples
 * and windowed GPU views see hostile times too.  A sink refusing the input (an error status) is
 * allowed; crashes, sanitizer reports and huge allocations are not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/export/chrome/chrome.h"
#include "lib/export/flamegraph/flamegraph.h"
#include "lib/export/folded/folded.h"
#include "lib/export/lines/lines.h"
#include "lib/export/nvvp/nvvp_sink.h"
#include "lib/export/nvvp/nvvp_summary.h"
#include "lib/export/pipeline/pipeline.h"
#include "lib/export/speedscope/speedscope.h"
#include "tests/support/fuzz_sinks.h"
#include "tests/support/trace_builder.h"
#include "tools/common/convert.h"
#include "tools/common/stats_table.h"

/* The selection of pass v: 0 the tools' defaults, 1 --idle with a window. */
static void selection(int v, conv_selection *sel)
{
    memset(sel, 0, sizeof *sel);
    if (v) {
        sel->idle = 1;
        sel->from = "0.000001";
        sel->to = "1";
    }
    conv_selection_prepare(sel);
}

/* Read everything into s through the converters' pipeline with sel; the
 * call-site stage gives up unmatched items after `window` records.  A
 * sink refusing the input is not an error, and how the run ended is not
 * checked: the reader target checks the reading itself. */
static void feed(const uint8_t *data, size_t size, conv_selection *sel, exp_sink *s,
                uint64_t window, FILE *out)
{
    tb_src src = {data, size, 0, 0};
    trc_status st;
    conv_losses losses;
    conv_pipe_result res;
    trc_reader *r = trc_reader_open_callback(tb_read, &src, "fuzz.trc", &st);
    if (!r)
        return;
    conv_pipe_run(r, "fuzz.trc", &sel->filter, s, window, out, &losses, &res);
    trc_reader_free(r);
}

/* ---- the sinks of each target, with their options per pass ---- */

typedef struct fs_sink {
    const exp_sink_type *type;
    const void *opts[2];     /* pass 0: the tool's defaults; pass 1: every option on */
} fs_sink;

static const exp_collapsed_options collapsed_opts[2] = {{0, 0, 0, 0, 0}, {1, 1, 1, 1, 1}};
static const exp_collapsed_options collapsed_gpu_opts[2] = {{0, 0, 0, 0, 1}, {1, 1, 1, 1, 1}};
static void ignore_share(const char *line) { (void)line; }
static const exp_folded_gpu_options folded_gpu_opts[2] = {{{0, 0, 0, 0, 1}, NULL},
                                                          {{1, 1, 1, 1, 1}, ignore_share}};
static const sscope_options sscope_opts[2] = {{0, 0, 0}, {1, 1, 2}}; /* 2 runs in memory: spills early */
/* pass 1: the exact busy counter at 1 ms too */
static const chrome_options chrome_opts[2] = {{0}, {.lines = 1, .busy = {.bucket_ns = 1000000}}};
static const nvvp_sink_options nvvp_sum_opts[2] = {
    {.sort = NVVP_SORT_TIME}, {.csv = 1, .sort = NVVP_SORT_NAME, .limit = 2}};
static const nvvp_sink_options nvvp_tab_opts[2] = {{.gpu_trace = 1, .api_trace = 1},
                                                     {.gpu_trace = 1, .api_trace = 1, .csv = 1}};
/* The window is the selection's (see selection()). */
static const nvvp_sink_options nvvp_timeline_opts[2] = {
    {.svg = 1, .from_ns = -1, .to_ns = -1, .idle = {.bucket_ns = 10000000}},
    {.svg = 1, .width = 400, .from_ns = 1000, .to_ns = 1000000000, .idle = {.bucket_ns = 1000}}};
static stats_table_opts table_opts[2];
/* GPU idle: pass 1 with a window and a horizon of 1 us, so that samples
 * and intervals are retired all the time. */
static const exp_gpu_idle_options idle_window[2] = {{0, 0, 0, 0, 0, 0}, {1, 1, 1000, 1000000000, 1000, 1000000}};
static const exp_folded_idle_options idle_fold_opts[2] = {{{0, 0, 0, 0, 1}, {0, 0, 0, 0, 0, 0}},
                                                          {{1, 1, 1, 1, 1}, {1, 1, 1000, 1000000000, 1000, 1000000}}};
/* Pass 1 maps every recorded source path into a directory that does not
 * exist: the report's no-source path, and no file of the machine read. */
static const char *const lines_roots[] = {"/=/nonexistent-trc-fuzz/"};
static const lines_opts lines_sink_opts[2] = {
    {0}, {.top = 2, .roots = lines_roots, .n_roots = 1, .metric = LINES_WALL, .json = 1, .color = 1}};

static void table_options(void)
{
    for (int v = 0; v < 2; v++) {
        stats_table_opts *t = &table_opts[v];
        memset(t, 0, sizeof *t);
        stats_table_default(t);
        if (v) {
            stats_table_sort_key(t, "tottime");
            t->limit = 3;
            t->callers = ".";
            t->callees = "[a-z]_";
            t->idle = 1;
            t->gpu_idle = idle_window[1];
        }
    }
}

static const exp_flame_options flame_opts[2] = {
    {.width = 1200, .min_width = 0.1},
    {{1, 1, 1, 1, 1}, .icicle = 1, .title = "t\x01<&>", .width = 100, .min_width = 0}};
static const exp_flame_options flame_idle_opts[2] = {
    {.width = 1200, .min_width = 0.1},
    {{1, 1, 1, 1, 1}, .width = 100, .min_width = 0, .gpu_idle = &idle_window[1]}};
static const fs_sink flamegraph_sinks[] = {
    {&exp_sink_flamegraph, {&flame_opts[0], &flame_opts[1]}},
    {&exp_sink_flamegraph_gpu, {&flame_opts[0], &flame_opts[1]}},
    {NULL, {NULL, NULL}}};
static const fs_sink collapsed_sinks[] = {
    {&exp_sink_collapsed, {&collapsed_opts[0], &collapsed_opts[1]}}, {NULL, {NULL, NULL}}};
static const fs_sink stats_sinks[] = {
    {&stats_table_sink, {&table_opts[0], &table_opts[1]}},
    {&exp_sink_pstats, {NULL, NULL}},
    {NULL, {NULL, NULL}}};
static const fs_sink lines_sinks[] = {
    {&exp_sink_lines, {&lines_sink_opts[0], &lines_sink_opts[1]}}, {NULL, {NULL, NULL}}};
static const fs_sink speedscope_sinks[] = {
    {&exp_sink_speedscope, {&sscope_opts[0], &sscope_opts[1]}}, {NULL, {NULL, NULL}}};
static const fs_sink chrome_sinks[] = {
    {&exp_sink_chrome, {&chrome_opts[0], &chrome_opts[1]}}, {NULL, {NULL, NULL}}};
static const fs_sink nvvp_sinks[] = {
    {&exp_sink_nvvp, {&nvvp_sum_opts[0], &nvvp_sum_opts[1]}},
    {&exp_sink_nvvp, {&nvvp_tab_opts[0], &nvvp_tab_opts[1]}},
    {&exp_sink_nvvp, {&nvvp_timeline_opts[0], &nvvp_timeline_opts[1]}},
    {NULL, {NULL, NULL}}};
static const fs_sink gpu_sinks[] = {
    {&exp_sink_collapsed_gpu, {&folded_gpu_opts[0], &folded_gpu_opts[1]}},
    {&exp_sink_pstats_gpu, {NULL, NULL}},
    {&stats_table_sink_gpu, {&table_opts[0], &table_opts[1]}},
    {&exp_sink_gpu_summary, {NULL, &idle_window[1]}},
    {&exp_sink_collapsed_syncs, {&collapsed_gpu_opts[0], &collapsed_gpu_opts[1]}},
    {&exp_sink_sync_report, {NULL, NULL}},
    {&exp_sink_pstats_syncs, {NULL, NULL}},
    {&exp_sink_collapsed_gpu_idle, {&idle_fold_opts[0], &idle_fold_opts[1]}},
    {&exp_sink_pstats_gpu_idle, {&idle_fold_opts[0], &idle_fold_opts[1]}},
    {&stats_table_sink_gpu_idle, {&table_opts[0], &table_opts[1]}},
    {&exp_sink_flamegraph_gpu_idle, {&flame_idle_opts[0], &flame_idle_opts[1]}},
    {&exp_sink_speedscope_gpu_idle, {NULL, &idle_window[1]}},
    {&exp_sink_flamegraph_syncs, {&flame_opts[0], &flame_opts[1]}},
    {&exp_sink_speedscope_syncs, {NULL, NULL}},
    {NULL, {NULL, NULL}}};

/* Every sink of the list, in both passes; the call-site matchers give up
 * after 4 records in pass 1, so entries are given up early too. */
static int run_sinks(const fs_sink *list, const uint8_t *data, size_t size, FILE *out, char *why,
                     size_t n)
{
    table_options();
    for (int v = 0; v < 2; v++) {
        for (const fs_sink *k = list; k->type; k++) {
            conv_selection sel;
            exp_sink *s = exp_sink_new(k->type, k->opts[v]);
            selection(v, &sel);
            if (s)
                feed(data, size, &sel, s, v ? 4 : 0, out);
            exp_sink_free(s);
            conv_selection_cleanup(&sel);
        }
    }
    return 0;
}

#define SINK_TARGET(fn, list)                                                         \
    static int fn(const uint8_t *data, size_t size, FILE *out, char *why, size_t n) \
    {                                                                                 \
        return run_sinks(list, data, size, out, why, n);                              \
    }
SINK_TARGET(t_collapsed, collapsed_sinks)
SINK_TARGET(t_stats, stats_sinks)
SINK_TARGET(t_speedscope, speedscope_sinks)
SINK_TARGET(t_chrome, chrome_sinks)
SINK_TARGET(t_nvvp, nvvp_sinks)
SINK_TARGET(t_gpu, gpu_sinks)
SINK_TARGET(t_lines, lines_sinks)

/* The flame graph's text is XML whatever the input: valid UTF-8 with no
 * control character but newline.  0, or -1 with why set. */
static int xml_safe(const char *p, size_t len, char *why, size_t n)
{
    const unsigned char *s = (const unsigned char *)p;
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        size_t k = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
                 : (c & 0xf8) == 0xf0 ? 4 : 0;
        if ((c < 0x20 && c != '\n') || k == 0 || i + k > len)
            return fs_fail(why, n, "flamegraph: byte 0x%02x at offset %zu is not XML text", c, i);
        for (size_t j = 1; j < k; j++)
            if ((s[i + j] & 0xc0) != 0x80)
                return fs_fail(why, n, "flamegraph: bad UTF-8 at offset %zu", i);
        i += k;
    }
    return 0;
}

/* trc2flamegraph's sinks in both passes, each SVG checked to be XML
 * text, then --diff: the input's own tree (pass 1 options) as the base
 * of a second drawing. */
static int t_flamegraph(const uint8_t *data, size_t size, FILE *out, char *why, size_t n)
{
    table_options();
    for (int v = 0; v < 3; v++) {
        for (const fs_sink *k = flamegraph_sinks; k->type; k++) {
            exp_flame_options o = flame_opts[v ? 1 : 0];
            exp_flame_tree *base = v == 2 ? exp_flame_tree_new() : NULL;
            char *text = NULL;
            size_t len = 0;
            FILE *mem = open_memstream(&text, &len);
            int rc = 0;
            for (int pass = base ? 0 : 1; pass < 2 && mem; pass++) {
                conv_selection sel;
                o.collect = pass == 0 ? base : NULL;
                o.base = pass == 1 ? base : NULL;
                exp_sink *s = exp_sink_new(k->type, &o);
                selection(v ? 1 : 0, &sel);
                if (s)
                    feed(data, size, &sel, s, v ? 4 : 0, mem);
                exp_sink_free(s);
                conv_selection_cleanup(&sel);
            }
            if (mem && fclose(mem) == 0)
                rc = xml_safe(text, len, why, n);
            free(text);
            exp_flame_tree_free(base);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* ---- the table ---- */

const fs_target fs_targets[] = {
    {"chunk", fs_chunk, 1},         {"records", fs_records, 0}, {"reader", fs_reader, 1},
    {"collapsed", t_collapsed, 1},  {"stats", t_stats, 1},      {"speedscope", t_speedscope, 1},
    {"chrome", t_chrome, 1},        {"nvvp", t_nvvp, 1},        {"gpu", t_gpu, 1},
    {"lines", t_lines, 1},
    {"flamegraph", t_flamegraph, 1},
};
const size_t fs_n_targets = sizeof fs_targets / sizeof *fs_targets;

const fs_target *fs_find(const char *name)
{
    for (size_t i = 0; i < fs_n_targets; i++) {
        if (strcmp(fs_targets[i].name, name) == 0)
            return &fs_targets[i];
    }
    return NULL;
}

int fs_run(const fs_target *t, const uint8_t *data, size_t size, FILE *out, char *why, size_t n)
{
    int rc;
    trc_alloc_fail_after(-1);   /* also resets trc_alloc_largest() */
    rc = t->run(data, size, out, why, n);
    if (rc == 0 && trc_alloc_largest() > FS_ALLOC_CAP)
        rc = fs_fail(why, n, "%s: one allocation of %zu bytes from %zu input bytes", t->name,
                     trc_alloc_largest(), size);
    return rc;
}
