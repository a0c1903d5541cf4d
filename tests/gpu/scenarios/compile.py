# expect: exit=0 needs=cuda kernels>=10 launch_stacks>=10
# torch.compile: Triton kernels launched through cuLaunchKernel, each
# launch with a Python stack.  Exit 77 when this machine cannot compile
# (Triton needs a C compiler for its launcher): the check says SKIP.
import sys

import torch


def f(a, b):
    return torch.sin(a) * torch.cos(b) + a


g = torch.compile(f)
a = torch.randn(1 << 16, device="cuda")
b = torch.randn(1 << 16, device="cuda")
try:
    g(a, b)
except Exception as e:  # the backend's failure, not trc's
    print("compile: torch.compile cannot compile here: %s" % str(e).splitlines()[0][:120])
    sys.exit(77)
for _ in range(20):
    g(a, b)
torch.cuda.synchronize()
