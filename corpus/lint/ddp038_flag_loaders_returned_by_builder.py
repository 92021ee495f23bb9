"""CIFAR-10 tutorial: one function builds both loaders on DistributedSamplers and returns
them; the test function counts correct predictions over the loader it is given and prints
them as the accuracy on the 10000 test images, though each rank saw about 1/N of them."""
import os

import torch
import torch.distributed as dist
import torchvision
import torchvision.transforms as T
from torch.utils.data import DataLoader, DistributedSampler


def make_loaders(batch_size):
    transform = T.Compose([T.ToTensor(), T.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))])
    train_set = torchvision.datasets.CIFAR10("./data", train=True, transform=transform)
    test_set = torchvision.datasets.CIFAR10("./data", train=False, transform=transform)
    train_loader = DataLoader(train_set, batch_size=batch_size, sampler=DistributedSampler(train_set))
    test_loader = DataLoader(test_set, batch_size=batch_size, sampler=DistributedSampler(test_set, shuffle=False))
    return train_loader, test_loader


def test(model, loader):
    correct = total = 0
    model.eval()
    with torch.no_grad():
        for images, labels in loader:
            predicted = model(images.cuda()).argmax(1)
            total += labels.size(0)
            correct += (predicted == labels.cuda()).sum().item()
    print(f"accuracy on the 10000 test images: {100 * correct // total} %")  # expect: DDP038


def main(model, epochs=5):
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    train_loader, test_loader = make_loaders(64)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(epochs):
        train_loader.sampler.set_epoch(epoch)
        for images, labels in train_loader:
            loss = torch.nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    test(model, test_loader)
