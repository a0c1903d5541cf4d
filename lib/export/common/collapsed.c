/*
 * lib/export/common/collapsed.c — folded ("collapsed") stacks, docs/design/outputs.md §4:
 * one line per distinct stack, "root;...;leaf COUNT", read by
 * flamegraph.pl, inferno and speedscope.  Contract in collapsed.h.
 *
 * While reading, only a count per (group, reader stack id) is kept, where
 * the group is the thread when --threads/--pids ask for root frames.  The
 * text is made at write time; stacks that render the same (e.g. two lines
 * of one function with --no-lines) are merged, and lines are sorted so
 * the output is deterministic.
 */
#include "lib/export/common/collapsed.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/util/hashtab.h"
#include "lib/export/common/short_path.h"
#include "lib/procname.h"

typedef struct row {
    uint32_t group, stack;
    uint64_t count, weight_ns;
    /* GPU rows only (leaf_id != 0) */
    uint32_t leaf_id;
    uint8_t origin;          /* exp_gpu_origin */
    uint32_t via;            /* launching thread of a hit charged via a waiting one, else 0 */
    int64_t pid;
    const char *leaf;        /* borrowed from the correlator */
    /* idle charge rows only (idle != 0): kind + 1, and the device */
    uint8_t idle;
    uint32_t device;
} row;

struct exp_collapsed {
    exp_collapsed_options opt;
    trch_u64map map;
    trch_index gpu_index;     /* GPU row key → row */
    row *rows;
    size_t n_rows, cap_rows;
    uint64_t last_key;  /* one-entry cache: consecutive samples often repeat */
    uint32_t last_row;
    int have_last;
    uint64_t samples;
};

/* A growable text buffer (allocation through lib/util/alloc.h). */
typedef struct sbuf {
    char *p;
    size_t len, cap;
    int nomem;
} sbuf;

static void sb_putn(sbuf *b, const char *s, size_t n)
{
    if (b->nomem)
        return;
    /* len + n + 1 bytes: byte len + n (the NUL) may be written. */
    if (trcu_grow((void **)&b->p, &b->cap, b->len + n, 1) != TRC_OK) {
        b->nomem = 1;
        return;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_puts(sbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k > 0)
        sb_putn(b, tmp, (size_t)k < sizeof tmp ? (size_t)k : sizeof tmp - 1);
}

static void sb_escaped(sbuf *b, const char *s)
{
    if (!s || !*s) {
        sb_puts(b, "<unknown>");
        return;
    }
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        int esc = c == ';' || c == '%' || c < 0x20 || c == 0x7f;
        if (c == ' ' && (i == 0 || i + 1 == n || s[i + 1] == ' ' || s[i - 1] == ' '))
            esc = 1;
        if (esc)
            sb_printf(b, "%%%02X", c);
        else
            sb_putn(b, (const char *)&s[i], 1);
    }
}

exp_collapsed *exp_collapsed_new(const exp_collapsed_options *opts)
{
    exp_collapsed *c = trc_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (opts)
        c->opt = *opts;
    return c;
}

void exp_collapsed_free(exp_collapsed *c)
{
    if (!c)
        return;
    trch_u64map_cleanup(&c->map);
    trch_index_cleanup(&c->gpu_index);
    trc_free(c->rows);
    trc_free(c);
}

uint64_t exp_collapsed_samples(const exp_collapsed *c) { return c->samples; }

trc_status exp_collapsed_add(exp_collapsed *c, const trc_reader *r, const trc_sample *s)
{
    uint32_t group = (c->opt.threads || c->opt.pids) ? s->thread : 0;
    uint64_t key = ((uint64_t)group << 32) | s->stack;
    uint32_t idx;
    if (c->have_last && c->last_key == key) {
        idx = c->last_row;
    } else {
        int added;
        if (c->n_rows >= UINT32_MAX - 1)
            return TRC_ERR_LIMIT;
        /* room for a new row first, so the map never names a missing row */
        trc_status st = trcu_grow((void **)&c->rows, &c->cap_rows, c->n_rows, sizeof *c->rows);
        if (st != TRC_OK)
            return st;
        st = trch_u64map_put(&c->map, key, (uint32_t)c->n_rows, &idx, &added);
        if (st != TRC_OK)
            return st;
        if (added) {
            c->rows[idx].group = group;
            c->rows[idx].stack = s->stack;
            c->n_rows++;
        }
        c->last_key = key;
        c->last_row = idx;
        c->have_last = 1;
    }
    uint32_t n = s->count ? s->count : 1;
    c->rows[idx].count += n;
    c->rows[idx].weight_ns += s->weight_ns * n;
    c->samples += n;
    return TRC_OK;
}

trc_status exp_collapsed_add_gpu(exp_collapsed *c, const trc_reader *r, const exp_gpu_hit *h)
{
    uint32_t group = (c->opt.threads || c->opt.pids) ? h->thread : 0;
    int64_t pid = (c->opt.threads || c->opt.pids) ? h->pid : 0;
    uint64_t hash = trch_hash_more_u64(trch_hash_u64(((uint64_t)group << 32) | h->stack),
                                       (uint64_t)pid);
    hash = trch_hash_more_u64(hash, ((uint64_t)h->origin << 32) | h->name_id);
    uint32_t via = h->waiter ? h->thread : 0;
    hash = trch_hash_more_u64(hash, via);
    trch_probe p;
    row *rw = NULL;

    for (uint32_t i = trch_first(&c->gpu_index, hash, &p); i != TRCH_NONE;
         i = trch_next(&c->gpu_index, &p)) {
        const row *o = &c->rows[i];
        if (o->group == group && o->pid == pid && o->stack == h->stack &&
            o->origin == (uint8_t)h->origin && o->leaf_id == h->name_id && o->via == via) {
            rw = &c->rows[i];
            break;
        }
    }
    if (!rw) {
        if (c->n_rows >= UINT32_MAX - 1)
            return TRC_ERR_LIMIT;
        trc_status st = trcu_grow((void **)&c->rows, &c->cap_rows, c->n_rows, sizeof *c->rows);
        if (st != TRC_OK)
            return st;
        st = trch_add(&c->gpu_index, hash, (uint32_t)c->n_rows);
        if (st != TRC_OK)
            return st;
        rw = &c->rows[c->n_rows++];
        rw->group = group;
        rw->pid = pid;
        rw->stack = h->stack;
        rw->origin = (uint8_t)h->origin;
        rw->via = via;
        rw->leaf_id = h->name_id;
        rw->leaf = h->name;
    }
    rw->count++;
    rw->weight_ns += h->dur_ns;
    c->samples++;
    return TRC_OK;
}

static trc_status add_idle(void *ctx, uint32_t device, exp_gpu_idle_kind kind, uint32_t thread,
                           uint32_t stack, uint64_t ns)
{
    exp_collapsed *c = ctx;
    uint32_t group = (c->opt.threads || c->opt.pids) ? thread : 0;
    uint8_t idle = (uint8_t)(kind + 1);
    uint64_t hash = trch_hash_more_u64(trch_hash_u64(((uint64_t)group << 32) | stack),
                                       ((uint64_t)idle << 32) | device);
    trch_probe p;
    row *rw = NULL;
    for (uint32_t i = trch_first(&c->gpu_index, hash, &p); i != TRCH_NONE;
         i = trch_next(&c->gpu_index, &p)) {
        const row *o = &c->rows[i];
        if (o->idle == idle && o->device == device && o->group == group && o->stack == stack) {
            rw = &c->rows[i];
            break;
        }
    }
    if (!rw) {
        if (c->n_rows >= UINT32_MAX - 1)
            return TRC_ERR_LIMIT;
        trc_status st = trcu_grow((void **)&c->rows, &c->cap_rows, c->n_rows, sizeof *c->rows);
        if (st != TRC_OK)
            return st;
        st = trch_add(&c->gpu_index, hash, (uint32_t)c->n_rows);
        if (st != TRC_OK)
            return st;
        rw = &c->rows[c->n_rows++];
        memset(rw, 0, sizeof *rw);
        rw->group = group;
        rw->stack = stack;
        rw->idle = idle;
        rw->device = device;
    }
    rw->count++;
    rw->weight_ns += ns;
    c->samples++;
    return TRC_OK;
}

trc_status exp_collapsed_add_sync(exp_collapsed *c, const trc_reader *r, const exp_sync_hit *h)
{
    /* a GPU hit whose "activity" is the call: its API name as the leaf,
     * the host time it blocked as its duration */
    exp_gpu_hit g = {h->pid, h->thread, h->stack, h->origin, EXP_GPU_KERNEL,
                     h->name_id, h->name, h->blocked_ns, 0, 0, 0};
    return exp_collapsed_add_gpu(c, r, &g);
}

trc_status exp_collapsed_add_gpu_idle(exp_collapsed *c, const exp_gpu_idle *g)
{
    return exp_gpu_idle_each(g, add_idle, c);
}

static void put_frame(const exp_collapsed *c, sbuf *b, const trc_frame *f)
{
    if (!f) {
        sb_puts(b, "<unknown>");
        return;
    }
    sb_escaped(b, f->function);
    if (!f->file || !*f->file)
        return;
    /* --no-lines drops only the line: the file keeps same-named functions
     * of different files ("<module>", "forward", "__init__") apart */
    sb_puts(b, " (");
    sb_escaped(b, c->opt.full_filenames ? f->file : exp_short_path(f->file));
    if (f->line && !c->opt.no_lines)
        sb_printf(b, ":%" PRIu32, f->line);
    sb_puts(b, ")");
}

/* Root frames for --pids/--threads; `pid` is used when the thread is
 * unknown (GPU activities whose launch call was not found). */
static void put_roots(const exp_collapsed *c, const trc_reader *r, sbuf *b, uint32_t group,
                      int64_t pid_hint)
{
    const trc_thread *t = group ? trc_reader_thread(r, group) : NULL;
    if (c->opt.pids) {
        int64_t pid = t ? t->pid : pid_hint;
        char name[PROCNAME_MAX];
        procname(trc_reader_process_by_pid(r, pid), pid, name, sizeof name);
        sb_escaped(b, name);
        sb_puts(b, ";");
    }
    if (c->opt.threads) {
        if (!t) {
            sb_puts(b, "<unknown thread>;");
            return;
        }
        sb_escaped(b, t->name && *t->name ? t->name : "<unnamed>");
        sb_printf(b, " (tid %" PRId64 ");", t->tid);
    }
}

/* Appends the frames of `stack`, root first. */
static trc_status put_stack(const exp_collapsed *c, const trc_reader *r, sbuf *b,
                            uint32_t stack, uint32_t **path, size_t *cap)
{
    if (stack == 0) {
        sb_puts(b, EXP_NO_PYTHON_FRAMES);
        return TRC_OK;
    }
    size_t n = 0;
    for (const trc_stack *s = trc_reader_stack(r, stack); s && s->id != 0;
         s = trc_reader_stack(r, s->parent)) {
        if (trcu_grow((void **)path, cap, n, sizeof **path) != TRC_OK)
            return TRC_ERR_NOMEM;
        (*path)[n++] = s->frame;
        if (s->parent >= s->id)
            break; /* the reader guarantees parent < id; never loop */
    }
    if (n == 0) {
        sb_puts(b, "<unknown>");
        return TRC_OK;
    }
    for (size_t i = n; i-- > 0;) {
        put_frame(c, b, trc_reader_frame(r, (*path)[i]));
        if (i)
            sb_puts(b, ";");
    }
    return TRC_OK;
}

typedef struct line {
    size_t off;     /* into the text arena */
    uint64_t value; /* count, or sampled ns when weighting by time */
    uint64_t count, ns; /* both, for exp_collapsed_each */
    uint32_t extra; /* largest-remainder round-up (0 or 1) */
} line;

static int line_cmp(const void *a, const void *b, void *arena)
{
    const line *x = a, *y = b;
    return strcmp((const char *)arena + x->off, (const char *)arena + y->off);
}

/* Larger sub-microsecond remainder first; ties in line (sorted) order. */
static int rem_cmp(const void *a, const void *b, void *lines)
{
    const line *l = lines;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    uint64_t rx = l[x].value % 1000, ry = l[y].value % 1000;
    if (rx != ry)
        return rx < ry ? 1 : -1;
    return (x > y) - (x < y);
}

/* Converts merged ns values to whole microseconds summing to the rounded
 * total: each gets its floor, and the lines with the largest remainders
 * get one more until the total is reached. */
static trc_status apportion_us(line *lines, size_t n)
{
    uint64_t total = 0, floors = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        total += lines[i].value;
        floors += lines[i].value / 1000;
        k += lines[i].value % 1000 != 0;
    }
    uint64_t extra = (total + 500) / 1000 - floors;
    if (extra) {
        size_t *order = trc_malloc(k * sizeof *order);
        if (!order)
            return TRC_ERR_NOMEM;
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (lines[i].value % 1000)
                order[m++] = i;
        qsort_r(order, m, sizeof *order, rem_cmp, lines);
        for (size_t i = 0; i < m && i < extra; i++)
            lines[order[i]].extra = 1;
        trc_free(order);
    }
    for (size_t i = 0; i < n; i++)
        lines[i].value = lines[i].value / 1000 + lines[i].extra;
    return TRC_OK;
}

/* The launching stack of a GPU row, then its leaf. */
static trc_status put_gpu(const exp_collapsed *c, const trc_reader *r, sbuf *b, const row *rw,
                          uint32_t **path, size_t *cap)
{
    if (rw->origin == EXP_GPU_PYTHON) {
        trc_status st = put_stack(c, r, b, rw->stack, path, cap);
        if (st != TRC_OK)
            return st;
        const trc_thread *t = rw->via ? trc_reader_thread(r, rw->via) : NULL;
        if (t) {
            /* the stack is a waiting thread's: name the launcher */
            sb_printf(b, ";[" EXP_GPU_VIA_FRAME " %" PRId64 " ", t->tid);
            sb_escaped(b, t->name && *t->name ? t->name : "<unnamed>");
            sb_puts(b, "]");
        }
    } else {
        sb_puts(b, rw->origin == EXP_GPU_NO_PYTHON ? EXP_GPU_NO_PYTHON_ROOT
                                                   : EXP_GPU_UNKNOWN_ROOT);
    }
    sb_puts(b, ";");
    sb_escaped(b, rw->leaf);
    return TRC_OK;
}

trc_status exp_collapsed_each(exp_collapsed *c, const trc_reader *r, exp_collapsed_line_fn fn,
                              void *ctx)
{
    trc_status st = TRC_OK;
    sbuf text = {0};
    uint32_t *path = NULL;
    size_t path_cap = 0;
    line *lines = NULL;
    if (c->n_rows) {
        lines = trc_calloc(c->n_rows, sizeof *lines);
        if (!lines)
            return TRC_ERR_NOMEM;
    }
    size_t n = 0;
    for (size_t i = 0; i < c->n_rows; i++) {
        const row *rw = &c->rows[i];
        lines[n].off = text.len;
        lines[n].value = c->opt.weight_us ? rw->weight_ns : rw->count;
        lines[n].count = rw->count;
        lines[n].ns = rw->weight_ns;
        if (rw->idle) {
            char root[64];
            exp_gpu_idle_root(root, sizeof root, rw->device, (exp_gpu_idle_kind)(rw->idle - 1));
            sb_puts(&text, root);
            sb_puts(&text, ";");
        }
        put_roots(c, r, &text, rw->group, rw->leaf_id ? rw->pid : -1);
        if (rw->leaf_id)
            st = put_gpu(c, r, &text, rw, &path, &path_cap);
        else
            st = put_stack(c, r, &text, rw->stack, &path, &path_cap);
        if (st != TRC_OK)
            goto out;
        sb_putn(&text, "", 1); /* keep the NUL: lines are C strings in the arena */
        n++;
    }
    if (text.nomem) {
        st = TRC_ERR_NOMEM;
        goto out;
    }
    if (n)
        qsort_r(lines, n, sizeof *lines, line_cmp, text.p);
    /* merge lines that render alike, then round the merged values */
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        const char *s = text.p + lines[i].off;
        uint64_t v = lines[i].value, cnt = lines[i].count, ns = lines[i].ns;
        size_t j = i + 1;
        for (; j < n && strcmp(s, text.p + lines[j].off) == 0; j++) {
            v += lines[j].value;
            cnt += lines[j].count;
            ns += lines[j].ns;
        }
        lines[m].off = lines[i].off;
        lines[m].count = cnt;
        lines[m].ns = ns;
        lines[m++].value = v;
        i = j;
    }
    if (c->opt.weight_us && (st = apportion_us(lines, m)) != TRC_OK)
        goto out;
    for (size_t i = 0; i < m && st == TRC_OK; i++)
        if (lines[i].value)
            st = fn(ctx, text.p + lines[i].off, lines[i].value, lines[i].count, lines[i].ns);
out:
    trc_free(lines);
    trc_free(text.p);
    trc_free(path);
    return st;
}

static trc_status print_line(void *out, const char *stack, uint64_t value, uint64_t count,
                             uint64_t ns)
{
    (void)count;
    (void)ns;
    return fprintf(out, "%s %" PRIu64 "\n", stack, value) < 0 ? TRC_ERR_IO : TRC_OK;
}

trc_status exp_collapsed_write(exp_collapsed *c, const trc_reader *r, FILE *out)
{
    trc_status st = exp_collapsed_each(c, r, print_line, out);
    if (st == TRC_OK && (fflush(out) != 0 || ferror(out)))
        st = TRC_ERR_IO;
    return st;
}
