"""The seed helper and the augmenting loader live in the project's tools package: the seed
helper is read, but the random draws are seen only in the text of the modules the file
imports, so the finding is unproven (shown under --preview)."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from tools.data import train_loader
from tools.utils import set_seed


def main(epochs=30, seed=0):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    set_seed(seed)  # expect-preview: DDP035
    loader = train_loader("data", batch_size=128)
    model = DDP(nn.Linear(3 * 32 * 32, 10).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank).flatten(1), y.cuda(local_rank)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
