"""Trains a probe on fixed features. Every rank seeds torch alike, and the dataset class it
uses draws nothing (the module's other class does): no augmentation repeats across ranks.
The draws are in the text of the imported module only, so the seed stays unproven."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from data.tasks import Probe


def main(seed=7, epochs=10):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    torch.manual_seed(seed)  # expect-preview: DDP035
    dataset = Probe(torch.randn(4096, 768), torch.randint(0, 4, (4096,)))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler, num_workers=2)
    probe = DDP(nn.Linear(768, 4).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(probe.parameters(), lr=1e-3)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(probe(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
