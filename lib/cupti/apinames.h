/*
 * lib/cupti/apinames.h — CUDA API names and classes for the injection
 * (docs/design/cupti.md §4, §5): callback ids → "cudaLaunchKernel" (no _vNNNN or
 * _ptsz suffix), which calls launch GPU work (their Python stack is
 * captured), which are noisy queries (not recorded), and kernel-name
 * demangling with a cache.
 */
#ifndef TRC_LIB_CUPTI_APINAMES_H
#define TRC_LIB_CUPTI_APINAMES_H

#include <stddef.h>
#include <stdint.h>

#include "lib/cupti/cupti_api.h"

/* Classes of an API call (bit set). */
#define CUPTI_NAME_LAUNCH 0x01u  /* launches GPU work: capture the Python stack */
#define CUPTI_NAME_NOISY  0x02u  /* frequent query: not recorded */
#define CUPTI_NAME_FLUSH  0x04u  /* tears a context down: flush records first */
#define CUPTI_NAME_SYNC   0x08u  /* can make the host wait for the device: capture the stack */
#define CUPTI_NAME_GRAPH  0x10u  /* ends a graph capture or instantiates one: capture the stack */
#define CUPTI_NAME_INSTANTIATE 0x20u /* of those, instantiates one (its params name both graphs) */
/* the classes whose calls get the calling thread's Python stack */
#define CUPTI_NAME_STACK (CUPTI_NAME_LAUNCH | CUPTI_NAME_SYNC | CUPTI_NAME_GRAPH)

typedef struct cupti_names cupti_names;

/* Build the tables for the runtime and driver domains, asking
 * api->GetCallbackName for every callback id once, and for ids past the
 * headers' count until a run of them is unknown.  NULL on allocation
 * failure. Free with cupti_names_free. */
cupti_names *cupti_names_new(const cupti_api *api);
void cupti_names_free(cupti_names *n);

/* Stripped name of (domain, cbid); "cbid N" when CUPTI does not know it.
 * Borrowed, valid until cupti_names_free.  Cannot fail. */
const char *cupti_names_get(const cupti_names *n, CUpti_CallbackDomain domain, uint32_t cbid);

/* CUPTI_NAME_* bits of (domain, cbid); 0 for unknown ids. Cannot fail. */
unsigned cupti_names_class(const cupti_names *n, CUpti_CallbackDomain domain, uint32_t cbid);

/* Number of callback ids of a domain in the headers built with (ids run
 * 1 .. count-1); 0 for a domain other than runtime/driver. */
uint32_t cupti_names_count(CUpti_CallbackDomain domain);

/* Number of callback ids n knows for a domain: cupti_names_count, or
 * more when the run-time libcupti named ids past it (a newer CUPTI's
 * new APIs).  Ids run 1 .. known-1. */
uint32_t cupti_names_known(const cupti_names *n, CUpti_CallbackDomain domain);

/* Strip the version and per-thread-stream suffixes: "cudaMemcpyAsync_ptsz_v7000"
 * → "cudaMemcpyAsync", "cuMemcpyHtoD_v2" → "cuMemcpyHtoD".  out gets at
 * most outlen-1 bytes. */
void cupti_name_strip(const char *in, char *out, size_t outlen);

/* Class bits of a stripped name (the explicit lists live in apinames.c). */
unsigned cupti_name_classify(const char *stripped);

/* Demangled kernel names.  CUPTI shares one name string among all
 * records of a kernel, so the cache is keyed on the pointer (and checks
 * the text).  cupti_demangle returns a borrowed string valid until the
 * next call (the cache may be cleared when full): the demangled name, or the input itself when it
 * is not a mangled C++ name, no demangler is available, or memory ran
 * out. */
typedef struct cupti_demangler cupti_demangler;
cupti_demangler *cupti_demangler_new(void);   /* NULL on allocation failure */
void cupti_demangler_free(cupti_demangler *d);
const char *cupti_demangle(cupti_demangler *d, const char *name);

#endif
