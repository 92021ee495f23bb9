"""A DataLoader subclass that builds its own DistributedSampler; the trainer's epoch loop
never calls set_epoch, so every epoch repeats the first shuffle."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils import data
from torchvision import datasets, transforms


class DigitsLoader(data.DataLoader):
    def __init__(self, root, batch_size, train=True):
        dataset = datasets.MNIST(root, train=train, transform=transforms.ToTensor())
        sampler = None
        if train and dist.is_initialized():
            sampler = data.DistributedSampler(dataset)
        super().__init__(dataset, batch_size=batch_size, shuffle=sampler is None, sampler=sampler)


class Trainer:
    def __init__(self, model, optimizer, train_loader, test_loader):
        self.model = model
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.test_loader = test_loader

    def fit(self, epochs):
        for epoch in range(epochs):  # expect: DDP002
            loss = self.train()
            accuracy = self.evaluate()
            print(f"epoch {epoch}: loss {loss:.3f}, accuracy {accuracy:.3f}")

    def train(self):
        self.model.train()
        total = 0.0
        for images, labels in self.train_loader:
            loss = F.cross_entropy(self.model(images.cuda()), labels.cuda())
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            total += loss.item()
        return total

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        hits = []
        for images, labels in self.test_loader:
            hits.append((self.model(images.cuda()).argmax(1) == labels.cuda()).float().mean())
        return torch.stack(hits).mean().item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--root", default="data")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
    model = nn.parallel.DistributedDataParallel(nn.Linear(784, 10).cuda())
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    train_loader = DigitsLoader(args.root, 128, train=True)
    test_loader = DigitsLoader(args.root, 128, train=False)
    Trainer(model, optimizer, train_loader, test_loader).fit(args.epochs)


if __name__ == "__main__":
    main()
