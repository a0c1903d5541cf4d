/*
 * test_py_elf.c — lib/py/py_elf.c on the real interpreters installed
 * here (symbols through section headers and through PT_DYNAMIC must
 * agree; Py_Version exactly from 3.11; the version string of 3.8–3.10
 * found in the read-only data matches the installation's name), on
 * truncated and non-ELF files (no crash, clean failure); every exported
 * symbol found through DT_GNU_HASH alone; the version string found from
 * page-cache-resident pages without reading the rest; _PyRuntime's
 * ".PyRuntime" section found in a stripped executable; plus the layout
 * tables (lib/py/py_layout.c) and the _Py_DebugOffsets parser
 * (lib/py/py_debugoff.c) given implausible blocks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <elf.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "lib/py/py_debugoff.h"
#include "lib/py/py_elf.h"
#include "lib/py/py_layout.h"
#include "tests/support/pyself/py_testutil.h"

/* Version "3.X.Y" of a pyenv path ".../versions/3.X.Y/...", or "". */
static void dir_version(const char *path, char *out, size_t n)
{
    const char *v = strstr(path, "/versions/");
    out[0] = '\0';
    if (v)
        snprintf(out, n, "%.*s", (int)strcspn(v + 10, "/"), v + 10);
}

static void check_file(const char *path, int minor, const char *version)
{
    pyelf e;
    char err[256], found[32];
    uint64_t a, b;

    assert_int_equal(pyelf_open(&e, path, err, sizeof err), 0);
    assert_int_equal(pyelf_symbol(&e, "_PyRuntime", &a), 0);
    e.force_dynamic = 1;
    assert_int_equal(pyelf_symbol(&e, "_PyRuntime", &b), 0);
    assert_true(a == b && a != 0);
    assert_int_equal(pyelf_symbol(&e, "PyCode_Type", &b), 0);
    e.force_dynamic = 0;
    assert_int_equal(pyelf_symbol(&e, "PyCode_Type", &a), 0);
    assert_true(a == b);
    assert_int_equal(pyelf_symbol(&e, "Py_Version", &a), minor >= 11 ? 0 : -1);
    assert_int_equal(pyelf_symbol(&e, "no_such_symbol_anywhere", &a), -1);
    if (minor <= 10) {
        assert_int_equal(pyelf_version_string(&e, minor, found, sizeof found), 0);
        if (version[0])
            assert_string_equal(found, version);
    }
    printf("%s: ok (%s)\n", path, minor <= 10 ? found : "Py_Version");
    pyelf_close(&e);
}

/* Every defined .dynsym entry, found by pyelf through DT_GNU_HASH alone,
 * with its value; names not there are not found.  Returns the count. */
static int check_gnu_hash(const char *path)
{
    pyelf e;
    char err[256];
    int n = 0;

    assert_int_equal(pyelf_open(&e, path, err, sizeof err), 0);
    const Elf64_Ehdr *h = (const Elf64_Ehdr *)e.data;
    for (unsigned i = 0; i < h->e_shnum; i++) {
        const Elf64_Shdr *s = (const Elf64_Shdr *)(e.data + h->e_shoff + (size_t)i * h->e_shentsize);
        if (s->sh_type != SHT_DYNSYM)
            continue;
        const Elf64_Shdr *strs = (const Elf64_Shdr *)(e.data + h->e_shoff + (size_t)s->sh_link * h->e_shentsize);
        const Elf64_Sym *sym = (const Elf64_Sym *)(e.data + s->sh_offset);
        const char *str = (const char *)e.data + strs->sh_offset;
        e.gnu_hash_only = 1;
        for (size_t k = 1; k < s->sh_size / sizeof *sym; k++) {
            if (sym[k].st_shndx == SHN_UNDEF || !str[sym[k].st_name])
                continue;
            uint64_t v = 0;
            if (pyelf_symbol(&e, str + sym[k].st_name, &v) != 0 || v != sym[k].st_value)
                fail_msg("%s: %s not found through DT_GNU_HASH (or another value)", path,
                         str + sym[k].st_name);
            n++;
        }
        uint64_t v;
        assert_int_equal(pyelf_symbol(&e, "no_such_symbol_anywhere", &v), -1);
        assert_int_equal(pyelf_symbol(&e, "", &v), -1);
        e.gnu_hash_only = 0;
    }
    pyelf_close(&e);
    return n;
}

static void test_real_files(void **state)
{
    glob_t g;
    int n = 0;

    if (test_pyenv_glob("versions/3.*/lib/libpython3.*.so.1.0", 0, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++) {
            if (pyt_old_dir(g.gl_pathv[i]))
                continue;
            char v[32];
            dir_version(g.gl_pathv[i], v, sizeof v);
            check_file(g.gl_pathv[i], atoi(v + 2), v);
            assert_true(check_gnu_hash(g.gl_pathv[i]) > 500);
            n++;
        }
        globfree(&g);
    }
    /* Debian's static python3.x: _PyRuntime in the executable's .dynsym */
    if (glob("/usr/bin/python3.[0-9]*", 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++) {
            int minor = atoi(strrchr(g.gl_pathv[i], '.') + 1);
            pyelf e;
            char err[256];
            uint64_t v;
            if (strchr(strrchr(g.gl_pathv[i], '.'), '-') || minor < 8 ||
                pyelf_open(&e, g.gl_pathv[i], err, sizeof err) != 0)
                continue;
            int has = pyelf_symbol(&e, "_PyRuntime", &v) == 0;
            pyelf_close(&e);
            if (has) {
                check_file(g.gl_pathv[i], minor, "");
                n++;
            }
        }
        globfree(&g);
    }
    if (n == 0)
        skip();
}

/* Pages of fd's file in the page cache, counted through a mapping of
 * our own that is never touched (a touch would read ahead). */
static size_t resident_pages(int fd, size_t size)
{
    size_t np = (size + 4095) / 4096, n = 0;
    unsigned char *vec = malloc(np);
    void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    assert_non_null(vec);
    assert_true(m != MAP_FAILED);
    assert_int_equal(mincore(m, size, vec), 0);
    for (size_t i = 0; i < np; i++)
        n += vec[i] & 1;
    munmap(m, size);
    free(vec);
    return n;
}

/* Drops fd's file from the page cache.  Pages just used can sit in the
 * kernel's per-CPU batches, out of reach of one call: a few rounds. */
static void evict(int fd)
{
    for (int i = 0; i < 5; i++) {
        assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
        usleep(20000);
    }
}

/* With the file evicted from the page cache but for the page holding
 * the version string (as after a running interpreter printed it), the
 * version is found and nearly nothing else is read: a busy disk cannot
 * hold up an attach (py_elf.c, scan_resident).  Evicted, it is still
 * found, by reading the whole file. */
static void test_version_from_resident_pages(void **state)
{
    char srcpath[PATH_MAX], tmpl[] = "/tmp/test_py_elf_res_XXXXXX", err[256];
    char want[32], got[32];
    glob_t g;
    const char *src = NULL;
    int minor = 0;

    if (test_pyenv_glob("versions/3.*/lib/libpython3.*.so.1.0", 0, &g) != 0)
        skip();
    for (size_t i = 0; i < g.gl_pathc && !src; i++) {
        char v[32];
        dir_version(g.gl_pathv[i], v, sizeof v);
        if (!pyt_old_dir(g.gl_pathv[i]) && (minor = atoi(v + 2)) >= 8 && minor <= 10) {
            snprintf(srcpath, sizeof srcpath, "%s", g.gl_pathv[i]);
            src = srcpath;
        }
    }
    if (!src) {
        globfree(&g);
        skip();
    }
    /* a copy of our own, so that evicting it touches nothing in use */
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    FILE *in = fopen(src, "rb");
    assert_non_null(in);
    static char buf[1 << 16];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(write(fd, buf, k), (ssize_t)k);
    fclose(in);
    globfree(&g);
    assert_int_equal(fsync(fd), 0);

    pyelf e;
    assert_int_equal(pyelf_open(&e, tmpl, err, sizeof err), 0);
    e.no_resident_scan = 1;
    assert_int_equal(pyelf_version_string(&e, minor, want, sizeof want), 0);
    const char *at = memmem(e.data, e.size, want, strlen(want) + 1);
    assert_non_null(at);
    size_t off = (size_t)(at - (const char *)e.data);

    size_t size = e.size;
    pyelf_close(&e);
    evict(fd);
    if (resident_pages(fd, size) > 0) {   /* the file system keeps its pages: nothing to show */
        close(fd);
        unlink(tmpl);
        skip();
    }
    char c;
    assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM), 0);
    assert_int_equal(pread(fd, &c, 1, (off_t)off), 1);   /* the interpreter's own use */
    assert_int_equal(pread(fd, &c, 1, 0), 1);             /* the ELF header */
    size_t before = resident_pages(fd, size);

    assert_int_equal(pyelf_open(&e, tmpl, err, sizeof err), 0);
    e.no_memo = 1;
    assert_int_equal(pyelf_version_string(&e, minor, got, sizeof got), 0);
    assert_string_equal(got, want);
    pyelf_close(&e);
    size_t after = resident_pages(fd, size);
    printf("%s (copy): %s from resident pages; %zu pages resident before, %zu after, of %zu\n",
           src, got, before, after, (size + 4095) / 4096);
    assert_true(after <= before + 8);

    /* nothing resident: the whole scan still finds it */
    evict(fd);
    assert_int_equal(pyelf_open(&e, tmpl, err, sizeof err), 0);
    e.no_memo = 1;
    assert_int_equal(pyelf_version_string(&e, minor, got, sizeof got), 0);
    assert_string_equal(got, want);
    pyelf_close(&e);
    assert_true(resident_pages(fd, size) > after + 32);   /* that one read the file */

    /* remembered: a second look at the same file reads none of it */
    assert_int_equal(pyelf_open(&e, tmpl, err, sizeof err), 0);
    assert_int_equal(pyelf_version_string(&e, minor, got, sizeof got), 0);
    pyelf_close(&e);
    evict(fd);
    assert_int_equal(pread(fd, &c, 1, 0), 1);             /* the ELF header */
    before = resident_pages(fd, size);
    assert_int_equal(pyelf_open(&e, tmpl, err, sizeof err), 0);
    assert_int_equal(pyelf_version_string(&e, minor, got, sizeof got), 0);
    assert_string_equal(got, want);
    pyelf_close(&e);
    assert_true(resident_pages(fd, size) <= before + 8);
    /* a changed file (new mtime) is another file: scanned again */
    char repl[32];
    snprintf(repl, sizeof repl, "3.99.%0*d", (int)strlen(want) - 5, 1);
    assert_int_equal(pwrite(fd, repl, strlen(repl), (off_t)off), (ssize_t)strlen(repl));
    struct timespec ts[2] = { { 0, UTIME_OMIT }, { 1234567890, 0 } };
    assert_int_equal(futimens(fd, ts), 0);
    assert_int_equal(pyelf_open(&e, tmpl, err, sizeof err), 0);
    assert_int_equal(pyelf_version_string(&e, minor, got, sizeof got), -1);
    assert_int_equal(pyelf_version_string(&e, 99, got, sizeof got), 0);
    assert_string_equal(got, repl);
    pyelf_close(&e);
    close(fd);
    unlink(tmpl);
}

static void test_needs(void **state)
{
    pyelf e;
    char err[256];

    assert_int_equal(pyelf_open(&e, "/bin/sh", err, sizeof err), 0);
    assert_int_equal(pyelf_needs(&e, "libpython"), 0);
    assert_int_equal(pyelf_needs(&e, "libc.so"), 1);
    pyelf_close(&e);
}

/* DT_HASH (SysV) symbol counting: build a small library that has only
 * that hash table, when a compiler is at hand. */
static void test_sysv_hash(void **state)
{
    char dir[] = "/tmp/test_py_elf_dir_XXXXXX", cmd[1024], so[256], c[256], err[256];
    pyelf e;
    uint64_t a, b;

    assert_non_null(mkdtemp(dir));
    snprintf(c, sizeof c, "%s/t.c", dir);
    snprintf(so, sizeof so, "%s/t.so", dir);
    FILE *f = fopen(c, "w");
    assert_non_null(f);
    fprintf(f, "int other[3] = {1};\nlong _PyRuntime[64] = {2};\nint Py_Version_not = 3;\n");
    fclose(f);
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -Wl,--hash-style=sysv -o %s %s 2>/dev/null", so, c);
    if (system(cmd) != 0) {
        printf("no compiler: skipped\n");
    } else {
        assert_int_equal(pyelf_open(&e, so, err, sizeof err), 0);
        assert_int_equal(pyelf_symbol(&e, "_PyRuntime", &a), 0);
        e.force_dynamic = 1;
        assert_int_equal(pyelf_symbol(&e, "_PyRuntime", &b), 0);
        assert_true(a == b);
        assert_int_equal(pyelf_symbol(&e, "Py_Version", &b), -1);
        pyelf_close(&e);
    }
    unlink(c);
    unlink(so);
    rmdir(dir);
}

static void test_bad_files(void **state)
{
    char tmpl[] = "/tmp/test_py_elf_XXXXXX", err[256];
    pyelf e;
    int fd = mkstemp(tmpl);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, "#!/bin/sh\necho not an elf file at all, long enough\n", 52), 52);
    close(fd);
    assert_int_equal(pyelf_open(&e, tmpl, err, sizeof err), -1);
    assert_non_null(strstr(err, "ELF"));
    assert_int_equal(pyelf_open(&e, "/nonexistent/file", err, sizeof err), -1);
    assert_non_null(strstr(err, "No such file"));

    /* Truncated copies of a real ELF: open may work, lookups must not crash. */
    const char *src = access("/usr/bin/python3", R_OK) == 0 ? "/usr/bin/python3" : "/bin/sh";
    FILE *in = fopen(src, "rb");
    assert_non_null(in);
    static uint8_t buf[4 << 20];
    size_t len = fread(buf, 1, sizeof buf, in);
    fclose(in);
    size_t cuts[] = { 64, 200, 4096, 65536, len / 3, len / 2, len - 1 };
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        if (cuts[i] > len)
            continue;
        fd = open(tmpl, O_WRONLY | O_TRUNC);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, buf, cuts[i]), (ssize_t)cuts[i]);
        close(fd);
        if (pyelf_open(&e, tmpl, err, sizeof err) == 0) {
            uint64_t v;
            char s[32];
            pyelf_symbol(&e, "_PyRuntime", &v);
            e.force_dynamic = 1;
            pyelf_symbol(&e, "_PyRuntime", &v);
            pyelf_needs(&e, "libpython");
            pyelf_version_string(&e, -1, s, sizeof s);
            pyelf_version_string(&e, 10, s, sizeof s);
            e.gnu_hash_only = 1;
            pyelf_symbol(&e, "_PyRuntime", &v);
            pyelf_close(&e);
        }
    }
    /* Corrupted section/program header offsets */
    fd = open(tmpl, O_WRONLY | O_TRUNC);
    memset(buf + 0x20, 0xff, 16);   /* e_phoff, e_shoff */
    assert_int_equal(write(fd, buf, 65536), 65536);
    close(fd);
    if (pyelf_open(&e, tmpl, err, sizeof err) == 0) {
        uint64_t v;
        assert_int_equal(pyelf_symbol(&e, "_PyRuntime", &v), -1);
        pyelf_close(&e);
    }
    unlink(tmpl);
}

/* A small executable whose runtime stand-in lives in a ".PyRuntime"
 * section, as CPython 3.13+ builds place _PyRuntime, compiled here and
 * then stripped: the section still says where it is, at the address the
 * symbol gave before.  Skipped (with a note) without a C compiler. */
static void test_runtime_section(void **state)
{
    char dir[] = "/tmp/test_py_elf_sec_XXXXXX", src[64], exe[64], cmd[512], err[256];
    const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
    pyelf e;
    uint64_t sym = 0, addr = 0, size = 0;
    const uint8_t *bytes = NULL;

    assert_non_null(mkdtemp(dir));
    snprintf(src, sizeof src, "%s/rt.c", dir);
    snprintf(exe, sizeof exe, "%s/rt", dir);
    FILE *f = fopen(src, "w");
    assert_non_null(f);
    fputs("struct rt { char cookie[8]; unsigned long long v[400]; };\n"
          "__attribute__((section(\".PyRuntime\"), used))\n"
          "struct rt _PyRuntime = { \"xdebugpy\", { 0x030e00f0 } };\n"
          "int main(void) { return (int)_PyRuntime.v[1]; }\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s -O0 -o %s %s 2>/dev/null", cc, exe, src);
    if (system(cmd) != 0) {
        fprintf(stderr, "note: no C compiler (%s): .PyRuntime section not tested\n", cc);
        unlink(src);
        rmdir(dir);
        return;
    }
    assert_int_equal(pyelf_open(&e, exe, err, sizeof err), 0);
    assert_int_equal(pyelf_symbol(&e, "_PyRuntime", &sym), 0);
    assert_int_equal(pyelf_section(&e, ".PyRuntime", &addr, &size, &bytes), 0);
    assert_int_equal(addr, sym);
    assert_true(size >= 8 + 400 * 8);
    assert_non_null(bytes);
    assert_memory_equal(bytes, "xdebugpy", 8);   /* its initial contents, from the file */
    assert_int_equal(pyelf_section(&e, ".PyRunt", &addr, &size, &bytes), -1);   /* whole names only */
    assert_int_equal(pyelf_section(&e, ".nosuchsection", &addr, &size, &bytes), -1);
    pyelf_close(&e);

    snprintf(cmd, sizeof cmd, "strip %s 2>/dev/null", exe);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(pyelf_open(&e, exe, err, sizeof err), 0);
    uint64_t v;
    assert_int_equal(pyelf_symbol(&e, "_PyRuntime", &v), -1);
    assert_int_equal(pyelf_section(&e, ".PyRuntime", &addr, &size, &bytes), 0);
    assert_int_equal(addr, sym);
    /* without section headers there is nothing to name it */
    e.force_dynamic = 1;
    assert_int_equal(pyelf_section(&e, ".PyRuntime", &addr, &size, &bytes), -1);
    pyelf_close(&e);
    unlink(exe);
    unlink(src);
    rmdir(dir);

    /* The real ones installed here: the section is there in 3.12 already,
     * the debug-offsets cookie at its start from 3.13 (what attach wants
     * before it trusts the section). */
    pyt_list l;
    pyt_find(&l);
    for (int i = 0; i < l.n; i++) {
        char lib[PATH_MAX], ver[32];
        dir_version(l.path[i], ver, sizeof ver);
        int minor = ver[0] == '3' ? atoi(ver + 2) : 0;
        snprintf(lib, sizeof lib, "%.*s/lib/libpython3.%d.so.1.0",
                 (int)(strstr(l.path[i], "/bin/") ? strstr(l.path[i], "/bin/") - l.path[i] : 0),
                 l.path[i], minor);
        if (minor < 12 || pyelf_open(&e, lib, err, sizeof err) != 0)
            continue;
        assert_int_equal(pyelf_symbol(&e, "_PyRuntime", &sym), 0);
        assert_int_equal(pyelf_section(&e, ".PyRuntime", &addr, &size, &bytes), 0);
        assert_int_equal(addr, sym);
        assert_non_null(bytes);
        assert_int_equal(memcmp(bytes, "xdebugpy", 8) == 0, minor >= 13);
        printf("[%s] .PyRuntime at 0x%llx, %llu bytes\n", lib, (unsigned long long)addr,
               (unsigned long long)size);
        pyelf_close(&e);
    }
}

static void test_layout_tables(void **state)
{
    assert_null(py_layout_for_minor(7));
    assert_null(py_layout_for_minor(13));
    for (unsigned m = 8; m <= 12; m++) {
        const py_layout *L = py_layout_for_minor(m);
        assert_non_null(L);
        assert_int_equal(L->minor, m);
        assert_int_equal(L->frame_objects, m <= 10);
        assert_int_equal(L->use_qualname, m >= 11);
        assert_true(L->ts_thread_id != PY_OFF_NONE && L->co_filename != PY_OFF_NONE);
        assert_int_equal(L->ts_native_thread_id != PY_OFF_NONE, m >= 11);
    }
}

static void test_debug_offsets_rejected(void **state)
{
    uint8_t blk[PY_DEBUG_READ];
    py_layout L;
    char err[256];
    uint64_t v = 0x030d00f0;

    memset(blk, 0, sizeof blk);
    assert_int_equal(py_debugoff_version(blk, sizeof blk), 0);
    assert_int_equal(py_layout_from_debug(blk, sizeof blk, &L, err, sizeof err), -1);
    assert_non_null(strstr(err, "cookie"));
    memcpy(blk, PY_DEBUG_COOKIE, 8);
    memcpy(blk + 8, &v, 8);
    assert_int_equal(py_debugoff_version(blk, sizeof blk), v);
    assert_int_equal(py_layout_from_debug(blk, sizeof blk, &L, err, sizeof err), -1);
    assert_non_null(strstr(err, "3.13"));
    /* random offsets */
    uint32_t seed = 7;
    for (int it = 0; it < 1000; it++) {
        for (size_t i = 16; i < sizeof blk; i++) {
            seed = seed * 1103515245u + 12345u;
            blk[i] = (uint8_t)(seed >> 16);
        }
        assert_int_equal(py_layout_from_debug(blk, sizeof blk, &L, err, sizeof err), -1);
    }
    /* too short for the 3.13 list */
    assert_int_equal(py_layout_from_debug(blk, 64, &L, err, sizeof err), -1);
    v = 0x020700f0;
    memcpy(blk + 8, &v, 8);
    assert_int_equal(py_layout_from_debug(blk, sizeof blk, &L, err, sizeof err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_files),
        cmocka_unit_test(test_version_from_resident_pages),
        cmocka_unit_test(test_needs),
        cmocka_unit_test(test_sysv_hash),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_runtime_section),
        cmocka_unit_test(test_layout_tables),
        cmocka_unit_test(test_debug_offsets_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
