/*
 * test_roundtrip.c — libtrc writer → reader round trips (trc.h):
 * every record type with extreme values, strings (empty, 64 KiB,
 * non-ASCII), repeat folding, thread renames, negative time deltas,
 * chunking and compression levels, statistics, write errors (EPIPE),
 * and file descriptors.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "trc/trc.h"
#include "tests/support/trace_builder.h"

static trc_writer *open_mem(tb_buf *b, uint32_t chunk_bytes, int level)
{
    trc_writer_options o;
    trc_status st;
    trc_writer *w;

    memset(&o, 0, sizeof o);
    o.start_ns = 1;
    o.wall_ns = 2;
    o.host = "h";
    o.recorder = "test";
    o.chunk_bytes = chunk_bytes;
    o.compression_level = level;
    w = trc_writer_open_callback(tb_write, b, &o, &st);
    assert_non_null(w);
    assert_int_equal(st, TRC_OK);
    return w;
}

/* Open a reader over b and return the next non-definition event. */
typedef struct rd {
    tb_src src;
    trc_reader *r;
} rd;

static void rd_open(rd *x, const tb_buf *b)
{
    trc_status st;
    memset(x, 0, sizeof *x);
    x->src.p = b->p;
    x->src.len = b->len;
    x->r = trc_reader_open_callback(tb_read, &x->src, "mem.trc", &st);
    assert_non_null(x->r);
}

static const trc_event *rd_next(rd *x, trc_event_type want)
{
    const trc_event *ev;
    trc_status st;
    while ((st = trc_reader_next(x->r, &ev)) == TRC_OK) {
        if (ev->type == want)
            return ev;
        if (ev->type == TRC_EV_LOSS && ev->u.loss.from_reader)
            fail_msg("unexpected reader loss: %s", ev->u.loss.detail);
    }
    fail_msg("no event of type %d (status %d: %s)", (int)want, (int)st, trc_reader_error(x->r));
    return NULL;
}

static void test_all_types(void **state)
{
    tb_buf b = { 0 };
    trc_writer_options o;
    trc_kv meta[3] = { { "python", "3.12.1" }, { "emoji", "\xf0\x9f\x90\x8d" }, { "", "" } };
    trc_writer *w;
    trc_status st;
    uint32_t th, fr, fr2, stk, stk2, cnt;
    rd x;
    const trc_event *ev;
    const trc_frame *f;
    const trc_stack *s;
    (void)state;

    memset(&o, 0, sizeof o);
    o.recorder = "trec 0.1.0";
    o.host = "h\xc3\xb6st";
    o.command_line = "python -c 'print(1)'";
    o.n_metadata = 3;
    o.metadata = meta;
    o.start_ns = INT64_MIN + 1;
    o.wall_ns = INT64_MAX;
    o.period_ns = 250000;
    o.compression_level = 9;
    w = trc_writer_open_callback(tb_write, &b, &o, &st);
    assert_non_null(w);
    {
        trc_process p = { 0, INT64_MAX, INT64_MIN, "/usr/bin/python3", "CPython 3.12.1", "python x.py", -77, INT64_MAX, "DataLoader worker 3",
                           "_Py_DebugOffsets (3.14 list)" };
        assert_int_equal(trc_writer_process(w, &p), TRC_OK);
    }
    assert_int_equal(trc_writer_thread(w, INT64_MAX, INT64_MIN, "T\xc3\xa9st", &th), TRC_OK);
    assert_int_equal(trc_writer_frame(w, TRC_FRAME_NATIVE, "fn", "", UINT32_MAX, 0, &fr), TRC_OK);
    assert_int_equal(trc_writer_frame(w, TRC_FRAME_GPU_KERNEL, "k", "f", 0, UINT32_MAX, &fr2), TRC_OK);
    assert_int_equal(trc_writer_stack(w, 0, fr, &stk), TRC_OK);
    assert_int_equal(trc_writer_stack(w, stk, fr2, &stk2), TRC_OK);
    assert_int_equal(trc_writer_sample(w, INT64_MAX, th, stk2, 0xffffffffu, UINT64_MAX), TRC_OK);
    /* the sample is a pending run until its chunk closes: close it now so
     * that the events below come in call order */
    assert_int_equal(trc_writer_flush(w), TRC_OK);
    assert_int_equal(trc_writer_counter_def(w, "gpu.util", "percent", -1, INT32_MIN, &cnt), TRC_OK);
    assert_int_equal(trc_writer_counter(w, cnt, INT64_MIN, -INFINITY), TRC_OK);
    {
        trc_gpu_device d = { UINT32_MAX, "NVIDIA H100", { 0 }, UINT32_MAX, UINT64_MAX, 9, 0 };
        int i;
        for (i = 0; i < 16; i++)
            d.uuid[i] = (uint8_t)(i * 17);
        assert_int_equal(trc_writer_gpu_device(w, &d), TRC_OK);
    }
    {
        trc_gpu_kernel k;
        memset(&k, 0, sizeof k);
        k.where.pid = INT64_MIN;
        k.where.device = UINT32_MAX;
        k.where.context = UINT32_MAX;
        k.where.stream = 0;
        k.where.correlation = UINT32_MAX;
        k.start_ns = INT64_MIN;
        k.end_ns = INT64_MAX;
        k.name = "";
        k.grid[0] = UINT32_MAX;
        k.grid[2] = 1;
        k.block[1] = 1024;
        k.registers = 255;
        k.static_smem = UINT32_MAX;
        k.dynamic_smem = 7;
        k.graph = UINT32_MAX;          /* 1.3 */
        k.graph_node = UINT64_MAX;
        assert_int_equal(trc_writer_gpu_kernel(w, &k), TRC_OK);
    }
    {
        trc_gpu_memcpy m = { { 1, 2, 3, 4, 5 }, 100, 200, UINT64_MAX, TRC_COPY_PTOP, TRC_MEM_PINNED,
                             TRC_MEM_MANAGED_STATIC, 7 };
        trc_gpu_memset ms = { { 1, 2, 3, 4, 6 }, -300, -200, 0, UINT32_MAX, TRC_MEM_DEVICE };
        trc_gpu_sync sy = { { 1, 2, 3, 4, 7 }, 10, 10, TRC_SYNC_CONTEXT };
        assert_int_equal(trc_writer_gpu_memcpy(w, &m), TRC_OK);
        assert_int_equal(trc_writer_gpu_memset(w, &ms), TRC_OK);
        assert_int_equal(trc_writer_gpu_sync(w, &sy), TRC_OK);
    }
    {
        trc_api_call a = { th, 5, 6, TRC_API_DRIVER, "cuLaunchKernel", UINT32_MAX, stk, INT32_MIN,
                           TRC_API_LAUNCH | TRC_API_NO_PYTHON, UINT64_MAX,
                           UINT32_MAX, UINT32_MAX };
        trc_marker m = { TRC_MARK_POP, 0, -1, 9, 9, "\xe6\x97\xa5\xe6\x9c\xac", "nvtx", 0xabcdef, UINT64_MAX };
        trc_clock_sync c = { TRC_CLOCK_GPU, 3, 12, INT64_MIN };
        trc_loss l = { .kind = TRC_LOSS_GPU_DROPPED, .count = UINT64_MAX, .pid = -1, .thread = th,
                       .start_ns = 0, .end_ns = 0, .detail = "cupti buffer full" };
        trc_process_exit e = { 42, INT64_MAX, INT32_MIN, 0 };
        trc_process_exit e2 = { 43, 1, 0, 9 };
        assert_int_equal(trc_writer_api_call(w, &a), TRC_OK);
        assert_int_equal(trc_writer_marker(w, &m), TRC_OK);
        assert_int_equal(trc_writer_clock_sync(w, &c), TRC_OK);
        assert_int_equal(trc_writer_loss(w, &l), TRC_OK);
        assert_int_equal(trc_writer_process_exit(w, &e), TRC_OK);
        assert_int_equal(trc_writer_process_exit(w, &e2), TRC_OK);
    }
    /* record times never close a chunk, only ticks and size do: one
     * chunk so far, from the flush above */
    {
        uint64_t one = trc_writer_bytes(w);
        assert_true(one > 0);
        assert_int_equal(trc_writer_tick(w, INT64_MIN), TRC_OK);
        assert_int_equal(trc_writer_tick(w, INT64_MAX), TRC_OK);
        assert_true(trc_writer_bytes(w) > one);
    }
    assert_int_equal(trc_writer_close(w, INT64_MIN), TRC_OK);

    rd_open(&x, &b);
    ev = rd_next(&x, TRC_EV_SEGMENT);
    assert_int_equal(ev->offset, 0);
    assert_int_equal(ev->u.segment->index, 0);
    assert_int_equal(ev->u.segment->major, 1);
    assert_int_equal(ev->u.segment->minor, 4); /* format 1.4: API graph ids */
    assert_true(ev->u.segment->start_ns == INT64_MIN + 1);
    assert_true(ev->u.segment->wall_ns == INT64_MAX);
    assert_true(ev->u.segment->period_ns == 250000);
    assert_string_equal(ev->u.segment->recorder, "trec 0.1.0");
    assert_string_equal(ev->u.segment->host, "h\xc3\xb6st");
    assert_string_equal(ev->u.segment->command_line, "python -c 'print(1)'");
    assert_int_equal(ev->u.segment->n_metadata, 3);
    assert_string_equal(ev->u.segment->metadata[1].value, "\xf0\x9f\x90\x8d");
    assert_string_equal(ev->u.segment->metadata[2].key, "");

    ev = rd_next(&x, TRC_EV_PROCESS);
    assert_true(ev->u.process->pid == INT64_MAX && ev->u.process->ppid == INT64_MIN);
    assert_string_equal(ev->u.process->executable, "/usr/bin/python3");
    assert_string_equal(ev->u.process->interpreter, "CPython 3.12.1");
    assert_string_equal(ev->u.process->command_line, "python x.py");
    assert_true(ev->u.process->rank == INT64_MAX);
    assert_string_equal(ev->u.process->label, "DataLoader worker 3");
    assert_string_equal(ev->u.process->layout, "_Py_DebugOffsets (3.14 list)");
    assert_true(ev->u.process->start_ns == -77);
    assert_ptr_equal(trc_reader_process_by_pid(x.r, INT64_MAX), ev->u.process);

    ev = rd_next(&x, TRC_EV_THREAD);
    assert_true(ev->u.thread->pid == INT64_MAX && ev->u.thread->tid == INT64_MIN);
    assert_string_equal(ev->u.thread->name, "T\xc3\xa9st");

    ev = rd_next(&x, TRC_EV_SAMPLE);
    assert_true(ev->u.sample.time_ns == INT64_MAX);
    assert_int_equal(ev->u.sample.flags, 7);        /* only the public bits */
    assert_true(ev->u.sample.weight_ns == UINT64_MAX);
    assert_int_equal(ev->u.sample.count, 1);
    assert_int_equal(ev->u.sample.span_ns, 0);
    s = trc_reader_stack(x.r, ev->u.sample.stack);
    assert_non_null(s);
    assert_int_equal(s->depth, 2);
    f = trc_reader_frame(x.r, s->frame);
    assert_int_equal(f->kind, TRC_FRAME_GPU_KERNEL);
    assert_string_equal(f->function, "k");
    assert_int_equal(f->first_line, UINT32_MAX);
    s = trc_reader_stack(x.r, s->parent);
    f = trc_reader_frame(x.r, s->frame);
    assert_int_equal(f->kind, TRC_FRAME_NATIVE);
    assert_string_equal(f->file, "");
    assert_int_equal(f->line, UINT32_MAX);
    assert_int_equal(s->parent, 0);
    assert_int_equal(trc_reader_stack(x.r, 0)->depth, 0);

    ev = rd_next(&x, TRC_EV_COUNTER_DEF);
    assert_string_equal(ev->u.counter_def->name, "gpu.util");
    assert_string_equal(ev->u.counter_def->unit, "percent");
    assert_true(ev->u.counter_def->pid == -1 && ev->u.counter_def->device == INT32_MIN);
    ev = rd_next(&x, TRC_EV_COUNTER);
    assert_true(ev->u.counter.time_ns == INT64_MIN);
    assert_true(isinf(ev->u.counter.value) && ev->u.counter.value < 0);

    ev = rd_next(&x, TRC_EV_GPU_DEVICE);
    assert_int_equal(ev->u.gpu_device->device, UINT32_MAX);
    assert_string_equal(ev->u.gpu_device->name, "NVIDIA H100");
    assert_int_equal(ev->u.gpu_device->uuid[15], 255);
    assert_true(ev->u.gpu_device->memory_bytes == UINT64_MAX);
    assert_int_equal(ev->u.gpu_device->cc_major, 9);
    assert_ptr_equal(trc_reader_gpu_device(x.r, UINT32_MAX), ev->u.gpu_device);

    ev = rd_next(&x, TRC_EV_GPU_KERNEL);
    assert_true(ev->u.kernel.where.pid == INT64_MIN);
    assert_int_equal(ev->u.kernel.where.device, UINT32_MAX);
    assert_int_equal(ev->u.kernel.where.correlation, UINT32_MAX);
    assert_true(ev->u.kernel.start_ns == INT64_MIN && ev->u.kernel.end_ns == INT64_MAX);
    assert_string_equal(ev->u.kernel.name, "");
    assert_int_equal(ev->u.kernel.grid[0], UINT32_MAX);
    assert_int_equal(ev->u.kernel.block[1], 1024);
    assert_int_equal(ev->u.kernel.static_smem, UINT32_MAX);
    assert_int_equal(ev->u.kernel.dynamic_smem, 7);
    assert_int_equal(ev->u.kernel.graph, UINT32_MAX);
    assert_true(ev->u.kernel.graph_node == UINT64_MAX);

    ev = rd_next(&x, TRC_EV_GPU_MEMCPY);
    assert_true(ev->u.memcpy.bytes == UINT64_MAX);
    assert_int_equal(ev->u.memcpy.copy_kind, TRC_COPY_PTOP);
    assert_int_equal(ev->u.memcpy.dst_kind, TRC_MEM_MANAGED_STATIC);
    assert_int_equal(ev->u.memcpy.where.correlation, 5);
    ev = rd_next(&x, TRC_EV_GPU_MEMSET);
    assert_true(ev->u.memset.start_ns == -300 && ev->u.memset.end_ns == -200);
    assert_int_equal(ev->u.memset.value, UINT32_MAX);
    ev = rd_next(&x, TRC_EV_GPU_SYNC);
    assert_int_equal(ev->u.sync.sync_kind, TRC_SYNC_CONTEXT);
    assert_true(ev->u.sync.start_ns == 10 && ev->u.sync.end_ns == 10);

    ev = rd_next(&x, TRC_EV_API_CALL);
    assert_int_equal(ev->u.api.domain, TRC_API_DRIVER);
    assert_string_equal(ev->u.api.name, "cuLaunchKernel");
    assert_int_equal(ev->u.api.result, INT32_MIN);
    assert_int_equal(ev->u.api.flags, 3);
    assert_true(ev->u.api.capture_ns == UINT64_MAX);
    assert_true(ev->u.api.graph == UINT32_MAX && ev->u.api.graph_exec == UINT32_MAX);
    assert_int_equal(trc_reader_stack(x.r, ev->u.api.stack)->depth, 1);
    assert_string_equal(trc_reader_thread(x.r, ev->u.api.thread)->name, "T\xc3\xa9st");

    ev = rd_next(&x, TRC_EV_MARKER);
    assert_int_equal(ev->u.marker.kind, TRC_MARK_POP);
    assert_int_equal(ev->u.marker.thread, 0);
    assert_string_equal(ev->u.marker.name, "\xe6\x97\xa5\xe6\x9c\xac");
    assert_string_equal(ev->u.marker.domain, "nvtx");
    assert_int_equal(ev->u.marker.color, 0xabcdef);
    assert_true(ev->u.marker.id == UINT64_MAX);

    ev = rd_next(&x, TRC_EV_CLOCK_SYNC);
    assert_int_equal(ev->u.clock_sync.domain, TRC_CLOCK_GPU);
    assert_int_equal(ev->u.clock_sync.device, 3);
    assert_true(ev->u.clock_sync.trace_ns == 12 && ev->u.clock_sync.other_ns == INT64_MIN);

    ev = rd_next(&x, TRC_EV_LOSS);
    assert_int_equal(ev->u.loss.kind, TRC_LOSS_GPU_DROPPED);
    assert_true(ev->u.loss.count == UINT64_MAX);
    assert_int_equal(ev->u.loss.from_reader, 0);
    assert_string_equal(ev->u.loss.detail, "cupti buffer full");
    assert_int_not_equal(ev->u.loss.thread, 0);

    ev = rd_next(&x, TRC_EV_PROCESS_EXIT);
    assert_true(ev->u.process_exit.time_ns == INT64_MAX);
    assert_int_equal(ev->u.process_exit.exit_code, INT32_MIN);
    ev = rd_next(&x, TRC_EV_PROCESS_EXIT);
    assert_int_equal(ev->u.process_exit.signal, 9);

    ev = rd_next(&x, TRC_EV_SEGMENT_END);
    assert_true(ev->u.segment_end.end_ns == INT64_MIN);
    assert_int_equal(ev->u.segment_end.samples, 1);
    assert_int_equal(ev->u.segment_end.threads, 1);
    assert_int_equal(ev->u.segment_end.processes, 1);
    assert_int_equal(ev->u.segment_end.gpu_activities, 4);
    assert_int_equal(ev->u.segment_end.api_calls, 1);
    assert_true(ev->u.segment_end.lost_gpu_records == UINT64_MAX);
    assert_int_equal(trc_reader_next(x.r, &ev), TRC_ERR_EOF);
    assert_int_equal(trc_reader_next(x.r, &ev), TRC_ERR_EOF);
    {
        trc_reader_stats rs;
        trc_reader_get_stats(x.r, &rs);
        assert_true(rs.first_ns == INT64_MIN && rs.last_ns == INT64_MAX);
        assert_int_equal(rs.bytes, b.len);
        assert_int_equal(rs.segments, 1);
        assert_int_equal(rs.losses, 1);
        assert_int_equal(rs.damaged_chunks, 0);
    }
    trc_reader_free(x.r);
    tb_buf_free(&b);
}

static void test_strings(void **state)
{
    tb_buf b = { 0 };
    trc_writer *w = open_mem(&b, 0, 6);
    char *big = malloc(65536 + 1);
    uint32_t id, id2, e, th, fr, stk;
    rd x;
    const trc_event *ev;
    const trc_frame *f;
    size_t i;
    (void)state;
    for (i = 0; i < 65536; i++)
        big[i] = (char)(0x20 + i % 90);
    big[65536] = '\0';
    assert_int_equal(trc_writer_string(w, "", 0, &e), TRC_OK);
    assert_int_equal(e, 0);
    assert_int_equal(trc_writer_string(w, big, 65536, &id), TRC_OK);
    assert_int_equal(trc_writer_string(w, big, 65536, &id2), TRC_OK);
    assert_int_equal(id, id2);                  /* deduplicated */
    assert_int_equal(trc_writer_string(w, "a\0b", 3, &id2), TRC_ERR_ARG);
    assert_int_equal(trc_writer_thread(w, 1, 1, NULL, &th), TRC_OK);
    assert_int_equal(trc_writer_frame(w, TRC_FRAME_PYTHON, big, "\xe2\x9c\x93.py", 1, 1, &fr), TRC_OK);
    assert_int_equal(trc_writer_stack(w, 0, fr, &stk), TRC_OK);
    assert_int_equal(trc_writer_sample(w, 5, th, stk, 0, 0), TRC_OK);
    assert_int_equal(trc_writer_close(w, 6), TRC_OK);
    rd_open(&x, &b);
    ev = rd_next(&x, TRC_EV_THREAD);
    assert_string_equal(ev->u.thread->name, "");
    ev = rd_next(&x, TRC_EV_SAMPLE);
    f = trc_reader_frame(x.r, trc_reader_stack(x.r, ev->u.sample.stack)->frame);
    assert_int_equal(strlen(f->function), 65536);
    assert_memory_equal(f->function, big, 65536);
    assert_string_equal(f->file, "\xe2\x9c\x93.py");
    trc_reader_free(x.r);
    tb_buf_free(&b);
    free(big);
}

static void test_repeat_folding(void **state)
{
    tb_buf b = { 0 };
    trc_writer *w = open_mem(&b, 0, 6);
    uint32_t t1, t2, fr, s1, s2;
    tb_result res;
    size_t i;
    const char *want[] = {
        /* 5 identical samples of t1, interleaved with t2 */
        "SAMPLE t=100 thr=1/2 flags=5 w=1000000 n=1 span=0 f@x.py:1/1/k0",
        "SAMPLE t=1000 thr=1/1 flags=1 w=1000000 n=5 span=4000 f@x.py:1/1/k0",
        /* flags differ -> new run */
        "SAMPLE t=6000 thr=1/1 flags=3 w=1000000 n=1 span=0 f@x.py:1/1/k0",
        /* weight differs */
        "SAMPLE t=7000 thr=1/1 flags=3 w=2000000 n=3 span=1500 f@x.py:1/1/k0",
        /* time goes back: not folded */
        "SAMPLE t=8400 thr=1/1 flags=3 w=2000000 n=1 span=0 f@x.py:1/1/k0",
        /* at close, pending runs in the order their threads joined the
         * pending list: t2 (since t=100) before t1 */
        "SAMPLE t=200 thr=1/2 flags=5 w=1000000 n=2 span=20000 -",
        /* stack differs; explicit weight equal to the period is the default */
        "SAMPLE t=9000 thr=1/1 flags=3 w=1000000 n=3 span=2 f@x.py:1/1/k0;g@x.py:2/2/k0",
    };
    (void)state;
    assert_int_equal(trc_writer_thread(w, 1, 1, "a", &t1), TRC_OK);
    assert_int_equal(trc_writer_thread(w, 1, 2, "b", &t2), TRC_OK);
    assert_int_equal(trc_writer_frame(w, TRC_FRAME_PYTHON, "f", "x.py", 1, 1, &fr), TRC_OK);
    assert_int_equal(trc_writer_stack(w, 0, fr, &s1), TRC_OK);
    assert_int_equal(trc_writer_frame(w, TRC_FRAME_PYTHON, "g", "x.py", 2, 2, &fr), TRC_OK);
    assert_int_equal(trc_writer_stack(w, s1, fr, &s2), TRC_OK);
    assert_int_equal(trc_writer_sample(w, 100, t2, s1, 5, 0), TRC_OK);
    for (i = 0; i < 5; i++) {
        assert_int_equal(trc_writer_sample(w, 1000 + 1000 * (int64_t)i, t1, s1, 1, 0), TRC_OK);
        if (i == 2)
            assert_int_equal(trc_writer_sample(w, 200, t2, 0, 5, 0), TRC_OK);
    }
    assert_int_equal(trc_writer_sample(w, 6000, t1, s1, 3, 0), TRC_OK);
    assert_int_equal(trc_writer_sample(w, 7000, t1, s1, 3, 2000000), TRC_OK);
    assert_int_equal(trc_writer_sample(w, 8000, t1, s1, 3, 2000000), TRC_OK);
    assert_int_equal(trc_writer_sample(w, 8500, t1, s1, 3, 2000000), TRC_OK);
    assert_int_equal(trc_writer_sample(w, 8400, t1, s1, 3, 2000000), TRC_OK);
    assert_int_equal(trc_writer_sample(w, 9000, t1, s2, 3 | 0xf0, 1000000), TRC_OK);
    assert_int_equal(trc_writer_sample(w, 9001, t1, s2, 3, 0), TRC_OK);
    assert_int_equal(trc_writer_sample(w, 9002, t1, s2, 3, 1000000), TRC_OK);
    assert_int_equal(trc_writer_sample(w, 20200, t2, 0, 5, 0), TRC_OK);
    assert_int_equal(trc_writer_close(w, 30000), TRC_OK);
    tb_read_mem(b.p, b.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_EOF);
    {
        size_t k = 0;
        for (i = 0; i < res.n; i++) {
            if (strncmp(res.lines[i], "SAMPLE", 6) != 0)
                continue;
            assert_true(k < sizeof want / sizeof want[0]);
            assert_string_equal(res.lines[i], want[k]);
            k++;
        }
        assert_int_equal(k, sizeof want / sizeof want[0]);
    }
    assert_int_equal(res.samples, 1 + 5 + 1 + 3 + 1 + 3 + 2);
    tb_result_free(&res);
    tb_buf_free(&b);
}

static void test_thread_rename(void **state)
{
    tb_buf b = { 0 };
    trc_writer *w = open_mem(&b, 0, 6);
    uint32_t t, t2;
    rd x;
    const trc_event *ev;
    const trc_thread *first;
    (void)state;
    assert_int_equal(trc_writer_thread(w, 10, 11, "old", &t), TRC_OK);
    assert_int_equal(trc_writer_sample(w, 1, t, 0, 0, 0), TRC_OK);
    assert_int_equal(trc_writer_thread(w, 10, 11, "old", &t2), TRC_OK);   /* no-op */
    assert_int_equal(t2, t);
    assert_int_equal(trc_writer_thread(w, 10, 11, "new name", &t2), TRC_OK);
    assert_int_equal(t2, t);
    assert_int_equal(trc_writer_sample(w, 2, t, 0, 1, 0), TRC_OK);
    assert_int_equal(trc_writer_close(w, 3), TRC_OK);
    rd_open(&x, &b);
    ev = rd_next(&x, TRC_EV_THREAD);
    first = ev->u.thread;
    assert_string_equal(first->name, "old");
    ev = rd_next(&x, TRC_EV_THREAD);
    assert_ptr_equal(ev->u.thread, first);            /* same thread, renamed */
    assert_string_equal(ev->u.thread->name, "new name");
    assert_int_equal(trc_reader_thread_count(x.r), 1);
    ev = rd_next(&x, TRC_EV_SAMPLE);
    assert_int_equal(ev->u.sample.thread, first->id);
    trc_reader_free(x.r);
    tb_buf_free(&b);
}

static void test_negative_deltas_and_stats(void **state)
{
    tb_buf b = { 0 };
    trc_writer *w = open_mem(&b, 64, 6);       /* tiny chunks */
    int64_t times[] = { 1000000, -5, 999, INT64_MAX / 2, -(INT64_MAX / 2), 0, 7 };
    uint32_t t;
    rd x;
    const trc_event *ev;
    trc_reader_stats rs;
    size_t i;
    (void)state;
    assert_int_equal(trc_writer_thread(w, 1, 1, "a", &t), TRC_OK);
    for (i = 0; i < sizeof times / sizeof times[0]; i++) {
        trc_marker m = { TRC_MARK_INSTANT, t, 1, times[i], times[i], "m", "user", 0, i };
        assert_int_equal(trc_writer_marker(w, &m), TRC_OK);
    }
    assert_int_equal(trc_writer_close(w, 100), TRC_OK);
    rd_open(&x, &b);
    for (i = 0; i < sizeof times / sizeof times[0]; i++) {
        ev = rd_next(&x, TRC_EV_MARKER);
        assert_true(ev->u.marker.start_ns == times[i]);
        assert_true(ev->u.marker.id == i);
    }
    rd_next(&x, TRC_EV_SEGMENT_END);
    trc_reader_get_stats(x.r, &rs);
    assert_true(rs.first_ns == -(INT64_MAX / 2));
    assert_true(rs.last_ns == INT64_MAX / 2);
    assert_true(rs.chunks >= 2);
    trc_reader_free(x.r);
    tb_buf_free(&b);
}

/* The same calls with different chunking, compression and read sizes
 * give the same events. */
static void test_chunking_and_levels(void **state)
{
    tb_result ref, res;
    uint32_t chunk_sizes[] = { 0, 100, 1000, 5000 };
    int levels[] = { 0, 1, 6, 9 };
    size_t i, j, k;
    tb_buf b = { 0 };
    (void)state;
    assert_int_equal(tb_standard_trace(&b, 2000, 0, 6), TRC_OK);
    tb_read_mem(b.p, b.len, 0, &ref);
    assert_int_equal(ref.status, TRC_ERR_EOF);
    assert_int_equal(ref.losses, 0);
    assert_int_equal(ref.samples, 2000);
    assert_int_equal(ref.threads, 3);
    assert_int_equal(ref.stacks, 6);
    tb_buf_free(&b);
    for (i = 0; i < sizeof chunk_sizes / sizeof chunk_sizes[0]; i++) {
        for (j = 0; j < sizeof levels / sizeof levels[0]; j++) {
            assert_int_equal(tb_standard_trace(&b, 2000, chunk_sizes[i], levels[j]), TRC_OK);
            tb_read_mem(b.p, b.len, j == 2 ? 1 : 0, &res);
            assert_int_equal(res.status, TRC_ERR_EOF);
            assert_int_equal(res.losses, 0);
            /* runs are cut at chunk ends, so compare samples by count and
             * every non-sample event line by line */
            assert_int_equal(res.samples, ref.samples);
            {
                size_t a = 0, c = 0;
                while (a < ref.n && c < res.n) {
                    if (strncmp(ref.lines[a], "SAMPLE", 6) == 0) {
                        a++;
                        continue;
                    }
                    if (strncmp(res.lines[c], "SAMPLE", 6) == 0) {
                        c++;
                        continue;
                    }
                    assert_string_equal(res.lines[c], ref.lines[a]);
                    a++;
                    c++;
                }
            }
            if (chunk_sizes[i] == 100)
                assert_true(res.stats.chunks > 50);
            tb_result_free(&res);
            tb_buf_free(&b);
        }
    }
    /* identical options -> identical bytes, and identical lines */
    {
        tb_buf b2 = { 0 };
        assert_int_equal(tb_standard_trace(&b, 500, 700, 6), TRC_OK);
        assert_int_equal(tb_standard_trace(&b2, 500, 700, 6), TRC_OK);
        assert_int_equal(b.len, b2.len);
        assert_memory_equal(b.p, b2.p, b.len);
        tb_buf_free(&b2);
        tb_read_mem(b.p, b.len, 0, &res);
        for (k = 1; k < res.n; k++)
            assert_non_null(res.lines[k]);
        tb_result_free(&res);
        tb_buf_free(&b);
    }
    tb_result_free(&ref);
}

static void test_flush_interval(void **state)
{
    tb_buf b = { 0 };
    trc_writer_options o;
    trc_status st;
    trc_writer *w;
    uint32_t t;
    tb_result res;
    int64_t now;
    (void)state;
    memset(&o, 0, sizeof o);
    o.start_ns = 1;
    o.wall_ns = 1;
    o.host = "h";
    o.flush_interval_ns = 10000000;    /* 10 ms */
    o.compression_level = -1;
    w = trc_writer_open_callback(tb_write, &b, &o, &st);
    assert_non_null(w);
    assert_int_equal(trc_writer_thread(w, 1, 1, "a", &t), TRC_OK);
    /* a thread idle in one stack for 1 s: its pending run must still reach
     * the output within about one interval of ticks */
    for (now = 0; now <= 1000000000; now += 1000000) {
        assert_int_equal(trc_writer_sample(w, now, t, 0, 0, 0), TRC_OK);
        assert_int_equal(trc_writer_tick(w, now), TRC_OK);
        if (now == 25000000)
            assert_true(trc_writer_bytes(w) > 0);
    }
    /* tick alone closes a chunk with only definitions in it */
    {
        uint64_t before = trc_writer_bytes(w);
        uint32_t id;
        assert_int_equal(trc_writer_flush(w), TRC_OK);
        before = trc_writer_bytes(w);
        assert_int_equal(trc_writer_string(w, "def only", 8, &id), TRC_OK);
        assert_int_equal(trc_writer_tick(w, 2000000000), TRC_OK);
        assert_true(trc_writer_bytes(w) == before);
        assert_int_equal(trc_writer_tick(w, 2020000000), TRC_OK);
        assert_true(trc_writer_bytes(w) > before);
        /* flush with nothing open writes nothing */
        before = trc_writer_bytes(w);
        assert_int_equal(trc_writer_flush(w), TRC_OK);
        assert_true(trc_writer_bytes(w) == before);
    }
    assert_int_equal(trc_writer_close(w, 0), TRC_OK);
    tb_read_mem(b.p, b.len, 0, &res);
    assert_int_equal(res.samples, 1001);
    assert_true(res.stats.chunks >= 90);
    assert_int_equal(res.losses, 0);
    tb_result_free(&res);
    tb_buf_free(&b);
}

static void test_write_errors(void **state)
{
    tb_buf b = { 0 };
    trc_writer *w;
    uint32_t t, id;
    int i;
    trc_status st = TRC_OK;
    (void)state;
    b.fail_after = 1;      /* the first chunk goes out, then EPIPE */
    w = open_mem(&b, 200, 6);
    assert_int_equal(trc_writer_thread(w, 1, 1, "a", &t), TRC_OK);
    for (i = 0; i < 1000 && st == TRC_OK; i++)
        st = trc_writer_sample(w, i * 1000, t, 0, (uint32_t)i & 1, 0);
    assert_int_equal(st, TRC_ERR_IO);
    assert_int_equal(errno, EPIPE);
    /* sticky: every later call reports it, arguments or not */
    assert_int_equal(trc_writer_string(w, "x", 1, &id), TRC_ERR_IO);
    assert_int_equal(trc_writer_sample(w, 1, t, 0, 0, 0), TRC_ERR_IO);
    assert_int_equal(trc_writer_flush(w), TRC_ERR_IO);
    assert_int_equal(trc_writer_close(w, 1), TRC_ERR_IO);
    tb_buf_free(&b);

    /* failure in close itself */
    b.fail_after = 0;
    w = open_mem(&b, 0, 6);
    b.fail_after = 1;
    b.writes = 1;
    assert_int_equal(trc_writer_close(w, 1), TRC_ERR_IO);
    tb_buf_free(&b);
}

static void test_writer_arguments(void **state)
{
    tb_buf b = { 0 };
    trc_writer *w = open_mem(&b, 0, 6);
    trc_writer_options o;
    trc_status st;
    uint32_t t, fr, s, id;
    tb_result res;
    (void)state;
    assert_int_equal(trc_writer_thread(w, 1, 1, "a", &t), TRC_OK);
    assert_int_equal(trc_writer_sample(w, 1, 0, 0, 0, 0), TRC_ERR_ARG);
    assert_int_equal(trc_writer_sample(w, 1, t + 1, 0, 0, 0), TRC_ERR_ARG);
    assert_int_equal(trc_writer_sample(w, 1, t, 5, 0, 0), TRC_ERR_ARG);
    assert_int_equal(trc_writer_stack(w, 0, 1, &s), TRC_ERR_ARG);
    assert_int_equal(trc_writer_frame(w, (trc_frame_kind)9, "f", "", 0, 0, &fr), TRC_ERR_ARG);
    assert_int_equal(trc_writer_frame(w, TRC_FRAME_PYTHON, "f", "", 0, 0, &fr), TRC_OK);
    assert_int_equal(trc_writer_stack(w, 2, fr, &s), TRC_ERR_ARG);
    assert_int_equal(trc_writer_counter(w, 1, 0, 0), TRC_ERR_ARG);
    {
        trc_gpu_kernel k;
        memset(&k, 0, sizeof k);
        k.start_ns = 10;
        k.end_ns = 9;
        assert_int_equal(trc_writer_gpu_kernel(w, &k), TRC_ERR_ARG);
    }
    assert_int_equal(trc_writer_string(w, NULL, 3, &id), TRC_ERR_ARG);
    /* still usable */
    assert_int_equal(trc_writer_sample(w, 1, t, 0, 0, 0), TRC_OK);
    assert_int_equal(trc_writer_close(w, 2), TRC_OK);
    tb_read_mem(b.p, b.len, 0, &res);
    assert_int_equal(res.samples, 1);
    assert_int_equal(res.losses, 0);
    tb_result_free(&res);
    tb_buf_free(&b);
    /* bad options */
    memset(&o, 0, sizeof o);
    o.compression_level = 10;
    assert_null(trc_writer_open_callback(tb_write, &b, &o, &st));
    assert_int_equal(st, TRC_ERR_ARG);
    assert_null(trc_writer_open_callback(NULL, &b, NULL, &st));
    assert_int_equal(st, TRC_ERR_ARG);
    assert_null(trc_writer_open_fd(-1, NULL, &st));
    assert_int_equal(trc_writer_close(NULL, 0), TRC_ERR_ARG);
    /* NULL options: all defaults (host from gethostname, level 6) */
    w = trc_writer_open_callback(tb_write, &b, NULL, &st);
    assert_non_null(w);
    assert_int_equal(trc_writer_close(w, 0), TRC_OK);
    tb_read_mem(b.p, b.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_non_null(strstr(res.lines[0], "rec=libtrc " TRC_VERSION_STRING));
    tb_result_free(&res);
    tb_buf_free(&b);
}

static void test_fds(void **state)
{
    char path[] = "/tmp/trc-test-XXXXXX";
    int fd = mkstemp(path), pfd[2];
    trc_writer *w;
    trc_reader *r;
    trc_status st;
    const trc_event *ev;
    uint32_t t;
    int n = 0;
    (void)state;
    assert_true(fd >= 0);
    w = trc_writer_open_fd(fd, NULL, &st);
    assert_non_null(w);
    assert_int_equal(trc_writer_thread(w, 1, 1, "a", &t), TRC_OK);
    assert_int_equal(trc_writer_sample(w, 5, t, 0, 0, 0), TRC_OK);
    assert_int_equal(trc_writer_close(w, 9), TRC_OK);
    close(fd);
    r = trc_reader_open_path(path, &st);
    assert_non_null(r);
    assert_string_equal(trc_reader_name(r), path);
    while (trc_reader_next(r, &ev) == TRC_OK)
        n += ev->type == TRC_EV_SAMPLE;
    assert_int_equal(n, 1);
    trc_reader_free(r);
    unlink(path);
    assert_null(trc_reader_open_path(path, &st));
    assert_int_equal(st, TRC_ERR_IO);

    /* through a pipe, borrowed fd; a closed read end gives EPIPE */
    assert_int_equal(pipe(pfd), 0);
    w = trc_writer_open_fd(pfd[1], NULL, &st);
    assert_non_null(w);
    assert_int_equal(trc_writer_close(w, 1), TRC_OK);
    close(pfd[1]);
    r = trc_reader_open_fd(pfd[0], "<stdin>", &st);
    assert_non_null(r);
    assert_int_equal(trc_reader_next(r, &ev), TRC_OK);
    assert_int_equal(ev->type, TRC_EV_SEGMENT);
    trc_reader_free(r);
    close(pfd[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_types),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_repeat_folding),
        cmocka_unit_test(test_thread_rename),
        cmocka_unit_test(test_negative_deltas_and_stats),
        cmocka_unit_test(test_chunking_and_levels),
        cmocka_unit_test(test_flush_interval),
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_writer_arguments),
        cmocka_unit_test(test_fds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
