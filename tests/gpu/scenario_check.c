/*
 * tests/gpu/scenario_check.c — what every complete side trace of the
 * standard fake-CUPTI scenario (fake_scenario.c) must hold, record by
 * record, checked with cmocka's asserts (scenario_check.h).  Shared by
 * the injection tests that produce such a trace in different ways
 * (shutdown, at-exit, forked child).
 */
#include "tests/gpu/scenario_check.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

/* Contexts and streams: the scenario's two contexts (1 on device 0, 2 on
 * device 1) each name stream 7 as their NULL stream, so both (1, 7) and
 * (2, 7) are described as default streams; kernels also run on 13 and 14
 * of context 1, which are not.  The last description of a stream wins. */
static void check_contexts_streams(const tc_trace *t, int64_t pid)
{
    static const struct { uint32_t context, stream, flags; } want[] = {
        { 1, 7, TRC_STREAM_DEFAULT }, { 2, 7, TRC_STREAM_DEFAULT }, { 1, 13, 0 }, { 1, 14, 0 },
    };
    uint32_t flags[4];
    int seen[4] = { 0 };

    assert_int_equal(tc_count(t, TRC_EV_GPU_CONTEXT), 2);
    for (size_t i = 0; i < 2; i++) {
        const tc_event *c = tc_nth(t, TRC_EV_GPU_CONTEXT, i);
        assert_int_equal(c->u.context.pid, pid);
        assert_int_equal(c->u.context.device, c->u.context.context - 1);
    }
    for (size_t i = 0; i < t->n; i++) {
        const trc_gpu_stream *s;
        size_t k;
        if (t->ev[i].type != TRC_EV_GPU_STREAM)
            continue;
        s = &t->ev[i].u.stream;
        for (k = 0; k < 4 && !(want[k].context == s->context && want[k].stream == s->stream); k++)
            ;
        if (k == 4)
            fail_msg("unexpected stream description: context %u stream %u", s->context, s->stream);
        assert_int_equal(s->pid, pid);
        assert_int_equal(s->device, s->context - 1);
        assert_int_equal(s->priority, 0);
        seen[k] = 1;
        flags[k] = s->flags;
    }
    for (size_t k = 0; k < 4; k++) {
        if (!seen[k])
            fail_msg("stream %u of context %u not described", want[k].stream, want[k].context);
        assert_int_equal(flags[k], want[k].flags);
    }
}

void fake_scenario_check(const tc_trace *t, const fake_scenario *sc, int64_t pid)
{
    size_t launches = 0, sync_calls = 0, overlap = 0;
    uint32_t streams[8];
    size_t n_streams = 0;
    unsigned kinds[11] = { 0 };

    assert_int_equal(t->reader_losses, 0);
    assert_int_equal(tc_count(t, TRC_EV_GPU_DEVICE), 2);
    assert_int_equal(tc_count(t, TRC_EV_GPU_KERNEL), sc->kernels);
    assert_int_equal(tc_count(t, TRC_EV_GPU_MEMCPY), sc->memcpys);
    assert_int_equal(tc_count(t, TRC_EV_GPU_MEMSET), sc->memsets);
    assert_int_equal(tc_count(t, TRC_EV_GPU_SYNC), sc->syncs);
    assert_int_equal(tc_count(t, TRC_EV_API_CALL), sc->api_recorded);
    assert_int_equal(tc_count(t, TRC_EV_MARKER),
                     sc->markers_range + sc->markers_instant + sc->overheads);
    assert_true(tc_count(t, TRC_EV_CLOCK_SYNC) >= 2);
    check_contexts_streams(t, pid);

    /* dropped records and the zero-timestamp kernel, each one loss */
    uint64_t dropped = 0, bad = 0;
    for (size_t i = 0; i < t->n; i++) {
        const tc_event *e = &t->ev[i];
        if (e->type != TRC_EV_LOSS)
            continue;
        assert_int_equal(e->u.loss.kind, TRC_LOSS_GPU_DROPPED);
        if (strstr(e->detail, "timestamps"))
            bad += e->u.loss.count;
        else
            dropped += e->u.loss.count;
    }
    assert_int_equal(bad, sc->bad_time);
    assert_int_equal(dropped, sc->dropped);

    for (size_t i = 0; i < t->n; i++) {
        const tc_event *e = &t->ev[i];
        const trc_gpu_where *w = NULL;
        int64_t start = 0, end = 0;
        switch (e->type) {
        case TRC_EV_GPU_KERNEL:
            w = &e->u.kernel.where; start = e->u.kernel.start_ns; end = e->u.kernel.end_ns;
            break;
        case TRC_EV_GPU_MEMCPY:
            w = &e->u.memcpy.where; start = e->u.memcpy.start_ns; end = e->u.memcpy.end_ns;
            kinds[e->u.memcpy.copy_kind]++;
            break;
        case TRC_EV_GPU_MEMSET:
            w = &e->u.memset.where; start = e->u.memset.start_ns; end = e->u.memset.end_ns;
            break;
        case TRC_EV_GPU_SYNC:
            w = &e->u.sync.where; start = e->u.sync.start_ns; end = e->u.sync.end_ns;
            break;
        case TRC_EV_API_CALL:
            if (e->u.api.flags & TRC_API_LAUNCH) {
                launches++;
                /* no Python in this test program */
                assert_true(e->u.api.flags & TRC_API_NO_PYTHON);
                assert_int_equal(e->u.api.stack, 0);
            }
            if (e->u.api.flags & TRC_API_SYNC) {
                sync_calls++;
                assert_true(strstr(e->name, "Synchronize") != NULL);
                assert_true(e->u.api.flags & TRC_API_NO_PYTHON);
            }
            assert_string_not_equal(e->name, "cudaGetDevice");
            assert_string_not_equal(e->name, "cudaStreamQuery");
            assert_string_not_equal(e->name, "cuCtxGetCurrent");
            break;
        default:
            break;
        }
        if (!w)
            continue;
        /* every activity correlates to a recorded API call, and starts
         * no earlier than that call (both on the trace clock) */
        const tc_event *api = tc_api_by_corr(t, w->correlation);
        assert_non_null(api);
        assert_true(start > 0);
        assert_true(end >= start);
        assert_true(start >= api->u.api.start_ns);
        if (e->type != TRC_EV_GPU_SYNC) {
            size_t k;
            for (k = 0; k < n_streams && streams[k] != w->stream; k++)
                ;
            if (k == n_streams && n_streams < 8)
                streams[n_streams++] = w->stream;
        }
    }
    assert_int_equal(launches, sc->launches);
    assert_int_equal(sync_calls, sc->sync_calls);
    assert_int_equal(n_streams, sc->streams);
    assert_int_equal(kinds[TRC_COPY_HTOD], 1);
    assert_int_equal(kinds[TRC_COPY_DTOH], 1);
    assert_int_equal(kinds[TRC_COPY_DTOD], 1);
    assert_int_equal(kinds[TRC_COPY_PTOP], 1);

    /* concurrent kernels on different streams overlap; names demangled */
    for (size_t i = 0; i < tc_count(t, TRC_EV_GPU_KERNEL); i++) {
        const tc_event *a = tc_nth(t, TRC_EV_GPU_KERNEL, i);
        assert_null(strstr(a->name, "_Z"));
        for (size_t j = i + 1; j < tc_count(t, TRC_EV_GPU_KERNEL); j++) {
            const tc_event *b = tc_nth(t, TRC_EV_GPU_KERNEL, j);
            if (a->u.kernel.where.stream != b->u.kernel.where.stream &&
                a->u.kernel.start_ns < b->u.kernel.end_ns &&
                b->u.kernel.start_ns < a->u.kernel.end_ns)
                overlap++;
        }
    }
    assert_true(overlap >= 1);
    const tc_event *k0 = tc_nth(t, TRC_EV_GPU_KERNEL, 0);
    assert_string_equal(k0->name, "vectorAdd(float const*, float const*, float*, int)");

    /* NVTX: the push/pop range keeps its name; the start/end range its colour */
    int forward = 0, epoch = 0, checkpoint = 0;
    for (size_t i = 0; i < tc_count(t, TRC_EV_MARKER); i++) {
        const tc_event *m = tc_nth(t, TRC_EV_MARKER, i);
        if (strcmp(m->name, "forward") == 0 && m->u.marker.kind == TRC_MARK_RANGE &&
            m->u.marker.end_ns - m->u.marker.start_ns == 40000)
            forward++;
        if (strcmp(m->name, "epoch 0") == 0 && m->u.marker.kind == TRC_MARK_RANGE &&
            m->u.marker.color == 0x00C000 && m->u.marker.thread == 0)
            epoch++;
        if (strcmp(m->name, "checkpoint") == 0 && m->u.marker.kind == TRC_MARK_INSTANT)
            checkpoint++;
    }
    assert_int_equal(forward, 1);
    assert_int_equal(epoch, 1);
    assert_int_equal(checkpoint, 1);
}
