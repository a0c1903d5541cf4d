/* _sigstack: the in-process sampler behind tests/e2e/lib/sigstack_ref.py.
 * A SIGALRM handler written in C reads the interrupted thread's frame
 * chain at the instant the signal comes, wherever the thread is (in a
 * C function, between two bytecodes), using the running CPython's own
 * headers; a handler written in Python runs only at the interpreter's
 * next eval-breaker check (see sigstack_ref.py's docstring).
 *
 * The handler only reads memory and stores the code objects' addresses
 * in a buffer allocated beforehand; names are found afterwards, in
 * Python, for the addresses of code objects known to be alive.  It
 * reads the thread the signal interrupted: the fidelity workloads run
 * one thread.
 *
 * From 3.11 frames are _PyInterpreterFrame, declared only in CPython's
 * internal headers, which need Py_BUILD_CORE.
 *
 * Built at test time against the interpreter under test:
 *   cc -shared -fPIC -O2 -I INCLUDE sigstack.c -o _sigstack.SO */
#define _GNU_SOURCE 1
#define PY_SSIZE_T_CLEAN
#define Py_BUILD_CORE 1
#include <Python.h>
#if PY_VERSION_HEX >= 0x030B0000
#include <internal/pycore_frame.h>
#else
#include <frameobject.h>
#endif
#undef Py_BUILD_CORE

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <setjmp.h>

#define MAX_DEPTH 256

static uintptr_t *buf;          /* cap samples of MAX_DEPTH addresses */
static unsigned short *depths;  /* frames stored per sample */
static volatile size_t taken;   /* samples stored */
static volatile size_t dropped; /* signals after the buffer filled */
static size_t cap;

static PyThreadState *current_thread(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    return PyThreadState_GetUnchecked();
#else
    return _PyThreadState_UncheckedGet();
#endif
}

#if PY_VERSION_HEX >= 0x030B0000
/* CPython's _PyFrame_IsIncomplete: the code object of a frame
 * that has started, else 0 (a call pushed but not started, the C
 * stack's shims, or memory that is no frame). */
static uintptr_t started_code(const _PyInterpreterFrame *f)
{
#if PY_VERSION_HEX >= 0x030C0000
    if (f->owner == FRAME_OWNED_BY_CSTACK)
        return 0;
#endif
#if PY_VERSION_HEX >= 0x030D0000
    const PyObject *code = f->f_executable;
    const _Py_CODEUNIT *next = f->instr_ptr;
#else
    const PyObject *code = (const PyObject *)f->f_code;
    const _Py_CODEUNIT *next = f->prev_instr + 1;
#endif
    if (code == NULL || Py_TYPE(code) != &PyCode_Type)
        return 0;
    const PyCodeObject *c = (const PyCodeObject *)code;
    if (f->owner != FRAME_OWNED_BY_GENERATOR && next < _PyCode_CODE(c) + c->_co_firsttraceable)
        return 0;
    return (uintptr_t)code;
}
#endif

/* Innermost first, as f_back walks: frames Python itself would show
 * (from 3.11 not the incomplete ones a call has pushed but not yet
 * started, nor the C stack's shims). */
static size_t read_stack(PyThreadState *ts, uintptr_t *out)
{
    size_t n = 0;
    if (ts == NULL)
        return 0;
#if PY_VERSION_HEX >= 0x030B0000
#if PY_VERSION_HEX >= 0x030D0000
    const _PyInterpreterFrame *f = ts->current_frame;
#else
    const _PyInterpreterFrame *f = ts->cframe != NULL ? ts->cframe->current_frame : NULL;
#endif
    for (size_t seen = 0; f != NULL && n < MAX_DEPTH && seen < 4 * MAX_DEPTH; f = f->previous, seen++) {
        uintptr_t c = started_code(f);
        if (c != 0)
            out[n++] = c;
    }
#else
    for (const PyFrameObject *f = ts->frame; f != NULL && n < MAX_DEPTH; f = f->f_back)
        out[n++] = (uintptr_t)f->f_code;
#endif
    return n;
}

/* The signal may come while the interpreter sets a frame up (3.12
 * points tstate->cframe at a C frame whose current_frame is not yet
 * set), so a pointer the walk follows may be garbage: a fault while it
 * walks jumps back, and the sample is a single address 1, which
 * sigstack_ref.py counts as torn (garbage that does not fault gives
 * addresses of no known code, counted the same way). */
static sigjmp_buf walk_fault;
static volatile sig_atomic_t walking;
static struct sigaction old_segv, old_bus;

static void on_fault(int sig)
{
    if (walking)
        siglongjmp(walk_fault, 1);
    sigaction(SIGSEGV, &old_segv, NULL);
    sigaction(SIGBUS, &old_bus, NULL);
    raise(sig);
}

static void on_signal(int sig)
{
    (void)sig;
    int saved = errno;
    size_t i = taken;
    if (i < cap) {
        uintptr_t *out = buf + i * MAX_DEPTH;
        if (sigsetjmp(walk_fault, 1) == 0) {
            walking = 1;
            depths[i] = (unsigned short)read_stack(current_thread(), out);
        } else {
            out[0] = 1;
            depths[i] = 1;
        }
        walking = 0;
        taken = i + 1;
    } else {
        dropped = dropped + 1;
    }
    errno = saved;
}

static struct sigaction old_action;

/* start(interval_s, max_samples): ITIMER_REAL, as inproc_sampler.py */
static PyObject *start(PyObject *self, PyObject *args)
{
    double interval;
    Py_ssize_t max_samples;
    (void)self;
    if (!PyArg_ParseTuple(args, "dn", &interval, &max_samples))
        return NULL;
    free(buf);
    free(depths);
    cap = (size_t)max_samples;
    buf = calloc(cap, MAX_DEPTH * sizeof *buf);
    depths = calloc(cap, sizeof *depths);
    if (buf == NULL || depths == NULL)
        return PyErr_NoMemory();
    taken = dropped = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, &old_action) != 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    sa.sa_handler = on_fault;
    sa.sa_flags = SA_NODEFER;
    if (sigaction(SIGSEGV, &sa, &old_segv) != 0 || sigaction(SIGBUS, &sa, &old_bus) != 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    struct itimerval it;
    it.it_interval.tv_sec = (time_t)interval;
    it.it_interval.tv_usec = (suseconds_t)((interval - (double)it.it_interval.tv_sec) * 1e6);
    it.it_value = it.it_interval;
    if (setitimer(ITIMER_REAL, &it, NULL) != 0)
        return PyErr_SetFromErrno(PyExc_OSError);
    Py_RETURN_NONE;
}

/* stop() -> (list of tuples of code addresses, innermost first; dropped) */
static PyObject *stop(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    struct itimerval off;
    memset(&off, 0, sizeof off);
    setitimer(ITIMER_REAL, &off, NULL);
    sigaction(SIGALRM, &old_action, NULL);
    sigaction(SIGSEGV, &old_segv, NULL);
    sigaction(SIGBUS, &old_bus, NULL);
    PyObject *samples = PyList_New((Py_ssize_t)taken);
    if (samples == NULL)
        return NULL;
    for (size_t i = 0; i < taken; i++) {
        PyObject *t = PyTuple_New(depths[i]);
        if (t == NULL) {
            Py_DECREF(samples);
            return NULL;
        }
        for (size_t j = 0; j < depths[i]; j++) {
            PyObject *a = PyLong_FromSize_t(buf[i * MAX_DEPTH + j]);
            if (a == NULL) {
                Py_DECREF(t);
                Py_DECREF(samples);
                return NULL;
            }
            PyTuple_SET_ITEM(t, (Py_ssize_t)j, a);
        }
        PyList_SET_ITEM(samples, (Py_ssize_t)i, t);
    }
    free(buf);
    free(depths);
    buf = NULL;
    depths = NULL;
    return Py_BuildValue("(Nn)", samples, (Py_ssize_t)dropped);
}

static PyMethodDef methods[] = {
    {"start", start, METH_VARARGS, "start(interval_s, max_samples)"},
    {"stop", stop, METH_NOARGS, "stop() -> (samples, dropped)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_sigstack", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__sigstack(void)
{
    return PyModule_Create(&module);
}
