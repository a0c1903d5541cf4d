# expect: exit=0 needs=cuda kernels>=10 launch_stacks>=10
# torch.compile: Triton kernels launched through cuLaunchKernel, each
# launch with a Python stack.
import torch


def f(a, b):
    return torch.sin(a) * torch.cos(b) + a


g = torch.compile(f)
a = torch.randn(1 << 16, device="cuda")
b = torch.randn(1 << 16, device="cuda")
for _ in range(20):
    g(a, b)
torch.cuda.synchronize()
