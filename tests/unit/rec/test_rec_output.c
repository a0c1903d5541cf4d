/*
 * test_rec_output.c — unit tests of trec's output file (lib/rec/output.c):
 * the hidden name and its commit, what a failed start leaves, the
 * refusal of a directory, and the cut back to the last whole chunk when a
 * write fails (a file size limit stands in for a full disk).  The same
 * behaviour through trec itself: tests/e2e/trec_output_safety.sh and
 * trec_full_disk.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/rec/rec_int.h"

static char dir[256];

static int setup(void **state)
{
    snprintf(dir, sizeof dir, "%s/rec-output.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            unlink(p);
    }
    if (d)
        closedir(d);
    return rmdir(dir);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int holds(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strcmp(buf, text) == 0;
}

/* entries of dir other than . and .. */
static int entries(void)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *de;
    while ((de = readdir(d)))
        n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void link_replaced_not_followed(void **state)
{
    char real[512], link[512], err[256];
    snprintf(real, sizeof real, "%s/real", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    put(real, "original");
    assert_int_equal(symlink("real", link), 0);
    rec_output o;
    assert_int_equal(rec_output_open(&o, link, 1, err, sizeof err), 0);
    assert_int_equal(o.kind, REC_OUT_HIDDEN);
    assert_int_equal(entries(), 3); /* real, link, the hidden file */
    /* before commit nothing may be written */
    assert_int_equal(rec_output_write(&o, "x", 1), -1);
    assert_int_equal(o.err, 0);
    assert_int_equal(rec_output_commit(&o, err, sizeof err), 0);
    assert_int_equal(rec_output_write(&o, "trace", 5), 0);
    rec_output_close(&o);
    struct stat ls;
    assert_int_equal(lstat(link, &ls), 0);
    assert_true(S_ISREG(ls.st_mode));
    assert_true(holds(link, "trace"));
    assert_true(holds(real, "original"));
    assert_int_equal(entries(), 2);
}

static void failed_start_leaves_file(void **state)
{
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/keep.trc", dir);
    put(path, "keep");
    rec_output o;
    assert_int_equal(rec_output_open(&o, path, 1, err, sizeof err), 0);
    assert_int_equal(rec_output_write(&o, "junk", 4), -1);
    rec_output_close(&o);
    rec_output_close(&o); /* twice is fine */
    assert_true(holds(path, "keep"));
    assert_int_equal(entries(), 1);
}

static void directory_refused(void **state)
{
    char err[256], want[600];
    rec_output o;
    assert_int_equal(rec_output_open(&o, dir, 1, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: is a directory", dir);
    assert_string_equal(err, want);
    assert_int_equal(entries(), 0);
    assert_int_equal(rec_output_is_file(dir), 0);
}

static void pid_in_name(void **state)
{
    char tmpl[512], want[512], err[256];
    snprintf(tmpl, sizeof tmpl, "%s/run-%%p.trc", dir);
    snprintf(want, sizeof want, "%s/run-77.trc", dir);
    rec_output o;
    assert_int_equal(rec_output_open(&o, tmpl, 77, err, sizeof err), 0);
    assert_string_equal(o.path, want);
    assert_int_equal(rec_output_commit(&o, err, sizeof err), 0);
    rec_output_close(&o);
    assert_int_equal(access(want, F_OK), 0);
    assert_int_equal(rec_output_is_file(tmpl), 1);
    assert_int_equal(rec_output_is_file("-"), 0);
    assert_int_equal(rec_output_is_file("/dev/null"), 0);
}

/* Past RLIMIT_FSIZE a write is cut short, then fails with EFBIG (SIGXFSZ
 * ignored, as trec does): the file must end at the last whole chunk and
 * take nothing more. */
static void failed_write_cuts_back(void **state)
{
    char path[512], err[256];
    static char chunk[3000];
    memset(chunk, 'c', sizeof chunk);
    snprintf(path, sizeof path, "%s/cut.trc", dir);
    rec_output o;
    assert_int_equal(rec_output_open(&o, path, 1, err, sizeof err), 0);
    assert_int_equal(rec_output_commit(&o, err, sizeof err), 0);

    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGXFSZ, &ign, &old);
    struct rlimit rl0, rl = {4096, 4096};
    getrlimit(RLIMIT_FSIZE, &rl0);
    rl.rlim_max = rl0.rlim_max;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &rl), 0);

    assert_int_equal(rec_output_write(&o, chunk, sizeof chunk), 0);
    assert_int_equal(rec_output_write(&o, chunk, sizeof chunk), -1); /* 1096 bytes fit */
    int e = o.err;
    assert_int_equal(rec_output_write(&o, chunk, 10), -1);             /* sticky */

    setrlimit(RLIMIT_FSIZE, &rl0);
    sigaction(SIGXFSZ, &old, NULL);
    assert_int_equal(e, EFBIG);
    assert_int_equal(o.cut_failed, 0);
    assert_int_equal(o.good, sizeof chunk);
    assert_true(o.last_ok_ns > 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, (off_t)sizeof chunk);
    rec_output_close(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(link_replaced_not_followed, setup, teardown),
        cmocka_unit_test_setup_teardown(failed_start_leaves_file, setup, teardown),
        cmocka_unit_test_setup_teardown(directory_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(pid_in_name, setup, teardown),
        cmocka_unit_test_setup_teardown(failed_write_cuts_back, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
