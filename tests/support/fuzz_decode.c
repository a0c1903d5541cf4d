/*
 * tests/support/fuzz_decode.c — the decoding targets of fuzz_sinks.h:
 * chunk framing (format/scan.c, chunk.c), record framing and bodies
 * (format/record.c, records.c), the public reader (lib/reader.c) and
 * trc-dump's engine (lib/dump), plus the event check that every target
 * built on the reader applies.  Each target pairs the code under test
 * with an oracle that needs no expected output: two ways of reading the
 * same bytes must agree, a re-encoding must decode to the same values.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "format/chunk.h"
#include "format/limits.h"
#include "format/record.h"
#include "format/records.h"
#include "format/scan.h"
#include "lib/dump/dump.h"
#include "tests/support/fuzz_sinks.h"
#include "tests/support/trace_builder.h"

int fs_fail(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return -1;
}

/* FNV-1a over 64-bit words: a signature of what a read produced. */
static uint64_t mix(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        h = (h ^ (v & 0xff)) * 0x100000001b3ull;
    return h;
}

/* A small read size taken from the input, so piecewise reads vary. */
static size_t piece(size_t size)
{
    return 1 + size % 7;
}

/* ---- event check ---- */

static int bad_str(const char *s, const char *what, char *why, size_t n)
{
    if (!s)
        return fs_fail(why, n, "NULL %s", what);
    (void)strlen(s);             /* a missing NUL shows under ASan */
    return 0;
}

static int bad_stack(const trc_reader *r, uint32_t id, char *why, size_t n)
{
    const trc_stack *s = trc_reader_stack(r, id);
    uint32_t steps = 0;
    if (!s)
        return fs_fail(why, n, "stack %u does not resolve", id);
    while (s->id != 0) {
        const trc_frame *f = trc_reader_frame(r, s->frame);
        if (!f)
            return fs_fail(why, n, "frame %u of stack %u does not resolve", s->frame, s->id);
        if (bad_str(f->function, "function", why, n) || bad_str(f->file, "file", why, n))
            return -1;
        if (s->parent >= s->id)
            return fs_fail(why, n, "stack %u has parent %u", s->id, s->parent);
        if (++steps > TRC_MAX_DEPTH + 1)
            return fs_fail(why, n, "stack %u deeper than the limit", id);
        if (!(s = trc_reader_stack(r, s->parent)))
            return fs_fail(why, n, "parent of a stack does not resolve");
    }
    return 0;
}

static int bad_thread(const trc_reader *r, uint32_t id, int zero_ok, char *why, size_t n)
{
    const trc_thread *t;
    if (id == 0 && zero_ok)
        return 0;
    if (!(t = trc_reader_thread(r, id)))
        return fs_fail(why, n, "thread %u does not resolve", id);
    return bad_str(t->name, "thread name", why, n);
}

int fs_check_event(const trc_reader *r, const trc_event *ev, char *why, size_t n)
{
    size_t i;
    switch (ev->type) {
    case TRC_EV_SEGMENT:
        if (bad_str(ev->u.segment->recorder, "recorder", why, n) ||
            bad_str(ev->u.segment->host, "host", why, n) ||
            bad_str(ev->u.segment->command_line, "command line", why, n))
            return -1;
        for (i = 0; i < ev->u.segment->n_metadata; i++) {
            if (bad_str(ev->u.segment->metadata[i].key, "metadata key", why, n) ||
                bad_str(ev->u.segment->metadata[i].value, "metadata value", why, n))
                return -1;
        }
        return 0;
    case TRC_EV_PROCESS:
        return bad_str(ev->u.process->executable, "executable", why, n) ||
               bad_str(ev->u.process->interpreter, "interpreter", why, n) ||
               bad_str(ev->u.process->command_line, "process command line", why, n) ? -1 : 0;
    case TRC_EV_THREAD:
        return bad_str(ev->u.thread->name, "thread name", why, n) ||
               bad_thread(r, ev->u.thread->id, 0, why, n) ? -1 : 0;
    case TRC_EV_SAMPLE:
        if (bad_thread(r, ev->u.sample.thread, 0, why, n) || bad_stack(r, ev->u.sample.stack, why, n))
            return -1;
        return ev->u.sample.count < 1 ? fs_fail(why, n, "sample count 0") : 0;
    case TRC_EV_GPU_DEVICE:
        return bad_str(ev->u.gpu_device->name, "device name", why, n);
    case TRC_EV_GPU_KERNEL:
        return bad_str(ev->u.kernel.name, "kernel name", why, n);
    case TRC_EV_API_CALL:
        return bad_str(ev->u.api.name, "API name", why, n) ||
               bad_thread(r, ev->u.api.thread, 1, why, n) ||
               bad_stack(r, ev->u.api.stack, why, n) ? -1 : 0;
    case TRC_EV_MARKER:
        return bad_str(ev->u.marker.name, "marker name", why, n) ||
               bad_str(ev->u.marker.domain, "marker domain", why, n) ||
               bad_thread(r, ev->u.marker.thread, 1, why, n) ? -1 : 0;
    case TRC_EV_COUNTER_DEF:
        return bad_str(ev->u.counter_def->name, "counter name", why, n) ||
               bad_str(ev->u.counter_def->unit, "counter unit", why, n) ? -1 : 0;
    case TRC_EV_COUNTER:
        if (!trc_reader_counter(r, ev->u.counter.counter))
            return fs_fail(why, n, "counter %u does not resolve", ev->u.counter.counter);
        return 0;
    case TRC_EV_LOSS:
        if (ev->u.loss.kind < TRC_LOSS_SAMPLES_MISSED || ev->u.loss.kind > TRC_LOSS_OTHER)
            return fs_fail(why, n, "loss kind %d", (int)ev->u.loss.kind);
        return bad_str(ev->u.loss.detail, "loss detail", why, n);
    case TRC_EV_GPU_STREAM:
        return bad_str(ev->u.gpu_stream->name, "stream name", why, n);
    case TRC_EV_GPU_CONTEXT:
        return ev->u.gpu_context ? 0 : fs_fail(why, n, "NULL context");
    case TRC_EV_GPU_MEMCPY:
    case TRC_EV_GPU_MEMSET:
    case TRC_EV_GPU_SYNC:
    case TRC_EV_CLOCK_SYNC:
    case TRC_EV_PROCESS_EXIT:
    case TRC_EV_SEGMENT_END:
        return 0;
    }
    return fs_fail(why, n, "event type %d", (int)ev->type);
}

/* ---- chunk ---- */

/* A good chunk rebuilt by the writer's chunk builder (stored or deflated)
 * must decode to the same payload. */
static int rebuild(const trcf_chunk_info *ci, int level, char *why, size_t n)
{
    trcf_deflater d = {0};
    trcf_inflater z = {0};
    trcf_chunk_header h = ci->h, back;
    const uint8_t *out = NULL;
    const char *w = NULL;
    int rc = 0;
    trc_status st = trcf_chunk_build(&d, level, &h, ci->payload, ci->h.decoded_len);
    if (st != TRC_OK) {
        if (st != TRC_ERR_NOMEM)
            rc = fs_fail(why, n, "rebuilding the chunk at 0x%llx: %s",
                         (unsigned long long)ci->offset, trc_status_str(st));
        goto out;
    }
    st = trcf_header_decode(d.out.data, &back, &w);
    if (st == TRC_OK)
        st = trcf_payload_decode(&z, &back, d.out.data + TRCF_HEADER_SIZE, &out, &w);
    if (st != TRC_OK)
        rc = fs_fail(why, n, "chunk at 0x%llx rebuilt at level %d does not decode: %s",
                     (unsigned long long)ci->offset, level, w ? w : trc_status_str(st));
    else if (back.decoded_len != ci->h.decoded_len ||
             (back.decoded_len && memcmp(out, ci->payload, back.decoded_len) != 0))
        rc = fs_fail(why, n, "chunk at 0x%llx rebuilt at level %d decodes differently",
                     (unsigned long long)ci->offset, level);
out:
    trcf_deflater_cleanup(&d);
    trcf_inflater_cleanup(&z);
    return rc;
}

typedef struct scan_result {
    uint64_t sig, chunks;
    trc_status end;
} scan_result;

static int scan(const uint8_t *data, size_t size, size_t max_read, int check, scan_result *res,
                char *why, size_t n)
{
    tb_src src = {data, size, 0, max_read};
    trcf_chunk_info ci;
    trc_status st;
    uint64_t last = 0;
    trcf_scanner *s = trcf_scanner_new(tb_read, &src, &st);
    int rc = 0;

    res->sig = 0xcbf29ce484222325ull;
    res->chunks = 0;
    res->end = st;
    if (!s)
        return 0;
    while ((st = trcf_chunk_next(s, &ci)) == TRC_OK) {
        res->sig = mix(mix(mix(res->sig, ci.state), ci.offset), ci.length);
        if (ci.offset < last || ci.offset + ci.length > size)
            rc = fs_fail(why, n, "chunk at 0x%llx+%llu out of order or past the end",
                         (unsigned long long)ci.offset, (unsigned long long)ci.length);
        else if (ci.state == TRCF_CHUNK_OK && check)
            rc = rebuild(&ci, res->chunks % 2 ? 6 : 0, why, n);
        last = ci.offset;
        if (rc == 0 && ++res->chunks > FS_MAX_EVENTS)
            rc = fs_fail(why, n, "more than %u chunks: the scanner loops", FS_MAX_EVENTS);
        if (rc)
            break;
    }
    res->end = st;
    trcf_scanner_free(s);
    return rc;
}

int fs_chunk(const uint8_t *data, size_t size, FILE *out, char *why, size_t n)
{
    scan_result whole, pieces;
    if (scan(data, size, 0, 1, &whole, why, n) || scan(data, size, piece(size), 0, &pieces, why, n))
        return -1;
    if (whole.sig != pieces.sig || whole.chunks != pieces.chunks || whole.end != pieces.end)
        return fs_fail(why, n, "reads of %zu bytes see other chunks than one read (%llu vs %llu)",
                       piece(size), (unsigned long long)pieces.chunks,
                       (unsigned long long)whole.chunks);
    return 0;
}

/* ---- records ---- */

/* SEGMENT_HEADER metadata as the encoder takes it (NUL-terminated copies). */
static trc_kv *meta_kv(const trcf_seg_header *h)
{
    trcf_cur c;
    trcf_str k, v;
    trc_kv *kv = calloc(h->n_meta + 1, sizeof *kv);
    if (!kv)
        return NULL;
    trcf_meta_begin(h, &c);
    for (uint64_t i = 0; i < h->n_meta; i++) {
        trcf_meta_next(&c, &k, &v);
        kv[i].key = strndup(k.p ? k.p : "", k.len);
        kv[i].value = strndup(v.p ? v.p : "", v.len);
    }
    return kv;
}

static void free_kv(trc_kv *kv, uint64_t n)
{
    for (uint64_t i = 0; kv && i < n; i++) {
        free((char *)kv[i].key);
        free((char *)kv[i].value);
    }
    free(kv);
}

/* Encode b (decoded at cursor t0, leaving t1) into e; decode that again
 * into back.  1 encoded and decoded, 0 the encoder refused the values
 * (a duration that would be negative), -1 broken (why set). */
static int reencode(uint64_t type, trcf_body *b, int64_t t0, int64_t t1, trcf_buf *e,
                    trcf_body *back, char *why, size_t n)
{
    trcf_rec_iter it;
    trcf_record rec;
    const char *w = NULL;
    int64_t t = t0;
    trc_kv *kv = type == TRCF_SEGMENT_HEADER ? meta_kv(&b->seg) : NULL;
    trc_status st;
    int rc = 1;

    if (type == TRCF_SEGMENT_HEADER)
        b->seg.kv = kv;
    e->len = 0;
    st = trcf_encode(e, type, &t, b);
    if (st == TRC_ERR_ARG || st == TRC_ERR_NOMEM || (type == TRCF_SEGMENT_HEADER && !kv)) {
        rc = 0;
        goto out;
    }
    if (st != TRC_OK || t != t1) {
        rc = fs_fail(why, n, "%s: decoded values encode to %s, time cursor %s",
                     trcf_type_name(type), trc_status_str(st), t == t1 ? "same" : "moved differently");
        goto out;
    }
    trcf_rec_iter_init(&it, e->data, e->len);
    t = t0;
    st = trcf_record_next(&it, &rec, &w);
    if (st == TRC_OK && (rec.type != type || it.p != it.end))
        st = TRC_ERR_CORRUPT, w = "other type or length";
    if (st == TRC_OK)
        st = trcf_decode(type, rec.body, rec.len, &t, back, &w);
    if (st != TRC_OK || t != t1)
        rc = fs_fail(why, n, "%s: re-encoded record does not decode back: %s",
                     trcf_type_name(type), w ? w : "time cursor differs");
out:
    if (type == TRCF_SEGMENT_HEADER)
        free_kv(kv, b->seg.n_meta);
    return rc;
}

/* encode(decode(body)) is a fixed point: decoding it and encoding again
 * gives the same bytes. */
static int stable(uint64_t type, trcf_body *b, int64_t t0, int64_t t1, char *why, size_t n)
{
    trcf_buf e1 = {0}, e2 = {0};
    trcf_body back, again;
    int rc = reencode(type, b, t0, t1, &e1, &back, why, n);
    if (rc == 1)
        rc = reencode(type, &back, t0, t1, &e2, &again, why, n);
    if (rc == 1 && (e1.len != e2.len || memcmp(e1.data, e2.data, e1.len) != 0))
        rc = fs_fail(why, n, "%s: encoding is not stable under decode/encode", trcf_type_name(type));
    trcf_buf_free(&e1);
    trcf_buf_free(&e2);
    return rc < 0 ? -1 : 0;
}

int fs_records(const uint8_t *data, size_t size, FILE *out, char *why, size_t n)
{
    trcf_rec_iter it;
    trcf_record rec;
    trcf_body b;
    const char *w = NULL;
    /* the chunk's base time: from the input, so cursors can overflow */
    int64_t tcur = size >= 8 ? (int64_t)trcf_get_u64le(data + size - 8) : 0;
    trc_status st;
    uint64_t count = 0;

    trcf_rec_iter_init(&it, data, size);
    while ((st = trcf_record_next(&it, &rec, &w)) == TRC_OK) {
        int64_t t0 = tcur;
        if (rec.offset >= size || rec.body < data || rec.body + rec.len > data + size)
            return fs_fail(why, n, "record at %zu framed outside the payload", rec.offset);
        if (!trcf_type_name(rec.type))
            continue;            /* unknown type: skipped by the reader */
        memset(&b, 0, sizeof b);
        st = trcf_decode(rec.type, rec.body, rec.len, &tcur, &b, &w);
        if (st == TRC_OK && rec.type == TRCF_SEGMENT_HEADER) {
            trcf_cur c;
            trcf_str k, v;
            trcf_meta_begin(&b.seg, &c);
            for (uint64_t i = 0; i < b.seg.n_meta; i++)
                trcf_meta_next(&c, &k, &v);
            if (!trcf_cur_ok(&c) || c.p != c.end)
                return fs_fail(why, n, "SEGMENT_HEADER metadata walk fails after decoding");
        }
        if (st == TRC_OK && stable(rec.type, &b, t0, tcur, why, n))
            return -1;
        if (st != TRC_OK && st != TRC_ERR_CORRUPT && st != TRC_ERR_LIMIT)
            return fs_fail(why, n, "%s decode: %s", trcf_type_name(rec.type), trc_status_str(st));
        if (++count > FS_MAX_EVENTS)
            return fs_fail(why, n, "record iterator loops");
    }
    if (st != TRC_ERR_EOF && st != TRC_ERR_CORRUPT)
        return fs_fail(why, n, "record framing ended with %s", trc_status_str(st));
    return 0;
}

/* ---- reader and trc-dump ---- */

typedef struct read_result {
    uint64_t sig, events;
    trc_status end;
} read_result;

static int read_all(const uint8_t *data, size_t size, size_t max_read, read_result *res,
                    char *why, size_t n)
{
    tb_src src = {data, size, 0, max_read};
    const trc_event *ev;
    trc_status st;
    trc_reader *r = trc_reader_open_callback(tb_read, &src, "fuzz.trc", &st);
    int rc = 0;

    res->sig = 0xcbf29ce484222325ull;
    res->events = 0;
    res->end = st;
    if (!r)
        return 0;
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        if (!ev)
            return fs_fail(why, n, "TRC_OK without an event");
        res->sig = mix(mix(res->sig, ev->type), ev->offset);
        if (ev->type == TRC_EV_SAMPLE)
            res->sig = mix(mix(res->sig, (uint64_t)ev->u.sample.time_ns), ev->u.sample.count);
        if (ev->type == TRC_EV_LOSS)
            res->sig = mix(mix(res->sig, ev->u.loss.kind), ev->u.loss.count);
        if ((rc = fs_check_event(r, ev, why, n)) != 0)
            break;
        if (++res->events > FS_MAX_EVENTS) {
            rc = fs_fail(why, n, "more than %u events: the reader loops", FS_MAX_EVENTS);
            break;
        }
    }
    res->end = st;
    if (rc == 0 && st != TRC_ERR_EOF) {
        const char *e = trc_reader_error(r);
        if (!e || !*e)
            rc = fs_fail(why, n, "reading ended with %s and no message", trc_status_str(st));
    }
    if (rc == 0 && st == TRC_ERR_EOF && trc_reader_next(r, &ev) != TRC_ERR_EOF)
        rc = fs_fail(why, n, "the reader does not stay at the end");
    trc_reader_free(r);
    return rc;
}

int fs_reader(const uint8_t *data, size_t size, FILE *out, char *why, size_t n)
{
    read_result whole, pieces;
    dump_opts o = {"fuzz.trc", NULL, NULL, 1, 0, NULL};
    int (*views[])(trc_reader *, FILE *, const dump_opts *) = {dump_check, dump_events, dump_summary};
    tb_src src = {data, size, 0, 0};
    trc_status st;

    if (read_all(data, size, 0, &whole, why, n) || read_all(data, size, piece(size), &pieces, why, n))
        return -1;
    if (whole.sig != pieces.sig || whole.events != pieces.events || whole.end != pieces.end)
        return fs_fail(why, n, "reads of %zu bytes give other events than one read (%llu vs %llu)",
                       piece(size), (unsigned long long)pieces.events,
                       (unsigned long long)whole.events);
    dump_listing(tb_read, &src, out, &o);
    for (size_t i = 0; i < sizeof views / sizeof *views; i++) {
        trc_reader *r;
        src.pos = 0;
        if ((r = trc_reader_open_callback(tb_read, &src, "fuzz.trc", &st)) != NULL) {
            views[i](r, out, &o);
            trc_reader_free(r);
        }
    }
    return 0;
}
