/*
 * test_gpu_context.c — GPU_CONTEXT and GPU_STREAM (spec §7.21, §7.22)
 * through the libtrc writer and reader: values survive the round trip,
 * the writer writes a description once and again only when it changes,
 * the reader yields an event only for a new or changed description (also
 * across concatenated segments), and hand-made bodies that are short,
 * longer than 1.0's fields, or name an undefined string are handled as
 * the spec says.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "trc/trc.h"
#include "format/records.h"
#include "tests/support/trace_builder.h"

static trc_writer *open_mem(tb_buf *b)
{
    trc_writer_options o;
    trc_status st;
    trc_writer *w;

    memset(&o, 0, sizeof o);
    o.start_ns = 1;
    o.wall_ns = 2;
    o.host = "h";
    o.recorder = "test";
    w = trc_writer_open_callback(tb_write, b, &o, &st);
    assert_non_null(w);
    return w;
}

/* Reads all of b; copies of the context/stream events into ctx[]/str[]
 * (names are dropped: checked through name_of). */
typedef struct got {
    trc_gpu_context ctx[8];
    trc_gpu_stream str[8];
    char names[8][32];
    size_t n_ctx, n_str;
    uint64_t skipped, losses;
} got;

static void read_all(const uint8_t *p, size_t len, got *g)
{
    tb_src src = { p, len, 0, 0 };
    trc_status st;
    trc_reader *r = trc_reader_open_callback(tb_read, &src, "mem.trc", &st);
    const trc_event *ev;
    trc_reader_stats s;

    assert_non_null(r);
    memset(g, 0, sizeof *g);
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        if (ev->type == TRC_EV_GPU_CONTEXT && g->n_ctx < 8)
            g->ctx[g->n_ctx++] = *ev->u.gpu_context;
        if (ev->type == TRC_EV_GPU_STREAM && g->n_str < 8) {
            g->str[g->n_str] = *ev->u.gpu_stream;
            strncpy(g->names[g->n_str], ev->u.gpu_stream->name, 31);
            g->n_str++;
        }
        if (ev->type == TRC_EV_LOSS)
            g->losses++;
    }
    assert_int_equal(st, TRC_ERR_EOF);
    trc_reader_get_stats(r, &s);
    g->skipped = s.skipped_records;
    trc_reader_free(r);
}

static void write_descriptions(tb_buf *b, const char *name2)
{
    trc_writer *w = open_mem(b);
    trc_gpu_context c = { -7, UINT32_MAX, 3 };
    trc_gpu_stream s;

    assert_int_equal(trc_writer_gpu_context(w, &c), TRC_OK);
    assert_int_equal(trc_writer_gpu_context(w, &c), TRC_OK);        /* repeat: nothing */
    memset(&s, 0, sizeof s);
    s.pid = -7;
    s.device = UINT32_MAX;
    s.context = 3;
    s.stream = 7;
    s.flags = TRC_STREAM_DEFAULT;
    assert_int_equal(trc_writer_gpu_stream(w, &s), TRC_OK);
    assert_int_equal(trc_writer_gpu_stream(w, &s), TRC_OK);         /* repeat: nothing */
    s.stream = UINT32_MAX;
    s.priority = INT32_MIN;
    s.flags = TRC_STREAM_NON_BLOCKING;
    s.name = "h\xc3\xa9 copy";
    assert_int_equal(trc_writer_gpu_stream(w, &s), TRC_OK);
    s.name = name2;                                                  /* changed (or not) */
    assert_int_equal(trc_writer_gpu_stream(w, &s), TRC_OK);
    assert_int_equal(trc_writer_gpu_context(w, NULL), TRC_ERR_ARG);
    assert_int_equal(trc_writer_gpu_stream(NULL, &s), TRC_ERR_ARG);
    assert_int_equal(trc_writer_close(w, 100), TRC_OK);
}

static void test_roundtrip(void **state)
{
    tb_buf b = { 0 };
    got g;
    (void)state;

    write_descriptions(&b, "h\xc3\xa9 copy");
    read_all(b.p, b.len, &g);
    assert_int_equal(g.n_ctx, 1);
    assert_true(g.ctx[0].pid == -7);
    assert_true(g.ctx[0].device == UINT32_MAX);
    assert_int_equal(g.ctx[0].context, 3);
    assert_int_equal(g.n_str, 2);
    assert_true(g.str[0].pid == -7);
    assert_int_equal(g.str[0].stream, 7);
    assert_int_equal(g.str[0].priority, 0);
    assert_int_equal(g.str[0].flags, TRC_STREAM_DEFAULT);
    assert_string_equal(g.names[0], "");
    assert_true(g.str[1].stream == UINT32_MAX);
    assert_true(g.str[1].priority == INT32_MIN);
    assert_int_equal(g.str[1].flags, TRC_STREAM_NON_BLOCKING);
    assert_string_equal(g.names[1], "h\xc3\xa9 copy");
    assert_int_equal(g.losses, 0);
    tb_buf_free(&b);
}

static void test_changed_and_concatenated(void **state)
{
    tb_buf a = { 0 }, b = { 0 };
    got g;
    (void)state;

    /* A rename within one segment replaces the stream: two events for it. */
    write_descriptions(&a, "renamed");
    read_all(a.p, a.len, &g);
    assert_int_equal(g.n_ctx, 1);
    assert_int_equal(g.n_str, 3);
    assert_string_equal(g.names[2], "renamed");

    /* The same descriptions again in a second segment: no new events;
     * the rename back in it is a change. */
    write_descriptions(&b, "h\xc3\xa9 copy");
    tb_append(&a, b.p, b.len);
    read_all(a.p, a.len, &g);
    assert_int_equal(g.n_ctx, 1);
    assert_int_equal(g.n_str, 4);
    assert_string_equal(g.names[3], "h\xc3\xa9 copy");
    tb_buf_free(&a);
    tb_buf_free(&b);
}

/* One SEGMENT chunk holding the given records after the header. */
static void crafted(tb_buf *out, trcf_buf *pl)
{
    trcf_buf full = TRCF_BUF_INIT;
    tb_rec_header(&full, 1, 0);
    assert_int_equal(trcf_buf_grow(&full, pl->len), TRC_OK);
    memcpy(full.data + full.len, pl->data, pl->len);
    full.len += pl->len;
    tb_chunk(out, 1, 0, 1, 0, 0, 1000, full.data, full.len, 0);
    trcf_buf_free(&full);
}

static void test_reader_rules(void **state)
{
    trcf_buf pl = TRCF_BUF_INIT;
    tb_buf out = { 0 };
    uint8_t body[64], *p;
    got g;
    (void)state;

    /* short body: corrupt (reported, dropped) */
    p = body;
    p = trcf_put_sv(p, 1);
    p = trcf_put_uv(p, 0);
    tb_rec(&pl, TRCF_GPU_CONTEXT, 0, body, (size_t)(p - body));
    /* trailing fields of a later minor: ignored [R-REC-10] */
    p = trcf_put_uv(p, 5);
    *p++ = 0x42;
    *p++ = 0x01;
    tb_rec(&pl, TRCF_GPU_CONTEXT, 0, body, (size_t)(p - body));
    /* stream naming undefined string 9: dropped as an undefined reference */
    p = body;
    p = trcf_put_sv(p, 1);
    p = trcf_put_uv(p, 0);
    p = trcf_put_uv(p, 5);
    p = trcf_put_uv(p, 2);
    p = trcf_put_sv(p, -2);
    p = trcf_put_uv(p, 1);
    p = trcf_put_uv(p, 9);
    tb_rec(&pl, TRCF_GPU_STREAM, 0, body, (size_t)(p - body));
    /* the same with name 0 and the must-understand bit (known type: ignored) */
    p[-1] = 0;
    tb_rec(&pl, TRCF_GPU_STREAM, 1, body, (size_t)(p - body));
    crafted(&out, &pl);
    read_all(out.p, out.len, &g);
    assert_int_equal(g.n_ctx, 1);
    assert_int_equal(g.ctx[0].context, 5);
    assert_int_equal(g.n_str, 1);
    assert_int_equal(g.str[0].stream, 2);
    assert_int_equal(g.str[0].priority, -2);
    assert_int_equal(g.str[0].flags, TRC_STREAM_DEFAULT);
    assert_int_equal(g.losses, 2);          /* one corrupt, one undefined ref */
    assert_int_equal(g.skipped, 0);
    trcf_buf_free(&pl);
    tb_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_changed_and_concatenated),
        cmocka_unit_test(test_reader_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
