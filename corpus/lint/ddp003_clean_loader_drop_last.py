"""drop_last set on the DataLoader: no short last batch."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main(epochs=5, batch_size=64):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    dataset = TensorDataset(torch.randn(10_000, 40), torch.randn(10_000, 1))
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(
        dataset, batch_size=batch_size, sampler=sampler, drop_last=True, num_workers=4
    )
    model = DDP(nn.Linear(40, 1).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            pred = model(x.cuda(local_rank, non_blocking=True))
            loss = nn.functional.mse_loss(pred, y.cuda(local_rank, non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
