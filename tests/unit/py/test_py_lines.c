/*
 * test_py_lines.c — lib/py/py_lines.c against CPython itself: every
 * interpreter found dumps real line tables with its own offset→line
 * answers (fixtures/workloads/py_linetables.py: co_lines() on 3.10+,
 * dis.findlinestarts() before), and each table decoded here must give
 * the same line at every instruction offset.  Plus hand-made edge cases
 * and random tables (must decode or fail cleanly, never read outside).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/py/py_layout.h"
#include "lib/py/py_lines.h"
#include "tests/support/pyself/py_testutil.h"
#include "lib/util/alloc.h"

typedef struct code {
    int first;
    long codelen;
    uint8_t *tab;
    size_t ntab;
    long (*ranges)[3];   /* start, end, line (3.10+) or offset, line, - */
    int nr, cap;
} code;

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int lines_kind(int minor)
{
    return minor <= 9 ? PY_LINES_LNOTAB : minor == 10 ? PY_LINES_310 : PY_LINES_LOCATIONS;
}

/* Compares one code object; returns the number of mismatching offsets. */
static long check_code(const code *c, int minor)
{
    py_lineent *m;
    uint32_t n;
    long bad = 0;

    if (py_lines_decode(lines_kind(minor), c->tab, c->ntab, c->first, &m, &n) != 0) {
        fprintf(stderr, "decode failed (first line %d, %zu bytes)\n", c->first, c->ntab);
        return 1;
    }
    for (long off = 0; off < c->codelen; off += 2) {
        long want = -2;
        if (minor >= 10) {
            for (int i = 0; i < c->nr; i++)
                if (off >= c->ranges[i][0] && off < c->ranges[i][1])
                    want = c->ranges[i][2] < 0 ? 0 : c->ranges[i][2];
            if (want == -2)
                continue;   /* CPython gives no range here either */
        } else {
            want = c->first;
            for (int i = 0; i < c->nr; i++)
                if (c->ranges[i][0] <= off)
                    want = c->ranges[i][1];
        }
        uint32_t got = py_lines_lookup(m, n, off, c->first);
        if ((long)got != want) {
            if (bad < 3)
                fprintf(stderr, "offset %ld: got line %u, CPython says %ld (first %d)\n", off, got,
                        want, c->first);
            bad++;
        }
    }
    if (py_lines_lookup(m, n, -2, c->first) != (uint32_t)(c->first > 0 ? c->first : 0))
        bad++;
    trc_free(m);
    return bad;
}

static void check_interpreter(const char *py, const char *script, long *ncodes, long *nbad)
{
    char cmd[PATH_MAX * 2 + 8];
    int minor = -1;
    code c = { 0 };
    int have = 0;

    snprintf(cmd, sizeof cmd, "'%s' '%s'", py, script);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    size_t cap = 1 << 20;
    char *line = malloc(cap);
    assert_non_null(line);
    while (fgets(line, (int)cap, f)) {
        int major;
        if (sscanf(line, "V %d %d", &major, &minor) == 2)
            continue;
        if (line[0] == 'C') {
            if (have) {
                (*ncodes)++;
                *nbad += check_code(&c, minor) != 0;
            }
            free(c.tab);
            c.nr = 0;
            char hex[16];
            int pos = 0;
            assert_int_equal(sscanf(line, "C %d %ld %n%15s", &c.first, &c.codelen, &pos, hex), 3);
            const char *h = line + pos;
            size_t hl = strcspn(h, "\n");
            c.tab = malloc(hl / 2 + 1);
            c.ntab = 0;
            if (strncmp(h, "-", 1) != 0)
                for (size_t i = 0; i + 1 < hl; i += 2)
                    c.tab[c.ntab++] = (uint8_t)(hexval(h[i]) * 16 + hexval(h[i + 1]));
            have = 1;
            continue;
        }
        long a = 0, b = 0, l = 0;
        int k = line[0] == 'R' ? sscanf(line, "R %ld %ld %ld", &a, &b, &l)
                               : sscanf(line, "S %ld %ld", &a, &b);
        if (k < 2)
            continue;
        if (c.nr == c.cap) {
            c.cap = c.cap ? c.cap * 2 : 64;
            c.ranges = realloc(c.ranges, sizeof *c.ranges * (size_t)c.cap);
        }
        c.ranges[c.nr][0] = a;
        c.ranges[c.nr][1] = b;
        c.ranges[c.nr][2] = l;
        c.nr++;
    }
    if (have) {
        (*ncodes)++;
        *nbad += check_code(&c, minor) != 0;
    }
    free(c.tab);
    free(c.ranges);
    free(line);
    assert_int_equal(pclose(f), 0);
    assert_true(minor >= 8);
}

static void test_against_cpython(void **state)
{
    pyt_list l;
    char script[PATH_MAX];

    pyt_repo_path(script, sizeof script, "fixtures/workloads/py_linetables.py");
    pyt_find(&l);
    if (l.n == 0)
        skip();
    long total_bad = 0;
    for (int i = 0; i < l.n; i++) {
        long ncodes = 0, nbad = 0;
        check_interpreter(l.path[i], script, &ncodes, &nbad);
        printf("%s: %ld code objects, %ld disagree\n", l.path[i], ncodes, nbad);
        assert_true(ncodes > 300);
        total_bad += nbad;
    }
    assert_int_equal(total_bad, 0);
}

static void test_hand_made(void **state)
{
    py_lineent *m;
    uint32_t n;

    /* lnotab: +2 bytes/+1 line, +0/-1 (negative delta), +4/+3 */
    const uint8_t lno[] = { 2, 1, 0, 0xff, 4, 3 };
    assert_int_equal(py_lines_decode(PY_LINES_LNOTAB, lno, sizeof lno, 10, &m, &n), 0);
    assert_int_equal(py_lines_lookup(m, n, 0, 10), 10);
    assert_int_equal(py_lines_lookup(m, n, 2, 10), 10);   /* 10+1-1 */
    assert_int_equal(py_lines_lookup(m, n, 6, 10), 13);
    assert_int_equal(py_lines_lookup(m, n, 1000, 10), 13);
    trc_free(m);

    /* 3.10: 4 bytes at +1, 2 bytes with no line, 2 bytes at +2 */
    const uint8_t l310[] = { 4, 1, 2, 0x80, 2, 2 };
    assert_int_equal(py_lines_decode(PY_LINES_310, l310, sizeof l310, 5, &m, &n), 0);
    assert_int_equal(py_lines_lookup(m, n, 0, 5), 6);
    assert_int_equal(py_lines_lookup(m, n, 4, 5), 0);
    assert_int_equal(py_lines_lookup(m, n, 6, 5), 8);
    assert_int_equal(py_lines_lookup(m, n, 8, 5), 0);     /* past the end */
    trc_free(m);

    /* 3.11+: short form (same line, 1 unit), one-line form +1 (2 units),
     * long form -1 (1 unit), no location (1 unit), no-column form +5 */
    const uint8_t loc[] = {
        0x80 | (0 << 3) | 0, 0x05,
        0x80 | (11 << 3) | 1, 3, 7,
        0x80 | (14 << 3) | 0, 0x03, 0x00, 0x01, 0x01,
        0x80 | (15 << 3) | 0,
        0x80 | (13 << 3) | 0, 0x0a,
    };
    assert_int_equal(py_lines_decode(PY_LINES_LOCATIONS, loc, sizeof loc, 20, &m, &n), 0);
    assert_int_equal(py_lines_lookup(m, n, 0, 20), 20);
    assert_int_equal(py_lines_lookup(m, n, 2, 20), 21);
    assert_int_equal(py_lines_lookup(m, n, 4, 20), 21);
    assert_int_equal(py_lines_lookup(m, n, 6, 20), 20);
    assert_int_equal(py_lines_lookup(m, n, 8, 20), 0);
    assert_int_equal(py_lines_lookup(m, n, 10, 20), 25);
    assert_int_equal(py_lines_lookup(m, n, 12, 20), 0);
    trc_free(m);

    /* malformed: continuation byte first, varint running off the end */
    const uint8_t bad1[] = { 0x05 };
    const uint8_t bad2[] = { 0x80 | (13 << 3), 0x41 };
    assert_int_equal(py_lines_decode(PY_LINES_LOCATIONS, bad1, sizeof bad1, 1, &m, &n), -1);
    assert_int_equal(py_lines_decode(PY_LINES_LOCATIONS, bad2, sizeof bad2, 1, &m, &n), -1);
    assert_int_equal(py_lines_decode(99, bad1, 1, 1, &m, &n), -1);
    /* empty tables */
    assert_int_equal(py_lines_decode(PY_LINES_LNOTAB, NULL, 0, 7, &m, &n), 0);
    assert_int_equal(py_lines_lookup(m, n, 40, 7), 7);
    trc_free(m);
}

static void test_random_tables(void **state)
{
    uint8_t buf[256];
    uint32_t seed = 12345;

    for (int it = 0; it < 30000; it++) {
        size_t len = (size_t)(seed % sizeof buf);
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = (uint8_t)(seed >> 16);
        }
        if (it % 3 == 2 && len)
            buf[0] |= 0x80;
        py_lineent *m;
        uint32_t n;
        uint8_t *copy = malloc(len ? len : 1);   /* exact size: ASan sees overreads */
        memcpy(copy, buf, len);
        if (py_lines_decode(1 + it % 3, copy, len, (int)(seed % 1000), &m, &n) == 0) {
            assert_true(n >= 1);
            for (uint32_t i = 1; i < n; i++)
                assert_true(m[i].start > m[i - 1].start);
            py_lines_lookup(m, n, (int64_t)(seed % 600), 1);
            trc_free(m);
        }
        free(copy);
    }
}

static void test_alloc_failure(void **state)
{
    const uint8_t l310[] = { 4, 1, 2, 0x80, 2, 2, 2, 3, 2, 4 };
    py_lineent *m;
    uint32_t n;

    for (long k = 1; k < 8; k++) {
        trc_alloc_fail_after(k);
        int rc = py_lines_decode(PY_LINES_310, l310, sizeof l310, 5, &m, &n);
        trc_alloc_fail_after(-1);
        if (rc == 0)
            trc_free(m);
        else
            assert_int_equal(errno, ENOMEM);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_cpython),
        cmocka_unit_test(test_hand_made),
        cmocka_unit_test(test_random_tables),
        cmocka_unit_test(test_alloc_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
