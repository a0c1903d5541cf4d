/*
 * py_maps.h — the file-backed mappings of a process, from /proc/PID/maps,
 * as needed to find the executable or libpython and its load address.
 */
#ifndef TRC_LIB_PY_MAPS_H
#define TRC_LIB_PY_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct pymap {
    uint64_t start, end, offset;
    char perms[5];
    char *path;     /* "(deleted)" suffix removed; owned */
} pymap;

typedef struct pymaps {
    pymap *m;
    size_t n;
} pymaps;

/* Reads /proc/<pid>/maps (pid 0: self), keeping mappings with a path
 * that starts with '/'.  0, or -1 with errno (ENOENT/ESRCH: no such
 * process; EACCES/EPERM: not allowed; ENOMEM).  Free with pymaps_free. */
int pymaps_read(pid_t pid, pymaps *out);
void pymaps_free(pymaps *m);

/* Lowest mapping of path with file offset 0 (its start is the load
 * address of the ELF's first page), or NULL. */
const pymap *pymaps_base(const pymaps *m, const char *path);

#endif
