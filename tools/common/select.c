/*
 * select.c — the selection options every converter shares (contract in
 * convert.h; user documentation in docs/converters.md "Selections"):
 * their rows, the checks of their values (a usage error is exit 2), and
 * the selection stage they set up (lib/export/pipeline/select.h), which
 * does the selecting.
 */
#include "tools/common/convert.h"

#include <string.h>

#include "lib/util/alloc.h"

const cli_option *conv_selection_options(conv_selection *sel)
{
    static cli_option opts[7];
    cli_option rows[7] = {
        {"pid", 0, CLI_LIST, &sel->pids, "PID|PATTERN",
         "only this process, by id or name pattern (repeatable)", 0, 0},
        {"thread", 0, CLI_LIST, &sel->threads, "PATTERN|TID",
         "only this thread, by name pattern or OS thread id (repeatable)", 0, 0},
        {"from", 0, CLI_STRING, &sel->from, "S", "start S seconds after the trace start", 0, 0},
        {"to", 0, CLI_STRING, &sel->to, "S", "stop S seconds after the trace start", 0, 0},
        {"idle", 0, CLI_FLAG, &sel->idle, NULL,
         "include idle (off-CPU) samples: wall-clock view (default: on-CPU only)", 0, 0},
        {"gil", 0, CLI_FLAG, &sel->gil, NULL, "only samples whose thread held the GIL", 0, 0},
        {NULL, 0, 0, NULL, NULL, NULL, 0, 0},
    };
    memcpy(opts, rows, sizeof rows);
    return opts;
}

void conv_selection_prepare(conv_selection *sel)
{
    conv_filter *f = &sel->filter;
    memset(f, 0, sizeof *f);
    f->from_ns = 0;
    f->to_ns = -1;
    if (sel->pids.n) {
        sel->pid_values = trc_calloc(sel->pids.n, sizeof *sel->pid_values);
        if (!sel->pid_values)
            cli_die(CLI_EXIT_USAGE, "out of memory");
        for (size_t i = 0; i < sel->pids.n; i++) {
            const char *want = sel->pids.items[i];
            if (conv_filter_parse_id(want, &sel->pid_values[i]) == 0) {
                if (sel->pid_values[i] < 0)
                    cli_die(CLI_EXIT_USAGE, "--pid '%s' is not a process id", want);
            } else if (want[0] == '\0') {
                cli_die(CLI_EXIT_USAGE, "--pid needs a process id or a name");
            } else {
                sel->pid_values[i] = -1; /* a name pattern */
            }
        }
    }
    for (size_t i = 0; i < sel->threads.n; i++) {
        if (sel->threads.items[i][0] == '\0')
            cli_die(CLI_EXIT_USAGE, "--thread needs a name or a thread id");
    }
    if (sel->from) {
        f->from_ns = cli_parse_seconds(sel->from);
        if (f->from_ns < 0)
            cli_die(CLI_EXIT_USAGE, "--from '%s' is not a number of seconds", sel->from);
    }
    if (sel->to) {
        f->to_ns = cli_parse_seconds(sel->to);
        if (f->to_ns < 0)
            cli_die(CLI_EXIT_USAGE, "--to '%s' is not a number of seconds", sel->to);
        if (f->to_ns <= f->from_ns)
            cli_die(CLI_EXIT_USAGE, "--to %s must be after --from %s", sel->to,
                    sel->from ? sel->from : "0");
    }
    f->pids = sel->pids.items;
    f->pid_values = sel->pid_values;
    f->n_pids = sel->pids.n;
    f->threads = sel->threads.items;
    f->n_threads = sel->threads.n;
    f->has_from = sel->from != NULL;
    f->has_to = sel->to != NULL;
    f->idle = sel->idle;
    f->gil = sel->gil;
}

exp_gpu_idle_options conv_gpu_idle_window(conv_selection *sel)
{
    const conv_filter *f = &sel->filter;
    exp_gpu_idle_options o = {f->has_from, f->has_to, f->from_ns, f->to_ns, 0, 0};
    sel->filter.idle = 1;
    return o;
}

void conv_selection_cleanup(conv_selection *sel)
{
    conv_filter_cleanup(&sel->filter);
    trc_free(sel->pid_values);
    sel->pid_values = NULL;
    cli_list_cleanup(&sel->pids);
    cli_list_cleanup(&sel->threads);
}

const trc_event *conv_selection_filter(conv_selection *sel, trc_reader *r,
                                       const trc_event *ev, trc_event *scratch)
{
    return conv_filter_event(&sel->filter, r, ev, scratch);
}

int conv_selection_keep(conv_selection *sel, trc_reader *r, const trc_event *ev)
{
    return conv_filter_keep(&sel->filter, r, ev);
}

int conv_selection_unmatched(const conv_selection *sel, trc_reader *r, char *why, size_t n)
{
    return conv_filter_unmatched(&sel->filter, r, why, n);
}
