/*
 * dump_text.c — `trec --dump`'s text: per process a header line, per
 * thread a line with its id, name and state, then its stack in a Python
 * traceback's words and order (outermost first, innermost last), so
 * that it reads like the traceback the program would print itself.
 * A thread without a Python thread state says so in place of a stack.
 * For several processes, a last section gives each distinct stack one
 * line with the pids that have it, so the process that is elsewhere
 * stands out.
 */
#include "lib/rec/dump.h"

#include <string.h>

/* Frames of a group's line: enough to tell the usual stacks of a job
 * apart; the full stacks are above it. */
#define GROUP_FRAMES 3

static void print_thread(FILE *out, const rec_dump_thread *d)
{
    fprintf(out, "Thread %lld \"%s\" (%s%s)\n", (long long)d->tid, d->name,
            rec_dump_state_name(d->state),
            d->holds_gil > 0 ? ", holds the GIL" : "");
    if (d->depth < 0) {
        fprintf(out, "  (stack changed while it was read; not shown)\n");
        return;
    }
    if (!d->python) {
        fprintf(out, "  (no Python frames: a thread without a Python thread state)\n");
        return;
    }
    if (d->depth == 0) {
        fprintf(out, "  (no Python frames)\n");
        return;
    }
    if (d->truncated)
        fprintf(out, "  (outer frames not read: only the innermost %d are shown)\n", d->depth);
    if (d->locals_missing)
        fprintf(out, "  (%s)\n", d->locals_missing);
    /* locals are in frame order, leaf first: walked backwards with the frames */
    size_t k = d->n_locals;
    for (int i = d->depth - 1; i >= 0; i--) {
        const py_frame_info *f = d->frames[i];
        fprintf(out, "  File \"%s\", line %u, in %s\n", f->file, f->line, f->function);
        if (d->frame_unread && d->frame_unread[i])
            fprintf(out, "    (locals not readable)\n");
        while (k > 0 && d->locals[k - 1].frame > i)
            k--;
        size_t first = k;
        while (first > 0 && d->locals[first - 1].frame == i)
            first--;
        for (size_t j = first; j < k; j++)
            fprintf(out, "    %s = %s\n", d->locals[j].name, d->locals[j].value);
        k = first;
    }
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

/* "pid 7" or "pids 101–104, 106": runs of consecutive pids as ranges. */
static void print_pids(FILE *out, const rec_dump_group *g)
{
    fprintf(out, "pid%s ", g->n_pids > 1 ? "s" : "");
    for (size_t i = 0; i < g->n_pids;) {
        size_t j = i;
        while (j + 1 < g->n_pids && g->pids[j + 1] == g->pids[j] + 1)
            j++;
        fprintf(out, "%s%d", i ? ", " : "", (int)g->pids[i]);
        if (j > i)
            fprintf(out, "\u2013%d", (int)g->pids[j]);
        i = j + 1;
    }
}

/* One line per group: its pids, then its innermost frames. */
static void print_groups(FILE *out, const rec_dump_groups *groups)
{
    fprintf(out, "\nIdentical stacks (innermost frame first):\n");
    for (size_t i = 0; i < groups->n; i++) {
        const rec_dump_group *g = &groups->v[i];
        const rec_dump_thread *d = g->stack;
        fputs("  ", out);
        print_pids(out, g);
        if ((size_t)g->n_threads > g->n_pids)
            fprintf(out, " (%d threads)", g->n_threads);
        fputs(": ", out);
        for (int k = 0; k < d->depth && k < GROUP_FRAMES; k++) {
            const py_frame_info *f = d->frames[k];
            fprintf(out, "%s%s at %s:%u", k ? " \u2190 " : "", f->function, base_name(f->file),
                    f->line);
        }
        if (d->depth > GROUP_FRAMES)
            fprintf(out, " \u2190 \u2026 (%d frames)", d->depth);
        fputc('\n', out);
    }
}

void rec_dump_text(FILE *out, const rec_dump_proc *procs, int n, const rec_dump_groups *groups)
{
    for (int i = 0; i < n; i++) {
        const rec_dump_proc *p = &procs[i];
        if (i)
            fputc('\n', out);
        /* a free-threaded process without its GIL: why no thread holds it */
        fprintf(out, "Process %d: %s (Python %s%s)\n", (int)p->pid, p->command, p->version,
                p->no_gil ? ", no GIL" : "");
        if (p->torn)
            fprintf(out, "  (thread list changed while it was read, each time; not shown)\n");
        for (int j = 0; j < p->n_threads; j++)
            print_thread(out, &p->threads[j]);
        if (p->natives_unknown)
            fprintf(out, "  (threads without a Python thread state not listed: the OS id of "
                         "a Python thread is unknown)\n");
    }
    if (n > 1 && groups->n > 0)
        print_groups(out, groups);
}
