/*
 * test_fuzz_replay.c — deterministic mutation testing of the public
 * reader (spec §8: every byte of the input is hostile).  Every fixture
 * (fixtures/valid, invalid, gpu), every saved fuzz finding in
 * fixtures/fuzz/ and a few traces written here with the writer
 * get seeded mutations from tests/support/fuzz_mutate.c: raw byte damage,
 * truncation, chunk duplication/removal/reordering, header fields
 * (huge lengths) behind a recomputed header CRC, and record-level damage
 * behind re-deflated payloads with fixed CRCs.  Each mutant is read to
 * the end; the test checks that reading ends (bounded event count), ends
 * with an allowed status and a message, every event's references resolve
 * (what converters rely on), raw damage in a valid trace is reported, and
 * no single allocation exceeds 64 MiB (trc_alloc_largest).  The fixtures
 * and the saved findings also go through every target of
 * tests/support/fuzz_sinks.h: the chunk and record layers, the reader
 * with trc-dump, and every converter sink, as the libFuzzer harnesses
 * (tests/fuzz/) feed them.  Crashes show up as test failures under
 * `make asan`.
 */
#include <glob.h>
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
#include "tests/support/fuzz_mutate.h"
#include "tests/support/fuzz_sinks.h"
#include "tests/support/trace_builder.h"

#define MUTANTS_PER_INPUT 1000
#define MAX_EVENTS 200000u
#define ALLOC_CAP ((size_t)64 << 20)

typedef struct input {
    char name[256];
    uint8_t *p;
    size_t len;
    int valid;               /* reads without any loss: raw damage must be reported */
} input;

typedef struct outcome {
    trc_status st;
    uint64_t events, reader_losses;
} outcome;

static const char *root(void)
{
    const char *r = getenv("TRC_ROOT");
    return r && *r ? r : ".";
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *p = NULL;
    size_t cap = 0, n = 0, got;
    assert_non_null(f);
    do {
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            p = realloc(p, cap);
            assert_non_null(p);
        }
        got = fread(p + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    *len = n;
    return p;
}

/* Read p[0..len) to the end with the public reader; every check above
 * on every event.  max_read > 0 reads in pieces like a pipe. */
static outcome read_checked(const uint8_t *p, size_t len, size_t max_read, const char *ctx)
{
    tb_src src = {p, len, 0, max_read};
    outcome o = {0};
    const trc_event *ev;
    trc_reader *r;

    trc_alloc_fail_after(-1);  /* also resets trc_alloc_largest() */
    r = trc_reader_open_callback(tb_read, &src, "mem.trc", &o.st);
    if (!r) {
        if (o.st != TRC_ERR_NOT_TRC && o.st != TRC_ERR_VERSION)
            fail_msg("%s: open failed with %s", ctx, trc_status_str(o.st));
        return o;
    }
    while ((o.st = trc_reader_next(r, &ev)) == TRC_OK) {
        char why[512];
        if (!ev)
            fail_msg("%s: TRC_OK with no event", ctx);
        if (fs_check_event(r, ev, why, sizeof why) != 0)
            fail_msg("%s: %s", ctx, why);
        if (ev->type == TRC_EV_LOSS && ev->u.loss.from_reader)
            o.reader_losses++;
        if (++o.events > MAX_EVENTS)
            fail_msg("%s: more than %u events from %zu bytes: reader loops", ctx, MAX_EVENTS, len);
    }
    if (o.st != TRC_ERR_EOF && o.st != TRC_ERR_NOT_TRC && o.st != TRC_ERR_VERSION &&
        o.st != TRC_ERR_CORRUPT && o.st != TRC_ERR_TRUNCATED && o.st != TRC_ERR_LIMIT)
        fail_msg("%s: reading ended with %s", ctx, trc_status_str(o.st));
    if (o.st != TRC_ERR_EOF) {
        const char *e = trc_reader_error(r);
        if (!e || !*e)
            fail_msg("%s: ended with %s but no message", ctx, trc_status_str(o.st));
    }
    /* a second call after the end must stay at the end */
    if (o.st == TRC_ERR_EOF && trc_reader_next(r, &ev) != TRC_ERR_EOF)
        fail_msg("%s: reader did not stay at EOF", ctx);
    trc_reader_free(r);
    if (trc_alloc_largest() > ALLOC_CAP)
        fail_msg("%s: one allocation of %zu bytes from a %zu-byte input", ctx, trc_alloc_largest(), len);
    return o;
}

typedef struct tally {
    size_t mutants, reported, raw_damage, crc_fixed_read;
} tally;

static tally mutate_input(const input *in, int count)
{
    tally t = {0};
    for (int i = 0; i < count; i++) {
        uint64_t seed = (uint64_t)i + 1;
        int rounds = 1 + (int)(seed % 4 == 0) + (int)(seed % 8 == 0);
        size_t n;
        fm_info info;
        char ctx[512];
        uint8_t *m = fm_mutate(in->p, in->len, seed, rounds, &n, &info);
        assert_non_null(m);
        snprintf(ctx, sizeof ctx, "%s seed %llu (%s)", in->name, (unsigned long long)seed, info.what);
        outcome o = read_checked(m, n, seed % 5 == 0 ? 1 + seed % 7 : 0, ctx);
        if (in->valid && info.raw_damage && o.st == TRC_ERR_EOF && o.reader_losses == 0)
            fail_msg("%s: raw damage inside a chunk went unreported", ctx);
        t.mutants++;
        t.reported += o.st != TRC_ERR_EOF || o.reader_losses > 0;
        t.raw_damage += in->valid && info.raw_damage;
        t.crc_fixed_read += info.crc_fixed && o.st == TRC_ERR_EOF && o.events > 0;
        free(m);
    }
    return t;
}

static void load_glob(const char *pattern, input **v, size_t *n)
{
    char pat[512];
    glob_t g;
    snprintf(pat, sizeof pat, "%s/%s", root(), pattern);
    if (glob(pat, 0, NULL, &g) != 0)
        return;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        input *x;
        *v = realloc(*v, (*n + 1) * sizeof **v);
        assert_non_null(*v);
        x = &(*v)[(*n)++];
        memset(x, 0, sizeof *x);
        snprintf(x->name, sizeof x->name, "%s", g.gl_pathv[i] + strlen(root()) + 1);
        x->p = slurp(g.gl_pathv[i], &x->len);
    }
    globfree(&g);
}

static void free_inputs(input *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i].p);
    free(v);
}

/* An input is "valid" when it reads with no reader-made loss at all. */
static void classify(input *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        outcome o = read_checked(v[i].p, v[i].len, 0, v[i].name);
        v[i].valid = o.st == TRC_ERR_EOF && o.reader_losses == 0 && v[i].len > 0;
    }
}

static void run_fixture_dir(const char *pattern, int expect_some)
{
    input *v = NULL;
    size_t n = 0;
    load_glob(pattern, &v, &n);
    if (expect_some)
        assert_true(n > 0);
    classify(v, n);
    tally all = {0};
    for (size_t i = 0; i < n; i++) {
        tally t = mutate_input(&v[i], MUTANTS_PER_INPUT);
        all.mutants += t.mutants;
        all.reported += t.reported;
        all.raw_damage += t.raw_damage;
        all.crc_fixed_read += t.crc_fixed_read;
    }
    print_message("%s: %zu mutants, %zu reported damage, %zu raw-damage checks, %zu CRC-fixed read to the end\n",
                  pattern, all.mutants, all.reported, all.raw_damage, all.crc_fixed_read);
    /* the mutations must hurt and must also get past the CRCs */
    if (n) {
        assert_true(all.reported > all.mutants / 4);
        assert_true(all.crc_fixed_read > all.mutants / 10);
    }
    free_inputs(v, n);
}

static void test_valid_fixtures(void **state)
{
    run_fixture_dir("fixtures/valid/*.trc", 1);
}

static void test_invalid_fixtures(void **state)
{
    run_fixture_dir("fixtures/invalid/*.trc", 1);
}

static void test_gpu_fixtures(void **state)
{
    run_fixture_dir("fixtures/gpu/*.trc", 1);
}

/* Every target of fuzz_sinks.h (reader, trc-dump, each converter sink)
 * on one input: no invariant broken, no allocation over the cap (and,
 * under ASan, no crash).  Output goes to /dev/null. */
static void run_targets(const input *in, int trc_input)
{
    static FILE *devnull;
    char why[512];
    if (!devnull)
        devnull = fopen("/dev/null", "w");
    assert_non_null(devnull);
    for (size_t t = 0; t < fs_n_targets; t++) {
        if (fs_targets[t].trc_input != trc_input)
            continue;
        if (fs_run(&fs_targets[t], in->p, in->len, devnull, why, sizeof why) != 0)
            fail_msg("%s through %s: %s", in->name, fs_targets[t].name, why);
    }
}

/* Saved fuzz findings (fixtures/fuzz/, tests/fuzz/README.md): every .trc
 * through every target, read whole and piecewise, and mutated a little
 * further; every .bin (a decoded chunk payload from fuzz_records)
 * through the record decoders. */
static void test_fuzz_findings(void **state)
{
    input *v = NULL;
    size_t n = 0;
    load_glob("fixtures/fuzz/*.trc", &v, &n);
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        run_targets(&v[i], 1);
        read_checked(v[i].p, v[i].len, 0, v[i].name);
        read_checked(v[i].p, v[i].len, 3, v[i].name);
        mutate_input(&v[i], 32);
    }
    free_inputs(v, n);
    v = NULL;
    n = 0;
    load_glob("fixtures/fuzz/*.bin", &v, &n);
    for (size_t i = 0; i < n; i++)
        run_targets(&v[i], 0);
    free_inputs(v, n);
}

/* The fixtures themselves through every target (what the seed corpora
 * of `make fuzz` start from must pass). */
static void test_fixture_targets(void **state)
{
    const char *dirs[] = {"fixtures/valid/*.trc", "fixtures/invalid/*.trc", "fixtures/gpu/*.trc"};
    for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
        input *v = NULL;
        size_t n = 0;
        load_glob(dirs[d], &v, &n);
        assert_true(n > 0);
        for (size_t i = 0; i < n; i++)
            run_targets(&v[i], 1);
        free_inputs(v, n);
    }
}

static trc_writer *open_mem(tb_buf *b, int level, uint32_t chunk_bytes)
{
    trc_writer_options o;
    trc_status st;
    trc_writer *w;
    memset(&o, 0, sizeof o);
    o.start_ns = 5000;
    o.wall_ns = 7000;
    o.host = "fuzzhost";
    o.recorder = "test_fuzz_replay";
    o.chunk_bytes = chunk_bytes;
    o.compression_level = level;
    w = trc_writer_open_callback(tb_write, b, &o, &st);
    assert_non_null(w);
    return w;
}

/* A GPU-heavy trace with every record type, small chunks. */
static void gpu_trace(tb_buf *b, int level)
{
    trc_writer *w = open_mem(b, level, 512);
    uint32_t th, fr[3], st[3], cnt;
    int64_t t = 10000;
    trc_process p = {0, 42, 1, "/usr/bin/python3", "CPython 3.12.1", "python3 train.py", 9000, -1, "", ""};
    trc_gpu_device d = {0, "Fake GPU", {1, 2, 3}, 80, 1u << 30, 9, 0};
    trc_gpu_context c = {42, 0, 1};
    trc_gpu_stream s = {42, 0, 1, 7, -1, TRC_STREAM_NON_BLOCKING, "main"};

    assert_int_equal(trc_writer_process(w, &p), TRC_OK);
    assert_int_equal(trc_writer_thread(w, 42, 43, "MainThread", &th), TRC_OK);
    assert_int_equal(trc_writer_frame(w, TRC_FRAME_PYTHON, "main", "train.py", 3, 1, &fr[0]), TRC_OK);
    assert_int_equal(trc_writer_frame(w, TRC_FRAME_PYTHON, "step", "train.py", 9, 8, &fr[1]), TRC_OK);
    assert_int_equal(trc_writer_frame(w, TRC_FRAME_NATIVE, "cudaLaunchKernel", "", 0, 0, &fr[2]), TRC_OK);
    assert_int_equal(trc_writer_stack(w, 0, fr[0], &st[0]), TRC_OK);
    assert_int_equal(trc_writer_stack(w, st[0], fr[1], &st[1]), TRC_OK);
    assert_int_equal(trc_writer_stack(w, st[1], fr[2], &st[2]), TRC_OK);
    assert_int_equal(trc_writer_counter_def(w, "gpu.util", "percent", -1, 0, &cnt), TRC_OK);
    assert_int_equal(trc_writer_gpu_device(w, &d), TRC_OK);
    assert_int_equal(trc_writer_gpu_context(w, &c), TRC_OK);
    assert_int_equal(trc_writer_gpu_stream(w, &s), TRC_OK);
    for (int i = 0; i < 40; i++, t += 1000) {
        trc_gpu_where wh = {42, 0, 1, 7, (uint32_t)i + 1};
        trc_api_call a = {th, t, t + 300, TRC_API_RUNTIME, "cudaLaunchKernel", (uint32_t)i + 1,
                          st[i % 3], 0, TRC_API_LAUNCH, 0, 0, 0};
        trc_gpu_kernel k = {wh, t + 400, t + 900, i % 2 ? "gemm" : "relu", {4, 1, 1}, {128, 1, 1}, 32, 0, 1024, 0, 0};
        trc_gpu_memcpy mc = {wh, t + 100, t + 200, 4096, TRC_COPY_HTOD, TRC_MEM_PINNED, TRC_MEM_DEVICE, 0};
        trc_gpu_memset ms = {wh, t + 200, t + 250, 512, 0, TRC_MEM_DEVICE};
        trc_gpu_sync sy = {wh, t + 900, t + 950, TRC_SYNC_STREAM};
        trc_marker mk = {i % 4 == 3 ? TRC_MARK_POP : TRC_MARK_PUSH, th, 42, t, t, "epoch", "nvtx", 0xff0000, 0};
        trc_clock_sync cs = {TRC_CLOCK_GPU, 0, t, t * 2};
        assert_int_equal(trc_writer_sample(w, t, th, st[i % 3], TRC_SAMPLE_ON_CPU, 0), TRC_OK);
        assert_int_equal(trc_writer_api_call(w, &a), TRC_OK);
        assert_int_equal(trc_writer_gpu_kernel(w, &k), TRC_OK);
        assert_int_equal(trc_writer_gpu_memcpy(w, &mc), TRC_OK);
        assert_int_equal(trc_writer_gpu_memset(w, &ms), TRC_OK);
        assert_int_equal(trc_writer_gpu_sync(w, &sy), TRC_OK);
        assert_int_equal(trc_writer_marker(w, &mk), TRC_OK);
        assert_int_equal(trc_writer_counter(w, cnt, t, i * 1.5), TRC_OK);
        if (i % 10 == 0)
            assert_int_equal(trc_writer_clock_sync(w, &cs), TRC_OK);
    }
    trc_loss l = {TRC_LOSS_GPU_DROPPED, 3, 42, th, t, t + 10, 0, "buffer full", 0};
    trc_process_exit e = {42, t + 100, 0, 0};
    assert_int_equal(trc_writer_loss(w, &l), TRC_OK);
    assert_int_equal(trc_writer_process_exit(w, &e), TRC_OK);
    assert_int_equal(trc_writer_close(w, t + 200), TRC_OK);
}

static void run_memory(const char *name, tb_buf *b, int count)
{
    input in;
    memset(&in, 0, sizeof in);
    snprintf(in.name, sizeof in.name, "%s", name);
    in.p = b->p;
    in.len = b->len;
    classify(&in, 1);
    assert_true(in.valid);
    tally t = mutate_input(&in, count);
    print_message("%s: %zu mutants, %zu reported damage, %zu raw-damage checks\n", name, t.mutants,
                  t.reported, t.raw_damage);
    assert_true(t.raw_damage > 0);
    assert_true(t.reported > t.mutants / 4);
}

static void test_written_traces(void **state)
{
    tb_buf b;
    memset(&b, 0, sizeof b);
    assert_int_equal(tb_standard_trace(&b, 200, 1024, 6), TRC_OK);
    run_memory("standard(deflate)", &b, 1000);
    tb_buf_free(&b);
    memset(&b, 0, sizeof b);
    assert_int_equal(tb_standard_trace(&b, 200, 2048, 0), TRC_OK);
    run_memory("standard(stored)", &b, 1000);
    tb_buf_free(&b);
    memset(&b, 0, sizeof b);
    gpu_trace(&b, 6);
    run_memory("gpu(deflate)", &b, 1500);
    tb_buf_free(&b);
    memset(&b, 0, sizeof b);
    gpu_trace(&b, 0);
    run_memory("gpu(stored)", &b, 1000);
    tb_buf_free(&b);
}

/* The mutator itself: deterministic, and CRC-fixed mutants still pass
 * the chunk checks often enough to reach the record decoders. */
static void test_mutator_deterministic(void **state)
{
    tb_buf b;
    size_t n1, n2, reached = 0, fixed = 0;
    fm_info info;
    memset(&b, 0, sizeof b);
    gpu_trace(&b, 6);
    for (uint64_t seed = 1; seed <= 200; seed++) {
        uint8_t *m1 = fm_mutate(b.p, b.len, seed, 1, &n1, &info);
        uint8_t *m2 = fm_mutate(b.p, b.len, seed, 1, &n2, NULL);
        assert_int_equal(n1, n2);
        assert_memory_equal(m1, m2, n1);
        if (info.crc_fixed && strstr(info.what, "payload")) {
            outcome o;
            fixed++;
            o = read_checked(m1, n1, 0, info.what);
            /* a CRC-fixed payload chunk is never reported as a bad CRC:
             * count mutants that read with events past the damage */
            if (o.events > 10)
                reached++;
        }
        free(m1);
        free(m2);
    }
    assert_true(fixed > 20);
    assert_true(reached > fixed / 2);
    tb_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mutator_deterministic),
        cmocka_unit_test(test_valid_fixtures),
        cmocka_unit_test(test_invalid_fixtures),
        cmocka_unit_test(test_gpu_fixtures),
        cmocka_unit_test(test_written_traces),
        cmocka_unit_test(test_fixture_targets),
        cmocka_unit_test(test_fuzz_findings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
