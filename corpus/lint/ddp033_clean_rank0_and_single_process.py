"""A script that runs with or without torchrun: the best model is reloaded for the final
test on rank 0 only, and the resume without `map_location` is in the single-process
branch (one process: the tensors go back to the GPU it uses)."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

BEST = "best.pt"


def test(model):
    model.load_state_dict(torch.load(BEST))
    with torch.no_grad():
        return model(torch.randn(4, 16, device="cuda:0")).mean().item()


def main():
    distributed = "LOCAL_RANK" in os.environ
    if distributed:
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
        net = nn.Linear(16, 2).cuda()
        model = DDP(net, device_ids=[local_rank])
    else:
        net = nn.Linear(16, 2).cuda()
        if os.path.exists(BEST):
            net.load_state_dict(torch.load(BEST))
        model = net
    optimizer = torch.optim.Adam(model.parameters())
    for _ in range(50):
        loss = model(torch.randn(8, 16, device="cuda")).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if not distributed or dist.get_rank() == 0:
        torch.save(net.state_dict(), BEST + ".tmp")
        os.replace(BEST + ".tmp", BEST)
        print(test(net))
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
