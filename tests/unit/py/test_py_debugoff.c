/*
 * test_py_debugoff.c — lib/py/py_debugoff.c's per-version field lists
 * of _Py_DebugOffsets, without the interpreters:
 *
 *  - "ordinal" blocks (slot i holds i) show where each list puts a named
 *    field; the expected slots come from elsewhere: for 3.13 offsetof()
 *    of the installed 3.13.0 header's struct, for 3.15 the ordinals
 *    microsoft/PTVS documents next to its recorded 3.15.0rc1 blocks; the
 *    lengths are those of the real recorded blocks;
 *  - real blocks (tests/unit/py/py_debugoff_blocks.h) of 3.13.0, 3.14.6,
 *    3.14.6t, 3.15.0rc1 and 3.15.0rc1t fed to py_layout_from_debug and
 *    compared field by field with values from an independent consumer
 *    (3.13: offsetof() compiled against the 3.13.0 headers; 3.14/3.15:
 *    the expected offsets of PTVS's tests);
 *  - refusals: a 3.15 block read as 3.14, a 3.15 pre-release before
 *    3.15.0b4, an unknown 3.16, a block shorter than its list.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "lib/py/py_debugoff.h"
#include "lib/py/py_layout.h"
#include "tests/unit/py/py_debugoff_blocks.h"

static size_t from_hex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = strlen(hex) / 2;
    assert_true(n <= cap);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
        out[i] = (uint8_t)v;
    }
    return n;
}

/* An ordinal block of nslots slots for version hex. */
static void ordinal_block(uint8_t *blk, size_t nslots, uint64_t hex)
{
    memcpy(blk, PY_DEBUG_COOKIE, 8);
    memcpy(blk + 8, &hex, 8);
    for (uint64_t i = 2; i < nslots; i++)
        memcpy(blk + i * 8, &i, 8);
}

typedef struct slot {
    const char *name;
    uint64_t slot;
} slot;

static void check_slots(uint64_t hex, size_t nslots, const slot *want, size_t nwant)
{
    uint8_t blk[PY_DEBUG_READ];
    char err[256] = "";
    uint64_t v;

    assert_int_equal(py_debugoff_size(hex, err, sizeof err), nslots * 8);
    memset(blk, 0xee, sizeof blk);
    ordinal_block(blk, nslots, hex);
    for (size_t i = 0; i < nwant; i++) {
        if (py_debugoff_field(blk, nslots * 8, want[i].name, &v) != 0 || v != want[i].slot)
            fail_msg("0x%llx: %s in slot %llu, expected %llu", (unsigned long long)hex,
                     want[i].name, (unsigned long long)v, (unsigned long long)want[i].slot);
    }
    /* the last slot is inside the list, one past it is not read */
    assert_int_equal(py_debugoff_field(blk, nslots * 8 - 8, want[nwant - 1].name, &v),
                     want[nwant - 1].slot * 8 < nslots * 8 - 8 ? 0 : -1);
}

static void test_ordinal_313(void **state)
{
    /* offsetof(_Py_DebugOffsets, X) / 8 in the 3.13.0 pycore_runtime.h */
    static const slot want[] = {
        { "free_threaded", 2 }, { "rt.interpreters_head", 5 }, { "is.next", 8 },
        { "is.threads_head", 9 }, { "is.ceval_gil", 14 }, { "is.gil_runtime_state", 15 },
        { "is.gil_runtime_state_holder", 18 }, { "ts.size", 19 }, { "ts.current_frame", 23 },
        { "ts.native_thread_id", 25 }, { "ts.datastack_chunk", 26 }, { "if.size", 28 },
        { "if.owner", 33 }, { "co.filename", 35 }, { "co.co_code_adaptive", 43 },
        { "ob.ob_type", 45 }, { "by.ob_sval", 66 }, { "un.asciiobject_size", 70 },
        { "gc.collecting", 72 },
    };
    check_slots(0x030d00f0, 73, want, sizeof want / sizeof want[0]);
}

static void test_ordinal_314(void **state)
{
    /* 95 slots: the length of PTVS's recorded 3.14.6 blocks (760 bytes);
     * where the fields sit is checked by the golden blocks below */
    static const slot want[] = {
        { "is.threads_main", 10 }, { "is.tlbc_generation", 21 }, { "ts.size", 22 },
        { "if.tlbc_index", 38 }, { "co.co_tlbc", 49 }, { "db.debugger_script_path_size", 94 },
    };
    check_slots(0x030e06f0, 95, want, sizeof want / sizeof want[0]);
}

static void test_ordinal_315(void **state)
{
    /* PTVS's ordinals count from the first slot after free_threaded:
     * slot = ordinal + 3.  111 slots = its recorded blocks' 888 bytes. */
    static const slot want[] = {
        { "ts.current_frame", 23 + 3 }, { "ts.base_frame", 24 + 3 }, { "ts.thread_id", 27 + 3 },
        { "ts.exc_state", 34 + 3 }, { "es.exc_value", 35 + 3 }, { "if.executable", 38 + 3 },
        { "if.instr_ptr", 39 + 3 }, { "if.localsplus", 40 + 3 }, { "if.owner", 41 + 3 },
        { "co.linetable", 48 + 3 }, { "co.firstlineno", 49 + 3 }, { "co.co_code_adaptive", 53 + 3 },
        { "ty.tp_basicsize", 61 + 3 }, { "ty.tp_dictoffset", 62 + 3 },
        { "ht.ht_cached_keys", 64 + 3 }, { "db.debugger_script_path_size", 110 },
    };
    check_slots(0x030f00b4, 111, want, sizeof want / sizeof want[0]);
    check_slots(0x030f01f0, 111, want, sizeof want / sizeof want[0]);
}

/* What py_layout_from_debug must make of a golden block. */
typedef struct expect {
    uint32_t rt_interp_head, is_next, is_tstate_head, is_ceval_gil, gil_lo_holder, gil_lo_locked;
    uint32_t ts_prev, ts_next, ts_interp, ts_current_frame, ts_thread_id, ts_native_thread_id,
        ts_datastack_chunk;
    uint32_t if_previous, if_code, if_instr, if_owner, if_size;
    uint32_t co_filename, co_name, co_qualname, co_lines, co_firstlineno, co_code_adaptive;
    uint32_t ob_type, ob_size, by_sval, u_length, u_state, u_ascii_data, u_compact_data;
    uint32_t free_threaded, owner_max;
} expect;

#define EQ(field) \
    do { \
        if (L.field != e->field) \
            fail_msg("%s: " #field " = %u, expected %u", what, (unsigned)L.field, \
                     (unsigned)e->field); \
    } while (0)

static void check_golden(const char *what, const char *hex, const expect *e, uint64_t version)
{
    uint8_t blk[PY_DEBUG_READ];
    py_layout L;
    char err[256] = "";
    size_t n = from_hex(hex, blk, sizeof blk);

    assert_int_equal(py_debugoff_version(blk, n), version);
    assert_int_equal(py_debugoff_size(version, err, sizeof err), n);
    if (py_layout_from_debug(blk, n, &L, err, sizeof err) != 0)
        fail_msg("%s: %s", what, err);
    EQ(rt_interp_head); EQ(is_next); EQ(is_tstate_head); EQ(is_ceval_gil);
    assert_int_equal(L.gil_last_holder, e->gil_lo_holder);
    assert_int_equal(L.gil_locked, e->gil_lo_locked);
    EQ(ts_prev); EQ(ts_next); EQ(ts_interp); EQ(ts_current_frame); EQ(ts_thread_id);
    EQ(ts_native_thread_id); EQ(ts_datastack_chunk);
    EQ(if_previous); EQ(if_code); EQ(if_instr); EQ(if_owner); EQ(if_size);
    EQ(co_filename); EQ(co_name); EQ(co_qualname); EQ(co_lines); EQ(co_firstlineno);
    EQ(co_code_adaptive);
    EQ(ob_type); EQ(ob_size); EQ(by_sval); EQ(u_length); EQ(u_state); EQ(u_ascii_data);
    EQ(u_compact_data); EQ(free_threaded); EQ(owner_max);
    assert_int_equal(L.ts_datastack_top, L.ts_datastack_chunk + 8);
    assert_int_equal(L.tlbc, L.free_threaded && L.minor >= 14);
    /* the GIL's enabled flag exists only where it can be off */
    assert_int_equal(L.gil_enabled != PY_OFF_NONE, L.free_threaded);
    assert_non_null(strstr(L.headers, "_Py_DebugOffsets"));
    /* one byte short of its list: refused */
    assert_int_equal(py_layout_from_debug(blk, n - 1, &L, err, sizeof err), -1);
    assert_non_null(strstr(err, "bytes"));
}

static void test_golden_313(void **state)
{
    /* offsetof() compiled against the 3.13.0 headers installed here */
    static const expect e = {
        632, 7264, 7344, 16, 7760 - 7752, 7768 - 7752,
        0, 8, 16, 72, 152, 160, 232,
        8, 0, 56, 70, 72,
        112, 120, 128, 136, 68, 200,
        8, 16, 32, 16, 32, 40, 56,
        0, 3,
    };
    check_golden("3.13.0", RAW_313, &e, 0x030d00f0);
}

static void test_golden_314(void **state)
{
    /* PTVS's ExpectedV314 */
    static const expect e = {
        808, 7272, 7336, 16, 7776 - 7768, 7784 - 7768,
        0, 8, 16, 72, 152, 156, 224,
        8, 0, 56, 74, 80,
        112, 120, 128, 136, 68, 208,
        8, 16, 32, 16, 32, 40, 56,
        0, 4,
    };
    check_golden("3.14.6", RAW_314, &e, 0x030e06f0);
}

static void test_golden_315(void **state)
{
    /* PTVS's ExpectedV315 (compactunicodeobject_size 56) */
    static const expect e = {
        936, 7264, 7328, 16, 7728 - 7720, 7736 - 7720,
        0, 8, 16, 72, 176, 180, 248,
        8, 0, 56, 74, 80,
        112, 120, 128, 136, 68, 208,
        8, 16, 32, 16, 32, 40, 56,
        0, 3,
    };
    check_golden("3.15.0rc1", RAW_315, &e, 0x030f00c1);
}

/* The free-threaded blocks: PTVS asserts only some offsets of these
 * (current_frame 72, instr_ptr 56, linetable 152, firstlineno 84,
 * ob_type 24, tlbc_index 72, co_tlbc 224, tlbc_generation 17436); those
 * are checked, and the rest must parse plausibly. */
static void check_free_threaded(const char *what, const char *hex, uint64_t version)
{
    uint8_t blk[PY_DEBUG_READ];
    py_layout L;
    char err[256] = "";
    uint64_t v;
    size_t n = from_hex(hex, blk, sizeof blk);

    if (py_layout_from_debug(blk, n, &L, err, sizeof err) != 0)
        fail_msg("%s: %s", what, err);
    assert_int_equal(py_debugoff_version(blk, n), version);
    assert_int_equal(L.free_threaded, 1);
    assert_int_equal(L.tlbc, 1);
    assert_int_equal(L.ts_current_frame, 72);
    assert_int_equal(L.if_instr, 56);
    assert_int_equal(L.co_lines, 152);
    assert_int_equal(L.co_firstlineno, 84);
    assert_int_equal(L.ob_type, 24);
    assert_int_equal(L.gil_enabled, 0);   /* first field of struct _gil_runtime_state */
    assert_int_equal(py_debugoff_field(blk, n, "if.tlbc_index", &v), 0);
    assert_int_equal(v, 72);
    assert_int_equal(py_debugoff_field(blk, n, "co.co_tlbc", &v), 0);
    assert_int_equal(v, 224);
    assert_int_equal(py_debugoff_field(blk, n, "is.tlbc_generation", &v), 0);
    assert_int_equal(v, 17436);
    /* the free-threaded string header: interned is a whole byte */
    assert_int_equal(L.u_kind_shift, 8);
}

static void test_golden_free_threaded(void **state)
{
    check_free_threaded("3.14.6t", RAW_314T, 0x030e06f0);
    check_free_threaded("3.15.0rc1t", RAW_315T, 0x030f00c1);
}

static void test_refused(void **state)
{
    uint8_t blk[PY_DEBUG_READ];
    py_layout L;
    char err[256];
    size_t n = from_hex(RAW_315, blk, sizeof blk);

    /* a 3.15 block claiming 3.14: the 3.14 list misplaces its fields */
    uint64_t v = 0x030e06f0;
    memcpy(blk + 8, &v, 8);
    assert_int_equal(py_layout_from_debug(blk, n, &L, err, sizeof err), -1);
    /* and the other way round */
    n = from_hex(RAW_314, blk, sizeof blk);
    memset(blk + n, 0, sizeof blk - n);
    v = 0x030f00f0;
    memcpy(blk + 8, &v, 8);
    assert_int_equal(py_layout_from_debug(blk, 888, &L, err, sizeof err), -1);

    /* 3.15 before b4 */
    n = from_hex(RAW_315, blk, sizeof blk);
    v = 0x030f00b3;
    memcpy(blk + 8, &v, 8);
    err[0] = '\0';
    assert_int_equal(py_debugoff_size(v, err, sizeof err), 0);
    assert_non_null(strstr(err, "CPython 3.15.0b3 is a pre-release"));
    assert_non_null(strstr(err, "3.15.0b4"));
    assert_int_equal(py_layout_from_debug(blk, n, &L, err, sizeof err), -1);
    assert_non_null(strstr(err, "3.15.0b3"));

    /* 3.14 before its release candidates */
    assert_int_equal(py_debugoff_size(0x030e00b1, err, sizeof err), 0);
    assert_non_null(strstr(err, "CPython 3.14.0b1 is a pre-release"));

    /* an unknown minor, even with a block the 3.15 list would read */
    v = 0x031000f0;
    memcpy(blk + 8, &v, 8);
    assert_int_equal(py_debugoff_size(v, err, sizeof err), 0);
    assert_non_null(strstr(err, "CPython 3.16.0 is newer than this trec knows"));
    assert_int_equal(py_layout_from_debug(blk, n, &L, err, sizeof err), -1);
    assert_non_null(strstr(err, "3.16.0"));
    assert_int_equal(py_debugoff_field(blk, n, "ts.size", &v), -1);

    /* older than 3.13: no block at all */
    assert_int_equal(py_debugoff_size(0x030c01f0, err, sizeof err), 0);
    assert_non_null(strstr(err, "3.12.1"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ordinal_313),
        cmocka_unit_test(test_ordinal_314),
        cmocka_unit_test(test_ordinal_315),
        cmocka_unit_test(test_golden_313),
        cmocka_unit_test(test_golden_314),
        cmocka_unit_test(test_golden_315),
        cmocka_unit_test(test_golden_free_threaded),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
