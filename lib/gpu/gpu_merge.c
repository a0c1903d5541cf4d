/*
 * lib/gpu/gpu_merge.c — append the injection's side traces to trec's
 * output (lib/gpu/trec_gpu.h; spec/DESIGN-NOTES.md: a SEGMENT chunk
 * starts a segment and resets interned state, so concatenated traces are
 * one valid trace whose ids the reader merges).
 *
 * Bytes are copied as they are: a side trace cut short by a crash ends
 * in a partial chunk, which the reader reports as truncation and skips
 * up to the next segment — exactly the loss that happened.
 */
#include "lib/gpu/trec_gpu.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"

static int is_side_trace(const char *name)
{
    size_t n = strlen(name);
    return strncmp(name, "gpu-", 4) == 0 && n > 8 && strcmp(name + n - 4, ".trc") == 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The pid in a side trace's name, "gpu-PID.trc"; 0 when it has none. */
static int64_t side_pid(const char *name)
{
    char *end;
    long long pid = strtoll(name + 4, &end, 10);
    return pid > 0 && strcmp(end, ".trc") == 0 ? (int64_t)pid : 0;
}

/* Copy path to out_fd; 0 or -1 (errno). *bytes gets what was copied. */
static int append_file(int out_fd, const char *path, uint64_t *bytes)
{
    char buf[65536];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    *bytes = 0;
    if (fd < 0)
        return -1;
    while ((n = read(fd, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (write_all(out_fd, buf, (size_t)n) != 0)
            break;
        *bytes += (uint64_t)n;
    }
    int e = errno;
    close(fd);
    errno = e;
    return n == 0 ? 0 : -1;
}

int trec_gpu_merge(int out_fd, const char *side_dir, trec_gpu_ended_fn ended, void *ctx,
                   trec_gpu_merge_result *res)
{
    DIR *d;
    struct dirent *de;
    char **names = NULL, path[PATH_MAX];
    size_t n = 0, cap = 0;
    int rc = 0, err = 0;

    memset(res, 0, sizeof *res);
    d = opendir(side_dir);
    if (!d) {
        err = errno;
        snprintf(res->why, sizeof res->why, "%.180s: %.60s", side_dir, strerror(err));
        errno = err;
        return -1;
    }
    while ((de = readdir(d))) {
        if (!is_side_trace(de->d_name))
            continue;
        if (trcu_grow((void **)&names, &cap, n, sizeof *names) != TRC_OK)
            goto nomem;
        if (!(names[n] = trc_strdup(de->d_name)))
            goto nomem;
        n++;
    }
    closedir(d);
    d = NULL;
    if (n)
        qsort(names, n, sizeof *names, cmp_names);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        uint64_t bytes;
        snprintf(path, sizeof path, "%s/%s", side_dir, names[i]);
        if (stat(path, &st) == 0 && st.st_size == 0) {
            res->empty++;
            unlink(path);
            continue;
        }
        /* a process that ran no exit handler left its segment open */
        int64_t pid = side_pid(names[i]);
        trec_gpu_seal_result sr;
        if (pid && ended && ended(pid, ctx)) {
            if (trec_gpu_seal(path, pid, &sr) != 0) {
                if (!res->seal_failed++)
                    snprintf(res->seal_why, sizeof res->seal_why, "%s", sr.why);
            } else if (sr.sealed && !res->sealed++) {
                res->sealed_pid = pid;
            }
        }
        /* a regular output is cut back if the copy fails half-way (disk
         * full): a torn segment start would read as damage */
        off_t off0 = fstat(out_fd, &st) == 0 && S_ISREG(st.st_mode) ? lseek(out_fd, 0, SEEK_CUR)
                                                                   : (off_t)-1;
        if (append_file(out_fd, path, &bytes) != 0) {
            int e = errno;
            if (off0 >= 0 && ftruncate(out_fd, off0) == 0 && lseek(out_fd, off0, SEEK_SET) == off0)
                bytes = 0;
            errno = e;
            if (!rc) {
                err = errno;
                snprintf(res->why, sizeof res->why, "appending %.180s: %.60s", path, strerror(err));
            }
            rc = -1;
            res->bytes += bytes;
            continue;   /* kept on disk: the user can append it by hand */
        }
        res->bytes += bytes;
        res->files++;
        unlink(path);
    }
    if (rc == 0)
        (void)rmdir(side_dir);   /* fails harmlessly if the user put files there */
    goto out;
nomem:
    err = ENOMEM;
    snprintf(res->why, sizeof res->why, "%.180s: out of memory", side_dir);
    rc = -1;
out:
    if (d)
        closedir(d);
    for (size_t i = 0; i < n; i++)
        trc_free(names[i]);
    trc_free(names);
    if (rc)
        errno = err;
    return rc;
}
