"""One pass of training and one of evaluation."""

import torch


def train_one_epoch(model, loader, optimizer, criterion, device):
    model.train()
    total = 0.0
    for images, targets in loader:
        loss = criterion(model(images.to(device)), targets.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / max(1, len(loader))


@torch.no_grad()
def evaluate(model, loader, criterion, device):
    model.eval()
    total = sum(criterion(model(x.to(device)), y.to(device)).item() for x, y in loader)
    return total / max(1, len(loader))
