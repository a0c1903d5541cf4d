/*
 * test_convb_export.c — the speedscope and Chrome exporters
 * (lib/export/speedscope/, lib/export/chrome/) on the synthetic traces of
 * tests/support/convb_traces.c, read back with the real reader and
 * selected with the converters' own selection code.  Outputs are parsed
 * with cJSON and checked structurally and against what the generator
 * wrote: per-thread totals, time order, slice nesting (also under
 * speedscope's float arithmetic), metadata, counters, losses; spilling
 * gives identical output; failing the Nth allocation never crashes.
 *
 * Also the generator front end for the e2e tests and the benchmark:
 *   test_convb_export --write-small FILE
 *   test_convb_export --write-big N THREADS FILE
 *   test_convb_export --write-gpu N FILE   (prints what it wrote: flows=N ...)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "lib/util/alloc.h"
#include "lib/export/chrome/chrome.h"
#include "lib/export/speedscope/speedscope.h"
#include "tests/support/convb_traces.h"
#include "tools/common/convert.h"

#define MS 1000000LL

static char small_path[64];
static char big_path[64];
static convb_info small_info, big_info;

static int write_trace(char *path, int big, uint64_t n, uint32_t threads, convb_info *info)
{
    trc_status st;
    int fd;
    strcpy(path, "/tmp/test_convb_XXXXXX");
    fd = mkstemp(path);
    if (fd < 0)
        return -1;
    st = big ? convb_write_big(fd, n, threads, info) : convb_write_small(fd, info);
    close(fd);
    return st == TRC_OK ? 0 : -1;
}

static int setup(void **state)
{
    if (write_trace(small_path, 0, 0, 0, &small_info) ||
        write_trace(big_path, 1, 20000, 3, &big_info))
        return -1;
    return 0;
}

static int teardown(void **state)
{
    unlink(small_path);
    unlink(big_path);
    return 0;
}

/* ---- running an exporter ---------------------------------------------- */

typedef struct run_opts {
    int chrome;
    sscope_options ss;
    chrome_options ch;
    int idle, gil;
    const char *from, *to, *thread;
} run_opts;

/* Convert path with the options; returns the output text (caller frees)
 * or NULL when an exporter call failed (*st says why). */
static char *convert(const char *path, const run_opts *o, trc_status *st_out)
{
    conv_selection sel;
    trc_status st = TRC_OK, rst;
    const trc_event *ev;
    trc_event scratch;
    char *buf = NULL;
    size_t len = 0;
    FILE *out;
    sscope *ss = NULL;
    chrome *ch = NULL;
    trc_reader *r;

    memset(&sel, 0, sizeof sel);
    sel.idle = o->idle;
    sel.gil = o->gil;
    sel.from = o->from;
    sel.to = o->to;
    if (o->thread) {
        sel.threads.items = malloc(sizeof *sel.threads.items);
        assert_non_null(sel.threads.items);
        sel.threads.items[0] = o->thread;
        sel.threads.n = sel.threads.cap = 1;
    }
    conv_selection_prepare(&sel);
    r = trc_reader_open_path(path, &st);
    if (!r) {
        conv_selection_cleanup(&sel);
        *st_out = st;
        return NULL;
    }
    out = open_memstream(&buf, &len);
    assert_non_null(out);
    if (o->chrome)
        ch = chrome_new(&o->ch);
    else
        ss = sscope_new(&o->ss);
    if (!ch && !ss) {
        st = TRC_ERR_NOMEM;
        goto out;
    }
    while ((rst = trc_reader_next(r, &ev)) == TRC_OK) {
        const trc_event *kept = conv_selection_filter(&sel, r, ev, &scratch);
        if (!kept)
            continue;
        st = ch ? chrome_event(ch, r, kept, out) : sscope_event(ss, r, kept);
        if (st != TRC_OK)
            goto out;
    }
    if (rst != TRC_ERR_EOF) {
        st = rst;
        goto out;
    }
    st = ch ? chrome_finish(ch, r, out) : sscope_finish(ss, r, out);
out:
    if (ss && st != TRC_OK && st != TRC_ERR_NOMEM)
        print_error("%s\n", sscope_error(ss));
    chrome_free(ch);
    sscope_free(ss);
    trc_reader_free(r);
    conv_selection_cleanup(&sel);
    fclose(out);
    *st_out = st;
    if (st != TRC_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

static cJSON *convert_json(const char *path, const run_opts *o, char **text)
{
    trc_status st;
    char *s = convert(path, o, &st);
    cJSON *j;
    if (!s)
        print_error("conversion failed: %s\n", trc_status_str(st));
    assert_non_null(s);
    j = cJSON_Parse(s);
    if (!j)
        print_error("cJSON cannot parse the output near: %.80s\n", cJSON_GetErrorPtr());
    assert_non_null(j);
    if (text)
        *text = s;
    else
        free(s);
    return j;
}

static cJSON *get(const cJSON *obj, const char *key)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v)
        print_error("missing key \"%s\"\n", key);
    assert_non_null(v);
    return v;
}

static const char *get_str(const cJSON *obj, const char *key)
{
    cJSON *v = get(obj, key);
    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

static double get_num(const cJSON *obj, const char *key)
{
    cJSON *v = get(obj, key);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

/* ---- speedscope ----------------------------------------------------------- */

/* Structural checks every speedscope document must pass; returns the
 * number of frames. */
static int check_speedscope_doc(const cJSON *doc)
{
    const cJSON *frames, *profiles, *p;
    int nframes;

    assert_string_equal(get_str(doc, "$schema"),
                        "https://www.speedscope.app/file-format-schema.json");
    assert_true(strncmp(get_str(doc, "exporter"), "trc@", 4) == 0);
    frames = get(get(doc, "shared"), "frames");
    assert_true(cJSON_IsArray(frames));
    nframes = cJSON_GetArraySize(frames);
    for (const cJSON *f = frames->child; f; f = f->next) {
        assert_true(cJSON_IsString(get(f, "name")));
        if (cJSON_GetObjectItem(f, "line"))
            assert_true(get_num(f, "line") >= 1);
    }
    profiles = get(doc, "profiles");
    assert_true(cJSON_GetArraySize(profiles) >= 1);
    cJSON_ArrayForEach(p, profiles) {
        const cJSON *samples = get(p, "samples"), *weights = get(p, "weights");
        const cJSON *s, *w;
        double sum = 0;
        assert_string_equal(get_str(p, "type"), "sampled");
        assert_string_equal(get_str(p, "unit"), "nanoseconds");
        assert_int_equal(cJSON_GetArraySize(samples), cJSON_GetArraySize(weights));
        for (s = samples->child, w = weights->child; s && w; s = s->next, w = w->next) {
            const cJSON *idx;
            assert_true(cJSON_IsArray(s));
            cJSON_ArrayForEach(idx, s) {
                assert_true(cJSON_IsNumber(idx));
                assert_true(idx->valuedouble >= 0 && idx->valuedouble < nframes);
                assert_true(idx->valuedouble == floor(idx->valuedouble));
            }
            assert_true(cJSON_IsNumber(w) && w->valuedouble > 0);
            sum += w->valuedouble;
            /* Consecutive entries are merged when identical. */
            if (s->next) {
                char *a = cJSON_PrintUnformatted(s), *b = cJSON_PrintUnformatted(s->next);
                assert_string_not_equal(a, b);
                free(a);
                free(b);
            }
        }
        assert_true(get_num(p, "endValue") - get_num(p, "startValue") == sum);
    }
    return nframes;
}

static const cJSON *profile_named(const cJSON *doc, const char *name)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, get(doc, "profiles"))
        if (strcmp(get_str(p, "name"), name) == 0)
            return p;
    print_error("no profile named \"%s\"\n", name);
    fail();
    return NULL;
}

static double total_weight(const cJSON *p)
{
    double sum = 0;
    const cJSON *w;
    cJSON_ArrayForEach(w, get(p, "weights"))
        sum += w->valuedouble;
    return sum;
}

/* "leaf:weight_ms leaf:weight_ms ..." of a profile, for time-order checks. */
static void leaf_sequence(const cJSON *doc, const cJSON *p, char *buf, size_t n)
{
    const cJSON *frames = get(get(doc, "shared"), "frames");
    const cJSON *s, *w;
    size_t used = 0;
    buf[0] = 0;
    for (s = get(p, "samples")->child, w = get(p, "weights")->child; s && w;
         s = s->next, w = w->next) {
        int leaf = (int)cJSON_GetArrayItem(s, cJSON_GetArraySize(s) - 1)->valuedouble;
        const char *name = get_str(cJSON_GetArrayItem(frames, leaf), "name");
        used += (size_t)snprintf(buf + used, n - used, "%s%s:%g", used ? " " : "", name,
                                 w->valuedouble / 1e6);
        assert_true(used < n);
    }
}

static void test_speedscope_small(void **state)
{
    run_opts o = {0};
    cJSON *doc = convert_json(small_path, &o, NULL);
    char seq[1024];
    const cJSON *main_p, *worker, *io;

    check_speedscope_doc(doc);
    assert_int_equal(cJSON_GetArraySize(get(doc, "profiles")), 3);
    assert_string_equal(get_str(doc, "name"), "python3 app.py --size 3");
    /* One profile per thread, in order of first sample, named by the
     * process and the thread's latest name (its tid too where not the pid). */
    assert_string_equal(get_str(cJSON_GetArrayItem(get(doc, "profiles"), 0), "name"),
                        "app.py (pid 4242): MainThread");
    main_p = profile_named(doc, "app.py (pid 4242): MainThread");
    worker = profile_named(doc, "app.py (pid 4242): worker-1 (tid 4250)");
    io = profile_named(doc, "app.py (pid 4242): io-\xce\xb4 (tid 4251)");
    /* Default view = on-CPU samples only. */
    assert_true(total_weight(main_p) == 16 * MS);
    assert_true(total_weight(worker) == 7 * MS);
    assert_true(total_weight(io) == 2 * MS);
    assert_true(get_num(main_p, "startValue") == 0);
    assert_true(get_num(worker, "startValue") == 2.5 * MS);
    assert_true(get_num(io, "startValue") == 11.2 * MS);
    /* Time order kept; compute@22/24 is one function; runs merged. */
    leaf_sequence(doc, main_p, seq, sizeof seq);
    assert_string_equal(seq, "<module>:1 main:1 compute:3 helper:1 PyObject_Call:1 helper:1 "
                             "main:1 weird\"name\\\tend:1 gr\xc3\xb6\xc3\x9f" "e_\xce\xbb:2 "
                             "<no Python frames>:1 main:1 compute:1 <module>:1");
    cJSON_Delete(doc);
}

static void test_speedscope_options(void **state)
{
    run_opts o = {0};
    cJSON *doc;
    char seq[1024];
    const cJSON *p0;

    /* --idle: every sample; --merge-threads: a process profile first. */
    o.idle = 1;
    o.ss.merge_threads = 1;
    doc = convert_json(small_path, &o, NULL);
    check_speedscope_doc(doc);
    assert_int_equal(cJSON_GetArraySize(get(doc, "profiles")), 4);
    p0 = cJSON_GetArrayItem(get(doc, "profiles"), 0);
    assert_string_equal(get_str(p0, "name"), "app.py (pid 4242)");
    assert_true(total_weight(p0) == (double)small_info.all_ns);
    assert_true(total_weight(profile_named(doc, "app.py (pid 4242): MainThread")) == 18 * MS);
    leaf_sequence(doc, profile_named(doc, "app.py (pid 4242): io-\xce\xb4 (tid 4251)"), seq, sizeof seq);
    assert_string_equal(seq, "time.sleep:10 read_loop:2");
    cJSON_Delete(doc);

    /* --lines: compute@22 and compute@24 are separate frames. */
    memset(&o, 0, sizeof o);
    o.ss.lines = 1;
    doc = convert_json(small_path, &o, NULL);
    check_speedscope_doc(doc);
    leaf_sequence(doc, profile_named(doc, "app.py (pid 4242): MainThread"), seq, sizeof seq);
    assert_string_equal(seq, "<module>:1 main:1 compute:2 compute:1 helper:1 PyObject_Call:1 "
                             "helper:1 main:1 weird\"name\\\tend:1 gr\xc3\xb6\xc3\x9f" "e_\xce\xbb:2 "
                             "<no Python frames>:1 main:1 compute:1 <module>:1");
    cJSON_Delete(doc);

    /* --gil drops the worker's GIL-less sample; --thread keeps one thread. */
    memset(&o, 0, sizeof o);
    o.gil = 1;
    o.thread = "4250";
    doc = convert_json(small_path, &o, NULL);
    check_speedscope_doc(doc);
    assert_int_equal(cJSON_GetArraySize(get(doc, "profiles")), 1);
    assert_true(total_weight(profile_named(doc, "app.py (pid 4242): worker-1 (tid 4250)")) == 6 * MS);
    cJSON_Delete(doc);

    /* Nothing selected: still a document speedscope can open. */
    memset(&o, 0, sizeof o);
    o.thread = "no-such-thread";
    doc = convert_json(small_path, &o, NULL);
    check_speedscope_doc(doc);
    assert_string_equal(get_str(cJSON_GetArrayItem(get(doc, "profiles"), 0), "name"),
                        "no samples");
    cJSON_Delete(doc);
}

/* Spilling runs to the temporary file changes nothing in the output. */
static void test_speedscope_spill(void **state)
{
    run_opts o = {0};
    trc_status st;
    char *want, *got;
    uint32_t sizes[] = {1, 2, 3, 64};

    o.ss.merge_threads = 1;
    o.idle = 1;
    want = convert(big_path, &o, &st);
    assert_non_null(want);
    cJSON *doc = cJSON_Parse(want);
    assert_non_null(doc);
    check_speedscope_doc(doc);
    assert_true(total_weight(cJSON_GetArrayItem(get(doc, "profiles"), 0)) ==
                (double)big_info.all_ns);
    cJSON_Delete(doc);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        o.ss.spool_runs = sizes[i];
        got = convert(big_path, &o, &st);
        assert_non_null(got);
        assert_string_equal(got, want);
        free(got);
    }
    free(want);
}

/* ---- chrome --------------------------------------------------------------- */

typedef struct slice {
    int64_t start, end;  /* ns, rounded like Perfetto */
    double ts, dur;      /* as parsed */
    int order;           /* emission order */
    const char *name;
} slice;

static int64_t to_ns(double us)
{
    return (int64_t)llround(us * 1000.0);
}

static int cmp_slice(const void *a, const void *b)
{
    const slice *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1;
    return x->order - y->order;
}

/* Every "X" of one (pid, tid) must nest: each slice lies inside the open
 * one or starts after it ends.  Also speedscope's view: with its zero at
 * the thread's first slice, (ts - zero) + dur in doubles must be the same
 * number for every slice ending at one instant (and equal to where slices
 * starting there begin), else its importer mis-nests them. */
static void check_nesting(slice *s, int n)
{
    slice *stack[256];
    int depth = 0;
    double zero = INFINITY;

    qsort(s, (size_t)n, sizeof *s, cmp_slice);
    for (int i = 0; i < n; i++) {
        assert_true(s[i].end > s[i].start);
        while (depth > 0 && stack[depth - 1]->end <= s[i].start)
            depth--;
        if (depth > 0 && s[i].end > stack[depth - 1]->end) {
            print_error("slice %s [%lld,%lld] overlaps %s [%lld,%lld]\n", s[i].name,
                        (long long)s[i].start, (long long)s[i].end, stack[depth - 1]->name,
                        (long long)stack[depth - 1]->start, (long long)stack[depth - 1]->end);
            fail();
        }
        assert_true(depth < 256);
        stack[depth++] = &s[i];
        if (s[i].ts < zero)
            zero = s[i].ts;
    }
    for (int i = 0; i < n; i++) {
        double end_d = (s[i].ts - zero) + s[i].dur;
        double want = (double)(s[i].end - 0) / 1000.0; /* exact end, relative to trace start */
        /* (end - zero) computed as speedscope would for a slice starting at end */
        assert_true(end_d == want - zero);
    }
}

typedef struct chrome_summary {
    int x, c_rss, c_load, loss, exit_i, m_pname, m_tname, m_psort, m_tsort;
    const char *thread_names[8];
    int n_thread_names;
    double loss_ts, loss_count;
    const char *loss_s;
} chrome_summary;

/* Parse a Chrome document: structural checks, nesting per thread, a
 * summary of what it holds.  Slices named `name` on tid `tid` are
 * collected into want_slices ("start-end,start-end" in ms). */
static void check_chrome_doc(const cJSON *doc, chrome_summary *sum, int64_t tid,
                             const char *name, char *slices_ms, size_t n_ms)
{
    const cJSON *evs = get(doc, "traceEvents"), *e;
    slice *s = calloc((size_t)cJSON_GetArraySize(evs) + 1, sizeof *s);
    int64_t keys[64][2];
    int nkeys = 0, order = 0;
    size_t used = 0;

    assert_non_null(s);
    memset(sum, 0, sizeof *sum);
    assert_string_equal(get_str(doc, "displayTimeUnit"), "ms");
    assert_true(strncmp(get_str(get(doc, "otherData"), "exporter"), "trc@", 4) == 0);
    if (slices_ms)
        slices_ms[0] = 0;
    /* Collect the (pid, tid) pairs with slices. */
    cJSON_ArrayForEach(e, evs) {
        const char *ph = get_str(e, "ph");
        get_num(e, "pid");
        get_num(e, "tid");
        get_str(e, "name");
        if (strcmp(ph, "X") == 0) {
            int64_t k[2] = {(int64_t)get_num(e, "pid"), (int64_t)get_num(e, "tid")};
            int found = 0;
            for (int i = 0; i < nkeys; i++)
                found |= keys[i][0] == k[0] && keys[i][1] == k[1];
            if (!found) {
                assert_true(nkeys < 64);
                keys[nkeys][0] = k[0];
                keys[nkeys++][1] = k[1];
            }
            sum->x++;
            get_str(e, "cat");
        } else if (strcmp(ph, "C") == 0) {
            const cJSON *args = get(e, "args");
            get_num(e, "ts");
            if (strcmp(get_str(e, "name"), "rss") == 0) {
                assert_true(cJSON_IsNumber(get(args, "bytes")));
                sum->c_rss++;
            } else if (strcmp(get_str(e, "name"), "load") == 0) {
                assert_true(cJSON_IsNumber(get(args, "percent")));
                sum->c_load++;
            }
        } else if (strcmp(ph, "i") == 0) {
            if (strncmp(get_str(e, "name"), "loss: ", 6) == 0) {
                sum->loss++;
                sum->loss_ts = get_num(e, "ts");
                sum->loss_s = get_str(e, "s");
                sum->loss_count = get_num(get(e, "args"), "count");
            } else if (strcmp(get_str(e, "name"), "process exit") == 0) {
                sum->exit_i++;
            }
        } else if (strcmp(ph, "M") == 0) {
            const char *n = get_str(e, "name");
            const cJSON *args = get(e, "args");
            if (strcmp(n, "process_name") == 0) {
                sum->m_pname++;
                get_str(args, "name");
            } else if (strcmp(n, "thread_name") == 0) {
                if (sum->n_thread_names < 8)
                    sum->thread_names[sum->n_thread_names++] = get_str(args, "name");
                sum->m_tname++;
            } else if (strcmp(n, "process_sort_index") == 0) {
                get_num(args, "sort_index");
                sum->m_psort++;
            } else if (strcmp(n, "thread_sort_index") == 0) {
                get_num(args, "sort_index");
                sum->m_tsort++;
            }
        } else {
            print_error("unexpected phase %s\n", ph);
            fail();
        }
    }
    for (int k = 0; k < nkeys; k++) {
        int n = 0;
        order = 0;
        cJSON_ArrayForEach(e, evs) {
            if (strcmp(get_str(e, "ph"), "X") != 0 || (int64_t)get_num(e, "pid") != keys[k][0] ||
                (int64_t)get_num(e, "tid") != keys[k][1])
                continue;
            s[n].ts = get_num(e, "ts");
            s[n].dur = get_num(e, "dur");
            s[n].start = to_ns(s[n].ts);
            s[n].end = to_ns(s[n].ts + s[n].dur);
            s[n].name = get_str(e, "name");
            s[n].order = order++;
            if (slices_ms && keys[k][1] == tid && strcmp(s[n].name, name) == 0)
                used += (size_t)snprintf(slices_ms + used, n_ms - used, "%s%g-%g",
                                         used ? "," : "", (double)s[n].start / 1e6,
                                         (double)s[n].end / 1e6);
            n++;
        }
        check_nesting(s, n);
    }
    free(s);
}

static void test_chrome_small(void **state)
{
    run_opts o = {0};
    chrome_summary sum;
    char slices[256];
    cJSON *doc;

    o.chrome = 1;
    doc = convert_json(small_path, &o, NULL);
    check_chrome_doc(doc, &sum, 4242, "<module>", slices, sizeof slices);
    /* <module> closes at the stack-less sample (12 ms), reopens at 15,
     * closes at the idle gap (16), reopens at 18 until the end (20). */
    assert_string_equal(slices, "0-12,15-16,18-20");
    assert_int_equal(sum.c_rss, 5);
    assert_int_equal(sum.c_load, 3);
    assert_int_equal(sum.loss, 1);
    assert_true(sum.loss_ts == 13000.0);
    assert_true(sum.loss_count == 2);
    assert_string_equal(sum.loss_s, "t");
    assert_int_equal(sum.exit_i, 1);
    assert_int_equal(sum.m_pname, 2); /* the process, and pid 0 for "load" */
    assert_int_equal(sum.m_psort, 2);
    assert_int_equal(sum.m_tname, 3);
    assert_int_equal(sum.m_tsort, 3);
    assert_string_equal(sum.thread_names[0], "MainThread");
    assert_string_equal(sum.thread_names[1], "worker-1");
    assert_string_equal(sum.thread_names[2], "io-\xce\xb4");
    cJSON_Delete(doc);

    /* --idle: the idle samples at 16 and 17 ms keep the frames open. */
    o.idle = 1;
    doc = convert_json(small_path, &o, NULL);
    check_chrome_doc(doc, &sum, 4242, "<module>", slices, sizeof slices);
    assert_string_equal(slices, "0-12,15-20");
    check_chrome_doc(doc, &sum, 4251, "time.sleep", slices, sizeof slices);
    assert_string_equal(slices, "1.2-11.2");
    cJSON_Delete(doc);

    /* compute is one slice over ms 2..5 (lines 22, 22, 24), three with --lines. */
    o.idle = 0;
    doc = convert_json(small_path, &o, NULL);
    check_chrome_doc(doc, &sum, 4242, "compute", slices, sizeof slices);
    assert_string_equal(slices, "2-8,18-19");
    cJSON_Delete(doc);
    o.ch.lines = 1;
    doc = convert_json(small_path, &o, NULL);
    check_chrome_doc(doc, &sum, 4242, "compute", slices, sizeof slices);
    assert_string_equal(slices, "2-4,4-5,5-8,18-19");
    cJSON_Delete(doc);

    /* A time window: nothing outside [5 ms, 10 ms). */
    memset(&o, 0, sizeof o);
    o.chrome = 1;
    o.from = "0.005";
    o.to = "0.010";
    doc = convert_json(small_path, &o, NULL);
    check_chrome_doc(doc, &sum, 4242, "<module>", slices, sizeof slices);
    assert_string_equal(slices, "5-10");
    cJSON_Delete(doc);
}

/* A process whose status trec could not learn (its parent reaped it
 * first: exit_code -1) shows "unknown", not a status of -1. */
static void test_chrome_exit_unknown(void **state)
{
    char path[64];
    run_opts o = {0};
    o.chrome = 1;
    for (int unknown = 0; unknown < 2; unknown++) {
        strcpy(path, "/tmp/test_convb_XXXXXX");
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(convb_write_small_exit(fd, unknown ? -1 : 3, NULL), TRC_OK);
        close(fd);
        trc_status st;
        char *text = convert(path, &o, &st);
        unlink(path);
        assert_non_null(text);
        const char *want = unknown ? "\"args\":{\"exit_code\":\"unknown\"}" : "\"args\":{\"exit_code\":3}";
        assert_non_null(strstr(text, want));
        assert_null(strstr(text, "\"exit_code\":-1"));
        free(text);
    }
}

static void test_chrome_big(void **state)
{
    run_opts o = {0};
    chrome_summary sum;
    cJSON *doc;

    o.chrome = 1;
    doc = convert_json(big_path, &o, NULL);
    check_chrome_doc(doc, &sum, 0, "", NULL, 0);
    assert_true(sum.x > 1000);
    assert_int_equal(sum.m_tname, 3);
    assert_int_equal(sum.c_rss, 20);
    assert_int_equal(sum.loss, 0);
    cJSON_Delete(doc);
}

/* ---- failure injection ------------------------------------------------------ */

static void fail_nth(int chrome_kind)
{
    run_opts o = {0};
    trc_status st;
    char *want, *got;
    int done = 0, failures = 0;

    o.chrome = chrome_kind;
    o.ss.merge_threads = 1;
    o.ss.spool_runs = 2;
    want = convert(small_path, &o, &st);
    assert_non_null(want);
    for (long n = 1; n < 100000 && !done; n++) {
        trc_alloc_fail_after(n);
        got = convert(small_path, &o, &st);
        done = trc_alloc_count() < n; /* the run never reached allocation n */
        trc_alloc_fail_after(-1);
        if (got) {
            assert_string_equal(got, want);
            free(got);
        } else {
            assert_true(st == TRC_ERR_NOMEM);
            failures++;
        }
    }
    assert_true(done);
    assert_true(failures > 20); /* every allocation of a run was made to fail once */
    free(want);
}

static void test_speedscope_nomem(void **state) { fail_nth(0); }
static void test_chrome_nomem(void **state) { fail_nth(1); }

/* ---- generator front end ---------------------------------------------------- */

static int write_mode(int argc, char **argv)
{
    trc_status st;
    int fd;
    const char *path = argv[argc - 1];

    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        return 2;
    }
    if (strcmp(argv[1], "--write-small") == 0 && argc == 3)
        st = convb_write_small(fd, NULL);
    else if (strcmp(argv[1], "--write-big") == 0 && argc == 5)
        st = convb_write_big(fd, strtoull(argv[2], NULL, 10), (uint32_t)atoi(argv[3]), NULL);
    else if (strcmp(argv[1], "--write-gpu") == 0 && argc == 4) {
        convb_info info;
        st = convb_write_gpu(fd, strtoull(argv[2], NULL, 10), &info);
        /* what the e2e checks compare the outputs against */
        printf("kernels=%llu kernel_ns=%llu activities=%llu api_calls=%llu flows=%llu\n",
               (unsigned long long)info.kernels, (unsigned long long)info.kernel_ns,
               (unsigned long long)info.activities, (unsigned long long)info.api_calls,
               (unsigned long long)info.flows);
    }
    else
        st = TRC_ERR_ARG;
    if (close(fd) != 0 && st == TRC_OK)
        st = TRC_ERR_IO;
    if (st != TRC_OK) {
        fprintf(stderr, "%s: %s\n", path, trc_status_str(st));
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        return write_mode(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_speedscope_small),
        cmocka_unit_test(test_speedscope_options),
        cmocka_unit_test(test_speedscope_spill),
        cmocka_unit_test(test_chrome_small),
        cmocka_unit_test(test_chrome_big),
        cmocka_unit_test(test_chrome_exit_unknown),
        cmocka_unit_test(test_speedscope_nomem),
        cmocka_unit_test(test_chrome_nomem),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
