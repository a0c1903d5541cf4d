/*
 * output.c — where the trace goes.
 *
 * A file is written in place, not through a temporary renamed at the end
 * as the converters do: a trace must be readable while it is being
 * written and after the recorder is killed (everything up to the last
 * complete chunk, spec "chunk"), which a temporary name would hide.
 * "-" is trec's standard output; a terminal is refused, since binary
 * chunks would only garble it.
 */
#include "lib/rec/rec_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

int rec_output_open(const char *tmpl, pid_t pid, char *path, size_t cap, char *err,
                    size_t errlen)
{
    if (strcmp(tmpl, "-") == 0) {
        snprintf(path, cap, "<stdout>");
        if (isatty(STDOUT_FILENO)) {
            snprintf(err, errlen,
                     "refusing to write a binary trace to a terminal; redirect standard "
                     "output or use -o FILE");
            return -1;
        }
        return STDOUT_FILENO;
    }
    if (rec_output_expand(tmpl, pid, path, cap) != 0) {
        snprintf(err, errlen, "%s: bad output name (only %%p and %%%% may follow '%%')", tmpl);
        return -1;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open for writing: %s", path, strerror(errno));
        return -1;
    }
    return fd;
}
