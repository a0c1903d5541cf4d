# tests/gpu/via_thread.py — run under trec by tests/e2e/gpu_via_thread.sh:
# the backward pass of a training step played over the fake CUPTI.  The
# calling thread waits in backward() (in a ctypes call, the GIL released,
# as torch's run_backward does) while a thread started in C, with no
# Python frames, launches the kernels.  Usage: via_thread.py LIB N GAP_MS
# [trainer]: with "trainer", a Python thread runs the step while the main
# thread polls it from idle_wait(), off CPU in time.sleep.
import ctypes, sys, threading, time

lib = ctypes.CDLL(sys.argv[1])
n, gap_ms = int(sys.argv[2]), int(sys.argv[3])


def backward():
    return lib.fake_native_launches(n, gap_ms)  # line 15: the waiting line


def train_step(out):
    out.append(backward())  # line 19


def idle_wait(t):
    while t.is_alive():
        time.sleep(0.002)  # line 24: off CPU, but not waiting for the GPU


if lib.fake_start() != 0:
    sys.exit(2)
rc = []
if sys.argv[4:] == ["trainer"]:
    t = threading.Thread(target=train_step, args=(rc,), name="trainer")
    t.start()
    idle_wait(t)
    t.join()
else:
    train_step(rc)
sys.exit(3 if lib.fake_stop() != 0 else rc[0])
