"""Saves the unwrapped model and an EMA copy that was never wrapped."""
import copy
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def unwrap_model(model):
    return getattr(model, "module", model)


def main(epochs=3):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    base = nn.Linear(16, 4).cuda(local_rank)
    ema = copy.deepcopy(base).eval()
    model = DDP(base, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = TensorDataset(torch.randn(320, 16), torch.randint(0, 4, (320,)))
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                for e, p in zip(ema.parameters(), model.module.parameters()):
                    e.lerp_(p, 0.001)
        if dist.get_rank() == 0:
            state = {"model": unwrap_model(model).state_dict(), "ema": ema.state_dict()}
            torch.save(state, "weights.tmp")
            os.replace("weights.tmp", "weights.pt")
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
