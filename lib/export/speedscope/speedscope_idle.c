/*
 * lib/export/speedscope/speedscope_idle.c — trc2speedscope --gpu-idle
 * (declared in speedscope.h): GPU idle time by the feeding threads'
 * stacks (lib/export/common/gpu_idle.h) as speedscope JSON, one sampled
 * profile per device and kind ("GPU 0 idle", "GPU 0 copies only"), each
 * charge one sample whose weight is its nanoseconds and whose stack is
 * the root frame of the folded views ("[GPU 0 idle]") then the sampled
 * Python stack, so the profiles' totals are trc2collapsed --gpu-idle's.
 */
#include "lib/export/speedscope/speedscope.h"

#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/util/hashtab.h"
#include "lib/export/common/collapsed.h"
#include "lib/export/common/json_out.h"


typedef struct charge {
    uint32_t device, thread, stack;
    exp_gpu_idle_kind kind;
    uint64_t ns;
} charge;

typedef struct idle_json {
    exp_gpu_idle *idle;
    charge *ch;
    size_t n_ch, cap_ch;
    trch_u64map frame_ix;     /* reader frame id → index in the frames list */
    uint32_t *frames;         /* reader frame ids, in index order (0: no frames) */
    size_t n_frames, cap_frames;
} idle_json;

static void destroy(void *self)
{
    idle_json *s = self;
    if (!s)
        return;
    exp_gpu_idle_free(s->idle);
    trc_free(s->ch);
    trch_u64map_cleanup(&s->frame_ix);
    trc_free(s->frames);
    trc_free(s);
}

static void *create(const void *opts)
{
    idle_json *s = trc_calloc(1, sizeof *s);
    if (s && !(s->idle = exp_gpu_idle_new(opts))) {
        destroy(s);
        return NULL;
    }
    return s;
}

static trc_status event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    idle_json *s = self;
    return exp_gpu_idle_event(s->idle, r, ev);
}

static trc_status keep(void *ctx, uint32_t device, exp_gpu_idle_kind kind, uint32_t thread,
                       uint32_t stack, uint64_t ns)
{
    idle_json *s = ctx;
    trc_status st = trcu_grow((void **)&s->ch, &s->cap_ch, s->n_ch, sizeof *s->ch);
    if (st == TRC_OK)
        s->ch[s->n_ch++] = (charge){device, thread, stack, kind, ns};
    return st;
}

/* Index of a reader frame (0 = "no Python frames") in the frames list. */
static trc_status frame_index(idle_json *s, uint32_t frame, uint32_t *ix)
{
    int added;
    trc_status st = trcu_grow((void **)&s->frames, &s->cap_frames, s->n_frames,
                              sizeof *s->frames);
    if (st == TRC_OK)
        st = trch_u64map_put(&s->frame_ix, frame, (uint32_t)s->n_frames, ix, &added);
    if (st == TRC_OK && added)
        s->frames[s->n_frames++] = frame;
    return st;
}

/* Root first: the reader frame ids of a stack into *path; *n of them. */
static trc_status stack_path(const trc_reader *r, uint32_t stack, uint32_t **path, size_t *cap,
                             size_t *n)
{
    *n = 0;
    for (const trc_stack *k = stack ? trc_reader_stack(r, stack) : NULL; k && k->id;
         k = trc_reader_stack(r, k->parent)) {
        trc_status st = trcu_grow((void **)path, cap, *n, sizeof **path);
        if (st != TRC_OK)
            return st;
        (*path)[(*n)++] = k->frame;
        if (k->parent >= k->id)
            break; /* the reader guarantees parent < id; never loop */
    }
    for (size_t i = 0; i < *n / 2; i++) {
        uint32_t t = (*path)[i];
        (*path)[i] = (*path)[*n - 1 - i];
        (*path)[*n - 1 - i] = t;
    }
    if (*n == 0) { /* no Python frames: frame 0 stands for them */
        trc_status st = trcu_grow((void **)path, cap, 0, sizeof **path);
        if (st != TRC_OK)
            return st;
        (*path)[(*n)++] = 0;
    }
    return TRC_OK;
}

static void write_frames(idle_json *s, const trc_reader *r, jsonw *o, char (*roots)[32],
                         uint32_t n_prof)
{
    for (size_t i = 0; i < s->n_frames; i++) {
        const trc_frame *f = s->frames[i] ? trc_reader_frame(r, s->frames[i]) : NULL;
        jsonw_raw(o, i ? ",{\"name\":" : "{\"name\":");
        jsonw_str(o, !s->frames[i] ? EXP_NO_PYTHON_FRAMES
                     : f && f->function && *f->function ? f->function : "<unknown>");
        if (f && f->file && *f->file) {
            jsonw_raw(o, ",\"file\":");
            jsonw_str(o, f->file);
            if (f->line) {
                jsonw_raw(o, ",\"line\":");
                jsonw_u64(o, f->line);
            }
        }
        jsonw_putc(o, '}');
    }
    for (uint32_t p = 0; p < n_prof; p++) {
        jsonw_raw(o, s->n_frames || p ? ",{\"name\":" : "{\"name\":");
        jsonw_str(o, roots[p]);
        jsonw_putc(o, '}');
    }
}

/* At most this many profiles (device x kind): more than a viewer lists. */
#define MAX_PROFILES 64

static trc_status finish(void *self, trc_reader *r, FILE *out)
{
    idle_json *s = self;
    trc_status st = exp_gpu_idle_finish(s->idle, r);
    if (st == TRC_OK)
        st = exp_gpu_idle_each(s->idle, keep, s);
    uint32_t *path = NULL;
    size_t cap = 0, n;
    /* the profiles, in order of first charge; the frames' indices */
    uint32_t prof_dev[MAX_PROFILES], n_prof = 0;
    exp_gpu_idle_kind prof_kind[MAX_PROFILES];
    char roots[MAX_PROFILES][32];
    for (size_t i = 0; i < s->n_ch && st == TRC_OK; i++) {
        uint32_t p = 0;
        while (p < n_prof && (prof_dev[p] != s->ch[i].device || prof_kind[p] != s->ch[i].kind))
            p++;
        if (p == n_prof && n_prof < MAX_PROFILES) {
            prof_dev[n_prof] = s->ch[i].device;
            prof_kind[n_prof] = s->ch[i].kind;
            exp_gpu_idle_root(roots[n_prof], sizeof roots[0], s->ch[i].device, s->ch[i].kind);
            n_prof++;
        }
        st = stack_path(r, s->ch[i].stack, &path, &cap, &n);
        for (size_t k = 0; k < n && st == TRC_OK; k++) {
            uint32_t ix;
            st = frame_index(s, path[k], &ix);
        }
    }
    jsonw o;
    if (st == TRC_OK && jsonw_open(&o, out) != 0)
        st = TRC_ERR_NOMEM;
    if (st != TRC_OK) {
        trc_free(path);
        return st;
    }
    jsonw_raw(&o, "{\"$schema\":\"" SPEEDSCOPE_SCHEMA "\",\n\"exporter\":\"trc@");
    jsonw_str_body(&o, trc_version(), strlen(trc_version()));
    jsonw_raw(&o, "\",\"name\":");
    jsonw_str(&o, "GPU idle time by the feeding threads' stacks");
    jsonw_raw(&o, ",\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[");
    write_frames(s, r, &o, roots, n_prof);
    jsonw_raw(&o, "]},\n\"profiles\":[");
    for (uint32_t p = 0; p < n_prof && st == TRC_OK; p++) {
        jsonw_raw(&o, p ? ",\n{\"type\":\"sampled\",\"name\":" : "{\"type\":\"sampled\",\"name\":");
        jsonw_strn(&o, roots[p] + 1, strlen(roots[p]) - 2); /* without the brackets */
        jsonw_raw(&o, ",\"unit\":\"nanoseconds\",\"startValue\":0,\"samples\":[");
        uint64_t total = 0;
        size_t k = 0;
        for (size_t i = 0; i < s->n_ch && st == TRC_OK; i++) {
            if (s->ch[i].device != prof_dev[p] || s->ch[i].kind != prof_kind[p])
                continue;
            st = stack_path(r, s->ch[i].stack, &path, &cap, &n);
            jsonw_raw(&o, k++ ? ",[" : "[");
            jsonw_u64(&o, s->n_frames + p);
            for (size_t m = 0; m < n && st == TRC_OK; m++) {
                uint32_t ix = 0;
                trch_u64map_get(&s->frame_ix, path[m], &ix);
                jsonw_putc(&o, ',');
                jsonw_u64(&o, ix);
            }
            jsonw_putc(&o, ']');
            total += s->ch[i].ns;
        }
        jsonw_raw(&o, "],\"weights\":[");
        k = 0;
        for (size_t i = 0; i < s->n_ch; i++) {
            if (s->ch[i].device != prof_dev[p] || s->ch[i].kind != prof_kind[p])
                continue;
            if (k++)
                jsonw_putc(&o, ',');
            jsonw_u64(&o, s->ch[i].ns);
        }
        jsonw_raw(&o, "],\"endValue\":");
        jsonw_u64(&o, total);
        jsonw_putc(&o, '}');
    }
    jsonw_raw(&o, "]}\n");
    jsonw_close(&o);
    trc_free(path);
    if (st != TRC_OK)
        return st;
    return fflush(out) != 0 || ferror(out) ? TRC_ERR_IO : TRC_OK;
}

const exp_sink_type exp_sink_speedscope_gpu_idle = {"speedscope-gpu-idle", create, event, NULL,
                                                    finish, destroy, NULL};
