/*
 * lib/export/nvvp/nvvp_summary.c — nvprof's two-section summary
 * (docs/design/outputs.md §5; contract in nvvp_summary.h).  One
 * aggregate per distinct name per section, indexed by the name's pool
 * id.
 */
#include "lib/export/nvvp/nvvp_summary.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/export/common/name_pool.h"
#include "lib/export/common/gpu_units.h"

typedef struct agg {
    uint64_t calls, total;
    int64_t min, max;
} agg;

typedef struct sec_agg {
    agg *v;
    uint32_t cap;
    uint64_t total;
} sec_agg;

struct nvvp_summary {
    name_pool pool;
    sec_agg sec[2];
    uint32_t copy_ids[TRC_COPY_PTOP + 2]; /* pool id + 1 per copy kind; last = memset */
    uint64_t dropped;
    int64_t pid;
    int pids;             /* 0 none seen, 1 one, 2 several */
};

nvvp_summary *nvvp_summary_new(void)
{
    nvvp_summary *s = trc_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    name_pool_init(&s->pool);
    return s;
}

void nvvp_summary_free(nvvp_summary *s)
{
    if (!s)
        return;
    name_pool_cleanup(&s->pool);
    trc_free(s->sec[0].v);
    trc_free(s->sec[1].v);
    trc_free(s);
}

int nvvp_summary_sort_key(const char *word)
{
    static const char *const words[] = {"time", "calls", "avg", "min", "max", "name"};
    for (int i = 0; i < 6; i++)
        if (strcmp(word, words[i]) == 0)
            return i;
    return -1;
}

uint64_t nvvp_summary_total_ns(const nvvp_summary *s, int section)
{
    return section == 0 || section == 1 ? s->sec[section].total : 0;
}

static void see_pid(nvvp_summary *s, int64_t pid)
{
    if (s->pids == 0) {
        s->pid = pid;
        s->pids = 1;
    } else if (pid != s->pid) {
        s->pids = 2;
    }
}

static trc_status count(nvvp_summary *s, int sec, uint32_t id, int64_t start, int64_t end)
{
    sec_agg *x = &s->sec[sec];
    if (trcu_grow32(&x->v, &x->cap, id, sizeof *x->v) != TRC_OK)
        return TRC_ERR_NOMEM;
    int64_t d = end > start ? gpu_tsub(end, start) : 0;
    agg *a = &x->v[id];
    if (a->calls == 0 || d < a->min)
        a->min = d;
    if (a->calls == 0 || d > a->max)
        a->max = d;
    a->calls++;
    a->total += (uint64_t)d;
    x->total += (uint64_t)d;
    return TRC_OK;
}

/* Pool id of the bracketed name of a copy kind (index TRC_COPY_PTOP + 1
 * = memset), cached. */
static trc_status copy_id(nvvp_summary *s, unsigned kind, uint32_t *id)
{
    if (kind > TRC_COPY_PTOP + 1)
        kind = TRC_COPY_UNKNOWN;
    if (!s->copy_ids[kind]) {
        const char *name = kind == TRC_COPY_PTOP + 1 ? gpu_memset_name()
                                                      : gpu_copy_name((trc_copy_kind)kind);
        uint32_t nid;
        trc_status st = name_pool_intern(&s->pool, name, &nid);
        if (st != TRC_OK)
            return st;
        s->copy_ids[kind] = nid + 1;
    }
    *id = s->copy_ids[kind] - 1;
    return TRC_OK;
}

trc_status nvvp_summary_add(nvvp_summary *s, trc_reader *r, const trc_event *ev)
{
    uint32_t id;
    trc_status st;
    switch (ev->type) {
    case TRC_EV_GPU_KERNEL: {
        const trc_gpu_kernel *k = &ev->u.kernel;
        see_pid(s, k->where.pid);
        st = name_pool_intern(&s->pool, k->name && *k->name ? k->name : "<unnamed kernel>", &id);
        return st != TRC_OK ? st : count(s, 0, id, k->start_ns, k->end_ns);
    }
    case TRC_EV_GPU_MEMCPY: {
        const trc_gpu_memcpy *m = &ev->u.memcpy;
        see_pid(s, m->where.pid);
        st = copy_id(s, (unsigned)m->copy_kind, &id);
        return st != TRC_OK ? st : count(s, 0, id, m->start_ns, m->end_ns);
    }
    case TRC_EV_GPU_MEMSET: {
        const trc_gpu_memset *m = &ev->u.memset;
        see_pid(s, m->where.pid);
        st = copy_id(s, TRC_COPY_PTOP + 1, &id);
        return st != TRC_OK ? st : count(s, 0, id, m->start_ns, m->end_ns);
    }
    case TRC_EV_API_CALL: {
        const trc_api_call *a = &ev->u.api;
        const trc_thread *t = trc_reader_thread(r, a->thread);
        if (t)
            see_pid(s, t->pid);
        st = name_pool_intern(&s->pool, a->name && *a->name ? a->name : "<unnamed call>", &id);
        return st != TRC_OK ? st : count(s, 1, id, a->start_ns, a->end_ns);
    }
    case TRC_EV_LOSS:
        if (ev->u.loss.kind == TRC_LOSS_GPU_DROPPED)
            s->dropped += ev->u.loss.count;
        return TRC_OK;
    default:
        return TRC_OK;
    }
}

/* ------------------------------------------------------------------ */

typedef struct sortctx {
    const nvvp_summary *s;
    const sec_agg *x;
    int key;
} sortctx;

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
    return a > b ? -1 : a < b;
}

/* qsort_r comparator (glibc argument order). */
static int cmp_rows(const void *pa, const void *pb, void *ctx)
{
    const sortctx *g = ctx;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    const agg *x = &g->x->v[a], *y = &g->x->v[b];
    int c = 0;
    switch (g->key) {
    case NVVP_SORT_CALLS: c = cmp_u64_desc(x->calls, y->calls); break;
    case NVVP_SORT_AVG: c = cmp_u64_desc(x->total / x->calls, y->total / y->calls); break;
    case NVVP_SORT_MIN: c = cmp_u64_desc((uint64_t)x->min, (uint64_t)y->min); break;
    case NVVP_SORT_MAX: c = cmp_u64_desc((uint64_t)x->max, (uint64_t)y->max); break;
    case NVVP_SORT_NAME: break;
    default: c = cmp_u64_desc(x->total, y->total); break;
    }
    if (c == 0 && g->key != NVVP_SORT_NAME)
        c = cmp_u64_desc(x->total, y->total);
    if (c == 0)
        c = strcmp(name_pool_str(&g->s->pool, a), name_pool_str(&g->s->pool, b));
    return c;
}

/* Ids of the section's rows in output order; caller frees. NULL + *n = 0
 * when empty; NULL + *n = SIZE_MAX when out of memory. */
static uint32_t *ordered(const nvvp_summary *s, int sec, int key, size_t *n)
{
    const sec_agg *x = &s->sec[sec];
    size_t k = 0;
    for (uint32_t i = 0; i < x->cap; i++)
        k += x->v[i].calls != 0;
    *n = k;
    if (k == 0)
        return NULL;
    uint32_t *ids = trc_malloc(k * sizeof *ids);
    if (!ids) {
        *n = SIZE_MAX;
        return NULL;
    }
    k = 0;
    for (uint32_t i = 0; i < x->cap; i++)
        if (x->v[i].calls)
            ids[k++] = i;
    sortctx g = {s, x, key};
    qsort_r(ids, k, sizeof *ids, cmp_rows, &g);
    return ids;
}

int nvvp_summary_row_at(nvvp_summary *s, int section, size_t i, nvvp_summary_row *out)
{
    size_t n;
    if (section != 0 && section != 1)
        return 0;
    uint32_t *ids = ordered(s, section, NVVP_SORT_TIME, &n);
    if (!ids || i >= n) {
        trc_free(ids);
        return 0;
    }
    const agg *a = &s->sec[section].v[ids[i]];
    out->name = name_pool_str(&s->pool, ids[i]);
    out->calls = a->calls;
    out->total_ns = a->total;
    out->min_ns = a->min;
    out->max_ns = a->max;
    trc_free(ids);
    return 1;
}

static void csv_name(FILE *out, const char *name)
{
    fputc('"', out);
    for (const char *p = name; *p; p++) {
        if (*p == '"')
            fputc('"', out);
        fputc(*p, out);
    }
    fputc('"', out);
}

static void write_rows(const nvvp_summary *s, int sec, const uint32_t *ids, size_t n,
                       const nvvp_summary_opts *o, FILE *out)
{
    static const char *const labels[2] = {"GPU activities", "API calls"};
    const sec_agg *x = &s->sec[sec];
    char pct[GPU_NUM_BUF], t1[GPU_NUM_BUF], t2[GPU_NUM_BUF], t3[GPU_NUM_BUF],
        t4[GPU_NUM_BUF], c[GPU_NUM_BUF];
    if (o->limit && n > o->limit)
        n = o->limit;
    for (size_t i = 0; i < n; i++) {
        const agg *a = &x->v[ids[i]];
        const char *name = name_pool_str(&s->pool, ids[i]);
        int64_t avg = (int64_t)((a->total + a->calls / 2) / a->calls);
        /* share in units of 1/1000 percent */
        int64_t share = x->total ? (int64_t)(((unsigned __int128)a->total * 100000u + x->total / 2) / x->total) : 0;
        if (o->csv) {
            fprintf(out, "\"%s\",%s,%s,%s,%s,%s,%s,", labels[sec], gpu_fmt_fixed(pct, share, 1000, 3),
                    gpu_fmt_fixed(t1, (int64_t)a->total, 1000, 3), gpu_fmt_u64(c, a->calls),
                    gpu_fmt_fixed(t2, avg, 1000, 3), gpu_fmt_fixed(t3, a->min, 1000, 3),
                    gpu_fmt_fixed(t4, a->max, 1000, 3));
            csv_name(out, name);
            fputc('\n', out);
        } else {
            char label[24];
            snprintf(label, sizeof label, "%s:", labels[sec]);
            gpu_fmt_fixed(pct, share, 1000, 2);
            strcat(pct, "%");
            fprintf(out, "%16s%9s%10s%10s%10s%10s%10s  %s\n", i == 0 ? label : "", pct,
                    gpu_fmt_time(t1, (int64_t)a->total, 5), gpu_fmt_u64(c, a->calls),
                    gpu_fmt_time(t2, avg, 5), gpu_fmt_time(t3, a->min, 5),
                    gpu_fmt_time(t4, a->max, 5), name);
        }
    }
}

trc_status nvvp_summary_write(nvvp_summary *s, trc_reader *r, const nvvp_summary_opts *o,
                              FILE *out)
{
    size_t n0, n1;
    char who[48];
    uint32_t *ids0 = ordered(s, 0, o->sort, &n0);
    uint32_t *ids1 = ordered(s, 1, o->sort, &n1);
    trc_status st = TRC_OK;
    if (n0 == SIZE_MAX || n1 == SIZE_MAX) {
        st = TRC_ERR_NOMEM;
        goto out;
    }
    if (s->pids == 1)
        snprintf(who, sizeof who, "==%lld==", (long long)s->pid);
    else
        snprintf(who, sizeof who, "==trc==");
    if (o->csv) {
        fputs("\"Type\",\"Time(%)\",\"Time\",\"Calls\",\"Avg\",\"Min\",\"Max\",\"Name\"\n"
              ",%,us,,us,us,us,\n", out);
    } else {
        if (s->pids == 2)
            fprintf(out, "%s Profiling result (all processes):\n", who);
        else
            fprintf(out, "%s Profiling result:\n", who);
        if (n0 == 0 && n1 == 0)
            fprintf(out, "%s No GPU activities or CUDA API calls in the trace.\n", who);
        else
            fprintf(out, "%16s%9s%10s%10s%10s%10s%10s  %s\n", "Type", "Time(%)", "Time", "Calls",
                    "Avg", "Min", "Max", "Name");
    }
    write_rows(s, 0, ids0, n0, o, out);
    write_rows(s, 1, ids1, n1, o, out);
    if (!o->csv && s->dropped)
        fprintf(out, "%s Warning: %llu GPU activity records were dropped by CUPTI: "
                     "GPU activities are incomplete.\n",
                who, (unsigned long long)s->dropped);
    if (fflush(out) != 0 || ferror(out))
        st = TRC_ERR_IO;
out:
    trc_free(ids0);
    trc_free(ids1);
    return st;
}
