/*
 * children.c — the set of recorded processes and finding the
 * descendants of the recorded program (by default for a program trec
 * starts; with --pid only when --subprocesses asks), and noticing at
 * once when one of them has ended.
 *
 * Descendants are found by walking the process tree down from each live
 * target (/proc/PID/task/TID/children, see procfs.c) about 20 times a
 * second.  Every descendant becomes a target, Python or not: a shell or
 * a non-Python launcher in the middle of the tree still has to be walked
 * through, and it may exec a Python program later.  When trec started
 * the program it is a child subreaper, so descendants whose parent
 * exits (a double fork, a multiprocessing worker outliving its pool)
 * are re-parented to trec instead of init and stay findable: `self` is
 * then walked too.  A process living less than one scan interval can be
 * missed; that is the price of never stopping the target.
 */
#include "lib/rec/rec_int.h"

#include "lib/util/alloc.h"
#include "lib/util/grow.h"

#include <poll.h>
#include <string.h>

#define MAX_CHILDREN 1024

rec_target *rec_targets_find(rec_targets *ts, pid_t pid)
{
    for (size_t i = 0; i < ts->n; i++)
        if (ts->v[i]->pid == pid)
            return ts->v[i];
    return NULL;
}

rec_target *rec_targets_add(rec_targets *ts, pid_t pid, int is_root, int launched,
                            int64_t now_ns)
{
    if (trcu_grow((void **)&ts->v, &ts->cap, ts->n, sizeof *ts->v) != TRC_OK)
        return NULL;
    rec_target *t = trc_malloc(sizeof *t);
    if (!t)
        return NULL;
    if (rec_target_init(t, pid, is_root, launched, now_ns) != 0) {
        trc_free(t);
        return NULL;
    }
    ts->v[ts->n++] = t;
    return t;
}

void rec_targets_cleanup(rec_targets *ts)
{
    for (size_t i = 0; i < ts->n; i++) {
        rec_target_cleanup(ts->v[i]);
        trc_free(ts->v[i]);
    }
    trc_free(ts->v);
    trc_free(ts->pfd);
    memset(ts, 0, sizeof *ts);
}

/* Add the children of parent not known yet; recurse into new ones so a
 * whole new subtree is found in one scan. */
static int scan_from(rec_targets *ts, pid_t parent, int64_t now_ns, int depth)
{
    pid_t kids[MAX_CHILDREN];
    int n = rec_proc_children(parent, kids, MAX_CHILDREN);
    if (n > MAX_CHILDREN)
        n = MAX_CHILDREN;
    int added = 0;
    for (int i = 0; i < n; i++) {
        rec_target *known = rec_targets_find(ts, kids[i]);
        if (known && known->state != REC_T_ENDED)
            continue;
        if (known) {
            /* an ended target's pid came back: only a new process if it
             * started later (pid reuse); else it is a zombie not reaped */
            rec_stat s;
            if (rec_proc_stat(kids[i], 0, &s) != 0 || s.starttime == known->starttime)
                continue;
            known->pid = 0; /* retire the old entry's pid */
        }
        rec_target *t = rec_targets_add(ts, kids[i], 0, 0, now_ns);
        if (!t)
            return -1;
        added++;
        if (depth < 64) {
            int r = scan_from(ts, kids[i], now_ns, depth + 1);
            if (r < 0)
                return -1;
            added += r;
        }
    }
    return added;
}

int rec_children_scan(rec_targets *ts, pid_t self, int64_t now_ns)
{
    int added = 0;
    size_t n = ts->n; /* new targets are scanned by scan_from itself */
    for (size_t i = 0; i < n; i++) {
        rec_target *t = ts->v[i];
        if (t->state == REC_T_ENDED || t->pid <= 0)
            continue;
        int r = scan_from(ts, t->pid, now_ns, 0);
        if (r < 0)
            return -1;
        added += r;
    }
    if (self > 0) {
        int r = scan_from(ts, self, now_ns, 0);
        if (r < 0)
            return -1;
        added += r;
    }
    return added;
}

void rec_children_poll_exits(rec_targets *ts, int64_t now_ns)
{
    size_t n = 0;
    for (size_t i = 0; i < ts->n; i++) {
        const rec_target *t = ts->v[i];
        n += !t->launched && t->state != REC_T_ENDED && t->pid_fd >= 0;
    }
    if (n == 0)
        return;
    if (trcu_grow((void **)&ts->pfd, &ts->pfd_cap, n - 1, sizeof *ts->pfd) != TRC_OK)
        return;
    size_t k = 0;
    for (size_t i = 0; i < ts->n; i++) {
        const rec_target *t = ts->v[i];
        if (!t->launched && t->state != REC_T_ENDED && t->pid_fd >= 0)
            ts->pfd[k++] = (struct pollfd){.fd = t->pid_fd, .events = POLLIN};
    }
    if (poll(ts->pfd, (nfds_t)k, 0) <= 0)
        return;
    k = 0;
    for (size_t i = 0; i < ts->n; i++) {
        rec_target *t = ts->v[i];
        if (t->launched || t->state == REC_T_ENDED || t->pid_fd < 0)
            continue;
        if (ts->pfd[k++].revents)
            t->next_check_ns = now_ns;
    }
}
