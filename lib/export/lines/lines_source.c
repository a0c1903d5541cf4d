/*
 * lib/export/lines/lines_source.c — the source text of a recorded file
 * (contract in lines.h).  The recorded path is where the program ran,
 * which may be another host or a container: --source-root OLD=NEW maps
 * it.  A file that cannot be read is not an error of the run, only of
 * its text: the caller shows the numbers and the reason.
 */
#include "lib/export/lines/lines.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util/alloc.h"

/* Files larger than this are not shown: a recorded "file" that is really
 * a device or a huge generated module would only cost memory. */
#define SOURCE_MAX_BYTES (64u << 20)

static void map_path(lines_source *s, const char *recorded, const char *const *roots,
                     size_t n_roots)
{
    for (size_t i = 0; i < n_roots; i++) {
        const char *eq = strchr(roots[i], '=');
        if (!eq)
            continue;
        size_t n = (size_t)(eq - roots[i]);
        /* OLD must end at a path component: /src maps /src/x.py, not /srcx.py */
        if (n && strncmp(recorded, roots[i], n) == 0 &&
            (recorded[n] == '/' || recorded[n] == 0 || roots[i][n - 1] == '/')) {
            snprintf(s->path, sizeof s->path, "%s%s", eq + 1, recorded + n);
            return;
        }
    }
    snprintf(s->path, sizeof s->path, "%s", recorded);
}

static int fail(lines_source *s, const char *why)
{
    snprintf(s->error, sizeof s->error, "%s: %s", s->path, why);
    return 0;
}

int lines_source_load(lines_source *s, const char *recorded, const char *const *roots,
                      size_t n_roots)
{
    memset(s, 0, sizeof *s);
    map_path(s, recorded, roots, n_roots);
    if (!*recorded || recorded[0] == '<')
        return fail(s, "not a file (code made at run time)");
    /* O_NONBLOCK: a recorded path naming a FIFO must not hang the
     * report on an open that waits for a writer. */
    int fd = open(s->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return fail(s, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return fail(s, "not a regular file");
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return -1;
    }
    if ((uint64_t)st.st_size > SOURCE_MAX_BYTES) {
        fclose(f);
        return fail(s, "larger than 64 MiB, not shown");
    }
    size_t size = (size_t)st.st_size;
    s->text = trc_malloc(size + 1);
    if (!s->text) {
        fclose(f);
        return -1;
    }
    size_t got = fread(s->text, 1, size, f);
    int err = ferror(f) ? errno : 0;
    fclose(f);
    if (err) {
        trc_free(s->text);
        s->text = NULL;
        return fail(s, strerror(err));
    }
    s->text[got] = 0;
    uint32_t n = 0;
    for (size_t i = 0; i < got; i++)
        n += s->text[i] == '\n';
    if (got && s->text[got - 1] != '\n')
        n++;
    s->line = trc_malloc((n ? n : 1) * sizeof *s->line);
    s->len = trc_malloc((n ? n : 1) * sizeof *s->len);
    if (!s->line || !s->len) {
        lines_source_free(s);
        return -1;
    }
    size_t start = 0;
    for (uint32_t k = 0; k < n; k++) {
        const char *nl = memchr(s->text + start, '\n', got - start);
        size_t end = nl ? (size_t)(nl - s->text) : got;
        size_t len = end - start;
        if (len && s->text[start + len - 1] == '\r')
            len--; /* a file written on Windows */
        s->line[k] = s->text + start;
        s->len[k] = (uint32_t)(len > UINT32_MAX ? UINT32_MAX : len);
        start = end + 1;
    }
    s->n_lines = n;
    return 0;
}

void lines_source_free(lines_source *s)
{
    trc_free(s->text);
    trc_free(s->line);
    trc_free(s->len);
    s->text = NULL;
    s->line = NULL;
    s->len = NULL;
    s->n_lines = 0;
}
