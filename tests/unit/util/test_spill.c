/*
 * test_spill.c — the spill file (lib/util/spill.c): appends return the
 * offsets their records are read back from, in any order and interleaved
 * with more appends; slots written over; reads past the end or before any
 * write refused; every operation's failure through the test hook, with
 * errno kept and the records already there still readable; closing
 * leaves an empty spill that works again.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/util/spill.h"

typedef struct rec {
    int64_t a;
    uint32_t b, c;
} rec;

static void fill(rec *r, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++)
        r[i] = (rec){(int64_t)seed * 1000 + (int64_t)i, seed, (uint32_t)i};
}

static void test_append_read_interleaved(void **state)
{
    (void)state;
    trcu_spill sp = {0};
    static rec in[64][37], out[37];
    int64_t off[64];

    assert_false(trcu_spill_used(&sp));
    for (uint32_t k = 0; k < 64; k++) {
        fill(in[k], 37, k + 1);
        assert_int_equal(trcu_spill_append(&sp, in[k], 37 - k % 5, sizeof(rec), &off[k]), TRC_OK);
        assert_true(trcu_spill_used(&sp));
        /* read an earlier block back between appends: the next append
         * must still go to the end, not where the read stopped */
        uint32_t j = (k * 7) % (k + 1);
        memset(out, 0, sizeof out);
        assert_int_equal(trcu_spill_read(&sp, off[j], out, 37 - j % 5, sizeof(rec)), TRC_OK);
        assert_memory_equal(out, in[j], (37 - j % 5) * sizeof(rec));
    }
    int64_t want = 0;
    for (uint32_t k = 0; k < 64; k++) {
        assert_int_equal(off[k], want);
        want += (int64_t)((37 - k % 5) * sizeof(rec));
    }
    assert_int_equal(trcu_spill_end(&sp), want);
    assert_int_equal(trcu_spill_flush(&sp), TRC_OK);
    for (uint32_t k = 64; k-- > 0;) { /* backwards: every read seeks */
        assert_int_equal(trcu_spill_read(&sp, off[k], out, 37 - k % 5, sizeof(rec)), TRC_OK);
        assert_memory_equal(out, in[k], (37 - k % 5) * sizeof(rec));
    }
    /* a block read in parts, as the readers that read a run a piece at a
     * time do */
    assert_int_equal(trcu_spill_read(&sp, off[3], out, 10, sizeof(rec)), TRC_OK);
    assert_int_equal(trcu_spill_read(&sp, off[3] + 10 * (int64_t)sizeof(rec), out + 10, 24,
                                     sizeof(rec)),
                     TRC_OK);
    assert_memory_equal(out, in[3], 34 * sizeof(rec));
    trcu_spill_close(&sp);
    assert_false(trcu_spill_used(&sp));
    assert_int_equal(trcu_spill_end(&sp), 0);
    /* closed, it works again from an empty file */
    int64_t again;
    assert_int_equal(trcu_spill_append(&sp, in[5], 3, sizeof(rec), &again), TRC_OK);
    assert_int_equal(again, 0);
    assert_int_equal(trcu_spill_read(&sp, again, out, 3, sizeof(rec)), TRC_OK);
    assert_memory_equal(out, in[5], 3 * sizeof(rec));
    assert_int_equal(trcu_spill_read(&sp, again, out, 4, sizeof(rec)), TRC_ERR_IO);
    trcu_spill_close(&sp);
}

static void test_write_over(void **state)
{
    (void)state;
    trcu_spill sp = {0};
    rec a[8], b[8], c[8], out[8];
    int64_t oa, ob, oc;

    fill(a, 8, 1);
    fill(b, 8, 2);
    fill(c, 8, 3);
    assert_int_equal(trcu_spill_append(&sp, a, 8, sizeof(rec), &oa), TRC_OK);
    assert_int_equal(trcu_spill_append(&sp, b, 8, sizeof(rec), &ob), TRC_OK);
    int64_t end = trcu_spill_end(&sp);
    /* a's slot is reused for c: b untouched, the end unchanged */
    assert_int_equal(trcu_spill_write_at(&sp, oa, c, 8, sizeof(rec)), TRC_OK);
    assert_int_equal(trcu_spill_end(&sp), end);
    assert_int_equal(trcu_spill_read(&sp, oa, out, 8, sizeof(rec)), TRC_OK);
    assert_memory_equal(out, c, sizeof c);
    assert_int_equal(trcu_spill_read(&sp, ob, out, 8, sizeof(rec)), TRC_OK);
    assert_memory_equal(out, b, sizeof b);
    /* the next append still goes after b */
    assert_int_equal(trcu_spill_append(&sp, a, 8, sizeof(rec), &oc), TRC_OK);
    assert_int_equal(oc, end);
    assert_int_equal(trcu_spill_read(&sp, oc, out, 8, sizeof(rec)), TRC_OK);
    assert_memory_equal(out, a, sizeof a);
    /* a write passing the end grows the file */
    assert_int_equal(trcu_spill_write_at(&sp, oc + 4 * (int64_t)sizeof(rec), b, 8, sizeof(rec)),
                     TRC_OK);
    assert_int_equal(trcu_spill_end(&sp), oc + 12 * (int64_t)sizeof(rec));
    trcu_spill_close(&sp);
}

static void test_refused_reads(void **state)
{
    (void)state;
    trcu_spill sp = {0};
    rec r[4], out[5];
    int64_t off;

    errno = 0;
    assert_int_equal(trcu_spill_read(&sp, 0, out, 1, sizeof(rec)), TRC_ERR_IO);
    assert_int_not_equal(errno, 0);
    assert_int_equal(trcu_spill_flush(&sp), TRC_OK); /* nothing to flush */
    fill(r, 4, 9);
    assert_int_equal(trcu_spill_append(&sp, r, 4, sizeof(rec), &off), TRC_OK);
    assert_int_equal(trcu_spill_read(&sp, off, out, 5, sizeof(rec)), TRC_ERR_IO);
    assert_int_equal(trcu_spill_read(&sp, -1, out, 1, sizeof(rec)), TRC_ERR_IO);
    assert_int_equal(trcu_spill_read(&sp, off + 1, out, 4, sizeof(rec)), TRC_ERR_IO);
    assert_int_equal(trcu_spill_read(&sp, INT64_MAX, out, 1, sizeof(rec)), TRC_ERR_IO);
    assert_int_equal(trcu_spill_write_at(&sp, INT64_MAX - 3, r, 1, sizeof(rec)), TRC_ERR_IO);
    /* none of that harmed what is there */
    assert_int_equal(trcu_spill_read(&sp, off, out, 4, sizeof(rec)), TRC_OK);
    assert_memory_equal(out, r, sizeof r);
    trcu_spill_close(&sp);
}

/* Operation n of a fixed script fails (the hook); everything before it
 * worked and stays readable after the hook is reset. */
static void test_every_failure(void **state)
{
    (void)state;
    rec a[16], b[16], out[16];
    fill(a, 16, 4);
    fill(b, 16, 5);

    for (long n = 1; n <= 8; n++) {
        trcu_spill sp = {0};
        int64_t oa = -1, ob = -1;
        trc_status st[5];

        trcu_spill_fail_after(n);
        errno = 0;
        st[0] = trcu_spill_append(&sp, a, 16, sizeof(rec), &oa); /* ops 1 (create), 2 */
        st[1] = trcu_spill_append(&sp, b, 16, sizeof(rec), &ob); /* op 3 (or 1, 2 again) */
        st[2] = trcu_spill_flush(&sp);
        st[3] = oa >= 0 ? trcu_spill_read(&sp, oa, out, 16, sizeof(rec)) : TRC_ERR_IO;
        st[4] = oa >= 0 ? trcu_spill_write_at(&sp, oa, b, 16, sizeof(rec)) : TRC_ERR_IO;
        int failed = 0;
        for (int i = 0; i < 5; i++) {
            if (i == 2 && !trcu_spill_used(&sp))
                continue; /* no file: nothing to flush, nothing to fail */
            if (st[i] != TRC_OK)
                failed = 1;
            else
                assert_false(failed); /* once failing, always failing */
        }
        if (n <= 6)
            assert_true(failed);
        if (failed)
            assert_int_equal(errno, EIO);
        trcu_spill_fail_after(-1);
        if (st[0] == TRC_OK) {
            assert_int_equal(trcu_spill_read(&sp, oa, out, 16, sizeof(rec)), TRC_OK);
            assert_memory_equal(out, st[4] == TRC_OK ? b : a, sizeof a);
        } else {
            assert_int_equal(oa, -1); /* no offset for what was not written */
        }
        trcu_spill_close(&sp);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_append_read_interleaved),
        cmocka_unit_test(test_refused_reads),
        cmocka_unit_test(test_write_over),
        cmocka_unit_test(test_every_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
