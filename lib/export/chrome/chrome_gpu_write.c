/*
 * lib/export/chrome/chrome_gpu_write.c — Chrome exporter, GPU half: one placed
 * slice as a JSON "X" event (docs/design/outputs.md §2) with its args — names through
 * a cache of escaped strings, call sites, launch geometry, CUDA graph ids
 * and where the graph was captured, markers.
 */
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/export/chrome/chrome_gpu_int.h"
#include "lib/export/common/gpu_units.h"

/* ---- writing ----------------------------------------------------------- */

/* Speed: at a million GPU activities (and twice as many API calls) the
 * slice writer is the converter's hot path.  All text that repeats is
 * built once: a slice's head ({"ph":"X","name":...,"cat":...,) per
 * (name, category), its "pid":P,"tid":T, per lane, the process, device,
 * context and stream of an activity per track, a call site per stack.
 * The numbers of a slice are then formatted straight into one block of
 * the output buffer (jsonw_space), with no call per piece. */

/* Room for what one slice writes into its block: ids (at most 54), ts
 * and dur (CHR_SPAN_MAX), a flow end (47), ,"args":{ (9), a kernel's args
 * (at most 343 with the where text and graph ids; captured_at, like an
 * API call's call_site, is written outside the block) and the closing
 * braces: under 530. */
#define SLICE_BLOCK 640

/* The head of a slice named name in category cat.  Names repeat (kernel
 * and API names are interned by the reader: one pointer per name), so
 * each head is escaped once and kept by the two pointers.  NULL when out
 * of memory. */
static const chg_head *slice_head(chr_gpu *g, const char *name, const char *cat)
{
    uint64_t h = trch_hash_more_u64(trch_hash_u64((uint64_t)(uintptr_t)name), (uintptr_t)cat);
    size_t nn, nc, n;
    trch_probe pr;
    chg_head *e;
    char *t, *p;

    for (uint32_t i = trch_first(&g->head_index, h, &pr); i != TRCH_NONE;
         i = trch_next(&g->head_index, &pr))
        if (g->heads[i].name == name && g->heads[i].cat == cat)
            return &g->heads[i];
    if (g->n_heads == UINT32_MAX - 1 || trch_reserve(&g->head_index, g->n_heads + 1) ||
        trcu_grow32(&g->heads, &g->cap_heads, g->n_heads, sizeof *g->heads))
        return NULL;
    nn = strlen(name);
    nc = strlen(cat);
    if (nn > UINT32_MAX / 8 || nc > UINT32_MAX / 8 || !(t = trc_malloc(6 * (nn + nc) + 32)))
        return NULL;
    p = t;
    memcpy(p, "{\"ph\":\"X\",\"name\":\"", 18);
    p += 18;
    p += jsonw_escape(p, name, nn);
    memcpy(p, "\",\"cat\":\"", 9);
    p += 9;
    p += jsonw_escape(p, cat, nc);
    memcpy(p, "\",", 2);
    p += 2;
    n = (size_t)(p - t);
    (void)trch_add(&g->head_index, h, g->n_heads); /* cannot fail after the reserve */
    e = &g->heads[g->n_heads++];
    e->name = name;
    e->cat = cat;
    e->text = t;
    e->len = (uint32_t)n;
    return e;
}

/* Copy key, a string constant, to p; returns the end.  Inlined, the
 * length is known and the copy is a move or two. */
static inline char *put_key(char *p, const char *key)
{
    size_t n = strlen(key);
    memcpy(p, key, n);
    return p + n;
}

void chg_write_i64_arg(jsonw *w, const char *key, int64_t v)
{
    jsonw_raw(w, key);
    jsonw_i64(w, v);
}

static inline char *put_dim3(char *p, const char *key, const uint32_t v[3])
{
    p = put_key(p, key);
    *p++ = '[';
    p = jsonw_put_u64(p, v[0]);
    *p++ = ',';
    p = jsonw_put_u64(p, v[1]);
    *p++ = ',';
    p = jsonw_put_u64(p, v[2]);
    *p++ = ']';
    return p;
}

static const char *sync_name(trc_sync_kind k)
{
    switch (k) {
    case TRC_SYNC_EVENT: return "[CUDA sync Event]";
    case TRC_SYNC_STREAM_WAIT_EVENT: return "[CUDA sync Stream Wait Event]";
    case TRC_SYNC_STREAM: return "[CUDA sync Stream]";
    case TRC_SYNC_CONTEXT: return "[CUDA sync Context]";
    default: return "[CUDA sync Unknown]";
    }
}

static const char *api_cat(trc_api_domain d)
{
    return d == TRC_API_RUNTIME ? "cuda_runtime" : d == TRC_API_DRIVER ? "cuda_driver" : "cuda_api";
}

#define CALL_SITE_KEY ",\"call_site\":"
#define CALL_SITE_KEY_LEN (sizeof CALL_SITE_KEY - 1)

/* ,"call_site":"function (file:line)" of the leaf frame of reader stack
 * id, built once per stack.  NULL when out of memory. */
static const chg_site *call_site(chr_gpu *g, const trc_reader *r, uint32_t stack)
{
    const trc_stack *st;
    const trc_frame *f;
    size_t nf, nfile;
    char *p;

    if (stack < g->cap_site && g->site[stack].text)
        return &g->site[stack];
    if (stack == UINT32_MAX || trcu_grow32(&g->site, &g->cap_site, stack, sizeof *g->site))
        return NULL;
    st = trc_reader_stack(r, stack);
    f = st ? trc_reader_frame(r, st->frame) : NULL;
    nf = f ? strlen(f->function) : 0;
    nfile = f ? strlen(f->file) : 0;
    if (nf + nfile > UINT32_MAX / 8)
        return NULL;
    p = g->site[stack].text = trc_malloc(6 * (nf + nfile) + 48);
    if (!p)
        return NULL;
    p += sprintf(p, CALL_SITE_KEY "\"");
    if (f) {
        p += jsonw_escape(p, f->function, nf);
        p += sprintf(p, " (");
        p += jsonw_escape(p, f->file, nfile);
        p += sprintf(p, ":%u)\"", (unsigned)f->line);
    } else {
        p += sprintf(p, "<unknown>\"");
    }
    g->site[stack].len = (uint32_t)(p - g->site[stack].text);
    return &g->site[stack];
}

void chg_write_marker_args(jsonw *w, const trc_marker *m)
{
    static const char hex[] = "0123456789abcdef";

    jsonw_raw(w, "\"domain\":");
    jsonw_str(w, m->domain);
    if (m->color) {
        char col[10] = "\"#000000\"";
        for (int i = 0; i < 6; i++)
            col[7 - i] = hex[(m->color >> (4 * i)) & 15];
        jsonw_raw(w, ",\"color\":");
        jsonw_bytes(w, col, 9);
    }
    if (m->id) {
        jsonw_raw(w, ",\"id\":");
        jsonw_u64(w, m->id);
    }
}

/* "correlation":C and the where text of track t (see build_where). */
static char *put_where(char *p, const gtrack *t, const trc_gpu_where *wh)
{
    p = put_key(p, "\"correlation\":");
    p = jsonw_put_u64(p, wh->correlation);
    memcpy(p, t->where, t->where_len);
    return p + t->where_len;
}

/* The name and category of slice s. */
static void slice_names(const gslice *s, const char **name, const char **cat)
{
    switch (s->type) {
    case TRC_EV_GPU_KERNEL:
        *name = s->u.k.name && s->u.k.name[0] ? s->u.k.name : "<unknown kernel>";
        *cat = "kernel";
        break;
    case TRC_EV_GPU_MEMCPY:
        *name = gpu_copy_name(s->u.m.copy_kind);
        *cat = "memcpy";
        break;
    case TRC_EV_GPU_MEMSET:
        *name = gpu_memset_name();
        *cat = "memset";
        break;
    case TRC_EV_GPU_SYNC:
        *name = sync_name(s->u.y.sync_kind);
        *cat = "sync";
        break;
    case TRC_EV_API_CALL:
        *name = s->u.a.name && s->u.a.name[0] ? s->u.a.name : "<unknown API>";
        *cat = api_cat(s->u.a.domain);
        break;
    default: /* TRC_EV_MARKER */
        *name = s->u.mk.name && s->u.mk.name[0] ? s->u.mk.name : "<unnamed range>";
        *cat = s->u.mk.domain && s->u.mk.domain[0] ? s->u.mk.domain : "marker";
        break;
    }
}

/* {"ph":"X" ... } of slice s on lane li of track ti; bind != 0 adds its
 * flow end.  TRC_OK or TRC_ERR_NOMEM (c->err set). */
trc_status chg_write_gslice(chrome *c, const trc_reader *r, uint32_t ti, uint32_t li,
                            const gslice *s, uint64_t bind, int role)
{
    jsonw *w = &c->w;
    const gtrack *t = &c->gpu->tracks[ti];
    const lane *l = &t->lanes[li];
    const chg_site *site = NULL, *captured = NULL;
    const chg_head *head;
    const char *name, *cat;
    char *p;

    slice_names(s, &name, &cat);
    if (!(head = slice_head(c->gpu, name, cat)))
        return chr_fail(c, "names");
    if (s->type == TRC_EV_API_CALL && s->u.a.stack && !(site = call_site(c->gpu, r, s->u.a.stack)))
        return chr_fail(c, "call sites");
    /* a graph kernel: the call site of the call that captured its graph */
    if (s->type == TRC_EV_GPU_KERNEL && s->u.k.graph && c->gpu->graphs) {
        uint32_t at = exp_gpu_graph_captured(c->gpu->graphs, s->u.k.where.pid, s->u.k.graph);
        if (at && !(captured = call_site(c->gpu, r, at)))
            return chr_fail(c, "call sites");
    }
    chr_next_event(c);
    jsonw_bytes(w, head->text, head->len);
    p = jsonw_space(w, SLICE_BLOCK);
    memcpy(p, l->ids, l->ids_len);
    p = chr_put_span(c, p + l->ids_len, l->base_ns, s->start, s->end);
    if (bind) {
        p = put_key(p, ",\"bind_id\":");
        p = jsonw_put_u64(p, bind);
        p = put_key(p, role == ROLE_OUT ? ",\"flow_out\":true" : ",\"flow_in\":true");
    }
    p = put_key(p, ",\"args\":{");
    switch (s->type) {
    case TRC_EV_GPU_KERNEL:
        p = put_where(p, t, &s->u.k.where);
        p = put_dim3(p, ",\"grid\":", s->u.k.grid);
        p = put_dim3(p, ",\"block\":", s->u.k.block);
        p = put_key(p, ",\"registers\":");
        p = jsonw_put_u64(p, s->u.k.registers);
        p = put_key(p, ",\"static_smem\":");
        p = jsonw_put_u64(p, s->u.k.static_smem);
        p = put_key(p, ",\"dynamic_smem\":");
        p = jsonw_put_u64(p, s->u.k.dynamic_smem);
        if (s->u.k.graph) {
            p = put_key(p, ",\"graph\":");
            p = jsonw_put_u64(p, s->u.k.graph);
            p = put_key(p, ",\"graph_node\":");
            p = jsonw_put_u64(p, s->u.k.graph_node);
        }
        if (captured) {
            /* the call site's text without its key */
            w->p = put_key(p, ",\"captured_at\":");
            jsonw_bytes(w, captured->text + CALL_SITE_KEY_LEN, captured->len - CALL_SITE_KEY_LEN);
            p = jsonw_space(w, 2);
        }
        break;
    case TRC_EV_GPU_MEMCPY:
        p = put_where(p, t, &s->u.m.where);
        p = put_key(p, ",\"bytes\":");
        w->p = jsonw_put_u64(p, s->u.m.bytes);
        jsonw_raw(w, ",\"copy_kind\":");
        jsonw_str(w, gpu_copy_short(s->u.m.copy_kind));
        jsonw_raw(w, ",\"src_kind\":");
        jsonw_str(w, gpu_mem_name(s->u.m.src_kind));
        jsonw_raw(w, ",\"dst_kind\":");
        jsonw_str(w, gpu_mem_name(s->u.m.dst_kind));
        if (s->u.m.copy_kind == TRC_COPY_PTOP)
            chg_write_i64_arg(w, ",\"dst_device\":", s->u.m.dst_device);
        p = jsonw_space(w, 2);
        break;
    case TRC_EV_GPU_MEMSET:
        p = put_where(p, t, &s->u.s.where);
        p = put_key(p, ",\"bytes\":");
        p = jsonw_put_u64(p, s->u.s.bytes);
        p = put_key(p, ",\"value\":");
        w->p = jsonw_put_u64(p, s->u.s.value);
        jsonw_raw(w, ",\"mem_kind\":");
        jsonw_str(w, gpu_mem_name(s->u.s.mem_kind));
        p = jsonw_space(w, 2);
        break;
    case TRC_EV_GPU_SYNC:
        p = put_where(p, t, &s->u.y.where);
        w->p = put_key(p, ",\"sync_kind\":");
        jsonw_str(w, gpu_sync_name(s->u.y.sync_kind));
        p = jsonw_space(w, 2);
        break;
    case TRC_EV_API_CALL:
        p = put_key(p, "\"correlation\":");
        p = jsonw_put_u64(p, s->u.a.correlation);
        if (s->u.a.result) {
            p = put_key(p, ",\"result\":");
            p = jsonw_put_i64(p, s->u.a.result);
        }
        /* of the call's duration, trc's own time reading the stack
         * (spec [R-API-1]) */
        if (s->u.a.capture_ns) {
            p = put_key(p, ",\"capture_ns\":");
            p = jsonw_put_u64(p, s->u.a.capture_ns);
        }
        if (s->u.a.graph) {
            p = put_key(p, ",\"graph\":");
            p = jsonw_put_u64(p, s->u.a.graph);
        }
        if (s->u.a.graph_exec) {
            p = put_key(p, ",\"graph_exec\":");
            p = jsonw_put_u64(p, s->u.a.graph_exec);
        }
        if (site) {
            w->p = p;
            jsonw_bytes(w, site->text, site->len);
            p = jsonw_space(w, 2);
        }
        break;
    default:
        w->p = p;
        chg_write_marker_args(w, &s->u.mk);
        p = jsonw_space(w, 2);
        break;
    }
    p[0] = '}';
    p[1] = '}';
    w->p = p + 2;
    return TRC_OK;
}
