/*
 * lib/export/chrome_gpu_write.c — Chrome exporter, GPU half: one placed
 * slice as a JSON "X" event (FORMATS.md §2) with its args — names through
 * a cache of escaped strings, call sites, launch geometry, markers.
 */
#include <string.h>

#include "format/alloc.h"
#include "lib/export/chrome_gpu_int.h"
#include "lib/export/nvvp_units.h"

/* ---- writing ----------------------------------------------------------- */

/* Write str as a JSON string.  Names repeat (kernel and API names are
 * interned by the reader: one pointer per name), so each is escaped once
 * and kept by pointer.  -1 when out of memory. */
static int write_name(chr_gpu *g, jsonw *w, const char *str)
{
    uint64_t h = trch_hash_u64((uint64_t)(uintptr_t)str);
    trch_probe p;
    size_t n;
    char *t;

    for (uint32_t i = trch_first(&g->name_index, h, &p); i != TRCH_NONE;
         i = trch_next(&g->name_index, &p)) {
        if (g->names[i].key == str) {
            jsonw_bytes(w, g->names[i].text, g->names[i].len);
            return 0;
        }
    }
    if (g->n_names == UINT32_MAX - 1 || trch_reserve(&g->name_index, g->n_names + 1) ||
        cpuview_grow(&g->names, &g->cap_names, g->n_names + 1, sizeof *g->names, 64))
        return -1;
    n = strlen(str);
    if (n > UINT32_MAX / 8 || !(t = trc_malloc(6 * n + 2)))
        return -1;
    t[0] = '"';
    n = 1 + jsonw_escape(t + 1, str, n);
    t[n++] = '"';
    (void)trch_add(&g->name_index, h, g->n_names); /* cannot fail after the reserve */
    g->names[g->n_names].key = str;
    g->names[g->n_names].text = t;
    g->names[g->n_names].len = (uint32_t)n;
    g->n_names++;
    jsonw_bytes(w, t, n);
    return 0;
}

void chg_write_i64_arg(jsonw *w, const char *key, int64_t v)
{
    jsonw_raw(w, key);
    jsonw_i64(w, v);
}

static void write_where(jsonw *w, const trc_gpu_where *wh)
{
    chg_write_i64_arg(w, "\"correlation\":", wh->correlation);
    chg_write_i64_arg(w, ",\"process\":", wh->pid);
    chg_write_i64_arg(w, ",\"device\":", wh->device);
    chg_write_i64_arg(w, ",\"context\":", wh->context);
    if (wh->stream != NO_STREAM)
        chg_write_i64_arg(w, ",\"stream\":", wh->stream);
}

static void write_dim3(jsonw *w, const char *key, const uint32_t v[3])
{
    jsonw_raw(w, key);
    jsonw_putc(w, '[');
    for (int i = 0; i < 3; i++) {
        if (i)
            jsonw_putc(w, ',');
        jsonw_u64(w, v[i]);
    }
    jsonw_putc(w, ']');
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

/* ,"call_site":"function (file:line)" of the leaf frame of reader stack
 * id, built once per stack.  -1 when out of memory. */
static int write_call_site(chr_gpu *g, jsonw *w, const trc_reader *r, uint32_t stack)
{
    const trc_stack *st;
    const trc_frame *f;
    size_t nf, nfile;
    char *p;

    if (stack < g->cap_site && g->site[stack]) {
        jsonw_raw(w, g->site[stack]);
        return 0;
    }
    if (stack == UINT32_MAX || cpuview_grow(&g->site, &g->cap_site, stack + 1, sizeof *g->site, 16))
        return -1;
    st = trc_reader_stack(r, stack);
    f = st ? trc_reader_frame(r, st->frame) : NULL;
    nf = f ? strlen(f->function) : 0;
    nfile = f ? strlen(f->file) : 0;
    p = g->site[stack] = trc_malloc(6 * (nf + nfile) + 48);
    if (!p)
        return -1;
    p += sprintf(p, ",\"call_site\":\"");
    if (f) {
        p += jsonw_escape(p, f->function, nf);
        p += sprintf(p, " (");
        p += jsonw_escape(p, f->file, nfile);
        p += sprintf(p, ":%u)\"", (unsigned)f->line);
    } else {
        p += sprintf(p, "<unknown>\"");
    }
    jsonw_raw(w, g->site[stack]);
    return 0;
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

/* {"ph":"X" ... } of slice s on (pid, tid); bind != 0 adds its flow end.
 * TRC_OK or TRC_ERR_NOMEM (c->err set). */
trc_status chg_write_gslice(chrome *c, const trc_reader *r, int64_t pid, int64_t tid,
                            int64_t base_ns, const gslice *s, uint64_t bind, int role)
{
    jsonw *w = &c->w;
    const char *name = NULL, *cat = "gpu";

    switch (s->type) {
    case TRC_EV_GPU_KERNEL:
        name = s->u.k.name && s->u.k.name[0] ? s->u.k.name : "<unknown kernel>";
        cat = "kernel";
        break;
    case TRC_EV_GPU_MEMCPY:
        name = nvvp_copy_name(s->u.m.copy_kind);
        cat = "memcpy";
        break;
    case TRC_EV_GPU_MEMSET:
        name = nvvp_memset_name();
        cat = "memset";
        break;
    case TRC_EV_GPU_SYNC:
        name = sync_name(s->u.y.sync_kind);
        cat = "sync";
        break;
    case TRC_EV_API_CALL:
        name = s->u.a.name && s->u.a.name[0] ? s->u.a.name : "<unknown API>";
        cat = api_cat(s->u.a.domain);
        break;
    default: /* TRC_EV_MARKER */
        name = s->u.mk.name && s->u.mk.name[0] ? s->u.mk.name : "<unnamed range>";
        cat = s->u.mk.domain && s->u.mk.domain[0] ? s->u.mk.domain : "marker";
        break;
    }
    chr_next_event(c);
    jsonw_raw(w, "{\"ph\":\"X\",\"name\":");
    if (write_name(c->gpu, w, name))
        return chr_fail(c, "names");
    jsonw_raw(w, ",\"cat\":");
    if (write_name(c->gpu, w, cat))
        return chr_fail(c, "names");
    chg_write_i64_arg(w, ",\"pid\":", pid);
    chg_write_i64_arg(w, ",\"tid\":", tid);
    jsonw_putc(w, ',');
    chr_write_ts(c, s->start);
    chr_write_dur(c, base_ns, s->start, s->end);
    if (bind) {
        chg_write_i64_arg(w, ",\"bind_id\":", (int64_t)bind);
        jsonw_raw(w, role == ROLE_OUT ? ",\"flow_out\":true" : ",\"flow_in\":true");
    }
    jsonw_raw(w, ",\"args\":{");
    switch (s->type) {
    case TRC_EV_GPU_KERNEL:
        write_where(w, &s->u.k.where);
        write_dim3(w, ",\"grid\":", s->u.k.grid);
        write_dim3(w, ",\"block\":", s->u.k.block);
        chg_write_i64_arg(w, ",\"registers\":", s->u.k.registers);
        chg_write_i64_arg(w, ",\"static_smem\":", s->u.k.static_smem);
        chg_write_i64_arg(w, ",\"dynamic_smem\":", s->u.k.dynamic_smem);
        break;
    case TRC_EV_GPU_MEMCPY:
        write_where(w, &s->u.m.where);
        jsonw_raw(w, ",\"bytes\":");
        jsonw_u64(w, s->u.m.bytes);
        jsonw_raw(w, ",\"copy_kind\":");
        jsonw_str(w, nvvp_copy_short(s->u.m.copy_kind));
        jsonw_raw(w, ",\"src_kind\":");
        jsonw_str(w, nvvp_mem_name(s->u.m.src_kind));
        jsonw_raw(w, ",\"dst_kind\":");
        jsonw_str(w, nvvp_mem_name(s->u.m.dst_kind));
        if (s->u.m.copy_kind == TRC_COPY_PTOP)
            chg_write_i64_arg(w, ",\"dst_device\":", s->u.m.dst_device);
        break;
    case TRC_EV_GPU_MEMSET:
        write_where(w, &s->u.s.where);
        jsonw_raw(w, ",\"bytes\":");
        jsonw_u64(w, s->u.s.bytes);
        chg_write_i64_arg(w, ",\"value\":", s->u.s.value);
        jsonw_raw(w, ",\"mem_kind\":");
        jsonw_str(w, nvvp_mem_name(s->u.s.mem_kind));
        break;
    case TRC_EV_GPU_SYNC:
        write_where(w, &s->u.y.where);
        jsonw_raw(w, ",\"sync_kind\":");
        jsonw_str(w, nvvp_sync_name(s->u.y.sync_kind));
        break;
    case TRC_EV_API_CALL:
        chg_write_i64_arg(w, "\"correlation\":", s->u.a.correlation);
        if (s->u.a.result)
            chg_write_i64_arg(w, ",\"result\":", s->u.a.result);
        if (s->u.a.stack && write_call_site(c->gpu, w, r, s->u.a.stack))
            return chr_fail(c, "call sites");
        break;
    default:
        chg_write_marker_args(w, &s->u.mk);
        break;
    }
    jsonw_raw(w, "}}");
    return TRC_OK;
}

