/*
 * threads.c — the threads of one recorded process: discovery as they
 * appear in the interpreter's thread list, their names, the open stat
 * file that gives their scheduler state, and their removal.
 *
 * Names: the threading module's name (py_proc_thread_name) when it can
 * be read, else the OS name from /proc/PID/task/TID/comm.  A name can
 * change after the thread appears (threading registers a thread only
 * once it runs, and code may rename it), so names are looked at again
 * after 20 ms, then at doubling intervals up to once a second; a change
 * is written as a THREAD redefinition (spec record 6: a rename).
 *
 * State: see procfs.c (the syscall file, else stat).
 *
 * A thread whose OS id lib/py could not determine (-1) gets a negative
 * stand-in id, unique in its process, and no scheduler state.
 */
#include "lib/rec/rec_int.h"

#include "format/alloc.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NAME_FIRST_NS 20000000LL   /* 20 ms */
#define NAME_MAX_NS 1000000000LL   /* 1 s */

/* The threading name if it can be read now (returns 1), else the OS
 * name (returns 0; "" if that cannot be read either). */
static int pick_name(py_proc *py, pid_t pid, int64_t tid, char *out, size_t cap)
{
    const char *tn = (py && tid > 0) ? py_proc_thread_name(py, tid) : NULL;
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

rec_thread *rec_threads_get(rec_threads *t, trc_writer *w, py_proc *py, pid_t pid,
                            const py_thread_info *ti, int64_t now_ns, trc_status *st)
{
    *st = TRC_OK;
    for (size_t i = 0; i < t->n; i++) {
        rec_thread *th = &t->v[i];
        if (ti->tid >= 0 ? th->tid == ti->tid : (th->tid < 0 && th->tstate == ti->tstate)) {
            th->tstate = ti->tstate;
            return th;
        }
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        rec_thread *v = trc_realloc(t->v, cap * sizeof *v);
        if (!v) {
            *st = TRC_ERR_NOMEM;
            return NULL;
        }
        t->v = v;
        t->cap = cap;
    }
    rec_thread *th = &t->v[t->n];
    memset(th, 0, sizeof *th);
    th->tstate = ti->tstate;
    th->state_fd = -1;
    if (ti->tid >= 0) {
        th->tid = ti->tid;
        th->state_fd = rec_proc_open(pid, (pid_t)ti->tid, "syscall");
        if (th->state_fd < 0 || rec_fd_syscall_state(th->state_fd) == 0) {
            if (th->state_fd >= 0)
                close(th->state_fd);
            th->state_fd = rec_proc_open(pid, (pid_t)ti->tid, "stat");
            th->state_is_stat = 1;
        }
    } else {
        th->tid = -(int64_t)(t->distinct + 1);
    }
    th->py_name = pick_name(py, pid, th->tid, th->name, sizeof th->name);
    *st = trc_writer_thread(w, pid, th->tid, th->name, &th->wid);
    if (*st != TRC_OK) {
        if (th->state_fd >= 0)
            close(th->state_fd);
        return NULL;
    }
    th->name_interval_ns = NAME_FIRST_NS;
    th->next_name_ns = now_ns + th->name_interval_ns;
    t->n++;
    t->distinct++;
    return th;
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
    char name[sizeof th->name];
    int py_name = pick_name(py, pid, th->tid, name, sizeof name);
    /* a threading name that could not be read this time is not a
     * rename back to the OS name */
    if (!name[0] || strcmp(name, th->name) == 0 || (th->py_name && !py_name))
        return TRC_OK;
    th->py_name = py_name;
    memcpy(th->name, name, sizeof name);
    return trc_writer_thread(w, pid, th->tid, th->name, &th->wid);
}

static void thread_cleanup(rec_thread *th)
{
    if (th->state_fd >= 0)
        close(th->state_fd);
    th->state_fd = -1;
    rec_stackcache_cleanup(&th->cache);
}

void rec_threads_prune(rec_threads *t, uint32_t gen)
{
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++) {
        /* a thread missing from one list may be a torn read: give it 3 */
        if (gen - t->v[i].seen < 3) {
            if (k != i)
                t->v[k] = t->v[i];
            k++;
        } else {
            thread_cleanup(&t->v[i]);
        }
    }
    t->n = k;
}

void rec_threads_cleanup(rec_threads *t)
{
    for (size_t i = 0; i < t->n; i++)
        thread_cleanup(&t->v[i]);
    trc_free(t->v);
    memset(t, 0, sizeof *t);
}
