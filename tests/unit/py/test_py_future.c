/*
 * test_py_future.c — py_proc_attach against running stand-ins for
 * CPython versions this trc does not know, compiled here: a program
 * whose _PyRuntime starts with the _Py_DebugOffsets cookie and a version
 * (and Py_Version says the same).  Attach must refuse each with one line
 * naming the version: a newer minor (3.16.0), a 3.15 pre-release older
 * than the 3.15 field list (3.15.0b3), a 3.14 beta; and the same for a
 * stripped program whose _PyRuntime lives in a ".PyRuntime" section (as
 * CPython 3.13+ builds place it), found through that section.  Skipped
 * with a note where no C compiler or strip is installed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/py/pyproc.h"
#include "tests/support/pyself/py_testutil.h"

static char dir[] = "/tmp/test_py_future_XXXXXX";
static int have_cc;

static int setup(void **state)
{
    char cmd[256];
    const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";

    if (!mkdtemp(dir))
        return -1;
    snprintf(cmd, sizeof cmd, "%s --version >/dev/null 2>&1 && strip --version >/dev/null 2>&1",
             cc);
    have_cc = system(cmd) == 0;
    if (!have_cc)
        fprintf(stderr, "note: no C compiler or strip (%s): stand-ins not built, tests skipped\n",
                cc);
    return 0;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Builds the stand-in for version hex / string; section: _PyRuntime in
 * ".PyRuntime" and the program stripped.  Its path in exe. */
static void build(const char *tag, uint64_t hex, const char *version, int section, char *exe,
                  size_t n)
{
    char src[128], cmd[512];
    const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";

    snprintf(src, sizeof src, "%s/%s.c", dir, tag);
    snprintf(exe, n, "%s/%s", dir, tag);
    FILE *f = fopen(src, "w");
    assert_non_null(f);
    fprintf(f,
            "#include <stdio.h>\n#include <unistd.h>\n"
            "struct rt { char cookie[8]; unsigned long long v[200]; };\n"
            "%s struct rt _PyRuntime = { \"xdebugpy\", { 0x%llxull } };\n"
            "__attribute__((used)) const unsigned long Py_Version = 0x%llxul;\n"
            "__attribute__((used)) const char version_string[] = \"%s\";\n"
            "__attribute__((used)) char PyCode_Type[64], PyUnicode_Type[64], PyBytes_Type[64];\n"
            "int main(void) { printf(\"ready %%d\\n\", (int)_PyRuntime.v[1]); fflush(stdout);\n"
            "  for (;;) pause(); }\n",
            section ? "__attribute__((section(\".PyRuntime\"), used))" : "__attribute__((used))",
            (unsigned long long)hex, (unsigned long long)hex, version);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s -O0 -o %s %s%s%s", cc, exe, src, section ? " && strip " : "",
             section ? exe : "");
    assert_int_equal(system(cmd), 0);
}

/* Runs exe, attaches, expects PY_ERR_VERSION with want in the message. */
static void refused(const char *exe, const char *want)
{
    pyt_child c;
    char *argv[] = { (char *)exe, NULL };
    char line[256], err[512] = "";
    py_proc *p = NULL;

    assert_int_equal(pyt_spawn(&c, argv), 0);
    assert_int_equal(pyt_line(&c, line, sizeof line, 10000), 0);
    py_status st = py_proc_attach(c.pid, &p, err, sizeof err);
    pyt_stop(&c);
    if (st != PY_ERR_VERSION || !strstr(err, want) || strchr(err, '\n'))
        fail_msg("%s: status %d, '%s' (want '%s')", exe, (int)st, err, want);
    assert_null(p);
}

static void test_newer_minor(void **state)
{
    char exe[128];
    if (!have_cc)
        skip();
    build("v3160", 0x031000f0, "3.16.0", 0, exe, sizeof exe);
    refused(exe, "CPython 3.16.0 is newer than this trec knows");
}

static void test_old_prerelease(void **state)
{
    char exe[128];
    if (!have_cc)
        skip();
    build("v3150b3", 0x030f00b3, "3.15.0b3", 0, exe, sizeof exe);
    refused(exe, "CPython 3.15.0b3 is a pre-release");
    build("v3140b2", 0x030e00b2, "3.14.0b2", 0, exe, sizeof exe);
    refused(exe, "CPython 3.14.0b2 is a pre-release");
}

static void test_section_stripped(void **state)
{
    char exe[128];
    if (!have_cc)
        skip();
    build("s3160", 0x031000f0, "3.16.0", 1, exe, sizeof exe);
    /* no symbols left: the runtime is found through its section, the
     * version from the block (and the file's version string) */
    refused(exe, "CPython 3.16.0 is newer than this trec knows");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_newer_minor),
        cmocka_unit_test(test_old_prerelease),
        cmocka_unit_test(test_section_stripped),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
