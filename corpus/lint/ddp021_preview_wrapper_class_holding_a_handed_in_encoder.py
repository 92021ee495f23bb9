"""Linear evaluation of a pretrained encoder: the classifier class stores the encoder it
is handed and adds a linear head. The class itself registers no buffer, but the encoder
comes from a factory looked up by name, so whether the wrapped model has BatchNorm
statistics (and the rank-0 validation's forward broadcasts them) is unknown."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn

import backbones


class LinearProbe(nn.Module):
    def __init__(self, encoder, width, classes):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        return self.head(self.encoder(x))


def validate(loader, model, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for images, labels in loader:
            logits = model(images.cuda(device))  # expect-preview: DDP021
            correct += (logits.argmax(1).cpu() == labels).sum().item()
            total += labels.numel()
    return correct / max(total, 1)


def main(train_loader, val_loader):
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="resnet50")
    parser.add_argument("--epochs", type=int, default=90)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    device = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(device)
    encoder, width = backbones.__dict__[args.arch]()
    model = LinearProbe(encoder, width, 1000).cuda(device)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[device])
    optimizer = torch.optim.SGD(model.module.head.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        train_loader.sampler.set_epoch(epoch)
        model.train()
        for images, labels in train_loader:
            loss = nn.functional.cross_entropy(model(images.cuda(device)), labels.cuda(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: top-1 {validate(val_loader, model, device):.3f}")
    dist.destroy_process_group()
