/*
 * lib/cupti/cupti_api.h — the table of CUPTI entry points the injection
 * calls through (docs/design/cupti.md §1).
 *
 * The injection never links against libcupti: every CUPTI call goes
 * through a cupti_api filled by dlopen + dlsym at InitializeInjection
 * (cupti_api_load), or by a test that substitutes a fake table
 * (tests/gpu/fake_cupti.c).  Entries marked "optional" may be NULL and
 * the caller copes; the others are required by cupti_api_load.
 *
 * Internal to libtrec-cupti.so; needs the CUPTI 13 headers.
 */
#ifndef TRC_LIB_CUPTI_CUPTI_API_H
#define TRC_LIB_CUPTI_CUPTI_API_H

#include <stddef.h>
#include <cupti.h>

typedef struct cupti_api {
    CUptiResult (*GetResultString)(CUptiResult, const char **);
    CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char **);
    CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    /* optional: names the current holder on MULTIPLE_SUBSCRIBERS */
    CUptiResult (*Subscribe_v2)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
                                CUpti_SubscriberParams *);
    CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle);
    CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                  CUpti_CallbackId);
    CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
    CUptiResult (*ActivityDisable)(CUpti_ActivityKind);
    /* optional: per-API control, used to silence the noisy query calls */
    CUptiResult (*ActivityEnableRuntimeApi)(CUpti_CallbackId, uint8_t);
    CUptiResult (*ActivityEnableDriverApi)(CUpti_CallbackId, uint8_t);
    CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                             CUpti_BuffersCallbackCompleteFunc);
    /* optional: without it timestamps are mapped from CLOCK_REALTIME */
    CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc);
    CUptiResult (*ActivityFlushAll)(uint32_t);
    CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
    CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType);
    CUptiResult (*GetTimestamp)(uint64_t *);
    /* optional: the run-time API version (lib/cupti/version.h) */
    CUptiResult (*GetVersion)(uint32_t *);
    /* optional: the ids of a graph and an executable graph, recorded
     * with the call that captured or instantiated them (spec [R-API-3]) */
    CUptiResult (*GetGraphId)(CUgraph, uint32_t *);
    CUptiResult (*GetGraphExecId)(CUgraphExec, uint32_t *);
    /* optional: libcupti's NVTX injection entry points, forwarded to */
    int (*InitializeInjectionNvtx)(void *);
    int (*InitializeInjectionNvtx2)(void *);
    void *handle;            /* dlopen handle, NULL for a fake table */
    char path[512];          /* where it was loaded from ("" for a fake) */
} cupti_api;

/* Load libcupti and fill *api.  Candidates, first that loads and is
 * CUPTI 13 (has symbol version "libcupti.so.13"):
 *   1. $TREC_CUPTI_LIB (taken as is, version not checked);
 *   2. "libcupti.so.13" (already loaded, LD_LIBRARY_PATH, this
 *      library's RUNPATH = $(CUDA_HOME)/lib64 at build time);
 *   3. $CUDA_HOME/lib64, /usr/local/cuda/lib64, /usr/local/cuda/extras/CUPTI/lib64;
 *   4. a pip-installed CUDA next to any mapped .../nvidia/<pkg>/lib/
 *      library (PyTorch wheels): .../nvidia/{cuda_cupti,cu13}/lib/.
 * Returns 0, or -1 with a one-line reason in err.  The handle is never
 * closed (CUPTI may call back into us until exit). */
int cupti_api_load(cupti_api *api, char *err, size_t errlen);

/* Short text for a result code ("CUPTI_ERROR_UNKNOWN" or "error 999"). */
const char *cupti_api_result(const cupti_api *api, CUptiResult r);

#endif
