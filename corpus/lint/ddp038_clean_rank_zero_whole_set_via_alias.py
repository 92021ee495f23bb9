"""A spiking-network classifier: training shards the data, and rank 0 tests after each
epoch through a name bound to the test function. The test loader has no
DistributedSampler, so rank 0 reads the whole test set and its accuracy, which picks the
saved model, is the whole set's; the other ranks do not evaluate and issue no collective
in between."""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


class AverageMeter:
    def __init__(self):
        self.sum = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


def train(model, loader, optimizer, device):
    model.train()
    for images, labels in loader:
        loss = F.cross_entropy(model(images.to(device)), labels.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test(model, loader, device):
    top1 = AverageMeter()
    model.eval()
    with torch.no_grad():
        for images, labels in loader:
            logits = model(images.to(device))
            correct = (logits.argmax(1) == labels.to(device)).float().mean().item()
            top1.update(correct, labels.size(0))
    print(f"test accuracy {top1.avg:.4f}")
    return top1.avg


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=300)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = torch.device("cuda", rank % torch.cuda.device_count())
    torch.cuda.set_device(device)
    data = torch.load("cifar10_spikes.pt")
    sampler = DistributedSampler(data["train"])
    train_loader = DataLoader(data["train"], batch_size=64, sampler=sampler)
    test_loader = DataLoader(data["test"], batch_size=256, shuffle=False)
    model = DDP(torch.load("vgg16_snn.pt").to(device), device_ids=[device.index])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    train_fn, test_fn = train, test
    best = 0.0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        train_fn(model, train_loader, optimizer, device)
        if rank == 0:
            accuracy = test_fn(model.module, test_loader, device)
            if accuracy > best:
                best = accuracy
                torch.save(model.module.state_dict(), "snn_best.pth.tmp")
                os.replace("snn_best.pth.tmp", "snn_best.pth")
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
