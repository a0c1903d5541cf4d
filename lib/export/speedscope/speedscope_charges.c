/*
 * lib/export/speedscope/speedscope_charges.c — time charged to Python
 * stacks as speedscope JSON (declared in speedscope.h), each charge one
 * sample whose weight is its nanoseconds, so that each profile's total is
 * the matching folded view's:
 *  - --gpu-idle: GPU idle time by the feeding threads' stacks
 *    (lib/export/common/gpu_idle.h), one sampled profile per device and
 *    kind ("GPU 0 idle", "GPU 0 copies only"), the stack under the root
 *    frame of the folded views ("[GPU 0 idle]"): trc2collapsed --gpu-idle;
 *  - --syncs: host time blocked in the calls that can make the host wait
 *    (lib/export/common/gpu_sync.h), one sampled profile, the calling
 *    stack (or "<no Python stack>") then a leaf for the API name, the
 *    calls of one stack and API summed into one sample (speedscope's
 *    sampled profiles need no time order): trc2collapsed --syncs.
 */
#include "lib/export/speedscope/speedscope.h"

#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/util/hashtab.h"
#include "lib/export/common/collapsed.h"
#include "lib/export/common/gpu_sync.h"
#include "lib/export/common/json_out.h"


/* One charge: profile p, the path root (an extra name, or NO_NAME),
 * the reader stack, the leaf (an extra name, or NO_NAME). */
#define NO_NAME UINT32_MAX
typedef struct charge {
    uint32_t profile, root, stack, leaf;
    uint64_t ns;
} charge;

/* At most this many profiles (device x kind): more than a viewer lists. */
#define MAX_PROFILES 64

typedef struct idle_json {
    exp_gpu_idle *idle;       /* --gpu-idle: its stage, or */
    exp_gpu_sync *syncs;      /* --syncs: its stage */
    charge *ch;
    size_t n_ch, cap_ch;
    trch_u64map frame_ix;     /* reader frame id → index in the frames list */
    uint32_t *frames;         /* reader frame ids, in index order (0: no frames) */
    size_t n_frames, cap_frames;
    char (*extra)[96];        /* frames that are no reader frame: roots, API names */
    size_t n_extra, cap_extra;
    char profiles[MAX_PROFILES][96];  /* the profiles' names */
    uint32_t n_prof;
    const char *title;        /* the file's name */
    trch_index sync_ix;       /* --syncs: charges by (stack, leaf), one per distinct
                               * pair, so memory follows the stacks, not the calls */
} idle_json;

static void destroy(void *self)
{
    idle_json *s = self;
    if (!s)
        return;
    exp_gpu_idle_free(s->idle);
    exp_sync_free(s->syncs);
    trc_free(s->ch);
    trc_free(s->extra);
    trch_index_cleanup(&s->sync_ix);
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
    if (s)
        s->title = "GPU idle time by the feeding threads' stacks";
    return s;
}

static trc_status event(void *self, trc_reader *r, const trc_event *ev, FILE *out)
{
    idle_json *s = self;
    return s->idle ? exp_gpu_idle_event(s->idle, r, ev) : exp_sync_event(s->syncs, r, ev);
}

/* The index of extra name `name` (added when new); NO_NAME when out of
 * memory.  Linear: a trace has a few devices and API names. */
static uint32_t extra_index(idle_json *s, const char *name)
{
    char cut[sizeof s->extra[0]]; /* compared as stored, so a long name is found again */
    snprintf(cut, sizeof cut, "%s", name);
    for (size_t i = 0; i < s->n_extra; i++)
        if (strcmp(s->extra[i], cut) == 0)
            return (uint32_t)i;
    if (trcu_grow((void **)&s->extra, &s->cap_extra, s->n_extra, sizeof *s->extra) != TRC_OK)
        return NO_NAME;
    memcpy(s->extra[s->n_extra], cut, sizeof cut);
    return (uint32_t)s->n_extra++;
}

static trc_status add_charge(idle_json *s, uint32_t profile, uint32_t root, uint32_t stack,
                             uint32_t leaf, uint64_t ns)
{
    trc_status st = trcu_grow((void **)&s->ch, &s->cap_ch, s->n_ch, sizeof *s->ch);
    if (st == TRC_OK)
        s->ch[s->n_ch++] = (charge){profile, root, stack, leaf, ns};
    return st;
}

/* An idle charge: its profile is its device and kind, named after the
 * root frame without the brackets. */
static trc_status keep(void *ctx, uint32_t device, exp_gpu_idle_kind kind, uint32_t thread,
                       uint32_t stack, uint64_t ns)
{
    idle_json *s = ctx;
    char root[32];
    exp_gpu_idle_root(root, sizeof root, device, kind);
    uint32_t x = extra_index(s, root);
    if (x == NO_NAME)
        return TRC_ERR_NOMEM;
    uint32_t p = 0;
    while (p < s->n_prof && strcmp(s->profiles[p], s->extra[x]) != 0)
        p++;
    if (p == s->n_prof) {
        if (s->n_prof == MAX_PROFILES)
            return TRC_OK;
        snprintf(s->profiles[p], sizeof s->profiles[0], "%s", root);
        s->n_prof++;
    }
    return add_charge(s, p, x, stack, NO_NAME, ns);
}

/* A blocking call: one profile; the API name is the leaf, a call without
 * Python frames goes under the folded views' root for them. */
static trc_status keep_sync(void *ctx, const trc_reader *r, const exp_sync_hit *h)
{
    idle_json *s = ctx;
    uint32_t leaf = extra_index(s, h->name);
    uint32_t root = h->stack ? NO_NAME : extra_index(s, EXP_GPU_NO_PYTHON_ROOT);
    if (leaf == NO_NAME || (!h->stack && root == NO_NAME))
        return TRC_ERR_NOMEM;
    uint64_t hash = trch_hash_u64(((uint64_t)h->stack << 32) | leaf);
    trch_probe pr;
    for (uint32_t i = trch_first(&s->sync_ix, hash, &pr); i != TRCH_NONE;
         i = trch_next(&s->sync_ix, &pr))
        if (s->ch[i].stack == h->stack && s->ch[i].leaf == leaf) {
            s->ch[i].ns += h->blocked_ns;
            return TRC_OK;
        }
    trc_status st = add_charge(s, 0, root, h->stack, leaf, h->blocked_ns);
    return st == TRC_OK ? trch_add(&s->sync_ix, hash, (uint32_t)(s->n_ch - 1)) : st;
}

static void *create_syncs(const void *opts)
{
    idle_json *s = trc_calloc(1, sizeof *s);
    if (s && !(s->syncs = exp_sync_new(keep_sync, s))) {
        destroy(s);
        return NULL;
    }
    if (s) {
        s->title = "host time blocked in syncs by calling stack";
        snprintf(s->profiles[0], sizeof s->profiles[0], "[syncs: host time blocked]");
        s->n_prof = 1;
    }
    return s;
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

static void write_frames(idle_json *s, const trc_reader *r, jsonw *o)
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
    for (size_t x = 0; x < s->n_extra; x++) {
        jsonw_raw(o, s->n_frames || x ? ",{\"name\":" : "{\"name\":");
        jsonw_str(o, s->extra[x]);
        jsonw_putc(o, '}');
    }
}

/* The reader frames of charge c's stack, root first (none for a sync
 * without Python frames: its root frame says so). */
static trc_status charge_path(const trc_reader *r, const charge *c, uint32_t **path, size_t *cap,
                              size_t *n)
{
    if (c->leaf != NO_NAME && !c->stack) {
        *n = 0;
        return TRC_OK;
    }
    return stack_path(r, c->stack, path, cap, n);
}

static trc_status finish(void *self, trc_reader *r, FILE *out)
{
    idle_json *s = self;
    trc_status st;
    if (s->idle) {
        st = exp_gpu_idle_finish(s->idle, r);
        if (st == TRC_OK)
            st = exp_gpu_idle_each(s->idle, keep, s);
    } else {
        st = exp_sync_finish(s->syncs, r);
    }
    uint32_t *path = NULL;
    size_t cap = 0, n;
    /* the frames' indices */
    for (size_t i = 0; i < s->n_ch && st == TRC_OK; i++) {
        st = charge_path(r, &s->ch[i], &path, &cap, &n);
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
    jsonw_str(&o, s->title);
    jsonw_raw(&o, ",\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[");
    write_frames(s, r, &o);
    jsonw_raw(&o, "]},\n\"profiles\":[");
    for (uint32_t p = 0; p < s->n_prof && st == TRC_OK; p++) {
        jsonw_raw(&o, p ? ",\n{\"type\":\"sampled\",\"name\":" : "{\"type\":\"sampled\",\"name\":");
        jsonw_strn(&o, s->profiles[p] + 1, strlen(s->profiles[p]) - 2); /* without the brackets */
        jsonw_raw(&o, ",\"unit\":\"nanoseconds\",\"startValue\":0,\"samples\":[");
        uint64_t total = 0;
        size_t k = 0;
        for (size_t i = 0; i < s->n_ch && st == TRC_OK; i++) {
            const charge *c = &s->ch[i];
            if (c->profile != p)
                continue;
            st = charge_path(r, c, &path, &cap, &n);
            jsonw_raw(&o, k++ ? ",[" : "[");
            const char *sep = "";
            if (c->root != NO_NAME) {
                jsonw_u64(&o, s->n_frames + c->root);
                sep = ",";
            }
            for (size_t m = 0; m < n && st == TRC_OK; m++) {
                uint32_t ix = 0;
                trch_u64map_get(&s->frame_ix, path[m], &ix);
                jsonw_raw(&o, sep);
                jsonw_u64(&o, ix);
                sep = ",";
            }
            if (c->leaf != NO_NAME) {
                jsonw_raw(&o, sep);
                jsonw_u64(&o, s->n_frames + c->leaf);
            }
            jsonw_putc(&o, ']');
            total += c->ns;
        }
        jsonw_raw(&o, "],\"weights\":[");
        k = 0;
        for (size_t i = 0; i < s->n_ch; i++) {
            if (s->ch[i].profile != p)
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
const exp_sink_type exp_sink_speedscope_syncs = {"speedscope-syncs", create_syncs, event, NULL,
                                                 finish, destroy, NULL};
