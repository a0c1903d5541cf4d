/*
 * test_py_values.c — lib/py/py_values.c over a synthetic memory image:
 * objects laid out in this process's memory with the generated tables of
 * 3.10 (ints sized by ob_size, strings with a ready bit) and 3.12 (ints
 * tagged by lv_tag), read through the local memory reader.  Each kind
 * is shown as Python's repr would show it, long strings and bytes are
 * cut at 100 characters on a character boundary, a class named like a
 * builtin is an object like any other, and memory that is unmapped,
 * misaligned or does not hold together (a digit too large, an ASCII
 * string with a byte above 0x7f, a bool that is 2, an unknown string
 * kind) is "<unreadable at 0x…>", never a value.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/py/py_values.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* The image: objects bump-allocated, 8-aligned, zeroed. */
static uint64_t image[1 << 14];
static size_t used;

static uint8_t *alloc_obj(size_t n)
{
    uint8_t *p = (uint8_t *)&image[used];
    used += (n + 7) / 8;
    assert_true(used <= sizeof image / 8);
    return p;
}

static uint64_t addr_of(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

static void put64(uint8_t *obj, uint32_t off, uint64_t v)
{
    memcpy(obj + off, &v, 8);
}

typedef struct world {
    pymem mem;
    pyval_ctx c;
    char text[PYVAL_TEXT_MAX];
} world;

static uint64_t new_type(const char *name)
{
    uint8_t *t = alloc_obj(512);
    /* the name in the image: the reader reads past its NUL, as in a
     * target, where a type's name lies among other data */
    char *copy = (char *)alloc_obj(128);
    snprintf(copy, 128, "%s", name);
    put64(t, 24, addr_of(copy)); /* tp_name: checked against the table below */
    return addr_of(t);
}

static void setup_world(world *w, unsigned minor)
{
    used = 0;
    memset(image, 0, sizeof image);
    assert_int_equal(pymem_init_local(&w->mem), 0);
    w->c.mem = &w->mem;
    w->c.L = py_layout_for_minor(minor);
    w->c.O = py_objlayout_for_minor(minor);
    w->c.V = py_vallayout_for_minor(minor);
    assert_non_null(w->c.L);
    assert_non_null(w->c.O);
    assert_non_null(w->c.V);
    assert_int_equal(w->c.V->tp_name, 24);
    w->c.none_type = new_type("NoneType");
    w->c.bool_type = new_type("bool");
    w->c.long_type = new_type("int");
    w->c.float_type = new_type("float");
    w->c.unicode_type = new_type("str");
    w->c.bytes_type = new_type("bytes");
    w->c.tuple_type = new_type("tuple");
    w->c.list_type = new_type("list");
    w->c.dict_type = new_type("dict");
}

static uint8_t *obj(world *w, uint64_t type, size_t size)
{
    uint8_t *o = alloc_obj(size);
    put64(o, w->c.L->ob_type, type);
    return o;
}

/* An int of the given 30-bit digits (least significant first). */
static uint64_t mk_int(world *w, uint64_t type, int sign, const uint32_t *digits, size_t n)
{
    const py_objlayout *O = w->c.O;
    uint8_t *o = obj(w, type, O->lo_digits + 4 * (n ? n : 1));
    if (O->lo_tag != PY_OFF_NONE)
        put64(o, O->lo_tag, (uint64_t)n << 3 | (sign == 0 ? 1u : sign < 0 ? 2u : 0u));
    else
        put64(o, O->ob_size, (uint64_t)(sign < 0 ? -(int64_t)n : (int64_t)n));
    if (n)
        memcpy(o + O->lo_digits, digits, 4 * n);
    return addr_of(o);
}

static uint64_t mk_small(world *w, int64_t v)
{
    uint64_t m = v < 0 ? (uint64_t)-v : (uint64_t)v;
    uint32_t d[3];
    size_t n = 0;
    while (m) {
        d[n++] = (uint32_t)(m & ((1u << 30) - 1));
        m >>= 30;
    }
    return mk_int(w, w->c.long_type, v < 0 ? -1 : v > 0, d, n);
}

static uint64_t mk_float(world *w, double v)
{
    uint8_t *o = obj(w, w->c.float_type, 32);
    memcpy(o + w->c.V->fl_fval, &v, 8);
    return addr_of(o);
}

/* A compact str of n code points of the given kind (1, 2, 4). */
static uint64_t mk_str(world *w, const uint32_t *cps, size_t n, unsigned kind, int ascii)
{
    const py_layout *L = w->c.L;
    uint32_t data_off = ascii ? L->u_ascii_data : L->u_compact_data;
    uint8_t *o = obj(w, w->c.unicode_type, data_off + (n + 1) * kind);
    put64(o, L->u_length, n);
    uint32_t state = kind << L->u_kind_shift | 1u << L->u_compact_bit |
                     (uint32_t)ascii << L->u_ascii_bit;
    if (L->u_ready_bit != PY_OFF_NONE)
        state |= 1u << L->u_ready_bit;
    memcpy(o + L->u_state, &state, 4);
    for (size_t i = 0; i < n; i++) {
        if (kind == 1) {
            o[data_off + i] = (uint8_t)cps[i];
        } else if (kind == 2) {
            uint16_t v = (uint16_t)cps[i];
            memcpy(o + data_off + 2 * i, &v, 2);
        } else {
            memcpy(o + data_off + 4 * i, &cps[i], 4);
        }
    }
    return addr_of(o);
}

static uint64_t mk_ascii(world *w, const char *s)
{
    uint32_t cps[512];
    size_t n = strlen(s);
    assert_true(n < 512);
    for (size_t i = 0; i < n; i++)
        cps[i] = (unsigned char)s[i];
    return mk_str(w, cps, n, 1, 1);
}

static uint64_t mk_bytes(world *w, const void *b, size_t n)
{
    uint8_t *o = obj(w, w->c.bytes_type, w->c.L->by_sval + n + 1);
    put64(o, w->c.L->ob_size, n);
    memcpy(o + w->c.L->by_sval, b, n);
    return addr_of(o);
}

static const char *show(world *w, uint64_t addr)
{
    pyval_format(&w->c, addr, w->text, sizeof w->text);
    return w->text;
}

static void check_kinds(unsigned minor)
{
    world w;
    setup_world(&w, minor);
    char want[PYVAL_TEXT_MAX];

    assert_string_equal(show(&w, addr_of(obj(&w, w.c.none_type, 16))), "None");
    uint32_t one = 1;
    assert_string_equal(show(&w, mk_int(&w, w.c.bool_type, 1, &one, 1)), "True");
    assert_string_equal(show(&w, mk_int(&w, w.c.bool_type, 0, NULL, 0)), "False");

    assert_string_equal(show(&w, mk_small(&w, 0)), "0");
    assert_string_equal(show(&w, mk_small(&w, 42)), "42");
    assert_string_equal(show(&w, mk_small(&w, -7)), "-7");
    assert_string_equal(show(&w, mk_small(&w, 1 << 30)), "1073741824");
    assert_string_equal(show(&w, mk_small(&w, INT64_MAX)), "9223372036854775807");
    /* 2**200: digit 6 (bits 180..209) holds 2**20 */
    uint32_t d200[7] = {0, 0, 0, 0, 0, 0, 1u << 20};
    assert_string_equal(show(&w, mk_int(&w, w.c.long_type, -1, d200, 7)),
                        "-1606938044258990275541962092341162602522202993782792835301376");
    /* all digits at their largest: 2**90 - 1 */
    uint32_t dmax[3] = {(1u << 30) - 1, (1u << 30) - 1, (1u << 30) - 1};
    assert_string_equal(show(&w, mk_int(&w, w.c.long_type, 1, dmax, 3)),
                        "1237940039285380274899124223");

    assert_string_equal(show(&w, mk_float(&w, 3.25)), "3.25");
    assert_string_equal(show(&w, mk_float(&w, 0.1)), "0.1");
    assert_string_equal(show(&w, mk_float(&w, 1.0 / 3)), "0.3333333333333333");
    assert_string_equal(show(&w, mk_float(&w, 123.0)), "123.0");
    assert_string_equal(show(&w, mk_float(&w, -0.0)), "-0.0");
    assert_string_equal(show(&w, mk_float(&w, 1e15)), "1000000000000000.0");
    assert_string_equal(show(&w, mk_float(&w, 1e16)), "1e+16");
    assert_string_equal(show(&w, mk_float(&w, 0.0001)), "0.0001");
    assert_string_equal(show(&w, mk_float(&w, 1e-5)), "1e-05");
    assert_string_equal(show(&w, mk_float(&w, 1.5e300)), "1.5e+300");
    assert_string_equal(show(&w, mk_float(&w, INFINITY)), "inf");
    assert_string_equal(show(&w, mk_float(&w, -INFINITY)), "-inf");
    assert_string_equal(show(&w, mk_float(&w, NAN)), "nan");

    assert_string_equal(show(&w, mk_ascii(&w, "")), "''");
    assert_string_equal(show(&w, mk_ascii(&w, "it's\t\\ok\n\x01")), "'it\\'s\\t\\\\ok\\n\\x01'");
    uint32_t latin[] = {'c', 0xe9, 0xa0, 0x85};
    assert_string_equal(show(&w, mk_str(&w, latin, 4, 1, 0)), "'c\xc3\xa9\\xa0\\x85'");
    uint32_t bmp[] = {0x540d, 0x524d, 0x2028};
    assert_string_equal(show(&w, mk_str(&w, bmp, 3, 2, 0)), "'\xe5\x90\x8d\xe5\x89\x8d\\u2028'");
    uint32_t astral[] = {0x1f40d, 'x'};
    assert_string_equal(show(&w, mk_str(&w, astral, 2, 4, 0)), "'\xf0\x9f\x90\x8dx'");

    /* cut at 100 characters, whole characters, with the full length */
    uint32_t many[150];
    for (int i = 0; i < 150; i++)
        many[i] = 0x540d;
    size_t o = 0;
    o += (size_t)snprintf(want + o, sizeof want - o, "'");
    for (int i = 0; i < 100; i++)
        o += (size_t)snprintf(want + o, sizeof want - o, "\xe5\x90\x8d");
    snprintf(want + o, sizeof want - o, "'\xe2\x80\xa6 (150 characters)");
    assert_string_equal(show(&w, mk_str(&w, many, 150, 2, 0)), want);
    char hundred[101];
    memset(hundred, 'a', 100);
    hundred[100] = '\0';
    snprintf(want, sizeof want, "'%s'", hundred);
    assert_string_equal(show(&w, mk_ascii(&w, hundred)), want); /* exactly 100: not cut */

    assert_string_equal(show(&w, mk_bytes(&w, "b\0\xff'", 4)), "b'b\\x00\\xff\\''");
    uint8_t raw[300];
    memset(raw, 'z', sizeof raw);
    memset(want, 0, sizeof want);
    memcpy(want, "b'", 2);
    memset(want + 2, 'z', 100);
    strcat(want, "'\xe2\x80\xa6 (300 bytes)");
    assert_string_equal(show(&w, mk_bytes(&w, raw, 300)), want);

    uint8_t *t = obj(&w, w.c.tuple_type, 48);
    put64(t, w.c.L->ob_size, 3);
    assert_string_equal(show(&w, addr_of(t)), "<tuple of length 3>");
    uint8_t *l = obj(&w, w.c.list_type, 48);
    put64(l, w.c.L->ob_size, 0);
    assert_string_equal(show(&w, addr_of(l)), "<list of length 0>");
    uint8_t *d = obj(&w, w.c.dict_type, 64);
    put64(d, w.c.O->di_used, 2);
    assert_string_equal(show(&w, addr_of(d)), "<dict of length 2>");

    /* a class named like a builtin is an object like any other */
    uint64_t fake_int = new_type("int");
    uint8_t *fi = obj(&w, fake_int, 32);
    snprintf(want, sizeof want, "<int at 0x%llx>", (unsigned long long)addr_of(fi));
    assert_string_equal(show(&w, addr_of(fi)), want);
    uint8_t *foo = obj(&w, new_type("mod.Foo"), 32);
    snprintf(want, sizeof want, "<mod.Foo at 0x%llx>", (unsigned long long)addr_of(foo));
    assert_string_equal(show(&w, addr_of(foo)), want);
    pymem_cleanup(&w.mem);
}

static void test_kinds_310(void **state)
{
    check_kinds(10);
}

static void test_kinds_312(void **state)
{
    check_kinds(12);
}

static void expect_unreadable(world *w, uint64_t addr)
{
    char want[64];
    snprintf(want, sizeof want, "<unreadable at 0x%llx>", (unsigned long long)addr);
    assert_int_equal(pyval_format(&w->c, addr, w->text, sizeof w->text), -1);
    assert_string_equal(w->text, want);
}

static void test_unreadable(void **state)
{
    world w;
    setup_world(&w, 12);
    uint8_t *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(page != MAP_FAILED);
    expect_unreadable(&w, addr_of(page));
    expect_unreadable(&w, 0);
    expect_unreadable(&w, mk_small(&w, 5) + 4); /* misaligned */

    uint32_t big_digit = 1u << 30;
    expect_unreadable(&w, mk_int(&w, w.c.long_type, 1, &big_digit, 1));
    uint32_t two = 2;
    expect_unreadable(&w, mk_int(&w, w.c.bool_type, 1, &two, 1));
    uint8_t *bad_tag = obj(&w, w.c.long_type, 32);
    put64(bad_tag, w.c.O->lo_tag, 3); /* sign 3 does not exist */
    expect_unreadable(&w, addr_of(bad_tag));

    uint32_t high[] = {'a', 0xe9};
    expect_unreadable(&w, mk_str(&w, high, 2, 1, 1)); /* "ASCII" with a byte above 0x7f */
    uint64_t s = mk_ascii(&w, "kind");
    uint32_t st;
    memcpy(&st, (void *)(uintptr_t)(s + w.c.L->u_state), 4);
    st = (st & ~(7u << w.c.L->u_kind_shift)) | 3u << w.c.L->u_kind_shift;
    memcpy((void *)(uintptr_t)(s + w.c.L->u_state), &st, 4);
    expect_unreadable(&w, s);

    uint8_t *neg = obj(&w, w.c.list_type, 48);
    put64(neg, w.c.L->ob_size, (uint64_t)-1);
    expect_unreadable(&w, addr_of(neg));
    /* an object whose type's name lies in memory that is gone */
    uint8_t *nameless = alloc_obj(512);
    put64(nameless, 24, addr_of(page));
    expect_unreadable(&w, addr_of(obj(&w, addr_of(nameless), 32)));
    /* bytes whose data runs into the unreadable page */
    uint8_t *edge = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(edge != MAP_FAILED);
    assert_int_equal(mprotect(edge + 4096, 4096, PROT_NONE), 0);
    uint8_t *b = edge + 4096 - 64;
    put64(b, w.c.L->ob_type, w.c.bytes_type);
    put64(b, w.c.L->ob_size, 90);
    expect_unreadable(&w, addr_of(b));
    munmap(edge, 8192);
    munmap(page, 4096);
    pymem_cleanup(&w.mem);
}

static void test_tables(void **state)
{
    for (unsigned minor = 8; minor <= 13; minor++) {
        const py_vallayout *V = py_vallayout_for_minor(minor);
        assert_non_null(V);
        assert_int_equal(V->minor, minor);
        /* frames keep locals in frame objects before 3.11, in
         * interpreter frames after */
        assert_int_equal(V->fo_localsplus != PY_OFF_NONE, minor <= 10);
        assert_int_equal(V->if_localsplus != PY_OFF_NONE, minor >= 11);
        /* closures: cell and free names before 3.11, kind bits after */
        assert_int_equal(V->co_cellvars != PY_OFF_NONE, minor <= 10);
        assert_int_equal(V->co_freevars != PY_OFF_NONE, minor <= 10);
        assert_int_equal(V->fast_cell != 0 && V->fast_free != 0, minor >= 11);
        assert_true(V->ce_ref != PY_OFF_NONE && V->ce_ref > 0);
    }
    assert_null(py_vallayout_for_minor(7));
    assert_null(py_vallayout_for_minor(14));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds_310),
        cmocka_unit_test(test_kinds_312),
        cmocka_unit_test(test_unreadable),
        cmocka_unit_test(test_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
