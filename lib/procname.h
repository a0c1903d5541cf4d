/*
 * lib/procname.h — the name a user knows a process by, one function for
 * every converter, so that a process is called the same in collapsed
 * stacks, speedscope, Chrome/Perfetto, trc-stats and trc-dump.
 *
 * The name is the recorder's label when it gave one (spec §7.5, format
 * 1.1: "DataLoader worker 1", "multiprocessing worker"), else what the
 * command line says: the script's file name (`python3 train.py` →
 * `train.py`), the module of `-m`, the role of a multiprocessing or loky
 * helper started with `-c`, or for a program that is not Python the file
 * name of its executable.  Then " rank N" when the recorder found a rank
 * in the process's environment, and " (pid N)".  Names are short (the
 * base is cut at PROCNAME_BASE_MAX bytes) and hold no control
 * characters, quotes, backslashes or semicolons, so that every output
 * format can carry them as they are.
 */
#ifndef TRC_LIB_PROCNAME_H
#define TRC_LIB_PROCNAME_H

#include <stddef.h>
#include <stdint.h>

#include "trc/trc.h"

/* Longest base (label or derived name) kept, in bytes, before " rank N". */
#define PROCNAME_BASE_MAX 64
/* Room for any whole name: base, "...", " rank N", " (pid N)" and NUL. */
#define PROCNAME_MAX 128

/* The base name of p alone ("train.py rank 3"), without the pid; p NULL
 * (a process never described) gives "process".  Writes at most cap bytes
 * with the NUL (cap >= 1); returns the length written. */
size_t procname_base(const trc_process *p, char *out, size_t cap);

/* The whole name, "train.py rank 3 (pid 812)"; pid is the one given
 * (the caller's pid when p is NULL). */
size_t procname(const trc_process *p, int64_t pid, char *out, size_t cap);

#endif
