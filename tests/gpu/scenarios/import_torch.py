# expect: exit=0 needs=torch samples>=1
# import torch alone, no CUDA call: nothing GPU-side may break the run.
import time

import torch  # noqa: F401

t = time.time()
while time.time() - t < 0.3:
    pass
