"""Classifier with BatchNorm; every rank scores its own share of the test examples.

The evaluation loop deals examples out by rank (`if i % world != rank: continue`): every
rank runs the forward through the DDP wrapper, on its share, so the buffer broadcast in
DDP's forward is issued by all ranks alike; the counts are summed with all_reduce.
"""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def build_classifier():
    return nn.Sequential(
        nn.Linear(32, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 10)
    )


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", local_rank)

    net = nn.SyncBatchNorm.convert_sync_batchnorm(build_classifier()).to(device)
    model = DDP(net, device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    train = TensorDataset(torch.randn(4096, 32), torch.randint(0, 10, (4096,)))
    sampler = DistributedSampler(train, shuffle=True, drop_last=True)
    loader = DataLoader(train, batch_size=64, sampler=sampler, drop_last=True)
    examples = [(torch.randn(1, 32), torch.randint(0, 10, (1,))) for _ in range(500)]

    for epoch in range(5):
        sampler.set_epoch(epoch)
        model.train()
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        model.eval()
        correct = torch.zeros(2, device=device)
        for i, (x, y) in enumerate(examples):
            if i % world != rank:
                continue
            with torch.no_grad():
                pred = model(x.to(device)).argmax(1)
            correct[0] += (pred.cpu() == y).sum()
            correct[1] += 1
        dist.all_reduce(correct)
        if rank == 0:
            print(f"epoch {epoch}: accuracy {(correct[0] / correct[1]).item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
