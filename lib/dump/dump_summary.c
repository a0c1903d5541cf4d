/*
 * lib/dump/dump_summary.c — `trc-dump --summary` (see lib/dump/dump.h):
 * what a trace holds, read with the public reader: the recording(s), the
 * number of events of each type (spec §7), threads, processes, samples,
 * the time covered (on the trace clock and as a wall-clock date, which a
 * person can place), each process with its interpreter and the CPython
 * layout the recorder read it with, each thread with its samples, and every loss,
 * recorded or detected (spec §8.8).
 */
#include "lib/dump/dump.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "lib/procname.h"
#include "lib/util/alloc.h"
#include "lib/util/grow.h"

#define N_EVENT_TYPES (TRC_EV_GPU_STREAM + 1)
#define N_LOSS_KINDS (TRC_LOSS_OTHER + 1)
#define MAX_THREAD_LINES 64   /* a summary stays readable; the rest are counted */
#define MAX_PROCESS_LINES 64

/* Samples of one thread, indexed by the reader's thread id. */
typedef struct thread_tally {
    uint64_t samples, on_cpu;
} thread_tally;

typedef struct summary {
    uint64_t by_type[N_EVENT_TYPES];
    uint64_t samples, sample_weight_ns, on_cpu;
    uint64_t loss_count[2][N_LOSS_KINDS];   /* [from_reader][kind] */
    uint64_t loss_events[2][N_LOSS_KINDS];
    uint64_t processes;                     /* PROCESS events (pids may repeat) */
    const char *recorder, *host, *command;  /* of the first segment (borrowed) */
    uint64_t period_ns;
    int64_t wall_ns;                        /* of the first segment; 0 = unknown */
    thread_tally *threads;                  /* [thread id], grown as ids appear */
    size_t n_threads;                       /* capacity of threads */
    int threads_nomem;                      /* a thread's or process's entry could not be kept */
    const trc_process **procs;              /* [process id]; the reader's, latest description */
    size_t n_procs;                         /* capacity of procs */
} summary;

/* Counts a sample for its thread; without memory the summary fails
 * (dump_summary), as it does for any other allocation. */
static void tally_thread(summary *s, const trc_sample *sm)
{
    if (s->threads_nomem)
        return;
    if (trcu_grow((void **)&s->threads, &s->n_threads, sm->thread, sizeof *s->threads) != TRC_OK) {
        s->threads_nomem = 1;
        return;
    }
    s->threads[sm->thread].samples += sm->count;
    if (sm->flags & TRC_SAMPLE_ON_CPU)
        s->threads[sm->thread].on_cpu += sm->count;
}

/* Keeps the reader's process (it is updated in place when the pid is
 * described again, so the summary prints the latest description). */
static void note_process(summary *s, const trc_process *p)
{
    if (s->threads_nomem)
        return;
    if (trcu_grow((void **)&s->procs, &s->n_procs, p->id, sizeof *s->procs) != TRC_OK) {
        s->threads_nomem = 1;
        return;
    }
    s->procs[p->id] = p;
}

static void tally(summary *s, const trc_event *ev)
{
    if ((unsigned)ev->type < N_EVENT_TYPES)
        s->by_type[ev->type]++;
    switch (ev->type) {
    case TRC_EV_SEGMENT:
        if (!s->recorder) {
            s->recorder = ev->u.segment->recorder;
            s->host = ev->u.segment->host;
            s->command = ev->u.segment->command_line;
            s->period_ns = ev->u.segment->period_ns;
            s->wall_ns = ev->u.segment->wall_ns;
        }
        break;
    case TRC_EV_SAMPLE:
        s->samples += ev->u.sample.count;
        s->sample_weight_ns += ev->u.sample.weight_ns * ev->u.sample.count;
        if (ev->u.sample.flags & TRC_SAMPLE_ON_CPU)
            s->on_cpu += ev->u.sample.count;
        tally_thread(s, &ev->u.sample);
        break;
    case TRC_EV_PROCESS:
        note_process(s, ev->u.process);
        break;
    case TRC_EV_LOSS: {
        int fr = ev->u.loss.from_reader ? 1 : 0;
        unsigned k = (unsigned)ev->u.loss.kind < N_LOSS_KINDS ? (unsigned)ev->u.loss.kind
                                                              : (unsigned)TRC_LOSS_OTHER;
        s->loss_count[fr][k] += ev->u.loss.count;
        s->loss_events[fr][k]++;
        break;
    }
    default:
        break;
    }
}

static void print_losses(FILE *out, const summary *s)
{
    uint64_t total = 0;
    int fr;
    unsigned k;

    for (fr = 0; fr < 2; fr++)
        for (k = 0; k < N_LOSS_KINDS; k++)
            total += s->loss_events[fr][k];
    fprintf(out, "losses: %" PRIu64 "\n", total);
    for (fr = 0; fr < 2; fr++)
        for (k = 1; k < N_LOSS_KINDS; k++)
            if (s->loss_events[fr][k])
                fprintf(out, "  %-16s %10" PRIu64 " in %" PRIu64 " report%s (%s)\n",
                        dump_loss_name((trc_loss_kind)k), s->loss_count[fr][k],
                        s->loss_events[fr][k], s->loss_events[fr][k] == 1 ? "" : "s",
                        fr ? "detected by the reader" : "recorded");
}

/* The recording's start as a UTC date, e.g. 2026-11-26 17:50:12.345 UTC:
 * trace-clock times are seconds since boot and say nothing to a person. */
static void print_wall_start(FILE *out, int64_t wall_ns)
{
    struct tm tm;
    time_t secs = (time_t)(wall_ns / 1000000000);
    if (wall_ns <= 0 || !gmtime_r(&secs, &tm)) {
        fputs("started: unknown (no wall-clock time recorded)\n", out);
        return;
    }
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", &tm);
    fprintf(out, "started: %s.%03d UTC\n", date, (int)(wall_ns % 1000000000 / 1000000));
}

/* One line per thread that has a name or samples, in order of first
 * appearance: what a two-thread program did is seen at a glance. */
static void print_threads(FILE *out, const summary *s, trc_reader *r)
{
    uint32_t n = trc_reader_thread_count(r), shown = 0, more = 0;
    fprintf(out, "threads: %" PRIu32 "\n", n);
    for (uint32_t id = 1; id <= n; id++) {
        const trc_thread *t = trc_reader_thread(r, id);
        const thread_tally *c = id < s->n_threads ? &s->threads[id] : NULL;
        if (!t)
            continue;
        if (shown == MAX_THREAD_LINES) {
            more++;
            continue;
        }
        shown++;
        fprintf(out, "  pid %" PRId64 " tid %" PRId64 " ", t->pid, t->tid);
        dump_quote(out, t->name ? t->name : "", t->name ? strlen(t->name) : 0, 80);
        fprintf(out, ": %" PRIu64 " samples, %" PRIu64 " on cpu\n", c ? c->samples : 0,
                c ? c->on_cpu : 0);
    }
    if (more)
        fprintf(out, "  ... and %" PRIu32 " more\n", more);
}

static void print_q(FILE *out, const char *s)
{
    dump_quote(out, s ? s : "", s ? strlen(s) : 0, 200);
}

/* One line per process, in order of first appearance: its name, its
 * interpreter, and where the recorder's CPython layout came from (spec
 * §7.5), which is what a user who sends a trace is asked about. */
static void print_processes(FILE *out, const summary *s)
{
    uint32_t shown = 0, more = 0;
    char name[PROCNAME_MAX];
    fprintf(out, "processes: %" PRIu64 "\n", s->by_type[TRC_EV_PROCESS]);
    for (size_t id = 1; id < s->n_procs; id++) {
        const trc_process *p = s->procs[id];
        if (!p)
            continue;
        if (shown == MAX_PROCESS_LINES) {
            more++;
            continue;
        }
        shown++;
        procname_base(p, name, sizeof name);
        fprintf(out, "  pid %" PRId64 " ", p->pid);
        print_q(out, name);
        fputs(": interpreter ", out);
        print_q(out, p->interpreter);
        fputs(", layout ", out);
        print_q(out, p->layout);
        fputc('\n', out);
    }
    if (more)
        fprintf(out, "  ... and %" PRIu32 " more\n", more);
}

static void print_summary(FILE *out, const summary *s, trc_reader *r)
{
    trc_reader_stats st;
    unsigned t;

    trc_reader_get_stats(r, &st);
    fprintf(out, "input: %s\n", trc_reader_name(r));
    fprintf(out, "bytes: %" PRIu64 "\n", st.bytes);
    fprintf(out, "segments: %" PRIu64 "\n", st.segments);
    fprintf(out, "chunks: %" PRIu64 " (%" PRIu64 " damaged)\n", st.chunks, st.damaged_chunks);
    fprintf(out, "records: %" PRIu64 " (%" PRIu64 " skipped)\n", st.records, st.skipped_records);
    if (s->recorder) {
        fputs("recorder: ", out);
        dump_quote(out, s->recorder, strlen(s->recorder), 200);
        fputs("\nhost: ", out);
        dump_quote(out, s->host, strlen(s->host), 200);
        fputs("\ncommand: ", out);
        dump_quote(out, s->command, strlen(s->command), 200);
        fprintf(out, "\nperiod: %" PRIu64 " ns\n", s->period_ns);
    }
    fputs("time: ", out);
    dump_time(out, st.first_ns);
    fputs(" .. ", out);
    dump_time(out, st.last_ns);
    fputs(" (", out);
    dump_time(out, (int64_t)((uint64_t)st.last_ns - (uint64_t)st.first_ns)); /* wraps (spec §2.6), no UB */
    fputs(" s)\n", out);
    if (s->recorder)
        print_wall_start(out, s->wall_ns);
    print_processes(out, s);
    print_threads(out, s, r);
    fprintf(out, "frames: %" PRIu32 "\n", trc_reader_frame_count(r));
    fprintf(out, "stacks: %" PRIu32 "\n", trc_reader_stack_count(r));
    fprintf(out, "samples: %" PRIu64 " in %" PRIu64 " events, %" PRIu64 " on cpu, weight ",
            s->samples, s->by_type[TRC_EV_SAMPLE], s->on_cpu);
    dump_time(out, (int64_t)s->sample_weight_ns);
    fputs(" s\n", out);
    fputs("events:\n", out);
    for (t = 1; t < N_EVENT_TYPES; t++)
        if (s->by_type[t])
            fprintf(out, "  %-16s %10" PRIu64 "\n", dump_event_name((trc_event_type)t),
                    s->by_type[t]);
    print_losses(out, s);
}

int dump_summary(trc_reader *r, FILE *out, const dump_opts *o)
{
    summary s;
    const trc_event *ev;
    trc_status st;
    uint64_t events = 0, detected = 0;
    int verdict;

    memset(&s, 0, sizeof s);
    while ((st = trc_reader_next(r, &ev)) == TRC_OK) {
        events++;
        tally(&s, ev);
        if (ev->type == TRC_EV_LOSS && ev->u.loss.from_reader) {
            const char *d = ev->u.loss.detail;
            char line[1024];
            detected++;
            snprintf(line, sizeof line, "%s: offset 0x%" PRIx64 ": %s", o->name,
                     ev->u.loss.offset, d && *d ? d : dump_loss_name(ev->u.loss.kind));
            if (o->problem)
                o->problem(o->problem_ctx, line);
        }
    }
    if (st != TRC_ERR_EOF && o->problem)
        o->problem(o->problem_ctx, st == TRC_ERR_NOMEM ? "out of memory" : trc_reader_error(r));
    verdict = dump_status_verdict(st, events > 0);
    if (verdict == DUMP_UNUSABLE && events == 0) {
        trc_free(s.threads);
        trc_free(s.procs);
        return verdict;
    }
    if (verdict == DUMP_OK && detected)
        verdict = DUMP_DAMAGED;
    if (s.threads_nomem) {
        /* a summary missing its thread or process lines would pass for
         * a whole one; said once, even when the reader ran out too */
        if (o->problem && st != TRC_ERR_NOMEM)
            o->problem(o->problem_ctx, "out of memory");
        trc_free(s.threads);
        trc_free(s.procs);
        return DUMP_UNUSABLE;
    }
    print_summary(out, &s, r);
    trc_free(s.threads);
    trc_free(s.procs);
    return verdict;
}
