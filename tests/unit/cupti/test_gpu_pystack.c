/*
 * tests/unit/cupti/test_gpu_pystack.c — the launch-site Python stack, read
 * in-process (lib/cupti/launch.c over lib/py's walker), under every
 * CPython installed here (found at run time: /usr/bin/python3* and
 * pyenv's versions).  Each interpreter runs tests/gpu/pystack_probe.py,
 * which loads $BUILD/libtrec-cupti.so with ctypes (GIL released, as in
 * PyTorch's launches) and calls trec_cupti_test_capture_stack — the code
 * the injection runs at API_ENTER — from known lines, on the main thread
 * and on a second Python thread: the recorded API_CALL's stack must name
 * those functions and lines.  And on a thread created in C that never
 * ran Python (PyTorch's autograd workers): flags LAUNCH | NO_PYTHON and
 * no stack, while the same process's main thread still gets its stack;
 * and 10,000 launches on such a thread cost no more than two thread-list
 * reads and no allocation (the thread is remembered as Python-less).
 * And where process_vm_readv is refused (tests/gpu/pystack_wild.py, a
 * seccomp filter, as under gVisor): a capture whose frame points nowhere
 * is recorded flagged UNREADABLE, with no stack, and counted in one LOSS
 * record, without a fault; a sound one still gets its stack.
 *
 * Skips (passes with a note) without a CUDA build (no library), and in
 * sanitizer builds (a plain python cannot load an ASan library).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/gpu/trace_check.h"
#include "tests/support/pyenv.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

#define PROBE "tests/gpu/pystack_probe.py"
#define WILD_PROBE "tests/gpu/pystack_wild.py"

static char lib[4096];

/* Run argv with a time limit; returns the exit status, -1 on a hang. */
static int run(char *const argv[], int limit_s)
{
    pid_t pid = fork();
    int status = 0;
    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    for (int i = 0; i < limit_s * 10; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        struct timespec ts = { 0, 100000000L };
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

/* Minor version from "…/python3.X" or pyenv's "…/versions/3.X.Y/…"; 0 unknown. */
static int minor_of(const char *py)
{
    const char *v = strstr(py, "versions/3.");
    if (v)
        return atoi(v + strlen("versions/3."));
    v = strstr(py, "python3.");
    return v ? atoi(v + strlen("python3.")) : 0;
}

/* module_line: the <module> frame's line; 0 = on a threading.Thread. */
static void check_stack(const char *py, const char *out, int module_line)
{
    tc_trace t;
    int minor = minor_of(py);
    assert_int_equal(tc_load(out, &t), TRC_OK);
    assert_int_equal(t.reader_losses, 0);
    assert_int_equal(tc_count(&t, TRC_EV_API_CALL), 1);
    const tc_event *a = tc_nth(&t, TRC_EV_API_CALL, 0);
    assert_int_equal(a->u.api.flags, TRC_API_LAUNCH);
    assert_true(a->tid > 0);
    if (a->depth < 4)
        fail_msg("%s: stack depth %d", py, a->depth);
    assert_string_equal(a->frames[0].function, "launch_site");
    assert_int_equal(a->frames[0].line, 25);
    assert_non_null(strstr(a->frames[0].file, "pystack_probe.py"));
    assert_string_equal(a->frames[1].function, "forward");
    assert_int_equal(a->frames[1].line, 29);
    /* co_qualname from 3.11 */
    assert_string_equal(a->frames[2].function, minor >= 11 ? "Model.step" : "step");
    assert_int_equal(a->frames[2].line, 34);
    if (module_line) {
        assert_int_equal(a->depth, 4);
        assert_string_equal(a->frames[3].function, "<module>");
        assert_int_equal(a->frames[3].line, module_line);
    } else {
        /* threading's bootstrap frames, no <module> */
        for (int i = 3; i < a->depth && i < TC_MAX_FRAMES; i++)
            assert_string_not_equal(a->frames[i].function, "<module>");
    }
    tc_free(&t);
}

/* The native thread's launch: no Python frames, said so, no stack. */
static void check_no_python(const char *py, const char *out)
{
    tc_trace t;
    assert_int_equal(tc_load(out, &t), TRC_OK);
    assert_int_equal(t.reader_losses, 0);
    assert_int_equal(tc_count(&t, TRC_EV_API_CALL), 1);
    const tc_event *a = tc_nth(&t, TRC_EV_API_CALL, 0);
    if (a->u.api.flags != (TRC_API_LAUNCH | TRC_API_NO_PYTHON))
        fail_msg("%s: native thread: flags 0x%x", py, a->u.api.flags);
    assert_int_equal(a->u.api.stack, 0);
    assert_int_equal(a->depth, 0);
    assert_true(a->tid > 0);
    tc_free(&t);
}

/* 10,000 launches from a C thread: "no Python" remembered per thread, so
 * the walker reads the thread list at most about once per 100 ms and the
 * launch path allocates nothing. */
static void check_many(const char *py, const char *out)
{
    unsigned long long captures = 0, no_python = 0, lists = ~0ull;
    long allocs = -1;
    FILE *f = fopen(out, "r");

    assert_non_null(f);
    assert_int_equal(fscanf(f, "captures %llu no_python %llu thread_lists %llu allocs %ld",
                            &captures, &no_python, &lists, &allocs), 4);
    fclose(f);
    if (captures != 10000 || no_python != 10000 || lists > 2 || allocs > 2)
        fail_msg("%s: %llu launches without Python: %llu flagged, %llu thread lists read, "
                 "%ld allocations", py, captures, no_python, lists, allocs);
}

/* The wild capture (out) and the sound one after it (out.good), with
 * process_vm_readv refused. */
static void check_wild(const char *py, const char *out, const char *out_good)
{
    tc_trace t;
    assert_int_equal(tc_load(out, &t), TRC_OK);
    assert_int_equal(tc_count(&t, TRC_EV_API_CALL), 1);
    const tc_event *a = tc_nth(&t, TRC_EV_API_CALL, 0);
    if (a->u.api.flags != (TRC_API_LAUNCH | TRC_API_UNREADABLE) || a->u.api.stack)
        fail_msg("%s: wild capture: flags 0x%x stack %u", py, a->u.api.flags, a->u.api.stack);
    assert_int_equal(tc_count(&t, TRC_EV_LOSS), 1);
    const tc_event *l = tc_nth(&t, TRC_EV_LOSS, 0);
    assert_int_equal(l->u.loss.kind, TRC_LOSS_OTHER);
    assert_int_equal(l->u.loss.count, 1);
    assert_string_equal(l->detail, "launch stacks unreadable");
    tc_free(&t);
    assert_int_equal(tc_load(out_good, &t), TRC_OK);
    assert_int_equal(tc_count(&t, TRC_EV_LOSS), 0);
    a = tc_nth(&t, TRC_EV_API_CALL, 0);
    assert_non_null(a);
    assert_int_equal(a->u.api.flags, TRC_API_LAUNCH);
    if (a->depth != 2)
        fail_msg("%s: sound capture with process_vm_readv refused: depth %d", py, a->depth);
    assert_string_equal(a->frames[0].function, "good_site");
    assert_int_equal(a->frames[0].line, 74);
    assert_int_equal(a->frames[1].line, 79);
    tc_free(&t);
}

static void test_each_python(void **state)
{
    const char *build = getenv("BUILD");
    glob_t g;
    int tested = 0;
    char out[128], out_main[160], out_good[160];

    if (SANITIZED) {
        printf("skip: sanitizer build (python cannot load an ASan library)\n");
        return;
    }
    snprintf(lib, sizeof lib, "%s/libtrec-cupti.so", build ? build : "build");
    if (access(lib, R_OK) != 0) {
        printf("skip: %s not built (no CUDA headers)\n", lib);
        return;
    }
    if (lib[0] != '/') {
        char cwd[1024], tmp[4096];
        assert_non_null(getcwd(cwd, sizeof cwd));
        snprintf(tmp, sizeof tmp, "%s/%.3000s", cwd, lib);
        snprintf(lib, sizeof lib, "%s", tmp);
    }
    snprintf(out, sizeof out, "/tmp/trc-gpu-pystack-%d.trc", (int)getpid());
    snprintf(out_main, sizeof out_main, "%s.main", out);
    snprintf(out_good, sizeof out_good, "%s.good", out);
    memset(&g, 0, sizeof g);
    glob("/usr/bin/python3.[0-9]*", 0, NULL, &g);
    test_pyenv_glob("versions/3.*/bin/python3", GLOB_APPEND, &g);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *py = g.gl_pathv[i];
        int minor = minor_of(py);
        /* the walker supports 3.8+ (lib/py); older pythons here are not targets */
        if (strstr(py, "-config") || access(py, X_OK) != 0 || minor < 8)
            continue;
        static const char *const modes[] = { NULL, "thread", "native", "many" };
        for (int m = 0; m < 4; m++) {
            char *argv[] = { (char *)py, PROBE, lib, out, (char *)modes[m], NULL };
            int rc = run(argv, 60);
            if (rc != 0)
                fail_msg("%s %s: exit %d", py, modes[m] ? modes[m] : "", rc);
            if (m == 3) {
                check_many(py, out);
                unlink(out_main);
            } else if (m == 2) {
                check_no_python(py, out);
                check_stack(py, out_main, 63);   /* the walker worked there */
                unlink(out_main);
            } else {
                check_stack(py, out, m == 0 ? 68 : 0);
            }
            unlink(out);
        }
        char *wargv[] = { (char *)py, WILD_PROBE, lib, out, NULL };
        int rc = run(wargv, 60);
        if (rc == 77) {
            printf("note: %s: no seccomp filter here, refused reads not tested\n", py);
        } else if (rc != 0) {
            fail_msg("%s %s: exit %d", py, WILD_PROBE, rc);
        } else {
            check_wild(py, out, out_good);
        }
        unlink(out);
        unlink(out_good);
        printf("ok: %s\n", py);
        tested++;
    }
    globfree(&g);
    if (!tested)
        printf("skip: no python3 found\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_python),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
