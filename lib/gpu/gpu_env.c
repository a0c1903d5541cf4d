/*
 * lib/gpu/gpu_env.c — the traced program's environment and the side
 * directory (lib/gpu/trec_gpu.h; docs/design/cupti.md §1 "Injection").
 *
 * The environment is the whole transport set-up: the CUDA driver of the
 * program (and of every program it starts, e.g. torchrun workers or
 * multiprocessing spawn children) reads CUDA_INJECTION64_PATH at cuInit,
 * and the injection writes TREC_GPU_DIR/gpu-PID.trc.
 */
#include "lib/gpu/trec_gpu.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int trec_gpu_side_dir_new(const char *output, char *dir, size_t len)
{
    char tmpl[PATH_MAX], abs[PATH_MAX];
    const char *base;

    if (!output || strcmp(output, "-") == 0) {
        base = getenv("TMPDIR");
        if (!base || !*base)
            base = "/tmp";
        snprintf(tmpl, sizeof tmpl, "%s/trec-gpu-XXXXXX", base);
    } else {
        const char *slash = strrchr(output, '/');
        if (!slash)
            snprintf(tmpl, sizeof tmpl, ".trec-gpu-XXXXXX");
        else
            snprintf(tmpl, sizeof tmpl, "%.*s/.trec-gpu-XXXXXX", (int)(slash - output),
                     output);
    }
    if (!mkdtemp(tmpl))
        return -1;
    /* absolute: the program may change its working directory */
    if (!realpath(tmpl, abs) || strlen(abs) >= len) {
        int e = errno ? errno : ENAMETOOLONG;
        rmdir(tmpl);
        errno = e;
        return -1;
    }
    snprintf(dir, len, "%s", abs);
    return 0;
}

/* 1 when the variable is set to something other than our library. */
static int taken(const char *name, const char *ours)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, ours) != 0;
}

int trec_gpu_setup_env(const char *side_dir, char *why, size_t whylen)
{
    const char *so = trec_gpu_injection_path();

    if (!so) {
        snprintf(why, whylen, "GPU recording off: %s", trec_gpu_support());
        return 1;
    }
    if (taken("CUDA_INJECTION64_PATH", so)) {
        snprintf(why, whylen,
                 "GPU recording off: CUDA_INJECTION64_PATH is already set (%s): left alone",
                 getenv("CUDA_INJECTION64_PATH"));
        return 1;
    }
    if (setenv("CUDA_INJECTION64_PATH", so, 1) != 0 || setenv("TREC_GPU_DIR", side_dir, 1) != 0)
        return -1;
    /* Another NVTX tool keeps its ranges; we only lose NVTX markers. */
    if (!taken("NVTX_INJECTION64_PATH", so) && setenv("NVTX_INJECTION64_PATH", so, 1) != 0)
        return -1;
    return 0;
}

void trec_gpu_clear_env(void)
{
    const char *so = trec_gpu_injection_path();
    const char *v = getenv("CUDA_INJECTION64_PATH");
    if (v && so && strcmp(v, so) == 0)
        unsetenv("CUDA_INJECTION64_PATH");
    v = getenv("NVTX_INJECTION64_PATH");
    if (v && so && strcmp(v, so) == 0)
        unsetenv("NVTX_INJECTION64_PATH");
    unsetenv("TREC_GPU_DIR");
}
