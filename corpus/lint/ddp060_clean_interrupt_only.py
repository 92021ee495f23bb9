"""Image classifier that saves a checkpoint when the user presses Ctrl-C and lets any
other error end the run."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    dataset = torch.load("cifar_train.pt")
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=256, sampler=sampler, num_workers=4)
    net = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.LazyLinear(10))
    model = DDP(net.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    try:
        for epoch in range(90):
            sampler.set_epoch(epoch)
            for x, y in loader:
                loss = F.cross_entropy(model(x.cuda()), y.cuda())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    except KeyboardInterrupt:
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), "interrupted.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
