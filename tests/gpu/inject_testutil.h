/*
 * tests/gpu/inject_testutil.h — small helpers the injection's unit tests
 * (test_gpu_inject.c, test_gpu_lifecycle.c) share: a per-process side
 * trace path, the injection's configuration for a test, and a sleep.
 * Test code only (static functions).
 */
#ifndef TRC_TESTS_GPU_INJECT_TESTUTIL_H
#define TRC_TESTS_GPU_INJECT_TESTUTIL_H

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/cupti/inject.h"

/* "/tmp/trc-gpu-WHO-PID-TAG.trc": one file per test process and case. */
__attribute__((unused)) static void gput_tmp_path(char *buf, size_t len, const char *who,
                                                  const char *tag)
{
    snprintf(buf, len, "/tmp/trc-gpu-%s-%d-%s.trc", who, (int)getpid(), tag);
}

/* Writes to path; the flusher thread only when asked (most tests flush
 * by hand, for determinism); warnings go to warn. */
__attribute__((unused)) static trec_cupti_config gput_config(const char *path, int flusher,
                                                             void (*warn)(const char *))
{
    trec_cupti_config c;
    memset(&c, 0, sizeof c);
    c.path = path;
    c.no_flush_thread = !flusher;
    c.warn = warn;
    return c;
}

__attribute__((unused)) static void gput_sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

#endif
