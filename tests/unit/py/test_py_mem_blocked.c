/*
 * test_py_mem_blocked.c — the local memory reader (lib/py/py_mem.c)
 * where process_vm_readv on ourselves is refused, as under gVisor or a
 * seccomp filter: this program defines process_vm_readv itself (it
 * answers EPERM, or ENOSYS), which the reader, linked in, calls instead
 * of libc's; it defines mincore too, refused in the ENOSYS case, so that
 * plain reads check their pages by a one-byte read through the pipe.
 * Careful and plain reads of memory unmapped since the snapshot, reads
 * of wild pointers, of PROT_NONE pages, across a page end: refused
 * without a fault; good memory still read, also after a fork.  Prints
 * the cost of one careful read there (ns).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/py/py_mem.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int refuse_errno = EPERM;
static unsigned refused;
static int refuse_mincore;

int mincore(void *addr, size_t len, unsigned char *vec)
{
    if (refuse_mincore) {
        errno = ENOSYS;
        return -1;
    }
    return (int)syscall(SYS_mincore, addr, len, vec);
}

ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long nlocal,
                         const struct iovec *remote, unsigned long nremote, unsigned long flags)
{
    (void)pid, (void)local, (void)nlocal, (void)remote, (void)nremote, (void)flags;
    refused++;
    errno = refuse_errno;
    return -1;
}

static char *map_pages(size_t n)
{
    char *p = mmap(NULL, n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    return p;
}

static void refused_reads(int err)
{
    pymem m;
    char src[32] = "on our own stack", dst[8192];

    refuse_errno = err;
    refuse_mincore = err == ENOSYS;
    refused = 0;
    char *page = map_pages(1);
    strcpy(page, "in the snapshot");
    assert_int_equal(pymem_init_local(&m), 0);   /* the snapshot has the page */
    m.careful = 1;                               /* as for another thread's state */
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)page, dst, 16), 0);
    assert_string_equal(dst, "in the snapshot");
    assert_true(refused > 0);
    assert_int_equal(m.vm_blocked, 1);

    /* freed and unmapped under us: the snapshot still lists it */
    munmap(page, 4096);
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)page, dst, 8), -1);
    assert_int_equal(errno, EFAULT);
    /* a plain read of it in a new sample: refused too, not a fault */
    m.careful = 0;
    pymem_new_sample(&m);
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)page, dst, 8), -1);
    assert_int_equal(errno, EFAULT);
    assert_int_equal(m.mincore_blocked, refuse_mincore);
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)src, dst, sizeof src), 0);
    assert_string_equal(dst, "on our own stack");
    m.careful = 1;
    /* wild pointers, careful or not */
    assert_int_equal(pymem_read(&m, 16, dst, 8), -1);
    assert_int_equal(pymem_read(&m, UINT64_MAX - 4, dst, 8), -1);
    assert_int_equal(pymem_read(&m, 0x7ff0deadbee0ull, dst, 8), -1);
    /* not careful (the calling thread's own live memory, which the
     * snapshot is trusted for): a pointer outside every mapping */
    m.careful = 0;
    assert_int_equal(pymem_read(&m, 0x7ff0deadbee0ull, dst, 8), -1);

    /* mapped after the snapshot, then a PROT_NONE page after it: a read
     * across the two is refused, the readable part is not */
    page = map_pages(3);
    memset(page, 'x', 3 * 4096);
    assert_int_equal(mprotect(page + 4096, 4096, PROT_NONE), 0);
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)(page + 4090), dst, 12), -1);
    m.careful = 1;
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)(page + 4090), dst, 12), -1);
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)page, dst, 4096), 0);
    assert_int_equal(dst[0], 'x');
    assert_int_equal(dst[4095], 'x');
    /* more than a pipe's atomic write, both pages readable */
    assert_int_equal(mprotect(page + 4096, 4096, PROT_READ), 0);
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)(page + 100), dst, 8000), 0);
    assert_int_equal(dst[7999], 'x');
    /* nothing left behind in the pipe by the refused reads */
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)src, dst, sizeof src), 0);
    assert_string_equal(dst, "on our own stack");

    /* a forked child reads through a pipe of its own */
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        char d[32];
        int ok = pymem_read(&m, (uint64_t)(uintptr_t)src, d, sizeof src) == 0 &&
                 strcmp(d, "on our own stack") == 0 &&
                 pymem_read(&m, 0x7ff0deadbee0ull, d, 8) == -1;
        pymem_cleanup(&m);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)src, dst, sizeof src), 0);
    assert_string_equal(dst, "on our own stack");
    munmap(page, 3 * 4096);
    pymem_cleanup(&m);
}

static void test_eperm(void **state)
{
    (void)state;
    refused_reads(EPERM);
}

static void test_enosys(void **state)
{
    (void)state;
    refused_reads(ENOSYS);
}

/* What one careful 64-byte read costs where the system call is refused
 * (the size of a thread state's fields the walker reads at once). */
static void test_cost(void **state)
{
    pymem m;
    char src[64] = "x", dst[64];
    struct timespec a, b;
    enum { N = 20000 };

    (void)state;
    assert_int_equal(pymem_init_local(&m), 0);
    m.careful = 1;
    assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)src, dst, sizeof src), 0);
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < N; i++)
        assert_int_equal(pymem_read(&m, (uint64_t)(uintptr_t)src, dst, sizeof src), 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("careful read through the pipe: %.0f ns per 64-byte read\n",
           ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / N);
    pymem_cleanup(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eperm),
        cmocka_unit_test(test_enosys),
        cmocka_unit_test(test_cost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
