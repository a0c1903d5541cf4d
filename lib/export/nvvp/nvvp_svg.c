/*
 * lib/export/nvvp/nvvp_svg.c — the NVVP-like SVG timeline: which rows exist,
 * what each holds, how it is coloured and what its tooltips say
 * (contract in nvvp_svg.h; drawing primitives in nvvp_svgdoc.c, lane
 * and merge geometry in nvvp_lanes.c).
 */
#include "lib/export/nvvp/nvvp_svg.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/export/nvvp/nvvp_lanes.h"
#include "lib/export/nvvp/nvvp_svgdoc.h"
#include "lib/export/nvvp/nvvp_svgtip.h"
#include "lib/export/nvvp/nvvp_trace.h"
#include "lib/export/common/gpu_units.h"

#define COMPUTE_LANES 8
#define ROW_LANES 4

typedef enum row_kind { ROW_ACT, ROW_API, ROW_RUN, ROW_MARK } row_kind;

typedef struct view {
    nvvp_data *d;
    trc_reader *r;
    nvvp_sd sd;
    int64_t t0, t1, origin;
    nvvp_span *spans;
    size_t n_spans, cap_spans;
    nvvp_boxes boxes;
    size_t *api_off;       /* per thread id: first index into api_ix */
    uint32_t *api_ix;      /* API call indices grouped by thread, in start order */
    uint32_t n_threads;    /* api_off has n_threads + 1 entries */
    int oom;
    nvvp_tip tip;
    const exp_gpu_idle *busy; /* nvvp_svg_opts.busy */
    int64_t bucket_ns;        /* its buckets' length */
} view;

/* ------------------------------------------------------------------ */
/* Small helpers                                                        */
/* ------------------------------------------------------------------ */

static void add_span(view *v, int64_t a, int64_t b, uint32_t ref, uint32_t key)
{
    if (trcu_grow((void **)&v->spans, &v->cap_spans, v->n_spans, sizeof *v->spans) != TRC_OK) {
        v->oom = 1;
        return;
    }
    nvvp_span *s = &v->spans[v->n_spans++];
    s->start = a;
    s->end = b;
    s->ref = ref;
    s->key = key;
}

static uint32_t act_key(const nvvp_act *a)
{
    if (a->kind == NVVP_ACT_KERNEL)
        return a->name;
    return NVVP_KEY_FIXED | (uint32_t)a->kind << 8 | (a->kind == NVVP_ACT_MEMCPY ? a->sub : 0);
}

static void act_color(view *v, uint32_t key, char out[8])
{
    const char *fixed = NULL;
    if (!(key & NVVP_KEY_FIXED)) {
        nvvp_sd_color(name_pool_str(&v->d->pool, key), 50, out);
        return;
    }
    uint32_t kind = (key >> 8) & 0xff, sub = key & 0xff;
    if (kind == NVVP_ACT_MEMCPY) {
        switch (sub) {
        case TRC_COPY_HTOD: fixed = "#e6a817"; break;
        case TRC_COPY_DTOH: fixed = "#a0522d"; break;
        case TRC_COPY_DTOD: fixed = "#9b6fc0"; break;
        case TRC_COPY_PTOP: fixed = "#d6589f"; break;
        default: fixed = "#8c8c8c"; break;
        }
    } else if (kind == NVVP_ACT_MEMSET) {
        fixed = "#3a9d5d";
    } else {
        fixed = "#b8b8b8";
    }
    strcpy(out, fixed);
}

/* ------------------------------------------------------------------ */
/* Interval rows                                                        */
/* ------------------------------------------------------------------ */

/* Lay out v->spans (sorted by start) and draw them as one row.  ref of a
 * span indexes d->acts, d->apis or d->marks by kind, or `runs` for
 * ROW_RUN. */
static void draw_row(view *v, row_kind kind, const nvvp_run *runs, const char *label,
                     const char *label_tip, int indent, uint32_t max_lanes)
{
    if (v->oom)
        return;
    if (nvvp_layout(v->spans, v->n_spans, &v->sd.sc, max_lanes, &v->boxes) != TRC_OK) {
        v->oom = 1;
        return;
    }
    double top;
    xmlNodePtr g = nvvp_sd_row(&v->sd, label, label_tip, indent, v->boxes.lanes, &top);
    if (!g)
        return;
    for (size_t i = 0; i < v->boxes.n && !v->sd.oom; i++) {
        const nvvp_box *b = &v->boxes.v[i];
        char color[8];
        double opacity = 1;
        uint32_t key = nvvp_box_main_key(b);
        switch (kind) {
        case ROW_ACT: {
            const nvvp_act *a = &v->d->acts[b->ref];
            act_color(v, key, color);
            if (b->count == 1)
                nvvp_tip_act(&v->tip, a);
            else
                nvvp_tip_group(&v->tip, b, "activities", 0);
            break;
        }
        case ROW_API: {
            const nvvp_api *a = &v->d->apis[b->ref];
            strcpy(color, a->domain == TRC_API_DRIVER ? "#8fb3e3" : "#4f86d0");
            if (b->count == 1)
                nvvp_tip_api(&v->tip, a);
            else
                nvvp_tip_group(&v->tip, b, "API calls", 0);
            break;
        }
        case ROW_RUN: {
            const char *site = nvvp_data_frame_site(v->d, v->r, key);
            if (*site)
                nvvp_sd_color(site, 68, color);
            else
                strcpy(color, "#cfcfcf");
            if (b->count == 1)
                nvvp_tip_run(&v->tip, &runs[b->ref]);
            else
                nvvp_tip_group(&v->tip, b, "sample stretches", 1);
            break;
        }
        default: {
            const nvvp_mark *m = &v->d->marks[b->ref];
            if (m->color)
                snprintf(color, sizeof color, "#%06x", (unsigned)(m->color & 0xffffffu));
            else
                nvvp_sd_color(name_pool_str(&v->d->pool, m->name), 60, color);
            if (b->count == 1)
                nvvp_tip_mark(&v->tip, m);
            else
                nvvp_tip_group(&v->tip, b, "markers and ranges", 0);
            break;
        }
        }
        if (b->count > 1 && b->end > b->start) {
            opacity = (double)b->busy_ns / ((double)b->end - (double)b->start);
            opacity = opacity < 0.35 ? 0.35 : opacity > 1 ? 1 : opacity;
        }
        nvvp_sd_box(&v->sd, g, b, top, color, opacity, v->tip.text);
    }
}

/* ------------------------------------------------------------------ */
/* GPU sections                                                         */
/* ------------------------------------------------------------------ */

typedef enum act_filter { F_COPY, F_COPY_OTHER, F_MEMSET, F_SYNC, F_KERNEL, F_KERNEL_NAME, F_STREAM } act_filter;

static int act_matches(const nvvp_act *a, act_filter f, uint32_t param, int64_t pid)
{
    switch (f) {
    case F_COPY: return a->kind == NVVP_ACT_MEMCPY && a->sub == param;
    case F_COPY_OTHER:
        return a->kind == NVVP_ACT_MEMCPY && a->sub != TRC_COPY_HTOD && a->sub != TRC_COPY_DTOH &&
               a->sub != TRC_COPY_DTOD && a->sub != TRC_COPY_PTOP;
    case F_MEMSET: return a->kind == NVVP_ACT_MEMSET;
    case F_SYNC: return a->kind == NVVP_ACT_SYNC;
    case F_KERNEL: return a->kind == NVVP_ACT_KERNEL;
    case F_KERNEL_NAME: return a->kind == NVVP_ACT_KERNEL && a->name == param;
    default: return a->kind != NVVP_ACT_SYNC && a->stream == param && a->pid == pid;
    }
}

/* Collect the device's activities passing f into v->spans; returns the
 * number collected. */
static size_t collect_acts(view *v, uint32_t device, act_filter f, uint32_t param, int64_t pid)
{
    v->n_spans = 0;
    for (size_t i = 0; i < v->d->n_acts && !v->oom; i++) {
        const nvvp_act *a = &v->d->acts[i];
        if (a->start > v->t1)
            break;
        if (a->end < v->t0 || a->device != device || !act_matches(a, f, param, pid))
            continue;
        add_span(v, a->start, a->end, (uint32_t)i, act_key(a));
    }
    return v->n_spans;
}

typedef struct kshare {
    uint32_t name;
    uint64_t ns;
} kshare;

static int cmp_kshare(const void *a, const void *b)
{
    const kshare *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns > y->ns ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name;
}

typedef struct stream_key {
    int64_t pid;
    uint32_t stream;
} stream_key;

static int cmp_stream(const void *a, const void *b)
{
    const stream_key *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->stream < y->stream ? -1 : x->stream > y->stream;
}

static void kernel_rows(view *v, uint32_t device)
{
    uint32_t nnames = name_pool_count(&v->d->pool);
    uint64_t *ns = trc_calloc(nnames, sizeof *ns);
    kshare *ks = NULL;
    size_t nks = 0;
    uint64_t total = 0;
    if (!ns) {
        v->oom = 1;
        return;
    }
    for (size_t i = 0; i < v->d->n_acts; i++) {
        const nvvp_act *a = &v->d->acts[i];
        if (a->start > v->t1)
            break;
        if (a->kind != NVVP_ACT_KERNEL || a->device != device || a->end < v->t0)
            continue;
        int64_t s = a->start < v->t0 ? v->t0 : a->start, e = a->end > v->t1 ? v->t1 : a->end;
        if (ns[a->name] == 0)
            nks++;
        ns[a->name] += (uint64_t)(e - s) + 1; /* +1: zero-length kernels still get a row */
        total += (uint64_t)(e - s) + 1;
    }
    ks = trc_malloc((nks ? nks : 1) * sizeof *ks);
    if (!ks) {
        v->oom = 1;
        goto out;
    }
    nks = 0;
    for (uint32_t id = 0; id < nnames; id++) {
        if (ns[id]) {
            ks[nks].name = id;
            ks[nks++].ns = ns[id];
        }
    }
    qsort(ks, nks, sizeof *ks, cmp_kshare);
    for (size_t i = 0; i < nks && i < NVVP_SVG_KERNEL_ROWS && !v->oom; i++) {
        char label[160], full[64];
        const char *name = name_pool_str(&v->d->pool, ks[i].name);
        snprintf(label, sizeof label, "%.1f%% %.120s", 100.0 * (double)ks[i].ns / (double)total,
                 *name ? name : "<unnamed kernel>");
        snprintf(full, sizeof full, "%.1f%% of kernel time: ", 100.0 * (double)ks[i].ns / (double)total);
        size_t tl = strlen(full) + strlen(name) + 1;
        char *tip = trc_malloc(tl);
        if (!tip) {
            v->oom = 1;
            break;
        }
        snprintf(tip, tl, "%s%s", full, name);
        collect_acts(v, device, F_KERNEL_NAME, ks[i].name, 0);
        draw_row(v, ROW_ACT, NULL, label, tip, 2, ROW_LANES);
        trc_free(tip);
    }
    if (nks > NVVP_SVG_KERNEL_ROWS) {
        uint64_t rest = 0;
        for (size_t i = NVVP_SVG_KERNEL_ROWS; i < nks; i++)
            rest += ks[i].ns;
        char note[160];
        snprintf(note, sizeof note, "... %zu more kernel functions (%.1f%% of kernel time), in Compute above",
                 nks - NVVP_SVG_KERNEL_ROWS, 100.0 * (double)rest / (double)total);
        nvvp_sd_note(&v->sd, note, 2);
    }
out:
    trc_free(ns);
    trc_free(ks);
}

static void stream_rows(view *v, uint32_t device)
{
    stream_key *keys = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < v->d->n_acts && !v->oom; i++) {
        const nvvp_act *a = &v->d->acts[i];
        if (a->device != device || a->kind == NVVP_ACT_SYNC)
            continue;
        size_t j;
        for (j = n; j > 0; j--)
            if (keys[j - 1].stream == a->stream && keys[j - 1].pid == a->pid)
                break;
        if (j > 0)
            continue;
        if (trcu_grow((void **)&keys, &cap, n, sizeof *keys) != TRC_OK) {
            v->oom = 1;
            break;
        }
        keys[n].pid = a->pid;
        keys[n++].stream = a->stream;
    }
    if (n)
        qsort(keys, n, sizeof *keys, cmp_stream);
    int many_pids = n > 1 && keys[0].pid != keys[n - 1].pid;
    for (size_t i = 0; i < n && !v->oom; i++) {
        char label[96];
        if (many_pids)
            snprintf(label, sizeof label, "Stream %u (pid %lld)", keys[i].stream, (long long)keys[i].pid);
        else
            snprintf(label, sizeof label, "Stream %u", keys[i].stream);
        collect_acts(v, device, F_STREAM, keys[i].stream, keys[i].pid);
        draw_row(v, ROW_ACT, NULL, label, NULL, 1, ROW_LANES);
    }
    trc_free(keys);
}

static void counter_chart(view *v, uint32_t id, int indent)
{
    const trc_counter_def *def = trc_reader_counter(v->r, id);
    const nvvp_series *se = &v->d->series[id];
    const char *name = def && def->name ? def->name : "counter";
    const char *unit = def && def->unit ? def->unit : "";
    double vmin = 0, vmax = 0, sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < se->n; i++) {
        if (se->v[i].t < v->t0 || se->v[i].t > v->t1)
            continue;
        double x = se->v[i].v;
        vmin = n == 0 || x < vmin ? x : vmin;
        vmax = n == 0 || x > vmax ? x : vmax;
        sum += x;
        n++;
    }
    char label[160], tip[512], color[8];
    snprintf(label, sizeof label, "%s%s%s%s", name, *unit ? " (" : "", unit, *unit ? ")" : "");
    if (n)
        snprintf(tip, sizeof tip, "%s: min %.6g, mean %.6g, max %.6g %s over %zu values in the window",
                 name, vmin, sum / (double)n, vmax, unit, n);
    else
        snprintf(tip, sizeof tip, "%s: no values in the window", name);
    nvvp_sd_color(name, 42, color);
    int pct = strcmp(unit, "percent") == 0 || strcmp(unit, "%") == 0;
    nvvp_sd_chart(&v->sd, label, indent, se->v, se->n, 0, pct ? 100 : 0, color, tip);
}

/* The exact busy row of a device: per bucket of the stage, the share
 * in which a kernel ran, a step chart on 0..100 like NVML's gpu.util
 * drawn under it, so the two can be compared (docs/gpu.md, "Exact busy
 * %": gpu.util only says that a kernel ran at some time of its period). */
static void busy_chart(view *v, uint32_t device)
{
    const exp_gpu_idle *g = v->busy;
    uint32_t i = 0, n_dev = g ? exp_gpu_idle_devices(g) : 0;
    exp_gpu_idle_device d = {0};
    while (i < n_dev) {
        exp_gpu_idle_device_at(g, i, &d);
        if (d.device == device)
            break;
        i++;
    }
    size_t n = 0;
    const uint64_t *ns = i < n_dev ? exp_gpu_idle_busy_buckets(g, i, &n) : NULL;
    if (!n || !d.span_ns || v->bucket_ns <= 0)
        return;
    nvvp_point *p = trc_calloc(n, sizeof *p);
    if (!p) {
        v->oom = 1;
        return;
    }
    int64_t start = exp_gpu_idle_span_start(g), b = v->bucket_ns;
    for (size_t k = 0; k < n; k++) {
        /* the last bucket ends with the span */
        int64_t len = k + 1 < n || d.span_ns % (uint64_t)b == 0 ? b
                                                                 : (int64_t)(d.span_ns % (uint64_t)b);
        p[k].t = start + (int64_t)k * b;
        p[k].v = 100.0 * (double)ns[k] / (double)len;
    }
    char tip[400], color[8];
    int w = snprintf(tip, sizeof tip,
                     "GPU busy (kernels): %.2f%% of %.3f ms (the union of its kernel intervals); "
                     "each step is the share of a %.3f ms bucket in which a kernel ran",
                     100.0 * (double)d.kernel_ns / (double)d.span_ns, (double)d.span_ns / 1e6,
                     (double)b / 1e6);
    if (d.nvml_util_n && w > 0 && (size_t)w < sizeof tip)
        snprintf(tip + w, sizeof tip - (size_t)w,
                 "; NVML gpu.util: mean %.2f%% of %llu samples (a kernel ran at some time in "
                 "each sample period)",
                 d.nvml_util_mean, (unsigned long long)d.nvml_util_n);
    nvvp_sd_color("GPU busy (kernels)", 42, color);
    nvvp_sd_chart(&v->sd, "GPU busy (kernels) (percent)", 1, p, n, 0, 100, color, tip);
    trc_free(p);
}

static int counter_in(view *v, uint32_t id, int64_t pid, int32_t device)
{
    if (id >= v->d->n_series || v->d->series[id].n == 0)
        return 0;
    const trc_counter_def *def = trc_reader_counter(v->r, id);
    int64_t cpid = def ? def->pid : -1;
    int32_t cdev = def ? def->device : -1;
    if (device >= 0)
        return cdev == device;
    return cdev < 0 && cpid == pid;
}

static void device_section(view *v, uint32_t device)
{
    static const struct { trc_copy_kind k; const char *label; } copies[4] = {
        {TRC_COPY_HTOD, "Memcpy (HtoD)"}, {TRC_COPY_DTOH, "Memcpy (DtoH)"},
        {TRC_COPY_DTOD, "Memcpy (DtoD)"}, {TRC_COPY_PTOP, "Memcpy (PtoP)"}};
    const trc_gpu_device *g = trc_reader_gpu_device(v->r, device);
    char label[256];
    if (g && g->name && *g->name)
        snprintf(label, sizeof label, "GPU %u: %.120s (%u SMs, %.1f GiB, compute %u.%u)", device,
                 g->name, g->sm_count, (double)g->memory_bytes / 1073741824.0, g->cc_major,
                 g->cc_minor);
    else
        snprintf(label, sizeof label, "GPU %u", device);
    nvvp_sd_section(&v->sd, label, 0);
    for (int i = 0; i < 4; i++)
        if (collect_acts(v, device, F_COPY, copies[i].k, 0))
            draw_row(v, ROW_ACT, NULL, copies[i].label, NULL, 1, ROW_LANES);
    if (collect_acts(v, device, F_COPY_OTHER, 0, 0))
        draw_row(v, ROW_ACT, NULL, "Memcpy (other kinds)", NULL, 1, ROW_LANES);
    if (collect_acts(v, device, F_MEMSET, 0, 0))
        draw_row(v, ROW_ACT, NULL, "Memset", NULL, 1, ROW_LANES);
    if (collect_acts(v, device, F_SYNC, 0, 0))
        draw_row(v, ROW_ACT, NULL, "Synchronization", NULL, 1, ROW_LANES);
    if (collect_acts(v, device, F_KERNEL, 0, 0)) {
        draw_row(v, ROW_ACT, NULL, "Compute", "all kernels; sub-rows when they run concurrently",
                 1, COMPUTE_LANES);
        kernel_rows(v, device);
    }
    stream_rows(v, device);
    busy_chart(v, device);
    for (uint32_t id = 1; id < v->d->n_series && !v->oom; id++)
        if (counter_in(v, id, -1, (int32_t)device))
            counter_chart(v, id, 1);
}

/* ------------------------------------------------------------------ */
/* Process sections                                                     */
/* ------------------------------------------------------------------ */

static int64_t thread_pid(view *v, uint32_t thread)
{
    const trc_thread *t = trc_reader_thread(v->r, thread);
    return t ? t->pid : -1;
}

static size_t api_count(view *v, uint32_t thread)
{
    return thread < v->n_threads ? v->api_off[thread + 1] - v->api_off[thread] : 0;
}

/* Group API call indices by thread (counting sort keeps start order). */
static void index_apis(view *v)
{
    uint32_t n = 0;
    for (size_t i = 0; i < v->d->n_apis; i++)
        if (v->d->apis[i].thread + 1 > n)
            n = v->d->apis[i].thread + 1;
    v->n_threads = n;
    v->api_off = trc_calloc((size_t)n + 1, sizeof *v->api_off);
    v->api_ix = trc_malloc((v->d->n_apis ? v->d->n_apis : 1) * sizeof *v->api_ix);
    if (!v->api_off || !v->api_ix) {
        v->oom = 1;
        return;
    }
    for (size_t i = 0; i < v->d->n_apis; i++)
        v->api_off[v->d->apis[i].thread + 1]++;
    for (uint32_t t = 0; t < n; t++)
        v->api_off[t + 1] += v->api_off[t];
    size_t *fill = trc_malloc(((size_t)n + 1) * sizeof *fill);
    if (!fill) {
        v->oom = 1;
        return;
    }
    memcpy(fill, v->api_off, ((size_t)n + 1) * sizeof *fill);
    for (size_t i = 0; i < v->d->n_apis; i++)
        v->api_ix[fill[v->d->apis[i].thread]++] = (uint32_t)i;
    trc_free(fill);
}

static size_t collect_marks(view *v, int64_t pid, uint32_t thread)
{
    v->n_spans = 0;
    for (size_t i = 0; i < v->d->n_marks && !v->oom; i++) {
        const nvvp_mark *m = &v->d->marks[i];
        if (m->start > v->t1)
            break;
        if (m->end < v->t0 || m->thread != thread || (thread == 0 && m->pid != pid))
            continue;
        add_span(v, m->start, m->end, (uint32_t)i, m->name);
    }
    return v->n_spans;
}

static void thread_rows(view *v, uint32_t thread)
{
    char label[256], tb[200];
    snprintf(label, sizeof label, "Thread %s", nvvp_tip_thread(v->r, thread, tb, sizeof tb));
    nvvp_sd_section(&v->sd, label, 1);
    if (thread < v->d->n_runs && v->d->runs[thread].n) {
        const nvvp_runs *rs = &v->d->runs[thread];
        v->n_spans = 0;
        for (size_t i = 0; i < rs->n && !v->oom; i++)
            if (rs->v[i].end >= v->t0 && rs->v[i].start <= v->t1)
                add_span(v, rs->v[i].start, rs->v[i].end, (uint32_t)i, rs->v[i].frame);
        draw_row(v, ROW_RUN, rs->v, "CPU samples (top Python frame)", NULL, 2, 1);
    }
    for (int dom = TRC_API_RUNTIME; dom <= TRC_API_OTHER; dom++) {
        v->n_spans = 0;
        size_t base = thread < v->n_threads ? v->api_off[thread] : 0;
        size_t n = api_count(v, thread), seen = 0;
        for (size_t k = 0; k < n && !v->oom; k++) {
            const nvvp_api *a = &v->d->apis[v->api_ix[base + k]];
            if (a->domain != dom && !(dom == TRC_API_OTHER && a->domain > TRC_API_OTHER))
                continue;
            seen++;
            if (a->start > v->t1 || a->end < v->t0)
                continue;
            add_span(v, a->start, a->end, v->api_ix[base + k], a->name);
        }
        if (seen)
            draw_row(v, ROW_API, NULL,
                     dom == TRC_API_RUNTIME ? "Runtime API" : dom == TRC_API_DRIVER ? "Driver API" : "Other API",
                     NULL, 2, ROW_LANES);
    }
    if (collect_marks(v, thread_pid(v, thread), thread))
        draw_row(v, ROW_MARK, NULL, "Markers and Ranges", "NVTX markers and ranges", 2, ROW_LANES);
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return *x < *y ? -1 : *x > *y;
}

typedef struct idlist {
    int64_t *v;
    size_t n, cap;
} idlist;

static void id_add(view *v, idlist *l, int64_t id)
{
    for (size_t i = l->n; i > 0; i--)
        if (l->v[i - 1] == id)
            return;
    if (trcu_grow((void **)&l->v, &l->cap, l->n, sizeof *l->v) != TRC_OK) {
        v->oom = 1;
        return;
    }
    l->v[l->n++] = id;
}

/* Threads that have anything to draw. */
static int thread_has_rows(view *v, uint32_t t)
{
    if ((t < v->d->n_runs && v->d->runs[t].n) || api_count(v, t))
        return 1;
    for (size_t i = 0; i < v->d->n_marks; i++)
        if (v->d->marks[i].thread == t)
            return 1;
    return 0;
}

static void process_sections(view *v)
{
    idlist pids = {0}, threads = {0};
    uint32_t maxt = v->n_threads > v->d->n_runs ? v->n_threads : v->d->n_runs;
    for (size_t i = 0; i < v->d->n_marks; i++)
        if (v->d->marks[i].thread + 1 > maxt)
            maxt = v->d->marks[i].thread + 1;
    for (uint32_t t = 1; t < maxt && !v->oom; t++) {
        if (!thread_has_rows(v, t))
            continue;
        id_add(v, &threads, t);
        id_add(v, &pids, thread_pid(v, t));
    }
    for (size_t i = 0; i < v->d->n_marks && !v->oom; i++)
        if (v->d->marks[i].thread == 0)
            id_add(v, &pids, v->d->marks[i].pid);
    for (uint32_t id = 1; id < v->d->n_series && !v->oom; id++) {
        const trc_counter_def *def = trc_reader_counter(v->r, id);
        if (def && def->pid >= 0 && def->device < 0 && v->d->series[id].n)
            id_add(v, &pids, def->pid);
    }
    if (pids.n)
        qsort(pids.v, pids.n, sizeof *pids.v, cmp_i64);
    for (size_t p = 0; p < pids.n && !v->oom; p++) {
        int64_t pid = pids.v[p];
        const trc_process *proc = pid >= 0 ? trc_reader_process_by_pid(v->r, pid) : NULL;
        char label[256];
        const char *what = proc ? (proc->command_line && *proc->command_line ? proc->command_line
                                                                              : proc->executable)
                                : NULL;
        if (pid < 0)
            snprintf(label, sizeof label, "Process unknown");
        else if (what && *what)
            snprintf(label, sizeof label, "Process %lld: %.200s", (long long)pid, what);
        else
            snprintf(label, sizeof label, "Process %lld", (long long)pid);
        nvvp_sd_section(&v->sd, label, 0);
        if (collect_marks(v, pid, 0))
            draw_row(v, ROW_MARK, NULL, "Markers and Ranges", "process-wide NVTX ranges", 1,
                     ROW_LANES);
        for (size_t i = 0; i < threads.n && !v->oom; i++)
            if (thread_pid(v, (uint32_t)threads.v[i]) == pid)
                thread_rows(v, (uint32_t)threads.v[i]);
        for (uint32_t id = 1; id < v->d->n_series && !v->oom; id++)
            if (counter_in(v, id, pid, -1))
                counter_chart(v, id, 1);
    }
    trc_free(pids.v);
    trc_free(threads.v);
}

/* ------------------------------------------------------------------ */
/* The document                                                         */
/* ------------------------------------------------------------------ */

static const char *loss_what(uint8_t kind)
{
    switch (kind) {
    case TRC_LOSS_SAMPLES_MISSED: return "samples missed by the recorder";
    case TRC_LOSS_SAMPLES_INVALID: return "samples dropped as invalid";
    case TRC_LOSS_SAMPLES_LATE: return "samples taken late";
    case TRC_LOSS_GPU_DROPPED: return "GPU activity records dropped by CUPTI";
    case TRC_LOSS_CHUNK_DAMAGED: return "damaged chunks";
    case TRC_LOSS_CHUNK_MISSING: return "missing chunks";
    case TRC_LOSS_TRUNCATED: return "truncated input";
    case TRC_LOSS_UNDEFINED_REF: return "records referring to lost definitions";
    default: return "records lost";
    }
}

static void heading(view *v, const nvvp_svg_opts *o)
{
    char title[512], detail[512], b1[GPU_NUM_BUF], b2[GPU_NUM_BUF], b3[GPU_NUM_BUF];
    uint64_t kernels = 0, copies = 0, others = 0, lost_gpu = 0;
    for (size_t i = 0; i < v->d->n_acts; i++) {
        const nvvp_act *a = &v->d->acts[i];
        if (a->end < v->t0 || a->start > v->t1)
            continue;
        if (a->kind == NVVP_ACT_KERNEL)
            kernels++;
        else if (a->kind == NVVP_ACT_MEMCPY)
            copies++;
        else
            others++;
    }
    for (size_t i = 0; i < v->d->n_losses; i++)
        if (v->d->losses[i].kind == TRC_LOSS_GPU_DROPPED)
            lost_gpu += v->d->losses[i].count;
    if (o->title)
        snprintf(title, sizeof title, "%s", o->title);
    else
        snprintf(title, sizeof title, "trc2nvvp: %.400s", name_pool_str(&v->d->pool, v->d->command));
    int k = snprintf(detail, sizeof detail,
                     "window %s to %s (%s)  |  %llu kernels, %llu copies, %llu memsets/syncs  |  %zu API calls",
                     gpu_fmt_time(b1, gpu_tsub(v->t0, v->origin), 6),
                     gpu_fmt_time(b2, gpu_tsub(v->t1, v->origin), 6),
                     gpu_fmt_time(b3, gpu_tsub(v->t1, v->t0), 5), (unsigned long long)kernels,
                     (unsigned long long)copies, (unsigned long long)others, v->d->n_apis);
    if (lost_gpu && k > 0 && (size_t)k < sizeof detail)
        snprintf(detail + k, sizeof detail - (size_t)k,
                 "  |  %llu GPU records dropped: GPU rows are incomplete", (unsigned long long)lost_gpu);
    nvvp_sd_heading(&v->sd, title, detail);
}

static void loss_bands(view *v)
{
    for (size_t i = 0; i < v->d->n_losses && !v->sd.oom; i++) {
        const nvvp_lossrec *l = &v->d->losses[i];
        if (l->start == 0 && l->end == 0)
            continue;
        char tip[160];
        snprintf(tip, sizeof tip, "%llu %s", (unsigned long long)l->count, loss_what(l->kind));
        nvvp_sd_band(&v->sd, l->start, l->end, "#d62728", tip);
    }
}

static void devices(view *v)
{
    idlist devs = {0};
    for (size_t i = 0; i < v->d->n_acts && !v->oom; i++)
        if (devs.n == 0 || devs.v[devs.n - 1] != v->d->acts[i].device)
            id_add(v, &devs, v->d->acts[i].device);
    for (uint32_t id = 1; id < v->d->n_series && !v->oom; id++) {
        const trc_counter_def *def = trc_reader_counter(v->r, id);
        if (def && def->device >= 0 && v->d->series[id].n)
            id_add(v, &devs, def->device);
    }
    if (devs.n)
        qsort(devs.v, devs.n, sizeof *devs.v, cmp_i64);
    for (size_t i = 0; i < devs.n && !v->oom; i++)
        device_section(v, (uint32_t)devs.v[i]);
    trc_free(devs.v);
}

static void system_counters(view *v)
{
    int any = 0;
    for (uint32_t id = 1; id < v->d->n_series && !v->oom; id++) {
        if (!counter_in(v, id, -1, -1))
            continue;
        if (!any++)
            nvvp_sd_section(&v->sd, "System", 0);
        counter_chart(v, id, 1);
    }
}

trc_status nvvp_svg_write(nvvp_data *d, trc_reader *r, const nvvp_svg_opts *o, FILE *out)
{
    view *v = trc_calloc(1, sizeof *v);
    trc_status st = TRC_OK;
    if (!v)
        return TRC_ERR_NOMEM;
    v->d = d;
    v->r = r;
    v->tip.d = d;
    v->tip.r = r;
    v->busy = o->busy;
    v->bucket_ns = o->busy_bucket_ns;
    v->origin = d->trace_start ? d->trace_start : (d->t_min <= d->t_max ? d->t_min : 0);
    int64_t first = d->t_min <= d->t_max ? d->t_min : v->origin;
    int64_t last = d->t_min <= d->t_max ? d->t_max : v->origin;
    /* like NVVP: without --from the picture starts at the first event,
     * while the axis still counts from the trace start */
    v->t0 = o->from_ns >= 0 ? (int64_t)((uint64_t)v->origin + (uint64_t)o->from_ns) : first;
    v->t1 = o->to_ns >= 0 ? (int64_t)((uint64_t)v->origin + (uint64_t)o->to_ns) : last;
    if (v->t0 > INT64_MAX - 1000000)  /* hostile times: room for the span below */
        v->t0 = INT64_MAX - 1000000;
    if (v->t1 <= v->t0)
        v->t1 = v->t0 + 1000000;
    v->tip.origin = v->origin;
    if (nvvp_sd_open(&v->sd, o->width > 0 ? o->width : NVVP_SVG_DEFAULT_WIDTH, v->t0, v->t1,
                     v->origin) != 0) {
        st = TRC_ERR_NOMEM;
        goto out;
    }
    index_apis(v);
    heading(v, o);
    process_sections(v);
    devices(v);
    system_counters(v);
    loss_bands(v);
    if (v->oom || v->sd.oom) {
        nvvp_sd_discard(&v->sd);
        st = TRC_ERR_NOMEM;
        goto out;
    }
    int rc = nvvp_sd_close(&v->sd, out);
    st = rc == 0 ? TRC_OK : rc == -1 ? TRC_ERR_NOMEM : TRC_ERR_IO;
out:
    trc_free(v->spans);
    nvvp_boxes_cleanup(&v->boxes);
    trc_free(v->api_off);
    trc_free(v->api_ix);
    trc_free(v);
    return st;
}
