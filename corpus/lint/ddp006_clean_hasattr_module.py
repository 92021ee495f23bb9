"""Works with and without torchrun: unwraps only when the model is wrapped."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(epochs=4):
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    if distributed:
        dist.init_process_group("nccl")
    model = nn.Linear(12, 3).cuda(local_rank)
    if distributed:
        model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    data = TensorDataset(torch.randn(600, 12), torch.randint(0, 3, (600,)))
    sampler = DistributedSampler(data, drop_last=True) if distributed else None
    loader = DataLoader(data, batch_size=30, sampler=sampler, shuffle=sampler is None)
    for epoch in range(epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if not distributed or dist.get_rank() == 0:
        state = model.module.state_dict() if hasattr(model, "module") else model.state_dict()
        torch.save(state, "final.tmp")
        os.replace("final.tmp", "final.pt")
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
