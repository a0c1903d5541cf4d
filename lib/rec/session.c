/*
 * session.c — one recording from start to end (rec_run, contract in
 * rec.h): start or attach, open the output, then tick until the program
 * ends, the duration is over or (with --pid) the user interrupts; finish
 * the trace; for a started program, wait for it and pass on its status.
 *
 * The loop is single-threaded.  Each tick: wake at the pacer's deadline,
 * count lateness, reap children, step every target (attach retries,
 * samples, RSS, exit checks), look for new descendants every 50 ms,
 * write pending loss counts every second, and let the writer close its
 * chunk when it is 100 ms old (trc_writer_tick) so a pipe reader sees
 * data live and a killed recorder loses at most that much.
 *
 * A started program's stdout: with -o - (or -o naming trec's own
 * stdout, rec_output_is_stdout) the trace owns trec's stdout,
 * so the program's stdout is trec's stderr (spawn.c); otherwise the
 * program keeps the terminal as if trec were not there.
 */
#include "lib/rec/rec_int.h"
#include "lib/rec/stopper.h"
#include "lib/gpu/trec_gpu.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ATTACH_WAIT_NS 2000000000LL  /* --pid: wait this long for a starting runtime */
#define SCAN_NS 50000000LL           /* descendants: 20 Hz */
#define LOSS_FLUSH_NS 1000000000LL   /* loss records: 1 Hz */
#define REAP_NS 100000000LL         /* waitpid without SIGCHLD: 10 Hz */

typedef struct session {
    const rec_config *cfg;
    rec_result *res;
    int launched;
    pid_t root_pid;
    rec_child child;
    rec_targets targets;
    rec_target *root;
    int root_reaped;
    int root_status;         /* wait status once reaped */
    rec_output out;
    trc_writer *w;
    int recording;           /* 0 once the trace is finished */
    rec_pacer pacer;
    rec_lossacc late, missed;
    int64_t start_ns, next_scan_ns, next_loss_ns;
    int64_t next_reap_ns;     /* waitpid without a SIGCHLD (a safety net) */
    uint64_t samples, invalid, ticks;
    uint32_t max_wid;
    int write_failed;
    rec_selftime cost;       /* hist NULL when not measuring */
    char gpu_dir[4096];      /* side traces of the CUPTI injection; "" = GPU off */
    char gpu_warning[1024];  /* why GPU recording is off, said once the program runs */
    trec_gpu_nvml *nvml;     /* NULL = no NVML counters */
    rec_stopper *stopper;    /* --blocking; NULL otherwise */
    int saw_python;          /* some process of the tree was attached to */
    int warned_any;          /* a warning about an unsampled process was given */
} session;

static void say(const session *s, rec_msg_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(const session *s, rec_msg_level level, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (s->cfg->message)
        s->cfg->message(s->cfg->message_ctx, level, buf);
}

static trc_writer *open_writer(session *s, trc_status *st)
{
    char rate[32], pid[32];
    snprintf(rate, sizeof rate, "%g", s->cfg->rate_hz);
    snprintf(pid, sizeof pid, "%d", (int)s->root_pid);
    trc_kv meta[] = {
        {"trec.mode", s->launched ? "launch" : "attach"},
        {"trec.rate_hz", rate},
        {"trec.pid", pid},
        {"trec.subprocesses", s->cfg->subprocesses ? "1" : "0"},
        {"trec.gil", s->cfg->gil ? "1" : "0"},
        /* spec [R-HDR-5]: no CUDA records will follow (converters then
         * keep no sample history for pairing them) */
        {"gpu.activity", s->gpu_dir[0] ? "cupti" : "off"},
        {"trec.stdout", s->launched && s->out.kind == REC_OUT_STDOUT
                            ? "program stdout sent to stderr"
                            : "program stdout untouched"},
    };
    trc_writer_options o;
    memset(&o, 0, sizeof o);
    o.recorder = "trec " TRC_VERSION_STRING;
    o.command_line = s->cfg->command_line;
    o.metadata = meta;
    o.n_metadata = sizeof meta / sizeof meta[0];
    o.period_ns = (uint64_t)(1e9 / s->cfg->rate_hz);
    o.compression_level = -1;
    return trc_writer_open_callback(rec_output_write, &s->out, &o, st);
}

/* Report a writer failure once and stop recording.  A started program
 * is not harmed: it runs to its end and trec waits for it (rec_run
 * gives the exit status).  Nothing more is written or buffered: the
 * output refuses further writes and the loop ends. */
static void writer_failed(session *s, trc_status st)
{
    if (!s->recording)
        return;
    const rec_output *o = &s->out;
    const char *then = s->launched ? "recording stopped, the program runs on" : "recording stopped";
    if (o->err) {
        char held[128], cut[160] = "";
        if (o->last_ok_ns)
            snprintf(held, sizeof held,
                     "the trace holds the first %.2f s (up to its last complete chunk)",
                     (double)(o->last_ok_ns - s->start_ns) / 1e9);
        else
            snprintf(held, sizeof held, "the trace is empty");
        if (o->cut_failed)
            snprintf(cut, sizeof cut, " (its torn last chunk could not be cut off: %s)",
                     strerror(o->cut_failed));
        say(s, REC_MSG_ERROR, "%s: write failed after %llu bytes: %s; %s%s; %s", o->path,
            (unsigned long long)o->good, strerror(o->err), held, cut, then);
    } else {
        say(s, REC_MSG_ERROR, "%s: writing the trace failed: %s; %s", o->path,
            trc_status_str(st), then);
    }
    s->recording = 0;
    s->write_failed = 1;
}

static void flush_losses(session *s)
{
    trc_status st = rec_loss_flush(&s->late, s->w, "samples taken over half a period late");
    if (st == TRC_OK)
        st = rec_loss_flush(&s->missed, s->w, "ticks skipped: the recorder fell behind");
    for (size_t i = 0; st == TRC_OK && i < s->targets.n; i++)
        st = rec_loss_flush(&s->targets.v[i]->invalid, s->w, "torn or inconsistent stacks");
    if (st != TRC_OK)
        writer_failed(s, st);
}

/* Collect exited children: the root's status, and when following
 * descendants the exit of any of them re-parented to trec (the
 * subreaper): its exact status, where a descendant reaped by its own
 * parent gives only what its zombie showed (check_process, target.c).  With
 * --blocking, trec traces the threads it reads: their ptrace stops and
 * exits come through waitpid too, and rec_stopper_reap answers them on
 * the way (so this runs every tick then, attached or not). */
static void reap(session *s, int64_t now_ns)
{
    if (!s->launched && !s->stopper)
        return;
    for (;;) {
        int status;
        pid_t which = s->cfg->subprocesses || !s->launched ? -1 : s->root_pid;
        pid_t pid = rec_stopper_reap(s->stopper, which, &status);
        if (pid <= 0)
            break;
        rec_target *t = rec_targets_find(&s->targets, pid);
        if (t && s->recording) {
            trc_status st = rec_target_exited(t, s->w, now_ns, status);
            if (st != TRC_OK)
                writer_failed(s, st);
        } else if (t) {
            rec_target_exited(t, NULL, now_ns, status);
        }
        if (pid == s->root_pid && s->launched) {
            s->root_reaped = 1;
            s->root_status = status;
        }
    }
}

/* Say once per process that stacks were cut (target.c, "Depth"). */
static void warn_truncated(session *s, rec_target *t)
{
    if (!t->truncated || t->trunc_warned)
        return;
    t->trunc_warned = 1;
    say(s, REC_MSG_WARN, "pid %d: a stack deeper than %d frames: recorded as its innermost %d "
        "frames under a %s root frame", (int)t->pid, REC_MAX_DEPTH - 1, REC_MAX_DEPTH - 1,
        rec_truncated_name);
}

/* At the end: why a process that was to be recorded has no samples,
 * when the warning during the run did not come (it comes after the
 * attach grace period, which a short program does not outlive); and,
 * with --pid, that the target's exit ended the recording. */
static void say_ending(session *s)
{
    rec_target *r = s->root;
    if (!r)
        return;
    int not_ready = r->last_err == PY_ERR_NOT_READY || r->last_err == PY_ERR_GONE;
    if (s->cfg->subprocesses && !s->saw_python && !s->warned_any && s->samples == 0 &&
        !(s->launched && not_ready)) {
        /* followed quietly through processes that were not Python, and
         * none in the tree ever was: say so once, naming the command */
        say(s, REC_MSG_WARN, "no process in the tree of '%.300s' was Python%s%s%s; no samples "
            "recorded", r->cmdline[0] ? r->cmdline : r->exe, r->err[0] ? " (" : "", r->err,
            r->err[0] ? ")" : "");
    } else if (s->launched && !r->warned && s->samples == 0 && r->err[0] &&
        (r->last_err == PY_ERR_NOT_PYTHON || r->last_err == PY_ERR_VERSION ||
         r->last_err == PY_ERR_PERM))
        say(s, REC_MSG_WARN, "%s; no samples recorded", r->err);
    else if (s->launched && s->samples == 0 && not_ready)
        /* it ended while its interpreter was still starting: say what
         * the last look saw, or a short program's empty trace is a mystery */
        say(s, REC_MSG_WARN, "the program ended before trec could read its interpreter%s%s; "
            "no samples recorded", r->err[0] ? ": " : "", r->err);
    if (!s->launched && r->state == REC_T_ENDED)
        say(s, REC_MSG_NOTE, "pid %d exited%s; recording stopped", (int)r->pid,
            r->pid_reused ? " and its pid already belongs to another process, which was "
                            "not recorded"
                          : "");
}

/* Warn once about a process that cannot be sampled.  While descendants
 * are followed, one that is simply not Python (a shell, mpirun, env) is
 * a step on the way to the Python processes: no warning for it; the end
 * says so if no process of the tree was Python (say_ending). */
static void warn_unsampled(session *s, rec_target *t)
{
    if (t->state != REC_T_NOT_PYTHON || t->warned)
        return;
    int unreadable_python = t->last_err == PY_ERR_PERM || t->last_err == PY_ERR_VERSION;
    if (s->cfg->subprocesses && !unreadable_python)
        return;
    t->warned = 1;
    s->warned_any = 1;
    if (t->is_root && s->launched) {
        say(s, REC_MSG_WARN, "%s; running it to completion without samples",
            t->err[0] ? t->err : "not a Python program");
    } else if (t->last_err == PY_ERR_PERM || t->last_err == PY_ERR_VERSION) {
        say(s, REC_MSG_WARN, "subprocess %d not recorded: %s", (int)t->pid, t->err);
    }
}

/* What to do when ptrace is refused (--blocking), in one line: a
 * process has one tracer at a time, so name the one it has (a debugger,
 * strace) rather than privileges trec may well hold already. */
static void say_refused(const session *s, rec_msg_level level, pid_t pid, int err,
                        const char *then)
{
    pid_t tracer = err == EPERM ? rec_proc_tracer(pid) : 0;
    if (tracer > 0) {
        char comm[64] = "";
        (void)rec_proc_comm(tracer, tracer, comm, sizeof comm);
        say(s, level, "pid %d: --blocking cannot stop its threads: pid %d%s%s%s already traces "
            "it (a process has one tracer at a time: detach that one first); %s", (int)pid,
            (int)tracer, comm[0] ? " (" : "", comm, comm[0] ? ")" : "", then);
        return;
    }
    say(s, level, "pid %d: --blocking cannot stop its threads: ptrace: %s (another debugger "
        "or profiler may be attached to it, or ptrace is restricted: run trec as the target's "
        "user with kernel.yama.ptrace_scope=0, or with CAP_SYS_PTRACE); %s", (int)pid,
        strerror(err), then);
}

/* chld: a SIGCHLD arrived since the last look.  waitpid only then (and
 * 10 times a second anyway): a system call per tick saved.  With
 * --blocking every tick: a signal for the program waits for trec there. */
static void tick(session *s, const rec_tick *tk, int chld)
{
    int64_t now = tk->now_ns;
    s->ticks++;
    if (tk->late)
        rec_loss_add(&s->late, 1, now);
    rec_loss_add(&s->missed, tk->missed, now);
    if (chld || now >= s->next_reap_ns || s->stopper) {
        s->next_reap_ns = now + REAP_NS;
        reap(s, now);
    }
    if (!s->recording)
        return;
    if (s->nvml) {
        trc_status gst = trec_gpu_nvml_drain(s->nvml, s->w);
        if (gst != TRC_OK) {
            writer_failed(s, gst);
            return;
        }
    }
    /* the grid point the tick stands for: its deadline, moved on past
     * the ticks it skipped (pace.c) */
    int64_t grid = now - tk->lateness_ns + (int64_t)tk->missed * s->pacer.period_ns;
    rec_tick_ctx ctx = {.w = s->w, .now_ns = now, .grid_ns = grid,
                        .gil = s->cfg->gil, .stopper = s->stopper,
                        .targets = &s->targets, .cfg = s->cfg};
    int64_t cpu0 = s->cost.hist ? rec_thread_cpu_ns() : 0;
    if (s->cfg->subprocesses)
        rec_children_poll_exits(&s->targets, now);
    for (size_t i = 0; i < s->targets.n; i++) {
        rec_target *t = s->targets.v[i];
        trc_status st = rec_target_step(t, &ctx);
        if (st != TRC_OK) {
            writer_failed(s, st);
            return;
        }
        s->saw_python |= t->state == REC_T_ATTACHED;
        warn_unsampled(s, t);
        warn_truncated(s, t);
    }
    pid_t rpid;
    int rerr;
    while (rec_stopper_take_refusal(s->stopper, &rpid, &rerr))
        say_refused(s, REC_MSG_WARN, rpid, rerr, "its stacks are read without stopping it");
    if (s->cost.hist && ctx.samples)
        rec_selftime_add(&s->cost, (rec_thread_cpu_ns() - cpu0) / (int64_t)ctx.samples);
    s->samples += ctx.samples;
    if (ctx.max_wid > s->max_wid)
        s->max_wid = ctx.max_wid;
    s->invalid += ctx.invalid;
    if (s->cfg->subprocesses && now >= s->next_scan_ns) {
        s->next_scan_ns = now + SCAN_NS;
        if (rec_children_scan(&s->targets, s->launched ? getpid() : 0, now) < 0)
            say(s, REC_MSG_WARN, "out of memory: not following new subprocesses");
    }
    if (now >= s->next_loss_ns) {
        s->next_loss_ns = now + LOSS_FLUSH_NS;
        flush_losses(s);
    }
    if (s->recording) {
        trc_status st = trc_writer_tick(s->w, now);
        if (st != TRC_OK)
            writer_failed(s, st);
    }
}

static int should_stop(session *s, int64_t now_ns)
{
    if (s->launched && s->root_reaped)
        return 1;
    if (!s->launched && (rec_signals_stop_requested() || s->root->state == REC_T_ENDED))
        return 1;
    if (s->cfg->duration_ns > 0 && now_ns - s->start_ns >= s->cfg->duration_ns)
        return 1;
    return !s->recording;
}

/* Descendants that ended since their last check (often reaped by their
 * parent just before the program exited): record that they ended, with
 * an unknown status, rather than leave them open. */
static void ended_unseen(session *s)
{
    if (!s->recording)
        return;
    int64_t now = trc_now_ns();
    for (size_t i = 0; i < s->targets.n; i++) {
        rec_target *t = s->targets.v[i];
        if (t->state == REC_T_ENDED || !t->process_written || t->launched)
            continue;
        rec_stat st;
        int gone = rec_proc_stat(t->pid, 0, &st) != 0 || st.starttime != t->starttime;
        if (!gone && st.state != 'Z' && st.state != 'X')
            continue;
        trc_status rc = rec_target_exited(t, s->w, now, gone ? -1 : st.exit_code);
        if (rc != TRC_OK) {
            writer_failed(s, rc);
            return;
        }
    }
}

/* Remove the side directory and what the injection wrote there. */
static void drop_gpu_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d)))
            if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                (void)unlinkat(dirfd(d), de->d_name, 0);
        closedir(d);
    }
    (void)rmdir(dir);
}

/* trec_gpu_merge's question: has this process ended (gone, or a zombie)? */
static int process_ended(int64_t pid, void *ctx)
{
    (void)ctx;
    rec_stat st;
    return rec_proc_stat((pid_t)pid, 0, &st) != 0 || st.state == 'Z' || st.state == 'X';
}

/* The injected CUPTI part wrote one side trace per process; they follow
 * the main segment in the output (concatenated segments are one trace).
 * After a write failure the output takes nothing more: they are removed
 * (on a full disk, keeping them would only make it fuller). */
static void merge_gpu(session *s)
{
    if (!s->gpu_dir[0])
        return;
    if (s->write_failed || !s->out.committed) {
        drop_gpu_dir(s->gpu_dir);
        s->gpu_dir[0] = '\0';
        return;
    }
    trec_gpu_merge_result mr;
    memset(&mr, 0, sizeof mr);
    if (trec_gpu_merge(s->out.fd, s->gpu_dir, process_ended, NULL, &mr) != 0)
        say(s, REC_MSG_WARN, "GPU records not merged: %s", mr.why);
    if (mr.sealed)
        say(s, REC_MSG_WARN,
            "pid %lld%s ended without closing its GPU trace (os._exit, a signal or a crash): "
            "the GPU records it had not yet flushed (at most the last 0.2 s) are lost, "
            "and the trace says so",
            (long long)mr.sealed_pid, mr.sealed > 1 ? " and others" : "");
    if (mr.seal_failed)
        say(s, REC_MSG_WARN, "a GPU trace left open by its process could not be closed: %s",
            mr.seal_why);
    s->out.good += mr.bytes;
    s->gpu_dir[0] = '\0';
}

/* GPU recording for a program trec starts: the CUDA driver loads the
 * injection library named in the environment the program inherits.  An
 * attached process (--pid) initialised CUDA long ago: NVML counters only. */
static void gpu_setup(session *s)
{
    const rec_config *cfg = s->cfg;
    if (cfg->no_gpu)
        return;
    if (s->launched && trec_gpu_injection_path()) {
        char why[512];
        /* beside the output when it is a file, else under $TMPDIR */
        const char *near = rec_output_is_file(cfg->output) ? cfg->output : NULL;
        if (trec_gpu_side_dir_new(near, s->gpu_dir, sizeof s->gpu_dir) != 0) {
            snprintf(s->gpu_warning, sizeof s->gpu_warning,
                     "GPU recording off: cannot create a directory for its records: %s",
                     strerror(errno));
            s->gpu_dir[0] = '\0';
        } else if (trec_gpu_setup_env(s->gpu_dir, why, sizeof why) != 0) {
            snprintf(s->gpu_warning, sizeof s->gpu_warning, "%s", why);
            rmdir(s->gpu_dir);
            s->gpu_dir[0] = '\0';
        }
    }
    s->nvml = trec_gpu_nvml_start(cfg->gpu_rate_hz, NULL);
}

/* Close the trace; fills the result's figures. */
static void finish_trace(session *s)
{
    if (!s->w)
        return;
    int64_t end = trc_now_ns();
    if (s->recording)
        flush_losses(s);
    if (s->nvml && s->recording)
        (void)trec_gpu_nvml_drain(s->nvml, s->w);
    trec_gpu_nvml_stop(s->nvml);
    s->nvml = NULL;
    trc_status st = trc_writer_close(s->w, end);
    s->w = NULL;
    if (st != TRC_OK && s->recording)
        writer_failed(s, st);
    s->recording = 0;
    merge_gpu(s);
    rec_result *r = s->res;
    r->trace_written = s->out.committed;
    r->samples = s->samples;
    r->invalid = s->invalid;
    r->ticks = s->ticks;
    r->late_ticks = s->late.total;
    r->missed_ticks = s->missed.total;
    r->duration_ns = end - s->start_ns;
    r->bytes = s->out.good;
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        r->cpu_ns = ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
                    ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
    rec_stopper_stats ss;
    rec_stopper_get_stats(s->stopper, &ss);
    r->stops = ss.stops;
    r->slow_stops = ss.slow;
    if (s->cost.n) {
        r->cost_n = s->cost.n;
        r->cost_p50_ns = rec_selftime_quantile(&s->cost, 0.50);
        r->cost_p90_ns = rec_selftime_quantile(&s->cost, 0.90);
        r->cost_p99_ns = rec_selftime_quantile(&s->cost, 0.99);
        r->cost_max_ns = s->cost.max_ns;
    }
    r->threads = s->max_wid; /* writer thread ids are dense and per (pid, tid) */
    r->processes = 0;
    for (size_t i = 0; i < s->targets.n; i++) {
        r->processes += s->targets.v[i]->process_records > 0;
        r->quiet_samples += s->targets.v[i]->quiet_samples;
        r->torn_retries += rec_target_torn_retries(s->targets.v[i]);
    }
    r->switch_threads = rec_switches_opened();
}

/* --pid: attach before anything is written, so a target that cannot be
 * recorded leaves no file behind.  With --subprocesses a process that is
 * not Python (a shell, a launcher) is followed for the Python processes
 * it starts: its first tick gives up on it and writes its PROCESS record
 * (target.c).  Returns 0 or -1 (message given). */
static int attach_existing(session *s)
{
    int64_t t0 = trc_now_ns();
    for (;;) {
        py_status ps = rec_target_try_attach(s->root, trc_now_ns());
        if (ps == PY_OK) {
            s->saw_python = 1;
            rec_target_note_layout(s->root, s->cfg);
            return 0;
        }
        if (ps == PY_ERR_NOT_PYTHON && s->cfg->subprocesses) {
            s->root->give_up_ns = trc_now_ns();
            return 0;
        }
        if (ps != PY_ERR_NOT_READY || trc_now_ns() - t0 > ATTACH_WAIT_NS ||
            rec_signals_stop_requested()) {
            say(s, REC_MSG_ERROR, "%s", s->root->err[0] ? s->root->err : "cannot read the process");
            return -1;
        }
        usleep(10000);
    }
}

static int wait_status_to_exit(int status)
{
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 1;
}

/* Block until the started program ends (after the trace is finished
 * early by --duration or a write error). */
static void wait_root(session *s)
{
    /* --blocking: threads not let go of yet (stuck in the kernel) must
     * still have their stops answered while the program runs on */
    while (!s->root_reaped && s->stopper && rec_stopper_detach_all(s->stopper) > 0) {
        reap(s, trc_now_ns());
        usleep(1000);
    }
    while (!s->root_reaped) {
        int status;
        pid_t pid = waitpid(s->root_pid, &status, 0);
        if (pid == s->root_pid) {
            s->root_reaped = 1;
            s->root_status = status;
        } else if (pid < 0 && errno != EINTR) {
            break;
        }
    }
}

static int start(session *s)
{
    const rec_config *cfg = s->cfg;
    char err[1024];
    int to_stderr = rec_output_is_stdout(cfg->output);
    if (s->launched) {
        /* descendants whose parent exits come to trec, not to init:
         * still found by the scan, and their exit status known */
        if (cfg->subprocesses)
            prctl(PR_SET_CHILD_SUBREAPER, 1);
        gpu_setup(s); /* before the fork: the program inherits the environment */
        if (rec_spawn_prepare(cfg->argv, to_stderr, &s->child, err, sizeof err) != 0) {
            say(s, REC_MSG_ERROR, "%s", err);
            return 2;
        }
        s->root_pid = s->child.pid;
        rec_signals_install(s->root_pid);
    } else {
        s->root_pid = cfg->pid;
        rec_signals_install(0);
        if (kill(cfg->pid, 0) != 0 && errno == ESRCH) {
            say(s, REC_MSG_ERROR, "no process with pid %d", (int)cfg->pid);
            return 2;
        }
        s->root = rec_targets_add(&s->targets, s->root_pid, 1, 0, trc_now_ns());
        if (!s->root) {
            say(s, REC_MSG_ERROR, "out of memory");
            return 2;
        }
        if (attach_existing(s) != 0)
            return 2;
        int e = rec_stopper_seize(s->stopper, s->root_pid, s->root_pid);
        if (e) {
            say_refused(s, REC_MSG_ERROR, s->root_pid, e, "not recorded (drop --blocking to "
                        "record it without stopping it)");
            return 2;
        }
        gpu_setup(s);
    }

    /* Under a hidden name until the recording has started (output.c):
     * a start that fails from here on leaves the destination as it was. */
    if (rec_output_open(&s->out, cfg->output, s->root_pid, err, sizeof err) != 0) {
        say(s, REC_MSG_ERROR, "%s", err);
        return 2;
    }
    snprintf(s->res->output_path, sizeof s->res->output_path, "%s", s->out.path);
    trc_status st;
    s->w = open_writer(s, &st);
    if (!s->w) {
        say(s, REC_MSG_ERROR, "%s: cannot start the trace: %s", s->out.path,
            trc_status_str(st));
        return 2;
    }
    s->recording = 1;

    if (s->launched) {
        int e = rec_spawn_release(&s->child);
        if (e) {
            say(s, REC_MSG_ERROR, "cannot run '%s': %s", cfg->argv[0], strerror(e));
            trc_writer_close(s->w, 0); /* writes nothing: not committed */
            s->w = NULL;
            s->recording = 0;
            wait_root(s);
            return e == ENOENT ? 127 : 126;
        }
        s->root = rec_targets_add(&s->targets, s->root_pid, 1, 1, trc_now_ns());
        if (!s->root) {
            say(s, REC_MSG_ERROR, "out of memory");
            s->recording = 0;
            return -1;
        }
    }
    /* Only now, when the program runs: a start that fails (no such
     * program, an output that cannot be created) says that alone, not
     * the GPU warning the same cause (a missing directory) gave first. */
    if (s->gpu_warning[0])
        say(s, REC_MSG_WARN, "%s", s->gpu_warning);
    /* Started (exec succeeded, or attached): the trace takes its name
     * before its first chunk.  Failing that, the program still runs. */
    if (rec_output_commit(&s->out, err, sizeof err) != 0) {
        say(s, REC_MSG_ERROR, "%s", err);
        s->recording = 0;
        s->write_failed = 1;
    }
    return 0;
}

/* A sample taken late is a sample of the wrong moment, and on a busy
 * machine the scheduler can delay the recorder's wake-up by milliseconds.
 * Its CPU use is a few percent, so it asks for a higher priority (nice
 * -10 from where it is) when allowed (root, CAP_SYS_NICE), after the
 * program was forked: the program's priority is untouched.  Failure is
 * fine and silent. */
static void raise_priority(void)
{
    errno = 0;
    int cur = getpriority(PRIO_PROCESS, 0);
    if (errno == 0 && cur > -10)
        (void)setpriority(PRIO_PROCESS, 0, cur - 10 < -20 ? -20 : cur - 10);
}

int rec_run(const rec_config *cfg, rec_result *res)
{
    session s;
    memset(&s, 0, sizeof s);
    memset(res, 0, sizeof *res);
    s.cfg = cfg;
    s.res = res;
    s.launched = cfg->pid <= 0;
    s.root_pid = -1;
    s.child.pid = -1;
    s.child.go_fd = s.child.status_fd = -1;
    s.out.fd = -1;
    int status = 2;

    /* the default 50 us timer slack would be most of a 10 kHz period */
    prctl(PR_SET_TIMERSLACK, 1UL);

    if (cfg->self_timing)
        (void)rec_selftime_init(&s.cost); /* without memory: no figures */
    if (cfg->blocking && !(s.stopper = rec_stopper_new())) {
        say(&s, REC_MSG_ERROR, "out of memory");
        goto out;
    }
    int rc = start(&s);
    if (rc > 0) {
        status = rc;
        goto out;
    }

    raise_priority();
    s.start_ns = trc_now_ns();
    rec_pacer_init(&s.pacer, (int64_t)(1e9 / cfg->rate_hz), s.start_ns,
                   (uint64_t)s.start_ns ^ ((uint64_t)getpid() << 32));
    s.pacer.spin = cfg->spin;
    rec_loss_init(&s.late, TRC_LOSS_SAMPLES_LATE, -1);
    rec_loss_init(&s.missed, TRC_LOSS_SAMPLES_MISSED, -1);
    s.next_scan_ns = s.start_ns;
    s.next_loss_ns = s.start_ns + LOSS_FLUSH_NS;

    while (s.recording) {
        rec_tick tk;
        if (!rec_pacer_wait(&s.pacer, &tk)) {
            int64_t now = trc_now_ns();
            if (rec_signals_take_sigchld())
                reap(&s, now);
            if (should_stop(&s, now))
                break;
            continue;
        }
        tick(&s, &tk, rec_signals_take_sigchld());
        if (should_stop(&s, tk.now_ns))
            break;
    }
    /* a root that exited during the last tick: record its end */
    reap(&s, trc_now_ns());
    ended_unseen(&s);
    say_ending(&s);
    finish_trace(&s);
    /* let go of every thread before waiting for the program: exits met
     * while doing so are queued, collected by reap */
    if (s.stopper) {
        (void)rec_stopper_detach_all(s.stopper);
        reap(&s, trc_now_ns());
    }

    /* A trace cut short must not look like success: 1 then, unless the
     * program's own status already says something went wrong. */
    if (s.launched) {
        wait_root(&s);
        status = s.root_reaped ? wait_status_to_exit(s.root_status) : 1;
        if (status == 0 && s.write_failed)
            status = 1;
    } else {
        status = s.write_failed ? 1 : 0;
    }
out:
    trec_gpu_nvml_stop(s.nvml);
    if (s.w)
        trc_writer_close(s.w, 0);
    if (s.gpu_dir[0]) /* never started: nothing was written there */
        rmdir(s.gpu_dir);
    if (s.child.go_fd >= 0)
        rec_spawn_abort(&s.child);
    rec_output_close(&s.out);
    rec_stopper_free(s.stopper);
    rec_targets_cleanup(&s.targets);
    rec_selftime_cleanup(&s.cost);
    rec_signals_restore();
    res->exit_status = status;
    return status;
}
