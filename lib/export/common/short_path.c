/*
 * lib/export/common/short_path.c — the shortened source path (contract in
 * short_path.h).
 */
#include "lib/export/common/short_path.h"

#include <stddef.h>
#include <string.h>

const char *exp_short_path(const char *path)
{
    static const char *const markers[] = {"/site-packages/", "/dist-packages/"};
    const char *best = NULL;
    for (size_t i = 0; i < 2; i++) {
        const char *m = strstr(path, markers[i]);
        for (const char *next = m; next; next = strstr(next + 1, markers[i]))
            m = next; /* the innermost one (virtualenvs nest them) */
        if (m && (!best || m > best))
            best = m + strlen(markers[i]);
    }
    if (best && *best)
        return best;
    /* standard library: ".../lib/python3.11/json/decoder.py" */
    for (const char *p = strstr(path, "/lib/python"); p; p = strstr(p + 1, "/lib/python")) {
        const char *q = p + strlen("/lib/python");
        while (*q && *q != '/')
            q++;
        if (*q == '/' && q[1])
            best = q + 1;
    }
    if (best)
        return best;
    const char *last = strrchr(path, '/');
    if (!last)
        return path;
    const char *prev = last;
    while (prev > path && prev[-1] != '/')
        prev--;
    if (prev == path)
        return path; /* "dir/file.py" or "/file.py" */
    return prev;
}
