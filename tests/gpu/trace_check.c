/*
 * tests/gpu/trace_check.c — whole-trace loader for the GPU tests
 * (trace_check.h).
 */
#include "tests/gpu/trace_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy(char *dst, size_t n, const char *s)
{
    snprintf(dst, n, "%s", s ? s : "");
}

static int64_t tid_of(const trc_reader *r, uint32_t thread)
{
    const trc_thread *t = thread ? trc_reader_thread(r, thread) : NULL;
    return t ? t->tid : -1;
}

static void fill(tc_event *e, const trc_reader *r, const trc_event *ev)
{
    memset(e, 0, sizeof *e);
    e->type = ev->type;
    e->tid = -1;
    switch (ev->type) {
    case TRC_EV_GPU_KERNEL:
        e->u.kernel = ev->u.kernel;
        copy(e->name, sizeof e->name, ev->u.kernel.name);
        e->u.kernel.name = NULL;
        break;
    case TRC_EV_GPU_MEMCPY: e->u.memcpy = ev->u.memcpy; break;
    case TRC_EV_GPU_MEMSET: e->u.memset = ev->u.memset; break;
    case TRC_EV_GPU_SYNC: e->u.sync = ev->u.sync; break;
    case TRC_EV_API_CALL: {
        uint32_t s = ev->u.api.stack;
        e->u.api = ev->u.api;
        copy(e->name, sizeof e->name, ev->u.api.name);
        e->u.api.name = NULL;
        e->tid = tid_of(r, ev->u.api.thread);
        while (s) {
            const trc_stack *st = trc_reader_stack(r, s);
            const trc_frame *f = st ? trc_reader_frame(r, st->frame) : NULL;
            if (!st || !f)
                break;
            if (e->depth < TC_MAX_FRAMES) {
                copy(e->frames[e->depth].function, sizeof e->frames[0].function, f->function);
                copy(e->frames[e->depth].file, sizeof e->frames[0].file, f->file);
                e->frames[e->depth].line = f->line;
            }
            e->depth++;
            s = st->parent;
        }
        break;
    }
    case TRC_EV_MARKER:
        e->u.marker = ev->u.marker;
        copy(e->name, sizeof e->name, ev->u.marker.name);
        copy(e->domain, sizeof e->domain, ev->u.marker.domain);
        e->u.marker.name = e->u.marker.domain = NULL;
        e->tid = tid_of(r, ev->u.marker.thread);
        break;
    case TRC_EV_LOSS:
        e->u.loss = ev->u.loss;
        copy(e->detail, sizeof e->detail, ev->u.loss.detail);
        e->u.loss.detail = NULL;
        break;
    case TRC_EV_CLOCK_SYNC: e->u.clock = ev->u.clock_sync; break;
    case TRC_EV_GPU_DEVICE:
        e->u.device = *ev->u.gpu_device;
        copy(e->name, sizeof e->name, ev->u.gpu_device->name);
        e->u.device.name = NULL;
        break;
    case TRC_EV_GPU_CONTEXT: e->u.context = *ev->u.gpu_context; break;
    case TRC_EV_GPU_STREAM:
        e->u.stream = *ev->u.gpu_stream;
        copy(e->name, sizeof e->name, ev->u.gpu_stream->name);
        e->u.stream.name = NULL;
        break;
    case TRC_EV_COUNTER: {
        const trc_counter_def *c = trc_reader_counter(r, ev->u.counter.counter);
        e->u.counter = ev->u.counter;
        copy(e->name, sizeof e->name, c ? c->name : "");
        copy(e->domain, sizeof e->domain, c ? c->unit : "");
        break;
    }
    case TRC_EV_SEGMENT_END: e->u.end = ev->u.segment_end; break;
    case TRC_EV_SEGMENT:
    default:
        break;
    }
}

trc_status tc_load(const char *path, tc_trace *t)
{
    trc_status st;
    trc_reader *r = trc_reader_open_path(path, &st);
    const trc_event *ev;
    size_t cap = 0;

    memset(t, 0, sizeof *t);
    if (!r)
        return st;
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        if (ev->type == TRC_EV_SEGMENT)
            t->segments++;
        if (ev->type == TRC_EV_LOSS && ev->u.loss.from_reader)
            t->reader_losses++;
        if (t->n == cap) {
            size_t nc = cap ? cap * 2 : 256;
            tc_event *n = realloc(t->ev, nc * sizeof *n);
            if (!n) {
                st = TRC_ERR_NOMEM;
                break;
            }
            t->ev = n;
            cap = nc;
        }
        fill(&t->ev[t->n++], r, ev);
    }
    trc_reader_free(r);
    return st == TRC_ERR_EOF ? TRC_OK : st;
}

void tc_free(tc_trace *t)
{
    free(t->ev);
    memset(t, 0, sizeof *t);
}

size_t tc_count(const tc_trace *t, trc_event_type type)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->ev[i].type == type;
    return n;
}

const tc_event *tc_nth(const tc_trace *t, trc_event_type type, size_t k)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].type == type && k-- == 0)
            return &t->ev[i];
    return NULL;
}

const tc_event *tc_api_by_corr(const tc_trace *t, uint32_t corr)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].type == TRC_EV_API_CALL && t->ev[i].u.api.correlation == corr)
            return &t->ev[i];
    return NULL;
}
