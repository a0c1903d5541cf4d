# tests/gpu/via_thread.py — run under trec by tests/e2e/gpu_via_thread.sh:
# the backward pass of a training step played over the fake CUPTI.  The
# main thread calls backward(), which waits (in a ctypes call, the GIL
# released, as torch's run_backward does) while a thread started in C,
# with no Python frames, launches the kernels.  Usage: via_thread.py LIB N GAP_MS
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
n, gap_ms = int(sys.argv[2]), int(sys.argv[3])


def backward():
    return lib.fake_native_launches(n, gap_ms)  # line 14: the waiting line


def train_step():
    return backward()  # line 18


if lib.fake_start() != 0:
    sys.exit(2)
rc = train_step()
sys.exit(3 if lib.fake_stop() != 0 else rc)
