/*
 * tests/fuzz/mutate.c — write seeded mutants of a .trc file for the
 * converter robustness test (tests/e2e/fuzz_tools.sh).  The mutations
 * are tests/support/fuzz_mutate.c's: raw damage, chunk reordering,
 * header fields behind a fixed CRC, record damage behind fixed CRCs.
 *
 *   mutate IN OUTDIR FIRST_SEED COUNT
 * writes OUTDIR/<basename>-<seed>.trc for seeds FIRST_SEED..+COUNT-1 and
 * prints one line per mutant: "PATH<TAB>what was done".  Exit 0, or 2
 * with a message on stderr when IN cannot be read or a file not written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/fuzz_mutate.h"

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *p = NULL;
    size_t cap = 0, n = 0, got;
    if (!f)
        return NULL;
    do {
        if (n == cap) {
            uint8_t *q = realloc(p, cap = cap ? cap * 2 : 4096);
            if (!q) {
                free(p);
                fclose(f);
                return NULL;
            }
            p = q;
        }
        got = fread(p + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    *len = n;
    return p;
}

int main(int argc, char **argv)
{
    size_t len, n;
    uint8_t *in;
    const char *base;
    unsigned long long first, count;
    int rc = 0;

    if (argc != 5) {
        fprintf(stderr, "usage: mutate IN OUTDIR FIRST_SEED COUNT\n");
        return 2;
    }
    in = slurp(argv[1], &len);
    if (!in) {
        fprintf(stderr, "mutate: cannot read %s\n", argv[1]);
        return 2;
    }
    base = strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1];
    first = strtoull(argv[3], NULL, 10);
    count = strtoull(argv[4], NULL, 10);
    for (unsigned long long s = first; s < first + count && rc == 0; s++) {
        fm_info info;
        char path[4096];
        uint8_t *m = fm_mutate(in, len, s, 1 + (int)(s % 3 == 0), &n, &info);
        FILE *f;
        snprintf(path, sizeof path, "%s/%.*s-%llu.trc", argv[2],
                 (int)(strlen(base) > 4 ? strlen(base) - 4 : strlen(base)), base, s);
        f = m ? fopen(path, "wb") : NULL;
        if (!f || fwrite(m, 1, n, f) != n || fclose(f) != 0) {
            fprintf(stderr, "mutate: cannot write %s\n", path);
            rc = 2;
        } else {
            printf("%s\t%s\n", path, info.what);
        }
        free(m);
    }
    free(in);
    return rc;
}
