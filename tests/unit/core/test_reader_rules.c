/*
 * test_reader_rules.c — the reader against hand-made chunks (spec §4-§8):
 * unknown and private records, must-understand, newer minor and major
 * versions, reserved chunk kinds and flags, the id rules (range, gaps,
 * redefinition, parents, depth), undefined references merged per chunk,
 * corrupt records and the time cursor, framing errors, enumerations, and
 * hostile lengths refused before allocation.
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
#include "lib/util/alloc.h"
#include "format/limits.h"
#include "format/records.h"
#include "format/varint.h"
#include "tests/support/trace_builder.h"

typedef struct craft {
    trcf_buf pl;
    int64_t tcur;
    int64_t base;
} craft;

static void c_start(craft *c, int64_t base, int with_header, unsigned minor)
{
    c->pl.len = 0;
    c->tcur = c->base = base;
    if (with_header)
        tb_rec_header(&c->pl, 1, minor);
}

static void c_put(craft *c, uint64_t type, const trcf_body *b)
{
    assert_int_equal(trcf_encode(&c->pl, type, &c->tcur, b), TRC_OK);
}

static void c_string(craft *c, uint64_t id, const char *s)
{
    trcf_body b;
    memset(&b, 0, sizeof b);
    b.string.id = id;
    b.string.s.p = s;
    b.string.s.len = strlen(s);
    c_put(c, TRCF_STRING, &b);
}

static void c_thread(craft *c, uint64_t id, int64_t tid, uint64_t name)
{
    trcf_body b;
    memset(&b, 0, sizeof b);
    b.thread.id = id;
    b.thread.pid = 1;
    b.thread.tid = tid;
    b.thread.name = name;
    c_put(c, TRCF_THREAD, &b);
}

static void c_frame(craft *c, uint64_t id, uint64_t fn)
{
    trcf_body b;
    memset(&b, 0, sizeof b);
    b.frame.id = id;
    b.frame.function = fn;
    b.frame.line = 1;
    c_put(c, TRCF_FRAME, &b);
}

static void c_stack(craft *c, uint64_t id, uint64_t parent, uint64_t frame)
{
    trcf_body b;
    memset(&b, 0, sizeof b);
    b.stack.id = id;
    b.stack.parent = parent;
    b.stack.frame = frame;
    c_put(c, TRCF_STACK, &b);
}

static void c_sample(craft *c, int64_t t, uint64_t thread, uint64_t stack)
{
    trcf_body b;
    memset(&b, 0, sizeof b);
    b.sample.time = t;
    b.sample.thread = thread;
    b.sample.stack = stack;
    b.sample.flags = 1;
    c_put(c, TRCF_SAMPLE, &b);
}

/* string 1 "main", thread 1 = (1, 1, "main"), frame 1, stack 1 */
static void c_defs(craft *c)
{
    c_string(c, 1, "main");
    c_thread(c, 1, 1, 1);
    c_frame(c, 1, 1);
    c_stack(c, 1, 0, 1);
}

static void c_chunk(tb_buf *out, craft *c, uint8_t major, uint8_t minor, uint8_t kind, uint8_t flags,
                    uint64_t seq)
{
    tb_chunk(out, major, minor, kind, flags, seq, c->base, c->pl.data, c->pl.len, (int)(seq % 2) * 6);
}

/* Times of the SAMPLE lines of res, into t[]; returns how many. */
static size_t sample_times(const tb_result *res, int64_t *t, size_t max)
{
    size_t i, n = 0;
    for (i = 0; i < res->n && n < max; i++)
        if (strncmp(res->lines[i], "SAMPLE t=", 9) == 0)
            t[n++] = strtoll(res->lines[i] + 9, NULL, 10);
    return n;
}

static int has_line(const tb_result *res, const char *needle)
{
    size_t i;
    for (i = 0; i < res->n; i++)
        if (strstr(res->lines[i], needle))
            return 1;
    return 0;
}

static void test_unknown_records(void **state)
{
    craft c = { TRCF_BUF_INIT, 0, 0 };
    tb_buf out = { 0 };
    tb_result res;
    int64_t t[8];
    uint8_t junk[40];
    (void)state;
    memset(junk, 0x83, sizeof junk);      /* varint-looking bytes */
    c_start(&c, 1000, 1, 0);
    c_defs(&c);
    c_sample(&c, 1010, 1, 1);
    tb_rec(&c.pl, 63, 0, junk, sizeof junk);       /* future minor type */
    tb_rec(&c.pl, 4000, 0, junk, 3);               /* private type */
    tb_rec(&c.pl, 0, 0, "", 0);                    /* type 0, reserved */
    /* a SAMPLE with trailing fields from a newer minor version */
    {
        uint8_t body[32], *p = body;
        p = trcf_put_time(p, &c.tcur, 1020);
        *p++ = 1;
        *p++ = 1;
        *p++ = 1;
        memcpy(p, "\x05\x06\x07", 3);
        p += 3;
        tb_rec(&c.pl, TRCF_SAMPLE, 0, body, (size_t)(p - body));
    }
    c_sample(&c, 1030, 1, 1);
    c_chunk(&out, &c, 1, 0, 1, 0, 0);
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_int_equal(res.losses, 0);
    assert_int_equal(sample_times(&res, t, 8), 3);
    assert_true(t[0] == 1010 && t[1] == 1020 && t[2] == 1030);
    assert_int_equal(res.stats.skipped_records, 3);
    tb_result_free(&res);
    tb_buf_free(&out);
    trcf_buf_free(&c.pl);
}

static void test_must_understand(void **state)
{
    craft c = { TRCF_BUF_INIT, 0, 0 };
    tb_buf out = { 0 };
    tb_result res;
    int64_t t[8];
    (void)state;
    c_start(&c, 0, 1, 0);
    c_defs(&c);
    c_sample(&c, 10, 1, 1);
    tb_rec(&c.pl, 62, 1, "x", 1);                  /* unknown, must understand */
    c_sample(&c, 20, 1, 1);                        /* lost */
    c_chunk(&out, &c, 1, 0, 1, 0, 0);
    c_start(&c, 0, 0, 0);
    c_sample(&c, 30, 1, 1);                        /* lost: same segment */
    c_chunk(&out, &c, 1, 0, 2, 0, 1);
    c_start(&c, 0, 1, 0);                          /* next segment: read again */
    c_defs(&c);
    c_sample(&c, 40, 1, 1);
    c_chunk(&out, &c, 1, 0, 1, 0, 0);
    c_start(&c, 0, 0, 0);
    tb_rec(&c.pl, 3000, 1, "", 0);                 /* private with the bit: same */
    c_sample(&c, 50, 1, 1);
    c_chunk(&out, &c, 1, 0, 2, 0, 1);
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_int_equal(sample_times(&res, t, 8), 2);
    assert_true(t[0] == 10 && t[1] == 40);
    assert_int_equal(res.losses, 2);
    assert_int_equal(res.loss_count[TRC_LOSS_OTHER], 2);
    assert_true(has_line(&res, "type 62 must be understood"));
    assert_int_equal(res.loss_count[TRC_LOSS_CHUNK_MISSING], 0);
    tb_result_free(&res);
    tb_buf_free(&out);
    trcf_buf_free(&c.pl);
}

static void test_versions(void **state)
{
    craft c = { TRCF_BUF_INIT, 0, 0 };
    tb_buf out = { 0 }, good = { 0 };
    tb_result res;
    int64_t t[8];
    (void)state;
    /* newer minor: read, and the chunk header's version governs */
    c_start(&c, 0, 1, 9);
    c_defs(&c);
    c_sample(&c, 5, 1, 1);
    c_chunk(&out, &c, 1, 4, 1, 0, 0);
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_int_equal(res.losses, 0);
    assert_non_null(strstr(res.lines[0], "SEGMENT 1.4 "));
    assert_int_equal(sample_times(&res, t, 8), 1);
    tb_result_free(&res);
    good = out;
    memset(&out, 0, sizeof out);

    /* newer major first: refused, nothing read */
    c_chunk(&out, &c, 2, 0, 1, 0, 0);
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_VERSION);
    assert_int_equal(res.n, 0);
    assert_non_null(strstr(res.error, "mem.trc: offset 0x0: format version 2.0 is not supported"));
    tb_result_free(&res);
    out.len = 0;

    /* a newer recording appended: everything before it, then the error */
    tb_append(&out, good.p, good.len);
    c_chunk(&out, &c, 7, 1, 1, 0, 0);
    tb_append(&out, good.p, good.len);
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_VERSION);
    assert_int_equal(sample_times(&res, t, 8), 1);
    assert_non_null(strstr(res.error, "version 7.1"));
    tb_result_free(&res);
    /* ... also when found by resynchronisation after damage */
    out.p[good.len - 3] ^= 1;
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_VERSION);
    assert_int_equal(res.loss_count[TRC_LOSS_CHUNK_DAMAGED], 1);
    tb_result_free(&res);
    tb_buf_free(&out);
    tb_buf_free(&good);
    trcf_buf_free(&c.pl);
}

static void test_reserved_kind_and_flags(void **state)
{
    craft c = { TRCF_BUF_INIT, 0, 0 };
    tb_buf out = { 0 };
    tb_result res;
    int64_t t[8];
    (void)state;
    c_start(&c, 0, 1, 0);
    c_defs(&c);
    c_sample(&c, 1, 1, 1);
    c_chunk(&out, &c, 1, 0, 1, 0, 0);
    c_start(&c, 0, 0, 0);
    c_sample(&c, 2, 1, 1);
    c_chunk(&out, &c, 1, 0, 200, 0, 1);       /* reserved kind: skipped quietly */
    c_chunk(&out, &c, 1, 0, 2, 0x80, 2);      /* reserved flag: content lost */
    c_chunk(&out, &c, 1, 0, 2, 0x02, 3);      /* reported once per input */
    c_start(&c, 0, 0, 0);
    c_sample(&c, 3, 1, 1);
    c_chunk(&out, &c, 1, 0, 2, 0, 4);         /* no sequence gap */
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_int_equal(sample_times(&res, t, 8), 2);
    assert_true(t[0] == 1 && t[1] == 3);
    assert_int_equal(res.losses, 1);
    assert_int_equal(res.loss_count[TRC_LOSS_OTHER], 1);
    assert_true(has_line(&res, "reserved flag"));
    tb_result_free(&res);
    tb_buf_free(&out);
    trcf_buf_free(&c.pl);
}

static void test_id_rules(void **state)
{
    craft c = { TRCF_BUF_INIT, 0, 0 };
    tb_buf out = { 0 };
    tb_result res;
    int64_t t[16];
    uint64_t i;
    (void)state;
    c_start(&c, 0, 1, 0);
    c_defs(&c);
    c_string(&c, 0, "zero");                    /* id 0: corrupt */
    c_string(&c, 1 + 65536 + 1, "gap");         /* over highest + 65536: corrupt */
    c_string(&c, 1 + 65536, "gap ok");          /* exactly the allowance: fine */
    c_string(&c, 1, "main");                    /* identical redefinition: ignored */
    c_string(&c, 1, "other");                   /* different: corrupt */
    c_stack(&c, 2, 2, 1);                       /* parent not below id: corrupt */
    c_stack(&c, 3, 0, 9);                       /* undefined frame */
    c_sample(&c, 10, 1, 3);                     /* undefined stack 3 (its def failed) */
    c_sample(&c, 11, 9, 1);                     /* undefined thread */
    c_sample(&c, 12, 0, 1);                     /* thread 0 is never defined */
    c_sample(&c, 13, (uint64_t)TRC_MAX_IDS + 5, 1);
    c_thread(&c, 1, 2, 0);                      /* thread redefined: now tid 2 */
    c_sample(&c, 20, 1, 1);
    /* a chain of 4097 stacks: the last one is too deep */
    c_frame(&c, 2, 1);
    for (i = 0; i < 4097; i++)
        c_stack(&c, 10 + i, i ? 9 + i : 0, 2);
    c_sample(&c, 30, 1, 10 + 4095);             /* depth 4096: fine */
    c_sample(&c, 31, 1, 10 + 4096);             /* never defined */
    c_chunk(&out, &c, 1, 0, 1, 0, 0);
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_int_equal(sample_times(&res, t, 16), 2);
    assert_true(t[0] == 20 && t[1] == 30);
    assert_true(has_line(&res, "SAMPLE t=20 thr=1/2 "));
    /* corrupt: id 0, the gap, the different redefinition, the parent, depth */
    assert_int_equal(res.loss_count[TRC_LOSS_OTHER], 5);
    /* undefined: stack 3 def, 4 samples, the too-deep reference */
    assert_int_equal(res.loss_count[TRC_LOSS_UNDEFINED_REF], 6);
    assert_int_equal(res.losses, 2);            /* one loss of each kind for the chunk */
    /* frame 2 has frame 1's content, so stack 10 merges with stack 1:
     * 4096 distinct stacks in the model */
    assert_int_equal(res.stacks, 4096);
    assert_int_equal(res.frames, 1);
    tb_result_free(&res);
    tb_buf_free(&out);
    trcf_buf_free(&c.pl);
}

static void test_cursor_and_corrupt_records(void **state)
{
    craft c = { TRCF_BUF_INIT, 0, 0 };
    tb_buf out = { 0 };
    tb_result res;
    int64_t t[8], saved;
    uint8_t body[32], *p;
    (void)state;
    c_start(&c, 100, 1, 0);
    c_defs(&c);
    c_sample(&c, 100, 1, 1);
    /* a SAMPLE cut after its time field: corrupt; its delta must not count */
    saved = c.tcur;
    p = trcf_put_time(body, &c.tcur, 150);
    tb_rec(&c.pl, TRCF_SAMPLE, 0, body, (size_t)(p - body));
    c.tcur = saved;
    c_sample(&c, 110, 1, 1);
    /* an undefined reference is dropped but its time does count */
    c_sample(&c, 500, 9, 1);
    c_sample(&c, 501, 1, 1);
    /* REPEAT with count 1: corrupt */
    p = body;
    saved = c.tcur;
    p = trcf_put_time(p, &c.tcur, 999);
    *p++ = 1;
    *p++ = 1;
    p = trcf_put_uv(p, 1 | TRCF_SAMPLE_REPEAT);
    *p++ = 1;
    *p++ = 0;
    tb_rec(&c.pl, TRCF_SAMPLE, 0, body, (size_t)(p - body));
    c.tcur = saved;
    c_sample(&c, 502, 1, 1);
    /* marker kind 9 and clock domain 7: skipped like unknown types */
    {
        trcf_body b;
        memset(&b, 0, sizeof b);
        b.marker.kind = 9;
        b.marker.start = b.marker.end = 5000;
        c_put(&c, TRCF_MARKER, &b);
        memset(&b, 0, sizeof b);
        b.clock_sync.domain = 7;
        b.clock_sync.time = 6000;
        c_put(&c, TRCF_CLOCK_SYNC, &b);
        /* unassigned enum values map to unknown/other */
        memset(&b, 0, sizeof b);
        b.memcpy.w.start = b.memcpy.w.end = 6000;
        b.memcpy.copy_kind = 99;
        b.memcpy.src_kind = 8;
        b.memcpy.dst_kind = 2;
        b.memcpy.w.context = (uint64_t)1 << 40;     /* 32-bit field saturates */
        c_put(&c, TRCF_GPU_MEMCPY, &b);
        memset(&b, 0, sizeof b);
        b.loss.kind = 77;
        b.loss.count = 1;
        c_put(&c, TRCF_LOSS, &b);
        memset(&b, 0, sizeof b);
        b.gpu_device.device = (uint64_t)1 << 32;    /* ordinal too big: corrupt */
        c_put(&c, TRCF_GPU_DEVICE, &b);
    }
    /* framing broken: the rest of the chunk is dropped */
    tb_rec(&c.pl, TRCF_SAMPLE, 0, "", 0);
    c.pl.data[c.pl.len - 1] = 50;
    c_chunk(&out, &c, 1, 0, 1, 0, 0);
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_int_equal(sample_times(&res, t, 8), 4);
    assert_true(t[0] == 100 && t[1] == 110 && t[2] == 501 && t[3] == 502);
    assert_true(has_line(&res, "MEMCPY pid=0 dev=0 6000..6000 bytes=0 kind=0 src=0 dst=2"));
    assert_true(has_line(&res, "LOSS kind=9 count=1"));
    assert_int_equal(res.loss_count[TRC_LOSS_OTHER], 3);        /* 3 corrupt records */
    assert_int_equal(res.loss_count[TRC_LOSS_UNDEFINED_REF], 1);
    assert_int_equal(res.loss_count[TRC_LOSS_CHUNK_DAMAGED], 1);
    assert_int_equal(res.stats.skipped_records, 2);
    assert_true(has_line(&res, "rest of the chunk dropped"));
    tb_result_free(&res);
    tb_buf_free(&out);
    trcf_buf_free(&c.pl);
}

static void test_header_rules(void **state)
{
    craft c = { TRCF_BUF_INIT, 0, 0 };
    tb_buf out = { 0 };
    tb_result res;
    int64_t t[8];
    (void)state;
    /* SEGMENT chunk without SEGMENT_HEADER: reported, segment still reset */
    c_start(&c, 0, 0, 0);
    c_defs(&c);
    c_sample(&c, 1, 1, 1);
    tb_rec_header(&c.pl, 1, 0);                   /* and one out of place */
    c_sample(&c, 2, 1, 1);
    c_chunk(&out, &c, 1, 0, 1, 0, 0);
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_int_equal(sample_times(&res, t, 8), 2);
    assert_true(has_line(&res, "w=1000000"));     /* fallback period */
    assert_int_equal(res.loss_count[TRC_LOSS_OTHER], 2);
    assert_false(has_line(&res, "SEGMENT 1"));
    tb_result_free(&res);
    tb_buf_free(&out);
    trcf_buf_free(&c.pl);
}

static void test_hostile_lengths(void **state)
{
    craft c = { TRCF_BUF_INIT, 0, 0 };
    tb_buf out = { 0 };
    tb_result res;
    uint8_t body[64], *p;
    (void)state;
    c_start(&c, 0, 1, 0);
    c_defs(&c);
    /* STRING declaring 2^40 bytes, 1 MiB + 1, and more than the body */
    p = body;
    *p++ = 2;
    p = trcf_put_uv(p, (uint64_t)1 << 40);
    tb_rec(&c.pl, TRCF_STRING, 0, body, (size_t)(p - body));
    p = body;
    *p++ = 3;
    p = trcf_put_uv(p, TRC_MAX_STRING + 1);
    tb_rec(&c.pl, TRCF_STRING, 0, body, (size_t)(p - body));
    p = body;
    *p++ = 4;
    p = trcf_put_uv(p, 1000);
    memcpy(p, "abc", 3);
    tb_rec(&c.pl, TRCF_STRING, 0, body, (size_t)(p + 3 - body));
    /* SEGMENT_HEADER-like metadata count of 2^60 (in a STRING's place:
     * out of place anyway, but decoded first) */
    p = body;
    memcpy(p, "\x01\x00\x01\x00\x00\x00\x00\x00\x00", 9);
    p = trcf_put_uv(p + 9, (uint64_t)1 << 60);
    tb_rec(&c.pl, TRCF_SEGMENT_HEADER, 0, body, (size_t)(p - body));
    /* ids far beyond the limit */
    c_string(&c, (uint64_t)1 << 62, "x");
    c_sample(&c, 5, 1, 1);
    c_chunk(&out, &c, 1, 0, 1, 0, 0);
    trc_alloc_fail_after(-1);
    tb_read_mem(out.p, out.len, 0, &res);
    assert_true(trc_alloc_largest() <= (2u << 20));
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_int_equal(res.samples, 1);
    assert_int_equal(res.loss_count[TRC_LOSS_OTHER], 5);
    tb_result_free(&res);
    tb_buf_free(&out);
    trcf_buf_free(&c.pl);
}

static size_t count_lines(const tb_result *res, const char *prefix)
{
    size_t i, n = 0;
    for (i = 0; i < res->n; i++)
        n += strncmp(res->lines[i], prefix, strlen(prefix)) == 0;
    return n;
}

/* MARKER kind > 3 and CLOCK_SYNC domain outside 1-3 are decoded in full
 * and then skipped, so their times move the cursor ([R-TIME-6] via
 * [R-MARK-1], [R-CLOCK-1]); with a body short of the 1.0 fields they
 * are corrupt whatever the value, and do not. */
static void test_skipped_values_move_cursor(void **state)
{
    craft c = { TRCF_BUF_INIT, 0, 0 };
    tb_buf out = { 0 };
    tb_result res;
    trcf_body b;
    int64_t t[8], saved;
    uint8_t body[16], *p;
    (void)state;
    c_start(&c, 100, 1, 0);
    c_defs(&c);
    memset(&b, 0, sizeof b);
    b.marker.kind = 4;
    b.marker.start = b.marker.end = 5000;
    c_put(&c, TRCF_MARKER, &b);              /* cursor 100 -> 5000 */
    c_sample(&c, 5010, 1, 1);
    memset(&b, 0, sizeof b);
    b.clock_sync.domain = 0;
    b.clock_sync.time = 9000;
    c_put(&c, TRCF_CLOCK_SYNC, &b);          /* cursor -> 9000 */
    c_sample(&c, 9020, 1, 1);
    /* MARKER kind 9 cut after its time: corrupt, the cursor stays */
    saved = c.tcur;
    p = body;
    *p++ = 9;
    *p++ = 0;
    *p++ = 0;
    p = trcf_put_time(p, &c.tcur, 20000);
    tb_rec(&c.pl, TRCF_MARKER, 0, body, (size_t)(p - body));
    c.tcur = saved;
    c_sample(&c, 9030, 1, 1);
    c_chunk(&out, &c, 1, 1, 1, 0, 0);
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_int_equal(sample_times(&res, t, 8), 3);
    assert_true(t[0] == 5010 && t[1] == 9020 && t[2] == 9030);
    assert_int_equal(res.stats.skipped_records, 2);
    assert_int_equal(res.losses, 1);
    assert_int_equal(res.loss_count[TRC_LOSS_OTHER], 1);
    assert_true(has_line(&res, "MARKER record at payload offset"));
    assert_int_equal(count_lines(&res, "MARKER "), 0);
    assert_int_equal(count_lines(&res, "CLOCK_SYNC "), 0);
    tb_result_free(&res);
    tb_buf_free(&out);
    trcf_buf_free(&c.pl);
}

/* A DATA chunk numbered back ([R-CHUNK-13]): reported (unless damage was
 * just reported), the tables emptied, and they stay so for the chunks
 * after it until the next SEGMENT chunk. */
static void test_sequence_back(void **state)
{
    craft c = { TRCF_BUF_INIT, 0, 0 };
    tb_buf out = { 0 };
    tb_result res;
    int64_t t[8];
    size_t cut;
    (void)state;
    c_start(&c, 0, 1, 0);
    c_defs(&c);
    c_sample(&c, 1, 1, 1);
    c_chunk(&out, &c, 1, 0, 1, 0, 0);
    c_start(&c, 0, 0, 0);
    c_sample(&c, 2, 1, 1);
    c_chunk(&out, &c, 1, 0, 2, 0, 1);
    cut = out.len;
    c_chunk(&out, &c, 1, 0, 2, 0, 2);
    c_start(&c, 0, 0, 0);
    c_sample(&c, 3, 1, 1);                   /* thread 1: gone with the tables */
    c_chunk(&out, &c, 1, 0, 2, 0, 1);
    c_start(&c, 0, 0, 0);
    c_sample(&c, 4, 1, 1);                   /* still gone: the state persists */
    c_chunk(&out, &c, 1, 0, 2, 0, 2);
    c_start(&c, 0, 0, 0);
    c_defs(&c);
    c_sample(&c, 5, 1, 1);                   /* defined again: read */
    c_chunk(&out, &c, 1, 0, 2, 0, 3);
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_int_equal(sample_times(&res, t, 8), 4);
    assert_true(t[0] == 1 && t[1] == 2 && t[2] == 2 && t[3] == 5);
    assert_int_equal(count_lines(&res, "LOSS kind=9 count=0 "), 1);
    assert_true(has_line(&res, "went back from 2 to 1"));
    assert_int_equal(res.loss_count[TRC_LOSS_UNDEFINED_REF], 2);
    assert_int_equal(res.loss_count[TRC_LOSS_CHUNK_MISSING], 0);
    tb_result_free(&res);
    /* the same after a chunk whose header is damaged (its number unknown):
     * the step back is not reported again */
    out.p[cut + 20] ^= 0x40;                 /* header of chunk 2 */
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_int_equal(res.loss_count[TRC_LOSS_CHUNK_DAMAGED], 1);
    assert_false(has_line(&res, "went back"));
    assert_int_equal(res.loss_count[TRC_LOSS_UNDEFINED_REF], 2);
    tb_result_free(&res);
    tb_buf_free(&out);
    trcf_buf_free(&c.pl);
}

/* Reserved-kind chunks are numbered and checked like DATA chunks; a
 * DATA chunk numbered 0 at the start of the input is reported. */
static void test_sequence_of_skipped_and_headless(void **state)
{
    craft c = { TRCF_BUF_INIT, 0, 0 };
    tb_buf out = { 0 };
    tb_result res;
    (void)state;
    c_start(&c, 0, 1, 0);
    c_defs(&c);
    c_chunk(&out, &c, 1, 0, 1, 0, 0);
    c_start(&c, 0, 0, 0);
    c_chunk(&out, &c, 1, 0, 9, 0, 3);        /* reserved kind, 2 missing before it */
    c_sample(&c, 7, 1, 1);
    c_chunk(&out, &c, 1, 0, 2, 0, 4);
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_int_equal(res.losses, 1);
    assert_int_equal(res.loss_count[TRC_LOSS_CHUNK_MISSING], 2);
    assert_int_equal(res.samples, 1);
    tb_result_free(&res);
    out.len = 0;
    c_start(&c, 0, 0, 0);
    c_defs(&c);
    c_sample(&c, 7, 1, 1);
    c_chunk(&out, &c, 1, 0, 2, 0, 0);
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(res.losses, 1);
    assert_true(has_line(&res, "DATA chunk numbered 0 with no SEGMENT chunk"));
    assert_int_equal(res.samples, 1);
    tb_result_free(&res);
    tb_buf_free(&out);
    trcf_buf_free(&c.pl);
}

/* Descriptions are events once per file: a later segment describing the
 * same thread, process or GPU context again yields nothing, a change
 * does (spec §8.9). */
static void test_descriptions_per_file(void **state)
{
    craft c = { TRCF_BUF_INIT, 0, 0 };
    tb_buf out = { 0 };
    tb_result res;
    trcf_body b;
    int seg;
    (void)state;
    for (seg = 0; seg < 3; seg++) {
        c_start(&c, 0, 1, 0);
        c_defs(&c);
        if (seg == 2) {
            c_string(&c, 2, "renamed");
            c_thread(&c, 1, 1, 2);
        }
        memset(&b, 0, sizeof b);
        b.process.pid = 1;
        b.process.ppid = -1;
        b.process.rank = -1;
        c_put(&c, TRCF_PROCESS, &b);
        memset(&b, 0, sizeof b);
        b.gpu_context.pid = 1;
        b.gpu_context.context = 5;
        c_put(&c, TRCF_GPU_CONTEXT, &b);
        c_sample(&c, 10 + seg, 1, 1);
        c_chunk(&out, &c, 1, 1, 1, 0, 0);
    }
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_int_equal(res.losses, 0);
    assert_int_equal(count_lines(&res, "SEGMENT "), 3);
    assert_int_equal(count_lines(&res, "THREAD 1/1 name=main"), 1);
    assert_int_equal(count_lines(&res, "THREAD 1/1 name=renamed"), 1);
    assert_int_equal(count_lines(&res, "PROCESS pid=1 "), 1);
    assert_int_equal(count_lines(&res, "GPU_CONTEXT pid=1 "), 1);
    assert_int_equal(res.samples, 3);
    tb_result_free(&res);
    tb_buf_free(&out);
    trcf_buf_free(&c.pl);
}

/* "Identical in content" ([R-ID-8]) compares what the definitions mean,
 * references resolved: the same bytes under another string id are the
 * same.  A redefinition that differs is dropped whole: no event, nothing
 * added to the model (a COUNTER_DEF used to be reported and emitted). */
static void test_redefinition_resolved(void **state)
{
    craft c = { TRCF_BUF_INIT, 0, 0 };
    tb_buf out = { 0 };
    tb_result res;
    trcf_body b;
    (void)state;
    c_start(&c, 0, 1, 0);
    c_defs(&c);                              /* frame 1 = function string 1 "main" */
    c_string(&c, 2, "main");                 /* the same bytes again, id 2 */
    c_frame(&c, 1, 2);                       /* same content: ignored */
    c_stack(&c, 1, 0, 1);                    /* identical: ignored */
    c_string(&c, 3, "mem");
    c_string(&c, 4, "bytes");
    memset(&b, 0, sizeof b);
    b.counter_def.id = 1;
    b.counter_def.name = 3;
    b.counter_def.unit = 4;
    b.counter_def.pid = -1;
    b.counter_def.device = -1;
    c_put(&c, TRCF_COUNTER_DEF, &b);
    c_string(&c, 5, "bytes");
    b.counter_def.unit = 5;                  /* same text: ignored */
    c_put(&c, TRCF_COUNTER_DEF, &b);
    b.counter_def.name = 4;                  /* "bytes": differs, corrupt */
    c_put(&c, TRCF_COUNTER_DEF, &b);
    c_frame(&c, 1, 3);                       /* "mem": differs, corrupt */
    memset(&b, 0, sizeof b);
    b.counter.counter = 1;
    b.counter.time = 5;
    b.counter.value = 2;
    c_put(&c, TRCF_COUNTER, &b);
    c_sample(&c, 6, 1, 1);
    c_chunk(&out, &c, 1, 1, 1, 0, 0);
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(res.status, TRC_ERR_EOF);
    assert_int_equal(res.losses, 1);
    assert_int_equal(res.loss_count[TRC_LOSS_OTHER], 2);
    assert_int_equal(count_lines(&res, "COUNTER_DEF "), 1);
    assert_true(has_line(&res, "COUNTER mem t=5 v=2"));
    assert_true(has_line(&res, "SAMPLE t=6 thr=1/1 "));
    assert_int_equal(res.frames, 1);
    tb_result_free(&res);
    tb_buf_free(&out);
    trcf_buf_free(&c.pl);
}

/* The undefined-reference message names the id that is undefined, not
 * the first string field of the record. */
static void test_undefined_names_the_id(void **state)
{
    craft c = { TRCF_BUF_INIT, 0, 0 };
    tb_buf out = { 0 };
    tb_result res;
    trcf_body b;
    (void)state;
    c_start(&c, 0, 1, 0);
    c_defs(&c);
    memset(&b, 0, sizeof b);
    b.process.pid = 1;
    b.process.executable = 1;
    b.process.label = 77;                    /* undefined */
    b.process.rank = -1;
    c_put(&c, TRCF_PROCESS, &b);
    c_chunk(&out, &c, 1, 1, 1, 0, 0);
    c_start(&c, 0, 0, 0);
    memset(&b, 0, sizeof b);
    b.counter_def.id = 1;
    b.counter_def.name = 1;
    b.counter_def.unit = 88;                 /* undefined */
    c_put(&c, TRCF_COUNTER_DEF, &b);
    c_chunk(&out, &c, 1, 1, 2, 0, 1);
    tb_read_mem(out.p, out.len, 0, &res);
    assert_int_equal(res.loss_count[TRC_LOSS_UNDEFINED_REF], 2);
    assert_true(has_line(&res, "(first string 77 in PROCESS record"));
    assert_true(has_line(&res, "(first string 88 in COUNTER_DEF record"));
    tb_result_free(&res);
    tb_buf_free(&out);
    trcf_buf_free(&c.pl);
}

/* A SEGMENT chunk with no record, or whose SEGMENT_HEADER has an empty
 * body: one report each ([R-HDR-1]), and the segment is read on. */
static void test_segment_chunk_without_header(void **state)
{
    craft c = { TRCF_BUF_INIT, 0, 0 };
    tb_buf out = { 0 };
    tb_result res;
    int empty_body;
    (void)state;
    for (empty_body = 0; empty_body < 2; empty_body++) {
        out.len = 0;
        c_start(&c, 0, 0, 0);
        if (empty_body)
            tb_rec(&c.pl, TRCF_SEGMENT_HEADER, 0, "", 0);
        c_chunk(&out, &c, 1, 1, 1, 0, 0);
        c_start(&c, 0, 0, 0);
        c_defs(&c);
        c_sample(&c, 3, 1, 1);
        c_chunk(&out, &c, 1, 1, 2, 0, 1);
        tb_read_mem(out.p, out.len, 0, &res);
        assert_int_equal(res.status, TRC_ERR_EOF);
        assert_int_equal(res.losses, 1);
        assert_int_equal(res.loss_count[TRC_LOSS_OTHER], 1);
        assert_true(has_line(&res, empty_body ? "SEGMENT_HEADER record at payload offset 0x0"
                                              : "SEGMENT chunk holds no record"));
        assert_true(has_line(&res, "SAMPLE t=3 thr=1/1 flags=1 w=1000000 "));
        tb_result_free(&res);
    }
    tb_buf_free(&out);
    trcf_buf_free(&c.pl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_records),
        cmocka_unit_test(test_must_understand),
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_reserved_kind_and_flags),
        cmocka_unit_test(test_id_rules),
        cmocka_unit_test(test_cursor_and_corrupt_records),
        cmocka_unit_test(test_header_rules),
        cmocka_unit_test(test_hostile_lengths),
        cmocka_unit_test(test_skipped_values_move_cursor),
        cmocka_unit_test(test_sequence_back),
        cmocka_unit_test(test_sequence_of_skipped_and_headless),
        cmocka_unit_test(test_descriptions_per_file),
        cmocka_unit_test(test_redefinition_resolved),
        cmocka_unit_test(test_undefined_names_the_id),
        cmocka_unit_test(test_segment_chunk_without_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
