# tests/gpu/pystack_probe.py — run by tests/unit/test_gpu_pystack.c under
# every installed CPython.  Calls the injection's launch-site capture
# (the code run at each CUDA launch) through ctypes, which releases the
# GIL like PyTorch does, from known lines; the C test checks the stack
# recorded in the trace.  Usage: python pystack_probe.py LIB OUT [thread]
import ctypes
import sys
import threading

lib = ctypes.CDLL(sys.argv[1])
lib.trec_cupti_test_capture_stack.argtypes = [ctypes.c_char_p]
result = []


def launch_site(path):
    result.append(lib.trec_cupti_test_capture_stack(path.encode()))  # line 16


def forward(path):
    launch_site(path)  # line 20


class Model:
    def step(self, path):
        forward(path)  # line 25


if len(sys.argv) > 3:
    t = threading.Thread(target=Model().step, args=(sys.argv[2],), name="worker")
    t.start()
    t.join()
else:
    Model().step(sys.argv[2])  # line 33
print(result[0])
sys.exit(0 if result[0] == 1 else 1)
