/*
 * lib/export/speedscope/speedscope_gpu.c — evented speedscope profiles of GPU
 * streams (see speedscope_gpu.h for what is shown and how overlaps are
 * made valid; docs/design/outputs.md §1 for the format).
 */
#include "lib/export/speedscope/speedscope_gpu.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/export/common/gpu_units.h"

#define NO_STREAM UINT32_MAX

typedef struct ival {
    int64_t start, end;
    uint32_t frame;      /* view frame index */
    uint32_t seq;        /* arrival order within the stream: ties keep it */
} ival;

typedef struct gstream {
    uint32_t device, context, stream;
    int64_t owner;       /* process */
    ival *iv;
    uint32_t n, cap;
} gstream;

typedef struct openiv {
    int64_t end;
    uint32_t frame;
} openiv;

struct sgpu {
    gstream *streams;    /* in order of first activity */
    uint32_t n_streams, cap_streams;
    uint32_t last;       /* cache: index of the last stream used */
    openiv *open;        /* scratch for sgpu_write */
    uint32_t cap_open;
    int have_first;
    int64_t first_ns;
};

sgpu *sgpu_new(void)
{
    return trc_calloc(1, sizeof(sgpu));
}

void sgpu_free(sgpu *g)
{
    if (!g)
        return;
    for (uint32_t i = 0; i < g->n_streams; i++)
        trc_free(g->streams[i].iv);
    trc_free(g->streams);
    trc_free(g->open);
    trc_free(g);
}

static gstream *find_stream(sgpu *g, const trc_gpu_where *w)
{
    gstream *s;

    for (uint32_t k = 0; k < g->n_streams; k++) {
        uint32_t i = (g->last + k) % g->n_streams; /* the last one used first */
        s = &g->streams[i];
        if (s->stream == w->stream && s->device == w->device && s->context == w->context &&
            s->owner == w->pid) {
            g->last = i;
            return s;
        }
    }
    if (trcu_grow32(&g->streams, &g->cap_streams, g->n_streams, sizeof *g->streams))
        return NULL;
    s = &g->streams[g->n_streams];
    memset(s, 0, sizeof *s);
    s->device = w->device;
    s->context = w->context;
    s->stream = w->stream;
    s->owner = w->pid;
    g->last = g->n_streams++;
    return s;
}

trc_status sgpu_event(sgpu *g, cpuview *view, const trc_event *ev)
{
    const trc_gpu_where *w;
    const char *name;
    int64_t start, end;
    uint32_t frame;
    gstream *s;

    switch (ev->type) {
    case TRC_EV_GPU_KERNEL:
        w = &ev->u.kernel.where;
        name = ev->u.kernel.name;
        start = ev->u.kernel.start_ns;
        end = ev->u.kernel.end_ns;
        break;
    case TRC_EV_GPU_MEMCPY:
        w = &ev->u.memcpy.where;
        name = gpu_copy_name(ev->u.memcpy.copy_kind);
        start = ev->u.memcpy.start_ns;
        end = ev->u.memcpy.end_ns;
        break;
    case TRC_EV_GPU_MEMSET:
        w = &ev->u.memset.where;
        name = gpu_memset_name();
        start = ev->u.memset.start_ns;
        end = ev->u.memset.end_ns;
        break;
    default:
        return TRC_OK;
    }
    if (end <= start)
        return TRC_OK; /* zero-length: no time to show */
    if (cpuview_intern_frame(view, TRC_FRAME_GPU_KERNEL, name && name[0] ? name : "<unknown kernel>",
                             "", 0, &frame) != TRC_OK ||
        !(s = find_stream(g, w)) || s->n == UINT32_MAX ||
        trcu_grow32(&s->iv, &s->cap, s->n, sizeof *s->iv))
        return TRC_ERR_NOMEM;
    s->iv[s->n].start = start;
    s->iv[s->n].end = end;
    s->iv[s->n].frame = frame;
    s->iv[s->n].seq = s->n;
    s->n++;
    if (!g->have_first || start < g->first_ns) {
        g->have_first = 1;
        g->first_ns = start;
    }
    return TRC_OK;
}

int64_t sgpu_first_ns(const sgpu *g, int *have)
{
    *have = g->have_first;
    return g->have_first ? g->first_ns : 0;
}

uint32_t sgpu_profile_count(const sgpu *g)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->n_streams; i++)
        n += g->streams[i].n > 0;
    return n;
}

static int ival_cmp(const void *pa, const void *pb)
{
    const ival *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->end != b->end)
        return a->end > b->end ? -1 : 1; /* the longer first: it is the parent */
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Profiles by device, stream, process, context. */
static int stream_cmp(const void *pa, const void *pb)
{
    const gstream *a = pa, *b = pb;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    if (a->stream != b->stream)
        return a->stream < b->stream ? -1 : 1;
    if (a->owner != b->owner)
        return a->owner < b->owner ? -1 : 1;
    return a->context < b->context ? -1 : a->context > b->context;
}

/* a - b modulo 2^64 (spec §2.6): hostile times must not overflow. */
static inline int64_t tsub(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a - (uint64_t)b);
}

static void write_event(jsonw *out, int *n, char type, int64_t at, uint32_t frame)
{
    jsonw_raw(out, (*n)++ ? ",\n{\"type\":\"" : "\n{\"type\":\"");
    jsonw_putc(out, type);
    jsonw_raw(out, "\",\"at\":");
    jsonw_i64(out, at);
    jsonw_raw(out, ",\"frame\":");
    jsonw_u64(out, frame);
    jsonw_putc(out, '}');
}

/* 1 if another profile shows the same device and stream number. */
static int shared_number(const sgpu *g, const gstream *s)
{
    for (uint32_t i = 0; i < g->n_streams; i++) {
        const gstream *o = &g->streams[i];
        if (o != s && o->n && o->device == s->device && o->stream == s->stream)
            return 1;
    }
    return 0;
}

/* The O/C events of stream s (sorted), with the nesting rules of the
 * header; *last gets the time of the last event. */
static trc_status write_events(sgpu *g, jsonw *out, const gstream *s, int64_t start_ns,
                               int64_t *last)
{
    uint32_t depth = 0;
    int64_t cursor = INT64_MIN; /* time of the last event written */
    int n = 0;

    for (uint32_t i = 0; i < s->n; i++) {
        const ival *x = &s->iv[i];
        int64_t b = x->start > cursor ? x->start : cursor;
        while (depth > 0) {
            const openiv *top = &g->open[depth - 1];
            if (top->end > b && top->end >= x->end)
                break; /* x lies inside top: nest it */
            /* top ended before x begins, or x would outlive it: close
             * top, and x (clipped) begins no earlier than that. */
            write_event(out, &n, 'C', tsub(top->end, start_ns), top->frame);
            cursor = top->end;
            if (b < cursor)
                b = cursor;
            depth--;
        }
        if (b >= x->end)
            continue; /* hidden by the intervals before it */
        if (trcu_grow32(&g->open, &g->cap_open, depth, sizeof *g->open))
            return TRC_ERR_NOMEM;
        write_event(out, &n, 'O', tsub(b, start_ns), x->frame);
        cursor = b;
        g->open[depth].end = x->end;
        g->open[depth].frame = x->frame;
        depth++;
    }
    while (depth > 0) {
        depth--;
        write_event(out, &n, 'C', tsub(g->open[depth].end, start_ns), g->open[depth].frame);
        cursor = g->open[depth].end;
    }
    *last = cursor;
    return TRC_OK;
}

trc_status sgpu_write(sgpu *g, const trc_reader *r, jsonw *out, int64_t start_ns, int *first)
{
    if (g->n_streams > 1) /* qsort of NULL is undefined even for 0 items */
        qsort(g->streams, g->n_streams, sizeof *g->streams, stream_cmp);
    g->last = 0;
    for (uint32_t i = 0; i < g->n_streams; i++) {
        gstream *s = &g->streams[i];
        int64_t last;
        trc_status st;

        if (!s->n)
            continue;
        qsort(s->iv, s->n, sizeof *s->iv, ival_cmp);
        jsonw_raw(out, *first ? "\n{\"type\":\"evented\",\"name\":\"GPU "
                              : ",\n{\"type\":\"evented\",\"name\":\"GPU ");
        *first = 0;
        jsonw_u64(out, s->device);
        if (s->stream == NO_STREAM) {
            jsonw_raw(out, " context ");
            jsonw_u64(out, s->context);
        } else {
            jsonw_raw(out, " stream ");
            jsonw_u64(out, s->stream);
            if (shared_number(g, s)) {
                jsonw_raw(out, " (pid ");
                jsonw_i64(out, s->owner);
                jsonw_raw(out, ", context ");
                jsonw_u64(out, s->context);
                jsonw_putc(out, ')');
            }
        }
        /* endValue is only known after the events: it goes last. */
        jsonw_raw(out, "\",\"unit\":\"nanoseconds\",\"startValue\":");
        jsonw_i64(out, tsub(s->iv[0].start, start_ns));
        jsonw_raw(out, ",\n\"events\":[");
        if ((st = write_events(g, out, s, start_ns, &last)) != TRC_OK)
            return st;
        jsonw_raw(out, "],\n\"endValue\":");
        jsonw_i64(out, tsub(last, start_ns));
        jsonw_putc(out, '}');
    }
    (void)r;
    return TRC_OK;
}
