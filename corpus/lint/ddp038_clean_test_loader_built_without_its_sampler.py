"""One loader builder for both splits: it shards with a sampler only when asked. The
training loader asks; the test loader leaves the switch at its default (the extra keyword
arguments hold only worker settings), so every rank tests on the whole test set and the
accuracy rank 0 prints is the full set's."""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def make_loader(dataset, batch_size, distributed=False, rank=None, world_size=None, **kwargs):
    sampler = None
    if distributed:
        sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True)
    return DataLoader(dataset, batch_size=batch_size, shuffle=False, sampler=sampler, **kwargs)


def test(model, rank, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for images, targets in loader:
            predicted = model(images.to(rank)).argmax(1)
            correct += (predicted == targets.to(rank)).sum().item()
            total += len(targets)
    if rank == 0:
        print(f"test accuracy {correct / total:.4f}")


def train(rank, world_size, train_set, test_set, epochs=5):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    options = {"num_workers": 2, "pin_memory": True} if torch.cuda.is_available() else {}
    train_loader = make_loader(train_set, 64, True, rank, world_size, **options)
    test_loader = make_loader(test_set, 256, **options)
    model = DDP(torch.nn.Linear(784, 10).to(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        train_loader.sampler.set_epoch(epoch)
        model.train()
        for images, targets in train_loader:
            loss = F.cross_entropy(model(images.to(rank)), targets.to(rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        test(model, rank, test_loader)
    dist.destroy_process_group()


if __name__ == "__main__":
    world = int(os.environ.get("WORLD_SIZE", 2))
    torch.multiprocessing.spawn(train, args=(world, None, None), nprocs=world)
