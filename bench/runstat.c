/*
 * bench/runstat.c — runs a command N times and prints what it cost, for
 * the benchmark scripts (bench/decode.sh):
 *
 *   runstat [-n N] [-o OUT] -- CMD [ARG...]
 *
 * Each run: stdin from /dev/null, stdout to OUT (default /dev/null),
 * stderr to /dev/null; reaped with wait4(), so the figures are the
 * child's own: CPU seconds (user + system, microsecond resolution) and
 * peak resident set.  Prints one line:
 *
 *   cpu_s=BEST wall_s=BEST maxrss_kb=MAX status=S
 *
 * BEST is the fastest of the N runs (the machine is shared: the fastest
 * run is the least disturbed one), MAX the largest peak RSS, S the exit
 * status of the last run (or 128 + signal).  Exits 0 when every run
 * exited 0 or 1 (1 = the converter warned about recorded loss and still
 * converted everything), else 2.
 *
 * Why a program rather than Python's os.wait4 or GNU time: Linux carries
 * the forking parent's peak RSS over exec into the child's ru_maxrss, so
 * the parent must be small; this one is about 1 MiB.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One run; returns the exit status (128 + signal), or -1 if it could not
 * be started. */
static int run_once(char **argv, const char *out, double *cpu, double *wall, long *rss_kb)
{
    struct rusage ru;
    int status, fd;
    double t0 = mono_s();
    pid_t pid = fork();

    if (pid < 0)
        return -1;
    if (pid == 0) {
        fd = open("/dev/null", O_RDWR);
        if (fd >= 0) {
            dup2(fd, 0);
            dup2(fd, 2);
        }
        fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            _exit(126);
        dup2(fd, 1);
        execvp(argv[0], argv);
        _exit(127);
    }
    if (wait4(pid, &status, 0, &ru) != pid)
        return -1;
    *wall = mono_s() - t0;
    *cpu = tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
    *rss_kb = ru.ru_maxrss;
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
    const char *out = "/dev/null";
    double best_cpu = 1e30, best_wall = 1e30, cpu, wall;
    long max_rss = 0, rss;
    int n = 1, i = 1, k, st = 0, ok = 1;

    while (i < argc && strcmp(argv[i], "--") != 0) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            out = argv[++i];
        else
            break;
        i++;
    }
    if (i >= argc - 1 || strcmp(argv[i], "--") != 0 || n < 1) {
        fprintf(stderr, "usage: runstat [-n N] [-o OUT] -- CMD [ARG...]\n");
        return 2;
    }
    for (k = 0; k < n; k++) {
        st = run_once(argv + i + 1, out, &cpu, &wall, &rss);
        if (st < 0) {
            perror("runstat");
            return 2;
        }
        if (st != 0 && st != 1)
            ok = 0;
        if (cpu < best_cpu)
            best_cpu = cpu;
        if (wall < best_wall)
            best_wall = wall;
        if (rss > max_rss)
            max_rss = rss;
    }
    printf("cpu_s=%.6f wall_s=%.6f maxrss_kb=%ld status=%d\n", best_cpu, best_wall, max_rss, st);
    return ok ? 0 : 2;
}
