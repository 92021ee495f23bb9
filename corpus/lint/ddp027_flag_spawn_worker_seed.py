"""Single-node launcher with mp.spawn; each worker offsets the sampler's seed by its index."""
import argparse

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def worker(rank, world_size, args):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29500",
                            rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    dataset = TensorDataset(torch.randn(8192, 1, 28, 28), torch.randint(0, 10, (8192,)))
    sampler = DistributedSampler(
        dataset,
        num_replicas=world_size,
        rank=rank,
        shuffle=True,
        seed=args.seed * 100 + rank,  # expect: DDP027
        drop_last=True,
    )
    loader = DataLoader(dataset, batch_size=128, sampler=sampler, pin_memory=True)
    net = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10))
    net = DDP(net.cuda(rank), device_ids=[rank])
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for images, targets in loader:
            images, targets = images.cuda(rank), targets.cuda(rank)
            loss = nn.functional.cross_entropy(net(images), targets)
            opt.zero_grad()
            loss.backward()
            opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    n = torch.cuda.device_count()
    mp.spawn(worker, args=(n, args), nprocs=n, join=True)
