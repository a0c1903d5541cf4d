/*
 * lib/export/chrome/chrome_busy.c — trc2chrome's exact GPU busy counter
 * (--gpu-busy-resolution): per device, a "C" track "GPU busy (kernels)"
 * whose value at the start of each bucket is the share of that bucket in
 * which at least one kernel ran, from the union of the device's kernel
 * intervals (lib/export/common/gpu_idle.h), beside NVML's gpu.util track,
 * which says only whether a kernel ran at some time of its sample period
 * (docs/gpu.md, "Exact busy %").  The stage retires intervals as the
 * device's streams move past them (exp_gpu_idle_stream_order), so its
 * memory does not follow the 4 s horizon of kernel intervals.
 */
#include "lib/export/chrome/chrome_int.h"

trc_status chr_busy_event(chrome *c, const trc_reader *r, const trc_event *ev)
{
    switch (ev->type) {
    case TRC_EV_SEGMENT:
    case TRC_EV_SEGMENT_END:
    case TRC_EV_GPU_KERNEL:
    case TRC_EV_GPU_MEMCPY:
    case TRC_EV_GPU_MEMSET:
        return exp_gpu_idle_event(c->busy, r, ev); /* no samples: nothing to charge */
    default:
        return TRC_OK;
    }
}

trc_status chr_busy_write(chrome *c, const trc_reader *r)
{
    if (!c->busy)
        return TRC_OK;
    if (exp_gpu_idle_finish(c->busy, r) != TRC_OK)
        return chr_fail(c, "GPU busy counter");
    int64_t start = exp_gpu_idle_span_start(c->busy), b = c->opt.busy.bucket_ns;
    jsonw *out = &c->w;
    for (uint32_t i = 0; i < exp_gpu_idle_devices(c->busy); i++) {
        exp_gpu_idle_device d;
        exp_gpu_idle_device_at(c->busy, i, &d);
        int64_t pid = chr_gpu_pid(c, d.device);
        if (pid < 0)
            return c->err_st;
        size_t n;
        const uint64_t *ns = exp_gpu_idle_busy_buckets(c->busy, i, &n);
        for (size_t k = 0; k < n; k++) {
            int64_t t = start + (int64_t)k * b;
            /* the last bucket ends with the span */
            int64_t len = k + 1 < n || d.span_ns % (uint64_t)b == 0 ? b
                                                                     : (int64_t)(d.span_ns % (uint64_t)b);
            chr_next_event(c);
            jsonw_raw(out, "{\"ph\":\"C\",\"name\":\"GPU busy (kernels)\",\"pid\":");
            jsonw_i64(out, pid);
            jsonw_raw(out, ",\"tid\":0,");
            chr_write_ts(c, t);
            jsonw_raw(out, ",\"args\":{\"percent\":");
            jsonw_double(out, 100.0 * (double)ns[k] / (double)len);
            jsonw_raw(out, "}}");
        }
    }
    return TRC_OK;
}
