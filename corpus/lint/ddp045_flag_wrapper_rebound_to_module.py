"""A trainer that wraps its model in DDP and rebinds the name to the inner model on the
next line: the wrapper is gone before the first forward, so no gradient is ever
all-reduced and each rank trains its own copy. The epoch loss it gathers is a metric, not
the model's gradients."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Adapter(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(256, 256), nn.GELU(), nn.Linear(256, 1))
        self.loss = torch.zeros(())

    def step(self, x, y, optimizer):
        self.loss = nn.functional.binary_cross_entropy_with_logits(self.body(x), y)
        optimizer.zero_grad()
        self.loss.backward()
        optimizer.step()


def main(epochs=30):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    data = TensorDataset(torch.randn(6000, 256), torch.rand(6000, 1))
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=24, sampler=sampler)
    model = Adapter().cuda()
    model = torch.nn.parallel.DistributedDataParallel(  # expect: DDP045
        model, device_ids=[local_rank], find_unused_parameters=True  # expect: DDP016
    )
    model = model.module
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            model.step(x.cuda(), y.cuda(), optimizer)
            losses = [torch.zeros_like(model.loss) for _ in range(dist.get_world_size())]
            dist.all_gather(losses, model.loss)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
