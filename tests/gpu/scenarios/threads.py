# expect: exit=0 needs=cuda kernels>=400 launch_threads>=4
# Four Python threads launch kernels at once: every launch call gets its
# own thread's stack (launch_threads counts threads whose launch calls
# carry a Python stack).
import threading

import torch

x = torch.ones(1 << 16, device="cuda")


def worker():
    y = x.clone()
    for _ in range(100):
        y.add_(1.0)  # one kernel per call
    torch.cuda.synchronize()


ts = [threading.Thread(target=worker) for _ in range(4)]
for t in ts:
    t.start()
for t in ts:
    t.join()
