# expect: exit=0 needs=cuda kernels>=1
# A DataLoader with forked workers, started after CUDA is initialised:
# the workers (no CUDA in them) must exit cleanly and the parent's GPU
# recording must go on.
import torch
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, TensorDataset

x = torch.ones(1024, device="cuda")
x.add_(1.0)
torch.cuda.synchronize()
ds = TensorDataset(torch.arange(256, dtype=torch.float32))
dl = DataLoader(ds, batch_size=32, num_workers=2,
                multiprocessing_context=mp.get_context("fork"))
total = 0.0
for (batch,) in dl:
    total += float(batch.sum())
x.add_(total)
torch.cuda.synchronize()
