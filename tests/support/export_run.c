/*
 * tests/support/export_run.c — an exporter run for unit tests (see
 * export_run.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/export_run.h"
#include "lib/util/alloc.h"
#include "lib/util/spill.h"
#include "tools/common/convert.h"

char *export_run(const char *path, const export_run_opts *o, trc_status *st_out)
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
        const trc_event *kept = o->all ? ev : conv_selection_filter(&sel, r, ev, &scratch);
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

cJSON *export_run_json(const char *path, const export_run_opts *o, char **text)
{
    trc_status st;
    char *s = export_run(path, o, &st);
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

/* Runs the conversion once, then again with the n-th failable operation
 * made to fail for n = 1, 2, ... until a run no longer reaches n: each run
 * gives exactly the normal output or fails with want_st.  fail_after and
 * count are the hook of the operations in question (allocations, spill
 * file operations).  The failed runs, counted. */
static int run_failing_each(const char *path, const export_run_opts *o, void (*fail_after)(long),
                            long (*count)(void), trc_status want_st)
{
    trc_status st;
    char *want, *got;
    int done = 0, failures = 0;

    want = export_run(path, o, &st);
    assert_non_null(want);
    for (long n = 1; n < 100000 && !done; n++) {
        fail_after(n);
        got = export_run(path, o, &st);
        done = count() < n; /* the run never reached operation n */
        fail_after(-1);
        if (got) {
            assert_string_equal(got, want);
            free(got);
        } else {
            if (st != want_st)
                print_error("run %ld: %s\n", n, trc_status_str(st));
            assert_true(st == want_st);
            failures++;
        }
    }
    assert_true(done);
    free(want);
    return failures;
}

void export_run_nomem(const char *path, const export_run_opts *o)
{
    /* every allocation of a run was made to fail once */
    assert_true(run_failing_each(path, o, trc_alloc_fail_after, trc_alloc_count, TRC_ERR_NOMEM) > 20);
}

void export_run_ioerr(const char *path, const export_run_opts *o, int min_failures)
{
    assert_true(run_failing_each(path, o, trcu_spill_fail_after, trcu_spill_count, TRC_ERR_IO) >=
                min_failures);
}

cJSON *json_get(const cJSON *obj, const char *key)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v)
        print_error("missing key \"%s\"\n", key);
    assert_non_null(v);
    return v;
}

const char *json_str(const cJSON *obj, const char *key)
{
    cJSON *v = json_get(obj, key);
    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

double json_num(const cJSON *obj, const char *key)
{
    cJSON *v = json_get(obj, key);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}
