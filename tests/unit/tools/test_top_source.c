/*
 * test_top_source.c — trc-top's input (tools/common/top_source.c): the
 * recorder's last line as the screen's "output:" line (the last
 * non-empty line, terminal escapes left out whole, other control
 * characters as spaces, a cut line not started inside a UTF-8
 * character, nothing when nothing was written), and --follow of a file
 * not created yet: waited for, read once it exists; given up after
 * --wait with ETIMEDOUT.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "tools/common/top_source.h"

static void message_of(const char *written, char *buf, size_t n)
{
    top_source s;
    memset(&s, 0, sizeof s);
    s.fd = -1;
    s.child_err = tmpfile();
    assert_non_null(s.child_err);
    fputs(written, s.child_err);
    fflush(s.child_err);
    top_source_recorder_message(&s, buf, n);
    fclose(s.child_err);
}

static void test_recorder_message(void **state)
{
    char m[128];
    message_of("", m, sizeof m);
    assert_string_equal(m, "");
    message_of("first\nsecond line\n\n", m, sizeof m);
    assert_string_equal(m, "second line");
    /* colours and a cursor move are left out; a tab and a CR are spaces */
    message_of("x\n\033[1;31mred\033[0m \033[Hhome\tend\r\n", m, sizeof m);
    assert_string_equal(m, "red home end");
    message_of("\033]0;title\007after\n", m, sizeof m);
    assert_string_equal(m, "after");
    /* a title ended by ST (ESC backslash) leaves nothing behind */
    message_of("\033]0;title\033\\after\n", m, sizeof m);
    assert_string_equal(m, "after");
    /* a line longer than what is read: the end, from a character's start */
    char big[2048];
    size_t k = 0;
    while (k + 2 < sizeof big - 8) {
        big[k++] = '\xc3';
        big[k++] = '\xa9'; /* é */
    }
    memcpy(big + k, "tail\n", 6);
    for (size_t shift = 0; shift < 2; shift++) {
        message_of(big + shift, m, sizeof m);
        assert_true((m[0] & 0xc0) != 0x80);
    }
    /* no recorder: nothing */
    top_source none;
    memset(&none, 0, sizeof none);
    top_source_recorder_message(&none, m, sizeof m);
    assert_string_equal(m, "");
}

typedef struct later {
    const char *path;
} later;

static void *create_later(void *arg)
{
    later *l = arg;
    usleep(300 * 1000);
    FILE *f = fopen(l->path, "w");
    if (f) {
        fputs("bytes", f);
        fclose(f);
    }
    return NULL;
}

static void test_follow_waits(void **state)
{
    char dir[] = "/tmp/top_source_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/later.trc", dir);
    top_source s;
    /* without --follow a missing file is an error */
    assert_int_equal(top_source_open(&s, path, 0, 0), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(top_source_open(&s, path, 1, 5), 0);
    assert_true(s.waiting);
    later l = {path};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, create_later, &l), 0);
    char buf[16];
    long got = top_source_read(&s, buf, sizeof buf);
    pthread_join(th, NULL);
    assert_int_equal(got, 5);
    assert_memory_equal(buf, "bytes", 5);
    assert_false(s.waiting);
    assert_false(s.timed_out);
    top_source_close(&s, stderr);
    unlink(path);

    /* --wait runs out */
    assert_int_equal(top_source_open(&s, path, 1, 0.2), 0);
    errno = 0;
    assert_int_equal(top_source_read(&s, buf, sizeof buf), -1);
    assert_int_equal(errno, ETIMEDOUT);
    assert_true(s.timed_out);
    assert_false(s.waiting);
    top_source_close(&s, stderr);

    /* a stop request while waiting ends the input */
    assert_int_equal(top_source_open(&s, path, 1, 0), 0);
    s.stop = 1;
    assert_int_equal(top_source_read(&s, buf, sizeof buf), 0);
    top_source_close(&s, stderr);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recorder_message),
        cmocka_unit_test(test_follow_waits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
