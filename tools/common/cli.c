/*
 * cli.c — the option-table parser and help printer shared by every tool
 * (contract in cli.h).
 */
#include "tools/common/cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"

static const cli_option *find_long(const cli_tool *t, const char *name, size_t len)
{
    const cli_option *tables[2] = {t->options, t->shared_options};
    for (int i = 0; i < 2; i++) {
        for (const cli_option *o = tables[i]; o && o->long_name; o++) {
            if (strlen(o->long_name) == len && strncmp(o->long_name, name, len) == 0)
                return o;
        }
    }
    return NULL;
}

static const cli_option *find_short(const cli_tool *t, char c)
{
    const cli_option *tables[2] = {t->options, t->shared_options};
    for (int i = 0; i < 2; i++) {
        for (const cli_option *o = tables[i]; o && o->long_name; o++) {
            if (o->short_name && o->short_name == c)
                return o;
        }
    }
    return NULL;
}

static void usage_fail(const cli_tool *t, const char *fmt, const char *arg)
{
    fprintf(stderr, "%s: error: ", t->name);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s: try '%s --help'\n", t->name, t->name);
    exit(CLI_EXIT_USAGE);
}

static int takes_arg(const cli_option *o)
{
    return o->type == CLI_STRING || o->type == CLI_INT || o->type == CLI_DOUBLE ||
           o->type == CLI_LIST;
}

static void list_push(const cli_tool *t, cli_list *l, const char *v)
{
    if (l->n == l->cap) {
        if (trcu_grow((void **)&l->items, &l->cap, l->n, sizeof *l->items) != TRC_OK)
            cli_die(CLI_EXIT_USAGE, "out of memory");
    }
    l->items[l->n++] = v;
}

void cli_list_cleanup(cli_list *l)
{
    trc_free(l->items);
    l->items = NULL;
    l->n = l->cap = 0;
}

static void apply(const cli_tool *t, const cli_option *o, const char *val)
{
    char *end;
    switch (o->type) {
    case CLI_FLAG: *(int *)o->dest = 1; break;
    case CLI_COUNT: ++*(int *)o->dest; break;
    case CLI_STRING: *(const char **)o->dest = val; break;
    case CLI_LIST: list_push(t, (cli_list *)o->dest, val); break;
    case CLI_INT: {
        errno = 0;
        long v = strtol(val, &end, 10);
        if (errno || end == val || *end)
            usage_fail(t, "'%s' is not a whole number", val);
        if (o->min < o->max && (v < o->min || v > o->max)) {
            fprintf(stderr, "%s: error: --%s %s is out of range (%.0f to %.0f)\n", t->name,
                    o->long_name, val, o->min, o->max);
            exit(CLI_EXIT_USAGE);
        }
        *(long *)o->dest = v;
        break;
    }
    case CLI_DOUBLE: {
        errno = 0;
        double v = strtod(val, &end);
        if (errno || end == val || *end || !isfinite(v))
            usage_fail(t, "'%s' is not a number", val);
        if (o->min < o->max && (v < o->min || v > o->max)) {
            fprintf(stderr, "%s: error: --%s %s is out of range (%g to %g)\n", t->name,
                    o->long_name, val, o->min, o->max);
            exit(CLI_EXIT_USAGE);
        }
        *(double *)o->dest = v;
        break;
    }
    }
}

void cli_parse(const cli_tool *t, int argc, char **argv, int stop_at_first_positional,
               char ***pos, int *npos)
{
    cli_set_program(t->name);
    cli_startup();
    char **out = trc_calloc((size_t)argc + 1, sizeof *out);
    int n = 0;
    if (!out)
        cli_die(CLI_EXIT_USAGE, "out of memory");
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == '\0') {
            if (stop_at_first_positional)
                break;
            out[n++] = argv[i];
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            cli_print_help(t, stdout);
            exit(CLI_EXIT_OK);
        }
        if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
            printf("%s %s (libtrc %s, format %d.%d)\n", t->name, TRC_VERSION_STRING,
                   trc_version(), TRC_FORMAT_MAJOR, TRC_FORMAT_MINOR);
            exit(CLI_EXIT_OK);
        }
        const cli_option *o;
        const char *val = NULL;
        if (a[1] == '-') {
            const char *name = a + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            o = find_long(t, name, len);
            if (!o)
                usage_fail(t, "unknown option '%s'", a);
            if (eq) {
                if (!takes_arg(o))
                    usage_fail(t, "option '%s' takes no value", a);
                val = eq + 1;
            }
        } else {
            if (a[2] != '\0')
                usage_fail(t, "unknown option '%s' (short options cannot be bundled)", a);
            o = find_short(t, a[1]);
            if (!o)
                usage_fail(t, "unknown option '%s'", a);
        }
        if (takes_arg(o) && !val) {
            if (i + 1 >= argc)
                usage_fail(t, "option '%s' needs a value", a);
            val = argv[++i];
        }
        apply(t, o, val);
    }
    for (; i < argc; i++)
        out[n++] = argv[i];
    *pos = out;
    *npos = n;
}

static void print_table(const cli_option *opts, FILE *f)
{
    for (const cli_option *o = opts; o && o->long_name; o++) {
        char left[64];
        int k = 0;
        if (o->short_name)
            k = snprintf(left, sizeof left, "  -%c, --%s", o->short_name, o->long_name);
        else
            k = snprintf(left, sizeof left, "      --%s", o->long_name);
        if (o->metavar && k > 0 && (size_t)k < sizeof left)
            snprintf(left + k, sizeof left - (size_t)k, " %s", o->metavar);
        if (strlen(left) > 28)
            fprintf(f, "%s\n%30s%s\n", left, "", o->help);
        else
            fprintf(f, "%-30s%s\n", left, o->help);
    }
}

void cli_print_help(const cli_tool *t, FILE *f)
{
    fprintf(f, "Usage: %s %s\n%s\n\nOptions:\n", t->name, t->usage, t->summary);
    print_table(t->options, f);
    if (t->shared_options) {
        fprintf(f, "\nSelection (the same in every converter):\n");
        print_table(t->shared_options, f);
    }
    fprintf(f, "  -h, --help                  show this help and exit\n"
               "  -V, --version               show the version and exit\n");
    if (t->details)
        fprintf(f, "\n%s\n", t->details);
}

int64_t cli_parse_seconds(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0 || v > 9.2e9)
        return -1;
    return (int64_t)llround(v * 1e9);
}
