/*
 * tests/unit/gpu/test_gpu_merge.c — trec's GPU glue (lib/gpu/): the support
 * line, finding the injection library, the child's environment, the side
 * directory, and merging side traces after the main trace.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "lib/gpu/trec_gpu.h"
#include "tests/gpu/trace_check.h"

static int fd_write(void *ctx, const void *buf, size_t len)
{
    return write(*(int *)ctx, buf, len) == (ssize_t)len ? 0 : -1;
}

/* A side trace of pid with `kernels` launches and kernels; *open_len (if
 * not NULL) gets its length before the end-of-segment chunk, the length
 * a process that ran no exit handler leaves. */
static void write_trace_at(const char *path, int64_t pid, int kernels, off_t *open_len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    trc_status st;
    trc_writer_options o;
    uint32_t th;

    assert_true(fd >= 0);
    memset(&o, 0, sizeof o);
    o.recorder = pid ? "trec-cupti test" : "trec test";
    trc_writer *w = trc_writer_open_callback(fd_write, &fd, &o, &st);
    assert_non_null(w);
    assert_int_equal(trc_writer_thread(w, pid ? pid : 1, pid ? pid : 1, "", &th), TRC_OK);
    /* the segment chunk on its own, as the injection flushes after set-up */
    assert_int_equal(trc_writer_flush(w), TRC_OK);
    if (!pid) {
        uint32_t f, s;
        assert_int_equal(trc_writer_frame(w, TRC_FRAME_PYTHON, "main", "x.py", 1, 1, &f), TRC_OK);
        assert_int_equal(trc_writer_stack(w, 0, f, &s), TRC_OK);
        assert_int_equal(trc_writer_sample(w, trc_now_ns(), th, s, TRC_SAMPLE_ON_CPU, 0), TRC_OK);
    }
    for (int i = 0; i < kernels; i++) {
        trc_api_call a;
        trc_gpu_kernel k;
        int64_t t = trc_now_ns();
        memset(&a, 0, sizeof a);
        a.thread = th;
        a.start_ns = t;
        a.end_ns = t + 10;
        a.name = "cudaLaunchKernel";
        a.correlation = (uint32_t)i + 1;
        a.flags = TRC_API_LAUNCH;
        assert_int_equal(trc_writer_api_call(w, &a), TRC_OK);
        memset(&k, 0, sizeof k);
        k.where.pid = pid;
        k.where.correlation = (uint32_t)i + 1;
        k.start_ns = t + 20;
        k.end_ns = t + 30;
        k.name = pid == 100 ? "k100" : "k200";
        assert_int_equal(trc_writer_gpu_kernel(w, &k), TRC_OK);
    }
    /* flushed as the injection's flusher does: the end summary is a chunk of its own */
    assert_int_equal(trc_writer_flush(w), TRC_OK);
    if (open_len)
        *open_len = lseek(fd, 0, SEEK_END);
    assert_int_equal(trc_writer_close(w, 0), TRC_OK);
    close(fd);
}

static void write_trace(const char *path, int64_t pid, int kernels)
{
    write_trace_at(path, pid, kernels, NULL);
}

/* Has pid ended?  The test's processes are reaped: gone from the table. */
static int reaped(int64_t pid, void *ctx)
{
    (void)ctx;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Append side's traces to the trace at out, as trec does; must succeed. */
static void merge_into(const char *out, const char *side, trec_gpu_merge_result *res)
{
    int fd = open(out, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    assert_int_equal(trec_gpu_merge(fd, side, reaped, NULL, res), 0);
    close(fd);
}

/* The pid of a process that has ended (and been reaped). */
static int64_t dead_pid(void)
{
    pid_t p = fork();
    assert_true(p >= 0);
    if (p == 0)
        _exit(0);
    assert_int_equal(waitpid(p, NULL, 0), p);
    return p;
}

static void test_merge(void **state)
{
    char dir[] = "/tmp/trc-gpu-merge-XXXXXX", side[4096], out[4200], p[4300];
    trec_gpu_merge_result res;
    tc_trace t;
    struct stat sb;

    assert_non_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/run.trc", dir);
    assert_int_equal(trec_gpu_side_dir_new(out, side, sizeof side), 0);
    assert_non_null(strstr(side, "/.trec-gpu-"));
    assert_int_equal(strncmp(side, dir, strlen(dir)), 0);   /* next to the output */

    write_trace(out, 0, 0);
    snprintf(p, sizeof p, "%s/gpu-200.trc", side);
    write_trace(p, 200, 3);
    snprintf(p, sizeof p, "%s/gpu-100.trc", side);
    write_trace(p, 100, 2);
    snprintf(p, sizeof p, "%s/gpu-300.trc", side);   /* died before its first chunk */
    close(open(p, O_WRONLY | O_CREAT, 0644));

    merge_into(out, side, &res);
    assert_int_equal(res.files, 2);
    assert_int_equal(res.empty, 1);
    assert_true(res.bytes > 0);
    assert_int_not_equal(stat(side, &sb), 0);   /* side directory gone */

    assert_int_equal(tc_load(out, &t), TRC_OK);
    assert_int_equal(t.reader_losses, 0);
    assert_int_equal(t.segments, 3);
    assert_int_equal(tc_count(&t, TRC_EV_SAMPLE), 1);
    assert_int_equal(tc_count(&t, TRC_EV_GPU_KERNEL), 5);
    assert_int_equal(tc_count(&t, TRC_EV_API_CALL), 5);
    /* name order: gpu-100 before gpu-200 */
    assert_string_equal(tc_nth(&t, TRC_EV_GPU_KERNEL, 0)->name, "k100");
    assert_string_equal(tc_nth(&t, TRC_EV_GPU_KERNEL, 4)->name, "k200");
    tc_free(&t);
    unlink(out);
    rmdir(dir);
}

/* A side trace cut by a crash inside its last write: the partial chunk
 * is cut off and the segment closed (trec_gpu_seal), what was flushed is
 * kept; a file that is not a side trace stays. */
static void test_merge_truncated_and_stray(void **state)
{
    char dir[] = "/tmp/trc-gpu-merge-XXXXXX", side[4096], out[4200], p[4300];
    trec_gpu_merge_result res;
    tc_trace t;
    struct stat sb;

    assert_non_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/run.trc", dir);
    assert_int_equal(trec_gpu_side_dir_new(out, side, sizeof side), 0);
    write_trace(out, 0, 0);
    int64_t pid = dead_pid();
    snprintf(p, sizeof p, "%s/gpu-%lld.trc", side, (long long)pid);
    write_trace(p, pid, 2);
    assert_int_equal(stat(p, &sb), 0);
    assert_int_equal(truncate(p, sb.st_size - 5), 0);   /* the end-of-segment chunk is cut */
    snprintf(p, sizeof p, "%s/notes.txt", side);
    close(open(p, O_WRONLY | O_CREAT, 0644));

    merge_into(out, side, &res);
    assert_int_equal(res.files, 1);
    assert_int_equal(res.sealed, 1);
    assert_int_equal(res.sealed_pid, pid);
    assert_int_equal(stat(side, &sb), 0);   /* kept: holds a file that is not ours */
    assert_int_equal(tc_load(out, &t), TRC_OK);
    assert_int_equal(tc_count(&t, TRC_EV_GPU_KERNEL), 2);
    assert_int_equal(t.reader_losses, 0);   /* the torn chunk is gone, not damage */
    assert_int_equal(tc_count(&t, TRC_EV_SEGMENT_END), 2);
    tc_free(&t);
    unlink(p);
    rmdir(side);
    unlink(out);
    rmdir(dir);

    assert_int_equal(trec_gpu_merge(1, "/nonexistent-trc-dir", reaped, NULL, &res), -1);
    assert_non_null(strstr(res.why, "/nonexistent-trc-dir"));
}

/* A process that ran no exit handler (os._exit, a signal) leaves its
 * side trace without SEGMENT_END.  Once it has ended, the merge closes
 * the segment: one recorded loss that says why, and totals that match
 * what the segment holds; a side trace of a process still running is
 * appended as it is (its writer may go on). */
static void test_merge_seals_unended(void **state)
{
    char dir[] = "/tmp/trc-gpu-merge-XXXXXX", side[4096], out[4200], p[4300];
    trec_gpu_merge_result res;
    tc_trace t;
    off_t open_len;

    assert_non_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/run.trc", dir);
    assert_int_equal(trec_gpu_side_dir_new(out, side, sizeof side), 0);
    write_trace(out, 0, 0);
    int64_t gone = dead_pid(), alive = getpid();
    snprintf(p, sizeof p, "%s/gpu-%lld.trc", side, (long long)gone);
    write_trace_at(p, gone, 3, &open_len);
    assert_int_equal(truncate(p, open_len), 0);
    snprintf(p, sizeof p, "%s/gpu-%lld.trc", side, (long long)alive);
    write_trace_at(p, alive, 1, &open_len);
    assert_int_equal(truncate(p, open_len), 0);

    merge_into(out, side, &res);
    assert_int_equal(res.files, 2);
    assert_int_equal(res.sealed, 1);
    assert_int_equal(res.sealed_pid, gone);
    assert_int_equal(res.seal_failed, 0);

    assert_int_equal(tc_load(out, &t), TRC_OK);
    assert_int_equal(t.segments, 3);
    assert_int_equal(t.reader_losses, 0);
    assert_int_equal(tc_count(&t, TRC_EV_GPU_KERNEL), 4);
    assert_int_equal(tc_count(&t, TRC_EV_SEGMENT_END), 2);  /* main, and the sealed one */
    assert_int_equal(tc_count(&t, TRC_EV_LOSS), 1);
    const tc_event *l = tc_nth(&t, TRC_EV_LOSS, 0);
    assert_int_equal(l->u.loss.kind, TRC_LOSS_OTHER);
    assert_int_equal(l->u.loss.count, 1);
    assert_int_equal(l->u.loss.pid, gone);
    assert_non_null(strstr(l->detail, "os._exit"));
    const tc_event *e = tc_nth(&t, TRC_EV_SEGMENT_END, 1);
    assert_int_equal(e->u.end.gpu_activities, 3);
    assert_int_equal(e->u.end.api_calls, 3);
    assert_int_equal(e->u.end.threads, 1);
    assert_int_equal(e->u.end.samples, 0);
    tc_free(&t);
    unlink(out);
    rmdir(dir);
}

/* Sealing alone: a segment that ended is left as it is; one whose last
 * chunk was torn loses that chunk's records, and says so. */
static void test_seal_direct(void **state)
{
    char path[] = "/tmp/trc-gpu-seal-XXXXXX";
    trec_gpu_seal_result sr;
    struct stat a, b;
    tc_trace t;
    off_t open_len;
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);

    write_trace_at(path, 4242, 2, &open_len);
    assert_int_equal(stat(path, &a), 0);
    assert_int_equal(trec_gpu_seal(path, 4242, &sr), 0);
    assert_int_equal(sr.sealed, 0);
    assert_int_equal(stat(path, &b), 0);
    assert_int_equal(a.st_size, b.st_size);

    /* cut inside the chunk that holds the launches and kernels */
    assert_int_equal(truncate(path, open_len - 3), 0);
    assert_int_equal(trec_gpu_seal(path, 4242, &sr), 0);
    assert_int_equal(sr.sealed, 1);
    assert_true(sr.cut_bytes > 0);
    assert_int_equal(tc_load(path, &t), TRC_OK);
    assert_int_equal(t.reader_losses, 0);
    assert_int_equal(tc_count(&t, TRC_EV_SEGMENT_END), 1);
    const tc_event *e = tc_nth(&t, TRC_EV_SEGMENT_END, 0);
    assert_int_equal(e->u.end.gpu_activities, tc_count(&t, TRC_EV_GPU_KERNEL));
    assert_int_equal(e->u.end.api_calls, tc_count(&t, TRC_EV_API_CALL));
    tc_free(&t);

    assert_int_equal(trec_gpu_seal("/nonexistent-trc-seal.trc", 1, &sr), -1);
    assert_non_null(strstr(sr.why, "/nonexistent-trc-seal.trc"));
    unlink(path);
}

static void test_side_dir_stdout(void **state)
{
    char tmp[] = "/tmp/trc-gpu-tmpdir-XXXXXX", side[4096];
    assert_non_null(mkdtemp(tmp));
    setenv("TMPDIR", tmp, 1);
    assert_int_equal(trec_gpu_side_dir_new("-", side, sizeof side), 0);
    assert_int_equal(strncmp(side, tmp, strlen(tmp)), 0);
    assert_int_equal(rmdir(side), 0);
    assert_int_equal(trec_gpu_side_dir_new(NULL, side, sizeof side), 0);
    assert_int_equal(rmdir(side), 0);
    unsetenv("TMPDIR");
    rmdir(tmp);
}

static void test_env(void **state)
{
    char dir[] = "/tmp/trc-gpu-env-XXXXXX", lib[4200], why[512];
    assert_non_null(mkdtemp(dir));
    snprintf(lib, sizeof lib, "%s/libtrec-cupti.so", dir);
    close(open(lib, O_WRONLY | O_CREAT, 0644));

    unsetenv("CUDA_INJECTION64_PATH");
    unsetenv("NVTX_INJECTION64_PATH");
    setenv("TREC_CUPTI_INJECTION", lib, 1);
    assert_string_equal(trec_gpu_injection_path(), lib);
    const char *s = trec_gpu_support();
    assert_int_equal(strncmp(s, "GPU support: ", 13), 0);
    if (strstr(s, "built without CUDA") == NULL) {
        assert_non_null(strstr(s, "built in, CUPTI "));
        assert_non_null(strstr(s, lib));
        assert_null(strstr(s, " on ")); /* no GPU is claimed: none is looked for here */
    }

    assert_int_equal(trec_gpu_setup_env("/side", why, sizeof why), 0);
    assert_string_equal(getenv("CUDA_INJECTION64_PATH"), lib);
    assert_string_equal(getenv("NVTX_INJECTION64_PATH"), lib);
    assert_string_equal(getenv("TREC_GPU_DIR"), "/side");
    assert_int_equal(trec_gpu_setup_env("/side2", why, sizeof why), 0);   /* ours: fine */
    trec_gpu_clear_env();
    assert_null(getenv("CUDA_INJECTION64_PATH"));
    assert_null(getenv("TREC_GPU_DIR"));

    /* another tool's injection is left alone */
    setenv("CUDA_INJECTION64_PATH", "/opt/other/libinject.so", 1);
    assert_int_equal(trec_gpu_setup_env("/side", why, sizeof why), 1);
    assert_non_null(strstr(why, "/opt/other/libinject.so"));
    assert_string_equal(getenv("CUDA_INJECTION64_PATH"), "/opt/other/libinject.so");
    assert_null(getenv("TREC_GPU_DIR"));
    unsetenv("CUDA_INJECTION64_PATH");
    /* another NVTX tool too, but GPU recording goes on */
    setenv("NVTX_INJECTION64_PATH", "/opt/nvtx/tool.so", 1);
    assert_int_equal(trec_gpu_setup_env("/side", why, sizeof why), 0);
    assert_string_equal(getenv("NVTX_INJECTION64_PATH"), "/opt/nvtx/tool.so");
    trec_gpu_clear_env();
    assert_string_equal(getenv("NVTX_INJECTION64_PATH"), "/opt/nvtx/tool.so");
    unsetenv("NVTX_INJECTION64_PATH");

    /* no library anywhere */
    setenv("TREC_CUPTI_INJECTION", "/nonexistent/libtrec-cupti.so", 1);
    assert_null(trec_gpu_injection_path());
    assert_int_equal(trec_gpu_setup_env("/side", why, sizeof why), 1);
    assert_non_null(strstr(why, "GPU recording off"));
    assert_null(getenv("CUDA_INJECTION64_PATH"));
    unsetenv("TREC_CUPTI_INJECTION");
    unlink(lib);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_merge_truncated_and_stray),
        cmocka_unit_test(test_merge_seals_unended),
        cmocka_unit_test(test_seal_direct),
        cmocka_unit_test(test_side_dir_stdout),
        cmocka_unit_test(test_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
