# tests/gpu/real_torch_check.py — the workload of the real-GPU check
# (run by tests/gpu/run_real_check.sh on a machine with a GPU).
#
# Runs, after a warm-up, six windows, each inside an NVTX range named
# "trc-check:NAME" and bracketed by torch.cuda.Event timings and
# time.monotonic_ns() readings (CLOCK_MONOTONIC: the trace clock):
#   elementwise  N in-place adds on a large tensor: exactly one kernel each
#   matmul       N large matmuls queued back to back: the GPU is busy the
#                whole window, so the events' elapsed time is the kernels' time
#   copies       host->device and device->host copies (pinned and pageable)
#   pinned       host->device and device->host copies, pinned memory both
#                ways, asynchronous (the copies the overhead is judged on)
#   train        a small MLP training step (forward, backward, SGD), with the
#                forward call on a known line
#   syncs        N host waits for the GPU at known lines: a `.item()` and a
#                `.cpu()` (a device-to-host copy into pageable memory)
# and writes what it measured as JSON (--out), the lines of its syncs
# included (each read from the frame, never written down by hand).  The
# check against the trace is tests/gpu/check_real_trace.py.
import argparse
import inspect
import json
import os
import sys
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--out", required=True)
p.add_argument("--n", type=int, default=200)
p.add_argument("--size", type=int, default=4096)
args = p.parse_args()

if not torch.cuda.is_available():
    print("real_torch_check: no CUDA device", file=sys.stderr)
    sys.exit(77)
dev = torch.device("cuda")
torch.backends.cuda.matmul.allow_tf32 = False
nvtx = torch.cuda.nvtx
windows = []


def window(name, fn, ops, kernels_per_op=None):
    torch.cuda.synchronize()
    ev0 = torch.cuda.Event(enable_timing=True)
    ev1 = torch.cuda.Event(enable_timing=True)
    nvtx.range_push("trc-check:" + name)
    t0 = time.monotonic_ns()
    ev0.record()
    fn()
    ev1.record()
    t1 = time.monotonic_ns()
    nvtx.range_pop()
    torch.cuda.synchronize()
    t2 = time.monotonic_ns()
    windows.append({
        "name": name,
        "ops": ops,
        "kernels_expected": None if kernels_per_op is None else ops * kernels_per_op,
        "gpu_ms": ev0.elapsed_time(ev1),
        "cpu_start_ns": t0,
        "cpu_launch_end_ns": t1,
        "cpu_end_ns": t2,
        "pid": os.getpid(),
    })


def elementwise(x, n):
    for _ in range(n):
        x.add_(1.0)


def matmuls(a, b, n):
    for _ in range(n):
        torch.mm(a, b)


def copies(host, pinned, n):
    for _ in range(n):
        d = host.to(dev, non_blocking=False)
        d2 = pinned.to(dev, non_blocking=True)
        d.cpu()
        d2.to("cpu")


def pinned_copies(pinned, back, n):
    # pinned memory both ways, asynchronous: what the overhead is judged
    # on (pageable copies stage through driver buffers, whose timing
    # varies run to run far more than any tracer's cost)
    for _ in range(n):
        d = pinned.to(dev, non_blocking=True)
        back.copy_(d, non_blocking=True)


model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
                            torch.nn.Linear(4096, 1024)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
FORWARD_LINE = BACKWARD_LINE = 0


def train_step(x, y):
    global FORWARD_LINE, BACKWARD_LINE
    opt.zero_grad(set_to_none=True)
    FORWARD_LINE = inspect.currentframe().f_lineno + 1
    out = model(x)
    loss = torch.nn.functional.mse_loss(out, y)
    BACKWARD_LINE = inspect.currentframe().f_lineno + 1
    loss.backward()
    opt.step()
    return loss


SYNCS = []


def next_line():
    """The line after the caller's: where the sync it announces sits."""
    return inspect.currentframe().f_back.f_lineno + 1


def syncs(x, n):
    item_line = cpu_line = 0
    for _ in range(n):
        x.add_(1.0)
        item_line = next_line()
        x.sum().item()
        cpu_line = next_line()
        x[:1024].cpu()
    return [{"what": ".item()", "line": item_line, "calls": n},
            {"what": ".cpu()", "line": cpu_line, "calls": n}]


def train(n):
    x = torch.randn(256, 1024, device=dev)
    y = torch.randn(256, 1024, device=dev)
    for _ in range(n):
        train_step(x, y)


big = torch.zeros(1 << 24, device=dev)
a = torch.randn(args.size, args.size, device=dev)
b = torch.randn(args.size, args.size, device=dev)
host = torch.randn(1 << 22)
pinned = torch.randn(1 << 22).pin_memory()
back = torch.empty(1 << 22).pin_memory()

# warm-up: cuBLAS handles, allocator, autograd threads, lazy module loads
elementwise(big, 5)
matmuls(a, b, 3)
copies(host, pinned, 2)
pinned_copies(pinned, back, 2)
train(3)
syncs(big, 2)
torch.cuda.synchronize()

start = time.perf_counter()
window("elementwise", lambda: elementwise(big, args.n), args.n, kernels_per_op=1)
window("matmul", lambda: matmuls(a, b, args.n // 4), args.n // 4)
window("copies", lambda: copies(host, pinned, 20), 20)
window("pinned", lambda: pinned_copies(pinned, back, 40), 40)
window("train", lambda: train(20), 20)
window("syncs", lambda: SYNCS.extend(syncs(big, 50)), 50)
wall = time.perf_counter() - start

with open(args.out, "w") as f:
    json.dump({
        "script": os.path.abspath(__file__),
        "forward_line": FORWARD_LINE,
        "backward_line": BACKWARD_LINE,
        "syncs": SYNCS,
        "wall_s": wall,
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "windows": windows,
    }, f, indent=1)
for s in SYNCS:
    print("real_torch_check: %d %s calls at line %d" % (s["calls"], s["what"], s["line"]))
print("real_torch_check: %.3f s of timed work on %s" % (wall, torch.cuda.get_device_name(0)))
