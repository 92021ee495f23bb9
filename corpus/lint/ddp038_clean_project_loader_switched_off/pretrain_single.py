"""One-GPU pretraining: the loaders read the whole sets."""

import torch
from torch.utils.tensorboard import SummaryWriter

from data import build_loaders
from nets import OrderPredictor


def validate(model, loader, writer, epoch):
    model.eval()
    matches = total = 0
    with torch.no_grad():
        for patches, order in loader:
            predicted = model(patches.cuda()).argmax(dim=1)
            matches += (predicted == order.cuda()).sum().item()
            total += len(order)
    writer.add_scalar("val/accuracy", matches / total, epoch)
    return matches / total


def main(cfg):
    train_loader, val_loader = build_loaders(cfg)
    model = OrderPredictor().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    writer = SummaryWriter(cfg.log_dir)
    for epoch in range(cfg.epochs):
        model.train()
        for patches, order in train_loader:
            loss = torch.nn.functional.cross_entropy(model(patches.cuda()), order.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        validate(model, val_loader, writer, epoch)
