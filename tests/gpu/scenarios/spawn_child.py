# expect: exit=0 needs=cuda kernels>=2 gpu_processes>=2
# A spawn child that uses CUDA: its own side trace is merged (a second
# process with GPU activity).
import torch
import torch.multiprocessing as mp


def child():
    y = torch.ones(1024, device="cuda")
    y.add_(1.0)
    torch.cuda.synchronize()


if __name__ == "__main__":
    x = torch.ones(1024, device="cuda")
    x.add_(1.0)
    torch.cuda.synchronize()
    p = mp.get_context("spawn").Process(target=child)
    p.start()
    p.join()
    raise SystemExit(p.exitcode)
