/*
 * test_hashtab.c — the shared hash index and u64 map (lib/util/hashtab.c):
 * insert/find/grow/remove with every key colliding (a degenerate hash),
 * backward-shift removal across the table's wrap-around, clearing a
 * map without giving back its memory, failure of every allocation, and a long random mix of operations checked against
 * a plain array.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/util/alloc.h"
#include "lib/util/hashtab.h"

/* Entry i of the caller's array: key[i]; live[i] says if indexed. */
typedef struct ents {
    uint64_t key[4096];
    uint8_t live[4096];
    uint32_t n;
} ents;

static uint32_t find(const trch_index *t, const ents *e, uint64_t key, uint64_t h)
{
    trch_probe p;
    for (uint32_t i = trch_first(t, h, &p); i != TRCH_NONE; i = trch_next(t, &p))
        if (e->key[i] == key)
            return i;
    return TRCH_NONE;
}

static void test_collisions(void **state)
{
    static ents e;
    trch_index t = {0};
    const uint64_t h = 42; /* every key collides */

    memset(&e, 0, sizeof e);
    assert_int_equal(find(&t, &e, 1, h), TRCH_NONE);
    for (uint32_t i = 0; i < 300; i++) {
        e.key[i] = 1000 + i;
        assert_int_equal(trch_add(&t, h, i), TRC_OK);
    }
    assert_int_equal(t.count, 300);
    assert_true(t.mask + 1 >= 600); /* grew past the first 64 slots */
    for (uint32_t i = 0; i < 300; i++)
        assert_int_equal(find(&t, &e, 1000 + i, h), i);
    assert_int_equal(find(&t, &e, 5, h), TRCH_NONE);
    /* remove every other one; the rest stay reachable */
    for (uint32_t i = 0; i < 300; i += 2)
        assert_int_equal(trch_remove(&t, h, i), 1);
    assert_int_equal(trch_remove(&t, h, 0), 0);
    assert_int_equal(trch_remove(&t, h, TRCH_NONE), 0);
    assert_int_equal(t.count, 150);
    for (uint32_t i = 0; i < 300; i++)
        assert_int_equal(find(&t, &e, 1000 + i, h), i % 2 ? i : TRCH_NONE);
    trch_clear(&t);
    assert_int_equal(t.count, 0);
    assert_int_equal(find(&t, &e, 1001, h), TRCH_NONE);
    trch_index_cleanup(&t);
    assert_null(t.slots);
}

/* A cluster that wraps from the last slot to the first: removal must
 * move entries whose home is before the hole, across the wrap. */
static void test_wrap(void **state)
{
    static ents e;
    trch_index t = {0};

    memset(&e, 0, sizeof e);
    assert_int_equal(trch_reserve(&t, 8), TRC_OK);
    uint32_t cap = t.mask + 1;
    uint64_t hs[6] = {cap - 2, cap - 2, cap - 1, cap - 2, 0, 1};
    for (uint32_t i = 0; i < 6; i++) {
        e.key[i] = i + 7;
        assert_int_equal(trch_add(&t, hs[i], i), TRC_OK);
    }
    assert_int_equal(t.mask + 1, cap); /* reserved: no growth */
    assert_int_equal(trch_remove(&t, hs[0], 0), 1);
    assert_int_equal(trch_remove(&t, hs[2], 2), 1);
    for (uint32_t i = 0; i < 6; i++)
        assert_int_equal(find(&t, &e, i + 7, hs[i]), i == 0 || i == 2 ? TRCH_NONE : i);
    trch_index_cleanup(&t);
}

static void test_hashes(void **state)
{
    /* equal bytes hash equal, a changed byte or length changes the hash */
    const char a[] = "frame:function:file.py:12";
    char b[sizeof a];
    memcpy(b, a, sizeof a);
    assert_true(trch_hash_bytes(a, sizeof a) == trch_hash_bytes(b, sizeof b));
    b[3] ^= 1;
    assert_true(trch_hash_bytes(a, sizeof a) != trch_hash_bytes(b, sizeof b));
    assert_true(trch_hash_bytes(a, 8) != trch_hash_bytes(a, 9));
    assert_true(trch_hash_u64(1) != trch_hash_u64(2));
    assert_true(trch_hash_more_u64(trch_hash_bytes(a, 3), 1) !=
                trch_hash_more_u64(trch_hash_bytes(a, 3), 2));
    /* consecutive ids spread over the low bits a table uses */
    uint32_t seen[64] = {0}, used = 0;
    for (uint64_t k = 0; k < 64; k++)
        seen[trch_fold(trch_hash_u64(k)) & 63]++;
    for (int i = 0; i < 64; i++)
        used += seen[i] != 0;
    assert_true(used > 32);
}

static void test_u64map(void **state)
{
    trch_u64map m = {0};
    uint32_t v;
    int added;

    assert_int_equal(trch_u64map_get(&m, 5, &v), 0);
    for (uint64_t k = 0; k < 1000; k++) {
        assert_int_equal(trch_u64map_put(&m, k * 0x100000001ull, (uint32_t)k + 7, &v, &added),
                         TRC_OK);
        assert_int_equal(added, 1);
        assert_int_equal(v, k + 7);
    }
    assert_int_equal(trch_u64map_put(&m, 3 * 0x100000001ull, 99, &v, &added), TRC_OK);
    assert_int_equal(added, 0);
    assert_int_equal(v, 10);
    assert_int_equal(trch_u64map_count(&m), 1000);
    for (uint64_t k = 0; k < 1000; k++) {
        assert_int_equal(trch_u64map_get(&m, k * 0x100000001ull, &v), 1);
        assert_int_equal(v, k + 7);
        assert_true(m.keys[k] == k * 0x100000001ull); /* insertion order */
    }
    assert_int_equal(trch_u64map_get(&m, 1000 * 0x100000001ull, &v), 0);
    trch_u64map_cleanup(&m);
    assert_int_equal(trch_u64map_count(&m), 0);
}

/* Fail allocation N for N = 1, 2, ...: each put either succeeds or
 * reports NOMEM leaving the map as it was; the map always ends right. */
/* Clearing forgets every key, keeps the memory (refilling to the same
 * size allocates nothing) and leaves a map that works as before. */
static void test_u64map_clear(void **state)
{
    trch_u64map m = {0};
    uint32_t v;
    int added;

    (void)state;
    for (uint64_t k = 1; k <= 500; k++)
        assert_int_equal(trch_u64map_put(&m, k << 3, (uint32_t)k, &v, &added), TRC_OK);
    trch_u64map_clear(&m);
    assert_int_equal(trch_u64map_count(&m), 0);
    for (uint64_t k = 1; k <= 500; k++)
        assert_int_equal(trch_u64map_get(&m, k << 3, &v), 0);
    trc_alloc_fail_after(1);
    for (uint64_t k = 1; k <= 500; k++) {
        assert_int_equal(trch_u64map_put(&m, k << 4, (uint32_t)k + 1000, &v, &added), TRC_OK);
        assert_int_equal(added, 1);
        assert_int_equal(v, k + 1000);
    }
    assert_int_equal(trc_alloc_count(), 0);
    trc_alloc_fail_after(-1);
    assert_int_equal(trch_u64map_count(&m), 500);
    for (uint64_t k = 1; k <= 500; k++) {
        assert_int_equal(trch_u64map_get(&m, k << 4, &v), 1);
        assert_int_equal(v, k + 1000);
        /* of the keys before the clear, only those put again are back */
        int again = (k & 1) == 0;
        assert_int_equal(trch_u64map_get(&m, k << 3, &v), again);
        if (again)
            assert_int_equal(v, k / 2 + 1000);
    }
    trch_u64map_cleanup(&m);
}

static void test_alloc_failure(void **state)
{
    for (long n = 1;; n++) {
        trch_u64map m = {0};
        trch_index t = {0};
        uint32_t v, inserted = 0;
        int added, failed = 0;

        trc_alloc_fail_after(n);
        for (uint64_t k = 0; k < 200 && !failed; k++) {
            trc_status st = trch_u64map_put(&m, k, (uint32_t)k, &v, &added);
            if (st == TRC_OK) {
                inserted++;
                continue;
            }
            assert_int_equal(st, TRC_ERR_NOMEM);
            failed = 1;
            assert_int_equal(trch_u64map_count(&m), inserted);
            for (uint64_t j = 0; j <= k; j++)
                assert_int_equal(trch_u64map_get(&m, j, &v), j < inserted);
        }
        for (uint32_t i = 0; i < 200 && !failed; i++) {
            trc_status st = trch_add(&t, trch_hash_u64(i), i);
            if (st != TRC_OK) {
                assert_int_equal(st, TRC_ERR_NOMEM);
                assert_int_equal(t.count, i);
                failed = 1;
            }
        }
        trc_alloc_fail_after(-1);
        trch_u64map_cleanup(&m);
        trch_index_cleanup(&t);
        if (!failed) {
            assert_true(n > 4); /* several allocations happened */
            break;
        }
    }
}

/* Random adds, finds and removes with few distinct hash values (long
 * clusters), checked against the entry array's live flags. */
static void test_random(void **state)
{
    static ents e;
    trch_index t = {0};
    uint64_t seed = 12345;
    uint32_t live = 0;

    memset(&e, 0, sizeof e);
    for (uint32_t i = 0; i < 4096; i++)
        e.key[i] = i;
    for (int step = 0; step < 200000; step++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t k = (uint32_t)(seed >> 33) % 4096;
        uint64_t h = trch_hash_u64(k % 97) & 0xffff00000000ffffull; /* 97 hashes */
        int op = (int)(seed >> 20) % 3;
        uint32_t got = find(&t, &e, k, h);
        assert_int_equal(got, e.live[k] ? k : TRCH_NONE);
        if (op == 0 && !e.live[k]) {
            assert_int_equal(trch_add(&t, h, k), TRC_OK);
            e.live[k] = 1;
            live++;
        } else if (op == 1) {
            assert_int_equal(trch_remove(&t, h, k), e.live[k]);
            live -= e.live[k];
            e.live[k] = 0;
        }
        assert_int_equal(t.count, live);
        assert_true((uint64_t)t.count * 2 <= (uint64_t)t.mask + 1);
    }
    for (uint32_t k = 0; k < 4096; k++)
        assert_int_equal(find(&t, &e, k, trch_hash_u64(k % 97) & 0xffff00000000ffffull),
                         e.live[k] ? k : TRCH_NONE);
    trch_index_cleanup(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_collisions), cmocka_unit_test(test_wrap),
        cmocka_unit_test(test_hashes),     cmocka_unit_test(test_u64map),
        cmocka_unit_test(test_u64map_clear), cmocka_unit_test(test_alloc_failure),
        cmocka_unit_test(test_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
