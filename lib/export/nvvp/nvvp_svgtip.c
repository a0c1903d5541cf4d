/*
 * lib/export/nvvp/nvvp_svgtip.c — the tooltip texts of the SVG timeline
 * (contract in nvvp_svgtip.h): what NVVP's properties pane shows for a
 * kernel, copy, API call, NVTX range or sample run, plus trc's additions
 * (the Python line that launched a kernel) and the summary of intervals
 * merged below a pixel.
 */
#include "lib/export/nvvp/nvvp_svgtip.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/export/nvvp/nvvp_trace.h"
#include "lib/export/common/gpu_units.h"

/* Appends printf output to the tooltip text (truncated when full). */
static void tipf(nvvp_tip *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tipf(nvvp_tip *v, const char *fmt, ...)
{
    if (v->len >= NVVP_TIP_MAX - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(v->text + v->len, NVVP_TIP_MAX - v->len, fmt, ap);
    va_end(ap);
    if (k > 0)
        v->len += (size_t)k < NVVP_TIP_MAX - v->len ? (size_t)k : NVVP_TIP_MAX - 1 - v->len;
}

static const char *t_rel(nvvp_tip *v, int64_t t, char *b)
{
    return gpu_fmt_time(b, gpu_tsub(t, v->origin), 6);
}

const char *nvvp_key_label(const nvvp_data *d, uint32_t key)
{
    if (!(key & NVVP_KEY_FIXED))
        return name_pool_str(&d->pool, key);
    uint32_t kind = (key >> 8) & 0xff, sub = key & 0xff;
    if (kind == NVVP_ACT_MEMCPY)
        return gpu_copy_name((trc_copy_kind)sub);
    if (kind == NVVP_ACT_MEMSET)
        return gpu_memset_name();
    return "[CUDA synchronization]";
}

const char *nvvp_tip_thread(trc_reader *r, uint32_t thread, char *buf, size_t n)
{
    const trc_thread *t = trc_reader_thread(r, thread);
    if (!t)
        snprintf(buf, n, "thread #%u", thread);
    else if (t->name && *t->name)
        snprintf(buf, n, "%s (tid %lld)", t->name, (long long)t->tid);
    else
        snprintf(buf, n, "tid %lld", (long long)t->tid);
    return buf;
}

static void tip_launch(nvvp_tip *v, int64_t pid, uint32_t corr)
{
    const nvvp_api *api = nvvp_data_api_by_corr(v->d, pid, corr);
    char tb[160];
    if (!api)
        return;
    const char *site = nvvp_data_site(v->d, v->r, api->stack);
    tipf(v, "\nlaunched by %s on %s", name_pool_str(&v->d->pool, api->name),
         nvvp_tip_thread(v->r, api->thread, tb, sizeof tb));
    if (*site)
        tipf(v, "\nat %s", site);
    else if (api->flags & TRC_API_NO_PYTHON)
        tipf(v, "\n(no Python frames on the launching thread)");
}

const char *nvvp_tip_act(nvvp_tip *v, const nvvp_act *a)
{
    char b1[GPU_NUM_BUF], b2[GPU_NUM_BUF], b3[GPU_NUM_BUF], dev[128];
    v->len = 0;
    v->text[0] = '\0';
    int64_t dur = gpu_tsub(a->end, a->start);
    tipf(v, "%s", nvvp_act_name(v->d, a));
    if (a->kind == NVVP_ACT_MEMCPY || a->kind == NVVP_ACT_MEMSET)
        tipf(v, "  %s at %s", gpu_fmt_bytes(b1, a->u.m.bytes),
             gpu_fmt_throughput(b2, a->u.m.bytes, dur));
    tipf(v, "\nstart %s, duration %s", t_rel(v, a->start, b1), gpu_fmt_time(b2, dur, 5));
    switch (a->kind) {
    case NVVP_ACT_KERNEL:
        tipf(v, "\ngrid (%u %u %u), block (%u %u %u), %u registers/thread",
             a->u.k.grid[0], a->u.k.grid[1], a->u.k.grid[2], a->u.k.block[0], a->u.k.block[1],
             a->u.k.block[2], a->u.k.regs);
        tipf(v, "\nshared memory: %s static, %s dynamic", gpu_fmt_bytes(b1, a->u.k.ssmem),
             gpu_fmt_bytes(b3, a->u.k.dsmem));
        break;
    case NVVP_ACT_MEMCPY:
        tipf(v, "\n%s to %s memory", gpu_mem_name((trc_mem_kind)a->src),
             gpu_mem_name((trc_mem_kind)a->dst));
        if (a->sub == TRC_COPY_PTOP)
            tipf(v, " (device %u to device %u)", a->device, a->u.m.dst_device);
        break;
    case NVVP_ACT_MEMSET:
        tipf(v, "\n%s memory set to 0x%x", gpu_mem_name((trc_mem_kind)a->src), a->u.m.value);
        break;
    default:
        tipf(v, "\nwaits for: %s", gpu_sync_name((trc_sync_kind)a->sub));
        break;
    }
    tipf(v, "\n%s, context %u, stream %u",
         nvvp_device_label(v->r, a->device, dev, sizeof dev), a->context, a->stream);
    if (a->corr)
        tipf(v, ", correlation %u", a->corr);
    tip_launch(v, a->pid, a->corr);
    return v->text;
}

const char *nvvp_tip_api(nvvp_tip *v, const nvvp_api *a)
{
    char b1[GPU_NUM_BUF], b2[GPU_NUM_BUF];
    v->len = 0;
    v->text[0] = '\0';
    const char *site = nvvp_data_site(v->d, v->r, a->stack);
    tipf(v, "%s (%s API)\nstart %s, duration %s", name_pool_str(&v->d->pool, a->name),
         a->domain == TRC_API_DRIVER ? "Driver" : a->domain == TRC_API_RUNTIME ? "Runtime" : "other",
         t_rel(v, a->start, b1), gpu_fmt_time(b2, gpu_tsub(a->end, a->start), 5));
    if (a->corr)
        tipf(v, "\ncorrelation %u", a->corr);
    if (a->result)
        tipf(v, "\nreturned error %d", (int)a->result);
    if (*site)
        tipf(v, "\nat %s", site);
    return v->text;
}

const char *nvvp_tip_run(nvvp_tip *v, const nvvp_run *run)
{
    char b1[GPU_NUM_BUF], b2[GPU_NUM_BUF], b3[GPU_NUM_BUF];
    v->len = 0;
    v->text[0] = '\0';
    const char *site = nvvp_data_frame_site(v->d, v->r, run->frame);
    tipf(v, "%s\n%u samples, %s sampled\nfrom %s to %s", *site ? site : "<no Python frames>",
         run->count, gpu_fmt_time(b1, (int64_t)run->weight_ns, 5), t_rel(v, run->start, b2),
         t_rel(v, run->end, b3));
    return v->text;
}

const char *nvvp_tip_mark(nvvp_tip *v, const nvvp_mark *m)
{
    char b1[GPU_NUM_BUF], b2[GPU_NUM_BUF];
    v->len = 0;
    v->text[0] = '\0';
    const char *dom = name_pool_str(&v->d->pool, m->domain);
    tipf(v, "%s (%s %s)", name_pool_str(&v->d->pool, m->name), *dom ? dom : "marker",
         m->kind == TRC_MARK_INSTANT ? "marker" : "range");
    if (m->kind == TRC_MARK_INSTANT)
        tipf(v, "\nat %s", t_rel(v, m->start, b1));
    else
        tipf(v, "\nstart %s, duration %s%s", t_rel(v, m->start, b1),
             gpu_fmt_time(b2, gpu_tsub(m->end, m->start), 5), m->open ? " (never closed)" : "");
    return v->text;
}

const char *nvvp_tip_group(nvvp_tip *v, const nvvp_box *b, const char *noun, int keys_are_frames)
{
    char b1[GPU_NUM_BUF], b2[GPU_NUM_BUF], b3[GPU_NUM_BUF];
    v->len = 0;
    v->text[0] = '\0';
    tipf(v, "%u %s merged (each narrower than a pixel)\n%s busy from %s to %s", b->count,
         noun, gpu_fmt_time(b1, (int64_t)b->busy_ns, 5), t_rel(v, b->start, b2),
         t_rel(v, b->end, b3));
    for (uint32_t i = 0; i < b->n_keys; i++) {
        const char *label = keys_are_frames ? nvvp_data_frame_site(v->d, v->r, b->keys[i])
                                           : nvvp_key_label(v->d, b->keys[i]);
        tipf(v, "\n%u x %s", b->key_counts[i], *label ? label : "<no Python frames>");
    }
    if (b->other_count)
        tipf(v, "\n%u x others", b->other_count);
    return v->text;
}
