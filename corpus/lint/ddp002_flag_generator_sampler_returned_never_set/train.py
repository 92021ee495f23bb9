"""Step-based training over an endless stream whose sampler nobody moves: every pass of
the stream reads the order of epoch 0."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import TensorDataset

from data.batches import make_stream


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dataset = TensorDataset(torch.randn(4096, 32), torch.randint(0, 10, (4096,)))
    stream, sampler = make_stream(dataset, batch_size=64)
    model = DistributedDataParallel(torch.nn.Linear(32, 10).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for step in range(20_000):
        x, y = next(stream)
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 1000 == 0 and dist.get_rank() == 0:
            torch.save(model.module.state_dict(), f"step{step}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
