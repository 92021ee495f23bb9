"""torchrun --nproc_per_node=4 main.py"""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from engine import train_epoch


def main() -> None:
    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
    else:
        local_rank = 0
    device = torch.device("cuda", local_rank)
    data = torch.load("scores.pt")
    dataset = TensorDataset(data["images"], data["scores"])
    if distributed:
        sampler = DistributedSampler(dataset, shuffle=True)
        loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    else:
        sampler = None
        loader = DataLoader(dataset, batch_size=32, shuffle=True)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 224 * 224, 1)).to(device)
    if distributed:
        model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for epoch in range(30):
        if sampler is not None:
            sampler.set_epoch(epoch)
        loss = train_epoch(model, loader, torch.nn.MSELoss(), optimizer, device)
        if not distributed or dist.get_rank() == 0:
            print(f"epoch {epoch}: train loss {loss:.4f}")


if __name__ == "__main__":
    main()
