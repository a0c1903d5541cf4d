/*
 * test_rec.c — unit tests of the recorder's pieces that need no Python
 * target: /proc parsing, pacing, output names,
 * spawning, losses, self-timing, stack interning through the real
 * writer and reader, and the thread table's native threads (lib/rec/
 * procfs.c, pace.c, output.c, spawn.c, losses.c, selftime.c, stacks.c,
 * threads.c).
 * The whole recorder is tested end to end by tests/e2e/trec_*.sh.
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/rec/rec_int.h"

static void stat_parse_odd_names(void **state)
{
    /* a command name with spaces and ')' must not shift the fields */
    const char *text =
        "4242 (a) b) (c) S 17 4242 4242 0 -1 4194304 119 0 0 0 0 0 0 0 20 0 3 0 52017 "
        "3133440 376 18446744073709551615 1 2 140734472816432 0 0 0 0 0 0 0 0 0 17 1 0 0 0 "
        "0 0 3 4 5 6 7 8 9 256\n";
    rec_stat s;
    assert_int_equal(rec_stat_parse(text, strlen(text), &s), 0);
    assert_int_equal(s.state, 'S');
    assert_int_equal(s.ppid, 17);
    assert_int_equal(s.num_threads, 3); /* what makes trec list the tasks at once */
    assert_int_equal(s.starttime, 52017);
    assert_int_equal(s.startstack, 140734472816432ULL);
    assert_int_equal(s.exit_code, 256);
    assert_int_equal(rec_stat_parse("garbage", 7, &s), -1);
    assert_int_equal(rec_stat_parse("1 (x) R 2 3", 11, &s), -1);
}

static void stat_of_self(void **state)
{
    rec_stat s;
    assert_int_equal(rec_proc_stat(getpid(), 0, &s), 0);
    assert_int_equal(s.state, 'R');
    assert_int_equal(s.ppid, getppid());
    assert_int_equal(s.exit_code, 0); /* field 52 exists and is 0 while alive */
    int fd = rec_proc_open(getpid(), getpid(), "stat");
    assert_true(fd >= 0);
    assert_int_equal(rec_fd_state(fd), 'R');
    close(fd);
    int64_t start = rec_start_ns(s.starttime);
    int64_t now = trc_now_ns();
    assert_true(start > 0 && start <= now);
    assert_true(now - start < 3600LL * 1000000000LL); /* this test started recently */
    fd = rec_proc_open(getpid(), 0, "statm");
    assert_true(rec_fd_rss_bytes(fd) > 0);
    close(fd);
    char buf[256];
    assert_int_equal(rec_proc_comm(getpid(), getpid(), buf, sizeof buf), 0);
    assert_string_equal(buf, "test_rec");
}

static void zombie_exit_code(void **state)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(7);
    rec_stat s;
    int tries = 0;
    do {
        usleep(2000);
        assert_int_equal(rec_proc_stat(pid, 0, &s), 0);
    } while (s.state != 'Z' && ++tries < 1000);
    assert_int_equal(s.state, 'Z');
    assert_true(WIFEXITED(s.exit_code));
    assert_int_equal(WEXITSTATUS(s.exit_code), 7);
    pid_t kids[8];
    int n = rec_proc_children(getpid(), kids, 8);
    assert_true(n >= 1);
    int found = 0;
    for (int i = 0; i < n && i < 8; i++)
        found |= kids[i] == pid;
    assert_true(found);
    waitpid(pid, NULL, 0);
    assert_int_equal(rec_proc_stat(pid, 0, &s), -1);
}

/* A followed descendant's end is noticed at the next tick, not at its
 * 20 Hz check, and only that descendant's check is brought forward: a
 * zombie shows its status only until its parent reaps it. */
static void children_poll_exits(void **state)
{
    pid_t alive = fork();
    if (alive == 0) {
        pause();
        _exit(0);
    }
    pid_t dead = fork();
    if (dead == 0)
        _exit(5);
    rec_targets ts;
    memset(&ts, 0, sizeof ts);
    int64_t t0 = trc_now_ns();
    rec_target *a = rec_targets_add(&ts, alive, 0, 0, t0);
    rec_target *d = rec_targets_add(&ts, dead, 0, 0, t0);
    assert_non_null(a);
    assert_non_null(d);
    if (d->pid_fd < 0) {
        rec_targets_cleanup(&ts);
        kill(alive, SIGKILL);
        waitpid(alive, NULL, 0);
        waitpid(dead, NULL, 0);
        skip(); /* no pidfd_open (Linux < 5.3) */
    }
    int64_t check_a = a->next_check_ns, check_d = d->next_check_ns;
    assert_true(check_d > t0);
    int64_t now = t0;
    for (int tries = 0; d->next_check_ns == check_d && tries < 1000; tries++) {
        usleep(2000);
        now = trc_now_ns();
        rec_children_poll_exits(&ts, now);
    }
    assert_int_equal(d->next_check_ns, now);
    assert_int_equal(a->next_check_ns, check_a);
    /* the launched root is trec's to wait for: never polled */
    d->launched = 1;
    d->next_check_ns = check_d;
    rec_children_poll_exits(&ts, now + 1);
    assert_int_equal(d->next_check_ns, check_d);
    rec_targets_cleanup(&ts);
    kill(alive, SIGKILL);
    waitpid(alive, NULL, 0);
    waitpid(dead, NULL, 0);
}

static void pace_classify(void **state)
{
    int late;
    uint64_t missed;
    rec_pace_classify(1000000, 0, &late, &missed);
    assert_false(late);
    assert_int_equal(missed, 0);
    rec_pace_classify(1000000, 500000, &late, &missed);
    assert_false(late);
    rec_pace_classify(1000000, 500001, &late, &missed);
    assert_true(late);
    assert_int_equal(missed, 0);
    rec_pace_classify(1000000, 2500000, &late, &missed);
    assert_true(late);
    assert_int_equal(missed, 2);
    rec_pace_classify(1000000, -5, &late, &missed);
    assert_false(late);
    assert_int_equal(missed, 0);
}

static void pace_grid(void **state)
{
    rec_pacer p;
    int64_t t0 = trc_now_ns();
    rec_pacer_init(&p, 2000000, t0, 1);
    rec_tick t;
    int64_t prev = t0;
    for (int i = 0; i < 20; i++) {
        while (!rec_pacer_wait(&p, &t))
            ;
        assert_true(t.now_ns >= prev);
        prev = t.now_ns;
    }
    /* 20 ticks at 2 ms: about 40 ms (jitter < 0.2 ms, generous for load) */
    assert_true(prev - t0 >= 38000000);
    /* fall behind by ~5 periods: the next tick says so and the grid moves on */
    uint64_t k_before = p.k;
    struct timespec ts = {0, 10500000};
    nanosleep(&ts, NULL);
    while (!rec_pacer_wait(&p, &t))
        ;
    assert_true(t.late);
    assert_true(t.missed >= 4);
    assert_int_equal(p.k, k_before + 1 + t.missed);
    assert_true(p.deadline_ns > t.now_ns);
}

/* --spin: ticks are taken on the clock, never before their deadline; a
 * far deadline is waited for in slices, each returning 0 (signals are
 * looked at in between) until it is reached. */
static void pace_spin(void **state)
{
    rec_pacer p;
    int64_t t0 = trc_now_ns();
    rec_pacer_init(&p, 100000, t0, 7);
    p.spin = 1;
    rec_tick t;
    for (int i = 0; i < 200; i++) {
        int64_t deadline = p.deadline_ns;
        while (!rec_pacer_wait(&p, &t))
            ;
        assert_true(t.now_ns >= deadline);
        assert_int_equal(t.lateness_ns, t.now_ns - deadline);
    }
    rec_pacer_init(&p, 50000000, trc_now_ns(), 7);
    p.spin = 1;
    while (!rec_pacer_wait(&p, &t))
        ; /* the grid's first tick: at once */
    int slices = 0;
    int64_t a = trc_now_ns();
    while (!rec_pacer_wait(&p, &t))
        slices++;
    /* 50 ms in 1 ms slices (fewer when the machine took the CPU away) */
    assert_true(slices >= 5);
    assert_true(t.now_ns >= p.origin_ns + 50000000);
    assert_true(t.now_ns - a < 2000000000);
}

static void output_names(void **state)
{
    char path[64];
    assert_int_equal(rec_output_expand("run-%p.trc", 123, path, sizeof path), 0);
    assert_string_equal(path, "run-123.trc");
    assert_int_equal(rec_output_expand("a%%p", 9, path, sizeof path), 0);
    assert_string_equal(path, "a%p");
    assert_int_equal(rec_output_expand("bad%x", 9, path, sizeof path), -1);
    assert_int_equal(rec_output_expand("tail%", 9, path, sizeof path), -1);
    assert_int_equal(rec_output_expand("", 9, path, sizeof path), -1);
    assert_int_equal(rec_output_expand("0123456789%p", 1234567, path, 12), -1);
    char err[256];
    rec_output o;
    assert_int_equal(rec_output_open(&o, "/nonexistent-dir/x.trc", 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent-dir/x.trc"));
}

static int run_child(char *const *argv, int to_stderr, int *exec_errno)
{
    rec_child c;
    char err[256];
    assert_int_equal(rec_spawn_prepare(argv, to_stderr, &c, err, sizeof err), 0);
    assert_true(c.pid > 0);
    *exec_errno = rec_spawn_release(&c);
    int status;
    assert_int_equal(waitpid(c.pid, &status, 0), c.pid);
    return status;
}

static void spawn_runs_and_fails(void **state)
{
    int e;
    char *ok[] = {"sh", "-c", "exit 3", NULL};
    int st = run_child(ok, 0, &e);
    assert_int_equal(e, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 3);

    char *missing[] = {"/nonexistent/program", NULL};
    st = run_child(missing, 0, &e);
    assert_int_equal(e, ENOENT);
    assert_int_equal(WEXITSTATUS(st), 127);

    /* a held child that is abandoned never runs its program */
    char marker[] = "/tmp/test_rec_marker_XXXXXX";
    int mfd = mkstemp(marker);
    assert_true(mfd >= 0);
    close(mfd);
    unlink(marker);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "touch %s", marker);
    char *touch[] = {"sh", "-c", cmd, NULL};
    rec_child c;
    char err[256];
    assert_int_equal(rec_spawn_prepare(touch, 0, &c, err, sizeof err), 0);
    rec_spawn_abort(&c);
    assert_int_equal(access(marker, F_OK), -1);
}

static void spawn_stdout_to_stderr(void **state)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    int saved = dup(STDERR_FILENO);
    dup2(p[1], STDERR_FILENO);
    rec_child c;
    char err[256];
    char *argv[] = {"sh", "-c", "echo to-stdout", NULL};
    int rc = rec_spawn_prepare(argv, 1, &c, err, sizeof err);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(p[1]);
    assert_int_equal(rc, 0);
    assert_int_equal(rec_spawn_release(&c), 0);
    char buf[64] = {0};
    ssize_t n = read(p[0], buf, sizeof buf - 1);
    assert_true(n > 0);
    assert_string_equal(buf, "to-stdout\n");
    close(p[0]);
    waitpid(c.pid, NULL, 0);
}

static void spawn_resets_signals(void **state)
{
    /* an ignored SIGINT in the recorder must not be inherited */
    struct sigaction ign = {0}, old;
    ign.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ign, &old);
    int e;
    char *argv[] = {"sh", "-c", "kill -INT $$; exit 0", NULL};
    int st = run_child(argv, 0, &e);
    sigaction(SIGINT, &old, NULL);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGINT);
}

static void loss_counts(void **state)
{
    rec_lossacc a;
    rec_loss_init(&a, TRC_LOSS_SAMPLES_LATE, -1);
    rec_loss_add(&a, 0, 5);
    assert_int_equal(a.count, 0);
    rec_loss_add(&a, 2, 10);
    rec_loss_add(&a, 3, 20);
    assert_int_equal(a.count, 5);
    assert_int_equal(a.total, 5);
    assert_int_equal(a.first_ns, 10);
    assert_int_equal(a.last_ns, 20);
    assert_int_equal(rec_loss_flush(&a, NULL, ""), TRC_OK); /* no writer: kept */
    assert_int_equal(a.count, 5);
}

static void selftime_quantiles(void **state)
{
    rec_selftime st;
    assert_int_equal(rec_selftime_init(&st), 0);
    assert_int_equal(rec_selftime_quantile(&st, 0.5), 0);
    for (int i = 1; i <= 100; i++)
        rec_selftime_add(&st, i * 1000); /* 1..100 us */
    rec_selftime_add(&st, 5000000);       /* 5 ms: beyond the histogram */
    assert_int_equal(st.n, 101);
    assert_int_equal(st.max_ns, 5000000);
    int64_t p50 = rec_selftime_quantile(&st, 0.5);
    assert_true(p50 >= 50000 && p50 <= 51050);
    int64_t p99 = rec_selftime_quantile(&st, 0.99);
    assert_true(p99 >= 99000 && p99 <= 100050);
    assert_int_equal(rec_selftime_quantile(&st, 1.0), 5000000);
    assert_true(rec_thread_cpu_ns() > 0);
    rec_selftime_cleanup(&st);
}

/* A growing memory buffer as the writer's output and the reader's input. */
typedef struct membuf {
    unsigned char *p;
    size_t n, cap, off;
} membuf;

static int mem_write(void *ctx, const void *buf, size_t len)
{
    membuf *m = ctx;
    if (m->n + len > m->cap) {
        size_t cap = (m->n + len) * 2;
        unsigned char *p = realloc(m->p, cap);
        if (!p)
            return -1;
        m->p = p;
        m->cap = cap;
    }
    memcpy(m->p + m->n, buf, len);
    m->n += len;
    return 0;
}

static long mem_read(void *ctx, void *buf, size_t len)
{
    membuf *m = ctx;
    size_t k = m->n - m->off < len ? m->n - m->off : len;
    memcpy(buf, m->p + m->off, k);
    m->off += k;
    return (long)k;
}

/* Stacks interned through the per-thread cache come back from the reader
 * root to leaf exactly, frames keep their writer ids in user_id, and a
 * stack sharing a prefix with the previous one reuses its ids. */
static void stack_interning(void **state)
{
    membuf m = {0};
    trc_status st;
    trc_writer *w = trc_writer_open_callback(mem_write, &m, NULL, &st);
    assert_non_null(w);
    uint32_t th;
    assert_int_equal(trc_writer_thread(w, 1, 1, "main", &th), TRC_OK);

    enum { DEPTH = 600 };
    static py_frame_info fi[DEPTH + 1];
    static const py_frame_info *leaf_first[DEPTH];
    for (int i = 0; i <= DEPTH; i++)
        fi[i] = (py_frame_info){i == 0 ? "leaf" : "recurse", "fixture.py", (uint32_t)(10 + (i % 3)),
                                5, 0};
    /* leaf first: frames[0] is the leaf, frames[DEPTH-1] the root */
    for (int i = 0; i < DEPTH; i++)
        leaf_first[i] = &fi[i];
    rec_stackcache c = {0};
    uint32_t s1, s2, s3, s_empty;
    assert_int_equal(rec_stack_intern(w, &c, leaf_first, DEPTH, &s1), TRC_OK);
    assert_true(s1 > 0);
    assert_true(fi[0].user_id > 0 && fi[DEPTH - 1].user_id > 0);
    assert_int_equal(rec_stack_intern(w, &c, leaf_first, DEPTH, &s2), TRC_OK);
    assert_int_equal(s1, s2);
    /* another leaf on the same 599-frame prefix */
    leaf_first[0] = &fi[DEPTH];
    assert_int_equal(rec_stack_intern(w, &c, leaf_first, DEPTH, &s3), TRC_OK);
    assert_int_not_equal(s3, s1);
    assert_int_equal(rec_stack_intern(w, &c, leaf_first, 0, &s_empty), TRC_OK);
    assert_int_equal(s_empty, 0);
    assert_int_equal(trc_writer_sample(w, trc_now_ns(), th, s1, TRC_SAMPLE_ON_CPU, 0), TRC_OK);
    assert_int_equal(trc_writer_sample(w, trc_now_ns(), th, s3, 0, 0), TRC_OK);
    assert_int_equal(trc_writer_close(w, 0), TRC_OK);
    rec_stackcache_cleanup(&c);

    trc_reader *r = trc_reader_open_callback(mem_read, &m, "mem", &st);
    assert_non_null(r);
    const trc_event *ev;
    int n = 0;
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        if (ev->type != TRC_EV_SAMPLE)
            continue;
        const trc_stack *s = trc_reader_stack(r, ev->u.sample.stack);
        assert_non_null(s);
        assert_int_equal(s->depth, DEPTH);
        /* walk leaf to root: frame k from the leaf is leaf_first[k] */
        for (int k = 0; k < DEPTH; k++) {
            const trc_frame *f = trc_reader_frame(r, s->frame);
            const py_frame_info *want = k == 0 ? (n == 0 ? &fi[0] : &fi[DEPTH]) : &fi[k];
            assert_string_equal(f->function, want->function);
            assert_int_equal(f->line, want->line);
            assert_int_equal(f->first_line, 5);
            s = trc_reader_stack(r, s->parent);
        }
        assert_int_equal(s->depth, 0);
        n++;
    }
    assert_int_equal(st, TRC_ERR_EOF);
    assert_int_equal(n, 2);
    trc_reader_free(r);
    free(m.p);
}

/* A thread started from C, as a pool's worker: names itself, then
 * blocks until its pipe is written to. */
typedef struct cthread {
    pthread_t th;
    int go[2];
    volatile pid_t tid;
} cthread;

static void *cthread_main(void *arg)
{
    cthread *c = arg;
    pthread_setname_np(pthread_self(), "unit_native");
    __atomic_store_n(&c->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
    char b;
    while (read(c->go[0], &b, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

/* The samples' one-frame stacks, read back: their functions and kind,
 * and the thread's last name. */
static void read_native_stacks(membuf *m, const char *const *want, int nwant, const char *name)
{
    trc_status st;
    trc_reader *r = trc_reader_open_callback(mem_read, m, "mem", &st);
    assert_non_null(r);
    const trc_event *ev;
    int n = 0;
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        if (ev->type != TRC_EV_SAMPLE)
            continue;
        const trc_stack *s = trc_reader_stack(r, ev->u.sample.stack);
        assert_non_null(s);
        assert_int_equal(s->depth, 1);
        const trc_frame *f = trc_reader_frame(r, s->frame);
        assert_true(n < nwant);
        assert_string_equal(f->function, want[n]);
        assert_int_equal(f->kind, TRC_FRAME_OTHER);
        assert_string_equal(trc_reader_thread(r, ev->u.sample.thread)->name, name);
        n++;
    }
    assert_int_equal(st, TRC_ERR_EOF);
    assert_int_equal(n, nwant);
    trc_reader_free(r);
}

/* A task of the process that no entry has becomes a native thread with
 * its OS name and its state file; asking again finds the same entry;
 * once the interpreter lists a thread state with its id, the entry is
 * that Python thread's (one entry for one OS thread), and the task list
 * adds no second one.  Its one-frame stack says what it is. */
static void native_threads(void **state)
{
    cthread c = {0};
    assert_int_equal(pipe(c.go), 0);
    assert_int_equal(pthread_create(&c.th, NULL, cthread_main, &c), 0);
    pid_t tid;
    while (!(tid = __atomic_load_n(&c.tid, __ATOMIC_ACQUIRE)))
        usleep(100);

    pid_t tasks[64];
    int n = rec_proc_tasks(getpid(), tasks, 64);
    int self = 0, it = 0;
    for (int i = 0; i < n && i < 64; i++) {
        self |= tasks[i] == getpid();
        it |= tasks[i] == tid;
    }
    assert_true(self && it);
    assert_int_equal(rec_proc_tasks(-1, tasks, 64), -1);

    rec_threads t = {0}; /* no switch records: /proc only */
    int fresh;
    trc_status st;
    rec_thread *th = rec_threads_task(&t, getpid(), tid, 0, &fresh, &st);
    assert_non_null(th);
    assert_int_equal(st, TRC_OK);
    assert_true(fresh && th->native && th->tstate == 0);
    assert_string_equal(th->name, "unit_native");
    assert_true(th->state_fd >= 0);
    assert_int_equal(rec_threads_task(&t, getpid(), tid, 0, &fresh, &st), th);
    assert_false(fresh);
    assert_null(rec_threads_task(&t, getpid(), 999999999, 0, &fresh, &st));
    assert_int_equal(st, TRC_OK);
    assert_int_equal(t.n, 1);

    membuf m = {0};
    trc_writer *w = trc_writer_open_callback(mem_write, &m, NULL, &st);
    assert_non_null(w);
    assert_int_equal(rec_thread_define(th, w, getpid()), TRC_OK);
    assert_int_equal(rec_native_stack(w, th->name, &th->native_stack), TRC_OK);
    assert_int_equal(trc_writer_sample(w, trc_now_ns(), th->wid, th->native_stack, 0, 0), TRC_OK);
    /* renamed by the program: a rename, and a new frame from the next sample */
    pthread_setname_np(c.th, "unit_renamed");
    th->last_ok = 1;
    assert_int_equal(rec_thread_refresh_name(th, w, NULL, getpid(), th->next_name_ns), TRC_OK);
    assert_string_equal(th->name, "unit_renamed");
    assert_int_equal(th->native_stack, 0);
    assert_false(th->last_ok);
    assert_int_equal(rec_native_stack(w, th->name, &th->native_stack), TRC_OK);
    assert_int_equal(trc_writer_sample(w, trc_now_ns(), th->wid, th->native_stack, 0, 0), TRC_OK);
    assert_int_equal(trc_writer_close(w, 0), TRC_OK);
    static const char *const frames[] = {"[native thread unit_native]", "[native thread unit_renamed]"};
    read_native_stacks(&m, frames, 2, "unit_renamed");
    free(m.p);

    /* it calls into Python: the interpreter lists a thread state with its id */
    py_thread_info ti = {.tstate = 0x1000, .tid = tid, .pthread_id = 1, .holds_gil = -1};
    rec_thread *py = rec_threads_get(&t, NULL, getpid(), &ti, 0, &st);
    assert_ptr_equal(py, th);
    assert_true(!py->native && py->tstate == 0x1000);
    assert_int_equal(rec_threads_task(&t, getpid(), tid, 0, &fresh, &st), py);
    assert_int_equal(t.n, 1);

    rec_threads_cleanup(&t);
    assert_int_equal(write(c.go[1], "x", 1), 1);
    pthread_join(c.th, NULL);
    close(c.go[0]);
    close(c.go[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stat_parse_odd_names),
        cmocka_unit_test(stat_of_self),
        cmocka_unit_test(zombie_exit_code),
        cmocka_unit_test(children_poll_exits),
        cmocka_unit_test(pace_classify),
        cmocka_unit_test(pace_grid),
        cmocka_unit_test(pace_spin),
        cmocka_unit_test(output_names),
        cmocka_unit_test(spawn_runs_and_fails),
        cmocka_unit_test(spawn_stdout_to_stderr),
        cmocka_unit_test(spawn_resets_signals),
        cmocka_unit_test(loss_counts),
        cmocka_unit_test(stack_interning),
        cmocka_unit_test(native_threads),
        cmocka_unit_test(selftime_quantiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
