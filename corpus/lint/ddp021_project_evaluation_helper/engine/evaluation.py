"""Evaluation helpers: `evaluate` runs the model it is handed on every batch."""
import torch


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    for images, labels in loader:
        logits = model(images.to(device, non_blocking=True))
        correct += (logits.argmax(1) == labels.to(device)).sum().item()
        total += labels.numel()
    model.train()
    return correct / max(total, 1)


def describe(model):
    return sum(p.numel() for p in model.parameters())
