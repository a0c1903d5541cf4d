/*
 * pyproc.h — reading a CPython interpreter's threads and stacks from
 * outside (process_vm_readv) or from inside (the CUPTI injection, same
 * walker over a local memory reader).  docs/design/cpython.md; layouts per
 * version in lib/py/layout_*.h, _Py_DebugOffsets for 3.13+.
 *
 * This is the contract between the Python introspection code (lib/py/)
 * and its users (trec's sampler in lib/rec/, the CUPTI injection in
 * lib/cupti/).  Internal API, not installed.
 */
#ifndef TRC_LIB_PY_PYPROC_H
#define TRC_LIB_PY_PYPROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum py_status {
    PY_OK = 0,
    PY_ERR_PERM,       /* not allowed to read the target (ptrace rules, other user) */
    PY_ERR_NOT_PYTHON, /* no CPython runtime found in the target */
    PY_ERR_VERSION,    /* a CPython version we have no layout for */
    PY_ERR_NOT_READY,  /* runtime found but not initialised yet: retry later */
    PY_ERR_GONE,       /* the process exited */
    PY_ERR_NOMEM,
    PY_ERR_IO          /* other read failure */
} py_status;

typedef struct py_proc py_proc;

/* One frame as the walker resolved it.  Entries live in the py_proc's
 * cache and stay valid (same pointer for the same code object and line)
 * until py_proc_free: callers may key their own caches on the pointer
 * and may store their own id in user_id (starts at 0). */
typedef struct py_frame_info {
    const char *function;  /* UTF-8; co_qualname on 3.11+, co_name before */
    const char *file;      /* UTF-8 co_filename */
    uint32_t line;         /* current line, 0 if unknown */
    uint32_t first_line;   /* co_firstlineno */
    uint32_t user_id;      /* free for the caller */
} py_frame_info;

typedef struct py_thread_info {
    uint64_t tstate;       /* address of the PyThreadState in the target */
    int64_t tid;           /* native thread id (3.11+ field; inferred before), -1 unknown */
    uint64_t pthread_id;   /* thread_id field (pthread_t) */
    int holds_gil;         /* 1 / 0, or -1 when not determined */
} py_thread_info;

/* Attach to pid: locate _PyRuntime via /proc/PID/maps and ELF .dynsym
 * (files opened through /proc/PID/root), detect the exact version
 * without executing anything, pick the layout.  On failure returns the
 * status and writes a one-line explanation to err (cause and fix, e.g.
 * for PY_ERR_PERM the ptrace_scope / CAP_SYS_PTRACE advice).
 * Caller frees with py_proc_free. */
py_status py_proc_attach(pid_t pid, py_proc **out, char *err, size_t errlen);

/* Same, for the calling process itself (memory read with memcpy after
 * validating the address range from /proc/self/maps). */
py_status py_proc_attach_self(py_proc **out, char *err, size_t errlen);

void py_proc_free(py_proc *p);

/* "3.12.1" etc.  Borrowed. */
const char *py_proc_version(const py_proc *p);

/* Where the layout the walker uses came from, for diagnostics: "the
 * 3.12.1 headers" (a table generated from that version's headers) or
 * "_Py_DebugOffsets (3.14 list)" (the target's own block read with the
 * field list of that version; a free-threaded build's words add
 * ", free-threaded" and ", no GIL" or ", GIL enabled" as found at
 * attach).  Borrowed. */
const char *py_proc_layout_source(const py_proc *p);

/* 1 when a free-threaded build's main interpreter ran without its GIL
 * at attach or, since, at the last thread list read with want_gil: no
 * thread holds one, native threads included (their samples must not say
 * "known, not held"); else 0.  Unlike the layout words, which say the
 * state once it has lasted 100 ms, this is the state just read. */
int py_proc_no_gil(const py_proc *p);

/* Bumped whenever py_proc_layout_source's words change (a free-threaded
 * build's GIL turned on or off and staying so for 100 ms): the caller
 * may describe the process again.  Starts at 1 after attach. */
unsigned py_proc_layout_changes(const py_proc *p);
pid_t py_proc_pid(const py_proc *p);

/* Threads of all interpreters.  Returns the count written (<= max), or
 * -1 on a failed/torn read (caller counts an invalid sample).
 * want_gil: also determine holds_gil (costs one more read).
 * (lib/py: the same read call also fetches the stacks of the threads it
 * knows, so py_proc_stack for each of them within 0.5 ms needs no read
 * call of its own: one call per tick in the steady state.) */
int py_proc_threads(py_proc *p, py_thread_info *out, int max, int want_gil);

/* The Python stack of one thread, LEAF FIRST, into frames[0..max).
 * Returns the depth (0 = no Python frames, e.g. idle in C), or -1 when
 * what was read is inconsistent (torn read, cycle, bad code object,
 * depth > max): the caller counts an invalid sample and never gets
 * invented frames.  (lib/py: a torn read is retried up to twice before
 * giving up; stats.torn_retries counts those.) */
int py_proc_stack(py_proc *p, uint64_t tstate, const py_frame_info **frames, int max);

/* py_proc_stack, except that a stack deeper than max is not invalid:
 * its innermost max frames are stored, max is returned and *truncated
 * is set to 1 (else 0).  The frames beyond are not read, so how many
 * there were is not known.  (Added by lib/py: deep recursion.) */
int py_proc_stack_trunc(py_proc *p, uint64_t tstate, const py_frame_info **frames, int max,
                        int *truncated);

/* The caller knows that thread state tstate has not run since its last
 * stack was read (its scheduler said so: trec's switch records), and will
 * not ask for its stack: py_proc_threads then plans no read of it.  Lasts
 * until a stack of tstate is read or idle is given as 0. */
void py_proc_set_idle(py_proc *p, uint64_t tstate, int idle);

/* Stack of the calling thread (for py_proc_attach_self): finds the
 * thread state whose native id / pthread id is the caller's.  Same
 * return convention.  Must not take the GIL or call the Python C API;
 * safe to call from any thread. */
int py_proc_stack_self_thread(py_proc *p, const py_frame_info **frames, int max);

/* The threading module's name for a native thread id, if it can be
 * read cheaply (e.g. threading._active), else NULL.  Borrowed until the
 * next call. Optional: may always return NULL on some versions.
 * (lib/py, py_names.c: UTF-8 Thread.name of the Thread whose _native_id
 * is tid, from threading._active/_limbo of every interpreter, CPython
 * 3.8–3.13; NULL when threading is not imported, the thread is not (yet)
 * registered, tid <= 0, or on 3.14+ / free-threaded builds.  Cached:
 * one scan reads every name; a call for a cached tid scans again only
 * when the cache is older than 0.5 s, for an unknown tid when older
 * than ten times what the last scan took; so calling it per thread
 * every ~1 s catches renames, and calling it for a new thread at each of
 * its first samples catches the thread as soon as threading registers
 * it, while scans take at most a tenth of the caller's time.  A scan costs ~11 reads per
 * thread (~25 µs per thread here); a cached answer no read.) */
const char *py_proc_thread_name(py_proc *p, int64_t tid);

/* Pid namespaces (containers): the thread tid of process pid, both as
 * we see them, has in the target's own pid namespace the id this
 * returns (the last NSpid entry of /proc/PID/task/TID/status): the id
 * lib/py reports in py_thread_info.tid and takes in
 * py_proc_thread_name.  tid itself when the target shares our
 * namespace; -1 when the task is gone.  py_ns_nested: 1 when pid lives
 * in a pid namespace below ours.  (Added by lib/py.) */
int64_t py_ns_tid(pid_t pid, int64_t tid);
int py_ns_nested(pid_t pid);

/* Counters for diagnostics. */
typedef struct py_proc_stats {
    uint64_t reads, read_bytes, code_cache_hits, code_cache_misses, invalid_stacks;
    uint64_t torn_retries;   /* walks redone after an inconsistent read (added by lib/py) */
    uint64_t read_pages;     /* target pages the reads touched (added by lib/py) */
    /* thread lists read from the runtime down, read from the known
     * thread states alone, and found changed by such a read (then read
     * in full) (added by lib/py) */
    uint64_t thread_lists_full, thread_lists_steady, thread_lists_changed;
    uint64_t interp_unchecked; /* full reads with more interpreters than are remembered
                                * (lib/py/py_internal.h PYLIST_INTERPS) */
} py_proc_stats;
void py_proc_get_stats(const py_proc *p, py_proc_stats *out);

/* Test hook: how long py_proc_threads may trust a known thread list
 * before reading it again from the runtime down (0: the default,
 * 10 ms).  (Added by lib/py.) */
void py_proc_set_list_refresh(py_proc *p, uint64_t ns);

/* Test hook: forget where the kernel tid lies in struct pthread (before
 * 3.11), as when the threads could not be read at attach; py_proc_threads
 * looks for it again.  (Added by lib/py.) */
void py_proc_forget_tid_offset(py_proc *p);

/* Address of _PyRuntime in the target (diagnostics, tests).  (Added by
 * lib/py.) */
uint64_t py_proc_runtime(const py_proc *p);

/* Why the last py_proc_threads / py_proc_stack* call returned -1:
 * PY_ERR_IO for an inconsistent (torn) read, PY_ERR_GONE when the
 * process exited, PY_ERR_PERM, PY_ERR_NOMEM.  (Added by lib/py.) */
py_status py_proc_last_error(const py_proc *p);

#endif
