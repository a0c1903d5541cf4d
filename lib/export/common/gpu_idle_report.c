/*
 * lib/export/common/gpu_idle_report.c — the GPU idle headline (contract
 * in gpu_idle_report.h).  The charges of one device are summed by stack
 * (threads merged) and the largest few kept.
 */
#include "lib/export/common/gpu_idle_report.h"

#include <inttypes.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/util/hashtab.h"
#include "lib/export/common/collapsed.h"
#include "lib/export/common/gpu_units.h"
#include "lib/export/common/short_path.h"

typedef struct by_stack {
    uint32_t device;
    trch_u64map index;        /* stack → row */
    struct top_row {
        uint32_t stack;
        uint64_t ns;
    } *rows;
    size_t n, cap;
} by_stack;

static trc_status sum_stack(void *ctx, uint32_t device, exp_gpu_idle_kind kind, uint32_t thread,
                            uint32_t stack, uint64_t ns)
{
    by_stack *b = ctx;
    if (device != b->device || kind != EXP_GPU_IDLE_NONE)
        return TRC_OK;
    trc_status st = trcu_grow((void **)&b->rows, &b->cap, b->n, sizeof *b->rows);
    if (st != TRC_OK)
        return st;
    uint32_t idx;
    int added;
    st = trch_u64map_put(&b->index, stack, (uint32_t)b->n, &idx, &added);
    if (st != TRC_OK)
        return st;
    if (added)
        b->rows[b->n++].stack = stack;
    b->rows[idx].ns += ns;
    return TRC_OK;
}

static double pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void put_leaf(const trc_reader *r, uint32_t stack, FILE *out)
{
    const trc_stack *s = stack ? trc_reader_stack(r, stack) : NULL;
    const trc_frame *f = s ? trc_reader_frame(r, s->frame) : NULL;
    if (!f) {
        fputs(stack ? "<unknown>" : EXP_NO_PYTHON_FRAMES, out);
        return;
    }
    fputs(f->function && *f->function ? f->function : "<unknown>", out);
    if (f->file && *f->file) {
        fprintf(out, " (%s", exp_short_path(f->file));
        if (f->line)
            fprintf(out, ":%" PRIu32, f->line);
        fputc(')', out);
    }
}

static trc_status report_device(const exp_gpu_idle *g, const trc_reader *r,
                                const exp_gpu_idle_device *d, FILE *out)
{
    char span[32];
    fprintf(out, "  GPU %u: compute busy %.2f%%, copies only %.2f%%, idle %.2f%% of %s\n",
            (unsigned)d->device, pct(d->busy_ns - d->copy_only_ns, d->span_ns),
            pct(d->copy_only_ns, d->span_ns), pct(d->idle_ns, d->span_ns),
            gpu_fmt_time(span, (int64_t)d->span_ns, 5));
    if (d->nvml_util_n)
        fprintf(out, "    NVML gpu.util: mean %.2f%% of %" PRIu64 " samples (a kernel ran at some time "
                     "in each sample period)\n",
                d->nvml_util_mean, d->nvml_util_n);
    by_stack b;
    memset(&b, 0, sizeof b);
    b.device = d->device;
    trc_status st = exp_gpu_idle_each(g, sum_stack, &b);
    for (int k = 0; st == TRC_OK && k < EXP_GPU_IDLE_TOP; k++) {
        size_t best = b.n;
        for (size_t i = 0; i < b.n; i++)
            if (b.rows[i].ns && (best == b.n || b.rows[i].ns > b.rows[best].ns ||
                                 (b.rows[i].ns == b.rows[best].ns &&
                                  b.rows[i].stack < b.rows[best].stack)))
                best = i;
        if (best == b.n)
            break;
        fprintf(out, "    %6.2f%% idle in ", pct(b.rows[best].ns, d->idle_ns));
        put_leaf(r, b.rows[best].stack, out);
        fputc('\n', out);
        b.rows[best].ns = 0; /* taken */
    }
    trch_u64map_cleanup(&b.index);
    trc_free(b.rows);
    return st;
}

trc_status exp_gpu_idle_report(const exp_gpu_idle *g, const trc_reader *r, FILE *out)
{
    uint32_t n = exp_gpu_idle_devices(g);
    if (!n)
        return TRC_OK;
    fputs("\nGPU idle time (compute busy: a kernel runs; copies only: copies or memsets,\n"
          "no kernel; idle: nothing runs; the feeding threads' stacks meanwhile):\n",
          out);
    for (uint32_t i = 0; i < n; i++) {
        exp_gpu_idle_device d;
        exp_gpu_idle_device_at(g, i, &d);
        trc_status st = report_device(g, r, &d, out);
        if (st != TRC_OK)
            return st;
    }
    return ferror(out) ? TRC_ERR_IO : TRC_OK;
}
