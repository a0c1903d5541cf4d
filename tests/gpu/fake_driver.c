/*
 * tests/gpu/fake_driver.c — a program that plays the CUDA driver on a
 * machine without a GPU: it loads the injection library named by
 * CUDA_INJECTION64_PATH (set by trec, as the driver would find it),
 * starts it on the fake CUPTI (fake_cupti.h) through the library's own
 * test hook, runs the standard scenario (fake_scenario.c) and shuts it
 * down, so the side trace lands in TREC_GPU_DIR for trec to merge.
 * Prints the library it loaded, for the test to check.
 * Used by tests/e2e/trec_relocated.sh.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cupti/inject.h"
#include "tests/gpu/fake_cupti.h"

/* No Python here: every launch is "from a thread without Python". */
static trc_status no_python(trc_writer *w, uint32_t *stack, uint32_t *flags)
{
    (void)w;
    *stack = 0;
    *flags = TRC_API_NO_PYTHON;
    return TRC_OK;
}

int main(void)
{
    const char *path = getenv("CUDA_INJECTION64_PATH");
    if (!path || !*path) {
        fprintf(stderr, "fake_driver: CUDA_INJECTION64_PATH is not set\n");
        return 1;
    }
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "fake_driver: %s\n", dlerror());
        return 1;
    }
    int (*init)(const cupti_api *, const trec_cupti_config *);
    void (*shutdown)(void);
    *(void **)&init = dlsym(lib, "trec_cupti_init_with_api");
    *(void **)&shutdown = dlsym(lib, "trec_cupti_shutdown");
    if (!init || !shutdown) {
        fprintf(stderr, "fake_driver: %s: no trec_cupti test hooks\n", path);
        return 1;
    }
    cupti_api api;
    trec_cupti_config cfg;
    fake_scenario sc;
    fake_cupti_table(&api, NULL);
    memset(&cfg, 0, sizeof cfg);
    cfg.no_flush_thread = 1;
    cfg.capture = no_python;
    if (init(&api, &cfg) != 0) {
        fprintf(stderr, "fake_driver: the injection did not start\n");
        return 1;
    }
    fake_cupti_scenario(&sc, 0);
    shutdown();
    printf("injection %s\n", path);
    printf("kernels %u\n", sc.kernels);
    return 0;
}
