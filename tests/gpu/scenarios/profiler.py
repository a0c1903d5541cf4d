# expect: exit=0 needs=cuda samples>=1
# torch.profiler started inside the traced program (another CUPTI client,
# Kineto): GPU recording may be taken over (one loss record says so),
# but the program must run to its end and CPU recording must go on.
import torch
from torch.profiler import ProfilerActivity, profile

x = torch.ones(1 << 16, device="cuda")
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
    for _ in range(50):
        x.add_(1.0)
    torch.cuda.synchronize()
for _ in range(50):
    x.add_(1.0)
torch.cuda.synchronize()
