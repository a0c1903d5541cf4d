/*
 * test_rec_stopper.c — lib/rec/stopper.c (trec --blocking) against a
 * real child process with two spinning threads: a thread entered for a
 * read is in a ptrace stop until it is left, then runs; a signal sent to
 * a seized thread still reaches the program's handler (the reap answers
 * the signal-delivery stop); a seized thread's exit is swallowed and the
 * process's exit status comes back; detaching leaves no thread stopped
 * or traced; a second tracer is refused, and the refusal is told once.
 * Skipped where ptrace is not allowed at all (a seccomp filter).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/rec/rec_int.h"
#include "lib/rec/stopper.h"

/* ---- the child: its main thread spins; a second thread spins until a
 * byte comes on its pipe; SIGUSR1 writes 'u' to a pipe, SIGUSR2 exits 3 */

static int child_sig_fd;

static void on_usr1(int sig)
{
    char c = 'u';
    ssize_t n = write(child_sig_fd, &c, 1);
    (void)n;
}

static void on_usr2(int sig)
{
    _exit(3);
}

typedef struct child_args {
    int report_fd, quit_fd;
} child_args;

static void *second_thread(void *p)
{
    const child_args *a = p;
    pid_t tid = (pid_t)syscall(SYS_gettid);
    ssize_t n = write(a->report_fd, &tid, sizeof tid);
    (void)n;
    for (;;) {
        char c;
        if (read(a->quit_fd, &c, 1) == 1)
            return NULL;
    }
}

typedef struct child {
    pid_t pid, tid2;         /* the process (= its main thread), the second thread */
    int sig_fd;              /* reads the 'u' of SIGUSR1 */
    int quit_fd;             /* a byte ends the second thread */
} child;

/* The child of the test running, for the teardown to end whatever an
 * assertion left behind (pid 0: none). */
static child live;

static void start_child(child *c)
{
    int rep[2], sig[2], quit[2];
    assert_int_equal(pipe(rep), 0);
    assert_int_equal(pipe2(sig, O_NONBLOCK), 0);
    assert_int_equal(pipe2(quit, O_NONBLOCK), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        child_sig_fd = sig[1];
        signal(SIGUSR1, on_usr1);
        signal(SIGUSR2, on_usr2);
        static child_args a;
        a.report_fd = rep[1];
        a.quit_fd = quit[0];
        pthread_t th;
        if (pthread_create(&th, NULL, second_thread, &a) != 0)
            _exit(100);
        for (volatile unsigned long spins = 0;; spins++)
            ;
    }
    close(rep[1]);
    close(sig[1]);
    close(quit[0]);
    c->pid = pid;
    assert_int_equal(read(rep[0], &c->tid2, sizeof c->tid2), (ssize_t)sizeof c->tid2);
    close(rep[0]);
    c->sig_fd = sig[0];
    c->quit_fd = quit[1];
    live = *c;
}

static void end_child(child *c)
{
    if (c->pid > 0) {
        kill(c->pid, SIGKILL);
        int st;
        while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
            ;
    }
    close(c->sig_fd);
    close(c->quit_fd);
    live.pid = 0;
}

static int teardown(void **state)
{
    if (live.pid > 0)
        end_child(&live);
    return 0;
}

/* A stopper that waits as long as it takes for a stop: the tests check
 * what a stop does, and a loaded machine may keep a thread off its CPU
 * for longer than trec waits. */
static rec_stopper *new_stopper(void)
{
    rec_stopper *s = rec_stopper_new();
    assert_non_null(s);
    rec_stopper_set_wait(s, 5000000000LL);
    return s;
}

/* The state letter and TracerPid of one thread. */
static char task_state(pid_t pid, pid_t tid, long *tracer)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
    FILE *f = fopen(path, "r");
    char state = 0;
    *tracer = -1;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "State:", 6) == 0)
            sscanf(line + 6, " %c", &state);
        else if (strncmp(line, "TracerPid:", 10) == 0)
            *tracer = atol(line + 10);
    }
    fclose(f);
    return state;
}

/* Wait up to a second for tid to leave the ptrace stop ('t'). */
static char state_settled(pid_t pid, pid_t tid, long *tracer)
{
    char st = 0;
    for (int i = 0; i < 1000; i++) {
        st = task_state(pid, tid, tracer);
        if (st != 't')
            break;
        usleep(1000);
    }
    return st;
}

/* A thread entry as the thread table has it: no state file (so the
 * stopper cannot tell it blocked, and stops it). */
static void fake_thread(rec_thread *th, pid_t tid)
{
    memset(th, 0, sizeof *th);
    th->tid = tid;
    th->state_fd = -1;
    th->sw.fd = -1;
}

static int ptrace_ok;

/* Group set-up: is ptrace allowed here at all? */
static int ptrace_allowed(void **state)
{
    child c;
    start_child(&c);
    rec_stopper *s = new_stopper();
    int e = rec_stopper_seize(s, c.pid, c.pid);
    rec_stopper_free(s);
    end_child(&c);
    ptrace_ok = e == 0; /* refused: each test skips (trec then reads without stopping) */
    return 0;
}

static void enter_stops_leave_resumes(void **state)
{
    if (!ptrace_ok)
        skip();
    child c;
    start_child(&c);
    rec_stopper *s = new_stopper();
    rec_target t;
    memset(&t, 0, sizeof t);
    t.pid = c.pid;
    rec_thread th;
    fake_thread(&th, c.pid);
    long tracer;

    /* not held before the list was read: stopped now, read twice */
    assert_int_equal(rec_stopper_enter(s, &t, &th), 1);
    assert_int_equal(task_state(c.pid, c.pid, &tracer), 't');
    assert_int_equal(tracer, (long)getpid());
    assert_int_equal(rec_stopper_state(s, c.pid), 'R');
    /* the other thread was never stopped */
    assert_int_not_equal(task_state(c.pid, c.tid2, &tracer), 't');
    assert_int_equal(tracer, 0);

    rec_stopper_leave(s, c.pid);
    assert_int_equal(state_settled(c.pid, c.pid, &tracer), 'R');
    /* what it was before the stop stays known until the tick's release */
    assert_int_equal(rec_stopper_state(s, c.pid), 'R');
    rec_stopper_release(s);
    assert_int_equal(rec_stopper_state(s, c.pid), 0);

    /* held through the thread table before the list read: entering then
     * asks for no second read, and release lets both go */
    t.threads.v = calloc(2, sizeof *t.threads.v);
    assert_non_null(t.threads.v);
    fake_thread(&t.threads.v[0], c.pid);
    fake_thread(&t.threads.v[1], c.tid2);
    t.threads.n = 2;
    rec_stopper_hold(s, &t);
    assert_int_equal(task_state(c.pid, c.pid, &tracer), 't');
    assert_int_equal(task_state(c.pid, c.tid2, &tracer), 't');
    assert_int_equal(rec_stopper_enter(s, &t, &t.threads.v[1]), 0);
    rec_stopper_release(s);
    assert_int_equal(state_settled(c.pid, c.pid, &tracer), 'R');
    assert_int_equal(state_settled(c.pid, c.tid2, &tracer), 'R');

    rec_stopper_stats ss;
    rec_stopper_get_stats(s, &ss);
    assert_int_equal(ss.stops, 3);
    assert_int_equal(ss.seized, 2);
    free(t.threads.v);
    rec_stopper_free(s);
    end_child(&c);
}

/* reap until pid comes back (returned) or a second passes (0). */
static pid_t reap_for(rec_stopper *s, pid_t which, int *status, int (*done)(void *), void *ctx)
{
    for (int i = 0; i < 1000; i++) {
        pid_t r = rec_stopper_reap(s, which, status);
        if (r > 0)
            return r;
        if (done && done(ctx))
            return 0;
        usleep(1000);
    }
    return 0;
}

typedef struct byte_wait {
    int fd, got;
} byte_wait;

static int got_byte(void *p)
{
    byte_wait *w = p;
    char ch;
    w->got = w->got || read(w->fd, &ch, 1) == 1;
    return w->got;
}

static void signals_and_exits(void **state)
{
    if (!ptrace_ok)
        skip();
    child c;
    start_child(&c);
    rec_stopper *s = new_stopper();
    assert_int_equal(rec_stopper_seize(s, c.pid, c.pid), 0);
    assert_int_equal(rec_stopper_seize(s, c.pid, c.tid2), 0);

    /* the signal stops a seized thread on its way in; the reap passes it
     * on and the program's handler runs */
    int st = 0;
    byte_wait w = {c.sig_fd, 0};
    assert_int_equal(kill(c.pid, SIGUSR1), 0);
    assert_int_equal(reap_for(s, c.pid, &st, got_byte, &w), 0);
    assert_true(w.got);
    long tracer;
    assert_int_not_equal(state_settled(c.pid, c.pid, &tracer), 't');

    /* the second thread ends: swallowed, the process goes on */
    char b = 1;
    assert_int_equal(write(c.quit_fd, &b, 1), 1);
    for (int i = 0; i < 200; i++) {
        assert_int_equal(rec_stopper_reap(s, c.pid, &st), 0);
        usleep(1000);
    }
    assert_int_equal(kill(c.pid, 0), 0);

    /* the process's exit status comes back */
    assert_int_equal(kill(c.pid, SIGUSR2), 0);
    assert_int_equal(reap_for(s, c.pid, &st, NULL, NULL), c.pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 3);
    c.pid = 0; /* reaped */
    /* nothing left to wait for */
    assert_int_equal(rec_stopper_reap(s, -1, &st), -1);
    rec_stopper_free(s);
    end_child(&c);
}

static void detach_leaves_nothing(void **state)
{
    if (!ptrace_ok)
        skip();
    child c;
    start_child(&c);
    rec_stopper *s = new_stopper();
    rec_target t;
    memset(&t, 0, sizeof t);
    t.pid = c.pid;
    rec_thread th;
    fake_thread(&th, c.tid2);
    assert_int_equal(rec_stopper_seize(s, c.pid, c.pid), 0);
    /* one thread still held for a read, one running */
    assert_int_equal(rec_stopper_enter(s, &t, &th), 1);
    assert_int_equal(rec_stopper_detach_all(s), 0);
    long tracer;
    assert_int_equal(state_settled(c.pid, c.pid, &tracer), 'R');
    assert_int_equal(tracer, 0);
    assert_int_equal(state_settled(c.pid, c.tid2, &tracer), 'R');
    assert_int_equal(tracer, 0);
    rec_stopper_free(s);
    end_child(&c);
}

static void second_tracer_refused(void **state)
{
    if (!ptrace_ok)
        skip();
    child c;
    start_child(&c);
    rec_stopper *a = new_stopper(), *b = new_stopper();
    assert_int_equal(rec_stopper_seize(a, c.pid, c.pid), 0);
    assert_int_equal(rec_stopper_seize(b, c.pid, c.pid), EPERM);
    pid_t pid;
    int err;
    assert_int_equal(rec_stopper_take_refusal(b, &pid, &err), 1);
    assert_int_equal(pid, c.pid);
    assert_int_equal(err, EPERM);
    assert_int_equal(rec_stopper_take_refusal(b, &pid, &err), 0); /* told once */
    /* the refusal holds for the process's other threads without asking */
    assert_int_equal(rec_stopper_seize(b, c.pid, c.tid2), EPERM);
    assert_int_equal(rec_stopper_take_refusal(b, &pid, &err), 0);
    /* a NULL stopper does nothing */
    assert_int_equal(rec_stopper_seize(NULL, c.pid, c.pid), 0);
    assert_int_equal(rec_stopper_state(NULL, c.pid), 0);
    rec_stopper_free(b);
    rec_stopper_free(a);
    end_child(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(enter_stops_leave_resumes, teardown),
        cmocka_unit_test_teardown(signals_and_exits, teardown),
        cmocka_unit_test_teardown(detach_leaves_nothing, teardown),
        cmocka_unit_test_teardown(second_tracer_refused, teardown),
    };
    return cmocka_run_group_tests(tests, ptrace_allowed, NULL);
}
