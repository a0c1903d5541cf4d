/*
 * lib/export/nvvp/nvvp_trace.c — the GPU trace and API trace tables, text and
 * CSV (docs/design/outputs.md §5; contract in nvvp_trace.h).
 *
 * Lines are assembled in one growable buffer with plain copies and the
 * integer formatters of common/gpu_units.c, then written with one fwrite each:
 * a million-row trace must print in well under a second, and printf is
 * the slow part of naive printers.
 */
#include "lib/export/nvvp/nvvp_trace.h"

#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/export/common/gpu_units.h"

#define MAX_DEV_CACHE 64
#define NAME_COL_MAX 80

typedef struct line {
    char *p;
    size_t n, cap;
    int oom;
} line;

static void put(line *l, const char *s, size_t n)
{
    /* l->n + n + 1 bytes: byte l->n + n (the NUL) may be written. */
    if (trcu_grow((void **)&l->p, &l->cap, l->n + n, 1) != TRC_OK) {
        l->oom = 1;
        return;
    }
    memcpy(l->p + l->n, s, n);
    l->n += n;
}

static void put_s(line *l, const char *s)
{
    put(l, s, strlen(s));
}

static void put_spaces(line *l, size_t n)
{
    static const char sp[] = "                                ";
    while (n > 0) {
        size_t k = n < sizeof sp - 1 ? n : sizeof sp - 1;
        put(l, sp, k);
        n -= k;
    }
}

/* Column separator, then s (n bytes) right-aligned in width. */
static void put_right_n(line *l, const char *s, size_t n, size_t width)
{
    put_spaces(l, 2 + (n < width ? width - n : 0));
    put(l, s, n);
}

static void put_right(line *l, const char *s, size_t width)
{
    put_right_n(l, s, strlen(s), width);
}

/* Column separator, then s (n bytes) left-aligned in width. */
static void put_left_n(line *l, const char *s, size_t n, size_t width)
{
    put_spaces(l, 2);
    put(l, s, n);
    if (n < width)
        put_spaces(l, width - n);
}

static void put_left(line *l, const char *s, size_t width)
{
    put_left_n(l, s, strlen(s), width);
}

/* The activity's name and its length (pool lengths save a strlen). */
static const char *act_name_len(const nvvp_data *d, const nvvp_act *a, size_t *len)
{
    const char *n = nvvp_act_name(d, a);
    *len = a->kind == NVVP_ACT_KERNEL && a->name ? name_pool_len(&d->pool, a->name) : strlen(n);
    return n;
}

/* A quoted CSV field ("" inside doubles a quote). */
static void put_csv_str(line *l, const char *s)
{
    put(l, "\"", 1);
    for (const char *q; (q = strchr(s, '"')) != NULL; s = q + 1) {
        put(l, s, (size_t)(q - s));
        put(l, "\"\"", 2);
    }
    put_s(l, s);
    put(l, "\"", 1);
}

static void put_u64(line *l, uint64_t v)
{
    char b[GPU_NUM_BUF];
    put_s(l, gpu_fmt_u64(b, v));
}

static int flush_line(line *l, FILE *out)
{
    put(l, "\n", 1);
    if (l->oom)
        return -1;
    fwrite(l->p, 1, l->n, out);
    l->n = 0;
    return 0;
}

char *nvvp_device_label(trc_reader *r, uint32_t device, char *buf, size_t n)
{
    const trc_gpu_device *g = trc_reader_gpu_device(r, device);
    if (g && g->name && *g->name)
        snprintf(buf, n, "%s (%u)", g->name, device);
    else
        snprintf(buf, n, "GPU %u", device);
    return buf;
}

typedef struct devcache {
    char label[MAX_DEV_CACHE][96];
    unsigned char have[MAX_DEV_CACHE];
    char other[96];
} devcache;

static const char *dev_label(devcache *c, trc_reader *r, uint32_t device)
{
    if (device >= MAX_DEV_CACHE)
        return nvvp_device_label(r, device, c->other, sizeof c->other);
    if (!c->have[device]) {
        nvvp_device_label(r, device, c->label[device], sizeof c->label[device]);
        c->have[device] = 1;
    }
    return c->label[device];
}

/* "(20 10 1)" into buf (at least 3 * 20 + 5 bytes). */
static const char *dim3(char *buf, const uint32_t v[3])
{
    char t[GPU_NUM_BUF];
    size_t o = 0;
    buf[o++] = '(';
    for (int i = 0; i < 3; i++) {
        const char *s = gpu_fmt_u64(t, v[i]);
        size_t n = strlen(s);
        memcpy(buf + o, s, n);
        o += n;
        buf[o++] = i < 2 ? ' ' : ')';
    }
    buf[o] = '\0';
    return buf;
}

static trc_status finish_out(line *l, FILE *out)
{
    int oom = l->oom;
    trc_free(l->p);
    if (oom)
        return TRC_ERR_NOMEM;
    if (fflush(out) != 0 || ferror(out))
        return TRC_ERR_IO;
    return TRC_OK;
}

/* ------------------------------------------------------------------ */
/* GPU trace                                                            */
/* ------------------------------------------------------------------ */

enum { W_START = 10, W_DUR = 10, W_DIM = 16, W_REGS = 5, W_SMEM = 7, W_SIZE = 9,
       W_TPUT = 11, W_MEM = 10, W_CTX = 7, W_STREAM = 6, W_CORR = 14 };

static void gpu_text_header(line *l, size_t wdev, size_t wname)
{
    put_right(l, "Start", W_START);
    put_right(l, "Duration", W_DUR);
    put_right(l, "Grid Size", W_DIM);
    put_right(l, "Block Size", W_DIM);
    put_right(l, "Regs*", W_REGS);
    put_right(l, "SSMem*", W_SMEM);
    put_right(l, "DSMem*", W_SMEM);
    put_right(l, "Size", W_SIZE);
    put_right(l, "Throughput", W_TPUT);
    put_right(l, "SrcMemType", W_MEM);
    put_right(l, "DstMemType", W_MEM);
    put_right(l, "Device", wdev);
    put_right(l, "Context", W_CTX);
    put_right(l, "Stream", W_STREAM);
    put_left(l, "Name", wname);
    put_right(l, "Correlation_ID", W_CORR);
}

static void gpu_text_row(line *l, nvvp_data *d, devcache *dc, trc_reader *r, const nvvp_act *a,
                         int64_t origin, size_t wdev, size_t wname)
{
    char b[GPU_NUM_BUF], dimbuf[64];
    int kern = a->kind == NVVP_ACT_KERNEL;
    put_right(l, gpu_fmt_time(b, gpu_tsub(a->start, origin), 6), W_START);
    put_right(l, gpu_fmt_time(b, gpu_tsub(a->end, a->start), 5), W_DUR);
    put_right(l, kern ? dim3(dimbuf, a->u.k.grid) : "-", W_DIM);
    put_right(l, kern ? dim3(dimbuf, a->u.k.block) : "-", W_DIM);
    put_right(l, kern ? gpu_fmt_u64(b, a->u.k.regs) : "-", W_REGS);
    put_right(l, kern ? gpu_fmt_bytes(b, a->u.k.ssmem) : "-", W_SMEM);
    put_right(l, kern ? gpu_fmt_bytes(b, a->u.k.dsmem) : "-", W_SMEM);
    put_right(l, kern ? "-" : gpu_fmt_bytes(b, a->u.m.bytes), W_SIZE);
    put_right(l, kern ? "-" : gpu_fmt_throughput(b, a->u.m.bytes, gpu_tsub(a->end, a->start)), W_TPUT);
    put_right(l, kern ? "-" : gpu_mem_name((trc_mem_kind)a->src), W_MEM);
    put_right(l, a->kind == NVVP_ACT_MEMCPY ? gpu_mem_name((trc_mem_kind)a->dst) : "-", W_MEM);
    put_right(l, dev_label(dc, r, a->device), wdev);
    put_right(l, gpu_fmt_u64(b, a->context), W_CTX);
    put_right(l, gpu_fmt_u64(b, a->stream), W_STREAM);
    size_t nlen;
    const char *name = act_name_len(d, a, &nlen);
    put_left_n(l, name, nlen, wname);
    put_right(l, a->corr ? gpu_fmt_u64(b, a->corr) : "-", W_CORR);
}

static const char gpu_csv_header[] =
    "\"Start\",\"Duration\",\"Grid X\",\"Grid Y\",\"Grid Z\",\"Block X\",\"Block Y\","
    "\"Block Z\",\"Registers Per Thread\",\"Static SMem\",\"Dynamic SMem\",\"Size\","
    "\"Throughput\",\"SrcMemType\",\"DstMemType\",\"Device\",\"Context\",\"Stream\","
    "\"Name\",\"Correlation_ID\"\n"
    "us,us,,,,,,,,B,B,B,MB/s,,,,,,,\n";

static void gpu_csv_row(line *l, nvvp_data *d, devcache *dc, trc_reader *r, const nvvp_act *a,
                        int64_t origin)
{
    char b[GPU_NUM_BUF];
    int kern = a->kind == NVVP_ACT_KERNEL;
    put_s(l, gpu_fmt_fixed(b, gpu_tsub(a->start, origin), 1000, 3));
    put(l, ",", 1);
    put_s(l, gpu_fmt_fixed(b, gpu_tsub(a->end, a->start), 1000, 3));
    for (int i = 0; i < 6; i++) {
        put(l, ",", 1);
        if (kern)
            put_u64(l, i < 3 ? a->u.k.grid[i] : a->u.k.block[i - 3]);
    }
    put(l, ",", 1);
    if (kern) {
        put_u64(l, a->u.k.regs);
        put(l, ",", 1);
        put_u64(l, a->u.k.ssmem);
        put(l, ",", 1);
        put_u64(l, a->u.k.dsmem);
        put(l, ",,,,,", 5);
    } else {
        put(l, ",,,", 3);
        put_u64(l, a->u.m.bytes);
        put(l, ",", 1);
        put_s(l, gpu_fmt_rate(b, a->u.m.bytes, gpu_tsub(a->end, a->start), 1048576, 3));
        put(l, ",", 1);
        put_csv_str(l, gpu_mem_name((trc_mem_kind)a->src));
        put(l, ",", 1);
        if (a->kind == NVVP_ACT_MEMCPY)
            put_csv_str(l, gpu_mem_name((trc_mem_kind)a->dst));
        put(l, ",", 1);
    }
    put_csv_str(l, dev_label(dc, r, a->device));
    put(l, ",", 1);
    put_u64(l, a->context);
    put(l, ",", 1);
    put_u64(l, a->stream);
    put(l, ",", 1);
    put_csv_str(l, nvvp_act_name(d, a));
    put(l, ",", 1);
    put_u64(l, a->corr);
}

static const char gpu_legend[] =
    "\nRegs: Number of registers used per CUDA thread.\n"
    "SSMem: Static shared memory allocated per CUDA block.\n"
    "DSMem: Dynamic shared memory allocated per CUDA block.\n"
    "SrcMemType: The type of source memory accessed by memory operation/copy\n"
    "DstMemType: The type of destination memory accessed by memory operation/copy\n";

trc_status nvvp_gpu_trace_write(nvvp_data *d, trc_reader *r, const nvvp_table_opts *o, FILE *out)
{
    line l = {0};
    devcache *dc = trc_calloc(1, sizeof *dc);
    if (!dc)
        return TRC_ERR_NOMEM;
    size_t wdev = 6, wname = 4;
    if (!o->csv) {
        for (size_t i = 0; i < d->n_acts; i++) {
            const nvvp_act *a = &d->acts[i];
            if (a->kind == NVVP_ACT_SYNC)
                continue;
            size_t n = strlen(dev_label(dc, r, a->device));
            if (n > wdev)
                wdev = n;
            act_name_len(d, a, &n);
            if (n > wname)
                wname = n > NAME_COL_MAX ? NAME_COL_MAX : n;
        }
        gpu_text_header(&l, wdev, wname);
        flush_line(&l, out);
    } else {
        fputs(gpu_csv_header, out);
    }
    for (size_t i = 0; i < d->n_acts && !l.oom; i++) {
        const nvvp_act *a = &d->acts[i];
        if (a->kind == NVVP_ACT_SYNC)
            continue; /* nvprof lists syncs under the API calls, not here */
        if (o->csv)
            gpu_csv_row(&l, d, dc, r, a, o->origin);
        else
            gpu_text_row(&l, d, dc, r, a, o->origin, wdev, wname);
        flush_line(&l, out);
    }
    if (!o->csv && !l.oom)
        fputs(gpu_legend, out);
    trc_free(dc);
    return finish_out(&l, out);
}

/* ------------------------------------------------------------------ */
/* API trace                                                            */
/* ------------------------------------------------------------------ */

enum { W_TID = 8 };

static const char *thread_tid(trc_reader *r, uint32_t thread, char *b)
{
    const trc_thread *t = trc_reader_thread(r, thread);
    if (!t)
        return "-";
    if (t->tid < 0) {
        snprintf(b, GPU_NUM_BUF, "%lld", (long long)t->tid);
        return b;
    }
    return gpu_fmt_u64(b, (uint64_t)t->tid);
}

trc_status nvvp_api_trace_write(nvvp_data *d, trc_reader *r, const nvvp_table_opts *o, FILE *out)
{
    line l = {0};
    char b[GPU_NUM_BUF];
    size_t wname = 4;
    if (o->csv) {
        fputs("\"Start\",\"Duration\",\"Name\",\"Correlation_ID\",\"Thread\",\"Source\"\n"
              "us,us,,,,\n", out);
    } else {
        for (size_t i = 0; i < d->n_apis; i++) {
            size_t n = name_pool_len(&d->pool, d->apis[i].name);
            if (n > wname)
                wname = n > NAME_COL_MAX ? NAME_COL_MAX : n;
        }
        put_right(&l, "Start", W_START);
        put_right(&l, "Duration", W_DUR);
        put_left(&l, "Name", wname);
        put_right(&l, "Correlation_ID", W_CORR);
        put_right(&l, "Thread", W_TID);
        put_left(&l, "Source", 0);
        flush_line(&l, out);
    }
    for (size_t i = 0; i < d->n_apis && !l.oom; i++) {
        const nvvp_api *a = &d->apis[i];
        const char *name = name_pool_str(&d->pool, a->name);
        const char *site = nvvp_data_site(d, r, a->stack);
        if (o->csv) {
            put_s(&l, gpu_fmt_fixed(b, gpu_tsub(a->start, o->origin), 1000, 3));
            put(&l, ",", 1);
            put_s(&l, gpu_fmt_fixed(b, gpu_tsub(a->end, a->start), 1000, 3));
            put(&l, ",", 1);
            put_csv_str(&l, name);
            put(&l, ",", 1);
            put_u64(&l, a->corr);
            put(&l, ",", 1);
            const char *tid = thread_tid(r, a->thread, b);
            if (strcmp(tid, "-") != 0)
                put_s(&l, tid);
            put(&l, ",", 1);
            put_csv_str(&l, site);
        } else {
            put_right(&l, gpu_fmt_time(b, gpu_tsub(a->start, o->origin), 6), W_START);
            put_right(&l, gpu_fmt_time(b, gpu_tsub(a->end, a->start), 5), W_DUR);
            put_left_n(&l, name, name_pool_len(&d->pool, a->name), wname);
            put_right(&l, a->corr ? gpu_fmt_u64(b, a->corr) : "-", W_CORR);
            put_right(&l, thread_tid(r, a->thread, b), W_TID);
            put_left(&l, *site ? site : "-", 0);
            while (l.n && l.p[l.n - 1] == ' ')
                l.n--;
        }
        flush_line(&l, out);
    }
    return finish_out(&l, out);
}
