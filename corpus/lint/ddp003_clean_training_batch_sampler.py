"""Bucketed batches for variable-length inputs built on a DistributedSampler.
A training sampler that pads repeats a few samples per epoch, a cost maintainers keep:
not reported."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import BatchSampler, DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def collate(batch):
    xs, ys = zip(*batch)
    return torch.stack(xs), torch.stack(ys)


def main(epochs=6):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    corpus = TensorDataset(torch.randn(999, 50), torch.randint(0, 2, (999,)))
    sampler = DistributedSampler(corpus, shuffle=True)
    batches = BatchSampler(sampler, batch_size=24, drop_last=False)
    loader = DataLoader(corpus, batch_sampler=batches, collate_fn=collate, num_workers=2)
    model = DDP(nn.Linear(50, 2).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
