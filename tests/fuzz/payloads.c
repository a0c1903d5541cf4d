/*
 * tests/fuzz/payloads.c — seeds for tests/fuzz/fuzz_records.c: the
 * decoded payload of every good chunk of some .trc files, one file each.
 *
 *   payloads OUTDIR FILE...
 * writes OUTDIR/<basename>-<n>.bin for the n-th good chunk of each FILE
 * (format/scan.c; damaged and skipped chunks are passed over).  Exit 0,
 * or 2 with a message when an output cannot be written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "format/scan.h"

static long read_fd(void *ctx, void *buf, size_t len)
{
    return (long)read(*(int *)ctx, buf, len);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: payloads OUTDIR FILE...\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        int fd = open(argv[i], O_RDONLY);
        const char *base = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
        trcf_scanner *s;
        trcf_chunk_info ci;
        trc_status st;
        unsigned n = 0;
        if (fd < 0 || !(s = trcf_scanner_new(read_fd, &fd, &st))) {
            fprintf(stderr, "payloads: %s: %s\n", argv[i], fd < 0 ? strerror(errno) : "out of memory");
            return 2;
        }
        while (trcf_chunk_next(s, &ci) == TRC_OK) {
            char path[4096];
            FILE *f;
            if (ci.state != TRCF_CHUNK_OK)
                continue;
            snprintf(path, sizeof path, "%s/%.*s-%u.bin", argv[1], (int)strcspn(base, "."), base, n++);
            if (!(f = fopen(path, "wb")) || fwrite(ci.payload, 1, ci.h.decoded_len, f) != ci.h.decoded_len ||
                fclose(f) != 0) {
                fprintf(stderr, "payloads: %s: cannot write\n", path);
                return 2;
            }
        }
        trcf_scanner_free(s);
        close(fd);
    }
    return 0;
}
