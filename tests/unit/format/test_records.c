/*
 * test_records.c — record framing and bodies (spec §5, §7): every
 * record type encodes and decodes to the same struct, with extreme
 * values; every shorter body is corrupt; a longer body is fine (extra
 * bytes ignored); framing errors; lengths needing multi-byte varints.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "format/limits.h"
#include "format/record.h"
#include "format/records.h"
#include "format/varint.h"

/* One filled body per known type, with extreme values. */
static void fill(uint64_t type, trcf_body *b, trc_kv *kv)
{
    int i;

    memset(b, 0, sizeof *b);
    switch (type) {
    case TRCF_SEGMENT_HEADER:
        b->seg.major = 1;
        b->seg.minor = 7;
        b->seg.clock = 1;
        b->seg.start_ns = INT64_MIN;
        b->seg.wall_ns = INT64_MAX;
        b->seg.period_ns = UINT64_MAX;
        b->seg.recorder.p = "trec 0.1.0";
        b->seg.recorder.len = 10;
        b->seg.host.p = "h\xc3\xa9";
        b->seg.host.len = 3;
        b->seg.command_line.p = "";
        b->seg.n_meta = 2;
        kv[0].key = "k";
        kv[0].value = "";
        kv[1].key = "";
        kv[1].value = "v";
        b->seg.kv = kv;
        break;
    case TRCF_STRING:
        b->string.id = TRC_MAX_IDS;
        b->string.s.p = "\xe6\x97\xa5\xe6\x9c\xac";
        b->string.s.len = 6;
        break;
    case TRCF_FRAME:
        b->frame.id = 1;
        b->frame.kind = 3;
        b->frame.function = UINT64_MAX;
        b->frame.file = 0;
        b->frame.line = UINT32_MAX;
        b->frame.first_line = 0;
        break;
    case TRCF_STACK:
        b->stack.id = 3;
        b->stack.parent = 2;
        b->stack.frame = 1;
        break;
    case TRCF_PROCESS:
        b->process.pid = INT64_MIN;
        b->process.ppid = -1;
        b->process.executable = 5;
        b->process.start_ns = INT64_MAX;
        b->process.rank = 3;   /* one byte each, see test_short_and_long_bodies */
        b->process.label = 4;
        b->process.layout = 6;
        break;
    case TRCF_THREAD:
        b->thread.id = 9;
        b->thread.pid = INT64_MAX;
        b->thread.tid = INT64_MIN;
        b->thread.name = 1;
        break;
    case TRCF_SAMPLE:
        b->sample.time = -1;
        b->sample.thread = 1;
        b->sample.stack = 0;
        b->sample.flags = 0x7 | TRCF_SAMPLE_HAS_WEIGHT | TRCF_SAMPLE_REPEAT;
        b->sample.weight = UINT64_MAX;
        b->sample.count = UINT64_MAX;
        b->sample.span = UINT64_MAX;
        break;
    case TRCF_COUNTER_DEF:
        b->counter_def.id = 2;
        b->counter_def.name = 3;
        b->counter_def.unit = 4;
        b->counter_def.pid = -1;
        b->counter_def.device = INT64_MIN;
        break;
    case TRCF_COUNTER:
        b->counter.counter = 2;
        b->counter.time = INT64_MIN;
        b->counter.value = -1.5e300;
        break;
    case TRCF_GPU_DEVICE:
        b->gpu_device.device = UINT32_MAX;
        b->gpu_device.name = 1;
        for (i = 0; i < 16; i++)
            b->gpu_device.uuid[i] = (uint8_t)(0xf0 + i);
        b->gpu_device.memory_bytes = UINT64_MAX;
        b->gpu_device.cc_major = 9;
        break;
    case TRCF_GPU_KERNEL:
    case TRCF_GPU_MEMCPY:
    case TRCF_GPU_MEMSET:
    case TRCF_GPU_SYNC:
        b->kernel.w.pid = -7;
        b->kernel.w.device = 3;
        b->kernel.w.context = UINT64_MAX;
        b->kernel.w.stream = 1;
        b->kernel.w.correlation = 1u << 31;
        b->kernel.w.start = INT64_MAX - 10;
        b->kernel.w.end = INT64_MAX;
        if (type == TRCF_GPU_KERNEL) {
            b->kernel.name = 8;
            for (i = 0; i < 3; i++) {
                b->kernel.grid[i] = (uint64_t)i << 40;
                b->kernel.block[i] = 1000 + (uint64_t)i;
            }
            b->kernel.registers = 255;
            b->kernel.dynamic_smem = 1 << 20;
            b->kernel.graph = 5;       /* one byte each, see test_short_and_long_bodies */
            b->kernel.graph_node = 9;
        } else if (type == TRCF_GPU_MEMCPY) {
            b->memcpy.bytes = UINT64_MAX;
            b->memcpy.copy_kind = 10;
            b->memcpy.src_kind = 2;
            b->memcpy.dst_kind = 3;
            b->memcpy.dst_device = 4;
        } else if (type == TRCF_GPU_MEMSET) {
            b->memset.bytes = 1;
            b->memset.value = 0xffffffff;
            b->memset.mem_kind = 7;
        } else {
            b->sync.sync_kind = 4;
        }
        break;
    case TRCF_API_CALL:
        b->api.thread = 0;
        b->api.start = INT64_MIN;
        b->api.end = INT64_MAX;     /* a duration of 2^64 - 1 */
        b->api.domain = 1;
        b->api.name = 2;
        b->api.correlation = 3;
        b->api.stack = 4;
        b->api.result = INT64_MIN;
        b->api.flags = 3;
        b->api.capture = 7;            /* one byte, see test_short_and_long_bodies */
        b->api.graph = 11;             /* one byte each (1.4) */
        b->api.graph_exec = 12;
        break;
    case TRCF_MARKER:
        b->marker.kind = 3;
        b->marker.thread = 1;
        b->marker.pid = 0;
        b->marker.start = 5;
        b->marker.end = 5;
        b->marker.name = 1;
        b->marker.domain = 2;
        b->marker.color = 0xffffff;
        b->marker.id = UINT64_MAX;
        break;
    case TRCF_CLOCK_SYNC:
        b->clock_sync.domain = 3;
        b->clock_sync.device = -1;
        b->clock_sync.time = 0;
        b->clock_sync.other_ns = INT64_MIN;
        break;
    case TRCF_LOSS:
        b->loss.kind = 4;
        b->loss.count = UINT64_MAX;
        b->loss.pid = -1;
        b->loss.start = 0;
        b->loss.end = 0;
        b->loss.detail = 3;
        break;
    case TRCF_PROCESS_EXIT:
        b->process_exit.pid = 1;
        b->process_exit.time = -5;
        b->process_exit.exit_code = -1;
        b->process_exit.signal = 9;
        break;
    case TRCF_SEGMENT_END:
        b->segment_end.end = INT64_MAX;
        b->segment_end.samples = UINT64_MAX;
        b->segment_end.lost_gpu_records = 1;
        break;
    case TRCF_GPU_CONTEXT:
        b->gpu_context.pid = INT64_MIN;
        b->gpu_context.device = UINT32_MAX;
        b->gpu_context.context = UINT64_MAX;
        break;
    case TRCF_GPU_STREAM:
        b->gpu_stream.pid = 4242;
        b->gpu_stream.device = 1;
        b->gpu_stream.context = 2;
        b->gpu_stream.stream = UINT64_MAX;
        b->gpu_stream.priority = -5;
        b->gpu_stream.flags = 3;
        b->gpu_stream.name = 2;
        break;
    }
}

/* Field-wise comparison: encode both and compare bytes (the encoder is
 * deterministic), plus a few direct checks of decoded values. */
static void encode(uint64_t type, const trcf_body *b, trcf_buf *out)
{
    int64_t tcur = 1000;
    out->len = 0;
    assert_int_equal(trcf_encode(out, type, &tcur, b), TRC_OK);
}

static void test_every_type_roundtrip(void **state)
{
    uint64_t type;
    trcf_buf a = TRCF_BUF_INIT, again = TRCF_BUF_INIT;
    trc_kv kv[2];
    (void)state;
    for (type = 1; type <= TRCF_TYPE_MAX; type++) {
        trcf_body in, out;
        trcf_rec_iter it;
        trcf_record rec;
        const char *why = NULL;
        int64_t tcur = 1000;

        fill(type, &in, kv);
        encode(type, &in, &a);
        trcf_rec_iter_init(&it, a.data, a.len);
        assert_int_equal(trcf_record_next(&it, &rec, &why), TRC_OK);
        assert_true(rec.type == type);
        assert_int_equal(rec.must_understand, 0);
        assert_int_equal(trcf_record_next(&it, &rec, &why), TRC_ERR_EOF);
        trcf_rec_iter_init(&it, a.data, a.len);
        trcf_record_next(&it, &rec, &why);
        assert_int_equal(trcf_decode(type, rec.body, rec.len, &tcur, &out, &why), TRC_OK);
        if (type == TRCF_SEGMENT_HEADER) {
            trcf_cur c;
            trcf_str k, v;
            assert_int_equal(out.seg.n_meta, 2);
            trcf_meta_begin(&out.seg, &c);
            trcf_meta_next(&c, &k, &v);
            assert_int_equal(k.len, 1);
            assert_int_equal(v.len, 0);
            trcf_meta_next(&c, &k, &v);
            assert_int_equal(k.len, 0);
            assert_memory_equal(v.p, "v", 1);
            out.seg.kv = kv;
        }
        encode(type, &out, &again);
        assert_int_equal(again.len, a.len);
        assert_memory_equal(again.data, a.data, a.len);
    }
    trcf_buf_free(&a);
    trcf_buf_free(&again);
}

static void test_extreme_values_decoded(void **state)
{
    trcf_buf a = TRCF_BUF_INIT;
    trcf_body in, out;
    trcf_rec_iter it;
    trcf_record rec;
    const char *why;
    int64_t tcur = 1000;
    trc_kv kv[2];
    (void)state;
    fill(TRCF_API_CALL, &in, kv);
    encode(TRCF_API_CALL, &in, &a);
    trcf_rec_iter_init(&it, a.data, a.len);
    trcf_record_next(&it, &rec, &why);
    assert_int_equal(trcf_decode(TRCF_API_CALL, rec.body, rec.len, &tcur, &out, &why), TRC_OK);
    assert_true(out.api.start == INT64_MIN);
    assert_true(out.api.end == INT64_MAX);
    assert_true(out.api.result == INT64_MIN);
    assert_true(tcur == INT64_MIN);       /* the cursor moved to the time field */
    fill(TRCF_SAMPLE, &in, kv);
    a.len = 0;
    tcur = INT64_MAX;
    assert_int_equal(trcf_encode_sample(&a, &tcur, &in.sample), TRC_OK);
    tcur = INT64_MAX;
    trcf_rec_iter_init(&it, a.data, a.len);
    trcf_record_next(&it, &rec, &why);
    assert_int_equal(trcf_decode_sample(rec.body, rec.len, &tcur, &out.sample, &why), TRC_OK);
    assert_true(out.sample.time == -1);
    assert_true(out.sample.count == UINT64_MAX && out.sample.span == UINT64_MAX);
    assert_true(out.sample.weight == UINT64_MAX);
    trcf_buf_free(&a);
}

static void test_short_and_long_bodies(void **state)
{
    uint64_t type;
    trcf_buf a = TRCF_BUF_INIT;
    trc_kv kv[2];
    uint8_t body[512];
    (void)state;
    for (type = 1; type <= TRCF_TYPE_MAX; type++) {
        trcf_body in, out;
        trcf_rec_iter it;
        trcf_record rec;
        const char *why;
        size_t cut;
        int64_t tcur;

        fill(type, &in, kv);
        encode(type, &in, &a);
        trcf_rec_iter_init(&it, a.data, a.len);
        trcf_record_next(&it, &rec, &why);
        assert_true(rec.len < sizeof body - 8);
        memcpy(body, rec.body, rec.len);
        /* every proper prefix of the body is corrupt (never a crash),
         * except one that ends where a minor version's trailing fields
         * begin: PROCESS's rank and label (1.1) and layout (1.2),
         * GPU_KERNEL's graph and graph_node and API_CALL's capture (1.3),
         * API_CALL's graph and graph_exec (1.4) take their defaults */
        size_t v10 = type == TRCF_PROCESS      ? rec.len - 3
                     : type == TRCF_GPU_KERNEL ? rec.len - 2
                     : type == TRCF_API_CALL   ? rec.len - 3
                                               : rec.len;
        for (cut = 0; cut < v10; cut++) {
            tcur = 0;
            why = NULL;
            assert_int_not_equal(trcf_decode(type, body, cut, &tcur, &out, &why), TRC_OK);
            assert_non_null(why);
        }
        if (type == TRCF_PROCESS) {
            tcur = 0;
            assert_int_equal(trcf_decode(type, body, v10, &tcur, &out, &why), TRC_OK);
            assert_true(out.process.rank == -1 && out.process.label == 0);
            assert_true(out.process.layout == 0);
            assert_int_equal(trcf_decode(type, body, v10 + 1, &tcur, &out, &why), TRC_OK);
            assert_true(out.process.rank == 3 && out.process.label == 0);
            assert_int_equal(trcf_decode(type, body, v10 + 2, &tcur, &out, &why), TRC_OK);
            assert_true(out.process.label == 4 && out.process.layout == 0); /* a 1.1 body */
            assert_int_equal(trcf_decode(type, body, rec.len, &tcur, &out, &why), TRC_OK);
            assert_true(out.process.layout == 6);
        }
        if (type == TRCF_GPU_KERNEL) {   /* a 1.2 body, then half a 1.3 one */
            tcur = 0;
            assert_int_equal(trcf_decode(type, body, v10, &tcur, &out, &why), TRC_OK);
            assert_true(out.kernel.graph == 0 && out.kernel.graph_node == 0);
            assert_true(out.kernel.dynamic_smem == 1 << 20);
            tcur = 0;
            assert_int_equal(trcf_decode(type, body, v10 + 1, &tcur, &out, &why), TRC_OK);
            assert_true(out.kernel.graph == 5 && out.kernel.graph_node == 0);
            tcur = 0;
            assert_int_equal(trcf_decode(type, body, rec.len, &tcur, &out, &why), TRC_OK);
            assert_true(out.kernel.graph == 5 && out.kernel.graph_node == 9);
        }
        if (type == TRCF_API_CALL) {
            tcur = 0;
            assert_int_equal(trcf_decode(type, body, v10, &tcur, &out, &why), TRC_OK);
            assert_true(out.api.flags == 3 && out.api.capture == 0 && out.api.graph == 0);
            tcur = 0;   /* a 1.3 body, then half a 1.4 one */
            assert_int_equal(trcf_decode(type, body, v10 + 1, &tcur, &out, &why), TRC_OK);
            assert_true(out.api.capture == 7 && out.api.graph == 0 && out.api.graph_exec == 0);
            tcur = 0;
            assert_int_equal(trcf_decode(type, body, v10 + 2, &tcur, &out, &why), TRC_OK);
            assert_true(out.api.graph == 11 && out.api.graph_exec == 0);
            tcur = 0;
            assert_int_equal(trcf_decode(type, body, rec.len, &tcur, &out, &why), TRC_OK);
            assert_true(out.api.capture == 7 && out.api.graph == 11 && out.api.graph_exec == 12);
        }
        /* trailing bytes from a newer minor version are ignored */
        memcpy(body + rec.len, "\x01\x02\x03\xff\xff", 5);
        tcur = 1000;
        assert_int_equal(trcf_decode(type, body, rec.len + 5, &tcur, &out, &why), TRC_OK);
    }
    trcf_buf_free(&a);
}

static void test_framing(void **state)
{
    trcf_rec_iter it;
    trcf_record rec;
    const char *why;
    /* tag, len 3, but only 2 body bytes */
    const uint8_t past_end[] = { 0x0e, 0x03, 0x00, 0x01 };
    /* tag varint cut */
    const uint8_t cut_tag[] = { 0x0e, 0x00, 0x80 };
    /* private type 5000 with must-understand, empty body */
    uint8_t priv[8], *p = trcf_put_uv(priv, 5000u << 1 | 1);
    (void)state;
    *p++ = 0;
    trcf_rec_iter_init(&it, past_end, sizeof past_end);
    assert_int_equal(trcf_record_next(&it, &rec, &why), TRC_ERR_CORRUPT);
    assert_int_equal(rec.offset, 0);
    assert_int_equal(trcf_record_next(&it, &rec, &why), TRC_ERR_EOF);
    trcf_rec_iter_init(&it, cut_tag, sizeof cut_tag);
    assert_int_equal(trcf_record_next(&it, &rec, &why), TRC_OK);
    assert_int_equal(rec.len, 0);
    assert_int_equal(trcf_record_next(&it, &rec, &why), TRC_ERR_CORRUPT);
    assert_int_equal(rec.offset, 2);
    trcf_rec_iter_init(&it, priv, (size_t)(p - priv));
    assert_int_equal(trcf_record_next(&it, &rec, &why), TRC_OK);
    assert_true(rec.type == 5000);
    assert_int_equal(rec.must_understand, 1);
    assert_null(trcf_type_name(5000));
    assert_string_equal(trcf_type_name(7), "SAMPLE");
}

static void test_long_bodies_length_varint(void **state)
{
    /* strings of 0, 127, 128, 16383, 16384 and 1 MiB bytes: the length
     * varint grows and the body is moved after it */
    size_t lens[] = { 0, 100, 126, 127, 128, 200, 16383, 16384, TRC_MAX_STRING };
    char *s = malloc(TRC_MAX_STRING);
    trcf_buf a = TRCF_BUF_INIT;
    size_t i;
    (void)state;
    assert_non_null(s);
    for (i = 0; i < TRC_MAX_STRING; i++)
        s[i] = (char)('a' + i % 26);
    for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        trcf_body in, out;
        trcf_rec_iter it;
        trcf_record rec;
        const char *why;
        int64_t tcur = 0;
        a.len = 0;
        memset(&in, 0, sizeof in);
        in.string.id = 1;
        in.string.s.p = s;
        in.string.s.len = lens[i];
        assert_int_equal(trcf_encode(&a, TRCF_STRING, &tcur, &in), TRC_OK);
        trcf_rec_iter_init(&it, a.data, a.len);
        assert_int_equal(trcf_record_next(&it, &rec, &why), TRC_OK);
        assert_int_equal(trcf_decode(TRCF_STRING, rec.body, rec.len, &tcur, &out, &why), TRC_OK);
        assert_int_equal(out.string.s.len, lens[i]);
        assert_memory_equal(out.string.s.p, s, lens[i]);
        assert_int_equal(trcf_record_next(&it, &rec, &why), TRC_ERR_EOF);
    }
    /* over the limit: refused by the encoder */
    {
        trcf_body in;
        int64_t tcur = 0;
        memset(&in, 0, sizeof in);
        in.string.id = 1;
        in.string.s.p = s;
        in.string.s.len = TRC_MAX_STRING + 1;
        a.len = 0;
        assert_int_equal(trcf_encode(&a, TRCF_STRING, &tcur, &in), TRC_ERR_LIMIT);
        assert_int_equal(a.len, 0);
    }
    free(s);
    trcf_buf_free(&a);
}

static void test_encoder_refusals(void **state)
{
    trcf_buf a = TRCF_BUF_INIT;
    trcf_body b;
    int64_t tcur = 77;
    trc_kv kv[2];
    (void)state;
    fill(TRCF_GPU_KERNEL, &b, kv);
    b.kernel.w.end = b.kernel.w.start - 1;        /* negative duration */
    assert_int_equal(trcf_encode(&a, TRCF_GPU_KERNEL, &tcur, &b), TRC_ERR_ARG);
    assert_int_equal(a.len, 0);
    assert_true(tcur == 77);
    fill(TRCF_STRING, &b, kv);
    b.string.s.p = "a\0b";
    b.string.s.len = 3;
    assert_int_equal(trcf_encode(&a, TRCF_STRING, &tcur, &b), TRC_ERR_ARG);
    assert_int_equal(trcf_encode(&a, 0, &tcur, &b), TRC_ERR_ARG);
    assert_int_equal(trcf_encode(&a, TRCF_TYPE_MAX + 1, &tcur, &b), TRC_ERR_ARG);
    fill(TRCF_SEGMENT_HEADER, &b, kv);
    b.seg.n_meta = TRC_MAX_METADATA + 1;
    assert_int_equal(trcf_encode(&a, TRCF_SEGMENT_HEADER, &tcur, &b), TRC_ERR_LIMIT);
    assert_int_equal(a.len, 0);
    trcf_buf_free(&a);
}

static void test_decoder_value_checks(void **state)
{
    uint8_t body[64], *p;
    trcf_body out;
    const char *why;
    int64_t tcur = 0;
    (void)state;
    /* SAMPLE with REPEAT and count 1 is corrupt */
    p = body;
    p = trcf_put_sv(p, 0);
    *p++ = 1;
    *p++ = 0;
    p = trcf_put_uv(p, TRCF_SAMPLE_REPEAT);
    *p++ = 1;
    *p++ = 0;
    assert_int_equal(trcf_decode(TRCF_SAMPLE, body, (size_t)(p - body), &tcur, &out, &why), TRC_ERR_CORRUPT);
    /* SEGMENT_HEADER with n_meta over 4096 */
    p = body;
    *p++ = 1; *p++ = 0; *p++ = 1; *p++ = 0; *p++ = 0; *p++ = 0;
    *p++ = 0; *p++ = 0; *p++ = 0;
    p = trcf_put_uv(p, TRC_MAX_METADATA + 1);
    assert_int_equal(trcf_decode(TRCF_SEGMENT_HEADER, body, (size_t)(p - body), &tcur, &out, &why),
                     TRC_ERR_LIMIT);
    /* ... and a huge n_meta with no bytes behind it never loops long */
    assert_int_not_equal(trcf_decode(TRCF_SEGMENT_HEADER, body, 9, &tcur, &out, &why), TRC_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_type_roundtrip),
        cmocka_unit_test(test_extreme_values_decoded),
        cmocka_unit_test(test_short_and_long_bodies),
        cmocka_unit_test(test_framing),
        cmocka_unit_test(test_long_bodies_length_varint),
        cmocka_unit_test(test_encoder_refusals),
        cmocka_unit_test(test_decoder_value_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
