"""One process on GPU 0 when the job has one process (`comm.size` is the world size that
`comm.setup` stored); under a launcher, one GPU per local rank."""

import torch
from torch.nn.parallel import DistributedDataParallel as DDP

import comm


def build(net):
    comm.setup()
    if comm.size > 1:
        device = torch.device("cuda", comm.local_rank)
        torch.cuda.set_device(device)
        scratch = torch.empty(8, device="cuda:0")  # expect: DDP001
        net = DDP(net.to(device), device_ids=[comm.local_rank])
    else:
        device = torch.device("cuda", 0)
        scratch = torch.empty(8, device=device)
        net = net.to(device)
    return net, scratch
