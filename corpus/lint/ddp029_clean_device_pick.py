"""The device count only picks this process's GPU; the batch is split by the world size."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

GLOBAL_BATCH = 512


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    device_id = local_rank % torch.cuda.device_count()
    torch.cuda.set_device(device_id)
    world_size = dist.get_world_size()
    batch = GLOBAL_BATCH // world_size
    lr = 0.02 * world_size
    dataset = TensorDataset(torch.randn(30000, 24), torch.randint(0, 6, (30000,)))
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=batch, sampler=sampler)
    model = DDP(nn.Linear(24, 6).cuda(device_id), device_ids=[device_id])
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for epoch in range(15):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(device_id), y.cuda(device_id)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
