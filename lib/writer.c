/*
 * lib/writer.c — trc_writer: open/close, the open chunk, output
 * (spec/DESIGN-NOTES.md "Chunk", "Writer behaviour").  Interning is in
 * lib/writer_defs.c, events and repeat folding in lib/writer_events.c;
 * the shared state and error policy are described in lib/writer_int.h.
 *
 * A chunk closes when its payload reaches chunk_bytes, on a tick that
 * comes flush_interval or more after the first tick that saw it holding
 * something, on trc_writer_flush, and on close.  The time bound follows
 * the caller's clock through trc_writer_tick only, never record times:
 * a recorder ticking at its sampling rate gets chunks of about the
 * interval, while a tool re-writing a trace in bulk (no ticks) gets
 * full-size chunks.  Closing first writes the pending
 * repeat runs, then deflates the payload (kept stored if deflate does
 * not shrink it) and hands header + payload to the output in one write.
 */
#include "lib/writer_int.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/util/alloc.h"
#include "format/limits.h"
#include "format/records.h"

#define DEFAULT_PERIOD 1000000u
#define DEFAULT_CHUNK (256u * 1024u)
#define DEFAULT_FLUSH 100000000
#define RUN_MAX 80    /* bytes of the largest SAMPLE record */

/* t1 is at least `interval` after t0 (no signed overflow for any pair). */
static int trcw_elapsed(int64_t t0, int64_t t1, int64_t interval)
{
    return t1 > t0 && (uint64_t)t1 - (uint64_t)t0 >= (uint64_t)interval;
}

static int fd_write(void *ctx, const void *buf, size_t len)
{
    const trc_writer *w = ctx;
    const char *p = buf;

    while (len > 0) {
        ssize_t n = write(w->fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Build the open payload into a chunk and write it; the chunk state is
 * reset for the next one.  Failures are sticky. */
static trc_status emit_chunk(trc_writer *w)
{
    trcf_chunk_header h;
    trc_status st;

    if (w->err)
        return w->err;
    if (w->payload.len == 0 && w->chunk_kind != TRCF_KIND_SEGMENT)
        return TRC_OK;
    memset(&h, 0, sizeof h);
    h.major = TRC_FORMAT_MAJOR;
    h.minor = TRC_FORMAT_MINOR;
    h.kind = w->chunk_kind;
    h.seq = w->seq;
    h.base_time = w->has_time ? w->base : 0;
    st = trcf_chunk_build(&w->deflater, w->level, &h, w->payload.data, w->payload.len);
    if (st != TRC_OK)
        return w->err = st;
    if (w->write(w->ctx, w->deflater.out.data, w->deflater.out.len) != 0)
        return w->err = TRC_ERR_IO;
    w->bytes_out += w->deflater.out.len;
    w->payload.len = 0;
    w->chunk_kind = TRCF_KIND_DATA;
    w->seq++;
    w->has_time = 0;
    w->base = w->tcur = 0;
    w->has_t0 = 0;
    return TRC_OK;
}

trc_status trcw_close_chunk(trc_writer *w)
{
    trc_status st;
    uint32_t i;

    if (w->err)
        return w->err;
    for (i = 0; i < w->n_pending; i++) {
        if (w->payload.len + RUN_MAX > TRC_MAX_CHUNK) {
            st = emit_chunk(w);
            if (st != TRC_OK)
                return st;
        }
        st = trcw_emit_run(w, w->pending[i]);
        if (st != TRC_OK)
            return w->err = st;
    }
    w->n_pending = 0;
    return emit_chunk(w);
}

trc_status trcw_room(trc_writer *w, size_t need)
{
    if (w->err)
        return w->err;
    if (w->payload.len + need > TRC_MAX_CHUNK)
        return trcw_close_chunk(w);
    return TRC_OK;
}

trc_status trcw_after(trc_writer *w)
{
    if (w->payload.len >= w->chunk_bytes)
        return trcw_close_chunk(w);
    return TRC_OK;
}

trc_status trcw_put(trc_writer *w, unsigned type, int timed, int64_t t, const void *body)
{
    size_t need = 512, len0;
    int has_time0;
    int64_t base0, tcur0;
    trc_status st;

    if (type == TRCF_STRING)
        need += ((const trcf_string_def *)body)->s.len;
    st = trcw_room(w, need);
    if (st != TRC_OK)
        return st;
    len0 = w->payload.len;
    has_time0 = w->has_time;
    base0 = w->base;
    tcur0 = w->tcur;
    if (timed)
        trcw_time_base(w, t);
    st = trcf_encode(&w->payload, type, &w->tcur, body);
    if (st != TRC_OK) {
        w->payload.len = len0;
        w->has_time = has_time0;
        w->base = base0;
        w->tcur = tcur0;
        return st;
    }
    return trcw_after(w);
}

static int64_t realtime_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static trcf_str cstr(const char *s)
{
    trcf_str r;
    r.p = s ? s : "";
    r.len = strlen(r.p);
    return r;
}

/* Apply defaults and write the SEGMENT_HEADER into the first chunk. */
static trc_status start_segment(trc_writer *w, const trc_writer_options *o)
{
    trc_writer_options none;
    trcf_body b;
    char host[256], recorder[64];
    size_t total, i;

    if (!o) {
        memset(&none, 0, sizeof none);
        none.compression_level = -1;
        o = &none;
    }
    if (o->compression_level < -1 || o->compression_level > 9)
        return TRC_ERR_ARG;
    if (o->n_metadata > TRC_MAX_METADATA || (o->n_metadata && !o->metadata))
        return TRC_ERR_LIMIT;
    /* -1: level 6 with the match search tuned for trace payloads */
    w->level = o->compression_level < 0 ? TRCF_LEVEL_DEFAULT : o->compression_level;
    w->period_ns = o->period_ns ? o->period_ns : DEFAULT_PERIOD;
    w->chunk_bytes = o->chunk_bytes ? o->chunk_bytes : DEFAULT_CHUNK;
    if (w->chunk_bytes > TRC_MAX_CHUNK / 2)
        w->chunk_bytes = TRC_MAX_CHUNK / 2;
    w->flush_interval = o->flush_interval_ns ? (int64_t)o->flush_interval_ns : DEFAULT_FLUSH;
    if (w->flush_interval <= 0)
        w->flush_interval = INT64_MAX;
    w->chunk_kind = TRCF_KIND_SEGMENT;

    memset(&b, 0, sizeof b);
    b.seg.major = TRC_FORMAT_MAJOR;
    b.seg.minor = TRC_FORMAT_MINOR;
    b.seg.clock = TRC_CLOCK_MONOTONIC;
    b.seg.start_ns = o->start_ns ? o->start_ns : trc_now_ns();
    b.seg.wall_ns = o->wall_ns ? o->wall_ns : realtime_ns();
    b.seg.period_ns = w->period_ns;
    snprintf(recorder, sizeof recorder, "libtrc %s", TRC_VERSION_STRING);
    b.seg.recorder = cstr(o->recorder ? o->recorder : recorder);
    if (!o->host) {
        if (gethostname(host, sizeof host) != 0)
            host[0] = '\0';
        host[sizeof host - 1] = '\0';
        b.seg.host = cstr(host);
    } else {
        b.seg.host = cstr(o->host);
    }
    b.seg.command_line = cstr(o->command_line);
    b.seg.n_meta = o->n_metadata;
    b.seg.kv = o->metadata;
    /* The whole header must fit one chunk; refuse before allocating. */
    total = b.seg.recorder.len + b.seg.host.len + b.seg.command_line.len;
    for (i = 0; i < o->n_metadata && total <= TRC_MAX_CHUNK / 2; i++)
        total += strlen(o->metadata[i].key ? o->metadata[i].key : "") +
                 strlen(o->metadata[i].value ? o->metadata[i].value : "") + 20;
    if (total > TRC_MAX_CHUNK / 2)
        return TRC_ERR_LIMIT;
    return trcf_encode(&w->payload, TRCF_SEGMENT_HEADER, &w->tcur, &b);
}

static void writer_free(trc_writer *w)
{
    trcw_defs_free(w);
    trcf_buf_free(&w->payload);
    trcf_deflater_cleanup(&w->deflater);
    trc_free(w->pending);
    trc_free(w);
}

trc_writer *trc_writer_open_callback(trc_write_fn fn, void *ctx,
                                     const trc_writer_options *opts, trc_status *st)
{
    trc_writer *w;
    trc_status s;

    if (!fn) {
        s = TRC_ERR_ARG;
        goto fail;
    }
    w = trc_calloc(1, sizeof *w);
    if (!w) {
        s = TRC_ERR_NOMEM;
        goto fail;
    }
    w->write = fn;
    w->ctx = ctx;
    w->fd = -1;
    s = start_segment(w, opts);
    if (s != TRC_OK) {
        writer_free(w);
        goto fail;
    }
    if (st)
        *st = TRC_OK;
    return w;
fail:
    if (st)
        *st = s;
    return NULL;
}

trc_writer *trc_writer_open_fd(int fd, const trc_writer_options *opts, trc_status *st)
{
    trc_writer *w;

    if (fd < 0) {
        if (st)
            *st = TRC_ERR_ARG;
        return NULL;
    }
    w = trc_writer_open_callback(fd_write, NULL, opts, st);
    if (w) {
        w->fd = fd;
        w->ctx = w;
    }
    return w;
}

trc_status trc_writer_tick(trc_writer *w, int64_t now_ns)
{
    if (!w)
        return TRC_ERR_ARG;
    if (w->err)
        return w->err;
    if (w->payload.len == 0 && w->n_pending == 0 && w->chunk_kind != TRCF_KIND_SEGMENT)
        return TRC_OK;
    if (!w->has_t0) {
        w->has_t0 = 1;
        w->t0 = now_ns;
        return TRC_OK;
    }
    if (trcw_elapsed(w->t0, now_ns, w->flush_interval))
        return trcw_close_chunk(w);
    return TRC_OK;
}

trc_status trc_writer_flush(trc_writer *w)
{
    if (!w)
        return TRC_ERR_ARG;
    return trcw_close_chunk(w);
}

trc_status trc_writer_close(trc_writer *w, int64_t end_ns)
{
    trcf_body b;
    trc_status st = TRC_OK, st2;
    uint32_t i;

    if (!w)
        return TRC_ERR_ARG;
    if (w->err) {
        st = w->err;
        goto out;
    }
    for (i = 0; i < w->n_pending && st == TRC_OK; i++) {
        st = trcw_room(w, RUN_MAX);
        if (st == TRC_OK)
            st = trcw_emit_run(w, w->pending[i]);
    }
    w->n_pending = 0;
    if (st != TRC_OK)
        goto out;
    memset(&b, 0, sizeof b);
    b.segment_end.end = end_ns ? end_ns : trc_now_ns();
    b.segment_end.samples = w->n_samples;
    b.segment_end.threads = w->n_threads;
    b.segment_end.processes = w->n_procs;
    b.segment_end.gpu_activities = w->n_gpu;
    b.segment_end.api_calls = w->n_api;
    b.segment_end.lost_samples = w->lost_samples;
    b.segment_end.lost_gpu_records = w->lost_gpu;
    /* Not trcw_put: it could close the chunk early and add nothing. */
    st = trcw_room(w, 512);
    if (st == TRC_OK) {
        trcw_time_base(w, b.segment_end.end);
        st = trcf_encode(&w->payload, TRCF_SEGMENT_END, &w->tcur, &b);
    }
    st2 = emit_chunk(w);
    if (st == TRC_OK)
        st = st2;
out:
    writer_free(w);
    return st;
}

uint64_t trc_writer_bytes(const trc_writer *w)
{
    return w ? w->bytes_out : 0;
}
