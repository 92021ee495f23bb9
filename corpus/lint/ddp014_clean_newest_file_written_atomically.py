"""Per-epoch checkpoint files written through a temporary name, and a restart that picks
the newest: the newest file is always complete."""
import glob
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(folder="checkpoints", epochs=100):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    blob = torch.load("data.pt", map_location="cpu")
    dataset = TensorDataset(blob["x"], blob["y"])
    model = DDP(nn.Linear(40, 4).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    start = 0
    files = sorted(glob.glob(os.path.join(folder, "epoch_*.pt")))
    if files:
        state = torch.load(files[-1], map_location="cpu")
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
            final = os.path.join(folder, f"epoch_{epoch:04d}.pt")
            torch.save(state, final + ".tmp")
            os.replace(final + ".tmp", final)
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
