/*
 * test_py_errors.c — py_proc_attach's failures, each with its status and
 * a one-line explanation: a non-Python target (/bin/sleep), a process
 * that is gone or exiting (a zombie), an invalid pid, an unsupported CPython (2.x/3.6/3.7 when
 * installed), a libpython loaded but not initialised (NOT_READY), an
 * interpreter caught right after exec, before the loader mapped its
 * libpython (NOT_READY, not an "old Python"), one whose interpreter was
 * finalised (shutting down: GONE, not "retry"), a target we may not read
 * (PERM, checked by dropping root in a child), and the permission line
 * for each rule that can refuse.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/py/pyproc.h"
#include "tests/support/pyself/py_testutil.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/ptrace.h>

#include "lib/py/py_elf.h"
#include "lib/py/py_internal.h"

static void test_not_python(void **state)
{
    pyt_child c;
    char *argv[] = { "/bin/sh", "-c", "echo ready; exec sleep 60", NULL };
    char line[256], err[512];
    py_proc *p = (py_proc *)1;

    assert_int_equal(pyt_spawn(&c, argv), 0);
    assert_int_equal(pyt_line(&c, line, sizeof line, 10000), 0);
    /* "exec" may not have happened yet when the line arrives */
    py_status st = PY_OK;
    for (int i = 0; i < 100; i++) {
        st = py_proc_attach(c.pid, &p, err, sizeof err);
        if (strstr(err, "sleep"))
            break;
        usleep(20000);
    }
    printf("message: %s\n", err);
    assert_int_equal(st, PY_ERR_NOT_PYTHON);
    assert_null(p);
    assert_non_null(strstr(err, "not a CPython process"));
    assert_non_null(strstr(err, "sleep"));
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)c.pid);
    assert_non_null(strstr(err, pid));
    assert_null(strchr(err, '\n'));
    pyt_stop(&c);
}

static void test_gone_and_invalid(void **state)
{
    char err[512];
    py_proc *p;
    pid_t pid = fork();

    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    assert_int_equal(py_proc_attach(pid, &p, err, sizeof err), PY_ERR_GONE);
    assert_non_null(strstr(err, "no process"));
    assert_int_equal(py_proc_attach(0, &p, err, sizeof err), PY_ERR_GONE);
    assert_int_equal(py_proc_attach(-4, &p, err, sizeof err), PY_ERR_GONE);
    assert_non_null(strstr(err, "invalid pid"));
    /* err may be NULL */
    assert_int_equal(py_proc_attach(pid, &p, NULL, 0), PY_ERR_GONE);
}

/* A zombie (like a process caught on its way out) has no maps and no
 * executable left: gone, not "not a CPython process". */
static void test_exiting(void **state)
{
    char err[512];
    py_proc *p;
    pid_t pid = fork();

    if (pid == 0)
        _exit(0);
    char fn[64], buf[512];
    snprintf(fn, sizeof fn, "/proc/%d/stat", (int)pid);
    for (int i = 0; i < 1000; i++) {
        FILE *f = fopen(fn, "r");
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = '\0';
        const char *q = strrchr(buf, ')');
        if (q && q[1] == ' ' && q[2] == 'Z')
            break;
        usleep(2000);
    }
    py_status st = py_proc_attach(pid, &p, err, sizeof err);
    printf("message: %s\n", err);
    assert_int_equal(st, PY_ERR_GONE);
    assert_non_null(strstr(err, "exiting"));
    waitpid(pid, NULL, 0);
}

static void test_old_versions(void **state)
{
    glob_t g;
    int tried = 0;

    if (test_pyenv_glob("versions/*/bin/python", 0, &g) != 0) {
        printf("no pyenv interpreters\n");
        return;
    }
    for (size_t i = 0; i < g.gl_pathc; i++) {
        if (!pyt_old_dir(g.gl_pathv[i]))
            continue;
        const char *v = strstr(g.gl_pathv[i], "/versions/") + 10;
        char want[8];
        snprintf(want, sizeof want, "%.3s", v);   /* "2.7", "3.6", "3.7" */
        pyt_child c;
        char *argv[] = { g.gl_pathv[i], "-c",
                         "import sys, time; sys.stdout.write('ready\\n'); sys.stdout.flush(); "
                         "time.sleep(60)", NULL };
        char line[256], err[512];
        py_proc *p;
        assert_int_equal(pyt_spawn(&c, argv), 0);
        if (pyt_line(&c, line, sizeof line, 30000) != 0) {
            pyt_stop(&c);
            continue;
        }
        py_status st = py_proc_attach(c.pid, &p, err, sizeof err);
        printf("%s: %s\n", g.gl_pathv[i], err);
        assert_int_equal(st, PY_ERR_VERSION);
        assert_non_null(strstr(err, want));
        assert_non_null(strstr(err, "3.8 or later"));
        pyt_stop(&c);
        tried++;
    }
    globfree(&g);
    printf("%d unsupported interpreters checked\n", tried);
}

/* Every pyenv interpreter linked against libpython (old ones too: what
 * they are cannot be known yet), stopped by ptrace at its exec, when
 * only the executable and the loader are mapped: NOT_READY, retry. */
static void test_before_loader(void **state)
{
    glob_t g;
    int tried = 0;

    if (test_pyenv_glob("versions/*/bin/python", 0, &g) != 0) {
        printf("no pyenv interpreters: skipped\n");
        return;
    }
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char real[PATH_MAX], perr[256];
        pyelf e;
        if (!realpath(g.gl_pathv[i], real) || pyelf_open(&e, real, perr, sizeof perr) != 0)
            continue;
        int needs = pyelf_needs(&e, "libpython");
        pyelf_close(&e);
        if (!needs)
            continue;
        pid_t pid = fork();
        if (pid == 0) {
            char *argv[] = { real, "-c", "pass", NULL };
            if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
                _exit(99);
            execv(real, argv);
            _exit(98);
        }
        assert_true(pid > 0);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFSTOPPED(status)) {
            printf("%s: not stopped at exec (ptrace unavailable?): skipped\n", real);
            continue;
        }
        char err[512];
        py_proc *p = NULL;
        py_status st = py_proc_attach(pid, &p, err, sizeof err);
        printf("%s: %s\n", real, err);
        assert_int_equal(st, PY_ERR_NOT_READY);
        assert_null(p);
        assert_non_null(strstr(err, "libpython"));
        assert_null(strchr(err, '\n'));
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        tried++;
    }
    globfree(&g);
    printf("%d interpreters checked before their loader ran\n", tried);
}

/* A process that has libpython mapped and never calls Py_Initialize. */
static void test_not_ready(void **state)
{
    glob_t g;
    int tried = 0;

    if (test_pyenv_glob("versions/3.*/lib/libpython3.*.so.1.0", 0, &g) != 0) {
        printf("no shared libpython: skipped\n");
        return;
    }
    for (size_t i = 0; i < g.gl_pathc; i++) {
        if (pyt_old_dir(g.gl_pathv[i]))
            continue;
        int fd[2];
        assert_int_equal(pipe(fd), 0);
        pid_t pid = fork();
        if (pid == 0) {
            close(fd[0]);
            char ok = dlopen(g.gl_pathv[i], RTLD_NOW | RTLD_LOCAL) ? 'y' : 'n';
            if (write(fd[1], &ok, 1) != 1)
                _exit(1);
            pause();
            _exit(0);
        }
        close(fd[1]);
        char ok = 0;
        assert_int_equal(read(fd[0], &ok, 1), 1);
        close(fd[0]);
        if (ok == 'y') {
            char err[512];
            py_proc *p;
            py_status st = py_proc_attach(pid, &p, err, sizeof err);
            printf("%s: %s\n", g.gl_pathv[i], err);
            assert_int_equal(st, PY_ERR_NOT_READY);
            assert_non_null(strstr(err, "retry"));
            tried++;
        }
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    globfree(&g);
    assert_true(tried > 0);
}

/* A process whose interpreter was initialised and finalised again (as
 * at the end of every Python program, where exit() then runs the C
 * atexit handlers): its runtime has no interpreter, like one not
 * started yet, but it is shutting down and will not start again. */
static void test_finalized(void **state)
{
    glob_t g;
    int tried = 0;

    if (test_pyenv_glob("versions/3.*/lib/libpython3.*.so.1.0", 0, &g) != 0) {
        printf("no shared libpython: skipped\n");
        return;
    }
    for (size_t i = 0; i < g.gl_pathc; i++) {
        if (pyt_old_dir(g.gl_pathv[i]))
            continue;
        int fd[2];
        assert_int_equal(pipe(fd), 0);
        fflush(stdout); /* the finalising child would write our buffer again */
        pid_t pid = fork();
        if (pid == 0) {
            close(fd[0]);
            /* PYTHONHOME: the version's own directory (.../versions/3.X) */
            char home[PATH_MAX];
            snprintf(home, sizeof home, "%s", g.gl_pathv[i]);
            *strrchr(home, '/') = '\0';
            *strrchr(home, '/') = '\0';
            setenv("PYTHONHOME", home, 1);
            void *h = dlopen(g.gl_pathv[i], RTLD_NOW | RTLD_LOCAL);
            void (*init)(int) = NULL;
            int (*fini)(void) = NULL;
            if (h) {
                void *a = dlsym(h, "Py_InitializeEx"), *b = dlsym(h, "Py_FinalizeEx");
                memcpy(&init, &a, sizeof a);
                memcpy(&fini, &b, sizeof b);
            }
            char ok = 'n';
            if (init && fini) {
                init(0);
                ok = fini() == 0 ? 'y' : 'n';
            }
            if (write(fd[1], &ok, 1) != 1)
                _exit(1);
            pause();
            _exit(0);
        }
        close(fd[1]);
        char ok = 0;
        assert_int_equal(read(fd[0], &ok, 1), 1);
        close(fd[0]);
        if (ok == 'y') {
            char err[512];
            py_proc *p;
            py_status st = py_proc_attach(pid, &p, err, sizeof err);
            printf("%s: %s\n", g.gl_pathv[i], err);
            assert_int_equal(st, PY_ERR_GONE);
            assert_non_null(strstr(err, "is shutting down"));
            assert_null(strstr(err, "retry"));
            tried++;
        }
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    globfree(&g);
    assert_true(tried > 0);
}

/* Drop root in a child and try to read a root-owned Python. */
static void test_permission(void **state)
{
    pyt_list l;

    if (geteuid() != 0) {
        printf("not root: the permission case needs a target of another user: skipped\n");
        return;
    }
    pyt_find(&l);
    if (l.n == 0) {
        printf("no CPython 3.8+: skipped\n");
        return;
    }
    pyt_child c;
    char *argv[] = { l.path[0], "-c", "import time; print('ready', flush=True); time.sleep(60)", NULL };
    char line[256];
    assert_int_equal(pyt_spawn(&c, argv), 0);
    assert_int_equal(pyt_line(&c, line, sizeof line, 30000), 0);
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    if (pid == 0) {
        char err[512] = "";
        py_proc *p;
        close(fd[0]);
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(3);
        py_status st = py_proc_attach(c.pid, &p, err, sizeof err);
        if (write(fd[1], err, strlen(err) + 1) < 0)
            _exit(4);
        _exit(st == PY_ERR_PERM ? 0 : 1);
    }
    close(fd[1]);
    char msg[512] = "";
    ssize_t n = read(fd[0], msg, sizeof msg - 1);
    msg[n > 0 ? n : 0] = '\0';
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    pyt_stop(&c);
    printf("message: %s\n", msg);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_non_null(strstr(msg, "CAP_SYS_PTRACE"));
    assert_non_null(strstr(msg, "ptrace_scope"));
}

/* The refusal's line names the rule that applies, never a fix trec
 * already has: root with CAP_SYS_PTRACE is not told to run as root. */
static void test_permission_messages(void **state)
{
    static const struct {
        long euid, target_uid;
        int cap, yama, more_caps, other_ns;
        const char *cmd, *want, *not_want;
    } cases[] = {
        /* root, every privilege: something else refuses; not Python */
        {0, 0, 1, -1, 1, 0, "/process_api --init", "although trec runs as root with CAP_SYS_PTRACE",
         "run trec as root"},
        {0, 0, 1, 1, 0, 0, "/usr/bin/python3 app.py", "something else refuses", "does not name Python"},
        {0, 0, 1, -1, 0, 0, "/sbin/init", "(/sbin/init)", NULL},
        {0, 0, 1, -1, 0, 0, "/sbin/init", "does not name Python: is it the process you meant?", NULL},
        {1000, 1000, 1, 0, 0, 0, "python3 x.py", "although trec runs as uid 1000 with CAP_SYS_PTRACE",
         "as root"},
        /* root in a container without the capability */
        {0, 0, 0, -1, 1, 0, "python3 x.py", "without CAP_SYS_PTRACE", "run trec as root"},
        {0, 0, 0, -1, 1, 0, "python3 x.py", "--cap-add SYS_PTRACE", NULL},
        {0, 0, 1, -1, 0, 1, "python3 x.py", "another user namespace", "as root"},
        {0, 0, 1, 3, 0, 0, "python3 x.py", "ptrace_scope=3", "run trec as root"},
        {1000, 1000, 0, 3, 0, 0, "python3 x.py", "until the next reboot", NULL},
        /* an ordinary user */
        {1000, 0, 0, 1, 0, 0, "python3 x.py", "another user (uid 0, trec as uid 1000)", NULL},
        {1000, 0, 0, 1, 0, 0, "python3 x.py", "or as root / with CAP_SYS_PTRACE", NULL},
        {1000, 1000, 0, 1, 0, 0, "python3 x.py", "sudo sysctl kernel.yama.ptrace_scope=0", NULL},
        {1000, 1000, 0, 2, 0, 0, "python3 x.py", "setcap cap_sys_ptrace+ep", "sysctl"},
        {1000, 1000, 0, 0, 1, 0, "python3 x.py", "holds capabilities that trec lacks", NULL},
        {1000, 1000, 0, 0, 0, 0, "python3 x.py", "not dumpable", NULL},
        {1000, 1000, 0, -1, 0, 0, "", "not allowed to read the memory of pid 42: ", "meant"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        py_perm_facts f;
        char err[1024];
        memset(&f, 0, sizeof f);
        f.pid = 42;
        f.euid = (uid_t)cases[i].euid;
        f.target_uid = cases[i].target_uid;
        f.cap_ptrace = cases[i].cap;
        f.yama = cases[i].yama;
        f.target_more_caps = cases[i].more_caps;
        f.other_userns = cases[i].other_ns;
        snprintf(f.command, sizeof f.command, "%s", cases[i].cmd);
        py_perm_explain(&f, err, sizeof err);
        printf("%zu: %s\n", i, err);
        assert_null(strchr(err, '\n'));
        assert_non_null(strstr(err, cases[i].want));
        if (cases[i].not_want)
            assert_null(strstr(err, cases[i].not_want));
    }
    /* the facts of this process about itself: readable, and consistent */
    py_perm_facts self;
    py_perm_facts_read(getpid(), &self);
    assert_int_equal(self.target_uid, (long)geteuid());
    assert_false(self.other_userns);
    assert_false(self.target_more_caps);
    assert_non_null(strstr(self.command, "test_py_errors"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_python),
        cmocka_unit_test(test_permission_messages),
        cmocka_unit_test(test_gone_and_invalid),
        cmocka_unit_test(test_exiting),
        cmocka_unit_test(test_old_versions),
        cmocka_unit_test(test_not_ready),
        cmocka_unit_test(test_finalized),
        cmocka_unit_test(test_before_loader),
        cmocka_unit_test(test_permission),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
