/*
 * switches.c — a thread's scheduler state from the kernel's own record
 * of its context switches, read from shared memory: no system call per
 * look, where the /proc state file costs one (3 to 7 us here) for every
 * thread at every tick.
 *
 * One perf event per thread (perf_event_open(2): a software "dummy"
 * event with context_switch set, so it counts nothing and only writes a
 * PERF_RECORD_SWITCH each time the thread is switched in or out).  Its
 * ring is mapped read-only, which makes the kernel write it backward
 * and overwrite the oldest records: the newest record always starts at
 * data_head, so one look reads one 8-byte header whatever the thread
 * did, and nothing is ever lost for want of reading.  Out with
 * PERF_RECORD_MISC_SWITCH_OUT_PREEMPT means still runnable ('R', like
 * /proc) but waiting for a CPU, so not on one; out without it means
 * blocked ('S'); in means running on a CPU now.  Whether a sample is on
 * CPU is decided from the CPU time the thread got (oncpu.c); the kind
 * tells it only which threads have run at all since their last look.
 *
 * Before its first switch the ring is empty (head 0).  The state is then
 * the one the /proc file gave right after the event was opened: no
 * switch since means no change since.
 *
 * A thread whose ring head has not moved since a look that found it
 * switched out has not run since that look, so its Python stack is the
 * one read then (only a thread changes its own frames): the caller may
 * repeat that stack without reading the target (see target.c).
 *
 * What the kernel charges for this is a few hundred ns at each of the
 * thread's switches.  Opening fails where perf events are not allowed
 * (kernel.perf_event_paranoid 3, a seccomp filter, a locked-memory limit
 * reached); the caller then reads /proc as before.
 */
#include "lib/rec/rec_int.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RING_PAGES 1 /* data pages: one record is all a look reads */

static size_t page_size(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    return ps > 0 ? (size_t)ps : 4096;
}

int rec_switches_allowed(void)
{
    const char *e = getenv("TREC_THREAD_STATE");
    return !(e && strcmp(e, "proc") == 0);
}

/* Open events in this recorder, and how many it allows itself: each
 * thread also holds its /proc state file, so a quarter of the
 * descriptor limit leaves room for those and for the output. */
static long open_now;
static uint64_t opened;

static long open_max(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 1024;
    long m = (long)(rl.rlim_cur / 4);
    return m < 1024 ? m : 1024;
}

int rec_switches_refused(int err)
{
    /* EINVAL: a kernel without write_backward or dummy events (< 4.7) */
    return err == EACCES || err == EPERM || err == ENOSYS || err == EINVAL || err == EOPNOTSUPP;
}

int rec_switches_open(rec_switches *s, pid_t tid)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    if (open_now >= open_max())
        return EMFILE;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_DUMMY;
    a.context_switch = 1;
    a.write_backward = 1;
    /* user space only: allowed at perf_event_paranoid 2 without privilege */
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return errno ? errno : EPERM;
    size_t len = (1 + RING_PAGES) * page_size();
    void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        int e = errno;
        close(fd);
        return e ? e : ENOMEM;
    }
    s->fd = fd;
    s->map = map;
    s->map_len = len;
    open_now++;
    opened++;
    return 0;
}

void rec_switches_close(rec_switches *s)
{
    if (s->map)
        munmap(s->map, s->map_len);
    if (s->fd >= 0) {
        close(s->fd);
        open_now--;
    }
    memset(s, 0, sizeof *s);
    s->fd = -1;
}

/* Where the newest record is; moves at every switch. */
static uint64_t head_now(const rec_switches *s)
{
    const struct perf_event_mmap_page *mp = s->map;
    return __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
}

/* The newest record's kind at head: 'I' (switched in), 'P' (out, still
 * runnable), 'S' (out, blocked), 0 if it could not be read (the kernel
 * wrote over it meanwhile, or it is not a switch record). */
static char newest(const rec_switches *s, uint64_t head)
{
    const struct perf_event_mmap_page *mp = s->map;
    const unsigned char *data = (const unsigned char *)s->map + mp->data_offset;
    uint64_t size = mp->data_size;
    if (!size || (size & (size - 1)))
        return 0;
    struct perf_event_header h;
    unsigned char *to = (unsigned char *)&h;
    for (size_t i = 0; i < sizeof h; i++)
        to[i] = data[(head + i) & (size - 1)];
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&mp->data_head, __ATOMIC_RELAXED) != head)
        return 0;
    if (h.type != PERF_RECORD_SWITCH)
        return 0;
    if (!(h.misc & PERF_RECORD_MISC_SWITCH_OUT))
        return 'I';
    return (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) ? 'P' : 'S';
}

int rec_switches_running(char kind)
{
    return kind == 'I';
}

char rec_switches_look(const rec_switches *s, char first_state, uint64_t *head)
{
    for (int tries = 0; tries < 4; tries++) {
        uint64_t h = head_now(s);
        if (h == 0) {
            *head = 0;
            return first_state == 'R' ? 'I' : first_state ? 'S' : 0;
        }
        char k = newest(s, h);
        if (k) {
            *head = h;
            return k;
        }
    }
    return 0;
}

uint64_t rec_switches_opened(void)
{
    return opened;
}
