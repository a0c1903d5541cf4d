/*
 * py_names.c — threading-module names of threads (py_proc_thread_name).
 * Not implemented yet: always NULL, which the contract allows.
 */
#include "lib/py/py_internal.h"

const char *py_proc_thread_name(py_proc *p, int64_t tid)
{
    (void)p;
    (void)tid;
    return NULL;
}
