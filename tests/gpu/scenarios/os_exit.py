# expect: exit=0 needs=cuda
# os._exit right after launching: no exit handlers run, so recent GPU
# records may be lost, but trec must finish and the trace must read clean.
import os

import torch

x = torch.ones(1 << 16, device="cuda")
for _ in range(50):
    x.add_(1.0)
torch.cuda.synchronize()
os._exit(0)
