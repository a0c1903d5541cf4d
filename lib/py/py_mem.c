/*
 * py_mem.c — the two memory readers of py_mem.h.
 *
 * Remote: process_vm_readv, one system call for a whole batch of ranges
 * (the kernel charges ~0.4 µs per iovec on top of ~2 µs per call here,
 * so callers coalesce neighbouring ranges first: see py_snap.c).
 *
 * Local: memcpy, but only for ranges lying inside a readable mapping of
 * the /proc/self/maps snapshot.  A range outside it is read with
 * process_vm_readv on ourselves (never faults); where that is forbidden
 * the snapshot is re-read, at most once per sample (~100 µs).
 * Device mappings (/dev/..., except /dev/zero and /dev/shm) and the
 * kernel's [vvar]/[vsyscall] pages are never considered readable: a GPU
 * driver's mapping may not tolerate CPU reads.  The snapshot can be
 * stale (an arena or frame chunk unmapped since), so before the first
 * memcpy from a page in a sample the page is checked with mincore(2),
 * which answers ENOMEM for an unmapped page without touching it (one
 * system call per page per sample, remembered in a small table; where
 * mincore is refused, the page is probed by a one-byte safe read).  The
 * walker uses memcpy only for what the calling thread's own live stack
 * references (its thread state, frames, code objects, names), which
 * cannot be unmapped while that sample runs; anything that may be freed
 * under us at any moment (other threads' states) is read in `careful`
 * mode, by system call.  Where process_vm_readv is forbidden (seccomp,
 * gVisor), those reads, and reads outside the snapshot, go through a
 * pipe instead (pipe_read): still never a fault.  Limit: a page made
 * PROT_NONE after the snapshot (not unmapped) passes mincore; CPython
 * does not do that to its objects' memory.
 */
#include "lib/py/py_mem.h"

#include "lib/util/alloc.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define REFRESH_NS 20000000ull /* 20 ms between two opportunistic map refreshes */

uint64_t pymem_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void pymem_init_remote(pymem *m, pid_t pid)
{
    memset(m, 0, sizeof *m);
    m->pid = pid;
}

/* Is this mapping (perms, path) one we may memcpy from? */
static int readable_mapping(const char *perms, const char *path)
{
    if (perms[0] != 'r')
        return 0;
    if (strncmp(path, "[vvar", 5) == 0 || strcmp(path, "[vsyscall]") == 0)
        return 0;
    if (strncmp(path, "/dev/", 5) == 0 && strcmp(path, "/dev/zero") != 0 &&
        strncmp(path, "/dev/shm/", 9) != 0)
        return 0;
    return 1;
}

/* Re-reads /proc/self/maps into m->ranges (sorted by the kernel,
 * adjacent ranges merged).  0, or -1 with errno. */
static int refresh_local(pymem *m)
{
    FILE *f = fopen("/proc/self/maps", "re");
    pymem_range *r = NULL;
    size_t n = 0, cap = 0;
    char line[4352];
    int rc = -1;

    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long long s, e;
        char perms[8];
        int pathpos = 0;

        if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %n", &s, &e, perms, &pathpos) < 3)
            continue;
        char *path = pathpos > 0 ? line + pathpos : line + strlen(line);
        path[strcspn(path, "\n")] = '\0';
        if (!readable_mapping(perms, path))
            continue;
        if (n > 0 && r[n - 1].end == s) {
            r[n - 1].end = e;
            continue;
        }
        if (trcu_grow((void **)&r, &cap, n, sizeof *r) != TRC_OK) {
            errno = ENOMEM;
            goto out;
        }
        r[n].start = s;
        r[n].end = e;
        n++;
    }
    trc_free(m->ranges);
    m->ranges = r;
    m->nranges = n;
    r = NULL;
    m->refreshed_ns = pymem_now_ns();
    rc = 0;
out:
    trc_free(r);
    fclose(f);
    return rc;
}

int pymem_init_local(pymem *m)
{
    memset(m, 0, sizeof *m);
    m->pid = getpid();
    m->local = 1;
    return refresh_local(m);
}

void pymem_cleanup(pymem *m)
{
    if (m->pipe_pid == getpid()) {
        close(m->pipe_fd[0]);
        close(m->pipe_fd[1]);
    }
    m->pipe_pid = 0;
    trc_free(m->ranges);
    m->ranges = NULL;
    m->nranges = 0;
}

static int covered(const pymem *m, uint64_t addr, size_t len)
{
    size_t lo = 0, hi = m->nranges;
    uint64_t end = addr + len;

    if (end < addr)
        return 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->ranges[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->nranges && m->ranges[lo].start <= addr && end <= m->ranges[lo].end;
}

/* Empties the pipe after a read that went wrong part-way. */
static void pipe_drain(pymem *m)
{
    char sink[4096];
    while (read(m->pipe_fd[0], sink, sizeof sink) > 0)
        ;
}

/* Where process_vm_readv on ourselves is refused: write(2) from the
 * address into a pipe makes the kernel copy from our memory, and it
 * answers EFAULT for an address that is not readable instead of raising
 * a signal; read(2) takes the bytes back.  Two system calls per page,
 * async-signal-safe, no signal handler to install in the traced program.
 * The pipe is this reader's own, non-blocking, and made again in a
 * forked child (which must not share it with its parent).  Returns 0
 * with buf filled, or -1. */
static int pipe_read(pymem *m, uint64_t addr, void *buf, size_t len)
{
    char *out = buf;

    if (m->pipe_pid != getpid()) {
        if (m->pipe_pid) {      /* the parent's, inherited by fork */
            close(m->pipe_fd[0]);
            close(m->pipe_fd[1]);
            m->pipe_pid = 0;
        }
        if (pipe2(m->pipe_fd, O_CLOEXEC | O_NONBLOCK) != 0)
            return -1;
        m->pipe_pid = getpid();
    }
    while (len) {
        /* at most a page: a write of up to PIPE_BUF bytes into the empty
         * pipe goes in whole or not at all */
        size_t n = len < 4096 ? len : 4096;
        ssize_t w = write(m->pipe_fd[1], (const void *)(uintptr_t)addr, n);
        if (w != (ssize_t)n || read(m->pipe_fd[0], out, n) != (ssize_t)n) {
            pipe_drain(m);
            return -1;
        }
        addr += n;
        out += n;
        len -= n;
    }
    return 0;
}

/* Reads [addr, addr+len) of our own memory by system call, never a
 * fault: process_vm_readv on ourselves, or where that is forbidden the
 * pipe.  Returns 0 with buf filled, or -1. */
static int safe_read(pymem *m, uint64_t addr, void *buf, size_t len)
{
    if (!m->vm_blocked) {
        struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
        /* getpid(), not m->pid: after a fork we are the child */
        ssize_t got = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
        if (got == (ssize_t)len)
            return 0;
        if (got >= 0 || errno == EFAULT)
            return -1;
        m->vm_blocked = 1;
    }
    return pipe_read(m, addr, buf, len);
}

/* A local range outside the snapshot: a mapping made since (a new
 * frame chunk, a new thread's stack) or a bad pointer.  Read by system
 * call; the snapshot is then refreshed (at most every REFRESH_NS, or
 * once per sample where process_vm_readv is forbidden and every miss
 * costs the pipe) so that the next reads of a new mapping are memcpy
 * again.  Returns 0 with buf filled, or -1. */
static int local_miss(pymem *m, uint64_t addr, void *buf, size_t len)
{
    if (safe_read(m, addr, buf, len) != 0)
        return -1;
    if (!m->vm_blocked) {
        if (pymem_now_ns() - m->refreshed_ns >= REFRESH_NS)
            refresh_local(m);
    } else if (m->refreshed_epoch != m->epoch && refresh_local(m) == 0) {
        m->refreshed_epoch = m->epoch;
    }
    return 0;
}

/* Is page number pg still mapped?  Asked once per page per sample: the
 * answer is kept in a direct-mapped table tagged with the sample. */
static int page_live(pymem *m, uint64_t pg)
{
    size_t slot = (size_t)(pg % (sizeof m->live_page / sizeof m->live_page[0]));

    if (m->live_page[slot] == pg + 1 && m->live_epoch[slot] == m->epoch)
        return 1;
    if (!m->mincore_blocked) {
        unsigned char v;
        if (mincore((void *)(uintptr_t)(pg << 12), 4096, &v) != 0) {
            if (errno == ENOMEM)
                return 0;
            m->mincore_blocked = 1;   /* refused, or pages not 4 KiB */
        }
    }
    if (m->mincore_blocked) {
        char c;
        if (safe_read(m, pg << 12, &c, 1) != 0)
            return 0;
    }
    m->live_page[slot] = pg + 1;
    m->live_epoch[slot] = m->epoch;
    return 1;
}

/* Every page of [addr, addr+len) still mapped (len > 0, range covered). */
static int pages_live(pymem *m, uint64_t addr, size_t len)
{
    for (uint64_t pg = addr >> 12, last = (addr + len - 1) >> 12; pg <= last; pg++)
        if (!page_live(m, pg))
            return 0;
    return 1;
}

/* Pages [addr, addr+len) lies on. */
static uint64_t span_pages(uint64_t addr, size_t len)
{
    return len ? ((addr + len - 1) >> 12) - (addr >> 12) + 1 : 0;
}

int pymem_readv(pymem *m, const struct iovec *local, const struct iovec *remote, int n)
{
    if (n <= 0)
        return 0;
    m->reads++;
    if (m->local) {
        for (int i = 0; i < n; i++) {
            uint64_t a = (uint64_t)(uintptr_t)remote[i].iov_base;
            size_t len = remote[i].iov_len;
            if (len > local[i].iov_len)
                return i;
            if (len == 0)
                continue;
            if (!m->careful && covered(m, a, len) && pages_live(m, a, len))
                memcpy(local[i].iov_base, remote[i].iov_base, len);
            else if (local_miss(m, a, local[i].iov_base, len) != 0)
                return i;
            m->bytes += len;
        }
        return n;
    }
    for (int i = 0; i < n; i++)
        m->pages += span_pages((uint64_t)(uintptr_t)remote[i].iov_base, remote[i].iov_len);
    ssize_t got = process_vm_readv(m->pid, local, (unsigned long)n, remote, (unsigned long)n, 0);
    if (got < 0) {
        if (errno == EFAULT)
            return 0;
        return -1;
    }
    m->bytes += (uint64_t)got;
    int done = 0;
    size_t acc = 0;
    while (done < n && acc + remote[done].iov_len <= (size_t)got)
        acc += remote[done++].iov_len;
    return done;
}

int pymem_read(pymem *m, uint64_t addr, void *buf, size_t len)
{
    struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
    int k = pymem_readv(m, &l, &r, 1);

    if (k == 1)
        return 0;
    if (k == 0)
        errno = EFAULT;
    return -1;
}
