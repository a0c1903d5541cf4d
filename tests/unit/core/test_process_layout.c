/*
 * test_process_layout.c — PROCESS's layout field (format 1.2, spec §7.5
 * [R-PROC-2]): written and read back through libtrc, the latest
 * description of a pid wins, a 1.1 body (no layout) reads as "", a 1.2
 * body read by the 1.1 rules gives 1.1's fields and leaves layout as an
 * ignored trailing field, and a newer body's extra fields are skipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "trc/trc.h"
#include "format/record.h"
#include "format/records.h"
#include "format/varint.h"
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
    assert_int_equal(st, TRC_OK);
    return w;
}

static void put_process(trc_writer *w, int64_t pid, const char *interp, const char *layout)
{
    trc_process p;
    memset(&p, 0, sizeof p);
    p.pid = pid;
    p.ppid = 1;
    p.executable = "/usr/bin/python3";
    p.interpreter = interp;
    p.command_line = "python3 x.py";
    p.start_ns = 10;
    p.rank = -1;
    p.layout = layout;
    assert_int_equal(trc_writer_process(w, &p), TRC_OK);
}

/* Reads b whole; the layouts of its PROCESS events, in order, go to
 * got[] (at most max); returns how many.  The reader stays open in *r. */
static size_t read_layouts(const tb_buf *b, tb_src *src, trc_reader **r, const char **got,
                           size_t max)
{
    const trc_event *ev;
    trc_status st;
    size_t n = 0;

    src->p = b->p;
    src->len = b->len;
    src->pos = 0;
    src->max_read = 0;
    *r = trc_reader_open_callback(tb_read, src, "mem.trc", &st);
    assert_non_null(*r);
    while ((st = trc_reader_next(*r, &ev)) == TRC_OK) {
        if (ev->type == TRC_EV_LOSS)
            fail_msg("unexpected loss: %s", ev->u.loss.detail ? ev->u.loss.detail : "");
        if (ev->type == TRC_EV_PROCESS && n < max)
            got[n++] = ev->u.process->layout;
    }
    assert_int_equal(st, TRC_ERR_EOF);
    return n;
}

static void test_written_and_read(void **state)
{
    tb_buf b = { 0 };
    tb_src src;
    trc_reader *r;
    trc_writer *w = open_mem(&b);
    const char *got[8];
    (void)state;

    put_process(w, 7, "CPython 3.11.7", "the 3.11.7 headers");
    put_process(w, 7, "CPython 3.11.7", "the 3.11.7 headers"); /* a repeat: not written */
    put_process(w, 8, "", NULL);                               /* not Python: none */
    /* the same pid after an exec into another interpreter: described again */
    put_process(w, 7, "CPython 3.13.0", "_Py_DebugOffsets (3.13 list)");
    assert_int_equal(trc_writer_close(w, 100), TRC_OK);

    assert_int_equal(read_layouts(&b, &src, &r, got, 8), 3);
    assert_string_equal(got[0], "the 3.11.7 headers");
    assert_string_equal(got[1], "");
    assert_string_equal(got[2], "_Py_DebugOffsets (3.13 list)");
    /* by pid, the reader gives the latest description */
    assert_string_equal(trc_reader_process_by_pid(r, 7)->layout, "_Py_DebugOffsets (3.13 list)");
    assert_string_equal(trc_reader_process_by_pid(r, 7)->interpreter, "CPython 3.13.0");
    assert_string_equal(trc_reader_process_by_pid(r, 8)->layout, "");
    trc_reader_free(r);
    tb_buf_free(&b);
}

/* A PROCESS body with every field set: strings 1..5, layout string 5. */
static void encode_process(trcf_buf *pl, int64_t *tcur)
{
    trcf_body b;
    memset(&b, 0, sizeof b);
    b.process.pid = 4242;
    b.process.ppid = 1;
    b.process.executable = 1;
    b.process.interpreter = 2;
    b.process.command_line = 3;
    b.process.start_ns = 500;
    b.process.rank = 3;
    b.process.label = 4;
    b.process.layout = 5;
    assert_int_equal(trcf_encode(pl, TRCF_PROCESS, tcur, &b), TRC_OK);
}

static void put_string(trcf_buf *pl, int64_t *tcur, uint64_t id, const char *s)
{
    trcf_body b;
    memset(&b, 0, sizeof b);
    b.string.id = id;
    b.string.s.p = s;
    b.string.s.len = strlen(s);
    assert_int_equal(trcf_encode(pl, TRCF_STRING, tcur, &b), TRC_OK);
}

/* One SEGMENT chunk of the given minor version: the strings, then a
 * PROCESS whose body is the 1.2 encoding cut by `cut` bytes at its end
 * or grown by `extra` bytes of a later version's fields. */
static void crafted(tb_buf *out, unsigned minor, size_t cut, const char *extra)
{
    trcf_buf pl = TRCF_BUF_INIT, one = TRCF_BUF_INIT;
    trcf_rec_iter it;
    trcf_record rec;
    const char *why;
    uint8_t body[256];
    int64_t tcur = 0, t2 = 0;

    tb_rec_header(&pl, 1, minor);
    put_string(&pl, &tcur, 1, "/usr/bin/python3");
    put_string(&pl, &tcur, 2, "CPython 3.12.1");
    put_string(&pl, &tcur, 3, "python3 demo.py");
    put_string(&pl, &tcur, 4, "DataLoader worker 0");
    put_string(&pl, &tcur, 5, "the 3.12.1 headers");
    encode_process(&one, &t2);
    trcf_rec_iter_init(&it, one.data, one.len);
    assert_int_equal(trcf_record_next(&it, &rec, &why), TRC_OK);
    assert_true(rec.len + strlen(extra) <= sizeof body && cut <= rec.len);
    memcpy(body, rec.body, rec.len - cut);
    memcpy(body + rec.len - cut, extra, strlen(extra));
    tb_rec(&pl, TRCF_PROCESS, 0, body, rec.len - cut + strlen(extra));
    tb_chunk(out, 1, (uint8_t)minor, 1, 0, 0, 0, pl.data, pl.len, 0);
    trcf_buf_free(&pl);
    trcf_buf_free(&one);
}

static void check_process(const tb_buf *b, const char *want_layout)
{
    tb_src src;
    trc_reader *r;
    const char *got[2];
    const trc_process *p;

    assert_int_equal(read_layouts(b, &src, &r, got, 2), 1);
    assert_string_equal(got[0], want_layout);
    p = trc_reader_process_by_pid(r, 4242);
    assert_non_null(p);
    assert_string_equal(p->executable, "/usr/bin/python3");
    assert_string_equal(p->interpreter, "CPython 3.12.1");
    assert_string_equal(p->command_line, "python3 demo.py");
    assert_true(p->rank == 3);
    assert_string_equal(p->label, "DataLoader worker 0");
    trc_reader_free(r);
}

/* A 1.1 writer's PROCESS ends after label: layout reads as none. */
static void test_v11_body_has_no_layout(void **state)
{
    tb_buf b = { 0 };
    (void)state;
    crafted(&b, 1, 1, ""); /* string id 5 is one byte */
    check_process(&b, "");
    tb_buf_free(&b);
}

/* A later minor version's fields after layout are skipped ([R-REC-10]). */
static void test_newer_fields_skipped(void **state)
{
    tb_buf b = { 0 };
    (void)state;
    crafted(&b, 3, 0, "\x05\x83\x01\x7f");
    check_process(&b, "the 3.12.1 headers");
    tb_buf_free(&b);
}

/* A reader of 1.1 reads PROCESS as pid, ppid, executable, interpreter,
 * command_line, start, rank, label, and ignores what follows (spec §5.5).
 * Read a 1.2 body by exactly those rules, with the varint primitives
 * only: every 1.1 field keeps its value and place, and the bytes left
 * over are the layout sref, nothing else. */
static void test_v12_body_by_v11_rules(void **state)
{
    trcf_buf one = TRCF_BUF_INIT;
    trcf_rec_iter it;
    trcf_record rec;
    trcf_cur c;
    const char *why;
    int64_t tcur = 0, t11 = 0;
    uint64_t layout;
    (void)state;

    encode_process(&one, &tcur);
    trcf_rec_iter_init(&it, one.data, one.len);
    assert_int_equal(trcf_record_next(&it, &rec, &why), TRC_OK);
    trcf_cur_init(&c, rec.body, rec.len);
    assert_true(trcf_cur_sv(&c) == 4242);
    assert_true(trcf_cur_sv(&c) == 1);
    assert_true(trcf_cur_uv(&c) == 1);
    assert_true(trcf_cur_uv(&c) == 2);
    assert_true(trcf_cur_uv(&c) == 3);
    assert_true(trcf_cur_time(&c, &t11) == 500);
    assert_true(trcf_cur_sv(&c) == 3);
    assert_true(trcf_cur_uv(&c) == 4);
    assert_true(trcf_cur_ok(&c));
    /* what a 1.1 reader skips: one sref, layout 5, ending the body */
    assert_true(c.p < c.end);
    layout = trcf_cur_uv(&c);
    assert_true(trcf_cur_ok(&c));
    assert_true(layout == 5);
    assert_ptr_equal(c.p, c.end);
    trcf_buf_free(&one);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_written_and_read),
        cmocka_unit_test(test_v11_body_has_no_layout),
        cmocka_unit_test(test_newer_fields_skipped),
        cmocka_unit_test(test_v12_body_by_v11_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
