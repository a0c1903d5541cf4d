/*
 * py_maps.c — /proc/PID/maps parser (py_maps.h).
 */
#include "lib/py/py_maps.h"

#include "lib/util/alloc.h"
#include "lib/util/grow.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int pymaps_read(pid_t pid, pymaps *out)
{
    char fn[64], line[4352];
    FILE *f;
    size_t cap = 0;
    int rc = -1;

    out->m = NULL;
    out->n = 0;
    if (pid > 0)
        snprintf(fn, sizeof fn, "/proc/%d/maps", (int)pid);
    else
        snprintf(fn, sizeof fn, "/proc/self/maps");
    f = fopen(fn, "re");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long long s, e, off;
        char perms[8];
        int pathpos = 0;

        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &s, &e, perms, &off, &pathpos) < 4 ||
            pathpos <= 0 || line[pathpos] != '/')
            continue;
        char *path = line + pathpos;
        path[strcspn(path, "\n")] = '\0';
        size_t len = strlen(path);
        static const char del[] = " (deleted)";
        if (len > sizeof del - 1 && strcmp(path + len - (sizeof del - 1), del) == 0)
            path[len - (sizeof del - 1)] = '\0';
        if (trcu_grow((void **)&out->m, &cap, out->n, sizeof *out->m) != TRC_OK) {
            errno = ENOMEM;
            goto out;
        }
        pymap *m = &out->m[out->n];
        m->start = s;
        m->end = e;
        m->offset = off;
        snprintf(m->perms, sizeof m->perms, "%.4s", perms);
        m->path = trc_strdup(path);
        if (!m->path) {
            errno = ENOMEM;
            goto out;
        }
        out->n++;
    }
    if (ferror(f)) {
        /* A vanished process reads as an error on some kernels. */
        errno = errno ? errno : ESRCH;
        goto out;
    }
    rc = 0;
out:
    fclose(f);
    if (rc != 0) {
        int saved = errno;
        pymaps_free(out);
        errno = saved;
    }
    return rc;
}

void pymaps_free(pymaps *m)
{
    for (size_t i = 0; i < m->n; i++)
        trc_free(m->m[i].path);
    trc_free(m->m);
    m->m = NULL;
    m->n = 0;
}

const pymap *pymaps_base(const pymaps *m, const char *path)
{
    const pymap *best = NULL;

    for (size_t i = 0; i < m->n; i++)
        if (m->m[i].offset == 0 && strcmp(m->m[i].path, path) == 0 &&
            (!best || m->m[i].start < best->start))
            best = &m->m[i];
    return best;
}
