/*
 * lib/procname.c — a process's display name (see lib/procname.h).
 *
 * The command line is the PROCESS record's arguments joined by single
 * spaces (spec §7.5), so an argument that held spaces (the code of
 * `-c`) cannot be told from the ones after it; the rules below only
 * need the first words and, for `-c`, whether the rest names a
 * multiprocessing or loky entry point.  Old traces (format 1.0, no
 * label) get the same names: everything here but the label and the rank
 * comes from fields every trace has.
 */
#include "lib/procname.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct word {
    const char *p;
    size_t n;
} word;

/* The next space-separated word of *s (n 0 at the end). */
static word next_word(const char **s)
{
    word w;
    while (**s == ' ')
        (*s)++;
    w.p = *s;
    while (**s && **s != ' ')
        (*s)++;
    w.n = (size_t)(*s - w.p);
    return w;
}

/* The part after the last '/' (a path's file name). */
static word file_name(word w)
{
    for (size_t i = w.n; i > 0; i--)
        if (w.p[i - 1] == '/')
            return (word){ w.p + i, w.n - i };
    return w;
}

static int starts(word w, const char *prefix)
{
    size_t n = strlen(prefix);
    return w.n >= n && memcmp(w.p, prefix, n) == 0;
}

static int is(word w, const char *s)
{
    return w.n == strlen(s) && memcmp(w.p, s, w.n) == 0;
}

static int has(word w, const char *sub)
{
    size_t n = strlen(sub);
    for (size_t i = 0; i + n <= w.n; i++)
        if (memcmp(w.p + i, sub, n) == 0)
            return 1;
    return 0;
}

/* python, python3, python3.11, python3.11-dbg, pypy3 ... */
static int is_python(word path)
{
    word f = file_name(path);
    return starts(f, "python") || starts(f, "pypy");
}

/* What a `-c` program is, from the code and the arguments after it (the
 * rest of the line).  The multiprocessing and loky helpers start this
 * way; anything else is just "python3 -c". */
static const char *code_role(const char *rest)
{
    if (strstr(rest, "resource_tracker"))
        return strstr(rest, "loky") ? "loky resource_tracker" : "multiprocessing.resource_tracker";
    if (strstr(rest, "multiprocessing.forkserver"))
        return "multiprocessing.forkserver";
    if (strstr(rest, "loky"))
        return "loky worker";
    if (strstr(rest, "multiprocessing.spawn") || strstr(rest, "--multiprocessing-fork"))
        return "multiprocessing worker";
    return NULL;
}

/* Appends n bytes of s to out[*len], made safe for every sink: control
 * characters, quotes, backslashes and semicolons become '_'; a cut at
 * `max` bytes of out is made at a UTF-8 character boundary and marked
 * "...". */
static void put(char *out, size_t cap, size_t *len, const char *s, size_t n, size_t max)
{
    if (max > cap - 1)
        max = cap - 1;
    size_t room = *len < max ? max - *len : 0;
    int cut = n > room;
    if (cut) {
        n = room > 3 ? room - 3 : 0;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        out[(*len)++] = (c < 0x20 || c == 0x7f || c == '"' || c == '\'' || c == '\\' || c == ';')
                            ? '_' : (char)c;
    }
    if (cut)
        for (int i = 0; i < 3 && *len < max; i++)
            out[(*len)++] = '.';
    out[*len] = '\0';
}

static void put_word(char *out, size_t cap, size_t *len, word w)
{
    put(out, cap, len, w.p, w.n, PROCNAME_BASE_MAX);
}

static void put_str(char *out, size_t cap, size_t *len, const char *s)
{
    put(out, cap, len, s, strlen(s), PROCNAME_BASE_MAX);
}

/* A Python command line from the word after the interpreter: skips the
 * interpreter's options and names the script, module or `-c` role. */
static void python_name(char *out, size_t cap, size_t *len, word interp, const char *s)
{
    for (;;) {
        word w = next_word(&s);
        if (w.n == 0 || is(w, "-")) {
            /* the REPL, or a program on stdin: the interpreter's name */
            put_word(out, cap, len, file_name(interp));
            if (w.n)
                put_str(out, cap, len, " -");
            return;
        }
        if (is(w, "--")) {
            w = next_word(&s);
            put_word(out, cap, len, w.n ? file_name(w) : file_name(interp));
            return;
        }
        if (w.p[0] != '-') {
            put_word(out, cap, len, file_name(w)); /* the script */
            return;
        }
        if (w.p[1] == '-') {
            /* the one long option with an argument; the others take none */
            if (is(w, "--check-hash-based-pycs"))
                (void)next_word(&s);
            continue;
        }
        /* a cluster of one-letter options, "-u", "-OO", "-Xdev", "-mpkg" */
        for (size_t i = 1; i < w.n; i++) {
            char o = w.p[i];
            word arg = { w.p + i + 1, w.n - i - 1 };
            if (o == 'c') {
                const char *role = code_role(arg.n ? arg.p : s);
                if (role) {
                    put_str(out, cap, len, role);
                } else {
                    put_word(out, cap, len, file_name(interp));
                    put_str(out, cap, len, " -c");
                }
                return;
            }
            if (o == 'm') {
                if (!arg.n)
                    arg = next_word(&s);
                if (!arg.n) {
                    put_word(out, cap, len, file_name(interp));
                    put_str(out, cap, len, " -m");
                } else if (has(arg, "loky")) {
                    put_str(out, cap, len, "loky worker"); /* joblib's popen_loky_posix */
                } else {
                    put_word(out, cap, len, arg);
                }
                return;
            }
            if (o == 'X' || o == 'W') {
                if (!arg.n)
                    (void)next_word(&s); /* "-X dev": the argument is the next word */
                break;
            }
        }
    }
}

size_t procname_base(const trc_process *p, char *out, size_t cap)
{
    size_t len = 0;
    if (cap == 0)
        return 0;
    out[0] = '\0';
    if (!p) {
        put_str(out, cap, &len, "process");
        return len;
    }
    const char *exe = p->executable ? p->executable : "";
    const char *s = p->command_line ? p->command_line : "";
    word exe_w = { exe, strlen(exe) };
    word argv0 = next_word(&s);
    /* `/usr/bin/env [-i] [NAME=VALUE]... python3 x.py`: the program env runs */
    if (is(file_name(argv0), "env")) {
        const char *after = s;
        word w = next_word(&after);
        while (w.n && (w.p[0] == '-' || memchr(w.p, '=', w.n))) {
            s = after;
            w = next_word(&after);
        }
        if (w.n) {
            argv0 = w;
            s = after;
        }
    }
    if (p->label && p->label[0]) {
        put_str(out, cap, &len, p->label);
    } else if (argv0.n && is_python(argv0)) {
        python_name(out, cap, &len, argv0, s);
    } else if (argv0.n && ((p->interpreter && p->interpreter[0]) || is_python(exe_w))) {
        /* Python under another name: an embedding program, or one that set
         * its own title: the name it gave itself */
        put_word(out, cap, &len, file_name(argv0));
    } else if (exe_w.n) {
        put_word(out, cap, &len, file_name(exe_w));
    } else if (argv0.n) {
        put_word(out, cap, &len, file_name(argv0));
    }
    if (len == 0)
        put_str(out, cap, &len, "process");
    if (p->rank >= 0) {
        char r[32];
        snprintf(r, sizeof r, " rank %" PRId64, p->rank);
        put(out, cap, &len, r, strlen(r), cap - 1);
    }
    return len;
}

size_t procname(const trc_process *p, int64_t pid, char *out, size_t cap)
{
    size_t len = procname_base(p, out, cap);
    char tail[40];
    snprintf(tail, sizeof tail, " (pid %" PRId64 ")", p ? p->pid : pid);
    put(out, cap, &len, tail, strlen(tail), cap - 1);
    return len;
}
