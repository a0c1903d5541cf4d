/*
 * lib/cupti/apinames.c — API names, classes and kernel-name demangling
 * (docs/design/cupti.md §4, §5; contracts in apinames.h).
 *
 * Classes are decided from the stripped name so that they hold for every
 * variant CUPTI knows (_ptsz, _v2, Ex, Async ...) without listing each
 * callback id.
 */
#include "lib/cupti/apinames.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/util/hashtab.h"

/* Calls that start GPU work on a stream: their launch site is the
 * Python line users want to see next to the kernel or copy. */
static const char *const launch_prefixes[] = {
    "cudaLaunch", "cudaMemcpy", "cudaMemset", "cudaGraphLaunch",
    "cuLaunch", "cuMemcpy", "cuMemset", "cuGraphLaunch",
};

/* Queries frameworks issue thousands of times per second (PyTorch asks
 * for the current device around nearly every op).  Recording them would
 * dwarf the calls that matter and cost a record each; they cause no GPU
 * work, so no activity ever correlates to them. */
static const char *const noisy_names[] = {
    /* runtime */
    "cudaGetDevice", "cudaGetDeviceCount", "cudaGetDeviceProperties",
    "cudaDeviceGetAttribute", "cudaGetLastError", "cudaPeekAtLastError",
    "cudaStreamQuery", "cudaEventQuery", "cudaPointerGetAttributes",
    "cudaStreamIsCapturing", "cudaStreamGetCaptureInfo",
    "cudaThreadExchangeStreamCaptureMode", "cudaFuncGetAttributes",
    "cudaDriverGetVersion", "cudaRuntimeGetVersion", "cudaGetDriverEntryPoint",
    "cudaGetDriverEntryPointByVersion", "cudaDeviceGetStreamPriorityRange",
    "cudaStreamGetPriority", "cudaStreamGetFlags", "cudaStreamGetId",
    "cudaGetFuncBySymbol",
    /* driver */
    "cuCtxGetCurrent", "cuCtxGetDevice", "cuCtxGetId", "cuCtxGetFlags",
    "cuCtxGetStreamPriorityRange", "cuDeviceGet", "cuDeviceGetCount",
    "cuDeviceGetAttribute", "cuDeviceGetName", "cuDeviceGetUuid",
    "cuDevicePrimaryCtxGetState", "cuDriverGetVersion", "cuGetProcAddress",
    "cuStreamQuery", "cuEventQuery", "cuPointerGetAttribute",
    "cuPointerGetAttributes", "cuStreamIsCapturing", "cuStreamGetCaptureInfo",
    "cuThreadExchangeStreamCaptureMode", "cuFuncGetAttribute",
    "cuKernelGetAttribute", "cuStreamGetCtx", "cuStreamGetId",
    "cuStreamGetFlags", "cuStreamGetPriority",
};

/* Calls that can make the host wait for the device (docs/gpu.md, "Where
 * does my code wait for the GPU?"): the line that waits is what users
 * look for (.item(), .cpu(), print(tensor)).  cudaStreamWaitEvent makes
 * a stream wait, and the host only in some cases (a full launch queue):
 * flagged too, its measured time says whether it did. */
static const char *const sync_names[] = {
    "cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaStreamSynchronize",
    "cudaEventSynchronize", "cudaStreamWaitEvent",
    "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize", "cuStreamWaitEvent",
};

/* The synchronous copies and memsets: every cudaMemcpy* / cuMemcpy* /
 * cudaMemset* / cuMemset* whose name has no "Async".  A copy from the
 * device into pageable memory always waits for the device; the others
 * may return early (a small host-to-device copy is staged), so the flag
 * says "can wait", and the call's time says how long it did. */
static const char *const sync_copy_prefixes[] = {
    "cudaMemcpy", "cudaMemset", "cuMemcpy", "cuMemset",
};

/* Calls that end a graph capture or instantiate a graph: their stack is
 * the line that captured the graph its replays run. */
static const char *const graph_prefixes[] = {
    "cudaStreamEndCapture", "cuStreamEndCapture", "cudaGraphInstantiate", "cuGraphInstantiate",
};

/* Calls after which a context's records can no longer be flushed. */
static const char *const flush_names[] = {
    "cudaDeviceReset", "cuDevicePrimaryCtxReset", "cuCtxDestroy",
};

#define N_ELEMS(a) (sizeof (a) / sizeof (a)[0])

struct cupti_names {
    char **name[2];       /* [0] driver, [1] runtime; index = cbid */
    uint8_t *cls[2];
    uint32_t count[2];
};

static int dom_index(CUpti_CallbackDomain d)
{
    return d == CUPTI_CB_DOMAIN_DRIVER_API ? 0 : d == CUPTI_CB_DOMAIN_RUNTIME_API ? 1 : -1;
}

uint32_t cupti_names_count(CUpti_CallbackDomain domain)
{
    switch (domain) {
    case CUPTI_CB_DOMAIN_DRIVER_API: return CUPTI_DRIVER_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RUNTIME_API: return CUPTI_RUNTIME_TRACE_CBID_SIZE;
    default: return 0;
    }
}

void cupti_name_strip(const char *in, char *out, size_t outlen)
{
    size_t n;
    int changed = 1;

    if (!outlen)
        return;
    snprintf(out, outlen, "%s", in ? in : "");
    n = strlen(out);
    while (changed) {
        changed = 0;
        /* "_v" + digits */
        size_t i = n;
        while (i > 0 && out[i - 1] >= '0' && out[i - 1] <= '9')
            i--;
        if (i < n && i >= 2 && out[i - 1] == 'v' && out[i - 2] == '_' && i > 2) {
            n = i - 2;
            out[n] = 0;
            changed = 1;
        }
        if (n > 5 && (strcmp(out + n - 5, "_ptsz") == 0 || strcmp(out + n - 5, "_ptds") == 0)) {
            n -= 5;
            out[n] = 0;
            changed = 1;
        }
    }
}

unsigned cupti_name_classify(const char *s)
{
    unsigned c = 0;
    for (size_t i = 0; i < N_ELEMS(launch_prefixes); i++)
        if (strncmp(s, launch_prefixes[i], strlen(launch_prefixes[i])) == 0)
            c |= CUPTI_NAME_LAUNCH;
    for (size_t i = 0; i < N_ELEMS(noisy_names); i++)
        if (strcmp(s, noisy_names[i]) == 0)
            c |= CUPTI_NAME_NOISY;
    for (size_t i = 0; i < N_ELEMS(flush_names); i++)
        if (strcmp(s, flush_names[i]) == 0)
            c |= CUPTI_NAME_FLUSH;
    for (size_t i = 0; i < N_ELEMS(sync_names); i++)
        if (strcmp(s, sync_names[i]) == 0)
            c |= CUPTI_NAME_SYNC;
    for (size_t i = 0; i < N_ELEMS(sync_copy_prefixes); i++)
        if (strncmp(s, sync_copy_prefixes[i], strlen(sync_copy_prefixes[i])) == 0 &&
            !strstr(s, "Async"))
            c |= CUPTI_NAME_SYNC;
    for (size_t i = 0; i < N_ELEMS(graph_prefixes); i++)
        if (strncmp(s, graph_prefixes[i], strlen(graph_prefixes[i])) == 0)
            c |= CUPTI_NAME_GRAPH;
    if (strncmp(s, "cudaGraphInstantiate", 20) == 0 || strncmp(s, "cuGraphInstantiate", 18) == 0)
        c |= CUPTI_NAME_INSTANTIATE;
    return c;
}

/* A libcupti newer than the headers numbers the APIs added since after
 * the headers' *_CBID_SIZE, so ids past it are asked for their names
 * too (a new cuLaunch... then gets its stack); the probe ends after
 * PROBE_GAP unknown ids in a row, or PROBE_MAX past the compiled size. */
#define PROBE_GAP 64u
#define PROBE_MAX 4096u

/* 1 while id is still worth asking about: below the compiled size, or
 * within the probe window after the last id that had a name. */
static int probe_on(uint32_t id, uint32_t compiled, uint32_t count)
{
    uint32_t from = count > compiled ? count : compiled;
    return id < compiled || (id < compiled + PROBE_MAX && id - from < PROBE_GAP);
}

cupti_names *cupti_names_new(const cupti_api *api)
{
    static const CUpti_CallbackDomain doms[2] = { CUPTI_CB_DOMAIN_DRIVER_API,
                                                  CUPTI_CB_DOMAIN_RUNTIME_API };
    cupti_names *n = trc_calloc(1, sizeof *n);
    char buf[256];

    if (!n)
        return NULL;
    for (int d = 0; d < 2; d++) {
        uint32_t compiled = cupti_names_count(doms[d]);
        size_t name_cap = 0, cls_cap = 0;
        /* count = highest named id + 1, at least the compiled size so
         * that every compiled id has a row */
        if (trcu_grow((void **)&n->name[d], &name_cap, compiled, sizeof *n->name[d]) != TRC_OK ||
            trcu_grow((void **)&n->cls[d], &cls_cap, compiled, 1) != TRC_OK)
            goto fail;
        n->count[d] = compiled;
        for (uint32_t id = 1; probe_on(id, compiled, n->count[d]); id++) {
            const char *raw = NULL;
            if (api->GetCallbackName(doms[d], id, &raw) != CUPTI_SUCCESS || !raw || !*raw)
                continue;
            if (trcu_grow((void **)&n->name[d], &name_cap, id, sizeof *n->name[d]) != TRC_OK ||
                trcu_grow((void **)&n->cls[d], &cls_cap, id, 1) != TRC_OK)
                goto fail;
            cupti_name_strip(raw, buf, sizeof buf);
            if (!(n->name[d][id] = trc_strdup(buf)))
                goto fail;
            n->cls[d][id] = (uint8_t)cupti_name_classify(buf);
            if (id >= n->count[d])
                n->count[d] = id + 1;
        }
    }
    return n;
fail:
    cupti_names_free(n);
    return NULL;
}

void cupti_names_free(cupti_names *n)
{
    if (!n)
        return;
    for (int d = 0; d < 2; d++) {
        if (n->name[d])
            for (uint32_t i = 0; i < n->count[d]; i++)
                trc_free(n->name[d][i]);
        trc_free(n->name[d]);
        trc_free(n->cls[d]);
    }
    trc_free(n);
}

const char *cupti_names_get(const cupti_names *n, CUpti_CallbackDomain domain, uint32_t cbid)
{
    static __thread char buf[32];
    int d = dom_index(domain);
    if (n && d >= 0 && cbid < n->count[d] && n->name[d][cbid])
        return n->name[d][cbid];
    snprintf(buf, sizeof buf, "cbid %u", cbid);
    return buf;
}

uint32_t cupti_names_known(const cupti_names *n, CUpti_CallbackDomain domain)
{
    int d = dom_index(domain);
    return n && d >= 0 ? n->count[d] : 0;
}

unsigned cupti_names_class(const cupti_names *n, CUpti_CallbackDomain domain, uint32_t cbid)
{
    int d = dom_index(domain);
    if (n && d >= 0 && cbid < n->count[d])
        return n->cls[d][cbid];
    return 0;
}

/* ---- demangling ---------------------------------------------------- */

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

typedef struct dm_entry {
    const char *key;      /* CUPTI's pointer */
    char *mangled;        /* our copy, to detect a reused pointer */
    char *demangled;      /* NULL = same as mangled */
} dm_entry;

#define DM_MAX 4096       /* distinct kernels kept; then the cache starts over */

struct cupti_demangler {
    cxa_demangle_fn fn;
    void *lib;
    dm_entry *ent;        /* DM_MAX entries, the first n used */
    uint32_t n;
    trch_index idx;       /* by CUPTI's pointer */
};

cupti_demangler *cupti_demangler_new(void)
{
    cupti_demangler *d = trc_calloc(1, sizeof *d);
    void *p;

    if (!d || !(d->ent = trc_calloc(DM_MAX, sizeof *d->ent))) {
        trc_free(d);
        return NULL;
    }
    p = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (!p) {
        /* CUDA C programs need not load the C++ runtime; PyTorch does. */
        d->lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        p = d->lib ? dlsym(d->lib, "__cxa_demangle") : NULL;
    }
    memcpy(&d->fn, &p, sizeof d->fn);
    return d;
}

static void dm_clear(cupti_demangler *d)
{
    for (uint32_t i = 0; i < d->n; i++) {
        free(d->ent[i].demangled);          /* from __cxa_demangle's malloc */
        trc_free(d->ent[i].mangled);
    }
    memset(d->ent, 0, (size_t)d->n * sizeof *d->ent);
    d->n = 0;
    trch_index_cleanup(&d->idx);
}

void cupti_demangler_free(cupti_demangler *d)
{
    if (!d)
        return;
    dm_clear(d);
    trc_free(d->ent);
    /* d->lib stays loaded: unloading the C++ runtime is never safe */
    trc_free(d);
}

const char *cupti_demangle(cupti_demangler *d, const char *name)
{
    int status = -1;

    if (!d || !name || !d->fn || strncmp(name, "_Z", 2) != 0)
        return name;
    uint64_t h = trch_hash_u64((uint64_t)(uintptr_t)name);
    trch_probe p;
    for (uint32_t i = trch_first(&d->idx, h, &p); i != TRCH_NONE; i = trch_next(&d->idx, &p)) {
        const dm_entry *e = &d->ent[i];
        if (e->key == name && strcmp(e->mangled, name) == 0)
            return e->demangled ? e->demangled : name;
    }
    if (d->n >= DM_MAX)
        dm_clear(d);
    char *copy = trc_strdup(name);
    if (!copy)
        return name;
    char *out = d->fn(name, NULL, NULL, &status);
    if (status != 0) {
        free(out);
        out = NULL;
    }
    if (trch_add(&d->idx, h, d->n) != TRC_OK) {
        free(out);
        trc_free(copy);
        return name;
    }
    d->ent[d->n++] = (dm_entry){ name, copy, out };
    return out ? out : name;
}
