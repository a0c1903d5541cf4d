/*
 * tests/gpu/make_fixture.c — writes fixtures/gpu/fake_train.trc: the
 * standard fake-CUPTI scenario (tests/gpu/fake_scenario.c) recorded by
 * the real injection code, with fixed clocks, pid, host and command
 * line so the bytes are reproducible (fixtures/gpu/regenerate.sh checks
 * that), and launch sites faked as Python stacks of a small training
 * script (this program has no Python of its own).
 *
 * Usage: make_fixture OUT.trc
 */
#include <stdio.h>
#include <string.h>

#include "lib/cupti/inject.h"
#include "tests/gpu/fake_cupti.h"

static int64_t fixed_now;
static int in_capture;   /* the next reading ends a stack capture */

static int64_t fixture_clock(void)
{
    /* 1 ms per reading: deterministic, increasing, and the scenario
     * (< 1 ms) ends before the segment does; but the reading that ends a
     * capture (the injection times the hook: API_CALL capture) comes 2 us
     * after the one before, a real walk's cost, so that a call's time
     * without the capture is what the scenario made it, less 2 us */
    fixed_now += in_capture ? 2000 : 1000000;
    in_capture = 0;
    return fixed_now;
}

static int64_t fixture_realtime(void)
{
    return 1700000000000000000LL + fixed_now;
}

/* Launch and sync sites in the order the scenario makes those calls
 * (every call whose stack is captured); line 0 = no Python (as from an
 * autograd worker thread). */
static const struct { const char *fn; unsigned line, first; } sites[] = {
    { "main", 31, 25 },        /* x = x.cuda()            HtoD */
    { "forward", 12, 10 },     /* vectorAdd */
    { "forward", 13, 10 },     /* sgemm */
    { "forward", 14, 10 },     /* vectorAdd */
    { NULL, 0, 0 },            /* cuLaunchKernel from a thread without Python */
    { "forward", 15, 10 },     /* memset */
    { "forward", 16, 10 },     /* DtoD */
    { "main", 34, 25 },        /* peer copy */
    { "forward", 17, 10 },     /* the kernel whose record lost its timestamps */
    { "main", 35, 25 },        /* stream.synchronize(): cudaStreamSynchronize */
    { "main", 36, 25 },        /* loss.item(): DtoH */
    { "main", 36, 25 },        /* loss.item(): cudaEventSynchronize */
    { "main", 38, 25 },        /* torch.cuda.synchronize(): cudaDeviceSynchronize */
};
static unsigned next_site;

static trc_status fake_capture(trc_writer *w, uint32_t *stack, uint32_t *flags)
{
    uint32_t f, s;
    trc_status st;
    unsigned i = next_site++ % (sizeof sites / sizeof sites[0]);

    in_capture = 1;
    *stack = 0;
    *flags = 0;
    if (!sites[i].fn) {
        *flags = TRC_API_NO_PYTHON;
        return TRC_OK;
    }
    if ((st = trc_writer_frame(w, TRC_FRAME_PYTHON, "<module>", "train.py", 40, 1, &f)) ||
        (st = trc_writer_stack(w, 0, f, &s)))
        return st;
    if (strcmp(sites[i].fn, "main") == 0) {
        if ((st = trc_writer_frame(w, TRC_FRAME_PYTHON, "main", "train.py", sites[i].line,
                                   sites[i].first, &f)) ||
            (st = trc_writer_stack(w, s, f, &s)))
            return st;
    } else {
        if ((st = trc_writer_frame(w, TRC_FRAME_PYTHON, "main", "train.py", 33, 25, &f)) ||
            (st = trc_writer_stack(w, s, f, &s)) ||
            (st = trc_writer_frame(w, TRC_FRAME_PYTHON, "Model.forward", "model.py",
                                   sites[i].line, sites[i].first, &f)) ||
            (st = trc_writer_stack(w, s, f, &s)))
            return st;
    }
    *stack = s;
    return TRC_OK;
}

int main(int argc, char **argv)
{
    cupti_api api;
    fake_cupti_opts o;
    trec_cupti_config cfg;
    fake_scenario sc;

    if (argc != 2) {
        fprintf(stderr, "usage: make_fixture OUT.trc\n");
        return 2;
    }
    fixed_now = 5000000000LL;
    memset(&o, 0, sizeof o);
    o.pid = 4242;
    fake_cupti_table(&api, &o);
    memset(&cfg, 0, sizeof cfg);
    cfg.path = argv[1];
    cfg.clock = fixture_clock;
    cfg.realtime = fixture_realtime;
    cfg.pid = 4242;
    cfg.host = "fixture";
    cfg.command_line = "python3 train.py --epochs 1";
    cfg.executable = "/usr/bin/python3";
    cfg.wall_ns = 1700000000000000000LL;
    cfg.no_flush_thread = 1;
    cfg.no_thread_names = 1;
    cfg.capture = fake_capture;
    if (trec_cupti_init_with_api(&api, &cfg) != 0) {
        fprintf(stderr, "make_fixture: the injection did not start\n");
        return 1;
    }
    fake_cupti_scenario(&sc, 4243);
    trec_cupti_shutdown();
    printf("%s: %u kernels, %u copies, %u memsets, %u syncs, %u API calls, %u markers\n", argv[1],
           sc.kernels, sc.memcpys, sc.memsets, sc.syncs, sc.api_recorded,
           sc.markers_range + sc.markers_instant + sc.overheads);
    return 0;
}
