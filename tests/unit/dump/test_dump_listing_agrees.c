/*
 * tests/unit/dump/test_dump_listing_agrees.c — trc-dump's listing (lib/dump/dump_listing.c, which
 * walks raw chunks) against the public reader (which --check, --events
 * and every converter use) on the points where spec/trc-format.md had
 * to decide between two faithful readings: sequence reports after
 * damage and the tables after a step back (§4.7, §8.5), reserved flag
 * bits reported once (§4.5), MARKER/CLOCK_SYNC skipped for a value yet
 * moving the time cursor (§2.6), a SEGMENT chunk without its header
 * (§7.1), and an input that is a prefix of the magic (§8.1).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "trc/trc.h"
#include "format/records.h"
#include "lib/dump/dump.h"
#include "tests/support/trace_builder.h"

/* What the listing printed and the problems it reported. */
typedef struct listed {
    char *out;
    size_t out_len;
    char problems[4096];
    int n_problems;
    int verdict;
} listed;

static void on_problem(void *ctx, const char *line)
{
    listed *l = ctx;
    size_t n = strlen(l->problems);
    l->n_problems++;
    snprintf(l->problems + n, sizeof l->problems - n, "%s\n", line);
}

static void list_bytes(const uint8_t *p, size_t len, listed *l)
{
    tb_src src = { p, len, 0, 0 };
    dump_opts o;
    FILE *f;

    memset(l, 0, sizeof *l);
    memset(&o, 0, sizeof o);
    o.name = "mem.trc";
    o.problem = on_problem;
    o.problem_ctx = l;
    f = open_memstream(&l->out, &l->out_len);
    assert_non_null(f);
    l->verdict = dump_listing(tb_read, &src, f, &o);
    fclose(f);
}

static void listed_free(listed *l)
{
    free(l->out);
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    const char *p = hay;
    while ((p = strstr(p, needle)) != NULL) {
        n++;
        p += strlen(needle);
    }
    return n;
}

static int64_t cursor;

static void rec(trcf_buf *pl, uint64_t type, const trcf_body *b)
{
    assert_int_equal(trcf_encode(pl, type, &cursor, b), TRC_OK);
}

static void chunk(tb_buf *out, trcf_buf *pl, uint8_t kind, uint8_t flags, uint64_t seq)
{
    tb_chunk(out, 1, 1, kind, flags, seq, 0, pl->data, pl->len, 0);
    pl->len = 0;
    cursor = 0;
}

/* string 1 "main", thread 1 named by it, frame 1, stack 1 */
static void defs(trcf_buf *pl)
{
    trcf_body b;
    memset(&b, 0, sizeof b);
    b.string.id = 1;
    b.string.s.p = "main";
    b.string.s.len = 4;
    rec(pl, TRCF_STRING, &b);
    memset(&b, 0, sizeof b);
    b.thread.id = 1;
    b.thread.pid = 1;
    b.thread.tid = 1;
    b.thread.name = 1;
    rec(pl, TRCF_THREAD, &b);
}

static void marker(trcf_buf *pl, uint64_t kind, int64_t t)
{
    trcf_body b;
    memset(&b, 0, sizeof b);
    b.marker.kind = kind;
    b.marker.thread = 1;
    b.marker.start = b.marker.end = t;
    b.marker.name = 1;
    rec(pl, TRCF_MARKER, &b);
}

/* A step back after a damaged header is not reported by either; without
 * the damage both report it, and both forget the segment's strings. */
static void test_sequence_back(void **state)
{
    tb_buf out = { 0 };
    trcf_buf pl = TRCF_BUF_INIT;
    listed l;
    tb_result res;
    size_t hdr;
    (void)state;
    tb_rec_header(&pl, 1, 1);
    defs(&pl);
    chunk(&out, &pl, 1, 0, 0);
    marker(&pl, 0, 5);
    chunk(&out, &pl, 2, 0, 1);
    hdr = out.len;
    marker(&pl, 0, 6);
    chunk(&out, &pl, 2, 0, 2);
    marker(&pl, 0, 7);                       /* string 1 is no longer defined */
    chunk(&out, &pl, 2, 0, 1);

    list_bytes(out.p, out.len, &l);
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(l.verdict, DUMP_DAMAGED);
    assert_int_equal(count(l.problems, "sequence went back to 1"), 1);
    assert_int_equal(count(res.lines[res.n - 2], "went back from 2 to 1"), 1);
    assert_int_equal(count(l.out, "name=#1\"main\""), 3);  /* THREAD, 2 markers */
    assert_int_equal(count(l.out, "name=#1(undefined)"), 1);
    assert_int_equal(res.loss_count[TRC_LOSS_UNDEFINED_REF], 1);
    listed_free(&l);
    tb_result_free(&res);

    out.p[hdr + 20] ^= 0x10;                 /* chunk 2's header: damaged */
    list_bytes(out.p, out.len, &l);
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(l.n_problems, 1);
    assert_int_equal(count(l.problems, "bad chunk header CRC"), 1);
    assert_int_equal(res.losses, 2);        /* the damage, the undefined string */
    assert_int_equal(res.loss_count[TRC_LOSS_CHUNK_DAMAGED], 1);
    assert_int_equal(count(l.out, "name=#1(undefined)"), 1);
    listed_free(&l);
    tb_result_free(&res);
    tb_buf_free(&out);
    trcf_buf_free(&pl);
}

/* Reserved flag bits: every chunk is shown skipped, the loss of content
 * is reported once per input, and a gap is checked across them. */
static void test_reserved_flags_once(void **state)
{
    tb_buf out = { 0 };
    trcf_buf pl = TRCF_BUF_INIT;
    listed l;
    tb_result res;
    (void)state;
    tb_rec_header(&pl, 1, 1);
    chunk(&out, &pl, 1, 0, 0);
    chunk(&out, &pl, 2, 0x04, 1);
    chunk(&out, &pl, 2, 0x80, 2);
    chunk(&out, &pl, 7, 0, 5);               /* reserved kind after a gap of 2 */
    list_bytes(out.p, out.len, &l);
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(count(l.out, "  skipped: "), 3);
    assert_int_equal(count(l.problems, "chunk content lost"), 1);
    assert_int_equal(count(l.problems, "2 chunk(s) missing"), 1);
    assert_int_equal(l.n_problems, 2);
    assert_int_equal(res.losses, 2);
    assert_int_equal(res.loss_count[TRC_LOSS_OTHER], 1);
    assert_int_equal(res.loss_count[TRC_LOSS_CHUNK_MISSING], 2);
    listed_free(&l);
    tb_result_free(&res);
    tb_buf_free(&out);
    trcf_buf_free(&pl);
}

/* A MARKER of an unassigned kind is shown skipped, and the next record's
 * time is the same in the listing and through the reader. */
static void test_skipped_marker_cursor(void **state)
{
    tb_buf out = { 0 };
    trcf_buf pl = TRCF_BUF_INIT;
    listed l;
    tb_result res;
    (void)state;
    tb_rec_header(&pl, 1, 1);
    defs(&pl);
    marker(&pl, 12, 3000000000);
    marker(&pl, 0, 3000000007);
    chunk(&out, &pl, 1, 0, 0);
    list_bytes(out.p, out.len, &l);
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(l.verdict, DUMP_OK);
    assert_int_equal(count(l.out, "kind=12 "), 1);
    assert_int_equal(count(l.out, "skipped: value not assigned"), 1);
    assert_int_equal(count(l.out, "start=3.000000007 "), 1);
    assert_int_equal(res.losses, 0);
    assert_int_equal(res.stats.skipped_records, 1);
    assert_int_equal(count(res.lines[res.n - 1], "MARKER kind=0 thr=1/1 pid=0 3000000007.."), 1);
    listed_free(&l);
    tb_result_free(&res);
    tb_buf_free(&out);
    trcf_buf_free(&pl);
}

/* A SEGMENT chunk with no record: one problem for the listing, one
 * loss for the reader; a 2-byte prefix of the magic: truncated for both. */
static void test_missing_header_and_prefix(void **state)
{
    tb_buf out = { 0 };
    trcf_buf pl = TRCF_BUF_INIT;
    listed l;
    tb_result res;
    (void)state;
    chunk(&out, &pl, 1, 0, 0);
    defs(&pl);
    marker(&pl, 0, 1);
    chunk(&out, &pl, 2, 0, 1);
    list_bytes(out.p, out.len, &l);
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(l.n_problems, 1);
    assert_int_equal(count(l.problems, "SEGMENT chunk does not start with SEGMENT_HEADER"), 1);
    assert_int_equal(res.losses, 1);
    assert_int_equal(res.loss_count[TRC_LOSS_OTHER], 1);
    assert_int_equal(count(res.lines[res.n - 1], "MARKER kind=0"), 1);
    listed_free(&l);
    tb_result_free(&res);

    list_bytes(out.p, 2, &l);
    tb_read_mem(out.p, 2, 0, &res);
    assert_int_equal(l.verdict, DUMP_DAMAGED);
    assert_int_equal(count(l.problems, "input ends inside a chunk header"), 1);
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_int_equal(res.loss_count[TRC_LOSS_TRUNCATED], 1);
    listed_free(&l);
    tb_result_free(&res);
    tb_buf_free(&out);
    trcf_buf_free(&pl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sequence_back),
        cmocka_unit_test(test_reserved_flags_once),
        cmocka_unit_test(test_skipped_marker_cursor),
        cmocka_unit_test(test_missing_header_and_prefix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
