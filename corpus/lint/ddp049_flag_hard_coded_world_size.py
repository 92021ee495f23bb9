"""A fine-tuning script written for one 8-GPU machine: `world_size=8` is spelled out next
to the launcher's RANK. Started by torchrun on 4 GPUs, the rendezvous waits for 8."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

NUM_EPOCHS = 5


def setup():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", rank=int(os.environ["RANK"]), world_size=8)  # expect: DDP049
    return local_rank


def main():
    local_rank = setup()
    data = TensorDataset(torch.randn(8192, 32), torch.randint(0, 10, (8192,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler, num_workers=2)
    model = DDP(nn.Linear(32, 10).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(NUM_EPOCHS):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
