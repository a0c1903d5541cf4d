/*
 * lib/export/speedscope/speedscope_gpu.c — evented speedscope profiles of GPU
 * streams (see speedscope_gpu.h for what is shown and how overlaps are
 * made valid; docs/design/outputs.md §1 for the format).
 *
 * Each stream's intervals must be written sorted, and only after every
 * CPU profile, so they are kept until the end, but not in memory: a
 * stream holds at most `spool` of them; a full buffer is sorted, its
 * lower half appended to a temporary file (a "run", sorted) and the
 * upper half kept, so that intervals arriving a little out of order
 * still extend the same run.  One that sorts before what its stream
 * already spilled starts a new run.  The write merges a stream's runs
 * and what is left in memory; the order is total (start, longer first,
 * arrival), so the result is the one a sort of everything would give.
 * A stream delivered in order (CUDA runs its work one item at a time)
 * makes one run, read back a block at a time.
 */
#include "lib/export/speedscope/speedscope_gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/util/spill.h"
#include "lib/export/common/gpu_units.h"

#define NO_STREAM UINT32_MAX
#define DEFAULT_SPOOL 4096u
#define READ_BLOCK 256u  /* intervals of a run read back at once */

typedef struct ival {
    int64_t start, end;
    uint32_t frame;      /* view frame index */
    uint32_t seq;        /* arrival order within the stream: ties keep it */
} ival;

/* A block of sorted intervals in the temporary file; consecutive blocks
 * of a stream form one sorted run until one has new_run set. */
typedef struct spillblk {
    int64_t off;         /* offset in the temporary file */
    uint32_t n;          /* intervals */
    uint32_t new_run;    /* 1: sorts before the block before it */
} spillblk;

typedef struct gstream {
    uint32_t device, context, stream;
    int64_t owner;       /* process */
    ival *iv;            /* in memory, arrival order (sorted halves once spilled) */
    uint32_t n, cap;
    uint32_t total;      /* intervals kept, spilled ones included */
    int64_t min_start;   /* the first one's start once sorted (valid when total) */
    spillblk *blocks;
    uint32_t n_blocks, cap_blocks;
    ival last_spilled;   /* the greatest interval spilled (valid when n_blocks) */
} gstream;

typedef struct openiv {
    int64_t end;
    uint32_t frame;
} openiv;

/* One sorted run of a stream, or its intervals in memory, read in
 * order while a stream's runs are merged (sgpu_write). */
typedef struct cursor {
    ival *buf;           /* READ_BLOCK intervals read back, or the stream's own */
    uint32_t pos, n;     /* buf[pos..n) are next */
    uint32_t blk, blk_end; /* the run's blocks not finished yet */
    int64_t off;         /* where the rest of block blk is */
    uint32_t left;       /* its intervals not read yet */
} cursor;

struct sgpu {
    gstream *streams;    /* in order of first activity */
    uint32_t n_streams, cap_streams;
    uint32_t last;       /* cache: index of the last stream used */
    uint32_t spool;      /* intervals kept in memory per stream */
    trcu_spill spill;    /* the streams' spilled runs, empty until needed */
    openiv *open;        /* scratch for sgpu_write */
    uint32_t cap_open;
    cursor *cur;         /* scratch for sgpu_write: one per run, + memory */
    uint32_t cap_cur;
    int have_first;
    int64_t first_ns;
};

sgpu *sgpu_new(uint32_t spool)
{
    sgpu *g = trc_calloc(1, sizeof(sgpu));
    if (g)
        g->spool = spool ? spool : DEFAULT_SPOOL;
    return g;
}

void sgpu_free(sgpu *g)
{
    if (!g)
        return;
    for (uint32_t i = 0; i < g->n_streams; i++) {
        trc_free(g->streams[i].iv);
        trc_free(g->streams[i].blocks);
    }
    for (uint32_t i = 0; i < g->cap_cur; i++)
        trc_free(g->cur[i].buf);
    trc_free(g->cur);
    trc_free(g->streams);
    trc_free(g->open);
    trcu_spill_close(&g->spill);
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

static int ival_cmp(const void *pa, const void *pb)
{
    const ival *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->end != b->end)
        return a->end > b->end ? -1 : 1; /* the longer first: it is the parent */
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Sort s's full buffer and move its lower half to the temporary file:
 * the upper half stays, so that an interval arriving a little late
 * still sorts after what was spilled.  TRC_OK, TRC_ERR_NOMEM or
 * TRC_ERR_IO. */
static trc_status spill_half(sgpu *g, gstream *s)
{
    uint32_t k = s->n / 2 ? s->n / 2 : s->n;

    qsort(s->iv, s->n, sizeof *s->iv, ival_cmp);
    if (trcu_grow32(&s->blocks, &s->cap_blocks, s->n_blocks, sizeof *s->blocks))
        return TRC_ERR_NOMEM;
    if (trcu_spill_append(&g->spill, s->iv, k, sizeof *s->iv, &s->blocks[s->n_blocks].off))
        return TRC_ERR_IO;
    s->blocks[s->n_blocks].n = k;
    s->blocks[s->n_blocks].new_run =
        s->n_blocks && ival_cmp(&s->iv[0], &s->last_spilled) < 0;
    s->n_blocks++;
    s->last_spilled = s->iv[k - 1];
    memmove(s->iv, s->iv + k, (s->n - k) * sizeof *s->iv);
    s->n -= k;
    return TRC_OK;
}

trc_status sgpu_event(sgpu *g, cpuview *view, const trc_event *ev)
{
    const trc_gpu_where *w;
    const char *name;
    int64_t start, end;
    uint32_t frame;
    gstream *s;
    trc_status st;

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
        !(s = find_stream(g, w)) || s->total == UINT32_MAX)
        return TRC_ERR_NOMEM;
    if (s->n >= g->spool && (st = spill_half(g, s)) != TRC_OK)
        return st;
    if (trcu_grow32(&s->iv, &s->cap, s->n, sizeof *s->iv))
        return TRC_ERR_NOMEM;
    s->iv[s->n].start = start;
    s->iv[s->n].end = end;
    s->iv[s->n].frame = frame;
    s->iv[s->n].seq = s->total;
    s->n++;
    if (!s->total++ || start < s->min_start)
        s->min_start = start;
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
        n += g->streams[i].total > 0;
    return n;
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
        if (o != s && o->total && o->device == s->device && o->stream == s->stream)
            return 1;
    }
    return 0;
}

/* ---- merging a stream's runs ---- */

/* Make c's next interval available; 0 when the run is done, -1 on a
 * read error. */
static int cursor_fill(sgpu *g, const gstream *s, cursor *c)
{
    if (c->pos < c->n)
        return 1;
    while (!c->left) {
        if (c->blk >= c->blk_end)
            return 0;
        c->off = s->blocks[c->blk].off;
        c->left = s->blocks[c->blk].n;
        c->blk++;
    }
    uint32_t k = c->left < READ_BLOCK ? c->left : READ_BLOCK;
    if (trcu_spill_read(&g->spill, c->off, c->buf, k, sizeof *c->buf))
        return -1;
    c->off += (int64_t)(k * sizeof *c->buf);
    c->left -= k;
    c->pos = 0;
    c->n = k;
    return 1;
}

/* Set up g->cur for stream s: one cursor per run of its blocks, and
 * the last for its intervals in memory (sorted here); *n_cur gets how
 * many.  TRC_OK, TRC_ERR_NOMEM or TRC_ERR_IO. */
static trc_status cursors_open(sgpu *g, gstream *s, uint32_t *n_cur)
{
    uint32_t k = 0;

    if (s->n > 1)
        qsort(s->iv, s->n, sizeof *s->iv, ival_cmp);
    if (s->n_blocks && trcu_spill_flush(&g->spill))
        return TRC_ERR_IO;
    for (uint32_t b = 0; b <= s->n_blocks; b++) {
        if (b < s->n_blocks && b && !s->blocks[b].new_run) {
            g->cur[k - 1].blk_end = b + 1; /* extends the run before */
            continue;
        }
        /* new cursors come zeroed (buf NULL); a buffer, once made, is
         * kept for the next streams */
        if (trcu_grow32(&g->cur, &g->cap_cur, k, sizeof *g->cur))
            return TRC_ERR_NOMEM;
        cursor *c = &g->cur[k++];
        c->pos = c->n = c->left = 0;
        if (b == s->n_blocks) { /* what is still in memory */
            c->blk = c->blk_end = 0;
            c->n = s->n;
            continue;
        }
        c->blk = b;
        c->blk_end = b + 1;
        if (!c->buf && !(c->buf = trc_malloc(READ_BLOCK * sizeof *c->buf)))
            return TRC_ERR_NOMEM;
    }
    *n_cur = k;
    return TRC_OK;
}

/* The next interval of stream s in sorted order: the least of the
 * cursors' heads (runs are few: one for a stream delivered in order).
 * NULL when all are done; *err set on a read error. */
static const ival *merge_next(sgpu *g, const gstream *s, uint32_t n_cur, int *err)
{
    cursor *best = NULL;
    const ival *bv = NULL;

    for (uint32_t i = 0; i < n_cur; i++) {
        cursor *c = &g->cur[i];
        const ival *v;
        if (i + 1 == n_cur) { /* memory */
            if (c->pos >= c->n)
                continue;
            v = &s->iv[c->pos];
        } else {
            int r = cursor_fill(g, s, c);
            if (r < 0) {
                *err = 1;
                return NULL;
            }
            if (!r)
                continue;
            v = &c->buf[c->pos];
        }
        if (!bv || ival_cmp(v, bv) < 0) {
            bv = v;
            best = c;
        }
    }
    if (best)
        best->pos++;
    return bv;
}

/* The O/C events of stream s (in sorted order), with the nesting rules
 * of the header; *last gets the time of the last event. */
static trc_status write_events(sgpu *g, jsonw *out, gstream *s, int64_t start_ns, int64_t *last)
{
    uint32_t depth = 0, n_cur;
    int64_t cursor_ns = INT64_MIN; /* time of the last event written */
    int n = 0, err = 0;
    const ival *x;
    trc_status st;

    if ((st = cursors_open(g, s, &n_cur)) != TRC_OK)
        return st;
    while ((x = merge_next(g, s, n_cur, &err)) != NULL) {
        int64_t b = x->start > cursor_ns ? x->start : cursor_ns;
        while (depth > 0) {
            const openiv *top = &g->open[depth - 1];
            if (top->end > b && top->end >= x->end)
                break; /* x lies inside top: nest it */
            /* top ended before x begins, or x would outlive it: close
             * top, and x (clipped) begins no earlier than that. */
            write_event(out, &n, 'C', tsub(top->end, start_ns), top->frame);
            cursor_ns = top->end;
            if (b < cursor_ns)
                b = cursor_ns;
            depth--;
        }
        if (b >= x->end)
            continue; /* hidden by the intervals before it */
        if (trcu_grow32(&g->open, &g->cap_open, depth, sizeof *g->open))
            return TRC_ERR_NOMEM;
        write_event(out, &n, 'O', tsub(b, start_ns), x->frame);
        cursor_ns = b;
        g->open[depth].end = x->end;
        g->open[depth].frame = x->frame;
        depth++;
    }
    if (err)
        return TRC_ERR_IO;
    while (depth > 0) {
        depth--;
        write_event(out, &n, 'C', tsub(g->open[depth].end, start_ns), g->open[depth].frame);
        cursor_ns = g->open[depth].end;
    }
    *last = cursor_ns;
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

        if (!s->total)
            continue;
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
        jsonw_i64(out, tsub(s->min_start, start_ns));
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
