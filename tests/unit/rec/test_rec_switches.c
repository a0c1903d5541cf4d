/*
 * test_rec_switches.c — lib/rec/switches.c against a real thread of this
 * process: what its switch records say while it blocks, runs and blocks
 * again, that a blocked thread's records stay still (what lets trec
 * repeat its stack), and the descriptor budget.  Skipped where perf
 * events are not allowed (kernel.perf_event_paranoid 3, a seccomp
 * filter): trec then reads /proc, which tests/e2e covers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/rec/rec_int.h"

/* The thread under watch: blocks reading cmd; each byte read makes it
 * spin for that many times 10 ms, then block again; 0 ends it. */
typedef struct napper {
    pthread_t th;
    int cmd[2];
    volatile pid_t tid;
} napper;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void *napper_main(void *arg)
{
    napper *n = arg;
    n->tid = (pid_t)syscall(SYS_gettid);
    for (;;) {
        unsigned char c;
        if (read(n->cmd[0], &c, 1) != 1 || c == 0)
            return NULL;
        int64_t end = now_ns() + (int64_t)c * 10000000;
        while (now_ns() < end)
            ;
    }
}

static void napper_start(napper *n)
{
    memset(n, 0, sizeof *n);
    assert_int_equal(pipe(n->cmd), 0);
    assert_int_equal(pthread_create(&n->th, NULL, napper_main, n), 0);
    while (!n->tid)
        sleep_ms(1);
}

static void napper_say(napper *n, unsigned char c)
{
    assert_int_equal(write(n->cmd[1], &c, 1), 1);
}

static void napper_stop(napper *n)
{
    napper_say(n, 0);
    pthread_join(n->th, NULL);
    close(n->cmd[0]);
    close(n->cmd[1]);
}

/* /proc's state of the thread: 'R' runnable, 'S' not, 0 unreadable. */
static char proc_state(pid_t tid)
{
    int fd = rec_proc_open(getpid(), tid, "syscall");
    if (fd < 0)
        return 0;
    char s = rec_fd_syscall_state(fd);
    close(fd);
    return s;
}

/* Waits (up to 2 s) until /proc says the thread is blocked. */
static void wait_blocked(pid_t tid)
{
    for (int i = 0; i < 2000 && proc_state(tid) != 'S'; i++)
        sleep_ms(1);
    assert_int_equal(proc_state(tid), 'S');
}

/* Starts a napper, waits until it blocks and opens its records; -1
 * (napper stopped) where perf events are not allowed. */
static int watch_blocked(napper *n, rec_switches *s)
{
    napper_start(n);
    wait_blocked(n->tid);
    int e = rec_switches_open(s, n->tid);
    if (rec_switches_refused(e)) {
        fprintf(stderr, "perf events not allowed here (%s): skipped\n", strerror(e));
        napper_stop(n);
        return -1;
    }
    assert_int_equal(e, 0);
    assert_true(s->fd >= 0);
    return 0;
}

static void blocked_runs_blocked(void **state)
{
    (void)state;
    napper n;
    rec_switches s;
    if (watch_blocked(&n, &s) != 0)
        skip();
    char first = proc_state(n.tid);
    assert_int_equal(first, 'S');

    /* blocked since the open: no record, the state /proc gave */
    uint64_t h0, h;
    assert_int_equal(rec_switches_look(&s, first, &h0), 'S');
    assert_int_equal(h0, 0);
    sleep_ms(30);
    assert_int_equal(rec_switches_look(&s, first, &h), 'S');
    assert_int_equal(h, h0);

    /* running: switched in, the head has moved */
    napper_say(&n, 20); /* 200 ms of spinning */
    char k = 0;
    for (int i = 0; i < 100; i++) {
        sleep_ms(2);
        k = rec_switches_look(&s, first, &h);
        if (k == 'I' || k == 'P')
            break;
    }
    assert_true(k == 'I' || k == 'P');
    assert_true(h != h0);

    /* blocked again: 'S', and the head stays where it is while it stays blocked */
    wait_blocked(n.tid);
    uint64_t h1, h2;
    assert_int_equal(rec_switches_look(&s, first, &h1), 'S');
    assert_true(h1 != h0);
    sleep_ms(30);
    assert_int_equal(rec_switches_look(&s, first, &h2), 'S');
    assert_int_equal(h2, h1);

    /* a short run in between moves it, even though it is blocked again */
    napper_say(&n, 1);
    sleep_ms(15);
    wait_blocked(n.tid);
    assert_int_equal(rec_switches_look(&s, first, &h2), 'S');
    assert_true(h2 != h1);

    rec_switches_close(&s);
    assert_int_equal(s.fd, -1);
    assert_null(s.map);
    napper_stop(&n);
}

static void ended_thread(void **state)
{
    (void)state;
    napper n;
    rec_switches s;
    if (watch_blocked(&n, &s) != 0)
        skip();
    napper_stop(&n);
    /* the records stay readable after the thread has gone: no crash, and
     * the last thing recorded of it */
    uint64_t h;
    char k = rec_switches_look(&s, 'S', &h);
    assert_true(k == 'S' || k == 'I' || k == 'P' || k == 0);
    rec_switches_close(&s);
}

static void descriptor_budget(void **state)
{
    (void)state;
    struct rlimit old, low;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
    low = old;
    low.rlim_cur = 32; /* a quarter: 8 events at most */
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    rec_switches s[9];
    pid_t self = (pid_t)syscall(SYS_gettid);
    int opened = 0, e = 0;
    for (int i = 0; i < 9; i++) {
        e = rec_switches_open(&s[i], self);
        if (rec_switches_refused(e)) {
            for (int j = 0; j < opened; j++)
                rec_switches_close(&s[j]);
            setrlimit(RLIMIT_NOFILE, &old);
            skip();
        }
        if (e != 0)
            break;
        opened++;
    }
    assert_int_equal(opened, 8);
    assert_int_equal(e, EMFILE);
    assert_int_equal(s[8].fd, -1);
    /* closing one makes room for one */
    rec_switches_close(&s[0]);
    assert_int_equal(rec_switches_open(&s[0], self), 0);
    for (int j = 0; j < 8; j++)
        rec_switches_close(&s[j]);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
}

static void proc_only_by_request(void **state)
{
    (void)state;
    unsetenv("TREC_THREAD_STATE");
    assert_true(rec_switches_allowed());
    setenv("TREC_THREAD_STATE", "proc", 1);
    assert_false(rec_switches_allowed());
    setenv("TREC_THREAD_STATE", "perf", 1);
    assert_true(rec_switches_allowed());
    unsetenv("TREC_THREAD_STATE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(blocked_runs_blocked),
        cmocka_unit_test(ended_thread),
        cmocka_unit_test(descriptor_budget),
        cmocka_unit_test(proc_only_by_request),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
