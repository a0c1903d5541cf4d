/*
 * lib/export/speedscope/speedscope.c — speedscope JSON exporter (see speedscope.h;
 * format facts in docs/design/outputs.md §1, speedscope's file-format-schema.json).
 *
 * Each profile ("track": a thread, or a process with merge_threads) keeps
 * the run it is extending (view stack + summed weight).  When the stack
 * changes the run is appended to the track's buffer; a full buffer is
 * written to a shared temporary file as one block and remembered by its
 * offset.  finish() replays every track's blocks, then its buffer, twice:
 * once for "samples", once for "weights".
 */
#include "lib/export/speedscope/speedscope.h"

#include <errno.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/util/spill.h"
#include "lib/export/common/cpuview.h"
#include "lib/export/common/json_out.h"
#include "lib/export/speedscope/speedscope_gpu.h"

#define DEFAULT_SPOOL_RUNS 4096u
#define NO_TRACK UINT32_MAX

typedef struct run {
    uint32_t stack;   /* view stack */
    uint32_t pad;
    uint64_t weight;  /* ns */
} run;

typedef struct track {
    int is_process;
    uint32_t thread;  /* reader thread id (threads) */
    int64_t pid, tid;
    int64_t first_ns; /* trace clock of the first sample */
    uint64_t total;   /* sum of weights, ns */
    run cur;          /* the run being extended; valid when has_cur */
    int has_cur;
    run *buf;
    uint32_t n_buf, cap_buf;
    int64_t *blocks;  /* spill-file offsets of full buffers, in order */
    uint32_t n_blocks, cap_blocks;
} track;

struct sscope {
    sscope_options opt;
    cpuview *view;
    track *tracks;
    uint32_t n_tracks, cap_tracks;
    uint32_t *by_thread;   /* reader thread id -> track index + 1 */
    uint32_t by_thread_cap;
    uint32_t last_proc;    /* cache for process lookups, NO_TRACK = none */
    trcu_spill spill;      /* full buffers of runs, empty until needed */
    int have_start;
    int64_t start_ns;      /* trace start: the first segment's start */
    char *name;            /* document name */
    char *text;            /* one stack's JSON text, built backwards */
    uint32_t text_cap;
    run *replay;           /* one block read back from the spill file */
    sgpu *gpu;             /* GPU stream profiles */
    exp_gpu_callsite_stats lines; /* GPU time by attribution (sscope_gpu_hit) */
    char err[200];
};

static trc_status fail(sscope *s, trc_status st, const char *what)
{
    snprintf(s->err, sizeof s->err, "speedscope: %s: %s", what,
             st == TRC_ERR_IO ? strerror(errno) : trc_status_str(st));
    return st;
}

sscope *sscope_new(const sscope_options *opts)
{
    sscope *s = trc_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    if (opts)
        s->opt = *opts;
    if (!s->opt.spool_runs)
        s->opt.spool_runs = DEFAULT_SPOOL_RUNS;
    s->last_proc = NO_TRACK;
    s->view = cpuview_new(s->opt.lines);
    s->gpu = sgpu_new(s->opt.spool_runs);
    if (!s->view || !s->gpu) {
        cpuview_free(s->view);
        sgpu_free(s->gpu);
        trc_free(s);
        return NULL;
    }
    return s;
}

void sscope_free(sscope *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->n_tracks; i++) {
        trc_free(s->tracks[i].buf);
        trc_free(s->tracks[i].blocks);
    }
    trc_free(s->tracks);
    trc_free(s->by_thread);
    trcu_spill_close(&s->spill);
    cpuview_free(s->view);
    sgpu_free(s->gpu);
    trc_free(s->name);
    trc_free(s->text);
    trc_free(s->replay);
    trc_free(s);
}

void sscope_gpu_hit(sscope *s, const exp_gpu_hit *h) { exp_gpu_stats_add(&s->lines, h); }

const char *sscope_error(const sscope *s)
{
    return s->err;
}

static track *new_track(sscope *s, uint32_t *index)
{
    track *t;
    if (trcu_grow32(&s->tracks, &s->cap_tracks, s->n_tracks, sizeof *s->tracks))
        return NULL;
    t = &s->tracks[s->n_tracks];
    memset(t, 0, sizeof *t);
    *index = s->n_tracks++;
    return t;
}

/* The thread's track, created on first use; NULL when out of memory. */
static track *thread_track(sscope *s, const trc_reader *r, uint32_t thread)
{
    const trc_thread *th;
    uint32_t idx;
    track *t;

    if (thread < s->by_thread_cap && s->by_thread[thread])
        return &s->tracks[s->by_thread[thread] - 1];
    if (thread == UINT32_MAX ||
        trcu_grow32(&s->by_thread, &s->by_thread_cap, thread, sizeof *s->by_thread))
        return NULL;
    t = new_track(s, &idx);
    if (!t)
        return NULL;
    th = trc_reader_thread(r, thread);
    t->thread = thread;
    t->pid = th ? th->pid : -1;
    t->tid = th ? th->tid : -1;
    s->by_thread[thread] = idx + 1;
    return t;
}

static track *process_track(sscope *s, int64_t pid)
{
    uint32_t idx;
    track *t;

    if (s->last_proc != NO_TRACK && s->tracks[s->last_proc].pid == pid)
        return &s->tracks[s->last_proc];
    for (uint32_t i = 0; i < s->n_tracks; i++) {
        if (s->tracks[i].is_process && s->tracks[i].pid == pid) {
            s->last_proc = i;
            return &s->tracks[i];
        }
    }
    t = new_track(s, &idx);
    if (!t)
        return NULL;
    t->is_process = 1;
    t->pid = pid;
    s->last_proc = idx;
    return t;
}

/* Move the track's full buffer to the spill file. */
static trc_status spill_block(sscope *s, track *t)
{
    if (trcu_grow32(&t->blocks, &t->cap_blocks, t->n_blocks, sizeof *t->blocks))
        return fail(s, TRC_ERR_NOMEM, "spill index");
    if (trcu_spill_append(&s->spill, t->buf, t->n_buf, sizeof *t->buf, &t->blocks[t->n_blocks]))
        return fail(s, TRC_ERR_IO, trcu_spill_used(&s->spill) ? "writing the temporary file"
                                                             : "cannot create a temporary file");
    t->n_blocks++;
    t->n_buf = 0;
    return TRC_OK;
}

/* Add weight w of view stack `stack` at time ns to track t. */
static trc_status track_add(sscope *s, track *t, uint32_t stack, uint64_t w, int64_t ns)
{
    trc_status st;

    if (!t->has_cur) {
        t->first_ns = ns;
    } else if (t->cur.stack == stack) {
        t->cur.weight += w;
        t->total += w;
        return TRC_OK;
    } else {
        if (t->n_buf == s->opt.spool_runs && (st = spill_block(s, t)) != TRC_OK)
            return st;
        if (trcu_grow32(&t->buf, &t->cap_buf, t->n_buf, sizeof *t->buf))
            return fail(s, TRC_ERR_NOMEM, "sample buffer");
        t->buf[t->n_buf++] = t->cur;
    }
    t->has_cur = 1;
    t->cur.stack = stack;
    t->cur.weight = w;
    t->total += w;
    return TRC_OK;
}

static trc_status on_sample(sscope *s, const trc_reader *r, const trc_sample *sm)
{
    uint64_t w = sm->weight_ns * (uint64_t)(sm->count ? sm->count : 1);
    uint32_t stack;
    track *t;
    trc_status st;

    if (w == 0)
        return TRC_OK; /* speedscope drops zero weights anyway */
    if (cpuview_sample_stack(s->view, r, sm->stack, &stack) != TRC_OK)
        return fail(s, TRC_ERR_NOMEM, "stack table");
    t = thread_track(s, r, sm->thread);
    if (!t)
        return fail(s, TRC_ERR_NOMEM, "thread table");
    if ((st = track_add(s, t, stack, w, sm->time_ns)) != TRC_OK)
        return st;
    if (s->opt.merge_threads) {
        int64_t pid = t->pid; /* t may move when process_track grows the array */
        t = process_track(s, pid);
        if (!t)
            return fail(s, TRC_ERR_NOMEM, "process table");
        return track_add(s, t, stack, w, sm->time_ns);
    }
    return TRC_OK;
}

trc_status sscope_event(sscope *s, const trc_reader *r, const trc_event *ev)
{
    if (ev->type == TRC_EV_SAMPLE)
        return on_sample(s, r, &ev->u.sample);
    if (ev->type == TRC_EV_GPU_KERNEL || ev->type == TRC_EV_GPU_MEMCPY ||
        ev->type == TRC_EV_GPU_MEMSET) {
        trc_status st = sgpu_event(s->gpu, s->view, ev);
        return st == TRC_OK ? TRC_OK : fail(s, st, "GPU activities");
    }
    if (ev->type == TRC_EV_SEGMENT && !s->have_start) {
        const trc_segment *seg = ev->u.segment;
        s->have_start = 1;
        s->start_ns = seg->start_ns;
        if (seg->command_line && seg->command_line[0]) {
            s->name = trc_strdup(seg->command_line);
            if (!s->name)
                return fail(s, TRC_ERR_NOMEM, "name");
        }
    }
    return TRC_OK;
}

/* ---- output ---------------------------------------------------------- */

static void write_frames(sscope *s, jsonw *out)
{
    uint32_t n = cpuview_frame_count(s->view);

    jsonw_raw(out, "\"shared\":{\"frames\":[");
    for (uint32_t i = 0; i < n; i++) {
        const cpuview_frame *f = cpuview_frame_at(s->view, i);
        jsonw_raw(out, i ? ",\n{\"name\":" : "\n{\"name\":");
        jsonw_str(out, f->function);
        if (f->file[0]) {
            jsonw_raw(out, ",\"file\":");
            jsonw_str(out, f->file);
        }
        if (f->line) {
            jsonw_raw(out, ",\"line\":");
            jsonw_u64(out, f->line);
        }
        jsonw_putc(out, '}');
    }
    jsonw_raw(out, "]},\n");
}

/* Write the frame indices of view stack id, root first, as a JSON array. */
static trc_status write_stack(sscope *s, jsonw *out, uint32_t id)
{
    uint32_t depth = cpuview_stack_depth(s->view, id);
    char *end, *p;

    /* Built backwards from the leaf in one buffer, written at once: a
     * frame index takes at most 10 digits and a comma. */
    if (trcu_grow32(&s->text, &s->text_cap, depth * 11 + 1, 1))
        return fail(s, TRC_ERR_NOMEM, "stack buffer");
    end = p = s->text + s->text_cap;
    *--p = ']';
    for (uint32_t cur = id; cur; cur = cpuview_stack_parent(s->view, cur)) {
        uint32_t v = cpuview_stack_frame(s->view, cur);
        do {
            *--p = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        if (cpuview_stack_parent(s->view, cur))
            *--p = ',';
    }
    *--p = '[';
    jsonw_bytes(out, p, (size_t)(end - p));
    return TRC_OK;
}

/* Visit track t's runs in time order: pass 0 writes stacks, 1 weights. */
static trc_status write_runs(sscope *s, jsonw *out, const track *t, int pass)
{
    uint64_t k = 0;
    trc_status st;

    for (uint32_t b = 0; b <= t->n_blocks; b++) {
        const run *runs;
        size_t n;
        if (b < t->n_blocks) {
            n = s->opt.spool_runs;
            if (trcu_spill_read(&s->spill, t->blocks[b], s->replay, n, sizeof *s->replay))
                return fail(s, TRC_ERR_IO, "reading the temporary file");
            runs = s->replay;
        } else {
            runs = t->buf;
            n = t->n_buf;
        }
        for (size_t i = 0; i < n; i++, k++) {
            if (pass) {
                /* ",NNN" for the weights: one number costs a few bytes,
                 * so format in place and write once. */
                char num[24];
                size_t len = 0;
                if (k)
                    num[len++] = ',';
                len += jsonw_fmt_i64(num + len, (int64_t)runs[i].weight);
                jsonw_bytes(out, num, len);
            } else {
                if (k)
                    jsonw_raw(out, ",\n");
                if ((st = write_stack(s, out, runs[i].stack)) != TRC_OK)
                    return st;
            }
        }
    }
    return TRC_OK;
}

static trc_status write_profile(sscope *s, const trc_reader *r, jsonw *out, track *t, int first)
{
    /* modulo 2^64 (spec §2.6): hostile times must not overflow */
    int64_t start = (int64_t)((uint64_t)t->first_ns - (uint64_t)s->start_ns);
    trc_status st;

    /* The run being extended becomes the last buffered one (the buffer
     * may exceed spool_runs by this one entry). */
    if (t->has_cur) {
        if (trcu_grow32(&t->buf, &t->cap_buf, t->n_buf, sizeof *t->buf))
            return fail(s, TRC_ERR_NOMEM, "sample buffer");
        t->buf[t->n_buf++] = t->cur;
        t->has_cur = 0;
    }
    jsonw_raw(out, first ? "\n{\"type\":\"sampled\",\"name\":\"" : ",\n{\"type\":\"sampled\",\"name\":\"");
    /* a thread's profile says its process too: one file holds the
     * threads of every recorded process, and many are "MainThread" */
    cpuview_write_process_label(out, trc_reader_process_by_pid(r, t->pid), t->pid, 1);
    if (!t->is_process) {
        jsonw_raw(out, ": ");
        cpuview_write_thread_label(out, trc_reader_thread(r, t->thread), t->tid, t->tid != t->pid);
    }
    jsonw_raw(out, "\",\"unit\":\"nanoseconds\",\"startValue\":");
    jsonw_i64(out, start);
    jsonw_raw(out, ",\"endValue\":");
    jsonw_i64(out, (int64_t)((uint64_t)start + t->total));
    jsonw_raw(out, ",\n\"samples\":[\n");
    if ((st = write_runs(s, out, t, 0)) != TRC_OK)
        return st;
    jsonw_raw(out, "],\n\"weights\":[");
    if ((st = write_runs(s, out, t, 1)) != TRC_OK)
        return st;
    jsonw_raw(out, "]}");
    return TRC_OK;
}

static trc_status write_document(sscope *s, const trc_reader *r, jsonw *out)
{
    trc_status st = TRC_OK;
    int first = 1;

    if (trcu_spill_used(&s->spill)) {
        s->replay = trc_calloc(s->opt.spool_runs, sizeof *s->replay);
        if (!s->replay)
            return fail(s, TRC_ERR_NOMEM, "replay buffer");
        if (trcu_spill_flush(&s->spill))
            return fail(s, TRC_ERR_IO, "writing the temporary file");
    }
    if (!s->have_start) { /* no segment seen: relative to the earliest event */
        int have_gpu;
        int64_t gpu_first = sgpu_first_ns(s->gpu, &have_gpu);
        for (uint32_t i = 0; i < s->n_tracks; i++)
            if (!s->have_start || s->tracks[i].first_ns < s->start_ns) {
                s->start_ns = s->tracks[i].first_ns;
                s->have_start = 1;
            }
        if (have_gpu && (!s->have_start || gpu_first < s->start_ns))
            s->start_ns = gpu_first;
    }

    jsonw_raw(out, "{\"$schema\":\"" SPEEDSCOPE_SCHEMA "\",\n\"exporter\":\"trc@");
    jsonw_str_body(out, trc_version(), strlen(trc_version()));
    jsonw_raw(out, "\",\"name\":");
    const char *name = s->name ? s->name : trc_reader_name(r);
    if (s->lines.python + s->lines.no_python + s->lines.unknown) {
        /* the share of GPU time with a Python line, in the file's name:
         * the one field of speedscope's schema a viewer shows for the
         * whole file (its title) */
        char share[EXP_GPU_SHARE_MAX], *both = trc_malloc(strlen(name) + sizeof share + 2);
        if (!both)
            return fail(s, TRC_ERR_NOMEM, "the file's name");
        sprintf(both, "%s: %s", name, exp_gpu_share_str(&s->lines, share, sizeof share));
        jsonw_str(out, both);
        trc_free(both);
    } else {
        jsonw_str(out, name);
    }
    jsonw_raw(out, ",\"activeProfileIndex\":0,\n");
    write_frames(s, out);
    jsonw_raw(out, "\"profiles\":[");
    /* Process profiles (merge_threads) first, then threads, each group in
     * order of first sample. */
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < s->n_tracks; i++) {
            track *t = &s->tracks[i];
            if (t->is_process != (pass == 0))
                continue;
            if ((st = write_profile(s, r, out, t, first)) != TRC_OK)
                return st;
            first = 0;
        }
    }
    /* GPU streams after the CPU profiles, by device and stream. */
    if ((st = sgpu_write(s->gpu, r, out, s->start_ns, &first)) != TRC_OK)
        return fail(s, st, "GPU profiles");
    if (first) /* speedscope needs a profile to open: an empty one */
        jsonw_raw(out, "\n{\"type\":\"sampled\",\"name\":\"no samples\",\"unit\":\"nanoseconds\","
                       "\"startValue\":0,\"endValue\":0,\"samples\":[],\"weights\":[]}");
    jsonw_raw(out, "]}\n");
    return st;
}

trc_status sscope_finish(sscope *s, const trc_reader *r, FILE *f)
{
    jsonw w;
    trc_status st;

    if (jsonw_open(&w, f))
        return fail(s, TRC_ERR_NOMEM, "output buffer");
    st = write_document(s, r, &w);
    jsonw_close(&w);
    return st;
}
