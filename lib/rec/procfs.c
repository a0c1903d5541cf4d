/*
 * procfs.c — the few /proc files the recorder reads about its targets:
 * stat (scheduler state, parent, start time, exit code of a zombie),
 * cmdline, exe, comm, statm (RSS), the children lists and the task
 * (thread) list.  See proc(5).
 *
 * Files read every tick (a thread's syscall or stat file, a process's
 * statm) are opened once and read with pread at offset 0, which the
 * kernel regenerates on each read; that is one syscall per read instead
 * of three.  A thread's state comes from its syscall file when it can be
 * read: "running" means runnable, exactly stat's 'R', and the kernel
 * produces it in about 1 us against about 3 us for the stat line (both
 * measured here, Linux 6.x), which matters at every thread every tick
 * where the thread has no switch records (switches.c).
 */
#include "lib/rec/rec_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int rec_proc_open(pid_t pid, pid_t tid, const char *leaf)
{
    char path[96];
    if (tid > 0)
        snprintf(path, sizeof path, "/proc/%d/task/%d/%s", (int)pid, (int)tid, leaf);
    else
        snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, leaf);
    return open(path, O_RDONLY | O_CLOEXEC);
}

ssize_t rec_fd_read(int fd, char *buf, size_t cap)
{
    if (fd < 0 || cap == 0) {
        errno = EBADF;
        return -1;
    }
    ssize_t n = pread(fd, buf, cap - 1, 0);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return n;
}

/* Read a whole small file by path; same contract as rec_fd_read. */
static ssize_t read_path(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t total = 0;
    while ((size_t)total + 1 < cap) {
        ssize_t n = read(fd, buf + total, cap - 1 - (size_t)total);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (n == 0)
            break;
        total += n;
    }
    close(fd);
    buf[total] = '\0';
    return total;
}

/* Fields after the command name: the name is in parentheses and may
 * itself hold spaces and ')' so parsing starts after the LAST ')'. */
int rec_stat_parse(const char *text, size_t len, rec_stat *out)
{
    const char *end = text + len;
    const char *p = NULL;
    for (const char *q = text; q < end; q++)
        if (*q == ')')
            p = q;
    if (!p || p + 2 >= end)
        return -1;
    p += 2; /* ") " */
    memset(out, 0, sizeof *out);
    out->exit_code = -1;
    out->state = *p;
    /* field 3 is the state; walk the space-separated fields after it */
    int field = 3;
    while (p < end) {
        while (p < end && *p != ' ')
            p++;
        while (p < end && *p == ' ')
            p++;
        if (p >= end)
            break;
        field++;
        char *num_end;
        unsigned long long v;
        switch (field) {
        case 4:
            out->ppid = (pid_t)strtol(p, &num_end, 10);
            break;
        case 20:
            out->num_threads = strtol(p, &num_end, 10);
            break;
        case 22:
            v = strtoull(p, &num_end, 10);
            out->starttime = v;
            break;
        case 28:
            v = strtoull(p, &num_end, 10);
            out->startstack = v;
            break;
        case 52:
            out->exit_code = (int)strtol(p, &num_end, 10);
            break;
        default:
            break;
        }
    }
    if (field < 22)
        return -1;
    return 0;
}

char rec_fd_state(int fd)
{
    char buf[1024];
    ssize_t n = rec_fd_read(fd, buf, sizeof buf);
    if (n <= 0)
        return 0;
    const char *p = memrchr(buf, ')', (size_t)n);
    if (!p || p + 2 >= buf + n)
        return 0;
    return p[2];
}

char rec_fd_syscall_state(int fd)
{
    char buf[256];
    ssize_t n = rec_fd_read(fd, buf, sizeof buf);
    if (n <= 0)
        return 0;
    return strncmp(buf, "running", 7) == 0 ? 'R' : 'S';
}

int rec_proc_stat(pid_t pid, pid_t tid, rec_stat *out)
{
    char path[96], buf[1024];
    if (tid > 0)
        snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    else
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    ssize_t n = read_path(path, buf, sizeof buf);
    if (n <= 0)
        return -1;
    return rec_stat_parse(buf, (size_t)n, out);
}

int rec_proc_cmdline(pid_t pid, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    ssize_t n = read_path(path, buf, cap);
    if (n < 0)
        return -1;
    while (n > 0 && buf[n - 1] == '\0')
        n--;
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[n] = '\0';
    return 0;
}

int rec_proc_exe(pid_t pid, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(path, buf, cap - 1);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

pid_t rec_proc_tracer(pid_t pid)
{
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    ssize_t n = read_path(path, buf, sizeof buf);
    const char *t = n > 0 ? strstr(buf, "\nTracerPid:") : NULL;
    return t ? (pid_t)atoi(t + strlen("\nTracerPid:")) : -1;
}

int rec_proc_comm(pid_t pid, pid_t tid, char *buf, size_t cap)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)pid, (int)tid);
    ssize_t n = read_path(path, buf, cap);
    if (n < 0)
        return -1;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\0'))
        buf[--n] = '\0';
    return 0;
}

int64_t rec_fd_rss_bytes(int fd)
{
    char buf[256];
    if (rec_fd_read(fd, buf, sizeof buf) <= 0)
        return -1;
    unsigned long long size, resident;
    if (sscanf(buf, "%llu %llu", &size, &resident) != 2)
        return -1;
    static long page;
    if (!page)
        page = sysconf(_SC_PAGESIZE);
    return (int64_t)resident * page;
}

/* Append the pids listed in a children file (space separated). */
static int add_children_from(const char *path, pid_t *out, int max, int n)
{
    char buf[4096];
    if (read_path(path, buf, sizeof buf) < 0)
        return n;
    char *p = buf;
    while (*p) {
        char *e;
        long v = strtol(p, &e, 10);
        if (e == p)
            break;
        if (v > 0) {
            int dup = 0;
            for (int i = 0; i < n && i < max; i++)
                dup |= out[i] == (pid_t)v;
            if (!dup) {
                if (n < max)
                    out[n] = (pid_t)v;
                n++;
            }
        }
        p = e;
    }
    return n;
}

/* Without CONFIG_PROC_CHILDREN: every process whose parent is pid. */
static int children_by_scan(pid_t pid, pid_t *out, int max)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        pid_t c = (pid_t)atoi(e->d_name);
        rec_stat st;
        if (rec_proc_stat(c, 0, &st) == 0 && st.ppid == pid) {
            if (n < max)
                out[n] = c;
            n++;
        }
    }
    closedir(d);
    return n;
}

int rec_proc_children(pid_t pid, pid_t *out, int max)
{
    static int have_children_file = -1;
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    if (have_children_file < 0) {
        snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
        have_children_file = access(path, R_OK) == 0 || errno != ENOENT;
    }
    if (!have_children_file) {
        closedir(d);
        return children_by_scan(pid, out, max);
    }
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, atoi(e->d_name));
        n = add_children_from(path, out, max, n);
    }
    closedir(d);
    return n;
}

int rec_proc_tasks(pid_t pid, pid_t *out, int max)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        if (n < max)
            out[n] = (pid_t)atoi(e->d_name);
        n++;
    }
    closedir(d);
    return n;
}

int64_t rec_start_ns(uint64_t starttime)
{
    static long hz;
    if (!hz)
        hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0 || starttime == 0)
        return 0;
    /* starttime counts from boot including suspend (CLOCK_BOOTTIME);
     * shift it onto CLOCK_MONOTONIC by the current difference. */
    struct timespec boot, mono;
    if (clock_gettime(CLOCK_BOOTTIME, &boot) != 0 || clock_gettime(CLOCK_MONOTONIC, &mono) != 0)
        return 0;
    int64_t boot_ns = (int64_t)boot.tv_sec * 1000000000 + boot.tv_nsec;
    int64_t mono_ns = (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec;
    int64_t start_boot = (int64_t)(starttime / (uint64_t)hz) * 1000000000 +
                         (int64_t)(starttime % (uint64_t)hz) * (1000000000 / hz);
    int64_t v = start_boot - (boot_ns - mono_ns);
    return v > 0 ? v : 0;
}
