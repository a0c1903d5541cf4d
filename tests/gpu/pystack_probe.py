# tests/gpu/pystack_probe.py — run by tests/unit/cupti/test_gpu_pystack.c under
# every installed CPython.  Calls the injection's launch-site capture
# (the code run at each CUDA launch) through ctypes, which releases the
# GIL like PyTorch does, from known lines; the C test checks the stack
# recorded in the trace.  Usage: python pystack_probe.py LIB OUT [MODE]
#   (no MODE)  on the main thread: expects a stack (exit 0 when found)
#   thread     on a threading.Thread: expects a stack
#   native     on a thread created in C that never ran Python (PyTorch's
#              autograd workers): expects no stack; the same capture on
#              the main thread first (to OUT.main) must find one, so "no
#              stack" means "no Python frames", not "walker failed"
#   many       10,000 launch captures on such a C thread; the cost
#              (thread lists read, allocations) is written to OUT for the
#              C test to check
import ctypes
import sys
import threading

lib = ctypes.CDLL(sys.argv[1])
lib.trec_cupti_test_capture_stack.argtypes = [ctypes.c_char_p]
result = []


def launch_site(path):
    result.append(lib.trec_cupti_test_capture_stack(path.encode()))  # line 25


def forward(path):
    launch_site(path)  # line 29


class Model:
    def step(self, path):
        forward(path)  # line 34


def on_native_thread(path, fn=None):
    """pthread_create straight from libc, the capture as start routine."""
    libc = ctypes.CDLL(None)
    vp = ctypes.c_void_p
    libc.pthread_create.argtypes = [ctypes.POINTER(ctypes.c_ulong), vp, vp, vp]
    libc.pthread_join.argtypes = [ctypes.c_ulong, ctypes.POINTER(vp)]
    start = ctypes.cast(fn or lib.trec_cupti_test_capture_stack, vp)
    arg = ctypes.c_char_p(path.encode())
    th, ret = ctypes.c_ulong(), vp()
    if libc.pthread_create(ctypes.byref(th), None, start, ctypes.cast(arg, vp)) != 0:
        sys.exit(2)
    libc.pthread_join(th, ctypes.byref(ret))
    # the start routine returns an int: its low 32 bits
    return ctypes.c_int32((ret.value or 0) & 0xFFFFFFFF).value


mode = sys.argv[3] if len(sys.argv) > 3 else ""
if mode == "thread":
    t = threading.Thread(target=Model().step, args=(sys.argv[2],), name="worker")
    t.start()
    t.join()
elif mode == "many":
    Model().step(sys.argv[2] + ".main")  # the walker works in this process
    rc = on_native_thread(sys.argv[2], lib.trec_cupti_test_launches)
    sys.exit(0 if result[0] == 1 and rc == 0 else 1)
elif mode == "native":
    Model().step(sys.argv[2] + ".main")  # line 63
    native = on_native_thread(sys.argv[2])
    print(result[0], native)
    sys.exit(0 if result[0] == 1 and native == 0 else 1)
else:
    Model().step(sys.argv[2])  # line 68
print(result[0])
sys.exit(0 if result[0] == 1 else 1)
