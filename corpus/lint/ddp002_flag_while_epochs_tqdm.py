"""A fine-tuning loop that runs `while True` until a step budget, over a tqdm-wrapped
loader."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
from tqdm import tqdm


def main(num_steps=10_000):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(3000, 12), torch.randint(0, 2, (3000,)))
    train_sampler = DistributedSampler(train_set, drop_last=True)
    train_loader = DataLoader(train_set, batch_size=32, sampler=train_sampler)
    model = DDP(nn.Linear(12, 2).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=3e-2)
    global_step = 0
    while True:  # expect: DDP002
        progress = tqdm(train_loader, disable=dist.get_rank() != 0)
        for x, y in progress:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            global_step += 1
            if global_step >= num_steps:
                break
        if global_step >= num_steps:
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
