"""V100 training: float16 autocast, where the GradScaler is needed."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.cuda.amp import GradScaler
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")

    data = TensorDataset(torch.randn(8192, 256), torch.randint(0, 100, (8192,)))
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 100)).cuda(local_rank)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    scaler = GradScaler(init_scale=2.0**14)

    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=128, sampler=sampler, num_workers=4, pin_memory=True)
    for epoch in range(8):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank, non_blocking=True), y.cuda(local_rank, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        if dist.get_rank() == 0:
            print(f"epoch {epoch} loss {loss.item():.3f} scale {scaler.get_scale():.0f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
