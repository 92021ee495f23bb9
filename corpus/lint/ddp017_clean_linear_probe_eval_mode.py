"""Linear evaluation of a frozen backbone: the training step keeps the whole model in eval
mode, so BatchNorm normalises with its stored statistics and SyncBatchNorm changes nothing."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision.models as models
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def probe_epoch(loader, net, head_optimizer, device):
    net.eval()  # frozen features: BatchNorm keeps its running mean and variance
    for images, labels in loader:
        logits = net(images.to(device, non_blocking=True))
        loss = nn.functional.cross_entropy(logits, labels.to(device, non_blocking=True))
        head_optimizer.zero_grad()
        loss.backward()
        head_optimizer.step()


@torch.no_grad()
def evaluate(loader, net, device):
    net.eval()
    hits = torch.zeros(1, device=device)
    for images, labels in loader:
        hits += (net(images.to(device)).argmax(1) == labels.to(device)).sum()
    dist.all_reduce(hits)
    return hits.item()


def run():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="resnet50")
    parser.add_argument("--epochs", type=int, default=100)
    opts = parser.parse_args()
    gpu = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(gpu)
    dist.init_process_group("nccl")
    device = torch.device("cuda", gpu)
    backbone = models.__dict__[opts.arch](num_classes=100)
    for name, weight in backbone.named_parameters():
        weight.requires_grad = name.startswith("fc.")
    backbone = DDP(backbone.to(device), device_ids=[gpu])
    head_optimizer = torch.optim.SGD([p for p in backbone.parameters() if p.requires_grad], lr=30.0)
    data = TensorDataset(torch.randn(256, 3, 32, 32), torch.randint(0, 100, (256,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    for epoch in range(opts.epochs):
        sampler.set_epoch(epoch)
        probe_epoch(loader, backbone, head_optimizer, device)
        evaluate(loader, backbone, device)
    dist.destroy_process_group()


if __name__ == "__main__":
    run()
