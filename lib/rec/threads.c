/*
 * threads.c — the threads of one recorded process: discovery as they
 * appear in the interpreter's thread list or (native threads) in the
 * process's task list, their names, the open stat file that gives their
 * scheduler state, and their removal.
 *
 * One entry per OS thread, whatever it runs.  A task that no Python
 * thread state names is a native thread (started from C); when the
 * interpreter lists a thread state with its id (PyGILState_Ensure), the
 * same entry becomes that Python thread's, and when a Python thread's
 * state goes while its OS thread may live on, its entry becomes a
 * native thread's, keeping its name: one thread in the trace either way.
 *
 * Names: the threading module's name (py_proc_thread_name) when it can
 * be read, else the OS name from /proc/PID/task/TID/comm.  A thread
 * appears in the interpreter's list before threading has registered it
 * (its Thread gets its native id in its first Python lines, which may
 * wait for the GIL), so a thread without a threading name is looked at
 * again at each of its first NAME_EAGER samples read with Python frames,
 * before the sample is written: a thread that lives a few milliseconds
 * (a request handler) gets its name while it lives.  After that, and for
 * every thread, the names are looked at again after 20 ms, then at
 * doubling intervals up to once a second (code may rename a thread).  A
 * change is written as a THREAD redefinition (spec record 6: a rename),
 * which readers apply to the thread's samples before it too.  A native
 * thread's name is its OS name, or the one it had as a Python thread.
 *
 * State: see procfs.c (the syscall file, else stat).
 *
 * A thread whose OS id lib/py could not determine (-1) gets a negative
 * stand-in id, unique in its process, and no scheduler state.
 *
 * Ids.  A target in another pid namespace (container) knows its threads
 * by its namespace's ids, which lib/py reports; the trace, like the
 * process's pid, uses ours, and so do the /proc files.  The two are
 * paired through /proc/PID/task/TID/status (py_ns_tid), looked at again
 * only when an id of the target's is not paired yet.
 *
 * A thread's id can come back: the kernel hands a freed id to a new
 * thread (soon, in a small pid namespace).  The state file of the old
 * thread then fails while the id is still listed; rec_thread_reopen
 * opens the new thread's, and the caller checks the process.
 */
#include "lib/rec/rec_int.h"

#include "lib/util/alloc.h"
#include "lib/util/grow.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME_FIRST_NS 20000000LL   /* 20 ms */
#define NAME_MAX_NS 1000000000LL   /* 1 s */
#define NAME_EAGER 50              /* looks at a new thread's first samples in Python */

/* A new entry at the end of t (zeroed, no fds), or NULL (out of memory). */
static rec_thread *add_entry(rec_threads *t)
{
    if (trcu_grow((void **)&t->v, &t->cap, t->n, sizeof *t->v) != TRC_OK)
        return NULL;
    rec_thread *th = &t->v[t->n];
    memset(th, 0, sizeof *th);
    th->state_fd = -1;
    th->sw.fd = -1;
    th->cpu.fd = -1;
    return th;
}

/* The threading name if it can be read now (returns 1), else the OS
 * name (returns 0; "" if that cannot be read either).  ns_tid: the id the
 * target knows the thread by. */
static int pick_name(py_proc *py, pid_t pid, int64_t tid, int64_t ns_tid, char *out, size_t cap)
{
    const char *tn = (py && ns_tid > 0) ? py_proc_thread_name(py, ns_tid) : NULL;
    if (tn && *tn) {
        /* cut a long name at a character boundary, never inside a UTF-8 sequence */
        size_t n = strlen(tn);
        if (n >= cap) {
            n = cap - 1;
            while (n > 0 && ((unsigned char)tn[n] & 0xC0) == 0x80)
                n--;
        }
        memcpy(out, tn, n);
        out[n] = '\0';
        return 1;
    }
    if (tid <= 0 || rec_proc_comm(pid, (pid_t)tid, out, cap) != 0)
        out[0] = '\0';
    return 0;
}

/* Opens th's switch records where allowed (switches.c), first: the state
 * the /proc file gives next is then one the records only ever update. */
static void open_switches(rec_threads *t, rec_thread *th)
{
    rec_switches_close(&th->sw);
    th->last_ok = 0;
    th->pre_set = 0; /* a look at the old records says nothing of the new */
    if (!t->switches || t->switches_denied)
        return;
    int e = rec_switches_open(&th->sw, (pid_t)th->tid);
    if (rec_switches_refused(e))
        t->switches_denied = 1;
}

/* Opens th's state file (syscall, else stat).  0, or the errno of the
 * stat file's open (state_fd -1): ENOENT when the process has no such
 * task. */
static int open_state(rec_threads *t, rec_thread *th, pid_t pid)
{
    open_switches(t, th);
    th->state_is_stat = 0;
    th->state_fd = rec_proc_open(pid, (pid_t)th->tid, "syscall");
    char st = th->state_fd >= 0 ? rec_fd_syscall_state(th->state_fd) : 0;
    if (st == 0) {
        if (th->state_fd >= 0)
            close(th->state_fd);
        th->state_fd = rec_proc_open(pid, (pid_t)th->tid, "stat");
        th->state_is_stat = 1;
        if (th->state_fd < 0) {
            int e = errno;
            rec_switches_close(&th->sw);
            rec_oncpu_close(&th->cpu);
            return e;
        }
        st = rec_fd_state(th->state_fd);
    }
    rec_oncpu_open(&th->cpu, pid, (pid_t)th->tid);
    th->cpu.born = t->born;
    th->sw_first = st;
    th->sw_head = 0;
    return 0;
}

static int cmp_pair(const void *a, const void *b)
{
    int64_t x = ((const rec_tidpair *)a)->tid, y = ((const rec_tidpair *)b)->tid;
    return x < y ? -1 : x > y;
}

/* Pairs every task of pid anew, keeping the pairs already known (the
 * map stays sorted by our id).  0, or -1 when the task list cannot be
 * read or on allocation failure (the old map is kept). */
static int pair_tasks(rec_threads *t, pid_t pid)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    rec_tidpair *v = NULL;
    size_t n = 0, cap = 0;
    int rc = -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        rec_tidpair key = {.tid = atoll(e->d_name)};
        if (key.tid <= 0)
            continue;
        const rec_tidpair *old =
            t->map_n ? bsearch(&key, t->map, t->map_n, sizeof *t->map, cmp_pair) : NULL;
        key.ns_tid = old ? old->ns_tid : py_ns_tid(pid, key.tid);
        if (key.ns_tid <= 0)
            continue; /* ended meanwhile */
        if (trcu_grow((void **)&v, &cap, n, sizeof *v) != TRC_OK)
            goto out;
        v[n++] = key;
    }
    qsort(v, n, sizeof *v, cmp_pair);
    trc_free(t->map);
    t->map = v;
    t->map_n = n;
    v = NULL;
    rc = 0;
out:
    trc_free(v);
    closedir(d);
    return rc;
}

int64_t rec_threads_outer_tid(rec_threads *t, pid_t pid, int64_t ns_tid)
{
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < t->map_n; i++)
            if (t->map[i].ns_tid == ns_tid)
                return t->map[i].tid;
        if (pass || pair_tasks(t, pid) != 0)
            break;
    }
    return -1;
}

int rec_thread_reopen(rec_threads *t, rec_thread *th, pid_t pid, int64_t now_ns)
{
    if (th->tid <= 0)
        return 0;
    if (t->nested) {
        /* our id of a new thread with the target's id is another one:
         * let the entry go (pruned) and the thread come as a new one */
        if (pair_tasks(t, pid) != 0 || rec_threads_outer_tid(t, pid, th->ns_tid) != th->tid) {
            th->ns_tid = -1;
            th->tstate = 0;
            return 0;
        }
    }
    int fd = rec_proc_open(pid, (pid_t)th->tid, "stat");
    if (fd < 0)
        return 0; /* no thread has the id now */
    close(fd);
    if (th->state_fd >= 0)
        close(th->state_fd);
    open_state(t, th, pid);
    if (th->state_fd < 0)
        return 0;
    /* another thread: look at its name soon */
    th->py_name = 0;
    th->name_eager = NAME_EAGER;
    th->name_interval_ns = NAME_FIRST_NS;
    th->next_name_ns = now_ns;
    return 1;
}

rec_thread *rec_threads_task(rec_threads *t, pid_t pid, pid_t tid, int64_t now_ns, int *fresh,
                             trc_status *st)
{
    *st = TRC_OK;
    *fresh = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].tid == tid)
            return &t->v[i];
    int64_t ns_tid = t->nested ? py_ns_tid(pid, tid) : tid;
    if (ns_tid <= 0)
        return NULL; /* ended meanwhile */
    rec_thread *th = add_entry(t);
    if (!th) {
        *st = TRC_ERR_NOMEM;
        return NULL;
    }
    th->tid = tid;
    th->ns_tid = ns_tid;
    th->native = 1;
    if (open_state(t, th, pid) != 0 || th->state_fd < 0)
        return NULL; /* ended meanwhile (nothing to close) */
    /* the OS name only: threading names no thread without a thread state */
    pick_name(NULL, pid, th->tid, th->ns_tid, th->name, sizeof th->name);
    th->name_interval_ns = NAME_FIRST_NS;
    th->next_name_ns = now_ns + th->name_interval_ns;
    t->n++;
    t->distinct++;
    *fresh = 1;
    return th;
}

char rec_thread_state(const rec_thread *th)
{
    return th->state_is_stat ? rec_fd_state(th->state_fd) : rec_fd_syscall_state(th->state_fd);
}

int rec_thread_look(const rec_thread *th, int by_proc, char *state, int *running)
{
    *running = 0;
    if (th->sw.fd < 0)
        return 0;
    uint64_t h;
    char k = rec_switches_look(&th->sw, th->sw_first, &h);
    if (k) {
        *state = k == 'S' ? 'S' : 'R';
        *running = rec_switches_running(k);
        return 1;
    }
    if (!by_proc && th->state_fd >= 0)
        *state = rec_thread_state(th);
    return 0;
}

trc_status rec_thread_define(rec_thread *th, trc_writer *w, pid_t pid)
{
    if (th->wid)
        return TRC_OK;
    return trc_writer_thread(w, pid, th->tid, th->name, &th->wid);
}

rec_thread *rec_threads_get(rec_threads *t, py_proc *py, pid_t pid, const py_thread_info *ti,
                            int64_t now_ns, trc_status *st)
{
    *st = TRC_OK;
    for (size_t i = 0; i < t->n; i++) {
        rec_thread *th = &t->v[i];
        if (ti->tid >= 0 ? th->ns_tid == ti->tid : (th->ns_tid < 0 && th->tstate == ti->tstate)) {
            if (th->tstate != ti->tstate)
                th->last_ok = 0; /* another Python thread on this OS thread */
            th->tstate = ti->tstate;
            if (th->native) {
                /* a thread started from C that has a thread state now
                 * (PyGILState_Ensure), or a Python thread that was
                 * starting: its Python stacks from here on, and its
                 * threading name as soon as it has one */
                th->native = 0;
                th->native_stack = 0;
                if (!th->wid) {
                    /* not written yet: named as a new thread is */
                    th->py_name = pick_name(py, pid, th->tid, th->ns_tid, th->name, sizeof th->name);
                    th->name_eager = th->py_name ? 0 : NAME_EAGER;
                } else if (!th->py_name) {
                    th->name_eager = NAME_EAGER;
                    th->next_name_ns = now_ns; /* a look (and rename) this tick */
                }
            }
            return th;
        }
    }
    rec_thread *th = add_entry(t);
    if (!th) {
        *st = TRC_ERR_NOMEM;
        return NULL;
    }
    th->tstate = ti->tstate;
    th->ns_tid = ti->tid;
    th->tid = ti->tid;
    if (ti->tid > 0) {
        if (t->nested)
            th->tid = rec_threads_outer_tid(t, pid, ti->tid);
        if (th->tid <= 0 || open_state(t, th, pid) == ENOENT)
            return NULL; /* no task has the id: ended, or a stale id (*st OK: skip it) */
    } else {
        th->tid = -(int64_t)(t->distinct + 1);
    }
    th->py_name = pick_name(py, pid, th->tid, th->ns_tid, th->name, sizeof th->name);
    th->name_eager = th->py_name ? 0 : NAME_EAGER;
    th->name_interval_ns = NAME_FIRST_NS;
    th->next_name_ns = now_ns + th->name_interval_ns;
    t->n++;
    t->distinct++;
    return th;
}

/* Looks at th's name now; a change is written as a rename once th has
 * been written. */
static trc_status look_name(rec_thread *th, trc_writer *w, py_proc *py, pid_t pid)
{
    char name[sizeof th->name];
    int py_name = pick_name(th->native ? NULL : py, pid, th->tid, th->ns_tid, name, sizeof name);
    /* a threading name that could not be read this time is not a
     * rename back to the OS name */
    if (!name[0] || strcmp(name, th->name) == 0 || (th->py_name && !py_name))
        return TRC_OK;
    th->py_name = py_name;
    if (py_name)
        th->name_eager = 0;
    memcpy(th->name, name, sizeof name);
    if (th->native) {
        th->native_stack = 0; /* its frame says its name: a new one, */
        th->last_ok = 0;      /* and no repeat of the old */
    }
    if (!th->wid)
        return TRC_OK; /* not written yet: rec_thread_define takes this name */
    return trc_writer_thread(w, pid, th->tid, th->name, &th->wid);
}

trc_status rec_thread_name_eager(rec_thread *th, trc_writer *w, py_proc *py, pid_t pid)
{
    if (th->py_name || th->name_eager <= 0)
        return TRC_OK;
    th->name_eager--;
    return look_name(th, w, py, pid);
}

trc_status rec_thread_refresh_name(rec_thread *th, trc_writer *w, py_proc *py, pid_t pid,
                                   int64_t now_ns)
{
    if (now_ns < th->next_name_ns)
        return TRC_OK;
    th->name_interval_ns *= 2;
    if (th->name_interval_ns > NAME_MAX_NS)
        th->name_interval_ns = NAME_MAX_NS;
    th->next_name_ns = now_ns + th->name_interval_ns;
    return look_name(th, w, py, pid);
}

static void thread_cleanup(rec_thread *th)
{
    if (th->state_fd >= 0)
        close(th->state_fd);
    th->state_fd = -1;
    rec_switches_close(&th->sw);
    rec_oncpu_close(&th->cpu);
    rec_stackcache_cleanup(&th->cache);
}

void rec_threads_prune(rec_threads *t, uint32_t gen)
{
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++) {
        rec_thread *th = &t->v[i];
        /* a thread missing from one list may be a torn read: give it 3 */
        if (gen - th->seen >= 3 && !th->native && th->tid > 0 && th->state_fd >= 0) {
            /* no thread state any more, while its OS thread may live on
             * (the end of a thread, C code after PyGILState_Release): a
             * native thread from now on, under the name it has, whose
             * state file says next (sample_native) whether it lives */
            th->native = 1;
            th->tstate = 0;
            th->last_ok = 0;
            th->native_stack = 0;
            th->next_proc_ns = 0;
            th->listed = t->tasks_gen;
            th->seen = gen;
        }
        if (gen - th->seen < 3) {
            if (k != i)
                t->v[k] = t->v[i];
            k++;
        } else {
            thread_cleanup(th);
        }
    }
    t->n = k;
}

void rec_threads_cleanup(rec_threads *t)
{
    for (size_t i = 0; i < t->n; i++)
        thread_cleanup(&t->v[i]);
    trc_free(t->v);
    trc_free(t->map);
    trc_free(t->tasks);
    memset(t, 0, sizeof *t);
}
