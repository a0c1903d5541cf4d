/*
 * test_py_mem.c — lib/py's memory readers (py_mem.c) and per-sample
 * batched reads (py_snap.c): the local reader copies mapped memory,
 * including mappings made after its snapshot, and refuses unmapped or
 * PROT_NONE memory without faulting, also memory unmapped after its
 * snapshot when read in plain (not careful) mode, once a new sample has
 * started after a page was read; prints what a plain read costs (ns)
 * with that check; the remote reader reads a child and
 * stops at the first bad element; a snapshot merges neighbours, keeps
 * going past an unreadable range, and reads on demand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/py/py_mem.h"
#include "lib/py/py_snap.h"
#include "lib/util/alloc.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void test_local(void **state)
{
    pymem m;
    char src[64] = "hello, walker", dst[64];

    assert_int_equal(pymem_init_local(&m), 0);
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)src, dst, sizeof src), 0);
    assert_string_equal(dst, "hello, walker");

    /* mapped after the snapshot */
    char *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(page != MAP_FAILED);
    strcpy(page + 4000, "fresh mapping");
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)(page + 4000), dst, 14), 0);
    assert_string_equal(dst, "fresh mapping");

    /* PROT_NONE and unmapped: refused, no fault */
    assert_int_equal(mprotect(page + 4096, 4096, PROT_NONE), 0);
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)(page + 4090), dst, 12), -1);
    assert_int_equal(errno, EFAULT);
    munmap(page, 8192);
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)(page + 4000), dst, 8), -1);
    assert_int_equal(pymem_read(&m, 16, dst, 8), -1);
    assert_int_equal(pymem_read(&m, UINT64_MAX - 4, dst, 8), -1);
    assert_true(m.reads > 0);

    /* where process_vm_readv on ourselves is forbidden (seccomp), the
     * snapshot is re-read instead, once per sample */
    m.vm_blocked = 1;
    page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(page != MAP_FAILED);
    strcpy(page, "after the snapshot");
    pymem_new_sample(&m);
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)page, dst, 19), 0);
    assert_string_equal(dst, "after the snapshot");
    munmap(page, 4096);
    pymem_cleanup(&m);

    /* careful mode: even memory in the snapshot is read by system call,
     * so a mapping removed since is refused rather than faulting */
    assert_int_equal(pymem_init_local(&m), 0);
    page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(page != MAP_FAILED);
    pymem_cleanup(&m);
    assert_int_equal(pymem_init_local(&m), 0);    /* snapshot has the page */
    munmap(page, 4096);
    m.careful = 1;
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)page, dst, 8), -1);
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)src, dst, 8), 0);
    pymem_cleanup(&m);
}

/* A plain read (the calling thread's own memory, memcpy) of a mapping
 * the snapshot lists but that was unmapped since: refused, not a fault.
 * A page read in a sample is trusted for the rest of that sample only. */
static void test_unmapped_since_snapshot(void **state)
{
    pymem m;
    char dst[16];

    (void)state;
    char *page = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(page != MAP_FAILED);
    strcpy(page, "first");
    strcpy(page + 4096, "second");
    assert_int_equal(pymem_init_local(&m), 0);   /* the snapshot has both pages */
    pymem_new_sample(&m);
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)page, dst, 6), 0);
    assert_string_equal(dst, "first");
    /* never read before its removal */
    munmap(page + 4096, 4096);
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)(page + 4096), dst, 7), -1);
    assert_int_equal(errno, EFAULT);
    /* read in an earlier sample, removed, then a new sample */
    munmap(page, 4096);
    pymem_new_sample(&m);
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)page, dst, 6), -1);
    assert_int_equal(errno, EFAULT);
    /* a read across the end of a live page into a removed one */
    page = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(page != MAP_FAILED);
    pymem_cleanup(&m);
    assert_int_equal(pymem_init_local(&m), 0);
    munmap(page + 4096, 4096);
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)(page + 4090), dst, 12), -1);
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)(page + 4000), dst, 12), 0);
    munmap(page, 4096);
    pymem_cleanup(&m);
}

static double elapsed_ns(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) * 1e9 + (double)(b->tv_nsec - a->tv_nsec);
}

/* What a plain 64-byte read costs with the page check: a walk-like
 * pattern of 64 reads over 16 pages per sample (each page checked once
 * per sample), beside the same reads with every page already checked. */
static void test_plain_read_cost(void **state)
{
    enum { PAGES = 16, READS = 64, SAMPLES = 2000 };
    pymem m;
    char dst[64];
    struct timespec a, b, c;

    (void)state;
    char *mem = mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(mem != MAP_FAILED);
    memset(mem, 'y', PAGES * 4096);
    assert_int_equal(pymem_init_local(&m), 0);
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int s = 0; s < SAMPLES; s++) {
        pymem_new_sample(&m);
        for (int i = 0; i < READS; i++)
            assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)(mem + (i % PAGES) * 4096 + (i / PAGES) * 64), dst, 64), 0);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    for (int s = 0; s < SAMPLES; s++)   /* one sample: every page checked already */
        for (int i = 0; i < READS; i++)
            assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)(mem + (i % PAGES) * 4096 + (i / PAGES) * 64), dst, 64), 0);
    clock_gettime(CLOCK_MONOTONIC, &c);
    printf("plain 64-byte read: %.0f ns with %d pages checked per %d reads, %.0f ns once checked\n",
           elapsed_ns(&a, &b) / (SAMPLES * READS), PAGES, READS, elapsed_ns(&b, &c) / (SAMPLES * READS));
    assert_int_equal(dst[63], 'y');
    munmap(mem, PAGES * 4096);
    pymem_cleanup(&m);
}

static void test_remote(void **state)
{
    static char shared[8192];
    int fd[2];

    for (int i = 0; i < (int)sizeof shared; i++)
        shared[i] = (char)(i * 7);
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    if (pid == 0) {
        strcpy(shared, "in the child");
        if (write(fd[1], "x", 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    char x;
    assert_int_equal(read(fd[0], &x, 1), 1);
    pymem m;
    pymem_init_remote(&m, pid);
    char a[16], b[16], c[16];
    struct iovec l[3] = { { a, 13 }, { b, 8 }, { c, 8 } };
    struct iovec r[3] = { { shared, 13 }, { (void *)16, 8 }, { shared + 100, 8 } };
    assert_int_equal(pymem_readv(&m, l, r, 3), 1);   /* stops at the bad one */
    assert_string_equal(a, "in the child");
    r[1].iov_base = shared + 4096;
    assert_int_equal(pymem_readv(&m, l, r, 3), 3);
    assert_int_equal(memcmp(b, shared + 4096, 8), 0);

    /* the snapshot over the same child */
    pysnap s;
    pysnap_init(&s, &m);
    pysnap_reset(&s);
    uint64_t base = (uint64_t)(uintptr_t)shared;
    pysnap_plan(&s, base + 8, 8);
    pysnap_plan(&s, base, 4);
    pysnap_plan(&s, 24, 8);              /* unreadable */
    pysnap_plan(&s, base + 1000, 16);    /* merged with the first two */
    pysnap_plan(&s, base + 7000, 16);    /* its own range */
    assert_int_equal(pysnap_fetch(&s), 0);
    assert_int_equal(s.n, 3);
    const char *g = pysnap_get(&s, base + 1000, 16);
    assert_non_null(g);
    assert_int_equal(memcmp(g, shared + 1000, 16), 0);
    assert_non_null(pysnap_get(&s, base, 1016));
    assert_non_null(pysnap_get(&s, base + 7000, 16));
    assert_null(pysnap_get(&s, 24, 8));
    assert_null(pysnap_get(&s, base + 7010, 16));
    g = pysnap_need(&s, base + 7100, 8, base + 7050);
    assert_non_null(g);
    assert_int_equal(memcmp(g, shared + 7100, 8), 0);
    assert_non_null(pysnap_get(&s, base + 7060, 8));   /* came along */
    assert_null(pysnap_need_exact(&s, 40, 8));
    assert_int_equal(s.hard_errno, 0);
    pysnap_cleanup(&s);

    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    /* gone: a hard error, not a bad address */
    assert_int_equal(pymem_readv(&m, l, r, 1), -1);
    assert_int_equal(errno, ESRCH);
    pysnap_init(&s, &m);
    pysnap_reset(&s);
    pysnap_plan(&s, base, 8);
    assert_int_equal(pysnap_fetch(&s), -1);
    assert_int_equal(s.hard_errno, ESRCH);
    pysnap_cleanup(&s);
    close(fd[0]);
    close(fd[1]);
}

/* A piece planned inside another (py_plan.c's newest frames, copied
 * again next to the thread state) is read after it, and every lookup
 * finds that later copy, even right after one served from the page. */
static void test_snap_overlap(void **state)
{
    pymem m;
    pysnap s;
    static char page[8192] __attribute__((aligned(4096)));

    (void)state;
    assert_int_equal(pymem_init_local(&m), 0);
    pysnap_init(&s, &m);
    pysnap_reset(&s);
    uint64_t base = (uint64_t)(uintptr_t)page;
    pysnap_plan_at(&s, base + 300, 64, PYSNAP_LATE);
    pysnap_plan_piece(&s, base + 100, 64, PYSNAP_LATE);
    pysnap_plan_piece(&s, base, 4096, PYSNAP_MIDDLE);
    assert_int_equal(pysnap_fetch(&s), 0);
    assert_int_equal(s.n, 3);
    assert_true(s.overlap);
    /* read in the order asked for: the page, then the piece */
    int piece = -1;
    for (int i = 0; i < s.n; i++)
        if (s.r[i].addr == base + 100)
            piece = i;
    assert_true(piece >= 0);
    assert_int_equal(s.r[0].addr, base);
    assert_true(piece > 0);
    const char *late = (const char *)s.buf + s.r[piece].off;
    assert_non_null(pysnap_get(&s, base + 2000, 8));   /* from the page: the hint */
    assert_ptr_equal(pysnap_get(&s, base + 100, 64), late);
    assert_ptr_equal(pysnap_get(&s, base + 120, 8), late + 20);
    /* outside the piece: the page */
    const char *g = pysnap_get(&s, base + 180, 8);
    assert_ptr_equal(g, (const char *)s.buf + s.r[0].off + 180);
    /* a read on demand is one range: no overlap */
    assert_non_null(pysnap_need_exact(&s, base + 4096 + 8, 8));
    assert_false(s.overlap);
    pysnap_cleanup(&s);
    pymem_cleanup(&m);
}

static void test_snap_limits(void **state)
{
    pymem m;
    pysnap s;
    static char big[1 << 20];

    assert_int_equal(pymem_init_local(&m), 0);
    pysnap_init(&s, &m);
    pysnap_reset(&s);
    for (int i = 0; i < 2 * PYSNAP_MAX_PLAN; i++)
        pysnap_plan(&s, (uint64_t)(uintptr_t)(big + i * 2048), 64);
    assert_int_equal(s.n, PYSNAP_MAX_PLAN);             /* the rest ignored */
    pysnap_plan(&s, (uint64_t)(uintptr_t)big, PYSNAP_MAX_RANGE + 1);
    pysnap_plan(&s, 0, 8);
    assert_int_equal(s.n, PYSNAP_MAX_PLAN);
    assert_int_equal(pysnap_fetch(&s), 0);
    assert_non_null(pysnap_get(&s, (uint64_t)(uintptr_t)big, 64));
    /* allocation failure on demand: NULL with ENOMEM, no crash */
    pysnap_reset(&s);
    trc_alloc_fail_after(1);
    const void *g = pysnap_need_exact(&s, (uint64_t)(uintptr_t)(big + 500000), PYSNAP_MAX_RANGE);
    trc_alloc_fail_after(-1);
    if (!g)
        assert_int_equal(s.hard_errno, ENOMEM);
    pysnap_cleanup(&s);
    pymem_cleanup(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_local),
        cmocka_unit_test(test_unmapped_since_snapshot),
        cmocka_unit_test(test_plain_read_cost),
        cmocka_unit_test(test_remote),
        cmocka_unit_test(test_snap_limits),
        cmocka_unit_test(test_snap_overlap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
