/*
 * lib/gpu/gpu_support.c — is GPU recording built in, and where is the
 * injection library (lib/gpu/trec_gpu.h; docs/gpu.md "Finding
 * libtrec-cupti.so").
 *
 * TREC_CUPTI_VERSION (CUPTI_API_VERSION of the headers built against, 0
 * without CUDA) and TREC_GPU_BUILD_REL (the build directory as seen from
 * the directory of the tools, e.g. "../build" for bin/ and build/) come
 * from mk/cupti.mk.  Both places are relative to trec's own executable:
 * an installed or moved tree finds its own library, never the one of
 * the tree it was compiled in.
 */
#include "lib/gpu/trec_gpu.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef TREC_CUPTI_VERSION
#define TREC_CUPTI_VERSION 0
#endif
#ifndef TREC_GPU_BUILD_REL
#define TREC_GPU_BUILD_REL ".."
#endif

#define SO_NAME "libtrec-cupti.so"
#define INSTALLED_REL "../lib/trc" /* where `make install` puts it: PREFIX/lib/trc */

static int usable(const char *path)
{
    return access(path, R_OK) == 0;
}

/* Resolve "DIR/REL/SO_NAME" into out (len bytes) when the file exists
 * and its absolute path fits. */
static int try_path(const char *dir, const char *rel, char *out, size_t len)
{
    char joined[PATH_MAX * 2], abs[PATH_MAX];
    int n = snprintf(joined, sizeof joined, "%s/%s/%s", dir, rel, SO_NAME);
    if (n < 0 || (size_t)n >= sizeof joined || !usable(joined) || !realpath(joined, abs) ||
        strlen(abs) >= len)
        return 0;
    memcpy(out, abs, strlen(abs) + 1);
    return 1;
}

const char *trec_gpu_injection_path(void)
{
    static char found[PATH_MAX];
    static const char *const rel[] = { INSTALLED_REL, TREC_GPU_BUILD_REL };
    char exe[PATH_MAX];
    const char *env = getenv("TREC_CUPTI_INJECTION");
    ssize_t n;

    if (env && *env)
        return usable(env) && realpath(env, found) ? found : NULL;
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = 0;
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
        if (try_path(exe, rel[i], found, sizeof found))
            return found;
    return NULL;
}

/* The one definition of the support line (trec --version, and the reason
 * trec_gpu_setup_env gives when GPU recording cannot be set up). */
const char *trec_gpu_support(void)
{
    static char line[PATH_MAX + 96];
    const char *so;

    if (TREC_CUPTI_VERSION == 0)
        return "GPU support: off (built without CUDA)";
    so = trec_gpu_injection_path();
    if (!so)
        snprintf(line, sizeof line,
                 "GPU support: off (%s not found; looked in $TREC_CUPTI_INJECTION, "
                 "BINDIR/%s and BINDIR/%s)",
                 SO_NAME, INSTALLED_REL, TREC_GPU_BUILD_REL);
    else /* trec itself loads no CUDA: whether there is a GPU is the program's to find */
        snprintf(line, sizeof line,
                 "GPU support: built in, CUPTI %d.%d injection found at %s; libcupti and GPUs "
                 "are looked for when a program runs",
                 TREC_CUPTI_VERSION / 10000, TREC_CUPTI_VERSION / 100 % 100, so);
    return line;
}
