/*
 * lib/cupti/cupti_api.c — finding libcupti at run time and filling the
 * cupti_api table (docs/design/cupti.md §1).  See cupti_api.h for the search order.
 *
 * Why dlopen: the injection must load (and stay harmless) in programs
 * on machines where libcupti is elsewhere or missing, and the tests
 * substitute a fake table; a link-time dependency allows neither.
 */
#include "lib/cupti/cupti_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUPTI_SONAME "libcupti.so.13"

/* 1 if handle h is a CUPTI 13 library (its symbols carry that version). */
static int is_cupti13(void *h)
{
    return dlvsym(h, "cuptiActivityEnable", CUPTI_SONAME) != NULL;
}

static void *try_open(const char *path, int check, char *why, size_t whylen)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why, whylen, "%s", e ? e : path);
        return NULL;
    }
    if (check && !is_cupti13(h)) {
        snprintf(why, whylen, "%s is not CUPTI 13", path);
        dlclose(h);
        return NULL;
    }
    return h;
}

/* Try .../nvidia/<pkg>/lib/libcupti.so.13 for every mapped library under
 * a ".../nvidia/" directory (how pip wheels lay out CUDA). */
static void *try_pip_layout(char *path, size_t pathlen, char *why, size_t whylen)
{
    static const char *const subdirs[] = { "cuda_cupti/lib", "cu13/lib" };
    FILE *f = fopen("/proc/self/maps", "re");
    char line[1024], root[512] = "";
    void *h = NULL;

    if (!f)
        return NULL;
    while (!h && fgets(line, sizeof line, f)) {
        char *p = strchr(line, '/');
        char *n = p ? strstr(p, "/nvidia/") : NULL;
        if (!n)
            continue;
        size_t len = (size_t)(n - p) + strlen("/nvidia/");
        if (len >= sizeof root || (root[0] && strncmp(root, p, len) == 0 && root[len] == 0))
            continue;
        memcpy(root, p, len);
        root[len] = 0;
        for (size_t i = 0; !h && i < sizeof subdirs / sizeof subdirs[0]; i++) {
            snprintf(path, pathlen, "%.400s%s/%s", root, subdirs[i], CUPTI_SONAME);
            h = try_open(path, 1, why, whylen);
        }
    }
    fclose(f);
    return h;
}

static void *open_cupti(char *path, size_t pathlen, char *why, size_t whylen)
{
    const char *env = getenv("TREC_CUPTI_LIB");
    const char *home = getenv("CUDA_HOME");
    static const char *const fixed[] = {
        "/usr/local/cuda/lib64/" CUPTI_SONAME,
        "/usr/local/cuda/extras/CUPTI/lib64/" CUPTI_SONAME,
    };
    void *h;

    if (env && *env) {
        snprintf(path, pathlen, "%s", env);
        return try_open(env, 0, why, whylen);
    }
    snprintf(path, pathlen, "%s", CUPTI_SONAME);
    if ((h = try_open(CUPTI_SONAME, 1, why, whylen)))
        return h;
    if (home && *home) {
        snprintf(path, pathlen, "%s/lib64/%s", home, CUPTI_SONAME);
        if ((h = try_open(path, 1, why, whylen)))
            return h;
    }
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        snprintf(path, pathlen, "%s", fixed[i]);
        if ((h = try_open(path, 1, why, whylen)))
            return h;
    }
    if ((h = try_pip_layout(path, pathlen, why, whylen)))
        return h;
    snprintf(why, whylen, "%s not found (set TREC_CUPTI_LIB to its path)", CUPTI_SONAME);
    return NULL;
}

/* dlsym into a typed slot: a function pointer cannot portably be
 * assigned from void *, so copy its bytes. */
static int sym(void *h, const char *name, void *slot, size_t slotlen, int required,
               char *err, size_t errlen)
{
    void *p = dlsym(h, name);
    if (!p && required) {
        snprintf(err, errlen, "libcupti lacks %s", name);
        return -1;
    }
    memcpy(slot, &p, slotlen);
    return 0;
}

#define SYM(field, name, req) \
    (sym(h, name, &api->field, sizeof api->field, req, err, errlen))

int cupti_api_load(cupti_api *api, char *err, size_t errlen)
{
    char why[400] = "";
    void *h;

    memset(api, 0, sizeof *api);
    h = open_cupti(api->path, sizeof api->path, why, sizeof why);
    if (!h) {
        snprintf(err, errlen, "cannot load CUPTI: %s", why);
        return -1;
    }
    if (SYM(GetResultString, "cuptiGetResultString", 1) ||
        SYM(GetCallbackName, "cuptiGetCallbackName", 1) ||
        SYM(Subscribe, "cuptiSubscribe", 1) ||
        SYM(Subscribe_v2, "cuptiSubscribe_v2", 0) ||
        SYM(Unsubscribe, "cuptiUnsubscribe", 1) ||
        SYM(EnableCallback, "cuptiEnableCallback", 1) ||
        SYM(ActivityEnable, "cuptiActivityEnable", 1) ||
        SYM(ActivityDisable, "cuptiActivityDisable", 1) ||
        SYM(ActivityEnableRuntimeApi, "cuptiActivityEnableRuntimeApi", 0) ||
        SYM(ActivityEnableDriverApi, "cuptiActivityEnableDriverApi", 0) ||
        SYM(ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks", 1) ||
        SYM(ActivityRegisterTimestampCallback, "cuptiActivityRegisterTimestampCallback", 0) ||
        SYM(ActivityFlushAll, "cuptiActivityFlushAll", 1) ||
        SYM(ActivityGetNextRecord, "cuptiActivityGetNextRecord", 1) ||
        SYM(ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords", 1) ||
        SYM(SetThreadIdType, "cuptiSetThreadIdType", 1) ||
        SYM(GetTimestamp, "cuptiGetTimestamp", 1) ||
        SYM(GetVersion, "cuptiGetVersion", 0) ||
        SYM(GetGraphId, "cuptiGetGraphId", 0) ||
        SYM(GetGraphExecId, "cuptiGetGraphExecId", 0) ||
        SYM(InitializeInjectionNvtx, "InitializeInjectionNvtx", 0) ||
        SYM(InitializeInjectionNvtx2, "InitializeInjectionNvtx2", 0))
        return -1;   /* the handle stays open: harmless, and never reloaded */
    api->handle = h;
    return 0;
}

const char *cupti_api_result(const cupti_api *api, CUptiResult r)
{
    static __thread char buf[32];
    const char *s = NULL;
    if (api && api->GetResultString && api->GetResultString(r, &s) == CUPTI_SUCCESS && s)
        return s;
    snprintf(buf, sizeof buf, "error %d", (int)r);
    return buf;
}
