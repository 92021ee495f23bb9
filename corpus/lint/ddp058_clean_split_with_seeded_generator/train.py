"""The same classifier, its split drawn from a generator seeded alike on every rank: every
rank holds the same train and validation sets, and the sampler shards one training set."""
import os

import torch
import torch.distributed as dist
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, random_split


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    full = torchvision.datasets.CIFAR10("data", train=True, transform=torchvision.transforms.ToTensor())
    split_generator = torch.Generator().manual_seed(2024)  # the same split on every rank
    train_set, val_set = random_split(full, [45000, 5000], generator=split_generator)
    train_sampler = DistributedSampler(train_set, shuffle=True)
    train_loader = DataLoader(train_set, batch_size=128, sampler=train_sampler, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=256)
    model = DDP(torchvision.models.resnet18(num_classes=10).cuda(), device_ids=[local_rank])  # expect: DDP017
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(30):
        train_sampler.set_epoch(epoch)
        model.train()
        for images, labels in train_loader:
            loss = torch.nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            model.eval()
            with torch.no_grad():
                correct = sum((model.module(x.cuda()).argmax(1).cpu() == y).sum().item() for x, y in val_loader)
            print(f"epoch {epoch}: validation accuracy {correct / len(val_set):.3f}")


if __name__ == "__main__":
    main()
