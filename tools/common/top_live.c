/*
 * tools/common/top_live.c — a trc-top run (contract in top_live.h).
 *
 * The reading thread blocks in the source's read (at most 100 ms at a
 * time, top_source.h) and feeds the model under the model's lock; the
 * screen or the snapshot loop only asks the model for tables, so the
 * reader is never touched by two threads.  The reader outlives both:
 * rows borrow its strings.
 */
#include "tools/common/top_live.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

#include "lib/export/pipeline/pipeline.h"
#include "lib/export/top/top_format.h"
#include "lib/export/top/top_screen.h"

typedef struct job {
    const top_live_opts *o;
    top_model *m;
    trc_reader *r;
    conv_losses losses;
    conv_pipe_result res;
    pthread_mutex_t lock;   /* guards what follows */
    int done;
    int unusable;           /* the input could not be read at all */
    char status[512];       /* the header's note on the input */
    top_context *ctx;       /* the main thread's: status_of sets its recorder line */
} job;

/* Why a --follow input never came (top_source_open). */
#define NOT_CREATED "not created within the --wait time"

static void set_status(job *j, int done, const char *fmt, const char *a, const char *b)
{
    pthread_mutex_lock(&j->lock);
    snprintf(j->status, sizeof j->status, fmt, a, b);
    if (done)
        j->done = 1;
    pthread_mutex_unlock(&j->lock);
}

static void *reader_main(void *arg)
{
    job *j = arg;
    trc_status st;
    j->r = trc_reader_open_callback(top_source_read, j->o->src, j->o->name, &st);
    if (!j->r) {
        j->unusable = 1;
        if (j->o->src->timed_out)
            set_status(j, 1, "%s: %s", j->o->name, NOT_CREATED);
        else
            set_status(j, 1, "%s: %s", j->o->name, trc_status_str(st));
        top_end(j->m);
        return NULL;
    }
    exp_sink *s = exp_sink_new(&exp_sink_top, j->m);
    if (!s) {
        j->unusable = 1;
        set_status(j, 1, "%s%s", "out of memory", "");
        top_end(j->m);
        return NULL;
    }
    conv_pipe_run(j->r, j->o->name, j->o->filter, s, 0, NULL, &j->losses, &j->res);
    exp_sink_free(s);
    top_end(j->m);
    switch (j->res.end) {
    case CONV_PIPE_UNUSABLE: {
        const char *e = trc_reader_error(j->r);
        j->unusable = 1;
        if (j->o->src->timed_out) /* the first read gave up waiting */
            set_status(j, 1, "%s: %s", j->o->name, NOT_CREATED);
        else
            set_status(j, 1, "%s", e && *e ? e : trc_status_str(j->res.status), "");
        break;
    }
    case CONV_PIPE_UNMATCHED: set_status(j, 1, "%s%s", j->res.why, ""); break;
    case CONV_PIPE_SINK_FAILED: j->unusable = 1; set_status(j, 1, "%s%s", "out of memory", ""); break;
    default:
        set_status(j, 1, "%s%s", j->losses.stopped ? "input ended early: " : "input ended",
                   j->losses.stopped ? j->losses.stop_message : "");
    }
    return NULL;
}

/* The header's note, copied under the lock into the caller's buffer;
 * with it (main thread only) the recorder's last message. */
static char shown[512], recorder[512];
static const char *status_of(void *arg)
{
    job *j = arg;
    pthread_mutex_lock(&j->lock);
    if (j->o->src->waiting)
        snprintf(shown, sizeof shown, "waiting for %s to be created", j->o->name);
    else
        snprintf(shown, sizeof shown, "%s", j->status);
    pthread_mutex_unlock(&j->lock);
    top_source_recorder_message(j->o->src, recorder, sizeof recorder);
    j->ctx->recorder = recorder;
    return shown;
}

static int is_done(job *j)
{
    pthread_mutex_lock(&j->lock);
    int d = j->done;
    pthread_mutex_unlock(&j->lock);
    return d;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Snapshots: one at each interval (or only at the end), the last when
 * the input ends.  Returns 0 or -1 when out of memory or a write failed. */
static int snapshots(job *j, top_view *v, top_context *c, char *why, size_t n)
{
    const top_live_opts *o = j->o;
    top_table t;
    memset(&t, 0, sizeof t);
    int rc = 0;
    double next = o->interval_s > 0 ? now_s() + o->interval_s : 0;
    for (;;) {
        int done = is_done(j);
        int due = next > 0 && now_s() >= next;
        if (*o->interrupted || (done && (j->unusable || j->res.end == CONV_PIPE_UNMATCHED)))
            break; /* nothing to show: the caller says why */
        if (done || due) {
            c->status = status_of(j);
            if (top_table_fill(j->m, v, &t) != TRC_OK) {
                snprintf(why, n, "out of memory");
                rc = -1;
                break;
            }
            if (top_write_snapshot(o->out, &t, v, c, o->rows) != 0) {
                snprintf(why, n, "standard output: write failed");
                rc = -1;
                break;
            }
            if (done || o->once)
                break;
            next += o->interval_s;
        }
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    top_table_cleanup(&t);
    return rc;
}

int top_live_run(const top_live_opts *o, char *why, size_t n)
{
    job j;
    memset(&j, 0, sizeof j);
    j.o = o;
    why[0] = 0;
    if (!(j.m = top_new(o->window_ns)) || pthread_mutex_init(&j.lock, NULL) != 0) {
        top_free(j.m);
        top_source_close(o->src, stderr);
        snprintf(why, n, "out of memory");
        return 2;
    }
    snprintf(j.status, sizeof j.status, "reading");
    pthread_t th;
    if (pthread_create(&th, NULL, reader_main, &j) != 0) {
        top_free(j.m);
        pthread_mutex_destroy(&j.lock);
        top_source_close(o->src, stderr);
        snprintf(why, n, "cannot start the reading thread");
        return 2;
    }
    top_view v = o->view;
    top_context c = {(double)o->window_ns / 1e9, o->filters, "", "", o->show_frames, 0};
    j.ctx = &c;
    int rc = o->screen ? top_screen_run(j.m, &v, &c, status_of, &j, o->interrupted, why, n)
                       : snapshots(&j, &v, &c, why, n);
    int user_stopped = !is_done(&j);
    o->src->stop = 1;
    pthread_join(th, NULL);
    int code = top_source_close(o->src, stderr);
    if (o->src->stopped) {
        /* trc-top ended the recorder.  With a program, after q or Ctrl-C
         * on the screen, its status says how it ended (143: the SIGTERM
         * that stopped it); a text snapshot's run stopping it is that
         * run's normal end, as --pid's recording is. */
        code = o->src->program && o->screen ? code : 0;
    }
    if (rc != 0)
        code = 2;
    else if (j.unusable && !user_stopped) {
        /* (stopped first, the input is merely cut short: a --follow file
         * still awaited reads as empty then) */
        snprintf(why, n, "%s", j.status);
        code = 2;
    } else if (code && !o->src->stopped) {
        if (o->src->program)
            snprintf(why, n, "exit status %d from trec: the program's, or trec's own failure",
                     code);
        else
            snprintf(why, n, "the recorder failed (exit status %d)", code);
    } else if (j.res.end == CONV_PIPE_UNMATCHED && !user_stopped) {
        /* The selection stage names the converters' options; trc-top's
         * are --pids and --threads. */
        const char *w = j.res.why;
        if (strncmp(w, "--pid ", 6) == 0)
            snprintf(why, n, "--pids %s", w + 6);
        else if (strncmp(w, "--thread ", 9) == 0)
            snprintf(why, n, "--threads %s", w + 9);
        else
            snprintf(why, n, "%s", w);
        code = 1;
    }
    top_free(j.m);
    trc_reader_free(j.r);
    pthread_mutex_destroy(&j.lock);
    return code;
}
