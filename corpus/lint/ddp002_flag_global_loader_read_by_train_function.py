"""Lane-detection style script: the loaders are module globals built under `__main__`, and
`train(epoch)` iterates the global `train_loader` through a rank-0 progress bar. The epoch
loop never tells the sampler which epoch it is, so every epoch replays one order."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
from tqdm import tqdm


def rank_zero_bar(iterable):
    if dist.get_rank() == 0:
        return tqdm(iterable)
    return iterable


def train(epoch):
    net.train()
    bar = rank_zero_bar(train_loader)
    for step, (images, labels) in enumerate(bar):
        images, labels = images.cuda(), labels.cuda()
        loss = criterion(net(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 50 == 0 and dist.get_rank() == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")

    lanes = TensorDataset(torch.randn(2048, 3, 64, 128), torch.randint(0, 4, (2048,)))
    train_loader = DataLoader(lanes, batch_size=32, sampler=DistributedSampler(lanes), num_workers=4)

    net = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                        nn.Linear(16, 4)).cuda()
    net = DistributedDataParallel(net, device_ids=[local_rank])
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)

    for epoch in range(40):  # expect: DDP002
        train(epoch)
        if dist.get_rank() == 0:
            torch.save(net.module.state_dict(), f"lane_ep{epoch:03d}.pth")
    dist.destroy_process_group()
