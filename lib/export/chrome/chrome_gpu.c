/*
 * lib/export/chrome/chrome_gpu.c — Chrome Trace Event exporter, GPU half (see
 * chrome.h for the layout users see; docs/design/outputs.md §2 for the format):
 * GPU activities, CUDA API calls, markers, and the flows between launches
 * and their activities.
 *
 * Tracks.  Every interval goes to a track:
 *   - per GPU device a pseudo-process (pid CHR_GPU_PID + device), in it
 *     one track per stream (kernels, copies, memsets) and one per stream
 *     for synchronisations (which span the work they wait for, so on the
 *     stream's own track they would swallow it);
 *   - per calling thread a "CUDA API" track in the thread's process;
 *   - per thread (or per process, for process-wide ones) a "markers"
 *     track for NVTX ranges and instants.
 * API calls and ranges never go on the thread's own track: they cut
 * across the sampled flame slices there, which must nest.
 *
 * Nesting.  Viewers need the X slices of one (pid, tid) to nest.  Records
 * arrive in file order, which is nearly but not exactly start order
 * (CUPTI writes an API call when it returns, so a runtime call comes
 * after the driver call inside it).  Each track holds a window of the
 * last WINDOW slices in a sorted ring and releases them in start order
 * (longest first at equal starts).  A released slice goes to the first
 * lane of its track where it nests (it starts no earlier than the lane's
 * last slice and lies inside or after each slice still open there);
 * otherwise a new lane, another tid named "... (2)", takes it.  So the
 * output always nests (up to MAX_LANES lanes per track; beyond that, which
 * takes input crafted to defeat the window, slices may overlap).
 * Zero-length intervals are skipped: they hold no time.
 *
 * Flows (v2).  A launch API call (TRC_API_LAUNCH) and the kernel, copy or
 * memset carrying its correlation id (same process) get one "bind_id":
 * the call "flow_out":true, the activity "flow_in":true.  Perfetto binds
 * such a flow to exactly the slices carrying it, whatever else is open
 * there, which v1 "s"/"f" events (bound by timestamp) cannot promise.  A
 * slice is written once its partner is known, so a placed slice whose
 * partner has not arrived waits (launches in flight, plus launches or
 * activities whose partner never comes, written unlinked at the end or
 * when more than WAIT_MAX wait, oldest first; beyond wait_mem of them
 * the oldest wait in a temporary file, chrome_gpu_flows.c).  A launch call
 * inside another (the driver call a runtime launch makes, with an id of
 * its own) does not wait: the outer call is the one that links.  A flow
 * is only drawn when the call starts before the activity (Perfetto
 * processes slices in time order).
 *
 * This file: events in (chr_gpu_event, chr_gpu_flush) and the names of
 * tracks and lanes (chr_gpu_write_meta).  Tracks, lanes and the reorder
 * window are in chrome_gpu_tracks.c, flows in chrome_gpu_flows.c, the
 * slice writer in chrome_gpu_write.c; their shared state in
 * chrome_gpu_int.h.
 */
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/export/chrome/chrome_gpu_int.h"
#include "lib/export/common/gpu_units.h"

/* ---- events ------------------------------------------------------------ */

static int64_t activity_track(chrome *c, uint32_t kind, const trc_gpu_where *w)
{
    return chg_get_track(c, kind, w->pid, w->device, w->context, w->stream, 0);
}

/* pid of reader thread id (0 when unknown). */
static int64_t thread_pid(const trc_reader *r, uint32_t thread)
{
    const trc_thread *th = trc_reader_thread(r, thread);
    return th ? th->pid : 0;
}

/* {"ph":"i"} of marker m on track ti's first lane; note says why. */
static trc_status write_instant(chrome *c, int64_t ti, const trc_marker *m, int64_t at,
                                const char *note)
{
    chr_gpu *g = c->gpu;
    gtrack *t;
    jsonw *w = &c->w;

    if (ti < 0)
        return TRC_ERR_NOMEM;
    t = &g->tracks[ti];
    if (!t->n_lanes && chg_new_lane(g, t, INT64_MIN) < 0)
        return chr_fail(c, "lanes");
    chr_next_event(c);
    jsonw_raw(w, "{\"ph\":\"i\",\"name\":");
    jsonw_str(w, m->name && m->name[0] ? m->name : "<unnamed marker>");
    jsonw_raw(w, ",\"cat\":");
    jsonw_str(w, m->domain && m->domain[0] ? m->domain : "marker");
    jsonw_raw(w, ",\"s\":\"t\"");
    chg_write_i64_arg(w, ",\"pid\":", t->pid);
    chg_write_i64_arg(w, ",\"tid\":", t->lanes[0].tid);
    jsonw_putc(w, ',');
    chr_write_ts(c, at);
    jsonw_raw(w, ",\"args\":{");
    chg_write_marker_args(w, m);
    if (note) {
        jsonw_raw(w, ",\"note\":");
        jsonw_str(w, note);
    }
    jsonw_raw(w, "}}");
    return TRC_OK;
}

static trc_status on_marker(chrome *c, const trc_reader *r, const trc_marker *m)
{
    int64_t owner = m->thread ? thread_pid(r, m->thread) : m->pid;
    int64_t ti = chg_get_track(c, TK_MARKS, owner, 0, 0, 0, m->thread);
    gtrack *t;
    gslice s;

    if (ti < 0)
        return TRC_ERR_NOMEM;
    t = &c->gpu->tracks[ti];
    memset(&s, 0, sizeof s);
    s.type = TRC_EV_MARKER;
    s.u.mk = *m;
    switch (m->kind) {
    case TRC_MARK_INSTANT:
        return write_instant(c, ti, m, m->start_ns, NULL);
    case TRC_MARK_PUSH:
        if (trcu_grow32(&t->push, &t->cap_push, t->n_push, sizeof *t->push))
            return chr_fail(c, "marker stack");
        t->push[t->n_push++].m = *m;
        return TRC_OK;
    case TRC_MARK_POP:
        if (!t->n_push)
            return write_instant(c, ti, m, m->start_ns, "end of a range whose start was not recorded");
        s.u.mk = t->push[--t->n_push].m;
        s.u.mk.kind = TRC_MARK_RANGE;
        s.start = s.u.mk.start_ns;
        s.end = m->end_ns > m->start_ns ? m->end_ns : m->start_ns;
        return chg_add_slice(c, r, ti, &s);
    default:
        s.start = m->start_ns;
        s.end = m->end_ns;
        return chg_add_slice(c, r, ti, &s);
    }
}

trc_status chr_gpu_event(chrome *c, const trc_reader *r, const trc_event *ev)
{
    gslice s; /* only the member of its type is read: no need to clear it */
    trc_status st = chg_sync_event(c, r, ev);

    if (st != TRC_OK)
        return st;
    s.type = ev->type;
    switch (ev->type) {
    case TRC_EV_GPU_KERNEL:
        s.u.k = ev->u.kernel;
        s.start = s.u.k.start_ns;
        s.end = s.u.k.end_ns;
        return chg_add_slice(c, r, activity_track(c, TK_STREAM, &s.u.k.where), &s);
    case TRC_EV_GPU_MEMCPY:
        s.u.m = ev->u.memcpy;
        s.start = s.u.m.start_ns;
        s.end = s.u.m.end_ns;
        return chg_add_slice(c, r, activity_track(c, TK_STREAM, &s.u.m.where), &s);
    case TRC_EV_GPU_MEMSET:
        s.u.s = ev->u.memset;
        s.start = s.u.s.start_ns;
        s.end = s.u.s.end_ns;
        return chg_add_slice(c, r, activity_track(c, TK_STREAM, &s.u.s.where), &s);
    case TRC_EV_GPU_SYNC:
        s.u.y = ev->u.sync;
        s.start = s.u.y.start_ns;
        s.end = s.u.y.end_ns;
        return chg_add_slice(c, r, activity_track(c, TK_SYNC, &s.u.y.where), &s);
    case TRC_EV_API_CALL:
        /* a call that captured a graph: its kernels' args name the line */
        if ((ev->u.api.graph || ev->u.api.graph_exec) &&
            ((!c->gpu->graphs && !(c->gpu->graphs = exp_gpu_graph_new())) ||
             exp_gpu_graph_event(c->gpu->graphs, r, ev) != TRC_OK))
            return chr_fail(c, "CUDA graphs");
        s.u.a = ev->u.api;
        s.start = s.u.a.start_ns;
        s.end = s.u.a.end_ns;
        return chg_add_slice(c, r,
                         chg_get_track(c, TK_API, thread_pid(r, s.u.a.thread), 0, 0, 0, s.u.a.thread),
                         &s);
    case TRC_EV_MARKER:
        return on_marker(c, r, &ev->u.marker);
    default:
        return TRC_OK;
    }
}

trc_status chr_gpu_flush(chrome *c, const trc_reader *r)
{
    chr_gpu *g = c->gpu;
    trc_status st;

    for (uint32_t i = 0; i < g->n_tracks; i++) {
        while (g->tracks[i].n_win)
            if ((st = chg_release_first(c, r, i)) != TRC_OK)
                return st;
    }
    if ((st = chg_flush_waiters(c, r)) != TRC_OK) /* partners that never came */
        return st;
    for (uint32_t i = 0; i < g->n_tracks; i++) {
        gtrack *t = &g->tracks[i];
        while (t->n_push) {
            const trc_marker *m = &t->push[--t->n_push].m;
            if ((st = write_instant(c, i, m, m->start_ns, "start of a range that did not end")) !=
                TRC_OK)
                return st;
        }
    }
    return chg_sync_flows(c, r);
}

/* ---- names ------------------------------------------------------------- */

/* 1 if another stream track of t's device shows the same stream number
 * for another process or context. */
static int stream_shared(const chr_gpu *g, const gtrack *t)
{
    for (uint32_t i = 0; i < g->n_tracks; i++) {
        const gtrack *o = &g->tracks[i];
        if ((o->kind == TK_STREAM || o->kind == TK_SYNC) && o->device == t->device &&
            o->stream == t->stream && (o->owner != t->owner || o->context != t->context))
            return 1;
    }
    return 0;
}

static void write_track_name(chrome *c, const trc_reader *r, const gtrack *t, uint32_t lane_no)
{
    jsonw *w = &c->w;
    const trc_thread *th;

    jsonw_raw(w, "\"name\":\"");
    switch (t->kind) {
    case TK_STREAM:
    case TK_SYNC:
        if (t->stream == NO_STREAM) {
            jsonw_raw(w, "context ");
            jsonw_u64(w, t->context);
        } else {
            jsonw_raw(w, "stream ");
            jsonw_u64(w, t->stream);
        }
        if (t->kind == TK_SYNC)
            jsonw_raw(w, " sync");
        if (t->stream != NO_STREAM && stream_shared(c->gpu, t)) {
            jsonw_raw(w, " (pid ");
            jsonw_i64(w, t->owner);
            jsonw_raw(w, ", context ");
            jsonw_u64(w, t->context);
            jsonw_putc(w, ')');
        }
        break;
    default:
        jsonw_raw(w, t->kind == TK_API ? "CUDA API" : "markers");
        th = t->thread ? trc_reader_thread(r, t->thread) : NULL;
        if (th && th->name && th->name[0]) {
            jsonw_raw(w, ": ");
            jsonw_str_body(w, th->name, strlen(th->name));
        }
        if (th) {
            jsonw_raw(w, " (tid ");
            jsonw_i64(w, th->tid);
            jsonw_putc(w, ')');
        } else if (!t->thread) {
            jsonw_raw(w, " (process)");
        }
        break;
    }
    if (lane_no) {
        jsonw_raw(w, " (");
        jsonw_u64(w, lane_no + 1);
        jsonw_putc(w, ')');
    }
    jsonw_raw(w, "\"}}");
}

static void write_lane_meta(chrome *c, const trc_reader *r, const gtrack *t, uint64_t *sort)
{
    for (uint32_t l = 0; l < t->n_lanes; l++) {
        chr_write_meta(c, "thread_name", t->pid, t->lanes[l].tid);
        write_track_name(c, r, t, l);
        chr_write_meta(c, "thread_sort_index", t->pid, t->lanes[l].tid);
        jsonw_raw(&c->w, "\"sort_index\":");
        jsonw_u64(&c->w, (*sort)++);
        jsonw_raw(&c->w, "}}");
    }
}

/* Order of GPU tracks in their process: by stream (the no-stream
 * context track last), process, context, then the stream before its
 * sync track. */
static int gpu_track_before(const gtrack *a, const gtrack *b)
{
    if (a->stream != b->stream)
        return a->stream < b->stream;
    if (a->owner != b->owner)
        return a->owner < b->owner;
    if (a->context != b->context)
        return a->context < b->context;
    return a->kind < b->kind;
}

/* The share of device dev's GPU time with a Python line on its GPU
 * process pid: its label, shown under the process's name, and an instant
 * event at the trace start, which viewers that show no labels (Perfetto)
 * draw.  One device: the whole trace's line, which is that device's;
 * several: the device's own part of that line ("device 1: 80.00%
 * (...)"), none for a device whose GPU time was not counted (NVML
 * counters only).  The whole line is otherData.gpu_python_lines. */
static void write_share(chrome *c, int64_t pid, uint32_t dev)
{
    if (!(c->lines.python + c->lines.no_python + c->lines.unknown))
        return;
    char share[EXP_GPU_SHARE_MAX];
    int part = exp_gpu_share_device_part(&c->lines, dev);
    if (c->lines.n_dev <= 1)
        exp_gpu_share_str(&c->lines, share, sizeof share);
    else if (part < 0 || !*exp_gpu_share_part_str(&c->lines, part, share, sizeof share))
        return;
    chr_write_meta(c, "process_labels", pid, 0);
    jsonw_raw(&c->w, "\"labels\":");
    jsonw_str(&c->w, share);
    jsonw_raw(&c->w, "}}");
    chr_next_event(c);
    jsonw_raw(&c->w, "{\"ph\":\"i\",\"name\":");
    jsonw_str(&c->w, share);
    jsonw_raw(&c->w, ",\"cat\":\"gpu\",\"s\":\"p\",\"pid\":");
    jsonw_i64(&c->w, pid);
    jsonw_raw(&c->w, ",\"tid\":0,");
    chr_write_ts(c, c->start_ns);
    jsonw_raw(&c->w, "}");
}

trc_status chr_gpu_write_meta(chrome *c, const trc_reader *r)
{
    chr_gpu *g = c->gpu;
    uint64_t sort = c->n_threads;
    uint32_t *order = trc_calloc(g->n_tracks ? g->n_tracks : 1, sizeof *order);

    if (!order)
        return chr_fail(c, "track order");

    /* Extra tracks of CPU processes: after the sampled threads. */
    for (uint32_t i = 0; i < g->n_tracks; i++)
        if (g->tracks[i].kind == TK_API || g->tracks[i].kind == TK_MARKS)
            write_lane_meta(c, r, &g->tracks[i], &sort);
    /* GPU pseudo-processes, by device, after the CPU processes. */
    for (uint32_t i = 1; i < g->n_devices; i++)
        for (uint32_t j = i; j > 0 && g->devices[j] < g->devices[j - 1]; j--) {
            uint32_t x = g->devices[j];
            g->devices[j] = g->devices[j - 1];
            g->devices[j - 1] = x;
        }
    for (uint32_t d = 0; d < g->n_devices; d++) {
        uint32_t dev = g->devices[d], n = 0;
        int64_t pid = CHR_GPU_PID + (int64_t)dev; /* checked by chr_gpu_pid */
        const trc_gpu_device *gd = trc_reader_gpu_device(r, dev);

        chr_write_meta(c, "process_name", pid, 0);
        jsonw_raw(&c->w, "\"name\":\"GPU ");
        jsonw_u64(&c->w, dev);
        if (gd && gd->name && gd->name[0]) {
            jsonw_raw(&c->w, ": ");
            jsonw_str_body(&c->w, gd->name, strlen(gd->name));
        }
        jsonw_raw(&c->w, "\"}}");
        chr_write_meta(c, "process_sort_index", pid, 0);
        jsonw_raw(&c->w, "\"sort_index\":");
        jsonw_u64(&c->w, (uint64_t)c->n_pids + d);
        jsonw_raw(&c->w, "}}");
        write_share(c, pid, dev);
        for (uint32_t i = 0; i < g->n_tracks; i++) {
            const gtrack *t = &g->tracks[i];
            uint32_t j = n++;
            if (t->kind > TK_SYNC || t->device != dev) {
                n--;
                continue;
            }
            for (; j > 0 && gpu_track_before(t, &g->tracks[order[j - 1]]); j--)
                order[j] = order[j - 1];
            order[j] = i;
        }
        sort = 0;
        for (uint32_t i = 0; i < n; i++)
            write_lane_meta(c, r, &g->tracks[order[i]], &sort);
    }
    trc_free(order);
    return TRC_OK;
}

