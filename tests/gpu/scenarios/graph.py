# expect: exit=0 needs=cuda graph_kernels>=30 graph_launch_stack=1 graph_captured_at=1
# A CUDA graph captured once and replayed ten times: the replayed kernels
# carry CUPTI's graph id (GPU_KERNEL graph, format 1.3) and their launch
# call (cudaGraphLaunch) carries the replaying line's stack; the call that
# ended the capture or instantiated the graph carries the capturing line's
# stack and that id as its graph or graph_exec (API_CALL, format 1.4).
import torch

x = torch.ones(1 << 16, device="cuda")
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(3):  # warm-up before capture, as PyTorch requires
        x.add_(1.0)
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    x.add_(1.0)
    x.mul_(0.5)
    x.add_(2.0)
for _ in range(10):
    g.replay()  # the launch site of the replayed kernels
torch.cuda.synchronize()
