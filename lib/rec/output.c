/*
 * output.c — where the trace goes (contract in rec_int.h; behaviour for
 * users in docs/man/trec.1 "OUTPUT FILE" and docs/trec.md).
 *
 * Two promises pull against each other.  A trace must be readable while
 * it is being written and after trec is killed (everything up to the
 * last complete chunk, spec "chunk"), so the converters' way — write a
 * temporary and rename it when done — would hide it for the whole run.
 * And -o must never write through a symbolic link or a hard link at the
 * destination, never truncate an inode someone else still uses, and
 * leave an existing file alone when the recording never starts.
 *
 * So a regular (or new) destination gets a hidden file created with
 * O_EXCL next to it (".NAME.trec-XXXXXX": same directory, same file
 * system), which rec_output_commit renames onto NAME as soon as the
 * recording has started — before the first chunk is written, so a live
 * reader and a killed trec find the trace under its final name.  rename
 * replaces a symbolic link or one name of a hard-linked file rather than
 * what they point to.  A failed start removes the hidden file and the
 * old file at NAME is untouched.
 *
 * Destinations that are not regular files (a FIFO, /dev/null, a
 * character device) are opened and written directly, without O_TRUNC,
 * like tee: renaming over them would replace the device with a file.
 * So are the /proc "fd" links (/dev/stdout, /dev/fd/N, /proc/self/fd/N),
 * whose point is to reach a file trec already has.  A destination that
 * is trec's own standard output (a file or a pipe: `-o /dev/stdout`,
 * `-o x.trc >x.trc`) is taken as "-": written through fd 1, and a
 * started program's standard output goes to standard error, since two
 * writers sharing one file would overwrite each other.  A directory is
 * refused.  When the directory cannot take a new file but the
 * destination is a regular file with a single name, it is written in
 * place, opened with O_NOFOLLOW and truncated only at commit.
 *
 * Writes go through rec_output_write, called once per whole chunk by
 * the writer.  The first failure (ENOSPC, EFBIG under `ulimit -f`, EIO,
 * EPIPE, a short write) stops all writing and cuts a regular file back
 * to the end of the last complete chunk, so it reads cleanly.
 */
#include "lib/rec/rec_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Longest part of the destination's name kept in the hidden name: with
 * the dot and ".trec-XXXXXX" it stays within NAME_MAX (255). */
#define HIDDEN_KEEP 200

int rec_output_expand(const char *tmpl, pid_t pid, char *path, size_t cap)
{
    size_t n = 0;
    for (const char *p = tmpl; *p; p++) {
        char num[24];
        const char *piece = num;
        size_t len;
        if (*p != '%') {
            num[0] = *p;
            len = 1;
        } else if (p[1] == 'p') {
            len = (size_t)snprintf(num, sizeof num, "%d", (int)pid);
            p++;
        } else if (p[1] == '%') {
            num[0] = '%';
            len = 1;
            p++;
        } else {
            return -1;
        }
        if (n + len + 1 > cap)
            return -1;
        memcpy(path + n, piece, len);
        n += len;
    }
    if (n == 0)
        return -1;
    path[n] = '\0';
    return 0;
}

/* 1 when path is (or is named through) a /proc file-descriptor link:
 * /dev/stdout -> /proc/self/fd/1, /dev/fd/N, /proc/PID/fd/N.  Renaming
 * over those would replace a system link (as root) or fail; the user
 * means the file behind them. */
static int is_fd_alias(const char *path)
{
    struct stat ls;
    if (strncmp(path, "/proc/", 6) == 0 || strncmp(path, "/dev/fd/", 8) == 0)
        return 1;
    if (lstat(path, &ls) != 0 || !S_ISLNK(ls.st_mode))
        return 0;
    char target[PATH_MAX];
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n < 0)
        return 0;
    target[n] = '\0';
    return strncmp(target, "/proc/", 6) == 0;
}

/* Where fd's next byte lands, for cutting back a regular file; -1 when
 * it is not a regular file (nothing is ever cut then). */
static int64_t regular_offset(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return -1;
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0 && (fl & O_APPEND))
        return (int64_t)st.st_size;
    off_t off = lseek(fd, 0, SEEK_CUR);
    return off < 0 ? -1 : (int64_t)off;
}

/* The hidden name next to path: DIR/.NAME.trec-XXXXXX. */
static int hidden_name(const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    int dirlen = slash ? (int)(slash - path) + 1 : 0;
    size_t keep = strlen(base);
    if (keep > HIDDEN_KEEP)
        keep = HIDDEN_KEEP;
    int n = snprintf(out, cap, "%.*s.%.*s.trec-XXXXXX", dirlen, path, (int)keep, base);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

static int open_direct(rec_output *o, int trunc, char *err, size_t errlen)
{
    o->fd = open(o->path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (trunc ? O_TRUNC : 0));
    if (o->fd < 0) {
        snprintf(err, errlen, "%s: cannot open for writing: %s", o->path, strerror(errno));
        return -1;
    }
    if (isatty(o->fd)) {
        snprintf(err, errlen, "%s: refusing to write a binary trace to a terminal", o->path);
        close(o->fd);
        o->fd = -1;
        return -1;
    }
    o->kind = REC_OUT_DIRECT;
    return 0;
}

/* The directory refused a new file: a regular file with one name, not
 * a link, may still be written in place (truncated at commit).  errno
 * of the original failure is kept when this does not apply. */
static int open_in_place(rec_output *o)
{
    int e = errno;
    struct stat ls, st;
    if (lstat(o->path, &ls) != 0 || !S_ISREG(ls.st_mode) || ls.st_nlink != 1)
        goto no;
    o->fd = open(o->path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (o->fd < 0)
        goto no;
    if (fstat(o->fd, &st) != 0 || st.st_ino != ls.st_ino || st.st_dev != ls.st_dev ||
        st.st_nlink != 1) {
        close(o->fd);
        o->fd = -1;
        goto no;
    }
    o->kind = REC_OUT_IN_PLACE;
    return 0;
no:
    errno = e;
    return -1;
}

static int open_hidden(rec_output *o, char *err, size_t errlen)
{
    if (hidden_name(o->path, o->tmp, sizeof o->tmp) != 0) {
        snprintf(err, errlen, "%s: name too long", o->path);
        return -1;
    }
    o->fd = mkostemp(o->tmp, O_CLOEXEC);
    if (o->fd < 0) {
        int e = errno;
        o->tmp[0] = '\0';
        if ((e == EACCES || e == EPERM) && open_in_place(o) == 0)
            return 0;
        snprintf(err, errlen, "%s: cannot create: %s", o->path, strerror(e));
        return -1;
    }
    /* mkostemp makes 0600; a trace gets what open(..., 0666) would.
     * umask can only be read by setting it: trec has no other thread
     * creating files at this point. */
    mode_t mask = umask(022);
    umask(mask);
    (void)fchmod(o->fd, 0666 & ~mask);
    o->kind = REC_OUT_HIDDEN;
    return 0;
}

int rec_output_is_stdout(const char *tmpl)
{
    char path[4096];
    struct stat a, b;
    if (strcmp(tmpl, "-") == 0)
        return 1;
    if (rec_output_expand(tmpl, 0, path, sizeof path) != 0 || stat(path, &a) != 0 ||
        fstat(STDOUT_FILENO, &b) != 0)
        return 0;
    return (S_ISREG(a.st_mode) || S_ISFIFO(a.st_mode)) && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

int rec_output_open(rec_output *o, const char *tmpl, pid_t pid, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    o->base = -1;
    if (rec_output_is_stdout(tmpl)) {
        if (strcmp(tmpl, "-") == 0)
            snprintf(o->path, sizeof o->path, "<stdout>");
        else
            (void)rec_output_expand(tmpl, 0, o->path, sizeof o->path);
        if (isatty(STDOUT_FILENO)) {
            snprintf(err, errlen,
                     "refusing to write a binary trace to a terminal; redirect standard "
                     "output or use -o FILE");
            return -1;
        }
        o->fd = STDOUT_FILENO;
        o->kind = REC_OUT_STDOUT;
        o->base = regular_offset(o->fd);
        return 0;
    }
    if (rec_output_expand(tmpl, pid, o->path, sizeof o->path) != 0) {
        snprintf(err, errlen, "%s: bad output name (only %%p and %%%% may follow '%%')", tmpl);
        return -1;
    }
    struct stat st;
    int exists = stat(o->path, &st) == 0;
    size_t len = strlen(o->path);
    if (exists && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: is a directory", o->path);
        return -1;
    }
    if (o->path[len - 1] == '/') {
        snprintf(err, errlen, "%s: not a file name (ends in '/')", o->path);
        return -1;
    }
    int rc;
    if (exists && !S_ISREG(st.st_mode))
        rc = open_direct(o, 0, err, errlen);
    else if (exists && is_fd_alias(o->path))
        rc = open_direct(o, 1, err, errlen);
    else
        rc = open_hidden(o, err, errlen);
    if (rc != 0)
        return -1;
    o->base = o->kind == REC_OUT_HIDDEN || o->kind == REC_OUT_IN_PLACE ? 0 : regular_offset(o->fd);
    return 0;
}

int rec_output_commit(rec_output *o, char *err, size_t errlen)
{
    if (o->committed)
        return 0;
    if (o->kind == REC_OUT_HIDDEN && rename(o->tmp, o->path) != 0) {
        snprintf(err, errlen, "%s: cannot put the trace in place: %s", o->path, strerror(errno));
        return -1;
    }
    if (o->kind == REC_OUT_IN_PLACE && ftruncate(o->fd, 0) != 0) {
        snprintf(err, errlen, "%s: cannot truncate: %s", o->path, strerror(errno));
        return -1;
    }
    o->tmp[0] = '\0';
    o->committed = 1;
    return 0;
}

int rec_output_write(void *ctx, const void *buf, size_t len)
{
    rec_output *o = ctx;
    const char *p = buf;
    size_t left = len;
    /* Stopped at the first failure: nothing more is written.  Before
     * commit nothing is written either: a start that fails after the
     * writer was opened closes it, and that must not reach the file. */
    if (o->err || !o->committed)
        return -1;
    while (left) {
        ssize_t n = write(o->fd, p, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            o->err = n < 0 ? errno : EIO;
            /* a torn chunk at the end would read as damage: cut it off */
            if (left < len && o->base >= 0) {
                int64_t end = o->base + (int64_t)o->good;
                if (ftruncate(o->fd, (off_t)end) != 0 || lseek(o->fd, (off_t)end, SEEK_SET) < 0)
                    o->cut_failed = errno ? errno : EIO;
            }
            return -1;
        }
        p += n;
        left -= (size_t)n;
    }
    o->good += len;
    o->last_ok_ns = trc_now_ns();
    return 0;
}

void rec_output_close(rec_output *o)
{
    if (o->fd > STDOUT_FILENO)
        close(o->fd);
    o->fd = -1;
    if (o->tmp[0])
        unlink(o->tmp);
    o->tmp[0] = '\0';
}

int rec_output_is_file(const char *tmpl)
{
    char path[4096];
    struct stat st;
    if (strcmp(tmpl, "-") == 0)
        return 0;
    if (rec_output_expand(tmpl, 0, path, sizeof path) != 0)
        return 1;
    if (path[strlen(path) - 1] == '/')
        return 0;
    if (stat(path, &st) != 0)
        return 1;
    return S_ISREG(st.st_mode) && !is_fd_alias(path);
}
