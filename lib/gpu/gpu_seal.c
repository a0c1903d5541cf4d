/*
 * lib/gpu/gpu_seal.c — close a side trace whose writer died (contract in
 * lib/gpu/trec_gpu.h, trec_gpu_seal).
 *
 * A process that leaves through os._exit (multiprocessing's workers do),
 * a fatal signal or a crash runs no exit handler, so the injection never
 * writes its last records nor the SEGMENT_END that says the recording is
 * whole: merged as it is, an ordinary run would read as a recording cut
 * short.  What is known is exactly what was lost: the records CUPTI had
 * not yet handed over (at most one flusher round, docs/gpu.md).  So the
 * segment is closed as its writer would have closed it, with one LOSS
 * record that says so (spec §7.18: kind OTHER, count 1, "a unit of
 * unknown size", named in its detail) and a SEGMENT_END whose totals
 * are those of the records the segment holds (spec §7.20), in one DATA
 * chunk that continues the segment's sequence.  A partial chunk at the
 * end (the process died inside a write) is cut off first: its records
 * were never whole.
 *
 * Only the last segment of the file is looked at; a file whose last
 * segment ended, that holds no segment, or that does not read as a
 * trace is left as it is.
 */
#include "lib/gpu/trec_gpu.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/chunk.h"
#include "format/record.h"
#include "format/records.h"
#include "format/scan.h"
#include "lib/util/hashtab.h"

/* What the last segment holds, counted as SEGMENT_END counts it. */
typedef struct seal_scan {
    int in_segment, ended;
    uint8_t major, minor;
    uint64_t last_seq;        /* of the segment's last good chunk */
    int64_t end;              /* latest time met */
    uint64_t max_string;      /* highest STRING id: the new one follows */
    uint64_t samples, gpu_activities, api_calls, lost_samples, lost_gpu_records;
    trch_u64map threads, pids;
    uint64_t cut_at;          /* a truncated tail starts here; 0 = none */
} seal_scan;

static long read_fd(void *ctx, void *buf, size_t len)
{
    int fd = *(int *)ctx;
    for (;;) {
        ssize_t n = read(fd, buf, len);
        if (n >= 0 || errno != EINTR)
            return (long)n;
    }
}

static void later(seal_scan *s, int64_t t)
{
    if (t > s->end)
        s->end = t;
}

static trc_status count_record(seal_scan *s, const trcf_record *rec, int64_t *tcur)
{
    trcf_body b;
    const char *why;
    if (rec->type == TRCF_SEGMENT_HEADER || rec->type < 1 || rec->type > TRCF_TYPE_MAX)
        return TRC_OK;
    if (trcf_decode(rec->type, rec->body, rec->len, tcur, &b, &why) != TRC_OK)
        return TRC_OK; /* a corrupt record: the reader reports it */
    uint32_t v;
    int added;
    switch (rec->type) {
    case TRCF_STRING:
        if (b.string.id > s->max_string)
            s->max_string = b.string.id;
        break;
    case TRCF_THREAD:
        return trch_u64map_put(&s->threads, b.thread.id, 0, &v, &added);
    case TRCF_PROCESS:
        return trch_u64map_put(&s->pids, (uint64_t)b.process.pid, 0, &v, &added);
    case TRCF_SAMPLE:
        s->samples += (b.sample.flags & TRCF_SAMPLE_REPEAT) ? b.sample.count : 1;
        later(s, b.sample.time);
        break;
    case TRCF_GPU_KERNEL:
    case TRCF_GPU_MEMCPY:
    case TRCF_GPU_MEMSET:
    case TRCF_GPU_SYNC:
        /* the where part leads each of the four bodies */
        s->gpu_activities++;
        later(s, b.kernel.w.end);
        break;
    case TRCF_API_CALL:
        s->api_calls++;
        later(s, b.api.end);
        break;
    case TRCF_LOSS:
        if (b.loss.kind == TRC_LOSS_SAMPLES_MISSED || b.loss.kind == TRC_LOSS_SAMPLES_INVALID)
            s->lost_samples += b.loss.count;
        else if (b.loss.kind == TRC_LOSS_GPU_DROPPED)
            s->lost_gpu_records += b.loss.count;
        later(s, b.loss.end);
        break;
    case TRCF_SEGMENT_END:
        s->ended = 1;
        break;
    default:
        break;
    }
    later(s, *tcur);
    return TRC_OK;
}

static void new_segment(seal_scan *s, const trcf_chunk_header *h)
{
    trch_u64map_clear(&s->threads);
    trch_u64map_clear(&s->pids);
    s->in_segment = 1;
    s->ended = 0;
    s->major = h->major;
    s->minor = h->minor;
    s->end = h->base_time;
    s->max_string = 0;
    s->samples = s->gpu_activities = s->api_calls = 0;
    s->lost_samples = s->lost_gpu_records = 0;
}

static trc_status scan_file(int fd, seal_scan *s)
{
    trc_status st;
    trcf_scanner *sc = trcf_scanner_new(read_fd, &fd, &st);
    if (!sc)
        return st;
    trcf_chunk_info ci;
    while ((st = trcf_chunk_next(sc, &ci)) == TRC_OK) {
        if (ci.state == TRCF_CHUNK_TRUNCATED) {
            s->cut_at = ci.offset;
            continue;
        }
        s->cut_at = 0; /* only a tail is cut */
        if (ci.state != TRCF_CHUNK_OK)
            continue;
        if (ci.h.kind == TRCF_KIND_SEGMENT)
            new_segment(s, &ci.h);
        if (!s->in_segment)
            continue;
        s->last_seq = ci.h.seq;
        int64_t tcur = ci.h.base_time;
        trcf_rec_iter it;
        trcf_record rec;
        trcf_rec_iter_init(&it, ci.payload, ci.h.decoded_len);
        const char *why;
        while (trcf_record_next(&it, &rec, &why) == TRC_OK)
            if ((st = count_record(s, &rec, &tcur)) != TRC_OK)
                goto out;
    }
    if (st == TRC_ERR_EOF || st == TRC_ERR_NOT_TRC)
        st = TRC_OK;
out:
    trcf_scanner_free(sc);
    return st;
}

/* The closing chunk: STRING, LOSS, SEGMENT_END. */
static trc_status closing_chunk(const seal_scan *s, int64_t pid, trcf_deflater *d)
{
    char detail[256];
    snprintf(detail, sizeof detail,
             "pid %lld ended without closing its GPU trace (os._exit, a signal or a crash): "
             "its GPU records after the last flush are lost",
             (long long)pid);
    trcf_buf p = {0};
    int64_t tcur = s->end;
    trcf_body b;
    trc_status st;
    memset(&b, 0, sizeof b);
    b.string = (trcf_string_def){s->max_string + 1, {detail, strlen(detail)}};
    if ((st = trcf_encode(&p, TRCF_STRING, &tcur, &b)) != TRC_OK)
        goto out;
    memset(&b, 0, sizeof b);
    b.loss = (trcf_loss){TRC_LOSS_OTHER, 1, pid, 0, s->end, s->end, s->max_string + 1};
    if ((st = trcf_encode(&p, TRCF_LOSS, &tcur, &b)) != TRC_OK)
        goto out;
    memset(&b, 0, sizeof b);
    b.segment_end = (trcf_segment_end){s->end,
                                       s->samples,
                                       trch_u64map_count(&s->threads),
                                       trch_u64map_count(&s->pids),
                                       s->gpu_activities,
                                       s->api_calls,
                                       s->lost_samples,
                                       s->lost_gpu_records};
    if ((st = trcf_encode(&p, TRCF_SEGMENT_END, &tcur, &b)) != TRC_OK)
        goto out;
    trcf_chunk_header h = {.major = s->major, .minor = s->minor, .kind = TRCF_KIND_DATA,
                           .seq = s->last_seq + 1, .base_time = s->end};
    st = trcf_chunk_build(d, TRCF_LEVEL_DEFAULT, &h, p.data, p.len);
out:
    trcf_buf_free(&p);
    return st;
}

int trec_gpu_seal(const char *path, int64_t pid, trec_gpu_seal_result *res)
{
    memset(res, 0, sizeof *res);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        snprintf(res->why, sizeof res->why, "%.180s: %.60s", path, strerror(errno));
        return -1;
    }
    seal_scan s;
    memset(&s, 0, sizeof s);
    trcf_deflater d = {0};
    int rc = 0;
    trc_status st = scan_file(fd, &s);
    if (st != TRC_OK) {
        snprintf(res->why, sizeof res->why, "%.180s: %s", path, trc_status_str(st));
        rc = -1;
        goto out;
    }
    if (!s.in_segment || s.ended)
        goto out;
    if ((st = closing_chunk(&s, pid, &d)) != TRC_OK) {
        snprintf(res->why, sizeof res->why, "%.180s: %s", path, trc_status_str(st));
        rc = -1;
        goto out;
    }
    /* the closing chunk replaces a truncated tail; anything else after
     * the last good chunk (damage) stays for the reader to report */
    struct stat sb;
    if (fstat(fd, &sb) == 0 && s.cut_at && (uint64_t)sb.st_size > s.cut_at)
        res->cut_bytes = (uint64_t)sb.st_size - s.cut_at;
    off_t at = s.cut_at ? (off_t)s.cut_at : lseek(fd, 0, SEEK_END);
    if (at < 0 || (s.cut_at && ftruncate(fd, at) != 0) || lseek(fd, at, SEEK_SET) != at) {
        snprintf(res->why, sizeof res->why, "%.180s: %.60s", path, strerror(errno));
        rc = -1;
        goto out;
    }
    const uint8_t *p = d.out.data;
    size_t left = d.out.len;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(res->why, sizeof res->why, "%.180s: %.60s", path,
                     w < 0 ? strerror(errno) : "short write");
            (void)ftruncate(fd, at); /* as it was, less a torn tail */
            rc = -1;
            goto out;
        }
        p += w;
        left -= (size_t)w;
    }
    res->sealed = 1;
    res->gpu_activities = s.gpu_activities;
    res->api_calls = s.api_calls;
out:
    trcf_deflater_cleanup(&d);
    trch_u64map_cleanup(&s.threads);
    trch_u64map_cleanup(&s.pids);
    close(fd);
    return rc;
}
