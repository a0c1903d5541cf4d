/*
 * lib/export/pipeline/select_names.c — the names the selections match
 * against and the line that says a selection matched nothing (contract
 * in select.h; user documentation in docs/converters.md "Selections").
 *
 * A process is known by its executable and its command line (the
 * arguments joined with spaces, spec §7.3).  The names a --pid pattern
 * sees are the executable's basename ("python3.11") and what the user
 * ran with it: the script's basename ("train.py") or the -m module
 * ("pkg.serve"), and the name every output shows for it (lib/procname.h:
 * "DataLoader worker 1", "train.py rank 3").
 */
#include "lib/export/pipeline/select.h"

#include <stdio.h>

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/procname.h"

static void put_name(char dst[128], const char *s, size_t len)
{
    if (len > 127)
        len = 127;
    memcpy(dst, s, len);
    dst[len] = '\0';
}

static const char *base_of(const char *s, size_t *len)
{
    for (size_t i = *len; i-- > 0;) {
        if (s[i] == '/') {
            *len -= i + 1;
            return s + i + 1;
        }
    }
    return s;
}

/* Interpreter options that take the next word as their value (a value
 * written in the same word, "-Wignore", takes nothing further). */
static int takes_value(const char *w, size_t len)
{
    static const char *const opts[] = {"-W", "-X", "--check-hash-based-pycs"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
        if (len == strlen(opts[i]) && memcmp(w, opts[i], len) == 0)
            return 1;
    }
    return 0;
}

/* The script's basename or the -m module in the command line, after the
 * interpreter (the first word) and its options; none for -c and stdin. */
static int script_name(const char *cmd, char dst[128])
{
    const char *p = cmd;
    int first = 1, skip_value = 0;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        size_t len = (size_t)(p - w);
        if (!len)
            break;
        if (first || skip_value) {
            first = skip_value = 0;
            continue;
        }
        if (len == 2 && memcmp(w, "--", 2) == 0)
            continue; /* end of options: the script follows */
        if (w[0] != '-') {
            const char *b = base_of(w, &len);
            put_name(dst, b, len);
            return 1;
        }
        if (w[1] == 'm' || w[1] == 'c' || len == 1) {
            if (w[1] != 'm')
                return 0; /* -c CODE or "-" (stdin): no script */
            if (len > 2) {
                put_name(dst, w + 2, len - 2);
                return 1;
            }
            while (*p == ' ')
                p++;
            const char *m = p;
            while (*p && *p != ' ')
                p++;
            if (p == m)
                return 0;
            put_name(dst, m, (size_t)(p - m));
            return 1;
        }
        skip_value = takes_value(w, len);
    }
    return 0;
}

int conv_process_names(const trc_process *p, char names[CONV_PROCESS_NAMES][128])
{
    int n = 0;
    const char *exe = p->executable ? p->executable : "";
    size_t len = strlen(exe);
    const char *b = base_of(exe, &len);
    if (len)
        put_name(names[n++], b, len);
    if (p->command_line && script_name(p->command_line, names[n]))
        n++;
    if (n == 0 && !(p->label && *p->label))
        return 0; /* nothing known: the display name would be a placeholder */
    procname_base(p, names[n], sizeof names[n]);
    if (names[n][0] && (n == 0 || strcmp(names[n], names[n - 1]) != 0))
        n++;
    return n;
}

/* A bounded one-line text. */
typedef struct line {
    char *p;
    size_t n, len;
    int full;
} line;

static void add(line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(line *l, const char *fmt, ...)
{
    if (l->full || l->len >= l->n)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(l->p + l->len, l->n - l->len, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= l->n - l->len) {
        l->p[l->len] = '\0'; /* no cut item: it would read as a real name */
        l->full = 1;
        return;
    }
    l->len += (size_t)k;
}

static void add_given(line *l, const char *option, const char *const *values, size_t n)
{
    for (size_t i = 0; i < n; i++)
        add(l, "%s%s '%s'", l->len ? " " : "", option, values[i]);
}

/* The items listed after the selection: at most about 200 characters, so
 * the message stays one readable line, then a count of the rest. */
enum { LIST_BUDGET = 200 };

typedef struct lister {
    line *l;
    size_t start, shown, more;
} lister;

static void list_item(lister *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void list_item(lister *s, const char *fmt, ...)
{
    char item[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(item, sizeof item, fmt, ap);
    va_end(ap);
    if (s->more || s->l->len - s->start + strlen(item) > LIST_BUDGET) {
        s->more++;
        return;
    }
    /* a thread pool lists its name once */
    const char *at = s->l->p + s->start;
    size_t k = strlen(item);
    for (const char *q = strstr(at, item); q; q = strstr(q + 1, item)) {
        if ((q == at || (q - at >= 2 && q[-2] == ',' && q[-1] == ' ')) &&
            (q[k] == '\0' || q[k] == ','))
            return;
    }
    add(s->l, "%s%s", s->shown++ ? ", " : "", item);
}

static void list_end(lister *s)
{
    if (!s->shown)
        add(s->l, "none");
    if (s->more)
        add(s->l, ", ... %zu more", s->more);
    add(s->l, ")");
}

int conv_filter_unmatched(const conv_filter *sel, trc_reader *r, char *why, size_t n)
{
    line l = {why, n, 0, 0};
    why[0] = '\0';
    int pids_empty = sel->n_pids && !sel->seen_pid;
    if (!pids_empty && (!sel->n_threads || sel->seen_thread))
        return 0;

    uint32_t nt = trc_reader_thread_count(r);
    if (pids_empty) {
        add_given(&l, "--pid", sel->pids, sel->n_pids);
        add(&l, " %s no process (processes: ", sel->n_pids > 1 ? "match" : "matches");
        lister s = {&l, l.len, 0, 0};
        int64_t *seen = nt ? trc_calloc(nt, sizeof *seen) : NULL;
        size_t n_seen = 0;
        for (uint32_t id = 1; id <= nt; id++) {
            const trc_thread *t = trc_reader_thread(r, id);
            if (!t)
                continue;
            size_t k = 0;
            while (k < n_seen && seen[k] != t->pid)
                k++;
            if (k < n_seen)
                continue;
            if (seen)
                seen[n_seen++] = t->pid;
            const trc_process *p = trc_reader_process_by_pid(r, t->pid);
            char names[CONV_PROCESS_NAMES][128], shown[3 * 130] = "";
            int nn = p ? conv_process_names(p, names) : 0;
            for (int i = 0; i < nn; i++)
                snprintf(shown + strlen(shown), sizeof shown - strlen(shown), "%s%s",
                         i ? ", " : " (", names[i]);
            list_item(&s, "%" PRId64 "%s%s", t->pid, shown, nn ? ")" : "");
        }
        trc_free(seen);
        list_end(&s);
        return 1;
    }
    add_given(&l, "--pid", sel->pids, sel->n_pids);
    add_given(&l, "--thread", sel->threads, sel->n_threads);
    add(&l, " %s no thread (threads%s: ", sel->n_pids + sel->n_threads > 1 ? "match" : "matches",
        sel->n_pids ? " of the selected processes" : "");
    lister s = {&l, l.len, 0, 0};
    for (uint32_t id = 1; id <= nt; id++) {
        const trc_thread *t = trc_reader_thread(r, id);
        if (!t)
            continue;
        if (sel->n_pids) {
            if (!conv_filter_pid_matches(sel, r, t->pid))
                continue;
        }
        if (t->name && *t->name)
            list_item(&s, "%s", t->name);
        else
            list_item(&s, "tid %" PRId64, t->tid);
    }
    list_end(&s);
    return 1;
}
