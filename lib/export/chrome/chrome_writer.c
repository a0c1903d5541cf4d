/*
 * lib/export/chrome/chrome_writer.c — the pieces of Chrome Trace Event
 * text that both halves of the exporter write (contract in chrome_int.h;
 * format facts in docs/design/outputs.md §2): the traceEvents array
 * itself, timestamps and slice spans relative to the trace start,
 * metadata events, and the table of processes that get names at the end.
 * chrome.c (CPU) and chrome_gpu*.c (GPU) both build on this file and
 * never on each other's writers.
 */
#include "lib/export/chrome/chrome_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lib/util/grow.h"

trc_status chr_fail(chrome *c, const char *what)
{
    snprintf(c->err, sizeof c->err, "chrome: %s: %s", what, trc_status_str(TRC_ERR_NOMEM));
    c->err_st = TRC_ERR_NOMEM;
    return TRC_ERR_NOMEM;
}

void chr_next_event(chrome *c)
{
    if (!c->started) {
        jsonw_raw(&c->w, "{\"traceEvents\":[\n");
        c->started = 1;
    } else {
        jsonw_bytes(&c->w, ",\n", 2);
    }
    c->n_events++;
}

void chr_write_ts(chrome *c, int64_t ns)
{
    jsonw_bytes(&c->w, "\"ts\":", 5);
    jsonw_us3(&c->w, chr_wsub(ns, c->start_ns));
}

int chr_note_pid(chrome *c, int64_t pid)
{
    for (uint32_t i = c->n_pids; i-- > 0;)
        if (c->pids[i] == pid)
            return 0;
    if (trcu_grow32(&c->pids, &c->cap_pids, c->n_pids, sizeof *c->pids))
        return -1;
    c->pids[c->n_pids++] = pid;
    return 0;
}

/* Contract in chrome_int.h. */
size_t chr_fmt_dur(char *dst, double a, double target, int64_t open, int64_t close)
{
    double d = (double)chr_wsub(close, open) / 1000.0;
    double dir;

    if (a + d == target)
        return jsonw_fmt_us3(dst, chr_wsub(close, open));
    dir = a + d < target ? INFINITY : -INFINITY;
    for (int i = 0; i < 64 && a + d != target; i++)
        d = nextafter(d, dir);
    if (a + d == target)
        return jsonw_fmt_double(dst, d);
    return jsonw_fmt_us3(dst, chr_wsub(close, open)); /* cannot happen for sane values */
}

char *chr_put_span(const chrome *c, char *p, int64_t base_ns, int64_t open, int64_t close)
{
    double base = chr_ts_value(c, base_ns);

    memcpy(p, "\"ts\":", 5);
    p += 5;
    p += jsonw_fmt_us3(p, chr_wsub(open, c->start_ns));
    memcpy(p, ",\"dur\":", 7);
    p += 7;
    return p + chr_fmt_dur(p, chr_ts_value(c, open) - base, chr_ts_value(c, close) - base, open, close);
}

void chr_write_meta(chrome *c, const char *name, int64_t pid, int64_t tid)
{
    jsonw *out = &c->w;

    chr_next_event(c);
    jsonw_raw(out, "{\"ph\":\"M\",\"name\":\"");
    jsonw_raw(out, name);
    jsonw_raw(out, "\",\"pid\":");
    jsonw_i64(out, pid);
    jsonw_raw(out, ",\"tid\":");
    jsonw_i64(out, tid);
    jsonw_raw(out, ",\"args\":{");
}
