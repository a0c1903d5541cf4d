/*
 * dump_text.c — `trec --dump`'s text: per process a header line, per
 * thread a line with its id, name and state, then its stack in a Python
 * traceback's words and order (outermost first, innermost last), so
 * that it reads like the traceback the program would print itself.
 * A thread without a Python thread state says so in place of a stack.
 */
#include "lib/rec/dump.h"

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
    for (int i = d->depth - 1; i >= 0; i--) {
        const py_frame_info *f = d->frames[i];
        fprintf(out, "  File \"%s\", line %u, in %s\n", f->file, f->line, f->function);
    }
}

void rec_dump_text(FILE *out, const rec_dump_proc *procs, int n)
{
    for (int i = 0; i < n; i++) {
        const rec_dump_proc *p = &procs[i];
        if (i)
            fputc('\n', out);
        fprintf(out, "Process %d: %s (Python %s)\n", (int)p->pid, p->command, p->version);
        if (p->torn)
            fprintf(out, "  (thread list changed while it was read, each time; not shown)\n");
        for (int j = 0; j < p->n_threads; j++)
            print_thread(out, &p->threads[j]);
        if (p->natives_unknown)
            fprintf(out, "  (threads without a Python thread state not listed: the OS id of "
                         "a Python thread is unknown)\n");
    }
}
