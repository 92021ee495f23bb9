"""CIFAR-10 ResNet trainer in the style of many course scripts: `train(epoch)` and
`test(epoch)` at module level. `test` is not a pytest test (this file is a training
script that pytest never collects, and it imports no pytest): every rank runs it, counts
its own shard's correct predictions against the whole test set, and writes the same
checkpoint file."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision
import torchvision.transforms as T
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=200)
parser.add_argument("--lr", type=float, default=0.1)
args = parser.parse_args()

local_rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local_rank)
dist.init_process_group("nccl")

normalize = T.Normalize((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))
train_set = torchvision.datasets.CIFAR10(
    "data", train=True, transform=T.Compose([T.RandomCrop(32, padding=4), T.ToTensor(), normalize])
)
test_set = torchvision.datasets.CIFAR10(
    "data", train=False, transform=T.Compose([T.ToTensor(), normalize])
)
train_sampler = DistributedSampler(train_set)
train_loader = DataLoader(train_set, batch_size=128, sampler=train_sampler, num_workers=4)
test_loader = DataLoader(
    test_set, batch_size=256, sampler=DistributedSampler(test_set, shuffle=False), num_workers=4
)

net = nn.SyncBatchNorm.convert_sync_batchnorm(torchvision.models.resnet18(num_classes=10)).cuda()
net = DDP(net, device_ids=[local_rank])
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)


def train(epoch):
    net.train()
    train_sampler.set_epoch(epoch)
    for inputs, targets in train_loader:
        loss = criterion(net(inputs.cuda()), targets.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test(epoch):
    net.eval()
    correct = 0
    with torch.no_grad():
        for inputs, targets in test_loader:
            outputs = net(inputs.cuda())
            correct += outputs.argmax(1).eq(targets.cuda()).sum().item()
    print(f"epoch {epoch}: test accuracy {100.0 * correct / len(test_set):.2f}%")  # expect: DDP028
    torch.save(net.module.state_dict(), f"ckpt_epoch{epoch}.pth")  # expect: DDP013


for epoch in range(args.epochs):
    train(epoch)
    test(epoch)
dist.destroy_process_group()
