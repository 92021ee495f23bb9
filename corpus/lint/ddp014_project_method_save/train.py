"""The keeper's `save` writes `last_state.pth`, the file a restart resumes from, straight
onto its final name every epoch; its `save_safely` does not."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from keeper import Keeper


def main(out="runs", epochs=20):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    blob = torch.load("train.pt", map_location="cpu")
    dataset = TensorDataset(blob["x"], blob["y"])
    model = DDP(nn.Linear(16, 2).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    keeper = Keeper(out)
    last = os.path.join(out, "last_state.pth")
    start = 0
    if os.path.exists(last):
        state = keeper.load(last)
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start = state["epoch"] + 1
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    for epoch in range(start, epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            state = {
                "model": model.module.state_dict(),
                "optimizer": optimizer.state_dict(),
                "epoch": epoch,
            }
            keeper.save(state, last)  # expect: DDP014
            keeper.save_safely(state, os.path.join(out, "state.pth"))
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
