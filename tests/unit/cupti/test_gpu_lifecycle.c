/*
 * tests/unit/cupti/test_gpu_lifecycle.c — the CUDA injection (lib/cupti/)
 * across the life of a process, with the fake CUPTI
 * (tests/gpu/fake_cupti.c): a fork while another thread holds the
 * injection's lock, the real at-exit path (exit without
 * trec_cupti_shutdown), a crash after a flush, and libcupti that cannot
 * be loaded.  Each case runs in a forked child so the process-wide state
 * it exercises (atexit, pthread_atfork, the once-only CUPTI load) is its
 * own; the parent checks what the child left.  Built with the CUPTI
 * headers by mk/cupti.mk; without them it only reports a skip.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#ifndef TRC_HAVE_CUPTI
int main(void)
{
    printf("skip: built without the CUPTI headers\n");
    return 0;
}
#else

#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/cupti/inject.h"
#include "tests/gpu/fake_cupti.h"
#include "tests/gpu/inject_testutil.h"
#include "tests/gpu/scenario_check.h"
#include "tests/gpu/trace_check.h"

#define RT CUPTI_CB_DOMAIN_RUNTIME_API
#define LAUNCH CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000
#define CHILD_LIMIT_S 20  /* a child that hangs is killed by SIGALRM (generous: CI under load) */

static void quiet(const char *line)
{
    (void)line;
}

static trec_cupti_config config(const char *path, int flusher)
{
    return gput_config(path, flusher, quiet);
}

/* Fork with stdio flushed (the child must not repeat the parent's
 * buffered output) and the child under a time limit. */
static pid_t fork_child(void)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        alarm(CHILD_LIMIT_S);
    return pid;
}

/* Wait for the child, killing it past the limit; returns its status. */
static int wait_child(pid_t pid)
{
    int status = 0;
    for (int i = 0; i < (CHILD_LIMIT_S + 5) * 10; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return status;
        gput_sleep_ms(100);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    fail_msg("child %d did not end", (int)pid);
    return status;
}

static void expect_exit0(int status, const char *what)
{
    if (WIFSIGNALED(status))
        fail_msg("%s: child died of signal %d%s", what, WTERMSIG(status),
                 WTERMSIG(status) == SIGALRM ? " (it hung)" : "");
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0)
        fail_msg("%s: child exited %d", what, WEXITSTATUS(status));
}

/* ---- fork while the lock is held --------------------------------------- */

/* A launch-site capture that, when armed, stops inside the injection's
 * lock until released: the moment a real walker is in the middle of a
 * stack when another thread forks. */
static sem_t in_capture, release_capture;
static atomic_int block_next_capture;

static trc_status blocking_capture(trc_writer *w, uint32_t *stack, uint32_t *flags)
{
    *stack = 0;
    *flags = TRC_API_NO_PYTHON;
    if (atomic_exchange(&block_next_capture, 0)) {
        sem_post(&in_capture);
        while (sem_wait(&release_capture) != 0)
            ;
    }
    return TRC_OK;
}

static void *blocked_launcher(void *arg)
{
    *(uint32_t *)arg = fake_cupti_call(RT, LAUNCH, fake_cupti_now(), 10, 0);
    return NULL;
}

/* The child of a fork taken while a thread of the parent sat inside the
 * injection's lock.  Without the atfork handler it would take that lock
 * (never released in the child: the holder is not there) at its first
 * launch or buffer, and hang; with it, the injection stays out.  Its
 * own launch and records must never reach the parent's trace. */
static void forked_child(cupti_api *api)
{
    fake_scenario sc;
    if (trec_cupti_active() || trec_cupti_flush() != -1)
        _exit(3);
    fake_cupti_call(RT, LAUNCH, fake_cupti_now(), 10, 0);
    fake_cupti_scenario(&sc, 0);
    api->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    fake_cupti_resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
    trec_cupti_shutdown();
    exit(0);   /* runs the at-exit handler: must not flush or hang */
}

static void test_fork_while_capturing(void **state)
{
    char path[128];
    cupti_api api;
    fake_scenario sc;
    tc_trace t;
    pthread_t th;
    uint32_t blocked = 0;

    gput_tmp_path(path, sizeof path, "life", "fork");
    fake_cupti_table(&api, NULL);
    trec_cupti_config cfg = config(path, 1);
    cfg.capture = blocking_capture;
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    fake_cupti_scenario(&sc, 0);
    assert_int_equal(trec_cupti_flush(), 0);

    sem_init(&in_capture, 0, 0);
    sem_init(&release_capture, 0, 0);
    atomic_store(&block_next_capture, 1);
    assert_int_equal(pthread_create(&th, NULL, blocked_launcher, &blocked), 0);
    while (sem_wait(&in_capture) != 0)
        ;
    pid_t pid = fork_child();
    if (pid == 0)
        forked_child(&api);
    int status = wait_child(pid);
    sem_post(&release_capture);
    pthread_join(th, NULL);
    expect_exit0(status, "fork while capturing");

    /* the parent carries on recording */
    assert_true(trec_cupti_active());
    uint32_t after = fake_cupti_call(RT, LAUNCH, fake_cupti_now(), 10, 0);
    trec_cupti_shutdown();
    assert_int_equal(tc_load(path, &t), TRC_OK);
    assert_int_equal(t.reader_losses, 0);
    /* had the child written, the file would hold damage, twice the
     * scenario, or a call from the child's thread */
    assert_int_equal(tc_count(&t, TRC_EV_GPU_KERNEL), sc.kernels);
    assert_int_equal(tc_count(&t, TRC_EV_API_CALL), sc.api_recorded + 2);
    assert_non_null(tc_api_by_corr(&t, blocked));
    assert_non_null(tc_api_by_corr(&t, after));
    for (size_t i = 0; i < t.n; i++)
        if (t.ev[i].type == TRC_EV_API_CALL)
            assert_int_not_equal(t.ev[i].tid, pid);
    tc_free(&t);
    unlink(path);
    sem_destroy(&in_capture);
    sem_destroy(&release_capture);
}

/* ---- fork after another CUPTI client took over --------------------------- */

/* torch.profiler (Kineto) in the program took CUPTI's records, and the
 * injection has not noticed yet (it waits TAKEOVER_NS for records);
 * then a DataLoader worker is forked, runs CUDA (a launch, a context
 * torn down: a flush) and exits.  The child must stay out of CUPTI (the
 * other client may finalize it at any time) and out of the parent's
 * side trace (a chunk written there from the child's copy of the writer
 * would duplicate or damage it); the parent then notices the takeover,
 * says so once and closes a whole trace. */
static atomic_llong clock_skew;

static int64_t skewed_clock(void)
{
    return trc_now_ns() + atomic_load(&clock_skew);
}

static unsigned child_flushes_at_fork;
static int check_child_at_exit;

/* After every exit handler of the child, the injection's included. */
__attribute__((destructor)) static void child_made_no_cupti_call(void)
{
    if (check_child_at_exit && fake_cupti_flushes() != child_flushes_at_fork)
        _exit(7);
}

static void test_fork_after_takeover(void **state)
{
    char path[128];
    cupti_api api;
    tc_trace t;
    unsigned warned = 0;

    gput_tmp_path(path, sizeof path, "life", "forktaken");
    fake_cupti_table(&api, NULL);
    atomic_store(&clock_skew, 0);
    trec_cupti_config cfg = config(path, 0);
    cfg.clock = skewed_clock;
    assert_int_equal(trec_cupti_init_with_api(&api, &cfg), 0);
    uint32_t ours = fake_cupti_call(RT, LAUNCH, fake_cupti_now(), 10, 0);
    assert_int_equal(trec_cupti_flush(), 0);
    fake_cupti_other_client();
    fake_cupti_call(RT, LAUNCH, fake_cupti_now(), 10, 0);   /* its record goes elsewhere */
    assert_int_equal(trec_cupti_flush(), 0);                 /* not noticed yet */

    child_flushes_at_fork = fake_cupti_flushes();
    pid_t pid = fork_child();
    if (pid == 0) {
        check_child_at_exit = 1;
        fake_cupti_call(RT, LAUNCH, fake_cupti_now(), 10, 0);
        fake_cupti_resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
        exit(0);   /* the at-exit handler runs in the child too */
    }
    expect_exit0(wait_child(pid), "fork after takeover");

    assert_true(trec_cupti_active());
    atomic_store(&clock_skew, 11000000000LL);
    assert_int_equal(trec_cupti_flush(), 0);
    fake_cupti_finalize();
    trec_cupti_shutdown();
    assert_int_equal(fake_cupti_calls_after_finalize(), 0);
    assert_int_equal(tc_load(path, &t), TRC_OK);
    assert_int_equal(t.reader_losses, 0);
    assert_int_equal(t.segments, 1);
    assert_int_equal(tc_count(&t, TRC_EV_API_CALL), 1);
    assert_non_null(tc_api_by_corr(&t, ours));
    for (size_t i = 0; i < t.n; i++)
        if (t.ev[i].type == TRC_EV_LOSS &&
            strstr(t.ev[i].detail, "taken over by another CUPTI client"))
            warned++;
    assert_int_equal(warned, 1);
    tc_free(&t);
    unlink(path);
}

/* ---- exit and crash ----------------------------------------------------- */

/* In a fresh child: start the injection (flusher thread on, as under
 * the driver), queue the scenario, send its figures up the pipe, then
 * end as end() does (it never returns).  The parent gets the child's
 * pid, wait status and scenario figures. */
static pid_t recording_child(const char *path, void (*end)(void), int *status, fake_scenario *sc)
{
    int p[2];

    assert_int_equal(pipe(p), 0);
    pid_t pid = fork_child();
    if (pid == 0) {
        cupti_api api;
        close(p[0]);
        fake_cupti_table(&api, NULL);
        trec_cupti_config cfg = config(path, 1);
        if (trec_cupti_init_with_api(&api, &cfg) != 0)
            _exit(2);
        fake_cupti_scenario(sc, 0);
        if (write(p[1], sc, sizeof *sc) != (ssize_t)sizeof *sc)
            _exit(4);
        close(p[1]);
        end();
        _exit(5);
    }
    close(p[1]);
    *status = wait_child(pid);
    assert_int_equal(read(p[0], sc, sizeof *sc), (ssize_t)sizeof *sc);
    close(p[0]);
    return pid;
}

/* Set in a child about to exit(): checked after every atexit handler,
 * the injection's included (glibc runs the executable's destructors
 * last): the exit path must have disabled the activity kinds, since the
 * CUDA work of later exit handlers is not recorded. */
static int check_kinds_at_exit;

__attribute__((destructor)) static void kinds_off_after_exit(void)
{
    if (check_kinds_at_exit && fake_cupti_kinds_enabled() != 0)
        _exit(6);
}

static void end_by_exit(void)
{
    check_kinds_at_exit = 1;
    exit(0);
}

/* The round after the one that delivered the records starts only once
 * that one flushed the writer: then die without any exit handling. */
static void end_by_kill_after_flush(void)
{
    unsigned f0 = fake_cupti_flushes();
    while (fake_cupti_flushes() < f0 + 2)
        gput_sleep_ms(10);
    raise(SIGKILL);
}

/* The program ends with exit() and never calls trec_cupti_shutdown: the
 * atexit handler alone must stop the flusher, flush what CUPTI holds,
 * disable the activity kinds and close the side trace complete. */
static void test_exit_without_shutdown(void **state)
{
    char path[128];
    fake_scenario sc;
    tc_trace t;
    int status;

    gput_tmp_path(path, sizeof path, "life", "exit");
    pid_t pid = recording_child(path, end_by_exit, &status, &sc);
    expect_exit0(status, "exit without shutdown");
    assert_int_equal(tc_load(path, &t), TRC_OK);
    fake_scenario_check(&t, &sc, pid);
    tc_free(&t);
    unlink(path);
}

/* Killed after a flusher round: what was flushed stays readable, with
 * no damage, though nothing ran at exit. */
static void test_crash_after_flush(void **state)
{
    char path[128];
    fake_scenario sc;
    tc_trace t;
    int status;

    gput_tmp_path(path, sizeof path, "life", "crash");
    recording_child(path, end_by_kill_after_flush, &status, &sc);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);
    assert_int_equal(tc_load(path, &t), TRC_OK);
    assert_int_equal(t.reader_losses, 0);
    assert_int_equal(tc_count(&t, TRC_EV_GPU_DEVICE), 2);
    assert_int_equal(tc_count(&t, TRC_EV_GPU_KERNEL), sc.kernels);
    assert_int_equal(tc_count(&t, TRC_EV_GPU_MEMCPY), sc.memcpys);
    assert_int_equal(tc_count(&t, TRC_EV_API_CALL), sc.api_recorded);
    tc_free(&t);
    unlink(path);
}

/* ---- no libcupti ------------------------------------------------------ */

/* TREC_CUPTI_LIB names nothing: the driver's entry point warns once,
 * writes nothing and returns success; the NVTX entry points decline (0)
 * quietly.  In a child: the load is once per process. */
static void test_cannot_load_cupti(void **state)
{
    char dir[] = "/tmp/trc-gpu-noload-XXXXXX", err[256], text[2048] = "";
    int fd, status;
    ssize_t n;

    assert_non_null(mkdtemp(dir));
    snprintf(err, sizeof err, "%s/stderr", dir);
    pid_t pid = fork_child();
    if (pid == 0) {
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (e < 0 || dup2(e, 2) < 0)
            _exit(2);
        setenv("TREC_CUPTI_LIB", "/nonexistent/libcupti.so.13", 1);
        setenv("TREC_GPU_DIR", dir, 1);
        if (InitializeInjectionNvtx(NULL) != 0 || InitializeInjectionNvtx2(NULL) != 0)
            _exit(3);
        if (InitializeInjection() != 1 || InitializeInjection() != 1 || trec_cupti_active())
            _exit(4);
        exit(0);
    }
    status = wait_child(pid);
    expect_exit0(status, "cannot load CUPTI");
    fd = open(err, O_RDONLY);
    assert_true(fd >= 0);
    n = read(fd, text, sizeof text - 1);
    close(fd);
    unlink(err);
    assert_true(n > 0);
    text[n] = 0;
    /* exactly one line, saying what and why */
    assert_non_null(strstr(text, "trec: GPU recording off: cannot load CUPTI: "));
    assert_non_null(strstr(text, "/nonexistent/libcupti.so.13"));
    assert_ptr_equal(strchr(text, '\n'), text + n - 1);
    /* no side trace: nothing to say it in */
    assert_int_equal(rmdir(dir), 0);
}

/* A failed test may leave the injection running: stop it, so the next
 * test starts clean and only the real failure is reported. */
static int shutdown_after(void **state)
{
    trec_cupti_shutdown();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_fork_while_capturing, shutdown_after),
        cmocka_unit_test_teardown(test_fork_after_takeover, shutdown_after),
        cmocka_unit_test_teardown(test_exit_without_shutdown, shutdown_after),
        cmocka_unit_test_teardown(test_crash_after_flush, shutdown_after),
        cmocka_unit_test_teardown(test_cannot_load_cupti, shutdown_after),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
