/*
 * test_spec_examples.c — the worked examples of spec/trc-format.md §11
 * are real: read the spec at run time, take every fenced block
 *
 *     ```hex example=NAME          lines "OFFSET: xx xx ...  # comment"
 *     ...                          (offsets consecutive from 0000; any
 *                                  number of bytes per line)
 *     ```
 *     ```expect example=NAME       one line per event, in the format of
 *     ...                          `trc-dump --events` (lib/dump/dump_events.c)
 *     ```
 *
 * and check (1) by hand, with zlib's crc32 and no libtrc code, that the
 * bytes are chunks laid end to end whose header fields and both CRCs
 * agree with spec §4; and (2) that libtrc's reader decodes them into
 * exactly the events the `expect` block lists, with no damage.
 *
 * The spec is found at $TRC_ROOT/spec/trc-format.md, else
 * ./spec/trc-format.md (tests run from the repository root).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "trc/trc.h"
#include "lib/dump/dump.h"

#define MAX_EXAMPLES 16

typedef struct example {
    char name[64];
    unsigned char *bytes;
    size_t n;
    char *expect;          /* lines joined with '\n', each ending in '\n' */
    int have_hex, have_expect;
} example;

static example examples[MAX_EXAMPLES];
static size_t n_examples;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n + 1);
        if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n)
            buf[n] = '\0';
        else {
            free(buf);
            buf = NULL;
        }
    }
    fclose(f);
    return buf;
}

static example *find(const char *name)
{
    size_t i;
    for (i = 0; i < n_examples; i++)
        if (strcmp(examples[i].name, name) == 0)
            return &examples[i];
    assert_true(n_examples < MAX_EXAMPLES);
    snprintf(examples[n_examples].name, sizeof examples[n_examples].name, "%s", name);
    return &examples[n_examples++];
}

/* One "OFFSET: xx xx ..." line appended to e; fails the test on a
 * malformed line or an offset that does not continue the block. */
static void hex_line(example *e, const char *line)
{
    char *end;
    unsigned long off = strtoul(line, &end, 16);
    const char *p = end;

    if (*p != ':')
        fail_msg("example %s: bad hex line '%s'", e->name, line);
    if (off != e->n)
        fail_msg("example %s: offset %04lx, expected %04zx", e->name, off, e->n);
    p++;
    for (;;) {
        unsigned v;
        int used;
        while (*p == ' ')
            p++;
        if (*p == '\0' || *p == '\n' || *p == '#')
            break;
        if (sscanf(p, "%2x%n", &v, &used) != 1 || used != 2)
            fail_msg("example %s: bad byte in '%s'", e->name, line);
        e->bytes = realloc(e->bytes, e->n + 1);
        assert_non_null(e->bytes);
        e->bytes[e->n++] = (unsigned char)v;
        p += 2;
    }
}

static void parse_spec(void **state)
{
    const char *root = getenv("TRC_ROOT");
    char path[4096];
    char *text, *line, *save = NULL;
    example *cur = NULL;
    int kind = 0;      /* 0 prose, 1 hex, 2 expect */

    snprintf(path, sizeof path, "%s/spec/trc-format.md", root && *root ? root : ".");
    text = slurp(path);
    if (!text)
        fail_msg("cannot read %s (set TRC_ROOT or run from the repository root)", path);
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        const char *tag;
        if (kind == 0) {
            if (strncmp(line, "```hex example=", 15) == 0)
                kind = 1, tag = line + 15;
            else if (strncmp(line, "```expect example=", 18) == 0)
                kind = 2, tag = line + 18;
            else
                continue;
            cur = find(tag);
            if ((kind == 1 && cur->have_hex) || (kind == 2 && cur->have_expect))
                fail_msg("example %s: two %s blocks", tag, kind == 1 ? "hex" : "expect");
            if (kind == 1)
                cur->have_hex = 1;
            else
                cur->have_expect = 1;
            continue;
        }
        if (strncmp(line, "```", 3) == 0) {
            kind = 0;
            continue;
        }
        if (kind == 1) {
            hex_line(cur, line);
        } else {
            size_t have = cur->expect ? strlen(cur->expect) : 0, add = strlen(line);
            cur->expect = realloc(cur->expect, have + add + 2);
            assert_non_null(cur->expect);
            memcpy(cur->expect + have, line, add);
            cur->expect[have + add] = '\n';
            cur->expect[have + add + 1] = '\0';
        }
    }
    free(text);
    if (kind != 0)
        fail_msg("unterminated fenced block in %s", path);
    (void)state;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* Spec §4 checked by hand: magic, version, kind, lengths, CRCs, sequence
 * numbers, chunks laid end to end. */
static void check_chunks(const example *e)
{
    size_t off = 0;
    uint64_t expect_seq = 0;

    while (off < e->n) {
        const unsigned char *h = e->bytes + off;
        uint32_t stored, decoded;
        if (e->n - off < 40)
            fail_msg("example %s: %zu bytes left at 0x%zx, not a header", e->name, e->n - off, off);
        if (memcmp(h, "\x89TRC", 4) != 0 || h[4] != 1 || h[5] != 4) /* version 1.4 */
            fail_msg("example %s: chunk at 0x%zx: bad magic or version", e->name, off);
        if (h[6] != 1 && h[6] != 2)
            fail_msg("example %s: chunk at 0x%zx: kind %u", e->name, off, h[6]);
        if ((h[7] & 0xfe) != 0)
            fail_msg("example %s: chunk at 0x%zx: reserved flags", e->name, off);
        stored = le32(h + 8);
        decoded = le32(h + 12);
        if (!(h[7] & 1) && stored != decoded)
            fail_msg("example %s: chunk at 0x%zx: stored %u != decoded %u", e->name, off, stored,
                     decoded);
        if (e->n - off - 40 < stored)
            fail_msg("example %s: chunk at 0x%zx: payload runs past the end", e->name, off);
        if (h[6] == 1)
            expect_seq = 0;
        if (le64(h + 16) != expect_seq)
            fail_msg("example %s: chunk at 0x%zx: sequence %llu, expected %llu", e->name, off,
                     (unsigned long long)le64(h + 16), (unsigned long long)expect_seq);
        expect_seq++;
        if (crc32(0, h, 36) != le32(h + 36))
            fail_msg("example %s: chunk at 0x%zx: header CRC", e->name, off);
        if (crc32(0, h + 40, stored) != le32(h + 32))
            fail_msg("example %s: chunk at 0x%zx: payload CRC", e->name, off);
        off += 40 + (size_t)stored;
    }
}

typedef struct membuf {
    const unsigned char *p;
    size_t n, pos;
} membuf;

/* Hands the bytes out 7 at a time, so the reader's buffering is
 * exercised as on a slow pipe. */
static long mem_read(void *ctx, void *buf, size_t len)
{
    membuf *m = ctx;
    size_t k = m->n - m->pos;
    if (k > len)
        k = len;
    if (k > 7)
        k = 7;
    memcpy(buf, m->p + m->pos, k);
    m->pos += k;
    return (long)k;
}

static void check_events(const example *e)
{
    membuf m = { e->bytes, e->n, 0 };
    trc_status st;
    trc_reader *r = trc_reader_open_callback(mem_read, &m, e->name, &st);
    const trc_event *ev;
    char *got = NULL;
    size_t got_len = 0;
    FILE *out;
    trc_reader_stats stats;

    if (!r)
        fail_msg("example %s: open: %s", e->name, trc_status_str(st));
    out = open_memstream(&got, &got_len);
    assert_non_null(out);
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        if (ev->type == TRC_EV_LOSS && ev->u.loss.from_reader)
            fail_msg("example %s: reader found damage: %s", e->name, trc_reader_error(r));
        dump_event_line(out, r, ev);
    }
    fclose(out);
    if (st != TRC_ERR_EOF)
        fail_msg("example %s: %s", e->name, trc_reader_error(r));
    trc_reader_get_stats(r, &stats);
    assert_int_equal(stats.bytes, e->n);
    assert_int_equal(stats.damaged_chunks, 0);
    if (strcmp(got, e->expect) != 0) {
        print_error("example %s: events differ\n--- spec\n%s--- reader\n%s", e->name, e->expect,
                    got);
        fail();
    }
    free(got);
    trc_reader_free(r);
}

static void test_examples(void **state)
{
    size_t i, compressed = 0;

    parse_spec(state);
    /* §11 promises these; losing one from the spec must fail here. */
    assert_non_null(find("minimal")->bytes);
    assert_non_null(find("samples")->bytes);
    assert_non_null(find("compressed")->bytes);
    for (i = 0; i < n_examples; i++) {
        example *e = &examples[i];
        if (!e->have_hex || !e->have_expect || !e->n || !e->expect)
            fail_msg("example %s: needs a non-empty hex block and expect block", e->name);
        check_chunks(e);
        if (e->bytes[7] & 1)
            compressed++;
        check_events(e);
    }
    assert_true(compressed > 0);   /* at least one example shows deflate */
    for (i = 0; i < n_examples; i++) {
        free(examples[i].bytes);
        free(examples[i].expect);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_examples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
