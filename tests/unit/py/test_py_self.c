/*
 * test_py_self.c — lib/py's in-process walker (py_proc_attach_self +
 * py_proc_stack_self_thread, the CUPTI injection's path) under every
 * CPython found: each runs fixtures/workloads/py_selfcheck.py, which
 * loads $BUILD/py/libpytest.so (tests/support/pyself/py_selftest_lib.c, built by
 * mk/py.mk) with ctypes, captures its own stack from nested functions,
 * a method, a non-ASCII function, a generator, a 300-deep recursion and
 * a second thread, and compares it with CPython's own frames.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/support/pyself/py_testutil.h"

static void test_every_interpreter(void **state)
{
    pyt_list l;
    char script[PATH_MAX], lib[PATH_MAX];
    const char *build = getenv("BUILD");
    int failed = 0;

    pyt_repo_path(script, sizeof script, "fixtures/workloads/py_selfcheck.py");
    /* $TRC_PYTEST_LIB, else $BUILD/py/libpytest.so (relative to the repo) */
    const char *given = getenv("TRC_PYTEST_LIB");
    char rel[PATH_MAX];
    snprintf(rel, sizeof rel, "%s/py/libpytest.so", build && *build ? build : "build");
    if (given && *given)
        snprintf(lib, sizeof lib, "%s", given);
    else if (rel[0] == '/')
        snprintf(lib, sizeof lib, "%s", rel);
    else
        pyt_repo_path(lib, sizeof lib, rel);
    if (access(lib, R_OK) != 0) {
        fprintf(stderr, "%s missing: `make test` builds it (mk/py.mk)\n", lib);
        fail();
    }
    pyt_find(&l);
    if (l.n == 0)
        skip();
    for (int i = 0; i < l.n; i++) {
        pyt_child c;
        char *argv[] = { l.path[i], script, lib, NULL };
        assert_int_equal(pyt_spawn(&c, argv), 0);
        int st = pyt_wait(&c, 120000);
        printf("[%s] %s", l.path[i], c.buf);
        if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || strncmp(c.buf, "ok ", 3) != 0) {
            fprintf(stderr, "FAIL [%s] exit status %d\n", l.path[i], st);
            failed++;
        }
    }
    assert_int_equal(failed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_interpreter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
